//! `emu sim`: an NF through simulator tiers on the same traffic, and the diff between them.

use super::run::{build, run_pcaps_with};
use crate::cli::SimArgs;
use emu::{Config, NetworkFunction, NfDescriptor};
use emu_cpu::{CaptureReader, InputSpec};
use emu_hls::backend::model::CycleModel;
use emu_hls::backend::top::Clocked;
use emu_hls::backend::Design;
use emu_sim::hw_tier::{HwNf, Report};
use emu_sim::profile::{ProfileHandle, Profiled};
use emu_sim::verilator::VerilatorModel;
use emu_sim::{diff, ir_tier::IrNf, Tier};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// A hardware tier the runner drives while `emu sim` keeps a handle for its report.
struct Shared(Arc<Mutex<HwNf>>);

impl NetworkFunction for Shared {
    fn process(&mut self, pkt: &mut emu::Packet<'_>, meta: &emu::Meta) -> emu::Action {
        self.0.lock().expect("the hardware tier").process(pkt, meta)
    }

    fn process_frame(&mut self, frame: &mut Vec<u8>, window: usize, meta: &emu::Meta) -> emu::Action {
        self.0.lock().expect("the hardware tier").process_frame(frame, window, meta)
    }
}

/// A tier's NF that drops the `n`-th frame reaching it (`--inject-drop`): a fault for checking
/// that the diff reports exactly that frame.
struct DropNth {
    nf: Box<dyn NetworkFunction + Send>,
    n: u64,
    seen: u64,
}

impl NetworkFunction for DropNth {
    fn process(&mut self, pkt: &mut emu::Packet<'_>, meta: &emu::Meta) -> emu::Action {
        self.seen += 1;
        if self.seen == self.n + 1 {
            return emu::Action::Drop(emu::DropReason::Malformed);
        }
        self.nf.process(pkt, meta)
    }

    fn process_frame(&mut self, frame: &mut Vec<u8>, window: usize, meta: &emu::Meta) -> emu::Action {
        self.seen += 1;
        if self.seen == self.n + 1 {
            return emu::Action::Drop(emu::DropReason::Malformed);
        }
        self.nf.process_frame(frame, window, meta)
    }
}

/// The tiers of a run, built.
pub(crate) struct Built {
    /// Each tier's NF, in the order given.
    pub nfs: Vec<(Tier, Box<dyn NetworkFunction + Send>)>,
    /// The hardware tiers, for their reports.
    pub hardware: Vec<(Tier, Arc<Mutex<HwNf>>)>,
    /// With --back-to-back, a second instance of each hardware tier for the replay.
    pub replays: Vec<(Tier, Box<dyn Clocked + Send>)>,
    /// With --profile, each tier's profile.
    pub profiles: Vec<(Tier, ProfileHandle)>,
}

/// Builds every tier before any runs, so a tier that cannot be built fails fast.
pub(crate) fn build_tiers(desc: &NfDescriptor, config: &Config, a: &SimArgs, tiers: &[Tier]) -> Result<Built, String> {
    let mut built = Built { nfs: vec![], hardware: vec![], replays: vec![], profiles: vec![] };
    let profiling = a.profile.is_some();
    for &tier in tiers {
        let nf: Box<dyn NetworkFunction + Send> = match tier {
            Tier::Cpu if profiling => {
                let (nf, handle) = super::profile::native(desc, config, build(desc, config)?);
                built.profiles.push((tier, handle));
                nf
            }
            Tier::Cpu => build(desc, config)?,
            Tier::Ir => {
                let ir = IrNf::build(desc, config).map_err(|e| format!("tier ir: {e}"))?;
                if profiling {
                    let (nf, handle) = Profiled::ir(ir);
                    built.profiles.push((tier, handle));
                    Box::new(nf)
                } else {
                    Box::new(ir)
                }
            }
            Tier::Cycle | Tier::Verilator => {
                let design = Design::from_descriptor(desc, config, a.width, a.pcap.max_frame)
                    .map_err(|e| format!("tier {tier}: {e}"))?;
                let mut nf = if tier == Tier::Cycle {
                    if a.back_to_back {
                        built.replays.push((tier, Box::new(CycleModel::new(&design))));
                    }
                    HwNf::cycle(&design)
                } else {
                    let (model, info) = VerilatorModel::build(&design, a.vcd.clone())?;
                    let how = if info.cached { "from the cache" } else { "built" };
                    println!("verilator model {how} in {:.1} s ({})", info.seconds, info.dir.display());
                    if a.back_to_back {
                        built.replays.push((tier, Box::new(model.another())));
                    }
                    let mut nf = HwNf::new(Box::new(model), design.config.bus_bytes);
                    nf.record = a.vcd_frames.clone();
                    nf
                };
                if a.back_to_back {
                    nf.kept = Some(vec![]);
                }
                let hw = Arc::new(Mutex::new(nf));
                built.hardware.push((tier, hw.clone()));
                if profiling {
                    let (nf, handle) = Profiled::hw(hw);
                    built.profiles.push((tier, handle));
                    Box::new(nf)
                } else {
                    Box::new(Shared(hw))
                }
            }
        };
        let nf = match &a.inject_drop {
            Some((t, n)) if t == tier.name() => Box::new(DropNth { nf, n: *n, seen: 0 }),
            _ => nf,
        };
        built.nfs.push((tier, nf));
    }
    Ok(built)
}

pub(crate) fn run(desc: &NfDescriptor, config: &Config, a: &SimArgs) -> Result<i32, String> {
    if a.pcap.inputs.is_empty() && a.fuzz.is_none() {
        return Err("give the traffic with --in FILE (or --in PORT=FILE per port), or --fuzz N for generated traffic".into());
    }
    if let Some(socket) = &a.debug_socket {
        return super::sim_debug::run(desc, config, a, socket);
    }
    let tiers = a.target.iter().map(|t| t.parse::<Tier>()).collect::<Result<Vec<_>, _>>()?;
    if a.vcd.is_some() && !tiers.contains(&Tier::Verilator) {
        return Err("--vcd records the verilator tier's waveform: add verilator to --target".into());
    }
    if a.back_to_back && !tiers.iter().any(|t| matches!(t, Tier::Cycle | Tier::Verilator)) {
        return Err("--back-to-back replays the hardware tiers' frames: add cycle or verilator to --target".into());
    }
    if let Some((t, _)) = &a.inject_drop {
        if !tiers.iter().any(|x| x.name() == t) {
            return Err(format!("--inject-drop {t}:…: tier {t} is not in --target"));
        }
    }
    if let Some(frames) = a.fuzz {
        if tiers.len() < 2 {
            return Err("--fuzz compares tiers: give two or more, e.g. --target cpu,ir,cycle,verilator".into());
        }
        let built = build_tiers(desc, config, a, &tiers)?;
        return super::fuzz::run(desc, config, a, built, frames);
    }
    let out = a.pcap.out.as_deref().ok_or("--out DIR is required: each tier writes DIR/<tier>/port<N>.pcap")?;
    let Built { nfs, hardware, replays, profiles } = build_tiers(desc, config, a, &tiers)?;
    let mut code = 0;
    for (tier, nf) in nfs {
        println!("--- tier {tier}");
        code = code.max(run_pcaps_with(desc, nf, &a.pcap, &out.join(tier.name()))?);
    }
    code = code.max(report_hardware(&hardware, replays, a)?);
    if let Some(dir) = &a.profile {
        let list: Vec<_> = profiles.iter().map(|(t, h)| h.profile(t.name())).collect();
        super::profile::write_sim(desc.name, &list, dir, a.pcap.json)?;
    }
    if tiers.len() > 1 {
        let ports = a.pcap.ports.unwrap_or(desc.ports);
        let sent_at = |tier: Tier, port: usize, i: usize| -> Option<u64> {
            let (_, hw) = hardware.iter().find(|(t, _)| *t == tier)?;
            hw.lock().ok()?.sent_at.get(port)?.get(i).copied()
        };
        code = code.max(compare(&tiers, out, ports, &sent_at)?);
    }
    Ok(code)
}

/// Prints each hardware tier's report (and its back-to-back replay); 1 when one hung or
/// came out otherwise back to back.
pub(crate) fn report_hardware(
    hardware: &[(Tier, Arc<Mutex<HwNf>>)],
    mut replays: Vec<(Tier, Box<dyn Clocked + Send>)>,
    a: &SimArgs,
) -> Result<i32, String> {
    let mut code = 0;
    for (tier, hw) in hardware {
        let hw = hw.lock().map_err(|_| "a hardware tier panicked")?;
        if let Some(e) = &hw.error {
            println!("tier {tier}: {e}");
            code = code.max(1);
        }
        let mut report = Report::of(&hw, a.clock_mhz);
        if let Some(pos) = replays.iter().position(|(t, _)| t == tier) {
            let (_, fresh) = replays.swap_remove(pos);
            match hw.back_to_back(fresh) {
                Ok(b) => report = report.map(|r| r.with_back_to_back(&b)),
                Err(e) => {
                    println!("tier {tier}: {e}");
                    code = code.max(1);
                }
            }
        }
        match report {
            Some(r) if a.pcap.json => println!("{}", r.json(tier.name())),
            Some(r) => print!("{}", r.table(tier.name())),
            None => println!("tier {tier}: no frames reached the hardware"),
        }
    }
    Ok(code)
}

/// What one tier did with each input frame, read from its pcaps, `sent.jsonl` and
/// `drops.jsonl`.
struct Outcome {
    /// Per port, the input frame each frame sent came from, in sending order (`sent.jsonl`).
    from: Vec<Vec<u64>>,
    /// Each input frame's fate.
    fates: BTreeMap<u64, diff::Fate>,
}

fn outcome(dir: &Path, ports: usize) -> Result<Outcome, String> {
    let read =
        |name: &str| std::fs::read_to_string(dir.join(name)).map_err(|e| format!("{}/{name}: {e}", dir.display()));
    let json = |line: &str, name: &str| {
        serde_json::from_str::<serde_json::Value>(line).map_err(|e| format!("{}/{name}: {e}: {line}", dir.display()))
    };
    // Which input frame each port's k-th frame came from.
    let mut from: Vec<Vec<u64>> = vec![vec![]; ports];
    for line in read("sent.jsonl")?.lines() {
        let v = json(line, "sent.jsonl")?;
        let (Some(index), Some(port)) = (v["index"].as_u64(), v["port"].as_u64()) else {
            return Err(format!("{}/sent.jsonl: a line without index and port: {line}", dir.display()));
        };
        from.get_mut(port as usize)
            .ok_or_else(|| format!("{}/sent.jsonl names port {port}, past the NF's {ports}", dir.display()))?
            .push(index);
    }
    let mut frames = Vec::new();
    for (port, from) in from.iter().enumerate() {
        let spec = InputSpec { port: Some(0), path: dir.join(format!("port{port}.pcap")) };
        let mut reader = CaptureReader::open(&spec).map_err(|e| e.to_string())?;
        let mut list = Vec::new();
        while let Some(f) = reader.next_frame().map_err(|e| e.to_string())? {
            let index = *from
                .get(list.len())
                .ok_or_else(|| format!("{}: port{port}.pcap has more frames than sent.jsonl lists", dir.display()))?;
            list.push((index, f.data));
        }
        if list.len() != from.len() {
            return Err(format!(
                "{}: port{port}.pcap has {} frames, sent.jsonl lists {}",
                dir.display(),
                list.len(),
                from.len()
            ));
        }
        frames.push(list);
    }
    let mut drops = vec![];
    for line in read("drops.jsonl")?.lines() {
        let v = json(line, "drops.jsonl")?;
        let (Some(index), Some(reason)) = (v["index"].as_u64(), v["reason"].as_str()) else {
            return Err(format!("{}/drops.jsonl: a line without index and reason: {line}", dir.display()));
        };
        drops.push((index, reason.to_string()));
    }
    Ok(Outcome { from, fates: diff::fates(frames, drops) })
}

/// The cycle a hardware tier's frame `i` on `port` left it, for the diff.
type SentAt<'a> = dyn Fn(Tier, usize, usize) -> Option<u64> + 'a;

/// Differences shown per pair of tiers; the rest are counted.
const SHOWN: usize = 10;

/// Compares every tier with the first, input frame by input frame; prints each difference
/// (the first [`SHOWN`]) and returns 1 on a disagreement.
fn compare(tiers: &[Tier], out: &Path, ports: usize, sent_at: &SentAt) -> Result<i32, String> {
    let reference = tiers[0];
    let base = outcome(&out.join(reference.name()), ports)?;
    let mut disagree = false;
    for &tier in &tiers[1..] {
        let other = outcome(&out.join(tier.name()), ports)?;
        let (r, t) = (reference.name(), tier.name());
        let differences = diff::compare_fates(&base.fates, &other.fates, r, t);
        for d in differences.iter().take(SHOWN) {
            let place = match d.port {
                Some(port) => {
                    // The frame's place on the port in each tier, for the cycle it left.
                    let at = |o: &Outcome| o.from[port].iter().position(|i| *i == d.index);
                    let when: Vec<String> = [(reference, at(&base)), (tier, at(&other))]
                        .iter()
                        .filter_map(|&(x, i)| sent_at(x, port, i?).map(|c| format!("{x} sent it at cycle {c}")))
                        .collect();
                    let when = if when.is_empty() { String::new() } else { format!(" ({})", when.join(", ")) };
                    format!("port {port}: {}{when}", d.what)
                }
                None => d.what.clone(),
            };
            println!("DIFFER {r} vs {t}: input frame {}: {place}", d.index);
        }
        if differences.len() > SHOWN {
            println!("DIFFER {r} vs {t}: … {} input frames differ in all", differences.len());
        }
        if differences.is_empty() {
            let sent: usize = base.from.iter().map(Vec::len).sum();
            let dropped = base.fates.values().filter(|f| f.dropped.is_some()).count();
            println!("{r} and {t} agree: {sent} frames out on {ports} ports, {dropped} drops");
        }
        disagree |= !differences.is_empty();
    }
    Ok(if disagree { 1 } else { 0 })
}

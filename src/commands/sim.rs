//! `emu sim`: an NF through simulator tiers on the same traffic, and the diff between them.

use super::run::{build, run_pcaps_with};
use crate::cli::SimArgs;
use emu::{Config, NetworkFunction, NfDescriptor};
use emu_cpu::{CaptureReader, InputSpec};
use emu_hls::backend::Design;
use emu_sim::hw_tier::{HwNf, Report};
use emu_sim::profile::{ProfileHandle, Profiled};
use emu_sim::verilator::VerilatorModel;
use emu_sim::{diff, ir_tier::IrNf, Tier};
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

pub(crate) fn run(desc: &NfDescriptor, config: &Config, a: &SimArgs) -> Result<i32, String> {
    if a.pcap.inputs.is_empty() {
        return Err("give the traffic with --in FILE (or --in PORT=FILE per port)".into());
    }
    if let Some(socket) = &a.debug_socket {
        return super::sim_debug::run(desc, config, a, socket);
    }
    let tiers = a.target.iter().map(|t| t.parse::<Tier>()).collect::<Result<Vec<_>, _>>()?;
    if a.vcd.is_some() && !tiers.contains(&Tier::Verilator) {
        return Err("--vcd records the verilator tier's waveform: add verilator to --target".into());
    }
    let out = a.pcap.out.as_deref().ok_or("--out DIR is required: each tier writes DIR/<tier>/port<N>.pcap")?;
    // Build every tier before running any, so a tier that cannot be built fails fast.
    let mut nfs: Vec<(Tier, Box<dyn NetworkFunction + Send>)> = Vec::new();
    let mut hardware: Vec<(Tier, Arc<Mutex<HwNf>>)> = Vec::new();
    let mut profiles: Vec<(Tier, ProfileHandle)> = Vec::new();
    let profiling = a.profile.is_some();
    for &tier in &tiers {
        let nf: Box<dyn NetworkFunction + Send> = match tier {
            Tier::Cpu if profiling => {
                let (nf, handle) = super::profile::native(desc, config, build(desc, config)?);
                profiles.push((tier, handle));
                nf
            }
            Tier::Cpu => build(desc, config)?,
            Tier::Ir => {
                let ir = IrNf::build(desc, config).map_err(|e| format!("tier ir: {e}"))?;
                if profiling {
                    let (nf, handle) = Profiled::ir(ir);
                    profiles.push((tier, handle));
                    Box::new(nf)
                } else {
                    Box::new(ir)
                }
            }
            Tier::Cycle | Tier::Verilator => {
                let design = Design::from_descriptor(desc, config, a.width, a.pcap.max_frame)
                    .map_err(|e| format!("tier {tier}: {e}"))?;
                let nf = if tier == Tier::Cycle {
                    HwNf::cycle(&design)
                } else {
                    let (model, info) = VerilatorModel::build(&design, a.vcd.clone())?;
                    let how = if info.cached { "from the cache" } else { "built" };
                    println!("verilator model {how} in {:.1} s ({})", info.seconds, info.dir.display());
                    let mut nf = HwNf::new(Box::new(model), design.config.bus_bytes);
                    nf.record = a.vcd_frames.clone();
                    nf
                };
                let hw = Arc::new(Mutex::new(nf));
                hardware.push((tier, hw.clone()));
                if profiling {
                    let (nf, handle) = Profiled::hw(hw);
                    profiles.push((tier, handle));
                    Box::new(nf)
                } else {
                    Box::new(Shared(hw))
                }
            }
        };
        nfs.push((tier, nf));
    }
    let mut code = 0;
    for (tier, nf) in nfs {
        println!("--- tier {tier}");
        code = code.max(run_pcaps_with(desc, nf, &a.pcap, &out.join(tier.name()))?);
    }
    for (tier, hw) in &hardware {
        let hw = hw.lock().map_err(|_| "a hardware tier panicked")?;
        if let Some(e) = &hw.error {
            println!("tier {tier}: {e}");
            code = code.max(1);
        }
        match Report::of(&hw, a.clock_mhz) {
            Some(r) if a.pcap.json => println!("{}", r.json(tier.name())),
            Some(r) => print!("{}", r.table(tier.name())),
            None => println!("tier {tier}: no frames reached the hardware"),
        }
    }
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

/// What one tier did: frames per port, and its drop records.
struct Outcome {
    ports: Vec<Vec<Vec<u8>>>,
    drops: Vec<String>,
}

fn outcome(dir: &Path, ports: usize) -> Result<Outcome, String> {
    let mut frames = Vec::new();
    for port in 0..ports {
        let spec = InputSpec { port: Some(0), path: dir.join(format!("port{port}.pcap")) };
        let mut reader = CaptureReader::open(&spec).map_err(|e| e.to_string())?;
        let mut list = Vec::new();
        while let Some(f) = reader.next_frame().map_err(|e| e.to_string())? {
            list.push(f.data);
        }
        frames.push(list);
    }
    let drops = std::fs::read_to_string(dir.join("drops.jsonl")).map_err(|e| format!("{}: {e}", dir.display()))?;
    // Timestamps aside, a drop is its index, port, reason and length.
    Ok(Outcome { ports: frames, drops: drops.lines().map(String::from).collect() })
}

/// Compares every tier with the first; prints the verdict and returns 1 on a disagreement.
/// The cycle a hardware tier's frame `i` on `port` left it, for the diff.
type SentAt<'a> = dyn Fn(Tier, usize, usize) -> Option<u64> + 'a;

fn compare(tiers: &[Tier], out: &Path, ports: usize, sent_at: &SentAt) -> Result<i32, String> {
    let reference = tiers[0];
    let base = outcome(&out.join(reference.name()), ports)?;
    let mut disagree = false;
    for &tier in &tiers[1..] {
        let other = outcome(&out.join(tier.name()), ports)?;
        let (r, t) = (reference.name(), tier.name());
        for port in 0..ports {
            if let Some((i, what)) = diff::first_difference(&base.ports[port], &other.ports[port], r, t) {
                let when: Vec<String> = [reference, tier]
                    .iter()
                    .filter_map(|&x| sent_at(x, port, i).map(|c| format!("{x} sent it at cycle {c}")))
                    .collect();
                let when = if when.is_empty() { String::new() } else { format!(" ({})", when.join(", ")) };
                println!("DIFFER {r} vs {t}: port {port}, frame {i}: {what}{when}");
                disagree = true;
            }
        }
        if let Some(i) = (0..base.drops.len().max(other.drops.len())).find(|&i| base.drops.get(i) != other.drops.get(i)) {
            println!(
                "DIFFER {r} vs {t}: drop record {i}: {r} {}, {t} {}",
                base.drops.get(i).map(String::as_str).unwrap_or("(none)"),
                other.drops.get(i).map(String::as_str).unwrap_or("(none)")
            );
            disagree = true;
        }
        if !disagree {
            let frames: usize = base.ports.iter().map(Vec::len).sum();
            println!("{r} and {t} agree: {frames} frames out on {ports} ports, {} drops", base.drops.len());
        }
    }
    Ok(if disagree { 1 } else { 0 })
}

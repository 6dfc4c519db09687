//! What the NF tests share: running frames through the simulator tiers in process (cpu, ir,
//! cycle, verilator) and comparing them frame by frame, `emu` subcommands, and a seeded
//! generator of traffic.
#![allow(dead_code)]

use emu::{check_frame, Config, Meta, NetworkFunction, NfDescriptor, Verdict};
use emu_hls::backend::model::{CycleModel, Driver, Outcome, Pacing};
use emu_hls::backend::Design;
use emu_sim::ir_tier::IrNf;
use emu_sim::verilator::VerilatorModel;
use std::process::{Command, Output};

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub fn emu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_emu")).args(args).output().expect("run emu")
}

/// Writes `frames` (bytes, port) as a pcapng of 4 ports, a millisecond apart.
pub fn write_pcapng(path: &std::path::Path, frames: &[(Vec<u8>, u8)]) {
    let mut w = emu_cpu::PortsWriter::create(path, 4).unwrap();
    for (i, (f, port)) in frames.iter().enumerate() {
        w.write(*port, i as u64 * 1_000_000, f).unwrap();
    }
    w.finish().unwrap();
}

/// xorshift64, seeded: the same frames on every machine.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// The CPU target's handling of a frame (ingress checks, then the NF, then the verdict), as the
/// hardware reports it.
fn run_nf(nf: &mut dyn NetworkFunction, desc: &NfDescriptor, frame: &[u8], in_port: u8, timestamp: u64) -> Outcome {
    if let Err(r) = check_frame(frame, 1518) {
        return Outcome::Dropped(r);
    }
    let mut f = frame.to_vec();
    let meta = Meta { in_port, len: f.len() as u16, timestamp };
    let action = nf.process_frame(&mut f, desc.window, &meta);
    match action.resolve(in_port, desc.ports) {
        Verdict::Drop(r) => Outcome::Dropped(r),
        Verdict::Send(m) => Outcome::Sent(m.0, f),
    }
}

/// Each tier's outcomes on `frames`, by tier name, the CPU first. `tiers` names the others:
/// "ir", "cycle", "verilator". Every frame arrives at time 0.
pub fn outcomes(
    desc: &NfDescriptor,
    config: &Config,
    tiers: &[&str],
    frames: &[(Vec<u8>, u8)],
) -> Vec<(String, Vec<Outcome>)> {
    let timed: Vec<(Vec<u8>, u8, u64)> = frames.iter().map(|(f, p)| (f.clone(), *p, 0)).collect();
    outcomes_timed(desc, config, tiers, &timed)
}

/// [`outcomes`] of frames that arrive at the given times (ns, `meta.timestamp`; in hardware
/// `tuser[127:64]`), for NFs whose state ages.
pub fn outcomes_timed(
    desc: &NfDescriptor,
    config: &Config,
    tiers: &[&str],
    frames: &[(Vec<u8>, u8, u64)],
) -> Vec<(String, Vec<Outcome>)> {
    outcomes_at(desc, config, tiers, frames, 64)
}

/// [`outcomes_timed`] with the hardware tiers on a bus of `width` bits (64 or 256).
pub fn outcomes_at(
    desc: &NfDescriptor,
    config: &Config,
    tiers: &[&str],
    frames: &[(Vec<u8>, u8, u64)],
    width: usize,
) -> Vec<(String, Vec<Outcome>)> {
    let mut cpu = (desc.build)(config).unwrap_or_else(|e| panic!("{e}"));
    let mut out =
        vec![("cpu".to_string(), frames.iter().map(|(f, p, t)| run_nf(cpu.as_mut(), desc, f, *p, *t)).collect())];
    for &tier in tiers {
        let got = match tier {
            "ir" => {
                let mut ir = IrNf::build(desc, config).unwrap_or_else(|e| panic!("{e}"));
                let got: Vec<Outcome> = frames.iter().map(|(f, p, t)| run_nf(&mut ir, desc, f, *p, *t)).collect();
                assert_eq!(ir.errors, 0, "the interpreter failed: {:?}", ir.first_error);
                got
            }
            "cycle" | "verilator" => {
                let design = Design::from_descriptor(desc, config, width, 1518).unwrap_or_else(|e| panic!("{e}"));
                let input = || frames.iter().map(|(f, p, t)| (f.as_slice(), *p, *t));
                let bus = width / 8;
                if tier == "cycle" {
                    Driver::new(CycleModel::new(&design), bus, Pacing::FULL)
                        .run_timed(input())
                        .expect("the cycle model hung")
                } else {
                    let (vl, _) = VerilatorModel::build(&design, None).unwrap_or_else(|e| panic!("{e}"));
                    Driver::new(vl, bus, Pacing::FULL).run_timed(input()).expect("the Verilator model hung")
                }
            }
            t => panic!("unknown tier {t}"),
        };
        out.push((tier.to_string(), got));
    }
    out
}

/// Panics with the first frame on which a tier differs from the CPU, decoded field by field.
pub fn assert_agree(desc: &NfDescriptor, frames: &[(Vec<u8>, u8)], tiers: &[(String, Vec<Outcome>)]) {
    let (_, want) = &tiers[0];
    for (name, got) in &tiers[1..] {
        assert_eq!(got.len(), want.len(), "{name}: one outcome per frame");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            if g != w {
                let detail = match (g, w) {
                    (Outcome::Sent(gm, gf), Outcome::Sent(wm, wf)) => {
                        format!("ports {name} {gm:#b}, cpu {wm:#b}; {}", emu_sim::diff::describe(gf, wf, name, "cpu"))
                    }
                    _ => format!("{name} {g:?}, cpu {w:?}"),
                };
                panic!(
                    "{}: frame {i} (port {}, {} bytes {:02x?}): {detail}",
                    desc.name,
                    frames[i].1,
                    frames[i].0.len(),
                    &frames[i].0[..frames[i].0.len().min(64)]
                );
            }
        }
    }
}

/// How many outcomes of each kind: sent (per port mask) and dropped (per reason).
pub fn histogram(outcomes: &[Outcome]) -> std::collections::BTreeMap<String, usize> {
    let mut h = std::collections::BTreeMap::new();
    for o in outcomes {
        let k = match o {
            Outcome::Sent(m, _) => format!("sent {m:#b}"),
            Outcome::Dropped(r) => r.name().to_string(),
        };
        *h.entry(k).or_insert(0) += 1;
    }
    h
}

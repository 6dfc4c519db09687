//! `emu sim --fuzz N`: seeded traffic ([`emu_sim::fuzz`]) through every tier in lockstep, each
//! frame's fate compared with the first tier's as it goes, so a million frames need no files.

use super::run::{port_count, print_summary};
use super::sim::{report_hardware, Built};
use crate::cli::SimArgs;
use emu::{Config, NetworkFunction, NfDescriptor, Verdict};
use emu_cpu::{Frame, PortsWriter, Runner};
use emu_sim::diff::{self, Fate};
use emu_sim::fuzz::{Aims, Fuzzer};
use emu_sim::Tier;
use std::io::{IsTerminal, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// Differences printed per pair of tiers; the rest are counted.
const SHOWN: usize = 10;

pub(crate) fn run(desc: &NfDescriptor, config: &Config, a: &SimArgs, built: Built, frames: u64) -> Result<i32, String> {
    let ports = port_count(desc, a.pcap.ports)?;
    let aims = Aims::of_values(desc.params.iter().filter_map(|p| config.raw(p).ok()));
    let mut fuzzer = Fuzzer::new(a.seed, ports, aims);
    let Built { nfs, hardware, replays, .. } = built;
    let mut runners: Vec<(Tier, Runner<dyn NetworkFunction + Send>)> = nfs
        .into_iter()
        .map(|(t, nf)| (t, Runner::new(nf, ports, desc.window).with_max_frame(a.pcap.max_frame)))
        .collect();
    let mut traffic = match &a.pcap.out {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            Some(PortsWriter::create(&dir.join("traffic.pcapng"), ports).map_err(|e| e.to_string())?)
        }
        None => None,
    };
    let names: Vec<&str> = runners.iter().map(|(t, _)| t.name()).collect();
    println!(
        "fuzz: {frames} frames, seed {}, {ports} ports, tiers {} (each compared with {})",
        a.seed,
        names.join(", "),
        names[0]
    );
    let mut differ = vec![0u64; runners.len()];
    let start = Instant::now();
    let mut progress = Shown::new(frames);
    let mut stopped = None;
    'frames: for index in 0..frames {
        let f = fuzzer.next_frame();
        if let Some(w) = &mut traffic {
            w.write(f.port, f.timestamp, &f.data).map_err(|e| e.to_string())?;
        }
        let mut fates = Vec::with_capacity(runners.len());
        for (tier, runner) in &mut runners {
            let mut frame = Frame::new(f.port, f.timestamp, f.data.clone());
            match catch_unwind(AssertUnwindSafe(|| runner.process(&mut frame))) {
                Ok(verdict) => fates.push(fate(verdict, frame.data)),
                Err(panic) => {
                    let why = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    stopped = Some(format!("tier {tier} panicked on input frame {index} {}: {why}", shown(&f)));
                    break 'frames;
                }
            }
        }
        for (port, bytes) in &fates[0].sent {
            fuzzer.observe(*port, bytes);
        }
        for (k, other) in fates.iter().enumerate().skip(1) {
            if let Some(d) = diff::compare_fate(index, &fates[0], other, names[0], names[k]) {
                differ[k] += 1;
                if differ[k] <= SHOWN as u64 {
                    let place = d.port.map(|p| format!("port {p}: ")).unwrap_or_default();
                    println!("DIFFER {} vs {}: input frame {index} {}: {place}{}", names[0], names[k], shown(&f), d.what);
                }
            }
        }
        progress.tick(index + 1, differ.iter().sum());
    }
    progress.clear();
    if let Some(w) = traffic {
        w.finish().map_err(|e| e.to_string())?;
    }
    let run = runners[0].1.stats().rx_packets();
    let seconds = start.elapsed().as_secs_f64();
    println!("--- tier {}", names[0]);
    print_summary(desc, runners[0].1.stats(), &runners[0].1.nf().summary());
    let mut code = 0;
    if let Some(why) = &stopped {
        println!("{why}");
        println!(
            "the same frames again: emu sim {} --fuzz {} --seed {} --target {}",
            desc.name,
            run + 1,
            a.seed,
            names.join(",")
        );
        code = 1;
    }
    for (k, name) in names.iter().enumerate().skip(1) {
        match differ[k] {
            0 => println!("{} and {name} agree on all {run} frames", names[0]),
            n => {
                println!("DIFFER {} vs {name}: {n} of {run} input frames differ", names[0]);
                code = 1;
            }
        }
    }
    code = code.max(report_hardware(&hardware, replays, a)?);
    println!("fuzzed {run} frames through {} tiers in {seconds:.1} s ({:.0} frames/s)", names.len(), run as f64 / seconds);
    if let Some(dir) = &a.pcap.out {
        println!("wrote the traffic to {} (replay: --in {0})", dir.join("traffic.pcapng").display());
    }
    Ok(code)
}

/// A frame's fate as the differ compares it.
fn fate(verdict: Verdict, data: Vec<u8>) -> Fate {
    match verdict {
        Verdict::Send(mask) => Fate { sent: mask.ports().map(|p| (p as usize, data.clone())).collect(), dropped: None },
        Verdict::Drop(r) => Fate { sent: vec![], dropped: Some(r.name().to_string()) },
    }
}

/// `(port 2, 60 bytes 02 00 …)`: the input frame, its first 64 bytes.
fn shown(f: &emu_sim::fuzz::Fuzzed) -> String {
    let hex: Vec<String> = f.data.iter().take(64).map(|b| format!("{b:02x}")).collect();
    let more = if f.data.len() > 64 { " …" } else { "" };
    format!("(port {}, {} bytes {}{more})", f.port, f.data.len(), hex.join(" "))
}

/// How far the run has got, on a terminal once a second, elsewhere (a CI log) every tenth.
struct Shown {
    total: u64,
    last: Instant,
    terminal: bool,
    shown: bool,
}

impl Shown {
    fn new(total: u64) -> Shown {
        Shown { total, last: Instant::now(), terminal: std::io::stderr().is_terminal(), shown: false }
    }

    fn tick(&mut self, done: u64, differences: u64) {
        if self.terminal {
            if done % 1024 == 0 && self.last.elapsed() > Duration::from_secs(1) {
                self.last = Instant::now();
                self.shown = true;
                eprint!("\rfuzz: {done} of {} frames, {differences} differences…", self.total);
                let _ = std::io::stderr().flush();
            }
        } else if self.total >= 100_000 && done % (self.total / 10) == 0 && done < self.total {
            eprintln!("fuzz: {done} of {} frames, {differences} differences", self.total);
        }
    }

    fn clear(&self) {
        if self.shown {
            eprint!("\r\x1b[K");
        }
    }
}

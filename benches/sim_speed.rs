//! Simulation speed of the hardware tiers: simulated cycles and packets per second for the
//! learning switch under Verilator and in the cycle model, side by side, on the same frames
//! (whose outcomes and cycle counts must agree), at both bus widths.
//!
//! `cargo bench --bench sim_speed` (about 20 s; the first run also builds the Verilator
//! models, a few seconds each, cached afterwards). `EMU_BENCH_FRAMES` sets the frames per run
//! (default 20000). Acceptance (issue 4): Verilator at least 1 million cycles per second.

use emu::{craft, Config, Ipv4Addr, Mac};
use emu_hls::backend::model::{CycleModel, Driver, Pacing};
use emu_hls::backend::Design;
use emu_sim::verilator::VerilatorModel;
use std::time::Instant;

/// Seeded traffic among 12 hosts on 4 ports: UDP of 64 to 1500 bytes, one in ten broadcast.
fn frames(n: usize) -> Vec<(Vec<u8>, u8)> {
    let mut x: u64 = 0x5eed;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|_| {
            let (src, dst) = ((next() % 12) as u8 + 1, (next() % 12) as u8 + 1);
            let mac = |h: u8| Mac::from_bytes([2, 0, 0, 0, 0, h]);
            let ip = |h: u8| Ipv4Addr::new(10, 0, 0, h);
            let payload = vec![0x5a; (next() % 1458) as usize];
            let udp = craft::udp(ip(src), 1000, ip(dst), 2000, &payload);
            let to = if next() % 10 == 0 { Mac::BROADCAST } else { mac(dst) };
            (craft::ethernet(to, mac(src), 0x0800, &udp), (src - 1) % 4)
        })
        .collect()
}

fn main() {
    let n: usize = std::env::var("EMU_BENCH_FRAMES").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let input = frames(n);
    println!("| width | tier | frames | cycles | M cycles/s | k frames/s |");
    println!("|---:|---|---:|---:|---:|---:|");
    let mut worst_vl = f64::MAX;
    for width in [64, 256] {
        let d = Design::from_descriptor(&learning_switch::DESCRIPTOR, &Config::new(), width, 1518).unwrap();
        let (vl, info) = VerilatorModel::build(&d, None).unwrap_or_else(|e| panic!("{e}"));
        if !info.cached {
            eprintln!("built the {width}-bit Verilator model in {:.1} s", info.seconds);
        }
        let t = Instant::now();
        let mut model = Driver::new(CycleModel::new(&d), d.config.bus_bytes, Pacing::FULL);
        let want = model.run(&input).unwrap();
        let model_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut hw = Driver::new(vl, d.config.bus_bytes, Pacing::FULL);
        let got = hw.run(&input).unwrap();
        let vl_s = t.elapsed().as_secs_f64();
        assert!(got == want && hw.cycles == model.cycles, "the tiers disagree: not a measurement");
        for (tier, secs) in [("cycle model", model_s), ("verilator", vl_s)] {
            let mcps = model.cycles as f64 / secs / 1e6;
            if tier == "verilator" {
                worst_vl = worst_vl.min(mcps);
            }
            println!("| {width} | {tier} | {n} | {} | {mcps:.2} | {:.1} |", model.cycles, n as f64 / secs / 1e3);
        }
    }
    println!("\nVerilator, slowest: {worst_vl:.2} M cycles/s (acceptance: at least 1)");
}

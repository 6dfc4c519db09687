//! The HLS-generated learning switch and ICMP echo responder against the hand-written references
//! (`emu_fpga::reference`): yosys `synth_xilinx` resources (LUT, FF, BRAM) and cycles per
//! packet, at 64 and 256 bits, with the ratio HLS / hand-written.
//!
//! ```sh
//! cargo run -p emu-fpga --example compare_references            # the table
//! cargo run -p emu-fpga --example compare_references -- --modules   # and yosys's per-module stat
//! ```
//!
//! Cycles are measured the same way for both: 200 and 100 back-to-back 60-byte broadcast frames
//! from one host (learn, then flood) through the design stepped by `emu_hls`'s `Driver`, the
//! interval the difference over 100, the latency the first frame's (its first beat taken to its
//! last beat sent). For the responder: 98-byte echo requests (`ping`'s default, 56 bytes of
//! data) to its address, each answered, the same way.

use emu_core::{craft, Config, Ipv4Addr, Mac};
use emu_fpga::reference::{IcmpEcho256, IcmpEcho64, LearningSwitch256, LearningSwitch64, Stepped};
use emu_hls::backend::model::{Driver, Pacing};
use emu_hls::backend::top::Clocked;
use emu_hls::backend::{rtl, Design};
use emu_hls::hw::tools::{yosys_synth_xilinx, SynthStats};
use rust_hdl::prelude::*;
use std::process::Command;

/// 60-byte broadcast frames from one host, `n` of them.
fn floods(n: usize) -> Vec<(Vec<u8>, u8)> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x88, 0xb5]);
    f.resize(60, 0);
    vec![(f, 1u8); n]
}

/// 98-byte echo requests to the responder's default address, `n` of them.
fn pings(n: usize) -> Vec<(Vec<u8>, u8)> {
    let (me, peer) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
    let ip = craft::icmp_echo(peer, me, true, 0x1234, 1, &[0x5a; 56]);
    let f = craft::ethernet(Mac::from_bytes([2, 0, 0, 0, 0, 1]), Mac::from_bytes([2, 0, 0, 0, 0, 2]), 0x0800, &ip);
    vec![(f, 1u8); n]
}

/// (cycles per packet, latency) of hardware built by `make` on `traffic`, back to back.
fn cycles(make: &dyn Fn() -> (Box<dyn Clocked>, usize), traffic: fn(usize) -> Vec<(Vec<u8>, u8)>) -> (u64, u64) {
    let run = |n: usize| {
        let (hw, bus) = make();
        let mut d = Driver::new(hw, bus, Pacing::FULL);
        d.run(&traffic(n)).expect("the design runs");
        (d.cycles, d.latencies[0])
    };
    let (c200, latency) = run(200);
    let (c100, _) = run(100);
    ((c200 - c100) / 100, latency)
}

/// yosys `synth_xilinx` with `extra` options; the whole log.
fn yosys(verilog: &str, top: &str, extra: &str) -> String {
    let dir = std::env::temp_dir().join(format!("emu-compare-{}-{top}-{}", std::process::id(), extra.len()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("design.v"), verilog).unwrap();
    let script = format!("read_verilog -sv design.v; synth_xilinx -family xc7 -top {top} {extra}; stat");
    let out = Command::new("yosys").args(["-p", &script]).current_dir(&dir).output().expect("yosys runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "yosys failed on {top}");
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// The cell counts of the last `stat` block in a yosys log (the whole design).
fn totals(log: &str) -> SynthStats {
    SynthStats { cells: emu_hls::hw::tools::stat_cells(log), warnings: vec![] }
}

/// yosys's per-module `stat` of a hierarchical synthesis: LUTs, FFs and wide muxes per module.
fn per_module(log: &str) -> String {
    let start = log.find("Printing statistics").unwrap_or(0);
    let mut out = vec![];
    let mut module = String::new();
    let mut cells: Vec<(String, u64)> = vec![];
    let flush = |module: &str, cells: &[(String, u64)], out: &mut Vec<String>| {
        if module.is_empty() {
            return;
        }
        let sum = |p: &str| cells.iter().filter(|(c, _)| c.starts_with(p)).map(|(_, n)| n).sum::<u64>();
        out.push(format!(
            "{module}: {} LUT, {} FF, {} MUXF7/8, {} CARRY4, {} RAMB",
            sum("LUT"),
            sum("FD"),
            sum("MUXF"),
            sum("CARRY"),
            sum("RAMB")
        ));
    };
    for line in log[start..].lines() {
        if let Some(name) = line.strip_prefix("=== ").and_then(|l| l.strip_suffix(" ===")) {
            flush(&module, &cells, &mut out);
            module = name.to_string();
            cells.clear();
        } else {
            let mut words = line.split_whitespace();
            if let (Some(c), Some(n), None) = (words.next(), words.next(), words.next()) {
                if let Ok(n) = n.parse() {
                    cells.push((c.to_string(), n));
                }
            }
        }
    }
    flush(&module, &cells, &mut out);
    // Every module once (yosys prints the statistics twice); rust-hdl's one-DFF modules left out.
    out.dedup();
    let mut seen = std::collections::BTreeSet::new();
    out.into_iter()
        .filter(|l| seen.insert(l.clone()) && !l.contains(" 0 LUT,") || l.starts_with("design"))
        .collect::<Vec<_>>()
        .join("\n")
}

struct Row {
    what: String,
    /// Flattened (yosys optimizes across module boundaries, as Vivado does).
    flat: SynthStats,
    /// As `emu synth` and `emu_hls::hw::tools::yosys_synth_xilinx` run it: the hierarchy kept.
    hier: SynthStats,
    per_packet: u64,
    latency: u64,
}

fn brams(s: &SynthStats) -> f64 {
    s.count("RAMB36") as f64 + s.count("RAMB18") as f64 / 2.0
}

fn main() {
    let modules = std::env::args().any(|a| a == "--modules");
    for nf in ["learning-switch", "icmp-echo"] {
        let switch = nf == "learning-switch";
        let desc = if switch { &learning_switch::DESCRIPTOR } else { &icmp_echo::DESCRIPTOR };
        let traffic: fn(usize) -> Vec<(Vec<u8>, u8)> = if switch { floods } else { pings };
        let mut rows = vec![];
        for width in [64usize, 256] {
            let design = Design::from_descriptor(desc, &Config::new(), width, 1518).expect("the NF compiles");
            let verilog = rtl::verilog(&design).expect("Verilog");
            let top = design.top_name();
            let hls = yosys_synth_xilinx(&verilog, &top).expect("yosys");
            let hls_flat = totals(&yosys(&verilog, &top, "-flatten"));
            let (hls_ii, hls_lat) = cycles(
                &|| {
                    let hw: Box<dyn Clocked> = if width == 64 {
                        Box::new(emu_hls::backend::top::Sume64::new(&design).unwrap())
                    } else {
                        Box::new(emu_hls::backend::top::Sume256::new(&design).unwrap())
                    };
                    (hw, width / 8)
                },
                traffic,
            );
            let reference = match (switch, width) {
                (true, 64) => reference_verilog(LearningSwitch64::default()),
                (true, _) => reference_verilog(LearningSwitch256::default()),
                (false, 64) => reference_verilog(IcmpEcho64::default()),
                (false, _) => reference_verilog(IcmpEcho256::default()),
            };
            let hand = yosys_synth_xilinx(&reference, "top").expect("yosys");
            let hand_flat = totals(&yosys(&reference, "top", "-flatten"));
            let (hand_ii, hand_lat) = cycles(
                &|| {
                    let hw: Box<dyn Clocked> = match (switch, width) {
                        (true, 64) => Box::new(Stepped::<64, 8, _>(LearningSwitch64::default())),
                        (true, _) => Box::new(Stepped::<256, 32, _>(LearningSwitch256::default())),
                        (false, 64) => Box::new(Stepped::<64, 8, _>(IcmpEcho64::default())),
                        (false, _) => Box::new(Stepped::<256, 32, _>(IcmpEcho256::default())),
                    };
                    (hw, width / 8)
                },
                traffic,
            );
            if modules {
                println!(
                    "## {nf}, {width} bits, HLS, per module (hierarchy kept)\n{}\n",
                    per_module(&yosys(&verilog, &top, ""))
                );
            }
            rows.push((
                width,
                Row { what: "HLS".into(), flat: hls_flat, hier: hls, per_packet: hls_ii, latency: hls_lat },
                Row {
                    what: "hand-written".into(),
                    flat: hand_flat,
                    hier: hand,
                    per_packet: hand_ii,
                    latency: hand_lat,
                },
            ));
        }
        if switch {
            println!("Learning switch, yosys synth_xilinx -family xc7 -flatten; 60-byte frames back to back\n");
        } else {
            println!("\nICMP echo, yosys synth_xilinx -family xc7 -flatten; 98-byte echo requests back to back\n");
        }
        print_table(&rows);
    }
}

/// rust-hdl's Verilog of a reference.
fn reference_verilog<B: Block>(mut block: B) -> String {
    block.connect_all();
    generate_verilog(&block)
}

fn print_table(rows: &[(usize, Row, Row)]) {
    println!(
        "| bus | design | LUT | FF | BRAM (RAMB36) | cycles per packet | latency | LUT, FF with the hierarchy kept |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    let ratio = |a: f64, b: f64| if b == 0.0 { "—".to_string() } else { format!("{:.2}", a / b) };
    for (width, hls, hand) in rows {
        for r in [hls, hand] {
            println!(
                "| {width} | {} | {} | {} | {} | {} | {} | {}, {} |",
                r.what,
                r.flat.count("LUT"),
                r.flat.count("FD"),
                brams(&r.flat),
                r.per_packet,
                r.latency,
                r.hier.count("LUT"),
                r.hier.count("FD")
            );
        }
        println!(
            "| {width} | **HLS / hand** | **{}** | **{}** | **{}** | **{}** | **{}** | {}, {} |",
            ratio(hls.flat.count("LUT") as f64, hand.flat.count("LUT") as f64),
            ratio(hls.flat.count("FD") as f64, hand.flat.count("FD") as f64),
            ratio(brams(&hls.flat), brams(&hand.flat)),
            ratio(hls.per_packet as f64, hand.per_packet as f64),
            ratio(hls.latency as f64, hand.latency as f64),
            ratio(hls.hier.count("LUT") as f64, hand.hier.count("LUT") as f64),
            ratio(hls.hier.count("FD") as f64, hand.hier.count("FD") as f64)
        );
    }
}

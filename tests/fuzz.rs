//! `emu sim --fuzz`: seeded, damaged traffic through all four tiers of every shipped NF (the CI
//! slice of the million-frame runs in docs/performance.md), a fault the diff must name exactly
//! once, and the traffic written for replay.

mod nf_common;

use nf_common::{emu, text};
use std::process::Output;

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");

fn options(nf: &str) -> Vec<String> {
    let ex = |f: &str| format!("{EXAMPLES}/{f}");
    match nf {
        "firewall" => vec!["--rules".into(), ex("firewall.rules")],
        "nat" => vec!["--outside-ip".into(), "203.0.113.1/24".into()],
        "dns-server" => vec!["--zone".into(), ex("example.zone"), "--ip".into(), "10.0.0.53".into()],
        _ => vec![],
    }
}

fn sim(nf: &str, args: &[&str]) -> (Output, String) {
    let opts = options(nf);
    let all: Vec<&str> = ["sim", nf].into_iter().chain(opts.iter().map(String::as_str)).chain(args.iter().copied()).collect();
    let out = emu(&all);
    let s = format!("{}{}", text(&out.stdout), text(&out.stderr));
    (out, s)
}

/// The number just before `phrase` in `line` (`frames out` in "20000 frames in, 9 frames out").
fn number_before(line: &str, phrase: &str) -> u64 {
    let head = &line[..line.find(phrase).unwrap_or_else(|| panic!("no `{phrase}` in `{line}`"))];
    let word = head.split_whitespace().last().unwrap_or("");
    word.parse().unwrap_or_else(|_| panic!("no number before `{phrase}` in `{line}`"))
}

/// `frames` fuzzed frames of `nf` through cpu, ir, cycle and verilator: every tier agrees on
/// every frame, and the traffic reaches the NF (it sends) and its checks (it drops).
fn agrees(nf: &str, seed: u64, width: usize, frames: u64) {
    let (seed, width, n) = (seed.to_string(), width.to_string(), frames.to_string());
    let tiers = "cpu,ir,cycle,verilator";
    let (out, s) = sim(nf, &["--target", tiers, "--fuzz", &n, "--seed", &seed, "--width", &width]);
    assert!(out.status.success(), "{s}");
    assert!(!s.contains("DIFFER"), "{s}");
    for tier in ["ir", "cycle", "verilator"] {
        assert!(s.contains(&format!("cpu and {tier} agree on all {n} frames")), "{s}");
    }
    let line = s.lines().find(|l| l.starts_with(&format!("{nf}: {n} frames in"))).unwrap_or_else(|| panic!("{s}"));
    // ICMP echo answers only pings and ARP for its address: some 4% of the traffic.
    let least = frames / 50;
    assert!(number_before(line, "frames out") > least && number_before(line, "dropped") > least, "{line}");
}

/// The CI slice: 10 000 frames an NF, 2 500 for the DNS server and 1 500 for the memcached
/// cache, whose frames are the costliest on the tests' unoptimized tiers (5 000 memcached frames
/// took 194 s of a loaded 2-core machine). The slice catches a regression; the million-frame runs
/// of docs/performance.md (profile.sim, Verilator at -O2) are the search.
const SLICE: u64 = 10_000;
const SLICE_DNS: u64 = 2_500;
const SLICE_MEMCACHED: u64 = 1_500;

#[test]
fn learning_switch_agrees_on_every_tier_over_fuzzed_traffic() {
    agrees("learning-switch", 1, 64, SLICE);
}

#[test]
fn icmp_echo_agrees_on_every_tier_over_fuzzed_traffic() {
    agrees("icmp-echo", 2, 256, SLICE);
}

#[test]
fn tcp_ping_agrees_on_every_tier_over_fuzzed_traffic() {
    agrees("tcp-ping", 3, 64, SLICE);
}

#[test]
fn firewall_agrees_on_every_tier_over_fuzzed_traffic() {
    agrees("firewall", 4, 256, SLICE);
}

#[test]
fn nat_agrees_on_every_tier_over_fuzzed_traffic() {
    agrees("nat", 5, 64, SLICE);
}

#[test]
fn stats_agrees_on_every_tier_over_fuzzed_traffic() {
    agrees("stats", 6, 256, SLICE);
}

#[test]
fn dns_server_agrees_on_every_tier_over_fuzzed_traffic() {
    agrees("dns-server", 7, 64, SLICE_DNS);
}

#[test]
fn memcached_cache_agrees_on_every_tier_over_fuzzed_traffic() {
    agrees("memcached-cache", 8, 64, SLICE_MEMCACHED);
}

/// A tier that drops one frame more than the CPU is one difference in `emu sim`'s output, the
/// frame named by its input index, over generated traffic and over a capture alike.
#[test]
fn one_injected_drop_is_exactly_one_difference() {
    // (The ICMP responder keeps no state a lost frame would change: nothing follows from it.)
    let (out, s) = sim("icmp-echo", &["--target", "cpu,cycle", "--fuzz", "2000", "--inject-drop", "cycle:500"]);
    assert_eq!(out.status.code(), Some(1), "{s}");
    let lines: Vec<&str> = s.lines().filter(|l| l.starts_with("DIFFER")).collect();
    assert_eq!(lines.len(), 2, "{s}");
    assert!(lines[0].contains("cycle dropped it (malformed)") || lines[0].contains("cycle dropped it"), "{s}");
    assert!(lines[1].ends_with("1 of 2000 input frames differ"), "{s}");

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("sim");
    let example = format!("{EXAMPLES}/mixed.pcapng");
    let args = ["--target", "cpu,ir,cycle", "--in", &example, "--out", d.to_str().unwrap(), "--inject-drop", "ir:3"];
    let (out, s) = sim("learning-switch", &args);
    assert_eq!(out.status.code(), Some(1), "{s}");
    let lines: Vec<&str> = s.lines().filter(|l| l.starts_with("DIFFER")).collect();
    assert_eq!(lines, ["DIFFER cpu vs ir: input frame 3: cpu sent it on port 0, ir dropped it (malformed)"], "{s}");
    assert!(s.contains("cpu and cycle agree"), "{s}");
}

/// With --out the traffic is written as pcapng, ports as interfaces: tshark reads every frame,
/// and replaying it with --in gives what the fuzz run gave.
#[test]
fn the_fuzzed_traffic_replays_from_its_pcapng() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("fuzz");
    let o = out_dir.to_str().unwrap();
    let (out, s) = sim("icmp-echo", &["--target", "cpu,cycle", "--fuzz", "3000", "--seed", "11", "--out", o]);
    assert!(out.status.success(), "{s}");
    let summary = |s: &str| s.lines().find(|l| l.starts_with("icmp-echo: ")).map(str::to_string).unwrap();
    let fuzzed = summary(&s);
    let traffic = out_dir.join("traffic.pcapng");
    let tshark = std::process::Command::new("tshark").arg("-r").arg(&traffic).output().expect("tshark");
    assert!(tshark.status.success(), "{}", text(&tshark.stderr));
    assert_eq!(text(&tshark.stdout).lines().count(), 3000);
    let replay = dir.path().join("replay");
    let args = ["--target", "cpu,cycle", "--in", traffic.to_str().unwrap(), "--out", replay.to_str().unwrap()];
    let (out, s) = sim("icmp-echo", &args);
    assert!(out.status.success(), "{s}");
    assert!(s.contains("cpu and cycle agree"), "{s}");
    assert_eq!(summary(&s), fuzzed, "{s}");
}

#[test]
fn fuzz_arguments_get_clear_errors() {
    let cases: &[(&[&str], &str)] = &[
        (&["--fuzz", "10"], "--fuzz compares tiers: give two or more"),
        (&["--fuzz", "10", "--target", "cpu,ir", "--in", "x.pcap"], "cannot be used with"),
        (&["--fuzz", "10", "--target", "cpu,ir", "--inject-drop", "fpga:3"], "unknown tier `fpga`"),
        (&["--fuzz", "10", "--target", "cpu,ir", "--inject-drop", "ir"], "write TIER:N"),
        (&["--fuzz", "10", "--target", "cpu,ir", "--inject-drop", "cycle:3"], "tier cycle is not in --target"),
        (&["--seed", "3", "--target", "cpu,ir"], "--fuzz"),
        (&["--target", "cpu,ir"], "or --fuzz N for generated traffic"),
    ];
    for (args, want) in cases {
        let (out, s) = sim("learning-switch", args);
        assert!(!out.status.success(), "{args:?}: {s}");
        assert!(s.contains(want), "{args:?}: want `{want}` in:\n{s}");
    }
}

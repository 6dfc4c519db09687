//! TCP throughput through the NF switch in Mininet, against a Linux bridge in the same run.
//!
//! `sudo cargo bench --bench mininet_iperf` (root and Debian's mininet and iperf3, which
//! scripts/setup.sh installs). Two hosts on one switch; `iperf3` TCP from h1 to h2 for a few
//! seconds, through (a) `emu run learning-switch` with each packet I/O mode and (b) Mininet's
//! `LinuxBridge`, interleaved over several rounds; medians and the ratio are printed.
//!
//! Environment: `EMU_BENCH_ROUNDS` (default 3), `EMU_BENCH_SECS` (iperf3 seconds, default 4),
//! `EMU_BENCH_STRICT=1` to exit 1 when the NF switch is below 0.5 × the bridge.

use std::process::Command;

const TARGET_RATIO: f64 = 0.5;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Receiver throughput in Mbit/s of one iperf3 run through `switch` (`emu` or
/// `linux-bridge`) with the NF's packet I/O `io`.
fn iperf(switch: &str, io: Option<&str>, secs: u32) -> f64 {
    let dir = std::env::temp_dir().join(format!("emu-iperf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("iperf.txt");
    std::fs::write(
        &script,
        format!("h2 &: iperf3 -s -1 -p 5201\nsleep 0.5\nh1: iperf3 -c 10.0.0.2 -p 5201 -t {secs} -f m | tail -4\n"),
    )
    .unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_emu"));
    cmd.args(["mininet", "learning-switch", "--topo", "single,2", "--switch", switch, "--run"]).arg(&script);
    if let Some(io) = io {
        cmd.args(["--io", io]);
    }
    let out = cmd.output().expect("run emu mininet");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "emu mininet failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
        .lines()
        .filter(|l| l.contains("receiver"))
        .find_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let i = words.iter().position(|w| *w == "Mbits/sec")?;
            words.get(i - 1)?.parse().ok()
        })
        .unwrap_or_else(|| panic!("no iperf3 receiver line in:\n{stdout}"))
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs[xs.len() / 2]
}

fn main() {
    let uid = Command::new("id").arg("-u").output().expect("id");
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        eprintln!("mininet_iperf needs root (Mininet): run `sudo cargo bench --bench mininet_iperf`");
        std::process::exit(2);
    }
    let rounds: usize = env_or("EMU_BENCH_ROUNDS", 3).max(1);
    let secs: u32 = env_or("EMU_BENCH_SECS", 4);
    let strict = std::env::var("EMU_BENCH_STRICT").is_ok_and(|v| v == "1");
    let modes: Vec<Option<&str>> = vec![Some("plain"), Some("ring")];
    println!("iperf3 TCP h1 -> h2 through one switch (Mininet single,2), {secs} s per run, {rounds} rounds");
    let mut bridge = Vec::new();
    let mut emu: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    for round in 1..=rounds {
        let b = iperf("linux-bridge", None, secs);
        bridge.push(b);
        let mut line = format!("  round {round}: linux bridge {b:8.1} Mbit/s");
        for (k, io) in modes.iter().enumerate() {
            let e = iperf("emu", *io, secs);
            emu[k].push(e);
            line += &format!("  emu ({}) {e:8.1} Mbit/s ({:.3})", io.unwrap_or("default"), e / b);
        }
        println!("{line}");
    }
    let mb = median(bridge);
    println!();
    println!("{:<36} {:>14} {:>12}", "switch", "median Mbit/s", "vs bridge");
    println!("{:<36} {:>14.1} {:>12}", "Linux bridge (Mininet LinuxBridge)", mb, "1.000");
    let mut best: f64 = 0.0;
    for (k, io) in modes.iter().enumerate() {
        let me = median(emu[k].clone());
        best = best.max(me / mb);
        println!("{:<36} {:>14.1} {:>12.3}", format!("emu learning-switch, --io {}", io.unwrap_or("default")), me, me / mb);
    }
    let ok = best >= TARGET_RATIO;
    println!();
    println!("acceptance (NF switch >= {TARGET_RATIO} x Linux bridge): {}", if ok { "met" } else { "NOT met" });
    if strict && !ok {
        std::process::exit(1);
    }
}

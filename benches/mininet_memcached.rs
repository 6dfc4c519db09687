//! memcached GETs through memcached-cache against the same server uncached, in one Mininet run.
//!
//! `sudo cargo bench --bench mininet_memcached` (root, Debian's mininet, memcached and
//! libmemcached-tools, which scripts/setup.sh installs). h1 — the NF — h2; h2 runs two real
//! memcached servers, on UDP 11211 (the port the NF caches) and on UDP 11311 (a port the NF
//! forwards untouched: "straight to the server", over the same links and the same NF process,
//! so the difference is the cache alone). memcaslap runs its ASCII load over UDP (32-byte
//! keys, 64-byte values, 90 % GETs, one connection, a window of 1000 keys) against each in
//! turn, over several rounds; the medians of TPS and the GET latency it reports are printed
//! with the NF's hit rate (its summary: hits / (hits + misses)).
//!
//! Environment: `EMU_BENCH_ROUNDS` (default 3), `EMU_BENCH_SECS` (memcaslap seconds, default 4).

use std::process::Command;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// What memcaslap reported of one run.
#[derive(Debug, Default, Clone, Copy)]
struct Run {
    tps: f64,
    /// Mean and geometric mean GET latency, µs.
    get_avg: f64,
    get_geo: f64,
    gets: f64,
    get_misses: f64,
}

/// memcaslap's report: the "Get Statistics" block's Avg and Geo, cmd_get, get_misses, TPS.
fn parse(report: &str) -> Run {
    let mut r = Run::default();
    let mut in_get = false;
    for line in report.lines() {
        let l = line.trim_start_matches(|c: char| c == ' ' || c == '|').trim();
        if l.starts_with("Get Statistics") {
            in_get = true;
        } else if l.starts_with("Set Statistics") || l.starts_with("Total Statistics") {
            in_get = false;
        }
        let num = |l: &str| l.split(':').nth(1).and_then(|v| v.trim().parse::<f64>().ok()).unwrap_or(0.0);
        if in_get && l.starts_with("Avg:") && r.get_avg == 0.0 {
            r.get_avg = num(l);
        }
        if in_get && l.starts_with("Geo:") && r.get_geo == 0.0 {
            r.get_geo = num(l);
        }
        if l.starts_with("cmd_get:") {
            r.gets = num(l);
        }
        if l.starts_with("get_misses:") {
            r.get_misses = num(l);
        }
        if l.starts_with("Run time:") {
            let words: Vec<&str> = l.split_whitespace().collect();
            if let Some(i) = words.iter().position(|w| *w == "TPS:") {
                r.tps = words[i + 1].parse().unwrap_or(0.0);
            }
        }
    }
    r
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs[xs.len() / 2]
}

fn main() {
    let uid = Command::new("id").arg("-u").output().expect("id");
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        eprintln!("mininet_memcached needs root (Mininet): run `sudo cargo bench --bench mininet_memcached`");
        std::process::exit(2);
    }
    let rounds: usize = env_or("EMU_BENCH_ROUNDS", 3).max(1);
    let secs: u32 = env_or("EMU_BENCH_SECS", 4);
    let dir = std::env::temp_dir().join(format!("emu-memcached-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let topo = dir.join("topo.json");
    std::fs::write(
        &topo,
        r#"{"hosts": [{"name": "h1", "ip": "10.0.0.1/24"}, {"name": "h2", "ip": "10.0.0.2/24"}],
            "switches": ["mcb1"], "links": [["h1", "mcb1"], ["h2", "mcb1"]]}"#,
    )
    .unwrap();
    let mut script = String::from(
        "h2 &: memcached -u nobody -l 10.0.0.2 -p 11211 -U 11211 -m 16\n\
         h2 &: memcached -u nobody -l 10.0.0.2 -p 11311 -U 11311 -m 16\n\
         sleep 1\n\
         h1: printf 'key\\n32 32 1\\nvalue\\n64 64 1\\ncmd\\n0 0.1\\n1 0.9\\n' > $WORK/cfg\n\
         timeout 60\n",
    );
    for round in 1..=rounds {
        for port in [11211, 11311] {
            script += &format!(
                "h1: echo '=== round {round} port {port}'; memcaslap -s 10.0.0.2:{port} -U -T 1 -c 1 -w 1k \
                 -t {secs}s -S {secs}s -F $WORK/cfg | awk '/Get Statistics/{{g=1}} /Log2|Set Statistics/{{g=0}} \
                 g || /cmd_get|get_misses|Run time/'\n"
            );
        }
    }
    let run = dir.join("bench.txt");
    std::fs::write(&run, script).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_emu"))
        .args(["mininet", "memcached-cache", "--topo", topo.to_str().unwrap(), "--run", run.to_str().unwrap()])
        .output()
        .expect("run emu mininet");
    let stdout = String::from_utf8_lossy(&out.stdout);
    std::fs::write(dir.join("experiment.log"), stdout.as_bytes()).unwrap();
    assert!(out.status.success(), "emu mininet failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // Each run's report follows its step's line, which names the round and port (`emu mininet`
    // shows the last lines of a step's output only).
    let mut sections: Vec<(u16, String)> = Vec::new();
    for line in stdout.lines() {
        let step = line.starts_with('[');
        if let Some((_, rest)) = line.split_once("=== round ").filter(|_| step) {
            let port = rest.split_whitespace().nth(2).and_then(|p| p.trim_end_matches("';").parse().ok()).unwrap_or(0);
            sections.push((port, String::new()));
        } else if let Some((_, text)) = sections.last_mut() {
            *text += line;
            *text += "\n";
        }
    }
    let runs: Vec<(u16, Run)> = sections.iter().map(|(port, text)| (*port, parse(text))).collect();
    let summary = stdout.lines().find(|l| l.contains("memcached-cache (cache): ")).unwrap_or("").trim();
    let count = |what: &str| -> f64 {
        summary.find(&format!(" {what}")).and_then(|at| summary[..at].rsplit(' ').next()?.parse().ok()).unwrap_or(0.0)
    };
    let (hits, misses) = (count("hits,"), count("misses,"));
    println!(
        "memcaslap ASCII over UDP, 32-byte keys, 64-byte values, 90 % GETs, 1 connection, 1000-key window, \
         {secs} s per run, {rounds} rounds"
    );
    for (port, r) in &runs {
        println!(
            "  port {port}: TPS {:8.0}  GET avg {:7.1} us  geo {:7.1} us  gets {:8.0}  get_misses {}",
            r.tps, r.get_avg, r.get_geo, r.gets, r.get_misses
        );
    }
    println!();
    println!("{:<44} {:>10} {:>14} {:>14} {:>12}", "path", "TPS", "GET avg (us)", "GET geo (us)", "get_misses");
    for (port, name) in [(11211, "through the cache (UDP 11211)"), (11311, "straight to the server (UDP 11311)")] {
        let mine: Vec<Run> = runs.iter().filter(|(p, _)| *p == port).map(|(_, r)| *r).collect();
        let m = |f: fn(&Run) -> f64| median(mine.iter().map(f).collect());
        println!(
            "{:<44} {:>10.0} {:>14.1} {:>14.1} {:>12.0}",
            name,
            m(|r| r.tps),
            m(|r| r.get_avg),
            m(|r| r.get_geo),
            m(|r| r.get_misses)
        );
    }
    println!();
    println!(
        "cache hit rate (the NF's summary): {:.1} % ({hits} hits, {misses} misses)",
        100.0 * hits / (hits + misses).max(1.0)
    );
    println!("{summary}");
}

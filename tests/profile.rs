//! `emu run --profile` and `emu sim --profile` on the example traffic through the learning
//! switch: the figures against what the traffic makes them (derived here from the frames, not
//! from the tool), the JSON, and the SVG plots (parsed as XML by Python's parser).

use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

fn example() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/examples/mixed.pcapng").to_string()
}

fn emu(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_emu")).args(args).output().expect("run emu");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "emu {args:?} failed:\n{text}");
    text
}

/// The example's frames (their ports do not matter here: only MACs decide the lookups).
fn frames() -> Vec<Vec<u8>> {
    let spec = emu_cpu::InputSpec { port: None, path: example().into() };
    let mut cap = emu_cpu::CaptureReader::open(&spec).unwrap();
    let mut out = Vec::new();
    while let Some(f) = cap.next_frame().unwrap() {
        out.push(f.data);
    }
    out
}

/// The learning switch's lookups of `mac_table` on `frames`, worked out from its documented
/// behaviour: learn every unicast source, then look up every unicast destination. (hits,
/// misses), and the number of distinct sources (the table must not have evicted).
fn expected_lookups(frames: &[Vec<u8>]) -> (u64, u64, usize) {
    let mut learned: HashSet<[u8; 6]> = HashSet::new();
    let (mut hits, mut misses) = (0, 0);
    for f in frames {
        let dst: [u8; 6] = f[0..6].try_into().unwrap();
        let src: [u8; 6] = f[6..12].try_into().unwrap();
        if src[0] & 1 == 0 {
            learned.insert(src);
        }
        if dst[0] & 1 == 0 {
            if learned.contains(&dst) {
                hits += 1;
            } else {
                misses += 1;
            }
        }
    }
    (hits, misses, learned.len())
}

/// (bars, CDF points) of an SVG plot, after Python's XML parser has read it whole.
fn svg_shape(path: &Path) -> (usize, usize) {
    let script = "import sys, xml.etree.ElementTree as E\n\
                  ns = '{http://www.w3.org/2000/svg}'\n\
                  root = E.parse(sys.argv[1]).getroot()\n\
                  assert root.tag == ns + 'svg', root.tag\n\
                  bars = [r for r in root.iter(ns + 'rect') if r.get('class') == 'bar']\n\
                  lines = [p for p in root.iter(ns + 'polyline') if p.get('class') == 'cdf']\n\
                  points = len(lines[0].get('points').split()) if lines else 0\n\
                  print(len(bars), points)";
    let out = Command::new("python3").arg("-c").arg(script).arg(path).output().expect("python3");
    assert!(out.status.success(), "{}: not well-formed SVG: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut it = text.split_whitespace().map(|x| x.parse::<usize>().unwrap());
    (it.next().unwrap(), it.next().unwrap())
}

/// The latency figures of one tier's profile add up, and its plots show them.
fn check_latency(tier: &Value, frames: u64, plots: &Path, prefix: &str) {
    let name = tier["tier"].as_str().unwrap();
    let l = &tier["latency"];
    assert_eq!(l["count"], frames, "{name}: a latency per frame");
    let bins = l["histogram"].as_array().unwrap();
    let sum: u64 = bins.iter().map(|b| b["count"].as_u64().unwrap()).sum();
    assert_eq!(sum, frames, "{name}: the histogram holds every frame");
    let (min, p50, max) = (l["min"].as_u64().unwrap(), l["p50"].as_u64().unwrap(), l["max"].as_u64().unwrap());
    assert!(min <= p50 && p50 <= max && min > 0, "{name}: {l}");
    let cdf = l["cdf"].as_array().unwrap();
    assert_eq!(cdf.len() as u64, frames.min(100), "{name}: CDF points");
    assert_eq!(cdf.last().unwrap()[1].as_f64(), Some(1.0));
    let (bars, _) = svg_shape(&plots.join(format!("{prefix}{name}.latency.svg")));
    assert_eq!(bars, bins.len(), "{name}: a bar per histogram bin");
    let (_, points) = svg_shape(&plots.join(format!("{prefix}{name}.cdf.svg")));
    assert_eq!(points, cdf.len(), "{name}: a vertex per CDF point");
}

#[test]
fn run_profile_counts_every_frame_and_every_lookup() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let json = dir.path().join("prof.json");
    let text = emu(&[
        "run",
        "learning-switch",
        "--in",
        &example(),
        "--out",
        out.to_str().unwrap(),
        "--profile",
        json.to_str().unwrap(),
    ]);
    let frames = frames();
    let (hits, misses, sources) = expected_lookups(&frames);
    assert!(sources <= 16, "the example must not fill the 16-entry table, or the expected figures need evictions");
    assert!(hits > 0 && misses > 0, "the example has both");

    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(doc["nf"], "learning-switch");
    let tiers = doc["tiers"].as_array().unwrap();
    assert_eq!(tiers.len(), 1);
    let p = &tiers[0];
    assert_eq!(p["tier"], "cpu");
    // Every frame passed the ingress checks (the only drop is the switch's own same_port),
    // so the NF processed them all.
    assert_eq!(summary["stats"]["drops"], serde_json::json!({"same_port": 1}));
    assert_eq!(p["frames"], frames.len() as u64);
    assert_eq!(p["latency"]["unit"], "ns");
    check_latency(p, frames.len() as u64, dir.path(), "prof.");
    assert_eq!(p["tables"], serde_json::json!([{"name": "mac_table", "hits": hits, "misses": misses}]));
    assert_eq!(p["ir_disagreements"], 0);
    assert!(p["states"].is_null(), "no FSM on the CPU");
    let hit_rate = format!("{:.1}%", 100.0 * hits as f64 / (hits + misses) as f64);
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("mac_table") && l.contains(&hit_rate)),
        "the terminal table shows mac_table's hit rate {hit_rate}:\n{text}"
    );
}

#[test]
fn sim_profile_agrees_across_tiers_and_states_add_up_to_the_cycles() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let prof = dir.path().join("prof");
    let text = emu(&[
        "sim",
        "learning-switch",
        "--target",
        "cpu,ir,cycle",
        "--width",
        "64",
        "--in",
        &example(),
        "--out",
        out.to_str().unwrap(),
        "--profile",
        prof.to_str().unwrap(),
    ]);
    let frames = frames();
    let (hits, misses, _) = expected_lookups(&frames);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(prof.join("profile.json")).unwrap()).unwrap();
    let tiers = doc["tiers"].as_array().unwrap();
    let names: Vec<&str> = tiers.iter().map(|t| t["tier"].as_str().unwrap()).collect();
    assert_eq!(names, ["cpu", "ir", "cycle"]);
    for t in tiers {
        assert_eq!(t["frames"], frames.len() as u64);
        check_latency(t, frames.len() as u64, &prof, "");
        // The same figure on every tier, and the one the traffic gives.
        assert_eq!(t["tables"], serde_json::json!([{"name": "mac_table", "hits": hits, "misses": misses}]));
    }
    assert_eq!(tiers[2]["latency"]["unit"], "cycles");
    // The cycle tier's states add up to the cycles its report gives (frames × cycles per
    // frame, printed with two decimals).
    let states = &tiers[2]["states"];
    let total = states["total"].as_u64().unwrap();
    let sum: u64 = states["states"].as_array().unwrap().iter().map(|s| s[1].as_u64().unwrap()).sum();
    assert_eq!(sum, total);
    let per_frame: f64 = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("interval")?.split_whitespace().next()?.parse().ok())
        .expect("the cycle tier's report");
    assert!(
        (per_frame * frames.len() as f64 - total as f64).abs() <= 0.005 * frames.len() as f64,
        "{total} cycles in the states, the report gives {per_frame} per frame for {} frames",
        frames.len()
    );
    // Every frame goes through the FSM's first state once (one cycle there each).
    assert_eq!(states["states"][0][1], frames.len() as u64);
    let (bars, _) = svg_shape(&prof.join("cycle.states.svg"));
    assert_eq!(bars, states["states"].as_array().unwrap().len(), "a bar per state");
    assert!(!prof.join("cpu.states.svg").exists(), "no FSM on the CPU");
}

//! `emu synth`: yosys synth_xilinx's resource table for the learning switch, with the change
//! against the last run; the iCE40 flow's bitstream, with timing met at the clock that
//! docs/fpga.md documents; the errors say what to do.
//!
//! Needs Debian's yosys, nextpnr-ice40 and fpga-icestorm (scripts/setup.sh). The synthesis runs
//! take about 20 s each (synth_xilinx, twice) and a minute (the iCE40 flow).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Longer than any run should take, even on a busy machine.
const DEADLINE: Duration = Duration::from_secs(900);

/// The clock docs/fpga.md says the learning switch meets on the iCEBreaker: its oscillator.
const DOCUMENTED_MHZ: f64 = 12.0;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `emu synth ARGS` to completion (killed at [`DEADLINE`]), with `path` as PATH if given.
fn synth_with(args: &[&str], path: Option<&str>) -> Output {
    let start = Instant::now();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_emu"));
    cmd.arg("synth").args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    let mut child = cmd.spawn().expect("start emu");
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > DEADLINE {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!("emu synth {args:?} ran longer than {DEADLINE:?}; stdout:\n{}", text(&out.stdout));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn ok(args: &[&str]) -> String {
    let out = synth_with(args, None);
    assert!(out.status.success(), "emu synth {args:?} failed:\n{}{}", text(&out.stdout), text(&out.stderr));
    text(&out.stdout)
}

fn fails(args: &[&str], path: Option<&str>) -> String {
    let out = synth_with(args, path);
    assert!(!out.status.success(), "emu synth {args:?} should fail:\n{}", text(&out.stdout));
    text(&out.stderr)
}

/// The words of the table row that starts with `label`.
fn row<'a>(stdout: &'a str, label: &str) -> Vec<&'a str> {
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no row `{label}` in:\n{stdout}"));
    line[line.find(label).unwrap() + label.len()..].split_whitespace().collect()
}

fn count(stdout: &str, label: &str) -> u64 {
    row(stdout, label)[0].parse().unwrap_or_else(|_| panic!("row `{label}` has no count:\n{stdout}"))
}

fn record(dir: &Path) -> serde_json::Value {
    let s = std::fs::read_to_string(dir.join("synth.json")).expect("synth.json written");
    serde_json::from_str(&s).expect("synth.json is JSON")
}

#[test]
fn xilinx_resource_table_and_the_change_against_the_last_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ls-64");
    let o = out.to_str().unwrap();

    let first = ok(&["learning-switch", "--width", "64", "-o", o]);
    assert!(first.contains("synth_xilinx -family xc7 for xc7vx690t"), "{first}");
    let (luts, ffs) = (count(&first, "LUT (logic, LUT1-LUT6)"), count(&first, "FF (flip-flops)"));
    assert!(luts > 0 && ffs > 0, "{first}");
    for label in ["BRAM, in RAMB18s", "RAMB36E1", "RAMB18E1", "DSP48E1", "CARRY4"] {
        count(&first, label);
    }
    assert!(count(&first, "BRAM, in RAMB18s") >= 1, "the packet buffer is block RAM:\n{first}");
    assert!(first.contains("change: first run"), "{first}");
    assert!(!first.lines().next().unwrap_or("").contains("change"), "{first}");
    let rec = record(&out);
    assert_eq!(rec["resources"]["lut"], luts);
    assert_eq!((rec["nf"].as_str(), rec["width"].as_u64()), (Some("learning-switch"), Some(64)));
    assert!(out.join("verilog/emu_learning_switch.v").exists());

    // The same NF, width and part again, with a smaller packet buffer: every row gets a change.
    let second = ok(&["learning-switch", "--width", "64", "--max-frame", "256", "-o", o]);
    let header = second.lines().find(|l| l.trim_start().starts_with("resource")).unwrap();
    assert!(header.trim_end().ends_with("change"), "{second}");
    for label in ["LUT (logic, LUT1-LUT6)", "FF (flip-flops)", "BRAM, in RAMB18s", "DSP48E1", "CARRY4"] {
        let words = row(&second, label);
        let change = words.last().unwrap();
        let n: i64 = change.parse().unwrap_or_else(|_| panic!("row `{label}` has no change:\n{second}"));
        assert!(n == 0 || change.starts_with(['+', '-']), "{second}");
        if label == "LUT (logic, LUT1-LUT6)" {
            assert_eq!(n, count(&second, label) as i64 - luts as i64, "{second}");
        }
    }
    assert!(second.contains("the last run had frames up to 1518 bytes"), "{second}");
    assert!(!second.contains("first run"), "{second}");
}

#[test]
fn ice40_bitstream_meets_the_documented_clock() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/fpga.md")).unwrap();
    assert!(doc.contains(&format!("{DOCUMENTED_MHZ:.0} MHz")), "docs/fpga.md documents the clock");

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ls-icebreaker");
    let stdout = ok(&["learning-switch", "--board", "icebreaker", "-o", out.to_str().unwrap()]);
    let bin = std::fs::metadata(out.join("learning-switch.bin")).expect("the bitstream is written");
    assert!(bin.len() > 1000, "{} bytes", bin.len());
    let rec = record(&out);
    let fmax = rec["fmax_mhz"].as_f64().expect("nextpnr's maximum frequency");
    assert_eq!(rec["freq_mhz"].as_f64(), Some(DOCUMENTED_MHZ));
    assert!(fmax >= DOCUMENTED_MHZ, "timing not met: {fmax} MHz < {DOCUMENTED_MHZ} MHz\n{stdout}");
    assert!(stdout.contains("timing met"), "{stdout}");
    assert!(count(&stdout, "logic cells (LUT4 + FF)") > 0 && count(&stdout, "BRAM (SB_RAM40_4K)") > 0, "{stdout}");
    assert_eq!(rec["width"].as_u64(), Some(64), "a board build is 64 bits wide by default");
    for f in ["emu_ice40_top.v", "icebreaker.pcf", "nextpnr.log", "yosys.log"] {
        assert!(out.join(f).exists(), "{f}");
    }
}

#[test]
fn errors_say_what_to_do() {
    let e = fails(&["learning-switch", "--board", "nexys"], None);
    assert!(e.contains("unknown board `nexys`") && e.contains("icebreaker (iCE40UP5K-SG48)"), "{e}");
    let e = fails(&["learning-switch", "--freq", "20"], None);
    assert!(e.contains("--board"), "{e}");
    let e = fails(&["learning-switch", "--width", "128"], None);
    assert!(e.contains("64 or 256"), "{e}");
    let e = fails(&["learning-switch", "--part", "xcku040"], None);
    assert!(e.contains("7-series") && e.contains("--board icebreaker"), "{e}");
    let e = fails(&["learning-switch", "--board", "icebreaker", "--part", "xc7a35t"], None);
    assert!(e.contains("cannot be used with"), "{e}");
    let e = fails(&["learning-switch", "--width", "128"], None);
    assert!(e.contains("64 or 256"), "{e}");
    // No yosys on the PATH: say how to install it, before writing anything.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("none");
    let e = fails(&["learning-switch", "-o", out.to_str().unwrap()], Some(dir.path().to_str().unwrap()));
    assert!(e.contains("`yosys` is not installed") && e.contains("scripts/setup.sh"), "{e}");
    assert!(!out.exists());
}

#[test]
fn help_has_examples() {
    let out = synth_with(&["--help"], None);
    assert!(out.status.success());
    let help = text(&out.stdout);
    assert!(help.contains("Examples:") && help.contains("emu synth learning-switch --board icebreaker"), "{help}");
    assert!(help.contains("not to one part"), "--help says the part is a label:\n{help}");
}

//! End-to-end tests of `emu run` and `emu sim` over capture files: the frames on every output
//! pcap, the drops record, and the errors for bad input.

use emu::craft;
use emu::{Ipv4Addr, Mac};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn emu(args: &[&str]) -> Output {
    emu_env(args, &[])
}

/// `emu args` with extra environment variables.
fn emu_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_emu")).args(args).envs(env.iter().copied()).output().expect("run emu")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// One record: (timestamp ns, captured bytes, length on the wire).
type Record = (u64, Vec<u8>, u32);

fn write_pcap_linktype(path: &Path, linktype: u32, records: &[Record]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w = emu_cpu::pcap::PcapWriter::with_linktype(file, linktype).unwrap();
    for (ts, data, len) in records {
        w.write_cut(*ts, data, *len).unwrap();
    }
    w.flush().unwrap();
}

fn write_pcap(path: &Path, frames: &[(u64, Vec<u8>)]) {
    let records: Vec<Record> = frames.iter().map(|(t, d)| (*t, d.clone(), d.len() as u32)).collect();
    write_pcap_linktype(path, 1, &records);
}

fn read_pcap(path: &Path) -> Vec<Vec<u8>> {
    let spec = emu_cpu::InputSpec { port: None, path: path.to_path_buf() };
    let mut cap = emu_cpu::CaptureReader::open(&spec).unwrap();
    let mut out = Vec::new();
    while let Some(f) = cap.next_frame().unwrap() {
        out.push(f.data);
    }
    out
}

fn mac(k: u8) -> Mac {
    Mac::from_bytes([2, 0, 0, 0, 0, k])
}

/// A frame from host `src` to `dst` (a host number, or a MAC) tagged by `tag` in its payload.
fn frame(dst: Mac, src: u8, tag: u8) -> Vec<u8> {
    craft::ethernet(dst, mac(src), 0x88b5, &[tag; 30])
}

fn tcpdump_count(path: &Path) -> usize {
    let out = Command::new("tcpdump")
        .arg("-n")
        .arg("-r")
        .arg(path)
        .output()
        .expect("tcpdump is installed by scripts/setup.sh");
    assert!(out.status.success(), "tcpdump -r {}: {}", path.display(), text(&out.stderr));
    // One line per packet starts with its time of day; unknown EtherTypes add hex lines.
    text(&out.stdout).lines().filter(|l| l.starts_with(|c: char| c.is_ascii_digit())).count()
}

struct Dir(tempfile::TempDir);
impl Dir {
    fn new() -> Dir {
        Dir(tempfile::tempdir().unwrap())
    }
    fn p(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
    fn s(&self, name: &str) -> String {
        self.p(name).display().to_string()
    }
}

#[test]
fn learning_switch_learns_floods_forwards_and_drops_exactly() {
    let d = Dir::new();
    // Hosts A=1 on port 0, B=2 on port 1, C=3 on port 2, D=4 on port 0; A later moves to port 3.
    let t = |i: u64| 1_000_000_000 + i * 1000;
    let (a, b, c, dd) = (1, 2, 3, 4);
    let f1 = frame(mac(b), a, 1); // unknown B: flood 1,2,3
    let f2 = frame(mac(a), b, 2); // A known on 0: forward 0
    let f3 = frame(mac(b), a, 3); // forward 1
    let f4 = frame(Mac::BROADCAST, c, 4); // flood 0,1,3
    let f5 = frame(mac(a), dd, 5); // A is on D's port: drop same_port
    let f6 = frame(mac(dd), b, 6); // D learned on 0: forward 0
    let f7 = frame(Mac::from_bytes([1, 0, 0x5e, 0, 0, 1]), c, 7); // multicast: flood 0,1,3
    let f8 = frame(mac(c), a, 8); // A now on port 3: forward 2
    let f9 = frame(mac(a), b, 9); // A relearned on 3: forward 3
    write_pcap(&d.p("p0.pcap"), &[(t(1), f1.clone()), (t(3), f3.clone()), (t(5), f5.clone())]);
    write_pcap(&d.p("p1.pcap"), &[(t(2), f2.clone()), (t(6), f6.clone()), (t(9), f9.clone())]);
    write_pcap(&d.p("p2.pcap"), &[(t(4), f4.clone()), (t(7), f7.clone())]);
    write_pcap(&d.p("p3.pcap"), &[(t(8), f8.clone())]);
    let out = emu(&[
        "run",
        "learning-switch",
        "--in",
        &format!("0={}", d.s("p0.pcap")),
        "--in",
        &format!("1={}", d.s("p1.pcap")),
        "--in",
        &format!("2={}", d.s("p2.pcap")),
        "--in",
        &format!("3={}", d.s("p3.pcap")),
        "--out",
        &d.s("out"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let expected: [Vec<&Vec<u8>>; 4] =
        [vec![&f2, &f4, &f6, &f7], vec![&f1, &f3, &f4, &f7], vec![&f1, &f8], vec![&f1, &f4, &f7, &f9]];
    for (port, want) in expected.iter().enumerate() {
        let path = d.p(&format!("out/port{port}.pcap"));
        let got = read_pcap(&path);
        let want: Vec<Vec<u8>> = want.iter().map(|f| (*f).clone()).collect();
        assert_eq!(got, want, "port {port}");
        assert_eq!(tcpdump_count(&path), want.len(), "tcpdump reads port{port}.pcap");
    }
    let drops = std::fs::read_to_string(d.p("out/drops.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = drops.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1, "{drops}");
    assert_eq!(lines[0]["index"], 4);
    assert_eq!(lines[0]["port"], 0);
    assert_eq!(lines[0]["reason"], "same_port");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("9 frames in, 14 frames out, 1 dropped"), "{stdout}");
}

fn echo_request(dst: Ipv4Addr, seq: u16) -> Vec<u8> {
    let ip = craft::icmp_echo(Ipv4Addr::new(10, 0, 0, 2), dst, true, 0x77, seq, &[0xab; 56]);
    craft::ethernet(mac(1), mac(2), 0x0800, &ip)
}

#[test]
fn icmp_echo_replies_decode_cleanly_in_tshark() {
    let d = Dir::new();
    let me = Ipv4Addr::new(10, 0, 0, 1);
    let mut bad = echo_request(me, 3);
    let n = bad.len();
    bad[n - 1] ^= 0xff; // ICMP checksum no longer verifies
    let frames = vec![
        (1_000, echo_request(me, 1)),
        (2_000, echo_request(me, 2)),
        (3_000, bad),
        (4_000, echo_request(Ipv4Addr::new(10, 0, 0, 9), 4)),
    ];
    write_pcap(&d.p("ping.pcap"), &frames);
    let out = emu(&[
        "run",
        "icmp-echo",
        "--ip",
        "10.0.0.1",
        "--in",
        &format!("0={}", d.s("ping.pcap")),
        "--out",
        &d.s("out"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let replies = read_pcap(&d.p("out/port0.pcap"));
    assert_eq!(replies.len(), 2);
    let drops = std::fs::read_to_string(d.p("out/drops.jsonl")).unwrap();
    assert!(drops.contains(r#""index":2,"port":0,"reason":"icmp_checksum""#), "{drops}");
    assert!(drops.contains(r#""index":3,"port":0,"reason":"not_for_us""#), "{drops}");

    let tshark = Command::new("tshark")
        .args(["-n", "-V", "-o", "ip.check_checksum:TRUE", "-r"])
        .arg(d.p("out/port0.pcap"))
        .output()
        .expect("tshark is installed by scripts/setup.sh");
    let decoded = text(&tshark.stdout);
    assert!(tshark.status.success(), "{}", text(&tshark.stderr));
    assert_eq!(decoded.matches("Type: 0 (Echo (ping) reply)").count(), 2, "{decoded}");
    assert_eq!(decoded.matches("[Header checksum status: Good]").count(), 2, "{decoded}");
    assert_eq!(decoded.matches("[Checksum Status: Good]").count(), 2, "{decoded}");
    assert!(!decoded.contains("Bad") && !decoded.contains("incorrect"), "{decoded}");
    assert!(decoded.contains("Src: 10.0.0.1, Dst: 10.0.0.2"), "{decoded}");
}

#[test]
fn malformed_frames_are_dropped_and_counted_never_a_panic() {
    let d = Dir::new();
    let good = frame(Mac::BROADCAST, 1, 1);
    let mut ihl4 = craft::ethernet(
        mac(2),
        mac(1),
        0x0800,
        &craft::udp(Ipv4Addr::new(1, 1, 1, 1), 1, Ipv4Addr::new(2, 2, 2, 2), 2, b"x"),
    );
    ihl4[14] = 0x44;
    let mut long_total = craft::ethernet(
        mac(2),
        mac(1),
        0x0800,
        &craft::udp(Ipv4Addr::new(1, 1, 1, 1), 1, Ipv4Addr::new(2, 2, 2, 2), 2, b"x"),
    );
    long_total[16..18].copy_from_slice(&1000u16.to_be_bytes());
    let records: Vec<Record> = vec![
        (1, vec![], 0),                       // zero-length record
        (2, vec![0xff; 10], 10),              // runt
        (3, ihl4, 60),                        // IHL < 5
        (4, long_total, 60),                  // total length past the frame
        (5, good.clone(), good.len() as u32), // fine: floods
        (6, vec![0xff; 2000], 2000),          // oversize
        (7, good[..40].to_vec(), 60),         // snapped by the capture
    ];
    let mut records = records;
    for r in records.iter_mut().filter(|r| r.0 == 3 || r.0 == 4) {
        r.2 = r.1.len() as u32;
    }
    write_pcap_linktype(&d.p("bad.pcap"), 1, &records);
    let out = emu(&["run", "learning-switch", "--in", &d.s("bad.pcap"), "--out", &d.s("out")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let drops = std::fs::read_to_string(d.p("out/drops.jsonl")).unwrap();
    let got: Vec<(u64, String)> = drops
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["index"].as_u64().unwrap(), v["reason"].as_str().unwrap().to_string())
        })
        .collect();
    let want: Vec<(u64, String)> = [
        (0, "empty"),
        (1, "runt"),
        (2, "ipv4_header_length"),
        (3, "ipv4_total_length"),
        (5, "oversize"),
        (6, "snapped"),
    ]
    .iter()
    .map(|(i, r)| (*i, r.to_string()))
    .collect();
    assert_eq!(got, want);
    assert_eq!(read_pcap(&d.p("out/port1.pcap")), vec![good]);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.p("out/summary.json")).unwrap()).unwrap();
    assert_eq!(summary["stats"]["drops"]["runt"], 1);
    assert_eq!(summary["stats"]["ports"][0]["dropped"], 6);
}

#[test]
fn truncated_capture_is_an_error_that_says_how_far_it_read() {
    let d = Dir::new();
    let frames: Vec<(u64, Vec<u8>)> = (0..5).map(|i| (i * 10, frame(Mac::BROADCAST, 1, i as u8))).collect();
    write_pcap(&d.p("full.pcap"), &frames);
    let bytes = std::fs::read(d.p("full.pcap")).unwrap();
    // 24-byte file header, then 16 + 60 bytes per record: cut record 4 in half.
    let cut = 24 + 3 * 76 + 40;
    std::fs::write(d.p("cut.pcap"), &bytes[..cut]).unwrap();
    let out = emu(&["run", "learning-switch", "--in", &d.s("cut.pcap"), "--out", &d.s("out")]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("truncated") && err.contains("record 4 after 3 whole records (252 bytes read)"), "{err}");
    // What was read before the cut was processed and written.
    assert_eq!(read_pcap(&d.p("out/port1.pcap")).len(), 3);
    assert_eq!(tcpdump_count(&d.p("out/port1.pcap")), 3);
}

#[test]
fn bad_files_get_clear_errors() {
    let d = Dir::new();
    std::fs::write(d.p("notes.txt"), "hello, this is not a capture\n").unwrap();
    let out = emu(&["run", "learning-switch", "--in", &d.s("notes.txt"), "--out", &d.s("o1")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("not a pcap or pcapng file (it starts with 68 65 6c 6c)"),
        "{}",
        text(&out.stderr)
    );

    std::fs::write(d.p("empty.pcap"), "").unwrap();
    let out = emu(&["run", "learning-switch", "--in", &d.s("empty.pcap"), "--out", &d.s("o2")]);
    assert!(text(&out.stderr).contains("the file is empty"), "{}", text(&out.stderr));

    write_pcap_linktype(&d.p("raw.pcap"), 113, &[(1, vec![0x45; 20], 20)]);
    let out = emu(&["run", "learning-switch", "--in", &d.s("raw.pcap"), "--out", &d.s("o3")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("is not Ethernet"), "{}", text(&out.stderr));

    let out = emu(&["run", "learning-switch", "--in", &d.s("missing.pcap"), "--out", &d.s("o4")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("missing.pcap: no such file"), "{}", text(&out.stderr));
}

#[test]
fn bad_arguments_get_clear_errors() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "no-such-nf", "--in", "x.pcap", "--out", "o"],
            "unknown network function `no-such-nf`; known: learning-switch, icmp-echo",
        ),
        (&["run", "learning-switch"], "nothing to run learning-switch on"),
        (&["run", "learning-switch", "--in", "x.pcap"], "--out DIR is required"),
        (
            &["run", "learning-switch", "--in", "x.pcap", "--out", "o", "--ports", "0"],
            "--ports 0: give a number of ports from 1 to 32",
        ),
        (
            &["run", "icmp-echo", "--ip", "banana", "--in", "x.pcap", "--out", "o"],
            "--ip banana: `banana` is not an IPv4 address",
        ),
        (
            &["sim", "learning-switch", "--target", "cpu,cycle", "--width", "128", "--in", "x.pcap", "--out", "o"],
            "give --width 64 or --width 256",
        ),
        (
            &["sim", "learning-switch", "--target", "gpu", "--in", "x.pcap", "--out", "o"],
            "unknown tier `gpu`; tiers are cpu, ir, cycle, verilator",
        ),
        (
            &["sim", "learning-switch", "--back-to-back", "--in", "x.pcap", "--out", "o"],
            "add cycle or verilator to --target",
        ),
        (&["hls", "learning-switch", "--clock-mhz", "fast", "-o", "o"], "give the frequency in MHz"),
        (
            &["sim", "learning-switch", "--target", "verilator", "--debug-socket", "s.sock"],
            "give the traffic with --in FILE",
        ),
    ];
    for (args, msg) in cases {
        let out = emu(args);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert!(text(&out.stderr).contains(msg), "{args:?}: {}", text(&out.stderr));
    }
    // A port number past the NF's ports is caught when the frame arrives.
    let d = Dir::new();
    write_pcap(&d.p("a.pcap"), &[(1, frame(Mac::BROADCAST, 1, 1))]);
    let out = emu(&["run", "learning-switch", "--in", &format!("6={}", d.s("a.pcap")), "--out", &d.s("o")]);
    assert!(
        text(&out.stderr).contains("arrived on port 6, but the NF runs with 4 ports (0..3); give --ports 7"),
        "{}",
        text(&out.stderr)
    );
}

fn example() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/examples/mixed.pcapng").to_string()
}

#[test]
fn example_pcapng_interface_ids_are_ports() {
    let d = Dir::new();
    let out = emu(&["run", "learning-switch", "--in", &example(), "--out", &d.s("out"), "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rx: Vec<u64> =
        summary["stats"]["ports"].as_array().unwrap().iter().map(|p| p["rx_packets"].as_u64().unwrap()).collect();
    assert_eq!(rx, [5, 3, 3, 6]);
    assert_eq!(summary["stats"]["drops"]["same_port"], 1);
    for port in 0..4 {
        let path = d.p(&format!("out/port{port}.pcap"));
        assert_eq!(tcpdump_count(&path), read_pcap(&path).len());
    }
}

#[test]
fn sim_cpu_tier_writes_per_tier_outputs_equal_to_run() {
    let d = Dir::new();
    let run = emu(&["run", "learning-switch", "--in", &example(), "--out", &d.s("run")]);
    let sim = emu(&["sim", "learning-switch", "--target", "cpu", "--in", &example(), "--out", &d.s("sim")]);
    assert!(run.status.success() && sim.status.success(), "{}", text(&sim.stderr));
    for port in 0..4 {
        let a = read_pcap(&d.p(&format!("run/port{port}.pcap")));
        let b = read_pcap(&d.p(&format!("sim/cpu/port{port}.pcap")));
        assert_eq!(a, b, "port {port}");
    }
}

/// `--back-to-back` replays the hardware tier's frames back to back: fewer cycles per frame than
/// fed one at a time (each waits for the one before to leave), never fewer than a frame's beat
/// and handoff, and the same outcomes (or the run fails).
#[test]
fn sim_back_to_back_gives_the_interval_on_the_traffic() {
    let d = Dir::new();
    let args = ["sim", "learning-switch", "--target", "cpu,cycle", "--back-to-back", "--json", "--in"];
    let out = emu(&[&args[..], &[&example(), "--out", &d.s("sim")]].concat());
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let line =
        stdout.lines().find(|l| l.contains("\"tier\":\"cycle\"") && l.contains("latency_cycles")).expect(&stdout);
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    let (one, b2b) = (v["cycles_per_frame"].as_f64().unwrap(), v["back_to_back_cycles_per_frame"].as_f64().unwrap());
    assert!(b2b < one && b2b >= 2.0, "back to back {b2b}, one at a time {one}: {line}");
    let table = emu(&[&args[..5], &["--in", &example(), "--out", &d.s("sim2")]].concat());
    assert!(text(&table.stdout).contains("back to back"), "{}", text(&table.stdout));
}

#[test]
fn list_and_help() {
    let out = emu(&["list"]);
    let s = text(&out.stdout);
    assert!(s.contains("learning-switch") && s.contains("icmp-echo") && s.contains("--ip VALUE"), "{s}");
    for verb in ["run", "sim", "new", "list"] {
        let out = emu(&[verb, "--help"]);
        assert!(out.status.success());
        assert!(text(&out.stdout).contains("emu "), "{verb} --help has an example");
    }
    let out = emu(&["run", "icmp-echo", "--help"]);
    assert!(text(&out.stdout).contains("--ip <VALUE>"), "the NF's own options show in help");
}

#[test]
fn sim_cpu_ir_and_cycle_tiers_agree_on_both_nfs() {
    let d = Dir::new();
    // The example traffic plus malformed and addressed frames, for both NFs.
    let me = Ipv4Addr::new(10, 0, 0, 1);
    let mut bad = echo_request(me, 9);
    let n = bad.len();
    bad[n - 1] ^= 0x55;
    write_pcap(
        &d.p("extra.pcap"),
        &[(1, echo_request(me, 1)), (2, bad), (3, vec![0xff; 10]), (4, frame(Mac::BROADCAST, 7, 7))],
    );
    for (nf, opts) in [("learning-switch", vec![]), ("icmp-echo", vec!["--ip", "10.0.0.1"])] {
        for (input, width) in [(example(), "256"), (format!("1={}", d.s("extra.pcap")), "64")] {
            let out_dir = d.s(&format!("sim-{nf}"));
            let mut args = vec!["sim", nf, "--target", "cpu,ir,cycle", "--width", width, "--in", input.as_str()];
            args.extend(["--out", out_dir.as_str()]);
            args.extend(opts.iter().copied());
            let out = emu(&args);
            let stdout = text(&out.stdout);
            assert!(out.status.success(), "{nf} on {input}: {stdout}\n{}", text(&out.stderr));
            assert!(stdout.contains("cpu and ir agree"), "{stdout}");
            assert!(stdout.contains("cpu and cycle agree"), "{stdout}");
            assert!(stdout.contains("tier cycle:") && stdout.contains("latency    min"), "{stdout}");
        }
    }
}

/// The verilator tier on the committed example: the same frames and drops as the CPU, the
/// latency table, a model built once and then taken from the cache, and a waveform.
#[test]
fn sim_verilator_tier_agrees_caches_its_model_and_writes_a_waveform() {
    let d = Dir::new();
    let cache = d.s("cache");
    let env = [("EMU_CACHE_DIR", cache.as_str())];
    let args = |out: &str| {
        vec![
            "sim".to_string(),
            "learning-switch".into(),
            "--target".into(),
            "cpu,verilator".into(),
            "--in".into(),
            example(),
            "--out".into(),
            d.s(out),
        ]
    };
    let run = |extra: &[&str], out: &str| {
        let mut a = args(out);
        a.extend(extra.iter().map(|s| s.to_string()));
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = emu_env(&a, &env);
        let stdout = text(&o.stdout);
        assert!(o.status.success(), "{stdout}\n{}", text(&o.stderr));
        stdout
    };
    let first = run(&[], "o1");
    assert!(first.contains("verilator model built"), "{first}");
    assert!(first.contains("cpu and verilator agree: 24 frames out on 4 ports, 1 drops"), "{first}");
    assert!(first.contains("tier verilator: 17 frames at 200 MHz") && first.contains("latency    min"), "{first}");
    let second = run(&[], "o2");
    assert!(second.contains("verilator model from the cache"), "the second run rebuilt the model:\n{second}");
    let vcd = d.s("ls.vcd");
    run(&["--vcd", &vcd], "o3");
    let wave = std::fs::read_to_string(&vcd).unwrap();
    assert!(wave.contains("$enddefinitions") && wave.contains("fsm_q") && wave.contains("m_axis_tvalid"));
    // Only frames 2 and 3: the same signals, fewer time steps.
    let part = d.s("part.vcd");
    run(&["--vcd", &part, "--vcd-frames", "2..4"], "o4");
    let some = std::fs::read_to_string(&part).unwrap();
    let steps = |w: &str| w.lines().filter(|l| l.starts_with('#')).count();
    assert!(
        some.contains("fsm_q") && steps(&some) > 10 && steps(&some) < steps(&wave) / 2,
        "{} of {}",
        steps(&some),
        steps(&wave)
    );
}

/// Frames the ingress refuses (too long for the configured maximum, runts) are dropped with
/// the same reasons by every tier; a capture that is not Ethernet is an error, for every tier.
#[test]
fn sim_bad_input_is_handled_alike_by_every_tier() {
    let d = Dir::new();
    let mut long = frame(Mac::BROADCAST, 1, 1);
    long.resize(1200, 0x5a);
    let frames = [(1, frame(Mac::BROADCAST, 1, 1)), (2, long), (3, vec![0xff; 10]), (4, frame(mac(1), 2, 2))];
    write_pcap(&d.p("bad.pcap"), &frames);
    let out = d.s("o");
    let o = emu(&[
        "sim",
        "learning-switch",
        "--target",
        "cpu,ir,cycle,verilator",
        "--max-frame",
        "1000",
        "--in",
        &d.s("bad.pcap"),
        "--out",
        &out,
    ]);
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", text(&o.stderr));
    for tier in ["ir", "cycle", "verilator"] {
        assert!(stdout.contains(&format!("cpu and {tier} agree: 3 frames out on 4 ports, 3 drops")), "{stdout}");
        let drops = std::fs::read_to_string(d.p(&format!("o/{tier}/drops.jsonl"))).unwrap();
        assert!(drops.contains("\"oversize\"") && drops.contains("\"runt\""), "{drops}");
    }
    write_pcap_linktype(&d.p("raw.pcap"), 113, &[(1, vec![0x45; 20], 20)]);
    for tier in ["cycle", "verilator"] {
        let o = emu(&[
            "sim",
            "learning-switch",
            "--target",
            &format!("cpu,{tier}"),
            "--in",
            &d.s("raw.pcap"),
            "--out",
            &out,
        ]);
        assert!(!o.status.success());
        assert!(text(&o.stderr).contains("link type"), "{}", text(&o.stderr));
    }
}

/// `tool args…`, which must succeed (the tools are installed by scripts/setup.sh).
fn tool(name: &str, args: &[&str]) -> String {
    let out =
        Command::new(name).args(args).output().unwrap_or_else(|e| panic!("{name}: {e} (scripts/setup.sh installs it)"));
    assert!(out.status.success(), "{name} {args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// Each frame of a capture as tshark decodes it: time, length on the wire, bytes captured, source.
fn tshark_frames(path: &Path) -> Vec<String> {
    let fields = ["-T", "fields", "-e", "frame.time_epoch", "-e", "frame.len", "-e", "frame.cap_len", "-e", "eth.src"];
    let args: Vec<&str> = ["-r", path.to_str().unwrap()].into_iter().chain(fields).collect();
    tool("tshark", &args).lines().map(str::to_string).collect()
}

/// Classic pcaps as tcpdump (microseconds) and editcap (nanoseconds, and cut by a snap length)
/// write them are read alike, and what emu writes, tshark reads back with the input's times
/// and bytes.
#[test]
fn pcaps_written_by_tcpdump_and_editcap_read_as_libpcap_reads_them() {
    let d = Dir::new();
    tool("tcpdump", &["-r", &example(), "-w", &d.s("us.pcap")]);
    tool("editcap", &["-F", "nsecpcap", &d.s("us.pcap"), &d.s("ns.pcap")]);
    tool("editcap", &["-s", "20", &d.s("us.pcap"), &d.s("cut.pcap")]);
    assert_eq!(std::fs::read(d.p("us.pcap")).unwrap()[..4], [0xd4, 0xc3, 0xb2, 0xa1], "a microsecond pcap");
    assert_eq!(std::fs::read(d.p("ns.pcap")).unwrap()[..4], [0x4d, 0x3c, 0xb2, 0xa1], "a nanosecond pcap");
    let input = tshark_frames(&d.p("us.pcap"));
    assert_eq!(input.len(), 17);
    let mut tx = 0;
    for name in ["us", "ns"] {
        let out = d.s(&format!("out-{name}"));
        let input = format!("0={}", d.s(&format!("{name}.pcap")));
        let o = emu(&["run", "learning-switch", "--in", &input, "--out", &out, "--json"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let ports = summary["stats"]["ports"].as_array().unwrap();
        let count = |key: &str| ports.iter().map(|p| p[key].as_u64().unwrap()).sum::<u64>();
        assert_eq!(count("rx_packets"), 17, "{summary}");
        tx = count("tx_packets");
    }
    let mut sent = 0;
    for port in 0..4 {
        let (us, ns) = (d.p(&format!("out-us/port{port}.pcap")), d.p(&format!("out-ns/port{port}.pcap")));
        assert_eq!(std::fs::read(&us).unwrap(), std::fs::read(&ns).unwrap(), "port {port}: the same run either way");
        let frames = tshark_frames(&us);
        for f in &frames {
            assert!(input.contains(f), "port {port}: {f} is not an input frame (time, length or bytes changed)");
        }
        assert_eq!(tcpdump_count(&us), frames.len());
        sent += frames.len();
    }
    // Every host is on port 0 here, so most unicast is dropped as same_port; floods go out.
    assert!(sent > 0 && sent as u64 == tx, "tshark reads {sent} frames, emu sent {tx}");
    // Cut to 20 bytes by the snap length: every frame is counted as snapped, none is sent.
    let o =
        emu(&["run", "learning-switch", "--in", &format!("0={}", d.s("cut.pcap")), "--out", &d.s("out-cut"), "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["stats"]["drops"]["snapped"], 17, "{summary}");
    let drops = std::fs::read_to_string(d.p("out-cut/drops.jsonl")).unwrap();
    assert_eq!(drops.lines().filter(|l| l.contains("\"snapped\"")).count(), 17, "{drops}");
}

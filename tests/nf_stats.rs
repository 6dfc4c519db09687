//! stats end to end: the simulator tiers agree frame by frame on generated traffic (many flows,
//! so sets of the flow table fill and evict; tags, options, fragments, damaged and non-IPv4
//! frames) and, for cpu, ir and cycle, on every counter and flow-table entry at the end;
//! `emu run` prints the summary and keeps it in summary.json; `emu hls` and yosys synth_xilinx
//! take it; and in Mininet, the counts of real traffic (ping, UDP datagrams, a TCP
//! connection) match what the hosts sent.

mod nf_common;

use emu::craft::{self, TcpFlags, TcpSegment};
use emu::{Config, Ipv4Addr, Mac, Meta, NetworkFunction, Packet};
use emu_hls::backend::model::{CycleModel, Driver, Pacing};
use emu_hls::backend::Design;
use emu_hls::interp::State;
use emu_sim::ir_tier::IrNf;
use nf_common::{assert_agree, emu, histogram, outcomes, text, write_pcapng, Rng};
use proptest::prelude::*;
use stats::{Stats, CLASSES, SIZE_BUCKETS};
use std::process::Command;

fn host(k: u8) -> (Mac, Ipv4Addr, u8) {
    (Mac::from_bytes([2, 0, 0, 0, 0, 0x10 + k]), Ipv4Addr::new(10, 0, 0, 10 + k), k % 4)
}

fn fill_ipv4_checksum(ip: &mut [u8]) {
    let hlen = (ip[0] & 0xf) as usize * 4;
    let mut h = ip[..hlen].to_vec();
    emu::wire::ipv4::Header::new_unchecked(&mut h[..]).fill_checksum();
    ip[..hlen].copy_from_slice(&h);
}

/// Traffic among six hosts on four ports: TCP, UDP, SCTP, ICMP and GRE of every size bucket,
/// flows that repeat and flows that are new (more than the table's sets hold, so sets fill
/// and evict), under 0–3 VLAN tags, with IPv4 options, fragments, wrong header checksums and
/// ports cut short; ARP, IPv6, LLDP, group destinations, random bytes and runts.
fn traffic(seed: u64, n: usize) -> Vec<(Vec<u8>, u8)> {
    let mut rng = Rng(seed | 1);
    let mut out = vec![];
    for _ in 0..n {
        let (smac, sip, sport_no) = host(rng.below(6) as u8);
        let (dmac, dip, _) = host(rng.below(6) as u8);
        let dmac = match rng.below(12) {
            0 => Mac::BROADCAST,
            1 => Mac::from_bytes([0x01, 0, 0x5e, 0, 0, 1]),
            _ => dmac,
        };
        let payload_len = match rng.below(4) {
            0 => rng.pick(&[0usize, 1, 10, 22, 23, 85, 86, 214, 470, 982, 1000, 1476, 1477]),
            _ => rng.below(1490) as usize,
        };
        let payload = rng.bytes(payload_len);
        let (sport, dport) = if rng.below(2) == 0 {
            (rng.pick(&[1000u16, 2000, 40000]), rng.pick(&[53u16, 80, 443]))
        } else {
            (rng.next() as u16, rng.next() as u16)
        };
        let frame = match rng.below(16) {
            0..=9 => {
                let mut ip = match rng.below(6) {
                    0 | 1 => {
                        let seg = TcpSegment {
                            src_port: sport,
                            dst_port: dport,
                            flags: TcpFlags { ack: true, ..Default::default() },
                            ..Default::default()
                        };
                        craft::tcp(sip, dip, seg, &payload)
                    }
                    2 | 3 => craft::udp(sip, sport, dip, dport, &payload),
                    4 => craft::icmp_echo(sip, dip, true, sport, 1, &payload),
                    _ => {
                        let mut p = sport.to_be_bytes().to_vec();
                        p.extend_from_slice(&dport.to_be_bytes());
                        p.extend_from_slice(&payload);
                        craft::ipv4(sip, dip, rng.pick(&[132, 47, 136]), &p)
                    }
                };
                match rng.below(10) {
                    0 => {
                        // Options: IHL 6 to 15, NOPs.
                        let words = 1 + rng.below(10) as usize;
                        let mut o = vec![0x45 + words as u8];
                        o.extend_from_slice(&ip[1..20]);
                        o.extend(std::iter::repeat(1).take(words * 4));
                        o.extend_from_slice(&ip[20..]);
                        ip = o;
                    }
                    1 => ip[6] |= 0x20,                           // first fragment
                    2 => ip[7] = 1 + rng.below(200) as u8,        // a later fragment
                    3 => ip.truncate(20 + rng.below(4) as usize), // ports cut short
                    _ => {}
                }
                if ip.len() > 1500 {
                    ip.truncate(1500);
                }
                let total = (ip.len() as u16).to_be_bytes();
                ip[2..4].copy_from_slice(&total);
                fill_ipv4_checksum(&mut ip);
                if rng.below(15) == 0 {
                    ip[10] ^= 0x40; // a wrong header checksum
                }
                let tags = rng.pick(&[0usize, 0, 0, 0, 1, 2, 3]);
                let mut f = craft::ethernet(dmac, smac, 0x0800, &ip);
                for t in 0..tags {
                    f.splice(12..12, [0x81, 0x00, 0x00, t as u8 + 1]);
                }
                f
            }
            10 => {
                let oper = rng.pick(&[1, 2]);
                craft::ethernet(Mac::BROADCAST, smac, 0x0806, &craft::arp(oper, smac, sip, dmac, dip))
            }
            11 => craft::ethernet(dmac, smac, 0x86dd, &payload),
            12 => craft::ethernet(dmac, smac, 0x88cc, &payload[..payload.len().min(100)]),
            13 => {
                // An IPv4 header the ingress checks drop: IHL 4, or a length past the frame.
                let mut ip = craft::udp(sip, 1, dip, 2, &payload[..payload.len().min(40)]);
                if rng.below(2) == 0 {
                    ip[0] = 0x44;
                } else {
                    ip[2] = 0x40;
                }
                craft::ethernet(dmac, smac, 0x0800, &ip)
            }
            _ => {
                let len = rng.below(80) as usize;
                rng.bytes(len)
            }
        };
        out.push((frame, sport_no));
    }
    out
}

/// The CPU's run of the frames, as the runner does it: the ingress checks, then the NF.
fn cpu_run(frames: &[(Vec<u8>, u8)]) -> Stats {
    let mut nf = Stats::new();
    for (f, p) in frames {
        if emu::check_frame(f, 1518).is_ok() {
            let mut g = f.clone();
            let meta = Meta { in_port: *p, len: g.len() as u16, timestamp: 0 };
            nf.process(&mut Packet::new(&mut g, stats::WINDOW), &meta);
        }
    }
    nf
}

/// Every counter, array element and flow-table entry (in its slot) of `tier`'s state is the
/// CPU's.
fn assert_same_state(cpu: &Stats, tier: &str, st: &State) {
    for (name, c) in [
        ("packets", &cpu.packets),
        ("bytes", &cpu.bytes),
        ("evictions", &cpu.evictions),
        ("evicted_packets", &cpu.evicted_packets),
        ("evicted_bytes", &cpu.evicted_bytes),
        ("floods", &cpu.floods),
    ] {
        assert_eq!(st.counter(name), Some(c.get()), "{tier}: counter {name}");
    }
    for i in 0..SIZE_BUCKETS {
        assert_eq!(st.array_get("sizes", i).map(|v| v.to_u128()), Some(cpu.sizes.get(i) as u128), "{tier}: sizes[{i}]");
    }
    for i in 0..CLASSES {
        assert_eq!(st.array_get("classes", i).map(|v| v.to_u128()), Some(cpu.classes.get(i)), "{tier}: classes[{i}]");
    }
    let want: Vec<(usize, u128, u128)> = cpu.flows.entries().collect();
    let got: Vec<(usize, u128, u128)> = st
        .hash_table_entries("flows")
        .expect("a flows table")
        .into_iter()
        .map(|(slot, k, v)| (slot, k.to_u128(), v.to_u128()))
        .collect();
    assert_eq!(got.len(), want.len(), "{tier}: flows held");
    assert!(got == want, "{tier}: the flow table differs from the CPU's");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// cpu and ir on many seeds, outputs and the final state; the hardware tiers below on a
    /// longer run.
    #[test]
    fn cpu_and_ir_agree_on_generated_traffic(seed in any::<u64>()) {
        let frames = traffic(seed, 200);
        let config = Config::new();
        assert_agree(&stats::DESCRIPTOR, &frames, &outcomes(&stats::DESCRIPTOR, &config, &["ir"], &frames));
        let mut ir = IrNf::build(&stats::DESCRIPTOR, &config).unwrap();
        for (f, p) in &frames {
            if emu::check_frame(f, 1518).is_ok() {
                let mut g = f.clone();
                let meta = Meta { in_port: *p, len: g.len() as u16, timestamp: 0 };
                ir.process(&mut Packet::new(&mut g, stats::WINDOW), &meta);
            }
        }
        assert_eq!(ir.errors, 0, "{:?}", ir.first_error);
        assert_same_state(&cpu_run(&frames), "ir", ir.state());
    }
}

/// Every tier, the hardware ones included, frame by frame; and the cycle model's counters
/// and flow table at the end are the CPU's, evictions included.
#[test]
fn every_tier_agrees_and_the_cycle_model_counts_the_same() {
    let frames = traffic(0x57a7_2024, 700);
    let config = Config::new();
    let tiers = outcomes(&stats::DESCRIPTOR, &config, &["ir", "cycle", "verilator"], &frames);
    assert_agree(&stats::DESCRIPTOR, &frames, &tiers);
    let h = histogram(&tiers[0].1);
    for k in ["sent 0b1", "same_port", "ipv4_header_length", "ipv4_total_length", "runt"] {
        assert!(h.keys().any(|x| x.starts_with(k)), "no `{k}` in {h:?}");
    }
    let design = Design::from_descriptor(&stats::DESCRIPTOR, &config, 64, 1518).unwrap();
    let mut cycle = Driver::new(CycleModel::new(&design), 8, Pacing::FULL);
    cycle.run(&frames).expect("the cycle model hung");
    let cpu = cpu_run(&frames);
    assert_same_state(&cpu, "cycle", cycle.hw.state());
    // The traffic reaches every counter: evictions, every class, every size bucket.
    assert!(cpu.evictions.get() > 20, "{} evictions", cpu.evictions.get());
    for i in 0..CLASSES {
        assert!(cpu.classes.get(i) >> 64 > 0, "class {i} empty");
    }
    for i in 0..SIZE_BUCKETS - 1 {
        assert!(cpu.sizes.get(i) > 0, "size bucket {i} empty");
    }
    eprintln!("{h:?}\n{}", cpu.report(Some(5)));
}

/// The number after `key` on the summary line that starts with `label`.
fn field(summary: &str, label: &str, key: &str) -> u64 {
    let line = summary
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no line `{label}` in:\n{summary}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == key).unwrap_or_else(|| panic!("no `{key}` in `{line}`"));
    words[at + 1].parse().unwrap_or_else(|_| panic!("`{key}` is not a number in `{line}`"))
}

/// `emu run` prints the summary after the runner's counters and keeps it in summary.json;
/// `--top` limits the flows it lists; `emu sim`'s tiers agree on the same capture.
#[test]
fn emu_run_prints_the_summary_and_emu_sim_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.pcapng");
    let frames = traffic(7, 300);
    write_pcapng(&input, &frames);
    let out = dir.path().join("out");
    let (i, o) = (input.to_str().unwrap(), out.to_str().unwrap());
    let r = emu(&["run", "stats", "--top", "3", "--in", i, "--out", o]);
    assert!(r.status.success(), "{}\n{}", text(&r.stdout), text(&r.stderr));
    let stdout = text(&r.stdout);
    let cpu = cpu_run(&frames);
    assert_eq!(field(&stdout, "stats: total", "packets"), cpu.packets.get());
    assert_eq!(field(&stdout, "stats: total", "bytes"), cpu.bytes.get());
    assert_eq!(field(&stdout, "evicted", "packets"), cpu.evicted_packets.get());
    assert_eq!(field(&stdout, "size 1024-1518", "packets"), cpu.sizes.get(6));
    assert_eq!(stdout.lines().filter(|l| l.trim_start().starts_with("flow ")).count(), 3, "{stdout}");
    let top = cpu.flows_by_bytes()[0];
    let first = format!("flow {}", stdout.split("  flow ").nth(1).unwrap().lines().next().unwrap());
    assert!(first.contains(&format!("{}:{} > {}:{}", top.src, top.sport, top.dst, top.dport)), "{first}");
    assert_eq!(field(&first, "flow", "bytes"), top.bytes);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(json["nf_summary"].as_str().unwrap(), cpu.report(Some(3)));

    let r = emu(&["run", "stats", "--top", "lots", "--in", i, "--out", o]);
    assert!(text(&r.stderr).contains("--top lots: `lots` is not a number of flows; write e.g. 20, or all"));

    let s = dir.path().join("sim");
    let r = emu(&["sim", "stats", "--target", "cpu,ir,cycle", "--in", i, "--out", s.to_str().unwrap()]);
    assert!(r.status.success(), "{}\n{}", text(&r.stdout), text(&r.stderr));
    for t in ["ir", "cycle"] {
        assert!(text(&r.stdout).contains(&format!("cpu and {t} agree")), "{}", text(&r.stdout));
    }
}

/// `emu hls` builds it and reports its cycles and memories; yosys synth_xilinx maps it.
#[test]
fn hls_and_synth_xilinx() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("hls");
    let r = emu(&["hls", "stats", "--width", "64", "-o", o.to_str().unwrap()]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    let stdout = text(&r.stdout);
    assert!(
        stdout.contains("stats: 64-bit bus, 96-byte window, 4 ports") && stdout.contains("cycles per packet"),
        "{stdout}"
    );
    let report = std::fs::read_to_string(o.join("report.md")).unwrap();
    for m in ["| flows | hash table", "| sizes | array", "| classes | array", "| evicted_bytes | counter"] {
        assert!(report.contains(m), "no `{m}` in the report");
    }
    let symbols = std::fs::read_to_string(o.join("symbols.json")).unwrap();
    for name in ["\"flows\"", "\"sizes\"", "\"classes\"", "\"evictions\"", "\"packets\"", "\"bytes\""] {
        assert!(symbols.contains(name), "no {name} in symbols.json");
    }
    let s = dir.path().join("synth");
    let r = emu(&["synth", "stats", "--width", "64", "-o", s.to_str().unwrap()]);
    assert!(r.status.success(), "{}{}", text(&r.stdout), text(&r.stderr));
    let stdout = text(&r.stdout);
    assert!(stdout.contains("synth_xilinx -family xc7") && stdout.contains("LUT (logic, LUT1-LUT6)"), "{stdout}");
    eprintln!("{stdout}");
}

/// h1 and h2 on the statistics switch (named `st6`, so its ports do not clash with another
/// experiment's `s1`): ping of two sizes, UDP datagrams from real sockets (seven of 400 bytes
/// from one, one of 10 bytes from each of 30 more), a TCP connection with nc. The NF's summary
/// at exit (printed whole after teardown) holds exactly those packets and bytes for the ping and
/// UDP flows, in the right size buckets, the TCP connection both ways, and totals that add up
/// to the frames the runner received.
#[test]
fn counts_real_traffic_in_mininet() {
    let uid = Command::new("id").arg("-u").output().expect("id");
    assert_eq!(text(&uid.stdout).trim(), "0", "the Mininet tests need root (CI runs as root); run them with sudo");
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("two.json");
    std::fs::write(
        &topo,
        r#"{"hosts": [{"name": "h1", "ip": "10.0.0.1/24"}, {"name": "h2", "ip": "10.0.0.2/24"}],
            "switches": ["st6"],
            "links": [["h1", "st6"], ["h2", "st6"]]}"#,
    )
    .unwrap();
    let script = dir.path().join("experiment.txt");
    // UDP: a socket bound to port 40000 sends exactly 7 datagrams of 400 bytes (442-byte
    // frames), then 30 sockets (ports 42000-42029) one of 10 bytes each (52-byte frames): 35
    // flows in all, so the summary with `--top all` is longer than the 40 lines a step's output
    // shows; h2's receiver counts the datagrams.
    std::fs::write(
        &script,
        "\
h2 &: python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((\"10.0.0.2\", 5001)); \
         n = [len(s.recv(2048)) for _ in range(37)]; open(\"$WORK/udp.rx\", \"w\").write(\"%d %d\" % (len(n), sum(n)))'
h2 &: nc -nl 9000 > $WORK/tcp.rx
h1: ping -c 5 -s 1000 -W 2 10.0.0.2
h1: ping -c 3 -s 22 -W 2 10.0.0.2
h1: python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((\"10.0.0.1\", 40000)); \
         [s.sendto(b\"u\" * 400, (\"10.0.0.2\", 5001)) for _ in range(7)]'
h1: python3 -c 'import socket; [s.bind((\"10.0.0.1\", p)) or s.sendto(b\"s\" * 10, (\"10.0.0.2\", 5001)) \
         for p in range(42000, 42030) for s in [socket.socket(socket.AF_INET, socket.SOCK_DGRAM)]]'
h1: echo hello-stats | nc -nN -w 3 -p 41000 10.0.0.2 9000
sleep 1
h2: cat $WORK/udp.rx $WORK/tcp.rx
",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_emu"))
        .args(["mininet", "stats", "--top", "all", "--topo", topo.to_str().unwrap(), "--run"])
        .arg(&script)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("37 3100") && stdout.contains("hello-stats"), "h2 received it all: {stdout}");
    let at = stdout.find("stats: total").unwrap_or_else(|| panic!("no summary after the run: {stdout}"));
    let summary = &stdout[at..];
    eprintln!("{summary}");
    let flow = |needle: &str| {
        let line =
            summary.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no flow `{needle}` in:\n{summary}"));
        (field(line, "flow", "packets"), field(line, "flow", "bytes"))
    };
    // ping: 1042-byte frames (14 + 20 + 8 + 1000) and 64-byte frames, requests and replies.
    let ping = (5 + 3, 5 * 1042 + 3 * 64);
    assert_eq!(flow("flow icmp 10.0.0.1:0 > 10.0.0.2:0 "), ping);
    assert_eq!(flow("flow icmp 10.0.0.2:0 > 10.0.0.1:0 "), ping);
    assert_eq!(flow("flow udp 10.0.0.1:40000 > 10.0.0.2:5001 "), (7, 7 * 442));
    for port in 42000..42030 {
        assert_eq!(flow(&format!("flow udp 10.0.0.1:{port} > 10.0.0.2:5001 ")), (1, 52), "52-byte frames");
    }
    assert_eq!(field(summary, "stats: top", "top"), 35, "--top all lists every flow");
    let (tcp_out, _) = flow("flow tcp 10.0.0.1:41000 > 10.0.0.2:9000 ");
    let (tcp_back, _) = flow("flow tcp 10.0.0.2:9000 > 10.0.0.1:41000 ");
    assert!(tcp_out >= 4 && tcp_back >= 3, "handshake, data and close: {tcp_out} and {tcp_back}");
    assert_eq!(field(summary, "size 64 ", "packets"), 6, "the 22-byte pings, both ways");
    assert_eq!(field(summary, "size 256-511", "packets"), 7, "the 400-byte UDP datagrams");
    assert!(field(summary, "size <64", "packets") >= 30, "the 10-byte UDP datagrams (and ARP)");
    assert_eq!(field(summary, "size 1024-1518", "packets"), 10, "the 1000-byte pings, both ways");
    assert!(field(summary, "arp", "packets") >= 2, "h1 and h2 asked for each other");
    // The NF saw every frame the runner received (no frame here fails the ingress checks).
    let runner = stdout.lines().find(|l| l.contains("stats: ") && l.contains(" frames in,")).expect("runner totals");
    let received: u64 = runner.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_eq!(received, field(summary, "stats: total", "packets"), "{runner}");
    // The totals add up: the flows (in the table and evicted) and the classes.
    for key in ["packets", "bytes"] {
        let parts: u64 = ["flows", "evicted", "ipv4-malformed", "arp", "ipv6", "other"]
            .iter()
            .map(|label| field(summary, label, key))
            .sum();
        assert_eq!(parts, field(summary, "stats: total", key), "{key}: {summary}");
    }
}

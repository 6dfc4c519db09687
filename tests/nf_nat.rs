//! nat end to end: the simulator tiers agree on generated traffic whose clock runs past the
//! timeouts (so mappings expire, ports return to the pool and are handed out again), `emu
//! sim`, `emu hls` and `emu synth` (yosys synth_xilinx) take it, and in Mininet real clients
//! behind it (curl, nc over TCP and UDP from two hosts at once, ping) reach an outside host
//! that sees only the NAT's address.

mod nf_common;

use emu::craft::{self, TcpFlags, TcpSegment};
use emu::{Action, Config, Ipv4Addr, Mac, Meta, NetworkFunction, Packet};
use emu_hls::backend::model::Outcome;
use nf_common::{assert_agree, emu, histogram, outcomes_timed, text, Rng};
use proptest::prelude::*;
use std::process::Command;

const NAT_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 1]);
const GW_IN: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const OUT: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 1);
const GATEWAY: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 254);
const SERVERS: [Ipv4Addr; 3] =
    [Ipv4Addr::new(203, 0, 113, 2), Ipv4Addr::new(203, 0, 113, 3), Ipv4Addr::new(198, 51, 100, 7)];
const S: u64 = 1_000_000_000;

fn inside(k: u8) -> (Ipv4Addr, Mac, u8) {
    (Ipv4Addr::new(10, 0, 0, 10 + k), Mac::from_bytes([2, 0, 0, 0, 0, 0x10 + k]), k % 3)
}

fn outside_mac(ip: Ipv4Addr) -> Mac {
    Mac::from_bytes([2, 0, 0, 0, 1, ip.octets()[3]])
}

/// A small pool (16 ports) and short timeouts, so a few hundred frames fill the pool, age
/// mappings out and hand their ports out again.
fn config() -> Config {
    let mut c = Config::new();
    c.set("outside-ip", "203.0.113.1/24")
        .set("gateway", "203.0.113.254")
        .set("port-range", "61000-61015")
        .set("udp-timeout", "10")
        .set("tcp-timeout", "20")
        .set("tcp-closing-timeout", "5")
        .set("icmp-timeout", "3");
    c
}

/// Traffic through the NAT, its clock advancing by up to 0.25 s a frame and now and then by
/// 12–25 s (past every timeout). A CPU NAT runs alongside the generator so that replies from
/// outside can name the ports it really handed out (most replies match a mapping; some come
/// from the wrong address or port, or after the mapping expired). Mixed in: ARP both ways,
/// pings to the NAT, frames between inside hosts, and damaged input — bad data offsets, cut
/// headers, UDP lengths, fragments, options, TTL 1, bad IPv4 checksums, IPv6, runts.
fn traffic(seed: u64, n: usize) -> Vec<(Vec<u8>, u8, u64)> {
    let mut rng = Rng(seed | 1);
    let mut shadow = nat::build(&config()).unwrap();
    let mut out: Vec<(Vec<u8>, u8, u64)> = vec![];
    // (protocol, server, server port, NAT port) of packets the shadow sent out.
    let mut open: Vec<(u8, Ipv4Addr, u16, u16)> = vec![];
    let mut t = S;
    let mut push = |f: Vec<u8>, port: u8, t: u64, open: &mut Vec<(u8, Ipv4Addr, u16, u16)>| {
        if emu::check_frame(&f, 1518).is_ok() {
            let mut g = f.clone();
            let meta = Meta { in_port: port, len: g.len() as u16, timestamp: t };
            let a = shadow.process(&mut Packet::new(&mut g, nat::WINDOW), &meta);
            if a == Action::Forward(3) && g.len() > 42 && g[12..14] == [8, 0] {
                let (proto, dst) = (g[23], Ipv4Addr::new(g[30], g[31], g[32], g[33]));
                let (sport, dport) = (u16::from_be_bytes([g[34], g[35]]), u16::from_be_bytes([g[36], g[37]]));
                let entry = if proto == 1 {
                    (1, dst, 0, u16::from_be_bytes([g[38], g[39]]))
                } else {
                    (proto, dst, dport, sport)
                };
                open.retain(|e| *e != entry);
                open.push(entry);
            }
        }
        out.push((f, port, t));
    };
    for (k, who) in [SERVERS[0], SERVERS[1], GATEWAY].into_iter().enumerate() {
        let m = outside_mac(who);
        let ask = craft::ethernet(Mac::BROADCAST, m, 0x0806, &craft::arp(1, m, who, Mac::from_bytes([0; 6]), OUT));
        push(ask, 3, t + k as u64, &mut open);
    }
    for _ in 0..n {
        t += if rng.below(60) == 0 { (12 + rng.below(14)) * S } else { rng.below(S / 4) };
        let (hip, hmac, hport) = inside(rng.below(6) as u8);
        let server = rng.pick(&SERVERS);
        let smac = if server == SERVERS[2] { outside_mac(GATEWAY) } else { outside_mac(server) };
        let flags = match rng.below(6) {
            0 => TcpFlags { syn: true, ..Default::default() },
            1 => TcpFlags { fin: true, ack: true, ..Default::default() },
            2 => TcpFlags { rst: true, ..Default::default() },
            _ => TcpFlags { ack: true, psh: rng.below(2) == 0, ..Default::default() },
        };
        let len = rng.pick(&[0, 5, 100]);
        let data = rng.bytes(len);
        let (frame, port) = match rng.below(20) {
            0..=6 => {
                let sport = rng.pick(&[1000, 1001, 2000, 40000]);
                let dport = rng.pick(&[53, 80, 443]);
                let ip = match rng.below(3) {
                    0 => {
                        let seg = TcpSegment {
                            src_port: sport,
                            dst_port: dport,
                            seq_no: rng.next() as u32,
                            ack_no: 1,
                            flags,
                        };
                        craft::tcp(hip, server, seg, &data)
                    }
                    1 => {
                        let mut p = craft::udp(hip, sport, server, dport, &data);
                        if rng.below(5) == 0 {
                            p[26] = 0; // no UDP checksum
                            p[27] = 0;
                        }
                        p
                    }
                    _ => craft::icmp_echo(hip, server, true, sport, rng.below(100) as u16, &data),
                };
                (craft::ethernet(NAT_MAC, hmac, 0x0800, &ip), hport)
            }
            7..=11 if !open.is_empty() => {
                // Mostly the flows sent out lately: those are the ones still mapped.
                let recent = open.len().saturating_sub(12);
                let (proto, from, sport, nat_port) = open[recent + rng.below((open.len() - recent) as u64) as usize];
                let (from, sport) = match rng.below(8) {
                    0 => (SERVERS[1], sport),
                    1 => (from, sport ^ 1),
                    _ => (from, sport),
                };
                let ip = match proto {
                    6 => {
                        let seg = TcpSegment { src_port: sport, dst_port: nat_port, seq_no: 5, ack_no: 6, flags };
                        craft::tcp(from, OUT, seg, &data)
                    }
                    17 => craft::udp(from, sport, OUT, nat_port, &data),
                    _ => craft::icmp_echo(from, OUT, false, nat_port, 1, &data),
                };
                (craft::ethernet(NAT_MAC, smac, 0x0800, &ip), 3)
            }
            12 => {
                let who = rng.pick(&[SERVERS[0], SERVERS[1], GATEWAY, Ipv4Addr::new(203, 0, 113, 9)]);
                let m = outside_mac(who);
                let oper = rng.pick(&[1, 2]);
                let target = rng.pick(&[OUT, GW_IN]);
                (craft::ethernet(Mac::BROADCAST, m, 0x0806, &craft::arp(oper, m, who, NAT_MAC, target)), 3)
            }
            13 => {
                let other = inside(rng.below(6) as u8).0;
                let target = rng.pick(&[GW_IN, other, OUT]);
                let req = craft::arp(1, hmac, hip, Mac::from_bytes([0; 6]), target);
                (craft::ethernet(Mac::BROADCAST, hmac, 0x0806, &req), hport)
            }
            14 => {
                let (to, port, mac) = if rng.below(2) == 0 { (GW_IN, hport, hmac) } else { (OUT, 3, smac) };
                let from = if port == 3 { server } else { hip };
                (craft::ethernet(NAT_MAC, mac, 0x0800, &craft::icmp_echo(from, to, true, 7, 8, &data)), port)
            }
            15 => {
                let (oip, omac, _) = inside(rng.below(6) as u8);
                (craft::ethernet(omac, hmac, 0x0800, &craft::udp(hip, 9, oip, 9, &data)), hport)
            }
            16 | 17 => {
                let seg = TcpSegment { src_port: 1000, dst_port: 80, flags, ..Default::default() };
                let mut ip = craft::tcp(hip, server, seg, &rng.bytes(12));
                match rng.below(7) {
                    0 => ip[32] = (rng.below(16) as u8) << 4, // data offset
                    1 => ip.truncate(20 + rng.below(20) as usize),
                    2 => ip[10] ^= 0x10, // IPv4 checksum
                    3 => ip[6] |= 0x20,  // more fragments
                    4 => ip[8] = 1,      // TTL 1
                    5 => ip[9] = 17,     // UDP, its length field garbage
                    _ => ip[0] = 0x46,   // IHL 6: options
                }
                if ip.len() < 40 {
                    let total = (ip.len() as u16).to_be_bytes();
                    ip[2..4].copy_from_slice(&total);
                }
                if rng.below(4) != 0 {
                    let mut h = ip[..20].to_vec();
                    emu::wire::ipv4::Header::new_unchecked(&mut h[..]).fill_checksum();
                    ip[..20].copy_from_slice(&h);
                }
                let port = if rng.below(3) == 0 { 3 } else { hport };
                (craft::ethernet(NAT_MAC, hmac, 0x0800, &ip), port)
            }
            18 => (craft::ethernet(NAT_MAC, hmac, 0x86dd, &rng.bytes(50)), rng.pick(&[hport, 3])),
            _ => {
                let len = rng.below(70) as usize;
                (rng.bytes(len), rng.below(4) as u8)
            }
        };
        push(frame, port, t, &mut open);
    }
    out
}

fn untimed(frames: &[(Vec<u8>, u8, u64)]) -> Vec<(Vec<u8>, u8)> {
    frames.iter().map(|(f, p, _)| (f.clone(), *p)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// cpu and ir on many seeds; the hardware tiers below on fewer, longer runs.
    #[test]
    fn cpu_and_ir_agree_on_generated_traffic(seed in any::<u64>()) {
        let frames = traffic(seed, 200);
        let tiers = outcomes_timed(&nat::DESCRIPTOR, &config(), &["ir"], &frames);
        assert_agree(&nat::DESCRIPTOR, &untimed(&frames), &tiers);
    }
}

/// Every tier, the hardware ones included, on traffic that translates both ways, fills the
/// pool, lets mappings expire and reuses their ports.
#[test]
fn every_tier_agrees_as_mappings_come_and_go() {
    let frames = traffic(0x4a7_2024, 500);
    let tiers = outcomes_timed(&nat::DESCRIPTOR, &config(), &["ir", "cycle", "verilator"], &frames);
    assert_agree(&nat::DESCRIPTOR, &untimed(&frames), &tiers);
    let h = histogram(&tiers[0].1);
    for k in ["sent 0b1000", "no_route", "malformed", "unsupported", "ipv4_checksum", "policy", "not_for_us"] {
        assert!(h.contains_key(k), "no `{k}` in {h:?}");
    }
    let inbound = tiers[0]
        .1
        .iter()
        .zip(&frames)
        .filter(|(o, (_, p, _))| *p == 3 && matches!(o, Outcome::Sent(m, _) if *m & 0b111 != 0))
        .count();
    assert!(inbound > 40 && h["sent 0b1000"] > 100, "{inbound} translated inbound; {h:?}");
    // The same frames through a CPU NAT: the pool ran dry, mappings expired and were evicted
    // or swept, and their ports were handed out again.
    let mut n = nat::build(&config()).unwrap();
    for (f, p, t) in &frames {
        if emu::check_frame(f, 1518).is_ok() {
            let mut g = f.clone();
            let meta = Meta { in_port: *p, len: g.len() as u16, timestamp: *t };
            n.process(&mut Packet::new(&mut g, nat::WINDOW), &meta);
        }
    }
    let (made, expired, empty) = (n.allocations.get(), n.expirations.get(), n.pool_empty.get());
    let summary = nat::Reporting(n).summary();
    eprintln!("{h:?}\n{inbound} translated inbound\n{summary}");
    assert!(expired > 10 && empty > 0 && made > 16 + expired / 2, "ports handed out again: {summary}");
}

fn write_pcap(path: &std::path::Path, frames: &[(Vec<u8>, u8, u64)]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut cap = emu_cpu::pcap::PcapWriter::new(file).unwrap();
    for (f, _, t) in frames {
        // Microseconds, as the captures of a real NAT's traffic would be.
        cap.write(*t / 1000 * 1000, f).unwrap();
    }
    cap.flush().unwrap();
}

/// `emu sim` with the inside and outside traffic in one pcap per port, the pcap's time as the
/// NAT's clock: its tiers agree. A missing `--outside-ip` says what to write.
#[test]
fn emu_sim_agrees_on_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let frames = traffic(11, 300);
    let mut ins = vec![];
    for port in 0..4u8 {
        let path = dir.path().join(format!("in{port}.pcap"));
        let mine: Vec<_> = frames.iter().filter(|(_, p, _)| *p == port).cloned().collect();
        write_pcap(&path, &mine);
        ins.push(format!("{port}={}", path.display()));
    }
    let o = dir.path().join("out");
    let mut args =
        vec!["sim", "nat", "--outside-ip", "203.0.113.1/24", "--port-range", "61000-61015", "--udp-timeout", "10"];
    args.extend(["--target", "cpu,ir,cycle", "--out", o.to_str().unwrap()]);
    for i in &ins {
        args.extend(["--in", i.as_str()]);
    }
    let out = emu(&args);
    assert!(out.status.success(), "{}\n{}", text(&out.stdout), text(&out.stderr));
    for t in ["ir", "cycle"] {
        assert!(text(&out.stdout).contains(&format!("cpu and {t} agree")), "{}", text(&out.stdout));
    }
    let out = emu(&["run", "nat", "--in", &ins[0], "--out", o.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--outside-ip is required"), "{}", text(&out.stderr));
}

/// `emu hls` builds it and reports its cycles and memories; yosys synth_xilinx maps it (about
/// two minutes), its flow table in block RAM: well under the 21 000 LUTs it took when the
/// table's valid bits were registers.
#[test]
fn hls_builds_it() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("hls");
    let out = emu(&["hls", "nat", "--outside-ip", "203.0.113.1/24", "--width", "64", "-o", o.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("nat: 64-bit bus, 64-byte window, 4 ports") && stdout.contains("cycles per packet"),
        "{stdout}"
    );
    let report = std::fs::read_to_string(o.join("report.md")).unwrap();
    for m in ["| flows | hash table", "| mappings | array", "| free_ports | queue", "paths through the NF: by verdict"]
    {
        assert!(report.contains(m), "no `{m}` in the report");
    }
    // The NF's module and its elements' lint as one design.
    let mut verilog = String::new();
    for f in std::fs::read_dir(o.join("verilog")).unwrap() {
        verilog += &std::fs::read_to_string(f.unwrap().path()).unwrap();
    }
    emu_hls::hw::tools::verilator_lint_design(&verilog, "emu_nat", true).unwrap_or_else(|e| panic!("{e}"));
    let s = dir.path().join("synth");
    let r = emu(&["synth", "nat", "--outside-ip", "203.0.113.1/24", "--width", "64", "-o", s.to_str().unwrap()]);
    assert!(r.status.success(), "{}{}", text(&r.stdout), text(&r.stderr));
    let stdout = text(&r.stdout);
    eprintln!("{stdout}");
    let figure = |name: &str| -> u64 {
        let line =
            stdout.lines().find(|l| l.trim_start().starts_with(name)).unwrap_or_else(|| panic!("{name}: {stdout}"));
        line[line.find(name).unwrap() + name.len()..].split_whitespace().next().unwrap().parse().unwrap()
    };
    assert!(figure("LUT (logic, LUT1-LUT6)") < 16_000, "{stdout}");
    assert!(figure("BRAM, in RAMB18s") >= 8, "the flow table is in block RAM: {stdout}");
}

/// A home network: h1, h2, h3 inside (ports 0–2, 10.0.0.0/24, default route via the NAT's
/// 10.0.0.1), h4 outside (port 3, 203.0.113.2/24). curl fetches a page from h4's http.server,
/// h1 and h2 hold TCP and UDP sessions with h4 at the same time (answers come back through the
/// NAT), ping crosses it; h4 sees only 203.0.113.1, and cannot reach an inside host itself.
#[test]
fn real_clients_behind_the_nat_in_mininet() {
    let uid = Command::new("id").arg("-u").output().expect("id");
    assert_eq!(text(&uid.stdout).trim(), "0", "the Mininet tests need root (CI runs as root); run them with sudo");
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("home.json");
    std::fs::write(
        &topo,
        r#"{"hosts": [{"name": "h1", "ip": "10.0.0.11/24"}, {"name": "h2", "ip": "10.0.0.12/24"},
                     {"name": "h3", "ip": "10.0.0.13/24"}, {"name": "h4", "ip": "203.0.113.2/24"}],
            "switches": ["s1"],
            "links": [["h1", "s1"], ["h2", "s1"], ["h3", "s1"], ["h4", "s1"]]}"#,
    )
    .unwrap();
    let script = dir.path().join("experiment.txt");
    std::fs::write(
        &script,
        "\
h1: ip route add default via 10.0.0.1
h2: ip route add default via 10.0.0.1
h3: ip route add default via 10.0.0.1
h4 &: python3 -m http.server 8000 --bind 203.0.113.2 > $WORK/http.log 2>&1
h4 &: echo tcp-answer-1 | nc -nlv 9001 > $WORK/tcp1.srv 2> $WORK/tcp1.who
h4 &: echo tcp-answer-2 | nc -nlv 9002 > $WORK/tcp2.srv 2> $WORK/tcp2.who
h4 &: (sleep 2; echo udp-answer-1) | nc -nulv 5001 > $WORK/udp1.srv 2> $WORK/udp1.who
h4 &: (sleep 2; echo udp-answer-2) | nc -nulv 5002 > $WORK/udp2.srv 2> $WORK/udp2.who
sleep 1
h1: ping -c 3 -W 2 203.0.113.2
h3: curl -s -m 10 -o /dev/null -w 'http %{http_code}\\n' http://203.0.113.2:8000/
h1 &: (echo tcp-from-h1; sleep 3) | nc -w 5 203.0.113.2 9001 > $WORK/tcp1.cli
h2 &: (echo tcp-from-h2; sleep 3) | nc -w 5 203.0.113.2 9002 > $WORK/tcp2.cli
h1 &: (echo udp-from-h1; sleep 4) | nc -u -w 5 203.0.113.2 5001 > $WORK/udp1.cli
h2 &: (echo udp-from-h2; sleep 4) | nc -u -w 5 203.0.113.2 5002 > $WORK/udp2.cli
sleep 1.5
h4: ss -tn state established '( sport = :9001 or sport = :9002 )'
sleep 4
h4: grep -h . $WORK/tcp1.srv $WORK/tcp2.srv $WORK/udp1.srv $WORK/udp2.srv
h4: cat $WORK/http.log $WORK/tcp1.who $WORK/tcp2.who $WORK/udp1.who $WORK/udp2.who
h1: grep -h . $WORK/tcp1.cli $WORK/udp1.cli
h2: grep -h . $WORK/tcp2.cli $WORK/udp2.cli
h1: ping -c 2 -W 2 10.0.0.1
h4 !: ping -c 1 -W 1 10.0.0.11
",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_emu"))
        .args(["mininet", "nat", "--outside-ip", "203.0.113.1/24", "--topo", topo.to_str().unwrap(), "--run"])
        .arg(&script)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("http 200"), "curl got the page: {stdout}");
    for said in ["tcp-from-h1", "tcp-from-h2", "udp-from-h1", "udp-from-h2"] {
        assert!(stdout.contains(said), "h4 got `{said}`: {stdout}");
    }
    for answer in ["tcp-answer-1", "tcp-answer-2", "udp-answer-1", "udp-answer-2"] {
        assert!(stdout.contains(answer), "the answer `{answer}` came back in: {stdout}");
    }
    // The outside host sees the NAT's address and pool ports, never an inside address.
    assert!(stdout.contains("203.0.113.1 - - ") && stdout.contains("\"GET / HTTP/1.1\" 200"), "{stdout}");
    assert!(stdout.contains("Connection received on 203.0.113.1 61"), "{stdout}");
    let h4_saw: Vec<&str> = stdout.lines().filter(|l| l.contains("203.0.113.2:900")).collect();
    assert!(h4_saw.len() >= 2 && h4_saw.iter().all(|l| l.contains("203.0.113.1:61")), "ss: {h4_saw:?}\n{stdout}");
    assert!(!stdout.lines().any(|l| l.contains("Connection received on 10.0.0.")), "{stdout}");
    assert!(stdout.contains("2 packets transmitted, 2 received"), "the gateway answers ping: {stdout}");
    let summary = stdout
        .lines()
        .find(|l| l.contains("nat: ") && l.contains("mappings made"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(summary.contains("echo replies") && !summary.contains(" 0 out,"), "{summary}");
}

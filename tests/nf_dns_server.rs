//! dns-server end to end: the simulator tiers agree on generated traffic (queries of every
//! kind, malformed ones included) with the zone loaded, `emu hls` builds the zone into the CAM,
//! and the real `dig` in Mininet gets A answers and NXDOMAIN, a malformed query from a host
//! gets FORMERR, and the hosts still reach each other through the server's switch.

mod nf_common;

use emu::craft;
use emu::{Config, Ipv4Addr, Mac};
use emu_hls::backend::model::Outcome;
use nf_common::{assert_agree, histogram, outcomes, text, Rng};
use proptest::prelude::*;
use std::process::Command;

const SERVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 53);
const SERVER_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 0x53]);

fn host(k: u8) -> Mac {
    Mac::from_bytes([2, 0, 0, 0, 0, 0x10 + k])
}

fn host_ip(k: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, 0x10 + k)
}

/// `name` (dotted) in wire format.
fn wire(name: &str) -> Vec<u8> {
    let mut out = vec![];
    for l in name.split('.').filter(|l| !l.is_empty()) {
        out.push(l.len() as u8);
        out.extend(l.as_bytes());
    }
    out.push(0);
    out
}

/// A question name: from the zone (in random case), near misses, long and very long names,
/// and broken ones (pointers, lengths past the end, reserved label types, no end).
fn qname(rng: &mut Rng) -> Vec<u8> {
    let mut name = match rng.below(12) {
        0..=5 => {
            let n = rng.pick(&[
                "www.example.com",
                "example.com",
                "mail.example.com",
                "h1.lab.example.com",
                "nope.example.com",
                "www.example",
                "com",
                "",
            ]);
            let mixed: String = n.chars().map(|c| if rng.below(2) == 0 { c.to_ascii_uppercase() } else { c }).collect();
            wire(&mixed)
        }
        6 => wire(&format!("{}.example.com", "a".repeat(1 + rng.below(62) as usize))),
        7 => [[63u8; 64].as_slice(); 4]
            .concat()
            .into_iter()
            .chain([rng.below(5) as u8, b'x', b'y', b'z', b'w', 0])
            .collect(),
        8 => vec![0xc0, 12],
        9 => vec![3, b'w', b'w', b'w', 0xc0 | rng.below(64) as u8, rng.next() as u8],
        10 => vec![rng.pick(&[0x40u8, 0x80, 64, 200]), b'a', 0],
        _ => {
            let n = rng.below(20) as usize;
            rng.bytes(n)
        }
    };
    if rng.below(10) == 0 {
        name.truncate(rng.below(name.len() as u64 + 1) as usize);
    }
    name
}

/// A DNS message to the server: a header (mostly a standard query; sometimes a response, another
/// opcode or question count), a question, sometimes an EDNS OPT record or junk after it, or a
/// message cut anywhere.
fn dns_message(rng: &mut Rng) -> Vec<u8> {
    let mut flags: u16 = if rng.below(2) == 0 { 0x0100 } else { 0 };
    match rng.below(16) {
        0 => flags |= 0x8000,
        1 => flags |= (1 + rng.below(15) as u16) << 11,
        2 => flags |= rng.next() as u16 & 0x07f0,
        _ => {}
    }
    let qd: u16 = if rng.below(12) == 0 { rng.pick(&[0, 2, 256]) } else { 1 };
    let edns = rng.below(3) == 0;
    let mut m = (rng.next() as u16).to_be_bytes().to_vec();
    m.extend(flags.to_be_bytes());
    m.extend(qd.to_be_bytes());
    m.extend([0, 0, 0, 0, 0, edns as u8]);
    m.extend(qname(rng));
    let qtype: u16 = rng.pick(&[1, 1, 1, 28, 255, 15, 16]);
    let qclass: u16 = rng.pick(&[1, 1, 1, 1, 255, 3, 4]);
    m.extend(qtype.to_be_bytes());
    m.extend(qclass.to_be_bytes());
    if edns {
        m.extend([0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 0]);
    }
    if rng.below(8) == 0 {
        let n = rng.below(m.len() as u64) as usize;
        m.truncate(n);
    }
    m
}

/// Traffic for the server: DNS queries to it (damaged checksums and lengths too), other UDP and
/// ICMP to it, ARP for it and for others, frames between hosts, DNS to another address, VLAN
/// tags, random bytes and runts.
fn traffic(seed: u64, n: usize) -> Vec<(Vec<u8>, u8)> {
    let mut rng = Rng(seed | 1);
    let mut out = Vec::new();
    for _ in 0..n {
        let k = rng.below(6) as u8;
        let port = if rng.below(8) == 0 { rng.below(4) as u8 } else { k % 4 };
        let frame = match rng.below(16) {
            0..=8 => {
                let msg = dns_message(&mut rng);
                let dport = if rng.below(12) == 0 { 5353 } else { 53 };
                let mut ip = craft::udp(host_ip(k), 1024 + rng.below(60000) as u16, SERVER, dport, &msg);
                match rng.below(14) {
                    0 => ip[10] ^= 0x10,                              // IPv4 checksum
                    1 => ip[20 + 6] ^= 1 << rng.below(8),             // UDP checksum
                    2 => ip[20 + 6..20 + 8].copy_from_slice(&[0, 0]), // no UDP checksum
                    3 => {
                        // A UDP length past the datagram, or below 8.
                        let l = rng.pick(&[0u16, 7, 2000]);
                        ip[24..26].copy_from_slice(&l.to_be_bytes());
                    }
                    _ => {}
                }
                let mut f = craft::ethernet(SERVER_MAC, host(k), 0x0800, &ip);
                if rng.below(8) == 0 {
                    let pad = rng.below(20) as usize;
                    f.extend(rng.bytes(pad));
                }
                f
            }
            9 => {
                let ip = craft::icmp_echo(host_ip(k), SERVER, true, 1, 1, b"ping");
                craft::ethernet(SERVER_MAC, host(k), 0x0800, &ip)
            }
            10 | 11 => {
                let tpa = if rng.below(3) == 0 { host_ip(rng.below(6) as u8) } else { SERVER };
                let arp = craft::arp(1, host(k), host_ip(k), Mac::from_bytes([0; 6]), tpa);
                craft::ethernet(Mac::BROADCAST, host(k), 0x0806, &arp)
            }
            12 => {
                let to = rng.below(6) as u8;
                let msg = dns_message(&mut rng);
                craft::ethernet(host(to), host(k), 0x0800, &craft::udp(host_ip(k), 4000, host_ip(to), 53, &msg))
            }
            13 => craft::ethernet(host(rng.below(6) as u8), host(k), 0x88b5, &rng.bytes(50)),
            14 => {
                let mut f = craft::ethernet(SERVER_MAC, host(k), 0x8100, &[0, 7, 0x08, 0x00]);
                f.extend(rng.bytes(60));
                f
            }
            _ => {
                let len = rng.below(80) as usize;
                rng.bytes(len)
            }
        };
        out.push((frame, port));
    }
    out
}

fn config(dir: &std::path::Path) -> Config {
    let zone = dir.join("test.zone");
    std::fs::write(&zone, ZONE).unwrap();
    let mut c = Config::new();
    c.set("zone", zone.to_str().unwrap()).set("ip", "10.0.0.53");
    c
}

proptest! {
    // Each case compiles the NF for the ir tier (about 15 s in a debug build): few cases,
    // many frames each.
    #![proptest_config(ProptestConfig::with_cases(2))]

    /// cpu and ir on random seeds, the zone loaded; the hardware tiers below on one run.
    #[test]
    fn cpu_and_ir_agree_on_generated_traffic(seed in any::<u64>()) {
        let dir = tempfile::tempdir().unwrap();
        let frames = traffic(seed, 400);
        let c = config(dir.path());
        assert_agree(&dns_server::DESCRIPTOR, &frames, &outcomes(&dns_server::DESCRIPTOR, &c, &["ir"], &frames));
    }
}

/// Every tier, the hardware ones included (the zone in the CAM from reset): answers of every
/// kind, the switch, and each drop reason.
#[test]
fn every_tier_agrees_with_the_zone_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let frames = traffic(0xd45_2026, 400);
    let tiers = outcomes(&dns_server::DESCRIPTOR, &config(dir.path()), &["ir", "cycle", "verilator"], &frames);
    assert_agree(&dns_server::DESCRIPTOR, &frames, &tiers);
    let h = histogram(&tiers[0].1);
    for k in ["malformed", "transport_checksum", "ipv4_checksum", "not_for_us", "runt"] {
        assert!(h.keys().any(|x| x.starts_with(k)), "no `{k}` in {h:?}");
    }
    // Answers by response code: byte 3 of the message (42 + 3) holds it.
    let mut rcodes = std::collections::BTreeMap::new();
    for (o, (_, p)) in tiers[0].1.iter().zip(&frames) {
        if let Outcome::Sent(m, out) = o {
            if *m == 1 << p && out.len() >= 54 && out[23] == 17 && out[34..36] == [0, 53] {
                *rcodes.entry((out[45] & 0xf, u16::from_be_bytes([out[48], out[49]]))).or_insert(0) += 1;
            }
        }
    }
    for want in [(0, 1), (0, 0), (1, 0), (3, 0), (4, 0), (5, 0)] {
        assert!(rcodes.get(&want).is_some_and(|n| *n > 0), "no answer with (rcode, ancount) {want:?}: {rcodes:?}");
    }
}

const ZONE: &str = "\
$ORIGIN example.com.
$TTL 1h
@        IN A 192.0.2.1
www  300 IN A 192.0.2.10
mail        A 192.0.2.25
";

/// `emu hls` builds it with the zone in the CAM and reports its cycles. (yosys on the whole
/// design takes longer than CI affords, as the NAT's: docs/nfs.md has its figures, run by
/// hand; `every_tier_agrees_with_the_zone_loaded` compiles the same Verilog with Verilator.)
#[test]
fn hls_builds_the_zone_into_the_cam() {
    let dir = tempfile::tempdir().unwrap();
    let zone = dir.path().join("test.zone");
    std::fs::write(&zone, ZONE).unwrap();
    let z = zone.to_str().unwrap();
    let o = dir.path().join("hls");
    let r = nf_common::emu(&[
        "hls",
        "dns-server",
        "--zone",
        z,
        "--ip",
        "10.0.0.53",
        "--width",
        "64",
        "-o",
        o.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    let stdout = text(&r.stdout);
    assert!(
        stdout.contains("dns-server: 64-bit bus, 320-byte window, 4 ports") && stdout.contains("cycles per packet"),
        "{stdout}"
    );
    let report = std::fs::read_to_string(o.join("report.md")).unwrap();
    assert!(report.contains("| zone | CAM (registers, comparators) | 321 × 32 |"), "{report}");
    // The zone's entries are the CAM's contents at reset: www.example.com's key, wire format.
    let cam = std::fs::read_to_string(o.join("verilog/emu_dns_server_zone.v")).unwrap();
    assert!(cam.contains("3777777076578616d706c6503636f6d"), "{cam}");
}

/// A query of two questions (QDCOUNT 2) with none written, then the answer's response code
/// and length: the client a user would write to poke the server with a malformed query.
const FORMERR_CLIENT: &str = "\
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(bytes.fromhex('beef01000002000000000000'), ('10.0.0.53', 53))
d = s.recv(512)
print('malformed query: id %02x%02x rcode %d qr %d length %d' % (d[0], d[1], d[3] & 15, d[2] >> 7, len(d)))
";

/// dig from two hosts on two ports of the server's switch: A records (the TTL from the zone,
/// mixed case answered), NXDOMAIN, NODATA for AAAA; a malformed query from Python gets
/// FORMERR; ping between the hosts passes through.
#[test]
fn dig_gets_answers_and_errors_in_mininet() {
    let uid = Command::new("id").arg("-u").output().expect("id");
    assert_eq!(text(&uid.stdout).trim(), "0", "the Mininet tests need root (CI runs as root); run them with sudo");
    let dir = tempfile::tempdir().unwrap();
    let zone = dir.path().join("example.zone");
    std::fs::write(&zone, ZONE).unwrap();
    let client = dir.path().join("formerr.py");
    std::fs::write(&client, FORMERR_CLIENT).unwrap();
    // Names of its own, so that its interfaces never clash with another experiment's.
    let topo = dir.path().join("topo.json");
    std::fs::write(
        &topo,
        r#"{"hosts": [{"name": "dq1", "ip": "10.0.0.1/24"}, {"name": "dq2", "ip": "10.0.0.2/24"}],
            "switches": ["dns53"], "links": [["dq1", "dns53"], ["dq2", "dns53"]]}"#,
    )
    .unwrap();
    let dig = "dig @10.0.0.53 +tries=1 +time=3";
    let script = dir.path().join("experiment.txt");
    std::fs::write(
        &script,
        format!(
            "\
dq1: ping -c 2 -W 2 10.0.0.2
dq1: {dig} www.example.com A
dq2: {dig} +short WwW.ExAmPlE.cOm
dq2: {dig} +short example.com
dq1: {dig} nope.example.com A
dq1: {dig} mail.example.com AAAA
dq2: /usr/bin/python3 {}
",
            client.display()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_emu"))
        .args(["mininet", "dns-server", "--zone", zone.to_str().unwrap(), "--ip", "10.0.0.53", "--topo"])
        .arg(&topo)
        .arg("--run")
        .arg(&script)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("2 packets transmitted, 2 received"), "the hosts ping each other through it: {stdout}");
    // The report prefixes each line a command printed with `| `.
    let lines: Vec<&str> = stdout.lines().map(|l| l.trim_start().trim_start_matches('|').trim()).collect();
    let has = |want: &str| lines.iter().any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == want);
    assert!(has("www.example.com. 300 IN A 192.0.2.10"), "dig's answer section: {stdout}");
    assert!(has("192.0.2.10") && has("192.0.2.1"), "+short answers, mixed case too: {stdout}");
    let statuses: Vec<&str> = lines.iter().filter(|l| l.contains("->>HEADER<<-")).copied().collect();
    assert_eq!(statuses.len(), 3, "{stdout}");
    assert!(statuses[0].contains("status: NOERROR"), "{statuses:?}");
    assert!(statuses[1].contains("status: NXDOMAIN"), "{statuses:?}");
    assert!(statuses[2].contains("status: NOERROR"), "NODATA: {statuses:?}");
    assert!(lines.iter().any(|l| l.contains("flags: qr aa rd;") && l.contains("ANSWER: 1")), "{stdout}");
    assert!(lines.iter().any(|l| l.contains("flags: qr aa rd;") && l.contains("ANSWER: 0, AUTHORITY: 0")), "{stdout}");
    assert!(has("malformed query: id beef rcode 1 qr 1 length 12"), "FORMERR to the malformed query: {stdout}");
    // The NF's summary at exit.
    assert!(
        stdout.contains("dns-server: 6 queries answered: 3 A, 1 NODATA, 1 NXDOMAIN, 1 FORMERR"),
        "the server's counters: {stdout}"
    );
    eprintln!("{stdout}");
}

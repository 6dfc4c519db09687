//! tcp-ping end to end: the simulator tiers agree on generated traffic, the CLI's `emu sim`,
//! `emu hls` and `emu synth` (yosys synth_xilinx) take it, and real clients (hping3, nmap) in
//! Mininet see its open and closed ports.

mod nf_common;

use emu::craft::{self, TcpFlags, TcpSegment};
use emu::{Config, Ipv4Addr, Mac};
use emu_hls::backend::model::Outcome;
use nf_common::{assert_agree, emu, histogram, outcomes, text, write_pcapng, Rng};
use proptest::prelude::*;
use std::process::Command;

const ME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const MY_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 1]);

fn host(k: u8) -> Mac {
    Mac::from_bytes([2, 0, 0, 0, 0, 0x10 + k])
}

fn host_ip(k: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, 0x10 + k)
}

/// Traffic for the responder: SYNs and other segments to its address on open and closed ports
/// (with options and data, damaged checksums, bad data offsets, cut headers), ARP for it and
/// for others, UDP to it, frames between hosts, VLAN tags, random bytes and runts.
fn traffic(seed: u64, n: usize) -> Vec<(Vec<u8>, u8)> {
    let mut rng = Rng(seed | 1);
    let mut out = Vec::new();
    for _ in 0..n {
        let k = rng.below(6) as u8;
        let port = if rng.below(8) == 0 { rng.below(4) as u8 } else { k % 4 };
        let frame = match rng.below(14) {
            0..=6 => {
                let flags = match rng.below(8) {
                    0..=3 => TcpFlags { syn: true, ..Default::default() },
                    4 => TcpFlags { ack: true, psh: true, ..Default::default() },
                    5 => TcpFlags { fin: true, ack: rng.below(2) == 0, ..Default::default() },
                    6 => TcpFlags { rst: true, ..Default::default() },
                    _ => TcpFlags { syn: true, ack: true, ..Default::default() },
                };
                let seg = TcpSegment {
                    src_port: 1024 + rng.below(60000) as u16,
                    dst_port: rng.pick(&[22, 23, 80, 443, 8000, 8099, 8100, 9, 65535]),
                    seq_no: rng.next() as u32,
                    ack_no: rng.next() as u32,
                    flags,
                };
                let len = rng.pick(&[0, 0, 1, 7, 40, 300]);
                let data = rng.bytes(len);
                let dst = if rng.below(6) == 0 { host_ip(5) } else { ME };
                let mut ip = craft::tcp(host_ip(k), dst, seg, &data);
                match rng.below(12) {
                    0 => ip[20 + 16] ^= 1 << rng.below(8),         // TCP checksum
                    1 => ip[20 + 12] = (rng.below(16) as u8) << 4, // data offset
                    2 => ip[10] ^= 0x40,                           // IPv4 checksum
                    3 if data.len() >= 20 => {
                        // Options: the first 20 data bytes become the header's.
                        ip[20 + 12] = 0xa0;
                        let (s, d) = (host_ip(k), dst);
                        emu::wire::tcp::Header::new_unchecked(&mut ip[20..]).fill_checksum(s, d);
                    }
                    _ => {}
                }
                let dst_mac = if dst == ME { MY_MAC } else { host(5) };
                craft::ethernet(dst_mac, host(k), 0x0800, &ip)
            }
            7 => {
                // A TCP header cut short by the IPv4 length.
                let len = rng.below(20) as usize;
                let cut = rng.bytes(len);
                craft::ethernet(MY_MAC, host(k), 0x0800, &craft::ipv4(host_ip(k), ME, 6, &cut))
            }
            8 | 9 => {
                let tpa = if rng.below(3) == 0 { host_ip(rng.below(6) as u8) } else { ME };
                let arp = craft::arp(1, host(k), host_ip(k), Mac::from_bytes([0; 6]), tpa);
                craft::ethernet(Mac::BROADCAST, host(k), 0x0806, &arp)
            }
            10 => craft::ethernet(MY_MAC, host(k), 0x0800, &craft::udp(host_ip(k), 5, ME, 80, &rng.bytes(9))),
            11 => craft::ethernet(host(rng.below(6) as u8), host(k), 0x88b5, &rng.bytes(50)),
            12 => {
                let mut f = craft::ethernet(MY_MAC, host(k), 0x8100, &[0, 7, 0x08, 0x00]);
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

fn config(open: &str) -> Config {
    let mut c = Config::new();
    c.set("ip", "10.0.0.1").set("open", open);
    c
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// With open ports (the TCAM loaded from the configuration): cpu and ir on many seeds;
    /// the hardware tiers below on fewer, longer runs.
    #[test]
    fn cpu_and_ir_agree_on_generated_traffic(seed in any::<u64>()) {
        let frames = traffic(seed, 150);
        let c = config("22,80,443,8000-8099");
        assert_agree(&tcp_ping::DESCRIPTOR, &frames, &outcomes(&tcp_ping::DESCRIPTOR, &c, &["ir"], &frames));
    }
}

/// Every tier, the hardware ones included, with open ports (the TCAM loaded at reset) and
/// with none: SYN-ACKs from open ports, RST-ACKs from closed ones, the rest switched.
#[test]
fn every_tier_agrees_with_and_without_open_ports() {
    let frames = traffic(0x7c9_2024, 400);
    let open = outcomes(&tcp_ping::DESCRIPTOR, &config("22,80,443,8000-8099"), &["ir", "cycle", "verilator"], &frames);
    assert_agree(&tcp_ping::DESCRIPTOR, &frames, &open);
    // SYN-ACKs: 54-byte replies out of the input port with SYN and ACK set.
    let syn_acks = open[0]
        .1
        .iter()
        .zip(&frames)
        .filter(|(o, (_, p))| matches!(o, Outcome::Sent(m, out) if *m == 1 << p && out.len() == 54 && out[47] == 0x12))
        .count();
    assert!(syn_acks > 10, "{syn_acks} SYN-ACKs");
    let tiers = outcomes(&tcp_ping::DESCRIPTOR, &config(""), &["ir", "cycle", "verilator"], &frames);
    assert_agree(&tcp_ping::DESCRIPTOR, &frames, &tiers);
    let h = histogram(&tiers[0].1);
    // The traffic reaches every branch: replies, switching, and each drop reason.
    for k in ["sent 0b1", "malformed", "transport_checksum", "ipv4_checksum", "unsupported", "policy"] {
        assert!(h.keys().any(|x| x.starts_with(k)), "no `{k}` in {h:?}");
    }
    let replies = tiers[0]
        .1
        .iter()
        .zip(&frames)
        .filter(|(o, (f, p))| matches!(o, Outcome::Sent(m, out) if *m == 1 << p && out.len() == 54 && out != f))
        .count();
    assert!(replies > 50, "{replies} resets; {h:?}");
}

/// The same through the `emu sim` command: its diff says the tiers agree, with the open ports
/// loaded into the hardware's table.
#[test]
fn emu_sim_tiers_agree() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.pcapng");
    write_pcapng(&input, &traffic(99, 200));
    let out = dir.path().join("out");
    let (i, o) = (input.to_str().unwrap(), out.to_str().unwrap());
    let r = emu(&["sim", "tcp-ping", "--target", "cpu,ir,cycle", "--open", "22,80", "--in", i, "--out", o]);
    assert!(r.status.success(), "{}\n{}", text(&r.stdout), text(&r.stderr));
    for t in ["ir", "cycle"] {
        assert!(text(&r.stdout).contains(&format!("cpu and {t} agree")), "{}", text(&r.stdout));
    }
}

/// `emu hls` builds it and reports its cycles; yosys synth_xilinx maps it.
#[test]
fn hls_and_synth_xilinx() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("hls");
    let r = emu(&["hls", "tcp-ping", "--width", "64", "-o", o.to_str().unwrap()]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    let stdout = text(&r.stdout);
    assert!(
        stdout.contains("tcp-ping: 64-bit bus, 64-byte window, 4 ports") && stdout.contains("cycles per packet"),
        "{stdout}"
    );
    let report = std::fs::read_to_string(o.join("report.md")).unwrap();
    assert!(report.contains("open_ports") && report.contains("TCAM"), "{report}");
    let s = dir.path().join("synth");
    let r = emu(&["synth", "tcp-ping", "--width", "64", "-o", s.to_str().unwrap()]);
    assert!(r.status.success(), "{}{}", text(&r.stdout), text(&r.stderr));
    let stdout = text(&r.stdout);
    assert!(stdout.contains("synth_xilinx -family xc7") && stdout.contains("LUT (logic, LUT1-LUT6)"), "{stdout}");
    eprintln!("{stdout}");
}

fn require_root() -> bool {
    let uid = Command::new("id").arg("-u").output().expect("id");
    assert_eq!(text(&uid.stdout).trim(), "0", "the Mininet tests need root (CI runs as root); run them with sudo");
    true
}

/// hping3 and nmap in Mininet: SYN-ACK from open ports, RST-ACK from closed ones, as the
/// clients decode them; the hosts still reach each other through the responder's switch.
#[test]
fn hping3_and_nmap_see_open_and_closed_ports_in_mininet() {
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("experiment.txt");
    std::fs::write(
        &script,
        "\
h1: ping -c 2 -W 2 10.0.0.2
h1: hping3 -S -p 80 -c 2 10.0.0.100
h1: hping3 -S -p 23 -c 2 10.0.0.100
h2: nmap -sS -Pn -n -p 22,23,80,443,8080 10.0.0.100
",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_emu"))
        .args(["mininet", "tcp-ping", "--ip", "10.0.0.100", "--open", "22,80,8080", "--topo", "single,2", "--run"])
        .arg(&script)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("2 packets transmitted, 2 received"), "hosts ping each other through it: {stdout}");
    // hping3's and nmap's own kernels reset the SYN-ACKs; those resets are not answered.
    assert!(stdout.contains("drops: policy"), "{stdout}");
    assert_eq!(stdout.matches("sport=80 flags=SA").count(), 2, "SYN-ACKs from port 80: {stdout}");
    assert_eq!(stdout.matches("sport=23 flags=RA").count(), 2, "RST-ACKs from port 23: {stdout}");
    for (port, state) in [("22", "open"), ("23", "closed"), ("80", "open"), ("443", "closed"), ("8080", "open")] {
        // The experiment's report prefixes each line a command printed with `| `.
        let line = stdout
            .lines()
            .map(|l| l.trim_start().trim_start_matches('|').trim_start())
            .find(|l| l.starts_with(&format!("{port}/tcp")))
            .unwrap_or_else(|| panic!("nmap reports {port}: {stdout}"));
        assert!(line.split_whitespace().nth(1) == Some(state), "port {port}: {line}");
    }
}

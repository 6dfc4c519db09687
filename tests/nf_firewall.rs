//! firewall end to end: the simulator tiers agree on generated traffic, `emu sim`, `emu hls`
//! and `emu synth` (yosys synth_xilinx) take it, the rule file's errors reach the user with
//! line and column, and in Mininet real clients (curl to a python3 http.server, nc over TCP
//! and UDP, ping) get through exactly where the rules say.

mod nf_common;

use emu::craft::{self, TcpFlags, TcpSegment};
use emu::{Config, Ipv4Addr, Mac};
use nf_common::{assert_agree, emu, histogram, outcomes, text, Rng};
use proptest::prelude::*;
use std::path::Path;
use std::process::Command;

const RULES: &str = "\
-P DROP
-i inside -p tcp --dport 80 -j ACCEPT
-i outside -p tcp --sport 80 --tcp-flags ACK ACK -j ACCEPT
-p tcp --syn -s 192.168.1.0/24 -j DROP
-p udp -s 10.0.0.0/24 --dport 5000:5099 -j DROP
-p udp --sport 1024:2047 --dport 53 -j ACCEPT
-p icmp --icmp-type echo-request -j ACCEPT
-p icmp --icmp-type echo-reply -j ACCEPT
-i outside -d 10.0.0.7 -j ACCEPT
-p 47 -j ACCEPT
";

fn inside(k: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, k)
}

fn outside(k: u8) -> Ipv4Addr {
    Ipv4Addr::new(192, 168, 1 + k % 2, k)
}

/// Traffic across the filter both ways: TCP (SYNs, ACKs, port 80 and others), UDP around the
/// rules' port ranges, ICMP echo, GRE, ARP, IPv6, VLAN-tagged IPv4, cut transport headers,
/// later fragments, random bytes.
fn traffic(seed: u64, n: usize) -> Vec<(Vec<u8>, u8)> {
    let mut rng = Rng(seed | 1);
    let mut out = Vec::new();
    let (ma, mb) = (Mac::from_bytes([2, 0, 0, 0, 0, 1]), Mac::from_bytes([2, 0, 0, 0, 0, 2]));
    for _ in 0..n {
        let port = rng.below(2) as u8;
        let (a, b) = (inside(rng.pick(&[1, 2, 7])), outside(rng.pick(&[1, 2, 3])));
        let (src, dst) = if port == 0 { (a, b) } else { (b, a) };
        let sport = rng.pick(&[80, 53, 1023, 1024, 2047, 2048, 40000, 4999, 5000, 5099, 5100]);
        let dport = rng.pick(&[80, 53, 22, 5000, 5050, 5099, 5100, 443]);
        let ip = match rng.below(12) {
            0..=3 => {
                let flags = TcpFlags {
                    syn: rng.below(2) == 0,
                    ack: rng.below(2) == 0,
                    fin: rng.below(6) == 0,
                    ..Default::default()
                };
                let seg = TcpSegment { src_port: sport, dst_port: dport, seq_no: 1, ack_no: 2, flags };
                let len = rng.pick(&[0, 5, 200]);
                craft::tcp(src, dst, seg, &rng.bytes(len))
            }
            4..=6 => {
                let len = rng.pick(&[0, 3, 100]);
                craft::udp(src, sport, dst, dport, &rng.bytes(len))
            }
            7 => craft::icmp_echo(src, dst, rng.below(2) == 0, 1, 2, b"ping"),
            8 => craft::ipv4(src, dst, 47, &rng.bytes(24)),
            9 => {
                let len = rng.below(20) as usize;
                craft::ipv4(src, dst, rng.pick(&[6, 17]), &rng.bytes(len))
            }
            10 => {
                let mut p = craft::udp(src, 9, dst, 5000, &rng.bytes(16));
                p[6] = 0x20; // more fragments, offset 8 × 8 bytes
                p[7] = 0x08;
                let mut h = p[..20].to_vec();
                emu::wire::ipv4::Header::new_unchecked(&mut h[..]).fill_checksum();
                p[..20].copy_from_slice(&h);
                p
            }
            _ => Vec::new(),
        };
        let frame = if ip.is_empty() {
            match rng.below(4) {
                0 => craft::ethernet(Mac::BROADCAST, ma, 0x0806, &craft::arp(1, ma, inside(1), mb, outside(1))),
                1 => craft::ethernet(mb, ma, 0x86dd, &rng.bytes(60)),
                _ => {
                    let len = rng.below(70) as usize;
                    rng.bytes(len)
                }
            }
        } else if rng.below(8) == 0 {
            let mut f = craft::ethernet(mb, ma, 0x8100, &[0, 5, 0x08, 0x00]);
            f.extend(&ip);
            f
        } else {
            craft::ethernet(mb, ma, 0x0800, &ip)
        };
        out.push((frame, port));
    }
    out
}

fn config(dir: &Path, rules: &str) -> Config {
    let path = dir.join("fw.rules");
    std::fs::write(&path, rules).unwrap();
    let mut c = Config::new();
    c.set("rules", path.to_str().unwrap());
    c
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// With rules: cpu and ir on many seeds; the hardware tiers below on fewer, longer runs.
    #[test]
    fn cpu_and_ir_agree_on_generated_traffic(seed in any::<u64>()) {
        let dir = tempfile::tempdir().unwrap();
        let frames = traffic(seed, 150);
        let c = config(dir.path(), RULES);
        assert_agree(&firewall::DESCRIPTOR, &frames, &outcomes(&firewall::DESCRIPTOR, &c, &["ir"], &frames));
    }
}

/// The rule set decides what the traffic generator's mix implies: both ways, each kind.
#[test]
fn the_rules_split_the_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let frames = traffic(7, 600);
    let tiers = outcomes(&firewall::DESCRIPTOR, &config(dir.path(), RULES), &["ir"], &frames);
    let h = histogram(&tiers[0].1);
    for k in ["sent 0b1", "sent 0b10", "policy", "malformed", "runt"] {
        assert!(h.contains_key(k), "no `{k}` in {h:?}");
    }
    assert!(h["policy"] > 100 && h["sent 0b1"] + h["sent 0b10"] > 100, "{h:?}");
}

/// Every tier, the hardware ones included, with the rules (loaded into the hardware's TCAM at
/// reset) and with a policy alone: ARP passes, cut headers are malformed.
#[test]
fn every_tier_agrees_with_rules_and_on_the_policy_alone() {
    let dir = tempfile::tempdir().unwrap();
    let frames = traffic(0xf1e1d, 300);
    for policy in [RULES, "-P DROP\n", "-P ACCEPT\n"] {
        let tiers =
            outcomes(&firewall::DESCRIPTOR, &config(dir.path(), policy), &["ir", "cycle", "verilator"], &frames);
        assert_agree(&firewall::DESCRIPTOR, &frames, &tiers);
    }
}

#[test]
fn emu_sim_agrees_and_rule_errors_name_the_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("fw.rules");
    std::fs::write(&rules, RULES).unwrap();
    let input = dir.path().join("in.pcap");
    let file = std::io::BufWriter::new(std::fs::File::create(&input).unwrap());
    let mut cap = emu_cpu::pcap::PcapWriter::new(file).unwrap();
    for (i, (f, _)) in traffic(3, 200).iter().enumerate() {
        cap.write(i as u64 * 1_000_000_000, f).unwrap();
    }
    cap.flush().unwrap();
    drop(cap);
    let (i, r, o) = (input.to_str().unwrap(), rules.to_str().unwrap(), dir.path().join("out"));
    let out =
        emu(&["sim", "firewall", "--rules", r, "--target", "cpu,ir,cycle", "--in", i, "--out", o.to_str().unwrap()]);
    assert!(out.status.success(), "{}\n{}", text(&out.stdout), text(&out.stderr));
    for t in ["ir", "cycle"] {
        assert!(text(&out.stdout).contains(&format!("cpu and {t} agree")), "{}", text(&out.stdout));
    }
    std::fs::write(&rules, "-P DROP\n-p tcp --dport 80 -j ACCEPT\n-p udp -s 10.0.0.0/40 -j DROP\n").unwrap();
    let out = emu(&["run", "firewall", "--rules", r, "--in", i, "--out", o.to_str().unwrap()]);
    assert!(!out.status.success());
    let want = format!("{r}:3:11: `10.0.0.0/40` is not an IPv4 prefix: write e.g. 10.0.0.0/24, 10.0.0.7 or any");
    assert!(text(&out.stderr).contains(&want), "{}", text(&out.stderr));
    let out = emu(&["run", "firewall", "--in", i, "--out", o.to_str().unwrap()]);
    assert!(text(&out.stderr).contains("--rules is required"), "{}", text(&out.stderr));
}

/// `emu hls` builds it and reports its cycles; yosys synth_xilinx maps it.
#[test]
fn hls_and_synth_xilinx() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("fw.rules");
    std::fs::write(&rules, RULES).unwrap();
    let r = rules.to_str().unwrap();
    let o = dir.path().join("hls");
    let out = emu(&["hls", "firewall", "--rules", r, "--width", "64", "-o", o.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("firewall: 64-bit bus, 128-byte window, 2 ports") && stdout.contains("cycles per packet"),
        "{stdout}"
    );
    let report = std::fs::read_to_string(o.join("report.md")).unwrap();
    assert!(report.contains("| rules | TCAM"), "{report}");
    let s = dir.path().join("synth");
    let out = emu(&["synth", "firewall", "--rules", r, "--width", "64", "-o", s.to_str().unwrap()]);
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("synth_xilinx -family xc7") && stdout.contains("LUT (logic, LUT1-LUT6)"), "{stdout}");
    eprintln!("{stdout}");
}

/// A bump in the wire between h1 (inside, port 0) and h2 (outside, port 1): HTTP from inside
/// to port 8000 and its replies pass, a TCP port the rules do not open does not, ping works
/// from inside but not from outside, and of two UDP flows the one a rule drops is lost.
#[test]
fn real_clients_through_the_rules_in_mininet() {
    let uid = Command::new("id").arg("-u").output().expect("id");
    assert_eq!(text(&uid.stdout).trim(), "0", "the Mininet tests need root (CI runs as root); run them with sudo");
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("fw.rules");
    std::fs::write(
        &rules,
        "\
-P DROP
-i inside -p tcp -d 10.0.0.2 --dport 8000 -j ACCEPT
-i outside -p tcp -s 10.0.0.2 --sport 8000 --tcp-flags ACK ACK -j ACCEPT
-i inside -p icmp --icmp-type echo-request -j ACCEPT
-i outside -p icmp --icmp-type echo-reply -j ACCEPT
-p udp --dport 5353 -j DROP
-p udp -j ACCEPT
",
    )
    .unwrap();
    let script = dir.path().join("experiment.txt");
    std::fs::write(
        &script,
        "\
h2 &: python3 -m http.server 8000 --bind 10.0.0.2
h2 &: nc -lk 9000
h2 &: nc -ul 5000 > $WORK/udp5000
h2 &: nc -ul 5353 > $WORK/udp5353
sleep 1
h1: curl -s -m 5 -o /dev/null -w 'http %{http_code}\\n' http://10.0.0.2:8000/
h1 !: nc -z -w 2 10.0.0.2 9000
h1: ping -c 2 -W 2 10.0.0.2
h2 !: ping -c 1 -W 1 10.0.0.1
h1: echo allowed | nc -u -w 1 10.0.0.2 5000
h1: echo blocked | nc -u -w 1 10.0.0.2 5353
sleep 0.5
h2: grep -q allowed $WORK/udp5000
h2 !: grep -q blocked $WORK/udp5353
",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_emu"))
        .args(["mininet", "firewall", "--rules", rules.to_str().unwrap(), "--topo", "single,2", "--run"])
        .arg(&script)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("http 200"), "curl got the page: {stdout}");
    assert!(stdout.contains("2 packets transmitted, 2 received"), "{stdout}");
    assert!(stdout.contains("policy"), "the filter's drops are reported: {stdout}");
    // The NF's summary at exit: HTTP and its replies hit rules 0 and 1, the blocked UDP rule 4.
    let hits = |rule: &str| -> u64 {
        let l = stdout.lines().find(|l| l.contains(rule)).unwrap_or_else(|| panic!("no `{rule}` in {stdout}"));
        l.rsplit(':').next().unwrap().trim().parse().unwrap()
    };
    assert!(hits("rule 0 (line 2)") >= 3 && hits("rule 1 (line 3)") >= 3, "{stdout}");
    assert_eq!(hits("rule 4 (line 6)"), 1, "{stdout}");
    assert!(hits("default policy (DROP)") >= 1, "the TCP SYN to port 9000 and ping from outside: {stdout}");
}

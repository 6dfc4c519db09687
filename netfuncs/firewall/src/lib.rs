//! A stateless packet filter in the wire between two ports: `inside` (port 0) and `outside`
//! (port 1). Frames that pass go out of the other port, unchanged.
//!
//! An ordered list of rules in iptables-like text ([`rules`]: the grammar, with examples) is
//! compiled into a ternary CAM ([`Tcam`]) whose key is the packet's input port, protocol,
//! addresses, ports and TCP flags; the first rule that matches decides, and counts the packet
//! in its hit counter. A packet no rule matches takes the default policy (`-P`, accept when the
//! file sets none, as iptables does) and counts in `default_hits`.
//!
//! - **IPv4** (after up to two 802.1Q tags) is matched. Ports are those of TCP and UDP, the
//!   ICMP type stands in the source port's place (`--icmp-type`); fragments after the first
//!   carry no ports and match with ports 0 (a rule with ports never matches them).
//!   A TCP or UDP header cut short by the IPv4 length is dropped as `malformed`, so a
//!   truncated header cannot slip past a port rule.
//! - **ARP** always passes: without it no IPv4 host could reach another through the filter.
//! - **Everything else** (IPv6, other EtherTypes, more than two VLAN tags) takes the default
//!   policy, so `-P DROP` also closes what the rules cannot describe.
//! - Drops are `policy` drops (a rule or the default said so).
#![deny(missing_docs)]

use emu::prelude::*;

pub mod rules;

pub use self::firewall::*;
pub use rules::{compile, parse, Compiled, Rule, RuleError, RuleSet, Verdict};

/// Up to two VLAN tags and a 60-byte IPv4 header, then the 14 bytes of TCP up to the flags.
pub const WINDOW: usize = self::firewall::HLS_WINDOW;

/// The filter as one NF module: `#[emu::nf]` checks it against the synthesizable subset, and
/// the HLS compiler builds its state and `process` as hardware.
#[emu::nf(ports = 2, window = 128)]
pub mod firewall {
    use emu::prelude::*;

    /// Slots of the rule table: a rule takes one per combination of its port ranges' prefixes.
    pub const RULE_SLOTS: usize = 32;
    /// The inside port.
    pub const INSIDE: Port = 0;
    /// The outside port.
    pub const OUTSIDE: Port = 1;
    /// A rule's result: this bit set accepts; the low bits are the rule's number.
    pub const ACCEPT_BIT: u8 = 0x80;

    /// The filter's state.
    #[derive(Debug)]
    pub struct Firewall {
        /// The compiled rules: key [`key`](crate::rules::key), result the rule's number and
        /// [`ACCEPT_BIT`].
        pub rules: Tcam<u128, u8, RULE_SLOTS>,
        /// Packets each rule decided, by rule number (its place in the file, from 0).
        pub hits: Array<u64, RULE_SLOTS>,
        /// Packets no rule matched (the default policy decided).
        pub default_hits: Counter,
        /// The default policy: true accepts.
        pub default_accept: bool,
    }

    impl Firewall {
        /// A filter with no rules and the default policy `default_accept`.
        pub fn new(default_accept: bool) -> Firewall {
            Firewall { rules: Tcam::new(), hits: Array::new(), default_hits: Counter::default(), default_accept }
        }

        fn by_default(&mut self, out: Port) -> Action {
            self.default_hits.inc();
            if self.default_accept {
                Action::Forward(out)
            } else {
                Action::Drop(DropReason::Policy)
            }
        }
    }

    impl NetworkFunction for Firewall {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let out = if meta.in_port == INSIDE { OUTSIDE } else { INSIDE };
            let (l3, ethertype) = pkt.l3();
            if ethertype == 0x0806 {
                return Action::Forward(out);
            }
            if ethertype != 0x0800 {
                return self.by_default(out);
            }
            let ip = pkt.ipv4_at(l3);
            let (proto, src, dst) = (ip.protocol(), ip.src(), ip.dst());
            let l4 = l3 + ip.header_len();
            // The ingress checks guarantee header_len <= total_len.
            let seg_len = ip.total_len() as usize - ip.header_len();
            let first = ip.frag_offset().value() == 0;
            let mut sport = 0u16;
            let mut dport = 0u16;
            let mut flags = 0u8;
            if first && (proto == 6 || proto == 17) {
                if (proto == 6 && seg_len < 20) || seg_len < 8 {
                    return Action::Drop(DropReason::Malformed);
                }
                sport = (pkt.byte(l4) as u16) << 8 | pkt.byte(l4 + 1) as u16;
                dport = (pkt.byte(l4 + 2) as u16) << 8 | pkt.byte(l4 + 3) as u16;
                if proto == 6 {
                    flags = pkt.byte(l4 + 13);
                }
            }
            if first && proto == 1 && seg_len > 0 {
                sport = pkt.byte(l4) as u16;
            }
            let key = (meta.in_port as u128) << 112
                | (proto as u128) << 104
                | (src.0 as u128) << 72
                | (dst.0 as u128) << 40
                | (sport as u128) << 24
                | (dport as u128) << 8
                | flags as u128;
            match self.rules.lookup(key) {
                Some(result) => {
                    let rule = (result & !ACCEPT_BIT) as usize;
                    let n = self.hits.get(rule);
                    self.hits.set(rule, n.wrapping_add(1));
                    if result & ACCEPT_BIT != 0 {
                        Action::Forward(out)
                    } else {
                        Action::Drop(DropReason::Policy)
                    }
                }
                None => self.by_default(out),
            }
        }
    }
}

const RULES: Param = Param {
    name: "rules",
    help: "file of filter rules, iptables-like (docs/nfs.md), e.g. `-A -p tcp --dport 80 -j ACCEPT`",
    default: None,
};

/// The rules of `config`'s `--rules` file, as written and compiled.
pub fn load(config: &Config) -> Result<(RuleSet, Compiled), ConfigError> {
    let path = config.raw(&RULES)?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("--rules {path}: {e}; give the path of a rule file")))?;
    let set = parse(&text).map_err(|e| ConfigError(format!("{path}:{e}")))?;
    let compiled = compile(&set).map_err(|e| ConfigError(format!("{path}: {e}")))?;
    Ok((set, compiled))
}

/// The filter `config` describes, its rules loaded.
pub fn build(config: &Config) -> Result<Firewall, ConfigError> {
    Ok(from_compiled(&load(config)?.1))
}

/// A filter holding `compiled`.
pub fn from_compiled(compiled: &Compiled) -> Firewall {
    let mut nf = Firewall::new(compiled.default_accept);
    for (slot, (value, mask, result)) in compiled.slots.iter().enumerate() {
        nf.rules.set(slot, *value, *mask, *result);
    }
    nf
}

/// The filter as the CPU target runs it: at the end of a run it prints each rule's hits by the
/// rule's line, and the default policy's, to stderr (what the NF's own state cannot hold: the
/// lines are the file's, not the circuit's).
pub struct Reporting {
    /// The filter.
    pub nf: Firewall,
    lines: Vec<usize>,
    default_accept: bool,
}

impl Reporting {
    /// The report's lines: `rule N (line L, ACCEPT|DROP): hits`, then the policy's.
    pub fn summary(&self) -> String {
        let mut s = String::from("firewall: hits per rule\n");
        for (n, line) in self.lines.iter().enumerate() {
            s += &format!("  rule {n} (line {line}): {}\n", self.nf.hits.get(n));
        }
        let policy = if self.default_accept { "ACCEPT" } else { "DROP" };
        s += &format!("  default policy ({policy}): {}\n", self.nf.default_hits.get());
        s
    }
}

impl NetworkFunction for Reporting {
    #[inline]
    fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
        self.nf.process(pkt, meta)
    }

    /// The debugger sees the NF's state.
    fn elements(&mut self) -> Vec<(&'static str, &mut dyn emu::state::Element)> {
        self.nf.elements()
    }

    fn probes(&self) -> Option<&'static std::thread::LocalKey<emu::probe::Probes>> {
        self.nf.probes()
    }

    /// Printed by `emu run` when the run ends (not on drop: the tools also build an NF only
    /// to read the state its constructor leaves).
    fn summary(&self) -> String {
        Reporting::summary(self)
    }
}


fn build_reporting(config: &Config) -> Result<Reporting, ConfigError> {
    let (set, compiled) = load(config)?;
    Ok(Reporting {
        nf: from_compiled(&compiled),
        lines: set.rules.iter().map(|r| r.line).collect(),
        default_accept: compiled.default_accept,
    })
}

/// How the tools find and build the filter.
pub const DESCRIPTOR: NfDescriptor = NfDescriptor {
    name: "firewall",
    summary: "stateless filter between an inside and an outside port, iptables-like rules (--rules FILE)",
    ports: HLS_PORTS,
    window: WINDOW,
    params: &[RULES],
    build: |c| Ok(Box::new(build_reporting(c)?)),
    hls_source: Some(HLS_SOURCE),
};

#[cfg(test)]
mod test {
    use super::*;
    use emu::craft::{self, TcpFlags, TcpSegment};

    const IN_HOST: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const OUT_HOST: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
    const MAC_A: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 1]);
    const MAC_B: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 2]);

    const RULES: &str = "\
# a web server outside, pings both ways, nothing else
-P DROP
-A FORWARD -i inside -p tcp --dport 80 -j ACCEPT
-i outside -p tcp --sport 80 --tcp-flags ACK ACK -j ACCEPT   # replies only (ACK set)
-p icmp --icmp-type echo-request -j ACCEPT
-p icmp -m icmp --icmp-type 0 -j ACCEPT
-p udp -s 10.0.0.0/24 --dport 5000:5099 -j DROP
-p udp -d 10.0.0.2 -j ACCEPT
";

    fn firewall(text: &str) -> Firewall {
        from_compiled(&compile(&parse(text).unwrap()).unwrap())
    }

    fn tcp(from: Ipv4Addr, to: Ipv4Addr, sport: u16, dport: u16, flags: TcpFlags) -> Vec<u8> {
        let seg = TcpSegment { src_port: sport, dst_port: dport, seq_no: 1, ack_no: 1, flags };
        craft::ethernet(MAC_B, MAC_A, 0x0800, &craft::tcp(from, to, seg, b"payload"))
    }

    fn run(fw: &mut Firewall, f: &[u8], in_port: Port) -> Action {
        let mut f = f.to_vec();
        let before = f.clone();
        let meta = Meta { in_port, len: f.len() as u16, timestamp: 0 };
        let a = fw.process(&mut Packet::new(&mut f, WINDOW), &meta);
        assert_eq!(f, before, "the filter never edits a frame");
        a
    }

    const SYN: TcpFlags = TcpFlags { syn: true, ack: false, psh: false, fin: false, rst: false };
    const SYN_ACK: TcpFlags = TcpFlags { syn: true, ack: true, psh: false, fin: false, rst: false };
    const ACK: TcpFlags = TcpFlags { syn: false, ack: true, psh: false, fin: false, rst: false };

    #[test]
    fn first_matching_rule_decides_and_counts() {
        let mut fw = firewall(RULES);
        let drop = Action::Drop(DropReason::Policy);
        assert_eq!(run(&mut fw, &tcp(IN_HOST, OUT_HOST, 40000, 80, SYN), INSIDE), Action::Forward(OUTSIDE));
        assert_eq!(run(&mut fw, &tcp(OUT_HOST, IN_HOST, 80, 40000, SYN_ACK), OUTSIDE), Action::Forward(INSIDE));
        assert_eq!(run(&mut fw, &tcp(OUT_HOST, IN_HOST, 80, 40000, ACK), OUTSIDE), Action::Forward(INSIDE));
        assert_eq!(run(&mut fw, &tcp(OUT_HOST, IN_HOST, 80, 40000, SYN), OUTSIDE), drop, "a SYN from port 80 is new");
        assert_eq!(
            run(&mut fw, &tcp(OUT_HOST, IN_HOST, 40000, 80, SYN), OUTSIDE),
            drop,
            "web is open inside → out only"
        );
        assert_eq!(run(&mut fw, &tcp(IN_HOST, OUT_HOST, 40000, 22, SYN), INSIDE), drop);
        let ping = craft::ethernet(MAC_B, MAC_A, 0x0800, &craft::icmp_echo(IN_HOST, OUT_HOST, true, 1, 1, b"x"));
        let pong = craft::ethernet(MAC_A, MAC_B, 0x0800, &craft::icmp_echo(OUT_HOST, IN_HOST, false, 1, 1, b"x"));
        assert_eq!(run(&mut fw, &ping, INSIDE), Action::Forward(OUTSIDE));
        assert_eq!(run(&mut fw, &pong, OUTSIDE), Action::Forward(INSIDE));
        let udp = |dport| craft::ethernet(MAC_B, MAC_A, 0x0800, &craft::udp(IN_HOST, 9, OUT_HOST, dport, b"u"));
        assert_eq!(run(&mut fw, &udp(5000), INSIDE), drop);
        assert_eq!(run(&mut fw, &udp(5099), INSIDE), drop);
        assert_eq!(run(&mut fw, &udp(5100), INSIDE), Action::Forward(OUTSIDE), "past the range, the next rule");
        assert_eq!(run(&mut fw, &udp(4999), INSIDE), Action::Forward(OUTSIDE));
        let hits: Vec<u64> = (0..6).map(|i| fw.hits.get(i)).collect();
        assert_eq!(hits, [1, 2, 1, 1, 2, 2]);
        assert_eq!(fw.default_hits.get(), 3);
    }

    #[test]
    fn arp_passes_other_ethertypes_take_the_policy() {
        let arp = craft::ethernet(Mac::BROADCAST, MAC_A, 0x0806, &craft::arp(1, MAC_A, IN_HOST, MAC_B, OUT_HOST));
        let ipv6 = craft::ethernet(MAC_B, MAC_A, 0x86dd, &[0x60; 40]);
        for (policy, v6) in [("-P DROP", Action::Drop(DropReason::Policy)), ("-P ACCEPT", Action::Forward(INSIDE))] {
            let mut fw = firewall(policy);
            assert_eq!(run(&mut fw, &arp, OUTSIDE), Action::Forward(INSIDE), "{policy}");
            assert_eq!(run(&mut fw, &ipv6, OUTSIDE), v6, "{policy}");
            assert_eq!(fw.default_hits.get(), 1);
        }
        assert!(firewall("").default_accept, "no policy line: accept, as iptables");
    }

    #[test]
    fn vlan_tags_do_not_hide_a_packet_from_the_rules() {
        let mut fw = firewall("-P ACCEPT\n-p tcp --dport 22 -j DROP\n");
        let plain = tcp(IN_HOST, OUT_HOST, 1, 22, SYN);
        let mut tagged = plain[..12].to_vec();
        tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x07]);
        tagged.extend_from_slice(&plain[12..]);
        assert_eq!(run(&mut fw, &plain, INSIDE), Action::Drop(DropReason::Policy));
        assert_eq!(run(&mut fw, &tagged, INSIDE), Action::Drop(DropReason::Policy));
    }

    #[test]
    fn truncated_transport_headers_are_malformed_and_later_fragments_have_no_ports() {
        let mut fw = firewall("-P ACCEPT\n-p tcp --dport 22 -j DROP\n-p udp --dport 0 -j DROP\n");
        let cut =
            craft::ethernet(MAC_B, MAC_A, 0x0800, &craft::ipv4(IN_HOST, OUT_HOST, 6, &[0, 1, 0, 22, 0, 0, 0, 0, 0, 0]));
        assert_eq!(run(&mut fw, &cut, INSIDE), Action::Drop(DropReason::Malformed));
        let cut = craft::ethernet(MAC_B, MAC_A, 0x0800, &craft::ipv4(IN_HOST, OUT_HOST, 17, &[0, 1, 0, 22]));
        assert_eq!(run(&mut fw, &cut, INSIDE), Action::Drop(DropReason::Malformed));
        // A later fragment of UDP: its first bytes are data, not ports, and read as ports 0.
        let mut frag =
            craft::ethernet(MAC_B, MAC_A, 0x0800, &craft::ipv4(IN_HOST, OUT_HOST, 17, &[0, 1, 0, 9, 0, 8, 0, 0]));
        frag[20] = 0x00;
        frag[21] = 0x10; // offset 16 × 8 bytes
        let mut hdr = frag[14..34].to_vec();
        emu::wire::ipv4::Header::new_unchecked(&mut hdr[..]).fill_checksum();
        frag[14..34].copy_from_slice(&hdr);
        assert_eq!(run(&mut fw, &frag, INSIDE), Action::Drop(DropReason::Policy), "matched the ports-0 rule");
    }

    #[test]
    fn rules_compile_to_slots_per_port_prefix_pair() {
        let c = compile(
            &parse("-p tcp --sport 1024:2047 --dport 1000:2000 -j ACCEPT\n-p udp --dport 53 -j ACCEPT\n-j DROP")
                .unwrap(),
        )
        .unwrap();
        assert_eq!(c.slots_per_rule, [8, 1, 1]);
        assert_eq!(c.slots.len(), 10);
        assert_eq!(c.slots[8].2, 1 | ACCEPT_BIT);
        assert_eq!(c.slots[9], (0, 0, 2), "a rule without options matches everything");
        let e = compile(&parse("-p tcp --sport 1:65534 --dport 1:2 -j ACCEPT").unwrap()).unwrap_err();
        assert!(
            e.starts_with("the rules take 60 table slots and the firewall has 32") && e.contains("line 1 takes 60"),
            "{e}"
        );
    }

    #[test]
    fn grammar_accepts_iptables_spellings() {
        let set = parse("-A FORWARD --in-interface 1 --protocol 17 --source 192.168.1.7 --destination any --source-port 53 --jump ACCEPT\n\n  # only a comment\n-P FORWARD DROP # closed\n").unwrap();
        assert_eq!(set.default, Verdict::Drop);
        let r = &set.rules[0];
        assert_eq!(
            (r.line, r.in_port, r.protocol, r.src, r.dst, r.sport, r.dport),
            (1, Some(1), Some(17), (0xc0a8_0107, 32), (0, 0), (53, 53), (0, 65535))
        );
        let r = &parse("-p tcp --syn -j DROP").unwrap().rules[0];
        assert_eq!(r.tcp_flags, (0x17, 0x02));
        let r = &parse("-p tcp --tcp-flags ALL NONE -j DROP").unwrap().rules[0];
        assert_eq!(r.tcp_flags, (0x3f, 0));
    }

    #[test]
    fn bad_rules_say_where_and_what_to_write() {
        let cases: &[(&str, &str)] = &[
            (
                "-p tcp --dport 80 -j ACCEPT\n-s 10.0.0.300 -j DROP",
                "2:4: `10.0.0.300` is not an IPv4 prefix: write e.g. 10.0.0.0/24, 10.0.0.7 or any",
            ),
            ("-s 10.0.0.0/33 -j DROP", "1:4: `10.0.0.0/33` is not an IPv4 prefix"),
            ("-p tcp --dport 90:80 -j DROP", "1:16: `90:80` is an empty range; write the lower port first (80:90)"),
            ("--dport 80 -j DROP", "1:1: `--dport` needs -p tcp or -p udp in the same rule"),
            ("-p udp --syn -j DROP", "1:8: `--syn` needs -p tcp in the same rule"),
            ("-p tcp -j REJECT", "1:11: `REJECT` is not a target: write ACCEPT or DROP (REJECT would answer"),
            ("-p tcp --dport 80", "1:1: the rule has no target: end it with `-j ACCEPT` or `-j DROP`"),
            ("-p gre -j DROP", "1:4: `gre` is not a protocol: write tcp, udp, icmp, all or a number 0 to 255"),
            ("   -x 1 -j DROP", "1:4: unknown option `-x`"),
            ("-p tcp ! --syn -j DROP", "1:8: negation (`!`) is not supported"),
            ("-A INPUT -j DROP", "1:4: unknown chain `INPUT`: the firewall has one chain, FORWARD"),
            ("-p tcp -p udp -j DROP", "1:8: `-p` is given twice"),
            ("-P DROP\n-P ACCEPT", "2:1: a second policy; the first is on line 1"),
            ("-P REJECT", "1:4: `REJECT` is not a policy; write ACCEPT or DROP"),
            ("-p tcp --tcp-flags SYN -j DROP", "1:24: `-j` is not a list of TCP flags: write e.g. SYN,ACK"),
            ("-i wan -j DROP", "1:4: `wan` is not an interface: write inside (port 0) or outside (port 1)"),
            ("-j", "1:3: `-j` needs 1 value(s) after it"),
        ];
        for (text, want) in cases {
            let e = parse(text)
                .and_then(|s| compile(&s).map_err(|m| RuleError { line: 0, column: 0, message: m }))
                .unwrap_err();
            assert!(e.to_string().starts_with(want), "{text:?}:\n  got  {e}\n  want {want}");
        }
    }

    fn c_good(path: &std::path::Path) -> Config {
        let mut c = Config::new();
        c.set("rules", path.to_str().unwrap());
        c
    }

    #[test]
    fn descriptor_reads_the_rule_file_and_reports_its_errors_with_the_path() {
        let dir = std::env::temp_dir().join(format!("emu-firewall-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.rules");
        std::fs::write(&good, RULES).unwrap();
        let mut c = Config::new();
        c.set("rules", good.to_str().unwrap());
        let state = DESCRIPTOR.initial_state(&c).unwrap();
        let of = |name: &str| state.iter().find(|e| e.name == name).unwrap();
        assert_eq!(of("default_accept").entries, [[0]]);
        let rules = of("rules").entries.iter().filter(|e| e[0] == 1).count();
        assert_eq!(rules, 11, "rule 5's 5000:5099 takes 6 slots");
        let bad = dir.join("bad.rules");
        std::fs::write(&bad, "-P DROP\n-p tcp --dport http -j ACCEPT\n").unwrap();
        c.set("rules", bad.to_str().unwrap());
        let e = (DESCRIPTOR.build)(&c).err().unwrap().0;
        assert!(e.ends_with("bad.rules:2:16: `http` is not a port or range: write e.g. 80 or 1024:65535"), "{e}");
        let mut r = build_reporting(&c_good(&good)).unwrap();
        let f = craft::ethernet(MAC_B, MAC_A, 0x0800, &craft::icmp_echo(IN_HOST, OUT_HOST, true, 1, 1, b"x"));
        run(&mut r.nf, &f, INSIDE);
        run(&mut r.nf, &tcp(IN_HOST, OUT_HOST, 1, 22, SYN), INSIDE);
        let s = r.summary();
        assert!(s.contains("rule 2 (line 5): 1\n") && s.contains("rule 0 (line 3): 0\n"), "{s}");
        assert!(s.ends_with("default policy (DROP): 1\n"), "{s}");
        assert_eq!((DESCRIPTOR.build)(&Config::new()).err().unwrap().0, "--rules is required: file of filter rules, iptables-like (docs/nfs.md), e.g. `-A -p tcp --dport 80 -j ACCEPT`");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

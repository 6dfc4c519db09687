//! Seeded fuzz traffic for `emu sim --fuzz`: well-formed frames of the protocols the shipped NFs
//! speak (Ethernet, 802.1Q, ARP, IPv4 with options and fragments, ICMP echo, UDP, DNS,
//! memcached, TCP), aimed at the addresses, names and ports the NF's own options give, and a
//! third of them mutated (bits flipped, bytes set, cut, grown, IPv4 fields bent). Replies to what
//! the NF sent come back reversed, so paths that need a packet sequence (a learned MAC, a NAT
//! mapping, a cache hit) are taken too.
//!
//! The traffic depends only on the seed, the aims, and the frames the [`Fuzzer`] is shown with
//! [`Fuzzer::observe`]: `emu sim --fuzz N --seed S` gives the same frames on every machine (and
//! changes only when this file does).

use emu_core::craft::{self, TcpFlags, TcpSegment};
use emu_core::wire::ipv4;
use emu_core::{Ipv4Addr, Mac};

/// splitmix64: small, fast, and fixed here, so a seed means the same traffic in every version
/// of every dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// The generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One of `xs` (not empty).
    pub fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize].clone()
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// What the traffic aims at: the NF's own addresses, names and ports, found in its options'
/// values (and in the files they name, such as a zone or a rule file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Aims {
    /// MAC addresses.
    pub macs: Vec<Mac>,
    /// IPv4 addresses (a prefix's address counts).
    pub ips: Vec<Ipv4Addr>,
    /// TCP and UDP ports.
    pub ports: Vec<u16>,
    /// DNS names and labels.
    pub names: Vec<String>,
}

impl Aims {
    /// The aims in option values: each value's words, and the words of the file it names.
    pub fn of_values<'a>(values: impl IntoIterator<Item = &'a str>) -> Aims {
        let mut aims = Aims::default();
        for v in values {
            aims.add_words(v);
            let path = std::path::Path::new(v);
            if path.is_file() && path.metadata().map_or(false, |m| m.len() < 1 << 20) {
                if let Ok(text) = std::fs::read_to_string(path) {
                    aims.add_words(&text);
                }
            }
        }
        aims
    }

    fn add_words(&mut self, text: &str) {
        for line in text.lines() {
            // Comments in zone (`;`) and rule (`#`) files say nothing to aim at.
            let line = line.split([';', '#']).next().unwrap_or("");
            for word in line.split(|c: char| c.is_whitespace() || c == ',' || c == '=') {
                self.add_word(word);
            }
        }
    }

    fn add_word(&mut self, word: &str) {
        let word = word.trim_matches(|c: char| c == '"' || c == '\'');
        if word.is_empty() {
            return;
        }
        if let Ok(m) = word.parse::<Mac>() {
            push_new(&mut self.macs, m);
        } else if let Ok(ip) = word.split('/').next().unwrap_or("").parse::<Ipv4Addr>() {
            push_new(&mut self.ips, ip);
        } else if let Ok(p) = word.parse::<u16>() {
            if p > 0 {
                push_new(&mut self.ports, p);
            }
        } else if let Some((a, b)) = word.split_once(':').filter(|(a, _)| !a.is_empty()) {
            // A port range `lo:hi` (iptables) or `lo-hi`.
            for part in [a, b] {
                self.add_word(part);
            }
        } else if word.contains('-') && word.split('-').all(|p| p.parse::<u16>().is_ok()) {
            for part in word.split('-') {
                self.add_word(part);
            }
        } else if word.bytes().any(|b| b.is_ascii_alphabetic())
            && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_')
            && !word.starts_with('-')
            && word.len() <= 63
        {
            push_new(&mut self.names, word.trim_end_matches('.').to_ascii_lowercase());
        }
    }
}

fn push_new<T: PartialEq>(v: &mut Vec<T>, x: T) {
    if !v.contains(&x) && v.len() < 64 {
        v.push(x);
    }
}

/// One generated input frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fuzzed {
    /// The port it arrives on.
    pub port: u8,
    /// Its arrival time, ns.
    pub timestamp: u64,
    /// Its bytes.
    pub data: Vec<u8>,
}

/// A host of the generated traffic: it sends from one port (most of the time).
#[derive(Debug, Clone, Copy)]
struct Host {
    mac: Mac,
    ip: Ipv4Addr,
    port: u8,
}

/// The traffic generator.
#[derive(Debug, Clone)]
pub struct Fuzzer {
    rng: Rng,
    aims: Aims,
    ports: u8,
    hosts: Vec<Host>,
    time: u64,
    /// Frames the NF sent lately (port, bytes), for replies.
    recent: Vec<(u8, Vec<u8>)>,
    next_recent: usize,
    /// memcached keys and DNS-ish labels come from small sets, so that later packets hit what
    /// earlier ones stored.
    keys: Vec<String>,
}

/// The frames the reply history keeps.
const RECENT: usize = 32;

/// The largest frame made (the runner's default maximum, plus a little, for `oversize`).
const LONGEST: usize = emu_core::DEFAULT_MAX_FRAME + 8;

impl Fuzzer {
    /// Traffic from `seed` over `ports` ports (1 to 32) aimed at `aims`.
    pub fn new(seed: u64, ports: usize, aims: Aims) -> Fuzzer {
        let ports = ports.clamp(1, 32) as u8;
        let mut rng = Rng::new(seed);
        // Inside hosts 10.0.0.2–9 and outside ones in the documentation prefixes, spread over the
        // ports; the NF's own addresses are destinations, not senders.
        let mut hosts = vec![];
        for k in 0..12u8 {
            let ip = match k {
                0..=7 => Ipv4Addr::new(10, 0, 0, 2 + k),
                8..=9 => Ipv4Addr::new(203, 0, 113, 2 + k),
                _ => Ipv4Addr::new(198, 51, 100, k),
            };
            hosts.push(Host { mac: Mac::from_bytes([2, 0, 0, 0, 0x10, k]), ip, port: k % ports });
        }
        let keys = (0..8).map(|k| format!("k{k}")).chain(["user:42".into(), "a".repeat(40)]).collect();
        let time = 1_700_000_000_000_000_000 + rng.below(1_000_000_000);
        Fuzzer { rng, aims, ports, hosts, time, recent: vec![], next_recent: 0, keys }
    }

    /// Shows the generator a frame the NF sent out of `port`: later traffic may answer it.
    pub fn observe(&mut self, port: usize, frame: &[u8]) {
        let entry = (port as u8, frame.to_vec());
        if self.recent.len() < RECENT {
            self.recent.push(entry);
        } else {
            self.recent[self.next_recent] = entry;
            self.next_recent = (self.next_recent + 1) % RECENT;
        }
    }

    /// The next frame.
    pub fn next_frame(&mut self) -> Fuzzed {
        // Mostly microseconds apart, sometimes a pause of seconds to minutes: state that ages
        // (timeouts, token buckets) sees time pass.
        self.time += match self.rng.below(1000) {
            0..=2 => 1_000_000_000 * (1 + self.rng.below(300)),
            3..=50 => self.rng.below(50_000_000),
            _ => self.rng.below(20_000),
        };
        let src = self.rng.pick(&self.hosts);
        let mut port = if self.rng.chance(5) { self.rng.below(self.ports as u64) as u8 } else { src.port };
        let mut data = match self.rng.below(100) {
            0..=9 => self.l2(src),
            10..=19 => self.arp(src),
            20..=32 => self.icmp(src),
            33..=46 => self.dns(src),
            47..=60 => self.memcached(src),
            61..=65 => self.udp_other(src),
            66..=82 => self.tcp(src),
            _ => match self.reply() {
                Some((p, f)) => {
                    port = p;
                    f
                }
                None => self.l2(src),
            },
        };
        if self.rng.chance(12) {
            self.tag(&mut data);
        }
        if self.rng.chance(30) {
            for _ in 0..1 + self.rng.below(3) {
                self.mutate(&mut data);
            }
        }
        data.truncate(LONGEST);
        Fuzzed { port, timestamp: self.time, data }
    }

    /// A destination: mostly another host, a third of the time the NF itself (its addresses,
    /// as a host that has ARPed for it would send), sometimes broadcast or anywhere.
    fn dst(&mut self, src: Host) -> (Mac, Ipv4Addr) {
        let host = loop {
            let h = self.rng.pick(&self.hosts);
            if h.mac != src.mac || self.rng.chance(5) {
                break h;
            }
        };
        let at_nf = !self.aims.ips.is_empty() && self.rng.chance(35);
        let mac = match self.rng.below(10) {
            0 => Mac::BROADCAST,
            1..=8 if at_nf && !self.aims.macs.is_empty() => self.rng.pick(&self.aims.macs),
            1..=2 if !self.aims.macs.is_empty() => self.rng.pick(&self.aims.macs),
            _ => host.mac,
        };
        let ip = match self.rng.below(10) {
            _ if at_nf => self.rng.pick(&self.aims.ips),
            0 => Ipv4Addr(self.rng.next() as u32),
            _ => host.ip,
        };
        (mac, ip)
    }

    fn port_number(&mut self) -> u16 {
        match self.rng.below(10) {
            0..=4 if !self.aims.ports.is_empty() => self.rng.pick(&self.aims.ports),
            5 => self.rng.pick(&[22, 53, 80, 443, 11211, 123]),
            _ => 1024 + self.rng.below(64_000) as u16,
        }
    }

    fn l2(&mut self, src: Host) -> Vec<u8> {
        let (dst, _) = self.dst(src);
        let ty = self.rng.pick(&[0x88b6, 0x86dd, 0x0800, 0x0806, 0x8100, 0x9000, 0x0600, 0x05dc]);
        let n = self.rng.below(80) as usize;
        let payload = self.rng.bytes(n);
        craft::ethernet(dst, src.mac, ty, &payload)
    }

    fn arp(&mut self, src: Host) -> Vec<u8> {
        let (dst_mac, tpa) = self.dst(src);
        let oper = if self.rng.chance(70) { 1 } else { 2 };
        let (eth_dst, tha) = if oper == 1 { (Mac::BROADCAST, Mac::from_bytes([0; 6])) } else { (dst_mac, dst_mac) };
        craft::ethernet(eth_dst, src.mac, 0x0806, &craft::arp(oper, src.mac, src.ip, tha, tpa))
    }

    /// An IPv4 packet in an Ethernet frame, with options or fragment bits now and then.
    fn ip_frame(&mut self, src: Host, dst: Mac, packet: Vec<u8>) -> Vec<u8> {
        let mut packet = packet;
        if self.rng.chance(8) {
            let words = 1 + self.rng.below(10) as usize;
            let mut opts = vec![1u8; words * 4];
            if self.rng.chance(50) {
                opts[words * 4 - 1] = 0; // end of options list
            }
            packet.splice(20..20, opts);
            packet[0] = 0x40 | (5 + words as u8);
            let total = packet.len() as u16;
            packet[2..4].copy_from_slice(&total.to_be_bytes());
            self.fix_ipv4(&mut packet);
        }
        if self.rng.chance(4) {
            let offset = if self.rng.chance(50) { 0 } else { 1 + self.rng.below(0x1fff) as u16 };
            let more = self.rng.chance(50) as u16;
            packet[6..8].copy_from_slice(&(more << 13 | offset).to_be_bytes());
            self.fix_ipv4(&mut packet);
        }
        craft::ethernet(dst, src.mac, 0x0800, &packet)
    }

    fn fix_ipv4(&mut self, packet: &mut [u8]) {
        let Some(first) = packet.first() else { return };
        let ihl = (first & 0xf) as usize * 4;
        if ihl >= 20 && packet.len() >= ihl {
            ipv4::Header::new_unchecked(&mut packet[..ihl]).fill_checksum();
        }
    }

    fn icmp(&mut self, src: Host) -> Vec<u8> {
        let (mac, ip) = self.dst(src);
        let request = self.rng.chance(80);
        let n = self.rng.pick(&[0usize, 8, 56, 56, 100, 1400]);
        let data = self.rng.bytes(n);
        let (ident, seq) = (self.rng.below(4) as u16, self.rng.below(8) as u16);
        let packet = craft::icmp_echo(src.ip, ip, request, ident, seq, &data);
        self.ip_frame(src, mac, packet)
    }

    fn qname(&mut self) -> String {
        let name = match self.rng.below(10) {
            0..=5 if !self.aims.names.is_empty() => self.rng.pick(&self.aims.names),
            6..=7 if !self.aims.names.is_empty() => {
                let label = self.rng.pick(&["www", "mail", "a", "ns1", "x-y"]);
                format!("{label}.{}", self.rng.pick(&self.aims.names))
            }
            _ => {
                let labels = 1 + self.rng.below(4);
                (0..labels).map(|_| self.rng.pick(&["example", "com", "emu", "test", "org", "q"])).collect::<Vec<_>>().join(".")
            }
        };
        name
    }

    fn dns(&mut self, src: Host) -> Vec<u8> {
        let (mac, ip) = self.dst(src);
        let mut m = vec![];
        m.extend((self.rng.next() as u16).to_be_bytes());
        // Flags: a standard query with RD, now and then a response or an odd opcode.
        let flags: u16 = self.rng.pick(&[0x0100, 0x0100, 0x0000, 0x8180, 0x2800, 0x0120]);
        m.extend(flags.to_be_bytes());
        let qdcount: u16 = self.rng.pick(&[1, 1, 1, 0, 2]);
        m.extend(qdcount.to_be_bytes());
        m.extend([0, 0, 0, 0, 0, if self.rng.chance(20) { 1 } else { 0 }]);
        let name = self.qname();
        for label in name.split('.') {
            m.push(label.len() as u8);
            m.extend(label.as_bytes());
        }
        if self.rng.chance(5) {
            // A compression pointer where a question has none.
            m.extend([0xc0, 12]);
        } else {
            m.push(0);
        }
        let qtype: u16 = self.rng.pick(&[1, 1, 1, 28, 15, 255, 16]);
        let qclass: u16 = if self.rng.chance(95) { 1 } else { 3 };
        m.extend(qtype.to_be_bytes());
        m.extend(qclass.to_be_bytes());
        if self.rng.chance(20) {
            // An EDNS OPT record.
            m.extend([0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0]);
        }
        self.udp_to(src, (mac, ip), 53, &m)
    }

    fn memcached(&mut self, src: Host) -> Vec<u8> {
        let (mac, ip) = self.dst(src);
        // The UDP frame header: request id, sequence number, datagrams, reserved.
        let mut m = vec![];
        m.extend((self.rng.below(4) as u16).to_be_bytes());
        m.extend([0, 0, 0, 1, 0, 0]);
        if self.rng.chance(3) {
            m[5] = 2; // one of two datagrams
        }
        let key = self.rng.pick(&self.keys);
        let value_len = self.rng.pick(&[0usize, 1, 5, 32, 200]);
        let value: String = (0..value_len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
        let line = match self.rng.below(10) {
            0..=3 => format!("get {key}\r\n"),
            4 => format!("gets {key} {}\r\n", self.rng.pick(&self.keys)),
            5..=7 => format!("set {key} {} 0 {value_len}\r\n{value}\r\n", self.rng.below(4)),
            8 => format!("delete {key}\r\n"),
            _ => self.rng.pick(&["version\r\n", "stats\r\n", "get\r\n", "bogus k0\r\n", "get k0"]).to_string(),
        };
        m.extend(line.as_bytes());
        if self.rng.chance(5) {
            // memcached's binary protocol: a GET request.
            m.truncate(8);
            m.extend([0x80, 0x00, 0, key.len() as u8, 0, 0, 0, 0, 0, 0, 0, key.len() as u8]);
            m.extend([0; 12]);
            m.extend(key.as_bytes());
        }
        self.udp_to(src, (mac, ip), 11211, &m)
    }

    /// A UDP datagram from `src` to `dst`, mostly to the service's `port`, in an Ethernet frame.
    fn udp_to(&mut self, src: Host, dst: (Mac, Ipv4Addr), port: u16, payload: &[u8]) -> Vec<u8> {
        let sport = self.port_number();
        let dport = if self.rng.chance(85) { port } else { self.port_number() };
        let packet = craft::udp(src.ip, sport, dst.1, dport, payload);
        self.ip_frame(src, dst.0, packet)
    }

    fn udp_other(&mut self, src: Host) -> Vec<u8> {
        let (mac, ip) = self.dst(src);
        let (sport, dport) = (self.port_number(), self.port_number());
        let n = self.rng.pick(&[0usize, 1, 18, 64, 512]);
        let payload = self.rng.bytes(n);
        let packet = craft::udp(src.ip, sport, ip, dport, &payload);
        self.ip_frame(src, mac, packet)
    }

    fn tcp(&mut self, src: Host) -> Vec<u8> {
        let (mac, ip) = self.dst(src);
        let flags = match self.rng.below(10) {
            0..=4 => TcpFlags { syn: true, ..TcpFlags::default() },
            5 => TcpFlags { syn: true, ack: true, ..TcpFlags::default() },
            6..=7 => TcpFlags { ack: true, psh: self.rng.chance(50), ..TcpFlags::default() },
            8 => TcpFlags { rst: true, ack: self.rng.chance(50), ..TcpFlags::default() },
            _ => TcpFlags { fin: true, ack: true, ..TcpFlags::default() },
        };
        let seg = TcpSegment {
            src_port: self.port_number(),
            dst_port: self.port_number(),
            seq_no: self.rng.next() as u32,
            ack_no: if flags.ack { self.rng.next() as u32 } else { 0 },
            flags,
        };
        let n = if flags.syn { 0 } else { self.rng.pick(&[0usize, 10, 100]) };
        let payload = self.rng.bytes(n);
        let packet = craft::tcp(src.ip, ip, seg, &payload);
        self.ip_frame(src, mac, packet)
    }

    /// A frame the NF sent, reversed (MACs, and for IPv4 the addresses and the TCP/UDP
    /// ports), back into the port it left by: a reply as the far host would send it.
    fn reply(&mut self) -> Option<(u8, Vec<u8>)> {
        if self.recent.is_empty() {
            return None;
        }
        let (port, mut f) = self.rng.pick(&self.recent);
        if f.len() < 14 {
            return None;
        }
        let (dst, src) = (f[0..6].to_vec(), f[6..12].to_vec());
        f[0..6].copy_from_slice(&src);
        f[6..12].copy_from_slice(&dst);
        let mut off = 14;
        while f.get(off - 2..off) == Some(&[0x81, 0x00]) && f.len() >= off + 4 {
            off += 4;
        }
        if f.get(off - 2..off) == Some(&[0x08, 0x00]) && f.len() >= off + 20 {
            let ihl = (f[off] & 0xf) as usize * 4;
            let (a, b) = (f[off + 12..off + 16].to_vec(), f[off + 16..off + 20].to_vec());
            f[off + 12..off + 16].copy_from_slice(&b);
            f[off + 16..off + 20].copy_from_slice(&a);
            let l4 = off + ihl;
            if matches!(f[off + 9], 6 | 17) && ihl >= 20 && f.len() >= l4 + 4 {
                let (sp, dp) = (f[l4..l4 + 2].to_vec(), f[l4 + 2..l4 + 4].to_vec());
                f[l4..l4 + 2].copy_from_slice(&dp);
                f[l4 + 2..l4 + 4].copy_from_slice(&sp);
            }
            // The checksums cover both addresses and both ports: a swap leaves them right.
        }
        Some((port, f))
    }

    /// An 802.1Q tag (or two) after the MACs.
    fn tag(&mut self, f: &mut Vec<u8>) {
        if f.len() < 12 {
            return;
        }
        let tags = if self.rng.chance(25) { 2 } else { 1 };
        for _ in 0..tags {
            let vid = self.rng.pick(&[0u16, 1, 10, 100, 4095]);
            let tci = (self.rng.below(8) as u16) << 13 | vid;
            let mut tag = vec![0x81, 0x00];
            tag.extend(tci.to_be_bytes());
            f.splice(12..12, tag);
        }
    }

    /// One random damage to a frame.
    fn mutate(&mut self, f: &mut Vec<u8>) {
        // The headers are where checks are: most damage falls in the first 64 bytes.
        let at = |rng: &mut Rng, len: usize| -> usize {
            if len == 0 {
                0
            } else if rng.chance(80) {
                rng.below(len.min(64) as u64) as usize
            } else {
                rng.below(len as u64) as usize
            }
        };
        match self.rng.below(12) {
            0..=2 if !f.is_empty() => {
                let i = at(&mut self.rng, f.len());
                f[i] ^= 1 << self.rng.below(8);
            }
            3..=4 if !f.is_empty() => {
                let i = at(&mut self.rng, f.len());
                let any = self.rng.next() as u8;
                f[i] = self.rng.pick(&[0x00, 0xff, 0x80, 0x7f, 0x01, any]);
            }
            5..=6 => {
                let cut = at(&mut self.rng, f.len() + 1);
                f.truncate(cut);
            }
            7 => {
                let n = 1 + self.rng.below(64) as usize;
                let more = self.rng.bytes(n);
                f.extend(more);
            }
            8 if self.rng.chance(10) => {
                let n = emu_core::DEFAULT_MAX_FRAME - f.len().min(emu_core::DEFAULT_MAX_FRAME) + self.rng.below(3) as usize;
                f.extend(std::iter::repeat(0x5a).take(n));
            }
            _ => self.bend_ipv4(f),
        }
    }

    /// Sets one IPv4 header field to an edge value, and sometimes mends the checksum so that
    /// the checks after it are reached.
    fn bend_ipv4(&mut self, f: &mut [u8]) {
        let mut off = 14;
        while f.get(off - 2..off) == Some(&[0x81, 0x00]) {
            off += 4;
        }
        if f.get(off - 2..off) != Some(&[0x08, 0x00]) || f.len() < off + 20 {
            return;
        }
        let h = &mut f[off..];
        match self.rng.below(6) {
            0 => h[0] = (h[0] & 0xf0) | self.rng.below(16) as u8,
            1 => h[0] = (self.rng.below(16) as u8) << 4 | (h[0] & 0xf),
            2 => {
                let total = u16::from_be_bytes([h[2], h[3]]);
                let bent = match self.rng.below(4) {
                    0 => total.wrapping_sub(1),
                    1 => total.wrapping_add(1),
                    2 => self.rng.below(40) as u16,
                    _ => self.rng.next() as u16,
                };
                h[2..4].copy_from_slice(&bent.to_be_bytes());
            }
            3 => h[8] = self.rng.pick(&[0, 1, 255]),
            4 => h[9] = self.rng.pick(&[0, 1, 2, 6, 17, 47, 255]),
            _ => h[10..12].copy_from_slice(&(self.rng.next() as u16).to_be_bytes()),
        }
        if self.rng.chance(60) {
            let end = off + ((f[off] & 0xf) as usize * 4).min(f.len() - off);
            self.fix_ipv4(&mut f[off..end]);
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use emu_core::{check_frame, DropReason};
    use std::collections::BTreeMap;

    #[test]
    fn a_seed_is_the_same_traffic() {
        let aims = Aims::default();
        let a: Vec<Fuzzed> = (0..200).scan(Fuzzer::new(7, 4, aims.clone()), |f, _| Some(f.next_frame())).collect();
        let b: Vec<Fuzzed> = (0..200).scan(Fuzzer::new(7, 4, aims.clone()), |f, _| Some(f.next_frame())).collect();
        let c: Vec<Fuzzed> = (0..200).scan(Fuzzer::new(8, 4, aims), |f, _| Some(f.next_frame())).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.windows(2).all(|w| w[0].timestamp <= w[1].timestamp));
        assert!(a.iter().all(|f| f.port < 4));
    }

    #[test]
    fn the_aims_come_from_the_options_and_their_files() {
        let dir = tempfile::tempdir().unwrap();
        let zone = dir.path().join("zone");
        std::fs::write(&zone, "$ORIGIN emu.test.\n; a comment 1.2.3.4\nwww 300 IN A 10.0.0.80\n").unwrap();
        let z = zone.to_str().unwrap();
        let aims = Aims::of_values(["02:00:00:00:00:53", "203.0.113.1/24", "22,80,443", "1024-2047", z]);
        assert_eq!(aims.macs, [Mac::from_bytes([2, 0, 0, 0, 0, 0x53])]);
        assert_eq!(aims.ips, [Ipv4Addr::new(203, 0, 113, 1), Ipv4Addr::new(10, 0, 0, 80)]);
        assert_eq!(aims.ports, [22, 80, 443, 1024, 2047, 300]);
        assert!(aims.names.contains(&"emu.test".to_string()) && aims.names.contains(&"www".to_string()), "{aims:?}");
        assert!(!aims.names.iter().any(|n| n.contains("comment")), "{aims:?}");
    }

    /// The traffic reaches the NF (most frames pass the ingress checks) and every check's
    /// drop too: a fuzzer whose frames all die at one check tests nothing else.
    #[test]
    fn the_traffic_takes_every_ingress_path() {
        let mut fz = Fuzzer::new(1, 4, Aims::of_values(["10.0.0.1", "02:00:00:00:00:01", "80"]));
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for _ in 0..20_000 {
            let f = fz.next_frame();
            let k = match check_frame(&f.data, emu_core::DEFAULT_MAX_FRAME) {
                Ok(()) => "passes",
                Err(r) => r.name(),
            };
            *seen.entry(k).or_default() += 1;
        }
        assert!(seen["passes"] > 15_000, "{seen:?}");
        for r in [
            DropReason::Empty,
            DropReason::Runt,
            DropReason::Oversize,
            DropReason::Ipv4Version,
            DropReason::Ipv4HeaderLength,
            DropReason::Ipv4TotalLength,
        ] {
            assert!(seen.get(r.name()).copied().unwrap_or(0) >= 5, "{} only {:?} times: {seen:?}", r.name(), seen.get(r.name()));
        }
    }

    #[test]
    fn a_reply_reverses_what_the_nf_sent() {
        let mut fz = Fuzzer::new(3, 4, Aims::default());
        let a = Ipv4Addr::new(10, 0, 0, 2);
        let b = Ipv4Addr::new(10, 0, 0, 3);
        let sent = craft::ethernet(
            Mac::from_bytes([2, 0, 0, 0, 0, 2]),
            Mac::from_bytes([2, 0, 0, 0, 0, 1]),
            0x0800,
            &craft::udp(b, 53, a, 4000, b"x"),
        );
        fz.observe(2, &sent);
        let (port, got) = fz.reply().unwrap();
        let want = craft::ethernet(
            Mac::from_bytes([2, 0, 0, 0, 0, 1]),
            Mac::from_bytes([2, 0, 0, 0, 0, 2]),
            0x0800,
            &craft::udp(a, 4000, b, 53, b"x"),
        );
        assert_eq!((port, got), (2, want));
    }
}

//! Traffic statistics in a learning switch: packet and byte counters per IPv4 flow (the
//! 5-tuple), by EtherType class for everything else, and a packet-size histogram, read at the
//! end of a run through [`NetworkFunction::summary`] (`emu run` prints it).
//!
//! For every frame the NF sees (the ingress checks of every target have already dropped runts,
//! frames over the maximum, and IPv4 whose version, IHL or total length is wrong), in this
//! order:
//!
//! 1. **Totals and sizes.** `packets` and `bytes` count it; `sizes` counts it in the bucket of
//!    its length (RMON's etherStats buckets, RFC 2819, of the frame as the NF sees it, without
//!    FCS): under 64, 64, 65–127, 128–255, 256–511, 512–1023, 1024–1518, over 1518. (RFC 2819
//!    counts the FCS: a minimum-size frame, 60 bytes here, is RMON's 64-octet packet.)
//! 2. **Its class.** After up to two 802.1Q tags ([`Packet::l3`]), an IPv4 packet whose header
//!    checksum verifies is a **flow** packet: its 5-tuple (protocol, source and destination
//!    address, source and destination port) is counted in `flows`. Ports are read for TCP, UDP,
//!    DCCP, SCTP and UDP-Lite (the ports in the same first four bytes); other protocols (ICMP,
//!    …) and fragments after the first (they carry no transport header) have ports 0. Any other
//!    frame is counted, packets and bytes, in its class in `classes`: [`MALFORMED`] (an IPv4
//!    header checksum that fails, or a first fragment of a port protocol too short to hold its
//!    ports), [`ARP`], [`IPV6`], [`OTHER`] (other EtherTypes, three or more VLAN tags).
//! 3. **Switching.** Every frame, whatever its class, is switched as by `learning-switch` (a
//!    16-entry MAC table; group and unknown destinations flood; a destination on the input port
//!    is dropped `same_port`): the NF sits between hosts and counts what they send. Malformed
//!    IPv4 is switched too: a switch does not judge layer 3, and a monitor must not change what
//!    it watches.
//!
//! **A full flow table.** `flows` is a set-associative [`HashTable`] of [`FLOW_SLOTS`] flows
//! (4 ways). A new flow whose set is full evicts one (round robin in the set): `evictions`
//! counts it and its packets and bytes move to `evicted_packets` and `evicted_bytes` ("other
//! flows"), so nothing is lost: at any time, `packets` is the sum of the flows' packets,
//! `evicted_packets` and the classes' packets, and the same holds for bytes.
//!
//! Every counter is 64 bits wide on every target and wraps at 2<sup>64</sup> (packets and bytes
//! of a flow each in their own 64 bits of the entry). The state's field names are what the
//! debugger addresses them by: `emu dbg SOCKET --exec 'read packets; read sizes[2]'` on a live run.
//!
//! ```
//! use emu::craft;
//! use emu::prelude::*;
//!
//! let (a, b) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
//! let (mac_a, mac_b) = (Mac::from_bytes([2, 0, 0, 0, 0, 1]), Mac::from_bytes([2, 0, 0, 0, 0, 2]));
//! let mut nf = stats::Stats::new();
//! for _ in 0..3 {
//!     let mut f = craft::ethernet(mac_b, mac_a, 0x0800, &craft::udp(a, 40000, b, 53, &[0; 100]));
//!     let meta = Meta { in_port: 0, len: f.len() as u16, timestamp: 0 };
//!     assert_eq!(nf.process(&mut Packet::new(&mut f, stats::WINDOW), &meta), Action::Flood);
//! }
//! let flow = nf.flows_by_bytes()[0];
//! assert_eq!((flow.sport, flow.dport, flow.packets, flow.bytes), (40000, 53, 3, 3 * 142));
//! assert_eq!(nf.sizes.get(3), 3, "142-byte frames: the 128-255 bucket");
//! print!("{}", nf.report(Some(20)));
//! ```
#![deny(missing_docs)]

use emu::prelude::*;
use std::fmt::Write as _;

pub use self::stats::*;

/// Two 802.1Q tags, a 60-byte IPv4 header and the four bytes of ports fit in the window.
pub const WINDOW: usize = self::stats::HLS_WINDOW;

/// The statistics NF as one NF module: `#[emu::nf]` checks it against the synthesizable
/// subset, and the HLS compiler builds its state and `process` as hardware.
#[emu::nf(ports = 4, window = 96)]
pub mod stats {
    use emu::prelude::*;

    /// Flows the flow table holds (64 sets of 4 ways).
    pub const FLOW_SLOTS: usize = 256;
    /// Entries in the MAC table of the switch around the counters.
    pub const MAC_TABLE_SIZE: usize = 16;
    /// Buckets of the size histogram: under 64, 64, 65–127, 128–255, 256–511, 512–1023,
    /// 1024–1518, over 1518 bytes.
    pub const SIZE_BUCKETS: usize = 8;
    /// Classes of the frames that are not flow packets.
    pub const CLASSES: usize = 4;
    /// Class of IPv4 with a wrong header checksum, or ports cut short.
    pub const MALFORMED: usize = 0;
    /// Class of ARP frames.
    pub const ARP: usize = 1;
    /// Class of IPv6 frames.
    pub const IPV6: usize = 2;
    /// Class of every other EtherType (and of frames with more than two VLAN tags).
    pub const OTHER: usize = 3;

    /// The statistics' state.
    #[derive(Debug)]
    pub struct Stats {
        /// IPv4 flow → its packets [127:64] and bytes [63:0]. The key: protocol [103:96],
        /// source address [95:64], destination address [63:32], source port [31:16],
        /// destination port [15:0] ([`flow_key`](crate::flow_key) builds one).
        pub flows: HashTable<u128, u128, FLOW_SLOTS, 4>,
        /// Flows evicted from a full set of `flows`.
        pub evictions: Counter,
        /// The packets of the evicted flows.
        pub evicted_packets: Counter,
        /// The bytes of the evicted flows.
        pub evicted_bytes: Counter,
        /// By class ([`MALFORMED`], [`ARP`], [`IPV6`], [`OTHER`]): packets [127:64] and
        /// bytes [63:0] of frames that are not flow packets.
        pub classes: Array<u128, CLASSES>,
        /// Packets by size bucket (RFC 2819's etherStatsPkts64Octets … 1024to1518Octets,
        /// with under 64 first and over 1518 last).
        pub sizes: Array<u64, SIZE_BUCKETS>,
        /// Every frame the NF saw.
        pub packets: Counter,
        /// Their bytes.
        pub bytes: Counter,
        /// Source MAC → the port it was last seen on.
        pub mac_table: Cam<Mac, Port, MAC_TABLE_SIZE>,
        /// Frames flooded by the switch.
        pub floods: Counter,
    }

    impl Default for Stats {
        fn default() -> Self {
            Stats::new()
        }
    }

    impl Stats {
        /// Empty counters and tables.
        pub fn new() -> Stats {
            Stats {
                flows: HashTable::new(),
                evictions: Counter::default(),
                evicted_packets: Counter::default(),
                evicted_bytes: Counter::default(),
                classes: Array::new(),
                sizes: Array::new(),
                packets: Counter::default(),
                bytes: Counter::default(),
                mac_table: Cam::default(),
                floods: Counter::default(),
            }
        }

        fn switch(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let dst = pkt.ethernet().dst();
            if dst.is_multicast() {
                self.floods.inc();
                return Action::Flood;
            }
            match self.mac_table.get(dst) {
                Some(port) if port == meta.in_port => Action::Drop(DropReason::SamePort),
                Some(port) => Action::Forward(port),
                None => {
                    self.floods.inc();
                    Action::Flood
                }
            }
        }

        /// Adds one packet of `len` bytes to class `class`.
        fn count_class(&mut self, class: usize, len: u16) {
            let v = self.classes.get(class);
            self.classes.set(class, add_packet(v, len));
        }

        /// Adds one packet of `len` bytes to the flow `key`, evicting another if its set is
        /// full.
        fn count_flow(&mut self, key: u128, len: u16) {
            match self.flows.get(key) {
                Some(v) => {
                    self.flows.insert(key, add_packet(v, len));
                }
                None => {
                    if let Some((_, victim)) = self.flows.insert(key, 1u128 << 64 | len as u128) {
                        self.evictions.inc();
                        self.evicted_packets.add((victim >> 64) as u64);
                        self.evicted_bytes.add(victim as u64);
                    }
                }
            }
        }

        /// Counts an IPv4 packet whose header starts at `l3`: as a flow packet, or malformed.
        fn count_ipv4(&mut self, pkt: &mut Packet, l3: usize, len: u16) {
            let ip = pkt.ipv4_at(l3);
            if !ip.checksum_ok() {
                self.count_class(MALFORMED, len);
                return;
            }
            let (proto, src, dst) = (ip.protocol(), ip.src(), ip.dst());
            let l4 = l3 + ip.header_len();
            // The ingress checks guarantee header_len <= total_len.
            let seg_len = ip.total_len() as usize - ip.header_len();
            let first = ip.frag_offset().value() == 0;
            let mut sport = 0u16;
            let mut dport = 0u16;
            if first && has_ports(proto) {
                if seg_len < 4 {
                    self.count_class(MALFORMED, len);
                    return;
                }
                sport = (pkt.byte(l4) as u16) << 8 | pkt.byte(l4 + 1) as u16;
                dport = (pkt.byte(l4 + 2) as u16) << 8 | pkt.byte(l4 + 3) as u16;
            }
            let key = (proto as u128) << 96
                | (src.0 as u128) << 64
                | (dst.0 as u128) << 32
                | (sport as u128) << 16
                | dport as u128;
            self.count_flow(key, len);
        }
    }

    /// A packets [127:64] and bytes [63:0] pair with one packet of `len` bytes more, each half
    /// wrapping on its own.
    fn add_packet(v: u128, len: u16) -> u128 {
        let packets = ((v >> 64) as u64).wrapping_add(1);
        let bytes = (v as u64).wrapping_add(len as u64);
        (packets as u128) << 64 | bytes as u128
    }

    /// TCP, UDP, DCCP, SCTP, UDP-Lite: source and destination port in the first four bytes.
    fn has_ports(proto: u8) -> bool {
        proto == 6 || proto == 17 || proto == 33 || proto == 132 || proto == 136
    }

    /// The size bucket of a frame of `len` bytes: how many of the buckets' lower bounds it
    /// reaches (comparisons side by side, not a chain of branches, in hardware).
    fn size_bucket(len: u16) -> usize {
        (len >= 64) as usize
            + (len >= 65) as usize
            + (len >= 128) as usize
            + (len >= 256) as usize
            + (len >= 512) as usize
            + (len >= 1024) as usize
            + (len >= 1519) as usize
    }

    impl NetworkFunction for Stats {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let len = meta.len;
            self.packets.inc();
            self.bytes.add(len as u64);
            let bucket = size_bucket(len);
            let n = self.sizes.get(bucket);
            self.sizes.set(bucket, n.wrapping_add(1));

            let (l3, ethertype) = pkt.l3();
            if ethertype == 0x0800 {
                self.count_ipv4(pkt, l3, len);
            } else if ethertype == 0x0806 {
                self.count_class(ARP, len);
            } else if ethertype == 0x86dd {
                self.count_class(IPV6, len);
            } else {
                self.count_class(OTHER, len);
            }

            let src = pkt.ethernet().src();
            if !src.is_multicast() {
                self.mac_table.insert(src, meta.in_port);
            }
            self.switch(pkt, meta)
        }
    }
}

/// A flow's key in `flows`, as [`Stats::flows`] lays it out.
pub fn flow_key(proto: u8, src: Ipv4Addr, sport: u16, dst: Ipv4Addr, dport: u16) -> u128 {
    (proto as u128) << 96 | (src.0 as u128) << 64 | (dst.0 as u128) << 32 | (sport as u128) << 16 | dport as u128
}

/// One flow of the table, taken apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flow {
    /// IPv4 protocol.
    pub proto: u8,
    /// Source address.
    pub src: Ipv4Addr,
    /// Source port (0 for protocols without ports and fragments after the first).
    pub sport: u16,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Destination port.
    pub dport: u16,
    /// Packets counted.
    pub packets: u64,
    /// Their bytes.
    pub bytes: u64,
}

impl Flow {
    /// The flow stored as `key` → `value` in [`Stats::flows`].
    pub fn from_entry(key: u128, value: u128) -> Flow {
        Flow {
            proto: (key >> 96) as u8,
            src: Ipv4Addr((key >> 64) as u32),
            dst: Ipv4Addr((key >> 32) as u32),
            sport: (key >> 16) as u16,
            dport: key as u16,
            packets: (value >> 64) as u64,
            bytes: value as u64,
        }
    }
}

/// The names of [`Stats::classes`]' slots, as the summary prints them.
pub const CLASS_NAMES: [&str; CLASSES] = ["ipv4-malformed", "arp", "ipv6", "other"];
/// The names of [`Stats::sizes`]' buckets, as the summary prints them.
pub const BUCKET_NAMES: [&str; SIZE_BUCKETS] =
    ["<64", "64", "65-127", "128-255", "256-511", "512-1023", "1024-1518", ">1518"];

fn proto_name(proto: u8) -> String {
    match proto {
        1 => "icmp".into(),
        6 => "tcp".into(),
        17 => "udp".into(),
        33 => "dccp".into(),
        132 => "sctp".into(),
        136 => "udplite".into(),
        p => format!("proto-{p}"),
    }
}

impl Stats {
    /// The flows in the table, most bytes first (then most packets, then by key, so the order
    /// is the same on every run).
    pub fn flows_by_bytes(&self) -> Vec<Flow> {
        let mut flows: Vec<(u128, Flow)> = self.flows.entries().map(|(_, k, v)| (k, Flow::from_entry(k, v))).collect();
        flows.sort_by(|(ka, a), (kb, b)| b.bytes.cmp(&a.bytes).then(b.packets.cmp(&a.packets)).then(ka.cmp(kb)));
        flows.into_iter().map(|(_, f)| f).collect()
    }

    /// The report at the end of a run, one item a line, each `name value` pairs after a
    /// label, so a script can read it: totals, the flows (table and evicted), the classes, the
    /// size histogram, and the `top` flows with most bytes (`None`: all of them).
    pub fn report(&self, top: Option<usize>) -> String {
        let flows = self.flows_by_bytes();
        let (flow_packets, flow_bytes) =
            flows.iter().fold((0u64, 0u64), |(p, b), f| (p.wrapping_add(f.packets), b.wrapping_add(f.bytes)));
        let mut s = String::new();
        let _ = writeln!(s, "stats: total packets {} bytes {}", self.packets.get(), self.bytes.get());
        let _ = writeln!(
            s,
            "  flows packets {flow_packets} bytes {flow_bytes} (in the table: {} of {FLOW_SLOTS})",
            flows.len()
        );
        let _ = writeln!(
            s,
            "  evicted packets {} bytes {} (flows evicted: {})",
            self.evicted_packets.get(),
            self.evicted_bytes.get(),
            self.evictions.get()
        );
        for (class, name) in CLASS_NAMES.iter().enumerate() {
            let v = self.classes.get(class);
            let _ = writeln!(s, "  {name} packets {} bytes {}", (v >> 64) as u64, v as u64);
        }
        let _ = writeln!(s, "stats: packet sizes (bytes, without FCS)");
        for (bucket, name) in BUCKET_NAMES.iter().enumerate() {
            let _ = writeln!(s, "  size {name} packets {}", self.sizes.get(bucket));
        }
        let shown = top.unwrap_or(flows.len()).min(flows.len());
        let _ = writeln!(s, "stats: top {shown} of {} flows by bytes", flows.len());
        for f in &flows[..shown] {
            let _ = writeln!(
                s,
                "  flow {} {}:{} > {}:{} packets {} bytes {}",
                proto_name(f.proto),
                f.src,
                f.sport,
                f.dst,
                f.dport,
                f.packets,
                f.bytes
            );
        }
        s
    }
}

/// The statistics as the CPU target runs them: the NF and how many flows its summary lists.
pub struct Reporting {
    /// The NF.
    pub nf: Stats,
    /// Flows the summary lists, most bytes first; `None` lists all.
    pub top: Option<usize>,
}

impl NetworkFunction for Reporting {
    #[inline]
    fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
        self.nf.process(pkt, meta)
    }

    fn summary(&self) -> String {
        self.nf.report(self.top)
    }

    /// The debugger sees the NF's state.
    fn elements(&mut self) -> Vec<(&'static str, &mut dyn emu::state::Element)> {
        self.nf.elements()
    }

    fn probes(&self) -> Option<&'static std::thread::LocalKey<emu::probe::Probes>> {
        self.nf.probes()
    }
}

const TOP: Param = Param {
    name: "top",
    help: "flows the summary at exit lists, most bytes first: a number, or `all`",
    default: Some("20"),
};

/// Reads `--top`: a number of flows, or `all` (`None`).
pub fn parse_top(text: &str) -> Result<Option<usize>, String> {
    match text.trim() {
        "all" => Ok(None),
        t => t.parse::<usize>().map(Some).map_err(|_| format!("`{t}` is not a number of flows; write e.g. 20, or all")),
    }
}

/// The NF as `config` describes it, with its summary.
pub fn build(config: &Config) -> Result<Reporting, ConfigError> {
    let raw = config.raw(&TOP)?;
    let top = parse_top(raw).map_err(|e| ConfigError(format!("--top {raw}: {e}")))?;
    Ok(Reporting { nf: Stats::new(), top })
}

/// How the tools find and build the statistics NF.
pub const DESCRIPTOR: NfDescriptor = NfDescriptor {
    name: "stats",
    summary: "per-flow (IPv4 5-tuple) packet and byte counters and a size histogram in a learning switch",
    ports: HLS_PORTS,
    window: WINDOW,
    params: &[TOP],
    build: |c| Ok(Box::new(build(c)?)),
    hls_source: Some(HLS_SOURCE),
    // No configuration registers: `--top` only shapes the CPU's summary (still checked here, so
    // `emu hls stats --top x` fails as `emu run` does).
};

#[cfg(test)]
mod test;

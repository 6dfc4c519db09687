//! An authoritative DNS server for one IPv4 address, answering A queries from a zone file,
//! in front of a learning switch that carries all other traffic.
//!
//! - **Queries** are IPv4 UDP datagrams to `--ip`, port 53 (untagged Ethernet, no IPv4
//!   options). The zone ([`zone`]: a subset of the RFC 1035 master-file format, A records
//!   only) is loaded at start into `zone`, a fully associative table keyed by the name in wire
//!   format, lowercase, zero-padded to [`NAME_MAX`] bytes; names compare case-insensitively
//!   (RFC 4343) and the answer carries the question as it was sent.
//! - **Answers** go back out of the input port from the server's MAC, address and port 53,
//!   with both checksums computed. The header keeps the ID, opcode, RD and CD; QR is set, TC,
//!   RA, Z and AD are clear, NS and AR counts 0 (an EDNS OPT record of the query is not
//!   returned: dig accepts that). By case:
//!   - a name in the zone, QTYPE A or ANY: NOERROR, AA, the question and one A record (its
//!     name a compression pointer to the question, the zone's TTL);
//!   - a name in the zone, another QTYPE: NOERROR, AA, no answer (NODATA);
//!   - a name not in the zone (longer ones than [`NAME_MAX`] never are): NXDOMAIN, AA;
//!   - QCLASS other than IN or ANY: REFUSED (the zone is class IN);
//!   - opcode other than QUERY: NOTIMP, the header alone;
//!   - QDCOUNT ≠ 1, a label running past the message, a compression pointer or label type
//!     in the question (which could loop), a label over 63 bytes, a name over 255, a question
//!     cut short: FORMERR, the header alone.
//! - **ARP** requests for `--ip` are answered with `--mac`.
//! - **Everything else** (other addresses, other EtherTypes, VLAN-tagged frames) is switched:
//!   source MACs are learned in a 16-entry table, known unicast destinations forwarded,
//!   the rest flooded.
//!
//! Dropped, with the reason, of IPv4 to `--ip`: a wrong IPv4 header checksum
//! (`ipv4_checksum`); IPv4 options or fragments (`unsupported`); a protocol other than UDP,
//! a port other than 53, a DNS response (QR set: answering it could start a loop between two
//! servers) (`not_for_us`); a UDP length below 8 or past the packet, a DNS message under its
//! 12-byte header (`malformed`); a wrong UDP checksum (`transport_checksum`; 0, no checksum,
//! is accepted).
#![deny(missing_docs)]

use emu::prelude::*;
use std::fmt::Write as _;

pub mod zone;

pub use self::dns_server::*;
pub use zone::{parse, Record, Zone, ZoneError};

/// The header window: a question's name can be 255 bytes, after 54 bytes of headers.
pub const WINDOW: usize = self::dns_server::HLS_WINDOW;

/// The server as one NF module: `#[emu::nf]` checks it against the synthesizable subset, and
/// the HLS compiler builds its state and `process` as hardware.
#[emu::nf(ports = 4, window = 320)]
pub mod dns_server {
    use emu::prelude::*;
    use emu::wire::arp;

    /// The longest name the zone can hold, in wire format (length bytes, labels and the
    /// root's 0): the width of the table's key, 8 × 32 bits (the widest value the HLS
    /// compiler's IR carries is 256 bits). `www.example.com` takes 17.
    pub const NAME_MAX: usize = 32;
    /// Names the zone can hold: the table's slots (each a key comparator in hardware).
    pub const ZONE_SLOTS: usize = 32;
    /// Entries of the switch's MAC table.
    pub const MAC_TABLE_SIZE: usize = 16;

    // Response codes (RFC 1035 §4.1.1; `emu::wire::dns::RCODE_*`).
    const RCODE_NOERROR: u8 = 0;
    const RCODE_FORMERR: u8 = 1;
    const RCODE_NXDOMAIN: u8 = 3;
    const RCODE_NOTIMP: u8 = 4;
    const RCODE_REFUSED: u8 = 5;

    /// The DNS message: untagged Ethernet, IPv4 without options, UDP.
    const DNS: usize = 42;
    /// The question's name, after the 12-byte header.
    const QNAME: usize = 54;
    /// The longest name (RFC 1035 §2.3.4).
    const NAME_LIMIT: usize = 255;
    /// Labels a name of 255 bytes can have, the root's included: the bound of the walk.
    const LABELS_MAX: usize = 128;
    /// An A record whose name is a pointer: name 2, type 2, class 2, TTL 4, length 2, address 4.
    const A_RECORD: usize = 16;

    /// The server's state.
    #[derive(Debug)]
    pub struct DnsServer {
        /// The server's MAC (ARP answers, the source of its replies).
        pub mac: Mac,
        /// The address it answers for.
        pub ip: Ipv4Addr,
        /// The zone: name in wire format, lowercase, zero-padded → TTL [63:32], address [31:0].
        pub zone: Cam<Bytes<NAME_MAX>, u64, ZONE_SLOTS>,
        /// The switch: source MAC → the port it was last seen on.
        pub mac_table: Cam<Mac, Port, MAC_TABLE_SIZE>,
        /// Queries that got an answer of any kind (not drops).
        pub queries: Counter,
        /// NOERROR with an A record.
        pub answers: Counter,
        /// NOERROR without one (the name exists, not with that type).
        pub nodata: Counter,
        /// NXDOMAIN.
        pub nxdomain: Counter,
        /// FORMERR.
        pub formerr: Counter,
        /// NOTIMP.
        pub notimp: Counter,
        /// REFUSED (a class other than IN).
        pub refused: Counter,
        /// ARP replies sent.
        pub arp_replies: Counter,
        /// Frames flooded by the switch.
        pub floods: Counter,
    }

    impl DnsServer {
        /// A server for `ip` with `mac` and an empty zone.
        pub fn new(mac: Mac, ip: Ipv4Addr) -> DnsServer {
            DnsServer {
                mac,
                ip,
                zone: Cam::new(),
                mac_table: Cam::new(),
                queries: Counter::default(),
                answers: Counter::default(),
                nodata: Counter::default(),
                nxdomain: Counter::default(),
                formerr: Counter::default(),
                notimp: Counter::default(),
                refused: Counter::default(),
                arp_replies: Counter::default(),
                floods: Counter::default(),
            }
        }

        fn switch(&mut self, dst: Mac, meta: &Meta) -> Action {
            if !dst.is_multicast() {
                if let Some(port) = self.mac_table.get(dst) {
                    if port == meta.in_port {
                        return Action::Drop(DropReason::SamePort);
                    }
                    return Action::Forward(port);
                }
            }
            self.floods.inc();
            Action::Flood
        }

        fn arp_reply(&mut self, pkt: &mut Packet) -> Action {
            let req = pkt.arp();
            let (asker_mac, asker_ip) = (req.sha(), req.spa());
            let mut eth = pkt.ethernet_mut();
            eth.set_dst(asker_mac);
            eth.set_src(self.mac);
            let mut rep = pkt.arp_mut();
            rep.set_oper(arp::OPER_REPLY);
            rep.set_sha(self.mac);
            rep.set_spa(self.ip);
            rep.set_tha(asker_mac);
            rep.set_tpa(asker_ip);
            self.arp_replies.inc();
            Action::Reply
        }

        /// The table key of the question's name of `name_len` bytes: lowercase (a length byte
        /// is at most 63, below `A`, so only letters change), zero-padded.
        fn key(&mut self, pkt: &mut Packet, name_len: usize) -> Bytes<NAME_MAX> {
            let mut key: Bytes<NAME_MAX> = Bytes::default();
            for i in 0..NAME_MAX {
                let b = pkt.byte(QNAME + i);
                let lower = if b >= 0x41 && b <= 0x5a { b | 0x20 } else { b };
                if i < name_len {
                    key.set_byte(i, lower);
                }
            }
            key
        }

        /// Turns the query into the response: `dns_len` bytes of message (header, then the
        /// question when `qdcount` is 1, then `record` — TTL [63:32], address [31:0] — as an
        /// A record when `ancount` is 1), from the server back to the client.
        fn respond(
            &mut self,
            pkt: &mut Packet,
            dns_len: usize,
            rcode: u8,
            aa: bool,
            qdcount: u16,
            ancount: u16,
            record: u64,
        ) -> Action {
            let client_mac = pkt.ethernet().src();
            let client = pkt.ipv4().src();
            let client_port = pkt.udp_at(34).src_port();
            let (flags, flags2) = (pkt.byte(DNS + 2), pkt.byte(DNS + 3));
            pkt.set_len(DNS + dns_len);
            let mut eth = pkt.ethernet_mut();
            eth.set_dst(client_mac);
            eth.set_src(self.mac);
            let mut ip = pkt.ipv4_mut();
            ip.set_src(self.ip);
            ip.set_dst(client);
            ip.set_ttl(64);
            ip.set_total_len(28 + dns_len as u16);
            ip.fill_checksum();
            let mut udp = pkt.udp_at_mut(34);
            udp.set_src_port(53);
            udp.set_dst_port(client_port);
            udp.set_len(8 + dns_len as u16);
            udp.set_checksum(0);
            // QR; the opcode and RD as asked; AA; TC clear. RA, Z and AD clear; CD as asked.
            pkt.set_byte(DNS + 2, 0x80 | (flags & 0x79) | (aa as u8) << 2);
            pkt.set_byte(DNS + 3, (flags2 & 0x10) | rcode);
            pkt.set_byte(DNS + 4, 0);
            pkt.set_byte(DNS + 5, qdcount as u8);
            pkt.set_byte(DNS + 6, 0);
            pkt.set_byte(DNS + 7, ancount as u8);
            for i in 8..12 {
                pkt.set_byte(DNS + i, 0);
            }
            if ancount == 1 {
                let at = DNS + dns_len - A_RECORD;
                // The name: a pointer to the question's, at offset 12 of the message.
                pkt.set_byte(at, 0xc0);
                pkt.set_byte(at + 1, 12);
                pkt.set_byte(at + 2, 0);
                pkt.set_byte(at + 3, 1);
                pkt.set_byte(at + 4, 0);
                pkt.set_byte(at + 5, 1);
                pkt.set_byte(at + 6, (record >> 56) as u8);
                pkt.set_byte(at + 7, (record >> 48) as u8);
                pkt.set_byte(at + 8, (record >> 40) as u8);
                pkt.set_byte(at + 9, (record >> 32) as u8);
                pkt.set_byte(at + 10, 0);
                pkt.set_byte(at + 11, 4);
                pkt.set_byte(at + 12, (record >> 24) as u8);
                pkt.set_byte(at + 13, (record >> 16) as u8);
                pkt.set_byte(at + 14, (record >> 8) as u8);
                pkt.set_byte(at + 15, record as u8);
            }
            let sum =
                pkt.ones_sum(34, DNS + dns_len) + checksum::pseudo_header(self.ip, client, 17, 8 + dns_len as u16);
            let c = !checksum::fold(sum);
            // RFC 768: a computed 0 is sent as all ones (0 means "no checksum").
            pkt.udp_at_mut(34).set_checksum(if c == 0 { 0xffff } else { c });
            Action::Reply
        }

        fn formerr(&mut self, pkt: &mut Packet) -> Action {
            self.formerr.inc();
            self.respond(pkt, 12, RCODE_FORMERR, false, 0, 0, 0)
        }

        /// A UDP datagram to the server's address.
        fn query(&mut self, pkt: &mut Packet) -> Action {
            let ip = pkt.ipv4();
            if !ip.checksum_ok() {
                return Action::Drop(DropReason::Ipv4Checksum);
            }
            if ip.ihl().value() != 5 || ip.more_frags() || ip.frag_offset().value() != 0 {
                return Action::Drop(DropReason::Unsupported);
            }
            let (client, total) = (ip.src(), ip.total_len());
            if ip.protocol() != 17 {
                return Action::Drop(DropReason::NotForUs);
            }
            let udp = pkt.udp_at(34);
            let (dport, udp_len, udp_sum) = (udp.dst_port(), udp.len(), udp.checksum());
            if total < 28 || udp_len < 8 || udp_len > total - 20 {
                return Action::Drop(DropReason::Malformed);
            }
            if dport != 53 {
                return Action::Drop(DropReason::NotForUs);
            }
            let sum = pkt.ones_sum(34, 34 + udp_len as usize) + checksum::pseudo_header(client, self.ip, 17, udp_len);
            if udp_sum != 0 && checksum::fold(sum) != 0xffff {
                return Action::Drop(DropReason::TransportChecksum);
            }
            if udp_len < 20 {
                return Action::Drop(DropReason::Malformed);
            }
            let flags = pkt.byte(DNS + 2);
            if flags & 0x80 != 0 {
                return Action::Drop(DropReason::NotForUs);
            }
            self.queries.inc();
            if flags & 0x78 != 0 {
                self.notimp.inc();
                return self.respond(pkt, 12, RCODE_NOTIMP, false, 0, 0, 0);
            }
            if pkt.byte(DNS + 4) != 0 || pkt.byte(DNS + 5) != 1 {
                return self.formerr(pkt);
            }
            // The message ends where the UDP length says (a frame may carry padding).
            let end = 34 + udp_len as usize;
            let mut pos = 0usize;
            let mut name_len = 0usize;
            for _ in 0..LABELS_MAX {
                if pos >= NAME_LIMIT || QNAME + pos >= end {
                    break;
                }
                let len = pkt.byte(QNAME + pos) as usize;
                if len == 0 {
                    name_len = pos + 1;
                    break;
                }
                // 0xc0 and up is a compression pointer, 0x40 and 0x80 reserved label types.
                if len > 63 {
                    break;
                }
                pos += len + 1;
            }
            let question_end = QNAME + name_len + 4;
            if name_len == 0 || question_end > end {
                return self.formerr(pkt);
            }
            let at = QNAME + name_len;
            let qtype = (pkt.byte(at) as u16) << 8 | pkt.byte(at + 1) as u16;
            let qclass = (pkt.byte(at + 2) as u16) << 8 | pkt.byte(at + 3) as u16;
            let message = question_end - DNS;
            if qclass != 1 && qclass != 255 {
                self.refused.inc();
                return self.respond(pkt, message, RCODE_REFUSED, false, 1, 0, 0);
            }
            let mut found = false;
            let mut record = 0u64;
            if name_len <= NAME_MAX {
                let key = self.key(pkt, name_len);
                if let Some(r) = self.zone.get(key) {
                    found = true;
                    record = r;
                }
            }
            if !found {
                self.nxdomain.inc();
                return self.respond(pkt, message, RCODE_NXDOMAIN, true, 1, 0, 0);
            }
            if qtype != 1 && qtype != 255 {
                self.nodata.inc();
                return self.respond(pkt, message, RCODE_NOERROR, true, 1, 0, 0);
            }
            self.answers.inc();
            self.respond(pkt, message + A_RECORD, RCODE_NOERROR, true, 1, 1, record)
        }
    }

    impl NetworkFunction for DnsServer {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let eth = pkt.ethernet();
            let (src, dst, ethertype) = (eth.src(), eth.dst(), eth.ethertype());
            if !src.is_multicast() {
                self.mac_table.insert(src, meta.in_port);
            }
            if ethertype == 0x0806 {
                let a = pkt.arp();
                if a.is_ethernet_ipv4() && a.oper() == arp::OPER_REQUEST && a.tpa() == self.ip {
                    return self.arp_reply(pkt);
                }
                return self.switch(dst, meta);
            }
            if ethertype != 0x0800 || pkt.ipv4().dst() != self.ip {
                return self.switch(dst, meta);
            }
            self.query(pkt)
        }
    }
}

/// `name` (absolute, lowercase) as the table's key: wire format, zero-padded.
pub fn name_key(name: &str) -> Bytes<NAME_MAX> {
    let mut key = Bytes::<NAME_MAX>::default();
    for (i, b) in zone::wire_name(name).into_iter().enumerate() {
        key.set_byte(i, b);
    }
    key
}

/// A server for `ip` with `mac` holding `zone`'s records.
pub fn from_zone(mac: Mac, ip: Ipv4Addr, zone: &Zone) -> DnsServer {
    let mut nf = DnsServer::new(mac, ip);
    for r in &zone.records {
        nf.zone.insert(name_key(&r.name), (r.ttl as u64) << 32 | r.addr.0 as u64);
    }
    nf
}

const ZONE: Param = Param {
    name: "zone",
    help: "zone file of A records (RFC 1035 master-file subset: $ORIGIN, $TTL, `name [TTL] [IN] A a.b.c.d`)",
    default: None,
};
const IP: Param = Param { name: "ip", help: "the address the server answers for", default: None };
const MAC: Param = Param { name: "mac", help: "the server's MAC", default: Some("02:00:00:00:00:53") };

/// The zone of `config`'s `--zone` file.
pub fn load(config: &Config) -> Result<Zone, ConfigError> {
    let path = config.raw(&ZONE)?;
    let text = std::fs::read_to_string(path).map_err(|e| {
        ConfigError(format!("--zone {path}: {e}; give the path of a zone file (e.g. examples/example.zone)"))
    })?;
    parse(&text).map_err(|e| ConfigError(format!("{path}:{e}")))
}

/// The server `config` describes, its zone loaded.
pub fn build(config: &Config) -> Result<DnsServer, ConfigError> {
    let zone = load(config)?;
    Ok(from_zone(config.get(&MAC)?, config.get(&IP)?, &zone))
}

/// The server as the tools run it: its counters as the run's summary.
pub struct Reporting(pub DnsServer);

impl NetworkFunction for Reporting {
    #[inline]
    fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
        self.0.process(pkt, meta)
    }

    /// The debugger sees the NF's state.
    fn elements(&mut self) -> Vec<(&'static str, &mut dyn emu::state::Element)> {
        self.0.elements()
    }

    fn probes(&self) -> Option<&'static std::thread::LocalKey<emu::probe::Probes>> {
        self.0.probes()
    }

    fn summary(&self) -> String {
        let n = &self.0;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "dns-server: {} queries answered: {} A, {} NODATA, {} NXDOMAIN, {} FORMERR, {} NOTIMP, {} REFUSED",
            n.queries.get(),
            n.answers.get(),
            n.nodata.get(),
            n.nxdomain.get(),
            n.formerr.get(),
            n.notimp.get(),
            n.refused.get()
        );
        let _ = writeln!(
            s,
            "dns-server: {} names in the zone, {} ARP replies, {} floods",
            n.zone.len(),
            n.arp_replies.get(),
            n.floods.get()
        );
        s
    }
}

/// How the tools find and build the server.
pub const DESCRIPTOR: NfDescriptor = NfDescriptor {
    name: "dns-server",
    summary: "authoritative DNS for A records of a zone file (--zone FILE --ip ADDR); other traffic switched",
    ports: HLS_PORTS,
    window: WINDOW,
    params: &[ZONE, IP, MAC],
    build: |c| Ok(Box::new(Reporting(build(c)?))),
    hls_source: Some(HLS_SOURCE),
};

#[cfg(test)]
mod test;

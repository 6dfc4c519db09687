//! A TCP responder for one IPv4 address (the target of `hping3 -S`, `nmap -sS`, `nc -z`), in
//! a learning switch.
//!
//! For the address `ip`, stateless, as a host with listeners on the open ports would answer
//! (RFC 9293 §3.10.7.1, the CLOSED state, and §3.10.7.2, LISTEN):
//! - a SYN (no ACK, no RST) to an **open** port gets a SYN-ACK: acknowledgment `seq + 1`, an
//!   initial sequence number mixed from the client's address, ports and sequence number (so a
//!   retransmitted SYN gets the same SYN-ACK), window 65535, no options;
//! - a SYN to a **closed** port gets a RST-ACK: sequence 0, acknowledgment `seq + 1` (plus
//!   any data and FIN the segment carried);
//! - any other segment but a RST gets a reset, as a closed connection answers it: with ACK set,
//!   a RST with sequence = its acknowledgment number; without, a RST-ACK as above. So the
//!   client's ACK that would complete a handshake is reset: there is no connection behind.
//! - a RST is never answered (`policy`).
//!
//! Replies come from `mac`, to the sender's MAC, out of the port the segment came in by, as
//! 54-byte frames (IPv4 without options, TTL 64; TCP without options), with both checksums
//! right: the IPv4 one updated incrementally (RFC 1624), the TCP one summed over the new
//! header and the pseudo-header.
//!
//! ARP requests for `ip` are answered from `mac`. Dropped, with the reason counted, for
//! traffic to `ip`: a wrong IPv4 header checksum (`ipv4_checksum`), a wrong TCP checksum
//! (`transport_checksum`), a TCP header shorter than 20 bytes or a data offset below 5 or past
//! the segment (`malformed`), fragments, IPv4 options and other protocols (`unsupported`).
//!
//! Everything else is **switched**, as by `learning-switch` (a 16-entry MAC table, floods for
//! unknown and group destinations): hosts on the ports keep talking to each other through the
//! responder, and unicast traffic reaches only its destination's port.
#![deny(missing_docs)]

use emu::prelude::*;

pub use self::tcp_ping::*;

/// Ethernet + IPv4 + TCP headers (54 bytes) fit in the window.
pub const WINDOW: usize = self::tcp_ping::HLS_WINDOW;

/// The responder as one NF module: `#[emu::nf]` checks it against the synthesizable subset,
/// and the HLS compiler builds its state and `process` as hardware.
#[emu::nf(ports = 4, window = 64)]
pub mod tcp_ping {
    use emu::prelude::*;
    use emu::wire::arp;

    /// Entries in the MAC table of the switch around the responder.
    pub const MAC_TABLE_SIZE: usize = 16;
    /// Rules for open ports: a single port takes one, a range as many as its prefixes.
    pub const OPEN_PORT_SLOTS: usize = 16;

    const TCP: u8 = 6;
    /// The TCP header's offset: untagged Ethernet, IPv4 without options.
    const L4: usize = 34;
    const FIN: u8 = 0x01;
    const SYN: u8 = 0x02;
    const RST: u8 = 0x04;
    const ACK: u8 = 0x10;

    /// The responder's state.
    #[derive(Debug)]
    pub struct TcpPing {
        /// The address answered for.
        pub ip: Ipv4Addr,
        /// The MAC replies come from.
        pub mac: Mac,
        /// Open ports, as (port, mask) rules: a hit answers a SYN with SYN-ACK.
        pub open_ports: Tcam<u16, bool, OPEN_PORT_SLOTS>,
        /// Source MAC → the port it was last seen on.
        pub mac_table: Cam<Mac, Port, MAC_TABLE_SIZE>,
        /// SYN-ACKs sent (SYNs to open ports).
        pub syn_acks: Counter,
        /// Resets sent (SYNs to closed ports, other segments).
        pub resets: Counter,
        /// ARP replies sent.
        pub arp_replies: Counter,
        /// Frames flooded by the switch.
        pub floods: Counter,
    }

    impl TcpPing {
        /// A responder for `ip` with `mac` and no open port.
        pub fn new(ip: Ipv4Addr, mac: Mac) -> TcpPing {
            TcpPing {
                ip,
                mac,
                open_ports: Tcam::new(),
                mac_table: Cam::default(),
                syn_acks: Counter::default(),
                resets: Counter::default(),
                arp_replies: Counter::default(),
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

        fn arp(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let req = pkt.arp();
            if !req.is_ethernet_ipv4() || req.oper() != arp::OPER_REQUEST || req.tpa() != self.ip {
                return self.switch(pkt, meta);
            }
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

        fn answer(&mut self, pkt: &mut Packet) -> Action {
            let ip = pkt.ipv4();
            if !ip.checksum_ok() {
                return Action::Drop(DropReason::Ipv4Checksum);
            }
            if ip.protocol() != TCP || ip.more_frags() || ip.frag_offset().value() != 0 || ip.ihl().value() != 5 {
                return Action::Drop(DropReason::Unsupported);
            }
            // The ingress checks guarantee 20 <= total_len <= the frame's length.
            let (client, ttl, total) = (ip.src(), ip.ttl(), ip.total_len());
            let seg_len = total - 20;
            if seg_len < 20 {
                return Action::Drop(DropReason::Malformed);
            }
            let tcp = pkt.tcp_at(L4);
            let header_len = tcp.data_offset().value() as u16 * 4;
            if header_len < 20 || header_len > seg_len {
                return Action::Drop(DropReason::Malformed);
            }
            let sum = checksum::pseudo_header(client, self.ip, TCP, seg_len) + pkt.ones_sum(L4, L4 + seg_len as usize);
            if checksum::fold(sum) != 0xffff {
                return Action::Drop(DropReason::TransportChecksum);
            }
            let (sport, dport, seq, ack_no) = (tcp.src_port(), tcp.dst_port(), tcp.seq_no(), tcp.ack_no());
            let flags = pkt.byte(L4 + 13);
            if flags & RST != 0 {
                return Action::Drop(DropReason::Policy);
            }
            // What the segment occupies of the sequence space: its data, SYN and FIN.
            let seg_space = (seg_len - header_len) as u32 + (flags & SYN != 0) as u32 + (flags & FIN) as u32;
            let mut out_flags = RST | ACK;
            let mut out_seq = 0u32;
            let mut out_ack = seq.wrapping_add(seg_space);
            let mut window = 0u16;
            if flags & (SYN | ACK) == SYN && self.open_ports.lookup(dport).is_some() {
                out_flags = SYN | ACK;
                out_seq = initial_seq(client, sport, dport, seq);
                out_ack = seq.wrapping_add(1);
                window = 65535;
                self.syn_acks.inc();
            } else {
                if flags & ACK != 0 {
                    out_flags = RST;
                    out_seq = ack_no;
                    out_ack = 0;
                }
                self.resets.inc();
            }

            let sender = pkt.ethernet().src();
            let mut eth = pkt.ethernet_mut();
            eth.set_dst(sender);
            eth.set_src(self.mac);

            // Swapping the addresses leaves the header sum as it was; the length and TTL change.
            let mut ip = pkt.ipv4_mut();
            ip.set_src(self.ip);
            ip.set_dst(client);
            ip.set_total_len(40);
            ip.set_ttl(64);
            let c = checksum::update16(ip.checksum(), total, 40);
            let c = checksum::update16(c, (ttl as u16) << 8 | TCP as u16, 64 << 8 | TCP as u16);
            ip.set_checksum(c);

            let mut tcp = pkt.tcp_at_mut(L4);
            tcp.set_src_port(dport);
            tcp.set_dst_port(sport);
            tcp.set_seq_no(out_seq);
            tcp.set_ack_no(out_ack);
            tcp.set_window(window);
            tcp.set_urgent(0);
            pkt.set_byte(L4 + 12, 0x50);
            pkt.set_byte(L4 + 13, out_flags);
            let words = dport as u32
                + sport as u32
                + (out_seq >> 16)
                + (out_seq & 0xffff)
                + (out_ack >> 16)
                + (out_ack & 0xffff)
                + (0x5000 | out_flags as u32)
                + window as u32;
            let sum = checksum::pseudo_header(self.ip, client, TCP, 20) + words;
            pkt.tcp_at_mut(L4).set_checksum(!checksum::fold(sum));
            pkt.set_len(L4 + 20);
            Action::Reply
        }
    }

    /// The SYN-ACK's initial sequence number: the connection's identity mixed (xorshift) into
    /// 32 bits, so a retransmitted SYN gets the same answer without any state being kept.
    fn initial_seq(client: Ipv4Addr, sport: u16, dport: u16, seq: u32) -> u32 {
        let mut x = client.0 ^ ((sport as u32) << 16 | dport as u32) ^ seq.rotate_left(11) ^ 0x2545_f491;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    }

    impl NetworkFunction for TcpPing {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let src = pkt.ethernet().src();
            if !src.is_multicast() {
                self.mac_table.insert(src, meta.in_port);
            }
            match pkt.ethernet().ethertype() {
                0x0806 => self.arp(pkt, meta),
                0x0800 if pkt.ipv4().dst() == self.ip => self.answer(pkt),
                _ => self.switch(pkt, meta),
            }
        }
    }
}

/// Reads an open-port list: ports and inclusive ranges, comma separated (`22,80,443`,
/// `8000-8099`, or empty for none), each range as few (port, mask) rules as cover it.
pub fn parse_open_ports(list: &str) -> Result<Vec<(u16, u16)>, String> {
    let mut rules = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let port = |s: &str| {
            s.trim()
                .parse::<u16>()
                .map_err(|_| format!("`{s}` is not a port (0 to 65535); write e.g. `22,80,443` or `8000-8099`"))
        };
        let (lo, hi) = match item.split_once('-') {
            Some((a, b)) => (port(a)?, port(b)?),
            None => (port(item)?, port(item)?),
        };
        if lo > hi {
            return Err(format!("`{item}` is an empty range; write the lower port first (`{hi}-{lo}`)"));
        }
        rules.extend(
            emu::state::range_prefixes(lo as u64, hi as u64, 16).into_iter().map(|(v, m)| (v as u16, m as u16)),
        );
    }
    if rules.len() > OPEN_PORT_SLOTS {
        return Err(format!(
            "the open ports take {} rules and the table has {OPEN_PORT_SLOTS}: a single port takes one, a range \
             one per aligned power-of-two block (1024-2047 one, 1000-2000 eight); list fewer or aligned ranges",
            rules.len()
        ));
    }
    Ok(rules)
}

const IP: Param = Param { name: "ip", help: "IPv4 address to answer TCP SYNs and ARP for", default: Some("10.0.0.1") };
const MAC: Param = Param { name: "mac", help: "MAC address replies come from", default: Some("02:00:00:00:00:01") };
const OPEN: Param = Param {
    name: "open",
    help: "open ports (SYN-ACK; others get RST-ACK): ports and ranges, e.g. 22,80,443,8000-8099",
    default: Some("22,80,443"),
};

/// The responder `config` describes, its open ports loaded.
pub fn build(config: &Config) -> Result<TcpPing, ConfigError> {
    let mut nf = TcpPing::new(config.get(&IP)?, config.get(&MAC)?);
    let raw = config.raw(&OPEN)?;
    let rules = parse_open_ports(raw).map_err(|e| ConfigError(format!("--open {raw}: {e}")))?;
    for (slot, (port, mask)) in rules.into_iter().enumerate() {
        nf.open_ports.set(slot, port, mask, true);
    }
    Ok(nf)
}

/// How the tools find and build the responder.
pub const DESCRIPTOR: NfDescriptor = NfDescriptor {
    name: "tcp-ping",
    summary: "answers TCP SYNs to one IPv4 address with SYN-ACK (open ports) or RST-ACK, switches the rest",
    ports: HLS_PORTS,
    window: WINDOW,
    params: &[IP, MAC, OPEN],
    build: |c| Ok(Box::new(build(c)?)),
    hls_source: Some(HLS_SOURCE),
};

#[cfg(test)]
mod test {
    use super::*;
    use emu::craft::{self, TcpFlags, TcpSegment};
    use emu::wire::{arp, ipv4, tcp};

    const ME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const PEER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
    const MY_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 1]);
    const PEER_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 2]);

    fn nf(open: &str) -> TcpPing {
        let mut c = Config::new();
        c.set("open", open);
        build(&c).unwrap()
    }

    fn syn_flags() -> TcpFlags {
        TcpFlags { syn: true, ..Default::default() }
    }

    /// A segment from PEER:40000 to ME:`port`, as an Ethernet frame.
    fn segment(port: u16, seq: u32, ack: u32, flags: TcpFlags, payload: &[u8]) -> Vec<u8> {
        let seg = TcpSegment { src_port: 40000, dst_port: port, seq_no: seq, ack_no: ack, flags };
        craft::ethernet(MY_MAC, PEER_MAC, 0x0800, &craft::tcp(PEER, ME, seg, payload))
    }

    fn run(nf: &mut TcpPing, f: &mut Vec<u8>, in_port: Port) -> Action {
        let meta = Meta { in_port, len: f.len() as u16, timestamp: 0 };
        nf.process(&mut Packet::new(f, WINDOW), &meta)
    }

    /// The reply's TCP header, after checking everything around it: length, addresses, TTL and
    /// both checksums.
    fn reply(f: &[u8]) -> tcp::Header<&[u8]> {
        assert_eq!(f.len(), 54, "Ethernet + IPv4 + TCP, no options");
        let eth = emu::EthernetHeader::new_unchecked(f);
        assert_eq!((eth.src(), eth.dst()), (MY_MAC, PEER_MAC));
        let ip = ipv4::Header::new_unchecked(&f[14..34]);
        assert_eq!((ip.src(), ip.dst(), ip.ttl(), ip.total_len(), ip.protocol()), (ME, PEER, 64, 40, 6));
        assert!(ip.checksum_ok(), "IPv4 checksum");
        let t = tcp::Header::new_unchecked(&f[34..54]);
        assert!(t.checksum_ok(ME, PEER), "TCP checksum");
        assert_eq!((t.src_port(), t.dst_port(), t.header_len(), t.urgent()), (t.src_port(), 40000, 20, 0));
        t
    }

    #[test]
    fn syn_to_an_open_port_gets_syn_ack() {
        let mut r = nf("22,80,443");
        for port in [22, 80, 443] {
            let mut f = segment(port, 0x1234_5678, 0, syn_flags(), b"");
            assert_eq!(run(&mut r, &mut f, 1), Action::Reply);
            let t = reply(&f);
            assert_eq!(t.src_port(), port);
            assert!(t.syn() && t.ack() && !t.rst() && !t.fin());
            assert_eq!(t.ack_no(), 0x1234_5679, "SYN-ACK acknowledges seq + 1");
            assert_eq!(t.window(), 65535);
        }
        assert_eq!(r.syn_acks.get(), 3);
        assert_eq!(r.resets.get(), 0);
    }

    #[test]
    fn syn_to_a_closed_port_gets_rst_ack_seq_0_ack_seq_plus_1() {
        let mut r = nf("22,80,443");
        let mut f = segment(23, u32::MAX, 0, syn_flags(), b"");
        assert_eq!(run(&mut r, &mut f, 0), Action::Reply);
        let t = reply(&f);
        assert_eq!(t.src_port(), 23);
        assert!(t.rst() && t.ack() && !t.syn());
        assert_eq!((t.seq_no(), t.ack_no(), t.window()), (0, 0, 0), "seq + 1 wraps to 0");
        let mut f = segment(8080, 999, 0, syn_flags(), b"hello");
        run(&mut r, &mut f, 0);
        assert_eq!(reply(&f).ack_no(), 999 + 1 + 5, "the SYN's data is acknowledged by the reset");
        assert_eq!(r.resets.get(), 2);
    }

    #[test]
    fn syn_options_are_not_echoed_and_retransmissions_get_the_same_isn() {
        let mut r = nf("80");
        // A Linux-like SYN: 40-byte header with MSS, SACK-permitted, timestamps, window scale.
        let mut opts =
            segment(80, 77, 0, syn_flags(), &[2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7]);
        opts[46] = 0xa0;
        let mut seg = opts[34..].to_vec();
        tcp::Header::new_unchecked(&mut seg[..]).fill_checksum(PEER, ME);
        opts[34..].copy_from_slice(&seg);
        let mut again = opts.clone();
        assert_eq!(run(&mut r, &mut opts, 0), Action::Reply);
        let isn = reply(&opts).seq_no();
        assert_eq!(reply(&opts).ack_no(), 78);
        run(&mut r, &mut again, 0);
        assert_eq!(reply(&again).seq_no(), isn);
        let mut other = segment(80, 78, 0, syn_flags(), b"");
        run(&mut r, &mut other, 0);
        assert_ne!(reply(&other).seq_no(), isn, "another connection, another ISN");
    }

    #[test]
    fn other_segments_are_reset_as_a_closed_connection_would() {
        let mut r = nf("80");
        let ack = TcpFlags { ack: true, ..Default::default() };
        let mut f = segment(80, 5000, 0xdead_beef, ack, b"GET /");
        assert_eq!(run(&mut r, &mut f, 0), Action::Reply);
        let t = reply(&f);
        assert!(t.rst() && !t.ack() && !t.syn());
        assert_eq!(t.seq_no(), 0xdead_beef, "RST takes the segment's acknowledgment as its sequence");
        let fin = TcpFlags { fin: true, ..Default::default() };
        let mut f = segment(80, 5000, 0, fin, b"");
        run(&mut r, &mut f, 0);
        let t = reply(&f);
        assert!(t.rst() && t.ack());
        assert_eq!((t.seq_no(), t.ack_no()), (0, 5001), "the FIN takes one sequence number");
        let rst = TcpFlags { rst: true, ack: true, ..Default::default() };
        let mut f = segment(80, 1, 1, rst, b"");
        let before = f.clone();
        assert_eq!(run(&mut r, &mut f, 0), Action::Drop(DropReason::Policy), "a reset is never answered");
        assert_eq!(f, before);
    }

    #[test]
    fn malformed_tcp_is_dropped_with_a_reason() {
        let mut r = nf("80");
        let with_offset = |off: u8| {
            let mut f = segment(80, 1, 0, syn_flags(), b"abcdefgh");
            f[46] = off << 4;
            f
        };
        for off in [0, 4, 8, 15] {
            // 8 bytes of data: a header of 28 bytes fits, 32 and 60 run past the segment.
            let mut f = with_offset(off);
            assert_eq!(run(&mut r, &mut f, 0), Action::Drop(DropReason::Malformed), "data offset {off}");
        }
        let mut f = with_offset(7);
        assert_eq!(run(&mut r, &mut f, 0), Action::Drop(DropReason::TransportChecksum), "offset 7 fits");
        // A TCP header cut to 10 bytes (the IPv4 total length says so).
        let mut f = craft::ethernet(
            MY_MAC,
            PEER_MAC,
            0x0800,
            &craft::ipv4(PEER, ME, 6, &[0x9c, 0x40, 0, 80, 0, 0, 0, 1, 0, 0]),
        );
        assert_eq!(run(&mut r, &mut f, 0), Action::Drop(DropReason::Malformed));
        let mut f = segment(80, 1, 0, syn_flags(), b"");
        f[50] ^= 0xff; // TCP checksum
        assert_eq!(run(&mut r, &mut f, 0), Action::Drop(DropReason::TransportChecksum));
        let mut f = segment(80, 1, 0, syn_flags(), b"");
        f[22] = 9; // TTL, under the IPv4 checksum
        assert_eq!(run(&mut r, &mut f, 0), Action::Drop(DropReason::Ipv4Checksum));
        let mut f = craft::ethernet(MY_MAC, PEER_MAC, 0x0800, &craft::udp(PEER, 1, ME, 80, b"x"));
        assert_eq!(run(&mut r, &mut f, 0), Action::Drop(DropReason::Unsupported));
        assert_eq!((r.syn_acks.get(), r.resets.get()), (0, 0));
    }

    #[test]
    fn answers_arp_for_its_address_and_switches_the_rest() {
        let mut r = nf("80");
        let req = craft::arp(arp::OPER_REQUEST, PEER_MAC, PEER, Mac::from_bytes([0; 6]), ME);
        let mut f = craft::ethernet(Mac::BROADCAST, PEER_MAC, 0x0806, &req);
        assert_eq!(run(&mut r, &mut f, 2), Action::Reply);
        let a = arp::Header::new_unchecked(&f[14..]);
        assert_eq!((a.oper(), a.sha(), a.spa(), a.tha(), a.tpa()), (2, MY_MAC, ME, PEER_MAC, PEER));
        // ARP for another host floods; frames between hosts are switched by learned port.
        let other = Ipv4Addr::new(10, 0, 0, 3);
        let host3 = Mac::from_bytes([2, 0, 0, 0, 0, 3]);
        let req = craft::arp(arp::OPER_REQUEST, PEER_MAC, PEER, Mac::from_bytes([0; 6]), other);
        let mut f = craft::ethernet(Mac::BROADCAST, PEER_MAC, 0x0806, &req);
        assert_eq!(run(&mut r, &mut f, 2), Action::Flood);
        let seg = TcpSegment { src_port: 1, dst_port: 80, flags: syn_flags(), ..Default::default() };
        let mut f = craft::ethernet(PEER_MAC, host3, 0x0800, &craft::tcp(other, PEER, seg, b""));
        let before = f.clone();
        assert_eq!(run(&mut r, &mut f, 3), Action::Forward(2), "a SYN to another host is switched");
        assert_eq!(f, before);
        assert_eq!(r.mac_table.get(host3), Some(3));
    }

    #[test]
    fn open_port_lists_and_their_errors() {
        assert_eq!(parse_open_ports("22, 80,443").unwrap(), [(22, 0xffff), (80, 0xffff), (443, 0xffff)]);
        assert_eq!(parse_open_ports("").unwrap(), []);
        assert_eq!(parse_open_ports("8000-8099").unwrap().len(), 3, "8000-8063, 8064-8095, 8096-8099");
        let mut r = nf("8000-8099");
        for (port, open) in [(7999, false), (8000, true), (8050, true), (8099, true), (8100, false)] {
            let mut f = segment(port, 1, 0, syn_flags(), b"");
            run(&mut r, &mut f, 0);
            assert_eq!(reply(&f).syn(), open, "port {port}");
        }
        assert!(parse_open_ports("http").unwrap_err().contains("`http` is not a port"));
        assert!(parse_open_ports("90-80").unwrap_err().contains("write the lower port first (`80-90`)"));
        assert!(parse_open_ports("1-65534").unwrap_err().contains("take 30 rules and the table has 16"));
        let mut c = Config::new();
        c.set("open", "70000");
        assert!(build(&c).unwrap_err().0.starts_with("--open 70000: `70000` is not a port"));
    }

    #[test]
    fn descriptor_hands_the_open_ports_to_other_tiers() {
        let mut c = Config::new();
        c.set("open", "22,1024-2047");
        let state = DESCRIPTOR.initial_state(&c).unwrap();
        let open = state.iter().find(|e| e.name == "open_ports").unwrap();
        let rule = |v: u16, m: u16| [&[1][..], &v.to_be_bytes(), &m.to_be_bytes(), &[1]].concat();
        let valid: Vec<&Vec<u8>> = open.entries.iter().filter(|e| e[0] == 1).collect();
        assert_eq!(valid, [&rule(22, 0xffff), &rule(1024, 0xfc00)]);
        assert_eq!((open.entries[0].clone(), open.entries[1].clone()), (rule(22, 0xffff), rule(1024, 0xfc00)), "slots 0 and 1");
    }
}

//! An ICMP echo responder for one IPv4 address, which also answers ARP for it so hosts can
//! reach it without static neighbour entries.
//!
//! - An ARP request for `ip` gets a reply from `mac`, out of the port it came in by.
//! - An ICMP echo request to `ip` gets an echo reply: MACs swapped, IP addresses swapped,
//!   TTL 64, type 0, both checksums right (updated incrementally, RFC 1624). The payload is
//!   untouched, whatever its length.
//! - Dropped, with the reason counted: an IPv4 header checksum that does not verify
//!   (`ipv4_checksum`), an ICMP checksum that does not verify (`icmp_checksum`), anything not
//!   addressed to `ip` (`not_for_us`), and IPv4 to `ip` that is not an unfragmented echo
//!   request (`unsupported`).
#![deny(missing_docs)]

use emu::prelude::*;

pub use self::icmp_echo::*;

/// Ethernet + IPv4 with up to 40 bytes of options + ICMP echo header fit in 128 bytes.
pub const WINDOW: usize = self::icmp_echo::HLS_WINDOW;

/// The responder as one NF module: `#[emu::nf]` checks it against the synthesizable subset,
/// and the HLS compiler builds its state and `process` as hardware.
#[emu::nf(ports = 4, window = 128)]
pub mod icmp_echo {
    use emu::prelude::*;
    use emu::wire::{arp, icmpv4};

    /// The responder's state.
    #[derive(Debug)]
    pub struct IcmpEcho {
        /// The address answered for.
        pub ip: Ipv4Addr,
        /// The MAC given in ARP replies.
        pub mac: Mac,
        /// Echo replies sent.
        pub replies: Counter,
        /// ARP replies sent.
        pub arp_replies: Counter,
    }

    impl IcmpEcho {
        /// A responder for `ip` with `mac`.
        pub fn new(ip: Ipv4Addr, mac: Mac) -> IcmpEcho {
            IcmpEcho { ip, mac, replies: Counter::default(), arp_replies: Counter::default() }
        }

        fn arp(&mut self, pkt: &mut Packet) -> Action {
            let req = pkt.arp();
            if !req.is_ethernet_ipv4() || req.oper() != arp::OPER_REQUEST || req.tpa() != self.ip {
                return Action::Drop(DropReason::NotForUs);
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

        fn ipv4(&mut self, pkt: &mut Packet) -> Action {
            let ip = pkt.ipv4();
            if ip.dst() != self.ip {
                return Action::Drop(DropReason::NotForUs);
            }
            if !ip.checksum_ok() {
                return Action::Drop(DropReason::Ipv4Checksum);
            }
            if ip.protocol() != 1 || ip.more_frags() || ip.frag_offset().value() != 0 {
                return Action::Drop(DropReason::Unsupported);
            }
            let l4 = 14 + ip.header_len();
            let end = 14 + ip.total_len() as usize;
            let (src, ttl) = (ip.src(), ip.ttl());
            let icmp = pkt.icmpv4_at(l4);
            if icmp.msg_type() != icmpv4::ECHO_REQUEST {
                return Action::Drop(DropReason::Unsupported);
            }
            if checksum::fold(pkt.ones_sum(l4, end)) != 0xffff {
                return Action::Drop(DropReason::IcmpChecksum);
            }
            let code = icmp.code() as u16;
            let icmp_sum = icmp.checksum();

            let mut eth = pkt.ethernet_mut();
            let (a, b) = (eth.src(), eth.dst());
            eth.set_src(b);
            eth.set_dst(a);

            // Swapping the addresses leaves the header sum unchanged; only the TTL word changes.
            let mut ip = pkt.ipv4_mut();
            let old_word = (ttl as u16) << 8 | 1;
            ip.set_src(self.ip);
            ip.set_dst(src);
            ip.set_ttl(64);
            let c = checksum::update16(ip.checksum(), old_word, 64 << 8 | 1);
            ip.set_checksum(c);

            let mut icmp = pkt.icmpv4_at_mut(l4);
            icmp.set_msg_type(icmpv4::ECHO_REPLY);
            icmp.set_checksum(checksum::update16(icmp_sum, (icmpv4::ECHO_REQUEST as u16) << 8 | code, code));
            self.replies.inc();
            Action::Reply
        }
    }

    impl NetworkFunction for IcmpEcho {
        fn process(&mut self, pkt: &mut Packet, _meta: &Meta) -> Action {
            match pkt.ethernet().ethertype() {
                0x0806 => self.arp(pkt),
                0x0800 => self.ipv4(pkt),
                _ => Action::Drop(DropReason::NotForUs),
            }
        }
    }
}

const IP: Param = Param { name: "ip", help: "IPv4 address to answer pings and ARP for", default: Some("10.0.0.1") };
const MAC: Param = Param { name: "mac", help: "MAC address to give in ARP replies", default: Some("02:00:00:00:00:01") };

/// How the tools find and build the responder.
pub const DESCRIPTOR: NfDescriptor = NfDescriptor {
    name: "icmp-echo",
    summary: "answers ICMP echo requests (ping) and ARP for one IPv4 address",
    ports: HLS_PORTS,
    window: WINDOW,
    params: &[IP, MAC],
    build: |c| Ok(Box::new(IcmpEcho::new(c.get(&IP)?, c.get(&MAC)?))),
    hls_source: Some(HLS_SOURCE),
};

#[cfg(test)]
mod test {
    use super::*;
    use emu::wire::{arp, icmpv4, ipv4};

    const ME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const PEER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
    const MY_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 1]);
    const PEER_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 2]);

    /// An echo request from PEER to `dst` with `data` bytes of payload, checksums right.
    fn echo(dst: Ipv4Addr, data: usize) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20 + 8 + data];
        let mut eth = emu::EthernetHeader::new_unchecked(&mut f[..]);
        eth.set_dst(MY_MAC);
        eth.set_src(PEER_MAC);
        eth.set_ethertype(0x0800);
        let mut ip = ipv4::Header::new_unchecked(&mut f[14..]);
        ip.set_version(u4::new(4));
        ip.set_ihl(u4::new(5));
        ip.set_total_len((20 + 8 + data) as u16);
        ip.set_ttl(61);
        ip.set_protocol(1);
        ip.set_src(PEER);
        ip.set_dst(dst);
        ip.fill_checksum();
        for (i, b) in f[42..].iter_mut().enumerate() {
            *b = i as u8;
        }
        let mut icmp = icmpv4::Header::new_unchecked(&mut f[34..]);
        icmp.set_msg_type(8);
        icmp.set_ident(0x1234);
        icmp.set_seq_no(7);
        icmp.fill_checksum();
        f
    }

    fn process(f: &mut Vec<u8>) -> Action {
        let mut nf = IcmpEcho::new(ME, MY_MAC);
        nf.process(&mut Packet::new(f, WINDOW), &Meta::default())
    }

    #[test]
    fn answers_echo_with_right_checksums() {
        for data in [0, 56, 1400] {
            let mut f = echo(ME, data);
            let payload = f[42..].to_vec();
            assert_eq!(process(&mut f), Action::Reply, "{data} bytes of data");
            let eth = emu::EthernetHeader::new_unchecked(&f[..]);
            assert_eq!((eth.src(), eth.dst()), (MY_MAC, PEER_MAC));
            let ip = ipv4::Header::new_unchecked(&f[14..]);
            assert_eq!((ip.src(), ip.dst(), ip.ttl()), (ME, PEER, 64));
            assert!(ip.checksum_ok());
            let icmp = icmpv4::Header::new_unchecked(&f[34..]);
            assert_eq!((icmp.msg_type(), icmp.ident(), icmp.seq_no()), (0, 0x1234, 7));
            assert!(icmp.checksum_ok());
            assert_eq!(&f[42..], &payload[..]);
        }
    }

    #[test]
    fn drops_with_reasons() {
        let mut f = echo(PEER, 8);
        assert_eq!(process(&mut f), Action::Drop(DropReason::NotForUs));
        let mut f = echo(ME, 8);
        f[14 + 8] ^= 1; // TTL changed, IP checksum now wrong
        assert_eq!(process(&mut f), Action::Drop(DropReason::Ipv4Checksum));
        let mut f = echo(ME, 1000);
        f[900] ^= 0xff; // payload past the window corrupted
        assert_eq!(process(&mut f), Action::Drop(DropReason::IcmpChecksum));
        let mut f = echo(ME, 8);
        f[34] = 0; // an echo reply is not answered
        assert_eq!(process(&mut f), Action::Drop(DropReason::Unsupported));
    }

    #[test]
    fn answers_arp_for_its_address() {
        let mut f = vec![0u8; 60];
        f[..6].copy_from_slice(&[0xff; 6]);
        f[6..12].copy_from_slice(&PEER_MAC.bytes());
        f[12..14].copy_from_slice(&[0x08, 0x06]);
        let mut a = arp::Header::new_unchecked(&mut f[14..]);
        a.set_htype(1);
        a.set_ptype(0x0800);
        a.set_hlen(6);
        a.set_plen(4);
        a.set_oper(arp::OPER_REQUEST);
        a.set_sha(PEER_MAC);
        a.set_spa(PEER);
        a.set_tpa(ME);
        let mut other = f.clone();
        assert_eq!(process(&mut f), Action::Reply);
        let eth = emu::EthernetHeader::new_unchecked(&f[..]);
        assert_eq!((eth.dst(), eth.src()), (PEER_MAC, MY_MAC));
        let a = arp::Header::new_unchecked(&f[14..]);
        assert_eq!((a.oper(), a.sha(), a.spa(), a.tha(), a.tpa()), (2, MY_MAC, ME, PEER_MAC, PEER));
        arp::Header::new_unchecked(&mut other[14..]).set_tpa(Ipv4Addr::new(10, 0, 0, 9));
        assert_eq!(process(&mut other), Action::Drop(DropReason::NotForUs));
    }
}

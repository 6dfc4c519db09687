//! Building whole frames with correct lengths and checksums, for tests, examples and
//! generators of test traffic. Every builder goes through the same header views NFs use.

use crate::addr::{Ipv4Addr, Mac};
use crate::wire::{arp, ethernet, icmpv4, ipv4, tcp, udp};
use arbitrary_int::u4;

/// Ethernet's minimum frame length without the FCS; shorter frames are padded with zeros.
pub const MIN_FRAME: usize = 60;

/// An Ethernet frame around `payload`, padded to [`MIN_FRAME`].
pub fn ethernet(dst: Mac, src: Mac, ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; ethernet::HEADER_LEN];
    let mut h = ethernet::Header::new_unchecked(&mut f[..]);
    h.set_dst(dst);
    h.set_src(src);
    h.set_ethertype(ethertype);
    f.extend_from_slice(payload);
    if f.len() < MIN_FRAME {
        f.resize(MIN_FRAME, 0);
    }
    f
}

/// An IPv4 packet (no options, DF set, TTL 64) around `payload`, header checksum filled.
pub fn ipv4(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0u8; ipv4::HEADER_LEN];
    let mut h = ipv4::Header::new_unchecked(&mut p[..]);
    h.set_version(u4::new(4));
    h.set_ihl(u4::new(5));
    h.set_total_len((ipv4::HEADER_LEN + payload.len()) as u16);
    h.set_dont_frag(true);
    h.set_ttl(64);
    h.set_protocol(protocol);
    h.set_src(src);
    h.set_dst(dst);
    h.fill_checksum();
    p.extend_from_slice(payload);
    p
}

/// An IPv4/UDP packet, both checksums filled.
pub fn udp(src: Ipv4Addr, src_port: u16, dst: Ipv4Addr, dst_port: u16, payload: &[u8]) -> Vec<u8> {
    let mut d = vec![0u8; udp::HEADER_LEN];
    d.extend_from_slice(payload);
    let mut h = udp::Header::new_unchecked(&mut d[..]);
    h.set_src_port(src_port);
    h.set_dst_port(dst_port);
    h.set_len((udp::HEADER_LEN + payload.len()) as u16);
    h.fill_checksum(src, dst);
    ipv4(src, dst, 17, &d)
}

/// TCP flag bits for [`tcp()`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpFlags {
    /// SYN
    pub syn: bool,
    /// ACK
    pub ack: bool,
    /// PSH
    pub psh: bool,
    /// FIN
    pub fin: bool,
    /// RST
    pub rst: bool,
}

/// Fields of a TCP segment for [`tcp()`].
#[derive(Debug, Clone, Copy, Default)]
pub struct TcpSegment {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq_no: u32,
    /// Acknowledgment number.
    pub ack_no: u32,
    /// Flags.
    pub flags: TcpFlags,
}

/// An IPv4/TCP packet (no options, window 64240), both checksums filled.
pub fn tcp(src: Ipv4Addr, dst: Ipv4Addr, seg: TcpSegment, payload: &[u8]) -> Vec<u8> {
    let mut d = vec![0u8; tcp::HEADER_LEN];
    d.extend_from_slice(payload);
    let mut h = tcp::Header::new_unchecked(&mut d[..]);
    h.set_src_port(seg.src_port);
    h.set_dst_port(seg.dst_port);
    h.set_seq_no(seg.seq_no);
    h.set_ack_no(seg.ack_no);
    h.set_data_offset(u4::new(5));
    h.set_syn(seg.flags.syn);
    h.set_ack(seg.flags.ack);
    h.set_psh(seg.flags.psh);
    h.set_fin(seg.flags.fin);
    h.set_rst(seg.flags.rst);
    h.set_window(64240);
    h.fill_checksum(src, dst);
    ipv4(src, dst, 6, &d)
}

/// An IPv4/ICMP echo request (or reply), checksums filled.
pub fn icmp_echo(src: Ipv4Addr, dst: Ipv4Addr, request: bool, ident: u16, seq_no: u16, data: &[u8]) -> Vec<u8> {
    let mut m = vec![0u8; icmpv4::HEADER_LEN];
    m.extend_from_slice(data);
    let mut h = icmpv4::Header::new_unchecked(&mut m[..]);
    h.set_msg_type(if request { icmpv4::ECHO_REQUEST } else { icmpv4::ECHO_REPLY });
    h.set_ident(ident);
    h.set_seq_no(seq_no);
    h.fill_checksum();
    ipv4(src, dst, 1, &m)
}

/// An Ethernet/IPv4 ARP packet (the Ethernet payload).
pub fn arp(oper: u16, sha: Mac, spa: Ipv4Addr, tha: Mac, tpa: Ipv4Addr) -> Vec<u8> {
    let mut p = vec![0u8; arp::HEADER_LEN];
    let mut h = arp::Header::new_unchecked(&mut p[..]);
    h.set_htype(1);
    h.set_ptype(0x0800);
    h.set_hlen(6);
    h.set_plen(4);
    h.set_oper(oper);
    h.set_sha(sha);
    h.set_spa(spa);
    h.set_tha(tha);
    h.set_tpa(tpa);
    p
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn frames_are_well_formed() {
        let a = Ipv4Addr::new(10, 0, 0, 1);
        let b = Ipv4Addr::new(10, 0, 0, 2);
        let m = Mac::from_bytes([2, 0, 0, 0, 0, 1]);
        let seg = TcpSegment { src_port: 1, dst_port: 2, flags: TcpFlags { syn: true, ..Default::default() }, ..Default::default() };
        for (ip, proto) in [(udp(a, 1, b, 2, b"x"), 17), (tcp(a, b, seg, b""), 6), (icmp_echo(a, b, true, 1, 1, b"abc"), 1)] {
            let f = ethernet(m, m, 0x0800, &ip);
            assert!(f.len() >= MIN_FRAME);
            assert_eq!(crate::check_frame(&f, 1518), Ok(()));
            let h = ipv4::Header::new_checked(&f[14..]).unwrap();
            assert!(h.checksum_ok());
            assert_eq!(h.protocol(), proto);
            let l4 = &f[34..14 + h.total_len() as usize];
            match proto {
                17 => assert!(udp::Header::new_unchecked(l4).checksum_ok(a, b)),
                6 => assert!(tcp::Header::new_unchecked(l4).checksum_ok(a, b)),
                _ => assert!(icmpv4::Header::new_unchecked(l4).checksum_ok()),
            }
        }
    }
}

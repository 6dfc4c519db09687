//! Cross-checks Emu's header views (`emu_core::wire`) against an independent implementation,
//! `smoltcp::wire`.
//!
//! - **Reading**: on random bytes and on valid frames built by smoltcp, every field our views
//!   read equals what smoltcp reads, checksum verdicts agree, and `check_len` agrees on whether
//!   the fixed header fits.
//! - **Building**: frames built with our setters and `fill_checksum` pass smoltcp's `check_len`
//!   and `verify_checksum`, smoltcp reads back the values we wrote, and the bytes are identical
//!   to the frame smoltcp builds from the same values.
//! - **Incremental update**: after changing TTL and addresses and patching the checksums with
//!   `checksum::update16`/`update32` (RFC 1624), smoltcp still verifies the frame.
//!
//! smoltcp's accessors index the buffer directly and panic on short buffers, while ours read
//! bytes past the end as 0; on short buffers we therefore compare our view of the buffer with
//! smoltcp's view of the buffer zero-padded to the header's fixed length.

use emu_core::wire::{arp, checksum, ethernet, icmpv4, ipv4, tcp, udp};
use emu_core::{u13, u2, u3, u4, u6, Ipv4Addr, Mac};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use smoltcp::wire::{
    ArpOperation, ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol,
    Icmpv4Message, Icmpv4Packet, IpAddress, IpProtocol, Ipv4Address, Ipv4Packet, TcpPacket,
    TcpSeqNumber, UdpPacket,
};

const ETH: usize = ethernet::HEADER_LEN;
const PROTO_ICMP: u8 = 1;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;

fn config() -> ProptestConfig {
    ProptestConfig::with_cases(256)
}

/// `buf` with zero bytes appended up to `len`: what our views see past the end.
fn padded(buf: &[u8], len: usize) -> Vec<u8> {
    let mut v = buf.to_vec();
    if v.len() < len {
        v.resize(len, 0);
    }
    v
}

fn smol_ip(a: [u8; 4]) -> IpAddress {
    IpAddress::Ipv4(Ipv4Address(a))
}

fn emu_ip(a: [u8; 4]) -> Ipv4Addr {
    Ipv4Addr(u32::from_be_bytes(a))
}

// ---------------------------------------------------------------------------------------------
// One helper per header: every field our view reads equals smoltcp's reading.
// ---------------------------------------------------------------------------------------------

fn same_ethernet(buf: &[u8]) -> Result<(), TestCaseError> {
    let ours = ethernet::Header::new_unchecked(buf);
    let p = padded(buf, ethernet::HEADER_LEN);
    let theirs = EthernetFrame::new_unchecked(&p[..]);
    prop_assert_eq!(ours.dst().bytes(), theirs.dst_addr().0, "ethernet dst");
    prop_assert_eq!(ours.src().bytes(), theirs.src_addr().0, "ethernet src");
    prop_assert_eq!(ours.ethertype(), u16::from(theirs.ethertype()), "ethernet ethertype");
    Ok(())
}

fn same_ipv4(buf: &[u8]) -> Result<(), TestCaseError> {
    let ours = ipv4::Header::new_unchecked(buf);
    let p = padded(buf, ipv4::HEADER_LEN);
    let theirs = Ipv4Packet::new_unchecked(&p[..]);
    prop_assert_eq!(ours.version().value(), theirs.version(), "ipv4 version");
    prop_assert_eq!(ours.header_len(), theirs.header_len() as usize, "ipv4 header_len (bytes)");
    prop_assert_eq!(ours.ihl().value() as usize * 4, theirs.header_len() as usize, "ipv4 ihl");
    prop_assert_eq!(ours.dscp().value(), theirs.dscp(), "ipv4 dscp");
    prop_assert_eq!(ours.ecn().value(), theirs.ecn(), "ipv4 ecn");
    prop_assert_eq!(ours.total_len(), theirs.total_len(), "ipv4 total_len");
    prop_assert_eq!(ours.ident(), theirs.ident(), "ipv4 ident");
    prop_assert_eq!(ours.dont_frag(), theirs.dont_frag(), "ipv4 dont_frag");
    prop_assert_eq!(ours.more_frags(), theirs.more_frags(), "ipv4 more_frags");
    // Ours counts 8-byte units, smoltcp bytes.
    prop_assert_eq!(ours.frag_offset().value() * 8, theirs.frag_offset(), "ipv4 frag_offset");
    prop_assert_eq!(ours.ttl(), theirs.hop_limit(), "ipv4 ttl");
    prop_assert_eq!(ours.protocol(), u8::from(theirs.next_header()), "ipv4 protocol");
    prop_assert_eq!(ours.checksum(), theirs.checksum(), "ipv4 checksum");
    prop_assert_eq!(ours.src().octets(), theirs.src_addr().0, "ipv4 src");
    prop_assert_eq!(ours.dst().octets(), theirs.dst_addr().0, "ipv4 dst");
    // The checksum covers the header with its options; zero padding does not change the sum.
    let p = padded(buf, ipv4::HEADER_LEN.max(ours.header_len()));
    let theirs = Ipv4Packet::new_unchecked(&p[..]);
    prop_assert_eq!(ours.checksum_ok(), theirs.verify_checksum(), "ipv4 checksum verdict");
    Ok(())
}

/// `src`/`dst` are the pseudo-header addresses; the checksum verdicts are compared when the
/// buffer is exactly the datagram (`len` = buffer length), as both sides then cover the same
/// bytes.
fn same_udp(buf: &[u8], src: [u8; 4], dst: [u8; 4]) -> Result<(), TestCaseError> {
    let ours = udp::Header::new_unchecked(buf);
    let p = padded(buf, udp::HEADER_LEN);
    let theirs = UdpPacket::new_unchecked(&p[..]);
    prop_assert_eq!(ours.src_port(), theirs.src_port(), "udp src_port");
    prop_assert_eq!(ours.dst_port(), theirs.dst_port(), "udp dst_port");
    prop_assert_eq!(ours.len(), theirs.len(), "udp len");
    prop_assert_eq!(ours.checksum(), theirs.checksum(), "udp checksum");
    if buf.len() >= udp::HEADER_LEN && ours.len() as usize == buf.len() {
        prop_assert_eq!(
            ours.checksum_ok(emu_ip(src), emu_ip(dst)),
            theirs.verify_checksum(&smol_ip(src), &smol_ip(dst)),
            "udp checksum verdict"
        );
    }
    Ok(())
}

/// The checksum verdicts are compared when the buffer holds the fixed header, since both
/// sides take the whole buffer as the segment.
fn same_tcp(buf: &[u8], src: [u8; 4], dst: [u8; 4]) -> Result<(), TestCaseError> {
    let ours = tcp::Header::new_unchecked(buf);
    let p = padded(buf, tcp::HEADER_LEN);
    let theirs = TcpPacket::new_unchecked(&p[..]);
    prop_assert_eq!(ours.src_port(), theirs.src_port(), "tcp src_port");
    prop_assert_eq!(ours.dst_port(), theirs.dst_port(), "tcp dst_port");
    prop_assert_eq!(ours.seq_no(), theirs.seq_number().0 as u32, "tcp seq_no");
    prop_assert_eq!(ours.ack_no(), theirs.ack_number().0 as u32, "tcp ack_no");
    prop_assert_eq!(ours.header_len(), theirs.header_len() as usize, "tcp header_len (bytes)");
    prop_assert_eq!(ours.data_offset().value() * 4, theirs.header_len(), "tcp data_offset");
    prop_assert_eq!(ours.ae(), theirs.ns(), "tcp ae (smoltcp: ns)");
    prop_assert_eq!(ours.cwr(), theirs.cwr(), "tcp cwr");
    prop_assert_eq!(ours.ece(), theirs.ece(), "tcp ece");
    prop_assert_eq!(ours.urg(), theirs.urg(), "tcp urg");
    prop_assert_eq!(ours.ack(), theirs.ack(), "tcp ack");
    prop_assert_eq!(ours.psh(), theirs.psh(), "tcp psh");
    prop_assert_eq!(ours.rst(), theirs.rst(), "tcp rst");
    prop_assert_eq!(ours.syn(), theirs.syn(), "tcp syn");
    prop_assert_eq!(ours.fin(), theirs.fin(), "tcp fin");
    prop_assert_eq!(ours.window(), theirs.window_len(), "tcp window");
    prop_assert_eq!(ours.checksum(), theirs.checksum(), "tcp checksum");
    prop_assert_eq!(ours.urgent(), theirs.urgent_at(), "tcp urgent");
    if buf.len() >= tcp::HEADER_LEN {
        prop_assert_eq!(
            ours.checksum_ok(emu_ip(src), emu_ip(dst)),
            theirs.verify_checksum(&smol_ip(src), &smol_ip(dst)),
            "tcp checksum verdict"
        );
    }
    Ok(())
}

fn same_icmpv4(buf: &[u8]) -> Result<(), TestCaseError> {
    let ours = icmpv4::Header::new_unchecked(buf);
    let p = padded(buf, icmpv4::HEADER_LEN);
    let theirs = Icmpv4Packet::new_unchecked(&p[..]);
    prop_assert_eq!(ours.msg_type(), u8::from(theirs.msg_type()), "icmpv4 msg_type");
    prop_assert_eq!(ours.code(), theirs.msg_code(), "icmpv4 code");
    prop_assert_eq!(ours.checksum(), theirs.checksum(), "icmpv4 checksum");
    prop_assert_eq!(ours.ident(), theirs.echo_ident(), "icmpv4 ident");
    prop_assert_eq!(ours.seq_no(), theirs.echo_seq_no(), "icmpv4 seq_no");
    // The checksum covers the whole message; zero padding does not change the sum.
    prop_assert_eq!(ours.checksum_ok(), theirs.verify_checksum(), "icmpv4 checksum verdict");
    Ok(())
}

/// The addresses are compared when smoltcp lays them out as ours does (hlen 6, plen 4).
fn same_arp(buf: &[u8]) -> Result<(), TestCaseError> {
    let ours = arp::Header::new_unchecked(buf);
    let p = padded(buf, arp::HEADER_LEN);
    let theirs = ArpPacket::new_unchecked(&p[..]);
    prop_assert_eq!(ours.htype(), u16::from(theirs.hardware_type()), "arp htype");
    prop_assert_eq!(ours.ptype(), u16::from(theirs.protocol_type()), "arp ptype");
    prop_assert_eq!(ours.hlen(), theirs.hardware_len(), "arp hlen");
    prop_assert_eq!(ours.plen(), theirs.protocol_len(), "arp plen");
    prop_assert_eq!(ours.oper(), u16::from(theirs.operation()), "arp oper");
    if theirs.hardware_len() == 6 && theirs.protocol_len() == 4 {
        prop_assert_eq!(&ours.sha().bytes()[..], theirs.source_hardware_addr(), "arp sha");
        prop_assert_eq!(&ours.spa().octets()[..], theirs.source_protocol_addr(), "arp spa");
        prop_assert_eq!(&ours.tha().bytes()[..], theirs.target_hardware_addr(), "arp tha");
        prop_assert_eq!(&ours.tpa().octets()[..], theirs.target_protocol_addr(), "arp tpa");
    }
    Ok(())
}

/// Ethernet + IPv4 + the transport header the IPv4 protocol names, each compared where the
/// frame's own length fields put it (the transport header only when they are consistent).
fn same_frame(buf: &[u8]) -> Result<(), TestCaseError> {
    same_ethernet(buf)?;
    let ip_bytes = buf.get(ETH..).unwrap_or(&[]);
    same_ipv4(ip_bytes)?;
    let ip = ipv4::Header::new_unchecked(ip_bytes);
    let (hl, total) = (ip.header_len(), ip.total_len() as usize);
    if hl < ipv4::HEADER_LEN || hl > total || total > ip_bytes.len() {
        return Ok(());
    }
    let l4 = &ip_bytes[hl..total];
    let (src, dst) = (ip.src().octets(), ip.dst().octets());
    match ip.protocol() {
        PROTO_UDP => same_udp(l4, src, dst),
        PROTO_TCP => same_tcp(l4, src, dst),
        PROTO_ICMP => same_icmpv4(l4),
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// check_len / new_checked
// ---------------------------------------------------------------------------------------------

/// Our `check_len` says whether the fixed header fits; smoltcp's also checks the header's own
/// length fields. So: ours passes exactly when the fixed header fits, smoltcp passing implies
/// ours passes, and once the length fields are made consistent with the buffer the two agree.
fn same_len_verdicts(buf: &[u8]) -> Result<(), TestCaseError> {
    fn ours<E: std::fmt::Debug>(
        name: &str,
        fixed: usize,
        buf: &[u8],
        checked: Result<(), E>,
        len_ok: bool,
    ) -> Result<bool, TestCaseError> {
        prop_assert_eq!(checked.is_ok(), buf.len() >= fixed, "{} check_len/new_checked", name);
        prop_assert_eq!(len_ok, checked.is_ok(), "{} check_len vs new_checked", name);
        Ok(checked.is_ok())
    }
    let n = buf.len();

    // Ethernet and ICMPv4: smoltcp checks the fixed header only.
    let o = ours(
        "ethernet",
        ethernet::HEADER_LEN,
        buf,
        ethernet::Header::new_checked(buf).map(|_| ()),
        ethernet::Header::new_unchecked(buf).check_len().is_ok(),
    )?;
    prop_assert_eq!(o, EthernetFrame::new_checked(buf).is_ok(), "ethernet check_len verdict");
    let o = ours(
        "icmpv4",
        icmpv4::HEADER_LEN,
        buf,
        icmpv4::Header::new_checked(buf).map(|_| ()),
        icmpv4::Header::new_unchecked(buf).check_len().is_ok(),
    )?;
    prop_assert_eq!(o, Icmpv4Packet::new_checked(buf).is_ok(), "icmpv4 check_len verdict");

    // IPv4: smoltcp also wants IHL and total length inside the buffer.
    let o = ours(
        "ipv4",
        ipv4::HEADER_LEN,
        buf,
        ipv4::Header::new_checked(buf).map(|_| ()),
        ipv4::Header::new_unchecked(buf).check_len().is_ok(),
    )?;
    prop_assert!(!Ipv4Packet::new_checked(buf).is_ok() || o, "smoltcp accepts ipv4 but we don't");
    let mut b = buf.to_vec();
    if n > 0 {
        b[0] = 0x45;
    }
    if n >= 4 {
        b[2..4].copy_from_slice(&(n as u16).to_be_bytes());
    }
    prop_assert_eq!(o, Ipv4Packet::new_checked(&b[..]).is_ok(), "ipv4 check_len verdict");

    // UDP: smoltcp also wants HEADER_LEN <= len <= buffer.
    let o = ours(
        "udp",
        udp::HEADER_LEN,
        buf,
        udp::Header::new_checked(buf).map(|_| ()),
        udp::Header::new_unchecked(buf).check_len().is_ok(),
    )?;
    prop_assert!(!UdpPacket::new_checked(buf).is_ok() || o, "smoltcp accepts udp but we don't");
    let mut b = buf.to_vec();
    if n >= 6 {
        b[4..6].copy_from_slice(&(n as u16).to_be_bytes());
    }
    prop_assert_eq!(o, UdpPacket::new_checked(&b[..]).is_ok(), "udp check_len verdict");

    // TCP: smoltcp also wants HEADER_LEN <= data offset * 4 <= buffer.
    let o = ours(
        "tcp",
        tcp::HEADER_LEN,
        buf,
        tcp::Header::new_checked(buf).map(|_| ()),
        tcp::Header::new_unchecked(buf).check_len().is_ok(),
    )?;
    prop_assert!(!TcpPacket::new_checked(buf).is_ok() || o, "smoltcp accepts tcp but we don't");
    let mut b = buf.to_vec();
    if n > 12 {
        b[12] = 0x50 | (b[12] & 0x0f);
    }
    prop_assert_eq!(o, TcpPacket::new_checked(&b[..]).is_ok(), "tcp check_len verdict");

    // ARP: smoltcp sizes the addresses from hlen/plen; ours is Ethernet/IPv4 (6, 4).
    let o = ours(
        "arp",
        arp::HEADER_LEN,
        buf,
        arp::Header::new_checked(buf).map(|_| ()),
        arp::Header::new_unchecked(buf).check_len().is_ok(),
    )?;
    let mut b = buf.to_vec();
    if n > 5 {
        b[4] = 6;
        b[5] = 4;
    }
    prop_assert_eq!(o, ArpPacket::new_checked(&b[..]).is_ok(), "arp check_len verdict");

    // The error names the header, what it needs and what it got.
    if let Err(e) = ipv4::Header::new_checked(buf) {
        prop_assert_eq!((e.header, e.needed, e.got), ("ipv4", ipv4::HEADER_LEN, n), "ipv4 Truncated");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Structurally valid frames: field values, and a builder on each side.
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Ipv4Fields {
    dscp: u8,
    ecn: u8,
    ident: u16,
    dont_frag: bool,
    more_frags: bool,
    /// In 8-byte units, as on the wire.
    frag_offset: u16,
    ttl: u8,
    src: [u8; 4],
    dst: [u8; 4],
    /// 0..=40 bytes, a multiple of 4.
    options: Vec<u8>,
}

impl Ipv4Fields {
    fn header_len(&self) -> usize {
        ipv4::HEADER_LEN + self.options.len()
    }
}

#[derive(Debug, Clone)]
enum L4 {
    Udp { src_port: u16, dst_port: u16, payload: Vec<u8> },
    Tcp {
        src_port: u16,
        dst_port: u16,
        seq: u32,
        ack: u32,
        /// The nine flag bits, NS/AE (0x100) down to FIN (0x001).
        flags: u16,
        window: u16,
        urgent: u16,
        /// 0..=40 bytes, a multiple of 4.
        options: Vec<u8>,
        payload: Vec<u8>,
    },
    Icmp { msg_type: u8, code: u8, ident: u16, seq_no: u16, payload: Vec<u8> },
}

impl L4 {
    fn protocol(&self) -> u8 {
        match self {
            L4::Udp { .. } => PROTO_UDP,
            L4::Tcp { .. } => PROTO_TCP,
            L4::Icmp { .. } => PROTO_ICMP,
        }
    }

    fn len(&self) -> usize {
        match self {
            L4::Udp { payload, .. } => udp::HEADER_LEN + payload.len(),
            L4::Tcp { options, payload, .. } => tcp::HEADER_LEN + options.len() + payload.len(),
            L4::Icmp { payload, .. } => icmpv4::HEADER_LEN + payload.len(),
        }
    }
}

#[derive(Debug, Clone)]
struct Frame {
    eth_dst: [u8; 6],
    eth_src: [u8; 6],
    ip: Ipv4Fields,
    l4: L4,
}

impl Frame {
    fn l4_at(&self) -> usize {
        ETH + self.ip.header_len()
    }
    fn len(&self) -> usize {
        self.l4_at() + self.l4.len()
    }
    fn total_len(&self) -> u16 {
        (self.ip.header_len() + self.l4.len()) as u16
    }
}

/// 0..=10 words of option bytes.
fn options() -> impl Strategy<Value = Vec<u8>> {
    (0usize..=10).prop_flat_map(|words| vec(any::<u8>(), words * 4))
}

fn payload() -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..64)
}

fn ipv4_fields() -> impl Strategy<Value = Ipv4Fields> {
    (
        (0u8..64, 0u8..4, any::<u16>(), any::<bool>(), any::<bool>(), 0u16..8192),
        (any::<u8>(), any::<[u8; 4]>(), any::<[u8; 4]>(), options()),
    )
        .prop_map(|((dscp, ecn, ident, dont_frag, more_frags, frag_offset), (ttl, src, dst, options))| {
            Ipv4Fields { dscp, ecn, ident, dont_frag, more_frags, frag_offset, ttl, src, dst, options }
        })
}

fn l4() -> impl Strategy<Value = L4> {
    prop_oneof![
        (any::<u16>(), any::<u16>(), payload())
            .prop_map(|(src_port, dst_port, payload)| L4::Udp { src_port, dst_port, payload }),
        (
            (any::<u16>(), any::<u16>(), any::<u32>(), any::<u32>(), 0u16..0x200),
            (any::<u16>(), any::<u16>(), options(), payload()),
        )
            .prop_map(|((src_port, dst_port, seq, ack, flags), (window, urgent, options, payload))| {
                L4::Tcp { src_port, dst_port, seq, ack, flags, window, urgent, options, payload }
            }),
        (
            prop_oneof![Just(icmpv4::ECHO_REQUEST), Just(icmpv4::ECHO_REPLY), any::<u8>()],
            any::<u8>(),
            any::<u16>(),
            any::<u16>(),
            payload()
        )
            .prop_map(|(msg_type, code, ident, seq_no, payload)| L4::Icmp {
                msg_type,
                code,
                ident,
                seq_no,
                payload
            }),
    ]
}

fn frame() -> impl Strategy<Value = Frame> {
    (any::<[u8; 6]>(), any::<[u8; 6]>(), ipv4_fields(), l4())
        .prop_map(|(eth_dst, eth_src, ip, l4)| Frame { eth_dst, eth_src, ip, l4 })
}

/// The frame as smoltcp builds it, on a zeroed buffer.
fn build_with_smoltcp(f: &Frame) -> Vec<u8> {
    let mut buf = vec![0u8; f.len()];
    let l4_at = f.l4_at();
    buf[ETH + ipv4::HEADER_LEN..l4_at].copy_from_slice(&f.ip.options);

    let mut eth = EthernetFrame::new_unchecked(&mut buf[..]);
    eth.set_dst_addr(EthernetAddress(f.eth_dst));
    eth.set_src_addr(EthernetAddress(f.eth_src));
    eth.set_ethertype(EthernetProtocol::Ipv4);

    let (src, dst) = (smol_ip(f.ip.src), smol_ip(f.ip.dst));
    match &f.l4 {
        L4::Udp { src_port, dst_port, payload } => {
            buf[l4_at + udp::HEADER_LEN..].copy_from_slice(payload);
            let mut p = UdpPacket::new_unchecked(&mut buf[l4_at..]);
            p.set_src_port(*src_port);
            p.set_dst_port(*dst_port);
            p.set_len(f.l4.len() as u16);
            p.fill_checksum(&src, &dst);
        }
        L4::Tcp { src_port, dst_port, seq, ack, flags, window, urgent, options, payload } => {
            let data_at = l4_at + tcp::HEADER_LEN + options.len();
            buf[l4_at + tcp::HEADER_LEN..data_at].copy_from_slice(options);
            buf[data_at..].copy_from_slice(payload);
            let mut p = TcpPacket::new_unchecked(&mut buf[l4_at..]);
            p.set_src_port(*src_port);
            p.set_dst_port(*dst_port);
            p.set_seq_number(TcpSeqNumber(*seq as i32));
            p.set_ack_number(TcpSeqNumber(*ack as i32));
            p.set_header_len((tcp::HEADER_LEN + options.len()) as u8);
            p.set_ns(flags & 0x100 != 0);
            p.set_cwr(flags & 0x080 != 0);
            p.set_ece(flags & 0x040 != 0);
            p.set_urg(flags & 0x020 != 0);
            p.set_ack(flags & 0x010 != 0);
            p.set_psh(flags & 0x008 != 0);
            p.set_rst(flags & 0x004 != 0);
            p.set_syn(flags & 0x002 != 0);
            p.set_fin(flags & 0x001 != 0);
            p.set_window_len(*window);
            p.set_urgent_at(*urgent);
            p.fill_checksum(&src, &dst);
        }
        L4::Icmp { msg_type, code, ident, seq_no, payload } => {
            buf[l4_at + icmpv4::HEADER_LEN..].copy_from_slice(payload);
            let mut p = Icmpv4Packet::new_unchecked(&mut buf[l4_at..]);
            p.set_msg_type(Icmpv4Message::from(*msg_type));
            p.set_msg_code(*code);
            p.set_echo_ident(*ident);
            p.set_echo_seq_no(*seq_no);
            p.fill_checksum();
        }
    }

    let mut ip = Ipv4Packet::new_unchecked(&mut buf[ETH..]);
    ip.set_version(4);
    ip.set_header_len(f.ip.header_len() as u8);
    ip.set_dscp(f.ip.dscp);
    ip.set_ecn(f.ip.ecn);
    ip.set_total_len(f.total_len());
    ip.set_ident(f.ip.ident);
    ip.clear_flags();
    ip.set_dont_frag(f.ip.dont_frag);
    ip.set_more_frags(f.ip.more_frags);
    ip.set_frag_offset(f.ip.frag_offset * 8);
    ip.set_hop_limit(f.ip.ttl);
    ip.set_next_header(IpProtocol::from(f.l4.protocol()));
    ip.set_src_addr(Ipv4Address(f.ip.src));
    ip.set_dst_addr(Ipv4Address(f.ip.dst));
    ip.fill_checksum();
    buf
}

/// Bytes that are not zero, so a setter that leaves stale bits shows up.
fn garbage(len: usize, mut seed: u64) -> Vec<u8> {
    seed |= 1;
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect()
}

/// The frame as our setters build it, over a buffer of garbage: every field is set, including
/// the reserved bits smoltcp leaves at zero.
fn build_with_emu(f: &Frame, seed: u64) -> Vec<u8> {
    let mut buf = garbage(f.len(), seed);
    let l4_at = f.l4_at();
    buf[ETH + ipv4::HEADER_LEN..l4_at].copy_from_slice(&f.ip.options);

    let mut eth = ethernet::Header::new_unchecked(&mut buf[..]);
    eth.set_dst(Mac::from_bytes(f.eth_dst));
    eth.set_src(Mac::from_bytes(f.eth_src));
    eth.set_ethertype(ethernet::EtherType::Ipv4.into());

    let (src, dst) = (emu_ip(f.ip.src), emu_ip(f.ip.dst));
    match &f.l4 {
        L4::Udp { src_port, dst_port, payload } => {
            buf[l4_at + udp::HEADER_LEN..].copy_from_slice(payload);
            let mut h = udp::Header::new_unchecked(&mut buf[l4_at..]);
            h.set_src_port(*src_port);
            h.set_dst_port(*dst_port);
            h.set_len(f.l4.len() as u16);
            h.fill_checksum(src, dst);
        }
        L4::Tcp { src_port, dst_port, seq, ack, flags, window, urgent, options, payload } => {
            let data_at = l4_at + tcp::HEADER_LEN + options.len();
            buf[l4_at + tcp::HEADER_LEN..data_at].copy_from_slice(options);
            buf[data_at..].copy_from_slice(payload);
            let mut h = tcp::Header::new_unchecked(&mut buf[l4_at..]);
            h.set_src_port(*src_port);
            h.set_dst_port(*dst_port);
            h.set_seq_no(*seq);
            h.set_ack_no(*ack);
            h.set_data_offset(u4::new(5 + options.len() as u8 / 4));
            h.set_reserved(u3::new(0));
            h.set_ae(flags & 0x100 != 0);
            h.set_cwr(flags & 0x080 != 0);
            h.set_ece(flags & 0x040 != 0);
            h.set_urg(flags & 0x020 != 0);
            h.set_ack(flags & 0x010 != 0);
            h.set_psh(flags & 0x008 != 0);
            h.set_rst(flags & 0x004 != 0);
            h.set_syn(flags & 0x002 != 0);
            h.set_fin(flags & 0x001 != 0);
            h.set_window(*window);
            h.set_urgent(*urgent);
            h.fill_checksum(src, dst);
        }
        L4::Icmp { msg_type, code, ident, seq_no, payload } => {
            buf[l4_at + icmpv4::HEADER_LEN..].copy_from_slice(payload);
            let mut h = icmpv4::Header::new_unchecked(&mut buf[l4_at..]);
            h.set_msg_type(*msg_type);
            h.set_code(*code);
            h.set_ident(*ident);
            h.set_seq_no(*seq_no);
            h.fill_checksum();
        }
    }

    let mut ip = ipv4::Header::new_unchecked(&mut buf[ETH..]);
    ip.set_version(u4::new(4));
    ip.set_ihl(u4::new((f.ip.header_len() / 4) as u8));
    ip.set_dscp(u6::new(f.ip.dscp));
    ip.set_ecn(u2::new(f.ip.ecn));
    ip.set_total_len(f.total_len());
    ip.set_ident(f.ip.ident);
    ip.set_reserved(false);
    ip.set_dont_frag(f.ip.dont_frag);
    ip.set_more_frags(f.ip.more_frags);
    ip.set_frag_offset(u13::new(f.ip.frag_offset));
    ip.set_ttl(f.ip.ttl);
    ip.set_protocol(f.l4.protocol());
    ip.set_src(src);
    ip.set_dst(dst);
    ip.fill_checksum();
    buf
}

/// smoltcp accepts the frame (`check_len`, `verify_checksum`) and reads back `f`'s values.
fn smoltcp_accepts(buf: &[u8], f: &Frame) -> Result<(), TestCaseError> {
    let eth = EthernetFrame::new_checked(buf);
    prop_assert!(eth.is_ok(), "smoltcp ethernet check_len");
    let eth = eth.unwrap();
    prop_assert_eq!(eth.dst_addr().0, f.eth_dst, "ethernet dst read back");
    prop_assert_eq!(eth.src_addr().0, f.eth_src, "ethernet src read back");
    prop_assert_eq!(eth.ethertype(), EthernetProtocol::Ipv4, "ethernet ethertype read back");

    let ip = Ipv4Packet::new_checked(&buf[ETH..]);
    prop_assert!(ip.is_ok(), "smoltcp ipv4 check_len");
    let ip = ip.unwrap();
    prop_assert!(ip.verify_checksum(), "smoltcp ipv4 verify_checksum");
    prop_assert_eq!(ip.version(), 4, "ipv4 version read back");
    prop_assert_eq!(ip.header_len() as usize, f.ip.header_len(), "ipv4 header_len read back");
    prop_assert_eq!(ip.dscp(), f.ip.dscp, "ipv4 dscp read back");
    prop_assert_eq!(ip.ecn(), f.ip.ecn, "ipv4 ecn read back");
    prop_assert_eq!(ip.total_len(), f.total_len(), "ipv4 total_len read back");
    prop_assert_eq!(ip.ident(), f.ip.ident, "ipv4 ident read back");
    prop_assert_eq!(ip.dont_frag(), f.ip.dont_frag, "ipv4 dont_frag read back");
    prop_assert_eq!(ip.more_frags(), f.ip.more_frags, "ipv4 more_frags read back");
    prop_assert_eq!(ip.frag_offset(), f.ip.frag_offset * 8, "ipv4 frag_offset (bytes) read back");
    prop_assert_eq!(ip.hop_limit(), f.ip.ttl, "ipv4 ttl read back");
    prop_assert_eq!(u8::from(ip.next_header()), f.l4.protocol(), "ipv4 protocol read back");
    prop_assert_eq!(ip.src_addr().0, f.ip.src, "ipv4 src read back");
    prop_assert_eq!(ip.dst_addr().0, f.ip.dst, "ipv4 dst read back");

    let seg = &buf[f.l4_at()..];
    let (src, dst) = (smol_ip(f.ip.src), smol_ip(f.ip.dst));
    match &f.l4 {
        L4::Udp { src_port, dst_port, payload } => {
            let p = UdpPacket::new_checked(seg);
            prop_assert!(p.is_ok(), "smoltcp udp check_len");
            let p = p.unwrap();
            prop_assert!(p.verify_checksum(&src, &dst), "smoltcp udp verify_checksum");
            prop_assert_ne!(p.checksum(), 0, "udp checksum must be sent (0 means none)");
            prop_assert_eq!(p.src_port(), *src_port, "udp src_port read back");
            prop_assert_eq!(p.dst_port(), *dst_port, "udp dst_port read back");
            prop_assert_eq!(p.len() as usize, f.l4.len(), "udp len read back");
            prop_assert_eq!(p.payload(), &payload[..], "udp payload read back");
        }
        L4::Tcp { src_port, dst_port, seq, ack, flags, window, urgent, options, payload } => {
            let p = TcpPacket::new_checked(seg);
            prop_assert!(p.is_ok(), "smoltcp tcp check_len");
            let p = p.unwrap();
            prop_assert!(p.verify_checksum(&src, &dst), "smoltcp tcp verify_checksum");
            prop_assert_eq!(p.src_port(), *src_port, "tcp src_port read back");
            prop_assert_eq!(p.dst_port(), *dst_port, "tcp dst_port read back");
            prop_assert_eq!(p.seq_number().0 as u32, *seq, "tcp seq_no read back");
            prop_assert_eq!(p.ack_number().0 as u32, *ack, "tcp ack_no read back");
            prop_assert_eq!(
                p.header_len() as usize,
                tcp::HEADER_LEN + options.len(),
                "tcp header_len read back"
            );
            let got = (p.ns() as u16) << 8
                | (p.cwr() as u16) << 7
                | (p.ece() as u16) << 6
                | (p.urg() as u16) << 5
                | (p.ack() as u16) << 4
                | (p.psh() as u16) << 3
                | (p.rst() as u16) << 2
                | (p.syn() as u16) << 1
                | p.fin() as u16;
            prop_assert_eq!(got, *flags, "tcp flags read back");
            prop_assert_eq!(p.window_len(), *window, "tcp window read back");
            prop_assert_eq!(p.urgent_at(), *urgent, "tcp urgent read back");
            prop_assert_eq!(p.options(), &options[..], "tcp options read back");
            prop_assert_eq!(p.payload(), &payload[..], "tcp payload read back");
        }
        L4::Icmp { msg_type, code, ident, seq_no, payload } => {
            let p = Icmpv4Packet::new_checked(seg);
            prop_assert!(p.is_ok(), "smoltcp icmpv4 check_len");
            let p = p.unwrap();
            prop_assert!(p.verify_checksum(), "smoltcp icmpv4 verify_checksum");
            prop_assert_eq!(u8::from(p.msg_type()), *msg_type, "icmpv4 msg_type read back");
            prop_assert_eq!(p.msg_code(), *code, "icmpv4 code read back");
            prop_assert_eq!(p.echo_ident(), *ident, "icmpv4 ident read back");
            prop_assert_eq!(p.echo_seq_no(), *seq_no, "icmpv4 seq_no read back");
            prop_assert_eq!(&seg[icmpv4::HEADER_LEN..], &payload[..], "icmpv4 payload read back");
        }
    }
    Ok(())
}

/// Our own checks accept the frame: `new_checked`, `ipv4::check`, and every `checksum_ok`.
fn emu_accepts(buf: &[u8], f: &Frame) -> Result<(), TestCaseError> {
    prop_assert!(ethernet::Header::new_checked(buf).is_ok(), "our ethernet new_checked");
    let ip = ipv4::Header::new_checked(&buf[ETH..]);
    prop_assert!(ip.is_ok(), "our ipv4 new_checked");
    let ip = ip.unwrap();
    prop_assert_eq!(ip.check(), Ok(()), "our ipv4 check");
    prop_assert!(ip.checksum_ok(), "our ipv4 checksum_ok");
    let seg = ip.payload();
    prop_assert_eq!(seg.len(), f.l4.len(), "our ipv4 payload length");
    let (src, dst) = (emu_ip(f.ip.src), emu_ip(f.ip.dst));
    match f.l4 {
        L4::Udp { .. } => {
            let h = udp::Header::new_checked(seg);
            prop_assert!(h.is_ok(), "our udp new_checked");
            prop_assert!(h.unwrap().checksum_ok(src, dst), "our udp checksum_ok");
        }
        L4::Tcp { .. } => {
            let h = tcp::Header::new_checked(seg);
            prop_assert!(h.is_ok(), "our tcp new_checked");
            prop_assert!(h.unwrap().checksum_ok(src, dst), "our tcp checksum_ok");
        }
        L4::Icmp { .. } => {
            let h = icmpv4::Header::new_checked(seg);
            prop_assert!(h.is_ok(), "our icmpv4 new_checked");
            prop_assert!(h.unwrap().checksum_ok(), "our icmpv4 checksum_ok");
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// ARP
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct ArpFields {
    eth_dst: [u8; 6],
    eth_src: [u8; 6],
    oper: u16,
    sha: [u8; 6],
    spa: [u8; 4],
    tha: [u8; 6],
    tpa: [u8; 4],
}

fn arp_fields() -> impl Strategy<Value = ArpFields> {
    (
        any::<[u8; 6]>(),
        any::<[u8; 6]>(),
        prop_oneof![Just(arp::OPER_REQUEST), Just(arp::OPER_REPLY), any::<u16>()],
        (any::<[u8; 6]>(), any::<[u8; 4]>(), any::<[u8; 6]>(), any::<[u8; 4]>()),
    )
        .prop_map(|(eth_dst, eth_src, oper, (sha, spa, tha, tpa))| ArpFields {
            eth_dst,
            eth_src,
            oper,
            sha,
            spa,
            tha,
            tpa,
        })
}

impl ArpFields {
    fn repr(&self) -> ArpRepr {
        ArpRepr::EthernetIpv4 {
            operation: ArpOperation::from(self.oper),
            source_hardware_addr: EthernetAddress(self.sha),
            source_protocol_addr: Ipv4Address(self.spa),
            target_hardware_addr: EthernetAddress(self.tha),
            target_protocol_addr: Ipv4Address(self.tpa),
        }
    }
}

fn build_arp_with_smoltcp(a: &ArpFields) -> Vec<u8> {
    let mut buf = vec![0u8; ETH + arp::HEADER_LEN];
    let mut eth = EthernetFrame::new_unchecked(&mut buf[..]);
    eth.set_dst_addr(EthernetAddress(a.eth_dst));
    eth.set_src_addr(EthernetAddress(a.eth_src));
    eth.set_ethertype(EthernetProtocol::Arp);
    a.repr().emit(&mut ArpPacket::new_unchecked(&mut buf[ETH..]));
    buf
}

fn build_arp_with_emu(a: &ArpFields, seed: u64) -> Vec<u8> {
    let mut buf = garbage(ETH + arp::HEADER_LEN, seed);
    let mut eth = ethernet::Header::new_unchecked(&mut buf[..]);
    eth.set_dst(Mac::from_bytes(a.eth_dst));
    eth.set_src(Mac::from_bytes(a.eth_src));
    eth.set_ethertype(ethernet::EtherType::Arp.into());
    let mut h = arp::Header::new_unchecked(&mut buf[ETH..]);
    h.set_htype(1);
    h.set_ptype(0x0800);
    h.set_hlen(6);
    h.set_plen(4);
    h.set_oper(a.oper);
    h.set_sha(Mac::from_bytes(a.sha));
    h.set_spa(emu_ip(a.spa));
    h.set_tha(Mac::from_bytes(a.tha));
    h.set_tpa(emu_ip(a.tpa));
    buf
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn fixed_header_lengths_match() {
    use smoltcp::wire::{ETHERNET_HEADER_LEN, IPV4_HEADER_LEN, TCP_HEADER_LEN, UDP_HEADER_LEN};
    assert_eq!(ethernet::HEADER_LEN, ETHERNET_HEADER_LEN, "ethernet");
    assert_eq!(ipv4::HEADER_LEN, IPV4_HEADER_LEN, "ipv4");
    assert_eq!(udp::HEADER_LEN, UDP_HEADER_LEN, "udp");
    assert_eq!(tcp::HEADER_LEN, TCP_HEADER_LEN, "tcp");
    let arp_len = ArpRepr::EthernetIpv4 {
        operation: ArpOperation::Request,
        source_hardware_addr: EthernetAddress([0; 6]),
        source_protocol_addr: Ipv4Address([0; 4]),
        target_hardware_addr: EthernetAddress([0; 6]),
        target_protocol_addr: Ipv4Address([0; 4]),
    }
    .buffer_len();
    assert_eq!(arp::HEADER_LEN, arp_len, "arp");
    assert_eq!(icmpv4::HEADER_LEN, 8, "icmpv4 (smoltcp: field::HEADER_END)");
}

proptest! {
    #![proptest_config(config())]

    /// Every field of every header, read from the same random bytes (short buffers included).
    #[test]
    fn read_random_bytes(buf in vec(any::<u8>(), 0..96), src: [u8; 4], dst: [u8; 4]) {
        same_ethernet(&buf)?;
        same_ipv4(&buf)?;
        same_udp(&buf, src, dst)?;
        same_tcp(&buf, src, dst)?;
        same_icmpv4(&buf)?;
        same_arp(&buf)?;
        // UDP with `len` made to match the buffer, so the checksum verdicts are compared too.
        let mut b = buf.clone();
        if b.len() >= udp::HEADER_LEN {
            let n = b.len() as u16;
            b[4..6].copy_from_slice(&n.to_be_bytes());
        }
        same_udp(&b, src, dst)?;
        // The same bytes as a frame: Ethernet, then IPv4 and its transport header.
        same_frame(&buf)?;
    }

    /// ARP with hlen 6 / plen 4, so smoltcp reads the addresses where ours does.
    #[test]
    fn read_random_arp(mut buf in vec(any::<u8>(), 0..40), eth_ipv4: bool) {
        for (i, v) in [(4usize, 6u8), (5, 4)] {
            if let Some(b) = buf.get_mut(i) {
                *b = v;
            }
        }
        if eth_ipv4 && buf.len() >= 4 {
            buf[..4].copy_from_slice(&[0, 1, 0x08, 0x00]);
        }
        same_arp(&buf)?;
        if buf.len() >= arp::HEADER_LEN {
            let ours = arp::Header::new_unchecked(&buf[..]);
            let theirs = ArpRepr::parse(&ArpPacket::new_unchecked(&buf[..]));
            prop_assert_eq!(ours.is_ethernet_ipv4(), theirs.is_ok(), "arp is_ethernet_ipv4");
        }
    }

    /// `check_len`/`new_checked` agree with smoltcp's `check_len` on whether the fixed header fits.
    #[test]
    fn check_len_agrees(buf in vec(any::<u8>(), 0..48)) {
        same_len_verdicts(&buf)?;
    }

    /// Frames smoltcp builds read the same through our views, and pass our checks. With
    /// `flip`, one bit of the frame is flipped first: the views still agree field by field and
    /// both sides then reject (or accept) the same checksums.
    #[test]
    fn read_frames_built_by_smoltcp(f in frame(), flip: Option<Index>) {
        let mut buf = build_with_smoltcp(&f);
        smoltcp_accepts(&buf, &f)?;
        emu_accepts(&buf, &f)?;
        same_frame(&buf)?;
        if let Some(i) = flip {
            let bit = i.index(buf.len() * 8);
            buf[bit / 8] ^= 0x80 >> (bit % 8);
            same_frame(&buf)?;
        }
    }

    /// Frames our setters and `fill_checksum`s build pass smoltcp's `check_len` and
    /// `verify_checksum`, read back as written, and are byte for byte smoltcp's own frame.
    #[test]
    fn frames_built_by_emu_pass_smoltcp(f in frame(), seed: u64) {
        let ours = build_with_emu(&f, seed);
        smoltcp_accepts(&ours, &f)?;
        emu_accepts(&ours, &f)?;
        same_frame(&ours)?;
        let theirs = build_with_smoltcp(&f);
        prop_assert_eq!(&ours[..ETH], &theirs[..ETH], "ethernet bytes");
        prop_assert_eq!(&ours[ETH..f.l4_at()], &theirs[ETH..f.l4_at()], "ipv4 header bytes");
        prop_assert_eq!(&ours[f.l4_at()..], &theirs[f.l4_at()..], "transport bytes");
    }

    /// ARP both ways: ours reads smoltcp's, smoltcp parses ours, and the bytes are the same.
    #[test]
    fn arp_matches_smoltcp(a in arp_fields(), seed: u64) {
        let theirs = build_arp_with_smoltcp(&a);
        let ours = build_arp_with_emu(&a, seed);
        same_ethernet(&theirs)?;
        same_arp(&theirs[ETH..])?;
        let h = arp::Header::new_checked(&theirs[ETH..]);
        prop_assert!(h.is_ok(), "our arp new_checked");
        let h = h.unwrap();
        prop_assert!(h.is_ethernet_ipv4(), "our arp is_ethernet_ipv4");
        prop_assert_eq!(h.oper(), a.oper, "arp oper");
        prop_assert_eq!(h.sha().bytes(), a.sha, "arp sha");
        prop_assert_eq!(h.spa().octets(), a.spa, "arp spa");
        prop_assert_eq!(h.tha().bytes(), a.tha, "arp tha");
        prop_assert_eq!(h.tpa().octets(), a.tpa, "arp tpa");

        let p = ArpPacket::new_checked(&ours[ETH..]);
        prop_assert!(p.is_ok(), "smoltcp arp check_len");
        let parsed = ArpRepr::parse(&p.unwrap());
        prop_assert_eq!(parsed, Ok(a.repr()), "smoltcp parses our arp");
        prop_assert_eq!(
            EthernetFrame::new_unchecked(&ours[..]).ethertype(),
            EthernetProtocol::Arp,
            "ethernet ethertype"
        );
        prop_assert_eq!(ours, theirs, "arp frame bytes");
    }

    /// A router/NAT rewrite: new TTL and addresses, checksums patched with RFC 1624 (the IPv4
    /// header's, and the UDP/TCP one for the pseudo-header addresses), never recomputed.
    #[test]
    fn incremental_update_keeps_checksums_valid(
        f in frame(),
        seed: u64,
        new_ttl: u8,
        new_src: [u8; 4],
        new_dst: [u8; 4],
    ) {
        let mut buf = build_with_emu(&f, seed);
        let (old_src, old_dst) = (emu_ip(f.ip.src), emu_ip(f.ip.dst));
        let (src, dst) = (emu_ip(new_src), emu_ip(new_dst));

        let mut ip = ipv4::Header::new_unchecked(&mut buf[ETH..]);
        let proto = ip.protocol();
        let mut c = ip.checksum();
        // TTL shares its 16-bit word with the protocol.
        c = checksum::update16(
            c,
            u16::from_be_bytes([ip.ttl(), proto]),
            u16::from_be_bytes([new_ttl, proto]),
        );
        c = checksum::update32(c, old_src.0, src.0);
        c = checksum::update32(c, old_dst.0, dst.0);
        ip.set_ttl(new_ttl);
        ip.set_src(src);
        ip.set_dst(dst);
        ip.set_checksum(c);
        prop_assert_eq!(c, checksum::ipv4_header(ip.header_bytes()), "ipv4 incremental vs recomputed");

        let l4_at = f.l4_at();
        let patch = |c: u16| checksum::update32(checksum::update32(c, old_src.0, src.0), old_dst.0, dst.0);
        match f.l4 {
            L4::Udp { .. } => {
                let mut h = udp::Header::new_unchecked(&mut buf[l4_at..]);
                let mut c = patch(h.checksum());
                // RFC 768: a computed 0 is sent as all ones (0 would mean "no checksum").
                if c == 0 {
                    c = 0xffff;
                }
                h.set_checksum(c);
                let full = checksum::transport(src, dst, PROTO_UDP, h.as_bytes(), 6);
                prop_assert_eq!(c, full, "udp incremental vs recomputed");
            }
            L4::Tcp { .. } => {
                let mut h = tcp::Header::new_unchecked(&mut buf[l4_at..]);
                let c = patch(h.checksum());
                h.set_checksum(c);
                let full = checksum::transport(src, dst, PROTO_TCP, h.as_bytes(), 16);
                prop_assert_eq!(c, full, "tcp incremental vs recomputed");
            }
            // ICMP has no pseudo-header: its checksum is untouched.
            L4::Icmp { .. } => {}
        }

        let mut g = f.clone();
        g.ip.ttl = new_ttl;
        g.ip.src = new_src;
        g.ip.dst = new_dst;
        smoltcp_accepts(&buf, &g)?;
        emu_accepts(&buf, &g)?;
        same_frame(&buf)?;
    }
}

//! IPv4 header (RFC 791).

use crate::addr::Ipv4Addr;
use arbitrary_int::{u13, u2, u4, u6};

crate::header! {
    /// An IPv4 header's fixed 20 bytes; options follow when `ihl` > 5.
    "ipv4" {
        /// Version, 4.
        version: u4,
        /// Header length in 32-bit words (5 without options).
        ihl: u4,
        /// Differentiated services code point.
        dscp: u6,
        /// Explicit congestion notification.
        ecn: u2,
        /// Length of header and payload in bytes.
        total_len: u16,
        /// Identification.
        ident: u16,
        /// Reserved flag bit, 0.
        reserved: bool,
        /// Don't fragment.
        dont_frag: bool,
        /// More fragments.
        more_frags: bool,
        /// Fragment offset in 8-byte units.
        frag_offset: u13,
        /// Time to live.
        ttl: u8,
        /// Payload protocol (see [`Protocol`]).
        protocol: u8,
        /// Header checksum.
        checksum: u16,
        /// Source address.
        src: Ipv4Addr,
        /// Destination address.
        dst: Ipv4Addr,
    }
}

impl<T: AsRef<[u8]>> Header<T> {
    /// Header length in bytes, from `ihl`.
    pub fn header_len(&self) -> usize {
        self.ihl().value() as usize * 4
    }

    /// The whole header, options included (shorter when the buffer is).
    pub fn header_bytes(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        &b[..self.header_len().min(b.len())]
    }

    /// True when the header checksum verifies.
    pub fn checksum_ok(&self) -> bool {
        super::checksum::ipv4_header_ok(self.header_bytes())
    }

    /// Checks the structure of untrusted input: version 4, IHL ≥ 5, the header inside the
    /// buffer, total length ≥ header length and inside the buffer.
    #[inline]
    pub fn check(&self) -> Result<(), Malformed> {
        check(self.buffer.as_ref())
    }

    /// The payload: from the end of the header to `total_len`, clipped to the buffer.
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let end = (self.total_len() as usize).min(b.len());
        b.get(self.header_len()..end).unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    /// Recomputes and stores the header checksum.
    pub fn fill_checksum(&mut self) {
        let c = super::checksum::ipv4_header(self.header_bytes());
        self.set_checksum(c);
    }
}

/// Checks that `buf` starts with a structurally sound IPv4 header, in this order: at least 20
/// bytes ([`Malformed::Truncated`]), version 4 ([`Malformed::Version`]), IHL ≥ 5 and the header
/// inside the buffer ([`Malformed::HeaderLength`]), total length ≥ header length and inside the
/// buffer ([`Malformed::TotalLength`]).
#[inline]
pub fn check(buf: &[u8]) -> Result<(), Malformed> {
    // Every target runs this on every IPv4 frame: read the two bytes it needs directly.
    let [v_ihl, _, len_hi, len_lo, ..] = *buf else { return Err(Malformed::Truncated) };
    if buf.len() < HEADER_LEN {
        return Err(Malformed::Truncated);
    }
    if v_ihl >> 4 != 4 {
        return Err(Malformed::Version);
    }
    let header_len = (v_ihl & 0x0f) as usize * 4;
    if header_len < HEADER_LEN || header_len > buf.len() {
        return Err(Malformed::HeaderLength);
    }
    let total = u16::from_be_bytes([len_hi, len_lo]) as usize;
    if total < header_len || total > buf.len() {
        return Err(Malformed::TotalLength);
    }
    Ok(())
}

/// What is wrong with an IPv4 header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// Fewer than 20 bytes.
    Truncated,
    /// Version is not 4.
    Version,
    /// IHL below 5, or the header runs past the buffer.
    HeaderLength,
    /// Total length below the header length or past the buffer.
    TotalLength,
}

/// IP protocol numbers; unknown ones are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// 1
    Icmp,
    /// 6
    Tcp,
    /// 17
    Udp,
    /// Any other value.
    Unknown(u8),
}

impl From<u8> for Protocol {
    fn from(v: u8) -> Self {
        match v {
            1 => Protocol::Icmp,
            6 => Protocol::Tcp,
            17 => Protocol::Udp,
            o => Protocol::Unknown(o),
        }
    }
}

impl From<Protocol> for u8 {
    fn from(p: Protocol) -> u8 {
        match p {
            Protocol::Icmp => 1,
            Protocol::Tcp => 6,
            Protocol::Udp => 17,
            Protocol::Unknown(v) => v,
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    static UDP_PKT: [u8; 24] = [
        0x45, 0x00, 0x00, 0x18, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 10, 0, 0, 1, 10,
        0, 0, 2, 0xde, 0xad, 0xbe, 0xef,
    ];

    #[test]
    fn take_apart() {
        let h = Header::new_checked(&UDP_PKT[..]).unwrap();
        assert_eq!(h.version(), u4::new(4));
        assert_eq!(h.header_len(), 20);
        assert_eq!(h.total_len(), 24);
        assert_eq!(h.ident(), 0x1234);
        assert!(h.dont_frag() && !h.more_frags() && !h.reserved());
        assert_eq!(h.frag_offset(), u13::new(0));
        assert_eq!(h.ttl(), 64);
        assert_eq!(Protocol::from(h.protocol()), Protocol::Udp);
        assert_eq!(h.src(), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(h.payload(), &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(h.check(), Ok(()));
    }

    #[test]
    fn build_with_checksum() {
        let mut b = UDP_PKT;
        let mut h = Header::new_unchecked(&mut b[..]);
        h.fill_checksum();
        assert!(h.checksum_ok());
        h.set_ttl(63);
        assert!(!h.checksum_ok());
        h.set_frag_offset(u13::new(0x1abc));
        h.set_more_frags(true);
        assert_eq!(h.frag_offset(), u13::new(0x1abc));
        assert_eq!(&b[6..8], &[0x7a, 0xbc]);
    }

    #[test]
    fn malformed_inputs() {
        let mut b = UDP_PKT;
        b[0] = 0x44;
        assert_eq!(Header::new_unchecked(&b[..]).check(), Err(Malformed::HeaderLength));
        b[0] = 0x4f;
        assert_eq!(Header::new_unchecked(&b[..]).check(), Err(Malformed::HeaderLength));
        b[0] = 0x65;
        assert_eq!(Header::new_unchecked(&b[..]).check(), Err(Malformed::Version));
        let mut b = UDP_PKT;
        b[3] = 25;
        assert_eq!(Header::new_unchecked(&b[..]).check(), Err(Malformed::TotalLength));
        b[3] = 19;
        assert_eq!(Header::new_unchecked(&b[..]).check(), Err(Malformed::TotalLength));
        assert_eq!(Header::new_unchecked(&b[..10]).check(), Err(Malformed::Truncated));
        // Accessors on a too-short buffer do not panic.
        let h = Header::new_unchecked(&b[..3]);
        assert_eq!(h.dst(), Ipv4Addr(0));
        assert!(h.payload().is_empty());
    }
}

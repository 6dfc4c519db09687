//! UDP header (RFC 768).

use crate::addr::Ipv4Addr;

crate::header! {
    /// A UDP header.
    "udp" {
        /// Source port.
        src_port: u16,
        /// Destination port.
        dst_port: u16,
        /// Length of header and payload in bytes.
        len: u16,
        /// Checksum under the IPv4 pseudo-header (0: not computed).
        checksum: u16,
    }
}

impl<T: AsRef<[u8]>> Header<T> {
    /// The payload up to `len`, clipped to the buffer.
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let end = (self.len() as usize).min(b.len());
        b.get(HEADER_LEN..end).unwrap_or(&[])
    }

    /// True when the checksum verifies (the buffer is the whole datagram).
    pub fn checksum_ok(&self, src: Ipv4Addr, dst: Ipv4Addr) -> bool {
        super::checksum::transport_ok(src, dst, 17, self.buffer.as_ref(), 6)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    /// Recomputes and stores the checksum (the buffer is the whole datagram).
    pub fn fill_checksum(&mut self, src: Ipv4Addr, dst: Ipv4Addr) {
        let c = super::checksum::transport(src, dst, 17, self.buffer.as_ref(), 6);
        self.set_checksum(c);
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn parse_build_verify() {
        let (src, dst) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        let mut b = [0u8; 12];
        let mut h = Header::new_unchecked(&mut b[..]);
        h.set_src_port(1234);
        h.set_dst_port(53);
        h.set_len(12);
        h.as_bytes_mut()[8..].copy_from_slice(b"abcd");
        h.fill_checksum(src, dst);
        assert!(h.checksum_ok(src, dst));
        assert!(!h.checksum_ok(src, Ipv4Addr::new(10, 0, 0, 3)));
        assert_eq!(h.payload(), b"abcd");
        assert_eq!(&b[..6], &[0x04, 0xd2, 0x00, 0x35, 0x00, 0x0c]);
        assert!(Header::new_checked(&b[..7]).is_err());
    }
}

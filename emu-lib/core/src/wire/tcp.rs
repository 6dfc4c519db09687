//! TCP header (RFC 9293), with the flag bits of RFC 3168.

use crate::addr::Ipv4Addr;
use arbitrary_int::{u3, u4};

crate::header! {
    /// A TCP header's fixed 20 bytes; options follow when `data_offset` > 5.
    "tcp" {
        /// Source port.
        src_port: u16,
        /// Destination port.
        dst_port: u16,
        /// Sequence number.
        seq_no: u32,
        /// Acknowledgment number.
        ack_no: u32,
        /// Header length in 32-bit words.
        data_offset: u4,
        /// Reserved bits, 0.
        reserved: u3,
        /// Accurate ECN (formerly NS).
        ae: bool,
        /// Congestion window reduced.
        cwr: bool,
        /// ECN echo.
        ece: bool,
        /// Urgent pointer significant.
        urg: bool,
        /// Acknowledgment field significant.
        ack: bool,
        /// Push.
        psh: bool,
        /// Reset.
        rst: bool,
        /// Synchronize sequence numbers.
        syn: bool,
        /// No more data.
        fin: bool,
        /// Receive window.
        window: u16,
        /// Checksum under the IPv4 pseudo-header.
        checksum: u16,
        /// Urgent pointer.
        urgent: u16,
    }
}

impl<T: AsRef<[u8]>> Header<T> {
    /// Header length in bytes, from `data_offset`.
    pub fn header_len(&self) -> usize {
        self.data_offset().value() as usize * 4
    }

    /// The payload after the header (options skipped), clipped to the buffer.
    pub fn payload(&self) -> &[u8] {
        self.buffer.as_ref().get(self.header_len()..).unwrap_or(&[])
    }

    /// True when the checksum verifies (the buffer is the whole segment).
    pub fn checksum_ok(&self, src: Ipv4Addr, dst: Ipv4Addr) -> bool {
        super::checksum::transport_ok(src, dst, 6, self.buffer.as_ref(), 16)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    /// Recomputes and stores the checksum (the buffer is the whole segment).
    pub fn fill_checksum(&mut self, src: Ipv4Addr, dst: Ipv4Addr) {
        let c = super::checksum::transport(src, dst, 6, self.buffer.as_ref(), 16);
        self.set_checksum(c);
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// A SYN from port 40000 to 80, seq 1, window 64240, no options.
    static SYN: [u8; 20] = [
        0x9c, 0x40, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xfa, 0xf0, 0, 0, 0, 0,
    ];

    #[test]
    fn take_apart_and_build() {
        let h = Header::new_checked(&SYN[..]).unwrap();
        assert_eq!((h.src_port(), h.dst_port()), (40000, 80));
        assert_eq!(h.seq_no(), 1);
        assert_eq!(h.header_len(), 20);
        assert!(h.syn() && !h.ack() && !h.rst() && !h.fin());
        assert_eq!(h.reserved(), u3::new(0));
        assert_eq!(h.window(), 64240);
        let mut b = SYN;
        let mut w = Header::new_unchecked(&mut b[..]);
        w.set_ack(true);
        w.set_rst(true);
        assert_eq!(b[13], 0x16);
        let (src, dst) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        let mut w = Header::new_unchecked(&mut b[..]);
        w.fill_checksum(src, dst);
        assert!(w.checksum_ok(src, dst));
        assert!(Header::new_checked(&SYN[..19]).is_err());
    }
}

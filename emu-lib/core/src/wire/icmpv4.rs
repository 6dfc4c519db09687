//! ICMPv4 (RFC 792), with the echo request/reply layout of the second word.

crate::header! {
    /// An ICMPv4 header; `ident` and `seq_no` are the echo message's rest-of-header.
    "icmpv4" {
        /// Message type (8 echo request, 0 echo reply).
        msg_type: u8,
        /// Message code.
        code: u8,
        /// Checksum over the ICMP message.
        checksum: u16,
        /// Echo identifier.
        ident: u16,
        /// Echo sequence number.
        seq_no: u16,
    }
}

/// Echo reply.
pub const ECHO_REPLY: u8 = 0;
/// Destination unreachable.
pub const DEST_UNREACHABLE: u8 = 3;
/// Echo request.
pub const ECHO_REQUEST: u8 = 8;

impl<T: AsRef<[u8]>> Header<T> {
    /// True when the checksum over the whole message (this buffer) verifies.
    pub fn checksum_ok(&self) -> bool {
        super::checksum::fold(super::checksum::sum(self.buffer.as_ref())) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    /// Recomputes and stores the checksum over the whole message (this buffer).
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = super::checksum::checksum(self.buffer.as_ref());
        self.set_checksum(c);
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// An echo request as Linux ping sends it (8 bytes of header, 4 of data).
    static ECHO: [u8; 12] = [0x08, 0x00, 0x00, 0x00, 0x1c, 0x46, 0x00, 0x01, 0x61, 0x62, 0x63, 0x64];

    #[test]
    fn build_and_verify() {
        let mut b = ECHO;
        let mut h = Header::new_unchecked(&mut b[..]);
        h.fill_checksum();
        assert!(h.checksum_ok());
        assert_eq!(h.msg_type(), ECHO_REQUEST);
        assert_eq!(h.ident(), 0x1c46);
        assert_eq!(h.seq_no(), 1);
        let c = h.checksum();
        h.set_msg_type(ECHO_REPLY);
        assert!(!h.checksum_ok());
        // Changing type 8 → 0 in the first word is an RFC 1624 update.
        h.set_checksum(super::super::checksum::update16(c, 0x0800, 0x0000));
        assert!(h.checksum_ok());
        assert!(Header::new_checked(&b[..7]).is_err());
    }
}

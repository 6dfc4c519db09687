//! DNS message header (RFC 1035 §4.1.1).

use arbitrary_int::u4;

crate::header! {
    /// The 12-byte header of a DNS message.
    "dns" {
        /// Query identifier.
        id: u16,
        /// 0 query, 1 response.
        qr: bool,
        /// Kind of query (0 standard).
        opcode: u4,
        /// Authoritative answer.
        aa: bool,
        /// Truncated.
        tc: bool,
        /// Recursion desired.
        rd: bool,
        /// Recursion available.
        ra: bool,
        /// Reserved, 0.
        z: bool,
        /// Authentic data (RFC 4035).
        ad: bool,
        /// Checking disabled (RFC 4035).
        cd: bool,
        /// Response code (see the `RCODE_` constants).
        rcode: u4,
        /// Number of questions.
        qdcount: u16,
        /// Number of answers.
        ancount: u16,
        /// Number of authority records.
        nscount: u16,
        /// Number of additional records.
        arcount: u16,
    }
}

/// No error.
pub const RCODE_NOERROR: u8 = 0;
/// The query was malformed.
pub const RCODE_FORMERR: u8 = 1;
/// The name does not exist.
pub const RCODE_NXDOMAIN: u8 = 3;
/// The server does not implement the kind of query (the opcode).
pub const RCODE_NOTIMP: u8 = 4;
/// The server refuses the query (e.g. a class it has no zone for).
pub const RCODE_REFUSED: u8 = 5;

#[cfg(test)]
mod test {
    use super::*;

    /// Header of a standard query with recursion desired, one question.
    static QUERY: [u8; 12] = [0xbe, 0xef, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];

    #[test]
    fn parse_and_answer() {
        let h = Header::new_checked(&QUERY[..]).unwrap();
        assert_eq!(h.id(), 0xbeef);
        assert!(!h.qr() && h.rd() && !h.aa());
        assert_eq!(h.opcode(), u4::new(0));
        assert_eq!(h.qdcount(), 1);
        let mut b = QUERY;
        let mut w = Header::new_unchecked(&mut b[..]);
        w.set_qr(true);
        w.set_aa(true);
        w.set_rcode(u4::new(RCODE_NXDOMAIN));
        assert_eq!(&b[2..4], &[0x85, 0x03]);
        assert!(Header::new_checked(&QUERY[..11]).is_err());
    }
}

//! Memcached wire headers: the binary protocol's request/response header and the 8-byte frame
//! header memcached puts in front of every UDP datagram.

/// The memcached binary protocol header (24 bytes).
pub mod binary {
    crate::header! {
        /// A memcached binary protocol request or response header.
        "memcached_binary" {
            /// 0x80 request, 0x81 response.
            magic: u8,
            /// Command (0x00 get, 0x01 set, 0x04 delete, …).
            opcode: u8,
            /// Key length.
            key_len: u16,
            /// Extras length.
            extras_len: u8,
            /// Data type, 0.
            data_type: u8,
            /// vbucket id in requests, status in responses.
            vbucket_or_status: u16,
            /// Length of extras, key and value.
            total_body_len: u32,
            /// Opaque, echoed in the response.
            opaque: u32,
            /// Compare-and-swap token.
            cas: u64,
        }
    }

    /// Request magic.
    pub const MAGIC_REQUEST: u8 = 0x80;
    /// Response magic.
    pub const MAGIC_RESPONSE: u8 = 0x81;
    /// GET.
    pub const OP_GET: u8 = 0x00;
    /// SET.
    pub const OP_SET: u8 = 0x01;
    /// DELETE.
    pub const OP_DELETE: u8 = 0x04;
}

/// The memcached UDP frame header (8 bytes).
pub mod udp_frame {
    crate::header! {
        /// The frame header before every memcached UDP datagram.
        "memcached_udp_frame" {
            /// Request id, echoed in the response.
            request_id: u16,
            /// Sequence number of this datagram.
            seq_no: u16,
            /// Total datagrams in the message.
            datagrams: u16,
            /// Reserved, 0.
            reserved: u16,
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// UDP frame header and binary GET request for key "foo".
    static GET: [u8; 35] = [
        0x00, 0x07, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, // frame header
        0x80, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xde, 0xad, 0xbe,
        0xef, 0, 0, 0, 0, 0, 0, 0, 0, b'f', b'o', b'o',
    ];

    #[test]
    fn frame_and_binary_get() {
        let f = udp_frame::Header::new_checked(&GET[..]).unwrap();
        assert_eq!((f.request_id(), f.seq_no(), f.datagrams()), (7, 0, 1));
        let h = binary::Header::new_checked(&GET[8..]).unwrap();
        assert_eq!(h.magic(), binary::MAGIC_REQUEST);
        assert_eq!(h.opcode(), binary::OP_GET);
        assert_eq!(h.key_len(), 3);
        assert_eq!(h.total_body_len(), 3);
        assert_eq!(h.opaque(), 0xdeadbeef);
        assert_eq!(h.cas(), 0);
        let mut b = GET;
        let mut w = binary::Header::new_unchecked(&mut b[8..]);
        w.set_magic(binary::MAGIC_RESPONSE);
        w.set_cas(0x0102030405060708);
        assert_eq!(&b[24..32], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&b[32..], b"foo");
        assert!(binary::Header::new_checked(&GET[8..31]).is_err());
    }
}

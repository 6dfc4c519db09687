//! IEEE 802.1Q tag: the four bytes after an Ethernet header whose EtherType is 0x8100.

use arbitrary_int::{u12, u3};

crate::header! {
    /// An 802.1Q tag control field and the EtherType it encapsulates.
    "vlan" {
        /// Priority code point.
        pcp: u3,
        /// Drop eligible indicator.
        dei: bool,
        /// VLAN identifier.
        vid: u12,
        /// EtherType of the payload.
        ethertype: u16,
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn parse_and_emit() {
        let b = [0xa0, 0x64, 0x08, 0x00];
        let h = Header::new_checked(&b[..]).unwrap();
        assert_eq!(h.pcp(), u3::new(5));
        assert!(!h.dei());
        assert_eq!(h.vid(), u12::new(100));
        assert_eq!(h.ethertype(), 0x0800);
        let mut out = [0u8; 4];
        let mut w = Header::new_unchecked(&mut out[..]);
        w.set_pcp(u3::new(5));
        w.set_vid(u12::new(100));
        w.set_ethertype(0x0800);
        assert_eq!(out, b);
        assert!(Header::new_checked(&b[..3]).is_err());
    }
}

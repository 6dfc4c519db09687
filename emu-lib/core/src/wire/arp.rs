//! ARP for IPv4 over Ethernet (RFC 826).

use crate::addr::{Ipv4Addr, Mac};

crate::header! {
    /// An ARP packet for Ethernet hardware and IPv4 protocol addresses.
    "arp" {
        /// Hardware type (1 for Ethernet).
        htype: u16,
        /// Protocol type (0x0800 for IPv4).
        ptype: u16,
        /// Hardware address length (6).
        hlen: u8,
        /// Protocol address length (4).
        plen: u8,
        /// Operation: 1 request, 2 reply.
        oper: u16,
        /// Sender hardware address.
        sha: Mac,
        /// Sender protocol address.
        spa: Ipv4Addr,
        /// Target hardware address.
        tha: Mac,
        /// Target protocol address.
        tpa: Ipv4Addr,
    }
}

/// ARP request.
pub const OPER_REQUEST: u16 = 1;
/// ARP reply.
pub const OPER_REPLY: u16 = 2;

impl<T: AsRef<[u8]>> Header<T> {
    /// True for Ethernet/IPv4 ARP, the only kind this view describes correctly.
    pub fn is_ethernet_ipv4(&self) -> bool {
        self.htype() == 1 && self.ptype() == 0x0800 && self.hlen() == 6 && self.plen() == 4
    }
}

#[cfg(test)]
mod test {
    use super::*;

    static REQUEST: [u8; 28] = [
        0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0, 0, 0, 0, 0x01, 10, 0, 0, 1, 0,
        0, 0, 0, 0, 0, 10, 0, 0, 2,
    ];

    #[test]
    fn parse_and_emit() {
        let h = Header::new_checked(&REQUEST[..]).unwrap();
        assert!(h.is_ethernet_ipv4());
        assert_eq!(h.oper(), OPER_REQUEST);
        assert_eq!(h.sha(), Mac::from_bytes([2, 0, 0, 0, 0, 1]));
        assert_eq!(h.spa(), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(h.tpa(), Ipv4Addr::new(10, 0, 0, 2));
        let mut out = [0u8; 28];
        let mut w = Header::new_unchecked(&mut out[..]);
        w.set_htype(1);
        w.set_ptype(0x0800);
        w.set_hlen(6);
        w.set_plen(4);
        w.set_oper(OPER_REQUEST);
        w.set_sha(h.sha());
        w.set_spa(h.spa());
        w.set_tpa(h.tpa());
        assert_eq!(out, REQUEST);
        assert!(Header::new_checked(&REQUEST[..27]).is_err());
    }
}

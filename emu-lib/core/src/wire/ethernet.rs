//! Ethernet II frame header.

use crate::addr::Mac;

crate::header! {
    /// An Ethernet II header: destination, source, EtherType.
    "ethernet" {
        /// Destination MAC address.
        dst: Mac,
        /// Source MAC address.
        src: Mac,
        /// EtherType of the payload (see [`EtherType`]).
        ethertype: u16,
    }
}

impl<T: AsRef<[u8]>> Header<T> {
    /// The payload after the 14-byte header (empty when the frame is shorter).
    pub fn payload(&self) -> &[u8] {
        self.buffer.as_ref().get(HEADER_LEN..).unwrap_or(&[])
    }
}

/// EtherType values; unknown ones are kept, so nothing is lost in a round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EtherType {
    /// 0x0800
    Ipv4,
    /// 0x0806
    Arp,
    /// 0x8100, an 802.1Q tag follows
    Vlan,
    /// 0x86DD
    Ipv6,
    /// 0x88B5, Emu's in-band debug channel
    EmuControl,
    /// Any other value.
    Unknown(u16),
}

impl From<u16> for EtherType {
    fn from(v: u16) -> Self {
        match v {
            0x0800 => EtherType::Ipv4,
            0x0806 => EtherType::Arp,
            0x8100 => EtherType::Vlan,
            0x86DD => EtherType::Ipv6,
            0x88B5 => EtherType::EmuControl,
            other => EtherType::Unknown(other),
        }
    }
}

impl From<EtherType> for u16 {
    fn from(t: EtherType) -> u16 {
        match t {
            EtherType::Ipv4 => 0x0800,
            EtherType::Arp => 0x0806,
            EtherType::Vlan => 0x8100,
            EtherType::Ipv6 => 0x86DD,
            EtherType::EmuControl => 0x88B5,
            EtherType::Unknown(v) => v,
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    static FRAME: [u8; 16] = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0xaa,
        0xbb,
    ];

    #[test]
    fn take_apart() {
        let h = Header::new_checked(&FRAME[..]).unwrap();
        assert!(h.dst().is_broadcast());
        assert_eq!(h.src().to_string(), "02:00:00:00:00:01");
        assert_eq!(EtherType::from(h.ethertype()), EtherType::Arp);
        assert_eq!(h.payload(), &[0xaa, 0xbb]);
    }

    #[test]
    fn build() {
        let mut b = [0u8; 16];
        let mut h = Header::new_unchecked(&mut b[..]);
        h.set_dst(Mac::BROADCAST);
        h.set_src(Mac::from_bytes([2, 0, 0, 0, 0, 1]));
        h.set_ethertype(EtherType::Arp.into());
        assert_eq!(&b[..14], &FRAME[..14]);
    }

    #[test]
    fn short_buffers() {
        assert_eq!(Header::new_checked(&FRAME[..13]).unwrap_err().got, 13);
        let h = Header::new_unchecked(&FRAME[..8]);
        // Bytes 6 and 7 are present, the rest of the source address reads as 0.
        assert_eq!(h.src().bytes(), [0x02, 0x00, 0, 0, 0, 0]);
        assert_eq!(h.ethertype(), 0);
        assert!(h.payload().is_empty());
        assert_eq!(EtherType::from(0x1234), EtherType::Unknown(0x1234));
        assert_eq!(u16::from(EtherType::Unknown(0x1234)), 0x1234);
    }
}

//! Link and network addresses as fixed-width values.

use crate::bits::{Bits, Scalar};
use arbitrary_int::u48;
use core::fmt;
use core::str::FromStr;

/// An Ethernet MAC address: 48 bits, most significant byte first on the wire.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mac(pub u48);

impl Mac {
    /// ff:ff:ff:ff:ff:ff.
    pub const BROADCAST: Mac = Mac(u48::new(0xffff_ffff_ffff));

    /// The address of six bytes in wire order.
    pub const fn from_bytes(b: [u8; 6]) -> Mac {
        let v = (b[0] as u64) << 40
            | (b[1] as u64) << 32
            | (b[2] as u64) << 24
            | (b[3] as u64) << 16
            | (b[4] as u64) << 8
            | b[5] as u64;
        Mac(u48::extract_u64(v, 0))
    }

    /// The six bytes in wire order.
    pub fn bytes(self) -> [u8; 6] {
        let mut b = [0u8; 6];
        self.0.write_be(&mut b);
        b
    }

    /// True for ff:ff:ff:ff:ff:ff.
    pub fn is_broadcast(self) -> bool {
        self == Mac::BROADCAST
    }

    /// True when the group bit (least significant bit of the first byte) is set; broadcast
    /// is a multicast address too.
    pub fn is_multicast(self) -> bool {
        (self.0.value() >> 40) & 1 == 1
    }
}

impl Bits for Mac {
    const WIDTH: usize = 48;
    const SHOWN: crate::state::Shown = crate::state::Shown::Mac;
    fn write_be(&self, out: &mut [u8]) {
        self.0.write_be(out)
    }
    fn read_be(bytes: &[u8]) -> Self {
        Mac(u48::read_be(bytes))
    }
}

impl Scalar for Mac {
    #[inline]
    fn to_u64(self) -> u64 {
        self.0.value()
    }
    #[inline]
    fn from_u64_masked(v: u64) -> Self {
        Mac(u48::extract_u64(v, 0))
    }
}

impl fmt::Display for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.bytes();
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5])
    }
}

impl fmt::Debug for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The error of parsing an address from text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddrParseError(pub String);

impl fmt::Display for AddrParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AddrParseError {}

impl FromStr for Mac {
    type Err = AddrParseError;
    fn from_str(s: &str) -> Result<Mac, AddrParseError> {
        let err = || AddrParseError(format!("`{s}` is not a MAC address; write it as 02:00:00:00:00:01"));
        let mut b = [0u8; 6];
        let mut parts = s.split(|c| c == ':' || c == '-');
        for byte in b.iter_mut() {
            let p = parts.next().ok_or_else(err)?;
            if p.len() != 2 {
                return Err(err());
            }
            *byte = u8::from_str_radix(p, 16).map_err(|_| err())?;
        }
        if parts.next().is_some() {
            return Err(err());
        }
        Ok(Mac::from_bytes(b))
    }
}

/// An IPv4 address: 32 bits, most significant byte first on the wire.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ipv4Addr(pub u32);

impl Ipv4Addr {
    /// The address a.b.c.d.
    pub const fn new(a: u8, b: u8, c: u8, d: u8) -> Ipv4Addr {
        Ipv4Addr(u32::from_be_bytes([a, b, c, d]))
    }

    /// The four bytes in wire order.
    pub const fn octets(self) -> [u8; 4] {
        self.0.to_be_bytes()
    }
}

impl Bits for Ipv4Addr {
    const WIDTH: usize = 32;
    const SHOWN: crate::state::Shown = crate::state::Shown::Ipv4;
    fn write_be(&self, out: &mut [u8]) {
        self.0.write_be(out)
    }
    fn read_be(bytes: &[u8]) -> Self {
        Ipv4Addr(u32::read_be(bytes))
    }
}

impl Scalar for Ipv4Addr {
    #[inline]
    fn to_u64(self) -> u64 {
        self.0 as u64
    }
    #[inline]
    fn from_u64_masked(v: u64) -> Self {
        Ipv4Addr(v as u32)
    }
}

impl From<std::net::Ipv4Addr> for Ipv4Addr {
    fn from(a: std::net::Ipv4Addr) -> Self {
        Ipv4Addr(u32::from(a))
    }
}

impl From<Ipv4Addr> for std::net::Ipv4Addr {
    fn from(a: Ipv4Addr) -> Self {
        std::net::Ipv4Addr::from(a.0)
    }
}

impl fmt::Display for Ipv4Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&std::net::Ipv4Addr::from(*self), f)
    }
}

impl fmt::Debug for Ipv4Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Ipv4Addr {
    type Err = AddrParseError;
    fn from_str(s: &str) -> Result<Ipv4Addr, AddrParseError> {
        s.parse::<std::net::Ipv4Addr>()
            .map(Ipv4Addr::from)
            .map_err(|_| AddrParseError(format!("`{s}` is not an IPv4 address; write it as 10.0.0.1")))
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn mac_text_and_bits() {
        let m: Mac = "02:00:0a:0b:0c:ff".parse().unwrap();
        assert_eq!(m.bytes(), [2, 0, 10, 11, 12, 255]);
        assert_eq!(m.to_string(), "02:00:0a:0b:0c:ff");
        assert!(!m.is_multicast());
        assert!(Mac::BROADCAST.is_broadcast() && Mac::BROADCAST.is_multicast());
        assert!("01:00:5e:00:00:01".parse::<Mac>().unwrap().is_multicast());
        assert!("02:00:0a:0b:0c".parse::<Mac>().is_err());
        assert!("02:00:0a:0b:0c:ff:00".parse::<Mac>().is_err());
        assert!("zz:00:0a:0b:0c:ff".parse::<Mac>().is_err());
    }

    #[test]
    fn ipv4_text() {
        let a: Ipv4Addr = "10.0.0.1".parse().unwrap();
        assert_eq!(a, Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(a.to_string(), "10.0.0.1");
        assert!("10.0.0".parse::<Ipv4Addr>().is_err());
    }
}

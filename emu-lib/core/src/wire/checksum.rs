//! The Internet checksum (RFC 1071): IPv4 header, UDP and TCP with the IPv4 pseudo-header, and
//! the incremental update of RFC 1624.

use crate::addr::Ipv4Addr;

/// The 32-bit one's-complement running sum of `data` taken as big-endian 16-bit words; an odd
/// last byte is padded with a zero byte.
pub fn sum(data: &[u8]) -> u32 {
    // Adding big-endian 32-bit words and folding gives the same one's-complement sum as adding
    // 16-bit words (2^16 ≡ 1 mod 0xffff), with half the additions.
    let mut acc: u64 = 0;
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        acc += u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as u64;
    }
    let rest = words.remainder();
    let mut pairs = rest.chunks_exact(2);
    for w in &mut pairs {
        acc += u16::from_be_bytes([w[0], w[1]]) as u64;
    }
    if let [b] = pairs.remainder() {
        acc += (*b as u64) << 8;
    }
    fold64(acc) as u32
}

fn fold64(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Folds a running sum to 16 bits (end-around carry).
pub fn fold(acc: u32) -> u16 {
    fold64(acc as u64)
}

/// The checksum over `data`: the complement of its folded sum.
pub fn checksum(data: &[u8]) -> u16 {
    !fold(sum(data))
}

/// The checksum an IPv4 header should carry: `header` is the whole header (options included)
/// with its checksum field taken as zero whatever it holds.
pub fn ipv4_header(header: &[u8]) -> u16 {
    let mut acc = sum(header);
    if header.len() >= 12 {
        acc += 0xffff - u16::from_be_bytes([header[10], header[11]]) as u32;
    }
    !fold(acc)
}

/// True when an IPv4 header's checksum is right (the sum over the header folds to 0xffff).
pub fn ipv4_header_ok(header: &[u8]) -> bool {
    fold(sum(header)) == 0xffff
}

/// The running sum of the IPv4 pseudo-header for a transport segment of `len` bytes.
pub fn pseudo_header(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, len: u16) -> u32 {
    (src.0 >> 16) + (src.0 & 0xffff) + (dst.0 >> 16) + (dst.0 & 0xffff) + protocol as u32 + len as u32
}

/// The checksum of a UDP or TCP segment (header and payload, checksum field included, taken as
/// zero whatever it holds) under the IPv4 pseudo-header. `checksum_at` is the field's offset in
/// the segment (6 for UDP, 16 for TCP). For UDP a result of 0 is sent as 0xffff (RFC 768).
pub fn transport(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, segment: &[u8], checksum_at: usize) -> u16 {
    let mut acc = pseudo_header(src, dst, protocol, segment.len() as u16) + sum(segment);
    if let Some(f) = segment.get(checksum_at..checksum_at + 2) {
        acc += 0xffff - u16::from_be_bytes([f[0], f[1]]) as u32;
    }
    let c = !fold(acc);
    if protocol == 17 && c == 0 {
        0xffff
    } else {
        c
    }
}

/// True when a UDP or TCP segment's checksum verifies under the pseudo-header. A UDP checksum
/// of 0 means "not computed" and is accepted.
pub fn transport_ok(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, segment: &[u8], checksum_at: usize) -> bool {
    if protocol == 17 && segment.get(checksum_at..checksum_at + 2) == Some(&[0, 0]) {
        return true;
    }
    fold(pseudo_header(src, dst, protocol, segment.len() as u16) + sum(segment)) == 0xffff
}

/// RFC 1624 eqn. 3: the new checksum after one 16-bit word of the covered data changes from
/// `old` to `new`: `HC' = ~(~HC + ~m + m')`.
pub fn update16(checksum: u16, old: u16, new: u16) -> u16 {
    !fold(!checksum as u32 + !old as u32 + new as u32)
}

/// [`update16`] for a 32-bit field (an IPv4 address), as two 16-bit words.
pub fn update32(checksum: u16, old: u32, new: u32) -> u16 {
    let c = update16(checksum, (old >> 16) as u16, (new >> 16) as u16);
    update16(c, old as u16, new as u16)
}

#[cfg(test)]
mod test {
    use super::*;

    /// The example header of RFC 1071 §3 / common references: 4500 0073 0000 4000 4011 b861
    /// c0a8 0001 c0a8 00c7.
    static IP: [u8; 20] = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];

    #[test]
    fn ipv4_header_checksum() {
        assert_eq!(ipv4_header(&IP), 0xb861);
        assert!(ipv4_header_ok(&IP));
        let mut bad = IP;
        bad[11] ^= 1;
        assert!(!ipv4_header_ok(&bad));
        assert_eq!(ipv4_header(&bad), 0xb861);
    }

    /// The 32-bit-word sum equals the plain 16-bit-word sum on every length and content.
    #[test]
    fn sum_matches_the_definition() {
        let data: Vec<u8> = (0..300u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 | 0x80).collect();
        for len in 0..data.len() {
            let d = &data[..len];
            let mut plain: u64 = 0;
            for (i, b) in d.iter().enumerate() {
                plain += if i % 2 == 0 { (*b as u64) << 8 } else { *b as u64 };
            }
            assert_eq!(fold(sum(d)), fold64(plain), "length {len}");
        }
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(fold(sum(&[0x01])), 0x0100);
        assert_eq!(fold(sum(&[0x01, 0x02, 0x03])), 0x0102 + 0x0300);
        assert_eq!(sum(&[]), 0);
    }

    #[test]
    fn udp_checksum_and_zero_rule() {
        let src = Ipv4Addr::new(10, 0, 0, 1);
        let dst = Ipv4Addr::new(10, 0, 0, 2);
        let mut seg = [0x04, 0xd2, 0x00, 0x35, 0x00, 0x0a, 0, 0, 0xab, 0xcd];
        let c = transport(src, dst, 17, &seg, 6);
        seg[6..8].copy_from_slice(&c.to_be_bytes());
        assert!(transport_ok(src, dst, 17, &seg, 6));
        seg[9] ^= 0x10;
        assert!(!transport_ok(src, dst, 17, &seg, 6));
        seg[6..8].copy_from_slice(&[0, 0]);
        assert!(transport_ok(src, dst, 17, &seg, 6), "a zero UDP checksum is 'not computed'");
    }

    /// Incremental updates agree with recomputation, for every word position and value.
    #[test]
    fn rfc1624_matches_recompute() {
        let mut h = IP;
        for (pos, new) in [(8usize, 0x3f11u16), (12, 0x0a00), (16, 0xffff), (2, 0x0000)] {
            let old = u16::from_be_bytes([h[pos], h[pos + 1]]);
            let before = u16::from_be_bytes([h[10], h[11]]);
            h[pos..pos + 2].copy_from_slice(&new.to_be_bytes());
            let inc = update16(before, old, new);
            assert_eq!(inc, ipv4_header(&h), "word at {pos}");
            h[10..12].copy_from_slice(&inc.to_be_bytes());
            assert!(ipv4_header_ok(&h));
        }
        let before = u16::from_be_bytes([h[10], h[11]]);
        let old = u32::from_be_bytes([h[12], h[13], h[14], h[15]]);
        h[12..16].copy_from_slice(&[172, 16, 5, 9]);
        assert_eq!(update32(before, old, 0xac10_0509), ipv4_header(&h));
    }
}

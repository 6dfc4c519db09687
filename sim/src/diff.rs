//! Comparing what two tiers sent: per port, per frame, the first difference decoded to the
//! header field it falls in.

use emu_core::wire::{self, HeaderInfo};

/// The first difference between two tiers' frames on one port: the frame's index on the port
/// and a sentence naming the field.
pub fn first_difference(a: &[Vec<u8>], b: &[Vec<u8>], a_name: &str, b_name: &str) -> Option<(usize, String)> {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x != y {
            return Some((i, describe(x, y, a_name, b_name)));
        }
    }
    match a.len().cmp(&b.len()) {
        std::cmp::Ordering::Equal => None,
        _ => {
            let n = a.len().min(b.len());
            Some((n, format!("{a_name} sent {} frames, {b_name} sent {}", a.len(), b.len())))
        }
    }
}

/// Where two versions of a frame first differ, e.g. `byte 22 (ipv4.ttl): cpu 0x40, ir 0x3f`.
pub fn describe(a: &[u8], b: &[u8], a_name: &str, b_name: &str) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => {
            let field = field_at(a, i);
            let value = |f: &[u8]| match field_value(f, i) {
                Some((_, v)) => format!("{v:#x}"),
                None => format!("{:#04x}", f[i]),
            };
            let name = field_value(a, i).map(|(n, _)| n).unwrap_or(field);
            format!("byte {i} ({name}): {a_name} {}, {b_name} {}", value(a), value(b))
        }
        None => format!("length: {a_name} {} bytes, {b_name} {} bytes", a.len(), b.len()),
    }
}

/// The headers of `frame` with their offsets: Ethernet, then 802.1Q tags, then ARP or IPv4 and
/// its ICMP, UDP or TCP header.
fn layout(frame: &[u8]) -> Vec<(usize, &'static HeaderInfo)> {
    let be16 = |at: usize| frame.get(at..at + 2).map(|b| u16::from_be_bytes([b[0], b[1]])).unwrap_or(0);
    let info = |name: &str| wire::HEADERS.iter().find(|h| h.name == name).expect("known header");
    let mut out = vec![(0, info("ethernet"))];
    let (mut off, mut ty) = (14, be16(12));
    while ty == 0x8100 && out.len() < 3 {
        out.push((off, info("vlan")));
        ty = be16(off + 2);
        off += 4;
    }
    match ty {
        0x0806 => out.push((off, info("arp"))),
        0x0800 => {
            out.push((off, info("ipv4")));
            let ihl = frame.get(off).map(|b| (b & 0x0f) as usize * 4).unwrap_or(20);
            let l4 = match frame.get(off + 9) {
                Some(1) => Some("icmpv4"),
                Some(6) => Some("tcp"),
                Some(17) => Some("udp"),
                _ => None,
            };
            if let Some(name) = l4 {
                out.push((off + ihl, info(name)));
            }
        }
        _ => {}
    }
    out
}

/// The `header.field` that byte `i` of `frame` belongs to, or `payload`.
pub fn field_at(frame: &[u8], i: usize) -> String {
    field_value(frame, i).map(|(n, _)| n).unwrap_or_else(|| "payload".into())
}

fn field_value(frame: &[u8], i: usize) -> Option<(String, u64)> {
    let bit = i * 8;
    for (off, h) in layout(frame).into_iter().rev() {
        if i < off || i >= off + h.len {
            continue;
        }
        let rel = bit - off * 8;
        // The first field overlapping the byte (a byte can hold several narrow fields).
        let f = h.fields.iter().find(|f| f.bit_offset + f.width > rel && f.bit_offset < rel + 8)?;
        let v = emu_core::bits::read_field(frame.get(off..).unwrap_or(&[]), f.bit_offset, f.width);
        return Some((format!("{}.{}", h.name, f.name), v));
    }
    None
}

#[cfg(test)]
mod test {
    use super::*;
    use emu_core::craft;
    use emu_core::{Ipv4Addr, Mac};

    #[test]
    fn names_the_field_that_differs() {
        let ip = craft::udp(Ipv4Addr::new(10, 0, 0, 1), 1, Ipv4Addr::new(10, 0, 0, 2), 53, b"hi");
        let a = craft::ethernet(Mac::BROADCAST, Mac::from_bytes([2, 0, 0, 0, 0, 1]), 0x0800, &ip);
        let mut b = a.clone();
        b[22] = 63;
        assert_eq!(describe(&a, &b, "cpu", "ir"), "byte 22 (ipv4.ttl): cpu 0x40, ir 0x3f");
        let mut c = a.clone();
        c[36] ^= 0xff;
        assert_eq!(field_at(&c, 36), "udp.dst_port");
        assert_eq!(field_at(&a, 14), "ipv4.version");
        assert_eq!(field_at(&a, 0), "ethernet.dst");
        assert_eq!(field_at(&a, 43), "payload");
        assert!(describe(&a, &a[..50], "cpu", "ir").starts_with("length: cpu 60 bytes, ir 50 bytes"));
        let one = vec![a.clone()];
        let two = vec![a.clone(), b];
        assert_eq!(first_difference(&one, &two, "cpu", "ir"), Some((1, "cpu sent 1 frames, ir sent 2".into())));
        assert_eq!(first_difference(&one, &one, "cpu", "ir"), None);
    }
}

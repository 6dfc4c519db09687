//! Comparing what two tiers did: input frame by input frame (each output frame carries the
//! index of the input frame it came from), each difference decoded to the header field it
//! falls in.

use emu_core::wire::{self, HeaderInfo};
use std::collections::BTreeMap;

/// What a tier did with one input frame: the frames it sent for it, by port, or its drop.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fate {
    /// (port, bytes) of each frame sent, ports rising.
    pub sent: Vec<(usize, Vec<u8>)>,
    /// The drop reason, when it was dropped.
    pub dropped: Option<String>,
}

impl Fate {
    fn said(&self) -> String {
        let ports: Vec<String> = self.sent.iter().map(|(p, _)| p.to_string()).collect();
        let sent = format!("sent it on port{} {}", if ports.len() == 1 { "" } else { "s" }, ports.join(", "));
        match (&self.dropped, self.sent.is_empty()) {
            (Some(r), true) => format!("dropped it ({r})"),
            // Not from one run of the runner, which does one or the other: from damaged files.
            (Some(r), false) => format!("{sent} and dropped it ({r})"),
            (None, true) => "sent nothing for it".into(),
            (None, false) => sent,
        }
    }
}

/// Each input frame's fate, by its index: `ports[p]` lists the frames sent on port `p` with the
/// index of the input frame each came from, `drops` the (index, reason) of each drop.
pub fn fates(ports: Vec<Vec<(u64, Vec<u8>)>>, drops: Vec<(u64, String)>) -> BTreeMap<u64, Fate> {
    let mut out: BTreeMap<u64, Fate> = BTreeMap::new();
    for (port, frames) in ports.into_iter().enumerate() {
        for (index, bytes) in frames {
            out.entry(index).or_default().sent.push((port, bytes));
        }
    }
    for (index, reason) in drops {
        out.entry(index).or_default().dropped = Some(reason);
    }
    out
}

/// One input frame the two tiers did not treat alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameDifference {
    /// The input frame's index (from 0, in arrival order).
    pub index: u64,
    /// When both sent it on the same ports: the first port where the bytes differ.
    pub port: Option<usize>,
    /// What differs, as a sentence.
    pub what: String,
}

/// The input frames whose fates differ between tiers `a` and `b`, in input order: one entry per
/// input frame, so a frame one tier lost is one difference however many frames follow it.
pub fn compare_fates(a: &BTreeMap<u64, Fate>, b: &BTreeMap<u64, Fate>, a_name: &str, b_name: &str) -> Vec<FrameDifference> {
    let none = Fate::default();
    let indices: std::collections::BTreeSet<u64> = a.keys().chain(b.keys()).copied().collect();
    indices
        .into_iter()
        .filter_map(|i| compare_fate(i, a.get(&i).unwrap_or(&none), b.get(&i).unwrap_or(&none), a_name, b_name))
        .collect()
}

/// How input frame `index`'s fates `x` (in tier `a_name`) and `y` (in `b_name`) differ, if they do.
pub fn compare_fate(index: u64, x: &Fate, y: &Fate, a_name: &str, b_name: &str) -> Option<FrameDifference> {
    if x == y {
        return None;
    }
    let same_ports = x.dropped == y.dropped && x.sent.iter().map(|s| s.0).eq(y.sent.iter().map(|s| s.0));
    Some(match x.sent.iter().zip(&y.sent).find(|(p, q)| p.1 != q.1) {
        Some(((port, fx), (_, fy))) if same_ports => {
            FrameDifference { index, port: Some(*port), what: describe(fx, fy, a_name, b_name) }
        }
        _ => FrameDifference { index, port: None, what: format!("{a_name} {}, {b_name} {}", x.said(), y.said()) },
    })
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
    }

    #[test]
    fn one_lost_frame_is_one_difference() {
        let frame = |i: u64| vec![2, 0, 0, 0, 0, i as u8, 0x88, 0xb5];
        // Six frames, each flooded to ports 1 and 2; the other tier drops frame 2.
        let port: Vec<(u64, Vec<u8>)> = (0..6).map(|i| (i, frame(i))).collect();
        let cpu = fates(vec![vec![], port.clone(), port.clone()], vec![]);
        let lost: Vec<(u64, Vec<u8>)> = port.iter().filter(|(i, _)| *i != 2).cloned().collect();
        let hw = fates(vec![vec![], lost.clone(), lost], vec![(2, "runt".into())]);
        let d = compare_fates(&cpu, &hw, "cpu", "verilator");
        assert_eq!(
            d,
            [FrameDifference {
                index: 2,
                port: None,
                what: "cpu sent it on ports 1, 2, verilator dropped it (runt)".into()
            }]
        );
        let mut edited = port.clone();
        edited[4].1[5] = 9;
        let d = compare_fates(&cpu, &fates(vec![vec![], port.clone(), edited], vec![]), "cpu", "ir");
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].index, d[0].port), (4, Some(2)));
        assert!(d[0].what.contains("ethernet.dst"), "{d:?}");
        assert!(compare_fates(&cpu, &cpu, "cpu", "ir").is_empty());
    }
}

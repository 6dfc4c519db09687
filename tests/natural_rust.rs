//! Constructs of the Rust a user reaches for, written as a user writes them, on all four
//! tiers (cpu, ir, cycle, verilator) over the same frames: each NF here is accepted by
//! `#[emu::nf]` as first written, and every tier sends the same bytes out of the same ports.

mod nf_common;

use emu::{Config, NfDescriptor};
use nf_common::{assert_agree, outcomes};

/// The descriptor of an NF module of this file: its name is the module's, no options.
macro_rules! descriptor {
    ($m:ident :: $nf:ident, $summary:literal) => {
        NfDescriptor {
            name: stringify!($m),
            summary: $summary,
            ports: $m::HLS_PORTS,
            window: $m::HLS_WINDOW,
            params: &[],
            build: |_| Ok(Box::new($m::$nf::default())),
            hls_source: Some($m::HLS_SOURCE),
        }
    };
}

/// A token-bucket-like meter and a clamp, with saturating arithmetic on unsigned and signed
/// values of several widths.
#[emu::nf(ports = 2, window = 64)]
pub mod saturating {
    use emu::prelude::*;

    #[derive(Debug, Default)]
    pub struct Saturating {
        /// Credit per input port: spent by each frame's length, refilled by its first byte.
        pub credit: Array<u16, 2>,
        /// A running level that sticks at its bounds (an `i16`'s bits: state elements hold
        /// unsigned values).
        pub level: Register<u16>,
    }

    impl NetworkFunction for Saturating {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let port = meta.in_port as usize;
            let (a, b) = (pkt.byte(14), pkt.byte(15));
            pkt.set_byte(16, a.saturating_add(b));
            pkt.set_byte(17, a.saturating_sub(b));
            let s = (a as i8).saturating_add(b as i8);
            let d = (a as i8).saturating_sub(b as i8);
            pkt.set_byte(18, s as u8);
            pkt.set_byte(19, d as u8);
            let wide = (pkt.byte(20) as u32) << 24 | (pkt.byte(21) as u32);
            let sum = wide.saturating_add(0xf000_0000);
            pkt.set_byte(22, (sum >> 24) as u8);
            let step = (a as i16) * 64 - 4096;
            let level = (self.level.get() as i16).saturating_add(step);
            self.level.set(level as u16);
            pkt.set_byte(23, (level >> 8) as u8);
            let credit = self.credit.get(port).saturating_add(a as u16 * 16).saturating_sub(meta.len);
            self.credit.set(port, credit);
            if credit == 0 {
                return Action::Drop(DropReason::Policy);
            }
            Action::Forward(1 - meta.in_port)
        }
    }
}

static SATURATING: NfDescriptor = descriptor!(saturating::Saturating, "saturating arithmetic");

/// Operands at both ends of each range: overflow, underflow, the signed bounds.
fn operand_frames() -> Vec<(Vec<u8>, u8)> {
    let edges = [0u8, 1, 0x7f, 0x80, 0x81, 0xfe, 0xff, 0x40, 0xc0];
    let mut frames = vec![];
    for (i, &a) in edges.iter().enumerate() {
        for (j, &b) in edges.iter().enumerate() {
            let mut f = vec![0u8; 60 + (i * 7 + j * 13) % 40];
            f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
            f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
            f[12..14].copy_from_slice(&[0x88, 0xb5]);
            f[14] = a;
            f[15] = b;
            f[20] = b;
            f[21] = a;
            frames.push((f, ((i + j) % 2) as u8));
        }
    }
    frames
}

#[test]
fn saturating_arithmetic_agrees_on_all_four_tiers() {
    let frames = operand_frames();
    let tiers = outcomes(&SATURATING, &Config::new(), &["ir", "cycle", "verilator"], &frames);
    assert_agree(&SATURATING, &frames, &tiers);
    // What they agree on is Rust's saturation, checked here against the library's own.
    let (_, cpu) = &tiers[0];
    let mut checked = 0;
    for ((f, _), o) in frames.iter().zip(cpu) {
        if let emu_hls::backend::model::Outcome::Sent(_, out) = o {
            let (a, b) = (f[14], f[15]);
            assert_eq!(out[16], a.saturating_add(b));
            assert_eq!(out[17], a.saturating_sub(b));
            assert_eq!(out[18] as i8, (a as i8).saturating_add(b as i8));
            assert_eq!(out[19] as i8, (a as i8).saturating_sub(b as i8));
            checked += 1;
        }
    }
    assert!(checked > 40, "most frames are sent: {checked}");
    assert!(cpu.iter().any(|o| matches!(o, emu_hls::backend::model::Outcome::Dropped(_))), "the credit runs out too");
}

/// Overflow-checked arithmetic: `checked_*` as an `Option` (matched, unwrapped with a default,
/// tested), `overflowing_*` as a tuple, and a remainder by a constant written with a cast.
#[emu::nf(ports = 2, window = 64)]
pub mod overflow {
    use emu::prelude::*;

    const LANES: usize = 4;

    #[derive(Debug, Default)]
    pub struct Overflow {
        pub overflows: Counter,
        pub total: Register<u16>,
    }

    impl NetworkFunction for Overflow {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let (a, b) = (pkt.byte(14), pkt.byte(15));
            match a.checked_add(b) {
                Some(sum) => pkt.set_byte(16, sum),
                None => self.overflows.inc(),
            }
            pkt.set_byte(17, a.checked_sub(b).unwrap_or(0xee));
            let (product, wrapped) = a.overflowing_mul(b);
            pkt.set_byte(18, product);
            pkt.set_byte(19, wrapped as u8);
            let (difference, wrapped) = (a as i8).overflowing_sub(b as i8);
            pkt.set_byte(20, difference as u8);
            pkt.set_byte(21, wrapped as u8);
            let signed = if let Some(p) = (a as i8).checked_mul(b as i8) { p as u8 } else { 0x55 };
            pkt.set_byte(22, signed);
            let wide = (a as u16) << 8 | b as u16;
            let (total, carry) = wide.overflowing_add(self.total.get());
            self.total.set(total);
            pkt.set_byte(23, (total >> 8) as u8);
            pkt.set_byte(24, carry as u8);
            pkt.set_byte(25, (wide as u32 % LANES as u32) as u8);
            if a.checked_mul(b).is_none() && meta.in_port == 1 {
                return Action::Drop(DropReason::Policy);
            }
            Action::Forward(1 - meta.in_port)
        }
    }
}

static OVERFLOW: NfDescriptor = descriptor!(overflow::Overflow, "overflow-checked arithmetic");

#[test]
fn checked_and_overflowing_arithmetic_agree_on_all_four_tiers() {
    let frames = operand_frames();
    let tiers = outcomes(&OVERFLOW, &Config::new(), &["ir", "cycle", "verilator"], &frames);
    assert_agree(&OVERFLOW, &frames, &tiers);
    let (_, cpu) = &tiers[0];
    let mut sent = 0;
    for ((f, port), o) in frames.iter().zip(cpu) {
        let (a, b) = (f[14], f[15]);
        match o {
            emu_hls::backend::model::Outcome::Sent(_, out) => {
                assert_eq!(out[16], a.checked_add(b).unwrap_or(0));
                assert_eq!(out[17], a.checked_sub(b).unwrap_or(0xee));
                assert_eq!((out[18], out[19] == 1), a.overflowing_mul(b));
                assert_eq!((out[20] as i8, out[21] == 1), (a as i8).overflowing_sub(b as i8));
                assert_eq!(out[22], (a as i8).checked_mul(b as i8).map_or(0x55, |p| p as u8));
                assert_eq!(out[25], b % 4);
                sent += 1;
            }
            _ => assert!(*port == 1 && a.checked_mul(b).is_none(), "only an overflowing product from port 1 drops"),
        }
    }
    assert!(sent > 40 && sent < frames.len(), "{sent} of {} sent", frames.len());
}

/// Lookup tables and loops over fixed lists: a constant array indexed by a loop variable and by
/// a masked value, `for` over a constant array and over an array literal, `(a..b).rev()`;
/// integers from packet bytes with `from_be_bytes` / `from_le_bytes`, and local arrays: bytes of
/// an integer (`to_be_bytes`), destructured, indexed, looped over.
#[emu::nf(ports = 4, window = 64)]
pub mod tables {
    use emu::prelude::*;

    const WEIGHTS: [u8; 4] = [1, 3, 5, 7];
    const SQUARES: [u16; 16] = [0, 1, 4, 9, 16, 25, 36, 49, 64, 81, 100, 121, 144, 169, 196, 225];
    const NEXT_PORT: [u8; 4] = [1, 2, 3, 0];

    #[derive(Debug, Default)]
    pub struct Tables {
        pub frames: Counter,
    }

    impl NetworkFunction for Tables {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            self.frames.inc();
            let mut sum = 0u8;
            for i in 0..4 {
                sum = sum.wrapping_add(pkt.byte(14 + i).wrapping_mul(WEIGHTS[i]));
            }
            pkt.set_byte(20, sum);
            let square = SQUARES[(pkt.byte(15) & 0xf) as usize];
            pkt.set_byte(21, (square >> 8) as u8);
            pkt.set_byte(22, square as u8);
            let mut hash = 0u8;
            for i in (14..18).rev() {
                hash = hash.wrapping_mul(31).wrapping_add(pkt.byte(i));
            }
            pkt.set_byte(23, hash);
            let mut above = 0u8;
            for w in WEIGHTS {
                if pkt.byte(16) > w * 30 {
                    above += 1;
                }
            }
            pkt.set_byte(24, above);
            let mut largest = 0u8;
            for b in [pkt.byte(14), pkt.byte(15), pkt.byte(21)] {
                largest = largest.max(b);
            }
            pkt.set_byte(25, largest);
            let mut last = 0xffu8;
            for i in (14..20).rev() {
                if pkt.byte(i) != 0 {
                    last = i as u8;
                    break;
                }
            }
            pkt.set_byte(26, last);
            let word = u32::from_be_bytes([pkt.byte(14), pkt.byte(15), pkt.byte(16), pkt.byte(17)]);
            let little = u16::from_le_bytes([pkt.byte(14), pkt.byte(15)]);
            pkt.set_byte(27, (word >> 16) as u8 ^ (little >> 8) as u8);
            pkt.set_byte(28, (word % 251) as u8);
            let bytes = word.rotate_left(8).to_be_bytes();
            let [first, second, _, fourth] = bytes;
            pkt.set_byte(29, first ^ fourth);
            let mut parity = 0u8;
            for b in word.to_le_bytes() {
                parity ^= b;
            }
            pkt.set_byte(30, parity);
            let picks: [u8; 4] = [pkt.byte(14), pkt.byte(15), pkt.byte(16), pkt.byte(17)];
            pkt.set_byte(31, picks[(pkt.byte(14) & 3) as usize]);
            let zeros = [0u8; 4];
            pkt.set_byte(32, zeros[3].wrapping_add(bytes[1]) ^ second);
            let low = u16::from_be_bytes([bytes[2], bytes[3]]);
            let again = u32::from_be_bytes(bytes);
            pkt.set_byte(33, ((again == word.rotate_left(8)) as u8).wrapping_add(low as u8));
            Action::Forward(NEXT_PORT[meta.in_port as usize % 4])
        }
    }
}

static TABLES: NfDescriptor = descriptor!(tables::Tables, "constant arrays and loops over fixed lists");

#[test]
fn constant_arrays_and_fixed_lists_agree_on_all_four_tiers() {
    let mut frames = operand_frames();
    for (k, (f, port)) in frames.iter_mut().enumerate() {
        *port = (k % 4) as u8;
        f[16] = (k * 37) as u8;
        f[17] = if k % 3 == 0 { 0 } else { k as u8 };
    }
    let tiers = outcomes(&TABLES, &Config::new(), &["ir", "cycle", "verilator"], &frames);
    assert_agree(&TABLES, &frames, &tiers);
    let (_, cpu) = &tiers[0];
    for ((f, port), o) in frames.iter().zip(cpu) {
        let emu_hls::backend::model::Outcome::Sent(dst, out) = o else { panic!("every frame is forwarded: {o:?}") };
        let weights = [1u8, 3, 5, 7];
        let sum = (0..4).fold(0u8, |s, i| s.wrapping_add(f[14 + i].wrapping_mul(weights[i])));
        assert_eq!(out[20], sum);
        assert_eq!(u16::from_be_bytes([out[21], out[22]]), ((f[15] & 0xf) as u16).pow(2));
        assert_eq!(out[23], (14..18).rev().fold(0u8, |h, i| h.wrapping_mul(31).wrapping_add(f[i])));
        assert_eq!(out[24], weights.iter().filter(|&&w| f[16] > w * 30).count() as u8);
        assert_eq!(out[25], f[14].max(f[15]).max(out[21]));
        assert_eq!(out[26], (14..20).rev().find(|&i| f[i] != 0).map_or(0xff, |i| i as u8));
        let word = u32::from_be_bytes([f[14], f[15], f[16], f[17]]);
        let little = u16::from_le_bytes([f[14], f[15]]);
        assert_eq!(out[27], (word >> 16) as u8 ^ (little >> 8) as u8);
        assert_eq!(out[28], (word % 251) as u8);
        let bytes = word.rotate_left(8).to_be_bytes();
        assert_eq!(out[29], bytes[0] ^ bytes[3]);
        assert_eq!(out[30], word.to_le_bytes().iter().fold(0, |p, b| p ^ b));
        assert_eq!(out[31], f[14 + (f[14] & 3) as usize]);
        assert_eq!(out[32], 0);
        assert_eq!(out[33], 1u8.wrapping_add(bytes[3]));
        assert_eq!(*dst, 1 << ((port + 1) % 4), "NEXT_PORT[in_port]");
    }
}

/// Tuples and structs as state: a flow table keyed by (source address, UDP source port) whose
/// value is a (count, last TTL) pair, a register holding a pair, and an LRU and a register of
/// the NF's own `Flow` struct.
#[emu::nf(ports = 2, window = 64)]
pub mod tuples {
    use emu::prelude::*;

    /// A flow key of the NF's own, as one value (`#[derive(Bits)]`).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Bits)]
    pub struct Flow {
        pub dst: Ipv4Addr,
        pub port: u16,
        pub ttl_low: u4,
    }

    #[derive(Debug, Default)]
    pub struct Tuples {
        pub flows: HashTable<(Ipv4Addr, u16), (u16, u8), 64, 4>,
        pub last: Register<(u8, bool)>,
        pub recent: Lru<Flow, u8, 8>,
        pub last_flow: Register<Flow>,
    }

    impl NetworkFunction for Tuples {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let key = (pkt.ipv4().src(), pkt.udp_at(34).src_port());
            let (count, _) = self.flows.get(key).unwrap_or((0, 0));
            let ttl = pkt.ipv4().ttl();
            if let Some(((ip, port), (n, t))) = self.flows.insert(key, (count + 1, ttl)) {
                // An evicted flow: its key and value as they were.
                pkt.set_byte(50, ip.0 as u8);
                pkt.set_byte(51, port as u8);
                pkt.set_byte(52, n as u8);
                pkt.set_byte(53, t);
            }
            pkt.set_byte(46, (count >> 8) as u8);
            pkt.set_byte(47, count as u8);
            let (frames, odd) = self.last.get();
            self.last.set((frames.wrapping_add(1), !odd));
            pkt.set_byte(48, frames);
            pkt.set_byte(49, odd as u8);
            let flow = Flow { port: key.1, dst: pkt.ipv4().dst(), ttl_low: u4::masked_new(ttl) };
            let hits = self.recent.get(flow).unwrap_or(0);
            self.recent.insert(flow, hits.wrapping_add(1));
            let before = self.last_flow.get();
            self.last_flow.set(flow);
            pkt.set_byte(54, hits);
            pkt.set_byte(55, before.port as u8);
            pkt.set_byte(56, before.ttl_low.value());
            Action::Forward(1 - meta.in_port)
        }
    }
}

static TUPLES: NfDescriptor = descriptor!(tuples::Tuples, "tuples as table keys and values");

#[test]
fn tuples_as_keys_and_values_agree_on_all_four_tiers() {
    let mut frames = vec![];
    for k in 0..400usize {
        // 41 flows seen again and again, then 100 new ones that evict.
        let flow = if k < 300 { (k * 7919) % 41 } else { k };
        let mut f = vec![0u8; 64];
        f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        f[22] = if k < 300 { 64 } else { (k % 64) as u8 }; // TTL
        f[23] = 17;
        f[26..30].copy_from_slice(&[10, 0, (flow / 8) as u8, flow as u8]);
        f[34..36].copy_from_slice(&(1000 + (flow % 5) as u16).to_be_bytes());
        f[16..18].copy_from_slice(&50u16.to_be_bytes());
        emu::wire::ipv4::Header::new_unchecked(&mut f[14..34]).fill_checksum();
        frames.push((f, (k % 2) as u8));
    }
    let tiers = outcomes(&TUPLES, &Config::new(), &["ir", "cycle", "verilator"], &frames);
    assert_agree(&TUPLES, &frames, &tiers);
    let (_, cpu) = &tiers[0];
    let counts: Vec<u16> = cpu
        .iter()
        .map(|o| match o {
            emu_hls::backend::model::Outcome::Sent(_, out) => u16::from_be_bytes([out[46], out[47]]),
            other => panic!("every frame is forwarded: {other:?}"),
        })
        .collect();
    assert!(counts.iter().any(|&c| c >= 2), "flows are counted across frames");
    let evicted =
        cpu.iter().filter(|o| matches!(o, emu_hls::backend::model::Outcome::Sent(_, out) if out[52] != 0)).count();
    assert!(evicted > 0, "141 flows in 64 slots evict some");
    let hits =
        cpu.iter().filter(|o| matches!(o, emu_hls::backend::model::Outcome::Sent(_, out) if out[54] != 0)).count();
    assert!(hits > 0, "the struct-keyed LRU finds flows again");
}

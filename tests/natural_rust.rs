//! Constructs of the Rust a user reaches for, written as a user writes them, on all four
//! tiers (cpu, ir, cycle, verilator) over the same frames: each NF here is accepted by
//! `#[emu::nf]` as first written, and every tier sends the same bytes out of the same ports.

mod nf_common;

use emu::{Config, NfDescriptor};
use nf_common::{assert_agree, outcomes};

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

static SATURATING: NfDescriptor = NfDescriptor {
    name: "saturating",
    summary: "saturating arithmetic",
    ports: saturating::HLS_PORTS,
    window: saturating::HLS_WINDOW,
    params: &[],
    build: |_| Ok(Box::new(saturating::Saturating::default())),
    hls_source: Some(saturating::HLS_SOURCE),
};

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

static OVERFLOW: NfDescriptor = NfDescriptor {
    name: "overflow",
    summary: "overflow-checked arithmetic",
    ports: overflow::HLS_PORTS,
    window: overflow::HLS_WINDOW,
    params: &[],
    build: |_| Ok(Box::new(overflow::Overflow::default())),
    hls_source: Some(overflow::HLS_SOURCE),
};

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

//! Hand-written references: the learning switch and the ICMP echo responder written directly as
//! rust-hdl blocks, with the top-level interface of the HLS-generated designs
//! (`emu_hls::backend::top::SumeTop`), so both run through the same tests and flows and the
//! compiler's output can be judged against what an engineer would write by hand.
//!
//! # The interface (the same as the generated designs')
//!
//! The NetFPGA SUME output-port-lookup ports, `D` data bits and `K = D / 8` keep bits (64 and
//! 256 bits are instantiated): `axis_aclk`; `axis_resetn` (active low, synchronous);
//! `s_axis_{tdata,tkeep,tuser,tvalid,tready,tlast}` and the same `m_axis_*` set, frame byte `i`
//! of a beat at `tdata[8i+7:8i]`; `tuser[15:0]` the length, `[23:16]` the one-hot source port,
//! `[31:24]` the one-hot destination ports, NF port `k` at bit `2k` of each byte. A dropped frame
//! shows for one cycle on `stat_drop_valid` with its `DropReason` code on `stat_drop_reason`, in
//! frame order with the frames sent.
//!
//! As in the generated designs, the input port is the lowest set bit of the first beat's
//! `tuser[23:16]`, halved; the output's source byte is re-encoded from it; the frame's length is
//! counted from `tkeep` (beats are packed: every beat but the last is full, the last one's bytes
//! are the low lanes), not taken from `tuser`; frames up to [`MAX_FRAME`] bytes are accepted.
//!
//! # The microarchitecture
//!
//! Store and forward, one bus word per cycle in and out:
//!
//! - **ingress**: writes every beat into a packet buffer (block RAM, a ring of `2^AW` bus words)
//!   and captures the header bytes the NF reads into registers as they pass, counting the length;
//! - **decide**: a short pipeline after the last beat runs `emu_core::check_frame`'s checks
//!   ([`FrameCheck`]) and the NF, and pushes a descriptor (length, words, ports or drop reason)
//!   into a small FIFO;
//! - **egress**: pops descriptors in order; a drop shows on `stat_drop_*` for one cycle and its
//!   words are skipped; a frame is streamed out of the buffer, the block RAM's read address
//!   running one word ahead so beats leave back to back, frame after frame.
//!
//! The buffer holds two largest frames, so a frame is received while the one before is sent.

pub mod icmp_echo;
pub mod learning_switch;

pub use icmp_echo::{IcmpEcho, IcmpEcho256, IcmpEcho64};
pub use learning_switch::{LearningSwitch, LearningSwitch256, LearningSwitch64};

use emu_core::DropReason;
use emu_hls::backend::model::{Beat, Outputs};
use rust_hdl::prelude::*;

/// The largest frame accepted, as the generated designs' default (`HwConfig::new`): Ethernet
/// with one 802.1Q tag, FCS not counted. Longer frames are dropped as oversize.
pub const MAX_FRAME: u64 = 1518;

/// Header bytes the ingress checks read: two 802.1Q tags and the IPv4 fields they test.
pub const CHECK_BYTES: usize = 26;

/// `emu_core::check_frame` as combinational logic over the captured header bytes and the
/// frame's length: `reason` is the `DropReason` code, 0 when the frame passes.
#[derive(LogicBlock)]
pub struct FrameCheck {
    // The frame.
    /// Header bytes 0..[`CHECK_BYTES`]; bytes past the frame's end must be 0.
    pub header: [Signal<In, Bits<8>>; CHECK_BYTES],
    /// The frame's length in bytes (meaningless when `oversize`).
    pub len: Signal<In, Bits<16>>,
    /// More than [`MAX_FRAME`] bytes arrived.
    pub oversize: Signal<In, Bit>,

    // The verdict.
    /// The drop reason's code, or 0.
    pub reason: Signal<Out, Bits<8>>,

    /// EtherTypes after zero, one and two tags (bytes 12, 16, 20).
    ty0: Signal<Local, Bits<16>>,
    ty1: Signal<Local, Bits<16>>,
    ty2: Signal<Local, Bits<16>>,
    /// The IPv4 verdict for a header at byte 14, 18 and 22.
    ip14: Signal<Local, Bits<8>>,
    ip18: Signal<Local, Bits<8>>,
    ip22: Signal<Local, Bits<8>>,
    /// IHL × 4 at each offset, and the frame's length widened so sums cannot wrap.
    hl14: Signal<Local, Bits<17>>,
    hl18: Signal<Local, Bits<17>>,
    hl22: Signal<Local, Bits<17>>,
    len17: Signal<Local, Bits<17>>,
}

impl Default for FrameCheck {
    fn default() -> Self {
        FrameCheck {
            header: Default::default(),
            len: Default::default(),
            oversize: Default::default(),
            reason: Default::default(),
            ty0: Default::default(),
            ty1: Default::default(),
            ty2: Default::default(),
            ip14: Default::default(),
            ip18: Default::default(),
            ip22: Default::default(),
            hl14: Default::default(),
            hl18: Default::default(),
            hl22: Default::default(),
            len17: Default::default(),
        }
    }
}

// The `DropReason` codes `FrameCheck` gives, as literals (rust-hdl's generator would print a
// Rust constant as a Verilog identifier).
const _: () = assert!(
    DropReason::Empty as u8 == 1
        && DropReason::Runt as u8 == 2
        && DropReason::Oversize as u8 == 3
        && DropReason::Ipv4Version as u8 == 5
        && DropReason::Ipv4HeaderLength as u8 == 6
        && DropReason::Ipv4TotalLength as u8 == 7
);

impl Logic for FrameCheck {
    #[hdl_gen]
    fn update(&mut self) {
        self.ty0.next = (bit_cast::<16, 8>(self.header[12].val()) << 8) | bit_cast::<16, 8>(self.header[13].val());
        self.ty1.next = (bit_cast::<16, 8>(self.header[16].val()) << 8) | bit_cast::<16, 8>(self.header[17].val());
        self.ty2.next = (bit_cast::<16, 8>(self.header[20].val()) << 8) | bit_cast::<16, 8>(self.header[21].val());
        self.len17.next = bit_cast::<17, 16>(self.len.val());
        self.hl14.next = bit_cast::<17, 8>(self.header[14].val() & 0x0f) << 2;
        self.hl18.next = bit_cast::<17, 8>(self.header[18].val() & 0x0f) << 2;
        self.hl22.next = bit_cast::<17, 8>(self.header[22].val() & 0x0f) << 2;
        // ipv4::check at each offset, in its order: truncated, version, header length, total
        // length (the total length field is the next EtherType slot's bytes).
        self.ip14.next = 0.into();
        if self.len17.val() < 34 {
            self.ip14.next = 6.into();
        } else if (self.header[14].val() & 0xf0) != 0x40 {
            self.ip14.next = 5.into();
        } else if (self.hl14.val() < 20) | (self.len17.val() < self.hl14.val() + 14) {
            self.ip14.next = 6.into();
        } else if (bit_cast::<17, 16>(self.ty1.val()) < self.hl14.val())
            | (self.len17.val() < bit_cast::<17, 16>(self.ty1.val()) + 14)
        {
            self.ip14.next = 7.into();
        }
        self.ip18.next = 0.into();
        if self.len17.val() < 38 {
            self.ip18.next = 6.into();
        } else if (self.header[18].val() & 0xf0) != 0x40 {
            self.ip18.next = 5.into();
        } else if (self.hl18.val() < 20) | (self.len17.val() < self.hl18.val() + 18) {
            self.ip18.next = 6.into();
        } else if (bit_cast::<17, 16>(self.ty2.val()) < self.hl18.val())
            | (self.len17.val() < bit_cast::<17, 16>(self.ty2.val()) + 18)
        {
            self.ip18.next = 7.into();
        }
        self.ip22.next = 0.into();
        if self.len17.val() < 42 {
            self.ip22.next = 6.into();
        } else if (self.header[22].val() & 0xf0) != 0x40 {
            self.ip22.next = 5.into();
        } else if (self.hl22.val() < 20) | (self.len17.val() < self.hl22.val() + 22) {
            self.ip22.next = 6.into();
        } else if (((bit_cast::<17, 8>(self.header[24].val()) << 8) | bit_cast::<17, 8>(self.header[25].val()))
            < self.hl22.val())
            | (self.len17.val()
                < ((bit_cast::<17, 8>(self.header[24].val()) << 8) | bit_cast::<17, 8>(self.header[25].val())) + 22)
        {
            self.ip22.next = 7.into();
        }
        self.reason.next = 0.into();
        if self.oversize.val() {
            self.reason.next = 3.into();
        } else if self.len.val() == 0 {
            self.reason.next = 1.into();
        } else if self.len.val() < 14 {
            self.reason.next = 2.into();
        } else if self.ty0.val() == 0x8100 {
            if self.ty1.val() == 0x8100 {
                if self.ty2.val() == 0x0800 {
                    self.reason.next = self.ip22.val();
                }
            } else if self.ty1.val() == 0x0800 {
                self.reason.next = self.ip18.val();
            }
        } else if self.ty0.val() == 0x0800 {
            self.reason.next = self.ip14.val();
        }
    }
}

/// The ports every reference shares, for stepping them as [`emu_hls::backend::top::Clocked`].
pub trait SumePorts<const D: usize, const K: usize>: Block {
    /// Clock, reset and the inputs, to drive.
    #[allow(clippy::type_complexity)]
    fn inputs(
        &mut self,
    ) -> (
        &mut Signal<In, Clock>,
        &mut Signal<In, Bit>,
        &mut Signal<In, Bits<D>>,
        &mut Signal<In, Bits<K>>,
        &mut Signal<In, Bits<128>>,
        &mut Signal<In, Bit>,
        &mut Signal<In, Bit>,
        &mut Signal<In, Bit>,
    );
    /// `s_axis_tready`, `m_axis_{tdata,tkeep,tuser,tvalid,tlast}`, `stat_drop_{valid,reason}`.
    #[allow(clippy::type_complexity)]
    fn outputs(&self) -> (bool, Bits<D>, Bits<K>, Bits<128>, bool, bool, bool, Bits<8>);
}

fn to_bytes<const N: usize>(v: Bits<N>, bytes: usize) -> Vec<u8> {
    (0..bytes).map(|i| v.get_bits::<8>(8 * i).to_u8()).collect()
}

fn from_bytes<const N: usize>(bytes: &[u8]) -> Bits<N> {
    let mut out = Bits::<N>::default();
    for (i, b) in bytes.iter().enumerate() {
        out.set_bits::<8>(8 * i, (*b as u64).into());
    }
    out
}

fn tuser_bits(v: u128) -> Bits<128> {
    from_bytes::<128>(&v.to_le_bytes())
}

fn tuser_value(v: Bits<128>) -> u128 {
    to_bytes(v, 16).iter().rev().fold(0u128, |acc, b| (acc << 8) | *b as u128)
}

fn keep_bits<const K: usize>(keep: u64) -> Bits<K> {
    let mut out = Bits::<K>::default();
    for i in 0..K {
        out = out.replace_bit(i, keep >> i & 1 == 1);
    }
    out
}

fn keep_value<const K: usize>(keep: Bits<K>) -> u64 {
    (0..K).fold(0u64, |m, i| m | ((keep.get_bit(i) as u64) << i))
}

/// Propagates signal changes until nothing changes.
fn settle<B: Block>(block: &mut B) {
    for _ in 0..1000 {
        block.update_all();
        if !block.has_changed() {
            return;
        }
    }
    panic!("the block did not settle in 1000 iterations: a combinational loop?");
}

/// A reference driven through its rust-hdl signals, one `update_all` settle per clock phase, as
/// the generated designs' `SumeTop` is: the HLS tests' `Driver` runs either.
/// `D` and `K` are the bus's, as the reference's: `Stepped::<64, 8, _>(LearningSwitch64::default())`.
pub struct Stepped<const D: usize, const K: usize, T>(pub T);

impl<const D: usize, const K: usize, T: SumePorts<D, K>> emu_hls::backend::top::Clocked for Stepped<D, K, T> {
    fn outputs(&self) -> Outputs {
        let (ready, tdata, tkeep, tuser, tvalid, tlast, drop_valid, drop_reason) = self.0.outputs();
        let beat = Beat { tdata: to_bytes(tdata, K), tkeep: keep_value(tkeep), tuser: tuser_value(tuser), tlast };
        let drop = drop_valid.then(|| DropReason::from_code(drop_reason.to_u8())).flatten();
        Outputs { s_axis_tready: ready, m_axis: tvalid.then_some(beat), drop }
    }

    fn clock(&mut self, inputs: &emu_hls::backend::model::Inputs) {
        let beat = inputs.s_axis.clone().unwrap_or_default();
        let mut tdata = beat.tdata;
        tdata.resize(K, 0);
        {
            let (clk, resetn, s_tdata, s_tkeep, s_tuser, s_tvalid, s_tlast, m_tready) = self.0.inputs();
            resetn.next = true;
            s_tdata.next = from_bytes(&tdata);
            s_tkeep.next = keep_bits(beat.tkeep);
            s_tuser.next = tuser_bits(beat.tuser);
            s_tvalid.next = inputs.s_axis.is_some();
            s_tlast.next = beat.tlast;
            m_tready.next = inputs.m_axis_tready;
            clk.next = false.into();
        }
        settle(&mut self.0);
        self.0.inputs().0.next = true.into();
        settle(&mut self.0);
    }

    fn reset(&mut self) {
        self.0.connect_all();
        {
            let (clk, resetn, _, _, _, s_tvalid, _, m_tready) = self.0.inputs();
            resetn.next = false;
            s_tvalid.next = false;
            m_tready.next = false;
            clk.next = false.into();
        }
        settle(&mut self.0);
        self.0.inputs().0.next = true.into();
        settle(&mut self.0);
    }
}

/// Implements [`SumePorts`] for a reference with the standard port names.
macro_rules! sume_ports {
    ($ty:ident) => {
        impl<const D: usize, const K: usize, const AW: usize> $crate::reference::SumePorts<D, K> for $ty<D, K, AW> {
            fn inputs(
                &mut self,
            ) -> (
                &mut Signal<In, Clock>,
                &mut Signal<In, Bit>,
                &mut Signal<In, Bits<D>>,
                &mut Signal<In, Bits<K>>,
                &mut Signal<In, Bits<128>>,
                &mut Signal<In, Bit>,
                &mut Signal<In, Bit>,
                &mut Signal<In, Bit>,
            ) {
                (
                    &mut self.axis_aclk,
                    &mut self.axis_resetn,
                    &mut self.s_axis_tdata,
                    &mut self.s_axis_tkeep,
                    &mut self.s_axis_tuser,
                    &mut self.s_axis_tvalid,
                    &mut self.s_axis_tlast,
                    &mut self.m_axis_tready,
                )
            }

            fn outputs(&self) -> (bool, Bits<D>, Bits<K>, Bits<128>, bool, bool, bool, Bits<8>) {
                (
                    self.s_axis_tready.val(),
                    self.m_axis_tdata.val(),
                    self.m_axis_tkeep.val(),
                    self.m_axis_tuser.val(),
                    self.m_axis_tvalid.val(),
                    self.m_axis_tlast.val(),
                    self.stat_drop_valid.val(),
                    self.stat_drop_reason.val(),
                )
            }
        }
    };
}
pub(crate) use sume_ports;

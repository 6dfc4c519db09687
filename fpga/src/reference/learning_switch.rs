//! The learning switch (`netfuncs/learning-switch`) written by hand as a rust-hdl block.
//!
//! Per frame, as the CPU switch: the ingress checks ([`FrameCheck`]); learn a unicast source
//! MAC on the input port; a multicast destination floods; a known destination is forwarded, or
//! dropped (`same_port`) when it is on the input port; an unknown one floods.
//!
//! # Microarchitecture
//!
//! - **Ingress**: every beat goes into the packet buffer (block RAM); header bytes 0–25 are
//!   captured into byte registers as their beat passes (zeros past the frame's end), the
//!   length is counted from `tkeep`.
//! - **Decide**, three stages after the last beat, sharing one bank of sixteen 48-bit
//!   comparators on a key register: stage 1 runs the checks and loads the source into the key;
//!   stage 2 learns it (overwrite in place, else the lowest free slot, else the round-robin
//!   victim: `emu_core::Cam`'s policy) and loads the destination; stage 3 looks it up in the
//!   table as stage 2 left it, so the CPU's insert-then-get order holds without a second bank,
//!   and pushes a 31-bit descriptor into a 4-entry FIFO.
//! - **Egress**: the descriptor at the FIFO's head is sent from the buffer (the block RAM's
//!   address runs one word ahead, so the next frame's first beat follows the last beat of the
//!   one before), or shown on `stat_drop_*` for one cycle and its words skipped.
//!
//! The MAC table holds 2-bit ports (SUME has four), not the CPU table's 8-bit `Port`: every port
//! that reaches it is below 4, so the values are the same.
//!
//! Back to back, a frame costs its beats: one per cycle in, one per cycle out. The one stall is
//! a frame of a single beat right after another frame's last beat (at 256 bits, 14–32 bytes):
//! the comparators are busy for the frame before, so the ingress waits a cycle.

use super::{sume_ports, FrameCheck, CHECK_BYTES, MAX_FRAME};
use emu_core::DropReason;
use rust_hdl::prelude::*;

/// Entries of the MAC table (`learning_switch::MAC_TABLE_SIZE`).
pub const MAC_TABLE_SIZE: usize = 16;

/// Descriptors the decide stage can queue ahead of the egress (the FIFO's registers).
const DESC_DEPTH: u64 = 4;

// The descriptor word (rust-hdl's generator prints a Rust constant as a Verilog identifier, so
// the offsets are literals in `update`):
//
// | bits | field |
// |---|---|
// | 10:0 | the frame's length (a frame sent is at most MAX_FRAME bytes) |
// | 18:11 | buffer words the frame holds |
// | 19 | drop instead of send |
// | 24:20 | the drop reason's code |
// | 28:25 | the output ports, port k at bit k |
// | 30:29 | the input port |
const _: () = assert!(DropReason::SamePort as u8 == 11 && DropReason::Malformed as u8 <= 31);

emu_hls::sume_block! {
    /// The switch on a `D`-bit bus (`K = D / 8`) with a packet buffer of `2^AW` bus words.
    pub struct LearningSwitch<const D: usize, const K: usize, const AW: usize> {
        // The packet buffer: a ring of bus words; the egress reads one word ahead.
        buffer: RAM<Bits<D>, AW>,
        wr_ptr: DFF<Bits<16>>,
        rd_ptr: DFF<Bits<16>>,
        rd_next: Signal<Local, Bits<16>>,
        used: Signal<Local, Bits<16>>,

        // Ingress.
        ready: Signal<Local, Bit>,
        take: Signal<Local, Bit>,
        in_beat: DFF<Bits<16>>,
        in_port: DFF<Bits<2>>,
        in_over: DFF<Bit>,
        in_len: DFF<Bits<16>>,
        in_words: DFF<Bits<8>>,
        beat_bytes: Signal<Local, Bits<16>>,
        header: [DFF<Bits<8>>; CHECK_BYTES],

        // Decide, stage 1: checks and learning.
        d1_valid: DFF<Bit>,
        check: FrameCheck,
        // MACs as 24-bit halves (high, low): rust-hdl simulates up to 32 bits as one machine word,
        // wider vectors bit by bit.
        src_hi: Signal<Local, Bits<24>>,
        src_lo: Signal<Local, Bits<24>>,
        dst_hi: Signal<Local, Bits<24>>,
        dst_lo: Signal<Local, Bits<24>>,
        learn: Signal<Local, Bit>,

        // Decide, stage 2 (learning) then stage 3 (the lookup and the descriptor): the frame's
        // fields stay in the d2 registers through both, which never hold two frames at once.
        d2_valid: DFF<Bit>,
        d3_valid: DFF<Bit>,
        d2_dst_hi: DFF<Bits<24>>,
        d2_dst_lo: DFF<Bits<24>>,
        d2_port: DFF<Bits<2>>,
        d2_reason: DFF<Bits<8>>,
        d2_len: DFF<Bits<16>>,
        d2_words: DFF<Bits<8>>,
        verdict_drop: Signal<Local, Bit>,
        verdict_reason: Signal<Local, Bits<32>>,
        verdict_mask: Signal<Local, Bits<32>>,

        // The MAC table: sixteen slots of key, port and valid bit, one bank of comparators.
        mac_hi: [DFF<Bits<24>>; MAC_TABLE_SIZE],
        mac_lo: [DFF<Bits<24>>; MAC_TABLE_SIZE],
        mac_port: [DFF<Bits<2>>; MAC_TABLE_SIZE],
        mac_valid: DFF<Bits<16>>,
        mac_victim: DFF<Bits<4>>,
        // The comparators' key, a register: a multiplexer in front of sixteen 48-bit comparators
        // would double their LUTs (a key bit and its two sources in every compare LUT).
        key_hi: DFF<Bits<24>>,
        key_lo: DFF<Bits<24>>,
        slot_match: [Signal<Local, Bit>; MAC_TABLE_SIZE],
        hit: Signal<Local, Bit>,
        hit_port: Signal<Local, Bits<2>>,
        free_lowest: Signal<Local, Bits<16>>,
        full: Signal<Local, Bit>,

        // The descriptor FIFO.
        desc: [DFF<Bits<32>>; 4],
        desc_wr: DFF<Bits<2>>,
        desc_rd: DFF<Bits<2>>,
        desc_count: DFF<Bits<3>>,
        new_desc: Signal<Local, Bits<32>>,
        head: Signal<Local, Bits<32>>,
        pop: Signal<Local, Bit>,

        // Egress.
        out_beat: DFF<Bits<8>>,
        sending: Signal<Local, Bit>,
        last: Signal<Local, Bit>,
        last_bytes: Signal<Local, Bits<16>>,

        // Parameters.
        bus_bytes: Constant<Bits<16>>,
        bus_shift: Constant<Bits<16>>,
        lane_mask: Constant<Bits<16>>,
        max_words: Constant<Bits<16>>,
        depth: Constant<Bits<16>>,
        keep_ones: Constant<Bits<K>>,
        max_frame: Constant<Bits<16>>,
        desc_depth: Constant<Bits<4>>,
    }
}

/// The 64-bit switch: a 512-word (4 KB) buffer.
pub type LearningSwitch64 = LearningSwitch<64, 8, 9>;
/// The 256-bit switch: a 128-word (4 KB) buffer.
pub type LearningSwitch256 = LearningSwitch<256, 32, 7>;

impl<const D: usize, const K: usize, const AW: usize> Default for LearningSwitch<D, K, AW> {
    fn default() -> Self {
        assert!(D == 8 * K && (K == 8 || K == 32), "the SUME bus is 64 or 256 bits");
        let max_words = MAX_FRAME.div_ceil(K as u64);
        assert!(1 << AW >= 2 * max_words, "the buffer holds two largest frames");
        assert!(max_words < 256, "a frame's words fit the descriptor's 8 bits");
        emu_hls::sume_new!(LearningSwitch {
            buffer: Default::default(),
            wr_ptr: Default::default(),
            rd_ptr: Default::default(),
            rd_next: Default::default(),
            used: Default::default(),
            ready: Default::default(),
            take: Default::default(),
            in_beat: Default::default(),
            in_port: Default::default(),
            in_over: Default::default(),
            in_len: Default::default(),
            in_words: Default::default(),
            beat_bytes: Default::default(),
            header: Default::default(),
            d1_valid: Default::default(),
            check: Default::default(),
            src_hi: Default::default(),
            src_lo: Default::default(),
            dst_hi: Default::default(),
            dst_lo: Default::default(),
            learn: Default::default(),
            d2_valid: Default::default(),
            d3_valid: Default::default(),
            d2_dst_hi: Default::default(),
            d2_dst_lo: Default::default(),
            d2_port: Default::default(),
            d2_reason: Default::default(),
            d2_len: Default::default(),
            d2_words: Default::default(),
            verdict_drop: Default::default(),
            verdict_reason: Default::default(),
            verdict_mask: Default::default(),
            mac_hi: Default::default(),
            mac_lo: Default::default(),
            mac_port: Default::default(),
            mac_valid: Default::default(),
            mac_victim: Default::default(),
            key_hi: Default::default(),
            key_lo: Default::default(),
            slot_match: Default::default(),
            hit: Default::default(),
            hit_port: Default::default(),
            free_lowest: Default::default(),
            full: Default::default(),
            desc: Default::default(),
            desc_wr: Default::default(),
            desc_rd: Default::default(),
            desc_count: Default::default(),
            new_desc: Default::default(),
            head: Default::default(),
            pop: Default::default(),
            out_beat: Default::default(),
            sending: Default::default(),
            last: Default::default(),
            last_bytes: Default::default(),
            bus_bytes: Constant::new((K as u64).into()),
            bus_shift: Constant::new((K.trailing_zeros() as u64).into()),
            lane_mask: Constant::new((K as u64 - 1).into()),
            max_words: Constant::new(max_words.into()),
            depth: Constant::new((1u64 << AW).into()),
            keep_ones: Constant::new(!Bits::<K>::default()),
            max_frame: Constant::new(MAX_FRAME.into()),
            desc_depth: Constant::new(DESC_DEPTH.into()),
        })
    }
}

impl<const D: usize, const K: usize, const AW: usize> Logic for LearningSwitch<D, K, AW> {
    #[hdl_gen]
    fn update(&mut self) {
        // Clocks.
        self.buffer.read_clock.next = self.axis_aclk.val();
        self.buffer.write_clock.next = self.axis_aclk.val();
        dff_setup!(
            self, axis_aclk, wr_ptr, rd_ptr, in_beat, in_port, in_over, in_len, in_words, d1_valid, d2_valid, d3_valid,
            d2_dst_hi, d2_dst_lo, key_hi, key_lo, d2_port, d2_reason, d2_len, d2_words, mac_valid, mac_victim, desc_wr,
            desc_rd, desc_count, out_beat
        );
        for i in 0..CHECK_BYTES {
            self.header[i].clock.next = self.axis_aclk.val();
            self.header[i].d.next = self.header[i].q.val();
        }
        for i in 0..MAC_TABLE_SIZE {
            self.mac_hi[i].clock.next = self.axis_aclk.val();
            self.mac_hi[i].d.next = self.mac_hi[i].q.val();
            self.mac_lo[i].clock.next = self.axis_aclk.val();
            self.mac_lo[i].d.next = self.mac_lo[i].q.val();
            self.mac_port[i].clock.next = self.axis_aclk.val();
            self.mac_port[i].d.next = self.mac_port[i].q.val();
        }
        for i in 0..4 {
            self.desc[i].clock.next = self.axis_aclk.val();
            self.desc[i].d.next = self.desc[i].q.val();
        }

        // Ingress. It stops for a full buffer, for a descriptor FIFO that could not take the
        // frames in flight, and for a frame waiting in stage 1 (its header is still read).
        self.used.next = self.wr_ptr.q.val() - self.rd_ptr.q.val();
        self.ready.next = (self.used.val() < self.depth.val())
            & ((bit_cast::<4, 3>(self.desc_count.q.val())
                + bit_cast::<4, 1>(self.d1_valid.q.val().into())
                + bit_cast::<4, 1>(self.d2_valid.q.val().into())
                + bit_cast::<4, 1>(self.d3_valid.q.val().into()))
                < self.desc_depth.val())
            & !(self.d1_valid.q.val() & self.d2_valid.q.val());
        self.s_axis_tready.next = self.ready.val();
        self.take.next = self.ready.val() & self.s_axis_tvalid.val();
        // Bytes of this beat: beats are packed, so the highest kept lane counts them.
        self.beat_bytes.next = 0.into();
        for j in 0..K {
            if self.s_axis_tkeep.val().get_bit(j) {
                self.beat_bytes.next = (j + 1).to_bits();
            }
        }
        self.buffer.write_address.next = bit_cast::<AW, 16>(self.wr_ptr.q.val());
        self.buffer.write_data.next = self.s_axis_tdata.val();
        self.buffer.write_enable.next = self.take.val() & (self.in_beat.q.val() < self.max_words.val());
        if self.buffer.write_enable.val() {
            self.wr_ptr.d.next = self.wr_ptr.q.val() + 1;
        }
        if self.take.val() {
            if self.in_beat.q.val() == 0 {
                self.in_port.d.next = 0.into();
                if self.s_axis_tuser.val().get_bit(22) | self.s_axis_tuser.val().get_bit(23) {
                    self.in_port.d.next = 3.into();
                }
                if self.s_axis_tuser.val().get_bit(20) | self.s_axis_tuser.val().get_bit(21) {
                    self.in_port.d.next = 2.into();
                }
                if self.s_axis_tuser.val().get_bit(18) | self.s_axis_tuser.val().get_bit(19) {
                    self.in_port.d.next = 1.into();
                }
                if self.s_axis_tuser.val().get_bit(16) | self.s_axis_tuser.val().get_bit(17) {
                    self.in_port.d.next = 0.into();
                }
                self.in_over.d.next = false;
            }
            if self.in_beat.q.val() >= self.max_words.val() {
                self.in_over.d.next = true;
            }
            for i in 0..CHECK_BYTES {
                if self.in_beat.q.val() == (i >> self.bus_shift.val().index()).to_bits() {
                    self.header[i].d.next = 0.into();
                    if self.s_axis_tkeep.val().get_bit(i & self.lane_mask.val().index()) {
                        self.header[i].d.next =
                            self.s_axis_tdata.val().get_bits::<8>((i & self.lane_mask.val().index()) * 8);
                    }
                } else if self.in_beat.q.val() == 0 {
                    self.header[i].d.next = 0.into();
                }
            }
            if self.s_axis_tlast.val() {
                self.in_beat.d.next = 0.into();
                self.in_len.d.next = (self.in_beat.q.val() << self.bus_shift.val()) + self.beat_bytes.val();
                self.in_words.d.next = bit_cast::<8, 16>(self.max_words.val());
                if self.in_beat.q.val() < self.max_words.val() {
                    self.in_words.d.next = bit_cast::<8, 16>(self.in_beat.q.val() + 1);
                }
            } else if self.in_beat.q.val() != 0xffff {
                self.in_beat.d.next = self.in_beat.q.val() + 1;
            }
        }

        // The MAC table's one bank of comparators, on the key register: the source in stage 2,
        // the destination in stage 3.
        self.dst_hi.next = (bit_cast::<24, 8>(self.header[0].q.val()) << 16)
            | (bit_cast::<24, 8>(self.header[1].q.val()) << 8)
            | bit_cast::<24, 8>(self.header[2].q.val());
        self.dst_lo.next = (bit_cast::<24, 8>(self.header[3].q.val()) << 16)
            | (bit_cast::<24, 8>(self.header[4].q.val()) << 8)
            | bit_cast::<24, 8>(self.header[5].q.val());
        self.src_hi.next = (bit_cast::<24, 8>(self.header[6].q.val()) << 16)
            | (bit_cast::<24, 8>(self.header[7].q.val()) << 8)
            | bit_cast::<24, 8>(self.header[8].q.val());
        self.src_lo.next = (bit_cast::<24, 8>(self.header[9].q.val()) << 16)
            | (bit_cast::<24, 8>(self.header[10].q.val()) << 8)
            | bit_cast::<24, 8>(self.header[11].q.val());

        self.hit.next = false;
        self.hit_port.next = 0.into();
        for i in 0..MAC_TABLE_SIZE {
            self.slot_match[i].next = self.mac_valid.q.val().get_bit(i)
                & (self.mac_hi[i].q.val() == self.key_hi.q.val())
                & (self.mac_lo[i].q.val() == self.key_lo.q.val());
            if self.slot_match[i].val() {
                self.hit.next = true;
                self.hit_port.next = self.mac_port[i].q.val();
            }
        }
        self.full.next = self.mac_valid.q.val().all();
        // The lowest free slot, one-hot: x & -x of the free slots.
        self.free_lowest.next = (!self.mac_valid.q.val()) & ((self.mac_valid.q.val()) + 1);

        // Decide, stage 1: the checks; the frame moves on when stage 2 is free (then stage 3
        // is too, next cycle), else it waits and holds the ingress.
        for i in 0..CHECK_BYTES {
            self.check.header[i].next = self.header[i].q.val();
        }
        self.check.len.next = self.in_len.q.val();
        self.check.oversize.next = self.in_over.q.val() | (self.in_len.q.val() > self.max_frame.val());
        // Stage 2: learning.
        self.learn.next = self.d2_valid.q.val() & (self.d2_reason.q.val() == 0) & !self.key_hi.q.val().get_bit(16);
        if self.learn.val() {
            if self.hit.val() {
                for i in 0..MAC_TABLE_SIZE {
                    if self.slot_match[i].val() {
                        self.mac_port[i].d.next = self.d2_port.q.val();
                    }
                }
            } else {
                for i in 0..MAC_TABLE_SIZE {
                    if (self.full.val() & (self.mac_victim.q.val() == i.to_bits()))
                        | (!self.full.val() & self.free_lowest.val().get_bit(i))
                    {
                        self.mac_hi[i].d.next = self.key_hi.q.val();
                        self.mac_lo[i].d.next = self.key_lo.q.val();
                        self.mac_port[i].d.next = self.d2_port.q.val();
                    }
                }
                self.mac_valid.d.next = self.mac_valid.q.val() | self.free_lowest.val();
                if self.full.val() {
                    self.mac_victim.d.next = self.mac_victim.q.val() + 1;
                }
            }
        }
        self.d3_valid.d.next = self.d2_valid.q.val();
        self.d2_valid.d.next = self.d1_valid.q.val() & !self.d2_valid.q.val();
        self.d1_valid.d.next =
            (self.d1_valid.q.val() & self.d2_valid.q.val()) | (self.take.val() & self.s_axis_tlast.val());
        if self.d1_valid.q.val() & !self.d2_valid.q.val() {
            self.d2_dst_hi.d.next = self.dst_hi.val();
            self.d2_dst_lo.d.next = self.dst_lo.val();
            self.d2_port.d.next = self.in_port.q.val();
            self.d2_reason.d.next = self.check.reason.val();
            self.d2_len.d.next = self.in_len.q.val();
            self.d2_words.d.next = self.in_words.q.val();
            self.key_hi.d.next = self.src_hi.val();
            self.key_lo.d.next = self.src_lo.val();
        }
        if self.d2_valid.q.val() {
            self.key_hi.d.next = self.d2_dst_hi.q.val();
            self.key_lo.d.next = self.d2_dst_lo.q.val();
        }

        // Decide, stage 3: the verdict, as a descriptor.
        self.verdict_drop.next = false;
        self.verdict_reason.next = 0.into();
        // Flood: every port but the input port.
        self.verdict_mask.next = bits::<32>(0xf) & !(bits::<32>(1) << self.d2_port.q.val());
        if self.d2_reason.q.val() != 0 {
            self.verdict_drop.next = true;
            self.verdict_reason.next = bit_cast::<32, 8>(self.d2_reason.q.val());
        } else if !self.d2_dst_hi.q.val().get_bit(16) & self.hit.val() {
            if self.hit_port.val() == self.d2_port.q.val() {
                self.verdict_drop.next = true;
                self.verdict_reason.next = 11.into();
            } else {
                self.verdict_mask.next = bits::<32>(1) << self.hit_port.val();
            }
        }
        self.new_desc.next = (bit_cast::<32, 16>(self.d2_len.q.val()) & 0x7ff)
            | (bit_cast::<32, 8>(self.d2_words.q.val()) << 11)
            | (bit_cast::<32, 1>(self.verdict_drop.val().into()) << 19)
            | ((self.verdict_reason.val() & 0x1f) << 20)
            | ((self.verdict_mask.val() & 0xf) << 25)
            | (bit_cast::<32, 2>(self.d2_port.q.val()) << 29);
        if self.d3_valid.q.val() {
            for i in 0..4 {
                if self.desc_wr.q.val() == i.to_bits() {
                    self.desc[i].d.next = self.new_desc.val();
                }
            }
            self.desc_wr.d.next = self.desc_wr.q.val() + 1;
        }

        // Egress: the descriptor at the head.
        self.head.next = self.desc[0].q.val();
        for i in 1..4 {
            if self.desc_rd.q.val() == i.to_bits() {
                self.head.next = self.desc[i].q.val();
            }
        }
        self.sending.next = (self.desc_count.q.val() != 0) & !self.head.val().get_bit(19);
        self.stat_drop_valid.next = (self.desc_count.q.val() != 0) & self.head.val().get_bit(19);
        self.stat_drop_reason.next = bit_cast::<8, 5>(self.head.val().get_bits::<5>(20));
        self.last.next = bit_cast::<8, 8>(self.out_beat.q.val() + 1) == self.head.val().get_bits::<8>(11);
        self.last_bytes.next = bit_cast::<16, 11>(self.head.val().get_bits::<11>(0)) & self.lane_mask.val();
        self.m_axis_tvalid.next = self.sending.val();
        self.m_axis_tdata.next = self.buffer.read_data.val();
        self.m_axis_tlast.next = self.last.val();
        self.m_axis_tkeep.next = self.keep_ones.val();
        if self.last.val() & (self.last_bytes.val() != 0) {
            self.m_axis_tkeep.next = self.keep_ones.val() >> (self.bus_bytes.val() - self.last_bytes.val());
        }
        // tuser: the length, then port k at bit 2k of the source and destination bytes.
        self.m_axis_tuser.next = bit_cast::<128, 32>(
            bit_cast::<32, 11>(self.head.val().get_bits::<11>(0))
                | (bits::<32>(1) << (bit_cast::<8, 2>(self.head.val().get_bits::<2>(29)) << 1) << 16)
                | (bit_cast::<32, 1>(self.head.val().get_bits::<1>(25)) << 24)
                | (bit_cast::<32, 1>(self.head.val().get_bits::<1>(26)) << 26)
                | (bit_cast::<32, 1>(self.head.val().get_bits::<1>(27)) << 28)
                | (bit_cast::<32, 1>(self.head.val().get_bits::<1>(28)) << 30),
        );
        self.pop.next = self.stat_drop_valid.val() | (self.sending.val() & self.m_axis_tready.val() & self.last.val());
        self.rd_next.next = self.rd_ptr.q.val();
        if self.stat_drop_valid.val() {
            self.rd_next.next = self.rd_ptr.q.val() + bit_cast::<16, 8>(self.head.val().get_bits::<8>(11));
        } else if self.sending.val() & self.m_axis_tready.val() {
            self.rd_next.next = self.rd_ptr.q.val() + 1;
            self.out_beat.d.next = self.out_beat.q.val() + 1;
            if self.last.val() {
                self.out_beat.d.next = 0.into();
            }
        }
        self.rd_ptr.d.next = self.rd_next.val();
        self.buffer.read_address.next = bit_cast::<AW, 16>(self.rd_next.val());
        if self.pop.val() {
            self.desc_rd.d.next = self.desc_rd.q.val() + 1;
        }
        self.desc_count.d.next = self.desc_count.q.val() + bit_cast::<3, 1>(self.d3_valid.q.val().into())
            - bit_cast::<3, 1>(self.pop.val().into());

        // Synchronous reset: the control state; the data registers need none.
        if !self.axis_resetn.val() {
            self.wr_ptr.d.next = 0.into();
            self.rd_ptr.d.next = 0.into();
            self.in_beat.d.next = 0.into();
            self.in_over.d.next = false;
            self.d1_valid.d.next = false;
            self.d2_valid.d.next = false;
            self.d3_valid.d.next = false;
            self.mac_valid.d.next = 0.into();
            self.mac_victim.d.next = 0.into();
            self.desc_wr.d.next = 0.into();
            self.desc_rd.d.next = 0.into();
            self.desc_count.d.next = 0.into();
            self.out_beat.d.next = 0.into();
        }
    }
}

sume_ports!(LearningSwitch);

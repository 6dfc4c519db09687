//! The ICMP echo responder (`netfuncs/icmp-echo`) written by hand as a rust-hdl block.
//!
//! Per frame, as the CPU NF (after [`FrameCheck`]'s ingress checks): an ARP request for `ip`
//! is answered from `mac`; an unfragmented ICMP echo request to `ip` whose IPv4 header and
//! ICMP checksums verify (the ICMP one over the whole payload, `total_len` bytes, not a window)
//! is turned into an echo reply (MACs and addresses swapped, TTL 64, type 0, both checksums
//! updated by RFC 1624); both leave by the port they came in by. Everything else is dropped
//! with the NF's reason: `not_for_us`, `ipv4_checksum`, `unsupported`, `icmp_checksum`.
//!
//! `ip` and `mac` are build-time parameters, as in the generated design: there they are
//! configuration registers whose reset value is the configured one and which the NF never
//! writes, i.e. constants.
//!
//! # Microarchitecture
//!
//! Store and forward, one bus word per cycle in and out, as the learning switch
//! ([`super::learning_switch`]), and nothing per frame but a descriptor:
//!
//! - **Ingress** edits the frame *on its way into the buffer*: every reply byte at a fixed
//!   offset (below byte 42) and the ICMP type and checksum words (at `l4 = 14 + 4·IHL`) are
//!   computed from the bytes of the same beat and the header bytes captured from earlier ones,
//!   so the egress sends the buffer as it is. A dropped frame's edits are never sent. Alongside,
//!   two one's-complement sums run per beat: the IPv4 header words `[14, l4)` and the ICMP
//!   message `[l4, 14 + total_len)`, each masked per lane, summed, registered, then
//!   accumulated, so a 1500-byte echo is verified as it streams past.
//! - **Decide**, two stages after the last beat: stage 1 runs the checks and the NF's tests on
//!   the captured header bytes; stage 2 folds the two sums (complete by then) and pushes a
//!   32-bit descriptor into a 4-entry FIFO.
//! - **Egress** as the switch's: the descriptor at the head is sent from the buffer, the block
//!   RAM's address one word ahead, or shown on `stat_drop_*` for one cycle and skipped.
//!
//! The new Ethernet destination (the old source, or for ARP the sender's MAC at bytes 22–27)
//! is the one edit that needs bytes from a later beat at 64 bits. There the ingress leaves the
//! first word as it came, and each descriptor carries the 48-bit destination (`FW` FIFO
//! entries, 4 at 64 bits, none at 256); the egress puts it, with the new source's first two
//! bytes, over the first word.
//!
//! The checksum updates need neither the TTL's nor the code's old value twice over: RFC 1624's
//! `~(~HC + ~m + m')` for the ICMP word `8·256 + code → code` is `~fold(~HC + 0xf7ff)`,
//! whatever the code (the same integer before folding, so bit for bit the CPU's result).

use super::{FrameCheck, CHECK_BYTES, MAX_FRAME};
use emu_core::{DropReason, Ipv4Addr, Mac};
use rust_hdl::prelude::*;

/// Header bytes captured as they pass: everything the NF reads or moves at a fixed offset
/// (the ARP request ends at byte 42).
pub const HEADER_BYTES: usize = 42;

/// Descriptors the decide stage can queue ahead of the egress.
const DESC_DEPTH: u64 = 4;

// The descriptor word (offsets as literals in `update`, as in the switch):
//
// | bits | field |
// |---|---|
// | 10:0 | the frame's length |
// | 18:11 | buffer words the frame holds |
// | 19 | drop instead of send |
// | 24:20 | the drop reason's code |
// | 25 | an ARP reply (the egress's first-word edit differs) |
// | 30:29 | the input port, which is also the output port |
const _: () = assert!(
    DropReason::Ipv4Checksum as u8 == 8
        && DropReason::IcmpChecksum as u8 == 9
        && DropReason::NotForUs as u8 == 12
        && DropReason::Unsupported as u8 == 13
        && DropReason::Malformed as u8 <= 31
        && CHECK_BYTES <= HEADER_BYTES
);

emu_hls::sume_block! {
    /// The responder on a `D`-bit bus (`K = D / 8`) with a packet buffer of `2^AW` bus words;
    /// `FW` descriptors carry a first-word edit (4 when the bus is narrower than 28 bytes, else 0).
    pub struct IcmpEcho<const D: usize, const K: usize, const AW: usize, const FW: usize> {
        // The configuration, big-endian bytes.
        ip: [Constant<Bits<8>>; 4],
        mac: [Constant<Bits<8>>; 6],

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
        /// The beat's bytes, 0 where `tkeep` is low (the CPU reads 0 past the frame's end).
        lane: [Signal<Local, Bits<8>>; K],
        /// Header bytes as of the end of this beat: this beat's where it carries them, the
        /// captured ones before, 0 after.
        now: [Signal<Local, Bits<8>>; HEADER_BYTES],
        header: [DFF<Bits<8>>; HEADER_BYTES],

        // Where this beat sits against the frame's boundaries: `x - base` for a byte offset `x`,
        // so lane `j` is before `x` when that is above `j` (two's complement, bit 15 the sign).
        base: Signal<Local, Bits<16>>,
        l4: Signal<Local, Bits<16>>,
        ip_end: Signal<Local, Bits<16>>,
        r14: Signal<Local, Bits<16>>,
        r34: Signal<Local, Bits<16>>,
        rl4: Signal<Local, Bits<16>>,
        rend: Signal<Local, Bits<16>>,
        // Per boundary: every lane is before it (`all`), some may be (`some`: not past), and the
        // offset within the beat (`lo`).
        r14_all: Signal<Local, Bit>,
        r14_some: Signal<Local, Bit>,
        r14_lo: Signal<Local, Bits<16>>,
        r34_all: Signal<Local, Bit>,
        r34_some: Signal<Local, Bit>,
        r34_lo: Signal<Local, Bits<16>>,
        rl4_all: Signal<Local, Bit>,
        rl4_some: Signal<Local, Bit>,
        rl4_lo: Signal<Local, Bits<16>>,
        rend_all: Signal<Local, Bit>,
        rend_some: Signal<Local, Bit>,
        rend_lo: Signal<Local, Bits<16>>,

        // The edits on the way into the buffer.
        is_arp: Signal<Local, Bit>,
        ip_ck_sum: Signal<Local, Bits<18>>,
        ip_ck_fold: Signal<Local, Bits<17>>,
        ip_ck: Signal<Local, Bits<16>>,
        icmp_old: Signal<Local, Bits<16>>,
        icmp_ck_sum: Signal<Local, Bits<17>>,
        icmp_ck: Signal<Local, Bits<16>>,
        /// The reply's bytes at the fixed offsets.
        reply: [Signal<Local, Bits<8>>; HEADER_BYTES],
        out_lane: [Signal<Local, Bits<8>>; K],
        write_data: Signal<Local, Bits<D>>,
        /// The ICMP type, from wherever `l4` put it (0 past the frame's end).
        icmp_type: DFF<Bits<8>>,

        // The two one's-complement sums: per beat, registered, then accumulated.
        h_beat: Signal<Local, Bits<24>>,
        i_beat: Signal<Local, Bits<24>>,
        s_valid: DFF<Bit>,
        s_first: DFF<Bit>,
        s_h: DFF<Bits<24>>,
        s_i: DFF<Bits<24>>,
        acc_h: DFF<Bits<24>>,
        acc_i: DFF<Bits<32>>,

        // Decide, stage 1: the checks and the NF's tests on the header.
        d1_valid: DFF<Bit>,
        check: FrameCheck,
        // Stage 2: the sums are complete; the verdict.
        d2_valid: DFF<Bit>,
        d2_reason: DFF<Bits<8>>,
        d2_arp: DFF<Bit>,
        d2_ip: DFF<Bit>,
        d2_arp_ok: DFF<Bit>,
        d2_dst_ok: DFF<Bit>,
        d2_unsupported: DFF<Bit>,
        d2_len: DFF<Bits<16>>,
        d2_words: DFF<Bits<8>>,
        d2_port: DFF<Bits<2>>,
        d2_first: DFF<Bits<48>>,
        new_dst: Signal<Local, Bits<48>>,
        h_fold1: Signal<Local, Bits<17>>,
        h_fold: Signal<Local, Bits<16>>,
        i_fold1: Signal<Local, Bits<17>>,
        i_fold: Signal<Local, Bits<16>>,
        verdict_reason: Signal<Local, Bits<32>>,

        // The descriptor FIFO, and the first-word edits beside it.
        desc: [DFF<Bits<32>>; 4],
        first: [DFF<Bits<48>>; FW],
        desc_wr: DFF<Bits<2>>,
        desc_rd: DFF<Bits<2>>,
        desc_count: DFF<Bits<3>>,
        new_desc: Signal<Local, Bits<32>>,
        head: Signal<Local, Bits<32>>,
        head_first: Signal<Local, Bits<48>>,
        pop: Signal<Local, Bit>,

        // Egress.
        out_beat: DFF<Bits<8>>,
        sending: Signal<Local, Bit>,
        last: Signal<Local, Bit>,
        last_bytes: Signal<Local, Bits<16>>,
        out_first: Signal<Local, Bits<D>>,

        // Parameters.
        bus_bytes: Constant<Bits<16>>,
        bus_shift: Constant<Bits<16>>,
        lane_mask: Constant<Bits<16>>,
        max_words: Constant<Bits<16>>,
        depth: Constant<Bits<16>>,
        keep_ones: Constant<Bits<K>>,
        max_frame: Constant<Bits<16>>,
        desc_depth: Constant<Bits<4>>,
        /// The first word is edited by the egress (`FW > 0`), not on the way in.
        late_first: Constant<Bit>,
        /// Bytes the ingress leaves unedited: 8 when `late_first`, else 0.
        first_bytes: Constant<Bits<16>>,
        /// Ones over the first word's 64 bits.
        first_mask: Constant<Bits<D>>,
    }
}

/// The 64-bit responder: a 512-word (4 KB) buffer; the first word edited at the egress.
pub type IcmpEcho64 = IcmpEcho<64, 8, 9, 4>;
/// The 256-bit responder: a 128-word (4 KB) buffer; every edit on the way in.
pub type IcmpEcho256 = IcmpEcho<256, 32, 7, 0>;

impl<const D: usize, const K: usize, const AW: usize, const FW: usize> Default for IcmpEcho<D, K, AW, FW> {
    /// The CPU NF's defaults: 10.0.0.1, 02:00:00:00:00:01.
    fn default() -> Self {
        Self::new(Ipv4Addr::new(10, 0, 0, 1), Mac::from_bytes([2, 0, 0, 0, 0, 1]))
    }
}

impl<const D: usize, const K: usize, const AW: usize, const FW: usize> IcmpEcho<D, K, AW, FW> {
    /// A responder for `ip` that answers ARP with `mac` (`--ip`, `--mac`).
    pub fn new(ip: Ipv4Addr, mac: Mac) -> Self {
        assert!(D == 8 * K && (K == 8 || K == 32), "the SUME bus is 64 or 256 bits");
        // Bytes 22–27 (ARP's sender) must share the first beat for the ingress to edit it.
        assert_eq!(FW > 0, K < 28, "FW: first-word edits at the egress exactly when the first beat is short");
        assert!(FW == 0 || FW as u64 == DESC_DEPTH, "one first word per descriptor");
        let max_words = MAX_FRAME.div_ceil(K as u64);
        assert!(1 << AW >= 2 * max_words, "the buffer holds two largest frames");
        assert!(max_words < 256, "a frame's words fit the descriptor's 8 bits");
        let ip = ip.0.to_be_bytes();
        let mac = mac.bytes();
        let ones = !Bits::<D>::default();
        emu_hls::sume_new!(IcmpEcho {
            ip: ip.map(|b| Constant::new((b as u64).into())),
            mac: mac.map(|b| Constant::new((b as u64).into())),
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
            lane: std::array::from_fn(|_| Default::default()),
            now: std::array::from_fn(|_| Default::default()),
            header: std::array::from_fn(|_| Default::default()),
            base: Default::default(),
            l4: Default::default(),
            ip_end: Default::default(),
            r14: Default::default(),
            r34: Default::default(),
            rl4: Default::default(),
            rend: Default::default(),
            r14_all: Default::default(),
            r14_some: Default::default(),
            r14_lo: Default::default(),
            r34_all: Default::default(),
            r34_some: Default::default(),
            r34_lo: Default::default(),
            rl4_all: Default::default(),
            rl4_some: Default::default(),
            rl4_lo: Default::default(),
            rend_all: Default::default(),
            rend_some: Default::default(),
            rend_lo: Default::default(),
            is_arp: Default::default(),
            ip_ck_sum: Default::default(),
            ip_ck_fold: Default::default(),
            ip_ck: Default::default(),
            icmp_old: Default::default(),
            icmp_ck_sum: Default::default(),
            icmp_ck: Default::default(),
            reply: std::array::from_fn(|_| Default::default()),
            out_lane: std::array::from_fn(|_| Default::default()),
            write_data: Default::default(),
            icmp_type: Default::default(),
            h_beat: Default::default(),
            i_beat: Default::default(),
            s_valid: Default::default(),
            s_first: Default::default(),
            s_h: Default::default(),
            s_i: Default::default(),
            acc_h: Default::default(),
            acc_i: Default::default(),
            d1_valid: Default::default(),
            check: Default::default(),
            d2_valid: Default::default(),
            d2_reason: Default::default(),
            d2_arp: Default::default(),
            d2_ip: Default::default(),
            d2_arp_ok: Default::default(),
            d2_dst_ok: Default::default(),
            d2_unsupported: Default::default(),
            d2_len: Default::default(),
            d2_words: Default::default(),
            d2_port: Default::default(),
            d2_first: Default::default(),
            new_dst: Default::default(),
            h_fold1: Default::default(),
            h_fold: Default::default(),
            i_fold1: Default::default(),
            i_fold: Default::default(),
            verdict_reason: Default::default(),
            desc: Default::default(),
            first: std::array::from_fn(|_| Default::default()),
            desc_wr: Default::default(),
            desc_rd: Default::default(),
            desc_count: Default::default(),
            new_desc: Default::default(),
            head: Default::default(),
            head_first: Default::default(),
            pop: Default::default(),
            out_beat: Default::default(),
            sending: Default::default(),
            last: Default::default(),
            last_bytes: Default::default(),
            out_first: Default::default(),
            bus_bytes: Constant::new((K as u64).into()),
            bus_shift: Constant::new((K.trailing_zeros() as u64).into()),
            lane_mask: Constant::new((K as u64 - 1).into()),
            max_words: Constant::new(max_words.into()),
            depth: Constant::new((1u64 << AW).into()),
            keep_ones: Constant::new(!Bits::<K>::default()),
            max_frame: Constant::new(MAX_FRAME.into()),
            desc_depth: Constant::new(DESC_DEPTH.into()),
            late_first: Constant::new(FW > 0),
            first_bytes: Constant::new((if FW > 0 { 8u64 } else { 0 }).into()),
            first_mask: Constant::new(ones >> (D as u64 - 64)),
        })
    }
}

impl<const D: usize, const K: usize, const AW: usize, const FW: usize> Logic for IcmpEcho<D, K, AW, FW> {
    #[hdl_gen]
    fn update(&mut self) {
        // Clocks.
        self.buffer.read_clock.next = self.axis_aclk.val();
        self.buffer.write_clock.next = self.axis_aclk.val();
        dff_setup!(
            self,
            axis_aclk,
            wr_ptr,
            rd_ptr,
            in_beat,
            in_port,
            in_over,
            in_len,
            in_words,
            icmp_type,
            s_valid,
            s_first,
            s_h,
            s_i,
            acc_h,
            acc_i,
            d1_valid,
            d2_valid,
            d2_reason,
            d2_arp,
            d2_ip,
            d2_arp_ok,
            d2_dst_ok,
            d2_unsupported,
            d2_len,
            d2_words,
            d2_port,
            d2_first,
            desc_wr,
            desc_rd,
            desc_count,
            out_beat
        );
        for i in 0..HEADER_BYTES {
            self.header[i].clock.next = self.axis_aclk.val();
            self.header[i].d.next = self.header[i].q.val();
        }
        for i in 0..4 {
            self.desc[i].clock.next = self.axis_aclk.val();
            self.desc[i].d.next = self.desc[i].q.val();
        }
        for i in 0..FW {
            self.first[i].clock.next = self.axis_aclk.val();
            self.first[i].d.next = self.first[i].q.val();
        }

        // Ingress. It stops for a full buffer and for a descriptor FIFO that could not take
        // the frames in flight.
        self.used.next = self.wr_ptr.q.val() - self.rd_ptr.q.val();
        self.ready.next = (self.used.val() < self.depth.val())
            & ((bit_cast::<4, 3>(self.desc_count.q.val())
                + bit_cast::<4, 1>(self.d1_valid.q.val().into())
                + bit_cast::<4, 1>(self.d2_valid.q.val().into()))
                < self.desc_depth.val());
        self.s_axis_tready.next = self.ready.val();
        self.take.next = self.ready.val() & self.s_axis_tvalid.val();
        // Bytes of this beat: beats are packed, so the highest kept lane counts them.
        self.beat_bytes.next = 0.into();
        for j in 0..K {
            self.lane[j].next = 0.into();
            if self.s_axis_tkeep.val().get_bit(j) {
                self.beat_bytes.next = (j + 1).to_bits();
                self.lane[j].next = self.s_axis_tdata.val().get_bits::<8>(j * 8);
            }
        }
        for i in 0..HEADER_BYTES {
            self.now[i].next = self.header[i].q.val();
            if self.in_beat.q.val() == (i >> self.bus_shift.val().index()).to_bits() {
                self.now[i].next = 0.into();
                if self.s_axis_tkeep.val().get_bit(i & self.lane_mask.val().index()) {
                    self.now[i].next = self.s_axis_tdata.val().get_bits::<8>((i & self.lane_mask.val().index()) * 8);
                }
            } else if self.in_beat.q.val() == 0 {
                self.now[i].next = 0.into();
            }
            if self.take.val() {
                self.header[i].d.next = self.now[i].val();
            }
        }

        // The boundaries. `l4` and the IPv4 end come from captured bytes (14, 16, 17), valid
        // from the beat after theirs; every offset they matter at is 34 or more, which is a
        // later beat, so the lanes before 34 never look at them.
        self.base.next = self.in_beat.q.val() << self.bus_shift.val();
        self.l4.next = bit_cast::<16, 8>((self.header[14].q.val() & 0x0f) << 2) + 14;
        self.ip_end.next =
            ((bit_cast::<16, 8>(self.header[16].q.val()) << 8) | bit_cast::<16, 8>(self.header[17].q.val())) + 14;
        self.r14.next = bits::<16>(14) - self.base.val();
        self.r34.next = bits::<16>(34) - self.base.val();
        self.rl4.next = self.l4.val() - self.base.val();
        self.rend.next = self.ip_end.val() - self.base.val();
        self.r14_some.next = !self.r14.val().get_bit(15);
        self.r14_all.next = self.r14_some.val() & ((self.r14.val() >> self.bus_shift.val()) != 0);
        self.r14_lo.next = self.r14.val() & self.lane_mask.val();
        self.r34_some.next = !self.r34.val().get_bit(15);
        self.r34_all.next = self.r34_some.val() & ((self.r34.val() >> self.bus_shift.val()) != 0);
        self.r34_lo.next = self.r34.val() & self.lane_mask.val();
        self.rl4_some.next = !self.rl4.val().get_bit(15);
        self.rl4_all.next = self.rl4_some.val() & ((self.rl4.val() >> self.bus_shift.val()) != 0);
        self.rl4_lo.next = self.rl4.val() & self.lane_mask.val();
        self.rend_some.next = !self.rend.val().get_bit(15);
        self.rend_all.next = self.rend_some.val() & ((self.rend.val() >> self.bus_shift.val()) != 0);
        self.rend_lo.next = self.rend.val() & self.lane_mask.val();

        // The sums of this beat: IPv4 header words at [14, l4), ICMP bytes at [l4, end) (an
        // odd end pads the last word with a zero byte, as `checksum::sum`).
        self.h_beat.next = 0.into();
        self.i_beat.next = 0.into();
        for w in 0..(K / 2) {
            if !(self.r14_all.val() | (self.r14_some.val() & (self.r14_lo.val() > (2 * w).to_bits())))
                & ((self.r34_all.val() | (self.r34_some.val() & (self.r34_lo.val() > (2 * w).to_bits())))
                    | (self.rl4_all.val() | (self.rl4_some.val() & (self.rl4_lo.val() > (2 * w).to_bits()))))
            {
                self.h_beat.next = self.h_beat.val()
                    + ((self.lane[2 * w].val().index().to_bits::<24>() << 8)
                        | self.lane[2 * w + 1].val().index().to_bits::<24>());
            }
            if !(self.r34_all.val() | (self.r34_some.val() & (self.r34_lo.val() > (2 * w).to_bits())))
                & !(self.rl4_all.val() | (self.rl4_some.val() & (self.rl4_lo.val() > (2 * w).to_bits())))
                & (self.rend_all.val() | (self.rend_some.val() & (self.rend_lo.val() > (2 * w).to_bits())))
            {
                self.i_beat.next = self.i_beat.val() + (self.lane[2 * w].val().index().to_bits::<24>() << 8);
                if self.rend_all.val() | (self.rend_lo.val() > (2 * w + 1).to_bits()) {
                    self.i_beat.next = self.i_beat.val() + self.lane[2 * w + 1].val().index().to_bits::<24>();
                }
            }
        }
        self.s_valid.d.next = self.take.val();
        self.s_first.d.next = self.in_beat.q.val() == 0;
        self.s_h.d.next = self.h_beat.val();
        self.s_i.d.next = self.i_beat.val();
        if self.s_valid.q.val() {
            if self.s_first.q.val() {
                self.acc_h.d.next = self.s_h.q.val();
                self.acc_i.d.next = bit_cast::<32, 24>(self.s_i.q.val());
            } else {
                self.acc_h.d.next = self.acc_h.q.val() + self.s_h.q.val();
                self.acc_i.d.next = self.acc_i.q.val() + bit_cast::<32, 24>(self.s_i.q.val());
            }
        }

        // The reply's bytes at fixed offsets, from the request's as of this beat. A frame
        // that is neither ARP nor IPv4 is dropped, so the IPv4 edits serve both.
        self.is_arp.next = (self.now[12].val() == 0x08) & (self.now[13].val() == 0x06);
        // RFC 1624 for the TTL word (TTL, protocol 1) → (64, 1).
        self.ip_ck_sum.next =
            bit_cast::<18, 16>(!((bit_cast::<16, 8>(self.now[24].val()) << 8) | bit_cast::<16, 8>(self.now[25].val())))
                + bit_cast::<18, 16>(!((bit_cast::<16, 8>(self.now[22].val()) << 8) | 1))
                + 0x4001;
        self.ip_ck_fold.next = bit_cast::<17, 16>(self.ip_ck_sum.val().get_bits::<16>(0))
            + bit_cast::<17, 2>(self.ip_ck_sum.val().get_bits::<2>(16));
        self.ip_ck.next =
            !(self.ip_ck_fold.val().get_bits::<16>(0) + bit_cast::<16, 1>(self.ip_ck_fold.val().get_bits::<1>(16)));
        for i in 0..HEADER_BYTES {
            self.reply[i].next = self.now[i].val();
        }
        if self.is_arp.val() {
            for i in 0..6 {
                self.reply[i].next = self.now[i + 22].val();
                self.reply[i + 6].next = self.mac[i].val();
                self.reply[i + 22].next = self.mac[i].val();
                self.reply[i + 32].next = self.now[i + 22].val();
            }
            self.reply[20].next = 0.into();
            self.reply[21].next = 2.into();
            for i in 0..4 {
                self.reply[i + 28].next = self.ip[i].val();
                self.reply[i + 38].next = self.now[i + 28].val();
            }
        } else {
            for i in 0..6 {
                self.reply[i].next = self.now[i + 6].val();
                self.reply[i + 6].next = self.now[i].val();
            }
            self.reply[22].next = 64.into();
            self.reply[24].next = self.ip_ck.val().get_bits::<8>(8);
            self.reply[25].next = self.ip_ck.val().get_bits::<8>(0);
            for i in 0..4 {
                self.reply[i + 26].next = self.ip[i].val();
                self.reply[i + 30].next = self.now[i + 26].val();
            }
        }
        // The ICMP type sits at l4 ≡ 2 (mod 4), its checksum at l4 + 2 ≡ 0: one candidate
        // lane per 4, each only at offsets 34 and up.
        self.icmp_old.next = 0.into();
        for m in 0..(K / 4) {
            if !(self.r34_all.val() | (self.r34_some.val() & (self.r34_lo.val() > (4 * m).to_bits())))
                & (self.rl4.val() + 2 == (4 * m).to_bits())
            {
                self.icmp_old.next = (self.lane[4 * m].val().index().to_bits::<16>() << 8)
                    | self.lane[4 * m + 1].val().index().to_bits::<16>();
            }
        }
        self.icmp_ck_sum.next = bit_cast::<17, 16>(!self.icmp_old.val()) + 0xf7ff;
        self.icmp_ck.next =
            !(self.icmp_ck_sum.val().get_bits::<16>(0) + bit_cast::<16, 1>(self.icmp_ck_sum.val().get_bits::<1>(16)));
        for j in 0..K {
            self.out_lane[j].next = self.lane[j].val();
            for p in 0..HEADER_BYTES {
                if (p & self.lane_mask.val().index()) == j {
                    if (self.in_beat.q.val() == (p >> self.bus_shift.val().index()).to_bits())
                        & (p >= self.first_bytes.val().index())
                    {
                        self.out_lane[j].next = self.reply[p].val();
                    }
                }
            }
        }
        if self.take.val() & (self.in_beat.q.val() == 0) {
            self.icmp_type.d.next = 0.into();
        }
        for m in 0..(K / 4) {
            if !self.is_arp.val()
                & !(self.r34_all.val() | (self.r34_some.val() & (self.r34_lo.val() > (4 * m + 2).to_bits())))
                & (self.rl4.val() == (4 * m + 2).to_bits())
            {
                self.out_lane[4 * m + 2].next = 0.into();
                if self.take.val() {
                    self.icmp_type.d.next = self.lane[4 * m + 2].val();
                }
            }
            if !self.is_arp.val()
                & !(self.r34_all.val() | (self.r34_some.val() & (self.r34_lo.val() > (4 * m).to_bits())))
                & (self.rl4.val() + 2 == (4 * m).to_bits())
            {
                self.out_lane[4 * m].next = self.icmp_ck.val().get_bits::<8>(8);
                self.out_lane[4 * m + 1].next = self.icmp_ck.val().get_bits::<8>(0);
            }
        }
        self.write_data.next = bit_cast::<D, 8>(self.out_lane[0].val());
        for j in 1..K {
            self.write_data.next =
                self.write_data.val() | (self.out_lane[j].val().index().to_bits::<D>() << (8 * j).to_bits::<16>());
        }

        self.buffer.write_address.next = bit_cast::<AW, 16>(self.wr_ptr.q.val());
        self.buffer.write_data.next = self.write_data.val();
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

        // The new Ethernet destination, for the egress at 64 bits: the requester's MAC.
        self.new_dst.next = 0.into();
        for i in 0..6 {
            if (self.header[12].q.val() == 0x08) & (self.header[13].q.val() == 0x06) {
                self.new_dst.next = self.new_dst.val()
                    | (self.header[i + 22].q.val().index().to_bits::<48>() << (8 * i).to_bits::<8>());
            } else {
                self.new_dst.next =
                    self.new_dst.val() | (self.header[i + 6].q.val().index().to_bits::<48>() << (8 * i).to_bits::<8>());
            }
        }

        // Decide, stage 1 (the cycle after the last beat, while the header registers still
        // hold the frame): the checks and the NF's tests.
        for i in 0..CHECK_BYTES {
            self.check.header[i].next = self.header[i].q.val();
        }
        self.check.len.next = self.in_len.q.val();
        self.check.oversize.next = self.in_over.q.val() | (self.in_len.q.val() > self.max_frame.val());
        self.d1_valid.d.next = self.take.val() & self.s_axis_tlast.val();
        self.d2_valid.d.next = self.d1_valid.q.val();
        if self.d1_valid.q.val() {
            self.d2_reason.d.next = self.check.reason.val();
            self.d2_arp.d.next = (self.header[12].q.val() == 0x08) & (self.header[13].q.val() == 0x06);
            self.d2_ip.d.next = (self.header[12].q.val() == 0x08) & (self.header[13].q.val() == 0x00);
            // An Ethernet/IPv4 ARP request for `ip`.
            self.d2_arp_ok.d.next = (self.header[14].q.val() == 0)
                & (self.header[15].q.val() == 1)
                & (self.header[16].q.val() == 0x08)
                & (self.header[17].q.val() == 0)
                & (self.header[18].q.val() == 6)
                & (self.header[19].q.val() == 4)
                & (self.header[20].q.val() == 0)
                & (self.header[21].q.val() == 1)
                & (self.header[38].q.val() == self.ip[0].val())
                & (self.header[39].q.val() == self.ip[1].val())
                & (self.header[40].q.val() == self.ip[2].val())
                & (self.header[41].q.val() == self.ip[3].val());
            self.d2_dst_ok.d.next = (self.header[30].q.val() == self.ip[0].val())
                & (self.header[31].q.val() == self.ip[1].val())
                & (self.header[32].q.val() == self.ip[2].val())
                & (self.header[33].q.val() == self.ip[3].val());
            // Not ICMP, a fragment (MF, offset), or not an echo request.
            self.d2_unsupported.d.next = (self.header[23].q.val() != 1)
                | ((self.header[20].q.val() & 0x3f) != 0)
                | (self.header[21].q.val() != 0)
                | (self.icmp_type.q.val() != 8);
            self.d2_len.d.next = self.in_len.q.val();
            self.d2_words.d.next = self.in_words.q.val();
            self.d2_port.d.next = self.in_port.q.val();
            self.d2_first.d.next = self.new_dst.val();
        }
        // Stage 2: the sums are complete (their last beat's share was added a cycle after it
        // was taken); fold them and give the verdict in the NF's order.
        self.h_fold1.next = bit_cast::<17, 16>(self.acc_h.q.val().get_bits::<16>(0))
            + bit_cast::<17, 8>(self.acc_h.q.val().get_bits::<8>(16));
        self.h_fold.next =
            self.h_fold1.val().get_bits::<16>(0) + bit_cast::<16, 1>(self.h_fold1.val().get_bits::<1>(16));
        self.i_fold1.next = bit_cast::<17, 16>(self.acc_i.q.val().get_bits::<16>(0))
            + bit_cast::<17, 16>(self.acc_i.q.val().get_bits::<16>(16));
        self.i_fold.next =
            self.i_fold1.val().get_bits::<16>(0) + bit_cast::<16, 1>(self.i_fold1.val().get_bits::<1>(16));
        self.verdict_reason.next = 0.into();
        if self.d2_reason.q.val() != 0 {
            self.verdict_reason.next = bit_cast::<32, 8>(self.d2_reason.q.val());
        } else if self.d2_arp.q.val() {
            if !self.d2_arp_ok.q.val() {
                self.verdict_reason.next = 12.into();
            }
        } else if self.d2_ip.q.val() {
            if !self.d2_dst_ok.q.val() {
                self.verdict_reason.next = 12.into();
            } else if self.h_fold.val() != 0xffff {
                self.verdict_reason.next = 8.into();
            } else if self.d2_unsupported.q.val() {
                self.verdict_reason.next = 13.into();
            } else if self.i_fold.val() != 0xffff {
                self.verdict_reason.next = 9.into();
            }
        } else {
            self.verdict_reason.next = 12.into();
        }
        self.new_desc.next = (bit_cast::<32, 16>(self.d2_len.q.val()) & 0x7ff)
            | (bit_cast::<32, 8>(self.d2_words.q.val()) << 11)
            | (bit_cast::<32, 1>((self.verdict_reason.val() != 0).into()) << 19)
            | ((self.verdict_reason.val() & 0x1f) << 20)
            | (bit_cast::<32, 1>(self.d2_arp.q.val().into()) << 25)
            | (bit_cast::<32, 2>(self.d2_port.q.val()) << 29);
        if self.d2_valid.q.val() {
            for i in 0..4 {
                if self.desc_wr.q.val() == i.to_bits() {
                    self.desc[i].d.next = self.new_desc.val();
                }
            }
            for i in 0..FW {
                if self.desc_wr.q.val() == i.to_bits() {
                    self.first[i].d.next = self.d2_first.q.val();
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
        self.head_first.next = 0.into();
        for i in 0..FW {
            if self.desc_rd.q.val() == i.to_bits() {
                self.head_first.next = self.first[i].q.val();
            }
        }
        self.sending.next = (self.desc_count.q.val() != 0) & !self.head.val().get_bit(19);
        self.stat_drop_valid.next = (self.desc_count.q.val() != 0) & self.head.val().get_bit(19);
        self.stat_drop_reason.next = bit_cast::<8, 5>(self.head.val().get_bits::<5>(20));
        self.last.next = bit_cast::<8, 8>(self.out_beat.q.val() + 1) == self.head.val().get_bits::<8>(11);
        self.last_bytes.next = bit_cast::<16, 11>(self.head.val().get_bits::<11>(0)) & self.lane_mask.val();
        self.m_axis_tvalid.next = self.sending.val();
        // The first word at 64 bits: the new destination, then the new source's first two
        // bytes (ARP: ours; ICMP: the old destination's, still in the word).
        self.out_first.next = bit_cast::<D, 48>(self.head_first.val());
        if self.head.val().get_bit(25) {
            self.out_first.next = self.out_first.val()
                | (bit_cast::<D, 8>(self.mac[0].val()) << 48)
                | (bit_cast::<D, 8>(self.mac[1].val()) << 56);
        } else {
            self.out_first.next = self.out_first.val() | ((self.buffer.read_data.val() & 0xffff) << 48);
        }
        self.m_axis_tdata.next = self.buffer.read_data.val();
        if self.late_first.val() & (self.out_beat.q.val() == 0) {
            self.m_axis_tdata.next = (self.buffer.read_data.val() & !self.first_mask.val()) | self.out_first.val();
        }
        self.m_axis_tlast.next = self.last.val();
        self.m_axis_tkeep.next = self.keep_ones.val();
        if self.last.val() & (self.last_bytes.val() != 0) {
            self.m_axis_tkeep.next = self.keep_ones.val() >> (self.bus_bytes.val() - self.last_bytes.val());
        }
        // tuser: the length, then the input port (bit 2k) as source and as destination.
        self.m_axis_tuser.next = bit_cast::<128, 32>(
            bit_cast::<32, 11>(self.head.val().get_bits::<11>(0))
                | (bits::<32>(1) << (bit_cast::<8, 2>(self.head.val().get_bits::<2>(29)) << 1) << 16)
                | (bits::<32>(1) << (bit_cast::<8, 2>(self.head.val().get_bits::<2>(29)) << 1) << 24),
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
        self.desc_count.d.next = self.desc_count.q.val() + bit_cast::<3, 1>(self.d2_valid.q.val().into())
            - bit_cast::<3, 1>(self.pop.val().into());

        // Synchronous reset: the control state; the data registers need none.
        if !self.axis_resetn.val() {
            self.wr_ptr.d.next = 0.into();
            self.rd_ptr.d.next = 0.into();
            self.in_beat.d.next = 0.into();
            self.in_over.d.next = false;
            self.s_valid.d.next = false;
            self.d1_valid.d.next = false;
            self.d2_valid.d.next = false;
            self.desc_wr.d.next = 0.into();
            self.desc_rd.d.next = 0.into();
            self.desc_count.d.next = 0.into();
            self.out_beat.d.next = 0.into();
        }
    }
}

impl<const D: usize, const K: usize, const AW: usize, const FW: usize> super::SumePorts<D, K>
    for IcmpEcho<D, K, AW, FW>
{
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

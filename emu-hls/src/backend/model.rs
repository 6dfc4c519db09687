//! The cycle-accurate model of the generated hardware: what its ports do at every clock edge.
//!
//! The phases and their timing are those of [`super`] and of the Verilog in [`super::rtl`].
//! The operations themselves run through the IR interpreter's machine over `emu_core`'s
//! `Packet` and the CPU's state elements, in the schedule's order and at the schedule's
//! cycles: the semantics are the CPU target's by construction, and what this model adds is
//! the timing at the ports (ready, valid, beats, back-pressure, cycles per path).

use super::top::Clocked;
use super::Design;
use crate::interp::{Machine, Next, State};
use crate::ir::{BitVec, Block, Op, SumScope};
use crate::sched::{sum_cycles, StateKind, StateNo};
use emu_core::{check_frame, DropReason, Meta, Packet, Verdict};

/// One AXI-Stream beat, either direction. `tdata[i]` is frame byte `i` of the beat.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Beat {
    /// The bytes, `bus_bytes` of them.
    pub tdata: Vec<u8>,
    /// Bit `i`: byte `i` is part of the frame.
    pub tkeep: u64,
    /// Bits 15:0 length, 23:16 source ports, 31:24 destination ports (SUME).
    pub tuser: u128,
    /// The last beat of the frame.
    pub tlast: bool,
}

/// The inputs sampled at a clock edge.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// `s_axis_tvalid` with the beat, or `None` when low.
    pub s_axis: Option<Beat>,
    /// `m_axis_tready`.
    pub m_axis_tready: bool,
}

/// The outputs between two edges (they depend on the registers only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outputs {
    /// `s_axis_tready`.
    pub s_axis_tready: bool,
    /// `m_axis_tvalid` with the beat, or `None` when low.
    pub m_axis: Option<Beat>,
    /// `stat_drop_valid` with `stat_drop_reason`.
    pub drop: Option<DropReason>,
}

/// What the core (the NF, one packet at a time) is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for a received frame; with one, checks it and takes it (one cycle).
    Idle,
    /// An NF state; for a sum state, the cycles spent in it so far.
    Nf(StateNo, u64),
    /// The frame is decided: it waits to be handed to the egress, which takes it when it is
    /// free or sends its last beat in this cycle. The same cycle, the core is idle.
    Done(Handoff),
}

/// A decided frame as the core hands it to the egress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handoff {
    /// Send the core's frame out of these ports (a mask).
    Send(u32),
    /// Drop it: the egress shows the reason for a cycle, in order with the frames it sends.
    Drop(DropReason),
}

/// The egress: sending a frame the core handed over, while the core works on the next.
#[derive(Debug, Clone)]
struct Egress {
    frame: Vec<u8>,
    in_port: u8,
    dst_ports: u32,
    /// The beat on the bus.
    beat: usize,
}

impl Egress {
    /// Whether the beat on a bus of `bus` bytes is the frame's last.
    fn last(&self, bus: usize) -> bool {
        (self.beat + 1) * bus >= self.frame.len()
    }
}

/// The ingress: receiving a frame into one of three buffer slots, or holding a received one
/// until the core takes it.
#[derive(Debug, Clone, Default)]
struct Ingress {
    frame: Vec<u8>,
    oversize: bool,
    in_port: u8,
    timestamp: u64,
    /// A whole frame is held; no beat is taken until the core takes it.
    full: bool,
}

/// The model. Make it with [`CycleModel::new`], read [`CycleModel::outputs`], then
/// [`CycleModel::clock`] with the inputs of the edge.
pub struct CycleModel {
    pub(crate) design: Design,
    state: State,
    ingress: Ingress,
    phase: Phase,
    /// The frame the core works on, as edited.
    frame: Vec<u8>,
    in_port: u8,
    rx_len: u16,
    timestamp: u64,
    values: Vec<Option<BitVec>>,
    egress: Option<Egress>,
    drop_out: Option<DropReason>,
    cycles: u64,
    /// Clock edges spent in each FSM state, then idle, then decided and waiting for the
    /// egress ([`CycleModel::state_cycles`]).
    state_cycles: Vec<u64>,
    /// Edges left before the tables in block RAM are swept empty (after a reset, and at
    /// power-on): the core takes no frame until then.
    sweep: u64,
}

/// The lowest bit of the arrival timestamp in `tuser`: bits `[127:64]` carry it in ns, as
/// `meta.timestamp` (the SUME reference leaves them unused; our wrapper stamps them).
pub const TIMESTAMP_LSB: u32 = 64;

/// The arrival timestamp a first beat's `tuser` carries.
pub fn timestamp_of(tuser: u128) -> u64 {
    (tuser >> TIMESTAMP_LSB) as u64
}

/// The input port of a `tuser`: the lowest set bit of `[23:16]`, halved (0 when none is set).
pub fn in_port_of(tuser: u128) -> u8 {
    let src = ((tuser >> 16) & 0xff) as u8;
    if src == 0 {
        0
    } else {
        (src.trailing_zeros() / 2) as u8
    }
}

/// `tuser[23:16]`/`[31:24]` of a port mask: port `k` is bit `2k`.
pub fn one_hot_ports(mask: u32) -> u8 {
    (0..4).filter(|k| mask & (1 << k) != 0).fold(0u8, |acc, k| acc | (1 << (2 * k)))
}

/// Edges the tables in block RAM take to be swept empty after a reset: a set each (the
/// largest table's sets; `hw::HashTable`).
fn sweep_cycles(design: &Design) -> u64 {
    design.func.states.iter().filter_map(|(_, d)| d.kind.sets()).max().unwrap_or(0) as u64
}

impl CycleModel {
    /// The hardware of `design` just after reset, its state as the NF's constructor leaves it.
    pub fn new(design: &Design) -> CycleModel {
        let mut state = State::new(&design.func);
        design.initial.load_into(&design.func, &mut state).expect("contents Design::new checked");
        CycleModel {
            design: design.clone(),
            state,
            ingress: Ingress::default(),
            phase: Phase::Idle,
            frame: vec![],
            in_port: 0,
            rx_len: 0,
            timestamp: 0,
            values: vec![],
            egress: None,
            drop_out: None,
            cycles: 0,
            state_cycles: vec![0; design.sched.states.len() + 2],
            sweep: sweep_cycles(design),
        }
    }

    /// The design modelled.
    pub fn design(&self) -> &Design {
        &self.design
    }

    /// Clock edges so far per phase of the core: entry `n` for FSM state `n` (of
    /// `design.sched.states`), then one for idle (waiting for a frame, or taking one through
    /// the ingress checks), then one for a decided frame waiting for the egress to be free.
    /// They sum to [`CycleModel::cycles`].
    pub fn state_cycles(&self) -> &[u64] {
        &self.state_cycles
    }

    /// The NF's state elements (to compare with the CPU's after a run).
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Clock edges so far.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// The outputs in the current cycle.
    pub fn outputs(&self) -> Outputs {
        let bus = self.design.config.bus_bytes;
        let m_axis = self.egress.as_ref().map(|e| {
            let len = e.frame.len();
            let start = e.beat * bus;
            let mut tdata = vec![0u8; bus];
            let mut tkeep = 0u64;
            for (j, byte) in tdata.iter_mut().enumerate() {
                if start + j < len {
                    *byte = e.frame[start + j];
                    tkeep |= 1 << j;
                }
            }
            let tuser = (len as u128 & 0xffff)
                | ((one_hot_ports(1 << e.in_port) as u128) << 16)
                | ((one_hot_ports(e.dst_ports) as u128) << 24);
            Beat { tdata, tkeep, tuser, tlast: e.last(bus) }
        });
        Outputs { s_axis_tready: !self.ingress.full, m_axis, drop: self.drop_out }
    }

    /// One rising clock edge with `inputs`. The stages act on the state before the edge: the
    /// egress sends a beat; the ingress takes one unless it holds a frame; the core hands a
    /// decided frame to the egress when the egress is free or finishing, and in the same edge
    /// takes a whole frame (freeing the ingress) as it would when idle, the one whose last beat
    /// arrives in this edge among them.
    pub fn clock(&mut self, inputs: &Inputs) {
        self.cycles += 1;
        let states = self.design.sched.states.len();
        let at = match self.phase {
            Phase::Nf(n, _) => n,
            Phase::Idle => states,
            Phase::Done(_) => states + 1,
        };
        self.state_cycles[at] += 1;
        self.drop_out = None;
        let ingress_ready = !self.ingress.full;
        let swept = self.sweep == 0;
        self.sweep = self.sweep.saturating_sub(1);
        let bus = self.design.config.bus_bytes;
        if let (Some(e), true) = (&mut self.egress, inputs.m_axis_tready) {
            if e.last(bus) {
                self.egress = None;
            } else {
                e.beat += 1;
            }
        }
        // A frame whose last beat arrives now is checked and taken by the core in this edge
        // (the RTL's checks and core read the ingress's registers as they are after the edge).
        if let (true, Some(beat)) = (ingress_ready, &inputs.s_axis) {
            self.receive(beat);
        }
        match self.phase {
            Phase::Idle => self.idle(swept),
            Phase::Done(h) => {
                if self.egress.is_none() {
                    self.hand_off(h);
                    self.phase = Phase::Idle;
                    self.idle(swept);
                }
            }
            Phase::Nf(n, spent) => self.nf_state(n, spent),
        }
    }

    fn idle(&mut self, swept: bool) {
        if self.ingress.full && swept {
            self.take();
        }
    }

    fn hand_off(&mut self, h: Handoff) {
        match h {
            Handoff::Drop(reason) => self.drop_out = Some(reason),
            Handoff::Send(mask) => {
                self.egress = Some(Egress {
                    frame: std::mem::take(&mut self.frame),
                    in_port: self.in_port,
                    dst_ports: mask,
                    beat: 0,
                })
            }
        }
    }

    fn receive(&mut self, beat: &Beat) {
        let bus = self.design.config.bus_bytes;
        let max = self.design.config.max_frame;
        let i = &mut self.ingress;
        if i.frame.is_empty() && !i.oversize {
            i.in_port = in_port_of(beat.tuser);
            i.timestamp = timestamp_of(beat.tuser);
        }
        for j in 0..bus {
            if beat.tkeep & (1 << j) != 0 {
                if i.frame.len() < max {
                    i.frame.push(beat.tdata[j]);
                } else {
                    i.oversize = true;
                }
            }
        }
        if beat.tlast {
            i.full = true;
        }
    }

    /// The ingress checks on the held frame: a drop, or the frame moves into the core.
    fn take(&mut self) {
        let max = self.design.config.max_frame;
        let i = std::mem::take(&mut self.ingress);
        let verdict =
            if i.oversize && !i.frame.is_empty() { Err(DropReason::Oversize) } else { check_frame(&i.frame, max) };
        match verdict {
            Err(reason) => self.phase = Phase::Done(Handoff::Drop(reason)),
            Ok(()) => {
                self.rx_len = i.frame.len() as u16;
                self.in_port = i.in_port;
                self.timestamp = i.timestamp;
                self.frame = i.frame;
                self.values = vec![None; self.design.func.values.len()];
                self.phase = Phase::Nf(0, 0);
            }
        }
    }

    fn nf_state(&mut self, n: StateNo, spent: u64) {
        let d = &self.design;
        let st = &d.sched.states[n];
        let meta = Meta { in_port: self.in_port, len: self.rx_len, timestamp: self.timestamp };
        let window = d.func.window as usize;
        let mut pkt = Packet::new(&mut self.frame, window);
        if st.kind == StateKind::Sum {
            let inst = st.insts[0];
            let Op::OnesSum(scope, a, b) = d.func.insts[inst].op else { unreachable!("a sum state holds its sum") };
            let operand =
                |v: crate::ir::Value| self.values[v.as_u32() as usize].map_or(0, |x: BitVec| x.to_u64_saturating());
            let limit = match scope {
                SumScope::Frame => pkt.len(),
                SumScope::Window => pkt.len().min(window),
            } as u64;
            let needed = sum_cycles(operand(a), operand(b), limit, d.config.bus_bytes as u64);
            if spent + 1 < needed {
                self.phase = Phase::Nf(n, spent + 1);
                return;
            }
        }
        let func = &d.func;
        let mut m = Machine::new(func, &mut self.state, &mut pkt, &meta, std::mem::take(&mut self.values));
        for &i in &st.insts {
            m.inst(i).expect("a verified function runs");
        }
        let mut next =
            if st.ends_block { Some(m.terminator(st.block).expect("a verified function runs")) } else { None };
        // A bare `return`, branch or jump has no state: it is decided in this cycle, and the
        // posted effects before a `return` are issued in it.
        while let Some(Next::Block(b)) = next {
            if !d.sched.inlined.contains(&b) {
                break;
            }
            for &i in &d.func.blocks[b].insts {
                m.inst(i).expect("a verified function runs");
            }
            next = Some(m.terminator(b).expect("a verified function runs"));
        }
        self.values = std::mem::take(&mut m.values);
        match next {
            None => self.phase = Phase::Nf(n + 1, 0),
            Some(Next::Block(b)) => self.phase = Phase::Nf(self.start_of(b), 0),
            Some(Next::Done(action)) => {
                self.phase = Phase::Done(match action.resolve(self.in_port, d.config.ports) {
                    Verdict::Drop(reason) => Handoff::Drop(reason),
                    Verdict::Send(mask) => Handoff::Send(mask.0),
                })
            }
        }
    }

    fn start_of(&self, b: Block) -> StateNo {
        self.design.sched.block_start[&b]
    }
}

/// A frame as the beats of a `bus_bytes`-wide stream, `tuser` carrying its length and input
/// port.
pub fn beats(frame: &[u8], in_port: u8, bus_bytes: usize) -> Vec<Beat> {
    beats_at(frame, in_port, 0, bus_bytes)
}

/// [`beats`] of a frame that arrived at `timestamp` (ns), which goes in `tuser[127:64]`.
pub fn beats_at(frame: &[u8], in_port: u8, timestamp: u64, bus_bytes: usize) -> Vec<Beat> {
    let tuser = (frame.len() as u128 & 0xffff)
        | ((one_hot_ports(1 << in_port) as u128) << 16)
        | ((timestamp as u128) << TIMESTAMP_LSB);
    if frame.is_empty() {
        return vec![Beat { tdata: vec![0; bus_bytes], tkeep: 0, tuser, tlast: true }];
    }
    let chunks: Vec<&[u8]> = frame.chunks(bus_bytes).collect();
    let n = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let mut tdata = c.to_vec();
            tdata.resize(bus_bytes, 0);
            let tkeep = if c.len() == 64 { u64::MAX } else { (1u64 << c.len()) - 1 };
            Beat { tdata, tkeep, tuser, tlast: i + 1 == n }
        })
        .collect()
}

/// What became of one frame fed to the hardware.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Sent out of these ports (a mask, port `k` bit `k`), as these bytes.
    Sent(u32, Vec<u8>),
    /// Dropped with this reason.
    Dropped(DropReason),
}

/// How a [`Driver`] paces the streams: in percent, how often the source has a beat ready
/// and the sink accepts one (100 and 100: back to back), from a seeded generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    /// Percent of cycles `s_axis_tvalid` is high while frames are waiting.
    pub valid_percent: u32,
    /// Percent of cycles `m_axis_tready` is high.
    pub ready_percent: u32,
    /// The generator's seed.
    pub seed: u64,
}

impl Pacing {
    /// Back-to-back frames into a sink that is always ready.
    pub const FULL: Pacing = Pacing { valid_percent: 100, ready_percent: 100, seed: 1 };
}

/// Drives frames through the hardware (the model, or the rust-hdl block) and collects what
/// comes out, one [`Outcome`] per frame in order (the stages keep it: a drop leaves through the
/// egress too).
pub struct Driver<H: Clocked> {
    /// The hardware driven.
    pub hw: H,
    bus_bytes: usize,
    pacing: Pacing,
    rng: u64,
    /// Clock edges so far.
    pub cycles: u64,
    /// Per frame finished, in order: cycles from its first beat taken to its last beat sent
    /// (or to its drop).
    pub latencies: Vec<u64>,
    /// Per frame finished, in order: the cycle its last beat left (or it was dropped).
    pub finished: Vec<u64>,
    /// Cycles with no beat moved and no drop before the run is declared hung.
    pub hang_limit: u64,
}

/// The hardware stopped moving: the cycle it was last seen making progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hang {
    /// The cycle of the last progress.
    pub last_progress: u64,
    /// Frames finished before it.
    pub finished: usize,
}

impl Driver<CycleModel> {
    /// A driver over a fresh model of `design`.
    pub fn model(design: &Design, pacing: Pacing) -> Driver<CycleModel> {
        Driver::new(CycleModel::new(design), design.config.bus_bytes, pacing)
    }
}

impl<H: Clocked> Driver<H> {
    /// A driver over `hw`, whose bus is `bus_bytes` wide, after a reset cycle (not counted).
    pub fn new(mut hw: H, bus_bytes: usize, pacing: Pacing) -> Driver<H> {
        hw.reset();
        Driver {
            hw,
            bus_bytes,
            pacing,
            rng: pacing.seed | 1,
            cycles: 0,
            latencies: vec![],
            finished: vec![],
            hang_limit: 100_000,
        }
    }

    /// Bytes of a beat of the hardware's bus.
    pub fn bus_bytes(&self) -> usize {
        self.bus_bytes
    }

    fn chance(&mut self, percent: u32) -> bool {
        // xorshift64*: cheap, seeded, the same sequence on every machine.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32;
        (r % 100) < percent as u64
    }

    /// Feeds `frames` (bytes, input port) and runs until every one has an outcome.
    pub fn run(&mut self, frames: &[(Vec<u8>, u8)]) -> Result<Vec<Outcome>, Hang> {
        self.run_timed(frames.iter().map(|(f, p)| (f.as_slice(), *p, 0)))
    }

    /// Feeds `frames` (bytes, input port, arrival time in ns) and runs until every one has
    /// an outcome.
    pub fn run_timed<'f>(
        &mut self,
        frames: impl ExactSizeIterator<Item = (&'f [u8], u8, u64)>,
    ) -> Result<Vec<Outcome>, Hang> {
        let bus = self.bus_bytes;
        let count = frames.len();
        // Each beat with whether it starts its frame.
        let mut input: std::collections::VecDeque<(Beat, bool)> = frames
            .flat_map(|(f, p, t)| beats_at(f, p, t, bus).into_iter().enumerate().map(|(i, b)| (b, i == 0)))
            .collect();
        let mut started: std::collections::VecDeque<u64> = Default::default();
        let mut out = Vec::with_capacity(count);
        let mut partial: Vec<u8> = vec![];
        let mut last_progress = self.cycles;
        while out.len() < count {
            let o = self.hw.outputs();
            let valid = !input.is_empty() && self.chance(self.pacing.valid_percent);
            let ready = self.chance(self.pacing.ready_percent);
            let s_axis = if valid { input.front().map(|(b, _)| b.clone()) } else { None };
            if let Some(reason) = o.drop {
                out.push(Outcome::Dropped(reason));
                self.latencies.push(self.cycles - started.pop_front().unwrap_or(self.cycles));
                self.finished.push(self.cycles);
                last_progress = self.cycles;
            }
            if let (Some(beat), true) = (&o.m_axis, ready) {
                for j in 0..bus {
                    if beat.tkeep & (1 << j) != 0 {
                        partial.push(beat.tdata[j]);
                    }
                }
                if beat.tlast {
                    let dst = (beat.tuser >> 24) as u8;
                    let mask = (0..4).filter(|k| dst & (1 << (2 * k)) != 0).fold(0u32, |m, k| m | (1 << k));
                    out.push(Outcome::Sent(mask, std::mem::take(&mut partial)));
                    self.latencies.push(self.cycles + 1 - started.pop_front().unwrap_or(self.cycles));
                    self.finished.push(self.cycles + 1);
                }
                last_progress = self.cycles;
            }
            if s_axis.is_some() && o.s_axis_tready {
                if let Some((_, true)) = input.pop_front() {
                    started.push_back(self.cycles);
                }
                last_progress = self.cycles;
            }
            self.hw.clock(&Inputs { s_axis, m_axis_tready: ready });
            self.cycles += 1;
            if self.cycles - last_progress > self.hang_limit {
                return Err(Hang { last_progress, finished: out.len() });
            }
        }
        Ok(out)
    }
}

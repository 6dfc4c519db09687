//! The Verilator model with its debug unit ([`emu_hls::backend::debug`]) on a bench: frames
//! queued at its input (an upstream FIFO: it waits while the NF holds `s_axis_tready` low),
//! frames and drops collected at its output, and the unit's register port as
//! [`emu_debug::hw::Registers`], one request per clock cycle alongside the traffic, so
//! [`emu_debug::hw::HwUnit`] drives the hardware while frames flow.

use crate::verilator::{DebugRequest, VerilatorModel};
use emu_core::DropReason;
use emu_debug::hw::{reg, Registers};
use emu_debug::protocol::{self, Message, Reply, Request, Status};
use emu_hls::backend::model::{beats, Beat, Inputs};
use emu_hls::backend::top::Clocked;
use std::collections::VecDeque;

/// Cycles without a frame taken before [`Registers::settle`] decides none is coming.
const QUIET: u64 = 2_000;

/// The model, its traffic and what came out.
pub struct DebugBench {
    model: VerilatorModel,
    input: VecDeque<Beat>,
    partial: Vec<u8>,
    /// Frames sent, in order: the output port mask (bit k: port k) and the bytes.
    pub sent: Vec<(u32, Vec<u8>)>,
    /// Frames dropped, in order.
    pub dropped: Vec<DropReason>,
    /// Clock cycles so far.
    pub cycles: u64,
}

impl DebugBench {
    /// A bench over `model` (built with the debug unit), after a reset.
    pub fn new(mut model: VerilatorModel) -> Result<DebugBench, String> {
        if !model.has_debug() {
            return Err("the model has no debug unit: build the design with HwConfig::debug".into());
        }
        model.reset();
        Ok(DebugBench { model, input: VecDeque::new(), partial: vec![], sent: vec![], dropped: vec![], cycles: 0 })
    }

    /// Queues `frame`, arriving on `port`.
    pub fn send(&mut self, frame: &[u8], port: u8) {
        let bus = self.model.bus_bytes();
        self.input.extend(beats(frame, port, bus));
    }

    /// Beats still waiting upstream.
    pub fn waiting(&self) -> usize {
        self.input.len()
    }

    /// One clock cycle, with `req` on the debug port: the port's response after the edge.
    pub fn cycle(&mut self, req: Option<DebugRequest>) -> Option<u32> {
        let o = self.model.outputs();
        if let Some(beat) = &o.m_axis {
            let bus = self.model.bus_bytes();
            self.partial.extend((0..bus).filter(|j| beat.tkeep & (1 << j) != 0).map(|j| beat.tdata[j]));
            if beat.tlast {
                let dst = (beat.tuser >> 24) as u8;
                let mask = (0..4).filter(|k| dst & (1 << (2 * k)) != 0).fold(0u32, |m, k| m | (1 << k));
                self.sent.push((mask, std::mem::take(&mut self.partial)));
            }
        }
        if let Some(r) = o.drop {
            self.dropped.push(r);
        }
        let s_axis = self.input.front().cloned();
        if s_axis.is_some() && o.s_axis_tready {
            self.input.pop_front();
        }
        if let Some(r) = req {
            self.model.debug_request(r);
        }
        self.model.clock(&Inputs { s_axis, m_axis_tready: true });
        self.cycles += 1;
        self.model.debug_response()
    }

    /// Runs until the input is taken (or held at a break) and the output has been quiet for
    /// a while.
    pub fn run(&mut self) {
        let mut quiet = 0;
        let (mut sent, mut waiting) = (self.sent.len() + self.dropped.len(), self.input.len());
        while quiet < 200 {
            self.cycle(None);
            let now = (self.sent.len() + self.dropped.len(), self.input.len());
            if now == (sent, waiting) {
                quiet += 1;
            } else {
                (sent, waiting, quiet) = (now.0, now.1, 0);
            }
        }
    }
}

impl Registers for DebugBench {
    fn read(&mut self, addr: u32) -> u32 {
        self.cycle(Some(DebugRequest::Read(addr))).expect("the debug unit answers the cycle after a request")
    }

    fn write(&mut self, addr: u32, value: u32) {
        self.cycle(Some(DebugRequest::Write(addr, value)));
    }

    fn settle(&mut self) {
        settle(self);
        // Let the frames taken finish.
        self.run();
    }
}

/// Runs `regs`'s hardware until its step credits are used, or no frame has been taken for
/// [`QUIET`] cycles.
fn settle(regs: &mut dyn Registers) {
    let mut last = regs.read(reg::PACKETS);
    let mut since = 0;
    while since < QUIET && regs.read(reg::STEP) != 0 {
        let now = regs.read(reg::PACKETS);
        since = if now == last { since + 2 } else { 0 };
        last = now;
    }
}

/// Cycles an in-band request may wait for its reply (behind the frames queued before it).
const REPLY_CYCLES: u64 = 100_000;

/// The unit's registers reached in band, as a host on management port `port` reaches them:
/// each read or write a `reg_read` or `reg_write` control frame queued at that port, answered
/// by the unit's reply frame out of it (taken out of [`DebugBench::sent`], which keeps the NF's
/// frames). The frames queued before a request go first, as on the wire.
pub struct InBand<'a> {
    /// The bench, its traffic and what came out.
    pub bench: &'a mut DebugBench,
    /// The management port.
    pub port: u8,
    seq: u32,
}

impl<'a> InBand<'a> {
    /// The unit of `bench` through management port `port`.
    pub fn new(bench: &'a mut DebugBench, port: u8) -> InBand<'a> {
        InBand { bench, port, seq: 0 }
    }

    /// Sends `request`, and runs until its reply comes out of the management port.
    ///
    /// # Panics
    ///
    /// If none comes, or it is not `ok`: the bench's requests are well formed.
    fn ask(&mut self, request: Request) -> Reply {
        self.seq += 1;
        let seq = self.seq;
        let host = [2, 0, 0, 0, 0, 0x99];
        let message = protocol::encode(&Message::Request { seq, request });
        self.bench.send(&protocol::frame(protocol::UNIT_MAC, host, &message), self.port);
        for _ in 0..REPLY_CYCLES {
            self.bench.cycle(None);
            let mine = |(mask, f): &(u32, Vec<u8>)| *mask == 1 << self.port && protocol::payload(f).is_some();
            if let Some(i) = self.bench.sent.iter().position(mine) {
                let (_, f) = self.bench.sent.remove(i);
                assert_eq!(f[..6], host, "the reply goes back to the host");
                match protocol::decode(protocol::payload(&f).expect("a control frame")) {
                    Ok(Message::Reply { seq: s, status: Status::Ok, reply, .. }) if s == seq => return reply,
                    other => panic!("request {seq}: {other:?}"),
                }
            }
        }
        panic!("no reply to in-band request {seq} in {REPLY_CYCLES} cycles")
    }
}

impl Registers for InBand<'_> {
    fn read(&mut self, addr: u32) -> u32 {
        match self.ask(Request::RegRead { addr }) {
            Reply::Entry(e) if e.len() == 4 => u32::from_be_bytes([e[0], e[1], e[2], e[3]]),
            other => panic!("reg_read 0x{addr:x}: {other:?}"),
        }
    }

    fn write(&mut self, addr: u32, value: u32) {
        self.ask(Request::RegWrite { addr, value });
    }

    fn settle(&mut self) {
        settle(self);
        self.bench.run();
    }
}

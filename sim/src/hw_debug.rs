//! The Verilator model with its debug unit ([`emu_hls::backend::debug`]) on a bench: frames
//! queued at its input (an upstream FIFO: it waits while the NF holds `s_axis_tready` low),
//! frames and drops collected at its output, and the unit's register port as
//! [`emu_debug::hw::Registers`], one request per clock cycle alongside the traffic, so
//! [`emu_debug::hw::HwUnit`] drives the hardware while frames flow; or the same registers in
//! band ([`in_band`]), as control frames through the management port of hardware built with
//! `HwConfig::debug_port`.

use crate::verilator::{DebugRequest, VerilatorModel};
use emu_core::DropReason;
use emu_debug::client::Transport;
use emu_debug::hw::{wait_for_credits, InBandRegisters, Registers, QUIET_LOOKS};
use emu_debug::protocol;
use emu_hls::backend::model::{beats, Beat, Inputs};
use emu_hls::backend::top::Clocked;
use std::collections::VecDeque;
use std::time::Duration;

/// The model, its traffic and what came out.
pub struct DebugBench {
    model: VerilatorModel,
    input: VecDeque<Beat>,
    partial: Vec<u8>,
    /// Frames sent, in order: the output port mask (bit k: port k) and the bytes.
    pub sent: Vec<(u32, Vec<u8>)>,
    /// Frames dropped, in order: the frame's number among those decided (sent or dropped, from
    /// 0: the order they came in), and why.
    pub dropped: Vec<(u64, DropReason)>,
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
            self.dropped.push(((self.sent.len() + self.dropped.len()) as u64, r));
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
        wait_for_credits(self, QUIET_LOOKS);
        // Let the frames taken finish.
        self.run();
    }
}

/// Cycles an in-band request may wait for its reply (behind the frames queued before it).
const REPLY_CYCLES: u64 = 100_000;

/// The bench's management port `port` as a host on it sees it: a message sent is a control
/// frame queued at that port, and one received is the next control frame out of it (taken out
/// of [`DebugBench::sent`], which keeps the NF's frames), within [`REPLY_CYCLES`] cycles (the
/// clock of the simulation, not the wall's).
pub struct BenchLink<'a> {
    /// The bench, its traffic and what came out.
    pub bench: &'a mut DebugBench,
    /// The management port.
    pub port: u8,
}

/// The host's MAC on the bench's management port.
const HOST: [u8; 6] = [2, 0, 0, 0, 0, 0x99];

impl Transport for BenchLink<'_> {
    fn send(&mut self, msg: &[u8]) -> std::io::Result<()> {
        self.bench.send(&protocol::frame(protocol::UNIT_MAC, HOST, msg), self.port);
        Ok(())
    }

    fn recv(&mut self, _timeout: Duration) -> std::io::Result<Option<Vec<u8>>> {
        for _ in 0..REPLY_CYCLES {
            let mine = |(mask, f): &(u32, Vec<u8>)| *mask == 1 << self.port && protocol::payload(f).is_some();
            if let Some(i) = self.bench.sent.iter().position(mine) {
                let (_, f) = self.bench.sent.remove(i);
                if f[..6] != HOST {
                    return Err(std::io::Error::other("a reply to another host"));
                }
                return Ok(protocol::payload(&f).map(<[u8]>::to_vec));
            }
            self.bench.cycle(None);
        }
        Ok(None)
    }
}

/// The unit's registers reached in band through the bench's management port `port`:
/// [`InBandRegisters`] over a [`BenchLink`].
pub type InBand<'a> = InBandRegisters<BenchLink<'a>>;

/// [`InBand`] registers of `bench` through `port`.
pub fn in_band(bench: &mut DebugBench, port: u8) -> InBand<'_> {
    InBandRegisters::new(BenchLink { bench, port }, 0)
}

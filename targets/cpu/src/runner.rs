//! The engine: frames in, the NF's verdicts applied, frames out, drops recorded.

use crate::debug::Debugger;
use crate::device::{Arrival, Device, Frame};
use crate::error::{Error, ErrorKind, Result};
use crate::stats::Stats;
use emu::{check_frame, DropReason, Meta, NetworkFunction, Port, Timestamp, Verdict};
use serde::Serialize;
use std::io::Write;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// One dropped frame, as the drops record holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DropRecord {
    /// Index of the frame in the order frames arrived, from 0.
    pub index: u64,
    /// The port it arrived on.
    pub port: Port,
    /// Why it was dropped (a [`DropReason`] name).
    pub reason: &'static str,
    /// Its length in bytes.
    pub len: usize,
    /// Its arrival time, nanoseconds since the Unix epoch.
    pub timestamp: Timestamp,
}

/// Where drop records go.
pub trait DropSink {
    /// Takes one record.
    fn record(&mut self, rec: &DropRecord) -> Result<()>;
}

impl DropSink for Vec<DropRecord> {
    fn record(&mut self, rec: &DropRecord) -> Result<()> {
        self.push(rec.clone());
        Ok(())
    }
}

/// Writes drop records as JSON lines.
pub struct JsonLines<W: Write>(pub W);

impl<W: Write> DropSink for JsonLines<W> {
    fn record(&mut self, rec: &DropRecord) -> Result<()> {
        serde_json::to_writer(&mut self.0, rec).map_err(|e| Error::new(ErrorKind::Io, format!("drops record: {e}")))?;
        self.0.write_all(b"\n").map_err(|e| Error::io("drops record", e))
    }
}

/// Discards drop records (they are still counted in [`Stats`]).
pub struct NoDropLog;

impl DropSink for NoDropLog {
    fn record(&mut self, _rec: &DropRecord) -> Result<()> {
        Ok(())
    }
}

/// Where the runner says, for each frame it sends on a verdict, which input frame it came
/// from: `emu sim`'s differ pairs the tiers' frames by it, so a frame one tier lost is one
/// difference, not a shift of every later frame.
pub trait SentSink {
    /// Frame `index` (in arrival order, from 0, as in [`DropRecord::index`]) went out of `port`.
    fn sent(&mut self, index: u64, port: Port) -> Result<()>;
    /// Writes out what is buffered; called when the run ends.
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Writes `{"index":I,"port":P}` lines.
impl<W: Write> SentSink for JsonLines<W> {
    fn sent(&mut self, index: u64, port: Port) -> Result<()> {
        writeln!(self.0, "{{\"index\":{index},\"port\":{port}}}").map_err(|e| Error::io("sent.jsonl", e))
    }
    fn flush(&mut self) -> Result<()> {
        self.0.flush().map_err(|e| Error::io("sent.jsonl", e))
    }
}

/// Runs one NF over frames. Generic over the NF so benchmarks get a direct call; the tool
/// uses `Runner<dyn NetworkFunction + Send>`.
pub struct Runner<N: ?Sized + NetworkFunction> {
    nf: Box<N>,
    ports: usize,
    window: usize,
    max_frame: usize,
    index: u64,
    stats: Stats,
    debug: Option<Debugger>,
    sent: Option<Box<dyn SentSink + Send>>,
}

impl<N: ?Sized + NetworkFunction> Runner<N> {
    /// A runner of `nf` on `ports` ports with a header window of `window` bytes.
    pub fn new(nf: Box<N>, ports: usize, window: usize) -> Runner<N> {
        let ports = ports.clamp(1, emu::MAX_PORTS);
        Runner { nf, ports, window, max_frame: emu::DEFAULT_MAX_FRAME, index: 0, stats: Stats::new(ports), debug: None, sent: None }
    }

    /// Runs with a debug unit (docs/debug-protocol.md) on its management port or socket.
    pub fn with_debugger(mut self, debugger: Debugger) -> Runner<N> {
        self.debug = Some(debugger);
        self
    }

    /// Reports every frame sent on a verdict, with the index of the frame it came from, to
    /// `sink` (replies to the debugger and its notifications are not reported).
    pub fn with_sent_log(mut self, sink: Box<dyn SentSink + Send>) -> Runner<N> {
        self.sent = Some(sink);
        self
    }

    /// Sets the largest frame accepted (longer ones are dropped as `oversize`).
    pub fn with_max_frame(mut self, max_frame: usize) -> Runner<N> {
        self.max_frame = max_frame;
        self
    }

    /// Number of ports.
    pub fn ports(&self) -> usize {
        self.ports
    }

    /// The counters so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The NF, to inspect its state.
    pub fn nf(&self) -> &N {
        &self.nf
    }

    /// The NF, once the run is over.
    pub fn into_nf(self) -> Box<N> {
        self.nf
    }

    /// Processes one frame in place: checks it, runs the NF, counts it. On `Send` the frame's
    /// bytes are what goes out (the NF may have edited them).
    #[inline]
    pub fn process(&mut self, frame: &mut Frame) -> Verdict {
        self.index += 1;
        let port = frame.port as usize;
        self.stats.count_rx(port, frame.data.len());
        let verdict = self.decide(frame);
        match verdict {
            Verdict::Send(mask) => self.stats.count_tx(mask, frame.data.len()),
            Verdict::Drop(reason) => self.stats.count_drop(port, reason),
        }
        verdict
    }

    #[inline(always)]
    fn decide(&mut self, frame: &mut Frame) -> Verdict {
        if frame.port as usize >= self.ports {
            return Verdict::Drop(DropReason::NoSuchPort);
        }
        if frame.wire_len > frame.data.len() && !frame.data.is_empty() {
            return Verdict::Drop(DropReason::Snapped);
        }
        if let Err(reason) = check_frame(&frame.data, self.max_frame) {
            return Verdict::Drop(reason);
        }
        let meta = Meta { in_port: frame.port, len: frame.data.len() as u16, timestamp: frame.timestamp };
        let action = self.nf.process_frame(&mut frame.data, self.window, &meta);
        action.resolve(frame.port, self.ports)
    }

    /// Runs until the device's input ends: every frame through [`Runner::process`], copies out
    /// of each port of the verdict, drops to `drops`.
    pub fn run<D: Device + ?Sized>(&mut self, device: &mut D, drops: &mut dyn DropSink) -> Result<()> {
        let result = self.run_inner(device, drops);
        let finished = device.finish();
        let logged = self.sent.as_mut().map_or(Ok(()), |s| s.flush());
        result.and(finished).and(logged)
    }

    fn run_inner<D: Device + ?Sized>(&mut self, device: &mut D, drops: &mut dyn DropSink) -> Result<()> {
        while let Some((mut frame, released)) = self.next_frame(device)? {
            if frame.port as usize >= self.ports {
                return Err(Error::new(
                    ErrorKind::BadPort,
                    format!(
                        "a frame arrived on port {}, but the NF runs with {} ports (0..{}); give --ports {}",
                        frame.port,
                        self.ports,
                        self.ports - 1,
                        frame.port as usize + 1
                    ),
                ));
            }
            // The debugger, if any: commands on its port, packets held by a break, and a copy
            // of the packet for its watches and trace (only when it has such work).
            let mut seen = None;
            if let Some(dbg) = &mut self.debug {
                if dbg.is_control(frame.port, &frame.data) {
                    if let Some(reply) = dbg.control_frame(&frame.data, &mut *self.nf, &self.stats) {
                        device.transmit(frame.port, &reply, frame.timestamp)?;
                    }
                    self.send_notifications(device)?;
                    continue;
                }
                dbg.serve_socket(false, &mut *self.nf, &self.stats);
                if !dbg.idle() {
                    // A packet a step released goes through; a new one may be held.
                    if !released {
                        match dbg.admit(frame.port, std::mem::take(&mut frame.data)) {
                            Some((_, data)) => frame.data = data,
                            None => {
                                self.send_notifications(device)?;
                                continue;
                            }
                        }
                    }
                    seen = Some((frame.data.clone(), Instant::now()));
                }
            }
            let index = self.index;
            let verdict = self.process(&mut frame);
            match verdict {
                Verdict::Send(mask) => {
                    for p in mask.ports() {
                        device.transmit(p, &frame.data, frame.timestamp)?;
                        if let Some(sent) = &mut self.sent {
                            sent.sent(index, p)?;
                        }
                    }
                }
                Verdict::Drop(reason) => drops.record(&DropRecord {
                    index,
                    port: frame.port,
                    reason: reason.name(),
                    len: frame.data.len(),
                    timestamp: frame.timestamp,
                })?,
            }
            if let (Some((bytes, t0)), Some(dbg)) = (seen, &mut self.debug) {
                dbg.observe(index, frame.port, &bytes, verdict, t0.elapsed(), &mut *self.nf, &self.stats);
                self.send_notifications(device)?;
            }
        }
        Ok(())
    }

    /// The next frame, and whether a debugger released it: those come first, then the
    /// device's; while the device waits, the debugger's socket is served.
    fn next_frame<D: Device + ?Sized>(&mut self, device: &mut D) -> Result<Option<(Frame, bool)>> {
        if self.debug.is_none() {
            return Ok(device.receive()?.map(|f| (f, false)));
        }
        loop {
            let dbg = self.debug.as_mut().expect("a debugger");
            if let Some((port, data)) = dbg.next_released() {
                let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as Timestamp);
                return Ok(Some((Frame::new(port, now, data), true)));
            }
            let arrival = dbg.with_wake_fds(|fds| device.receive_or_wake(fds))?;
            match arrival {
                Arrival::Frame(f) => return Ok(Some((f, false))),
                Arrival::End => return Ok(None),
                Arrival::Woken => {
                    dbg.serve_socket(true, &mut *self.nf, &self.stats);
                    self.send_notifications(device)?;
                }
            }
        }
    }

    fn send_notifications<D: Device + ?Sized>(&mut self, device: &mut D) -> Result<()> {
        if let Some(dbg) = &mut self.debug {
            for (port, f) in dbg.notifications() {
                device.transmit(port, &f, 0)?;
            }
        }
        Ok(())
    }
}

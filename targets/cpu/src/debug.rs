//! The CPU target's debug unit (docs/debug-protocol.md): control frames (EtherType 0x88B5)
//! on the management port, and the same messages on a local Unix socket, answered against the
//! NF's state by field name ([`NetworkFunction::elements`]) and the runner's own counters.
//!
//! The channel is off unless a management port or a socket is given. From any other port a
//! control frame is ordinary traffic.

use crate::live::EtherSocket;
use crate::stats::Stats;
use emu::probe::{ProbeKind, Probes};
use emu::state::{Element, EntryError};
use emu::{DropReason, NetworkFunction, Port, Verdict};
use emu_debug::client::Transport;
use emu_debug::protocol::{self, Status, SymbolInfo, SymbolKind, TraceVerdict};
use emu_debug::socket::Server;
use emu_debug::unit::{auto_counter_symbols, Inspect, Limits, Outcome, Unit, AUTO_COUNTERS};
use std::io::{ErrorKind, Read, Write};
use crate::live::Timer;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::thread::LocalKey;
use std::time::{Duration, Instant};

/// The source MAC of the unit's in-band replies and notifications.
pub const UNIT_MAC: [u8; 6] = protocol::UNIT_MAC;

/// Frames between two looks at the socket while traffic keeps the runner busy.
const SOCKET_EVERY: u32 = 64;

/// Where the debug channel listens.
#[derive(Debug, Clone, Default)]
pub struct DebugOptions {
    /// The management port: control frames arriving there are commands.
    pub port: Option<Port>,
    /// A Unix socket for the same commands (`emu dbg PATH`).
    pub socket: Option<PathBuf>,
    /// Packets a `break` holds before the rest pass (`None`: [`Limits`]'s 1024); the hardware's
    /// depth, to compare the two.
    pub hold_depth: Option<u16>,
    /// How long a break outlives its client (`None`: [`Limits`]'s 5 s): with no client
    /// connected to the socket and no request in band for this long, the unit continues.
    pub break_timeout: Option<Duration>,
}

/// One run's debug unit and its channels.
pub struct Debugger {
    unit: Unit,
    port: Option<Port>,
    socket: Option<Server>,
    /// Who sent the last in-band request: replies and notifications go there.
    peer: [u8; 6],
    since_socket: u32,
    /// Wakes the runner when a break's timeout runs out with no traffic to wake it, and when
    /// it is set to.
    timer: Timer,
    timer_at: Option<Instant>,
}

impl Debugger {
    /// A unit for `nf`, listening where `options` says. A socket path that exists is replaced
    /// only if it is a socket nobody listens on.
    pub fn new(nf: &str, options: &DebugOptions) -> std::io::Result<Debugger> {
        let socket = match &options.socket {
            Some(path) => Some(Server::listen(path)?),
            None => None,
        };
        let limits = Limits::default();
        let limits = Limits {
            hold_depth: options.hold_depth.unwrap_or(limits.hold_depth),
            break_timeout: options.break_timeout.unwrap_or(limits.break_timeout),
            ..limits
        };
        Ok(Debugger {
            unit: Unit::new(nf, limits),
            port: options.port,
            socket,
            peer: [0xff; 6],
            since_socket: 0,
            timer: Timer::new()?,
            timer_at: None,
        })
    }

    /// Ends a break no client has been in touch with for the break timeout (a client
    /// connected to the socket is in touch), and sets the timer for the one that stays.
    fn check_break(&mut self) {
        if self.socket.as_ref().is_some_and(Server::connected) {
            self.unit.touch();
        }
        let deadline = self.unit.break_deadline();
        if deadline.is_none() && self.timer_at.is_none() {
            // Running, no timer set: the common case costs no clock read and no system call.
            return;
        }
        if let Some(released) = self.unit.expire(Instant::now()) {
            eprintln!(
                "debug: no client in touch for the break timeout: the break ended by itself, {released} held packet{} \
                 released (`status` counts such breaks; --break-timeout sets how long)",
                if released == 1 { "" } else { "s" }
            );
        }
        let deadline = self.unit.break_deadline();
        if deadline != self.timer_at {
            self.timer.set(deadline);
            self.timer_at = deadline;
        }
    }

    /// Whether the unit has per-packet work (a break, a watch, a trace).
    #[inline]
    pub fn idle(&self) -> bool {
        self.unit.idle()
    }

    /// The descriptors whose readiness should wake the runner.
    /// Calls `f` with them (no allocation: the runner asks before every wait).
    #[inline]
    pub fn with_wake_fds<R>(&self, f: impl FnOnce(&[BorrowedFd<'_>]) -> R) -> R {
        match &self.socket {
            None => f(&[self.timer.as_fd()]),
            Some(s) => s.with_fds(self.timer.as_fd(), f),
        }
    }

    /// Whether `data` arriving on `port` is a control frame for the unit.
    #[inline]
    pub fn is_control(&self, port: Port, data: &[u8]) -> bool {
        self.port == Some(port) && protocol::payload(data).is_some()
    }

    /// Answers an in-band control frame: the reply frame to send back out of its port.
    pub fn control_frame<N: ?Sized + NetworkFunction>(
        &mut self,
        data: &[u8],
        nf: &mut N,
        stats: &Stats,
    ) -> Option<Vec<u8>> {
        let msg = protocol::payload(data)?;
        self.peer.copy_from_slice(&data[6..12]);
        let reply = self.unit.control(msg, &mut View::new(nf, stats));
        self.check_break();
        Some(in_frame(self.peer, &reply?))
    }

    /// A packet arrives: `Some` to process now, `None` while a break holds it.
    pub fn admit(&mut self, port: Port, data: Vec<u8>) -> Option<(Port, Vec<u8>)> {
        self.unit.admit(port, data)
    }

    /// A packet a `step` or `continue` released.
    #[inline]
    pub fn next_released(&mut self) -> Option<(Port, Vec<u8>)> {
        self.unit.next_released()
    }

    /// After the NF processed a packet (only called when not [`idle`](Debugger::idle)).
    pub fn observe<N: ?Sized + NetworkFunction>(
        &mut self,
        packet_no: u64,
        in_port: Port,
        bytes: &[u8],
        verdict: Verdict,
        took: Duration,
        nf: &mut N,
        stats: &Stats,
    ) {
        let verdict = match verdict {
            Verdict::Drop(r) => TraceVerdict::Drop(r as u8),
            Verdict::Send(mask) => TraceVerdict::Send(mask.0),
        };
        let latency = took.as_nanos().min(u32::MAX as u128) as u32;
        self.unit.observe(&Outcome { packet_no, in_port, bytes, verdict, latency }, &View::new(nf, stats));
    }

    /// Serves the socket: a new client replaces the old one; each whole request is answered.
    /// `force` looks now; otherwise only every [`SOCKET_EVERY`] calls, so a busy runner pays
    /// for the look rarely.
    #[inline]
    /// The break's timeout is checked at the same times.
    pub fn serve_socket<N: ?Sized + NetworkFunction>(&mut self, force: bool, nf: &mut N, stats: &Stats) {
        self.since_socket += 1;
        if force || self.since_socket >= SOCKET_EVERY {
            self.since_socket = 0;
            self.serve_socket_now(nf, stats);
        }
    }

    #[inline(never)]
    fn serve_socket_now<N: ?Sized + NetworkFunction>(&mut self, nf: &mut N, stats: &Stats) {
        if self.timer_at.is_some_and(|at| Instant::now() >= at) {
            // It ran out (and woke the runner): take its expiry, or it stays readable.
            self.timer.clear();
            self.timer_at = None;
        }
        if let Some(socket) = &mut self.socket {
            // A client connected until now was in touch until now, even if this look finds
            // it gone.
            if socket.connected() {
                self.unit.touch();
            }
            for msg in socket.receive() {
                if let Some(reply) = self.unit.control(&msg, &mut View::new(nf, stats)) {
                    socket.send(&reply);
                }
            }
        }
        self.check_break();
    }

    /// Notifications to send: to the socket's client now, and as frames for the management
    /// port (returned, for the runner to transmit).
    pub fn notifications(&mut self) -> Vec<(Port, Vec<u8>)> {
        let notes = self.unit.take_notifications();
        let mut frames = Vec::new();
        for n in notes {
            if let Some(s) = &mut self.socket {
                s.send(&n);
            }
            if let Some(port) = self.port {
                frames.push((port, in_frame(self.peer, &n)));
            }
        }
        frames
    }
}

fn in_frame(dst: [u8; 6], msg: &[u8]) -> Vec<u8> {
    protocol::frame(dst, UNIT_MAC, msg)
}


/// The NF's state, its probes and the runner's counters as the unit sees them, numbered in
/// that order.
struct View<'a> {
    elements: Vec<(&'static str, &'a mut dyn Element)>,
    probes: Option<&'static LocalKey<Probes>>,
    stats: &'a Stats,
}

impl<'a> View<'a> {
    fn new<N: ?Sized + NetworkFunction>(nf: &'a mut N, stats: &'a Stats) -> View<'a> {
        let probes = nf.probes();
        View { elements: nf.elements(), probes, stats }
    }

    fn probe_count(&self) -> usize {
        self.probes.map_or(0, |p| p.with(|p| p.decls().len()))
    }

    /// Probe number `k` if symbol `id` is a probe.
    fn probe(&self, id: u16) -> Option<usize> {
        let k = (id as usize).checked_sub(self.elements.len())?;
        (k < self.probe_count()).then_some(k)
    }

    fn auto(&self, id: u16) -> Option<(usize, u32)> {
        let k = (id as usize).checked_sub(self.elements.len() + self.probe_count())?;
        let size = if k == 3 { 256 } else { self.stats.ports().len() as u32 };
        (k < AUTO_COUNTERS.len()).then_some((k, size))
    }
}

/// The NF's own symbols, as every target's unit numbers them: the state struct's fields, then
/// its probes (the CPU target's automatic counters come after them).
pub fn nf_symbols<N: ?Sized + NetworkFunction>(nf: &mut N) -> Vec<SymbolInfo> {
    let probes = nf.probes();
    state_symbols(&nf.elements(), probes)
}

fn state_symbols(
    elements: &[(&'static str, &mut dyn Element)],
    probes: Option<&'static LocalKey<Probes>>,
) -> Vec<SymbolInfo> {
    let mut out: Vec<SymbolInfo> = elements
        .iter()
        .map(|(name, e)| {
            let key = e.key();
            SymbolInfo {
                kind: e.kind() as u8,
                size: e.size() as u32,
                key_width: key.map_or(0, |k| k.width as u16),
                value_width: e.value().width as u16,
                key_format: key.map_or(0, |k| k.shown as u8),
                value_format: e.value().shown as u8,
                name: name.to_string(),
            }
        })
        .collect();
    if let Some(p) = probes {
        p.with(|p| {
            for d in p.decls() {
                let kind = match d.kind {
                    ProbeKind::Value => SymbolKind::Probe,
                    ProbeKind::Count => SymbolKind::Counter,
                };
                out.push(SymbolInfo {
                    kind: kind.code(),
                    size: 1,
                    key_width: 0,
                    value_width: d.shape.width as u16,
                    key_format: 0,
                    value_format: d.shape.shown as u8,
                    name: d.name.to_string(),
                });
            }
        });
    }
    out
}

fn status(e: EntryError) -> Status {
    match e {
        EntryError::BadIndex => Status::BadIndex,
        EntryError::BadValue => Status::BadValue,
        EntryError::KeyElsewhere => Status::KeyElsewhere,
        EntryError::WrongSet => Status::WrongSet,
        EntryError::ReadOnly => Status::ReadOnly,
    }
}

impl Inspect for View<'_> {
    fn symbols(&self) -> Vec<SymbolInfo> {
        let mut out = state_symbols(&self.elements, self.probes);
        out.extend(auto_counter_symbols(self.stats.ports().len()));
        out
    }

    fn read(&self, id: u16, index: u32) -> Result<Vec<u8>, Status> {
        if let Some((_, e)) = self.elements.get(id as usize) {
            return e.read(index as usize).ok_or(Status::BadIndex);
        }
        if let (Some(k), Some(p)) = (self.probe(id), self.probes) {
            return if index == 0 { Ok(p.with(|p| p.read(k))) } else { Err(Status::BadIndex) };
        }
        let (k, size) = self.auto(id).ok_or(Status::NoSuchSymbol)?;
        if index >= size {
            return Err(Status::BadIndex);
        }
        let port = self.stats.ports().get(index as usize);
        let v = match k {
            0 => port.map_or(0, |p| p.rx_packets),
            1 => port.map_or(0, |p| p.tx_packets),
            2 => port.map_or(0, |p| p.dropped),
            _ => DropReason::from_code(index as u8).map_or(0, |r| self.stats.drops_for(r)),
        };
        Ok(v.to_be_bytes().to_vec())
    }

    fn write(&mut self, id: u16, index: u32, entry: &[u8]) -> Result<(), Status> {
        let automatic = self.auto(id).is_some();
        if let (Some(k), Some(p)) = (self.probe(id), self.probes) {
            // A count is the NF's counter; a value probe only the NF writes.
            return match p.with(|p| p.decls()[k].kind) {
                ProbeKind::Value => Err(Status::ReadOnly),
                ProbeKind::Count if index != 0 => Err(Status::BadIndex),
                ProbeKind::Count => p.with(|p| p.write_count(k, entry)).then_some(()).ok_or(Status::BadValue),
            };
        }
        match self.elements.get_mut(id as usize) {
            Some((_, e)) => e.write(index as usize, entry).map_err(status),
            None if automatic => Err(Status::ReadOnly),
            None => Err(Status::NoSuchSymbol),
        }
    }

    fn lookup(&self, id: u16, key: &[u8]) -> Result<(u32, Vec<u8>), Status> {
        let (_, e) = self.elements.get(id as usize).ok_or(Status::BadValue)?;
        if e.key().is_none() {
            return Err(Status::BadValue);
        }
        let index = e.find(key).ok_or(Status::NoSuchKey)?;
        Ok((index as u32, e.read(index).ok_or(Status::BadIndex)?))
    }

    fn reset(&mut self, id: u16) -> Result<(), Status> {
        if let (Some(k), Some(p)) = (self.probe(id), self.probes) {
            return match p.with(|p| p.write_count(k, &[0; 8])) {
                true => Ok(()),
                false => Err(Status::BadValue),
            };
        }
        match self.elements.get_mut(id as usize) {
            Some((_, e)) => e.reset().then_some(()).ok_or(Status::BadValue),
            None => Err(Status::ReadOnly),
        }
    }
}

/// `emu dbg`'s way to a unit over its Unix socket: each message after its length (u16,
/// big-endian).
pub struct SocketTransport {
    stream: UnixStream,
    buf: Vec<u8>,
}

impl SocketTransport {
    /// Connects to a run's `--debug-socket`.
    pub fn connect(path: &Path) -> std::io::Result<SocketTransport> {
        Ok(SocketTransport { stream: UnixStream::connect(path)?, buf: Vec::new() })
    }
}

impl Transport for SocketTransport {
    fn send(&mut self, msg: &[u8]) -> std::io::Result<()> {
        let mut framed = (msg.len() as u16).to_be_bytes().to_vec();
        framed.extend_from_slice(msg);
        self.stream.write_all(&framed)
    }

    fn recv(&mut self, timeout: Duration) -> std::io::Result<Option<Vec<u8>>> {
        let deadline = Instant::now() + timeout;
        loop {
            if self.buf.len() >= 2 {
                let len = u16::from_be_bytes([self.buf[0], self.buf[1]]) as usize;
                if self.buf.len() >= 2 + len {
                    return Ok(Some(self.buf.drain(..2 + len).skip(2).collect()));
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.stream.set_read_timeout(Some(left))?;
            let mut chunk = [0u8; 4096];
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err(std::io::Error::new(ErrorKind::UnexpectedEof, "the run closed the debug socket")),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return Ok(None),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// `emu dbg`'s way to a unit in band: control frames on an interface linked to the
/// management port, to the broadcast address, from the interface's MAC.
pub struct FrameTransport(pub EtherSocket);

impl Transport for FrameTransport {
    fn send(&mut self, msg: &[u8]) -> std::io::Result<()> {
        let f = protocol::frame([0xff; 6], self.0.mac, msg);
        self.0.send(&f).map_err(|e| std::io::Error::other(e.to_string()))
    }

    fn recv(&mut self, timeout: Duration) -> std::io::Result<Option<Vec<u8>>> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(f) = self.0.receive(left).map_err(|e| std::io::Error::other(e.to_string()))? else {
                return Ok(None);
            };
            if let Some(msg) = protocol::payload(&f) {
                return Ok(Some(msg.to_vec()));
            }
        }
    }
}

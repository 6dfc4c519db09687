//! The hardware debug unit's register map, and [`HwUnit`]: the protocol served over those
//! registers, for a host that reaches the unit's register port (the Verilator model's port, or
//! the SUME's AXI4-Lite through the driver).
//!
//! The hardware does the work — it holds frames at the NF's input, steps them, writes state
//! only between frames, compares watched values after each frame — and `HwUnit` turns messages
//! into register reads and writes: no packet passes through the host. The register map is
//! documented in emu-hls's `backend/debug.rs`, which generates the unit from these constants.
//!
//! `Array` elements are read and written between frames; table slots (`Cam`, `Lru`, `Tcam`,
//! `HashTable`) and a `Queue`'s places are read at any time, and table slots written between
//! frames. Tables in registers (`Cam`, `Lru`, `Tcam`) are read slot by slot; a `lookup` reads
//! them in slot order, and a table in sets only the ways of the key's set. Trace records and
//! the frame a recording watch keeps carry the frame's first [`TRACE_SNAP`] bytes at most; a
//! record's latency is in cycles (the CPU's: ns). It holds [`HOLD_DEPTH`] frames on `break` in
//! front of the NF's ingress (so control frames for the in-band path pass them); as on the
//! CPU, a frame that finds them full passes through the NF, counted, and `hold_full` is said
//! once until `continue`.

use crate::client::Transport;
use crate::protocol::{
    decode, encode, CounterValue, Hello, Message, Notification, Reply, Request, Status, SymbolInfo, SymbolKind,
    TraceVerdict, UnitStatus, WatchInfo, WatchOp, ANY_SLOT, DEFAULT_SNAP,
};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The ID register's value: "EMUD".
pub const ID: u32 = 0x454d_5544;
/// The hardware's watchpoint comparators.
pub const WATCH_SLOTS: usize = 4;
/// Trace records the hardware buffers between two looks of the host.
pub const TRACE_DEPTH: u16 = 8;
/// Bytes of each frame a hardware trace record or recording watch keeps: a longer snap length
/// gets these.
pub const TRACE_SNAP: u16 = crate::protocol::DEFAULT_SNAP;
/// Frames the hardware holds on `break` (its hold buffer, in front of the NF's ingress).
pub const HOLD_DEPTH: u16 = 4;
/// Words of the staging register: values of up to 256 bits.
pub const DATA_WORDS: usize = 8;
/// Each symbol's address window (1 KB): symbol `n` at `SYMBOL_STRIDE * (n + 1)`, so 58 symbols fit
/// the 60 KB the SUME wrapper gives the unit (its 64 KB window after its own registers).
pub const SYMBOL_STRIDE: u32 = 0x400;

/// Register addresses (bytes).
#[allow(missing_docs)]
pub mod reg {
    pub const ID: u32 = 0x000;
    pub const CAPS: u32 = 0x004;
    pub const CONTROL: u32 = 0x008;
    pub const STEP: u32 = 0x00c;
    pub const STATUS: u32 = 0x010;
    pub const PACKETS: u32 = 0x014;
    pub const RESULT: u32 = 0x018;
    /// Frames that passed through the NF at a break because the hold buffer was full (since
    /// the reset).
    pub const HOLD_PASSED: u32 = 0x01c;
    /// Frames that have left the hold buffer (since the reset): released by `step` or
    /// `continue`.
    pub const RELEASED: u32 = 0x074;
    /// The frames the last `continue` (a CONTROL write of 0) released: those held then.
    pub const GRANTED: u32 = 0x078;
    /// The watchdog: cycles a break lasts with no register access before the unit continues
    /// by itself (0: never), and the breaks it ended so.
    pub const BREAK_TIMEOUT: u32 = 0x07c;
    /// The target's own counters (32 bits each): frames in, out and dropped on port k at
    /// `+ 4 k`, and drops for reason code INDEX (INDEX < AUTO_DROP_CODES) at AUTO_DROPS.
    pub const AUTO_RX: u32 = 0x300;
    pub const AUTO_TX: u32 = 0x310;
    pub const AUTO_DROPPED: u32 = 0x320;
    pub const AUTO_DROPS: u32 = 0x340;
    pub const AUTO_DROP_CODES: u32 = 32;
    pub const BREAKS_TIMED_OUT: u32 = 0x05c;
    /// A STEP write with this bit sets the credits (0 withdraws them) instead of adding.
    pub const STEP_SET: u32 = 1 << 31;
    pub const DATA: u32 = 0x020;
    pub const COMMIT: u32 = 0x040;
    /// COMMIT of a table slot: the slot becomes valid (else empty).
    pub const COMMIT_VALID: u32 = 1 << 16;
    /// A table entry's value, and a TCAM rule's mask, staged for COMMIT (DATA holds the key).
    pub const DATA2: u32 = 0x0c0;
    pub const DATA3: u32 = 0x0e0;
    pub const INDEX: u32 = 0x044;
    /// Trace: bit 0 on; the records waiting; records lost to a full FIFO (cleared by a
    /// write); a write pops the oldest record, shown at TR_*.
    pub const TRACE: u32 = 0x048;
    pub const TRACE_COUNT: u32 = 0x04c;
    pub const TRACE_LOST: u32 = 0x050;
    pub const TRACE_POP: u32 = 0x054;
    /// Write an array's symbol: its element INDEX, read between frames, shows at T_VALUE.
    pub const FETCH: u32 = 0x058;
    pub const TR_PACKET: u32 = 0x060;
    /// `[7:0]` input port, `[8]` 1 sent, 0 dropped.
    pub const TR_META: u32 = 0x064;
    /// The drop reason's code, or the output port mask.
    pub const TR_DETAIL: u32 = 0x068;
    /// Cycles from the frame's first beat in to its verdict.
    pub const TR_LATENCY: u32 = 0x06c;
    pub const TR_LEN: u32 = 0x070;
    /// The oldest record's first [`TRACE_SNAP`](super::TRACE_SNAP) bytes of its frame as it
    /// arrived, 4 a word, the first in bits 7:0 (0 past the frame's end).
    pub const TR_BYTES: u32 = 0x200;
    /// Per watch slot s, at `+ 4 s`: the frame its last hit came after, `[7:0]` its input port,
    /// `[31:16]` its length.
    pub const W_FRAME: u32 = 0x240;
    /// The first bytes of the frame watch slot INDEX last fired after, as [`TR_BYTES`].
    pub const W_BYTES: u32 = 0x280;
    /// A table's registers, from its symbol's window, at slot INDEX.
    pub const T_VALID: u32 = 0x000;
    pub const T_KEY: u32 = 0x100;
    pub const T_VALUE: u32 = 0x200;
    pub const T_MASK: u32 = 0x300;
    /// A `HashTable`'s or an `Lru` in sets' ways (slot `s × WAYS + w` is way `w` of set `s`);
    /// 0 for other tables.
    pub const T_WAYS: u32 = 0x3fc;
    pub const WATCH: u32 = 0x100;
    pub const WATCH_STRIDE: u32 = 0x20;
    pub const W_SYM: u32 = 0x00;
    pub const W_OP: u32 = 0x04;
    pub const W_OPERAND: u32 = 0x08;
    pub const W_HITS: u32 = 0x10;
    pub const W_PACKET: u32 = 0x14;
    pub const W_VALUE: u32 = 0x18;
    /// STATUS bits: broken; frames held; nothing moves (the core idle, the ingress empty, no
    /// frame coming into the hold buffer or leaving it: held ones at rest); a frame passed the
    /// full hold buffer since the last `continue`; `[15:8]` the frames held.
    pub const BROKEN: u32 = 1;
    pub const HELD: u32 = 2;
    pub const EMPTY: u32 = 4;
    pub const FULL: u32 = 8;
    pub const HELD_SHIFT: u32 = 8;

    /// The frames held, from a STATUS word.
    pub fn held(status: u32) -> u16 {
        (status >> HELD_SHIFT) as u8 as u16
    }
    /// WATCH[s].SYM: armed.
    pub const ARMED: u32 = 1 << 31;
    /// WATCH[s].SYM: a hit carries its frame to the client (the hardware keeps the frame of
    /// every slot's last hit; the bit is there for the next session to read).
    pub const RECORD: u32 = 1 << 30;

    /// Word `k` (least significant first) of symbol `n`'s value.
    pub fn symbol(n: usize, k: usize) -> u32 {
        super::SYMBOL_STRIDE * (n as u32 + 1) + 4 * k as u32
    }

    /// Register `off` of table symbol `n`'s window.
    pub fn table(n: usize, off: u32) -> u32 {
        super::SYMBOL_STRIDE * (n as u32 + 1) + off
    }

    /// Register `off` of watch slot `s`.
    pub fn watch(s: usize, off: u32) -> u32 {
        WATCH + WATCH_STRIDE * s as u32 + off
    }
}

/// The unit's register port, as the host reaches it.
pub trait Registers {
    /// The word at `addr`.
    fn read(&mut self, addr: u32) -> u32;
    /// Writes `value` to `addr`.
    fn write(&mut self, addr: u32, value: u32);
    /// Lets the hardware run a while: until its step credits are used, or no frame has come
    /// for long enough that none is waiting.
    fn settle(&mut self);
    /// What made an access fail since the last call (a register port that can fail, as one
    /// reached over the network, reads 0 then); `None` for one that cannot.
    fn take_error(&mut self) -> Option<String> {
        None
    }
}

/// Reads `regs` until its step credits are used, or [`reg::PACKETS`] has not moved for
/// `quiet` looks (each two reads): what [`Registers::settle`] does over a register port that
/// runs on its own. (A port that failed reads 0: no credits; its error stays for the caller.)
pub fn wait_for_credits(regs: &mut dyn Registers, quiet: u32) {
    let mut last = regs.read(reg::PACKETS);
    let mut since = 0;
    while since < quiet && regs.read(reg::STEP) != 0 {
        let now = regs.read(reg::PACKETS);
        since = if now == last { since + 1 } else { 0 };
        last = now;
    }
}

/// Looks at the registers [`wait_for_credits`] takes before deciding no frame is coming.
pub const QUIET_LOOKS: u32 = 1000;

/// A hardware unit's registers reached in band: each access a `reg_read` or `reg_write`
/// request over `transport`, to the management port of hardware built with `--debug-port`.
/// An access that gets no answer reads 0, and the link keeps what went wrong for
/// [`Registers::take_error`] (and fails every access until it is taken).
pub struct InBandRegisters<T: Transport> {
    transport: T,
    seq: u32,
    error: Option<String>,
    /// Notifications from the wire (the hardware sends none in band; kept, not lost).
    pending: Vec<Notification>,
}

impl<T: Transport> InBandRegisters<T> {
    /// Registers over `transport`, the requests numbered from `first_seq`.
    pub fn new(transport: T, first_seq: u32) -> InBandRegisters<T> {
        InBandRegisters { transport, seq: first_seq, error: None, pending: vec![] }
    }

    /// The transport.
    pub fn transport(&mut self) -> &mut T {
        &mut self.transport
    }

    fn ask(&mut self, request: Request) -> Option<Reply> {
        if self.error.is_some() {
            return None;
        }
        self.seq = self.seq.wrapping_add(1);
        match crate::client::exchange(&mut self.transport, self.seq, request, &mut self.pending) {
            Ok(reply) => Some(reply),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }
}

impl<T: Transport> Registers for InBandRegisters<T> {
    fn read(&mut self, addr: u32) -> u32 {
        match self.ask(Request::RegRead { addr }) {
            Some(Reply::Entry(e)) if e.len() == 4 => u32::from_be_bytes([e[0], e[1], e[2], e[3]]),
            Some(other) => {
                self.error = Some(format!("reg_read 0x{addr:x}: the unit answered {other:?}"));
                0
            }
            None => 0,
        }
    }

    fn write(&mut self, addr: u32, value: u32) {
        self.ask(Request::RegWrite { addr, value });
    }

    fn settle(&mut self) {
        wait_for_credits(self, QUIET_LOOKS);
    }

    fn take_error(&mut self) -> Option<String> {
        self.error.take()
    }
}

/// The protocol served on this host by a [`HwUnit`] over `regs`, as a [`Transport`] for the
/// client: for hardware whose unit answers only register accesses (in band:
/// [`InBandRegisters`]). Notifications come from polling the unit while the client waits.
pub struct LocalUnit<R: Registers> {
    unit: HwUnit,
    regs: R,
    outbox: VecDeque<Vec<u8>>,
}

/// How often a [`LocalUnit`] polls the unit for notifications while the client waits.
const POLL_EVERY: Duration = Duration::from_millis(10);

impl<R: Registers> LocalUnit<R> {
    /// `unit` served over `regs`.
    pub fn new(unit: HwUnit, regs: R) -> LocalUnit<R> {
        LocalUnit { unit, regs, outbox: VecDeque::new() }
    }

    fn failed(&mut self) -> std::io::Result<()> {
        match self.regs.take_error() {
            Some(e) => Err(std::io::Error::other(e)),
            None => Ok(()),
        }
    }
}

impl<R: Registers> Transport for LocalUnit<R> {
    fn send(&mut self, msg: &[u8]) -> std::io::Result<()> {
        if let Some(reply) = self.unit.control(msg, &mut self.regs) {
            self.outbox.push_back(reply);
        }
        self.failed()
    }

    fn recv(&mut self, timeout: Duration) -> std::io::Result<Option<Vec<u8>>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(m) = self.outbox.pop_front() {
                return Ok(Some(m));
            }
            let notes = self.unit.poll(&mut self.regs);
            self.failed()?;
            self.outbox.extend(notes);
            if !self.outbox.is_empty() {
                continue;
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return Ok(None);
            };
            std::thread::sleep(left.min(POLL_EVERY));
        }
    }
}

/// Times a `write` is retried while the core is busy with a frame.
const BUSY_RETRIES: usize = 64;

/// The protocol over a hardware unit's registers.
pub struct HwUnit {
    nf: String,
    /// The NF's symbols (state fields, then probes: the hardware's), then the target's own
    /// counters ([`crate::unit::AUTO_COUNTERS`]).
    symbols: Vec<SymbolInfo>,
    /// How many of `symbols` are the NF's.
    nf_symbols: usize,
    last_seq: Option<u32>,
    /// Per slot: what it is armed on.
    watches: [Option<Watched>; WATCH_SLOTS],
    notes: u32,
    hits: u32,
    /// The trace's snap length while it is on.
    trace_snap: Option<u16>,
    /// `hold_full` was sent since the last `continue`.
    full_said: bool,
    /// When a client was last in touch, how long a break outlives that, and the breaks this
    /// host ended so (as the CPU's unit: [`crate::unit::Limits::break_timeout`]).
    last_contact: Instant,
    break_timeout: Duration,
    breaks_timed_out: u32,
    /// BREAK_TIMEOUT to set at each session's hello: the unit's own watchdog, for a host
    /// that is the client itself (in band) and so cannot outlive it.
    watchdog: Option<u32>,
}

/// A watch slot's symbol, the hits seen so far, and whether a hit records its frame.
#[derive(Clone, Copy)]
struct Watched {
    id: u16,
    hits: u64,
    record: bool,
}

/// The first `len` (at most [`TRACE_SNAP`]) bytes of a frame the unit kept, from the words at
/// `base`.
fn frame_bytes(regs: &mut dyn Registers, base: u32, len: usize) -> Vec<u8> {
    let n = len.min(TRACE_SNAP as usize);
    let words: Vec<u32> = (0..n.div_ceil(4) as u32).map(|k| regs.read(base + 4 * k)).collect();
    words.into_iter().flat_map(u32::to_le_bytes).take(n).collect()
}

/// A table that may be in block RAM (a `HashTable`, an `Lru` in sets), read and written a
/// cycle after INDEX names its slot.
fn in_block_ram(s: &SymbolInfo) -> bool {
    s.kind == SymbolKind::HashTable.code() || s.kind == SymbolKind::Lru.code()
}

fn value_bytes(s: &SymbolInfo) -> usize {
    (s.value_width as usize).div_ceil(8)
}

/// Writes big-endian `bytes` as the words of a staging register at `base` (word 0 least
/// significant), every word of it.
fn stage(regs: &mut dyn Registers, base: u32, bytes: &[u8]) {
    let mut padded = vec![0u8; 4 * DATA_WORDS - bytes.len()];
    padded.extend_from_slice(bytes);
    for k in 0..DATA_WORDS {
        let at = 4 * (DATA_WORDS - 1 - k);
        regs.write(base + 4 * k as u32, u32::from_be_bytes(padded[at..at + 4].try_into().expect("4 bytes")));
    }
}

/// A `w`-bit value read as words from `base` on (word 0 least significant), as
/// `ceil(w / 8)` big-endian bytes.
fn words_be(regs: &mut dyn Registers, base: u32, w: u16) -> Vec<u8> {
    let words: Vec<u32> = (0..(w as u32).div_ceil(32)).map(|k| regs.read(base + 4 * k)).collect();
    let be: Vec<u8> = words.iter().rev().flat_map(|w| w.to_be_bytes()).collect();
    be[be.len() - (w as usize).div_ceil(8)..].to_vec()
}

/// A table whose slots the hardware unit reads (kept in registers, or a hash table's block RAM
/// through a second port).
fn table(s: &SymbolInfo) -> bool {
    [SymbolKind::Cam, SymbolKind::Lru, SymbolKind::Tcam, SymbolKind::HashTable].iter().any(|k| k.code() == s.kind)
}

/// A register or counter: the symbols whose value the hardware unit reads and writes.
fn scalar(s: &SymbolInfo) -> bool {
    [SymbolKind::Register, SymbolKind::Counter, SymbolKind::Probe].iter().any(|k| k.code() == s.kind)
}

impl HwUnit {
    /// A unit for the NF `nf` whose symbols (state fields, then probes, numbered as in
    /// `symbols.json`) are `symbols`.
    pub fn new(nf: &str, mut symbols: Vec<SymbolInfo>) -> HwUnit {
        let nf_symbols = symbols.len();
        symbols.extend(crate::unit::auto_counter_symbols(4));
        HwUnit {
            nf: nf.into(),
            symbols,
            nf_symbols,
            last_seq: None,
            watches: [None; WATCH_SLOTS],
            notes: 0,
            hits: 0,
            trace_snap: None,
            full_said: false,
            last_contact: Instant::now(),
            break_timeout: crate::unit::BREAK_TIMEOUT,
            breaks_timed_out: 0,
            watchdog: None,
        }
    }

    /// Sets the hardware's watchdog to `cycles` at each session's `hello`: a break no host
    /// touches (no register access) for that long ends by itself, even with no host left.
    pub fn with_watchdog(mut self, cycles: u32) -> HwUnit {
        self.watchdog = Some(cycles);
        self
    }

    /// The NF's ports (at most the hardware's 4): the per-port counters' size, as on the CPU.
    pub fn with_ports(mut self, ports: usize) -> HwUnit {
        self.symbols.truncate(self.nf_symbols);
        self.symbols.extend(crate::unit::auto_counter_symbols(ports.min(4)));
        self
    }

    /// How long a break outlives the last client in touch (default
    /// [`BREAK_TIMEOUT`](crate::unit::BREAK_TIMEOUT)).
    pub fn with_break_timeout(mut self, timeout: Duration) -> HwUnit {
        self.break_timeout = timeout;
        self
    }

    /// A client is in touch now (connected): the break's timeout starts again.
    pub fn touch(&mut self) {
        self.last_contact = Instant::now();
    }

    /// Ends a break (as `continue`) when no client has been in touch for the break timeout:
    /// the frames it released, or `None` if there was no break or it stays.
    pub fn expire(&mut self, now: Instant, regs: &mut dyn Registers) -> Option<u16> {
        if now < self.last_contact + self.break_timeout || regs.read(reg::CONTROL) & 1 == 0 {
            return None;
        }
        self.breaks_timed_out += 1;
        Some(self.resume(regs))
    }

    /// What `continue` does: the frames held get a credit each, used as they leave; waits for
    /// them. The frames released.
    fn resume(&mut self, regs: &mut dyn Registers) -> u16 {
        regs.write(reg::CONTROL, 0);
        let released = regs.read(reg::GRANTED) as u16;
        regs.settle();
        self.full_said = false;
        released
    }

    /// Whether a trace is on: the host should then poll often enough that the hardware's
    /// [`TRACE_DEPTH`] records do not overflow (a frame takes tens of cycles).
    pub fn tracing(&self) -> bool {
        self.trace_snap.is_some()
    }

    /// Checks that the hardware is a debug unit with these symbols: `Err` says what differs.
    pub fn check(&self, regs: &mut dyn Registers) -> Result<(), String> {
        let id = regs.read(reg::ID);
        if id != ID {
            return Err(format!("no debug unit answers (ID reads 0x{id:08x}, not 0x{ID:08x}): build with the unit"));
        }
        let n = regs.read(reg::CAPS) & 0xffff;
        if n as usize != self.nf_symbols {
            return Err(format!("the hardware has {n} symbols, the NF {}: rebuild the hardware", self.nf_symbols));
        }
        Ok(())
    }

    /// Answers a request (encoded, without the Ethernet header): the encoded reply, or `None`
    /// for a message that is not a request.
    pub fn control(&mut self, bytes: &[u8], regs: &mut dyn Registers) -> Option<Vec<u8>> {
        let (seq, request) = match decode(bytes) {
            Ok(Message::Request { seq, request }) => (seq, request),
            Ok(_) => return None,
            Err(e) => return e.reply(),
        };
        let opcode = request.opcode().code();
        self.last_contact = Instant::now();
        if self.last_seq == Some(seq) {
            return Some(encode(&Message::Reply { seq, opcode, status: Status::Duplicate, reply: Reply::Empty }));
        }
        self.last_seq = Some(seq);
        let (status, reply) = match self.execute(request, regs) {
            Ok(reply) => (Status::Ok, reply),
            Err(status) => (status, Reply::Empty),
        };
        Some(encode(&Message::Reply { seq, opcode, status, reply }))
    }

    /// Trace records and watch hits since the last call, as notification messages
    /// (encoded).
    pub fn poll(&mut self, regs: &mut dyn Registers) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let status = regs.read(reg::STATUS);
        // (The hardware's bit clears at any continue, this unit's or another host's.)
        if status & reg::FULL == 0 {
            self.full_said = false;
        }
        if status & reg::FULL != 0 && !self.full_said {
            self.full_said = true;
            let notification = Notification::HoldFull { held: reg::held(status) };
            out.push(encode(&Message::Notification { seq: self.notes, notification }));
            self.notes += 1;
        }
        if let Some(snap) = self.trace_snap {
            for _ in 0..regs.read(reg::TRACE_COUNT) {
                let meta = regs.read(reg::TR_META);
                let detail = regs.read(reg::TR_DETAIL);
                let len = regs.read(reg::TR_LEN) as u16;
                let notification = Notification::Trace {
                    packet_no: regs.read(reg::TR_PACKET) as u64,
                    in_port: meta as u8,
                    verdict: if meta & 0x100 != 0 {
                        TraceVerdict::Send(detail)
                    } else {
                        TraceVerdict::Drop(detail as u8)
                    },
                    latency: regs.read(reg::TR_LATENCY),
                    len,
                    bytes: frame_bytes(regs, reg::TR_BYTES, len.min(snap) as usize),
                };
                regs.write(reg::TRACE_POP, 1);
                out.push(encode(&Message::Notification { seq: self.notes, notification }));
                self.notes += 1;
            }
        }
        for slot in 0..WATCH_SLOTS {
            let Some(Watched { id, hits: seen, record }) = self.watches[slot] else { continue };
            let hits = regs.read(reg::watch(slot, reg::W_HITS)) as u64;
            if hits == seen {
                continue;
            }
            self.watches[slot] = Some(Watched { id, hits, record });
            self.hits += 1;
            let packet_no = regs.read(reg::watch(slot, reg::W_PACKET)) as u64;
            let value = regs.read(reg::watch(slot, reg::W_VALUE)) as u64
                | (regs.read(reg::watch(slot, reg::W_VALUE + 4)) as u64) << 32;
            let n = value_bytes(&self.symbols[id as usize]);
            let value = value.to_be_bytes()[8 - n..].to_vec();
            // The frame, cut as the CPU cuts it: to the trace's snap length, if one is on.
            let packet = record.then(|| {
                let frame = regs.read(reg::W_FRAME + 4 * slot as u32);
                let len = ((frame >> 16) as u16).min(self.trace_snap.unwrap_or(DEFAULT_SNAP));
                regs.write(reg::INDEX, slot as u32);
                (frame as u8, frame_bytes(regs, reg::W_BYTES, len as usize))
            });
            let notification = Notification::WatchHit { slot: slot as u8, id, index: 0, packet_no, value, packet };
            out.push(encode(&Message::Notification { seq: self.notes, notification }));
            self.notes += 1;
        }
        out
    }

    fn symbol(&self, id: u16) -> Result<&SymbolInfo, Status> {
        self.symbols.get(id as usize).ok_or(Status::NoSuchSymbol)
    }

    /// Entry `index` of one of the target's own counters, as the CPU's 64 bits.
    fn read_auto(&self, id: u16, index: u32, regs: &mut dyn Registers) -> Result<Vec<u8>, Status> {
        let s = self.symbol(id)?;
        if index >= s.size {
            return Err(Status::BadIndex);
        }
        let v = match id as usize - self.nf_symbols {
            // (The hardware counts the codes below AUTO_DROP_CODES: every reason's.)
            3 if index >= reg::AUTO_DROP_CODES => 0,
            3 => {
                regs.write(reg::INDEX, index);
                regs.read(reg::AUTO_DROPS)
            }
            k => regs.read([reg::AUTO_RX, reg::AUTO_TX, reg::AUTO_DROPPED][k] + 4 * index),
        };
        Ok((v as u64).to_be_bytes().to_vec())
    }

    /// A register's or counter's value, big-endian.
    fn read_value(&self, id: u16, regs: &mut dyn Registers) -> Result<Vec<u8>, Status> {
        let s = self.symbol(id)?;
        if !scalar(s) {
            return Err(Status::Unsupported);
        }
        Ok(words_be(regs, reg::symbol(id as usize, 0), s.value_width))
    }

    /// Entry `index` of a table in registers (`Cam`, `Lru`, `Tcam`), laid out as the CPU's:
    /// `valid`, then key and value (a TCAM: value, mask, result), zeros in an empty slot.
    fn read_entry(&self, id: u16, index: u32, regs: &mut dyn Registers) -> Result<Vec<u8>, Status> {
        let s = self.symbol(id)?;
        let tcam = s.kind == SymbolKind::Tcam.code();
        if !table(s) {
            return Err(Status::Unsupported);
        }
        if index >= s.size {
            return Err(Status::BadIndex);
        }
        regs.write(reg::INDEX, index);
        let valid_at = reg::table(id as usize, reg::T_VALID);
        if in_block_ram(s) {
            // A table in block RAM shows slot INDEX a cycle after INDEX names it: one read
            // gives it that cycle.
            regs.read(valid_at);
        }
        let valid = regs.read(valid_at) & 1 != 0;
        let mut fields = vec![(reg::T_KEY, s.key_width), (reg::T_VALUE, s.value_width)];
        if tcam {
            fields.insert(1, (reg::T_MASK, s.key_width));
        }
        let mut out = vec![valid as u8];
        for (off, w) in fields {
            let v = words_be(regs, reg::table(id as usize, off), w);
            out.extend(if valid { v } else { vec![0; v.len()] });
        }
        Ok(out)
    }

    /// The first slot of table `id` holding `key` (a TCAM: whose rule matches it), by reading
    /// the slots in order.
    fn find(&self, id: u16, key: &[u8], regs: &mut dyn Registers) -> Result<(u32, Vec<u8>), Status> {
        let s = self.symbol(id)?;
        if !table(s) {
            return Err(Status::BadValue);
        }
        let kb = (s.key_width as usize).div_ceil(8);
        if key.len() != kb {
            return Err(Status::NoSuchKey);
        }
        let tcam = s.kind == SymbolKind::Tcam.code();
        for index in self.key_slots(id, key, regs)? {
            let e = self.read_entry(id, index, regs)?;
            let hit = e[0] == 1
                && if tcam {
                    let (value, mask) = (&e[1..1 + kb], &e[1 + kb..1 + 2 * kb]);
                    (0..kb).all(|i| key[i] & mask[i] == value[i] & mask[i])
                } else {
                    &e[1..1 + kb] == key
                };
            if hit {
                return Ok((index, e));
            }
        }
        Err(Status::NoSuchKey)
    }

    /// The slots of table `id` where `key` can be: a hash table's or an LRU in sets', the ways
    /// of the set its CRC-32 picks (as the hardware and the CPU place it; a table without
    /// T_WAYS is one set), so a lookup reads those alone; every slot of another table.
    fn key_slots(&self, id: u16, key: &[u8], regs: &mut dyn Registers) -> Result<std::ops::Range<u32>, Status> {
        let s = self.symbol(id)?;
        if !in_block_ram(s) {
            return Ok(0..s.size);
        }
        let ways = match regs.read(reg::table(id as usize, reg::T_WAYS)) {
            0 => s.size,
            ways => ways,
        };
        let set = emu_core::state::crc32(key) & (s.size / ways - 1);
        Ok(set * ways..(set + 1) * ways)
    }

    /// The value `index` places from a queue's front (0 past its length), read through the
    /// queue's second RAM port at any time.
    fn read_place(&self, id: u16, index: u32, regs: &mut dyn Registers) -> Result<Vec<u8>, Status> {
        let s = self.symbol(id)?;
        if index >= s.size {
            return Err(Status::BadIndex);
        }
        regs.write(reg::INDEX, index);
        // Whether the queue holds that many values; reading it also gives the RAM the cycle
        // the value takes to follow INDEX.
        let held = regs.read(reg::table(id as usize, reg::T_VALID)) & 1 != 0;
        let value = words_be(regs, reg::table(id as usize, reg::T_VALUE), s.value_width);
        Ok(if held { value } else { vec![0; value.len()] })
    }

    /// Element `index` of an array, read between frames.
    fn read_element(&self, id: u16, index: u32, regs: &mut dyn Registers) -> Result<Vec<u8>, Status> {
        let s = self.symbol(id)?;
        if index >= s.size {
            return Err(Status::BadIndex);
        }
        regs.write(reg::INDEX, index);
        Self::until_idle(regs, reg::FETCH, id as u32)?;
        Ok(words_be(regs, reg::table(id as usize, reg::T_VALUE), s.value_width))
    }

    /// Writes `command` ← `id` until the core is idle to take it: the command's RESULT.
    fn until_idle(regs: &mut dyn Registers, command: u32, value: u32) -> Result<(), Status> {
        for _ in 0..BUSY_RETRIES {
            regs.write(command, value);
            match regs.read(reg::RESULT) {
                0 => return Ok(()),
                12 => regs.settle(),
                code => return Err(Status::from_code(code as u8).unwrap_or(Status::Unsupported)),
            }
        }
        Err(Status::Busy)
    }

    /// Writes a register or counter, or (with `index`) an array's element.
    fn write_value(&self, id: u16, value: &[u8], regs: &mut dyn Registers) -> Result<(), Status> {
        self.write_at(id, 0, value, regs)
    }

    fn write_at(&self, id: u16, index: u32, value: &[u8], regs: &mut dyn Registers) -> Result<(), Status> {
        let s = self.symbol(id)?;
        let array = s.kind == SymbolKind::Array.code();
        if [SymbolKind::Probe, SymbolKind::Queue, SymbolKind::AutoCounter].iter().any(|k| k.code() == s.kind) {
            return Err(Status::ReadOnly);
        }
        if !scalar(s) && !array {
            return Err(Status::Unsupported);
        }
        if index >= s.size.max(1) {
            return Err(Status::BadIndex);
        }
        let w = s.value_width as usize;
        let above = (value.len() * 8).saturating_sub(w);
        if value.len() != value_bytes(s) || (above > 0 && value[0] >> (8 - above) != 0) {
            return Err(Status::BadValue);
        }
        stage(regs, reg::DATA, value);
        if array {
            regs.write(reg::INDEX, index);
        }
        Self::until_idle(regs, reg::COMMIT, id as u32)
    }

    /// Writes slot `index` of a table as the CPU's debugger write does: an entry (`valid`, key,
    /// value; a TCAM: `valid`, value, mask, result) with bits above a width, a key another slot
    /// holds (a CAM, an LRU; a table in sets: another way of its set) or a key whose CRC-32
    /// picks another set than the slot's, is refused. An LRU's entry written becomes its most recently
    /// used (the hardware moves the ages); a hash table's pointers do not move.
    fn write_entry(&self, id: u16, index: u32, entry: &[u8], regs: &mut dyn Registers) -> Result<(), Status> {
        let s = self.symbol(id)?;
        let tcam = s.kind == SymbolKind::Tcam.code();
        if !table(s) {
            return Err(Status::Unsupported);
        }
        if index >= s.size {
            return Err(Status::BadIndex);
        }
        let (kb, vb) = ((s.key_width as usize).div_ceil(8), value_bytes(s));
        let fields: Vec<(u32, u16)> = if tcam {
            vec![(reg::DATA, s.key_width), (reg::DATA3, s.key_width), (reg::DATA2, s.value_width)]
        } else {
            vec![(reg::DATA, s.key_width), (reg::DATA2, s.value_width)]
        };
        if entry.len() != 1 + if tcam { 2 * kb } else { kb } + vb || entry[0] > 1 {
            return Err(Status::BadValue);
        }
        let valid = entry[0] == 1;
        let mut at = 1;
        let mut parts = vec![];
        for &(_, w) in &fields {
            let n = (w as usize).div_ceil(8);
            let part = &entry[at..at + n];
            let above = n * 8 - w as usize;
            if valid && above > 0 && part[0] >> (8 - above) != 0 {
                return Err(Status::BadValue);
            }
            parts.push(part);
            at += n;
        }
        // The slots the key may not be in already; a key of a table in sets lives in its set
        // alone, so the slot must be one of its ways.
        let others = self.key_slots(id, parts[0], regs)?;
        if valid && !others.contains(&index) {
            return Err(Status::WrongSet);
        }
        if valid && !tcam {
            for other in others.filter(|&i| i != index) {
                let e = self.read_entry(id, other, regs)?;
                if e[0] == 1 && &e[1..1 + kb] == parts[0] {
                    return Err(Status::KeyElsewhere);
                }
            }
        }
        for (&(base, _), part) in fields.iter().zip(&parts) {
            stage(regs, base, part);
        }
        regs.write(reg::INDEX, index);
        if in_block_ram(s) {
            // The table writes back the set's word its read port read: of INDEX's set once
            // INDEX has named it for a cycle.
            regs.read(reg::table(id as usize, reg::T_VALID));
        }
        Self::until_idle(regs, reg::COMMIT, id as u32 | if valid { reg::COMMIT_VALID } else { 0 })
    }

    /// What each watch slot is armed on, as the hardware says (a slot armed by another
    /// session, or another host, shows too).
    fn armed(&self, regs: &mut dyn Registers) -> Vec<Option<WatchInfo>> {
        (0..WATCH_SLOTS)
            .map(|slot| {
                let sym = regs.read(reg::watch(slot, reg::W_SYM));
                if sym & reg::ARMED == 0 {
                    return None;
                }
                let id = sym as u16;
                let op = WatchOp::from_code(regs.read(reg::watch(slot, reg::W_OP)) as u8)?;
                let operand = match (op, self.symbols.get(id as usize)) {
                    (WatchOp::Changes, _) | (_, None) => Vec::new(),
                    (_, Some(s)) => {
                        let x = regs.read(reg::watch(slot, reg::W_OPERAND)) as u64
                            | (regs.read(reg::watch(slot, reg::W_OPERAND + 4)) as u64) << 32;
                        x.to_be_bytes()[8 - value_bytes(s).min(8)..].to_vec()
                    }
                };
                Some(WatchInfo { slot: slot as u8, id, index: 0, op, operand, record: sym & reg::RECORD != 0 })
            })
            .collect()
    }

    /// Takes over the watches the hardware has armed (by an earlier session): their hits from
    /// now on are this session's notifications.
    fn adopt_watches(&mut self, regs: &mut dyn Registers) {
        for (slot, w) in self.armed(regs).into_iter().enumerate() {
            self.watches[slot] = w.map(|w| Watched {
                id: w.id,
                hits: regs.read(reg::watch(slot, reg::W_HITS)) as u64,
                record: w.record,
            });
        }
    }

    fn held(regs: &mut dyn Registers) -> u16 {
        reg::held(regs.read(reg::STATUS))
    }

    fn execute(&mut self, request: Request, regs: &mut dyn Registers) -> Result<Reply, Status> {
        Ok(match request {
            Request::Hello => Reply::Hello(Hello {
                symbols: self.symbols.len() as u16,
                watch_slots: {
                    self.adopt_watches(regs);
                    if let Some(cycles) = self.watchdog {
                        regs.write(reg::BREAK_TIMEOUT, cycles);
                    }
                    WATCH_SLOTS as u8
                },
                trace_depth: TRACE_DEPTH,
                hold_depth: HOLD_DEPTH,
                broken: regs.read(reg::CONTROL) & 1 != 0,
                tracing: self.trace_snap.is_some(),
                latency_in_cycles: true,
                nf: self.nf.clone(),
                max_snap: TRACE_SNAP,
            }),
            Request::Symbol { id } => Reply::Symbol(self.symbol(id)?.clone()),
            Request::Read { id, index } if table(self.symbol(id)?) => Reply::Entry(self.read_entry(id, index, regs)?),
            Request::Read { id, index } if self.symbol(id)?.kind == SymbolKind::AutoCounter.code() => {
                Reply::Entry(self.read_auto(id, index, regs)?)
            }
            Request::Read { id, index } if self.symbol(id)?.kind == SymbolKind::Array.code() => {
                Reply::Entry(self.read_element(id, index, regs)?)
            }
            Request::Read { id, index } if self.symbol(id)?.kind == SymbolKind::Queue.code() => {
                Reply::Entry(self.read_place(id, index, regs)?)
            }
            Request::Read { id, index } => {
                let v = self.read_value(id, regs)?;
                if index != 0 {
                    return Err(Status::BadIndex);
                }
                Reply::Entry(v)
            }
            Request::Write { id, index, entry } if table(self.symbol(id)?) => {
                self.write_entry(id, index, &entry, regs)?;
                Reply::Empty
            }
            Request::Write { id, index, entry } => {
                if index != 0 && scalar(self.symbol(id)?) {
                    return Err(Status::BadIndex);
                }
                self.write_at(id, index, &entry, regs)?;
                Reply::Empty
            }
            Request::Lookup { id, key } => {
                let (index, entry) = self.find(id, &key, regs)?;
                Reply::Found { index, entry }
            }
            // As the CPU's: the counters' entries from entry `index` of symbol `first` on.
            Request::Counters { first, index: from, count } => {
                let mut out = Vec::new();
                let kinds = [SymbolKind::Counter.code(), SymbolKind::AutoCounter.code()];
                for (id, s) in self.symbols.iter().enumerate().skip(first as usize) {
                    if !kinds.contains(&s.kind) {
                        continue;
                    }
                    let start = if id == first as usize { from } else { 0 };
                    for index in start..s.size {
                        if out.len() == count.min(100) as usize {
                            break;
                        }
                        let v = if s.kind == SymbolKind::Counter.code() {
                            self.read_value(id as u16, regs)?
                        } else {
                            self.read_auto(id as u16, index, regs)?
                        };
                        let value = v.iter().fold(0u64, |a, &b| a << 8 | b as u64);
                        out.push(CounterValue { id: id as u16, index, value });
                    }
                }
                Reply::Counters(out)
            }
            Request::ResetCounters { id } => {
                let counter = SymbolKind::Counter.code();
                let ids: Vec<u16> = match id {
                    Some(id) if self.symbol(id)?.kind == SymbolKind::AutoCounter.code() => return Err(Status::ReadOnly),
                    Some(id) if self.symbol(id)?.kind != counter => return Err(Status::NotACounter),
                    Some(id) => vec![id],
                    None => {
                        (0..self.symbols.len() as u16).filter(|&i| self.symbols[i as usize].kind == counter).collect()
                    }
                };
                for id in ids {
                    self.write_value(id, &[0; 8], regs)?;
                }
                Reply::Empty
            }
            Request::Watch { slot, id, index, op, operand, record } => {
                let s = self.symbol(id)?;
                let slot = match slot {
                    ANY_SLOT => {
                        let armed = self.armed(regs);
                        armed.iter().position(Option::is_none).ok_or(Status::NoSlot)? as u8
                    }
                    s if (s as usize) < WATCH_SLOTS => s,
                    _ => return Err(Status::NoSlot),
                };
                if !scalar(s) || s.value_width > 64 {
                    return Err(Status::Unsupported);
                }
                if index != 0 {
                    return Err(Status::BadIndex);
                }
                if (op == WatchOp::Changes) != operand.is_empty()
                    || (!operand.is_empty() && operand.len() != value_bytes(s))
                {
                    return Err(Status::BadValue);
                }
                let x = operand.iter().fold(0u64, |a, &b| a << 8 | b as u64);
                let slot = slot as usize;
                regs.write(reg::watch(slot, reg::W_SYM), 0);
                regs.write(reg::watch(slot, reg::W_OPERAND), x as u32);
                regs.write(reg::watch(slot, reg::W_OPERAND + 4), (x >> 32) as u32);
                regs.write(reg::watch(slot, reg::W_OP), op.code() as u32);
                let hits = regs.read(reg::watch(slot, reg::W_HITS)) as u64;
                let rec = if record { reg::RECORD } else { 0 };
                regs.write(reg::watch(slot, reg::W_SYM), reg::ARMED | rec | id as u32);
                self.watches[slot] = Some(Watched { id, hits, record });
                Reply::Watch { slot: slot as u8 }
            }
            Request::Watches => Reply::Watches(self.armed(regs).into_iter().flatten().collect()),
            Request::Unwatch { slot } => {
                let slots: Vec<usize> = match slot {
                    Some(s) if s as usize >= WATCH_SLOTS => return Err(Status::NoSlot),
                    Some(s) => vec![s as usize],
                    None => (0..WATCH_SLOTS).collect(),
                };
                for s in slots {
                    regs.write(reg::watch(s, reg::W_SYM), 0);
                    self.watches[s] = None;
                }
                Reply::Empty
            }
            Request::Trace { on, snap } => {
                regs.write(reg::TRACE, on as u32);
                self.trace_snap = on.then_some(snap);
                Reply::Empty
            }
            Request::Break => {
                regs.write(reg::CONTROL, 1);
                Reply::Break { held: Self::held(regs) }
            }
            Request::Step { n } => {
                if regs.read(reg::CONTROL) & 1 == 0 {
                    return Err(Status::NotBroken);
                }
                // Credits up to the frames held, one used as each leaves the hold buffer; at
                // a break only credited frames leave, so RELEASED counts this step's.
                let before = regs.read(reg::RELEASED);
                regs.write(reg::STEP, n as u32);
                regs.settle();
                if regs.read(reg::STEP) != 0 {
                    // Frames that could not leave in time (the NF's output stalled) stay held.
                    regs.write(reg::STEP, reg::STEP_SET);
                }
                let released = regs.read(reg::RELEASED).wrapping_sub(before) as u16;
                Reply::Step { released, held: Self::held(regs) }
            }
            Request::Continue => Reply::Continue { released: self.resume(regs) },
            Request::RegRead { addr } => Reply::Entry(regs.read(addr).to_be_bytes().to_vec()),
            Request::RegWrite { addr, value } => {
                regs.write(addr, value);
                Reply::Empty
            }
            Request::Status => Reply::Status(UnitStatus {
                broken: regs.read(reg::CONTROL) & 1 != 0,
                tracing: self.trace_snap.is_some(),
                held: Self::held(regs),
                passed_while_full: regs.read(reg::HOLD_PASSED),
                watch_hits: self.hits,
                breaks_timed_out: self.breaks_timed_out + regs.read(reg::BREAKS_TIMED_OUT),
            }),
        })
    }
}

//! The debug unit of the software targets (the CPU runtime, and so the Mininet node): it
//! answers control requests against the NF's state, holds packets on `break`, and sends
//! watchpoint and trace notifications. The hardware's unit is generated beside the NF core
//! and answers the same messages.
//!
//! The unit does not know the NF's types: it reaches the state through [`Inspect`], which
//! names each state element by a symbol number and moves its entries as bytes, laid out as
//! docs/debug-protocol.md's "Symbols" section gives them.

use crate::protocol::{
    decode, encode, CounterValue, Hello, Message, Notification, Reply, Request, Status, SymbolInfo, SymbolKind,
    TraceVerdict, UnitStatus, WatchInfo, WatchOp, ANY_SLOT,
};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Symbol kinds whose entries are counts (`counters` lists them).
const COUNTER_KINDS: [u8; 2] = [SymbolKind::Counter as u8, SymbolKind::AutoCounter as u8];

/// The NF's state as the unit sees it. Errors are the protocol's status codes.
pub trait Inspect {
    /// Every symbol, numbered by position.
    fn symbols(&self) -> Vec<SymbolInfo>;
    /// Entry `index` of symbol `id`.
    fn read(&self, id: u16, index: u32) -> Result<Vec<u8>, Status>;
    /// Writes entry `index` of symbol `id`.
    fn write(&mut self, id: u16, index: u32, entry: &[u8]) -> Result<(), Status>;
    /// The index and entry of `key` in table `id`.
    fn lookup(&self, id: u16, key: &[u8]) -> Result<(u32, Vec<u8>), Status>;
    /// Zeroes every entry of counter symbol `id`.
    fn reset(&mut self, id: u16) -> Result<(), Status>;
}

/// How big the unit's buffers are.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Watchpoints at once.
    pub watch_slots: u8,
    /// Packets `break` holds before they pass.
    pub hold_depth: u16,
    /// Counters in one `counters` reply (each takes 14 bytes of the 1488).
    pub counters_per_reply: u8,
    /// How long a break outlives its client: with no client in touch for this long (none
    /// connected to the socket, no request in band), the unit continues by itself, so live
    /// traffic is never held by a client that went away.
    pub break_timeout: Duration,
}

/// The target's own counters, after the NF's symbols on every target (the CPU runner's, and
/// the hardware unit's): frames in, out and dropped per port, and drops per reason (indexed by
/// the reason's code, shown by its name).
pub const AUTO_COUNTERS: [&str; 4] = ["rx_packets", "tx_packets", "dropped", "drops"];

/// The symbols of [`AUTO_COUNTERS`] for an NF of `ports` ports.
pub fn auto_counter_symbols(ports: usize) -> Vec<SymbolInfo> {
    AUTO_COUNTERS
        .iter()
        .enumerate()
        .map(|(k, name)| SymbolInfo {
            kind: SymbolKind::AutoCounter.code(),
            size: if k == 3 { 256 } else { ports as u32 },
            key_width: 0,
            value_width: 64,
            key_format: if k == 3 { crate::protocol::Format::DropReason.code() } else { 0 },
            value_format: 0,
            name: name.to_string(),
        })
        .collect()
}

/// [`Limits::break_timeout`]'s default.
pub const BREAK_TIMEOUT: Duration = Duration::from_secs(5);

impl Default for Limits {
    fn default() -> Limits {
        Limits { watch_slots: 8, hold_depth: 1024, counters_per_reply: 100, break_timeout: BREAK_TIMEOUT }
    }
}

#[derive(Debug, Clone)]
struct Watch {
    id: u16,
    index: u32,
    op: WatchOp,
    operand: Vec<u8>,
    record: bool,
    /// The watched entry after the last packet, and whether the condition held then: a watch
    /// fires when its condition becomes true, not again while it stays true.
    last: Vec<u8>,
    held: bool,
}

/// What became of a packet, as the runtime reports it to [`Unit::observe`].
#[derive(Debug, Clone, Copy)]
pub struct Outcome<'a> {
    /// The packet's number in the run, from 0 (the target's count of data packets).
    pub packet_no: u64,
    /// The port it came in by.
    pub in_port: u8,
    /// The packet as it arrived.
    pub bytes: &'a [u8],
    /// The verdict.
    pub verdict: TraceVerdict,
    /// Time in the NF: nanoseconds on the CPU, cycles in hardware.
    pub latency: u32,
}

/// One target's debug unit.
pub struct Unit {
    nf: String,
    limits: Limits,
    last_seq: Option<u32>,
    watches: Vec<Option<Watch>>,
    watch_hits: u32,
    trace_snap: Option<u16>,
    broken: bool,
    held: VecDeque<(u8, Vec<u8>)>,
    released: VecDeque<(u8, Vec<u8>)>,
    passed_while_full: u32,
    full_said: bool,
    notes: Vec<Vec<u8>>,
    note_seq: u32,
    /// A break, a watch or a trace is set: the runtime's per-packet question, kept as one
    /// flag (recomputed after each request) so an idle unit costs a load and a branch.
    busy: bool,
    /// Control frames too short to answer (no `seq`).
    pub unanswerable: u64,
    /// When a client was last in touch: its last request, or the last look that found one
    /// connected.
    last_contact: Instant,
    breaks_timed_out: u32,
}

impl Unit {
    /// A unit for the NF called `nf`, idle: running, no watchpoints, no trace.
    pub fn new(nf: &str, limits: Limits) -> Unit {
        Unit {
            nf: nf.to_string(),
            limits,
            last_seq: None,
            watches: vec![None; limits.watch_slots as usize],
            watch_hits: 0,
            trace_snap: None,
            broken: false,
            held: VecDeque::new(),
            released: VecDeque::new(),
            passed_while_full: 0,
            full_said: false,
            notes: Vec::new(),
            note_seq: 0,
            busy: false,
            unanswerable: 0,
            last_contact: Instant::now(),
            breaks_timed_out: 0,
        }
    }

    /// A client is in touch now (connected to the socket): the break's timeout starts again.
    pub fn touch(&mut self) {
        self.last_contact = Instant::now();
    }

    /// When the break ends by itself if no client gets in touch first; `None` when running.
    pub fn break_deadline(&self) -> Option<Instant> {
        self.broken.then(|| self.last_contact + self.limits.break_timeout)
    }

    /// Ends a break whose client has been gone for the break timeout, as `continue` does:
    /// the packets it released (`None` if the break stays).
    pub fn expire(&mut self, now: Instant) -> Option<u16> {
        if self.break_deadline().map_or(true, |d| now < d) {
            return None;
        }
        self.breaks_timed_out += 1;
        let released = self.resume();
        self.busy = self.trace_snap.is_some() || self.watches.iter().any(Option::is_some);
        Some(released)
    }

    fn resume(&mut self) -> u16 {
        let released = self.held.len() as u16;
        self.released.extend(self.held.drain(..));
        self.broken = false;
        self.full_said = false;
        released
    }

    /// Whether the unit has nothing to do per packet (no break, watch or trace): the runtime
    /// skips [`Unit::observe`] then, so an idle debugger costs one branch.
    #[inline]
    pub fn idle(&self) -> bool {
        !self.busy
    }

    /// Answers one control message (header and payload, without the Ethernet header). `None`:
    /// too short to answer (counted in `unanswerable`), or not a request (replies and
    /// notifications from elsewhere are ignored).
    pub fn control(&mut self, bytes: &[u8], state: &mut dyn Inspect) -> Option<Vec<u8>> {
        let (seq, request) = match decode(bytes) {
            Ok(Message::Request { seq, request }) => (seq, request),
            Ok(_) => return None,
            Err(e) => {
                if e.seq.is_none() {
                    self.unanswerable += 1;
                }
                return e.reply();
            }
        };
        let opcode = request.opcode().code();
        self.last_contact = Instant::now();
        if self.last_seq == Some(seq) {
            return Some(encode(&Message::Reply { seq, opcode, status: Status::Duplicate, reply: Reply::Empty }));
        }
        self.last_seq = Some(seq);
        let (status, reply) = match self.execute(request, state) {
            Ok(reply) => (Status::Ok, reply),
            Err(status) => (status, Reply::Empty),
        };
        self.busy = self.broken || self.trace_snap.is_some() || self.watches.iter().any(Option::is_some);
        Some(encode(&Message::Reply { seq, opcode, status, reply }))
    }

    fn execute(&mut self, request: Request, state: &mut dyn Inspect) -> Result<Reply, Status> {
        let symbols = state.symbols();
        let symbol = |id: u16| symbols.get(id as usize).ok_or(Status::NoSuchSymbol);
        Ok(match request {
            Request::Hello => Reply::Hello(Hello {
                symbols: symbols.len() as u16,
                watch_slots: self.limits.watch_slots,
                trace_depth: 0,
                hold_depth: self.limits.hold_depth,
                broken: self.broken,
                tracing: self.trace_snap.is_some(),
                latency_in_cycles: false,
                nf: self.nf.clone(),
                max_snap: crate::protocol::MAX_SNAP,
            }),
            Request::Symbol { id } => Reply::Symbol(symbol(id)?.clone()),
            Request::Read { id, index } => {
                symbol(id)?;
                Reply::Entry(state.read(id, index)?)
            }
            Request::Write { id, index, entry } => {
                symbol(id)?;
                state.write(id, index, &entry)?;
                Reply::Empty
            }
            Request::Lookup { id, key } => {
                symbol(id)?;
                let (index, entry) = state.lookup(id, &key)?;
                Reply::Found { index, entry }
            }
            Request::Counters { first, index: from, count } => {
                let mut out = Vec::new();
                let wanted = count.min(self.limits.counters_per_reply) as usize;
                for (id, s) in symbols.iter().enumerate().skip(first as usize) {
                    if !COUNTER_KINDS.contains(&s.kind) {
                        continue;
                    }
                    let start = if id == first as usize { from } else { 0 };
                    for index in start..s.size {
                        if out.len() == wanted {
                            break;
                        }
                        let e = state.read(id as u16, index)?;
                        out.push(CounterValue { id: id as u16, index, value: be_u64(&e) });
                    }
                }
                Reply::Counters(out)
            }
            // The NF's counters; the automatic ones count what the target saw and stay.
            Request::ResetCounters { id } => {
                let counter = SymbolKind::Counter.code();
                match id {
                    Some(id) if symbol(id)?.kind == SymbolKind::AutoCounter.code() => return Err(Status::ReadOnly),
                    Some(id) if symbol(id)?.kind != counter => return Err(Status::NotACounter),
                    Some(id) => state.reset(id)?,
                    None => {
                        for (id, s) in symbols.iter().enumerate() {
                            if s.kind == counter {
                                state.reset(id as u16)?;
                            }
                        }
                    }
                }
                Reply::Empty
            }
            Request::Watch { slot, id, index, op, operand, record } => {
                let width = value_bytes(symbol(id)?);
                let slot = match slot {
                    ANY_SLOT => self.watches.iter().position(Option::is_none).ok_or(Status::NoSlot)?,
                    s if (s as usize) < self.watches.len() => s as usize,
                    _ => return Err(Status::NoSlot),
                };
                if (op == WatchOp::Changes) != operand.is_empty() || (!operand.is_empty() && operand.len() != width) {
                    return Err(Status::BadValue);
                }
                let last = state.read(id, index)?;
                let held = op != WatchOp::Changes && holds(op, &watched(&last, width), &operand);
                self.watches[slot] = Some(Watch { id, index, op, operand, record, last, held });
                Reply::Watch { slot: slot as u8 }
            }
            Request::Watches => Reply::Watches(
                self.watches
                    .iter()
                    .enumerate()
                    .filter_map(|(slot, w)| {
                        let w = w.as_ref()?;
                        Some(WatchInfo {
                            slot: slot as u8,
                            id: w.id,
                            index: w.index,
                            op: w.op,
                            operand: w.operand.clone(),
                            record: w.record,
                        })
                    })
                    .collect(),
            ),
            Request::Unwatch { slot: Some(slot) } => {
                *self.watches.get_mut(slot as usize).ok_or(Status::NoSlot)? = None;
                Reply::Empty
            }
            Request::Unwatch { slot: None } => {
                self.watches.iter_mut().for_each(|w| *w = None);
                Reply::Empty
            }
            Request::Trace { on, snap } => {
                self.trace_snap = on.then_some(snap);
                Reply::Empty
            }
            Request::Break => {
                self.broken = true;
                Reply::Break { held: self.held.len() as u16 }
            }
            Request::Step { n } => {
                if !self.broken {
                    return Err(Status::NotBroken);
                }
                let n = (n as usize).min(self.held.len());
                self.released.extend(self.held.drain(..n));
                Reply::Step { released: n as u16, held: self.held.len() as u16 }
            }
            Request::Continue => Reply::Continue { released: self.resume() },
            Request::Status => Reply::Status(UnitStatus {
                broken: self.broken,
                tracing: self.trace_snap.is_some(),
                held: self.held.len() as u16,
                passed_while_full: self.passed_while_full,
                watch_hits: self.watch_hits,
                breaks_timed_out: self.breaks_timed_out,
            }),
            // The CPU's unit has no register map.
            Request::RegRead { .. } | Request::RegWrite { .. } => return Err(Status::Unsupported),
        })
    }

    /// A data packet arrives at the NF's input: `Some` gives it back to be processed now;
    /// `None` means the unit holds it (a `break`), to come back from [`Unit::next_released`].
    /// A full hold buffer never drops: the packet passes, and the client is told once.
    pub fn admit(&mut self, in_port: u8, packet: Vec<u8>) -> Option<(u8, Vec<u8>)> {
        if !self.broken {
            return Some((in_port, packet));
        }
        if self.held.len() < self.limits.hold_depth as usize {
            self.held.push_back((in_port, packet));
            return None;
        }
        self.passed_while_full += 1;
        if !self.full_said {
            self.full_said = true;
            self.notify(Notification::HoldFull { held: self.held.len() as u16 });
        }
        Some((in_port, packet))
    }

    /// The next packet `step` or `continue` released, to process before any new arrival.
    #[inline]
    pub fn next_released(&mut self) -> Option<(u8, Vec<u8>)> {
        self.released.pop_front()
    }

    /// After the NF has processed a packet: the trace record, and each watchpoint checked
    /// against the state the packet left.
    pub fn observe(&mut self, outcome: &Outcome, state: &dyn Inspect) {
        let packet_no = outcome.packet_no;
        if let Some(snap) = self.trace_snap {
            let bytes = outcome.bytes[..outcome.bytes.len().min(snap as usize)].to_vec();
            self.notify(Notification::Trace {
                packet_no,
                in_port: outcome.in_port,
                verdict: outcome.verdict,
                latency: outcome.latency,
                len: outcome.bytes.len() as u16,
                bytes,
            });
        }
        let symbols = state.symbols();
        let snap = self.trace_snap.unwrap_or(crate::protocol::DEFAULT_SNAP) as usize;
        let mut fired = Vec::new();
        for (slot, w) in self.watches.iter_mut().enumerate() {
            let Some(w) = w else { continue };
            let Some(s) = symbols.get(w.id as usize) else { continue };
            let Ok(entry) = state.read(w.id, w.index) else { continue };
            // `changes` is of the whole entry (a table slot's valid bit and key too); a
            // comparison is of its value.
            let fire = match w.op {
                WatchOp::Changes => entry != w.last,
                op => {
                    let held = holds(op, &watched(&entry, value_bytes(s)), &w.operand);
                    let rose = held && !w.held;
                    w.held = held;
                    rose
                }
            };
            if fire {
                let packet =
                    w.record.then(|| (outcome.in_port, outcome.bytes[..outcome.bytes.len().min(snap)].to_vec()));
                fired.push(Notification::WatchHit {
                    slot: slot as u8,
                    id: w.id,
                    index: w.index,
                    packet_no,
                    value: entry.clone(),
                    packet,
                });
            }
            w.last = entry;
        }
        for n in fired {
            self.watch_hits += 1;
            self.notify(n);
        }
    }

    fn notify(&mut self, notification: Notification) {
        let seq = self.note_seq;
        self.note_seq = self.note_seq.wrapping_add(1);
        self.notes.push(encode(&Message::Notification { seq, notification }));
    }

    /// Notifications waiting to be sent, oldest first.
    pub fn take_notifications(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.notes)
    }
}

/// Bytes of a symbol's value.
fn value_bytes(s: &SymbolInfo) -> usize {
    (s.value_width as usize).div_ceil(8)
}

/// The value part of an entry: its last bytes (a table entry is valid, key, value).
fn watched(entry: &[u8], width: usize) -> Vec<u8> {
    entry[entry.len().saturating_sub(width)..].to_vec()
}

/// `value op operand`, unsigned, both big-endian of one width.
fn holds(op: WatchOp, value: &[u8], operand: &[u8]) -> bool {
    let ord = value.cmp(operand);
    match op {
        WatchOp::Eq => ord.is_eq(),
        WatchOp::Ne => ord.is_ne(),
        WatchOp::Lt => ord.is_lt(),
        WatchOp::Le => ord.is_le(),
        WatchOp::Gt => ord.is_gt(),
        WatchOp::Ge => ord.is_ge(),
        WatchOp::Changes => false,
    }
}

fn be_u64(b: &[u8]) -> u64 {
    b.iter().rev().take(8).rev().fold(0, |v, &x| v << 8 | x as u64)
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::protocol::{decode, Format, Message};
    use proptest::prelude::*;

    /// A counter `hits`, a 4-entry table `mac_table` (valid, 6-byte key, 1-byte value) and a
    /// read-only queue: enough state to exercise every command.
    #[derive(Default, Clone, PartialEq, Debug)]
    struct Toy {
        hits: u64,
        table: [(bool, [u8; 6], u8); 4],
    }

    impl Inspect for Toy {
        fn symbols(&self) -> Vec<SymbolInfo> {
            let s = |kind: SymbolKind, size, key_width, value_width, key_format: Format, name: &str| SymbolInfo {
                kind: kind.code(),
                size,
                key_width,
                value_width,
                key_format: key_format.code(),
                value_format: Format::Uint.code(),
                name: name.into(),
            };
            vec![
                s(SymbolKind::Counter, 1, 0, 64, Format::Uint, "hits"),
                s(SymbolKind::Cam, 4, 48, 8, Format::Mac, "mac_table"),
                s(SymbolKind::Queue, 8, 0, 32, Format::Uint, "pending"),
            ]
        }
        fn read(&self, id: u16, index: u32) -> Result<Vec<u8>, Status> {
            match (id, index) {
                (0, 0) => Ok(self.hits.to_be_bytes().to_vec()),
                (1, i) if i < 4 => {
                    let (v, k, x) = self.table[i as usize];
                    let mut e = vec![v as u8];
                    e.extend_from_slice(&k);
                    e.push(x);
                    Ok(e)
                }
                (2, i) if i < 8 => Ok(vec![0; 4]),
                _ => Err(Status::BadIndex),
            }
        }
        fn write(&mut self, id: u16, index: u32, e: &[u8]) -> Result<(), Status> {
            match (id, index) {
                (0, 0) if e.len() == 8 => self.hits = be_u64(e),
                (1, i) if i < 4 && e.len() == 8 && e[0] <= 1 => {
                    self.table[i as usize] = (e[0] == 1, e[1..7].try_into().unwrap(), e[7])
                }
                (2, _) => return Err(Status::ReadOnly),
                (0 | 1, _) if index > 3 || (id == 0 && index > 0) => return Err(Status::BadIndex),
                _ => return Err(Status::BadValue),
            }
            Ok(())
        }
        fn lookup(&self, id: u16, key: &[u8]) -> Result<(u32, Vec<u8>), Status> {
            if id != 1 {
                return Err(Status::BadValue);
            }
            let i = self.table.iter().position(|(v, k, _)| *v && k[..] == *key).ok_or(Status::NoSuchKey)?;
            Ok((i as u32, self.read(1, i as u32)?))
        }
        fn reset(&mut self, id: u16) -> Result<(), Status> {
            match id {
                0 => Ok(self.hits = 0),
                _ => Err(Status::BadValue),
            }
        }
    }

    fn ask(unit: &mut Unit, toy: &mut Toy, seq: u32, request: Request) -> (Status, Reply) {
        let reply = unit.control(&encode(&Message::Request { seq, request }), toy).expect("a reply");
        match decode(&reply) {
            Ok(Message::Reply { seq: s, status, reply, .. }) if s == seq => (status, reply),
            other => panic!("not a reply to {seq}: {other:?}"),
        }
    }

    fn sent(port: u8) -> TraceVerdict {
        TraceVerdict::Send(1 << port)
    }

    #[test]
    fn reads_writes_and_looks_up_by_symbol() {
        let (mut u, mut t) = (Unit::new("toy", Limits::default()), Toy::default());
        let entry = vec![1, 2, 0, 0, 0, 0, 9, 3];
        assert_eq!(ask(&mut u, &mut t, 1, Request::Write { id: 1, index: 2, entry: entry.clone() }).0, Status::Ok);
        assert_eq!(
            ask(&mut u, &mut t, 2, Request::Read { id: 1, index: 2 }),
            (Status::Ok, Reply::Entry(entry.clone()))
        );
        let key = vec![2, 0, 0, 0, 0, 9];
        assert_eq!(
            ask(&mut u, &mut t, 3, Request::Lookup { id: 1, key }),
            (Status::Ok, Reply::Found { index: 2, entry })
        );
        assert_eq!(ask(&mut u, &mut t, 4, Request::Lookup { id: 1, key: vec![7; 6] }).0, Status::NoSuchKey);
        assert_eq!(ask(&mut u, &mut t, 5, Request::Read { id: 9, index: 0 }).0, Status::NoSuchSymbol);
        assert_eq!(ask(&mut u, &mut t, 6, Request::Read { id: 1, index: 4 }).0, Status::BadIndex);
        assert_eq!(ask(&mut u, &mut t, 7, Request::Write { id: 2, index: 0, entry: vec![0; 4] }).0, Status::ReadOnly);
        match ask(&mut u, &mut t, 8, Request::Symbol { id: 1 }) {
            (Status::Ok, Reply::Symbol(s)) => assert_eq!((s.name.as_str(), s.size, s.key_width), ("mac_table", 4, 48)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_repeated_seq_is_not_executed_twice() {
        let (mut u, mut t) = (Unit::new("toy", Limits::default()), Toy::default());
        ask(&mut u, &mut t, 10, Request::Break);
        u.admit(0, vec![1]);
        u.admit(0, vec![2]);
        assert_eq!(ask(&mut u, &mut t, 11, Request::Step { n: 1 }).1, Reply::Step { released: 1, held: 1 });
        assert_eq!(ask(&mut u, &mut t, 11, Request::Step { n: 1 }), (Status::Duplicate, Reply::Empty));
        assert_eq!(u.next_released(), Some((0, vec![1])));
        assert_eq!(u.next_released(), None, "the retransmitted step released nothing");
    }

    #[test]
    fn break_holds_step_releases_continue_runs_and_nothing_is_lost() {
        let limits = Limits { hold_depth: 3, ..Limits::default() };
        let (mut u, mut t) = (Unit::new("toy", limits), Toy::default());
        assert_eq!(ask(&mut u, &mut t, 1, Request::Step { n: 1 }).0, Status::NotBroken);
        assert_eq!(u.admit(1, vec![0]), Some((1, vec![0])), "running: packets pass");
        ask(&mut u, &mut t, 2, Request::Break);
        for k in 1..=5u8 {
            let passed = u.admit(k % 2, vec![k]);
            assert_eq!(passed.is_some(), k > 3, "packet {k}: the hold has 3 places");
        }
        let notes = u.take_notifications();
        assert_eq!(notes.len(), 1, "the client hears once that the hold is full");
        assert!(matches!(
            decode(&notes[0]),
            Ok(Message::Notification { notification: Notification::HoldFull { held: 3 }, .. })
        ));
        assert_eq!(ask(&mut u, &mut t, 3, Request::Step { n: 2 }).1, Reply::Step { released: 2, held: 1 });
        assert_eq!(
            (u.next_released(), u.next_released(), u.next_released()),
            (Some((1, vec![1])), Some((0, vec![2])), None)
        );
        match ask(&mut u, &mut t, 4, Request::Status).1 {
            Reply::Status(s) => assert_eq!((s.broken, s.held, s.passed_while_full), (true, 1, 2)),
            other => panic!("{other:?}"),
        }
        assert_eq!(ask(&mut u, &mut t, 5, Request::Continue).1, Reply::Continue { released: 1 });
        assert_eq!(u.next_released(), Some((1, vec![3])));
        assert!(u.idle());
    }

    #[test]
    fn watches_fire_when_their_condition_becomes_true_and_record_the_packet() {
        let (mut u, mut t) = (Unit::new("toy", Limits::default()), Toy::default());
        let w = |slot, op, operand: Vec<u8>, record| Request::Watch { slot, id: 0, index: 0, op, operand, record };
        assert_eq!(ask(&mut u, &mut t, 1, w(0, WatchOp::Ge, 3u64.to_be_bytes().to_vec(), true)).0, Status::Ok);
        assert_eq!(ask(&mut u, &mut t, 2, w(ANY_SLOT, WatchOp::Changes, vec![], false)).1, Reply::Watch { slot: 1 });
        assert_eq!(ask(&mut u, &mut t, 3, w(2, WatchOp::Eq, vec![1], false)).0, Status::BadValue, "operand width");
        assert_eq!(ask(&mut u, &mut t, 4, w(8, WatchOp::Eq, vec![0; 8], false)).0, Status::NoSlot);
        let mut hits = Vec::new();
        for k in 0..5u8 {
            t.hits += 1;
            u.observe(&Outcome { packet_no: k as u64, in_port: 2, bytes: &[k; 20], verdict: sent(1), latency: 7 }, &t);
            for n in u.take_notifications() {
                if let Ok(Message::Notification {
                    notification: Notification::WatchHit { slot, value, packet, packet_no, .. },
                    ..
                }) = decode(&n)
                {
                    hits.push((slot, be_u64(&value), packet.map(|p| p.1[0]), packet_no));
                }
            }
        }
        let changes: Vec<_> = hits.iter().filter(|h| h.0 == 1).map(|h| h.1).collect();
        assert_eq!(changes, [1, 2, 3, 4, 5], "every change");
        let ge: Vec<_> = hits.iter().filter(|h| h.0 == 0).collect();
        assert_eq!(ge, [&(0, 3, Some(2), 2)], "once, when hits reached 3, with the packet that did it");
        assert_eq!(ask(&mut u, &mut t, 5, Request::Unwatch { slot: None }).0, Status::Ok);
        assert!(u.idle());
    }

    #[test]
    fn the_unit_owns_the_slots_and_lists_what_is_armed() {
        let (mut u, mut t) = (Unit::new("toy", Limits { watch_slots: 2, ..Limits::default() }), Toy::default());
        let any = |op, operand: Vec<u8>| Request::Watch { slot: ANY_SLOT, id: 0, index: 0, op, operand, record: false };
        assert_eq!(ask(&mut u, &mut t, 1, any(WatchOp::Changes, vec![])).1, Reply::Watch { slot: 0 });
        // Another client, another session: the next free slot, not slot 0 again.
        assert_eq!(ask(&mut u, &mut t, 2, any(WatchOp::Eq, vec![0, 0, 0, 0, 0, 0, 0, 7])).1, Reply::Watch { slot: 1 });
        assert_eq!(ask(&mut u, &mut t, 3, any(WatchOp::Changes, vec![])).0, Status::NoSlot);
        assert_eq!(ask(&mut u, &mut t, 4, Request::Unwatch { slot: Some(0) }).0, Status::Ok);
        match ask(&mut u, &mut t, 5, Request::Watches).1 {
            Reply::Watches(ws) => assert_eq!(
                ws,
                [WatchInfo { slot: 1, id: 0, index: 0, op: WatchOp::Eq, operand: vec![0, 0, 0, 0, 0, 0, 0, 7], record: false }]
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_break_with_no_client_in_touch_ends_after_the_timeout() {
        let limits = Limits { break_timeout: Duration::from_millis(50), ..Limits::default() };
        let (mut u, mut t) = (Unit::new("toy", limits), Toy::default());
        ask(&mut u, &mut t, 1, Request::Break);
        assert_eq!(u.admit(0, vec![1]), None);
        let deadline = u.break_deadline().expect("broken");
        assert_eq!(u.expire(deadline - Duration::from_millis(1)), None, "not yet");
        std::thread::sleep(Duration::from_millis(60));
        u.touch();
        assert_eq!(u.expire(Instant::now()), None, "a client in touch keeps the break");
        assert_eq!(u.expire(u.break_deadline().unwrap()), Some(1));
        assert_eq!(u.next_released(), Some((0, vec![1])), "what it held goes on");
        assert_eq!(u.admit(0, vec![2]), Some((0, vec![2])), "and it runs");
        match ask(&mut u, &mut t, 2, Request::Status).1 {
            Reply::Status(s) => assert_eq!((s.broken, s.breaks_timed_out), (false, 1)),
            other => panic!("{other:?}"),
        }
        assert!(u.idle());
    }

    #[test]
    fn trace_records_each_packet_cut_to_the_snap_length() {
        let (mut u, mut t) = (Unit::new("toy", Limits::default()), Toy::default());
        ask(&mut u, &mut t, 1, Request::Trace { on: true, snap: 4 });
        u.observe(
            &Outcome { packet_no: 0, in_port: 3, bytes: &[9; 60], verdict: TraceVerdict::Drop(2), latency: 40 },
            &t,
        );
        let n = u.take_notifications();
        match decode(&n[0]) {
            Ok(Message::Notification {
                notification: Notification::Trace { in_port, verdict, len, bytes, .. },
                ..
            }) => {
                assert_eq!((in_port, verdict, len, bytes), (3, TraceVerdict::Drop(2), 60, vec![9; 4]))
            }
            other => panic!("{other:?}"),
        }
        ask(&mut u, &mut t, 2, Request::Trace { on: false, snap: 0 });
        u.observe(&Outcome { packet_no: 0, in_port: 3, bytes: &[9; 60], verdict: sent(0), latency: 40 }, &t);
        assert!(u.take_notifications().is_empty());
    }

    #[test]
    fn counters_are_listed_and_reset() {
        let (mut u, mut t) = (Unit::new("toy", Limits::default()), Toy::default());
        t.hits = 41;
        assert_eq!(
            ask(&mut u, &mut t, 1, Request::Counters { first: 0, index: 0, count: 10 }).1,
            Reply::Counters(vec![CounterValue { id: 0, index: 0, value: 41 }])
        );
        assert_eq!(ask(&mut u, &mut t, 2, Request::ResetCounters { id: Some(1) }).0, Status::NotACounter);
        assert_eq!(ask(&mut u, &mut t, 3, Request::ResetCounters { id: None }).0, Status::Ok);
        assert_eq!(t.hits, 0);
    }

    proptest! {
        /// Fuzzed control frames never panic, and none but a well-formed `write` or
        /// `reset_counters` changes the state.
        #[test]
        fn fuzzed_control_frames_change_nothing(frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 1..20)) {
            let (mut u, mut t) = (Unit::new("toy", Limits::default()), Toy { hits: 5, ..Toy::default() });
            let before = t.clone();
            let mut wrote = false;
            for f in frames {
                if let Ok(Message::Request { request: Request::Write { .. } | Request::ResetCounters { .. }, .. }) = decode(&f) {
                    wrote = true;
                }
                if let Some(r) = u.control(&f, &mut t) {
                    prop_assert!(decode(&r).is_ok());
                }
            }
            prop_assert!(wrote || t == before);
        }
    }
}

//! Control messages: a 12-byte header, then a payload laid out per opcode, all big-endian
//! (docs/debug-protocol.md is the specification; the tests below check this code against it).
//!
//! [`decode`] never panics: any byte string is either a [`Message`] or a [`DecodeError`] that
//! says what to answer (the debug units feed it whatever arrives on the management port).

use std::fmt;

/// The control frames' EtherType (IEEE 802 local experimental EtherType 1).
pub const ETHERTYPE: u16 = 0x88b5;
/// The source MAC of a unit's in-band replies and notifications ("emu" in ASCII, locally
/// administered), on every target.
pub const UNIT_MAC: [u8; 6] = [0x02, 0x65, 0x6d, 0x75, 0x00, 0x01];
/// The protocol version this code speaks.
pub const VERSION: u8 = 1;
/// Bytes of the control header.
pub const HEADER_LEN: usize = 12;
/// The largest payload: a message fits a 1514-byte Ethernet frame.
pub const MAX_PAYLOAD: usize = 1488;
/// The most bytes of a packet a trace or watch notification copies.
pub const MAX_SNAP: u16 = 1400;
/// The snap length of `trace on` without one, and of a recording watch while no trace is on.
pub const DEFAULT_SNAP: u16 = 64;

/// What a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// From the client.
    Request = 0,
    /// The unit's answer to a request.
    Reply = 1,
    /// Sent by the unit on its own (a watch hit, a trace record).
    Notification = 2,
}

macro_rules! codes {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $code:literal, $text:literal;)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name { $($(#[$vm])* $v = $code,)* }

        impl $name {
            /// The code's value on the wire.
            pub fn code(self) -> u8 {
                self as u8
            }
            /// The variant `code` stands for.
            pub fn from_code(code: u8) -> Option<$name> {
                match code { $($code => Some($name::$v),)* _ => None }
            }
            /// The name docs/debug-protocol.md gives it.
            pub fn name(self) -> &'static str {
                match self { $($name::$v => $text,)* }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

codes! {
    /// The command, or the notification.
    Opcode {
        /// Names the NF and the unit's sizes.
        Hello = 0x01, "hello";
        /// Describes one symbol.
        Symbol = 0x02, "symbol";
        /// Reads one entry of a symbol.
        Read = 0x10, "read";
        /// Writes one entry.
        Write = 0x11, "write";
        /// Finds a table entry by key.
        Lookup = 0x12, "lookup";
        /// Reads counters.
        Counters = 0x20, "counters";
        /// Zeroes one counter symbol, or all.
        ResetCounters = 0x21, "reset_counters";
        /// Arms a watchpoint.
        Watch = 0x30, "watch";
        /// Disarms one watchpoint, or all.
        Unwatch = 0x31, "unwatch";
        /// Lists the armed watchpoints.
        Watches = 0x32, "watches";
        /// Turns tracing on or off.
        Trace = 0x40, "trace";
        /// Holds packets at the NF's input.
        Break = 0x50, "break";
        /// Releases held packets one by one.
        Step = 0x51, "step";
        /// Releases all held packets and runs.
        Continue = 0x52, "continue";
        /// The unit's state.
        Status = 0x53, "status";
        /// Reads one 32-bit register of a hardware unit (its register map, docs/debug-protocol.md).
        RegRead = 0x60, "reg_read";
        /// Writes one 32-bit register of a hardware unit.
        RegWrite = 0x61, "reg_write";
        /// A watchpoint's condition became true.
        WatchHit = 0x80, "watch_hit";
        /// A traced packet and its verdict.
        TraceRecord = 0x81, "trace";
        /// The hold buffer is full; packets pass.
        HoldFull = 0x82, "hold_full";
    }
}

codes! {
    /// A reply's outcome.
    Status {
        /// Done.
        Ok = 0, "ok";
        /// `version` is not 1.
        BadVersion = 1, "bad_version";
        /// Unknown opcode, or a notification's opcode in a request.
        BadOpcode = 2, "bad_opcode";
        /// The payload's length does not fit the opcode.
        Malformed = 3, "malformed";
        /// The symbol number is past the symbol table.
        NoSuchSymbol = 4, "no_such_symbol";
        /// The index is past the symbol's size.
        BadIndex = 5, "bad_index";
        /// A value wider than the symbol, or a watch operator out of range.
        BadValue = 6, "bad_value";
        /// A write to a queue, probe or automatic counter.
        ReadOnly = 7, "read_only";
        /// `lookup` of a key not in the table.
        NoSuchKey = 8, "no_such_key";
        /// `watch` on a slot the unit does not have.
        NoSlot = 9, "no_slot";
        /// `step` while running.
        NotBroken = 10, "not_broken";
        /// The same `seq` as the last request: not executed again.
        Duplicate = 11, "duplicate";
        /// The hardware's state port was in use; retry.
        Busy = 12, "busy";
        /// The target's unit cannot do this (yet): the hardware unit's table entries, traces
        /// and recorded packets.
        Unsupported = 13, "unsupported";
        /// A table write whose key another slot holds already.
        KeyElsewhere = 14, "key_elsewhere";
        /// A hash table write whose key hashes to another set than the slot's.
        WrongSet = 15, "wrong_set";
        /// `reset_counters` of a symbol that is not a counter.
        NotACounter = 16, "not_a_counter";
    }
}

codes! {
    /// What a symbol is (docs/debug-protocol.md, "Symbols").
    SymbolKind {
        /// A `Register` or a plain value field.
        Register = 0, "register";
        /// A `Counter`.
        Counter = 1, "counter";
        /// An `Array`.
        Array = 2, "array";
        /// A `Cam`.
        Cam = 3, "cam";
        /// An `Lru`.
        Lru = 4, "lru";
        /// A `HashTable`.
        HashTable = 5, "hash_table";
        /// A `Tcam`.
        Tcam = 6, "tcam";
        /// A `Queue` (read only).
        Queue = 7, "queue";
        /// An `emu::probe!` (read only).
        Probe = 8, "probe";
        /// A counter the compiler or runtime keeps (read only).
        AutoCounter = 9, "auto_counter";
    }
}

codes! {
    /// How a key or value is shown and read back by the client: the Rust type it has in the NF.
    Format {
        /// An unsigned integer, in decimal.
        Uint = 0, "uint";
        /// `Mac`: `02:00:00:00:00:01`.
        Mac = 1, "mac";
        /// `Ipv4Addr`: `10.0.0.1`.
        Ipv4 = 2, "ipv4";
        /// `bool`: `true`, `false`.
        Bool = 3, "bool";
        /// Bytes (`Bytes<N>`, tuples, wide integers): hex.
        Hex = 4, "hex";
        /// Of an index (a symbol with no key): the entry's index is a `DropReason`'s code,
        /// shown and read by the reason's name (`drops[same_port]`).
        DropReason = 5, "drop_reason";
    }
}

codes! {
    /// A watchpoint's comparison, unsigned over the value's width.
    WatchOp {
        /// Equal to the operand.
        Eq = 0, "==";
        /// Not equal.
        Ne = 1, "!=";
        /// Below.
        Lt = 2, "<";
        /// Below or equal.
        Le = 3, "<=";
        /// Above.
        Gt = 4, ">";
        /// Above or equal.
        Ge = 5, ">=";
        /// Any write that changes the value (no operand).
        Changes = 6, "changes";
    }
}

/// A command from the client.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)] // variant fields: the payload fields of docs/debug-protocol.md
pub enum Request {
    /// The NF's name and the unit's sizes.
    Hello,
    /// Symbol `id`'s kind, size, widths and name.
    Symbol { id: u16 },
    /// Entry `index` of symbol `id`.
    Read { id: u16, index: u32 },
    /// Writes `entry` (laid out as the symbol's kind gives it) at `index`.
    Write { id: u16, index: u32, entry: Vec<u8> },
    /// The entry of table `id` holding `key`.
    Lookup { id: u16, key: Vec<u8> },
    /// Up to `count` counter values, from entry `index` of symbol `first` on.
    Counters { first: u16, index: u32, count: u8 },
    /// Zeroes counter symbol `id`, or every counter (`None`).
    ResetCounters { id: Option<u16> },
    /// Arms watchpoint `slot` ([`ANY_SLOT`]: the unit picks a free one): `op operand` on
    /// entry `index` of symbol `id`; `record` copies the packet that fired it into the
    /// notification.
    Watch { slot: u8, id: u16, index: u32, op: WatchOp, operand: Vec<u8>, record: bool },
    /// Disarms watchpoint `slot`, or all (`None`).
    Unwatch { slot: Option<u8> },
    /// The armed watchpoints.
    Watches,
    /// Traces every packet (its first `snap` bytes and verdict), or stops.
    Trace { on: bool, snap: u16 },
    /// Holds packets at the NF's input.
    Break,
    /// Releases `n` held packets.
    Step { n: u16 },
    /// Releases all and runs.
    Continue,
    /// The unit's state.
    Status,
    /// The hardware unit's register at byte address `addr` (the in-band path of the generated
    /// hardware: the host serves the other requests over these two).
    RegRead { addr: u32 },
    /// Writes `value` into the hardware unit's register at `addr`.
    RegWrite { addr: u32, value: u32 },
}

/// `watch`'s slot for "any free one": the unit picks it and says which, so two clients
/// never arm the same slot.
pub const ANY_SLOT: u8 = 0xff;

/// An armed watchpoint, as `watches` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchInfo {
    /// Its slot.
    pub slot: u8,
    /// The watched symbol.
    pub id: u16,
    /// The watched entry.
    pub index: u32,
    /// The comparison.
    pub op: WatchOp,
    /// The value compared with (empty for `changes`).
    pub operand: Vec<u8>,
    /// A hit carries the packet that caused it.
    pub record: bool,
}

/// What `hello` answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    /// Symbols in the table (numbered 0 … symbols − 1).
    pub symbols: u16,
    /// Watchpoints the unit can hold at once.
    pub watch_slots: u8,
    /// Trace records the unit buffers before the port takes them.
    pub trace_depth: u16,
    /// Packets `break` can hold.
    pub hold_depth: u16,
    /// Held at the input now.
    pub broken: bool,
    /// Tracing now.
    pub tracing: bool,
    /// Latencies (in trace records) are cycles (hardware), not nanoseconds (the CPU).
    pub latency_in_cycles: bool,
    /// The NF's name.
    pub nf: String,
    /// Bytes of each packet the unit can copy into a trace record or a watch hit (a longer
    /// snap length gets these).
    pub max_snap: u16,
}

/// What `symbol` answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolInfo {
    /// The kind ([`SymbolKind`]'s code).
    pub kind: u8,
    /// Entries.
    pub size: u32,
    /// Bits of a table's key (0 for other kinds).
    pub key_width: u16,
    /// Bits of the value.
    pub value_width: u16,
    /// How the client shows the key ([`Format`]'s code).
    pub key_format: u8,
    /// How the client shows the value.
    pub value_format: u8,
    /// The field, probe or counter name.
    pub name: String,
}

/// One counter of a `counters` reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterValue {
    /// The counter's symbol.
    pub id: u16,
    /// Its index (per port, per reason; 0 for a plain counter).
    pub index: u32,
    /// Its count.
    pub value: u64,
}

/// What `status` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitStatus {
    /// Held at the input now.
    pub broken: bool,
    /// Tracing now.
    pub tracing: bool,
    /// Packets held.
    pub held: u16,
    /// Packets that passed because the hold buffer was full.
    pub passed_while_full: u32,
    /// Watchpoint notifications sent.
    pub watch_hits: u32,
    /// Breaks the unit ended itself: no client was in touch for the break timeout.
    pub breaks_timed_out: u32,
}

/// A reply's payload, by the request's opcode. Replies other than `ok` carry [`Reply::Empty`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)] // variant fields: the payload fields of docs/debug-protocol.md
pub enum Reply {
    /// No payload: `write`, `reset_counters`, `unwatch`, `trace`, and every error.
    Empty,
    /// To `watch`: the slot armed.
    Watch { slot: u8 },
    /// To `watches`: the armed watchpoints, by slot.
    Watches(Vec<WatchInfo>),
    /// To `hello`.
    Hello(Hello),
    /// To `symbol`.
    Symbol(SymbolInfo),
    /// To `read`: the entry.
    Entry(Vec<u8>),
    /// To `lookup`: where the key is, and its entry.
    Found { index: u32, entry: Vec<u8> },
    /// To `counters`.
    Counters(Vec<CounterValue>),
    /// To `break`: packets held already.
    Break { held: u16 },
    /// To `step`.
    Step { released: u16, held: u16 },
    /// To `continue`.
    Continue { released: u16 },
    /// To `status`.
    Status(UnitStatus),
}

/// What became of a traced packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceVerdict {
    /// Dropped, with the `DropReason` code.
    Drop(u8),
    /// Sent out of the ports in the mask.
    Send(u32),
}

/// A message the unit sends on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)] // variant fields: the payload fields of docs/debug-protocol.md
pub enum Notification {
    /// Watchpoint `slot` fired on packet `packet_no`; `value` is the entry's new value;
    /// `packet` is the input port and first bytes, when the watch records.
    WatchHit { slot: u8, id: u16, index: u32, packet_no: u64, value: Vec<u8>, packet: Option<(u8, Vec<u8>)> },
    /// A traced packet: its verdict, latency (hardware: cycles; CPU: ns), length and first bytes.
    Trace { packet_no: u64, in_port: u8, verdict: TraceVerdict, latency: u32, len: u16, bytes: Vec<u8> },
    /// The hold buffer is full with `held` packets; further packets pass until `continue`.
    HoldFull { held: u16 },
}

/// A whole control message (without the Ethernet header).
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)] // variant fields: the payload fields of docs/debug-protocol.md
pub enum Message {
    /// A command.
    Request { seq: u32, request: Request },
    /// An answer to request `seq`, which had `opcode` (an [`Opcode`]'s code, or an unknown one
    /// answered `bad_opcode`).
    Reply { seq: u32, opcode: u8, status: Status, reply: Reply },
    /// The unit's `seq`-th notification.
    Notification { seq: u32, notification: Notification },
}

/// Why bytes are not a message, and what the unit answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeError {
    /// The sequence number to answer to; `None` when the header is cut before it (the unit
    /// drops and counts such a frame).
    pub seq: Option<u32>,
    /// The opcode byte as it arrived.
    pub opcode: u8,
    /// `bad_version`, `bad_opcode` or `malformed`.
    pub status: Status,
}

impl DecodeError {
    /// The reply the unit sends for a bad request, if it can address one.
    pub fn reply(&self) -> Option<Vec<u8>> {
        let seq = self.seq?;
        let mut out = header(Kind::Reply, self.opcode, self.status.code(), seq);
        finish(&mut out);
        Some(out)
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.seq {
            Some(seq) => write!(f, "{} (opcode {:#04x}, seq {seq})", self.status, self.opcode),
            None => write!(f, "{}: shorter than the control header", self.status),
        }
    }
}

impl std::error::Error for DecodeError {}

impl Request {
    /// The request's opcode.
    pub fn opcode(&self) -> Opcode {
        match self {
            Request::Hello => Opcode::Hello,
            Request::Symbol { .. } => Opcode::Symbol,
            Request::Read { .. } => Opcode::Read,
            Request::Write { .. } => Opcode::Write,
            Request::Lookup { .. } => Opcode::Lookup,
            Request::Counters { .. } => Opcode::Counters,
            Request::ResetCounters { .. } => Opcode::ResetCounters,
            Request::Watch { .. } => Opcode::Watch,
            Request::Unwatch { .. } => Opcode::Unwatch,
            Request::Watches => Opcode::Watches,
            Request::Trace { .. } => Opcode::Trace,
            Request::Break => Opcode::Break,
            Request::Step { .. } => Opcode::Step,
            Request::Continue => Opcode::Continue,
            Request::Status => Opcode::Status,
            Request::RegRead { .. } => Opcode::RegRead,
            Request::RegWrite { .. } => Opcode::RegWrite,
        }
    }
}

impl Notification {
    /// The notification's opcode.
    pub fn opcode(&self) -> Opcode {
        match self {
            Notification::WatchHit { .. } => Opcode::WatchHit,
            Notification::Trace { .. } => Opcode::TraceRecord,
            Notification::HoldFull { .. } => Opcode::HoldFull,
        }
    }
}

fn header(kind: Kind, opcode: u8, status: u8, seq: u32) -> Vec<u8> {
    let mut out = vec![VERSION, kind as u8, opcode, status];
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(&[0; 4]);
    out
}

/// Fills in `length`, capping the payload at [`MAX_PAYLOAD`] (encoders keep under it: the
/// snap length is capped, and entries are at most a few hundred bytes).
fn finish(out: &mut Vec<u8>) {
    out.truncate(HEADER_LEN + MAX_PAYLOAD);
    let len = (out.len() - HEADER_LEN) as u16;
    out[8..10].copy_from_slice(&len.to_be_bytes());
}

fn put_name(out: &mut Vec<u8>, name: &str) {
    let b = &name.as_bytes()[..name.len().min(255)];
    out.push(b.len() as u8);
    out.extend_from_slice(b);
}

/// Encodes `msg` as header and payload (the Ethernet header is [`frame`]'s).
pub fn encode(msg: &Message) -> Vec<u8> {
    let mut out = match msg {
        Message::Request { seq, request } => {
            let mut o = header(Kind::Request, request.opcode().code(), 0, *seq);
            encode_request(&mut o, request);
            o
        }
        Message::Reply { seq, opcode, status, reply } => {
            let mut o = header(Kind::Reply, *opcode, status.code(), *seq);
            encode_reply(&mut o, reply);
            o
        }
        Message::Notification { seq, notification } => {
            let mut o = header(Kind::Notification, notification.opcode().code(), 0, *seq);
            encode_notification(&mut o, notification);
            o
        }
    };
    finish(&mut out);
    out
}

fn encode_request(o: &mut Vec<u8>, r: &Request) {
    match r {
        Request::Hello | Request::Break | Request::Continue | Request::Status | Request::Watches => {}
        Request::RegRead { addr } => o.extend_from_slice(&addr.to_be_bytes()),
        Request::RegWrite { addr, value } => {
            o.extend_from_slice(&addr.to_be_bytes());
            o.extend_from_slice(&value.to_be_bytes());
        }
        Request::Symbol { id } => o.extend_from_slice(&id.to_be_bytes()),
        Request::Read { id, index } => {
            o.extend_from_slice(&id.to_be_bytes());
            o.extend_from_slice(&index.to_be_bytes());
        }
        Request::Write { id, index, entry } => {
            o.extend_from_slice(&id.to_be_bytes());
            o.extend_from_slice(&index.to_be_bytes());
            o.extend_from_slice(entry);
        }
        Request::Lookup { id, key } => {
            o.extend_from_slice(&id.to_be_bytes());
            o.extend_from_slice(key);
        }
        Request::Counters { first, index, count } => {
            o.extend_from_slice(&first.to_be_bytes());
            o.extend_from_slice(&index.to_be_bytes());
            o.push(*count);
        }
        Request::ResetCounters { id } => o.extend_from_slice(&id.unwrap_or(0xffff).to_be_bytes()),
        Request::Watch { slot, id, index, op, operand, record } => {
            o.push(*slot);
            o.extend_from_slice(&id.to_be_bytes());
            o.extend_from_slice(&index.to_be_bytes());
            o.push(op.code());
            o.extend_from_slice(operand);
            o.push(*record as u8);
        }
        Request::Unwatch { slot } => o.push(slot.unwrap_or(0xff)),
        Request::Trace { on, snap } => {
            o.push(*on as u8);
            o.extend_from_slice(&snap.to_be_bytes());
        }
        Request::Step { n } => o.extend_from_slice(&n.to_be_bytes()),
    }
}

fn encode_reply(o: &mut Vec<u8>, r: &Reply) {
    match r {
        Reply::Empty => {}
        Reply::Watch { slot } => o.push(*slot),
        Reply::Watches(ws) => {
            for w in ws {
                o.push(w.slot);
                o.extend_from_slice(&w.id.to_be_bytes());
                o.extend_from_slice(&w.index.to_be_bytes());
                o.push(w.op.code());
                o.push(w.record as u8);
                o.push(w.operand.len().min(255) as u8);
                o.extend_from_slice(&w.operand[..w.operand.len().min(255)]);
            }
        }
        Reply::Hello(h) => {
            o.extend_from_slice(&h.symbols.to_be_bytes());
            o.push(h.watch_slots);
            o.extend_from_slice(&h.trace_depth.to_be_bytes());
            o.extend_from_slice(&h.hold_depth.to_be_bytes());
            o.push(h.broken as u8 | (h.tracing as u8) << 1 | (h.latency_in_cycles as u8) << 2);
            put_name(o, &h.nf);
            o.extend_from_slice(&h.max_snap.to_be_bytes());
        }
        Reply::Symbol(s) => {
            o.push(s.kind);
            o.extend_from_slice(&s.size.to_be_bytes());
            o.extend_from_slice(&s.key_width.to_be_bytes());
            o.extend_from_slice(&s.value_width.to_be_bytes());
            o.push(s.key_format);
            o.push(s.value_format);
            put_name(o, &s.name);
        }
        Reply::Entry(e) => o.extend_from_slice(e),
        Reply::Found { index, entry } => {
            o.extend_from_slice(&index.to_be_bytes());
            o.extend_from_slice(entry);
        }
        Reply::Counters(cs) => {
            for c in cs {
                o.extend_from_slice(&c.id.to_be_bytes());
                o.extend_from_slice(&c.index.to_be_bytes());
                o.extend_from_slice(&c.value.to_be_bytes());
            }
        }
        Reply::Break { held } => o.extend_from_slice(&held.to_be_bytes()),
        Reply::Step { released, held } => {
            o.extend_from_slice(&released.to_be_bytes());
            o.extend_from_slice(&held.to_be_bytes());
        }
        Reply::Continue { released } => o.extend_from_slice(&released.to_be_bytes()),
        Reply::Status(s) => {
            o.push(s.broken as u8 | (s.tracing as u8) << 1);
            o.extend_from_slice(&s.held.to_be_bytes());
            o.extend_from_slice(&s.passed_while_full.to_be_bytes());
            o.extend_from_slice(&s.watch_hits.to_be_bytes());
            o.extend_from_slice(&s.breaks_timed_out.to_be_bytes());
        }
    }
}

fn encode_notification(o: &mut Vec<u8>, n: &Notification) {
    match n {
        Notification::WatchHit { slot, id, index, packet_no, value, packet } => {
            o.push(*slot);
            o.extend_from_slice(&id.to_be_bytes());
            o.extend_from_slice(&index.to_be_bytes());
            o.extend_from_slice(&packet_no.to_be_bytes());
            o.push(value.len().min(255) as u8);
            o.extend_from_slice(&value[..value.len().min(255)]);
            if let Some((port, bytes)) = packet {
                o.push(*port);
                o.extend_from_slice(&bytes[..bytes.len().min(MAX_SNAP as usize)]);
            }
        }
        Notification::Trace { packet_no, in_port, verdict, latency, len, bytes } => {
            o.extend_from_slice(&packet_no.to_be_bytes());
            o.push(*in_port);
            let (kind, detail) = match verdict {
                TraceVerdict::Drop(reason) => (0, *reason as u32),
                TraceVerdict::Send(mask) => (1, *mask),
            };
            o.push(kind);
            o.extend_from_slice(&detail.to_be_bytes());
            o.extend_from_slice(&latency.to_be_bytes());
            o.extend_from_slice(&len.to_be_bytes());
            o.extend_from_slice(&bytes[..bytes.len().min(MAX_SNAP as usize)]);
        }
        Notification::HoldFull { held } => o.extend_from_slice(&held.to_be_bytes()),
    }
}

/// Reads a payload field by field; any read past its end makes the message `malformed`.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ()> {
        if self.0.len() < n {
            return Err(());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, ()> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, ()> {
        Ok(u16::from_be_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, ()> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, ()> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn flag(&mut self) -> Result<bool, ()> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(()),
        }
    }
    /// The `broken`/`tracing` flags byte; other bits set make the message malformed.
    fn flags(&mut self) -> Result<(bool, bool), ()> {
        match self.u8()? {
            f if f & !3 == 0 => Ok((f & 1 != 0, f & 2 != 0)),
            _ => Err(()),
        }
    }
    fn name(&mut self) -> Result<String, ()> {
        let n = self.u8()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| ())
    }
    fn rest(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.0).to_vec()
    }
    /// Everything read: a fixed-size payload with bytes left over is malformed.
    fn end(&self) -> Result<(), ()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(())
        }
    }
}

/// Decodes one message (header and payload; bytes past `length` — Ethernet padding — are
/// ignored).
pub fn decode(bytes: &[u8]) -> Result<Message, DecodeError> {
    let opcode_byte = bytes.get(2).copied().unwrap_or(0);
    if bytes.len() < 8 {
        return Err(DecodeError { seq: None, opcode: opcode_byte, status: Status::Malformed });
    }
    let seq = u32::from_be_bytes(bytes[4..8].try_into().unwrap());
    let fail = |status| DecodeError { seq: Some(seq), opcode: opcode_byte, status };
    if bytes[0] != VERSION {
        return Err(fail(Status::BadVersion));
    }
    if bytes.len() < HEADER_LEN {
        return Err(fail(Status::Malformed));
    }
    let length = u16::from_be_bytes([bytes[8], bytes[9]]) as usize;
    if length > MAX_PAYLOAD || HEADER_LEN + length > bytes.len() {
        return Err(fail(Status::Malformed));
    }
    let mut f = Fields(&bytes[HEADER_LEN..HEADER_LEN + length]);
    let opcode = Opcode::from_code(opcode_byte);
    let malformed = |_| fail(Status::Malformed);
    match (bytes[1], opcode) {
        (0, Some(opcode)) => {
            let request = decode_request(opcode, &mut f).map_err(|bad_opcode| {
                if bad_opcode {
                    fail(Status::BadOpcode)
                } else {
                    fail(Status::Malformed)
                }
            })?;
            Ok(Message::Request { seq, request })
        }
        // An error reply may answer an opcode this side does not know (a newer client's).
        (1, _) => {
            let status = Status::from_code(bytes[3]).ok_or(fail(Status::Malformed))?;
            let reply = match (status, opcode) {
                (Status::Ok, Some(opcode)) => decode_reply(opcode, &mut f).map_err(malformed)?,
                (Status::Ok, None) => return Err(fail(Status::BadOpcode)),
                _ => Reply::Empty,
            };
            f.end().map_err(malformed)?;
            Ok(Message::Reply { seq, opcode: opcode_byte, status, reply })
        }
        (2, Some(opcode)) => {
            let notification = decode_notification(opcode, &mut f).map_err(malformed)?;
            Ok(Message::Notification { seq, notification })
        }
        (0 | 2, None) => Err(fail(Status::BadOpcode)),
        _ => Err(fail(Status::Malformed)),
    }
}

/// `Err(true)`: not a request's opcode; `Err(false)`: the payload does not fit it.
fn decode_request(opcode: Opcode, f: &mut Fields) -> Result<Request, bool> {
    let r = (|| {
        Ok(match opcode {
            Opcode::Hello => Request::Hello,
            Opcode::Symbol => Request::Symbol { id: f.u16()? },
            Opcode::Read => Request::Read { id: f.u16()?, index: f.u32()? },
            Opcode::Write => Request::Write { id: f.u16()?, index: f.u32()?, entry: f.rest() },
            Opcode::Lookup => Request::Lookup { id: f.u16()?, key: f.rest() },
            Opcode::Counters => Request::Counters { first: f.u16()?, index: f.u32()?, count: f.u8()? },
            Opcode::ResetCounters => Request::ResetCounters { id: Some(f.u16()?).filter(|&id| id != 0xffff) },
            Opcode::Watch => {
                let (slot, id, index) = (f.u8()?, f.u16()?, f.u32()?);
                let op = WatchOp::from_code(f.u8()?).ok_or(())?;
                let mut operand = f.rest();
                let record = match operand.pop() {
                    Some(0) => false,
                    Some(1) => true,
                    _ => return Err(()),
                };
                Request::Watch { slot, id, index, op, operand, record }
            }
            Opcode::Unwatch => Request::Unwatch { slot: Some(f.u8()?).filter(|&s| s != 0xff) },
            Opcode::Watches => Request::Watches,
            Opcode::Trace => {
                Request::Trace { on: f.flag()?, snap: Some(f.u16()?).filter(|&s| s <= MAX_SNAP).ok_or(())? }
            }
            Opcode::Break => Request::Break,
            Opcode::Step => Request::Step { n: f.u16()? },
            Opcode::Continue => Request::Continue,
            Opcode::Status => Request::Status,
            Opcode::RegRead => Request::RegRead { addr: f.u32()? },
            Opcode::RegWrite => Request::RegWrite { addr: f.u32()?, value: f.u32()? },
            Opcode::WatchHit | Opcode::TraceRecord | Opcode::HoldFull => return Err(()),
        })
    })();
    match r {
        Err(()) if opcode.code() >= 0x80 => Err(true),
        Err(()) => Err(false),
        Ok(r) => f.end().map(|_| r).map_err(|_| false),
    }
}

fn decode_reply(opcode: Opcode, f: &mut Fields) -> Result<Reply, ()> {
    Ok(match opcode {
        Opcode::Hello => {
            let (symbols, watch_slots, trace_depth, hold_depth) = (f.u16()?, f.u8()?, f.u16()?, f.u16()?);
            let flags = f.u8()?;
            if flags & !7 != 0 {
                return Err(());
            }
            let (broken, tracing, latency_in_cycles) = (flags & 1 != 0, flags & 2 != 0, flags & 4 != 0);
            let nf = f.name()?;
            Reply::Hello(Hello {
                symbols,
                watch_slots,
                trace_depth,
                hold_depth,
                broken,
                tracing,
                latency_in_cycles,
                nf,
                max_snap: f.u16()?,
            })
        }
        Opcode::Symbol => Reply::Symbol(SymbolInfo {
            kind: f.u8()?,
            size: f.u32()?,
            key_width: f.u16()?,
            value_width: f.u16()?,
            key_format: f.u8()?,
            value_format: f.u8()?,
            name: f.name()?,
        }),
        Opcode::Read | Opcode::RegRead => Reply::Entry(f.rest()),
        Opcode::Lookup => Reply::Found { index: f.u32()?, entry: f.rest() },
        Opcode::Counters => {
            let mut cs = Vec::new();
            while !f.0.is_empty() {
                cs.push(CounterValue { id: f.u16()?, index: f.u32()?, value: f.u64()? });
            }
            Reply::Counters(cs)
        }
        Opcode::Break => Reply::Break { held: f.u16()? },
        Opcode::Step => Reply::Step { released: f.u16()?, held: f.u16()? },
        Opcode::Continue => Reply::Continue { released: f.u16()? },
        Opcode::Status => {
            let (broken, tracing) = f.flags()?;
            Reply::Status(UnitStatus {
                broken,
                tracing,
                held: f.u16()?,
                passed_while_full: f.u32()?,
                watch_hits: f.u32()?,
                breaks_timed_out: f.u32()?,
            })
        }
        Opcode::Watch if !f.0.is_empty() => Reply::Watch { slot: f.u8()? },
        Opcode::Watches => {
            let mut ws = Vec::new();
            while !f.0.is_empty() {
                let (slot, id, index) = (f.u8()?, f.u16()?, f.u32()?);
                let op = WatchOp::from_code(f.u8()?).ok_or(())?;
                let record = f.flag()?;
                let n = f.u8()? as usize;
                ws.push(WatchInfo { slot, id, index, op, record, operand: f.take(n)?.to_vec() });
            }
            Reply::Watches(ws)
        }
        Opcode::Write | Opcode::ResetCounters | Opcode::Watch | Opcode::Unwatch | Opcode::Trace | Opcode::RegWrite => {
            Reply::Empty
        }
        Opcode::WatchHit | Opcode::TraceRecord | Opcode::HoldFull => return Err(()),
    })
}

fn decode_notification(opcode: Opcode, f: &mut Fields) -> Result<Notification, ()> {
    let n = match opcode {
        Opcode::WatchHit => {
            let (slot, id, index, packet_no) = (f.u8()?, f.u16()?, f.u32()?, f.u64()?);
            let n = f.u8()? as usize;
            let value = f.take(n)?.to_vec();
            let packet = if f.0.is_empty() { None } else { Some((f.u8()?, f.rest())) };
            Notification::WatchHit { slot, id, index, packet_no, value, packet }
        }
        Opcode::TraceRecord => {
            let (packet_no, in_port, kind, detail) = (f.u64()?, f.u8()?, f.u8()?, f.u32()?);
            let verdict = match kind {
                0 if detail <= 0xff => TraceVerdict::Drop(detail as u8),
                1 => TraceVerdict::Send(detail),
                _ => return Err(()),
            };
            Notification::Trace { packet_no, in_port, verdict, latency: f.u32()?, len: f.u16()?, bytes: f.rest() }
        }
        Opcode::HoldFull => Notification::HoldFull { held: f.u16()? },
        _ => return Err(()),
    };
    f.end()?;
    Ok(n)
}

/// An encoded message ([`encode`]) in an Ethernet frame from `src` to `dst`, padded to the 60-byte minimum.
pub fn frame(dst: [u8; 6], src: [u8; 6], encoded: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(14 + encoded.len().max(46));
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&ETHERTYPE.to_be_bytes());
    f.extend_from_slice(encoded);
    f.resize(f.len().max(60), 0);
    f
}

/// The control message in `frame`, if its EtherType (untagged) is [`ETHERTYPE`].
pub fn payload(frame: &[u8]) -> Option<&[u8]> {
    (frame.len() >= 14 && frame[12..14] == ETHERTYPE.to_be_bytes()).then(|| &frame[14..])
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
        vec(any::<u8>(), 0..max)
    }

    fn request() -> impl Strategy<Value = Request> {
        prop_oneof![
            Just(Request::Hello),
            any::<u16>().prop_map(|id| Request::Symbol { id }),
            (any::<u16>(), any::<u32>()).prop_map(|(id, index)| Request::Read { id, index }),
            (any::<u16>(), any::<u32>(), bytes(80)).prop_map(|(id, index, entry)| Request::Write { id, index, entry }),
            (any::<u16>(), bytes(80)).prop_map(|(id, key)| Request::Lookup { id, key }),
            (any::<u16>(), any::<u32>(), any::<u8>()).prop_map(|(first, index, count)| Request::Counters {
                first,
                index,
                count
            }),
            (0u16..0xffff).prop_map(|id| Request::ResetCounters { id: Some(id) }),
            Just(Request::ResetCounters { id: None }),
            (any::<u8>(), any::<u16>(), any::<u32>(), 0u8..7, bytes(16), any::<bool>()).prop_map(
                |(slot, id, index, op, operand, record)| Request::Watch {
                    slot,
                    id,
                    index,
                    op: WatchOp::from_code(op).unwrap(),
                    operand,
                    record
                }
            ),
            (0u8..0xff).prop_map(|s| Request::Unwatch { slot: Some(s) }),
            (any::<bool>(), 0..=MAX_SNAP).prop_map(|(on, snap)| Request::Trace { on, snap }),
            Just(Request::Break),
            any::<u16>().prop_map(|n| Request::Step { n }),
            Just(Request::Continue),
            Just(Request::Status),
            Just(Request::Watches),
            any::<u32>().prop_map(|addr| Request::RegRead { addr }),
            (any::<u32>(), any::<u32>()).prop_map(|(addr, value)| Request::RegWrite { addr, value }),
        ]
    }

    fn notification() -> impl Strategy<Value = Notification> {
        prop_oneof![
            (
                any::<u8>(),
                any::<u16>(),
                any::<u32>(),
                any::<u64>(),
                bytes(32),
                proptest::option::of((any::<u8>(), bytes(200)))
            )
                .prop_map(|(slot, id, index, packet_no, value, packet)| Notification::WatchHit {
                    slot,
                    id,
                    index,
                    packet_no,
                    value,
                    packet
                }),
            (any::<u64>(), any::<u8>(), any::<bool>(), any::<u32>(), any::<u32>(), any::<u16>(), bytes(200)).prop_map(
                |(packet_no, in_port, drop, detail, latency, len, bytes)| Notification::Trace {
                    packet_no,
                    in_port,
                    verdict: if drop { TraceVerdict::Drop(detail as u8) } else { TraceVerdict::Send(detail) },
                    latency,
                    len,
                    bytes
                }
            ),
            any::<u16>().prop_map(|held| Notification::HoldFull { held }),
        ]
    }

    proptest! {
        /// Whatever arrives, decoding answers without panicking, and a request it accepts
        /// encodes back to the same bytes (so nothing is read that was not there).
        #[test]
        fn any_bytes_decode_or_say_what_is_wrong(b in bytes(300)) {
            match decode(&b) {
                Ok(m @ Message::Request { .. }) => {
                    let len = u16::from_be_bytes([b[8], b[9]]) as usize;
                    let mut again = encode(&m);
                    again[3] = b[3];
                    again[10..12].copy_from_slice(&b[10..12]);
                    prop_assert_eq!(&again[..], &b[..HEADER_LEN + len]);
                }
                Ok(_) => {}
                Err(e) => {
                    prop_assert!(matches!(e.status, Status::Malformed | Status::BadVersion | Status::BadOpcode));
                    prop_assert_eq!(e.seq.is_none(), b.len() < 8);
                    if let Some(r) = e.reply() {
                        let empty_reply = matches!(decode(&r), Ok(Message::Reply { reply: Reply::Empty, .. }));
                        prop_assert!(empty_reply);
                    }
                }
            }
        }

        /// Well-formed headers over random payloads: every opcode's payload parser meets
        /// short, long and nonsensical payloads.
        #[test]
        fn any_payload_under_a_good_header(kind in 0u8..3, op in 0usize..18, seq in any::<u32>(), p in bytes(60)) {
            let codes = [1, 2, 0x10, 0x11, 0x12, 0x20, 0x21, 0x30, 0x31, 0x32, 0x40, 0x50, 0x51, 0x52, 0x53, 0x80, 0x81, 0x82];
            let mut b = vec![VERSION, kind, codes[op], 0];
            b.extend_from_slice(&seq.to_be_bytes());
            b.extend_from_slice(&(p.len() as u16).to_be_bytes());
            b.extend_from_slice(&[0, 0]);
            b.extend_from_slice(&p);
            match decode(&b) {
                Ok(m) => prop_assert_eq!(encode(&m), b),
                Err(e) => prop_assert_eq!(e.seq, Some(seq)),
            }
        }

        #[test]
        fn requests_round_trip(seq in any::<u32>(), request in request()) {
            let m = Message::Request { seq, request };
            prop_assert_eq!(decode(&encode(&m)), Ok(m));
        }

        #[test]
        fn notifications_round_trip(seq in any::<u32>(), notification in notification()) {
            let m = Message::Notification { seq, notification };
            prop_assert_eq!(decode(&encode(&m)), Ok(m));
        }

        /// Ethernet padding after the payload is not part of the message.
        #[test]
        fn padding_is_ignored(request in request(), pad in bytes(40)) {
            let m = Message::Request { seq: 9, request };
            let mut f = frame([0xff; 6], [2, 0, 0, 0, 0, 1], &encode(&m));
            f.extend(pad);
            prop_assert_eq!(decode(payload(&f).unwrap()), Ok(m));
        }
    }

    #[test]
    fn replies_round_trip() {
        let replies = [
            (
                Opcode::Hello,
                Reply::Hello(Hello {
                    symbols: 7,
                    watch_slots: 4,
                    trace_depth: 16,
                    hold_depth: 64,
                    broken: true,
                    tracing: false,
                    latency_in_cycles: true,
                    nf: "nat".into(),
                    max_snap: 64,
                }),
            ),
            (
                Opcode::Symbol,
                Reply::Symbol(SymbolInfo {
                    kind: 3,
                    size: 16,
                    key_width: 48,
                    value_width: 8,
                    key_format: Format::Mac.code(),
                    value_format: Format::Uint.code(),
                    name: "mac_table".into(),
                }),
            ),
            (Opcode::Read, Reply::Entry(vec![1, 2, 3, 4, 5, 6, 7, 8])),
            (Opcode::Lookup, Reply::Found { index: 3, entry: vec![1, 0, 0, 0, 0, 0, 9, 2] }),
            (
                Opcode::Counters,
                Reply::Counters(vec![
                    CounterValue { id: 1, index: 0, value: 5 },
                    CounterValue { id: 9, index: 3, value: u64::MAX },
                ]),
            ),
            (Opcode::Counters, Reply::Counters(vec![])),
            (Opcode::Write, Reply::Empty),
            (Opcode::Break, Reply::Break { held: 2 }),
            (Opcode::Step, Reply::Step { released: 3, held: 0 }),
            (Opcode::Continue, Reply::Continue { released: 0 }),
            (
                Opcode::Status,
                Reply::Status(UnitStatus {
                    broken: false,
                    tracing: true,
                    held: 0,
                    passed_while_full: 12,
                    watch_hits: 1,
                    breaks_timed_out: 2,
                }),
            ),
            (Opcode::Watch, Reply::Watch { slot: 3 }),
            (Opcode::Watch, Reply::Empty),
            (
                Opcode::Watches,
                Reply::Watches(vec![
                    WatchInfo { slot: 0, id: 2, index: 0, op: WatchOp::Ge, operand: vec![0, 4], record: true },
                    WatchInfo { slot: 5, id: 1, index: 9, op: WatchOp::Changes, operand: vec![], record: false },
                ]),
            ),
            (Opcode::Watches, Reply::Watches(vec![])),
        ];
        for (opcode, reply) in replies {
            let m = Message::Reply { seq: 41, opcode: opcode.code(), status: Status::Ok, reply };
            assert_eq!(decode(&encode(&m)), Ok(m));
        }
        let err = Message::Reply { seq: 1, opcode: 0x10, status: Status::BadIndex, reply: Reply::Empty };
        assert_eq!(decode(&encode(&err)), Ok(err));
    }

    /// The layout of docs/debug-protocol.md, byte by byte, for one request and one reply.
    #[test]
    fn bytes_on_the_wire_are_the_documented_ones() {
        let read = Message::Request { seq: 0x0102_0304, request: Request::Read { id: 5, index: 3 } };
        assert_eq!(encode(&read), [1, 0, 0x10, 0, 1, 2, 3, 4, 0, 6, 0, 0, 0, 5, 0, 0, 0, 3]);
        let f = frame([0xff; 6], [2, 0, 0, 0, 0, 1], &encode(&read));
        assert_eq!((f.len(), &f[12..14]), (60, &[0x88, 0xb5][..]));
        let bad = DecodeError { seq: Some(7), opcode: 0x10, status: Status::NoSuchSymbol };
        assert_eq!(bad.reply().unwrap(), [1, 1, 0x10, 4, 0, 0, 0, 7, 0, 0, 0, 0]);
    }

    #[test]
    fn bad_requests_get_the_documented_status() {
        let read = encode(&Message::Request { seq: 3, request: Request::Read { id: 5, index: 3 } });
        let status = |b: &[u8]| decode(b).unwrap_err().status;
        let mut v2 = read.clone();
        v2[0] = 2;
        assert_eq!(status(&v2), Status::BadVersion);
        let mut unknown = read.clone();
        unknown[2] = 0x77;
        assert_eq!(status(&unknown), Status::BadOpcode);
        let mut note = read.clone();
        note[2] = Opcode::WatchHit.code();
        assert_eq!(status(&note), Status::BadOpcode, "a notification's opcode in a request");
        assert_eq!(status(&read[..HEADER_LEN + 3]), Status::Malformed, "length runs past the frame");
        let mut long = read.clone();
        long[9] = 7;
        long.push(0);
        assert_eq!(status(&long), Status::Malformed, "a byte more than `read` takes");
        assert_eq!(decode(&read[..5]).unwrap_err().seq, None);
        let mut trace = encode(&Message::Request { seq: 1, request: Request::Trace { on: true, snap: 64 } });
        trace[HEADER_LEN] = 2;
        assert_eq!(status(&trace), Status::Malformed, "`on` is 0 or 1");
    }
}

//! The operations of the IR, each with its exact semantics.
//!
//! An operation takes values (SSA, each defined once) and produces zero or more values. All
//! values are unsigned bit vectors ([`Type`]); "the width" below is the width of an operand or
//! result. Arithmetic is modulo 2<sup>width</sup>; nothing traps, nothing is undefined.
//!
//! Packet and state operations follow `emu_core` exactly (`Packet`, the state elements): the
//! CPU target's behaviour is the semantics, and the interpreter runs them through the same code.

use super::bits::BitVec;
use super::function::{Function, StateId, StateKind, Value};
use super::types::Type;
use core::fmt;

/// A one-operand bit-vector operation; the result has the operand's width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `not a`: bitwise complement.
    Not,
    /// `neg a`: two's-complement negation, 2<sup>w</sup> − a mod 2<sup>w</sup>.
    Neg,
}

/// A two-operand bit-vector operation; the result has the first operand's width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `add a, b`: a + b mod 2<sup>w</sup>. Operands of one width.
    Add,
    /// `sub a, b`: a − b mod 2<sup>w</sup>. Operands of one width.
    Sub,
    /// `mul a, b`: a × b mod 2<sup>w</sup>. Operands of one width.
    Mul,
    /// `and a, b`: bitwise and. Operands of one width.
    And,
    /// `or a, b`: bitwise or. Operands of one width.
    Or,
    /// `xor a, b`: bitwise exclusive or. Operands of one width.
    Xor,
    /// `shl a, n`: a shifted left by n, zeros in; n ≥ w gives 0. `n` may have any width.
    Shl,
    /// `lshr a, n`: a shifted right by n, zeros in; n ≥ w gives 0. `n` may have any width.
    Lshr,
    /// `ashr a, n`: a shifted right by n, copies of a's top bit in; n ≥ w gives all copies.
    /// `n` may have any width.
    Ashr,
}

impl BinaryOp {
    /// True for the shifts, whose amount operand may have any width.
    pub fn is_shift(self) -> bool {
        matches!(self, BinaryOp::Shl | BinaryOp::Lshr | BinaryOp::Ashr)
    }

    /// True when `a op b == b op a`.
    pub fn is_commutative(self) -> bool {
        matches!(self, BinaryOp::Add | BinaryOp::Mul | BinaryOp::And | BinaryOp::Or | BinaryOp::Xor)
    }
}

/// A comparison of two operands of one width; the result is `u1` (1 when it holds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// a = b
    Eq,
    /// a ≠ b
    Ne,
    /// a < b, unsigned
    Ult,
    /// a ≤ b, unsigned
    Ule,
    /// a > b, unsigned
    Ugt,
    /// a ≥ b, unsigned
    Uge,
    /// a < b, two's complement
    Slt,
    /// a ≤ b, two's complement
    Sle,
    /// a > b, two's complement
    Sgt,
    /// a ≥ b, two's complement
    Sge,
}

/// A change of width; the target width is carried by the op (and is its result's width).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CastOp {
    /// `zext a`: zeros above; the target width is ≥ a's.
    Zext,
    /// `sext a`: copies of a's top bit above; the target width is ≥ a's.
    Sext,
    /// `trunc a`: the low bits; the target width is ≤ a's.
    Trunc,
}

/// A field of the packet's metadata (`emu_core::Meta`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetaField {
    /// `meta.in_port: u8`, the port the packet came in by.
    InPort,
    /// `meta.len: u16`, the frame's length as it arrived (not changed by `pkt.set_len`).
    Len,
    /// `meta.timestamp: u64`, arrival time in nanoseconds.
    Timestamp,
}

impl MetaField {
    /// The field's type.
    pub fn ty(self) -> Type {
        Type::uint(match self {
            MetaField::InPort => 8,
            MetaField::Len => 16,
            MetaField::Timestamp => 64,
        })
    }
}

/// Which bytes a one's-complement sum may see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SumScope {
    /// The header window: bytes at or past `min(len, window)` count as 0 — what a checksum
    /// over a header view (`ipv4().checksum_ok()`) sees.
    Window,
    /// The whole frame, past the window too, clipped to the frame's length:
    /// `Packet::ones_sum` (ingress accumulates the part past the window in hardware).
    Frame,
}

/// A byte address in the packet: `base + offset`, or just `offset` when there is no base.
///
/// The base is read as an unsigned number (saturating at 2<sup>64</sup> − 1, which is past
/// every packet) and the sum does not wrap. Printed `6`, `v7`, or `v7+4`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Addr {
    /// The computed part, if any.
    pub base: Option<Value>,
    /// The constant part.
    pub offset: u32,
}

impl Addr {
    /// The constant address `offset`.
    pub const fn at(offset: u32) -> Addr {
        Addr { base: None, offset }
    }

    /// The computed address `base + offset`.
    pub const fn dynamic(base: Value, offset: u32) -> Addr {
        Addr { base: Some(base), offset }
    }

    /// The byte address for a base of value `base` (ignored when there is no base).
    pub fn resolve(&self, base: Option<&BitVec>) -> u64 {
        let b = base.map_or(0, |b| b.to_u64_saturating());
        b.saturating_add(self.offset as u64)
    }
}

impl From<u32> for Addr {
    fn from(offset: u32) -> Addr {
        Addr::at(offset)
    }
}

impl From<Value> for Addr {
    fn from(base: Value) -> Addr {
        Addr::dynamic(base, 0)
    }
}

impl core::ops::Add<u32> for Value {
    type Output = Addr;
    /// `l4 + 2` is the address two bytes past the computed offset `l4`.
    fn add(self, offset: u32) -> Addr {
        Addr::dynamic(self, offset)
    }
}

impl core::ops::Add<u32> for Addr {
    type Output = Addr;
    fn add(self, more: u32) -> Addr {
        Addr { base: self.base, offset: self.offset + more }
    }
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.base, self.offset) {
            (None, o) => write!(f, "{o}"),
            (Some(b), 0) => write!(f, "{b}"),
            (Some(b), o) => write!(f, "{b}+{o}"),
        }
    }
}

/// An operation on a state element declared in the function. The element's kind must match
/// (a `cam.*` op on a Cam, …); key and value operands have the declared widths.
///
/// The semantics are those of `emu_core::state`, exactly (replacement order included); the
/// interpreter runs the CPU implementations.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StateOp {
    /// `counter.inc c`: adds 1 modulo 2<sup>bits</sup> (`Counter::inc`). No result.
    CounterInc,
    /// `counter.add c, n`: adds `n` (any width ≤ 64) modulo 2<sup>bits</sup> (`Counter::add`).
    /// No result.
    CounterAdd(Value),
    /// `counter.set c, v`: stores `v` (any width ≤ 64) modulo 2<sup>bits</sup>. No result.
    CounterSet(Value),
    /// `counter.get c`: the count, `u{bits}` (the Rust API zero-extends it to `u64`).
    CounterGet,
    /// `reg.get r`: the value held (`Register::get`), of the register's type.
    RegGet,
    /// `reg.set r, v`: replaces the value held. No result.
    RegSet(Value),
    /// `array.get a, i`: element `i` (any width), or 0 when `i ≥ size` (`Array::get`).
    ArrayGet(Value),
    /// `array.set a, i, v`: writes element `i` and gives `u1` 1; when `i ≥ size` writes
    /// nothing and gives 0 (`Array::set`).
    ArraySet(Value, Value),
    /// `cam.get t, k`: (`u1` found, value) — `Cam::get` as a pair; the value is 0 when not found.
    CamGet(Value),
    /// `cam.contains t, k`: `u1`, 1 when the key is stored.
    CamContains(Value),
    /// `cam.insert t, k, v`: stores (k, v) (`Cam::insert`: overwrite in place, else the lowest
    /// free slot, else evict at the round-robin pointer) and gives (`u1` evicted, key, value)
    /// of the evicted entry, key and value 0 when nothing was evicted.
    CamInsert(Value, Value),
    /// `cam.remove t, k`: removes the key, giving (`u1` was stored, its value or 0).
    CamRemove(Value),
    /// `lru.get t, k`: (`u1` found, value) — `Lru::get`; the value is 0 when not found. A hit
    /// makes the entry the most recently used (so this op writes); a miss changes nothing.
    LruGet(Value),
    /// `lru.peek t, k`: (`u1` found, value or 0) — `Lru::peek`: the recency order is unchanged.
    LruPeek(Value),
    /// `lru.contains t, k`: `u1`, 1 when the key is stored; changes nothing (`Lru::contains`).
    LruContains(Value),
    /// `lru.insert t, k, v`: stores (k, v) as the most recently used entry (`Lru::insert`:
    /// overwrite in place, else the lowest free slot, else replace the least recently used
    /// entry) and gives (`u1` evicted, key, value) of the evicted entry, key and value 0 when
    /// nothing was evicted.
    LruInsert(Value, Value),
    /// `lru.remove t, k`: removes the key (`Lru::remove`; the others keep their order), giving
    /// (`u1` was stored, its value or 0).
    LruRemove(Value),
    /// `hash_table.get t, k`: (`u1` found, value) — `HashTable::get`, looked up in the key's
    /// set only; the value is 0 when not found.
    HashGet(Value),
    /// `hash_table.contains t, k`: `u1`, 1 when the key is stored (`HashTable::contains`).
    HashContains(Value),
    /// `hash_table.insert t, k, v`: stores (k, v) in the key's set (`HashTable::insert`:
    /// overwrite in place, else the set's lowest free way, else evict the way at the set's
    /// round-robin pointer, which then advances) and gives (`u1` evicted, key, value) of the
    /// evicted entry, key and value 0 when nothing was evicted.
    HashInsert(Value, Value),
    /// `hash_table.remove t, k`: removes the key (no pointer moves), giving (`u1` was stored,
    /// its value or 0).
    HashRemove(Value),
    /// `tcam.lookup t, k`: (`u1` hit, result) — `Tcam::lookup`: the result of the
    /// lowest-index valid slot with `k & mask == value & mask`; the result is 0 on a miss.
    TcamLookup(Value),
    /// `tcam.lookup_slot t, k`: (`u1` hit, slot) — `Tcam::lookup_slot`: the lowest-index
    /// matching slot as a [`StateKind::slot_width`]-bit number, 0 on a miss.
    TcamLookupSlot(Value),
    /// `tcam.set t, i, value, mask, result`: writes the rule into slot `i` (any width) and
    /// gives `u1` 1; when `i ≥ size` writes nothing and gives 0 (`Tcam::set`). `value` and
    /// `mask` have the key's type, `result` the result's.
    TcamSet(Value, Value, Value, Value),
    /// `tcam.clear t, i`: invalidates slot `i` (any width); nothing when `i ≥ size`
    /// (`Tcam::clear`). No result.
    TcamClear(Value),
    /// `queue.push q, v`: appends `v` and gives `u1` 1 (`Queue::push`'s `Ok(())`); a full
    /// queue is left unchanged and gives 0 (`Err(v)`).
    QueuePush(Value),
    /// `queue.pop q`: (`u1` there was a value, the front value) — `Queue::pop` removes it; the
    /// value is 0 on an empty queue, which is left unchanged.
    QueuePop,
    /// `queue.peek q`: (`u1` there was a value, the front value or 0) — `Queue::peek`, which
    /// removes nothing.
    QueuePeek,
    /// `queue.len q`: the number of values held (`Queue::len`), a
    /// [`StateKind::count_width`]-bit number.
    QueueLen,
    /// `queue.is_empty q`: `u1`, 1 when no value is held (`Queue::is_empty`).
    QueueIsEmpty,
    /// `queue.is_full q`: `u1`, 1 when `size` values are held, so a push would fail
    /// (`Queue::is_full`).
    QueueIsFull,
}

impl StateOp {
    /// The op's name in the text form.
    pub fn name(&self) -> &'static str {
        match self {
            StateOp::CounterInc => "counter.inc",
            StateOp::CounterAdd(_) => "counter.add",
            StateOp::CounterSet(_) => "counter.set",
            StateOp::CounterGet => "counter.get",
            StateOp::RegGet => "reg.get",
            StateOp::RegSet(_) => "reg.set",
            StateOp::ArrayGet(_) => "array.get",
            StateOp::ArraySet(..) => "array.set",
            StateOp::CamGet(_) => "cam.get",
            StateOp::CamContains(_) => "cam.contains",
            StateOp::CamInsert(..) => "cam.insert",
            StateOp::CamRemove(_) => "cam.remove",
            StateOp::LruGet(_) => "lru.get",
            StateOp::LruPeek(_) => "lru.peek",
            StateOp::LruContains(_) => "lru.contains",
            StateOp::LruInsert(..) => "lru.insert",
            StateOp::LruRemove(_) => "lru.remove",
            StateOp::HashGet(_) => "hash_table.get",
            StateOp::HashContains(_) => "hash_table.contains",
            StateOp::HashInsert(..) => "hash_table.insert",
            StateOp::HashRemove(_) => "hash_table.remove",
            StateOp::TcamLookup(_) => "tcam.lookup",
            StateOp::TcamLookupSlot(_) => "tcam.lookup_slot",
            StateOp::TcamSet(..) => "tcam.set",
            StateOp::TcamClear(_) => "tcam.clear",
            StateOp::QueuePush(_) => "queue.push",
            StateOp::QueuePop => "queue.pop",
            StateOp::QueuePeek => "queue.peek",
            StateOp::QueueLen => "queue.len",
            StateOp::QueueIsEmpty => "queue.is_empty",
            StateOp::QueueIsFull => "queue.is_full",
        }
    }

    /// Every op's name in the text form, in declaration order.
    pub const NAMES: &'static [&'static str] = &[
        "counter.inc",
        "counter.add",
        "counter.set",
        "counter.get",
        "reg.get",
        "reg.set",
        "array.get",
        "array.set",
        "cam.get",
        "cam.contains",
        "cam.insert",
        "cam.remove",
        "lru.get",
        "lru.peek",
        "lru.contains",
        "lru.insert",
        "lru.remove",
        "hash_table.get",
        "hash_table.contains",
        "hash_table.insert",
        "hash_table.remove",
        "tcam.lookup",
        "tcam.lookup_slot",
        "tcam.set",
        "tcam.clear",
        "queue.push",
        "queue.pop",
        "queue.peek",
        "queue.len",
        "queue.is_empty",
        "queue.is_full",
    ];

    /// True when the op changes the element (`lru.get` does: a hit makes the entry the most
    /// recently used).
    pub fn writes(&self) -> bool {
        !matches!(
            self,
            StateOp::CounterGet
                | StateOp::RegGet
                | StateOp::ArrayGet(_)
                | StateOp::CamGet(_)
                | StateOp::CamContains(_)
                | StateOp::LruPeek(_)
                | StateOp::LruContains(_)
                | StateOp::HashGet(_)
                | StateOp::HashContains(_)
                | StateOp::TcamLookup(_)
                | StateOp::TcamLookupSlot(_)
                | StateOp::QueuePeek
                | StateOp::QueueLen
                | StateOp::QueueIsEmpty
                | StateOp::QueueIsFull
        )
    }

    /// The operands (keys, values, indices), in order.
    pub fn args(&self) -> Vec<Value> {
        match *self {
            StateOp::CounterInc
            | StateOp::CounterGet
            | StateOp::RegGet
            | StateOp::QueuePop
            | StateOp::QueuePeek
            | StateOp::QueueLen
            | StateOp::QueueIsEmpty
            | StateOp::QueueIsFull => vec![],
            StateOp::CounterAdd(a)
            | StateOp::CounterSet(a)
            | StateOp::RegSet(a)
            | StateOp::ArrayGet(a)
            | StateOp::CamGet(a)
            | StateOp::CamContains(a)
            | StateOp::CamRemove(a)
            | StateOp::LruGet(a)
            | StateOp::LruPeek(a)
            | StateOp::LruContains(a)
            | StateOp::LruRemove(a)
            | StateOp::HashGet(a)
            | StateOp::HashContains(a)
            | StateOp::HashRemove(a)
            | StateOp::TcamLookup(a)
            | StateOp::TcamLookupSlot(a)
            | StateOp::TcamClear(a)
            | StateOp::QueuePush(a) => vec![a],
            StateOp::ArraySet(a, b)
            | StateOp::CamInsert(a, b)
            | StateOp::LruInsert(a, b)
            | StateOp::HashInsert(a, b) => {
                vec![a, b]
            }
            StateOp::TcamSet(a, b, c, d) => vec![a, b, c, d],
        }
    }

    /// Replaces every operand `v` with `f(v)`.
    pub fn map_args(&mut self, mut f: impl FnMut(Value) -> Value) {
        match self {
            StateOp::CounterInc
            | StateOp::CounterGet
            | StateOp::RegGet
            | StateOp::QueuePop
            | StateOp::QueuePeek
            | StateOp::QueueLen
            | StateOp::QueueIsEmpty
            | StateOp::QueueIsFull => {}
            StateOp::CounterAdd(a)
            | StateOp::CounterSet(a)
            | StateOp::RegSet(a)
            | StateOp::ArrayGet(a)
            | StateOp::CamGet(a)
            | StateOp::CamContains(a)
            | StateOp::CamRemove(a)
            | StateOp::LruGet(a)
            | StateOp::LruPeek(a)
            | StateOp::LruContains(a)
            | StateOp::LruRemove(a)
            | StateOp::HashGet(a)
            | StateOp::HashContains(a)
            | StateOp::HashRemove(a)
            | StateOp::TcamLookup(a)
            | StateOp::TcamLookupSlot(a)
            | StateOp::TcamClear(a)
            | StateOp::QueuePush(a) => *a = f(*a),
            StateOp::ArraySet(a, b)
            | StateOp::CamInsert(a, b)
            | StateOp::LruInsert(a, b)
            | StateOp::HashInsert(a, b) => {
                *a = f(*a);
                *b = f(*b);
            }
            StateOp::TcamSet(a, b, c, d) => {
                *a = f(*a);
                *b = f(*b);
                *c = f(*c);
                *d = f(*d);
            }
        }
    }
}

/// What an operation does besides computing its results, from most to least movable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    /// Nothing: the results depend only on the operands (constants, arithmetic, metadata).
    Pure,
    /// Reads the packet (window, length or sum): must stay after the writes before it.
    ReadsPacket,
    /// Reads a state element: a memory access the scheduler places.
    ReadsState,
    /// Writes the packet or a state element: never removed, never reordered with accesses
    /// to the same thing.
    Writes,
}

impl Effect {
    /// True when an unused result lets the op be deleted.
    pub fn is_removable(self) -> bool {
        self != Effect::Writes
    }

    /// True when executing the op where it would not have run changes nothing but its
    /// results (if-conversion may hoist it). State reads are excluded: they cost a memory port.
    pub fn is_speculatable(self) -> bool {
        self <= Effect::ReadsPacket
    }
}

/// One operation. Operands are [`Value`]s; widths the result needs beyond its operands
/// (casts, slices, reads) are carried in the op, so the result types follow from the op and
/// its operand types alone ([`Op::result_types`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// `const c`: the constant, of its own width.
    Const(BitVec),
    /// See [`UnaryOp`].
    Unary(UnaryOp, Value),
    /// See [`BinaryOp`].
    Binary(BinaryOp, Value, Value),
    /// See [`CmpOp`]; gives `u1`.
    Cmp(CmpOp, Value, Value),
    /// See [`CastOp`]; gives `u{width}`.
    Cast(CastOp, Value, u16),
    /// `select c, a, b`: `a` when `c` (a `u1`) is 1, else `b`; `a` and `b` of one width.
    Select(Value, Value, Value),
    /// `slice a, lo` with result `u{width}`: bits `[lo, lo + width)` of `a`, bit 0 being the
    /// least significant; `lo + width ≤` a's width.
    Slice(Value, u16, u16),
    /// `concat hi, lo`: `hi` above `lo`, of the sum of their widths (≤ 256).
    Concat(Value, Value),
    /// `pkt.read addr, n`: the `n` bytes (1 ≤ n ≤ 32) at `addr` as a big-endian `u{8n}`
    /// (first byte most significant). Each byte at or past `min(len, window)` reads 0
    /// (`Packet::byte`): reads past the frame's end or the header window give 0.
    PktRead(Addr, u16),
    /// `pkt.write addr, v`: writes `v` (a whole number of bytes) big-endian at `addr`. Each
    /// byte at or past `min(len, window)` is dropped (`Packet::set_byte`). No result.
    PktWrite(Addr, Value),
    /// `pkt.len`: the frame's current length in bytes, `u16`.
    PktLen,
    /// `pkt.set_len n`: `Packet::set_len(n)`: shortens the frame to `n` bytes, or lengthens it
    /// with zero bytes, growth capped at the window (or at the old length if that is larger).
    /// `n` has any width ≤ 64. No result.
    PktSetLen(Value),
    /// See [`MetaField`].
    Meta(MetaField),
    /// `pkt.sum start, end` (frame) or `pkt.window_sum start, end` (window), `u32`: the
    /// one's-complement sum of bytes `[start, end)` taken as big-endian 16-bit words from
    /// `start`, an odd last byte padded with a zero byte, folded to 16 bits
    /// (`emu_core::wire::checksum::sum`, so the value is ≤ 0xffff; 0 when `start ≥ end`).
    /// See [`SumScope`] for which bytes are seen. `start`, `end` have any width.
    OnesSum(SumScope, Value, Value),
    /// `csum.fold a` (a of width ≤ 64), `u16`: end-around-carry fold
    /// (`checksum::fold`): while the value exceeds 0xffff, replace it with
    /// `(value & 0xffff) + (value >> 16)`.
    CsumFold(Value),
    /// See [`StateOp`].
    State(StateId, StateOp),
}

impl Op {
    /// The op's name in the text form.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Const(_) => "const",
            Op::Unary(UnaryOp::Not, _) => "not",
            Op::Unary(UnaryOp::Neg, _) => "neg",
            Op::Binary(op, ..) => match op {
                BinaryOp::Add => "add",
                BinaryOp::Sub => "sub",
                BinaryOp::Mul => "mul",
                BinaryOp::And => "and",
                BinaryOp::Or => "or",
                BinaryOp::Xor => "xor",
                BinaryOp::Shl => "shl",
                BinaryOp::Lshr => "lshr",
                BinaryOp::Ashr => "ashr",
            },
            Op::Cmp(op, ..) => match op {
                CmpOp::Eq => "eq",
                CmpOp::Ne => "ne",
                CmpOp::Ult => "ult",
                CmpOp::Ule => "ule",
                CmpOp::Ugt => "ugt",
                CmpOp::Uge => "uge",
                CmpOp::Slt => "slt",
                CmpOp::Sle => "sle",
                CmpOp::Sgt => "sgt",
                CmpOp::Sge => "sge",
            },
            Op::Cast(CastOp::Zext, ..) => "zext",
            Op::Cast(CastOp::Sext, ..) => "sext",
            Op::Cast(CastOp::Trunc, ..) => "trunc",
            Op::Select(..) => "select",
            Op::Slice(..) => "slice",
            Op::Concat(..) => "concat",
            Op::PktRead(..) => "pkt.read",
            Op::PktWrite(..) => "pkt.write",
            Op::PktLen => "pkt.len",
            Op::PktSetLen(_) => "pkt.set_len",
            Op::Meta(MetaField::InPort) => "meta.in_port",
            Op::Meta(MetaField::Len) => "meta.len",
            Op::Meta(MetaField::Timestamp) => "meta.timestamp",
            Op::OnesSum(SumScope::Frame, ..) => "pkt.sum",
            Op::OnesSum(SumScope::Window, ..) => "pkt.window_sum",
            Op::CsumFold(_) => "csum.fold",
            Op::State(_, s) => s.name(),
        }
    }

    /// Whether the op is combinational logic over its operands alone (constants, arithmetic,
    /// comparisons, casts, selects, slices, concatenations): no packet, metadata or state.
    pub fn is_logic(&self) -> bool {
        matches!(
            self,
            Op::Const(_)
                | Op::Unary(..)
                | Op::Binary(..)
                | Op::Cmp(..)
                | Op::Cast(..)
                | Op::Select(..)
                | Op::Slice(..)
                | Op::Concat(..)
        )
    }

    /// What the op does besides computing its results.
    pub fn effect(&self) -> Effect {
        match self {
            Op::PktRead(..) | Op::PktLen | Op::OnesSum(..) => Effect::ReadsPacket,
            Op::PktWrite(..) | Op::PktSetLen(_) => Effect::Writes,
            Op::State(_, s) if s.writes() => Effect::Writes,
            Op::State(..) => Effect::ReadsState,
            _ => Effect::Pure,
        }
    }

    /// The state element the op accesses, if any.
    pub fn state(&self) -> Option<StateId> {
        match self {
            Op::State(s, _) => Some(*s),
            _ => None,
        }
    }

    /// The operands, in order.
    pub fn args(&self) -> Vec<Value> {
        match self {
            Op::Const(_) | Op::PktLen | Op::Meta(_) => vec![],
            Op::Unary(_, a) | Op::Cast(_, a, _) | Op::Slice(a, ..) | Op::PktSetLen(a) | Op::CsumFold(a) => vec![*a],
            Op::Binary(_, a, b) | Op::Cmp(_, a, b) | Op::Concat(a, b) | Op::OnesSum(_, a, b) => vec![*a, *b],
            Op::Select(c, a, b) => vec![*c, *a, *b],
            Op::PktRead(addr, _) => addr.base.into_iter().collect(),
            Op::PktWrite(addr, v) => addr.base.into_iter().chain([*v]).collect(),
            Op::State(_, s) => s.args(),
        }
    }

    /// Replaces every operand `v` with `f(v)`.
    pub fn map_args(&mut self, mut f: impl FnMut(Value) -> Value) {
        match self {
            Op::Const(_) | Op::PktLen | Op::Meta(_) => {}
            Op::Unary(_, a) | Op::Cast(_, a, _) | Op::Slice(a, ..) | Op::PktSetLen(a) | Op::CsumFold(a) => *a = f(*a),
            Op::Binary(_, a, b) | Op::Cmp(_, a, b) | Op::Concat(a, b) | Op::OnesSum(_, a, b) => {
                *a = f(*a);
                *b = f(*b);
            }
            Op::Select(c, a, b) => {
                *c = f(*c);
                *a = f(*a);
                *b = f(*b);
            }
            Op::PktRead(addr, _) => {
                if let Some(b) = &mut addr.base {
                    *b = f(*b);
                }
            }
            Op::PktWrite(addr, v) => {
                if let Some(b) = &mut addr.base {
                    *b = f(*b);
                }
                *v = f(*v);
            }
            Op::State(_, s) => s.map_args(f),
        }
    }

    /// The types of the op's results, from its operands' types in `func`; an `Err` says what
    /// is inconsistent (the verifier's and the builder's type rules are this function).
    pub fn result_types(&self, func: &Function) -> Result<Vec<Type>, String> {
        let ty = |v: Value| -> Result<Type, String> {
            func.values.get(v).map(|d| d.ty).ok_or_else(|| format!("{v} does not exist"))
        };
        let width = |v: Value| ty(v).map(|t| t.width());
        let same = |a: Value, b: Value| -> Result<Type, String> {
            let (ta, tb) = (ty(a)?, ty(b)?);
            if ta == tb {
                Ok(ta)
            } else {
                Err(format!("operands have different types: {a} is {ta}, {b} is {tb}"))
            }
        };
        let at_most_64 = |v: Value, what: &str| -> Result<(), String> {
            let w = width(v)?;
            if w <= 64 {
                Ok(())
            } else {
                Err(format!("{what} {v} is u{w}; at most u64 is allowed"))
            }
        };
        let addr_ok = |a: &Addr| -> Result<(), String> {
            match a.base {
                Some(b) => ty(b).map(|_| ()),
                None => Ok(()),
            }
        };
        let one = |t: Type| Ok(vec![t]);
        match self {
            Op::Const(c) => one(Type::uint(c.width())),
            Op::Unary(_, a) => one(ty(*a)?),
            Op::Binary(op, a, b) if op.is_shift() => {
                ty(*b)?;
                one(ty(*a)?)
            }
            Op::Binary(_, a, b) => one(same(*a, *b)?),
            Op::Cmp(_, a, b) => {
                same(*a, *b)?;
                one(Type::BOOL)
            }
            Op::Cast(op, a, w) => {
                let from = width(*a)?;
                let ok = match op {
                    CastOp::Zext | CastOp::Sext => *w >= from,
                    CastOp::Trunc => *w <= from,
                };
                if !ok {
                    let dir = if *op == CastOp::Trunc { "wider" } else { "narrower" };
                    return Err(format!("{} from u{from} to u{w}: the target must not be {dir}", self.name()));
                }
                one(Type::uint(*w))
            }
            Op::Select(c, a, b) => {
                if ty(*c)? != Type::BOOL {
                    return Err(format!("select condition {c} is {}, not u1", ty(*c)?));
                }
                one(same(*a, *b)?)
            }
            Op::Slice(a, lo, w) => {
                let from = width(*a)?;
                if *w == 0 || *lo as u32 + *w as u32 > from as u32 {
                    return Err(format!("slice of bits [{lo}, {}) of u{from} is out of range", *lo as u32 + *w as u32));
                }
                one(Type::uint(*w))
            }
            Op::Concat(a, b) => {
                let w = width(*a)? as u32 + width(*b)? as u32;
                if w > super::bits::MAX_WIDTH as u32 {
                    return Err(format!("concat gives u{w}, wider than u{}", super::bits::MAX_WIDTH));
                }
                one(Type::uint(w as u16))
            }
            Op::PktRead(addr, n) => {
                addr_ok(addr)?;
                if *n == 0 || *n > super::bits::MAX_WIDTH / 8 {
                    return Err(format!("pkt.read of {n} bytes; 1 to {} are allowed", super::bits::MAX_WIDTH / 8));
                }
                one(Type::uint(n * 8))
            }
            Op::PktWrite(addr, v) => {
                addr_ok(addr)?;
                let t = ty(*v)?;
                if t.bytes().is_none() {
                    return Err(format!("pkt.write of {v}: {t} is not a whole number of bytes"));
                }
                Ok(vec![])
            }
            Op::PktLen => one(Type::uint(16)),
            Op::PktSetLen(n) => {
                at_most_64(*n, "length")?;
                Ok(vec![])
            }
            Op::Meta(m) => one(m.ty()),
            Op::OnesSum(_, a, b) => {
                ty(*a)?;
                ty(*b)?;
                one(Type::uint(32))
            }
            Op::CsumFold(a) => {
                at_most_64(*a, "csum.fold operand")?;
                one(Type::uint(16))
            }
            Op::State(s, op) => {
                let decl = func.states.get(*s).ok_or_else(|| format!("state element {s} does not exist"))?;
                state_result_types(&decl.name, &decl.kind, op, &ty)
            }
        }
    }
}

fn state_result_types(
    name: &str,
    kind: &StateKind,
    op: &StateOp,
    ty: &dyn Fn(Value) -> Result<Type, String>,
) -> Result<Vec<Type>, String> {
    let expect = |v: Value, want: Type, what: &str| -> Result<(), String> {
        let t = ty(v)?;
        if t == want {
            Ok(())
        } else {
            Err(format!("{} {name}: {what} {v} is {t}, {name} needs {want}", op.name()))
        }
    };
    let narrow = |v: Value, what: &str| -> Result<(), String> {
        let t = ty(v)?;
        if t.width() <= 64 {
            Ok(())
        } else {
            Err(format!("{} {name}: {what} {v} is {t}; at most u64 is allowed", op.name()))
        }
    };
    match (kind, op) {
        (StateKind::Counter { bits }, StateOp::CounterInc) => {
            let _ = bits;
            Ok(vec![])
        }
        (StateKind::Counter { .. }, StateOp::CounterAdd(n) | StateOp::CounterSet(n)) => {
            narrow(*n, "operand")?;
            Ok(vec![])
        }
        (StateKind::Counter { bits }, StateOp::CounterGet) => Ok(vec![Type::uint(*bits)]),
        (StateKind::Register { ty: t }, StateOp::RegGet) => Ok(vec![*t]),
        (StateKind::Register { ty: t }, StateOp::RegSet(v)) => {
            expect(*v, *t, "value")?;
            Ok(vec![])
        }
        (StateKind::Array { ty: t, .. }, StateOp::ArrayGet(i)) => {
            ty(*i)?;
            Ok(vec![*t])
        }
        (StateKind::Array { ty: t, .. }, StateOp::ArraySet(i, v)) => {
            ty(*i)?;
            expect(*v, *t, "value")?;
            Ok(vec![Type::BOOL])
        }
        (StateKind::Cam { key, value, .. }, StateOp::CamGet(k) | StateOp::CamRemove(k)) => {
            expect(*k, *key, "key")?;
            Ok(vec![Type::BOOL, *value])
        }
        (StateKind::Cam { key, .. }, StateOp::CamContains(k)) => {
            expect(*k, *key, "key")?;
            Ok(vec![Type::BOOL])
        }
        (StateKind::Cam { key, value, .. }, StateOp::CamInsert(k, v)) => {
            expect(*k, *key, "key")?;
            expect(*v, *value, "value")?;
            Ok(vec![Type::BOOL, *key, *value])
        }
        (StateKind::Lru { key, value, .. }, StateOp::LruGet(k) | StateOp::LruPeek(k) | StateOp::LruRemove(k))
        | (StateKind::HashTable { key, value, .. }, StateOp::HashGet(k) | StateOp::HashRemove(k))
        | (StateKind::Tcam { key, value, .. }, StateOp::TcamLookup(k)) => {
            expect(*k, *key, "key")?;
            Ok(vec![Type::BOOL, *value])
        }
        (StateKind::Lru { key, .. }, StateOp::LruContains(k))
        | (StateKind::HashTable { key, .. }, StateOp::HashContains(k)) => {
            expect(*k, *key, "key")?;
            Ok(vec![Type::BOOL])
        }
        (StateKind::Lru { key, value, .. }, StateOp::LruInsert(k, v))
        | (StateKind::HashTable { key, value, .. }, StateOp::HashInsert(k, v)) => {
            expect(*k, *key, "key")?;
            expect(*v, *value, "value")?;
            Ok(vec![Type::BOOL, *key, *value])
        }
        (StateKind::Tcam { key, size, .. }, StateOp::TcamLookupSlot(k)) => {
            expect(*k, *key, "key")?;
            Ok(vec![Type::BOOL, Type::uint(StateKind::slot_width(*size))])
        }
        (StateKind::Tcam { key, value, .. }, StateOp::TcamSet(i, v, m, r)) => {
            ty(*i)?;
            expect(*v, *key, "rule value")?;
            expect(*m, *key, "mask")?;
            expect(*r, *value, "result")?;
            Ok(vec![Type::BOOL])
        }
        (StateKind::Tcam { .. }, StateOp::TcamClear(i)) => {
            ty(*i)?;
            Ok(vec![])
        }
        (StateKind::Queue { ty: t, .. }, StateOp::QueuePush(v)) => {
            expect(*v, *t, "value")?;
            Ok(vec![Type::BOOL])
        }
        (StateKind::Queue { ty: t, .. }, StateOp::QueuePop | StateOp::QueuePeek) => Ok(vec![Type::BOOL, *t]),
        (StateKind::Queue { size, .. }, StateOp::QueueLen) => Ok(vec![Type::uint(StateKind::count_width(*size))]),
        (StateKind::Queue { .. }, StateOp::QueueIsEmpty | StateOp::QueueIsFull) => Ok(vec![Type::BOOL]),
        (kind, op) => Err(format!("{} on {name}, which is {}", op.name(), kind.with_article())),
    }
}

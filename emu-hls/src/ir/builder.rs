//! [`Builder`]: the API the lowering (and tests) use to make a function.
//!
//! ```
//! use emu_hls::ir::{Builder, u};
//! use emu_core::DropReason;
//!
//! let mut b = Builder::new("mirror_known", 64);
//! let seen = b.cam("seen", u(48), u(8), 16);
//! let frames = b.counter("frames", 64);
//! b.counter_inc(frames);
//! let src = b.pkt_read(6, 6);
//! let port = b.in_port();
//! let hit = b.cam_get(seen, src);
//! let (known, unknown) = (b.new_block(), b.new_block());
//! b.branch(hit.valid, known, unknown);
//! b.switch_to(known);
//! b.ret_reply();
//! b.switch_to(unknown);
//! b.cam_insert(seen, src, port);
//! b.ret_drop(DropReason::Policy);
//! let f = b.finish().unwrap();
//! assert!(f.to_string().contains("v2:u1, v3:u8 = cam.get seen, v0"));
//! ```
//!
//! Rules of use:
//!
//! - Instructions go to the *current block*; [`switch_to`](Builder::switch_to) changes it.
//!   An instruction added after the current block's terminator goes to a fresh block that
//!   nothing jumps to (code after a `return`), which dead-code elimination removes.
//! - Types are checked as each instruction is made; a mistake is recorded (the builder keeps
//!   going) and [`finish`](Builder::finish) reports every one, with the verifier's findings.
//! - Mutable variables of the source can be left to the builder: [`declare_var`],
//!   [`def_var`], [`use_var`] build SSA form with block parameters (Braun et al., *Simple and
//!   Efficient Construction of SSA Form*, 2013). A block must be *sealed*
//!   ([`seal_block`](Builder::seal_block)) once every jump to it has been made; `finish` seals
//!   the rest. Give a block its own parameters ([`block_param`](Builder::block_param)) when you
//!   make it, before variables are used in it.
//!
//! [`declare_var`]: Builder::declare_var
//! [`def_var`]: Builder::def_var
//! [`use_var`]: Builder::use_var

use super::bits::BitVec;
use super::entity::{entity, Arena};
use super::function::{
    ActionExpr, Block, BlockCall, Function, Inst, StateId, StateKind, Terminator, Value, ValueData, ValueDef,
};
use super::op::{Addr, BinaryOp, CastOp, CmpOp, MetaField, Op, StateOp, SumScope, UnaryOp};
use super::print::inst_to_string;
use super::types::Type;
use super::verify::{verify, VerifyError, VerifyErrors};
use emu_core::wire::{Field, HeaderInfo, HEADERS};
use emu_core::DropReason;
use std::collections::{HashMap, HashSet};

entity!(
    /// A mutable variable of the source, turned into SSA values by the builder.
    Var,
    "var"
);

/// An `Option<V>` as the IR has it: a `u1` flag and a value that is 0 when the flag is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Maybe {
    /// 1 when there is a value.
    pub valid: Value,
    /// The value (0 when `valid` is 0).
    pub value: Value,
}

/// The entry a `cam.insert` evicted: `Option<(K, V)>` as a flag, key and value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    /// 1 when an entry was evicted.
    pub valid: Value,
    /// Its key (0 when none).
    pub key: Value,
    /// Its value (0 when none).
    pub value: Value,
}

/// The header `name` of `emu_core::wire::HEADERS` (`"ipv4"`).
pub fn header(name: &str) -> Option<&'static HeaderInfo> {
    HEADERS.iter().find(|h| h.name == name)
}

/// Field `field` of header `header` in `emu_core::wire::HEADERS` (`field("ipv4", "ttl")`).
pub fn field(header_name: &str, field: &str) -> Option<&'static Field> {
    header(header_name)?.fields.iter().find(|f| f.name == field)
}

/// Builds one [`Function`]. See the [module documentation](self).
#[derive(Debug)]
pub struct Builder {
    func: Function,
    current: Block,
    errors: Vec<VerifyError>,
    vars: Arena<Var, Type>,
    defs: HashMap<(Var, Block), Value>,
    sealed: HashSet<Block>,
    incomplete: HashMap<Block, Vec<(Var, Value)>>,
    preds: HashMap<Block, Vec<Block>>,
}

impl Builder {
    /// A builder for function `name` with a header window of `window` bytes; the current
    /// block is the (new) entry block, which is sealed.
    pub fn new(name: &str, window: u32) -> Builder {
        let mut func = Function::new(name, window);
        let entry = func.add_block();
        let mut b = Builder {
            func,
            current: entry,
            errors: Vec::new(),
            vars: Arena::new(),
            defs: HashMap::new(),
            sealed: HashSet::new(),
            incomplete: HashMap::new(),
            preds: HashMap::new(),
        };
        b.sealed.insert(entry);
        b
    }

    /// The function so far.
    pub fn func(&self) -> &Function {
        &self.func
    }

    /// Seals every block, verifies, and gives the function — or every problem found.
    pub fn finish(mut self) -> Result<Function, VerifyErrors> {
        self.seal_all_blocks();
        let mut errors = std::mem::take(&mut self.errors);
        if let Err(VerifyErrors(v)) = verify(&self.func) {
            errors.extend(v);
        }
        if errors.is_empty() {
            Ok(self.func)
        } else {
            Err(VerifyErrors(errors))
        }
    }

    /// Seals every block and gives the function without verifying it.
    pub fn finish_unchecked(mut self) -> Function {
        self.seal_all_blocks();
        self.func
    }

    fn error(&mut self, location: String, message: String) {
        self.errors.push(VerifyError { location, message });
    }

    // ---- state ----

    /// Declares `counter<u{bits}>` called `name`.
    pub fn counter(&mut self, name: &str, bits: u16) -> StateId {
        self.func.add_state(name, StateKind::Counter { bits })
    }

    /// Marks state element `s` as a probe or a count (declared as a field).
    pub fn set_state_role(&mut self, s: StateId, role: super::StateRole) {
        self.func.states[s].role = role;
    }

    /// Declares `register<ty>` called `name`.
    pub fn register(&mut self, name: &str, ty: Type) -> StateId {
        self.func.add_state(name, StateKind::Register { ty })
    }

    /// Declares `array<ty, size>` called `name`.
    pub fn array(&mut self, name: &str, ty: Type, size: u32) -> StateId {
        self.func.add_state(name, StateKind::Array { ty, size })
    }

    /// Declares `cam<key, value, size>` called `name`.
    pub fn cam(&mut self, name: &str, key: Type, value: Type, size: u32) -> StateId {
        self.func.add_state(name, StateKind::Cam { key, value, size })
    }

    /// Declares `lru<key, value, size, ways>` called `name` (`ways = size`: fully associative).
    pub fn lru(&mut self, name: &str, key: Type, value: Type, size: u32, ways: u32) -> StateId {
        self.func.add_state(name, StateKind::Lru { key, value, size, ways })
    }

    /// Declares `hash_table<key, value, size, ways>` called `name`.
    pub fn hash_table(&mut self, name: &str, key: Type, value: Type, size: u32, ways: u32) -> StateId {
        self.func.add_state(name, StateKind::HashTable { key, value, size, ways })
    }

    /// Declares `tcam<key, value, size>` called `name`.
    pub fn tcam(&mut self, name: &str, key: Type, value: Type, size: u32) -> StateId {
        self.func.add_state(name, StateKind::Tcam { key, value, size })
    }

    /// Declares `queue<ty, size>` called `name`.
    pub fn queue(&mut self, name: &str, ty: Type, size: u32) -> StateId {
        self.func.add_state(name, StateKind::Queue { ty, size })
    }

    // ---- blocks ----

    /// The entry block.
    pub fn entry_block(&self) -> Block {
        self.func.layout[0]
    }

    /// A new, empty block (appended to the layout, not sealed).
    pub fn new_block(&mut self) -> Block {
        self.func.add_block()
    }

    /// Adds a parameter of type `ty` to `block`.
    pub fn block_param(&mut self, block: Block, ty: Type) -> Value {
        self.func.add_block_param(block, ty)
    }

    /// Makes `block` the current block.
    pub fn switch_to(&mut self, block: Block) {
        self.current = block;
    }

    /// The current block.
    pub fn current_block(&self) -> Block {
        self.current
    }

    /// True when the current block has its terminator.
    pub fn is_terminated(&self) -> bool {
        self.func.blocks[self.current].term.is_some()
    }

    fn open_block(&mut self) -> Block {
        if self.is_terminated() {
            // Code after a terminator: a fresh block nothing reaches.
            let b = self.new_block();
            self.sealed.insert(b);
            self.current = b;
        }
        self.current
    }

    // ---- instructions ----

    /// Appends an instruction of `op` to the current block and gives it. A type error is
    /// recorded for [`finish`](Builder::finish); the results then get placeholder types.
    pub fn ins(&mut self, op: Op) -> Inst {
        let block = self.open_block();
        match self.func.append_inst(block, op.clone()) {
            Ok(i) => i,
            Err(e) => {
                let n = result_count(&op);
                let inst = self.func.insts.push(super::function::InstData { op, results: vec![] });
                for k in 0..n {
                    let v = self.func.values.push(ValueData { ty: Type::BOOL, def: ValueDef::Result(inst, k as u16) });
                    self.func.insts[inst].results.push(v);
                }
                self.func.blocks[block].insts.push(inst);
                let loc = format!("{block}: {}", inst_to_string(&self.func, inst));
                self.error(loc, e);
                inst
            }
        }
    }

    fn ins1(&mut self, op: Op) -> Value {
        let i = self.ins(op);
        self.func.results(i)[0]
    }

    /// The type of `v`.
    pub fn ty(&self, v: Value) -> Type {
        self.func.value_type(v)
    }

    /// `const v` of `width` bits (the low bits of `v`).
    pub fn iconst(&mut self, width: u16, v: u64) -> Value {
        self.ins1(Op::Const(BitVec::new(width, v)))
    }

    /// `const c`.
    pub fn constant(&mut self, c: BitVec) -> Value {
        self.ins1(Op::Const(c))
    }

    /// `const 0/1` of type `u1`.
    pub fn bool_const(&mut self, b: bool) -> Value {
        self.ins1(Op::Const(BitVec::from_bool(b)))
    }

    /// A constant of `like`'s type.
    pub fn imm(&mut self, like: Value, v: u64) -> Value {
        let w = self.ty(like).width();
        self.iconst(w, v)
    }

    /// `not a`.
    pub fn not(&mut self, a: Value) -> Value {
        self.ins1(Op::Unary(UnaryOp::Not, a))
    }

    /// `neg a`.
    pub fn neg(&mut self, a: Value) -> Value {
        self.ins1(Op::Unary(UnaryOp::Neg, a))
    }

    /// A binary op.
    pub fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        self.ins1(Op::Binary(op, a, b))
    }

    /// A comparison.
    pub fn cmp(&mut self, op: CmpOp, a: Value, b: Value) -> Value {
        self.ins1(Op::Cmp(op, a, b))
    }

    /// `add a, b`.
    pub fn add(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Add, a, b)
    }
    /// `sub a, b`.
    pub fn sub(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Sub, a, b)
    }
    /// `mul a, b`.
    pub fn mul(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Mul, a, b)
    }
    /// `and a, b`.
    pub fn and(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::And, a, b)
    }
    /// `or a, b`.
    pub fn or(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Or, a, b)
    }
    /// `xor a, b`.
    pub fn xor(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Xor, a, b)
    }
    /// `shl a, n`.
    pub fn shl(&mut self, a: Value, n: Value) -> Value {
        self.binary(BinaryOp::Shl, a, n)
    }
    /// `lshr a, n`.
    pub fn lshr(&mut self, a: Value, n: Value) -> Value {
        self.binary(BinaryOp::Lshr, a, n)
    }
    /// `ashr a, n`.
    pub fn ashr(&mut self, a: Value, n: Value) -> Value {
        self.binary(BinaryOp::Ashr, a, n)
    }
    /// `add a, c` with `c` a constant of a's type.
    pub fn add_imm(&mut self, a: Value, c: u64) -> Value {
        let c = self.imm(a, c);
        self.add(a, c)
    }
    /// `and a, c` with `c` a constant of a's type.
    pub fn and_imm(&mut self, a: Value, c: u64) -> Value {
        let c = self.imm(a, c);
        self.and(a, c)
    }
    /// `or a, c` with `c` a constant of a's type.
    pub fn or_imm(&mut self, a: Value, c: u64) -> Value {
        let c = self.imm(a, c);
        self.or(a, c)
    }
    /// `shl a, c` with `c` a constant of a's type.
    pub fn shl_imm(&mut self, a: Value, c: u64) -> Value {
        let c = self.imm(a, c);
        self.shl(a, c)
    }
    /// `lshr a, c` with `c` a constant of a's type.
    pub fn lshr_imm(&mut self, a: Value, c: u64) -> Value {
        let c = self.imm(a, c);
        self.lshr(a, c)
    }

    /// `eq a, b`.
    pub fn eq(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Eq, a, b)
    }
    /// `ne a, b`.
    pub fn ne(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Ne, a, b)
    }
    /// `ult a, b`.
    pub fn ult(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Ult, a, b)
    }
    /// `ule a, b`.
    pub fn ule(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Ule, a, b)
    }
    /// `ugt a, b`.
    pub fn ugt(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Ugt, a, b)
    }
    /// `uge a, b`.
    pub fn uge(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Uge, a, b)
    }
    /// `eq a, c` with `c` a constant of a's type.
    pub fn eq_imm(&mut self, a: Value, c: u64) -> Value {
        let c = self.imm(a, c);
        self.eq(a, c)
    }
    /// `ne a, c` with `c` a constant of a's type.
    pub fn ne_imm(&mut self, a: Value, c: u64) -> Value {
        let c = self.imm(a, c);
        self.ne(a, c)
    }

    /// `zext a` to `width` bits.
    pub fn zext(&mut self, a: Value, width: u16) -> Value {
        self.ins1(Op::Cast(CastOp::Zext, a, width))
    }
    /// `sext a` to `width` bits.
    pub fn sext(&mut self, a: Value, width: u16) -> Value {
        self.ins1(Op::Cast(CastOp::Sext, a, width))
    }
    /// `trunc a` to `width` bits.
    pub fn trunc(&mut self, a: Value, width: u16) -> Value {
        self.ins1(Op::Cast(CastOp::Trunc, a, width))
    }
    /// `a` as `width` bits: `zext`, `trunc`, or `a` itself — Rust's `as` between unsigned types.
    pub fn resize(&mut self, a: Value, width: u16) -> Value {
        let w = self.ty(a).width();
        match width.cmp(&w) {
            core::cmp::Ordering::Greater => self.zext(a, width),
            core::cmp::Ordering::Less => self.trunc(a, width),
            core::cmp::Ordering::Equal => a,
        }
    }

    /// `select c, a, b`.
    pub fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.ins1(Op::Select(c, a, b))
    }
    /// Bits `[lo, lo + width)` of `a`.
    pub fn slice(&mut self, a: Value, lo: u16, width: u16) -> Value {
        self.ins1(Op::Slice(a, lo, width))
    }
    /// Bit `i` of `a` as a `u1`.
    pub fn bit(&mut self, a: Value, i: u16) -> Value {
        self.slice(a, i, 1)
    }
    /// `hi` above `lo`.
    pub fn concat(&mut self, hi: Value, lo: Value) -> Value {
        self.ins1(Op::Concat(hi, lo))
    }

    // ---- packet and metadata ----

    /// The `bytes` bytes at `at` (a constant offset, a value, or `value + offset`) as one
    /// big-endian value.
    pub fn pkt_read(&mut self, at: impl Into<Addr>, bytes: u16) -> Value {
        self.ins1(Op::PktRead(at.into(), bytes))
    }

    /// Writes `v` (whole bytes) big-endian at `at`.
    pub fn pkt_write(&mut self, at: impl Into<Addr>, v: Value) {
        self.ins(Op::PktWrite(at.into(), v));
    }

    /// Field `f` (from `emu_core::wire`'s tables) of the header starting at `header_at`:
    /// the bytes covering it, then a slice when it is not whole bytes — what the header
    /// view's getter returns.
    pub fn read_field(&mut self, header_at: impl Into<Addr>, f: &Field) -> Value {
        let (at, n, tail) = field_bytes(header_at.into(), f);
        let raw = self.pkt_read(at, n);
        if tail == 0 && n * 8 == f.width as u16 {
            raw
        } else {
            self.slice(raw, tail, f.width as u16)
        }
    }

    /// Sets field `f` of the header starting at `header_at` to `v` (of the field's width):
    /// a plain write when the field is whole bytes, else read, merge and write of the bytes
    /// covering it — what the header view's setter does.
    pub fn write_field(&mut self, header_at: impl Into<Addr>, f: &Field, v: Value) {
        let (at, n, tail) = field_bytes(header_at.into(), f);
        if tail == 0 && n * 8 == f.width as u16 {
            self.pkt_write(at, v);
            return;
        }
        let w = n * 8;
        let old = self.pkt_read(at, n);
        let ones = BitVec::ones(f.width as u16).zext(w).shl(tail as u64);
        let keep = self.constant(ones.not());
        let kept = self.and(old, keep);
        let wide = self.zext(v, w);
        let sh = self.iconst(w, tail as u64);
        let placed = self.shl(wide, sh);
        let new = self.or(kept, placed);
        self.pkt_write(at, new);
    }

    /// `pkt.len`.
    pub fn pkt_len(&mut self) -> Value {
        self.ins1(Op::PktLen)
    }
    /// `pkt.set_len n`.
    pub fn pkt_set_len(&mut self, n: Value) {
        self.ins(Op::PktSetLen(n));
    }
    /// `meta.in_port`.
    pub fn in_port(&mut self) -> Value {
        self.ins1(Op::Meta(MetaField::InPort))
    }
    /// `meta.len`.
    pub fn meta_len(&mut self) -> Value {
        self.ins1(Op::Meta(MetaField::Len))
    }
    /// `meta.timestamp`.
    pub fn timestamp(&mut self) -> Value {
        self.ins1(Op::Meta(MetaField::Timestamp))
    }

    /// `pkt.sum start, end`: `Packet::ones_sum(start, end)`, past the window too.
    pub fn ones_sum(&mut self, start: Value, end: Value) -> Value {
        self.ins1(Op::OnesSum(SumScope::Frame, start, end))
    }
    /// `pkt.window_sum start, end`: the sum a header view's checksum sees.
    pub fn window_sum(&mut self, start: Value, end: Value) -> Value {
        self.ins1(Op::OnesSum(SumScope::Window, start, end))
    }
    /// `csum.fold a`.
    pub fn csum_fold(&mut self, a: Value) -> Value {
        self.ins1(Op::CsumFold(a))
    }

    /// `checksum::update16(checksum, old, new)` (RFC 1624 eqn. 3, all `u16`):
    /// `not(csum.fold(zext32(not checksum) + zext32(not old) + zext32(new)))`.
    pub fn csum_update16(&mut self, checksum: Value, old: Value, new: Value) -> Value {
        let nc = self.not(checksum);
        let no = self.not(old);
        let a = self.zext(nc, 32);
        let b = self.zext(no, 32);
        let c = self.zext(new, 32);
        let ab = self.add(a, b);
        let sum = self.add(ab, c);
        let folded = self.csum_fold(sum);
        self.not(folded)
    }

    // ---- state ----

    fn state_op(&mut self, s: StateId, op: StateOp) -> Inst {
        self.ins(Op::State(s, op))
    }

    /// `counter.inc c`.
    pub fn counter_inc(&mut self, c: StateId) {
        self.state_op(c, StateOp::CounterInc);
    }
    /// `counter.add c, n`.
    pub fn counter_add(&mut self, c: StateId, n: Value) {
        self.state_op(c, StateOp::CounterAdd(n));
    }
    /// `counter.set c, v`.
    pub fn counter_set(&mut self, c: StateId, v: Value) {
        self.state_op(c, StateOp::CounterSet(v));
    }
    /// `counter.get c`.
    pub fn counter_get(&mut self, c: StateId) -> Value {
        let i = self.state_op(c, StateOp::CounterGet);
        self.func.results(i)[0]
    }
    /// `reg.get r`.
    pub fn reg_get(&mut self, r: StateId) -> Value {
        let i = self.state_op(r, StateOp::RegGet);
        self.func.results(i)[0]
    }
    /// `reg.set r, v`.
    pub fn reg_set(&mut self, r: StateId, v: Value) {
        self.state_op(r, StateOp::RegSet(v));
    }
    /// `array.get a, i`.
    pub fn array_get(&mut self, a: StateId, i: Value) -> Value {
        let inst = self.state_op(a, StateOp::ArrayGet(i));
        self.func.results(inst)[0]
    }
    /// `array.set a, i, v`; gives the `u1` "in range".
    pub fn array_set(&mut self, a: StateId, i: Value, v: Value) -> Value {
        let inst = self.state_op(a, StateOp::ArraySet(i, v));
        self.func.results(inst)[0]
    }
    /// `cam.get t, k`.
    pub fn cam_get(&mut self, t: StateId, k: Value) -> Maybe {
        let i = self.state_op(t, StateOp::CamGet(k));
        let r = self.func.results(i);
        Maybe { valid: r[0], value: r[1] }
    }
    /// `cam.contains t, k`.
    pub fn cam_contains(&mut self, t: StateId, k: Value) -> Value {
        let i = self.state_op(t, StateOp::CamContains(k));
        self.func.results(i)[0]
    }
    /// `cam.insert t, k, v`.
    pub fn cam_insert(&mut self, t: StateId, k: Value, v: Value) -> Evicted {
        let i = self.state_op(t, StateOp::CamInsert(k, v));
        let r = self.func.results(i);
        Evicted { valid: r[0], key: r[1], value: r[2] }
    }
    /// `cam.remove t, k`.
    pub fn cam_remove(&mut self, t: StateId, k: Value) -> Maybe {
        let i = self.state_op(t, StateOp::CamRemove(k));
        let r = self.func.results(i);
        Maybe { valid: r[0], value: r[1] }
    }

    fn maybe(&mut self, s: StateId, op: StateOp) -> Maybe {
        let i = self.state_op(s, op);
        let r = self.func.results(i);
        Maybe { valid: r[0], value: r[1] }
    }

    fn evicted(&mut self, s: StateId, op: StateOp) -> Evicted {
        let i = self.state_op(s, op);
        let r = self.func.results(i);
        Evicted { valid: r[0], key: r[1], value: r[2] }
    }

    fn one(&mut self, s: StateId, op: StateOp) -> Value {
        let i = self.state_op(s, op);
        self.func.results(i)[0]
    }

    /// `lru.get t, k` (a hit makes the entry the most recently used).
    pub fn lru_get(&mut self, t: StateId, k: Value) -> Maybe {
        self.maybe(t, StateOp::LruGet(k))
    }
    /// `lru.peek t, k`.
    pub fn lru_peek(&mut self, t: StateId, k: Value) -> Maybe {
        self.maybe(t, StateOp::LruPeek(k))
    }
    /// `lru.contains t, k`.
    pub fn lru_contains(&mut self, t: StateId, k: Value) -> Value {
        self.one(t, StateOp::LruContains(k))
    }
    /// `lru.insert t, k, v`.
    pub fn lru_insert(&mut self, t: StateId, k: Value, v: Value) -> Evicted {
        self.evicted(t, StateOp::LruInsert(k, v))
    }
    /// `lru.remove t, k`.
    pub fn lru_remove(&mut self, t: StateId, k: Value) -> Maybe {
        self.maybe(t, StateOp::LruRemove(k))
    }
    /// `hash_table.get t, k`.
    pub fn hash_get(&mut self, t: StateId, k: Value) -> Maybe {
        self.maybe(t, StateOp::HashGet(k))
    }
    /// `hash_table.contains t, k`.
    pub fn hash_contains(&mut self, t: StateId, k: Value) -> Value {
        self.one(t, StateOp::HashContains(k))
    }
    /// `hash_table.insert t, k, v`.
    pub fn hash_insert(&mut self, t: StateId, k: Value, v: Value) -> Evicted {
        self.evicted(t, StateOp::HashInsert(k, v))
    }
    /// `hash_table.remove t, k`.
    pub fn hash_remove(&mut self, t: StateId, k: Value) -> Maybe {
        self.maybe(t, StateOp::HashRemove(k))
    }
    /// `tcam.lookup t, k`: (hit, result).
    pub fn tcam_lookup(&mut self, t: StateId, k: Value) -> Maybe {
        self.maybe(t, StateOp::TcamLookup(k))
    }
    /// `tcam.lookup_slot t, k`: (hit, slot).
    pub fn tcam_lookup_slot(&mut self, t: StateId, k: Value) -> Maybe {
        self.maybe(t, StateOp::TcamLookupSlot(k))
    }
    /// `tcam.set t, i, value, mask, result`; gives the `u1` "in range".
    pub fn tcam_set(&mut self, t: StateId, i: Value, value: Value, mask: Value, result: Value) -> Value {
        self.one(t, StateOp::TcamSet(i, value, mask, result))
    }
    /// `tcam.clear t, i`.
    pub fn tcam_clear(&mut self, t: StateId, i: Value) {
        self.state_op(t, StateOp::TcamClear(i));
    }
    /// `queue.push q, v`; gives the `u1` "accepted".
    pub fn queue_push(&mut self, q: StateId, v: Value) -> Value {
        self.one(q, StateOp::QueuePush(v))
    }
    /// `queue.pop q`.
    pub fn queue_pop(&mut self, q: StateId) -> Maybe {
        self.maybe(q, StateOp::QueuePop)
    }
    /// `queue.peek q`.
    pub fn queue_peek(&mut self, q: StateId) -> Maybe {
        self.maybe(q, StateOp::QueuePeek)
    }
    /// `queue.len q`.
    pub fn queue_len(&mut self, q: StateId) -> Value {
        self.one(q, StateOp::QueueLen)
    }
    /// `queue.is_empty q`.
    pub fn queue_is_empty(&mut self, q: StateId) -> Value {
        self.one(q, StateOp::QueueIsEmpty)
    }
    /// `queue.is_full q`.
    pub fn queue_is_full(&mut self, q: StateId) -> Value {
        self.one(q, StateOp::QueueIsFull)
    }

    // ---- terminators ----

    fn terminate(&mut self, t: Terminator) {
        let block = self.open_block();
        for target in t.successors() {
            if !self.func.blocks.is_valid(target) {
                continue;
            }
            if self.sealed.contains(&target) {
                self.error(
                    format!("{block}"),
                    format!("jumps to {target}, which was sealed: seal a block only once every jump to it is made"),
                );
            }
            let p = self.preds.entry(target).or_default();
            if !p.contains(&block) {
                p.push(block);
            }
        }
        self.func.blocks[block].term = Some(t);
    }

    /// `jump target(args)`.
    pub fn jump(&mut self, target: Block, args: &[Value]) {
        self.terminate(Terminator::Jump(BlockCall::new(target, args)));
    }

    /// `br c, then, else`; a target is a block, or a [`BlockCall`] with arguments.
    pub fn branch(&mut self, c: Value, then: impl Into<BlockCall>, otherwise: impl Into<BlockCall>) {
        self.terminate(Terminator::Branch(c, then.into(), otherwise.into()));
    }

    /// `return action`.
    pub fn ret(&mut self, action: ActionExpr) {
        self.terminate(Terminator::Return(action));
    }
    /// `return forward port`.
    pub fn ret_forward(&mut self, port: Value) {
        self.ret(ActionExpr::Forward(port));
    }
    /// `return multicast mask`.
    pub fn ret_multicast(&mut self, mask: Value) {
        self.ret(ActionExpr::Multicast(mask));
    }
    /// `return flood`.
    pub fn ret_flood(&mut self) {
        self.ret(ActionExpr::Flood);
    }
    /// `return reply`.
    pub fn ret_reply(&mut self) {
        self.ret(ActionExpr::Reply);
    }
    /// `return drop reason`.
    pub fn ret_drop(&mut self, reason: DropReason) {
        self.ret(ActionExpr::Drop(reason));
    }

    // ---- variables (SSA construction) ----

    /// A new variable of type `ty`.
    pub fn declare_var(&mut self, ty: Type) -> Var {
        self.vars.push(ty)
    }

    /// Assigns `v` to `var` at the current point.
    pub fn def_var(&mut self, var: Var, v: Value) {
        let (want, got) = (self.vars[var], self.ty(v));
        if want != got {
            self.error(format!("{}", self.current), format!("{var} is {want}, assigned {v} of type {got}"));
        }
        let block = self.open_block();
        self.defs.insert((var, block), v);
    }

    /// The value of `var` at the current point.
    pub fn use_var(&mut self, var: Var) -> Value {
        let block = self.open_block();
        self.read_var(var, block)
    }

    /// Declares that every jump to `block` has been made.
    pub fn seal_block(&mut self, block: Block) {
        if !self.sealed.insert(block) {
            return;
        }
        for (var, param) in self.incomplete.remove(&block).unwrap_or_default() {
            self.add_param_args(var, block, param);
        }
    }

    /// Seals every block not sealed yet.
    pub fn seal_all_blocks(&mut self) {
        for b in self.func.layout.clone() {
            self.seal_block(b);
        }
    }

    fn read_var(&mut self, var: Var, block: Block) -> Value {
        if let Some(&v) = self.defs.get(&(var, block)) {
            return v;
        }
        let ty = self.vars[var];
        let preds = self.preds.get(&block).cloned().unwrap_or_default();
        let v = if !self.sealed.contains(&block) {
            let p = self.func.add_block_param(block, ty);
            self.incomplete.entry(block).or_default().push((var, p));
            p
        } else if preds.len() == 1 {
            self.read_var(var, preds[0])
        } else if preds.is_empty() {
            // Nothing jumps here: the entry (the variable was never assigned), or code after
            // a `return`, which never runs and may read anything.
            if block == self.entry_block() {
                self.error(format!("{block}"), format!("{var} is used before it is assigned"));
            }
            let inst = self
                .func
                .make_inst(Op::Const(BitVec::zero(ty.width().clamp(1, super::bits::MAX_WIDTH))))
                .expect("a constant");
            self.func.blocks[block].insts.insert(0, inst);
            self.func.results(inst)[0]
        } else {
            let p = self.func.add_block_param(block, ty);
            self.defs.insert((var, block), p);
            self.add_param_args(var, block, p);
            p
        };
        self.defs.insert((var, block), v);
        v
    }

    fn add_param_args(&mut self, var: Var, block: Block, _param: Value) {
        let preds = self.preds.get(&block).cloned().unwrap_or_default();
        for p in preds {
            let v = self.read_var(var, p);
            if let Some(t) = &mut self.func.blocks[p].term {
                for call in t.calls_mut() {
                    if call.block == block {
                        call.args.push(v);
                    }
                }
            }
        }
    }
}

/// The address, byte count and bit position from the right of the bytes covering `f`.
fn field_bytes(at: Addr, f: &Field) -> (Addr, u16, u16) {
    let first = f.bit_offset / 8;
    let last = (f.bit_offset + f.width - 1) / 8;
    let n = last - first + 1;
    let tail = n * 8 - f.bit_offset % 8 - f.width;
    (at + first as u32, n as u16, tail as u16)
}

/// How many results `op` gives, whatever its operands' types.
fn result_count(op: &Op) -> usize {
    match op {
        Op::PktWrite(..) | Op::PktSetLen(_) => 0,
        Op::State(_, s) => match s {
            StateOp::CounterInc
            | StateOp::CounterAdd(_)
            | StateOp::CounterSet(_)
            | StateOp::RegSet(_)
            | StateOp::TcamClear(_) => 0,
            StateOp::CamGet(_)
            | StateOp::CamRemove(_)
            | StateOp::LruGet(_)
            | StateOp::LruPeek(_)
            | StateOp::LruRemove(_)
            | StateOp::HashGet(_)
            | StateOp::HashRemove(_)
            | StateOp::TcamLookup(_)
            | StateOp::TcamLookupSlot(_)
            | StateOp::QueuePop
            | StateOp::QueuePeek => 2,
            StateOp::CamInsert(..) | StateOp::LruInsert(..) | StateOp::HashInsert(..) => 3,
            _ => 1,
        },
        _ => 1,
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::ir::u;

    #[test]
    fn type_errors_are_collected_not_fatal() {
        let mut b = Builder::new("bad", 64);
        let t = b.cam("t", u(48), u(8), 4);
        let x = b.pkt_read(0, 2);
        let y = b.pkt_read(2, 1);
        let s = b.add(x, y);
        let m = b.cam_get(t, s);
        b.ret_forward(m.value);
        let e = b.finish().unwrap_err().to_string();
        assert!(e.contains("block0: v2:u1 = add v0, v1: operands have different types: v0 is u16, v1 is u8"), "{e}");
        assert!(e.contains("cam.get t: key v2 is u1, t needs u48"), "{e}");
    }

    #[test]
    fn fields_come_from_the_wire_tables() {
        let mut b = Builder::new("fields", 64);
        let ihl = b.read_field(14, field("ipv4", "ihl").unwrap());
        let ttl = b.read_field(14, field("ipv4", "ttl").unwrap());
        let seven = b.iconst(4, 7);
        b.write_field(14, field("ipv4", "ihl").unwrap(), seven);
        let _ = (ihl, ttl);
        b.ret_reply();
        let f = b.finish().unwrap();
        let text = f.to_string();
        assert!(text.contains("v0:u8 = pkt.read 14, 1\n    v1:u4 = slice v0, 0"), "{text}");
        assert!(text.contains("v2:u8 = pkt.read 22, 1\n"), "ttl is whole bytes: {text}");
        assert!(text.contains("v5:u8 = const 240"), "{text}");
    }

    #[test]
    fn variables_become_block_parameters() {
        // let mut x = 1; if c { x = 2 }; forward x
        let mut b = Builder::new("vars", 64);
        let x = b.declare_var(u(8));
        let one = b.iconst(8, 1);
        b.def_var(x, one);
        let c = b.pkt_read(0, 1);
        let c = b.bit(c, 0);
        let (then, join) = (b.new_block(), b.new_block());
        b.branch(c, then, join);
        b.seal_block(then);
        b.switch_to(then);
        let two = b.iconst(8, 2);
        b.def_var(x, two);
        b.jump(join, &[]);
        b.seal_block(join);
        b.switch_to(join);
        let v = b.use_var(x);
        b.ret_forward(v);
        let f = b.finish().unwrap();
        let text = f.to_string();
        assert!(text.contains("br v2, block1, block2(v0)"), "{text}");
        assert!(text.contains("jump block2(v3)"), "{text}");
        assert!(text.contains("block2(v4:u8):\n    return forward v4"), "{text}");
    }

    #[test]
    fn variables_through_a_loop() {
        // let mut i = 0; while i != 3 { i += 1 }  — the header is sealed after the back edge.
        let mut b = Builder::new("counting", 64);
        let i = b.declare_var(u(8));
        let zero = b.iconst(8, 0);
        b.def_var(i, zero);
        let (head, body, exit) = (b.new_block(), b.new_block(), b.new_block());
        b.jump(head, &[]);
        b.switch_to(head);
        let iv = b.use_var(i);
        let done = b.eq_imm(iv, 3);
        b.branch(done, exit, body);
        b.seal_block(body);
        b.seal_block(exit);
        b.switch_to(body);
        let iv = b.use_var(i);
        let next = b.add_imm(iv, 1);
        b.def_var(i, next);
        b.jump(head, &[]);
        b.seal_block(head);
        b.switch_to(exit);
        let iv = b.use_var(i);
        b.ret_forward(iv);
        let f = b.finish().unwrap();
        let text = f.to_string();
        assert!(text.contains("block1(v1:u8):"), "{text}");
        assert!(text.contains("jump block1(v5)"), "{text}");
        assert!(text.contains("return forward v1"), "{text}");
    }

    #[test]
    fn code_after_return_goes_to_an_unreachable_block() {
        let mut b = Builder::new("after", 64);
        let v = b.declare_var(u(8));
        let x = b.iconst(8, 1);
        b.def_var(v, x);
        b.ret_flood();
        let y = b.use_var(v); // never runs: no error, a placeholder value
        b.ret_forward(y);
        let f = b.finish().unwrap();
        assert_eq!(f.layout.len(), 2);
        let mut f2 = f.clone();
        crate::passes::optimize(&mut f2).unwrap();
        assert_eq!(f2.layout.len(), 1, "dce removes it");

        let mut b = Builder::new("unassigned", 64);
        let v = b.declare_var(u(8));
        let y = b.use_var(v);
        b.ret_forward(y);
        let e = b.finish().unwrap_err().to_string();
        assert_eq!(e, "block0: var0 is used before it is assigned");
    }
}

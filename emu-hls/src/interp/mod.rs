//! The untimed IR interpreter: runs a function on an `emu_core::Packet` and `Meta` with its
//! state in the CPU state-element implementations ([`State`]), and gives the `Action`.
//!
//! It is the simulator's "ir" tier: where it and the CPU target disagree on an NF, the
//! lowering from Rust (or a pass) is wrong. Every op does exactly what its documentation in
//! [`ir::op`](crate::ir::op) says; pure ops go through the same evaluation as constant folding
//! ([`eval_pure`]), packet ops through `Packet`'s own accessors.
//!
//! ```
//! use emu_hls::{interp, ir};
//! use emu_core::{Action, Meta, Packet};
//!
//! let f = ir::parse("\
//! fn bounce(window=64) {
//!     state frames: counter<u64>
//!
//! block0:
//!     counter.inc frames
//!     return reply
//! }
//! ").unwrap();
//! let mut state = interp::State::new(&f);
//! let mut frame = vec![0u8; 60];
//! let action = interp::run(&f, &mut state, &mut Packet::new(&mut frame, 64), &Meta::default()).unwrap();
//! assert_eq!(action, Action::Reply);
//! assert_eq!(state.counter("frames"), Some(1));
//! ```

mod state;

pub use state::{
    ArrayImpl, CamImpl, CounterImpl, Element, HashSets, LruImpl, ModelArray, ModelCam, ModelLru, ModelQueue, ModelTcam,
    QueueImpl, State, TcamImpl,
};

use crate::ir::eval::eval_pure;
use crate::ir::{ActionExpr, BitVec, Block, Function, MetaField, Op, StateKind, StateOp, SumScope, Terminator, Value};
use core::fmt;
use emu_core::{Action, Meta, Packet, PortMask};

/// Why a run stopped without a verdict. A verified function only stops for [`InterpError::Limit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InterpError {
    /// More blocks were entered than the limit allows (an unbounded loop).
    Limit(u64),
    /// The function is malformed here (run the verifier).
    Malformed(String),
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InterpError::Limit(n) => write!(f, "no verdict after entering {n} blocks: the function loops without end"),
            InterpError::Malformed(m) => write!(f, "malformed function: {m}"),
        }
    }
}

impl std::error::Error for InterpError {}

/// How many blocks [`run`] enters before giving up.
pub const DEFAULT_BLOCK_LIMIT: u64 = 1_000_000;

/// Runs `func` on `pkt` (edited in place) and `meta`, updating `state`, and gives the verdict.
pub fn run(func: &Function, state: &mut State, pkt: &mut Packet<'_>, meta: &Meta) -> Result<Action, InterpError> {
    run_with_limit(func, state, pkt, meta, DEFAULT_BLOCK_LIMIT)
}

/// [`run`] on a frame, with a packet window of the function's size.
pub fn run_frame(func: &Function, state: &mut State, frame: &mut Vec<u8>, meta: &Meta) -> Result<Action, InterpError> {
    let window = func.window as usize;
    run(func, state, &mut Packet::new(frame, window), meta)
}

/// [`run`], entering at most `limit` blocks.
pub fn run_with_limit(
    func: &Function,
    state: &mut State,
    pkt: &mut Packet<'_>,
    meta: &Meta,
    limit: u64,
) -> Result<Action, InterpError> {
    let mut m = Machine::new(func, state, pkt, meta, vec![None; func.values.len()]);
    m.run(limit)
}

/// [`run`], also giving the value of every SSA value the run defined (indexed by value
/// number; `None` for those on paths not taken): what a test checks facts about values
/// against (`ir::bounds`).
pub fn run_values(
    func: &Function,
    state: &mut State,
    pkt: &mut Packet<'_>,
    meta: &Meta,
) -> Result<(Action, Vec<Option<BitVec>>), InterpError> {
    let mut m = Machine::new(func, state, pkt, meta, vec![None; func.values.len()]);
    let action = m.run(DEFAULT_BLOCK_LIMIT)?;
    Ok((action, m.values))
}

/// Where control goes after a block.
pub(crate) enum Next {
    /// To this block.
    Block(Block),
    /// Out of the function, with this verdict.
    Done(Action),
}

/// The interpreter's machine, also driven instruction by instruction by the back end's cycle
/// model, so both execute ops through this one implementation.
pub(crate) struct Machine<'a, 'p, 'd> {
    func: &'a Function,
    state: &'a mut State,
    pkt: &'a mut Packet<'p>,
    meta: &'d Meta,
    /// The value of each SSA value defined so far (indexed by value number).
    pub(crate) values: Vec<Option<BitVec>>,
}

fn bad(m: impl Into<String>) -> InterpError {
    InterpError::Malformed(m.into())
}

impl<'a, 'p, 'd> Machine<'a, 'p, 'd> {
    /// A machine over `pkt` and `state`, with the values defined so far.
    pub(crate) fn new(
        func: &'a Function,
        state: &'a mut State,
        pkt: &'a mut Packet<'p>,
        meta: &'d Meta,
        values: Vec<Option<BitVec>>,
    ) -> Self {
        Machine { func, state, pkt, meta, values }
    }

    fn get(&self, v: Value) -> Result<BitVec, InterpError> {
        self.values
            .get(v.as_u32() as usize)
            .copied()
            .flatten()
            .ok_or_else(|| bad(format!("{v} is used before it is defined")))
    }

    fn set(&mut self, v: Value, x: BitVec) {
        let i = v.as_u32() as usize;
        if i >= self.values.len() {
            self.values.resize(i + 1, None);
        }
        self.values[i] = Some(x);
    }

    /// Runs the function from its entry, entering at most `limit` blocks.
    fn run(&mut self, limit: u64) -> Result<Action, InterpError> {
        let mut block = self.func.entry().ok_or_else(|| bad("no entry block"))?;
        for _ in 0..limit {
            match self.block(block)? {
                Next::Block(b) => block = b,
                Next::Done(a) => return Ok(a),
            }
        }
        Err(InterpError::Limit(limit))
    }

    fn block(&mut self, b: Block) -> Result<Next, InterpError> {
        let f = self.func;
        let data = f.blocks.get(b).ok_or_else(|| bad(format!("{b} does not exist")))?;
        for &i in &data.insts {
            self.inst(i)?;
        }
        self.terminator(b)
    }

    /// Executes one instruction.
    pub(crate) fn inst(&mut self, i: crate::ir::Inst) -> Result<(), InterpError> {
        let inst = &self.func.insts[i];
        let args = inst.op.args().iter().map(|a| self.get(*a)).collect::<Result<Vec<_>, _>>()?;
        let results = self.exec(&inst.op, &args)?;
        if results.len() != inst.results.len() {
            return Err(bad(format!(
                "{} gave {} results, {} expected",
                inst.op.name(),
                results.len(),
                inst.results.len()
            )));
        }
        for (r, x) in inst.results.iter().zip(results) {
            self.set(*r, x);
        }
        Ok(())
    }

    /// Decides `b`'s terminator: the next block (its parameters set) or the verdict.
    pub(crate) fn terminator(&mut self, b: Block) -> Result<Next, InterpError> {
        let f = self.func;
        let term = f.blocks[b].term.as_ref().ok_or_else(|| bad(format!("{b} has no terminator")))?;
        let call = match term {
            Terminator::Jump(c) => c,
            Terminator::Branch(c, t, e) => {
                if self.get(*c)?.is_zero() {
                    e
                } else {
                    t
                }
            }
            Terminator::Return(a) => return Ok(Next::Done(self.action(a)?)),
        };
        let args = call.args.iter().map(|a| self.get(*a)).collect::<Result<Vec<_>, _>>()?;
        let params = &f.blocks[call.block].params;
        for (p, x) in params.iter().zip(args) {
            self.set(*p, x);
        }
        Ok(Next::Block(call.block))
    }

    fn action(&self, a: &ActionExpr) -> Result<Action, InterpError> {
        Ok(match a {
            ActionExpr::Forward(p) => Action::Forward(self.get(*p)?.to_u64() as u8),
            ActionExpr::Multicast(m) => Action::Multicast(PortMask(self.get(*m)?.to_u64() as u32)),
            ActionExpr::Flood => Action::Flood,
            ActionExpr::Reply => Action::Reply,
            ActionExpr::Drop(r) => Action::Drop(*r),
        })
    }

    fn exec(&mut self, op: &Op, args: &[BitVec]) -> Result<Vec<BitVec>, InterpError> {
        if let Some(x) = eval_pure(op, args) {
            return Ok(vec![x]);
        }
        let addr_of = |a: &crate::ir::Addr| a.resolve(if a.base.is_some() { args.first() } else { None });
        Ok(match op {
            Op::Meta(m) => vec![match m {
                MetaField::InPort => BitVec::new(8, self.meta.in_port as u64),
                MetaField::Len => BitVec::new(16, self.meta.len as u64),
                MetaField::Timestamp => BitVec::new(64, self.meta.timestamp),
            }],
            Op::PktRead(addr, n) => {
                let at = addr_of(addr);
                let bytes: Vec<u8> = (0..*n as u64)
                    .map(|k| match at.checked_add(k).and_then(|i| usize::try_from(i).ok()) {
                        Some(i) => self.pkt.byte(i),
                        None => 0,
                    })
                    .collect();
                vec![BitVec::from_be_bytes(&bytes)]
            }
            Op::PktWrite(addr, _) => {
                let at = addr_of(addr);
                let v = args.last().ok_or_else(|| bad("pkt.write without a value"))?;
                for (k, b) in v.to_be_bytes().into_iter().enumerate() {
                    if let Some(i) = at.checked_add(k as u64).and_then(|i| usize::try_from(i).ok()) {
                        self.pkt.set_byte(i, b);
                    }
                }
                vec![]
            }
            Op::PktLen => vec![BitVec::new(16, self.pkt.len() as u64)],
            Op::PktSetLen(_) => {
                self.pkt.set_len(args[0].to_usize_saturating());
                vec![]
            }
            Op::OnesSum(scope, ..) => {
                let (start, end) = (args[0].to_usize_saturating(), args[1].to_usize_saturating());
                let sum = match scope {
                    SumScope::Frame => self.pkt.ones_sum(start, end),
                    SumScope::Window => {
                        let w = self.pkt.window();
                        emu_core::wire::checksum::sum(w.get(start..end.min(w.len())).unwrap_or(&[]))
                    }
                };
                vec![BitVec::new(32, sum as u64)]
            }
            Op::State(id, sop) => self.state_op(*id, sop, args)?,
            _ => return Err(bad(format!("{} has operands of the wrong widths", op.name()))),
        })
    }

    fn state_op(&mut self, id: crate::ir::StateId, op: &StateOp, args: &[BitVec]) -> Result<Vec<BitVec>, InterpError> {
        let (kind, elem) =
            self.state.element_mut(id).ok_or_else(|| bad(format!("state element {id} does not exist")))?;
        let kind = kind.clone();
        let arg = |n: usize| args.get(n).copied().ok_or_else(|| bad(format!("{} is missing an operand", op.name())));
        // `Option<V>` as (found, value or 0); `Option<(K, V)>` as (evicted, key or 0, value or 0).
        let maybe = |v: Option<BitVec>, vw: u16| match v {
            Some(v) => vec![BitVec::from_bool(true), v],
            None => vec![BitVec::from_bool(false), BitVec::zero(vw)],
        };
        let evicted = |e: Option<(BitVec, BitVec)>, kw: u16, vw: u16| match e {
            Some((k, v)) => vec![BitVec::from_bool(true), k, v],
            None => vec![BitVec::from_bool(false), BitVec::zero(kw), BitVec::zero(vw)],
        };
        let out = match (&kind, elem, op) {
            (StateKind::Counter { bits }, Element::Counter(c), _) => match op {
                StateOp::CounterInc => {
                    c.add(1);
                    vec![]
                }
                StateOp::CounterAdd(_) => {
                    c.add(arg(0)?.to_u64());
                    vec![]
                }
                StateOp::CounterSet(_) => {
                    c.set(arg(0)?.to_u64());
                    vec![]
                }
                StateOp::CounterGet => vec![BitVec::new(*bits, c.get())],
                _ => return Err(bad(format!("{} on a counter", op.name()))),
            },
            (StateKind::Register { .. }, Element::Register(r), _) => match op {
                StateOp::RegGet => vec![r.get()],
                StateOp::RegSet(_) => {
                    r.set(arg(0)?);
                    vec![]
                }
                _ => return Err(bad(format!("{} on a register", op.name()))),
            },
            (StateKind::Array { ty, .. }, Element::Array(a), _) => match op {
                StateOp::ArrayGet(_) => vec![a.get(arg(0)?.to_usize_saturating()).resize(ty.width())],
                StateOp::ArraySet(..) => vec![BitVec::from_bool(a.set(arg(0)?.to_usize_saturating(), arg(1)?))],
                _ => return Err(bad(format!("{} on an array", op.name()))),
            },
            (StateKind::Cam { key, value, .. }, Element::Cam(c), _) => {
                let (kw, vw) = (key.width(), value.width());
                let maybe = |v: Option<BitVec>| match v {
                    Some(v) => vec![BitVec::from_bool(true), v],
                    None => vec![BitVec::from_bool(false), BitVec::zero(vw)],
                };
                match op {
                    StateOp::CamGet(_) => maybe(c.get(arg(0)?)),
                    StateOp::CamContains(_) => vec![BitVec::from_bool(c.contains(arg(0)?))],
                    StateOp::CamRemove(_) => maybe(c.remove(arg(0)?)),
                    StateOp::CamInsert(..) => match c.insert(arg(0)?, arg(1)?) {
                        Some((k, v)) => vec![BitVec::from_bool(true), k, v],
                        None => vec![BitVec::from_bool(false), BitVec::zero(kw), BitVec::zero(vw)],
                    },
                    _ => return Err(bad(format!("{} on a cam", op.name()))),
                }
            }
            (StateKind::Lru { key, value, .. }, Element::Lru(l), _) => {
                let (kw, vw) = (key.width(), value.width());
                match op {
                    StateOp::LruGet(_) => maybe(l.get(arg(0)?), vw),
                    StateOp::LruPeek(_) => maybe(l.peek(arg(0)?), vw),
                    StateOp::LruContains(_) => vec![BitVec::from_bool(l.contains(arg(0)?))],
                    StateOp::LruRemove(_) => maybe(l.remove(arg(0)?), vw),
                    StateOp::LruInsert(..) => evicted(l.insert(arg(0)?, arg(1)?), kw, vw),
                    _ => return Err(bad(format!("{} on an lru", op.name()))),
                }
            }
            (StateKind::HashTable { key, value, .. }, Element::HashTable(h), _) => {
                let (kw, vw) = (key.width(), value.width());
                match op {
                    StateOp::HashGet(_) => maybe(h.get(arg(0)?), vw),
                    StateOp::HashContains(_) => vec![BitVec::from_bool(h.contains(arg(0)?))],
                    StateOp::HashRemove(_) => maybe(h.remove(arg(0)?), vw),
                    StateOp::HashInsert(..) => evicted(h.insert(arg(0)?, arg(1)?), kw, vw),
                    _ => return Err(bad(format!("{} on a hash_table", op.name()))),
                }
            }
            (StateKind::Tcam { value, size, .. }, Element::Tcam(t), _) => match op {
                StateOp::TcamLookup(_) => maybe(t.lookup(arg(0)?), value.width()),
                StateOp::TcamLookupSlot(_) => {
                    let sw = StateKind::slot_width(*size);
                    maybe(t.lookup_slot(arg(0)?).map(|i| BitVec::new(sw, i as u64)), sw)
                }
                StateOp::TcamSet(..) => {
                    vec![BitVec::from_bool(t.set(arg(0)?.to_usize_saturating(), arg(1)?, arg(2)?, arg(3)?))]
                }
                StateOp::TcamClear(_) => {
                    t.clear(arg(0)?.to_usize_saturating());
                    vec![]
                }
                _ => return Err(bad(format!("{} on a tcam", op.name()))),
            },
            (StateKind::Queue { ty, size }, Element::Queue(q), _) => match op {
                StateOp::QueuePush(_) => vec![BitVec::from_bool(q.push(arg(0)?).is_ok())],
                StateOp::QueuePop => maybe(q.pop(), ty.width()),
                StateOp::QueuePeek => maybe(q.peek(), ty.width()),
                StateOp::QueueLen => vec![BitVec::new(StateKind::count_width(*size), q.len() as u64)],
                StateOp::QueueIsEmpty => vec![BitVec::from_bool(q.is_empty())],
                StateOp::QueueIsFull => vec![BitVec::from_bool(q.is_full())],
                _ => return Err(bad(format!("{} on a queue", op.name()))),
            },
            _ => return Err(bad(format!("{} on state element {id} of another kind", op.name()))),
        };
        // A lookup's first result says whether it found the key: counted for profiles.
        if matches!(
            op,
            StateOp::CamGet(_)
                | StateOp::CamContains(_)
                | StateOp::LruGet(_)
                | StateOp::LruPeek(_)
                | StateOp::LruContains(_)
                | StateOp::HashGet(_)
                | StateOp::HashContains(_)
                | StateOp::TcamLookup(_)
                | StateOp::TcamLookupSlot(_)
        ) {
            self.state.count_lookup(id, out.first().is_some_and(|f| !f.is_zero()));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::ir::parse;
    use emu_core::DropReason;

    fn run_text(text: &str, frame: &mut Vec<u8>, window: usize) -> (Action, State) {
        let f = parse(text).unwrap();
        crate::ir::verify(&f).unwrap();
        let mut s = State::new(&f);
        let meta = Meta { in_port: 3, len: frame.len() as u16, timestamp: 7 };
        let a = run(&f, &mut s, &mut Packet::new(frame, window), &meta).unwrap();
        (a, s)
    }

    #[test]
    fn packet_reads_and_writes_follow_the_window_rules() {
        let text = "\
fn w(window=8) {
block0:
    v0:u32 = pkt.read 6, 4
    v1:u64 = const 0xffffffffffffffff
    v2:u16 = pkt.read v1+2, 2
    v3:u48 = concat v0, v2
    v4:u48 = const 0xa1a2a3a4a5a6
    pkt.write 4, v4
    v5:u8 = trunc v3
    v6:u16 = pkt.len
    v7:u16 = meta.len
    v8:u1 = eq v6, v7
    br v8, block1, block2

block1:
    return forward v5

block2:
    return drop malformed
}
";
        // 10 bytes, window 8: bytes 8 and 9 are past the window (read 0, not written).
        let mut frame: Vec<u8> = (1..=10).collect();
        let (a, _) = run_text(text, &mut frame, 8);
        // v0 = bytes 6..10 = 07 08 00 00; v2 = 0 (saturated address); v5 = low byte of v2.
        assert_eq!(a, Action::Forward(0));
        assert_eq!(frame, [1, 2, 3, 4, 0xa1, 0xa2, 0xa3, 0xa4, 9, 10]);
        let text2 = text.replace("v5:u8 = trunc v3", "v5:u8 = slice v3, 32");
        let mut frame: Vec<u8> = (1..=10).collect();
        let (a, _) = run_text(&text2, &mut frame, 8);
        assert_eq!(a, Action::Forward(0x08), "byte 7 of the window");
        // A frame shorter than the read: past the end reads 0.
        let mut short = vec![0xee; 7];
        let (a, _) = run_text(&text2, &mut short, 8);
        assert_eq!(a, Action::Forward(0), "byte 7 is past the end");
        assert_eq!(short, [0xee, 0xee, 0xee, 0xee, 0xa1, 0xa2, 0xa3]);
    }

    #[test]
    fn set_len_and_sums() {
        let text = "\
fn sums(window=6) {
block0:
    v0:u8 = const 0
    v1:u8 = const 9
    v2:u32 = pkt.sum v0, v1
    v3:u32 = pkt.window_sum v0, v1
    v4:u32 = sub v2, v3
    v5:u8 = trunc v4
    v6:u16 = const 12
    pkt.set_len v6
    return forward v5
}
";
        // Frame sum of 9 bytes vs window sum of 6: the difference is 0x0707 + 0x0800 = 0x0f07.
        let mut frame = vec![1, 2, 3, 4, 5, 6, 7, 7, 8, 9];
        let (a, _) = run_text(text, &mut frame, 6);
        assert_eq!(a, Action::Forward(0x07));
        assert_eq!(frame.len(), 10, "growth past the old length is capped at max(window, len)");
        let mut short = vec![1, 2, 3];
        run_text(text, &mut short, 6);
        assert_eq!(short, [1, 2, 3, 0, 0, 0], "grown with zeros up to the window");
    }

    #[test]
    fn arrays_cams_counters_registers() {
        let text = "\
fn state(window=64) {
    state a: array<u16, 4>
    state t: cam<u8, u8, 2>
    state c: counter<u4>
    state r: register<u12>

block0:
    v0:u8 = const 2
    v1:u16 = const 0xbeef
    v2:u1 = array.set a, v0, v1
    v3:u8 = const 4
    v4:u1 = array.set a, v3, v1
    v5:u16 = array.get a, v3
    v6:u16 = array.get a, v0
    v7:u8 = const 15
    counter.set c, v7
    counter.inc c
    v8:u4 = counter.get c
    v9:u1, v10:u8, v11:u8 = cam.insert t, v0, v3
    v12:u1, v13:u8, v14:u8 = cam.insert t, v3, v0
    v15:u1, v16:u8, v17:u8 = cam.insert t, v7, v7
    v18:u1 = cam.contains t, v0
    v19:u1, v20:u8 = cam.remove t, v3
    v21:u1, v22:u8 = cam.get t, v3
    v23:u12 = trunc v1
    reg.set r, v23
    v24:u12 = reg.get r
    v25:u8 = trunc v24
    return forward v25
}
";
        let f = parse(text).unwrap();
        crate::ir::verify(&f).unwrap();
        let mut s = State::new(&f);
        let mut frame = vec![0u8; 60];
        let a = run(&f, &mut s, &mut Packet::new(&mut frame, 64), &Meta::default()).unwrap();
        assert_eq!(a, Action::Forward(0xef));
        assert_eq!(s.array_get("a", 2), Some(BitVec::new(16, 0xbeef)));
        assert_eq!(s.array_get("a", 4), Some(BitVec::new(16, 0)), "out of range reads 0");
        assert_eq!(s.counter("c"), Some(0), "a 4-bit counter wraps at 16");
        assert_eq!(s.register("r"), Some(BitVec::new(12, 0xeef)));
        // Slot 0 (key 2) was evicted by key 15; key 4 was removed.
        assert_eq!(s.cam_entries("t"), Some(vec![(0, BitVec::new(8, 15), BitVec::new(8, 15))]));
    }

    /// A function that runs `op(b, n)` when byte 0 of the frame is `n` (`n < ops`), writes the
    /// results it gives big-endian from byte 32 on (each in whole bytes), and replies; any other
    /// first byte floods. `op` reads its operands from the frame itself.
    fn dispatcher(
        name: &str,
        declare: impl FnOnce(&mut crate::ir::Builder) -> crate::ir::StateId,
        ops: usize,
        mut op: impl FnMut(&mut crate::ir::Builder, crate::ir::StateId, usize) -> Vec<Value>,
    ) -> Function {
        let mut b = crate::ir::Builder::new(name, 64);
        let s = declare(&mut b);
        let which = b.pkt_read(0, 1);
        for n in 0..ops {
            let c = b.eq_imm(which, n as u64);
            let (yes, no) = (b.new_block(), b.new_block());
            b.branch(c, yes, no);
            b.switch_to(yes);
            let mut at = 32;
            for r in op(&mut b, s, n) {
                let w = b.ty(r).width();
                let r = if w.is_multiple_of(8) { r } else { b.zext(r, w.div_ceil(8) * 8) };
                b.pkt_write(at, r);
                at += w.div_ceil(8) as u32;
            }
            b.ret_reply();
            b.switch_to(no);
        }
        b.ret_flood();
        b.finish().unwrap()
    }

    /// `v` as `⌈w / 8⌉` big-endian bytes: what [`dispatcher`] writes for a result of `w` bits.
    fn be(v: u128, w: u16) -> Vec<u8> {
        let n = w.div_ceil(8) as usize;
        v.to_be_bytes()[16 - n..].to_vec()
    }

    fn opt_be(v: Option<u128>, w: u16) -> Vec<u8> {
        [be(v.is_some() as u128, 1), be(v.unwrap_or(0), w)].concat()
    }

    fn evicted_be(e: Option<(u128, u128)>, kw: u16, vw: u16) -> Vec<u8> {
        let (k, v) = e.unwrap_or((0, 0));
        [be(e.is_some() as u128, 1), be(k, kw), be(v, vw)].concat()
    }

    /// Runs `frame` through `f` and gives the result bytes (from byte 32 on, `n` of them).
    fn results(f: &Function, state: &mut State, frame: &[u8], n: usize) -> Vec<u8> {
        let mut frame = frame.to_vec();
        frame.resize(64, 0);
        let a = run_frame(f, state, &mut frame, &Meta::default()).unwrap();
        assert_eq!(a, Action::Reply);
        frame[32..32 + n].to_vec()
    }

    fn xorshift(mut x: u64) -> impl FnMut(u64) -> u64 {
        move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        }
    }

    /// Every `lru.*` op, run by the interpreter on seeded random operations, gives what
    /// `emu_core::Lru` gives, and leaves the same entries in the same recency order — through
    /// the CPU implementation (3 slots) and the model (70 slots).
    #[test]
    fn lru_ops_match_the_cpu() {
        fn check<const N: usize>(seed: u64) {
            let f = dispatcher(
                "lru",
                |b| b.lru("t", crate::ir::u(16), crate::ir::u(8), N as u32, N as u32),
                5,
                |b, t, n| {
                    let k = b.pkt_read(1, 2);
                    let v = b.pkt_read(3, 1);
                    match n {
                        0 => {
                            let m = b.lru_get(t, k);
                            vec![m.valid, m.value]
                        }
                        1 => {
                            let m = b.lru_peek(t, k);
                            vec![m.valid, m.value]
                        }
                        2 => vec![b.lru_contains(t, k)],
                        3 => {
                            let e = b.lru_insert(t, k, v);
                            vec![e.valid, e.key, e.value]
                        }
                        _ => {
                            let m = b.lru_remove(t, k);
                            vec![m.valid, m.value]
                        }
                    }
                },
            );
            let mut state = State::new(&f);
            let mut cpu: emu_core::Lru<u16, u8, N> = Default::default();
            let mut next = xorshift(seed);
            let mut evictions = 0;
            for step in 0..5000 {
                // Inserts three times as often as removes, so that the table fills and evicts.
                let op = [0, 1, 2, 3, 3, 3, 4, 0][next(8) as usize];
                let (k, v) = (next(N as u64 * 3 / 2 + 2) as u16 * 0x0101, next(256) as u8);
                let want = match op {
                    0 => opt_be(cpu.get(k).map(|x| x as u128), 8),
                    1 => opt_be(cpu.peek(k).map(|x| x as u128), 8),
                    2 => be(cpu.contains(k) as u128, 1),
                    3 => {
                        let e = cpu.insert(k, v);
                        evictions += e.is_some() as usize;
                        evicted_be(e.map(|(k, v)| (k as u128, v as u128)), 16, 8)
                    }
                    _ => opt_be(cpu.remove(k).map(|x| x as u128), 8),
                };
                let frame = [op, (k >> 8) as u8, k as u8, v];
                assert_eq!(results(&f, &mut state, &frame, want.len()), want, "N {N}, step {step}: op {op}");
                let entries: Vec<_> =
                    cpu.entries().map(|(i, k, v)| (i, BitVec::new(16, k as u64), BitVec::new(8, v as u64))).collect();
                assert_eq!(state.lru_entries("t").unwrap(), entries, "N {N}, step {step}");
                let order: Vec<_> = cpu.keys_by_recency().map(|k| BitVec::new(16, k as u64)).collect();
                assert_eq!(state.lru_keys_by_recency("t").unwrap(), order, "N {N}, step {step}");
            }
            assert!(evictions > 50, "N {N}: {evictions} evictions");
        }
        check::<3>(0x1111);
        check::<70>(0x2222);
    }

    /// Every `hash_table.*` op gives what `emu_core::HashTable` gives on the NF's key type (the
    /// set is the CRC of the key's own 4 bytes), with the same entries in the same slots.
    #[test]
    fn hash_table_ops_match_the_cpu() {
        let f = dispatcher(
            "hash",
            |b| b.hash_table("t", crate::ir::u(32), crate::ir::u(16), 16, 2),
            4,
            |b, t, n| {
                let k = b.pkt_read(1, 4);
                let v = b.pkt_read(5, 2);
                match n {
                    0 => {
                        let m = b.hash_get(t, k);
                        vec![m.valid, m.value]
                    }
                    1 => vec![b.hash_contains(t, k)],
                    2 => {
                        let e = b.hash_insert(t, k, v);
                        vec![e.valid, e.key, e.value]
                    }
                    _ => {
                        let m = b.hash_remove(t, k);
                        vec![m.valid, m.value]
                    }
                }
            },
        );
        let mut state = State::new(&f);
        let mut cpu: emu_core::HashTable<u32, u16, 16, 2> = Default::default();
        let mut next = xorshift(0x3333);
        let mut evictions = 0;
        for step in 0..5000 {
            let (op, k, v) = (next(4) as u8, (next(40) as u32).wrapping_mul(0x9e37_79b9), next(1 << 16) as u16);
            let want = match op {
                0 => opt_be(cpu.get(k).map(|x| x as u128), 16),
                1 => be(cpu.contains(k) as u128, 1),
                2 => {
                    let e = cpu.insert(k, v);
                    evictions += e.is_some() as usize;
                    evicted_be(e.map(|(k, v)| (k as u128, v as u128)), 32, 16)
                }
                _ => opt_be(cpu.remove(k).map(|x| x as u128), 16),
            };
            let mut frame = vec![op];
            frame.extend(k.to_be_bytes());
            frame.extend(v.to_be_bytes());
            assert_eq!(results(&f, &mut state, &frame, want.len()), want, "step {step}: op {op}");
            let entries: Vec<_> =
                cpu.entries().map(|(i, k, v)| (i, BitVec::new(32, k as u64), BitVec::new(16, v as u64))).collect();
            assert_eq!(state.hash_table_entries("t").unwrap(), entries, "step {step}");
        }
        assert!(evictions > 50, "{evictions} evictions");
    }

    /// Every `tcam.*` op gives what `emu_core::Tcam` gives: rules set (slots past the end
    /// rejected) and cleared at computed slots, lookups of the result and of the slot — through
    /// the CPU implementation (5 slots) and the model (100 slots).
    #[test]
    fn tcam_ops_match_the_cpu() {
        fn check<const N: usize>(seed: u64) {
            let f = dispatcher(
                "tcam",
                |b| b.tcam("t", crate::ir::u(16), crate::ir::u(8), N as u32),
                4,
                |b, t, n| {
                    let k = b.pkt_read(1, 2);
                    let m = b.pkt_read(3, 2);
                    let r = b.pkt_read(5, 1);
                    let i = b.pkt_read(6, 1);
                    match n {
                        0 => {
                            let x = b.tcam_lookup(t, k);
                            vec![x.valid, x.value]
                        }
                        1 => {
                            let x = b.tcam_lookup_slot(t, k);
                            vec![x.valid, x.value]
                        }
                        2 => vec![b.tcam_set(t, i, k, m, r)],
                        _ => {
                            b.tcam_clear(t, i);
                            vec![]
                        }
                    }
                },
            );
            let sw = crate::ir::StateKind::slot_width(N as u32);
            let mut state = State::new(&f);
            let mut cpu: emu_core::Tcam<u16, u8, N> = Default::default();
            let mut next = xorshift(seed);
            let mut hits = 0;
            for step in 0..5000 {
                let op = next(4) as u8;
                let k = next(1 << 16) as u16;
                let m = (next(1 << 16) & next(1 << 16) & next(1 << 16)) as u16;
                let (r, i) = (next(256) as u8, next(N as u64 + 3) as u8);
                let want = match op {
                    0 => {
                        hits += cpu.lookup(k).is_some() as usize;
                        opt_be(cpu.lookup(k).map(|x| x as u128), 8)
                    }
                    1 => opt_be(cpu.lookup_slot(k).map(|x| x as u128), sw),
                    2 => be(cpu.set(i as usize, k, m, r) as u128, 1),
                    _ => {
                        cpu.clear(i as usize);
                        vec![]
                    }
                };
                let frame = [op, (k >> 8) as u8, k as u8, (m >> 8) as u8, m as u8, r, i];
                assert_eq!(results(&f, &mut state, &frame, want.len()), want, "N {N}, step {step}: op {op}");
                let entries: Vec<_> = (0..N)
                    .filter_map(|s| cpu.entry(s).map(|(v, m, r)| (s, v, m, r)))
                    .map(|(s, v, m, r)| {
                        (s, BitVec::new(16, v as u64), BitVec::new(16, m as u64), BitVec::new(8, r as u64))
                    })
                    .collect();
                assert_eq!(state.tcam_entries("t").unwrap(), entries, "N {N}, step {step}");
            }
            assert!(hits > 100, "N {N}: {hits} hits");
        }
        check::<5>(0x4444);
        check::<100>(0x5555);
    }

    /// Every `queue.*` op gives what `emu_core::Queue` gives, pushes onto a full queue and pops
    /// of an empty one included — through the CPU implementation (3) and the model (300).
    #[test]
    fn queue_ops_match_the_cpu() {
        fn check<const N: usize>(seed: u64) {
            let f = dispatcher(
                "queue",
                |b| b.queue("q", crate::ir::u(12), N as u32),
                6,
                |b, q, n| {
                    let v = b.pkt_read(1, 2);
                    let v = b.trunc(v, 12);
                    match n {
                        0 => vec![b.queue_push(q, v)],
                        1 => {
                            let m = b.queue_pop(q);
                            vec![m.valid, m.value]
                        }
                        2 => {
                            let m = b.queue_peek(q);
                            vec![m.valid, m.value]
                        }
                        3 => vec![b.queue_len(q)],
                        4 => vec![b.queue_is_empty(q)],
                        _ => vec![b.queue_is_full(q)],
                    }
                },
            );
            let cw = crate::ir::StateKind::count_width(N as u32);
            let mut state = State::new(&f);
            let mut cpu: emu_core::Queue<u16, N> = Default::default();
            let mut next = xorshift(seed);
            let (mut rejected, mut empty) = (0, 0);
            for step in 0..10_000 {
                // Phases of 1000 operations that fill (80 % pushes) and drain (60 % pops).
                let (push, pop) = if step / 1000 % 2 == 0 { (80, 5) } else { (5, 60) };
                let x = next(100);
                let op = if x < push {
                    0
                } else if x < push + pop {
                    1
                } else {
                    2 + next(4) as u8
                };
                let v = next(1 << 12) as u16;
                let want = match op {
                    0 => {
                        let ok = cpu.push(v).is_ok();
                        rejected += !ok as usize;
                        be(ok as u128, 1)
                    }
                    1 => {
                        empty += cpu.is_empty() as usize;
                        opt_be(cpu.pop().map(|x| x as u128), 12)
                    }
                    2 => opt_be(cpu.peek().map(|x| x as u128), 12),
                    3 => be(cpu.len() as u128, cw),
                    4 => be(cpu.is_empty() as u128, 1),
                    _ => be(cpu.is_full() as u128, 1),
                };
                let frame = [op, (v >> 8) as u8, v as u8];
                assert_eq!(results(&f, &mut state, &frame, want.len()), want, "N {N}, step {step}: op {op}");
                let values: Vec<_> = cpu.iter().map(|v| BitVec::new(12, v as u64)).collect();
                assert_eq!(state.queue_values("q").unwrap(), values, "N {N}, step {step}");
            }
            assert!(rejected > 10 && empty > 10, "N {N}: {rejected} pushes rejected, {empty} pops of an empty queue");
        }
        check::<3>(0x6666);
        check::<300>(0x7777);
    }

    #[test]
    fn an_endless_loop_hits_the_limit() {
        let f = parse("fn spin(window=64) {\nblock0:\n    jump block0\n}\n").unwrap();
        let mut s = State::new(&f);
        let mut frame = vec![0u8; 14];
        let e = run_with_limit(&f, &mut s, &mut Packet::new(&mut frame, 64), &Meta::default(), 100).unwrap_err();
        assert_eq!(e, InterpError::Limit(100));
        assert!(e.to_string().contains("loops without end"));
    }

    #[test]
    fn drop_reasons_and_multicast() {
        let text = "\
fn v(window=64) {
block0:
    v0:u8 = meta.in_port
    v1:u1 = slice v0, 0
    br v1, block1, block2

block1:
    v2:u32 = const 5
    return multicast v2

block2:
    return drop no_route
}
";
        let (a, _) = run_text(text, &mut vec![0; 14], 64);
        assert_eq!(a, Action::Multicast(PortMask(5)), "in_port 3 is odd");
        let f = parse(text).unwrap();
        let mut s = State::new(&f);
        let meta = Meta { in_port: 2, ..Meta::default() };
        let a = run_frame(&f, &mut s, &mut vec![0; 14], &meta).unwrap();
        assert_eq!(a, Action::Drop(DropReason::NoRoute));
    }
}

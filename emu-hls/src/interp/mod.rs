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

pub use state::{ArrayImpl, CamImpl, CounterImpl, Element, ModelArray, ModelCam, State};

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
    let mut block = func.entry().ok_or_else(|| InterpError::Malformed("no entry block".into()))?;
    for _ in 0..limit {
        match m.block(block)? {
            Next::Block(b) => block = b,
            Next::Done(a) => return Ok(a),
        }
    }
    Err(InterpError::Limit(limit))
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
        Ok(match (&kind, elem, op) {
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
            _ => return Err(bad(format!("{} on state element {id} of another kind", op.name()))),
        })
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

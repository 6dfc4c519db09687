//! `const-fold`: evaluates operations whose operands are constants, simplifies algebraic
//! identities, and turns branches on constants into jumps.

use super::Pass;
use crate::ir::eval::eval_pure;
use crate::ir::visit::{walk_mut, VisitorMut};
use crate::ir::{Addr, BinaryOp, BitVec, Block, CastOp, CmpOp, Function, Inst, Op, Terminator, Value};
use std::collections::HashMap;

/// Constant folding. Rules, each keeping the exact semantics:
///
/// - a side-effect-free op whose operands are all constants becomes a `const` of its result
///   ([`eval_pure`], the interpreter's own evaluation);
/// - identities replace a result by an operand: `x+0`, `x-0`, `x|0`, `x^0`, `x&ones`, `x*1`,
///   shifts by 0, `select` on a constant or with equal arms, casts and slices that change
///   nothing, `csum.fold` of a zero-extended `u16`;
/// - a `select` of `u1` constants becomes logic: `select c, 1, x` is `or c, x`,
///   `select c, x, 0` is `and c, x`, `select c, 1, 0` is `c`;
/// - absorbing elements give constants: `x&0`, `x*0`, `x|ones`, `eq x, x`, `ne x, x`, …;
/// - a constant packet-address base joins the constant offset;
/// - `br` on a constant, or to the same target with the same arguments, becomes `jump`.
///
/// Replaced instructions are left for `dce`.
#[derive(Debug, Default, Clone, Copy)]
pub struct ConstFold;

impl Pass for ConstFold {
    fn name(&self) -> &'static str {
        "const-fold"
    }

    fn description(&self) -> &'static str {
        "evaluates operations on constants, simplifies identities, folds branches on constants"
    }

    fn run(&mut self, func: &mut Function) -> bool {
        let mut v = Folder { aliases: HashMap::new(), changed: false };
        walk_mut(func, &mut v);
        func.replace_uses(&v.aliases);
        v.changed
    }
}

struct Folder {
    aliases: HashMap<Value, Value>,
    changed: bool,
}

impl Folder {
    fn resolve(&self, mut v: Value) -> Value {
        while let Some(&n) = self.aliases.get(&v) {
            v = n;
        }
        v
    }
}

enum Rewrite {
    Alias(Value),
    Const(BitVec),
    Op(Op),
}

fn simplify(func: &Function, op: &Op) -> Option<Rewrite> {
    let k = |v: Value| func.as_const(v).copied();
    let is = |v: Value, f: &dyn Fn(&BitVec) -> bool| k(v).is_some_and(|c| f(&c));
    let zero = |v: Value| is(v, &|c| c.is_zero());
    let ones = |v: Value| is(v, &|c| c.is_ones());
    let one = |v: Value| is(v, &|c| c.to_u64_saturating() == 1);
    let width = |v: Value| func.value_type(v).width();
    // All operands constant: evaluate.
    if !matches!(op, Op::Const(_)) {
        let args = op.args();
        if let Some(consts) = args.iter().map(|a| k(*a)).collect::<Option<Vec<_>>>() {
            if let Some(r) = eval_pure(op, &consts) {
                return Some(Rewrite::Const(r));
            }
        }
    }
    use BinaryOp::*;
    match *op {
        Op::Binary(Add | Sub | Or | Xor | Shl | Lshr | Ashr, a, b) if zero(b) => Some(Rewrite::Alias(a)),
        Op::Binary(Add | Or | Xor, a, b) if zero(a) => Some(Rewrite::Alias(b)),
        Op::Binary(And, a, b) if ones(b) => Some(Rewrite::Alias(a)),
        Op::Binary(And, a, b) if ones(a) => Some(Rewrite::Alias(b)),
        Op::Binary(Mul, a, b) if one(b) => Some(Rewrite::Alias(a)),
        Op::Binary(Mul, a, b) if one(a) => Some(Rewrite::Alias(b)),
        Op::Binary(And | Mul, a, b) if zero(a) || zero(b) => Some(Rewrite::Const(BitVec::zero(width(a)))),
        Op::Binary(Or, a, b) if ones(a) || ones(b) => Some(Rewrite::Const(BitVec::ones(width(a)))),
        Op::Binary(Shl | Lshr, a, _) if zero(a) => Some(Rewrite::Const(BitVec::zero(width(a)))),
        Op::Binary(Sub | Xor, a, b) if a == b => Some(Rewrite::Const(BitVec::zero(width(a)))),
        Op::Binary(And | Or, a, b) if a == b => Some(Rewrite::Alias(a)),
        Op::Cmp(op, a, b) if a == b => Some(Rewrite::Const(BitVec::from_bool(matches!(
            op,
            CmpOp::Eq | CmpOp::Ule | CmpOp::Uge | CmpOp::Sle | CmpOp::Sge
        )))),
        Op::Select(c, a, b) => match k(c) {
            Some(cv) => Some(Rewrite::Alias(if cv.is_zero() { b } else { a })),
            None if a == b => Some(Rewrite::Alias(a)),
            // On u1: select c, 1, 0 is c; select c, 1, x is c | x; select c, x, 0 is c & x.
            None if width(a) == 1 && one(a) && zero(b) => Some(Rewrite::Alias(c)),
            None if width(a) == 1 && one(a) => Some(Rewrite::Op(Op::Binary(Or, c, b))),
            None if width(a) == 1 && zero(b) => Some(Rewrite::Op(Op::Binary(And, c, a))),
            None => None,
        },
        Op::Cast(_, a, w) if w == width(a) => Some(Rewrite::Alias(a)),
        Op::Cast(CastOp::Trunc, a, w) => match func.def_inst(a).map(|i| &func.insts[i].op) {
            // trunc (zext x) to x's width is x.
            Some(Op::Cast(CastOp::Zext | CastOp::Sext, x, _)) if width(*x) == w => Some(Rewrite::Alias(*x)),
            _ => None,
        },
        Op::Slice(a, 0, w) if w == width(a) => Some(Rewrite::Alias(a)),
        Op::CsumFold(a) if width(a) == 16 => Some(Rewrite::Alias(a)),
        Op::CsumFold(a) => match func.def_inst(a).map(|i| &func.insts[i].op) {
            // A zero-extended u16 is at most 0xffff: folding changes nothing.
            Some(Op::Cast(CastOp::Zext, x, _)) if width(*x) == 16 => Some(Rewrite::Alias(*x)),
            // So is a sum (it comes folded): a wire, not another fold after the sum's own.
            Some(Op::OnesSum(..)) => Some(Rewrite::Op(Op::Cast(CastOp::Trunc, a, 16))),
            _ => None,
        },
        Op::PktRead(addr, n) => const_base(func, addr).map(|a| Rewrite::Op(Op::PktRead(a, n))),
        Op::PktWrite(addr, v) => const_base(func, addr).map(|a| Rewrite::Op(Op::PktWrite(a, v))),
        _ => None,
    }
}

/// `addr` with a constant base folded into the offset, when that fits.
fn const_base(func: &Function, addr: Addr) -> Option<Addr> {
    let c = func.as_const(addr.base?)?;
    let off = c.to_u64_saturating().checked_add(addr.offset as u64)?;
    Some(Addr::at(u32::try_from(off).ok()?))
}

impl VisitorMut for Folder {
    fn inst(&mut self, func: &mut Function, _block: Block, inst: Inst) {
        // Uses of values already aliased see their replacement first.
        let aliases = &self.aliases;
        func.insts[inst].op.map_args(|a| {
            let mut a = a;
            while let Some(&n) = aliases.get(&a) {
                a = n;
            }
            a
        });
        let op = func.insts[inst].op.clone();
        let Some(rw) = simplify(func, &op) else { return };
        let result = func.insts[inst].results.first().copied();
        match rw {
            Rewrite::Alias(v) => {
                let r = result.expect("an op with an alias has a result");
                let v = self.resolve(v);
                if v != r {
                    self.aliases.insert(r, v);
                    self.changed = true;
                }
            }
            Rewrite::Const(c) => {
                func.insts[inst].op = Op::Const(c);
                self.changed = true;
            }
            Rewrite::Op(new) => {
                if new != op {
                    func.insts[inst].op = new;
                    self.changed = true;
                }
            }
        }
    }

    fn terminator(&mut self, func: &mut Function, block: Block) {
        let aliases = &self.aliases;
        let term = func.blocks[block].term.as_mut().expect("visited blocks have terminators");
        term.map_args(|a| {
            let mut a = a;
            while let Some(&n) = aliases.get(&a) {
                a = n;
            }
            a
        });
        let Terminator::Branch(c, t, e) = term.clone() else { return };
        let new = match func.as_const(c) {
            Some(cv) => Some(if cv.is_zero() { e } else { t }),
            None if t == e => Some(t),
            None => None,
        };
        if let Some(call) = new {
            func.blocks[block].term = Some(Terminator::Jump(call));
            self.changed = true;
        }
    }
}

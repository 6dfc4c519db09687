//! Evaluation of the operations whose results depend on their operands alone: the one
//! definition that constant folding and the interpreter share.

use super::bits::BitVec;
use super::op::{BinaryOp, CastOp, CmpOp, Op, UnaryOp};
use core::cmp::Ordering;

/// The results of `op` on operand values `args` (in [`Op::args`] order), for the ops that need
/// nothing else: `const`, unary, binary, comparisons, casts, `select`, `slice`, `concat`,
/// `csum.fold`. `None` for every other op (packet, metadata, state) and for operands whose
/// widths do not fit the op (which the verifier rejects).
pub fn eval_pure(op: &Op, args: &[BitVec]) -> Option<BitVec> {
    let same = |a: &BitVec, b: &BitVec| a.width() == b.width();
    Some(match (op, args) {
        (Op::Const(c), []) => *c,
        (Op::Unary(UnaryOp::Not, _), [a]) => a.not(),
        (Op::Unary(UnaryOp::Neg, _), [a]) => a.neg(),
        (Op::Binary(op, ..), [a, n]) if op.is_shift() => {
            let n = n.to_u64_saturating();
            match op {
                BinaryOp::Shl => a.shl(n),
                BinaryOp::Lshr => a.lshr(n),
                _ => a.ashr(n),
            }
        }
        (Op::Binary(op, ..), [a, b]) if same(a, b) => match op {
            BinaryOp::Add => a.add(b),
            BinaryOp::Sub => a.sub(b),
            BinaryOp::Mul => a.mul(b),
            BinaryOp::And => a.and(b),
            BinaryOp::Or => a.or(b),
            BinaryOp::Xor => a.xor(b),
            BinaryOp::Shl | BinaryOp::Lshr | BinaryOp::Ashr => unreachable!(),
        },
        (Op::Cmp(op, ..), [a, b]) if same(a, b) => {
            let (u, s) = (a.ucmp(b), a.scmp(b));
            BitVec::from_bool(match op {
                CmpOp::Eq => u == Ordering::Equal,
                CmpOp::Ne => u != Ordering::Equal,
                CmpOp::Ult => u == Ordering::Less,
                CmpOp::Ule => u != Ordering::Greater,
                CmpOp::Ugt => u == Ordering::Greater,
                CmpOp::Uge => u != Ordering::Less,
                CmpOp::Slt => s == Ordering::Less,
                CmpOp::Sle => s != Ordering::Greater,
                CmpOp::Sgt => s == Ordering::Greater,
                CmpOp::Sge => s != Ordering::Less,
            })
        }
        (Op::Cast(op, _, w), [a]) => match op {
            CastOp::Zext if *w >= a.width() => a.zext(*w),
            CastOp::Sext if *w >= a.width() => a.sext(*w),
            CastOp::Trunc if *w <= a.width() => a.trunc(*w),
            _ => return None,
        },
        (Op::Select(..), [c, a, b]) if same(a, b) => {
            if c.is_zero() {
                *b
            } else {
                *a
            }
        }
        (Op::Slice(_, lo, w), [a]) if *lo as u32 + *w as u32 <= a.width() as u32 => a.slice(*lo, *w),
        (Op::Concat(..), [hi, lo]) if hi.width() as u32 + lo.width() as u32 <= super::bits::MAX_WIDTH as u32 => {
            BitVec::concat(hi, lo)
        }
        (Op::CsumFold(_), [a]) if a.width() <= 64 => BitVec::new(16, csum_fold(a.to_u64()) as u64),
        _ => return None,
    })
}

/// `emu_core::wire::checksum::fold` widened to 64-bit operands: while the value exceeds
/// 0xffff, replace it with `(value & 0xffff) + (value >> 16)`.
pub fn csum_fold(v: u64) -> u16 {
    match u32::try_from(v) {
        Ok(v32) => emu_core::wire::checksum::fold(v32),
        Err(_) => {
            let mut acc = v;
            while acc > 0xffff {
                acc = (acc & 0xffff) + (acc >> 16);
            }
            acc as u16
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::ir::function::Value;

    fn v() -> Value {
        Value::from_u32(0)
    }

    #[test]
    fn evaluates_the_pure_ops() {
        let b = |w, x| BitVec::new(w, x);
        assert_eq!(eval_pure(&Op::Binary(BinaryOp::Add, v(), v()), &[b(8, 250), b(8, 10)]), Some(b(8, 4)));
        assert_eq!(eval_pure(&Op::Binary(BinaryOp::Shl, v(), v()), &[b(16, 1), b(3, 4)]), Some(b(16, 16)));
        assert_eq!(eval_pure(&Op::Cmp(CmpOp::Slt, v(), v()), &[b(8, 0xff), b(8, 0)]), Some(b(1, 1)));
        assert_eq!(eval_pure(&Op::Cmp(CmpOp::Ult, v(), v()), &[b(8, 0xff), b(8, 0)]), Some(b(1, 0)));
        assert_eq!(eval_pure(&Op::Cast(CastOp::Sext, v(), 16), &[b(8, 0x80)]), Some(b(16, 0xff80)));
        assert_eq!(eval_pure(&Op::Slice(v(), 40, 1), &[b(48, 1 << 40)]), Some(b(1, 1)));
        assert_eq!(eval_pure(&Op::Concat(v(), v()), &[b(8, 0x12), b(8, 0x34)]), Some(b(16, 0x1234)));
        assert_eq!(eval_pure(&Op::CsumFold(v()), &[b(32, 0x0001_fffe)]), Some(b(16, 0xffff)));
        assert_eq!(eval_pure(&Op::CsumFold(v()), &[b(64, 0xffff_ffff_ffff_ffff)]), Some(b(16, 0xffff)));
        assert_eq!(eval_pure(&Op::PktLen, &[]), None);
        assert_eq!(eval_pure(&Op::Binary(BinaryOp::Add, v(), v()), &[b(8, 1), b(16, 1)]), None, "widths differ");
    }
}

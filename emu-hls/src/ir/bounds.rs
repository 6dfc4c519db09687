//! Upper bounds of values: how many low bits each value can need, from how it is computed.
//!
//! Rust code computes packet positions in `usize`, so the IR carries 64-bit values whose high
//! bits are always zero: a position is a constant plus a few bytes read from the packet. Held
//! in registers across FSM states, each of them is 64 flip-flops, most of them constant, which
//! yosys finds one logic level per pass of its `opt` loop (the DNS server's label walk adds
//! 128 such levels). The bound lets the back end register only the bits that can be set.
//!
//! The analysis is an interval's upper end, per value, in one pass over the blocks in reverse
//! postorder (the scheduled CFG is acyclic): each op's bound follows from its operands'
//! (an add of bounded values is bounded unless it can wrap; a read of `n` bytes is below
//! 2<sup>8n</sup>), a block parameter's is the largest of its incoming arguments'. Anything
//! it cannot bound (state reads, subtraction, wrapping) is bounded by its type only. With a
//! loop in the CFG every value is bounded by its type only.

use super::cfg::Cfg;
use super::function::{Function, Value};
use super::op::{BinaryOp, CastOp, MetaField, Op, UnaryOp};
use std::collections::HashMap;

/// Per value, the largest it can be, when that is below what its type allows and fits in a
/// `u128`; a value missing is bounded by its type only.
#[derive(Debug, Clone, Default)]
pub struct Bounds {
    max: HashMap<Value, u128>,
}

/// The largest value of `w` bits, when it fits in a `u128`.
fn type_max(w: u16) -> Option<u128> {
    match w {
        0..=127 => Some((1u128 << w) - 1),
        128 => Some(u128::MAX),
        _ => None,
    }
}

/// The smallest all-ones value at or above `m`: the bound of an OR or XOR of values up to `m`.
fn fill(m: u128) -> u128 {
    match m {
        0 => 0,
        _ => u128::MAX >> m.leading_zeros(),
    }
}

impl Bounds {
    /// The bounds of `func`'s values.
    pub fn new(func: &Function) -> Bounds {
        let mut b = Bounds::default();
        let cfg = Cfg::new(func);
        let order: HashMap<_, _> = cfg.rpo().iter().enumerate().map(|(i, &blk)| (blk, i)).collect();
        let cyclic = cfg.rpo().iter().any(|&blk| cfg.succs(blk).iter().any(|s| order[s] <= order[&blk]));
        if cyclic {
            return b;
        }
        // Per block parameter, the largest incoming argument so far (`None`: unbounded).
        let mut incoming: HashMap<Value, Option<u128>> = HashMap::new();
        for &blk in cfg.rpo() {
            for &p in &func.blocks[blk].params {
                if let Some(Some(m)) = incoming.get(&p) {
                    b.set(func, p, Some(*m));
                }
            }
            for &i in &func.blocks[blk].insts {
                let results = func.results(i);
                if let [r] = results {
                    let m = b.op_max(func, &func.insts[i].op, *r);
                    b.set(func, *r, m);
                }
            }
            if let Some(term) = &func.blocks[blk].term {
                for call in term.calls() {
                    for (&p, &a) in func.blocks[call.block].params.iter().zip(&call.args) {
                        let m = b.max(func, a);
                        let e = incoming.entry(p).or_insert(m);
                        *e = match (*e, m) {
                            (Some(x), Some(y)) => Some(x.max(y)),
                            _ => None,
                        };
                    }
                }
            }
        }
        b
    }

    /// The largest value `v` can have, when that fits in a `u128`.
    pub fn max(&self, func: &Function, v: Value) -> Option<u128> {
        self.max.get(&v).copied().or_else(|| type_max(func.value_type(v).width()))
    }

    /// The low bits of `v` that can be set: every bit above them is always zero (at least 1,
    /// at most `v`'s width).
    pub fn bits(&self, func: &Function, v: Value) -> u16 {
        let w = func.value_type(v).width();
        match self.max.get(&v) {
            Some(&m) => (128 - m.leading_zeros() as u16).clamp(1, w),
            None => w,
        }
    }

    fn set(&mut self, func: &Function, v: Value, m: Option<u128>) {
        if let Some(m) = m {
            if Some(m) < type_max(func.value_type(v).width()) {
                self.max.insert(v, m);
            }
        }
    }

    /// The bound of `op`'s single result `r`, when it is below its type's (a bound past the
    /// type's means the result can wrap: it is bounded by its type only).
    fn op_max(&self, func: &Function, op: &Op, r: Value) -> Option<u128> {
        let w = func.value_type(r).width();
        let top = type_max(w)?;
        let m = |v: Value| self.max(func, v);
        let konst = |v: Value| func.as_const(v).map(|c| c.to_u64_saturating());
        match *op {
            Op::Const(ref c) if w <= 128 => Some(c.to_u128()),
            Op::Unary(UnaryOp::Not | UnaryOp::Neg, _) => None,
            Op::Binary(bop, a, b) => match bop {
                BinaryOp::Add => m(a)?.checked_add(m(b)?),
                BinaryOp::Mul => m(a)?.checked_mul(m(b)?),
                BinaryOp::Sub => None,
                BinaryOp::And => match (m(a), m(b)) {
                    (Some(x), Some(y)) => Some(x.min(y)),
                    (x, y) => x.or(y),
                },
                BinaryOp::Or | BinaryOp::Xor => Some(fill(m(a)?.max(m(b)?))),
                BinaryOp::Shl => {
                    let (x, k) = (m(a)?, konst(b)?);
                    if x == 0 || k >= w as u64 {
                        return Some(0);
                    }
                    x.checked_shl(k as u32).filter(|s| s >> k == x)
                }
                BinaryOp::Lshr => Some(m(a)? >> konst(b).unwrap_or(0).min(127)),
                // An arithmetic shift of a value whose top bit is clear is a logical one.
                BinaryOp::Ashr => m(a).filter(|&x| x <= top >> 1),
            },
            Op::Cmp(..) => Some(1),
            Op::Cast(CastOp::Zext, a, _) => m(a),
            Op::Cast(CastOp::Trunc, a, _) => Some(m(a).map_or(top, |x| x.min(top))),
            Op::Cast(CastOp::Sext, a, _) => {
                let half = type_max(func.value_type(a).width())? >> 1;
                m(a).filter(|&x| x <= half)
            }
            Op::Select(_, a, b) => Some(m(a)?.max(m(b)?)),
            Op::Slice(a, lo, _) => Some(m(a).map_or(top, |x| x.checked_shr(lo as u32).unwrap_or(0).min(top))),
            Op::Concat(hi, lo) => {
                let lw = func.value_type(lo).width() as u32;
                let h = m(hi)?;
                if h == 0 {
                    m(lo)
                } else {
                    h.checked_shl(lw).filter(|s| s >> lw == h).map(|s| s | type_max(lw as u16).unwrap_or(0))
                }
            }
            Op::PktRead(_, n) => type_max(8 * n),
            Op::PktLen | Op::OnesSum(..) | Op::CsumFold(_) | Op::Meta(MetaField::Len) => Some(0xffff),
            Op::Const(_) | Op::Meta(_) | Op::State(..) | Op::PktWrite(..) | Op::PktSetLen(_) => None,
        }
        .filter(|&x| x <= top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::parse;

    fn bits_of(text: &str) -> HashMap<String, u16> {
        let f = parse(text).unwrap();
        let b = Bounds::new(&f);
        f.values.keys().map(|v| (v.to_string(), b.bits(&f, v))).collect()
    }

    #[test]
    fn positions_from_reads_and_constants_stay_narrow() {
        let text = "\
fn f(window=64) {
block0:
    v0:u8 = pkt.read 14, 1
    v1:u64 = zext v0
    v2:u64 = const 54
    v3:u64 = add v1, v2
    v4:u8 = pkt.read v3, 1
    v5:u64 = zext v4
    v6:u64 = add v3, v5
    v7:u64 = sub v6, v2
    v8:u64 = lshr v6, v1
    v9:u64 = and v7, v1
    v10:u64 = shl v1, v2
    v11:u64 = const 4
    v12:u64 = shl v1, v11
    v13:u1 = ult v1, v2
    br v13, block1(v3), block2(v6)
block1(v14:u64):
    jump block2(v14)
block2(v15:u64):
    v16:u64 = mul v15, v2
    return drop malformed
}
";
        let bits = bits_of(text);
        assert_eq!(bits["v0"], 8);
        assert_eq!(bits["v1"], 8);
        assert_eq!(bits["v2"], 6);
        assert_eq!(bits["v3"], 9, "255 + 54");
        assert_eq!(bits["v6"], 10, "309 + 255");
        assert_eq!(bits["v7"], 64, "a difference can wrap");
        assert_eq!(bits["v8"], 10, "a shift right never grows");
        assert_eq!(bits["v9"], 8, "an and is below each operand");
        assert_eq!(bits["v10"], 62, "255 << 54");
        assert_eq!(bits["v12"], 12);
        assert_eq!(bits["v14"], 9, "a parameter is bounded by its one argument");
        assert_eq!(bits["v15"], 10, "a parameter by the largest of its arguments");
        assert_eq!(bits["v16"], 15, "564 × 54");
    }

    #[test]
    fn a_loop_bounds_nothing() {
        let text = "\
fn f(window=64) {
block0:
    v0:u8 = pkt.read 14, 1
    v1:u64 = zext v0
    jump block1(v1)
block1(v2:u64):
    v3:u64 = const 1
    v4:u64 = add v2, v3
    v5:u1 = ult v4, v1
    br v5, block1(v4), block2
block2:
    return drop malformed
}
";
        let bits = bits_of(text);
        assert_eq!(bits["v4"], 64);
    }
}

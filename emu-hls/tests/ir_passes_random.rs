//! The passes never change what a function does: random functions (arithmetic, logic, shifts,
//! casts, slices, constants chosen to hit the folding identities, diamonds and triangles with
//! and without side effects, packet writes, counters) give the interpreter the same verdict,
//! frame and state before and after `passes::optimize`, on random packets; and no value of
//! them ever exceeds the bound `ir::bounds` gives it.

mod common;

use common::Rng;
use emu_core::{DropReason, Meta, Packet};
use emu_hls::interp::{self, State};
use emu_hls::ir::bounds::Bounds;
use emu_hls::ir::{u, BinaryOp, BitVec, BlockCall, Builder, CmpOp, Function, StateId, Value};
use emu_hls::passes;

const WINDOW: usize = 32;

struct Gen<'r> {
    rng: &'r mut Rng,
    b: Builder,
    pool: Vec<Value>,
    count: StateId,
}

impl Gen<'_> {
    fn width(&mut self) -> u16 {
        [1, 4, 8, 13, 16, 32, 48, 64, 100][self.rng.below(9) as usize]
    }

    fn constant(&mut self, w: u16) -> Value {
        let c = match self.rng.below(5) {
            0 => BitVec::zero(w),
            1 => BitVec::ones(w),
            2 => BitVec::new(w, 1),
            _ => BitVec::from_words(w, [self.rng.next(), self.rng.next(), 0, 0]),
        };
        self.b.constant(c)
    }

    /// A value of width `w`: from the pool (resized), or a constant.
    fn value(&mut self, w: u16) -> Value {
        if self.pool.is_empty() || self.rng.percent(20) {
            return self.constant(w);
        }
        let v = self.pool[self.rng.below(self.pool.len() as u64) as usize];
        self.b.resize(v, w)
    }

    fn op(&mut self) -> Value {
        let w = self.width();
        let v = match self.rng.below(12) {
            0..=4 => {
                let ops = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::And, BinaryOp::Or, BinaryOp::Xor];
                let op = ops[self.rng.below(6) as usize];
                let (a, c) = (self.value(w), self.value(w));
                if self.rng.percent(15) {
                    self.b.binary(op, a, a)
                } else {
                    self.b.binary(op, a, c)
                }
            }
            5 => {
                let ops = [BinaryOp::Shl, BinaryOp::Lshr, BinaryOp::Ashr];
                let op = ops[self.rng.below(3) as usize];
                let a = self.value(w);
                let nw = [3, 8, 16][self.rng.below(3) as usize];
                let n = self.value(nw);
                self.b.binary(op, a, n)
            }
            6 => {
                let ops = [CmpOp::Eq, CmpOp::Ne, CmpOp::Ult, CmpOp::Uge, CmpOp::Slt, CmpOp::Sgt];
                let op = ops[self.rng.below(6) as usize];
                let (a, c) = (self.value(w), self.value(w));
                self.b.cmp(op, a, c)
            }
            7 => {
                let c = self.value(1);
                let (a, d) = (self.value(w), self.value(w));
                self.b.select(c, a, d)
            }
            8 => {
                let a = self.value(w);
                let lo = self.rng.below(w as u64) as u16;
                let n = 1 + self.rng.below((w - lo) as u64) as u16;
                self.b.slice(a, lo, n)
            }
            9 => {
                let w2 = self.width();
                let (a, c) = (self.value(w), self.value(w2));
                self.b.concat(a, c)
            }
            10 => {
                let a = self.value(w.min(64).max(17));
                self.b.csum_fold(a)
            }
            _ => {
                let a = self.value(w);
                if self.rng.percent(50) {
                    self.b.not(a)
                } else {
                    let to = w.max(self.width());
                    self.b.sext(a, to)
                }
            }
        };
        self.pool.push(v);
        v
    }

    /// A branch whose arms run a few ops (sometimes a write), joined with block parameters.
    fn branch(&mut self) {
        let c = self.value(1);
        let w = self.width();
        let triangle = self.rng.percent(30);
        let direct = self.value(w);
        let (t, m) = (self.b.new_block(), self.b.new_block());
        let p = self.b.block_param(m, u(w));
        let mut arms = vec![t];
        if triangle {
            self.b.branch(c, t, BlockCall::new(m, &[direct]));
        } else {
            let e = self.b.new_block();
            self.b.branch(c, t, e);
            arms.push(e);
        }
        let saved = self.pool.clone();
        for arm in arms {
            self.b.switch_to(arm);
            for _ in 0..self.rng.below(5) {
                self.op();
            }
            if self.rng.percent(15) {
                self.b.counter_inc(self.count);
            }
            let out = self.value(w);
            self.b.jump(m, &[out]);
            self.pool = saved.clone();
        }
        self.b.switch_to(m);
        self.pool.push(p);
    }
}

fn random_function(rng: &mut Rng) -> Function {
    let mut b = Builder::new("random", WINDOW as u32);
    let count = b.counter("count", 16);
    let mut g = Gen { rng, b, pool: Vec::new(), count };
    for _ in 0..3 {
        let off = g.rng.below(WINDOW as u64 + 4) as u32;
        let n = [1, 2, 4, 6][g.rng.below(4) as usize];
        let v = g.b.pkt_read(off, n);
        g.pool.push(v);
    }
    let p = g.b.in_port();
    g.pool.push(p);
    for _ in 0..g.rng.below(4) + 1 {
        for _ in 0..g.rng.below(8) {
            g.op();
        }
        if g.rng.percent(60) {
            g.branch();
        }
    }
    for _ in 0..3 {
        let off = g.rng.below(WINDOW as u64) as u32;
        let bytes = 1 + g.rng.below(4) as u16;
        let v = g.value(8 * bytes);
        if g.rng.percent(30) {
            let base = g.value(4);
            g.b.pkt_write(base + off, v);
        } else {
            g.b.pkt_write(off, v);
        }
    }
    let n = g.value(16);
    g.b.counter_add(count, n);
    let c = g.value(1);
    let (fwd, drop) = (g.b.new_block(), g.b.new_block());
    g.b.branch(c, fwd, drop);
    g.b.switch_to(fwd);
    let port = g.value(8);
    g.b.ret_forward(port);
    g.b.switch_to(drop);
    g.b.ret_drop(DropReason::Policy);
    g.b.finish().unwrap_or_else(|e| panic!("generated function does not verify:\n{e}"))
}

#[test]
fn optimize_keeps_behaviour_on_random_functions() {
    let mut rng = Rng(0x0b71_3a55_e5ed_0001);
    let mut changed = 0;
    for n in 0..400 {
        let raw = random_function(&mut rng);
        let mut opt = raw.clone();
        passes::optimize(&mut opt).unwrap_or_else(|e| panic!("function {n}:\n{raw}\n{e}"));
        if opt != raw {
            changed += 1;
        }
        let (mut s_raw, mut s_opt) = (State::new(&raw), State::new(&opt));
        for k in 0..20 {
            let len = rng.below(WINDOW as u64 + 8) as usize;
            let frame = rng.bytes(len);
            let meta = Meta { in_port: rng.below(4) as u8, len: len as u16, timestamp: k };
            let (mut fa, mut fb) = (frame.clone(), frame.clone());
            let a = interp::run(&raw, &mut s_raw, &mut Packet::new(&mut fa, WINDOW), &meta).unwrap();
            let b = interp::run(&opt, &mut s_opt, &mut Packet::new(&mut fb, WINDOW), &meta).unwrap();
            let ctx = || format!("function {n}, packet {k} {}\nbefore:\n{raw}\nafter:\n{opt}", common::hex(&frame));
            assert_eq!(a, b, "verdict: {}", ctx());
            assert_eq!(fa, fb, "frame: {}", ctx());
            assert_eq!(s_raw.counter("count"), s_opt.counter("count"), "state: {}", ctx());
        }
    }
    assert!(changed > 300, "the passes changed only {changed} of 400 functions");
}

/// Every value a run defines is within the bound the analysis gives it, on random functions
/// before and after the passes (which make the constants and shapes the back end sees).
#[test]
fn values_stay_within_their_bounds_on_random_functions() {
    let mut rng = Rng(0x0b71_3a55_e5ed_0002);
    let mut narrowed = 0;
    for n in 0..400 {
        let raw = random_function(&mut rng);
        let mut opt = raw.clone();
        passes::optimize(&mut opt).unwrap_or_else(|e| panic!("function {n}:\n{raw}\n{e}"));
        for f in [&raw, &opt] {
            let bounds = Bounds::new(f);
            let bounded: Vec<(Value, u128)> = f.values.keys().filter_map(|v| Some((v, bounds.max(f, v)?))).collect();
            narrowed += f.values.keys().filter(|&v| bounds.bits(f, v) < f.value_type(v).width()).count();
            let mut state = State::new(f);
            for k in 0..20 {
                let len = rng.below(WINDOW as u64 + 8) as usize;
                let mut frame = rng.bytes(len);
                let meta = Meta { in_port: rng.below(4) as u8, len: len as u16, timestamp: k };
                let (_, values) =
                    interp::run_values(f, &mut state, &mut Packet::new(&mut frame, WINDOW), &meta).unwrap();
                for &(v, max) in &bounded {
                    let Some(Some(x)) = values.get(v.as_u32() as usize) else { continue };
                    let wide = x.width() > 128 && !x.lshr(128).is_zero();
                    assert!(!wide && x.to_u128() <= max, "function {n}, packet {k}: {v} = {x} > {max}\n{f}");
                }
            }
        }
    }
    assert!(narrowed > 1000, "only {narrowed} values narrowed: the test would not see a wrong bound");
}

//! The sums the ingress streams ([`crate::sched::streamed`]): each is an accumulator the
//! ingress adds a beat's bytes to as the frame arrives, handed to the core with the frame.
//!
//! Per streamed sum `k`:
//!
//! | Name | What |
//! |---|---|
//! | `in_v7` | IR value `v7` of the sum's range, over the ingress's window (`in_win_d`) |
//! | `in_ss<k>_start`, `in_ss<k>_hi` | the range, saturated, `hi` clipped to the window for `pkt.window_sum` |
//! | `in_ss<k>_beat` | the range's bytes in the current beat |
//! | `in_ss<k>_early` | the range's bytes in the beats before the lag's, from the window registers (`in_win_q`) |
//! | `in_ss<k>_q`, `in_ss<k>_d` | the accumulator, and its value after this edge |
//! | `ss<k>_q` | the core's copy for its frame, folded where the sum is used |

use super::{dec, id, Gen, POS};
use crate::ir::{Op, SumScope, Value};
use crate::sched::Streamed;
use crate::verilog::{Expr, Item, Stmt};
use std::collections::HashSet;

impl Gen<'_> {
    /// The streamed sums' registers: the ingress's accumulators and the core's copies.
    pub(super) fn ingress_sum_registers(&self) -> Vec<(String, u32)> {
        (0..self.d.sched.streamed.len()).flat_map(|k| [(format!("in_ss{k}_q"), 32), (format!("ss{k}_q"), 32)]).collect()
    }

    /// The ingress's statements for a taken beat: each accumulator takes its next value.
    pub(super) fn ingress_sum_receive(&self) -> Vec<Stmt> {
        (0..self.d.sched.streamed.len())
            .map(|k| Stmt::nb(id(format!("in_ss{k}_q")), id(format!("in_ss{k}_d"))))
            .collect()
    }

    /// The core's statements for taking the received frame: its sums with it.
    pub(super) fn ingress_sum_take(&self) -> Vec<Stmt> {
        (0..self.d.sched.streamed.len()).map(|k| Stmt::nb(id(format!("ss{k}_q")), id(format!("in_ss{k}_d")))).collect()
    }

    /// The ranges' wires over the ingress's window and each sum's accumulator logic.
    pub(super) fn ingress_sum_logic(&self) -> Vec<Item> {
        let streamed = &self.d.sched.streamed;
        if streamed.is_empty() {
            return vec![];
        }
        let f = &self.d.func;
        let mut items = vec![Item::comment("Sums the ingress streams: a beat's bytes in each range as they arrive.")];
        // The ranges' values, each once though two sums share it (operands first).
        let mut done = HashSet::new();
        for i in streamed.iter().flat_map(|s| s.range.iter().copied()) {
            if !done.insert(i) {
                continue;
            }
            let r = f.results(i)[0];
            let e = match f.insts[i].op {
                Op::PktRead(addr, bytes) => {
                    Expr::concat((0..bytes as u64).map(|k| self.in_bits(addr.offset as u64 + k, 7, 0)).collect())
                }
                ref op => self.pure_expr(op, &|v: Value| id(format!("in_{v}"))),
            };
            items.push(Item::wire(format!("in_{r}"), self.width(r)));
            items.push(Item::assign(id(format!("in_{r}")), e));
        }
        for (k, s) in streamed.iter().enumerate() {
            items.extend(self.ingress_sum(k, s));
        }
        items
    }

    fn ingress_sum(&self, k: usize, s: &Streamed) -> Vec<Item> {
        let f = &self.d.func;
        let Op::OnesSum(scope, a, b) = f.insts[s.inst].op else { unreachable!("a streamed sum is a sum") };
        let name = |what: &str| format!("in_ss{k}_{what}");
        let mut items = vec![];
        let mut wire = |what: &str, w: u32, e: Expr| {
            items.push(Item::wire(name(what), w));
            items.push(Item::assign(id(name(what)), e));
        };
        let range = |v: Value| Self::sat(id(format!("in_{v}")), self.width(v));
        wire("start", POS, range(a));
        let end = range(b);
        let hi = match scope {
            SumScope::Frame => end,
            SumScope::Window => {
                let win = dec(POS, self.win as u64);
                Expr::mux(end.clone().less_than(win.clone()), end, win)
            }
        };
        wire("hi", POS, hi);
        let (start, hi) = (id(name("start")), id(name("hi")));
        // Bytes past the frame's end are 0 in the window registers (the first beat clears
        // them) and outside `tkeep` on the bus: they add nothing, as the CPU's sum clipped to
        // the frame's length.
        let lb = self.log2_bus();
        let lanes = (0..self.bus)
            .map(|j| {
                let p = Expr::concat(vec![Expr::zero(POS - self.bw - lb), id("in_beat_q"), dec(lb, j as u64)]);
                Self::sum_term(p, j % 2 == 1, &start, &hi, self.beat_byte(j))
            })
            .reduce(|x, y| x.plus(y))
            .expect("a beat has lanes");
        wire("beat", 32, lanes);
        // The beat that completes the range (or the frame's last, when it is shorter) adds
        // the earlier beats' bytes too; each later beat its own.
        let beat = id("in_beat_q");
        let lag = dec(self.bw, s.lag as u64);
        let before = Expr::mux(beat.clone().equals(Expr::zero(self.bw)), Expr::zero(32), id(name("q")));
        let mut next = before;
        if s.lag == 0 {
            next = next.plus(id(name("beat")));
        } else {
            let early = (0..s.early_bytes(self.bus) as u64)
                .map(|p| Self::sum_term(dec(POS, p), p % 2 == 1, &start, &hi, self.ingress.bits("in_win_q", p, 7, 0)))
                .reduce(|x, y| x.plus(y))
                .expect("a lag has beats before it");
            wire("early", 32, early);
            let last = self.input("tlast");
            // (In the first beat the window registers hold the frame before: nothing early.)
            let early_now = beat.clone().equals(lag.clone()).lor(
                last.clone()
                    .land(beat.clone().less_than(lag.clone()))
                    .land(beat.clone().not_equals(Expr::zero(self.bw))),
            );
            let lanes_now = beat.clone().at_least(lag).lor(last);
            next = next.plus(Expr::mux(early_now, id(name("early")), Expr::zero(32))).plus(Expr::mux(
                lanes_now,
                id(name("beat")),
                Expr::zero(32),
            ));
        }
        wire("d", 32, Expr::mux(self.take_beat(), next, id(name("q"))));
        items
    }

    /// A byte's part of a one's-complement sum over `[start, hi)` as 32 bits: `byte` at
    /// position `p` (odd or not: known where `p` is built) when inside, in the high half of
    /// its 16-bit word at an even distance from `start`.
    pub(super) fn sum_term(p: Expr, odd: bool, start: &Expr, hi: &Expr, byte: Expr) -> Expr {
        let inside = p.clone().at_least(start.clone()).land(p.less_than(hi.clone()));
        let even = if odd { start.clone().bit_at(0) } else { start.clone().bit_at(0).lnot() };
        Expr::mux(
            inside,
            Expr::mux(
                even,
                Expr::concat(vec![Expr::zero(16), byte.clone(), Expr::zero(8)]),
                Expr::concat(vec![Expr::zero(24), byte]),
            ),
            Expr::zero(32),
        )
    }
}

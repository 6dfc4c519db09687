//! One's-complement sums the ingress computes while the frame arrives, so the core reads each
//! as a register instead of walking the packet buffer in a sum state (issue 17's streaming
//! ingress: ICMP echo's two sums cost it 2 states and a cycle per bus word each).
//!
//! A `pkt.sum` or `pkt.window_sum` is **streamed** when
//! - its range `[start, end)` is a pure function of header bytes at constant positions
//!   (constants, arithmetic, comparisons, casts, selects, slices and constant-position reads),
//!   so the ingress can compute it from its own window registers; and
//! - no packet write or length change can run before it (earlier in its block, or in a block
//!   from which its block is reached): the bytes it sums are the received ones, which are the
//!   ones the ingress sees.
//!
//! The range is known once the beat holding the last byte it depends on is in: the sum's
//! [`Streamed::lag`]. From that beat on, each beat's bytes in the range are added as they
//! pass; the bytes of the beats before it are added with it (or with the last beat of a
//! shorter frame) from the ingress's window registers, which must therefore hold them all: a
//! sum whose first `lag` beats reach past the window is not streamed (it keeps its sum state).

use super::packet_access;
use crate::ir::{Block, Cfg, Function, Inst, Op, Value, ValueDef};
use std::collections::{HashMap, HashSet};

/// A sum the ingress streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Streamed {
    /// The `pkt.sum`/`pkt.window_sum`.
    pub inst: Inst,
    /// The instructions that compute its `start` and `end`, each after its operands': the
    /// ingress computes these over its window registers.
    pub range: Vec<Inst>,
    /// The beat (from 0) that holds the last byte the range depends on (0 for a constant one).
    pub lag: u32,
}

impl Streamed {
    /// Bytes `0..early_bytes` (the beats before the lag's) are added from the ingress's window
    /// registers in the beat the range is known, with that beat's own from the bus.
    pub fn early_bytes(&self, bus_bytes: u32) -> u32 {
        self.lag * bus_bytes
    }
}

/// The sums of `func` the ingress streams on a bus of `bus_bytes`, in program order.
pub fn streamed_sums(func: &Function, bus_bytes: u32) -> Vec<Streamed> {
    let cfg = Cfg::new(func);
    let writes = |insts: &[Inst]| insts.iter().any(|&i| packet_access(&func.insts[i].op).1);
    // Per block: can a packet write have run on some way into it? (Predecessors first: the
    // CFG is acyclic.)
    let mut written_before: HashMap<Block, bool> = HashMap::new();
    let mut out = vec![];
    for &b in cfg.rpo() {
        let before = cfg
            .preds(b)
            .iter()
            .any(|&p| written_before.get(&p).copied().unwrap_or(true) || writes(&func.blocks[p].insts));
        written_before.insert(b, before);
        if before {
            continue;
        }
        let insts = &func.blocks[b].insts;
        for (k, &inst) in insts.iter().enumerate() {
            let Op::OnesSum(_, start, end) = func.insts[inst].op else { continue };
            if writes(&insts[..k]) {
                break;
            }
            let mut range = vec![];
            let mut seen = HashSet::new();
            let mut last_byte = None;
            if !pure_range(func, start, &mut range, &mut seen, &mut last_byte)
                || !pure_range(func, end, &mut range, &mut seen, &mut last_byte)
            {
                continue;
            }
            let s = Streamed { inst, range, lag: last_byte.map_or(0, |p: u32| p / bus_bytes) };
            if s.early_bytes(bus_bytes) <= func.window {
                out.push(s);
            }
        }
    }
    out
}

/// Appends the instructions computing `v` to `range` (operands first) when it is a pure
/// function of constant-position window bytes; `last_byte` becomes the highest byte read.
fn pure_range(
    func: &Function,
    v: Value,
    range: &mut Vec<Inst>,
    seen: &mut HashSet<Inst>,
    last_byte: &mut Option<u32>,
) -> bool {
    let ValueDef::Result(i, _) = func.values[v].def else { return false };
    if seen.contains(&i) {
        return true;
    }
    let op = &func.insts[i].op;
    let ok = match op {
        _ if op.is_logic() => true,
        Op::PktRead(a, n) if a.base.is_none() && a.offset + *n as u32 <= func.window => {
            let last = a.offset + *n as u32 - 1;
            *last_byte = Some(last_byte.map_or(last, |l| l.max(last)));
            true
        }
        _ => false,
    };
    if !ok || !op.args().into_iter().all(|a| pure_range(func, a, range, seen, last_byte)) {
        return false;
    }
    seen.insert(i);
    range.push(i);
    true
}

//! `dce`: dead-code elimination.

use super::Pass;
use crate::ir::{Cfg, Function, Value, ValueDef};
use std::collections::{HashMap, HashSet};

/// Removes what cannot affect the packet, the verdict or the state:
///
/// - blocks unreachable from the entry (taken out of the layout);
/// - instructions without a write effect none of whose results is used (a chain of such
///   instructions goes at once: liveness is computed to a fixed point);
/// - block parameters that nothing uses, with the arguments every jump passes them.
///
/// Writes (packet writes, `pkt.set_len`, state updates) always stay, even when their results
/// (a `cam.insert`'s eviction) are unused.
#[derive(Debug, Default, Clone, Copy)]
pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn description(&self) -> &'static str {
        "removes unreachable blocks, unused side-effect-free instructions and unused block parameters"
    }

    fn run(&mut self, func: &mut Function) -> bool {
        let mut changed = remove_unreachable(func);
        loop {
            let used = used_values(func);
            let mut round = false;
            // Instructions.
            for b in func.layout.clone() {
                let insts = func.blocks[b].insts.clone();
                let keep: Vec<_> = insts
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let d = &func.insts[i];
                        !d.op.effect().is_removable() || d.results.iter().any(|r| used.contains(r))
                    })
                    .collect();
                if keep.len() != insts.len() {
                    for &i in insts.iter().filter(|i| !keep.contains(i)) {
                        func.detach_results(i);
                    }
                    func.blocks[b].insts = keep;
                    round = true;
                }
            }
            // Block parameters (never the entry's: it has none).
            for b in func.layout.clone().into_iter().skip(1) {
                let params = func.blocks[b].params.clone();
                let dead: Vec<usize> = (0..params.len()).filter(|&k| !used.contains(&params[k])).collect();
                if dead.is_empty() {
                    continue;
                }
                remove_params(func, b, &dead);
                round = true;
            }
            if !round {
                break;
            }
            changed = true;
        }
        changed
    }
}

/// Takes unreachable blocks out of the layout; true when there were any.
pub(crate) fn remove_unreachable(func: &mut Function) -> bool {
    let cfg = Cfg::new(func);
    let before = func.layout.len();
    let dead: Vec<_> = func.layout.iter().copied().filter(|b| !cfg.is_reachable(*b)).collect();
    for b in &dead {
        for i in func.blocks[*b].insts.clone() {
            func.detach_results(i);
        }
        for p in func.blocks[*b].params.clone() {
            func.values[p].def = ValueDef::Detached;
        }
    }
    func.layout.retain(|b| cfg.is_reachable(*b));
    func.layout.len() != before
}

/// Every value an instruction or terminator of the layout uses, where the instruction counts
/// only if it writes or its results are used (to a fixed point). Arguments passed to a block
/// parameter count as used only if that parameter is used.
fn used_values(func: &Function) -> HashSet<Value> {
    // A worklist from the roots (writes, branch conditions, returned values) back through
    // definitions and block arguments: linear, where sweeping the layout to a fixed point took
    // one sweep per step of the longest chain of uses (quadratic for long unrolled code).
    let mut def = HashMap::new();
    let mut param_of = HashMap::new();
    let mut calls_to: HashMap<crate::ir::Block, Vec<&[Value]>> = HashMap::new();
    let mut used: HashSet<Value> = HashSet::new();
    let mut work: Vec<Value> = Vec::new();
    fn mark(used: &mut HashSet<Value>, work: &mut Vec<Value>, v: Value) {
        if used.insert(v) {
            work.push(v);
        }
    }
    for &b in &func.layout {
        for (k, &p) in func.blocks[b].params.iter().enumerate() {
            param_of.insert(p, (b, k));
        }
        for &i in &func.blocks[b].insts {
            let d = &func.insts[i];
            for &r in &d.results {
                def.insert(r, i);
            }
            if !d.op.effect().is_removable() {
                for a in d.op.args() {
                    mark(&mut used, &mut work, a);
                }
            }
        }
        let Some(t) = &func.blocks[b].term else { continue };
        match t {
            crate::ir::Terminator::Branch(c, ..) => mark(&mut used, &mut work, *c),
            crate::ir::Terminator::Return(a) => {
                if let Some(v) = a.arg() {
                    mark(&mut used, &mut work, v);
                }
            }
            crate::ir::Terminator::Jump(_) => {}
        }
        for call in t.calls() {
            calls_to.entry(call.block).or_default().push(&call.args);
        }
    }
    while let Some(v) = work.pop() {
        if let Some(&i) = def.get(&v) {
            for a in func.insts[i].op.args() {
                mark(&mut used, &mut work, a);
            }
        }
        if let Some(&(b, k)) = param_of.get(&v) {
            for args in calls_to.get(&b).map_or(&[][..], |c| &c[..]) {
                if let Some(&a) = args.get(k) {
                    mark(&mut used, &mut work, a);
                }
            }
        }
    }
    used
}

/// Removes parameters number `dead` (ascending) of `block` and the matching arguments of every
/// jump to it.
pub(crate) fn remove_params(func: &mut Function, block: crate::ir::Block, dead: &[usize]) {
    for &b in &func.layout.clone() {
        if let Some(t) = &mut func.blocks[b].term {
            for call in t.calls_mut() {
                if call.block == block {
                    let mut k = 0;
                    call.args.retain(|_| {
                        let keep = !dead.contains(&k);
                        k += 1;
                        keep
                    });
                }
            }
        }
    }
    let params = std::mem::take(&mut func.blocks[block].params);
    for (k, p) in params.into_iter().enumerate() {
        if dead.contains(&k) {
            func.values[p].def = ValueDef::Detached;
        } else {
            let n = func.blocks[block].params.len() as u16;
            func.values[p].def = ValueDef::Param(block, n);
            func.blocks[block].params.push(p);
        }
    }
}

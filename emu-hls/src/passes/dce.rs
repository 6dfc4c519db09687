//! `dce`: dead-code elimination.

use super::Pass;
use crate::ir::{Cfg, Function, ValueDef};

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
            let used = func.used_values();
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

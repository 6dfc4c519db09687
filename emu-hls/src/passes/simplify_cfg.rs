//! `simplify-cfg`: control-flow cleanup.

use super::dce::{remove_params, remove_unreachable};
use super::Pass;
use crate::ir::{Block, BlockCall, Cfg, Function, Terminator, Value};
use std::collections::HashMap;

/// Simplifies the control-flow graph, keeping every path's effects in order:
///
/// - a block parameter whose incoming arguments are all one value (or the parameter itself,
///   around a loop) is replaced by that value;
/// - a jump to an empty block without parameters that only jumps on goes straight to that
///   block's target;
/// - `br c, X(a), X(a)` becomes `jump X(a)`;
/// - a block reached only by a `jump` from one block is merged into it (its parameters
///   replaced by the jump's arguments).
///
/// Unreachable blocks are taken out of the layout first.
#[derive(Debug, Default, Clone, Copy)]
pub struct SimplifyCfg;

impl Pass for SimplifyCfg {
    fn name(&self) -> &'static str {
        "simplify-cfg"
    }

    fn description(&self) -> &'static str {
        "merges straight-line blocks, skips empty ones, drops parameters that always get one value"
    }

    fn run(&mut self, func: &mut Function) -> bool {
        let mut changed = false;
        loop {
            let mut round = remove_unreachable(func);
            round |= trivial_params(func);
            round |= skip_empty_blocks(func);
            round |= same_target_branches(func);
            round |= merge_straight_lines(func);
            if !round {
                return changed;
            }
            changed = true;
        }
    }
}

/// All calls of `block` from reachable blocks.
fn incoming(func: &Function, block: Block) -> Vec<BlockCall> {
    let mut v = Vec::new();
    for &b in &func.layout {
        if let Some(t) = &func.blocks[b].term {
            v.extend(t.calls().into_iter().filter(|c| c.block == block).cloned());
        }
    }
    v
}

fn trivial_params(func: &mut Function) -> bool {
    let mut changed = false;
    for b in func.layout.clone().into_iter().skip(1) {
        let params = func.blocks[b].params.clone();
        if params.is_empty() {
            continue;
        }
        let calls = incoming(func, b);
        let mut map = HashMap::new();
        let mut dead = Vec::new();
        for (k, &p) in params.iter().enumerate() {
            let mut only: Option<Value> = None;
            let mut trivial = true;
            for c in &calls {
                let a = c.args[k];
                if a == p {
                    continue;
                }
                match only {
                    None => only = Some(a),
                    Some(o) if o == a => {}
                    Some(_) => {
                        trivial = false;
                        break;
                    }
                }
            }
            if let (true, Some(v)) = (trivial, only) {
                map.insert(p, v);
                dead.push(k);
            }
        }
        if !dead.is_empty() {
            func.replace_uses(&map);
            remove_params(func, b, &dead);
            changed = true;
        }
    }
    changed
}

fn skip_empty_blocks(func: &mut Function) -> bool {
    let entry = func.entry();
    let mut changed = false;
    for b in func.layout.clone() {
        let data = &func.blocks[b];
        let Some(Terminator::Jump(next)) = &data.term else { continue };
        if Some(b) == entry || !data.insts.is_empty() || !data.params.is_empty() || next.block == b {
            continue;
        }
        let next = next.clone();
        for p in func.layout.clone() {
            if p == b {
                continue;
            }
            if let Some(t) = &mut func.blocks[p].term {
                for call in t.calls_mut() {
                    if call.block == b {
                        *call = next.clone();
                        changed = true;
                    }
                }
            }
        }
    }
    changed
}

fn same_target_branches(func: &mut Function) -> bool {
    let mut changed = false;
    for b in func.layout.clone() {
        if let Some(Terminator::Branch(_, t, e)) = &func.blocks[b].term {
            if t == e {
                func.blocks[b].term = Some(Terminator::Jump(t.clone()));
                changed = true;
            }
        }
    }
    changed
}

fn merge_straight_lines(func: &mut Function) -> bool {
    let mut changed = false;
    loop {
        let cfg = Cfg::new(func);
        let entry = func.entry();
        let candidate = func.layout.iter().copied().find_map(|a| {
            let Some(Terminator::Jump(call)) = &func.blocks[a].term else { return None };
            let b = call.block;
            let single = cfg.preds(b) == [a] && incoming(func, b).len() == 1;
            (b != a && Some(b) != entry && single).then(|| (a, call.clone()))
        });
        let Some((a, call)) = candidate else { return changed };
        let b = call.block;
        let params = std::mem::take(&mut func.blocks[b].params);
        let map: HashMap<Value, Value> = params.iter().copied().zip(call.args.iter().copied()).collect();
        for p in params {
            func.values[p].def = crate::ir::ValueDef::Detached;
        }
        let insts = std::mem::take(&mut func.blocks[b].insts);
        func.blocks[a].insts.extend(insts);
        func.blocks[a].term = func.blocks[b].term.take();
        func.layout.retain(|x| *x != b);
        func.replace_uses(&map);
        changed = true;
    }
}

//! `simplify-cfg`: control-flow cleanup.

use super::dce::remove_unreachable;
use super::Pass;
use crate::ir::{Block, Cfg, Function, Terminator, Value};
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

fn trivial_params(func: &mut Function) -> bool {
    // The calls of every block gathered once, their arguments read through the replacements
    // found so far, and the replacements and removals made once at the end: linear, where a
    // scan of the function per block was quadratic.
    let mut calls: HashMap<Block, Vec<Vec<Value>>> = HashMap::new();
    for &b in &func.layout {
        if let Some(t) = &func.blocks[b].term {
            for c in t.calls() {
                calls.entry(c.block).or_default().push(c.args.clone());
            }
        }
    }
    let resolve = |map: &HashMap<Value, Value>, mut v: Value| {
        while let Some(&n) = map.get(&v) {
            v = n;
        }
        v
    };
    let mut map = HashMap::new();
    let mut dead_of: HashMap<Block, Vec<usize>> = HashMap::new();
    let none = Vec::new();
    for b in func.layout.clone().into_iter().skip(1) {
        let params = func.blocks[b].params.clone();
        if params.is_empty() {
            continue;
        }
        let block_calls = calls.get(&b).unwrap_or(&none);
        for (k, &p) in params.iter().enumerate() {
            let mut only: Option<Value> = None;
            let mut trivial = true;
            for args in block_calls {
                let a = resolve(&map, args[k]);
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
                dead_of.entry(b).or_default().push(k);
            }
        }
    }
    if dead_of.is_empty() {
        return false;
    }
    for &b in &func.layout.clone() {
        if let Some(t) = &mut func.blocks[b].term {
            for call in t.calls_mut() {
                if let Some(dead) = dead_of.get(&call.block) {
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
    for (&block, dead) in &dead_of {
        let params = std::mem::take(&mut func.blocks[block].params);
        for (k, p) in params.into_iter().enumerate() {
            if dead.contains(&k) {
                func.values[p].def = crate::ir::ValueDef::Detached;
            } else {
                let n = func.blocks[block].params.len() as u16;
                func.values[p].def = crate::ir::ValueDef::Param(block, n);
                func.blocks[block].params.push(p);
            }
        }
    }
    func.replace_uses(&map);
    true
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
    // One walk over the layout with one CFG, the uses replaced once at the end: linear, where
    // finding one merge at a time and recomputing was quadratic in the blocks (an NF whose
    // unrolled loops make tens of thousands of them took minutes).
    let cfg = Cfg::new(func);
    let entry = func.entry();
    // Edges into each block. Merging `b` into `a` takes `a`'s edge to `b` away and gives `a`
    // `b`'s edges, so the counts of the other blocks stay right.
    let mut edges: HashMap<Block, usize> = HashMap::new();
    for &b in &func.layout {
        if let Some(t) = &func.blocks[b].term {
            for c in t.calls() {
                *edges.entry(c.block).or_default() += 1;
            }
        }
    }
    // A merged block's successors still name it as their predecessor in `cfg`: `into` says
    // which block absorbed it.
    let mut into: HashMap<Block, Block> = HashMap::new();
    let absorber = |into: &HashMap<Block, Block>, mut b: Block| {
        while let Some(&a) = into.get(&b) {
            b = a;
        }
        b
    };
    let mut map: HashMap<Value, Value> = HashMap::new();
    for a in func.layout.clone() {
        if into.contains_key(&a) {
            continue;
        }
        while let Some(Terminator::Jump(call)) = &func.blocks[a].term {
            let call = call.clone();
            let b = call.block;
            let single = matches!(cfg.preds(b), [p] if absorber(&into, *p) == a) && edges.get(&b) == Some(&1);
            if b == a || Some(b) == entry || !single || into.contains_key(&b) {
                break;
            }
            let params = std::mem::take(&mut func.blocks[b].params);
            for (p, arg) in params.into_iter().zip(call.args.iter().copied()) {
                func.values[p].def = crate::ir::ValueDef::Detached;
                map.insert(p, arg);
            }
            let insts = std::mem::take(&mut func.blocks[b].insts);
            func.blocks[a].insts.extend(insts);
            func.blocks[a].term = func.blocks[b].term.take();
            into.insert(b, a);
        }
    }
    if into.is_empty() {
        return false;
    }
    func.layout.retain(|x| !into.contains_key(x));
    func.replace_uses(&map);
    true
}

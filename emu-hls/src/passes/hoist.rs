//! `hoist`: a block's short, side-effect-free head moves into its immediate dominator, so the
//! block is bare and the hardware decides its branch in the state before (no state of its own).

use super::Pass;
use crate::ir::{Block, Cfg, DomTree, Effect, Function, Inst, Op, Value};
use crate::sched::{delay, is_posted};
use std::collections::{HashMap, HashSet};

/// Hoisting. A block `B` (not the entry) whose instructions are all pure (no state access, no
/// write; packet reads only when `B`'s one predecessor is its dominator, so no write can come
/// between) and few and shallow ([`max_ops`](Hoist::max_ops), [`max_depth`](Hoist::max_depth)
/// levels of the scheduler's [`delay`]), and that uses none of its own parameters, gives them
/// to its immediate dominator `D`: they run after all of `D`'s, on every path out of `D`.
/// Running them where `B` would not is safe because nothing in them has an effect, and their
/// operands are defined where `D` can see them (a value `B` uses is defined in a block that
/// dominates it, so in `D` or above, unless it is `B`'s own). Bare, `B` costs no FSM state: the
/// state that leaves `D` (or any later predecessor) decides `B`'s terminator too
/// ([`crate::sched`]). The learning switch's multicast test on the destination and its
/// same-port compare each stop costing a cycle.
#[derive(Debug, Clone, Copy)]
pub struct Hoist {
    /// The most instructions a block may give (default 8).
    pub max_ops: usize,
    /// The deepest chain of them, in [`delay`] units (default 3: a compare and a gate), so the
    /// dominator's last state keeps its depth.
    pub max_depth: u32,
}

impl Default for Hoist {
    fn default() -> Self {
        Hoist { max_ops: 8, max_depth: 3 }
    }
}

impl Pass for Hoist {
    fn name(&self) -> &'static str {
        "hoist"
    }

    fn description(&self) -> &'static str {
        "moves a block's short, side-effect-free head into its dominator, so the block is bare"
    }

    fn run(&mut self, func: &mut Function) -> bool {
        let Some(entry) = func.entry() else { return false };
        let cfg = Cfg::new(func);
        let dom = DomTree::new(&cfg);
        let mut changed = false;
        let used = func.used_values();
        // (In reverse postorder a dominator comes before the blocks it dominates: what a block
        // takes in is given on by the next round of `optimize`, if at all.)
        for &b in cfg.rpo() {
            if b == entry || func.blocks[b].insts.is_empty() {
                continue;
            }
            let Some(d) = dom.idom(b).filter(|&d| d != b) else { continue };
            let head = self.movable_head(func, &cfg, b, d);
            // The whole block, or a head before effects the state deciding the branch can
            // post ([`is_posted`]): either way the block costs no state.
            let rest = &func.blocks[b].insts[head..];
            if head == 0 || !rest.iter().all(|&i| is_posted(func, &used, i)) {
                continue;
            }
            let insts: Vec<Inst> = func.blocks[b].insts.drain(..head).collect();
            func.blocks[d].insts.extend(insts);
            changed = true;
        }
        changed
    }
}

impl Hoist {
    /// How many of `b`'s first instructions may move into `d`.
    fn movable_head(&self, func: &Function, cfg: &Cfg, b: Block, d: Block) -> usize {
        let data = &func.blocks[b];
        let direct = cfg.preds(b) == [d];
        let params: HashSet<Value> = data.params.iter().copied().collect();
        let mut depth: HashMap<Value, u32> = HashMap::new();
        for (k, &i) in data.insts.iter().enumerate() {
            let op = &func.insts[i].op;
            let allowed = match op {
                // A sum costs a state of its own: not on every path.
                Op::OnesSum(..) => false,
                Op::PktRead(..) | Op::PktLen => direct,
                _ => op.effect() == Effect::Pure,
            };
            if k == self.max_ops || !allowed || op.args().iter().any(|a| params.contains(a)) {
                return k;
            }
            let d = delay(func, op) + op.args().iter().filter_map(|a| depth.get(a)).max().copied().unwrap_or(0);
            if d > self.max_depth {
                return k;
            }
            for &r in func.results(i) {
                depth.insert(r, d);
            }
        }
        data.insts.len()
    }
}

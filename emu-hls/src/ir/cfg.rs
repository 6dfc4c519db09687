//! Control-flow facts about a function: successors, predecessors, reachability, reverse
//! postorder and dominators. Computed on demand; a pass that changes the CFG recomputes.

use super::function::{Block, Function};
use std::collections::{HashMap, HashSet};

/// Successors and predecessors of the blocks reachable from the entry.
#[derive(Debug, Clone, Default)]
pub struct Cfg {
    succs: HashMap<Block, Vec<Block>>,
    preds: HashMap<Block, Vec<Block>>,
    rpo: Vec<Block>,
}

impl Cfg {
    /// The CFG of `func`'s reachable blocks. Targets that are not in the layout are ignored
    /// (the verifier reports them).
    pub fn new(func: &Function) -> Cfg {
        let in_layout: HashSet<Block> = func.layout.iter().copied().collect();
        let mut cfg = Cfg::default();
        let Some(entry) = func.entry() else { return cfg };
        // Iterative DFS for postorder.
        let mut seen = HashSet::new();
        let mut post = Vec::new();
        let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
        seen.insert(entry);
        let succ_of = |b: Block| -> Vec<Block> {
            func.blocks[b]
                .term
                .as_ref()
                .map(|t| t.successors().into_iter().filter(|s| in_layout.contains(s)).collect())
                .unwrap_or_default()
        };
        while let Some((b, i)) = stack.pop() {
            let succs = succ_of(b);
            if i < succs.len() {
                stack.push((b, i + 1));
                let s = succs[i];
                if seen.insert(s) {
                    stack.push((s, 0));
                }
            } else {
                post.push(b);
            }
        }
        post.reverse();
        cfg.rpo = post;
        for &b in &cfg.rpo {
            let mut succs = succ_of(b);
            succs.dedup();
            for &s in &succs {
                let p = cfg.preds.entry(s).or_default();
                if !p.contains(&b) {
                    p.push(b);
                }
            }
            cfg.succs.insert(b, succs);
        }
        cfg
    }

    /// The distinct successors of `b`.
    pub fn succs(&self, b: Block) -> &[Block] {
        self.succs.get(&b).map_or(&[], |v| v)
    }

    /// The distinct reachable predecessors of `b`.
    pub fn preds(&self, b: Block) -> &[Block] {
        self.preds.get(&b).map_or(&[], |v| v)
    }

    /// True when `b` is reachable from the entry.
    pub fn is_reachable(&self, b: Block) -> bool {
        self.succs.contains_key(&b)
    }

    /// The reachable blocks in reverse postorder (the entry first; a block before its
    /// successors except along back edges).
    pub fn rpo(&self) -> &[Block] {
        &self.rpo
    }
}

/// The dominator tree of the reachable blocks (Cooper, Harvey and Kennedy's algorithm).
#[derive(Debug, Clone)]
pub struct DomTree {
    idom: HashMap<Block, Block>,
    order: HashMap<Block, usize>,
}

impl DomTree {
    /// The dominators of `cfg`'s blocks.
    pub fn new(cfg: &Cfg) -> DomTree {
        let order: HashMap<Block, usize> = cfg.rpo().iter().enumerate().map(|(i, b)| (*b, i)).collect();
        let mut idom: HashMap<Block, Block> = HashMap::new();
        let Some(&entry) = cfg.rpo().first() else { return DomTree { idom, order } };
        idom.insert(entry, entry);
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &cfg.rpo()[1..] {
                let mut new: Option<Block> = None;
                for &p in cfg.preds(b) {
                    if !idom.contains_key(&p) {
                        continue;
                    }
                    new = Some(match new {
                        None => p,
                        Some(n) => intersect(&idom, &order, p, n),
                    });
                }
                if let Some(n) = new {
                    if idom.get(&b) != Some(&n) {
                        idom.insert(b, n);
                        changed = true;
                    }
                }
            }
        }
        DomTree { idom, order }
    }

    /// The immediate dominator of `b` (the entry's is itself).
    pub fn idom(&self, b: Block) -> Option<Block> {
        self.idom.get(&b).copied()
    }

    /// True when every path from the entry to `b` passes `a` (a block dominates itself).
    pub fn dominates(&self, a: Block, mut b: Block) -> bool {
        if !self.order.contains_key(&a) || !self.order.contains_key(&b) {
            return false;
        }
        loop {
            if a == b {
                return true;
            }
            match self.idom.get(&b) {
                Some(&p) if p != b => b = p,
                _ => return false,
            }
        }
    }
}

fn intersect(idom: &HashMap<Block, Block>, order: &HashMap<Block, usize>, mut a: Block, mut b: Block) -> Block {
    while a != b {
        while order[&a] > order[&b] {
            a = idom[&a];
        }
        while order[&b] > order[&a] {
            b = idom[&b];
        }
    }
    a
}

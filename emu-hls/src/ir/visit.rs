//! Visitors over a function's blocks, instructions and terminators, with do-nothing default
//! hooks: a pass implements only the hooks it cares about.
//!
//! [`walk`] visits the layout in order: for each block, `block`, then `inst` for each of its
//! instructions, then `terminator`. [`walk_mut`] does the same with the function writable;
//! it iterates over a snapshot of the layout and of each block's instruction list taken when
//! the block is reached, so a hook may edit the function (the edits show in later hooks).

use super::function::{Block, Function, Inst};

/// Read-only hooks.
pub trait Visitor {
    /// Called first for each block of the layout.
    fn block(&mut self, _func: &Function, _block: Block) {}
    /// Called for each instruction of the block, in order.
    fn inst(&mut self, _func: &Function, _block: Block, _inst: Inst) {}
    /// Called for the block's terminator, if it has one.
    fn terminator(&mut self, _func: &Function, _block: Block) {}
}

/// Hooks that may change the function.
pub trait VisitorMut {
    /// Called first for each block of the layout.
    fn block(&mut self, _func: &mut Function, _block: Block) {}
    /// Called for each instruction of the block, in order.
    fn inst(&mut self, _func: &mut Function, _block: Block, _inst: Inst) {}
    /// Called for the block's terminator, if it has one.
    fn terminator(&mut self, _func: &mut Function, _block: Block) {}
}

/// Runs `v` over `func`.
pub fn walk<V: Visitor + ?Sized>(func: &Function, v: &mut V) {
    for &b in &func.layout {
        v.block(func, b);
        for &i in &func.blocks[b].insts {
            v.inst(func, b, i);
        }
        if func.blocks[b].term.is_some() {
            v.terminator(func, b);
        }
    }
}

/// Runs `v` over `func`, which the hooks may change.
pub fn walk_mut<V: VisitorMut + ?Sized>(func: &mut Function, v: &mut V) {
    let layout = func.layout.clone();
    for b in layout {
        if !func.layout.contains(&b) {
            continue;
        }
        v.block(func, b);
        let insts = func.blocks[b].insts.clone();
        for i in insts {
            if func.blocks[b].insts.contains(&i) {
                v.inst(func, b, i);
            }
        }
        if func.blocks[b].term.is_some() {
            v.terminator(func, b);
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::ir::{parse, Op};
    use std::collections::BTreeMap;

    /// A visitor that only looks at instructions: how often each state element is accessed.
    #[derive(Default)]
    struct StateAccesses(BTreeMap<String, usize>);

    impl Visitor for StateAccesses {
        fn inst(&mut self, func: &Function, _block: Block, inst: Inst) {
            if let Op::State(s, _) = &func.insts[inst].op {
                *self.0.entry(func.states[*s].name.clone()).or_default() += 1;
            }
        }
    }

    #[test]
    fn hooks_see_every_instruction_in_layout_order() {
        let f = parse(
            "fn f(window=64) {\n    state a: counter<u8>\n    state b: register<u8>\n\nblock0:\n    counter.inc a\n    v0:u8 = reg.get b\n    jump block1\n\nblock1:\n    counter.inc a\n    return forward v0\n}\n",
        )
        .unwrap();
        let mut v = StateAccesses::default();
        walk(&f, &mut v);
        assert_eq!(v.0.into_iter().collect::<Vec<_>>(), [("a".to_string(), 2), ("b".to_string(), 1)]);
    }
}

//! `if-convert`: short, side-effect-free branches become `select`s.

use super::Pass;
use crate::ir::{ActionExpr, Block, BlockCall, Cfg, Function, Inst, Op, Terminator, Value, ValueDef};
use std::collections::{HashMap, HashSet};

/// If-conversion. For a block `A` ending in `br c, T, E`:
///
/// - **diamond**: `T` and `E` are *arms* — each reached only from `A`, holding at most
///   [`max_ops`](IfConvert::max_ops) instructions that are all speculatable (no writes, no
///   state reads; packet reads are fine) — and both `jump` to one block `M`: their
///   instructions move into `A`, and `A` jumps to `M` with `select c, t_arg, e_arg` for each
///   argument that differs;
/// - **triangle**: `T` is an arm that jumps to `E` (or `E` an arm that jumps to `T`): the same,
///   with the direct edge's arguments on the other side of the selects;
/// - **returns**: `T` and `E` are arms that both `return` the same kind of action (`forward`
///   to two ports, …): `A` returns it with the operand selected.
///
/// Executing both arms is safe because nothing in them has an effect; the moved instructions
/// run after all of `A`'s, exactly where the arm's would have, so packet reads see the same
/// bytes. `simplify-cfg` then merges `A` with `M` when `A` is `M`'s only predecessor.
#[derive(Debug, Clone, Copy)]
pub struct IfConvert {
    /// The most instructions an arm may hold (default 8).
    pub max_ops: usize,
}

impl Default for IfConvert {
    fn default() -> Self {
        IfConvert { max_ops: 8 }
    }
}

impl Pass for IfConvert {
    fn name(&self) -> &'static str {
        "if-convert"
    }

    fn description(&self) -> &'static str {
        "turns a branch whose arms are short and side-effect-free into selects"
    }

    fn run(&mut self, func: &mut Function) -> bool {
        let mut changed = false;
        // Rounds of conversions over one CFG each, until none is left: a conversion can make
        // its block an arm of the branch above it, which the next round sees.
        while self.convert_round(func) {
            changed = true;
        }
        changed
    }
}

/// An arm's block and how it ends.
struct Arm {
    block: Block,
    term: Terminator,
}

impl IfConvert {
    /// The arm `call` leads to from `a`, if it is one.
    fn arm(&self, func: &Function, cfg: &Cfg, a: Block, call: &BlockCall) -> Option<Arm> {
        let x = call.block;
        let data = &func.blocks[x];
        let single = cfg.preds(x) == [a] && Some(x) != func.entry() && x != a;
        let small = data.insts.len() <= self.max_ops;
        let safe = data.insts.iter().all(|i| func.insts[*i].op.effect().is_speculatable());
        let term = data.term.clone()?;
        let ends_ok = match &term {
            Terminator::Jump(next) => next.block != x,
            Terminator::Return(_) => true,
            Terminator::Branch(..) => false,
        };
        (single && small && safe && ends_ok).then_some(Arm { block: x, term })
    }

    /// Converts every branch the CFG of the round's start shows convertible, leaving those
    /// whose arms a conversion of this round changed to the next round. Arms leave the layout
    /// and their parameters are replaced at the end: linear in the function, where a CFG per
    /// conversion was quadratic (tens of thousands of blocks took minutes).
    fn convert_round(&self, func: &mut Function) -> bool {
        let cfg = Cfg::new(func);
        // Blocks whose predecessors changed this round (join targets), and hoisted arms.
        let mut touched: HashSet<Block> = HashSet::new();
        let mut gone: HashSet<Block> = HashSet::new();
        let mut map: HashMap<Value, Value> = HashMap::new();
        for a in func.layout.clone() {
            if gone.contains(&a) {
                continue;
            }
            let Some(Terminator::Branch(c, t, e)) = func.blocks[a].term.clone() else { continue };
            if t.block == e.block || touched.contains(&t.block) || touched.contains(&e.block) {
                continue;
            }
            let tarm = self.arm(func, &cfg, a, &t);
            let earm = self.arm(func, &cfg, a, &e);
            let plan = match (&tarm, &earm) {
                // Diamond of jumps.
                (Some(ta), Some(ea)) => match (&ta.term, &ea.term) {
                    (Terminator::Jump(tj), Terminator::Jump(ej)) if tj.block == ej.block => Some(Plan::Join {
                        hoist: vec![(ta.block, t.args.clone()), (ea.block, e.args.clone())],
                        target: tj.block,
                        then_args: tj.args.clone(),
                        else_args: ej.args.clone(),
                    }),
                    (Terminator::Return(ra), Terminator::Return(rb)) if ra.same_kind(rb) => Some(Plan::Return {
                        hoist: vec![(ta.block, t.args.clone()), (ea.block, e.args.clone())],
                        then_action: *ra,
                        else_action: *rb,
                    }),
                    _ => None,
                },
                _ => None,
            };
            let plan = plan.or_else(|| match (&tarm, &earm) {
                // Triangle: the then-arm falls into the else target.
                (Some(ta), _) => match &ta.term {
                    Terminator::Jump(tj) if tj.block == e.block => Some(Plan::Join {
                        hoist: vec![(ta.block, t.args.clone())],
                        target: e.block,
                        then_args: tj.args.clone(),
                        else_args: e.args.clone(),
                    }),
                    _ => None,
                },
                _ => None,
            });
            let plan = plan.or_else(|| match &earm {
                Some(ea) => match &ea.term {
                    Terminator::Jump(ej) if ej.block == t.block => Some(Plan::Join {
                        hoist: vec![(ea.block, e.args.clone())],
                        target: t.block,
                        then_args: t.args.clone(),
                        else_args: ej.args.clone(),
                    }),
                    _ => None,
                },
                None => None,
            });
            if let Some(plan) = plan {
                if let Plan::Join { target, .. } = &plan {
                    touched.insert(*target);
                }
                apply(func, a, c, plan, &mut map, &mut gone);
            }
        }
        if gone.is_empty() {
            return false;
        }
        func.layout.retain(|b| !gone.contains(b));
        func.replace_uses(&map);
        true
    }
}

enum Plan {
    Join { hoist: Vec<(Block, Vec<Value>)>, target: Block, then_args: Vec<Value>, else_args: Vec<Value> },
    Return { hoist: Vec<(Block, Vec<Value>)>, then_action: ActionExpr, else_action: ActionExpr },
}

/// Moves each hoisted arm's instructions to the end of `a` and marks the arm `gone`; its
/// parameters go into `map` (to be replaced by the arguments `a` passed).
fn hoist(
    func: &mut Function,
    a: Block,
    arms: &[(Block, Vec<Value>)],
    map: &mut HashMap<Value, Value>,
    gone: &mut HashSet<Block>,
) {
    for (arm, args) in arms {
        let params = std::mem::take(&mut func.blocks[*arm].params);
        for (p, v) in params.iter().zip(args) {
            map.insert(*p, *v);
            func.values[*p].def = ValueDef::Detached;
        }
        let insts = std::mem::take(&mut func.blocks[*arm].insts);
        func.blocks[a].insts.extend(insts);
        func.blocks[*arm].term = None;
        gone.insert(*arm);
    }
}

fn resolve(map: &HashMap<Value, Value>, mut v: Value) -> Value {
    while let Some(&n) = map.get(&v) {
        v = n;
    }
    v
}

/// `select c, x, y` appended to `a`, or `x` when both are the same.
fn select(func: &mut Function, a: Block, c: Value, x: Value, y: Value) -> Value {
    if x == y {
        return x;
    }
    let inst: Inst = func.append_inst(a, Op::Select(c, x, y)).expect("both arms pass the same parameter types");
    func.results(inst)[0]
}

fn apply(
    func: &mut Function,
    a: Block,
    c: Value,
    plan: Plan,
    map: &mut HashMap<Value, Value>,
    gone: &mut HashSet<Block>,
) {
    let c = resolve(map, c);
    match plan {
        Plan::Join { hoist: arms, target, then_args, else_args } => {
            hoist(func, a, &arms, map, gone);
            let map = &*map;
            let args: Vec<Value> = then_args
                .iter()
                .zip(&else_args)
                .map(|(x, y)| (resolve(map, *x), resolve(map, *y)))
                .collect::<Vec<_>>()
                .into_iter()
                .map(|(x, y)| select(func, a, c, x, y))
                .collect();
            func.blocks[a].term = Some(Terminator::Jump(BlockCall { block: target, args }));
        }
        Plan::Return { hoist: arms, then_action, else_action } => {
            hoist(func, a, &arms, map, gone);
            let action = match (then_action.arg(), else_action.arg()) {
                (Some(x), Some(y)) => {
                    let v = select(func, a, c, resolve(map, x), resolve(map, y));
                    then_action.with_arg(v)
                }
                _ => then_action,
            };
            func.blocks[a].term = Some(Terminator::Return(action));
        }
    }
}

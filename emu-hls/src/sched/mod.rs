//! The scheduler: every operation of the function into a state of a finite-state machine.
//!
//! One FSM state is one clock cycle (a [`StateKind::Sum`] state takes several, see there).
//! The schedule keeps the program order of each block: it groups consecutive operations into
//! states and never moves an operation across another, so the order of the effects is the
//! interpreter's by construction. A new state starts before an operation when:
//!
//! 1. **an operand is not ready**: a state-element response ([`latency`] 1: `cam.*`,
//!    `array.*`; 2: `hash_table.*`) or a one's-complement sum is registered, so its users go
//!    in a later state;
//! 2. **a memory port is taken**: each state element has one request port, so at most one
//!    access to it per state (this also orders a `reg.get` after a `reg.set`); a hash table's
//!    takes a request every other cycle ([`occupancy`]), so its next access waits a state
//!    more, and a block does not end in the state right after one (its successor could ask);
//! 3. **the packet was written**: the header window and the length are registers written at
//!    the end of the state, so a read of them after a write in the same state waits a state;
//! 4. **the chain is too deep**: combinational logic is chained through the state to at most
//!    [`CHAIN_LIMIT`] levels of the [`delay`] estimate;
//! 5. **a sum is next**: a `pkt.sum` or `pkt.window_sum` has its own state, in which the sum
//!    unit walks the bytes a data-bus word per cycle, unless the ingress computes it as the
//!    frame arrives ([`streamed`]): then it is a register the state reads, folded to 16 bits.
//!
//! A block that is a bare `return` has no state: the state that jumps to it decides the verdict
//! (saving a cycle on every such path). Nor has a bare branch or jump (no operations, no
//! parameters; `passes::Hoist` empties the short pure ones) whose targets have states or are
//! bare returns: the state that jumps to it decides its terminator as well
//! ([`Schedule::inlined`]). Nor has a block of posted effects before a `return` (the switch's
//! `floods.inc(); return flood`: counter and register writes with no result, on operands
//! from before the block): the deciding state issues them, predicated on the way to it, when
//! their elements' ports are free there. Every other block has at least one state; its
//! terminator is decided in its last state (a state
//! is added when the branch condition or the returned port is a response not yet ready, and
//! after a sum state that would end the block with values).
//! Loops need no rule here: lowering unrolls every constant-bound loop (`lower`), so the CFG
//! is acyclic and every path through the FSM is bounded ([`Schedule::paths`]).

use crate::ir::{ActionExpr, Block, Cfg, Function, Inst, Op, StateId, StateOp, Terminator, Value, ValueDef};
use core::fmt;
use std::collections::{HashMap, HashSet};

pub mod streamed;
pub use streamed::Streamed;

/// The deepest combinational chain allowed in one state, in [`delay`] units (about one
/// LUT level each on a 7-series part: 12 levels leave margin at 200 MHz).
pub const CHAIN_LIMIT: u32 = 12;

/// A state's number: an index into [`Schedule::states`].
pub type StateNo = usize;

/// What a state does besides its operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateKind {
    /// One cycle: the operations' logic, registered at the end of the cycle.
    Plain,
    /// The one `pkt.sum`/`pkt.window_sum` of the state: one cycle to start and one per
    /// data-bus word of the summed bytes ([`sum_cycles`]).
    Sum,
}

/// One FSM state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsmState {
    /// The block the operations come from.
    pub block: Block,
    /// The operations, in program order.
    pub insts: Vec<Inst>,
    /// True in the block's last state: the terminator is decided at its end.
    pub ends_block: bool,
    /// Plain or sum.
    pub kind: StateKind,
    /// The deepest chain of the state, in [`delay`] units.
    pub depth: u32,
}

/// The FSM of a function.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Every state; the entry block's first state is state 0.
    pub states: Vec<FsmState>,
    /// Each block's first state.
    pub block_start: HashMap<Block, StateNo>,
    /// The state of each scheduled instruction.
    pub inst_state: HashMap<Inst, StateNo>,
    /// Blocks without a state of their own: a bare `return` (no operations, not the entry);
    /// a `return` after posted effects only ([`posted`]); or a bare branch or jump (no
    /// operations or parameters) to blocks that have states or are returns of those kinds.
    /// The state jumping to one decides its terminator at once, and issues the effects.
    pub inlined: HashSet<Block>,
    /// The sums the ingress computes as the frame arrives ([`streamed`]), in program order.
    pub streamed: Vec<Streamed>,
}

/// A verdict as a user names it: `forward port 1`, `forward port 1 or 2` (if-converted
/// branches), `multicast ports 0, 2`, `flood`, `drop same_port`; a port the NF computes (a
/// learned one) is `forward to a computed port`, whatever IR value holds it.
pub fn verdict_name(func: &Function, a: &ActionExpr) -> String {
    let or = |xs: Vec<String>| match xs.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    match *a {
        ActionExpr::Forward(v) => match constant_choices(func, v, 8) {
            Some(ports) => format!("forward port {}", or(ports.iter().map(|p| p.to_string()).collect())),
            None => "forward to a computed port".into(),
        },
        ActionExpr::Multicast(v) => match constant_choices(func, v, 8) {
            Some(masks) => {
                let set = |m: u64| match (0..64).filter(|b| m >> b & 1 == 1).map(|b| b.to_string()).collect::<Vec<_>>()
                {
                    p if p.is_empty() => "no port".to_string(),
                    p if p.len() == 1 => format!("port {}", p[0]),
                    p => format!("ports {}", p.join(", ")),
                };
                format!("multicast to {}", or(masks.iter().map(|&m| set(m)).collect()))
            }
            None => "multicast to computed ports".into(),
        },
        _ => crate::ir::print::action_to_string(a),
    }
}

/// The constants `v` can be, when it is a constant or selects (and casts) among at most
/// `limit` of them; in ascending order.
fn constant_choices(func: &Function, v: Value, limit: usize) -> Option<Vec<u64>> {
    if let Some(c) = func.as_const(v) {
        return Some(vec![c.to_u64_saturating()]);
    }
    let ValueDef::Result(i, _) = func.values[v].def else { return None };
    let mut out = match func.insts[i].op {
        Op::Select(_, a, b) => {
            let mut x = constant_choices(func, a, limit)?;
            x.extend(constant_choices(func, b, limit)?);
            x
        }
        Op::Cast(crate::ir::CastOp::Zext, a, _) => constant_choices(func, a, limit)?,
        _ => return None,
    };
    out.sort_unstable();
    out.dedup();
    (out.len() <= limit).then_some(out)
}

/// The paths through the FSM that end in one verdict ([`Schedule::verdicts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerdictPaths {
    /// The `return`'s action, as [`verdict_name`] names it.
    pub verdict: String,
    /// True when the verdict drops the frame (nothing is sent).
    pub drops: bool,
    /// How many paths end in it (saturating).
    pub paths: u128,
    /// The fewest and the most states on them.
    pub min_states: usize,
    /// See `min_states`.
    pub max_states: usize,
    /// The fewest and the most cycles in those states, a sum state counted at its shortest
    /// (two cycles: start and one word).
    pub min_weight: u64,
    /// See `min_weight`.
    pub max_weight: u64,
    /// True when a sum state is on some of them.
    pub has_sum: bool,
}

impl VerdictPaths {
    fn merge(&mut self, o: &VerdictPaths) {
        self.paths = self.paths.saturating_add(o.paths);
        self.min_states = self.min_states.min(o.min_states);
        self.max_states = self.max_states.max(o.max_states);
        self.min_weight = self.min_weight.min(o.min_weight);
        self.max_weight = self.max_weight.max(o.max_weight);
        self.has_sum |= o.has_sum;
    }
}

/// A path through the FSM from the entry to a `return`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    /// The blocks, in order.
    pub blocks: Vec<Block>,
    /// The states visited, in order.
    pub states: Vec<StateNo>,
    /// How the path ends (the `return`'s action, as [`verdict_name`] names it).
    pub verdict: String,
    /// True when a sum state is on the path (its cycles depend on the packet).
    pub has_sum: bool,
    /// True when the path ends in a drop (nothing is sent).
    pub drops: bool,
}

/// Cycles after a request before an operation's results can be used: 1 for the ops whose
/// result is registered (block-RAM and CAM responses, sums), 0 for combinational ones
/// (registers and counters are read directly).
pub fn latency(func: &Function, op: &Op) -> u32 {
    match op {
        Op::State(id, s) => match s {
            // Read from the element's registers in the same cycle.
            StateOp::CounterGet
            | StateOp::RegGet
            | StateOp::QueueIsEmpty
            | StateOp::QueueIsFull
            | StateOp::QueueLen => 0,
            s if s.writes() && result_count(s) == 0 => 0,
            _ if occupancy(&func.states[*id].kind) == 2 => 2,
            _ => 1,
        },
        Op::OnesSum(..) => 1,
        _ => 0,
    }
}

/// Cycles an access keeps its element's request port: a table in block RAM (a hash table, an
/// LRU in sets) reads the set's word in one cycle and writes it back in the next
/// (`hw::HashTable`), the others take one.
pub fn occupancy(kind: &crate::ir::StateKind) -> usize {
    if kind.in_sets() {
        2
    } else {
        1
    }
}

fn result_count(s: &StateOp) -> usize {
    match s {
        StateOp::CounterInc | StateOp::CounterAdd(_) | StateOp::CounterSet(_) | StateOp::RegSet(_) => 0,
        _ => 1,
    }
}

/// An estimate of an op's combinational delay in levels of logic.
pub fn delay(func: &Function, op: &Op) -> u32 {
    let is_const = |v: &Value| func.as_const(*v).is_some();
    match op {
        Op::Const(_) | Op::Cast(..) | Op::Slice(..) | Op::Concat(..) | Op::Meta(_) | Op::PktLen => 0,
        Op::Unary(crate::ir::UnaryOp::Not, _) => 0,
        Op::Unary(crate::ir::UnaryOp::Neg, _) => 3,
        Op::Binary(b, _, n) if b.is_shift() => {
            if is_const(n) {
                0
            } else {
                3
            }
        }
        Op::Binary(crate::ir::BinaryOp::Mul, ..) => 6,
        Op::Binary(crate::ir::BinaryOp::Add | crate::ir::BinaryOp::Sub, ..) => 3,
        Op::Binary(..) => 1,
        Op::Cmp(crate::ir::CmpOp::Eq | crate::ir::CmpOp::Ne, ..) => 2,
        Op::Cmp(..) => 3,
        Op::Select(..) => 1,
        Op::PktRead(a, _) | Op::PktWrite(a, _) => {
            if a.base.is_some() {
                3
            } else {
                0
            }
        }
        Op::PktSetLen(_) => 2,
        Op::CsumFold(_) => 6,
        Op::OnesSum(..) => 0,
        Op::State(..) => 1,
    }
}

/// Cycles a sum state takes: one to start, then one per `bus_bytes`-byte word of memory that
/// holds a byte of `[start, min(end, limit))` (`limit`: the frame's length, or for the window
/// sum the smaller of it and the window).
pub fn sum_cycles(start: u64, end: u64, limit: u64, bus_bytes: u64) -> u64 {
    let hi = end.min(limit);
    if hi <= start {
        1
    } else {
        1 + ((hi - 1) / bus_bytes - start / bus_bytes + 1)
    }
}

/// Does the op touch the packet, and how.
fn packet_access(op: &Op) -> (bool, bool) {
    match op {
        Op::PktRead(..) | Op::PktLen | Op::OnesSum(..) => (true, false),
        Op::PktWrite(..) | Op::PktSetLen(_) => (false, true),
        _ => (false, false),
    }
}

/// Whether `inst` is a posted effect, which the state deciding a branch can issue for the way
/// it takes: a write to a counter or a register (no result, no latency), or a table write
/// whose results nothing uses (a `cam.insert` whose eviction is ignored) on an element whose
/// request port is free again the next cycle. `used` is [`Function::used_values`].
pub fn is_posted(func: &Function, used: &HashSet<Value>, inst: Inst) -> bool {
    let op = &func.insts[inst].op;
    match op {
        Op::State(e, s) if s.writes() => {
            (result_count(s) == 0 && latency(func, op) == 0)
                || (occupancy(&func.states[*e].kind) == 1 && func.results(inst).iter().all(|r| !used.contains(r)))
        }
        _ => false,
    }
}

/// Whether `b`'s instructions are posted effects only: each on its own element, each operand
/// defined before the block (not one of its parameters), so the deciding state has them.
fn effects_only(func: &Function, used: &HashSet<Value>, b: Block) -> bool {
    let data = &func.blocks[b];
    let mut elements = HashSet::new();
    !data.insts.is_empty()
        && data.insts.iter().all(|&i| {
            let op = &func.insts[i].op;
            is_posted(func, used, i)
                && op.state().is_some_and(|e| elements.insert(e))
                && op.args().iter().all(|a| !data.params.contains(a))
        })
}

/// Whether `b` (not the entry) is posted effects ([`is_posted`]) and then a `return`, or a jump
/// without arguments to a block that is not itself effects and a jump (so a state issues one
/// block's effects a way after its branch, and the block they lead to decides on): the
/// learning switch's learning (`cam.insert`, then on to the destination's test).
pub fn posted(func: &Function, used: &HashSet<Value>, b: Block) -> bool {
    let ends = match func.terminator(b) {
        Terminator::Return(_) => true,
        Terminator::Jump(c) => {
            c.args.is_empty()
                && !(matches!(func.terminator(c.block), Terminator::Jump(_)) && effects_only(func, used, c.block))
        }
        Terminator::Branch(..) => false,
    };
    ends && Some(b) != func.entry() && effects_only(func, used, b)
}

/// The blocks without a state of their own ([`Schedule::inlined`]).
fn inlined_blocks(func: &Function, cfg: &Cfg) -> HashSet<Block> {
    let mut inlined = HashSet::new();
    let used = func.used_values();
    // Successors first (the CFG is acyclic): a bare branch is inlined when no target is an
    // inlined bare branch, so a state decides through one at most (no logic duplicated along
    // chains of them).
    for &b in cfg.rpo().iter().rev() {
        let data = &func.blocks[b];
        if posted(func, &used, b) {
            inlined.insert(b);
            continue;
        }
        if Some(b) == func.entry() || !data.insts.is_empty() {
            continue;
        }
        let term = func.terminator(b);
        let bare = match term {
            Terminator::Return(_) => true,
            _ => {
                data.params.is_empty()
                    && term.calls().iter().all(|c| {
                        !inlined.contains(&c.block) || matches!(func.terminator(c.block), Terminator::Return(_))
                    })
            }
        };
        if bare {
            inlined.insert(b);
        }
    }
    inlined
}

/// Schedules `func` (which must be verified and acyclic) for a data bus of `bus_bytes`.
pub fn schedule(func: &Function, bus_bytes: u32) -> Schedule {
    let cfg = Cfg::new(func);
    let inlined = inlined_blocks(func, &cfg);
    let streamed = streamed::streamed_sums(func, bus_bytes);
    let mut s = Schedule { states: vec![], block_start: HashMap::new(), inst_state: HashMap::new(), inlined, streamed };
    // Entry first, then the other reachable blocks in reverse postorder (a block's states
    // before its successors': the printed FSM reads top down).
    for &b in cfg.rpo() {
        if !s.inlined.contains(&b) {
            s.schedule_block(func, b);
        }
    }
    s
}

impl Schedule {
    /// The index in [`Schedule::streamed`] of `inst`, when it is a streamed sum.
    pub fn streamed_index(&self, inst: Inst) -> Option<usize> {
        self.streamed.iter().position(|s| s.inst == inst)
    }

    fn schedule_block(&mut self, func: &Function, block: Block) {
        let first = self.states.len();
        self.block_start.insert(block, first);
        let new_state = |states: &mut Vec<FsmState>, kind| {
            states.push(FsmState { block, insts: vec![], ends_block: false, kind, depth: 0 });
            states.len() - 1
        };
        let mut cur = new_state(&mut self.states, StateKind::Plain);
        // Per value defined in this block: (state, the chain depth at its output, latency).
        let mut defs: HashMap<Value, (StateNo, u32, u32)> = HashMap::new();
        // Per element accessed in this block, the first state its request port is free again.
        let mut free_at: HashMap<StateId, StateNo> = HashMap::new();
        let mut wrote_packet = false;
        let mut set_len = false;
        for &inst in &func.blocks[block].insts {
            let op = &func.insts[inst].op;
            let (reads_pkt, writes_pkt) = packet_access(op);
            // A streamed sum is the ingress's register, folded here: its operands are the
            // ingress's too.
            let streamed = self.streamed_index(inst).is_some();
            let is_sum = matches!(op, Op::OnesSum(..)) && !streamed;
            let args = if streamed { vec![] } else { op.args() };
            // Earliest state the operands allow, and the chain depth they bring into it.
            let ready = |defs: &HashMap<Value, (StateNo, u32, u32)>, at: StateNo| -> Option<u32> {
                let mut depth = 0;
                for &a in &args {
                    if let Some(&(st, d, lat)) = defs.get(&a) {
                        if st + lat as usize > at {
                            return None;
                        }
                        if st == at {
                            depth = depth.max(d);
                        }
                    }
                }
                Some(depth)
            };
            let own = if streamed { delay(func, &Op::CsumFold(op.args()[0])) } else { delay(func, op) };
            loop {
                let st = &self.states[cur];
                let port_taken = matches!(op, Op::State(id, _) if free_at.get(id).is_some_and(|&f| f > cur));
                let sum_alone = !st.insts.is_empty() && (st.kind == StateKind::Sum || is_sum);
                // A write or a new length is decided by the length, which a length set
                // earlier in the state has not changed yet.
                let raw = reads_pkt && wrote_packet || set_len && matches!(op, Op::PktWrite(..) | Op::PktSetLen(_));
                let fits = match ready(&defs, cur) {
                    Some(d) => !port_taken && !sum_alone && !raw && (d + own <= CHAIN_LIMIT || d == 0),
                    None => false,
                };
                if fits {
                    break;
                }
                cur = new_state(&mut self.states, if is_sum { StateKind::Sum } else { StateKind::Plain });
                wrote_packet = false;
                set_len = false;
            }
            if is_sum {
                self.states[cur].kind = StateKind::Sum;
            }
            let depth = ready(&defs, cur).unwrap_or(0) + own;
            let st = &mut self.states[cur];
            st.insts.push(inst);
            st.depth = st.depth.max(depth);
            self.inst_state.insert(inst, cur);
            if let Op::State(id, _) = op {
                free_at.insert(*id, cur + occupancy(&func.states[*id].kind));
            }
            wrote_packet |= writes_pkt;
            set_len |= matches!(op, Op::PktSetLen(_));
            let lat = if streamed { 0 } else { latency(func, op) };
            for &r in func.results(inst) {
                defs.insert(r, (cur, depth, lat));
            }
        }
        // The terminator: its operands (and those of the bare returns it jumps to) must be
        // ready in the last state.
        let exit_uses = self.exit_uses(func, block);
        let posted_elements: Vec<StateId> =
            self.posted_effects(func, block).iter().filter_map(|&i| func.insts[i].op.state()).collect();
        // A sum state hands its result over at its end, so a terminator using values does not
        // end one (a `return` may: the egress reads the buffer through a port of its own).
        // (A response two cycles away takes two more states.)
        let needs_more = |cur: StateNo, states: &[FsmState]| {
            exit_uses.iter().any(|a| matches!(defs.get(a), Some(&(st, _, lat)) if st + lat as usize > cur))
                || states[cur].kind == StateKind::Sum && !exit_uses.is_empty()
                // (A posted effect takes its element's request port in the deciding state.)
                || posted_elements.iter().any(|e| free_at.get(e).is_some_and(|&f| f > cur))
                || free_at.values().any(|&f| f > cur + 1)
        };
        while needs_more(cur, &self.states) {
            cur = new_state(&mut self.states, StateKind::Plain);
        }
        self.states[cur].ends_block = true;
        debug_assert!(cur >= first);
    }

    /// The values a block's end uses: its terminator's operands, and those of the inlined
    /// blocks it jumps to (a bare return's operand standing for its parameter is the jump's
    /// argument, already among the terminator's).
    pub fn exit_uses(&self, func: &Function, block: Block) -> Vec<Value> {
        let term = func.terminator(block);
        let mut uses = term.args();
        for call in term.calls() {
            if !self.inlined.contains(&call.block) {
                continue;
            }
            // Its posted effects' operands, then what it returns or decides on.
            let effects = func.blocks[call.block].insts.iter();
            uses.extend(effects.flat_map(|&i| func.insts[i].op.args()));
            match func.terminator(call.block) {
                Terminator::Return(a) => {
                    if let Some(v) = a.arg().filter(|v| !func.blocks[call.block].params.contains(v)) {
                        uses.push(v);
                    }
                }
                _ => uses.extend(self.exit_uses(func, call.block)),
            }
        }
        uses
    }

    /// The posted effects the end of `block` can issue: those of the inlined blocks it jumps
    /// to ([`posted`]).
    pub fn posted_effects(&self, func: &Function, block: Block) -> Vec<Inst> {
        let mut out = vec![];
        for call in func.terminator(block).calls() {
            if self.inlined.contains(&call.block) {
                out.extend(func.blocks[call.block].insts.iter().copied());
                out.extend(self.posted_effects(func, call.block));
            }
        }
        out
    }

    /// The verdict of jumping to `call` when its block is a bare `return` ([`Schedule::inlined`]):
    /// the action with a parameter of that block replaced by the jump's argument.
    pub fn inlined_return(&self, func: &Function, call: &crate::ir::BlockCall) -> Option<ActionExpr> {
        if !self.inlined.contains(&call.block) {
            return None;
        }
        let Terminator::Return(a) = func.terminator(call.block) else { return None };
        Some(match a.arg() {
            Some(v) => match func.blocks[call.block].params.iter().position(|p| *p == v) {
                Some(i) => a.with_arg(call.args[i]),
                None => *a,
            },
            None => *a,
        })
    }

    /// The state a value is defined in (block parameters: their block's first state).
    pub fn def_state(&self, func: &Function, v: Value) -> Option<StateNo> {
        match func.values[v].def {
            ValueDef::Result(i, _) => self.inst_state.get(&i).copied(),
            ValueDef::Param(b, _) => self.block_start.get(&b).copied(),
            ValueDef::Detached => None,
        }
    }

    /// Every path from the entry to a `return`, in depth-first order (the CFG is acyclic).
    pub fn paths(&self, func: &Function) -> Vec<Path> {
        let mut out = vec![];
        let Some(entry) = func.entry() else { return out };
        let mut stack = vec![(entry, vec![entry])];
        while let Some((b, blocks)) = stack.pop() {
            match func.terminator(b) {
                Terminator::Return(a) => {
                    let states: Vec<StateNo> = blocks.iter().flat_map(|b| self.block_states(*b)).collect();
                    let has_sum = states.iter().any(|s| self.states[*s].kind == StateKind::Sum);
                    let verdict = verdict_name(func, a);
                    let drops = matches!(a, crate::ir::ActionExpr::Drop(_));
                    out.push(Path { blocks, states, verdict, has_sum, drops });
                }
                t => {
                    for s in t.successors().into_iter().rev() {
                        let mut next = blocks.clone();
                        next.push(s);
                        stack.push((s, next));
                    }
                }
            }
        }
        out
    }

    /// The paths from the entry to a `return`, grouped by verdict, counted and measured over
    /// the CFG without listing them (a NAT's chains of checks make hundreds of thousands of
    /// paths). In verdict order of first appearance in depth-first order.
    pub fn verdicts(&self, func: &Function) -> Vec<VerdictPaths> {
        let Some(entry) = func.entry() else { return vec![] };
        let cfg = Cfg::new(func);
        let mut memo: HashMap<Block, Vec<VerdictPaths>> = HashMap::new();
        // Successors before predecessors: the CFG is acyclic.
        for &b in cfg.rpo().iter().rev() {
            let states = self.block_states(b);
            let n = states.len();
            let w: u64 = states.clone().map(|s| if self.states[s].kind == StateKind::Sum { 2 } else { 1 }).sum();
            let sum = states.clone().any(|s| self.states[s].kind == StateKind::Sum);
            let mut here: Vec<VerdictPaths> = match func.terminator(b) {
                Terminator::Return(a) => vec![VerdictPaths {
                    verdict: verdict_name(func, a),
                    drops: matches!(a, ActionExpr::Drop(_)),
                    paths: 1,
                    min_states: 0,
                    max_states: 0,
                    min_weight: 0,
                    max_weight: 0,
                    has_sum: false,
                }],
                t => {
                    let mut acc: Vec<VerdictPaths> = vec![];
                    for succ in t.successors() {
                        for v in memo.get(&succ).into_iter().flatten() {
                            match acc.iter_mut().find(|x| x.verdict == v.verdict) {
                                Some(x) => x.merge(v),
                                None => acc.push(v.clone()),
                            }
                        }
                    }
                    acc
                }
            };
            for v in &mut here {
                v.min_states += n;
                v.max_states += n;
                v.min_weight += w;
                v.max_weight += w;
                v.has_sum |= sum;
            }
            memo.insert(b, here);
        }
        memo.remove(&entry).unwrap_or_default()
    }

    /// The states of `block`, in order.
    pub fn block_states(&self, block: Block) -> std::ops::Range<StateNo> {
        let Some(&start) = self.block_start.get(&block) else { return 0..0 };
        let mut end = start;
        while end < self.states.len() && self.states[end].block == block {
            end += 1;
        }
        start..end
    }

    /// The schedule as text: one line per state with its operations.
    pub fn display<'a>(&'a self, func: &'a Function) -> impl fmt::Display + 'a {
        Printed { s: self, func }
    }
}

struct Printed<'a> {
    s: &'a Schedule,
    func: &'a Function,
}

impl fmt::Display for Printed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, st) in self.s.states.iter().enumerate() {
            let kind = if st.kind == StateKind::Sum { " (sum unit)" } else { "" };
            writeln!(f, "state {n}: {} depth {}{kind}", st.block, st.depth)?;
            for &i in &st.insts {
                let text = crate::ir::print::inst_to_string(self.func, i);
                match self.s.streamed.iter().find(|s| s.inst == i) {
                    Some(s) => writeln!(f, "    {text}  (summed by the ingress, range known at beat {})", s.lag)?,
                    None => writeln!(f, "    {text}")?,
                }
            }
            if st.ends_block {
                writeln!(f, "    {}", crate::ir::print::terminator_to_string(self.func.terminator(st.block)))?;
            }
        }
        let mut inlined: Vec<_> = self.s.inlined.iter().collect();
        inlined.sort_by_key(|b| b.as_u32());
        for b in inlined {
            let mut t: Vec<String> =
                self.func.blocks[*b].insts.iter().map(|&i| crate::ir::print::inst_to_string(self.func, i)).collect();
            t.push(crate::ir::print::terminator_to_string(self.func.terminator(*b)));
            writeln!(f, "{b}: {} (no state: decided by the state jumping to it)", t.join("; "))?;
        }
        Ok(())
    }
}

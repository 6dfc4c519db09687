//! The function: state declarations, values, instructions and a control-flow graph of blocks.

use super::bits::BitVec;
use super::entity::{entity, Arena};
use super::op::Op;
use super::types::Type;
use core::fmt;
use emu_core::DropReason;
use std::collections::{HashMap, HashSet};

entity!(
    /// An SSA value: an instruction result or a block parameter, defined exactly once.
    Value,
    "v"
);
entity!(
    /// An instruction: one [`Op`] and its results.
    Inst,
    "i"
);
entity!(
    /// A basic block: parameters, instructions, one terminator.
    Block,
    "block"
);
entity!(
    /// A state element declared in the function.
    StateId,
    "s"
);

/// What kind of state element, with its shape. Semantics: `emu_core::state`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StateKind {
    /// `counter<u{bits}>`: `Counter<BITS>`, 1 ≤ bits ≤ 64, starts at 0, wraps.
    Counter {
        /// The counter's width.
        bits: u16,
    },
    /// `register<T>`: `Register<T>`, one value, starts at 0.
    Register {
        /// The value's type.
        ty: Type,
    },
    /// `array<T, size>`: `Array<T, N>` (block RAM), all 0 at first.
    Array {
        /// The element type.
        ty: Type,
        /// Number of elements.
        size: u32,
    },
    /// `cam<K, V, size>`: `Cam<K, V, N>`, fully associative, round-robin eviction.
    Cam {
        /// The key type.
        key: Type,
        /// The value type.
        value: Type,
        /// Number of slots (≥ 1).
        size: u32,
    },
    /// `lru<K, V, size>` (fully associative) or `lru<K, V, size, ways>` (`size / ways` sets, a
    /// power of two, placed as a `hash_table`'s): `Lru<K, V, N, WAYS>`, evicts exactly the least
    /// recently used entry of the key's set (an entry is used by an insert and by a `get` that
    /// hits).
    Lru {
        /// The key type.
        key: Type,
        /// The value type.
        value: Type,
        /// Number of slots (≥ 1): a positive multiple of `ways`.
        size: u32,
        /// Ways per set: `size` when fully associative.
        ways: u32,
    },
    /// `hash_table<K, V, size, ways>`: `HashTable<K, V, N, WAYS>`, `size / ways` sets (a
    /// power of two) of `ways` ways; a key's set is the low bits of the CRC-32 of its
    /// `⌈width / 8⌉` big-endian bytes, each set evicts round-robin.
    HashTable {
        /// The key type.
        key: Type,
        /// The value type.
        value: Type,
        /// Number of entries: a positive multiple of `ways`.
        size: u32,
        /// Ways per set (≥ 1).
        ways: u32,
    },
    /// `tcam<K, V, size>`: `Tcam<K, V, N>`, `size` priority-ordered (value, mask, result)
    /// rules, all invalid at first; lower slots win.
    Tcam {
        /// The key type (also the rules' value and mask).
        key: Type,
        /// The result type.
        value: Type,
        /// Number of slots (≥ 1).
        size: u32,
    },
    /// `queue<T, size>`: `Queue<T, N>`, a FIFO of at most `size` values, empty at first.
    Queue {
        /// The element type.
        ty: Type,
        /// Most values held (≥ 1).
        size: u32,
    },
}

impl StateKind {
    /// The kind's name: `counter`, `register`, `array`, `cam`, `lru`, `hash_table`, `tcam`,
    /// `queue`.
    pub fn name(&self) -> &'static str {
        match self {
            StateKind::Counter { .. } => "counter",
            StateKind::Register { .. } => "register",
            StateKind::Array { .. } => "array",
            StateKind::Cam { .. } => "cam",
            StateKind::Lru { .. } => "lru",
            StateKind::HashTable { .. } => "hash_table",
            StateKind::Tcam { .. } => "tcam",
            StateKind::Queue { .. } => "queue",
        }
    }

    /// Its number of entries (words, slots, places); `None` for a register or a counter, which
    /// hold one value.
    pub fn size(&self) -> Option<u32> {
        match self {
            StateKind::Counter { .. } | StateKind::Register { .. } => None,
            StateKind::Array { size, .. }
            | StateKind::Cam { size, .. }
            | StateKind::Lru { size, .. }
            | StateKind::HashTable { size, .. }
            | StateKind::Tcam { size, .. }
            | StateKind::Queue { size, .. } => Some(*size),
        }
    }

    /// A table in sets in block RAM (a `hash_table`, an `lru` of more than one set): every
    /// access reads its set's word and writes it back.
    pub fn in_sets(&self) -> bool {
        self.sets().is_some()
    }

    /// The number of sets of a table in sets ([`StateKind::in_sets`]).
    pub fn sets(&self) -> Option<u32> {
        match self {
            StateKind::HashTable { size, ways, .. } => Some(size / (*ways).max(1)),
            StateKind::Lru { size, ways, .. } if ways < size => Some(size / (*ways).max(1)),
            _ => None,
        }
    }

    /// The width of a slot number of a `tcam` (`tcam.lookup_slot`'s result): enough bits to
    /// number `size` slots, at least 1 — `⌈log2 size⌉`, as the hardware's slot ports.
    pub fn slot_width(size: u32) -> u16 {
        if size <= 2 {
            1
        } else {
            (32 - (size - 1).leading_zeros()) as u16
        }
    }

    /// The width of a count of `0..=size` values (`queue.len`'s result): `⌊log2 size⌋ + 1`
    /// bits, at least 1.
    pub fn count_width(size: u32) -> u16 {
        ((32 - size.leading_zeros()) as u16).max(1)
    }
}

impl StateKind {
    /// The kind's name with its article: `a counter`, `an array`.
    pub fn with_article(&self) -> &'static str {
        match self {
            StateKind::Counter { .. } => "a counter",
            StateKind::Register { .. } => "a register",
            StateKind::Array { .. } => "an array",
            StateKind::Cam { .. } => "a cam",
            StateKind::Lru { .. } => "an lru",
            StateKind::HashTable { .. } => "a hash_table",
            StateKind::Tcam { .. } => "a tcam",
            StateKind::Queue { .. } => "a queue",
        }
    }
}

impl fmt::Display for StateKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateKind::Counter { bits } => write!(f, "counter<u{bits}>"),
            StateKind::Register { ty } => write!(f, "register<{ty}>"),
            StateKind::Array { ty, size } => write!(f, "array<{ty}, {size}>"),
            StateKind::Cam { key, value, size } => write!(f, "cam<{key}, {value}, {size}>"),
            StateKind::Lru { key, value, size, ways } if ways == size => write!(f, "lru<{key}, {value}, {size}>"),
            StateKind::Lru { key, value, size, ways } => write!(f, "lru<{key}, {value}, {size}, {ways}>"),
            StateKind::HashTable { key, value, size, ways } => {
                write!(f, "hash_table<{key}, {value}, {size}, {ways}>")
            }
            StateKind::Tcam { key, value, size } => write!(f, "tcam<{key}, {value}, {size}>"),
            StateKind::Queue { ty, size } => write!(f, "queue<{ty}, {size}>"),
        }
    }
}

/// A state element: its name in the NF (the struct field's name) and its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDecl {
    /// The field name, e.g. `mac_table`.
    pub name: String,
    /// Kind and shape.
    pub kind: StateKind,
    /// A field of the state struct, or a probe of the source.
    pub role: StateRole,
}

/// Where a state element comes from: the debugger lists the struct's fields, then the probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StateRole {
    /// A field of the state struct.
    #[default]
    Field,
    /// `emu::probe!(name, value)`: a register holding the last value.
    Probe,
    /// `emu::count!(name)`: a 64-bit counter.
    Count,
}

/// Where a value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueDef {
    /// Result number `.1` of instruction `.0`.
    Result(Inst, u16),
    /// Parameter number `.1` of block `.0`.
    Param(Block, u16),
    /// No longer defined (its instruction was deleted); using it is an error.
    Detached,
}

/// A value's type and definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueData {
    /// The type.
    pub ty: Type,
    /// The definition.
    pub def: ValueDef,
}

/// An instruction's op and result values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstData {
    /// The operation.
    pub op: Op,
    /// Its results, in order.
    pub results: Vec<Value>,
}

/// A jump target with the arguments for its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BlockCall {
    /// The target.
    pub block: Block,
    /// One argument per parameter of the target, same types.
    pub args: Vec<Value>,
}

impl BlockCall {
    /// A call of `block` with `args`.
    pub fn new(block: Block, args: &[Value]) -> BlockCall {
        BlockCall { block, args: args.to_vec() }
    }
}

impl From<Block> for BlockCall {
    fn from(block: Block) -> BlockCall {
        BlockCall { block, args: vec![] }
    }
}

/// The verdict a `return` gives: `emu_core::Action` with values for its operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActionExpr {
    /// `Action::Forward(port)`, port a `u8`.
    Forward(Value),
    /// `Action::Multicast(PortMask(mask))`, mask a `u32`.
    Multicast(Value),
    /// `Action::Flood`.
    Flood,
    /// `Action::Reply`.
    Reply,
    /// `Action::Drop(reason)`.
    Drop(DropReason),
}

impl ActionExpr {
    /// The operand, if the action has one.
    pub fn arg(&self) -> Option<Value> {
        match self {
            ActionExpr::Forward(v) | ActionExpr::Multicast(v) => Some(*v),
            _ => None,
        }
    }

    /// The same action with operand `v` (no change for the actions without one).
    pub fn with_arg(&self, v: Value) -> ActionExpr {
        match self {
            ActionExpr::Forward(_) => ActionExpr::Forward(v),
            ActionExpr::Multicast(_) => ActionExpr::Multicast(v),
            other => *other,
        }
    }

    /// True when `self` and `other` are the same action but for their operands.
    pub fn same_kind(&self, other: &ActionExpr) -> bool {
        match (self, other) {
            (ActionExpr::Drop(a), ActionExpr::Drop(b)) => a == b,
            _ => core::mem::discriminant(self) == core::mem::discriminant(other),
        }
    }
}

/// How a block ends.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Terminator {
    /// `jump b(args)`: continue at `b`.
    Jump(BlockCall),
    /// `br c, t(args), e(args)`: continue at `t` when the `u1` `c` is 1, else at `e`.
    Branch(Value, BlockCall, BlockCall),
    /// `return action`: the packet's verdict; the function ends.
    Return(ActionExpr),
}

impl Terminator {
    /// The values the terminator uses, in order.
    pub fn args(&self) -> Vec<Value> {
        match self {
            Terminator::Jump(c) => c.args.clone(),
            Terminator::Branch(v, t, e) => {
                [*v].into_iter().chain(t.args.iter().copied()).chain(e.args.iter().copied()).collect()
            }
            Terminator::Return(a) => a.arg().into_iter().collect(),
        }
    }

    /// Replaces every used value `v` with `f(v)`.
    pub fn map_args(&mut self, mut f: impl FnMut(Value) -> Value) {
        match self {
            Terminator::Jump(c) => c.args.iter_mut().for_each(|a| *a = f(*a)),
            Terminator::Branch(v, t, e) => {
                *v = f(*v);
                t.args.iter_mut().chain(e.args.iter_mut()).for_each(|a| *a = f(*a));
            }
            Terminator::Return(a) => {
                if let Some(v) = a.arg() {
                    *a = a.with_arg(f(v));
                }
            }
        }
    }

    /// The jump targets with their arguments (two for a branch, even when both are one block).
    pub fn calls(&self) -> Vec<&BlockCall> {
        match self {
            Terminator::Jump(c) => vec![c],
            Terminator::Branch(_, t, e) => vec![t, e],
            Terminator::Return(_) => vec![],
        }
    }

    /// The jump targets, writable.
    pub fn calls_mut(&mut self) -> Vec<&mut BlockCall> {
        match self {
            Terminator::Jump(c) => vec![c],
            Terminator::Branch(_, t, e) => vec![t, e],
            Terminator::Return(_) => vec![],
        }
    }

    /// The successor blocks, in order, without duplicates.
    pub fn successors(&self) -> Vec<Block> {
        let mut s: Vec<Block> = self.calls().iter().map(|c| c.block).collect();
        s.dedup();
        s
    }
}

/// A basic block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockData {
    /// Parameters: the values incoming jumps pass (SSA block arguments instead of phis).
    pub params: Vec<Value>,
    /// Instructions, in execution order.
    pub insts: Vec<Inst>,
    /// The terminator; `None` only while a block is being built.
    pub term: Option<Terminator>,
}

/// One NF's per-packet function: `process`, with every helper inlined.
///
/// Objects live in arenas and are never freed; what is part of the function is what the
/// [`layout`](Function::layout) reaches: the blocks listed there (the first is the entry),
/// their instructions and terminators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// The NF's name (`learning_switch`).
    pub name: String,
    /// The header window in bytes (`#[emu::nf(window = …)]`).
    pub window: u32,
    /// State elements, in declaration order.
    pub states: Arena<StateId, StateDecl>,
    /// Every block ever made.
    pub blocks: Arena<Block, BlockData>,
    /// Every instruction ever made.
    pub insts: Arena<Inst, InstData>,
    /// Every value ever made.
    pub values: Arena<Value, ValueData>,
    /// The blocks of the function in print order, the entry block first.
    pub layout: Vec<Block>,
}

impl Function {
    /// An empty function (no blocks yet).
    pub fn new(name: &str, window: u32) -> Function {
        Function {
            name: name.to_string(),
            window,
            states: Arena::new(),
            blocks: Arena::new(),
            insts: Arena::new(),
            values: Arena::new(),
            layout: Vec::new(),
        }
    }

    /// The entry block.
    pub fn entry(&self) -> Option<Block> {
        self.layout.first().copied()
    }

    /// Declares a state element.
    pub fn add_state(&mut self, name: &str, kind: StateKind) -> StateId {
        self.states.push(StateDecl { name: name.to_string(), kind, role: StateRole::Field })
    }

    /// The state element called `name`.
    pub fn state_by_name(&self, name: &str) -> Option<StateId> {
        self.states.iter().find(|(_, d)| d.name == name).map(|(s, _)| s)
    }

    /// Makes a block and appends it to the layout.
    pub fn add_block(&mut self) -> Block {
        let b = self.blocks.push(BlockData::default());
        self.layout.push(b);
        b
    }

    /// Adds a parameter of type `ty` to `block`.
    pub fn add_block_param(&mut self, block: Block, ty: Type) -> Value {
        let n = self.blocks[block].params.len() as u16;
        let v = self.values.push(ValueData { ty, def: ValueDef::Param(block, n) });
        self.blocks[block].params.push(v);
        v
    }

    /// Makes an instruction of `op` with fresh result values, not yet placed in a block.
    /// An `Err` says why the operand types do not fit the op.
    pub fn make_inst(&mut self, op: Op) -> Result<Inst, String> {
        let types = op.result_types(self)?;
        let inst = self.insts.push(InstData { op, results: Vec::with_capacity(types.len()) });
        for (i, ty) in types.into_iter().enumerate() {
            let v = self.values.push(ValueData { ty, def: ValueDef::Result(inst, i as u16) });
            self.insts[inst].results.push(v);
        }
        Ok(inst)
    }

    /// Makes an instruction of `op` and appends it to `block`.
    pub fn append_inst(&mut self, block: Block, op: Op) -> Result<Inst, String> {
        let inst = self.make_inst(op)?;
        self.blocks[block].insts.push(inst);
        Ok(inst)
    }

    /// The type of `v`.
    pub fn value_type(&self, v: Value) -> Type {
        self.values[v].ty
    }

    /// Every value an instruction or terminator of the layout uses, where the instruction counts
    /// only if it writes or its results are used (to a fixed point). Arguments passed to a block
    /// parameter count as used only if that parameter is used.
    pub fn used_values(&self) -> HashSet<Value> {
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
        for &b in &self.layout {
            for (k, &p) in self.blocks[b].params.iter().enumerate() {
                param_of.insert(p, (b, k));
            }
            for &i in &self.blocks[b].insts {
                let d = &self.insts[i];
                for &r in &d.results {
                    def.insert(r, i);
                }
                if !d.op.effect().is_removable() {
                    for a in d.op.args() {
                        mark(&mut used, &mut work, a);
                    }
                }
            }
            let Some(t) = &self.blocks[b].term else { continue };
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
                for a in self.insts[i].op.args() {
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

    /// The results of `inst`.
    pub fn results(&self, inst: Inst) -> &[Value] {
        &self.insts[inst].results
    }

    /// The instruction defining `v`, when it is an instruction result.
    pub fn def_inst(&self, v: Value) -> Option<Inst> {
        match self.values.get(v)?.def {
            ValueDef::Result(i, _) => Some(i),
            _ => None,
        }
    }

    /// The constant `v` is, when it is defined by a `const`.
    pub fn as_const(&self, v: Value) -> Option<&BitVec> {
        match &self.insts[self.def_inst(v)?].op {
            Op::Const(c) => Some(c),
            _ => None,
        }
    }

    /// The terminator of `block` (which must have one).
    pub fn terminator(&self, block: Block) -> &Terminator {
        self.blocks[block].term.as_ref().expect("block has no terminator")
    }

    /// Replaces every use of a value by what `map` says, following chains (`a → b → c`
    /// replaces `a` by `c`), in every instruction and terminator of the layout.
    pub fn replace_uses(&mut self, map: &HashMap<Value, Value>) {
        if map.is_empty() {
            return;
        }
        let resolve = |mut v: Value| {
            let mut steps = 0;
            while let Some(&n) = map.get(&v) {
                v = n;
                steps += 1;
                assert!(steps <= map.len(), "cyclic value replacement at {v}");
            }
            v
        };
        for &b in &self.layout {
            for &i in &self.blocks[b].insts {
                self.insts[i].op.map_args(resolve);
            }
            if let Some(t) = &mut self.blocks[b].term {
                t.map_args(resolve);
            }
        }
    }

    /// Marks the results of `inst` as no longer defined (after it is unlinked from its block).
    pub fn detach_results(&mut self, inst: Inst) {
        for r in self.insts[inst].results.clone() {
            self.values[r].def = ValueDef::Detached;
        }
    }

    /// Every instruction of the layout with its block, in order.
    pub fn inst_blocks(&self) -> HashMap<Inst, Block> {
        let mut m = HashMap::new();
        for &b in &self.layout {
            for &i in &self.blocks[b].insts {
                m.insert(i, b);
            }
        }
        m
    }
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        super::print::write_function(f, self)
    }
}

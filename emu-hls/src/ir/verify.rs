//! The verifier: checks that a function is well formed, and reports every problem it finds.
//!
//! Rules:
//!
//! - state elements have distinct identifier names and valid shapes (counter widths 1..=64,
//!   types 1..=256 bits, at least one slot or element; a hash table's size a multiple of its
//!   ways, with a power of two of sets);
//! - the layout is non-empty, lists each block once, and the entry block has no parameters;
//! - every block of the layout has a terminator; each instruction sits in one block once;
//! - every value has a valid type, and its recorded definition is where it is defined;
//! - every instruction's result types are what its op gives for its operand types
//!   ([`Op::result_types`](super::Op::result_types));
//! - every used value is defined (not detached), by an instruction or a block parameter of
//!   the layout, and (in reachable blocks) its definition dominates the use — before it in the
//!   same block, or in a dominating block;
//! - jump targets are blocks of the layout and get one argument of the right type per
//!   parameter; branch conditions are `u1`; `forward` takes a `u8`, `multicast` a `u32`.

use super::cfg::{Cfg, DomTree};
use super::function::{ActionExpr, Block, Function, Inst, Terminator, Value, ValueDef};
use super::print::{inst_to_string, terminator_to_string};
use super::types::Type;
use super::StateKind;
use core::fmt;
use std::collections::{HashMap, HashSet};

/// One problem: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyError {
    /// The place: `block3: v5:u1 = eq v3, v4`, `state mac_table`, `function`.
    pub location: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// Every problem the verifier found, in function order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyErrors(pub Vec<VerifyError>);

impl fmt::Display for VerifyErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for VerifyErrors {}

/// Checks `func` against the rules above.
pub fn verify(func: &Function) -> Result<(), VerifyErrors> {
    let mut v = Verifier { func, errors: Vec::new() };
    v.run();
    if v.errors.is_empty() {
        Ok(())
    } else {
        Err(VerifyErrors(v.errors))
    }
}

struct Verifier<'f> {
    func: &'f Function,
    errors: Vec<VerifyError>,
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

impl<'f> Verifier<'f> {
    fn err(&mut self, location: impl Into<String>, message: impl Into<String>) {
        self.errors.push(VerifyError { location: location.into(), message: message.into() });
    }

    fn check_type(&mut self, loc: &str, what: &str, t: Type) {
        if !t.is_valid() {
            self.err(loc, format!("{what} has type {t}; widths are 1 to {}", super::bits::MAX_WIDTH));
        }
    }

    fn run(&mut self) {
        let f = self.func;
        self.states();
        let Some(entry) = f.entry() else {
            self.err("function", "has no blocks; the entry block comes first in the layout");
            return;
        };
        if !f.blocks.is_valid(entry) {
            self.err("function", format!("entry {entry} does not exist"));
            return;
        }
        if !f.blocks[entry].params.is_empty() {
            self.err(format!("{entry}"), "the entry block takes no parameters");
        }
        // Layout, and where each value is defined.
        let mut in_layout = HashSet::new();
        let mut inst_home: HashMap<Inst, (Block, usize)> = HashMap::new();
        for &b in &f.layout {
            if !f.blocks.is_valid(b) {
                self.err("function", format!("layout lists {b}, which does not exist"));
                continue;
            }
            if !in_layout.insert(b) {
                self.err("function", format!("layout lists {b} twice"));
                continue;
            }
            for (pos, &i) in f.blocks[b].insts.iter().enumerate() {
                if !f.insts.is_valid(i) {
                    self.err(format!("{b}"), format!("instruction {i} does not exist"));
                } else if let Some((other, _)) = inst_home.insert(i, (b, pos)) {
                    self.err(format!("{b}"), format!("instruction {i} is also in {other}"));
                }
            }
        }
        let cfg = Cfg::new(f);
        let dom = DomTree::new(&cfg);
        for &b in &f.layout {
            if !f.blocks.is_valid(b) {
                continue;
            }
            self.block(b, &in_layout, &inst_home, &cfg, &dom);
        }
    }

    fn states(&mut self) {
        let mut names = HashSet::new();
        for (_, s) in self.func.states.iter() {
            let loc = format!("state {}", s.name);
            if !is_ident(&s.name) {
                self.err(&loc, "the name is not an identifier");
            }
            if !names.insert(s.name.clone()) {
                self.err(&loc, "declared twice");
            }
            match &s.kind {
                StateKind::Counter { bits } => {
                    if !(1..=64).contains(bits) {
                        self.err(&loc, format!("counter of {bits} bits; 1 to 64 are allowed"));
                    }
                }
                StateKind::Register { ty } => self.check_type(&loc, "the register", *ty),
                StateKind::Array { ty, size } => {
                    self.check_type(&loc, "the element", *ty);
                    if *size == 0 {
                        self.err(&loc, "an array needs at least one element");
                    }
                }
                StateKind::Cam { key, value, size }
                | StateKind::Lru { key, value, size, .. }
                | StateKind::Tcam { key, value, size } => {
                    self.check_type(&loc, "the key", *key);
                    self.check_type(&loc, "the value", *value);
                    if *size == 0 {
                        self.err(&loc, format!("{} needs at least one slot", s.kind.with_article()));
                    }
                }
                StateKind::HashTable { key, value, .. } => {
                    self.check_type(&loc, "the key", *key);
                    self.check_type(&loc, "the value", *value);
                }
                StateKind::Queue { ty, size } => {
                    self.check_type(&loc, "the element", *ty);
                    if *size == 0 {
                        self.err(&loc, "a queue needs room for at least one value");
                    }
                }
            }
            // Tables in sets: as many sets as a power of two, all of `ways` ways.
            if let StateKind::HashTable { size, ways, .. } | StateKind::Lru { size: size @ 1.., ways, .. } = &s.kind {
                if *ways == 0 || *size == 0 || size % ways != 0 || !(size / ways).is_power_of_two() {
                    self.err(
                        &loc,
                        format!(
                            "{} of {size} entries in sets of {ways} ways; the size must be a positive \
                             multiple of the ways, with a power of two of sets",
                            s.kind.with_article()
                        ),
                    );
                }
            }
        }
    }

    /// Checks that `v` is defined where `use_block` at position `pos` (`usize::MAX` for the
    /// terminator) may see it.
    #[allow(clippy::too_many_arguments)]
    fn check_use(
        &mut self,
        loc: &str,
        v: Value,
        use_block: Block,
        pos: usize,
        in_layout: &HashSet<Block>,
        inst_home: &HashMap<Inst, (Block, usize)>,
        cfg: &Cfg,
        dom: &DomTree,
    ) {
        let f = self.func;
        let Some(data) = f.values.get(v) else {
            self.err(loc, format!("{v} does not exist"));
            return;
        };
        let (def_block, def_pos) = match data.def {
            ValueDef::Detached => {
                self.err(loc, format!("{v} is used but no longer defined (its instruction was deleted)"));
                return;
            }
            ValueDef::Param(b, _) => {
                if !in_layout.contains(&b) {
                    self.err(loc, format!("{v} is a parameter of {b}, which is not in the function"));
                    return;
                }
                (b, None)
            }
            ValueDef::Result(i, _) => match inst_home.get(&i) {
                Some(&(b, p)) => (b, Some(p)),
                None => {
                    self.err(loc, format!("{v} is defined by {i}, which is in no block"));
                    return;
                }
            },
        };
        if !cfg.is_reachable(use_block) {
            return;
        }
        let ok = if def_block == use_block {
            def_pos.map_or(true, |p| p < pos)
        } else {
            dom.dominates(def_block, use_block)
        };
        if !ok {
            self.err(loc, format!("{v} is used where its definition (in {def_block}) does not dominate"));
        }
    }

    fn block(
        &mut self,
        b: Block,
        in_layout: &HashSet<Block>,
        inst_home: &HashMap<Inst, (Block, usize)>,
        cfg: &Cfg,
        dom: &DomTree,
    ) {
        let f = self.func;
        let data = &f.blocks[b];
        for (n, &p) in data.params.iter().enumerate() {
            let loc = format!("{b}");
            match f.values.get(p) {
                None => self.err(&loc, format!("parameter {p} does not exist")),
                Some(d) => {
                    if d.def != ValueDef::Param(b, n as u16) {
                        self.err(&loc, format!("parameter {p} is recorded as {:?}", d.def));
                    }
                    self.check_type(&loc, &format!("parameter {p}"), d.ty);
                }
            }
        }
        for (pos, &i) in data.insts.iter().enumerate() {
            if !f.insts.is_valid(i) {
                continue;
            }
            let loc = format!("{b}: {}", inst_to_string(f, i));
            let inst = &f.insts[i];
            for a in inst.op.args() {
                self.check_use(&loc, a, b, pos, in_layout, inst_home, cfg, dom);
            }
            match inst.op.result_types(f) {
                Err(e) => self.err(&loc, e),
                Ok(types) => {
                    if types.len() != inst.results.len() {
                        self.err(
                            &loc,
                            format!("{} gives {} results, not {}", inst.op.name(), types.len(), inst.results.len()),
                        );
                    }
                    for (n, (&r, want)) in inst.results.iter().zip(types).enumerate() {
                        match f.values.get(r) {
                            None => self.err(&loc, format!("result {r} does not exist")),
                            Some(d) => {
                                if d.def != ValueDef::Result(i, n as u16) {
                                    self.err(&loc, format!("result {r} is recorded as {:?}", d.def));
                                }
                                if d.ty != want {
                                    self.err(
                                        &loc,
                                        format!("result {r} is {}, but {} gives {want}", d.ty, inst.op.name()),
                                    );
                                }
                                self.check_type(&loc, &format!("result {r}"), d.ty);
                            }
                        }
                    }
                }
            }
        }
        let Some(term) = &data.term else {
            self.err(format!("{b}"), "has no terminator");
            return;
        };
        let loc = format!("{b}: {}", terminator_to_string(term));
        for a in term.args() {
            self.check_use(&loc, a, b, usize::MAX, in_layout, inst_home, cfg, dom);
        }
        let ty = |v: Value| f.values.get(v).map(|d| d.ty);
        match term {
            Terminator::Branch(c, ..) => {
                if let Some(t) = ty(*c) {
                    if t != Type::BOOL {
                        self.err(&loc, format!("the condition {c} is {t}, not u1"));
                    }
                }
            }
            Terminator::Return(ActionExpr::Forward(p)) => {
                if let Some(t) = ty(*p) {
                    if t != Type::uint(8) {
                        self.err(&loc, format!("the port {p} is {t}, not u8"));
                    }
                }
            }
            Terminator::Return(ActionExpr::Multicast(m)) => {
                if let Some(t) = ty(*m) {
                    if t != Type::uint(32) {
                        self.err(&loc, format!("the port mask {m} is {t}, not u32"));
                    }
                }
            }
            _ => {}
        }
        for call in term.calls() {
            let t = call.block;
            if !in_layout.contains(&t) {
                self.err(&loc, format!("jumps to {t}, which is not in the function"));
                continue;
            }
            let params = &f.blocks[t].params;
            if params.len() != call.args.len() {
                self.err(&loc, format!("{t} takes {} arguments, {} given", params.len(), call.args.len()));
                continue;
            }
            for (&a, &p) in call.args.iter().zip(params) {
                if let (Some(ta), Some(tp)) = (ty(a), ty(p)) {
                    if ta != tp {
                        self.err(&loc, format!("argument {a} is {ta}, but {t}'s parameter {p} is {tp}"));
                    }
                }
            }
        }
    }
}

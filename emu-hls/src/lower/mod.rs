//! Lowering: the checked, typed AST ([`front::Nf`](crate::front::Nf)) → one IR
//! [`Function`](crate::ir::Function).
//!
//! - State fields become state declarations: `Counter<BITS>` a counter, `Register<T>` and
//!   plain-value fields (`ip: Ipv4Addr`, loaded by the configuration) registers, `Array` an
//!   array, `Cam`, `Lru`, `HashTable`, `Tcam` and `Queue` the IR kinds of the same names.
//!   Their per-packet methods become state ops (`Queue::push`'s `Result<(), T>` is a flag and
//!   the value given back); `capacity` is a constant; the methods with no op (`len` of the
//!   tables, `Tcam::entry`, `HashTable::set_of`) are a [`LowerError`].
//! - `process` is the function; the module's functions it calls are inlined. A call in tail
//!   position shares its caller's return (so a helper's early `return Action::…` is the
//!   NF's return); another call returns through a join block.
//! - Locals live in the builder's SSA variables (one per scalar leaf of tuples and
//!   `Option`s); header views, the packet, `meta` and state aliases are compile-time values.
//! - Header views become packet accesses at (view offset + field offset) from
//!   `emu_core::wire`'s field tables; state-element methods become state ops; `match`,
//!   `Option`, guards, `if` and `&&`/`||` become branches; `for` over constant bounds is
//!   unrolled; library predicates become plain ops.
//! - A verdict returned where it is made (a tail, or `return`) is the IR's `return`. One
//!   bound to a variable, joined from branches or matched on is data (a tag, the port, the
//!   mask, the drop code), returned through a branch per verdict it may hold.
//! - Checksums: `checksum_ok`/`fill_checksum` of the IPv4, ICMP, UDP and TCP views,
//!   `checksum::{fold, update16, update32, pseudo_header}`, `Packet::ones_sum`, exactly as
//!   `emu_core` computes them over the window.
//!
//! Everything the front end accepts but this lowering does not yet support is a
//! [`LowerError`] with the construct's span — never a panic.

use crate::front::ast::{
    Arm, BinOp, Block as AstBlock, Element, ElementKind, Expr, ExprKind, FieldKind, ForOver, Func, LibOp, LocalId, Pat,
    PatKind, Place, Stmt, Ty, UnOp, Variant,
};
use crate::front::Nf;
use crate::ir::{
    field, u, ActionExpr, Addr, BitVec, Block, BlockCall, Builder, CmpOp, Function, StateId, StateRole, Value, Var,
};
use emu_core::DropReason;
use proc_macro2::Span;
use std::collections::{BTreeSet, HashMap};
use std::fmt;

#[cfg(test)]
mod tests;

/// A construct the front end accepts that the lowering cannot (yet) turn into IR.
#[derive(Debug, Clone)]
pub struct LowerError {
    /// Where it is in the NF's source.
    pub span: Span,
    /// What is not supported, and what to write instead when there is a way.
    pub message: String,
}

impl LowerError {
    fn new(span: Span, message: impl Into<String>) -> LowerError {
        LowerError { span, message: message.into() }
    }

    /// Line and column (1-based line, 0-based column) where it starts.
    pub fn line_col(&self) -> (usize, usize) {
        let s = self.span.start();
        (s.line, s.column)
    }
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (l, c) = self.line_col();
        write!(f, "{}:{}: {}", l, c + 1, self.message)
    }
}

impl std::error::Error for LowerError {}

type R<T> = Result<T, LowerError>;

/// Lowers a checked NF to IR, with a header window of `window` bytes (the `window` of
/// `#[emu::nf]`). The function is named after the NF module and verified.
pub fn lower(nf: &Nf, window: u32) -> Result<Function, LowerError> {
    let Some(process) = nf.fns.first() else {
        return Err(LowerError::new(Span::call_site(), "the NF has no `process` function"));
    };
    let mut l =
        Lower { nf, b: Builder::new(&nf.name, window), window, states: HashMap::new(), frames: vec![], joins: vec![] };
    l.declare_state()?;
    l.frames.push(Frame { func: 0, locals: HashMap::new(), ret: Ret::Process, loops: vec![] });
    for (i, p) in process.params.iter().enumerate() {
        let ty = &process.locals[p.0 as usize].ty;
        let v = match ty {
            Ty::Packet { .. } => Val::Packet,
            Ty::Meta => Val::Meta,
            _ => return Err(LowerError::new(process.span, format!("parameter {i} of `process` has type {ty}"))),
        };
        l.frames[0].locals.insert(*p, Slot::Fixed(Some(v)));
    }
    l.block(&process.body, &Dest::Tail(Ret::Process))?;
    if !l.b.is_terminated() {
        return Err(LowerError::new(process.span, "internal: `process` ends without a verdict"));
    }
    l.b.finish().map_err(|e| LowerError::new(process.span, format!("internal: the lowered IR does not verify:\n{e}")))
}

/// A value of the source as IR values.
#[derive(Debug, Clone)]
enum Val {
    /// A fixed-width value (bool, integer, address, enum).
    Scalar(Value),
    /// A tuple; `()` is the empty one.
    Tuple(Vec<Val>),
    /// `Option<T>`: a `u1` flag and the value (zero when the flag is 0).
    Opt(Value, Box<Val>),
    /// `Result<T, E>`: a `u1` flag (1 for `Ok`), the `Ok` value and the `Err` value (the one
    /// not held is zero, or whatever its producer gives, e.g. the value a push gives back).
    Res(Value, Box<Val>, Box<Val>),
    /// A header view at this address.
    View(Addr),
    Packet,
    Meta,
    /// An alias of a state field.
    State,
    /// A verdict known at compile time (up to its operand).
    Action(ActionExpr),
    /// A verdict computed at run time: it was bound, or joined from branches.
    ActionData(ActionData),
    /// The value of an expression that does not finish.
    Never,
}

impl Val {
    fn unit() -> Val {
        Val::Tuple(vec![])
    }
}

/// The tags of a verdict held as data.
const FORWARD: u8 = 0;
const MULTICAST: u8 = 1;
const FLOOD: u8 = 2;
const REPLY: u8 = 3;
const DROP: u8 = 4;

/// A verdict as data: a tag, the operands of every kind, and the (tag, drop code) pairs it
/// may hold, known statically (code is acyclic once loops are unrolled, so every definition
/// reaching a use was lowered before it).
#[derive(Debug, Clone)]
struct ActionData {
    tag: Value,
    port: Value,
    mask: Value,
    reason: Value,
    possible: BTreeSet<(u8, u8)>,
}

/// Where a local (or a join's result) lives.
#[derive(Debug, Clone)]
enum Slot {
    Var(Var),
    Tuple(Vec<Slot>),
    Opt(Var, Box<Slot>),
    Res(Var, Box<Slot>, Box<Slot>),
    /// A verdict: tag, port, mask, drop code, and what it may hold.
    Action([Var; 4], BTreeSet<(u8, u8)>),
    /// A compile-time value (view, packet, alias, verdict), bound once.
    Fixed(Option<Val>),
}

/// Where a function's result goes.
#[derive(Debug, Clone, Copy)]
enum Ret {
    /// Returned by the NF: the value is a verdict.
    Process,
    /// Assigned to a join's slot, then a jump to its block.
    Join(usize),
}

/// What to do with an expression's value.
#[derive(Debug, Clone, Copy)]
enum Dest {
    /// Give it back.
    Value,
    /// Return it to `Ret`.
    Tail(Ret),
}

struct JoinInfo {
    block: Option<Block>,
    slot: Slot,
    ty: Ty,
    span: Span,
}

struct LoopCx {
    next: Option<Block>,
    exit: Option<Block>,
}

struct Frame {
    func: usize,
    locals: HashMap<LocalId, Slot>,
    ret: Ret,
    loops: Vec<LoopCx>,
}

struct Lower<'a> {
    nf: &'a Nf,
    b: Builder,
    window: u32,
    states: HashMap<String, (StateId, FieldKind)>,
    frames: Vec<Frame>,
    joins: Vec<JoinInfo>,
}

fn scalar(v: &Val, span: Span) -> R<Value> {
    match v {
        Val::Scalar(x) => Ok(*x),
        other => Err(LowerError::new(span, format!("internal: expected a fixed-width value, found {other:?}"))),
    }
}

/// Parameter `i` of a state element's type.
fn param<T>(list: &[T], i: usize, span: Span) -> R<&T> {
    list.get(i).ok_or_else(|| LowerError::new(span, format!("internal: the element has no parameter {i}")))
}

fn const_of(e: &Expr) -> Option<u128> {
    match &e.kind {
        ExprKind::Int(v) | ExprKind::Const { value: v, .. } => Some(*v),
        // `WIDTH as u32`, `(1024 as u32)`: the constant as the cast leaves it.
        ExprKind::Cast(inner) => {
            let (Ty::Int(from), Ty::Int(to)) = (&inner.ty, &e.ty) else { return None };
            let v = const_of(inner)?;
            let mask = |bits: u16| if bits >= 128 { u128::MAX } else { (1u128 << bits) - 1 };
            let negative = from.signed && from.bits < 128 && (v >> (from.bits - 1)) & 1 == 1;
            let v = if negative { v | !mask(from.bits) } else { v & mask(from.bits) };
            Some(v & mask(to.bits))
        }
        _ => None,
    }
}

/// Whether unsigned `w`-bit division by `d` (not a power of two) fits the multiplier the
/// lowering uses: `2w + 1` bits, and `2^(w + ⌈log2 d⌉)` below 2^127.
fn by_constant(w: u16, d: u128) -> bool {
    let sh = 128 - (d.max(2) - 1).leading_zeros() as u16;
    w + sh <= 126 && 2 * w + 1 <= crate::ir::bits::MAX_WIDTH
}

/// The operation of `checked_mul`, `overflowing_sub`, `saturating_add`, …: its last word.
fn arith_op(method: &str) -> BinOp {
    match method.rsplit('_').next() {
        Some("add") => BinOp::Add,
        Some("sub") => BinOp::Sub,
        _ => BinOp::Mul,
    }
}

/// The element types of a tuple, or a struct's field types in declaration order.
fn fields_of(ty: &Ty) -> Vec<&Ty> {
    match ty {
        Ty::Tuple(v) => v.iter().collect(),
        Ty::Struct(_, fields) => fields.iter().map(|(_, t)| t).collect(),
        _ => Vec::new(),
    }
}

fn is_signed(ty: &Ty) -> bool {
    matches!(ty, Ty::Int(i) if i.signed)
}

fn drop_reason(code: u8, span: Span) -> R<DropReason> {
    DropReason::ALL
        .iter()
        .copied()
        .find(|r| *r as u8 == code)
        .ok_or_else(|| LowerError::new(span, format!("internal: no drop reason has code {code}")))
}

/// True when `a` and `b` test the same thing (bindings match anything, like `_`).
fn same_test(a: &Pat, b: &Pat) -> bool {
    use PatKind::*;
    match (&a.kind, &b.kind) {
        (Wild | Bind(_), Wild | Bind(_)) => true,
        (Int(x), Int(y)) => x == y,
        (Bool(x), Bool(y)) => x == y,
        (Range { lo: a, hi: b, inclusive: c }, Range { lo: x, hi: y, inclusive: z }) => (a, b, c) == (x, y, z),
        (Tuple(xs), Tuple(ys)) | (Or(xs), Or(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_test(x, y))
        }
        (Variant { variant: v, args: xs }, Variant { variant: w, args: ys }) => {
            v == w && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_test(x, y))
        }
        _ => false,
    }
}

/// The tag of `Action::NAME` and its operand in `d`.
fn action_tag(name: &str, d: &ActionData, span: Span) -> R<(u8, Option<Value>)> {
    Ok(match name {
        "Forward" => (FORWARD, Some(d.port)),
        "Multicast" => (MULTICAST, Some(d.mask)),
        "Flood" => (FLOOD, None),
        "Reply" => (REPLY, None),
        "Drop" => (DROP, Some(d.reason)),
        other => return Err(LowerError::new(span, format!("`Action::{other}` is not supported yet"))),
    })
}

fn pat_binds(p: &Pat) -> bool {
    match &p.kind {
        PatKind::Bind(_) => true,
        PatKind::Tuple(ps) | PatKind::Or(ps) => ps.iter().any(pat_binds),
        PatKind::Variant { args, .. } => args.iter().any(pat_binds),
        _ => false,
    }
}

impl<'a> Lower<'a> {
    // ------------------------------------------------------------------ types and state

    fn width(&self, ty: &Ty, span: Span) -> R<u16> {
        match ty {
            Ty::Enum(name) => {
                let e = self.nf.enums.iter().find(|e| &e.name == name);
                let max = e.map_or(0, |e| e.variants.iter().map(|(_, v)| *v).max().unwrap_or(0));
                Ok((128 - max.leading_zeros()).max(1) as u16)
            }
            Ty::DropReason => Ok(8),
            // A tuple or struct in a state element: its elements' bits, concatenated.
            Ty::Tuple(_) | Ty::Struct(..) if !fields_of(ty).is_empty() => {
                let mut w = 0u16;
                for t in fields_of(ty) {
                    w = w.saturating_add(self.width(t, span)?);
                }
                if w > crate::ir::MAX_WIDTH {
                    return Err(LowerError::new(
                        span,
                        format!(
                            "`{ty}` is {w} bits, more than the {} a value can have in hardware",
                            crate::ir::MAX_WIDTH
                        ),
                    ));
                }
                Ok(w)
            }
            _ => match ty.width() {
                Some(w) if (1..=crate::ir::MAX_WIDTH as u32).contains(&w) => Ok(w as u16),
                _ => Err(LowerError::new(span, format!("a value of type `{ty}` has no fixed width in hardware"))),
            },
        }
    }

    fn declare_state(&mut self) -> R<()> {
        for f in &self.nf.state.fields {
            let id = match &f.kind {
                FieldKind::Value(ty) => {
                    let w = self.width(ty, f.span)?;
                    self.b.register(&f.name, u(w))
                }
                FieldKind::Element(el) => match el.kind {
                    ElementKind::Counter => {
                        let bits = el.sizes.first().copied().unwrap_or(64);
                        self.b.counter(&f.name, bits as u16)
                    }
                    ElementKind::Register => {
                        let w = self.width(param(&el.types, 0, f.span)?, f.span)?;
                        self.b.register(&f.name, u(w))
                    }
                    ElementKind::Array => {
                        let w = self.width(param(&el.types, 0, f.span)?, f.span)?;
                        self.b.array(&f.name, u(w), *param(&el.sizes, 0, f.span)? as u32)
                    }
                    ElementKind::Cam | ElementKind::Lru | ElementKind::Tcam | ElementKind::HashTable => {
                        let k = u(self.width(param(&el.types, 0, f.span)?, f.span)?);
                        let v = u(self.width(param(&el.types, 1, f.span)?, f.span)?);
                        let n = *param(&el.sizes, 0, f.span)? as u32;
                        match el.kind {
                            ElementKind::Cam => self.b.cam(&f.name, k, v, n),
                            ElementKind::Lru => self.b.lru(&f.name, k, v, n, *param(&el.sizes, 1, f.span)? as u32),
                            ElementKind::Tcam => self.b.tcam(&f.name, k, v, n),
                            _ => self.b.hash_table(&f.name, k, v, n, *param(&el.sizes, 1, f.span)? as u32),
                        }
                    }
                    ElementKind::Queue => {
                        let w = self.width(param(&el.types, 0, f.span)?, f.span)?;
                        self.b.queue(&f.name, u(w), *param(&el.sizes, 0, f.span)? as u32)
                    }
                },
            };
            self.states.insert(f.name.clone(), (id, f.kind.clone()));
        }
        // Probes after the fields, as the debugger numbers them: a register for a value, a
        // 64-bit counter for a count.
        for p in &self.nf.probes {
            let (id, kind, role) = match &p.value {
                Some(ty) => {
                    let w = self.width(ty, Span::call_site())?;
                    let kind = FieldKind::Element(Element {
                        kind: ElementKind::Register,
                        types: vec![ty.clone()],
                        sizes: vec![],
                    });
                    (self.b.register(&p.name, u(w)), kind, StateRole::Probe)
                }
                None => {
                    let kind =
                        FieldKind::Element(Element { kind: ElementKind::Counter, types: vec![], sizes: vec![64] });
                    (self.b.counter(&p.name, 64), kind, StateRole::Count)
                }
            };
            self.b.set_state_role(id, role);
            self.states.insert(p.name.clone(), (id, kind));
        }
        Ok(())
    }

    fn state(&self, name: &str, span: Span) -> R<StateId> {
        self.states
            .get(name)
            .map(|(id, _)| *id)
            .ok_or_else(|| LowerError::new(span, format!("internal: no state field `{name}`")))
    }

    fn frame(&mut self) -> &mut Frame {
        self.frames.last_mut().expect("a frame")
    }

    fn func(&self) -> &'a Func {
        &self.nf.fns[self.frames.last().expect("a frame").func]
    }

    // ------------------------------------------------------------------ values and slots

    fn iconst(&mut self, w: u16, v: u128) -> Value {
        self.b.constant(BitVec::from_u128(w, v))
    }

    fn zero(&mut self, ty: &Ty, span: Span) -> R<Val> {
        Ok(match ty {
            Ty::Tuple(ts) => Val::Tuple(ts.iter().map(|t| self.zero(t, span)).collect::<R<_>>()?),
            Ty::Option(t) => {
                let f = self.b.bool_const(false);
                Val::Opt(f, Box::new(self.zero(t, span)?))
            }
            Ty::Result(t, e) => {
                let f = self.b.bool_const(false);
                Val::Res(f, Box::new(self.zero(t, span)?), Box::new(self.zero(e, span)?))
            }
            _ => {
                let w = self.width(ty, span)?;
                Val::Scalar(self.iconst(w, 0))
            }
        })
    }

    fn make_slot(&mut self, ty: &Ty, span: Span) -> R<Slot> {
        Ok(match ty {
            Ty::Tuple(ts) => Slot::Tuple(ts.iter().map(|t| self.make_slot(t, span)).collect::<R<_>>()?),
            Ty::Never => Slot::Tuple(vec![]),
            Ty::Option(t) => {
                let v = self.b.declare_var(u(1));
                Slot::Opt(v, Box::new(self.make_slot(t, span)?))
            }
            Ty::Result(t, e) => {
                let v = self.b.declare_var(u(1));
                Slot::Res(v, Box::new(self.make_slot(t, span)?), Box::new(self.make_slot(e, span)?))
            }
            Ty::Action => {
                let vars = [u(3), u(8), u(32), u(8)].map(|t| self.b.declare_var(t));
                Slot::Action(vars, BTreeSet::new())
            }
            t if t.is_value() || matches!(t, Ty::DropReason) => {
                let w = self.width(t, span)?;
                Slot::Var(self.b.declare_var(u(w)))
            }
            _ => Slot::Fixed(None),
        })
    }

    /// Assigns `val` to `slot`. `once`: a fixed slot may be bound (a local's `let`).
    fn def_slot(&mut self, slot: &mut Slot, val: Val, once: bool, ty: &Ty, span: Span) -> R<()> {
        match (slot, val) {
            (_, Val::Never) => Ok(()),
            (Slot::Var(v), Val::Scalar(x)) => {
                self.b.def_var(*v, x);
                Ok(())
            }
            (Slot::Tuple(ss), Val::Tuple(vs)) if ss.len() == vs.len() => {
                for (s, v) in ss.iter_mut().zip(vs) {
                    self.def_slot(s, v, once, ty, span)?;
                }
                Ok(())
            }
            (Slot::Opt(f, s), Val::Opt(x, v)) => {
                self.b.def_var(*f, x);
                self.def_slot(s, *v, once, ty, span)
            }
            (Slot::Res(f, so, se), Val::Res(x, o, e)) => {
                self.b.def_var(*f, x);
                self.def_slot(so, *o, once, ty, span)?;
                self.def_slot(se, *e, once, ty, span)
            }
            (Slot::Action(vars, possible), v @ (Val::Action(_) | Val::ActionData(_))) => {
                let d = self.action_data(v, span)?;
                for (var, x) in vars.iter().zip([d.tag, d.port, d.mask, d.reason]) {
                    self.b.def_var(*var, x);
                }
                possible.extend(d.possible);
                Ok(())
            }
            (Slot::Fixed(cur @ None), v) if once => {
                *cur = Some(v);
                Ok(())
            }
            (Slot::Fixed(_), _) => Err(LowerError::new(
                span,
                format!(
                    "a value of type `{ty}` cannot be assigned, nor be the value of a branch or call that is not \
                     returned (it is not data in hardware); bind it once with `let`"
                ),
            )),
            (s, v) => Err(LowerError::new(span, format!("internal: value {v:?} does not fit slot {s:?} ({ty})"))),
        }
    }

    fn use_slot(&mut self, slot: &Slot, span: Span) -> R<Val> {
        Ok(match slot {
            Slot::Var(v) => Val::Scalar(self.b.use_var(*v)),
            Slot::Tuple(ss) => Val::Tuple(ss.iter().map(|s| self.use_slot(s, span)).collect::<R<_>>()?),
            Slot::Opt(f, s) => {
                let f = self.b.use_var(*f);
                Val::Opt(f, Box::new(self.use_slot(s, span)?))
            }
            Slot::Res(f, o, e) => {
                let f = self.b.use_var(*f);
                Val::Res(f, Box::new(self.use_slot(o, span)?), Box::new(self.use_slot(e, span)?))
            }
            Slot::Action(vars, possible) => {
                let [tag, port, mask, reason] = vars.map(|v| self.b.use_var(v));
                Val::ActionData(ActionData { tag, port, mask, reason, possible: possible.clone() })
            }
            Slot::Fixed(Some(v)) => v.clone(),
            Slot::Fixed(None) => {
                return Err(LowerError::new(span, "a binding of this type is used before it is bound"))
            }
        })
    }

    fn bind_local(&mut self, id: LocalId, val: Val, span: Span) -> R<()> {
        let ty = self.func().locals[id.0 as usize].ty.clone();
        let mut slot = self.make_slot(&ty, span)?;
        self.def_slot(&mut slot, val, true, &ty, span)?;
        self.frame().locals.insert(id, slot);
        Ok(())
    }

    fn local(&mut self, id: LocalId, span: Span) -> R<Val> {
        let slot = self
            .frames
            .last()
            .and_then(|f| f.locals.get(&id))
            .cloned()
            .ok_or_else(|| LowerError::new(span, "internal: a local used before it is declared"))?;
        self.use_slot(&slot, span)
    }

    // ------------------------------------------------------------------ returns and joins

    fn new_join(&mut self, ty: &Ty, span: Span) -> R<usize> {
        let slot = self.make_slot(ty, span)?;
        self.joins.push(JoinInfo { block: None, slot, ty: ty.clone(), span });
        Ok(self.joins.len() - 1)
    }

    /// Gives `val` to `ret` (returns, or jumps to a join).
    fn emit_return(&mut self, ret: Ret, val: Val, span: Span) -> R<()> {
        if matches!(val, Val::Never) || self.b.is_terminated() {
            return Ok(());
        }
        match ret {
            Ret::Process => match val {
                Val::Action(a) => {
                    self.b.ret(a);
                    Ok(())
                }
                Val::ActionData(d) => self.ret_action_data(d, span),
                other => Err(LowerError::new(span, format!("internal: `process` returns {other:?}, not a verdict"))),
            },
            Ret::Join(j) => {
                let mut slot = std::mem::replace(&mut self.joins[j].slot, Slot::Tuple(vec![]));
                let ty = self.joins[j].ty.clone();
                let r = self.def_slot(&mut slot, val, false, &ty, span);
                self.joins[j].slot = slot;
                r?;
                let block = match self.joins[j].block {
                    Some(b) => b,
                    None => {
                        let b = self.b.new_block();
                        self.joins[j].block = Some(b);
                        b
                    }
                };
                self.b.jump(block, &[]);
                Ok(())
            }
        }
    }

    /// Continues after a join: its value, or `Never` when nothing reached it.
    fn finish_join(&mut self, j: usize) -> R<Val> {
        match self.joins[j].block {
            None => Ok(Val::Never),
            Some(block) => {
                self.b.seal_block(block);
                self.b.switch_to(block);
                let slot = self.joins[j].slot.clone();
                let span = self.joins[j].span;
                self.use_slot(&slot, span)
            }
        }
    }

    /// Lowers a construct whose branches each finish with `dest`: in `Value` mode through a
    /// new join of type `ty`.
    fn with_dest(&mut self, dest: &Dest, ty: &Ty, span: Span, body: impl FnOnce(&mut Self, Ret) -> R<()>) -> R<Val> {
        match *dest {
            Dest::Tail(ret) => {
                body(self, ret)?;
                Ok(Val::Never)
            }
            Dest::Value => {
                let j = self.new_join(ty, span)?;
                body(self, Ret::Join(j))?;
                self.finish_join(j)
            }
        }
    }

    fn finish_dest(&mut self, dest: &Dest, val: Val, span: Span) -> R<Val> {
        match *dest {
            Dest::Value => Ok(val),
            Dest::Tail(ret) => {
                self.emit_return(ret, val, span)?;
                Ok(Val::Never)
            }
        }
    }

    /// A verdict as data.
    fn action_data(&mut self, v: Val, span: Span) -> R<ActionData> {
        let a = match v {
            Val::ActionData(d) => return Ok(d),
            Val::Action(a) => a,
            other => return Err(LowerError::new(span, format!("internal: expected a verdict, found {other:?}"))),
        };
        let (tag, port, mask, code) = match a {
            ActionExpr::Forward(p) => (FORWARD, Some(p), None, 0),
            ActionExpr::Multicast(m) => (MULTICAST, None, Some(m), 0),
            ActionExpr::Flood => (FLOOD, None, None, 0),
            ActionExpr::Reply => (REPLY, None, None, 0),
            ActionExpr::Drop(r) => (DROP, None, None, r as u8),
        };
        let port = match port {
            Some(p) => p,
            None => self.iconst(8, 0),
        };
        let mask = match mask {
            Some(m) => m,
            None => self.iconst(32, 0),
        };
        let t = self.iconst(3, tag as u128);
        let reason = self.iconst(8, code as u128);
        Ok(ActionData { tag: t, port, mask, reason, possible: [(tag, code)].into_iter().collect() })
    }

    /// Returns a verdict held as data: a branch per verdict it may hold.
    fn ret_action_data(&mut self, d: ActionData, span: Span) -> R<()> {
        let options: Vec<(u8, u8)> = d.possible.iter().copied().collect();
        if options.is_empty() {
            // Nothing defined it: code that never runs.
            self.b.ret_flood();
            return Ok(());
        }
        for (i, &(tag, code)) in options.iter().enumerate() {
            if i + 1 < options.len() {
                let mut c = self.b.eq_imm(d.tag, tag as u64);
                if tag == DROP {
                    let r = self.b.eq_imm(d.reason, code as u64);
                    c = self.b.and(c, r);
                }
                let (yes, no) = (self.b.new_block(), self.b.new_block());
                self.b.branch(c, yes, no);
                self.b.seal_block(yes);
                self.b.seal_block(no);
                self.b.switch_to(yes);
                self.ret_one(tag, code, &d, span)?;
                self.b.switch_to(no);
            } else {
                self.ret_one(tag, code, &d, span)?;
            }
        }
        Ok(())
    }

    fn ret_one(&mut self, tag: u8, code: u8, d: &ActionData, span: Span) -> R<()> {
        match tag {
            FORWARD => self.b.ret_forward(d.port),
            MULTICAST => self.b.ret_multicast(d.mask),
            FLOOD => self.b.ret_flood(),
            REPLY => self.b.ret_reply(),
            _ => self.b.ret_drop(drop_reason(code, span)?),
        }
        Ok(())
    }

    // ------------------------------------------------------------------ blocks and statements

    fn block(&mut self, blk: &AstBlock, dest: &Dest) -> R<Val> {
        for s in &blk.stmts {
            self.stmt(s)?;
            if self.b.is_terminated() {
                return Ok(Val::Never);
            }
        }
        match &blk.tail {
            Some(t) => self.expr_dest(t, dest),
            None if blk.ty == Ty::Never => Ok(Val::Never),
            None => self.finish_dest(dest, Val::unit(), blk.span),
        }
    }

    fn stmt(&mut self, s: &Stmt) -> R<()> {
        match s {
            Stmt::Expr(e) => {
                self.expr(e)?;
                Ok(())
            }
            Stmt::Let { pat, init: None, .. } => {
                match &pat.kind {
                    PatKind::Bind(id) => {
                        let ty = self.func().locals[id.0 as usize].ty.clone();
                        let slot = self.make_slot(&ty, pat.span)?;
                        if matches!(slot, Slot::Fixed(_)) {
                            return Err(LowerError::new(
                            pat.span,
                            format!("a `let` without a value of type `{ty}` is not supported yet: bind it with its value"),
                        ));
                        }
                        self.frame().locals.insert(*id, slot);
                        Ok(())
                    }
                    _ => Err(LowerError::new(pat.span, "a `let` pattern without a value is not supported yet")),
                }
            }
            Stmt::Let { pat, init: Some(init), els } => {
                let v = self.expr(init)?;
                if matches!(v, Val::Never) {
                    return Ok(());
                }
                if let Some(els) = els {
                    if let Some(c) = self.pat_test(pat, &v)? {
                        let (ok, bad) = (self.b.new_block(), self.b.new_block());
                        self.b.branch(c, ok, bad);
                        self.b.seal_block(ok);
                        self.b.seal_block(bad);
                        self.b.switch_to(bad);
                        self.block(els, &Dest::Value)?;
                        if !self.b.is_terminated() {
                            return Err(LowerError::new(els.span, "internal: the `else` of a `let … else` finishes"));
                        }
                        self.b.switch_to(ok);
                    }
                }
                self.pat_bind(pat, &v)
            }
        }
    }

    // ------------------------------------------------------------------ expressions

    fn expr(&mut self, e: &Expr) -> R<Val> {
        self.expr_dest(e, &Dest::Value)
    }

    fn sexpr(&mut self, e: &Expr) -> R<Option<Value>> {
        match self.expr(e)? {
            Val::Never => Ok(None),
            v => Ok(Some(scalar(&v, e.span)?)),
        }
    }

    fn expr_dest(&mut self, e: &Expr, dest: &Dest) -> R<Val> {
        let span = e.span;
        match &e.kind {
            ExprKind::If { cond, then, els } => {
                let Some(c) = self.sexpr(cond)? else { return Ok(Val::Never) };
                self.with_dest(dest, &e.ty, span, |l, ret| {
                    let (t, f) = (l.b.new_block(), l.b.new_block());
                    l.b.branch(c, t, f);
                    l.b.seal_block(t);
                    l.b.seal_block(f);
                    l.b.switch_to(t);
                    l.block(then, &Dest::Tail(ret))?;
                    l.b.switch_to(f);
                    match els {
                        Some(x) => {
                            l.expr_dest(x, &Dest::Tail(ret))?;
                        }
                        None => l.emit_return(ret, Val::unit(), span)?,
                    }
                    Ok(())
                })
            }
            ExprKind::Match { scrutinee, arms } => {
                let v = self.expr(scrutinee)?;
                if matches!(v, Val::Never) {
                    return Ok(Val::Never);
                }
                self.with_dest(dest, &e.ty, span, |l, ret| l.lower_match(&v, arms, ret))
            }
            ExprKind::Block(b) => self.block(b, dest),
            ExprKind::Call { func, args } => {
                let mut vals = Vec::new();
                for a in args {
                    let v = self.expr(a)?;
                    if matches!(v, Val::Never) {
                        return Ok(Val::Never);
                    }
                    vals.push(v);
                }
                let callee = &self.nf.fns[*func];
                self.with_dest(dest, &e.ty, span, |l, ret| l.inline(*func, callee, vals, ret, span))
            }
            ExprKind::Return(x) => {
                let ret = self.frames.last().expect("a frame").ret;
                match x {
                    Some(x) => {
                        self.expr_dest(x, &Dest::Tail(ret))?;
                    }
                    None => self.emit_return(ret, Val::unit(), span)?,
                }
                Ok(Val::Never)
            }
            _ => {
                let v = self.value(e)?;
                self.finish_dest(dest, v, span)
            }
        }
    }

    fn inline(&mut self, index: usize, callee: &'a Func, args: Vec<Val>, ret: Ret, span: Span) -> R<()> {
        if self.frames.len() > 64 || self.frames.iter().any(|f| f.func == index) {
            return Err(LowerError::new(span, format!("`{}` calls itself: recursion cannot be inlined", callee.name)));
        }
        self.frames.push(Frame { func: index, locals: HashMap::new(), ret, loops: vec![] });
        let r = (|| {
            for (p, a) in callee.params.iter().zip(args) {
                self.bind_local(*p, a, span)?;
            }
            self.block(&callee.body, &Dest::Tail(ret))
        })();
        self.frames.pop();
        r.map(|_| ())
    }

    fn lower_match(&mut self, v: &Val, arms: &[Arm], ret: Ret) -> R<()> {
        // `carried`: the previous arm's guard failed, so this arm's pattern (the same test)
        // holds here; `fail` is where its pattern failing goes.
        let mut carried: Option<Block> = None;
        for (i, arm) in arms.iter().enumerate() {
            let last = i + 1 == arms.len();
            let mut next = None;
            if let Some(fail) = carried.take() {
                next = Some(fail);
            } else if !last {
                if let Some(c) = self.pat_test(&arm.pat, v)? {
                    let (bind, n) = (self.b.new_block(), self.b.new_block());
                    self.b.branch(c, bind, n);
                    self.b.seal_block(bind);
                    self.b.switch_to(bind);
                    next = Some(n);
                }
            }
            self.pat_bind(&arm.pat, v)?;
            let mut guard_fail = None;
            if let Some(g) = &arm.guard {
                if last {
                    return Err(LowerError::new(
                        g.span,
                        "a guard on the last arm of a `match` is not supported yet: end the match with an arm \
                         without a guard",
                    ));
                }
                let Some(c) = self.sexpr(g)? else { return Ok(()) };
                let body = self.b.new_block();
                // The next arm tests the same pattern (`Some(x) if g => …, Some(x) => …`): a
                // failed guard goes straight to it, past its test.
                let same = next.is_some() && i + 2 < arms.len() && same_test(&arm.pat, &arms[i + 1].pat);
                let n = if same {
                    let gf = self.b.new_block();
                    guard_fail = Some(gf);
                    gf
                } else {
                    *next.get_or_insert_with(|| self.b.new_block())
                };
                self.b.branch(c, body, n);
                self.b.seal_block(body);
                self.b.switch_to(body);
            }
            self.expr_dest(&arm.body, &Dest::Tail(ret))?;
            if let Some(gf) = guard_fail {
                self.b.seal_block(gf);
                self.b.switch_to(gf);
                carried = next;
                continue;
            }
            match next {
                Some(n) => {
                    self.b.seal_block(n);
                    self.b.switch_to(n);
                }
                None => break, // this arm takes everything: the rest never run
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------------ patterns

    fn pat_test(&mut self, p: &Pat, v: &Val) -> R<Option<Value>> {
        let span = p.span;
        Ok(match &p.kind {
            PatKind::Wild | PatKind::Bind(_) => None,
            PatKind::Int(k) => {
                let x = scalar(v, span)?;
                let w = self.b.ty(x).width();
                let c = self.iconst(w, *k);
                Some(self.b.eq(x, c))
            }
            PatKind::Bool(t) => {
                let x = scalar(v, span)?;
                Some(if *t { x } else { self.b.not(x) })
            }
            PatKind::Range { lo, hi, inclusive } => {
                let x = scalar(v, span)?;
                let w = self.b.ty(x).width();
                let s = is_signed(&p.ty);
                let (lo, hi) = (self.iconst(w, *lo), self.iconst(w, *hi));
                let a = self.b.cmp(if s { CmpOp::Sge } else { CmpOp::Uge }, x, lo);
                let op = match (s, inclusive) {
                    (false, true) => CmpOp::Ule,
                    (false, false) => CmpOp::Ult,
                    (true, true) => CmpOp::Sle,
                    (true, false) => CmpOp::Slt,
                };
                let b = self.b.cmp(op, x, hi);
                Some(self.b.and(a, b))
            }
            PatKind::Tuple(ps) => {
                let Val::Tuple(vs) = v else {
                    return Err(LowerError::new(span, "internal: tuple pattern on a non-tuple"));
                };
                let mut acc = None;
                for (p, v) in ps.iter().zip(vs) {
                    if let Some(t) = self.pat_test(p, v)? {
                        acc = Some(match acc {
                            Some(a) => self.b.and(a, t),
                            None => t,
                        });
                    }
                }
                acc
            }
            PatKind::Variant { variant, args } => match variant {
                Variant::Some | Variant::None => {
                    let Val::Opt(valid, inner) = v else {
                        return Err(LowerError::new(span, "internal: `Some`/`None` pattern on a non-`Option`"));
                    };
                    if *variant == Variant::None {
                        Some(self.b.not(*valid))
                    } else {
                        match args.first().map(|a| self.pat_test(a, inner)).transpose()?.flatten() {
                            Some(t) => Some(self.b.and(*valid, t)),
                            None => Some(*valid),
                        }
                    }
                }
                Variant::DropReason(_, code) => {
                    let x = scalar(v, span)?;
                    Some(self.b.eq_imm(x, *code as u64))
                }
                Variant::Enum { value, .. } => {
                    let x = scalar(v, span)?;
                    let w = self.b.ty(x).width();
                    let c = self.iconst(w, *value);
                    Some(self.b.eq(x, c))
                }
                Variant::Action(name) => {
                    let d = self.action_data(v.clone(), span)?;
                    let (tag, operand) = action_tag(name, &d, span)?;
                    let mut t = self.b.eq_imm(d.tag, tag as u64);
                    if let (Some(a), Some(x)) = (args.first(), operand) {
                        if let Some(sub) = self.pat_test(a, &Val::Scalar(x))? {
                            t = self.b.and(t, sub);
                        }
                    }
                    Some(t)
                }
                Variant::Ok | Variant::Err => {
                    let Val::Res(ok, o, e) = v else {
                        return Err(LowerError::new(span, "internal: `Ok`/`Err` pattern on a non-`Result`"));
                    };
                    let (flag, inner) = if *variant == Variant::Ok { (*ok, o) } else { (self.b.not(*ok), e) };
                    match args.first().map(|a| self.pat_test(a, inner)).transpose()?.flatten() {
                        Some(t) => Some(self.b.and(flag, t)),
                        None => Some(flag),
                    }
                }
            },
            PatKind::Or(ps) => {
                if ps.iter().any(pat_binds) {
                    return Err(LowerError::new(span, "an `|` pattern that binds names is not supported yet"));
                }
                let mut acc = None;
                for p in ps {
                    let Some(t) = self.pat_test(p, v)? else { return Ok(None) };
                    acc = Some(match acc {
                        Some(a) => self.b.or(a, t),
                        None => t,
                    });
                }
                acc
            }
        })
    }

    fn pat_bind(&mut self, p: &Pat, v: &Val) -> R<()> {
        match (&p.kind, v) {
            (PatKind::Bind(id), v) => self.bind_local(*id, v.clone(), p.span),
            (PatKind::Tuple(ps), Val::Tuple(vs)) => {
                for (p, v) in ps.iter().zip(vs) {
                    self.pat_bind(p, v)?;
                }
                Ok(())
            }
            (PatKind::Variant { variant: Variant::Some, args }, Val::Opt(_, inner))
            | (PatKind::Variant { variant: Variant::Ok, args }, Val::Res(_, inner, _))
            | (PatKind::Variant { variant: Variant::Err, args }, Val::Res(_, _, inner)) => match args.first() {
                Some(a) => self.pat_bind(a, inner),
                None => Ok(()),
            },
            (PatKind::Variant { variant: Variant::Action(name), args }, v) if pat_binds(p) => {
                let d = self.action_data(v.clone(), p.span)?;
                match (args.first(), action_tag(name, &d, p.span)?.1) {
                    (Some(a), Some(x)) => self.pat_bind(a, &Val::Scalar(x)),
                    _ => Ok(()),
                }
            }
            (PatKind::Or(ps), _) if ps.iter().any(pat_binds) => {
                Err(LowerError::new(p.span, "an `|` pattern that binds names is not supported yet"))
            }
            (_, _) if !pat_binds(p) => Ok(()),
            _ => Err(LowerError::new(p.span, "internal: a pattern does not fit its value")),
        }
    }

    // ------------------------------------------------------------------ plain values

    fn value(&mut self, e: &Expr) -> R<Val> {
        let span = e.span;
        Ok(match &e.kind {
            ExprKind::Int(v) | ExprKind::Const { value: v, .. } => {
                let w = self.width(&e.ty, span)?;
                Val::Scalar(self.iconst(w, *v))
            }
            ExprKind::Bool(t) => Val::Scalar(self.b.bool_const(*t)),
            ExprKind::Array(elems) => {
                let mut vals = Vec::with_capacity(elems.len());
                for x in elems {
                    match self.expr(x)? {
                        Val::Never => return Ok(Val::Never),
                        v => vals.push(v),
                    }
                }
                Val::Tuple(vals)
            }
            ExprKind::Repeat { value, count } => match self.expr(value)? {
                Val::Never => Val::Never,
                v => Val::Tuple(vec![v; *count as usize]),
            },
            ExprKind::Index { base, index } => {
                let Val::Tuple(items) = self.expr(base)? else { return Ok(Val::Never) };
                if let Some(i) = const_of(index) {
                    return items
                        .into_iter()
                        .nth(i as usize)
                        .ok_or_else(|| LowerError::new(span, "internal: a constant index past an array's end"));
                }
                let Some(i) = self.sexpr(index)? else { return Ok(Val::Never) };
                let scalars = items.iter().map(|v| scalar(v, span)).collect::<R<Vec<Value>>>()?;
                Val::Scalar(self.select_tree(&scalars, i))
            }
            ExprKind::Lookup { values, index, .. } => {
                let w = self.width(&e.ty, span)?;
                if let Some(i) = const_of(index) {
                    let v = values.get(i as usize).copied().ok_or_else(|| {
                        LowerError::new(span, "internal: a constant index past a constant array's end")
                    })?;
                    return Ok(Val::Scalar(self.iconst(w, v)));
                }
                let Some(i) = self.sexpr(index)? else { return Ok(Val::Never) };
                Val::Scalar(self.table(values, i, w))
            }
            ExprKind::Local(id) => self.local(*id, span)?,
            ExprKind::SelfField(name) => {
                let s = self.state(name, span)?;
                Val::Scalar(self.b.reg_get(s))
            }
            ExprKind::MetaField(name) => Val::Scalar(match *name {
                "in_port" => self.b.in_port(),
                "len" => self.b.meta_len(),
                "timestamp" => self.b.timestamp(),
                other => return Err(LowerError::new(span, format!("`meta.{other}` is not supported yet"))),
            }),
            ExprKind::Field { base, index } => match self.expr(base)? {
                Val::Never => Val::Never,
                Val::Tuple(mut vs) if (*index as usize) < vs.len() => vs.swap_remove(*index as usize),
                Val::Scalar(x) if *index == 0 => Val::Scalar(x),
                other => return Err(LowerError::new(span, format!("internal: field {index} of {other:?}"))),
            },
            ExprKind::Unary { op, arg } => {
                let Some(x) = self.sexpr(arg)? else { return Ok(Val::Never) };
                Val::Scalar(match op {
                    UnOp::Not => self.b.not(x),
                    UnOp::Neg => self.b.neg(x),
                })
            }
            ExprKind::Binary { op: op @ (BinOp::And | BinOp::Or), lhs, rhs } => {
                let Some(first) = self.sexpr(lhs)? else { return Ok(Val::Never) };
                let (more, join) = (self.b.new_block(), self.b.new_block());
                let r = self.b.block_param(join, u(1));
                let short = self.b.bool_const(*op == BinOp::Or);
                if *op == BinOp::Or {
                    self.b.branch(first, BlockCall::new(join, &[short]), more);
                } else {
                    self.b.branch(first, more, BlockCall::new(join, &[short]));
                }
                self.b.seal_block(more);
                self.b.switch_to(more);
                if let Some(v) = self.sexpr(rhs)? {
                    if !self.b.is_terminated() {
                        self.b.jump(join, &[v]);
                    }
                }
                self.b.seal_block(join);
                self.b.switch_to(join);
                Val::Scalar(r)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.expr(lhs)?;
                if matches!(a, Val::Never) {
                    return Ok(Val::Never);
                }
                let b = self.expr(rhs)?;
                if matches!(b, Val::Never) {
                    return Ok(Val::Never);
                }
                match (a, b) {
                    (Val::Scalar(a), Val::Scalar(b)) => Val::Scalar(self.binop(*op, a, b, &lhs.ty, rhs, span)?),
                    (a, b) if matches!(op, BinOp::Eq | BinOp::Ne) => {
                        let eq = self.val_eq(&a, &b, &lhs.ty, span)?;
                        Val::Scalar(if *op == BinOp::Eq { eq } else { self.b.not(eq) })
                    }
                    _ => {
                        return Err(LowerError::new(
                            span,
                            format!("`{op:?}` on values of type `{}` is not supported yet", lhs.ty),
                        ))
                    }
                }
            }
            ExprKind::Cast(inner) => {
                let Some(x) = self.sexpr(inner)? else { return Ok(Val::Never) };
                let to = self.width(&e.ty, span)?;
                let from = self.b.ty(x).width();
                Val::Scalar(if to > from && is_signed(&inner.ty) { self.b.sext(x, to) } else { self.b.resize(x, to) })
            }
            ExprKind::Tuple(es) => {
                let mut vs = Vec::new();
                for x in es {
                    match self.expr(x)? {
                        Val::Never => return Ok(Val::Never),
                        v => vs.push(v),
                    }
                }
                Val::Tuple(vs)
            }
            ExprKind::Variant { variant, args } => self.variant(e, variant, args)?,
            ExprKind::Lib { op, args } => self.lib(e, op, args)?,
            ExprKind::WindowByte(i) => Val::Scalar(self.b.pkt_read(*i as u32, 1)),
            ExprKind::Borrow { .. } => Val::State,
            ExprKind::Assign { place, op, value } => {
                let v = self.expr(value)?;
                if matches!(v, Val::Never) {
                    return Ok(Val::Never);
                }
                self.assign(place, *op, v, value, span)?;
                Val::unit()
            }
            ExprKind::For { var, over, body } => self.lower_for(*var, over, body, span)?,
            ExprKind::Break | ExprKind::Continue => {
                let is_break = matches!(e.kind, ExprKind::Break);
                let Some(cx) = self.frame().loops.last_mut() else {
                    return Err(LowerError::new(span, "internal: `break`/`continue` outside a loop"));
                };
                let slot = if is_break { &mut cx.exit } else { &mut cx.next };
                let target = match *slot {
                    Some(b) => b,
                    None => {
                        let b = self.b.new_block();
                        // Re-borrow: the builder made the block.
                        let cx = self.frame().loops.last_mut().expect("a loop");
                        if is_break {
                            cx.exit = Some(b);
                        } else {
                            cx.next = Some(b);
                        }
                        b
                    }
                };
                self.b.jump(target, &[]);
                Val::Never
            }
            ExprKind::If { .. }
            | ExprKind::Match { .. }
            | ExprKind::Block(_)
            | ExprKind::Call { .. }
            | ExprKind::Return(_) => self.expr(e)?,
        })
    }

    fn lower_for(&mut self, var: Option<LocalId>, over: &ForOver, body: &AstBlock, span: Span) -> R<Val> {
        let trips = match over {
            ForOver::Range { start, end, .. } => end.saturating_sub(*start),
            ForOver::Array(a) => match &a.ty {
                Ty::Array(_, n) => *n as u128,
                _ => 0,
            },
        };
        if trips > 1024 {
            return Err(LowerError::new(
                span,
                format!(
                    "this `for` loop runs {trips} times; the hardware unrolls a loop into a copy of its body per \
                     iteration, at most 1024: loop over less (a constant bound, `break` when done), or keep \
                     the rest of the work for later packets"
                ),
            ));
        }
        // The values the variable takes, in order; an array's elements are evaluated first.
        let values: Vec<Val> = match over {
            ForOver::Range { start, end, rev } => {
                let w = match var {
                    Some(id) => {
                        let ty = self.func().locals[id.0 as usize].ty.clone();
                        self.width(&ty, span)?
                    }
                    None => 1,
                };
                let mut v = Vec::with_capacity(trips as usize);
                for k in 0..trips {
                    let i = if *rev { end - 1 - k } else { start + k };
                    v.push(if var.is_some() { Val::Scalar(self.iconst(w, i)) } else { Val::unit() });
                }
                v
            }
            ForOver::Array(a) => match self.expr(a)? {
                Val::Tuple(items) => items,
                Val::Never => return Ok(Val::Never),
                other => return Err(LowerError::new(span, format!("internal: a loop over {other:?}"))),
            },
        };
        let exit_of = |l: &mut Self| l.frame().loops.pop().and_then(|c| c.exit);
        let mut exit = None;
        for value in values {
            self.frame().loops.push(LoopCx { next: None, exit });
            if let Some(id) = var {
                self.bind_local(id, value, span)?;
            }
            self.block(body, &Dest::Value)?;
            if !self.b.is_terminated() {
                let cx = self.frame().loops.last_mut().expect("a loop");
                let n = match cx.next {
                    Some(n) => n,
                    None => {
                        let n = self.b.new_block();
                        self.frame().loops.last_mut().expect("a loop").next = Some(n);
                        n
                    }
                };
                self.b.jump(n, &[]);
            }
            let next = self.frame().loops.last().expect("a loop").next;
            exit = exit_of(self);
            match next {
                Some(n) => {
                    self.b.seal_block(n);
                    self.b.switch_to(n);
                }
                None => break,
            }
        }
        if let Some(x) = exit {
            if !self.b.is_terminated() {
                self.b.jump(x, &[]);
            }
            self.b.seal_block(x);
            self.b.switch_to(x);
        }
        Ok(if self.b.is_terminated() { Val::Never } else { Val::unit() })
    }

    fn assign(&mut self, place: &Place, op: Option<BinOp>, v: Val, rhs: &Expr, span: Span) -> R<()> {
        match place {
            Place::Local(id) => {
                let ty = self.func().locals[id.0 as usize].ty.clone();
                let v = match op {
                    Some(op) => {
                        let cur = self.local(*id, span)?;
                        let (a, b) = (scalar(&cur, span)?, scalar(&v, span)?);
                        Val::Scalar(self.binop(op, a, b, &ty, rhs, span)?)
                    }
                    None => v,
                };
                let mut slot = self
                    .frame()
                    .locals
                    .remove(id)
                    .ok_or_else(|| LowerError::new(span, "internal: assignment to an unknown local"))?;
                let r = self.def_slot(&mut slot, v, false, &ty, span);
                self.frame().locals.insert(*id, slot);
                r
            }
            Place::SelfField(name) => {
                let s = self.state(name, span)?;
                let mut x = scalar(&v, span)?;
                if let Some(op) = op {
                    let cur = self.b.reg_get(s);
                    let ty = match self.states.get(name) {
                        Some((_, FieldKind::Value(t))) => t.clone(),
                        _ => rhs.ty.clone(),
                    };
                    x = self.binop(op, cur, x, &ty, rhs, span)?;
                }
                self.b.reg_set(s, x);
                Ok(())
            }
            Place::WindowByte(i) => {
                let mut x = scalar(&v, span)?;
                if let Some(op) = op {
                    let cur = self.b.pkt_read(*i as u32, 1);
                    x = self.binop(op, cur, x, &Ty::uint(8), rhs, span)?;
                }
                self.b.pkt_write(*i as u32, x);
                Ok(())
            }
        }
    }

    /// Element `index` of a table of constants, `w` bits each: a tree of selects over the
    /// index's bits (the front end proved it is inside the table, so higher bits are 0).
    fn table(&mut self, values: &[u128], index: Value, w: u16) -> Value {
        let items: Vec<Value> = values.iter().map(|&v| self.iconst(w, v)).collect();
        self.select_tree(&items, index)
    }

    /// Element `index` of `items`: a tree of selects over the index's bits (the front end
    /// proved it is inside, so higher bits are 0).
    fn select_tree(&mut self, items: &[Value], index: Value) -> Value {
        let bits = (items.len().max(2) - 1).ilog2() as u16 + 1;
        let last = items[items.len() - 1];
        let mut level: Vec<Value> = (0..1usize << bits).map(|k| items.get(k).copied().unwrap_or(last)).collect();
        for b in 0..bits {
            let sel = self.b.bit(index, b);
            level = level.chunks(2).map(|pair| self.b.select(sel, pair[1], pair[0])).collect();
        }
        level[0]
    }

    /// `x op y` wrapped to the operands' width, and whether the exact result is outside the
    /// type (`op` is `Add`, `Sub` or `Mul`), as Rust's `overflowing_*` give them.
    fn overflowing(&mut self, op: BinOp, x: Value, y: Value, signed: bool, span: Span) -> R<(Value, Value)> {
        let w = self.b.ty(x).width();
        Ok(match op {
            BinOp::Add | BinOp::Sub => {
                let add = op == BinOp::Add;
                let r = if add { self.b.add(x, y) } else { self.b.sub(x, y) };
                let over = if signed {
                    // The operands' signs agree (add) or differ (sub), and the result's sign
                    // is not x's.
                    let (sx, sy, sr) = (self.b.bit(x, w - 1), self.b.bit(y, w - 1), self.b.bit(r, w - 1));
                    let operands = self.b.xor(sx, sy);
                    let operands = if add { self.b.not(operands) } else { operands };
                    let flipped = self.b.xor(sx, sr);
                    self.b.and(operands, flipped)
                } else if add {
                    // A sum below an operand wrapped.
                    self.b.cmp(CmpOp::Ult, r, x)
                } else {
                    self.b.cmp(CmpOp::Ult, x, y)
                };
                (r, over)
            }
            _ => {
                // The whole product at twice the width: it overflowed when it differs from
                // the wrapped one widened back.
                if 2 * w > crate::ir::bits::MAX_WIDTH {
                    return Err(LowerError::new(
                        span,
                        format!(
                            "an overflow-checked multiplication of {w}-bit values needs a {}-bit product, more \
                             than the hardware's {}; multiply narrower values",
                            2 * w,
                            crate::ir::bits::MAX_WIDTH
                        ),
                    ));
                }
                let (xx, yy) = if signed {
                    (self.b.sext(x, 2 * w), self.b.sext(y, 2 * w))
                } else {
                    (self.b.zext(x, 2 * w), self.b.zext(y, 2 * w))
                };
                let wide = self.b.mul(xx, yy);
                let r = self.b.trunc(wide, w);
                let back = if signed { self.b.sext(r, 2 * w) } else { self.b.zext(r, 2 * w) };
                (r, self.b.cmp(CmpOp::Ne, back, wide))
            }
        })
    }

    fn binop(&mut self, op: BinOp, a: Value, b: Value, lty: &Ty, rhs: &Expr, span: Span) -> R<Value> {
        let s = is_signed(lty);
        let cmp = |signed: CmpOp, unsigned: CmpOp| if s { signed } else { unsigned };
        Ok(match op {
            BinOp::Add => self.b.add(a, b),
            BinOp::Sub => self.b.sub(a, b),
            BinOp::Mul => self.b.mul(a, b),
            BinOp::Div | BinOp::Rem => {
                let w = self.b.ty(a).width();
                let Some(d) = const_of(rhs).filter(|&d| d != 0 && !s && (d.is_power_of_two() || by_constant(w, d)))
                else {
                    return Err(LowerError::new(
                        span,
                        "division and remainder are supported only for unsigned values by a constant (only by a power \
                         of two when the value's width and the divisor's bits pass 126; write a shift or a mask \
                         otherwise)",
                    ));
                };
                if d.is_power_of_two() {
                    return Ok(if op == BinOp::Div {
                        let k = self.iconst(w, d.trailing_zeros() as u128);
                        self.b.lshr(a, k)
                    } else {
                        let m = self.iconst(w, d - 1);
                        self.b.and(a, m)
                    });
                }
                // Granlund and Montgomery's division by a constant: with s = ⌈log2 d⌉ and
                // m = ⌊2^(w+s) / d⌋ + 1 (w + 1 bits), q = (x · m) >> (w + s) for every w-bit x,
                // since m · d − 2^(w+s) ≤ d ≤ 2^s. One multiplier, no divider.
                let sh = 128 - (d - 1).leading_zeros() as u16;
                let m = (1u128 << (w + sh)) / d + 1;
                let pw = 2 * w + 1;
                let x = self.b.zext(a, pw);
                let mc = self.iconst(pw, m);
                let prod = self.b.mul(x, mc);
                let k = self.iconst(pw, (w + sh) as u128);
                let q = self.b.lshr(prod, k);
                let q = self.b.trunc(q, w);
                if op == BinOp::Div {
                    q
                } else {
                    let dc = self.iconst(w, d);
                    let qd = self.b.mul(q, dc);
                    self.b.sub(a, qd)
                }
            }
            BinOp::BitAnd => self.b.and(a, b),
            BinOp::BitOr => self.b.or(a, b),
            BinOp::BitXor => self.b.xor(a, b),
            BinOp::Shl | BinOp::Shr => {
                // As in a release build, the amount is taken modulo the width of a primitive
                // type (`wrapping_shl`); a constant amount below the width needs nothing.
                let w = self.b.ty(a).width();
                let primitive = matches!(lty, Ty::Int(i) if i.is_primitive());
                let small = const_of(rhs).is_some_and(|n| n < w as u128);
                let b = if primitive && !small && w.is_power_of_two() {
                    let bw = self.b.ty(b).width();
                    let m = self.iconst(bw, (w - 1) as u128);
                    self.b.and(b, m)
                } else {
                    b
                };
                match (op, s) {
                    (BinOp::Shl, _) => self.b.shl(a, b),
                    (_, true) => self.b.binary(crate::ir::BinaryOp::Ashr, a, b),
                    (_, false) => self.b.lshr(a, b),
                }
            }
            BinOp::Eq => self.b.eq(a, b),
            BinOp::Ne => self.b.ne(a, b),
            BinOp::Lt => self.b.cmp(cmp(CmpOp::Slt, CmpOp::Ult), a, b),
            BinOp::Le => self.b.cmp(cmp(CmpOp::Sle, CmpOp::Ule), a, b),
            BinOp::Gt => self.b.cmp(cmp(CmpOp::Sgt, CmpOp::Ugt), a, b),
            BinOp::Ge => self.b.cmp(cmp(CmpOp::Sge, CmpOp::Uge), a, b),
            BinOp::And => self.b.and(a, b),
            BinOp::Or => self.b.or(a, b),
        })
    }

    /// `a == b` for tuples, `Option`s and verdicts (`None == None` whatever the payload).
    fn val_eq(&mut self, a: &Val, b: &Val, ty: &Ty, span: Span) -> R<Value> {
        Ok(match (a, b) {
            (Val::Scalar(x), Val::Scalar(y)) => self.b.eq(*x, *y),
            (Val::Tuple(xs), Val::Tuple(ys)) if xs.len() == ys.len() => {
                let mut acc = self.b.bool_const(true);
                for (x, y) in xs.iter().zip(ys) {
                    let e = self.val_eq(x, y, ty, span)?;
                    acc = self.b.and(acc, e);
                }
                acc
            }
            (Val::Opt(f, x), Val::Opt(g, y)) => {
                let same_flag = self.b.eq(*f, *g);
                let inner = self.val_eq(x, y, ty, span)?;
                let none = self.b.not(*f);
                let payload = self.b.or(none, inner);
                self.b.and(same_flag, payload)
            }
            (Val::Res(f, xo, xe), Val::Res(g, yo, ye)) => {
                // Same variant, and the same value in the variant held.
                let same_flag = self.b.eq(*f, *g);
                let ok = self.val_eq(xo, yo, ty, span)?;
                let err = self.val_eq(xe, ye, ty, span)?;
                let payload = self.b.select(*f, ok, err);
                self.b.and(same_flag, payload)
            }
            (a @ (Val::Action(_) | Val::ActionData(_)), b @ (Val::Action(_) | Val::ActionData(_))) => {
                let (x, y) = (self.action_data(a.clone(), span)?, self.action_data(b.clone(), span)?);
                let mut acc = self.b.eq(x.tag, y.tag);
                for (tag, (p, q)) in
                    [(FORWARD, (x.port, y.port)), (MULTICAST, (x.mask, y.mask)), (DROP, (x.reason, y.reason))]
                {
                    // The operand counts only for its own kind.
                    let is = self.b.eq_imm(x.tag, tag as u64);
                    let not = self.b.not(is);
                    let same = self.b.eq(p, q);
                    let ok = self.b.or(not, same);
                    acc = self.b.and(acc, ok);
                }
                acc
            }
            _ => return Err(LowerError::new(span, format!("comparing values of type `{ty}` is not supported yet"))),
        })
    }

    fn variant(&mut self, e: &Expr, variant: &Variant, args: &[Expr]) -> R<Val> {
        let span = e.span;
        let mut vals = Vec::new();
        for a in args {
            match self.expr(a)? {
                Val::Never => return Ok(Val::Never),
                v => vals.push(v),
            }
        }
        Ok(match variant {
            Variant::Some => {
                let t = self.b.bool_const(true);
                Val::Opt(t, Box::new(vals.pop().unwrap_or_else(Val::unit)))
            }
            Variant::None => {
                let inner = match &e.ty {
                    Ty::Option(t) => (**t).clone(),
                    _ => Ty::unit(),
                };
                self.zero(&Ty::Option(Box::new(inner)), span)?
            }
            Variant::Action(name) => Val::Action(match *name {
                "Forward" => ActionExpr::Forward(scalar(&vals[0], span)?),
                "Multicast" => ActionExpr::Multicast(scalar(&vals[0], span)?),
                "Flood" => ActionExpr::Flood,
                "Reply" => ActionExpr::Reply,
                "Drop" => match &args[0].kind {
                    ExprKind::Variant { variant: Variant::DropReason(_, code), .. } => {
                        ActionExpr::Drop(drop_reason(*code, span)?)
                    }
                    _ => {
                        // A computed reason: data that may hold any reason.
                        let reason = scalar(&vals[0], span)?;
                        let (tag, port, mask) = (self.iconst(3, DROP as u128), self.iconst(8, 0), self.iconst(32, 0));
                        let possible = DropReason::ALL.iter().map(|r| (DROP, *r as u8)).collect();
                        return Ok(Val::ActionData(ActionData { tag, port, mask, reason, possible }));
                    }
                },
                other => return Err(LowerError::new(span, format!("`Action::{other}` is not supported yet"))),
            }),
            Variant::DropReason(_, code) => Val::Scalar(self.iconst(8, *code as u128)),
            Variant::Enum { value, .. } => {
                let w = self.width(&e.ty, span)?;
                Val::Scalar(self.iconst(w, *value))
            }
            Variant::Ok | Variant::Err => {
                let Ty::Result(t, err) = &e.ty else {
                    return Err(LowerError::new(span, "internal: `Ok`/`Err` of a non-`Result` type"));
                };
                let held = vals.pop().unwrap_or_else(Val::unit);
                if *variant == Variant::Ok {
                    let f = self.b.bool_const(true);
                    Val::Res(f, Box::new(held), Box::new(self.zero(err, span)?))
                } else {
                    let f = self.b.bool_const(false);
                    Val::Res(f, Box::new(self.zero(t, span)?), Box::new(held))
                }
            }
        })
    }

    // ------------------------------------------------------------------ the library

    fn addr(&mut self, e: &Expr) -> R<Option<Addr>> {
        if let Some(c) = const_of(e).filter(|c| *c <= u32::MAX as u128) {
            return Ok(Some(Addr::at(c as u32)));
        }
        Ok(self.sexpr(e)?.map(|v| Addr::dynamic(v, 0)))
    }

    /// An address as a `usize` value.
    fn addr_value(&mut self, a: Addr) -> Value {
        match a.base {
            None => self.iconst(64, a.offset as u128),
            Some(b) => {
                let b = self.b.resize(b, 64);
                if a.offset == 0 {
                    b
                } else {
                    self.b.add_imm(b, a.offset as u64)
                }
            }
        }
    }

    fn lib(&mut self, e: &Expr, op: &LibOp, args: &[Expr]) -> R<Val> {
        let span = e.span;
        // Header views keep a constant offset as a constant address.
        if let LibOp::View { .. } = op {
            if matches!(self.expr(&args[0])?, Val::Never) {
                return Ok(Val::Never);
            }
            return Ok(match self.addr(&args[1])? {
                Some(a) => Val::View(a),
                None => Val::Never,
            });
        }
        let mut vals = Vec::new();
        for a in args {
            match self.expr(a)? {
                Val::Never => return Ok(Val::Never),
                v => vals.push(v),
            }
        }
        let sc = |i: usize| -> R<Value> { scalar(&vals[i], args[i].span) };
        let ret_w = self.width(&e.ty, span).ok();
        let unsupported =
            |what: String| Err(LowerError::new(span, format!("{what} is not supported by the lowering yet")));
        let view_at = |v: &Val| -> R<Addr> {
            match v {
                Val::View(a) => Ok(*a),
                other => Err(LowerError::new(span, format!("internal: expected a header view, found {other:?}"))),
            }
        };
        let fld = |h: &str, f: &str| {
            field(h, f).ok_or_else(|| LowerError::new(span, format!("internal: no field {h}.{f} in the wire tables")))
        };
        Ok(match op {
            LibOp::View { .. } => unreachable!("handled above"),
            LibOp::Packet(m) => match *m {
                "len" => {
                    let n = self.b.pkt_len();
                    Val::Scalar(self.b.resize(n, ret_w.unwrap_or(64)))
                }
                "is_empty" => {
                    let n = self.b.pkt_len();
                    Val::Scalar(self.b.eq_imm(n, 0))
                }
                "window_size" => Val::Scalar(self.iconst(64, self.window as u128)),
                "set_len" => {
                    self.b.pkt_set_len(sc(1)?);
                    Val::unit()
                }
                "byte" => {
                    let a = match const_of(&args[1]).filter(|c| *c <= u32::MAX as u128) {
                        Some(c) => Addr::at(c as u32),
                        None => Addr::dynamic(sc(1)?, 0),
                    };
                    Val::Scalar(self.b.pkt_read(a, 1))
                }
                "set_byte" => {
                    let a = match const_of(&args[1]).filter(|c| *c <= u32::MAX as u128) {
                        Some(c) => Addr::at(c as u32),
                        None => Addr::dynamic(sc(1)?, 0),
                    };
                    self.b.pkt_write(a, sc(2)?);
                    Val::unit()
                }
                "ones_sum" => Val::Scalar(self.b.ones_sum(sc(1)?, sc(2)?)),
                "l3" => {
                    // Packet::l3: past up to two 802.1Q tags (a constant bound, so no loop).
                    let eth_type = fld("ethernet", "ethertype")?;
                    let vlan_type = fld("vlan", "ethertype")?;
                    let eth_len = crate::ir::header("ethernet").map_or(14, |h| h.len) as u32;
                    let vlan_len = crate::ir::header("vlan").map_or(4, |h| h.len) as u32;
                    let t0 = self.b.read_field(0, eth_type);
                    let t1 = self.b.read_field(eth_len, vlan_type);
                    let t2 = self.b.read_field(eth_len + vlan_len, vlan_type);
                    let c0 = self.b.eq_imm(t0, 0x8100);
                    let c1 = self.b.eq_imm(t1, 0x8100);
                    let c1 = self.b.and(c0, c1);
                    let ty = self.b.select(c0, t1, t0);
                    let ty = self.b.select(c1, t2, ty);
                    let (o0, o1, o2) = (
                        self.iconst(64, eth_len as u128),
                        self.iconst(64, (eth_len + vlan_len) as u128),
                        self.iconst(64, (eth_len + 2 * vlan_len) as u128),
                    );
                    let off = self.b.select(c0, o1, o0);
                    let off = self.b.select(c1, o2, off);
                    Val::Tuple(vec![Val::Scalar(off), Val::Scalar(ty)])
                }
                other => return unsupported(format!("`Packet::{other}`")),
            },
            LibOp::GetField { header, field: name } => {
                let at = view_at(&vals[0])?;
                Val::Scalar(self.b.read_field(at, fld(header, name)?))
            }
            LibOp::SetField { header, field: name } => {
                let at = view_at(&vals[0])?;
                self.b.write_field(at, fld(header, name)?, sc(1)?);
                Val::unit()
            }
            LibOp::ViewMethod { header, method } => {
                let at = view_at(&vals[0])?;
                match (*header, *method) {
                    ("ipv4", "header_len") | ("tcp", "header_len") => {
                        let f = if *header == "ipv4" { "ihl" } else { "data_offset" };
                        Val::Scalar(self.header_len(at, fld(header, f)?))
                    }
                    ("ipv4", "checksum_ok") => {
                        let len = self.header_len(at, fld("ipv4", "ihl")?);
                        let start = self.addr_value(at);
                        let end = self.b.add(start, len);
                        let sum = self.b.window_sum(start, end);
                        let folded = self.b.csum_fold(sum);
                        Val::Scalar(self.b.eq_imm(folded, 0xffff))
                    }
                    ("icmpv4", "checksum_ok") => {
                        let start = self.addr_value(at);
                        let end = self.iconst(64, self.window as u128);
                        let sum = self.b.window_sum(start, end);
                        let folded = self.b.csum_fold(sum);
                        Val::Scalar(self.b.eq_imm(folded, 0xffff))
                    }
                    ("arp", "is_ethernet_ipv4") => {
                        let mut acc = None;
                        for (f, want) in [("htype", 1u64), ("ptype", 0x0800), ("hlen", 6), ("plen", 4)] {
                            let x = self.b.read_field(at, fld("arp", f)?);
                            let t = self.b.eq_imm(x, want);
                            acc = Some(match acc {
                                Some(a) => self.b.and(a, t),
                                None => t,
                            });
                        }
                        Val::Scalar(acc.expect("four tests"))
                    }
                    ("ipv4", "fill_checksum") => {
                        // checksum::ipv4_header over the header bytes in the window: their sum
                        // with the checksum field taken as zero (when the bytes reach it).
                        let len = self.header_len(at, fld("ipv4", "ihl")?);
                        let start = self.addr_value(at);
                        let end = self.b.add(start, len);
                        let sum = self.b.window_sum(start, end);
                        let avail = self.avail(start);
                        let twelve = self.iconst(64, 12);
                        let c1 = self.b.uge(len, twelve);
                        let c2 = self.b.uge(avail, twelve);
                        let has = self.b.and(c1, c2);
                        let ck = fld("ipv4", "checksum")?;
                        let old = self.b.read_field(at, ck);
                        let old = self.b.zext(old, 32);
                        let ffff = self.iconst(32, 0xffff);
                        let minus = self.b.sub(ffff, old);
                        let zero = self.iconst(32, 0);
                        let extra = self.b.select(has, minus, zero);
                        let acc = self.b.add(sum, extra);
                        let folded = self.b.csum_fold(acc);
                        let c = self.b.not(folded);
                        self.b.write_field(at, ck, c);
                        Val::unit()
                    }
                    ("icmpv4", "fill_checksum") => {
                        let ck = fld("icmpv4", "checksum")?;
                        let zero = self.iconst(16, 0);
                        self.b.write_field(at, ck, zero);
                        let start = self.addr_value(at);
                        let end = self.iconst(64, self.window as u128);
                        let sum = self.b.window_sum(start, end);
                        let folded = self.b.csum_fold(sum);
                        let c = self.b.not(folded);
                        self.b.write_field(at, ck, c);
                        Val::unit()
                    }
                    ("udp" | "tcp", "checksum_ok" | "fill_checksum") => {
                        let (proto, at_field) = if *header == "udp" { (17u8, 6u32) } else { (6, 16) };
                        let (src, dst) = (sc(1)?, sc(2)?);
                        self.transport(
                            at,
                            src,
                            dst,
                            proto,
                            at_field,
                            *method == "fill_checksum",
                            fld(header, "checksum")?,
                        )
                    }
                    (h, m) => return unsupported(format!("`{h}::{m}`")),
                }
            }
            LibOp::State { field: name, element, method, .. } => {
                let s = self.state(name, span)?;
                self.state_call(s, *element, method, &vals, args, &e.ty, span)?
            }
            LibOp::Probe(name) => {
                let s = self.state(name, span)?;
                self.b.reg_set(s, sc(0)?);
                Val::unit()
            }
            LibOp::Count(name) => {
                let s = self.state(name, span)?;
                self.b.counter_inc(s);
                Val::unit()
            }
            LibOp::Checksum(name) => match *name {
                "fold" => {
                    let x = sc(0)?;
                    Val::Scalar(self.b.csum_fold(x))
                }
                "update16" => Val::Scalar(self.b.csum_update16(sc(0)?, sc(1)?, sc(2)?)),
                "update32" => {
                    let (c, old, new) = (sc(0)?, sc(1)?, sc(2)?);
                    let (oh, nh) = (self.b.slice(old, 16, 16), self.b.slice(new, 16, 16));
                    let c = self.b.csum_update16(c, oh, nh);
                    let (ol, nl) = (self.b.slice(old, 0, 16), self.b.slice(new, 0, 16));
                    Val::Scalar(self.b.csum_update16(c, ol, nl))
                }
                "pseudo_header" => {
                    let (src, dst, proto, len) = (sc(0)?, sc(1)?, sc(2)?, sc(3)?);
                    Val::Scalar(self.pseudo(src, dst, proto, len))
                }
                other => return unsupported(format!("`checksum::{other}`")),
            },
            LibOp::Method { ty, method } => self.method(ty, method, &vals, args, &e.ty, span)?,
            LibOp::Assoc { ty, name } => match (ty.as_str(), *name) {
                ("Ipv4Addr", "new") => {
                    let octets = (0..4).map(sc).collect::<R<Vec<Value>>>()?;
                    Val::Scalar(self.concat_all(&octets))
                }
                ("PortMask", "single") => {
                    let one = self.iconst(32, 1);
                    Val::Scalar(self.b.shl(one, sc(0)?))
                }
                ("PortMask", "all") => {
                    let one = self.iconst(32, 1);
                    let sh = self.b.shl(one, sc(0)?);
                    let one = self.iconst(32, 1);
                    Val::Scalar(self.b.sub(sh, one))
                }
                // Tuple constructors: the value is the field's.
                ("PortMask" | "Ipv4Addr" | "Mac", "") => Val::Scalar(sc(0)?),
                ("Bytes", "default") => {
                    let w = self.width(&e.ty, span)?;
                    Val::Scalar(self.iconst(w, 0))
                }
                (_, "from_be_bytes" | "from_le_bytes") => {
                    let Val::Tuple(items) = &vals[0] else {
                        return Err(LowerError::new(span, "internal: bytes that are not an array"));
                    };
                    let mut bytes = items.iter().map(|v| scalar(v, span)).collect::<R<Vec<Value>>>()?;
                    if *name == "from_le_bytes" {
                        bytes.reverse();
                    }
                    Val::Scalar(self.concat_all(&bytes))
                }
                (_, "new") | (_, "masked_new") => {
                    let w = self.width(&e.ty, span)?;
                    Val::Scalar(self.b.resize(sc(0)?, w))
                }
                (t, n) => return unsupported(format!("`{t}::{n}`")),
            },
        })
    }

    /// Bytes of the window from `start` (a `usize`) on: `min(len, window) - start`, or 0.
    fn avail(&mut self, start: Value) -> Value {
        let len = self.b.pkt_len();
        let len = self.b.zext(len, 64);
        let w = self.iconst(64, self.window as u128);
        let short = self.b.ult(len, w);
        let lim = self.b.select(short, len, w);
        let past = self.b.ugt(lim, start);
        let rest = self.b.sub(lim, start);
        let zero = self.iconst(64, 0);
        self.b.select(past, rest, zero)
    }

    /// Of byte `i` (a `usize`) of a `Bytes` value: whether it is one (`i < N`), and its lowest
    /// bit's position, `8 × (N − 1 − i)` (byte 0 is the most significant, as `Bits::write_be`).
    fn byte_at(&mut self, bytes: Value, i: Value) -> (Value, Value) {
        let n = (self.b.ty(bytes).width() / 8) as u128;
        let count = self.iconst(64, n);
        let in_range = self.b.ult(i, count);
        let last = self.iconst(64, n - 1);
        let from_end = self.b.sub(last, i);
        let eight = self.iconst(64, 8);
        (in_range, self.b.mul(from_end, eight))
    }

    /// `checksum::pseudo_header(src, dst, proto, len)`, `u32`.
    fn pseudo(&mut self, src: Value, dst: Value, proto: Value, len: Value) -> Value {
        let mut parts = Vec::new();
        for a in [src, dst] {
            let hi = self.b.slice(a, 16, 16);
            let lo = self.b.slice(a, 0, 16);
            parts.push(self.b.zext(hi, 32));
            parts.push(self.b.zext(lo, 32));
        }
        let p = self.b.resize(proto, 32);
        parts.push(p);
        let l = self.b.resize(len, 32);
        parts.push(l);
        let mut acc = parts[0];
        for p in &parts[1..] {
            acc = self.b.add(acc, *p);
        }
        acc
    }

    /// `checksum::transport_ok` / `transport` + `set_checksum` over a UDP or TCP view (the
    /// segment is the window from the view on).
    #[allow(clippy::too_many_arguments)]
    fn transport(
        &mut self,
        at: Addr,
        src: Value,
        dst: Value,
        proto: u8,
        field_at: u32,
        fill: bool,
        ck: &'static emu_core::wire::Field,
    ) -> Val {
        let start = self.addr_value(at);
        let avail = self.avail(start);
        let seg_len = self.b.trunc(avail, 16);
        let p = self.iconst(8, proto as u128);
        let pseudo = self.pseudo(src, dst, p, seg_len);
        let end = self.iconst(64, self.window as u128);
        let sum = self.b.window_sum(start, end);
        let acc = self.b.add(pseudo, sum);
        let need = self.iconst(64, field_at as u128 + 2);
        let has_field = self.b.uge(avail, need);
        let old = self.b.read_field(at, ck);
        if fill {
            let old32 = self.b.zext(old, 32);
            let ffff = self.iconst(32, 0xffff);
            let minus = self.b.sub(ffff, old32);
            let zero = self.iconst(32, 0);
            let extra = self.b.select(has_field, minus, zero);
            let acc = self.b.add(acc, extra);
            let folded = self.b.csum_fold(acc);
            let mut c = self.b.not(folded);
            if proto == 17 {
                let is0 = self.b.eq_imm(c, 0);
                let ones = self.iconst(16, 0xffff);
                c = self.b.select(is0, ones, c);
            }
            self.b.write_field(at, ck, c);
            Val::unit()
        } else {
            let folded = self.b.csum_fold(acc);
            let ok = self.b.eq_imm(folded, 0xffff);
            if proto == 17 {
                // A UDP checksum of 0 (present in the segment) means "not computed".
                let zero = self.b.eq_imm(old, 0);
                let unset = self.b.and(has_field, zero);
                Val::Scalar(self.b.or(unset, ok))
            } else {
                Val::Scalar(ok)
            }
        }
    }

    /// `ihl`/`data_offset` × 4 as a `usize`.
    fn header_len(&mut self, at: Addr, f: &emu_core::wire::Field) -> Value {
        let x = self.b.read_field(at, f);
        let x = self.b.zext(x, 64);
        self.b.shl_imm(x, 2)
    }

    #[allow(clippy::too_many_arguments)]
    fn state_call(
        &mut self,
        s: StateId,
        element: ElementKind,
        method: &str,
        vals: &[Val],
        args: &[Expr],
        ty: &Ty,
        span: Span,
    ) -> R<Val> {
        // `args` are the method's arguments only (no receiver). A tuple key or value is one
        // value to the element, and its results are split back into the tuples `ty` has.
        let packed: Vec<Val> = vals.iter().map(|v| self.pack(v)).collect();
        let a = |i: usize| scalar(&packed[i], args[i].span);
        let w = self.width(ty, span).ok();
        let result = self.state_call_packed(s, element, method, a, w, span)?;
        self.unpack(result, ty, span)
    }

    /// `parts` as one value, the first the most significant.
    fn concat_all(&mut self, parts: &[Value]) -> Value {
        parts[1..].iter().fold(parts[0], |acc, &x| self.b.concat(acc, x))
    }

    /// `x` cut into fields of `widths` bits, the first the most significant (what
    /// [`Self::concat_all`] puts together).
    fn split(&mut self, x: Value, widths: &[u16]) -> Vec<Value> {
        let mut at: u16 = widths.iter().sum();
        widths
            .iter()
            .map(|&w| {
                at -= w;
                self.b.slice(x, at, w)
            })
            .collect()
    }

    /// A tuple of values as one: the elements' bits concatenated, the first the most
    /// significant (as `emu::Bits` lays out a tuple); anything else as it is.
    fn pack(&mut self, v: &Val) -> Val {
        match v {
            Val::Tuple(items) if !items.is_empty() => {
                let parts: Vec<Val> = items.iter().map(|x| self.pack(x)).collect();
                let scalars: Option<Vec<Value>> =
                    parts.iter().map(|p| if let Val::Scalar(x) = p { Some(*x) } else { None }).collect();
                match scalars {
                    Some(xs) => Val::Scalar(self.concat_all(&xs)),
                    None => v.clone(),
                }
            }
            other => other.clone(),
        }
    }

    /// `v` in the shape of `ty`: a value of a tuple type, held as one, split into its elements.
    fn unpack(&mut self, v: Val, ty: &Ty, span: Span) -> R<Val> {
        Ok(match (v, ty) {
            (Val::Scalar(x), Ty::Tuple(_) | Ty::Struct(..)) if !fields_of(ty).is_empty() => {
                let types = fields_of(ty);
                let widths = types.iter().map(|t| self.width(t, span)).collect::<R<Vec<u16>>>()?;
                let parts = self.split(x, &widths);
                let items = parts.into_iter().zip(types).map(|(p, t)| self.unpack(Val::Scalar(p), t, span));
                Val::Tuple(items.collect::<R<Vec<Val>>>()?)
            }
            (Val::Tuple(items), Ty::Tuple(_) | Ty::Struct(..)) if items.len() == fields_of(ty).len() => Val::Tuple(
                items.into_iter().zip(fields_of(ty)).map(|(x, t)| self.unpack(x, t, span)).collect::<R<Vec<Val>>>()?,
            ),
            (Val::Opt(f, x), Ty::Option(t)) => Val::Opt(f, Box::new(self.unpack(*x, t, span)?)),
            (Val::Res(f, x, y), Ty::Result(t, e)) => {
                Val::Res(f, Box::new(self.unpack(*x, t, span)?), Box::new(self.unpack(*y, e, span)?))
            }
            (v, _) => v,
        })
    }

    fn state_call_packed(
        &mut self,
        s: StateId,
        element: ElementKind,
        method: &str,
        a: impl Fn(usize) -> R<Value>,
        w: Option<u16>,
        span: Span,
    ) -> R<Val> {
        Ok(match (element, method) {
            (ElementKind::Counter, "inc") => {
                self.b.counter_inc(s);
                Val::unit()
            }
            (ElementKind::Counter, "add") => {
                self.b.counter_add(s, a(0)?);
                Val::unit()
            }
            (ElementKind::Counter, "set") => {
                self.b.counter_set(s, a(0)?);
                Val::unit()
            }
            (ElementKind::Counter, "reset") => {
                let z = self.iconst(64, 0);
                self.b.counter_set(s, z);
                Val::unit()
            }
            (ElementKind::Counter, "get") => {
                let x = self.b.counter_get(s);
                Val::Scalar(self.b.resize(x, w.unwrap_or(64)))
            }
            (ElementKind::Register, "get") => Val::Scalar(self.b.reg_get(s)),
            (ElementKind::Register, "set") => {
                self.b.reg_set(s, a(0)?);
                Val::unit()
            }
            (ElementKind::Array, "get") => Val::Scalar(self.b.array_get(s, a(0)?)),
            (ElementKind::Array, "set") => Val::Scalar(self.b.array_set(s, a(0)?, a(1)?)),
            (ElementKind::Array, "len") | (_, "capacity") => {
                let n = self.b.func().states[s].kind.size().unwrap_or(0);
                Val::Scalar(self.iconst(64, n as u128))
            }
            (ElementKind::Array, "is_empty") => {
                let n = match self.b.func().states[s].kind {
                    crate::ir::StateKind::Array { size, .. } => size,
                    _ => 0,
                };
                Val::Scalar(self.b.bool_const(n == 0))
            }
            (ElementKind::Cam, "get") => {
                let m = self.b.cam_get(s, a(0)?);
                Val::Opt(m.valid, Box::new(Val::Scalar(m.value)))
            }
            (ElementKind::Cam, "contains") => Val::Scalar(self.b.cam_contains(s, a(0)?)),
            (ElementKind::Cam, "insert") => {
                let ev = self.b.cam_insert(s, a(0)?, a(1)?);
                Val::Opt(ev.valid, Box::new(Val::Tuple(vec![Val::Scalar(ev.key), Val::Scalar(ev.value)])))
            }
            (ElementKind::Cam, "remove") => {
                let m = self.b.cam_remove(s, a(0)?);
                Val::Opt(m.valid, Box::new(Val::Scalar(m.value)))
            }
            (ElementKind::Lru | ElementKind::HashTable | ElementKind::Tcam, _)
            | (ElementKind::Queue, "pop" | "peek") => {
                let maybe = |m: crate::ir::Maybe| Val::Opt(m.valid, Box::new(Val::Scalar(m.value)));
                let evicted = |e: crate::ir::Evicted| {
                    Val::Opt(e.valid, Box::new(Val::Tuple(vec![Val::Scalar(e.key), Val::Scalar(e.value)])))
                };
                match (element, method) {
                    (ElementKind::Lru, "get") => maybe(self.b.lru_get(s, a(0)?)),
                    (ElementKind::Lru, "peek") => maybe(self.b.lru_peek(s, a(0)?)),
                    (ElementKind::Lru, "contains") => Val::Scalar(self.b.lru_contains(s, a(0)?)),
                    (ElementKind::Lru, "insert") => evicted(self.b.lru_insert(s, a(0)?, a(1)?)),
                    (ElementKind::Lru, "remove") => maybe(self.b.lru_remove(s, a(0)?)),
                    (ElementKind::HashTable, "get") => maybe(self.b.hash_get(s, a(0)?)),
                    (ElementKind::HashTable, "contains") => Val::Scalar(self.b.hash_contains(s, a(0)?)),
                    (ElementKind::HashTable, "insert") => evicted(self.b.hash_insert(s, a(0)?, a(1)?)),
                    (ElementKind::HashTable, "remove") => maybe(self.b.hash_remove(s, a(0)?)),
                    (ElementKind::Tcam, "lookup") => maybe(self.b.tcam_lookup(s, a(0)?)),
                    (ElementKind::Tcam, "lookup_slot") => {
                        let m = self.b.tcam_lookup_slot(s, a(0)?);
                        let slot = self.b.zext(m.value, 64);
                        Val::Opt(m.valid, Box::new(Val::Scalar(slot)))
                    }
                    (ElementKind::Tcam, "set") => Val::Scalar(self.b.tcam_set(s, a(0)?, a(1)?, a(2)?, a(3)?)),
                    (ElementKind::Tcam, "clear") => {
                        self.b.tcam_clear(s, a(0)?);
                        Val::unit()
                    }
                    (ElementKind::Queue, "pop") => maybe(self.b.queue_pop(s)),
                    (ElementKind::Queue, "peek") => maybe(self.b.queue_peek(s)),
                    (el, m) => {
                        return Err(LowerError::new(
                            span,
                            format!("`{}::{m}` is not supported by the lowering yet", el.name()),
                        ))
                    }
                }
            }
            (ElementKind::Queue, "push") => {
                // `Result<(), T>`: `Ok(())`, or `Err(v)` giving the pushed value back.
                let v = a(0)?;
                let ok = self.b.queue_push(s, v);
                Val::Res(ok, Box::new(Val::unit()), Box::new(Val::Scalar(v)))
            }
            (ElementKind::Queue, "len") => {
                let n = self.b.queue_len(s);
                Val::Scalar(self.b.resize(n, w.unwrap_or(64)))
            }
            (ElementKind::Queue, "is_empty") => Val::Scalar(self.b.queue_is_empty(s)),
            (ElementKind::Queue, "is_full") => Val::Scalar(self.b.queue_is_full(s)),
            (el, m) => {
                return Err(LowerError::new(span, format!("`{}::{m}` is not supported by the lowering yet", el.name())))
            }
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn method(&mut self, ty: &str, method: &str, vals: &[Val], args: &[Expr], ret: &Ty, span: Span) -> R<Val> {
        let sc = |i: usize| scalar(&vals[i], args[i].span);
        let signed = is_signed(&args[0].ty);
        Ok(match (ty, method) {
            ("Mac", "is_multicast") => Val::Scalar(self.b.bit(sc(0)?, 40)),
            ("Bytes", "byte") => {
                let (bytes, i) = (sc(0)?, sc(1)?);
                let (in_range, at) = self.byte_at(bytes, i);
                let shifted = self.b.lshr(bytes, at);
                let byte = self.b.trunc(shifted, 8);
                let zero = self.iconst(8, 0);
                Val::Scalar(self.b.select(in_range, byte, zero))
            }
            ("Bytes", "set_byte") => {
                let (bytes, i, v) = (sc(0)?, sc(1)?, sc(2)?);
                let ExprKind::Local(id) = &args[0].kind else {
                    return Err(LowerError::new(span, "internal: `set_byte` on a value that is not a local"));
                };
                let w = self.b.ty(bytes).width();
                let (in_range, at) = self.byte_at(bytes, i);
                let ff = self.iconst(w, 0xff);
                let mask = self.b.shl(ff, at);
                let keep = self.b.not(mask);
                let kept = self.b.and(bytes, keep);
                let wide = self.b.zext(v, w);
                let put = self.b.shl(wide, at);
                let set = self.b.or(kept, put);
                let new = self.b.select(in_range, set, bytes);
                self.assign(&Place::Local(*id), None, Val::Scalar(new), &args[0], span)?;
                Val::unit()
            }
            ("Mac", "is_broadcast") => {
                let x = sc(0)?;
                let ones = self.b.constant(BitVec::ones(48));
                Val::Scalar(self.b.eq(x, ones))
            }
            ("PortMask", "contains") => {
                let (m, p) = (sc(0)?, sc(1)?);
                let sh = self.b.lshr(m, p);
                Val::Scalar(self.b.bit(sh, 0))
            }
            ("PortMask", "is_empty") => {
                let m = sc(0)?;
                Val::Scalar(self.b.eq_imm(m, 0))
            }
            ("Option", "is_some" | "is_none") => {
                let Val::Opt(valid, _) = &vals[0] else {
                    return Err(LowerError::new(span, "internal: `Option` method on a non-`Option`"));
                };
                Val::Scalar(if method == "is_some" { *valid } else { self.b.not(*valid) })
            }
            ("Result", "is_ok" | "is_err") => {
                let Val::Res(ok, ..) = &vals[0] else {
                    return Err(LowerError::new(span, "internal: `Result` method on a non-`Result`"));
                };
                Val::Scalar(if method == "is_ok" { *ok } else { self.b.not(*ok) })
            }
            ("Option", "unwrap_or") => {
                let Val::Opt(valid, inner) = &vals[0] else {
                    return Err(LowerError::new(span, "internal: `Option` method on a non-`Option`"));
                };
                self.select_val(*valid, inner, &vals[1], span)?
            }
            (_, "to_be_bytes" | "to_le_bytes") => {
                let x = sc(0)?;
                let n = self.b.ty(x).width() / 8;
                let mut bytes = self.split(x, &vec![8; n as usize]);
                if method == "to_le_bytes" {
                    bytes.reverse();
                }
                Val::Tuple(bytes.into_iter().map(Val::Scalar).collect())
            }
            (_, "wrapping_add") => Val::Scalar(self.b.add(sc(0)?, sc(1)?)),
            (_, "wrapping_sub") => Val::Scalar(self.b.sub(sc(0)?, sc(1)?)),
            (_, "wrapping_mul") => Val::Scalar(self.b.mul(sc(0)?, sc(1)?)),
            (_, "saturating_add" | "saturating_sub") => {
                let (x, y) = (sc(0)?, sc(1)?);
                let add = method == "saturating_add";
                let w = self.b.ty(x).width();
                let (r, over) = self.overflowing(arith_op(method), x, y, signed, span)?;
                Val::Scalar(if signed {
                    // Past a bound on x's side: below the minimum when x is negative.
                    let sx = self.b.bit(x, w - 1);
                    let max = self.iconst(w, (1u128 << (w - 1)) - 1);
                    let min = self.iconst(w, 1u128 << (w - 1));
                    let bound = self.b.select(sx, min, max);
                    self.b.select(over, bound, r)
                } else {
                    let bound = if add { u128::MAX >> (128 - w.min(128)) } else { 0 };
                    let bound = self.iconst(w, bound);
                    self.b.select(over, bound, r)
                })
            }
            (_, "checked_add" | "checked_sub" | "checked_mul") => {
                let (r, over) = self.overflowing(arith_op(method), sc(0)?, sc(1)?, signed, span)?;
                // An `Option`'s value is zero when it is `None`.
                let w = self.b.ty(r).width();
                let zero = self.iconst(w, 0);
                let value = self.b.select(over, zero, r);
                Val::Opt(self.b.not(over), Box::new(Val::Scalar(value)))
            }
            (_, "overflowing_add" | "overflowing_sub" | "overflowing_mul") => {
                let (r, over) = self.overflowing(arith_op(method), sc(0)?, sc(1)?, signed, span)?;
                Val::Tuple(vec![Val::Scalar(r), Val::Scalar(over)])
            }
            (_, "value" | "as_u8" | "as_u16" | "as_u32" | "as_u64" | "as_u128" | "as_usize") if !signed => {
                let w = self.width(ret, span)?;
                Val::Scalar(self.b.resize(sc(0)?, w))
            }
            (_, "min" | "max") => {
                let (a, b) = (sc(0)?, sc(1)?);
                let lt = self.b.cmp(if signed { CmpOp::Slt } else { CmpOp::Ult }, a, b);
                Val::Scalar(if method == "min" { self.b.select(lt, a, b) } else { self.b.select(lt, b, a) })
            }
            (_, "rotate_left" | "rotate_right") if const_of(&args[1]).is_some() => {
                let x = sc(0)?;
                let w = self.b.ty(x).width();
                let n = (const_of(&args[1]).unwrap() % w as u128) as u16;
                let n = if method == "rotate_right" { (w - n) % w } else { n };
                if n == 0 {
                    Val::Scalar(x)
                } else {
                    let hi = self.b.slice(x, 0, w - n);
                    let lo = self.b.slice(x, w - n, n);
                    Val::Scalar(self.b.concat(hi, lo))
                }
            }
            (_, "rotate_left" | "rotate_right") => {
                let (x, n) = (sc(0)?, sc(1)?);
                let w = self.b.ty(x).width();
                if !w.is_power_of_two() {
                    return Err(LowerError::new(
                        span,
                        format!("rotating a `u{w}` by a computed amount is not supported yet (rotate by a constant)"),
                    ));
                }
                // n mod w, then x << k | x >> (w - k) (a shift by w gives 0).
                let n = self.b.resize(n, 16);
                let mask = self.iconst(16, (w - 1) as u128);
                let k = self.b.and(n, mask);
                let wc = self.iconst(16, w as u128);
                let back = self.b.sub(wc, k);
                let (l, r) = if method == "rotate_left" { (k, back) } else { (back, k) };
                let hi = self.b.shl(x, l);
                let lo = self.b.lshr(x, r);
                Val::Scalar(self.b.or(hi, lo))
            }
            (_, "count_ones" | "leading_zeros" | "trailing_zeros") | ("PortMask", "count") => {
                let x = sc(0)?;
                let w = self.b.ty(x).width();
                let rw = self.width(ret, span)?;
                let mut acc = self.iconst(rw, if method == "count_ones" || method == "count" { 0 } else { w as u128 });
                for i in 0..w {
                    let bit = self.b.bit(x, i);
                    acc = match method {
                        "count_ones" | "count" => {
                            let one = self.b.zext(bit, rw);
                            self.b.add(acc, one)
                        }
                        // The highest set bit wins: later (higher) bits overwrite.
                        "leading_zeros" => {
                            let v = self.iconst(rw, (w - 1 - i) as u128);
                            self.b.select(bit, v, acc)
                        }
                        // The lowest set bit wins: scan from the top down.
                        _ => {
                            let j = w - 1 - i;
                            let bit = self.b.bit(x, j);
                            let v = self.iconst(rw, j as u128);
                            self.b.select(bit, v, acc)
                        }
                    };
                }
                Val::Scalar(acc)
            }
            (_, "swap_bytes") => {
                let x = sc(0)?;
                let w = self.b.ty(x).width();
                if !w.is_multiple_of(8) {
                    return Err(LowerError::new(span, "`swap_bytes` of a width that is not whole bytes"));
                }
                let bytes: Vec<Value> = (0..w / 8).map(|i| self.b.slice(x, 8 * i, 8)).collect();
                Val::Scalar(self.concat_all(&bytes))
            }
            (t, m) => return Err(LowerError::new(span, format!("`{t}::{m}` is not supported by the lowering yet"))),
        })
    }

    fn select_val(&mut self, c: Value, a: &Val, b: &Val, span: Span) -> R<Val> {
        Ok(match (a, b) {
            (Val::Scalar(x), Val::Scalar(y)) => Val::Scalar(self.b.select(c, *x, *y)),
            (Val::Tuple(xs), Val::Tuple(ys)) if xs.len() == ys.len() => {
                Val::Tuple(xs.iter().zip(ys).map(|(x, y)| self.select_val(c, x, y, span)).collect::<R<_>>()?)
            }
            (Val::Opt(f, x), Val::Opt(g, y)) => {
                let v = self.b.select(c, *f, *g);
                Val::Opt(v, Box::new(self.select_val(c, x, y, span)?))
            }
            (Val::Res(f, xo, xe), Val::Res(g, yo, ye)) => {
                let v = self.b.select(c, *f, *g);
                let o = self.select_val(c, xo, yo, span)?;
                Val::Res(v, Box::new(o), Box::new(self.select_val(c, xe, ye, span)?))
            }
            _ => return Err(LowerError::new(span, "selecting between these values is not supported yet")),
        })
    }
}

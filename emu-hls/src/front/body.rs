//! Checking and typing function bodies.
//!
//! Types are inferred locally, function by function: every unsuffixed integer literal (and
//! `None`) gets a type variable, which the places it meets bind — the other operand of an
//! operator, a `let` annotation, a parameter of a call, a field of a header, the return type.
//! A variable still unbound when the function is done is a width that cannot be known, and an
//! error at the literal.

use super::ast::*;
use super::check::{heap, int_type, strip_prefix, Cx, FnKey, TypeCtx, FLOAT, MAX_ARRAY, STRINGS, VEC};
use super::error::Error;
use super::library::{arbitrary_stand_in, view_of, Method, Sig, CHECKSUM_ON_SLICES};
use proc_macro2::Span;
use quote::ToTokens;
use std::collections::{HashMap, HashSet};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;

/// Bytes every frame has when the NF sees it: every target drops runts (`check_frame`).
const GUARANTEED_BYTES: u128 = 14;

struct Scope {
    names: Vec<(String, LocalId)>,
    aliases: Vec<Alias>,
}

struct Alias {
    field: String,
    mutable: bool,
    name: String,
}

#[derive(Clone)]
enum Origin {
    /// An unsuffixed integer literal, with its text and value.
    Literal { start: Span, end: Span, text: String, value: u128 },
    /// `None`.
    None { start: Span, end: Span },
}

struct Var {
    bound: Option<Ty>,
    /// An integer literal's: only a primitive integer type can bind it.
    int: bool,
    origin: Option<Origin>,
}

/// Checks one function.
pub(crate) struct FnChecker<'c, 'a> {
    cx: &'c mut Cx<'a>,
    locals: Vec<Local>,
    scopes: Vec<Scope>,
    vars: Vec<Var>,
    reported: HashSet<u32>,
    ret: Ty,
    receiver: Option<bool>,
    loops: u32,
    calls: Vec<(usize, Span)>,
    /// The largest value of a loop variable over a range, so an index by it into a constant
    /// array is known to stay inside.
    maxima: HashMap<LocalId, u128>,
}

fn mk(kind: ExprKind, ty: Ty, span: Span) -> Expr {
    Expr { kind, ty, span }
}

fn is_self(e: &syn::Expr) -> bool {
    matches!(e, syn::Expr::Path(p) if p.qself.is_none() && p.path.is_ident("self"))
}

/// The tighter of two upper bounds, either of which may be unknown.
fn tighter(a: Option<u128>, b: Option<u128>) -> Option<u128> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `e` without its parentheses.
fn strip_parens(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip_parens(&p.expr),
        syn::Expr::Group(g) => strip_parens(&g.expr),
        other => other,
    }
}

/// `self.NAME` → `NAME`.
fn self_field(e: &syn::Expr) -> Option<String> {
    match e {
        syn::Expr::Field(f) if is_self(&f.base) => match &f.member {
            syn::Member::Named(n) => Some(n.to_string()),
            syn::Member::Unnamed(_) => None,
        },
        syn::Expr::Paren(p) => self_field(&p.expr),
        _ => None,
    }
}

fn path_segments(p: &syn::Path) -> Vec<String> {
    p.segments.iter().map(|s| s.ident.to_string()).collect()
}

fn unit_block(span: Span) -> Block {
    Block { stmts: Vec::new(), tail: None, ty: Ty::unit(), span }
}

/// Folds an expression of constants to its value.
pub(crate) fn fold(e: &Expr) -> Option<u128> {
    match &e.kind {
        ExprKind::Int(v) | ExprKind::Const { value: v, .. } => Some(*v),
        ExprKind::Bool(b) => Some(*b as u128),
        ExprKind::Cast(a) => fold(a),
        ExprKind::Unary { op: UnOp::Not, arg } => fold(arg).map(|v| !v),
        ExprKind::Unary { op: UnOp::Neg, arg } => fold(arg).map(|v| v.wrapping_neg()),
        ExprKind::Binary { op, lhs, rhs } => {
            let (l, r) = (fold(lhs)?, fold(rhs)?);
            Some(match op {
                BinOp::Add => l.wrapping_add(r),
                BinOp::Sub => l.wrapping_sub(r),
                BinOp::Mul => l.wrapping_mul(r),
                BinOp::Div => l.checked_div(r)?,
                BinOp::Rem => l.checked_rem(r)?,
                BinOp::BitAnd => l & r,
                BinOp::BitOr => l | r,
                BinOp::BitXor => l ^ r,
                BinOp::Shl => l.checked_shl(r as u32).unwrap_or(0),
                BinOp::Shr => l.checked_shr(r as u32).unwrap_or(0),
                _ => return None,
            })
        }
        ExprKind::Block(b) if b.stmts.is_empty() => b.tail.as_deref().and_then(fold),
        _ => None,
    }
}

fn binop(op: &syn::BinOp) -> (BinOp, bool) {
    use syn::BinOp as S;
    match op {
        S::Add(_) => (BinOp::Add, false),
        S::Sub(_) => (BinOp::Sub, false),
        S::Mul(_) => (BinOp::Mul, false),
        S::Div(_) => (BinOp::Div, false),
        S::Rem(_) => (BinOp::Rem, false),
        S::And(_) => (BinOp::And, false),
        S::Or(_) => (BinOp::Or, false),
        S::BitXor(_) => (BinOp::BitXor, false),
        S::BitAnd(_) => (BinOp::BitAnd, false),
        S::BitOr(_) => (BinOp::BitOr, false),
        S::Shl(_) => (BinOp::Shl, false),
        S::Shr(_) => (BinOp::Shr, false),
        S::Eq(_) => (BinOp::Eq, false),
        S::Lt(_) => (BinOp::Lt, false),
        S::Le(_) => (BinOp::Le, false),
        S::Ne(_) => (BinOp::Ne, false),
        S::Ge(_) => (BinOp::Ge, false),
        S::Gt(_) => (BinOp::Gt, false),
        S::AddAssign(_) => (BinOp::Add, true),
        S::SubAssign(_) => (BinOp::Sub, true),
        S::MulAssign(_) => (BinOp::Mul, true),
        S::DivAssign(_) => (BinOp::Div, true),
        S::RemAssign(_) => (BinOp::Rem, true),
        S::BitXorAssign(_) => (BinOp::BitXor, true),
        S::BitAndAssign(_) => (BinOp::BitAnd, true),
        S::BitOrAssign(_) => (BinOp::BitOr, true),
        S::ShlAssign(_) => (BinOp::Shl, true),
        S::ShrAssign(_) => (BinOp::Shr, true),
        _ => (BinOp::Add, false),
    }
}

/// Replaces the library's stand-ins in a signature type: `Param(i)` by `params[i]`, and an
/// `arbitrary_int` stand-in width by the real one.
fn subst(t: &Ty, params: &[Ty], stand_in: Option<(u16, u16)>) -> Ty {
    match t {
        Ty::Param(i) => params.get(*i as usize).cloned().unwrap_or(Ty::Error),
        Ty::Int(i) if stand_in.is_some_and(|(from, _)| !i.signed && !i.size && i.bits == from) => {
            Ty::uint(stand_in.unwrap().1)
        }
        Ty::Option(x) => Ty::Option(Box::new(subst(x, params, stand_in))),
        Ty::Result(a, b) => Ty::Result(Box::new(subst(a, params, stand_in)), Box::new(subst(b, params, stand_in))),
        Ty::Tuple(v) => Ty::Tuple(v.iter().map(|x| subst(x, params, stand_in)).collect()),
        Ty::Array(x, n) => Ty::Array(Box::new(subst(x, params, stand_in)), *n),
        other => other.clone(),
    }
}

fn names(methods: &[Method]) -> String {
    methods.iter().map(|m| format!("`{}`", m.name)).collect::<Vec<_>>().join(", ")
}

const FORMAT_MACROS: &[&str] =
    &["format", "println", "print", "eprintln", "eprint", "write", "writeln", "format_args", "dbg"];
const PANIC_MACROS: &[&str] = &[
    "panic",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "unreachable",
    "todo",
    "unimplemented",
];

impl<'c, 'a> FnChecker<'c, 'a> {
    pub(crate) fn new(cx: &'c mut Cx<'a>, ret: Ty, receiver: Option<bool>) -> Self {
        FnChecker {
            cx,
            locals: Vec::new(),
            scopes: vec![Scope { names: Vec::new(), aliases: Vec::new() }],
            vars: Vec::new(),
            reported: HashSet::new(),
            ret,
            receiver,
            loops: 0,
            calls: Vec::new(),
            maxima: HashMap::new(),
        }
    }

    fn error(&mut self, node: &dyn ToTokens, message: impl Into<String>) {
        self.cx.errors.push(Error::spanned(node, message));
    }

    fn error_at(&mut self, span: Span, message: impl Into<String>) {
        self.cx.errors.push(Error::at(span, message));
    }

    fn bad(span: Span) -> Expr {
        mk(ExprKind::Tuple(Vec::new()), Ty::Error, span)
    }

    /// A new local in the innermost scope.
    pub(crate) fn declare(&mut self, name: &str, ty: Ty, mutable: bool, span: Span) -> LocalId {
        let id = LocalId(self.locals.len() as u32);
        self.locals.push(Local { name: name.to_string(), ty, mutable, span });
        if name != "_" {
            self.scopes.last_mut().expect("a scope").names.push((name.to_string(), id));
        }
        id
    }

    fn lookup(&self, name: &str) -> Option<LocalId> {
        self.scopes.iter().rev().find_map(|s| s.names.iter().rev().find(|(n, _)| n == name).map(|(_, id)| *id))
    }

    fn push_scope(&mut self) {
        self.scopes.push(Scope { names: Vec::new(), aliases: Vec::new() });
    }

    fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    // ---------------------------------------------------------------- types and inference

    fn fresh(&mut self, int: bool, origin: Option<Origin>) -> Ty {
        self.vars.push(Var { bound: None, int, origin });
        Ty::Var(self.vars.len() as u32 - 1)
    }

    fn resolve(&self, t: &Ty) -> Ty {
        let mut t = t.clone();
        while let Ty::Var(v) = t {
            match &self.vars[v as usize].bound {
                Some(b) => t = b.clone(),
                None => return Ty::Var(v),
            }
        }
        t
    }

    /// Makes `found` the type `expected`; reports a mismatch at `span`. Returns the type.
    fn unify(&mut self, expected: &Ty, found: &Ty, span: Span) -> Ty {
        let a = self.resolve(expected);
        let b = self.resolve(found);
        match (&a, &b) {
            // An error poisons the variables it meets, so they are not reported again.
            (Ty::Error, Ty::Var(v)) | (Ty::Var(v), Ty::Error) => {
                self.vars[*v as usize].bound = Some(Ty::Error);
                Ty::Error
            }
            (Ty::Error, _) => b,
            (_, Ty::Error) => a,
            (Ty::Never, _) => b,
            (_, Ty::Never) => a,
            (Ty::Var(x), Ty::Var(y)) => {
                if x != y {
                    let int = self.vars[*x as usize].int || self.vars[*y as usize].int;
                    self.vars[*y as usize].int = int;
                    self.vars[*x as usize].bound = Some(b.clone());
                }
                b
            }
            (Ty::Var(x), other) | (other, Ty::Var(x)) => {
                let (x, other) = (*x, other.clone());
                self.bind(x, &other, span)
            }
            (Ty::Option(x), Ty::Option(y)) => {
                let (x, y) = (x.clone(), y.clone());
                Ty::Option(Box::new(self.unify(&x, &y, span)))
            }
            (Ty::Result(x1, x2), Ty::Result(y1, y2)) => {
                let (x1, x2, y1, y2) = (x1.clone(), x2.clone(), y1.clone(), y2.clone());
                let ok = self.unify(&x1, &y1, span);
                let err = self.unify(&x2, &y2, span);
                Ty::Result(Box::new(ok), Box::new(err))
            }
            (Ty::Tuple(xs), Ty::Tuple(ys)) if xs.len() == ys.len() => {
                let (xs, ys) = (xs.clone(), ys.clone());
                Ty::Tuple(xs.iter().zip(&ys).map(|(x, y)| self.unify(x, y, span)).collect())
            }
            (Ty::Array(x, n), Ty::Array(y, m)) if n == m => {
                let (x, y, n) = (x.clone(), y.clone(), *n);
                Ty::Array(Box::new(self.unify(&x, &y, span)), n)
            }
            // `&mut Packet` passes where `&Packet` is wanted; rustc checks the rest.
            (Ty::Packet { .. }, Ty::Packet { .. }) => a,
            _ if a == b => a,
            _ => {
                self.mismatch(&a, &b, span);
                Ty::Error
            }
        }
    }

    fn bind(&mut self, x: u32, t: &Ty, span: Span) -> Ty {
        if self.vars[x as usize].int {
            match t {
                Ty::Int(i) if i.is_primitive() => {}
                Ty::Int(i) => {
                    let text = match &self.vars[x as usize].origin {
                        Some(Origin::Literal { text, .. }) => text.clone(),
                        _ => "5".to_string(),
                    };
                    self.error_at(
                        span,
                        format!(
                            "an integer literal cannot be a `{i}` (an `arbitrary_int` type); write `{i}::new({text})`"
                        ),
                    );
                    self.vars[x as usize].bound = Some(Ty::Error);
                    return Ty::Error;
                }
                other => {
                    let other = other.clone();
                    self.error_at(span, format!("mismatched types: expected `{other}`, found an integer"));
                    self.vars[x as usize].bound = Some(Ty::Error);
                    return Ty::Error;
                }
            }
        }
        self.vars[x as usize].bound = Some(t.clone());
        t.clone()
    }

    fn mismatch(&mut self, expected: &Ty, found: &Ty, span: Span) {
        let hint = match (expected, found) {
            (Ty::Int(e), Ty::Int(f)) if e.is_primitive() && f.is_primitive() => format!("; convert with `as {e}`"),
            (Ty::Int(e), Ty::Int(f)) if !f.is_primitive() && e.is_primitive() => {
                format!("; `.value()` gives a `{f}`'s value as a primitive integer, then `as {e}`")
            }
            (Ty::Int(e), Ty::Int(_)) => format!("; make one with `{e}::new(…)` or `{e}::masked_new(…)`"),
            _ => String::new(),
        };
        self.error_at(span, format!("mismatched types: expected `{expected}`, found `{found}`{hint}"));
    }

    fn zonk(&mut self, t: &Ty) -> Ty {
        match self.resolve(t) {
            Ty::Var(v) => {
                self.unresolved(v);
                Ty::Error
            }
            Ty::Option(x) => Ty::Option(Box::new(self.zonk(&x))),
            Ty::Result(a, b) => Ty::Result(Box::new(self.zonk(&a)), Box::new(self.zonk(&b))),
            Ty::Tuple(v) => Ty::Tuple(v.iter().map(|x| self.zonk(x)).collect()),
            Ty::Array(t, n) => Ty::Array(Box::new(self.zonk(&t)), n),
            other => other,
        }
    }

    fn unresolved(&mut self, root: u32) {
        if !self.reported.insert(root) {
            return;
        }
        let origin = (0..self.vars.len() as u32)
            .find(|&i| self.resolve(&Ty::Var(i)) == Ty::Var(root) && self.vars[i as usize].origin.is_some())
            .and_then(|i| self.vars[i as usize].origin.clone());
        let (start, end, message) = match origin {
            Some(Origin::Literal { start, end, text, .. }) => (
                start,
                end,
                format!(
                    "the width of `{text}` cannot be known: nothing it meets has a fixed width; write a suffix \
                     (`{text}u16`) or annotate the binding (`let x: u16 = …`)"
                ),
            ),
            Some(Origin::None { start, end }) => (
                start,
                end,
                "the type of this `None` cannot be known; annotate the binding (`let x: Option<u16> = None;`)"
                    .to_string(),
            ),
            None => return,
        };
        self.cx.errors.push(Error { start, end, message });
    }

    // ---------------------------------------------------------------- functions and blocks

    pub(crate) fn fn_body(&mut self, block: &syn::Block) -> Block {
        let body = self.block(block);
        let ret = self.ret.clone();
        let span = body.tail.as_ref().map_or(body.span, |t| t.span);
        self.unify(&ret, &body.ty, span);
        body
    }

    /// Resolves every type variable of the function and checks literal ranges.
    pub(crate) fn finish(mut self, mut body: Block) -> (Vec<Local>, Block, Vec<(usize, Span)>) {
        self.zonk_block(&mut body);
        let mut locals = std::mem::take(&mut self.locals);
        for l in &mut locals {
            l.ty = self.zonk(&l.ty);
        }
        for i in 0..self.vars.len() {
            if let Some(Origin::Literal { start, end, text, value }) = self.vars[i].origin.clone() {
                if let Ty::Int(it) = self.resolve(&Ty::Var(i as u32)) {
                    let max = if it.signed { it.max() + 1 } else { it.max() };
                    if value > max {
                        self.cx.errors.push(Error {
                            start,
                            end,
                            message: format!("`{text}` does not fit in `{it}` (its largest value is {})", it.max()),
                        });
                    }
                }
            }
        }
        (locals, body, self.calls)
    }

    fn block(&mut self, b: &syn::Block) -> Block {
        self.push_scope();
        let mut stmts = Vec::new();
        let mut tail = None;
        let n = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            match s {
                syn::Stmt::Local(l) => stmts.push(self.local(l)),
                syn::Stmt::Item(item) => self.error(
                    item,
                    "items inside a function body are not in the subset; move it to the NF module (the checker reads \
                     the module's items)",
                ),
                syn::Stmt::Macro(m) => {
                    let span = m.mac.span();
                    if let Some(e) = self.probe_macro(&m.mac, span) {
                        stmts.push(Stmt::Expr(e));
                    }
                }
                syn::Stmt::Expr(e, semi) => {
                    let ex = self.expr(e);
                    if semi.is_none() && i + 1 == n {
                        tail = Some(Box::new(ex));
                    } else {
                        stmts.push(Stmt::Expr(ex));
                    }
                }
            }
        }
        self.pop_scope();
        let diverges = stmts.iter().any(|s| match s {
            Stmt::Expr(e) => self.resolve(&e.ty) == Ty::Never,
            Stmt::Let { init: Some(e), .. } => self.resolve(&e.ty) == Ty::Never,
            _ => false,
        });
        let ty = match &tail {
            Some(t) => t.ty.clone(),
            None if diverges => Ty::Never,
            None => Ty::unit(),
        };
        Block { stmts, tail, ty, span: b.brace_token.span.join() }
    }

    fn local(&mut self, l: &syn::Local) -> Stmt {
        let (pat, ann) = match &l.pat {
            syn::Pat::Type(t) => (&*t.pat, Some(&*t.ty)),
            p => (p, None),
        };
        // `let t = &mut self.table;`: an alias of a state element.
        if let Some(init) = &l.init {
            if let syn::Expr::Reference(r) = &*init.expr {
                if let Some(field) = self_field(&r.expr) {
                    if self.element_of(&field).is_some() {
                        return self.alias(pat, r, field);
                    }
                }
            }
        }
        let ann_ty = ann.map(|t| self.cx.resolve_type(t, TypeCtx::Value));
        let (init, els) = match &l.init {
            Some(init) => {
                let e = self.expr(&init.expr);
                let els = init.diverge.as_ref().map(|(_, els)| {
                    let b = match &**els {
                        syn::Expr::Block(b) => self.block(&b.block),
                        other => {
                            let e = self.expr(other);
                            Block { stmts: Vec::new(), ty: e.ty.clone(), span: e.span, tail: Some(Box::new(e)) }
                        }
                    };
                    if self.resolve(&b.ty) != Ty::Never && self.resolve(&b.ty) != Ty::Error {
                        self.error(
                            els,
                            "the `else` of a `let … else` must leave: end it with `return …`, `break` or `continue`",
                        );
                    }
                    b
                });
                (Some(e), els)
            }
            None => (None, None),
        };
        let ty = match (&ann_ty, &init) {
            (Some(a), Some(e)) => {
                let (a, et, span) = (a.clone(), e.ty.clone(), e.span);
                self.unify(&a, &et, span)
            }
            (Some(a), None) => a.clone(),
            (None, Some(e)) => e.ty.clone(),
            (None, None) => self.fresh(false, None),
        };
        let pat = self.pat(pat, &ty);
        Stmt::Let { pat, init, els }
    }

    fn alias(&mut self, pat: &syn::Pat, r: &syn::ExprReference, field: String) -> Stmt {
        let mutable = r.mutability.is_some();
        let span = r.span();
        let syn::Pat::Ident(pi) = pat else {
            self.error(pat, "bind a borrowed state element to a plain name: `let table = &mut self.table;`");
            return Stmt::Expr(Self::bad(span));
        };
        let name = pi.ident.to_string();
        let live = self.scopes.iter().flat_map(|s| &s.aliases).find(|a| a.field == field && (a.mutable || mutable));
        if let Some(prev) = live {
            let message = if prev.mutable && mutable {
                format!(
                    "`self.{field}` is borrowed mutably twice: `{}` is still in scope when `{name}` borrows it again; two \
                     live `&mut` borrows of one state element would be two writers of one memory, which the circuit \
                     cannot order: use the first alias, or `self.{field}` directly",
                    prev.name
                )
            } else {
                format!(
                    "`self.{field}` is borrowed both mutably and shared: `{}` is still in scope when `{name}` borrows it; \
                     a state element can have one `&mut` alias, or shared ones, at a time: use one alias, or \
                     `self.{field}` directly",
                    prev.name
                )
            };
            self.error(r, message);
        }
        let ty = Ty::StateRef { field: field.clone(), mutable };
        let id = self.declare(&name, ty.clone(), false, pi.ident.span());
        self.scopes.last_mut().unwrap().aliases.push(Alias { field: field.clone(), mutable, name });
        let init = mk(ExprKind::Borrow { field, mutable }, ty.clone(), span);
        Stmt::Let { pat: Pat { kind: PatKind::Bind(id), ty, span: pi.ident.span() }, init: Some(init), els: None }
    }

    fn element_of(&self, field: &str) -> Option<Element> {
        self.cx.state.fields.iter().find(|f| f.name == field).and_then(|f| match &f.kind {
            FieldKind::Element(e) => Some(e.clone()),
            FieldKind::Value(_) => None,
        })
    }

    fn value_field(&self, field: &str) -> Option<Ty> {
        self.cx.state.fields.iter().find(|f| f.name == field).and_then(|f| match &f.kind {
            FieldKind::Value(t) => Some(t.clone()),
            FieldKind::Element(_) => None,
        })
    }

    // ---------------------------------------------------------------- expressions

    fn expr(&mut self, e: &syn::Expr) -> Expr {
        let span = e.span();
        match e {
            syn::Expr::Lit(l) => self.lit(&l.lit, span),
            syn::Expr::Path(p) => self.path_expr(p),
            syn::Expr::Paren(p) => self.expr(&p.expr),
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Unary(u) => self.unary(u),
            syn::Expr::Binary(b) => self.binary(b),
            syn::Expr::Assign(a) => {
                let value = self.expr(&a.right);
                self.assign(&a.left, None, value, span)
            }
            syn::Expr::Block(b) => {
                if let Some(label) = &b.label {
                    self.error(label, "labelled blocks are not in the subset; use `if`/`else` or an early `return`");
                }
                let blk = self.block(&b.block);
                let ty = blk.ty.clone();
                mk(ExprKind::Block(blk), ty, span)
            }
            syn::Expr::If(i) => self.if_expr(i),
            syn::Expr::Match(m) => self.match_expr(m),
            syn::Expr::ForLoop(f) => self.for_loop(f),
            syn::Expr::While(w) => {
                let (keyword, cond) = (&w.while_token, &w.cond);
                self.error(
                    &quote::quote!(#keyword #cond),
                    "a `while` loop runs until its condition changes, so its trip count is not known when the circuit is \
                     built; write `for i in 0..N` with a constant `N` (and `break` when done)",
                );
                let cond = self.expr(&w.cond);
                self.unify(&Ty::Bool, &cond.ty, cond.span);
                self.loops += 1;
                let _ = self.block(&w.body);
                self.loops -= 1;
                Self::bad(span)
            }
            syn::Expr::Loop(l) => {
                self.error(
                    &l.loop_token,
                    "an unbounded `loop` cannot be built as a circuit; write `for i in 0..N` with a constant `N` (and \
                     `break` when done)",
                );
                Self::bad(span)
            }
            syn::Expr::Break(b) => {
                if b.label.is_some() || b.expr.is_some() {
                    self.error(b, "`break` leaves the innermost `for` loop, without a label or a value");
                } else if self.loops == 0 {
                    self.error(b, "`break` outside a loop");
                }
                mk(ExprKind::Break, Ty::Never, span)
            }
            syn::Expr::Continue(c) => {
                if c.label.is_some() {
                    self.error(c, "`continue` goes to the next round of the innermost `for` loop, without a label");
                } else if self.loops == 0 {
                    self.error(c, "`continue` outside a loop");
                }
                mk(ExprKind::Continue, Ty::Never, span)
            }
            syn::Expr::Return(r) => {
                let value = r.expr.as_ref().map(|v| self.expr(v));
                let (ty, vspan) = match &value {
                    Some(v) => (v.ty.clone(), v.span),
                    None => (Ty::unit(), span),
                };
                let ret = self.ret.clone();
                self.unify(&ret, &ty, vspan);
                mk(ExprKind::Return(value.map(Box::new)), Ty::Never, span)
            }
            syn::Expr::Call(c) => self.call(c),
            syn::Expr::MethodCall(m) => self.method_call(m),
            syn::Expr::Field(f) => self.field(f),
            syn::Expr::Index(i) => self.index(i),
            syn::Expr::Cast(c) => self.cast(c),
            syn::Expr::Tuple(t) => {
                let elems: Vec<Expr> = t.elems.iter().map(|x| self.expr(x)).collect();
                let ty = Ty::Tuple(elems.iter().map(|x| x.ty.clone()).collect());
                mk(ExprKind::Tuple(elems), ty, span)
            }
            syn::Expr::Reference(r) => {
                if self_field(&r.expr).is_some_and(|f| self.element_of(&f).is_some()) {
                    self.error(
                        r,
                        "borrow a state element only to name it: `let table = &mut self.table;`, then call its methods; \
                         elsewhere use `self.table` directly",
                    );
                } else {
                    self.error(
                        r,
                        "references are not values in hardware; use the value itself (every value of the subset is \
                         `Copy`)",
                    );
                }
                Self::bad(span)
            }
            syn::Expr::Macro(m) => self.probe_macro(&m.mac, span).unwrap_or_else(|| Self::bad(span)),
            syn::Expr::Closure(c) => {
                self.error(c, "closures are not in the subset; write a function of the NF module and call it");
                Self::bad(span)
            }
            syn::Expr::Async(_) | syn::Expr::Await(_) | syn::Expr::Yield(_) => {
                self.error(e, "`async` code is not in the subset; the NF handles one packet per call of `process`");
                Self::bad(span)
            }
            syn::Expr::Unsafe(u) => {
                self.error(&u.unsafe_token, "`unsafe` code is not in the subset");
                Self::bad(span)
            }
            syn::Expr::Try(t) => {
                self.error(
                    &t.question_token,
                    "the `?` operator is not in the subset; `match` on the value and return an `Action` (e.g. \
                     `Action::Drop(DropReason::Malformed)`)",
                );
                Self::bad(span)
            }
            syn::Expr::TryBlock(t) => {
                self.error(t, "`try` blocks are not in the subset; `match` on the values");
                Self::bad(span)
            }
            syn::Expr::Range(r) => {
                self.error(r, "ranges are values only as the bounds of a `for` loop (`for i in 0..N`)");
                Self::bad(span)
            }
            syn::Expr::Array(a) => {
                let elems: Vec<Expr> = a.elems.iter().map(|x| self.expr(x)).collect();
                let ty = self.fresh(false, None);
                for x in &elems {
                    self.unify(&ty, &x.ty, x.span);
                }
                let n = elems.len() as u32;
                if n == 0 || n > MAX_ARRAY {
                    self.error(a, format!("an array in hardware has 1 to {MAX_ARRAY} elements"));
                    return Self::bad(span);
                }
                mk(ExprKind::Array(elems), Ty::Array(Box::new(ty), n), span)
            }
            syn::Expr::Repeat(r) => {
                let value = self.expr(&r.expr);
                let Some(count) = self.cx.eval_const(&r.len) else { return Self::bad(span) };
                if count == 0 || count > MAX_ARRAY as u128 {
                    self.error(&r.len, format!("an array in hardware has 1 to {MAX_ARRAY} elements"));
                    return Self::bad(span);
                }
                let ty = Ty::Array(Box::new(value.ty.clone()), count as u32);
                mk(ExprKind::Repeat { value: Box::new(value), count: count as u32 }, ty, span)
            }
            syn::Expr::Struct(s) => self.struct_literal(s),
            syn::Expr::Let(l) => {
                self.error(l, "`let` is an expression only right after `if` (`if let Some(x) = …`)");
                Self::bad(span)
            }
            other => {
                self.error(other, "this expression is not in the subset (see docs/hls-subset.md)");
                Self::bad(span)
            }
        }
    }

    /// `emu::probe!(name, value)` or `emu::count!(name)` (also without the `emu::`); any other
    /// macro is an error (`None`).
    fn probe_macro(&mut self, mac: &syn::Macro, span: Span) -> Option<Expr> {
        let segs: Vec<String> = mac.path.segments.iter().map(|s| s.ident.to_string()).collect();
        let which = match segs.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            ["emu", m] | [m] if m == "probe" || m == "count" => m == "probe",
            _ => {
                self.macro_error(mac);
                return None;
            }
        };
        let usage = if which {
            "`emu::probe!(name, value)` takes a name (an identifier) and a value, e.g. `emu::probe!(last_ttl, ip.ttl())`"
        } else {
            "`emu::count!(name)` takes a name (an identifier), e.g. `emu::count!(bad_checksum)`"
        };
        let args = match mac.parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated) {
            Ok(a) => a,
            Err(e) => {
                self.cx.errors.push(Error::at(e.span(), format!("{e}; {usage}")));
                return None;
            }
        };
        let name = match args.first() {
            Some(syn::Expr::Path(p)) if p.qself.is_none() && p.path.get_ident().is_some() => {
                p.path.get_ident().expect("checked").to_string()
            }
            _ => {
                self.error(mac, usage);
                return None;
            }
        };
        if args.len() != if which { 2 } else { 1 } {
            self.error(mac, usage);
            return None;
        }
        let (op, args) = if which {
            let value = self.expr(&args[1]);
            (LibOp::Probe(name), vec![value])
        } else {
            (LibOp::Count(name), vec![])
        };
        Some(mk(ExprKind::Lib { op, args }, Ty::unit(), span))
    }

    fn macro_error(&mut self, mac: &syn::Macro) {
        let name = mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        let message = if FORMAT_MACROS.contains(&name.as_str()) {
            format!(
                "string formatting (`{name}!`) has no hardware equivalent; count the event with a `Counter` field of \
                 the state instead"
            )
        } else if PANIC_MACROS.contains(&name.as_str()) {
            format!(
                "`{name}!` stops the program when it fires (it panics), and hardware cannot stop; handle the case and \
                 return an `Action` (e.g. `Action::Drop(DropReason::Malformed)`)"
            )
        } else if name == "vec" {
            VEC.to_string()
        } else if name == "matches" {
            "`matches!` is not in the subset; write a `match` (or compare with `==`)".to_string()
        } else {
            format!("the macro `{name}!` is not in the subset: the checker cannot see what it expands to; write the code it stands for")
        };
        self.error(mac, message);
    }

    fn lit(&mut self, lit: &syn::Lit, span: Span) -> Expr {
        match lit {
            syn::Lit::Int(i) => {
                let Ok(value) = i.base10_parse::<u128>() else {
                    self.error(i, "this integer does not fit in 128 bits");
                    return Self::bad(span);
                };
                let ty = match i.suffix() {
                    "" => {
                        let (start, end) = (i.span(), i.span());
                        self.fresh(true, Some(Origin::Literal { start, end, text: i.to_string(), value }))
                    }
                    s => match int_type(s) {
                        Some(t) if t.is_primitive() => {
                            let max = if t.signed { t.max() + 1 } else { t.max() };
                            if value > max {
                                self.error(
                                    i,
                                    format!("`{i}` does not fit in `{t}` (its largest value is {})", t.max()),
                                );
                            }
                            Ty::Int(t)
                        }
                        _ => {
                            self.error(i, format!("unknown integer suffix `{s}`"));
                            Ty::Error
                        }
                    },
                };
                mk(ExprKind::Int(value), ty, span)
            }
            syn::Lit::Bool(b) => mk(ExprKind::Bool(b.value), Ty::Bool, span),
            syn::Lit::Byte(b) => mk(ExprKind::Int(b.value() as u128), Ty::uint(8), span),
            syn::Lit::Float(f) => {
                self.error(f, FLOAT);
                Self::bad(span)
            }
            other => {
                self.error(other, STRINGS);
                Self::bad(span)
            }
        }
    }

    fn path_expr(&mut self, p: &syn::ExprPath) -> Expr {
        let span = p.span();
        if p.qself.is_some() {
            self.error(p, "qualified paths (`<T as Trait>::X`) are not in the subset");
            return Self::bad(span);
        }
        if let Some(seg) = p.path.segments.iter().find(|s| !s.arguments.is_none()) {
            self.error(
                &seg.arguments,
                "generic arguments in paths are not in the subset; annotate the binding instead",
            );
            return Self::bad(span);
        }
        let segs = path_segments(&p.path);
        if segs.len() == 1 {
            let name = &segs[0];
            if let Some(id) = self.lookup(name) {
                let ty = self.locals[id.0 as usize].ty.clone();
                return mk(ExprKind::Local(id), ty, span);
            }
            match name.as_str() {
                "None" => {
                    let inner = self.fresh(false, Some(Origin::None { start: span, end: span }));
                    return mk(
                        ExprKind::Variant { variant: Variant::None, args: Vec::new() },
                        Ty::Option(Box::new(inner)),
                        span,
                    );
                }
                "self" => {
                    self.error(
                        p,
                        "`self` is not a value; use its fields (`self.ip`) or call its methods (`self.table.get(k)`)",
                    );
                    return Self::bad(span);
                }
                _ => {}
            }
            if self.cx.is_const_array(name) {
                self.error(
                    p,
                    format!(
                        "a constant array is read an element at a time: index it (`{name}[i]`) or loop over it \
                         (`for x in {name}`)"
                    ),
                );
                return Self::bad(span);
            }
            if self.cx.items.consts.contains_key(name) || self.cx.items.statics.contains_key(name) {
                return match self.cx.module_const(name, p) {
                    Some((ty, value)) => mk(ExprKind::Const { name: name.clone(), value }, ty, span),
                    None => Self::bad(span),
                };
            }
            if self.cx.items.fns.contains_key(name) {
                self.error(p, format!("functions are not values in hardware; call it: `{name}(…)`"));
                return Self::bad(span);
            }
            self.error(
                p,
                format!("unknown name `{name}`: not a local binding, a `const` of this module or a library constant"),
            );
            return Self::bad(span);
        }
        let s = strip_prefix(&segs).to_vec();
        if s.len() == 1 {
            if let Some((ty, value)) = self.cx.module_const(&s[0], p) {
                return mk(ExprKind::Const { name: s[0].clone(), value }, ty, span);
            }
            return Self::bad(span);
        }
        if s.len() == 2 {
            if let Some(e) = self.variant_path(&s, p, span) {
                return e;
            }
        }
        if let Some((ty, value)) = self.cx.lib.constant(&s) {
            return mk(ExprKind::Const { name: segs.join("::"), value }, ty.clone(), span);
        }
        self.error(
            p,
            format!(
                "unknown name `{}`: not a local binding, a `const` of this module or a library constant",
                segs.join("::")
            ),
        );
        Self::bad(span)
    }

    /// `Action::Flood`, `DropReason::SamePort`, `Kind::A`, `Option::None`: unit variants.
    fn variant_path(&mut self, s: &[String], node: &dyn ToTokens, span: Span) -> Option<Expr> {
        let lib = self.cx.lib;
        let (ty_name, v) = (s[0].as_str(), s[1].as_str());
        match ty_name {
            "Action" => {
                let Some((name, fields)) = lib.actions.iter().find(|(n, _)| *n == v) else {
                    self.error(node, format!("`Action` has no variant `{v}`"));
                    return Some(Self::bad(span));
                };
                if !fields.is_empty() {
                    self.error(node, format!("`Action::{v}` needs its field: `Action::{v}(…)`"));
                    return Some(Self::bad(span));
                }
                Some(mk(ExprKind::Variant { variant: Variant::Action(name), args: Vec::new() }, Ty::Action, span))
            }
            "DropReason" => {
                let Some((name, code)) = lib.drop_reasons.iter().find(|(n, _)| *n == v) else {
                    self.error(node, format!("`DropReason` has no variant `{v}`"));
                    return Some(Self::bad(span));
                };
                Some(mk(
                    ExprKind::Variant { variant: Variant::DropReason(name, *code), args: Vec::new() },
                    Ty::DropReason,
                    span,
                ))
            }
            "Option" if v == "None" => {
                let inner = self.fresh(false, Some(Origin::None { start: span, end: span }));
                Some(mk(
                    ExprKind::Variant { variant: Variant::None, args: Vec::new() },
                    Ty::Option(Box::new(inner)),
                    span,
                ))
            }
            _ if self.cx.items.enums.contains_key(ty_name) => {
                let def = self.cx.module_enum(ty_name)?;
                match def.variants.iter().find(|(n, _)| n == v) {
                    Some((name, value)) => Some(mk(
                        ExprKind::Variant {
                            variant: Variant::Enum { ty: ty_name.to_string(), name: name.clone(), value: *value },
                            args: Vec::new(),
                        },
                        Ty::Enum(ty_name.to_string()),
                        span,
                    )),
                    None => {
                        self.error(node, format!("`{ty_name}` has no variant `{v}`"));
                        Some(Self::bad(span))
                    }
                }
            }
            _ => None,
        }
    }

    fn unary(&mut self, u: &syn::ExprUnary) -> Expr {
        let span = u.span();
        match u.op {
            syn::UnOp::Deref(_) => {
                self.error(
                    u,
                    "dereferencing (`*x`) is not in the subset: values are copied, not referenced; use `x` itself",
                );
                Self::bad(span)
            }
            syn::UnOp::Not(_) => {
                let arg = self.expr(&u.expr);
                let ty = self.resolve(&arg.ty);
                if !matches!(ty, Ty::Bool | Ty::Int(_) | Ty::Var(_) | Ty::Error) {
                    self.error(u, format!("`!` applies to `bool` and integers, not `{ty}`"));
                }
                mk(ExprKind::Unary { op: UnOp::Not, arg: Box::new(arg) }, ty, span)
            }
            syn::UnOp::Neg(_) => {
                let arg = self.expr(&u.expr);
                let ty = self.resolve(&arg.ty);
                if !matches!(ty, Ty::Int(IntTy { signed: true, .. }) | Ty::Var(_) | Ty::Error) {
                    self.error(u, format!("`-` applies to signed integers, not `{ty}`; for wrapping arithmetic write `0u16.wrapping_sub(x)`"));
                }
                mk(ExprKind::Unary { op: UnOp::Neg, arg: Box::new(arg) }, ty, span)
            }
            _ => {
                self.error(u, "this operator is not in the subset");
                Self::bad(span)
            }
        }
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> Expr {
        let span = b.span();
        let (op, assign) = binop(&b.op);
        if assign {
            let value = self.expr(&b.right);
            self.check_divisor(op, &value, &b.right);
            return self.assign(&b.left, Some(op), value, span);
        }
        let lhs = self.expr(&b.left);
        let rhs = self.expr(&b.right);
        let ty = match op {
            BinOp::And | BinOp::Or => {
                self.unify(&Ty::Bool, &lhs.ty, lhs.span);
                self.unify(&Ty::Bool, &rhs.ty, rhs.span);
                Ty::Bool
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let t = self.unify(&lhs.ty, &rhs.ty, rhs.span);
                let t = self.resolve(&t);
                let ordered = !matches!(op, BinOp::Eq | BinOp::Ne);
                let ok = match &t {
                    Ty::Int(_) | Ty::Var(_) | Ty::Bool | Ty::Mac | Ty::Ipv4Addr | Ty::Error => true,
                    _ if ordered => false,
                    Ty::View { .. } | Ty::Packet { .. } | Ty::Meta | Ty::StateRef { .. } => false,
                    _ => true,
                };
                if !ok {
                    self.error(b, format!("values of type `{t}` cannot be compared this way"));
                }
                Ty::Bool
            }
            BinOp::Shl | BinOp::Shr => {
                for (x, e) in [(&lhs, &b.left), (&rhs, &b.right)] {
                    let t = self.resolve(&x.ty);
                    if !matches!(t, Ty::Int(_) | Ty::Var(_) | Ty::Error) {
                        self.error(e, format!("shifts apply to integers, not `{t}`"));
                    }
                }
                // A literal shift amount is a constant whose width does not matter: it is `u32`,
                // as in `u32::rotate_left`.
                if let Ty::Var(_) = self.resolve(&rhs.ty) {
                    self.unify(&Ty::uint(32), &rhs.ty, rhs.span);
                }
                lhs.ty.clone()
            }
            _ => {
                let t = self.unify(&lhs.ty, &rhs.ty, rhs.span);
                let t = self.resolve(&t);
                let bit = matches!(op, BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor);
                let ok = matches!(t, Ty::Int(_) | Ty::Var(_) | Ty::Error) || bit && t == Ty::Bool;
                if !ok {
                    self.error(b, format!("arithmetic and bit operations apply to integers, not `{t}`"));
                }
                self.check_divisor(op, &rhs, &b.right);
                t
            }
        };
        mk(ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }, ty, span)
    }

    fn check_divisor(&mut self, op: BinOp, rhs: &Expr, node: &syn::Expr) {
        if matches!(op, BinOp::Div | BinOp::Rem) && fold(rhs) == Some(0) {
            self.error(node, "division by zero");
        } else if matches!(op, BinOp::Div | BinOp::Rem) && fold(rhs).is_none() {
            self.error(
                node,
                "division by a computed value can divide by zero (which panics on the CPU) and needs a multi-cycle \
                 divider; divide by a non-zero constant (a power of two becomes a shift)",
            );
        }
    }

    fn assign(&mut self, left: &syn::Expr, op: Option<BinOp>, value: Expr, span: Span) -> Expr {
        let (place, ty) = match left {
            syn::Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                let name = p.path.get_ident().unwrap().to_string();
                match self.lookup(&name) {
                    Some(id) => (Place::Local(id), self.locals[id.0 as usize].ty.clone()),
                    None => {
                        self.error(p, format!("unknown local binding `{name}`"));
                        return Self::bad(span);
                    }
                }
            }
            syn::Expr::Infer(_) => {
                // `_ = value;` evaluates and discards.
                let blk = Block { stmts: vec![Stmt::Expr(value)], tail: None, ty: Ty::unit(), span };
                return mk(ExprKind::Block(blk), Ty::unit(), span);
            }
            syn::Expr::Index(i) => match self.window_index(i) {
                Some((at, true)) => (Place::WindowByte(at), Ty::uint(8)),
                Some((_, false)) => {
                    self.error(i, "write the window through `pkt.window_mut()`");
                    return Self::bad(span);
                }
                None => return Self::bad(span),
            },
            other => match self_field(other) {
                Some(field) => match self.value_field(&field) {
                    Some(t) => (Place::SelfField(field), t),
                    None if self.element_of(&field).is_some() => {
                        self.error(
                            other,
                            format!(
                                "a state element cannot be assigned as a whole; call its methods (`self.{field}.set(…)`, \
                                 `.insert(…)`)"
                            ),
                        );
                        return Self::bad(span);
                    }
                    None => {
                        if !self.cx.refused_fields.contains(&field) {
                            self.error(other, format!("the state struct has no field `{field}`"));
                        }
                        return Self::bad(span);
                    }
                },
                None => {
                    self.error(other, "assign to a local binding, a value field of `self`, or a window byte");
                    return Self::bad(span);
                }
            },
        };
        if matches!(op, Some(BinOp::Shl | BinOp::Shr)) {
            if let Ty::Var(_) = self.resolve(&value.ty) {
                self.unify(&Ty::uint(32), &value.ty, value.span);
            }
        } else {
            self.unify(&ty, &value.ty, value.span);
        }
        mk(ExprKind::Assign { place, op, value: Box::new(value) }, Ty::unit(), span)
    }

    fn if_expr(&mut self, i: &syn::ExprIf) -> Expr {
        let span = i.span();
        if let syn::Expr::Let(l) = &*i.cond {
            // `if let PAT = EXPR { then } else { els }` is a two-armed match.
            let scrutinee = self.expr(&l.expr);
            self.push_scope();
            let pat = self.pat(&l.pat, &scrutinee.ty.clone());
            let then = self.block(&i.then_branch);
            self.pop_scope();
            let els = match &i.else_branch {
                Some((_, e)) => self.expr(e),
                None => mk(ExprKind::Block(unit_block(span)), Ty::unit(), span),
            };
            let ty = if i.else_branch.is_some() {
                self.unify(&then.ty, &els.ty, els.span)
            } else {
                self.unify(&Ty::unit(), &then.ty, then.span);
                Ty::unit()
            };
            let then_span = then.span;
            let then_ty = then.ty.clone();
            let arms = vec![
                Arm { pat, guard: None, body: mk(ExprKind::Block(then), then_ty, then_span) },
                Arm { pat: Pat { kind: PatKind::Wild, ty: scrutinee.ty.clone(), span }, guard: None, body: els },
            ];
            return mk(ExprKind::Match { scrutinee: Box::new(scrutinee), arms }, ty, span);
        }
        let cond = self.expr(&i.cond);
        self.unify(&Ty::Bool, &cond.ty, cond.span);
        let then = self.block(&i.then_branch);
        let (els, ty) = match &i.else_branch {
            Some((_, e)) => {
                let els = self.expr(e);
                let ty = self.unify(&then.ty, &els.ty, els.span);
                (Some(Box::new(els)), ty)
            }
            None => {
                if self.resolve(&then.ty) != Ty::Never {
                    self.unify(&Ty::unit(), &then.ty, then.span);
                }
                (None, Ty::unit())
            }
        };
        mk(ExprKind::If { cond: Box::new(cond), then, els }, ty, span)
    }

    fn match_expr(&mut self, m: &syn::ExprMatch) -> Expr {
        let span = m.span();
        let scrutinee = self.expr(&m.expr);
        let sty = scrutinee.ty.clone();
        let mut ty = Ty::Never;
        let mut arms = Vec::new();
        for arm in &m.arms {
            self.push_scope();
            let pat = self.pat(&arm.pat, &sty);
            let guard = arm.guard.as_ref().map(|(_, g)| {
                let g = self.expr(g);
                self.unify(&Ty::Bool, &g.ty, g.span);
                g
            });
            let body = self.expr(&arm.body);
            self.pop_scope();
            ty = self.unify(&ty, &body.ty, body.span);
            arms.push(Arm { pat, guard, body });
        }
        mk(ExprKind::Match { scrutinee: Box::new(scrutinee), arms }, ty, span)
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop) -> Expr {
        let span = f.span();
        if let Some(label) = &f.label {
            self.error(label, "loop labels are not in the subset; `break` leaves the innermost loop");
        }
        let Some((over, ty, max)) = self.for_over(&f.expr, span) else {
            return Self::bad(span);
        };
        self.push_scope();
        let var = match &*f.pat {
            syn::Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => {
                let id = self.declare(&p.ident.to_string(), ty.clone(), p.mutability.is_some(), p.ident.span());
                if p.mutability.is_none() {
                    if let Some(max) = max {
                        self.maxima.insert(id, max);
                    }
                }
                Some(id)
            }
            syn::Pat::Wild(_) => {
                // An unused counter: its width is not observable.
                if let Ty::Var(_) = self.resolve(&ty) {
                    self.unify(&Ty::USIZE, &ty, span);
                }
                None
            }
            other => {
                self.error(other, "the loop variable of a `for` loop is a plain name or `_`");
                None
            }
        };
        self.loops += 1;
        let body = self.block(&f.body);
        self.loops -= 1;
        self.pop_scope();
        if !matches!(self.resolve(&body.ty), Ty::Never | Ty::Error) {
            self.unify(&Ty::unit(), &body.ty, body.span);
        }
        mk(ExprKind::For { var, over, body }, Ty::unit(), span)
    }

    /// What a `for` loop runs over: a constant range (`a..b`, `a..=b`, either `.rev()`), an
    /// array literal or a constant array; with the loop variable's type and, for a range, its
    /// largest value.
    fn for_over(&mut self, e: &syn::Expr, span: Span) -> Option<(ForOver, Ty, Option<u128>)> {
        const HELP: &str = "a `for` loop in hardware runs over a constant range (`for i in 0..N`, `(0..N).rev()`), \
                            an array literal (`for x in [a, b, c]`) or a constant array; other iterators and \
                            collections are not in the subset";
        let (range, rev) = match e {
            syn::Expr::Range(r) => (r, false),
            syn::Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => match strip_parens(&m.receiver) {
                syn::Expr::Range(r) => (r, true),
                _ => {
                    self.error(e, HELP);
                    return None;
                }
            },
            syn::Expr::Path(p)
                if p.qself.is_none() && p.path.get_ident().is_some_and(|n| self.cx.is_const_array(&n.to_string())) =>
            {
                let name = p.path.get_ident().expect("one segment").to_string();
                let (ty, values) = self.cx.module_const_array(&name, p)?;
                let n = values.len() as u32;
                let elements =
                    values.into_iter().map(|v| mk(ExprKind::Const { name: name.clone(), value: v }, ty.clone(), span));
                let array = mk(ExprKind::Array(elements.collect()), Ty::Array(Box::new(ty.clone()), n), span);
                return Some((ForOver::Array(Box::new(array)), ty, None));
            }
            syn::Expr::Array(_) | syn::Expr::Path(_) | syn::Expr::MethodCall(_) | syn::Expr::Call(_) => {
                let value = self.expr(e);
                return match self.resolve(&value.ty) {
                    Ty::Array(elem, _) => Some((ForOver::Array(Box::new(value)), *elem, None)),
                    Ty::Error => None,
                    _ => {
                        self.error(e, HELP);
                        None
                    }
                };
            }
            _ => {
                self.error(e, HELP);
                return None;
            }
        };
        let (Some(start), Some(end)) = (&range.start, &range.end) else {
            self.error(range, "a `for` loop needs both bounds: `for i in 0..N`");
            return None;
        };
        let start_e = self.expr(start);
        let end_e = self.expr(end);
        let ty = self.unify(&start_e.ty, &end_e.ty, end_e.span);
        let mut bounds = [0u128; 2];
        for (i, (e, node)) in [(&start_e, start), (&end_e, end)].into_iter().enumerate() {
            match fold(e) {
                Some(v) => bounds[i] = v,
                None => self.error(
                    node,
                    "the bounds of a `for` loop must be constants (literals or `const`s), so the loop can be unrolled or \
                     counted in hardware; loop to the largest possible bound and `break` early",
                ),
            }
        }
        let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
        let end_v = if inclusive { bounds[1].wrapping_add(1) } else { bounds[1] };
        let max = (end_v > bounds[0]).then(|| end_v - 1);
        Some((ForOver::Range { start: bounds[0], end: end_v, rev }, ty, max))
    }

    fn cast(&mut self, c: &syn::ExprCast) -> Expr {
        let span = c.span();
        let arg = self.expr(&c.expr);
        let target = self.cx.resolve_type(&c.ty, TypeCtx::Value);
        match &target {
            Ty::Int(t) if t.is_primitive() => {}
            Ty::Int(t) => {
                self.error(
                    &c.ty,
                    format!("`as` converts to primitive integers only; make a `{t}` with `{t}::new(…)` or `{t}::masked_new(…)`"),
                );
                return Self::bad(span);
            }
            Ty::Error => return Self::bad(span),
            other => {
                self.error(
                    &c.ty,
                    format!("`as` converts to integers (from integers, `bool` or fieldless enums), not to `{other}`"),
                );
                return Self::bad(span);
            }
        }
        match self.resolve(&arg.ty) {
            Ty::Var(_) => {
                self.unify(&target, &arg.ty, arg.span);
            }
            Ty::Int(i) if !i.is_primitive() => {
                self.error(
                    &c.expr,
                    format!("`as` converts primitive integers; take a `{i}`'s value with `.value()` first"),
                );
            }
            Ty::Int(_) | Ty::Bool | Ty::Enum(_) | Ty::DropReason | Ty::Error => {}
            other => self.error(&c.expr, format!("a `{other}` cannot be converted with `as`")),
        }
        mk(ExprKind::Cast(Box::new(arg)), target, span)
    }

    fn field(&mut self, f: &syn::ExprField) -> Expr {
        let span = f.span();
        if is_self(&f.base) {
            if self.receiver.is_none() {
                self.error(f, "`self` is not available in a function without a `self` parameter; make it a method (`fn f(&self, …)`)");
                return Self::bad(span);
            }
            let syn::Member::Named(name) = &f.member else {
                self.error(f, "the state struct's fields have names");
                return Self::bad(span);
            };
            let name = name.to_string();
            if let Some(t) = self.value_field(&name) {
                return mk(ExprKind::SelfField(name), t, span);
            }
            if self.element_of(&name).is_some() {
                self.error(
                    f,
                    format!(
                        "the state element `self.{name}` is not a value: call one of its methods (`self.{name}.get(…)`)"
                    ),
                );
            } else if !self.cx.refused_fields.contains(&name) {
                self.error(f, format!("the state struct has no field `{name}`"));
            }
            return Self::bad(span);
        }
        let base = self.expr(&f.base);
        let bty = self.resolve(&base.ty);
        match (&bty, &f.member) {
            (Ty::Error, _) => Self::bad(span),
            (Ty::Meta, syn::Member::Named(n)) => {
                let lib = self.cx.lib;
                match lib.meta.iter().find(|(m, _)| n == m) {
                    Some((m, t)) => mk(ExprKind::MetaField(m), t.clone(), span),
                    None => {
                        let known = lib.meta.iter().map(|(m, _)| format!("`{m}`")).collect::<Vec<_>>().join(", ");
                        self.error(&f.member, format!("`Meta` has no field `{n}`; it has {known}"));
                        Self::bad(span)
                    }
                }
            }
            (Ty::Tuple(elems), syn::Member::Unnamed(i)) if (i.index as usize) < elems.len() => {
                let t = elems[i.index as usize].clone();
                mk(ExprKind::Field { base: Box::new(base), index: i.index }, t, span)
            }
            (Ty::Struct(sname, fields), syn::Member::Named(n)) => {
                match fields.iter().position(|(fname, _)| n == fname) {
                    Some(k) => {
                        let t = fields[k].1.clone();
                        mk(ExprKind::Field { base: Box::new(base), index: k as u32 }, t, span)
                    }
                    None => {
                        let known = fields.iter().map(|(n, _)| format!("`{n}`")).collect::<Vec<_>>().join(", ");
                        self.error(&f.member, format!("`{sname}` has no field `{n}`; it has {known}"));
                        Self::bad(span)
                    }
                }
            }
            (Ty::Mac | Ty::Ipv4Addr | Ty::PortMask, syn::Member::Unnamed(i)) if i.index == 0 => {
                let inner = match bty {
                    Ty::Mac => Ty::uint(48),
                    _ => Ty::uint(32),
                };
                mk(ExprKind::Field { base: Box::new(base), index: 0 }, inner, span)
            }
            _ => {
                self.error(&f.member, format!("a `{bty}` has no field `{}`", f.member.to_token_stream()));
                Self::bad(span)
            }
        }
    }

    /// `pkt.window()[i]` / `pkt.window_mut()[i]`: the constant index and whether it is the
    /// `_mut` window, or `None` after an error.
    fn window_index(&mut self, i: &syn::ExprIndex) -> Option<(u64, bool)> {
        let mutable = match &*i.expr {
            syn::Expr::MethodCall(m) if m.args.is_empty() && (m.method == "window" || m.method == "window_mut") => {
                let recv = self.expr(&m.receiver);
                if !matches!(self.resolve(&recv.ty), Ty::Packet { .. } | Ty::Error) {
                    self.error(&i.expr, "indexing is only in the subset for the packet's window: `pkt.window()[3]`");
                    return None;
                }
                m.method == "window_mut"
            }
            other if self_field(other).is_some_and(|f| self.cx.refused_fields.contains(&f)) => return None,
            syn::Expr::Path(p) if p.path.get_ident().is_some_and(|n| self.lookup(&n.to_string()).is_some()) => {
                self.error(
                    i,
                    "an element of an array is not assigned in the subset (arrays are values); build a new array \
                     (`let a = [x, a[1]];`), or keep the data in an `Array<T, N>` state element",
                );
                let _ = self.expr(&i.index);
                return None;
            }
            other => {
                self.error(
                    other,
                    "indexing is only in the subset for the packet's window at a constant position (`pkt.window()[3]`); \
                     read bytes with `pkt.byte(i)`, indexed state with `Array<T, N>`",
                );
                let _ = self.expr(&i.index);
                return None;
            }
        };
        let index = self.expr(&i.index);
        self.unify(&Ty::USIZE, &index.ty, index.span);
        let window = self.cx.opts.window as u128;
        match fold(&index) {
            None => {
                self.error(
                    i,
                    "indexing the window at a computed position panics on the CPU when the position is past the frame's \
                     end, and hardware cannot panic; write `pkt.byte(i)` (reads 0 past the end) or `pkt.set_byte(i, v)` \
                     (drops the write)",
                );
                None
            }
            Some(at) if at >= window => {
                self.error(
                    i,
                    format!(
                        "byte {at} is past the {window}-byte header window, where indexing always panics on the CPU; \
                         enlarge the window (`#[emu::nf(window = …)]`) or write `pkt.byte({at})`, which reads 0"
                    ),
                );
                None
            }
            Some(at) if at >= GUARANTEED_BYTES => {
                self.error(
                    i,
                    format!(
                        "byte {at} may be past the end of a short frame (only the 14-byte Ethernet header is \
                         guaranteed), where indexing panics on the CPU and hardware cannot panic; write `pkt.byte({at})` \
                         (reads 0 past the end) or `pkt.set_byte({at}, v)`"
                    ),
                );
                None
            }
            Some(at) => Some((at as u64, mutable)),
        }
    }

    fn index(&mut self, i: &syn::ExprIndex) -> Expr {
        let span = i.span();
        if let syn::Expr::Path(p) = strip_parens(&i.expr) {
            if let Some(name) = p.path.get_ident().map(|x| x.to_string()).filter(|n| self.cx.is_const_array(n)) {
                return self.table_lookup(&name, p, &i.index, span);
            }
        }
        let window = matches!(strip_parens(&i.expr),
            syn::Expr::MethodCall(m) if m.method == "window" || m.method == "window_mut");
        if !window && self_field(&i.expr).is_none() {
            let base = self.expr(&i.expr);
            let index = self.expr(&i.index);
            self.unify(&Ty::USIZE, &index.ty, index.span);
            return match self.resolve(&base.ty) {
                Ty::Array(elem, n) => {
                    let what = i.expr.to_token_stream().to_string();
                    if !self.index_inside(&index, &i.index, &what, n as u128) {
                        return Self::bad(span);
                    }
                    mk(ExprKind::Index { base: Box::new(base), index: Box::new(index) }, *elem, span)
                }
                Ty::Error => Self::bad(span),
                other => {
                    self.error(
                        &i.expr,
                        format!(
                            "a `{other}` cannot be indexed; indexing is for arrays, constant arrays and the packet's \
                             window at a constant position (`pkt.window()[3]`); read bytes with `pkt.byte(i)`, indexed \
                             state with `Array<T, N>`"
                        ),
                    );
                    Self::bad(span)
                }
            };
        }
        match self.window_index(i) {
            Some((at, _)) => mk(ExprKind::WindowByte(at), Ty::uint(8), span),
            None => Self::bad(span),
        }
    }

    /// `Flow { src, dst: x, … }` of a module struct: every field once, in any order; the value
    /// is its fields in declaration order.
    fn struct_literal(&mut self, s: &syn::ExprStruct) -> Expr {
        let span = s.span();
        let name = s.path.segments.last().map(|x| x.ident.to_string()).unwrap_or_default();
        let fields = match (s.path.segments.len(), self.cx.items.structs.contains_key(&name)) {
            (1, true) if name != self.cx.state.name => self.cx.module_struct(&name),
            _ => {
                self.error(
                    &s.path,
                    "a struct literal in hardware builds a struct of this module with fixed-width fields \
                     (`Flow { src, dst }`)",
                );
                None
            }
        };
        let values: Vec<(String, Expr, &syn::FieldValue)> = s
            .fields
            .iter()
            .map(|fv| {
                let n = match &fv.member {
                    syn::Member::Named(i) => i.to_string(),
                    syn::Member::Unnamed(i) => i.index.to_string(),
                };
                (n, self.expr(&fv.expr), fv)
            })
            .collect();
        let Some(fields) = fields else { return Self::bad(span) };
        if let Some(rest) = &s.rest {
            self.error(rest, format!("write every field of `{name}`; `..` is not in the subset"));
            return Self::bad(span);
        }
        let mut ordered = Vec::with_capacity(fields.len());
        let mut ok = true;
        for (fname, fty) in &fields {
            match values.iter().find(|(n, ..)| n == fname) {
                Some((_, e, _)) => {
                    self.unify(fty, &e.ty, e.span);
                    ordered.push(e.clone());
                }
                None => {
                    self.error(s, format!("missing field `{fname}` of `{name}`"));
                    ok = false;
                }
            }
        }
        for (n, _, fv) in &values {
            if !fields.iter().any(|(f, _)| f == n) {
                self.error(&fv.member, format!("`{name}` has no field `{n}`"));
                ok = false;
            }
        }
        if !ok {
            return Self::bad(span);
        }
        mk(ExprKind::Tuple(ordered), Ty::Struct(name, fields), span)
    }

    /// `NAME[index]` of a constant array: the index must provably stay inside it, since the
    /// CPU panics past the end and hardware cannot.
    fn table_lookup(&mut self, name: &str, at: &syn::ExprPath, index: &syn::Expr, span: Span) -> Expr {
        let idx = self.expr(index);
        self.unify(&Ty::USIZE, &idx.ty, idx.span);
        let Some((ty, values)) = self.cx.module_const_array(name, at) else {
            return Self::bad(span);
        };
        if !self.index_inside(&idx, index, name, values.len() as u128) {
            return Self::bad(span);
        }
        mk(ExprKind::Lookup { name: name.to_string(), values, index: Box::new(idx) }, ty, span)
    }

    /// Whether index `idx` (written `node`) of the `len`-element array `name` provably stays
    /// inside; if not, says so: the CPU panics past the end and hardware cannot.
    fn index_inside(&mut self, idx: &Expr, node: &syn::Expr, name: &str, len: u128) -> bool {
        if matches!(self.resolve(&idx.ty), Ty::Error) {
            return false;
        }
        let largest = self.largest(idx);
        if largest.is_some_and(|m| m < len) {
            return true;
        }
        let can = match largest {
            Some(m) => format!("can be up to {m}"),
            None => "is not known to be small enough".to_string(),
        };
        self.error(
            node,
            format!(
                "this index {can}, past the end of `{name}` ({len} elements): that panics on the CPU, and hardware \
                 cannot panic; keep it inside, e.g. `{name}[i % {len}]`{}, or loop over the array (`for x in {name}`)",
                if len.is_power_of_two() { format!(" or `{name}[i & {}]`", len - 1) } else { String::new() }
            ),
        );
        false
    }

    /// The largest value `e` can have, when the checker can bound it: constants, loop
    /// variables over a range, a mask, a remainder or a shift by a constant, and the type.
    fn largest(&self, e: &Expr) -> Option<u128> {
        if let Some(v) = fold(e) {
            return Some(v);
        }
        let of_type = match self.resolve(&e.ty) {
            Ty::Int(i) if !i.signed => Some(if i.bits >= 128 { u128::MAX } else { (1u128 << i.bits) - 1 }),
            Ty::Bool => Some(1),
            _ => None,
        };
        let found = match &e.kind {
            ExprKind::Local(id) => self.maxima.get(id).copied(),
            ExprKind::Cast(inner) => match self.resolve(&inner.ty) {
                Ty::Int(i) if !i.signed => self.largest(inner),
                Ty::Bool => Some(1),
                _ => None,
            },
            ExprKind::Binary { op: BinOp::BitAnd, lhs, rhs } => tighter(self.largest(lhs), self.largest(rhs)),
            ExprKind::Binary { op: BinOp::Rem, rhs, .. } => fold(rhs).filter(|&d| d > 0).map(|d| d - 1),
            ExprKind::Binary { op: BinOp::Shr, lhs, rhs } => {
                fold(rhs).zip(self.largest(lhs)).map(|(k, m)| if k >= 128 { 0 } else { m >> k })
            }
            _ => None,
        };
        tighter(found, of_type)
    }

    // ---------------------------------------------------------------- calls

    fn args(
        &mut self,
        args: &Punctuated<syn::Expr, syn::Token![,]>,
        want: &[Ty],
        node: &dyn ToTokens,
        what: &str,
    ) -> Vec<Expr> {
        let checked: Vec<Expr> = args.iter().map(|a| self.expr(a)).collect();
        if checked.len() != want.len() {
            self.error(node, format!("{what} takes {} argument(s), {} given", want.len(), checked.len()));
            return checked;
        }
        for (a, w) in checked.iter().zip(want) {
            self.unify(w, &a.ty, a.span);
        }
        checked
    }

    #[allow(clippy::too_many_arguments)]
    fn lib_call(
        &mut self,
        op: LibOp,
        mut recv: Option<Expr>,
        sig: &Sig,
        params: &[Ty],
        stand_in: Option<(u16, u16)>,
        args: &Punctuated<syn::Expr, syn::Token![,]>,
        node: &dyn ToTokens,
        what: &str,
        span: Span,
    ) -> Expr {
        let want: Vec<Ty> = sig.args.iter().map(|t| subst(t, params, stand_in)).collect();
        let ret = subst(&sig.ret, params, stand_in);
        let mut all: Vec<Expr> = recv.take().into_iter().collect();
        all.extend(self.args(args, &want, node, what));
        mk(ExprKind::Lib { op, args: all }, ret, span)
    }

    fn call(&mut self, c: &syn::ExprCall) -> Expr {
        let span = c.span();
        let syn::Expr::Path(fp) = &*c.func else {
            self.error(
                &c.func,
                "only functions named by a path can be called in hardware (`f(x)`, `checksum::fold(x)`)",
            );
            for a in &c.args {
                self.expr(a);
            }
            return Self::bad(span);
        };
        if fp.qself.is_some() || fp.path.segments.iter().any(|s| !s.arguments.is_none()) {
            self.error(fp, "generic or qualified function paths are not in the subset");
            return Self::bad(span);
        }
        let segs = path_segments(&fp.path);
        let s: Vec<String> = strip_prefix(&segs).to_vec();
        let strs: Vec<&str> = s.iter().map(|x| x.as_str()).collect();
        let lib = self.cx.lib;
        let full = segs.join("::");
        match strs[..] {
            ["Some" | "Ok" | "Err"] | ["Option", "Some"] | ["Result", "Ok" | "Err"] => {
                let which = *strs.last().unwrap();
                let args = self.args(&c.args, &[Ty::Error], c, &format!("`{which}`"));
                let inner = args.first().map_or(Ty::Error, |a| a.ty.clone());
                let (variant, ty) = match which {
                    "Some" => (Variant::Some, Ty::Option(Box::new(inner))),
                    "Ok" => {
                        let e = self.fresh(false, None);
                        (Variant::Ok, Ty::Result(Box::new(inner), Box::new(e)))
                    }
                    _ => {
                        let o = self.fresh(false, None);
                        (Variant::Err, Ty::Result(Box::new(o), Box::new(inner)))
                    }
                };
                mk(ExprKind::Variant { variant, args }, ty, span)
            }
            [name] if self.cx.items.fns.contains_key(name) => self.module_call(
                FnKey::Free(name.to_string()),
                None,
                &c.args,
                c,
                fp.path.segments.last().unwrap().ident.span(),
                span,
            ),
            [name] if self.lookup(name).is_some() => {
                self.error(&c.func, format!("`{name}` is a value, not a function"));
                Self::bad(span)
            }
            ["Self", name] => self.module_call(
                FnKey::Method(name.to_string()),
                None,
                &c.args,
                c,
                fp.path.segments.last().unwrap().ident.span(),
                span,
            ),
            [ty, name] if ty == self.cx.state.name => self.module_call(
                FnKey::Method(name.to_string()),
                None,
                &c.args,
                c,
                fp.path.segments.last().unwrap().ident.span(),
                span,
            ),
            ["Action", v] => {
                let Some((name, fields)) = lib.actions.iter().find(|(n, _)| *n == v) else {
                    self.error(&c.func, format!("`Action` has no variant `{v}`"));
                    return Self::bad(span);
                };
                if fields.is_empty() {
                    self.error(c, format!("`Action::{v}` has no fields: write `Action::{v}`"));
                    return Self::bad(span);
                }
                let args = self.args(&c.args, fields, c, &format!("`Action::{v}`"));
                mk(ExprKind::Variant { variant: Variant::Action(name), args }, Ty::Action, span)
            }
            [ty, _] if self.cx.items.enums.contains_key(ty) => {
                self.error(c, "the variants of the module's enums have no fields; write `Kind::A`");
                Self::bad(span)
            }
            ["Box" | "Rc" | "Arc", _] => {
                self.error(c, heap(&format!("{}::{}", strs[0], strs[1])));
                Self::bad(span)
            }
            ["Vec", _] => {
                self.error(c, VEC);
                Self::bad(span)
            }
            ["String", _] => {
                self.error(c, STRINGS);
                Self::bad(span)
            }
            ["checksum", f] => match lib.checksum.iter().find(|(n, _)| *n == f) {
                Some((name, sig)) => {
                    let sig = sig.clone();
                    self.lib_call(
                        LibOp::Checksum(name),
                        None,
                        &sig,
                        &[],
                        None,
                        &c.args,
                        c,
                        &format!("`checksum::{f}`"),
                        span,
                    )
                }
                None if CHECKSUM_ON_SLICES.contains(&f) => {
                    self.error(
                        c,
                        format!(
                            "`checksum::{f}` takes byte slices, which are not values in hardware; sum packet bytes with \
                             `pkt.ones_sum(start, end)`, check a header with its view's `checksum_ok()`, and update \
                             checksums with `checksum::update16`"
                        ),
                    );
                    Self::bad(span)
                }
                None => {
                    let known =
                        lib.checksum.iter().map(|(n, _)| format!("`checksum::{n}`")).collect::<Vec<_>>().join(", ");
                    self.error(c, format!("unknown function `{full}`; the checksum helpers are {known}"));
                    Self::bad(span)
                }
            },
            // All zero bytes; `N` from what the value meets (`let key: Bytes<64> = Bytes::default();`).
            ["Bytes", "default"] => {
                if !c.args.is_empty() {
                    self.error(c, "`Bytes::default()` takes no arguments");
                    return Self::bad(span);
                }
                let ty = self.fresh(false, None);
                mk(ExprKind::Lib { op: LibOp::Assoc { ty: "Bytes".into(), name: "default" }, args: vec![] }, ty, span)
            }
            ["PortMask"] | ["PortMask", _] | ["Ipv4Addr"] | ["Ipv4Addr", _] | ["Mac"] => {
                let (ty, name) = (strs[0], strs.get(1).copied().unwrap_or(""));
                match lib.assoc.iter().find(|(t, n, _)| *t == ty && *n == name) {
                    Some((t, n, sig)) => {
                        let sig = sig.clone();
                        self.lib_call(
                            LibOp::Assoc { ty: t.to_string(), name: n },
                            None,
                            &sig,
                            &[],
                            None,
                            &c.args,
                            c,
                            &format!("`{full}`"),
                            span,
                        )
                    }
                    None => {
                        self.unknown_fn(c, &full);
                        Self::bad(span)
                    }
                }
            }
            [ty, name @ ("from_be_bytes" | "from_le_bytes")] if int_type(ty).is_some_and(|t| t.is_primitive()) => {
                let t = int_type(ty).unwrap();
                let n = t.bits as u32 / 8;
                let args: Vec<Expr> = c.args.iter().map(|a| self.expr(a)).collect();
                if args.len() != 1 {
                    let example = (0..n).map(|k| format!("pkt.byte({})", 26 + k)).collect::<Vec<_>>().join(", ");
                    self.error(c, format!("`{ty}::{name}` takes an array of {n} bytes: `{ty}::{name}([{example}])`"));
                    return Self::bad(span);
                }
                self.unify(&Ty::Array(Box::new(Ty::uint(8)), n), &args[0].ty, args[0].span);
                let name = if name == "from_be_bytes" { "from_be_bytes" } else { "from_le_bytes" };
                mk(ExprKind::Lib { op: LibOp::Assoc { ty: ty.to_string(), name }, args }, Ty::Int(t), span)
            }
            [ty, "masked_new"] if int_type(ty).is_some() => {
                let t = int_type(ty).unwrap();
                let args: Vec<Expr> = c.args.iter().map(|a| self.expr(a)).collect();
                if args.len() != 1 {
                    self.error(c, format!("`{ty}::masked_new` takes 1 argument"));
                    return Self::bad(span);
                }
                if !matches!(self.resolve(&args[0].ty), Ty::Int(_) | Ty::Error) {
                    self.error(&c.args[0], "`masked_new` takes an integer of known width (add a suffix to a literal)");
                }
                mk(
                    ExprKind::Lib { op: LibOp::Assoc { ty: ty.to_string(), name: "masked_new" }, args },
                    Ty::Int(t),
                    span,
                )
            }
            [ty, "new"] if int_type(ty).is_some_and(|t| !t.is_primitive()) => {
                let t = int_type(ty).unwrap();
                let (stand, from) = arbitrary_stand_in(t.bits);
                let sig = lib
                    .assoc
                    .iter()
                    .find(|(x, n, _)| *x == stand && *n == "new")
                    .map(|(_, _, s)| s.clone())
                    .expect("stand-in");
                let e = self.lib_call(
                    LibOp::Assoc { ty: ty.to_string(), name: "new" },
                    None,
                    &sig,
                    &[],
                    Some((from, t.bits)),
                    &c.args,
                    c,
                    &format!("`{ty}::new`"),
                    span,
                );
                // `new` panics on a value that does not fit: it must provably fit.
                if let ExprKind::Lib { args, .. } = &e.kind {
                    if let Some(a) = args.first() {
                        let fits = match fold(a) {
                            Some(v) => v <= t.max(),
                            None => matches!(&a.kind, ExprKind::Binary { op: BinOp::BitAnd, lhs, rhs }
                                if fold(rhs).or_else(|| fold(lhs)).is_some_and(|m| m <= t.max())),
                        };
                        if !fits {
                            self.error(
                                &c.args,
                                format!(
                                    "`{ty}::new` panics when the value does not fit in {} bits, and hardware cannot panic; \
                                     pass a constant that fits, mask the value (`{ty}::new(x & {:#x})`), or write \
                                     `{ty}::masked_new(x)`",
                                    t.bits,
                                    t.max()
                                ),
                            );
                        }
                    }
                }
                e
            }
            _ => {
                self.unknown_fn(c, &full);
                for a in &c.args {
                    self.expr(a);
                }
                Self::bad(span)
            }
        }
    }

    fn unknown_fn(&mut self, node: &dyn ToTokens, name: &str) {
        self.error(
            node,
            format!(
                "unknown function `{name}`: hardware can call the functions of this NF module, the library's checksum \
                 helpers (`checksum::fold`, `checksum::update16`, …) and constructors (`Ipv4Addr::new`, \
                 `PortMask::single`, `u4::new`); write the computation out, or as a function of this module"
            ),
        );
    }

    /// A call of a function of the module; `with_self` is the receiver of a method call,
    /// `name` the callee's name in the source (what a recursion error points at).
    #[allow(clippy::too_many_arguments)]
    fn module_call(
        &mut self,
        key: FnKey,
        with_self: Option<&syn::Expr>,
        args: &Punctuated<syn::Expr, syn::Token![,]>,
        node: &dyn ToTokens,
        name: Span,
        span: Span,
    ) -> Expr {
        let exists = match &key {
            FnKey::Process => true,
            FnKey::Method(n) => n == "process" || self.cx.items.methods.contains_key(n),
            FnKey::Free(n) => self.cx.items.fns.contains_key(n),
        };
        let key = match key {
            FnKey::Method(n) if n == "process" => FnKey::Process,
            k => k,
        };
        if !exists {
            let what = match &key {
                FnKey::Method(n) => format!(
                    "unknown method `{n}` of `self`: `{}` has no such method in this module (trait methods other than \
                     `process` are not in the subset)",
                    self.cx.state.name
                ),
                _ => format!("unknown function `{}`", key.name()),
            };
            self.error(node, what);
            for a in args {
                self.expr(a);
            }
            return Self::bad(span);
        }
        let Some(sig) = self.cx.signature(&key) else {
            for a in args {
                self.expr(a);
            }
            return Self::bad(span);
        };
        match (with_self.is_some(), sig.receiver) {
            (true, None) => {
                self.error(node, format!("`{}` takes no `self`: call it as `Self::{}(…)`", key.name(), key.name()))
            }
            (false, Some(_)) => {
                self.error(node, format!("`{}` is a method: call it as `self.{}(…)`", key.name(), key.name()))
            }
            _ => {}
        }
        let want: Vec<Ty> = sig.params.iter().map(|(_, t, _)| t.clone()).collect();
        let args = self.args(args, &want, node, &format!("`{}`", key.name()));
        let func = self.cx.fn_index(key);
        self.calls.push((func, name));
        mk(ExprKind::Call { func, args }, sig.ret, span)
    }

    fn method_call(&mut self, m: &syn::ExprMethodCall) -> Expr {
        let span = m.span();
        if let Some(t) = &m.turbofish {
            self.error(t, "turbofish (`::<T>`) is not in the subset; annotate the binding instead");
            return Self::bad(span);
        }
        let name = m.method.to_string();
        if (is_self(&m.receiver) || self_field(&m.receiver).is_some()) && self.receiver.is_none() {
            self.error(
                &m.receiver,
                "`self` is not available in a function without a `self` parameter; make it a method (`fn f(&self, …)`)",
            );
            return Self::bad(span);
        }
        if is_self(&m.receiver) {
            return self.module_call(FnKey::Method(name), Some(&m.receiver), &m.args, m, m.method.span(), span);
        }
        if let Some(field) = self_field(&m.receiver) {
            if let Some(el) = self.element_of(&field) {
                return self.state_call(field, el, &name, &m.args, m, None, span);
            }
        }
        let recv = self.expr(&m.receiver);
        let rty = self.resolve(&recv.ty);
        match rty {
            Ty::Error => {
                for a in &m.args {
                    self.expr(a);
                }
                Self::bad(span)
            }
            Ty::StateRef { field, .. } => {
                let alias = match &recv.kind {
                    ExprKind::Local(id) => Some(self.locals[id.0 as usize].name.clone()),
                    _ => None,
                };
                match self.element_of(&field) {
                    Some(el) => self.state_call(field, el, &name, &m.args, m, alias, span),
                    None => Self::bad(span),
                }
            }
            Ty::Packet { .. } => self.packet_call(recv, &name, m, span),
            Ty::View { header, mutable } => self.view_call(recv, header, mutable, &name, m, span),
            Ty::Var(v) => {
                self.unresolved(v);
                Self::bad(span)
            }
            other => self.value_call(recv, other, &name, m, span),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn state_call(
        &mut self,
        field: String,
        el: Element,
        name: &str,
        args: &Punctuated<syn::Expr, syn::Token![,]>,
        node: &syn::ExprMethodCall,
        alias: Option<String>,
        span: Span,
    ) -> Expr {
        let lib = self.cx.lib;
        let methods = lib.element_methods(el.kind);
        let Some(method) = methods.iter().find(|x| x.name == name) else {
            let kind = el.kind.name();
            let message = if matches!(name, "entries" | "iter" | "keys_by_recency") {
                format!(
                    "`{kind}::{name}` walks the whole element, which is not a per-packet operation in hardware; look \
                     entries up by key or index ({})",
                    names(methods)
                )
            } else {
                format!("unknown method `{name}` of a `{kind}`; its methods are {}", names(methods))
            };
            self.error(&node.method, message);
            for a in args {
                self.expr(a);
            }
            return Self::bad(span);
        };
        if alias.is_none() {
            let live =
                self.scopes.iter().flat_map(|s| &s.aliases).find(|a| a.field == field && (a.mutable || method.writes));
            if let Some(a) = live {
                let message = format!(
                    "`self.{field}` is used here while `{}`, a{} alias of it, is still in scope; one state element has one \
                     writer at a time: use `{}`, or end its block first",
                    a.name,
                    if a.mutable { " `&mut`" } else { " shared" },
                    a.name
                );
                self.error(&node.receiver, message);
            }
        }
        let op = LibOp::State { field, element: el.kind, method: method.name, writes: method.writes };
        let sig = method.sig.clone();
        self.lib_call(op, None, &sig, &el.types, None, args, node, &format!("`{}::{name}`", el.kind.name()), span)
    }

    fn packet_call(&mut self, recv: Expr, name: &str, m: &syn::ExprMethodCall, span: Span) -> Expr {
        let lib = self.cx.lib;
        if let Some(method) = lib.packet.iter().find(|x| x.name == name) {
            let sig = method.sig.clone();
            return self.lib_call(
                LibOp::Packet(method.name),
                Some(recv),
                &sig,
                &[],
                None,
                &m.args,
                m,
                &format!("`Packet::{name}`"),
                span,
            );
        }
        if let Some((header, at, mutable)) = view_of(lib, name) {
            let offset = if at {
                let a = self.args(&m.args, &[Ty::USIZE], m, &format!("`Packet::{name}`"));
                a.into_iter().next().unwrap_or_else(|| Self::bad(span))
            } else {
                self.args(&m.args, &[], m, &format!("`Packet::{name}`"));
                let off = lib.header(header).and_then(|h| h.packet_offset).unwrap_or(0);
                mk(ExprKind::Int(off as u128), Ty::USIZE, span)
            };
            return mk(
                ExprKind::Lib { op: LibOp::View { header, mutable }, args: vec![recv, offset] },
                Ty::View { header, mutable },
                span,
            );
        }
        let message = match name {
            "window" | "window_mut" | "window_from" | "window_from_mut" => format!(
                "`pkt.{name}()` is a slice of the window, which is not a value in hardware; read bytes with \
                 `pkt.byte(i)`, write them with `pkt.set_byte(i, v)`, or use a header view"
            ),
            _ => {
                let views: Vec<String> =
                    lib.headers.iter().filter(|h| h.packet_offset.is_some()).map(|h| format!("`{}`", h.name)).collect();
                format!(
                    "unknown method `{name}` of `Packet`; its methods are {}, and the header views {} (each also as \
                     `_mut`, `_at(offset)` and `_at_mut(offset)`)",
                    names(&lib.packet),
                    views.join(", ")
                )
            }
        };
        self.error(&m.method, message);
        Self::bad(span)
    }

    fn view_call(
        &mut self,
        recv: Expr,
        header: &'static str,
        mutable: bool,
        name: &str,
        m: &syn::ExprMethodCall,
        span: Span,
    ) -> Expr {
        let lib = self.cx.lib;
        let Some(h) = lib.header(header) else { return Self::bad(span) };
        if let Some((field, ty, _, _)) = h.fields.iter().find(|(f, ..)| *f == name) {
            self.args(&m.args, &[], m, &format!("`{header}::{name}`"));
            return mk(ExprKind::Lib { op: LibOp::GetField { header, field }, args: vec![recv] }, ty.clone(), span);
        }
        if let Some((field, ty, _, _)) = name.strip_prefix("set_").and_then(|f| h.fields.iter().find(|(x, ..)| *x == f))
        {
            if !mutable {
                self.error(
                    &m.method,
                    format!("`{name}` writes the packet: take the view with `pkt.{header}_mut()` (or `_at_mut`)"),
                );
            }
            let sig = Sig { args: vec![ty.clone()], ret: Ty::unit() };
            return self.lib_call(
                LibOp::SetField { header, field },
                Some(recv),
                &sig,
                &[],
                None,
                &m.args,
                m,
                &format!("`{header}::{name}`"),
                span,
            );
        }
        if let Some(method) = h.methods.iter().find(|x| x.name == name) {
            if method.writes && !mutable {
                self.error(
                    &m.method,
                    format!("`{name}` writes the packet: take the view with `pkt.{header}_mut()` (or `_at_mut`)"),
                );
            }
            let sig = method.sig.clone();
            return self.lib_call(
                LibOp::ViewMethod { header, method: method.name },
                Some(recv),
                &sig,
                &[],
                None,
                &m.args,
                m,
                &format!("`{header}::{name}`"),
                span,
            );
        }
        let message = if matches!(name, "payload" | "as_bytes" | "as_bytes_mut" | "header_bytes" | "into_inner") {
            format!(
                "`{name}` returns a slice of the packet, which is not a value in hardware; read bytes with `pkt.byte(i)` \
                 or a view of the next header (`pkt.udp_at(offset)`)"
            )
        } else {
            let fields: Vec<String> = h.fields.iter().map(|(f, ..)| format!("`{f}`")).collect();
            let extra = if h.methods.is_empty() { String::new() } else { format!(", and {}", names(&h.methods)) };
            format!(
                "unknown method `{name}` of the `{header}` header view; it has the getters {}, their `set_` setters \
                 on `_mut` views{extra}",
                fields.join(", ")
            )
        };
        self.error(&m.method, message);
        Self::bad(span)
    }

    fn value_call(&mut self, recv: Expr, rty: Ty, name: &str, m: &syn::ExprMethodCall, span: Span) -> Expr {
        let lib = self.cx.lib;
        let (key, params, stand_in): (String, Vec<Ty>, Option<(u16, u16)>) = match &rty {
            Ty::Int(i) if i.is_primitive() => (i.to_string(), vec![], None),
            Ty::Int(i) => {
                let (stand, from) = arbitrary_stand_in(i.bits);
                (stand.to_string(), vec![], Some((from, i.bits)))
            }
            Ty::Mac => ("Mac".into(), vec![], None),
            Ty::PortMask => ("PortMask".into(), vec![], None),
            Ty::Option(t) => ("Option".into(), vec![(**t).clone()], None),
            Ty::Result(t, e) => ("Result".into(), vec![(**t).clone(), (**e).clone()], None),
            Ty::Bytes(_) => ("Bytes".into(), vec![], None),
            _ => (rty.to_string(), vec![], None),
        };
        let methods = lib.value_methods(&key);
        let Some(method) = methods.iter().find(|x| x.name == name) else {
            let message = if methods.is_empty() {
                format!("unknown method `{name}`: a `{rty}` has no methods in the subset")
            } else {
                format!("unknown method `{name}` of `{rty}`; the subset knows {}", names(methods))
            };
            self.error(&m.method, message);
            for a in &m.args {
                self.expr(a);
            }
            return Self::bad(span);
        };
        let type_name = match &rty {
            Ty::Option(_) => "Option".to_string(),
            Ty::Result(..) => "Result".to_string(),
            Ty::Bytes(_) => "Bytes".to_string(),
            other => other.to_string(),
        };
        // A value method that writes (`Bytes::set_byte`) changes a binding: the lowering
        // assigns the new value to it.
        if method.writes && !matches!(recv.kind, ExprKind::Local(_)) {
            self.error(
                &m.receiver,
                format!("`{name}` changes the value it is called on: call it on a `let mut` binding (`key.{name}(…)`)"),
            );
            for a in &m.args {
                self.expr(a);
            }
            return Self::bad(span);
        }
        let sig = method.sig.clone();
        self.lib_call(
            LibOp::Method { ty: type_name, method: method.name },
            Some(recv),
            &sig,
            &params,
            stand_in,
            &m.args,
            m,
            &format!("`{rty}::{name}`"),
            span,
        )
    }

    // ---------------------------------------------------------------- patterns

    fn pat(&mut self, p: &syn::Pat, ty: &Ty) -> Pat {
        let span = p.span();
        let bad = |ty: &Ty| Pat { kind: PatKind::Wild, ty: ty.clone(), span };
        match p {
            syn::Pat::Wild(_) => Pat { kind: PatKind::Wild, ty: ty.clone(), span },
            syn::Pat::Paren(inner) => self.pat(&inner.pat, ty),
            syn::Pat::Ident(i) => {
                if i.by_ref.is_some() || i.subpat.is_some() {
                    self.error(i, "`ref` and `@` patterns are not in the subset; bind by value with a plain name");
                    return bad(ty);
                }
                let name = i.ident.to_string();
                if name == "None" {
                    let inner = self.fresh(false, None);
                    self.unify(ty, &Ty::Option(Box::new(inner)), span);
                    return Pat {
                        kind: PatKind::Variant { variant: Variant::None, args: vec![] },
                        ty: ty.clone(),
                        span,
                    };
                }
                if self.cx.items.consts.contains_key(&name) {
                    if let Some((cty, v)) = self.cx.module_const(&name, i) {
                        self.unify(ty, &cty, span);
                        return Pat { kind: PatKind::Int(v), ty: ty.clone(), span };
                    }
                    return bad(ty);
                }
                let id = self.declare(&name, ty.clone(), i.mutability.is_some(), i.ident.span());
                Pat { kind: PatKind::Bind(id), ty: ty.clone(), span }
            }
            syn::Pat::Lit(l) => match self.pat_value(&syn::Expr::Lit(l.clone()), ty) {
                Some(v) => v,
                None => bad(ty),
            },
            syn::Pat::Range(r) => {
                let lo = r.start.as_ref().and_then(|e| self.pat_const(e, ty));
                let hi = r.end.as_ref().and_then(|e| self.pat_const(e, ty));
                match (lo, hi) {
                    (Some(lo), Some(hi)) => Pat {
                        kind: PatKind::Range { lo, hi, inclusive: matches!(r.limits, syn::RangeLimits::Closed(_)) },
                        ty: ty.clone(),
                        span,
                    },
                    _ => {
                        if r.start.is_none() || r.end.is_none() {
                            self.error(r, "write both ends of a range pattern: `1..=9`");
                        }
                        bad(ty)
                    }
                }
            }
            syn::Pat::Path(pp) => {
                let segs = path_segments(&pp.path);
                let s = strip_prefix(&segs).to_vec();
                if s.len() == 2 {
                    if let Some(e) = self.variant_path(&s, pp, span) {
                        self.unify(ty, &e.ty, span);
                        return match e.kind {
                            ExprKind::Variant { variant, .. } => {
                                Pat { kind: PatKind::Variant { variant, args: vec![] }, ty: ty.clone(), span }
                            }
                            _ => bad(ty),
                        };
                    }
                }
                match self.pat_value(&syn::Expr::Path(pp.clone()), ty) {
                    Some(v) => v,
                    None => bad(ty),
                }
            }
            syn::Pat::TupleStruct(ts) => {
                let segs = path_segments(&ts.path);
                let s = strip_prefix(&segs).to_vec();
                let strs: Vec<&str> = s.iter().map(|x| x.as_str()).collect();
                let lib = self.cx.lib;
                let (variant, fields): (Variant, Vec<Ty>) = match strs[..] {
                    ["Some"] | ["Option", "Some"] => {
                        let inner = self.fresh(false, None);
                        let t = self.unify(ty, &Ty::Option(Box::new(inner.clone())), span);
                        let inner = match self.resolve(&t) {
                            Ty::Option(x) => *x,
                            _ => Ty::Error,
                        };
                        (Variant::Some, vec![inner])
                    }
                    ["Ok"] | ["Err"] | ["Result", "Ok" | "Err"] => {
                        let (a, b) = (self.fresh(false, None), self.fresh(false, None));
                        let t = self.unify(ty, &Ty::Result(Box::new(a), Box::new(b)), span);
                        let (ok, err) = match self.resolve(&t) {
                            Ty::Result(x, y) => (*x, *y),
                            _ => (Ty::Error, Ty::Error),
                        };
                        if *strs.last().unwrap() == "Ok" {
                            (Variant::Ok, vec![ok])
                        } else {
                            (Variant::Err, vec![err])
                        }
                    }
                    ["Action", v] => match lib.actions.iter().find(|(n, _)| *n == v) {
                        Some((n, f)) => {
                            self.unify(ty, &Ty::Action, span);
                            (Variant::Action(n), f.clone())
                        }
                        None => {
                            self.error(&ts.path, format!("`Action` has no variant `{v}`"));
                            return bad(ty);
                        }
                    },
                    _ => {
                        self.error(&ts.path, format!("unknown pattern `{}(…)`", segs.join("::")));
                        return bad(ty);
                    }
                };
                if ts.elems.len() != fields.len() {
                    self.error(ts, format!("this variant has {} field(s)", fields.len()));
                    return bad(ty);
                }
                let args = ts.elems.iter().zip(&fields).map(|(p, t)| self.pat(p, t)).collect();
                Pat { kind: PatKind::Variant { variant, args }, ty: ty.clone(), span }
            }
            syn::Pat::Tuple(t) => {
                let elems: Vec<Ty> = match self.resolve(ty) {
                    Ty::Tuple(v) if v.len() == t.elems.len() => v,
                    Ty::Error => vec![Ty::Error; t.elems.len()],
                    Ty::Var(_) => {
                        let fresh: Vec<Ty> = (0..t.elems.len()).map(|_| self.fresh(false, None)).collect();
                        self.unify(ty, &Ty::Tuple(fresh.clone()), span);
                        fresh
                    }
                    other => {
                        self.error(
                            t,
                            format!("a tuple pattern of {} elements cannot match a `{other}`", t.elems.len()),
                        );
                        return bad(ty);
                    }
                };
                let pats = t.elems.iter().zip(&elems).map(|(p, e)| self.pat(p, e)).collect();
                Pat { kind: PatKind::Tuple(pats), ty: ty.clone(), span }
            }
            syn::Pat::Slice(sl) => {
                let n = sl.elems.len() as u32;
                let elem = match self.resolve(ty) {
                    Ty::Array(e, m) if m == n => *e,
                    Ty::Error => Ty::Error,
                    Ty::Var(_) => {
                        let e = self.fresh(false, None);
                        self.unify(ty, &Ty::Array(Box::new(e.clone()), n), span);
                        e
                    }
                    other => {
                        self.error(sl, format!("an array pattern of {n} elements cannot match a `{other}`"));
                        return bad(ty);
                    }
                };
                let pats = sl.elems.iter().map(|p| self.pat(p, &elem)).collect();
                Pat { kind: PatKind::Tuple(pats), ty: ty.clone(), span }
            }
            syn::Pat::Or(o) => {
                let before = self.locals.len();
                let alts: Vec<Pat> = o.cases.iter().map(|c| self.pat(c, ty)).collect();
                if self.locals.len() != before {
                    self.error(o, "bindings inside `|` patterns are not in the subset; write one arm per alternative");
                }
                Pat { kind: PatKind::Or(alts), ty: ty.clone(), span }
            }
            syn::Pat::Type(t) => {
                self.error(t, "type annotations in patterns are only for `let x: T = …`");
                bad(ty)
            }
            other => {
                self.error(
                    other,
                    "this pattern is not in the subset; match on integers, `bool`, `Option`, `Action`, `DropReason`, \
                     module enums and tuples",
                );
                bad(ty)
            }
        }
    }

    /// A literal or constant pattern.
    fn pat_value(&mut self, e: &syn::Expr, ty: &Ty) -> Option<Pat> {
        let span = e.span();
        let v = self.expr(e);
        if matches!(v.ty, Ty::Error) {
            return None;
        }
        self.unify(ty, &v.ty, span);
        let kind = match (&v.kind, fold(&v)) {
            (ExprKind::Bool(b), _) => PatKind::Bool(*b),
            (_, Some(x)) => PatKind::Int(x),
            _ => {
                self.error(e, "a pattern must be a constant");
                return None;
            }
        };
        Some(Pat { kind, ty: ty.clone(), span })
    }

    fn pat_const(&mut self, e: &syn::Expr, ty: &Ty) -> Option<u128> {
        match self.pat_value(e, ty)?.kind {
            PatKind::Int(v) => Some(v),
            _ => None,
        }
    }

    // ---------------------------------------------------------------- resolving types

    fn zonk_block(&mut self, b: &mut Block) {
        b.ty = self.zonk(&b.ty);
        for s in &mut b.stmts {
            match s {
                Stmt::Let { pat, init, els } => {
                    if let Some(e) = init {
                        self.zonk_expr(e);
                    }
                    self.zonk_pat(pat);
                    if let Some(els) = els {
                        self.zonk_block(els);
                    }
                }
                Stmt::Expr(e) => self.zonk_expr(e),
            }
        }
        if let Some(t) = &mut b.tail {
            self.zonk_expr(t);
        }
    }

    fn zonk_expr(&mut self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Int(_)
            | ExprKind::Bool(_)
            | ExprKind::Const { .. }
            | ExprKind::Local(_)
            | ExprKind::SelfField(_)
            | ExprKind::MetaField(_)
            | ExprKind::WindowByte(_)
            | ExprKind::Borrow { .. }
            | ExprKind::Break
            | ExprKind::Continue => {}
            ExprKind::Field { base, .. } => self.zonk_expr(base),
            ExprKind::Unary { arg, .. }
            | ExprKind::Cast(arg)
            | ExprKind::Lookup { index: arg, .. }
            | ExprKind::Repeat { value: arg, .. } => self.zonk_expr(arg),
            ExprKind::Index { base, index } => {
                self.zonk_expr(base);
                self.zonk_expr(index);
            }
            ExprKind::Array(v) => {
                for x in v {
                    self.zonk_expr(x);
                }
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                self.zonk_expr(lhs);
                self.zonk_expr(rhs);
            }
            ExprKind::Tuple(v)
            | ExprKind::Variant { args: v, .. }
            | ExprKind::Call { args: v, .. }
            | ExprKind::Lib { args: v, .. } => {
                for x in v {
                    self.zonk_expr(x);
                }
            }
            ExprKind::Assign { value, .. } => self.zonk_expr(value),
            ExprKind::If { cond, then, els } => {
                self.zonk_expr(cond);
                self.zonk_block(then);
                if let Some(x) = els {
                    self.zonk_expr(x);
                }
            }
            ExprKind::Match { scrutinee, arms } => {
                self.zonk_expr(scrutinee);
                for arm in arms {
                    self.zonk_pat(&mut arm.pat);
                    if let Some(g) = &mut arm.guard {
                        self.zonk_expr(g);
                    }
                    self.zonk_expr(&mut arm.body);
                }
            }
            ExprKind::For { over, body, .. } => {
                if let ForOver::Array(x) = over {
                    self.zonk_expr(x);
                }
                self.zonk_block(body);
            }
            ExprKind::Block(body) => self.zonk_block(body),
            ExprKind::Return(v) => {
                if let Some(x) = v {
                    self.zonk_expr(x);
                }
            }
        }
        e.ty = self.zonk(&e.ty);
    }

    fn zonk_pat(&mut self, p: &mut Pat) {
        p.ty = self.zonk(&p.ty);
        match &mut p.kind {
            PatKind::Tuple(v) | PatKind::Variant { args: v, .. } | PatKind::Or(v) => {
                for x in v {
                    self.zonk_pat(x);
                }
            }
            _ => {}
        }
    }
}

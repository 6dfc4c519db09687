//! The module-level checks: which items make up the NF, the state struct, types, constants,
//! enums, the call graph (recursion). Function bodies are checked in [`super::body`].

use super::ast::*;
use super::body::FnChecker;
use super::error::Error;
use super::library::{library, Library};
use super::Options;
use proc_macro2::Span;
use quote::ToTokens;
use std::collections::{HashMap, HashSet};
use syn::spanned::Spanned;
use syn::visit::Visit;

/// A function of the module, as the registry names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum FnKey {
    /// `NetworkFunction::process`.
    Process,
    /// An inherent method (or associated function) of the state struct.
    Method(String),
    /// A free function of the module.
    Free(String),
}

impl FnKey {
    pub(crate) fn name(&self) -> &str {
        match self {
            FnKey::Process => "process",
            FnKey::Method(n) | FnKey::Free(n) => n,
        }
    }
}

/// A function's signature, resolved.
#[derive(Debug, Clone)]
pub(crate) struct FnSig {
    /// `None`: no `self`; `Some(true)`: `&mut self`.
    pub receiver: Option<bool>,
    /// Parameter names (after `self`) and types.
    pub params: Vec<(String, Ty, Span)>,
    /// Return type.
    pub ret: Ty,
}

/// Where a type is written; decides what is allowed and what the error says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TypeCtx {
    /// A field of the state struct: state elements and values.
    StateField,
    /// A parameter: values, `&mut Packet`, `&Meta`, views.
    Param,
    /// A return type, a `let` annotation, a `const`'s type, a cast's target: values.
    Value,
}

/// The module's items by name (test-only items left out).
pub(crate) struct Items<'a> {
    pub consts: HashMap<String, &'a syn::ItemConst>,
    pub statics: HashMap<String, &'a syn::ItemStatic>,
    pub enums: HashMap<String, &'a syn::ItemEnum>,
    pub aliases: HashMap<String, &'a syn::ItemType>,
    pub fns: HashMap<String, &'a syn::ItemFn>,
    /// Structs of the module, the state struct among them.
    pub structs: HashMap<String, &'a syn::ItemStruct>,
    /// Inherent methods and associated functions of the state struct.
    pub methods: HashMap<String, &'a syn::ImplItemFn>,
    /// `process` of the `NetworkFunction` impl.
    pub process: Option<&'a syn::ImplItemFn>,
}

/// The checker's module-wide state.
pub(crate) struct Cx<'a> {
    pub items: Items<'a>,
    pub lib: &'static Library,
    pub opts: Options,
    pub errors: Vec<Error>,
    pub state: State,
    /// Fields of the state struct whose type was refused (with an error): their uses say
    /// nothing more, so one bad type is one error.
    pub refused_fields: HashSet<String>,
    consts: HashMap<String, Option<(Ty, u128)>>,
    const_arrays: HashMap<String, Option<(Ty, Vec<u128>)>>,
    struct_defs: HashMap<String, Option<Vec<(String, Ty)>>>,
    evaluating: Vec<String>,
    pub consts_used: Vec<Const>,
    enums: HashMap<String, Option<EnumDef>>,
    pub enums_used: Vec<EnumDef>,
    pub registry: Vec<FnKey>,
    index: HashMap<FnKey, usize>,
    sigs: HashMap<FnKey, Option<FnSig>>,
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("cfg") && a.to_token_stream().to_string().contains("test"))
}

fn last_ident(path: &syn::Path) -> Option<String> {
    path.segments.last().map(|s| s.ident.to_string())
}

/// Checks the items of an NF module (or file) called `name`; `whole` is what errors about the
/// module as a whole point at.
pub(crate) fn check_items(
    name: &str,
    items: &[syn::Item],
    whole: &dyn ToTokens,
    opts: &Options,
) -> Result<Nf, Vec<Error>> {
    let mut errors = Vec::new();
    let mut it = Items {
        consts: HashMap::new(),
        statics: HashMap::new(),
        enums: HashMap::new(),
        aliases: HashMap::new(),
        fns: HashMap::new(),
        structs: HashMap::new(),
        methods: HashMap::new(),
        process: None,
    };
    let mut nf_impls: Vec<&syn::ItemImpl> = Vec::new();
    let mut inherent: Vec<&syn::ItemImpl> = Vec::new();
    for item in items {
        match item {
            syn::Item::Const(c) if !is_cfg_test(&c.attrs) => {
                it.consts.insert(c.ident.to_string(), c);
            }
            syn::Item::Static(s) if !is_cfg_test(&s.attrs) => {
                it.statics.insert(s.ident.to_string(), s);
            }
            syn::Item::Enum(e) if !is_cfg_test(&e.attrs) => {
                it.enums.insert(e.ident.to_string(), e);
            }
            syn::Item::Type(t) if !is_cfg_test(&t.attrs) => {
                it.aliases.insert(t.ident.to_string(), t);
            }
            syn::Item::Fn(f) if !is_cfg_test(&f.attrs) => {
                it.fns.insert(f.sig.ident.to_string(), f);
            }
            syn::Item::Struct(s) if !is_cfg_test(&s.attrs) => {
                it.structs.insert(s.ident.to_string(), s);
            }
            syn::Item::Impl(i) if !is_cfg_test(&i.attrs) => match &i.trait_ {
                Some((_, path, _)) if last_ident(path).as_deref() == Some("NetworkFunction") => nf_impls.push(i),
                Some(_) => {} // other trait impls (Default, Debug, …) run on the CPU only
                None => inherent.push(i),
            },
            // `use`, nested modules, macros, traits, …: the hardware reaches only what the
            // checks below name; everything else is the CPU's.
            _ => {}
        }
    }

    let Some(nf_impl) = nf_impls.first() else {
        errors.push(Error::spanned(
            whole,
            "this NF module has no `impl NetworkFunction for …`; the hardware is that impl's `process`: write \
             `impl NetworkFunction for MyNf { fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action { … } }`",
        ));
        return Err(errors);
    };
    for extra in &nf_impls[1..] {
        errors.push(Error::spanned(
            &extra.self_ty,
            "a second `impl NetworkFunction` in one NF module; an NF module holds one NF: move the other into its own \
             module with its own `#[emu::nf]`",
        ));
    }
    let state_name = match &*nf_impl.self_ty {
        syn::Type::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => p.path.segments[0].ident.to_string(),
        other => {
            errors.push(Error::spanned(
                other,
                "`NetworkFunction` must be implemented for a struct declared in this module, named plainly \
                 (`impl NetworkFunction for MyNf`)",
            ));
            return Err(errors);
        }
    };
    for item in &nf_impl.items {
        if let syn::ImplItem::Fn(f) = item {
            if f.sig.ident == "process" {
                it.process = Some(f);
            }
        }
    }
    if it.process.is_none() {
        errors.push(Error::spanned(
            &nf_impl.self_ty,
            "the `NetworkFunction` impl has no `process`; write \
             `fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action`",
        ));
        return Err(errors);
    }
    for imp in inherent {
        let named_state = matches!(&*imp.self_ty, syn::Type::Path(p) if p.path.is_ident(&state_name));
        if !named_state {
            continue;
        }
        for item in &imp.items {
            if let syn::ImplItem::Fn(f) = item {
                it.methods.insert(f.sig.ident.to_string(), f);
            }
        }
    }

    let mut cx = Cx {
        items: it,
        lib: library(),
        opts: opts.clone(),
        errors,
        state: State { name: state_name.clone(), fields: Vec::new() },
        refused_fields: HashSet::new(),
        consts: HashMap::new(),
        const_arrays: HashMap::new(),
        struct_defs: HashMap::new(),
        evaluating: Vec::new(),
        consts_used: Vec::new(),
        enums: HashMap::new(),
        enums_used: Vec::new(),
        registry: vec![FnKey::Process],
        index: HashMap::from([(FnKey::Process, 0)]),
        sigs: HashMap::new(),
    };

    match cx.items.structs.get(&state_name).copied() {
        Some(s) => cx.state_struct(s),
        None => cx.errors.push(Error::spanned(
            &nf_impl.self_ty,
            format!(
                "the state struct `{state_name}` is not declared in this NF module; declare it here so the \
                 compiler sees its fields"
            ),
        )),
    }

    // Check `process` and, breadth first, every function it reaches.
    let mut fns = Vec::new();
    let mut calls: Vec<Vec<(usize, Span)>> = Vec::new();
    let mut i = 0;
    while i < cx.registry.len() {
        let key = cx.registry[i].clone();
        let (func, edges) = check_fn(&mut cx, &key);
        fns.push(func);
        calls.push(edges);
        i += 1;
    }
    recursion(&mut cx, &calls);
    let probes = probes(&mut cx, &fns);

    let reached: Vec<&FnKey> = cx.registry.iter().collect();
    let mut cpu_only: Vec<String> = cx
        .items
        .methods
        .keys()
        .filter(|n| !reached.contains(&&FnKey::Method((*n).clone())))
        .chain(cx.items.fns.keys().filter(|n| !reached.contains(&&FnKey::Free((*n).clone()))))
        .cloned()
        .collect();
    cpu_only.sort();

    if !cx.errors.is_empty() {
        // In source order where positions are known (a stable sort keeps the order found
        // otherwise).
        cx.errors.sort_by_key(|e| e.line_column());
        return Err(cx.errors);
    }
    Ok(Nf {
        name: name.to_string(),
        state: cx.state,
        fns: fns.into_iter().map(|f| f.expect("a function without errors was checked")).collect(),
        consts: cx.consts_used,
        enums: cx.enums_used,
        cpu_only,
        probes,
    })
}

/// The probes of the checked functions, each name once, in the order they first appear. A
/// name is one probe: the same kind and type everywhere, and not a state field's.
fn probes(cx: &mut Cx<'_>, fns: &[Option<Func>]) -> Vec<Probe> {
    let mut found = Vec::new();
    for f in fns.iter().flatten() {
        walk_block(&f.body, &mut |e| match &e.kind {
            ExprKind::Lib { op: LibOp::Probe(name), args } => {
                found.push((name.clone(), Some(args[0].ty.clone()), e.span))
            }
            ExprKind::Lib { op: LibOp::Count(name), .. } => found.push((name.clone(), None, e.span)),
            _ => {}
        });
    }
    let mut out: Vec<Probe> = Vec::new();
    for (name, value, span) in found {
        let what = |v: &Option<Ty>| match v {
            Some(t) => format!("`emu::probe!` of a `{t}`"),
            None => "`emu::count!`".to_string(),
        };
        if let Some(p) = out.iter().find(|p| p.name == name) {
            if p.value != value {
                let message = format!(
                    "the probe `{name}` is {} here but {} before; one name is one probe: give this one another name",
                    what(&value),
                    what(&p.value)
                );
                cx.errors.push(Error::at(span, message));
            }
            continue;
        }
        if cx.state.fields.iter().any(|f| f.name == name) {
            let message = format!(
                "`{name}` is a field of the state struct; a probe is a symbol of its own: give it another name"
            );
            cx.errors.push(Error::at(span, message));
            continue;
        }
        if let Some(t) = &value {
            let fits =
                matches!(t, Ty::Bool | Ty::Mac | Ty::Ipv4Addr | Ty::Bytes(_)) || matches!(t, Ty::Int(i) if !i.signed);
            if !fits || !t.width().is_some_and(|w| (1..=crate::ir::MAX_WIDTH as u32).contains(&w)) {
                let message = format!(
                    "a probe's value is an unsigned integer, `bool`, `Mac`, `Ipv4Addr` or `Bytes<N>` (at most {} \
                     bits), not `{t}`; probe a field of it, or cast it",
                    crate::ir::MAX_WIDTH
                );
                cx.errors.push(Error::at(span, message));
                continue;
            }
        }
        out.push(Probe { name, value });
    }
    out
}

/// Calls `f` on every expression of `b`, outer before inner, in source order.
fn walk_block(b: &Block, f: &mut impl FnMut(&Expr)) {
    for s in &b.stmts {
        match s {
            Stmt::Let { init, els, .. } => {
                if let Some(e) = init {
                    walk_expr(e, f);
                }
                if let Some(b) = els {
                    walk_block(b, f);
                }
            }
            Stmt::Expr(e) => walk_expr(e, f),
        }
    }
    if let Some(t) = &b.tail {
        walk_expr(t, f);
    }
}

fn walk_expr(e: &Expr, f: &mut impl FnMut(&Expr)) {
    f(e);
    match &e.kind {
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
        ExprKind::Field { base, .. } => walk_expr(base, f),
        ExprKind::Unary { arg, .. }
        | ExprKind::Cast(arg)
        | ExprKind::Lookup { index: arg, .. }
        | ExprKind::Repeat { value: arg, .. } => walk_expr(arg, f),
        ExprKind::Index { base, index } => {
            walk_expr(base, f);
            walk_expr(index, f);
        }
        ExprKind::Array(v) => {
            for x in v {
                walk_expr(x, f);
            }
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            walk_expr(lhs, f);
            walk_expr(rhs, f);
        }
        ExprKind::Tuple(v)
        | ExprKind::Variant { args: v, .. }
        | ExprKind::Call { args: v, .. }
        | ExprKind::Lib { args: v, .. } => {
            for x in v {
                walk_expr(x, f);
            }
        }
        ExprKind::Assign { value, .. } => walk_expr(value, f),
        ExprKind::If { cond, then, els } => {
            walk_expr(cond, f);
            walk_block(then, f);
            if let Some(x) = els {
                walk_expr(x, f);
            }
        }
        ExprKind::Match { scrutinee, arms } => {
            walk_expr(scrutinee, f);
            for arm in arms {
                if let Some(g) = &arm.guard {
                    walk_expr(g, f);
                }
                walk_expr(&arm.body, f);
            }
        }
        ExprKind::For { over, body, .. } => {
            if let ForOver::Array(x) = over {
                walk_expr(x, f);
            }
            walk_block(body, f);
        }
        ExprKind::Block(body) => walk_block(body, f),
        ExprKind::Return(v) => {
            if let Some(x) = v {
                walk_expr(x, f);
            }
        }
    }
}

fn check_fn(cx: &mut Cx<'_>, key: &FnKey) -> (Option<Func>, Vec<(usize, Span)>) {
    let (block, span) = match key {
        FnKey::Process => {
            let f = cx.items.process.expect("checked above");
            (&f.block, f.sig.ident.span())
        }
        FnKey::Method(n) => {
            let f = cx.items.methods[n];
            (&f.block, f.sig.ident.span())
        }
        FnKey::Free(n) => {
            let f = cx.items.fns[n];
            (&*f.block, f.sig.ident.span())
        }
    };
    let Some(fsig) = cx.signature(key) else {
        return (None, Vec::new());
    };
    let mut checker = FnChecker::new(cx, fsig.ret.clone(), fsig.receiver);
    let params = fsig.params.iter().map(|(name, ty, span)| checker.declare(name, ty.clone(), false, *span)).collect();
    let body = checker.fn_body(block);
    let (locals, body, edges) = checker.finish(body);
    let func =
        Func { name: key.name().to_string(), receiver: fsig.receiver, params, ret: fsig.ret, locals, body, span };
    (Some(func), edges)
}

/// Reports every cycle of the call graph (hardware has no call stack: calls are inlined).
fn recursion(cx: &mut Cx<'_>, calls: &[Vec<(usize, Span)>]) {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Active,
        Done,
    }
    fn visit(
        n: usize,
        calls: &[Vec<(usize, Span)>],
        marks: &mut [Mark],
        stack: &mut Vec<usize>,
        found: &mut Vec<(Span, Vec<usize>)>,
    ) {
        marks[n] = Mark::Active;
        stack.push(n);
        for &(callee, span) in &calls[n] {
            match marks[callee] {
                Mark::New => visit(callee, calls, marks, stack, found),
                Mark::Active => {
                    let from = stack.iter().position(|&s| s == callee).unwrap();
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(callee);
                    found.push((span, cycle));
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        marks[n] = Mark::Done;
    }
    let mut marks = vec![Mark::New; calls.len()];
    let mut found = Vec::new();
    if !calls.is_empty() {
        visit(0, calls, &mut marks, &mut Vec::new(), &mut found);
    }
    for (span, cycle) in found {
        let names: Vec<String> = cycle.iter().map(|&i| format!("`{}`", cx.registry[i].name())).collect();
        let what = if cycle.len() == 2 {
            format!("{} calls itself", names[0])
        } else {
            format!("recursion: {}", names.join(" → "))
        };
        cx.errors.push(Error::at(
            span,
            format!(
                "{what}; hardware has no call stack (every call is inlined), so recursion cannot be built: write the \
                 repetition as a `for` loop with a constant bound"
            ),
        ));
    }
}

/// Finds `dyn Trait` / `impl Trait` anywhere in a type.
struct FindTraitObject<'t>(Option<&'t syn::Type>);

impl<'t> Visit<'t> for FindTraitObject<'t> {
    fn visit_type(&mut self, t: &'t syn::Type) {
        if self.0.is_none() && matches!(t, syn::Type::TraitObject(_) | syn::Type::ImplTrait(_)) {
            self.0 = Some(t);
        }
        syn::visit::visit_type(self, t);
    }
}

const SUBSET_TYPES: &str = "bool, fixed-width integers (u8…u128, u1…u127, usize), Mac, Ipv4Addr, PortMask, \
                            Action, DropReason, Option and tuples of these";

impl<'a> Cx<'a> {
    pub(crate) fn error(&mut self, node: &dyn ToTokens, message: impl Into<String>) {
        self.errors.push(Error::spanned(node, message));
    }

    fn state_struct(&mut self, s: &syn::ItemStruct) {
        if !s.generics.params.is_empty() {
            self.error(
                &s.generics,
                "the state struct is generic; hardware needs every type and size fixed: write the concrete types \
                 (use a `const` for a size)",
            );
        }
        let fields = match &s.fields {
            syn::Fields::Named(n) => n.named.iter().collect::<Vec<_>>(),
            syn::Fields::Unit => Vec::new(),
            syn::Fields::Unnamed(u) => {
                self.error(u, "the state struct's fields need names (the debug tools show state by field name): write `struct MyNf { table: … }`");
                return;
            }
        };
        for f in fields {
            let name = f.ident.as_ref().expect("named").to_string();
            match self.field_kind(&f.ty) {
                Some(kind) => self.state.fields.push(StateField { name, kind, span: f.ty.span() }),
                None => {
                    self.refused_fields.insert(name);
                }
            }
        }
    }

    fn field_kind(&mut self, ty: &syn::Type) -> Option<FieldKind> {
        if let syn::Type::Path(p) = ty {
            if p.qself.is_none() {
                if let Some(seg) = p.path.segments.last() {
                    let name = seg.ident.to_string();
                    if let Some(kind) = ElementKind::ALL.iter().copied().find(|k| k.name() == name) {
                        return self.element(kind, seg, ty).map(FieldKind::Element);
                    }
                }
            }
        }
        match self.resolve_type(ty, TypeCtx::StateField) {
            Ty::Error => None,
            t @ (Ty::Array(..) | Ty::Tuple(_) | Ty::Struct(..)) => {
                let instead = if matches!(t, Ty::Array(..)) { "an `Array<T, N>`" } else { "a `Register<…>` of it" };
                self.error(
                    ty,
                    format!("a value field of the state holds one fixed-width value, not `{t}`; use {instead}"),
                );
                None
            }
            t => Some(FieldKind::Value(t)),
        }
    }

    fn element(&mut self, kind: ElementKind, seg: &syn::PathSegment, whole: &syn::Type) -> Option<Element> {
        // (number of type parameters, const parameters with their defaults; `Lru`'s WAYS
        // defaults to its N, filled in below)
        let (n_types, consts): (usize, &[Option<u64>]) = match kind {
            ElementKind::Register => (1, &[]),
            ElementKind::Counter => (0, &[Some(64)]),
            ElementKind::Array | ElementKind::Queue => (1, &[None]),
            ElementKind::Cam | ElementKind::Tcam => (2, &[None]),
            ElementKind::Lru => (2, &[None, Some(0)]),
            ElementKind::HashTable => (2, &[None, Some(4)]),
        };
        let args: Vec<&syn::GenericArgument> = match &seg.arguments {
            syn::PathArguments::AngleBracketed(a) => a.args.iter().collect(),
            syn::PathArguments::None => Vec::new(),
            syn::PathArguments::Parenthesized(p) => {
                self.error(p, format!("`{}` takes `<…>` arguments", kind.name()));
                return None;
            }
        };
        let required = n_types + consts.iter().filter(|c| c.is_none()).count();
        if args.len() < required || args.len() > n_types + consts.len() {
            self.error(whole, format!("wrong number of arguments for `{}`", kind.name()));
            return None;
        }
        let mut ok = true;
        let mut types = Vec::new();
        for a in &args[..n_types] {
            match a {
                syn::GenericArgument::Type(t) => {
                    let ty = self.resolve_type(t, TypeCtx::Value);
                    if ty == Ty::Error {
                        ok = false;
                    } else if !holds_value(&ty) {
                        self.error(
                            t,
                            format!(
                                "a state element holds fixed-width values (bool, integers, Mac, Ipv4Addr, PortMask, \
                                 Bytes<N>, fieldless enums, tuples of these), not `{ty}`"
                            ),
                        );
                        ok = false;
                    }
                    types.push(ty);
                }
                other => {
                    self.error(other, format!("expected a type argument of `{}`", kind.name()));
                    ok = false;
                }
            }
        }
        let mut sizes = Vec::new();
        for (i, default) in consts.iter().enumerate() {
            match args.get(n_types + i) {
                Some(a) => match self.const_arg(a) {
                    Some(v) => sizes.push(v as u64),
                    None => ok = false,
                },
                None if kind == ElementKind::Lru => sizes.push(sizes.first().copied().unwrap_or(1)),
                None => sizes.push(default.expect("checked by the count")),
            }
        }
        if ok {
            // The library asserts these when the element is built; say so at the type instead.
            let problem = match (kind, &sizes[..]) {
                (ElementKind::Counter, [bits]) if !(1..=64).contains(bits) => {
                    Some("`Counter<BITS>` needs 1 ≤ BITS ≤ 64")
                }
                (ElementKind::Counter, _) => None,
                (ElementKind::HashTable, [n, ways]) if *ways == 0 || n % ways != 0 || !(n / ways).is_power_of_two() => {
                    Some("`HashTable<K, V, N, WAYS>` needs N a positive multiple of WAYS with N / WAYS a power of two")
                }
                (ElementKind::Lru, [n, ways]) if *ways == 0 || n % ways != 0 || !(n / ways).is_power_of_two() => {
                    Some("`Lru<K, V, N, WAYS>` needs N a positive multiple of WAYS with N / WAYS a power of two")
                }
                (_, [n, ..]) if *n == 0 => Some("a state element needs at least one entry"),
                _ => None,
            };
            if let Some(p) = problem {
                self.error(whole, p);
                ok = false;
            }
        }
        ok.then_some(Element { kind, types, sizes })
    }

    /// A const generic argument: a literal, a `const` of the module, or `{ expression }`.
    fn const_arg(&mut self, a: &syn::GenericArgument) -> Option<u128> {
        match a {
            syn::GenericArgument::Const(e) => self.eval_const(e),
            // `Cam<Mac, Port, SIZE>`: syn reads `SIZE` as a type.
            syn::GenericArgument::Type(syn::Type::Path(p)) if p.qself.is_none() && p.path.get_ident().is_some() => {
                let name = p.path.get_ident().unwrap().to_string();
                self.module_const(&name, p).map(|(_, v)| v)
            }
            other => {
                self.error(
                    other,
                    "a size must be a constant: a literal, a `const` of this module, or `{ expression }` of those",
                );
                None
            }
        }
    }

    /// The type `ty` written in `ctx`, or [`Ty::Error`] after reporting why it is not in the
    /// subset.
    pub(crate) fn resolve_type(&mut self, ty: &syn::Type, ctx: TypeCtx) -> Ty {
        let mut find = FindTraitObject(None);
        find.visit_type(ty);
        if let Some(obj) = find.0 {
            let what = if matches!(obj, syn::Type::ImplTrait(_)) {
                "`impl Trait` types"
            } else {
                "trait objects (`dyn Trait`)"
            };
            self.error(
                obj,
                format!(
                    "{what} are not in the subset: they choose the code to run by type, which a circuit fixes when it is \
                     built; use a concrete type, or an enum and a `match`"
                ),
            );
            return Ty::Error;
        }
        self.resolve_type_inner(ty, ctx, 0)
    }

    fn resolve_type_inner(&mut self, ty: &syn::Type, ctx: TypeCtx, depth: u32) -> Ty {
        if depth > 16 {
            self.error(ty, "type aliases nest too deeply (or refer to themselves)");
            return Ty::Error;
        }
        match ty {
            syn::Type::Paren(p) => self.resolve_type_inner(&p.elem, ctx, depth),
            syn::Type::Group(g) => self.resolve_type_inner(&g.elem, ctx, depth),
            syn::Type::Tuple(t) => {
                let elems: Vec<Ty> =
                    t.elems.iter().map(|e| self.resolve_type_inner(e, TypeCtx::Value, depth)).collect();
                if elems.contains(&Ty::Error) {
                    Ty::Error
                } else {
                    Ty::Tuple(elems)
                }
            }
            syn::Type::Reference(r) => self.reference_type(r, ctx),
            syn::Type::Path(p) => self.path_type(p, ctx, depth),
            syn::Type::Array(a) => {
                let elem = self.resolve_type(&a.elem, ctx);
                let len = self.eval_const(&a.len);
                match len {
                    _ if elem == Ty::Error => Ty::Error,
                    Some(n) if (1..=MAX_ARRAY as u128).contains(&n) && elem.is_value() => {
                        Ty::Array(Box::new(elem), n as u32)
                    }
                    Some(_) if !elem.is_value() => {
                        self.error(&a.elem, format!("an array in hardware holds fixed-width values, not `{elem}`"));
                        Ty::Error
                    }
                    Some(n) => {
                        self.error(&a.len, format!("an array in hardware has 1 to {MAX_ARRAY} elements, not {n}"));
                        Ty::Error
                    }
                    None => Ty::Error,
                }
            }
            syn::Type::Slice(s) => {
                self.error(
                    s,
                    "slices have a length known only at run time; read the packet with `pkt.byte(i)` or a header view",
                );
                Ty::Error
            }
            syn::Type::Ptr(p) => {
                self.error(p, "raw pointers are not in the subset; keep values in locals and state fields");
                Ty::Error
            }
            syn::Type::BareFn(f) => {
                self.error(
                    f,
                    "function pointers choose the code to run at run time, which a circuit fixes when it is built; call \
                     the function directly, or `match` on an enum",
                );
                Ty::Error
            }
            syn::Type::Never(n) => {
                self.error(n, "`!` is not a type the subset uses; return an `Action`");
                Ty::Error
            }
            other => {
                self.error(other, format!("this type is not in the subset; the subset's types are {SUBSET_TYPES}"));
                Ty::Error
            }
        }
    }

    fn reference_type(&mut self, r: &syn::TypeReference, ctx: TypeCtx) -> Ty {
        if ctx == TypeCtx::StateField {
            self.error(
                r,
                "a reference stored in the NF's state points at memory outside the circuit, which hardware cannot \
                 follow; store the value itself (`last: Mac`) or a state element (`Register<Mac>`)",
            );
            return Ty::Error;
        }
        let target = match &*r.elem {
            syn::Type::Path(p) if p.qself.is_none() => last_ident(&p.path),
            _ => None,
        };
        let mutable = r.mutability.is_some();
        match (ctx, target.as_deref()) {
            (TypeCtx::Param, Some("Packet")) => Ty::Packet { mutable },
            (TypeCtx::Param, Some("Meta")) if !mutable => Ty::Meta,
            (TypeCtx::Param, Some(name)) if ElementKind::ALL.iter().any(|k| k.name() == name) => {
                self.error(
                    r,
                    "state elements are reached through `self`, not passed by reference: make the function a method \
                     (`fn f(&mut self, …)`) and use `self.field`",
                );
                Ty::Error
            }
            _ => {
                self.error(
                    r,
                    "references are not values in hardware (only `pkt: &mut Packet` and `meta: &Meta` are passed by \
                     reference); take the value itself: every value of the subset is `Copy`",
                );
                Ty::Error
            }
        }
    }

    fn path_type(&mut self, p: &syn::TypePath, ctx: TypeCtx, depth: u32) -> Ty {
        if p.qself.is_some() {
            self.error(
                p,
                format!(
                    "qualified types (`<T as Trait>::X`) are not in the subset; the subset's types are {SUBSET_TYPES}"
                ),
            );
            return Ty::Error;
        }
        let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        let last = p.path.segments.last().expect("a path has a segment");
        let name = segs.last().unwrap().as_str();
        let generic_types = |seg: &syn::PathSegment| -> Vec<syn::Type> {
            match &seg.arguments {
                syn::PathArguments::AngleBracketed(a) => a
                    .args
                    .iter()
                    .filter_map(|g| match g {
                        syn::GenericArgument::Type(t) => Some(t.clone()),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            }
        };
        if let Some(int) = int_type(name) {
            return Ty::Int(int);
        }
        match name {
            "bool" => return Ty::Bool,
            "f32" | "f64" => {
                self.error(p, FLOAT);
                return Ty::Error;
            }
            "Box" | "Rc" | "Arc" => {
                self.error(p, heap(name));
                return Ty::Error;
            }
            "Vec" | "VecDeque" => {
                self.error(p, VEC);
                return Ty::Error;
            }
            "String" | "str" => {
                self.error(p, STRINGS);
                return Ty::Error;
            }
            "HashMap" | "BTreeMap" | "HashSet" | "BTreeSet" => {
                self.error(
                    p,
                    format!(
                        "`{name}` allocates on the heap and grows without bound; use a fixed-size state element: \
                         `Cam<K, V, N>`, `HashTable<K, V, N>` or `Lru<K, V, N>`"
                    ),
                );
                return Ty::Error;
            }
            "Cell" | "RefCell" | "Mutex" | "RwLock" => {
                self.error(p, format!("`{name}` is shared mutable memory; keep the value in a field of the state struct and change it through `&mut self`"));
                return Ty::Error;
            }
            "Option" | "Result" => {
                let args = generic_types(last);
                let want = if name == "Option" { 1 } else { 2 };
                if args.len() != want {
                    self.error(p, format!("`{name}` needs {want} type argument(s)"));
                    return Ty::Error;
                }
                let tys: Vec<Ty> = args.iter().map(|t| self.resolve_type_inner(t, TypeCtx::Value, depth + 1)).collect();
                if tys.contains(&Ty::Error) {
                    return Ty::Error;
                }
                let mut tys = tys.into_iter();
                return if name == "Option" {
                    Ty::Option(Box::new(tys.next().unwrap()))
                } else {
                    Ty::Result(Box::new(tys.next().unwrap()), Box::new(tys.next().unwrap()))
                };
            }
            "Bytes" => {
                if let syn::PathArguments::AngleBracketed(a) = &last.arguments {
                    if let Some(arg) = a.args.first() {
                        if let Some(n) = self.const_arg(arg) {
                            return Ty::Bytes(n as u32);
                        }
                        return Ty::Error;
                    }
                }
                self.error(p, "`Bytes` needs its length: `Bytes<N>`");
                return Ty::Error;
            }
            "Header" if segs.len() >= 2 => {
                let module = segs[segs.len() - 2].as_str();
                if let Some(h) = self.lib.headers.iter().find(|h| h.module.last() == Some(&module)) {
                    return self.view_type(h.name, last, p);
                }
            }
            "Packet" | "Meta" => {
                self.error(p, format!("`{name}` is passed by reference: `pkt: &mut Packet`, `meta: &Meta`"));
                return Ty::Error;
            }
            _ => {}
        }
        if ElementKind::ALL.iter().any(|k| k.name() == name) {
            self.error(
                p,
                format!(
                    "a `{name}` is a state element: it lives in a field of the state struct and is used through \
                     `self.field`"
                ),
            );
            return Ty::Error;
        }
        if let Some((_, ty)) = self.lib.type_names.iter().find(|(n, _)| *n == name) {
            if let Ty::View { header, .. } = ty {
                return self.view_type(header, last, p);
            }
            return ty.clone();
        }
        if segs.len() == 1 {
            if let Some(alias) = self.items.aliases.get(name).copied() {
                if !alias.generics.params.is_empty() {
                    self.error(&alias.generics, "generic type aliases are not in the subset; write the concrete type");
                    return Ty::Error;
                }
                return self.resolve_type_inner(&alias.ty, ctx, depth + 1);
            }
            if self.items.enums.contains_key(name) {
                return match self.module_enum(name) {
                    Some(_) => Ty::Enum(name.to_string()),
                    None => Ty::Error,
                };
            }
            if self.items.structs.contains_key(name) && *name != self.state.name {
                return match self.module_struct(name) {
                    Some(fields) => Ty::Struct(name.to_string(), fields),
                    None => Ty::Error,
                };
            }
        }
        self.error(
            p,
            format!(
                "unknown type `{}`; the subset's types are {SUBSET_TYPES}",
                quote::quote!(#p).to_string().replace(' ', "")
            ),
        );
        Ty::Error
    }

    fn view_type(&mut self, header: &'static str, seg: &syn::PathSegment, whole: &syn::TypePath) -> Ty {
        if let syn::PathArguments::AngleBracketed(a) = &seg.arguments {
            if let [syn::GenericArgument::Type(syn::Type::Reference(r))] = &a.args.iter().collect::<Vec<_>>()[..] {
                if matches!(&*r.elem, syn::Type::Slice(s) if matches!(&*s.elem, syn::Type::Path(p) if p.path.is_ident("u8")))
                {
                    return Ty::View { header, mutable: r.mutability.is_some() };
                }
            }
        }
        self.error(whole, "a header view is written `Header<&[u8]>` or `Header<&mut [u8]>`");
        Ty::Error
    }

    /// The fields of the module's struct `name` (not the state struct), resolved once: named,
    /// not generic, each a fixed-width value (or a tuple or struct of them).
    pub(crate) fn module_struct(&mut self, name: &str) -> Option<Vec<(String, Ty)>> {
        if let Some(v) = self.struct_defs.get(name) {
            return v.clone();
        }
        let item = self.items.structs.get(name).copied()?;
        if self.evaluating.iter().any(|n| n == name) {
            self.error(&item.ident, format!("the struct `{name}` contains itself"));
            return None;
        }
        self.evaluating.push(name.to_string());
        let mut fields = Some(Vec::new());
        if !item.generics.params.is_empty() {
            self.error(&item.generics, "a generic struct is not in the subset; write the concrete field types");
            fields = None;
        }
        match &item.fields {
            syn::Fields::Named(named) => {
                for f in &named.named {
                    let ty = self.resolve_type(&f.ty, TypeCtx::Value);
                    if ty == Ty::Error {
                        fields = None;
                    } else if !holds_value(&ty) {
                        self.error(
                            &f.ty,
                            format!("a field of `{name}` must be a fixed-width value (an integer, bool, Mac, …), not `{ty}`"),
                        );
                        fields = None;
                    } else if let Some(v) = &mut fields {
                        v.push((f.ident.as_ref().expect("named").to_string(), ty));
                    }
                }
            }
            _ => {
                self.error(
                    &item.ident,
                    format!("`{name}` needs named fields in hardware (`struct {name} {{ src: Ipv4Addr, … }}`)"),
                );
                fields = None;
            }
        }
        if fields.as_ref().is_some_and(|v| v.is_empty()) {
            self.error(&item.ident, format!("`{name}` has no fields: it carries no value"));
            fields = None;
        }
        self.evaluating.pop();
        self.struct_defs.insert(name.to_string(), fields.clone());
        fields
    }

    /// Whether the module's `const` `name` is an array (`const PORTS: [u8; 3] = [1, 2, 3];`).
    pub(crate) fn is_const_array(&self, name: &str) -> bool {
        self.items.consts.get(name).is_some_and(|c| matches!(&*c.ty, syn::Type::Array(_)))
    }

    /// The element type and values of the module's constant array `name`, evaluated once.
    pub(crate) fn module_const_array(&mut self, name: &str, at: &dyn ToTokens) -> Option<(Ty, Vec<u128>)> {
        if let Some(v) = self.const_arrays.get(name) {
            return v.clone();
        }
        let item = self.items.consts.get(name).copied()?;
        let syn::Type::Array(array) = &*item.ty else { return None };
        if self.evaluating.iter().any(|n| n == name) {
            self.error(at, format!("the constant `{name}` is defined in terms of itself"));
            return None;
        }
        self.evaluating.push(name.to_string());
        let result = self.const_array_value(name, array, &item.expr);
        self.evaluating.pop();
        self.const_arrays.insert(name.to_string(), result.clone());
        result
    }

    fn const_array_value(&mut self, name: &str, array: &syn::TypeArray, e: &syn::Expr) -> Option<(Ty, Vec<u128>)> {
        let ty = self.resolve_type(&array.elem, TypeCtx::Value);
        if ty == Ty::Error {
            return None;
        }
        if !ty.is_value() {
            self.error(
                &array.elem,
                format!("the elements of the constant array `{name}` must be fixed-width values, not `{ty}`"),
            );
            return None;
        }
        let len = self.eval_const(&array.len)?;
        let values: Vec<u128> = match e {
            syn::Expr::Array(a) => {
                let values: Vec<u128> = a.elems.iter().filter_map(|x| self.eval_const(x)).collect();
                if values.len() < a.elems.len() {
                    return None;
                }
                values
            }
            syn::Expr::Repeat(r) => {
                let v = self.eval_const(&r.expr)?;
                vec![v; self.eval_const(&r.len)?.min(1 << 16) as usize]
            }
            other => {
                self.error(
                    other,
                    format!("write the constant array `{name}` as a literal: `[1, 2, 3]` or `[0; {len}]`"),
                );
                return None;
            }
        };
        if values.len() as u128 != len {
            self.error(e, format!("`{name}` is declared with {len} elements but has {}", values.len()));
            return None;
        }
        if values.is_empty() || len > MAX_ARRAY as u128 {
            self.error(
                &array.len,
                format!(
                    "a constant array in hardware has 1 to {MAX_ARRAY} elements (a lookup table); `{name}` has {len}"
                ),
            );
            return None;
        }
        let values = values.into_iter().map(|v| truncate(v, &ty)).collect();
        Some((ty, values))
    }

    /// The value and type of the module's `const` `name`, evaluated once; `at` is the use.
    pub(crate) fn module_const(&mut self, name: &str, at: &dyn ToTokens) -> Option<(Ty, u128)> {
        if let Some(v) = self.consts.get(name) {
            return v.clone();
        }
        let Some(item) = self.items.consts.get(name).copied() else {
            if self.items.statics.contains_key(name) {
                self.error(
                    at,
                    format!(
                        "`{name}` is a `static`, one memory location shared by every packet; make it a `const` (a fixed \
                         value) or a field of the state struct (a register)"
                    ),
                );
            } else {
                self.error(at, format!("unknown constant `{name}`"));
            }
            self.consts.insert(name.to_string(), None);
            return None;
        };
        if self.evaluating.iter().any(|n| n == name) {
            self.error(at, format!("the constant `{name}` is defined in terms of itself"));
            return None;
        }
        self.evaluating.push(name.to_string());
        let ty = self.resolve_type(&item.ty, TypeCtx::Value);
        let result = if ty == Ty::Error {
            None
        } else if !ty.is_value() {
            self.error(
                &item.ty,
                format!(
                    "the hardware reads `{name}`, so it must be a fixed-width value (an integer, bool, Mac, Ipv4Addr, \
                     PortMask), not `{ty}`"
                ),
            );
            None
        } else {
            self.eval_const(&item.expr).map(|v| (ty.clone(), truncate(v, &ty)))
        };
        self.evaluating.pop();
        self.consts.insert(name.to_string(), result.clone());
        if let Some((ty, value)) = &result {
            self.consts_used.push(Const { name: name.to_string(), ty: ty.clone(), value: *value });
        }
        result
    }

    /// Evaluates a constant expression of literals, constants and arithmetic (and the library's
    /// constant constructors).
    pub(crate) fn eval_const(&mut self, e: &syn::Expr) -> Option<u128> {
        const HELP: &str = "a constant the hardware uses must be computable by the compiler: literals, `const`s, \
                            arithmetic, `as`, `Ipv4Addr::new(…)`, `Mac::from_bytes([…])`";
        match e {
            syn::Expr::Lit(l) => match &l.lit {
                syn::Lit::Int(i) => i.base10_parse::<u128>().ok(),
                syn::Lit::Bool(b) => Some(b.value as u128),
                syn::Lit::Byte(b) => Some(b.value() as u128),
                syn::Lit::Float(_) => {
                    self.error(l, FLOAT);
                    None
                }
                other => {
                    self.error(other, HELP);
                    None
                }
            },
            syn::Expr::Paren(p) => self.eval_const(&p.expr),
            syn::Expr::Group(g) => self.eval_const(&g.expr),
            syn::Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
                syn::Stmt::Expr(e, None) => self.eval_const(e),
                _ => {
                    self.error(b, HELP);
                    None
                }
            },
            syn::Expr::Path(p) if p.qself.is_none() => {
                let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                if segs.len() == 1 {
                    return self.module_const(&segs[0], p).map(|(_, v)| v);
                }
                let stripped = strip_prefix(&segs);
                match self.lib.constant(stripped) {
                    Some((_, v)) => Some(v),
                    None => {
                        self.error(p, format!("unknown constant `{}`", segs.join("::")));
                        None
                    }
                }
            }
            syn::Expr::Unary(u) => {
                let v = self.eval_const(&u.expr)?;
                match u.op {
                    syn::UnOp::Not(_) => Some(!v),
                    syn::UnOp::Neg(_) => Some(v.wrapping_neg()),
                    _ => {
                        self.error(u, HELP);
                        None
                    }
                }
            }
            syn::Expr::Binary(b) => {
                let l = self.eval_const(&b.left)?;
                let r = self.eval_const(&b.right)?;
                use syn::BinOp::*;
                Some(match b.op {
                    Add(_) => l.wrapping_add(r),
                    Sub(_) => l.wrapping_sub(r),
                    Mul(_) => l.wrapping_mul(r),
                    Div(_) | Rem(_) if r == 0 => {
                        self.error(b, "division by zero in a constant");
                        return None;
                    }
                    Div(_) => l / r,
                    Rem(_) => l % r,
                    BitAnd(_) => l & r,
                    BitOr(_) => l | r,
                    BitXor(_) => l ^ r,
                    Shl(_) => l.checked_shl(r as u32).unwrap_or(0),
                    Shr(_) => l.checked_shr(r as u32).unwrap_or(0),
                    Eq(_) => (l == r) as u128,
                    Ne(_) => (l != r) as u128,
                    Lt(_) => (l < r) as u128,
                    Le(_) => (l <= r) as u128,
                    Gt(_) => (l > r) as u128,
                    Ge(_) => (l >= r) as u128,
                    And(_) => (l != 0 && r != 0) as u128,
                    Or(_) => (l != 0 || r != 0) as u128,
                    _ => {
                        self.error(b, HELP);
                        return None;
                    }
                })
            }
            syn::Expr::Cast(c) => {
                let v = self.eval_const(&c.expr)?;
                let ty = self.resolve_type(&c.ty, TypeCtx::Value);
                Some(truncate(v, &ty))
            }
            syn::Expr::Call(c) => {
                let path = match &*c.func {
                    syn::Expr::Path(p) => p.path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>(),
                    _ => Vec::new(),
                };
                let tail: Vec<&str> = path.iter().rev().take(2).rev().map(|s| s.as_str()).collect();
                match tail[..] {
                    ["Ipv4Addr", "new"] if c.args.len() == 4 => {
                        let mut b = [0u8; 4];
                        for (i, a) in c.args.iter().enumerate() {
                            b[i] = self.eval_const(a)? as u8;
                        }
                        Some(emu_core::Ipv4Addr::new(b[0], b[1], b[2], b[3]).0 as u128)
                    }
                    ["Mac", "from_bytes"] if c.args.len() == 1 => {
                        let syn::Expr::Array(arr) = &c.args[0] else {
                            self.error(
                                &c.args[0],
                                "write the address as an array literal: `Mac::from_bytes([2, 0, 0, 0, 0, 1])`",
                            );
                            return None;
                        };
                        let mut b = [0u8; 6];
                        if arr.elems.len() != 6 {
                            self.error(arr, "a MAC address has 6 bytes");
                            return None;
                        }
                        for (i, a) in arr.elems.iter().enumerate() {
                            b[i] = self.eval_const(a)? as u8;
                        }
                        Some(emu_core::Mac::from_bytes(b).0.value() as u128)
                    }
                    [_, "new"] | ["PortMask"] | ["Mac"] | ["Ipv4Addr"] if c.args.len() == 1 => {
                        self.eval_const(&c.args[0])
                    }
                    _ => {
                        self.error(c, HELP);
                        None
                    }
                }
            }
            other => {
                self.error(other, HELP);
                None
            }
        }
    }

    /// The module enum `name`, checked once (fieldless variants only).
    pub(crate) fn module_enum(&mut self, name: &str) -> Option<EnumDef> {
        if let Some(v) = self.enums.get(name) {
            return v.clone();
        }
        let item = self.items.enums[name];
        let mut ok = true;
        if !item.generics.params.is_empty() {
            self.error(&item.generics, "generic enums are not in the subset; write a fieldless enum");
            ok = false;
        }
        let mut variants = Vec::new();
        let mut next = 0u128;
        for v in &item.variants {
            if !matches!(v.fields, syn::Fields::Unit) {
                self.error(
                    &v.fields,
                    "enum variants with fields are not in the subset yet; use a fieldless enum (and keep the data in \
                     separate values)",
                );
                ok = false;
                continue;
            }
            if let Some((_, d)) = &v.discriminant {
                match self.eval_const(d) {
                    Some(x) => next = x,
                    None => ok = false,
                }
            }
            variants.push((v.ident.to_string(), next));
            next = next.wrapping_add(1);
        }
        let def = ok.then(|| EnumDef { name: name.to_string(), variants });
        self.enums.insert(name.to_string(), def.clone());
        if let Some(d) = &def {
            self.enums_used.push(d.clone());
        }
        def
    }

    /// The index of a function of the module in [`Nf::fns`], registering it for checking.
    pub(crate) fn fn_index(&mut self, key: FnKey) -> usize {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = self.registry.len();
        self.registry.push(key.clone());
        self.index.insert(key, i);
        i
    }

    /// The resolved signature of a function of the module (errors reported once).
    pub(crate) fn signature(&mut self, key: &FnKey) -> Option<FnSig> {
        if let Some(s) = self.sigs.get(key) {
            return s.clone();
        }
        let sig = match key {
            FnKey::Process => &self.items.process.expect("present").sig,
            FnKey::Method(n) => &self.items.methods[n].sig,
            FnKey::Free(n) => &self.items.fns[n].sig,
        };
        let mut ok = true;
        if !sig.generics.params.iter().all(|g| matches!(g, syn::GenericParam::Lifetime(_))) {
            self.error(
                &sig.generics,
                "generic functions are not in the subset: hardware needs every type fixed; write the concrete types",
            );
            ok = false;
        }
        if let Some(a) = &sig.asyncness {
            self.error(a, "`async` functions are not in the subset; the NF handles one packet per call of `process`");
            ok = false;
        }
        if let Some(u) = &sig.unsafety {
            self.error(u, "`unsafe` code is not in the subset");
            ok = false;
        }
        let mut receiver = None;
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                syn::FnArg::Receiver(r) => {
                    if r.reference.is_none() {
                        self.error(r, "take the state by reference: `&self` or `&mut self`");
                        ok = false;
                    }
                    receiver = Some(r.mutability.is_some());
                }
                syn::FnArg::Typed(t) => {
                    let name = match &*t.pat {
                        syn::Pat::Ident(i) if i.subpat.is_none() && i.by_ref.is_none() => i.ident.to_string(),
                        syn::Pat::Wild(_) => "_".to_string(),
                        other => {
                            self.error(other, "name each parameter with a plain identifier");
                            ok = false;
                            continue;
                        }
                    };
                    let ty = self.resolve_type(&t.ty, TypeCtx::Param);
                    if ty == Ty::Error {
                        ok = false;
                    }
                    params.push((name, ty, t.pat.span()));
                }
            }
        }
        let ret = match &sig.output {
            syn::ReturnType::Default => Ty::unit(),
            syn::ReturnType::Type(_, t) => {
                let ty = self.resolve_type(t, TypeCtx::Value);
                if ty == Ty::Error {
                    ok = false;
                }
                ty
            }
        };
        let out = ok.then_some(FnSig { receiver, params, ret });
        self.sigs.insert(key.clone(), out.clone());
        out
    }
}

/// Drops the path prefixes that name the library itself (`emu::`, `emu_core::`, `wire::`, …).
pub(crate) fn strip_prefix(segs: &[String]) -> &[String] {
    let mut s = segs;
    while s.len() > 1 && matches!(s[0].as_str(), "emu" | "emu_core" | "wire" | "prelude" | "crate" | "self" | "super") {
        s = &s[1..];
    }
    s
}

/// The integer type called `name`: `u8`…`u128`, `i8`…`i128`, `usize`, `isize`, `u1`…`u127`.
pub(crate) fn int_type(name: &str) -> Option<IntTy> {
    match name {
        "usize" => return Some(IntTy::USIZE),
        "isize" => return Some(IntTy { bits: 64, signed: true, size: true }),
        _ => {}
    }
    let (signed, digits) = match name.as_bytes().first()? {
        b'u' => (false, &name[1..]),
        b'i' => (true, &name[1..]),
        _ => return None,
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
        return None;
    }
    let bits: u16 = digits.parse().ok()?;
    let native = matches!(bits, 8 | 16 | 32 | 64 | 128);
    if signed && !native || !(1..=128).contains(&bits) {
        return None;
    }
    Some(IntTy { bits, signed, size: false })
}

/// `v` cut to the width of `ty`.
pub(crate) fn truncate(v: u128, ty: &Ty) -> u128 {
    match ty.width() {
        Some(w) if w < 128 => v & ((1u128 << w) - 1),
        _ => v,
    }
}

pub(crate) const FLOAT: &str = "floating point is not in the subset (there is no floating-point unit in the circuit); \
                                use fixed-width integers, e.g. fixed point in a `u32`";
pub(crate) const VEC: &str = "`Vec` is a growable, heap-allocated array, which hardware cannot have; use a fixed-size \
                              state element: `Array<T, N>` (indexed) or `Queue<T, N>` (FIFO)";
pub(crate) const STRINGS: &str = "strings and characters have no hardware representation; use integer constants (and \
                                  `Bytes<N>` for fixed-length byte strings)";

pub(crate) fn heap(what: &str) -> String {
    format!(
        "heap allocation (`{what}`) is not in the subset: a circuit has no heap; keep the value inline, or in a \
         fixed-size state element"
    )
}

/// The most elements a local or constant array may have.
pub(crate) const MAX_ARRAY: u32 = 4096;

/// Whether a state element (or a struct's field) can hold a `ty`: a fixed-width value, or a
/// tuple of 2 to 5 of them or a module struct of them, held as one value (its elements' bits
/// concatenated, the first the most significant, as `emu::Bits` lays it out).
fn holds_value(ty: &Ty) -> bool {
    match ty {
        Ty::Tuple(v) => (2..=5).contains(&v.len()) && v.iter().all(holds_value),
        Ty::Struct(_, fields) => fields.iter().all(|(_, t)| holds_value(t)),
        t => t.is_value(),
    }
}

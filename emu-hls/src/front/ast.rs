//! The checked, typed AST the front end produces: what the lowering to IR consumes.
//!
//! Every expression and pattern carries its [`Ty`] and the [`Span`] of the source it came
//! from. Names are resolved: locals are [`LocalId`]s into their function's
//! [`Func::locals`], calls to functions of the NF module are indices into [`Nf::fns`], calls
//! into the library are [`LibOp`]s, constants are folded to their values. No [`Ty::Var`],
//! [`Ty::Param`] or [`Ty::Error`] is left in a checked [`Nf`].

use proc_macro2::Span;
use std::fmt;

/// A checked NF: its state, the functions that run in hardware and the module's constants
/// they use.
#[derive(Debug, Clone)]
pub struct Nf {
    /// The module's name (`learning_switch`), or the name given for a file.
    pub name: String,
    /// The state struct: the type `NetworkFunction` is implemented for.
    pub state: State,
    /// The functions that run in hardware: `fns[0]` is `process`, the others are the module's
    /// functions it reaches, in the order they were first called.
    pub fns: Vec<Func>,
    /// The module's `const` items the hardware reads (directly or through types), with values.
    pub consts: Vec<Const>,
    /// The module's enums the hardware uses.
    pub enums: Vec<EnumDef>,
    /// Functions of the module that `process` does not reach (constructors, configuration):
    /// they run only on the CPU and were not checked.
    pub cpu_only: Vec<String>,
    /// The `emu::probe!`s and `emu::count!`s of the functions above, each name once, in the
    /// order they first appear (`fns` in order, each in source order): the debugger's
    /// symbols after the state's fields.
    pub probes: Vec<Probe>,
}

/// A probe of the NF's source ([`LibOp::Probe`], [`LibOp::Count`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The name given to the macro.
    pub name: String,
    /// `Some(type of the value)` for `emu::probe!`, `None` for `emu::count!`.
    pub value: Option<Ty>,
}

/// The NF's state struct.
#[derive(Debug, Clone)]
pub struct State {
    /// The struct's name (`LearningSwitch`).
    pub name: String,
    /// Its fields, in declaration order.
    pub fields: Vec<StateField>,
}

/// One field of the state struct.
#[derive(Debug, Clone)]
pub struct StateField {
    /// The field's name (`mac_table`).
    pub name: String,
    /// A state element or a plain value (a configuration register such as an address).
    pub kind: FieldKind,
    /// Where the field is declared.
    pub span: Span,
}

/// What a state field holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldKind {
    /// A state element of the library.
    Element(Element),
    /// A fixed-width value, read and written as a register.
    Value(Ty),
}

/// A state element with its type arguments resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    /// Which element.
    pub kind: ElementKind,
    /// Its value types, in the order of its type parameters: `[T]` for `Register`, `Array` and
    /// `Queue`, `[K, V]` for the tables, none for `Counter`.
    pub types: Vec<Ty>,
    /// Its const parameters, in order: `[BITS]` for `Counter`, `[N]` for `Array`, `Cam`, `Tcam`
    /// and `Queue`, `[N, WAYS]` for `HashTable` and `Lru` (defaults filled in).
    pub sizes: Vec<u64>,
}

/// The library's state elements (`emu_core::state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementKind {
    /// `Register<T>`
    Register,
    /// `Counter<BITS>`
    Counter,
    /// `Array<T, N>`
    Array,
    /// `Cam<K, V, N>`
    Cam,
    /// `HashTable<K, V, N, WAYS>`
    HashTable,
    /// `Lru<K, V, N, WAYS>`
    Lru,
    /// `Tcam<K, V, N>`
    Tcam,
    /// `Queue<T, N>`
    Queue,
}

impl ElementKind {
    /// Every element.
    pub const ALL: [ElementKind; 8] = [
        ElementKind::Register,
        ElementKind::Counter,
        ElementKind::Array,
        ElementKind::Cam,
        ElementKind::HashTable,
        ElementKind::Lru,
        ElementKind::Tcam,
        ElementKind::Queue,
    ];

    /// The Rust type's name.
    pub fn name(self) -> &'static str {
        match self {
            ElementKind::Register => "Register",
            ElementKind::Counter => "Counter",
            ElementKind::Array => "Array",
            ElementKind::Cam => "Cam",
            ElementKind::HashTable => "HashTable",
            ElementKind::Lru => "Lru",
            ElementKind::Tcam => "Tcam",
            ElementKind::Queue => "Queue",
        }
    }
}

/// A `const` item of the module.
#[derive(Debug, Clone)]
pub struct Const {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// Its value, zero-extended (two's complement for negative values of signed types).
    pub value: u128,
}

/// A fieldless enum of the module.
#[derive(Debug, Clone)]
pub struct EnumDef {
    /// Its name.
    pub name: String,
    /// Its variants and their discriminants, in declaration order.
    pub variants: Vec<(String, u128)>,
}

/// A function of the NF module that runs in hardware.
#[derive(Debug, Clone)]
pub struct Func {
    /// Its name (`process`, `arp`).
    pub name: String,
    /// `None` for a free function, else whether it takes `&mut self` (true) or `&self`.
    pub receiver: Option<bool>,
    /// Its parameters (after `self`), as locals.
    pub params: Vec<LocalId>,
    /// Its return type.
    pub ret: Ty,
    /// Every local binding of the body (parameters first), indexed by [`LocalId`].
    pub locals: Vec<Local>,
    /// The body.
    pub body: Block,
    /// Where it is declared.
    pub span: Span,
}

/// A local binding.
#[derive(Debug, Clone)]
pub struct Local {
    /// The name in the source (bindings may shadow each other; their ids differ).
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// Declared `mut`.
    pub mutable: bool,
    /// Where it is bound.
    pub span: Span,
}

/// A local binding of a function, an index into [`Func::locals`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(pub u32);

/// `{ stmts; tail }`.
#[derive(Debug, Clone)]
pub struct Block {
    /// The statements.
    pub stmts: Vec<Stmt>,
    /// The value of the block, if it has one.
    pub tail: Option<Box<Expr>>,
    /// Its type: the tail's, `()` without one, or [`Ty::Never`] when a statement diverges.
    pub ty: Ty,
    /// Where it is.
    pub span: Span,
}

/// A statement.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // a tree built once per NF: no boxes to chase
pub enum Stmt {
    /// `let pat (: ty) = init else { els };`
    Let {
        /// The pattern bound.
        pat: Pat,
        /// The initialiser (a `let` without one declares a binding assigned later).
        init: Option<Expr>,
        /// The `else` block of a `let … else`; it diverges.
        els: Option<Block>,
    },
    /// An expression statement.
    Expr(Expr),
}

/// A typed expression.
#[derive(Debug, Clone)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Its type.
    pub ty: Ty,
    /// Where it is.
    pub span: Span,
}

/// What a `for` loop runs over.
#[derive(Debug, Clone)]
pub enum ForOver {
    /// `start..end` with constant bounds (`end` exclusive); from the last value down for
    /// `(start..end).rev()`.
    Range {
        /// First value.
        start: u128,
        /// One past the last value.
        end: u128,
        /// Counting down.
        rev: bool,
    },
    /// The elements of an array (a literal, a local or constant array, `x.to_be_bytes()`),
    /// evaluated once, in order, before the first iteration.
    Array(Box<Expr>),
}

/// The kinds of expression.
#[derive(Debug, Clone)]
pub enum ExprKind {
    /// An integer constant: a literal, a module `const` or a library constant, folded.
    Int(u128),
    /// `true` / `false`.
    Bool(bool),
    /// A named constant: a module `const` (`MAC_TABLE_SIZE`) or a library one
    /// (`icmpv4::ECHO_REQUEST`, `Mac::BROADCAST`), with its value.
    Const {
        /// The path as written.
        name: String,
        /// The value, zero-extended.
        value: u128,
    },
    /// A local binding.
    Local(LocalId),
    /// A read of a value field of the state (`self.ip`).
    SelfField(String),
    /// A field of `meta` (`meta.in_port`).
    MetaField(&'static str),
    /// `.N` of a tuple, or the inner value of `Mac`, `Ipv4Addr` or `PortMask` (`.0`).
    Field {
        /// The tuple or newtype.
        base: Box<Expr>,
        /// The field's position.
        index: u32,
    },
    /// `-x`, `!x`.
    Unary {
        /// The operator.
        op: UnOp,
        /// The operand.
        arg: Box<Expr>,
    },
    /// `l op r` (arithmetic, bit, comparison, logic).
    Binary {
        /// The operator.
        op: BinOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// `x as T` (the target is the expression's type).
    Cast(Box<Expr>),
    /// `(a, b)`; `()` is the empty tuple.
    Tuple(Vec<Expr>),
    /// A variant of `Option`, `Result`, `Action`, `DropReason` or a module enum, with its
    /// fields (`Some(x)`, `Action::Forward(p)`, `DropReason::SamePort`).
    Variant {
        /// Which variant.
        variant: Variant,
        /// Its fields.
        args: Vec<Expr>,
    },
    /// A call of a function of the NF module (`self.arp(pkt)`): an index into [`Nf::fns`].
    Call {
        /// The callee.
        func: usize,
        /// The arguments, `self` not included.
        args: Vec<Expr>,
    },
    /// A call into the library; see [`LibOp`] for what `args` holds.
    Lib {
        /// Which operation.
        op: LibOp,
        /// Its operands.
        args: Vec<Expr>,
    },
    /// `[a, b, c]`: an array of values.
    Array(Vec<Expr>),
    /// `[x; N]`: `x`, evaluated once, `N` times.
    Repeat {
        /// The element.
        value: Box<Expr>,
        /// How many.
        count: u32,
    },
    /// `a[i]` of a local array; `i` is known to be inside it.
    Index {
        /// The array.
        base: Box<Expr>,
        /// The index (`usize`).
        index: Box<Expr>,
    },
    /// `TABLE[i]` of a constant array: a lookup table; `i` is known to be inside it.
    Lookup {
        /// The array's name.
        name: String,
        /// Its elements, zero-extended.
        values: Vec<u128>,
        /// The index (`usize`).
        index: Box<Expr>,
    },
    /// `pkt.window()[i]` / `pkt.window_mut()[i]` with a constant `i` (see the subset's rules).
    WindowByte(u64),
    /// `&self.field` / `&mut self.field`: an alias of a state element, bound by a `let`.
    Borrow {
        /// The state field.
        field: String,
        /// `&mut`.
        mutable: bool,
    },
    /// `place = value`, `place op= value`.
    Assign {
        /// Where the value goes.
        place: Place,
        /// `Some(op)` for `op=`.
        op: Option<BinOp>,
        /// The value.
        value: Box<Expr>,
    },
    /// `if cond { then } else { els }`.
    If {
        /// The condition.
        cond: Box<Expr>,
        /// The then branch.
        then: Block,
        /// The else branch: a block or another `if`.
        els: Option<Box<Expr>>,
    },
    /// `match scrutinee { arms }`; `if let` is a two-armed match.
    Match {
        /// The value matched.
        scrutinee: Box<Expr>,
        /// The arms, in order.
        arms: Vec<Arm>,
    },
    /// `for var in … { body }`, unrolled: over a constant range or an array's elements.
    For {
        /// The loop variable (`None` for `_`).
        var: Option<LocalId>,
        /// What it runs over.
        over: ForOver,
        /// The body.
        body: Block,
    },
    /// A block.
    Block(Block),
    /// `break`.
    Break,
    /// `continue`.
    Continue,
    /// `return`, `return x`.
    Return(Option<Box<Expr>>),
}

/// A place an assignment writes.
#[derive(Debug, Clone)]
pub enum Place {
    /// A local binding.
    Local(LocalId),
    /// A value field of the state (`self.ip = …`).
    SelfField(String),
    /// A byte of the window at a constant index (`pkt.window_mut()[3] = …`).
    WindowByte(u64),
}

/// A match arm.
#[derive(Debug, Clone)]
pub struct Arm {
    /// The pattern.
    pub pat: Pat,
    /// The guard (`if …`).
    pub guard: Option<Expr>,
    /// The value.
    pub body: Expr,
}

/// A typed pattern.
#[derive(Debug, Clone)]
pub struct Pat {
    /// What it matches.
    pub kind: PatKind,
    /// The type of the value matched.
    pub ty: Ty,
    /// Where it is.
    pub span: Span,
}

/// The kinds of pattern.
#[derive(Debug, Clone)]
pub enum PatKind {
    /// `_`
    Wild,
    /// A binding (`port`, `mut x`).
    Bind(LocalId),
    /// An integer constant.
    Int(u128),
    /// `true` / `false`.
    Bool(bool),
    /// `lo..=hi` / `lo..hi` over integers (`hi` exclusive unless `inclusive`).
    Range {
        /// Low bound.
        lo: u128,
        /// High bound.
        hi: u128,
        /// `..=`.
        inclusive: bool,
    },
    /// `(a, b)`.
    Tuple(Vec<Pat>),
    /// `Some(p)`, `None`, `Action::Forward(p)`, `DropReason::X`, `Kind::A`.
    Variant {
        /// Which variant.
        variant: Variant,
        /// Patterns of its fields.
        args: Vec<Pat>,
    },
    /// `a | b`.
    Or(Vec<Pat>),
}

/// A variant of one of the enums the subset knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Variant {
    /// `Some(_)`
    Some,
    /// `None`
    None,
    /// `Ok(_)`
    Ok,
    /// `Err(_)`
    Err,
    /// A variant of `Action` (`"Forward"`, `"Flood"`, …).
    Action(&'static str),
    /// A `DropReason`, with its code (what the hardware carries).
    DropReason(&'static str, u8),
    /// A variant of a module enum, with its discriminant.
    Enum {
        /// The enum.
        ty: String,
        /// The variant.
        name: String,
        /// Its discriminant.
        value: u128,
    },
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    /// `-x` (signed integers).
    Neg,
    /// `!x`: logical not of a `bool`, bitwise not of an integer.
    Not,
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `+` (wraps in hardware, as in a release build)
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (constant divisor only)
    Div,
    /// `%` (constant divisor only)
    Rem,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `&&` (short-circuit)
    And,
    /// `||` (short-circuit)
    Or,
}

/// A call into the library. The receiver, when there is one, is `args[0]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LibOp {
    /// A method of `Packet` (`len`, `byte`, `set_byte`, `ones_sum`, `l3`, `set_len`, …);
    /// `args[0]` is the packet.
    Packet(&'static str),
    /// A header view: `pkt.ipv4()` or `pkt.ipv4_at(off)`. `args` = `[pkt, offset]`; for
    /// the views without `_at` the offset is the constant the library places the header at
    /// (14 for `ipv4`).
    View {
        /// The header's name in `emu_core::wire::HEADERS` (`"ipv4"`).
        header: &'static str,
        /// A `_mut` view.
        mutable: bool,
    },
    /// A field getter of a view: `args[0]` is the view.
    GetField {
        /// The header.
        header: &'static str,
        /// The field (its offset and width are in `emu_core::wire::HEADERS`).
        field: &'static str,
    },
    /// A field setter of a `_mut` view: `args` = `[view, value]`.
    SetField {
        /// The header.
        header: &'static str,
        /// The field.
        field: &'static str,
    },
    /// Another method of a view (`header_len`, `checksum_ok`, `fill_checksum`,
    /// `is_ethernet_ipv4`): `args[0]` is the view.
    ViewMethod {
        /// The header.
        header: &'static str,
        /// The method.
        method: &'static str,
    },
    /// A method of a state element: `self.field.method(args)` (or through an alias).
    State {
        /// The state field.
        field: String,
        /// Its element kind.
        element: ElementKind,
        /// The method.
        method: &'static str,
        /// Whether the method writes the element (`insert`, `inc`, `Lru::get`).
        writes: bool,
    },
    /// A checksum helper, `checksum::NAME(args)`.
    Checksum(&'static str),
    /// A method of a value (`Mac::is_multicast`, `Option::is_some`, `u13::value`,
    /// `u16::wrapping_add`): `args[0]` is the receiver.
    Method {
        /// The receiver's type name (`Mac`, `Option`, `u16`).
        ty: String,
        /// The method.
        method: &'static str,
    },
    /// An associated function or constructor (`Ipv4Addr::new`, `PortMask::single`,
    /// `PortMask(..)`, `u4::new`).
    Assoc {
        /// The type (`Ipv4Addr`, `u4`).
        ty: String,
        /// The function (`new`, `single`; `""` for a tuple-struct constructor).
        name: &'static str,
    },
    /// `emu::probe!(name, value)`: `args[0]` is the value; the probe is `Nf::probes`' entry
    /// of that name.
    Probe(String),
    /// `emu::count!(name)`: no args.
    Count(String),
}

/// The types of the subset.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Ty {
    /// `bool`
    Bool,
    /// An integer: `u8`…`u128`, `i8`…`i128`, `usize`/`isize` (64 bits, the CPU target's),
    /// and `arbitrary_int`'s `u1`…`u127`.
    Int(IntTy),
    /// `Mac`, 48 bits.
    Mac,
    /// `Ipv4Addr`, 32 bits.
    Ipv4Addr,
    /// `PortMask`, 32 bits.
    PortMask,
    /// `Bytes<N>`, `8 × N` bits.
    Bytes(u32),
    /// `Action`.
    Action,
    /// `DropReason`.
    DropReason,
    /// A fieldless enum of the module.
    Enum(String),
    /// `Option<T>`.
    Option(Box<Ty>),
    /// `Result<T, E>` (what `Queue::push` returns).
    Result(Box<Ty>, Box<Ty>),
    /// A tuple; `()` is the empty one.
    Tuple(Vec<Ty>),
    /// `[T; N]`: a local array (a literal, `x.to_be_bytes()`); not storable in state.
    Array(Box<Ty>, u32),
    /// A struct of the module with named fixed-width fields (a flow key), held as its fields'
    /// bits concatenated in declaration order, as `#[derive(emu::Bits)]` lays it out.
    Struct(String, Vec<(String, Ty)>),
    /// The packet (`pkt: &mut Packet`).
    Packet {
        /// `&mut Packet`.
        mutable: bool,
    },
    /// The packet's metadata (`meta: &Meta`).
    Meta,
    /// A header view of the packet (`pkt.ipv4()`), by header name.
    View {
        /// The header's name in `emu_core::wire::HEADERS`.
        header: &'static str,
        /// A `_mut` view (has setters).
        mutable: bool,
    },
    /// An alias of a state element (`let t = &mut self.table;`).
    StateRef {
        /// The state field.
        field: String,
        /// `&mut`.
        mutable: bool,
    },
    /// The type of `return`, `break`, and of blocks that always leave early.
    Never,
    /// While checking: an unknown type (an integer literal's, `None`'s) being inferred.
    Var(u32),
    /// In the library's signature tables: the element's `n`th type parameter (`K`, `V`, `T`).
    Param(u8),
    /// While checking: the type of an expression that already has an error (stops cascades).
    Error,
}

/// An integer type.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IntTy {
    /// Width in bits.
    pub bits: u16,
    /// Signed.
    pub signed: bool,
    /// `usize` / `isize`.
    pub size: bool,
}

impl IntTy {
    /// `u{bits}` (native or `arbitrary_int`).
    pub const fn unsigned(bits: u16) -> IntTy {
        IntTy { bits, signed: false, size: false }
    }

    /// `usize`: 64 bits, the CPU target's width.
    pub const USIZE: IntTy = IntTy { bits: 64, signed: false, size: true };

    /// A primitive type (`u8`…`u128`, `i8`…, `usize`), which literals and `as` can have.
    pub fn is_primitive(self) -> bool {
        self.size || matches!(self.bits, 8 | 16 | 32 | 64 | 128)
    }

    /// The largest value.
    pub fn max(self) -> u128 {
        let bits = if self.signed { self.bits - 1 } else { self.bits };
        if bits >= 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        }
    }
}

impl fmt::Display for IntTy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.size, self.signed) {
            (true, false) => f.write_str("usize"),
            (true, true) => f.write_str("isize"),
            (false, s) => write!(f, "{}{}", if s { "i" } else { "u" }, self.bits),
        }
    }
}

impl fmt::Debug for IntTy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Ty {
    /// `u{bits}`.
    pub const fn uint(bits: u16) -> Ty {
        Ty::Int(IntTy::unsigned(bits))
    }

    /// `usize`.
    pub const USIZE: Ty = Ty::Int(IntTy::USIZE);

    /// `()`.
    pub fn unit() -> Ty {
        Ty::Tuple(Vec::new())
    }

    /// True for `()`.
    pub fn is_unit(&self) -> bool {
        matches!(self, Ty::Tuple(v) if v.is_empty())
    }

    /// The width in bits of a value of this type in hardware, for the value types.
    pub fn width(&self) -> Option<u32> {
        Some(match self {
            Ty::Bool => 1,
            Ty::Int(i) => i.bits as u32,
            Ty::Mac => 48,
            Ty::Ipv4Addr | Ty::PortMask => 32,
            Ty::Bytes(n) => 8 * n,
            _ => return None,
        })
    }

    /// True for the types a state element can hold and a register can store.
    pub fn is_value(&self) -> bool {
        matches!(self, Ty::Bool | Ty::Int(_) | Ty::Mac | Ty::Ipv4Addr | Ty::PortMask | Ty::Bytes(_))
            || matches!(self, Ty::Enum(_))
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Bool => f.write_str("bool"),
            Ty::Int(i) => write!(f, "{i}"),
            Ty::Mac => f.write_str("Mac"),
            Ty::Ipv4Addr => f.write_str("Ipv4Addr"),
            Ty::PortMask => f.write_str("PortMask"),
            Ty::Bytes(n) => write!(f, "Bytes<{n}>"),
            Ty::Action => f.write_str("Action"),
            Ty::DropReason => f.write_str("DropReason"),
            Ty::Enum(n) => f.write_str(n),
            Ty::Option(t) => write!(f, "Option<{t}>"),
            Ty::Result(t, e) => write!(f, "Result<{t}, {e}>"),
            Ty::Tuple(v) => {
                f.write_str("(")?;
                for (i, t) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                if v.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            Ty::Array(t, n) => write!(f, "[{t}; {n}]"),
            Ty::Struct(name, _) => f.write_str(name),
            Ty::Packet { mutable: true } => f.write_str("&mut Packet"),
            Ty::Packet { mutable: false } => f.write_str("&Packet"),
            Ty::Meta => f.write_str("&Meta"),
            Ty::View { header, mutable } => {
                write!(f, "{header}::Header<&{}[u8]>", if *mutable { "mut " } else { "" })
            }
            Ty::StateRef { field, mutable } => write!(f, "&{}self.{field}", if *mutable { "mut " } else { "" }),
            Ty::Never => f.write_str("!"),
            Ty::Var(_) => f.write_str("{integer}"),
            Ty::Param(n) => write!(f, "P{n}"),
            Ty::Error => f.write_str("{error}"),
        }
    }
}

impl fmt::Debug for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

//! A small Verilog-2001 AST and its printer.
//!
//! Everything the compiler emits as Verilog — the state elements of [`crate::hw`], the FSM of
//! the back end, the top level — is built as values of these types and printed by
//! [`print`](mod@print), never glued together from strings. The AST covers exactly the
//! synthesizable subset the compiler needs:
//!
//! - a [`Module`] with [`Port`]s (direction, net or variable, width);
//! - [`Item`]s: `wire`, `reg` (optionally a memory), `integer` and `localparam` declarations,
//!   continuous `assign`s, `always @(posedge clk)` and `always @(*)` blocks, `initial` blocks,
//!   [`Instance`]s of other modules, comments;
//! - [`Stmt`]s: blocking and non-blocking assignment, `if`/`else`, `case` and constant-bound
//!   `for`;
//! - [`Expr`]essions: sized [`Literal`]s, identifiers, bit and word selects, constant and
//!   indexed part selects, concatenation and replication, unary, binary and ternary operators.
//!
//! The printer writes one style: four-space indents, `begin`/`end` around every branch, one
//! declaration per line, and parentheses around every operand that is itself an operator
//! expression unless it repeats the same associative operator (`a + b + c`), so the reader
//! never needs Verilog's precedence table.
//!
//! ```
//! use emu_hls::verilog::{Expr, Item, Module, Port, Stmt};
//!
//! let mut m = Module::new("toggle");
//! m.ports.push(Port::input("clock", 1));
//! m.ports.push(Port::output_wire("q", 1));
//! m.items.push(Item::reg("state", 1));
//! m.items.push(Item::always_posedge(
//!     "clock",
//!     vec![Stmt::nb(Expr::id("state"), Expr::id("state").inv())],
//! ));
//! m.items.push(Item::assign(Expr::id("q"), Expr::id("state")));
//! assert_eq!(
//!     m.to_string(),
//!     "\
//! module toggle (
//!     input wire clock,
//!     output wire q
//! );
//!     reg state;
//!     always @(posedge clock) begin
//!         state <= ~state;
//!     end
//!     assign q = state;
//! endmodule
//! "
//! );
//! ```

pub mod print;

/// The direction of a module port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// `input`
    Input,
    /// `output`
    Output,
    /// `inout`
    Inout,
}

/// Whether a port or declaration is a net (`wire`) or a variable (`reg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Net {
    /// `wire`: driven by `assign` or an instance output.
    Wire,
    /// `reg`: assigned in `always` or `initial` blocks.
    Reg,
}

/// A port of a [`Module`]: `input wire [7:0] data`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    /// The port's name.
    pub name: String,
    /// Its direction.
    pub dir: Dir,
    /// `wire` or `reg`.
    pub net: Net,
    /// Its width in bits, at least 1; 1 prints without a range.
    pub width: u32,
}

impl Port {
    /// `input wire [width-1:0] name`.
    pub fn input(name: impl Into<String>, width: u32) -> Port {
        Port::new(name, Dir::Input, Net::Wire, width)
    }

    /// `output wire [width-1:0] name`.
    pub fn output_wire(name: impl Into<String>, width: u32) -> Port {
        Port::new(name, Dir::Output, Net::Wire, width)
    }

    /// `output reg [width-1:0] name`.
    pub fn output_reg(name: impl Into<String>, width: u32) -> Port {
        Port::new(name, Dir::Output, Net::Reg, width)
    }

    /// A port of any kind. Panics when `width` is 0.
    pub fn new(name: impl Into<String>, dir: Dir, net: Net, width: u32) -> Port {
        assert!(width >= 1, "a Verilog port is at least 1 bit wide");
        Port { name: name.into(), dir, net, width }
    }
}

/// A Verilog module: a name, ports in order, and a body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Module {
    /// The module's name.
    pub name: String,
    /// The ports, in the order of the port list.
    pub ports: Vec<Port>,
    /// The body, in order.
    pub items: Vec<Item>,
}

impl Module {
    /// An empty module called `name`.
    pub fn new(name: impl Into<String>) -> Module {
        Module { name: name.into(), ports: vec![], items: vec![] }
    }

    /// Turns every `always @(*)` that only sets registers to constants (a state element no
    /// state makes a request of, say) into `assign`s of wires. Such a block reads nothing, so
    /// an event-driven simulator (iverilog, Vivado's xsim) never runs it and leaves its
    /// registers at X, where Verilator and yosys see the constants.
    pub fn constant_combs_as_assigns(&mut self) {
        let mut constants: Vec<(String, Expr)> = vec![];
        let mut items = Vec::with_capacity(self.items.len());
        for item in std::mem::take(&mut self.items) {
            let sets: Option<Vec<(String, Expr)>> = match &item {
                Item::Always { trigger: Trigger::Comb, body } if !body.is_empty() => body
                    .iter()
                    .map(|st| match st {
                        Stmt::Blocking(Expr::Ident(name), value @ Expr::Lit(_)) => Some((name.clone(), value.clone())),
                        _ => None,
                    })
                    .collect(),
                _ => None,
            };
            match sets {
                // Each register set once (a later set would win in the block, not in assigns).
                Some(sets) if sets.iter().enumerate().all(|(i, (n, _))| sets[..i].iter().all(|(m, _)| m != n)) => {
                    for (name, value) in &sets {
                        items.push(Item::Assign { lhs: Expr::Ident(name.clone()), rhs: value.clone() });
                    }
                    constants.extend(sets);
                }
                _ => items.push(item),
            }
        }
        for item in &mut items {
            if let Item::Reg { name, width, depth: None, .. } = item {
                if constants.iter().any(|(n, _)| n == name) {
                    *item = Item::Wire { name: name.clone(), width: *width };
                }
            }
        }
        self.items = items;
    }
}

/// A declaration or a piece of logic in a module body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// `// text`, one comment line per line of `text`.
    Comment(String),
    /// An empty line, to separate groups.
    Blank,
    /// `wire [width-1:0] name;`
    Wire {
        /// Its name.
        name: String,
        /// Its width, at least 1.
        width: u32,
    },
    /// `reg [width-1:0] name;` or, with a depth, the memory `reg [width-1:0] name [0:depth-1];`
    Reg {
        /// Its name.
        name: String,
        /// The width of the register (of one word, for a memory), at least 1.
        width: u32,
        /// `Some(words)` for a memory.
        depth: Option<u64>,
        /// Synthesis attributes printed before the declaration: `(* ram_style = "block" *)`.
        attrs: Vec<(String, String)>,
    },
    /// `integer name;` — a loop variable.
    Integer(String),
    /// `localparam [width-1:0] name = value;` (the range comes from the literal's width).
    Localparam {
        /// Its name.
        name: String,
        /// Its value.
        value: Literal,
    },
    /// `assign lhs = rhs;`
    Assign {
        /// The net driven: an identifier, select or concatenation of them.
        lhs: Expr,
        /// The value.
        rhs: Expr,
    },
    /// `always @(posedge clock) begin … end` or `always @(*) begin … end`.
    Always {
        /// When the block runs.
        trigger: Trigger,
        /// Its statements.
        body: Vec<Stmt>,
    },
    /// `initial begin … end` — initial contents (register and block RAM init values).
    Initial(Vec<Stmt>),
    /// An instance of another module.
    Instance(Instance),
}

impl Item {
    /// `// text`.
    pub fn comment(text: impl Into<String>) -> Item {
        Item::Comment(text.into())
    }

    /// `wire [width-1:0] name;`
    pub fn wire(name: impl Into<String>, width: u32) -> Item {
        assert!(width >= 1, "a Verilog wire is at least 1 bit wide");
        Item::Wire { name: name.into(), width }
    }

    /// `reg [width-1:0] name;`
    pub fn reg(name: impl Into<String>, width: u32) -> Item {
        assert!(width >= 1, "a Verilog reg is at least 1 bit wide");
        Item::Reg { name: name.into(), width, depth: None, attrs: vec![] }
    }

    /// `reg [width-1:0] name [0:depth-1];`
    pub fn memory(name: impl Into<String>, width: u32, depth: u64) -> Item {
        assert!(width >= 1, "a Verilog memory word is at least 1 bit wide");
        assert!(depth >= 1, "a Verilog memory has at least one word");
        Item::Reg { name: name.into(), width, depth: Some(depth), attrs: vec![] }
    }

    /// `integer name;`
    pub fn integer(name: impl Into<String>) -> Item {
        Item::Integer(name.into())
    }

    /// `localparam name = value;`
    pub fn localparam(name: impl Into<String>, value: Literal) -> Item {
        Item::Localparam { name: name.into(), value }
    }

    /// `assign lhs = rhs;`
    pub fn assign(lhs: Expr, rhs: Expr) -> Item {
        Item::Assign { lhs, rhs }
    }

    /// `always @(posedge clock) begin body end`.
    pub fn always_posedge(clock: impl Into<String>, body: Vec<Stmt>) -> Item {
        Item::Always { trigger: Trigger::Posedge(clock.into()), body }
    }

    /// `always @(*) begin body end`.
    pub fn always_comb(body: Vec<Stmt>) -> Item {
        Item::Always { trigger: Trigger::Comb, body }
    }

    /// Adds the synthesis attribute `(* key = "value" *)` to a `reg` declaration; other items
    /// are returned unchanged.
    pub fn with_attr(mut self, key: impl Into<String>, value: impl Into<String>) -> Item {
        if let Item::Reg { attrs, .. } = &mut self {
            attrs.push((key.into(), value.into()));
        }
        self
    }
}

/// What starts an `always` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// `@(posedge clock)`: sequential logic, written with non-blocking assignments.
    Posedge(String),
    /// `@(*)`: combinational logic, written with blocking assignments.
    Comb,
}

/// An instance of a module: `name #(.P(v)) inst (.port(expr), …);`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// The instantiated module's name.
    pub module: String,
    /// The instance's name.
    pub name: String,
    /// Parameter overrides, by name.
    pub params: Vec<(String, Expr)>,
    /// Port connections, by name.
    pub connections: Vec<(String, Expr)>,
}

/// A statement inside an `always` or `initial` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    /// `// text`
    Comment(String),
    /// `lhs = rhs;`
    Blocking(Expr, Expr),
    /// `lhs <= rhs;`
    NonBlocking(Expr, Expr),
    /// `if (cond) begin … end else begin … end`; an empty `otherwise` prints no `else`, and an
    /// `otherwise` that is a single `if` prints as `else if`.
    If {
        /// The condition.
        cond: Expr,
        /// Statements when it holds.
        then: Vec<Stmt>,
        /// Statements when it does not.
        otherwise: Vec<Stmt>,
    },
    /// `case (subject) labels: begin … end … default: begin … end endcase`.
    Case {
        /// The value switched on.
        subject: Expr,
        /// Each arm: its labels and statements.
        arms: Vec<(Vec<Expr>, Vec<Stmt>)>,
        /// The `default` arm, if any.
        default: Option<Vec<Stmt>>,
    },
    /// `for (var = from; var < to; var = var + 1) begin … end` over an `integer` variable.
    For {
        /// The loop variable (declared with [`Item::Integer`]).
        var: String,
        /// First value.
        from: u64,
        /// One past the last value.
        to: u64,
        /// The body.
        body: Vec<Stmt>,
    },
}

impl Stmt {
    /// `lhs <= rhs;`
    pub fn nb(lhs: Expr, rhs: Expr) -> Stmt {
        Stmt::NonBlocking(lhs, rhs)
    }

    /// `lhs = rhs;`
    pub fn blocking(lhs: Expr, rhs: Expr) -> Stmt {
        Stmt::Blocking(lhs, rhs)
    }

    /// `if (cond) begin then end`.
    pub fn if_(cond: Expr, then: Vec<Stmt>) -> Stmt {
        Stmt::If { cond, then, otherwise: vec![] }
    }

    /// `if (cond) begin then end else begin otherwise end`.
    pub fn if_else(cond: Expr, then: Vec<Stmt>, otherwise: Vec<Stmt>) -> Stmt {
        Stmt::If { cond, then, otherwise }
    }

    /// `// text`
    pub fn comment(text: impl Into<String>) -> Stmt {
        Stmt::Comment(text.into())
    }
}

/// How a [`Literal`] is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Radix {
    /// `8'd42`
    Dec,
    /// `8'h2a`
    Hex,
    /// `8'b00101010` (all `width` digits)
    Bin,
}

/// A number: sized (`8'h2a`) or, without a width, a plain decimal integer (`42`, for loop
/// bounds and parameters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Literal {
    /// The width in bits; `None` for an unsized decimal.
    pub width: Option<u32>,
    /// The value, least significant 64-bit limb first; bits at and above `width` are zero.
    pub limbs: Vec<u64>,
    /// How it is written; wide values in decimal are written in hex.
    pub radix: Radix,
}

impl Literal {
    /// A `width`-bit literal of `value` (which must fit) written in `radix`.
    pub fn new(width: u32, value: u128, radix: Radix) -> Literal {
        Literal::from_limbs(width, vec![value as u64, (value >> 64) as u64], radix)
    }

    /// A `width`-bit literal from 64-bit limbs, least significant first. Panics when the value
    /// does not fit in `width` bits or `width` is 0.
    pub fn from_limbs(width: u32, mut limbs: Vec<u64>, radix: Radix) -> Literal {
        assert!(width >= 1, "a sized Verilog literal is at least 1 bit wide");
        for (i, limb) in limbs.iter().enumerate() {
            let lo = 64 * i as u32;
            let fits = if lo >= width {
                *limb == 0
            } else if width - lo >= 64 {
                true
            } else {
                limb >> (width - lo) == 0
            };
            assert!(fits, "literal does not fit in {width} bits");
        }
        while limbs.len() > 1 && limbs.last() == Some(&0) {
            limbs.pop();
        }
        if limbs.is_empty() {
            limbs.push(0);
        }
        Literal { width: Some(width), limbs, radix }
    }

    /// An unsized decimal integer.
    pub fn int(value: u64) -> Literal {
        Literal { width: None, limbs: vec![value], radix: Radix::Dec }
    }

    /// True when the value is 0.
    pub fn is_zero(&self) -> bool {
        self.limbs.iter().all(|&l| l == 0)
    }
}

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `~a`, bitwise not.
    Not,
    /// `!a`, logical not.
    LogicNot,
    /// `-a`
    Neg,
    /// `&a`, reduction and.
    RedAnd,
    /// `|a`, reduction or.
    RedOr,
    /// `^a`, reduction xor.
    RedXor,
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `&&`
    LogicAnd,
    /// `||`
    LogicOr,
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
    /// `<=` (as a comparison)
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl BinOp {
    /// The operator's text.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::LogicAnd => "&&",
            BinOp::LogicOr => "||",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
        }
    }

    /// True when `a op b op c` means the same however it is grouped, so a chain of it needs
    /// no parentheses.
    pub fn is_associative(self) -> bool {
        matches!(self, BinOp::Add | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor | BinOp::LogicAnd | BinOp::LogicOr)
    }
}

/// An expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// A number.
    Lit(Literal),
    /// A net, variable, parameter or loop variable.
    Ident(String),
    /// `base[index]`: one bit of a vector, or one word of a memory.
    Index(Box<Expr>, Box<Expr>),
    /// `base[msb:lsb]`: a constant part select.
    Slice(Box<Expr>, u32, u32),
    /// `base[start +: width]`: an indexed part select.
    Part(Box<Expr>, Box<Expr>, u32),
    /// `{a, b, c}`, most significant first.
    Concat(Vec<Expr>),
    /// `{count{e}}`
    Repeat(u32, Box<Expr>),
    /// A unary operator applied.
    Unary(UnOp, Box<Expr>),
    /// A binary operator applied.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `cond ? then : otherwise`
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// An identifier.
    pub fn id(name: impl Into<String>) -> Expr {
        Expr::Ident(name.into())
    }

    /// A `width`-bit literal written in hex.
    pub fn hex(width: u32, value: u128) -> Expr {
        Expr::Lit(Literal::new(width, value, Radix::Hex))
    }

    /// A `width`-bit literal written in decimal.
    pub fn dec(width: u32, value: u128) -> Expr {
        Expr::Lit(Literal::new(width, value, Radix::Dec))
    }

    /// A `width`-bit literal written in binary.
    pub fn bin(width: u32, value: u128) -> Expr {
        Expr::Lit(Literal::new(width, value, Radix::Bin))
    }

    /// `width'h0`, or `1'b0` for one bit.
    pub fn zero(width: u32) -> Expr {
        if width == 1 {
            Expr::bit(false)
        } else {
            Expr::hex(width, 0)
        }
    }

    /// `1'b1` or `1'b0`.
    pub fn bit(value: bool) -> Expr {
        Expr::bin(1, value as u128)
    }

    /// An unsized decimal integer.
    pub fn int(value: u64) -> Expr {
        Expr::Lit(Literal::int(value))
    }

    /// `{parts}`, most significant first.
    pub fn concat(parts: Vec<Expr>) -> Expr {
        Expr::Concat(parts)
    }

    /// `{count{self}}`.
    pub fn repeat(self, count: u32) -> Expr {
        Expr::Repeat(count, Box::new(self))
    }

    /// `cond ? then : otherwise`.
    pub fn mux(cond: Expr, then: Expr, otherwise: Expr) -> Expr {
        Expr::Ternary(Box::new(cond), Box::new(then), Box::new(otherwise))
    }

    /// `self[index]`.
    pub fn index(self, index: Expr) -> Expr {
        Expr::Index(Box::new(self), Box::new(index))
    }

    /// `self[bit]` with a constant bit number.
    pub fn bit_at(self, bit: u32) -> Expr {
        self.index(Expr::int(bit as u64))
    }

    /// `self[msb:lsb]`.
    pub fn slice(self, msb: u32, lsb: u32) -> Expr {
        assert!(msb >= lsb, "a part select is written [msb:lsb] with msb >= lsb");
        match self {
            // `x[h:l][msb:lsb]` is not Verilog (yosys refuses it): select from `x` at once.
            Expr::Slice(base, h, l) => {
                assert!(l + msb <= h, "[{msb}:{lsb}] of a {}-bit part select", h - l + 1);
                Expr::Slice(base, l + msb, l + lsb)
            }
            other => Expr::Slice(Box::new(other), msb, lsb),
        }
    }

    /// `self[start +: width]`.
    pub fn part(self, start: Expr, width: u32) -> Expr {
        Expr::Part(Box::new(self), Box::new(start), width)
    }

    /// `self op rhs`.
    pub fn binary(self, op: BinOp, rhs: Expr) -> Expr {
        Expr::Binary(op, Box::new(self), Box::new(rhs))
    }

    /// `op self`.
    pub fn unary(self, op: UnOp) -> Expr {
        Expr::Unary(op, Box::new(self))
    }

    /// `self + rhs`
    pub fn plus(self, rhs: Expr) -> Expr {
        self.binary(BinOp::Add, rhs)
    }

    /// `self - rhs`
    pub fn minus(self, rhs: Expr) -> Expr {
        self.binary(BinOp::Sub, rhs)
    }

    /// `self & rhs`
    pub fn and(self, rhs: Expr) -> Expr {
        self.binary(BinOp::And, rhs)
    }

    /// `self | rhs`
    pub fn or(self, rhs: Expr) -> Expr {
        self.binary(BinOp::Or, rhs)
    }

    /// `self ^ rhs`
    pub fn xor(self, rhs: Expr) -> Expr {
        self.binary(BinOp::Xor, rhs)
    }

    /// `self && rhs`
    pub fn land(self, rhs: Expr) -> Expr {
        self.binary(BinOp::LogicAnd, rhs)
    }

    /// `self || rhs`
    pub fn lor(self, rhs: Expr) -> Expr {
        self.binary(BinOp::LogicOr, rhs)
    }

    /// `self == rhs`
    pub fn equals(self, rhs: Expr) -> Expr {
        self.binary(BinOp::Eq, rhs)
    }

    /// `self != rhs`
    pub fn not_equals(self, rhs: Expr) -> Expr {
        self.binary(BinOp::Ne, rhs)
    }

    /// `self < rhs`
    pub fn less_than(self, rhs: Expr) -> Expr {
        self.binary(BinOp::Lt, rhs)
    }

    /// `self >= rhs`
    pub fn at_least(self, rhs: Expr) -> Expr {
        self.binary(BinOp::Ge, rhs)
    }

    /// `~self`
    pub fn inv(self) -> Expr {
        self.unary(UnOp::Not)
    }

    /// `!self`
    pub fn lnot(self) -> Expr {
        self.unary(UnOp::LogicNot)
    }

    /// `|self`
    pub fn any(self) -> Expr {
        self.unary(UnOp::RedOr)
    }

    /// `^self`
    pub fn parity(self) -> Expr {
        self.unary(UnOp::RedXor)
    }
}

/// The number of bits needed to number `n` things (`⌈log2 n⌉`), at least 1: the width of an
/// index into `n` slots.
pub fn index_width(n: u64) -> u32 {
    if n <= 2 {
        1
    } else {
        64 - (n - 1).leading_zeros()
    }
}

/// Verilog-2001 and SystemVerilog keywords (the generated Verilog is read as SystemVerilog by
/// yosys `-sv` and Verilator), which cannot name a signal, instance or module.
const KEYWORDS: &[&str] = &[
    "alias",
    "always",
    "always_comb",
    "always_ff",
    "always_latch",
    "and",
    "assert",
    "assign",
    "assume",
    "automatic",
    "before",
    "begin",
    "bind",
    "bins",
    "binsof",
    "bit",
    "break",
    "buf",
    "bufif0",
    "bufif1",
    "byte",
    "case",
    "casex",
    "casez",
    "cell",
    "chandle",
    "checker",
    "class",
    "clocking",
    "cmos",
    "config",
    "const",
    "constraint",
    "context",
    "continue",
    "cover",
    "covergroup",
    "coverpoint",
    "cross",
    "deassign",
    "default",
    "defparam",
    "design",
    "disable",
    "dist",
    "do",
    "edge",
    "else",
    "end",
    "endcase",
    "endchecker",
    "endclass",
    "endclocking",
    "endconfig",
    "endfunction",
    "endgenerate",
    "endgroup",
    "endinterface",
    "endmodule",
    "endpackage",
    "endprimitive",
    "endprogram",
    "endproperty",
    "endsequence",
    "endspecify",
    "endtable",
    "endtask",
    "enum",
    "event",
    "eventually",
    "expect",
    "export",
    "extends",
    "extern",
    "final",
    "first_match",
    "for",
    "force",
    "foreach",
    "forever",
    "fork",
    "forkjoin",
    "function",
    "generate",
    "genvar",
    "global",
    "highz0",
    "highz1",
    "if",
    "iff",
    "ifnone",
    "ignore_bins",
    "illegal_bins",
    "implements",
    "implies",
    "import",
    "incdir",
    "include",
    "initial",
    "inout",
    "input",
    "inside",
    "instance",
    "int",
    "integer",
    "interconnect",
    "interface",
    "intersect",
    "join",
    "join_any",
    "join_none",
    "large",
    "let",
    "liblist",
    "library",
    "local",
    "localparam",
    "logic",
    "longint",
    "macromodule",
    "matches",
    "medium",
    "modport",
    "module",
    "nand",
    "negedge",
    "nettype",
    "new",
    "nexttime",
    "nmos",
    "nor",
    "noshowcancelled",
    "not",
    "notif0",
    "notif1",
    "null",
    "or",
    "output",
    "package",
    "packed",
    "parameter",
    "pmos",
    "posedge",
    "primitive",
    "priority",
    "program",
    "property",
    "protected",
    "pull0",
    "pull1",
    "pulldown",
    "pullup",
    "pulsestyle_ondetect",
    "pulsestyle_onevent",
    "pure",
    "rand",
    "randc",
    "randcase",
    "randsequence",
    "rcmos",
    "real",
    "realtime",
    "ref",
    "reg",
    "reject_on",
    "release",
    "repeat",
    "restrict",
    "return",
    "rnmos",
    "rpmos",
    "rtran",
    "rtranif0",
    "rtranif1",
    "s_always",
    "s_eventually",
    "s_nexttime",
    "s_until",
    "s_until_with",
    "scalared",
    "sequence",
    "shortint",
    "shortreal",
    "showcancelled",
    "signed",
    "small",
    "soft",
    "solve",
    "specify",
    "specparam",
    "static",
    "string",
    "strong",
    "strong0",
    "strong1",
    "struct",
    "super",
    "supply0",
    "supply1",
    "sync_accept_on",
    "sync_reject_on",
    "table",
    "tagged",
    "task",
    "this",
    "throughout",
    "time",
    "timeprecision",
    "timeunit",
    "tran",
    "tranif0",
    "tranif1",
    "tri",
    "tri0",
    "tri1",
    "triand",
    "trior",
    "trireg",
    "type",
    "typedef",
    "union",
    "unique",
    "unique0",
    "unsigned",
    "until",
    "until_with",
    "untyped",
    "use",
    "uwire",
    "var",
    "vectored",
    "virtual",
    "void",
    "wait",
    "wait_order",
    "wand",
    "weak",
    "weak0",
    "weak1",
    "while",
    "wildcard",
    "wire",
    "with",
    "within",
    "wor",
    "xnor",
    "xor",
];

/// True when `name` is a Verilog or SystemVerilog keyword.
pub fn is_keyword(name: &str) -> bool {
    KEYWORDS.contains(&name)
}

/// `name` made a legal Verilog identifier: characters other than letters, digits, `_` and `$`
/// become `_`, a leading digit or `$` gets a `_` before it, and a keyword gets a `_` after it
/// (`table` → `table_`). An NF's own names (`mac_table`, `in_port`) come through unchanged.
pub fn identifier(name: &str) -> String {
    let mut out: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '$' { c } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit() || c == '$') {
        out.insert(0, '_');
    }
    if is_keyword(&out) {
        out.push('_');
    }
    out
}

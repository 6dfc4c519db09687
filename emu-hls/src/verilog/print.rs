//! The printer: [`Module`]s, bodies, statements and expressions as Verilog-2001 text.
//!
//! [`Module`], [`Expr`] and [`Literal`] implement [`Display`](fmt::Display); [`items`] prints a
//! module body on its own (what a rust-hdl `Verilog::Wrapper` wants: rust-hdl writes the
//! module header and indents the body itself).

use super::UnOp;
use super::{BinOp, Dir, Expr, Instance, Item, Literal, Module, Net, Port, Radix, Stmt, Trigger};
use std::fmt::{self, Write as _};

const INDENT: &str = "    ";

/// Prints a module body (declarations and logic) with its first level unindented.
pub fn items(items: &[Item]) -> String {
    let mut out = String::new();
    for item in items {
        print_item(&mut out, 0, item);
    }
    out
}

/// `[width-1:0] ` or nothing for one bit.
fn range(width: u32) -> String {
    if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    }
}

fn port_decl(p: &Port) -> String {
    let dir = match p.dir {
        Dir::Input => "input",
        Dir::Output => "output",
        Dir::Inout => "inout",
    };
    let net = match p.net {
        Net::Wire => "wire",
        Net::Reg => "reg",
    };
    format!("{dir} {net} {}{}", range(p.width), p.name)
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ports.is_empty() {
            writeln!(f, "module {};", self.name)?;
        } else {
            writeln!(f, "module {} (", self.name)?;
            for (i, p) in self.ports.iter().enumerate() {
                let sep = if i + 1 < self.ports.len() { "," } else { "" };
                writeln!(f, "{INDENT}{}{sep}", port_decl(p))?;
            }
            writeln!(f, ");")?;
        }
        let mut body = String::new();
        for item in &self.items {
            print_item(&mut body, 1, item);
        }
        f.write_str(&body)?;
        writeln!(f, "endmodule")
    }
}

fn line(out: &mut String, level: usize, text: &str) {
    if text.is_empty() {
        out.push('\n');
        return;
    }
    for _ in 0..level {
        out.push_str(INDENT);
    }
    out.push_str(text);
    out.push('\n');
}

fn comment(out: &mut String, level: usize, text: &str) {
    for l in text.lines() {
        if l.is_empty() {
            line(out, level, "//");
        } else {
            line(out, level, &format!("// {l}"));
        }
    }
}

fn print_item(out: &mut String, level: usize, item: &Item) {
    match item {
        Item::Comment(text) => comment(out, level, text),
        Item::Blank => line(out, level, ""),
        Item::Wire { name, width } => line(out, level, &format!("wire {}{name};", range(*width))),
        Item::Reg { name, width, depth, attrs } => {
            let mut text = String::new();
            for (k, v) in attrs {
                let _ = write!(text, "(* {k} = \"{v}\" *) ");
            }
            let _ = write!(text, "reg {}{name}", range(*width));
            if let Some(d) = depth {
                let _ = write!(text, " [0:{}]", d - 1);
            }
            text.push(';');
            line(out, level, &text);
        }
        Item::Integer(name) => line(out, level, &format!("integer {name};")),
        Item::Localparam { name, value } => {
            let r = value.width.map(range).unwrap_or_default();
            line(out, level, &format!("localparam {r}{name} = {value};"));
        }
        Item::Assign { lhs, rhs } => line(out, level, &format!("assign {lhs} = {rhs};")),
        Item::Always { trigger, body } => {
            let head = match trigger {
                Trigger::Posedge(clock) => format!("always @(posedge {clock}) begin"),
                Trigger::Comb => "always @(*) begin".to_string(),
            };
            line(out, level, &head);
            stmts(out, level + 1, body);
            line(out, level, "end");
        }
        Item::Initial(body) => {
            line(out, level, "initial begin");
            stmts(out, level + 1, body);
            line(out, level, "end");
        }
        Item::Instance(inst) => print_instance(out, level, inst),
    }
}

fn print_instance(out: &mut String, level: usize, inst: &Instance) {
    let named = |list: &[(String, Expr)]| -> Vec<String> { list.iter().map(|(n, e)| format!(".{n}({e})")).collect() };
    if inst.params.is_empty() {
        line(out, level, &format!("{} {} (", inst.module, inst.name));
    } else {
        line(out, level, &format!("{} #(", inst.module));
        let ps = named(&inst.params);
        for (i, p) in ps.iter().enumerate() {
            let sep = if i + 1 < ps.len() { "," } else { "" };
            line(out, level + 1, &format!("{p}{sep}"));
        }
        line(out, level, &format!(") {} (", inst.name));
    }
    let cs = named(&inst.connections);
    for (i, c) in cs.iter().enumerate() {
        let sep = if i + 1 < cs.len() { "," } else { "" };
        line(out, level + 1, &format!("{c}{sep}"));
    }
    line(out, level, ");");
}

fn stmts(out: &mut String, level: usize, list: &[Stmt]) {
    for s in list {
        print_stmt(out, level, s);
    }
}

fn print_stmt(out: &mut String, level: usize, s: &Stmt) {
    match s {
        Stmt::Comment(text) => comment(out, level, text),
        Stmt::Blocking(l, r) => line(out, level, &format!("{l} = {r};")),
        Stmt::NonBlocking(l, r) => line(out, level, &format!("{l} <= {r};")),
        Stmt::If { .. } => print_if(out, level, s, ""),
        Stmt::Case { subject, arms, default } => {
            line(out, level, &format!("case ({subject})"));
            for (labels, body) in arms {
                let labels = labels.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
                arm(out, level + 1, &labels, body);
            }
            if let Some(body) = default {
                arm(out, level + 1, "default", body);
            }
            line(out, level, "endcase");
        }
        Stmt::For { var, from, to, body } => {
            line(out, level, &format!("for ({var} = {from}; {var} < {to}; {var} = {var} + 1) begin"));
            stmts(out, level + 1, body);
            line(out, level, "end");
        }
    }
}

/// One `case` arm: `label: begin … end`.
fn arm(out: &mut String, level: usize, label: &str, body: &[Stmt]) {
    line(out, level, &format!("{label}: begin"));
    stmts(out, level + 1, body);
    line(out, level, "end");
}

/// An `if` whose first line starts with `prefix` (`""` or `"end else "`).
fn print_if(out: &mut String, level: usize, s: &Stmt, prefix: &str) {
    let Stmt::If { cond, then, otherwise } = s else { unreachable!("print_if is only called on Stmt::If") };
    line(out, level, &format!("{prefix}if ({cond}) begin"));
    stmts(out, level + 1, then);
    match otherwise.as_slice() {
        [] => line(out, level, "end"),
        [nested @ Stmt::If { .. }] => print_if(out, level, nested, "end else "),
        rest => {
            line(out, level, "end else begin");
            stmts(out, level + 1, rest);
            line(out, level, "end");
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(width) = self.width else {
            return write!(f, "{}", self.limbs[0]);
        };
        let radix = if self.radix == Radix::Dec && self.limbs.len() > 1 { Radix::Hex } else { self.radix };
        match radix {
            Radix::Dec => write!(f, "{width}'d{}", self.limbs[0]),
            Radix::Hex => {
                write!(f, "{width}'h")?;
                let top = self.limbs.len() - 1;
                write!(f, "{:x}", self.limbs[top])?;
                for limb in self.limbs[..top].iter().rev() {
                    write!(f, "{limb:016x}")?;
                }
                Ok(())
            }
            Radix::Bin => {
                write!(f, "{width}'b")?;
                for bit in (0..width).rev() {
                    let limb = self.limbs.get((bit / 64) as usize).copied().unwrap_or(0);
                    f.write_char(if limb >> (bit % 64) & 1 == 1 { '1' } else { '0' })?;
                }
                Ok(())
            }
        }
    }
}

/// Whether `child`, an operand of `parent`, is printed in parentheses.
fn needs_parens(parent: Option<BinOp>, child: &Expr) -> bool {
    match child {
        Expr::Binary(op, ..) => match parent {
            Some(p) => !(p == *op && p.is_associative()),
            None => true,
        },
        Expr::Ternary(..) => true,
        _ => false,
    }
}

fn operand(f: &mut fmt::Formatter<'_>, parent: Option<BinOp>, e: &Expr) -> fmt::Result {
    if needs_parens(parent, e) {
        write!(f, "({e})")
    } else {
        write!(f, "{e}")
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Lit(l) => write!(f, "{l}"),
            Expr::Ident(name) => f.write_str(name),
            Expr::Index(base, index) => write!(f, "{base}[{index}]"),
            Expr::Slice(base, msb, lsb) => write!(f, "{base}[{msb}:{lsb}]"),
            Expr::Part(base, start, width) => write!(f, "{base}[{start} +: {width}]"),
            Expr::Concat(parts) => {
                f.write_char('{')?;
                for (i, p) in parts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{p}")?;
                }
                f.write_char('}')
            }
            Expr::Repeat(n, e) => write!(f, "{{{n}{{{e}}}}}"),
            Expr::Unary(op, e) => {
                f.write_str(match op {
                    UnOp::Not => "~",
                    UnOp::LogicNot => "!",
                    UnOp::Neg => "-",
                    UnOp::RedAnd => "&",
                    UnOp::RedOr => "|",
                    UnOp::RedXor => "^",
                })?;
                // `~~a` and `- -a` read badly and `&&a` lexes as a logical and: parenthesize
                // nested unary operators as well as binary and ternary ones.
                if matches!(**e, Expr::Unary(..)) {
                    write!(f, "({e})")
                } else {
                    operand(f, None, e)
                }
            }
            Expr::Binary(op, l, r) => {
                operand(f, Some(*op), l)?;
                write!(f, " {} ", op.symbol())?;
                operand(f, Some(*op), r)
            }
            Expr::Ternary(c, a, b) => {
                operand(f, None, c)?;
                f.write_str(" ? ")?;
                operand(f, None, a)?;
                f.write_str(" : ")?;
                // A ternary in the else position chains without parentheses.
                if matches!(**b, Expr::Ternary(..)) {
                    write!(f, "{b}")
                } else {
                    operand(f, None, b)
                }
            }
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::verilog::index_width;

    #[test]
    fn literals() {
        assert_eq!(Expr::hex(8, 0x2a).to_string(), "8'h2a");
        assert_eq!(Expr::dec(8, 42).to_string(), "8'd42");
        assert_eq!(Expr::bin(4, 5).to_string(), "4'b0101");
        assert_eq!(Expr::bit(true).to_string(), "1'b1");
        assert_eq!(Expr::zero(48).to_string(), "48'h0");
        assert_eq!(Expr::int(7).to_string(), "7");
        assert_eq!(Expr::hex(128, u128::MAX).to_string(), "128'hffffffffffffffffffffffffffffffff");
        assert_eq!(Expr::hex(72, 1 << 64 | 5).to_string(), "72'h10000000000000005");
        // Wide decimals are written in hex.
        assert_eq!(Expr::dec(80, 1 << 70).to_string(), "80'h400000000000000000");
        let wide = Literal::from_limbs(130, vec![1, 0, 2], Radix::Hex);
        assert_eq!(wide.to_string(), "130'h200000000000000000000000000000001");
        assert_eq!(Literal::from_limbs(3, vec![5, 0, 0], Radix::Bin).to_string(), "3'b101");
        assert!(Literal::new(9, 0, Radix::Dec).is_zero());
    }

    #[test]
    fn a_select_of_a_select_is_one_select() {
        // `x[63:0][31:0]` is not Verilog (yosys refuses it).
        assert_eq!(Expr::id("x").slice(63, 0).slice(31, 0).to_string(), "x[31:0]");
        assert_eq!(Expr::id("x").slice(100, 64).slice(7, 4).to_string(), "x[71:68]");
    }

    #[test]
    #[should_panic(expected = "does not fit")]
    fn literal_too_wide_panics() {
        Literal::new(4, 16, Radix::Hex);
    }

    #[test]
    fn expressions_parenthesize_every_mixed_operand() {
        let (a, b, c) = (Expr::id("a"), Expr::id("b"), Expr::id("c"));
        assert_eq!(a.clone().plus(b.clone()).plus(c.clone()).to_string(), "a + b + c");
        assert_eq!(
            a.clone().equals(b.clone()).land(c.clone().not_equals(Expr::zero(4))).to_string(),
            "(a == b) && (c != 4'h0)"
        );
        assert_eq!(a.clone().minus(b.clone().minus(c.clone())).to_string(), "a - (b - c)");
        assert_eq!(a.clone().and(b.clone()).inv().to_string(), "~(a & b)");
        assert_eq!(a.clone().inv().inv().to_string(), "~(~a)");
        assert_eq!(a.clone().any().lnot().to_string(), "!(|a)");
        assert_eq!(
            Expr::mux(a.clone().equals(b.clone()), c.clone(), Expr::mux(b.clone(), a.clone(), c.clone())).to_string(),
            "(a == b) ? c : b ? a : c"
        );
        assert_eq!(
            Expr::mux(a.clone(), Expr::mux(b.clone(), a.clone(), c.clone()), c.clone()).to_string(),
            "a ? (b ? a : c) : c"
        );
        assert_eq!(
            Expr::concat(vec![a.clone().slice(7, 4), b.clone().bit_at(0), Expr::bit(false).repeat(3)]).to_string(),
            "{a[7:4], b[0], {3{1'b0}}}"
        );
        assert_eq!(Expr::id("mem").index(a.clone().plus(Expr::hex(4, 1))).to_string(), "mem[a + 4'h1]");
        assert_eq!(Expr::id("window").part(Expr::id("offset"), 8).to_string(), "window[offset +: 8]");
        assert_eq!(a.clone().and(Expr::hex(8, 0xf0)).parity().to_string(), "^(a & 8'hf0)");
    }

    #[test]
    fn identifiers() {
        use crate::verilog::{identifier, is_keyword};
        assert!(is_keyword("table") && is_keyword("logic") && is_keyword("always"));
        assert!(!is_keyword("mac_table"));
        assert_eq!(identifier("mac_table"), "mac_table");
        assert_eq!(identifier("table"), "table_");
        assert_eq!(identifier("in-port.0"), "in_port_0");
        assert_eq!(identifier("3way"), "_3way");
        assert_eq!(identifier(""), "_");
    }

    #[test]
    fn index_widths() {
        assert_eq!(index_width(1), 1);
        assert_eq!(index_width(2), 1);
        assert_eq!(index_width(3), 2);
        assert_eq!(index_width(4), 2);
        assert_eq!(index_width(5), 3);
        assert_eq!(index_width(16), 4);
        assert_eq!(index_width(17), 5);
        assert_eq!(index_width(1 << 40), 40);
    }

    /// A module using every construct, printed: the golden text is the style contract.
    #[test]
    fn golden_module() {
        let id = Expr::id;
        let mut m = Module::new("emu_example");
        m.ports = vec![
            Port::input("clock", 1),
            Port::input("reset", 1),
            Port::input("op", 2),
            Port::input("data", 8),
            Port::output_wire("sum", 8),
            Port::output_reg("flag", 1),
            Port::new("pad", Dir::Inout, Net::Wire, 1),
        ];
        m.items = vec![
            Item::comment("Constants.\n\nTwo of them."),
            Item::localparam("OP_ADD", Literal::new(2, 0, Radix::Dec)),
            Item::localparam("DEPTH", Literal::int(16)),
            Item::Blank,
            Item::reg("acc", 8),
            Item::wire("carry", 1),
            Item::memory("lut", 8, 16).with_attr("ram_style", "block"),
            Item::integer("i"),
            Item::Initial(vec![Stmt::For {
                var: "i".into(),
                from: 0,
                to: 16,
                body: vec![Stmt::blocking(id("lut").index(id("i")), Expr::zero(8))],
            }]),
            Item::assign(id("sum"), id("acc")),
            Item::assign(Expr::concat(vec![id("carry")]), id("acc").bit_at(7).and(id("data").bit_at(7))),
            Item::always_posedge(
                "clock",
                vec![Stmt::if_else(
                    id("reset"),
                    vec![Stmt::nb(id("acc"), Expr::zero(8))],
                    vec![Stmt::if_else(
                        id("op").equals(id("OP_ADD")),
                        vec![Stmt::nb(id("acc"), id("acc").plus(id("data")))],
                        vec![Stmt::if_else(
                            id("op").equals(Expr::dec(2, 1)),
                            vec![
                                Stmt::comment("load"),
                                Stmt::nb(id("acc"), id("data")),
                                Stmt::nb(id("lut").index(id("data").slice(3, 0)), id("acc")),
                            ],
                            vec![Stmt::nb(id("acc"), id("acc"))],
                        )],
                    )],
                )],
            ),
            Item::always_comb(vec![Stmt::Case {
                subject: id("op"),
                arms: vec![
                    (vec![Expr::dec(2, 0), Expr::dec(2, 1)], vec![Stmt::blocking(id("flag"), Expr::bit(true))]),
                    (vec![Expr::dec(2, 2)], vec![]),
                ],
                default: Some(vec![Stmt::blocking(id("flag"), Expr::bit(false))]),
            }]),
            Item::Instance(Instance {
                module: "emu_child".into(),
                name: "child".into(),
                params: vec![("WIDTH".into(), Expr::int(8))],
                connections: vec![
                    ("clock".into(), id("clock")),
                    ("in".into(), Expr::mux(id("reset"), Expr::zero(8), id("data"))),
                ],
            }),
            Item::Instance(Instance {
                module: "emu_leaf".into(),
                name: "leaf".into(),
                params: vec![],
                connections: vec![("clock".into(), id("clock"))],
            }),
        ];
        let want = r#"module emu_example (
    input wire clock,
    input wire reset,
    input wire [1:0] op,
    input wire [7:0] data,
    output wire [7:0] sum,
    output reg flag,
    inout wire pad
);
    // Constants.
    //
    // Two of them.
    localparam [1:0] OP_ADD = 2'd0;
    localparam DEPTH = 16;

    reg [7:0] acc;
    wire carry;
    (* ram_style = "block" *) reg [7:0] lut [0:15];
    integer i;
    initial begin
        for (i = 0; i < 16; i = i + 1) begin
            lut[i] = 8'h0;
        end
    end
    assign sum = acc;
    assign {carry} = acc[7] & data[7];
    always @(posedge clock) begin
        if (reset) begin
            acc <= 8'h0;
        end else if (op == OP_ADD) begin
            acc <= acc + data;
        end else if (op == 2'd1) begin
            // load
            acc <= data;
            lut[data[3:0]] <= acc;
        end else begin
            acc <= acc;
        end
    end
    always @(*) begin
        case (op)
            2'd0, 2'd1: begin
                flag = 1'b1;
            end
            2'd2: begin
            end
            default: begin
                flag = 1'b0;
            end
        endcase
    end
    emu_child #(
        .WIDTH(8)
    ) child (
        .clock(clock),
        .in(reset ? 8'h0 : data)
    );
    emu_leaf leaf (
        .clock(clock)
    );
endmodule
"#;
        assert_eq!(m.to_string(), want);
    }

    #[test]
    fn golden_body_for_a_wrapper() {
        let body = vec![Item::reg("q", 4), Item::always_posedge("clock", vec![Stmt::nb(Expr::id("q"), Expr::id("d"))])];
        assert_eq!(items(&body), "reg [3:0] q;\nalways @(posedge clock) begin\n    q <= d;\nend\n");
        assert_eq!(Module::new("empty").to_string(), "module empty;\nendmodule\n");
    }
}

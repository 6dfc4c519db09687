//! The text form of a function: stable (a function prints the same way every time), readable,
//! and read back by [`parse`](super::parse()).
//!
//! ```text
//! fn learning_switch(window=64) {
//!     state mac_table: cam<u48, u8, 16>
//!     state floods: counter<u64>
//!
//! block0:
//!     v0:u48 = pkt.read 6, 6
//!     v1:u48 = pkt.read 0, 6
//!     v2:u1 = slice v0, 40
//!     v3:u1 = not v2
//!     br v3, block1, block2
//!
//! block1:
//!     v4:u8 = meta.in_port
//!     v5:u1, v6:u48, v7:u8 = cam.insert mac_table, v0, v4
//!     jump block2
//! …
//! }
//! ```
//!
//! Every instruction is `results = op operands`, each result with its type; a computed packet
//! address prints as `v7+4`; widths an op carries (casts, slices) are its result's type.

use super::function::{ActionExpr, BlockCall, Function, Inst, Terminator};
use super::op::Op;
use core::fmt::{self, Write};

/// Writes `func` in the text form.
pub fn write_function(w: &mut dyn Write, func: &Function) -> fmt::Result {
    writeln!(w, "fn {}(window={}) {{", func.name, func.window)?;
    for (_, s) in func.states.iter() {
        let role = match s.role {
            super::StateRole::Field => "",
            super::StateRole::Probe => " probe",
            super::StateRole::Count => " count",
        };
        writeln!(w, "    state {}: {}{role}", s.name, s.kind)?;
    }
    for (n, &b) in func.layout.iter().enumerate() {
        if n > 0 || !func.states.is_empty() {
            writeln!(w)?;
        }
        let data = &func.blocks[b];
        write!(w, "{b}")?;
        if !data.params.is_empty() {
            let params: Vec<String> = data.params.iter().map(|p| format!("{p}:{}", func.value_type(*p))).collect();
            write!(w, "({})", params.join(", "))?;
        }
        writeln!(w, ":")?;
        for &i in &data.insts {
            writeln!(w, "    {}", inst_to_string(func, i))?;
        }
        match &data.term {
            Some(t) => writeln!(w, "    {}", terminator_to_string(t))?,
            None => writeln!(w, "    ; no terminator")?,
        }
    }
    writeln!(w, "}}")
}

/// One instruction in the text form, without indentation: `v3:u16 = zext v2`.
pub fn inst_to_string(func: &Function, inst: Inst) -> String {
    let data = &func.insts[inst];
    let mut s = String::new();
    if !data.results.is_empty() {
        let rs: Vec<String> = data
            .results
            .iter()
            .map(|r| match func.values.get(*r) {
                Some(v) => format!("{r}:{}", v.ty),
                None => format!("{r}:?"),
            })
            .collect();
        s.push_str(&rs.join(", "));
        s.push_str(" = ");
    }
    s.push_str(data.op.name());
    let state_name = |id| func.states.get(id).map_or_else(|| format!("{id}"), |d| d.name.clone());
    let operands: Vec<String> = match &data.op {
        Op::Const(c) => vec![c.to_string()],
        Op::Slice(a, lo, _) => vec![a.to_string(), lo.to_string()],
        Op::PktRead(addr, n) => vec![addr.to_string(), n.to_string()],
        Op::PktWrite(addr, v) => vec![addr.to_string(), v.to_string()],
        Op::State(id, op) => {
            let mut v = vec![state_name(*id)];
            v.extend(op.args().iter().map(|a| a.to_string()));
            v
        }
        op => op.args().iter().map(|a| a.to_string()).collect(),
    };
    if !operands.is_empty() {
        s.push(' ');
        s.push_str(&operands.join(", "));
    }
    s
}

fn call_to_string(c: &BlockCall) -> String {
    if c.args.is_empty() {
        c.block.to_string()
    } else {
        let args: Vec<String> = c.args.iter().map(|a| a.to_string()).collect();
        format!("{}({})", c.block, args.join(", "))
    }
}

/// A terminator in the text form: `br v2, block2, block1(v5)`.
pub fn terminator_to_string(t: &Terminator) -> String {
    match t {
        Terminator::Jump(c) => format!("jump {}", call_to_string(c)),
        Terminator::Branch(v, a, b) => format!("br {v}, {}, {}", call_to_string(a), call_to_string(b)),
        Terminator::Return(a) => format!("return {}", action_to_string(a)),
    }
}

/// An action in the text form: `forward v9`, `drop same_port`.
pub fn action_to_string(a: &ActionExpr) -> String {
    match a {
        ActionExpr::Forward(v) => format!("forward {v}"),
        ActionExpr::Multicast(v) => format!("multicast {v}"),
        ActionExpr::Flood => "flood".into(),
        ActionExpr::Reply => "reply".into(),
        ActionExpr::Drop(r) => format!("drop {}", r.name()),
    }
}

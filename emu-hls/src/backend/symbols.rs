//! The debug symbol table `emu hls` writes: every state element with its kind, widths and the
//! address the debug unit (issue 7) will serve it at, then the probes (`emu::probe!`,
//! `emu::count!`) the same way, as JSON.

use super::Design;
use crate::ir::{StateKind, StateRole};
use serde_json::{json, Value};

/// The address space of each element in the register interface: element `n` at
/// `ELEMENT_STRIDE * (n + 1)`, entries at consecutive 32-bit words inside it.
pub const ELEMENT_STRIDE: u64 = emu_debug::hw::SYMBOL_STRIDE as u64;

/// The symbol table of `design`.
pub fn symbols(design: &Design) -> Value {
    let f = &design.func;
    let all: Vec<(usize, &crate::ir::StateDecl)> = f.states.iter().map(|(_, s)| s).enumerate().collect();
    let elements: Vec<Value> = all
        .iter()
        .filter(|(_, s)| s.role == StateRole::Field)
        .map(|&(n, s)| {
            let address = ELEMENT_STRIDE * (n as u64 + 1);
            let mut e = json!({
                "name": s.name,
                "kind": s.kind.name(),
                "address": format!("0x{address:08x}"),
                "instance": format!("nf.st_{}", crate::verilog::identifier(&s.name)),
            });
            match &s.kind {
                StateKind::Counter { bits } => e["width"] = json!(bits),
                StateKind::Register { ty } => e["width"] = json!(ty.width()),
                StateKind::Array { ty, size } => {
                    e["width"] = json!(ty.width());
                    e["size"] = json!(size);
                }
                StateKind::Cam { key, value, size } | StateKind::Tcam { key, value, size } => {
                    e["key_width"] = json!(key.width());
                    e["value_width"] = json!(value.width());
                    e["size"] = json!(size);
                }
                StateKind::HashTable { key, value, size, ways } | StateKind::Lru { key, value, size, ways } => {
                    e["key_width"] = json!(key.width());
                    e["value_width"] = json!(value.width());
                    e["size"] = json!(size);
                    e["ways"] = json!(ways);
                }
                StateKind::Queue { ty, size } => {
                    e["width"] = json!(ty.width());
                    e["size"] = json!(size);
                }
            }
            e
        })
        .collect();
    // Probes are registers and counters like the fields (the same `instance` naming), listed
    // apart because the debugger shows them as probes, after the fields.
    let probes: Vec<Value> = all
        .iter()
        .filter(|(_, s)| s.role != StateRole::Field)
        .map(|&(n, s)| {
            let address = ELEMENT_STRIDE * (n as u64 + 1);
            let (kind, width) = match &s.kind {
                StateKind::Register { ty } => ("probe", ty.width()),
                StateKind::Counter { bits } => ("counter", *bits),
                other => unreachable!("a probe is a register or a counter, not {other}"),
            };
            json!({
                "name": s.name,
                "kind": kind,
                "width": width,
                "address": format!("0x{address:08x}"),
                "instance": format!("nf.st_{}", crate::verilog::identifier(&s.name)),
            })
        })
        .collect();
    json!({
        "nf": f.name,
        "module": design.top_name(),
        "bus_bits": 8 * design.config.bus_bytes,
        "window": f.window,
        "elements": elements,
        "counters": [
            {"name": "drops", "kind": "port", "ports": ["stat_drop_valid", "stat_drop_reason"],
             "note": "one pulse per dropped frame with its DropReason code"}
        ],
        "probes": probes,
    })
}

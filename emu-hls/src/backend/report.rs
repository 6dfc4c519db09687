//! The report `emu hls` writes: the FSM, cycles per packet for every path through the NF, the
//! initiation interval, the memories and a resource estimate.

use super::Design;
use crate::ir::StateKind;
use crate::sched::{StateKind as FsmKind, CHAIN_LIMIT};
use std::fmt::Write;

/// Cycles a frame of `len` bytes spends in the fixed phases: receive (one per beat), check
/// (1), read the buffer's first word (1), send (one per beat).
pub fn fixed_cycles(len: usize, bus_bytes: usize) -> u64 {
    let beats = len.max(1).div_ceil(bus_bytes) as u64;
    2 * beats + 2
}

/// One path's cycles for a frame of `len` bytes: the fixed phases plus its NF states (a sum
/// state counted at its shortest, one word).
pub fn path_cycles(design: &Design, states: &[usize], len: usize) -> u64 {
    let nf: u64 = states.iter().map(|s| if design.sched.states[*s].kind == FsmKind::Sum { 2 } else { 1 }).sum();
    fixed_cycles(len, design.config.bus_bytes) + nf
}

/// The report as text.
pub fn report(design: &Design) -> String {
    let d = design;
    let f = &d.func;
    let bus = d.config.bus_bytes;
    let mut r = String::new();
    let _ = writeln!(r, "# {}: hardware report", f.name);
    let _ = writeln!(r);
    let _ = writeln!(
        r,
        "Bus {} bits, header window {} bytes, frames up to {} bytes, {} ports.",
        8 * bus,
        f.window,
        d.config.max_frame,
        d.config.ports
    );
    let _ = writeln!(r, "One packet at a time: receive, check, the NF's states, send (no overlap between packets).");
    let _ = writeln!(r);
    let _ = writeln!(r, "## FSM: {} states (chain limit {CHAIN_LIMIT} levels)", d.sched.states.len());
    let _ = writeln!(r);
    let _ = writeln!(r, "```");
    let _ = write!(r, "{}", d.sched.display(f));
    let _ = writeln!(r, "```");
    let _ = writeln!(r);
    let _ = writeln!(r, "## Cycles per packet, by path");
    let _ = writeln!(r);
    let _ = writeln!(
        r,
        "Cycles = receive ⌈len/{bus}⌉ + check 1 + NF states + buffer read 1 + send ⌈len/{bus}⌉. \
         A sum state takes 1 + one per {bus}-byte word summed (counted here at one word)."
    );
    let _ = writeln!(r);
    let _ = writeln!(r, "| path (blocks) | verdict | NF states | cycles, 64-byte frame | cycles, 1518-byte frame |");
    let _ = writeln!(r, "|---|---|---|---|---|");
    let paths = d.sched.paths(f);
    let mut worst64 = 0;
    let mut best64 = u64::MAX;
    for p in &paths {
        let blocks: Vec<String> = p.blocks.iter().map(|b| b.to_string()).collect();
        let c64 = path_cycles(d, &p.states, 64);
        worst64 = worst64.max(c64);
        best64 = best64.min(c64);
        let sum = if p.has_sum { " + sum words" } else { "" };
        let _ = writeln!(
            r,
            "| {} | {} | {}{sum} | {c64} | {} |",
            blocks.join(" → "),
            p.verdict,
            p.states.len(),
            path_cycles(d, &p.states, 1518)
        );
    }
    let drop_check = fixed_cycles(64, bus) - 1 - 64usize.div_ceil(bus) as u64;
    let _ = writeln!(r, "| (ingress check fails) | drop | 0 | {drop_check} | — |");
    let _ = writeln!(r);
    let _ = writeln!(
        r,
        "Initiation interval: equal to the cycles per packet (one packet at a time): \
         {best64} to {worst64} cycles for back-to-back 64-byte frames. \
         At 200 MHz, 4×10G line rate for 64-byte frames needs at most 3.36."
    );
    let _ = writeln!(r);
    let _ = writeln!(r, "## Memories");
    let _ = writeln!(r);
    let _ = writeln!(r, "| memory | kind | width × depth | bits |");
    let _ = writeln!(r, "|---|---|---|---|");
    let words = d.buffer_words();
    let _ = writeln!(r, "| packet buffer | block RAM | {} × {words} | {} |", 8 * bus, 8 * bus * words);
    let _ = writeln!(r, "| header window | registers | {} × 1 | {} |", 8 * f.window, 8 * f.window);
    let mut ff = 8 * f.window as usize + 16 * 2 + 8 + 32 + 8 * bus + 64;
    for (_, s) in f.states.iter() {
        let (kind, shape, bits) = element_bits(&s.kind);
        ff += if matches!(s.kind, StateKind::Array { .. }) { 0 } else { bits };
        let _ = writeln!(r, "| {} | {kind} | {shape} | {bits} |", s.name);
    }
    let _ = writeln!(r);
    let _ = writeln!(r, "## Resource estimate");
    let _ = writeln!(r);
    let bram_bits = 8 * bus * words
        + f.states
            .iter()
            .filter(|(_, s)| matches!(s.kind, StateKind::Array { .. }))
            .map(|(_, s)| element_bits(&s.kind).2)
            .sum::<usize>();
    let _ = writeln!(
        r,
        "About {ff} flip-flops in state and window registers plus the FSM's value registers; \
         {} 36-Kbit block RAMs. `emu synth` (yosys synth_xilinx) gives the real figures.",
        bram_bits.div_ceil(36 * 1024).max(1)
    );
    r
}

fn element_bits(k: &StateKind) -> (&'static str, String, usize) {
    match k {
        StateKind::Counter { bits } => ("counter (registers)", format!("{bits} × 1"), *bits as usize),
        StateKind::Register { ty } => ("register", format!("{} × 1", ty.width()), ty.width() as usize),
        StateKind::Array { ty, size } => {
            ("array (block RAM)", format!("{} × {size}", ty.width()), ty.width() as usize * *size as usize)
        }
        StateKind::Cam { key, value, size } => {
            let w = key.width() as usize + value.width() as usize + 1;
            ("CAM (registers, comparators)", format!("{w} × {size}"), w * *size as usize)
        }
        StateKind::Lru { key, value, size } => {
            let age = StateKind::slot_width(*size) as usize;
            let w = key.width() as usize + value.width() as usize + 1 + age;
            ("LRU (registers, comparators, ages)", format!("{w} × {size}"), w * *size as usize)
        }
        StateKind::HashTable { key, value, size, ways } => {
            let w = key.width() as usize + value.width() as usize + 1;
            let sets = *size / (*ways).max(1);
            ("hash table (block RAM)", format!("{w} × {ways} × {sets}"), w * *size as usize)
        }
        StateKind::Tcam { key, value, size } => {
            let w = 2 * key.width() as usize + value.width() as usize + 1;
            ("TCAM (registers, masked comparators)", format!("{w} × {size}"), w * *size as usize)
        }
        StateKind::Queue { ty, size } => {
            ("queue (block RAM)", format!("{} × {size}", ty.width()), ty.width() as usize * *size as usize)
        }
    }
}

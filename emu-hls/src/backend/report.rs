//! The report `emu hls` writes: the FSM, cycles per packet for every path through the NF, the
//! initiation interval, the memories and a resource estimate.

use super::Design;
use crate::ir::StateKind;
use crate::sched::{Path, StateKind as FsmKind, CHAIN_LIMIT};
use std::fmt::Write;

/// Beats of a frame of `len` bytes on a bus of `bus_bytes`.
pub fn beats(len: usize, bus_bytes: usize) -> u64 {
    len.max(1).div_ceil(bus_bytes) as u64
}

/// The core's cycles for one frame on `path`: check and take (1) and the NF states (a sum
/// state counted at its shortest, one word: 2). The core takes the next frame in the cycle it
/// hands this one to the egress, so back to back this is its initiation interval.
pub fn path_interval(design: &Design, path: &Path) -> u64 {
    1 + nf_cycles(design, path)
}

/// The cycles of `path`'s NF states, a sum state counted at its shortest (one word: 2).
fn nf_cycles(design: &Design, path: &Path) -> u64 {
    path.states.iter().map(|s| if design.sched.states[*s].kind == FsmKind::Sum { 2 } else { 1 }).sum()
}

/// Cycles per packet back to back for a path whose NF states take `nf` cycles: the slowest
/// stage's interval, the core's (1 + `nf`) or the ingress's (one per beat: the core checks
/// and takes a frame in the edge its last beat arrives). The egress's, one per beat, is never
/// the larger.
fn cycles(design: &Design, nf: u64, len: usize) -> u64 {
    (1 + nf).max(beats(len, design.config.bus_bytes))
}

/// One frame's latency through an idle design on a path whose NF states take `nf` cycles:
/// receive (one per beat; checked and taken with the last), the NF states, the handoff to the
/// egress (1), then to its last beat sent (one per beat) or, for a drop, to the drop.
fn latency(design: &Design, nf: u64, drops: bool, len: usize) -> u64 {
    let b = beats(len, design.config.bus_bytes);
    b + nf + 1 + if drops { 0 } else { b }
}

/// The fewest and the most cycles per packet back to back for frames of `len` bytes, over
/// every path through the NF (`None` without one).
pub fn cycles_range(design: &Design, len: usize) -> Option<(u64, u64)> {
    let v = design.sched.verdicts(&design.func);
    let lo = v.iter().map(|v| cycles(design, v.min_weight, len)).min()?;
    let hi = v.iter().map(|v| cycles(design, v.max_weight, len)).max()?;
    Some((lo, hi))
}

/// Paths beyond this many are reported by verdict, not one by one.
pub const PATHS_LISTED: u128 = 200;

/// Cycles per packet back to back on `path`: the slowest stage's interval.
pub fn path_cycles(design: &Design, path: &Path, len: usize) -> u64 {
    cycles(design, nf_cycles(design, path), len)
}

/// One frame's latency on `path` through an idle design, to its last beat sent or its drop.
pub fn path_latency(design: &Design, path: &Path, len: usize) -> u64 {
    latency(design, nf_cycles(design, path), path.drops, len)
}

/// Frames per second of 4×10G Ethernet at 64 bytes a frame (84 bytes on the wire with the
/// preamble and the gap between frames), in millions.
pub const LINE_RATE_MPPS_64: f64 = 4.0 * 10_000.0 / (84.0 * 8.0);

/// The most cycles per frame a design clocked at `clock_mhz` may take to keep up with 4×10G of
/// 64-byte frames.
pub fn line_rate_cycles(clock_mhz: f64) -> f64 {
    clock_mhz / LINE_RATE_MPPS_64
}

/// Whether `cycles` per frame keeps up with 4×10G of 64-byte frames at `clock_mhz`: `yes`, or
/// how many times too slow.
fn at_line_rate(cycles: u64, clock_mhz: f64) -> String {
    let budget = line_rate_cycles(clock_mhz);
    if cycles as f64 <= budget {
        "yes".into()
    } else {
        format!("no ({:.2}×)", cycles as f64 / budget)
    }
}

/// The report as text, for a 200 MHz clock.
pub fn report(design: &Design) -> String {
    report_at(design, 200.0)
}

/// The report as text, line rate judged at `clock_mhz`.
pub fn report_at(design: &Design, clock_mhz: f64) -> String {
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
    let _ = writeln!(
        r,
        "Three stages, each on its own frame: the ingress receives one into a buffer slot, the \
         core checks and processes the one before, the egress sends the one before that."
    );
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
        "Per packet, back to back = the slowest stage: the core's check 1 + NF states, or the \
         ingress's ⌈len/{bus}⌉ (the core checks and takes a frame in the cycle its last beat \
         arrives; the egress's ⌈len/{bus}⌉ overlaps both). Latency through an idle design = \
         receive ⌈len/{bus}⌉ (checked and taken with the last beat) + NF states + handoff 1 + \
         send ⌈len/{bus}⌉ (none for a drop). A sum state takes 1 + one per {bus}-byte word summed \
         (counted here at one word)."
    );
    let _ = writeln!(r);
    let verdicts = d.sched.verdicts(f);
    let total: u128 = verdicts.iter().map(|v| v.paths).fold(0, u128::saturating_add);
    let (best64, worst64) = cycles_range(d, 64).unwrap_or((0, 0));
    if total <= PATHS_LISTED {
        let _ = writeln!(
            r,
            "| path (blocks) | verdict | NF states | cycles per packet, 64 B | 4×10G at {clock_mhz} MHz, 64 B | latency, 64 B | cycles per packet, 1518 B |"
        );
        let _ = writeln!(r, "|---|---|---|---|---|---|---|");
        for p in &d.sched.paths(f) {
            let blocks: Vec<String> = p.blocks.iter().map(|b| b.to_string()).collect();
            let sum = if p.has_sum { " + sum words" } else { "" };
            let _ = writeln!(
                r,
                "| {} | {} | {}{sum} | {} | {} | {} | {} |",
                blocks.join(" → "),
                p.verdict,
                p.states.len(),
                path_cycles(d, p, 64),
                at_line_rate(path_cycles(d, p, 64), clock_mhz),
                path_latency(d, p, 64),
                path_cycles(d, p, 1518)
            );
        }
    } else {
        let _ = writeln!(
            r,
            "{} paths through the NF: by verdict, the fewest and the most cycles on them.",
            count(total)
        );
        let _ = writeln!(r);
        let _ = writeln!(
            r,
            "| verdict | paths | NF states | cycles per packet, 64 B | 4×10G at {clock_mhz} MHz, 64 B | latency, 64 B | cycles per packet, 1518 B |"
        );
        let _ = writeln!(r, "|---|---|---|---|---|---|---|");
        for v in &verdicts {
            let span = |f: &dyn Fn(u64) -> u64| {
                let (lo, hi) = (f(v.min_weight), f(v.max_weight));
                if lo == hi {
                    format!("{lo}")
                } else {
                    format!("{lo}–{hi}")
                }
            };
            let sum = if v.has_sum { " + sum words" } else { "" };
            let _ = writeln!(
                r,
                "| {} | {} | {}{sum} | {} | {} | {} | {} |",
                v.verdict,
                count(v.paths),
                if v.min_states == v.max_states {
                    format!("{}", v.min_states)
                } else {
                    format!("{}–{}", v.min_states, v.max_states)
                },
                span(&|w| cycles(d, w, 64)),
                at_line_rate(cycles(d, v.max_weight, 64), clock_mhz),
                span(&|w| latency(d, w, v.drops, 64)),
                span(&|w| cycles(d, w, 1518))
            );
        }
    }
    // A refused frame takes no NF state: the core decides it in the cycle it would take it.
    let refused = cycles(d, 0, 64);
    let _ = writeln!(
        r,
        "| (ingress check fails) | drop | 0 | {refused} | {} | {} | — |",
        at_line_rate(refused, clock_mhz),
        latency(d, 0, true, 64)
    );
    let _ = writeln!(r);
    let _ = writeln!(
        r,
        "Initiation interval, back-to-back 64-byte frames: {best64} to {worst64} cycles. \
         At {clock_mhz} MHz, 4×10G line rate for 64-byte frames ({LINE_RATE_MPPS_64:.2} Mpps) needs at \
         most {:.2}.",
        line_rate_cycles(clock_mhz)
    );
    if let Some(sets) = d.func.states.iter().filter_map(|(_, decl)| decl.kind.sets()).max() {
        let _ = writeln!(r);
        let _ = writeln!(
            r,
            "After a reset the tables in block RAM are swept empty, a set a cycle: the first frame is \
             taken {sets} cycles after it at the earliest."
        );
    }
    let _ = writeln!(r);
    let _ = writeln!(r, "## Memories");
    let _ = writeln!(r);
    let _ = writeln!(r, "| memory | kind | width × depth | bits |");
    let _ = writeln!(r, "|---|---|---|---|");
    let words = d.buffer_words();
    let _ = writeln!(
        r,
        "| packet buffer (3 slots: ingress, core, egress) | block RAM | {} × 3 × {words} | {} |",
        8 * bus,
        3 * 8 * bus * words
    );
    // Only the window bytes the NF (and the ingress checks) name are registers; the rest are
    // sent from the packet buffer.
    let (ingress, core, egress) = super::rtl::held_window_bytes(f);
    let _ = writeln!(
        r,
        "| received window (bytes the NF or the checks use) | registers | {ingress} bytes | {} |",
        8 * ingress
    );
    let _ = writeln!(r, "| core window (bytes the NF uses) | registers | {core} bytes | {} |", 8 * core);
    let _ = writeln!(r, "| egress window (bytes the NF writes) | registers | {egress} bytes | {} |", 8 * egress);
    let mut ff = 8 * (ingress + core + egress) as usize + 16 * 5 + 8 * 2 + 32 + 2 * 8 * bus + 64;
    for (_, s) in f.states.iter() {
        let (kind, shape, bits) = element_bits(&s.kind);
        ff += match s.kind {
            StateKind::Array { .. } | StateKind::Queue { .. } => 0,
            // The words are block RAM; the valid bits are registers (a reset clears them at once).
            StateKind::HashTable { size, .. } => size as usize,
            _ => bits,
        };
        let _ = writeln!(r, "| {} | {kind} | {shape} | {bits} |", s.name);
    }
    let _ = writeln!(r);
    let _ = writeln!(r, "## Resource estimate");
    let _ = writeln!(r);
    let bram_bits = 3 * 8 * bus * words
        + f.states
            .iter()
            .filter(|(_, s)| {
                matches!(s.kind, StateKind::Array { .. } | StateKind::HashTable { .. } | StateKind::Queue { .. })
            })
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
        StateKind::Lru { key, value, size, ways } if ways == size => {
            let age = StateKind::slot_width(*size) as usize;
            let w = key.width() as usize + value.width() as usize + 1 + age;
            ("LRU (registers, comparators, ages)", format!("{w} × {size}"), w * *size as usize)
        }
        StateKind::Lru { key, value, size, ways } => {
            let age = crate::hw::address_width(*ways as u64) as usize;
            let w = key.width() as usize + value.width() as usize + 1 + age;
            let sets = *size / (*ways).max(1);
            ("LRU in sets (block RAM, ages)", format!("{w} × {ways} × {sets}"), w * *size as usize)
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

/// A path count as a reader takes it: counts saturate at `u128::MAX`, which is "more than
/// 10^38", not a 39-digit number.
pub fn count(paths: u128) -> String {
    if paths == u128::MAX {
        "more than 10^38".to_string()
    } else {
        paths.to_string()
    }
}

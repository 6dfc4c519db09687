//! The hardware debug unit (docs/debug-protocol.md, "The hardware unit"): generated inside the
//! NF module when [`HwConfig::debug`](super::HwConfig::debug) is set, from the same symbol table
//! as `symbols.json`, behind a 32-bit register port. The map's constants are `emu_debug::hw`'s,
//! whose `HwUnit` serves the protocol over them.
//!
//! # Ports
//!
//! | port | dir | what |
//! |---|---|---|
//! | `dbg_req_valid` | in | a request this cycle |
//! | `dbg_req_write` | in | 1: write `dbg_req_wdata` to `dbg_req_addr`; 0: read it |
//! | `dbg_req_addr` | in, 32 | byte address (the map below) |
//! | `dbg_req_wdata` | in, 32 | |
//! | `dbg_resp_valid` | out | high the cycle after each request |
//! | `dbg_resp_rdata` | out, 32 | the word read (0 after a write) |
//!
//! # What it does
//!
//! - **break, step, continue**: frames arriving at a break wait in the hold buffer in front of
//!   the ingress ([`super::hold`]), up to [`HOLD_DEPTH`]; a step credit lets the oldest in, and
//!   a frame that finds the buffer full passes through the NF (counted), as on the CPU. The
//!   ingress stays free, so the in-band path's control frames pass the held ones.
//! - **state**: every register and counter (fields and probes) is read at its own address,
//!   and written through the staging words and `COMMIT`, only between frames (the core idle),
//!   else `COMMIT` answers busy and nothing changes.
//! - **watchpoints**: [`WATCH_SLOTS`] comparators on the low 64 bits of a register or
//!   counter, checked when the core finishes a frame, with the protocol's operators and
//!   edge semantics (a comparison fires when it becomes true; `changes` on every change);
//!   each keeps the input port, length and first bytes of the frame it last fired after.
//! - **tables**: `Cam`, `Lru`, `Tcam` and `HashTable` slots and a `Queue`'s places, read
//!   through a port their modules get with the unit; `Array` elements read and written
//!   through their request port between frames.
//! - **trace**: a record per frame at its verdict in a FIFO the host empties, with the frame's
//!   first [`TRACE_SNAP`] bytes as they arrived (snooped off the ingress's beats).
//!
//! Nothing of it is in the core's path when idle: running with nothing held, the hold buffer
//! passes the beats straight to the ingress, so the cycles per frame are those of the build
//! without it.
//!
//! # Register map
//!
//! In docs/debug-protocol.md ("The hardware unit"), from `emu_debug::hw::reg`'s constants.

use super::hold;
use crate::verilog::{Expr, Item, Stmt};
pub use emu_debug::hw::{reg, DATA_WORDS, HOLD_DEPTH, ID, TRACE_SNAP, WATCH_SLOTS};
use emu_debug::protocol::Status;

/// A symbol of the unit: state element or probe number `n`, instance `st_<name>`.
#[derive(Debug, Clone)]
pub struct Symbol {
    /// Its number (its position in `symbols.json`).
    pub n: usize,
    /// The instance's port prefix (`st_floods`).
    pub prefix: String,
    /// A register or counter: its value's width; `None` for a table.
    pub width: Option<u32>,
    /// A counter (written with `req_op` SET), else a register.
    pub counter: bool,
    /// The debugger may write it (not a value probe).
    pub writable: bool,
    /// A table in registers, read slot by slot through its `dbg_*` port.
    pub table: Option<Table>,
    /// An `Array` (in block RAM): its value's width and index port's width. The unit reads
    /// and writes it through its request port between frames.
    pub array: Option<(u32, u32)>,
}

/// A table the unit reads by slot: its widths.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    /// The key's (a TCAM's value's and mask's) width; 0 for a queue, whose places have a value
    /// alone.
    pub key: u32,
    /// The value's (a TCAM's result's) width.
    pub value: u32,
    /// A TCAM: it has a mask.
    pub mask: bool,
    /// The unit writes it: a `Cam` or an `Lru` through the write port its module gets, a
    /// `Tcam` through its own set and clear requests.
    pub writable: bool,
    /// A `Tcam`'s `req_slot` width.
    pub slot_bits: u32,
    /// A table in sets' ways (a `HashTable`, an `Lru` in sets; 0 for the others): its
    /// module's `dbg_busy` holds writes back, and the host reads the ways (register T_WAYS) to
    /// check a key's set.
    pub ways: u32,
}

/// The unit's register port on the NF module: (name, width, an output).
pub const PORTS: [(&str, u32, bool); 6] = [
    ("dbg_req_valid", 1, false),
    ("dbg_req_write", 1, false),
    ("dbg_req_addr", 32, false),
    ("dbg_req_wdata", 32, false),
    ("dbg_resp_valid", 1, true),
    ("dbg_resp_rdata", 32, true),
];

/// The register holding the slot that tables show (INDEX).
pub const INDEX: &str = "dbg_index_q";

fn id(name: impl Into<String>) -> Expr {
    Expr::id(name)
}

fn hex(w: u32, v: u64) -> Expr {
    Expr::hex(w, v as u128)
}

/// `e` (of width `w`) zero-extended or cut to `to` bits (the NF module's logic uses it too).
pub(super) fn fit(e: Expr, w: u32, to: u32) -> Expr {
    match w.cmp(&to) {
        std::cmp::Ordering::Equal => e,
        std::cmp::Ordering::Greater => e.slice(to - 1, 0),
        std::cmp::Ordering::Less => Expr::concat(vec![Expr::zero(to - w), e]),
    }
}

/// Declares wire `name` (`w` bits) driven by `e`.
pub(super) fn wire(items: &mut Vec<Item>, name: &str, w: u32, e: Expr) {
    items.push(Item::wire(name, w));
    items.push(Item::assign(id(name), e));
}

/// Bits `[hi:lo]` of `e` (of width `w`): `e` itself when that is all of it (a 1-bit signal has
/// no range to select from).
fn bits(e: Expr, w: u32, hi: u32, lo: u32) -> Expr {
    if lo == 0 && hi + 1 == w {
        e
    } else {
        e.slice(hi, lo)
    }
}

/// The name of the strobe that writes symbol `n` this cycle.
pub fn write_strobe(n: usize) -> Expr {
    id(format!("dbg_wr_{n}"))
}

/// Words of staging the unit needs: enough for its widest writable symbol (at most
/// [`DATA_WORDS`]; the words past them are not built and ignore writes). DATA holds a value,
/// or a table entry's key; DATA2 a table entry's value; DATA3 a TCAM rule's mask.
pub fn data_words(symbols: &[Symbol]) -> u32 {
    let widths = symbols.iter().filter_map(written_width).chain(writable_tables(symbols).map(|t| t.key));
    widths.map(|w| w.div_ceil(32)).max().unwrap_or(1).max(1)
}

fn writable_tables(symbols: &[Symbol]) -> impl Iterator<Item = Table> + '_ {
    symbols.iter().filter_map(|s| s.table).filter(|t| t.writable)
}

/// Words of DATA2 (table values) and DATA3 (TCAM masks): 0 without such tables.
fn table_words(symbols: &[Symbol]) -> (u32, u32) {
    let value = writable_tables(symbols).map(|t| t.value.div_ceil(32)).max().unwrap_or(0);
    let mask = writable_tables(symbols).filter(|t| t.mask).map(|t| t.key.div_ceil(32)).max().unwrap_or(0);
    (value, mask)
}

/// The width of what the unit writes into `s` as a value: a register's or counter's value, an
/// array's element; `None` for what it cannot write so (tables: [`table_write_port`]).
fn written_width(s: &Symbol) -> Option<u32> {
    s.width.or(s.array.map(|(w, _)| w)).filter(|_| s.writable)
}

/// Whether COMMIT writes `s`.
fn commits(s: &Symbol) -> bool {
    written_width(s).is_some() || s.table.is_some_and(|t| t.writable)
}

/// What drives input `port` (of `width` bits) of state element `n`'s instance, when it is a
/// table write port's ([`crate::hw::add_debug_write`]).
pub fn table_write_port(n: usize, port: &str, width: u32, symbols: &[Symbol]) -> Option<Expr> {
    let s = symbols.get(n)?;
    s.table.filter(|t| t.writable && !t.mask)?;
    let (words, (value_words, mask_words)) = (data_words(symbols), table_words(symbols));
    Some(match port {
        "dbg_we" => write_strobe(n),
        "dbg_wvalid" => id("dbg_rq_wdata").bit_at(16),
        "dbg_wkey" => staged(width, words),
        "dbg_wvalue" => fit(id("dbg_data2_q"), 32 * value_words, width),
        "dbg_wmask" => fit(id("dbg_data3_q"), 32 * mask_words, width),
        _ => return None,
    })
}

/// INDEX for an array's index port of `bits` bits: all ones (past every array) when INDEX does
/// not fit, so the element answers "out of range" rather than wrapping.
fn array_index(bits: u32) -> Expr {
    if bits >= 32 {
        return fit(id(INDEX), 32, bits);
    }
    Expr::mux(id(INDEX).slice(31, bits).any(), Expr::hex(bits, (1u128 << bits) - 1), id(INDEX).slice(bits - 1, 0))
}

/// The name of the strobe that reads element INDEX of array `n` this cycle.
fn fetch_strobe(n: usize) -> Expr {
    id(format!("dbg_rd_{n}"))
}

/// The staged value, `w` bits, from `words` words of staging.
pub fn staged(w: u32, words: u32) -> Expr {
    fit(id("dbg_data_q"), 32 * words, w)
}

/// The statements that make a debugger's write of `s` (one of the unit's `symbols`) in the
/// element's request block.
pub fn element_write(s: &Symbol, symbols: &[Symbol]) -> Option<Stmt> {
    let (words, (value_words, mask_words)) = (data_words(symbols), table_words(symbols));
    let p = |port: &str| id(format!("{}_{port}", s.prefix));
    if let Some(t) = s.table.filter(|t| t.writable && t.mask) {
        // A TCAM rule: the module's own set (op 1) or clear (op 2) of slot INDEX.
        let set = |port: &str, e: Expr| Stmt::blocking(p(port), e);
        let body = vec![
            set("req_valid", Expr::bit(true)),
            set("req_op", Expr::mux(id("dbg_rq_wdata").bit_at(16), hex(2, 1), hex(2, 2))),
            set("req_slot", id(INDEX).slice(t.slot_bits - 1, 0)),
            set("req_key", staged(t.key, words)),
            set("req_mask", fit(id("dbg_data3_q"), 32 * mask_words, t.key)),
            set("req_result", fit(id("dbg_data2_q"), 32 * value_words, t.value)),
        ];
        return Some(Stmt::if_(write_strobe(s.n), body));
    }
    let w = written_width(s)?;
    if let Some((_, bits)) = s.array {
        let at = || Stmt::blocking(p("req_index"), array_index(bits));
        let write = vec![
            Stmt::blocking(p("req_valid"), Expr::bit(true)),
            Stmt::blocking(p("req_write"), Expr::bit(true)),
            at(),
            Stmt::blocking(p("req_data"), staged(w, words)),
        ];
        let read = vec![Stmt::blocking(p("req_valid"), Expr::bit(true)), at()];
        return Some(Stmt::if_else(write_strobe(s.n), write, vec![Stmt::if_(fetch_strobe(s.n), read)]));
    }
    let body = if s.counter {
        vec![
            Stmt::blocking(p("req_valid"), Expr::bit(true)),
            Stmt::blocking(p("req_op"), Expr::bit(true)),
            Stmt::blocking(p("req_data"), staged(w, words)),
        ]
    } else {
        vec![Stmt::blocking(p("write"), Expr::bit(true)), Stmt::blocking(p("write_data"), staged(w, words))]
    };
    Some(Stmt::if_(write_strobe(s.n), body))
}

/// What the unit sees of the core, as expressions over the NF module's signals (and, by name,
/// the decided frame's `done_drop_q`, `done_reason_q`, `dst_q`, `in_port_q`, `rx_len_q`, and the
/// ingress's `in_src_q`, `in_len_q`, `in_full_q`, the egress's `tx_full_q`).
pub struct Core {
    /// The core runs no NF state and can take a frame: idle, or handing its decided frame to
    /// the egress.
    pub idle: Expr,
    /// The ingress holds a whole frame.
    pub held: Expr,
    /// The ingress has no beat of a frame.
    pub empty: Expr,
    /// The core hands its decided frame (sent or dropped) to the egress this cycle.
    pub handoff: Expr,
    /// The ingress takes the first beat of a frame this cycle.
    pub first_beat: Expr,
    /// The ingress takes a beat of a frame this cycle.
    pub beat: Expr,
    /// The number of that beat in its frame (from 0; it stops at the packet buffer's end), and
    /// the width of the number.
    pub beat_no: (Expr, u32),
    /// The beat's bytes, 0 where its `tkeep` bit is low (the frame's first byte in bits 7:0).
    pub beat_data: Expr,
    /// Bytes of a beat.
    pub bus: u32,
}

/// Trace records the FIFO holds.
pub use emu_debug::hw::TRACE_DEPTH;

/// The unit: its registers, the gate, the write strobes, the comparators and the trace FIFO,
/// and with a management port `inband`, the in-band path ([`inband`]).
pub fn items(symbols: &[Symbol], core: &Core, inband: Option<u8>) -> Vec<Item> {
    let Core { idle, held, empty, .. } = core;
    let (idle, held, empty) = (idle.clone(), held.clone(), empty.clone());
    let mut items = vec![Item::comment(
        "The debug unit (backend/debug.rs): break/step gate, state access between frames, watchpoints, trace.",
    )];
    // The register port as the unit sees it: the module's, or the in-band sequencer's.
    for (name, w) in [("valid", 1), ("write", 1), ("addr", 32), ("wdata", 32)] {
        items.push(Item::wire(format!("dbg_rq_{name}"), w));
        let port = id(format!("dbg_req_{name}"));
        let e = if inband.is_some() { Expr::mux(id("dbg_ib_req"), id(format!("dbg_ib_{name}")), port) } else { port };
        items.push(Item::assign(id(format!("dbg_rq_{name}")), e));
    }
    let words = data_words(symbols);
    for (name, w) in [
        ("dbg_broken_q", 1),
        ("dbg_credit_q", 16),
        ("dbg_granted_q", 16),
        ("dbg_packets_q", 32),
        ("dbg_result_q", 8),
        ("dbg_data_q", 32 * words),
        ("dbg_rvalid_q", 1),
        ("dbg_rdata_q", 32),
        ("dbg_core_q", 1),
        (INDEX, 32),
    ] {
        items.push(Item::reg(name, w));
    }
    wire(&mut items, "dbg_idle", 1, idle);
    // State is accessed when the core is idle and no hash table is finishing a request (its
    // write port writes back the word its read port read a cycle before).
    let quiet = symbols
        .iter()
        .filter(|s| s.table.is_some_and(|t| t.ways > 0))
        .fold(id("dbg_idle"), |acc, s| acc.land(id(format!("{}_dbg_busy", s.prefix)).lnot()));
    wire(&mut items, "dbg_quiet", 1, quiet);
    wire(&mut items, "dbg_take", 1, id("dbg_idle").land(held.clone()));
    // A frame is done when the core comes back to idle: its writes are in the state.
    // (Not after sending an in-band reply: no frame was processed.)
    let done = id("dbg_core_q").land(id("dbg_idle"));
    wire(&mut items, "dbg_done", 1, if inband.is_some() { done.land(id("dbg_reply_q").lnot()) } else { done });
    let wr = id("dbg_rq_valid").land(id("dbg_rq_write"));
    let at = |a: u32| id("dbg_rq_addr").equals(hex(32, a as u64));
    wire(&mut items, "dbg_commit", 1, wr.clone().land(at(reg::COMMIT)));
    wire(&mut items, "dbg_fetch", 1, wr.clone().land(at(reg::FETCH)));
    for s in symbols {
        let named = || id("dbg_rq_wdata").slice(15, 0).equals(hex(16, s.n as u64));
        if commits(s) {
            items.push(Item::wire(format!("dbg_wr_{}", s.n), 1));
            items.push(Item::assign(write_strobe(s.n), id("dbg_commit").land(id("dbg_quiet")).land(named())));
        }
        if s.array.is_some() {
            items.push(Item::wire(format!("dbg_rd_{}", s.n), 1));
            items.push(Item::assign(fetch_strobe(s.n), id("dbg_fetch").land(id("dbg_quiet")).land(named())));
        }
    }
    // A symbol's value, low 64 bits, by number (for the comparators).
    let value64 = |sym: Expr| -> Expr {
        symbols.iter().filter(|s| s.width.is_some()).rev().fold(Expr::zero(64), |acc, s| {
            let v = fit(id(format!("{}_value", s.prefix)), s.width.unwrap(), 64);
            Expr::mux(sym.clone().equals(hex(16, s.n as u64)), v, acc)
        })
    };
    let mut run = vec![
        Stmt::nb(id("dbg_rvalid_q"), id("dbg_rq_valid")),
        Stmt::nb(id("dbg_core_q"), id("dbg_idle").lnot()),
        Stmt::if_(id("dbg_take"), vec![Stmt::nb(id("dbg_packets_q"), id("dbg_packets_q").plus(hex(32, 1)))]),
    ];
    // Credits: each releases one of the frames held now, used as its frame leaves the hold
    // buffer (so a break right after a continue holds none of the frames it released). A STEP
    // write of n adds n, up to the frames held (with bit 31, sets them to n: 0 withdraws
    // them); continue releases them all and keeps how many in GRANTED.
    // The watchdog: a break no host has touched (no register access) for BREAK_TIMEOUT cycles
    // ends as a continue does, so a host that went away (a killed `emu dbg`) cannot leave the
    // traffic held.
    for (name, w) in [("dbg_wd_limit_q", 32), ("dbg_wd_count_q", 32), ("dbg_wd_fired_q", 32)] {
        items.push(Item::reg(name, w));
    }
    let limit = id("dbg_wd_limit_q");
    let expire = id("dbg_broken_q")
        .land(limit.clone().not_equals(Expr::zero(32)))
        .land(id("dbg_wd_count_q").less_than(limit.clone()).lnot())
        .land(id("dbg_rq_valid").lnot());
    wire(&mut items, "dbg_wd_expire", 1, expire);
    wire(
        &mut items,
        "dbg_continue",
        1,
        wr.clone().land(at(reg::CONTROL)).land(id("dbg_rq_wdata").bit_at(0).lnot()).lor(id("dbg_wd_expire")),
    );
    run.extend([
        Stmt::if_(wr.clone().land(at(reg::BREAK_TIMEOUT)), vec![Stmt::nb(limit.clone(), id("dbg_rq_wdata"))]),
        Stmt::if_else(
            id("dbg_rq_valid").lor(id("dbg_broken_q").lnot()),
            vec![Stmt::nb(id("dbg_wd_count_q"), Expr::zero(32))],
            vec![Stmt::if_(
                id("dbg_wd_count_q").less_than(limit.clone()),
                vec![Stmt::nb(id("dbg_wd_count_q"), id("dbg_wd_count_q").plus(hex(32, 1)))],
            )],
        ),
        Stmt::if_(id("dbg_wd_expire"), vec![Stmt::nb(id("dbg_wd_fired_q"), id("dbg_wd_fired_q").plus(hex(32, 1)))]),
    ]);
    // (Counted after this cycle's release, if any: the frames still held.)
    let held_now = fit(id("hold_count_q"), hold::count_width(), 17).minus(fit(id("hold_go_head"), 1, 17));
    let left = fit(id("dbg_credit_q"), 16, 17).minus(fit(id("hold_use_credit"), 1, 17));
    let n = fit(id("dbg_rq_wdata").slice(15, 0), 16, 17);
    let asked = Expr::mux(id("dbg_rq_wdata").bit_at(31), n.clone(), left.clone().plus(n));
    let granted = Expr::mux(asked.clone().less_than(held_now.clone()), asked, held_now.clone());
    wire(
        &mut items,
        "dbg_credit_next",
        17,
        Expr::mux(id("dbg_continue"), held_now, Expr::mux(wr.clone().land(at(reg::STEP)), granted, left)),
    );
    run.push(Stmt::if_else(
        wr.clone().land(at(reg::CONTROL)),
        vec![Stmt::nb(id("dbg_broken_q"), id("dbg_rq_wdata").bit_at(0))],
        vec![Stmt::if_(id("dbg_wd_expire"), vec![Stmt::nb(id("dbg_broken_q"), Expr::bit(false))])],
    ));
    run.push(Stmt::nb(id("dbg_credit_q"), id("dbg_credit_next").slice(15, 0)));
    run.push(Stmt::if_(id("dbg_continue"), vec![Stmt::nb(id("dbg_granted_q"), id("dbg_credit_next").slice(15, 0))]));
    run.push(Stmt::if_(wr.clone().land(at(reg::INDEX)), vec![Stmt::nb(id(INDEX), id("dbg_rq_wdata"))]));
    // Staging words and COMMIT's result.
    let (value_words, mask_words) = table_words(symbols);
    let staging = [
        ("dbg_data_q", reg::DATA, words),
        ("dbg_data2_q", reg::DATA2, value_words),
        ("dbg_data3_q", reg::DATA3, mask_words),
    ];
    for (name, base, n) in staging {
        if n > 0 && name != "dbg_data_q" {
            items.push(Item::reg(name, 32 * n));
        }
        for k in 0..n {
            let part = id(name).slice(32 * k + 31, 32 * k);
            run.push(Stmt::if_(wr.clone().land(at(base + 4 * k)), vec![Stmt::nb(part, id("dbg_rq_wdata"))]));
        }
    }
    let target = id("dbg_rq_wdata").slice(15, 0);
    let known = symbols.iter().fold(Expr::bit(false), |acc, s| acc.lor(target.clone().equals(hex(16, s.n as u64))));
    let any_of = |keep: &dyn Fn(&Symbol) -> bool| {
        symbols
            .iter()
            .filter(|s| keep(s))
            .fold(Expr::bit(false), |acc, s| acc.lor(target.clone().equals(hex(16, s.n as u64))))
    };
    let writable = any_of(&|s| commits(s));
    let array = any_of(&|s| s.array.is_some());
    let code = |c: Status| hex(8, c.code() as u64);
    // A command's RESULT: no such symbol, not one it applies to (`refused`), or done unless the
    // core is busy.
    let result = |applies: Expr, refused: Status| {
        Expr::mux(
            known.clone().lnot(),
            code(Status::NoSuchSymbol),
            Expr::mux(applies.lnot(), code(refused), Expr::mux(id("dbg_quiet"), code(Status::Ok), code(Status::Busy))),
        )
    };
    run.push(Stmt::if_(id("dbg_commit"), vec![Stmt::nb(id("dbg_result_q"), result(writable, Status::ReadOnly))]));
    // FETCH: an array's element, read the cycle after into dbg_entry_q (an index past the
    // array leaves RESULT bad_index).
    let entry_w = symbols.iter().filter_map(|s| s.array.map(|(w, _)| w)).max().unwrap_or(1);
    for (name, w) in [("dbg_entry_q", entry_w), ("dbg_fetched_q", 1), ("dbg_fetch_sym_q", 16)] {
        items.push(Item::reg(name, w));
    }
    run.push(Stmt::if_(
        id("dbg_fetch"),
        vec![
            Stmt::nb(id("dbg_result_q"), result(array, Status::Unsupported)),
            Stmt::nb(id("dbg_fetch_sym_q"), target.clone()),
        ],
    ));
    run.push(Stmt::nb(id("dbg_fetched_q"), id("dbg_fetch").land(id("dbg_quiet"))));
    for s in symbols {
        let Some((w, _)) = s.array else { continue };
        let p = |port: &str| id(format!("{}_{port}", s.prefix));
        run.push(Stmt::if_(
            id("dbg_fetched_q").land(id("dbg_fetch_sym_q").equals(hex(16, s.n as u64))),
            vec![
                Stmt::nb(id("dbg_entry_q"), fit(p("resp_data"), w, entry_w)),
                Stmt::if_(p("resp_ok").lnot(), vec![Stmt::nb(id("dbg_result_q"), code(Status::BadIndex))]),
            ],
        ));
    }
    // The comparators.
    let mut reads: Vec<(u32, Expr)> = vec![
        (reg::ID, hex(32, ID as u64)),
        (reg::CAPS, hex(32, ((WATCH_SLOTS as u64) << 16) | symbols.len() as u64)),
        (reg::CONTROL, fit(id("dbg_broken_q"), 1, 32)),
        (reg::STEP, fit(id("dbg_credit_q"), 16, 32)),
        (
            reg::STATUS,
            fit(
                Expr::concat(vec![
                    fit(id("hold_count_q"), hold::count_width(), 8),
                    Expr::zero(4),
                    id("hold_full_q"),
                    id("dbg_idle").land(held.lnot()).land(empty).land(id("hold_idle")),
                    id("hold_count_q").not_equals(Expr::zero(hold::count_width())),
                    id("dbg_broken_q"),
                ]),
                16,
                32,
            ),
        ),
        (reg::HOLD_PASSED, id("hold_passed_q")),
        (reg::RELEASED, id("hold_released_q")),
        (reg::GRANTED, fit(id("dbg_granted_q"), 16, 32)),
        (reg::BREAK_TIMEOUT, id("dbg_wd_limit_q")),
        (reg::BREAKS_TIMED_OUT, id("dbg_wd_fired_q")),
        (reg::PACKETS, id("dbg_packets_q")),
        (reg::RESULT, fit(id("dbg_result_q"), 8, 32)),
    ];
    // What the host only writes (staging, INDEX, TRACE) is not read back:
    // each word read costs the read multiplexer 32 inputs.
    for s in 0..WATCH_SLOTS {
        let r = |name: &str| format!("dbg_w{s}_{name}");
        for (name, w) in [
            ("sym_q", 16),
            ("on_q", 1),
            ("rec_q", 1),
            ("fresh_q", 1),
            ("op_q", 3),
            ("operand_q", 64),
            ("held_q", 1),
            ("last_q", 64),
            ("hits_q", 32),
            ("packet_q", 32),
            ("value_q", 64),
            ("frame_q", 32),
            ("bytes_q", 8 * TRACE_SNAP as u32),
        ] {
            items.push(Item::reg(r(name), w));
        }
        wire(&mut items, &r("val"), 64, value64(id(r("sym_q"))));
        let (v, x) = (id(r("val")), id(r("operand_q")));
        // One comparator and one equality per slot: every operator is made of the two.
        wire(&mut items, &r("eq"), 1, v.clone().equals(x.clone()));
        wire(&mut items, &r("lt"), 1, v.clone().less_than(x.clone()));
        let (eq, lt) = (id(r("eq")), id(r("lt")));
        let cond = [
            eq.clone(),
            eq.clone().lnot(),
            lt.clone(),
            lt.clone().lor(eq.clone()),
            lt.clone().lor(eq.clone()).lnot(),
            lt.lnot(),
        ]
        .into_iter()
        .enumerate()
        .rev()
        .fold(Expr::bit(false), |acc, (op, c)| Expr::mux(id(r("op_q")).equals(hex(3, op as u64)), c, acc));
        wire(&mut items, &r("cond"), 1, cond);
        let changes = id(r("op_q")).equals(hex(3, 6));
        let fires = Expr::mux(
            changes.clone(),
            id(r("val")).not_equals(id(r("last_q"))),
            id(r("cond")).land(id(r("held_q")).lnot()),
        );
        let at_w = |off: u32| at(reg::watch(s, off));
        run.extend([
            Stmt::if_(wr.clone().land(at_w(reg::W_OP)), vec![Stmt::nb(id(r("op_q")), id("dbg_rq_wdata").slice(2, 0))]),
            Stmt::if_(
                wr.clone().land(at_w(reg::W_OPERAND)),
                vec![Stmt::nb(id(r("operand_q")).slice(31, 0), id("dbg_rq_wdata"))],
            ),
            Stmt::if_(
                wr.clone().land(at_w(reg::W_OPERAND + 4)),
                vec![Stmt::nb(id(r("operand_q")).slice(63, 32), id("dbg_rq_wdata"))],
            ),
            // Arming takes the value as it is now (next cycle, through the new symbol).
            Stmt::if_else(
                wr.clone().land(at_w(reg::W_SYM)),
                vec![
                    Stmt::nb(id(r("sym_q")), id("dbg_rq_wdata").slice(15, 0)),
                    Stmt::nb(id(r("on_q")), id("dbg_rq_wdata").bit_at(31)),
                    Stmt::nb(id(r("rec_q")), id("dbg_rq_wdata").bit_at(30)),
                    Stmt::nb(id(r("fresh_q")), id("dbg_rq_wdata").bit_at(31)),
                ],
                vec![Stmt::if_else(
                    id(r("fresh_q")),
                    vec![
                        Stmt::nb(id(r("fresh_q")), Expr::bit(false)),
                        Stmt::nb(id(r("held_q")), id(r("cond"))),
                        Stmt::nb(id(r("last_q")), id(r("val"))),
                    ],
                    vec![Stmt::if_(
                        id(r("on_q")).land(id("dbg_done")),
                        vec![
                            Stmt::nb(id(r("held_q")), id(r("cond"))),
                            Stmt::nb(id(r("last_q")), id(r("val"))),
                            Stmt::if_(
                                fires,
                                vec![
                                    Stmt::nb(id(r("hits_q")), id(r("hits_q")).plus(hex(32, 1))),
                                    Stmt::nb(id(r("packet_q")), id("dbg_packets_q").minus(hex(32, 1))),
                                    Stmt::nb(id(r("value_q")), id(r("val"))),
                                    // The frame, for a watch that records it.
                                    Stmt::nb(
                                        id(r("frame_q")),
                                        Expr::concat(vec![id("rx_len_q"), Expr::zero(8), id("in_port_q")]),
                                    ),
                                    Stmt::nb(id(r("bytes_q")), id("dbg_bytes_q")),
                                ],
                            ),
                        ],
                    )],
                )],
            ),
        ]);
        reads.extend([
            // A slot's setup reads back, so that a host (another session of `emu dbg`) sees
            // which slots are armed and on what.
            (
                reg::watch(s, reg::W_SYM),
                Expr::concat(vec![id(r("on_q")), id(r("rec_q")), Expr::zero(14), id(r("sym_q"))]),
            ),
            (reg::watch(s, reg::W_OP), fit(id(r("op_q")), 3, 32)),
            (reg::watch(s, reg::W_OPERAND), id(r("operand_q")).slice(31, 0)),
            (reg::watch(s, reg::W_OPERAND + 4), id(r("operand_q")).slice(63, 32)),
            (reg::watch(s, reg::W_HITS), id(r("hits_q"))),
            (reg::watch(s, reg::W_PACKET), id(r("packet_q"))),
            (reg::watch(s, reg::W_VALUE), id(r("value_q")).slice(31, 0)),
            (reg::watch(s, reg::W_VALUE + 4), id(r("value_q")).slice(63, 32)),
            (reg::W_FRAME + 4 * s as u32, id(r("frame_q"))),
        ]);
    }
    // The bytes of watch slot INDEX's frame: one window rather than one per slot, which
    // would quadruple their share of the read multiplexer.
    let snap = 8 * TRACE_SNAP as u32;
    let slot_bits = WATCH_SLOTS.next_power_of_two().trailing_zeros();
    let chosen = (0..WATCH_SLOTS).rev().fold(Expr::zero(snap), |acc, s| {
        let bytes = id(format!("dbg_w{s}_bytes_q"));
        Expr::mux(id(INDEX).slice(slot_bits - 1, 0).equals(hex(slot_bits, s as u64)), bytes, acc)
    });
    wire(&mut items, "dbg_w_bytes", snap, chosen);
    for k in 0..TRACE_SNAP as u32 / 4 {
        reads.push((reg::W_BYTES + 4 * k, id("dbg_w_bytes").slice(32 * k + 31, 32 * k)));
    }
    for s in symbols {
        let Some(w) = s.width else { continue };
        let v = id(format!("{}_value", s.prefix));
        for k in 0..w.div_ceil(32) {
            let hi = (32 * k + 31).min(w - 1);
            reads.push((reg::symbol(s.n, k as usize), fit(bits(v.clone(), w, hi, 32 * k), hi - 32 * k + 1, 32)));
        }
    }
    trace(&mut items, &mut run, &mut reads, core, &wr, &at, inband.is_some());
    auto_counters(&mut items, &mut run, &mut reads, core, inband.is_some());
    // A table's slot INDEX: its valid bit, then its fields, word by word.
    let words = |reads: &mut Vec<(u32, Expr)>, n: usize, off: u32, e: Expr, w: u32| {
        for k in 0..w.div_ceil(32) {
            let hi = (32 * k + 31).min(w - 1);
            reads.push((reg::table(n, off) + 4 * k, fit(bits(e.clone(), w, hi, 32 * k), hi - 32 * k + 1, 32)));
        }
    };
    for s in symbols {
        let Some((w, _)) = s.array else { continue };
        words(&mut reads, s.n, reg::T_VALUE, fit(id("dbg_entry_q"), entry_w, w), w);
    }
    for s in symbols {
        let Some(t) = s.table else { continue };
        let p = |f: &str| id(format!("{}_dbg_{f}", s.prefix));
        reads.push((reg::table(s.n, reg::T_VALID), fit(p("valid"), 1, 32)));
        words(&mut reads, s.n, reg::T_KEY, p("key"), t.key);
        words(&mut reads, s.n, reg::T_VALUE, p("value"), t.value);
        if t.mask {
            words(&mut reads, s.n, reg::T_MASK, p("mask"), t.key);
        }
        if t.ways > 0 {
            reads.push((reg::table(s.n, reg::T_WAYS), hex(32, t.ways as u64)));
        }
    }
    let arms: Vec<(Vec<Expr>, Vec<Stmt>)> =
        reads.into_iter().map(|(a, e)| (vec![hex(32, a as u64)], vec![Stmt::nb(id("dbg_rdata_q"), e)])).collect();
    run.push(Stmt::if_else(
        id("dbg_rq_valid").land(id("dbg_rq_write").lnot()),
        vec![Stmt::Case {
            subject: id("dbg_rq_addr"),
            arms,
            default: Some(vec![Stmt::nb(id("dbg_rdata_q"), Expr::zero(32))]),
        }],
        vec![Stmt::nb(id("dbg_rdata_q"), Expr::zero(32))],
    ));
    let mut reset = vec![];
    for (name, w) in [
        ("dbg_wd_limit_q", 32),
        ("dbg_wd_count_q", 32),
        ("dbg_wd_fired_q", 32),
        ("dbg_broken_q", 1),
        ("dbg_credit_q", 16),
        ("dbg_granted_q", 16),
        ("dbg_packets_q", 32),
        ("dbg_result_q", 8),
        ("dbg_rvalid_q", 1),
        ("dbg_rdata_q", 32),
        ("dbg_core_q", 1),
        (INDEX, 32),
    ] {
        reset.push(Stmt::nb(id(name), Expr::zero(w)));
    }
    for s in 0..WATCH_SLOTS {
        for (name, w) in [("on_q", 1), ("fresh_q", 1), ("hits_q", 32), ("packet_q", 32), ("value_q", 64)] {
            reset.push(Stmt::nb(id(format!("dbg_w{s}_{name}")), Expr::zero(w)));
        }
    }
    for (name, w) in auto_counter_regs() {
        reset.push(Stmt::nb(id(&name), Expr::zero(w)));
    }
    for (name, w) in TRACE_REGS {
        reset.push(Stmt::nb(id(*name), Expr::zero(*w)));
    }
    let mut resp_valid = id("dbg_rvalid_q");
    if let Some(m) = inband {
        inband_path(&mut items, &mut run, &mut reset, m);
        // The sequencer's own requests are not answered on the port.
        resp_valid = resp_valid.land(id("dbg_ib_resp_q").lnot());
    }
    items.push(Item::always_posedge("axis_aclk", vec![Stmt::if_else(id("rst"), reset, run)]));
    items.push(Item::assign(id("dbg_resp_valid"), resp_valid));
    items.push(Item::assign(id("dbg_resp_rdata"), id("dbg_rdata_q")));
    items
}

/// Bytes of the in-band path's reply frame.
pub const REPLY_LEN: u64 = 60;

/// The in-band path on management port `m`: a frame of EtherType 0x88B5 held in the ingress
/// from port `m` (`dbg_ib_frame`) is not taken by the core (nor held by a break, nor numbered):
/// a `reg_read` or `reg_write` request in it runs through the unit's register port as a host's
/// would, and the reply, 60 bytes from `UNIT_MAC` to the request's source, leaves through port
/// `m` (the core hands it to the egress as a decided frame with `dbg_reply_q` set: the egress
/// sends `dbg_reply_word`). Any other request gets the protocol's error (`unsupported` for the
/// requests the host serves over these two); a frame too short to carry a `seq` is dropped
/// without a reply. The core sees: `dbg_ib_frame` (keep it from taking), `dbg_ib_go` (send the
/// reply, free the ingress), `dbg_ib_drop` (free the ingress).
fn inband_path(items: &mut Vec<Item>, run: &mut Vec<Stmt>, reset: &mut Vec<Stmt>, m: u8) {
    use emu_debug::protocol::{Kind, Opcode, ETHERTYPE, UNIT_MAC, VERSION};
    let byte = |i: u32| id("dbg_in_bytes_q").slice(8 * i + 7, 8 * i);
    let be = |i: u32, n: u32| Expr::concat((i..i + n).map(byte).collect());
    let len_at_least = |n: Expr| Expr::concat(vec![Expr::zero(1), id("in_len_q")]).at_least(n);
    items.push(Item::comment("The in-band path: reg_read and reg_write requests from the management port."));
    // The reply's fields are kept when it starts: the ingress then takes the next frame.
    let kept =
        [("dbg_ib_peer_q", 48), ("dbg_ib_op_q", 8), ("dbg_ib_st_q", 8), ("dbg_ib_seq_q", 32), ("dbg_ib_read_q", 1)];
    for (name, w) in
        [("dbg_ib_q", 2), ("dbg_ib_value_q", 32), ("dbg_ib_resp_q", 1), ("dbg_reply_q", 1)].into_iter().chain(kept)
    {
        items.push(Item::reg(name, w));
    }
    wire(
        items,
        "dbg_ib_frame",
        1,
        id("in_full_q")
            .land(id("in_src_q").equals(hex(8, m as u64)))
            .land(be(12, 2).equals(hex(16, ETHERTYPE as u64)))
            .land(len_at_least(hex(17, 14))),
    );
    let op = byte(16);
    let is = |o: Opcode| op.clone().equals(hex(8, o.code() as u64));
    let length = be(22, 2);
    let requests = [
        Opcode::Hello,
        Opcode::Symbol,
        Opcode::Read,
        Opcode::Write,
        Opcode::Lookup,
        Opcode::Counters,
        Opcode::ResetCounters,
        Opcode::Watch,
        Opcode::Unwatch,
        Opcode::Trace,
        Opcode::Break,
        Opcode::Step,
        Opcode::Continue,
        Opcode::Status,
    ];
    let served = requests.iter().fold(Expr::bit(false), |acc, &o| acc.lor(is(o)));
    let fits = len_at_least(Expr::concat(vec![Expr::zero(1), length.clone()]).plus(hex(17, 26)));
    let code = |c: Status| hex(8, c.code() as u64);
    let reg_op = is(Opcode::RegRead).lor(is(Opcode::RegWrite));
    let well_formed = is(Opcode::RegRead)
        .land(length.clone().equals(hex(16, 4)))
        .lor(is(Opcode::RegWrite).land(length.equals(hex(16, 8))));
    let status = Expr::mux(
        byte(14).not_equals(hex(8, VERSION as u64)),
        code(Status::BadVersion),
        Expr::mux(
            byte(15).not_equals(hex(8, Kind::Request as u64)),
            code(Status::BadOpcode),
            Expr::mux(
                fits.lnot().lor(reg_op.clone().land(well_formed.lnot())),
                code(Status::Malformed),
                Expr::mux(
                    reg_op,
                    code(Status::Ok),
                    Expr::mux(served, code(Status::Unsupported), code(Status::BadOpcode)),
                ),
            ),
        ),
    );
    wire(items, "dbg_ib_status", 8, status);
    let has_seq = len_at_least(hex(17, 22));
    // Starts when the core is idle, the port asks nothing this cycle, and no reply is waiting
    // for the egress or being sent (the reply's fields are kept until it is out).
    wire(items, "dbg_reply_busy", 1, id("dbg_reply_q").lor(id("tx_full_q").land(id("tx_reply_q"))));
    wire(
        items,
        "dbg_ib_start",
        1,
        id("dbg_idle")
            .land(id("dbg_ib_frame"))
            .land(id("dbg_ib_q").equals(hex(2, 0)))
            .land(id("dbg_req_valid").lnot())
            .land(id("dbg_reply_busy").lnot()),
    );
    wire(
        items,
        "dbg_ib_req",
        1,
        id("dbg_ib_start").land(has_seq.clone()).land(id("dbg_ib_status").equals(code(Status::Ok))),
    );
    wire(items, "dbg_ib_valid", 1, Expr::bit(true));
    wire(items, "dbg_ib_write", 1, is(Opcode::RegWrite));
    wire(items, "dbg_ib_addr", 32, be(26, 4));
    wire(items, "dbg_ib_wdata", 32, be(30, 4));
    wire(items, "dbg_ib_go", 1, id("dbg_ib_q").equals(hex(2, 2)));
    wire(items, "dbg_ib_drop", 1, id("dbg_ib_q").equals(hex(2, 3)));
    run.extend([
        Stmt::nb(id("dbg_ib_resp_q"), id("dbg_ib_req")),
        Stmt::if_(id("dbg_idle"), vec![Stmt::nb(id("dbg_reply_q"), id("dbg_ib_go"))]),
        Stmt::Case {
            subject: id("dbg_ib_q"),
            arms: vec![
                (
                    vec![hex(2, 0)],
                    vec![Stmt::if_(
                        id("dbg_ib_start"),
                        vec![Stmt::nb(
                            id("dbg_ib_q"),
                            Expr::mux(has_seq.lnot(), hex(2, 3), Expr::mux(id("dbg_ib_req"), hex(2, 1), hex(2, 2))),
                        )],
                    )],
                ),
                // The register's answer, a cycle after the request.
                (
                    vec![hex(2, 1)],
                    vec![Stmt::nb(id("dbg_ib_value_q"), id("dbg_rdata_q")), Stmt::nb(id("dbg_ib_q"), hex(2, 2))],
                ),
            ],
            default: Some(vec![Stmt::nb(id("dbg_ib_q"), hex(2, 0))]),
        },
    ]);
    reset.extend([
        Stmt::nb(id("dbg_ib_q"), hex(2, 0)),
        Stmt::nb(id("dbg_ib_resp_q"), Expr::bit(false)),
        Stmt::nb(id("dbg_reply_q"), Expr::bit(false)),
    ]);
    // The reply: Ethernet header, control header, the value read (reg_read), zeros to 60 bytes.
    let read = is(Opcode::RegRead).land(id("dbg_ib_status").equals(code(Status::Ok)));
    run.push(Stmt::if_(
        id("dbg_ib_go"),
        vec![
            Stmt::nb(id("dbg_ib_peer_q"), be(6, 6)),
            Stmt::nb(id("dbg_ib_op_q"), op),
            Stmt::nb(id("dbg_ib_st_q"), id("dbg_ib_status")),
            Stmt::nb(id("dbg_ib_seq_q"), be(18, 4)),
            Stmt::nb(id("dbg_ib_read_q"), read),
        ],
    ));
    let kept_byte = |name: &str, w: u32, k: u32| id(name).slice(w - 8 * k - 1, w - 8 * k - 8);
    let read = id("dbg_ib_read_q");
    let mut bytes: Vec<Expr> = (0..6).map(|k| kept_byte("dbg_ib_peer_q", 48, k)).collect();
    bytes.extend(UNIT_MAC.iter().map(|&b| hex(8, b as u64)));
    bytes.extend([hex(8, (ETHERTYPE >> 8) as u64), hex(8, ETHERTYPE as u64 & 0xff)]);
    bytes.extend([hex(8, VERSION as u64), hex(8, Kind::Reply as u64), id("dbg_ib_op_q"), id("dbg_ib_st_q")]);
    bytes.extend((0..4).map(|k| kept_byte("dbg_ib_seq_q", 32, k)));
    bytes.extend([hex(8, 0), Expr::mux(read.clone(), hex(8, 4), hex(8, 0)), hex(8, 0), hex(8, 0)]);
    for k in (0..4).rev() {
        bytes.push(Expr::mux(read.clone(), id("dbg_ib_value_q").slice(8 * k + 7, 8 * k), hex(8, 0)));
    }
    bytes.resize(REPLY_LEN as usize, hex(8, 0));
    // Byte i of the frame in bits 8i+7:8i of the reply, as on the bus.
    wire(items, "dbg_reply", 8 * REPLY_LEN as u32, Expr::concat(bytes.into_iter().rev().collect()));
}

/// Beat `beat_q` of the in-band reply on a bus of `bus` bytes (`beat_bits` wide beat numbers).
pub fn reply_word(bus: u32, beat_bits: u32) -> Expr {
    let total = 8 * REPLY_LEN as u32;
    let beats = total.div_ceil(8 * bus);
    (0..beats).rev().fold(Expr::zero(8 * bus), |acc, b| {
        let lo = b * 8 * bus;
        let hi = (lo + 8 * bus).min(total) - 1;
        let word = fit(id("dbg_reply").slice(hi, lo), hi - lo + 1, 8 * bus);
        Expr::mux(id("beat_q").equals(Expr::dec(beat_bits, b as u128)), word, acc)
    })
}

/// The trace's registers that a reset clears.
const TRACE_REGS: &[(&str, u32)] =
    &[("dbg_trace_q", 1), ("dbg_tr_head_q", 3), ("dbg_tr_count_q", 4), ("dbg_tr_lost_q", 32), ("dbg_now_q", 32)];

/// The trace: a record per frame as the core hands it to the egress (its number, input port,
/// verdict, cycles from its first beat in to its first beat out or its drop, length) into a
/// FIFO of [`TRACE_DEPTH`] the host pops; records that find it full are counted as lost. A
/// frame the ingress checks refuse is handed over like any other, so one record enters per
/// cycle at most.
fn trace(
    items: &mut Vec<Item>,
    run: &mut Vec<Stmt>,
    reads: &mut Vec<(u32, Expr)>,
    core: &Core,
    wr: &Expr,
    at: &dyn Fn(u32) -> Expr,
    inband: bool,
) {
    for (name, w) in TRACE_REGS {
        items.push(Item::reg(*name, *w));
    }
    // The frame in the ingress and in the core: when its first beat came, and its first bytes.
    let snap = 8 * TRACE_SNAP as u32;
    for (name, w) in [("dbg_in_t0_q", 32), ("dbg_t0_q", 32), ("dbg_in_bytes_q", snap), ("dbg_bytes_q", snap)] {
        items.push(Item::reg(name, w));
    }
    items.push(Item::memory("dbg_tr_bytes", snap, TRACE_DEPTH as u64));
    // The record: packet, meta, detail, latency, length.
    let depth = TRACE_DEPTH as u64;
    for (name, w) in
        [("dbg_tr_packet", 32), ("dbg_tr_meta", 32), ("dbg_tr_detail", 32), ("dbg_tr_latency", 32), ("dbg_tr_len", 16)]
    {
        items.push(Item::memory(name, w, depth));
        items.push(Item::wire(format!("{name}_new"), w));
    }
    // (The frame's first beat out, or its drop, is the cycle after the handoff.)
    let latency = id("dbg_now_q").plus(Expr::hex(32, 1)).minus(id("dbg_t0_q"));
    let mut handoff = core.handoff.clone();
    if inband {
        // An in-band reply is not a frame the NF sent.
        handoff = handoff.land(id("dbg_reply_q").lnot());
    }
    let sent = id("done_drop_q").lnot();
    let new = [
        ("dbg_tr_packet_new", id("dbg_packets_q").minus(Expr::hex(32, 1))),
        ("dbg_tr_meta_new", Expr::concat(vec![Expr::zero(23), sent.clone(), id("in_port_q")])),
        (
            "dbg_tr_detail_new",
            Expr::mux(
                sent,
                Expr::concat(vec![Expr::zero(28), id("dst_q")]),
                Expr::concat(vec![Expr::zero(24), id("done_reason_q")]),
            ),
        ),
        ("dbg_tr_latency_new", latency),
        ("dbg_tr_len_new", id("rx_len_q")),
    ];
    for (name, e) in new {
        items.push(Item::assign(id(name), e));
    }
    let event = id("dbg_trace_q").land(handoff);
    let pop = wr.clone().land(at(reg::TRACE_POP)).land(id("dbg_tr_count_q").not_equals(Expr::zero(4)));
    let full = id("dbg_tr_count_q").equals(Expr::dec(4, depth as u128));
    let tail = id("dbg_tr_head_q").plus(id("dbg_tr_count_q").slice(2, 0));
    let mut push = vec![];
    for name in ["dbg_tr_packet", "dbg_tr_meta", "dbg_tr_detail", "dbg_tr_latency", "dbg_tr_len"] {
        push.push(Stmt::nb(id(name).index(tail.clone()), id(format!("{name}_new"))));
    }
    // (A refused frame's bytes are the core's copy too: taken when the core refused it.)
    push.push(Stmt::nb(id("dbg_tr_bytes").index(tail.clone()), id("dbg_bytes_q")));
    let take = id("dbg_take");
    // The ingress's bytes and first-beat time as they are after this edge (`_d`): the core
    // takes a frame in the edge its last beat arrives.
    wire(items, "dbg_in_bytes_d", snap, snoop(core));
    wire(items, "dbg_in_t0_d", 32, Expr::mux(core.first_beat.clone(), id("dbg_now_q"), id("dbg_in_t0_q")));
    run.push(Stmt::nb(id("dbg_in_bytes_q"), id("dbg_in_bytes_d")));
    run.push(Stmt::if_(take.clone(), vec![Stmt::nb(id("dbg_bytes_q"), id("dbg_in_bytes_d"))]));
    run.extend([
        Stmt::nb(id("dbg_now_q"), id("dbg_now_q").plus(Expr::hex(32, 1))),
        Stmt::nb(id("dbg_in_t0_q"), id("dbg_in_t0_d")),
        // (A frame held at a break reaches the ingress when released: the hold is not its
        // latency.)
        Stmt::if_(take.clone(), vec![Stmt::nb(id("dbg_t0_q"), id("dbg_in_t0_d"))]),
        Stmt::if_(wr.clone().land(at(reg::TRACE)), vec![Stmt::nb(id("dbg_trace_q"), id("dbg_rq_wdata").bit_at(0))]),
        Stmt::if_else(
            wr.clone().land(at(reg::TRACE_LOST)),
            vec![Stmt::nb(id("dbg_tr_lost_q"), Expr::zero(32))],
            vec![Stmt::if_(
                event.clone().land(full.clone()).land(pop.clone().lnot()),
                vec![Stmt::nb(id("dbg_tr_lost_q"), id("dbg_tr_lost_q").plus(Expr::hex(32, 1)))],
            )],
        ),
        Stmt::if_(event.clone().land(full.clone().lnot().lor(pop.clone())), push),
        Stmt::if_(pop.clone(), vec![Stmt::nb(id("dbg_tr_head_q"), id("dbg_tr_head_q").plus(Expr::dec(3, 1)))]),
    ]);
    let pushed = event.land(full.lnot().lor(pop.clone()));
    run.push(Stmt::nb(
        id("dbg_tr_count_q"),
        id("dbg_tr_count_q").plus(Expr::mux(pushed, Expr::dec(4, 1), Expr::zero(4))).minus(Expr::mux(
            pop,
            Expr::dec(4, 1),
            Expr::zero(4),
        )),
    ));
    let head = |name: &str, w: u32| fit(id(name).index(id("dbg_tr_head_q")), w, 32);
    reads.extend([
        (reg::TRACE_COUNT, fit(id("dbg_tr_count_q"), 4, 32)),
        (reg::TRACE_LOST, id("dbg_tr_lost_q")),
        (reg::TR_PACKET, head("dbg_tr_packet", 32)),
        (reg::TR_META, head("dbg_tr_meta", 32)),
        (reg::TR_DETAIL, head("dbg_tr_detail", 32)),
        (reg::TR_LATENCY, head("dbg_tr_latency", 32)),
        (reg::TR_LEN, head("dbg_tr_len", 16)),
    ]);
    for k in 0..TRACE_SNAP as u32 / 4 {
        reads.push((reg::TR_BYTES + 4 * k, id("dbg_tr_bytes").index(id("dbg_tr_head_q")).slice(32 * k + 31, 32 * k)));
    }
}

/// The target's own counters, as the CPU runner keeps them: frames in, out and dropped per
/// port (registers), and which drop-reason counters have counted (32 bits, one a reason code;
/// the counts themselves are in a small memory, which has no reset).
fn auto_counter_regs() -> Vec<(String, u32)> {
    let ports = (0..4).flat_map(|k| ["rx", "tx", "dr"].map(|c| (format!("dbg_{c}{k}_q"), 32)));
    ports.chain([("dbg_drops_seen_q".to_string(), DROP_CODES)]).collect()
}

/// Drop-reason codes the unit counts (every reason's code is below it).
const DROP_CODES: u32 = reg::AUTO_DROP_CODES;

/// Counts each decided frame as the CPU runner does (tests/dbg_verilator.rs compares them):
/// when the core hands it over, one in on its input port, and one out on each port it is
/// sent to, or one dropped on its input port and one for its reason. One frame is decided a
/// cycle, so the drop counters are one memory (LUT RAM) with one incrementer; a counter reads
/// 0 until its reason first counts (the memory has no reset), and the host reads reason INDEX's.
fn auto_counters(items: &mut Vec<Item>, run: &mut Vec<Stmt>, reads: &mut Vec<(u32, Expr)>, core: &Core, inband: bool) {
    debug_assert!(emu_core::DropReason::ALL.iter().all(|r| (*r as u32) < DROP_CODES));
    for (name, w) in auto_counter_regs() {
        items.push(Item::reg(name, w));
    }
    let mut decided = core.handoff.clone();
    if inband {
        // An in-band reply is not a frame the NF decided.
        decided = decided.land(id("dbg_reply_q").lnot());
    }
    let (sent, dropped) = (decided.clone().land(id("done_drop_q").lnot()), decided.clone().land(id("done_drop_q")));
    let inc = |name: &str| Stmt::nb(id(name), id(name).plus(hex(32, 1)));
    for k in 0..4u32 {
        let on_in = id("in_port_q").equals(hex(8, k as u64));
        run.extend([
            Stmt::if_(decided.clone().land(on_in.clone()), vec![inc(&format!("dbg_rx{k}_q"))]),
            Stmt::if_(sent.clone().land(id("dst_q").bit_at(k)), vec![inc(&format!("dbg_tx{k}_q"))]),
            Stmt::if_(dropped.clone().land(on_in), vec![inc(&format!("dbg_dr{k}_q"))]),
        ]);
        reads.extend([
            (reg::AUTO_RX + 4 * k, id(format!("dbg_rx{k}_q"))),
            (reg::AUTO_TX + 4 * k, id(format!("dbg_tx{k}_q"))),
            (reg::AUTO_DROPPED + 4 * k, id(format!("dbg_dr{k}_q"))),
        ]);
    }
    let bits = DROP_CODES.trailing_zeros();
    items.push(Item::memory("dbg_drops_m", 32, DROP_CODES as u64));
    let count_at = |code: Expr| {
        Expr::mux(id("dbg_drops_seen_q").index(code.clone()), id("dbg_drops_m").index(code), Expr::zero(32))
    };
    let reason = id("done_reason_q").slice(bits - 1, 0);
    wire(items, "dbg_drops_next", 32, count_at(reason.clone()).plus(hex(32, 1)));
    let counted = dropped.land(id("done_reason_q").less_than(hex(8, DROP_CODES as u64)));
    run.push(Stmt::if_(
        counted,
        vec![
            Stmt::nb(id("dbg_drops_m").index(reason.clone()), id("dbg_drops_next")),
            Stmt::nb(id("dbg_drops_seen_q").index(reason), Expr::bit(true)),
        ],
    ));
    let asked = id(INDEX).slice(bits - 1, 0);
    let in_range = id(INDEX).less_than(hex(32, DROP_CODES as u64));
    reads.push((reg::AUTO_DROPS, Expr::mux(in_range, count_at(asked), Expr::zero(32))));
}

/// `dbg_in_bytes_q` after this edge: the ingress's beats, up to [`TRACE_SNAP`] bytes; the
/// first beat clears what it does not fill, so bytes past the frame's end read 0.
fn snoop(core: &Core) -> Expr {
    let snap = 8 * TRACE_SNAP as u32;
    let beat_bits = 8 * core.bus;
    let (no, no_w) = core.beat_no.clone();
    let buffer = id("dbg_in_bytes_q");
    let this_beat = |b: u32| {
        let at = if no_w < 32 && u64::from(b) >= 1u64 << no_w {
            Expr::bit(false)
        } else {
            no.clone().equals(Expr::dec(no_w, b as u128))
        };
        core.beat.clone().land(at)
    };
    let chunks = (0..snap.div_ceil(beat_bits)).rev().map(|b| {
        let lo = b * beat_bits;
        let hi = (lo + beat_bits).min(snap) - 1;
        let data = fit(core.beat_data.clone(), beat_bits, hi - lo + 1);
        let kept = buffer.clone().slice(hi, lo);
        let other = if b == 0 { kept } else { Expr::mux(this_beat(0), Expr::zero(hi - lo + 1), kept) };
        Expr::mux(this_beat(b), data, other)
    });
    Expr::concat(chunks.collect())
}

//! The debug unit's hold buffer (docs/debug-protocol.md, "Break, step and continue"): a stage in
//! front of the ingress, generated with the unit, that holds up to [`HOLD_DEPTH`] frames at a
//! `break` in block RAM while the ingress stays free — so a control frame from the management
//! port passes the held frames to the in-band path, and a frame that finds the buffer full passes
//! through the NF as on the CPU, counted, instead of waiting upstream.
//!
//! The NF's ingress reads the stage's stream `in_axis_*`; the stage drives `s_axis_tready`.
//!
//! - **Through**: running with nothing held, a frame's beats go straight from `s_axis_*` to
//!   the ingress (wires, no register): the cycles per frame are those of the build without it.
//! - **Into the ring**: at a break, or while held frames drain after it, each frame is written
//!   into a ring of beats (`{tkeep, tdata}`, at most one more beat than the packet buffer keeps,
//!   which keeps an oversize frame oversize). Once its last beat is in, it is committed (its
//!   beat count, input port bits and timestamp in a queue of [`HOLD_DEPTH`] descriptors), or,
//!   a control frame for the in-band path or a frame that finds the queue full at a break,
//!   played to the ingress at once and forgotten. Whatever is committed leaves in order:
//!   running, or on a step credit.
//! - **Played**: the ring's read port gives a beat a cycle to the ingress, `tuser` rebuilt from
//!   the descriptor (the input port's bits and the timestamp: all the ingress reads).
//!
//! The ring has room for [`HOLD_DEPTH`] + 1 frames of the longest kept length: the committed
//! ones and the one coming in. A frame is let in only when that much is free, and, running,
//! only while fewer than [`HOLD_DEPTH`] are committed: so a frame that arrives at a full break
//! has room to be written, and then passes. (A frame that leaves keeps its beats until its
//! last is out: while one plays, [`HOLD_DEPTH`] committed long frames can leave too little
//! room, and the next frame waits upstream until it has left, some hundred cycles.)
//!
//! The buffer is full when every frame in it is held: frames a step or `continue` gave a
//! credit to are released, as on the CPU, though they leave one after the other.

use super::debug::{wire, HOLD_DEPTH};
use super::rtl::{dec, id, lane_byte, port_decoder};
use crate::verilog::{index_width, Expr, Item, Stmt};

/// The stage's shape: the bus, the packet buffer's beats per frame, the management port.
pub struct Shape {
    /// Bytes of a beat.
    pub bus: u32,
    /// Beats the packet buffer keeps of a frame.
    pub depth: u64,
    /// The in-band path's management port, if any.
    pub inband: Option<u8>,
}

impl Shape {
    /// Beats the ring keeps of a frame: one more than the packet buffer.
    fn kept(&self) -> u64 {
        self.depth + 1
    }

    /// Width of a beat count up to [`Shape::kept`].
    fn nw(&self) -> u32 {
        index_width(self.kept() + 1)
    }

    /// Width of a ring address.
    fn aw(&self) -> u32 {
        index_width((HOLD_DEPTH as u64 + 1) * self.kept())
    }

    /// Bits of a ring word: the beat's data and its `tkeep`.
    fn word(&self) -> u32 {
        9 * self.bus
    }
}

/// Width of `hold_count_q`, the frames held.
pub fn count_width() -> u32 {
    index_width(HOLD_DEPTH as u64 + 1)
}

/// The stage's items. It reads the unit's `dbg_broken_q`, `dbg_credit_q` and `dbg_continue`
/// (a `continue` this cycle), and gives it `hold_use_credit` (a held frame leaves on a
/// credit), `hold_count_q` (frames held), `hold_passed_q` (frames passed while the buffer was
/// full), `hold_released_q` (frames that left it), `hold_full_q` (one passed since the last
/// `continue`) and `hold_idle` (no frame coming in or played: held ones at rest).
pub fn items(s: &Shape) -> Vec<Item> {
    let (bus, nw, aw) = (s.bus, s.nw(), s.aw());
    let k = HOLD_DEPTH as u64;
    assert!(k.is_power_of_two(), "the descriptor queue wraps as a power of two");
    let kw = count_width();
    let dw = index_width(k);
    let ring = 1u64 << aw;
    let mut items = vec![Item::comment(
        "The hold buffer (backend/hold.rs): frames held at a break wait in a ring of beats, the ingress stays free.",
    )];
    for (name, w) in [
        // The input side: 0 between frames, 1 a frame going through, 2 written into the ring,
        // 3 written whole, waiting to be committed or played.
        ("hold_in_q", 2),
        ("hold_n_q", nw),
        ("hold_src_q", 8),
        ("hold_ts_q", 64),
        ("hold_et_q", 16),
        ("hold_wp_q", aw + 1),
        ("hold_rp_q", aw + 1),
        ("hold_count_q", kw),
        ("hold_head_q", dw),
        // The output side: playing a frame from the ring, its read address, beats left, its
        // tuser bits; `now`: the frame just written (played at once), not a committed one.
        ("hold_out_q", 1),
        ("hold_now_q", 1),
        ("hold_ra_q", aw + 1),
        ("hold_left_q", nw),
        ("hold_osrc_q", 8),
        ("hold_ots_q", 64),
        ("hold_rd_q", s.word()),
        ("hold_passed_q", 32),
        ("hold_released_q", 32),
        ("hold_full_q", 1),
    ] {
        items.push(Item::reg(name, w));
    }
    items.push(Item::memory("hold_ring", s.word(), ring));
    for (name, w) in [("hold_d_beats", nw), ("hold_d_src", 8), ("hold_d_ts", 64)] {
        items.push(Item::memory(name, w, k.next_power_of_two()));
    }
    let in_is = |v: u64| id("hold_in_q").equals(dec(2, v));
    let broken = id("dbg_broken_q");
    let count_is_full = id("hold_count_q").equals(dec(kw, k));
    // Running with nothing held or playing: the frame goes through.
    wire(
        &mut items,
        "hold_through",
        1,
        in_is(0)
            .land(broken.clone().lnot())
            .land(id("hold_count_q").equals(Expr::zero(kw)))
            .land(id("hold_out_q").lnot()),
    );
    wire(&mut items, "hold_pass", 1, in_is(1).lor(id("hold_through")));
    let used = id("hold_wp_q").minus(id("hold_rp_q"));
    wire(
        &mut items,
        "hold_admit",
        1,
        in_is(0)
            .land(id("hold_through").lnot())
            .land(used.at_least(dec(aw + 1, ring - s.kept() + 1)).lnot())
            .land(broken.clone().lor(count_is_full.clone().lnot())),
    );
    wire(&mut items, "hold_wr", 1, id("s_axis_tvalid").land(in_is(2).lor(id("hold_admit"))));
    // A beat kept: written into the ring (beats past what the ring keeps of a frame are not).
    wire(&mut items, "hold_keep", 1, id("hold_wr").land(id("hold_n_q").less_than(dec(nw, s.kept()))));
    // A frame written whole: the in-band path's, or (at a full break) one that passes.
    let ctl = match s.inband {
        Some(m) => {
            items.extend(port_decoder("hold_port", |b| id("hold_src_q").bit_at(b)));
            id("hold_et_q")
                .equals(Expr::hex(16, emu_debug::protocol::ETHERTYPE as u128))
                .land(id("hold_port").equals(dec(3, m as u64)))
        }
        None => Expr::bit(false),
    };
    wire(&mut items, "hold_ctl", 1, ctl);
    let credited = id("dbg_credit_q").not_equals(Expr::zero(16));
    let full = count_is_full.clone().land(broken.clone()).land(credited.clone().lnot());
    wire(&mut items, "hold_now", 1, in_is(3).land(id("hold_ctl").lor(full)));
    wire(&mut items, "hold_commit", 1, in_is(3).land(id("hold_ctl").lnot()).land(count_is_full.lnot()));
    wire(&mut items, "hold_go_now", 1, id("hold_out_q").lnot().land(id("hold_now")));
    wire(
        &mut items,
        "hold_go_head",
        1,
        id("hold_out_q")
            .lnot()
            .land(id("hold_now").lnot())
            .land(id("hold_count_q").not_equals(Expr::zero(kw)))
            .land(broken.clone().lnot().lor(credited.clone())),
    );
    wire(&mut items, "hold_use_credit", 1, id("hold_go_head").land(credited));
    wire(&mut items, "hold_idle", 1, in_is(0).land(id("hold_out_q").lnot()));
    // The ingress takes a played beat when it holds no frame.
    wire(&mut items, "hold_adv", 1, id("hold_out_q").land(id("in_full_q").lnot()));
    wire(&mut items, "hold_last", 1, id("hold_left_q").equals(dec(nw, 1)));
    wire(
        &mut items,
        "hold_ra_next",
        aw + 1,
        Expr::mux(
            id("hold_go_now"),
            id("hold_wp_q"),
            Expr::mux(
                id("hold_go_head"),
                id("hold_rp_q"),
                Expr::mux(id("hold_adv"), id("hold_ra_q").plus(dec(aw + 1, 1)), id("hold_ra_q")),
            ),
        ),
    );
    // The ingress's stream.
    let tuser = Expr::concat(vec![id("hold_ots_q"), Expr::zero(40), id("hold_osrc_q"), Expr::zero(16)]);
    for (name, w, through, played) in [
        ("tdata", 8 * bus, id("s_axis_tdata"), id("hold_rd_q").slice(8 * bus - 1, 0)),
        ("tkeep", bus, id("s_axis_tkeep"), id("hold_rd_q").slice(9 * bus - 1, 8 * bus)),
        ("tuser", 128, id("s_axis_tuser"), tuser),
        ("tvalid", 1, id("s_axis_tvalid"), id("hold_out_q")),
        ("tlast", 1, id("s_axis_tlast"), id("hold_last")),
    ] {
        wire(&mut items, &format!("in_axis_{name}"), w, Expr::mux(id("hold_pass"), through, played));
    }
    items.push(Item::assign(
        id("s_axis_tready"),
        Expr::mux(id("hold_pass"), id("in_full_q").lnot(), in_is(2).lor(id("hold_admit"))),
    ));

    // Bytes 12 and 13 of the frame coming in, 0 where tkeep is low.
    let mut et = vec![];
    for (i, half) in [(12u32, 1u32), (13, 0)] {
        let (beat, lane) = (i / bus, i % bus);
        let byte = lane_byte(id("s_axis_tkeep"), id("s_axis_tdata"), lane);
        et.push(Stmt::if_(
            id("hold_n_q").equals(dec(nw, beat as u64)),
            vec![Stmt::nb(id("hold_et_q").slice(8 * half + 7, 8 * half), byte)],
        ));
    }
    let tail = id("hold_head_q").plus(id("hold_count_q").slice(dw - 1, 0));
    let first = vec![
        Stmt::nb(id("hold_src_q"), id("s_axis_tuser").slice(23, 16)),
        Stmt::nb(id("hold_ts_q"), id("s_axis_tuser").slice(127, 64)),
        Stmt::nb(id("hold_et_q"), Expr::zero(16)),
    ];
    let mut write = vec![Stmt::if_(in_is(0), first)];
    write.extend(et);
    write.extend([
        Stmt::if_(id("hold_keep"), vec![Stmt::nb(id("hold_n_q"), id("hold_n_q").plus(dec(nw, 1)))]),
        Stmt::nb(id("hold_in_q"), Expr::mux(id("s_axis_tlast"), dec(2, 3), dec(2, 2))),
    ]);
    let count_change = Expr::mux(
        id("hold_commit"),
        Expr::mux(id("hold_go_head"), id("hold_count_q"), id("hold_count_q").plus(dec(kw, 1))),
        Expr::mux(id("hold_go_head"), id("hold_count_q").minus(dec(kw, 1)), id("hold_count_q")),
    );
    let run = vec![
        // The input side.
        Stmt::if_(
            id("hold_through").land(id("s_axis_tvalid")).land(id("in_full_q").lnot()).land(id("s_axis_tlast").lnot()),
            vec![Stmt::nb(id("hold_in_q"), dec(2, 1))],
        ),
        Stmt::if_(
            in_is(1).land(id("s_axis_tvalid")).land(id("in_full_q").lnot()).land(id("s_axis_tlast")),
            vec![Stmt::nb(id("hold_in_q"), dec(2, 0))],
        ),
        Stmt::if_(id("hold_wr"), write),
        Stmt::if_(
            id("hold_commit"),
            vec![
                Stmt::nb(id("hold_d_beats").index(tail.clone()), id("hold_n_q")),
                Stmt::nb(id("hold_d_src").index(tail.clone()), id("hold_src_q")),
                Stmt::nb(id("hold_d_ts").index(tail), id("hold_ts_q")),
                Stmt::nb(
                    id("hold_wp_q"),
                    id("hold_wp_q").plus(Expr::concat(vec![Expr::zero(aw + 1 - nw), id("hold_n_q")])),
                ),
                Stmt::nb(id("hold_n_q"), Expr::zero(nw)),
                Stmt::nb(id("hold_in_q"), dec(2, 0)),
            ],
        ),
        Stmt::nb(id("hold_count_q"), count_change),
        // The output side.
        Stmt::nb(id("hold_ra_q"), id("hold_ra_next")),
        Stmt::if_(
            id("hold_go_now"),
            vec![
                Stmt::nb(id("hold_out_q"), Expr::bit(true)),
                Stmt::nb(id("hold_now_q"), Expr::bit(true)),
                Stmt::nb(id("hold_left_q"), id("hold_n_q")),
                Stmt::nb(id("hold_osrc_q"), id("hold_src_q")),
                Stmt::nb(id("hold_ots_q"), id("hold_ts_q")),
                Stmt::if_(
                    id("hold_ctl").lnot(),
                    vec![
                        Stmt::nb(id("hold_passed_q"), id("hold_passed_q").plus(dec(32, 1))),
                        Stmt::nb(id("hold_full_q"), Expr::bit(true)),
                    ],
                ),
            ],
        ),
        Stmt::if_(
            id("hold_go_head"),
            vec![
                Stmt::nb(id("hold_out_q"), Expr::bit(true)),
                Stmt::nb(id("hold_now_q"), Expr::bit(false)),
                Stmt::nb(id("hold_left_q"), id("hold_d_beats").index(id("hold_head_q"))),
                Stmt::nb(id("hold_osrc_q"), id("hold_d_src").index(id("hold_head_q"))),
                Stmt::nb(id("hold_ots_q"), id("hold_d_ts").index(id("hold_head_q"))),
                Stmt::nb(id("hold_head_q"), id("hold_head_q").plus(dec(dw, 1))),
                Stmt::nb(id("hold_released_q"), id("hold_released_q").plus(dec(32, 1))),
            ],
        ),
        Stmt::if_(
            id("hold_adv"),
            vec![
                Stmt::nb(id("hold_left_q"), id("hold_left_q").minus(dec(nw, 1))),
                Stmt::if_(
                    id("hold_last"),
                    vec![
                        Stmt::nb(id("hold_out_q"), Expr::bit(false)),
                        // The frame played at once is forgotten; a committed one frees its beats.
                        Stmt::if_else(
                            id("hold_now_q"),
                            vec![Stmt::nb(id("hold_n_q"), Expr::zero(nw)), Stmt::nb(id("hold_in_q"), dec(2, 0))],
                            vec![Stmt::nb(id("hold_rp_q"), id("hold_ra_q").plus(dec(aw + 1, 1)))],
                        ),
                    ],
                ),
            ],
        ),
        Stmt::if_(id("dbg_continue"), vec![Stmt::nb(id("hold_full_q"), Expr::bit(false))]),
    ];
    // The ring in its own block, without reset, as block RAM: a beat written, one read.
    wire(
        &mut items,
        "hold_wa",
        aw + 1,
        id("hold_wp_q").plus(Expr::concat(vec![Expr::zero(aw + 1 - nw), id("hold_n_q")])),
    );
    items.push(Item::always_posedge(
        "axis_aclk",
        vec![
            Stmt::if_(
                id("hold_keep"),
                vec![Stmt::nb(
                    id("hold_ring").index(id("hold_wa").slice(aw - 1, 0)),
                    Expr::concat(vec![id("s_axis_tkeep"), id("s_axis_tdata")]),
                )],
            ),
            Stmt::nb(id("hold_rd_q"), id("hold_ring").index(id("hold_ra_next").slice(aw - 1, 0))),
        ],
    ));
    let cleared = [
        ("hold_in_q", 2),
        ("hold_n_q", nw),
        ("hold_wp_q", aw + 1),
        ("hold_rp_q", aw + 1),
        ("hold_count_q", kw),
        ("hold_head_q", dw),
        ("hold_out_q", 1),
        ("hold_now_q", 1),
        ("hold_passed_q", 32),
        ("hold_released_q", 32),
        ("hold_full_q", 1),
    ];
    let reset = cleared.iter().map(|&(n, w)| Stmt::nb(id(n), Expr::zero(w))).collect();
    items.push(Item::always_posedge("axis_aclk", vec![Stmt::if_else(id("rst"), reset, run)]));
    items.push(Item::Initial(cleared.iter().map(|&(n, w)| Stmt::blocking(id(n), Expr::zero(w))).collect()));
    items
}

//! Our own Verilog model of the NetFPGA SUME reference pipeline's stream interfaces, for
//! simulating the OPL wrapper ([`crate::opl`]) and the NF where they will run: five input
//! streams (nf0–nf3 and dma0) through an input arbiter, the output port lookup, and output
//! queues that split the stream by its destination bits into five output streams.
//!
//! This is a model of the interfaces, written from the SUME interface conventions
//! (docs/architecture.md §4.4), not a copy of the reference cores:
//!
//! - [`arbiter`] (`emu_sume_input_arbiter`): round robin between whole frames of the five
//!   inputs, as the reference `input_arbiter` does, and it sets `tuser[23:16]`, the one-hot
//!   source port (nf*k* is bit 2*k*, dma0 bit 1), which on the board the 10G attachments and
//!   the DMA engine set before the arbiter. Unlike the reference it has no input FIFOs: an
//!   input's `tready` is the OPL's while that input holds the grant.
//! - [`output_queues`] (`emu_sume_output_queues`): one FIFO of beats per output (256 beats, 8 KB
//!   each); a beat is written into every queue its frame's `tuser[31:24]` names (nf*k* bit
//!   2*k*, dma0 bit 1), when all of them have room; a frame naming no queue is dropped, as
//!   the reference `output_queues` does.
//! - [`sim_top`] (`emu_sume_sim`): the three, with the OPL's AXI4-Lite slave on the same
//!   clock, and the OPL's input handshake brought out so a testbench sees which frame the
//!   arbiter granted.

use emu_hls::verilog::{Expr, Instance, Item, Module, Port, Stmt};

/// Inputs and outputs of the pipeline: nf0–nf3, then dma0.
pub const STREAMS: usize = 5;
/// Beats each output queue holds.
pub const QUEUE_BEATS: u32 = 256;

const DATA: u32 = 256;
const KEEP: u32 = 32;
const TUSER: u32 = 128;
/// A queued beat: `{tlast, tuser, tkeep, tdata}`.
const BEAT: u32 = DATA + KEEP + TUSER + 1;

/// The names the pipeline's streams have in messages: `nf0`…`nf3`, `dma0`.
pub fn stream_name(k: usize) -> String {
    if k < 4 {
        format!("nf{k}")
    } else {
        "dma0".into()
    }
}

/// The bit of a `tuser` port byte (source or destination) that names stream `k`.
pub fn port_bit(k: usize) -> u32 {
    if k < 4 {
        2 * k as u32
    } else {
        1
    }
}

fn id(name: &str) -> Expr {
    Expr::id(name)
}

fn s(k: usize, sig: &str) -> String {
    format!("s_axis_{k}_{sig}")
}

fn m(k: usize, sig: &str) -> String {
    format!("m_axis_{k}_{sig}")
}

fn stream_ports(module: &mut Module, prefix: impl Fn(&str) -> String, slave: bool) {
    for (sig, width) in [("tdata", DATA), ("tkeep", KEEP), ("tuser", TUSER), ("tvalid", 1), ("tready", 1), ("tlast", 1)]
    {
        let into = (sig == "tready") != slave;
        let name = prefix(sig);
        module.ports.push(if into { Port::input(name, width) } else { Port::output_wire(name, width) });
    }
}

/// The input arbiter model.
pub fn arbiter() -> Module {
    let mut md = Module::new("emu_sume_input_arbiter");
    md.ports.push(Port::input("axis_aclk", 1));
    md.ports.push(Port::input("axis_resetn", 1));
    stream_ports(&mut md, |sig| format!("m_axis_{sig}"), false);
    for k in 0..STREAMS {
        stream_ports(&mut md, |sig| s(k, sig), true);
    }
    md.items.push(Item::comment(
        "Model of the SUME input arbiter (emu netfpga, for simulation): round robin between whole\n\
         frames of nf0-nf3 and dma0, setting tuser[23:16] to the one-hot source port.",
    ));
    for (name, width) in [("busy_q", 1), ("sel_q", 3), ("last_q", 3)] {
        md.items.push(Item::reg(name, width));
    }
    // The next input after the last one served that has a frame waiting.
    md.items.push(Item::reg("pick", 3));
    md.items.push(Item::reg("found", 1));
    let mut arms = vec![];
    for last in 0..STREAMS {
        let mut body = vec![];
        for step in (1..=STREAMS).rev() {
            let k = (last + step) % STREAMS;
            body.push(Stmt::if_(
                id(&s(k, "tvalid")),
                vec![Stmt::blocking(id("pick"), Expr::dec(3, k as u128)), Stmt::blocking(id("found"), Expr::bit(true))],
            ));
        }
        arms.push((vec![Expr::dec(3, last as u128)], body));
    }
    md.items.push(Item::always_comb(vec![
        Stmt::blocking(id("pick"), Expr::zero(3)),
        Stmt::blocking(id("found"), Expr::bit(false)),
        Stmt::Case { subject: id("last_q"), arms, default: Some(vec![]) },
    ]));
    let sel = |k: usize| id("sel_q").equals(Expr::dec(3, k as u128));
    let mux = |sig: &str, width: u32| {
        (0..STREAMS).rev().fold(Expr::zero(width), |rest, k| Expr::mux(sel(k), id(&s(k, sig)), rest))
    };
    md.items.push(Item::assign(id("m_axis_tvalid"), id("busy_q").land(mux("tvalid", 1))));
    md.items.push(Item::assign(id("m_axis_tdata"), mux("tdata", DATA)));
    md.items.push(Item::assign(id("m_axis_tkeep"), mux("tkeep", KEEP)));
    md.items.push(Item::assign(id("m_axis_tlast"), mux("tlast", 1)));
    md.items.push(Item::wire("tuser_in", TUSER));
    md.items.push(Item::assign(id("tuser_in"), mux("tuser", TUSER)));
    let src = (0..STREAMS).rev().fold(Expr::zero(8), |rest, k| Expr::mux(sel(k), Expr::hex(8, 1 << port_bit(k)), rest));
    md.items.push(Item::assign(
        id("m_axis_tuser"),
        Expr::concat(vec![id("tuser_in").slice(127, 24), src, id("tuser_in").slice(15, 0)]),
    ));
    for k in 0..STREAMS {
        md.items.push(Item::assign(id(&s(k, "tready")), id("busy_q").land(sel(k)).land(id("m_axis_tready"))));
    }
    let done = id("m_axis_tvalid").land(id("m_axis_tready")).land(id("m_axis_tlast"));
    md.items.push(Item::always_posedge(
        "axis_aclk",
        vec![Stmt::if_else(
            id("axis_resetn").lnot(),
            vec![
                Stmt::nb(id("busy_q"), Expr::bit(false)),
                Stmt::nb(id("sel_q"), Expr::zero(3)),
                Stmt::nb(id("last_q"), Expr::dec(3, STREAMS as u128 - 1)),
            ],
            vec![Stmt::if_else(
                id("busy_q").lnot(),
                vec![Stmt::if_(
                    id("found"),
                    vec![Stmt::nb(id("busy_q"), Expr::bit(true)), Stmt::nb(id("sel_q"), id("pick"))],
                )],
                vec![Stmt::if_(
                    done,
                    vec![Stmt::nb(id("busy_q"), Expr::bit(false)), Stmt::nb(id("last_q"), id("sel_q"))],
                )],
            )],
        )],
    ));
    md
}

/// One output queue: a FIFO of [`QUEUE_BEATS`] beats with an asynchronous read.
pub fn fifo() -> Module {
    let aw = QUEUE_BEATS.trailing_zeros();
    let mut md = Module::new("emu_sume_beat_fifo");
    for (name, width) in [("clk", 1), ("resetn", 1), ("wr_en", 1), ("din", BEAT), ("rd_en", 1)] {
        md.ports.push(Port::input(name, width));
    }
    for (name, width) in [("dout", BEAT), ("empty", 1), ("full", 1)] {
        md.ports.push(Port::output_wire(name, width));
    }
    md.items.push(Item::memory("mem", BEAT, QUEUE_BEATS as u64));
    md.items.push(Item::reg("wr_q", aw));
    md.items.push(Item::reg("rd_q", aw));
    md.items.push(Item::reg("count_q", aw + 1));
    md.items.push(Item::assign(id("dout"), id("mem").index(id("rd_q"))));
    md.items.push(Item::assign(id("empty"), id("count_q").equals(Expr::zero(aw + 1))));
    md.items.push(Item::assign(id("full"), id("count_q").equals(Expr::dec(aw + 1, QUEUE_BEATS as u128))));
    let one = |w| Expr::dec(w, 1);
    md.items.push(Item::always_posedge(
        "clk",
        vec![Stmt::if_else(
            id("resetn").lnot(),
            vec![
                Stmt::nb(id("wr_q"), Expr::zero(aw)),
                Stmt::nb(id("rd_q"), Expr::zero(aw)),
                Stmt::nb(id("count_q"), Expr::zero(aw + 1)),
            ],
            vec![
                Stmt::if_(
                    id("wr_en"),
                    vec![
                        Stmt::nb(id("mem").index(id("wr_q")), id("din")),
                        Stmt::nb(id("wr_q"), id("wr_q").plus(one(aw))),
                    ],
                ),
                Stmt::if_(id("rd_en"), vec![Stmt::nb(id("rd_q"), id("rd_q").plus(one(aw)))]),
                Stmt::if_(
                    id("wr_en").land(id("rd_en").lnot()),
                    vec![Stmt::nb(id("count_q"), id("count_q").plus(one(aw + 1)))],
                ),
                Stmt::if_(
                    id("rd_en").land(id("wr_en").lnot()),
                    vec![Stmt::nb(id("count_q"), id("count_q").minus(one(aw + 1)))],
                ),
            ],
        )],
    ));
    md
}

/// The output queues model.
pub fn output_queues() -> Module {
    let mut md = Module::new("emu_sume_output_queues");
    md.ports.push(Port::input("axis_aclk", 1));
    md.ports.push(Port::input("axis_resetn", 1));
    stream_ports(&mut md, |sig| format!("s_axis_{sig}"), true);
    for k in 0..STREAMS {
        stream_ports(&mut md, |sig| m(k, sig), false);
    }
    md.items.push(Item::comment(
        "Model of the SUME output queues (emu netfpga, for simulation): each beat goes into every\n\
         queue its frame's tuser[31:24] names, when all of them have room; a frame naming none is\n\
         dropped.",
    ));
    // The destination bits of the frame's first beat hold for the whole frame.
    md.items.push(Item::reg("in_frame_q", 1));
    md.items.push(Item::reg("dst_q", 8));
    md.items.push(Item::wire("dst", 8));
    md.items.push(Item::assign(id("dst"), Expr::mux(id("in_frame_q"), id("dst_q"), id("s_axis_tuser").slice(31, 24))));
    let mut room = vec![];
    for k in 0..STREAMS {
        for (name, width) in [("want", 1), ("full", 1), ("empty", 1), ("dout", BEAT)] {
            md.items.push(Item::wire(format!("q{k}_{name}"), width));
        }
        md.items.push(Item::assign(id(&format!("q{k}_want")), id("dst").bit_at(port_bit(k))));
        room.push(id(&format!("q{k}_want")).lnot().lor(id(&format!("q{k}_full")).lnot()));
    }
    let ready = room.into_iter().reduce(|a, b| a.land(b)).expect("five queues");
    md.items.push(Item::assign(id("s_axis_tready"), ready));
    md.items.push(Item::wire("take", 1));
    md.items.push(Item::assign(id("take"), id("s_axis_tvalid").land(id("s_axis_tready"))));
    md.items.push(Item::always_posedge(
        "axis_aclk",
        vec![Stmt::if_else(
            id("axis_resetn").lnot(),
            vec![Stmt::nb(id("in_frame_q"), Expr::bit(false)), Stmt::nb(id("dst_q"), Expr::zero(8))],
            vec![Stmt::if_(
                id("take"),
                vec![Stmt::nb(id("in_frame_q"), id("s_axis_tlast").lnot()), Stmt::nb(id("dst_q"), id("dst"))],
            )],
        )],
    ));
    let din = Expr::concat(vec![id("s_axis_tlast"), id("s_axis_tuser"), id("s_axis_tkeep"), id("s_axis_tdata")]);
    for k in 0..STREAMS {
        let q = |n: &str| id(&format!("q{k}_{n}"));
        md.items.push(Item::Instance(Instance {
            module: "emu_sume_beat_fifo".into(),
            name: format!("queue_{}", stream_name(k)),
            params: vec![],
            connections: vec![
                ("clk".into(), id("axis_aclk")),
                ("resetn".into(), id("axis_resetn")),
                ("wr_en".into(), id("take").land(q("want"))),
                ("din".into(), din.clone()),
                ("rd_en".into(), id(&m(k, "tvalid")).land(id(&m(k, "tready")))),
                ("dout".into(), q("dout")),
                ("empty".into(), q("empty")),
                ("full".into(), q("full")),
            ],
        }));
        md.items.push(Item::assign(id(&m(k, "tvalid")), q("empty").lnot()));
        md.items.push(Item::assign(id(&m(k, "tdata")), q("dout").slice(DATA - 1, 0)));
        md.items.push(Item::assign(id(&m(k, "tkeep")), q("dout").slice(DATA + KEEP - 1, DATA)));
        md.items.push(Item::assign(id(&m(k, "tuser")), q("dout").slice(DATA + KEEP + TUSER - 1, DATA + KEEP)));
        md.items.push(Item::assign(id(&m(k, "tlast")), q("dout").bit_at(BEAT - 1)));
    }
    md
}

/// The AXI4-Lite slave's ports: (name, width, into the OPL).
pub const AXI_LITE: &[(&str, u32, bool)] = &[
    ("AWADDR", 32, true),
    ("AWVALID", 1, true),
    ("WDATA", 32, true),
    ("WSTRB", 4, true),
    ("WVALID", 1, true),
    ("BREADY", 1, true),
    ("ARADDR", 32, true),
    ("ARVALID", 1, true),
    ("RREADY", 1, true),
    ("ARREADY", 1, false),
    ("RDATA", 32, false),
    ("RRESP", 2, false),
    ("RVALID", 1, false),
    ("WREADY", 1, false),
    ("BRESP", 2, false),
    ("BVALID", 1, false),
    ("AWREADY", 1, false),
];

/// The simulation top level: arbiter → OPL wrapper → output queues, one clock.
pub fn sim_top() -> Module {
    let mut md = Module::new("emu_sume_sim");
    md.ports.push(Port::input("clk", 1));
    md.ports.push(Port::input("resetn", 1));
    for k in 0..STREAMS {
        stream_ports(&mut md, |sig| s(k, sig), true);
    }
    for k in 0..STREAMS {
        stream_ports(&mut md, |sig| m(k, sig), false);
    }
    for &(name, width, into) in AXI_LITE {
        let name = format!("S_AXI_{name}");
        md.ports.push(if into { Port::input(name, width) } else { Port::output_wire(name, width) });
    }
    for (name, width) in [("opl_in_tvalid", 1), ("opl_in_tready", 1), ("opl_in_tlast", 1), ("opl_in_tuser", TUSER)] {
        md.ports.push(Port::output_wire(name, width));
    }
    md.items.push(Item::comment(
        "emu netfpga's simulation of the SUME pipeline: input arbiter model -> emu_output_port_lookup\n\
         -> output queues model. The opl_in_* outputs show the OPL's input handshake.",
    ));
    let sigs = [("tdata", DATA), ("tkeep", KEEP), ("tuser", TUSER), ("tvalid", 1), ("tready", 1), ("tlast", 1)];
    for side in ["opl_in", "opl_out"] {
        for (sig, width) in sigs {
            md.items.push(Item::wire(format!("{side}_{sig}_w"), width));
        }
    }
    let clocked = || vec![("axis_aclk".to_string(), id("clk")), ("axis_resetn".to_string(), id("resetn"))];
    let mut arb = clocked();
    let mut opl = clocked();
    let mut oq = clocked();
    for (sig, _) in sigs {
        arb.push((format!("m_axis_{sig}"), id(&format!("opl_in_{sig}_w"))));
        opl.push((format!("s_axis_{sig}"), id(&format!("opl_in_{sig}_w"))));
        opl.push((format!("m_axis_{sig}"), id(&format!("opl_out_{sig}_w"))));
        oq.push((format!("s_axis_{sig}"), id(&format!("opl_out_{sig}_w"))));
        for k in 0..STREAMS {
            arb.push((s(k, sig), id(&s(k, sig))));
            oq.push((m(k, sig), id(&m(k, sig))));
        }
    }
    opl.push(("S_AXI_ACLK".into(), id("clk")));
    opl.push(("S_AXI_ARESETN".into(), id("resetn")));
    for &(name, _, _) in AXI_LITE {
        let bus = format!("S_AXI_{name}");
        opl.push((bus.clone(), crate::opl::axi_connection(name, &bus)));
    }
    for (module, name, connections) in [
        ("emu_sume_input_arbiter", "input_arbiter", arb),
        (crate::opl::MODULE, "output_port_lookup", opl),
        ("emu_sume_output_queues", "output_queues", oq),
    ] {
        md.items.push(Item::Instance(Instance {
            module: module.into(),
            name: name.into(),
            params: vec![],
            connections,
        }));
    }
    for sig in ["tvalid", "tready", "tlast", "tuser"] {
        md.items.push(Item::assign(id(&format!("opl_in_{sig}")), id(&format!("opl_in_{sig}_w"))));
    }
    md
}

/// Every model module, each once: (name, text).
pub fn modules() -> Vec<Module> {
    vec![arbiter(), fifo(), output_queues(), sim_top()]
}

//! The output-port-lookup wrapper: the NF's generated module with the port set of the NetFPGA
//! SUME reference `output_port_lookup` (the AXI-Stream pair on `axis_aclk` plus an AXI4-Lite
//! slave on its own `S_AXI_ACLK`), and a register file of counters on that slave.
//!
//! # Register map
//!
//! 32-bit registers, byte addresses within the module's 4 KB window (the reference switch maps
//! the output port lookup at `0x44020000`, its `M02` segment: `reference_switch_defines.tcl`).
//! The first registers sit where the SUME reference modules keep theirs
//! (`*_cpu_regs_defines.v`: ID at 0x0, VERSION at 0x4, RESET at 0x8, PKTIN at 0x14, PKTOUT at
//! 0x18), so the reference tools' habits carry over.
//!
//! | address | name | access | what |
//! |---|---|---|---|
//! | 0x000 | ID | R | [`ID`], "EMU" in ASCII |
//! | 0x004 | VERSION | R | [`VERSION`], this register map's version |
//! | 0x008 | RESET | W | writing 1 to bit 0 clears every counter; reads 0 |
//! | 0x00C | NF_ID | R | FNV-1a (32-bit) of the NF's Verilog module name: which NF is loaded |
//! | 0x014 | PKTIN | R | frames that entered the NF (last beat accepted on `s_axis`) |
//! | 0x018 | PKTOUT | R | frames the NF sent (last beat accepted on `m_axis`; a frame sent to several ports counts once) |
//! | 0x01C | DROPS | R | frames the NF dropped, all reasons |
//! | 0x040 + 4 × code | DROP_\<REASON\> | R | frames dropped for the reason with that code (`DropReason as u8`, 1–19) |
//! | 0x7FC | DEBUG_PAGE | RW | with the debug unit: which 2 KB page of its registers shows from 0x800 |
//! | 0x800–0xFFF | DEBUG | RW | with the debug unit: its register A at 0x800 + A % 0x800 while DEBUG_PAGE is A / 0x800 |
//!
//! Counters are 32 bits and wrap. Addresses not in the map read 0; writes elsewhere than RESET
//! are ignored. Both answer OKAY.
//!
//! The counters count on `axis_aclk` and the slave answers on `S_AXI_ACLK`: the reference top
//! level (`top.v`) drives both from the same 200 MHz clock (`.axis_aclk(clk_200)`,
//! `.axi_aclk(clk_200)` on `nf_datapath`), and so does this wrapper's user; it has no clock
//! crossing between them.

use emu_core::DropReason;
use emu_hls::backend::{debug, rtl, Design};
use emu_hls::verilog::{Dir, Expr, Instance, Item, Module, Port, Stmt};

/// The wrapper's module name (the 2017 Emu's OPL core had the same name).
pub const MODULE: &str = "emu_output_port_lookup";

/// The value of the ID register: "EMU" in ASCII.
pub const ID: u32 = 0x0045_4d55;

/// The value of the VERSION register: this register map's version.
pub const VERSION: u32 = 1;

/// The address bits the wrapper's AXI4-Lite slave decodes: its window is 4 KB, as the reference
/// switch maps the output port lookup (`M02_AXI_*addr[11:0]` in top.v, `ADDR_WIDTH 12` in
/// control_sub.tcl). Whoever instantiates it passes the low bits of a wider address.
pub const ADDR_BITS: u32 = 12;

/// The wrapper's connection for AXI4-Lite signal `name` (`AWADDR`, …) of the bus `bus`: the
/// low [`ADDR_BITS`] of an address, the signal itself otherwise.
pub fn axi_connection(name: &str, bus: &str) -> Expr {
    let signal = Expr::id(bus);
    if name == "AWADDR" || name == "ARADDR" {
        signal.slice(ADDR_BITS - 1, 0)
    } else {
        signal
    }
}

/// The SUME data path's width in bits.
pub const DATA_BITS: u32 = 256;

/// A register of the map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Register {
    /// Byte address within the module's window.
    pub addr: u32,
    /// Its name, upper case, as in the reference's `*_regs_defines` files.
    pub name: String,
    /// `R`, `W`.
    pub access: &'static str,
    /// What it holds.
    pub what: String,
}

/// Where the debug unit's registers show, when the NF is built with it (`emu netfpga --debug`):
/// the upper half of the 4 KB window, a page of 2 KB of the unit's address space at a time.
/// The reference switch decodes only 12 address bits for the output port lookup
/// (`M02_AXI_*addr[11:0]` in its top.v), and the unit's space is larger (a symbol's registers
/// are 0x400 apart), so [`DEBUG_PAGE_ADDR`] says which page shows: the unit's address `a`
/// (emu-hls `backend/debug.rs`) is at `DEBUG_WINDOW + a % 0x800` while the page register
/// holds `a / 0x800` ([`debug_address`]).
pub const DEBUG_WINDOW: u32 = 0x800;

/// The bytes of the unit's address space one page shows.
pub const DEBUG_PAGE_BYTES: u32 = 0x800;

/// The page register (read and write): which page of the unit's registers shows at
/// [`DEBUG_WINDOW`].
pub const DEBUG_PAGE_ADDR: u32 = 0x7fc;

/// Where the unit's register `a` is: the page to write into [`DEBUG_PAGE_ADDR`] and the address
/// in the window.
pub fn debug_address(a: u32) -> (u32, u32) {
    (a / DEBUG_PAGE_BYTES, DEBUG_WINDOW + a % DEBUG_PAGE_BYTES)
}

/// Address of the RESET register.
pub const RESET_ADDR: u32 = 0x008;
/// Address of PKTIN.
pub const PKTIN_ADDR: u32 = 0x014;
/// Address of PKTOUT.
pub const PKTOUT_ADDR: u32 = 0x018;
/// Address of DROPS.
pub const DROPS_ADDR: u32 = 0x01c;
/// Address of the drop counter for `reason`.
pub fn drop_addr(reason: DropReason) -> u32 {
    0x040 + 4 * reason as u32
}

/// FNV-1a, 32 bits: the NF_ID register's value for a module name.
pub fn nf_id(module: &str) -> u32 {
    module.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}

/// Every register, in address order.
pub fn register_map(design: &Design) -> Vec<Register> {
    let top = design.top_name();
    let reg = |addr, name: &str, access, what: String| Register { addr, name: name.into(), access, what };
    let mut map = vec![
        reg(0x000, "ID", "R", format!("0x{ID:08x}: \"EMU\" in ASCII")),
        reg(0x004, "VERSION", "R", format!("{VERSION}: the register map's version")),
        reg(RESET_ADDR, "RESET", "W", "write 1 to bit 0: clear every counter".into()),
        reg(0x00c, "NF_ID", "R", format!("0x{:08x}: FNV-1a of `{top}`, the NF loaded", nf_id(&top))),
        reg(PKTIN_ADDR, "PKTIN", "R", "frames into the NF".into()),
        reg(PKTOUT_ADDR, "PKTOUT", "R", "frames out of the NF (once per frame, whatever its ports)".into()),
        reg(DROPS_ADDR, "DROPS", "R", "frames the NF dropped, every reason".into()),
    ];
    for &r in DropReason::ALL {
        map.push(reg(
            drop_addr(r),
            &format!("DROP_{}", r.name().to_ascii_uppercase()),
            "R",
            format!("frames dropped as `{}` (code {})", r.name(), r as u8),
        ));
    }
    if design.config.debug {
        map.push(reg(
            DEBUG_PAGE_ADDR,
            "DEBUG_PAGE",
            "RW",
            format!("the page of the debug unit's registers that shows from 0x{DEBUG_WINDOW:03x}"),
        ));
        map.push(reg(
            DEBUG_WINDOW,
            "DEBUG",
            "RW",
            format!(
                "0x{DEBUG_WINDOW:03x} + A % 0x{DEBUG_PAGE_BYTES:x}: the debug unit's register A while DEBUG_PAGE holds \
                 A / 0x{DEBUG_PAGE_BYTES:x} (its map: docs/debug-protocol.md, \"The hardware unit\")"
            ),
        ));
    }
    map
}

/// The register map as a Markdown table.
pub fn register_table(design: &Design) -> String {
    let mut t = String::from("| address | name | access | what |\n|---|---|---|---|\n");
    for r in register_map(design) {
        t.push_str(&format!("| 0x{:03x} | {} | {} | {} |\n", r.addr, r.name, r.access, r.what));
    }
    t
}

fn id(name: &str) -> Expr {
    Expr::id(name)
}

/// The counter register of a drop reason.
fn drop_reg(r: DropReason) -> String {
    format!("drop_{}_q", r.name())
}

/// Nanoseconds per cycle of the SUME data-path clock (200 MHz), for the arrival timestamps.
pub const NS_PER_CYCLE: u128 = 5;

/// The wrapper module around `design`'s NF module. The NF must be built for the SUME's
/// 256-bit bus.
pub fn wrapper(design: &Design) -> Result<Module, String> {
    let bus = 8 * design.config.bus_bytes as u32;
    if bus != DATA_BITS {
        return Err(format!(
            "the NetFPGA SUME pipeline is {DATA_BITS} bits wide; this NF was built for {bus} (give --width 256)"
        ));
    }
    let top = design.top_name();
    let nf_ports = rtl::modules(design)?.into_iter().next().ok_or("the compiler made no module")?.ports;
    let stream = ["tdata", "tkeep", "tuser", "tvalid", "tready", "tlast"];
    let debug = design.config.debug;
    let known = |name: &str| {
        (debug && debug::PORTS.iter().any(|&(p, _, _)| p == name))
            || name == "axis_aclk"
            || name == "axis_resetn"
            || name == "stat_drop_valid"
            || name == "stat_drop_reason"
            || stream.iter().any(|s| name == format!("s_axis_{s}") || name == format!("m_axis_{s}"))
    };
    if let Some(p) = nf_ports.iter().find(|p| !known(&p.name)) {
        return Err(format!(
            "{top} has a port `{}` the SUME wrapper does not know; emu-fpga's opl.rs must connect it",
            p.name
        ));
    }

    let mut m = Module::new(MODULE);
    let w = |name: &str| nf_ports.iter().find(|p| p.name == name).map_or(1, |p| p.width);
    m.ports.push(Port::input("axis_aclk", 1));
    m.ports.push(Port::input("axis_resetn", 1));
    for dir in ["m", "s"] {
        for s in stream {
            let name = format!("{dir}_axis_{s}");
            let out = (dir == "m") != (s == "tready");
            let width = match s {
                "tdata" => DATA_BITS,
                "tkeep" => DATA_BITS / 8,
                "tuser" => 128,
                _ => 1,
            };
            debug_assert_eq!(width, w(&name), "{name}");
            m.ports.push(if out { Port::output_wire(name, width) } else { Port::input(name, width) });
        }
    }
    // The AXI4-Lite slave, named as the reference cores'; 32-bit data, and the 12 address bits
    // the reference switch gives the output port lookup (its top.v wires `M02_AXI_*addr[11:0]`).
    m.ports.push(Port::input("S_AXI_ACLK", 1));
    m.ports.push(Port::input("S_AXI_ARESETN", 1));
    for (name, width) in [
        ("S_AXI_AWADDR", ADDR_BITS),
        ("S_AXI_AWVALID", 1),
        ("S_AXI_WDATA", 32),
        ("S_AXI_WSTRB", 4),
        ("S_AXI_WVALID", 1),
        ("S_AXI_BREADY", 1),
        ("S_AXI_ARADDR", ADDR_BITS),
        ("S_AXI_ARVALID", 1),
        ("S_AXI_RREADY", 1),
    ] {
        m.ports.push(Port::input(name, width));
    }
    for (name, width) in [
        ("S_AXI_ARREADY", 1),
        ("S_AXI_RDATA", 32),
        ("S_AXI_RRESP", 2),
        ("S_AXI_RVALID", 1),
        ("S_AXI_WREADY", 1),
        ("S_AXI_BRESP", 2),
        ("S_AXI_BVALID", 1),
        ("S_AXI_AWREADY", 1),
    ] {
        m.ports.push(Port::output_wire(name, width));
    }

    m.items.push(Item::comment(format!(
        "Generated by `emu netfpga`: {top} as the output port lookup of the NetFPGA SUME\n\
         reference pipeline, with its counters on AXI4-Lite (the register map is in README.md).\n\
         S_AXI_ACLK must be axis_aclk's clock, as in the reference top.v: there is no clock\n\
         crossing between the counters and the slave."
    )));
    m.items.push(Item::Blank);
    // The NF reads `meta.timestamp` from tuser[127:64] of a frame's first beat (bits the
    // reference pipeline leaves zero): stamp the arrival time there, in ns since reset, from a
    // counter of the 200 MHz data-path clock, unless the sender set one.
    m.items.push(Item::comment("Arrival timestamps: ns since reset (200 MHz: 5 ns per cycle) into tuser[127:64]."));
    m.items.push(Item::reg("now_ns", 64));
    m.items.push(Item::always_posedge(
        "axis_aclk",
        vec![Stmt::if_else(
            id("axis_resetn").lnot(),
            vec![Stmt::nb(id("now_ns"), Expr::zero(64))],
            vec![Stmt::nb(id("now_ns"), id("now_ns").plus(Expr::dec(64, NS_PER_CYCLE)))],
        )],
    ));
    m.items.push(Item::wire("s_axis_tuser_stamped", 128));
    m.items.push(Item::assign(
        id("s_axis_tuser_stamped"),
        Expr::concat(vec![
            Expr::mux(
                id("s_axis_tuser").slice(127, 64).equals(Expr::zero(64)),
                id("now_ns"),
                id("s_axis_tuser").slice(127, 64),
            ),
            id("s_axis_tuser").slice(63, 0),
        ]),
    ));
    m.items.push(Item::wire("drop_valid", 1));
    m.items.push(Item::wire("drop_reason", 8));
    let mut connections: Vec<(String, Expr)> =
        vec![("axis_aclk".into(), id("axis_aclk")), ("axis_resetn".into(), id("axis_resetn"))];
    for dir in ["s", "m"] {
        for s in stream {
            let name = format!("{dir}_axis_{s}");
            let to = if name == "s_axis_tuser" { id("s_axis_tuser_stamped") } else { id(&name) };
            connections.push((name.clone(), to));
        }
    }
    connections.push(("stat_drop_valid".into(), id("drop_valid")));
    connections.push(("stat_drop_reason".into(), id("drop_reason")));
    if debug {
        for (name, width, _) in debug::PORTS {
            m.items.push(Item::wire(name, width));
            connections.push((name.into(), id(name)));
        }
    }
    m.items.push(Item::Instance(Instance { module: top.clone(), name: "nf".into(), params: vec![], connections }));

    // Counters, on the data path's clock.
    m.items.push(Item::Blank);
    m.items.push(Item::comment("Counters, on axis_aclk; RESET's bit 0 clears them (clear_q, one cycle)."));
    m.items.push(Item::reg("clear_q", 1));
    let mut counters =
        vec![("pktin_q".to_string(), id("s_axis_tvalid").land(id("s_axis_tready")).land(id("s_axis_tlast")))];
    counters.push(("pktout_q".into(), id("m_axis_tvalid").land(id("m_axis_tready")).land(id("m_axis_tlast"))));
    counters.push(("drops_q".into(), id("drop_valid")));
    for &r in DropReason::ALL {
        counters.push((drop_reg(r), id("drop_valid").land(id("drop_reason").equals(Expr::dec(8, r as u128)))));
    }
    for (name, _) in &counters {
        m.items.push(Item::reg(name, 32));
    }
    let mut body = vec![];
    for (name, event) in &counters {
        body.push(Stmt::if_else(
            id("clear_q"),
            vec![Stmt::nb(id(name), Expr::zero(32))],
            vec![Stmt::if_(event.clone(), vec![Stmt::nb(id(name), id(name).plus(Expr::dec(32, 1)))])],
        ));
    }
    let reset: Vec<Stmt> = counters.iter().map(|(n, _)| Stmt::nb(id(n), Expr::zero(32))).collect();
    m.items.push(Item::always_posedge("axis_aclk", vec![Stmt::if_else(id("axis_resetn").lnot(), reset, body)]));

    // The AXI4-Lite slave: one write and one read at a time.
    m.items.push(Item::Blank);
    m.items.push(Item::comment(
        "AXI4-Lite: a write is taken when its address and data are both valid and no response is\n\
         pending; a read when no read data is pending. Responses are always OKAY.",
    ));
    for (name, width) in [("bvalid_q", 1), ("rvalid_q", 1), ("rdata_q", 32), ("dbg_wait_q", 1)] {
        m.items.push(Item::reg(name, width));
    }
    m.items.push(Item::wire("write_go", 1));
    m.items
        .push(Item::assign(id("write_go"), id("S_AXI_AWVALID").land(id("S_AXI_WVALID")).land(id("bvalid_q").lnot())));
    m.items.push(Item::wire("read_go", 1));
    m.items.push(Item::assign(
        id("read_go"),
        id("S_AXI_ARVALID").land(id("rvalid_q").lnot()).land(id("dbg_wait_q").lnot()),
    ));
    // The debug unit: the upper half of the 12-bit window shows the page of its registers that
    // page_q names; it answers a read the cycle after, so the read data is one cycle later than
    // the register file's (dbg_wait_q).
    let high = |addr: &str| id(addr).bit_at(11);
    let debug_read = id("read_go").land(high("S_AXI_ARADDR"));
    let debug_write = id("write_go").land(high("S_AXI_AWADDR"));
    let page_bits = 32 - DEBUG_PAGE_BYTES.trailing_zeros();
    if debug {
        m.items.push(Item::reg("page_q", page_bits));
        let offset = |addr: &str| Expr::concat(vec![id("page_q"), id(addr).slice(10, 0)]);
        for (port, value) in [
            ("dbg_req_valid", debug_read.clone().lor(debug_write.clone())),
            ("dbg_req_write", debug_write.clone()),
            ("dbg_req_addr", Expr::mux(debug_write.clone(), offset("S_AXI_AWADDR"), offset("S_AXI_ARADDR"))),
            ("dbg_req_wdata", id("S_AXI_WDATA")),
        ] {
            m.items.push(Item::assign(id(port), value));
        }
    }
    let mut arms = vec![
        (vec![Expr::hex(12, 0x000)], vec![Stmt::nb(id("rdata_q"), Expr::hex(32, ID as u128))]),
        (vec![Expr::hex(12, 0x004)], vec![Stmt::nb(id("rdata_q"), Expr::hex(32, VERSION as u128))]),
        (vec![Expr::hex(12, 0x00c)], vec![Stmt::nb(id("rdata_q"), Expr::hex(32, nf_id(&top) as u128))]),
        (vec![Expr::hex(12, PKTIN_ADDR as u128)], vec![Stmt::nb(id("rdata_q"), id("pktin_q"))]),
        (vec![Expr::hex(12, PKTOUT_ADDR as u128)], vec![Stmt::nb(id("rdata_q"), id("pktout_q"))]),
        (vec![Expr::hex(12, DROPS_ADDR as u128)], vec![Stmt::nb(id("rdata_q"), id("drops_q"))]),
    ];
    for &r in DropReason::ALL {
        arms.push((vec![Expr::hex(12, drop_addr(r) as u128)], vec![Stmt::nb(id("rdata_q"), id(&drop_reg(r)))]));
    }
    if debug {
        arms.push((
            vec![Expr::hex(12, DEBUG_PAGE_ADDR as u128)],
            vec![Stmt::nb(id("rdata_q"), Expr::concat(vec![Expr::zero(32 - page_bits), id("page_q")]))],
        ));
    }
    let read = Stmt::Case {
        subject: id("S_AXI_ARADDR").slice(11, 0),
        arms,
        default: Some(vec![Stmt::nb(id("rdata_q"), Expr::zero(32))]),
    };
    let write_to = |addr: u32| id("write_go").land(id("S_AXI_AWADDR").slice(11, 0).equals(Expr::hex(12, addr as u128)));
    let clear_write = write_to(RESET_ADDR).land(id("S_AXI_WDATA").bit_at(0));
    let mut on_reset = vec![
        Stmt::nb(id("bvalid_q"), Expr::bit(false)),
        Stmt::nb(id("rvalid_q"), Expr::bit(false)),
        Stmt::nb(id("rdata_q"), Expr::zero(32)),
        Stmt::nb(id("clear_q"), Expr::bit(false)),
        Stmt::nb(id("dbg_wait_q"), Expr::bit(false)),
    ];
    let mut page_write = vec![];
    if debug {
        on_reset.push(Stmt::nb(id("page_q"), Expr::zero(page_bits)));
        page_write.push(Stmt::if_(
            write_to(DEBUG_PAGE_ADDR),
            vec![Stmt::nb(id("page_q"), id("S_AXI_WDATA").slice(page_bits - 1, 0))],
        ));
    }
    m.items.push(Item::always_posedge(
        "S_AXI_ACLK",
        vec![Stmt::if_else(
            id("S_AXI_ARESETN").lnot(),
            on_reset,
            [
                page_write,
                vec![
                Stmt::nb(id("clear_q"), clear_write),
                Stmt::if_else(
                    id("write_go"),
                    vec![Stmt::nb(id("bvalid_q"), Expr::bit(true))],
                    vec![Stmt::if_(id("S_AXI_BREADY"), vec![Stmt::nb(id("bvalid_q"), Expr::bit(false))])],
                ),
                if debug {
                    // A debug read waits a cycle for the unit's answer.
                    Stmt::if_else(
                        id("dbg_wait_q"),
                        vec![
                            Stmt::nb(id("dbg_wait_q"), Expr::bit(false)),
                            Stmt::nb(id("rvalid_q"), Expr::bit(true)),
                            Stmt::nb(id("rdata_q"), id("dbg_resp_rdata")),
                        ],
                        vec![Stmt::if_else(
                            debug_read,
                            vec![Stmt::nb(id("dbg_wait_q"), Expr::bit(true))],
                            vec![Stmt::if_else(
                                id("read_go"),
                                vec![Stmt::nb(id("rvalid_q"), Expr::bit(true)), read],
                                vec![Stmt::if_(id("S_AXI_RREADY"), vec![Stmt::nb(id("rvalid_q"), Expr::bit(false))])],
                            )],
                        )],
                    )
                } else {
                    Stmt::if_else(
                        id("read_go"),
                        vec![Stmt::nb(id("rvalid_q"), Expr::bit(true)), read],
                        vec![Stmt::if_(id("S_AXI_RREADY"), vec![Stmt::nb(id("rvalid_q"), Expr::bit(false))])],
                    )
                },
                ],
            ]
            .concat(),
        )],
    ));
    for (port, value) in [
        ("S_AXI_AWREADY", id("write_go")),
        ("S_AXI_WREADY", id("write_go")),
        ("S_AXI_BVALID", id("bvalid_q")),
        ("S_AXI_BRESP", Expr::zero(2)),
        ("S_AXI_ARREADY", id("read_go")),
        ("S_AXI_RVALID", id("rvalid_q")),
        ("S_AXI_RDATA", id("rdata_q")),
        ("S_AXI_RRESP", Expr::zero(2)),
    ] {
        m.items.push(Item::assign(id(port), value));
    }
    debug_assert!(m.ports.iter().all(|p| p.dir != Dir::Inout));
    Ok(m)
}

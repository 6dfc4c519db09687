//! The back end: a scheduled function becomes a circuit with the NetFPGA SUME
//! output-port-lookup interface, in two forms that must agree cycle for cycle:
//!
//! - [`model`]: the cycle-accurate model, stepped one clock edge at a time;
//! - [`rtl`]: the Verilog, built through [`crate::verilog`]'s AST (one module for the NF with
//!   its ingress and egress, one per state element, from [`crate::hw`]);
//! - [`top`]: both as one rust-hdl `Logic` block (`update()` runs the model, `hdl()` returns
//!   the Verilog), with SUME ports 64 or 256 bits wide.
//!
//! [`report`] and [`symbols`] are what `emu hls` writes beside the Verilog.
//!
//! # The microarchitecture
//!
//! Two stages, so a frame is received while the one before is processed and sent:
//!
//! 1. **ingress**: while it holds no frame (`s_axis_tready` high) it takes beats into one of
//!    two packet-buffer slots (block RAM, one bus word per address) and the first
//!    [`Function::window`] bytes into its window registers (zeros past the frame's end). The
//!    first beat's `tuser[23:16]` gives the input port (the lowest set bit `b`: port `b / 2`,
//!    so NF port `k` is bit `2k` and DMA port `k` maps to `k` as well). Bytes past the buffer
//!    are not stored; the frame is then oversize. After the last beat it holds the frame
//!    until the core takes it.
//! 2. **core**, one frame at a time:
//!    - **idle** (one cycle per frame): `emu_core::check_frame`'s ingress checks on the held
//!      frame; a failing frame is dropped with its reason, a passing one is taken: its window,
//!      length, port and slot move into the core's registers and the ingress is free again;
//!    - **the NF's states** ([`crate::sched`]): the operations over the window registers, the
//!      length register, the metadata and the state elements; a `return` resolves the verdict
//!      (`Action::resolve`) into the output ports or a drop;
//!    - **send**: the frame beat by beat with `m_axis_tvalid` high, the edited window over the
//!      buffer's bytes (the buffer's first word is read in the NF's last state),
//!      `tuser[15:0]` the new length, `[23:16]` the source and `[31:24]` the destination ports.
//!
//! Back to back, a frame costs the core 1 + its NF states + its beats, and the ingress its
//! beats + 1; the larger is the initiation interval ([`report::path_cycles`]).
//!
//! Every drop shows for one cycle on `stat_drop_valid` with its code on `stat_drop_reason`
//! (`DropReason as u8`): the tiers compare drops as well as frames.
//!
//! Next: a third stage, so the core processes a frame while the one before is sent (DESIGN
//! §4's ingress → core → egress FIFOs).

pub mod debug;
pub mod hold;
pub mod model;
pub mod report;
pub mod rtl;
pub mod symbols;
pub mod top;

use crate::ir::{BitVec, Function, StateKind};
use crate::sched::{self, Schedule};

/// The header window must hold the bytes the ingress checks read: two VLAN tags and an IPv4
/// header (14 + 8 + 20).
pub const MIN_WINDOW: u32 = 42;

/// What the hardware is built for besides the NF itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HwConfig {
    /// Bytes per AXI-Stream beat: 8 (64-bit bus) or 32 (256-bit bus).
    pub bus_bytes: usize,
    /// The NF's ports (at most 4 on SUME: nf0–nf3).
    pub ports: usize,
    /// The largest frame accepted (the packet buffer's size); longer ones are dropped as
    /// oversize, as by `check_frame` on every target.
    pub max_frame: usize,
    /// Values of the configuration registers (`NfDescriptor::registers`): their initial and
    /// reset values in the hardware.
    pub registers: Vec<(String, u64)>,
    /// The tables' entries before the first packet (`NfDescriptor::tables`): their contents
    /// at start and after every reset.
    pub tables: Vec<emu_core::TableEntry>,
    /// Build the debug unit ([`debug`]) into the NF module, with its register port. Only the
    /// Verilog has it; the cycle model is the build without it (which it matches, idle).
    pub debug: bool,
    /// With the debug unit, the management port whose frames of EtherType 0x88B5 reach the
    /// unit in band ([`debug`]'s in-band path); `None`: the register port alone.
    pub debug_port: Option<u8>,
}

impl HwConfig {
    /// A bus of `width_bits` (64 or 256), 4 ports, 1518-byte frames, no registers.
    pub fn new(width_bits: usize) -> HwConfig {
        HwConfig {
            bus_bytes: width_bits / 8,
            ports: 4,
            max_frame: 1518,
            registers: vec![],
            tables: vec![],
            debug: false,
            debug_port: None,
        }
    }
}

/// A function ready to be built: scheduled, with its hardware configuration checked.
#[derive(Debug, Clone)]
pub struct Design {
    /// The optimized function.
    pub func: Function,
    /// Its FSM.
    pub sched: Schedule,
    /// The build's parameters.
    pub config: HwConfig,
    /// Each state element's initial value, by element (registers only; others start empty).
    pub init: Vec<Option<BitVec>>,
    /// The TCAM rules loaded at start and at every reset, at the elements' widths.
    pub rules: Vec<TcamRule>,
    /// The CAM entries loaded at start and at every reset, at the elements' widths.
    pub cam_entries: Vec<CamEntry>,
}

/// An entry a CAM holds from the start (from [`HwConfig::tables`]): entries of one CAM fill
/// its slots 0, 1, 2, … in order, the victim pointer at 0, as `insert`s into an empty `Cam`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CamEntry {
    /// The `Cam` element.
    pub table: crate::ir::StateId,
    /// Its slot.
    pub slot: usize,
    /// The key, at the key's width.
    pub key: BitVec,
    /// The value, at the value's width.
    pub value: BitVec,
}

/// A rule a TCAM holds from the start (from [`HwConfig::tables`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcamRule {
    /// The `Tcam` element.
    pub table: crate::ir::StateId,
    /// Its slot (lower is first).
    pub slot: usize,
    /// The value compared under the mask, at the key's width.
    pub value: BitVec,
    /// The key bits that must equal the value's.
    pub mask: BitVec,
    /// What a lookup hitting the rule gives, at the result's width.
    pub result: BitVec,
}

impl Design {
    /// Schedules `func` for `config`. The error says what cannot be built and what to do.
    pub fn new(func: Function, config: HwConfig) -> Result<Design, String> {
        if config.bus_bytes != 8 && config.bus_bytes != 32 {
            return Err(format!("the data width must be 64 or 256 bits, not {}", config.bus_bytes * 8));
        }
        if !(1..=4).contains(&config.ports) {
            return Err(format!("the SUME top level has 4 ports; this NF has {}", config.ports));
        }
        if let Some(m) = config.debug_port.filter(|&m| m as usize >= config.ports) {
            return Err(format!("the debug port is {m}, but the NF's ports are 0 to {}", config.ports - 1));
        }
        if func.window < MIN_WINDOW || func.window > 1024 {
            return Err(format!(
                "the header window is {} bytes; the hardware needs {MIN_WINDOW} to 1024 \
                 (write #[emu::nf(window = 64)])",
                func.window
            ));
        }
        if !(60..=9018).contains(&config.max_frame) {
            return Err(format!("the largest frame must be 60 to 9018 bytes, not {}", config.max_frame));
        }
        let mut init = vec![None; func.states.len()];
        for (name, value) in &config.registers {
            let (id, decl) = func
                .states
                .iter()
                .find(|(_, d)| &d.name == name)
                .ok_or_else(|| format!("the NF has no configuration register `{name}`"))?;
            let StateKind::Register { ty } = decl.kind else {
                return Err(format!("`{name}` is {}, not a register", decl.kind.with_article()));
            };
            init[id.as_u32() as usize] = Some(BitVec::new(ty.width(), *value));
        }
        let mut rules = vec![];
        let mut cam_entries: Vec<CamEntry> = vec![];
        for entry in &config.tables {
            let (table, slot, value, mask, result) = match entry {
                emu_core::TableEntry::Tcam { table, slot, value, mask, result } => (table, slot, value, mask, result),
                emu_core::TableEntry::Cam { table, slot, key, value } => {
                    let id = func.state_by_name(table).ok_or_else(|| format!("the NF has no table `{table}`"))?;
                    let StateKind::Cam { key: kt, value: vt, size } = func.states[id].kind else {
                        return Err(format!("`{table}` is {}, not a cam", func.states[id].kind.with_article()));
                    };
                    let filled = cam_entries.iter().filter(|e| e.table == id).count();
                    if *slot != filled || *slot >= size as usize {
                        return Err(format!(
                            "`{table}` is loaded in slot order from 0 and has {size} slots; entry for slot {slot} \
                             comes after {filled} entries"
                        ));
                    }
                    let key = BitVec::from_be_bytes(key).resize(kt.width());
                    if cam_entries.iter().any(|e| e.table == id && e.key == key) {
                        return Err(format!("`{table}`: a key is loaded twice"));
                    }
                    let value = BitVec::from_be_bytes(value).resize(vt.width());
                    cam_entries.push(CamEntry { table: id, slot: *slot, key, value });
                    continue;
                }
            };
            let id = func.state_by_name(table).ok_or_else(|| format!("the NF has no table `{table}`"))?;
            let StateKind::Tcam { key, value: ty, size } = func.states[id].kind else {
                return Err(format!("`{table}` is {}, not a tcam", func.states[id].kind.with_article()));
            };
            if *slot >= size as usize {
                return Err(format!("`{table}` has {size} slots; there is no slot {slot}"));
            }
            rules.push(TcamRule {
                table: id,
                slot: *slot,
                value: BitVec::from_be_bytes(value).resize(key.width()),
                mask: BitVec::from_be_bytes(mask).resize(key.width()),
                result: BitVec::from_be_bytes(result).resize(ty.width()),
            });
        }
        let sched = sched::schedule(&func);
        Ok(Design { func, sched, config, init, rules, cam_entries })
    }

    /// The design of a registered NF (its `HLS_SOURCE`) under `config`, for a bus of
    /// `width_bits` and frames up to `max_frame` bytes: compiled, scheduled, configuration
    /// registers loaded.
    pub fn from_descriptor(
        desc: &emu_core::NfDescriptor,
        config: &emu_core::Config,
        width_bits: usize,
        max_frame: usize,
    ) -> Result<Design, String> {
        let source = desc
            .hls_source
            .ok_or_else(|| format!("{} is not an #[emu::nf] module, so it has no hardware", desc.name))?;
        let func = crate::compile(source, desc.window)?;
        let mut hw = HwConfig::new(width_bits);
        hw.ports = desc.ports;
        hw.max_frame = max_frame;
        hw.registers =
            (desc.registers)(config).map_err(|e| e.to_string())?.into_iter().map(|(n, v)| (n.to_string(), v)).collect();
        hw.tables = (desc.tables)(config).map_err(|e| e.to_string())?;
        Design::new(func, hw)
    }

    /// The Verilog name of the NF's module (`emu_learning_switch`).
    pub fn top_name(&self) -> String {
        format!("emu_{}", self.func.name)
    }

    /// Packet-buffer words: enough for the largest frame.
    pub fn buffer_words(&self) -> usize {
        self.config.max_frame.div_ceil(self.config.bus_bytes)
    }
}

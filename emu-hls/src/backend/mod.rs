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
//! Three stages, each on its own frame, so a frame is received while the one before is
//! processed and the one before that is sent:
//!
//! 1. **ingress**: while it holds no frame (`s_axis_tready` high) it takes beats into one of
//!    three packet-buffer slots (block RAM, one bus word per address) and the first
//!    [`Function::window`] bytes into its window registers (zeros past the frame's end). The
//!    first beat's `tuser[23:16]` gives the input port (the lowest set bit `b`: port `b / 2`,
//!    so NF port `k` is bit `2k` and DMA port `k` maps to `k` as well). Bytes past the buffer
//!    are not stored; the frame is then oversize. After the last beat it holds the frame
//!    until the core takes it.
//! 2. **core**, one frame at a time:
//!    - **idle** (one cycle per frame): `emu_core::check_frame`'s ingress checks on the held
//!      frame; a passing one is taken: its window, length, port and slot move into the core's
//!      registers and the ingress is free again (a failing one is decided as a drop);
//!    - **the NF's states** ([`crate::sched`]): the operations over the window registers, the
//!      length register, the metadata and the state elements; a `return` resolves the verdict
//!      (`Action::resolve`) into the output ports or a drop;
//!    - **done**: the decided frame waits until the egress is free (or sends its last beat in
//!      this cycle) and is handed over; in the same cycle the core is idle and takes the next.
//! 3. **egress**: the frame beat by beat with `m_axis_tvalid` high: the bytes the NF wrote
//!    (copied from the core's window at the handoff) over the buffer's, read a word ahead,
//!    `tuser[15:0]` the new length, `[23:16]` the source and `[31:24]` the destination ports.
//!    A drop passes through it too, as one cycle of `stat_drop_valid` with its code on
//!    `stat_drop_reason` (`DropReason as u8`), so frames and drops leave in arrival order and
//!    the tiers compare drops as well as frames.
//!
//! Back to back, a frame costs the core 1 + its NF states, the ingress its beats + 1 and the
//! egress its beats; the largest is the initiation interval ([`report::path_cycles`]).
//!
//! Next: a pipelined core (several frames in its states at once, hazards on the state
//! elements resolved by forwarding or a stall both tiers take), and cut-through where the
//! verdict needs only the header window.

pub mod debug;
pub mod hold;
pub mod model;
pub mod report;
pub mod rtl;
pub mod symbols;
pub mod top;

use crate::initial::Initial;
use crate::ir::Function;
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
    /// The state elements as the NF's constructor leaves them
    /// (`NfDescriptor::initial_state`): registers' reset values, arrays' initial words, the
    /// CAMs' and TCAMs' entries at start and after every reset ([`crate::initial`]). Empty:
    /// everything starts at zero.
    pub state: Vec<emu_core::ElementImage>,
    /// Build the debug unit ([`debug`]) into the NF module, with its register port. Only the
    /// Verilog has it; the cycle model is the build without it (which it matches, idle).
    pub debug: bool,
    /// With the debug unit, the management port whose frames of EtherType 0x88B5 reach the
    /// unit in band ([`debug`]'s in-band path); `None`: the register port alone.
    pub debug_port: Option<u8>,
}

impl HwConfig {
    /// A bus of `width_bits` (64 or 256), 4 ports, 1518-byte frames, state all zero.
    pub fn new(width_bits: usize) -> HwConfig {
        HwConfig {
            bus_bytes: width_bits / 8,
            ports: 4,
            max_frame: 1518,
            state: vec![],
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
    /// The state elements' contents at start.
    pub initial: Initial,
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
        let initial = Initial::from_images(&func, &config.state)?;
        let sched = sched::schedule(&func, config.bus_bytes as u32);
        let (func, sched) = deeper_hoist(func, sched, config.bus_bytes as u32);
        Ok(Design { func, sched, config, initial })
    }

    /// The design of a registered NF (its `HLS_SOURCE`) under `config`, for a bus of
    /// `width_bits` and frames up to `max_frame` bytes: compiled, scheduled, configuration
    /// state loaded as the NF's constructor leaves it.
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
        hw.state = desc.initial_state(config).map_err(|e| e.to_string())?;
        // Design::new loads the images; here only the CPU's side is checked for what it hides.
        Initial::shows_every_field(&func, &hw.state)?;
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

/// [`passes::Hoist`](crate::passes::Hoist) with room for deeper heads (12 instructions, 6
/// levels) saves a state where the dominator's last state has room for them and costs one
/// where it has not (the scheduler then splits that state); which it is, only the schedule
/// says. So both are scheduled, and the deeper one is kept when no verdict's fastest or
/// slowest path takes more cycles and some path takes fewer. (Measured 2026-12-03: ICMP echo,
/// tcp-ping, firewall and stats each lose a state on their longest paths; the DNS server keeps
/// the default, under which it has 22 states fewer.)
fn deeper_hoist(func: Function, sched: Schedule, bus: u32) -> (Function, Schedule) {
    use crate::passes::{optimize, run_verified, Hoist};
    let mut alt = func.clone();
    if !run_verified(&mut Hoist { max_ops: 12, max_depth: 6 }, &mut alt).unwrap_or(false) || optimize(&mut alt).is_err()
    {
        return (func, sched);
    }
    let alt_sched = sched::schedule(&alt, bus);
    let (was, now) = (sched.verdicts(&func), alt_sched.verdicts(&alt));
    let mut faster = false;
    let no_slower = was.len() == now.len()
        && was.iter().all(|v| {
            now.iter().find(|w| w.verdict == v.verdict).is_some_and(|w| {
                faster |= w.min_weight < v.min_weight || w.max_weight < v.max_weight;
                w.min_weight <= v.min_weight && w.max_weight <= v.max_weight
            })
        });
    if no_slower && faster {
        (alt, alt_sched)
    } else {
        (func, sched)
    }
}

//! FPGA flows for Emu beyond the NF's own Verilog (`emu-hls`):
//!
//! - [`opl`]: the NF as the NetFPGA SUME reference switch's output port lookup, with its
//!   counters on AXI4-Lite; [`pipeline`]: our Verilog models of the reference input arbiter and
//!   output queues; [`project`] and [`vivado`]: the Vivado project `emu netfpga` writes and runs;
//! - [`sim`]: the SUME-level simulation (the pipeline around the NF under Verilator);
//! - [`synth`]: `emu synth`'s flows through yosys, nextpnr-ice40 and icepack;
//! - [`reference`]: hand-written rust-hdl designs the HLS output is measured against.
#![deny(missing_docs)]

pub mod opl;
pub mod pipeline;
pub mod project;
pub mod reference;
pub mod sim;
pub mod synth;
pub mod vivado;

//! FPGA flows for Emu: the NetFPGA SUME wrapper, Vivado project generation, yosys and nextpnr
//! flows and resource reports.
//!
//! Not written yet: these arrive with the FPGA-flows issue (see `../shared/DESIGN.md` §5). The
//! crate exists so the workspace has the layout the design fixes; it exports nothing.
#![deny(missing_docs)]

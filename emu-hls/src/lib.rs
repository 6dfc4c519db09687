//! The Emu high-level-synthesis compiler: the same NF source the CPU target runs becomes a
//! circuit. See `docs/hls.md` for the architecture and how the parts fit.
//!
//! Built so far:
//! - [`front`]: the checker of the synthesizable subset (`docs/hls-subset.md`), which the
//!   `#[emu::nf]` macro runs at compile time;
//! - [`lower`]: the checked, typed AST to the IR (helpers inlined, views to packet accesses);
//! - [`ir`]: the IR (arenas, SSA with block parameters, a builder, printer, parser, verifier);
//! - [`passes`]: constant folding, if-conversion, CFG simplification, dead-code elimination;
//! - [`interp`]: the untimed IR interpreter over the CPU's own state elements;
//! - [`verilog`]: a small Verilog AST and printer;
//! - [`hw`]: state elements as rust-hdl blocks (behavioural model and Verilog in one file).
//!
//! Not built yet: the scheduler, the FSM back end,
//! ingress/egress and the NetFPGA SUME top level, and `emu hls`.
#![deny(missing_docs)]
#[cfg(feature = "hw")]
pub mod hw;
pub mod verilog;
pub mod ir;
pub mod passes;
pub mod interp;
pub mod front;
pub mod lower;

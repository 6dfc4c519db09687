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
//! - [`sched`]: the operations into the states of an FSM;
//! - [`backend`]: the FSM with ingress, egress and the NetFPGA SUME interface, as a
//!   cycle-accurate model and as Verilog, and the report and symbol table of `emu hls`.
#![deny(missing_docs)]
#[cfg(feature = "hw")]
pub mod backend;
pub mod front;
pub mod initial;
#[cfg(feature = "hw")]
pub mod hw;
pub mod interp;
pub mod ir;
pub mod lower;
pub mod passes;
pub mod sched;
pub mod verilog;

/// Compiles an NF module's source (`HLS_SOURCE`) with a `window`-byte header window: the
/// subset check, lowering and the optimization passes. The error says what is wrong in words.
pub fn compile(source: &str, window: usize) -> Result<ir::Function, String> {
    let module: syn::ItemMod = syn::parse_str(source).map_err(|e| format!("the NF's source does not parse: {e}"))?;
    let nf = front::check_module(&module, &front::Options { window }).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
        format!("the NF is outside the synthesizable subset:\n  {}", lines.join("\n  "))
    })?;
    let mut func = lower::lower(&nf, window as u32).map_err(|e| format!("lowering: {e}"))?;
    passes::optimize(&mut func).map_err(|e| format!("optimizing: {e:?}"))?;
    Ok(func)
}

//! The Emu high-level-synthesis compiler.
//!
//! Not written yet: the `#[emu::nf]` front end, the IR, its passes, the scheduler and the
//! rust-hdl back end arrive with the HLS issue (see `../shared/DESIGN.md` §4). The crate exists
//! so the workspace has the layout the design fixes; it exports nothing.
#![deny(missing_docs)]

//! The `emu` command-line tool, as a library so that an NF crate made by `emu new` can build
//! its own `emu` with its NF registered next to the built-in ones:
//!
//! ```no_run
//! # const MY_NF: emu::NfDescriptor = learning_switch::DESCRIPTOR;
//! fn main() {
//!     std::process::exit(emu_tool::main_with(&[MY_NF]));
//! }
//! ```
#![deny(missing_docs)]

mod cli;
mod commands;
pub mod registry;

pub use cli::main_with;

/// Where this tool's source tree is: templates of `emu new` point their dependencies here.
pub const EMU_ROOT: &str = env!("CARGO_MANIFEST_DIR");

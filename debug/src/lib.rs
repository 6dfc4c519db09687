//! The debugger shared by every target. `protocol` is the wire format of docs/debug-protocol.md:
//! the client (`emu dbg`) and each target's debug unit encode and decode messages with it, so
//! they cannot disagree about a byte. `unit` is the software targets' debug unit, `client` the client with its command language.
#![deny(missing_docs)]

pub mod client;
pub mod hw;
pub mod protocol;
pub mod socket;
pub mod unit;

//! Emu's CPU target: runs any network function natively over pcap files, in memory, or live on
//! Linux interfaces. Its behaviour is the semantics every other target is compared with.
//!
//! All the ways frames come and go implement [`Device`]; a [`Runner`] moves frames from a
//! device through the NF and back.
//!
//! ```
//! use emu::prelude::*;
//! use emu_cpu::{run_batch, Frame};
//!
//! struct ToPortOne;
//! impl NetworkFunction for ToPortOne {
//!     fn process(&mut self, _pkt: &mut Packet, _meta: &Meta) -> Action {
//!         Action::Forward(1)
//!     }
//! }
//!
//! let frame = Frame::new(0, 0, vec![0u8; 60]);
//! let out = run_batch(Box::new(ToPortOne), 2, 128, [frame]).unwrap();
//! assert_eq!(out.on_port(1).len(), 1);
//! assert_eq!(out.stats.ports()[0].rx_packets, 1);
//! ```
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod capture;
pub mod debug;
pub mod device;
pub mod error;
pub mod live;
pub mod memory;
pub mod pcap;
mod ring;
pub mod runner;
pub mod stats;

pub use capture::{CaptureReader, InputSpec, PcapDevice, PortsWriter};
pub use debug::{DebugOptions, Debugger};
pub use device::{Arrival, Device, Frame};
pub use error::{Error, ErrorKind, Result};
pub use live::{EndReason, EtherSocket, IoMode, LiveDevice};
pub use memory::{run_batch, BatchResult, MemoryDevice, Output};
pub use runner::{DropRecord, DropSink, JsonLines, NoDropLog, Runner, SentSink};
pub use stats::{PortStats, Stats};

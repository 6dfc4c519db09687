//! Emu's programming model: write a network function once, run it on the CPU, in Mininet and as
//! hardware.
//!
//! An NF is a struct holding its state (built from the [`state`] elements) and a
//! [`NetworkFunction::process`] function that looks at a [`Packet`] through typed header views
//! ([`wire`]) and returns an [`Action`].
//!
//! This crate is the one NF authors depend on. It re-exports the programming model, which
//! lives in `emu-core` so that the HLS compiler (`emu-hls`) can read the same definitions —
//! header field tables, state-element semantics — without depending on the macro that uses it.
//!
//! ```
//! use emu::prelude::*;
//!
//! /// Sends every frame back where it came from, and counts them.
//! #[derive(Default)]
//! struct Mirror {
//!     frames: Counter,
//! }
//!
//! impl NetworkFunction for Mirror {
//!     fn process(&mut self, pkt: &mut Packet, _meta: &Meta) -> Action {
//!         self.frames.inc();
//!         let mut eth = pkt.ethernet_mut();
//!         let (src, dst) = (eth.src(), eth.dst());
//!         eth.set_src(dst);
//!         eth.set_dst(src);
//!         Action::Reply
//!     }
//! }
//!
//! let mut frame = vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x88, 0xb5];
//! let mut nf = Mirror::default();
//! let meta = Meta { in_port: 2, len: 14, timestamp: 0 };
//! let action = nf.process(&mut Packet::new(&mut frame, 128), &meta);
//! assert_eq!(action, Action::Reply);
//! assert_eq!(&frame[..6], &[2, 0, 0, 0, 0, 1]);
//! assert_eq!(nf.frames.get(), 1);
//! ```
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub use emu_core::*;

/// Marks the module that holds an NF and checks it against the synthesizable subset; see
/// [`emu_macros`] and docs/hls-subset.md.
pub use emu_macros::nf;

/// `#[derive(Bits)]`: a struct of fixed-width fields as one value; see [`emu_macros::Bits`].
pub use emu_macros::Bits;

/// What an NF module starts with: `use emu::prelude::*;` (emu-core's prelude and the
/// `Bits` derive).
pub mod prelude {
    pub use emu_core::prelude::*;
    pub use emu_macros::Bits;
}

//! Emu's programming model: write a network function once, run it on the CPU, in Mininet and as
//! hardware.
//!
//! An NF is a struct holding its state (built from the [`state`] elements) and a
//! [`NetworkFunction::process`] function that looks at a [`Packet`] through typed header views
//! ([`wire`]) and returns an [`Action`].
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

pub mod action;
pub mod addr;
pub mod bits;
pub mod craft;
pub mod nf;
pub mod packet;
pub mod state;
pub mod wire;

pub use action::{Action, DropReason, Port, PortMask, Ports, Verdict, MAX_PORTS};
pub use addr::{Ipv4Addr, Mac};
pub use arbitrary_int::*;
pub use bits::{Bits, Bytes, Scalar};
pub use nf::{Config, ConfigError, NetworkFunction, NfDescriptor, Param};
pub use packet::{check_frame, Meta, Packet, Timestamp, DEFAULT_MAX_FRAME};
pub use state::{Array, Cam, Counter, HashTable, Lru, Queue, Register, Tcam};

pub use wire::arp::Header as ArpHeader;
pub use wire::dns::Header as DnsHeader;
pub use wire::ethernet::Header as EthernetHeader;
pub use wire::icmpv4::Header as Icmpv4Header;
pub use wire::ipv4::Header as Ipv4Header;
pub use wire::memcached::binary::Header as MemcachedBinaryHeader;
pub use wire::memcached::udp_frame::Header as MemcachedUdpFrameHeader;
pub use wire::tcp::Header as TcpHeader;
pub use wire::udp::Header as UdpHeader;
pub use wire::vlan::Header as VlanHeader;

#[doc(hidden)]
pub use paste;

/// What an NF module imports: `use emu::prelude::*;`.
pub mod prelude {
    pub use crate::action::{Action, DropReason, Port, PortMask};
    pub use crate::addr::{Ipv4Addr, Mac};
    pub use crate::bits::{Bits, Bytes, Scalar};
    pub use crate::nf::{Config, ConfigError, NetworkFunction, NfDescriptor, Param};
    pub use crate::packet::{Meta, Packet};
    pub use crate::state::{Array, Cam, Counter, HashTable, Lru, Queue, Register, Tcam};
    pub use crate::wire::checksum;
    pub use arbitrary_int::*;
}

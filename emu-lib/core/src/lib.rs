//! The definitions behind Emu's programming model: packets, header views and their field
//! tables, checksums, state elements, actions.
//!
//! NF authors use the `emu` crate, which re-exports everything here (and the `#[emu::nf]`
//! macro). This crate exists so that the HLS compiler can depend on the same definitions — one
//! table of header field offsets, one semantics per state element — as the CPU target.
//!
//! ```
//! use emu_core::prelude::*;
//!
//! let mut frame = vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x88, 0xb5];
//! let pkt = Packet::new(&mut frame, 64);
//! assert!(pkt.ethernet().dst().is_broadcast());
//! ```
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod action;
pub mod addr;
pub mod bits;
pub mod craft;
pub mod nf;
pub mod packet;
pub mod probe;
pub mod state;
pub mod wire;

pub use action::{Action, DropReason, Port, PortMask, Ports, Verdict, MAX_PORTS};
pub use addr::{Ipv4Addr, Mac};
pub use arbitrary_int::*;
pub use bits::{Bits, Bytes, Scalar};
pub use nf::{state_image, Config, ConfigError, ElementImage, NetworkFunction, NfDescriptor, Param};
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

/// What an NF module imports: `use emu_core::prelude::*;`.
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

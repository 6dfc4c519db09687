//! What an NF decides for a packet, and why a packet was dropped.

use core::fmt;

/// A port number. NetFPGA SUME has four front-panel ports; the CPU target takes up to 32.
pub type Port = u8;

/// The most ports any target supports: [`PortMask`] is 32 bits.
pub const MAX_PORTS: usize = 32;

/// A set of ports, bit `k` for port `k`.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PortMask(pub u32);

impl PortMask {
    /// No port.
    pub const EMPTY: PortMask = PortMask(0);

    /// Only `port` (empty when `port` ≥ 32).
    pub fn single(port: Port) -> PortMask {
        PortMask(1u32.checked_shl(port as u32).unwrap_or(0))
    }

    /// Ports `0..n`.
    pub fn all(n: usize) -> PortMask {
        PortMask(if n >= 32 { u32::MAX } else { (1u32 << n) - 1 })
    }

    /// True when `port` is in the set.
    pub fn contains(self, port: Port) -> bool {
        port < 32 && self.0 >> port & 1 == 1
    }

    /// True when no port is in the set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The ports in the set, in increasing order.
    #[inline]
    pub fn ports(self) -> Ports {
        Ports(self.0)
    }

    /// Number of ports in the set.
    #[inline]
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }
}

/// The ports of a [`PortMask`], lowest first; visits only the set bits.
#[derive(Debug, Clone)]
pub struct Ports(u32);

impl Iterator for Ports {
    type Item = Port;

    #[inline]
    fn next(&mut self) -> Option<Port> {
        if self.0 == 0 {
            return None;
        }
        let p = self.0.trailing_zeros() as Port;
        self.0 &= self.0 - 1;
        Some(p)
    }
}

impl fmt::Debug for PortMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.ports()).finish()
    }
}

/// The verdict of an NF on one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Out of one port.
    Forward(Port),
    /// Out of every port in the mask (the input port included if it is in the mask).
    Multicast(PortMask),
    /// Out of every port but the input port.
    Flood,
    /// Back out of the input port.
    Reply,
    /// Nowhere, for the reason given (counted per reason on every target).
    Drop(DropReason),
}

/// The result of resolving an [`Action`] against the port count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Send a copy out of each port of the mask (never empty).
    Send(PortMask),
    /// Drop the packet.
    Drop(DropReason),
}

impl Action {
    /// The ports the packet leaves by, on a device of `ports` ports, having come in on
    /// `in_port`. This is the one definition every target follows:
    ///
    /// - `Forward(p)` with `p` ≥ `ports` drops with [`DropReason::NoSuchPort`];
    /// - `Multicast(m)` keeps only existing ports, and drops with `NoSuchPort` when none is left;
    /// - `Flood` on a one-port device drops with [`DropReason::NoOtherPort`].
    #[inline]
    pub fn resolve(self, in_port: Port, ports: usize) -> Verdict {
        let existing = PortMask::all(ports);
        let mask = match self {
            Action::Drop(r) => return Verdict::Drop(r),
            Action::Forward(p) => PortMask::single(p),
            Action::Multicast(m) => m,
            Action::Reply => PortMask::single(in_port),
            Action::Flood => {
                let m = PortMask(existing.0 & !PortMask::single(in_port).0);
                return if m.is_empty() { Verdict::Drop(DropReason::NoOtherPort) } else { Verdict::Send(m) };
            }
        };
        let m = PortMask(mask.0 & existing.0);
        if m.is_empty() {
            Verdict::Drop(DropReason::NoSuchPort)
        } else {
            Verdict::Send(m)
        }
    }
}

macro_rules! reasons {
    ($( $(#[$m:meta])* $name:ident = $code:literal, $text:literal; )*) => {
        /// Why a packet was dropped. Every target counts drops per reason; the code is what
        /// the hardware carries.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum DropReason {
            $( $(#[$m])* $name = $code, )*
        }

        impl DropReason {
            /// Every reason, in code order.
            pub const ALL: &'static [DropReason] = &[$(DropReason::$name),*];

            /// A short snake_case name, as drop records and counters show it.
            pub fn name(self) -> &'static str {
                match self { $(DropReason::$name => $text,)* }
            }

            /// The reason with this code.
            pub fn from_code(code: u8) -> Option<DropReason> {
                match code { $($code => Some(DropReason::$name),)* _ => None }
            }
        }
    };
}

reasons! {
    /// A record with no bytes at all.
    Empty = 1, "empty";
    /// Shorter than an Ethernet header (14 bytes).
    Runt = 2, "runt";
    /// Longer than the configured maximum frame size.
    Oversize = 3, "oversize";
    /// The capture holds fewer bytes than the frame had on the wire (pcap snap length).
    Snapped = 4, "snapped";
    /// IPv4 with a version other than 4.
    Ipv4Version = 5, "ipv4_version";
    /// IPv4 with IHL below 5 or a header running past the frame.
    Ipv4HeaderLength = 6, "ipv4_header_length";
    /// IPv4 whose total length is below its header length or runs past the frame.
    Ipv4TotalLength = 7, "ipv4_total_length";
    /// The IPv4 header checksum is wrong.
    Ipv4Checksum = 8, "ipv4_checksum";
    /// The ICMP checksum is wrong.
    IcmpChecksum = 9, "icmp_checksum";
    /// The UDP or TCP checksum is wrong.
    TransportChecksum = 10, "transport_checksum";
    /// The destination is on the port the packet came in by.
    SamePort = 11, "same_port";
    /// The packet is not addressed to this NF.
    NotForUs = 12, "not_for_us";
    /// The NF does not handle this kind of packet.
    Unsupported = 13, "unsupported";
    /// A rule of the NF's policy says drop.
    Policy = 14, "policy";
    /// No entry for the destination.
    NoRoute = 15, "no_route";
    /// A table or queue the packet needed was full.
    TableFull = 16, "table_full";
    /// The verdict named only ports that do not exist.
    NoSuchPort = 17, "no_such_port";
    /// Flood on a device with no other port.
    NoOtherPort = 18, "no_other_port";
    /// Malformed in a way no other reason names.
    Malformed = 19, "malformed";
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn resolve_follows_the_rules() {
        assert_eq!(Action::Forward(2).resolve(0, 4), Verdict::Send(PortMask(0b0100)));
        assert_eq!(Action::Forward(4).resolve(0, 4), Verdict::Drop(DropReason::NoSuchPort));
        assert_eq!(Action::Flood.resolve(1, 4), Verdict::Send(PortMask(0b1101)));
        assert_eq!(Action::Flood.resolve(0, 1), Verdict::Drop(DropReason::NoOtherPort));
        assert_eq!(Action::Reply.resolve(3, 4), Verdict::Send(PortMask(0b1000)));
        assert_eq!(Action::Multicast(PortMask(0b110011)).resolve(0, 4), Verdict::Send(PortMask(0b0011)));
        assert_eq!(Action::Multicast(PortMask(0b110000)).resolve(0, 4), Verdict::Drop(DropReason::NoSuchPort));
        assert_eq!(Action::Drop(DropReason::Policy).resolve(0, 4), Verdict::Drop(DropReason::Policy));
        assert_eq!(Action::Flood.resolve(0, 32), Verdict::Send(PortMask(u32::MAX - 1)));
        assert_eq!(Action::Forward(200).resolve(0, 32), Verdict::Drop(DropReason::NoSuchPort));
        assert_eq!(PortMask(0x8000_0005).ports().collect::<Vec<_>>(), [0, 2, 31]);
        assert_eq!(PortMask(0x8000_0005).count(), 3);
    }

    #[test]
    fn reason_codes_round_trip() {
        for r in DropReason::ALL {
            assert_eq!(DropReason::from_code(*r as u8), Some(*r));
        }
        assert_eq!(DropReason::from_code(0), None);
        assert_eq!(DropReason::SamePort.to_string(), "same_port");
    }
}

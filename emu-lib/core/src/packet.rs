//! The packet an NF sees, its metadata, and the checks every target applies before the NF.

use crate::action::{DropReason, Port};
use crate::wire::{arp, ethernet, icmpv4, ipv4, tcp, udp, vlan};

/// A frame as an NF sees it: its bytes, its length and its header window.
///
/// The NF reads and writes the first `window` bytes; bytes past the window pass through
/// untouched. The rules, the same on every target:
///
/// - reads at or past `min(len, window)` return 0 ([`Packet::byte`], and every header view
///   this type hands out);
/// - writes at or past `min(len, window)` are dropped;
/// - [`Packet::set_len`] shortens the frame, or lengthens it with zero bytes up to the window
///   (to build a reply longer than the request).
pub struct Packet<'a> {
    data: &'a mut Vec<u8>,
    window: usize,
}

impl<'a> Packet<'a> {
    /// The packet over `data`, with a header window of `window` bytes.
    pub fn new(data: &'a mut Vec<u8>, window: usize) -> Packet<'a> {
        Packet { data, window }
    }

    /// Length of the frame in bytes.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True for a frame with no bytes.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Size of the header window in bytes.
    pub fn window_size(&self) -> usize {
        self.window
    }

    /// Shortens the frame to `len`, or lengthens it with zero bytes; the new length is capped
    /// at the window when it grows past the current length.
    pub fn set_len(&mut self, len: usize) {
        if len <= self.data.len() {
            self.data.truncate(len);
        } else {
            let cap = self.window.max(self.data.len());
            self.data.resize(len.min(cap), 0);
        }
    }

    /// The visible part of the frame: the first `min(len, window)` bytes.
    pub fn window(&self) -> &[u8] {
        let n = self.window.min(self.data.len());
        &self.data[..n]
    }

    /// The visible part of the frame, writable.
    pub fn window_mut(&mut self) -> &mut [u8] {
        let n = self.window.min(self.data.len());
        &mut self.data[..n]
    }

    /// Byte `i` of the window, 0 past it.
    pub fn byte(&self, i: usize) -> u8 {
        self.window().get(i).copied().unwrap_or(0)
    }

    /// Sets byte `i` of the window; dropped past it.
    pub fn set_byte(&mut self, i: usize, v: u8) {
        if let Some(b) = self.window_mut().get_mut(i) {
            *b = v;
        }
    }

    /// The window from byte `offset` on (empty past it).
    pub fn window_from(&self, offset: usize) -> &[u8] {
        self.window().get(offset..).unwrap_or(&[])
    }

    /// The window from byte `offset` on, writable (empty past it).
    pub fn window_from_mut(&mut self, offset: usize) -> &mut [u8] {
        self.window_mut().get_mut(offset..).unwrap_or(&mut [])
    }

    /// The one's-complement running sum ([`checksum::sum`](crate::wire::checksum::sum)) of
    /// frame bytes `[start, end)`, clipped to the frame, **including bytes past the window**.
    ///
    /// This is how an NF verifies a checksum that covers a payload longer than its window
    /// (an ICMP echo of 1400 bytes). In hardware, ingress accumulates the sum of the bytes past
    /// the window while it stores the frame, so the call costs the same for any `end` that is
    /// inside the window or the end of the frame; `start` must be even relative to the window
    /// end for that (it always is for IP payloads at even offsets).
    pub fn ones_sum(&self, start: usize, end: usize) -> u32 {
        let end = end.min(self.data.len());
        crate::wire::checksum::sum(self.data.get(start..end).unwrap_or(&[]))
    }

    /// Offset of the byte after the Ethernet header and any 802.1Q tags in the window, and the
    /// EtherType found there.
    pub fn l3(&self) -> (usize, u16) {
        let mut off = ethernet::HEADER_LEN;
        let mut ty = self.ethernet().ethertype();
        // Two tags at most (QinQ), so the bound is constant.
        for _ in 0..2 {
            if ty != 0x8100 {
                break;
            }
            ty = self.vlan_at(off).ethertype();
            off += vlan::HEADER_LEN;
        }
        (off, ty)
    }
}

macro_rules! views {
    ($( $name:ident, $name_mut:ident, $name_at:ident, $name_at_mut:ident => $module:ident, $default:expr; )*) => {
        impl<'a> Packet<'a> {
            $(
                #[doc = concat!("The `", stringify!($module), "` header at byte `offset` of the window.")]
                pub fn $name_at(&self, offset: usize) -> $module::Header<&[u8]> {
                    $module::Header::new_unchecked(self.window_from(offset))
                }

                #[doc = concat!("The `", stringify!($module), "` header at byte `offset` of the window, writable.")]
                pub fn $name_at_mut(&mut self, offset: usize) -> $module::Header<&mut [u8]> {
                    $module::Header::new_unchecked(self.window_from_mut(offset))
                }

                #[doc = concat!("The `", stringify!($module), "` header where an untagged Ethernet frame has it.")]
                pub fn $name(&self) -> $module::Header<&[u8]> {
                    self.$name_at($default)
                }

                #[doc = concat!("The `", stringify!($module), "` header where an untagged Ethernet frame has it, writable.")]
                pub fn $name_mut(&mut self) -> $module::Header<&mut [u8]> {
                    self.$name_at_mut($default)
                }
            )*
        }
    };
}

views! {
    ethernet, ethernet_mut, ethernet_at, ethernet_at_mut => ethernet, 0;
    vlan, vlan_mut, vlan_at, vlan_at_mut => vlan, ethernet::HEADER_LEN;
    arp, arp_mut, arp_at, arp_at_mut => arp, ethernet::HEADER_LEN;
    ipv4, ipv4_mut, ipv4_at, ipv4_at_mut => ipv4, ethernet::HEADER_LEN;
    icmpv4, icmpv4_mut, icmpv4_at, icmpv4_at_mut => icmpv4, ethernet::HEADER_LEN + ipv4::HEADER_LEN;
    udp, udp_mut, udp_at, udp_at_mut => udp, ethernet::HEADER_LEN + ipv4::HEADER_LEN;
    tcp, tcp_mut, tcp_at, tcp_at_mut => tcp, ethernet::HEADER_LEN + ipv4::HEADER_LEN;
}

/// A timestamp in nanoseconds since the Unix epoch.
pub type Timestamp = u64;

/// What the target tells the NF about a packet besides its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Meta {
    /// The port the packet came in by.
    pub in_port: Port,
    /// Length of the frame in bytes, as it arrived.
    pub len: u16,
    /// Arrival time.
    pub timestamp: Timestamp,
}

/// Ethernet's largest frame without jumbo frames, plus one 802.1Q tag (FCS not counted).
pub const DEFAULT_MAX_FRAME: usize = 1518;

/// The checks every target applies to a frame before the NF sees it, in this order:
///
/// 1. no bytes: [`DropReason::Empty`];
/// 2. shorter than 14 bytes: [`DropReason::Runt`];
/// 3. longer than `max_frame`: [`DropReason::Oversize`];
/// 4. an IPv4 packet (EtherType 0x0800, after up to two 802.1Q tags) whose version is not 4,
///    whose IHL is below 5 or whose header runs past the frame, or whose total length is below
///    the header length or runs past the frame: [`DropReason::Ipv4Version`],
///    [`DropReason::Ipv4HeaderLength`], [`DropReason::Ipv4TotalLength`].
///
/// Checksums are not checked here: that is an NF's decision.
#[inline]
pub fn check_frame(frame: &[u8], max_frame: usize) -> Result<(), DropReason> {
    if frame.is_empty() {
        return Err(DropReason::Empty);
    }
    if frame.len() < ethernet::HEADER_LEN {
        return Err(DropReason::Runt);
    }
    if frame.len() > max_frame {
        return Err(DropReason::Oversize);
    }
    let be16 = |at: usize| match frame.get(at..at + 2) {
        Some(&[hi, lo]) => u16::from_be_bytes([hi, lo]),
        _ => 0,
    };
    let mut off = ethernet::HEADER_LEN;
    let mut ty = be16(12);
    for _ in 0..2 {
        if ty != 0x8100 {
            break;
        }
        ty = be16(off + 2);
        off += vlan::HEADER_LEN;
    }
    if ty == 0x0800 {
        return ipv4::check(frame.get(off..).unwrap_or(&[])).map_err(|m| match m {
            ipv4::Malformed::Version => DropReason::Ipv4Version,
            ipv4::Malformed::Truncated | ipv4::Malformed::HeaderLength => DropReason::Ipv4HeaderLength,
            ipv4::Malformed::TotalLength => DropReason::Ipv4TotalLength,
        });
    }
    Ok(())
}

#[cfg(test)]
mod test {
    use super::*;

    fn frame(ethertype: u16, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0xff; 12];
        f.extend_from_slice(&ethertype.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    fn ipv4(ihl: u8, total: u16, len: usize) -> Vec<u8> {
        let mut p = vec![0u8; len];
        p[0] = 0x40 | ihl;
        p[2..4].copy_from_slice(&total.to_be_bytes());
        p
    }

    #[test]
    fn window_rules() {
        let mut data: Vec<u8> = (0..20).collect();
        let mut p = Packet::new(&mut data, 16);
        assert_eq!(p.byte(15), 15);
        assert_eq!(p.byte(16), 0, "past the window reads 0");
        p.set_byte(17, 0xaa);
        p.set_byte(3, 0xbb);
        assert_eq!(p.len(), 20);
        p.set_len(10);
        assert_eq!(p.byte(12), 0, "past the end reads 0");
        p.set_len(40);
        assert_eq!(p.len(), 16, "growth stops at the window");
        assert_eq!(&data[..], &[0, 1, 2, 0xbb, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn views_of_a_short_frame_read_zero() {
        let mut data = vec![1, 2, 3];
        let mut p = Packet::new(&mut data, 128);
        assert_eq!(p.ipv4().ttl(), 0);
        assert_eq!(p.tcp().window(), 0);
        p.udp_mut().set_dst_port(53); // dropped, no panic
        assert_eq!(data, [1, 2, 3]);
    }

    #[test]
    fn l3_skips_vlan_tags() {
        let mut data = frame(0x8100, &[0, 5, 0x81, 0x00, 0, 6, 0x08, 0x00, 0x45]);
        let p = Packet::new(&mut data, 128);
        assert_eq!(p.l3(), (22, 0x0800));
    }

    #[test]
    fn frame_checks() {
        assert_eq!(check_frame(&[], 1518), Err(DropReason::Empty));
        assert_eq!(check_frame(&[0; 13], 1518), Err(DropReason::Runt));
        assert_eq!(check_frame(&[0; 14], 1518), Ok(()));
        assert_eq!(check_frame(&[0; 1519], 1518), Err(DropReason::Oversize));
        assert_eq!(check_frame(&frame(0x0800, &ipv4(5, 20, 20)), 1518), Ok(()));
        assert_eq!(check_frame(&frame(0x0800, &ipv4(5, 20, 46)), 1518), Ok(()), "Ethernet padding is fine");
        assert_eq!(check_frame(&frame(0x0800, &ipv4(4, 20, 20)), 1518), Err(DropReason::Ipv4HeaderLength));
        assert_eq!(check_frame(&frame(0x0800, &ipv4(5, 21, 20)), 1518), Err(DropReason::Ipv4TotalLength));
        assert_eq!(check_frame(&frame(0x0800, &ipv4(6, 22, 24)), 1518), Err(DropReason::Ipv4TotalLength));
        assert_eq!(check_frame(&frame(0x0800, &ipv4(5, 20, 10)), 1518), Err(DropReason::Ipv4HeaderLength));
        let mut v6 = ipv4(5, 20, 20);
        v6[0] = 0x65;
        assert_eq!(check_frame(&frame(0x0800, &v6), 1518), Err(DropReason::Ipv4Version));
        let mut tagged = vec![0, 7, 0x08, 0x00];
        tagged.extend(ipv4(3, 20, 20));
        assert_eq!(check_frame(&frame(0x8100, &tagged), 1518), Err(DropReason::Ipv4HeaderLength));
        assert_eq!(check_frame(&frame(0x0806, &[1, 2]), 1518), Ok(()));
    }
}

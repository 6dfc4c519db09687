//! Source NAT with port translation (NAPT) for TCP, UDP and ICMP echo: a home router between
//! several inside ports and one outside port.
//!
//! - **Ports.** One port (`--outside-port`, default 3, the last) faces the outside network;
//!   the others are the inside LAN, switched among themselves as by `learning-switch` (a
//!   16-entry MAC table; group and unknown destinations flood to the other inside ports, never
//!   outside).
//! - **Addresses.** Inside hosts use `--inside-ip` (answered for ARP on the inside ports) as
//!   their default gateway and send to the NAT's MAC; the NAT is `--outside-ip` outside
//!   (answered for ARP on the outside port). Pings to either address are answered.
//! - **Inside → outside** (IPv4 to the NAT's MAC, not to one of its addresses): the flow —
//!   protocol, inside address and port, remote address and port (for ICMP echo the identifier
//!   is the port, the remote port 0) — is looked up in `flows`; a flow without a live mapping
//!   gets an outside port from the pool. The source becomes `--outside-ip` and that port, the
//!   TTL drops by one, and the IPv4, TCP, UDP and ICMP checksums are updated incrementally
//!   (RFC 1624; a UDP checksum of 0 stays 0). Every flow has its own outside port
//!   (endpoint-dependent mapping and filtering, RFC 4787: a "symmetric" NAT).
//! - **Outside → inside** (to `--outside-ip`): the destination port (the identifier of an
//!   echo reply) picks the mapping; it must exist, be live and name the packet's protocol,
//!   source address and source port, or the packet is dropped (`no_route`). The destination
//!   becomes the inside host's address and port, the frame goes to its MAC and port.
//! - **The pool** is `--port-range` (at most [`POOL_SLOTS`] ports): exactly a FIFO filled with
//!   the range in order at start — ports are handed out lowest first, then those returned in
//!   the order they came back (`fresh` counts the ones handed out from the range, `free_ports`
//!   holds the returned ones: no table has to be loaded at start).
//! - **Expiry.** A mapping is expired when `meta.timestamp − last use > timeout` (by protocol;
//!   TCP after a FIN or RST takes `--tcp-closing-timeout`). Any packet of the flow, either way,
//!   is a use. There is no background timer: an expired mapping is found and its port returned
//!   to the pool (1) when a packet of its flow arrives (outbound: a new port is allocated;
//!   inbound: dropped), and (2) by a sweep that checks one pool slot per translated packet, in
//!   turn, so every mapping is checked at least once every `port count` translated packets.
//!   A mapping evicted from `flows` (its hash set full) also returns its port.
//! - **Outside next hop**: the destination itself, or `--gateway` for destinations outside
//!   `--outside-ip`'s prefix. Its MAC comes from ARP: requests and replies for `--outside-ip`
//!   on the outside port are learned (`neighbours`); a packet whose next hop is not known yet
//!   is replaced by an ARP request for it (the packet is lost; TCP and ping retry).
//!
//! Dropped, with the reason: a wrong IPv4 header checksum (`ipv4_checksum`); fragments, IPv4
//! options, other protocols, ICMP other than echo, non-IPv4 frames to the NAT's MAC
//! (`unsupported`); a TCP or UDP header cut short, a TCP data offset below 5 or past the segment,
//! a UDP length below 8 or past the packet, an ICMP header cut short (`malformed`); TTL 1 or 0
//! (`policy`; no ICMP time-exceeded is sent); no port left in the pool (`table_full`); inbound
//! without a live mapping (`no_route`); outside frames not for the NAT (`not_for_us`).
#![deny(missing_docs)]

use emu::prelude::*;

pub use self::nat::*;

/// Ethernet + IPv4 + TCP up to its checksum (52 bytes) fit in the window.
pub const WINDOW: usize = self::nat::HLS_WINDOW;

/// The NAT as one NF module: `#[emu::nf]` checks it against the synthesizable subset, and the
/// HLS compiler builds its state and `process` as hardware.
#[emu::nf(ports = 4, window = 64)]
pub mod nat {
    use emu::prelude::*;
    use emu::wire::arp;

    /// Outside ports the pool can hold: the size of the mapping arrays.
    pub const POOL_SLOTS: usize = 1024;
    /// Slots of the flow table (inside flow → outside port): twice the pool, so a hash set
    /// rarely fills before the pool does.
    pub const FLOW_SLOTS: usize = 2048;
    /// Entries of the inside switch's MAC table.
    pub const MAC_TABLE_SIZE: usize = 16;
    /// Entries of the outside ARP cache.
    pub const NEIGHBOUR_SLOTS: usize = 16;

    const ICMP: u8 = 1;
    const TCP: u8 = 6;
    const UDP: u8 = 17;
    /// The transport header: untagged Ethernet, IPv4 without options.
    const L4: usize = 34;
    /// All four ports, as a mask.
    const ALL_PORTS: u32 = 0xf;
    /// A mapping's flow key, 104 bits: protocol [103:96], inside address [95:64], inside port
    /// [63:48], remote address [47:16], remote port [15:0].
    const KEY: u128 = 0xff_ffff_ffff_ffff_ffff_ffff_ffff;
    /// The key's protocol, remote address and remote port: what an inbound packet must match.
    const REMOTE: u128 = 0xff_0000_0000_0000_ffff_ffff_ffff;
    /// A mapping's slot is in use.
    const VALID: u128 = 1 << 104;
    /// A FIN or RST was seen: the TCP closing timeout applies.
    const CLOSING: u128 = 1 << 105;

    /// The NAT's state.
    #[derive(Debug)]
    pub struct Nat {
        /// The MAC of both sides.
        pub mac: Mac,
        /// The inside gateway address (ARP, ping).
        pub inside_ip: Ipv4Addr,
        /// The address inside hosts appear as outside.
        pub outside_ip: Ipv4Addr,
        /// The outside prefix's mask: destinations in it are on the outside link.
        pub outside_mask: u32,
        /// The outside next hop for other destinations; 0.0.0.0: every destination is on-link.
        pub gateway: Ipv4Addr,
        /// The port facing the outside.
        pub outside_port: Port,
        /// The pool's first port.
        pub port_min: u16,
        /// The pool's size, at most [`POOL_SLOTS`].
        pub port_count: u16,
        /// Timeouts in ns.
        pub tcp_timeout: u64,
        /// For TCP flows that have seen a FIN or RST.
        pub tcp_closing_timeout: u64,
        /// UDP.
        pub udp_timeout: u64,
        /// ICMP echo.
        pub icmp_timeout: u64,
        /// Inside flow key → outside port.
        pub flows: HashTable<u128, u16, FLOW_SLOTS, 4>,
        /// By pool slot (outside port − `port_min`): the flow key, `VALID` and `CLOSING`.
        pub mappings: Array<u128, POOL_SLOTS>,
        /// By pool slot: the last use, in ns.
        pub last_seen: Array<u64, POOL_SLOTS>,
        /// By pool slot: the inside host's MAC [47:0] and port [55:48].
        pub inside_hosts: Array<u64, POOL_SLOTS>,
        /// Ports handed out from the range so far.
        pub fresh: Register<u16>,
        /// Ports returned to the pool, oldest first.
        pub free_ports: Queue<u16, POOL_SLOTS>,
        /// The pool slot the next sweep step checks.
        pub sweep: Register<u16>,
        /// Inside switch: source MAC → the inside port it was last seen on.
        pub mac_table: Cam<Mac, Port, MAC_TABLE_SIZE>,
        /// Outside ARP cache: address → MAC.
        pub neighbours: Cam<Ipv4Addr, Mac, NEIGHBOUR_SLOTS>,
        /// Packets translated inside → outside.
        pub outbound: Counter,
        /// Packets translated outside → inside.
        pub inbound: Counter,
        /// Mappings created.
        pub allocations: Counter,
        /// Mappings found expired (their ports returned).
        pub expirations: Counter,
        /// Mappings evicted from a full hash set of `flows` (their ports returned).
        pub evictions: Counter,
        /// Outbound packets dropped for want of a free port.
        pub pool_empty: Counter,
        /// Inbound packets without a live mapping.
        pub no_mapping: Counter,
        /// Outbound packets replaced by an ARP request for the next hop.
        pub arp_requests: Counter,
        /// ARP replies sent (both sides).
        pub arp_replies: Counter,
        /// Echo replies sent for the NAT's own addresses.
        pub echo_replies: Counter,
        /// Frames flooded on the inside.
        pub floods: Counter,
    }

    impl Nat {
        /// A NAT for `outside_ip` with `mac`, every other option at its default.
        pub fn new(mac: Mac, inside_ip: Ipv4Addr, outside_ip: Ipv4Addr) -> Nat {
            Nat {
                mac,
                inside_ip,
                outside_ip,
                outside_mask: u32::MAX,
                gateway: Ipv4Addr(0),
                outside_port: 3,
                port_min: 61000,
                port_count: POOL_SLOTS as u16,
                tcp_timeout: 7440 * 1_000_000_000,
                tcp_closing_timeout: 240 * 1_000_000_000,
                udp_timeout: 120 * 1_000_000_000,
                icmp_timeout: 60 * 1_000_000_000,
                flows: HashTable::new(),
                mappings: Array::new(),
                last_seen: Array::new(),
                inside_hosts: Array::new(),
                fresh: Register::default(),
                free_ports: Queue::new(),
                sweep: Register::default(),
                mac_table: Cam::default(),
                neighbours: Cam::default(),
                outbound: Counter::default(),
                inbound: Counter::default(),
                allocations: Counter::default(),
                expirations: Counter::default(),
                evictions: Counter::default(),
                pool_empty: Counter::default(),
                no_mapping: Counter::default(),
                arp_requests: Counter::default(),
                arp_replies: Counter::default(),
                echo_replies: Counter::default(),
                floods: Counter::default(),
            }
        }

        fn switch(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let dst = pkt.ethernet().dst();
            if !dst.is_multicast() {
                if let Some(port) = self.mac_table.get(dst) {
                    if port == meta.in_port {
                        return Action::Drop(DropReason::SamePort);
                    }
                    return Action::Forward(port);
                }
            }
            let others = ALL_PORTS & !(1u32 << self.outside_port) & !(1u32 << meta.in_port);
            if others == 0 {
                return Action::Drop(DropReason::NoOtherPort);
            }
            self.floods.inc();
            Action::Multicast(PortMask(others))
        }

        fn arp_reply(&mut self, pkt: &mut Packet, me: Ipv4Addr) -> Action {
            let req = pkt.arp();
            let (asker_mac, asker_ip) = (req.sha(), req.spa());
            let mut eth = pkt.ethernet_mut();
            eth.set_dst(asker_mac);
            eth.set_src(self.mac);
            let mut rep = pkt.arp_mut();
            rep.set_oper(arp::OPER_REPLY);
            rep.set_sha(self.mac);
            rep.set_spa(me);
            rep.set_tha(asker_mac);
            rep.set_tpa(asker_ip);
            self.arp_replies.inc();
            Action::Reply
        }

        /// Replaces the packet by a request for `hop`'s MAC, out of the outside port.
        fn arp_request(&mut self, pkt: &mut Packet, hop: Ipv4Addr) -> Action {
            let mut eth = pkt.ethernet_mut();
            eth.set_dst(Mac::BROADCAST);
            eth.set_src(self.mac);
            eth.set_ethertype(0x0806);
            let mut req = pkt.arp_mut();
            req.set_htype(1);
            req.set_ptype(0x0800);
            req.set_hlen(6);
            req.set_plen(4);
            req.set_oper(arp::OPER_REQUEST);
            req.set_sha(self.mac);
            req.set_spa(self.outside_ip);
            req.set_tpa(hop);
            for i in 32..38 {
                pkt.set_byte(i, 0);
            }
            // The lost packet's bytes past the request are cut, not sent as padding.
            pkt.set_len(42);
            self.arp_requests.inc();
            Action::Forward(self.outside_port)
        }

        /// The checks every routed IPv4 packet passes: 0, `BAD_CHECKSUM` or `UNSUPPORTED`.
        fn routable(&mut self, pkt: &mut Packet) -> u8 {
            let ip = pkt.ipv4();
            if !ip.checksum_ok() {
                return BAD_CHECKSUM;
            }
            if ip.ihl().value() != 5 || ip.more_frags() || ip.frag_offset().value() != 0 {
                return UNSUPPORTED;
            }
            0
        }

        /// Answers an echo request to one of the NAT's addresses.
        fn echo(&mut self, pkt: &mut Packet) -> Action {
            let ip = pkt.ipv4();
            let (asker, me, ttl, total) = (ip.src(), ip.dst(), ip.ttl(), ip.total_len());
            if ip.protocol() != ICMP || pkt.byte(L4) != 8 {
                return Action::Drop(DropReason::NotForUs);
            }
            if total < 28 {
                return Action::Drop(DropReason::Malformed);
            }
            let sender = pkt.ethernet().src();
            let mut eth = pkt.ethernet_mut();
            eth.set_dst(sender);
            eth.set_src(self.mac);
            // Swapping the addresses leaves the header sum as it was; the TTL changes.
            let mut ip = pkt.ipv4_mut();
            ip.set_src(me);
            ip.set_dst(asker);
            ip.set_ttl(64);
            let c = checksum::update16(ip.checksum(), (ttl as u16) << 8 | ICMP as u16, 64 << 8 | ICMP as u16);
            ip.set_checksum(c);
            let old = (pkt.byte(L4 + 2) as u16) << 8 | pkt.byte(L4 + 3) as u16;
            let c = checksum::update16(old, 0x0800, 0x0000);
            pkt.set_byte(L4, 0);
            pkt.set_byte(L4 + 2, (c >> 8) as u8);
            pkt.set_byte(L4 + 3, c as u8);
            self.echo_replies.inc();
            Action::Reply
        }

        /// Of a TCP, UDP or ICMP echo packet of `seg_len` bytes: 0 when it can be translated,
        /// else `MALFORMED` or `UNSUPPORTED`; its source and destination ports (for an echo request
        /// the identifier and 0, for an echo reply 0 and the identifier).
        fn transport(&mut self, pkt: &mut Packet, proto: u8, seg_len: u16, outbound: bool) -> (u8, u16, u16) {
            let sport = (pkt.byte(L4) as u16) << 8 | pkt.byte(L4 + 1) as u16;
            let dport = (pkt.byte(L4 + 2) as u16) << 8 | pkt.byte(L4 + 3) as u16;
            let malformed = MALFORMED;
            if proto == TCP {
                let header_len = (pkt.byte(L4 + 12) >> 4) as u16 * 4;
                if seg_len < 20 || header_len < 20 || header_len > seg_len {
                    return (malformed, 0, 0);
                }
                return (0, sport, dport);
            }
            if proto == UDP {
                let udp_len = (pkt.byte(L4 + 4) as u16) << 8 | pkt.byte(L4 + 5) as u16;
                if seg_len < 8 || udp_len < 8 || udp_len > seg_len {
                    return (malformed, 0, 0);
                }
                return (0, sport, dport);
            }
            if proto == ICMP {
                if seg_len < 8 {
                    return (malformed, 0, 0);
                }
                let id = (pkt.byte(L4 + 4) as u16) << 8 | pkt.byte(L4 + 5) as u16;
                let kind = pkt.byte(L4);
                if outbound && kind == 8 {
                    return (0, id, 0);
                }
                if !outbound && kind == 0 {
                    return (0, 0, id);
                }
            }
            (UNSUPPORTED, 0, 0)
        }

        /// True when the mapping `entry`, last used at `seen`, has timed out at `now`.
        fn is_expired(&self, entry: u128, seen: u64, now: u64) -> bool {
            let proto = (entry >> 96) as u8;
            let tcp = if entry & CLOSING != 0 { self.tcp_closing_timeout } else { self.tcp_timeout };
            let other = if proto == UDP { self.udp_timeout } else { self.icmp_timeout };
            let timeout = if proto == TCP { tcp } else { other };
            (entry & VALID != 0) & (now > seen) & (now.wrapping_sub(seen) > timeout)
        }

        /// Empties pool slot `slot` (its mapping `entry`) and returns its port to the pool.
        fn release(&mut self, slot: u16, entry: u128) {
            self.flows.remove(entry & KEY);
            self.free_slot(slot);
        }

        fn free_slot(&mut self, slot: u16) {
            self.mappings.set(slot as usize, 0);
            // Never full: the pool's ports are handed out, fresh or in this queue.
            let _ = self.free_ports.push(self.port_min.wrapping_add(slot));
        }

        /// One step of the sweep: the next pool slot in turn, released if it has expired.
        fn sweep_one(&mut self, now: u64) {
            let slot = self.sweep.get();
            let next = slot.wrapping_add(1);
            self.sweep.set(if next >= self.port_count { 0 } else { next });
            let entry = self.mappings.get(slot as usize);
            let seen = self.last_seen.get(slot as usize);
            if self.is_expired(entry, seen, now) {
                self.expirations.inc();
                self.release(slot, entry);
            }
        }

        /// Rewrites the transport port (`at` 0: source, 2: destination; the identifier for
        /// ICMP) from `old_port` to `new_port` and the address the pseudo-header sums from
        /// `old_addr` to `new_addr`, updating the checksum.
        fn rewrite_l4(&mut self, pkt: &mut Packet, proto: u8, at: usize, old: (u32, u16), new: (u32, u16)) {
            let (old_addr, old_port) = old;
            let (new_addr, new_port) = new;
            let mut port_at = L4 + at;
            let mut sum_at = L4 + 16;
            if proto == UDP {
                sum_at = L4 + 6;
            }
            if proto == ICMP {
                port_at = L4 + 4;
                sum_at = L4 + 2;
            }
            pkt.set_byte(port_at, (new_port >> 8) as u8);
            pkt.set_byte(port_at + 1, new_port as u8);
            let sum = (pkt.byte(sum_at) as u16) << 8 | pkt.byte(sum_at + 1) as u16;
            let c = checksum::update16(sum, old_port, new_port);
            let c = if proto == ICMP { c } else { checksum::update32(c, old_addr, new_addr) };
            let udp = proto == UDP;
            // UDP: 0 means no checksum and stays 0; a sum of 0 is sent as 0xffff (RFC 768).
            let c = if udp & (sum == 0) { 0 } else if udp & (c == 0) { 0xffff } else { c };
            pkt.set_byte(sum_at, (c >> 8) as u8);
            pkt.set_byte(sum_at + 1, c as u8);
        }

        /// The IPv4 header's address at byte `at` (12: source, 16: destination) becomes `new`,
        /// the TTL drops by one.
        fn rewrite_ip(&mut self, pkt: &mut Packet, at: usize, old: Ipv4Addr, new: Ipv4Addr) {
            let ip = pkt.ipv4();
            let (ttl, proto) = (ip.ttl(), ip.protocol());
            let mut ip = pkt.ipv4_mut();
            if at == 12 {
                ip.set_src(new);
            } else {
                ip.set_dst(new);
            }
            ip.set_ttl(ttl - 1);
            let c = checksum::update32(ip.checksum(), old.0, new.0);
            let c = checksum::update16(c, (ttl as u16) << 8 | proto as u16, ((ttl - 1) as u16) << 8 | proto as u16);
            ip.set_checksum(c);
        }

        /// The closing flag after a segment with `flags` (a SYN without ACK starts afresh).
        fn closing_after(entry: u128, proto: u8, flags: u8) -> u128 {
            let ends = flags & 0x05 != 0;
            let opens = flags & 0x12 == 0x02;
            let was = entry & CLOSING != 0;
            if (proto == TCP) & (ends | (was & !opens)) {
                CLOSING
            } else {
                0
            }
        }

        fn from_inside(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let eth = pkt.ethernet();
            let (dst, src, ethertype) = (eth.dst(), eth.src(), eth.ethertype());
            if !src.is_multicast() {
                self.mac_table.insert(src, meta.in_port);
            }
            if ethertype == 0x0806 {
                let req = pkt.arp();
                if req.is_ethernet_ipv4() && req.oper() == arp::OPER_REQUEST && req.tpa() == self.inside_ip {
                    return self.arp_reply(pkt, self.inside_ip);
                }
                return self.switch(pkt, meta);
            }
            if dst != self.mac {
                return self.switch(pkt, meta);
            }
            if ethertype != 0x0800 {
                return Action::Drop(DropReason::Unsupported);
            }
            let routable = self.routable(pkt);
            if routable == BAD_CHECKSUM {
                return Action::Drop(DropReason::Ipv4Checksum);
            }
            if routable == UNSUPPORTED {
                return Action::Drop(DropReason::Unsupported);
            }
            let ip = pkt.ipv4();
            let (src_ip, dst_ip, proto, ttl, total) = (ip.src(), ip.dst(), ip.protocol(), ip.ttl(), ip.total_len());
            if dst_ip == self.inside_ip || dst_ip == self.outside_ip {
                return self.echo(pkt);
            }
            let (status, sport, dport) = self.transport(pkt, proto, total - 20, true);
            if status == MALFORMED {
                return Action::Drop(DropReason::Malformed);
            }
            if status == UNSUPPORTED {
                return Action::Drop(DropReason::Unsupported);
            }
            if ttl <= 1 {
                return Action::Drop(DropReason::Policy);
            }
            let now = meta.timestamp;
            self.sweep_one(now);
            let mut hop = dst_ip;
            if self.gateway.0 != 0 && dst_ip.0 & self.outside_mask != self.outside_ip.0 & self.outside_mask {
                hop = self.gateway;
            }
            let Some(hop_mac) = self.neighbours.get(hop) else {
                return self.arp_request(pkt, hop);
            };
            let key = (proto as u128) << 96
                | (src_ip.0 as u128) << 64
                | (sport as u128) << 48
                | (dst_ip.0 as u128) << 16
                | dport as u128;
            let mut port = 0u16;
            let mut entry = 0u128;
            let mut found = false;
            if let Some(p) = self.flows.get(key) {
                let slot = p.wrapping_sub(self.port_min);
                let e = self.mappings.get(slot as usize);
                if self.is_expired(e, self.last_seen.get(slot as usize), now) {
                    self.expirations.inc();
                    self.release(slot, e);
                } else {
                    port = p;
                    entry = e;
                    found = true;
                }
            }
            if !found {
                let fresh = self.fresh.get();
                if fresh < self.port_count {
                    port = self.port_min.wrapping_add(fresh);
                    self.fresh.set(fresh + 1);
                } else {
                    match self.free_ports.pop() {
                        Some(p) => port = p,
                        None => {
                            self.pool_empty.inc();
                            return Action::Drop(DropReason::TableFull);
                        }
                    }
                }
                if let Some((_, victim)) = self.flows.insert(key, port) {
                    self.evictions.inc();
                    self.free_slot(victim.wrapping_sub(self.port_min));
                }
                self.allocations.inc();
            }
            let slot = port.wrapping_sub(self.port_min) as usize;
            let flags = pkt.byte(L4 + 13);
            self.mappings.set(slot, key | VALID | Nat::closing_after(entry, proto, flags));
            self.last_seen.set(slot, now);
            self.inside_hosts.set(slot, src.0.value() | (meta.in_port as u64) << 48);

            self.rewrite_ip(pkt, 12, src_ip, self.outside_ip);
            self.rewrite_l4(pkt, proto, 0, (src_ip.0, sport), (self.outside_ip.0, port));
            let mut eth = pkt.ethernet_mut();
            eth.set_src(self.mac);
            eth.set_dst(hop_mac);
            self.outbound.inc();
            Action::Forward(self.outside_port)
        }

        fn from_outside(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let eth = pkt.ethernet();
            let (dst, ethertype) = (eth.dst(), eth.ethertype());
            if ethertype == 0x0806 {
                let a = pkt.arp();
                if !a.is_ethernet_ipv4() || a.tpa() != self.outside_ip {
                    return Action::Drop(DropReason::NotForUs);
                }
                // RFC 826: whoever asks for or answers the NAT is a neighbour worth knowing.
                self.neighbours.insert(a.spa(), a.sha());
                if a.oper() == arp::OPER_REQUEST {
                    return self.arp_reply(pkt, self.outside_ip);
                }
                return Action::Drop(DropReason::NotForUs);
            }
            if dst != self.mac || ethertype != 0x0800 || pkt.ipv4().dst() != self.outside_ip {
                return Action::Drop(DropReason::NotForUs);
            }
            let routable = self.routable(pkt);
            if routable == BAD_CHECKSUM {
                return Action::Drop(DropReason::Ipv4Checksum);
            }
            if routable == UNSUPPORTED {
                return Action::Drop(DropReason::Unsupported);
            }
            let ip = pkt.ipv4();
            let (src_ip, proto, ttl, total) = (ip.src(), ip.protocol(), ip.ttl(), ip.total_len());
            if proto == ICMP && pkt.byte(L4) == 8 {
                return self.echo(pkt);
            }
            let (status, sport, dport) = self.transport(pkt, proto, total - 20, false);
            if status == MALFORMED {
                return Action::Drop(DropReason::Malformed);
            }
            if status == UNSUPPORTED {
                return Action::Drop(DropReason::Unsupported);
            }
            if ttl <= 1 {
                return Action::Drop(DropReason::Policy);
            }
            let now = meta.timestamp;
            self.sweep_one(now);
            let slot = dport.wrapping_sub(self.port_min);
            if slot >= self.port_count {
                self.no_mapping.inc();
                return Action::Drop(DropReason::NoRoute);
            }
            let entry = self.mappings.get(slot as usize);
            let remote = (proto as u128) << 96 | (src_ip.0 as u128) << 16 | sport as u128;
            if entry & VALID == 0 || entry & REMOTE != remote {
                self.no_mapping.inc();
                return Action::Drop(DropReason::NoRoute);
            }
            if self.is_expired(entry, self.last_seen.get(slot as usize), now) {
                self.expirations.inc();
                self.release(slot, entry);
                self.no_mapping.inc();
                return Action::Drop(DropReason::NoRoute);
            }
            let flags = pkt.byte(L4 + 13);
            self.mappings.set(slot as usize, entry & KEY | VALID | Nat::closing_after(entry, proto, flags));
            self.last_seen.set(slot as usize, now);
            let inside_ip =
                Ipv4Addr::new((entry >> 88) as u8, (entry >> 80) as u8, (entry >> 72) as u8, (entry >> 64) as u8);
            let inside_port = (entry >> 48) as u16;
            let host = self.inside_hosts.get(slot as usize);

            self.rewrite_ip(pkt, 16, self.outside_ip, inside_ip);
            self.rewrite_l4(pkt, proto, 2, (self.outside_ip.0, dport), (inside_ip.0, inside_port));
            pkt.ethernet_mut().set_src(self.mac);
            pkt.set_byte(0, (host >> 40) as u8);
            pkt.set_byte(1, (host >> 32) as u8);
            pkt.set_byte(2, (host >> 24) as u8);
            pkt.set_byte(3, (host >> 16) as u8);
            pkt.set_byte(4, (host >> 8) as u8);
            pkt.set_byte(5, host as u8);
            self.inbound.inc();
            Action::Forward((host >> 48) as u8)
        }
    }

    // Why a check failed; each becomes a drop with a constant reason, so the circuit has one
    // exit per reason instead of a choice among all of them.
    const MALFORMED: u8 = 1;
    const UNSUPPORTED: u8 = 2;
    const BAD_CHECKSUM: u8 = 3;

    impl NetworkFunction for Nat {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            if meta.in_port == self.outside_port {
                self.from_outside(pkt, meta)
            } else {
                self.from_inside(pkt, meta)
            }
        }
    }
}

/// Reads a pool range `LO-HI` (inclusive): its first port and size.
pub fn parse_port_range(text: &str) -> Result<(u16, u16), String> {
    let port = |s: &str| {
        s.trim().parse::<u16>().map_err(|_| format!("`{s}` is not a port (1 to 65535); write e.g. `61000-62023`"))
    };
    let Some((lo, hi)) = text.split_once('-') else {
        return Err(format!("`{text}` is not a range; write the first and last port, e.g. `61000-62023`"));
    };
    let (lo, hi) = (port(lo)?, port(hi)?);
    if lo == 0 || lo > hi {
        return Err(format!("`{text}` is empty or starts at 0; write the lower port first, from 1 (`{hi}-{lo}`)"));
    }
    let size = hi as usize - lo as usize + 1;
    if size > POOL_SLOTS {
        return Err(format!(
            "`{text}` holds {size} ports and the pool has {POOL_SLOTS} slots; give at most {POOL_SLOTS} \
             (e.g. `{lo}-{}`)",
            lo as usize + POOL_SLOTS - 1
        ));
    }
    Ok((lo, size as u16))
}

/// Reads `ADDR` or `ADDR/LEN` (LEN 0 to 32, default 32): the address and its prefix's mask.
pub fn parse_prefix(text: &str) -> Result<(Ipv4Addr, u32), String> {
    let (addr, len) = match text.split_once('/') {
        Some((a, l)) => (a, l.parse::<u32>().ok().filter(|l| *l <= 32)),
        None => (text, Some(32)),
    };
    let Some(len) = len else {
        return Err(format!("`{text}`: the prefix length is 0 to 32; write e.g. 203.0.113.1/24"));
    };
    let addr: Ipv4Addr = addr.parse().map_err(|e| format!("{e}; write e.g. 203.0.113.1/24"))?;
    Ok((addr, if len == 0 { 0 } else { u32::MAX << (32 - len) }))
}

const MAC: Param = Param { name: "mac", help: "the NAT's MAC, inside and outside", default: Some("02:00:00:00:00:01") };
const INSIDE_IP: Param =
    Param { name: "inside-ip", help: "the inside gateway address (hosts' default route)", default: Some("10.0.0.1") };
const OUTSIDE_IP: Param = Param {
    name: "outside-ip",
    help: "the outside address inside hosts appear as, with its prefix length, e.g. 203.0.113.1/24",
    default: None,
};
const GATEWAY: Param = Param {
    name: "gateway",
    help: "outside next hop for destinations outside --outside-ip's prefix (empty: all on-link)",
    default: Some(""),
};
const OUTSIDE_PORT: Param = Param {
    name: "outside-port",
    help: "the port facing the outside (0 to 3); the others are inside",
    default: Some("3"),
};
const PORT_RANGE: Param = Param {
    name: "port-range",
    help: "the pool of outside ports (and echo identifiers), LO-HI, at most 1024",
    default: Some("61000-62023"),
};
const TCP_TIMEOUT: Param =
    Param { name: "tcp-timeout", help: "seconds an idle TCP mapping lives (RFC 5382: 7440)", default: Some("7440") };
const TCP_CLOSING_TIMEOUT: Param = Param {
    name: "tcp-closing-timeout",
    help: "seconds an idle TCP mapping lives after a FIN or RST",
    default: Some("240"),
};
const UDP_TIMEOUT: Param = Param {
    name: "udp-timeout",
    help: "seconds an idle UDP mapping lives (RFC 4787: at least 120)",
    default: Some("120"),
};
const ICMP_TIMEOUT: Param =
    Param { name: "icmp-timeout", help: "seconds an idle ICMP echo mapping lives (RFC 5508: 60)", default: Some("60") };

/// The longest timeout, in seconds (10 days).
pub const MAX_TIMEOUT_S: u64 = 864_000;

fn seconds(config: &Config, param: &Param) -> Result<u64, ConfigError> {
    let raw = config.raw(param)?;
    match raw.parse::<u64>() {
        Ok(s) if (1..=MAX_TIMEOUT_S).contains(&s) => Ok(s * 1_000_000_000),
        _ => Err(ConfigError(format!(
            "--{} {raw}: give whole seconds from 1 to {MAX_TIMEOUT_S}, e.g. --{} 120",
            param.name, param.name
        ))),
    }
}

/// The NAT `config` describes.
pub fn build(config: &Config) -> Result<Nat, ConfigError> {
    let raw = config.raw(&OUTSIDE_IP)?;
    let (outside_ip, mask) = parse_prefix(raw).map_err(|e| ConfigError(format!("--outside-ip {raw}: {e}")))?;
    let mut nf = Nat::new(config.get(&MAC)?, config.get(&INSIDE_IP)?, outside_ip);
    nf.outside_mask = mask;
    let gw = config.raw(&GATEWAY)?;
    if !gw.is_empty() {
        nf.gateway = config.get(&GATEWAY)?;
    }
    let port = config.raw(&OUTSIDE_PORT)?;
    nf.outside_port = match port.parse::<Port>() {
        Ok(p) if (p as usize) < HLS_PORTS => p,
        _ => return Err(ConfigError(format!("--outside-port {port}: give a port from 0 to {}", HLS_PORTS - 1))),
    };
    let range = config.raw(&PORT_RANGE)?;
    (nf.port_min, nf.port_count) = parse_port_range(range).map_err(|e| ConfigError(format!("--port-range {e}")))?;
    nf.tcp_timeout = seconds(config, &TCP_TIMEOUT)?;
    nf.tcp_closing_timeout = seconds(config, &TCP_CLOSING_TIMEOUT)?;
    nf.udp_timeout = seconds(config, &UDP_TIMEOUT)?;
    nf.icmp_timeout = seconds(config, &ICMP_TIMEOUT)?;
    Ok(nf)
}

/// The NAT as the CPU target runs it: at the end of a run it prints its counters to stderr.
pub struct Reporting(pub Nat);

impl Reporting {
    /// The counters, one a line.
    pub fn summary(&self) -> String {
        let n = &self.0;
        let live = n.fresh.get() as usize - n.free_ports.len();
        format!(
            "nat: {} out, {} in; {} mappings made, {} expired, {} evicted, {} live; {} no mapping, {} pool empty; \
             {} ARP requests, {} ARP replies, {} echo replies\n",
            n.outbound.get(),
            n.inbound.get(),
            n.allocations.get(),
            n.expirations.get(),
            n.evictions.get(),
            live,
            n.no_mapping.get(),
            n.pool_empty.get(),
            n.arp_requests.get(),
            n.arp_replies.get(),
            n.echo_replies.get()
        )
    }
}

impl NetworkFunction for Reporting {
    #[inline]
    fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
        self.0.process(pkt, meta)
    }

    /// The debugger sees the NF's state.
    fn elements(&mut self) -> Vec<(&'static str, &mut dyn emu::state::Element)> {
        self.0.elements()
    }

    fn probes(&self) -> Option<&'static std::thread::LocalKey<emu::probe::Probes>> {
        self.0.probes()
    }

    /// Printed by `emu run` when the run ends (not on drop: the tools also build an NF only
    /// to read the state its constructor leaves).
    fn summary(&self) -> String {
        Reporting::summary(self)
    }
}


/// How the tools find and build the NAT.
pub const DESCRIPTOR: NfDescriptor = NfDescriptor {
    name: "nat",
    summary: "source NAT (TCP, UDP, ICMP echo) from inside ports to one outside port (--outside-ip ADDR/LEN)",
    ports: HLS_PORTS,
    window: WINDOW,
    params: &[
        OUTSIDE_IP,
        INSIDE_IP,
        MAC,
        GATEWAY,
        OUTSIDE_PORT,
        PORT_RANGE,
        TCP_TIMEOUT,
        TCP_CLOSING_TIMEOUT,
        UDP_TIMEOUT,
        ICMP_TIMEOUT,
    ],
    build: |c| Ok(Box::new(Reporting(build(c)?))),
    hls_source: Some(HLS_SOURCE),
};

#[cfg(test)]
mod test;

//! An NF using `Lru`, `HashTable`, `Tcam` and `Queue` through their per-packet methods is in the
//! subset: it compiles, runs on the CPU with the elements' semantics, and carries its source.

#[emu::nf(ports = 4, window = 64)]
pub mod gateway {
    use emu::prelude::*;

    /// Routes by longest prefix, remembers recent neighbours, counts bytes per flow and keeps
    /// the last few sources.
    #[derive(Default)]
    pub struct Gateway {
        /// IPv4 address → MAC of the neighbours seen last.
        pub neighbours: Lru<Ipv4Addr, Mac, 4>,
        /// Flow (source ^ destination) → bytes seen, wrapping.
        pub flows: HashTable<u32, u16, 64, 4>,
        /// Prefix rules: destination → port; the lowest slot wins.
        pub routes: Tcam<Ipv4Addr, Port, 8>,
        /// The sources of the last frames, oldest first.
        pub recent: Queue<Ipv4Addr, 2>,
    }

    impl NetworkFunction for Gateway {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let ip = pkt.ipv4();
            let (src, dst, len) = (ip.src(), ip.dst(), ip.total_len());
            if meta.in_port == 3 {
                // The uplink installs a /24 route to the port in byte 42 of the frame.
                let ok = self.routes.set(0, dst, Ipv4Addr::new(255, 255, 255, 0), pkt.byte(42) & 3);
                return if ok { Action::Reply } else { Action::Drop(DropReason::Policy) };
            }
            self.neighbours.insert(src, pkt.ethernet().src());
            let flow = src.0 ^ dst.0;
            let bytes = match self.flows.get(flow) {
                Some(n) => n.wrapping_add(len),
                None => len,
            };
            if let Some((_, evicted)) = self.flows.insert(flow, bytes) {
                pkt.set_byte(44, evicted as u8);
            }
            if self.recent.push(src).is_err() {
                let _ = self.recent.pop();
                let _ = self.recent.push(src);
            }
            let Some(port) = self.routes.lookup(dst) else {
                return Action::Drop(DropReason::NoRoute);
            };
            match self.neighbours.get(dst) {
                Some(mac) => {
                    pkt.ethernet_mut().set_dst(mac);
                    Action::Forward(port)
                }
                None => Action::Multicast(PortMask::single(port)),
            }
        }
    }
}

use emu::prelude::*;
use gateway::Gateway;

fn frame(src: [u8; 4], dst: [u8; 4], port: u8) -> Vec<u8> {
    let mut f = vec![0u8; 60];
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, src[3]]);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f[14] = 0x45;
    f[16..18].copy_from_slice(&[0, 46]);
    f[26..30].copy_from_slice(&src);
    f[30..34].copy_from_slice(&dst);
    f[42] = port;
    f
}

fn main() {
    let mut nf = Gateway::default();
    let meta = |in_port| Meta { in_port, len: 60, timestamp: 0 };
    let run = |nf: &mut Gateway, f: &mut Vec<u8>, port| nf.process(&mut Packet::new(f, 64), &meta(port));
    // No route yet.
    assert_eq!(run(&mut nf, &mut frame([10, 0, 0, 1], [10, 0, 1, 2], 2), 0), Action::Drop(DropReason::NoRoute));
    // The uplink installs 10.0.1.0/24 → port 2.
    assert_eq!(run(&mut nf, &mut frame([10, 0, 0, 9], [10, 0, 1, 2], 2), 3), Action::Reply);
    // 10.0.1.2 is not a known neighbour: multicast to the route's port.
    let to_2 = Action::Multicast(PortMask::single(2));
    assert_eq!(run(&mut nf, &mut frame([10, 0, 0, 1], [10, 0, 1, 7], 0), 0), to_2);
    // Once 10.0.1.7 has sent a frame, frames to it are forwarded to its MAC.
    run(&mut nf, &mut frame([10, 0, 1, 7], [10, 0, 1, 1], 0), 2);
    let mut f = frame([10, 0, 0, 1], [10, 0, 1, 7], 0);
    assert_eq!(run(&mut nf, &mut f, 0), Action::Forward(2));
    assert_eq!(f[0..6], [2, 0, 0, 0, 0, 7]);
    assert_eq!(nf.flows.len(), 3);
    assert_eq!(nf.recent.iter().collect::<Vec<_>>(), ["10.0.1.7".parse().unwrap(), "10.0.0.1".parse().unwrap()]);
    assert!(gateway::HLS_SOURCE.contains("Tcam") && gateway::HLS_SOURCE.contains("Queue"));
}

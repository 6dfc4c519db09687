//! A learning Ethernet switch with the NetFPGA reference switch's semantics.
//!
//! For every frame, in this order:
//! 1. learn: a unicast source MAC is (re)bound to the input port in `mac_table` (a 16-entry
//!    fully associative CAM; when it is full the oldest binding is replaced, see [`emu::Cam`]);
//! 2. a broadcast or multicast destination floods (every port but the input port);
//! 3. a known destination is forwarded to its port — or dropped (`same_port`) when that port
//!    is the input port;
//! 4. an unknown destination floods.
#![deny(missing_docs)]

use emu::prelude::*;

pub use self::learning_switch::*;

/// The switch as one NF module: `#[emu::nf]` checks it against the synthesizable subset, and
/// the HLS compiler builds its state and `process` as hardware.
#[emu::nf(ports = 4, window = 64)]
pub mod learning_switch {
    use emu::prelude::*;

    /// Entries in the MAC table.
    pub const MAC_TABLE_SIZE: usize = 16;

    /// The switch's state.
    #[derive(Default, Debug)]
    pub struct LearningSwitch {
        /// Source MAC → the port it was last seen on.
        pub mac_table: Cam<Mac, Port, MAC_TABLE_SIZE>,
        /// Frames flooded because the destination was broadcast, multicast or unknown.
        pub floods: Counter,
    }

    impl NetworkFunction for LearningSwitch {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let eth = pkt.ethernet();
            let (src, dst) = (eth.src(), eth.dst());
            if !src.is_multicast() {
                self.mac_table.insert(src, meta.in_port);
            }
            if dst.is_multicast() {
                self.floods.inc();
                return Action::Flood;
            }
            match self.mac_table.get(dst) {
                Some(port) if port == meta.in_port => Action::Drop(DropReason::SamePort),
                Some(port) => Action::Forward(port),
                None => {
                    self.floods.inc();
                    Action::Flood
                }
            }
        }
    }
}

/// How the tools find and build the switch.
pub const DESCRIPTOR: NfDescriptor = NfDescriptor {
    name: "learning-switch",
    summary: "Ethernet learning switch (NetFPGA reference semantics)",
    ports: HLS_PORTS,
    window: HLS_WINDOW,
    params: &[],
    build: |_| Ok(Box::new(LearningSwitch::default())),
    hls_source: Some(HLS_SOURCE),
};

#[cfg(test)]
mod test {
    use super::*;

    fn frame(dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
        let mut f = dst.to_vec();
        f.extend_from_slice(&src);
        f.extend_from_slice(&[0x88, 0xb5]);
        f.resize(60, 0);
        f
    }

    fn run(sw: &mut LearningSwitch, dst: u8, src: u8, in_port: Port) -> Action {
        let mac = |b: u8| if b == 0xff { [0xff; 6] } else { [2, 0, 0, 0, 0, b] };
        let mut f = frame(mac(dst), mac(src));
        let meta = Meta { in_port, len: 60, timestamp: 0 };
        sw.process(&mut Packet::new(&mut f, 64), &meta)
    }

    #[test]
    fn learns_floods_forwards_and_drops() {
        let mut sw = LearningSwitch::default();
        assert_eq!(run(&mut sw, 2, 1, 0), Action::Flood, "unknown destination");
        assert_eq!(run(&mut sw, 1, 2, 1), Action::Forward(0), "host 1 was learned on port 0");
        assert_eq!(run(&mut sw, 2, 1, 0), Action::Forward(1));
        assert_eq!(run(&mut sw, 0xff, 1, 0), Action::Flood, "broadcast");
        assert_eq!(run(&mut sw, 1, 3, 0), Action::Drop(DropReason::SamePort));
        assert_eq!(run(&mut sw, 2, 1, 3), Action::Forward(1), "host 1 moved to port 3");
        assert_eq!(sw.mac_table.get(Mac::from_bytes([2, 0, 0, 0, 0, 1])), Some(3));
        assert_eq!(sw.floods.get(), 2);
    }

    #[test]
    fn multicast_sources_are_not_learned() {
        let mut sw = LearningSwitch::default();
        let mut f = frame([2, 0, 0, 0, 0, 9], [1, 0, 0x5e, 0, 0, 1]);
        let meta = Meta { in_port: 2, len: 60, timestamp: 0 };
        sw.process(&mut Packet::new(&mut f, 64), &meta);
        assert_eq!(sw.mac_table.len(), 0);
    }
}

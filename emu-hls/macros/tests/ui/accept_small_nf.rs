//! A small NF in the subset compiles, runs on the CPU, and carries its source for `emu hls`.

#[emu::nf(ports = 4, window = 64)]
pub mod port_guard {
    use emu::prelude::*;

    /// Frames longer than this are dropped.
    pub const MAX_LEN: u16 = 1500;

    /// Which ports may talk to which.
    #[derive(Default)]
    pub struct PortGuard {
        /// Source MAC → port it was learned on.
        pub macs: Cam<Mac, Port, 16>,
        /// Frames dropped by policy.
        pub dropped: Counter,
    }

    impl PortGuard {
        fn allowed(&self, from: Port, to: Port) -> bool {
            from ^ to != 1
        }
    }

    fn zeros(pkt: &Packet) -> u8 {
        let mut n = 0u8;
        for i in 0..6 {
            if pkt.byte(i) == 0 {
                n += 1;
            }
        }
        n
    }

    impl NetworkFunction for PortGuard {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            if meta.len > MAX_LEN || zeros(pkt) == 6 {
                self.dropped.inc();
                return Action::Drop(DropReason::Policy);
            }
            let eth = pkt.ethernet();
            let (src, dst) = (eth.src(), eth.dst());
            self.macs.insert(src, meta.in_port);
            match self.macs.get(dst) {
                Some(p) if !self.allowed(meta.in_port, p) => {
                    self.dropped.inc();
                    Action::Drop(DropReason::Policy)
                }
                Some(p) => Action::Forward(p),
                None => Action::Flood,
            }
        }
    }
}

use emu::prelude::*;
use port_guard::PortGuard;

fn main() {
    let mut nf = PortGuard::default();
    let mut frame = vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x88, 0xb5];
    frame.resize(60, 0);
    let meta = Meta { in_port: 0, len: 60, timestamp: 0 };
    assert_eq!(nf.process(&mut Packet::new(&mut frame, 64), &meta), Action::Flood);
    assert_eq!(port_guard::HLS_PORTS, 4);
    assert_eq!(port_guard::HLS_WINDOW, 64);
    assert!(port_guard::HLS_SOURCE.starts_with("pub mod port_guard"));
    assert!(port_guard::HLS_SOURCE.contains("PortGuard"));
}

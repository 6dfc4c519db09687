//! Recursion: a helper that calls itself.
#![allow(dead_code, unused)]

#[emu::nf(ports = 4, window = 64)]
mod nf {
    use emu::prelude::*;

    pub struct Nf {
        pub macs: Cam<Mac, Port, 16>,
        pub floods: Counter,
    }

    impl NetworkFunction for Nf {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let hops = self.depth(pkt.ipv4().ttl());
            Action::Forward(hops & 3)
        }
    }

    impl Nf {
        fn depth(&self, n: u8) -> u8 {
            if n == 0 { 0 } else { self.depth(n - 1) + 1 }
        }
    }
}

fn main() {}

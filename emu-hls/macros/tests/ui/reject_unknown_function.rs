//! A function the compiler does not know.
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
            let port = std::cmp::max(meta.in_port, 1);
            self.macs.insert(pkt.ethernet().src(), port);
            Action::Flood
        }
    }
}

fn main() {}

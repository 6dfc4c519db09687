//! A `while` loop, whose bound is not a constant.
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
            let mut i = 14;
            while i < pkt.len() {
                i += 1;
            }
            Action::Flood
        }
    }
}

fn main() {}

//! Probes where no packet passes them, and outside an NF module.
#![allow(dead_code, unused)]

#[emu::nf(ports = 4, window = 64)]
mod nf {
    use emu::prelude::*;

    #[derive(Default)]
    pub struct Nf {
        pub floods: Counter,
    }

    impl Nf {
        pub fn configure(&mut self) {
            emu::count!(configured);
        }
    }

    impl NetworkFunction for Nf {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            emu::probe!(port, meta.in_port);
            Action::Flood
        }
    }
}

fn helper(x: u8) {
    emu::probe!(x, x);
}

fn main() {}

//! The attribute's arguments are checked too.
#![allow(dead_code, unused)]

#[emu::nf(prots = 4, window = 4)]
mod nf {
    use emu::prelude::*;

    pub struct Nf;

    impl NetworkFunction for Nf {
        fn process(&mut self, _pkt: &mut Packet, _meta: &Meta) -> Action {
            Action::Flood
        }
    }
}

fn main() {}

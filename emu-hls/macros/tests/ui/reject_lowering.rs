//! What only lowering refuses is a compile error too, at the line it is on: here a loop too
//! long to unroll.
#![allow(dead_code, unused)]

#[emu::nf(ports = 4, window = 64)]
mod nf {
    use emu::prelude::*;

    pub struct Nf {
        pub frames: Counter,
    }

    impl NetworkFunction for Nf {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let mut sum = 0u32;
            for i in 0..2000u32 {
                sum = sum.wrapping_add(i);
            }
            let port = sum % 4;
            Action::Forward(port as u8)
        }
    }
}

fn main() {}

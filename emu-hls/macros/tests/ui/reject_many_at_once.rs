//! Every error is reported, not just the first.
#![allow(dead_code, unused)]

#[emu::nf(ports = 4, window = 64)]
mod nf {
    use emu::prelude::*;

    pub struct Nf {
        pub macs: Cam<Mac, Port, 16>,
        pub floods: Counter,
        pub scale: f32,
    }

    impl NetworkFunction for Nf {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let b = Box::new(meta.in_port);
            let n = 3;
            for i in 0..pkt.len() {}
            Action::Flood
        }
    }
}

fn main() {}

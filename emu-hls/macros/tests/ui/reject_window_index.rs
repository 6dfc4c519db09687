//! Indexing the window at a computed position (panics on the CPU past the frame's end).
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
            let at = meta.len as usize - 1;
            let last = pkt.window()[at];
            pkt.set_byte(0, last);
            Action::Flood
        }
    }
}

fn main() {}

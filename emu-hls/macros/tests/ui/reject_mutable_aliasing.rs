//! Two `&mut` borrows of one state element alive at once (rustc's NLL accepts this; the circuit cannot).
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
            let a = &mut self.macs;
            a.insert(pkt.ethernet().src(), meta.in_port);
            let b = &mut self.macs;
            b.remove(pkt.ethernet().dst());
            Action::Flood
        }
    }
}

fn main() {}

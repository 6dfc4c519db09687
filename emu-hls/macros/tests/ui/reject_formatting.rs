//! String formatting.
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
            println!("packet from port {}", meta.in_port);
            let name = format!("port{}", meta.in_port);
            Action::Flood
        }
    }
}

fn main() {}

//! A remainder and a division by a constant written through a cast lower like a literal:
//! `x % WIDTH as u32`, `x / (1024 as u32)`.
#![allow(dead_code, unused)]

#[emu::nf(ports = 4, window = 64)]
mod nf {
    use emu::prelude::*;

    const WIDTH: usize = 4;

    pub struct Nf {
        pub frames: Counter,
    }

    impl NetworkFunction for Nf {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let x = pkt.ipv4().src().0;
            let port = x % WIDTH as u32;
            let slot = x / (1024 as u32) % (6 as u32);
            self.frames.add(slot as u64);
            Action::Forward(port as u8)
        }
    }
}

fn main() {
    use emu::NetworkFunction;
    let mut frame = vec![0u8; 60];
    frame[12..14].copy_from_slice(&[0x08, 0x00]);
    frame[26..30].copy_from_slice(&[10, 0, 0x1c, 7]);
    let mut nf = nf::Nf { frames: Default::default() };
    let action = nf.process(&mut emu::Packet::new(&mut frame, 64), &emu::Meta { in_port: 0, len: 60, timestamp: 0 });
    assert!(matches!(action, emu::Action::Forward(3)));
    assert_eq!(nf.frames.get(), (0x0a001c07 / 1024) % 6);
}

//! An NF with probes (`emu::probe!`, `emu::count!`), in `process` and in a function it calls:
//! the fixture of tests/probes.rs and tests/dbg_verilator.rs (`mod probed_nf;` there; the
//! module is `probed_nf::probed`).

#[emu::nf(ports = 4, window = 64)]
pub mod probed {
    use emu::prelude::*;

    #[derive(Default)]
    pub struct Probed {
        pub frames: Counter,
    }

    impl NetworkFunction for Probed {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            self.frames.inc();
            if pkt.ethernet().ethertype() != 0x0800 {
                emu::count!(not_ipv4);
                return Action::Drop(DropReason::Unsupported);
            }
            let ip = pkt.ipv4();
            let ttl = ip.ttl();
            emu::probe!(last_ttl, ttl);
            emu::probe!(last_src, ip.src());
            emu::probe!(low_ttl, ttl < 4);
            if ttl == 0 {
                emu::count!(expired);
                return Action::Drop(DropReason::Policy);
            }
            note(meta.in_port);
            Action::Forward(meta.in_port ^ 1)
        }
    }

    fn note(port: u8) {
        emu::probe!(last_port, port);
        emu::count!(forwarded);
    }
}

// An NF written to reach the HLS back end's less travelled paths; compiled from this text
// by emu-hls/tests/backend.rs and sim/tests/verilator.rs (not a crate of its own).
mod coverage {
    use emu::prelude::*;

    #[derive(Default, Debug)]
    pub struct Coverage {
        pub seen: Array<u16, 6>,
        pub misses: Counter,
    }

    impl NetworkFunction for Coverage {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let b = pkt.byte(14);
            let slot = (b & 7) as usize;
            let old = self.seen.get(slot);
            if !self.seen.set(slot, old + meta.len) {
                self.misses.inc();
                pkt.set_len(16 + (pkt.byte(15) & 63) as usize);
                return Action::Reply;
            }
            let signed = (pkt.byte(16) as i8) >> 2;
            let at = 14 + (pkt.byte(17) & 63) as usize;
            pkt.set_byte(at, b * 3);
            if signed < -8 {
                return Action::Drop(DropReason::Policy);
            }
            if old > 3000 {
                return Action::Multicast(PortMask((b >> 4) as u32));
            }
            Action::Forward(b >> 6)
        }
    }
}

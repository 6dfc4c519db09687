// An NF that reads the arrival time: a NAT-like table whose entries expire after a timeout
// (`meta.timestamp`, from tuser[127:64] in hardware); compiled from this text by
// emu-hls/tests/backend.rs and sim/tests/verilator.rs (not a crate of its own).
mod aging {
    use emu::prelude::*;

    #[derive(Default, Debug)]
    pub struct Aging {
        // When each host was last seen, in µs (2^10 ns).
        pub seen: HashTable<u16, u32, 8, 2>,
        pub expired: Counter,
    }

    impl NetworkFunction for Aging {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let host = (pkt.byte(11) as u16) << 8 | pkt.byte(5) as u16;
            let now = (meta.timestamp >> 10) as u32;
            let mut fresh: u8 = 0;
            if let Some(then) = self.seen.get(host) {
                if now.wrapping_sub(then) < 300 {
                    fresh = 1;
                } else {
                    self.expired.inc();
                    fresh = 2;
                }
            }
            self.seen.insert(host, now);
            pkt.set_byte(20, fresh);
            let t = meta.timestamp;
            pkt.set_byte(21, (t >> 56) as u8);
            pkt.set_byte(22, (t >> 8) as u8);
            pkt.set_byte(23, t as u8);
            if fresh == 2 {
                return Action::Drop(DropReason::Policy);
            }
            Action::Forward(meta.in_port)
        }
    }
}

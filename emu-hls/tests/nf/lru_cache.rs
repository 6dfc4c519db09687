// An NF around two `Lru`s, for the HLS back end's tests: every op of each, evictions included
// (6 hosts; 4 entries fully associative, and 4 in 2 sets of 2 ways in block RAM). Compiled from this text by emu-hls/tests/backend.rs and
// sim/tests/verilator.rs (not a crate of its own).
mod lru_cache {
    use emu::prelude::*;

    #[derive(Default, Debug)]
    pub struct LruCache {
        pub recent: Lru<Mac, u16, 4>,
        pub evictions: Counter,
        pub paired: Lru<Mac, u16, 4, 2>,
    }

    impl NetworkFunction for LruCache {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let eth = pkt.ethernet();
            let (src, dst) = (eth.src(), eth.dst());
            let seen = self.recent.get(src);
            if self.recent.insert(dst, meta.len).is_some() {
                self.evictions.inc();
            }
            if pkt.byte(14) & 1 == 1 {
                self.recent.remove(src);
            }
            // The table in sets: what it gives is written into the frame.
            let before = self.paired.get(dst).unwrap_or(0);
            pkt.set_byte(16, before as u8);
            if let Some((_, v)) = self.paired.insert(src, meta.len) {
                pkt.set_byte(17, v as u8);
            }
            if pkt.byte(14) & 2 == 2 {
                if let Some(v) = self.paired.remove(dst) {
                    pkt.set_byte(18, (v >> 8) as u8);
                }
            }
            let peeked = self.paired.peek(dst).unwrap_or(1);
            pkt.set_byte(19, peeked as u8 ^ self.paired.contains(src) as u8);
            if !self.recent.contains(dst) {
                return Action::Drop(DropReason::Policy);
            }
            match self.recent.peek(src) {
                Some(n) if n > 100 => Action::Forward(1),
                Some(_) => Action::Forward(2),
                None => match seen {
                    Some(_) => Action::Reply,
                    None => Action::Flood,
                },
            }
        }
    }
}

// An NF around an `Lru`, for the HLS back end's tests: every op of the element, evictions
// included (6 hosts, 4 entries). Compiled from this text by emu-hls/tests/backend.rs and
// sim/tests/verilator.rs (not a crate of its own).
mod lru_cache {
    use emu::prelude::*;

    #[derive(Default, Debug)]
    pub struct LruCache {
        pub recent: Lru<Mac, u16, 4>,
        pub evictions: Counter,
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

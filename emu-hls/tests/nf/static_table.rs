// An NF around a `Cam` whose entries are loaded at start (as a DNS server's zone is), every
// op: lookups that hit the loaded entries, inserts that fill the free slots and then evict
// round-robin from slot 0, removes; compiled from this text by emu-hls/tests/loaded_tables.rs
// (not a crate of its own).
mod static_table {
    use emu::prelude::*;

    #[derive(Default, Debug)]
    pub struct StaticTable {
        pub table: Cam<u32, u16, 6>,
        pub misses: Counter,
    }

    impl NetworkFunction for StaticTable {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let op = pkt.byte(14);
            let k = (pkt.byte(15) as u32) << 24 | (pkt.byte(16) as u32) << 16 | (pkt.byte(17) as u32) << 8 | pkt.byte(18) as u32;
            let v = (pkt.byte(19) as u16) << 8 | pkt.byte(20) as u16;
            match op & 3 {
                0 | 1 => match self.table.get(k) {
                    Some(x) => {
                        pkt.set_byte(21, (x >> 8) as u8);
                        pkt.set_byte(22, x as u8);
                        Action::Forward((x & 3) as u8)
                    }
                    None => {
                        self.misses.inc();
                        Action::Drop(DropReason::NoRoute)
                    }
                },
                2 => {
                    if let Some((old_key, old_value)) = self.table.insert(k, v) {
                        pkt.set_byte(21, old_key as u8);
                        pkt.set_byte(22, old_value as u8);
                    }
                    Action::Reply
                }
                _ => {
                    let gone = self.table.remove(k);
                    pkt.set_byte(21, gone.is_some() as u8);
                    if meta.in_port == 0 {
                        return Action::Flood;
                    }
                    Action::Reply
                }
            }
        }
    }
}

// An NF around a `HashTable`, every op, with accesses in consecutive blocks and back to back
// in one block (a hash table takes a request every other cycle); compiled from this text by
// emu-hls/tests/backend.rs and sim/tests/verilator.rs (not a crate of its own).
mod flow_table {
    use emu::prelude::*;

    #[derive(Default, Debug)]
    pub struct FlowTable {
        // 4 sets of 2 ways: six hosts' flows fill sets and evict.
        pub flows: HashTable<u32, u16, 8, 2>,
        pub bytes: HashTable<u16, u16, 4, 1>,
        pub new_flows: Counter,
    }

    impl NetworkFunction for FlowTable {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let op = pkt.byte(14);
            let key = (pkt.byte(5) as u32) << 16 | (pkt.byte(11) as u32) << 8 | pkt.byte(15) as u32 & 3;
            let mut r0: u8 = 0xee;
            let mut r1: u8 = 0xee;
            let mut r2: u8 = 0xee;
            match op & 7 {
                0 | 1 => {
                    // Count the flow: a get, then an insert into the same table.
                    let seen = self.flows.get(key).unwrap_or(0);
                    if let Some((k, v)) = self.flows.insert(key, seen + 1) {
                        r0 = k as u8;
                        r1 = v as u8;
                    }
                    r2 = seen as u8;
                }
                2 => r0 = self.flows.contains(key) as u8,
                3 => {
                    if let Some(v) = self.flows.remove(key) {
                        r0 = v as u8;
                        r1 = 1;
                    }
                }
                4 => {
                    // Both tables, one after the other, then the first again.
                    let n = self.bytes.get(meta.len).unwrap_or(0);
                    self.bytes.insert(meta.len, n + 1);
                    if self.flows.contains(key) {
                        self.new_flows.inc();
                        r0 = n as u8;
                    }
                }
                _ => {
                    if !self.flows.contains(key) {
                        return Action::Drop(DropReason::Policy);
                    }
                    if self.flows.get(key).unwrap_or(0) > 3 {
                        return Action::Flood;
                    }
                }
            }
            pkt.set_byte(20, r0);
            pkt.set_byte(21, r1);
            pkt.set_byte(22, r2);
            Action::Forward(meta.in_port)
        }
    }
}

// An NF around a `Tcam` and a `Queue`, every op (a firewall's rule table
// and a NAT's free-port pool, driven by the frames themselves); compiled from this text by
// emu-hls/tests/backend.rs and sim/tests/verilator.rs (not a crate of its own).
mod rules_and_pool {
    use emu::prelude::*;

    #[derive(Default, Debug)]
    pub struct RulesAndPool {
        // 6 rules: slots 6 and 7 (from `v & 7`) are past the table.
        pub rules: Tcam<u16, u8, 6>,
        pub pool: Queue<u16, 3>,
        pub refused: Counter,
    }

    impl NetworkFunction for RulesAndPool {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let op = pkt.byte(14);
            let k = (pkt.byte(15) as u16) << 8 | pkt.byte(16) as u16;
            let v = pkt.byte(17);
            let mut r0: u8 = 0xee;
            let mut r1: u8 = 0xee;
            let mut r2: u8 = 0xee;
            match op & 15 {
                0 | 1 | 2 => {
                    let mask = (pkt.byte(18) as u16) << 8 | pkt.byte(19) as u16;
                    r0 = self.rules.set((v & 7) as usize, k, mask, v) as u8;
                }
                3 => self.rules.clear((v & 7) as usize),
                4 | 5 => match self.rules.lookup(k) {
                    Some(x) => r0 = x,
                    None => r1 = 7,
                },
                6 => {
                    if let Some(slot) = self.rules.lookup_slot(k) {
                        r0 = slot as u8;
                        r1 = 1;
                    }
                }
                7 | 8 => match self.pool.push(k) {
                    Ok(()) => r0 = 1,
                    Err(back) => {
                        r0 = 2;
                        r1 = back as u8;
                    }
                },
                9 | 10 => {
                    if let Some(x) = self.pool.pop() {
                        r0 = (x >> 8) as u8;
                        r1 = x as u8;
                        r2 = 1;
                    }
                }
                11 => r0 = self.pool.peek().unwrap_or(0xffff) as u8,
                12 => {
                    r0 = self.pool.len() as u8;
                    r1 = self.pool.is_empty() as u8;
                    r2 = self.pool.is_full() as u8;
                }
                13 => {
                    if self.pool.is_full() {
                        self.refused.inc();
                        return Action::Drop(DropReason::Policy);
                    }
                }
                _ => {
                    // A rule decides: its result's low bit floods, the next two pick the port;
                    // no rule, no entry (a firewall's default deny).
                    if let Some(x) = self.rules.lookup(k) {
                        if x & 1 == 1 {
                            return Action::Flood;
                        }
                        return Action::Forward((x >> 1) & 3);
                    }
                    return Action::Drop(DropReason::Policy);
                }
            }
            pkt.set_byte(20, r0);
            pkt.set_byte(21, r1);
            pkt.set_byte(22, r2);
            Action::Forward(meta.in_port)
        }
    }
}

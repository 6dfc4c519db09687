// An NF that names only constant window positions (so the back end keeps just those bytes
// in registers and takes the rest from the packet buffer) while it shortens and lengthens the
// frame and sums it; compiled from this text by emu-hls/tests/backend.rs and
// sim/tests/verilator.rs (not a crate of its own).
mod window_edits {
    use emu::prelude::*;

    #[derive(Default, Debug)]
    pub struct WindowEdits {
        pub cuts: Counter,
    }

    impl NetworkFunction for WindowEdits {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let b = pkt.byte(14);
            pkt.set_byte(20, b ^ 0x5a);
            if b & 1 == 1 {
                // Shorter, then longer again (up to the window only): the bytes in between read 0.
                self.cuts.inc();
                pkt.set_len(16 + (b >> 3) as usize);
                pkt.set_len(100);
            } else if b & 2 == 2 {
                // Lengthens short frames with zeros, cuts long ones.
                pkt.set_len(40);
            }
            let s = pkt.ones_sum(14, 64);
            pkt.set_byte(15, s as u8);
            pkt.set_byte(16, (s >> 8) as u8);
            if b & 4 == 4 {
                return Action::Reply;
            }
            if meta.len > 150 {
                return Action::Drop(DropReason::Policy);
            }
            Action::Forward(b >> 6)
        }
    }
}

//! [`Register`]: one value held across packets, in flip-flops.

use super::{literal, wrapper, StateBlock};
use crate::verilog::{Expr, Item, Stmt};
use rust_hdl::prelude::*;

/// A `W`-bit register: the hardware of `emu_core::Register<T>` with `T::WIDTH = W`.
///
/// Semantics (the CPU's): holds its initial value (`T::default()`, 0, unless built with
/// [`Register::new`]) until the first write; `value` shows the last value written. A write
/// strobed at one rising edge is visible on `value` right after it.
#[derive(Clone, Debug, LogicBlock)]
pub struct Register<const W: usize> {
    // Clocking.
    /// The clock: the register changes only at its rising edge.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: at a rising edge with it high the register goes back
    /// to its initial value, whatever `write` says.
    pub reset: Signal<In, Bit>,

    // The write port (the CPU's `set`).
    /// Write strobe: at a rising edge with it high (and `reset` low), `write_data` is stored.
    pub write: Signal<In, Bit>,
    /// The value to store.
    pub write_data: Signal<In, Bits<W>>,

    // The read port (the CPU's `get`).
    /// The value held: directly the flip-flops' outputs, readable in the same cycle (no
    /// request, no latency).
    pub value: Signal<Out, Bits<W>>,

    /// The initial (and reset) value.
    _init: Bits<W>,
}

impl<const W: usize> Default for Register<W> {
    fn default() -> Self {
        Self::new(Bits::default())
    }
}

impl<const W: usize> Register<W> {
    /// A register whose initial and reset value is `init` (the CPU's `Register::new(init)`).
    pub fn new(init: Bits<W>) -> Self {
        Register {
            clock: Default::default(),
            reset: Default::default(),
            write: Default::default(),
            write_data: Default::default(),
            value: Signal::new_with_default(init),
            _init: init,
        }
    }
}

impl<const W: usize> Logic for Register<W> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.reset.val() {
                self.value.next = self._init;
            } else if self.write.val() {
                self.value.next = self.write_data.val();
            }
        }
    }

    fn connect(&mut self) {
        self.value.connect();
    }

    fn hdl(&self) -> Verilog {
        wrapper(self.verilog_body())
    }
}

impl<const W: usize> StateBlock for Register<W> {
    fn clock_mut(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }

    fn verilog_body(&self) -> Vec<Item> {
        let id = Expr::id;
        let init = literal(self._init);
        vec![
            Item::comment(format!("Register: {W} flip-flops.")),
            Item::reg("held", W as u32),
            Item::Initial(vec![Stmt::blocking(id("held"), init.clone())]),
            Item::always_posedge(
                "clock",
                vec![Stmt::if_else(
                    id("reset"),
                    vec![Stmt::nb(id("held"), init)],
                    vec![Stmt::if_(id("write"), vec![Stmt::nb(id("held"), id("write_data"))])],
                )],
            ),
            Item::assign(id("value"), id("held")),
        ]
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::hw::test_support::{check_lint, check_verilog, Trace, XorShift};
    use crate::hw::{from_hdl, tick, to_hdl};
    use emu_core::u13;
    use emu_core::Mac;

    /// Random writes and resets against `emu_core::Register`, `value` compared with `get()`
    /// after every cycle; the first 5000 cycles replayed through the Verilog under Verilator.
    #[test]
    fn matches_cpu_register_on_random_writes() {
        let mut rng = XorShift(0x5eed_0001);
        let mut cpu = emu_core::Register::new(u13::new(0x0abc));
        let mut hw: Register<13> = Register::new(to_hdl(u13::new(0x0abc)));
        hw.connect_all();
        let mut trace = Trace::new(&hw, 5_000);
        for step in 0..20_000 {
            let v = u13::new(rng.below(1 << 13) as u16);
            let write = rng.chance(1, 2);
            let reset = rng.chance(1, 50);
            hw.write.next = write;
            hw.write_data.next = to_hdl(v);
            hw.reset.next = reset;
            tick(&mut hw);
            trace.record(&hw);
            if reset {
                cpu = emu_core::Register::new(u13::new(0x0abc));
            } else if write {
                cpu.set(v);
            }
            assert_eq!(from_hdl::<u13, 13>(hw.value.val()), cpu.get(), "step {step}");
        }
        trace.replay_in_verilator(&hw);
    }

    #[test]
    fn holds_a_mac_and_starts_at_default() {
        let mut hw: Register<48> = Register::default();
        hw.connect_all();
        tick(&mut hw);
        assert_eq!(from_hdl::<Mac, 48>(hw.value.val()), Mac::default());
        let mac = Mac::from_bytes([2, 0, 0, 0xab, 0xcd, 0xef]);
        hw.write.next = true;
        hw.write_data.next = to_hdl(mac);
        tick(&mut hw);
        hw.write.next = false;
        hw.write_data.next = 0.into();
        tick(&mut hw);
        assert_eq!(from_hdl::<Mac, 48>(hw.value.val()), mac);
    }

    #[test]
    fn verilog_lints_and_synthesizes() {
        let stats = check_verilog(Register::<13>::new(0x0abc.into()), "emu_register");
        assert_eq!(stats.count("FD"), 13, "{stats:?}");
        check_lint(Register::<1>::default(), "emu_register_1");
    }
}

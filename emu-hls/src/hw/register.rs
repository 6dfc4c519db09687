//! [`Register`]: one value held across packets, in flip-flops.

use super::{literal, wrapper, StateBlock};
use crate::verilog::{Expr, Item, Literal, Module, Port, Stmt};
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
        body(W as u32, &literal(self._init))
    }
}

/// The module of a [`Register`] of `width` bits for a width known only at run time (the back
/// end's, from an NF's IR): the same ports and body as [`module`](super::module) of a
/// `Register<width>`. `reset` is both the initial and the reset value, so that a
/// configuration register holds its configured value from the bitstream on.
pub fn register_module(name: &str, width: u32, reset: &Literal) -> Module {
    assert_eq!(reset.width, Some(width), "register_module: a {width}-bit register needs a {width}-bit reset value");
    Module {
        name: name.into(),
        ports: vec![
            Port::input("clock", 1),
            Port::input("reset", 1),
            Port::input("write", 1),
            Port::input("write_data", width),
            Port::output_wire("value", width),
        ],
        items: body(width, reset),
    }
}

/// The body of a `width`-bit register starting at `init`, shared by the block and
/// [`register_module`] so that the two cannot drift apart.
fn body(width: u32, init: &Literal) -> Vec<Item> {
    let id = Expr::id;
    let init = Expr::Lit(init.clone());
    vec![
        Item::comment(format!("Register: {width} flip-flops.")),
        Item::reg("held", width),
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

#[cfg(test)]
mod test {
    use super::*;
    use crate::hw::test_support::{check_lint, check_verilog, Trace, XorShift};
    use crate::hw::{from_hdl, tick, to_hdl, tools};
    use crate::verilog::Radix;
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

    /// The run-time module against the block's, for widths around the 64-bit limb boundary,
    /// zero and non-zero initial values.
    #[test]
    fn register_module_is_the_blocks() {
        fn same<const W: usize>(init: Bits<W>, limbs: Vec<u64>) {
            let reset = Literal::from_limbs(W as u32, limbs, Radix::Hex);
            assert_eq!(
                crate::hw::module(&Register::<W>::new(init), "m"),
                register_module("m", W as u32, &reset),
                "W = {W}"
            );
        }
        same::<1>(0.into(), vec![0]);
        same::<1>(1.into(), vec![1]);
        same::<13>(0x0abc.into(), vec![0x0abc]);
        same::<48>(0x0200_0000_0001.into(), vec![0x0200_0000_0001]);
        same::<64>(u64::MAX.into(), vec![u64::MAX]);
        same::<100>(Bits::default(), vec![0, 0]);
        same::<100>(Bits::default().replace_bit(0, true).replace_bit(99, true), vec![1, 1 << 35]);
        assert_eq!(
            crate::hw::module(&Register::<70>::default(), "m"),
            register_module("m", 70, &Literal::new(70, 0, Radix::Hex))
        );
    }

    /// A configured value is both the initial and the reset value, and the module lints.
    #[test]
    fn register_module_with_a_configured_value_lints() {
        let m = register_module("emu_register_cfg", 48, &Literal::new(48, 0x0200_0000_0001, Radix::Hex));
        let text = m.to_string();
        assert_eq!(text.matches("48'h20000000001;").count(), 2, "{text}");
        tools::verilator_lint(&text, "emu_register_cfg", false).unwrap_or_else(|e| panic!("{e}\n{text}"));
    }

    #[test]
    fn verilog_lints_and_synthesizes() {
        let stats = check_verilog(Register::<13>::new(0x0abc.into()), "emu_register");
        assert_eq!(stats.count("FD"), 13, "{stats:?}");
        check_lint(Register::<1>::default(), "emu_register_1");
    }
}

//! [`Counter`]: a wrapping `BITS`-bit counter.

use super::{wrapper, StateBlock};
use crate::verilog::{Expr, Item, Module, Port, Stmt};
use rust_hdl::prelude::*;

/// A `BITS`-bit counter that wraps modulo 2<sup>`BITS`</sup>: the hardware of
/// `emu_core::Counter<BITS>` (1 ≤ `BITS` ≤ 64).
///
/// Semantics (the CPU's): starts at 0. An *add* request adds `req_data` modulo
/// 2<sup>`BITS`</sup> — the CPU's `inc()` is an add of 1, and `add(n)` an add of `n`'s low
/// `BITS` bits (the same sum modulo 2<sup>`BITS`</sup>); a *set* request stores `req_data` —
/// the CPU's `set(v)` with `v`'s low `BITS` bits, and `reset()` a set of 0. A request strobed
/// at one rising edge shows on `value` right after it.
#[derive(Clone, Debug, LogicBlock)]
pub struct Counter<const BITS: usize> {
    // Clocking.
    /// The clock: the counter changes only at its rising edge.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: at a rising edge with it high the counter goes back to
    /// 0, whatever the request.
    pub reset: Signal<In, Bit>,

    // The request port.
    /// Request strobe: at a rising edge with it high (and `reset` low) the request is done.
    pub req_valid: Signal<In, Bit>,
    /// The operation: [`Counter::OP_ADD`] (low) or [`Counter::OP_SET`] (high).
    pub req_op: Signal<In, Bit>,
    /// The operand: the amount added, or the value set.
    pub req_data: Signal<In, Bits<BITS>>,

    // The read port (the CPU's `get`).
    /// The count: the flip-flops' outputs, readable in the same cycle (no request, no
    /// latency).
    pub value: Signal<Out, Bits<BITS>>,
}

impl<const BITS: usize> Default for Counter<BITS> {
    fn default() -> Self {
        assert!((1..=64).contains(&BITS), "Counter<BITS> needs 1 <= BITS <= 64, as emu_core::Counter");
        Counter {
            clock: Default::default(),
            reset: Default::default(),
            req_valid: Default::default(),
            req_op: Default::default(),
            req_data: Default::default(),
            value: Default::default(),
        }
    }
}

impl<const BITS: usize> Counter<BITS> {
    /// `req_op` of an add request (`inc`, `add`).
    pub const OP_ADD: bool = false;
    /// `req_op` of a set request (`set`, `reset`).
    pub const OP_SET: bool = true;
}

impl<const BITS: usize> Logic for Counter<BITS> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.reset.val() {
                self.value.next = 0.into();
            } else if self.req_valid.val() {
                self.value.next = if self.req_op.val() == Self::OP_SET {
                    self.req_data.val()
                } else {
                    // rust-hdl's `+` on `Bits<BITS>` wraps at BITS bits, as the adder does.
                    self.value.val() + self.req_data.val()
                };
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

impl<const BITS: usize> StateBlock for Counter<BITS> {
    fn clock_mut(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }

    fn verilog_body(&self) -> Vec<Item> {
        body(BITS as u32)
    }
}

/// The module of a [`Counter`] of `bits` bits for a width known only at run time (the back
/// end's, from an NF's IR): the same ports and body as [`module`](super::module) of a
/// `Counter<bits>`.
pub fn counter_module(name: &str, bits: u32) -> Module {
    assert!((1..=64).contains(&bits), "counter_module: {bits} bits; a counter has 1 to 64, as emu_core::Counter");
    Module {
        name: name.into(),
        ports: vec![
            Port::input("clock", 1),
            Port::input("reset", 1),
            Port::input("req_valid", 1),
            Port::input("req_op", 1),
            Port::input("req_data", bits),
            Port::output_wire("value", bits),
        ],
        items: body(bits),
    }
}

/// The body of a `w`-bit counter, shared by the block and [`counter_module`] so that the two
/// cannot drift apart.
fn body(w: u32) -> Vec<Item> {
    let id = Expr::id;
    vec![
        Item::comment(format!("Counter: {w} bits, a register and an adder that wraps modulo 2^{w}.")),
        Item::reg("count", w),
        Item::Initial(vec![Stmt::blocking(id("count"), Expr::zero(w))]),
        Item::always_posedge(
            "clock",
            vec![Stmt::if_else(
                id("reset"),
                vec![Stmt::nb(id("count"), Expr::zero(w))],
                vec![Stmt::if_(
                    id("req_valid"),
                    vec![Stmt::if_else(
                        id("req_op"),
                        vec![Stmt::nb(id("count"), id("req_data"))],
                        vec![Stmt::nb(id("count"), id("count").plus(id("req_data")))],
                    )],
                )],
            )],
        ),
        Item::assign(id("value"), id("count")),
    ]
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::hw::test_support::{check_lint, check_verilog, Trace, XorShift};
    use crate::hw::tick;

    /// Random incs, adds, sets and resets against `emu_core::Counter<BITS>`; `value` is
    /// compared with `get()` after every cycle. With `replay`, the first 5000 cycles are
    /// replayed through the Verilog under Verilator, which must give the same outputs.
    fn matches_cpu<const BITS: usize, const CPU_BITS: u32>(seed: u64, replay: bool) {
        assert_eq!(BITS, CPU_BITS as usize);
        let mut rng = XorShift(seed);
        let mut cpu: emu_core::Counter<CPU_BITS> = emu_core::Counter::default();
        let mut hw: Counter<BITS> = Counter::default();
        let mask = u64::MAX >> (64 - BITS);
        hw.connect_all();
        let mut trace = Trace::new(&hw, 5_000);
        for step in 0..20_000 {
            let n = match rng.below(3) {
                0 => rng.below(4),
                1 => mask.wrapping_sub(rng.below(4)) & mask,
                _ => rng.below(u64::MAX) ^ (rng.below(2) << 63),
            };
            hw.req_valid.next = true;
            hw.req_op.next = Counter::<BITS>::OP_ADD;
            hw.req_data.next = (n & mask).into();
            hw.reset.next = false;
            match rng.below(10) {
                0 => hw.req_valid.next = false,
                1 => {
                    cpu.inc();
                    hw.req_data.next = 1.into();
                }
                2 => {
                    cpu.set(n);
                    hw.req_op.next = Counter::<BITS>::OP_SET;
                }
                3 => {
                    cpu.reset();
                    hw.req_op.next = Counter::<BITS>::OP_SET;
                    hw.req_data.next = 0.into();
                }
                4 if rng.chance(1, 5) => {
                    cpu.reset();
                    hw.reset.next = true;
                }
                _ => cpu.add(n),
            }
            tick(&mut hw);
            trace.record(&hw);
            assert_eq!(hw.value.val().to_u64(), cpu.get(), "step {step}");
        }
        if replay {
            trace.replay_in_verilator(&hw);
        }
    }

    #[test]
    fn matches_cpu_counter_on_random_operations() {
        matches_cpu::<1, 1>(1, true);
        matches_cpu::<8, 8>(2, false);
        matches_cpu::<13, 13>(3, false);
        matches_cpu::<32, 32>(4, false);
        matches_cpu::<33, 33>(5, false);
        matches_cpu::<63, 63>(6, false);
        matches_cpu::<64, 64>(7, true);
    }

    /// The stand-alone Verilog of a counter, as text: the style contract of the blocks'
    /// Verilog.
    #[test]
    fn golden_verilog() {
        let mut c: Counter<8> = Counter::default();
        c.connect_all();
        let want = "\
module emu_counter (
    input wire clock,
    input wire reset,
    input wire req_valid,
    input wire req_op,
    input wire [7:0] req_data,
    output wire [7:0] value
);
    // Counter: 8 bits, a register and an adder that wraps modulo 2^8.
    reg [7:0] count;
    initial begin
        count = 8'h0;
    end
    always @(posedge clock) begin
        if (reset) begin
            count <= 8'h0;
        end else if (req_valid) begin
            if (req_op) begin
                count <= req_data;
            end else begin
                count <= count + req_data;
            end
        end
    end
    assign value = count;
endmodule
";
        assert_eq!(crate::hw::module(&c, "emu_counter").to_string(), want);
    }

    /// The run-time module against the block's, at the ends of the range and in between.
    #[test]
    fn counter_module_is_the_blocks() {
        fn same<const BITS: usize>() {
            let block = crate::hw::module(&Counter::<BITS>::default(), "m");
            assert_eq!(block, counter_module("m", BITS as u32), "BITS = {BITS}");
        }
        same::<1>();
        same::<8>();
        same::<33>();
        same::<64>();
    }

    #[test]
    fn verilog_lints_and_synthesizes() {
        let stats = check_verilog(Counter::<32>::default(), "emu_counter");
        assert_eq!(stats.count("FD"), 32, "{stats:?}");
        check_lint(Counter::<1>::default(), "emu_counter_1");
        check_lint(Counter::<64>::default(), "emu_counter_64");
    }
}

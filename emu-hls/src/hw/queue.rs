//! [`Queue`]: a FIFO of at most `N` values, a ring buffer in block RAM.

use super::{address_width, wrapper, StateBlock};
use crate::verilog::{index_width, Expr, Item, Module, Port, Stmt};
use rust_hdl::prelude::*;
use std::collections::VecDeque;

/// A first-in first-out queue of at most `N` values of `W` bits: the hardware of
/// `emu_core::Queue<T, N>` with `T::WIDTH = W`, as a ring buffer of `N` words in block RAM with
/// a head pointer, a tail pointer and a count.
///
/// Semantics (the CPU's, exactly): starts empty. A *push* onto a queue holding fewer than `N`
/// values appends at the back (`resp_ok` high); onto a full queue it is rejected (`resp_ok`
/// low) and nothing changes. A *pop* removes and returns the front value; a *peek* returns
/// it and removes nothing; on an empty queue both return nothing (`resp_ok` low).
///
/// `N` must be at least 1 (the CPU's `Queue<T, 0>`, always empty and full, has no hardware).
/// Latency 1, one request per cycle.
#[derive(Clone, Debug, LogicBlock)]
pub struct Queue<const W: usize, const N: usize> {
    // Clocking.
    /// The clock: the queue and the responses change only at its rising edge.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: empties the queue, clears the response registers and
    /// ignores the request.
    pub reset: Signal<In, Bit>,

    // The request port.
    /// Request strobe: the request is done at the rising edge where it is high.
    pub req_valid: Signal<In, Bit>,
    /// The operation: [`Queue::OP_PEEK`], [`Queue::OP_PUSH`] or [`Queue::OP_POP`] (3 is a
    /// peek).
    pub req_op: Signal<In, Bits<2>>,
    /// The value pushed (ignored by pop and peek).
    pub req_data: Signal<In, Bits<W>>,

    // The response port: registers, written one cycle after each request.
    /// High for the one cycle after a request: the `resp_*` ports hold its response.
    pub resp_valid: Signal<Out, Bit>,
    /// push: accepted (the queue was not full; the CPU's `Ok(())`); pop and peek: there was a
    /// value (`Some`).
    pub resp_ok: Signal<Out, Bit>,
    /// pop and peek: the front value, 0 when the queue was empty. 0 after a push.
    pub resp_data: Signal<Out, Bits<W>>,

    // Status, readable in the same cycle (no request, no latency).
    /// The queue holds no value (the CPU's `is_empty`).
    pub empty: Signal<Out, Bit>,
    /// The queue holds `N` values, so a push would be rejected (`is_full`).
    pub full: Signal<Out, Bit>,
    /// How many values the queue holds (`len`), zero-extended to a fixed 32 bits so the
    /// block's ports need no width computed from `N`.
    pub len: Signal<Out, Bits<32>>,

    /// The model's values, front first.
    _values: VecDeque<Bits<W>>,
}

impl<const W: usize, const N: usize> Default for Queue<W, N> {
    fn default() -> Self {
        assert!(N >= 1, "a hardware Queue needs N >= 1");
        Queue {
            clock: Default::default(),
            reset: Default::default(),
            req_valid: Default::default(),
            req_op: Default::default(),
            req_data: Default::default(),
            resp_valid: Default::default(),
            resp_ok: Default::default(),
            resp_data: Default::default(),
            empty: Signal::new_with_default(true),
            full: Default::default(),
            len: Default::default(),
            _values: VecDeque::with_capacity(N),
        }
    }
}

impl<const W: usize, const N: usize> Queue<W, N> {
    /// `req_op` of a peek.
    pub const OP_PEEK: u64 = 0;
    /// `req_op` of a push.
    pub const OP_PUSH: u64 = 1;
    /// `req_op` of a pop.
    pub const OP_POP: u64 = 2;
    /// Cycles from a request to its response.
    pub const LATENCY: usize = 1;

    /// The model's values, front to back (the CPU's `iter`).
    pub fn values(&self) -> impl Iterator<Item = Bits<W>> + '_ {
        self._values.iter().copied()
    }
}

impl<const W: usize, const N: usize> Logic for Queue<W, N> {
    fn update(&mut self) {
        if !self.clock.pos_edge() {
            return;
        }
        if self.reset.val() {
            self._values.clear();
            self.resp_valid.next = false;
            self.resp_ok.next = false;
            self.resp_data.next = 0.into();
        } else {
            self.resp_valid.next = self.req_valid.val();
            if self.req_valid.val() {
                self.resp_data.next = 0.into();
                match self.req_op.val().to_u64() {
                    Self::OP_PUSH => {
                        let ok = self._values.len() < N;
                        if ok {
                            self._values.push_back(self.req_data.val());
                        }
                        self.resp_ok.next = ok;
                    }
                    op => {
                        let front =
                            if op == Self::OP_POP { self._values.pop_front() } else { self._values.front().copied() };
                        self.resp_ok.next = front.is_some();
                        self.resp_data.next = front.unwrap_or_default();
                    }
                }
            }
        }
        self.empty.next = self._values.is_empty();
        self.full.next = self._values.len() == N;
        self.len.next = (self._values.len() as u64).into();
    }

    fn connect(&mut self) {
        self.resp_valid.connect();
        self.resp_ok.connect();
        self.resp_data.connect();
        self.empty.connect();
        self.full.connect();
        self.len.connect();
    }

    fn hdl(&self) -> Verilog {
        wrapper(self.verilog_body())
    }
}

impl<const W: usize, const N: usize> StateBlock for Queue<W, N> {
    fn clock_mut(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }

    fn verilog_body(&self) -> Vec<Item> {
        body(W as u32, N as u64)
    }
}

/// The module of a [`Queue`] of at most `size` values of `width` bits for parameters known only
/// at run time (the back end's, from an NF's IR): the same ports and body as
/// [`module`](super::module) of a `Queue<width, size>`.
pub fn queue_module(name: &str, width: u32, size: u64) -> Module {
    assert!(size >= 1, "queue_module: a hardware Queue needs size >= 1");
    Module {
        name: name.into(),
        ports: vec![
            Port::input("clock", 1),
            Port::input("reset", 1),
            Port::input("req_valid", 1),
            Port::input("req_op", 2),
            Port::input("req_data", width),
            Port::output_wire("resp_valid", 1),
            Port::output_wire("resp_ok", 1),
            Port::output_wire("resp_data", width),
            Port::output_wire("empty", 1),
            Port::output_wire("full", 1),
            Port::output_wire("len", 32),
        ],
        items: body(width, size),
    }
}

/// Gives a queue module a read port for the debugger (built only with the debug unit): input
/// `dbg_slot`, a place counted from the front; outputs `dbg_valid` (the queue holds that many
/// values and more, at once) and `dbg_value` (the value there, or 0 past the length, read
/// through the block RAM's second port: it shows the place `dbg_slot` named one cycle before).
/// The debugger asks only for places below the size.
pub fn add_debug_read(m: &mut Module, w: u32, n: u64) {
    let id = Expr::id;
    let (pw, cw) = (address_width(n), index_width(n + 1));
    let sw = pw.max(1);
    m.ports.push(Port::input("dbg_slot", sw));
    m.ports.push(Port::output_wire("dbg_valid", 1));
    m.ports.push(Port::output_wire("dbg_value", w));
    let slot = if sw < cw { Expr::concat(vec![Expr::zero(cw - sw), id("dbg_slot")]) } else { id("dbg_slot") };
    m.items.push(Item::assign(id("dbg_valid"), slot.less_than(id("count"))));
    // The word of place k: head + k, wrapped at n (k < n, so one subtraction wraps it).
    let address = if pw == 0 {
        Expr::int(0)
    } else {
        m.items.push(Item::wire("dbg_sum", pw + 1));
        let wide = |e: Expr| Expr::concat(vec![Expr::zero(1), e]);
        m.items.push(Item::assign(id("dbg_sum"), wide(id("head")).plus(wide(id("dbg_slot")))));
        let n_ = Expr::dec(pw + 1, n as u128);
        let wrapped = Expr::mux(id("dbg_sum").less_than(n_.clone()), id("dbg_sum"), id("dbg_sum").minus(n_));
        m.items.push(Item::wire("dbg_address", pw + 1));
        m.items.push(Item::assign(id("dbg_address"), wrapped));
        id("dbg_address").slice(pw - 1, 0)
    };
    m.items.push(Item::reg("dbg_word_q", w));
    m.items.push(Item::reg("dbg_valid_q", 1));
    m.items.push(Item::always_posedge(
        "clock",
        vec![Stmt::nb(id("dbg_word_q"), id("words").index(address)), Stmt::nb(id("dbg_valid_q"), id("dbg_valid"))],
    ));
    m.items.push(Item::assign(id("dbg_value"), Expr::mux(id("dbg_valid_q"), id("dbg_word_q"), Expr::zero(w))));
}

/// The body of a queue of at most `n` values of `w` bits, shared by the block and
/// [`queue_module`] so that the two cannot drift apart. (The op codes do not depend on the
/// parameters: `Queue::<1, 1>`'s are every `Queue`'s.)
fn body(w: u32, n: u64) -> Vec<Item> {
    let id = Expr::id;
    let pw = address_width(n);
    let cw = index_width(n + 1);
    // The pointers: registers of `pw` bits, or the constant 0 with a single word.
    let pointer = |name: &'static str| {
        if pw == 0 {
            Expr::int(0)
        } else {
            Expr::id(name)
        }
    };
    let advance = |name: &'static str| {
        let p = Expr::id(name);
        Stmt::nb(
            p.clone(),
            Expr::mux(p.clone().equals(Expr::dec(pw, (n - 1) as u128)), Expr::zero(pw), p.plus(Expr::dec(pw, 1))),
        )
    };

    let mut items = vec![
        Item::comment(format!("Queue: a ring buffer of {n} words of {w} bits in block RAM; head, tail, count.")),
        Item::memory("words", w, n).with_attr("ram_style", "block"),
        Item::reg("count", cw),
    ];
    if pw > 0 {
        items.push(Item::reg("head", pw));
        items.push(Item::reg("tail", pw));
    }
    for (name, width) in [("read_q", w), ("resp_valid_q", 1), ("resp_ok_q", 1), ("resp_read_q", 1)] {
        items.push(Item::reg(name, width));
    }
    items.push(Item::wire("is_empty", 1));
    items.push(Item::wire("is_full", 1));
    items.push(Item::assign(id("is_empty"), id("count").equals(Expr::zero(cw))));
    items.push(Item::assign(id("is_full"), id("count").equals(Expr::dec(cw, n as u128))));

    let mut clear = vec![Stmt::nb(id("count"), Expr::zero(cw))];
    if pw > 0 {
        clear.push(Stmt::nb(id("head"), Expr::zero(pw)));
        clear.push(Stmt::nb(id("tail"), Expr::zero(pw)));
    }
    for name in ["resp_valid_q", "resp_ok_q", "resp_read_q"] {
        clear.push(Stmt::nb(id(name), Expr::bit(false)));
    }
    items.push(Item::integer("i"));
    let mut init = vec![
        Stmt::For {
            var: "i".into(),
            from: 0,
            to: n,
            body: vec![Stmt::blocking(id("words").index(id("i")), Expr::zero(w))],
        },
        Stmt::blocking(id("read_q"), Expr::zero(w)),
    ];
    init.extend(clear.iter().map(|s| match s {
        Stmt::NonBlocking(l, r) => Stmt::blocking(l.clone(), r.clone()),
        other => other.clone(),
    }));
    items.push(Item::Initial(init));

    let op_is = |op: u64| id("req_op").equals(Expr::dec(2, op as u128));
    let accepted_push = op_is(Queue::<1, 1>::OP_PUSH).land(id("is_full").lnot());
    let reading = op_is(Queue::<1, 1>::OP_PUSH).lnot();

    items.push(Item::Blank);
    items.push(Item::comment("The RAM port: a push writes at the tail; a pop or peek reads the head."));
    items.push(Item::always_posedge(
        "clock",
        vec![Stmt::if_(
            id("req_valid").land(id("reset").lnot()),
            vec![Stmt::if_else(
                op_is(Queue::<1, 1>::OP_PUSH),
                vec![Stmt::if_(
                    id("is_full").lnot(),
                    vec![Stmt::nb(id("words").index(pointer("tail")), id("req_data"))],
                )],
                vec![Stmt::nb(id("read_q"), id("words").index(pointer("head")))],
            )],
        )],
    ));

    let mut push = vec![Stmt::nb(id("count"), id("count").plus(Expr::dec(cw, 1)))];
    let mut pop = vec![Stmt::nb(id("count"), id("count").minus(Expr::dec(cw, 1)))];
    if pw > 0 {
        push.push(advance("tail"));
        pop.push(advance("head"));
    }
    items.push(Item::Blank);
    items.push(Item::comment("The pointers and the response."));
    items.push(Item::always_posedge(
        "clock",
        vec![Stmt::if_else(
            id("reset"),
            clear,
            vec![
                Stmt::nb(id("resp_valid_q"), id("req_valid")),
                Stmt::if_(
                    id("req_valid"),
                    vec![
                        Stmt::nb(id("resp_read_q"), reading),
                        Stmt::if_else(
                            op_is(Queue::<1, 1>::OP_PUSH),
                            vec![Stmt::nb(id("resp_ok_q"), id("is_full").lnot()), Stmt::if_(accepted_push, push)],
                            vec![
                                Stmt::nb(id("resp_ok_q"), id("is_empty").lnot()),
                                Stmt::if_(op_is(Queue::<1, 1>::OP_POP).land(id("is_empty").lnot()), pop),
                            ],
                        ),
                    ],
                ),
            ],
        )],
    ));
    items.push(Item::Blank);
    items.push(Item::assign(id("resp_valid"), id("resp_valid_q")));
    items.push(Item::assign(id("resp_ok"), id("resp_ok_q")));
    items.push(Item::assign(
        id("resp_data"),
        Expr::mux(id("resp_ok_q").land(id("resp_read_q")), id("read_q"), Expr::zero(w)),
    ));
    items.push(Item::assign(id("empty"), id("is_empty")));
    items.push(Item::assign(id("full"), id("is_full")));
    items.push(Item::assign(id("len"), Expr::concat(vec![Expr::zero(32 - cw), id("count")])));
    items
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::hw::test_support::{check_lint, check_verilog, Trace, XorShift};
    use crate::hw::{from_hdl, tick, to_hdl};

    /// Drives `hw` and `emu_core::Queue<T, N>` with the same seeded random pushes, pops and
    /// peeks (biased in turn towards filling and towards draining, so both full and empty are
    /// reached often), with idle cycles and rare resets, and compares: push → `resp_ok` =
    /// `push(v).is_ok()`; pop, peek → `resp_ok ? Some(resp_data) : None`; after every cycle
    /// `empty` = `is_empty()`, `full` = `is_full()` and the model's values = `iter()`. The
    /// first 5000 cycles are replayed through the Verilog under Verilator.
    fn matches_cpu<T, const W: usize, const N: usize>(seed: u64, value: impl Fn(u64) -> T)
    where
        T: emu_core::Bits + std::fmt::Debug,
    {
        let mut rng = XorShift(seed);
        let mut cpu: emu_core::Queue<T, N> = emu_core::Queue::default();
        let mut hw: Queue<W, N> = Queue::default();
        hw.connect_all();
        let mut trace = Trace::new(&hw, 5_000);
        let (mut fulls, mut empties) = (0, 0);
        for step in 0..20_000 {
            let v = value(rng.below(u64::MAX));
            let filling = (step / 97) % 2 == 0;
            let op = match rng.below(10) {
                0 => 9, // idle, or reset
                1 => 3, // reserved: a peek
                2 => Queue::<W, N>::OP_PEEK,
                k if (k < 7) == filling => Queue::<W, N>::OP_PUSH,
                _ => Queue::<W, N>::OP_POP,
            };
            hw.req_valid.next = op != 9;
            hw.reset.next = op == 9 && rng.chance(1, 30);
            hw.req_op.next = (op & 3).into();
            hw.req_data.next = to_hdl(v);
            tick(&mut hw);
            trace.record(&hw);
            let data = hw.resp_ok.val().then(|| from_hdl::<T, W>(hw.resp_data.val()));
            match op {
                9 => {
                    if hw.reset.next {
                        cpu = emu_core::Queue::default();
                    }
                }
                Queue::<W, N>::OP_PUSH => {
                    fulls += cpu.is_full() as u32;
                    assert_eq!(hw.resp_ok.val(), cpu.push(v).is_ok(), "step {step}: push");
                    assert_eq!(hw.resp_data.val(), 0, "step {step}: push");
                }
                Queue::<W, N>::OP_POP => {
                    empties += cpu.is_empty() as u32;
                    assert_eq!(data, cpu.pop(), "step {step}: pop");
                }
                _ => assert_eq!(data, cpu.peek(), "step {step}: peek"),
            }
            assert_eq!(hw.empty.val(), cpu.is_empty(), "step {step}");
            assert_eq!(hw.full.val(), cpu.is_full(), "step {step}");
            assert_eq!(hw.len.val().to_u64(), cpu.len() as u64, "step {step}");
            assert!(hw.values().map(from_hdl::<T, W>).eq(cpu.iter()), "step {step}: contents");
        }
        assert!(fulls > 50 && empties > 50, "{fulls} pushes when full, {empties} pops when empty");
        trace.replay_in_verilator(&hw);
    }

    #[test]
    fn matches_cpu_queue_on_random_operations() {
        matches_cpu::<u16, 16, 5>(42, |v| v as u16);
        matches_cpu::<u8, 8, 1>(43, |v| v as u8);
        matches_cpu::<u32, 32, 8>(44, |v| v as u32);
    }

    /// The run-time module against the block's: one word, two, a power of two, a depth that is
    /// not, words wider than 64 bits.
    #[test]
    fn queue_module_is_the_blocks() {
        fn same<const W: usize, const N: usize>() {
            let block = crate::hw::module(&Queue::<W, N>::default(), "m");
            assert_eq!(block, queue_module("m", W as u32, N as u64), "Queue<{W}, {N}>");
        }
        same::<1, 1>();
        same::<8, 2>();
        same::<32, 512>();
        same::<16, 5>();
        same::<100, 3>();
    }

    #[test]
    fn verilog_lints_and_synthesizes_to_block_ram() {
        let stats = check_verilog(Queue::<32, 512>::default(), "emu_queue");
        assert!(stats.count("RAMB") >= 1, "a block RAM: {stats:?}");
        check_lint(Queue::<16, 5>::default(), "emu_queue_5");
        check_lint(Queue::<8, 1>::default(), "emu_queue_1");
    }
}

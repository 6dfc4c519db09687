//! [`Array`]: `N` words in block RAM behind one read/write port.

use super::{address_width, in_range, index_below, wrapper, StateBlock};
use crate::verilog::{index_width, Expr, Item, Module, Port, Stmt};
use rust_hdl::prelude::*;

/// `N` words of `W` bits in one block RAM with one port (one read or one write per cycle),
/// indexed by an `A`-bit index: the hardware of `emu_core::Array<T, N>` with `T::WIDTH = W`.
///
/// Semantics (the CPU's, exactly): every word starts at 0. A read of index `i < N` returns
/// the last value written at `i`; a read of `i ≥ N` returns 0. A write of `i < N` stores the
/// value; a write of `i ≥ N` stores nothing. `resp_ok` says which case it was (the CPU's
/// `set` returns it; a read's is informative).
///
/// `A` may be wider than `⌈log2 N⌉` (an index computed in 32 bits, say): the whole index is
/// compared with `N`. `N` must be at least 1.
///
/// The initial contents come from an `initial` block (block RAM is initialized by the
/// bitstream: zeros, or the words an NF's constructor put there, [`array_module_loaded`]);
/// `reset` does **not** clear them — block RAM has no reset — it only clears the
/// response registers.
///
/// Latency 1, one request per cycle.
#[derive(Clone, Debug, LogicBlock)]
pub struct Array<const W: usize, const N: usize, const A: usize> {
    // Clocking.
    /// The clock: writes and responses happen only at its rising edge.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: clears the response registers (not the words) and
    /// ignores the request.
    pub reset: Signal<In, Bit>,

    // The request port.
    /// Request strobe: the request is done at the rising edge where it is high.
    pub req_valid: Signal<In, Bit>,
    /// High for a write ([`Array::OP_WRITE`], the CPU's `set`), low for a read
    /// ([`Array::OP_READ`], `get`).
    pub req_write: Signal<In, Bit>,
    /// The word's index; `≥ N` is out of range.
    pub req_index: Signal<In, Bits<A>>,
    /// The value written (ignored by a read).
    pub req_data: Signal<In, Bits<W>>,

    // The response port: registers, written one cycle after each request.
    /// High for the one cycle after a request: the `resp_*` ports hold its response.
    pub resp_valid: Signal<Out, Bit>,
    /// The index was in range (`< N`): for a write, the word was written.
    pub resp_ok: Signal<Out, Bit>,
    /// A read's value: the word, or 0 when out of range. 0 after a write.
    pub resp_data: Signal<Out, Bits<W>>,

    /// The model's words.
    _words: Vec<Bits<W>>,
}

impl<const W: usize, const N: usize, const A: usize> Default for Array<W, N, A> {
    fn default() -> Self {
        assert!(N >= 1, "a hardware Array needs N >= 1");
        Array {
            clock: Default::default(),
            reset: Default::default(),
            req_valid: Default::default(),
            req_write: Default::default(),
            req_index: Default::default(),
            req_data: Default::default(),
            resp_valid: Default::default(),
            resp_ok: Default::default(),
            resp_data: Default::default(),
            _words: vec![Bits::default(); N],
        }
    }
}

impl<const W: usize, const N: usize, const A: usize> Array<W, N, A> {
    /// `req_write` of a read.
    pub const OP_READ: bool = false;
    /// `req_write` of a write.
    pub const OP_WRITE: bool = true;
    /// Cycles from a request to its response.
    pub const LATENCY: usize = 1;

    /// The model's word at `i`, 0 when `i ≥ N` (the CPU's `get`, without a request).
    pub fn word(&self, i: usize) -> Bits<W> {
        self._words.get(i).copied().unwrap_or_default()
    }
}

impl<const W: usize, const N: usize, const A: usize> Logic for Array<W, N, A> {
    fn update(&mut self) {
        if !self.clock.pos_edge() {
            return;
        }
        if self.reset.val() {
            self.resp_valid.next = false;
            self.resp_ok.next = false;
            self.resp_data.next = 0.into();
            return;
        }
        self.resp_valid.next = self.req_valid.val();
        if !self.req_valid.val() {
            return;
        }
        let index = index_below(self.req_index.val(), N);
        self.resp_ok.next = index.is_some();
        if self.req_write.val() {
            if let Some(i) = index {
                self._words[i] = self.req_data.val();
            }
            self.resp_data.next = 0.into();
        } else {
            self.resp_data.next = index.map_or(0.into(), |i| self._words[i]);
        }
    }

    fn connect(&mut self) {
        self.resp_valid.connect();
        self.resp_ok.connect();
        self.resp_data.connect();
    }

    fn hdl(&self) -> Verilog {
        wrapper(self.verilog_body())
    }
}

impl<const W: usize, const N: usize, const A: usize> StateBlock for Array<W, N, A> {
    fn clock_mut(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }

    fn verilog_body(&self) -> Vec<Item> {
        body(W as u32, N as u64, A as u32, &[])
    }
}

/// The module of an [`Array`] of `size` words of `width` bits for parameters known only at run
/// time (the back end's, from an NF's IR): the same ports and body as
/// [`module`](super::module) of an `Array<width, size, A>`, where `A` is the exact index width
/// ([`index_width`]`(size)`). An index computed wider must be checked against `size` before
/// it is cut to `A` bits, or it would wrap into range.
pub fn array_module(name: &str, width: u32, size: u64) -> Module {
    array_module_indexed(name, width, size, index_width(size))
}

/// [`array_module`] with a `req_index` of `index_bits` (at least the exact width): the whole
/// index is compared with `size`, so a wider index never wraps into range.
pub fn array_module_indexed(name: &str, width: u32, size: u64, index_bits: u32) -> Module {
    array_module_loaded(name, width, size, index_bits, &[])
}

/// A word an array holds from the start: (index, value at the array's width).
pub type LoadedWord = (u64, Expr);

/// [`array_module_indexed`] whose block RAM starts with `words` (the others 0): the
/// bitstream's initial contents, which a reset does not change (block RAM has none).
pub fn array_module_loaded(name: &str, width: u32, size: u64, index_bits: u32, words: &[LoadedWord]) -> Module {
    assert!(size >= 1, "array_module: a hardware Array needs size >= 1");
    assert!(index_bits >= index_width(size), "array_module: {index_bits} index bits cannot number {size} words");
    let a = index_bits;
    Module {
        name: name.into(),
        ports: vec![
            Port::input("clock", 1),
            Port::input("reset", 1),
            Port::input("req_valid", 1),
            Port::input("req_write", 1),
            Port::input("req_index", a),
            Port::input("req_data", width),
            Port::output_wire("resp_valid", 1),
            Port::output_wire("resp_ok", 1),
            Port::output_wire("resp_data", width),
        ],
        items: body(width, size, a, words),
    }
}

/// The body of an array of `n` words of `w` bits indexed by `a` bits, shared by the block and
/// [`array_module`] so that the two cannot drift apart.
fn body(w: u32, n: u64, a: u32, words: &[LoadedWord]) -> Vec<Item> {
    let id = Expr::id;
    let aw = address_width(n);
    // The RAM address: the index's low bits (zero-extended when the index is narrower).
    let address = if aw == 0 { Expr::int(0) } else { id("address") };
    let word = || id("words").index(address.clone());

    let mut items = vec![
        Item::comment(format!("Array: {n} words of {w} bits in block RAM, one read or write per cycle.")),
        Item::memory("words", w, n).with_attr("ram_style", "block"),
        Item::reg("read_q", w),
        Item::reg("resp_valid_q", 1),
        Item::reg("resp_ok_q", 1),
        Item::reg("resp_read_q", 1),
        Item::wire("in_range", 1),
        Item::assign(id("in_range"), in_range("req_index", a, n)),
    ];
    if aw > 0 {
        items.push(Item::wire("address", aw));
        items.push(Item::assign(id("address"), super::address("req_index", a, n)));
    }
    items.push(Item::integer("i"));
    let mut init = vec![Stmt::For {
        var: "i".into(),
        from: 0,
        to: n,
        body: vec![Stmt::blocking(id("words").index(id("i")), Expr::zero(w))],
    }];
    for (i, v) in words {
        assert!(*i < n, "array_module: word {i} of {n}");
        init.push(Stmt::blocking(id("words").index(Expr::int(*i)), v.clone()));
    }
    init.extend([
        Stmt::blocking(id("read_q"), Expr::zero(w)),
        Stmt::blocking(id("resp_valid_q"), Expr::bit(false)),
        Stmt::blocking(id("resp_ok_q"), Expr::bit(false)),
        Stmt::blocking(id("resp_read_q"), Expr::bit(false)),
    ]);
    items.push(Item::Initial(init));

    items.push(Item::Blank);
    items.push(Item::comment("The RAM port: a write, or a registered read."));
    items.push(Item::always_posedge(
        "clock",
        vec![Stmt::if_(
            id("req_valid").land(id("reset").lnot()),
            vec![Stmt::if_else(
                id("req_write"),
                vec![Stmt::if_(id("in_range"), vec![Stmt::nb(word(), id("req_data"))])],
                vec![Stmt::nb(id("read_q"), word())],
            )],
        )],
    ));
    items.push(Item::Blank);
    items.push(Item::comment("The response: a read out of range (or a write) shows 0."));
    items.push(Item::always_posedge(
        "clock",
        vec![Stmt::if_else(
            id("reset"),
            vec![
                Stmt::nb(id("resp_valid_q"), Expr::bit(false)),
                Stmt::nb(id("resp_ok_q"), Expr::bit(false)),
                Stmt::nb(id("resp_read_q"), Expr::bit(false)),
            ],
            vec![
                Stmt::nb(id("resp_valid_q"), id("req_valid")),
                Stmt::if_(
                    id("req_valid"),
                    vec![
                        Stmt::nb(id("resp_ok_q"), id("in_range")),
                        Stmt::nb(id("resp_read_q"), id("req_write").lnot()),
                    ],
                ),
            ],
        )],
    ));
    items.push(Item::assign(id("resp_valid"), id("resp_valid_q")));
    items.push(Item::assign(id("resp_ok"), id("resp_ok_q")));
    items.push(Item::assign(
        id("resp_data"),
        Expr::mux(id("resp_ok_q").land(id("resp_read_q")), id("read_q"), Expr::zero(w)),
    ));
    items
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::hw::test_support::{check_lint, check_verilog, Trace, XorShift};
    use crate::hw::{from_hdl, tick, to_hdl};
    use emu_core::u48;

    /// Drives `hw` and `emu_core::Array<T, N>` with the same seeded random reads and writes —
    /// indices mostly in range, some just past `N`, some anywhere in `A` bits — with idle
    /// cycles and rare resets, and compares: read → `resp_data` = `get(i)`; write → `resp_ok`
    /// = `set(i, v)`; after every read, `resp_ok` = `i < N`. With `replay`, the first 5000
    /// cycles are replayed through the Verilog under Verilator, which must give the same
    /// outputs.
    fn matches_cpu<T, const W: usize, const N: usize, const A: usize>(seed: u64, value: impl Fn(u64) -> T, replay: bool)
    where
        T: emu_core::Bits + std::fmt::Debug,
    {
        let mut rng = XorShift(seed);
        let mut cpu: emu_core::Array<T, N> = emu_core::Array::default();
        let mut hw: Array<W, N, A> = Array::default();
        hw.connect_all();
        let mut trace = Trace::new(&hw, 5_000);
        let index_max = if A >= 64 { u64::MAX } else { (1 << A) - 1 };
        for step in 0..20_000 {
            let i = match rng.below(10) {
                0 => rng.below(u64::MAX) & index_max,
                1 => (N as u64 + rng.below(3)).min(index_max),
                _ => rng.below(N as u64),
            } & index_max;
            let v = value(rng.below(u64::MAX));
            let op = rng.below(5);
            hw.req_valid.next = op != 4;
            hw.reset.next = op == 4 && rng.chance(1, 10);
            hw.req_write.next = op < 2;
            hw.req_index.next = i.into();
            hw.req_data.next = to_hdl(v);
            tick(&mut hw);
            trace.record(&hw);
            let i = usize::try_from(i).unwrap_or(usize::MAX);
            match op {
                0 | 1 => assert_eq!(hw.resp_ok.val(), cpu.set(i, v), "step {step}: set {i}"),
                4 => {}
                _ => {
                    assert_eq!(from_hdl::<T, W>(hw.resp_data.val()), cpu.get(i), "step {step}: get {i}");
                    assert_eq!(hw.resp_ok.val(), i < N, "step {step}");
                }
            }
            assert_eq!(hw.resp_valid.val(), op != 4, "step {step}");
        }
        for i in 0..N {
            assert_eq!(from_hdl::<T, W>(hw.word(i)), cpu.get(i));
        }
        if replay {
            trace.replay_in_verilator(&hw);
        }
    }

    #[test]
    fn matches_cpu_array_on_random_operations() {
        matches_cpu::<u16, 16, 10, 4>(1, |v| v as u16, false);
        matches_cpu::<u16, 16, 16, 4>(2, |v| v as u16, false);
        matches_cpu::<u8, 8, 5, 32>(3, |v| v as u8, false);
        matches_cpu::<u48, 48, 64, 6>(4, |v| u48::new(v & 0xffff_ffff_ffff), true);
        matches_cpu::<u32, 32, 1, 3>(5, |v| v as u32, true);
        // An index narrower than the RAM's address: only the first 4 words are reachable.
        matches_cpu::<u8, 8, 12, 2>(6, |v| v as u8, true);
        matches_cpu::<bool, 1, 3, 64>(7, |v| v & 1 == 1, false);
    }

    /// The run-time module against the block's with the exact index width: one word, a power
    /// of two, a depth that is not, wide words.
    #[test]
    fn array_module_is_the_blocks() {
        fn same<const W: usize, const N: usize, const A: usize>() {
            assert_eq!(A as u32, index_width(N as u64));
            let block = crate::hw::module(&Array::<W, N, A>::default(), "m");
            assert_eq!(block, array_module("m", W as u32, N as u64), "Array<{W}, {N}, {A}>");
        }
        same::<1, 1, 1>();
        same::<32, 1, 1>();
        same::<8, 2, 1>();
        same::<16, 10, 4>();
        same::<32, 1024, 10>();
        same::<100, 3, 2>();
        same::<70, 64, 6>();
    }

    #[test]
    fn verilog_lints_and_synthesizes_to_block_ram() {
        let stats = check_verilog(Array::<32, 1024, 32>::default(), "emu_array");
        assert!(stats.count("RAMB") >= 1, "a block RAM: {stats:?}");
        check_lint(Array::<16, 10, 4>::default(), "emu_array_10");
        check_lint(Array::<8, 12, 2>::default(), "emu_array_narrow");
        check_lint(Array::<32, 1, 3>::default(), "emu_array_1");
    }
}

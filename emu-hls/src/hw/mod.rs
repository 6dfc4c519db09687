//! The state elements of `emu_core::state` as rust-hdl blocks.
//!
//! Each element is one file holding a `#[derive(LogicBlock)]` struct, its behavioural model
//! (`Logic::update`, a cycle-accurate model of the Verilog) and its Verilog (`Logic::hdl`,
//! built through [`crate::verilog`]'s AST). The CPU implementation in `emu_core::state` is the
//! specification: each file's tests drive the block and the CPU element with the same seeded
//! random operations and compare every response; replay the first cycles of that run through
//! the generated Verilog under Verilator ([`tools::verilator_replay`]) and require the same
//! outputs cycle for cycle; and check that the Verilog passes `verilator --lint-only -Wall`
//! (no warning class silenced) and `yosys synth_xilinx` for the 7-series part.
//!
//! | Block | CPU element | Storage | Latency |
//! |---|---|---|---|
//! | [`Register<W>`](Register) | `Register<T>` | `W` flip-flops | read: 0 (always visible); write: visible after the next edge |
//! | [`Counter<BITS>`](Counter) | `Counter<BITS>` | `BITS` flip-flops + adder | as [`Register`] |
//! | [`Array<W, N, A>`](Array) | `Array<T, N>` | block RAM, one port | 1 cycle |
//! | [`Cam<KW, VW, N>`](Cam) | `Cam<K, V, N>` | flip-flops, `N` comparators | 1 cycle |
//! | [`Queue<W, N>`](Queue) | `Queue<T, N>` | ring buffer in block RAM | 1 cycle |
//! | [`Tcam<KW, VW, N, S>`](Tcam) | `Tcam<K, V, N>` | flip-flops, `N` masked comparators | 1 cycle |
//! | [`Lru<KW, VW, N>`](Lru) | `Lru<K, V, N>` | flip-flops, `N` comparators, `N` age registers | 1 cycle |
//! | [`HashTable<KW, VW, N, WAYS>`](HashTable) | `HashTable<K, V, N, WAYS>` | block RAM (one word per set), valid bits and pointers in flip-flops | 2 cycles, one request per 2 cycles |
//!
//! # The port conventions
//!
//! Widths and depths are const generics: a key of `K` bits is a `Signal<_, Bits<K>>`. Stable
//! Rust cannot compute `⌈log2 N⌉` in a const generic, so where a port carries a slot or an
//! index its width is a separate parameter, checked against `N` when the block is built.
//! Internal widths (pointers, ages) are computed when the Verilog is generated.
//!
//! Every table-like element (all but [`Register`] and [`Counter`]) has the same request and
//! response interface:
//!
//! - `clock`: every state change happens on its rising edge.
//! - `reset`: synchronous, active high. At a rising edge with `reset` high the element goes
//!   back to its initial contents — the CPU element's `default()` — (block RAM *contents* of
//!   [`Array`] excepted, see there), any request is ignored and `resp_valid` goes low.
//! - `req_valid`: a strobe; at a rising edge with it high the request on the `req_*` ports is
//!   performed. Requests are independent: one per cycle (per two cycles for [`HashTable`],
//!   which says so on `req_ready`).
//! - `req_op` and the operands: which operation, and its arguments. The op codes are the
//!   associated constants `OP_*` of each block.
//! - `resp_valid`: high for exactly one cycle when a response is on the `resp_*` ports, which
//!   is `LATENCY` cycles after the request. The `resp_*` ports are registers: they keep their
//!   values until the next response. A field that does not apply to the operation is 0.
//!
//! The responses are the CPU element's return values, field by field; the test of each block
//! names the mapping.
//!
//! # Stepping a block
//!
//! [`tick`] runs one clock cycle of any block that implements [`StateBlock`], calling
//! `update_all` directly. It is about a hundred times faster than rust-hdl's `simple_sim!`.
//!
//! ```
//! use emu_hls::hw::{tick, Counter};
//! use rust_hdl::prelude::*;
//!
//! let mut packets: Counter<8> = Counter::default();
//! packets.connect_all();
//! packets.req_valid.next = true; // add 1
//! packets.req_data.next = 1.into();
//! for _ in 0..300 {
//!     tick(&mut packets);
//! }
//! assert_eq!(packets.value.val(), 300 % 256);
//! ```

use crate::verilog::{self, Item, Module, Port};
use rust_hdl::prelude::*;

mod array;
mod cam;
mod counter;
mod hash_table;
mod lru;
mod queue;
mod register;
mod tcam;
pub mod tools;

pub use array::{array_module, array_module_indexed, array_module_loaded, Array, LoadedWord};
pub use cam::{cam_module, cam_module_loaded, Cam, LoadedEntry};
pub use counter::{counter_module, Counter};
pub use hash_table::{
    add_debug_read as add_hash_debug_read, add_debug_write as add_hash_debug_write, crc32_matrix, hash_table_module,
    lru_sets_module, Crc32Matrix, HashTable, Replacement,
};
pub use lru::{add_debug_write as add_lru_debug_write, lru_module, Lru};
pub use queue::{add_debug_read as add_queue_debug_read, queue_module, Queue};
pub use register::{register_module, Register};
pub use tcam::{tcam_module, tcam_module_loaded, LoadedRule, Tcam};

/// What every state element block offers besides rust-hdl's [`Block`]: access to its clock
/// for stepping, and its Verilog body as AST.
pub trait StateBlock: Block {
    /// The block's clock input.
    fn clock_mut(&mut self) -> &mut Signal<In, Clock>;

    /// The module body (declarations and logic) over the block's port names. `Logic::hdl`
    /// returns it as a rust-hdl `Verilog::Wrapper`, rust-hdl writing the module header.
    fn verilog_body(&self) -> Vec<Item>;
}

/// The rust-hdl Verilog of a block whose body is `body`: a `Wrapper`, so that rust-hdl
/// declares the outputs as nets (the body drives them with `assign`) and adds nothing else.
///
/// Blank separator lines are left out: rust-hdl would indent them into trailing whitespace.
pub(crate) fn wrapper(mut body: Vec<Item>) -> Verilog {
    body.retain(|item| *item != Item::Blank);
    Verilog::Wrapper(Wrapper { code: verilog::print::items(&body), cores: String::new() })
}

/// Gives a table module whose slots are registers (`Cam`, `Tcam`) a write port for the
/// debugger, next to its read port ([`add_debug_read`]): at a rising edge with `dbg_we` high
/// (and `reset` low), slot `dbg_slot` becomes valid or empty as `dbg_wvalid` says and takes
/// `dbg_w<field>` into each `(field, memory, width)`. The debug unit writes only between
/// frames, when no request comes, so the port never meets one.
pub fn add_debug_write(m: &mut Module, n: u64, valid: &str, fields: &[(&str, &str, u32)]) {
    use crate::verilog::{Expr, Port, Stmt};
    m.ports.push(Port::input("dbg_we", 1));
    m.ports.push(Port::input("dbg_wvalid", 1));
    let at = || if n == 1 { Expr::int(0) } else { Expr::id("dbg_slot") };
    let mut body =
        vec![Stmt::nb(if n == 1 { Expr::id(valid) } else { Expr::id(valid).index(at()) }, Expr::id("dbg_wvalid"))];
    for (field, mem, w) in fields {
        let name = format!("dbg_w{field}");
        m.ports.push(Port::input(&name, *w));
        body.push(Stmt::nb(Expr::id(*mem).index(at()), Expr::id(&name)));
    }
    let write = Stmt::if_(Expr::id("dbg_we").land(Expr::id("reset").lnot()), body);
    block_assigning(m, valid).push(write);
}

/// The statements of module `m`'s clocked block that assigns register `reg`: where a debug
/// write port adds its writes of it (a register has one driving block).
pub(crate) fn block_assigning<'m>(m: &'m mut Module, reg: &str) -> &'m mut Vec<crate::verilog::Stmt> {
    use crate::verilog::{Item, Trigger};
    let block = m.items.iter_mut().find_map(|i| match i {
        Item::Always { trigger: Trigger::Posedge(c), body } if c == "clock" && assigns(body, reg) => Some(body),
        _ => None,
    });
    block.unwrap_or_else(|| panic!("module {} has no clocked block assigning {reg}", m.name))
}

/// Whether `stmts` assign (non-blocking) the whole of register `name` somewhere.
fn assigns(stmts: &[crate::verilog::Stmt], name: &str) -> bool {
    use crate::verilog::{Expr, Stmt};
    stmts.iter().any(|st| match st {
        Stmt::NonBlocking(Expr::Ident(n), _) => n == name,
        Stmt::If { then, otherwise, .. } => assigns(then, name) || assigns(otherwise, name),
        Stmt::Case { arms, default, .. } => {
            arms.iter().any(|(_, b)| assigns(b, name)) || default.as_ref().is_some_and(|b| assigns(b, name))
        }
        Stmt::For { body, .. } => assigns(body, name),
        _ => false,
    })
}

/// Gives a table module whose slots are registers (`Cam`, `Lru`, `Tcam`) a read port for the
/// debugger: input `dbg_slot`, outputs `dbg_valid` (the slot's valid bit, from the `valid`
/// register) and `dbg_<field>` for each `(field, memory, width)`: slot `dbg_slot`'s contents,
/// combinationally. A slot past the table reads as the memory's out-of-range word (the debug
/// unit's host asks only for slots inside it). Built only with the debug unit.
pub fn add_debug_read(m: &mut Module, n: u64, valid: &str, fields: &[(&str, &str, u32)]) {
    use crate::verilog::{index_width, Expr, Item, Port};
    let sw = index_width(n);
    m.ports.push(Port::input("dbg_slot", sw));
    m.ports.push(Port::output_wire("dbg_valid", 1));
    m.items.push(Item::comment("The debugger's read port: slot dbg_slot, combinationally."));
    let at = || if n == 1 { Expr::int(0) } else { Expr::id("dbg_slot") };
    let v = if n == 1 { Expr::id(valid) } else { Expr::id(valid).index(at()) };
    m.items.push(Item::assign(Expr::id("dbg_valid"), v));
    for (field, mem, w) in fields {
        let name = format!("dbg_{field}");
        m.ports.push(Port::output_wire(&name, *w));
        m.items.push(Item::assign(Expr::id(&name), Expr::id(*mem).index(at())));
    }
}

/// Propagates signal changes through `block` until nothing changes (rust-hdl's `simulate`,
/// with a panic when the block does not settle).
pub fn settle<B: Block>(block: &mut B) {
    for _ in 0..1000 {
        block.update_all();
        if !block.has_changed() {
            return;
        }
    }
    panic!("the block did not settle in 1000 iterations: a combinational loop?");
}

/// One clock cycle: the clock low, settle, the clock high (the rising edge), settle.
///
/// Set the inputs' `next` before calling; read the outputs' `val()` after it. Call
/// `connect_all()` once on a new block before its first tick.
pub fn tick<B: StateBlock>(block: &mut B) {
    block.clock_mut().next = false.into();
    settle(block);
    block.clock_mut().next = true.into();
    settle(block);
}

/// The block's ports as Verilog ports, in declaration order (rust-hdl's order).
pub fn ports<B: Block>(block: &B) -> Vec<Port> {
    struct Ports {
        depth: usize,
        ports: Vec<Port>,
    }
    impl Probe for Ports {
        fn visit_start_scope(&mut self, _name: &str, _node: &dyn Block) {
            self.depth += 1;
        }
        fn visit_atom(&mut self, name: &str, signal: &dyn Atom) {
            if self.depth != 1 {
                return;
            }
            let width = signal.bits() as u32;
            match signal.kind() {
                AtomKind::InputParameter => self.ports.push(Port::input(name, width)),
                AtomKind::OutputParameter | AtomKind::OutputPassthrough => {
                    self.ports.push(Port::output_wire(name, width))
                }
                AtomKind::InOutParameter => {
                    self.ports.push(Port::new(name, verilog::Dir::Inout, verilog::Net::Wire, width))
                }
                _ => {}
            }
        }
        fn visit_end_scope(&mut self, _name: &str, _node: &dyn Block) {
            self.depth -= 1;
        }
    }
    let mut probe = Ports { depth: 0, ports: vec![] };
    block.accept("top", &mut probe);
    probe.ports
}

/// The ports of [`Cam`] and [`Lru`] (one request and response interface, keyed by a
/// `key_width`-bit key with `value_width`-bit values), for their run-time modules.
pub(crate) fn keyed_table_ports(key_width: u32, value_width: u32) -> Vec<Port> {
    vec![
        Port::input("clock", 1),
        Port::input("reset", 1),
        Port::input("req_valid", 1),
        Port::input("req_op", 2),
        Port::input("req_key", key_width),
        Port::input("req_value", value_width),
        Port::output_wire("resp_valid", 1),
        Port::output_wire("resp_hit", 1),
        Port::output_wire("resp_value", value_width),
        Port::output_wire("resp_evicted", 1),
        Port::output_wire("resp_evicted_key", key_width),
    ]
}

/// The block as a stand-alone Verilog module called `name`: its ports and its body, for a
/// design built through [`crate::verilog`] rather than rust-hdl's `generate_verilog`.
pub fn module<B: StateBlock>(block: &B, name: &str) -> Module {
    let mut m = Module::new(name);
    m.ports = ports(block);
    m.items = block.verilog_body();
    m
}

/// `v` as a rust-hdl bit vector: bit `i` of the result is bit `i` of `v`'s value
/// (`N` must be `T::WIDTH`).
pub fn to_hdl<T: emu_core::Bits, const N: usize>(v: T) -> Bits<N> {
    assert_eq!(T::WIDTH, N, "to_hdl: a {}-bit value into Bits<{N}>", T::WIDTH);
    let mut be = vec![0u8; T::BYTES];
    v.write_be(&mut be);
    if N <= 64 {
        let x = be.iter().fold(0u64, |acc, &b| (acc << 8) | b as u64);
        return x.into();
    }
    let mut out = Bits::<N>::default();
    for bit in 0..N {
        if (be[T::BYTES - 1 - bit / 8] >> (bit % 8)) & 1 == 1 {
            out = out.replace_bit(bit, true);
        }
    }
    out
}

/// The inverse of [`to_hdl`].
pub fn from_hdl<T: emu_core::Bits, const N: usize>(v: Bits<N>) -> T {
    assert_eq!(T::WIDTH, N, "from_hdl: Bits<{N}> into a {}-bit value", T::WIDTH);
    let mut be = vec![0u8; T::BYTES];
    for bit in 0..N {
        if v.get_bit(bit) {
            be[T::BYTES - 1 - bit / 8] |= 1 << (bit % 8);
        }
    }
    T::read_be(&be)
}

/// `⌈log2 n⌉`, the exact address width of a memory of `n` words: 0 for a single word (which
/// is addressed by the constant 0).
pub(crate) fn address_width(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        verilog::index_width(n)
    }
}

/// The address into a memory of `n` words from the `width`-bit signal `index`: its low
/// [`address_width`] bits, zero-extended when it is narrower; the constant 0 for one word.
pub(crate) fn address(index: &str, width: u32, n: u64) -> verilog::Expr {
    use std::cmp::Ordering;
    use verilog::Expr;
    let aw = address_width(n);
    if aw == 0 {
        return Expr::int(0);
    }
    match width.cmp(&aw) {
        Ordering::Greater => Expr::id(index).slice(aw - 1, 0),
        Ordering::Equal => Expr::id(index),
        Ordering::Less => Expr::concat(vec![Expr::zero(aw - width), Expr::id(index)]),
    }
}

/// `index < n` for the `width`-bit signal `index`; the constant 1 when every value of `width`
/// bits is below `n`.
pub(crate) fn in_range(index: &str, width: u32, n: u64) -> verilog::Expr {
    use verilog::Expr;
    if width < 64 && n >= 1 << width {
        Expr::bit(true)
    } else {
        Expr::id(index).less_than(Expr::dec(width, n as u128))
    }
}

/// The value of a rust-hdl bit vector as an index, `None` when it is `limit` or more.
pub(crate) fn index_below<const N: usize>(v: Bits<N>, limit: usize) -> Option<usize> {
    if (64..N).any(|b| v.get_bit(b)) {
        return None;
    }
    let i = (0..N.min(64)).fold(0u64, |acc, b| acc | (v.get_bit(b) as u64) << b);
    usize::try_from(i).ok().filter(|&i| i < limit)
}

/// A value of `N` bits as a Verilog literal of `N` bits, written in hex.
pub(crate) fn literal<const N: usize>(v: Bits<N>) -> verilog::Literal {
    let mut limbs = vec![0u64; N.div_ceil(64)];
    for bit in 0..N {
        if v.get_bit(bit) {
            limbs[bit / 64] |= 1 << (bit % 64);
        }
    }
    verilog::Literal::from_limbs(N as u32, limbs, verilog::Radix::Hex)
}

/// Shared test support: a seeded generator and the tool checks every block runs.
#[cfg(test)]
pub(crate) mod test_support {
    use super::tools;
    use super::StateBlock;
    use rust_hdl::prelude::*;

    /// A tiny seeded generator so a failure replays (xorshift64).
    pub(crate) struct XorShift(pub(crate) u64);

    impl XorShift {
        /// The next value in `0..n` (`n` ≥ 1).
        pub(crate) fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }

        /// True with probability `num / den`.
        pub(crate) fn chance(&mut self, num: u64, den: u64) -> bool {
            self.below(den) < num
        }
    }

    /// The values of a block's ports, cycle by cycle, to replay the same inputs through the
    /// block's Verilog under Verilator and compare the outputs.
    pub(crate) struct Trace {
        inputs: Vec<crate::verilog::Port>,
        outputs: Vec<crate::verilog::Port>,
        stimulus: Vec<Vec<String>>,
        expected: Vec<Vec<String>>,
        limit: usize,
    }

    /// The hex values of a block's top-level ports, by name.
    fn port_values<B: Block>(block: &B) -> std::collections::HashMap<String, String> {
        struct Values {
            depth: usize,
            values: std::collections::HashMap<String, String>,
        }
        impl Probe for Values {
            fn visit_start_scope(&mut self, _name: &str, _node: &dyn Block) {
                self.depth += 1;
            }
            fn visit_atom(&mut self, name: &str, signal: &dyn Atom) {
                if self.depth == 1 {
                    let text = format!("{:x}", signal.verilog());
                    let hex = text.split("'h").nth(1).unwrap_or("0");
                    self.values.insert(name.to_string(), tools::normalize_hex(hex));
                }
            }
            fn visit_end_scope(&mut self, _name: &str, _node: &dyn Block) {
                self.depth -= 1;
            }
        }
        let mut probe = Values { depth: 0, values: Default::default() };
        block.accept("top", &mut probe);
        probe.values
    }

    impl Trace {
        /// An empty trace of `block`'s ports that keeps the first `limit` cycles.
        pub(crate) fn new<B: Block>(block: &B, limit: usize) -> Trace {
            let ports = super::ports(block);
            let (inputs, outputs) =
                ports.into_iter().filter(|p| p.name != "clock").partition(|p| p.dir == crate::verilog::Dir::Input);
            Trace { inputs, outputs, stimulus: vec![], expected: vec![], limit }
        }

        /// Records one cycle: call right after [`super::tick`].
        pub(crate) fn record<B: Block>(&mut self, block: &B) {
            if self.stimulus.len() >= self.limit {
                return;
            }
            let values = port_values(block);
            let row = |ports: &[crate::verilog::Port]| -> Vec<String> {
                ports.iter().map(|p| values[&p.name].clone()).collect()
            };
            self.stimulus.push(row(&self.inputs));
            self.expected.push(row(&self.outputs));
        }

        /// Replays the recorded inputs through `block`'s rust-hdl Verilog under Verilator
        /// and panics at the first cycle whose outputs differ from the recorded ones.
        pub(crate) fn replay_in_verilator<B: StateBlock>(&self, block: &B) {
            let source = generate_verilog(block);
            let got = tools::verilator_replay(&source, "top", &self.inputs, &self.outputs, &self.stimulus)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got.len(), self.expected.len(), "cycles replayed");
            for (cycle, (want, got)) in self.expected.iter().zip(&got).enumerate() {
                if want != got {
                    let show = |row: &[String]| {
                        self.outputs
                            .iter()
                            .zip(row)
                            .map(|(p, v)| format!("{}={v}", p.name))
                            .collect::<Vec<_>>()
                            .join(" ")
                    };
                    let inputs = self
                        .inputs
                        .iter()
                        .zip(&self.stimulus[cycle])
                        .map(|(p, v)| format!("{}={v}", p.name))
                        .collect::<Vec<_>>()
                        .join(" ");
                    panic!(
                        "Verilog and model differ at cycle {cycle}\n inputs:  {inputs}\n model:   {}\n verilog: {}",
                        show(want),
                        show(got)
                    );
                }
            }
        }
    }

    /// [`check_verilog`] without the synthesis: both Verilator lints.
    pub(crate) fn check_lint<B: StateBlock>(mut block: B, name: &str) {
        block.connect_all();
        let rust_hdl_verilog = generate_verilog(&block);
        if let Err(e) = tools::verilator_lint(&rust_hdl_verilog, "top", false) {
            panic!("{e}\n--- rust-hdl Verilog of {name} ---\n{rust_hdl_verilog}");
        }
        let standalone = super::module(&block, name).to_string();
        if let Err(e) = tools::verilator_lint(&standalone, name, false) {
            panic!("{e}\n--- stand-alone Verilog of {name} ---\n{standalone}");
        }
    }

    /// Generates the block's Verilog through rust-hdl (as the top module `top`) and as a
    /// stand-alone module, and checks both with `verilator --lint-only -Wall` (no warning
    /// class silenced) and the rust-hdl one with yosys `synth_xilinx`. Returns the synthesis
    /// statistics of the rust-hdl one.
    pub(crate) fn check_verilog<B: StateBlock>(mut block: B, name: &str) -> tools::SynthStats {
        block.connect_all();
        let rust_hdl_verilog = generate_verilog(&block);
        check_lint(block, name);
        match tools::yosys_synth_xilinx(&rust_hdl_verilog, "top") {
            Ok(stats) => stats,
            Err(e) => panic!("{e}\n--- rust-hdl Verilog of {name} ---\n{rust_hdl_verilog}"),
        }
    }
}

#[cfg(test)]
mod test {
    use super::test_support::XorShift;
    use super::*;

    /// A parent block the way the back end builds one: two state elements as children, driven
    /// by the parent's `#[hdl_gen]` logic (a MAC learning step: insert the source, count the
    /// misses).
    #[derive(LogicBlock)]
    struct Learner {
        clock: Signal<In, Clock>,
        reset: Signal<In, Bit>,
        valid: Signal<In, Bit>,
        mac: Signal<In, Bits<48>>,
        port: Signal<In, Bits<8>>,
        known: Signal<Out, Bit>,
        evicted: Signal<Out, Bit>,
        evicted_entry: Signal<Out, Bits<56>>,
        misses: Signal<Out, Bits<16>>,
        mac_table: Cam<48, 8, 4>,
        missed: Counter<16>,
    }

    impl Logic for Learner {
        #[hdl_gen]
        fn update(&mut self) {
            self.mac_table.clock.next = self.clock.val();
            self.mac_table.reset.next = self.reset.val();
            self.mac_table.req_valid.next = self.valid.val();
            self.mac_table.req_op.next = 1.into();
            self.mac_table.req_key.next = self.mac.val();
            self.mac_table.req_value.next = self.port.val();
            self.missed.clock.next = self.clock.val();
            self.missed.reset.next = self.reset.val();
            self.missed.req_valid.next = self.mac_table.resp_valid.val() & !self.mac_table.resp_hit.val();
            self.missed.req_op.next = false;
            self.missed.req_data.next = 1.into();
            self.known.next = self.mac_table.resp_hit.val();
            self.evicted.next = self.mac_table.resp_evicted.val();
            self.evicted_entry.next = bit_cast::<56, 48>(self.mac_table.resp_evicted_key.val())
                | (bit_cast::<56, 8>(self.mac_table.resp_value.val()) << 48);
            self.misses.next = self.missed.value.val();
        }
    }

    impl StateBlock for Learner {
        fn clock_mut(&mut self) -> &mut Signal<In, Clock> {
            &mut self.clock
        }
        fn verilog_body(&self) -> Vec<Item> {
            vec![]
        }
    }

    /// Two blocks under one parent: the model steps as one circuit, and rust-hdl's Verilog of
    /// the whole (each child its own module, the parent's code generated by rust-hdl) lints —
    /// with WIDTH silenced, which rust-hdl's own generated code trips — and synthesizes.
    #[test]
    fn state_blocks_compose_under_a_parent() {
        let mut uut = Learner {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            mac: Default::default(),
            port: Default::default(),
            known: Default::default(),
            evicted: Default::default(),
            evicted_entry: Default::default(),
            misses: Default::default(),
            mac_table: Default::default(),
            missed: Default::default(),
        };
        uut.connect_all();
        let mut rng = XorShift(3);
        let mut cpu: emu_core::Cam<u64, u8, 4> = emu_core::Cam::default();
        let mut misses = 0u64;
        for step in 0..2_000 {
            let mac = rng.below(6);
            uut.valid.next = true;
            uut.mac.next = mac.into();
            uut.port.next = rng.below(4).into();
            tick(&mut uut);
            let known = cpu.contains(mac);
            cpu.insert(mac, 0);
            assert_eq!(uut.known.val(), known, "step {step}");
            // The counter counts the miss one cycle later.
            assert_eq!(uut.misses.val().to_u64(), misses, "step {step}");
            misses += !known as u64;
        }
        let verilog = generate_verilog(&uut);
        assert!(verilog.contains("module top$mac_table("), "{verilog}");
        tools::verilator_lint(&verilog, "top", true).unwrap_or_else(|e| panic!("{e}\n{verilog}"));
        tools::yosys_synth_xilinx(&verilog, "top").unwrap_or_else(|e| panic!("{e}\n{verilog}"));
    }
}

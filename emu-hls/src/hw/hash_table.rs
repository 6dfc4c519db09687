//! [`HashTable`]: a set-associative table in block RAM, hashed by CRC-32.

use super::{address_width, wrapper, StateBlock};
use crate::verilog::{Expr, Item, Literal, Module, Port, Radix, Stmt};
use rust_hdl::prelude::*;

/// The CRC-32 of a fixed-width key as XORs of its bits: CRC-32 over a fixed number of bytes is
/// affine over GF(2), so output bit `j` of `crc32(be(key))` is the parity of
/// `key & masks[j]`, XOR bit `j` of `constant`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Crc32Matrix {
    /// Per output bit `j` (0 = least significant), the key bits it depends on, as 64-bit limbs
    /// least significant first (bit `b` of the mask is bit `b` of the key's value).
    pub masks: Vec<Vec<u64>>,
    /// The CRC of the all-zero key.
    pub constant: u32,
}

/// The [`Crc32Matrix`] of `emu_core::state::crc32` over the big-endian byte form of a
/// `key_width`-bit key (`⌈key_width / 8⌉` bytes, the value right-aligned), which is what
/// `emu_core::HashTable` hashes.
pub fn crc32_matrix(key_width: usize) -> Crc32Matrix {
    let bytes = key_width.div_ceil(8);
    let limbs = key_width.div_ceil(64);
    let zero = vec![0u8; bytes];
    let constant = emu_core::state::crc32(&zero);
    let mut masks = vec![vec![0u64; limbs]; 32];
    for b in 0..key_width {
        let mut key = zero.clone();
        key[bytes - 1 - b / 8] = 1 << (b % 8);
        let column = emu_core::state::crc32(&key) ^ constant;
        for (j, mask) in masks.iter_mut().enumerate() {
            if column >> j & 1 == 1 {
                mask[b / 64] |= 1 << (b % 64);
            }
        }
    }
    Crc32Matrix { masks, constant }
}

/// A set-associative table of `N` (key, value) entries in `N / WAYS` sets of `WAYS` ways: the
/// hardware of `emu_core::HashTable<K, V, N, WAYS>` with `K::WIDTH = KW`, `V::WIDTH = VW`.
///
/// A set is one word of a block RAM (per way its key, value and valid bit; the set's
/// round-robin pointer above them), so nothing of the table is in registers: after a reset the
/// module sweeps the RAM empty, a set a cycle (`sweeping` high, requests not taken), and an
/// FPGA's RAM starts empty. The set of a key is the low `log2(N / WAYS)` bits of the CRC-32 of
/// its big-endian bytes, computed as XOR trees ([`crc32_matrix`]). Semantics (the CPU's,
/// exactly):
///
/// - a key lives only in its set; way `w` of set `s` is slot `s × WAYS + w`;
/// - *get* returns the value of the way of the key's set holding the key;
/// - *insert* of a present key overwrites its value in place (the pointer stays); of a new
///   key fills the lowest-index empty way of its set, even when other sets have room; into a
///   full set it replaces the way at that set's pointer, returns the old entry and advances
///   that pointer by one modulo `WAYS`;
/// - *remove* empties the key's way; no pointer moves.
///
/// A request takes two cycles — the first reads the set's word from the RAM, the second
/// compares the `WAYS` keys, writes the word back and answers — so `req_ready` is low in the
/// second (and for `N / WAYS` cycles after a reset): a request is taken at a rising edge where
/// `req_valid` and `req_ready` are both high and answered two cycles later. `N / WAYS` must be a
/// power of two, as on the CPU.
#[derive(Clone, Debug, LogicBlock)]
pub struct HashTable<const KW: usize, const VW: usize, const N: usize, const WAYS: usize> {
    // Clocking.
    /// The clock: state and responses change only at its rising edge.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: drops a request in flight, clears the response
    /// registers, ignores the request and starts the sweep that empties every way and sets
    /// every pointer to 0.
    pub reset: Signal<In, Bit>,

    // The request port.
    /// Request strobe: the request is taken at a rising edge where it and `req_ready` are high.
    pub req_valid: Signal<In, Bit>,
    /// High when a request can be taken: low during the second cycle of a request and while
    /// sweeping (a request then is ignored).
    pub req_ready: Signal<Out, Bit>,
    /// The operation: [`HashTable::OP_GET`], [`HashTable::OP_INSERT`] or
    /// [`HashTable::OP_REMOVE`] (3 is a get).
    pub req_op: Signal<In, Bits<2>>,
    /// The key looked up, inserted or removed.
    pub req_key: Signal<In, Bits<KW>>,
    /// The value inserted (ignored by get and remove).
    pub req_value: Signal<In, Bits<VW>>,

    // The response port: registers, written two cycles after each request.
    /// High for the one cycle after a request's second cycle: the `resp_*` ports hold its
    /// response.
    pub resp_valid: Signal<Out, Bit>,
    /// The key was in its set (get: found; insert: overwritten in place; remove: removed).
    pub resp_hit: Signal<Out, Bit>,
    /// get hit: the value found; remove hit: the value removed; insert that evicted: the
    /// evicted entry's value. 0 otherwise.
    pub resp_value: Signal<Out, Bits<VW>>,
    /// An insert evicted an entry (its set was full and the key new).
    pub resp_evicted: Signal<Out, Bit>,
    /// The evicted entry's key, when `resp_evicted`; 0 otherwise.
    pub resp_evicted_key: Signal<Out, Bits<KW>>,
    /// High while the RAM is being swept empty, `N / WAYS` cycles after a reset (and after
    /// power-on): the NF's core takes no frame then.
    pub sweeping: Signal<Out, Bit>,

    /// The model's sets: per way, the (key, value) of a valid one.
    _sets: Vec<Vec<Option<(Bits<KW>, Bits<VW>)>>>,
    /// The model's round-robin pointer of each set.
    _ptrs: Vec<usize>,
    /// The model's request in flight: (op, key, value).
    _pending: Option<(u64, Bits<KW>, Bits<VW>)>,
    /// Cycles of the sweep left.
    _sweep: usize,
}

impl<const KW: usize, const VW: usize, const N: usize, const WAYS: usize> Default for HashTable<KW, VW, N, WAYS> {
    fn default() -> Self {
        assert!(
            WAYS >= 1 && N >= WAYS && N.is_multiple_of(WAYS) && (N / WAYS).is_power_of_two(),
            "HashTable needs N a positive multiple of WAYS and N / WAYS a power of two"
        );
        HashTable {
            clock: Default::default(),
            reset: Default::default(),
            req_valid: Default::default(),
            req_ready: Signal::new_with_default(false),
            req_op: Default::default(),
            req_key: Default::default(),
            req_value: Default::default(),
            resp_valid: Default::default(),
            resp_hit: Default::default(),
            resp_value: Default::default(),
            resp_evicted: Default::default(),
            resp_evicted_key: Default::default(),
            sweeping: Signal::new_with_default(true),
            _sets: vec![vec![None; WAYS]; N / WAYS],
            _ptrs: vec![0; N / WAYS],
            _pending: None,
            _sweep: N / WAYS,
        }
    }
}

impl<const KW: usize, const VW: usize, const N: usize, const WAYS: usize> HashTable<KW, VW, N, WAYS> {
    /// `req_op` of a get (the CPU's `get` and `contains`).
    pub const OP_GET: u64 = 0;
    /// `req_op` of an insert.
    pub const OP_INSERT: u64 = 1;
    /// `req_op` of a remove.
    pub const OP_REMOVE: u64 = 2;
    /// Cycles from a request to its response.
    pub const LATENCY: usize = 2;
    /// Cycles from one request to the next.
    pub const INTERVAL: usize = 2;
    /// The number of sets, `N / WAYS`.
    pub const SETS: usize = N / WAYS;

    /// The model's entry in `slot = set × WAYS + way`, `None` when empty or `slot ≥ N` (the
    /// CPU's `entries`, one slot at a time).
    pub fn entry(&self, slot: usize) -> Option<(Bits<KW>, Bits<VW>)> {
        self._sets.get(slot / WAYS)?.get(slot % WAYS).copied().flatten()
    }

    /// The set of `key`: the low bits of the CRC-32 of its big-endian bytes (the CPU's
    /// `set_of`).
    pub fn set_of(key: Bits<KW>) -> usize {
        let bytes = KW.div_ceil(8);
        let mut be = vec![0u8; bytes];
        for b in 0..KW {
            if key.get_bit(b) {
                be[bytes - 1 - b / 8] |= 1 << (b % 8);
            }
        }
        emu_core::state::crc32(&be) as usize & (Self::SETS - 1)
    }

    /// Performs the request in flight on the model and writes its response.
    fn answer(&mut self, op: u64, key: Bits<KW>, value: Bits<VW>) {
        let s = Self::set_of(key);
        let set = &mut self._sets[s];
        let hit = set.iter().position(|e| matches!(e, Some((k, _)) if *k == key));
        let free = set.iter().position(Option::is_none);
        self.resp_valid.next = true;
        self.resp_hit.next = hit.is_some();
        self.resp_value.next = 0.into();
        self.resp_evicted.next = false;
        self.resp_evicted_key.next = 0.into();
        match (op, hit) {
            (Self::OP_INSERT, Some(w)) => set[w] = Some((key, value)),
            (Self::OP_INSERT, None) => match free {
                Some(w) => set[w] = Some((key, value)),
                None => {
                    let w = self._ptrs[s];
                    let (old_key, old_value) = set[w].replace((key, value)).expect("full");
                    self.resp_evicted.next = true;
                    self.resp_evicted_key.next = old_key;
                    self.resp_value.next = old_value;
                    self._ptrs[s] = if w + 1 == WAYS { 0 } else { w + 1 };
                }
            },
            (Self::OP_REMOVE, Some(w)) => {
                self.resp_value.next = set[w].take().expect("a hit way is valid").1;
            }
            (Self::OP_REMOVE, None) => {}
            (_, Some(w)) => self.resp_value.next = set[w].expect("a hit way is valid").1,
            (_, None) => {}
        }
    }
}

impl<const KW: usize, const VW: usize, const N: usize, const WAYS: usize> Logic for HashTable<KW, VW, N, WAYS> {
    fn update(&mut self) {
        if !self.clock.pos_edge() {
            return;
        }
        if self.reset.val() {
            // (The RAM is empty once the sweep is done; no request is taken before.)
            self._sets.iter_mut().flatten().for_each(|e| *e = None);
            self._ptrs.iter_mut().for_each(|p| *p = 0);
            self._pending = None;
            self._sweep = Self::SETS;
            self.resp_valid.next = false;
            self.resp_hit.next = false;
            self.resp_value.next = 0.into();
            self.resp_evicted.next = false;
            self.resp_evicted_key.next = 0.into();
        } else if self._sweep > 0 {
            self._sweep -= 1;
        } else if let Some((op, key, value)) = self._pending.take() {
            self.answer(op, key, value);
        } else {
            self.resp_valid.next = false;
            if self.req_valid.val() {
                self._pending = Some((self.req_op.val().to_u64(), self.req_key.val(), self.req_value.val()));
            }
        }
        self.req_ready.next = self._pending.is_none() && self._sweep == 0;
        self.sweeping.next = self._sweep > 0;
    }

    fn connect(&mut self) {
        self.req_ready.connect();
        self.resp_valid.connect();
        self.resp_hit.connect();
        self.resp_value.connect();
        self.resp_evicted.connect();
        self.resp_evicted_key.connect();
        self.sweeping.connect();
    }

    fn hdl(&self) -> Verilog {
        wrapper(self.verilog_body())
    }
}

impl<const KW: usize, const VW: usize, const N: usize, const WAYS: usize> StateBlock for HashTable<KW, VW, N, WAYS> {
    fn clock_mut(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }

    fn verilog_body(&self) -> Vec<Item> {
        body(KW as u32, VW as u32, N as u64, WAYS as u64, Replacement::RoundRobin)
    }
}

/// The module of a [`HashTable`] of `size` entries in sets of `ways` for parameters known only
/// at run time (the back end's, from an NF's IR): the same ports and body as
/// [`module`](super::module) of a `HashTable<key_width, value_width, size, ways>`.
pub fn hash_table_module(name: &str, key_width: u32, value_width: u32, size: u64, ways: u64) -> Module {
    assert!(
        ways >= 1 && size >= ways && size.is_multiple_of(ways) && (size / ways).is_power_of_two(),
        "hash_table_module: size must be a positive multiple of ways and size / ways a power of two"
    );
    Module {
        name: name.into(),
        ports: vec![
            Port::input("clock", 1),
            Port::input("reset", 1),
            Port::input("req_valid", 1),
            Port::output_wire("req_ready", 1),
            Port::input("req_op", 2),
            Port::input("req_key", key_width),
            Port::input("req_value", value_width),
            Port::output_wire("resp_valid", 1),
            Port::output_wire("resp_hit", 1),
            Port::output_wire("resp_value", value_width),
            Port::output_wire("resp_evicted", 1),
            Port::output_wire("resp_evicted_key", key_width),
            Port::output_wire("sweeping", 1),
        ],
        items: body(key_width, value_width, size, ways, Replacement::RoundRobin),
    }
}

/// Which entry a full set gives up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replacement {
    /// The way at the set's round-robin pointer (`emu_core::HashTable`), kept in the set's
    /// word above its ways.
    RoundRobin,
    /// The set's least recently used way (`emu_core::Lru` in sets): each way's age, ⌈log2
    /// WAYS⌉ bits, is kept in the set's word above its value, so a get that hits writes the word
    /// back too; op 3 is a peek (answers, writes nothing).
    Lru,
}

impl Replacement {
    /// The bits of a way's age in the set's word.
    fn age_bits(self, ways: u64) -> u32 {
        match self {
            Replacement::RoundRobin => 0,
            Replacement::Lru => address_width(ways),
        }
    }
}

/// The module of an `emu_core::Lru<K, V, size, ways>` in `size / ways` sets: a hash table's
/// ports, block RAM and two cycles per request ([`hash_table_module`]), with exact LRU
/// replacement in each set; op codes `hw::Lru`'s (0 get, 1 insert, 2 remove, 3 peek).
pub fn lru_sets_module(name: &str, key_width: u32, value_width: u32, size: u64, ways: u64) -> Module {
    let mut m = hash_table_module(name, key_width, value_width, size, ways);
    m.items = body(key_width, value_width, size, ways, Replacement::Lru);
    m
}

/// Gives a hash table module a read port for the debugger (built only with the debug unit):
/// input `dbg_slot` (slot `s × WAYS + w`), outputs `dbg_valid`, `dbg_key` and `dbg_value` (from
/// its set's word, read through the block RAM's second port: they show the slot `dbg_slot`
/// named one cycle before). `WAYS` must be a power of two; `false`, and no port, otherwise.
pub fn add_debug_read(m: &mut Module, kw: u32, vw: u32, n: u64, ways: u64, policy: Replacement) -> bool {
    if !ways.is_power_of_two() {
        return false;
    }
    let id = Expr::id;
    let l = Layout::new(kw, vw, n, ways, policy);
    let sw = crate::verilog::index_width(n);
    m.ports.push(Port::input("dbg_slot", sw));
    for (name, w) in [("dbg_valid", 1), ("dbg_key", kw), ("dbg_value", vw)] {
        m.ports.push(Port::output_wire(name, w));
    }
    m.items.push(Item::comment("The debugger's read port: the slot's set's word, a cycle later."));
    m.items.push(Item::reg("dbg_word_q", l.word_w));
    let mut clocked = vec![Stmt::nb(id("dbg_word_q"), id("set_word").index(debug_slot_set(l.sb, l.wb)))];
    if l.wb > 0 {
        m.items.push(Item::reg("dbg_way_q", l.wb));
        clocked.push(Stmt::nb(id("dbg_way_q"), id("dbg_slot").slice(l.wb - 1, 0)));
    }
    m.items.push(Item::always_posedge("clock", clocked));
    let is_way = |w: u64| id("dbg_way_q").equals(Expr::dec(l.wb, w as u128));
    m.items.push(Item::assign(id("dbg_valid"), l.pick(&is_way, &|w| l.valid("dbg_word_q", w))));
    m.items.push(Item::assign(id("dbg_key"), l.pick(&is_way, &|w| l.key("dbg_word_q", w))));
    m.items.push(Item::assign(id("dbg_value"), l.pick(&is_way, &|w| l.value("dbg_word_q", w))));
    true
}

/// Gives a hash table module with its debugger's read port ([`add_debug_read`]) a write port:
/// at a rising edge with `dbg_we` high (and `reset` low), way `dbg_slot mod WAYS` of set
/// `dbg_slot / WAYS` becomes valid or empty as `dbg_wvalid` says and takes (`dbg_wkey`,
/// `dbg_wvalue`), in one cycle: the set's word is the read port's (read the cycle before, so
/// `dbg_slot` must have named the slot a cycle before `dbg_we`), written back through the
/// RAM's second port; no pointer moves. Output `dbg_busy` is high
/// while a request is in flight and the cycle after (when the read port's word may predate
/// the request's write), and while sweeping: the debug unit writes only when it is low,
/// between frames, after checking what the CPU checks (the key hashes to the slot's set, no
/// other way holds it). With LRU replacement the set's ages move as the CPU's debugger write
/// moves them: the old entry leaves as by a remove, the new one arrives as the set's most
/// recently used.
pub fn add_debug_write(m: &mut Module, kw: u32, vw: u32, n: u64, ways: u64, policy: Replacement) {
    let id = Expr::id;
    let l = Layout::new(kw, vw, n, ways, policy);
    let (wb, ab) = (l.wb, l.ab);
    for (name, w) in [("dbg_we", 1), ("dbg_wvalid", 1), ("dbg_wkey", kw), ("dbg_wvalue", vw)] {
        m.ports.push(Port::input(name, w));
    }
    m.ports.push(Port::output_wire("dbg_busy", 1));
    m.items.push(Item::comment("The debugger's write port: the read port's word, one way replaced."));
    m.items.push(Item::reg("busy_q", 1));
    m.items.push(Item::assign(id("dbg_busy"), id("busy").lor(id("busy_q")).lor(id("sweep_q"))));
    let way_of_slot = |w: u64| {
        if wb == 0 {
            Expr::bit(true)
        } else {
            id("dbg_slot").slice(wb - 1, 0).equals(Expr::dec(wb, w as u128))
        }
    };
    if ab > 0 {
        // The written slot's age and valid bit, in the word read for `dbg_slot`.
        m.items.push(Item::wire("dbg_age", ab));
        m.items.push(Item::assign(id("dbg_age"), l.pick(&way_of_slot, &|w| l.age("dbg_word_q", w))));
        m.items.push(Item::wire("dbg_was_valid", 1));
        m.items.push(Item::assign(id("dbg_was_valid"), l.pick(&way_of_slot, &|w| l.valid("dbg_word_q", w))));
    }
    m.items.push(Item::reg("dbg_new_word", l.word_w));
    let mut build = vec![Stmt::blocking(id("dbg_new_word"), id("dbg_word_q"))];
    for w in 0..ways {
        build.push(Stmt::if_(
            way_of_slot(w),
            vec![
                Stmt::blocking(l.entry("dbg_new_word", w), Expr::concat(vec![id("dbg_wvalue"), id("dbg_wkey")])),
                Stmt::blocking(l.valid("dbg_new_word", w), id("dbg_wvalid")),
            ],
        ));
        if ab > 0 {
            // The old entry leaves as by a remove, the new one arrives as the most recent.
            let age = l.moved_age(
                "dbg_word_q",
                w,
                way_of_slot(w),
                id("dbg_age"),
                id("dbg_was_valid"),
                id("dbg_wvalid").lnot(),
            );
            build.push(Stmt::blocking(l.age("dbg_new_word", w), age));
        }
    }
    m.items.push(Item::always_comb(build));
    let set = debug_slot_set(l.sb, wb);
    // Never while busy or sweeping (the unit waits for dbg_busy anyway): so yosys sees this
    // write and the module's own exclusive, one RAM write port.
    let we = id("dbg_we").land(id("reset").lnot()).land(id("busy").lnot()).land(id("sweep_q").lnot());
    m.items.push(Item::always_posedge(
        "clock",
        vec![
            Stmt::nb(id("busy_q"), id("busy")),
            Stmt::if_(we, vec![Stmt::nb(id("set_word").index(set), id("dbg_new_word"))]),
        ],
    ));
}

/// The set of slot `dbg_slot` (`dbg_slot / WAYS`), for the debugger's ports.
fn debug_slot_set(sb: u32, wb: u32) -> Expr {
    if sb == 0 {
        Expr::int(0)
    } else {
        Expr::id("dbg_slot").slice(wb + sb - 1, wb)
    }
}

/// The body of a hash table of `n` entries of a `kw`-bit key and a `vw`-bit value in sets of
/// `ways`, shared by the block and [`hash_table_module`] so that the two cannot drift apart.
/// (The op codes do not depend on the parameters: `HashTable::<1, 1, 1, 1>`'s are every
/// `HashTable`'s.)
fn body(kw: u32, vw: u32, n: u64, ways: u64, policy: Replacement) -> Vec<Item> {
    let id = Expr::id;
    let l = Layout::new(kw, vw, n, ways, policy);
    let Layout { sets, sb, wb, ab, entry_w, word_w, .. } = l;
    let lru = policy == Replacement::Lru;
    let round_robin = !lru && wb > 0; // a pointer per set
    let at_set = |at: &'static str| -> Expr {
        if sb == 0 {
            id("set_word").index(Expr::int(0))
        } else {
            id("set_word").index(id(at))
        }
    };
    let way_key = |w: u64| l.key("word_q", w);
    let way_value = |w: u64| l.value("word_q", w);
    let way = |w: u64| Expr::dec(wb, w as u128);
    // `name == w` for a way-number variable; always true with one way.
    let is_way = |name: &'static str, w: u64| {
        if wb == 0 {
            Expr::bit(true)
        } else {
            Expr::id(name).equals(way(w))
        }
    };
    let responses = [
        ("resp_valid_q", 1),
        ("resp_hit_q", 1),
        ("resp_value_q", vw),
        ("resp_evicted_q", 1),
        ("resp_evicted_key_q", kw),
    ];

    let mut items = vec![
        Item::comment(if lru {
            format!(
                "Lru: {sets} sets of {ways} ways. A set is one {word_w}-bit word of block RAM: way w at\n\
                 bits [w*{entry_w} +: {entry_w}], key low, then value, age and valid bit. Two \
                 cycles per request:\nread the set's word, then compare, write back and answer. \
                 An age is the number of\nthe set's entries used more recently. After a reset the \
                 sets are swept empty, one a\ncycle (`sweeping`), and requests wait."
            )
        } else {
            format!(
                "HashTable: {sets} sets of {ways} ways. A set is one {word_w}-bit word of block RAM: \
                 way w at\nbits [w*{entry_w} +: {entry_w}], key low, then value and valid bit; \
                 the round-robin pointer\nabove the ways. Two cycles per request: read the set's \
                 word, then compare, write back\nand answer. After a reset the sets are swept \
                 empty, one a cycle (`sweeping`), and\nrequests wait."
            )
        }),
        Item::memory("set_word", word_w, sets).with_attr("ram_style", "block"),
    ];
    items.push(Item::reg("sweep_q", 1));
    if sb > 0 {
        items.push(Item::reg("sweep_set_q", sb));
    }
    items.push(Item::reg("busy", 1));
    items.push(Item::reg("op_q", 2));
    items.push(Item::reg("key_q", kw));
    items.push(Item::reg("value_q", vw));
    if sb > 0 {
        items.push(Item::reg("set_q", sb));
    }
    items.push(Item::reg("word_q", word_w));
    for (name, w) in responses {
        items.push(Item::reg(name, w));
    }

    // The set of the requested key: the low bits of its CRC-32, as XOR trees.
    if sb > 0 {
        let crc = crc32_matrix(kw as usize);
        items.push(Item::Blank);
        items.push(Item::comment(
            "The set of req_key: bit j of the CRC-32 of its big-endian bytes is the parity\n\
             of req_key & MASK_j, inverted where the CRC of the zero key has a 1.",
        ));
        items.push(Item::wire("req_set", sb));
        let bits = (0..sb)
            .rev()
            .map(|j| {
                let mask = Expr::Lit(Literal::from_limbs(kw, crc.masks[j as usize].clone(), Radix::Hex));
                let parity = id("req_key").and(mask).parity();
                if crc.constant >> j & 1 == 1 {
                    parity.inv()
                } else {
                    parity
                }
            })
            .collect();
        items.push(Item::assign(id("req_set"), Expr::concat(bits)));
    }
    let req_set = if sb == 0 { Expr::int(0) } else { id("req_set") };

    // Reset: responses cleared, and the sweep started (the RAM is emptied a set a cycle).
    let mut clear = vec![Stmt::nb(id("busy"), Expr::bit(false)), Stmt::nb(id("sweep_q"), Expr::bit(true))];
    if sb > 0 {
        clear.push(Stmt::nb(id("sweep_set_q"), Expr::zero(sb)));
    }
    for (name, w) in responses {
        clear.push(Stmt::nb(id(name), Expr::zero(w)));
    }
    // Initial contents: as after a reset (the sweep then finds the RAM empty already).
    items.push(Item::integer("i"));
    let mut init = vec![Stmt::For {
        var: "i".into(),
        from: 0,
        to: sets,
        body: vec![Stmt::blocking(id("set_word").index(id("i")), Expr::zero(word_w))],
    }];
    init.extend(clear.iter().map(|st| match st {
        Stmt::NonBlocking(l, r) => Stmt::blocking(l.clone(), r.clone()),
        other => other.clone(),
    }));
    init.push(Stmt::blocking(id("op_q"), Expr::zero(2)));
    init.push(Stmt::blocking(id("key_q"), Expr::zero(kw)));
    init.push(Stmt::blocking(id("value_q"), Expr::zero(vw)));
    if sb > 0 {
        init.push(Stmt::blocking(id("set_q"), Expr::zero(sb)));
    }
    init.push(Stmt::blocking(id("word_q"), Expr::zero(word_w)));
    items.push(Item::Initial(init));

    // Second cycle: compare the ways of the word read.
    items.push(Item::Blank);
    items.push(Item::comment(
        "Second cycle: the way holding key_q, the lowest empty way, the victim, and the\n\
         set's word after the request.",
    ));
    if round_robin {
        items.push(Item::wire("ptr", wb));
        items.push(Item::assign(id("ptr"), l.pointer("word_q")));
    }
    let valid = |w: u64| l.valid("word_q", w);
    let mut regs = vec![
        ("hit", 1),
        ("full", 1),
        ("found_value", vw),
        ("victim_key", kw),
        ("victim_value", vw),
        ("new_word", word_w),
    ];
    if wb > 0 {
        regs.extend([("hit_way", wb), ("free_way", wb), ("target", wb)]);
    }
    if lru && wb > 0 {
        regs.push(("victim_way", wb));
    }
    if ab > 0 {
        regs.push(("hit_age", ab));
    }
    for (name, w) in &regs {
        items.push(Item::reg(*name, *w));
    }
    let set_way = |flag: &'static str, value: bool, number: &'static str, w: u64| {
        let mut s = vec![Stmt::blocking(Expr::id(flag), Expr::bit(value))];
        if wb > 0 {
            s.push(Stmt::blocking(Expr::id(number), way(w)));
        }
        s
    };
    let mut compare = set_way("hit", false, "hit_way", 0);
    compare.extend(set_way("full", true, "free_way", 0));
    compare.push(Stmt::blocking(id("found_value"), Expr::zero(vw)));
    for w in (0..ways).rev() {
        let mut found = set_way("hit", true, "hit_way", w);
        found.push(Stmt::blocking(id("found_value"), way_value(w)));
        compare.push(Stmt::if_(valid(w).land(way_key(w).equals(id("key_q"))), found));
        compare.push(Stmt::if_(valid(w).lnot(), set_way("full", false, "free_way", w)));
    }
    // The victim: at the pointer, or (LRU) the way of the oldest age (a full set's ages are
    // exactly 0..WAYS).
    compare.push(Stmt::blocking(id("victim_key"), way_key(0)));
    compare.push(Stmt::blocking(id("victim_value"), way_value(0)));
    if lru && wb > 0 {
        compare.push(Stmt::blocking(id("victim_way"), way(0)));
    }
    for w in 1..ways {
        let mut pick =
            vec![Stmt::blocking(id("victim_key"), way_key(w)), Stmt::blocking(id("victim_value"), way_value(w))];
        let at = if lru {
            pick.push(Stmt::blocking(id("victim_way"), way(w)));
            l.age("word_q", w).equals(Expr::dec(ab, (ways - 1) as u128))
        } else {
            is_way("ptr", w)
        };
        compare.push(Stmt::if_(at, pick));
    }
    if ab > 0 {
        compare.push(Stmt::blocking(id("hit_age"), l.pick(&|w| is_way("hit_way", w), &|w| l.age("word_q", w))));
    }
    // The way an insert writes (and, LRU, a get hit makes the most recent): the hit, else the
    // lowest empty, else the victim.
    if wb > 0 {
        let victim = if lru { id("victim_way") } else { id("ptr") };
        compare.push(Stmt::blocking(
            id("target"),
            Expr::mux(id("hit"), id("hit_way"), Expr::mux(id("full"), victim, id("free_way"))),
        ));
    }
    compare.push(Stmt::blocking(id("new_word"), id("word_q")));
    let op_is = |op: u64| id("op_q").equals(Expr::dec(2, op as u128));
    let (op_insert, op_remove) = (HashTable::<1, 1, 1, 1>::OP_INSERT, HashTable::<1, 1, 1, 1>::OP_REMOVE);
    for w in 0..ways {
        // An insert fills its target; a remove that hit empties its way.
        compare.push(Stmt::if_(
            is_way("target", w).land(op_is(op_insert)),
            vec![
                Stmt::blocking(l.entry("new_word", w), Expr::concat(vec![id("value_q"), id("key_q")])),
                Stmt::blocking(l.valid("new_word", w), Expr::bit(true)),
            ],
        ));
        compare.push(Stmt::if_(
            is_way("hit_way", w).land(id("hit")).land(op_is(op_remove)),
            vec![Stmt::blocking(l.valid("new_word", w), Expr::bit(false))],
        ));
    }
    if round_robin {
        // A full set's insert of a new key moves its pointer past the victim.
        compare.push(Stmt::if_(
            op_is(op_insert).land(id("hit").lnot()).land(id("full")),
            vec![Stmt::blocking(
                l.pointer("new_word"),
                Expr::mux(id("ptr").equals(way(ways - 1)), way(0), id("ptr").plus(way(1))),
            )],
        ));
    }
    if ab > 0 {
        // The ages: the target used (a get that hit, an insert), or a remove's hit emptied.
        for w in 0..ways {
            let age = l.moved_age("word_q", w, is_way("target", w), id("hit_age"), id("hit"), op_is(op_remove));
            compare.push(Stmt::blocking(l.age("new_word", w), age));
        }
    }
    items.push(Item::always_comb(compare));

    // The RAM port: the sweep after a reset; else read in a request's first cycle, write back
    // in its second.
    items.push(Item::Blank);
    items.push(Item::comment(
        "The RAM port: the sweep writes a set a cycle after a reset; a request's first cycle\n\
         reads the set's word, its second writes it back when it changed.",
    ));
    let changed = if lru {
        // Everything but a peek and a miss changes the set's ages.
        op_is(op_insert).lor(id("hit").land(op_is(3).lnot()))
    } else {
        op_is(op_insert).lor(id("hit").land(op_is(op_remove)))
    };
    items.push(Item::always_posedge(
        "clock",
        vec![Stmt::if_(
            id("reset").lnot(),
            vec![Stmt::if_else(
                id("sweep_q"),
                vec![Stmt::nb(at_set("sweep_set_q"), Expr::zero(word_w))],
                vec![Stmt::if_else(
                    id("busy"),
                    vec![Stmt::if_(changed, vec![Stmt::nb(at_set("set_q"), id("new_word"))])],
                    vec![Stmt::if_(
                        id("req_valid"),
                        vec![Stmt::nb(id("word_q"), id("set_word").index(req_set.clone()))],
                    )],
                )],
            )],
        )],
    ));

    // Control and responses.
    let evict = vec![
        Stmt::nb(id("resp_evicted_q"), Expr::bit(true)),
        Stmt::nb(id("resp_evicted_key_q"), id("victim_key")),
        Stmt::nb(id("resp_value_q"), id("victim_value")),
    ];
    let insert = vec![Stmt::if_(id("hit").lnot().land(id("full")), evict)];
    let found = vec![Stmt::if_(id("hit"), vec![Stmt::nb(id("resp_value_q"), id("found_value"))])];
    let answer = vec![
        Stmt::nb(id("busy"), Expr::bit(false)),
        Stmt::nb(id("resp_valid_q"), Expr::bit(true)),
        Stmt::nb(id("resp_hit_q"), id("hit")),
        Stmt::nb(id("resp_value_q"), Expr::zero(vw)),
        Stmt::nb(id("resp_evicted_q"), Expr::bit(false)),
        Stmt::nb(id("resp_evicted_key_q"), Expr::zero(kw)),
        Stmt::if_else(op_is(op_insert), insert, found),
    ];
    let mut take = vec![
        Stmt::nb(id("busy"), Expr::bit(true)),
        Stmt::nb(id("op_q"), id("req_op")),
        Stmt::nb(id("key_q"), id("req_key")),
        Stmt::nb(id("value_q"), id("req_value")),
    ];
    if sb > 0 {
        take.push(Stmt::nb(id("set_q"), id("req_set")));
    }
    let mut sweep = vec![];
    if sb > 0 {
        sweep.push(Stmt::nb(id("sweep_set_q"), id("sweep_set_q").plus(Expr::dec(sb, 1))));
    }
    let last = if sb > 0 { id("sweep_set_q").equals(Expr::dec(sb, (sets - 1) as u128)) } else { Expr::bit(true) };
    sweep.push(Stmt::if_(last, vec![Stmt::nb(id("sweep_q"), Expr::bit(false))]));
    items.push(Item::Blank);
    items.push(Item::always_posedge(
        "clock",
        vec![Stmt::if_else(
            id("reset"),
            clear,
            vec![Stmt::if_else(
                id("sweep_q"),
                sweep,
                vec![Stmt::if_else(
                    id("busy"),
                    answer,
                    vec![Stmt::nb(id("resp_valid_q"), Expr::bit(false)), Stmt::if_(id("req_valid"), take)],
                )],
            )],
        )],
    ));
    items.push(Item::Blank);
    items.push(Item::assign(id("req_ready"), id("busy").lor(id("sweep_q")).lnot()));
    items.push(Item::assign(id("sweeping"), id("sweep_q")));
    for (name, _) in responses {
        let port = name.trim_end_matches("_q");
        items.push(Item::assign(Expr::id(port), id(name)));
    }
    items
}

/// Where a way's fields sit in a set's word: way `w` at `[w*entry_w +: entry_w]`, key low,
/// then value, age (LRU) and valid bit; a round-robin pointer above the ways.
#[derive(Clone, Copy)]
struct Layout {
    kw: u32,
    vw: u32,
    sets: u64,
    /// Set-number bits: 0 with one set.
    sb: u32,
    /// Way-number bits: 0 with one way.
    wb: u32,
    /// Age bits (LRU), 0 otherwise.
    ab: u32,
    entry_w: u32,
    /// The ways, and a round-robin pointer above them.
    word_w: u32,
    ways: u64,
}

impl Layout {
    fn new(kw: u32, vw: u32, n: u64, ways: u64, policy: Replacement) -> Layout {
        let (sets, wb, ab) = (n / ways, address_width(ways), policy.age_bits(ways));
        let entry_w = kw + vw + ab + 1;
        let pointer = if policy == Replacement::RoundRobin { wb } else { 0 };
        Layout { kw, vw, sets, sb: address_width(sets), wb, ab, entry_w, word_w: ways as u32 * entry_w + pointer, ways }
    }

    fn field(&self, word: &str, w: u64, lo: u32, width: u32) -> Expr {
        let at = w as u32 * self.entry_w + lo;
        Expr::id(word).slice(at + width - 1, at)
    }

    fn key(&self, word: &str, w: u64) -> Expr {
        self.field(word, w, 0, self.kw)
    }

    fn value(&self, word: &str, w: u64) -> Expr {
        self.field(word, w, self.kw, self.vw)
    }

    /// Key and value together (value high).
    fn entry(&self, word: &str, w: u64) -> Expr {
        self.field(word, w, 0, self.kw + self.vw)
    }

    fn age(&self, word: &str, w: u64) -> Expr {
        self.field(word, w, self.kw + self.vw, self.ab)
    }

    fn valid(&self, word: &str, w: u64) -> Expr {
        Expr::id(word).bit_at(w as u32 * self.entry_w + self.kw + self.vw + self.ab)
    }

    /// The round-robin pointer.
    fn pointer(&self, word: &str) -> Expr {
        let lo = self.ways as u32 * self.entry_w;
        Expr::id(word).slice(lo + self.wb - 1, lo)
    }

    /// `field(w)` of the way `w` for which `is(w)` holds (the callers' conditions name one way);
    /// way 0's when none does, and with one way.
    fn pick(&self, is: &dyn Fn(u64) -> Expr, field: &dyn Fn(u64) -> Expr) -> Expr {
        (1..self.ways).fold(field(0), |acc, w| Expr::mux(is(w), field(w), acc))
    }

    /// Way `w`'s LRU age in `word` once the set's entry in the way `target` says is used — the
    /// most recent now, and the valid entries that were more recent than it (all of them when
    /// it is new: not `present`, else of age `of`) a step older — or, `removing`, emptied: the
    /// entries older than it (`of`) a step younger. The CPU's `touch` and `remove`.
    fn moved_age(&self, word: &str, w: u64, target: Expr, of: Expr, present: Expr, removing: Expr) -> Expr {
        let (age, valid, one) = (self.age(word, w), self.valid(word, w), Expr::dec(self.ab, 1));
        let older = valid
            .clone()
            .land(removing.clone().lnot())
            .land(present.clone().lnot().lor(age.clone().less_than(of.clone())));
        let younger = valid.land(removing.clone()).land(present).land(of.less_than(age.clone()));
        Expr::mux(
            target.land(removing.lnot()),
            Expr::zero(self.ab),
            Expr::mux(older, age.clone().plus(one.clone()), Expr::mux(younger, age.clone().minus(one), age)),
        )
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::hw::test_support::{check_lint, check_verilog, Trace, XorShift};
    use crate::hw::{from_hdl, tick, to_hdl};
    use emu_core::Mac;

    #[test]
    fn crc32_matrix_computes_the_crc() {
        let mut rng = XorShift(77);
        for width in [1usize, 7, 8, 13, 32, 48, 64, 100] {
            let m = crc32_matrix(width);
            for _ in 0..50 {
                let limbs: Vec<u64> = (0..width.div_ceil(64))
                    .map(|i| {
                        let bits = (width - 64 * i).min(64);
                        rng.below(u64::MAX) & (u64::MAX >> (64 - bits))
                    })
                    .collect();
                let bytes = width.div_ceil(8);
                let be: Vec<u8> = (0..bytes)
                    .map(|j| {
                        let b = 8 * (bytes - 1 - j);
                        (limbs[b / 64] >> (b % 64)) as u8
                    })
                    .collect();
                let mut want = 0u32;
                for (j, mask) in m.masks.iter().enumerate() {
                    let parity = mask.iter().zip(&limbs).map(|(m, k)| (m & k).count_ones()).sum::<u32>() & 1;
                    want |= (parity ^ (m.constant >> j & 1)) << j;
                }
                assert_eq!(want, emu_core::state::crc32(&be), "width {width}");
            }
        }
    }

    /// Drives `hw` and `emu_core::HashTable<K, V, N, WAYS>` with the same seeded random gets,
    /// inserts and removes (over about three keys per slot, so sets fill and evict), with
    /// idle cycles, rare resets, and random requests during the busy cycle (which must be
    /// ignored), and compares: get → `resp_hit ? Some(resp_value) : None`; insert →
    /// `resp_evicted ? Some((resp_evicted_key, resp_value)) : None` and `resp_hit` = present;
    /// remove → `resp_hit ? Some(resp_value) : None`; `set_of` against the CPU's; after every
    /// request every slot against the CPU's `entries()`. The first 5000 cycles are replayed
    /// through the Verilog under Verilator.
    fn matches_cpu<K, V, const KW: usize, const VW: usize, const N: usize, const WAYS: usize>(
        seed: u64,
        key: impl Fn(u64) -> K,
        value: impl Fn(u64) -> V,
    ) where
        K: emu_core::Bits + std::fmt::Debug,
        V: emu_core::Bits + std::fmt::Debug,
    {
        let mut rng = XorShift(seed);
        let mut cpu: emu_core::HashTable<K, V, N, WAYS> = emu_core::HashTable::default();
        let mut hw: HashTable<KW, VW, N, WAYS> = HashTable::default();
        hw.connect_all();
        let mut trace = Trace::new(&hw, 5_000);
        let mut evictions = 0;
        let random_request = |hw: &mut HashTable<KW, VW, N, WAYS>, rng: &mut XorShift| {
            let k = key(rng.below(3 * N as u64));
            let v = value(rng.below(u64::MAX));
            hw.req_key.next = to_hdl(k);
            hw.req_value.next = to_hdl(v);
            hw.req_op.next = rng.below(4).into();
            (k, v)
        };
        let mut swept = 0;
        for step in 0..10_000 {
            // After power-on and each reset: the sweep, a set a cycle, requests ignored.
            let mut sweep = 0;
            while hw.sweeping.val() {
                assert!(!hw.req_ready.val(), "step {step}: not ready while sweeping");
                random_request(&mut hw, &mut rng);
                hw.req_valid.next = rng.chance(1, 2);
                hw.reset.next = false;
                tick(&mut hw);
                trace.record(&hw);
                sweep += 1;
            }
            assert!(sweep == 0 || sweep == N / WAYS, "step {step}: a sweep of {sweep} cycles");
            swept += (sweep > 0) as u32;
            let (k, v) = random_request(&mut hw, &mut rng);
            let op = hw.req_op.next.to_u64();
            let idle = rng.chance(1, 10);
            hw.req_valid.next = !idle;
            hw.reset.next = idle && rng.chance(1, 30);
            assert!(hw.req_ready.val(), "step {step}: ready between requests");
            tick(&mut hw);
            trace.record(&hw);
            if idle {
                if hw.reset.next {
                    cpu = emu_core::HashTable::default();
                }
                continue;
            }
            assert!(!hw.req_ready.val() && !hw.resp_valid.val(), "step {step}: busy");
            assert_eq!(HashTable::<KW, VW, N, WAYS>::set_of(to_hdl(k)), cpu.set_of(k), "step {step}");
            // The busy cycle: whatever is requested now is ignored.
            random_request(&mut hw, &mut rng);
            hw.req_valid.next = rng.chance(1, 2);
            let present = cpu.contains(k);
            tick(&mut hw);
            trace.record(&hw);
            assert!(hw.resp_valid.val(), "step {step}: answered after two cycles");
            let hit = hw.resp_hit.val();
            let got_value = from_hdl::<V, VW>(hw.resp_value.val());
            match op {
                1 => {
                    let evicted =
                        hw.resp_evicted.val().then(|| (from_hdl::<K, KW>(hw.resp_evicted_key.val()), got_value));
                    evictions += evicted.is_some() as u32;
                    assert_eq!(evicted, cpu.insert(k, v), "step {step}: insert {k:?}");
                    assert_eq!(hit, present, "step {step}: insert");
                }
                2 => assert_eq!(hit.then_some(got_value), cpu.remove(k), "step {step}: remove"),
                _ => assert_eq!(hit.then_some(got_value), cpu.get(k), "step {step}: get"),
            }
            let entries: Vec<_> = (0..N)
                .filter_map(|i| hw.entry(i).map(|(k, v)| (i, from_hdl::<K, KW>(k), from_hdl::<V, VW>(v))))
                .collect();
            assert_eq!(entries, cpu.entries().collect::<Vec<_>>(), "step {step}");
            // Back to idle for the next request.
            hw.req_valid.next = false;
        }
        assert!(evictions > 100, "only {evictions} evictions");
        assert!(swept > 5, "only {swept} sweeps");
        trace.replay_in_verilator(&hw);
    }

    #[test]
    fn matches_cpu_hash_table_on_random_operations() {
        matches_cpu::<u16, u16, 16, 16, 16, 4>(51, |k| (k as u16).wrapping_mul(7919), |v| v as u16);
        matches_cpu::<Mac, u8, 48, 8, 32, 2>(
            52,
            |k| Mac::from_bytes([2, 0, 0, 0, (k >> 8) as u8, k as u8]),
            |v| v as u8,
        );
        matches_cpu::<u32, u8, 32, 8, 8, 1>(53, |k| k as u32, |v| v as u8);
        matches_cpu::<u8, u8, 8, 8, 3, 3>(54, |k| k as u8, |v| v as u8);
    }

    /// The run-time module against the block's: one entry, one set, direct-mapped, ways that
    /// are not a power of two, keys and values wider than 64 bits.
    #[test]
    fn hash_table_module_is_the_blocks() {
        fn same<const KW: usize, const VW: usize, const N: usize, const WAYS: usize>() {
            let block = crate::hw::module(&HashTable::<KW, VW, N, WAYS>::default(), "m");
            let run_time = hash_table_module("m", KW as u32, VW as u32, N as u64, WAYS as u64);
            assert_eq!(block, run_time, "HashTable<{KW}, {VW}, {N}, {WAYS}>");
        }
        same::<1, 1, 1, 1>();
        same::<8, 8, 3, 3>();
        same::<32, 8, 8, 1>();
        same::<16, 16, 16, 4>();
        same::<48, 16, 256, 4>();
        same::<100, 70, 6, 3>();
        same::<100, 70, 4, 2>();
    }

    #[test]
    fn verilog_lints_and_synthesizes_to_block_ram() {
        let stats = check_verilog(HashTable::<48, 16, 256, 4>::default(), "emu_hash_table");
        assert!(stats.count("RAMB") >= 1, "a block RAM: {stats:?}");
        check_lint(HashTable::<16, 16, 16, 4>::default(), "emu_hash_table_16");
        check_lint(HashTable::<32, 8, 8, 1>::default(), "emu_hash_table_direct");
        check_lint(HashTable::<8, 8, 3, 3>::default(), "emu_hash_table_one_set");
    }
}

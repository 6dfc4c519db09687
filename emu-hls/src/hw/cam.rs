//! [`Cam`]: a fully associative table, `N` comparators wide.

use super::{wrapper, StateBlock};
use crate::verilog::{index_width, Expr, Item, Module, Stmt};
use rust_hdl::prelude::*;

/// A fully associative table of `N` (key, value) slots: the hardware of
/// `emu_core::Cam<K, V, N>` with `K::WIDTH = KW` and `V::WIDTH = VW`.
///
/// Every slot is a key register, a value register and a valid bit; a request compares
/// `req_key` with all `N` keys in the same cycle. Semantics (the CPU's, exactly):
///
/// - all slots start empty, the round-robin victim pointer at 0;
/// - *get* returns the value of the slot holding the key;
/// - *insert* of a present key overwrites its value in place (no eviction, the pointer stays);
///   of a new key fills the lowest-index empty slot; when all are full, the slot at the
///   pointer is replaced, its old entry returned, and the pointer advances by one modulo `N`;
/// - *remove* empties the key's slot; the pointer stays.
///
/// Latency 1: the response to a request at one rising edge is on the `resp_*` ports right
/// after it (`resp_valid` high for that cycle), and one request can be made every cycle.
#[derive(Clone, Debug, LogicBlock)]
pub struct Cam<const KW: usize, const VW: usize, const N: usize> {
    // Clocking.
    /// The clock: state and responses change only at its rising edge.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: empties every slot, sets the victim pointer to 0,
    /// clears the response registers and ignores the request.
    pub reset: Signal<In, Bit>,

    // The request port.
    /// Request strobe: the request on `req_op`, `req_key` and `req_value` is done at the rising
    /// edge where it is high.
    pub req_valid: Signal<In, Bit>,
    /// The operation: [`Cam::OP_GET`], [`Cam::OP_INSERT`] or [`Cam::OP_REMOVE`] (3 is a get).
    pub req_op: Signal<In, Bits<2>>,
    /// The key looked up, inserted or removed.
    pub req_key: Signal<In, Bits<KW>>,
    /// The value inserted (ignored by get and remove).
    pub req_value: Signal<In, Bits<VW>>,

    // The response port: registers, written one cycle after each request.
    /// High for the one cycle after a request: the `resp_*` ports hold its response.
    pub resp_valid: Signal<Out, Bit>,
    /// The key was in the table (get: found; insert: overwritten in place; remove: removed).
    pub resp_hit: Signal<Out, Bit>,
    /// get hit: the value found; remove hit: the value removed; insert that evicted: the
    /// evicted entry's value. 0 otherwise.
    pub resp_value: Signal<Out, Bits<VW>>,
    /// An insert evicted an entry (the table was full and the key new).
    pub resp_evicted: Signal<Out, Bit>,
    /// The evicted entry's key, when `resp_evicted`; 0 otherwise.
    pub resp_evicted_key: Signal<Out, Bits<KW>>,

    /// The model's slots: (key, value) of the valid ones.
    _slots: Vec<Option<(Bits<KW>, Bits<VW>)>>,
    /// The model's round-robin victim pointer, `< N`.
    _victim: usize,
}

impl<const KW: usize, const VW: usize, const N: usize> Default for Cam<KW, VW, N> {
    fn default() -> Self {
        assert!(N >= 1, "Cam needs N >= 1, as emu_core::Cam");
        Cam {
            clock: Default::default(),
            reset: Default::default(),
            req_valid: Default::default(),
            req_op: Default::default(),
            req_key: Default::default(),
            req_value: Default::default(),
            resp_valid: Default::default(),
            resp_hit: Default::default(),
            resp_value: Default::default(),
            resp_evicted: Default::default(),
            resp_evicted_key: Default::default(),
            _slots: vec![None; N],
            _victim: 0,
        }
    }
}

impl<const KW: usize, const VW: usize, const N: usize> Cam<KW, VW, N> {
    /// `req_op` of a get (the CPU's `get` and `contains`).
    pub const OP_GET: u64 = 0;
    /// `req_op` of an insert.
    pub const OP_INSERT: u64 = 1;
    /// `req_op` of a remove.
    pub const OP_REMOVE: u64 = 2;
    /// Cycles from a request to its response.
    pub const LATENCY: usize = 1;

    /// The model's entry in `slot` (the CPU's `entry`): `None` when empty or `slot ≥ N`.
    pub fn entry(&self, slot: usize) -> Option<(Bits<KW>, Bits<VW>)> {
        self._slots.get(slot).copied().flatten()
    }
}

impl<const KW: usize, const VW: usize, const N: usize> Logic for Cam<KW, VW, N> {
    fn update(&mut self) {
        if !self.clock.pos_edge() {
            return;
        }
        if self.reset.val() {
            self._slots.iter_mut().for_each(|s| *s = None);
            self._victim = 0;
            self.resp_valid.next = false;
            self.resp_hit.next = false;
            self.resp_value.next = 0.into();
            self.resp_evicted.next = false;
            self.resp_evicted_key.next = 0.into();
            return;
        }
        self.resp_valid.next = self.req_valid.val();
        if !self.req_valid.val() {
            return;
        }
        let key = self.req_key.val();
        let hit = self._slots.iter().position(|s| matches!(s, Some((k, _)) if *k == key));
        let free = self._slots.iter().position(Option::is_none);
        self.resp_hit.next = hit.is_some();
        self.resp_value.next = 0.into();
        self.resp_evicted.next = false;
        self.resp_evicted_key.next = 0.into();
        match self.req_op.val().to_u64() {
            Self::OP_INSERT => {
                let entry = Some((key, self.req_value.val()));
                if let Some(i) = hit {
                    self._slots[i] = entry;
                } else if let Some(i) = free {
                    self._slots[i] = entry;
                } else {
                    let victim = self._victim;
                    let (old_key, old_value) = self._slots[victim].expect("a full table has no empty slot");
                    self.resp_evicted.next = true;
                    self.resp_evicted_key.next = old_key;
                    self.resp_value.next = old_value;
                    self._slots[victim] = entry;
                    self._victim = if victim + 1 == N { 0 } else { victim + 1 };
                }
            }
            Self::OP_REMOVE => {
                if let Some(i) = hit {
                    let (_, value) = self._slots[i].take().expect("a hit slot is valid");
                    self.resp_value.next = value;
                }
            }
            _ => {
                if let Some(i) = hit {
                    self.resp_value.next = self._slots[i].expect("a hit slot is valid").1;
                }
            }
        }
    }

    fn connect(&mut self) {
        self.resp_valid.connect();
        self.resp_hit.connect();
        self.resp_value.connect();
        self.resp_evicted.connect();
        self.resp_evicted_key.connect();
    }

    fn hdl(&self) -> Verilog {
        wrapper(self.verilog_body())
    }
}

impl<const KW: usize, const VW: usize, const N: usize> StateBlock for Cam<KW, VW, N> {
    fn clock_mut(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }

    fn verilog_body(&self) -> Vec<Item> {
        body(KW as u32, VW as u32, N as u64, &[])
    }
}

/// The module of a [`Cam`] of `size` slots for parameters known only at run time (the back
/// end's, from an NF's IR): the same ports and body as [`module`](super::module) of a
/// `Cam<key_width, value_width, size>`.
pub fn cam_module(name: &str, key_width: u32, value_width: u32, size: u64) -> Module {
    assert!(size >= 1, "cam_module: a Cam needs size >= 1, as emu_core::Cam");
    Module {
        name: name.into(),
        ports: super::keyed_table_ports(key_width, value_width),
        items: body(key_width, value_width, size, &[]),
    }
}

/// An entry a CAM module holds from the start: (key, value), literals of the key's and the
/// value's widths.
pub type LoadedEntry = (Expr, Expr);

/// [`cam_module`] whose slots 0, 1, 2, … hold `entries` at start and after every reset, the
/// victim pointer at 0: the table as `insert`s of the entries into an empty `Cam` leave it
/// (an NF's configured table, e.g. a DNS server's zone). Other slots start empty.
pub fn cam_module_loaded(name: &str, key_width: u32, value_width: u32, size: u64, entries: &[LoadedEntry]) -> Module {
    assert!(entries.len() as u64 <= size, "cam_module_loaded: {} entries for {size} slots", entries.len());
    let mut m = cam_module(name, key_width, value_width, size);
    m.items = body(key_width, value_width, size, entries);
    m
}

/// The body of a CAM of `n` slots of a `kw`-bit key and a `vw`-bit value, shared by the block
/// and [`cam_module`] so that the two cannot drift apart. (The op codes do not depend on the
/// parameters: `Cam::<1, 1, 1>`'s are every `Cam`'s.)
fn body(kw: u32, vw: u32, n: u64, entries: &[LoadedEntry]) -> Vec<Item> {
    let id = Expr::id;
    let sw = index_width(n);
    // A slot number as a literal, and the word of memory `mem` at slot `at`: with one
    // slot, the memories are indexed by the constant 0 (a 1-bit index would not fit).
    let slot = |i: u64| Expr::dec(sw, i as u128);
    let word = |mem: &'static str, at: Expr| -> Expr {
        if n == 1 {
            Expr::id(mem).index(Expr::int(0))
        } else {
            Expr::id(mem).index(at)
        }
    };
    let valid_bit = |at: Expr| {
        if n == 1 {
            id("slot_valid")
        } else {
            id("slot_valid").index(at)
        }
    };
    let victim = if n == 1 { slot(0) } else { id("victim") };

    let mut items = vec![
        Item::comment(format!(
            "Cam: {n} slots of a {kw}-bit key, a {vw}-bit value and a valid bit;\n\
             {n} comparators; a round-robin victim pointer for inserts into a full table."
        )),
        Item::memory("slot_key", kw, n),
        Item::memory("slot_value", vw, n),
        Item::reg("slot_valid", n as u32),
    ];
    if n > 1 {
        items.push(Item::reg("victim", sw));
    }
    for (name, w) in [
        ("resp_valid_q", 1),
        ("resp_hit_q", 1),
        ("resp_value_q", vw),
        ("resp_evicted_q", 1),
        ("resp_evicted_key_q", kw),
    ] {
        items.push(Item::reg(name, w));
    }

    // Initial contents: everything 0, as after a reset.
    items.push(Item::integer("i"));
    let mut init = vec![Stmt::For {
        var: "i".into(),
        from: 0,
        to: n,
        body: vec![
            Stmt::blocking(id("slot_key").index(id("i")), Expr::zero(kw)),
            Stmt::blocking(id("slot_value").index(id("i")), Expr::zero(vw)),
        ],
    }];
    // A reset empties the table, then loads the configured entries into the lowest slots.
    let valid = if entries.is_empty() {
        Expr::zero(n as u32)
    } else {
        Expr::concat((0..n).rev().map(|i| Expr::bit((i as usize) < entries.len())).collect())
    };
    let mut clear = vec![Stmt::nb(id("slot_valid"), valid)];
    for (i, (key, value)) in entries.iter().enumerate() {
        clear.push(Stmt::nb(word("slot_key", Expr::int(i as u64)), key.clone()));
        clear.push(Stmt::nb(word("slot_value", Expr::int(i as u64)), value.clone()));
    }
    if n > 1 {
        clear.push(Stmt::nb(id("victim"), Expr::zero(sw)));
    }
    for (name, w) in [
        ("resp_valid_q", 1),
        ("resp_hit_q", 1),
        ("resp_value_q", vw),
        ("resp_evicted_q", 1),
        ("resp_evicted_key_q", kw),
    ] {
        clear.push(Stmt::nb(id(name), Expr::zero(w)));
    }
    init.extend(clear.iter().map(|s| match s {
        Stmt::NonBlocking(l, r) => Stmt::blocking(l.clone(), r.clone()),
        other => other.clone(),
    }));
    items.push(Item::Initial(init));

    // The lookup: N comparators and two priority encoders. Slots are visited from the
    // highest down, so the last assignment — the lowest slot — wins.
    items.push(Item::Blank);
    items.push(Item::comment("Lookup: the slot holding req_key, and the lowest empty slot."));
    // With one slot, the slot numbers are the constant 0 and need no register.
    let slot_numbers = n > 1;
    items.push(Item::reg("hit", 1));
    items.push(Item::reg("full", 1));
    if slot_numbers {
        items.push(Item::reg("hit_slot", sw));
        items.push(Item::reg("free_slot", sw));
    }
    let found = |flag: &'static str, value: bool, number: &'static str, i: u64| {
        let mut s = vec![Stmt::blocking(Expr::id(flag), Expr::bit(value))];
        if slot_numbers {
            s.push(Stmt::blocking(Expr::id(number), slot(i)));
        }
        s
    };
    let mut lookup = found("hit", false, "hit_slot", 0);
    lookup.extend(found("full", true, "free_slot", 0));
    for i in (0..n).rev() {
        let at = || Expr::int(i);
        lookup.push(Stmt::if_(
            valid_bit(at()).land(word("slot_key", at()).equals(id("req_key"))),
            found("hit", true, "hit_slot", i),
        ));
        lookup.push(Stmt::if_(valid_bit(at()).lnot(), found("full", false, "free_slot", i)));
    }
    items.push(Item::always_comb(lookup));

    // The update.
    let put = |at: Expr| {
        vec![
            Stmt::nb(word("slot_key", at.clone()), id("req_key")),
            Stmt::nb(word("slot_value", at.clone()), id("req_value")),
        ]
    };
    let mut insert_free = put(id("free_slot"));
    insert_free.push(Stmt::nb(valid_bit(id("free_slot")), Expr::bit(true)));
    let mut evict = vec![
        Stmt::nb(id("resp_evicted_q"), Expr::bit(true)),
        Stmt::nb(id("resp_evicted_key_q"), word("slot_key", victim.clone())),
        Stmt::nb(id("resp_value_q"), word("slot_value", victim.clone())),
    ];
    evict.extend(put(victim.clone()));
    if n > 1 {
        evict.push(Stmt::nb(
            id("victim"),
            Expr::mux(id("victim").equals(slot(n - 1)), slot(0), id("victim").plus(slot(1))),
        ));
    }
    let insert = vec![Stmt::if_else(
        id("hit"),
        vec![Stmt::nb(word("slot_value", id("hit_slot")), id("req_value"))],
        vec![Stmt::if_else(id("full").lnot(), insert_free, evict)],
    )];
    let remove = vec![Stmt::if_(
        id("hit"),
        vec![
            Stmt::nb(valid_bit(id("hit_slot")), Expr::bit(false)),
            Stmt::nb(id("resp_value_q"), word("slot_value", id("hit_slot"))),
        ],
    )];
    let get = vec![Stmt::if_(id("hit"), vec![Stmt::nb(id("resp_value_q"), word("slot_value", id("hit_slot")))])];
    let request = vec![
        Stmt::nb(id("resp_hit_q"), id("hit")),
        Stmt::nb(id("resp_value_q"), Expr::zero(vw)),
        Stmt::nb(id("resp_evicted_q"), Expr::bit(false)),
        Stmt::nb(id("resp_evicted_key_q"), Expr::zero(kw)),
        Stmt::Case {
            subject: id("req_op"),
            arms: vec![
                (vec![Expr::dec(2, Cam::<1, 1, 1>::OP_INSERT as u128)], insert),
                (vec![Expr::dec(2, Cam::<1, 1, 1>::OP_REMOVE as u128)], remove),
            ],
            default: Some(get),
        },
    ];
    items.push(Item::Blank);
    items.push(Item::always_posedge(
        "clock",
        vec![Stmt::if_else(
            id("reset"),
            clear,
            vec![Stmt::nb(id("resp_valid_q"), id("req_valid")), Stmt::if_(id("req_valid"), request)],
        )],
    ));

    items.push(Item::Blank);
    for port in ["resp_valid", "resp_hit", "resp_value", "resp_evicted", "resp_evicted_key"] {
        items.push(Item::assign(id(port), Expr::id(format!("{port}_q"))));
    }
    items
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::hw::test_support::{check_lint, check_verilog, Trace, XorShift};
    use crate::hw::{from_hdl, tick, to_hdl};
    use emu_core::Mac;

    /// Drives `hw` and `emu_core::Cam<K, V, N>` with the same seeded random gets, inserts and
    /// removes (over `keys` distinct keys, so the table fills and evicts), with idle cycles
    /// and rare resets, and compares:
    /// get → `resp_hit ? Some(resp_value) : None`;
    /// insert → `resp_evicted ? Some((resp_evicted_key, resp_value)) : None`, and `resp_hit`
    /// = the key was present;
    /// remove → `resp_hit ? Some(resp_value) : None`;
    /// and after every cycle, every slot against the CPU's `entry(slot)`. The first 5000
    /// cycles are then replayed through the Verilog under Verilator, which must give the
    /// same outputs.
    fn matches_cpu<K, V, const KW: usize, const VW: usize, const N: usize>(
        seed: u64,
        key: impl Fn(u64) -> K,
        keys: u64,
        value: impl Fn(u64) -> V,
    ) where
        K: emu_core::Bits + std::fmt::Debug,
        V: emu_core::Bits + std::fmt::Debug,
    {
        let mut rng = XorShift(seed);
        let mut cpu: emu_core::Cam<K, V, N> = emu_core::Cam::default();
        let mut hw: Cam<KW, VW, N> = Cam::default();
        hw.connect_all();
        let mut trace = Trace::new(&hw, 5_000);
        let mut evictions = 0;
        for step in 0..20_000 {
            let k = key(rng.below(keys));
            let v = value(rng.below(u64::MAX));
            let op = rng.below(8);
            hw.req_key.next = to_hdl(k);
            hw.req_value.next = to_hdl(v);
            hw.req_valid.next = op != 7;
            hw.reset.next = op == 7 && rng.chance(1, 20);
            hw.req_op.next = match op {
                0 | 1 => Cam::<KW, VW, N>::OP_GET,
                2 => Cam::<KW, VW, N>::OP_REMOVE,
                3 => 3, // reserved: a get
                _ => Cam::<KW, VW, N>::OP_INSERT,
            }
            .into();
            let present = cpu.contains(k);
            tick(&mut hw);
            trace.record(&hw);
            let got_value = from_hdl::<V, VW>(hw.resp_value.val());
            let hit = hw.resp_hit.val();
            match op {
                0 | 1 | 3 => {
                    assert_eq!(hit.then_some(got_value), cpu.get(k), "step {step}: get {k:?}")
                }
                2 => assert_eq!(hit.then_some(got_value), cpu.remove(k), "step {step}: remove {k:?}"),
                7 => {
                    if hw.reset.next {
                        cpu = emu_core::Cam::default();
                    }
                }
                _ => {
                    let evicted =
                        hw.resp_evicted.val().then(|| (from_hdl::<K, KW>(hw.resp_evicted_key.val()), got_value));
                    evictions += evicted.is_some() as u32;
                    assert_eq!(evicted, cpu.insert(k, v), "step {step}: insert {k:?}");
                    assert_eq!(hit, present, "step {step}: insert {k:?}");
                }
            }
            assert_eq!(hw.resp_valid.val(), op != 7, "step {step}");
            for slot in 0..N {
                let got = hw.entry(slot).map(|(k, v)| (from_hdl::<K, KW>(k), from_hdl::<V, VW>(v)));
                assert_eq!(got, cpu.entry(slot), "step {step}: slot {slot}");
            }
        }
        assert!(evictions > 100, "the test should exercise evictions");
        trace.replay_in_verilator(&hw);
    }

    #[test]
    fn matches_cpu_cam_on_random_operations() {
        matches_cpu::<u16, u8, 16, 8, 5>(0x9e37_79b9, |k| k as u16 * 0x101, 12, |v| v as u8);
        matches_cpu::<bool, u8, 1, 8, 1>(11, |k| k == 1, 2, |v| v as u8);
        matches_cpu::<u8, bool, 8, 1, 2>(12, |k| k as u8, 5, |v| v & 1 == 1);
    }

    #[test]
    fn matches_cpu_mac_table() {
        // The learning switch's table: MAC → port.
        matches_cpu::<Mac, u8, 48, 8, 16>(
            0x1ea4_2ed5,
            |k| Mac::from_bytes([2, 0, 0, 0, (k >> 8) as u8, k as u8 ^ 0x5a]),
            40,
            |v| (v % 4) as u8,
        );
    }

    #[test]
    fn latency_one_and_responses_hold() {
        let mut hw: Cam<8, 8, 2> = Cam::default();
        hw.connect_all();
        hw.req_valid.next = true;
        hw.req_op.next = Cam::<8, 8, 2>::OP_INSERT.into();
        hw.req_key.next = 7.into();
        hw.req_value.next = 70.into();
        tick(&mut hw);
        assert!(hw.resp_valid.val());
        hw.req_op.next = Cam::<8, 8, 2>::OP_GET.into();
        tick(&mut hw);
        assert!(hw.resp_valid.val() && hw.resp_hit.val());
        assert_eq!(hw.resp_value.val(), 70);
        hw.req_valid.next = false;
        hw.req_key.next = 9.into();
        tick(&mut hw);
        assert!(!hw.resp_valid.val());
        assert!(hw.resp_hit.val(), "responses hold until the next one");
        assert_eq!(hw.resp_value.val(), 70);
    }

    /// The run-time module against the block's: the MAC table, one slot, keys and values wider
    /// than 64 bits, a size that is not a power of two.
    #[test]
    fn cam_module_is_the_blocks() {
        fn same<const KW: usize, const VW: usize, const N: usize>() {
            let block = crate::hw::module(&Cam::<KW, VW, N>::default(), "m");
            assert_eq!(block, cam_module("m", KW as u32, VW as u32, N as u64), "Cam<{KW}, {VW}, {N}>");
        }
        same::<48, 8, 16>();
        same::<1, 1, 1>();
        same::<100, 70, 3>();
        same::<16, 8, 5>();
        same::<8, 1, 2>();
    }

    /// A CAM loaded at start (`cam_module_loaded`) under Verilator against the CPU's `Cam`
    /// filled by the same inserts: the entries are there before any reset and again after
    /// one, the victim pointer starts at slot 0 both times, and the other slots fill first.
    #[test]
    fn loaded_cam_module_is_the_cpus_after_inserts() {
        const GET: u64 = Cam::<1, 1, 1>::OP_GET;
        const INSERT: u64 = Cam::<1, 1, 1>::OP_INSERT;
        const REMOVE: u64 = Cam::<1, 1, 1>::OP_REMOVE;
        let loaded: [(u16, u8); 3] = [(0x1111, 1), (0x2222, 2), (0x3333, 3)];
        let fresh = || {
            let mut c: emu_core::Cam<u16, u8, 4> = emu_core::Cam::default();
            loaded.iter().for_each(|&(k, v)| assert!(c.insert(k, v).is_none()));
            c
        };
        // (reset, op, key, value)
        let steps: &[(bool, u64, u16, u8)] = &[
            (false, GET, 0x2222, 0),
            (false, GET, 0x4444, 0),
            (false, INSERT, 0x4444, 4),
            (false, INSERT, 0x5555, 5),
            (false, REMOVE, 0x3333, 0),
            (false, GET, 0x1111, 0),
            (true, GET, 0, 0),
            (false, GET, 0x1111, 0),
            (false, GET, 0x3333, 0),
            (false, GET, 0x4444, 0),
            (false, INSERT, 0x6666, 6),
            (false, INSERT, 0x7777, 7),
            (false, GET, 0x2222, 0),
        ];
        let mut cpu = fresh();
        let (mut stimulus, mut expected) = (vec![], vec![]);
        let hex = |v: u64| format!("{v:x}");
        for &(reset, op, k, v) in steps {
            stimulus.push(vec![hex(reset as u64), hex(!reset as u64), hex(op), hex(k as u64), hex(v as u64)]);
            // A reset clears the responses.
            let row: [String; 5] = if reset {
                cpu = fresh();
                ["0", "0", "0", "0", "0"].map(String::from)
            } else {
                let present = cpu.contains(k);
                let (hit, value, evicted) = match op {
                    GET => (present, cpu.get(k).unwrap_or(0), None),
                    REMOVE => (present, cpu.remove(k).unwrap_or(0), None),
                    _ => {
                        let e = cpu.insert(k, v);
                        (present, e.map_or(0, |(_, ev)| ev), e.map(|(ek, _)| ek))
                    }
                };
                [
                    "1".into(),
                    hex(hit as u64),
                    hex(value as u64),
                    hex(evicted.is_some() as u64),
                    hex(evicted.unwrap_or(0) as u64),
                ]
            };
            expected.push(row.to_vec());
        }
        assert!(expected.iter().any(|r| r[3] == "1" && r[4] == "1111"), "slot 0 is evicted first: {expected:?}");
        let entries: Vec<LoadedEntry> =
            loaded.iter().map(|&(k, v)| (Expr::dec(16, k as u128), Expr::dec(8, v as u128))).collect();
        let m = cam_module_loaded("loaded_cam", 16, 8, 4, &entries);
        let (inputs, outputs): (Vec<_>, Vec<_>) =
            (m.ports.iter().cloned()).filter(|p| p.name != "clock").partition(|p| p.dir == crate::verilog::Dir::Input);
        let names: Vec<&str> = inputs.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["reset", "req_valid", "req_op", "req_key", "req_value"]);
        let got = crate::hw::tools::verilator_replay(&m.to_string(), "loaded_cam", &inputs, &outputs, &stimulus)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got, expected, "outputs resp_valid, resp_hit, resp_value, resp_evicted, resp_evicted_key");
        assert_eq!(
            cam_module_loaded("m", 16, 8, 4, &[]),
            cam_module("m", 16, 8, 4),
            "nothing loaded: the plain module"
        );
    }

    #[test]
    fn verilog_lints_and_synthesizes() {
        let stats = check_verilog(Cam::<48, 8, 16>::default(), "emu_cam");
        assert_eq!(stats.count("RAMB"), 0, "a CAM is flip-flops: {stats:?}");
        // Keys and valid bits in flip-flops (the values may go to LUT RAM, read by slot).
        assert!(stats.count("FD") >= 16 * (48 + 1), "{stats:?}");
        check_lint(Cam::<1, 8, 1>::default(), "emu_cam_1");
        check_lint(Cam::<16, 8, 5>::default(), "emu_cam_5");
    }
}

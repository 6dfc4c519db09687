//! [`Lru`]: a fully associative table with exact least-recently-used replacement.

use super::{wrapper, StateBlock};
use crate::verilog::{index_width, Expr, Item, Module, Stmt};
use rust_hdl::prelude::*;

/// A fully associative table of `N` (key, value) slots that evicts exactly the least recently
/// used entry: the hardware of `emu_core::Lru<K, V, N>` with `K::WIDTH = KW`,
/// `V::WIDTH = VW`.
///
/// Every slot is a key register, a value register, a valid bit and an *age*: the number of
/// stored entries used more recently (`⌈log2 N⌉` bits). The ages of the stored entries are
/// always exactly `0..len`, so the victim of a full table is the one slot of age `N − 1`.
/// Semantics (the CPU's, exactly):
///
/// - an entry is *used* by an insert (new or overwriting) and by a get that hits; a peek, a
///   missing get and a remove use nothing;
/// - using the entry of age `a` adds 1 to every stored age below `a` and sets its own to 0 (a
///   new entry counts as `a = len`; the victim of a full table as `a = N − 1`);
/// - an insert of a new key fills the lowest-index empty slot, or, when the table is full,
///   replaces the least recently used entry and returns it;
/// - a remove of the entry of age `a` empties its slot and subtracts 1 from every stored age
///   above `a`.
///
/// All of it happens in one cycle: `N` comparators, `N` age comparators and `N` age
/// incrementers. Latency 1, one request per cycle.
#[derive(Clone, Debug, LogicBlock)]
pub struct Lru<const KW: usize, const VW: usize, const N: usize> {
    // Clocking.
    /// The clock: state and responses change only at its rising edge.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: empties every slot, clears the response registers and
    /// ignores the request.
    pub reset: Signal<In, Bit>,

    // The request port.
    /// Request strobe: the request is done at the rising edge where it is high.
    pub req_valid: Signal<In, Bit>,
    /// The operation: [`Lru::OP_GET`], [`Lru::OP_INSERT`], [`Lru::OP_REMOVE`] or
    /// [`Lru::OP_PEEK`].
    pub req_op: Signal<In, Bits<2>>,
    /// The key looked up, inserted or removed.
    pub req_key: Signal<In, Bits<KW>>,
    /// The value inserted (ignored by the other operations).
    pub req_value: Signal<In, Bits<VW>>,

    // The response port: registers, written one cycle after each request.
    /// High for the one cycle after a request: the `resp_*` ports hold its response.
    pub resp_valid: Signal<Out, Bit>,
    /// The key was in the table (get, peek: found; insert: overwritten; remove: removed).
    pub resp_hit: Signal<Out, Bit>,
    /// get, peek hit: the value found; remove hit: the value removed; insert that evicted:
    /// the evicted entry's value. 0 otherwise.
    pub resp_value: Signal<Out, Bits<VW>>,
    /// An insert evicted the least recently used entry.
    pub resp_evicted: Signal<Out, Bit>,
    /// The evicted entry's key, when `resp_evicted`; 0 otherwise.
    pub resp_evicted_key: Signal<Out, Bits<KW>>,

    /// The model's slots: (key, value, age) of the valid ones.
    _slots: Vec<Option<(Bits<KW>, Bits<VW>, usize)>>,
}

impl<const KW: usize, const VW: usize, const N: usize> Default for Lru<KW, VW, N> {
    fn default() -> Self {
        assert!(N >= 1, "Lru needs N >= 1, as emu_core::Lru");
        Lru {
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
        }
    }
}

impl<const KW: usize, const VW: usize, const N: usize> Lru<KW, VW, N> {
    /// `req_op` of a get: a hit makes the entry the most recently used.
    pub const OP_GET: u64 = 0;
    /// `req_op` of an insert.
    pub const OP_INSERT: u64 = 1;
    /// `req_op` of a remove.
    pub const OP_REMOVE: u64 = 2;
    /// `req_op` of a peek: a get that changes nothing (also the CPU's `contains`).
    pub const OP_PEEK: u64 = 3;
    /// Cycles from a request to its response.
    pub const LATENCY: usize = 1;

    /// The model's entry in `slot` as (key, value), `None` when empty or `slot ≥ N`.
    pub fn entry(&self, slot: usize) -> Option<(Bits<KW>, Bits<VW>)> {
        self._slots.get(slot).copied().flatten().map(|(k, v, _)| (k, v))
    }

    /// The model's stored keys from most to least recently used (the CPU's
    /// `keys_by_recency`).
    pub fn keys_by_recency(&self) -> Vec<Bits<KW>> {
        let mut stored: Vec<_> = self._slots.iter().flatten().collect();
        stored.sort_by_key(|(_, _, age)| *age);
        stored.into_iter().map(|(k, _, _)| *k).collect()
    }

    /// Makes `slot` the most recently used, its age before being `age`.
    fn touch(&mut self, slot: usize, age: usize) {
        for (i, s) in self._slots.iter_mut().enumerate() {
            if let Some((_, _, a)) = s {
                if i == slot {
                    *a = 0;
                } else if *a < age {
                    *a += 1;
                }
            }
        }
    }
}

impl<const KW: usize, const VW: usize, const N: usize> Logic for Lru<KW, VW, N> {
    fn update(&mut self) {
        if !self.clock.pos_edge() {
            return;
        }
        if self.reset.val() {
            self._slots.iter_mut().for_each(|s| *s = None);
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
        let hit = self._slots.iter().position(|s| matches!(s, Some((k, _, _)) if *k == key));
        let free = self._slots.iter().position(Option::is_none);
        let len = self._slots.iter().flatten().count();
        self.resp_hit.next = hit.is_some();
        self.resp_value.next = 0.into();
        self.resp_evicted.next = false;
        self.resp_evicted_key.next = 0.into();
        let value = self.req_value.val();
        match (self.req_op.val().to_u64(), hit) {
            (Self::OP_INSERT, Some(i)) => {
                let (k, _, age) = self._slots[i].expect("a hit slot is valid");
                self._slots[i] = Some((k, value, age));
                self.touch(i, age);
            }
            (Self::OP_INSERT, None) => {
                let (slot, age) = match free {
                    Some(i) => (i, len),
                    None => {
                        let victim = self
                            ._slots
                            .iter()
                            .position(|s| matches!(s, Some((_, _, a)) if *a == N - 1))
                            .expect("a full table has an entry of age N - 1");
                        let (old_key, old_value, _) = self._slots[victim].expect("full");
                        self.resp_evicted.next = true;
                        self.resp_evicted_key.next = old_key;
                        self.resp_value.next = old_value;
                        (victim, N - 1)
                    }
                };
                self._slots[slot] = Some((key, value, age));
                self.touch(slot, age);
            }
            (Self::OP_REMOVE, Some(i)) => {
                let (_, v, age) = self._slots[i].take().expect("a hit slot is valid");
                for (_, _, a) in self._slots.iter_mut().flatten() {
                    if *a > age {
                        *a -= 1;
                    }
                }
                self.resp_value.next = v;
            }
            (op, Some(i)) if op != Self::OP_REMOVE => {
                let (_, v, age) = self._slots[i].expect("a hit slot is valid");
                self.resp_value.next = v;
                if op == Self::OP_GET {
                    self.touch(i, age);
                }
            }
            _ => {}
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

impl<const KW: usize, const VW: usize, const N: usize> StateBlock for Lru<KW, VW, N> {
    fn clock_mut(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }

    fn verilog_body(&self) -> Vec<Item> {
        body(KW as u32, VW as u32, N as u64)
    }
}

/// The module of an [`Lru`] of `size` slots for parameters known only at run time (the back
/// end's, from an NF's IR): the same ports and body as [`module`](super::module) of an
/// `Lru<key_width, value_width, size>`.
pub fn lru_module(name: &str, key_width: u32, value_width: u32, size: u64) -> Module {
    assert!(size >= 1, "lru_module: an Lru needs size >= 1, as emu_core::Lru");
    Module {
        name: name.into(),
        ports: super::keyed_table_ports(key_width, value_width),
        items: body(key_width, value_width, size),
    }
}

/// Gives an LRU module (with its read port, [`super::add_debug_read`]) a write port for the
/// debugger that writes as the CPU's debugger does: at a rising edge with `dbg_we` high (and
/// `reset` low), the entry in slot `dbg_slot`, if any, is removed (the stored ages above its
/// own fall by one), and, when `dbg_wvalid`, (`dbg_wkey`, `dbg_wvalue`) is stored there as the
/// most recently used entry (every other stored age grows by one). The debug unit writes only
/// between frames, when no request comes, and checks that no other slot holds the key.
pub fn add_debug_write(m: &mut Module, kw: u32, vw: u32, n: u64) {
    use crate::verilog::Port;
    let id = Expr::id;
    let (sw, cw) = (index_width(n), index_width(n + 1));
    for (name, w) in [("dbg_we", 1), ("dbg_wvalid", 1), ("dbg_wkey", kw), ("dbg_wvalue", vw)] {
        m.ports.push(Port::input(name, w));
    }
    let at = || if n == 1 { Expr::int(0) } else { id("dbg_slot") };
    let valid_at = |e: Expr| if n == 1 { id("slot_valid") } else { id("slot_valid").index(e) };
    let age = |e: Expr| id("age").index(e);
    m.items.push(Item::wire("dbg_old_valid", 1));
    m.items.push(Item::assign(id("dbg_old_valid"), valid_at(at())));
    m.items.push(Item::wire("dbg_old_age", sw));
    m.items.push(Item::assign(id("dbg_old_age"), age(at())));
    // A 1-bit condition as a `w`-bit 0 or 1.
    let one = |w: u32, bit: Expr| if w == 1 { bit } else { Expr::concat(vec![Expr::zero(w - 1), bit]) };
    let mut write = vec![
        Stmt::nb(id("slot_key").index(at()), id("dbg_wkey")),
        Stmt::nb(id("slot_value").index(at()), id("dbg_wvalue")),
        Stmt::nb(valid_at(at()), id("dbg_wvalid")),
        Stmt::nb(age(at()), Expr::zero(sw)),
        Stmt::nb(id("count"), id("count").minus(one(cw, id("dbg_old_valid"))).plus(one(cw, id("dbg_wvalid")))),
    ];
    for i in 0..n {
        let slot = Expr::dec(sw, i as u128);
        let valid = if n == 1 { id("slot_valid") } else { id("slot_valid").bit_at(i as u32) };
        let a = age(Expr::int(i));
        let fall = id("dbg_old_valid").land(id("dbg_old_age").less_than(a.clone()));
        write.push(Stmt::if_(
            id("dbg_slot").not_equals(slot).land(valid),
            vec![Stmt::nb(a.clone(), a.minus(one(sw, fall)).plus(one(sw, id("dbg_wvalid"))))],
        ));
    }
    let write = Stmt::if_(id("dbg_we").land(id("reset").lnot()), write);
    super::block_assigning(m, "slot_valid").push(write);
}

/// The body of an LRU table of `n` slots of a `kw`-bit key and a `vw`-bit value, shared by
/// the block and [`lru_module`] so that the two cannot drift apart. (The op codes do not
/// depend on the parameters: `Lru::<1, 1, 1>`'s are every `Lru`'s.)
fn body(kw: u32, vw: u32, n: u64) -> Vec<Item> {
    let id = Expr::id;
    let sw = index_width(n); // slot numbers and ages: 0..N-1
    let cw = index_width(n + 1); // the count: 0..=N
    let slot = |i: u64| Expr::dec(sw, i as u128);
    let word = |mem: &'static str, at: Expr| -> Expr {
        if n == 1 {
            Expr::id(mem).index(Expr::int(0))
        } else {
            Expr::id(mem).index(at)
        }
    };
    let valid_bit = |i: u64| {
        if n == 1 {
            id("slot_valid")
        } else {
            id("slot_valid").bit_at(i as u32)
        }
    };
    let age = |i: u64| id("age").index(Expr::int(i));
    let responses = [
        ("resp_valid_q", 1),
        ("resp_hit_q", 1),
        ("resp_value_q", vw),
        ("resp_evicted_q", 1),
        ("resp_evicted_key_q", kw),
    ];

    let mut items = vec![
        Item::comment(format!(
            "Lru: {n} slots of a {kw}-bit key, a {vw}-bit value, a valid bit and an age\n\
             (how many stored entries were used more recently); exact LRU eviction."
        )),
        Item::memory("slot_key", kw, n),
        Item::memory("slot_value", vw, n),
        Item::reg("slot_valid", n as u32),
        Item::memory("age", sw, n),
        Item::reg("count", cw),
    ];
    for (name, w) in responses {
        items.push(Item::reg(name, w));
    }
    let mut clear = vec![Stmt::nb(id("slot_valid"), Expr::zero(n as u32)), Stmt::nb(id("count"), Expr::zero(cw))];
    for i in 0..n {
        clear.push(Stmt::nb(age(i), Expr::zero(sw)));
    }
    for (name, w) in responses {
        clear.push(Stmt::nb(id(name), Expr::zero(w)));
    }
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
    init.extend(clear.iter().map(|st| match st {
        Stmt::NonBlocking(l, r) => Stmt::blocking(l.clone(), r.clone()),
        other => other.clone(),
    }));
    items.push(Item::Initial(init));

    // The lookup.
    items.push(Item::Blank);
    items.push(Item::comment(
        "Lookup: the slot holding req_key and its age, the lowest empty slot, and the\n\
         least recently used slot (age N - 1) for a full table.",
    ));
    for (name, w) in [("hit", 1), ("hit_slot", sw), ("hit_age", sw), ("free_slot", sw), ("lru_slot", sw)] {
        items.push(Item::reg(name, w));
    }
    items.push(Item::wire("full", 1));
    items.push(Item::assign(id("full"), id("count").equals(Expr::dec(cw, n as u128))));
    let mut lookup = vec![
        Stmt::blocking(id("hit"), Expr::bit(false)),
        Stmt::blocking(id("hit_slot"), slot(0)),
        Stmt::blocking(id("hit_age"), slot(0)),
        Stmt::blocking(id("free_slot"), slot(0)),
        Stmt::blocking(id("lru_slot"), slot(0)),
    ];
    for i in (0..n).rev() {
        lookup.push(Stmt::if_(
            valid_bit(i).land(word("slot_key", Expr::int(i)).equals(id("req_key"))),
            vec![
                Stmt::blocking(id("hit"), Expr::bit(true)),
                Stmt::blocking(id("hit_slot"), slot(i)),
                Stmt::blocking(id("hit_age"), age(i)),
            ],
        ));
        lookup.push(Stmt::if_(valid_bit(i).lnot(), vec![Stmt::blocking(id("free_slot"), slot(i))]));
        lookup.push(Stmt::if_(
            valid_bit(i).land(age(i).equals(slot(n - 1))),
            vec![Stmt::blocking(id("lru_slot"), slot(i))],
        ));
    }
    items.push(Item::always_comb(lookup));

    // The slot an insert or a get uses, and its age before the use.
    items.push(Item::Blank);
    items.push(Item::comment(
        "The slot an insert or get hit uses, and its age before: every stored age below\n\
         it grows by one and the used slot's becomes 0.",
    ));
    items.push(Item::wire("use_slot", sw));
    items.push(Item::wire("use_age", sw));
    items.push(Item::assign(
        id("use_slot"),
        Expr::mux(id("hit"), id("hit_slot"), Expr::mux(id("full"), id("lru_slot"), id("free_slot"))),
    ));
    // A new entry's age is the count, < N when the table is not full.
    let count_as_age = if cw > sw { id("count").slice(sw - 1, 0) } else { id("count") };
    items.push(Item::assign(
        id("use_age"),
        Expr::mux(id("hit"), id("hit_age"), Expr::mux(id("full"), slot(n - 1), count_as_age)),
    ));

    let touch = || -> Vec<Stmt> {
        (0..n)
            .map(|i| {
                Stmt::if_else(
                    id("use_slot").equals(slot(i)),
                    vec![Stmt::nb(age(i), Expr::zero(sw))],
                    vec![Stmt::if_(
                        valid_bit(i).land(age(i).less_than(id("use_age"))),
                        vec![Stmt::nb(age(i), age(i).plus(slot(1)))],
                    )],
                )
            })
            .collect()
    };
    let valid_at = |at: Expr| {
        if n == 1 {
            id("slot_valid")
        } else {
            id("slot_valid").index(at)
        }
    };

    let mut insert = vec![Stmt::nb(word("slot_value", id("use_slot")), id("req_value"))];
    insert.push(Stmt::if_(
        id("hit").lnot(),
        vec![
            Stmt::nb(word("slot_key", id("use_slot")), id("req_key")),
            Stmt::nb(valid_at(id("use_slot")), Expr::bit(true)),
            Stmt::if_else(
                id("full"),
                vec![
                    Stmt::nb(id("resp_evicted_q"), Expr::bit(true)),
                    Stmt::nb(id("resp_evicted_key_q"), word("slot_key", id("lru_slot"))),
                    Stmt::nb(id("resp_value_q"), word("slot_value", id("lru_slot"))),
                ],
                vec![Stmt::nb(id("count"), id("count").plus(Expr::dec(cw, 1)))],
            ),
        ],
    ));
    insert.extend(touch());

    let mut remove_hit = vec![
        Stmt::nb(valid_at(id("hit_slot")), Expr::bit(false)),
        Stmt::nb(id("count"), id("count").minus(Expr::dec(cw, 1))),
        Stmt::nb(id("resp_value_q"), word("slot_value", id("hit_slot"))),
    ];
    for i in 0..n {
        remove_hit.push(Stmt::if_else(
            id("hit_slot").equals(slot(i)),
            vec![Stmt::nb(age(i), Expr::zero(sw))],
            vec![Stmt::if_(
                valid_bit(i).land(id("hit_age").less_than(age(i))),
                vec![Stmt::nb(age(i), age(i).minus(slot(1)))],
            )],
        ));
    }
    let mut get_hit = vec![Stmt::nb(id("resp_value_q"), word("slot_value", id("hit_slot")))];
    get_hit.extend(touch());
    let peek_hit = vec![Stmt::nb(id("resp_value_q"), word("slot_value", id("hit_slot")))];

    let request = vec![
        Stmt::nb(id("resp_hit_q"), id("hit")),
        Stmt::nb(id("resp_value_q"), Expr::zero(vw)),
        Stmt::nb(id("resp_evicted_q"), Expr::bit(false)),
        Stmt::nb(id("resp_evicted_key_q"), Expr::zero(kw)),
        Stmt::Case {
            subject: id("req_op"),
            arms: vec![
                (vec![Expr::dec(2, Lru::<1, 1, 1>::OP_INSERT as u128)], insert),
                (vec![Expr::dec(2, Lru::<1, 1, 1>::OP_REMOVE as u128)], vec![Stmt::if_(id("hit"), remove_hit)]),
                (vec![Expr::dec(2, Lru::<1, 1, 1>::OP_GET as u128)], vec![Stmt::if_(id("hit"), get_hit)]),
            ],
            default: Some(vec![Stmt::if_(id("hit"), peek_hit)]),
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
    for (name, _) in responses {
        let port = name.trim_end_matches("_q");
        items.push(Item::assign(Expr::id(port), id(name)));
    }
    items
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::hw::test_support::{check_lint, check_verilog, Trace, XorShift};
    use crate::hw::{from_hdl, tick, to_hdl};

    /// Drives `hw` and `emu_core::Lru<K, V, N>` with the same seeded random gets, peeks,
    /// inserts and removes over a few more keys than slots, with idle cycles and rare resets,
    /// and compares: get, peek → `resp_hit ? Some(resp_value) : None`; insert →
    /// `resp_evicted ? Some((resp_evicted_key, resp_value)) : None` and `resp_hit` = present;
    /// remove → `resp_hit ? Some(resp_value) : None`; after every cycle every slot against
    /// the CPU's `entries()` and the recency order against `keys_by_recency()`. The first
    /// 5000 cycles are replayed through the Verilog under Verilator.
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
        let mut cpu: emu_core::Lru<K, V, N> = emu_core::Lru::default();
        let mut hw: Lru<KW, VW, N> = Lru::default();
        hw.connect_all();
        let mut trace = Trace::new(&hw, 5_000);
        let mut evictions = 0;
        for step in 0..20_000 {
            let k = key(rng.below(keys));
            let v = value(rng.below(u64::MAX));
            let op = match rng.below(10) {
                0 => 9,
                1 | 2 => Lru::<KW, VW, N>::OP_GET,
                3 => Lru::<KW, VW, N>::OP_PEEK,
                4 => Lru::<KW, VW, N>::OP_REMOVE,
                _ => Lru::<KW, VW, N>::OP_INSERT,
            };
            hw.req_valid.next = op != 9;
            hw.reset.next = op == 9 && rng.chance(1, 40);
            hw.req_op.next = (op & 3).into();
            hw.req_key.next = to_hdl(k);
            hw.req_value.next = to_hdl(v);
            let present = cpu.contains(k);
            tick(&mut hw);
            trace.record(&hw);
            let hit = hw.resp_hit.val();
            let got_value = from_hdl::<V, VW>(hw.resp_value.val());
            match op {
                9 => {
                    if hw.reset.next {
                        cpu = emu_core::Lru::default();
                    }
                }
                Lru::<KW, VW, N>::OP_GET => {
                    assert_eq!(hit.then_some(got_value), cpu.get(k), "step {step}: get")
                }
                Lru::<KW, VW, N>::OP_PEEK => {
                    assert_eq!(hit.then_some(got_value), cpu.peek(k), "step {step}: peek")
                }
                Lru::<KW, VW, N>::OP_REMOVE => {
                    assert_eq!(hit.then_some(got_value), cpu.remove(k), "step {step}: remove")
                }
                _ => {
                    let evicted =
                        hw.resp_evicted.val().then(|| (from_hdl::<K, KW>(hw.resp_evicted_key.val()), got_value));
                    evictions += evicted.is_some() as u32;
                    assert_eq!(evicted, cpu.insert(k, v), "step {step}: insert");
                    assert_eq!(hit, present, "step {step}: insert");
                }
            }
            let entries: Vec<_> = (0..N)
                .filter_map(|i| hw.entry(i).map(|(k, v)| (i, from_hdl::<K, KW>(k), from_hdl::<V, VW>(v))))
                .collect();
            assert_eq!(entries, cpu.entries().collect::<Vec<_>>(), "step {step}");
            let recency: Vec<K> = hw.keys_by_recency().into_iter().map(from_hdl::<K, KW>).collect();
            assert_eq!(recency, cpu.keys_by_recency().collect::<Vec<_>>(), "step {step}");
        }
        assert!(evictions > 100, "only {evictions} evictions");
        trace.replay_in_verilator(&hw);
    }

    #[test]
    fn matches_cpu_lru_on_random_operations() {
        matches_cpu::<u16, u8, 16, 8, 5>(31, |k| k as u16 * 3, 8, |v| v as u8);
        matches_cpu::<u32, u16, 32, 16, 4>(32, |k| k as u32, 7, |v| v as u16);
        matches_cpu::<u8, u8, 8, 8, 1>(33, |k| k as u8, 3, |v| v as u8);
    }

    /// The run-time module against the block's: one slot, two, a size that is not a power of
    /// two, keys and values wider than 64 bits.
    #[test]
    fn lru_module_is_the_blocks() {
        fn same<const KW: usize, const VW: usize, const N: usize>() {
            let block = crate::hw::module(&Lru::<KW, VW, N>::default(), "m");
            assert_eq!(block, lru_module("m", KW as u32, VW as u32, N as u64), "Lru<{KW}, {VW}, {N}>");
        }
        same::<1, 1, 1>();
        same::<8, 1, 2>();
        same::<48, 8, 16>();
        same::<16, 8, 5>();
        same::<100, 70, 3>();
    }

    #[test]
    fn verilog_lints_and_synthesizes() {
        let stats = check_verilog(Lru::<48, 16, 8>::default(), "emu_lru");
        assert_eq!(stats.count("RAMB"), 0, "an LRU table is registers: {stats:?}");
        check_lint(Lru::<16, 8, 5>::default(), "emu_lru_5");
        check_lint(Lru::<8, 8, 1>::default(), "emu_lru_1");
        check_lint(Lru::<8, 8, 2>::default(), "emu_lru_2");
    }
}

//! [`Tcam`]: a ternary CAM, `N` masked comparators and a priority encoder.

use super::{address, in_range, index_below, wrapper, StateBlock};
use crate::verilog::{index_width, Expr, Item, Module, Port, Stmt};
use rust_hdl::prelude::*;

/// `N` priority-ordered rules (value, mask, result) over `KW`-bit keys: the hardware of
/// `emu_core::Tcam<K, V, N>` with `K::WIDTH = KW`, `V::WIDTH = VW`; slots are numbered by
/// `S`-bit ports (`2^S ≥ N`).
///
/// Semantics (the CPU's, exactly): all slots start invalid. Slot `i` matches key `k` when it
/// is valid and `(k & mask) == (value & mask)`; a *lookup* returns the result of the
/// lowest-index matching slot. A *set* writes a rule into a slot and validates it; a *clear*
/// invalidates it; a slot `≥ N` is not written (`resp_ok` low; the CPU's `set` returns
/// `false`). Nothing is ever evicted or moved.
///
/// Every slot's value, mask and result are registers; a lookup compares all of them in the
/// same cycle. Latency 1, one request per cycle.
#[derive(Clone, Debug, LogicBlock)]
pub struct Tcam<const KW: usize, const VW: usize, const N: usize, const S: usize> {
    // Clocking.
    /// The clock: rules and responses change only at its rising edge.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: invalidates every slot, clears the response registers
    /// and ignores the request.
    pub reset: Signal<In, Bit>,

    // The request port.
    /// Request strobe: the request is done at the rising edge where it is high.
    pub req_valid: Signal<In, Bit>,
    /// The operation: [`Tcam::OP_LOOKUP`], [`Tcam::OP_SET`] or [`Tcam::OP_CLEAR`] (3 is a
    /// lookup).
    pub req_op: Signal<In, Bits<2>>,
    /// lookup: the key; set: the rule's value.
    pub req_key: Signal<In, Bits<KW>>,
    /// set: the rule's mask (a 1 bit is compared, a 0 bit is "don't care").
    pub req_mask: Signal<In, Bits<KW>>,
    /// set: the rule's result.
    pub req_result: Signal<In, Bits<VW>>,
    /// set, clear: the slot written (lower is higher priority).
    pub req_slot: Signal<In, Bits<S>>,

    // The response port: registers, written one cycle after each request.
    /// High for the one cycle after a request: the `resp_*` ports hold its response.
    pub resp_valid: Signal<Out, Bit>,
    /// lookup: a slot matched (the CPU's `lookup` is `Some`).
    pub resp_hit: Signal<Out, Bit>,
    /// lookup hit: the matching slot's result; 0 otherwise.
    pub resp_result: Signal<Out, Bits<VW>>,
    /// lookup hit: the matching slot (the CPU's `lookup_slot`); 0 otherwise.
    pub resp_slot: Signal<Out, Bits<S>>,
    /// set, clear: the slot was `< N`, so it was written. 0 after a lookup.
    pub resp_ok: Signal<Out, Bit>,

    /// The model's rules (value, mask, result) of the valid slots.
    _rules: Vec<Option<(Bits<KW>, Bits<KW>, Bits<VW>)>>,
}

impl<const KW: usize, const VW: usize, const N: usize, const S: usize> Default for Tcam<KW, VW, N, S> {
    fn default() -> Self {
        assert!(N >= 1, "a hardware Tcam needs N >= 1");
        assert!(S < 64 && N as u64 <= 1 << S, "Tcam<KW, VW, N, S> numbers its slots with S bits: 2^S >= N");
        Tcam {
            clock: Default::default(),
            reset: Default::default(),
            req_valid: Default::default(),
            req_op: Default::default(),
            req_key: Default::default(),
            req_mask: Default::default(),
            req_result: Default::default(),
            req_slot: Default::default(),
            resp_valid: Default::default(),
            resp_hit: Default::default(),
            resp_result: Default::default(),
            resp_slot: Default::default(),
            resp_ok: Default::default(),
            _rules: vec![None; N],
        }
    }
}

impl<const KW: usize, const VW: usize, const N: usize, const S: usize> Tcam<KW, VW, N, S> {
    /// `req_op` of a lookup.
    pub const OP_LOOKUP: u64 = 0;
    /// `req_op` of a set.
    pub const OP_SET: u64 = 1;
    /// `req_op` of a clear.
    pub const OP_CLEAR: u64 = 2;
    /// Cycles from a request to its response.
    pub const LATENCY: usize = 1;

    /// The model's rule in `slot` as (value, mask, result), `None` when invalid or `slot ≥ N`
    /// (the CPU's `entry`).
    pub fn entry(&self, slot: usize) -> Option<(Bits<KW>, Bits<KW>, Bits<VW>)> {
        self._rules.get(slot).copied().flatten()
    }
}

impl<const KW: usize, const VW: usize, const N: usize, const S: usize> Logic for Tcam<KW, VW, N, S> {
    fn update(&mut self) {
        if !self.clock.pos_edge() {
            return;
        }
        if self.reset.val() {
            self._rules.iter_mut().for_each(|r| *r = None);
            self.resp_valid.next = false;
            self.resp_hit.next = false;
            self.resp_result.next = 0.into();
            self.resp_slot.next = 0.into();
            self.resp_ok.next = false;
            return;
        }
        self.resp_valid.next = self.req_valid.val();
        if !self.req_valid.val() {
            return;
        }
        self.resp_hit.next = false;
        self.resp_result.next = 0.into();
        self.resp_slot.next = 0.into();
        self.resp_ok.next = false;
        let slot = index_below(self.req_slot.val(), N);
        match self.req_op.val().to_u64() {
            Self::OP_SET => {
                if let Some(i) = slot {
                    self._rules[i] = Some((self.req_key.val(), self.req_mask.val(), self.req_result.val()));
                }
                self.resp_ok.next = slot.is_some();
            }
            Self::OP_CLEAR => {
                if let Some(i) = slot {
                    self._rules[i] = None;
                }
                self.resp_ok.next = slot.is_some();
            }
            _ => {
                let key = self.req_key.val();
                let hit = self._rules.iter().enumerate().find_map(|(i, r)| match r {
                    Some((value, mask, result)) if !((key ^ *value) & *mask).any() => Some((i, *result)),
                    _ => None,
                });
                if let Some((i, result)) = hit {
                    self.resp_hit.next = true;
                    self.resp_result.next = result;
                    self.resp_slot.next = (i as u64).into();
                }
            }
        }
    }

    fn connect(&mut self) {
        self.resp_valid.connect();
        self.resp_hit.connect();
        self.resp_result.connect();
        self.resp_slot.connect();
        self.resp_ok.connect();
    }

    fn hdl(&self) -> Verilog {
        wrapper(self.verilog_body())
    }
}

impl<const KW: usize, const VW: usize, const N: usize, const S: usize> StateBlock for Tcam<KW, VW, N, S> {
    fn clock_mut(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }

    fn verilog_body(&self) -> Vec<Item> {
        body(KW as u32, VW as u32, N as u64, S as u32, &[])
    }
}

/// The module of a [`Tcam`] of `size` rules for parameters known only at run time (the back
/// end's, from an NF's IR): the same ports and body as [`module`](super::module) of a
/// `Tcam<key_width, value_width, size, S>`, where `S` is the exact slot width
/// ([`index_width`]`(size)`).
pub fn tcam_module(name: &str, key_width: u32, value_width: u32, size: u64) -> Module {
    assert!(size >= 1, "tcam_module: a hardware Tcam needs size >= 1");
    let s = index_width(size);
    Module {
        name: name.into(),
        ports: vec![
            Port::input("clock", 1),
            Port::input("reset", 1),
            Port::input("req_valid", 1),
            Port::input("req_op", 2),
            Port::input("req_key", key_width),
            Port::input("req_mask", key_width),
            Port::input("req_result", value_width),
            Port::input("req_slot", s),
            Port::output_wire("resp_valid", 1),
            Port::output_wire("resp_hit", 1),
            Port::output_wire("resp_result", value_width),
            Port::output_wire("resp_slot", s),
            Port::output_wire("resp_ok", 1),
        ],
        items: body(key_width, value_width, size, s, &[]),
    }
}

/// The body of a TCAM of `n` rules over `kw`-bit keys with `vw`-bit results and `s`-bit slot
/// numbers, shared by the block and [`tcam_module`] so that the two cannot drift apart. (The
/// op codes do not depend on the parameters: `Tcam::<1, 1, 1, 1>`'s are every `Tcam`'s.)
/// A rule a TCAM module holds from the start: (slot, value, mask, result), the last three
/// literals of the key's and the result's widths.
pub type LoadedRule = (u64, Expr, Expr, Expr);

/// [`tcam_module`] whose slots hold `rules` at start and after every reset (an NF's
/// configured table: a firewall's rules, a list of open ports). Other slots start invalid.
pub fn tcam_module_loaded(name: &str, key_width: u32, value_width: u32, size: u64, rules: &[LoadedRule]) -> Module {
    let mut m = tcam_module(name, key_width, value_width, size);
    m.items = body(key_width, value_width, size, index_width(size), rules);
    m
}

fn body(kw: u32, vw: u32, n: u64, s: u32, rules: &[LoadedRule]) -> Vec<Item> {
    let id = Expr::id;
    let valid_bit = |at: Expr| {
        if n == 1 {
            id("rule_valid")
        } else {
            id("rule_valid").index(at)
        }
    };
    let slot_address = address("req_slot", s, n);
    let responses =
        [("resp_valid_q", 1), ("resp_hit_q", 1), ("resp_result_q", vw), ("resp_slot_q", s), ("resp_ok_q", 1)];

    let mut items = vec![
        Item::comment(format!(
            "Tcam: {n} rules of a {kw}-bit value and mask and a {vw}-bit result, in\n\
             registers; {n} masked comparators and a priority encoder (lowest slot wins)."
        )),
        Item::memory("rule_value", kw, n),
        Item::memory("rule_mask", kw, n),
        Item::memory("rule_result", vw, n),
        Item::reg("rule_valid", n as u32),
    ];
    for (name, w) in responses {
        items.push(Item::reg(name, w));
    }
    items.push(Item::wire("slot_ok", 1));
    items.push(Item::assign(id("slot_ok"), in_range("req_slot", s, n)));

    // A reset empties the table, then loads the configured rules.
    let mut valid = vec![false; n as usize];
    for (slot, ..) in rules {
        valid[*slot as usize] = true;
    }
    let valid = if rules.is_empty() {
        Expr::zero(n as u32)
    } else {
        Expr::concat(valid.iter().rev().map(|&v| Expr::bit(v)).collect())
    };
    let mut clear = vec![Stmt::nb(id("rule_valid"), valid)];
    for (slot, value, mask, result) in rules {
        let at = || if n == 1 { Expr::int(0) } else { Expr::int(*slot) };
        clear.push(Stmt::nb(id("rule_value").index(at()), value.clone()));
        clear.push(Stmt::nb(id("rule_mask").index(at()), mask.clone()));
        clear.push(Stmt::nb(id("rule_result").index(at()), result.clone()));
    }
    for (name, w) in responses {
        clear.push(Stmt::nb(id(name), Expr::zero(w)));
    }
    items.push(Item::integer("i"));
    let mut init = vec![Stmt::For {
        var: "i".into(),
        from: 0,
        to: n,
        body: ["rule_value", "rule_mask"]
            .iter()
            .map(|m| Stmt::blocking(Expr::id(*m).index(id("i")), Expr::zero(kw)))
            .chain([Stmt::blocking(id("rule_result").index(id("i")), Expr::zero(vw))])
            .collect(),
    }];
    init.extend(clear.iter().map(|st| match st {
        Stmt::NonBlocking(l, r) => Stmt::blocking(l.clone(), r.clone()),
        other => other.clone(),
    }));
    items.push(Item::Initial(init));

    items.push(Item::Blank);
    items.push(Item::comment("Lookup: the lowest valid slot with (req_key ^ value) & mask == 0."));
    items.push(Item::reg("hit", 1));
    items.push(Item::reg("hit_slot", s));
    let mut lookup = vec![Stmt::blocking(id("hit"), Expr::bit(false)), Stmt::blocking(id("hit_slot"), Expr::zero(s))];
    for i in (0..n).rev() {
        let at = || Expr::int(i);
        let word = |m: &'static str| Expr::id(m).index(at());
        lookup.push(Stmt::if_(
            valid_bit(at()).land(id("req_key").xor(word("rule_value")).and(word("rule_mask")).equals(Expr::zero(kw))),
            vec![Stmt::blocking(id("hit"), Expr::bit(true)), Stmt::blocking(id("hit_slot"), Expr::dec(s, i as u128))],
        ));
    }
    items.push(Item::always_comb(lookup));

    let hit_address = address("hit_slot", s, n);
    let set = vec![
        Stmt::nb(id("resp_ok_q"), id("slot_ok")),
        Stmt::if_(
            id("slot_ok"),
            vec![
                Stmt::nb(id("rule_value").index(slot_address.clone()), id("req_key")),
                Stmt::nb(id("rule_mask").index(slot_address.clone()), id("req_mask")),
                Stmt::nb(id("rule_result").index(slot_address.clone()), id("req_result")),
                Stmt::nb(valid_bit(slot_address.clone()), Expr::bit(true)),
            ],
        ),
    ];
    let clear_slot = vec![
        Stmt::nb(id("resp_ok_q"), id("slot_ok")),
        Stmt::if_(id("slot_ok"), vec![Stmt::nb(valid_bit(slot_address.clone()), Expr::bit(false))]),
    ];
    let lookup_response = vec![Stmt::if_(
        id("hit"),
        vec![
            Stmt::nb(id("resp_hit_q"), Expr::bit(true)),
            Stmt::nb(id("resp_result_q"), id("rule_result").index(hit_address)),
            Stmt::nb(id("resp_slot_q"), id("hit_slot")),
        ],
    )];
    let request = vec![
        Stmt::nb(id("resp_hit_q"), Expr::bit(false)),
        Stmt::nb(id("resp_result_q"), Expr::zero(vw)),
        Stmt::nb(id("resp_slot_q"), Expr::zero(s)),
        Stmt::nb(id("resp_ok_q"), Expr::bit(false)),
        Stmt::Case {
            subject: id("req_op"),
            arms: vec![
                (vec![Expr::dec(2, Tcam::<1, 1, 1, 1>::OP_SET as u128)], set),
                (vec![Expr::dec(2, Tcam::<1, 1, 1, 1>::OP_CLEAR as u128)], clear_slot),
            ],
            default: Some(lookup_response),
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
    use emu_core::Ipv4Addr;

    /// Drives `hw` and `emu_core::Tcam<K, V, N>` with the same seeded random lookups, sets
    /// (masks drawn from prefixes, random bits, all ones and zero; slots up to `2^S − 1`, so
    /// some are out of range) and clears, with idle cycles and rare resets, and compares:
    /// lookup → `resp_hit ? Some(resp_result) : None` = `lookup(k)` and `resp_slot` =
    /// `lookup_slot(k)`; set → `resp_ok` = `set(..)`; after every cycle every slot against the
    /// CPU's `entry`. The first 5000 cycles are replayed through the Verilog under Verilator.
    fn matches_cpu<K, V, const KW: usize, const VW: usize, const N: usize, const S: usize>(
        seed: u64,
        key: impl Fn(u64) -> K,
        value: impl Fn(u64) -> V,
    ) where
        K: emu_core::Bits + std::fmt::Debug,
        V: emu_core::Bits + std::fmt::Debug,
    {
        let mut rng = XorShift(seed);
        let mut cpu: emu_core::Tcam<K, V, N> = emu_core::Tcam::default();
        let mut hw: Tcam<KW, VW, N, S> = Tcam::default();
        hw.connect_all();
        let mut trace = Trace::new(&hw, 5_000);
        let all_ones = if KW >= 64 { u64::MAX } else { (1 << KW) - 1 };
        let mut hits = 0;
        for step in 0..20_000 {
            // Keys from a small pool, so that rules and lookups meet.
            let k = key((rng.below(16) * 0x0101_0101_0101_0101) ^ (rng.below(4) & all_ones));
            let mask = key(match rng.below(4) {
                0 => all_ones,
                1 => 0,
                2 => all_ones << rng.below(KW as u64) & all_ones,
                _ => rng.below(u64::MAX) & all_ones,
            });
            let result = value(rng.below(u64::MAX));
            let slot = rng.below(1 << S);
            let op = match rng.below(10) {
                0 => 9,
                1 | 2 => Tcam::<KW, VW, N, S>::OP_SET,
                3 => Tcam::<KW, VW, N, S>::OP_CLEAR,
                4 => 3,
                _ => Tcam::<KW, VW, N, S>::OP_LOOKUP,
            };
            hw.req_valid.next = op != 9;
            hw.reset.next = op == 9 && rng.chance(1, 40);
            hw.req_op.next = (op & 3).into();
            hw.req_key.next = to_hdl(k);
            hw.req_mask.next = to_hdl(mask);
            hw.req_result.next = to_hdl(result);
            hw.req_slot.next = slot.into();
            tick(&mut hw);
            trace.record(&hw);
            match op {
                9 => {
                    if hw.reset.next {
                        cpu = emu_core::Tcam::default();
                    }
                }
                Tcam::<KW, VW, N, S>::OP_SET => {
                    assert_eq!(hw.resp_ok.val(), cpu.set(slot as usize, k, mask, result))
                }
                Tcam::<KW, VW, N, S>::OP_CLEAR => {
                    cpu.clear(slot as usize);
                    assert_eq!(hw.resp_ok.val(), (slot as usize) < N, "step {step}");
                }
                _ => {
                    let got = hw.resp_hit.val().then(|| from_hdl::<V, VW>(hw.resp_result.val()));
                    assert_eq!(got, cpu.lookup(k), "step {step}: lookup {k:?}");
                    let slot = hw.resp_hit.val().then(|| hw.resp_slot.val().to_u64() as usize);
                    assert_eq!(slot, cpu.lookup_slot(k), "step {step}");
                    hits += slot.is_some() as u32;
                }
            }
            for i in 0..N {
                let got =
                    hw.entry(i).map(|(v, m, r)| (from_hdl::<K, KW>(v), from_hdl::<K, KW>(m), from_hdl::<V, VW>(r)));
                assert_eq!(got, cpu.entry(i), "step {step}: slot {i}");
            }
        }
        assert!(hits > 500, "only {hits} lookups hit");
        trace.replay_in_verilator(&hw);
    }

    #[test]
    fn matches_cpu_tcam_on_random_operations() {
        matches_cpu::<u16, u8, 16, 8, 6, 3>(21, |k| k as u16, |v| v as u8);
        matches_cpu::<Ipv4Addr, u8, 32, 8, 8, 3>(22, |k| Ipv4Addr(k as u32), |v| v as u8);
        matches_cpu::<u8, bool, 8, 1, 1, 1>(23, |k| k as u8, |v| v & 1 == 1);
    }

    /// The run-time module against the block's with the exact slot width: one rule, a power of
    /// two, a size that is not, keys and results wider than 64 bits.
    #[test]
    fn tcam_module_is_the_blocks() {
        fn same<const KW: usize, const VW: usize, const N: usize, const S: usize>() {
            assert_eq!(S as u32, index_width(N as u64));
            let block = crate::hw::module(&Tcam::<KW, VW, N, S>::default(), "m");
            assert_eq!(block, tcam_module("m", KW as u32, VW as u32, N as u64), "Tcam<{KW}, {VW}, {N}, {S}>");
        }
        same::<1, 1, 1, 1>();
        same::<8, 1, 2, 1>();
        same::<32, 8, 16, 4>();
        same::<16, 8, 6, 3>();
        same::<100, 70, 3, 2>();
    }

    #[test]
    fn verilog_lints_and_synthesizes() {
        let stats = check_verilog(Tcam::<32, 8, 16, 4>::default(), "emu_tcam");
        assert_eq!(stats.count("RAMB"), 0, "a TCAM is registers: {stats:?}");
        check_lint(Tcam::<16, 8, 6, 3>::default(), "emu_tcam_6");
        check_lint(Tcam::<8, 1, 1, 1>::default(), "emu_tcam_1");
    }
}

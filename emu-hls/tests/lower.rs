//! The lowering (`emu_hls::lower`) of the REAL NFs, from their `HLS_SOURCE`: the IR it makes,
//! run by the IR interpreter before and after the optimization passes, gives exactly the CPU
//! NF's verdicts, output frames (byte for byte) and state on seeded random traffic. The
//! traffic generators are copies of those of `ir_learning_switch.rs` and `ir_icmp_echo.rs`
//! (which check the hand-built IR the same way).

mod common;

use common::Rng;
use emu_core::{Action, Meta, NetworkFunction, Packet};
use emu_hls::front::{self, Options};
use emu_hls::interp::{self, State};
use emu_hls::ir::{BitVec, Function};
use emu_hls::lower;
use emu_hls::passes;

/// `HLS_SOURCE` → front end → lowering.
fn lower_source(source: &str, window: usize) -> Function {
    let module: syn::ItemMod = syn::parse_str(source).expect("HLS_SOURCE parses");
    let nf = front::check_module(&module, &Options { window }).unwrap_or_else(|e| {
        panic!("front end: {}", e.iter().map(|e| e.message.clone()).collect::<Vec<_>>().join("\n"))
    });
    lower::lower(&nf, window as u32).unwrap_or_else(|e| panic!("lowering: {e}"))
}

fn optimized(f: &Function) -> Function {
    let mut opt = f.clone();
    passes::optimize(&mut opt).unwrap();
    opt
}

/// Compares `text` with the golden file `tests/golden/lower/NAME` (EMU_BLESS=1 rewrites it).
fn golden(name: &str, text: &str) {
    let path = format!("{}/tests/golden/lower/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("EMU_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}; run with EMU_BLESS=1"));
    assert_eq!(text, want, "rerun with EMU_BLESS=1 to accept the new text");
    assert_eq!(emu_hls::ir::parse(&want).unwrap().to_string(), want, "the golden text reads back");
}

// ---------------------------------------------------------------- learning switch

use common::switch;

#[test]
fn lowered_learning_switch_matches_the_cpu_before_and_after_passes() {
    let raw = lower_source(learning_switch::HLS_SOURCE, switch::WINDOW);
    let opt = optimized(&raw);
    let mut total = [0usize; 4];
    for seed in [0x5eed_0001u64, 0x9e37_79b9_7f4a_7c15, 0xdead_beef_cafe_f00d, 42] {
        let seen = switch::run_seed(seed, 2500, &[("lowered", &raw), ("lowered+optimized", &opt)]);
        for i in 0..4 {
            total[i] += seen[i];
        }
    }
    assert!(total[0] > 1000 && total[1] > 1000 && total[2] > 100, "verdicts seen: {total:?}");
}

#[test]
fn lowered_learning_switch_prints_as_expected() {
    let f = optimized(&lower_source(learning_switch::HLS_SOURCE, switch::WINDOW));
    golden("learning_switch.optimized.ir", &f.to_string());
}

// ---------------------------------------------------------------- ICMP echo responder

use common::echo;

#[test]
fn lowered_icmp_echo_matches_the_cpu_before_and_after_passes() {
    let raw = lower_source(icmp_echo::HLS_SOURCE, icmp_echo::WINDOW);
    let opt = optimized(&raw);
    let mut verdicts = Vec::new();
    for seed in [0x1c3e_c401u64, 0x9e37_79b9_7f4a_7c15, 0x0123_4567_89ab_cdef, 7] {
        verdicts.extend(echo::run_seed(seed, 2000, &[("lowered", &raw), ("lowered+optimized", &opt)]));
    }
    use emu_core::DropReason::*;
    let count = |a: Action| verdicts.iter().filter(|v| **v == a).count();
    for (a, at_least) in [
        (Action::Reply, 2000),
        (Action::Drop(NotForUs), 500),
        (Action::Drop(Ipv4Checksum), 50),
        (Action::Drop(IcmpChecksum), 50),
        (Action::Drop(Unsupported), 300),
    ] {
        assert!(count(a) >= at_least, "{a:?} seen {} times of {}", count(a), verdicts.len());
    }
}

#[test]
fn lowered_icmp_echo_prints_as_expected() {
    let f = optimized(&lower_source(icmp_echo::HLS_SOURCE, icmp_echo::WINDOW));
    golden("icmp_echo.optimized.ir", &f.to_string());
}

/// The lowering keeps the state the hand-built IR declares, with the same kinds.
#[test]
fn lowered_state_matches_the_hand_built_ir() {
    let decls = |f: &Function| f.states.iter().map(|(_, s)| format!("{} {:?}", s.name, s.kind)).collect::<Vec<_>>();
    let ls = lower_source(learning_switch::HLS_SOURCE, switch::WINDOW);
    assert_eq!(decls(&ls), decls(&common::learning_switch()));
    let ie = lower_source(icmp_echo::HLS_SOURCE, icmp_echo::WINDOW);
    assert_eq!(decls(&ie), decls(&common::icmp_echo()));
    let _ = echo::ME;
}

/// After the passes, the lowered switch is the hand-built one: as many blocks and
/// instructions (the text differs only in numbering; see the golden files).
#[test]
fn lowered_switch_is_as_small_as_the_hand_built_one() {
    let size = |f: &Function| {
        let insts: usize = f.layout.iter().map(|b| f.blocks[*b].insts.len()).sum();
        (f.layout.len(), insts)
    };
    let lowered = optimized(&lower_source(learning_switch::HLS_SOURCE, switch::WINDOW));
    let hand = optimized(&common::learning_switch());
    assert_eq!(size(&lowered), size(&hand), "lowered:\n{lowered}\nhand-built:\n{hand}");
    let lowered = optimized(&lower_source(icmp_echo::HLS_SOURCE, icmp_echo::WINDOW));
    let hand = optimized(&common::icmp_echo());
    let (l, h) = (size(&lowered), size(&hand));
    assert!(l.0 <= h.0 + 2 && l.1 <= h.1 + 4, "icmp echo: lowered {l:?}, hand-built {h:?}");
}

// ---------------------------------------------------------------- the other constructs

/// Compiles the module for the CPU and keeps its source for the HLS compiler, like
/// `#[emu::nf]` does.
macro_rules! nf_module {
    ($source:ident = mod $name:ident { $($body:tt)* }) => {
        mod $name { $($body)* }
        const $source: &str = stringify!(mod $name { $($body)* });
    };
}

nf_module! {
    MIX_SOURCE = mod mix {
        use emu_core::prelude::*;
        use emu_core::{Array, Counter, Register};

        #[derive(Default)]
        pub struct Mix {
            pub seen: Array<u16, 8>,
            pub last: Register<u8>,
            pub base: u8,
            pub hits: Counter,
        }

        fn swap(a: u8, b: u8) -> (u8, u8) {
            (b, a)
        }

        impl Mix {
            fn weight(&self, x: u8) -> u16 {
                if x > 200 {
                    return 0;
                }
                match x {
                    0 => 1,
                    1..=9 | 100 => 2,
                    _ => x as u16,
                }
            }
        }

        impl NetworkFunction for Mix {
            fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                if pkt.len() < 8 {
                    return Action::Drop(DropReason::Runt);
                }
                let mut sum: u16 = 0;
                for i in 0..6 {
                    let b = pkt.byte(i);
                    if b == 0xee {
                        break;
                    }
                    if b == 0xdd {
                        continue;
                    }
                    sum = sum.wrapping_add(self.weight(b));
                }
                let (x, y) = swap(pkt.byte(6), pkt.byte(7));
                let slot = (x & 7) as usize;
                let old = self.seen.get(slot);
                self.seen.set(slot, old.wrapping_add(sum));
                let prev = self.last.get();
                self.last.set(y);
                let signed = (y as i8) as i16;
                let hit = if prev == y && sum != 0 || x == self.base || signed < -100 { Some(prev) } else { None };
                pkt.set_byte(0, (sum >> 8) as u8);
                pkt.set_byte(1, sum as u8);
                let Some(p) = hit else {
                    return Action::Flood;
                };
                self.hits.inc();
                match (p & 3, meta.in_port) {
                    (0, 0) => Action::Reply,
                    (a, b) if a == b => Action::Drop(DropReason::SamePort),
                    (a, _) => Action::Forward(a),
                }
            }
        }
    }
}

/// Loops with `break`/`continue`, a helper with an early `return` called for its value, a
/// free function returning a tuple, integer and range and `|` patterns, tuple patterns with
/// a guard, `let … else`, `Option` locals, `&&`/`||`, signed casts, an array, a register, a
/// plain-value field: the lowered IR does what the CPU does.
#[test]
fn lowered_constructs_match_the_cpu() {
    let raw = lower_source(MIX_SOURCE, 64);
    let opt = optimized(&raw);
    let mut rng = Rng(0x51de_c0de);
    let mut cpu = mix::Mix { base: 3, ..Default::default() };
    let mut states: Vec<State> = [&raw, &opt]
        .iter()
        .map(|f| {
            let mut s = State::new(f);
            s.set_register("base", BitVec::new(8, 3)).unwrap();
            s
        })
        .collect();
    let mut verdicts = std::collections::HashMap::new();
    for n in 0..3000 {
        let len = if rng.percent(5) { rng.below(8) as usize } else { 8 + rng.below(60) as usize };
        let frame: Vec<u8> = (0..len)
            .map(|_| match rng.below(8) {
                0 => 0xee,
                1 => 0xdd,
                2 => rng.below(10) as u8,
                3 => 100,
                _ => rng.next() as u8,
            })
            .collect();
        let meta = Meta { in_port: rng.below(4) as u8, len: len as u16, timestamp: n };
        let mut cpu_frame = frame.clone();
        let want = cpu.process(&mut Packet::new(&mut cpu_frame, 64), &meta);
        *verdicts.entry(format!("{want:?}")).or_insert(0) += 1;
        for (f, state) in [&raw, &opt].iter().zip(states.iter_mut()) {
            let what = format!("frame {n}, in {}", common::hex(&frame));
            let mut ir_frame = frame.clone();
            let got = interp::run(f, state, &mut Packet::new(&mut ir_frame, 64), &meta).unwrap();
            assert_eq!(got, want, "{what}: action");
            assert_eq!(ir_frame, cpu_frame, "{what}: frame");
            assert_eq!(state.counter("hits"), Some(cpu.hits.get()), "{what}: hits");
            assert_eq!(state.register("last"), Some(BitVec::new(8, cpu.last.get() as u64)), "{what}: last");
            for i in 0..8 {
                assert_eq!(
                    state.array_get("seen", i),
                    Some(BitVec::new(16, cpu.seen.get(i) as u64)),
                    "{what}: seen[{i}]"
                );
            }
        }
    }
    assert!(verdicts.len() >= 5, "every verdict was reached: {verdicts:?}");
}

nf_module! {
    DIV_SOURCE = mod div {
        use emu_core::prelude::*;
        use emu_core::Register;

        #[derive(Default)]
        pub struct Div {
            pub q: Register<u64>,
            pub r: Register<u64>,
        }

        impl NetworkFunction for Div {
            fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                let a = pkt.byte(14);
                let b = (pkt.byte(15) as u16) << 8 | pkt.byte(16) as u16;
                let c = (pkt.byte(17) as u32) << 24 | (pkt.byte(18) as u32) << 16 | (pkt.byte(19) as u32) << 8
                    | pkt.byte(20) as u32;
                let d = (c as u64) << 32 | (b as u64) << 16 | (a as u64) << 8 | meta.len as u64;
                pkt.set_byte(14, a / 10);
                pkt.set_byte(15, a % 3);
                let b7 = b / 7;
                pkt.set_byte(16, (b7 >> 8) as u8);
                pkt.set_byte(17, b7 as u8);
                pkt.set_byte(18, (b % 1000 >> 8) as u8);
                pkt.set_byte(19, (b % 1000) as u8);
                let c10 = c / 10;
                pkt.set_byte(20, (c10 >> 24) as u8);
                pkt.set_byte(21, (c10 >> 16) as u8);
                pkt.set_byte(22, (c10 >> 8) as u8);
                pkt.set_byte(23, c10 as u8);
                pkt.set_byte(24, (c % 10) as u8);
                self.q.set(d / 1_000_000_007);
                self.r.set(d % 0x7fff_ffff);
                Action::Reply
            }
        }
    }
}

/// Division and remainder by constants that are not powers of two (a multiplication by the
/// constant's reciprocal in the lowering) give the CPU's quotients and remainders, for 8-,
/// 16-, 32- and 64-bit values, before and after the passes.
#[test]
fn lowered_division_by_constants_matches_the_cpu() {
    let raw = lower_source(DIV_SOURCE, 64);
    let opt = optimized(&raw);
    let mut rng = Rng(0xd1_71de);
    let mut cpu = div::Div::default();
    let mut states: Vec<State> = [&raw, &opt].iter().map(|f| State::new(f)).collect();
    for n in 0..2000 {
        let len = 25 + rng.below(40) as usize;
        let frame: Vec<u8> = (0..len)
            .map(|i| match (n % 4, i) {
                (0, _) => 0xff,
                (1, _) => 0,
                _ => rng.next() as u8,
            })
            .collect();
        let meta = Meta { in_port: 0, len: len as u16, timestamp: n };
        let mut cpu_frame = frame.clone();
        let want = cpu.process(&mut Packet::new(&mut cpu_frame, 64), &meta);
        for (f, state) in [&raw, &opt].iter().zip(states.iter_mut()) {
            let what = format!("frame {n}, in {}", common::hex(&frame));
            let mut ir_frame = frame.clone();
            let got = interp::run(f, state, &mut Packet::new(&mut ir_frame, 64), &meta).unwrap();
            assert_eq!(got, want, "{what}: action");
            assert_eq!(ir_frame, cpu_frame, "{what}: frame");
            assert_eq!(state.register("q"), Some(BitVec::new(64, cpu.q.get())), "{what}: q");
            assert_eq!(state.register("r"), Some(BitVec::new(64, cpu.r.get())), "{what}: r");
        }
    }
}

/// What the lowering does not support yet is an error with the span, not a panic.
#[test]
fn unsupported_constructs_are_errors_with_spans() {
    let src = r#"mod tbl {
        use emu::prelude::*;
        pub struct Tbl { t: HashTable<u32, u8, 64> }
        impl NetworkFunction for Tbl {
            fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                Action::Forward(self.t.set_of(7) as u8)
            }
        }
    }"#;
    let module: syn::ItemMod = syn::parse_str(src).unwrap();
    let nf = front::check_module(&module, &Options { window: 64 }).unwrap();
    let e = lower::lower(&nf, 64).unwrap_err();
    assert!(e.message.contains("`HashTable::set_of` is not supported by the lowering yet"), "{e}");
    assert_eq!(e.line_col().0, 6, "{e}");
}

nf_module! {
    TABLES_SOURCE = mod tables {
        use emu_core::prelude::*;
        use emu_core::{HashTable, Lru, Queue, Tcam};

        #[derive(Default)]
        pub struct Tables {
            pub recent: Lru<u16, u8, 4>,
            pub flows: HashTable<u32, u16, 16, 2>,
            pub macs: HashTable<Mac, u8, 8, 1>,
            pub rules: Tcam<u16, u8, 5>,
            pub backlog: Queue<u16, 3>,
        }

        impl NetworkFunction for Tables {
            fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                let op = pkt.byte(14);
                let k = (pkt.byte(15) as u16) << 8 | pkt.byte(16) as u16;
                let v = pkt.byte(17);
                let flow = (k as u32).wrapping_mul(0x9e37_79b9);
                let mut r0: u8 = 0xee;
                let mut r1: u8 = 0xee;
                let mut r2: u8 = 0xee;
                match op & 31 {
                    0 => {
                        if let Some(x) = self.recent.get(k) {
                            r0 = x;
                            r1 = 1;
                        }
                    }
                    1 => r0 = self.recent.peek(k).unwrap_or(0xaa),
                    2 => r0 = self.recent.contains(k) as u8,
                    3..=5 => match self.recent.insert(k, v) {
                        Some((ek, ev)) => {
                            r0 = ek as u8;
                            r1 = ev;
                            r2 = 1;
                        }
                        None => r2 = 0,
                    },
                    6 => r0 = self.recent.remove(k).unwrap_or(0xbb),
                    7 => {
                        if let Some(x) = self.flows.get(flow) {
                            r0 = (x >> 8) as u8;
                            r1 = x as u8;
                        }
                    }
                    8 => r0 = self.flows.contains(flow) as u8,
                    9..=11 => {
                        if let Some((ek, ev)) = self.flows.insert(flow, (v as u16) << 4 | 3) {
                            r0 = (ek >> 16) as u8 ^ ek as u8;
                            r1 = ev as u8;
                            r2 = 1;
                        }
                    }
                    12 => {
                        if let Some(x) = self.flows.remove(flow) {
                            r0 = x as u8;
                            r1 = 1;
                        }
                    }
                    13 | 14 => {
                        let mask = (pkt.byte(18) as u16) << 8 | pkt.byte(19) as u16;
                        r0 = self.rules.set((v & 7) as usize, k, mask, v) as u8;
                    }
                    15 => self.rules.clear((v & 7) as usize),
                    16 | 17 => match self.rules.lookup(k) {
                        Some(x) => r0 = x,
                        None => r1 = 7,
                    },
                    18 => {
                        if let Some(slot) = self.rules.lookup_slot(k) {
                            r0 = slot as u8;
                            r1 = 1;
                        }
                    }
                    19 | 20 => match self.backlog.push(k) {
                        Ok(()) => r0 = 1,
                        Err(back) => {
                            r0 = 2;
                            r1 = back as u8;
                        }
                    },
                    21 => {
                        if let Some(x) = self.backlog.pop() {
                            r0 = (x >> 8) as u8;
                            r1 = x as u8;
                            r2 = 1;
                        }
                    }
                    22 => r0 = self.backlog.peek().unwrap_or(0xffff) as u8,
                    23 => {
                        r0 = self.backlog.len() as u8;
                        r1 = self.backlog.is_empty() as u8;
                        r2 = self.backlog.is_full() as u8 | (self.backlog.capacity() as u8) << 4;
                    }
                    24 => {
                        if self.backlog.push(v as u16).is_err() {
                            return Action::Drop(DropReason::Policy);
                        }
                    }
                    25 | 26 => {
                        if let Some((m, p)) = self.macs.insert(pkt.ethernet().src(), meta.in_port) {
                            r0 = p;
                            r1 = m.0.value() as u8;
                            r2 = 1;
                        }
                    }
                    27 => r0 = self.macs.get(pkt.ethernet().dst()).unwrap_or(0x55),
                    _ => return Action::Flood,
                }
                pkt.set_byte(20, r0);
                pkt.set_byte(21, r1);
                pkt.set_byte(22, r2);
                Action::Forward(meta.in_port)
            }
        }
    }
}

/// An NF using `Lru`, `HashTable` (4-byte and 6-byte keys), `Tcam` and `Queue` through every
/// per-packet method: the lowered IR, before and after the passes, gives the CPU's verdicts and
/// frames and leaves the same contents in every element (slots, recency order, rules, values),
/// on seeded random operations that fill the tables and evict.
#[test]
fn lowered_state_elements_match_the_cpu() {
    let raw = lower_source(TABLES_SOURCE, 64);
    let opt = optimized(&raw);
    let text = raw.to_string();
    for decl in ["lru<u16, u8, 4>", "hash_table<u32, u16, 16, 2>", "hash_table<u48, u8, 8, 1>", "tcam<u16, u8, 5>"] {
        assert!(text.contains(decl), "{decl}: {text}");
    }
    let mut rng = Rng(0x7ab1_e5ed);
    let mut cpu = tables::Tables::default();
    let mut states: Vec<State> = [&raw, &opt].iter().map(|f| State::new(f)).collect();
    let mut verdicts = std::collections::BTreeMap::new();
    let mac = |x: u64| [2, 0, 0, 0, 0, x as u8];
    for n in 0..6000 {
        let mut frame = rng.bytes(60);
        frame[0..6].copy_from_slice(&mac(rng.below(20)));
        frame[6..12].copy_from_slice(&mac(rng.below(20)));
        // Pops as often as pushes, so that the queue empties as well as fills.
        frame[14] = if rng.percent(10) { 21 } else { rng.below(30) as u8 };
        let k = rng.below(12) as u16;
        frame[15..17].copy_from_slice(&(k * 0x0101).to_be_bytes());
        let meta = Meta { in_port: rng.below(4) as u8, len: 60, timestamp: n };
        let mut cpu_frame = frame.clone();
        let want = cpu.process(&mut Packet::new(&mut cpu_frame, 64), &meta);
        *verdicts.entry(format!("{want:?}")).or_insert(0) += 1;
        let seen = match (frame[14], &cpu_frame[20..23]) {
            (3..=5, [_, _, 1]) => "lru evicted",
            (9..=11, [_, _, 1]) => "flows evicted",
            (25 | 26, [_, _, 1]) => "macs evicted",
            (16 | 17, [_, r1, _]) if *r1 != 7 => "rule matched",
            (18, [_, 1, _]) => "rule slot matched",
            (19 | 20, [2, _, _]) => "push rejected",
            (21, [_, _, 0xee]) => "pop of an empty queue",
            (0, [_, 1, _]) => "lru hit",
            _ => "other",
        };
        *verdicts.entry(seen.to_string()).or_insert(0) += 1;
        for (f, state) in [&raw, &opt].iter().zip(states.iter_mut()) {
            let what = format!("frame {n}, op {}, in {}", frame[14], common::hex(&frame));
            let mut ir_frame = frame.clone();
            let got = interp::run(f, state, &mut Packet::new(&mut ir_frame, 64), &meta).unwrap();
            assert_eq!(got, want, "{what}: action");
            assert_eq!(ir_frame, cpu_frame, "{what}: frame");
            let b16 = |x: u16| BitVec::new(16, x as u64);
            let b8 = |x: u8| BitVec::new(8, x as u64);
            let lru: Vec<_> = cpu.recent.entries().map(|(i, k, v)| (i, b16(k), b8(v))).collect();
            assert_eq!(state.lru_entries("recent").unwrap(), lru, "{what}: recent");
            let order: Vec<_> = cpu.recent.keys_by_recency().map(b16).collect();
            assert_eq!(state.lru_keys_by_recency("recent").unwrap(), order, "{what}: recency");
            let flows: Vec<_> = cpu.flows.entries().map(|(i, k, v)| (i, BitVec::new(32, k as u64), b16(v))).collect();
            assert_eq!(state.hash_table_entries("flows").unwrap(), flows, "{what}: flows");
            let macs: Vec<_> = cpu.macs.entries().map(|(i, k, v)| (i, BitVec::new(48, k.0.value()), b8(v))).collect();
            assert_eq!(state.hash_table_entries("macs").unwrap(), macs, "{what}: macs");
            let rules: Vec<_> =
                (0..5).filter_map(|i| cpu.rules.entry(i).map(|(v, m, r)| (i, b16(v), b16(m), b8(r)))).collect();
            assert_eq!(state.tcam_entries("rules").unwrap(), rules, "{what}: rules");
            let backlog: Vec<_> = cpu.backlog.iter().map(b16).collect();
            assert_eq!(state.queue_values("backlog").unwrap(), backlog, "{what}: backlog");
        }
    }
    for what in [
        "Flood",
        "Drop(Policy)",
        "lru evicted",
        "flows evicted",
        "macs evicted",
        "rule matched",
        "rule slot matched",
        "push rejected",
        "pop of an empty queue",
        "lru hit",
    ] {
        assert!(verdicts.get(what).copied().unwrap_or(0) >= 20, "{what}: {verdicts:?}");
    }
}

nf_module! {
    SUMS_SOURCE = mod sums {
        use emu_core::prelude::*;
        use emu_core::Counter;

        #[derive(Default)]
        pub struct Sums {
            pub frames: Counter,
        }

        impl NetworkFunction for Sums {
            fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                self.frames.inc();
                let ip = pkt.ipv4();
                let (src, dst) = (ip.src(), ip.dst());
                let l4 = 14 + ip.header_len();
                let mut flags: u8 = 0;
                if pkt.udp_at(l4).checksum_ok(src, dst) {
                    flags |= 1;
                }
                if pkt.tcp_at(l4).checksum_ok(src, dst) {
                    flags |= 2;
                }
                if pkt.icmpv4_at(l4).checksum_ok() {
                    flags |= 4;
                }
                if pkt.ipv4().checksum_ok() {
                    flags |= 8;
                }
                let p = checksum::pseudo_header(src, dst, 17, pkt.len() as u16);
                let c = checksum::update32(checksum::fold(p), src.0, dst.0);
                pkt.set_byte(12, (c >> 8) as u8);
                pkt.set_byte(13, c as u8);
                match meta.in_port {
                    0 => pkt.udp_at_mut(l4).fill_checksum(src, dst),
                    1 => pkt.tcp_at_mut(l4).fill_checksum(src, dst),
                    2 => pkt.icmpv4_at_mut(l4).fill_checksum(),
                    _ => pkt.ipv4_mut().fill_checksum(),
                }
                Action::Forward(flags)
            }
        }
    }
}

/// The checksum helpers of the header views (`checksum_ok`, `fill_checksum` of IPv4, ICMP,
/// UDP and TCP) and of `checksum::` give the CPU's results and frames, on frames with right
/// and wrong checksums, IP options, and frames cut short anywhere (inside the window of 64).
#[test]
fn lowered_checksums_match_the_cpu() {
    let raw = lower_source(SUMS_SOURCE, 64);
    let opt = optimized(&raw);
    let mut rng = Rng(0xc5c5_0001);
    let mut cpu = sums::Sums::default();
    let mut states: Vec<State> = [&raw, &opt].iter().map(|f| State::new(f)).collect();
    let mut flags_seen = [0usize; 16];
    for n in 0..4000 {
        let len = match rng.below(4) {
            0 => rng.below(100) as usize,
            _ => 34 + rng.below(40) as usize,
        };
        let mut frame = rng.bytes(len);
        if frame.len() > 14 {
            frame[14] = 0x40 | if rng.percent(70) { 5 } else { rng.below(16) as u8 };
        }
        // Often make one of the checksums right, as the CPU computes it.
        if rng.percent(60) {
            let meta = Meta { in_port: rng.below(4) as u8, len: len as u16, timestamp: 0 };
            let mut fixer = sums::Sums::default();
            fixer.process(&mut Packet::new(&mut frame, 64), &meta);
            if rng.percent(20) && !frame.is_empty() {
                let i = rng.below(frame.len() as u64) as usize;
                frame[i] ^= 1 << rng.below(8);
            }
        }
        let meta = Meta { in_port: rng.below(4) as u8, len: frame.len() as u16, timestamp: n };
        let mut cpu_frame = frame.clone();
        let want = cpu.process(&mut Packet::new(&mut cpu_frame, 64), &meta);
        if let Action::Forward(f) = want {
            flags_seen[f as usize & 15] += 1;
        }
        for (f, state) in [&raw, &opt].iter().zip(states.iter_mut()) {
            let what = format!("frame {n}, in_port {}, in {}", meta.in_port, common::hex(&frame));
            let mut ir_frame = frame.clone();
            let got = interp::run(f, state, &mut Packet::new(&mut ir_frame, 64), &meta).unwrap();
            assert_eq!(got, want, "{what}: action");
            assert_eq!(ir_frame, cpu_frame, "{what}: frame");
        }
    }
    for bit in 0..4 {
        let hits: usize = flags_seen.iter().enumerate().filter(|(f, _)| f & (1 << bit) != 0).map(|(_, n)| n).sum();
        assert!(hits > 50, "checksum_ok #{bit} held {hits} times: {flags_seen:?}");
    }
}

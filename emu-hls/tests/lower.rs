//! The lowering (`emu_hls::lower`) of the REAL NFs, from their `HLS_SOURCE`: the IR it makes,
//! run by the IR interpreter before and after the optimization passes, gives exactly the CPU
//! NF's verdicts, output frames (byte for byte) and state on seeded random traffic. The
//! traffic generators are copies of those of `ir_learning_switch.rs` and `ir_icmp_echo.rs`
//! (which check the hand-built IR the same way).

mod common;

use common::Rng;
use emu_core::wire::{icmpv4, ipv4};
use emu_core::{craft, Action, Ipv4Addr, Mac, Meta, NetworkFunction, Packet, Scalar};
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

mod switch {
    use super::*;
    use learning_switch::LearningSwitch;

    pub const WINDOW: usize = learning_switch::HLS_WINDOW;

    fn host(i: u64) -> [u8; 6] {
        [2, 0, 0, 0, 0x10, i as u8]
    }

    /// A random frame and the port it arrives on (as in `ir_learning_switch.rs`).
    fn traffic(rng: &mut Rng, homes: &mut [u8; 24]) -> (Vec<u8>, u8) {
        let dst: [u8; 6] = match rng.below(10) {
            0 => [0xff; 6],
            1 => [0x01, 0x00, 0x5e, 0, 0, rng.below(4) as u8],
            2 => [2, 0, 0, 0, 0x20, rng.below(200) as u8],
            _ => host(rng.below(24)),
        };
        let s = rng.below(24) as usize;
        let src = if rng.percent(3) { [0x01, 0x80, 0xc2, 0, 0, 0] } else { host(s as u64) };
        if rng.percent(4) {
            homes[s] = rng.below(4) as u8;
        }
        let in_port = if rng.percent(90) { homes[s] } else { rng.below(4) as u8 };
        let mut f = dst.to_vec();
        f.extend_from_slice(&src);
        f.extend_from_slice(&[0x88, 0xb5]);
        let len = match rng.below(20) {
            0 => rng.below(14) as usize,
            1 => 60 + rng.below(1455) as usize,
            _ => 60,
        };
        f.resize(len.max(f.len().min(len)), 0);
        f.truncate(len);
        for b in f.iter_mut().skip(14) {
            *b = rng.next() as u8;
        }
        (f, in_port)
    }

    fn check_state(nf: &LearningSwitch, state: &State, what: &str) {
        let cpu: Vec<(usize, BitVec, BitVec)> = nf
            .mac_table
            .entries()
            .map(|(i, k, v): (usize, Mac, u8)| (i, BitVec::new(48, k.to_u64()), BitVec::new(8, v as u64)))
            .collect();
        assert_eq!(state.cam_entries("mac_table").unwrap(), cpu, "{what}: mac_table");
        assert_eq!(state.counter("floods"), Some(nf.floods.get()), "{what}: floods");
    }

    pub fn run_seed(seed: u64, frames: usize, tiers: &[(&str, &Function)]) -> [usize; 4] {
        let mut rng = Rng(seed);
        let mut homes = [0u8; 24];
        for h in homes.iter_mut() {
            *h = rng.below(4) as u8;
        }
        let mut nf = LearningSwitch::default();
        let mut states: Vec<State> = tiers.iter().map(|(_, f)| State::new(f)).collect();
        let mut seen = [0usize; 4];
        for n in 0..frames {
            let (frame, in_port) = traffic(&mut rng, &mut homes);
            let meta = Meta { in_port, len: frame.len() as u16, timestamp: n as u64 };
            let mut cpu_frame = frame.clone();
            let want = nf.process(&mut Packet::new(&mut cpu_frame, WINDOW), &meta);
            seen[match want {
                Action::Forward(_) => 0,
                Action::Flood => 1,
                Action::Drop(_) => 2,
                _ => 3,
            }] += 1;
            for ((name, f), state) in tiers.iter().zip(states.iter_mut()) {
                let what =
                    format!("seed {seed:#x}, frame {n} ({name} IR), in_port {in_port}, in {}", common::hex(&frame));
                let mut ir_frame = frame.clone();
                let got = interp::run(f, state, &mut Packet::new(&mut ir_frame, WINDOW), &meta).unwrap();
                assert_eq!(got, want, "{what}: action");
                assert_eq!(ir_frame, cpu_frame, "{what}: frame");
                check_state(&nf, state, &what);
            }
        }
        seen
    }
}

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

mod echo {
    use super::*;
    use icmp_echo::IcmpEcho;

    pub const ME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    pub const MY_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 1]);

    fn peer(rng: &mut Rng) -> (Mac, Ipv4Addr) {
        let n = rng.below(6) as u8 + 2;
        (Mac::from_bytes([2, 0, 0, 0, 0, n]), Ipv4Addr::new(10, 0, 0, n))
    }

    fn target(rng: &mut Rng) -> Ipv4Addr {
        match rng.below(10) {
            0 => Ipv4Addr(rng.next() as u32),
            1 => Ipv4Addr::new(10, 0, 0, 9),
            _ => ME,
        }
    }

    fn fix_ip_checksum(f: &mut [u8]) {
        if f.len() >= 34 {
            ipv4::Header::new_unchecked(&mut f[14..]).fill_checksum();
        }
    }

    fn echo(rng: &mut Rng) -> Vec<u8> {
        let (mac, src) = peer(rng);
        let len = match rng.below(8) {
            0 => 0,
            1 => 1400,
            2 => 56,
            3 => 1 + 2 * rng.below(40) as usize,
            _ => rng.below(1470) as usize,
        };
        let data = rng.bytes(len);
        let request = rng.percent(92);
        let mut ip = craft::icmp_echo(src, target(rng), request, rng.next() as u16, rng.next() as u16, &data);
        let mut h = ipv4::Header::new_unchecked(&mut ip[..]);
        h.set_ttl(rng.below(256) as u8);
        if rng.percent(20) {
            let words = 1 + rng.below(10) as usize;
            let opts = rng.bytes(4 * words);
            let mut with = ip[..20].to_vec();
            with.extend_from_slice(&opts);
            with.extend_from_slice(&ip[20..]);
            ip = with;
            let mut h = ipv4::Header::new_unchecked(&mut ip[..]);
            h.set_ihl(emu_core::u4::new(5 + words as u8));
            let total = ip.len() as u16;
            let mut h = ipv4::Header::new_unchecked(&mut ip[..]);
            h.set_total_len(total);
        }
        match rng.below(12) {
            0 => ipv4::Header::new_unchecked(&mut ip[..]).set_more_frags(true),
            1 => ipv4::Header::new_unchecked(&mut ip[..]).set_frag_offset(emu_core::u13::new(rng.below(8192) as u16)),
            2 => ipv4::Header::new_unchecked(&mut ip[..]).set_protocol(if rng.percent(50) { 17 } else { 6 }),
            3 => {
                let hl = ipv4::Header::new_unchecked(&ip[..]).header_len();
                icmpv4::Header::new_unchecked(&mut ip[hl..]).set_code(rng.next() as u8);
            }
            _ => {}
        }
        let mut f = craft::ethernet(MY_MAC, mac, 0x0800, &ip);
        fix_ip_checksum(&mut f);
        f
    }

    fn arp(rng: &mut Rng) -> Vec<u8> {
        let (mac, ip) = peer(rng);
        let oper = if rng.percent(90) { 1 } else { 2 };
        let mut p = craft::arp(oper, mac, ip, Mac::default(), target(rng));
        if rng.percent(15) {
            let i = rng.below(6) as usize;
            p[i] ^= 1 << rng.below(8);
        }
        craft::ethernet(Mac::BROADCAST, mac, 0x0806, &p)
    }

    /// A random frame, often damaged (as in `ir_icmp_echo.rs`).
    fn traffic(rng: &mut Rng) -> Vec<u8> {
        let mut f = match rng.below(10) {
            0..=2 => arp(rng),
            3..=7 => echo(rng),
            8 => {
                let (mac, _) = peer(rng);
                let n = rng.below(80) as usize;
                craft::ethernet(MY_MAC, mac, rng.next() as u16, &rng.bytes(n))
            }
            _ => {
                let n = rng.below(100) as usize;
                rng.bytes(n)
            }
        };
        if rng.percent(10) && !f.is_empty() {
            let i = rng.below(f.len() as u64) as usize;
            f[i] ^= 1 << rng.below(8);
        }
        if rng.percent(5) && f.len() > 18 {
            f[16] = rng.next() as u8;
            f[17] = rng.next() as u8;
            if rng.percent(50) {
                fix_ip_checksum(&mut f);
            }
        }
        if rng.percent(8) {
            let n = rng.below(f.len() as u64 + 1) as usize;
            f.truncate(n);
        }
        f
    }

    /// The registers `ip` and `mac` loaded from the CPU instance's fields.
    fn new_state(f: &Function, nf: &IcmpEcho) -> State {
        let mut s = State::new(f);
        s.set_register("ip", BitVec::new(32, nf.ip.0 as u64)).unwrap();
        s.set_register("mac", BitVec::new(48, nf.mac.to_u64())).unwrap();
        s
    }

    pub fn run_seed(seed: u64, frames: usize, tiers: &[(&str, &Function)]) -> Vec<Action> {
        let mut rng = Rng(seed);
        let mut nf = IcmpEcho::new(ME, MY_MAC);
        let mut states: Vec<State> = tiers.iter().map(|(_, f)| new_state(f, &nf)).collect();
        let mut verdicts = Vec::new();
        for n in 0..frames {
            let frame = traffic(&mut rng);
            let meta = Meta { in_port: rng.below(4) as u8, len: frame.len() as u16, timestamp: n as u64 };
            let mut cpu_frame = frame.clone();
            let want = nf.process(&mut Packet::new(&mut cpu_frame, icmp_echo::WINDOW), &meta);
            verdicts.push(want);
            for ((name, f), state) in tiers.iter().zip(states.iter_mut()) {
                let what = format!("seed {seed:#x}, frame {n} ({name} IR), in {}", common::hex(&frame));
                let mut ir_frame = frame.clone();
                let got = interp::run(f, state, &mut Packet::new(&mut ir_frame, icmp_echo::WINDOW), &meta).unwrap();
                assert_eq!(got, want, "{what}: action");
                if let Some(i) = (0..cpu_frame.len().max(ir_frame.len())).find(|&i| cpu_frame.get(i) != ir_frame.get(i))
                {
                    panic!(
                        "{what}: output frames differ first at byte {i}: cpu {:02x?}, ir {:02x?}",
                        cpu_frame.get(i),
                        ir_frame.get(i)
                    );
                }
                assert_eq!(state.counter("replies"), Some(nf.replies.get()), "{what}: replies");
                assert_eq!(state.counter("arp_replies"), Some(nf.arp_replies.get()), "{what}: arp_replies");
                assert_eq!(state.register("ip"), Some(BitVec::new(32, nf.ip.0 as u64)), "{what}: ip");
                assert_eq!(state.register("mac"), Some(BitVec::new(48, nf.mac.to_u64())), "{what}: mac");
            }
        }
        verdicts
    }
}

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

/// What the lowering does not support yet is an error with the span, not a panic.
#[test]
fn unsupported_constructs_are_errors_with_spans() {
    let src = r#"mod tbl {
        use emu::prelude::*;
        pub struct Tbl { t: HashTable<u32, u8, 64> }
        impl NetworkFunction for Tbl {
            fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                Action::Flood
            }
        }
    }"#;
    let module: syn::ItemMod = syn::parse_str(src).unwrap();
    let nf = front::check_module(&module, &Options { window: 64 }).unwrap();
    let e = lower::lower(&nf, 64).unwrap_err();
    assert!(e.message.contains("`HashTable` has no IR state element yet"), "{e}");
    assert_eq!(e.line_col().0, 3, "{e}");
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

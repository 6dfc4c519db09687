//! Unit tests of the lowering: small NFs, and the errors for what is not supported yet.

use super::*;
use crate::front::{check_module, Options};

fn lower_src(src: &str) -> Result<Function, LowerError> {
    let module: syn::ItemMod = syn::parse_str(src).unwrap();
    let nf = check_module(&module, &Options { window: 64 }).unwrap_or_else(|e| panic!("front end: {e:?}"));
    lower(&nf, 64)
}

#[test]
fn a_counter_and_a_verdict() {
    let f = lower_src(
        r#"mod mirror {
            use emu::prelude::*;
            pub struct Mirror { frames: Counter }
            impl NetworkFunction for Mirror {
                fn process(&mut self, pkt: &mut Packet, _meta: &Meta) -> Action {
                    self.frames.inc();
                    Action::Reply
                }
            }
        }"#,
    )
    .unwrap();
    let text = f.to_string();
    assert!(text.contains("state frames: counter<u64>"), "{text}");
    assert!(text.contains("counter.inc frames"), "{text}");
    assert!(text.contains("return reply"), "{text}");
}

#[test]
fn unsupported_element_methods_are_errors_with_a_span() {
    let e = lower_src(
        r#"mod q {
            use emu::prelude::*;
            pub struct Q { t: Lru<u8, u8, 4> }
            impl NetworkFunction for Q {
                fn process(&mut self, pkt: &mut Packet, _meta: &Meta) -> Action {
                    if self.t.len() > 2 {
                        return Action::Reply;
                    }
                    Action::Flood
                }
            }
        }"#,
    )
    .unwrap_err();
    assert!(e.message.contains("`Lru::len` is not supported by the lowering yet"), "{e}");
    assert_eq!(e.line_col().0, 6, "{e}");
}

/// `Lru`, `HashTable`, `Tcam` and `Queue` fields become state declarations of their shapes,
/// and each per-packet method one op; `Queue::push`'s `Result` is matched on and tested.
#[test]
fn each_state_element_and_its_methods() {
    let f = lower_src(
        r#"mod t {
            use emu::prelude::*;
            pub struct T {
                recent: Lru<Ipv4Addr, Mac, 32>,
                flows: HashTable<u32, u16, 1024>,
                routes: Tcam<Ipv4Addr, Port, 24>,
                backlog: Queue<u16, 100>,
            }
            impl NetworkFunction for T {
                fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                    let ip = pkt.ipv4();
                    let (src, dst) = (ip.src(), ip.dst());
                    if self.recent.peek(src).is_none() && !self.recent.contains(dst) {
                        self.recent.insert(src, pkt.ethernet().src());
                    }
                    let mac = self.recent.get(dst).unwrap_or(Mac::BROADCAST);
                    self.recent.remove(Ipv4Addr::new(0, 0, 0, 0));
                    let flow = src.0 ^ dst.0;
                    let n = self.flows.get(flow).unwrap_or(0);
                    if let Some((_, old)) = self.flows.insert(flow, n.wrapping_add(1)) {
                        self.flows.remove(old as u32);
                    }
                    let known = self.flows.contains(flow);
                    if meta.in_port == 3 {
                        self.routes.set(pkt.byte(20) as usize, dst, Ipv4Addr::new(255, 255, 255, 0), 1);
                        self.routes.clear(23);
                    }
                    match self.backlog.push(n) {
                        Ok(()) => {}
                        Err(back) => {
                            pkt.set_byte(30, back as u8);
                        }
                    }
                    if self.backlog.is_full() || self.backlog.len() > self.backlog.capacity() / 2 {
                        let _ = self.backlog.pop();
                    }
                    let first = self.backlog.peek().unwrap_or(0);
                    if self.backlog.is_empty() || first == 7 || !known || mac.is_broadcast() {
                        return Action::Flood;
                    }
                    match (self.routes.lookup(dst), self.routes.lookup_slot(dst)) {
                        (Some(port), Some(slot)) if slot < 8 => Action::Forward(port),
                        _ => Action::Drop(DropReason::NoRoute),
                    }
                }
            }
        }"#,
    )
    .unwrap();
    let text = f.to_string();
    for decl in [
        "state recent: lru<u32, u48, 32>",
        "state flows: hash_table<u32, u16, 1024, 4>",
        "state routes: tcam<u32, u8, 24>",
        "state backlog: queue<u16, 100>",
    ] {
        assert!(text.contains(&format!("    {decl}\n")), "{decl}: {text}");
    }
    for op in [
        ":u1, v", // (found, value) pairs
        " = lru.peek recent, ",
        ":u1 = lru.contains recent, ",
        ":u48 = lru.insert recent, ",
        ":u48 = lru.get recent, ",
        ":u48 = lru.remove recent, ",
        ":u16 = hash_table.get flows, ",
        ":u16 = hash_table.insert flows, ",
        ":u16 = hash_table.remove flows, ",
        ":u1 = hash_table.contains flows, ",
        ":u1 = tcam.set routes, ",
        "    tcam.clear routes, ",
        ":u8 = tcam.lookup routes, ",
        ":u5 = tcam.lookup_slot routes, ",
        ":u1 = queue.push backlog, ",
        ":u1 = queue.is_full backlog\n",
        ":u7 = queue.len backlog\n",
        ":u16 = queue.pop backlog\n",
        ":u16 = queue.peek backlog\n",
        ":u1 = queue.is_empty backlog\n",
    ] {
        assert!(text.contains(op), "{op}: {text}");
    }
    let mut opt = f.clone();
    crate::passes::optimize(&mut opt).unwrap();
    crate::ir::verify(&opt).unwrap();
}

/// `Ok`/`Err` made, bound, matched, compared and tested (`is_ok`, `is_err`) as values.
#[test]
fn results_as_values() {
    let f = lower_src(
        r#"mod r {
            use emu::prelude::*;
            pub struct R { q: Queue<u8, 2> }
            fn check(x: u8) -> Result<u8, u16> {
                if x > 100 { Err(x as u16 * 3) } else { Ok(x + 1) }
            }
            impl NetworkFunction for R {
                fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                    let r = check(pkt.byte(0));
                    let pushed = self.q.push(pkt.byte(1));
                    if pushed.is_err() {
                        pkt.set_byte(2, 0xee);
                    }
                    if r == Ok(5u8) {
                        return Action::Reply;
                    }
                    match r {
                        Ok(v) => Action::Forward(v & 3),
                        Err(e) if e > 400 => Action::Drop(DropReason::Policy),
                        Err(_) => {
                            if r.is_ok() { Action::Flood } else { Action::Forward(meta.in_port) }
                        }
                    }
                }
            }
        }"#,
    )
    .unwrap();
    let mut state = crate::interp::State::new(&f);
    for (b0, b1, port, want, byte2) in [
        (4u8, 0u8, 0u8, emu_core::Action::Reply, 0u8),
        (6, 0, 0, emu_core::Action::Forward(3), 0),
        (200, 0, 2, emu_core::Action::Drop(DropReason::Policy), 0xee),
        (101, 0, 2, emu_core::Action::Forward(2), 0xee),
    ] {
        let mut frame = vec![0u8; 60];
        frame[0] = b0;
        frame[1] = b1;
        let meta = emu_core::Meta { in_port: port, len: 60, timestamp: 0 };
        let got = crate::interp::run_frame(&f, &mut state, &mut frame, &meta).unwrap();
        assert_eq!((got, frame[2]), (want, byte2), "bytes {b0}, {b1}");
    }
}

fn run(f: &Function, frame: &[u8], in_port: u8) -> (emu_core::Action, Vec<u8>) {
    let mut state = crate::interp::State::new(f);
    let mut frame = frame.to_vec();
    let meta = emu_core::Meta { in_port, len: frame.len() as u16, timestamp: 0 };
    let a = crate::interp::run_frame(f, &mut state, &mut frame, &meta).unwrap();
    (a, frame)
}

fn frame(ethertypes: &[u16]) -> Vec<u8> {
    let mut f = vec![0u8; 12];
    for t in ethertypes {
        f.extend_from_slice(&t.to_be_bytes());
        f.extend_from_slice(&[0, 7]); // a VLAN tag's TCI (or two bytes of payload)
    }
    f.resize(60, 0);
    f
}

/// Verdicts bound to variables, joined from branches and matched on (`Action::Forward(p) if …`,
/// `other => other`) are data: a tag and operands, returned through a branch per verdict.
#[test]
fn actions_as_values() {
    let f = lower_src(
        r#"mod a {
            use emu::prelude::*;
            pub struct A { n: Counter }
            impl NetworkFunction for A {
                fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                    let verdict = match pkt.ethernet().ethertype() {
                        0x0800 => Action::Forward(1),
                        0x0806 | 0x8035 => Action::Flood,
                        0x8100..=0x8101 => Action::Drop(DropReason::Unsupported),
                        _ => Action::Drop(DropReason::NotForUs),
                    };
                    self.n.inc();
                    match verdict {
                        Action::Forward(p) if p == meta.in_port => Action::Reply,
                        other => other,
                    }
                }
            }
        }"#,
    )
    .unwrap();
    use emu_core::{Action, DropReason};
    let cases = [
        (0x0800, 0, Action::Forward(1)),
        (0x0800, 1, Action::Reply),
        (0x0806, 0, Action::Flood),
        (0x8035, 2, Action::Flood),
        (0x8101, 0, Action::Drop(DropReason::Unsupported)),
        (0x1234, 0, Action::Drop(DropReason::NotForUs)),
    ];
    for (ethertype, port, want) in cases {
        assert_eq!(run(&f, &frame(&[ethertype]), port).0, want, "{ethertype:#x} on port {port}");
    }
    let mut opt = f.clone();
    crate::passes::optimize(&mut opt).unwrap();
    for (ethertype, port, want) in cases {
        assert_eq!(run(&opt, &frame(&[ethertype]), port).0, want, "optimized: {ethertype:#x} on port {port}");
    }
}

/// `pkt.l3()` skips up to two VLAN tags, as `Packet::l3` does.
#[test]
fn l3_skips_vlan_tags() {
    let f = lower_src(
        r#"mod v {
            use emu::prelude::*;
            pub struct V { n: Counter }
            impl NetworkFunction for V {
                fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                    let (l3, ethertype) = pkt.l3();
                    pkt.set_byte(0, l3 as u8);
                    pkt.set_byte(1, (ethertype >> 8) as u8);
                    pkt.set_byte(2, ethertype as u8);
                    Action::Reply
                }
            }
        }"#,
    )
    .unwrap();
    for types in [&[0x0800][..], &[0x8100, 0x0806], &[0x8100, 0x8100, 0x86dd], &[0x8100, 0x8100, 0x8100], &[0x88a8]] {
        let mut input = frame(types);
        let (_, out) = run(&f, &input, 0);
        let (l3, t) = emu_core::Packet::new(&mut input, 64).l3();
        assert_eq!(out[..3], [l3 as u8, (t >> 8) as u8, t as u8], "{types:x?}");
    }
}

/// The module the examples of docs/hls-subset.md are placed in (as the front end's tests do).
const TEMPLATE: &str = "mod example {
    use emu::prelude::*;
    use emu::wire::{arp, icmpv4, ipv4};

    pub struct Nf {
        table: Cam<Mac, Port, 16>,
        hits: Counter,
        last: Register<u16>,
        ip: Ipv4Addr,
        // STATE
    }

    impl NetworkFunction for Nf {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            // BODY
        }
    }

    // ITEMS
}";

/// The accepted examples of docs/hls-subset.md (a ```rust block not followed by a ```text
/// block of errors), each placed in [`TEMPLATE`], with their line.
fn accepted_doc_examples() -> Vec<(usize, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/hls-subset.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = doc.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "```rust" {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut j = start;
        while lines[j].trim() != "```" {
            j += 1;
        }
        let mut k = j + 1;
        while k < lines.len() && lines[k].trim().is_empty() {
            k += 1;
        }
        if !(k < lines.len() && lines[k].trim() == "```text") {
            let (mut body, mut state, mut items) = (String::new(), String::new(), String::new());
            let mut section = 0;
            for line in &lines[start..j] {
                match line.trim() {
                    "// in the state struct:" => section = 1,
                    "// in the module:" => section = 2,
                    _ => {
                        let t = match section {
                            0 => &mut body,
                            1 => &mut state,
                            _ => &mut items,
                        };
                        t.push_str(line);
                        t.push('\n');
                    }
                }
            }
            out.push((
                start,
                TEMPLATE.replace("// BODY", &body).replace("// STATE", &state).replace("// ITEMS", &items),
            ));
        }
        i = j + 1;
    }
    out
}

/// Every example the front end accepts either lowers to IR that verifies or gives a
/// `LowerError` — never a panic.
#[test]
fn accepted_doc_examples_lower_or_give_errors() {
    let examples = accepted_doc_examples();
    assert!(examples.len() >= 15, "found {} accepted examples", examples.len());
    let (mut ok, mut errors, mut panics) = (0, Vec::new(), Vec::new());
    for (line, src) in &examples {
        let m: syn::ItemMod = syn::parse_str(src).unwrap();
        let Ok(nf) = check_module(&m, &Options { window: 64 }) else { continue };
        match std::panic::catch_unwind(|| lower(&nf, 64)) {
            Ok(Ok(_)) => ok += 1,
            Ok(Err(e)) => errors.push(format!("docs/hls-subset.md:{line}: {}", e.message)),
            Err(_) => panics.push(format!("docs/hls-subset.md:{line}")),
        }
    }
    eprintln!("{ok} examples lowered; not yet supported:\n{}", errors.join("\n"));
    assert!(panics.is_empty(), "the lowering panicked on: {panics:?}");
    assert!(errors.iter().all(|e| !e.contains("internal")), "internal errors: {errors:#?}");
    assert!(ok > errors.len(), "{ok} lowered, {} errors", errors.len());
}

/// Bit counts, rotations, port masks, shifts by any amount (modulo the width, as in a
/// release build) and a computed drop reason, against Rust's own functions.
#[test]
fn integer_methods_match_rust() {
    let f = lower_src(
        r#"mod m {
            use emu::prelude::*;
            pub struct M { n: Counter }
            impl NetworkFunction for M {
                fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                    let x = (pkt.byte(0) as u16) << 8 | pkt.byte(1) as u16;
                    let n = pkt.byte(2);
                    pkt.set_byte(3, x.count_ones() as u8);
                    pkt.set_byte(4, x.leading_zeros() as u8);
                    pkt.set_byte(5, x.trailing_zeros() as u8);
                    let r = x.rotate_left(n as u32);
                    pkt.set_byte(6, (r >> 8) as u8);
                    pkt.set_byte(7, r as u8);
                    let q = x.rotate_right(n as u32);
                    pkt.set_byte(8, (q >> 8) as u8);
                    pkt.set_byte(9, q as u8);
                    let m = PortMask(x as u32);
                    pkt.set_byte(10, m.count() as u8);
                    let ip = Ipv4Addr((x as u32) << 16 | n as u32);
                    let mac = Mac(u48::masked_new((x as u64) << 8 | n as u64));
                    pkt.ipv4_mut().set_dst(ip);
                    pkt.ethernet_at_mut(40).set_src(mac);
                    pkt.set_byte(11, m.contains(n) as u8);
                    let s = x << n;
                    pkt.set_byte(12, (s >> 8) as u8);
                    pkt.set_byte(13, (x >> n) as u8);
                    pkt.set_byte(14, x.swap_bytes() as u8);
                    pkt.set_byte(15, x.min(n as u16).max(3) as u8);
                    let why = if n > 128 { DropReason::SamePort } else { DropReason::NotForUs };
                    if n & 1 == 1 {
                        return Action::Drop(why);
                    }
                    Action::Reply
                }
            }
        }"#,
    )
    .unwrap();
    let mut opt = f.clone();
    crate::passes::optimize(&mut opt).unwrap();
    let mut seed = 0x1234_5678_9abc_def1u64;
    for _ in 0..500 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let (x, n) = (seed as u16, (seed >> 16) as u8);
        let mut input = vec![0u8; 60];
        input[..3].copy_from_slice(&[(x >> 8) as u8, x as u8, n]);
        let r = x.rotate_left(n as u32);
        let q = x.rotate_right(n as u32);
        let s = x.wrapping_shl(n as u32);
        let mask = emu_core::PortMask(x as u32);
        let want_bytes = [
            x.count_ones() as u8,
            x.leading_zeros() as u8,
            x.trailing_zeros() as u8,
            (r >> 8) as u8,
            r as u8,
            (q >> 8) as u8,
            q as u8,
            mask.0.count_ones() as u8,
            mask.contains(n) as u8,
            (s >> 8) as u8,
            x.wrapping_shr(n as u32) as u8,
            x.swap_bytes() as u8,
            x.min(n as u16).max(3) as u8,
        ];
        let want = if n & 1 == 1 {
            emu_core::Action::Drop(if n > 128 { DropReason::SamePort } else { DropReason::NotForUs })
        } else {
            emu_core::Action::Reply
        };
        for g in [&f, &opt] {
            let (a, out) = run(g, &input, 0);
            assert_eq!(a, want, "x {x:#x}, n {n}");
            assert_eq!(out[3..16], want_bytes, "x {x:#x}, n {n}");
            // Ipv4Addr(..) and Mac(..) built from values.
            assert_eq!(out[30..34], [(x >> 8) as u8, x as u8, 0, n], "x {x:#x}, n {n}");
            assert_eq!(out[46..52], [0, 0, 0, (x >> 8) as u8, x as u8, n], "x {x:#x}, n {n}");
        }
    }
}

/// Packet length and window operations, `meta`, counters read and added to, a plain-value
/// field assigned (`self.x = …`, `+=`), a register, and every CAM operation.
#[test]
fn packet_meta_and_state_operations() {
    let f = lower_src(
        r#"mod p {
            use emu::prelude::*;
            pub struct P { t: Cam<u16, u8, 2>, c: Counter<16>, r: Register<u32>, x: u8 }
            impl NetworkFunction for P {
                fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                    if pkt.is_empty() {
                        return Action::Drop(DropReason::Runt);
                    }
                    let k = pkt.byte(0) as u16 & 3;
                    self.x += 1;
                    self.c.add(meta.len as u64);
                    self.r.set(meta.timestamp as u32);
                    let evicted = self.t.insert(k, meta.in_port);
                    let gone = match evicted {
                        Some((key, value)) => key as u8 ^ value,
                        None => 0xff,
                    };
                    let removed = if pkt.byte(1) & 1 == 1 { self.t.remove(k ^ 1) } else { None };
                    pkt.set_byte(2, gone);
                    pkt.set_byte(3, removed.unwrap_or(0xee));
                    pkt.set_byte(4, self.t.contains(k) as u8);
                    pkt.set_byte(5, self.x);
                    pkt.set_byte(6, self.c.get() as u8);
                    pkt.set_byte(7, pkt.window_size() as u8);
                    pkt.set_byte(8, self.t.capacity() as u8);
                    pkt.set_byte(9, (self.r.get() >> 8) as u8);
                    if pkt.len() > 40 {
                        pkt.set_len(40);
                    }
                    Action::Forward(self.x & 3)
                }
            }
        }"#,
    )
    .unwrap();
    let mut opt = f.clone();
    crate::passes::optimize(&mut opt).unwrap();
    // The same on the CPU, by hand.
    let mut t: emu_core::Cam<u16, u8, 2> = emu_core::Cam::default();
    let mut c: emu_core::Counter<16> = emu_core::Counter::default();
    let mut x = 0u8;
    let mut states = [crate::interp::State::new(&f), crate::interp::State::new(&opt)];
    let mut seed = 77u64;
    for n in 0..400u64 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = (seed % 70) as usize;
        let input: Vec<u8> = (0..len).map(|i| (seed >> (i % 8 * 8)) as u8).collect();
        let meta = emu_core::Meta { in_port: (seed >> 40) as u8 & 3, len: len as u16, timestamp: n * 1000 };
        let (want, want_frame) = if input.is_empty() {
            (emu_core::Action::Drop(DropReason::Runt), input.clone())
        } else {
            let mut out = input.clone();
            let k = input[0] as u16 & 3;
            x = x.wrapping_add(1);
            c.add(meta.len as u64);
            let gone = t.insert(k, meta.in_port).map_or(0xff, |(key, value)| key as u8 ^ value);
            let removed = if input.get(1).copied().unwrap_or(0) & 1 == 1 { t.remove(k ^ 1) } else { None };
            let mut pkt = emu_core::Packet::new(&mut out, 64);
            pkt.set_byte(2, gone);
            pkt.set_byte(3, removed.unwrap_or(0xee));
            pkt.set_byte(4, t.contains(k) as u8);
            pkt.set_byte(5, x);
            pkt.set_byte(6, c.get() as u8);
            pkt.set_byte(7, 64);
            pkt.set_byte(8, 2);
            pkt.set_byte(9, ((n * 1000) as u32 >> 8) as u8);
            if pkt.len() > 40 {
                pkt.set_len(40);
            }
            (emu_core::Action::Forward(x & 3), out)
        };
        for (g, state) in [&f, &opt].into_iter().zip(states.iter_mut()) {
            let mut frame = input.clone();
            let got = crate::interp::run_frame(g, state, &mut frame, &meta).unwrap();
            assert_eq!((got, &frame), (want, &want_frame), "frame {n}");
        }
    }
}

/// An NF using the elements the back end does not build yet lowers, and `Design::new` says
/// which element stops it; the report and the symbol table describe every element.
#[cfg(feature = "hw")]
#[test]
fn the_back_end_names_the_elements_it_cannot_build_yet() {
    use crate::backend::{report::report, symbols::symbols, Design, HwConfig};
    let f = lower_src(
        r#"mod b {
            use emu::prelude::*;
            pub struct B {
                seen: Counter,
                recent: Lru<Mac, Port, 8>,
                flows: HashTable<u32, u16, 64, 2>,
                rules: Tcam<u16, u8, 5>,
                backlog: Queue<u16, 16>,
            }
            impl NetworkFunction for B {
                fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                    self.seen.inc();
                    if meta.in_port == 1 {
                        let _ = self.backlog.push(meta.len);
                        self.flows.insert(pkt.ipv4().src().0, meta.len);
                        self.recent.insert(pkt.ethernet().src(), meta.in_port);
                    }
                    match self.rules.lookup(pkt.ethernet().ethertype()) {
                        Some(p) => Action::Forward(p),
                        None => Action::Flood,
                    }
                }
            }
        }"#,
    )
    .unwrap();
    let d = Design::new(f, HwConfig::new(64)).unwrap();
    let r = report(&d);
    for row in [
        "| recent | LRU (registers, comparators, ages) | 60 × 8 | 480 |",
        "| flows | hash table (block RAM) | 49 × 2 × 32 | 3136 |",
        "| rules | TCAM (registers, masked comparators) | 41 × 5 | 205 |",
        "| backlog | queue (block RAM) | 16 × 16 | 256 |",
    ] {
        assert!(r.contains(row), "{row}\n{r}");
    }
    let s = symbols(&d).to_string();
    for e in [
        r#""key_width":48,"kind":"lru","name":"recent","size":8,"value_width":8"#,
        r#""key_width":32,"kind":"hash_table","name":"flows","size":64,"value_width":16,"ways":2"#,
        r#""key_width":16,"kind":"tcam","name":"rules","size":5,"value_width":8"#,
        r#""kind":"queue","name":"backlog","size":16,"width":16"#,
    ] {
        assert!(s.contains(e), "{e}\n{s}");
    }
}

/// `Bytes<N>`: `Bytes::default()` takes its width from the binding, `set_byte` changes the
/// binding (byte 0 the most significant, a write past the end dropped), `byte` reads 0 past
/// the end; as a `Cam` key. The interpreter gives what `emu_core::Bytes` gives.
#[test]
fn bytes_values_are_built_and_read_byte_by_byte() {
    let f = lower_src(
        r#"mod b {
            use emu::prelude::*;
            pub struct B { names: Cam<Bytes<6>, u8, 4> }
            impl NetworkFunction for B {
                fn process(&mut self, pkt: &mut Packet, _meta: &Meta) -> Action {
                    let n = pkt.byte(14) as usize;
                    let mut key: Bytes<6> = Bytes::default();
                    for i in 0..8 {
                        if i < n {
                            key.set_byte(i, pkt.byte(15 + i));
                        }
                    }
                    for i in 0..8 {
                        pkt.set_byte(30 + i, key.byte(i));
                    }
                    self.names.insert(key, pkt.byte(40));
                    pkt.set_byte(41, self.names.get(key).unwrap_or(0xee));
                    Action::Reply
                }
            }
        }"#,
    )
    .unwrap();
    let mut state = crate::interp::State::new(&f);
    for n in [0u8, 3, 6, 8] {
        let mut frame: Vec<u8> = (0..60).map(|i| i as u8 ^ 0x5a).collect();
        frame[12] = 0x88;
        frame[14] = n;
        let mut cpu = emu_core::Bytes::<6>::default();
        for i in 0..8 {
            if i < n as usize {
                cpu.set_byte(i, frame[15 + i]);
            }
        }
        let mut want = frame.clone();
        for i in 0..8 {
            want[30 + i] = cpu.byte(i);
        }
        want[41] = want[40];
        let meta = emu_core::Meta { in_port: 0, len: 60, timestamp: 0 };
        crate::interp::run(&f, &mut state, &mut emu_core::Packet::new(&mut frame, 64), &meta).unwrap();
        assert_eq!(frame, want, "n = {n}");
    }
    let key = |bytes: [u8; 6]| BitVec::from_be_bytes(&bytes);
    let entries = state.cam_entries("names").unwrap();
    assert_eq!(entries.len(), 3, "n = 8 writes bytes 6 and 7 nowhere: n = 6's key");
    assert_eq!(entries[0].1, key([0; 6]), "n = 0: all zero");
    assert_eq!(entries[1].1, key([0x5a ^ 15, 0x5a ^ 16, 0x5a ^ 17, 0, 0, 0]), "n = 3");
}

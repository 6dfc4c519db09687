//! The optimization passes on a function of many blocks (what an NF's unrolled byte loops
//! make): they fold the chain into one block and keep its meaning. (They used to take minutes
//! here, one CFG per change; `simplify-cfg` and `if-convert` now work in rounds over one CFG.
//! The time is printed, not asserted: speed belongs in benchmarks, and a quadratic pass would
//! show as this test running for minutes.)

use emu_core::{Meta, Packet};
use emu_hls::interp::{self, State};
use emu_hls::ir;
use emu_hls::passes;
use std::fmt::Write;
use std::time::Instant;

/// A chain of `n` diamonds over one byte of the packet: each adds or xors a constant, as
/// the byte's low bit says; the result picks the output port.
fn diamonds(n: usize) -> String {
    let mut t = String::from("fn diamonds(window=64) {\n\nblock0:\n    v0:u8 = pkt.read 14, 1\n    jump block1(v0)\n");
    let mut v = 1;
    for k in 0..n {
        let (head, then, other, next) = (3 * k + 1, 3 * k + 2, 3 * k + 3, 3 * k + 4);
        let (x, one, bit, sum, mixed) = (v, v + 1, v + 2, v + 3, v + 4);
        v += 5;
        writeln!(t, "\nblock{head}(v{x}:u8):\n    v{one}:u8 = const {}\n    v{bit}:u1 = slice v{x}, 0", k % 7 + 1)
            .unwrap();
        writeln!(t, "    br v{bit}, block{then}, block{other}\n").unwrap();
        writeln!(t, "block{then}:\n    v{sum}:u8 = add v{x}, v{one}\n    jump block{next}(v{sum})\n").unwrap();
        writeln!(t, "block{other}:\n    v{mixed}:u8 = xor v{x}, v{one}\n    jump block{next}(v{mixed})").unwrap();
    }
    let (three, port) = (v + 1, v + 2);
    writeln!(t, "\nblock{}(v{v}:u8):\n    v{three}:u8 = const 3\n    v{port}:u8 = and v{v}, v{three}", 3 * n + 1)
        .unwrap();
    writeln!(t, "    return forward v{port}\n}}").unwrap();
    t
}

#[test]
fn passes_scale_to_many_blocks() {
    let text = diamonds(1200);
    let raw = ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{}", &text[..400]));
    let mut opt = raw.clone();
    let start = Instant::now();
    passes::optimize(&mut opt).unwrap();
    eprintln!("optimizing 3601 blocks took {:?}", start.elapsed());
    assert!(opt.layout.len() < 10, "the diamonds fold into straight-line code: {} blocks", opt.layout.len());
    let (mut a, mut b) = (State::new(&raw), State::new(&opt));
    for byte in 0..=255u8 {
        let meta = Meta { in_port: 0, len: 60, timestamp: 0 };
        let mut f1 = vec![0u8; 60];
        f1[14] = byte;
        let mut f2 = f1.clone();
        let want = interp::run(&raw, &mut a, &mut Packet::new(&mut f1, 64), &meta).unwrap();
        let got = interp::run(&opt, &mut b, &mut Packet::new(&mut f2, 64), &meta).unwrap();
        assert_eq!(got, want, "byte {byte}");
    }
}

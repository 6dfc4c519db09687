//! The hand-built IR of the learning switch, run by the IR interpreter before and after the
//! optimization passes, gives exactly the CPU switch's actions, frames and state on seeded
//! random traffic: broadcast, multicast, unknown and known destinations, same-port drops,
//! hosts moving between ports, more hosts than the MAC table holds, multicast sources,
//! short and long frames.

mod common;

use common::switch::run_seed;
use emu_hls::passes;

#[test]
fn interpreter_matches_the_cpu_switch_before_and_after_passes() {
    let raw = common::learning_switch();
    let mut opt = raw.clone();
    passes::optimize(&mut opt).unwrap();
    let mut total = [0usize; 4];
    for seed in [0x5eed_0001u64, 0x9e37_79b9_7f4a_7c15, 0xdead_beef_cafe_f00d, 42] {
        let seen = run_seed(seed, 2500, &[("raw", &raw), ("optimized", &opt)]);
        for i in 0..4 {
            total[i] += seen[i];
        }
    }
    // The traffic reached every verdict, often.
    assert!(total[0] > 1000 && total[1] > 1000 && total[2] > 100, "verdicts seen: {total:?}");
}

#[test]
fn the_switch_ir_prints_as_expected() {
    let f = common::learning_switch();
    let golden = include_str!("golden/nf/learning_switch.ir");
    if std::env::var_os("EMU_BLESS").is_some() {
        std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/nf/learning_switch.ir"), f.to_string())
            .unwrap();
        return;
    }
    assert_eq!(f.to_string(), golden, "rerun with EMU_BLESS=1 to accept the new text");
    assert_eq!(emu_hls::ir::parse(golden).unwrap().to_string(), golden, "the text reads back");
}

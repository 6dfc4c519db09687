//! The hand-built IR of the ICMP echo responder (ARP and echo paths), run by the IR
//! interpreter before and after the optimization passes, gives exactly the CPU responder's
//! actions, output frames (byte for byte) and counters on seeded random traffic: ARP for us
//! and for others, malformed ARP, echo requests of every size (past the window too), IP
//! options, wrong checksums, fragments, other protocols, echo replies, truncated frames,
//! nonsense lengths and random bytes.

mod common;
use common::echo::run_seed;
use emu_core::Action;
use emu_hls::passes;

#[test]
fn interpreter_matches_the_cpu_responder_before_and_after_passes() {
    let raw = common::icmp_echo();
    let mut opt = raw.clone();
    passes::optimize(&mut opt).unwrap();
    let mut verdicts = Vec::new();
    for seed in [0x1c3e_c401u64, 0x9e37_79b9_7f4a_7c15, 0x0123_4567_89ab_cdef, 7] {
        verdicts.extend(run_seed(seed, 2000, &[("raw", &raw), ("optimized", &opt)]));
    }
    // Every path of the NF was taken, often.
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
fn passes_shrink_the_responder() {
    let raw = common::icmp_echo();
    let mut opt = raw.clone();
    let rounds = passes::optimize(&mut opt).unwrap();
    assert!(rounds >= 2, "the passes changed something, then reached a fixed point");
    assert!(opt.layout.len() < raw.layout.len(), "if-conversion removed the && / || branches:\n{opt}");
    let golden = include_str!("golden/nf/icmp_echo.optimized.ir");
    if std::env::var_os("EMU_BLESS").is_some() {
        std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/nf/icmp_echo.optimized.ir"), opt.to_string())
            .unwrap();
        return;
    }
    assert_eq!(opt.to_string(), golden, "rerun with EMU_BLESS=1 to accept the new text");
}

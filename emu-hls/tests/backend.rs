//! The back end on both NFs, from their unmodified source: the schedule (golden), the IR
//! interpreter and the cycle model stepped through the rust-hdl block's `update()` against
//! the CPU target on
//! proptest-generated traffic (malformed frames included, with `tvalid` gaps and
//! `m_axis_tready` back-pressure), bounded cycles per packet, and the generated Verilog through
//! `verilator --lint-only` and yosys `synth_xilinx`.

mod common;

use common::Rng;
use emu_core::{check_frame, Config, Meta, NetworkFunction, NfDescriptor, Packet, Verdict};
use emu_hls::backend::model::{Driver, Outcome, Pacing};
use emu_hls::backend::top::{Sume256, Sume64};
use emu_hls::backend::{report, rtl, Design, HwConfig};
use proptest::prelude::*;

fn design(desc: &NfDescriptor, width: usize) -> Design {
    let func = emu_hls::compile(desc.hls_source.expect("an #[emu::nf] module"), desc.window).unwrap();
    let mut config = HwConfig::new(width);
    config.ports = desc.ports;
    config.state = desc.initial_state(&Config::new()).unwrap();
    Design::new(func, config).unwrap()
}

/// What the CPU target does with a frame: the runner's ingress checks, the NF, the verdict.
fn cpu(nf: &mut dyn NetworkFunction, window: usize, frame: &[u8], in_port: u8) -> Outcome {
    cpu_at(nf, window, frame, in_port, 0)
}

/// [`cpu`] for a frame that arrived at `timestamp` (ns).
fn cpu_at(nf: &mut dyn NetworkFunction, window: usize, frame: &[u8], in_port: u8, timestamp: u64) -> Outcome {
    if let Err(r) = check_frame(frame, 1518) {
        return Outcome::Dropped(r);
    }
    let mut f = frame.to_vec();
    let meta = Meta { in_port, len: f.len() as u16, timestamp };
    let action = nf.process(&mut Packet::new(&mut f, window), &meta);
    match action.resolve(in_port, 4) {
        Verdict::Drop(r) => Outcome::Dropped(r),
        Verdict::Send(m) => Outcome::Sent(m.0, f),
    }
}

/// Frames for `desc` from a seed: the NF's own traffic generator (valid and damaged frames),
/// random bytes, empty, runt and oversize frames.
fn frames(desc: &NfDescriptor, seed: u64, n: usize) -> Vec<(Vec<u8>, u8)> {
    let mut rng = Rng(seed | 1);
    let mut homes = [0u8; 24];
    (0..n)
        .map(|_| match rng.below(20) {
            0 => {
                let n = rng.below(80) as usize;
                (rng.bytes(n), rng.below(4) as u8)
            }
            1 => {
                let n = 1519 + rng.below(600) as usize;
                (rng.bytes(n), rng.below(4) as u8)
            }
            _ if desc.name == "learning-switch" => common::switch::traffic(&mut rng, &mut homes),
            _ => (common::echo::traffic(&mut rng), rng.below(4) as u8),
        })
        .collect()
}

fn cpu_nf(desc: &NfDescriptor) -> Box<dyn NetworkFunction> {
    (desc.build)(&Config::new()).unwrap()
}

/// The IR interpreter as an NF, its configuration registers loaded as the hardware's.
struct Interp {
    func: emu_hls::ir::Function,
    state: emu_hls::interp::State,
}

impl NetworkFunction for Interp {
    fn process(&mut self, pkt: &mut Packet<'_>, meta: &Meta) -> emu_core::Action {
        emu_hls::interp::run(&self.func, &mut self.state, pkt, meta).expect("the interpreter runs the NF")
    }
}

fn interp_nf(d: &Design) -> Interp {
    let mut state = emu_hls::interp::State::new(&d.func);
    d.initial.load_into(&d.func, &mut state).unwrap();
    Interp { func: d.func.clone(), state }
}

fn check_against_cpu(desc: &NfDescriptor, width: usize, seed: u64, n: usize, pacing: Pacing) {
    let d = design(desc, width);
    let input = frames(desc, seed, n);
    let mut nf = cpu_nf(desc);
    let want: Vec<Outcome> = input.iter().map(|(f, p)| cpu(nf.as_mut(), desc.window, f, *p)).collect();
    // The untimed IR interpreter first: the same outcomes, frame for frame.
    let mut ir = interp_nf(&d);
    for (i, (f, p)) in input.iter().enumerate() {
        assert_eq!(cpu(&mut ir, desc.window, f, *p), want[i], "{}: ir tier, seed {seed:#x}, frame {i}", desc.name);
    }
    let got = if width == 64 {
        Driver::new(Sume64::new(&d).unwrap(), 8, pacing).run(&input)
    } else {
        Driver::new(Sume256::new(&d).unwrap(), 32, pacing).run(&input)
    }
    .unwrap_or_else(|h| panic!("{}: the hardware hung: {h:?}", desc.name));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            w,
            "{} at {width} bits, seed {seed:#x}, frame {i} ({}, port {})",
            desc.name,
            common::hex(&input[i].0),
            input[i].1
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// 24 cases × 50 frames = 1200 frames per NF, each case at a random width and pacing.
    #[test]
    fn the_learning_switch_hardware_matches_the_cpu(seed in any::<u64>(), wide in any::<bool>(),
            valid in 20u32..=100, ready in 20u32..=100) {
        let pacing = Pacing { valid_percent: valid, ready_percent: ready, seed };
        check_against_cpu(&learning_switch::DESCRIPTOR, if wide { 256 } else { 64 }, seed, 50, pacing);
    }

    #[test]
    fn the_icmp_echo_hardware_matches_the_cpu(seed in any::<u64>(), wide in any::<bool>(),
            valid in 20u32..=100, ready in 20u32..=100) {
        let pacing = Pacing { valid_percent: valid, ready_percent: ready, seed };
        check_against_cpu(&icmp_echo::DESCRIPTOR, if wide { 256 } else { 64 }, seed, 50, pacing);
    }
}

/// Back-to-back minimum-size frames take exactly the cycles the report gives for their path,
/// and frames with gaps and back-pressure all come out, each in a bounded number of cycles.
#[test]
fn cycles_per_packet_are_bounded_and_as_reported() {
    let desc = &learning_switch::DESCRIPTOR;
    for width in [64, 256] {
        let d = design(desc, width);
        // Broadcast frames from one host: every one takes the learn-then-flood path.
        let mut f = vec![0xff; 6];
        f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x88, 0xb5]);
        f.resize(60, 0);
        let n = 200;
        let input = vec![(f, 1u8); n];
        let mut driver = Driver::model(&d, Pacing::FULL);
        driver.hang_limit = 64;
        let out = driver.run(&input).unwrap();
        assert!(out.iter().all(|o| matches!(o, Outcome::Sent(0b1101, _))));
        let paths = d.sched.paths(&d.func);
        let learns = |p: &&emu_hls::sched::Path| {
            p.blocks.iter().any(|b| d.func.blocks[*b].insts.iter().any(|i| d.func.insts[*i].op.name() == "cam.insert"))
        };
        let flood = paths
            .iter()
            .filter(|p| p.verdict == "flood")
            .filter(learns)
            .min_by_key(|p| p.states.len())
            .expect("the learn-and-flood path");
        let per_packet = report::path_cycles(&d, flood, 60);
        // The first frame takes the latency, then every frame the interval; the run ends at
        // the last frame's final beat.
        let latency = report::path_latency(&d, flood, 60);
        assert_eq!(driver.latencies[0], latency, "{width} bits: the first frame's latency is the report's");
        assert_eq!(
            driver.cycles,
            latency + (n as u64 - 1) * per_packet,
            "{width} bits: {per_packet} cycles per packet"
        );
        let text = report::report(&d);
        assert!(text.contains(&format!("| {per_packet} |")), "the report states {per_packet}:\n{text}");

        // A dropping path sends nothing: back to back, its frames take the report's (shorter)
        // interval. Host 2 sends to host 1, both on port 1: learned, then `same_port`.
        let frame = |dst: u8, src: u8| {
            let mut f = vec![2, 0, 0, 0, 0, dst, 2, 0, 0, 0, 0, src, 0x88, 0xb5];
            f.resize(60, 0);
            (f, 1u8)
        };
        let run = |n: usize| {
            let mut input = vec![frame(2, 1)];
            input.extend(std::iter::repeat_n(frame(1, 2), n));
            let mut driver = Driver::model(&d, Pacing::FULL);
            let out = driver.run(&input).unwrap();
            assert!(out[1..].iter().all(|o| *o == Outcome::Dropped(emu_core::DropReason::SamePort)));
            driver.cycles
        };
        let drop_path = paths.iter().find(|p| p.verdict == "drop same_port" && learns(p)).unwrap();
        let per_drop = report::path_cycles(&d, drop_path, 60);
        assert_eq!(run(200) - run(100), 100 * per_drop, "{width} bits: {per_drop} cycles per dropped packet");

        // Gaps and back-pressure: every frame comes out, and none waits long.
        for (valid, ready) in [(30, 100), (100, 30), (25, 25)] {
            let mut driver = Driver::model(&d, Pacing { valid_percent: valid, ready_percent: ready, seed: 9 });
            driver.hang_limit = 200;
            let mixed = frames(desc, 77, 300);
            let out = driver.run(&mixed).unwrap_or_else(|h| panic!("hung at {valid}/{ready}: {h:?}"));
            assert_eq!(out.len(), 300);
        }
    }
}

#[test]
fn schedules_are_as_golden() {
    for desc in [&learning_switch::DESCRIPTOR, &icmp_echo::DESCRIPTOR] {
        let d = design(desc, 256);
        let text = d.sched.display(&d.func).to_string();
        let path = format!("{}/tests/golden/sched/{}.txt", env!("CARGO_MANIFEST_DIR"), d.func.name);
        if std::env::var_os("EMU_BLESS").is_some() {
            std::fs::create_dir_all(std::path::Path::new(&path).parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
        }
        let golden = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(text, golden, "rerun with EMU_BLESS=1 to accept the new schedule");
    }
}

/// The whole design, both NFs, both widths: Verilator's lint (the WIDTH class silenced); yosys
/// synthesis for the SUME part of each NF at one width.
#[test]
fn generated_verilog_lints_and_synthesizes() {
    use emu_hls::hw::tools;
    let mut jobs = vec![];
    for desc in [&learning_switch::DESCRIPTOR, &icmp_echo::DESCRIPTOR] {
        for width in [64, 256] {
            jobs.push((desc, width));
        }
    }
    let results: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .iter()
            .map(|(desc, width)| {
                s.spawn(move || {
                    let d = design(desc, *width);
                    let v = rtl::verilog(&d).unwrap();
                    let top = d.top_name();
                    tools::verilator_lint_design(&v, &top, true)
                        .unwrap_or_else(|e| panic!("{} at {width}: {e}", desc.name));
                    // yosys once per NF and once per width (tests/synth.rs runs the switch at
                    // 64 bits through `emu synth`): each run is most of a minute in CI.
                    if (desc.name == "learning-switch") != (*width == 256) {
                        return format!("{} {width}: lints", desc.name);
                    }
                    let stats =
                        tools::yosys_synth_xilinx(&v, &top).unwrap_or_else(|e| panic!("{} at {width}: {e}", desc.name));
                    format!(
                        "{} {width}: {} LUT, {} FF, {} RAMB",
                        desc.name,
                        stats.count("LUT"),
                        stats.count("FD"),
                        stats.count("RAMB")
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    eprintln!("{}", results.join("\n"));
}

/// rust-hdl's `generate_verilog` on the SUME block gives the whole design: a `top` module
/// around the NF's, which Verilator accepts.
#[test]
fn rust_hdl_generates_the_whole_design() {
    let d = design(&learning_switch::DESCRIPTOR, 256);
    let mut top = Sume256::new(&d).unwrap();
    rust_hdl::prelude::Block::connect_all(&mut top);
    let v = rust_hdl::prelude::generate_verilog(&top);
    assert!(v.contains("module top"), "{v}");
    assert!(v.contains("module emu_learning_switch"));
    emu_hls::hw::tools::verilator_lint_design(&v, "top", true).unwrap();
}

/// The same design gives the same Verilog every time (golden files and build caches rely on it).
#[test]
fn verilog_is_reproducible() {
    for desc in [&learning_switch::DESCRIPTOR, &icmp_echo::DESCRIPTOR] {
        let first = rtl::verilog(&design(desc, 256)).unwrap();
        for _ in 0..5 {
            assert_eq!(rtl::verilog(&design(desc, 256)).unwrap(), first, "{}", desc.name);
        }
    }
}

/// An NF written to reach the back end's less travelled paths: an array (indices past its
/// end included), arithmetic shifts and signed comparisons, a multiply, a write at a computed
/// offset, `set_len` shortening and lengthening. Its source as `HLS_SOURCE` would carry it.
pub const COVERAGE_NF: &str = include_str!("nf/coverage.rs");

/// An NF around an `Lru`, every op of it.
pub const LRU_NF: &str = include_str!("nf/lru_cache.rs");

/// An NF that names only constant window positions, shortens and lengthens frames and sums them.
pub const WINDOW_NF: &str = include_str!("nf/window_edits.rs");

/// An NF around a `Tcam` and a `Queue`, every op the hardware builds.
pub const RULES_NF: &str = include_str!("nf/rules_and_pool.rs");

/// An NF around two `HashTable`s, every op.
pub const FLOWS_NF: &str = include_str!("nf/flow_table.rs");

/// An NF whose table entries expire: it reads `meta.timestamp`.
pub const AGING_NF: &str = include_str!("nf/aging.rs");

/// Random frames between 6 hosts (so tables hit and evict), not IPv4 (the ingress checks let
/// them through to the NF).
fn host_frames(seed: u64, n: usize) -> Vec<(Vec<u8>, u8)> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| {
            let len = 14 + rng.below(200) as usize;
            let mut f = rng.bytes(len);
            f[..12].copy_from_slice(&[2, 0, 0, 0, 0, rng.below(6) as u8, 2, 0, 0, 0, 0, rng.below(6) as u8]);
            f[12] = 0x88;
            (f, rng.below(4) as u8)
        })
        .collect()
}

/// `Schedule::verdicts` (over the CFG, for NFs with too many paths to list) gives, per verdict,
/// the count and the extremes of the listed paths.
#[test]
fn verdicts_summarize_the_paths() {
    for source in [COVERAGE_NF, LRU_NF, WINDOW_NF, RULES_NF, FLOWS_NF, AGING_NF] {
        let d = Design::new(emu_hls::compile(source, 64).unwrap(), HwConfig::new(64)).unwrap();
        let paths = d.sched.paths(&d.func);
        let verdicts = d.sched.verdicts(&d.func);
        assert_eq!(verdicts.iter().map(|v| v.paths).sum::<u128>(), paths.len() as u128, "{}", d.func.name);
        for v in &verdicts {
            let mine: Vec<_> = paths.iter().filter(|p| p.verdict == v.verdict).collect();
            assert_eq!(mine.len() as u128, v.paths, "{}: {}", d.func.name, v.verdict);
            let n = |f: fn(&[usize]) -> Option<&usize>| {
                *f(&mine.iter().map(|p| p.states.len()).collect::<Vec<_>>()).unwrap()
            };
            assert_eq!((v.min_states, v.max_states), (n(|x| x.iter().min()), n(|x| x.iter().max())), "{}", v.verdict);
            assert_eq!(v.drops, mine[0].drops);
        }
        let (lo, hi) = emu_hls::backend::report::cycles_range(&d, 64).unwrap();
        let each: Vec<u64> = paths.iter().map(|p| emu_hls::backend::report::path_cycles(&d, p, 64)).collect();
        assert_eq!((lo, hi), (*each.iter().min().unwrap(), *each.iter().max().unwrap()), "{}", d.func.name);
    }
}

/// Verdicts are named as the user wrote them: constant ports by number (the LRU NF's
/// `Forward(1)` and `Forward(2)`, if-converted into one return), a computed one as computed
/// (not by the IR value that holds it).
#[test]
fn verdicts_are_named_by_port() {
    let names = |source: &str| {
        let d = Design::new(emu_hls::compile(source, 64).unwrap(), HwConfig::new(64)).unwrap();
        let mut v: Vec<String> = d.sched.verdicts(&d.func).into_iter().map(|v| v.verdict).collect();
        v.sort();
        v
    };
    let lru = names(LRU_NF);
    for want in ["forward port 1 or 2", "reply", "flood", "drop policy"] {
        assert!(lru.contains(&want.to_string()), "{want} in {lru:?}");
    }
    let coverage = names(COVERAGE_NF);
    assert!(coverage.contains(&"forward to a computed port".to_string()), "{coverage:?}");
    assert!(coverage.contains(&"multicast to computed ports".to_string()), "{coverage:?}");
    assert!(lru.iter().chain(&coverage).all(|v| !v.contains(" v")), "no IR values: {lru:?} {coverage:?}");
}

/// Arrival times in ns for `n` frames: from a 2026 epoch, 0 to 200 µs apart.
fn arrival_times(seed: u64, n: usize) -> Vec<u64> {
    let mut rng = Rng(seed | 1);
    let mut t = 1_795_000_000_000_000_000u64;
    (0..n)
        .map(|_| {
            t += rng.below(200_000);
            t
        })
        .collect()
}

/// The coverage NFs (every element, every op, timestamps): the cycle model (through the
/// rust-hdl block) gives the IR interpreter's outcomes on random frames, and their Verilog
/// lints.
#[test]
fn the_coverage_nfs_run_and_lint() {
    for (name, source) in [
        ("coverage", COVERAGE_NF),
        ("lru", LRU_NF),
        ("window", WINDOW_NF),
        ("rules", RULES_NF),
        ("flows", FLOWS_NF),
        ("aging", AGING_NF),
    ] {
        for width in [64, 256] {
            let func = emu_hls::compile(source, 64).unwrap_or_else(|e| panic!("{name}: {e}"));
            let d = Design::new(func, HwConfig::new(width)).unwrap();
            let input = host_frames(0xc0ffee + width as u64, 600);
            let times = arrival_times(0x7157 + width as u64, input.len());
            let mut ir = interp_nf(&d);
            let want: Vec<Outcome> =
                input.iter().zip(&times).map(|((f, p), t)| cpu_at(&mut ir, 64, f, *p, *t)).collect();
            let kinds = |k: fn(&Outcome) -> bool| want.iter().filter(|o| k(o)).count();
            assert!(
                kinds(|o| matches!(o, Outcome::Dropped(_))) > 20 && kinds(|o| matches!(o, Outcome::Sent(..))) > 100,
                "{name}: {want:?}"
            );
            let pacing = Pacing { valid_percent: 60, ready_percent: 60, seed: 3 };
            let timed = input.iter().zip(&times).map(|((f, p), t)| (f.as_slice(), *p, *t));
            let got = if width == 64 {
                Driver::new(Sume64::new(&d).unwrap(), 8, pacing).run_timed(timed)
            } else {
                Driver::new(Sume256::new(&d).unwrap(), 32, pacing).run_timed(timed)
            }
            .unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{name} at {width} bits, frame {i}: {}", common::hex(&input[i].0));
            }
            let v = rtl::verilog(&d).unwrap();
            emu_hls::hw::tools::verilator_lint_design(&v, &d.top_name(), true).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

//! The SUME-level simulation: the learning switch's generated Verilog in its OPL wrapper,
//! between our models of the reference input arbiter and output queues, under Verilator, fed
//! the committed example traffic plus malformed frames; every output stream is diffed against
//! the CPU target (frames, bytes, order per port) and the OPL's counters, read over
//! AXI4-Lite, against the CPU target's drop counts.

use emu_core::{Config, DropReason, NetworkFunction};
use emu_cpu::{CaptureReader, Frame, InputSpec};
use emu_fpga::opl;
use emu_fpga::pipeline::{port_bit, stream_name, STREAMS};
use emu_fpga::sim::{Access, Mode, Run, SumeSim};
use emu_hls::backend::Design;
use std::path::Path;
use std::sync::OnceLock;

const MAX_FRAME: usize = 1518;

fn design() -> Design {
    Design::from_descriptor(&learning_switch::DESCRIPTOR, &Config::new(), 256, MAX_FRAME).unwrap()
}

/// Verilator builds are slow: one per test binary, shared by the tests.
fn sim() -> &'static SumeSim {
    static SIM: OnceLock<SumeSim> = OnceLock::new();
    SIM.get_or_init(|| SumeSim::build(&design()).unwrap_or_else(|e| panic!("{e}")))
}

/// The example's frames as (input stream, bytes): its pcapng interface k is nf`k`.
fn example() -> Vec<(usize, Vec<u8>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/mixed.pcapng");
    let mut reader = CaptureReader::open(&InputSpec { port: None, path }).unwrap();
    let mut frames = vec![];
    while let Some(f) = reader.next_frame().unwrap() {
        assert_eq!(f.wire_len, f.data.len(), "the example has no cut frames");
        frames.push((f.port as usize, f.data));
    }
    assert!(frames.len() > 10, "the example holds {} frames", frames.len());
    frames
}

/// The example, frames the ingress checks must drop spread through it, and one frame from
/// the host (dma0), which the NF sees on port 0.
fn traffic() -> Vec<(usize, Vec<u8>)> {
    let mut frames = example();
    let ipv4 = frames.iter().find(|(_, f)| f.len() > 34 && f[12..14] == [0x08, 0x00]).expect("an IPv4 frame").clone();
    let with = |at: usize, value: u8| {
        let mut f = ipv4.1.clone();
        f[at] = value;
        (ipv4.0, f)
    };
    let malformed = vec![
        (1, vec![0x02; 10]), // runt: shorter than an Ethernet header
        with(14, 0x65),      // IPv4 version 6
        with(14, 0x43),      // IHL 3
        with(17, 0xff),      // total length past the frame's end
        (2, {
            // oversize: past the 1518-byte packet buffer
            let mut f = ipv4.1.clone();
            f.resize(1600, 0x5a);
            f
        }),
    ];
    for (i, m) in malformed.into_iter().enumerate() {
        frames.insert(3 + 3 * i, m);
    }
    // An ARP request from the host for h1.
    let mut arp = vec![0xff; 6];
    arp.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x07, 0x08, 0x06]);
    arp.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 7, 10, 0, 0, 7, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1]);
    frames.insert(8, (4, arp));
    frames
}

/// The NF's port for a frame from input stream `k`: dma0 is port 0.
fn nf_port(k: usize) -> u8 {
    if k < 4 {
        k as u8
    } else {
        0
    }
}

/// Every register the test reads, then RESET, then the counters again.
fn accesses() -> Vec<Access> {
    let mut a = vec![
        Access::Read(0x000),
        Access::Read(0x004),
        Access::Read(0x00c),
        Access::Read(opl::PKTIN_ADDR),
        Access::Read(opl::PKTOUT_ADDR),
        Access::Read(opl::DROPS_ADDR),
    ];
    a.extend(DropReason::ALL.iter().map(|&r| Access::Read(opl::drop_addr(r))));
    a.push(Access::Write(opl::RESET_ADDR, 1));
    a.push(Access::Read(opl::PKTIN_ADDR));
    a.push(Access::Read(opl::DROPS_ADDR));
    a.push(Access::Read(opl::drop_addr(DropReason::Runt)));
    a
}

/// Runs the CPU target over `frames` in this order and checks `run` against it.
fn check_against_cpu(frames: &[(usize, Vec<u8>)], run: &Run) {
    let nf: Box<dyn NetworkFunction + Send> = (learning_switch::DESCRIPTOR.build)(&Config::new()).unwrap();
    let input: Vec<Frame> =
        frames.iter().enumerate().map(|(i, (k, f))| Frame::new(nf_port(*k), i as u64, f.clone())).collect();
    let cpu = emu_cpu::run_batch(nf, 4, learning_switch::DESCRIPTOR.window, input).unwrap();
    assert!(!cpu.drops.is_empty(), "the traffic must make the CPU target drop frames");

    for k in 0..STREAMS {
        let want: Vec<&[u8]> = if k < 4 { cpu.on_port(k as u8) } else { vec![] };
        let got = &run.outputs[k];
        let shown = |f: &[u8]| f.iter().take(20).map(|b| format!("{b:02x}")).collect::<String>();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g.data,
                *w,
                "{}: frame {i} differs from the CPU target's\n  sim: {}…\n  cpu: {}…",
                stream_name(k),
                shown(&g.data),
                shown(w)
            );
            assert_eq!(g.len as usize, g.data.len(), "{}: frame {i}: tuser length", stream_name(k));
            assert_ne!(g.dst & (1 << port_bit(k)), 0, "{}: frame {i} without its destination bit", stream_name(k));
        }
        assert_eq!(
            got.len(),
            want.len(),
            "{}: {} frames out, the CPU target sent {}",
            stream_name(k),
            got.len(),
            want.len()
        );
    }

    let read = |addr: u32| run.reads.iter().find(|(a, _)| *a == addr).map(|(_, v)| *v).expect("read");
    assert_eq!(read(0x000), opl::ID);
    assert_eq!(read(0x004), opl::VERSION);
    assert_eq!(read(0x00c), opl::nf_id(&design().top_name()));
    let dropped = cpu.drops.len() as u32;
    assert_eq!(read(opl::PKTIN_ADDR), frames.len() as u32, "PKTIN");
    assert_eq!(read(opl::PKTOUT_ADDR), frames.len() as u32 - dropped, "PKTOUT");
    assert_eq!(read(opl::DROPS_ADDR), dropped, "DROPS");
    for &r in DropReason::ALL {
        assert_eq!(read(opl::drop_addr(r)), cpu.stats.drops_for(r) as u32, "DROP_{}", r.name());
    }
    // After RESET: the last three reads.
    let after: Vec<u32> = run.reads[run.reads.len() - 3..].iter().map(|(_, v)| *v).collect();
    assert_eq!(after, [0, 0, 0], "counters after writing RESET");
}

#[test]
fn frames_one_at_a_time_match_the_cpu_target() {
    let frames = traffic();
    let run = sim().run(&frames, Mode::Serial, 7, &accesses()).unwrap();
    let order: Vec<usize> = frames.iter().map(|(k, _)| *k).collect();
    assert_eq!(run.grants, order, "the arbiter must pass frames on in the order offered");
    check_against_cpu(&frames, &run);
    // Every drop reason the traffic was built to provoke.
    for r in [
        DropReason::Runt,
        DropReason::Ipv4Version,
        DropReason::Ipv4HeaderLength,
        DropReason::Ipv4TotalLength,
        DropReason::Oversize,
        DropReason::SamePort,
    ] {
        let count = run.reads.iter().find(|(a, _)| *a == opl::drop_addr(r)).unwrap().1;
        assert!(count > 0, "no `{}` drop", r.name());
    }
}

#[test]
fn all_inputs_at_once_match_the_cpu_target_in_the_arbiters_order() {
    let frames = traffic();
    let run = sim().run(&frames, Mode::Concurrent, 11, &accesses()).unwrap();
    // The arbiter picked the order: the CPU target gets the frames in that order.
    let mut queues: Vec<std::collections::VecDeque<Vec<u8>>> = vec![Default::default(); STREAMS];
    for (k, f) in &frames {
        queues[*k].push_back(f.clone());
    }
    let ordered: Vec<(usize, Vec<u8>)> = run
        .grants
        .iter()
        .map(|&k| (k, queues[k].pop_front().unwrap_or_else(|| panic!("more grants on {} than frames", stream_name(k)))))
        .collect();
    assert_eq!(ordered.len(), frames.len(), "every frame granted once");
    let serial: Vec<usize> = frames.iter().map(|(k, _)| *k).collect();
    assert_ne!(run.grants, serial, "with every input busy the arbiter interleaves them");
    check_against_cpu(&ordered, &run);
}

/// The learning switch built with the debug unit, whose registers answer on the OPL's AXI4-Lite
/// slave through a 12-bit window, as the reference switch decodes it (the page register, then
/// the upper half of the window): after the example traffic the unit's counters and the MAC
/// table read what the CPU target's state holds, a write through it lands, and the OPL's own
/// registers are still where they were (a write to the unit's CONTROL does not clear them).
#[test]
fn the_debug_unit_answers_on_axi4_lite() {
    use emu_debug::hw::reg;
    let mut design = design();
    design.config.debug = true;
    let sim = SumeSim::build(&design).unwrap_or_else(|e| panic!("{e}"));
    let frames = example();
    // The unit's register `a`: its page into DEBUG_PAGE, then the access in the window.
    let mut accesses = vec![];
    let mut unit = |a: u32, write: Option<u32>| {
        let (page, at) = opl::debug_address(a);
        accesses.push(Access::Write(opl::DEBUG_PAGE_ADDR, page));
        accesses.push(match write {
            Some(v) => Access::Write(at, v),
            None => Access::Read(at),
        });
    };
    unit(reg::ID, None);
    unit(reg::PACKETS, None);
    unit(reg::symbol(1, 0), None);
    unit(reg::symbol(1, 1), None);
    unit(reg::CONTROL, Some(0));
    for slot in 0..4 {
        unit(reg::INDEX, Some(slot));
        unit(reg::table(0, reg::T_VALID), None);
        unit(reg::table(0, reg::T_KEY), None);
        unit(reg::table(0, reg::T_KEY + 4), None);
        unit(reg::table(0, reg::T_VALUE), None);
    }
    unit(reg::DATA, Some(77));
    unit(reg::DATA + 4, Some(0));
    unit(reg::COMMIT, Some(1));
    unit(reg::RESULT, None);
    unit(reg::symbol(1, 0), None);
    // The OPL's own registers are where they were, the page register reads back.
    accesses.insert(10, Access::Read(opl::PKTIN_ADDR));
    accesses.push(Access::Read(opl::DEBUG_PAGE_ADDR));
    let addr = |a: &Access| match *a {
        Access::Read(x) | Access::Write(x, _) => x,
    };
    assert!(accesses.iter().all(|a| addr(a) < 0x1000), "every access within the reference's 12 address bits");
    assert!(accesses.iter().any(|a| addr(a) == opl::DEBUG_PAGE_ADDR && *a != Access::Write(opl::DEBUG_PAGE_ADDR, 0)));
    let run = sim.run(&frames, Mode::Serial, 5, &accesses).unwrap();
    let reads: Vec<u32> = run.reads.iter().map(|(_, v)| *v).collect();

    let input: Vec<Frame> =
        frames.iter().enumerate().map(|(i, (k, f))| Frame::new(nf_port(*k), i as u64, f.clone())).collect();
    let mut runner = emu_cpu::Runner::new(Box::new(learning_switch::LearningSwitch::default()), 4, 64);
    runner.run(&mut emu_cpu::MemoryDevice::new(input), &mut Vec::new()).unwrap();
    let mut nf = runner.into_nf();
    let floods = nf.floods.get();
    assert!(floods > 0);
    assert_eq!(
        &reads[..5],
        [emu_debug::hw::ID, frames.len() as u32, floods as u32, (floods >> 32) as u32, frames.len() as u32]
    );
    let elements = nf.elements();
    assert!((0..4).any(|slot| elements[0].1.read(slot).unwrap()[0] == 1), "the traffic taught the switch MACs");
    for slot in 0..4 {
        let r = &reads[5 + 4 * slot..9 + 4 * slot];
        let e = elements[0].1.read(slot).unwrap();
        let key = u64::from_be_bytes([0, 0, e[1], e[2], e[3], e[4], e[5], e[6]]);
        let (valid, key, value) = if e[0] == 1 { (1, key, e[7] as u32) } else { (r[0], 0, 0) };
        assert_eq!(r[0], valid, "slot {slot} valid");
        if valid == 1 {
            assert_eq!((r[1] as u64 | (r[2] as u64) << 32, r[3]), (key, value), "slot {slot}");
        }
    }
    assert_eq!(&reads[21..23], [0, 77], "COMMIT wrote floods");
    assert_eq!(reads[23], opl::debug_address(reg::symbol(1, 0)).0, "DEBUG_PAGE reads back");
}

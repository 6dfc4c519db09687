//! The hardware debug unit under Verilator (emu-hls `backend/debug.rs`, served by
//! `emu_debug::hw::HwUnit`): the same script — find a table entry by key, read entries by
//! index, read a counter, watch it while traffic flows and
//! see the notification, break, status, step 3, status, continue, write and reset — gives the
//! same answers and the same frames out of each port as the CPU target's unit, through the
//! register port and in band; a full hold buffer passes frames as the CPU's does; a trace
//! records the same frames and verdicts; idle, the unit costs no cycle; fuzzed requests change
//! neither the state nor the traffic. The CPU's unit holds as many frames at a break as the
//! hardware's ([`HOLD_DEPTH`]), so the two compare where the buffer fills.

use emu::{Config, NfDescriptor};
use emu_cpu::{DebugOptions, Debugger, Frame, MemoryDevice, Runner};
use emu_debug::hw::{HwUnit, Registers, HOLD_DEPTH};
use emu_debug::protocol::{
    decode, encode, Message, Notification, Reply, Request, Status, SymbolInfo, WatchOp, UNIT_MAC,
};
use emu_hls::backend::model::{Driver, Pacing};
use emu_hls::backend::Design;
use emu_sim::hw_debug::{in_band, DebugBench, InBand};
use emu_sim::verilator::VerilatorModel;
use proptest::prelude::*;
use std::path::PathBuf;

const MGMT: u8 = 3;
const MAC_TABLE: u16 = 0;
const FLOODS: u16 = 1;

fn frame(dst: u8, src: u8, k: u8) -> Vec<u8> {
    let dst = if dst == 0xff { [0xff; 6] } else { [2, 0, 0, 0, 0, dst] };
    let mut f = dst.to_vec();
    f.extend_from_slice(&[2, 0, 0, 0, 0, src, 0x88, 0xb6, k]);
    f.resize(60 + k as usize % 7, k);
    f
}

#[derive(Clone)]
enum Event {
    Frames(Vec<(u8, Vec<u8>)>),
    Ask(u32, Request),
}

fn script() -> Vec<Event> {
    let drops = symbols().len() as u16 + 3;
    use Event::*;
    vec![
        Frames(vec![(0, frame(0xff, 0x11, 1)), (1, frame(0x11, 0x12, 2)), (0, frame(0x12, 0x11, 3))]),
        Ask(30, Request::Lookup { id: MAC_TABLE, key: vec![2, 0, 0, 0, 0, 0x12] }),
        Ask(31, Request::Read { id: MAC_TABLE, index: 0 }),
        Ask(32, Request::Read { id: MAC_TABLE, index: 2 }),
        Ask(33, Request::Read { id: MAC_TABLE, index: 16 }),
        Ask(34, Request::Lookup { id: MAC_TABLE, key: vec![2, 0, 0, 0, 0, 0x77] }),
        Ask(35, Request::Lookup { id: FLOODS, key: vec![0] }),
        Ask(1, Request::Read { id: FLOODS, index: 0 }),
        Ask(
            2,
            Request::Watch {
                slot: 0,
                id: FLOODS,
                index: 0,
                op: WatchOp::Ge,
                operand: 4u64.to_be_bytes().to_vec(),
                record: true,
            },
        ),
        Frames(vec![(0, frame(0xff, 0x11, 4)), (1, frame(0x33, 0x12, 5)), (2, frame(0xff, 0x13, 6))]),
        Ask(3, Request::Unwatch { slot: None }),
        Ask(4, Request::Break),
        Frames((0..4).map(|k| (k % 2, frame(0xff, 0x11 + k % 2, 10 + k))).collect()),
        Ask(5, Request::Status),
        Ask(6, Request::Step { n: 3 }),
        Ask(7, Request::Status),
        Ask(8, Request::Continue),
        Ask(9, Request::Step { n: 1 }),
        Frames(vec![(1, frame(0x11, 0x12, 20))]),
        Ask(10, Request::Read { id: FLOODS, index: 0 }),
        Ask(11, Request::Write { id: FLOODS, index: 0, entry: 100u64.to_be_bytes().to_vec() }),
        Frames(vec![(0, frame(0xff, 0x11, 21))]),
        Ask(12, Request::Read { id: FLOODS, index: 0 }),
        Ask(13, Request::ResetCounters { id: Some(FLOODS) }),
        Ask(14, Request::Read { id: FLOODS, index: 0 }),
        Ask(15, Request::Write { id: FLOODS, index: 0, entry: vec![1, 2] }),
        Ask(16, Request::Read { id: 9, index: 0 }),
        Ask(16, Request::Break),
        Ask(40, Request::Continue),
        // A MAC table entry written by the debugger steers frames; a key held by another slot
        // is refused; an emptied slot floods again.
        Ask(41, Request::Write { id: MAC_TABLE, index: 5, entry: vec![1, 2, 0, 0, 0, 0, 0x44, 2] }),
        Frames(vec![(0, frame(0x44, 0x11, 30))]),
        Ask(42, Request::Write { id: MAC_TABLE, index: 6, entry: vec![1, 2, 0, 0, 0, 0, 0x44, 1] }),
        Ask(43, Request::Write { id: MAC_TABLE, index: 5, entry: vec![0; 8] }),
        Ask(44, Request::Read { id: MAC_TABLE, index: 5 }),
        Frames(vec![(0, frame(0x44, 0x11, 31))]),
        Ask(45, Request::Write { id: MAC_TABLE, index: 16, entry: vec![0; 8] }),
        Ask(46, Request::Write { id: MAC_TABLE, index: 7, entry: vec![2, 0, 0, 0, 0, 0, 0x44, 1] }),
        // The target's own counters: frames in, out and dropped per port, drops by reason (a
        // frame back to its own port, and a runt).
        Frames(vec![(0, frame(0x11, 0x14, 32)), (1, vec![0x11; 9])]),
        Ask(47, Request::Counters { first: 0, index: 0, count: 100 }),
        Ask(48, Request::Read { id: drops, index: emu::DropReason::SamePort as u32 }),
        Ask(49, Request::Counters { first: drops, index: 1, count: 3 }),
        Ask(50, Request::Write { id: drops - 3, index: 0, entry: vec![0; 8] }),
        Ask(51, Request::ResetCounters { id: Some(drops) }),
    ]
}

/// Frames out of each port, in order (the unit's own messages aside), and the unit's messages.
type Run = ([Vec<Vec<u8>>; 4], Vec<Message>);

fn control(seq: u32, r: &Request) -> Vec<u8> {
    emu_debug::protocol::frame([0xff; 6], [2, 0, 0, 0, 0, 0x99], &encode(&Message::Request { seq, request: r.clone() }))
}

/// The reply to request `seq` among `messages`: its status and payload.
fn reply_to(messages: &[Message], seq: u32) -> (Status, Reply) {
    messages
        .iter()
        .find_map(|m| match m {
            Message::Reply { seq: s, status, reply, .. } if *s == seq => Some((*status, reply.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no reply to {seq}"))
}

/// The NF a script runs on, as the tools build it.
struct Nf {
    desc: &'static NfDescriptor,
    config: Config,
    /// The management port: of the CPU target, and of the hardware's in-band path (the
    /// hardware unit is reached by its registers too).
    mgmt: u8,
}

fn switch() -> Nf {
    Nf { desc: &learning_switch::DESCRIPTOR, config: Config::new(), mgmt: MGMT }
}

fn on_cpu(events: &[Event]) -> Run {
    on_cpu_of(&switch(), events)
}

fn on_cpu_of(nf: &Nf, events: &[Event]) -> Run {
    let mut input = vec![];
    for e in events {
        match e {
            Event::Frames(fs) => input.extend(fs.iter().map(|(p, f)| Frame::new(*p, 0, f.clone()))),
            Event::Ask(seq, r) => input.push(Frame::new(nf.mgmt, 0, control(*seq, r))),
        }
    }
    let runner = Runner::new((nf.desc.build)(&nf.config).unwrap(), nf.desc.ports, nf.desc.window);
    let options = DebugOptions { port: Some(nf.mgmt), hold_depth: Some(HOLD_DEPTH), ..DebugOptions::default() };
    let mut runner = runner.with_debugger(Debugger::new(nf.desc.name, &options).unwrap());
    let mut device = MemoryDevice::new(input);
    runner.run(&mut device, &mut Vec::new()).unwrap();
    let mut ports: [Vec<Vec<u8>>; 4] = Default::default();
    let mut messages = vec![];
    for o in device.output {
        match emu_debug::protocol::payload(&o.data) {
            Some(m) if o.port == nf.mgmt && o.data[6..12] == emu_cpu::debug::UNIT_MAC => {
                messages.push(decode(m).unwrap())
            }
            _ => ports[o.port as usize].push(o.data),
        }
    }
    (ports, messages)
}

fn design_of(nf: &Nf, debug: bool) -> Design {
    design_at(nf, debug, 64)
}

/// The NF's hardware on a `width`-bit bus.
fn design_at(nf: &Nf, debug: bool, width: usize) -> Design {
    let mut d = Design::from_descriptor(nf.desc, &nf.config, width, 1518).unwrap();
    d.config.debug = debug;
    d.config.debug_port = Some(nf.mgmt);
    d
}

fn design(debug: bool) -> Design {
    design_of(&switch(), debug)
}

/// The NF's symbols as the CPU target's unit numbers them (fields, then probes): the
/// hardware's, since both come from the same source.
fn symbols_of(nf: &Nf) -> Vec<SymbolInfo> {
    emu_cpu::debug::nf_symbols(&mut *(nf.desc.build)(&nf.config).unwrap())
}

fn symbols() -> Vec<SymbolInfo> {
    symbols_of(&switch())
}

fn bench_of(nf: &Nf) -> DebugBench {
    bench_at(nf, 64)
}

fn bench_at(nf: &Nf, width: usize) -> DebugBench {
    let (model, _) = VerilatorModel::build(&design_at(nf, true, width), None).unwrap_or_else(|e| panic!("{e}"));
    DebugBench::new(model).unwrap()
}

fn bench() -> DebugBench {
    bench_of(&switch())
}

fn on_hardware(events: &[Event]) -> Run {
    on_hardware_of(&switch(), events)
}

fn on_hardware_of(nf: &Nf, events: &[Event]) -> Run {
    on_hardware_at(nf, events, 64)
}

fn on_hardware_at(nf: &Nf, events: &[Event], width: usize) -> Run {
    drive(nf, events, &mut bench_at(nf, width))
}

/// As [`on_hardware_of`], the unit reached in band: its registers through control frames on
/// the management port.
fn on_hardware_in_band(nf: &Nf, events: &[Event]) -> Run {
    let mut bench = bench_of(nf);
    drive(nf, events, &mut in_band(&mut bench, nf.mgmt))
}

/// The hardware's registers, and the bench behind them.
trait Hardware: Registers {
    fn bench(&mut self) -> &mut DebugBench;
}

impl Hardware for DebugBench {
    fn bench(&mut self) -> &mut DebugBench {
        self
    }
}

impl Hardware for InBand<'_> {
    fn bench(&mut self) -> &mut DebugBench {
        self.transport().bench
    }
}

/// The events on the hardware, `HwUnit` answering the requests over `hw`'s registers.
fn drive<H: Hardware>(nf: &Nf, events: &[Event], hw: &mut H) -> Run {
    let mut unit = HwUnit::new(nf.desc.name, symbols_of(nf)).with_ports(nf.desc.ports);
    unit.check(hw).unwrap();
    let mut messages = vec![];
    for e in events {
        match e {
            Event::Frames(fs) => {
                for (p, f) in fs {
                    hw.bench().send(f, *p);
                }
                hw.bench().run();
            }
            Event::Ask(seq, r) => {
                let reply = unit.control(&encode(&Message::Request { seq: *seq, request: r.clone() }), hw);
                messages.push(decode(&reply.expect("a reply")).unwrap());
            }
        }
        messages.extend(unit.poll(hw).iter().map(|n| decode(n).unwrap()));
    }
    let bench = hw.bench();
    bench.run();
    let mut ports: [Vec<Vec<u8>>; 4] = Default::default();
    for (mask, f) in &bench.sent {
        for (k, port) in ports.iter_mut().enumerate() {
            if mask & (1 << k) != 0 {
                port.push(f.clone());
            }
        }
    }
    (ports, messages)
}

#[test]
fn the_same_script_gives_the_same_answers_on_the_cpu_and_under_verilator() {
    let events = script();
    let (cpu_ports, cpu) = on_cpu(&events);
    let (hw_ports, hw) = on_hardware(&events);
    assert_eq!(hw.len(), cpu.len(), "messages:\ncpu {cpu:#?}\nhardware {hw:#?}");
    for (c, h) in cpu.iter().zip(&hw) {
        assert_eq!(h, c);
    }
    // What the script shows, so a change on both sides is seen too.
    let reply = |seq: u32| reply_to(&cpu, seq);
    assert_eq!(reply(1), (Status::Ok, Reply::Entry(1u64.to_be_bytes().to_vec())));
    assert_eq!(reply(30), (Status::Ok, Reply::Found { index: 1, entry: vec![1, 2, 0, 0, 0, 0, 0x12, 1] }));
    assert_eq!(reply(31), (Status::Ok, Reply::Entry(vec![1, 2, 0, 0, 0, 0, 0x11, 0])));
    assert_eq!(reply(32), (Status::Ok, Reply::Entry(vec![0; 8])), "an empty slot");
    assert_eq!(reply(33).0, Status::BadIndex);
    assert_eq!(reply(34).0, Status::NoSuchKey);
    assert_eq!(reply(35).0, Status::BadValue);
    let Reply::Counters(counts) = reply(47).1 else { panic!("counters") };
    let auto = |name: &str, index: u32| {
        let id = symbols().len() as u16 + ["rx_packets", "tx_packets", "dropped", "drops"].iter().position(|n| *n == name).unwrap() as u16;
        counts.iter().find(|c| (c.id, c.index) == (id, index)).map_or(0, |c| c.value)
    };
    assert_eq!(auto("drops", emu::DropReason::SamePort as u32), 1, "{counts:?}");
    assert_eq!(auto("drops", emu::DropReason::Runt as u32), 1, "{counts:?}");
    assert_eq!(auto("dropped", 1), 1, "{counts:?}");
    assert!(auto("rx_packets", 0) > 5 && auto("tx_packets", 1) > 3, "{counts:?}");
    assert_eq!(reply(48), (Status::Ok, Reply::Entry(1u64.to_be_bytes().to_vec())));
    assert_eq!((reply(50).0, reply(51).0), (Status::ReadOnly, Status::ReadOnly));
    let hits: Vec<(u64, Vec<u8>, Option<(u8, Vec<u8>)>)> = cpu
        .iter()
        .filter_map(|m| match m {
            Message::Notification { notification: Notification::WatchHit { packet_no, value, packet, .. }, .. } => {
                Some((*packet_no, value.clone(), packet.clone()))
            }
            _ => None,
        })
        .collect();
    // The sixth frame, 66 bytes from port 2: recorded, its first 64 (no trace is on).
    let sixth = (2, frame(0xff, 0x13, 6)[..64].to_vec());
    assert_eq!(hits, [(5, 4u64.to_be_bytes().to_vec(), Some(sixth))], "the watch fired once, after the sixth frame");
    let Reply::Status(s) = reply(5).1 else { panic!("a status") };
    assert_eq!((s.broken, s.held, s.passed_while_full), (true, 4, 0), "the four frames held");
    assert_eq!(reply(6), (Status::Ok, Reply::Step { released: 3, held: 1 }));
    assert_eq!(reply(9).0, Status::NotBroken);
    assert_eq!(reply(12), (Status::Ok, Reply::Entry(101u64.to_be_bytes().to_vec())));
    assert_eq!(reply(14), (Status::Ok, Reply::Entry(0u64.to_be_bytes().to_vec())));
    assert_eq!(reply(15).0, Status::BadValue);
    assert_eq!(reply(41).0, Status::Ok);
    assert_eq!(reply(42).0, Status::KeyElsewhere, "02:00:00:00:00:44 is in slot 5");
    assert_eq!(reply(44), (Status::Ok, Reply::Entry(vec![0; 8])));
    assert_eq!(reply(45).0, Status::BadIndex);
    assert_eq!(reply(46).0, Status::BadValue);
    let has = |port: usize, k: u8| cpu_ports[port].iter().any(|f| f[14] == k);
    assert!(has(2, 30) && !has(1, 30) && !has(3, 30), "the written entry sent frame 30 to port 2 alone");
    assert_eq!(cpu_ports[1].last().map(|f| f[14]), Some(31), "with the slot emptied, frame 31 floods");
    assert_eq!(reply(16).0, Status::NoSuchSymbol);
    assert_eq!(hw_ports, cpu_ports, "frames out of each port");
    assert_eq!(cpu_ports.iter().map(Vec::len).sum::<usize>(), 34);
}

/// More frames at a break than the hold buffer takes: the rest pass through the NF, counted,
/// and `hold_full` is said once until `continue`; a step makes room for more. As on the CPU,
/// through the register port and in band.
#[test]
fn a_full_hold_passes_frames_as_on_the_cpu() {
    use Event::*;
    let k = HOLD_DEPTH as u8;
    let mut long = frame(0xff, 0x11, 50);
    long.resize(1600, 50);
    let arriving = |first: u8, n: u8| Frames((first..first + n).map(|i| (i % 3, frame(0xff, 0x11 + i % 3, i))).collect());
    let events = vec![
        Ask(1, Request::Break),
        arriving(0, k + 2),
        Ask(2, Request::Status),
        Ask(3, Request::Step { n: 2 }),
        arriving(20, 3),
        Ask(4, Request::Status),
        Ask(5, Request::Continue),
        Ask(6, Request::Break),
        arriving(40, k + 1),
        Ask(7, Request::Continue),
        Ask(8, Request::Status),
        // Held as any frame: one longer than the packet buffer (dropped oversize once let
        // in, not cut to a frame that fits) and a runt.
        Ask(9, Request::Break),
        Frames(vec![(0, long), (1, frame(0xff, 0x12, 51)[..12].to_vec()), (2, frame(0xff, 0x13, 60))]),
        Ask(10, Request::Status),
        Ask(11, Request::Continue),
    ];
    let (cpu_ports, cpu) = on_cpu(&events);
    let full: Vec<u16> = cpu
        .iter()
        .filter_map(|m| match m {
            Message::Notification { notification: Notification::HoldFull { held }, .. } => Some(*held),
            _ => None,
        })
        .collect();
    assert_eq!(full, [HOLD_DEPTH, HOLD_DEPTH], "once a break, not again after a step filled it");
    let status = |seq| match reply_to(&cpu, seq).1 {
        Reply::Status(s) => (s.held, s.passed_while_full),
        r => panic!("{r:?}"),
    };
    assert_eq!(status(2), (HOLD_DEPTH, 2));
    assert_eq!(status(4), (HOLD_DEPTH, 3));
    assert_eq!(status(8), (0, 4));
    assert_eq!(status(10), (3, 4));
    // Frames that passed the full buffer went out before those it held.
    let order: Vec<u8> = cpu_ports[3].iter().map(|f| f[14]).collect();
    let mut want: Vec<u8> = vec![k, k + 1, 0, 1, 22, 2, 3, 20, 21, 40 + k];
    want.extend(40..40 + k);
    want.push(60);
    assert_eq!(order, want);
    let (hw_ports, hw) = on_hardware(&events);
    assert_eq!(hw, cpu);
    assert_eq!(hw_ports, cpu_ports);
    let (hw_ports, hw) = on_hardware_in_band(&switch(), &events);
    assert_eq!(hw, cpu);
    assert_eq!(hw_ports, cpu_ports);
}

/// Frames that arrive while a step's frames are still leaving find the buffer with room: the
/// stepped ones are released (as on the CPU, where a step frees them at once), so none of the
/// newcomers passes and `hold_full` is not said.
#[test]
fn frames_arriving_during_a_step_are_held() {
    let mut bench = bench();
    let mut unit = HwUnit::new("learning_switch", symbols());
    let mut seq = 0;
    let mut ask = |bench: &mut DebugBench, request: Request| {
        seq += 1;
        let reply = unit.control(&encode(&Message::Request { seq, request }), bench).unwrap();
        let Message::Reply { reply, .. } = decode(&reply).unwrap() else { panic!("a reply") };
        (reply, unit.poll(bench))
    };
    ask(&mut bench, Request::Break);
    // Four long frames held (each takes some 75 cycles to leave), then two short ones queued
    // upstream, to arrive while the step's first frame is still leaving.
    for k in 0..HOLD_DEPTH as u8 {
        let mut f = frame(0xff, 0x11, k);
        f.resize(600, k);
        bench.send(&f, 0);
    }
    bench.run();
    for k in [20, 21] {
        bench.send(&frame(0xff, 0x12, k), 1);
    }
    let (reply, notes) = ask(&mut bench, Request::Step { n: 2 });
    assert_eq!(reply, Reply::Step { released: 2, held: HOLD_DEPTH }, "the two newcomers held behind");
    assert!(notes.is_empty(), "no hold_full");
    let Reply::Status(s) = ask(&mut bench, Request::Status).0 else { panic!("a status") };
    assert_eq!((s.held, s.passed_while_full), (HOLD_DEPTH, 0));
    assert_eq!(ask(&mut bench, Request::Continue).0, Reply::Continue { released: HOLD_DEPTH });
    bench.run();
    let order: Vec<u8> = bench.sent.iter().map(|(_, f)| f[14]).collect();
    assert_eq!(order, [0, 1, 2, 3, 20, 21]);
}

#[test]
fn a_watch_slot_the_unit_lacks_is_refused() {
    let mut bench = bench();
    let mut unit = HwUnit::new("learning_switch", symbols());
    let mut ask = |request: Request| {
        let reply = unit.control(&encode(&Message::Request { seq: 7, request }), &mut bench).unwrap();
        let Message::Reply { status, .. } = decode(&reply).unwrap() else { panic!("a reply") };
        unit.control(&encode(&Message::Request { seq: 8, request: Request::Status }), &mut bench);
        status
    };
    assert_eq!(
        ask(Request::Watch { slot: 4, id: FLOODS, index: 0, op: WatchOp::Changes, operand: vec![], record: false }),
        Status::NoSlot
    );
}

/// Each session of `emu dbg` in band is a new host unit: the watch slots are the hardware's,
/// so a second session's watch takes a free one, lists the first's, and hears its hits.
#[test]
fn sessions_share_the_hardwares_watch_slots() {
    use emu_debug::protocol::{WatchInfo, ANY_SLOT};
    let mut bench = bench();
    let mut seq = 100;
    let mut ask = |unit: &mut HwUnit, bench: &mut DebugBench, request: Request| {
        seq += 1;
        let reply = unit.control(&encode(&Message::Request { seq, request }), bench).unwrap();
        let Message::Reply { status, reply, .. } = decode(&reply).unwrap() else { panic!("a reply") };
        (status, reply)
    };
    let watch = |op, operand: Vec<u8>, record| Request::Watch { slot: ANY_SLOT, id: FLOODS, index: 0, op, operand, record };
    let four = 4u64.to_be_bytes().to_vec();
    let mut first = HwUnit::new("learning_switch", symbols());
    ask(&mut first, &mut bench, Request::Hello);
    assert_eq!(ask(&mut first, &mut bench, watch(WatchOp::Ge, four.clone(), true)).1, Reply::Watch { slot: 0 });
    let mut second = HwUnit::new("learning_switch", symbols());
    ask(&mut second, &mut bench, Request::Hello);
    assert_eq!(ask(&mut second, &mut bench, watch(WatchOp::Changes, vec![], false)).1, Reply::Watch { slot: 1 });
    assert_eq!(
        ask(&mut second, &mut bench, Request::Watches).1,
        Reply::Watches(vec![
            WatchInfo { slot: 0, id: FLOODS, index: 0, op: WatchOp::Ge, operand: four, record: true },
            WatchInfo { slot: 1, id: FLOODS, index: 0, op: WatchOp::Changes, operand: vec![], record: false },
        ])
    );
    for k in 0..4 {
        bench.send(&frame(0xff, 0x11, k), 0);
    }
    bench.run();
    let hits: Vec<(u8, u64)> = second
        .poll(&mut bench)
        .iter()
        .filter_map(|n| match decode(n) {
            Ok(Message::Notification { notification: Notification::WatchHit { slot, packet_no, .. }, .. }) => {
                Some((slot, packet_no))
            }
            _ => None,
        })
        .collect();
    assert_eq!(hits, [(0, 3), (1, 3)], "the first session's watch fires too (the last hit of each slot)");
    for slot in [2, 3] {
        assert_eq!(ask(&mut second, &mut bench, watch(WatchOp::Changes, vec![], false)).1, Reply::Watch { slot });
    }
    assert_eq!(ask(&mut first, &mut bench, watch(WatchOp::Changes, vec![], false)).0, Status::NoSlot);
    assert_eq!(ask(&mut first, &mut bench, Request::Unwatch { slot: None }).0, Status::Ok);
    assert_eq!(ask(&mut second, &mut bench, Request::Watches).1, Reply::Watches(vec![]));
}

/// The unit's watchdog: a break no host touches (no register access) for BREAK_TIMEOUT cycles
/// ends as a continue does, and the frames it held go on, counted; a host that keeps asking
/// keeps the break (as `emu dbg --hardware`'s keep-alive does while a session is at a break).
#[test]
fn the_watchdog_ends_a_break_no_host_touches() {
    use emu_debug::hw::reg;
    let mut bench = bench();
    bench.write(reg::BREAK_TIMEOUT, 400);
    bench.write(reg::CONTROL, 1);
    bench.send(&frame(0xff, 0x11, 1), 0);
    bench.send(&frame(0xff, 0x12, 2), 1);
    for _ in 0..20 {
        for _ in 0..300 {
            bench.cycle(None);
        }
        assert_eq!(bench.read(reg::CONTROL) & 1, 1, "touched every 300 cycles: still broken");
    }
    assert!(bench.sent.is_empty(), "held");
    assert_eq!(reg::held(bench.read(reg::STATUS)), 2);
    for _ in 0..450 {
        bench.cycle(None);
    }
    bench.run();
    assert_eq!(bench.sent.len(), 2, "released by the watchdog");
    assert_eq!(bench.read(reg::CONTROL) & 1, 0, "running");
    assert_eq!(bench.read(reg::BREAKS_TIMED_OUT), 1);
    // Off (0), a break lasts.
    bench.write(reg::BREAK_TIMEOUT, 0);
    bench.write(reg::CONTROL, 1);
    bench.send(&frame(0xff, 0x13, 3), 0);
    for _ in 0..3000 {
        bench.cycle(None);
    }
    assert_eq!(bench.sent.len(), 2);
    assert_eq!(bench.read(reg::BREAKS_TIMED_OUT), 1);
}

#[test]
fn idle_the_unit_costs_no_cycle() {
    let traffic: Vec<(Vec<u8>, u8)> = (0..200u32)
        .map(|k| {
            (frame(if k % 3 == 0 { 0xff } else { 0x11 + (k % 5) as u8 }, 0x11 + (k % 4) as u8, k as u8), (k % 4) as u8)
        })
        .collect();
    let pacing = Pacing { valid_percent: 90, ready_percent: 90, seed: 11 };
    let mut runs = vec![];
    for debug in [false, true] {
        let (model, _) = VerilatorModel::build(&design(debug), None).unwrap_or_else(|e| panic!("{e}"));
        let mut driver = Driver::new(model, 8, pacing);
        let out = driver.run(&traffic).unwrap_or_else(|h| panic!("hung: {h:?}"));
        runs.push((out, driver.latencies.clone(), driver.cycles));
    }
    assert_eq!(runs[0].0, runs[1].0, "the same frames");
    assert_eq!(runs[0].1, runs[1].1, "the same cycles per frame");
    assert_eq!(runs[0].2, runs[1].2, "the same cycles in all");
}

fn state(bench: &mut DebugBench, unit: &mut HwUnit, seq: u32) -> Vec<u8> {
    let reply =
        unit.control(&encode(&Message::Request { seq, request: Request::Read { id: FLOODS, index: 0 } }), bench);
    match decode(&reply.unwrap()).unwrap() {
        Message::Reply { reply: Reply::Entry(v), .. } => v,
        other => panic!("{other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Fuzzed requests (random bytes, and valid reads and hellos with bytes changed), to the
    /// host's `HwUnit` and as control frames into the hardware's management port, never crash
    /// or hang the unit, and leave the state and the traffic as they were.
    #[test]
    fn fuzzed_requests_change_nothing(
        fuzz in proptest::collection::vec(
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..40),
                (0usize..20, any::<u8>()).prop_map(|(i, b)| {
                    let mut m = encode(&Message::Request { seq: 3, request: Request::Read { id: FLOODS, index: 0 } });
                    if let Some(x) = m.get_mut(i) { *x = b; }
                    m
                }),
            ],
            1..8,
        ),
    ) {
        let mut bench = bench();
        let mut unit = HwUnit::new("learning_switch", symbols());
        for k in 0..6u8 {
            bench.send(&frame(0xff, 0x11 + k % 3, k), k % 3);
        }
        bench.run();
        let before = (state(&mut bench, &mut unit, u32::MAX - 1), bench.sent.clone());
        for f in &fuzz {
            // A fuzzed write or reset is a legitimate command: those are not fuzz here.
            if let Ok(Message::Request { request: Request::Write { .. } | Request::ResetCounters { .. } | Request::Break | Request::Step { .. }, .. }) = decode(f) {
                continue;
            }
            if let Some(reply) = unit.control(f, &mut bench) {
                prop_assert!(decode(&reply).is_ok());
            }
            // And in band, into the hardware's management port (reg_write too is legitimate).
            if !matches!(decode(f), Ok(Message::Request { request: Request::RegWrite { .. }, .. })) {
                bench.send(&emu_debug::protocol::frame(UNIT_MAC, [2, 0, 0, 0, 0, 0x99], f), MGMT);
            }
        }
        bench.run();
        // Every in-band reply decodes, and goes back to the host.
        let (replies, sent): (Vec<_>, Vec<_>) =
            bench.sent.iter().cloned().partition(|(_, f)| f[6..12] == UNIT_MAC);
        for (mask, f) in &replies {
            prop_assert_eq!(*mask, 1 << MGMT);
            prop_assert!(decode(emu_debug::protocol::payload(f).unwrap()).is_ok());
        }
        bench.sent = sent;
        prop_assert_eq!((state(&mut bench, &mut unit, u32::MAX), bench.sent.clone()), before);
    }
}

#[test]
fn the_verilog_with_the_unit_passes_the_lint() {
    let d = design(true);
    let v = emu_hls::backend::rtl::verilog(&d).unwrap();
    assert!(v.contains("dbg_req_addr") && v.contains("dbg_w3_hits_q"), "the unit is in the Verilog");
    emu_hls::hw::tools::verilator_lint_design(&v, &d.top_name(), true).unwrap_or_else(|e| panic!("{e}"));
}

/// The frames of each port pcap in `dir`.
fn port_frames(dir: &std::path::Path) -> Vec<Vec<Vec<u8>>> {
    (0..4)
        .map(|p| {
            let spec = emu_cpu::InputSpec { port: Some(0), path: dir.join(format!("port{p}.pcap")) };
            let mut r = emu_cpu::CaptureReader::open(&spec).unwrap();
            let mut frames = vec![];
            while let Some(f) = r.next_frame().unwrap() {
                frames.push(f.data);
            }
            frames
        })
        .collect()
}

/// A child process killed if the test ends without waiting for it (an assertion failed): a
/// sim at a break would never end on its own.
struct Sim(std::process::Child);

impl std::ops::Deref for Sim {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for Sim {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// `emu sim learning-switch` on the Verilator tier with its unit on a socket in `dir` (and the
/// options `extra`), once it listens: the process, the socket and the output directory.
fn debug_sim(dir: &std::path::Path, extra: &[&str]) -> (Sim, PathBuf, PathBuf) {
    let (sock, out) = (dir.join("ls.sock"), dir.join("out"));
    let sim = std::process::Command::new(env!("CARGO_BIN_EXE_emu"))
        .args(["sim", "learning-switch", "--width", "64", "--in", "examples/mixed.pcapng", "--out"])
        .arg(&out)
        .args(["--target", "verilator"])
        .args(extra)
        .arg("--debug-socket")
        .arg(&sock)
        .stdout(std::process::Stdio::null())
        .spawn()
        .map(Sim)
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    while !sock.exists() {
        assert!(std::time::Instant::now() < deadline, "the sim never listened");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    (sim, sock, out)
}

/// `emu sim learning-switch` on the CPU tier over the debug sims' traffic, in `dir`/cpu: the
/// directory of its outputs.
fn cpu_run(dir: &std::path::Path) -> PathBuf {
    let out = dir.join("cpu");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_emu"))
        .args(["sim", "learning-switch", "--in", "examples/mixed.pcapng", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out.join("cpu")
}

/// `emu dbg SOCK --exec SCRIPT`'s output.
fn dbg_exec(sock: &std::path::Path, script: &str) -> String {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_emu"))
        .arg("dbg")
        .arg(sock)
        .args(["--exec", script])
        .output()
        .unwrap();
    assert!(o.status.success(), "{script}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn emu_dbg_drives_a_running_emu_sim() {
    let dir = tempfile::tempdir().unwrap();
    let (mut sim, sock, out) = debug_sim(dir.path(), &[]);
    let dbg = |script: &str| dbg_exec(&sock, script);
    let first = dbg("status; read floods; watch floods >= 4; step 2; read floods");
    assert_eq!(
        first,
        "broken, 4 held, trace off, 0 watch hits, 0 passed while the hold was full\nfloods = 0\nwatch 0: floods >= 4\n\
         stepped 2 packets (2 still held)\nfloods = 1\n"
    );
    // Another session: its watch takes the next slot, and the first's stays armed.
    assert_eq!(
        dbg("watch floods == 2 record; watches"),
        "watch 1: floods == 2\nwatch 0: floods >= 4\nwatch 1: floods == 2 record\n"
    );
    let second = dbg("continue; wait 2000; read floods; read mac_table[0]");
    assert!(second.contains("watch 1 hit: floods = 2 after packet"), "{second}");
    assert!(second.contains("watch 0 hit: floods = 4 after packet"), "{second}");
    assert!(second.lines().last().is_some_and(|l| l.starts_with("mac_table[0] = 02:")), "{second}");
    let status = sim.wait().unwrap();
    assert!(status.success());
    // The frames out are the CPU target's.
    let cpu = cpu_run(dir.path());
    assert_eq!(port_frames(&out.join("verilator")), port_frames(&cpu));
}

/// A client killed while it holds the hardware at a break: once the break timeout has passed
/// with no client connected, the sim continues by itself and the traffic drains, the same
/// frames out as on the CPU.
#[test]
fn emu_sim_ends_a_break_whose_client_was_killed() {
    let dir = tempfile::tempdir().unwrap();
    let (mut sim, sock, out) = debug_sim(dir.path(), &["--break-timeout", "1"]);
    let mut holder = std::process::Command::new(env!("CARGO_BIN_EXE_emu"))
        .arg("dbg")
        .arg(&sock)
        .args(["--exec", "step 1; wait 600000"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert!(sim.try_wait().unwrap().is_none(), "held while its client is connected");
    holder.kill().unwrap();
    holder.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while sim.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "the break outlived its client");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(sim.wait().unwrap().success());
    let cpu = cpu_run(dir.path());
    assert_eq!(port_frames(&out.join("verilator")), port_frames(&cpu));
}

/// With `--stay`, `emu sim --debug-socket` serves the unit after the last frame has left, so a
/// later client reads what the traffic left, its pcaps and drops.jsonl already written; it
/// ends at SIGTERM.
#[test]
fn emu_sim_stays_after_the_traffic_with_stay() {
    let dir = tempfile::tempdir().unwrap();
    let (mut sim, sock, out) = debug_sim(dir.path(), &["--stay"]);
    let dbg = |script: &str| dbg_exec(&sock, script);
    dbg("continue; wait 2000");
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(sim.try_wait().unwrap().is_none(), "the sim stays after its client left");
    let status = dbg("status; read floods");
    assert!(status.starts_with("running, 0 held"), "{status}");
    let floods: u64 = status.lines().nth(1).and_then(|l| l.strip_prefix("floods = ")).unwrap().parse().unwrap();
    assert!(floods > 0, "{status}");
    // Written as they came, not at the end: while the sim still runs, the pcaps and drops
    // are the CPU target's.
    let cpu = cpu_run(dir.path());
    assert_eq!(port_frames(&out.join("verilator")), port_frames(&cpu));
    let drops = std::fs::read_to_string(out.join("verilator").join("drops.jsonl")).unwrap();
    assert!(!drops.is_empty(), "mixed.pcapng has frames the switch drops");
    assert_eq!(drops, std::fs::read_to_string(cpu.join("drops.jsonl")).unwrap());
    assert!(std::process::Command::new("kill").arg(sim.id().to_string()).status().unwrap().success());
    assert!(sim.wait().unwrap().success());
    assert!(out.join("verilator").join("port0.pcap").exists());
}

/// A trace notification without what differs by target (latency: ns on the CPU, cycles in
/// hardware).
type Traced = (u64, u8, emu_debug::protocol::TraceVerdict, u16, Vec<u8>);

fn traced(messages: &[Message]) -> Vec<Traced> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Notification {
                notification: Notification::Trace { packet_no, in_port, verdict, len, bytes, .. },
                ..
            } => Some((*packet_no, *in_port, *verdict, *len, bytes.clone())),
            _ => None,
        })
        .collect()
}

/// The records carry each frame's first bytes as it arrived (up to the snap length; the
/// hardware keeps 64), whatever the NF then does to it.
#[test]
fn the_trace_records_each_frame_and_its_verdict_as_on_the_cpu() {
    use emu_debug::protocol::TraceVerdict;
    use Event::*;
    let sent = [
        (1, frame(0x11, 0x12, 2)),
        (1, vec![2; 10]),
        (0, frame(0x11, 0x11, 3)),
        (2, frame(0x12, 0x13, 4)),
        (0, frame(0xff, 0x11, 5)),
        (0, frame(0xff, 0x11, 6)),
        (3, frame(0x13, 0x11, 7)),
    ];
    let events = vec![
        Frames(vec![(0, frame(0xff, 0x11, 1))]),
        Ask(1, Request::Trace { on: true, snap: 64 }),
        Frames(sent[..3].to_vec()),
        Frames(sent[3..5].to_vec()),
        Ask(2, Request::Trace { on: false, snap: 0 }),
        Frames(sent[5..6].to_vec()),
        Ask(3, Request::Trace { on: true, snap: 20 }),
        Frames(sent[6..].to_vec()),
        Ask(4, Request::Trace { on: false, snap: 0 }),
    ];
    let (cpu_ports, cpu) = on_cpu(&events);
    let (hw_ports, hw) = on_hardware(&events);
    assert_eq!(hw_ports, cpu_ports);
    // Two beats of the 256-bit bus hold the 64 bytes that take eight of the 64-bit one.
    let (wide_ports, wide) = on_hardware_at(&switch(), &events, 256);
    assert_eq!(wide_ports, cpu_ports);
    assert_eq!(traced(&wide), traced(&cpu));
    let head = |i: usize, snap: usize| sent[i].1[..sent[i].1.len().min(snap)].to_vec();
    let want = vec![
        (1, 1, TraceVerdict::Send(0b0001), 62, head(0, 64)),
        (2, 1, TraceVerdict::Drop(emu::DropReason::Runt as u8), 10, head(1, 64)),
        (3, 0, TraceVerdict::Drop(emu::DropReason::SamePort as u8), 63, head(2, 64)),
        (4, 2, TraceVerdict::Send(0b0010), 64, head(3, 64)),
        (5, 0, TraceVerdict::Send(0b1110), 65, head(4, 64)),
        (7, 3, TraceVerdict::Send(0b0100), 60, head(6, 20)),
    ];
    assert_eq!(traced(&cpu), want);
    assert_eq!(traced(&hw), want);
    let latencies: Vec<u32> = hw
        .iter()
        .filter_map(|m| match m {
            Message::Notification { notification: Notification::Trace { latency, .. }, .. } => Some(*latency),
            _ => None,
        })
        .collect();
    assert!(
        latencies.iter().all(|&c| (1..200).contains(&c)),
        "cycles from the first beat in to the verdict: {latencies:?}"
    );
}

/// The firewall's rules (a `Tcam`, loaded at start) and per-rule hit counters (an `Array` in
/// block RAM) through the hardware unit: the same entries as on the CPU, an array element
/// written between frames counts on from the value written.
#[test]
fn array_elements_and_tcam_rules_read_and_written_as_on_the_cpu() {
    use emu::craft;
    use Event::*;
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("fw.rules");
    std::fs::write(&rules, "-P DROP\n-p tcp --dport 80 -j ACCEPT\n-p udp --dport 53 -j ACCEPT\n-p icmp -j DROP\n")
        .unwrap();
    let mut config = Config::new();
    config.set("rules", rules.to_str().unwrap());
    let nf = Nf { desc: &firewall::DESCRIPTOR, config, mgmt: 1 };
    let symbols = symbols_of(&nf);
    let id = |name: &str| symbols.iter().position(|s| s.name == name).unwrap() as u16;
    let (rules_id, hits) = (id("rules"), id("hits"));
    let (a, b) = (emu::Ipv4Addr::new(10, 0, 0, 1), emu::Ipv4Addr::new(10, 0, 0, 2));
    let (ma, mb) = (emu::Mac::from_bytes([2, 0, 0, 0, 0, 1]), emu::Mac::from_bytes([2, 0, 0, 0, 0, 2]));
    let eth = |ip: Vec<u8>| craft::ethernet(mb, ma, 0x0800, &ip);
    let web = || {
        let seg = craft::TcpSegment { src_port: 4000, dst_port: 80, seq_no: 1, ack_no: 0, flags: Default::default() };
        eth(craft::tcp(a, b, seg, b"GET"))
    };
    let dns = || eth(craft::udp(a, 5353, b, 53, b"q"));
    let ping = || eth(craft::icmp_echo(a, b, true, 1, 1, b"p"));
    let key_len = (symbols[rules_id as usize].key_width as usize).div_ceil(8);
    let rule = |result: u8| {
        let mut e = vec![1];
        e.extend(vec![0; 2 * key_len]);
        e.push(result);
        e
    };
    let events = vec![
        Frames(vec![(0, web()), (0, web()), (0, dns()), (0, ping())]),
        Ask(1, Request::Read { id: hits, index: 0 }),
        Ask(2, Request::Read { id: hits, index: 1 }),
        Ask(3, Request::Read { id: hits, index: 2 }),
        Ask(4, Request::Read { id: rules_id, index: 0 }),
        Ask(5, Request::Read { id: rules_id, index: 2 }),
        Ask(
            6,
            Request::Lookup { id: rules_id, key: vec![0; (symbols[rules_id as usize].key_width as usize).div_ceil(8)] },
        ),
        Ask(7, Request::Write { id: hits, index: 0, entry: 40u64.to_be_bytes().to_vec() }),
        Frames(vec![(0, web())]),
        Ask(8, Request::Read { id: hits, index: 0 }),
        Ask(9, Request::Read { id: hits, index: 99 }),
        Ask(10, Request::Write { id: hits, index: 1, entry: vec![1; 9] }),
        // A rule written into the last slot: mask 0 matches what no other rule does.
        Ask(11, Request::Write { id: rules_id, index: 31, entry: rule(31 | firewall::ACCEPT_BIT) }),
        Frames(vec![(0, eth(craft::udp(a, 7, b, 9999, b"x")))]),
        Ask(12, Request::Read { id: hits, index: 31 }),
        Ask(13, Request::Read { id: rules_id, index: 31 }),
        Ask(14, Request::Write { id: rules_id, index: 31, entry: vec![0; 2 * key_len + 2] }),
        Frames(vec![(0, eth(craft::udp(a, 7, b, 9999, b"y")))]),
        Ask(15, Request::Read { id: hits, index: 31 }),
    ];
    let (cpu_ports, cpu) = on_cpu_of(&nf, &events);
    let (hw_ports, hw) = on_hardware_of(&nf, &events);
    assert_eq!(hw, cpu);
    assert_eq!(hw_ports, cpu_ports);
    let reply = |seq: u32| reply_to(&cpu, seq);
    assert_eq!(reply(1), (Status::Ok, Reply::Entry(2u64.to_be_bytes().to_vec())), "two web frames hit rule 0");
    assert_eq!(reply(3), (Status::Ok, Reply::Entry(1u64.to_be_bytes().to_vec())), "a ping hit rule 2");
    assert!(matches!(reply(4), (Status::Ok, Reply::Entry(e)) if e[0] == 1), "rule 0 is loaded");
    assert_eq!(reply(8), (Status::Ok, Reply::Entry(41u64.to_be_bytes().to_vec())));
    assert_eq!(reply(9).0, Status::BadIndex);
    assert_eq!(reply(10).0, Status::BadValue);
    assert_eq!(reply(11).0, Status::Ok);
    assert_eq!(reply(12), (Status::Ok, Reply::Entry(1u64.to_be_bytes().to_vec())), "the written rule decided");
    assert_eq!(reply(15), (Status::Ok, Reply::Entry(1u64.to_be_bytes().to_vec())), "cleared, it decides no more");
}

/// The statistics NF's flow table (a `HashTable` in block RAM, read through its second port),
/// size histogram (an `Array`) and counters through the hardware unit: every slot of the flow
/// table and every bucket answers as on the CPU, and a flow is found by its key.
#[test]
fn hash_table_slots_read_as_on_the_cpu() {
    use emu::craft;
    use Event::*;
    let nf = Nf { desc: &stats::DESCRIPTOR, config: Config::new(), mgmt: 1 };
    let symbols = symbols_of(&nf);
    let id = |name: &str| symbols.iter().position(|s| s.name == name).unwrap() as u16;
    let (flows, sizes) = (id("flows"), id("sizes"));
    let (ma, mb) = (emu::Mac::from_bytes([2, 0, 0, 0, 0, 1]), emu::Mac::from_bytes([2, 0, 0, 0, 0, 2]));
    let udp = |k: u8, len: usize| {
        let (a, b) = (emu::Ipv4Addr::new(10, 0, 0, k), emu::Ipv4Addr::new(10, 0, 1, 1));
        craft::ethernet(mb, ma, 0x0800, &craft::udp(a, 1000 + k as u16, b, 53, &vec![k; len]))
    };
    let mut events = vec![Frames((0..6u8).map(|k| (0, udp(k % 4, 20 + 100 * k as usize))).collect())];
    let slots = symbols[flows as usize].size;
    events.extend((0..slots).map(|i| Ask(100 + i, Request::Read { id: flows, index: i })));
    events.extend((0..8).map(|i| Ask(1000 + i, Request::Read { id: sizes, index: i })));
    let (cpu_ports, cpu) = on_cpu_of(&nf, &events);
    let found: Vec<(u32, Vec<u8>)> = (0..slots)
        .filter_map(|i| match reply_to(&cpu, 100 + i) {
            (Status::Ok, Reply::Entry(e)) if e[0] == 1 => Some((i, e)),
            _ => None,
        })
        .collect();
    assert_eq!(found.len(), 4, "four flows");
    // Look the flows up by key too.
    let key_len = (symbols[flows as usize].key_width as usize).div_ceil(8);
    events.extend(
        found
            .iter()
            .enumerate()
            .map(|(k, (_, e))| Ask(2000 + k as u32, Request::Lookup { id: flows, key: e[1..1 + key_len].to_vec() })),
    );
    let (cpu_ports2, cpu) = on_cpu_of(&nf, &events);
    assert_eq!(cpu_ports2, cpu_ports);
    let (hw_ports, hw) = on_hardware_of(&nf, &events);
    assert_eq!(hw_ports, cpu_ports);
    assert_eq!(hw.len(), cpu.len());
    for (h, c) in hw.iter().zip(&cpu) {
        assert_eq!(h, c);
    }
    for (k, (i, e)) in found.iter().enumerate() {
        assert_eq!(reply_to(&cpu, 2000 + k as u32), (Status::Ok, Reply::Found { index: *i, entry: e.clone() }));
    }
    // Writes: a flow's counters set, then counted on by its next frames; an entry moved to
    // another set or another way of its own, refused; a flow's slot emptied, then taken again
    // by its next frame. The hardware's answers, frames and table are the CPU's.
    let ways = 4;
    let (i0, e0) = found[0].clone();
    let (i1, e1) = found[1].clone();
    let mut set = e0.clone();
    set[1 + key_len..].iter_mut().for_each(|b| *b = 0x11);
    let mut empty = e1.clone();
    empty.iter_mut().for_each(|b| *b = 0);
    let write =
        |seq: u32, index: u32, entry: &Vec<u8>| Ask(seq, Request::Write { id: flows, index, entry: entry.clone() });
    let mut events = vec![events[0].clone()];
    events.extend([
        write(3000, i0, &set),
        write(3001, (i0 + ways) % slots, &e0),
        write(3002, i0 - i0 % ways + (i0 + 1) % ways, &e0),
        write(3003, i1, &empty),
        Frames((0..8u8).map(|k| (0, udp(k % 4, 20 + 10 * k as usize))).collect()),
    ]);
    events.extend((0..slots).map(|i| Ask(4000 + i, Request::Read { id: flows, index: i })));
    let (cpu_ports, cpu) = on_cpu_of(&nf, &events);
    let (hw_ports, hw) = on_hardware_of(&nf, &events);
    assert_eq!(hw_ports, cpu_ports);
    assert_eq!(hw, cpu);
    assert_eq!(reply_to(&cpu, 3000).0, Status::Ok);
    assert_eq!(reply_to(&cpu, 3001).0, Status::WrongSet, "another set");
    assert_eq!(reply_to(&cpu, 3002).0, Status::KeyElsewhere, "held by another way");
    assert_eq!(reply_to(&cpu, 3003).0, Status::Ok);
    let Reply::Entry(counted) = reply_to(&cpu, 4000 + i0).1 else { panic!("an entry") };
    assert!(counted[1 + key_len..] != set[1 + key_len..] && counted[..1 + key_len] == set[..1 + key_len], "counted on");
    let again = (0..slots)
        .any(|i| matches!(reply_to(&cpu, 4000 + i).1, Reply::Entry(e) if e[..1 + key_len] == e1[..1 + key_len]));
    assert!(again, "the emptied flow is back");
}

/// The NF with probes of tests/probed_nf: `emu::probe!` is a register and `emu::count!` a
/// counter in hardware, which the unit reads, watches and resets by the probe's name as the
/// CPU's does.
mod probed_nf;
use probed_nf::probed;

/// The descriptor of a fixture NF: module `m`, state `T`, no options and no tables.
macro_rules! fixture {
    ($name:literal, $summary:literal, $m:ident :: $t:ident) => {
        NfDescriptor {
            name: $name,
            summary: $summary,
            ports: $m::HLS_PORTS,
            window: $m::HLS_WINDOW,
            params: &[],
            build: |_| Ok(Box::new($m::$t::default())),
            hls_source: Some($m::HLS_SOURCE),
        }
    };
}

static PROBED: NfDescriptor = fixture!("probed", "probes under test", probed::Probed);

#[test]
fn probes_read_watched_and_reset_as_on_the_cpu() {
    use Event::*;
    let nf = Nf { desc: &PROBED, config: Config::new(), mgmt: 1 };
    let ipv4 = |ttl: u8, k: u8| {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0, 0, 46, 0, 0, 0, 0, ttl, 17, 0, 0];
        f.extend([10, 0, 0, k, 10, 0, 0, 2]);
        f.resize(60, 0);
        f
    };
    let events = vec![
        Ask(1, Request::Watch { slot: 1, id: 2, index: 0, op: WatchOp::Lt, operand: vec![10], record: false }),
        Frames(vec![(0, ipv4(64, 1)), (0, frame(0xff, 0x11, 1)), (0, ipv4(9, 7)), (0, ipv4(3, 9))]),
        Ask(2, Request::Read { id: 1, index: 0 }),
        Ask(3, Request::Read { id: 2, index: 0 }),
        Ask(4, Request::Read { id: 3, index: 0 }),
        Ask(5, Request::Write { id: 2, index: 0, entry: vec![1] }),
        Ask(6, Request::ResetCounters { id: Some(1) }),
        Ask(7, Request::Read { id: 1, index: 0 }),
        Ask(8, Request::Symbol { id: 3 }),
    ];
    let (cpu_ports, cpu) = on_cpu_of(&nf, &events);
    let (hw_ports, hw) = on_hardware_of(&nf, &events);
    assert_eq!(hw, cpu);
    assert_eq!(hw_ports, cpu_ports);
    assert_eq!(reply_to(&cpu, 2), (Status::Ok, Reply::Entry(1u64.to_be_bytes().to_vec())), "not_ipv4");
    assert_eq!(reply_to(&cpu, 3), (Status::Ok, Reply::Entry(vec![3])), "last_ttl");
    assert_eq!(reply_to(&cpu, 4), (Status::Ok, Reply::Entry(vec![10, 0, 0, 9])), "last_src");
    assert_eq!(reply_to(&cpu, 5).0, Status::ReadOnly);
    assert_eq!(reply_to(&cpu, 7), (Status::Ok, Reply::Entry(0u64.to_be_bytes().to_vec())));
    let hits: Vec<u64> = cpu
        .iter()
        .filter_map(|m| match m {
            Message::Notification { notification: Notification::WatchHit { packet_no, .. }, .. } => Some(*packet_no),
            _ => None,
        })
        .collect();
    assert_eq!(hits, [2], "last_ttl < 10 became true with the third frame, and stayed true");
}

/// yosys maps a hash table with the unit's read and write ports to block RAM: the write
/// shares the RAM's write port with the request's write-back (a second write port has no
/// mapping, and only a whole synthesis finds that out).
#[test]
fn yosys_maps_the_debug_hash_table_to_block_ram() {
    let d = design_of(&Nf { desc: &stats::DESCRIPTOR, config: Config::new(), mgmt: 1 }, true);
    let table = format!("{}_flows", d.top_name());
    let verilog = emu_hls::backend::rtl::verilog(&d).unwrap();
    let stats = emu_hls::hw::tools::yosys_synth_xilinx(&verilog, &table).unwrap_or_else(|e| panic!("{e}"));
    assert!(stats.count("RAMB") > 0, "the set words in block RAM: {stats:?}");
}

/// yosys reads the Verilog of every kind of table and value with the unit built in (Verilator
/// accepts constructs yosys refuses: a part select of a part select was one).
#[test]
fn yosys_reads_the_debug_verilog_of_nfs_with_every_table() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("fw.rules");
    std::fs::write(&rules, "-P DROP\n-p tcp --dport 80 -j ACCEPT\n").unwrap();
    let mut fw = Config::new();
    fw.set("rules", rules.to_str().unwrap());
    let nfs = [
        Nf { desc: &firewall::DESCRIPTOR, config: fw, mgmt: 1 },
        Nf { desc: &stats::DESCRIPTOR, config: Config::new(), mgmt: 1 },
        Nf { desc: &PROBED, config: Config::new(), mgmt: 1 },
        Nf { desc: &QUEUED, config: Config::new(), mgmt: 1 },
        Nf { desc: &RECENT, config: Config::new(), mgmt: 1 },
        switch(),
    ];
    for nf in nfs {
        let d = design_of(&nf, true);
        let path = dir.path().join(format!("{}.v", d.top_name()));
        std::fs::write(&path, emu_hls::backend::rtl::verilog(&d).unwrap()).unwrap();
        let script = format!("read_verilog -sv {}; hierarchy -check -top {}", path.display(), d.top_name());
        let out =
            std::process::Command::new("yosys").args(["-q", "-p", &script]).output().expect("yosys (scripts/setup.sh)");
        assert!(out.status.success(), "{}: {}", nf.desc.name, String::from_utf8_lossy(&out.stderr));
    }
}

/// 60-byte IPv4/UDP frames into port 0 with these TTLs, which the queue and LRU fixtures key on.
fn ttl_frames(ttls: &[u8]) -> Event {
    let frame = |ttl: u8| {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0, 0, 46, 0, 0, 0, 0, ttl, 17, 0, 0];
        f.extend([10, 0, 0, 1, 10, 0, 0, 2]);
        f.resize(60, 0);
        f
    };
    Event::Frames(ttls.iter().map(|&t| (0, frame(t))).collect())
}

/// An NF with a queue, the fixture of `queue_places_read_as_on_the_cpu`: each IPv4 frame's TTL
/// joins the queue (refused when it is full); a TTL of 1 takes the front one out.
#[emu::nf(ports = 2, window = 64)]
pub mod queued {
    use emu::prelude::*;

    #[derive(Default)]
    pub struct Queued {
        pub ttls: Queue<u8, 5>,
    }

    impl NetworkFunction for Queued {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            if pkt.ethernet().ethertype() != 0x0800 {
                return Action::Drop(DropReason::Unsupported);
            }
            let ttl = pkt.ipv4().ttl();
            if ttl == 1 {
                let _ = self.ttls.pop();
            } else {
                let _ = self.ttls.push(ttl);
            }
            Action::Forward(meta.in_port ^ 1)
        }
    }
}

static QUEUED: NfDescriptor = fixture!("queued", "a queue under test", queued::Queued);

/// A queue's places, counted from its front, read through the queue's second RAM port as the
/// CPU reads them: full, then after its front has moved past the end of its ring (5 words).
#[test]
fn queue_places_read_as_on_the_cpu() {
    use Event::*;
    let nf = Nf { desc: &QUEUED, config: Config::new(), mgmt: 1 };
    let mut events = vec![ttl_frames(&[10, 11, 12, 13, 14, 15, 16])];
    events.extend((0..6).map(|i| Ask(10 + i, Request::Read { id: 0, index: i })));
    events.push(ttl_frames(&[1, 1, 20, 21, 1]));
    events.extend((0..6).map(|i| Ask(20 + i, Request::Read { id: 0, index: i })));
    events.push(Ask(30, Request::Write { id: 0, index: 0, entry: vec![7] }));
    events.push(Ask(31, Request::Lookup { id: 0, key: vec![13] }));
    let (cpu_ports, cpu) = on_cpu_of(&nf, &events);
    let (hw_ports, hw) = on_hardware_of(&nf, &events);
    assert_eq!(hw, cpu);
    assert_eq!(hw_ports, cpu_ports);
    let places = |from: u32| -> Vec<(Status, Reply)> { (from..from + 6).map(|seq| reply_to(&cpu, seq)).collect() };
    let entry = |v: u8| (Status::Ok, Reply::Entry(vec![v]));
    let past = reply_to(&cpu, 15);
    assert_eq!(past.0, Status::BadIndex);
    assert_eq!(places(10), [entry(10), entry(11), entry(12), entry(13), entry(14), past.clone()], "full");
    assert_eq!(places(20), [entry(13), entry(14), entry(20), entry(21), entry(0), past], "wrapped, one place free");
    assert_eq!(reply_to(&cpu, 30).0, Status::ReadOnly);
    assert_eq!(reply_to(&cpu, 31).0, Status::BadValue);
}

/// An NF with two LRU tables, the fixture of `lru_slots_written_as_on_the_cpu` and
/// `lru_set_slots_written_as_on_the_cpu`: an IPv4 frame with a TTL below 100 inserts (TTL,
/// protocol) into both; one with a TTL of 100 or more gets TTL − 100 from both, which makes it
/// the most recently used.
#[emu::nf(ports = 2, window = 64)]
pub mod recent {
    use emu::prelude::*;

    #[derive(Default)]
    pub struct Recent {
        pub seen: Lru<u8, u8, 4>,
        /// In 2 sets of 4 ways, in block RAM.
        pub paired: Lru<u8, u8, 8, 4>,
    }

    impl NetworkFunction for Recent {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            if pkt.ethernet().ethertype() != 0x0800 {
                return Action::Drop(DropReason::Unsupported);
            }
            let ip = pkt.ipv4();
            let ttl = ip.ttl();
            if ttl < 100 {
                let _ = self.seen.insert(ttl, ip.protocol());
                let _ = self.paired.insert(ttl, ip.protocol());
            } else {
                let _ = self.seen.get(ttl - 100);
                let _ = self.paired.get(ttl - 100);
            }
            Action::Forward(meta.in_port ^ 1)
        }
    }
}

static RECENT: NfDescriptor = fixture!("recent", "an LRU under test", recent::Recent);

/// Writes to an LRU's slots move its ages as the CPU's do: the entries inserted after them
/// evict the same ones on both targets.
#[test]
fn lru_slots_written_as_on_the_cpu() {
    use Event::*;
    let nf = Nf { desc: &RECENT, config: Config::new(), mgmt: 1 };
    let write = |seq: u32, index: u32, entry: &[u8]| Ask(seq, Request::Write { id: 0, index, entry: entry.to_vec() });
    let mut events = vec![
        ttl_frames(&[10, 11, 12]),
        write(1, 3, &[1, 50, 7]),
        write(2, 1, &[1, 60, 8]),
        write(3, 0, &[0, 0, 0]),
        write(4, 2, &[1, 60, 9]),
        write(5, 4, &[1, 70, 9]),
        ttl_frames(&[20, 150, 21, 22]),
    ];
    events.extend((0..4).map(|i| Ask(10 + i, Request::Read { id: 0, index: i })));
    events.push(Ask(20, Request::Lookup { id: 0, key: vec![50] }));
    let (cpu_ports, cpu) = on_cpu_of(&nf, &events);
    let (hw_ports, hw) = on_hardware_of(&nf, &events);
    assert_eq!(hw, cpu);
    assert_eq!(hw_ports, cpu_ports);
    assert_eq!(reply_to(&cpu, 1).0, Status::Ok);
    assert_eq!(reply_to(&cpu, 4).0, Status::KeyElsewhere, "60 is in slot 1");
    assert_eq!(reply_to(&cpu, 5).0, Status::BadIndex);
    // 20 fills the emptied slot 0; the get makes 50 the most recent, so 21 evicts 12 (slot 2)
    // and 22 evicts 60 (slot 1), the ages the writes left deciding both.
    let slots: Vec<(Status, Reply)> = (10..14).map(|seq| reply_to(&cpu, seq)).collect();
    let entry = |k: u8| (Status::Ok, Reply::Entry(vec![1, k, 17]));
    assert_eq!(slots, [entry(20), entry(22), entry(21), (Status::Ok, Reply::Entry(vec![1, 50, 7]))]);
    assert_eq!(reply_to(&cpu, 20), (Status::Ok, Reply::Found { index: 3, entry: vec![1, 50, 7] }));
}

/// Writes to the slots of an LRU in sets move its set's ages as the CPU's do, and a key is
/// refused in the other set or in a second way of its own: the entries inserted after the
/// writes evict the same ones on both targets.
#[test]
fn lru_set_slots_written_as_on_the_cpu() {
    use Event::*;
    // Keys by set (the low bit of the CRC-32 of the key's byte).
    let keys = |set: u32| (1..100u8).filter(move |k| emu::state::crc32(&[*k]) & 1 == set);
    let (a, b): (Vec<u8>, Vec<u8>) = (keys(0).take(8).collect(), keys(1).take(2).collect());
    let nf = Nf { desc: &RECENT, config: Config::new(), mgmt: 1 };
    let write = |seq: u32, index: u32, entry: &[u8]| Ask(seq, Request::Write { id: 1, index, entry: entry.to_vec() });
    let mut events = vec![
        ttl_frames(&[a[0], a[1], a[2], b[0]]),
        write(1, 3, &[1, a[3], 7]),
        write(2, 1, &[1, a[4], 8]),
        write(3, 4, &[1, a[5], 9]),
        write(4, 2, &[1, a[3], 9]),
        write(5, 0, &[0, 0, 0]),
        write(6, 4 + 2, &[1, b[1], 5]),
        ttl_frames(&[a[6], 100 + a[4], a[7], a[0]]),
    ];
    events.extend((0..8).map(|i| Ask(10 + i, Request::Read { id: 1, index: i })));
    events.push(Ask(20, Request::Lookup { id: 1, key: vec![a[3]] }));
    let (cpu_ports, cpu) = on_cpu_of(&nf, &events);
    let (hw_ports, hw) = on_hardware_of(&nf, &events);
    assert_eq!(hw, cpu);
    assert_eq!(hw_ports, cpu_ports);
    assert_eq!(reply_to(&cpu, 1).0, Status::Ok);
    assert_eq!(reply_to(&cpu, 3).0, Status::WrongSet, "the key's set is 0, slot 4 is in set 1");
    assert_eq!(reply_to(&cpu, 4).0, Status::KeyElsewhere, "a[3] is in slot 3");
    assert_eq!(reply_to(&cpu, 6).0, Status::Ok);
    // Set 0 after the writes, most recent first: a[4] (slot 1), a[3] (slot 3), a[2] (slot 2);
    // slot 0 emptied. a[6] fills slot 0; the get makes a[4] the most recent; so a[7] evicts
    // a[2] (slot 2) and a[0] evicts a[3] (slot 3).
    let slot = |seq: u32| match reply_to(&cpu, seq) {
        (Status::Ok, Reply::Entry(e)) if e[0] == 1 => Some(e[1]),
        _ => None,
    };
    assert_eq!((10..14).map(slot).collect::<Vec<_>>(), [Some(a[6]), Some(a[4]), Some(a[7]), Some(a[0])]);
    assert_eq!((14..18).map(slot).collect::<Vec<_>>(), [Some(b[0]), None, Some(b[1]), None]);
    assert_eq!(reply_to(&cpu, 20).0, Status::NoSuchKey);
}

/// The in-band path of the hardware: the script as control frames into the management port
/// (those at the break passing the frames it holds) gives the CPU's answers and frames; a
/// control frame from another port is ordinary traffic; a request the hardware does not serve
/// in band is answered `unsupported`, a request of a bad version `bad_version`.
#[test]
fn in_band_the_script_gives_the_same_answers_as_on_the_cpu() {
    use Event::*;
    let mut events = script();
    let stray = control(60, &Request::RegRead { addr: 0 });
    events.push(Frames(vec![(0, stray.clone())]));
    let (cpu_ports, cpu) = on_cpu(&events);
    let (hw_ports, hw) = on_hardware_in_band(&switch(), &events);
    assert_eq!(hw, cpu);
    assert_eq!(hw_ports, cpu_ports);
    assert!(cpu.iter().any(|m| matches!(m, Message::Notification { .. })), "the watch fired");
    assert!(hw_ports[1].contains(&stray), "a control frame from port 0 is flooded like any frame");
    // The hardware answers in band only reg_read and reg_write.
    let mut bench = bench_of(&switch());
    let hello = control(70, &Request::Hello);
    let mut bad = control(71, &Request::RegRead { addr: 0 });
    bad[14] = 2;
    for f in [&hello, &bad] {
        bench.send(f, MGMT);
    }
    bench.run();
    let replies: Vec<(u32, Status)> = bench
        .sent
        .iter()
        .filter_map(|(_, f)| match decode(emu_debug::protocol::payload(f)?) {
            Ok(Message::Reply { seq, status, .. }) => Some((seq, status)),
            _ => None,
        })
        .collect();
    assert_eq!(replies, [(70, Status::Unsupported), (71, Status::BadVersion)]);
}

/// A network namespace and a veth pair made by a test, removed when dropped (even when the test
/// fails).
struct Veths {
    netns: String,
    outer: String,
}

impl Drop for Veths {
    fn drop(&mut self) {
        let _ = std::process::Command::new("ip").args(["link", "del", &self.outer]).status();
        let _ = std::process::Command::new("ip").args(["netns", "del", &self.netns]).status();
    }
}

fn ip(args: &[&str]) {
    let o = std::process::Command::new("ip").args(args).output().unwrap();
    assert!(o.status.success(), "ip {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// `emu dbg IFACE --hardware NF` on a real interface (root: a veth pair made by the test, its
/// inner end in a namespace of the test's where `emu dbg` runs): the test bridges the outer end
/// into the Verilator model's management port, control frames in and replies out, so the
/// client talks to the generated hardware in band; its answers are those the frames call for.
#[test]
fn emu_dbg_reaches_the_hardware_in_band_on_an_interface() {
    let uid = std::process::Command::new("id").arg("-u").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&uid.stdout).trim(), "0", "this test makes a veth pair: run it as root");
    let tag = std::process::id() % 100_000;
    let veths = Veths { netns: format!("emudbg{tag}"), outer: format!("edo{tag}") };
    let inner = format!("edi{tag}");
    ip(&["netns", "add", &veths.netns]);
    ip(&["link", "add", &veths.outer, "type", "veth", "peer", "name", &inner, "netns", &veths.netns]);
    ip(&["link", "set", &veths.outer, "up"]);
    ip(&["netns", "exec", &veths.netns, "ip", "link", "set", &inner, "up"]);
    let mut bench = bench_of(&switch());
    // Two broadcasts: two floods, two hosts learned.
    bench.send(&frame(0xff, 0x11, 1), 0);
    bench.send(&frame(0xff, 0x12, 2), 1);
    bench.run();
    let sock = emu_cpu::EtherSocket::open(&veths.outer, emu_debug::protocol::ETHERTYPE).unwrap();
    let script = "read floods; read mac_table[key=02:00:00:00:00:12]; write floods = 7; read floods; status";
    let mut dbg = std::process::Command::new("ip")
        .args(["netns", "exec", &veths.netns, env!("CARGO_BIN_EXE_emu"), "dbg", &inner])
        .args(["--hardware", "learning-switch", "--exec", script])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut replies = 0;
    while dbg.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "emu dbg did not finish");
        while let Some(f) = sock.receive(std::time::Duration::from_millis(1)).unwrap() {
            bench.send(&f, MGMT);
        }
        for _ in 0..200 {
            bench.cycle(None);
        }
        let (out, keep): (Vec<_>, Vec<_>) =
            bench.sent.drain(..).partition(|(mask, f)| *mask == 1 << MGMT && emu_debug::protocol::payload(f).is_some());
        bench.sent = keep;
        for (_, f) in out {
            sock.send(&f).unwrap();
            replies += 1;
        }
    }
    let o = dbg.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "floods = 2", "{stdout}");
    assert!(lines[1].starts_with("mac_table[1] = 02:00:00:00:00:12"), "{stdout}");
    assert_eq!(lines[2..4], ["floods = 7", "floods = 7"], "written, then read back: {stdout}");
    assert!(lines[4].starts_with("running, 0 held"), "{stdout}");
    assert!(replies > 20, "every access is a request and a reply: {replies}");
    drop(veths);
}

//! `emu::probe!` and `emu::count!` through the CPU target's debug unit: each is a symbol after
//! the state's fields (a probe, or a counter), read in band while packets flow, watched, reset;
//! a probe is read only.

use emu_cpu::{DebugOptions, Debugger, Frame, MemoryDevice, Runner};
use emu_debug::protocol::{decode, encode, Message, Notification, Reply, Request, Status, SymbolKind, WatchOp};

#[emu::nf(ports = 3, window = 64)]
pub mod ttl_probe {
    use emu::prelude::*;

    #[derive(Default)]
    pub struct TtlProbe {
        pub frames: Counter,
    }

    impl NetworkFunction for TtlProbe {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            self.frames.inc();
            if pkt.ethernet().ethertype() != 0x0800 {
                emu::count!(not_ipv4);
                return Action::Drop(DropReason::Unsupported);
            }
            let ip = pkt.ipv4();
            emu::probe!(last_ttl, ip.ttl());
            emu::probe!(last_src, ip.src());
            note_port(meta.in_port);
            Action::Flood
        }
    }

    fn note_port(port: u8) {
        emu::probe!(last_port, port);
        emu::count!(ipv4);
    }
}

const MGMT: u8 = 2;

fn ipv4(ttl: u8, src: [u8; 4]) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0, 0, 46, 0, 0, 0, 0, ttl, 17, 0, 0]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&[10, 0, 0, 2]);
    f.resize(60, 0);
    f
}

fn arp() -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    f.resize(60, 0);
    f
}

fn control(seq: u32, request: Request) -> Frame {
    Frame::new(
        MGMT,
        0,
        emu_debug::protocol::frame([0xff; 6], [2, 0, 0, 0, 0, 0x99], &encode(&Message::Request { seq, request })),
    )
}

/// Runs `frames` through the NF with a unit on the management port: every message the unit
/// sent, in order.
fn run(frames: Vec<Frame>) -> Vec<Message> {
    let runner = Runner::new(Box::new(ttl_probe::TtlProbe::default()), 3, 64);
    let mut runner =
        runner.with_debugger(Debugger::new("ttl_probe", &DebugOptions { port: Some(MGMT), ..DebugOptions::default() }).unwrap());
    let mut device = MemoryDevice::new(frames);
    runner.run(&mut device, &mut Vec::new()).unwrap();
    device
        .output
        .iter()
        .filter(|o| o.port == MGMT)
        .filter_map(|o| emu_debug::protocol::payload(&o.data).map(|m| decode(m).expect("the unit's message")))
        .collect()
}

fn reply(messages: &[Message], seq: u32) -> (Status, Reply) {
    messages
        .iter()
        .find_map(|m| match m {
            Message::Reply { seq: s, status, reply, .. } if *s == seq => Some((*status, reply.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no reply to {seq} in {messages:?}"))
}

#[test]
fn probes_are_symbols_after_the_fields_read_while_packets_flow() {
    let frames = vec![
        control(1, Request::Hello),
        control(2, Request::Symbol { id: 1 }),
        control(3, Request::Symbol { id: 2 }),
        control(4, Request::Symbol { id: 3 }),
        control(5, Request::Symbol { id: 5 }),
        Frame::new(0, 1, ipv4(64, [10, 0, 0, 1])),
        Frame::new(1, 2, arp()),
        Frame::new(1, 3, ipv4(7, [10, 0, 0, 9])),
        control(6, Request::Read { id: 1, index: 0 }),
        control(7, Request::Read { id: 2, index: 0 }),
        control(8, Request::Read { id: 3, index: 0 }),
        control(9, Request::Read { id: 4, index: 0 }),
        control(10, Request::Read { id: 5, index: 0 }),
        control(11, Request::Read { id: 0, index: 0 }),
        control(12, Request::Write { id: 2, index: 0, entry: vec![1] }),
        control(13, Request::Read { id: 2, index: 1 }),
        control(14, Request::ResetCounters { id: Some(5) }),
        control(15, Request::Read { id: 5, index: 0 }),
        control(16, Request::Symbol { id: 6 }),
    ];
    let m = run(frames);
    let Reply::Hello(h) = reply(&m, 1).1 else { panic!("hello") };
    // frames, then not_ipv4, last_ttl, last_src, last_port, ipv4 (first appearance: process,
    // then note_port), then the runner's 4 automatic counters.
    assert_eq!(h.symbols, 1 + 5 + 4);
    let symbol = |seq| match reply(&m, seq).1 {
        Reply::Symbol(s) => (s.name, s.kind, s.value_width, s.value_format),
        other => panic!("{other:?}"),
    };
    assert_eq!(symbol(2), ("not_ipv4".into(), SymbolKind::Counter.code(), 64, 0));
    assert_eq!(symbol(3), ("last_ttl".into(), SymbolKind::Probe.code(), 8, 0));
    assert_eq!(symbol(4), ("last_src".into(), SymbolKind::Probe.code(), 32, 2), "an Ipv4Addr shows as one");
    assert_eq!(symbol(5), ("ipv4".into(), SymbolKind::Counter.code(), 64, 0));
    assert_eq!(symbol(16).1, SymbolKind::AutoCounter.code(), "the runner's counters come after the probes");
    assert_eq!(reply(&m, 6), (Status::Ok, Reply::Entry(1u64.to_be_bytes().to_vec())));
    assert_eq!(reply(&m, 7), (Status::Ok, Reply::Entry(vec![7])), "the last IPv4 packet's TTL");
    assert_eq!(reply(&m, 8), (Status::Ok, Reply::Entry(vec![10, 0, 0, 9])));
    assert_eq!(reply(&m, 9), (Status::Ok, Reply::Entry(vec![1])), "in port of the last IPv4 packet");
    assert_eq!(reply(&m, 10), (Status::Ok, Reply::Entry(2u64.to_be_bytes().to_vec())));
    assert_eq!(reply(&m, 11), (Status::Ok, Reply::Entry(3u64.to_be_bytes().to_vec())), "the field still reads");
    assert_eq!(reply(&m, 12).0, Status::ReadOnly, "only the NF writes a probe");
    assert_eq!(reply(&m, 13).0, Status::BadIndex);
    assert_eq!(reply(&m, 14).0, Status::Ok);
    assert_eq!(reply(&m, 15), (Status::Ok, Reply::Entry(0u64.to_be_bytes().to_vec())), "a count resets");
}

#[test]
fn a_watch_on_a_probe_fires_when_its_condition_becomes_true() {
    let frames = vec![
        control(1, Request::Watch { slot: 0, id: 2, index: 0, op: WatchOp::Lt, operand: vec![8], record: true }),
        Frame::new(0, 1, ipv4(64, [10, 0, 0, 1])),
        Frame::new(0, 2, ipv4(5, [10, 0, 0, 5])),
        Frame::new(0, 3, ipv4(3, [10, 0, 0, 3])),
        Frame::new(0, 4, ipv4(9, [10, 0, 0, 4])),
        Frame::new(0, 5, ipv4(2, [10, 0, 0, 2])),
    ];
    let m = run(frames);
    assert_eq!(reply(&m, 1).0, Status::Ok);
    let hits: Vec<(u64, Vec<u8>)> = m
        .iter()
        .filter_map(|x| match x {
            Message::Notification { notification: Notification::WatchHit { packet_no, value, .. }, .. } => {
                Some((*packet_no, value.clone()))
            }
            _ => None,
        })
        .collect();
    // TTL 5 makes `last_ttl < 8` true; 3 keeps it true (no second hit); 9 makes it false; 2
    // true again.
    assert_eq!(hits, vec![(1, vec![5]), (4, vec![2])], "packets numbered from 0");
}

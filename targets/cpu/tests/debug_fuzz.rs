//! Fuzzed control frames on the management port never crash the runner, never change the NF's
//! state or what leaves the data ports, and each one that carries a sequence number gets exactly
//! one answer, on the management port.

use emu::NetworkFunction;
use emu_cpu::{DebugOptions, Debugger, Frame, MemoryDevice, Runner};
use emu_debug::protocol::{decode, encode, Message, Request};
use learning_switch::LearningSwitch;
use proptest::prelude::*;

const MGMT: u8 = 2;

fn data_frame(k: u8) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, k % 3, 2, 0, 0, 0, 0, 0x10 + k % 5, 0x88, 0xb6];
    f.resize(60, k);
    f
}

fn control_frame(payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[2, 0, 0, 0, 0, 0x99, 0x88, 0xb5]);
    f.extend_from_slice(payload);
    f.resize(f.len().max(60), 0);
    f
}

/// A control payload: random bytes, or a valid read or hello with some bytes changed.
fn payload() -> impl Strategy<Value = Vec<u8>> {
    let valid = prop_oneof![
        Just(encode(&Message::Request { seq: 5, request: Request::Hello })),
        (0u16..8, 0u32..20)
            .prop_map(|(id, index)| encode(&Message::Request { seq: 6, request: Request::Read { id, index } })),
    ];
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..40),
        (valid, proptest::collection::vec((0usize..24, any::<u8>()), 0..4)).prop_map(|(mut p, edits)| {
            for (i, b) in edits {
                if let Some(x) = p.get_mut(i) {
                    *x = b;
                }
            }
            p
        }),
    ]
}

/// Everything the NF's state holds, entry by entry.
fn state(nf: &mut LearningSwitch) -> Vec<Option<Vec<u8>>> {
    nf.elements().iter().flat_map(|(_, e)| (0..e.size()).map(|i| e.read(i)).collect::<Vec<_>>()).collect()
}

fn run(frames: Vec<Frame>, debug: bool) -> (Vec<(u8, Vec<u8>)>, Vec<Option<Vec<u8>>>) {
    let mut runner = Runner::new(Box::new(LearningSwitch::default()), 3, 64);
    if debug {
        runner = runner
            .with_debugger(Debugger::new("learning_switch", &DebugOptions { port: Some(MGMT), ..DebugOptions::default() }).unwrap());
    }
    let mut device = MemoryDevice::new(frames);
    runner.run(&mut device, &mut Vec::new()).unwrap();
    let out = device.output.into_iter().map(|o| (o.port, o.data)).collect();
    let mut nf = runner.into_nf();
    (out, state(&mut nf))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn fuzzed_control_frames_change_nothing(
        data in proptest::collection::vec(any::<u8>(), 1..20),
        control in proptest::collection::vec((0usize..20, payload()), 1..12),
    ) {
        let mut with = Vec::new();
        let mut expected_replies = 0;
        for (k, d) in data.iter().enumerate() {
            for (at, p) in &control {
                if *at == k {
                    // What the unit sees: the payload with the frame's padding.
                    let frame = control_frame(p);
                    let p = &frame[14..];
                    // A request that may change state or hold packets is not fuzz of this test.
                    let changes = matches!(decode(p), Ok(Message::Request { request, .. }) if !matches!(request, Request::Hello | Request::Read { .. } | Request::Symbol { .. } | Request::Counters { .. } | Request::Status | Request::Lookup { .. }));
                    prop_assume!(!changes);
                    let answered = match decode(p) {
                        Ok(Message::Request { .. }) => true,
                        Ok(_) => false,
                        Err(e) => e.seq.is_some(),
                    };
                    expected_replies += answered as usize;
                    with.push(Frame::new(MGMT, 0, frame.clone()));
                }
            }
            with.push(Frame::new(*d % 2, 0, data_frame(*d)));
        }
        let without: Vec<Frame> = with.iter().filter(|f| f.port != MGMT).cloned().collect();
        let (out_with, state_with) = run(with, true);
        let (out_without, state_without) = run(without, false);
        prop_assert_eq!(state_with, state_without);
        let replies: Vec<_> = out_with.iter().filter(|(_, f)| f[12..14] == [0x88, 0xb5] && f[6..12] == emu_cpu::debug::UNIT_MAC).collect();
        prop_assert_eq!(replies.len(), expected_replies);
        prop_assert!(replies.iter().all(|(port, f)| *port == MGMT && f[..6] == [2, 0, 0, 0, 0, 0x99]));
        let data_out: Vec<_> = out_with.into_iter().filter(|(_, f)| f[6..12] != emu_cpu::debug::UNIT_MAC).collect();
        prop_assert_eq!(data_out, out_without);
    }
}

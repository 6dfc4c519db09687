//! The learning switch on seeded random traffic: the CPU switch and IR tiers side by side.
//! Used by the hand-built IR tests and the lowering tests alike.

use super::Rng;
use emu_core::{Action, Mac, Meta, NetworkFunction, Packet, Scalar};
use emu_hls::interp::{self, State};
use emu_hls::ir::{BitVec, Function};
use learning_switch::LearningSwitch;

/// The switch's header window.
pub const WINDOW: usize = learning_switch::HLS_WINDOW;

fn host(i: u64) -> [u8; 6] {
    [2, 0, 0, 0, 0x10, i as u8]
}

/// A random frame and the port it arrives on. `homes` is where each host usually sits.
pub fn traffic(rng: &mut Rng, homes: &mut [u8; 24]) -> (Vec<u8>, u8) {
    let dst: [u8; 6] = match rng.below(10) {
        0 => [0xff; 6],
        1 => [0x01, 0x00, 0x5e, 0, 0, rng.below(4) as u8],
        2 => [2, 0, 0, 0, 0x20, rng.below(200) as u8], // never a source: unknown
        _ => host(rng.below(24)),
    };
    let s = rng.below(24) as usize;
    let src = if rng.percent(3) { [0x01, 0x80, 0xc2, 0, 0, 0] } else { host(s as u64) };
    if rng.percent(4) {
        homes[s] = rng.below(4) as u8; // the host moved
    }
    let in_port = if rng.percent(90) { homes[s] } else { rng.below(4) as u8 };
    let mut f = dst.to_vec();
    f.extend_from_slice(&src);
    f.extend_from_slice(&[0x88, 0xb5]);
    let len = match rng.below(20) {
        0 => rng.below(14) as usize, // runt: part of the addresses missing
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
    let mut seen = [0usize; 4]; // forward, flood, same-port drop, other
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
            let what = format!("seed {seed:#x}, frame {n} ({name} IR), in_port {in_port}, in {}", super::hex(&frame));
            let mut ir_frame = frame.clone();
            let got = interp::run(f, state, &mut Packet::new(&mut ir_frame, WINDOW), &meta).unwrap();
            assert_eq!(got, want, "{what}: action");
            assert_eq!(ir_frame, cpu_frame, "{what}: frame");
            check_state(&nf, state, &what);
        }
    }
    seen
}

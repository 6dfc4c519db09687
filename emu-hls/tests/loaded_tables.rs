//! Tables filled by the constructor (`NfDescriptor::initial_state`) on the IR and hardware
//! tiers: a `Cam`'s entries, as the CPU's `Cam` holds them after the inserts, are in the IR
//! interpreter's state and in the hardware's registers from power-up, so frames that look them
//! up hit on both, and both go on to fill and evict alike; what cannot be loaded is refused
//! with a message.

mod common;

use common::Rng;
use emu_core::{check_frame, Cam, Counter, ElementImage, HashTable, Meta, NetworkFunction, Packet, Verdict};
use emu_hls::backend::model::{Driver, Outcome, Pacing};
use emu_hls::backend::top::Sume64;
use emu_hls::backend::{rtl, Design, HwConfig};
use emu_hls::initial::Initial;
use emu_hls::ir::BitVec;

const NF: &str = include_str!("nf/static_table.rs");

/// Keys 0x0a000001…: the first `LOADED` of them are loaded, the others are not.
fn key(i: u64) -> u32 {
    0x0a00_0001 + i as u32
}

const LOADED: u64 = 4;

/// The CPU's `table` after the constructor's inserts.
fn cpu_table() -> Cam<u32, u16, 6> {
    let mut cam = Cam::new();
    for i in 0..LOADED {
        cam.insert(key(i), 0x100 * i as u16 + 0x42);
    }
    cam
}

/// What the descriptor hands over: every element's image.
fn entries() -> Vec<ElementImage> {
    vec![ElementImage::of("table", &cpu_table()), ElementImage::of("misses", &Counter::<64>::new())]
}

/// The IR interpreter as an NF, loaded as the `ir` tier loads it.
struct Interp {
    func: emu_hls::ir::Function,
    state: emu_hls::interp::State,
}

impl NetworkFunction for Interp {
    fn process(&mut self, pkt: &mut Packet<'_>, meta: &Meta) -> emu_core::Action {
        emu_hls::interp::run(&self.func, &mut self.state, pkt, meta).expect("the interpreter runs the NF")
    }
}

fn outcome(nf: &mut dyn NetworkFunction, frame: &[u8], in_port: u8) -> Outcome {
    if let Err(r) = check_frame(frame, 1518) {
        return Outcome::Dropped(r);
    }
    let mut f = frame.to_vec();
    let meta = Meta { in_port, len: f.len() as u16, timestamp: 0 };
    match nf.process(&mut Packet::new(&mut f, 64), &meta).resolve(in_port, 4) {
        Verdict::Drop(r) => Outcome::Dropped(r),
        Verdict::Send(m) => Outcome::Sent(m.0, f),
    }
}

/// Frames of op `op` on key `k`: lookups first (of every key), then random ops.
fn frame(op: u8, k: u32, v: u16) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x88, 0xb6, op];
    f.extend(k.to_be_bytes());
    f.extend(v.to_be_bytes());
    f.extend([0; 40]);
    f
}

#[test]
fn a_loaded_cam_is_the_same_on_the_ir_and_the_hardware() {
    let func = emu_hls::compile(NF, 64).unwrap();
    let mut config = HwConfig::new(64);
    config.state = entries();
    let d = Design::new(func.clone(), config).unwrap();
    let mut state = emu_hls::interp::State::new(&func);
    Initial::from_images(&func, &entries()).unwrap().load_into(&func, &mut state).unwrap();
    let mut ir = Interp { func, state };
    let mut rng = Rng(0x5eed_ca11);
    let mut input: Vec<(Vec<u8>, u8)> = (0..8).map(|i| (frame(0, key(i), 0), 1)).collect();
    input.extend((4..7).map(|i| (frame(2, key(i), 0x7000 + i as u16), 1)));
    input.extend(
        (0..400).map(|_| (frame(rng.below(4) as u8, key(rng.below(10)), rng.next() as u16), rng.below(4) as u8)),
    );
    let want: Vec<Outcome> = input.iter().map(|(f, p)| outcome(&mut ir, f, *p)).collect();
    // The loaded keys hit before anything was inserted; the others miss.
    for (i, w) in want[..8].iter().enumerate() {
        let hit = matches!(w, Outcome::Sent(_, f) if f[21..23] == (0x100 * i as u16 + 0x42).to_be_bytes());
        assert_eq!(hit, (i as u64) < LOADED, "lookup {i}: {w:?}");
    }
    // Two inserts fill slots 4 and 5; the third evicts slot 0, the first entry loaded.
    let third = &want[10];
    assert!(matches!(third, Outcome::Sent(_, o) if o[21] == key(0) as u8 && o[22] == 0x42), "{third:?}");
    let got = Driver::new(Sume64::new(&d).unwrap(), 8, Pacing { valid_percent: 70, ready_percent: 70, seed: 5 })
        .run(&input)
        .unwrap_or_else(|h| panic!("the hardware hung: {h:?}"));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "frame {i}: {}", common::hex(&input[i].0));
    }
    let v = rtl::verilog(&d).unwrap();
    assert!(v.contains("32'ha000001"), "the first entry's key is in the Verilog");
    emu_hls::hw::tools::verilator_lint_design(&v, &d.top_name(), true).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn what_cannot_be_loaded_is_refused() {
    let func = emu_hls::compile(NF, 64).unwrap();
    let design = |state: Vec<ElementImage>| {
        let mut c = HwConfig::new(64);
        c.state = state;
        Design::new(func.clone(), c).err().unwrap()
    };
    let mut removed = cpu_table();
    removed.remove(key(1));
    assert_eq!(
        design(vec![ElementImage::of("table", &removed)]),
        "`table`: slot 2 is filled after an empty slot (a key the constructor removed); the hardware loads a CAM \
         in slot order from 0, as inserts into an empty one fill it"
    );
    let mut evicted = cpu_table();
    for i in LOADED..7 {
        evicted.insert(key(i), 1);
    }
    assert!(design(vec![ElementImage::of("table", &evicted)]).contains("its victim pointer has moved"));
    let mut twice = ElementImage::of("table", &cpu_table());
    twice.entries[1] = twice.entries[0].clone();
    assert_eq!(design(vec![twice]), "`table`: a key is in two slots");
    let mut counted = Counter::<64>::new();
    counted.add(5);
    assert_eq!(
        design(vec![ElementImage::of("misses", &counted)]),
        "`misses` is a counter the NF's constructor leaves at 5; counters start at 0 in hardware: use a Register \
         for a starting value"
    );
    let wrong = ElementImage::of("misses", &cpu_table());
    assert_eq!(design(vec![wrong]), "`misses` is a counter in the hardware but a Cam on the CPU");
    let none = ElementImage::of("nothing", &cpu_table());
    assert_eq!(design(vec![none]), "the CPU's state has `nothing`, which the hardware's does not");
    let flows = emu_hls::compile(include_str!("nf/flow_table.rs"), 64).unwrap();
    let mut filled: HashTable<u32, u16, 8, 2> = HashTable::new();
    filled.insert(7, 1);
    let mut c = HwConfig::new(64);
    c.state = vec![ElementImage::of("flows", &filled)];
    assert_eq!(
        Design::new(flows, c).err().unwrap(),
        "`flows` (a hash_table) is not empty when the NF's constructor returns, but the hardware's tables in sets \
         start empty after every reset; fill it from packets, or hold the entries in a Cam or Tcam, or an Array"
    );
    let mut state = emu_hls::interp::State::new(&func);
    let e = state.load_cam("table", 1, BitVec::new(32, 1), BitVec::new(16, 1)).unwrap_err();
    assert_eq!(e, "`table` is loaded in slot order from 0 and has 6 slots; entry for slot 1 comes after 0 entries");
}

//! `emu::probe!` and `emu::count!` on every tier: the HLS compiler makes each probe a register
//! and each count a 64-bit counter after the state's fields, `symbols.json` lists them under
//! `probes`, and after the same traffic the IR interpreter's and the cycle model's probes hold
//! what the CPU's do (the Verilator model sends the same frames). The front end's refusals
//! say what to write instead.

use emu::{check_frame, Meta, NetworkFunction, Packet, Verdict};
use emu_hls::backend::model::{Driver, Outcome, Pacing};
use emu_hls::backend::{symbols, Design, HwConfig};
use emu_hls::ir::BitVec;

mod probed_nf;
use probed_nf::probed;

/// The probes in symbol order, as the CPU run left them.
const PROBES: [&str; 7] = ["not_ipv4", "last_ttl", "last_src", "low_ttl", "expired", "last_port", "forwarded"];

fn frame(k: u64) -> (Vec<u8>, u8) {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    if k % 5 == 3 {
        f.extend([0x08, 0x06]);
    } else {
        let ttl = (k * 7 % 11) as u8;
        f.extend([0x08, 0x00, 0x45, 0, 0, 46, 0, 0, 0, 0, ttl, 17, 0, 0, 10, 0, (k >> 8) as u8, k as u8, 10, 0, 0, 2]);
    }
    f.resize(60 + (k as usize % 3) * 20, k as u8);
    (f, (k % 4) as u8)
}

fn design() -> Design {
    let func = emu_hls::compile(probed::HLS_SOURCE, probed::HLS_WINDOW).unwrap();
    Design::new(func, HwConfig::new(64)).unwrap()
}

fn cpu(nf: &mut dyn NetworkFunction, f: &[u8], in_port: u8) -> Outcome {
    if let Err(r) = check_frame(f, 1518) {
        return Outcome::Dropped(r);
    }
    let mut f = f.to_vec();
    let meta = Meta { in_port, len: f.len() as u16, timestamp: 0 };
    match nf.process(&mut Packet::new(&mut f, 64), &meta).resolve(in_port, 4) {
        Verdict::Drop(r) => Outcome::Dropped(r),
        Verdict::Send(m) => Outcome::Sent(m.0, f),
    }
}

/// A tier's probe `name` as big-endian bytes, from its interpreter state.
fn probe_of(state: &emu_hls::interp::State, name: &str) -> Vec<u8> {
    match state.counter(name) {
        Some(n) => n.to_be_bytes().to_vec(),
        None => state.register(name).unwrap_or_else(|| panic!("no probe `{name}` in the hardware")).to_be_bytes(),
    }
}

#[test]
fn probes_hold_the_same_values_on_the_cpu_the_ir_and_the_cycle_model() {
    let d = design();
    let input: Vec<(Vec<u8>, u8)> = (0..120).map(frame).collect();
    let mut nf = probed::Probed::default();
    let want: Vec<Outcome> = input.iter().map(|(f, p)| cpu(&mut nf, f, *p)).collect();
    let cpu_probes: Vec<Vec<u8>> = nf.probes().unwrap().with(|p| {
        assert_eq!(p.decls().iter().map(|d| d.name).collect::<Vec<_>>(), PROBES);
        (0..PROBES.len()).map(|i| p.read(i)).collect()
    });
    // The run passed every probe, so a tier that ignored one would differ.
    assert_ne!(cpu_probes[0], [0; 8]);
    assert_ne!(cpu_probes[4], [0; 8]);

    let mut ir = emu_hls::interp::State::new(&d.func);
    for (i, (f, p)) in input.iter().enumerate() {
        if check_frame(f, 1518).is_err() {
            continue;
        }
        let mut f = f.clone();
        let meta = Meta { in_port: *p, len: f.len() as u16, timestamp: 0 };
        let got = emu_hls::interp::run(&d.func, &mut ir, &mut Packet::new(&mut f, 64), &meta).unwrap();
        assert!(matches!(want[i], Outcome::Sent(..)) == matches!(got.resolve(*p, 4), Verdict::Send(_)), "frame {i}");
    }
    let mut driver = Driver::model(&d, Pacing { valid_percent: 80, ready_percent: 80, seed: 3 });
    let got = driver.run(&input).unwrap_or_else(|h| panic!("the hardware hung: {h:?}"));
    assert_eq!(got, want, "the cycle model's frames");
    let model = driver.hw.state();
    for (i, name) in PROBES.iter().enumerate() {
        assert_eq!(probe_of(&ir, name), cpu_probes[i], "`{name}` on the IR tier");
        assert_eq!(probe_of(model, name), cpu_probes[i], "`{name}` in the cycle model");
    }
    assert_eq!(model.register("low_ttl"), Some(BitVec::new(1, cpu_probes[3][0] as u64)));
}

#[test]
fn the_verilog_sends_what_the_cpu_sends_with_probes_in_it() {
    let d = design();
    let input: Vec<(Vec<u8>, u8)> = (0..60).map(frame).collect();
    let mut nf = probed::Probed::default();
    let want: Vec<Outcome> = input.iter().map(|(f, p)| cpu(&mut nf, f, *p)).collect();
    let (model, _) = emu_sim::verilator::VerilatorModel::build(&d, None).unwrap_or_else(|e| panic!("{e}"));
    let got = Driver::new(model, 8, Pacing { valid_percent: 70, ready_percent: 90, seed: 9 })
        .run(&input)
        .unwrap_or_else(|h| panic!("the Verilog hung: {h:?}"));
    assert_eq!(got, want);
    let v = emu_hls::backend::rtl::verilog(&d).unwrap();
    for name in PROBES {
        assert!(v.contains(&format!("st_{name}")), "`{name}` is an element of the Verilog");
    }
}

#[test]
fn symbols_json_lists_the_probes_after_the_fields() {
    let s = symbols::symbols(&design());
    let elements: Vec<&str> = s["elements"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(elements, ["frames"]);
    let probes: Vec<(&str, &str, u64)> = s["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["kind"].as_str().unwrap(), p["width"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        probes,
        [
            ("not_ipv4", "counter", 64),
            ("last_ttl", "probe", 8),
            ("last_src", "probe", 32),
            ("low_ttl", "probe", 1),
            ("expired", "counter", 64),
            ("last_port", "probe", 8),
            ("forwarded", "counter", 64),
        ]
    );
    // The IR text keeps the roles.
    let text = design().func.to_string();
    assert!(text.contains("state last_ttl: register<u8> probe"), "{text}");
    assert!(text.contains("state forwarded: counter<u64> count"), "{text}");
    let back = emu_hls::ir::parse(&text).unwrap();
    assert_eq!(back.to_string(), text);
}

fn errors(body: &str) -> String {
    let src = format!(
        "mod m {{ use emu::prelude::*; pub struct S {{ hits: Counter }}
         impl NetworkFunction for S {{ fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {{ {body} }} }} }}"
    );
    match emu_hls::compile(&src, 64) {
        Ok(_) => panic!("`{body}` compiled"),
        Err(e) => e,
    }
}

#[test]
fn bad_probes_are_refused_with_what_to_write() {
    let e = errors("emu::probe!(hits, 1u8); Action::Flood");
    assert!(e.contains("`hits` is a field of the state struct"), "{e}");
    let e = errors("emu::probe!(x, 1u8); emu::probe!(x, 1u16); Action::Flood");
    assert!(e.contains("the probe `x` is `emu::probe!` of a `u16` here but `emu::probe!` of a `u8` before"), "{e}");
    let e = errors("emu::probe!(x, 1u8); emu::count!(x); Action::Flood");
    assert!(e.contains("one name is one probe"), "{e}");
    let e = errors("emu::probe!(x, -1i8); Action::Flood");
    assert!(e.contains("a probe's value is an unsigned integer"), "{e}");
    let e = errors("emu::probe!(x); Action::Flood");
    assert!(e.contains("`emu::probe!(name, value)` takes a name"), "{e}");
    let e = errors("emu::count!(\"x\"); Action::Flood");
    assert!(e.contains("`emu::count!(name)` takes a name"), "{e}");
    let e = errors("println!(\"x\"); Action::Flood");
    assert!(e.contains("string formatting"), "{e}");
}

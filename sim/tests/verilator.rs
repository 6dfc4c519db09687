//! The Verilator tier against the cycle model: both NFs, both bus widths, the same frames and
//! the same pacing through `Driver`; the outcomes and the cycle counts must be identical. Also
//! the model cache, VCD tracing, and a model with a flipped output bit that the comparison must
//! catch.

use emu_core::craft;
use emu_core::{check_frame, Config, Ipv4Addr, Mac, Meta, NetworkFunction, NfDescriptor, Packet, Verdict};
use emu_hls::backend::model::{beats, CycleModel, Driver, Inputs, Outcome, Outputs, Pacing};
use emu_hls::backend::top::Clocked;
use emu_hls::backend::{Design, HwConfig};
use emu_sim::verilator::VerilatorModel;
use std::time::Instant;

fn design(desc: &NfDescriptor, width: usize) -> Design {
    let func = emu_hls::compile(desc.hls_source.expect("an #[emu::nf] module"), desc.window).unwrap();
    let mut config = HwConfig::new(width);
    config.ports = desc.ports;
    config.state = desc.initial_state(&Config::new()).unwrap();
    Design::new(func, config).unwrap()
}

/// xorshift64, seeded: the same frames on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn host(k: u8) -> Mac {
    Mac::from_bytes([2, 0, 0, 0, 0, k])
}

const ME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);

/// ICMP echo payload sizes: small, odd, around 64-byte and window (128-byte) boundaries, and
/// up to the largest that fits 1518 bytes.
const ECHO_SIZES: &[usize] =
    &[0, 1, 2, 3, 7, 8, 17, 18, 19, 31, 56, 63, 64, 65, 85, 86, 87, 100, 101, 255, 999, 1000, 1471, 1472];

/// A mix of traffic for both NFs: ARP and ICMP for 10.0.0.1 (valid and damaged), Ethernet
/// between a few hosts that mostly stay on their port, VLAN tags, random bytes, runts, empty
/// and oversize frames, broken IPv4 headers.
fn frames(seed: u64, n: usize) -> Vec<(Vec<u8>, u8)> {
    let mut rng = Rng(seed | 1);
    let homes = [0u8, 1, 2, 3, 0, 1, 2, 3];
    let mut out = vec![];
    for _ in 0..n {
        // Mostly 8 hosts; sometimes one of 40, more than the switch's table holds.
        let k = 1 + if rng.below(4) == 0 { rng.below(40) } else { rng.below(8) } as u8;
        let mut port = if rng.below(8) == 0 { rng.below(4) as u8 } else { homes[(k as usize - 1) % 8] };
        let frame = match rng.below(16) {
            0 | 1 => {
                // ARP request, mostly for us.
                let tpa = if rng.below(4) == 0 { Ipv4Addr::new(10, 0, 0, 9) } else { ME };
                let oper = if rng.below(8) == 0 { 2 } else { 1 };
                let arp = craft::arp(oper, host(k), Ipv4Addr::new(10, 0, 0, k + 1), Mac::from_bytes([0; 6]), tpa);
                craft::ethernet(Mac::BROADCAST, host(k), 0x0806, &arp)
            }
            2..=5 => {
                // ICMP echo request to us, sometimes damaged or not for us.
                let size = if rng.below(3) == 0 {
                    rng.below(1473) as usize
                } else {
                    ECHO_SIZES[rng.below(ECHO_SIZES.len() as u64) as usize]
                };
                let data = rng.bytes(size);
                let dst = if rng.below(8) == 0 { Ipv4Addr::new(10, 0, 0, 7) } else { ME };
                let request = rng.below(10) != 0;
                let ip =
                    craft::icmp_echo(Ipv4Addr::new(10, 0, 0, k + 1), dst, request, k as u16, rng.next() as u16, &data);
                let mut f = craft::ethernet(host(1), host(k), 0x0800, &ip);
                match rng.below(10) {
                    0 => f[14 + 20 + 2] ^= 0x40, // ICMP checksum
                    1 => f[14 + 10] ^= 0x01,     // IPv4 checksum
                    2 if f.len() > 60 => {
                        let last = f.len() - 1;
                        f[last] ^= 0x80 // the payload's last byte, past the window for big ones
                    }
                    _ => {}
                }
                f
            }
            6..=8 => {
                // Ethernet between hosts: unicast, broadcast, multicast.
                let dst = match rng.below(4) {
                    0 => Mac::BROADCAST,
                    1 => Mac::from_bytes([1, 0, 0x5e, 0, 0, 1]),
                    _ => host(1 + rng.below(8) as u8),
                };
                let len = rng.below(200) as usize;
                craft::ethernet(dst, host(k), 0x88b5, &rng.bytes(len))
            }
            9 => {
                // An 802.1Q-tagged (once or twice) IPv4 echo: the checks' other offsets.
                let ip = craft::icmp_echo(Ipv4Addr::new(10, 0, 0, 2), ME, true, 1, 1, &rng.bytes(20));
                let mut f = craft::ethernet(host(1), host(k), 0x8100, &[]);
                f.truncate(14);
                f.extend_from_slice(&[0, 5]);
                if rng.below(2) == 0 {
                    f.extend_from_slice(&[0x81, 0x00, 0, 6]);
                }
                f.extend_from_slice(&[0x08, 0x00]);
                f.extend_from_slice(&ip);
                if rng.below(2) == 0 {
                    f.truncate(f.len() - 30); // shorter than its IPv4 total length
                }
                f
            }
            10 => {
                // A bad IPv4 header: version, header length or total length.
                let ip = craft::icmp_echo(Ipv4Addr::new(10, 0, 0, 2), ME, true, 1, 1, &rng.bytes(32));
                let mut f = craft::ethernet(host(1), host(k), 0x0800, &ip);
                match rng.below(4) {
                    0 => f[14] = 0x65,
                    1 => f[14] = 0x43,
                    2 => f[14] = 0x4f,
                    _ => f[16] = 0x7f,
                }
                f
            }
            11 if rng.below(2) == 0 => {
                let n = rng.below(120) as usize;
                rng.bytes(n)
            }
            11 => {
                // An echo request with IPv4 options: the ICMP header at a computed offset.
                let words = 1 + rng.below(10) as usize;
                let size = rng.below(200) as usize;
                let ip = craft::icmp_echo(Ipv4Addr::new(10, 0, 0, k + 1), ME, true, 7, 9, &rng.bytes(size));
                let mut h = ip[..20].to_vec();
                h.extend((0..4 * words).map(|i| if i + 1 == 4 * words { 0 } else { 1 }));
                h[0] = 0x40 | (5 + words) as u8;
                let total = (ip.len() + 4 * words) as u16;
                h[2..4].copy_from_slice(&total.to_be_bytes());
                h[10..12].copy_from_slice(&[0, 0]);
                let sum = !ones_sum(&h);
                h[10..12].copy_from_slice(&sum.to_be_bytes());
                h.extend_from_slice(&ip[20..]);
                craft::ethernet(host(1), host(k), 0x0800, &h)
            }
            12 => {
                let n = rng.below(14) as usize;
                rng.bytes(n)
            }
            13 => {
                port = rng.below(4) as u8;
                vec![]
            }
            14 => {
                let n = 1519 + rng.below(700) as usize;
                let mut f = craft::ethernet(host(2), host(k), 0x88b5, &[]);
                f.resize(n, 0xa5);
                f
            }
            _ => {
                // Around the largest frame: 1514 to 1518 bytes.
                let n = 1514 + rng.below(5) as usize;
                let mut f = craft::ethernet(host(1 + rng.below(8) as u8), host(k), 0x88b5, &[]);
                f.extend(rng.bytes(n - 14));
                f
            }
        };
        out.push((frame, port));
    }
    out
}

/// The folded one's-complement sum of 16-bit big-endian words.
fn ones_sum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes.chunks(2).map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0))).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

fn hex(frame: &[u8]) -> String {
    let shown: Vec<String> = frame.iter().take(64).map(|b| format!("{b:02x}")).collect();
    let more = if frame.len() > 64 { " …" } else { "" };
    format!("{} bytes [{}{more}]", frame.len(), shown.join(" "))
}

/// What the CPU target does with a frame (for the message when the tiers disagree).
fn cpu(nf: &mut dyn NetworkFunction, window: usize, frame: &[u8], in_port: u8) -> Outcome {
    if let Err(r) = check_frame(frame, 1518) {
        return Outcome::Dropped(r);
    }
    let mut f = frame.to_vec();
    let meta = Meta { in_port, len: f.len() as u16, timestamp: 0 };
    let action = nf.process(&mut Packet::new(&mut f, window), &meta);
    match action.resolve(in_port, 4) {
        Verdict::Drop(r) => Outcome::Dropped(r),
        Verdict::Send(m) => Outcome::Sent(m.0, f),
    }
}

const PACINGS: [(u32, u32); 4] = [(100, 100), (30, 100), (100, 30), (25, 25)];

/// Runs `input` through the cycle model and through `vl` with `pacing`; the first difference
/// in outcomes or cycles, as a message naming the frame and what the CPU does with it.
fn compare(
    desc: &NfDescriptor,
    d: &Design,
    vl: VerilatorModel,
    input: &[(Vec<u8>, u8)],
    pacing: Pacing,
) -> Result<(u64, f64, f64), String> {
    let t = Instant::now();
    let mut model = Driver::new(CycleModel::new(d), d.config.bus_bytes, pacing);
    let want = model.run(input).map_err(|h| format!("the cycle model hung: {h:?}"))?;
    let model_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut hw = Driver::new(vl, d.config.bus_bytes, pacing);
    let got = hw.run(input).map_err(|h| format!("the Verilator model hung: {h:?} (the cycle model did not)"))?;
    let vl_s = t.elapsed().as_secs_f64();
    let mut nf = (desc.build)(&Config::new()).unwrap();
    let mut cpu_out = vec![];
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        cpu_out.push(cpu(nf.as_mut(), desc.window, &input[i].0, input[i].1));
        if g != w {
            let detail = match (g, w) {
                (Outcome::Sent(gm, gf), Outcome::Sent(wm, wf)) => format!(
                    "ports verilator {gm:#b}, cycle {wm:#b}; {}",
                    emu_sim::diff::describe(gf, wf, "verilator", "cycle")
                ),
                _ => format!("verilator {g:?}, cycle {w:?}"),
            };
            return Err(format!(
                "{} at {} bits, pacing {}/{}: frame {i} ({}, port {}): {detail}; the CPU: {:?}",
                desc.name,
                8 * d.config.bus_bytes,
                pacing.valid_percent,
                pacing.ready_percent,
                hex(&input[i].0),
                input[i].1,
                cpu_out[i]
            ));
        }
    }
    if got.len() != want.len() || hw.cycles != model.cycles {
        return Err(format!(
            "{} at {} bits, pacing {}/{}: {} outcomes in {} cycles under Verilator, {} in {} in the cycle model",
            desc.name,
            8 * d.config.bus_bytes,
            pacing.valid_percent,
            pacing.ready_percent,
            got.len(),
            hw.cycles,
            want.len(),
            model.cycles
        ));
    }
    if std::env::var_os("EMU_VL_HISTOGRAM").is_some() {
        let mut h = std::collections::BTreeMap::new();
        for o in &want {
            let k = match o {
                Outcome::Sent(m, _) => format!("sent {m:#b}"),
                Outcome::Dropped(r) => format!("{r:?}"),
            };
            *h.entry(k).or_insert(0) += 1;
        }
        eprintln!("{h:?}");
    }
    Ok((model.cycles, model_s, vl_s))
}

fn check_nf(desc: &NfDescriptor, width: usize, seed: u64) {
    let d = design(desc, width);
    let (vl, info) = VerilatorModel::build(&d, None).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{} {width}: model {} in {:.1} s ({})",
        desc.name,
        if info.cached { "loaded from the cache" } else { "built" },
        info.seconds,
        info.dir.display()
    );
    // A longer soak: EMU_VL_FRAMES frames per pacing, EMU_VL_SEED mixed into the seed.
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let n = env("EMU_VL_FRAMES").unwrap_or(400) as usize;
    let seed = seed ^ env("EMU_VL_SEED").unwrap_or(0).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut frames_total = 0;
    for (k, (valid, ready)) in PACINGS.into_iter().enumerate() {
        let input = frames(seed ^ ((k as u64 + 1) << 32), n);
        let pacing = Pacing { valid_percent: valid, ready_percent: ready, seed: seed ^ ((k as u64 + 1) << 40) };
        let (cycles, model_s, vl_s) = compare(desc, &d, vl.another(), &input, pacing).unwrap_or_else(|e| panic!("{e}"));
        frames_total += input.len();
        eprintln!(
            "{} {width} {valid}/{ready}: {} frames, {cycles} cycles; cycle model {:.0} cycles/s, Verilator {:.0} cycles/s",
            desc.name,
            input.len(),
            cycles as f64 / model_s,
            cycles as f64 / vl_s
        );
    }
    assert!(frames_total >= 300);
}

#[test]
fn learning_switch_64_verilator_matches_the_cycle_model() {
    check_nf(&learning_switch::DESCRIPTOR, 64, 0x5eed_0001);
}

#[test]
fn learning_switch_256_verilator_matches_the_cycle_model() {
    check_nf(&learning_switch::DESCRIPTOR, 256, 0x5eed_0002);
}

#[test]
fn icmp_echo_64_verilator_matches_the_cycle_model() {
    check_nf(&icmp_echo::DESCRIPTOR, 64, 0x5eed_0003);
}

#[test]
fn icmp_echo_256_verilator_matches_the_cycle_model() {
    check_nf(&icmp_echo::DESCRIPTOR, 256, 0x5eed_0004);
}

/// The second build of a design comes from the cache, in well under a second of work.
/// Back-to-back minimum-size frames under Verilator take exactly the cycles per packet (and
/// the first frame the latency) that `emu hls`'s report gives for their path.
/// The switch's shortest path that learns the source (a `cam.insert` on it) and ends in a
/// verdict `verdict` accepts.
fn shortest_learning_path(d: &Design, verdict: impl Fn(&str) -> bool) -> emu_hls::sched::Path {
    let learns = |p: &emu_hls::sched::Path| {
        p.blocks.iter().any(|b| d.func.blocks[*b].insts.iter().any(|i| d.func.insts[*i].op.name() == "cam.insert"))
    };
    let paths = d.sched.paths(&d.func).into_iter().filter(|p| verdict(&p.verdict) && learns(p));
    paths.min_by_key(|p| p.states.len()).expect("the switch has such a path")
}

#[test]
fn back_to_back_frames_take_the_reported_cycles() {
    use emu_hls::backend::report;
    for width in [64, 256] {
        let d = design(&learning_switch::DESCRIPTOR, width);
        let (model, _) = VerilatorModel::build(&d, None).unwrap_or_else(|e| panic!("{e}"));
        // Broadcast frames from one host: every one takes the learn-then-flood path.
        let mut f = vec![0xff; 6];
        f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x88, 0xb5]);
        f.resize(60, 0);
        let n = 100u64;
        let mut driver = Driver::new(model, width / 8, Pacing::FULL);
        let out = driver.run(&vec![(f, 1u8); n as usize]).unwrap();
        assert!(out.iter().all(|o| matches!(o, Outcome::Sent(0b1101, _))));
        let learn_flood = shortest_learning_path(&d, |v| v == "flood");
        let per_packet = report::path_cycles(&d, &learn_flood, 60);
        let latency = report::path_latency(&d, &learn_flood, 60);
        assert_eq!(driver.latencies[0], latency, "{width} bits");
        assert_eq!(driver.cycles, latency + (n - 1) * per_packet, "{width} bits");
        assert!(report::report(&d).contains(&format!("| {per_packet} |")));
        // At line rate, as native RTL: a frame every `beats` cycles (2 at 256 bits, 8 at 64).
        assert_eq!(per_packet, 60u64.div_ceil(width as u64 / 8), "{width} bits: cycles per broadcast frame");

        // Known unicast between two learned hosts, back and forth: the learn-then-forward
        // path, frame after frame at the report's interval.
        let frame = |dst: u8, src: u8| {
            let mut f = host(dst).bytes().to_vec();
            f.extend_from_slice(&host(src).bytes());
            f.extend_from_slice(&[0x88, 0xb5]);
            f.resize(60, 0);
            (f, src - 1)
        };
        let run = |n: usize| {
            let (model, _) = VerilatorModel::build(&d, None).unwrap_or_else(|e| panic!("{e}"));
            let mut driver = Driver::new(model, width / 8, Pacing::FULL);
            let mut input = vec![frame(2, 1), frame(1, 2)];
            input.extend((0..n).map(|k| if k % 2 == 0 { frame(2, 1) } else { frame(1, 2) }));
            let out = driver.run(&input).unwrap();
            for (k, o) in out[1..].iter().enumerate() {
                let to = if k % 2 == 0 { 0b01 } else { 0b10 };
                assert!(matches!(o, Outcome::Sent(m, _) if *m == to), "{width} bits, frame {}: {o:?}", k + 1);
            }
            driver.cycles
        };
        let forward = shortest_learning_path(&d, |v| v.starts_with("forward"));
        let per_forward = report::path_cycles(&d, &forward, 60);
        assert_eq!(run(200) - run(100), 100 * per_forward, "{width} bits: {per_forward} cycles per forwarded frame");
    }
}

#[test]
fn a_second_build_comes_from_the_cache() {
    let d = design(&learning_switch::DESCRIPTOR, 64);
    let (_, first) = VerilatorModel::build(&d, None).unwrap_or_else(|e| panic!("{e}"));
    let (_, second) = VerilatorModel::build(&d, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(second.cached, "{second:?}");
    assert_eq!(first.dir, second.dir);
    assert!(second.seconds < 5.0, "loading a cached model took {:.1} s", second.seconds);
    eprintln!("first: {:.2} s (cached: {}), second: {:.3} s", first.seconds, first.cached, second.seconds);
}

/// A model that flips one bit of `m_axis_tdata` disagrees with the cycle model, and the
/// comparison says where.
#[test]
fn a_flipped_output_bit_is_caught() {
    let desc = &learning_switch::DESCRIPTOR;
    let d = design(desc, 64);
    let (mut vl, _) = VerilatorModel::build(&d, None).unwrap_or_else(|e| panic!("{e}"));
    vl.set_tdata_fault(Some(vec![0, 0, 0, 0, 0, 0, 0x10]));
    let input = frames(7, 60);
    let both = Lockstep { a: CycleModel::new(&d), b: vl.another(), cycle: 0, first_difference: None };
    let err = compare(desc, &d, vl, &input, Pacing::FULL).expect_err("the flipped bit must be caught");
    assert!(err.contains("byte 6 (ethernet.src)"), "{err}");
    // And cycle by cycle: the first beat sent differs.
    let mut both = both;
    both.b.set_tdata_fault(Some(vec![0, 0, 0, 0, 0, 0, 0x10]));
    let mut driver = Driver::new(both, 8, Pacing::FULL);
    driver.run(&input).unwrap();
    let (_, model, verilator) = driver.hw.first_difference.expect("a difference");
    assert_eq!(model.m_axis.unwrap().tdata[6] ^ 0x10, verilator.m_axis.unwrap().tdata[6]);
}

/// With a VCD path, the model is built with tracing and writes the waveform.
#[test]
fn a_traced_model_writes_a_vcd() {
    let desc = &icmp_echo::DESCRIPTOR;
    let d = design(desc, 64);
    let dir = tempfile::tempdir().unwrap();
    let vcd = dir.path().join("echo.vcd");
    let (vl, _) = VerilatorModel::build(&d, Some(vcd.clone())).unwrap_or_else(|e| panic!("{e}"));
    let input = frames(11, 20);
    compare(desc, &d, vl, &input, Pacing::FULL).unwrap_or_else(|e| panic!("traced: {e}"));
    let text = std::fs::read_to_string(&vcd).unwrap();
    assert!(text.contains("$enddefinitions"), "{}", &text[..text.len().min(2000)]);
    for signal in ["m_axis_tdata", "fsm_q", "stat_drop_reason"] {
        assert!(text.contains(signal), "the VCD has no {signal}");
    }
}

/// Two clocked things stepped together; the first cycle whose outputs differ is kept.
struct Lockstep<A: Clocked, B: Clocked> {
    a: A,
    b: B,
    cycle: u64,
    first_difference: Option<(u64, Outputs, Outputs)>,
}

impl<A: Clocked, B: Clocked> Lockstep<A, B> {
    fn compare(&mut self) {
        let (a, b) = (self.a.outputs(), self.b.outputs());
        if a != b && self.first_difference.is_none() {
            self.first_difference = Some((self.cycle, a, b));
        }
    }
}

impl<A: Clocked, B: Clocked> Clocked for Lockstep<A, B> {
    fn outputs(&self) -> Outputs {
        self.a.outputs()
    }
    fn clock(&mut self, inputs: &Inputs) {
        self.compare();
        self.a.clock(inputs);
        self.b.clock(inputs);
        self.cycle += 1;
    }
    fn reset(&mut self) {
        self.a.reset();
        self.b.reset();
        self.compare();
    }
}

/// Stronger than the outcomes: every output port (ready, every beat's data, keep, `tuser` with
/// its length and source port, last, drops) in every cycle.
#[test]
fn every_port_agrees_in_every_cycle() {
    for (desc, width) in [
        (&learning_switch::DESCRIPTOR, 64),
        (&learning_switch::DESCRIPTOR, 256),
        (&icmp_echo::DESCRIPTOR, 64),
        (&icmp_echo::DESCRIPTOR, 256),
    ] {
        let d = design(desc, width);
        let (vl, _) = VerilatorModel::build(&d, None).unwrap_or_else(|e| panic!("{e}"));
        for (valid, ready) in [(100, 100), (40, 60)] {
            let both = Lockstep { a: CycleModel::new(&d), b: vl.another(), cycle: 0, first_difference: None };
            let pacing = Pacing { valid_percent: valid, ready_percent: ready, seed: 3 };
            let mut driver = Driver::new(both, d.config.bus_bytes, pacing);
            driver.run(&frames(0xc0ffee + width as u64, 500)).unwrap();
            if let Some((cycle, model, verilator)) = &driver.hw.first_difference {
                panic!(
                    "{} at {width} bits, {valid}/{ready}: cycle {cycle}:\ncycle model {model:?}\nverilator   {verilator:?}",
                    desc.name
                );
            }
        }
    }
}

/// Resets at random cycles, mid-frame and mid-send included, between random pacing: the two
/// agree on every port in every cycle, and after every reset.
#[test]
fn resets_anywhere_agree_cycle_by_cycle() {
    for (desc, width) in [(&learning_switch::DESCRIPTOR, 64), (&icmp_echo::DESCRIPTOR, 256)] {
        let d = design(desc, width);
        let bus = d.config.bus_bytes;
        let (vl, _) = VerilatorModel::build(&d, None).unwrap_or_else(|e| panic!("{e}"));
        let mut hw = Lockstep { a: CycleModel::new(&d), b: vl.another(), cycle: 0, first_difference: None };
        hw.reset();
        let mut rng = Rng(0x7e5e7 + width as u64);
        let input = frames(0xbeef + width as u64, 1500);
        let (mut frame, mut beat, mut resets) = (0, 0, 0);
        while frame < input.len() {
            let stream = beats(&input[frame].0, input[frame].1, bus);
            if rng.below(1000) == 0 {
                hw.reset();
                resets += 1;
                beat = 0; // the source starts the frame again
                continue;
            }
            let valid = rng.below(100) < 70;
            let s_axis = valid.then(|| stream[beat].clone());
            if valid && hw.outputs().s_axis_tready {
                beat += 1;
                if beat == stream.len() {
                    (frame, beat) = (frame + 1, 0);
                }
            }
            hw.clock(&Inputs { s_axis, m_axis_tready: rng.below(100) < 70 });
            if let Some((cycle, model, verilator)) = &hw.first_difference {
                panic!(
                    "{} at {width} bits: cycle {cycle}:\ncycle model {model:?}\nverilator   {verilator:?}",
                    desc.name
                );
            }
        }
        assert!(resets > 10, "{resets} resets in {} cycles", hw.cycle);
    }
}

/// The back end's less travelled paths (an array with indices past its end, arithmetic
/// shifts, signed comparisons, a multiply, a computed write offset, `set_len`; an `Lru`, every
/// op; a window held only in part, cut and lengthened; a `Tcam` and a `Queue`, every op; hash
/// tables, every op, back to back; arrival times): Verilator and the cycle model agree on
/// every outcome and cycle.
#[test]
fn the_coverage_nfs_agree_with_the_cycle_model() {
    let sources = [
        include_str!("../../emu-hls/tests/nf/coverage.rs"),
        include_str!("../../emu-hls/tests/nf/lru_cache.rs"),
        include_str!("../../emu-hls/tests/nf/window_edits.rs"),
        include_str!("../../emu-hls/tests/nf/rules_and_pool.rs"),
        include_str!("../../emu-hls/tests/nf/flow_table.rs"),
        include_str!("../../emu-hls/tests/nf/aging.rs"),
    ];
    // Each NF at one width, alternating (a Verilator build is several seconds; the cycle model
    // is checked at both widths against the interpreter in emu-hls/tests/backend.rs).
    for (i, source) in sources.iter().enumerate() {
        let width = if i % 2 == 0 { 64 } else { 256 };
        let func = emu_hls::compile(source, 64).unwrap_or_else(|e| panic!("{e}"));
        let d = Design::new(func, HwConfig::new(width)).unwrap();
        let (vl, _) = VerilatorModel::build(&d, None).unwrap_or_else(|e| panic!("{e}"));
        let mut rng = Rng(0xc0de + width as u64);
        // Six hosts, so the tables hit and evict; not IPv4, so the ingress checks pass them.
        let input: Vec<(Vec<u8>, u8)> = (0..600)
            .map(|_| {
                let n = 14 + rng.below(200) as usize;
                let mut f = rng.bytes(n);
                let (dst, src) = (rng.below(6) as u8, rng.below(6) as u8);
                f[..12].copy_from_slice(&[2, 0, 0, 0, 0, dst, 2, 0, 0, 0, 0, src]);
                f[12] = 0x88;
                (f, rng.below(4) as u8)
            })
            .collect();
        // Arrival times (tuser[127:64]): a 2026 epoch, up to 200 µs apart.
        let mut t = 1_795_000_000_000_000_000u64;
        let times: Vec<u64> = input
            .iter()
            .map(|_| {
                t += rng.below(200_000);
                t
            })
            .collect();
        let timed = || input.iter().zip(&times).map(|((f, p), t)| (f.as_slice(), *p, *t));
        for pacing in [Pacing::FULL, Pacing { valid_percent: 40, ready_percent: 50, seed: 8 }] {
            let mut model = Driver::new(CycleModel::new(&d), d.config.bus_bytes, pacing);
            let want = model.run_timed(timed()).unwrap();
            let mut hw = Driver::new(vl.another(), d.config.bus_bytes, pacing);
            let got = hw.run_timed(timed()).unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{width} bits, frame {i}: {}", hex(&input[i].0));
            }
            assert_eq!(hw.cycles, model.cycles, "{width} bits");
        }
    }
}

/// A soak: 100 000 mixed frames through the Verilog with the sink ready a third of the cycles
/// and the source pausing: every frame comes out, in order, as the CPU target gives it
/// (nothing lost or reordered while the egress sends one frame, the core decides the next and
/// the ingress holds a third).
#[test]
fn a_soak_under_back_pressure_loses_and_reorders_nothing() {
    for (desc, width, seed) in [(&learning_switch::DESCRIPTOR, 64, 0x50a), (&icmp_echo::DESCRIPTOR, 256, 0x50b)] {
        let d = design(desc, width);
        let (vl, _) = VerilatorModel::build(&d, None).unwrap_or_else(|e| panic!("{e}"));
        let input = frames(seed, 100_000);
        let mut driver = Driver::new(vl, d.config.bus_bytes, Pacing { valid_percent: 80, ready_percent: 35, seed });
        let out = driver.run(&input).unwrap_or_else(|h| panic!("{} at {width} bits hung: {h:?}", desc.name));
        assert_eq!(out.len(), input.len());
        let mut nf = (desc.build)(&Config::new()).unwrap();
        for (i, ((frame, port), got)) in input.iter().zip(&out).enumerate() {
            let want = cpu(nf.as_mut(), desc.window, frame, *port);
            assert_eq!(*got, want, "{} at {width} bits: frame {i} ({}, port {port})", desc.name, hex(frame));
        }
        let sent = out.iter().filter(|o| matches!(o, Outcome::Sent(..))).count();
        eprintln!("{} {width}: {} frames, {sent} sent, in {} cycles", desc.name, out.len(), driver.cycles);
        assert!(sent > input.len() / 4, "the mix sends frames, not only drops: {sent}");
    }
}

/// The same Verilog under a second, event-driven simulator: Icarus Verilog, replaying the
/// inputs the Verilator model saw (fuzzed traffic with stalls on both sides), must show the
/// Verilator model's outputs at every cycle — for the learning switch and ICMP echo, both
/// widths. An `always @*` that never runs there, or an X Verilator reads as 0, fails this.
#[test]
fn iverilog_gives_the_verilator_tiers_outputs_cycle_for_cycle() {
    use emu_sim::fuzz::{Aims, Fuzzer};
    use emu_sim::iverilog::{replay, Recorder};
    let tmp = tempfile::tempdir().unwrap();
    for desc in [&learning_switch::DESCRIPTOR, &icmp_echo::DESCRIPTOR] {
        let aims = Aims::of_values(desc.params.iter().filter_map(|p| p.default));
        let mut fuzzer = Fuzzer::new(0x1c4e, desc.ports, aims);
        let frames: Vec<(Vec<u8>, u8)> = (0..300)
            .map(|_| fuzzer.next_frame())
            .filter(|f| check_frame(&f.data, 1518).is_ok())
            .map(|f| (f.data, f.port))
            .collect();
        for width in [64, 256] {
            let d = design(desc, width);
            let (vl, _) = VerilatorModel::build(&d, None).unwrap_or_else(|e| panic!("{e}"));
            let pacing = Pacing { valid_percent: 80, ready_percent: 70, seed: 9 };
            let mut driver = Driver::new(Recorder::new(vl), d.config.bus_bytes, pacing);
            let outcomes = driver.run(&frames).unwrap();
            assert!(outcomes.iter().any(|o| matches!(o, Outcome::Sent(..))), "{}: nothing sent", desc.name);
            let recorded = &driver.hw.cycles;
            let inputs: Vec<Inputs> = recorded.iter().map(|(_, i)| i.clone()).collect();
            let dir = tmp.path().join(format!("{}-{width}", desc.name));
            let shown = replay(&d, &inputs, &dir).unwrap_or_else(|e| panic!("{} at {width} bits: {e}", desc.name));
            for (cycle, ((want, _), got)) in recorded.iter().zip(&shown).enumerate() {
                assert_eq!(got, want, "{} at {width} bits, cycle {cycle}: iverilog, then Verilator", desc.name);
            }
        }
    }
}

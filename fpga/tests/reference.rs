//! The hand-written references (`emu_fpga::reference`: the learning switch, the ICMP echo
//! responder) against their CPU NFs: stepped cycle by cycle through their rust-hdl signals by
//! the same `Driver` as the HLS designs, on seeded random traffic (well-formed and malformed
//! frames, 64 and 256 bits, `tvalid` gaps and `m_axis_tready` back-pressure); their cycles per
//! packet; their Verilog through Verilator's lint.

use emu_core::{check_frame, craft, DropReason, Ipv4Addr, Mac, Meta, NetworkFunction, Packet, Verdict};
use emu_fpga::reference::{IcmpEcho256, IcmpEcho64, LearningSwitch256, LearningSwitch64, Stepped};
use emu_hls::backend::model::{Driver, Outcome, Pacing};
use emu_hls::backend::top::Clocked;
use proptest::prelude::*;
use rust_hdl::prelude::*;

/// A seeded xorshift generator: a failing case replays from its seed.
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
    fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn hex(frame: &[u8]) -> String {
    let shown: Vec<String> = frame.iter().take(48).map(|b| format!("{b:02x}")).collect();
    format!("{} bytes [{}{}]", frame.len(), shown.join(" "), if frame.len() > 48 { " …" } else { "" })
}

/// What the CPU target does with a frame: the runner's ingress checks, the NF, the verdict.
fn cpu(nf: &mut dyn NetworkFunction, window: usize, frame: &[u8], in_port: u8) -> Outcome {
    if let Err(r) = check_frame(frame, 1518) {
        return Outcome::Dropped(r);
    }
    let mut f = frame.to_vec();
    let meta = Meta { in_port, len: f.len() as u16, timestamp: 0 };
    match nf.process(&mut Packet::new(&mut f, window), &meta).resolve(in_port, 4) {
        Verdict::Drop(r) => Outcome::Dropped(r),
        Verdict::Send(m) => Outcome::Sent(m.0, f),
    }
}

/// An IPv4 header for the ingress checks to judge, often damaged: version, IHL, total length.
fn ipv4_payload(rng: &mut Rng) -> Vec<u8> {
    let data = rng.below(60) as usize;
    let mut ip = craft::icmp_echo(Ipv4Addr::new(10, 0, 0, 2), Ipv4Addr::new(10, 0, 0, 1), true, 1, 2, &rng.bytes(data));
    match rng.below(8) {
        0 => ip[0] = (rng.below(16) as u8) << 4 | (ip[0] & 0x0f),
        1 => ip[0] = 0x40 | rng.below(16) as u8,
        2 => {
            let total = rng.below(ip.len() as u64 + 20) as u16;
            ip[2..4].copy_from_slice(&total.to_be_bytes());
        }
        3 => ip.truncate(rng.below(ip.len() as u64) as usize),
        4 => ip.extend({
            let n = rng.below(30) as usize;
            rng.bytes(n)
        }), // Ethernet padding
        _ => {}
    }
    ip
}

/// Switch traffic: 24 hosts (so the 16-entry table evicts) that move now and then,
/// broadcast, multicast and unknown destinations, multicast sources, VLAN tags and IPv4 for the
/// ingress checks, runts, empty, oversize and random frames.
fn switch_frames(seed: u64, n: usize) -> Vec<(Vec<u8>, u8)> {
    let mut rng = Rng(seed | 1);
    let mut homes: Vec<u8> = (0..24).map(|_| rng.below(4) as u8).collect();
    let host = |i: u64| [2, 0, 0, 0, 0x10, i as u8];
    (0..n)
        .map(|_| {
            let in_any = rng.below(4) as u8;
            match rng.below(25) {
                0 => {
                    return (
                        {
                            let n = rng.below(80) as usize;
                            rng.bytes(n)
                        },
                        in_any,
                    )
                }
                1 => {
                    return (
                        {
                            let n = 1519 + rng.below(600) as usize;
                            rng.bytes(n)
                        },
                        in_any,
                    )
                }
                2 => {
                    return (
                        {
                            let n = 1500 + rng.below(19) as usize;
                            rng.bytes(n)
                        },
                        in_any,
                    )
                }
                _ => {}
            }
            let dst: [u8; 6] = match rng.below(10) {
                0 => [0xff; 6],
                1 => [0x01, 0x00, 0x5e, 0, 0, rng.below(4) as u8],
                2 => [2, 0, 0, 0, 0x20, rng.below(200) as u8],
                _ => host(rng.below(24)),
            };
            let s = rng.below(24) as usize;
            let src = if rng.percent(3) { [0x01, 0x80, 0xc2, 0, 0, 0] } else { host(s as u64) };
            if rng.percent(4) {
                homes[s] = rng.below(4) as u8;
            }
            let in_port = if rng.percent(90) { homes[s] } else { in_any };
            let mut f = dst.to_vec();
            f.extend_from_slice(&src);
            for _ in 0..rng.below(4).saturating_sub(1) {
                f.extend_from_slice(&[0x81, 0x00, 0, rng.below(16) as u8]);
            }
            if rng.percent(30) {
                f.extend_from_slice(&[0x08, 0x00]);
                f.extend(ipv4_payload(&mut rng));
            } else {
                f.extend_from_slice(&[0x88, 0xb5]);
                let len = match rng.below(10) {
                    0 => rng.below(20) as usize,
                    1 => 60 + rng.below(1460) as usize,
                    _ => 60,
                };
                let body = len.saturating_sub(f.len());
                f.extend(rng.bytes(body));
                f.truncate(len);
            }
            (f, in_port)
        })
        .collect()
}

fn run_switch(
    width: usize,
    input: &[(Vec<u8>, u8)],
    pacing: Pacing,
) -> Result<Vec<Outcome>, emu_hls::backend::model::Hang> {
    if width == 64 {
        Driver::new(Stepped::<64, 8, _>(LearningSwitch64::default()), 8, pacing).run(input)
    } else {
        Driver::new(Stepped::<256, 32, _>(LearningSwitch256::default()), 32, pacing).run(input)
    }
}

fn check_switch(width: usize, seed: u64, n: usize, pacing: Pacing) {
    let input = switch_frames(seed, n);
    let mut nf = learning_switch::LearningSwitch::default();
    let want: Vec<Outcome> = input.iter().map(|(f, p)| cpu(&mut nf, learning_switch::HLS_WINDOW, f, *p)).collect();
    let got = run_switch(width, &input, pacing).unwrap_or_else(|h| panic!("the switch hung at {width} bits: {h:?}"));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            w,
            "switch at {width} bits, seed {seed:#x}, {pacing:?}, frame {i} ({}, port {})",
            hex(&input[i].0),
            input[i].1
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// 12 cases × 50 frames, each case at a random width and pacing.
    #[test]
    fn the_learning_switch_reference_matches_the_cpu(seed in any::<u64>(), wide in any::<bool>(),
            valid in 20u32..=100, ready in 20u32..=100) {
        let pacing = Pacing { valid_percent: valid, ready_percent: ready, seed };
        check_switch(if wide { 256 } else { 64 }, seed, 50, pacing);
    }
}

/// The traffic reaches every verdict and every ingress check, so the comparison means something.
#[test]
fn switch_traffic_covers_every_verdict() {
    let input = switch_frames(3, 3000);
    let mut nf = learning_switch::LearningSwitch::default();
    let mut seen = std::collections::BTreeMap::new();
    for (f, p) in &input {
        let key = match cpu(&mut nf, learning_switch::HLS_WINDOW, f, *p) {
            Outcome::Dropped(r) => r.name().to_string(),
            Outcome::Sent(m, _) if m.count_ones() == 1 => "forward".into(),
            Outcome::Sent(..) => "flood".into(),
        };
        *seen.entry(key).or_insert(0) += 1;
    }
    for want in [
        "forward",
        "flood",
        "same_port",
        "empty",
        "runt",
        "oversize",
        "ipv4_version",
        "ipv4_header_length",
        "ipv4_total_length",
    ] {
        assert!(seen.get(want).copied().unwrap_or(0) >= 5, "{want}: {seen:?}");
    }
}

/// rust-hdl's `generate_verilog` of each reference passes Verilator's lint (WIDTH silenced, as
/// for the generated designs: rust-hdl's own Verilog trips it).
#[test]
fn reference_verilog_lints() {
    let mut sw = LearningSwitch64::default();
    sw.connect_all();
    emu_hls::hw::tools::verilator_lint_design(&generate_verilog(&sw), "top", true).unwrap_or_else(|e| panic!("{e}"));
    let mut sw = LearningSwitch256::default();
    sw.connect_all();
    emu_hls::hw::tools::verilator_lint_design(&generate_verilog(&sw), "top", true).unwrap_or_else(|e| panic!("{e}"));
}

/// Minimum-size frames back to back, measured as the HLS designs' are
/// (`cycles_per_packet_are_bounded_and_as_reported` in emu-hls): the initiation interval is the
/// frame's beats (one beat per cycle in and out), the latency its beats in, the three decide
/// stages, its beats out. Also for a path that drops (`same_port`), and with gaps and
/// back-pressure nothing waits long.
#[test]
fn switch_cycles_per_packet() {
    for width in [64u64, 256] {
        let beats = 60u64.div_ceil(width / 8);
        let flood = |n: usize| {
            let mut f = vec![0xff; 6];
            f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x88, 0xb5]);
            f.resize(60, 0);
            vec![(f, 1u8); n]
        };
        let run = |input: Vec<(Vec<u8>, u8)>| {
            let mut d = if width == 64 {
                Box::new(Driver::new(
                    Box::new(Stepped::<64, 8, _>(LearningSwitch64::default())) as Box<dyn Clocked>,
                    8,
                    Pacing::FULL,
                ))
            } else {
                Box::new(Driver::new(
                    Box::new(Stepped::<256, 32, _>(LearningSwitch256::default())) as Box<dyn Clocked>,
                    32,
                    Pacing::FULL,
                ))
            };
            d.hang_limit = 64;
            let out = d.run(&input).unwrap();
            (out, d.cycles, d.latencies.clone())
        };
        let (out, c200, lat) = run(flood(200));
        assert!(out.iter().all(|o| matches!(o, Outcome::Sent(0b1101, _))), "{width}: {:?}", &out[..3]);
        let (_, c100, _) = run(flood(100));
        assert_eq!(c200 - c100, 100 * beats, "{width} bits: {beats} cycles per packet");
        assert_eq!(lat[0], 2 * beats + 3, "{width} bits: latency");
        assert!(lat.iter().all(|l| *l == lat[0]), "{width} bits: every frame the same latency");
        eprintln!("{width} bits: {beats} cycles per packet, latency {} cycles, 200 frames in {c200} cycles", lat[0]);

        // Host 2 sends to host 1, both on port 1: learned, then `same_port` drops.
        let frame = |dst: u8, src: u8| {
            let mut f = vec![2, 0, 0, 0, 0, dst, 2, 0, 0, 0, 0, src, 0x88, 0xb5];
            f.resize(60, 0);
            (f, 1u8)
        };
        let drops = |n: usize| {
            let mut input = vec![frame(2, 1)];
            input.extend(std::iter::repeat_n(frame(1, 2), n));
            let (out, cycles, _) = run(input);
            assert!(out[1..].iter().all(|o| *o == Outcome::Dropped(emu_core::DropReason::SamePort)));
            cycles
        };
        assert_eq!(drops(200) - drops(100), 100 * beats, "{width} bits: {beats} cycles per dropped packet");
    }
    for (valid, ready) in [(30, 100), (100, 30), (25, 25)] {
        let mut d = Driver::new(
            Stepped::<64, 8, _>(LearningSwitch64::default()),
            8,
            Pacing { valid_percent: valid, ready_percent: ready, seed: 9 },
        );
        d.hang_limit = 200;
        let out = d.run(&switch_frames(77, 40)).unwrap_or_else(|h| panic!("hung at {valid}/{ready}: {h:?}"));
        assert_eq!(out.len(), 40);
    }
}

// The ICMP echo responder.

const PEER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const PEER_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 2]);

/// The responder's configuration: the NF's defaults, or an address whose last bytes are 0, so
/// that an ARP request cut before its target address (read as zeros) is still for it.
fn icmp_config(zero_tail: bool) -> (Ipv4Addr, Mac) {
    if zero_tail {
        (Ipv4Addr::new(192, 168, 0, 0), Mac::from_bytes([0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f]))
    } else {
        (Ipv4Addr::new(10, 0, 0, 1), Mac::from_bytes([2, 0, 0, 0, 0, 1]))
    }
}

/// Recomputes an IPv4 header's checksum (at `at`, IHL from its first byte).
fn fix_ip_checksum(f: &mut [u8], at: usize) {
    let hl = (f[at] & 0x0f) as usize * 4;
    f[at + 10..at + 12].copy_from_slice(&[0, 0]);
    let c = emu_core::wire::checksum::checksum(&f[at..at + hl]);
    f[at + 10..at + 12].copy_from_slice(&c.to_be_bytes());
}

/// An echo request (Ethernet, IPv4 at 14) from PEER to `dst`: `data` bytes, `options` words of
/// IPv4 options, checksums right.
fn echo_request(rng: &mut Rng, dst: Ipv4Addr, dst_mac: Mac, data: usize, options: usize) -> Vec<u8> {
    let payload = rng.bytes(data);
    let mut ip = craft::icmp_echo(PEER, dst, true, rng.next() as u16, rng.next() as u16, &payload);
    ip[8] = rng.below(256) as u8; // any TTL
    let opts = rng.bytes(4 * options);
    ip.splice(20..20, opts);
    ip[0] = 0x45 + options as u8;
    let total = ip.len() as u16;
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    fix_ip_checksum(&mut ip, 0);
    craft::ethernet(dst_mac, PEER_MAC, 0x0800, &ip)
}

/// Responder traffic: echo requests of every size (0 to 1472 bytes of data, IPv4 options,
/// Ethernet padding), to us and to others, with wrong checksums (header, payload anywhere,
/// including past the NF's 128-byte window), fragments, other protocols and ICMP types, ICMP
/// messages of 0–3 bytes, ARP for us and not (and cut short), VLAN tags, damaged IPv4, runts,
/// empty, oversize and random frames.
fn icmp_frames(seed: u64, n: usize, me: Ipv4Addr, my_mac: Mac) -> Vec<(Vec<u8>, u8)> {
    let mut rng = Rng(seed | 1);
    let other = Ipv4Addr::new(10, 0, 0, 9);
    (0..n)
        .map(|_| {
            let port = rng.below(4) as u8;
            let data = match rng.below(8) {
                0 => rng.below(4) as usize,
                1 => 1000 + rng.below(473) as usize,
                2 => 56,
                _ => rng.below(200) as usize,
            };
            let options = if rng.percent(20) { 1 + rng.below(10) as usize } else { 0 };
            let mut f = echo_request(&mut rng, me, my_mac, data, options);
            let l4 = 14 + 20 + 4 * options;
            match rng.below(40) {
                // Valid requests, some padded as Ethernet pads short frames.
                0..=11 => {}
                12..=13 => {
                    let pad = rng.below(40) as usize;
                    f.extend(rng.bytes(pad));
                }
                14 => f = echo_request(&mut rng, other, my_mac, data, options),
                15..=16 => {
                    // Any header bit but the version, IHL and total length (the ingress checks').
                    let at = [15, 18, 19, 20, 21, 22, 23, 24, 25, 26, 29, 30, 33][rng.below(13) as usize];
                    f[at] ^= 1 << rng.below(8);
                }
                17..=19 => {
                    let at = l4 + rng.below((f.len() - l4) as u64) as usize;
                    f[at] ^= 1 << rng.below(8);
                    if f[l4] != 8 {
                        f[l4] = 8;
                        f[l4 + 2] ^= 0x10;
                    }
                }
                20 => {
                    // A fragment.
                    if rng.percent(50) {
                        f[20] |= 0x20;
                    } else {
                        f[21] |= 1 << rng.below(8);
                    }
                    fix_ip_checksum(&mut f, 14);
                }
                21 => {
                    f[23] = [6, 17, 2, 0][rng.below(4) as usize];
                    fix_ip_checksum(&mut f, 14);
                }
                22 => {
                    // Another ICMP type, checksum right.
                    let old = f[l4];
                    f[l4] = [0, 3, 11, 13][rng.below(4) as usize];
                    let c = u16::from_be_bytes([f[l4 + 2], f[l4 + 3]]);
                    let c = emu_core::wire::checksum::update16(
                        c,
                        (old as u16) << 8 | f[l4 + 1] as u16,
                        (f[l4] as u16) << 8 | f[l4 + 1] as u16,
                    );
                    f[l4 + 2..l4 + 4].copy_from_slice(&c.to_be_bytes());
                }
                23 => {
                    // An ICMP message of 0–3 bytes, often followed by padding: the type comes
                    // from wherever l4 points, the checksum over what total_len covers.
                    let keep = rng.below(4) as usize;
                    let total = (20 + 4 * options + keep) as u16;
                    f[16..18].copy_from_slice(&total.to_be_bytes());
                    fix_ip_checksum(&mut f, 14);
                    f.truncate(l4 + keep);
                    if rng.percent(70) {
                        let pad = rng.below(20) as usize;
                        f.extend(rng.bytes(pad));
                        if f.len() > l4 {
                            f[l4] = 8;
                        }
                    }
                    if keep == 3 && rng.percent(50) {
                        // Sums to 0xffff: 0x08ff + 0xf700.
                        f[l4 + 1] = 0xff;
                        f[l4 + 2] = 0xf7;
                    }
                }
                24..=29 => {
                    let tpa = if rng.percent(70) { me } else { other };
                    let oper = if rng.percent(85) { 1 } else { 2 };
                    let sha = Mac::from_bytes([2, 0, 0, 0, 0x30, rng.below(256) as u8]);
                    let mut a = craft::arp(oper, sha, PEER, Mac::from_bytes([0; 6]), tpa);
                    match rng.below(10) {
                        0 => a[rng.below(6) as usize] ^= 1, // htype, ptype, hlen, plen
                        1 => a.truncate(rng.below(28) as usize),
                        2 => {
                            let pad = rng.below(30) as usize;
                            a.extend(rng.bytes(pad));
                        }
                        _ => {}
                    }
                    let src = if rng.percent(80) { sha } else { PEER_MAC };
                    let dst = if rng.percent(50) { Mac::from_bytes([0xff; 6]) } else { my_mac };
                    f = craft::ethernet(dst, src, 0x0806, &a);
                }
                30 => {
                    // VLAN-tagged: the NF reads no tags, the ingress checks do.
                    let tag = [0x81, 0x00, 0, rng.below(16) as u8];
                    f.splice(12..12, tag);
                }
                31..=33 => {
                    let ip = ipv4_payload(&mut rng);
                    f = craft::ethernet(my_mac, PEER_MAC, 0x0800, &ip);
                    if rng.percent(50) && f.len() >= 34 {
                        f[30..34].copy_from_slice(&me.0.to_be_bytes());
                    }
                }
                34 => {
                    let n = rng.below(14) as usize;
                    f = rng.bytes(n);
                }
                35 => {
                    let n = 1519 + rng.below(500) as usize;
                    f = rng.bytes(n);
                }
                36 => {
                    let n = 14 + rng.below(100) as usize;
                    f = rng.bytes(n);
                }
                37 => f[12..14].copy_from_slice(&[0x86, 0xdd]),
                _ => {
                    // The largest frames that are not oversize.
                    let data = 1518 - 42 - 4 * options;
                    f = echo_request(&mut rng, me, my_mac, data, options);
                }
            }
            (f, port)
        })
        .collect()
}

fn run_icmp(
    width: usize,
    config: (Ipv4Addr, Mac),
    input: &[(Vec<u8>, u8)],
    pacing: Pacing,
    hang_limit: u64,
) -> Result<Vec<Outcome>, emu_hls::backend::model::Hang> {
    let (ip, mac) = config;
    if width == 64 {
        let mut d = Driver::new(Stepped::<64, 8, _>(IcmpEcho64::new(ip, mac)), 8, pacing);
        d.hang_limit = hang_limit;
        d.run(input)
    } else {
        let mut d = Driver::new(Stepped::<256, 32, _>(IcmpEcho256::new(ip, mac)), 32, pacing);
        d.hang_limit = hang_limit;
        d.run(input)
    }
}

fn check_icmp(width: usize, zero_tail: bool, seed: u64, n: usize, pacing: Pacing) {
    let (me, my_mac) = icmp_config(zero_tail);
    let input = icmp_frames(seed, n, me, my_mac);
    let mut nf = icmp_echo::IcmpEcho::new(me, my_mac);
    let want: Vec<Outcome> = input.iter().map(|(f, p)| cpu(&mut nf, icmp_echo::WINDOW, f, *p)).collect();
    // No frame waits long for the next stage: 2000 idle cycles is a hang, not back-pressure.
    let got = run_icmp(width, (me, my_mac), &input, pacing, 2000)
        .unwrap_or_else(|h| panic!("the responder hung at {width} bits, seed {seed:#x}: {h:?}"));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if g != w {
            let diff = match (g, w) {
                (Outcome::Sent(_, a), Outcome::Sent(_, b)) => a
                    .iter()
                    .zip(b)
                    .position(|(x, y)| x != y)
                    .map_or(format!("lengths {} and {}", a.len(), b.len()), |k| {
                        format!("first differing byte {k}: {:02x}, the CPU {:02x}", a[k], b[k])
                    }),
                _ => String::new(),
            };
            panic!(
                "responder at {width} bits ({me}), seed {seed:#x}, {pacing:?}, frame {i} ({}, port {}): \
                 got {g:?}, the CPU {w:?}; {diff}",
                hex(&input[i].0),
                input[i].1
            );
        }
    }
    assert_eq!(got.len(), want.len());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// 6 cases × 40 frames, each at a random width, configuration and pacing.
    #[test]
    fn the_icmp_echo_reference_matches_the_cpu(seed in any::<u64>(), wide in any::<bool>(),
            zero_tail in any::<bool>(), valid in 20u32..=100, ready in 20u32..=100) {
        let pacing = Pacing { valid_percent: valid, ready_percent: ready, seed };
        check_icmp(if wide { 256 } else { 64 }, zero_tail, seed, 40, pacing);
    }
}

/// Both widths, both configurations, once each with gaps and back-pressure, so every run of the
/// suite covers them whatever proptest draws.
#[test]
fn the_icmp_echo_reference_matches_the_cpu_at_both_widths() {
    check_icmp(64, false, 0x1c4f, 40, Pacing { valid_percent: 70, ready_percent: 60, seed: 5 });
    check_icmp(256, true, 0x2b11, 40, Pacing { valid_percent: 60, ready_percent: 70, seed: 6 });
}

/// The traffic reaches every verdict the responder gives, so the comparison means something.
#[test]
fn icmp_traffic_covers_every_verdict() {
    for zero_tail in [false, true] {
        let (me, my_mac) = icmp_config(zero_tail);
        let input = icmp_frames(3, 3000, me, my_mac);
        let mut nf = icmp_echo::IcmpEcho::new(me, my_mac);
        let mut seen = std::collections::BTreeMap::new();
        for (f, p) in &input {
            let key = match cpu(&mut nf, icmp_echo::WINDOW, f, *p) {
                Outcome::Dropped(r) => r.name().to_string(),
                Outcome::Sent(_, out) if out[12..14] == [0x08, 0x06] => "arp_reply".into(),
                Outcome::Sent(_, out) if out.len() > 1200 => "long_echo_reply".into(),
                Outcome::Sent(..) => "echo_reply".into(),
            };
            *seen.entry(key).or_insert(0) += 1;
        }
        for want in [
            "echo_reply",
            "long_echo_reply",
            "arp_reply",
            "not_for_us",
            "ipv4_checksum",
            "icmp_checksum",
            "unsupported",
            "empty",
            "runt",
            "oversize",
            "ipv4_version",
            "ipv4_header_length",
            "ipv4_total_length",
        ] {
            assert!(seen.get(want).copied().unwrap_or(0) >= 5, "{want}: {seen:?}");
        }
    }
}

/// The checksum is verified over the whole payload, not the NF's window; ARP cut short before
/// its target address is answered when the address's tail is zeros (the CPU reads 0 there).
#[test]
fn icmp_reference_edge_cases() {
    let (me, my_mac) = icmp_config(false);
    let mut rng = Rng(11);
    let good = echo_request(&mut rng, me, my_mac, 1400, 0);
    let mut bad = good.clone();
    bad[900] ^= 0xff;
    let mut other = good.clone();
    // Two payload words swapped: the same sum, which a checksum cannot tell from the original.
    other.swap(700, 702);
    other.swap(701, 703);
    let input = vec![(good, 1u8), (bad, 2), (other, 3)];
    for width in [64, 256] {
        let out = run_icmp(width, (me, my_mac), &input, Pacing::FULL, 64).unwrap();
        assert!(matches!(&out[0], Outcome::Sent(0b10, f) if f[34] == 0), "{width}: {:?}", &out[0]);
        assert_eq!(out[1], Outcome::Dropped(DropReason::IcmpChecksum), "{width}");
        assert!(matches!(&out[2], Outcome::Sent(0b1000, _)), "{width}");
    }

    let (me, my_mac) = icmp_config(true);
    let mut a = craft::arp(1, PEER_MAC, PEER, Mac::from_bytes([0; 6]), me);
    a.truncate(26); // ends inside the target address's first two bytes (192.168)
    let short = craft::ethernet(Mac::from_bytes([0xff; 6]), PEER_MAC, 0x0806, &a);
    let mut nf = icmp_echo::IcmpEcho::new(me, my_mac);
    let want = cpu(&mut nf, icmp_echo::WINDOW, &short, 0);
    for width in [64, 256] {
        let out = run_icmp(width, (me, my_mac), &[(short.clone(), 0)], Pacing::FULL, 64).unwrap();
        assert_eq!(out[0], want, "{width}");
    }
}

/// Echo requests back to back (98 bytes: `ping`'s default), measured as the switch's: one beat
/// per cycle in and out, the latency the beats in, two decide stages, the beats out; drops
/// cost their beats too; with gaps and back-pressure nothing waits long.
#[test]
fn icmp_cycles_per_packet() {
    let (me, my_mac) = icmp_config(false);
    for width in [64u64, 256] {
        let beats = 98u64.div_ceil(width / 8);
        let run = |input: &[(Vec<u8>, u8)]| {
            let mut d = if width == 64 {
                Driver::new(
                    Box::new(Stepped::<64, 8, _>(IcmpEcho64::new(me, my_mac))) as Box<dyn Clocked>,
                    8,
                    Pacing::FULL,
                )
            } else {
                Driver::new(
                    Box::new(Stepped::<256, 32, _>(IcmpEcho256::new(me, my_mac))) as Box<dyn Clocked>,
                    32,
                    Pacing::FULL,
                )
            };
            d.hang_limit = 64;
            let out = d.run(input).unwrap();
            (out, d.cycles, d.latencies.clone())
        };
        let mut rng = Rng(21);
        let pings = |n: usize, rng: &mut Rng| -> Vec<(Vec<u8>, u8)> {
            (0..n).map(|_| (echo_request(rng, me, my_mac, 56, 0), 2u8)).collect()
        };
        let (out, c60, lat) = run(&pings(60, &mut rng));
        assert!(out.iter().all(|o| matches!(o, Outcome::Sent(0b100, _))), "{width}: {:?}", &out[..2]);
        let (_, c30, _) = run(&pings(30, &mut rng));
        assert_eq!(c60 - c30, 30 * beats, "{width} bits: {beats} cycles per packet");
        assert_eq!(lat[0], 2 * beats + 2, "{width} bits: latency");
        assert!(lat.iter().all(|l| *l == lat[0]), "{width} bits: every frame the same latency");
        eprintln!("{width} bits: {beats} cycles per packet, latency {} cycles", lat[0]);

        let drops = |n: usize, rng: &mut Rng| {
            let input: Vec<_> = (0..n)
                .map(|_| {
                    let mut f = echo_request(rng, me, my_mac, 56, 0);
                    f[60] ^= 1;
                    (f, 0u8)
                })
                .collect();
            let (out, cycles, _) = run(&input);
            assert!(out.iter().all(|o| *o == Outcome::Dropped(DropReason::IcmpChecksum)));
            cycles
        };
        assert_eq!(drops(60, &mut rng) - drops(30, &mut rng), 30 * beats, "{width} bits: per dropped packet");
    }
}

/// The responder's Verilog passes Verilator's lint, as the switch's.
#[test]
fn icmp_reference_verilog_lints() {
    let mut r = IcmpEcho64::default();
    r.connect_all();
    emu_hls::hw::tools::verilator_lint_design(&generate_verilog(&r), "top", true).unwrap_or_else(|e| panic!("{e}"));
    let mut r = IcmpEcho256::default();
    r.connect_all();
    emu_hls::hw::tools::verilator_lint_design(&generate_verilog(&r), "top", true).unwrap_or_else(|e| panic!("{e}"));
}

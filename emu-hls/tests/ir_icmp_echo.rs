//! The hand-built IR of the ICMP echo responder (ARP and echo paths), run by the IR
//! interpreter before and after the optimization passes, gives exactly the CPU responder's
//! actions, output frames (byte for byte) and counters on seeded random traffic: ARP for us
//! and for others, malformed ARP, echo requests of every size (past the window too), IP
//! options, wrong checksums, fragments, other protocols, echo replies, truncated frames,
//! nonsense lengths and random bytes.

mod common;

use common::Rng;
use emu_core::wire::{icmpv4, ipv4};
use emu_core::{craft, Action, Ipv4Addr, Mac, Meta, NetworkFunction, Packet};
use emu_hls::interp::{self, State};
use emu_hls::ir::{BitVec, Function};
use emu_hls::passes;
use icmp_echo::IcmpEcho;

const ME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const MY_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 1]);

fn peer(rng: &mut Rng) -> (Mac, Ipv4Addr) {
    let n = rng.below(6) as u8 + 2;
    (Mac::from_bytes([2, 0, 0, 0, 0, n]), Ipv4Addr::new(10, 0, 0, n))
}

fn target(rng: &mut Rng) -> Ipv4Addr {
    match rng.below(10) {
        0 => Ipv4Addr(rng.next() as u32),
        1 => Ipv4Addr::new(10, 0, 0, 9),
        _ => ME,
    }
}

/// Fixes the IPv4 header checksum of the packet at 14.
fn fix_ip_checksum(f: &mut [u8]) {
    if f.len() >= 34 {
        ipv4::Header::new_unchecked(&mut f[14..]).fill_checksum();
    }
}

fn echo(rng: &mut Rng) -> Vec<u8> {
    let (mac, src) = peer(rng);
    let len = match rng.below(8) {
        0 => 0,
        1 => 1400,
        2 => 56,
        3 => 1 + 2 * rng.below(40) as usize, // odd lengths
        _ => rng.below(1470) as usize,
    };
    let data = rng.bytes(len);
    let request = rng.percent(92);
    let mut ip = craft::icmp_echo(src, target(rng), request, rng.next() as u16, rng.next() as u16, &data);
    let mut h = ipv4::Header::new_unchecked(&mut ip[..]);
    h.set_ttl(rng.below(256) as u8);
    if rng.percent(20) {
        // IP options: IHL 6..15, the ICMP message moves with them.
        let words = 1 + rng.below(10) as usize;
        let opts = rng.bytes(4 * words);
        let mut with = ip[..20].to_vec();
        with.extend_from_slice(&opts);
        with.extend_from_slice(&ip[20..]);
        ip = with;
        let mut h = ipv4::Header::new_unchecked(&mut ip[..]);
        h.set_ihl(emu_core::u4::new(5 + words as u8));
        let total = ip.len() as u16;
        let mut h = ipv4::Header::new_unchecked(&mut ip[..]);
        h.set_total_len(total);
    }
    match rng.below(12) {
        0 => ipv4::Header::new_unchecked(&mut ip[..]).set_more_frags(true),
        1 => ipv4::Header::new_unchecked(&mut ip[..]).set_frag_offset(emu_core::u13::new(rng.below(8192) as u16)),
        2 => ipv4::Header::new_unchecked(&mut ip[..]).set_protocol(if rng.percent(50) { 17 } else { 6 }),
        3 => {
            let hl = ipv4::Header::new_unchecked(&ip[..]).header_len();
            icmpv4::Header::new_unchecked(&mut ip[hl..]).set_code(rng.next() as u8);
        }
        _ => {}
    }
    let mut f = craft::ethernet(MY_MAC, mac, 0x0800, &ip);
    fix_ip_checksum(&mut f);
    f
}

fn arp(rng: &mut Rng) -> Vec<u8> {
    let (mac, ip) = peer(rng);
    let oper = if rng.percent(90) { 1 } else { 2 };
    let mut p = craft::arp(oper, mac, ip, Mac::default(), target(rng));
    if rng.percent(15) {
        let i = rng.below(6) as usize; // htype, ptype, hlen, plen
        p[i] ^= 1 << rng.below(8);
    }
    craft::ethernet(Mac::BROADCAST, mac, 0x0806, &p)
}

/// A random frame, often damaged.
fn traffic(rng: &mut Rng) -> Vec<u8> {
    let mut f = match rng.below(10) {
        0..=2 => arp(rng),
        3..=7 => echo(rng),
        8 => {
            let (mac, _) = peer(rng);
            let n = rng.below(80) as usize;
            craft::ethernet(MY_MAC, mac, rng.next() as u16, &rng.bytes(n))
        }
        _ => {
            let n = rng.below(100) as usize;
            rng.bytes(n)
        }
    };
    if rng.percent(10) && !f.is_empty() {
        let i = rng.below(f.len() as u64) as usize;
        f[i] ^= 1 << rng.below(8);
    }
    if rng.percent(5) && f.len() > 18 {
        // A total length that does not fit the frame, checksum fixed or not.
        f[16] = rng.next() as u8;
        f[17] = rng.next() as u8;
        if rng.percent(50) {
            fix_ip_checksum(&mut f);
        }
    }
    if rng.percent(8) {
        let n = rng.below(f.len() as u64 + 1) as usize;
        f.truncate(n);
    }
    f
}

fn new_state(f: &Function) -> State {
    let mut s = State::new(f);
    s.set_register("ip", BitVec::new(32, ME.0 as u64)).unwrap();
    s.set_register("mac", BitVec::new(48, emu_core::Scalar::to_u64(MY_MAC))).unwrap();
    s
}

fn run_seed(seed: u64, frames: usize, tiers: &[(&str, &Function)]) -> Vec<Action> {
    let mut rng = Rng(seed);
    let mut nf = IcmpEcho::new(ME, MY_MAC);
    let mut states: Vec<State> = tiers.iter().map(|(_, f)| new_state(f)).collect();
    let mut verdicts = Vec::new();
    for n in 0..frames {
        let frame = traffic(&mut rng);
        let meta = Meta { in_port: rng.below(4) as u8, len: frame.len() as u16, timestamp: n as u64 };
        let mut cpu_frame = frame.clone();
        let want = nf.process(&mut Packet::new(&mut cpu_frame, icmp_echo::WINDOW), &meta);
        verdicts.push(want);
        for ((name, f), state) in tiers.iter().zip(states.iter_mut()) {
            let what = format!("seed {seed:#x}, frame {n} ({name} IR), in {}", common::hex(&frame));
            let mut ir_frame = frame.clone();
            let got = interp::run(f, state, &mut Packet::new(&mut ir_frame, icmp_echo::WINDOW), &meta).unwrap();
            assert_eq!(got, want, "{what}: action");
            if let Some(i) = (0..cpu_frame.len().max(ir_frame.len())).find(|&i| cpu_frame.get(i) != ir_frame.get(i)) {
                panic!(
                    "{what}: output frames differ first at byte {i}: cpu {:02x?}, ir {:02x?}",
                    cpu_frame.get(i),
                    ir_frame.get(i)
                );
            }
            assert_eq!(state.counter("replies"), Some(nf.replies.get()), "{what}: replies");
            assert_eq!(state.counter("arp_replies"), Some(nf.arp_replies.get()), "{what}: arp_replies");
            assert_eq!(state.register("ip"), Some(BitVec::new(32, ME.0 as u64)), "{what}: ip");
        }
    }
    verdicts
}

#[test]
fn interpreter_matches_the_cpu_responder_before_and_after_passes() {
    let raw = common::icmp_echo();
    let mut opt = raw.clone();
    passes::optimize(&mut opt).unwrap();
    let mut verdicts = Vec::new();
    for seed in [0x1c3e_c401u64, 0x9e37_79b9_7f4a_7c15, 0x0123_4567_89ab_cdef, 7] {
        verdicts.extend(run_seed(seed, 2000, &[("raw", &raw), ("optimized", &opt)]));
    }
    // Every path of the NF was taken, often.
    use emu_core::DropReason::*;
    let count = |a: Action| verdicts.iter().filter(|v| **v == a).count();
    for (a, at_least) in [
        (Action::Reply, 2000),
        (Action::Drop(NotForUs), 500),
        (Action::Drop(Ipv4Checksum), 50),
        (Action::Drop(IcmpChecksum), 50),
        (Action::Drop(Unsupported), 300),
    ] {
        assert!(count(a) >= at_least, "{a:?} seen {} times of {}", count(a), verdicts.len());
    }
}

#[test]
fn passes_shrink_the_responder() {
    let raw = common::icmp_echo();
    let mut opt = raw.clone();
    let rounds = passes::optimize(&mut opt).unwrap();
    assert!(rounds >= 2, "the passes changed something, then reached a fixed point");
    assert!(opt.layout.len() < raw.layout.len(), "if-conversion removed the && / || branches:\n{opt}");
    let golden = include_str!("golden/nf/icmp_echo.optimized.ir");
    if std::env::var_os("EMU_BLESS").is_some() {
        std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/nf/icmp_echo.optimized.ir"), opt.to_string())
            .unwrap();
        return;
    }
    assert_eq!(opt.to_string(), golden, "rerun with EMU_BLESS=1 to accept the new text");
}

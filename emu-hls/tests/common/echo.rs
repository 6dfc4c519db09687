//! The ICMP echo responder on seeded random traffic: the CPU responder and IR tiers side by
//! side, output frames compared byte for byte. Used by the hand-built IR tests and the lowering
//! tests alike.

use super::Rng;
use emu_core::wire::{icmpv4, ipv4};
use emu_core::{craft, Action, Ipv4Addr, Mac, Meta, NetworkFunction, Packet, Scalar};
use emu_hls::interp::{self, State};
use emu_hls::ir::{BitVec, Function};
use icmp_echo::IcmpEcho;

pub const ME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
pub const MY_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 1]);

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
pub fn traffic(rng: &mut Rng) -> Vec<u8> {
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

/// The registers `ip` and `mac` loaded from the CPU instance's fields.
fn new_state(f: &Function, nf: &IcmpEcho) -> State {
    let mut s = State::new(f);
    s.set_register("ip", BitVec::new(32, nf.ip.0 as u64)).unwrap();
    s.set_register("mac", BitVec::new(48, nf.mac.to_u64())).unwrap();
    s
}

pub fn run_seed(seed: u64, frames: usize, tiers: &[(&str, &Function)]) -> Vec<Action> {
    let mut rng = Rng(seed);
    let mut nf = IcmpEcho::new(ME, MY_MAC);
    let mut states: Vec<State> = tiers.iter().map(|(_, f)| new_state(f, &nf)).collect();
    let mut verdicts = Vec::new();
    for n in 0..frames {
        let frame = traffic(&mut rng);
        let meta = Meta { in_port: rng.below(4) as u8, len: frame.len() as u16, timestamp: n as u64 };
        let mut cpu_frame = frame.clone();
        let want = nf.process(&mut Packet::new(&mut cpu_frame, icmp_echo::WINDOW), &meta);
        verdicts.push(want);
        for ((name, f), state) in tiers.iter().zip(states.iter_mut()) {
            let what = format!("seed {seed:#x}, frame {n} ({name} IR), in {}", super::hex(&frame));
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
            assert_eq!(state.register("ip"), Some(BitVec::new(32, nf.ip.0 as u64)), "{what}: ip");
            assert_eq!(state.register("mac"), Some(BitVec::new(48, nf.mac.to_u64())), "{what}: mac");
        }
    }
    verdicts
}

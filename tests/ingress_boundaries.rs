//! The ingress checks at every frame length: each header prefix the ingress and the library
//! parse (untagged, 802.1Q, QinQ; IPv4 with IHL 5 to 15 and options, total length short, exact
//! and long; ARP), cut at every length from 0 to 80 bytes, through all four tiers at both bus
//! widths, for the learning switch and for an NF that reads deep headers (stats: the 5-tuple).
//! A 17-byte 802.1Q frame whose inner EtherType is cut after its first byte once went through
//! the CPU and the cycle model but was dropped by the Verilog (it read the cut `08` as 0x0800).

mod nf_common;

use emu::{Config, NfDescriptor};
use nf_common::{assert_agree, outcomes_at, Rng};

fn mac(k: u8) -> Vec<u8> {
    vec![2, 0, 0, 0, 0, k]
}

/// An IPv4 header of `ihl` words (options of NOPs), total length `total`, UDP, then 8 UDP bytes.
fn ipv4(ihl: u8, total: u16) -> Vec<u8> {
    let mut h = vec![0x40 | ihl, 0];
    h.extend(total.to_be_bytes());
    h.extend([0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
    h.resize(4 * ihl as usize, 1);
    h.extend([0x04, 0xd2, 0x16, 0x2e, 0, 8, 0, 0]);
    h
}

/// Whole frames of every prefix (each up to 80 bytes is cut at every length below).
fn prefixes() -> Vec<Vec<u8>> {
    let eth = |tags: usize, ty: u16, payload: &[u8]| {
        let mut f = mac(3);
        f.extend(mac(6));
        for t in 0..tags {
            f.extend([0x81, 0x00, 0x08, 0x15 + t as u8]);
        }
        f.extend(ty.to_be_bytes());
        f.extend_from_slice(payload);
        f.resize(f.len().max(80), 0x5a);
        f
    };
    let mut out = vec![];
    for tags in 0..=2 {
        for ihl in 5..=15u8 {
            let exact = 4 * ihl as u16 + 8;
            for total in [exact - 1, exact, exact + 40] {
                out.push(eth(tags, 0x0800, &ipv4(ihl, total)));
            }
        }
        for bad in [0x35u8, 0x44, 0x60] {
            let mut h = ipv4(5, 28);
            h[0] = bad;
            out.push(eth(tags, 0x0800, &h));
        }
        out.push(eth(tags, 0x0806, &[0, 1, 8, 0, 6, 4, 0, 1]));
        out.push(eth(tags, 0x88b5, &[1, 2, 3]));
    }
    out
}

/// A 60-byte unicast frame from host `src` to host `dst`, which the switch learns from.
fn learn(dst: u8, src: u8) -> Vec<u8> {
    let mut f = mac(dst);
    f.extend(mac(src));
    f.extend([0x88, 0xb5]);
    f.resize(60, 0);
    f
}

/// The learning pair, then every prefix cut at every length 0 to 80, on ports that vary.
fn sweep() -> Vec<(Vec<u8>, u8, u64)> {
    let mut frames = vec![(learn(6, 3), 1, 0)];
    let mut rng = Rng(0x17b_7e5);
    for p in prefixes() {
        for len in 0..=80 {
            frames.push((p[..len].to_vec(), rng.below(4) as u8, frames.len() as u64 * 1000));
        }
    }
    frames
}

fn agree_on_every_tier(desc: &NfDescriptor, frames: &[(Vec<u8>, u8, u64)]) {
    let untimed: Vec<(Vec<u8>, u8)> = frames.iter().map(|(f, p, _)| (f.clone(), *p)).collect();
    for width in [64, 256] {
        let tiers = outcomes_at(desc, &Config::new(), &["ir", "cycle", "verilator"], frames, width);
        assert_agree(desc, &untimed, &tiers);
    }
}

#[test]
fn a_vlan_frame_cut_inside_its_inner_ethertype_is_switched_on_every_tier() {
    let cut = [&mac(3)[..], &mac(6), &[0x81, 0x00, 0x08, 0x15, 0x08]].concat();
    assert_eq!(cut.len(), 17);
    let frames = vec![(learn(6, 3), 0, 0), (learn(3, 6), 1, 1), (cut, 0, 2), (learn(6, 3), 0, 3), (learn(3, 6), 1, 4)];
    agree_on_every_tier(&learning_switch::DESCRIPTOR, &frames);
}

#[test]
fn every_length_of_every_header_prefix_agrees_for_the_switch() {
    agree_on_every_tier(&learning_switch::DESCRIPTOR, &sweep());
}

#[test]
fn every_length_of_every_header_prefix_agrees_for_an_nf_that_reads_deep_headers() {
    agree_on_every_tier(&stats::DESCRIPTOR, &sweep());
}

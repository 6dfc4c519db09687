use super::*;
use emu::craft::{self, TcpSegment};

const A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const B: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const MAC_A: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 1]);
const MAC_B: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 2]);

fn run(nf: &mut Stats, f: &mut Vec<u8>, in_port: Port) -> Action {
    let meta = Meta { in_port, len: f.len() as u16, timestamp: 0 };
    nf.process(&mut Packet::new(f, WINDOW), &meta)
}

/// A UDP datagram A:sport → B:dport whose frame is `len` bytes (at least 42: under 60, the
/// frame is not padded).
fn udp_frame(sport: u16, dport: u16, len: usize) -> Vec<u8> {
    let mut f = craft::ethernet(MAC_B, MAC_A, 0x0800, &craft::udp(A, sport, B, dport, &vec![0x55; len - 42]));
    f.truncate(len);
    f
}

fn flow(nf: &Stats, key: u128) -> (u64, u64) {
    nf.flows.get(key).map(|v| ((v >> 64) as u64, v as u64)).unwrap_or((0, 0))
}

fn class(nf: &Stats, c: usize) -> (u64, u64) {
    let v = nf.classes.get(c);
    ((v >> 64) as u64, v as u64)
}

/// What the summary promises: the flows, the evicted flows and the classes add up to the
/// totals.
fn assert_totals_add_up(nf: &Stats) {
    let (mut p, mut b) = (nf.evicted_packets.get(), nf.evicted_bytes.get());
    for f in nf.flows_by_bytes() {
        p += f.packets;
        b += f.bytes;
    }
    for c in 0..CLASSES {
        let (cp, cb) = class(nf, c);
        p += cp;
        b += cb;
    }
    assert_eq!((p, b), (nf.packets.get(), nf.bytes.get()), "flows + evicted + classes = totals");
    let sizes: u64 = (0..SIZE_BUCKETS).map(|i| nf.sizes.get(i)).sum();
    assert_eq!(sizes, nf.packets.get(), "every packet in one size bucket");
}

#[test]
fn counts_packets_and_bytes_per_five_tuple() {
    let mut nf = Stats::new();
    for len in [100, 200, 300] {
        run(&mut nf, &mut udp_frame(40000, 5001, len), 0);
    }
    run(&mut nf, &mut udp_frame(40001, 5001, 1000), 0);
    let seg = TcpSegment { src_port: 33000, dst_port: 80, ..Default::default() };
    run(&mut nf, &mut craft::ethernet(MAC_A, MAC_B, 0x0800, &craft::tcp(B, A, seg, b"hello")), 1);
    let mut ping = craft::ethernet(MAC_B, MAC_A, 0x0800, &craft::icmp_echo(A, B, true, 7, 1, &[0; 56]));
    run(&mut nf, &mut ping, 0);
    assert_eq!(flow(&nf, flow_key(17, A, 40000, B, 5001)), (3, 600));
    assert_eq!(flow(&nf, flow_key(17, A, 40001, B, 5001)), (1, 1000));
    assert_eq!(flow(&nf, flow_key(6, B, 33000, A, 80)), (1, 60), "59 bytes, padded to 60");
    assert_eq!(flow(&nf, flow_key(1, A, 0, B, 0)), (1, 98), "ICMP has no ports: ports 0");
    assert_eq!((nf.packets.get(), nf.bytes.get()), (6, 600 + 1000 + 60 + 98));
    assert_eq!(nf.evictions.get(), 0);
    assert_totals_add_up(&nf);
    let top = nf.flows_by_bytes();
    assert_eq!((top[0].sport, top[0].bytes), (40001, 1000));
    assert_eq!((top[1].sport, top[1].packets), (40000, 3));
}

#[test]
fn size_histogram_edges_are_rfc_2819s() {
    let mut nf = Stats::new();
    let lengths = [42, 63, 64, 65, 127, 128, 255, 256, 511, 512, 1023, 1024, 1518, 1519, 9000];
    for len in lengths {
        run(&mut nf, &mut udp_frame(1, 2, len), 0);
    }
    let want = [2, 1, 2, 2, 2, 2, 2, 2];
    let got: Vec<u64> = (0..SIZE_BUCKETS).map(|i| nf.sizes.get(i)).collect();
    assert_eq!(got, want, "<64 | 64 | 65-127 | 128-255 | 256-511 | 512-1023 | 1024-1518 | >1518");
    assert_eq!(nf.bytes.get(), lengths.iter().map(|l| *l as u64).sum::<u64>());
    assert_totals_add_up(&nf);
}

#[test]
fn fragments_after_the_first_are_keyed_with_ports_0() {
    let mut nf = Stats::new();
    let mut first = craft::udp(A, 4000, B, 53, &[1; 40]);
    first[6] |= 0x20; // more fragments, offset 0: the ports are there
    let mut rest = craft::ipv4(A, B, 17, &[9; 30]);
    rest[6] = 0x00;
    rest[7] = 6; // offset 48 bytes: no transport header
    for ip in [&mut first, &mut rest] {
        let mut h = ip[..20].to_vec();
        emu::wire::ipv4::Header::new_unchecked(&mut h[..]).fill_checksum();
        ip[..20].copy_from_slice(&h);
    }
    run(&mut nf, &mut craft::ethernet(MAC_B, MAC_A, 0x0800, &first), 0);
    run(&mut nf, &mut craft::ethernet(MAC_B, MAC_A, 0x0800, &rest), 0);
    assert_eq!(flow(&nf, flow_key(17, A, 4000, B, 53)), (1, 14 + 20 + 8 + 40));
    assert_eq!(flow(&nf, flow_key(17, A, 0, B, 0)), (1, 14 + 20 + 30));
    assert_totals_add_up(&nf);
}

#[test]
fn vlan_tagged_ipv4_and_ip_options_are_flows_too() {
    let mut nf = Stats::new();
    let plain = udp_frame(7, 8, 100);
    let mut tagged = plain[..12].to_vec();
    tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x05, 0x81, 0x00, 0x00, 0x06]);
    tagged.extend_from_slice(&plain[12..]);
    run(&mut nf, &mut tagged, 0);
    // IHL 6: a 4-byte option (NOPs) before the ports.
    let udp = craft::udp(A, 7, B, 8, &[0; 10]);
    let mut ip = vec![0x46];
    ip.extend_from_slice(&udp[1..20]);
    ip.extend_from_slice(&[1, 1, 1, 1]);
    ip.extend_from_slice(&udp[20..]);
    let total = (ip.len() as u16).to_be_bytes();
    ip[2..4].copy_from_slice(&total);
    let mut h = ip[..24].to_vec();
    emu::wire::ipv4::Header::new_unchecked(&mut h[..]).fill_checksum();
    ip[..24].copy_from_slice(&h);
    run(&mut nf, &mut craft::ethernet(MAC_B, MAC_A, 0x0800, &ip), 0);
    assert_eq!(flow(&nf, flow_key(17, A, 7, B, 8)), (2, 108 + 60));
    assert_totals_add_up(&nf);
}

#[test]
fn other_frames_are_counted_by_class_and_switched() {
    let mut nf = Stats::new();
    let req = craft::arp(1, MAC_A, A, Mac::from_bytes([0; 6]), B);
    let mut arp = craft::ethernet(Mac::BROADCAST, MAC_A, 0x0806, &req);
    assert_eq!(run(&mut nf, &mut arp, 0), Action::Flood);
    let mut v6 = craft::ethernet(MAC_B, MAC_A, 0x86dd, &[0x60; 60]);
    run(&mut nf, &mut v6, 0);
    let mut lldp = craft::ethernet(MAC_B, MAC_A, 0x88cc, &[0; 46]);
    run(&mut nf, &mut lldp, 0);
    let mut three_tags = craft::ethernet(MAC_B, MAC_A, 0x8100, &[0, 1, 0x81, 0, 0, 2, 0x81, 0, 0, 3, 8, 0]);
    run(&mut nf, &mut three_tags, 0);
    // A wrong header checksum, and a UDP datagram whose IPv4 length leaves 2 bytes of ports.
    let mut bad = udp_frame(1, 2, 80);
    bad[24] ^= 0xff;
    let before = bad.clone();
    assert_eq!(run(&mut nf, &mut bad, 0), Action::Flood, "malformed IPv4 is still switched");
    assert_eq!(bad, before, "and unchanged");
    let mut cut = craft::ethernet(MAC_B, MAC_A, 0x0800, &craft::ipv4(A, B, 17, &[0, 1]));
    run(&mut nf, &mut cut, 0);
    assert_eq!(class(&nf, ARP), (1, 60));
    assert_eq!(class(&nf, IPV6), (1, 74));
    assert_eq!(class(&nf, OTHER), (2, 60 + 60));
    assert_eq!(class(&nf, MALFORMED), (2, 80 + 60));
    assert!(nf.flows.is_empty());
    assert_totals_add_up(&nf);
}

#[test]
fn a_full_set_evicts_and_the_evicted_counts_stay_in_the_totals() {
    let mut nf = Stats::new();
    // Six flows of one set (4 ways): the fifth evicts the first, the sixth the second.
    let set = nf.flows.set_of(flow_key(17, A, 1, B, 1));
    let same_set: Vec<u16> = (1..).filter(|p| nf.flows.set_of(flow_key(17, A, *p, B, 1)) == set).take(6).collect();
    for (i, &p) in same_set.iter().enumerate() {
        for _ in 0..=i {
            run(&mut nf, &mut udp_frame(p, 1, 100 + i), 0);
        }
    }
    assert_eq!(nf.evictions.get(), 2);
    assert_eq!((nf.evicted_packets.get(), nf.evicted_bytes.get()), (1 + 2, 100 + 2 * 101));
    assert_eq!(flow(&nf, flow_key(17, A, same_set[0], B, 1)), (0, 0), "evicted");
    assert_eq!(flow(&nf, flow_key(17, A, same_set[5], B, 1)), (6, 6 * 105));
    assert_eq!(nf.flows.len(), 4);
    assert_totals_add_up(&nf);
    let report = nf.report(Some(2));
    assert!(report.contains("  evicted packets 3 bytes 302 (flows evicted: 2)"), "{report}");
    assert!(report.contains("stats: top 2 of 4 flows by bytes"), "{report}");
}

#[test]
fn switches_as_the_learning_switch_does() {
    let mut nf = Stats::new();
    let mut f = udp_frame(1, 2, 64);
    assert_eq!(run(&mut nf, &mut f, 0), Action::Flood, "B unknown");
    let mut back = craft::ethernet(MAC_A, MAC_B, 0x0800, &craft::udp(B, 2, A, 1, &[0; 22]));
    assert_eq!(run(&mut nf, &mut back, 2), Action::Forward(0), "A learnt on port 0");
    assert_eq!(run(&mut nf, &mut udp_frame(1, 2, 64), 0), Action::Forward(2));
    assert_eq!(run(&mut nf, &mut udp_frame(1, 2, 64), 2), Action::Drop(DropReason::SamePort));
    assert_eq!(nf.packets.get(), 4, "a frame the switch drops is still counted");
    assert_eq!(nf.floods.get(), 1);
}

#[test]
fn the_summary_lists_totals_sizes_and_top_flows() {
    let mut r = build(&Config::new()).unwrap();
    assert_eq!(r.top, Some(20));
    for (p, n) in [(1u16, 3), (2, 1), (3, 2)] {
        for _ in 0..n {
            let mut f = udp_frame(p, 9, 200);
            let meta = Meta { in_port: 0, len: 200, timestamp: 0 };
            r.process(&mut Packet::new(&mut f, WINDOW), &meta);
        }
    }
    r.top = Some(2);
    let s = r.summary();
    let want = "\
stats: total packets 6 bytes 1200
  flows packets 6 bytes 1200 (in the table: 3 of 256)
  evicted packets 0 bytes 0 (flows evicted: 0)
  ipv4-malformed packets 0 bytes 0
  arp packets 0 bytes 0
  ipv6 packets 0 bytes 0
  other packets 0 bytes 0
stats: packet sizes (bytes, without FCS)
  size <64 packets 0
  size 64 packets 0
  size 65-127 packets 0
  size 128-255 packets 6
  size 256-511 packets 0
  size 512-1023 packets 0
  size 1024-1518 packets 0
  size >1518 packets 0
stats: top 2 of 3 flows by bytes
  flow udp 10.0.0.1:1 > 10.0.0.2:9 packets 3 bytes 600
  flow udp 10.0.0.1:3 > 10.0.0.2:9 packets 2 bytes 400
";
    assert_eq!(s, want);
    r.top = None;
    assert!(r.summary().contains("stats: top 3 of 3 flows by bytes\n"));
}

#[test]
fn top_takes_a_number_or_all() {
    assert_eq!(parse_top("5"), Ok(Some(5)));
    assert_eq!(parse_top("all"), Ok(None));
    let mut c = Config::new();
    c.set("top", "many");
    let e = build(&c).err().unwrap().0;
    assert_eq!(e, "--top many: `many` is not a number of flows; write e.g. 20, or all");
}

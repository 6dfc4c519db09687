//! Crafted packets through the server: each response code, the question as sent, the
//! checksums, the malformed questions, and the switch.

use super::*;
use emu::craft;
use emu::wire::{checksum, ipv4};

const SERVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 53);
const SERVER_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 0x53]);
const CLIENT: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const CLIENT_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 1]);
const OTHER_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 2]);

const ZONE: &str = "\
$ORIGIN example.com.
$TTL 3600
@        A 192.0.2.1
www  300 A 192.0.2.10
mail     A 192.0.2.25
";

fn server() -> DnsServer {
    from_zone(SERVER_MAC, SERVER, &parse(ZONE).unwrap())
}

/// `name` (dotted, as sent) in wire format.
fn wire(name: &str) -> Vec<u8> {
    zone::wire_name(name)
}

/// A DNS message: header (ID 0xbeef, `flags`, the counts), then `body`.
fn message(flags: u16, counts: [u16; 4], body: &[u8]) -> Vec<u8> {
    let mut m = vec![0xbe, 0xef];
    m.extend(flags.to_be_bytes());
    for c in counts {
        m.extend(c.to_be_bytes());
    }
    m.extend(body);
    m
}

/// A standard query with RD for `name`, `qtype`, class IN.
fn question(name: &str, qtype: u16) -> Vec<u8> {
    let mut q = wire(name);
    q.extend(qtype.to_be_bytes());
    q.extend(1u16.to_be_bytes());
    message(0x0100, [1, 0, 0, 0], &q)
}

/// `msg` from the client's port 40000 to the server's port 53.
fn frame(msg: &[u8]) -> Vec<u8> {
    craft::ethernet(SERVER_MAC, CLIENT_MAC, 0x0800, &craft::udp(CLIENT, 40000, SERVER, 53, msg))
}

fn run(nf: &mut DnsServer, f: &[u8], in_port: Port) -> (Action, Vec<u8>) {
    let mut f = f.to_vec();
    let meta = Meta { in_port, len: f.len() as u16, timestamp: 0 };
    let a = nf.process(&mut Packet::new(&mut f, WINDOW), &meta);
    (a, f)
}

/// The reply to `msg` from port 1: checked to be a well-formed datagram from the server back
/// to the client (both checksums right, the UDP one computed), its DNS message returned.
fn answer(nf: &mut DnsServer, msg: &[u8]) -> Vec<u8> {
    let (a, out) = run(nf, &frame(msg), 1);
    assert_eq!(a, Action::Reply, "{msg:02x?}");
    assert_eq!(&out[0..6], &CLIENT_MAC.bytes());
    assert_eq!(&out[6..12], &SERVER_MAC.bytes());
    let ip = ipv4::Header::new_checked(&out[14..]).unwrap();
    assert!(ip.checksum_ok());
    assert_eq!((ip.src(), ip.dst(), ip.protocol(), ip.total_len() as usize), (SERVER, CLIENT, 17, out.len() - 14));
    assert_eq!(&out[34..38], &[0, 53, 0x9c, 0x40], "from port 53 to the client's");
    assert_eq!(u16::from_be_bytes([out[38], out[39]]) as usize, out.len() - 34);
    assert_ne!(&out[40..42], &[0, 0], "the UDP checksum is computed");
    assert!(checksum::transport_ok(SERVER, CLIENT, 17, &out[34..], 6), "UDP checksum");
    out[42..].to_vec()
}

fn rcode(m: &[u8]) -> u8 {
    m[3] & 0xf
}

fn counts(m: &[u8]) -> [u16; 4] {
    [0, 1, 2, 3].map(|i| u16::from_be_bytes([m[4 + 2 * i], m[5 + 2 * i]]))
}

#[test]
fn a_known_name_gets_its_address() {
    let mut nf = server();
    let q = question("www.example.com.", 1);
    let r = answer(&mut nf, &q);
    assert_eq!(&r[..4], &[0xbe, 0xef, 0x85, 0x00], "ID; QR, AA, RD; NOERROR");
    assert_eq!(counts(&r), [1, 1, 0, 0]);
    assert_eq!(&r[12..q.len()], &q[12..], "the question echoed");
    let rr = &r[q.len()..];
    assert_eq!(rr, [0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0x01, 0x2c, 0, 4, 192, 0, 2, 10], "A, TTL 300, 192.0.2.10");
    // The apex, with the $TTL, and QTYPE ANY.
    let r = answer(&mut nf, &question("example.com.", 255));
    assert_eq!(&r[r.len() - 10..], &[0, 0, 0x0e, 0x10, 0, 4, 192, 0, 2, 1]);
    assert_eq!((nf.queries.get(), nf.answers.get()), (2, 2));
}

#[test]
fn names_are_case_insensitive_and_the_question_goes_back_as_sent() {
    let mut nf = server();
    let q = question("WwW.ExAmPlE.CoM.", 1);
    let r = answer(&mut nf, &q);
    assert_eq!(rcode(&r), 0);
    assert_eq!(&r[12..q.len()], &q[12..], "0x20 mixed case comes back unchanged");
    assert_eq!(&r[r.len() - 4..], &[192, 0, 2, 10]);
}

#[test]
fn nodata_nxdomain_refused_notimp() {
    let mut nf = server();
    let r = answer(&mut nf, &question("mail.example.com.", 28));
    assert_eq!((r[2], rcode(&r), counts(&r)), (0x85, 0, [1, 0, 0, 0]), "AAAA of a known name: NODATA");
    let q = question("nope.example.com.", 1);
    let r = answer(&mut nf, &q);
    assert_eq!((r[2], rcode(&r), counts(&r)), (0x85, 3, [1, 0, 0, 0]), "NXDOMAIN, AA");
    assert_eq!(r.len(), q.len());
    let long = format!("{}.example.com.", "a".repeat(60));
    assert!(wire(&long).len() > NAME_MAX);
    assert_eq!(rcode(&answer(&mut nf, &question(&long, 1))), 3, "longer than the table's names: NXDOMAIN");
    let mut q = question("www.example.com.", 1);
    let n = q.len();
    q[n - 1] = 3; // class CH
    let r = answer(&mut nf, &q);
    assert_eq!((r[2] & 0x04, rcode(&r), counts(&r)), (0, 5, [1, 0, 0, 0]), "REFUSED, not authoritative");
    let mut q = question("www.example.com.", 1);
    q[2] = 0x10; // opcode 2, STATUS
    let r = answer(&mut nf, &q);
    assert_eq!((r[2], rcode(&r), counts(&r), r.len()), (0x90, 4, [0; 4], 12), "NOTIMP, the header alone");
    assert_eq!(
        (nf.nodata.get(), nf.nxdomain.get(), nf.refused.get(), nf.notimp.get(), nf.queries.get()),
        (1, 2, 1, 1, 5)
    );
}

#[test]
fn malformed_questions_get_formerr() {
    let mut nf = server();
    let tail = [0u8, 1, 0, 1];
    let with = |name: &[u8], counts: [u16; 4]| {
        let mut body = name.to_vec();
        body.extend(tail);
        message(0x0100, counts, &body)
    };
    let www = wire("www.example.com.");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("QDCOUNT 0", with(&www, [0, 0, 0, 0])),
        ("QDCOUNT 2", with(&www, [2, 0, 0, 0])),
        ("a compression pointer to itself (a loop)", with(&[0xc0, 12], [1, 0, 0, 0])),
        ("a pointer after a label", with(&[3, b'w', b'w', b'w', 0xc0, 12], [1, 0, 0, 0])),
        ("a label length past the message", message(0x0100, [1, 0, 0, 0], &[10, b'a', b'b'])),
        ("label type 0x40", with(&[0x40, b'a', 0], [1, 0, 0, 0])),
        ("a name over 255 bytes", with(&[[63u8; 64].as_slice(); 5].concat(), [1, 0, 0, 0])),
        ("no terminating label", message(0x0100, [1, 0, 0, 0], &[3, b'w', b'w', b'w'])),
        ("no QTYPE and QCLASS", message(0x0100, [1, 0, 0, 0], &www)),
        ("half a QCLASS", message(0x0100, [1, 0, 0, 0], &[www.as_slice(), &[0, 1, 0]].concat())),
        ("a 12-byte query", message(0x0100, [1, 0, 0, 0], &[])),
    ];
    for (what, q) in &cases {
        let r = answer(&mut nf, q);
        assert_eq!((&r[..2], r[2], rcode(&r), counts(&r), r.len()), (&[0xbe, 0xef][..], 0x81, 1, [0; 4], 12), "{what}");
    }
    assert_eq!(nf.formerr.get(), cases.len() as u64);
    // A name of exactly 255 bytes is well formed (and not in the zone).
    let mut name = [[62u8; 63].as_slice(); 4].concat();
    name.extend([1, b'a', 0]);
    assert_eq!(name.len(), 255);
    let r = answer(&mut nf, &with(&name, [1, 0, 0, 0]));
    assert_eq!(rcode(&r), 3);
}

#[test]
fn short_messages_responses_and_damage_are_dropped_with_reasons() {
    let mut nf = server();
    let drop = |nf: &mut DnsServer, f: &[u8]| run(nf, f, 1).0;
    assert_eq!(drop(&mut nf, &frame(&[0xbe; 11])), Action::Drop(DropReason::Malformed), "under 12 bytes");
    let mut response = question("www.example.com.", 1);
    response[2] |= 0x80;
    assert_eq!(drop(&mut nf, &frame(&response)), Action::Drop(DropReason::NotForUs), "QR set: never answered");
    let mut f = frame(&question("www.example.com.", 1));
    f[14 + 10] ^= 1;
    assert_eq!(drop(&mut nf, &f), Action::Drop(DropReason::Ipv4Checksum));
    let mut f = frame(&question("www.example.com.", 1));
    f[42 + 13] ^= 0x20; // a letter of the name
    assert_eq!(drop(&mut nf, &f), Action::Drop(DropReason::TransportChecksum));
    f[40] = 0;
    f[41] = 0;
    assert_eq!(drop(&mut nf, &f).clone(), Action::Reply, "UDP checksum 0: none, accepted");
    let other_port = craft::ethernet(SERVER_MAC, CLIENT_MAC, 0x0800, &craft::udp(CLIENT, 40000, SERVER, 5353, b"x"));
    assert_eq!(drop(&mut nf, &other_port), Action::Drop(DropReason::NotForUs));
    let ping = craft::ethernet(SERVER_MAC, CLIENT_MAC, 0x0800, &craft::icmp_echo(CLIENT, SERVER, true, 1, 1, b"x"));
    assert_eq!(drop(&mut nf, &ping), Action::Drop(DropReason::NotForUs));
    let mut f = frame(&question("www.example.com.", 1));
    f[38] = 0xff; // a UDP length past the packet
    assert_eq!(drop(&mut nf, &f), Action::Drop(DropReason::Malformed));
    assert_eq!(nf.queries.get(), 1);
}

#[test]
fn an_edns_query_is_answered_without_the_opt_record() {
    let mut nf = server();
    let mut q = question("www.example.com.", 1);
    q[11] = 1; // ARCOUNT 1
    let plain = q.len();
    // OPT: root name, type 41, UDP size 1232, extended rcode and flags (DO), no options.
    q.extend([0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 0]);
    let r = answer(&mut nf, &q);
    assert_eq!((rcode(&r), counts(&r)), (0, [1, 1, 0, 0]));
    assert_eq!(r.len(), plain + 16, "question and answer, no OPT");
    // Ethernet padding after a short datagram is not part of the message.
    let mut f = frame(&question("mail.example.com.", 1));
    f.extend([0xee; 8]);
    let (a, out) = run(&mut nf, &f, 1);
    assert_eq!((a, out.len()), (Action::Reply, 42 + question("mail.example.com.", 1).len() + 16));
}

#[test]
fn arp_for_the_server_is_answered_and_other_traffic_switched() {
    let mut nf = server();
    let req = craft::ethernet(
        Mac::BROADCAST,
        CLIENT_MAC,
        0x0806,
        &craft::arp(1, CLIENT_MAC, CLIENT, Mac::from_bytes([0; 6]), SERVER),
    );
    let (a, out) = run(&mut nf, &req, 1);
    assert_eq!(a, Action::Reply);
    let rep = emu::wire::arp::Header::new_checked(&out[14..]).unwrap();
    assert_eq!((rep.oper(), rep.sha(), rep.spa(), rep.tha(), rep.tpa()), (2, SERVER_MAC, SERVER, CLIENT_MAC, CLIENT));
    assert_eq!(&out[..12], &[CLIENT_MAC.bytes(), SERVER_MAC.bytes()].concat());
    let other = Ipv4Addr::new(10, 0, 0, 2);
    let req = craft::ethernet(
        Mac::BROADCAST,
        CLIENT_MAC,
        0x0806,
        &craft::arp(1, CLIENT_MAC, CLIENT, Mac::from_bytes([0; 6]), other),
    );
    assert_eq!(run(&mut nf, &req, 1), (Action::Flood, req.clone()), "ARP for another host: flooded");
    let ping = craft::ethernet(CLIENT_MAC, OTHER_MAC, 0x0800, &craft::icmp_echo(other, CLIENT, true, 1, 1, b"x"));
    assert_eq!(run(&mut nf, &ping, 2).0, Action::Forward(1), "the client's MAC was learned on port 1");
    let dns_elsewhere = craft::ethernet(
        OTHER_MAC,
        CLIENT_MAC,
        0x0800,
        &craft::udp(CLIENT, 4, other, 53, &question("www.example.com.", 1)),
    );
    assert_eq!(
        run(&mut nf, &dns_elsewhere, 1),
        (Action::Forward(2), dns_elsewhere.clone()),
        "DNS to another server passes"
    );
    assert_eq!((nf.arp_replies.get(), nf.floods.get()), (1, 1));
}

#[test]
fn the_summary_and_the_descriptor() {
    let dir = std::env::temp_dir().join(format!("emu-dns-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.zone");
    std::fs::write(&good, ZONE).unwrap();
    let mut c = Config::new();
    c.set("zone", good.to_str().unwrap()).set("ip", "10.0.0.53");
    let mut nf = (DESCRIPTOR.build)(&c).unwrap();
    let mut f = frame(&question("www.example.com.", 1));
    nf.process(&mut Packet::new(&mut f, WINDOW), &Meta { in_port: 0, len: 80, timestamp: 0 });
    let s = nf.summary();
    assert!(s.starts_with("dns-server: 1 queries answered: 1 A, 0 NODATA, 0 NXDOMAIN"), "{s}");
    assert!(s.contains("3 names in the zone"), "{s}");
    // What the other tiers load: the zone in slots 0, 1, 2 and the addresses.
    let state = DESCRIPTOR.initial_state(&c).unwrap();
    let of = |name: &str| state.iter().find(|e| e.name == name).unwrap().entries.clone();
    let zone = of("zone");
    assert_eq!(zone.iter().filter(|e| e[0] == 1).count(), 3);
    let name = wire("www.example.com.");
    assert_eq!(zone[1][0], 1);
    assert_eq!(&zone[1][1..1 + name.len()], &name[..]);
    assert!(zone[1].ends_with(&[0, 0, 1, 0x2c, 192, 0, 2, 10]), "{:?}", zone[1]);
    assert_eq!((of("mac"), of("ip")), (vec![vec![2, 0, 0, 0, 0, 0x53]], vec![vec![10, 0, 0, 0x35]]));
    let bad = dir.join("bad.zone");
    std::fs::write(&bad, "$TTL 60\nwww.example.com. IN MX 10 mail\n").unwrap();
    c.set("zone", bad.to_str().unwrap());
    let e = (DESCRIPTOR.build)(&c).err().unwrap().0;
    assert!(e.ends_with("bad.zone:2:21: `MX` records are not served: the server answers A queries only; remove the line or write `NAME [TTL] [IN] A a.b.c.d`"), "{e}");
    assert!((DESCRIPTOR.build)(&Config::new()).err().unwrap().0.starts_with("--zone is required"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_example_zone_parses() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/example.zone")).unwrap();
    let z = parse(&text).unwrap();
    assert!(z.records.iter().any(|r| r.name == "www.example.com."), "{z:?}");
}

//! Writes `examples/mixed.pcapng`, the example traffic: six hosts on four ports of a switch
//! exchanging ARP, ICMP, UDP (unicast, broadcast, multicast) and a TCP connection. The pcapng
//! interface id of each frame is the switch port it arrives on.
//!
//! ```sh
//! cargo run --example gen_example            # rewrites examples/mixed.pcapng
//! cargo run --example gen_example -- out.pcapng
//! ```
//!
//! Hosts: h1 (10.0.0.1) and h5 (10.0.0.5) on port 0, h2 on port 1, h3 on port 2, h4 and h6 on
//! port 3; host k has MAC 02:00:00:00:00:0k.

use emu::craft::{self, TcpFlags, TcpSegment};
use emu::{Ipv4Addr, Mac};
use emu_cpu::PortsWriter;

const PORTS: u32 = 4;
/// 2026-01-01T00:00:00Z, so the file is the same on every run.
const START_NS: u64 = 1_767_225_600_000_000_000;

fn mac(k: u8) -> Mac {
    Mac::from_bytes([2, 0, 0, 0, 0, k])
}

fn ip(k: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, k)
}

fn port_of(k: u8) -> u32 {
    match k {
        1 | 5 => 0,
        2 => 1,
        3 => 2,
        _ => 3,
    }
}

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/examples/mixed.pcapng").into());
    let tcp = |a: u8, b: u8, seq_no, ack_no, flags, data: &[u8]| {
        let seg = TcpSegment { src_port: if a == 4 { 40000 } else { 80 }, dst_port: if a == 4 { 80 } else { 40000 }, seq_no, ack_no, flags };
        (a, craft::ethernet(mac(b), mac(a), 0x0800, &craft::tcp(ip(a), ip(b), seg, data)))
    };
    let syn = TcpFlags { syn: true, ..Default::default() };
    let syn_ack = TcpFlags { syn: true, ack: true, ..Default::default() };
    let ack = TcpFlags { ack: true, ..Default::default() };
    let psh_ack = TcpFlags { ack: true, psh: true, ..Default::default() };
    let fin_ack = TcpFlags { ack: true, fin: true, ..Default::default() };
    let request = b"GET / HTTP/1.0\r\n\r\n";
    let response = b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello";

    // (sending host, frame)
    let frames: Vec<(u8, Vec<u8>)> = vec![
        // h1 asks for h2 (broadcast, floods), h2 answers (h1 learned: forwarded).
        (1, craft::ethernet(Mac::BROADCAST, mac(1), 0x0806, &craft::arp(1, mac(1), ip(1), Mac::default(), ip(2)))),
        (2, craft::ethernet(mac(1), mac(2), 0x0806, &craft::arp(2, mac(2), ip(2), mac(1), ip(1)))),
        // Ping h1 → h2 and back.
        (1, craft::ethernet(mac(2), mac(1), 0x0800, &craft::icmp_echo(ip(1), ip(2), true, 0x4d2, 1, &[0x61; 56]))),
        (2, craft::ethernet(mac(1), mac(2), 0x0800, &craft::icmp_echo(ip(2), ip(1), false, 0x4d2, 1, &[0x61; 56]))),
        // h3 queries h4 over UDP (h4 unknown yet: floods); h4 answers.
        (3, craft::ethernet(mac(4), mac(3), 0x0800, &craft::udp(ip(3), 5353, ip(4), 53, b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x04emux\x00\x00\x01\x00\x01"))),
        (4, craft::ethernet(mac(3), mac(4), 0x0800, &craft::udp(ip(4), 53, ip(3), 5353, b"\x12\x34\x81\x83\x00\x01\x00\x00\x00\x00\x00\x00\x04emux\x00\x00\x01\x00\x01"))),
        // A TCP connection h4 → h1:80.
        tcp(4, 1, 1000, 0, syn, b""),
        tcp(1, 4, 5000, 1001, syn_ack, b""),
        tcp(4, 1, 1001, 5001, ack, b""),
        tcp(4, 1, 1001, 5001, psh_ack, request),
        tcp(1, 4, 5001, 1001 + request.len() as u32, psh_ack, response),
        tcp(4, 1, 1001 + request.len() as u32, 5001 + response.len() as u32, fin_ack, b""),
        // h5 talks to h1, which is on its own port: the switch drops it.
        (5, craft::ethernet(mac(1), mac(5), 0x0800, &craft::udp(ip(5), 9000, ip(1), 9000, b"same segment"))),
        // A UDP broadcast from h3 and an mDNS query (multicast) from h6.
        (3, craft::ethernet(Mac::BROADCAST, mac(3), 0x0800, &craft::udp(ip(3), 9999, Ipv4Addr::new(10, 0, 0, 255), 9999, b"hello, everyone"))),
        (6, craft::ethernet(Mac::from_bytes([1, 0, 0x5e, 0, 0, 0xfb]), mac(6), 0x0800, &craft::udp(ip(6), 5353, Ipv4Addr::new(224, 0, 0, 251), 5353, b"\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x02h6\x05local\x00\x00\x01\x00\x01"))),
        // Ping h2 → h3 and back, both known by now.
        (2, craft::ethernet(mac(3), mac(2), 0x0800, &craft::icmp_echo(ip(2), ip(3), true, 0x99, 1, b"emu example"))),
        (3, craft::ethernet(mac(2), mac(3), 0x0800, &craft::icmp_echo(ip(3), ip(2), false, 0x99, 1, b"emu example"))),
    ];

    let mut w = PortsWriter::create(std::path::Path::new(&path), PORTS as usize).unwrap_or_else(|e| panic!("{e}"));
    for (i, (host, data)) in frames.iter().enumerate() {
        w.write(port_of(*host) as u8, START_NS + i as u64 * 1_000_000, data).expect("packet block");
    }
    w.finish().expect("the file");
    println!("wrote {} frames on {PORTS} ports to {path}", frames.len());
}

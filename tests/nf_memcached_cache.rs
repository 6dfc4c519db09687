//! memcached-cache end to end: in Mininet, real clients through the cache to a real memcached
//! (memcaslap's ASCII load over UDP, a binary SET over UDP with memccp, binary GET and DELETE
//! and the no-stale-read checks with the test's own UDP client, the server's contents and
//! counters read with pymemcache over TCP).

mod nf_common;

use emu::{craft, Config, Ipv4Addr, Mac};
use nf_common::{assert_agree, histogram, outcomes, text, Rng};
use std::process::Command;

const SERVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const SERVER_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 2]);

fn client(k: u64) -> (Ipv4Addr, Mac, u16) {
    (Ipv4Addr::new(10, 0, 0, 10 + k as u8), Mac::from_bytes([2, 0, 0, 0, 0, 0x10 + k as u8]), 40000 + k as u16)
}

fn config(mode: &str) -> Config {
    let mut c = Config::new();
    c.set("mode", mode);
    c
}

fn datagram(rng: &mut Rng, id: u16, body: &[u8]) -> Vec<u8> {
    let mut p = id.to_be_bytes().to_vec();
    // Now and then a message of several datagrams, or a later one of them.
    let (seq, count) = match rng.below(30) {
        0 => (0u16, 2u16),
        1 => (1, 2),
        _ => (0, 1),
    };
    p.extend(seq.to_be_bytes());
    p.extend(count.to_be_bytes());
    p.extend([0, 0]);
    p.extend(body);
    p
}

fn binary(opcode: u8, extras: &[u8], key: &[u8], value: &[u8], magic: u8, status: u16) -> Vec<u8> {
    let total = (extras.len() + key.len() + value.len()) as u32;
    let mut b = vec![magic, opcode];
    b.extend((key.len() as u16).to_be_bytes());
    b.extend([extras.len() as u8, 0]);
    b.extend(status.to_be_bytes());
    b.extend(total.to_be_bytes());
    b.extend(0x1234_5678u32.to_be_bytes());
    b.extend([0; 8]);
    b.extend(extras);
    b.extend(key);
    b.extend(value);
    b
}

/// Client requests (ASCII and binary GET, SET, DELETE, flush, others; keys from a small pool
/// with some longer than the cache holds, values around the largest it holds), the server's
/// answers to earlier requests (values, misses, wrong keys, binary responses), traffic for
/// other ports, and damage: cut frame headers and binary headers, total body lengths past the
/// datagram, UDP lengths past the packet, IPv4 options, fragments, bad IPv4 checksums.
fn traffic(seed: u64, n: usize) -> Vec<(Vec<u8>, u8)> {
    let mut rng = Rng(seed | 1);
    let keys: Vec<Vec<u8>> = (0..12)
        .map(|i| {
            let len = [1, 5, 16, 17, 31, 32, 33, 40][i % 8];
            (0..len).map(|j| b'a' + ((i * 7 + j) % 26) as u8).collect()
        })
        .collect();
    let mut asked: Vec<(u64, u16, Vec<u8>, bool)> = vec![];
    let mut out = vec![];
    for _ in 0..n {
        let k = rng.below(3);
        let (cip, cmac, cport) = client(k);
        let key = keys[rng.below(keys.len() as u64) as usize].clone();
        let vlen = rng.pick(&[0usize, 1, 10, 63, 64, 65, 100]);
        let value: Vec<u8> = (0..vlen).map(|_| b'A' + rng.below(26) as u8).collect();
        let id = rng.below(0x10000) as u16;
        let kind = rng.below(100);
        let (body, from_server) = if kind < 35 {
            let binary_get = rng.below(3) == 0;
            asked.push((k, id, key.clone(), binary_get));
            if binary_get {
                (binary(0, b"", &key, b"", 0x80, 0), false)
            } else {
                ([b"get ".to_vec(), key.clone(), b"\r\n".to_vec()].concat(), false)
            }
        } else if kind < 68 && !asked.is_empty() {
            // An answer to an earlier GET (to its client and request id).
            // Mostly to one of the latest (whose miss is still pending).
            let window = if rng.below(4) == 0 { 20 } else { 2 };
            let back = rng.below(asked.len().min(window) as u64) as usize;
            let (k2, id2, key2, bin) = asked[asked.len() - 1 - back].clone();
            let (cip2, cmac2, cport2) = client(k2);
            let body = match (bin, rng.below(6)) {
                (true, 0) => binary(0, b"", b"", b"", 0x81, 1),
                (true, _) => binary(0, &(rng.next() as u32).to_be_bytes(), b"", &value, 0x81, 0),
                (false, 0) => b"END\r\n".to_vec(),
                (false, 1) => [
                    b"VALUE ".to_vec(),
                    key.clone(),
                    format!(" 0 {}\r\n", value.len()).into_bytes(),
                    value.clone(),
                    b"\r\nEND\r\n".to_vec(),
                ]
                .concat(),
                (false, _) => [
                    b"VALUE ".to_vec(),
                    key2,
                    format!(" {} {}\r\n", rng.next() as u32, value.len()).into_bytes(),
                    value.clone(),
                    b"\r\nEND\r\n".to_vec(),
                ]
                .concat(),
            };
            let p = datagram(&mut rng, id2, &body);
            let f = craft::ethernet(cmac2, SERVER_MAC, 0x0800, &craft::udp(SERVER, 11211, cip2, cport2, &p));
            out.push((f, 1));
            continue;
        } else if kind < 76 {
            let flags = rng.next() as u32;
            let text = match rng.below(8) {
                0 => format!(" {flags} 0 {} noreply\r\n", value.len()),
                1 => format!(" {flags} -1 {}\r\n", value.len() + 1),
                2 => format!(" {flags} 0\r\n"),
                _ => format!(" {flags} 0 {}\r\n", value.len()),
            };
            ([b"set ".to_vec(), key.clone(), text.into_bytes(), value.clone(), b"\r\n".to_vec()].concat(), false)
        } else if kind < 79 {
            let mut extras = (rng.next() as u32).to_be_bytes().to_vec();
            extras.extend([0; 4]);
            let op = rng.pick(&[0x01u8, 0x11, 0x01]);
            (binary(op, &extras, &key, &value, 0x80, 0), false)
        } else if kind < 82 {
            let noreply = if rng.below(3) == 0 { " noreply" } else { "" };
            if rng.below(2) == 0 {
                ([b"delete ".to_vec(), key.clone(), noreply.as_bytes().to_vec(), b"\r\n".to_vec()].concat(), false)
            } else {
                (binary(rng.pick(&[0x04u8, 0x14]), b"", &key, b"", 0x80, 0), false)
            }
        } else if kind < 84 {
            (
                rng.pick(&[&b"flush_all\r\n"[..], b"stats\r\n", b"gets a b\r\n", b"get a b\r\n", b"incr abcde 1\r\n"])
                    .to_vec(),
                false,
            )
        } else if kind < 86 {
            (binary(rng.pick(&[0x08u8, 0x0a, 0x05, 0x07, 0x0c]), b"", &key, b"", 0x80, 0), false)
        } else {
            // Damage.
            let mut b = binary(0, b"", &key, b"", 0x80, 0);
            match rng.below(4) {
                0 => b.truncate(rng.below(24) as usize),
                1 => b[11] = b[11].wrapping_add(1 + rng.below(200) as u8),
                2 => b[3] = 200,
                _ => {
                    let n = rng.below(40) as usize;
                    b = rng.bytes(n)
                }
            }
            (b, rng.below(4) == 0)
        };
        let mut p = datagram(&mut rng, id, &body);
        if rng.below(40) == 0 {
            p.truncate(rng.below(8) as usize);
        }
        let (sport, dport) = if rng.below(25) == 0 { (cport, 53) } else { (cport, 11211) };
        let mut f = if from_server {
            craft::ethernet(cmac, SERVER_MAC, 0x0800, &craft::udp(SERVER, 11211, cip, cport, &p))
        } else {
            craft::ethernet(SERVER_MAC, cmac, 0x0800, &craft::udp(cip, sport, SERVER, dport, &p))
        };
        match rng.below(80) {
            0 => f[24] ^= 0x40,                            // IPv4 checksum
            1 => f[20] |= 0x20,                            // more fragments (checksum now wrong too)
            2 => f[38..40].copy_from_slice(&[0xff, 0xf0]), // UDP length past the packet
            _ => {}
        }
        out.push((f, from_server as u8));
    }
    out
}

/// cpu and ir agree, both modes, on generated traffic with damage mixed in (six seeds in one
/// run per mode: the interpreter's build is the slow part).
#[test]
fn cpu_and_ir_agree_on_generated_traffic() {
    let frames: Vec<(Vec<u8>, u8)> = (1..=6u64).flat_map(|seed| traffic(seed * 0x9e37_79b9, 150)).collect();
    for mode in ["cache", "server"] {
        let tiers = outcomes(&memcached_cache::DESCRIPTOR, &config(mode), &["ir"], &frames);
        assert_agree(&memcached_cache::DESCRIPTOR, &frames, &tiers);
    }
}

/// The generated traffic reaches every path: hits answered, misses passed on, fills, and
/// every drop.
#[test]
fn generated_traffic_covers_the_paths() {
    let frames = traffic(0x6d63_2026, 600);
    for (mode, want) in [
        ("cache", &["sent 0b1", "sent 0b10", "malformed", "ipv4_checksum"][..]),
        ("server", &["sent 0b1", "sent 0b10", "malformed", "ipv4_checksum", "policy", "unsupported"][..]),
    ] {
        let tiers = outcomes(&memcached_cache::DESCRIPTOR, &config(mode), &[], &frames);
        let h = histogram(&tiers[0].1);
        for k in want {
            assert!(h.contains_key(*k), "{mode}: no `{k}` in {h:?}");
        }
    }
    let mut n = memcached_cache::build(&config("cache")).unwrap();
    for (f, p) in &frames {
        if emu::check_frame(f, 1518).is_ok() {
            let mut g = f.clone();
            let meta = emu::Meta { in_port: *p, len: g.len() as u16, timestamp: 0 };
            emu::NetworkFunction::process(&mut n, &mut emu::Packet::new(&mut g, memcached_cache::WINDOW), &meta);
        }
    }
    let s = memcached_cache::summary(&n);
    assert!(n.hits.get() > 10 && n.fills.get() > 5 && n.invalidations.get() > 20 && n.stale_fills.get() > 0, "{s}");
}

/// The test's own memcached UDP client (binary GET, SET, DELETE and raw ASCII): no Debian
/// client does a binary GET or DELETE over UDP.
const CLIENT: &str = include_str!("memcached_udp_client.py");

/// h1 (client, port 0) — mc1 (the cache) — h2 (memcached, port 1). The switch has a name of
/// its own so this experiment's interfaces do not clash with another's.
const TOPO: &str = r#"{"hosts": [{"name": "h1", "ip": "10.0.0.1/24"}, {"name": "h2", "ip": "10.0.0.2/24"}],
  "switches": ["mc1"], "links": [["h1", "mc1"], ["h2", "mc1"]]}"#;

/// The server's `cmd_get` and what it holds under `key`, over TCP (which the cache passes).
fn server_says(key: &str) -> String {
    format!(
        "h1: /usr/bin/python3 -c \"from pymemcache.client.base import Client; c = Client(('10.0.0.2', 11211)); \
         print('server cmd_get', int(c.stats()[b'cmd_get']), '{key} =', c.get('{key}'))\""
    )
}

#[test]
fn real_clients_through_the_cache_in_mininet() {
    let uid = Command::new("id").arg("-u").output().expect("id");
    assert_eq!(text(&uid.stdout).trim(), "0", "the Mininet tests need root (CI runs as root); run them with sudo");
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("cache.json");
    std::fs::write(&topo, TOPO).unwrap();
    let client = dir.path().join("udp_client.py");
    std::fs::write(&client, CLIENT).unwrap();
    let c = format!("/usr/bin/python3 {} 10.0.0.2:11211", client.display());
    let script = dir.path().join("experiment.txt");
    std::fs::write(
        &script,
        format!(
            "\
h2 &: memcached -u nobody -l 10.0.0.2 -p 11211 -U 11211 -m 16
sleep 1
h1: printf 'key\\n32 32 1\\nvalue\\n64 64 1\\ncmd\\n0 0.1\\n1 0.9\\n' > $WORK/cfg
h1: memcaslap -s 10.0.0.2:11211 -U -T 1 -c 1 -t 2s -w 1k -F $WORK/cfg
h1: printf 'binary-value-1' > $WORK/bkey
h1: cd $WORK && memccp --servers=10.0.0.2:11211 --udp --binary bkey
{server}
h1: {c} bget bkey
h1: {c} bget bkey
h1: {c} bget bkey
{server}
h1: {c} bset bkey binary-value-2
h1: {c} bget bkey
h1: {c} bget bkey
h1: {c} bdel bkey
h1: {c} bget bkey
h1: {c} ascii 'set fresh 1 0 3\\r\\nold\\r\\n'
h1: {c} ascii 'get fresh\\r\\n'
h1: {c} ascii 'get fresh\\r\\n'
h1: {c} ascii 'set fresh 2 0 3\\r\\nnew\\r\\n'
h1: {c} ascii 'get fresh\\r\\n'
h1: {c} ascii 'delete fresh\\r\\n'
h1: {c} ascii 'get fresh\\r\\n'
{fresh}
",
            server = server_says("bkey"),
            fresh = server_says("fresh"),
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_emu"))
        .args(["mininet", "memcached-cache", "--topo", topo.to_str().unwrap(), "--run"])
        .arg(&script)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    // memcaslap's ASCII load: every GET found its value (from the cache or the server).
    assert!(stdout.contains("get_misses: 0") && stdout.contains("cmd_get: "), "{stdout}");
    // memccp's binary SET over UDP reached the server through the cache.
    let gets: Vec<u64> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("| server cmd_get"))
        .map(|l| l.split_whitespace().nth(3).unwrap().parse().unwrap())
        .collect();
    assert!(stdout.contains("bkey = b'binary-value-1'"), "{stdout}");
    // Three binary GETs: the first missed and went to the server, the others were hits
    // answered by the NF. The server counted two gets between its two reports: that miss, and
    // pymemcache's own get after the first report.
    assert_eq!(gets.len(), 3, "{stdout}");
    assert_eq!(gets[1] - gets[0], 2, "two of three binary GETs were answered by the cache: {stdout}");
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("| bget ") || l.contains("| bset ") || l.contains("| bdel ") || l.contains("| ascii "))
        .collect();
    let want = [
        "bget bkey status=0 flags=0x0 value=binary-value-1",
        "bget bkey status=0 flags=0x0 value=binary-value-1",
        "bget bkey status=0 flags=0x0 value=binary-value-1",
        "bset bkey status=0",
        // No stale read after a SET through the NF.
        "bget bkey status=0 flags=0xc0ffee value=binary-value-2",
        "bget bkey status=0 flags=0xc0ffee value=binary-value-2",
        "bdel bkey status=0",
        "bget bkey status=1",
        "ascii STORED|",
        "ascii VALUE fresh 1 3|old|END|",
        "ascii VALUE fresh 1 3|old|END|",
        "ascii STORED|",
        "ascii VALUE fresh 2 3|new|END|",
        "ascii DELETED|",
        "ascii END|",
    ];
    assert_eq!(lines.len(), want.len(), "{lines:#?}");
    for (got, want) in lines.iter().zip(want) {
        assert!(got.ends_with(want), "got `{got}`, want `{want}`");
    }
    assert!(stdout.contains("fresh = None"), "the DELETE reached the server: {stdout}");
    // The NF's own account: hits it answered, fills from the server, invalidations.
    let summary = stdout
        .lines()
        .find(|l| l.contains("memcached-cache (cache): "))
        .unwrap_or_else(|| panic!("no summary in {stdout}"));
    let count = |what: &str| -> u64 {
        let at = summary.find(&format!(" {what}")).unwrap_or_else(|| panic!("{what} in {summary}"));
        summary[..at].rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert!(count("hits,") > 500, "memcaslap's GETs were answered by the cache: {summary}");
    assert!(count("fills,") > 100 && count("invalidations,") > 50, "{summary}");
    assert_eq!(count("malformed,"), 0, "{summary}");
}

/// `emu hls` builds it (both protocols, both modes: one circuit) and reports its cycles and
/// memories; the NF's module and its elements lint as one design under Verilator.
#[test]
fn hls_builds_it() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("hls");
    let out = nf_common::emu(&["hls", "memcached-cache", "--width", "64", "-o", o.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("memcached-cache: 64-bit bus, 256-byte window, 2 ports")
            && stdout.contains("cycles per packet"),
        "{stdout}"
    );
    let report = std::fs::read_to_string(o.join("report.md")).unwrap();
    for m in
        ["| index | LRU", "| keys | array", "| values | array", "| pending | array", "| reply |", "| drop malformed |"]
    {
        assert!(report.contains(m), "no `{m}` in the report");
    }
    let mut verilog = String::new();
    for f in std::fs::read_dir(o.join("verilog")).unwrap() {
        verilog += &std::fs::read_to_string(f.unwrap().path()).unwrap();
    }
    emu_hls::hw::tools::verilator_lint_design(&verilog, "emu_memcached_cache", true).unwrap_or_else(|e| panic!("{e}"));
}

/// The cycle model (the scheduled FSM the Verilog is generated from) agrees with the CPU,
/// both modes, on generated traffic.
#[test]
fn cycle_model_agrees() {
    let frames: Vec<(Vec<u8>, u8)> = (7..=8u64).flat_map(|seed| traffic(seed * 0x9e37_79b9, 150)).collect();
    for mode in ["cache", "server"] {
        let tiers = outcomes(&memcached_cache::DESCRIPTOR, &config(mode), &["cycle"], &frames);
        assert_agree(&memcached_cache::DESCRIPTOR, &frames, &tiers);
    }
}

/// The generated Verilog under Verilator sends the CPU's frames out of the CPU's ports, both
/// modes, on generated traffic (one circuit: the mode is a register the configuration sets).
#[test]
fn verilator_agrees() {
    let frames: Vec<(Vec<u8>, u8)> = traffic(9 * 0x9e37_79b9, 200);
    for mode in ["cache", "server"] {
        let tiers = outcomes(&memcached_cache::DESCRIPTOR, &config(mode), &["verilator"], &frames);
        assert_agree(&memcached_cache::DESCRIPTOR, &frames, &tiers);
    }
}

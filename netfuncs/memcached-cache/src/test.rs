use super::*;
use emu::craft;

const CLIENT: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const SERVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const CLIENT_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 1]);
const SERVER_MAC: Mac = Mac::from_bytes([2, 0, 0, 0, 0, 2]);
const CPORT: u16 = 40000;

fn frame_header(id: u16, seq: u16, count: u16) -> Vec<u8> {
    let mut h = id.to_be_bytes().to_vec();
    h.extend(seq.to_be_bytes());
    h.extend(count.to_be_bytes());
    h.extend([0, 0]);
    h
}

/// A request datagram from the client to the server, request id `id`.
fn request(id: u16, body: &[u8]) -> Vec<u8> {
    let mut p = frame_header(id, 0, 1);
    p.extend(body);
    craft::ethernet(SERVER_MAC, CLIENT_MAC, 0x0800, &craft::udp(CLIENT, CPORT, SERVER, 11211, &p))
}

/// The server's answer to request `id`.
fn response(id: u16, body: &[u8]) -> Vec<u8> {
    let mut p = frame_header(id, 0, 1);
    p.extend(body);
    craft::ethernet(CLIENT_MAC, SERVER_MAC, 0x0800, &craft::udp(SERVER, 11211, CLIENT, CPORT, &p))
}

fn binary(opcode: u8, extras: &[u8], key: &[u8], value: &[u8], opaque: u32) -> Vec<u8> {
    let total = (extras.len() + key.len() + value.len()) as u32;
    let mut b = vec![0x80, opcode];
    b.extend((key.len() as u16).to_be_bytes());
    b.extend([extras.len() as u8, 0, 0, 0]);
    b.extend(total.to_be_bytes());
    b.extend(opaque.to_be_bytes());
    b.extend([0; 8]);
    b.extend(extras);
    b.extend(key);
    b.extend(value);
    b
}

fn binary_response(opcode: u8, status: u16, extras: &[u8], value: &[u8], opaque: u32) -> Vec<u8> {
    let mut b = binary(opcode, extras, b"", value, opaque);
    b[0] = 0x81;
    b[6..8].copy_from_slice(&status.to_be_bytes());
    b
}

fn run(n: &mut MemcachedCache, f: &mut Vec<u8>, in_port: Port) -> Action {
    let meta = Meta { in_port, len: f.len() as u16, timestamp: 0 };
    n.process(&mut Packet::new(f, WINDOW), &meta)
}

/// The message of an answer, after checking its headers are the request's turned around.
fn answer_body(f: &[u8]) -> Vec<u8> {
    assert_eq!(&f[0..6], &CLIENT_MAC.bytes()[..], "to the client");
    assert_eq!(&f[6..12], &SERVER_MAC.bytes()[..]);
    let ip = emu::wire::ipv4::Header::new_checked(&f[14..]).unwrap();
    assert!(ip.checksum_ok());
    assert_eq!((ip.src(), ip.dst()), (SERVER, CLIENT));
    assert_eq!(ip.total_len() as usize, f.len() - 14);
    let udp = emu::wire::udp::Header::new_checked(&f[34..]).unwrap();
    assert_eq!((udp.src_port(), udp.dst_port(), udp.len() as usize), (11211, CPORT, f.len() - 34));
    assert_eq!(&f[44..50], &[0, 0, 0, 1, 0, 0], "sequence 0 of 1 datagram");
    f[50..].to_vec()
}

fn cache() -> MemcachedCache {
    build(&Config::new()).unwrap()
}

fn server() -> MemcachedCache {
    let mut c = Config::new();
    c.set("mode", "server");
    build(&c).unwrap()
}

/// An ASCII GET misses, the server's answer fills the cache, the next GET is answered by the
/// NF with exactly the server's bytes.
#[test]
fn ascii_miss_fill_hit() {
    let mut n = cache();
    let mut get = request(7, b"get greeting\r\n");
    let sent = get.clone();
    assert_eq!(run(&mut n, &mut get, 0), Action::Forward(1));
    assert_eq!(get, sent, "a miss goes on unchanged");
    let answer = b"VALUE greeting 42 5\r\nhello\r\nEND\r\n";
    let mut resp = response(7, answer);
    let want = resp.clone();
    assert_eq!(run(&mut n, &mut resp, 1), Action::Forward(0));
    assert_eq!(resp, want);
    assert_eq!((n.misses.get(), n.fills.get()), (1, 1));
    let mut again = request(8, b"get greeting\r\n");
    assert_eq!(run(&mut n, &mut again, 0), Action::Reply);
    assert_eq!(answer_body(&again), answer);
    assert_eq!(&again[42..44], &[0, 8], "the request id is echoed");
    assert_eq!(n.hits.get(), 1);
    // A miss on the server (END) fills nothing.
    let mut get = request(9, b"get other\r\n");
    assert_eq!(run(&mut n, &mut get, 0), Action::Forward(1));
    let mut resp = response(9, b"END\r\n");
    assert_eq!(run(&mut n, &mut resp, 1), Action::Forward(0));
    assert_eq!(n.fills.get(), 1);
}

/// Binary GET: miss, fill from the server's response, hit answered in binary (flags in the
/// extras, opaque echoed); the ASCII and binary protocols share the keys.
#[test]
fn binary_miss_fill_hit_and_shared_keys() {
    let mut n = cache();
    let mut get = request(1, &binary(0x00, b"", b"k1", b"", 0xdead_beef));
    assert_eq!(run(&mut n, &mut get, 0), Action::Forward(1));
    let mut resp = response(1, &binary_response(0x00, 0, &7u32.to_be_bytes(), b"value-1", 0xdead_beef));
    assert_eq!(run(&mut n, &mut resp, 1), Action::Forward(0));
    assert_eq!(n.fills.get(), 1);
    let mut get = request(2, &binary(0x00, b"", b"k1", b"", 0x0102_0304));
    assert_eq!(run(&mut n, &mut get, 0), Action::Reply);
    assert_eq!(answer_body(&get), binary_response(0x00, 0, &7u32.to_be_bytes(), b"value-1", 0x0102_0304));
    let mut get = request(3, b"get k1\r\n");
    assert_eq!(run(&mut n, &mut get, 0), Action::Reply);
    assert_eq!(answer_body(&get), b"VALUE k1 7 7\r\nvalue-1\r\nEND\r\n");
    assert_eq!(n.hits.get(), 2);
}

fn fill(n: &mut MemcachedCache, id: u16, key: &str, value: &str) {
    let mut get = request(id, format!("get {key}\r\n").as_bytes());
    assert_eq!(run(n, &mut get, 0), Action::Forward(1));
    let mut resp = response(id, format!("VALUE {key} 0 {}\r\n{value}\r\nEND\r\n", value.len()).as_bytes());
    assert_eq!(run(n, &mut resp, 1), Action::Forward(0));
}

fn hits(n: &mut MemcachedCache, key: &str) -> bool {
    let mut get = request(999, format!("get {key}\r\n").as_bytes());
    run(n, &mut get, 0) == Action::Reply
}

/// SET and DELETE (ASCII and binary), and every other write, go to the server and invalidate
/// the key; flush_all invalidates everything.
#[test]
fn writes_invalidate() {
    let mut n = cache();
    for (i, write) in
        [&b"set a 0 0 1\r\nx\r\n"[..], b"delete a\r\n", b"incr a 1\r\n", b"append a 0 0 1\r\ny\r\n", b"touch a 10\r\n"]
            .iter()
            .enumerate()
    {
        fill(&mut n, 10 + i as u16, "a", "old");
        assert!(hits(&mut n, "a"));
        let mut w = request(20, write);
        let sent = w.clone();
        assert_eq!(run(&mut n, &mut w, 0), Action::Forward(1));
        assert_eq!(w, sent);
        assert!(!hits(&mut n, "a"), "after {}", String::from_utf8_lossy(write));
    }
    for write in
        [binary(0x01, &[0; 8], b"a", b"new", 1), binary(0x04, b"", b"a", b"", 2), binary(0x11, &[0; 8], b"a", b"q", 3)]
    {
        fill(&mut n, 30, "a", "old");
        let mut w = request(31, &write);
        assert_eq!(run(&mut n, &mut w, 0), Action::Forward(1));
        assert!(!hits(&mut n, "a"));
    }
    fill(&mut n, 40, "a", "1");
    fill(&mut n, 41, "b", "2");
    let mut f = request(42, b"flush_all\r\n");
    assert_eq!(run(&mut n, &mut f, 0), Action::Forward(1));
    assert!(!hits(&mut n, "a") && !hits(&mut n, "b"));
    fill(&mut n, 43, "b", "2");
    assert!(hits(&mut n, "b"), "filled again after the flush");
    // Other keys are left alone by a write.
    fill(&mut n, 44, "c", "3");
    let mut w = request(45, b"set b 0 0 1\r\nx\r\n");
    run(&mut n, &mut w, 0);
    assert!(hits(&mut n, "c") && !hits(&mut n, "b"));
}

/// The race: a GET misses, a SET of the key passes, then the server's (old) answer to the
/// GET arrives. It reaches the client but does not fill the cache.
#[test]
fn no_stale_fill_after_a_write() {
    let mut n = cache();
    let mut get = request(1, b"get k\r\n");
    assert_eq!(run(&mut n, &mut get, 0), Action::Forward(1));
    let mut set = request(2, b"set k 0 0 3\r\nnew\r\n");
    assert_eq!(run(&mut n, &mut set, 0), Action::Forward(1));
    let mut old = response(1, b"VALUE k 0 3\r\nold\r\nEND\r\n");
    assert_eq!(run(&mut n, &mut old, 1), Action::Forward(0));
    assert_eq!((n.fills.get(), n.stale_fills.get()), (0, 1));
    assert!(!hits(&mut n, "k"));
    // The same with DELETE and the binary protocol.
    let mut get = request(3, &binary(0x00, b"", b"k", b"", 0));
    run(&mut n, &mut get, 0);
    let mut del = request(4, &binary(0x04, b"", b"k", b"", 0));
    run(&mut n, &mut del, 0);
    let mut old = response(3, &binary_response(0x00, 0, &[0; 4], b"old", 0));
    assert_eq!(run(&mut n, &mut old, 1), Action::Forward(0));
    assert_eq!((n.fills.get(), n.stale_fills.get()), (0, 2));
    // A flush between the miss and the answer too.
    let mut get = request(5, b"get k\r\n");
    run(&mut n, &mut get, 0);
    let mut flush = request(6, b"flush_all\r\n");
    run(&mut n, &mut flush, 0);
    let mut old = response(5, b"VALUE k 0 3\r\nold\r\nEND\r\n");
    run(&mut n, &mut old, 1);
    assert_eq!((n.fills.get(), n.stale_fills.get()), (0, 3));
}

/// Answers that do not match a pending miss fill nothing: another request id, another key,
/// an answer without a miss, a wrong data length.
#[test]
fn only_pending_misses_fill() {
    let mut n = cache();
    let mut unasked = response(1, b"VALUE k 0 3\r\nold\r\nEND\r\n");
    assert_eq!(run(&mut n, &mut unasked, 1), Action::Forward(0));
    let mut get = request(2, b"get k\r\n");
    run(&mut n, &mut get, 0);
    for bad in [
        response(3, b"VALUE k 0 3\r\nold\r\nEND\r\n"),
        response(2, b"VALUE j 0 3\r\nold\r\nEND\r\n"),
        response(2, b"VALUE k 0 4\r\nold\r\nEND\r\n"),
        response(2, b"VALUE kk 0 3\r\nold\r\nEND\r\n"),
    ] {
        let mut r = bad.clone();
        assert_eq!(run(&mut n, &mut r, 1), Action::Forward(0));
        assert_eq!(r, bad);
    }
    assert_eq!(n.fills.get(), 0);
    assert!(!hits(&mut n, "k"));
}

/// Long keys and values, multi-key gets, gets and multi-datagram messages pass through
/// uncached; the first datagram of a long SET still invalidates its key.
#[test]
fn uncached_requests_pass_through() {
    let mut n = cache();
    let long_key = "k".repeat(MAX_KEY + 1);
    let max_key = "m".repeat(MAX_KEY);
    fill(&mut n, 1, &long_key, "v");
    assert!(!hits(&mut n, &long_key));
    fill(&mut n, 2, &max_key, &"v".repeat(MAX_VALUE));
    assert!(hits(&mut n, &max_key), "the longest key and value are cached");
    fill(&mut n, 3, "big", &"v".repeat(MAX_VALUE + 1));
    assert!(!hits(&mut n, "big"));
    for req in [&b"get a b\r\n"[..], b"gets a\r\n", b"get \r\n"] {
        let mut r = request(4, req);
        assert_eq!(run(&mut n, &mut r, 0), Action::Forward(1));
    }
    let mut p = frame_header(5, 0, 2);
    p.extend(format!("set {max_key} 0 0 2000\r\n").as_bytes());
    let mut first = craft::ethernet(SERVER_MAC, CLIENT_MAC, 0x0800, &craft::udp(CLIENT, CPORT, SERVER, 11211, &p));
    assert_eq!(run(&mut n, &mut first, 0), Action::Forward(1));
    assert!(!hits(&mut n, &max_key));
    // Non-memcached traffic crosses unchanged both ways.
    let mut other = craft::ethernet(SERVER_MAC, CLIENT_MAC, 0x0800, &craft::udp(CLIENT, 53, SERVER, 53, b"dns"));
    assert_eq!(run(&mut n, &mut other, 0), Action::Forward(1));
    assert_eq!(run(&mut n, &mut other, 1), Action::Forward(0));
}

/// Malformed datagrams are dropped as malformed, never answered or cached.
#[test]
fn malformed_input_is_dropped() {
    let mut n = cache();
    let cut = craft::ethernet(SERVER_MAC, CLIENT_MAC, 0x0800, &craft::udp(CLIENT, CPORT, SERVER, 11211, &[0, 1, 0]));
    let short_binary = request(1, &binary(0x00, b"", b"k", b"", 0)[..20]);
    let mut past = binary(0x00, b"", b"key", b"", 0);
    past[11] = 200; // total body length past the datagram
    let mut key_past_body = binary(0x00, b"", b"key", b"", 0);
    key_past_body[3] = 9; // key length past the total body
    for f in [cut, short_binary, request(2, &past), request(3, &key_past_body)] {
        for mut m in [cache(), server()] {
            let mut g = f.clone();
            assert_eq!(run(&mut m, &mut g, 0), Action::Drop(DropReason::Malformed));
        }
        let mut g = f.clone();
        assert_eq!(run(&mut n, &mut g, 0), Action::Drop(DropReason::Malformed));
    }
    // A UDP length past the IPv4 packet.
    let mut bad = request(4, b"get k\r\n");
    bad[38] = 0x10;
    bad[24] = 0;
    bad[25] = 0;
    let c = emu::wire::checksum::ipv4_header(&bad[14..34]);
    bad[24..26].copy_from_slice(&c.to_be_bytes());
    assert_eq!(run(&mut n, &mut bad, 0), Action::Drop(DropReason::Malformed));
    // A server answer cut short is dropped too; a bad IPv4 checksum is dropped as such.
    let mut r = response(5, b"");
    r.truncate(r.len() - 1);
    r[17] -= 1;
    r[39] -= 1;
    let c = {
        r[24] = 0;
        r[25] = 0;
        emu::wire::checksum::ipv4_header(&r[14..34])
    };
    r[24..26].copy_from_slice(&c.to_be_bytes());
    assert_eq!(run(&mut n, &mut r, 1), Action::Drop(DropReason::Malformed));
    let mut g = request(6, b"get k\r\n");
    g[24] ^= 1;
    assert_eq!(run(&mut n, &mut g, 0), Action::Drop(DropReason::Ipv4Checksum));
    assert_eq!(n.hits.get() + n.fills.get(), 0);
}

/// The slot of the index entry `fill` just wrote (its digest, and the set it is in, are the
/// key's): the entry `after` has that `before` had not.
fn filled_slot(before: &[(usize, u32, u16)], after: &[(usize, u32, u16)]) -> usize {
    after.iter().find(|e| !before.contains(e)).expect("the fill wrote the index").0
}

/// Least recently used replacement within a key's set of CACHE_WAYS entries: a new key in a
/// full set evicts the set's least recently used key, a hit keeps a key, and other sets are
/// untouched.
#[test]
fn lru_replacement() {
    let mut n = cache();
    let entries = |n: &MemcachedCache| n.index.entries().collect::<Vec<_>>();
    let mut set_keys: Vec<Vec<String>> = vec![Vec::new(); CACHE_SLOTS / CACHE_WAYS];
    let mut i = 0u16;
    let mut fill_next = |n: &mut MemcachedCache| {
        let key = format!("key{i}");
        let before = entries(n);
        fill(n, i, &key, "v");
        i += 1;
        (filled_slot(&before, &entries(n)) / CACHE_WAYS, key)
    };
    // Until one set is full.
    let full = loop {
        let (set, key) = fill_next(&mut n);
        set_keys[set].push(key);
        if set_keys[set].len() == CACHE_WAYS {
            break set;
        }
    };
    let oldest = set_keys[full].clone();
    assert!(hits(&mut n, &oldest[0]), "{} is now its set's most recently used", oldest[0]);
    // Until a new key lands in that set (others fill other sets, evicting there only).
    let newcomer = loop {
        let (set, key) = fill_next(&mut n);
        if set == full {
            break key;
        }
    };
    assert!(hits(&mut n, &newcomer) && hits(&mut n, &oldest[0]));
    assert!(!hits(&mut n, &oldest[1]), "{} was its set's least recently used", oldest[1]);
    assert!(hits(&mut n, &oldest[2]) && hits(&mut n, &oldest[3]));
}

/// A working set of half the cache's entries stays in it: 1000 keys, then reads of them at
/// random (each miss filled again), hit more than 97 % of the time.
#[test]
fn a_working_set_of_half_the_cache_stays() {
    assert!(CACHE_SLOTS >= 2000);
    let mut n = cache();
    for i in 0..1000u16 {
        fill(&mut n, i, &format!("key{i}"), "v");
    }
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let (mut hit, reads) = (0, 20_000);
    for r in 0..reads {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let key = format!("key{}", rng % 1000);
        if hits(&mut n, &key) {
            hit += 1;
        } else {
            // The miss went on to the server: its answer fills the cache again.
            let mut resp = response(999, format!("VALUE {key} 0 1\r\nv\r\nEND\r\n").as_bytes());
            assert_eq!(run(&mut n, &mut resp, 1), Action::Forward(0), "read {r}");
        }
    }
    assert!(hit * 100 > reads * 97, "{hit} of {reads} reads hit");
}

/// The cache holds CACHE_SLOTS keys: filled far past that, each entry slot is held by exactly
/// one digest of the index (an evicted digest hands its slot on), and the last keys filled hit.
#[test]
fn every_slot_is_used_once() {
    let mut n = cache();
    let keys = 3 * CACHE_SLOTS;
    for i in 0..keys {
        fill(&mut n, i as u16, &format!("key{i}"), "v");
    }
    let mut slots: Vec<u16> = n.index.entries().map(|(_, _, slot)| slot).collect();
    slots.sort();
    assert_eq!(slots, (0..CACHE_SLOTS as u16).collect::<Vec<_>>());
    assert!((keys - 10..keys).all(|i| hits(&mut n, &format!("key{i}"))));
}

/// Server mode, ASCII: set, get, delete, and memcached's errors.
#[test]
fn server_mode_ascii() {
    let mut n = server();
    let mut ask = |req: &[u8]| {
        let mut f = request(11, req);
        match run(&mut n, &mut f, 0) {
            Action::Reply => String::from_utf8(answer_body(&f)).unwrap(),
            other => format!("{other:?}"),
        }
    };
    assert_eq!(ask(b"get k\r\n"), "END\r\n");
    assert_eq!(ask(b"set k 123 0 5\r\nhello\r\n"), "STORED\r\n");
    assert_eq!(ask(b"get k\r\n"), "VALUE k 123 5\r\nhello\r\nEND\r\n");
    assert_eq!(ask(b"set k 4294967295 -1 0\r\n\r\n"), "STORED\r\n");
    assert_eq!(ask(b"get k\r\n"), "VALUE k 4294967295 0\r\n\r\nEND\r\n");
    assert_eq!(ask(b"delete k\r\n"), "DELETED\r\n");
    assert_eq!(ask(b"delete k\r\n"), "NOT_FOUND\r\n");
    assert_eq!(ask(b"get k\r\n"), "END\r\n");
    assert_eq!(ask(b"set k 0 0 2 noreply\r\nhi\r\n"), "Drop(Policy)");
    assert_eq!(ask(b"get k\r\n"), "VALUE k 0 2\r\nhi\r\nEND\r\n");
    let long = format!("get {}\r\n", "k".repeat(MAX_KEY + 1));
    assert_eq!(ask(long.as_bytes()), "CLIENT_ERROR bad command line format\r\n");
    let big = format!("set k 0 0 {}\r\n{}\r\n", MAX_VALUE + 1, "v".repeat(MAX_VALUE + 1));
    assert_eq!(ask(big.as_bytes()), "SERVER_ERROR object too large for cache\r\n");
    assert_eq!(ask(b"set k 0 0 3\r\nhello\r\n"), "CLIENT_ERROR bad data chunk\r\n");
    assert_eq!(ask(b"set k 0 0\r\nhello\r\n"), "CLIENT_ERROR bad command line format\r\n");
    assert_eq!(ask(b"set k 99999999999 0 1\r\nh\r\n"), "CLIENT_ERROR bad command line format\r\n");
    assert_eq!(ask(b"get a b\r\n"), "SERVER_ERROR multi-key get unsupported\r\n");
    assert_eq!(ask(b"stats\r\n"), "ERROR\r\n");
    let max = format!("set {} 1 0 {}\r\n{}\r\n", "m".repeat(MAX_KEY), MAX_VALUE, "v".repeat(MAX_VALUE));
    assert_eq!(ask(max.as_bytes()), "STORED\r\n");
    let got = ask(format!("get {}\r\n", "m".repeat(MAX_KEY)).as_bytes());
    assert_eq!(got, format!("VALUE {} 1 {}\r\n{}\r\nEND\r\n", "m".repeat(MAX_KEY), MAX_VALUE, "v".repeat(MAX_VALUE)));
}

/// Server mode, binary: set, get, delete, quiet opcodes, EINVAL, E2BIG, unknown command.
#[test]
fn server_mode_binary() {
    let mut n = server();
    let mut ask = |req: Vec<u8>| {
        let mut f = request(12, &req);
        match run(&mut n, &mut f, 0) {
            Action::Reply => answer_body(&f),
            other => format!("{other:?}").into_bytes(),
        }
    };
    assert_eq!(ask(binary(0x00, b"", b"k", b"", 5)), binary_response(0x00, 1, b"", b"", 5));
    let flags = 0xaabb_ccddu32.to_be_bytes();
    let mut extras = flags.to_vec();
    extras.extend([0, 0, 0, 0]);
    assert_eq!(ask(binary(0x01, &extras, b"k", b"val", 6)), binary_response(0x01, 0, b"", b"", 6));
    assert_eq!(ask(binary(0x00, b"", b"k", b"", 7)), binary_response(0x00, 0, &flags, b"val", 7));
    assert_eq!(ask(binary(0x04, b"", b"k", b"", 8)), binary_response(0x04, 0, b"", b"", 8));
    assert_eq!(ask(binary(0x04, b"", b"k", b"", 9)), binary_response(0x04, 1, b"", b"", 9));
    assert_eq!(ask(binary(0x11, &extras, b"q", b"v", 10)), b"Drop(Policy)");
    assert_eq!(ask(binary(0x00, b"", b"q", b"", 11)), binary_response(0x00, 0, &flags, b"v", 11));
    let long = vec![b'k'; MAX_KEY + 1];
    assert_eq!(ask(binary(0x00, b"", &long, b"", 12)), binary_response(0x00, 4, b"", b"", 12));
    assert_eq!(ask(binary(0x01, &[0; 4], b"k", b"v", 13)), binary_response(0x01, 4, b"", b"", 13));
    let big = vec![b'v'; MAX_VALUE + 1];
    assert_eq!(ask(binary(0x01, &extras, b"k", &big, 14)), binary_response(0x01, 3, b"", b"", 14));
    assert_eq!(ask(binary(0x07, b"", b"", b"", 15)), binary_response(0x07, 0x81, b"", b"", 15));
}

/// Options: bad values say what to write.
#[test]
fn options() {
    let mut c = Config::new();
    c.set("mode", "proxy");
    assert!(build(&c).unwrap_err().0.contains("write `--mode cache` or `--mode server`"));
    let mut c = Config::new();
    c.set("server-port", "2");
    assert!(build(&c).unwrap_err().0.contains("give 0 or 1"));
    let mut c = Config::new();
    c.set("udp-port", "0");
    assert!(build(&c).unwrap_err().0.contains("from 1 to 65535"));
    let udp_port = (DESCRIPTOR.initial_state(&Config::new()).unwrap().into_iter())
        .find(|e| e.name == "udp_port")
        .map(|e| e.entries[0].clone());
    assert_eq!(udp_port, Some(11211u16.to_be_bytes().to_vec()), "what the other tiers load");
    let r = Reporting(cache());
    assert!(r.summary().contains("0 hits, 0 misses, 0 fills"), "{}", r.summary());
}

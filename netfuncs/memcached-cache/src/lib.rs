//! A memcached cache for the memcached UDP protocol (ASCII and binary), a bump in the wire
//! between clients (port 0) and a real memcached server (port 1), or (`--mode server`) a
//! memcached server of its own.
//!
//! Every datagram to or from `--udp-port` (11211) carries memcached's 8-byte UDP frame header
//! (request id, sequence number, datagram count, reserved). Other frames cross from one port
//! to the other unchanged.
//!
//! **Cache mode** (the default):
//! - A single-key GET (ASCII `get KEY\r\n`, binary opcode 0x00) whose key is in the cache is
//!   answered by the NF (a hit): `VALUE KEY FLAGS BYTES\r\nDATA\r\nEND\r\n`, or a binary
//!   response with the flags as extras and CAS 0. A miss goes on to the server and is recorded
//!   as *pending* under (client address, client port, request id).
//! - The server's answer to a pending miss reaches the client unchanged and **fills** the cache
//!   (a `VALUE` line for the pending key, or a binary GET response with status 0), unless the
//!   key was written or deleted through the NF, or the cache flushed, after the miss passed:
//!   each key hashes to a *generation* slot that every write of a key in it bumps; the pending
//!   miss records the generation and the fill is refused (`stale fills`) when it has moved.
//!   So a GET after a SET or DELETE through the NF never reads the old value from the cache.
//! - Every other request that names a key (ASCII `set`, `add`, `delete`, `incr`, `touch`, … —
//!   any command but `get`/`gets`; binary: any opcode but the gets, NOOP, VERSION and STAT)
//!   **invalidates** the key and goes on to the server; `flush_all` (binary FLUSH) invalidates
//!   everything. Requests the NF cannot read (IPv4 options or fragments) invalidate everything.
//! - Keys longer than [`MAX_KEY`] and values longer than [`MAX_VALUE`] pass through uncached,
//!   as do multi-key gets, `gets` and messages of several datagrams (the first one still
//!   invalidates its key).
//! - Replacement: the least recently used of the [`CACHE_WAYS`] entries of the key's set, of
//!   [`CACHE_SLOTS`] entries in all (an `Lru` in sets over a 32-bit digest of the key, as a
//!   hardware cache keeps it in block RAM; the full key is kept and compared, so a digest
//!   collision is a miss).
//!
//! **Server mode** answers SET, GET and DELETE by itself (`Reply`), ASCII and binary, storing
//! up to [`CACHE_SLOTS`] entries with LRU replacement (an evicted entry is gone, as in
//! memcached); expiration times are accepted and ignored. Errors are memcached's: a key longer
//! than [`MAX_KEY`] gets `CLIENT_ERROR bad command line format` (binary status 0x0004 EINVAL),
//! a value longer than [`MAX_VALUE`] `SERVER_ERROR object too large for cache` (0x0003 E2BIG),
//! a data block of the wrong length `CLIENT_ERROR bad data chunk`, other commands `ERROR`
//! (0x0081 unknown command); `noreply` requests and quiet opcodes are answered with nothing.
//!
//! Dropped, with the reason: a datagram shorter than the frame header, a UDP length below 8 or
//! past the IPv4 packet, a binary header cut short or a total body length past the datagram
//! (`malformed`); a wrong IPv4 header checksum (`ipv4_checksum`); in server mode, multi-datagram
//! requests (`unsupported`) and answered-with-nothing requests (`policy`).
#![deny(missing_docs)]

use emu::prelude::*;

pub use self::memcached_cache::*;

/// The header window: a request or reply with a [`MAX_KEY`]-byte key and a [`MAX_VALUE`]-byte
/// value fits in it.
pub const WINDOW: usize = self::memcached_cache::HLS_WINDOW;

/// The cache as one NF module: `#[emu::nf]` checks it against the synthesizable subset, and the
/// HLS compiler builds its state and `process` as hardware.
#[emu::nf(ports = 2, window = 256)]
pub mod memcached_cache {
    use emu::prelude::*;

    /// The longest key the cache holds (memcached allows 250; longer ones pass through).
    pub const MAX_KEY: usize = 32;
    /// The longest value the cache holds.
    pub const MAX_VALUE: usize = 64;
    /// Entries of the cache: 128 KB of values at the default sizes.
    pub const CACHE_SLOTS: usize = 2048;
    /// Entries of a set of the cache's index: LRU replacement is within the key's set. With
    /// twice the entries of a working set, the sets keep nearly all of it
    /// (`a_working_set_of_half_the_cache_stays`: 1000 keys read at random hit 98.7 % of the
    /// time; 8 ways, 98.8 %; 1024 entries in sets of 4, 83 %).
    pub const CACHE_WAYS: usize = 4;
    /// Misses awaiting the server's answer (a direct-mapped table: a newer miss in the same
    /// slot replaces the older, which then fills nothing).
    pub const PENDING_SLOTS: usize = 64;
    /// Generation counters the keys hash to.
    pub const GEN_SLOTS: usize = 256;
    /// 128-bit words of a key.
    pub const KEY_WORDS: usize = (MAX_KEY + 15) / 16;
    /// 128-bit words of a value.
    pub const VALUE_WORDS: usize = (MAX_VALUE + 15) / 16;
    const CACHE_KEY_WORDS: usize = CACHE_SLOTS * KEY_WORDS;
    const CACHE_VALUE_WORDS: usize = CACHE_SLOTS * VALUE_WORDS;
    const PENDING_KEY_WORDS: usize = PENDING_SLOTS * KEY_WORDS;

    const UDP: u8 = 17;
    /// The memcached frame header, after Ethernet, IPv4 without options and UDP.
    const FRAME: usize = 42;
    /// The memcached message: ASCII text or the binary header.
    const BODY: usize = 50;
    const BIN_HEADER: usize = 24;

    // What a datagram on the memcached port is (`classify`).
    const OTHER: u8 = 0;
    const SINGLE: u8 = 1;
    /// The first of several datagrams.
    const FIRST: u8 = 2;
    /// A later datagram of a message.
    const LATER: u8 = 3;
    /// IPv4 options or a fragment: the NF cannot find the message.
    const UNREADABLE: u8 = 4;
    const MALFORMED: u8 = 5;
    const BAD_CHECKSUM: u8 = 6;

    // An entry (`entries`): flags [31:0], key length [39:32], value length [55:40], the epoch
    // it was stored in [87:56], valid [88].
    const VALID: u128 = 1 << 88;
    // A pending miss (`pending`): epoch [31:0], generation [63:32], key length [71:64],
    // binary [72], valid [73].
    const PENDING_BINARY: u128 = 1 << 72;
    const PENDING_VALID: u128 = 1 << 73;

    // Binary protocol.
    const REQUEST: u8 = 0x80;
    const RESPONSE: u8 = 0x81;
    const OP_GET: u8 = 0x00;
    const OP_SET: u8 = 0x01;
    const OP_DELETE: u8 = 0x04;
    const OP_FLUSH: u8 = 0x08;
    const OP_FLUSHQ: u8 = 0x18;
    const OP_SETQ: u8 = 0x11;
    const OP_DELETEQ: u8 = 0x14;
    const STATUS_NOT_FOUND: u16 = 0x0001;
    const STATUS_E2BIG: u16 = 0x0003;
    const STATUS_EINVAL: u16 = 0x0004;
    const STATUS_UNKNOWN: u16 = 0x0081;

    // ASCII words, big-endian, each right-aligned in its integer.
    const W_GET: u32 = 0x67657420;
    const W_GETS: u32 = 0x67657473;
    const W_SET: u32 = 0x73657420;
    const W_DELETE: u64 = 0x64656c65746520;
    const W_FLUSH_ALL: u64 = 0x666c7573685f616c;
    const W_NOREPLY: u64 = 0x6e6f7265706c79;
    const T_VALUE: u128 = 0x56414c554520;
    const T_END: u128 = 0x454e440d0a;
    const T_CRLF_END: u128 = 0x0d0a454e440d0a;
    const T_STORED: u128 = 0x53544f5245440d0a;
    const T_DELETED: u128 = 0x44454c455445440d0a;
    const T_NOT_FOUND: u128 = 0x4e4f545f464f554e440d0a;
    const T_ERROR: u128 = 0x4552524f520d0a;
    const T_CLIENT_ERROR_BAD: u128 = 0x434c49454e545f4552524f5220626164;
    const T_BAD_LINE_2: u128 = 0x20636f6d6d616e64206c696e6520666f;
    const T_BAD_LINE_3: u128 = 0x726d61740d0a;
    const T_BAD_CHUNK_2: u128 = 0x2064617461206368756e6b0d0a;
    const T_TOO_LARGE_1: u128 = 0x5345525645525f4552524f52206f626a;
    const T_TOO_LARGE_2: u128 = 0x65637420746f6f206c6172676520666f;
    const T_TOO_LARGE_3: u128 = 0x722063616368650d0a;
    const T_MULTI_1: u128 = 0x5345525645525f4552524f52206d756c;
    const T_MULTI_2: u128 = 0x74692d6b65792067657420756e737570;
    const T_MULTI_3: u128 = 0x706f727465640d0a;

    /// The cache's state.
    #[derive(Debug)]
    pub struct MemcachedCache {
        /// Answer requests alone instead of caching for a server.
        pub server_mode: bool,
        /// The port facing the memcached server (cache mode); the other faces the clients.
        pub server_port: Port,
        /// memcached's UDP port.
        pub udp_port: u16,
        /// Key digest → entry slot, the least recently used of the digest's set evicted first.
        pub index: Lru<u32, u16, CACHE_SLOTS, CACHE_WAYS>,
        /// Entry slots handed out so far (slots `0..used` are in `index`).
        pub used: Register<u16>,
        /// By entry slot: the key, [`KEY_WORDS`] words each, zero past its length.
        pub keys: Array<u128, CACHE_KEY_WORDS>,
        /// By entry slot: the value, [`VALUE_WORDS`] words each, zero past its length.
        pub values: Array<u128, CACHE_VALUE_WORDS>,
        /// By entry slot: flags, lengths, epoch, valid.
        pub entries: Array<u128, CACHE_SLOTS>,
        /// Write generations, by key digest.
        pub generations: Array<u32, GEN_SLOTS>,
        /// Bumped by every flush: entries and pending misses of an older epoch are void.
        pub epoch: Register<u32>,
        /// By pending slot: client address, client port and request id of the miss.
        pub pending_tags: Array<u64, PENDING_SLOTS>,
        /// By pending slot: the missed key.
        pub pending_keys: Array<u128, PENDING_KEY_WORDS>,
        /// By pending slot: epoch, generation, key length, binary, valid.
        pub pending: Array<u128, PENDING_SLOTS>,
        /// GETs answered from the cache.
        pub hits: Counter,
        /// Cacheable GETs sent on to the server.
        pub misses: Counter,
        /// Server answers stored in the cache.
        pub fills: Counter,
        /// Server answers not stored because the key was written after the miss.
        pub stale_fills: Counter,
        /// Keys invalidated by a write through the NF.
        pub invalidations: Counter,
        /// Whole-cache invalidations (flush, unreadable requests).
        pub flushes: Counter,
        /// Requests passed on uncached (long keys, multi-key gets, several datagrams).
        pub uncached: Counter,
        /// Answers the NF sent (hits, and every answer in server mode).
        pub answered: Counter,
        /// Protocol errors answered (server mode).
        pub errors: Counter,
        /// Datagrams dropped as malformed.
        pub malformed: Counter,
    }

    impl MemcachedCache {
        /// A cache (or, with `server_mode`, a server) with every other option at its default.
        pub fn new(server_mode: bool) -> MemcachedCache {
            MemcachedCache {
                server_mode,
                server_port: 1,
                udp_port: 11211,
                index: Lru::new(),
                used: Register::default(),
                keys: Array::new(),
                values: Array::new(),
                entries: Array::new(),
                generations: Array::new(),
                epoch: Register::default(),
                pending_tags: Array::new(),
                pending_keys: Array::new(),
                pending: Array::new(),
                hits: Counter::default(),
                misses: Counter::default(),
                fills: Counter::default(),
                stale_fills: Counter::default(),
                invalidations: Counter::default(),
                flushes: Counter::default(),
                uncached: Counter::default(),
                answered: Counter::default(),
                errors: Counter::default(),
                malformed: Counter::default(),
            }
        }

        /// Of an IPv4/UDP datagram to (`to_server`) or from memcached's port: what it is, and
        /// the length of its message (after the frame header).
        fn classify(&mut self, pkt: &mut Packet, to_server: bool) -> (u8, usize) {
            if pkt.ethernet().ethertype() != 0x0800 {
                return (OTHER, 0);
            }
            let ip = pkt.ipv4();
            if ip.protocol() != UDP {
                return (OTHER, 0);
            }
            if ip.ihl().value() != 5 || ip.more_frags() || ip.frag_offset().value() != 0 {
                // Where the UDP header and port are cannot be trusted: any port may be it.
                return (UNREADABLE, 0);
            }
            let udp = pkt.udp();
            let port = if to_server { udp.dst_port() } else { udp.src_port() };
            if port != self.udp_port {
                return (OTHER, 0);
            }
            if !ip.checksum_ok() {
                return (BAD_CHECKSUM, 0);
            }
            let total = ip.total_len() as usize;
            let udp_len = udp.len() as usize;
            if total < 28 || udp_len < 16 || udp_len > total - 20 {
                return (MALFORMED, 0);
            }
            let seq = (pkt.byte(FRAME + 2) as u16) << 8 | pkt.byte(FRAME + 3) as u16;
            let count = (pkt.byte(FRAME + 4) as u16) << 8 | pkt.byte(FRAME + 5) as u16;
            let body = udp_len - 16;
            if seq != 0 {
                return (LATER, body);
            }
            if count != 1 {
                return (FIRST, body);
            }
            (SINGLE, body)
        }

        /// Word `w` of the `len` bytes at `start`: bytes `16w … 16w + 15`, big-endian, zero
        /// past `len`.
        fn word(&self, pkt: &mut Packet, start: usize, len: usize, w: usize) -> u128 {
            let mut word = 0u128;
            for j in 0..16 {
                let i = w * 16 + j;
                let mut b = 0u8;
                if i < len {
                    b = pkt.byte(start + i);
                }
                word = word << 8 | b as u128;
            }
            word
        }

        /// Writes the `len` bytes of word `w` (`len` ≤ 16 of a string's bytes) at `at`.
        fn put_word(&mut self, pkt: &mut Packet, at: usize, word: u128, len: usize) {
            for j in 0..16 {
                if j < len {
                    pkt.set_byte(at + j, (word >> (120 - 8 * j)) as u8);
                }
            }
        }

        /// Writes text of `len` bytes at `at`, its first 16 bytes in `a`, the next in `b`, the
        /// rest in `c`; each word holds its bytes right-aligned.
        fn put_text(&mut self, pkt: &mut Packet, at: usize, a: u128, b: u128, c: u128, len: usize) {
            for j in 0..16 {
                if j < len {
                    let n = if len > 16 { 16 } else { len };
                    pkt.set_byte(at + j, (a >> (8 * (n - 1 - j))) as u8);
                }
                if j + 16 < len {
                    let n = if len > 32 { 16 } else { len - 16 };
                    pkt.set_byte(at + 16 + j, (b >> (8 * (n - 1 - j))) as u8);
                }
                if j + 32 < len {
                    pkt.set_byte(at + 32 + j, (c >> (8 * (len - 33 - j))) as u8);
                }
            }
        }

        /// The digest the `index` is keyed by: the key's words and its length mixed.
        fn mix(&self, digest: u128, word: u128) -> u128 {
            (digest << 29 | digest >> 99) ^ word
        }

        /// The 32 bits of a digest the `index` compares (the full key is compared after).
        fn short(&self, digest: u128) -> u32 {
            let folded = digest as u64 ^ (digest >> 64) as u64;
            (folded ^ folded >> 32) as u32
        }

        fn digest_in_packet(&self, pkt: &mut Packet, start: usize, len: usize) -> u128 {
            let mut d = len as u128;
            for w in 0..KEY_WORDS {
                d = self.mix(d, self.word(pkt, start, len, w));
            }
            d
        }

        fn generation_slot(&self, digest: u128) -> usize {
            let s = self.short(digest);
            (s ^ s >> 16) as usize % GEN_SLOTS
        }

        /// The entry slot holding the `len`-byte key at `start`, if it is stored and valid.
        fn lookup(&mut self, pkt: &mut Packet, start: usize, len: usize) -> (bool, usize) {
            let d = self.short(self.digest_in_packet(pkt, start, len));
            let Some(slot) = self.index.get(d) else {
                return (false, 0);
            };
            let s = slot as usize;
            let e = self.entries.get(s);
            if e & VALID == 0 || (e >> 56) as u32 != self.epoch.get() || (e >> 32) as u8 as usize != len {
                return (false, s);
            }
            for w in 0..KEY_WORDS {
                if self.keys.get(s * KEY_WORDS + w) != self.word(pkt, start, len, w) {
                    return (false, s);
                }
            }
            (true, s)
        }

        /// The slot to store the key of `digest` in: its own, a free one, or the least
        /// recently used one's; the entry becomes the most recently used.
        fn slot_for(&mut self, full: u128) -> usize {
            let digest = self.short(full);
            if let Some(s) = self.index.peek(digest) {
                self.index.insert(digest, s);
                return s as usize;
            }
            // Entries are never removed from `index` (invalidation clears `entries`) and an
            // evicted digest hands its slot to the new one, so each of the slots 0..used is
            // held by exactly one digest: a new digest takes slot `used` while there is one,
            // unless its set is full, and then (as always once all are used) the victim's.
            let n = self.used.get();
            let fresh = (n as usize) < CACHE_SLOTS;
            let mut slot = if fresh { n } else { 0 };
            if let Some((_, s)) = self.index.insert(digest, slot) {
                slot = s;
                self.index.insert(digest, slot);
            } else if fresh {
                self.used.set(n + 1);
            }
            slot as usize
        }

        /// Stores the value of `vlen` bytes at `vstart` and `flags` in entry `slot`, whose key
        /// (of `klen` bytes) the caller stores.
        fn store_value(&mut self, pkt: &mut Packet, slot: usize, vstart: usize, vlen: usize, flags: u32, klen: usize) {
            for w in 0..VALUE_WORDS {
                let v = self.word(pkt, vstart, vlen, w);
                self.values.set(slot * VALUE_WORDS + w, v);
            }
            let epoch = self.epoch.get() as u128;
            self.entries.set(slot, VALID | epoch << 56 | (vlen as u128) << 40 | (klen as u128) << 32 | flags as u128);
        }

        /// Stores a value under the key at `kstart` (server mode's SET).
        fn store_from_packet(
            &mut self,
            pkt: &mut Packet,
            kstart: usize,
            klen: usize,
            vstart: usize,
            vlen: usize,
            flags: u32,
        ) {
            let d = self.digest_in_packet(pkt, kstart, klen);
            let slot = self.slot_for(d);
            for w in 0..KEY_WORDS {
                let k = self.word(pkt, kstart, klen, w);
                self.keys.set(slot * KEY_WORDS + w, k);
            }
            self.store_value(pkt, slot, vstart, vlen, flags, klen);
        }

        /// Invalidates the key at `kstart` (a write through the NF): its entry, and the fills
        /// of misses of it (and of keys sharing its generation slot) now pending. Returns
        /// whether the key was stored (server mode's DELETE).
        fn invalidate(&mut self, pkt: &mut Packet, kstart: usize, klen: usize) -> bool {
            if klen == 0 || klen > MAX_KEY {
                // Never cached.
                return false;
            }
            let d = self.digest_in_packet(pkt, kstart, klen);
            let g = self.generation_slot(d);
            self.generations.set(g, self.generations.get(g).wrapping_add(1));
            self.invalidations.inc();
            let (found, slot) = self.lookup(pkt, kstart, klen);
            if found {
                self.entries.set(slot, 0);
            }
            found
        }

        fn flush(&mut self) {
            self.epoch.set(self.epoch.get().wrapping_add(1));
            self.flushes.inc();
        }

        fn pending_slot(&self, tag: u64) -> usize {
            let t = tag ^ tag >> 32;
            (t ^ t >> 16 ^ t >> 8) as usize % PENDING_SLOTS
        }

        /// Records a miss of the key at `kstart` from the client that sent `pkt`.
        fn record_miss(&mut self, pkt: &mut Packet, kstart: usize, klen: usize, binary: bool) {
            let tag = (pkt.ipv4().src().0 as u64) << 32
                | (pkt.udp().src_port() as u64) << 16
                | (pkt.byte(FRAME) as u64) << 8
                | pkt.byte(FRAME + 1) as u64;
            let p = self.pending_slot(tag);
            let d = self.digest_in_packet(pkt, kstart, klen);
            let generation = self.generations.get(self.generation_slot(d)) as u128;
            for w in 0..KEY_WORDS {
                let k = self.word(pkt, kstart, klen, w);
                self.pending_keys.set(p * KEY_WORDS + w, k);
            }
            self.pending_tags.set(p, tag);
            let mut info = PENDING_VALID | (klen as u128) << 64 | generation << 32 | self.epoch.get() as u128;
            if binary {
                info = info | PENDING_BINARY;
            }
            self.pending.set(p, info);
            self.misses.inc();
        }

        /// Turns the request into its answer of `body` bytes: addresses and ports swapped,
        /// lengths and the IPv4 checksum set (UDP checksum 0), the frame header's request id
        /// kept. The body is written after this.
        fn answer(&mut self, pkt: &mut Packet, body: usize) {
            let eth = pkt.ethernet();
            let (src_mac, dst_mac) = (eth.src(), eth.dst());
            let mut eth = pkt.ethernet_mut();
            eth.set_src(dst_mac);
            eth.set_dst(src_mac);
            let ip = pkt.ipv4();
            let (src, dst) = (ip.src(), ip.dst());
            let mut ip = pkt.ipv4_mut();
            ip.set_src(dst);
            ip.set_dst(src);
            ip.set_total_len((36 + body) as u16);
            ip.set_ttl(64);
            ip.fill_checksum();
            let udp = pkt.udp();
            let (sport, dport) = (udp.src_port(), udp.dst_port());
            let mut udp = pkt.udp_mut();
            udp.set_src_port(dport);
            udp.set_dst_port(sport);
            udp.set_len((16 + body) as u16);
            udp.set_checksum(0);
            for i in 2..8 {
                pkt.set_byte(FRAME + i, 0);
            }
            pkt.set_byte(FRAME + 5, 1);
            pkt.set_len(BODY + body);
        }

        /// Answers with ASCII text of `len` bytes (see `put_text`).
        fn answer_text(&mut self, pkt: &mut Packet, a: u128, b: u128, c: u128, len: usize) -> Action {
            self.answer(pkt, len);
            self.put_text(pkt, BODY, a, b, c, len);
            self.answered.inc();
            Action::Reply
        }

        fn client_error(&mut self, pkt: &mut Packet) -> Action {
            self.errors.inc();
            self.answer_text(pkt, T_CLIENT_ERROR_BAD, T_BAD_LINE_2, T_BAD_LINE_3, 38)
        }

        /// Digits of `v` in decimal (1 to 10).
        fn digits(&self, v: u32) -> usize {
            let mut n = 1usize;
            let mut p = 10u64;
            for _ in 0..9 {
                if v as u64 >= p {
                    n += 1;
                }
                p = p * 10;
            }
            n
        }

        /// Writes `v` in decimal, `n` digits, at `at`.
        fn put_decimal(&mut self, pkt: &mut Packet, at: usize, v: u32, n: usize) {
            let mut rest = v;
            for k in 0..10 {
                if k < n {
                    pkt.set_byte(at + n - 1 - k, b'0' + (rest % 10) as u8);
                }
                rest = rest / 10;
            }
        }

        /// The decimal number at `at`: its value and number of digits (11: too long).
        fn decimal(&self, pkt: &mut Packet, at: usize) -> (u64, usize) {
            let mut v = 0u64;
            let mut n = 0usize;
            for i in 0..11 {
                let b = pkt.byte(at + i);
                if b < b'0' || b > b'9' {
                    break;
                }
                v = v * 10 + (b - b'0') as u64;
                n += 1;
            }
            (v, n)
        }

        /// Length of the ASCII key at `start`, ended by a space, CR, LF or `end`:
        /// `MAX_KEY + 1` when it is longer than `MAX_KEY`.
        fn key_len(&self, pkt: &mut Packet, start: usize, end: usize) -> usize {
            let mut n = MAX_KEY + 1;
            for i in 0..MAX_KEY + 1 {
                let b = pkt.byte(start + i);
                if start + i >= end || b == b' ' || b == b'\r' || b == b'\n' {
                    n = i;
                    break;
                }
            }
            n
        }

        fn crlf_at(&self, pkt: &mut Packet, at: usize) -> bool {
            pkt.byte(at) == b'\r' && pkt.byte(at + 1) == b'\n'
        }

        /// Answers a GET hit on entry `slot` in ASCII.
        fn ascii_value(&mut self, pkt: &mut Packet, slot: usize) -> Action {
            let e = self.entries.get(slot);
            let (flags, klen, vlen) = (e as u32, (e >> 32) as u8 as usize, (e >> 40) as u16 as usize);
            let (nf, nv) = (self.digits(flags), self.digits(vlen as u32));
            let body = 6 + klen + 1 + nf + 1 + nv + 2 + vlen + 7;
            self.answer(pkt, body);
            self.put_text(pkt, BODY, T_VALUE, 0, 0, 6);
            let mut at = BODY + 6;
            for w in 0..KEY_WORDS {
                if 16 * w < klen {
                    let k = self.keys.get(slot * KEY_WORDS + w);
                    self.put_word(pkt, at + 16 * w, k, klen - 16 * w);
                }
            }
            at += klen;
            pkt.set_byte(at, b' ');
            self.put_decimal(pkt, at + 1, flags, nf);
            at += 1 + nf;
            pkt.set_byte(at, b' ');
            self.put_decimal(pkt, at + 1, vlen as u32, nv);
            at += 1 + nv;
            pkt.set_byte(at, b'\r');
            pkt.set_byte(at + 1, b'\n');
            at += 2;
            self.put_value(pkt, slot, at, vlen);
            self.put_text(pkt, at + vlen, T_CRLF_END, 0, 0, 7);
            self.answered.inc();
            Action::Reply
        }

        fn put_value(&mut self, pkt: &mut Packet, slot: usize, at: usize, vlen: usize) {
            for w in 0..VALUE_WORDS {
                if 16 * w < vlen {
                    let v = self.values.get(slot * VALUE_WORDS + w);
                    self.put_word(pkt, at + 16 * w, v, vlen - 16 * w);
                }
            }
        }

        /// Answers a binary request with `status`, `extras` bytes of extras and `value` bytes
        /// of value (written after this at `BODY + 24 + extras`).
        fn binary_answer(&mut self, pkt: &mut Packet, status: u16, extras: usize, value: usize) {
            let opcode = pkt.byte(BODY + 1);
            let opaque = (pkt.byte(BODY + 12) as u32) << 24
                | (pkt.byte(BODY + 13) as u32) << 16
                | (pkt.byte(BODY + 14) as u32) << 8
                | pkt.byte(BODY + 15) as u32;
            self.answer(pkt, BIN_HEADER + extras + value);
            let total = (extras + value) as u32;
            pkt.set_byte(BODY, RESPONSE);
            pkt.set_byte(BODY + 1, opcode);
            pkt.set_byte(BODY + 2, 0);
            pkt.set_byte(BODY + 3, 0);
            pkt.set_byte(BODY + 4, extras as u8);
            pkt.set_byte(BODY + 5, 0);
            pkt.set_byte(BODY + 6, (status >> 8) as u8);
            pkt.set_byte(BODY + 7, status as u8);
            pkt.set_byte(BODY + 8, (total >> 24) as u8);
            pkt.set_byte(BODY + 9, (total >> 16) as u8);
            pkt.set_byte(BODY + 10, (total >> 8) as u8);
            pkt.set_byte(BODY + 11, total as u8);
            pkt.set_byte(BODY + 12, (opaque >> 24) as u8);
            pkt.set_byte(BODY + 13, (opaque >> 16) as u8);
            pkt.set_byte(BODY + 14, (opaque >> 8) as u8);
            pkt.set_byte(BODY + 15, opaque as u8);
            for i in 16..24 {
                pkt.set_byte(BODY + i, 0);
            }
            self.answered.inc();
        }

        /// Answers a binary GET hit on entry `slot`.
        fn binary_value(&mut self, pkt: &mut Packet, slot: usize) -> Action {
            let e = self.entries.get(slot);
            let (flags, vlen) = (e as u32, (e >> 40) as u16 as usize);
            self.binary_answer(pkt, 0, 4, vlen);
            pkt.set_byte(BODY + 24, (flags >> 24) as u8);
            pkt.set_byte(BODY + 25, (flags >> 16) as u8);
            pkt.set_byte(BODY + 26, (flags >> 8) as u8);
            pkt.set_byte(BODY + 27, flags as u8);
            self.put_value(pkt, slot, BODY + 28, vlen);
            Action::Reply
        }

        fn binary_status(&mut self, pkt: &mut Packet, status: u16) -> Action {
            if status != 0 && status != STATUS_NOT_FOUND {
                self.errors.inc();
            }
            self.binary_answer(pkt, status, 0, 0);
            Action::Reply
        }

        /// Of a binary message of `len` bytes: whether its header and body fit, and its
        /// opcode, extras length, key length and total body length.
        fn binary_header(&self, pkt: &mut Packet, len: usize) -> (bool, u8, usize, usize, usize) {
            if len < BIN_HEADER {
                return (false, 0, 0, 0, 0);
            }
            let opcode = pkt.byte(BODY + 1);
            let klen = (pkt.byte(BODY + 2) as usize) << 8 | pkt.byte(BODY + 3) as usize;
            let extras = pkt.byte(BODY + 4) as usize;
            let total = (pkt.byte(BODY + 8) as u64) << 24
                | (pkt.byte(BODY + 9) as u64) << 16
                | (pkt.byte(BODY + 10) as u64) << 8
                | pkt.byte(BODY + 11) as u64;
            if total > (len - BIN_HEADER) as u64 || (klen + extras) as u64 > total {
                return (false, 0, 0, 0, 0);
            }
            (true, opcode, extras, klen, total as usize)
        }

        fn drop_malformed(&mut self) -> Action {
            self.malformed.inc();
            Action::Drop(DropReason::Malformed)
        }

        // ---- cache mode ----

        fn from_client(&mut self, pkt: &mut Packet, other: Port) -> Action {
            let (kind, len) = self.classify(pkt, true);
            if kind == OTHER {
                return Action::Forward(other);
            }
            if kind == UNREADABLE {
                self.flush();
                return Action::Forward(other);
            }
            if kind == BAD_CHECKSUM {
                return Action::Drop(DropReason::Ipv4Checksum);
            }
            if kind == MALFORMED {
                return self.drop_malformed();
            }
            if kind == LATER {
                return Action::Forward(other);
            }
            if pkt.byte(BODY) == REQUEST {
                let (ok, opcode, extras, klen, _) = self.binary_header(pkt, len);
                if !ok {
                    return self.drop_malformed();
                }
                let kstart = BODY + BIN_HEADER + extras;
                if opcode == OP_GET && kind == SINGLE && extras == 0 && klen >= 1 && klen <= MAX_KEY {
                    let (hit, slot) = self.lookup(pkt, kstart, klen);
                    if hit {
                        self.hits.inc();
                        return self.binary_value(pkt, slot);
                    }
                    self.record_miss(pkt, kstart, klen, true);
                    return Action::Forward(other);
                }
                if opcode == OP_FLUSH || opcode == OP_FLUSHQ {
                    self.flush();
                } else if !binary_reads_only(opcode) {
                    self.invalidate(pkt, kstart, klen);
                }
                self.uncached.inc();
                return Action::Forward(other);
            }
            let end = BODY + len;
            let word = self.text32(pkt, BODY);
            if word == W_GET {
                let klen = self.key_len(pkt, BODY + 4, end);
                let single = klen >= 1 && klen <= MAX_KEY && BODY + 4 + klen + 2 == end;
                if kind == SINGLE && single && self.crlf_at(pkt, BODY + 4 + klen) {
                    let (hit, slot) = self.lookup(pkt, BODY + 4, klen);
                    if hit {
                        self.hits.inc();
                        return self.ascii_value(pkt, slot);
                    }
                    self.record_miss(pkt, BODY + 4, klen, false);
                    return Action::Forward(other);
                }
                self.uncached.inc();
                return Action::Forward(other);
            }
            if word == W_GETS {
                self.uncached.inc();
                return Action::Forward(other);
            }
            if self.text64(pkt, BODY) == W_FLUSH_ALL && pkt.byte(BODY + 8) == b'l' {
                self.flush();
                return Action::Forward(other);
            }
            // Any other command names its key after the first space: a write, perhaps.
            let mut space = 0usize;
            for i in 0..12 {
                if pkt.byte(BODY + i) == b' ' {
                    space = i;
                    break;
                }
            }
            if space != 0 {
                let kstart = BODY + space + 1;
                let klen = self.key_len(pkt, kstart, end);
                self.invalidate(pkt, kstart, klen);
            }
            self.uncached.inc();
            Action::Forward(other)
        }

        fn text32(&self, pkt: &mut Packet, at: usize) -> u32 {
            (pkt.byte(at) as u32) << 24
                | (pkt.byte(at + 1) as u32) << 16
                | (pkt.byte(at + 2) as u32) << 8
                | pkt.byte(at + 3) as u32
        }

        fn text64(&self, pkt: &mut Packet, at: usize) -> u64 {
            (self.text32(pkt, at) as u64) << 32 | self.text32(pkt, at + 4) as u64
        }

        fn from_server(&mut self, pkt: &mut Packet, other: Port) -> Action {
            let (kind, len) = self.classify(pkt, false);
            if kind == BAD_CHECKSUM {
                return Action::Drop(DropReason::Ipv4Checksum);
            }
            if kind == MALFORMED {
                return self.drop_malformed();
            }
            if kind != SINGLE {
                return Action::Forward(other);
            }
            let tag = (pkt.ipv4().dst().0 as u64) << 32
                | (pkt.udp().dst_port() as u64) << 16
                | (pkt.byte(FRAME) as u64) << 8
                | pkt.byte(FRAME + 1) as u64;
            let p = self.pending_slot(tag);
            let info = self.pending.get(p);
            if info & PENDING_VALID == 0 || self.pending_tags.get(p) != tag {
                return Action::Forward(other);
            }
            self.pending.set(p, 0);
            let klen = (info >> 64) as u8 as usize;
            // Where the value is, its length and flags, if the answer is a hit.
            let mut found = false;
            let mut vstart = 0usize;
            let mut vlen = 0usize;
            let mut flags = 0u64;
            if info & PENDING_BINARY != 0 {
                let (ok, opcode, extras, rklen, total) = self.binary_header(pkt, len);
                let status = (pkt.byte(BODY + 6) as u16) << 8 | pkt.byte(BODY + 7) as u16;
                if ok && pkt.byte(BODY) == RESPONSE && opcode == OP_GET && status == 0 && extras == 4 && rklen == 0 {
                    found = true;
                    vstart = BODY + 28;
                    vlen = total - 4;
                    flags = self.text32(pkt, BODY + 24) as u64;
                }
            } else if self.text32(pkt, BODY) == 0x56414c55 && self.text32(pkt, BODY + 2) == 0x4c554520 {
                // VALUE KEY FLAGS BYTES\r\nDATA\r\nEND\r\n, for the pending key.
                let kstart = BODY + 6;
                let mut same = pkt.byte(kstart + klen) == b' ';
                for w in 0..KEY_WORDS {
                    if self.word(pkt, kstart, klen, w) != self.pending_keys.get(p * KEY_WORDS + w) {
                        same = false;
                    }
                }
                let (f, nf) = self.decimal(pkt, kstart + klen + 1);
                let at = kstart + klen + 1 + nf;
                let (v, nv) = self.decimal(pkt, at + 1);
                let data = at + 1 + nv + 2;
                let fits = nf >= 1 && nf <= 10 && f <= 0xffff_ffff && nv >= 1 && nv <= 10 && v <= MAX_VALUE as u64;
                if same && fits && pkt.byte(at) == b' ' && self.crlf_at(pkt, data - 2) {
                    let tail = data + v as usize;
                    if tail + 7 == BODY + len && self.crlf_at(pkt, tail) && self.text32(pkt, tail + 2) == 0x454e440d {
                        found = true;
                        vstart = data;
                        vlen = v as usize;
                        flags = f;
                    }
                }
            }
            if found && vlen <= MAX_VALUE {
                let mut d = klen as u128;
                for w in 0..KEY_WORDS {
                    d = self.mix(d, self.pending_keys.get(p * KEY_WORDS + w));
                }
                let generation = self.generations.get(self.generation_slot(d));
                if (info >> 32) as u32 != generation || info as u32 != self.epoch.get() {
                    self.stale_fills.inc();
                    return Action::Forward(other);
                }
                let slot = self.slot_for(d);
                for w in 0..KEY_WORDS {
                    let k = self.pending_keys.get(p * KEY_WORDS + w);
                    self.keys.set(slot * KEY_WORDS + w, k);
                }
                self.store_value(pkt, slot, vstart, vlen, flags as u32, klen);
                self.fills.inc();
            }
            Action::Forward(other)
        }

        // ---- server mode ----

        fn serve(&mut self, pkt: &mut Packet, other: Port) -> Action {
            let (kind, len) = self.classify(pkt, true);
            if kind == OTHER || kind == UNREADABLE {
                return Action::Forward(other);
            }
            if kind == BAD_CHECKSUM {
                return Action::Drop(DropReason::Ipv4Checksum);
            }
            if kind == MALFORMED {
                return self.drop_malformed();
            }
            if kind != SINGLE {
                return Action::Drop(DropReason::Unsupported);
            }
            if pkt.byte(BODY) == REQUEST {
                return self.serve_binary(pkt, len);
            }
            self.serve_ascii(pkt, len)
        }

        fn serve_binary(&mut self, pkt: &mut Packet, len: usize) -> Action {
            let (ok, opcode, extras, klen, total) = self.binary_header(pkt, len);
            if !ok {
                return self.drop_malformed();
            }
            let kstart = BODY + BIN_HEADER + extras;
            let quiet = opcode == OP_SETQ || opcode == OP_DELETEQ;
            let op = if quiet { opcode & 0x0f } else { opcode };
            if op != OP_GET && op != OP_SET && op != OP_DELETE {
                return self.binary_status(pkt, STATUS_UNKNOWN);
            }
            let want_extras = if op == OP_SET { 8 } else { 0 };
            if extras != want_extras || klen == 0 || klen > MAX_KEY {
                return self.binary_status(pkt, STATUS_EINVAL);
            }
            if op == OP_GET {
                let (hit, slot) = self.lookup(pkt, kstart, klen);
                if hit {
                    self.hits.inc();
                    return self.binary_value(pkt, slot);
                }
                self.misses.inc();
                return self.binary_status(pkt, STATUS_NOT_FOUND);
            }
            if op == OP_DELETE {
                let found = self.invalidate(pkt, kstart, klen);
                if quiet {
                    return Action::Drop(DropReason::Policy);
                }
                if found {
                    return self.binary_status(pkt, 0);
                }
                return self.binary_status(pkt, STATUS_NOT_FOUND);
            }
            let vlen = total - extras - klen;
            if vlen > MAX_VALUE {
                return self.binary_status(pkt, STATUS_E2BIG);
            }
            let flags = self.text32(pkt, BODY + BIN_HEADER);
            self.store_from_packet(pkt, kstart, klen, kstart + klen, vlen, flags);
            if quiet {
                return Action::Drop(DropReason::Policy);
            }
            self.binary_status(pkt, 0)
        }

        fn serve_ascii(&mut self, pkt: &mut Packet, len: usize) -> Action {
            let end = BODY + len;
            let word = self.text32(pkt, BODY);
            let is_delete = self.text64(pkt, BODY) >> 8 == W_DELETE;
            if word != W_GET && word != W_SET && !is_delete {
                self.errors.inc();
                return self.answer_text(pkt, T_ERROR, 0, 0, 7);
            }
            let kstart = if is_delete { BODY + 7 } else { BODY + 4 };
            let klen = self.key_len(pkt, kstart, end);
            if klen == 0 || klen > MAX_KEY {
                return self.client_error(pkt);
            }
            let after = kstart + klen;
            if word == W_GET {
                if pkt.byte(after) == b' ' {
                    self.errors.inc();
                    return self.answer_text(pkt, T_MULTI_1, T_MULTI_2, T_MULTI_3, 40);
                }
                if after + 2 != end || !self.crlf_at(pkt, after) {
                    return self.client_error(pkt);
                }
                let (hit, slot) = self.lookup(pkt, kstart, klen);
                if hit {
                    self.hits.inc();
                    return self.ascii_value(pkt, slot);
                }
                self.misses.inc();
                return self.answer_text(pkt, T_END, 0, 0, 5);
            }
            if is_delete {
                // delete KEY [noreply]\r\n
                let noreply = pkt.byte(after) == b' ' && self.text64(pkt, after + 1) >> 8 == W_NOREPLY;
                let line_end = if noreply { after + 8 } else { after };
                if line_end + 2 != end || !self.crlf_at(pkt, line_end) {
                    return self.client_error(pkt);
                }
                let found = self.invalidate(pkt, kstart, klen);
                if noreply {
                    return Action::Drop(DropReason::Policy);
                }
                if found {
                    return self.answer_text(pkt, T_DELETED, 0, 0, 9);
                }
                return self.answer_text(pkt, T_NOT_FOUND, 0, 0, 11);
            }
            // set KEY FLAGS EXPTIME BYTES [noreply]\r\nDATA\r\n
            let (flags, nf) = self.decimal(pkt, after + 1);
            let at = after + 1 + nf;
            let negative = pkt.byte(at + 1) == b'-';
            let exp_at = if negative { at + 2 } else { at + 1 };
            let (_, ne) = self.decimal(pkt, exp_at);
            let at2 = exp_at + ne;
            let (bytes, nb) = self.decimal(pkt, at2 + 1);
            let at3 = at2 + 1 + nb;
            let noreply = pkt.byte(at3) == b' ' && self.text64(pkt, at3 + 1) >> 8 == W_NOREPLY;
            let line_end = if noreply { at3 + 8 } else { at3 };
            let numbers = nf >= 1 && nf <= 10 && flags <= 0xffff_ffff && ne >= 1 && ne <= 10 && nb >= 1 && nb <= 10;
            if pkt.byte(after) != b' '
                || !numbers
                || pkt.byte(at) != b' '
                || pkt.byte(at2) != b' '
                || !self.crlf_at(pkt, line_end)
            {
                return self.client_error(pkt);
            }
            if bytes > MAX_VALUE as u64 {
                self.errors.inc();
                return self.answer_text(pkt, T_TOO_LARGE_1, T_TOO_LARGE_2, T_TOO_LARGE_3, 41);
            }
            let data = line_end + 2;
            let vlen = bytes as usize;
            if data + vlen + 2 != end || !self.crlf_at(pkt, data + vlen) {
                self.errors.inc();
                return self.answer_text(pkt, T_CLIENT_ERROR_BAD, T_BAD_CHUNK_2, 0, 29);
            }
            // A write of the key through the server is a write like any other.
            let d = self.digest_in_packet(pkt, kstart, klen);
            let g = self.generation_slot(d);
            self.generations.set(g, self.generations.get(g).wrapping_add(1));
            self.store_from_packet(pkt, kstart, klen, data, vlen, flags as u32);
            if noreply {
                return Action::Drop(DropReason::Policy);
            }
            self.answer_text(pkt, T_STORED, 0, 0, 8)
        }
    }

    /// Binary opcodes that change nothing: the gets (GET, GETQ, GETK, GETKQ), NOOP, VERSION,
    /// STAT.
    fn binary_reads_only(opcode: u8) -> bool {
        opcode == 0x00
            || opcode == 0x09
            || opcode == 0x0c
            || opcode == 0x0d
            || opcode == 0x0a
            || opcode == 0x0b
            || opcode == 0x10
    }

    impl NetworkFunction for MemcachedCache {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let other = 1 - (meta.in_port & 1);
            if self.server_mode {
                return self.serve(pkt, other);
            }
            if meta.in_port == self.server_port {
                return self.from_server(pkt, other);
            }
            self.from_client(pkt, other)
        }
    }
}

const MODE: Param = Param {
    name: "mode",
    help: "`cache` (in front of a memcached server on --server-port) or `server` (answers alone)",
    default: Some("cache"),
};
const SERVER_PORT: Param =
    Param { name: "server-port", help: "the port facing the memcached server (0 or 1)", default: Some("1") };
const UDP_PORT: Param = Param { name: "udp-port", help: "memcached's UDP port", default: Some("11211") };

/// The cache `config` describes.
pub fn build(config: &Config) -> Result<MemcachedCache, ConfigError> {
    let server_mode = match config.raw(&MODE)? {
        "cache" => false,
        "server" => true,
        other => return Err(ConfigError(format!("--mode {other}: write `--mode cache` or `--mode server`"))),
    };
    let mut nf = MemcachedCache::new(server_mode);
    let port = config.raw(&SERVER_PORT)?;
    nf.server_port = match port.parse::<Port>() {
        Ok(p) if (p as usize) < HLS_PORTS => p,
        _ => return Err(ConfigError(format!("--server-port {port}: give 0 or 1 (the NF has two ports)"))),
    };
    let udp = config.raw(&UDP_PORT)?;
    nf.udp_port = match udp.parse::<u16>() {
        Ok(p) if p != 0 => p,
        _ => return Err(ConfigError(format!("--udp-port {udp}: give a UDP port from 1 to 65535, e.g. 11211"))),
    };
    Ok(nf)
}

/// The cache as the CPU target runs it, with its counters as the run's summary.
pub struct Reporting(pub MemcachedCache);

impl NetworkFunction for Reporting {
    #[inline]
    fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
        self.0.process(pkt, meta)
    }

    /// The debugger sees the NF's state.
    fn elements(&mut self) -> Vec<(&'static str, &mut dyn emu::state::Element)> {
        self.0.elements()
    }

    fn probes(&self) -> Option<&'static std::thread::LocalKey<emu::probe::Probes>> {
        self.0.probes()
    }

    fn summary(&self) -> String {
        summary(&self.0)
    }
}

/// The counters, one line: hits, misses, fills, refused (stale) fills, invalidations, flushes,
/// uncached requests, answers, errors and malformed datagrams.
pub fn summary(n: &MemcachedCache) -> String {
    let mode = if n.server_mode { "server" } else { "cache" };
    format!(
        "memcached-cache ({mode}): {} hits, {} misses, {} fills, {} stale fills refused, {} invalidations, \
         {} flushes, {} uncached, {} answered, {} errors, {} malformed, {} entries\n",
        n.hits.get(),
        n.misses.get(),
        n.fills.get(),
        n.stale_fills.get(),
        n.invalidations.get(),
        n.flushes.get(),
        n.uncached.get(),
        n.answered.get(),
        n.errors.get(),
        n.malformed.get(),
        n.used.get()
    )
}

/// How the tools find and build the cache.
pub const DESCRIPTOR: NfDescriptor = NfDescriptor {
    name: "memcached-cache",
    summary: "memcached cache (UDP, ASCII and binary) between clients (port 0) and a server (port 1); --mode server answers alone",
    ports: HLS_PORTS,
    window: WINDOW,
    params: &[MODE, SERVER_PORT, UDP_PORT],
    build: |c| Ok(Box::new(Reporting(build(c)?))),
    hls_source: Some(HLS_SOURCE),
};

#[cfg(test)]
mod test;

//! A set-associative hash table in block RAM.

use super::inspect::{exact, parse_table_entry};
use super::{
    with_be_bytes, Cam, DebugMap, Element, ElementKind, EntryError, Shape, MAX_KEY_BYTES,
};
use crate::bits::Bits;
use core::fmt;

/// CRC-32/ISO-HDLC (the zlib and Ethernet FCS CRC) of `bytes`: reflected polynomial
/// `0xEDB88320`, initial value `0xFFFFFFFF`, final XOR `0xFFFFFFFF`.
///
/// ```
/// assert_eq!(emu_core::state::crc32(b"123456789"), 0xCBF4_3926);
/// ```
#[inline]
pub fn crc32(bytes: &[u8]) -> u32 {
    !bytes.iter().fold(!0u32, |crc, &b| {
        (crc >> 8) ^ CRC32_TABLE[((crc ^ b as u32) & 0xff) as usize]
    })
}

/// The byte-at-a-time table of [`crc32`].
const CRC32_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut bit = 0;
        while bit < 8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
            bit += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

/// A set-associative table of `N` (key, value) entries in `N / WAYS` sets of `WAYS` ways
/// (default 4): block RAM with `WAYS` comparators in hardware.
///
/// Semantics, exactly:
///
/// - **Set of a key** ([`set_of`](HashTable::set_of)): `crc32(be) & (N / WAYS − 1)`, where `be`
///   is the key's big-endian byte form ([`Bits::write_be`], `K::BYTES` bytes) and [`crc32`] is
///   CRC-32/ISO-HDLC. A key only ever lives in its set; entry `w` of set `s` is slot
///   `s × WAYS + w`.
/// - **Initial contents:** all ways of all sets empty; every set's round-robin pointer is 0.
/// - **Lookup** ([`get`](HashTable::get)): the value of the way of the key's set holding the
///   key, or `None`.
/// - **Insert of a present key:** overwrites the value in its way. Nothing is evicted and the
///   set's pointer does not move.
/// - **Insert of a new key:** goes into the lowest-index empty way of its set, even when other
///   sets have room.
/// - **Insert of a new key into a full set:** the way at that set's round-robin pointer is the
///   victim; its entry is replaced by the new one and returned, and the set's pointer advances
///   by one modulo `WAYS`. Each set has its own pointer.
/// - **Remove:** empties the key's way; no pointer moves.
///
/// `N` must be a positive multiple of `WAYS`, `N / WAYS` a power of two, and `K::BYTES` at
/// most 256; anything else is a compile-time error:
///
/// ```compile_fail
/// let t: emu_core::HashTable<u32, u32, 12, 4> = Default::default(); // 3 sets
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct HashTable<K: Bits, V: Bits, const N: usize, const WAYS: usize = 4> {
    /// The `N / WAYS` sets. A set behaves exactly as a [`Cam`] of `WAYS` slots: lowest empty
    /// way first, then its own round-robin pointer.
    sets: Box<[Cam<K, V, WAYS>]>,
    /// The number of stored entries over all sets.
    len: usize,
}

impl<K: Bits, V: Bits, const N: usize, const WAYS: usize> Default for HashTable<K, V, N, WAYS> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Bits, V: Bits, const N: usize, const WAYS: usize> HashTable<K, V, N, WAYS> {
    /// The number of sets, `N / WAYS`.
    pub const SETS: usize = {
        assert!(WAYS >= 1, "HashTable needs WAYS >= 1");
        assert!(
            N >= WAYS && N / WAYS * WAYS == N,
            "HashTable needs N to be a positive multiple of WAYS"
        );
        assert!(
            (N / WAYS).is_power_of_two(),
            "HashTable needs N / WAYS to be a power of two"
        );
        assert!(
            K::BYTES <= MAX_KEY_BYTES,
            "HashTable keys are at most 256 bytes"
        );
        N / WAYS
    };

    /// An empty table.
    pub fn new() -> Self {
        HashTable {
            sets: vec![Cam::new(); Self::SETS].into_boxed_slice(),
            len: 0,
        }
    }

    /// The set `key` lives in: the low bits of the CRC-32 of its big-endian bytes.
    #[inline]
    pub fn set_of(&self, key: K) -> usize {
        Self::set_index(&key)
    }

    #[inline]
    fn set_index(key: &K) -> usize {
        with_be_bytes(key, |be| crc32(be) as usize & (Self::SETS - 1))
    }

    /// The value stored under `key`.
    #[inline]
    pub fn get(&self, key: K) -> Option<V> {
        self.sets.get(Self::set_index(&key))?.get(key)
    }

    /// True when `key` is stored.
    #[inline]
    pub fn contains(&self, key: K) -> bool {
        self.get(key).is_some()
    }

    /// Stores `value` under `key` and returns the entry evicted from its set, if one was.
    ///
    /// See the type's documentation for which way is used.
    #[inline]
    pub fn insert(&mut self, key: K, value: V) -> Option<(K, V)> {
        let set = self.sets.get_mut(Self::set_index(&key))?;
        let before = set.len();
        let evicted = set.insert(key, value);
        self.len += set.len() - before;
        evicted
    }

    /// Removes `key` and returns its value, if it was stored.
    #[inline]
    pub fn remove(&mut self, key: K) -> Option<V> {
        let value = self.sets.get_mut(Self::set_index(&key))?.remove(key)?;
        self.len -= 1;
        Some(value)
    }

    /// The number of stored entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no entry is stored.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of slots, `N`.
    #[inline]
    pub fn capacity(&self) -> usize {
        N
    }

    /// The stored entries as (slot, key, value) in slot order; slot = set × WAYS + way.
    pub fn entries(&self) -> impl Iterator<Item = (usize, K, V)> + '_ {
        self.sets.iter().enumerate().flat_map(|(set, ways)| {
            ways.entries()
                .map(move |(way, k, v)| (set * WAYS + way, k, v))
        })
    }
}

impl<K, V, const N: usize, const WAYS: usize> fmt::Debug for HashTable<K, V, N, WAYS>
where
    K: Bits + fmt::Debug,
    V: Bits + fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let slots = || self.entries().map(|(i, k, v)| (i, (k, v)));
        f.debug_struct("HashTable")
            .field("len", &self.len)
            .field("sets", &(N / WAYS.max(1)))
            .field("ways", &WAYS)
            .field("slots", &DebugMap(slots))
            .finish()
    }
}

/// Entry `set × WAYS + way` is `valid`, key, value; a written key must hash to that set.
impl<K: Bits, V: Bits, const N: usize, const WAYS: usize> Element for HashTable<K, V, N, WAYS> {
    fn kind(&self) -> ElementKind {
        ElementKind::HashTable
    }
    fn size(&self) -> usize {
        N
    }
    fn key(&self) -> Option<Shape> {
        Some(Shape::of::<K>())
    }
    fn value(&self) -> Shape {
        Shape::of::<V>()
    }
    fn read(&self, index: usize) -> Option<Vec<u8>> {
        self.sets.get(index / WAYS)?.read(index % WAYS)
    }
    /// A set's round-robin pointer that has moved (its `Cam`'s).
    fn unshown_state(&self) -> bool {
        self.sets.iter().any(|set| set.unshown_state())
    }
    fn write(&mut self, index: usize, entry: &[u8]) -> Result<(), EntryError> {
        let set = index / WAYS;
        if index >= N {
            return Err(EntryError::BadIndex);
        }
        if let Some((k, _)) = parse_table_entry::<K, V>(entry)? {
            if Self::set_index(&k) != set {
                return Err(EntryError::WrongSet);
            }
        }
        let ways = &mut self.sets[set];
        let before = ways.len();
        ways.write(index % WAYS, entry)?;
        self.len = self.len + ways.len() - before;
        Ok(())
    }
    fn find(&self, key: &[u8]) -> Option<usize> {
        let set = Self::set_index(&exact::<K>(key).ok()?);
        Some(set * WAYS + self.sets[set].find(key)?)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::addr::{Ipv4Addr, Mac};
    use crate::bits::Bytes;
    use crate::state::XorShift;

    /// The bit-serial definition, to check the table against.
    fn crc32_bitwise(bytes: &[u8]) -> u32 {
        let mut crc = 0xffff_ffffu32;
        for &b in bytes {
            crc ^= b as u32;
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn crc32_vectors() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"a"), 0xe8b7_be43);
        assert_eq!(
            crc32(b"The quick brown fox jumps over the lazy dog"),
            0x414f_a339
        );
        let mut rng = XorShift(7);
        for len in 0..64 {
            let data: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
            assert_eq!(crc32(&data), crc32_bitwise(&data));
        }
    }

    #[test]
    fn set_is_low_bits_of_crc_of_big_endian_bytes() {
        let t: HashTable<u32, u8, 64, 4> = HashTable::default();
        assert_eq!(HashTable::<u32, u8, 64, 4>::SETS, 16);
        for k in [0u32, 1, 0xdead_beef, u32::MAX] {
            assert_eq!(t.set_of(k), (crc32(&k.to_be_bytes()) & 15) as usize);
        }
        let m: HashTable<Mac, u8, 8, 1> = HashTable::default();
        let mac = Mac::from_bytes([0, 1, 2, 3, 4, 5]);
        assert_eq!(m.set_of(mac), (crc32(&[0, 1, 2, 3, 4, 5]) & 7) as usize);
        let ip: HashTable<Ipv4Addr, u8, 4> = HashTable::default();
        assert_eq!(ip.set_of(Ipv4Addr(0x0a00_0001)), 0);
        // Long keys go through the large buffer.
        let b: HashTable<Bytes<250>, u8, 4, 2> = HashTable::default();
        assert_eq!(
            b.set_of(Bytes([0x61; 250])),
            (crc32(&[0x61; 250]) & 1) as usize
        );
    }

    /// `count` distinct keys that all hash to set `set`.
    fn keys_in_set<const N: usize, const W: usize>(set: usize, count: usize) -> Vec<u32> {
        let t: HashTable<u32, u32, N, W> = HashTable::default();
        (0u32..)
            .filter(|&k| t.set_of(k) == set)
            .take(count)
            .collect()
    }

    #[test]
    fn starts_empty() {
        let t: HashTable<u32, u32, 16> = HashTable::default();
        assert!(t.is_empty());
        assert_eq!(t.len(), 0);
        assert_eq!(t.capacity(), 16);
        assert_eq!(t.get(0), None);
        assert!(!t.contains(0));
    }

    #[test]
    fn fills_lowest_free_way_then_evicts_round_robin_per_set() {
        let mut t: HashTable<u32, u32, 8, 2> = HashTable::default();
        let a = keys_in_set::<8, 2>(1, 5);
        let other = keys_in_set::<8, 2>(2, 1)[0];
        assert_eq!(t.insert(a[0], 0), None);
        assert_eq!(t.insert(a[1], 1), None);
        assert_eq!(t.insert(other, 9), None);
        assert_eq!(
            t.entries().collect::<Vec<_>>(),
            vec![(2, a[0], 0), (3, a[1], 1), (4, other, 9)]
        );
        // Set 1 is full, although other sets have room: evict way 0, then way 1, then way 0.
        assert_eq!(t.insert(a[2], 2), Some((a[0], 0)));
        assert_eq!(t.insert(a[3], 3), Some((a[1], 1)));
        assert_eq!(t.insert(a[4], 4), Some((a[2], 2)));
        assert_eq!(t.len(), 3);
        assert_eq!(t.get(a[4]), Some(4));
        assert_eq!(t.get(a[3]), Some(3));
        assert_eq!(t.get(a[0]), None);
        assert_eq!(t.get(other), Some(9));
    }

    #[test]
    fn pointers_are_per_set() {
        let mut t: HashTable<u32, u32, 4, 2> = HashTable::default();
        let s0 = keys_in_set::<4, 2>(0, 3);
        let s1 = keys_in_set::<4, 2>(1, 4);
        for &k in &s0 {
            t.insert(k, k);
        } // set 0 evicted its way 0; pointer → 1
        for &k in &s1[..3] {
            t.insert(k, k);
        } // set 1 evicted its way 0 too; its own pointer → 1
        assert_eq!(t.insert(s1[3], 0), Some((s1[1], s1[1])));
        assert_eq!(
            t.entries().map(|e| e.1).collect::<Vec<_>>(),
            vec![s0[2], s0[1], s1[2], s1[3]]
        );
    }

    #[test]
    fn overwrite_keeps_way_and_pointer() {
        let mut t: HashTable<u32, u32, 4, 2> = HashTable::default();
        let k = keys_in_set::<4, 2>(0, 3);
        t.insert(k[0], 1);
        t.insert(k[1], 2);
        assert_eq!(t.insert(k[1], 20), None);
        assert_eq!(t.insert(k[0], 10), None);
        assert_eq!(t.len(), 2);
        assert_eq!(t.get(k[0]), Some(10));
        assert_eq!(t.insert(k[2], 3), Some((k[0], 10)));
    }

    #[test]
    fn remove_frees_the_way() {
        let mut t: HashTable<u32, u32, 4, 2> = HashTable::default();
        let k = keys_in_set::<4, 2>(1, 4);
        t.insert(k[0], 0);
        t.insert(k[1], 1);
        assert_eq!(t.insert(k[2], 2), Some((k[0], 0))); // way 0, pointer → 1
        assert_eq!(t.remove(k[2]), Some(2));
        assert_eq!(t.remove(k[2]), None);
        assert_eq!(t.len(), 1);
        assert_eq!(t.insert(k[3], 3), None); // free way 0
        assert_eq!(
            t.entries().collect::<Vec<_>>(),
            vec![(2, k[3], 3), (3, k[1], 1)]
        );
        assert_eq!(t.insert(k[0], 0), Some((k[1], 1))); // pointer still 1
    }

    #[test]
    fn direct_mapped_and_fully_associative_extremes() {
        let mut d: HashTable<u32, u32, 4, 1> = HashTable::default();
        let k = keys_in_set::<4, 1>(3, 2);
        d.insert(k[0], 0);
        assert_eq!(d.insert(k[1], 1), Some((k[0], 0)));
        let mut f: HashTable<u32, u32, 2, 2> = HashTable::default();
        assert_eq!(f.set_of(12345), 0);
        f.insert(1, 1);
        f.insert(2, 2);
        assert_eq!(f.insert(3, 3), Some((1, 1)));
    }

    #[test]
    fn debug_shows_occupied_slots() {
        let mut t: HashTable<u8, u8, 4, 4> = HashTable::default();
        t.insert(5, 6);
        assert_eq!(
            format!("{t:?}"),
            "HashTable { len: 1, sets: 1, ways: 4, slots: {0: (5, 6)} }"
        );
    }

    #[test]
    fn matches_model_on_random_operations() {
        const N: usize = 16;
        const W: usize = 4;
        let mut rng = XorShift(0x1234_5678_9abc_def1);
        let mut t: HashTable<u16, u16, N, W> = HashTable::default();
        let mut slots = [None::<(u16, u16)>; N];
        let mut ptr = [0usize; N / W];
        for step in 0..20_000 {
            let k = rng.below(40) as u16;
            let v = rng.below(1000) as u16;
            let s = (crc32(&k.to_be_bytes()) as usize) % (N / W);
            let set = &mut slots[s * W..(s + 1) * W];
            match rng.below(4) {
                0 => {
                    let want = set
                        .iter_mut()
                        .find(|e| matches!(e, Some((key, _)) if *key == k))
                        .and_then(|e| e.take())
                        .map(|e| e.1);
                    assert_eq!(t.remove(k), want, "step {step}");
                }
                1 => {
                    let want = set.iter().flatten().find(|e| e.0 == k).map(|e| e.1);
                    assert_eq!(t.get(k), want, "step {step}");
                }
                _ => {
                    let want = if let Some(e) = set.iter_mut().flatten().find(|e| e.0 == k) {
                        e.1 = v;
                        None
                    } else if let Some(e) = set.iter_mut().find(|e| e.is_none()) {
                        *e = Some((k, v));
                        None
                    } else {
                        let old = set[ptr[s]].replace((k, v));
                        ptr[s] = (ptr[s] + 1) % W;
                        old
                    };
                    assert_eq!(t.insert(k, v), want, "step {step}");
                }
            }
            assert_eq!(t.len(), slots.iter().flatten().count());
        }
        let want: Vec<_> = slots
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.map(|(k, v)| (i, k, v)))
            .collect();
        assert_eq!(t.entries().collect::<Vec<_>>(), want);
    }
}

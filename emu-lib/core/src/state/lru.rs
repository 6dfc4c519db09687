//! A table with exact least-recently-used replacement: fully associative, or in sets.

use super::hash_table::crc32;
use super::inspect::{exact, parse_table_entry, table_entry};
use super::slots::Slots;
use super::{with_be_bytes, Element, ElementKind, EntryError, Shape, MAX_KEY_BYTES};
use super::DebugMap;
use crate::bits::Bits;
use core::fmt;

/// A table of up to `N` (key, value) entries that evicts exactly the least recently used
/// entry — of the whole table (`WAYS = N`, the default: fully associative, `N` comparators and
/// age registers in hardware) or of the key's set (`WAYS < N`: `N / WAYS` sets of `WAYS` ways,
/// placed as in a [`HashTable`](super::HashTable), in block RAM in hardware).
///
/// Semantics, exactly:
///
/// - **Set of a key** ([`set_of`](Lru::set_of)): `crc32(be) & (N / WAYS − 1)` as in a
///   [`HashTable`](super::HashTable) (always 0 with one set). A key only ever lives in its set;
///   way `w` of set `s` is slot `s × WAYS + w`. Each set is an LRU table of its own: what
///   follows holds per set, and using an entry changes no other set.
/// - **Use:** an entry is *used* when it is inserted, overwritten by [`insert`](Lru::insert), or
///   hit by [`get`](Lru::get). [`peek`](Lru::peek), [`contains`](Lru::contains) and a missing
///   [`get`](Lru::get) use nothing.
/// - **Initial contents:** all `N` slots empty.
/// - **Insert of a present key:** overwrites the value in its slot and makes it the most
///   recently used; nothing is evicted.
/// - **Insert of a new key:** goes into the lowest-index empty way of its set (even when other
///   sets have room) and is the most recently used.
/// - **Insert of a new key into a full set:** the set's least recently used entry is the
///   victim; its slot takes the new entry (the most recently used now) and the victim is
///   returned.
/// - **Remove:** empties the key's slot; the others keep their order.
///
/// Recency is kept as one *age* per slot (⌈log2 WAYS⌉ bits in hardware): the age of a stored
/// entry is the number of stored entries of its set used more recently, so the ages of a set's
/// `len` stored entries are exactly `0..len` and the victim of a full set is the one way of age
/// `WAYS − 1`. Using the entry of age `a` adds 1 to every stored age of its set below `a` and
/// sets its own to 0 (a new entry counts as `a = len`); removing the entry of age `a`
/// subtracts 1 from every stored age of its set above `a`. Ages are bounded, so nothing ever
/// wraps.
///
/// `N` must be a positive multiple of `WAYS`, `N / WAYS` a power of two, and with more than one
/// set `K::BYTES` at most 256; anything else is a compile-time error:
///
/// ```compile_fail
/// let t: emu_core::Lru<u32, u32, 12, 4> = Default::default(); // 3 sets
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Lru<K: Bits, V: Bits, const N: usize, const WAYS: usize = N> {
    /// The `N / WAYS` sets.
    sets: Box<[LruSet<K, V, WAYS>]>,
    /// The number of stored entries over all sets.
    len: usize,
}

impl<K: Bits, V: Bits, const N: usize, const WAYS: usize> Default for Lru<K, V, N, WAYS> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Bits, V: Bits, const N: usize, const WAYS: usize> Lru<K, V, N, WAYS> {
    /// The number of sets, `N / WAYS`.
    pub const SETS: usize = {
        assert!(WAYS >= 1, "Lru<K, V, N, WAYS> needs WAYS >= 1");
        assert!(
            N >= WAYS && N / WAYS * WAYS == N,
            "Lru<K, V, N, WAYS> needs N to be a positive multiple of WAYS"
        );
        assert!(
            (N / WAYS).is_power_of_two(),
            "Lru<K, V, N, WAYS> needs N / WAYS to be a power of two"
        );
        assert!(
            N == WAYS || K::BYTES <= MAX_KEY_BYTES,
            "the keys of an Lru in sets are at most 256 bytes"
        );
        N / WAYS
    };

    /// An empty table.
    #[inline]
    pub fn new() -> Self {
        Lru {
            sets: vec![LruSet::new(); Self::SETS].into_boxed_slice(),
            len: 0,
        }
    }

    /// The set `key` lives in: the low bits of the CRC-32 of its big-endian bytes (0 with one
    /// set).
    #[inline]
    pub fn set_of(&self, key: K) -> usize {
        Self::set_index(&key)
    }

    #[inline]
    fn set_index(key: &K) -> usize {
        if Self::SETS == 1 {
            0
        } else {
            with_be_bytes(key, |be| crc32(be) as usize & (Self::SETS - 1))
        }
    }

    #[inline]
    fn set(&self, key: &K) -> &LruSet<K, V, WAYS> {
        &self.sets[Self::set_index(key)]
    }

    /// The value stored under `key`, making the entry the most recently used of its set.
    #[inline]
    pub fn get(&mut self, key: K) -> Option<V> {
        self.sets[Self::set_index(&key)].get(key)
    }

    /// The value stored under `key`, without changing the recency order.
    #[inline]
    pub fn peek(&self, key: K) -> Option<V> {
        self.set(&key).peek(key)
    }

    /// True when `key` is stored; changes nothing.
    #[inline]
    pub fn contains(&self, key: K) -> bool {
        self.set(&key).slots.find(key).is_some()
    }

    /// Stores `value` under `key` as the most recently used entry of its set and returns the
    /// set's least recently used entry if one was evicted to make room.
    #[inline]
    pub fn insert(&mut self, key: K, value: V) -> Option<(K, V)> {
        let set = &mut self.sets[Self::set_index(&key)];
        let before = set.slots.len();
        let evicted = set.insert(key, value);
        self.len = self.len + set.slots.len() - before;
        evicted
    }

    /// Removes `key` and returns its value, if it was stored.
    #[inline]
    pub fn remove(&mut self, key: K) -> Option<V> {
        let value = self.sets[Self::set_index(&key)].remove(key)?;
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

    /// The stored entries as (slot, key, value), in slot order (slot = set × WAYS + way);
    /// changes nothing.
    pub fn entries(&self) -> impl Iterator<Item = (usize, K, V)> + '_ {
        self.sets.iter().enumerate().flat_map(|(s, set)| {
            set.slots
                .entries()
                .map(move |(way, k, v)| (s * WAYS + way, k, v))
        })
    }

    /// The stored keys set by set, each set's from most to least recently used (with one set,
    /// the whole table's recency order); changes nothing.
    pub fn keys_by_recency(&self) -> impl Iterator<Item = K> + '_ {
        self.sets.iter().flat_map(LruSet::keys_by_recency)
    }

    /// The age of each slot (see the type's documentation), 0 for an empty one, in slot order.
    pub fn ages(&self) -> impl Iterator<Item = usize> + '_ {
        self.sets.iter().flat_map(|set| set.ages.iter().copied())
    }
}

/// One set of an [`Lru`]: `W` slots with exact LRU replacement among them.
#[derive(Clone, PartialEq, Eq)]
struct LruSet<K: Bits, V: Bits, const W: usize> {
    slots: Slots<K, V, W>,
    /// Per slot, the number of stored entries used more recently; 0 for an empty slot.
    ages: [usize; W],
}

impl<K: Bits, V: Bits, const W: usize> LruSet<K, V, W> {
    #[inline]
    fn new() -> Self {
        LruSet {
            slots: Slots::new(),
            ages: [0; W],
        }
    }

    /// Makes the entry in `slot` (`< W`), of age `age`, the most recently used.
    #[inline]
    fn touch(&mut self, slot: usize, age: usize) {
        for (a, &valid) in self.ages.iter_mut().zip(self.slots.valid()) {
            if valid && *a < age {
                *a += 1;
            }
        }
        self.ages[slot] = 0;
    }

    #[inline]
    fn get(&mut self, key: K) -> Option<V> {
        let slot = self.slots.find(key)?;
        self.touch(slot, self.ages[slot]);
        Some(self.slots.value(slot))
    }

    #[inline]
    fn peek(&self, key: K) -> Option<V> {
        self.slots.find(key).map(|slot| self.slots.value(slot))
    }

    #[inline]
    fn insert(&mut self, key: K, value: V) -> Option<(K, V)> {
        match self.slots.find_or_free(key) {
            (Some(slot), _) => {
                self.slots.set_value(slot, value);
                self.touch(slot, self.ages[slot]);
                None
            }
            (None, free) if free < W => {
                // A new entry is older than every stored one until touched.
                self.touch(free, self.slots.len());
                self.slots.put(free, key, value)
            }
            (None, _) => {
                // Full: the ages are exactly 0..W, and the victim is the one slot of age W − 1.
                let victim = self.ages.iter().position(|&a| a == W - 1).unwrap_or(0);
                let evicted = self.slots.put(victim, key, value);
                self.touch(victim, W - 1);
                evicted
            }
        }
    }

    #[inline]
    fn remove(&mut self, key: K) -> Option<V> {
        let slot = self.slots.find(key)?;
        self.clear(slot)
    }

    /// Empties `slot`; the others keep their order.
    fn clear(&mut self, slot: usize) -> Option<V> {
        let age = core::mem::take(&mut self.ages[slot]);
        for (a, &valid) in self.ages.iter_mut().zip(self.slots.valid()) {
            if valid && *a > age {
                *a -= 1;
            }
        }
        self.slots.clear(slot).map(|(_, v)| v)
    }

    fn keys_by_recency(&self) -> impl Iterator<Item = K> + '_ {
        (0..self.slots.len()).filter_map(move |age| {
            self.slots
                .entries()
                .find(|&(slot, _, _)| self.ages[slot] == age)
                .map(|(_, k, _)| k)
        })
    }

    /// The debugger's write of `slot` (`< W`): the old entry leaves as by a remove, the new one
    /// (if any) arrives as the most recently used.
    fn write(&mut self, slot: usize, new: Option<(K, V)>) -> Result<(), EntryError> {
        if let Some((k, _)) = new {
            if self.slots.find(k).is_some_and(|i| i != slot) {
                return Err(EntryError::KeyElsewhere);
            }
        }
        if self.slots.get(slot).is_some() {
            self.clear(slot);
        }
        if let Some((k, v)) = new {
            self.touch(slot, self.slots.len());
            self.slots.put(slot, k, v);
        }
        Ok(())
    }
}

impl<K, V, const N: usize, const WAYS: usize> fmt::Debug for Lru<K, V, N, WAYS>
where
    K: Bits + fmt::Debug,
    V: Bits + fmt::Debug,
{
    /// Shows the stored slots as `slot: (key, value, age)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let slots = || {
            self.sets.iter().enumerate().flat_map(|(s, set)| {
                set.slots
                    .entries()
                    .map(move |(w, k, v)| (s * WAYS + w, (k, v, set.ages[w])))
            })
        };
        let mut d = f.debug_struct("Lru");
        d.field("len", &self.len);
        if self.sets.len() > 1 {
            d.field("sets", &self.sets.len()).field("ways", &WAYS);
        }
        d.field("slots", &DebugMap(slots)).finish()
    }
}

/// An entry is `valid`, key, value; a written key must hash to the slot's set; a written entry
/// is the most recently used of its set, an emptied slot leaves the others' order as it was.
impl<K: Bits, V: Bits, const N: usize, const WAYS: usize> Element for Lru<K, V, N, WAYS> {
    fn kind(&self) -> ElementKind {
        ElementKind::Lru
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
        (index < N).then(|| table_entry(self.sets[index / WAYS].slots.get(index % WAYS)))
    }
    fn write(&mut self, index: usize, entry: &[u8]) -> Result<(), EntryError> {
        if index >= N {
            return Err(EntryError::BadIndex);
        }
        let new = parse_table_entry::<K, V>(entry)?;
        let set = index / WAYS;
        if new.is_some_and(|(k, _)| Self::set_index(&k) != set) {
            return Err(EntryError::WrongSet);
        }
        let ways = &mut self.sets[set];
        let before = ways.slots.len();
        ways.write(index % WAYS, new)?;
        self.len = self.len + ways.slots.len() - before;
        Ok(())
    }
    fn find(&self, key: &[u8]) -> Option<usize> {
        let key = exact::<K>(key).ok()?;
        let set = Self::set_index(&key);
        Some(set * WAYS + self.sets[set].slots.find(key)?)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::state::XorShift;

    #[test]
    fn starts_empty() {
        let mut l: Lru<u32, u32, 3> = Lru::default();
        assert!(l.is_empty());
        assert_eq!(l.len(), 0);
        assert_eq!(l.capacity(), 3);
        assert_eq!(l.get(1), None);
        assert_eq!(l.peek(1), None);
        assert_eq!(l.remove(1), None);
        assert_eq!(l.keys_by_recency().count(), 0);
    }

    #[test]
    fn full_table_evicts_least_recently_inserted() {
        let mut l: Lru<u8, u8, 3> = Lru::default();
        for k in 1..=3 {
            assert_eq!(l.insert(k, k * 10), None);
        }
        assert_eq!(
            l.entries().collect::<Vec<_>>(),
            vec![(0, 1, 10), (1, 2, 20), (2, 3, 30)]
        );
        assert_eq!(l.insert(4, 40), Some((1, 10)));
        assert_eq!(l.entry_slot(4), Some(0));
        assert_eq!(l.insert(5, 50), Some((2, 20)));
        assert_eq!(l.keys_by_recency().collect::<Vec<_>>(), vec![5, 4, 3]);
    }

    #[test]
    fn get_hit_makes_most_recent_peek_does_not() {
        let mut l: Lru<u8, u8, 3> = Lru::default();
        l.insert(1, 1);
        l.insert(2, 2);
        l.insert(3, 3);
        assert_eq!(l.peek(1), Some(1)); // no effect
        assert_eq!(l.get(2), Some(2)); // 2 is now the newest; order: 2, 3, 1
        assert_eq!(l.get(9), None); // a miss uses nothing
        assert_eq!(l.keys_by_recency().collect::<Vec<_>>(), vec![2, 3, 1]);
        assert_eq!(l.insert(4, 4), Some((1, 1)));
        assert_eq!(l.insert(5, 5), Some((3, 3)));
        assert_eq!(l.insert(6, 6), Some((2, 2)));
    }

    #[test]
    fn overwrite_makes_most_recent_without_eviction() {
        let mut l: Lru<u8, u8, 2> = Lru::default();
        l.insert(1, 1);
        l.insert(2, 2);
        assert_eq!(l.insert(1, 11), None);
        assert_eq!(l.len(), 2);
        assert_eq!(l.peek(1), Some(11));
        assert_eq!(l.insert(3, 3), Some((2, 2)));
        assert_eq!(l.entries().collect::<Vec<_>>(), vec![(0, 1, 11), (1, 3, 3)]);
    }

    #[test]
    fn remove_frees_lowest_slot_and_keeps_order() {
        let mut l: Lru<u8, u8, 3> = Lru::default();
        l.insert(1, 1);
        l.insert(2, 2);
        l.insert(3, 3);
        assert_eq!(l.remove(2), Some(2));
        assert_eq!(l.remove(2), None);
        assert_eq!(l.keys_by_recency().collect::<Vec<_>>(), vec![3, 1]);
        assert_eq!(l.insert(4, 4), None);
        assert_eq!(l.entry_slot(4), Some(1));
        assert_eq!(l.insert(5, 5), Some((1, 1)));
        assert_eq!(l.insert(6, 6), Some((3, 3)));
        assert_eq!(l.insert(7, 7), Some((4, 4)));
    }

    #[test]
    fn single_slot() {
        let mut l: Lru<bool, u8, 1> = Lru::default();
        assert_eq!(l.insert(true, 1), None);
        assert_eq!(l.get(true), Some(1));
        assert_eq!(l.insert(false, 2), Some((true, 1)));
        assert_eq!(l.insert(false, 3), None);
        assert_eq!(l.get(false), Some(3));
    }

    #[test]
    fn debug_shows_ages() {
        let mut l: Lru<u8, u8, 4> = Lru::default();
        l.insert(1, 10);
        l.insert(2, 20);
        assert_eq!(
            format!("{l:?}"),
            "Lru { len: 2, slots: {0: (1, 10, 1), 1: (2, 20, 0)} }"
        );
    }

    #[test]
    fn equal_when_contents_and_order_are() {
        let mut a: Lru<u8, u8, 2> = Lru::default();
        a.insert(1, 1);
        a.insert(2, 2);
        assert_eq!(a.remove(1), Some(1)); // slot 0 held the older entry
        let mut b: Lru<u8, u8, 2> = Lru::default();
        b.insert(9, 9);
        b.insert(2, 2);
        b.get(9);
        assert_eq!(b.remove(9), Some(9)); // slot 0 held the newer entry
        assert_eq!(a, b);
        assert_eq!(format!("{a:?}"), "Lru { len: 1, slots: {1: (2, 2, 0)} }");
    }

    impl<K: Bits, V: Bits, const N: usize, const WAYS: usize> Lru<K, V, N, WAYS> {
        fn entry_slot(&self, key: K) -> Option<usize> {
            let set = Self::set_index(&key);
            Some(set * WAYS + self.sets[set].slots.find(key)?)
        }
    }

    #[test]
    fn matches_model_on_random_operations() {
        const N: usize = 4;
        let mut rng = XorShift(0xdead_beef_cafe_f00d);
        let mut l: Lru<u8, u8, N> = Lru::default();
        // The model: slots, plus the keys from most to least recently used.
        let mut slots = [None::<(u8, u8)>; N];
        let mut order: Vec<u8> = Vec::new();
        for step in 0..20_000 {
            let k = rng.below(9) as u8;
            let v = rng.below(256) as u8;
            match rng.below(5) {
                0 => {
                    let want = slots
                        .iter_mut()
                        .find(|e| matches!(e, Some((key, _)) if *key == k))
                        .and_then(|e| e.take())
                        .map(|e| e.1);
                    order.retain(|&x| x != k);
                    assert_eq!(l.remove(k), want, "step {step}");
                }
                1 => {
                    let want = slots.iter().flatten().find(|e| e.0 == k).map(|e| e.1);
                    assert_eq!(l.peek(k), want, "step {step}");
                }
                2 => {
                    let want = slots.iter().flatten().find(|e| e.0 == k).map(|e| e.1);
                    if want.is_some() {
                        order.retain(|&x| x != k);
                        order.insert(0, k);
                    }
                    assert_eq!(l.get(k), want, "step {step}");
                }
                _ => {
                    let want = if let Some(e) = slots.iter_mut().flatten().find(|e| e.0 == k) {
                        e.1 = v;
                        order.retain(|&x| x != k);
                        None
                    } else if let Some(e) = slots.iter_mut().find(|e| e.is_none()) {
                        *e = Some((k, v));
                        None
                    } else {
                        let lru = order.pop().unwrap();
                        let e = slots.iter_mut().find(|e| e.unwrap().0 == lru).unwrap();
                        e.replace((k, v))
                    };
                    order.insert(0, k);
                    assert_eq!(l.insert(k, v), want, "step {step}");
                }
            }
            assert_eq!(l.len(), order.len(), "step {step}");
            assert_eq!(
                l.keys_by_recency().collect::<Vec<_>>(),
                order,
                "step {step}"
            );
            let want: Vec<_> = slots
                .iter()
                .enumerate()
                .filter_map(|(i, e)| e.map(|(k, v)| (i, k, v)))
                .collect();
            assert_eq!(l.entries().collect::<Vec<_>>(), want, "step {step}");
        }
    }

    /// In sets, each set is exactly a fully associative `Lru` of `WAYS` slots, the set chosen as
    /// a `HashTable`'s.
    #[test]
    fn sets_are_fully_associative_tables_of_their_own() {
        let mut rng = XorShift(0x5e75_0f_1a_u64);
        let mut l: Lru<u16, u8, 16, 4> = Lru::default();
        let h: crate::HashTable<u16, u8, 16, 4> = Default::default();
        let mut model: Vec<Lru<u16, u8, 4>> = vec![Lru::default(); 4];
        let mut evictions = 0;
        for step in 0..20_000 {
            let k = rng.below(40) as u16;
            let v = rng.below(256) as u8;
            let s = l.set_of(k);
            assert_eq!(s, h.set_of(k), "the HashTable's set");
            let m = &mut model[s];
            match rng.below(5) {
                0 => assert_eq!(l.remove(k), m.remove(k), "step {step}"),
                1 => assert_eq!(l.peek(k), m.peek(k), "step {step}"),
                2 => assert_eq!(l.get(k), m.get(k), "step {step}"),
                _ => {
                    let e = m.insert(k, v);
                    evictions += e.is_some() as u32;
                    assert_eq!(l.insert(k, v), e, "step {step}");
                }
            }
            let want: Vec<_> = model
                .iter()
                .enumerate()
                .flat_map(|(s, m)| m.entries().map(move |(w, k, v)| (s * 4 + w, k, v)))
                .collect();
            assert_eq!(l.entries().collect::<Vec<_>>(), want, "step {step}");
            assert_eq!(l.len(), want.len());
            let ages: Vec<_> = model.iter().flat_map(|m| m.ages()).collect();
            assert_eq!(l.ages().collect::<Vec<_>>(), ages, "step {step}");
        }
        assert!(evictions > 1000, "{evictions} evictions");
    }

    #[test]
    fn a_written_key_must_hash_to_the_slots_set() {
        let mut l: Lru<u16, u8, 8, 2> = Lru::default();
        let k = 7u16;
        let s = l.set_of(k);
        let entry = |k: u16, v: u8| {
            let mut e = vec![1];
            e.extend(k.to_be_bytes());
            e.push(v);
            e
        };
        let other = (s + 1) % 4;
        assert_eq!(l.write(other * 2, &entry(k, 1)), Err(EntryError::WrongSet));
        assert_eq!(l.write(s * 2 + 1, &entry(k, 1)), Ok(()));
        assert_eq!(l.find(&k.to_be_bytes()), Some(s * 2 + 1));
        assert_eq!(l.peek(k), Some(1));
        assert_eq!(l.len(), 1);
        assert_eq!(l.write(s * 2 + 1, &[0, 0, 0, 0]), Ok(()));
        assert!(l.is_empty());
    }

    #[test]
    fn debug_shows_sets() {
        let mut l: Lru<u8, u8, 4, 2> = Lru::default();
        l.insert(1, 10);
        let s = l.set_of(1);
        assert_eq!(
            format!("{l:?}"),
            format!("Lru {{ len: 1, sets: 2, ways: 2, slots: {{{}: (1, 10, 0)}} }}", s * 2)
        );
    }
}

//! A fully associative table with exact least-recently-used replacement.

use super::inspect::{exact, parse_table_entry, table_entry};
use super::slots::Slots;
use super::{Element, ElementKind, EntryError, Shape};
use super::DebugMap;
use crate::bits::Bits;
use core::fmt;

/// A fully associative table of up to `N` (key, value) entries, `N ≥ 1`, that evicts exactly
/// the least recently used entry.
///
/// Semantics, exactly:
///
/// - **Use:** an entry is *used* when it is inserted, overwritten by [`insert`](Lru::insert), or
///   hit by [`get`](Lru::get). [`peek`](Lru::peek), [`contains`](Lru::contains) and a missing
///   [`get`](Lru::get) use nothing.
/// - **Initial contents:** all `N` slots empty.
/// - **Insert of a present key:** overwrites the value in its slot and makes it the most
///   recently used; nothing is evicted.
/// - **Insert of a new key:** goes into the lowest-index empty slot and is the most recently
///   used.
/// - **Insert of a new key when full:** the least recently used entry is the victim; its slot
///   takes the new entry (the most recently used now) and the victim is returned.
/// - **Remove:** empties the key's slot; the others keep their order.
///
/// Recency is kept as one *age* per slot (a register of ⌈log2 N⌉ bits in hardware, all compared
/// in parallel): the age of a stored entry is the number of stored entries used more recently,
/// so the ages of the `len` stored entries are exactly `0..len` and the victim of a full table
/// is the one slot of age `N − 1`. Using the entry of age `a` adds 1 to every stored age below
/// `a` and sets its own to 0 (a new entry counts as `a = len`); removing the entry of age `a`
/// subtracts 1 from every stored age above `a`. Ages are bounded, so nothing ever wraps.
///
/// `N = 0` is a compile-time error.
#[derive(Clone, PartialEq, Eq)]
pub struct Lru<K: Bits, V: Bits, const N: usize> {
    slots: Slots<K, V, N>,
    /// Per slot, the number of stored entries used more recently; 0 for an empty slot.
    ages: [usize; N],
}

impl<K: Bits, V: Bits, const N: usize> Default for Lru<K, V, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Bits, V: Bits, const N: usize> Lru<K, V, N> {
    const NOT_EMPTY: () = assert!(N >= 1, "Lru<K, V, N> needs N >= 1");

    /// An empty table.
    #[inline]
    pub fn new() -> Self {
        let () = Self::NOT_EMPTY;
        Lru {
            slots: Slots::new(),
            ages: [0; N],
        }
    }

    #[inline]
    fn slot_of(&self, key: K) -> Option<usize> {
        self.slots.find(key)
    }

    /// Makes the entry in `slot` (`< N`), of age `age`, the most recently used.
    #[inline]
    fn touch(&mut self, slot: usize, age: usize) {
        for (a, &valid) in self.ages.iter_mut().zip(self.slots.valid()) {
            if valid && *a < age {
                *a += 1;
            }
        }
        self.ages[slot] = 0;
    }

    /// The value stored under `key`, making the entry the most recently used.
    #[inline]
    pub fn get(&mut self, key: K) -> Option<V> {
        let slot = self.slot_of(key)?;
        self.touch(slot, self.ages[slot]);
        Some(self.slots.value(slot))
    }

    /// The value stored under `key`, without changing the recency order.
    #[inline]
    pub fn peek(&self, key: K) -> Option<V> {
        self.slot_of(key).map(|slot| self.slots.value(slot))
    }

    /// True when `key` is stored; changes nothing.
    #[inline]
    pub fn contains(&self, key: K) -> bool {
        self.slot_of(key).is_some()
    }

    /// Stores `value` under `key` as the most recently used entry and returns the least
    /// recently used entry if one was evicted to make room.
    #[inline]
    pub fn insert(&mut self, key: K, value: V) -> Option<(K, V)> {
        match self.slots.find_or_free(key) {
            (Some(slot), _) => {
                self.slots.set_value(slot, value);
                self.touch(slot, self.ages[slot]);
                None
            }
            (None, free) if free < N => {
                // A new entry is older than every stored one until touched.
                self.touch(free, self.slots.len());
                self.slots.put(free, key, value)
            }
            (None, _) => {
                // Full: the ages are exactly 0..N, and the victim is the one slot of age N − 1.
                let victim = self.ages.iter().position(|&a| a == N - 1).unwrap_or(0);
                let evicted = self.slots.put(victim, key, value);
                self.touch(victim, N - 1);
                evicted
            }
        }
    }

    /// Removes `key` and returns its value, if it was stored.
    #[inline]
    pub fn remove(&mut self, key: K) -> Option<V> {
        let slot = self.slot_of(key)?;
        let age = core::mem::take(&mut self.ages[slot]);
        for (a, &valid) in self.ages.iter_mut().zip(self.slots.valid()) {
            if valid && *a > age {
                *a -= 1;
            }
        }
        self.slots.clear(slot).map(|(_, v)| v)
    }

    /// The number of stored entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when no entry is stored.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.slots.len() == 0
    }

    /// The number of slots, `N`.
    #[inline]
    pub fn capacity(&self) -> usize {
        N
    }

    /// The stored entries as (slot, key, value), in slot order; changes nothing.
    pub fn entries(&self) -> impl Iterator<Item = (usize, K, V)> + '_ {
        self.slots.entries()
    }

    /// The stored keys from most to least recently used; changes nothing.
    pub fn keys_by_recency(&self) -> impl Iterator<Item = K> + '_ {
        (0..self.slots.len()).filter_map(move |age| {
            self.slots
                .entries()
                .find(|&(slot, _, _)| self.ages[slot] == age)
                .map(|(_, k, _)| k)
        })
    }
}

impl<K: Bits + fmt::Debug, V: Bits + fmt::Debug, const N: usize> fmt::Debug for Lru<K, V, N> {
    /// Shows the stored slots as `slot: (key, value, age)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let slots = || {
            self.slots
                .entries()
                .map(|(i, k, v)| (i, (k, v, self.ages[i])))
        };
        f.debug_struct("Lru")
            .field("len", &self.slots.len())
            .field("slots", &DebugMap(slots))
            .finish()
    }
}

/// An entry is `valid`, key, value; a written entry is the most recently used, an emptied
/// slot leaves the others' order as it was.
impl<K: Bits, V: Bits, const N: usize> Element for Lru<K, V, N> {
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
        (index < N).then(|| table_entry(self.slots.get(index)))
    }
    fn write(&mut self, index: usize, entry: &[u8]) -> Result<(), EntryError> {
        if index >= N {
            return Err(EntryError::BadIndex);
        }
        let new = parse_table_entry::<K, V>(entry)?;
        if let Some((k, _)) = new {
            if self.slots.find(k).is_some_and(|i| i != index) {
                return Err(EntryError::BadValue);
            }
        }
        if let Some((old, _)) = self.slots.get(index) {
            self.remove(old);
        }
        if let Some((k, v)) = new {
            self.touch(index, self.slots.len());
            self.slots.put(index, k, v);
        }
        Ok(())
    }
    fn find(&self, key: &[u8]) -> Option<usize> {
        self.slots.find(exact(key).ok()?)
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

    impl<K: Bits, V: Bits, const N: usize> Lru<K, V, N> {
        fn entry_slot(&self, key: K) -> Option<usize> {
            self.slot_of(key)
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
}

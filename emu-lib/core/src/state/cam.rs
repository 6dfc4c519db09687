//! A fully associative table: content-addressable memory.

use super::inspect::{exact, parse_table_entry, table_entry};
use super::slots::Slots;
use super::{Element, ElementKind, EntryError, Shape};
use crate::bits::Bits;
use core::fmt;

/// A fully associative table of up to `N` (key, value) entries, `N ≥ 1`: every slot's key is
/// compared with the looked-up key at once (`N` comparators in hardware).
///
/// Semantics, exactly:
///
/// - **Initial contents:** all `N` slots empty; the round-robin pointer is 0.
/// - **Lookup** ([`get`](Cam::get)): the value of the slot holding the key, or `None`. A key is
///   in at most one slot.
/// - **Insert of a present key:** overwrites the value in its slot. Nothing is evicted and the
///   round-robin pointer does not move.
/// - **Insert of a new key:** goes into the lowest-index empty slot.
/// - **Insert of a new key when full:** the slot at the round-robin pointer is the victim; its
///   entry is replaced by the new one and returned, and the pointer advances by one modulo `N`.
///   Evictions therefore walk the slots 0, 1, …, N−1, 0, … — first-in first-out for a table
///   that is only ever filled, whatever the lookups.
/// - **Remove:** empties the key's slot; the pointer does not move.
///
/// `N = 0` is a compile-time error.
#[derive(Clone, PartialEq, Eq)]
pub struct Cam<K: Bits, V: Bits, const N: usize> {
    slots: Slots<K, V, N>,
    /// The slot the next eviction replaces, `< N`.
    next_victim: usize,
}

impl<K: Bits, V: Bits, const N: usize> Default for Cam<K, V, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Bits, V: Bits, const N: usize> Cam<K, V, N> {
    const NOT_EMPTY: () = assert!(N >= 1, "Cam<K, V, N> needs N >= 1");

    /// An empty table.
    #[inline]
    pub fn new() -> Self {
        let () = Self::NOT_EMPTY;
        Cam {
            slots: Slots::new(),
            next_victim: 0,
        }
    }

    /// The value stored under `key`.
    #[inline]
    pub fn get(&self, key: K) -> Option<V> {
        self.slots.find(key).map(|i| self.slots.value(i))
    }

    /// True when `key` is stored.
    #[inline]
    pub fn contains(&self, key: K) -> bool {
        self.slots.find(key).is_some()
    }

    /// Stores `value` under `key` and returns the entry evicted to make room, if one was.
    ///
    /// See the type's documentation for which slot is used.
    #[inline]
    pub fn insert(&mut self, key: K, value: V) -> Option<(K, V)> {
        match self.slots.find_or_free(key) {
            (Some(i), _) => {
                self.slots.set_value(i, value);
                None
            }
            (None, free) if free < N => self.slots.put(free, key, value),
            (None, _) => {
                let victim = self.next_victim;
                self.next_victim = if victim + 1 >= N { 0 } else { victim + 1 };
                self.slots.put(victim, key, value)
            }
        }
    }

    /// Removes `key` and returns its value, if it was stored.
    #[inline]
    pub fn remove(&mut self, key: K) -> Option<V> {
        let i = self.slots.find(key)?;
        self.slots.clear(i).map(|(_, v)| v)
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

    /// The entry in `slot`, or `None` when the slot is empty or `slot ≥ N`.
    #[inline]
    pub fn entry(&self, slot: usize) -> Option<(K, V)> {
        self.slots.get(slot)
    }

    /// The stored entries as (slot, key, value), in slot order.
    pub fn entries(&self) -> impl Iterator<Item = (usize, K, V)> + '_ {
        self.slots.entries()
    }
}

impl<K: Bits + fmt::Debug, V: Bits + fmt::Debug, const N: usize> fmt::Debug for Cam<K, V, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cam")
            .field("len", &self.slots.len())
            .field("next_victim", &self.next_victim)
            .field("slots", &self.slots)
            .finish()
    }
}

/// An entry is `valid`, key, value; writing one puts it in that very slot (the round-robin
/// pointer does not move).
impl<K: Bits, V: Bits, const N: usize> Element for Cam<K, V, N> {
    fn kind(&self) -> ElementKind {
        ElementKind::Cam
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
        match parse_table_entry::<K, V>(entry)? {
            None => {
                self.slots.clear(index);
            }
            Some((k, _)) if self.slots.find(k).is_some_and(|i| i != index) => {
                return Err(EntryError::KeyElsewhere)
            }
            Some((k, v)) => {
                self.slots.put(index, k, v);
            }
        }
        Ok(())
    }
    fn find(&self, key: &[u8]) -> Option<usize> {
        self.slots.find(exact(key).ok()?)
    }
    fn unshown_state(&self) -> bool {
        self.next_victim != 0
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::addr::Mac;
    use crate::state::XorShift;

    fn mac(last: u8) -> Mac {
        Mac::from_bytes([2, 0, 0, 0, 0, last])
    }

    #[test]
    fn starts_empty() {
        let c: Cam<Mac, u8, 4> = Cam::default();
        assert_eq!(c.len(), 0);
        assert!(c.is_empty());
        assert_eq!(c.capacity(), 4);
        assert_eq!(c.get(Mac::default()), None);
        assert_eq!(c.entries().count(), 0);
        assert_eq!(
            (0..5).map(|i| c.entry(i)).filter(Option::is_some).count(),
            0
        );
    }

    #[test]
    fn fills_lowest_free_slot_first() {
        let mut c: Cam<Mac, u8, 4> = Cam::default();
        for i in 0..4 {
            assert_eq!(c.insert(mac(i), i), None);
            assert_eq!(c.entry(i as usize), Some((mac(i), i)));
        }
        assert_eq!(c.len(), 4);
        assert_eq!(c.remove(mac(1)), Some(1));
        assert_eq!(c.remove(mac(1)), None);
        assert_eq!(c.len(), 3);
        assert_eq!(c.insert(mac(9), 9), None);
        assert_eq!(c.entry(1), Some((mac(9), 9)));
    }

    #[test]
    fn overwrite_keeps_slot_and_does_not_evict() {
        let mut c: Cam<u16, u16, 2> = Cam::default();
        c.insert(1, 10);
        c.insert(2, 20);
        assert_eq!(c.insert(2, 21), None);
        assert_eq!(c.insert(1, 11), None);
        assert_eq!(
            c.entries().collect::<Vec<_>>(),
            vec![(0, 1, 11), (1, 2, 21)]
        );
        assert_eq!(c.len(), 2);
        // The overwrites did not move the pointer: the first eviction is still slot 0.
        assert_eq!(c.insert(3, 30), Some((1, 11)));
    }

    #[test]
    fn full_table_evicts_round_robin() {
        let mut c: Cam<u8, u8, 3> = Cam::default();
        for k in 0..3 {
            c.insert(k, k);
        }
        // Lookups do not matter for the replacement order.
        assert_eq!(c.get(0), Some(0));
        assert_eq!(c.insert(10, 10), Some((0, 0)));
        assert_eq!(c.insert(11, 11), Some((1, 1)));
        assert_eq!(c.insert(12, 12), Some((2, 2)));
        // Wraps back to slot 0.
        assert_eq!(c.insert(13, 13), Some((10, 10)));
        assert_eq!(
            c.entries().collect::<Vec<_>>(),
            vec![(0, 13, 13), (1, 11, 11), (2, 12, 12)]
        );
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn remove_frees_a_slot_without_moving_the_pointer() {
        let mut c: Cam<u8, u8, 2> = Cam::default();
        c.insert(1, 1);
        c.insert(2, 2);
        assert_eq!(c.insert(3, 3), Some((1, 1))); // slot 0, pointer → 1
        assert_eq!(c.remove(3), Some(3));
        assert_eq!(c.insert(4, 4), None); // free slot 0
        assert_eq!(c.entry(0), Some((4, 4)));
        assert_eq!(c.insert(5, 5), Some((2, 2))); // pointer was 1
        assert_eq!(c.insert(6, 6), Some((4, 4))); // pointer wrapped to 0
    }

    #[test]
    fn single_slot() {
        let mut c: Cam<bool, u8, 1> = Cam::default();
        assert_eq!(c.insert(false, 1), None);
        assert_eq!(c.insert(false, 2), None);
        assert_eq!(c.insert(true, 3), Some((false, 2)));
        assert_eq!(c.insert(false, 4), Some((true, 3)));
        assert!(c.contains(false));
        assert!(!c.contains(true));
    }

    #[test]
    fn out_of_range_slot_is_none() {
        let mut c: Cam<u8, u8, 2> = Cam::default();
        c.insert(1, 1);
        assert_eq!(c.entry(2), None);
        assert_eq!(c.entry(usize::MAX), None);
    }

    #[test]
    fn debug_shows_occupied_slots() {
        let mut c: Cam<u8, u8, 4> = Cam::default();
        c.insert(7, 1);
        assert_eq!(
            format!("{c:?}"),
            "Cam { len: 1, next_victim: 0, slots: {0: (7, 1)} }"
        );
    }

    /// The documented semantics, written as plainly as possible.
    struct Model {
        slots: Vec<Option<(u8, u8)>>,
        ptr: usize,
    }

    impl Model {
        fn insert(&mut self, k: u8, v: u8) -> Option<(u8, u8)> {
            if let Some(s) = self.slots.iter_mut().flatten().find(|(key, _)| *key == k) {
                s.1 = v;
                return None;
            }
            if let Some(s) = self.slots.iter_mut().find(|s| s.is_none()) {
                *s = Some((k, v));
                return None;
            }
            let old = self.slots[self.ptr].replace((k, v));
            self.ptr = (self.ptr + 1) % self.slots.len();
            old
        }
    }

    #[test]
    fn matches_model_on_random_operations() {
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        let mut c: Cam<u8, u8, 5> = Cam::default();
        let mut m = Model {
            slots: vec![None; 5],
            ptr: 0,
        };
        for step in 0..20_000 {
            let k = rng.below(12) as u8;
            let v = rng.below(256) as u8;
            match rng.below(4) {
                0 => {
                    let want = m
                        .slots
                        .iter_mut()
                        .find(|s| matches!(s, Some((key, _)) if *key == k));
                    let want = want.and_then(|s| s.take()).map(|(_, v)| v);
                    assert_eq!(c.remove(k), want, "step {step}");
                }
                1 => {
                    let want = m
                        .slots
                        .iter()
                        .flatten()
                        .find(|(key, _)| *key == k)
                        .map(|e| e.1);
                    assert_eq!(c.get(k), want, "step {step}");
                }
                _ => assert_eq!(c.insert(k, v), m.insert(k, v), "step {step}"),
            }
            assert_eq!(c.len(), m.slots.iter().flatten().count(), "step {step}");
            for i in 0..5 {
                assert_eq!(c.entry(i), m.slots[i], "step {step}");
            }
        }
    }
}

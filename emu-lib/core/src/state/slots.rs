//! The slot array shared by the associative tables: `N` slots, each empty or holding one
//! (key, value), with a lookup that compares every slot's key.
//!
//! Laid out as hardware has it — a key register, a value register and a valid bit per slot —
//! which is also what the CPU scans fastest (the keys are contiguous).

use crate::bits::Bits;
use core::fmt;

/// `N` slots of (key, value), each valid or empty.
///
/// An empty slot holds `K::default()` and `V::default()`, so two slot arrays are equal exactly
/// when they hold the same entries in the same slots.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Slots<K, V, const N: usize> {
    keys: [K; N],
    values: [V; N],
    valid: [bool; N],
    len: usize,
}

impl<K: Bits, V: Bits, const N: usize> Slots<K, V, N> {
    /// All slots empty.
    #[inline]
    pub(crate) fn new() -> Self {
        Slots {
            keys: [K::default(); N],
            values: [V::default(); N],
            valid: [false; N],
            len: 0,
        }
    }

    /// The slot holding `key`.
    #[inline]
    pub(crate) fn find(&self, key: K) -> Option<usize> {
        (0..N).find(|&i| self.valid[i] && self.keys[i] == key)
    }

    /// The slot holding `key`, and the lowest empty slot (`N` when there is none), in one scan.
    #[inline]
    pub(crate) fn find_or_free(&self, key: K) -> (Option<usize>, usize) {
        let mut free = N;
        for i in 0..N {
            if self.valid[i] {
                if self.keys[i] == key {
                    return (Some(i), free);
                }
            } else if free == N {
                free = i;
            }
        }
        (None, free)
    }

    /// The value in `slot` (which must be valid).
    #[inline]
    pub(crate) fn value(&self, slot: usize) -> V {
        self.values[slot]
    }

    /// Overwrites the value of a valid `slot`.
    #[inline]
    pub(crate) fn set_value(&mut self, slot: usize, value: V) {
        self.values[slot] = value;
    }

    /// Fills `slot` (`< N`) with (key, value) and returns what it held.
    #[inline]
    pub(crate) fn put(&mut self, slot: usize, key: K, value: V) -> Option<(K, V)> {
        let old = self.get(slot);
        if old.is_none() {
            self.len += 1;
        }
        self.keys[slot] = key;
        self.values[slot] = value;
        self.valid[slot] = true;
        old
    }

    /// Empties `slot` and returns what it held.
    #[inline]
    pub(crate) fn clear(&mut self, slot: usize) -> Option<(K, V)> {
        let old = self.get(slot);
        if old.is_some() {
            self.keys[slot] = K::default();
            self.values[slot] = V::default();
            self.valid[slot] = false;
            self.len -= 1;
        }
        old
    }

    /// The valid bit of every slot.
    #[inline]
    pub(crate) fn valid(&self) -> &[bool; N] {
        &self.valid
    }

    /// The entry in `slot`; `None` when it is empty or `slot ≥ N`.
    #[inline]
    pub(crate) fn get(&self, slot: usize) -> Option<(K, V)> {
        match self.valid.get(slot) {
            Some(true) => Some((self.keys[slot], self.values[slot])),
            _ => None,
        }
    }

    /// Number of valid slots.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The valid entries as (slot, key, value), in slot order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (usize, K, V)> + '_ {
        (0..N).filter_map(move |i| self.get(i).map(|(k, v)| (i, k, v)))
    }
}

/// `{slot: (key, value), ..}` over the valid slots.
impl<K: Bits + fmt::Debug, V: Bits + fmt::Debug, const N: usize> fmt::Debug for Slots<K, V, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.entries().map(|(i, k, v)| (i, (k, v))))
            .finish()
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn a_cleared_slot_compares_as_never_filled() {
        let mut a: Slots<u8, u8, 2> = Slots::new();
        let mut b: Slots<u8, u8, 2> = Slots::new();
        a.put(0, 1, 10);
        a.put(1, 2, 20);
        b.put(0, 9, 90);
        b.put(1, 2, 20);
        assert_ne!(a, b);
        assert_eq!(a.clear(0), Some((1, 10)));
        assert_eq!(b.clear(0), Some((9, 90)));
        assert_eq!(a, b);
        assert_eq!(a.clear(1), Some((2, 20)));
        assert_eq!(a, Slots::new());
    }
}

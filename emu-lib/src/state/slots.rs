//! The slot array shared by the associative tables: `N` slots, each empty or holding one
//! (key, value), with a lookup that compares every slot's key.
//!
//! Laid out as hardware has it — a key register, a value register and a valid bit per slot —
//! which is also what the CPU scans fastest (the keys are contiguous).

use crate::bits::Bits;
use core::fmt;

/// `N` slots of (key, value), each valid or empty.
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
        Slots { keys: [K::default(); N], values: [V::default(); N], valid: [false; N], len: 0 }
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
            self.valid[slot] = false;
            self.len -= 1;
        }
        old
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
        f.debug_map().entries(self.entries().map(|(i, k, v)| (i, (k, v)))).finish()
    }
}

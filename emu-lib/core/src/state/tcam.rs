//! A ternary CAM: masked matching with priority by slot.

use super::DebugMap;
use crate::bits::Bits;
use core::fmt;

/// The longest key byte form a [`Tcam`] accepts.
const MAX_TCAM_KEY_BYTES: usize = 64;

/// `N` priority-ordered slots, each empty or holding a (value, mask, result) rule; a key matches
/// a rule when every bit set in `mask` is equal in the key and in `value`.
///
/// Semantics, exactly:
///
/// - **Initial contents:** all `N` slots empty (invalid).
/// - **Match:** slot `i` matches key `k` when it is valid and `(k & mask) == (value & mask)`,
///   computed on the big-endian byte forms ([`Bits::write_be`]). A zero mask matches every key;
///   an all-ones mask is an exact match.
/// - **Priority:** a lower slot index is a higher priority. [`lookup`](Tcam::lookup) returns the
///   result of the lowest-index matching slot, or `None` when no slot matches.
/// - **Writes** are explicit: [`set`](Tcam::set) replaces whatever slot `i` held (nothing is
///   ever evicted or moved) and [`clear`](Tcam::clear) invalidates it. A slot `≥ N` is not
///   written; `set` returns `false`.
///
/// `K::BYTES > 64` is a compile-time error.
#[derive(Clone, PartialEq, Eq)]
pub struct Tcam<K: Bits, V: Bits, const N: usize> {
    /// Per slot, the rule (value, mask, result) or `None` when invalid.
    slots: Box<[Option<(K, K, V)>]>,
}

impl<K: Bits, V: Bits, const N: usize> Default for Tcam<K, V, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Bits, V: Bits, const N: usize> Tcam<K, V, N> {
    const KEY_FITS: () = assert!(
        K::BYTES <= MAX_TCAM_KEY_BYTES,
        "Tcam keys are at most 64 bytes long"
    );

    /// A TCAM with every slot empty.
    pub fn new() -> Self {
        let () = Self::KEY_FITS;
        Tcam {
            slots: vec![None; N].into_boxed_slice(),
        }
    }

    /// Writes the rule (`value`, `mask`) → `result` into `slot` and returns `true`; when
    /// `slot ≥ N` writes nothing and returns `false`.
    #[inline]
    pub fn set(&mut self, slot: usize, value: K, mask: K, result: V) -> bool {
        match self.slots.get_mut(slot) {
            Some(e) => {
                *e = Some((value, mask, result));
                true
            }
            None => false,
        }
    }

    /// Invalidates `slot`; does nothing when `slot ≥ N`.
    #[inline]
    pub fn clear(&mut self, slot: usize) {
        if let Some(e) = self.slots.get_mut(slot) {
            *e = None;
        }
    }

    /// The rule in `slot` as (value, mask, result), or `None` when it is empty or `slot ≥ N`.
    #[inline]
    pub fn entry(&self, slot: usize) -> Option<(K, K, V)> {
        self.slots.get(slot).copied().flatten()
    }

    /// The lowest-index valid slot whose rule matches `key`.
    #[inline]
    pub fn lookup_slot(&self, key: K) -> Option<usize> {
        let () = Self::KEY_FITS;
        let n = K::BYTES.min(MAX_TCAM_KEY_BYTES);
        let mut key_be = [0u8; MAX_TCAM_KEY_BYTES];
        let mut value_be = [0u8; MAX_TCAM_KEY_BYTES];
        let mut mask_be = [0u8; MAX_TCAM_KEY_BYTES];
        key.write_be(&mut key_be);
        for (i, e) in self.slots.iter().enumerate() {
            if let Some((value, mask, _)) = e {
                value.write_be(&mut value_be);
                mask.write_be(&mut mask_be);
                let matches = key_be[..n]
                    .iter()
                    .zip(&value_be[..n])
                    .zip(&mask_be[..n])
                    .all(|((k, v), m)| (k ^ v) & m == 0);
                if matches {
                    return Some(i);
                }
            }
        }
        None
    }

    /// The result of the lowest-index valid slot whose rule matches `key`.
    #[inline]
    pub fn lookup(&self, key: K) -> Option<V> {
        self.lookup_slot(key)
            .and_then(|i| self.entry(i))
            .map(|(_, _, r)| r)
    }

    /// The number of valid slots.
    pub fn len(&self) -> usize {
        self.slots.iter().flatten().count()
    }

    /// True when no slot is valid.
    pub fn is_empty(&self) -> bool {
        self.slots.iter().all(Option::is_none)
    }

    /// The number of slots, `N`.
    #[inline]
    pub fn capacity(&self) -> usize {
        N
    }
}

/// The fewest (value, mask) prefixes of a `bits`-wide field that together match exactly the
/// values `lo..=hi`: how a range (of ports, say) becomes [`Tcam`] rules. A range of `bits`-bit
/// values takes at most `2 × bits − 2` prefixes (1..=65534 of 16 bits takes 30); an aligned
/// power-of-two block takes one. Empty when `lo > hi`.
///
/// ```
/// use emu_core::state::range_prefixes;
/// assert_eq!(range_prefixes(80, 80, 16), [(80, 0xffff)]);
/// assert_eq!(range_prefixes(0, 65535, 16), [(0, 0)]);
/// assert_eq!(range_prefixes(1024, 2047, 16), [(1024, 0xfc00)]);
/// assert_eq!(range_prefixes(6, 9, 16), [(6, 0xfffe), (8, 0xfffe)]);
/// ```
pub fn range_prefixes(lo: u64, hi: u64, bits: u32) -> Vec<(u64, u64)> {
    let all = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let (mut lo, hi) = (lo & all, hi & all);
    let mut out = Vec::new();
    if lo > hi {
        return out;
    }
    loop {
        // The largest aligned block that starts at `lo` and stays within `hi`.
        let span_of = |b: u32| if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
        let mut size_bits = if lo == 0 { bits } else { lo.trailing_zeros().min(bits) };
        while size_bits > 0 && lo.checked_add(span_of(size_bits)).map_or(true, |end| end > hi) {
            size_bits -= 1;
        }
        let span = span_of(size_bits);
        out.push((lo, all & !span));
        match (lo + span).checked_add(1) {
            Some(next) if next <= hi && next <= all => lo = next,
            _ => return out,
        }
    }
}

impl<K: Bits + fmt::Debug, V: Bits + fmt::Debug, const N: usize> fmt::Debug for Tcam<K, V, N> {
    /// Shows the valid slots as `slot: (value, mask, result)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let valid = || {
            self.slots
                .iter()
                .enumerate()
                .filter_map(|(i, e)| e.as_ref().map(|e| (i, e)))
        };
        f.debug_struct("Tcam")
            .field("slots", &DebugMap(valid))
            .finish()
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::addr::{Ipv4Addr, Mac};
    use crate::bits::Bytes;
    use arbitrary_int::u12;

    #[test]
    fn starts_empty() {
        let t: Tcam<u32, u8, 4> = Tcam::default();
        assert!(t.is_empty());
        assert_eq!(t.len(), 0);
        assert_eq!(t.capacity(), 4);
        assert_eq!(t.lookup(0), None);
        assert_eq!(t.lookup_slot(u32::MAX), None);
    }

    #[test]
    fn longest_prefix_by_priority() {
        let mut t: Tcam<Ipv4Addr, u8, 4> = Tcam::default();
        let ip = |s: &str| s.parse::<Ipv4Addr>().unwrap();
        assert!(t.set(0, ip("10.1.2.0"), ip("255.255.255.0"), 1));
        assert!(t.set(1, ip("10.1.0.0"), ip("255.255.0.0"), 2));
        assert!(t.set(3, ip("0.0.0.0"), ip("0.0.0.0"), 9)); // default route
        assert_eq!(t.lookup(ip("10.1.2.77")), Some(1));
        assert_eq!(t.lookup(ip("10.1.3.77")), Some(2));
        assert_eq!(t.lookup(ip("192.168.0.1")), Some(9));
        assert_eq!(t.lookup_slot(ip("192.168.0.1")), Some(3));
        assert_eq!(t.len(), 3);
    }

    #[test]
    fn lower_slot_wins_on_overlap() {
        let mut t: Tcam<u16, u8, 3> = Tcam::default();
        t.set(2, 0x1234, 0xffff, 2); // exact, but lowest priority
        t.set(1, 0x1200, 0xff00, 1);
        assert_eq!(t.lookup(0x1234), Some(1));
        t.clear(1);
        assert_eq!(t.lookup(0x1234), Some(2));
        assert_eq!(t.lookup(0x1235), None);
        assert_eq!(t.entry(1), None);
    }

    #[test]
    fn value_bits_outside_mask_are_ignored() {
        let mut t: Tcam<u8, u8, 1> = Tcam::default();
        t.set(0, 0xab, 0xf0, 7);
        assert_eq!(t.entry(0), Some((0xab, 0xf0, 7))); // stored as written
        assert_eq!(t.lookup(0xa0), Some(7));
        assert_eq!(t.lookup(0xaf), Some(7));
        assert_eq!(t.lookup(0xbb), None);
    }

    #[test]
    fn set_overwrites_slot() {
        let mut t: Tcam<u8, u8, 2> = Tcam::default();
        t.set(0, 1, 0xff, 1);
        t.set(0, 2, 0xff, 2);
        assert_eq!(t.lookup(1), None);
        assert_eq!(t.lookup(2), Some(2));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn out_of_range_slot_is_ignored() {
        let mut t: Tcam<u8, u8, 2> = Tcam::default();
        assert!(!t.set(2, 0, 0, 1));
        assert!(!t.set(usize::MAX, 0, 0, 1));
        t.clear(2);
        t.clear(usize::MAX);
        assert_eq!(t.entry(2), None);
        assert_eq!(t.lookup(0), None);
        let mut z: Tcam<u8, u8, 0> = Tcam::default();
        assert!(!z.set(0, 0, 0, 0));
        assert_eq!(z.lookup(0), None);
    }

    #[test]
    fn works_on_every_bits_type() {
        let mut w: Tcam<u12, bool, 1> = Tcam::default();
        w.set(0, u12::new(0xa00), u12::new(0xf00), true);
        assert_eq!(w.lookup(u12::new(0xabc)), Some(true));
        assert_eq!(w.lookup(u12::new(0xbbc)), None);

        let mut m: Tcam<Mac, u8, 2> = Tcam::default();
        // Any multicast destination: group bit of the first byte.
        m.set(
            0,
            Mac::from_bytes([1, 0, 0, 0, 0, 0]),
            Mac::from_bytes([1, 0, 0, 0, 0, 0]),
            1,
        );
        assert_eq!(m.lookup(Mac::BROADCAST), Some(1));
        assert_eq!(m.lookup(Mac::from_bytes([2, 0, 0, 0, 0, 1])), None);

        let mut b: Tcam<Bytes<64>, u8, 1> = Tcam::default();
        let mut mask = [0u8; 64];
        mask[63] = 0xff;
        let mut value = [0u8; 64];
        value[63] = 5;
        b.set(0, Bytes(value), Bytes(mask), 3);
        let mut key = [0xeeu8; 64];
        key[63] = 5;
        assert_eq!(b.lookup(Bytes(key)), Some(3));
        key[63] = 6;
        assert_eq!(b.lookup(Bytes(key)), None);

        let mut wide: Tcam<u128, u8, 1> = Tcam::default();
        wide.set(0, 1 << 127, 1 << 127, 1);
        assert_eq!(wide.lookup(u128::MAX), Some(1));
        assert_eq!(wide.lookup(u128::MAX >> 1), None);
    }

    #[test]
    fn range_prefixes_cover_exactly_the_range() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..300 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (a, b) = ((x & 0xff) as u16, ((x >> 8) & 0xff) as u16);
            let (lo, hi) = (a.min(b) as u64, a.max(b) as u64);
            let p = range_prefixes(lo, hi, 8);
            assert!(p.len() <= 14, "{lo}..={hi}: {p:?}");
            for v in 0..256u64 {
                let hits = p.iter().filter(|(val, m)| v & m == val & m).count();
                assert_eq!(hits, ((lo..=hi).contains(&v)) as usize, "{v} in {lo}..={hi}: {p:?}");
            }
        }
        assert_eq!(range_prefixes(1, 65534, 16).len(), 30);
        assert_eq!(range_prefixes(5, 4, 16), []);
        assert_eq!(range_prefixes(0, u64::MAX, 64), [(0, 0)]);
    }

    #[test]
    fn debug_shows_valid_slots() {
        let mut t: Tcam<u8, u8, 4> = Tcam::default();
        t.set(2, 1, 255, 9);
        assert_eq!(format!("{t:?}"), "Tcam { slots: {2: (1, 255, 9)} }");
    }
}

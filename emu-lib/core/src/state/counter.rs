//! A wrapping counter of a chosen width.

/// A `BITS`-bit unsigned counter (1 ≤ `BITS` ≤ 64, default 64) that wraps modulo 2<sup>`BITS`</sup>.
///
/// Semantics: starts at 0. [`inc`](Counter::inc) adds 1, [`add`](Counter::add) adds `n`, and
/// [`set`](Counter::set) stores `v`, each modulo 2<sup>`BITS`</sup> (the bits of the result
/// above `BITS` are dropped, exactly as a `BITS`-bit hardware adder does). `get` returns the
/// value zero-extended to 64 bits, so it is always below 2<sup>`BITS`</sup>.
/// A `BITS` outside `1..=64` is a compile-time error.
///
/// ```
/// use emu_core::Counter;
///
/// let mut c: Counter<8> = Counter::default();
/// c.set(255);
/// c.inc();
/// assert_eq!(c.get(), 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter<const BITS: u32 = 64> {
    value: u64,
}

impl<const BITS: u32> Default for Counter<BITS> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const BITS: u32> Counter<BITS> {
    /// All ones in the low `BITS` bits: the largest value before the counter wraps.
    pub const MAX: u64 = {
        assert!(
            BITS >= 1 && BITS <= 64,
            "Counter<BITS> needs 1 <= BITS <= 64"
        );
        u64::MAX >> (64 - BITS)
    };

    /// A counter at 0.
    #[inline]
    pub const fn new() -> Self {
        let _width_ok = Self::MAX;
        Counter { value: 0 }
    }

    /// Adds 1, wrapping from [`MAX`](Self::MAX) to 0.
    #[inline]
    pub fn inc(&mut self) {
        self.add(1);
    }

    /// Adds `n` modulo 2<sup>`BITS`</sup>.
    #[inline]
    pub fn add(&mut self, n: u64) {
        self.value = self.value.wrapping_add(n) & Self::MAX;
    }

    /// The current value, below 2<sup>`BITS`</sup>.
    #[inline]
    pub fn get(&self) -> u64 {
        self.value
    }

    /// Stores `v` modulo 2<sup>`BITS`</sup>.
    #[inline]
    pub fn set(&mut self, v: u64) {
        self.value = v & Self::MAX;
    }

    /// Sets the counter back to 0.
    #[inline]
    pub fn reset(&mut self) {
        self.value = 0;
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn starts_at_zero_and_counts() {
        let mut c: Counter = Counter::default();
        assert_eq!(c.get(), 0);
        c.inc();
        c.inc();
        c.add(40);
        assert_eq!(c.get(), 42);
        c.reset();
        assert_eq!(c.get(), 0);
        assert_eq!(Counter::<64>::new(), Counter::<64>::default());
    }

    #[test]
    fn wraps_at_64_bits() {
        let mut c: Counter = Counter::default();
        assert_eq!(Counter::<64>::MAX, u64::MAX);
        c.set(u64::MAX);
        c.inc();
        assert_eq!(c.get(), 0);
        c.set(u64::MAX - 1);
        c.add(5);
        assert_eq!(c.get(), 3);
    }

    #[test]
    fn wraps_at_narrow_widths() {
        let mut c: Counter<8> = Counter::default();
        c.set(0xff);
        c.inc();
        assert_eq!(c.get(), 0);
        c.add(0x1_0000_0005);
        assert_eq!(c.get(), 5);
        c.set(0x1234);
        assert_eq!(c.get(), 0x34);

        let mut one: Counter<1> = Counter::default();
        assert_eq!(Counter::<1>::MAX, 1);
        one.inc();
        assert_eq!(one.get(), 1);
        one.inc();
        assert_eq!(one.get(), 0);
        one.add(u64::MAX);
        assert_eq!(one.get(), 1);

        let mut c63: Counter<63> = Counter::default();
        c63.set(u64::MAX);
        assert_eq!(c63.get(), u64::MAX >> 1);
        c63.add(u64::MAX); // ≡ -1 mod 2^64, so ≡ -1 mod 2^63
        assert_eq!(c63.get(), (u64::MAX >> 1) - 1);
        c63.add(2);
        assert_eq!(c63.get(), 0);
    }
}

//! A fixed-size array of values: block RAM in hardware.

use super::DebugMap;
use crate::bits::Bits;
use core::fmt;

/// `N` values of type `T`, indexed `0..N`: one block RAM of `N` words of `T::WIDTH` bits.
///
/// Semantics: every element starts as `T::default()`. [`get`](Array::get) with `i < N` returns
/// the last value set at `i`; with `i ≥ N` it returns `T::default()` and changes nothing.
/// [`set`](Array::set) with `i < N` writes and returns `true`; with `i ≥ N` it writes nothing and
/// returns `false`.
#[derive(Clone, PartialEq, Eq)]
pub struct Array<T: Bits, const N: usize> {
    data: Box<[T]>,
}

impl<T: Bits, const N: usize> Default for Array<T, N> {
    fn default() -> Self {
        Array {
            data: vec![T::default(); N].into_boxed_slice(),
        }
    }
}

impl<T: Bits, const N: usize> Array<T, N> {
    /// An array of `N` default values.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value at `i`, or `T::default()` when `i ≥ N`.
    #[inline]
    pub fn get(&self, i: usize) -> T {
        self.data.get(i).copied().unwrap_or_default()
    }

    /// Writes `v` at `i` and returns `true`; when `i ≥ N` writes nothing and returns `false`.
    #[inline]
    pub fn set(&mut self, i: usize, v: T) -> bool {
        match self.data.get_mut(i) {
            Some(slot) => {
                *slot = v;
                true
            }
            None => false,
        }
    }

    /// The number of elements, `N`.
    #[inline]
    pub fn len(&self) -> usize {
        N
    }

    /// True when `N` is 0.
    #[inline]
    pub fn is_empty(&self) -> bool {
        N == 0
    }

    /// The elements in index order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.data.iter().copied()
    }
}

impl<T: Bits + fmt::Debug, const N: usize> fmt::Debug for Array<T, N> {
    /// Shows `N` and the elements that differ from `T::default()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let non_default = || {
            self.data
                .iter()
                .enumerate()
                .filter(|(_, v)| **v != T::default())
        };
        f.debug_struct("Array")
            .field("len", &N)
            .field("non_default", &DebugMap(non_default))
            .finish()
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use arbitrary_int::u48;

    #[test]
    fn starts_at_default() {
        let a: Array<u32, 4> = Array::default();
        assert_eq!(a.len(), 4);
        assert!(!a.is_empty());
        assert!(a.iter().all(|v| v == 0));
    }

    #[test]
    fn set_then_get() {
        let mut a: Array<u48, 3> = Array::new();
        assert!(a.set(0, u48::new(1)));
        assert!(a.set(2, u48::new(0xffff_ffff_ffff)));
        assert!(a.set(0, u48::new(9)));
        assert_eq!(a.get(0), u48::new(9));
        assert_eq!(a.get(1), u48::new(0));
        assert_eq!(a.get(2), u48::new(0xffff_ffff_ffff));
    }

    #[test]
    fn out_of_range_reads_default_and_writes_nothing() {
        let mut a: Array<u16, 2> = Array::default();
        a.set(1, 7);
        assert!(!a.set(2, 5));
        assert!(!a.set(usize::MAX, 5));
        assert_eq!(a.get(2), 0);
        assert_eq!(a.get(usize::MAX), 0);
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![0, 7]);
    }

    #[test]
    fn empty_array_never_panics() {
        let mut a: Array<u8, 0> = Array::default();
        assert!(a.is_empty());
        assert!(!a.set(0, 1));
        assert_eq!(a.get(0), 0);
    }

    #[test]
    fn big_array_lives_on_the_heap() {
        let mut a: Array<u64, { 1 << 20 }> = Array::default();
        assert!(a.set((1 << 20) - 1, 3));
        assert_eq!(a.get((1 << 20) - 1), 3);
        assert_eq!(
            format!("{a:?}"),
            "Array { len: 1048576, non_default: {1048575: 3} }"
        );
    }
}

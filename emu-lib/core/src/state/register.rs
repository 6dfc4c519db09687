//! One value held across packets.

use crate::bits::Bits;

/// A single value of type `T` that keeps its contents from one packet to the next.
///
/// Semantics: holds `T::default()` until the first [`set`](Register::set) (or the value given
/// to [`new`](Register::new)); [`get`](Register::get) returns the last value set. In hardware it
/// is `T::WIDTH` flip-flops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Register<T: Bits> {
    value: T,
}

impl<T: Bits> Register<T> {
    /// A register holding `value`.
    #[inline]
    pub fn new(value: T) -> Self {
        Register { value }
    }

    /// The value held.
    #[inline]
    pub fn get(&self) -> T {
        self.value
    }

    /// Replaces the value held.
    #[inline]
    pub fn set(&mut self, value: T) {
        self.value = value;
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::addr::Mac;
    use arbitrary_int::u13;

    #[test]
    fn starts_at_default() {
        assert_eq!(Register::<u32>::default().get(), 0);
        assert_eq!(Register::<Mac>::default().get(), Mac::default());
        assert!(!Register::<bool>::default().get());
    }

    #[test]
    fn holds_last_value_set() {
        let mut r = Register::new(u13::new(7));
        assert_eq!(r.get(), u13::new(7));
        r.set(u13::new(0x1fff));
        r.set(u13::new(5));
        assert_eq!(r.get(), u13::new(5));
        r.set(u13::default());
        assert_eq!(r.get(), u13::new(0));
    }
}

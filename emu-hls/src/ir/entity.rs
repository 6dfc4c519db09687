//! Typed arenas with `u32` handles, in the manner of Cranelift's `PrimaryMap`/`SecondaryMap`.
//!
//! Every IR object (value, instruction, block, state element) lives in an [`Arena`] owned by
//! the [`Function`](super::Function) and is named by a small copyable handle. Handles of one
//! kind cannot be used to index an arena of another kind. Side tables keyed by a handle (a
//! pass's "constant value of v7") are [`SecondaryMap`]s.

use core::fmt;
use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

/// A handle that indexes an [`Arena`].
pub trait EntityRef: Copy + Eq + Ord + fmt::Debug {
    /// The handle of the `index`-th object.
    fn new(index: usize) -> Self;
    /// The position of the object in its arena.
    fn index(self) -> usize;
}

/// Declares a `u32` handle type that prints as `{prefix}{index}`.
macro_rules! entity {
    ($(#[$m:meta])* $name:ident, $prefix:literal) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(u32);

        impl $crate::ir::entity::EntityRef for $name {
            #[inline]
            fn new(index: usize) -> Self {
                $name(u32::try_from(index).expect(concat!("too many ", stringify!($name), "s")))
            }
            #[inline]
            fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl $name {
            /// The handle with this number (as printed after the prefix).
            pub const fn from_u32(n: u32) -> Self {
                $name(n)
            }
            /// The handle's number.
            pub const fn as_u32(self) -> u32 {
                self.0
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Display::fmt(self, f)
            }
        }
    };
}
pub(crate) use entity;

/// Objects of type `V` stored densely and named by handles `K`; objects are never removed
/// (a pass that deletes one unlinks it from the function's layout instead).
#[derive(Clone, PartialEq, Eq)]
pub struct Arena<K: EntityRef, V> {
    items: Vec<V>,
    _key: PhantomData<K>,
}

impl<K: EntityRef, V> Default for Arena<K, V> {
    fn default() -> Self {
        Arena { items: Vec::new(), _key: PhantomData }
    }
}

impl<K: EntityRef, V> Arena<K, V> {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `v` and returns its handle.
    pub fn push(&mut self, v: V) -> K {
        let k = K::new(self.items.len());
        self.items.push(v);
        k
    }

    /// The number of objects ever stored.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when nothing was ever stored.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// True when `k` names an object of this arena.
    pub fn is_valid(&self, k: K) -> bool {
        k.index() < self.items.len()
    }

    /// The object named `k`, if `k` is valid.
    pub fn get(&self, k: K) -> Option<&V> {
        self.items.get(k.index())
    }

    /// The object named `k`, writable, if `k` is valid.
    pub fn get_mut(&mut self, k: K) -> Option<&mut V> {
        self.items.get_mut(k.index())
    }

    /// Every handle, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator {
        (0..self.items.len()).map(K::new)
    }

    /// Every (handle, object), in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (K, &V)> + ExactSizeIterator {
        self.items.iter().enumerate().map(|(i, v)| (K::new(i), v))
    }
}

impl<K: EntityRef, V> Index<K> for Arena<K, V> {
    type Output = V;
    #[inline]
    fn index(&self, k: K) -> &V {
        &self.items[k.index()]
    }
}

impl<K: EntityRef, V> IndexMut<K> for Arena<K, V> {
    #[inline]
    fn index_mut(&mut self, k: K) -> &mut V {
        &mut self.items[k.index()]
    }
}

impl<K: EntityRef, V: fmt::Debug> fmt::Debug for Arena<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A side table that gives every handle `K` a `V`, `V::default()` until set; it grows on write.
#[derive(Clone, Debug)]
pub struct SecondaryMap<K: EntityRef, V: Clone + Default> {
    items: Vec<V>,
    default: V,
    _key: PhantomData<K>,
}

impl<K: EntityRef, V: Clone + Default> Default for SecondaryMap<K, V> {
    fn default() -> Self {
        SecondaryMap { items: Vec::new(), default: V::default(), _key: PhantomData }
    }
}

impl<K: EntityRef, V: Clone + Default> SecondaryMap<K, V> {
    /// A map with every entry at `V::default()`.
    pub fn new() -> Self {
        Self::default()
    }

    /// A map with room for `n` entries already made.
    pub fn with_capacity(n: usize) -> Self {
        SecondaryMap { items: vec![V::default(); n], default: V::default(), _key: PhantomData }
    }
}

impl<K: EntityRef, V: Clone + Default> Index<K> for SecondaryMap<K, V> {
    type Output = V;
    #[inline]
    fn index(&self, k: K) -> &V {
        self.items.get(k.index()).unwrap_or(&self.default)
    }
}

impl<K: EntityRef, V: Clone + Default> IndexMut<K> for SecondaryMap<K, V> {
    #[inline]
    fn index_mut(&mut self, k: K) -> &mut V {
        if k.index() >= self.items.len() {
            self.items.resize(k.index() + 1, V::default());
        }
        &mut self.items[k.index()]
    }
}

#[cfg(test)]
mod test {
    use super::*;

    entity!(
        /// A test handle.
        Thing,
        "t"
    );

    #[test]
    fn handles_index_their_arena() {
        let mut a: Arena<Thing, &str> = Arena::new();
        let x = a.push("x");
        let y = a.push("y");
        assert_eq!((a[x], a[y]), ("x", "y"));
        assert_eq!((y.to_string(), y.as_u32()), ("t1".to_string(), 1));
        assert!(a.is_valid(y) && !a.is_valid(Thing::from_u32(2)));
        let mut side: SecondaryMap<Thing, u32> = SecondaryMap::new();
        assert_eq!(side[y], 0);
        side[y] = 7;
        assert_eq!((side[x], side[y]), (0, 7));
    }
}

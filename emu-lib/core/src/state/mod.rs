//! State elements. Each has one exact semantics that every target implements bit for bit.
//!
//! The CPU implementation in this module **is** the specification: a hardware target must give
//! the same answer to the same sequence of operations, including which entry a full table
//! evicts. No operation panics on any input; an out-of-range index reads as the default value
//! and writes nothing.
//!
//! | Element | Hardware | Initial contents | Lookup | Insert of a new key when full | Replacement order |
//! |---|---|---|---|---|---|
//! | [`Register<T>`] | flip-flops | `T::default()` | `get` | — | — |
//! | [`Counter<BITS>`] | `BITS`-bit adder | 0 | `get` | — | wraps modulo 2<sup>`BITS`</sup> |
//! | [`Array<T, N>`] | block RAM | all `T::default()` | `get(i)`; `i ≥ N` reads `T::default()` | — (`set(i)` with `i ≥ N` writes nothing, returns `false`) | — |
//! | [`Cam<K, V, N>`] | N comparators | all empty | fully associative, exact match | evicts the slot at a round-robin pointer (returned) | pointer starts at 0, advances by 1 mod N after each eviction |
//! | [`HashTable<K, V, N, WAYS>`] | block RAM, N/WAYS sets | all empty | set = low bits of CRC-32 of the key's big-endian bytes, then WAYS comparators | evicts the way at that set's round-robin pointer (returned) | one pointer per set, starts at 0, advances by 1 mod WAYS after each eviction in that set |
//! | [`Lru<K, V, N, WAYS = N>`](Lru) | fully associative: N comparators + N age registers; in sets (`WAYS < N`): block RAM, N/WAYS sets | all empty | the key's set (one set, or as a `HashTable`'s), then exact match; `get` hit makes the entry most recent, `peek` does not | evicts the least recently used entry of the set (returned) | exact LRU per set over `get` hits and `insert`s |
//! | [`Tcam<K, V, N>`] | N masked comparators + priority encoder | all slots invalid | first valid slot (lowest index) with `key & mask == value & mask` | — (slots are written explicitly with `set`) | — |
//! | [`Queue<T, N>`] | FIFO | empty | `pop` / `peek` the oldest; empty → `None` | `push` fails with `Err(v)`, queue unchanged | first in, first out |
//!
//! Common rules of the associative tables ([`Cam`], [`HashTable`], [`Lru`]):
//!
//! - inserting a key that is present overwrites its value in place: same slot, nothing evicted,
//!   the round-robin pointer does not move ([`Lru`]: the entry becomes most recent);
//! - a new key goes into the lowest-index free slot (way) if there is one;
//! - only when there is none is an entry evicted, and `insert` returns it;
//! - `remove` frees the slot and moves no pointer.
//!
//! # Example: a MAC learning table
//!
//! ```
//! use emu_core::{Cam, Mac, Port};
//!
//! let mut mac_table: Cam<Mac, Port, 2> = Cam::default();
//! let a = Mac::from_bytes([2, 0, 0, 0, 0, 0xa]);
//! let b = Mac::from_bytes([2, 0, 0, 0, 0, 0xb]);
//! let c = Mac::from_bytes([2, 0, 0, 0, 0, 0xc]);
//!
//! // Learn where a and b live.
//! assert_eq!(mac_table.insert(a, 1), None);
//! assert_eq!(mac_table.insert(b, 2), None);
//! assert_eq!(mac_table.get(a), Some(1));
//!
//! // a moved to port 3: overwritten in place, nothing evicted.
//! assert_eq!(mac_table.insert(a, 3), None);
//! assert_eq!(mac_table.get(a), Some(3));
//!
//! // The table is full: learning c evicts slot 0 (the round-robin pointer starts at 0).
//! assert_eq!(mac_table.insert(c, 4), Some((a, 3)));
//! assert_eq!(mac_table.get(a), None);
//! assert_eq!(mac_table.entries().collect::<Vec<_>>(), vec![(0, c, 4), (1, b, 2)]);
//! ```

use crate::bits::Bits;
use core::fmt;

mod array;
mod cam;
mod counter;
mod hash_table;
mod inspect;
mod lru;
mod queue;
mod register;
mod slots;
mod tcam;

pub use array::Array;
pub use cam::Cam;
pub use counter::Counter;
pub use hash_table::{crc32, HashTable};
pub use inspect::{Element, ElementKind, EntryError, Shape, Shown};
pub use lru::Lru;
pub use queue::Queue;
pub use register::Register;
pub use tcam::{range_prefixes, Tcam};

/// The longest key byte form ([`Bits::BYTES`]) a hashed element accepts.
pub(crate) const MAX_KEY_BYTES: usize = 256;

/// Calls `f` with the big-endian byte form of `v` (`T::BYTES` bytes) from a stack buffer.
///
/// `T::BYTES` must be at most [`MAX_KEY_BYTES`]; callers assert it at compile time.
#[inline(always)]
pub(crate) fn with_be_bytes<T: Bits, R>(v: &T, f: impl FnOnce(&[u8]) -> R) -> R {
    if T::BYTES <= 16 {
        let mut buf = [0u8; 16];
        v.write_be(&mut buf);
        f(&buf[..T::BYTES])
    } else {
        let mut buf = [0u8; MAX_KEY_BYTES];
        v.write_be(&mut buf);
        f(&buf[..T::BYTES.min(MAX_KEY_BYTES)])
    }
}

/// Debug view of a state element's contents as `{index: item, ..}`, the pairs coming from the
/// closure each time it is formatted.
pub(crate) struct DebugMap<F>(pub(crate) F);

impl<F, I, K, V> fmt::Debug for DebugMap<F>
where
    F: Fn() -> I,
    I: Iterator<Item = (K, V)>,
    K: fmt::Debug,
    V: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries((self.0)()).finish()
    }
}

/// A tiny seeded generator for the model tests, so a failure replays.
#[cfg(test)]
pub(crate) struct XorShift(pub(crate) u64);

#[cfg(test)]
impl XorShift {
    /// The next value in `0..n`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

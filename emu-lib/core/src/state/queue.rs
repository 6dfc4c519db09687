//! A first-in first-out queue of bounded depth.

use crate::bits::Bits;
use core::fmt;

/// A FIFO of at most `N` values of type `T`: a ring buffer of `N` words in hardware.
///
/// Semantics, exactly:
///
/// - **Initial contents:** empty.
/// - **Push** onto a queue holding fewer than `N` values appends at the back and returns
///   `Ok(())`. Push onto a full queue returns `Err(v)` with the rejected value and changes
///   nothing: no value is overwritten or dropped from the queue.
/// - **Pop** removes and returns the front (oldest) value; on an empty queue it returns `None`
///   and changes nothing. [`peek`](Queue::peek) returns the front value without removing it.
///
/// `N = 0` is allowed: such a queue is always both empty and full.
#[derive(Clone)]
pub struct Queue<T: Bits, const N: usize> {
    /// `N` words; the values are `buf[head]`, `buf[head + 1]`, … (mod N), `len` of them.
    buf: Box<[T]>,
    head: usize,
    len: usize,
}

impl<T: Bits, const N: usize> Default for Queue<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Bits, const N: usize> Queue<T, N> {
    /// An empty queue.
    pub fn new() -> Self {
        Queue {
            buf: vec![T::default(); N].into_boxed_slice(),
            head: 0,
            len: 0,
        }
    }

    /// Appends `v` at the back; a full queue returns `Err(v)` and is left unchanged.
    #[inline]
    pub fn push(&mut self, v: T) -> Result<(), T> {
        if self.len >= N {
            return Err(v);
        }
        let tail = self.head + self.len;
        let tail = if tail >= N { tail - N } else { tail };
        match self.buf.get_mut(tail) {
            Some(slot) => {
                *slot = v;
                self.len += 1;
                Ok(())
            }
            None => Err(v),
        }
    }

    /// Removes and returns the front value; `None` when empty.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.buf.get(self.head).copied()?;
        self.head = if self.head + 1 >= N { 0 } else { self.head + 1 };
        self.len -= 1;
        Some(v)
    }

    /// The front value, without removing it; `None` when empty.
    #[inline]
    pub fn peek(&self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.buf.get(self.head).copied()
    }

    /// The number of values held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no value is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when `N` values are held, so a push would fail.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len >= N
    }

    /// The most values the queue holds, `N`.
    #[inline]
    pub fn capacity(&self) -> usize {
        N
    }

    /// The values held, front to back; changes nothing.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len).filter_map(move |i| {
            let j = self.head + i;
            self.buf.get(if j >= N { j - N } else { j }).copied()
        })
    }
}

impl<T: Bits, const N: usize> PartialEq for Queue<T, N> {
    /// Two queues are equal when they hold the same values in the same order.
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T: Bits, const N: usize> Eq for Queue<T, N> {}

impl<T: Bits + fmt::Debug, const N: usize> fmt::Debug for Queue<T, N> {
    /// Shows the capacity and the values front to back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Values<'a, T: Bits, const N: usize>(&'a Queue<T, N>);
        impl<T: Bits + fmt::Debug, const N: usize> fmt::Debug for Values<'_, T, N> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_list().entries(self.0.iter()).finish()
            }
        }
        f.debug_struct("Queue")
            .field("capacity", &N)
            .field("values", &Values(self))
            .finish()
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::state::XorShift;
    use std::collections::VecDeque;

    #[test]
    fn starts_empty() {
        let mut q: Queue<u32, 3> = Queue::default();
        assert!(q.is_empty());
        assert!(!q.is_full());
        assert_eq!(q.len(), 0);
        assert_eq!(q.capacity(), 3);
        assert_eq!(q.peek(), None);
        assert_eq!(q.pop(), None);
        assert_eq!(q.pop(), None);
        assert!(q.is_empty());
    }

    #[test]
    fn first_in_first_out() {
        let mut q: Queue<u8, 4> = Queue::default();
        assert_eq!(q.push(1), Ok(()));
        assert_eq!(q.push(2), Ok(()));
        assert_eq!(q.peek(), Some(1));
        assert_eq!(q.pop(), Some(1));
        assert_eq!(q.pop(), Some(2));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn full_queue_rejects_and_keeps_contents() {
        let mut q: Queue<u8, 2> = Queue::default();
        q.push(1).unwrap();
        q.push(2).unwrap();
        assert!(q.is_full());
        assert_eq!(q.push(3), Err(3));
        assert_eq!(q.len(), 2);
        assert_eq!(q.iter().collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(q.pop(), Some(1));
        assert_eq!(q.push(4), Ok(())); // wraps around the ring
        assert_eq!(q.push(5), Err(5));
        assert_eq!(q.pop(), Some(2));
        assert_eq!(q.pop(), Some(4));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn zero_capacity_is_always_empty_and_full() {
        let mut q: Queue<u8, 0> = Queue::default();
        assert!(q.is_empty() && q.is_full());
        assert_eq!(q.push(1), Err(1));
        assert_eq!(q.pop(), None);
        assert_eq!(q.peek(), None);
    }

    #[test]
    fn debug_and_eq_look_at_values_only() {
        let mut a: Queue<u8, 2> = Queue::default();
        let mut b: Queue<u8, 2> = Queue::default();
        a.push(9).unwrap();
        b.push(1).unwrap();
        b.push(9).unwrap();
        b.pop();
        assert_eq!(a, b); // different head positions, same contents
        assert_eq!(format!("{a:?}"), "Queue { capacity: 2, values: [9] }");
    }

    #[test]
    fn matches_model_on_random_operations() {
        let mut rng = XorShift(42);
        let mut q: Queue<u16, 5> = Queue::default();
        let mut m: VecDeque<u16> = VecDeque::new();
        for step in 0..20_000 {
            if rng.below(2) == 0 {
                let v = rng.below(1 << 16) as u16;
                let want = if m.len() < 5 {
                    m.push_back(v);
                    Ok(())
                } else {
                    Err(v)
                };
                assert_eq!(q.push(v), want, "step {step}");
            } else {
                assert_eq!(q.pop(), m.pop_front(), "step {step}");
            }
            assert_eq!(q.peek(), m.front().copied());
            assert_eq!(q.len(), m.len());
            assert!(q.iter().eq(m.iter().copied()));
        }
    }
}

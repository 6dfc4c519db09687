//! The state elements of a function, held in `emu_core::state`'s CPU implementations, so the
//! interpreter's state semantics are the CPU's by construction.
//!
//! Keys and values are [`BitVec`]s (which implement `emu_core::Bits` for storage). The
//! elements' sizes are const generics on the CPU side; the sizes the IR asks for are mapped
//! onto them at run time for the common shapes — counters of 1 to 64 bits; CAMs, LRUs and
//! TCAMs of 1 to 64, 128 or 256 slots; arrays and queues of 1 to 64 elements or a power of two
//! up to 2<sup>20</sup> — and any other size uses a faithful model of the same documented
//! semantics ([`ModelCam`], [`ModelArray`], [`ModelLru`], [`ModelTcam`], [`ModelQueue`]), tested
//! against the CPU implementation.
//!
//! A hash table is [`HashSets`]: `emu_core::HashTable` is, by its definition, `N / WAYS` sets
//! that each behave exactly as a `Cam<K, V, WAYS>`, a key living in set
//! `crc32(key's big-endian bytes) mod sets`. The CPU's `HashTable<BitVec, …>` cannot be used
//! as it is, because it would hash the 32-byte form of a `BitVec` rather than the
//! `⌈width / 8⌉` bytes of the NF's key type; so the sets are the CPU's `Cam`s and the set
//! index is the CPU's [`crc32`](emu_core::state::crc32) over the key's own bytes, tested
//! against `emu_core::HashTable` on real key types. An `Lru` in sets is [`LruSets`] the same
//! way, its sets the CPU's fully associative `Lru`s.

use crate::ir::{BitVec, Function, StateId, StateKind};
use core::fmt;
use emu_core::state::{Array, Cam, Counter, Lru, Queue, Register, Tcam};

/// A counter of some width.
pub trait CounterImpl: fmt::Debug {
    /// `Counter::add`.
    fn add(&mut self, n: u64);
    /// `Counter::set`.
    fn set(&mut self, v: u64);
    /// `Counter::get`.
    fn get(&self) -> u64;
}

impl<const B: u32> CounterImpl for Counter<B> {
    fn add(&mut self, n: u64) {
        Counter::add(self, n)
    }
    fn set(&mut self, v: u64) {
        Counter::set(self, v)
    }
    fn get(&self) -> u64 {
        Counter::get(self)
    }
}

/// A CAM of some size, over bit-vector keys and values.
pub trait CamImpl: fmt::Debug {
    /// `Cam::get`.
    fn get(&self, k: BitVec) -> Option<BitVec>;
    /// `Cam::contains`.
    fn contains(&self, k: BitVec) -> bool;
    /// `Cam::insert`.
    fn insert(&mut self, k: BitVec, v: BitVec) -> Option<(BitVec, BitVec)>;
    /// `Cam::remove`.
    fn remove(&mut self, k: BitVec) -> Option<BitVec>;
    /// `Cam::entries`: (slot, key, value) in slot order.
    fn entries(&self) -> Vec<(usize, BitVec, BitVec)>;
}

impl<const N: usize> CamImpl for Cam<BitVec, BitVec, N> {
    fn get(&self, k: BitVec) -> Option<BitVec> {
        Cam::get(self, k)
    }
    fn contains(&self, k: BitVec) -> bool {
        Cam::contains(self, k)
    }
    fn insert(&mut self, k: BitVec, v: BitVec) -> Option<(BitVec, BitVec)> {
        Cam::insert(self, k, v)
    }
    fn remove(&mut self, k: BitVec) -> Option<BitVec> {
        Cam::remove(self, k)
    }
    fn entries(&self) -> Vec<(usize, BitVec, BitVec)> {
        Cam::entries(self).collect()
    }
}

/// `emu_core::Cam`'s documented semantics for a size the CPU implementations are not
/// instantiated at: slots filled lowest-free first, overwrite in place, eviction at a
/// round-robin pointer that advances only on eviction.
#[derive(Debug, Clone)]
pub struct ModelCam {
    slots: Vec<Option<(BitVec, BitVec)>>,
    next_victim: usize,
}

impl ModelCam {
    /// An empty table of `n` ≥ 1 slots.
    pub fn new(n: usize) -> ModelCam {
        ModelCam { slots: vec![None; n.max(1)], next_victim: 0 }
    }

    fn find(&self, k: &BitVec) -> Option<usize> {
        self.slots.iter().position(|s| matches!(s, Some((key, _)) if key == k))
    }
}

impl CamImpl for ModelCam {
    fn get(&self, k: BitVec) -> Option<BitVec> {
        self.find(&k).and_then(|i| self.slots[i].map(|e| e.1))
    }
    fn contains(&self, k: BitVec) -> bool {
        self.find(&k).is_some()
    }
    fn insert(&mut self, k: BitVec, v: BitVec) -> Option<(BitVec, BitVec)> {
        if let Some(i) = self.find(&k) {
            self.slots[i] = Some((k, v));
            return None;
        }
        if let Some(free) = self.slots.iter().position(Option::is_none) {
            self.slots[free] = Some((k, v));
            return None;
        }
        let victim = self.next_victim;
        self.next_victim = (victim + 1) % self.slots.len();
        self.slots[victim].replace((k, v))
    }
    fn remove(&mut self, k: BitVec) -> Option<BitVec> {
        let i = self.find(&k)?;
        self.slots[i].take().map(|e| e.1)
    }
    fn entries(&self) -> Vec<(usize, BitVec, BitVec)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| s.map(|(k, v)| (i, k, v))).collect()
    }
}

/// An array of some size, of bit-vector elements.
pub trait ArrayImpl: fmt::Debug {
    /// `Array::get` (the element as stored; `BitVec::default()` out of range).
    fn get(&self, i: usize) -> BitVec;
    /// `Array::set`.
    fn set(&mut self, i: usize, v: BitVec) -> bool;
}

impl<const N: usize> ArrayImpl for Array<BitVec, N> {
    fn get(&self, i: usize) -> BitVec {
        Array::get(self, i)
    }
    fn set(&mut self, i: usize, v: BitVec) -> bool {
        Array::set(self, i, v)
    }
}

/// `emu_core::Array`'s semantics for other sizes: out-of-range reads give the default,
/// out-of-range writes do nothing and say so.
#[derive(Debug, Clone)]
pub struct ModelArray(Vec<BitVec>);

impl ModelArray {
    /// `n` default elements.
    pub fn new(n: usize) -> ModelArray {
        ModelArray(vec![BitVec::default(); n])
    }
}

impl ArrayImpl for ModelArray {
    fn get(&self, i: usize) -> BitVec {
        self.0.get(i).copied().unwrap_or_default()
    }
    fn set(&mut self, i: usize, v: BitVec) -> bool {
        match self.0.get_mut(i) {
            Some(s) => {
                *s = v;
                true
            }
            None => false,
        }
    }
}

/// An LRU table of some size, over bit-vector keys and values.
pub trait LruImpl: fmt::Debug {
    /// `Lru::get` (a hit makes the entry the most recently used).
    fn get(&mut self, k: BitVec) -> Option<BitVec>;
    /// `Lru::peek`.
    fn peek(&self, k: BitVec) -> Option<BitVec>;
    /// `Lru::contains`.
    fn contains(&self, k: BitVec) -> bool;
    /// `Lru::insert`.
    fn insert(&mut self, k: BitVec, v: BitVec) -> Option<(BitVec, BitVec)>;
    /// `Lru::remove`.
    fn remove(&mut self, k: BitVec) -> Option<BitVec>;
    /// `Lru::entries`: (slot, key, value) in slot order.
    fn entries(&self) -> Vec<(usize, BitVec, BitVec)>;
    /// `Lru::keys_by_recency`: most recently used first.
    fn keys_by_recency(&self) -> Vec<BitVec>;
}

impl<const N: usize> LruImpl for Lru<BitVec, BitVec, N> {
    fn get(&mut self, k: BitVec) -> Option<BitVec> {
        Lru::get(self, k)
    }
    fn peek(&self, k: BitVec) -> Option<BitVec> {
        Lru::peek(self, k)
    }
    fn contains(&self, k: BitVec) -> bool {
        Lru::contains(self, k)
    }
    fn insert(&mut self, k: BitVec, v: BitVec) -> Option<(BitVec, BitVec)> {
        Lru::insert(self, k, v)
    }
    fn remove(&mut self, k: BitVec) -> Option<BitVec> {
        Lru::remove(self, k)
    }
    fn entries(&self) -> Vec<(usize, BitVec, BitVec)> {
        Lru::entries(self).collect()
    }
    fn keys_by_recency(&self) -> Vec<BitVec> {
        Lru::keys_by_recency(self).collect()
    }
}

/// `emu_core::Lru`'s documented semantics for a size the CPU implementations are not
/// instantiated at: slots filled lowest-free first, overwrite in place; an insert and a `get`
/// hit make the entry the most recent; a full table replaces the least recently used entry.
#[derive(Debug, Clone)]
pub struct ModelLru {
    slots: Vec<Option<(BitVec, BitVec)>>,
    /// Slot numbers of the stored entries, most recently used first.
    order: Vec<usize>,
}

impl ModelLru {
    /// An empty table of `n` ≥ 1 slots.
    pub fn new(n: usize) -> ModelLru {
        ModelLru { slots: vec![None; n.max(1)], order: Vec::new() }
    }

    fn find(&self, k: &BitVec) -> Option<usize> {
        self.slots.iter().position(|s| matches!(s, Some((key, _)) if key == k))
    }

    fn touch(&mut self, slot: usize) {
        self.order.retain(|&s| s != slot);
        self.order.insert(0, slot);
    }
}

impl LruImpl for ModelLru {
    fn get(&mut self, k: BitVec) -> Option<BitVec> {
        let i = self.find(&k)?;
        self.touch(i);
        self.slots[i].map(|e| e.1)
    }
    fn peek(&self, k: BitVec) -> Option<BitVec> {
        self.find(&k).and_then(|i| self.slots[i].map(|e| e.1))
    }
    fn contains(&self, k: BitVec) -> bool {
        self.find(&k).is_some()
    }
    fn insert(&mut self, k: BitVec, v: BitVec) -> Option<(BitVec, BitVec)> {
        let (slot, old) = if let Some(i) = self.find(&k) {
            (i, None)
        } else if let Some(free) = self.slots.iter().position(Option::is_none) {
            (free, None)
        } else {
            let victim = *self.order.last().expect("a full table has a least recently used entry");
            (victim, self.slots[victim])
        };
        self.slots[slot] = Some((k, v));
        self.touch(slot);
        old
    }
    fn remove(&mut self, k: BitVec) -> Option<BitVec> {
        let i = self.find(&k)?;
        self.order.retain(|&s| s != i);
        self.slots[i].take().map(|e| e.1)
    }
    fn entries(&self) -> Vec<(usize, BitVec, BitVec)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| s.map(|(k, v)| (i, k, v))).collect()
    }
    fn keys_by_recency(&self) -> Vec<BitVec> {
        self.order.iter().filter_map(|&i| self.slots[i].map(|e| e.0)).collect()
    }
}

/// A table in sets, placed as `emu_core::HashTable` and `emu_core::Lru` in sets place keys of
/// `key_bytes` bytes: `size / ways` sets of `T`, the set of a key being `crc32(key's big-endian
/// bytes) & (sets − 1)`. The CPU's tables over `BitVec` cannot be used as they are, because
/// they would hash the 32-byte form of a `BitVec` rather than the key's own bytes.
#[derive(Debug)]
pub struct Sets<T> {
    sets: Vec<T>,
    ways: usize,
    key_bytes: usize,
}

/// `emu_core::HashTable<K, V, size, ways>`: sets that are CAMs of `ways` slots (the CPU's `Cam`,
/// or [`ModelCam`] for an odd number of ways).
pub type HashSets = Sets<Box<dyn CamImpl + Send>>;

/// `emu_core::Lru<K, V, size, ways>` with more than one set: sets that are LRU tables of `ways`
/// slots.
pub type LruSets = Sets<Box<dyn LruImpl + Send>>;

impl<T> Sets<T> {
    /// An empty table of `size` entries in sets of `ways` (`size / ways` a power of two, as
    /// the verifier checks; anything else is rounded down to one) for keys of `key_width` bits,
    /// each set made by `new_set(ways)`.
    pub fn with(size: u32, ways: u32, key_width: u16, new_set: impl Fn(u32) -> T) -> Sets<T> {
        let ways = ways.max(1);
        let sets = (size / ways).max(1);
        let sets = if sets.is_power_of_two() { sets } else { 1 };
        Sets {
            sets: (0..sets).map(|_| new_set(ways)).collect(),
            ways: ways as usize,
            key_bytes: (key_width as usize).div_ceil(8),
        }
    }

    /// The set `k` lives in: `HashTable::set_of`.
    pub fn set_of(&self, k: &BitVec) -> usize {
        let mut be = k.to_be_bytes();
        // A key wider than the declared width cannot be stored; hash its low bytes as the
        // CPU's `write_be` would.
        if be.len() > self.key_bytes {
            be.drain(..be.len() - self.key_bytes);
        }
        while be.len() < self.key_bytes {
            be.insert(0, 0);
        }
        emu_core::state::crc32(&be) as usize & (self.sets.len() - 1)
    }

    fn of(&self, k: &BitVec) -> &T {
        &self.sets[self.set_of(k)]
    }

    fn of_mut(&mut self, k: &BitVec) -> &mut T {
        let s = self.set_of(k);
        &mut self.sets[s]
    }

    /// Each set's (way, key, value) as (slot, key, value), slot = set × ways + way.
    fn flat(&self, entries: impl Fn(&T) -> Vec<(usize, BitVec, BitVec)>) -> Vec<(usize, BitVec, BitVec)> {
        let ways = self.ways;
        self.sets
            .iter()
            .enumerate()
            .flat_map(|(set, t)| entries(t).into_iter().map(move |(way, k, v)| (set * ways + way, k, v)))
            .collect()
    }
}

impl HashSets {
    /// An empty hash table (see [`Sets::with`]).
    pub fn new(size: u32, ways: u32, key_width: u16) -> HashSets {
        Sets::with(size, ways, key_width, new_cam)
    }

    /// `HashTable::get`.
    pub fn get(&self, k: BitVec) -> Option<BitVec> {
        self.of(&k).get(k)
    }
    /// `HashTable::contains`.
    pub fn contains(&self, k: BitVec) -> bool {
        self.of(&k).contains(k)
    }
    /// `HashTable::insert`.
    pub fn insert(&mut self, k: BitVec, v: BitVec) -> Option<(BitVec, BitVec)> {
        self.of_mut(&k).insert(k, v)
    }
    /// `HashTable::remove`.
    pub fn remove(&mut self, k: BitVec) -> Option<BitVec> {
        self.of_mut(&k).remove(k)
    }
    /// `HashTable::entries`: (slot, key, value) in slot order, slot = set × ways + way.
    pub fn entries(&self) -> Vec<(usize, BitVec, BitVec)> {
        self.flat(|c| c.entries())
    }
}

/// `Lru` in sets: each set its own LRU table.
impl LruImpl for LruSets {
    fn get(&mut self, k: BitVec) -> Option<BitVec> {
        self.of_mut(&k).get(k)
    }
    fn peek(&self, k: BitVec) -> Option<BitVec> {
        self.of(&k).peek(k)
    }
    fn contains(&self, k: BitVec) -> bool {
        self.of(&k).contains(k)
    }
    fn insert(&mut self, k: BitVec, v: BitVec) -> Option<(BitVec, BitVec)> {
        self.of_mut(&k).insert(k, v)
    }
    fn remove(&mut self, k: BitVec) -> Option<BitVec> {
        self.of_mut(&k).remove(k)
    }
    fn entries(&self) -> Vec<(usize, BitVec, BitVec)> {
        self.flat(|l| l.entries())
    }
    fn keys_by_recency(&self) -> Vec<BitVec> {
        self.sets.iter().flat_map(|l| l.keys_by_recency()).collect()
    }
}

/// A TCAM of some size, over bit-vector keys and results.
pub trait TcamImpl: fmt::Debug {
    /// `Tcam::set`.
    fn set(&mut self, slot: usize, value: BitVec, mask: BitVec, result: BitVec) -> bool;
    /// `Tcam::clear`.
    fn clear(&mut self, slot: usize);
    /// `Tcam::lookup_slot`.
    fn lookup_slot(&self, k: BitVec) -> Option<usize>;
    /// `Tcam::lookup`.
    fn lookup(&self, k: BitVec) -> Option<BitVec>;
    /// `Tcam::entry` of every slot: (slot, value, mask, result) of the valid ones.
    fn entries(&self) -> Vec<(usize, BitVec, BitVec, BitVec)>;
}

impl<const N: usize> TcamImpl for Tcam<BitVec, BitVec, N> {
    fn set(&mut self, slot: usize, value: BitVec, mask: BitVec, result: BitVec) -> bool {
        Tcam::set(self, slot, value, mask, result)
    }
    fn clear(&mut self, slot: usize) {
        Tcam::clear(self, slot)
    }
    fn lookup_slot(&self, k: BitVec) -> Option<usize> {
        Tcam::lookup_slot(self, k)
    }
    fn lookup(&self, k: BitVec) -> Option<BitVec> {
        Tcam::lookup(self, k)
    }
    fn entries(&self) -> Vec<(usize, BitVec, BitVec, BitVec)> {
        (0..N).filter_map(|i| self.entry(i).map(|(v, m, r)| (i, v, m, r))).collect()
    }
}

/// `emu_core::Tcam`'s documented semantics for other sizes: slot `i` matches `k` when it is
/// valid and `k & mask == value & mask`; the lowest matching slot wins; writes are explicit
/// and a slot ≥ N is not written.
#[derive(Debug, Clone)]
pub struct ModelTcam(Vec<Option<(BitVec, BitVec, BitVec)>>);

impl ModelTcam {
    /// `n` invalid slots.
    pub fn new(n: usize) -> ModelTcam {
        ModelTcam(vec![None; n])
    }
}

impl TcamImpl for ModelTcam {
    fn set(&mut self, slot: usize, value: BitVec, mask: BitVec, result: BitVec) -> bool {
        match self.0.get_mut(slot) {
            Some(e) => {
                *e = Some((value, mask, result));
                true
            }
            None => false,
        }
    }
    fn clear(&mut self, slot: usize) {
        if let Some(e) = self.0.get_mut(slot) {
            *e = None;
        }
    }
    fn lookup_slot(&self, k: BitVec) -> Option<usize> {
        // On the words, as the CPU compares the 32-byte big-endian forms: widths do not matter.
        let kw = k.words();
        self.0.iter().position(|e| {
            e.as_ref().is_some_and(|(v, m, _)| {
                let (vw, mw) = (v.words(), m.words());
                (0..4).all(|i| (kw[i] ^ vw[i]) & mw[i] == 0)
            })
        })
    }
    fn lookup(&self, k: BitVec) -> Option<BitVec> {
        self.lookup_slot(k).and_then(|i| self.0[i].map(|e| e.2))
    }
    fn entries(&self) -> Vec<(usize, BitVec, BitVec, BitVec)> {
        self.0.iter().enumerate().filter_map(|(i, e)| e.map(|(v, m, r)| (i, v, m, r))).collect()
    }
}

/// A queue of some size, of bit-vector values.
pub trait QueueImpl: fmt::Debug {
    /// `Queue::push`.
    fn push(&mut self, v: BitVec) -> Result<(), BitVec>;
    /// `Queue::pop`.
    fn pop(&mut self) -> Option<BitVec>;
    /// `Queue::peek`.
    fn peek(&self) -> Option<BitVec>;
    /// `Queue::len`.
    fn len(&self) -> usize;
    /// `Queue::is_empty`.
    fn is_empty(&self) -> bool;
    /// `Queue::is_full`.
    fn is_full(&self) -> bool;
    /// `Queue::iter`: the values, front first.
    fn values(&self) -> Vec<BitVec>;
}

impl<const N: usize> QueueImpl for Queue<BitVec, N> {
    fn push(&mut self, v: BitVec) -> Result<(), BitVec> {
        Queue::push(self, v)
    }
    fn pop(&mut self) -> Option<BitVec> {
        Queue::pop(self)
    }
    fn peek(&self) -> Option<BitVec> {
        Queue::peek(self)
    }
    fn len(&self) -> usize {
        Queue::len(self)
    }
    fn is_empty(&self) -> bool {
        Queue::is_empty(self)
    }
    fn is_full(&self) -> bool {
        Queue::is_full(self)
    }
    fn values(&self) -> Vec<BitVec> {
        self.iter().collect()
    }
}

/// `emu_core::Queue`'s documented semantics for other sizes: a push onto a full queue is
/// rejected and changes nothing; a pop or peek of an empty queue gives nothing.
#[derive(Debug, Clone)]
pub struct ModelQueue {
    values: std::collections::VecDeque<BitVec>,
    size: usize,
}

impl ModelQueue {
    /// An empty queue of at most `n` values.
    pub fn new(n: usize) -> ModelQueue {
        ModelQueue { values: Default::default(), size: n }
    }
}

impl QueueImpl for ModelQueue {
    fn push(&mut self, v: BitVec) -> Result<(), BitVec> {
        if self.values.len() >= self.size {
            return Err(v);
        }
        self.values.push_back(v);
        Ok(())
    }
    fn pop(&mut self) -> Option<BitVec> {
        self.values.pop_front()
    }
    fn peek(&self) -> Option<BitVec> {
        self.values.front().copied()
    }
    fn len(&self) -> usize {
        self.values.len()
    }
    fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
    fn is_full(&self) -> bool {
        self.values.len() >= self.size
    }
    fn values(&self) -> Vec<BitVec> {
        self.values.iter().copied().collect()
    }
}

/// One element's storage.
#[derive(Debug)]
pub enum Element {
    /// A counter.
    Counter(Box<dyn CounterImpl + Send>),
    /// A register (its value has the declared width).
    Register(Register<BitVec>),
    /// An array.
    Array(Box<dyn ArrayImpl + Send>),
    /// A CAM.
    Cam(Box<dyn CamImpl + Send>),
    /// An LRU table.
    Lru(Box<dyn LruImpl + Send>),
    /// A hash table.
    HashTable(HashSets),
    /// A TCAM.
    Tcam(Box<dyn TcamImpl + Send>),
    /// A queue.
    Queue(Box<dyn QueueImpl + Send>),
}

/// `$mk!(k)` for the constant `k` equal to `$n`, among the sizes one list names (`widths`:
/// 1 to 64; `tables`: those, 128 and 256; `memories`: those and the powers of two to 2^20),
/// else `$default`.
macro_rules! by_const {
    ($n:expr, $default:expr, $mk:ident, widths) => {
        by_const!($n, $default, $mk, widths and [])
    };
    ($n:expr, $default:expr, $mk:ident, tables) => {
        by_const!($n, $default, $mk, widths and [128, 256])
    };
    ($n:expr, $default:expr, $mk:ident, memories) => {
        by_const!($n, $default, $mk, widths and [
            128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576
        ])
    };
    ($n:expr, $default:expr, $mk:ident, widths and [$($more:literal),*]) => {
        by_const!($n, $default, $mk, [
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
            30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56,
            57, 58, 59, 60, 61, 62, 63, 64 $(, $more)*
        ])
    };
    ($n:expr, $default:expr, $mk:ident, [$($k:literal),*]) => {
        match $n {
            $($k => $mk!($k),)*
            _ => $default,
        }
    };
}

fn new_counter(bits: u16) -> Box<dyn CounterImpl + Send> {
    macro_rules! mk {
        ($k:literal) => {
            Box::new(Counter::<$k>::new())
        };
    }
    by_const!(bits, Box::new(Counter::<64>::new()), mk, widths)
}

fn new_cam(size: u32) -> Box<dyn CamImpl + Send> {
    macro_rules! mk {
        ($k:literal) => {
            Box::new(Cam::<BitVec, BitVec, $k>::new())
        };
    }
    by_const!(size, Box::new(ModelCam::new(size as usize)), mk, tables)
}

fn new_lru(size: u32) -> Box<dyn LruImpl + Send> {
    macro_rules! mk {
        ($k:literal) => {
            Box::new(Lru::<BitVec, BitVec, $k>::new())
        };
    }
    by_const!(size, Box::new(ModelLru::new(size as usize)), mk, tables)
}

fn new_tcam(size: u32) -> Box<dyn TcamImpl + Send> {
    macro_rules! mk {
        ($k:literal) => {
            Box::new(Tcam::<BitVec, BitVec, $k>::new())
        };
    }
    by_const!(size, Box::new(ModelTcam::new(size as usize)), mk, tables)
}

fn new_queue(size: u32) -> Box<dyn QueueImpl + Send> {
    macro_rules! mk {
        ($k:literal) => {
            Box::new(Queue::<BitVec, $k>::new())
        };
    }
    by_const!(size, Box::new(ModelQueue::new(size as usize)), mk, memories)
}

fn new_array(size: u32) -> Box<dyn ArrayImpl + Send> {
    macro_rules! mk {
        ($k:literal) => {
            Box::new(Array::<BitVec, $k>::new())
        };
    }
    by_const!(size, Box::new(ModelArray::new(size as usize)), mk, memories)
}

/// The state of one function's elements, in declaration order, in their initial contents
/// (all zero / empty) until packets change them.
#[derive(Debug)]
pub struct State {
    elems: Vec<(String, StateKind, Element)>,
    /// Per element: lookups that found their key, and lookups that did not (for profiles).
    lookups: Vec<[u64; 2]>,
}

impl State {
    /// Fresh state for `func`'s declarations.
    pub fn new(func: &Function) -> State {
        let elems = func
            .states
            .iter()
            .map(|(_, d)| {
                let e = match &d.kind {
                    StateKind::Counter { bits } => Element::Counter(new_counter(*bits)),
                    StateKind::Register { ty } => Element::Register(Register::new(BitVec::zero(ty.width()))),
                    StateKind::Array { size, .. } => Element::Array(new_array(*size)),
                    StateKind::Cam { size, .. } => Element::Cam(new_cam(*size)),
                    StateKind::Lru { size, ways, .. } if ways == size => Element::Lru(new_lru(*size)),
                    StateKind::Lru { key, size, ways, .. } => {
                        Element::Lru(Box::new(LruSets::with(*size, *ways, key.width(), new_lru)))
                    }
                    StateKind::HashTable { key, size, ways, .. } => {
                        Element::HashTable(HashSets::new(*size, *ways, key.width()))
                    }
                    StateKind::Tcam { size, .. } => Element::Tcam(new_tcam(*size)),
                    StateKind::Queue { size, .. } => Element::Queue(new_queue(*size)),
                };
                (d.name.clone(), d.kind.clone(), e)
            })
            .collect::<Vec<_>>();
        let lookups = vec![[0; 2]; elems.len()];
        State { elems, lookups }
    }

    /// Counts a lookup (`get`, `peek`, `contains`, a TCAM `lookup`) of element `id`.
    pub(crate) fn count_lookup(&mut self, id: StateId, hit: bool) {
        if let Some(c) = self.lookups.get_mut(id.as_u32() as usize) {
            c[usize::from(!hit)] += 1;
        }
    }

    /// Each table (CAM, LRU, hash table, TCAM) by name, with its lookups so far that hit and
    /// that missed, in declaration order.
    pub fn lookup_counts(&self) -> Vec<(&str, u64, u64)> {
        self.elems
            .iter()
            .zip(&self.lookups)
            .filter(|((_, k, _), _)| {
                matches!(k, StateKind::Cam { .. } | StateKind::Lru { .. } | StateKind::HashTable { .. } | StateKind::Tcam { .. })
            })
            .map(|((n, ..), c)| (n.as_str(), c[0], c[1]))
            .collect()
    }

    /// Each queue by name with the number of values it holds.
    pub fn queue_lens(&self) -> Vec<(&str, usize)> {
        self.elems
            .iter()
            .filter_map(|(n, _, e)| match e {
                Element::Queue(q) => Some((n.as_str(), q.len())),
                _ => None,
            })
            .collect()
    }

    /// The element declared as `id`, with its kind.
    pub fn element(&self, id: StateId) -> Option<(&StateKind, &Element)> {
        self.elems.get(id.as_u32() as usize).map(|(_, k, e)| (k, e))
    }

    /// The element declared as `id`, writable.
    pub fn element_mut(&mut self, id: StateId) -> Option<(&StateKind, &mut Element)> {
        self.elems.get_mut(id.as_u32() as usize).map(|(_, k, e)| (&*k, e))
    }

    fn by_name(&self, name: &str) -> Option<&Element> {
        self.elems.iter().find(|(n, ..)| n == name).map(|(.., e)| e)
    }

    /// The count of counter `name`.
    pub fn counter(&self, name: &str) -> Option<u64> {
        match self.by_name(name)? {
            Element::Counter(c) => Some(c.get()),
            _ => None,
        }
    }

    /// The value of register `name`.
    pub fn register(&self, name: &str) -> Option<BitVec> {
        match self.by_name(name)? {
            Element::Register(r) => Some(r.get()),
            _ => None,
        }
    }

    /// Sets register `name` to `v` (resized to the register's width): how configuration
    /// (an NF's address, set when it is built) and the debug channel load a register.
    pub fn set_register(&mut self, name: &str, v: BitVec) -> Result<(), String> {
        let (_, kind, e) =
            self.elems.iter_mut().find(|(n, ..)| n == name).ok_or_else(|| format!("no state element `{name}`"))?;
        match (kind, e) {
            (StateKind::Register { ty }, Element::Register(r)) => {
                r.set(v.resize(ty.width()));
                Ok(())
            }
            (k, _) => Err(format!("`{name}` is {}, not a register", k.with_article())),
        }
    }

    /// Writes the rule (`value`, `mask`) → `result` into slot `slot` of TCAM `name`, each
    /// resized to the declared widths: how the constructor's rules ([`crate::initial`]) and
    /// the debug channel load a table before traffic.
    pub fn set_tcam(
        &mut self,
        name: &str,
        slot: usize,
        value: BitVec,
        mask: BitVec,
        result: BitVec,
    ) -> Result<(), String> {
        let (_, kind, e) =
            self.elems.iter_mut().find(|(n, ..)| n == name).ok_or_else(|| format!("no state element `{name}`"))?;
        match (kind, e) {
            (StateKind::Tcam { key, value: ty, size }, Element::Tcam(t)) => {
                if !t.set(slot, value.resize(key.width()), mask.resize(key.width()), result.resize(ty.width())) {
                    return Err(format!("`{name}` has {size} slots; there is no slot {slot}"));
                }
                Ok(())
            }
            (k, _) => Err(format!("`{name}` is {}, not a tcam", k.with_article())),
        }
    }

    /// Puts (`key`, `value`), resized to the declared widths, into slot `slot` of CAM `name`
    /// as an `insert` into its next empty slot does: how the constructor's entries
    /// ([`crate::initial`]) are loaded before traffic. Entries fill slots 0, 1, 2, …
    /// in order (so the victim pointer stays at 0, as after those inserts on the CPU); a slot
    /// out of that order, or a key already there, is an error.
    pub fn load_cam(&mut self, name: &str, slot: usize, key: BitVec, value: BitVec) -> Result<(), String> {
        let (_, kind, e) =
            self.elems.iter_mut().find(|(n, ..)| n == name).ok_or_else(|| format!("no state element `{name}`"))?;
        match (kind, e) {
            (StateKind::Cam { key: kt, value: vt, size }, Element::Cam(c)) => {
                let filled = c.entries().len();
                if slot != filled || slot >= *size as usize {
                    return Err(format!(
                        "`{name}` is loaded in slot order from 0 and has {size} slots; entry for slot {slot} \
                         comes after {filled} entries"
                    ));
                }
                let key = key.resize(kt.width());
                if c.contains(key) {
                    return Err(format!("`{name}`: a key is loaded twice"));
                }
                c.insert(key, value.resize(vt.width()));
                Ok(())
            }
            (k, _) => Err(format!("`{name}` is {}, not a cam", k.with_article())),
        }
    }

    /// Sets word `i` of array `name` to `v` (resized to the element's width): how the
    /// contents an NF's constructor leaves ([`crate::initial`]) are loaded.
    pub fn load_array(&mut self, name: &str, i: usize, v: BitVec) -> Result<(), String> {
        let (_, kind, e) =
            self.elems.iter_mut().find(|(n, ..)| n == name).ok_or_else(|| format!("no state element `{name}`"))?;
        match (kind, e) {
            (StateKind::Array { ty, size }, Element::Array(a)) => {
                if !a.set(i, v.resize(ty.width())) {
                    return Err(format!("`{name}` has {size} words; there is no word {i}"));
                }
                Ok(())
            }
            (k, _) => Err(format!("`{name}` is {}, not an array", k.with_article())),
        }
    }

    /// Element `i` of array `name` (0 out of range), of the declared width.
    pub fn array_get(&self, name: &str, i: usize) -> Option<BitVec> {
        let (_, kind, e) = self.elems.iter().find(|(n, ..)| n == name)?;
        match (kind, e) {
            (StateKind::Array { ty, .. }, Element::Array(a)) => Some(a.get(i).resize(ty.width())),
            _ => None,
        }
    }

    /// The entries of CAM `name` as (slot, key, value), in slot order.
    pub fn cam_entries(&self, name: &str) -> Option<Vec<(usize, BitVec, BitVec)>> {
        match self.by_name(name)? {
            Element::Cam(c) => Some(c.entries()),
            _ => None,
        }
    }

    /// The entries of LRU table `name` as (slot, key, value), in slot order.
    pub fn lru_entries(&self, name: &str) -> Option<Vec<(usize, BitVec, BitVec)>> {
        match self.by_name(name)? {
            Element::Lru(l) => Some(l.entries()),
            _ => None,
        }
    }

    /// The keys of LRU table `name`, most recently used first.
    pub fn lru_keys_by_recency(&self, name: &str) -> Option<Vec<BitVec>> {
        match self.by_name(name)? {
            Element::Lru(l) => Some(l.keys_by_recency()),
            _ => None,
        }
    }

    /// The entries of hash table `name` as (slot, key, value), slot = set × ways + way.
    pub fn hash_table_entries(&self, name: &str) -> Option<Vec<(usize, BitVec, BitVec)>> {
        match self.by_name(name)? {
            Element::HashTable(h) => Some(h.entries()),
            _ => None,
        }
    }

    /// The valid rules of TCAM `name` as (slot, value, mask, result), in slot order.
    pub fn tcam_entries(&self, name: &str) -> Option<Vec<(usize, BitVec, BitVec, BitVec)>> {
        match self.by_name(name)? {
            Element::Tcam(t) => Some(t.entries()),
            _ => None,
        }
    }

    /// The values of queue `name`, front first.
    pub fn queue_values(&self, name: &str) -> Option<Vec<BitVec>> {
        match self.by_name(name)? {
            Element::Queue(q) => Some(q.values()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// The model CAM makes the same choices as `emu_core::Cam` on a long random sequence.
    #[test]
    fn model_cam_matches_the_cpu_cam() {
        let mut cpu: Box<dyn CamImpl + Send> = Box::new(Cam::<BitVec, BitVec, 5>::new());
        let mut model = ModelCam::new(5);
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for step in 0..20_000 {
            let k = BitVec::new(48, next(12));
            let v = BitVec::new(8, next(256));
            match next(4) {
                0 => assert_eq!(cpu.remove(k), model.remove(k), "step {step}"),
                1 => assert_eq!(cpu.get(k), model.get(k), "step {step}"),
                _ => assert_eq!(cpu.insert(k, v), model.insert(k, v), "step {step}"),
            }
            assert_eq!(cpu.entries(), model.entries(), "step {step}");
            assert_eq!(cpu.contains(k), model.contains(k), "step {step}");
        }
    }

    /// A seeded xorshift: `next(n)` is in `0..n`.
    fn rng(mut x: u64) -> impl FnMut(u64) -> u64 {
        move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        }
    }

    /// The model LRU makes the same choices (victims, recency order, slots) as `emu_core::Lru`.
    #[test]
    fn model_lru_matches_the_cpu_lru() {
        let mut cpu: Box<dyn LruImpl + Send> = Box::new(Lru::<BitVec, BitVec, 5>::new());
        let mut model = ModelLru::new(5);
        let mut next = rng(0x0123_4567_89ab_cdef);
        for step in 0..20_000 {
            let k = BitVec::new(16, next(12));
            let v = BitVec::new(8, next(256));
            match next(6) {
                0 => assert_eq!(cpu.remove(k), model.remove(k), "step {step}"),
                1 => assert_eq!(cpu.get(k), model.get(k), "step {step}"),
                2 => assert_eq!(cpu.peek(k), model.peek(k), "step {step}"),
                _ => assert_eq!(cpu.insert(k, v), model.insert(k, v), "step {step}"),
            }
            assert_eq!(cpu.entries(), model.entries(), "step {step}");
            assert_eq!(cpu.keys_by_recency(), model.keys_by_recency(), "step {step}");
            assert_eq!(cpu.contains(k), model.contains(k), "step {step}");
        }
    }

    /// The model TCAM matches `emu_core::Tcam`, on keys of 12 bits (the byte forms the CPU
    /// compares are padded) with random masks, slots past the end included.
    #[test]
    fn model_tcam_matches_the_cpu_tcam() {
        let mut cpu: Box<dyn TcamImpl + Send> = Box::new(Tcam::<BitVec, BitVec, 6>::new());
        let mut model = ModelTcam::new(6);
        let mut next = rng(0x2545_f491_4f6c_dd1d);
        let mut hits = 0;
        for step in 0..20_000 {
            let k = BitVec::new(12, next(1 << 12));
            let slot = next(8) as usize;
            match next(5) {
                0 => {
                    // Masks with few bits set, so that rules match often.
                    let mask = BitVec::new(12, next(1 << 12) & next(1 << 12) & next(1 << 12));
                    let r = BitVec::new(8, next(256));
                    assert_eq!(cpu.set(slot, k, mask, r), model.set(slot, k, mask, r), "step {step}");
                }
                1 => {
                    cpu.clear(slot);
                    model.clear(slot);
                }
                _ => {
                    assert_eq!(cpu.lookup_slot(k), model.lookup_slot(k), "step {step}");
                    assert_eq!(cpu.lookup(k), model.lookup(k), "step {step}");
                    hits += cpu.lookup(k).is_some() as usize;
                }
            }
            assert_eq!(cpu.entries(), model.entries(), "step {step}");
        }
        assert!(hits > 1000, "{hits} lookups hit");
    }

    /// The model queue matches `emu_core::Queue`: full pushes rejected, empty pops `None`.
    #[test]
    fn model_queue_matches_the_cpu_queue() {
        let mut cpu: Box<dyn QueueImpl + Send> = Box::new(Queue::<BitVec, 4>::new());
        let mut model = ModelQueue::new(4);
        let mut next = rng(0x9e37_79b9_7f4a_7c15);
        for step in 0..20_000 {
            let v = BitVec::new(24, next(1 << 24));
            match next(3) {
                0 => assert_eq!(cpu.push(v), model.push(v), "step {step}"),
                1 => assert_eq!(cpu.pop(), model.pop(), "step {step}"),
                _ => assert_eq!(cpu.peek(), model.peek(), "step {step}"),
            }
            assert_eq!(cpu.values(), model.values(), "step {step}");
            assert_eq!(
                (cpu.len(), cpu.is_empty(), cpu.is_full()),
                (model.len(), model.is_empty(), model.is_full()),
                "step {step}"
            );
        }
    }

    /// [`HashSets`] is `emu_core::HashTable` on the NF's own key types: the same sets (the CRC of
    /// the key's 4, 6 or 2 bytes, not of a `BitVec`'s 32), evictions and slots.
    #[test]
    fn hash_sets_match_the_cpu_hash_table() {
        fn check<K: emu_core::Bits, const N: usize, const W: usize>(
            seed: u64,
            key_width: u16,
            key_of: impl Fn(u64) -> K,
            bits: impl Fn(K) -> BitVec,
        ) {
            let mut cpu: emu_core::HashTable<K, u16, N, W> = emu_core::HashTable::default();
            let mut sets = HashSets::new(N as u32, W as u32, key_width);
            let mut next = rng(seed);
            let as_bits = |e: Option<(K, u16)>| e.map(|(k, v)| (bits(k), BitVec::new(16, v as u64)));
            let mut evictions = 0;
            for step in 0..20_000 {
                let key = key_of(next(4 * N as u64));
                let (k, v) = (bits(key), next(1 << 16) as u16);
                let bv = BitVec::new(16, v as u64);
                assert_eq!(sets.set_of(&k), cpu.set_of(key), "step {step}");
                match next(4) {
                    0 => assert_eq!(sets.remove(k), cpu.remove(key).map(|v| BitVec::new(16, v as u64))),
                    1 => {
                        assert_eq!(sets.get(k), cpu.get(key).map(|v| BitVec::new(16, v as u64)), "step {step}");
                        assert_eq!(sets.contains(k), cpu.contains(key), "step {step}");
                    }
                    _ => {
                        let want = as_bits(cpu.insert(key, v));
                        evictions += want.is_some() as usize;
                        assert_eq!(sets.insert(k, bv), want, "step {step}");
                    }
                }
                let want: Vec<_> = cpu.entries().map(|(i, k, v)| (i, bits(k), BitVec::new(16, v as u64))).collect();
                assert_eq!(sets.entries(), want, "step {step}");
            }
            assert!(evictions > 100, "{evictions} evictions");
        }
        check::<u32, 16, 4>(1, 32, |x| (x as u32).wrapping_mul(0x9e37_79b9), |k| BitVec::new(32, k as u64));
        check::<emu_core::Mac, 8, 1>(
            2,
            48,
            |x| emu_core::Mac::from_bytes([2, 0, 0, 0, (x >> 8) as u8, x as u8]),
            |m| BitVec::new(48, m.0.value()),
        );
        check::<u16, 12, 3>(3, 16, |x| x as u16, |k| BitVec::new(16, k as u64));
        check::<u16, 2, 2>(4, 16, |x| x as u16 * 7, |k| BitVec::new(16, k as u64));
    }

    /// [`LruSets`] is `emu_core::Lru` in sets on the NF's own key types: the same sets,
    /// evictions, slots and per-set recency orders.
    #[test]
    fn lru_sets_match_the_cpu_lru_in_sets() {
        fn check<const N: usize, const W: usize>(seed: u64) {
            let mut cpu: emu_core::Lru<u32, u16, N, W> = emu_core::Lru::default();
            let mut sets = LruSets::with(N as u32, W as u32, 32, new_lru);
            let mut next = rng(seed);
            let key = |k: u32| BitVec::new(32, k as u64);
            let value = |v: Option<u16>| v.map(|v| BitVec::new(16, v as u64));
            let mut evictions = 0;
            for step in 0..20_000 {
                let k = (next(3 * N as u64) as u32).wrapping_mul(0x9e37_79b9);
                let v = next(1 << 16) as u16;
                assert_eq!(sets.set_of(&key(k)), cpu.set_of(k), "step {step}");
                match next(5) {
                    0 => assert_eq!(sets.remove(key(k)), value(cpu.remove(k)), "step {step}"),
                    1 => assert_eq!(sets.peek(key(k)), value(cpu.peek(k)), "step {step}"),
                    2 => assert_eq!(sets.get(key(k)), value(cpu.get(k)), "step {step}"),
                    _ => {
                        let want = cpu.insert(k, v).map(|(k, v)| (key(k), BitVec::new(16, v as u64)));
                        evictions += want.is_some() as usize;
                        assert_eq!(sets.insert(key(k), BitVec::new(16, v as u64)), want, "step {step}");
                    }
                }
                let want: Vec<_> = cpu.entries().map(|(i, k, v)| (i, key(k), BitVec::new(16, v as u64))).collect();
                assert_eq!(sets.entries(), want, "step {step}");
                assert_eq!(sets.keys_by_recency(), cpu.keys_by_recency().map(key).collect::<Vec<_>>(), "step {step}");
            }
            assert!(evictions > 100, "{evictions} evictions");
        }
        check::<16, 4>(5);
        check::<64, 8>(6);
        check::<8, 1>(7);
    }

    #[test]
    fn model_array_matches_the_cpu_array() {
        let mut cpu: Box<dyn ArrayImpl + Send> = Box::new(Array::<BitVec, 7>::new());
        let mut model = ModelArray::new(7);
        for i in 0..20 {
            let v = BitVec::new(16, i as u64 * 977);
            assert_eq!(cpu.set(i % 9, v), model.set(i % 9, v));
            assert_eq!(cpu.get(i % 11), model.get(i % 11));
        }
    }

    #[test]
    fn odd_sizes_use_the_model() {
        let mut f = Function::new("x", 64);
        f.add_state("big", StateKind::Cam { key: crate::ir::u(8), value: crate::ir::u(8), size: 100 });
        f.add_state("wide", StateKind::Counter { bits: 12 });
        f.add_state("old", StateKind::Lru { key: crate::ir::u(8), value: crate::ir::u(8), size: 100, ways: 100 });
        f.add_state("acl", StateKind::Tcam { key: crate::ir::u(8), value: crate::ir::u(8), size: 65 });
        f.add_state("fifo", StateKind::Queue { ty: crate::ir::u(8), size: 1000 });
        f.add_state("fast", StateKind::Lru { key: crate::ir::u(8), value: crate::ir::u(8), size: 7, ways: 7 });
        let s = State::new(&f);
        let d = format!("{s:?}");
        for model in ["ModelCam", "ModelLru", "ModelTcam", "ModelQueue"] {
            assert!(d.contains(model), "{model}: {d}");
        }
        assert!(d.contains("Counter"));
        assert!(d.contains("Lru { len: 0"), "the CPU's Lru for 7 slots: {d}");
    }
}

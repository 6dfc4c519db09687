//! What a debugger sees of the state elements: each as a numbered list of entries, moved as
//! big-endian bytes laid out as docs/debug-protocol.md's "Symbols" section gives them. The
//! debug units of every target read and write state through [`Element`], so a state element
//! is reachable by its field name without the debugger knowing its Rust type.
//!
//! A debugger's write never breaks an element's invariants: a table entry whose key is already
//! in another slot, or (in a [`HashTable`](super::HashTable)) belongs to another set, is
//! refused, as is a value with bits set above its width.

use super::{Array, Counter, Queue, Register, Tcam};
use crate::bits::Bits;

/// How a debugger shows a key or value (the codes are the protocol's formats).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// An unsigned integer, in decimal.
    Uint = 0,
    /// A MAC address.
    Mac = 1,
    /// An IPv4 address.
    Ipv4 = 2,
    /// `true` or `false`.
    Bool = 3,
    /// Bytes, in hex.
    Hex = 4,
}

/// What kind of element (the codes are the protocol's symbol kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementKind {
    /// A `Register`, or a plain value field of the state struct.
    Register = 0,
    /// A `Counter`.
    Counter = 1,
    /// An `Array`.
    Array = 2,
    /// A `Cam`.
    Cam = 3,
    /// An `Lru`.
    Lru = 4,
    /// A `HashTable`.
    HashTable = 5,
    /// A `Tcam`.
    Tcam = 6,
    /// A `Queue`.
    Queue = 7,
}

/// A key's or value's width in bits and notation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Bits.
    pub width: usize,
    /// Notation.
    pub shown: Shown,
}

impl Shape {
    /// The shape of `T`.
    pub fn of<T: Bits>() -> Shape {
        Shape { width: T::WIDTH, shown: T::SHOWN }
    }
}

/// Why a debugger's write was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryError {
    /// The index is past the element's size.
    BadIndex,
    /// The entry has the wrong length, or bits above a width.
    BadValue,
    /// A table entry whose key another slot holds already (a key is in one slot at most).
    KeyElsewhere,
    /// A hash table entry whose key hashes to another set than the slot's.
    WrongSet,
    /// The element cannot be written (a queue).
    ReadOnly,
}

/// A state element as a debugger sees it.
pub trait Element {
    /// What it is.
    fn kind(&self) -> ElementKind;
    /// Its number of entries.
    fn size(&self) -> usize;
    /// A table's key (`None` for the other kinds).
    fn key(&self) -> Option<Shape> {
        None
    }
    /// The value an entry holds (a TCAM's: its result).
    fn value(&self) -> Shape;
    /// Entry `index`, or `None` past the end.
    fn read(&self, index: usize) -> Option<Vec<u8>>;
    /// Overwrites entry `index`.
    fn write(&mut self, index: usize, entry: &[u8]) -> Result<(), EntryError>;
    /// The index of the entry holding `key` (a TCAM: the rule that matches it first).
    fn find(&self, _key: &[u8]) -> Option<usize> {
        None
    }
    /// Zeroes a counter; `false` for the other kinds.
    fn reset(&mut self) -> bool {
        false
    }
    /// Whether it holds state that its entries do not show, unlike a new element: a `Cam`'s
    /// victim pointer that has moved, a `Queue`'s length (its entries read 0 past it, so a
    /// held 0 looks like none). Other tiers cannot load such state from the entries.
    fn unshown_state(&self) -> bool {
        false
    }
}

/// `T` from exactly its big-endian bytes; bits set above its width are refused.
pub(crate) fn exact<T: Bits>(b: &[u8]) -> Result<T, EntryError> {
    if b.len() != T::BYTES {
        return Err(EntryError::BadValue);
    }
    let v = T::read_be(b);
    if be(&v) != b {
        return Err(EntryError::BadValue);
    }
    Ok(v)
}

pub(crate) fn be<T: Bits>(v: &T) -> Vec<u8> {
    let mut out = vec![0; T::BYTES];
    v.write_be(&mut out);
    out
}

/// A table slot as bytes: `valid`, key, value (an empty slot reads as zeros).
pub(crate) fn table_entry<K: Bits, V: Bits>(e: Option<(K, V)>) -> Vec<u8> {
    let mut out = vec![e.is_some() as u8];
    let (k, v) = e.unwrap_or_default();
    out.extend(be(&k));
    out.extend(be(&v));
    out
}

/// A written table slot: `None` empties it.
pub(crate) fn parse_table_entry<K: Bits, V: Bits>(b: &[u8]) -> Result<Option<(K, V)>, EntryError> {
    if b.len() != 1 + K::BYTES + V::BYTES {
        return Err(EntryError::BadValue);
    }
    match b[0] {
        0 => Ok(None),
        1 => Ok(Some((exact(&b[1..1 + K::BYTES])?, exact(&b[1 + K::BYTES..])?))),
        _ => Err(EntryError::BadValue),
    }
}

/// A plain value field of the state struct (an address, a setting) is a register.
impl<T: Bits> Element for T {
    fn kind(&self) -> ElementKind {
        ElementKind::Register
    }
    fn size(&self) -> usize {
        1
    }
    fn value(&self) -> Shape {
        Shape::of::<T>()
    }
    fn read(&self, index: usize) -> Option<Vec<u8>> {
        (index == 0).then(|| be(self))
    }
    fn write(&mut self, index: usize, entry: &[u8]) -> Result<(), EntryError> {
        if index != 0 {
            return Err(EntryError::BadIndex);
        }
        *self = exact(entry)?;
        Ok(())
    }
}

impl<T: Bits> Element for Register<T> {
    fn kind(&self) -> ElementKind {
        ElementKind::Register
    }
    fn size(&self) -> usize {
        1
    }
    fn value(&self) -> Shape {
        Shape::of::<T>()
    }
    fn read(&self, index: usize) -> Option<Vec<u8>> {
        (index == 0).then(|| be(&self.get()))
    }
    fn write(&mut self, index: usize, entry: &[u8]) -> Result<(), EntryError> {
        if index != 0 {
            return Err(EntryError::BadIndex);
        }
        self.set(exact(entry)?);
        Ok(())
    }
}

/// A counter's entry is 8 bytes whatever its width; a value past [`Counter::MAX`] is refused.
impl<const BITS: u32> Element for Counter<BITS> {
    fn kind(&self) -> ElementKind {
        ElementKind::Counter
    }
    fn size(&self) -> usize {
        1
    }
    fn value(&self) -> Shape {
        Shape { width: BITS as usize, shown: Shown::Uint }
    }
    fn read(&self, index: usize) -> Option<Vec<u8>> {
        (index == 0).then(|| self.get().to_be_bytes().to_vec())
    }
    fn write(&mut self, index: usize, entry: &[u8]) -> Result<(), EntryError> {
        if index != 0 {
            return Err(EntryError::BadIndex);
        }
        let v = u64::from_be_bytes(entry.try_into().map_err(|_| EntryError::BadValue)?);
        if v > Self::MAX {
            return Err(EntryError::BadValue);
        }
        self.set(v);
        Ok(())
    }
    fn reset(&mut self) -> bool {
        Counter::reset(self);
        true
    }
}

impl<T: Bits, const N: usize> Element for Array<T, N> {
    fn kind(&self) -> ElementKind {
        ElementKind::Array
    }
    fn size(&self) -> usize {
        N
    }
    fn value(&self) -> Shape {
        Shape::of::<T>()
    }
    fn read(&self, index: usize) -> Option<Vec<u8>> {
        (index < N).then(|| be(&self.get(index)))
    }
    fn write(&mut self, index: usize, entry: &[u8]) -> Result<(), EntryError> {
        if index >= N {
            return Err(EntryError::BadIndex);
        }
        self.set(index, exact(entry)?);
        Ok(())
    }
}

/// Entry `i` is the `i`-th element from the head; places past the length read as zeros.
impl<T: Bits, const N: usize> Element for Queue<T, N> {
    fn kind(&self) -> ElementKind {
        ElementKind::Queue
    }
    fn size(&self) -> usize {
        N
    }
    fn value(&self) -> Shape {
        Shape::of::<T>()
    }
    fn read(&self, index: usize) -> Option<Vec<u8>> {
        (index < N).then(|| be(&self.iter().nth(index).unwrap_or_default()))
    }
    fn write(&mut self, _index: usize, _entry: &[u8]) -> Result<(), EntryError> {
        Err(EntryError::ReadOnly)
    }
    fn unshown_state(&self) -> bool {
        !self.is_empty()
    }
}

/// An entry is `valid`, the rule's value and mask (each a key), and its result.
impl<K: Bits, V: Bits, const N: usize> Element for Tcam<K, V, N> {
    fn kind(&self) -> ElementKind {
        ElementKind::Tcam
    }
    fn size(&self) -> usize {
        N
    }
    fn key(&self) -> Option<Shape> {
        Some(Shape::of::<K>())
    }
    fn value(&self) -> Shape {
        Shape::of::<V>()
    }
    fn read(&self, index: usize) -> Option<Vec<u8>> {
        if index >= N {
            return None;
        }
        let e = self.entry(index);
        let mut out = vec![e.is_some() as u8];
        let (value, mask, result) = e.unwrap_or_default();
        out.extend(be(&value));
        out.extend(be(&mask));
        out.extend(be(&result));
        Some(out)
    }
    fn write(&mut self, index: usize, entry: &[u8]) -> Result<(), EntryError> {
        if index >= N {
            return Err(EntryError::BadIndex);
        }
        if entry.len() != 1 + 2 * K::BYTES + V::BYTES {
            return Err(EntryError::BadValue);
        }
        let (k, rest) = entry[1..].split_at(K::BYTES);
        let (m, r) = rest.split_at(K::BYTES);
        match entry[0] {
            0 => self.clear(index),
            1 => {
                self.set(index, exact(k)?, exact(m)?, exact(r)?);
            }
            _ => return Err(EntryError::BadValue),
        }
        Ok(())
    }
    fn find(&self, key: &[u8]) -> Option<usize> {
        self.lookup_slot(exact(key).ok()?)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::{Cam, HashTable, Ipv4Addr, Lru, Mac};

    fn mac(k: u8) -> Mac {
        Mac::from_bytes([2, 0, 0, 0, 0, k])
    }

    #[test]
    fn values_and_counters_read_and_write_exact_bytes() {
        let mut ip = Ipv4Addr::new(10, 0, 0, 1);
        assert_eq!(
            (ip.kind(), ip.value().shown, ip.read(0)),
            (ElementKind::Register, Shown::Ipv4, Some(vec![10, 0, 0, 1]))
        );
        ip.write(0, &[10, 0, 0, 2]).unwrap();
        assert_eq!(ip, Ipv4Addr::new(10, 0, 0, 2));
        assert_eq!(ip.write(0, &[1, 2, 3]), Err(EntryError::BadValue));
        assert_eq!(ip.write(1, &[1, 2, 3, 4]), Err(EntryError::BadIndex));
        let mut c: Counter<8> = Counter::new();
        c.write(0, &200u64.to_be_bytes()).unwrap();
        assert_eq!(c.get(), 200);
        assert_eq!(c.write(0, &256u64.to_be_bytes()), Err(EntryError::BadValue), "past an 8-bit counter");
        assert!(Element::reset(&mut c));
        assert_eq!(c.get(), 0);
        let mut r: Register<arbitrary_int::u13> = Register::default();
        assert_eq!(r.write(0, &[0x20, 0]), Err(EntryError::BadValue), "bit 13 of a u13");
        r.write(0, &[0x1f, 0xff]).unwrap();
        assert_eq!(r.get().value(), 0x1fff);
    }

    #[test]
    fn table_writes_keep_the_tables_sound() {
        let mut cam: Cam<Mac, u8, 4> = Cam::new();
        cam.insert(mac(1), 7);
        let entry = |k: u8, v: u8| [&[1][..], &mac(k).0.value().to_be_bytes()[2..], &[v]].concat();
        assert_eq!(cam.read(0), Some(entry(1, 7)));
        assert_eq!(cam.write(2, &entry(1, 9)), Err(EntryError::KeyElsewhere), "mac 1 is in slot 0");
        cam.write(2, &entry(5, 9)).unwrap();
        assert_eq!((cam.get(mac(5)), cam.len(), cam.find(&entry(5, 0)[1..7])), (Some(9), 2, Some(2)));
        cam.write(0, &[0; 8]).unwrap();
        assert_eq!((cam.get(mac(1)), cam.len()), (None, 1));

        let mut lru: Lru<Mac, u8, 3> = Lru::new();
        lru.insert(mac(1), 1);
        lru.insert(mac(2), 2);
        lru.write(2, &entry(3, 3)).unwrap();
        assert_eq!(
            lru.keys_by_recency().collect::<Vec<_>>(),
            [mac(3), mac(2), mac(1)],
            "a written entry is the most recent"
        );
        lru.write(1, &[0; 8]).unwrap();
        assert_eq!(lru.keys_by_recency().collect::<Vec<_>>(), [mac(3), mac(1)]);
        lru.insert(mac(4), 4);
        lru.insert(mac(5), 5);
        assert_eq!(lru.get(mac(1)), None, "the ages stayed a ranking: the oldest went");

        let mut t: HashTable<u32, u16, 16, 4> = HashTable::new();
        let set = t.set_of(77);
        let e = [&[1][..], &77u32.to_be_bytes(), &[0, 5]].concat();
        assert_eq!(t.write(((set + 1) % 4) * 4, &e), Err(EntryError::WrongSet), "77 hashes to another set");
        t.write(set * 4 + 3, &e).unwrap();
        assert_eq!((t.get(77), t.len(), t.find(&77u32.to_be_bytes())), (Some(5), 1, Some(set * 4 + 3)));
        t.write(set * 4 + 3, &[0; 7]).unwrap();
        assert_eq!((t.get(77), t.len()), (None, 0));
    }

    #[test]
    fn tcam_and_queue_entries() {
        let mut t: Tcam<u16, bool, 4> = Tcam::new();
        t.write(1, &[1, 0x00, 0x50, 0xff, 0xff, 1]).unwrap();
        assert_eq!(
            (t.lookup(80), t.find(&[0, 80]), t.read(1).unwrap()),
            (Some(true), Some(1), vec![1, 0, 0x50, 0xff, 0xff, 1])
        );
        assert_eq!(t.write(1, &[1, 0, 0x50, 0xff, 0xff, 2]), Err(EntryError::BadValue), "a bool is 0 or 1");
        let mut q: Queue<u16, 4> = Queue::new();
        q.push(7).unwrap();
        q.push(8).unwrap();
        assert_eq!((q.read(1), q.read(3), q.read(4)), (Some(vec![0, 8]), Some(vec![0, 0]), None));
        assert_eq!(q.write(0, &[0, 1]), Err(EntryError::ReadOnly));
    }
}

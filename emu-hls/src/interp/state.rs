//! The state elements of a function, held in `emu_core::state`'s CPU implementations, so the
//! interpreter's state semantics are the CPU's by construction.
//!
//! Keys and values are [`BitVec`]s (which implement `emu_core::Bits` for storage). The
//! elements' sizes are const generics on the CPU side; the sizes the IR asks for are mapped
//! onto them at run time for the common shapes — counters of 1 to 64 bits; CAMs of 1 to 64,
//! 128 or 256 slots; arrays of 1 to 64 elements or a power of two up to 2<sup>20</sup> — and any
//! other size uses a faithful model of the same documented semantics ([`ModelCam`],
//! [`ModelArray`]), tested against the CPU implementation.

use crate::ir::{BitVec, Function, StateId, StateKind};
use core::fmt;
use emu_core::state::{Array, Cam, Counter, Register};

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
}

macro_rules! by_const {
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
    by_const!(
        bits,
        Box::new(Counter::<64>::new()),
        mk,
        [
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
            30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56,
            57, 58, 59, 60, 61, 62, 63, 64
        ]
    )
}

fn new_cam(size: u32) -> Box<dyn CamImpl + Send> {
    macro_rules! mk {
        ($k:literal) => {
            Box::new(Cam::<BitVec, BitVec, $k>::new())
        };
    }
    by_const!(
        size,
        Box::new(ModelCam::new(size as usize)),
        mk,
        [
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
            30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56,
            57, 58, 59, 60, 61, 62, 63, 64, 128, 256
        ]
    )
}

fn new_array(size: u32) -> Box<dyn ArrayImpl + Send> {
    macro_rules! mk {
        ($k:literal) => {
            Box::new(Array::<BitVec, $k>::new())
        };
    }
    by_const!(
        size,
        Box::new(ModelArray::new(size as usize)),
        mk,
        [
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
            30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56,
            57, 58, 59, 60, 61, 62, 63, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144,
            524288, 1048576
        ]
    )
}

/// The state of one function's elements, in declaration order, in their initial contents
/// (all zero / empty) until packets change them.
#[derive(Debug)]
pub struct State {
    elems: Vec<(String, StateKind, Element)>,
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
                };
                (d.name.clone(), d.kind.clone(), e)
            })
            .collect();
        State { elems }
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
        let s = State::new(&f);
        assert!(format!("{s:?}").contains("ModelCam"));
        assert!(format!("{s:?}").contains("Counter"));
    }
}

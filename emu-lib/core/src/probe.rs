//! Probes: program points an NF marks for the debugger. `emu::probe!(name, value)` keeps the
//! last value given at that point, `emu::count!(name)` counts how often the point was passed.
//! Each is a symbol of its own (docs/debug-protocol.md: kind `probe`, or `counter` for a
//! count), after the state struct's fields, in the order they first appear in `process` and
//! the functions it calls.
//!
//! ```text
//! fn process(&mut self, pkt: &mut Packet, _meta: &Meta) -> Action {
//!     if !pkt.is_ethernet_ipv4() {
//!         emu::count!(not_ipv4);
//!         return Action::Drop(DropReason::NotIpv4);
//!     }
//!     emu::probe!(last_ttl, pkt.ipv4().ttl());
//!     Action::Flood
//! }
//! ```
//!
//! (A complete example, checked, is in the `emu_macros` crate's documentation.)
//!
//! # Where the values live
//!
//! On the CPU, `#[emu::nf]` gives the module one [`Probes`] table per thread (a
//! `thread_local!`): an NF runs on one thread, and its debugger reads the table from that
//! thread, so the runner pays no lock. Two instances of one NF on the same thread share it.
//! In hardware each probe is a register and each count a 64-bit counter beside the state
//! elements (`symbols.json` lists them under `probes`).
//!
//! Outside an `#[emu::nf]` module the macros are a compile error: the attribute is what
//! numbers the probes and gives them their types.

use crate::bits::Bits;
use crate::state::Shape;
use std::cell::RefCell;

/// What a probe keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeKind {
    /// `emu::probe!(name, value)`: the last value.
    Value,
    /// `emu::count!(name)`: a 64-bit count of passes.
    Count,
}

/// One probe, as `#[emu::nf]` declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeDecl {
    /// The name given to the macro.
    pub name: &'static str,
    /// A value or a count.
    pub kind: ProbeKind,
    /// The value's width and notation (a count: 64 bits, decimal).
    pub shape: Shape,
}

/// The current values of a module's probes.
#[derive(Debug)]
pub struct Probes {
    decls: &'static [ProbeDecl],
    /// Where each probe's big-endian bytes start in `bytes`.
    offsets: Vec<usize>,
    bytes: RefCell<Vec<u8>>,
}

fn len(d: &ProbeDecl) -> usize {
    d.shape.width.div_ceil(8)
}

impl Probes {
    /// A table of `decls`, every value 0.
    pub fn new(decls: &'static [ProbeDecl]) -> Probes {
        let mut offsets = Vec::with_capacity(decls.len());
        let mut end = 0;
        for d in decls {
            offsets.push(end);
            end += len(d);
        }
        Probes { decls, offsets, bytes: RefCell::new(vec![0; end]) }
    }

    /// The probes, in symbol order.
    pub fn decls(&self) -> &'static [ProbeDecl] {
        self.decls
    }

    /// `emu::probe!`: probe `i` now holds `value`.
    #[inline]
    pub fn record<T: Bits>(&self, i: usize, value: T) {
        let at = self.offsets[i];
        debug_assert_eq!(T::BYTES, len(&self.decls[i]), "probe `{}`'s type", self.decls[i].name);
        value.write_be(&mut self.bytes.borrow_mut()[at..at + T::BYTES]);
    }

    /// `emu::count!`: count `i` goes up by one (wrapping).
    #[inline]
    pub fn count(&self, i: usize) {
        let at = self.offsets[i];
        let mut b = self.bytes.borrow_mut();
        let slot: &mut [u8; 8] = (&mut b[at..at + 8]).try_into().expect("a count is 8 bytes");
        *slot = u64::from_be_bytes(*slot).wrapping_add(1).to_be_bytes();
    }

    /// Probe `i`'s value, big-endian (`ceil(width / 8)` bytes).
    pub fn read(&self, i: usize) -> Vec<u8> {
        let at = self.offsets[i];
        self.bytes.borrow()[at..at + len(&self.decls[i])].to_vec()
    }

    /// Sets count `i` (a debugger's write); `false` for a value probe, which only the NF
    /// writes, or bytes of the wrong length.
    pub fn write_count(&self, i: usize, value: &[u8]) -> bool {
        if self.decls[i].kind != ProbeKind::Count || value.len() != 8 {
            return false;
        }
        let at = self.offsets[i];
        self.bytes.borrow_mut()[at..at + 8].copy_from_slice(value);
        true
    }
}

/// `emu::probe!(name, value)`: inside an `#[emu::nf]` module the attribute replaces it with a
/// write to the probe's slot; anywhere else it is this error.
#[macro_export]
macro_rules! probe {
    ($($t:tt)*) => {
        ::core::compile_error!(
            "`emu::probe!` works inside an `#[emu::nf]` module (in `process` or a function it calls): the attribute \
             gives each probe its number and type"
        )
    };
}

/// `emu::count!(name)`: inside an `#[emu::nf]` module the attribute replaces it with an
/// increment of the count; anywhere else it is this error.
#[macro_export]
macro_rules! count {
    ($($t:tt)*) => {
        ::core::compile_error!(
            "`emu::count!` works inside an `#[emu::nf]` module (in `process` or a function it calls): the attribute \
             gives each count its number"
        )
    };
}

//! Fixed-width values: the one trait every header field and every state element's key and
//! value implements.
//!
//! The width a Rust type carries is the width the hardware gets: a `u48` MAC address is 48
//! wires, a `u4` IHL is 4. Arbitrary widths come from the [`arbitrary_int`] crate (`u1` …
//! `u127`), re-exported here and in the prelude.

use arbitrary_int::UInt;

/// A value of a fixed number of bits.
///
/// The big-endian byte form ([`Bits::write_be`], [`Bits::read_be`]) is what hashes, keys and
/// the debug channel see; it is `ceil(WIDTH / 8)` bytes long with the value right-aligned.
pub trait Bits: Copy + Default + PartialEq + Eq {
    /// Width in bits.
    const WIDTH: usize;
    /// Length of the big-endian byte form.
    const BYTES: usize = (Self::WIDTH + 7) / 8;
    /// Writes the value big-endian into `out[..Self::BYTES]`.
    fn write_be(&self, out: &mut [u8]);
    /// Reads a value from `bytes[..Self::BYTES]`; bits above `WIDTH` are ignored.
    fn read_be(bytes: &[u8]) -> Self;
    /// How a debugger shows the value: the type's usual notation.
    const SHOWN: crate::state::Shown = crate::state::Shown::Uint;
}

/// A [`Bits`] value of at most 64 bits, which header fields are made of.
pub trait Scalar: Bits {
    /// The value, zero-extended.
    fn to_u64(self) -> u64;
    /// The low `WIDTH` bits of `v`; the rest are dropped.
    fn from_u64_masked(v: u64) -> Self;
}

macro_rules! impl_native {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            const WIDTH: usize = <$t>::BITS as usize;
            #[inline]
            fn write_be(&self, out: &mut [u8]) {
                out[..Self::BYTES].copy_from_slice(&self.to_be_bytes());
            }
            #[inline]
            fn read_be(bytes: &[u8]) -> Self {
                let mut b = [0u8; Self::BYTES];
                b.copy_from_slice(&bytes[..Self::BYTES]);
                <$t>::from_be_bytes(b)
            }
        }
    )*};
}
impl_native!(u8, u16, u32, u64, u128);

macro_rules! impl_scalar_native {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            #[inline]
            fn to_u64(self) -> u64 { self as u64 }
            #[inline]
            fn from_u64_masked(v: u64) -> Self { v as $t }
        }
    )*};
}
impl_scalar_native!(u8, u16, u32, u64);

impl Bits for bool {
    const WIDTH: usize = 1;
    const SHOWN: crate::state::Shown = crate::state::Shown::Bool;
    fn write_be(&self, out: &mut [u8]) {
        out[0] = *self as u8;
    }
    fn read_be(bytes: &[u8]) -> Self {
        bytes[0] & 1 == 1
    }
}

impl Scalar for bool {
    #[inline]
    fn to_u64(self) -> u64 {
        self as u64
    }
    #[inline]
    fn from_u64_masked(v: u64) -> Self {
        v & 1 == 1
    }
}

/// Reads `n` big-endian bytes (n ≤ 16) into the low bits of a `u128`.
fn read_u128(bytes: &[u8], n: usize) -> u128 {
    bytes[..n].iter().fold(0u128, |acc, &b| (acc << 8) | b as u128)
}

macro_rules! impl_uint {
    ($($t:ty),*) => {$(
        impl<const N: usize> Bits for UInt<$t, N> {
            const WIDTH: usize = N;
            fn write_be(&self, out: &mut [u8]) {
                let v = self.value() as u128;
                for i in 0..Self::BYTES {
                    out[i] = (v >> (8 * (Self::BYTES - 1 - i))) as u8;
                }
            }
            fn read_be(bytes: &[u8]) -> Self {
                Self::extract_u128(read_u128(bytes, Self::BYTES), 0)
            }
        }
    )*};
}
impl_uint!(u8, u16, u32, u64, u128);

macro_rules! impl_scalar_uint {
    ($($t:ty),*) => {$(
        impl<const N: usize> Scalar for UInt<$t, N> {
            #[inline]
            fn to_u64(self) -> u64 { self.value() as u64 }
            #[inline]
            fn from_u64_masked(v: u64) -> Self { Self::extract_u64(v, 0) }
        }
    )*};
}
impl_scalar_uint!(u8, u16, u32, u64);

/// A byte string of fixed length `N` (a memcached key, a DNS name): a value of `8 × N` bits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Bytes<const N: usize>(pub [u8; N]);

impl<const N: usize> Default for Bytes<N> {
    fn default() -> Self {
        Bytes([0; N])
    }
}

impl<const N: usize> Bytes<N> {
    /// Byte `i`, 0 past the end (as [`Packet::byte`](crate::Packet::byte): never panics).
    pub fn byte(&self, i: usize) -> u8 {
        self.0.get(i).copied().unwrap_or(0)
    }

    /// Sets byte `i`; dropped past the end (as [`Packet::set_byte`](crate::Packet::set_byte)).
    pub fn set_byte(&mut self, i: usize, v: u8) {
        if let Some(b) = self.0.get_mut(i) {
            *b = v;
        }
    }
}

impl<const N: usize> Bits for Bytes<N> {
    const WIDTH: usize = 8 * N;
    const SHOWN: crate::state::Shown = crate::state::Shown::Hex;
    fn write_be(&self, out: &mut [u8]) {
        out[..N].copy_from_slice(&self.0);
    }
    fn read_be(bytes: &[u8]) -> Self {
        let mut a = [0u8; N];
        a.copy_from_slice(&bytes[..N]);
        Bytes(a)
    }
}

/// Reads the big-endian bit field `[bit_offset, bit_offset + width)` of `buf`, `width ≤ 64`.
///
/// Bytes past the end of `buf` read as 0, so a view over a short buffer never panics: this is
/// the rule "reads past the packet's end return 0" of the programming model.
#[inline(always)]
pub fn read_field(buf: &[u8], bit_offset: usize, width: usize) -> u64 {
    debug_assert!(width >= 1 && width <= 64);
    let first = bit_offset / 8;
    let last = (bit_offset + width - 1) / 8;
    let n = last - first + 1; // ≤ 9 bytes
    let tail = n * 8 - (bit_offset % 8) - width;
    // Offsets and widths are constants at every call site, so this is a fixed-size load, a
    // byte swap, a shift and a mask.
    let raw = match buf.get(first..=last) {
        Some(bytes) => {
            let mut b = [0u8; 16];
            b[16 - n..].copy_from_slice(bytes);
            u128::from_be_bytes(b)
        }
        None => (first..=last).fold(0u128, |acc, i| (acc << 8) | buf.get(i).copied().unwrap_or(0) as u128),
    };
    ((raw >> tail) & mask(width)) as u64
}

/// Writes `value` into the big-endian bit field `[bit_offset, bit_offset + width)` of `buf`.
///
/// Bits of the value above `width` are dropped; bytes past the end of `buf` are not written.
#[inline(always)]
pub fn write_field(buf: &mut [u8], bit_offset: usize, width: usize, value: u64) {
    debug_assert!(width >= 1 && width <= 64);
    let first = bit_offset / 8;
    let last = (bit_offset + width - 1) / 8;
    let tail = (last + 1) * 8 - (bit_offset + width);
    let field_mask = mask(width) << tail;
    let bits = ((value as u128) << tail) & field_mask;
    let n = last - first + 1;
    for k in 0..n {
        let i = first + k;
        let shift = 8 * (n - 1 - k);
        if let Some(b) = buf.get_mut(i) {
            let m = (field_mask >> shift) as u8;
            *b = (*b & !m) | ((bits >> shift) as u8 & m);
        }
    }
}

#[inline(always)]
fn mask(width: usize) -> u128 {
    (1u128 << width) - 1
}

/// Copies the low `width` bits of the big-endian `src` into the big-endian `out`, at bit
/// `at` counted from `out`'s least significant bit.
fn put_bits(out: &mut [u8], src: &[u8], width: usize, at: usize) {
    let (n, m) = (out.len(), src.len());
    if at.is_multiple_of(8) && width.is_multiple_of(8) {
        let (k, b) = (width / 8, at / 8);
        out[n - b - k..n - b].copy_from_slice(&src[m - k..]);
        return;
    }
    for i in 0..width {
        let bit = (src[m - 1 - i / 8] >> (i % 8)) & 1;
        let j = at + i;
        out[n - 1 - j / 8] |= bit << (j % 8);
    }
}

/// The low `width` bits of the big-endian `src`, at bit `at` from its least significant bit,
/// into the big-endian `out` (zeroed first).
fn get_bits(src: &[u8], width: usize, at: usize, out: &mut [u8]) {
    out.fill(0);
    let (n, m) = (src.len(), out.len());
    for i in 0..width {
        let j = at + i;
        let bit = (src[n - 1 - j / 8] >> (j % 8)) & 1;
        out[m - 1 - i / 8] |= bit << (i % 8);
    }
}

/// `f` on `n` zeroed bytes: on the stack for the usual widths (keys are per-packet work on
/// the CPU), on the heap beyond.
fn with_scratch<R>(n: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    let mut stack = [0u8; 32];
    if n <= stack.len() {
        f(&mut stack[..n])
    } else {
        f(&mut vec![0u8; n])
    }
}

/// A tuple of values is the concatenation of their bits, the first element the most
/// significant, as the hardware holds it (a 5-tuple key is one 104-bit value).
macro_rules! impl_tuple {
    ($(($($t:ident $v:ident),+)),*) => {$(
        impl<$($t: Bits),+> Bits for ($($t,)+) {
            const WIDTH: usize = 0 $(+ $t::WIDTH)+;
            fn write_be(&self, out: &mut [u8]) {
                let out = &mut out[..Self::BYTES];
                out.fill(0);
                let ($($v,)+) = self;
                let mut at = Self::WIDTH;
                $(
                    at -= $t::WIDTH;
                    with_scratch($t::BYTES, |tmp| {
                        $v.write_be(tmp);
                        put_bits(out, tmp, $t::WIDTH, at);
                    });
                )+
            }
            fn read_be(bytes: &[u8]) -> Self {
                let src = &bytes[..Self::BYTES];
                let mut at = Self::WIDTH;
                ($({
                    at -= $t::WIDTH;
                    with_scratch($t::BYTES, |tmp| {
                        get_bits(src, $t::WIDTH, at, tmp);
                        $t::read_be(tmp)
                    })
                },)+)
            }
        }
    )*};
}
impl_tuple!((A a, B b), (A a, B b, C c), (A a, B b, C c, D d), (A a, B b, C c, D d, E e));

#[cfg(test)]
mod test {
    use super::*;
    use arbitrary_int::{u13, u4, u48};

    #[test]
    fn fields_read_big_endian_bits() {
        let buf = [0x45, 0x00, 0x40, 0x01];
        assert_eq!(read_field(&buf, 0, 4), 4);
        assert_eq!(read_field(&buf, 4, 4), 5);
        assert_eq!(read_field(&buf, 19, 13), 0x0001);
        assert_eq!(read_field(&buf, 17, 1), 1);
        assert_eq!(read_field(&buf, 0, 32), 0x4500_4001);
    }

    #[test]
    fn reads_past_end_are_zero() {
        let buf = [0xff];
        assert_eq!(read_field(&buf, 0, 16), 0xff00);
        assert_eq!(read_field(&buf, 64, 48), 0);
        assert_eq!(read_field(&[], 0, 8), 0);
    }

    #[test]
    fn writes_touch_only_the_field() {
        let mut buf = [0xffu8; 4];
        write_field(&mut buf, 19, 13, 0);
        assert_eq!(buf, [0xff, 0xff, 0xe0, 0x00]);
        write_field(&mut buf, 4, 4, 0x1f); // high bit dropped
        assert_eq!(buf, [0xff, 0xff, 0xe0, 0x00]);
        write_field(&mut buf, 4, 4, 0x0);
        assert_eq!(buf, [0xf0, 0xff, 0xe0, 0x00]);
        let mut short = [0u8; 1];
        write_field(&mut short, 0, 16, 0xabcd);
        assert_eq!(short, [0xab]);
    }

    #[test]
    fn byte_forms_round_trip() {
        let mut out = [0u8; 6];
        u48::new(0x0102_0304_0506).write_be(&mut out);
        assert_eq!(out, [1, 2, 3, 4, 5, 6]);
        assert_eq!(u48::read_be(&out), u48::new(0x0102_0304_0506));
        assert_eq!(<u13 as Bits>::BYTES, 2);
        assert_eq!(u13::read_be(&[0xff, 0xff]), u13::new(0x1fff));
        assert_eq!(u4::from_u64_masked(0x35), u4::new(5));
        assert_eq!(<Bytes<32> as Bits>::WIDTH, 256);
    }

    #[test]
    fn a_tuple_is_its_elements_bits_concatenated() {
        use arbitrary_int::u4;
        let t = (0xabu8, u4::new(0x5), 0x1234u16);
        assert_eq!(<(u8, u4, u16)>::WIDTH, 28);
        let mut out = [0u8; 4];
        t.write_be(&mut out);
        assert_eq!(out, [0x0a, 0xb5, 0x12, 0x34]);
        assert_eq!(<(u8, u4, u16)>::read_be(&out), t);
        let five = (crate::Ipv4Addr(0x0a00_0001), crate::Ipv4Addr(0x0a00_0002), 80u16, 443u16, 6u8);
        let mut b = [0u8; 13];
        five.write_be(&mut b);
        assert_eq!(b, [10, 0, 0, 1, 10, 0, 0, 2, 0, 80, 1, 187, 6]);
        assert_eq!(<(crate::Ipv4Addr, crate::Ipv4Addr, u16, u16, u8)>::read_be(&b), five);
    }
}

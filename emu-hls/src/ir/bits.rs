//! [`BitVec`]: an unsigned fixed-width value of 1 to [`MAX_WIDTH`] bits, for constants and
//! the interpreter.
//!
//! Every operation is modulo 2<sup>width</sup>, as a hardware datapath of that width computes
//! it; bits above the width are always zero (the invariant every constructor and operation
//! keeps). Signed operations read the value as two's complement of its width.

use core::cmp::Ordering;
use core::fmt;

/// The widest value the IR handles: a 256-bit memcached key, a 32-byte window read.
pub const MAX_WIDTH: u16 = 256;

const WORDS: usize = MAX_WIDTH as usize / 64;

/// An unsigned value of `width` bits (1 ≤ `width` ≤ [`MAX_WIDTH`]), stored as four
/// little-endian 64-bit words whose bits above `width` are zero.
///
/// Equality compares the width too: `1:u8` and `1:u16` differ.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct BitVec {
    width: u16,
    words: [u64; WORDS],
}

impl Default for BitVec {
    /// Zero of width 1 (what a state element's empty slot holds; the interpreter re-widths it).
    fn default() -> Self {
        BitVec::zero(1)
    }
}

fn check_width(width: u16) {
    assert!((1..=MAX_WIDTH).contains(&width), "bit-vector width {width} is outside 1..={MAX_WIDTH}");
}

impl BitVec {
    /// Zero of `width` bits. Panics when `width` is not in `1..=MAX_WIDTH` (as every
    /// constructor does).
    pub fn zero(width: u16) -> BitVec {
        check_width(width);
        BitVec { width, words: [0; WORDS] }
    }

    /// All ones in `width` bits.
    pub fn ones(width: u16) -> BitVec {
        BitVec { width, words: [u64::MAX; WORDS] }.masked_checked()
    }

    /// The low `width` bits of `v`.
    pub fn new(width: u16, v: u64) -> BitVec {
        let mut words = [0; WORDS];
        words[0] = v;
        BitVec { width, words }.masked_checked()
    }

    /// The low `width` bits of `v`.
    pub fn from_u128(width: u16, v: u128) -> BitVec {
        let mut words = [0; WORDS];
        words[0] = v as u64;
        words[1] = (v >> 64) as u64;
        BitVec { width, words }.masked_checked()
    }

    /// The low `width` bits of the little-endian words `words` (word 0 least significant).
    pub fn from_words(width: u16, words: [u64; 4]) -> BitVec {
        BitVec { width, words }.masked_checked()
    }

    /// 1 or 0 of width 1.
    pub fn from_bool(b: bool) -> BitVec {
        BitVec::new(1, b as u64)
    }

    /// The value of big-endian `bytes` (1 to 32 of them), `8 × bytes.len()` bits wide.
    pub fn from_be_bytes(bytes: &[u8]) -> BitVec {
        let width = u16::try_from(bytes.len() * 8).unwrap_or(u16::MAX);
        let mut v = BitVec::zero(width);
        for (i, b) in bytes.iter().rev().enumerate() {
            v.words[i / 8] |= (*b as u64) << (8 * (i % 8));
        }
        v
    }

    /// The value as `ceil(width / 8)` big-endian bytes, right-aligned.
    pub fn to_be_bytes(&self) -> Vec<u8> {
        let n = (self.width as usize + 7) / 8;
        (0..n).rev().map(|i| (self.words[i / 8] >> (8 * (i % 8))) as u8).collect()
    }

    fn masked_checked(mut self) -> BitVec {
        check_width(self.width);
        self.mask();
        self
    }

    fn mask(&mut self) {
        let w = self.width as usize;
        for (i, word) in self.words.iter_mut().enumerate() {
            let lo = i * 64;
            if w <= lo {
                *word = 0;
            } else if w < lo + 64 {
                *word &= (1u64 << (w - lo)) - 1;
            }
        }
    }

    fn with_words(&self, words: [u64; WORDS]) -> BitVec {
        let mut v = BitVec { width: self.width, words };
        v.mask();
        v
    }

    /// Width in bits.
    pub fn width(&self) -> u16 {
        self.width
    }

    /// The four little-endian words.
    pub fn words(&self) -> [u64; 4] {
        self.words
    }

    /// The low 64 bits.
    pub fn to_u64(&self) -> u64 {
        self.words[0]
    }

    /// The low 128 bits.
    pub fn to_u128(&self) -> u128 {
        self.words[0] as u128 | (self.words[1] as u128) << 64
    }

    /// The value as a `u64`, or `u64::MAX` when it does not fit (an offset that far is past
    /// every packet, which is what its users need).
    pub fn to_u64_saturating(&self) -> u64 {
        if self.words[1..].iter().any(|w| *w != 0) {
            u64::MAX
        } else {
            self.words[0]
        }
    }

    /// The value as a `usize`, saturating.
    pub fn to_usize_saturating(&self) -> usize {
        usize::try_from(self.to_u64_saturating()).unwrap_or(usize::MAX)
    }

    /// True for zero.
    pub fn is_zero(&self) -> bool {
        self.words.iter().all(|w| *w == 0)
    }

    /// True for all ones.
    pub fn is_ones(&self) -> bool {
        *self == BitVec::ones(self.width)
    }

    /// Bit `i` (0 is the least significant); false past the width.
    pub fn bit(&self, i: u16) -> bool {
        i < self.width && (self.words[i as usize / 64] >> (i % 64)) & 1 == 1
    }

    /// The most significant bit: the sign in two's complement.
    pub fn msb(&self) -> bool {
        self.bit(self.width - 1)
    }

    // ---- bitwise ----

    /// Bitwise complement.
    pub fn not(&self) -> BitVec {
        self.with_words(self.words.map(|w| !w))
    }

    /// Bitwise and; both operands must have the same width (as for every binary operation).
    pub fn and(&self, o: &BitVec) -> BitVec {
        self.zip(o, |a, b| a & b)
    }

    /// Bitwise or.
    pub fn or(&self, o: &BitVec) -> BitVec {
        self.zip(o, |a, b| a | b)
    }

    /// Bitwise exclusive or.
    pub fn xor(&self, o: &BitVec) -> BitVec {
        self.zip(o, |a, b| a ^ b)
    }

    fn zip(&self, o: &BitVec, f: impl Fn(u64, u64) -> u64) -> BitVec {
        debug_assert_eq!(self.width, o.width);
        let mut w = [0; WORDS];
        for i in 0..WORDS {
            w[i] = f(self.words[i], o.words[i]);
        }
        self.with_words(w)
    }

    // ---- arithmetic ----

    /// Sum modulo 2<sup>width</sup>.
    pub fn add(&self, o: &BitVec) -> BitVec {
        debug_assert_eq!(self.width, o.width);
        let mut w = [0; WORDS];
        let mut carry = false;
        for i in 0..WORDS {
            let (s1, c1) = self.words[i].overflowing_add(o.words[i]);
            let (s2, c2) = s1.overflowing_add(carry as u64);
            w[i] = s2;
            carry = c1 || c2;
        }
        self.with_words(w)
    }

    /// Difference modulo 2<sup>width</sup>.
    pub fn sub(&self, o: &BitVec) -> BitVec {
        self.add(&o.neg())
    }

    /// Two's-complement negation: 2<sup>width</sup> − value, modulo 2<sup>width</sup>.
    pub fn neg(&self) -> BitVec {
        self.not().add(&BitVec::new(self.width, 1))
    }

    /// Product modulo 2<sup>width</sup>.
    pub fn mul(&self, o: &BitVec) -> BitVec {
        debug_assert_eq!(self.width, o.width);
        let mut w = [0u64; WORDS];
        for i in 0..WORDS {
            let mut carry: u128 = 0;
            for j in 0..WORDS - i {
                let t = self.words[i] as u128 * o.words[j] as u128 + w[i + j] as u128 + carry;
                w[i + j] = t as u64;
                carry = t >> 64;
            }
        }
        self.with_words(w)
    }

    // ---- shifts ----

    /// Shift left by `n`, zeros in; `n ≥ width` gives 0.
    pub fn shl(&self, n: u64) -> BitVec {
        if n >= self.width as u64 {
            return BitVec::zero(self.width);
        }
        let (q, r) = ((n / 64) as usize, (n % 64) as u32);
        let mut w = [0u64; WORDS];
        for i in (q..WORDS).rev() {
            let lo = self.words[i - q];
            w[i] = lo << r;
            if r > 0 && i > q {
                w[i] |= self.words[i - q - 1] >> (64 - r);
            }
        }
        self.with_words(w)
    }

    /// Logical shift right by `n`, zeros in; `n ≥ width` gives 0.
    pub fn lshr(&self, n: u64) -> BitVec {
        if n >= self.width as u64 {
            return BitVec::zero(self.width);
        }
        let (q, r) = ((n / 64) as usize, (n % 64) as u32);
        let mut w = [0u64; WORDS];
        for i in 0..WORDS - q {
            w[i] = self.words[i + q] >> r;
            if r > 0 && i + q + 1 < WORDS {
                w[i] |= self.words[i + q + 1] << (64 - r);
            }
        }
        self.with_words(w)
    }

    /// Arithmetic shift right by `n`, copies of the sign bit in; `n ≥ width` gives all sign.
    pub fn ashr(&self, n: u64) -> BitVec {
        let shifted = self.lshr(n);
        if !self.msb() {
            return shifted;
        }
        let n = n.min(self.width as u64);
        // The top n bits become ones.
        let top = BitVec::ones(self.width).shl(self.width as u64 - n);
        shifted.or(&top)
    }

    // ---- comparisons ----

    /// Unsigned order.
    pub fn ucmp(&self, o: &BitVec) -> Ordering {
        debug_assert_eq!(self.width, o.width);
        for i in (0..WORDS).rev() {
            match self.words[i].cmp(&o.words[i]) {
                Ordering::Equal => continue,
                ord => return ord,
            }
        }
        Ordering::Equal
    }

    /// Signed (two's-complement) order.
    pub fn scmp(&self, o: &BitVec) -> Ordering {
        match (self.msb(), o.msb()) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => self.ucmp(o),
        }
    }

    // ---- width changes ----

    /// The same value in `width` bits, zeros above the old width; `width` ≥ the old width.
    pub fn zext(&self, width: u16) -> BitVec {
        debug_assert!(width >= self.width);
        BitVec::from_words(width, self.words)
    }

    /// The same signed value in `width` bits: copies of the sign bit above the old width.
    pub fn sext(&self, width: u16) -> BitVec {
        debug_assert!(width >= self.width);
        let z = self.zext(width);
        if self.msb() {
            z.or(&BitVec::ones(width).shl(self.width as u64))
        } else {
            z
        }
    }

    /// The low `width` bits; `width` ≤ the old width.
    pub fn trunc(&self, width: u16) -> BitVec {
        debug_assert!(width <= self.width);
        BitVec::from_words(width, self.words)
    }

    /// The low `width` bits, zero-extended when `width` is wider.
    pub fn resize(&self, width: u16) -> BitVec {
        BitVec::from_words(width, self.words)
    }

    /// Bits `[lo, lo + width)` as a `width`-bit value; bits past the width read 0.
    pub fn slice(&self, lo: u16, width: u16) -> BitVec {
        self.lshr(lo as u64).resize(width)
    }

    /// `hi` above `lo`: a value of `hi.width + lo.width` bits.
    pub fn concat(hi: &BitVec, lo: &BitVec) -> BitVec {
        let width = hi.width + lo.width;
        hi.zext(width).shl(lo.width as u64).or(&lo.zext(width))
    }
}

impl fmt::LowerHex for BitVec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let top = self.words.iter().rposition(|w| *w != 0).unwrap_or(0);
        if f.alternate() {
            f.write_str("0x")?;
        }
        write!(f, "{:x}", self.words[top])?;
        for i in (0..top).rev() {
            write!(f, "{:016x}", self.words[i])?;
        }
        Ok(())
    }
}

impl fmt::Display for BitVec {
    /// Decimal below 1024, hexadecimal (`0x…`) above: how the IR printer shows constants.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.to_u64_saturating() < 1024 {
            write!(f, "{}", self.words[0])
        } else {
            write!(f, "{:#x}", self)
        }
    }
}

impl fmt::Debug for BitVec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:u{}", self, self.width)
    }
}

/// Storage in the CPU state elements (`emu_core::Cam<BitVec, BitVec, N>`, `Register`, `Array`),
/// which only copy and compare their keys and values. `WIDTH` is the largest width a `BitVec`
/// takes, so the byte form is the value right-aligned in 32 bytes: an element that hashes its
/// key's byte form (`HashTable`) would hash different bytes than for the key's own type, and
/// is therefore not built on this impl.
impl emu_core::Bits for BitVec {
    const WIDTH: usize = MAX_WIDTH as usize;

    fn write_be(&self, out: &mut [u8]) {
        let b = self.to_be_bytes();
        let n = <Self as emu_core::Bits>::BYTES;
        out[..n].fill(0);
        out[n - b.len()..n].copy_from_slice(&b);
    }

    fn read_be(bytes: &[u8]) -> Self {
        BitVec::from_be_bytes(&bytes[..<Self as emu_core::Bits>::BYTES])
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    fn m(w: u16) -> u128 {
        if w >= 128 {
            u128::MAX
        } else {
            (1u128 << w) - 1
        }
    }

    fn bv(w: u16, v: u128) -> BitVec {
        BitVec::from_u128(w, v)
    }

    proptest! {
        /// Every operation agrees with u128 arithmetic masked to the width, for widths ≤ 128.
        #[test]
        fn matches_u128_reference(w in 1u16..=128, a: u128, b: u128, n in 0u64..140) {
            let (a, b) = (a & m(w), b & m(w));
            let (x, y) = (bv(w, a), bv(w, b));
            prop_assert_eq!(x.add(&y).to_u128(), a.wrapping_add(b) & m(w));
            prop_assert_eq!(x.sub(&y).to_u128(), a.wrapping_sub(b) & m(w));
            prop_assert_eq!(x.mul(&y).to_u128(), a.wrapping_mul(b) & m(w));
            prop_assert_eq!(x.neg().to_u128(), a.wrapping_neg() & m(w));
            prop_assert_eq!(x.and(&y).to_u128(), a & b);
            prop_assert_eq!(x.or(&y).to_u128(), a | b);
            prop_assert_eq!(x.xor(&y).to_u128(), a ^ b);
            prop_assert_eq!(x.not().to_u128(), !a & m(w));
            let shl = if n >= w as u64 { 0 } else { (a << n) & m(w) };
            prop_assert_eq!(x.shl(n).to_u128(), shl);
            let lshr = if n >= w as u64 { 0 } else { a >> n };
            prop_assert_eq!(x.lshr(n).to_u128(), lshr);
            // Sign-extend to 128 bits, shift, mask back.
            let s = if w < 128 && a >> (w - 1) & 1 == 1 { (a | !m(w)) as i128 } else { a as i128 };
            prop_assert_eq!(x.ashr(n).to_u128(), (s >> n.min(127)) as u128 & m(w));
            prop_assert_eq!(x.ucmp(&y), a.cmp(&b));
            let sb = if w < 128 && b >> (w - 1) & 1 == 1 { (b | !m(w)) as i128 } else { b as i128 };
            prop_assert_eq!(x.scmp(&y), s.cmp(&sb));
            if w < 128 {
                prop_assert_eq!(x.sext(128).to_u128(), s as u128);
                prop_assert_eq!(x.zext(w + 1).to_u128(), a);
            }
            let lo = (n as u16) % w;
            let sw = 1 + (n as u16 * 7) % (w - lo);
            prop_assert_eq!(x.slice(lo, sw).to_u128(), (a >> lo) & m(sw));
            prop_assert_eq!(BitVec::from_be_bytes(&x.to_be_bytes()).resize(w), x);
        }

        /// Concatenation then slicing gives the parts back, at any widths up to 256.
        #[test]
        fn concat_then_slice(wh in 1u16..=128, wl in 1u16..=128, a: u128, b: u128) {
            let (hi, lo) = (bv(wh, a), bv(wl, b));
            let c = BitVec::concat(&hi, &lo);
            prop_assert_eq!(c.width(), wh + wl);
            prop_assert_eq!(c.slice(wl, wh), hi);
            prop_assert_eq!(c.slice(0, wl), lo);
        }
    }

    #[test]
    fn wide_values() {
        let ones = BitVec::ones(256);
        assert!(ones.add(&BitVec::new(256, 1)).is_zero(), "wraps at 256 bits");
        let x = BitVec::new(256, 1).shl(255);
        assert!(x.msb());
        assert_eq!(x.lshr(255), BitVec::new(256, 1));
        assert_eq!(x.ashr(200).not(), BitVec::ones(256).lshr(201));
        assert_eq!(BitVec::new(256, 3).mul(&x), x);
        let big = BitVec::from_words(200, [u64::MAX, 2, 3, u64::MAX]);
        assert_eq!(big.words()[3], 0xff, "masked to 200 bits");
        assert_eq!(format!("{big:#x}"), "0xff00000000000000030000000000000002ffffffffffffffff");
        assert_eq!(format!("{:?}", BitVec::new(16, 0x806)), "0x806:u16");
        assert_eq!(BitVec::new(8, 64).to_string(), "64");
        let bytes: Vec<u8> = (1..=32).collect();
        assert_eq!(BitVec::from_be_bytes(&bytes).to_be_bytes(), bytes);
        assert_eq!(BitVec::new(12, 0xabc).to_be_bytes(), [0x0a, 0xbc]);
    }

    #[test]
    #[should_panic(expected = "outside 1..=256")]
    fn width_zero_is_refused() {
        BitVec::zero(0);
    }
}

//! The IR's one type family: unsigned bit vectors of a fixed width.

use super::bits::MAX_WIDTH;
use core::fmt;

/// An unsigned bit vector of `width` bits, printed `u{width}`; `u1` is the boolean type.
///
/// Valid widths are `1..=`[`MAX_WIDTH`]; the verifier rejects others. Signedness is not part
/// of the type: the operations that care (`ashr`, `sext`, `slt`, …) say so.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Type(u16);

impl Type {
    /// `u1`, the type of conditions and flags.
    pub const BOOL: Type = Type(1);

    /// `u{width}`.
    pub const fn uint(width: u16) -> Type {
        Type(width)
    }

    /// Width in bits.
    pub const fn width(self) -> u16 {
        self.0
    }

    /// True when the width is in `1..=MAX_WIDTH`.
    pub const fn is_valid(self) -> bool {
        self.0 >= 1 && self.0 <= MAX_WIDTH
    }

    /// Bytes a value of this type takes in the packet (width / 8), when the width is whole bytes.
    pub const fn bytes(self) -> Option<u16> {
        if self.0 % 8 == 0 {
            Some(self.0 / 8)
        } else {
            None
        }
    }
}

/// `u{width}`: shorthand for [`Type::uint`].
pub const fn u(width: u16) -> Type {
    Type::uint(width)
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "u{}", self.0)
    }
}

impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

//! Packet headers, declared once as tables of bit fields.
//!
//! Every header is written with [`header!`](crate::header): an ordered list of fields and their
//! types. The macro derives each field's bit offset from the widths before it and produces, in
//! the header's module,
//!
//! - `FIELDS: &[Field]`, the table of names, bit offsets and widths (the HLS compiler reads the
//!   same table, so CPU and hardware agree on every offset);
//! - `HEADER_LEN`, the fixed part's length in bytes;
//! - `Header<T: AsRef<[u8]>>`, a zero-copy view with a getter per field and, for
//!   `T: AsMut<[u8]>`, a `set_` setter per field.
//!
//! **Panic rule.** No accessor ever panics: bytes past the end of the buffer read as 0 and
//! writes to them are dropped, which is exactly the programming model's rule for reads past
//! the packet's end. `Header::new_checked` tells untrusted input that is too short apart.
//!
//! ```
//! use emu_core::wire::ipv4;
//! let bytes = [0x45, 0, 0, 20, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
//! let ip = ipv4::Header::new_checked(&bytes[..]).unwrap();
//! assert_eq!(ip.ihl().value(), 5);
//! assert!(ip.dont_frag());
//! assert_eq!(ip.dst().to_string(), "10.0.0.2");
//! assert_eq!(ipv4::HEADER_LEN, 20);
//! ```

pub mod arp;
pub mod checksum;
pub mod dns;
pub mod ethernet;
pub mod icmpv4;
pub mod ipv4;
pub mod memcached;
pub mod tcp;
pub mod udp;
pub mod vlan;

use core::fmt;

/// One field of a header: where it sits and how wide it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The field's name, as its getter is called.
    pub name: &'static str,
    /// Offset of the field's most significant bit from the start of the header, in bits.
    pub bit_offset: usize,
    /// Width in bits.
    pub width: usize,
}

/// A header's name and its field table.
#[derive(Debug, Clone, Copy)]
pub struct HeaderInfo {
    /// The header's name, e.g. `"ipv4"`.
    pub name: &'static str,
    /// Length of the fixed part in bytes.
    pub len: usize,
    /// The fields, in wire order.
    pub fields: &'static [Field],
}

/// Every header this library ships, for tools that need the whole table (the HLS compiler,
/// the differ's field-level decode).
pub const HEADERS: &[HeaderInfo] = &[
    ethernet::INFO,
    vlan::INFO,
    arp::INFO,
    ipv4::INFO,
    icmpv4::INFO,
    udp::INFO,
    tcp::INFO,
    dns::INFO,
    memcached::binary::INFO,
    memcached::udp_frame::INFO,
];

/// A buffer was too short for the header it was checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncated {
    /// The header's name.
    pub header: &'static str,
    /// Bytes the header needs.
    pub needed: usize,
    /// Bytes the buffer has.
    pub got: usize,
}

impl fmt::Display for Truncated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} header needs {} bytes, buffer has {}", self.header, self.needed, self.got)
    }
}

impl std::error::Error for Truncated {}

#[doc(hidden)]
pub const fn offset_of(widths: &[usize], index: usize) -> usize {
    let mut off = 0;
    let mut i = 0;
    while i < index {
        off += widths[i];
        i += 1;
    }
    off
}

#[doc(hidden)]
pub const fn total_bits(widths: &[usize]) -> usize {
    offset_of(widths, widths.len())
}

/// Declares a header in the current module. See the [module docs](crate::wire).
///
/// ```
/// mod tag {
///     emu_core::header! {
///         /// A made-up 3-byte tag.
///         "tag" {
///             /// Priority.
///             prio: emu_core::u3,
///             /// Whether the frame may be dropped.
///             drop_eligible: bool,
///             /// Tag identifier.
///             id: emu_core::u20,
///         }
///     }
/// }
/// assert_eq!(tag::HEADER_LEN, 3);
/// let mut b = [0u8; 3];
/// let mut t = tag::Header::new_unchecked(&mut b[..]);
/// t.set_id(emu_core::u20::new(0xabcde));
/// t.set_prio(emu_core::u3::new(5));
/// assert_eq!(b, [0xaa, 0xbc, 0xde]);
/// ```
#[macro_export]
macro_rules! header {
    (
        $(#[$hmeta:meta])*
        $hname:literal {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        #[allow(non_camel_case_types, dead_code)]
        #[derive(Clone, Copy)]
        enum FieldIndex { $($field),* }

        const WIDTHS: &[usize] = &[$(<$ty as $crate::bits::Bits>::WIDTH),*];
        const TOTAL_BITS: usize = $crate::wire::total_bits(WIDTHS);
        const _: () = assert!(TOTAL_BITS % 8 == 0, "a header must be a whole number of bytes");

        /// Length of the header's fixed part in bytes.
        pub const HEADER_LEN: usize = TOTAL_BITS / 8;

        /// The header's fields: names, bit offsets and widths, in wire order.
        pub const FIELDS: &[$crate::wire::Field] = &[$(
            $crate::wire::Field {
                name: stringify!($field),
                bit_offset: $crate::wire::offset_of(WIDTHS, FieldIndex::$field as usize),
                width: <$ty as $crate::bits::Bits>::WIDTH,
            }
        ),*];

        /// The header's name and field table.
        pub const INFO: $crate::wire::HeaderInfo =
            $crate::wire::HeaderInfo { name: $hname, len: HEADER_LEN, fields: FIELDS };

        $(#[$hmeta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct Header<T> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> Header<T> {
            /// A view over `buffer` without a length check; accessors still never panic.
            #[inline]
            pub const fn new_unchecked(buffer: T) -> Self {
                Header { buffer }
            }

            /// A view over `buffer` after checking it holds the whole fixed header.
            pub fn new_checked(buffer: T) -> Result<Self, $crate::wire::Truncated> {
                let h = Header { buffer };
                h.check_len()?;
                Ok(h)
            }

            /// Checks the buffer holds the whole fixed header.
            pub fn check_len(&self) -> Result<(), $crate::wire::Truncated> {
                let got = self.buffer.as_ref().len();
                if got < HEADER_LEN {
                    Err($crate::wire::Truncated { header: $hname, needed: HEADER_LEN, got })
                } else {
                    Ok(())
                }
            }

            /// The underlying buffer.
            pub fn into_inner(self) -> T {
                self.buffer
            }

            /// The bytes of the buffer (from the start of this header on).
            pub fn as_bytes(&self) -> &[u8] {
                self.buffer.as_ref()
            }

            $(
                $(#[$fmeta])*
                #[inline]
                pub fn $field(&self) -> $ty {
                    const F: $crate::wire::Field = FIELDS[FieldIndex::$field as usize];
                    <$ty as $crate::bits::Scalar>::from_u64_masked(
                        $crate::bits::read_field(self.buffer.as_ref(), F.bit_offset, F.width),
                    )
                }
            )*
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
            /// The bytes of the buffer, writable.
            pub fn as_bytes_mut(&mut self) -> &mut [u8] {
                self.buffer.as_mut()
            }

            $crate::paste::paste! {$(
                #[doc = concat!("Sets `", stringify!($field), "`.")]
                #[inline]
                pub fn [<set_ $field>](&mut self, value: $ty) {
                    const F: $crate::wire::Field = FIELDS[FieldIndex::$field as usize];
                    $crate::bits::write_field(
                        self.buffer.as_mut(),
                        F.bit_offset,
                        F.width,
                        <$ty as $crate::bits::Scalar>::to_u64(value),
                    )
                }
            )*}
        }
    };
}

#[cfg(test)]
mod test {
    use super::*;

    /// Fields are contiguous, inside the header, and named uniquely.
    #[test]
    fn field_tables_are_consistent() {
        for h in HEADERS {
            let mut next = 0;
            for f in h.fields {
                assert_eq!(f.bit_offset, next, "{}.{}", h.name, f.name);
                assert!(f.width >= 1 && f.width <= 64);
                next += f.width;
            }
            assert_eq!(next, h.len * 8, "{}", h.name);
            let mut names: Vec<_> = h.fields.iter().map(|f| f.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), h.fields.len(), "{}", h.name);
        }
    }

    #[test]
    fn fixed_lengths() {
        let lens: Vec<_> = HEADERS.iter().map(|h| (h.name, h.len)).collect();
        assert_eq!(
            lens,
            [
                ("ethernet", 14),
                ("vlan", 4),
                ("arp", 28),
                ("ipv4", 20),
                ("icmpv4", 8),
                ("udp", 8),
                ("tcp", 20),
                ("dns", 12),
                ("memcached_binary", 24),
                ("memcached_udp_frame", 8),
            ]
        );
    }
}

//! What the front end knows of the library (`emu_core`): the methods of `Packet` and of the
//! header views, the header fields, the state elements' methods, the checksum helpers, the
//! constants, `Meta`'s fields and the variants of `Action` and `DropReason`.
//!
//! Nothing here is guessed. Names of header fields come from `emu_core::wire::HEADERS`; every
//! signature is taken from a real call of the real function, type-checked by rustc, through
//! [`LibTy`] (closures such as `|off| pkt.ipv4_at(off)` are built and never called). A change
//! of the library's API either updates these tables by itself or fails to compile here, and
//! the tests check the hand-written lists against the library's own tables.

use super::ast::{ElementKind, IntTy, Ty};
use emu_core::bits::Bits;
use emu_core::wire::{self, arp, checksum, icmpv4, ipv4, tcp, udp};
use emu_core::{u100, u13, u20, u4, u48, Number, UInt};
use emu_core::{
    Action, Array, Bytes, Cam, Counter, DropReason, HashTable, Ipv4Addr, Lru, Mac, Meta, Packet, PortMask, Queue,
    Register, Tcam,
};
use std::sync::OnceLock;

/// A function's signature: argument types (receiver not included) and return type. May hold
/// [`Ty::Param`] for a state element's type parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sig {
    /// Argument types.
    pub args: Vec<Ty>,
    /// Return type.
    pub ret: Ty,
}

/// A method of the library.
#[derive(Debug, Clone)]
pub struct Method {
    /// Its name.
    pub name: &'static str,
    /// Its signature.
    pub sig: Sig,
    /// Whether it takes `&mut self` (writes a state element, or the packet).
    pub writes: bool,
}

/// One header: its fields with their Rust types, the extra methods of its view, and where
/// `Packet`'s view without `_at` places it.
#[derive(Debug, Clone)]
pub struct Header {
    /// The header's name (`"ipv4"`), as in `emu_core::wire::HEADERS`.
    pub name: &'static str,
    /// The module path under `emu_core::wire` (`["memcached", "binary"]`).
    pub module: &'static [&'static str],
    /// Length of the fixed part in bytes.
    pub len: usize,
    /// Fields: name, Rust type, bit offset, width.
    pub fields: Vec<(&'static str, Ty, usize, usize)>,
    /// Methods of the view other than the field accessors.
    pub methods: Vec<Method>,
    /// The offset `pkt.NAME()` uses, for the headers `Packet` has views of.
    pub packet_offset: Option<usize>,
}

/// Everything the front end knows of the library.
#[derive(Debug)]
pub struct Library {
    /// The headers of `emu_core::wire::HEADERS`.
    pub headers: Vec<Header>,
    /// `Packet`'s methods other than the header views.
    pub packet: Vec<Method>,
    /// Each state element's methods, for an element of type parameters `P0` (`K` or `T`),
    /// `P1` (`V`).
    pub elements: Vec<(ElementKind, Vec<Method>)>,
    /// The checksum helpers that work on values (not slices): `checksum::NAME`.
    pub checksum: Vec<(&'static str, Sig)>,
    /// `Meta`'s fields.
    pub meta: Vec<(&'static str, Ty)>,
    /// `Action`'s variants and their field types.
    pub actions: Vec<(&'static str, Vec<Ty>)>,
    /// `DropReason`'s variants and their codes.
    pub drop_reasons: Vec<(&'static str, u8)>,
    /// Library constants by path (`["icmpv4", "ECHO_REQUEST"]`, `["Mac", "BROADCAST"]`).
    pub consts: Vec<(Vec<&'static str>, Ty, u128)>,
    /// Methods of values, by the receiver's type name (`"Mac"`, `"PortMask"`, `"Option"`,
    /// `"Result"`, `"u16"`, and `"u4"`/`"u13"`/`"u20"`/`"u48"`/`"u100"` standing for the
    /// `arbitrary_int` types of each storage size).
    pub value_methods: Vec<(&'static str, Vec<Method>)>,
    /// Associated functions and constructors: (type, name, signature); name `""` is a
    /// tuple-struct constructor.
    pub assoc: Vec<(&'static str, &'static str, Sig)>,
    /// Type names of the library and what they are (`Port` → `u8`, `Ipv4Header` → a view).
    pub type_names: Vec<(&'static str, Ty)>,
}

/// The library's API, built once.
pub fn library() -> &'static Library {
    static LIB: OnceLock<Library> = OnceLock::new();
    LIB.get_or_init(build)
}

impl Library {
    /// The header called `name`.
    pub fn header(&self, name: &str) -> Option<&Header> {
        self.headers.iter().find(|h| h.name == name)
    }

    /// The methods of `kind`.
    pub fn element_methods(&self, kind: ElementKind) -> &[Method] {
        self.elements.iter().find(|(k, _)| *k == kind).map(|(_, m)| &m[..]).unwrap_or(&[])
    }

    /// The value methods of the type named `ty`.
    pub fn value_methods(&self, ty: &str) -> &[Method] {
        self.value_methods.iter().find(|(k, _)| *k == ty).map(|(_, m)| &m[..]).unwrap_or(&[])
    }

    /// A library constant whose path ends with `path` (at least two segments, so that
    /// `icmpv4::ECHO_REQUEST` and `wire::icmpv4::ECHO_REQUEST` both name it).
    pub fn constant(&self, path: &[String]) -> Option<(&Ty, u128)> {
        if path.len() < 2 {
            return None;
        }
        let mut found = self.consts.iter().filter(|(p, _, _)| {
            p.len() >= path.len() && p[p.len() - path.len()..].iter().zip(path).all(|(a, b)| *a == b)
        });
        let first = found.next()?;
        if found.next().is_some() {
            return None;
        }
        Some((&first.1, first.2))
    }
}

/// Rust types of the library as the front end's [`Ty`].
pub trait LibTy {
    /// The type.
    fn ty() -> Ty;
}

macro_rules! lib_int {
    ($($t:ty => $bits:expr, $signed:expr, $size:expr;)*) => {$(
        impl LibTy for $t {
            fn ty() -> Ty {
                Ty::Int(IntTy { bits: $bits, signed: $signed, size: $size })
            }
        }
    )*};
}
lib_int! {
    u8 => 8, false, false; u16 => 16, false, false; u32 => 32, false, false; u64 => 64, false, false;
    u128 => 128, false, false; usize => 64, false, true;
    i8 => 8, true, false; i16 => 16, true, false; i32 => 32, true, false; i64 => 64, true, false;
    i128 => 128, true, false; isize => 64, true, true;
}

macro_rules! lib_uint {
    ($($container:ty),*) => {$(
        impl<const N: usize> LibTy for UInt<$container, N> {
            fn ty() -> Ty {
                Ty::uint(N as u16)
            }
        }
    )*};
}
lib_uint!(u8, u16, u32, u64, u128);

macro_rules! lib_plain {
    ($($t:ty => $e:expr;)*) => {$(
        impl LibTy for $t {
            fn ty() -> Ty {
                $e
            }
        }
    )*};
}
lib_plain! {
    bool => Ty::Bool;
    () => Ty::unit();
    Mac => Ty::Mac;
    Ipv4Addr => Ty::Ipv4Addr;
    PortMask => Ty::PortMask;
    Action => Ty::Action;
    DropReason => Ty::DropReason;
    P0 => Ty::Param(0);
    P1 => Ty::Param(1);
}

impl<const N: usize> LibTy for Bytes<N> {
    fn ty() -> Ty {
        Ty::Bytes(N as u32)
    }
}

impl<T: LibTy, const N: usize> LibTy for [T; N] {
    fn ty() -> Ty {
        Ty::Array(Box::new(T::ty()), N as u32)
    }
}

impl<T: LibTy> LibTy for Option<T> {
    fn ty() -> Ty {
        Ty::Option(Box::new(T::ty()))
    }
}

impl<T: LibTy, E: LibTy> LibTy for Result<T, E> {
    fn ty() -> Ty {
        Ty::Result(Box::new(T::ty()), Box::new(E::ty()))
    }
}

impl<A: LibTy, B: LibTy> LibTy for (A, B) {
    fn ty() -> Ty {
        Ty::Tuple(vec![A::ty(), B::ty()])
    }
}

impl<A: LibTy, B: LibTy, C: LibTy> LibTy for (A, B, C) {
    fn ty() -> Ty {
        Ty::Tuple(vec![A::ty(), B::ty(), C::ty()])
    }
}

macro_rules! lib_views {
    ($($($m:ident)::+),*) => {$(
        impl<'a> LibTy for wire::$($m)::+::Header<&'a [u8]> {
            fn ty() -> Ty {
                Ty::View { header: wire::$($m)::+::INFO.name, mutable: false }
            }
        }
        impl<'a> LibTy for wire::$($m)::+::Header<&'a mut [u8]> {
            fn ty() -> Ty {
                Ty::View { header: wire::$($m)::+::INFO.name, mutable: true }
            }
        }
    )*};
}
lib_views!(ethernet, vlan, arp, ipv4, icmpv4, udp, tcp, dns, memcached::binary, memcached::udp_frame);

/// Stand-ins for a state element's first and second type parameters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct P0;
/// See [`P0`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct P1;

macro_rules! stand_in_bits {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            const WIDTH: usize = 8;
            fn write_be(&self, out: &mut [u8]) {
                out[0] = 0;
            }
            fn read_be(_: &[u8]) -> Self {
                Self
            }
        }
    )*};
}
stand_in_bits!(P0, P1);

fn ty_of<T: LibTy>(_: &T) -> Ty {
    T::ty()
}

fn sig0<R: LibTy>(_: impl FnOnce() -> R) -> Sig {
    Sig { args: vec![], ret: R::ty() }
}

fn sig1<A: LibTy, R: LibTy>(_: impl FnOnce(A) -> R) -> Sig {
    Sig { args: vec![A::ty()], ret: R::ty() }
}

fn sig2<A: LibTy, B: LibTy, R: LibTy>(_: impl FnOnce(A, B) -> R) -> Sig {
    Sig { args: vec![A::ty(), B::ty()], ret: R::ty() }
}

fn sig3<A: LibTy, B: LibTy, C: LibTy, R: LibTy>(_: impl FnOnce(A, B, C) -> R) -> Sig {
    Sig { args: vec![A::ty(), B::ty(), C::ty()], ret: R::ty() }
}

fn sig4<A: LibTy, B: LibTy, C: LibTy, D: LibTy, R: LibTy>(_: impl FnOnce(A, B, C, D) -> R) -> Sig {
    Sig { args: vec![A::ty(), B::ty(), C::ty(), D::ty()], ret: R::ty() }
}

/// `m!(recv.name(a, b))`: the method `name` of `recv`, with its signature from a closure that
/// calls it; `m!(mut recv.name(a))` for a method taking `&mut self`. The non-`mut` form
/// borrows `recv` shared, so rustc rejects it for a method that writes; `m!(val x.name())`
/// calls it on a copy of a `Copy` value (so `x.min(y)` is the integer's, not `&x`'s).
macro_rules! m {
    (mut $r:ident . $name:ident ( $($a:ident),* )) => {{
        let r = &mut $r;
        Method { name: stringify!($name), sig: m!(@sig ($($a),*) r.$name($($a),*)), writes: true }
    }};
    (val $r:ident . $name:ident ( $($a:ident),* )) => {{
        let r = $r;
        Method { name: stringify!($name), sig: m!(@sig ($($a),*) r.$name($($a),*)), writes: false }
    }};
    ($r:ident . $name:ident ( $($a:ident),* )) => {{
        let r = &$r;
        Method { name: stringify!($name), sig: m!(@sig ($($a),*) r.$name($($a),*)), writes: false }
    }};
    (@sig () $e:expr) => { sig0(|| $e) };
    (@sig ($a:ident) $e:expr) => { sig1(|$a| $e) };
    (@sig ($a:ident, $b:ident) $e:expr) => { sig2(|$a, $b| $e) };
    (@sig ($a:ident, $b:ident, $c:ident) $e:expr) => { sig3(|$a, $b, $c| $e) };
    (@sig ($a:ident, $b:ident, $c:ident, $d:ident) $e:expr) => { sig4(|$a, $b, $c, $d| $e) };
}

/// The Rust types of every header's fields, by calling each getter of a view.
macro_rules! field_types {
    ($($($m:ident)::+ { $($f:ident),* $(,)? })*) => {
        vec![$({
            let buf = [0u8; 64];
            let h = wire::$($m)::+::Header::new_unchecked(&buf[..]);
            (wire::$($m)::+::INFO.name, vec![$((stringify!($f), ty_of(&h.$f()))),*])
        }),*]
    };
}

fn field_types() -> Vec<(&'static str, Vec<(&'static str, Ty)>)> {
    field_types! {
        ethernet { dst, src, ethertype }
        vlan { pcp, dei, vid, ethertype }
        arp { htype, ptype, hlen, plen, oper, sha, spa, tha, tpa }
        ipv4 {
            version, ihl, dscp, ecn, total_len, ident, reserved, dont_frag, more_frags, frag_offset,
            ttl, protocol, checksum, src, dst,
        }
        icmpv4 { msg_type, code, checksum, ident, seq_no }
        udp { src_port, dst_port, len, checksum }
        tcp {
            src_port, dst_port, seq_no, ack_no, data_offset, reserved, ae, cwr, ece, urg, ack, psh,
            rst, syn, fin, window, checksum, urgent,
        }
        dns { id, qr, opcode, aa, tc, rd, ra, z, ad, cd, rcode, qdcount, ancount, nscount, arcount }
        memcached::binary {
            magic, opcode, key_len, extras_len, data_type, vbucket_or_status, total_body_len, opaque, cas,
        }
        memcached::udp_frame { request_id, seq_no, datagrams, reserved }
    }
}

/// The view methods other than field accessors.
fn view_methods() -> Vec<(&'static str, Vec<Method>)> {
    let buf = [0u8; 64];
    let mut wbuf = [0u8; 64];
    let ip = ipv4::Header::new_unchecked(&buf[..]);
    let icmp = icmpv4::Header::new_unchecked(&buf[..]);
    let a = arp::Header::new_unchecked(&buf[..]);
    let t = tcp::Header::new_unchecked(&buf[..]);
    let u = udp::Header::new_unchecked(&buf[..]);
    let mut ip_w = ipv4::Header::new_unchecked(&mut wbuf[..]);
    let ipv4 = vec![m!(ip.header_len()), m!(ip.checksum_ok()), m!(mut ip_w.fill_checksum())];
    let mut icmp_w = icmpv4::Header::new_unchecked(&mut wbuf[..]);
    let icmpv4 = vec![m!(icmp.checksum_ok()), m!(mut icmp_w.fill_checksum())];
    let arp = vec![m!(a.is_ethernet_ipv4())];
    let mut t_w = tcp::Header::new_unchecked(&mut wbuf[..]);
    let tcp = vec![m!(t.header_len()), m!(t.checksum_ok(s, d)), m!(mut t_w.fill_checksum(s, d))];
    let mut u_w = udp::Header::new_unchecked(&mut wbuf[..]);
    let udp = vec![m!(u.checksum_ok(s, d)), m!(mut u_w.fill_checksum(s, d))];
    vec![
        (ipv4::INFO.name, ipv4),
        (icmpv4::INFO.name, icmpv4),
        (arp::INFO.name, arp),
        (tcp::INFO.name, tcp),
        (udp::INFO.name, udp),
    ]
}

/// `Packet`'s header views (name, `_mut`, `_at`, `_at_mut`), each with the header it returns
/// and the offset the plain one uses (measured on a frame whose byte `i` is `i`).
fn packet_views() -> Vec<(&'static str, [Method; 4], usize)> {
    let mut frame: Vec<u8> = (0..=255).collect();
    let mut p = Packet::new(&mut frame, 256);
    macro_rules! views {
        ($($name:ident, $name_mut:ident, $name_at:ident, $name_at_mut:ident;)*) => {
            vec![$({
                let offset = p.$name().into_inner().first().map_or(0, |b| *b as usize);
                let ms = [m!(p.$name()), m!(mut p.$name_mut()), m!(p.$name_at(o)), m!(mut p.$name_at_mut(o))];
                let Ty::View { header, .. } = ms[0].sig.ret else { unreachable!() };
                (header, ms, offset)
            }),*]
        };
    }
    views! {
        ethernet, ethernet_mut, ethernet_at, ethernet_at_mut;
        vlan, vlan_mut, vlan_at, vlan_at_mut;
        arp, arp_mut, arp_at, arp_at_mut;
        ipv4, ipv4_mut, ipv4_at, ipv4_at_mut;
        icmpv4, icmpv4_mut, icmpv4_at, icmpv4_at_mut;
        udp, udp_mut, udp_at, udp_at_mut;
        tcp, tcp_mut, tcp_at, tcp_at_mut;
    }
}

/// The names of `Packet`'s view methods, by header: what `pkt.NAME(..)` resolves to.
pub fn view_of(lib: &Library, method: &str) -> Option<(&'static str, bool, bool)> {
    let (base, mutable) = match method.strip_suffix("_mut") {
        Some(b) => (b, true),
        None => (method, false),
    };
    let (base, at) = match base.strip_suffix("_at") {
        Some(b) => (b, true),
        None => (base, false),
    };
    let h = lib.headers.iter().find(|h| h.name == base && h.packet_offset.is_some())?;
    Some((h.name, at, mutable))
}

fn packet_methods() -> Vec<Method> {
    let mut frame = vec![0u8; 64];
    let mut p = Packet::new(&mut frame, 64);
    vec![
        m!(p.len()),
        m!(p.is_empty()),
        m!(p.window_size()),
        m!(mut p.set_len(n)),
        m!(p.byte(i)),
        m!(mut p.set_byte(i, v)),
        m!(p.ones_sum(s, e)),
        m!(p.l3()),
    ]
}

fn element_methods() -> Vec<(ElementKind, Vec<Method>)> {
    let mut reg: Register<P0> = Register::default();
    let mut ctr: Counter = Counter::default();
    let mut arr: Array<P0, 4> = Array::default();
    let mut cam: Cam<P0, P1, 4> = Cam::default();
    let mut ht: HashTable<P0, P1, 4, 2> = HashTable::default();
    let mut lru: Lru<P0, P1, 4> = Lru::default();
    let mut tcam: Tcam<P0, P1, 4> = Tcam::default();
    let mut q: Queue<P0, 4> = Queue::default();
    vec![
        (ElementKind::Register, vec![m!(reg.get()), m!(mut reg.set(v))]),
        (
            ElementKind::Counter,
            vec![m!(mut ctr.inc()), m!(mut ctr.add(n)), m!(ctr.get()), m!(mut ctr.set(v)), m!(mut ctr.reset())],
        ),
        (ElementKind::Array, vec![m!(arr.get(i)), m!(mut arr.set(i, v)), m!(arr.len()), m!(arr.is_empty())]),
        (
            ElementKind::Cam,
            vec![
                m!(cam.get(k)),
                m!(cam.contains(k)),
                m!(mut cam.insert(k, v)),
                m!(mut cam.remove(k)),
                m!(cam.len()),
                m!(cam.is_empty()),
                m!(cam.capacity()),
                m!(cam.entry(i)),
            ],
        ),
        (
            ElementKind::HashTable,
            vec![
                m!(ht.set_of(k)),
                m!(ht.get(k)),
                m!(ht.contains(k)),
                m!(mut ht.insert(k, v)),
                m!(mut ht.remove(k)),
                m!(ht.len()),
                m!(ht.is_empty()),
                m!(ht.capacity()),
            ],
        ),
        (
            ElementKind::Lru,
            vec![
                m!(mut lru.get(k)),
                m!(lru.peek(k)),
                m!(lru.contains(k)),
                m!(mut lru.insert(k, v)),
                m!(mut lru.remove(k)),
                m!(lru.len()),
                m!(lru.is_empty()),
                m!(lru.capacity()),
            ],
        ),
        (
            ElementKind::Tcam,
            vec![
                m!(mut tcam.set(i, v, mask, r)),
                m!(mut tcam.clear(i)),
                m!(tcam.entry(i)),
                m!(tcam.lookup_slot(k)),
                m!(tcam.lookup(k)),
                m!(tcam.len()),
                m!(tcam.is_empty()),
                m!(tcam.capacity()),
            ],
        ),
        (
            ElementKind::Queue,
            vec![
                m!(mut q.push(v)),
                m!(mut q.pop()),
                m!(q.peek()),
                m!(q.len()),
                m!(q.is_empty()),
                m!(q.is_full()),
                m!(q.capacity()),
            ],
        ),
    ]
}

fn value_methods() -> Vec<(&'static str, Vec<Method>)> {
    let mac = Mac::default();
    let mask = PortMask::default();
    let opt: Option<P0> = None;
    let res: Result<P0, P1> = Ok(P0);
    let mut bytes: Bytes<1> = Bytes::default();
    let mut out = vec![
        ("Mac", vec![m!(val mac.is_multicast()), m!(val mac.is_broadcast())]),
        ("PortMask", vec![m!(val mask.contains(p)), m!(val mask.is_empty()), m!(val mask.count())]),
        ("Option", vec![m!(val opt.is_some()), m!(val opt.is_none()), m!(val opt.unwrap_or(d))]),
        ("Result", vec![m!(val res.is_ok()), m!(val res.is_err())]),
        // Every `Bytes<N>`: the stand-in's signatures have no `N` in them.
        ("Bytes", vec![m!(val bytes.byte(i)), m!(mut bytes.set_byte(i, v))]),
    ];
    // `value` and `as_*` come from `arbitrary_int::Number`, which the unsigned primitives have.
    macro_rules! native {
        ($($t:ident: [$($number:ident),*]),*) => {$({
            let x: $t = 0;
            out.push((stringify!($t), vec![
                m!(val x.wrapping_add(y)), m!(val x.wrapping_sub(y)), m!(val x.wrapping_mul(y)),
                m!(val x.saturating_add(y)), m!(val x.saturating_sub(y)),
                m!(val x.checked_add(y)), m!(val x.checked_sub(y)), m!(val x.checked_mul(y)),
                m!(val x.overflowing_add(y)), m!(val x.overflowing_sub(y)), m!(val x.overflowing_mul(y)),
                m!(val x.count_ones()), m!(val x.leading_zeros()), m!(val x.trailing_zeros()), m!(val x.min(y)),
                m!(val x.max(y)), m!(val x.rotate_left(n)), m!(val x.rotate_right(n)), m!(val x.swap_bytes()),
                m!(val x.to_be_bytes()), m!(val x.to_le_bytes()),
                $(m!(val x.$number())),*
            ]));
        })*};
    }
    native!(
        u8: [value, as_u8, as_u16, as_u32, as_u64, as_u128, as_usize],
        u16: [value, as_u8, as_u16, as_u32, as_u64, as_u128, as_usize],
        u32: [value, as_u8, as_u16, as_u32, as_u64, as_u128, as_usize],
        u64: [value, as_u8, as_u16, as_u32, as_u64, as_u128, as_usize],
        u128: [value, as_u8, as_u16, as_u32, as_u64, as_u128, as_usize],
        usize: [], i8: [], i16: [], i32: [], i64: [], i128: [], isize: []
    );
    // One `arbitrary_int` type per storage size stands for all of that size; the checker puts
    // the real type in place of the stand-in's.
    macro_rules! arbitrary {
        ($($t:ident),*) => {$({
            let x = $t::new(0);
            out.push((stringify!($t), vec![
                m!(val x.value()), m!(val x.wrapping_add(y)), m!(val x.wrapping_sub(y)), m!(val x.wrapping_mul(y)),
                m!(val x.saturating_add(y)), m!(val x.saturating_sub(y)),
                m!(val x.checked_add(y)), m!(val x.checked_sub(y)), m!(val x.checked_mul(y)),
                m!(val x.overflowing_add(y)), m!(val x.overflowing_sub(y)), m!(val x.overflowing_mul(y)),
                m!(val x.count_ones()), m!(val x.leading_zeros()), m!(val x.trailing_zeros()), m!(val x.min(y)),
                m!(val x.max(y)), m!(val x.rotate_left(n)), m!(val x.rotate_right(n)),
                m!(val x.as_u8()), m!(val x.as_u16()), m!(val x.as_u32()), m!(val x.as_u64()), m!(val x.as_u128()),
                m!(val x.as_usize()),
            ]));
        })*};
    }
    arbitrary!(u4, u13, u20, u48, u100);
    out
}

/// The stand-in `arbitrary_int` type for a width that is not a primitive's.
pub fn arbitrary_stand_in(bits: u16) -> (&'static str, u16) {
    match bits {
        0..=7 => ("u4", 4),
        9..=15 => ("u13", 13),
        17..=31 => ("u20", 20),
        33..=63 => ("u48", 48),
        _ => ("u100", 100),
    }
}

fn assoc() -> Vec<(&'static str, &'static str, Sig)> {
    let mut out = vec![
        ("Ipv4Addr", "new", sig4(Ipv4Addr::new)),
        ("PortMask", "single", sig1(PortMask::single)),
        ("PortMask", "all", sig1(PortMask::all)),
        ("PortMask", "", sig1(PortMask)),
        ("Ipv4Addr", "", sig1(Ipv4Addr)),
        ("Mac", "", sig1(Mac)),
    ];
    macro_rules! arbitrary_new {
        ($($t:ident),*) => {$(
            out.push((stringify!($t), "new", sig1($t::new)));
        )*};
    }
    arbitrary_new!(u4, u13, u20, u48, u100);
    out
}

fn checksum_fns() -> Vec<(&'static str, Sig)> {
    vec![
        ("fold", sig1(checksum::fold)),
        ("update16", sig3(checksum::update16)),
        ("update32", sig3(checksum::update32)),
        ("pseudo_header", sig4(checksum::pseudo_header)),
    ]
}

/// The checksum helpers that take byte slices, which the subset has no type for.
pub const CHECKSUM_ON_SLICES: &[&str] =
    &["sum", "checksum", "ipv4_header", "ipv4_header_ok", "transport", "transport_ok"];

fn meta_fields() -> Vec<(&'static str, Ty)> {
    // Destructured without `..`: a new field of `Meta` fails to compile here.
    let Meta { in_port, len, timestamp } = Meta::default();
    vec![("in_port", ty_of(&in_port)), ("len", ty_of(&len)), ("timestamp", ty_of(&timestamp))]
}

fn actions() -> Vec<(&'static str, Vec<Ty>)> {
    // Matched without a wildcard: a new variant of `Action` fails to compile here.
    let _every_variant_is_listed = |a: Action| match a {
        Action::Forward(_) | Action::Multicast(_) | Action::Flood | Action::Reply | Action::Drop(_) => (),
    };
    vec![
        ("Forward", sig1(Action::Forward).args),
        ("Multicast", sig1(Action::Multicast).args),
        ("Flood", vec![]),
        ("Reply", vec![]),
        ("Drop", sig1(Action::Drop).args),
    ]
}

fn drop_reasons() -> Vec<(&'static str, u8)> {
    DropReason::ALL.iter().map(|r| (&*Box::leak(format!("{r:?}").into_boxed_str()), *r as u8)).collect()
}

fn consts(headers: &[Header]) -> Vec<(Vec<&'static str>, Ty, u128)> {
    fn c<T: LibTy + Copy>(path: &[&'static str], v: T, value: u128) -> (Vec<&'static str>, Ty, u128) {
        (path.to_vec(), ty_of(&v), value)
    }
    let mut out = vec![
        c(&["arp", "OPER_REQUEST"], arp::OPER_REQUEST, arp::OPER_REQUEST as u128),
        c(&["arp", "OPER_REPLY"], arp::OPER_REPLY, arp::OPER_REPLY as u128),
        c(&["icmpv4", "ECHO_REPLY"], icmpv4::ECHO_REPLY, icmpv4::ECHO_REPLY as u128),
        c(&["icmpv4", "DEST_UNREACHABLE"], icmpv4::DEST_UNREACHABLE, icmpv4::DEST_UNREACHABLE as u128),
        c(&["icmpv4", "ECHO_REQUEST"], icmpv4::ECHO_REQUEST, icmpv4::ECHO_REQUEST as u128),
        c(&["Mac", "BROADCAST"], Mac::BROADCAST, Mac::BROADCAST.0.value() as u128),
        c(&["PortMask", "EMPTY"], PortMask::EMPTY, PortMask::EMPTY.0 as u128),
    ];
    for h in headers {
        let mut path = h.module.to_vec();
        path.push("HEADER_LEN");
        out.push((path, Ty::USIZE, h.len as u128));
    }
    macro_rules! int_consts {
        ($($t:ident),*) => {$(
            out.push((vec![stringify!($t), "MAX"], ty_of(&$t::MAX), $t::MAX as u128));
            out.push((vec![stringify!($t), "MIN"], ty_of(&$t::MIN), $t::MIN as u128));
            out.push((vec![stringify!($t), "BITS"], ty_of(&$t::BITS), $t::BITS as u128));
        )*};
    }
    int_consts!(u8, u16, u32, u64, u128, usize);
    out
}

fn type_names() -> Vec<(&'static str, Ty)> {
    macro_rules! names {
        ($($name:ident),*) => { vec![$((stringify!($name), <emu_core::$name as LibTy>::ty())),*] };
    }
    macro_rules! views {
        ($($name:ident),*) => { vec![$((stringify!($name), <emu_core::$name<&[u8]> as LibTy>::ty())),*] };
    }
    let mut out = names!(Port, Timestamp, Mac, Ipv4Addr, PortMask, Action, DropReason);
    out.extend(views!(
        ArpHeader,
        DnsHeader,
        EthernetHeader,
        Icmpv4Header,
        Ipv4Header,
        MemcachedBinaryHeader,
        MemcachedUdpFrameHeader,
        TcpHeader,
        UdpHeader,
        VlanHeader
    ));
    out
}

/// The module under `emu_core::wire` that declares the header `name`.
fn module_of(name: &'static str) -> &'static [&'static str] {
    match name {
        "memcached_binary" => &["memcached", "binary"],
        "memcached_udp_frame" => &["memcached", "udp_frame"],
        other => Box::leak(vec![other].into_boxed_slice()),
    }
}

fn build() -> Library {
    let types = field_types();
    let mut extra = view_methods();
    let views = packet_views();
    let headers: Vec<Header> = wire::HEADERS
        .iter()
        .map(|info| {
            let typed = types.iter().find(|(n, _)| *n == info.name).map(|(_, f)| &f[..]).unwrap_or(&[]);
            let fields = info
                .fields
                .iter()
                .filter_map(|f| {
                    // A field missing from the typed list is left out (an unknown method to
                    // the checker); the tests catch that.
                    let ty = typed.iter().find(|(n, _)| *n == f.name)?.1.clone();
                    Some((f.name, ty, f.bit_offset, f.width))
                })
                .collect();
            let methods =
                extra.iter_mut().find(|(n, _)| *n == info.name).map(|(_, m)| std::mem::take(m)).unwrap_or_default();
            Header {
                name: info.name,
                module: module_of(info.name),
                len: info.len,
                fields,
                methods,
                packet_offset: views.iter().find(|(h, _, _)| *h == info.name).map(|(_, _, o)| *o),
            }
        })
        .collect();
    let consts = consts(&headers);
    Library {
        headers,
        packet: packet_methods(),
        elements: element_methods(),
        checksum: checksum_fns(),
        meta: meta_fields(),
        actions: actions(),
        drop_reasons: drop_reasons(),
        consts,
        value_methods: value_methods(),
        assoc: assoc(),
        type_names: type_names(),
    }
}

/// `Packet`'s view methods as built from the real API, for the tests.
#[cfg(test)]
pub(crate) fn packet_view_table() -> Vec<(&'static str, [Method; 4], usize)> {
    packet_views()
}

#[cfg(test)]
mod test {
    use super::*;

    /// Every field of every header in `emu_core::wire::HEADERS` has a typed entry of the same
    /// width, and there are no others.
    #[test]
    fn field_types_match_the_library_tables() {
        let lib = library();
        let typed = field_types();
        assert_eq!(typed.len(), wire::HEADERS.len());
        for info in wire::HEADERS {
            let h = lib.header(info.name).unwrap();
            assert_eq!(h.fields.len(), info.fields.len(), "{}: a field has no typed entry", info.name);
            let t = &typed.iter().find(|(n, _)| *n == info.name).unwrap().1;
            assert_eq!(t.len(), info.fields.len(), "{}: a typed entry names no field", info.name);
            for (name, ty, _, width) in &h.fields {
                assert_eq!(ty.width(), Some(*width as u32), "{}.{name}", info.name);
            }
        }
    }

    #[test]
    fn views_and_offsets_come_from_packet() {
        let lib = library();
        let off = |n: &str| lib.header(n).unwrap().packet_offset;
        assert_eq!(off("ethernet"), Some(0));
        assert_eq!(off("ipv4"), Some(14));
        assert_eq!(off("icmpv4"), Some(34));
        assert_eq!(off("dns"), None, "Packet has no dns view");
        assert_eq!(view_of(lib, "ipv4_at_mut"), Some(("ipv4", true, true)));
        assert_eq!(view_of(lib, "ethernet"), Some(("ethernet", false, false)));
        assert_eq!(view_of(lib, "dns"), None);
        for (header, ms, _) in packet_view_table() {
            assert_eq!(ms[0].sig, Sig { args: vec![], ret: Ty::View { header, mutable: false } });
            assert_eq!(ms[3].sig, Sig { args: vec![Ty::USIZE], ret: Ty::View { header, mutable: true } });
            assert!(ms[1].writes && !ms[2].writes);
        }
    }

    #[test]
    fn signatures_are_the_real_ones() {
        let lib = library();
        let cam = lib.element_methods(ElementKind::Cam);
        let insert = cam.iter().find(|m| m.name == "insert").unwrap();
        assert_eq!(insert.sig.args, [Ty::Param(0), Ty::Param(1)]);
        assert_eq!(insert.sig.ret, Ty::Option(Box::new(Ty::Tuple(vec![Ty::Param(0), Ty::Param(1)]))));
        assert!(insert.writes);
        let lru_get = lib.element_methods(ElementKind::Lru).iter().find(|m| m.name == "get").unwrap();
        assert!(lru_get.writes, "Lru::get makes the entry most recent");
        let push = lib.element_methods(ElementKind::Queue).iter().find(|m| m.name == "push").unwrap();
        assert_eq!(push.sig.ret, Ty::Result(Box::new(Ty::unit()), Box::new(Ty::Param(0))));
        let set = lib.element_methods(ElementKind::Tcam).iter().find(|m| m.name == "set").unwrap();
        assert_eq!(set.sig.args, [Ty::USIZE, Ty::Param(0), Ty::Param(0), Ty::Param(1)]);
        assert_eq!((set.sig.ret.clone(), set.writes), (Ty::Bool, true));
        let slot = lib.element_methods(ElementKind::Tcam).iter().find(|m| m.name == "lookup_slot").unwrap();
        assert_eq!(slot.sig.ret, Ty::Option(Box::new(Ty::USIZE)));
        let update16 = &lib.checksum.iter().find(|(n, _)| *n == "update16").unwrap().1;
        assert_eq!(update16.args, [Ty::uint(16), Ty::uint(16), Ty::uint(16)]);
        assert_eq!(lib.meta[0], ("in_port", Ty::uint(8)));
        assert_eq!(lib.actions[0], ("Forward", vec![Ty::uint(8)]));
        assert!(lib.drop_reasons.contains(&("SamePort", 11)));
        let ip = lib.header("ipv4").unwrap();
        assert!(ip.fields.iter().any(|(n, t, _, _)| *n == "frag_offset" && *t == Ty::uint(13)));
        assert!(ip.fields.iter().any(|(n, t, _, _)| *n == "src" && *t == Ty::Ipv4Addr));
        let value = lib.value_methods("u13").iter().find(|m| m.name == "value").unwrap();
        assert_eq!(value.sig.ret, Ty::uint(16));
        let p = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(lib.constant(&p(&["icmpv4", "ECHO_REQUEST"])), Some((&Ty::uint(8), 8)));
        assert_eq!(lib.constant(&p(&["wire", "ipv4", "HEADER_LEN"])), None, "wire:: is stripped by the caller");
        assert_eq!(lib.constant(&p(&["binary", "HEADER_LEN"])), Some((&Ty::USIZE, 24)));
        assert_eq!(lib.constant(&p(&["HEADER_LEN"])), None);
        assert!(lib.type_names.contains(&("Port", Ty::uint(8))));
        assert!(lib.type_names.contains(&("Ipv4Header", Ty::View { header: "ipv4", mutable: false })));
    }
}

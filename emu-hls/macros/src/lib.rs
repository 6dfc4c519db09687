//! `#[emu::nf]`: marks the module that holds a network function, checks it against the
//! synthesizable subset at compile time, and records its source for the HLS compiler.
//!
//! ```
//! #[emu::nf(ports = 4, window = 64)]
//! pub mod mirror {
//!     use emu::prelude::*;
//!
//!     /// Sends every frame back where it came from, and counts them.
//!     #[derive(Default)]
//!     pub struct Mirror {
//!         pub frames: Counter,
//!     }
//!
//!     impl NetworkFunction for Mirror {
//!         fn process(&mut self, _pkt: &mut Packet, _meta: &Meta) -> Action {
//!             self.frames.inc();
//!             Action::Reply
//!         }
//!     }
//! }
//!
//! assert_eq!(mirror::HLS_PORTS, 4);
//! assert_eq!(mirror::HLS_WINDOW, 64);
//! assert!(mirror::HLS_SOURCE.contains("frames"));
//!
//! // The debugger's view of the state, by field name.
//! use emu::NetworkFunction;
//! let mut m = mirror::Mirror::default();
//! m.frames.add(3);
//! let elements = m.elements();
//! assert_eq!(elements[0].0, "frames");
//! assert_eq!(elements[0].1.read(0), Some(3u64.to_be_bytes().to_vec()));
//! ```
//!
//! Probes (`emu::probe!(name, value)`, `emu::count!(name)`, see `emu::probe`) become the
//! debugger's symbols after the fields; the macro numbers them, types them from the checked
//! source, and adds the module's probe table:
//!
//! ```
//! #[emu::nf(ports = 2, window = 64)]
//! pub mod ttl_watch {
//!     use emu::prelude::*;
//!
//!     #[derive(Default)]
//!     pub struct TtlWatch {
//!         pub frames: Counter,
//!     }
//!
//!     impl NetworkFunction for TtlWatch {
//!         fn process(&mut self, pkt: &mut Packet, _meta: &Meta) -> Action {
//!             self.frames.inc();
//!             if pkt.ethernet().ethertype() != 0x0800 {
//!                 emu::count!(not_ipv4);
//!                 return Action::Drop(DropReason::Unsupported);
//!             }
//!             emu::probe!(last_ttl, pkt.ipv4().ttl());
//!             Action::Flood
//!         }
//!     }
//! }
//!
//! use emu::{Meta, NetworkFunction, Packet};
//! let mut nf = ttl_watch::TtlWatch::default();
//! let mut frame = vec![0u8; 60];
//! frame[12..14].copy_from_slice(&[0x08, 0x00]); // IPv4
//! frame[14] = 0x45;
//! frame[22] = 64; // TTL
//! nf.process(&mut Packet::new(&mut frame, 64), &Meta { in_port: 0, len: 60, timestamp: 0 });
//! nf.probes().expect("the module has probes").with(|p| {
//!     assert_eq!(p.decls()[0].name, "not_ipv4");
//!     assert_eq!(p.decls()[1].name, "last_ttl");
//!     assert_eq!(p.read(0), 0u64.to_be_bytes());
//!     assert_eq!(p.read(1), [64]);
//! });
//! ```
//!
//! The attribute goes on an inline module: the state struct, its `impl NetworkFunction`, the
//! helpers and constants. The module is left exactly as written, so the CPU target compiles the
//! same code; the macro adds three constants to it:
//!
//! - `HLS_SOURCE: &str`: the module's tokens as text (without the attribute), which `emu hls`
//!   parses with `syn::parse_str::<syn::ItemMod>` and compiles;
//! - `HLS_PORTS: usize` and `HLS_WINDOW: usize`: the attribute's arguments.
//!
//! and one method to its `impl NetworkFunction`, `elements`: the state struct's fields by name,
//! through which the debugger (`emu dbg`) reads and writes them.
//!
//! Every construct outside the subset (docs/hls-subset.md) is a compile error on the offending
//! code, all of them at once, each saying what to write instead.
#![deny(missing_docs)]
#![deny(unsafe_code)]

use emu_hls::front::{check_module, Options};
use proc_macro::TokenStream;
use proc_macro2::{Ident, Span, TokenStream as TokenStream2};
use quote::{quote, ToTokens, TokenStreamExt};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;

/// Marks an NF module: `#[emu::nf(ports = N, window = BYTES)]` on `mod name { … }`.
///
/// - `ports`: the number of ports the hardware is built for, 1 to 32.
/// - `window`: the header window in bytes, from 14 (an Ethernet header) to 1518 (a whole
///   frame): the bytes the NF reads and writes; the rest of the frame passes through.
#[proc_macro_attribute]
pub fn nf(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(attr.into(), item.into()).into()
}

/// `#[derive(Bits)]` on a struct of fixed-width fields (a flow key): the struct is one value,
/// its fields' bits concatenated in declaration order (the first the most significant), as the
/// hardware holds it, so it can be a state element's key or value.
///
/// ```
/// use emu::prelude::*;
///
/// #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Bits)]
/// pub struct Flow {
///     pub src: Ipv4Addr,
///     pub port: u16,
///     pub proto: u8,
/// }
///
/// assert_eq!(Flow::WIDTH, 56);
/// let f = Flow { src: Ipv4Addr(0x0a00_0001), port: 80, proto: 6 };
/// let mut b = [0u8; 7];
/// f.write_be(&mut b);
/// assert_eq!(b, [10, 0, 0, 1, 0, 80, 6]);
/// assert_eq!(Flow::read_be(&b), f);
/// ```
#[proc_macro_derive(Bits)]
pub fn derive_bits(item: TokenStream) -> TokenStream {
    let s: syn::ItemStruct = match syn::parse(item) {
        Ok(s) => s,
        Err(e) => return syn::Error::new(e.span(), "`#[derive(Bits)]` goes on a struct").to_compile_error().into(),
    };
    let name = &s.ident;
    let named = match &s.fields {
        syn::Fields::Named(n) if !n.named.is_empty() => &n.named,
        _ => {
            return syn::Error::new_spanned(&s.ident, "`#[derive(Bits)]` needs a struct with named fields")
                .to_compile_error()
                .into()
        }
    };
    let idents: Vec<&Ident> = named.iter().map(|f| f.ident.as_ref().expect("named")).collect();
    let types: Vec<TokenStream2> = named.iter().map(|f| f.ty.to_token_stream()).collect();
    // Tuples of up to five implement `Bits`; more fields nest, which keeps the bits in order.
    fn nest(items: Vec<TokenStream2>) -> TokenStream2 {
        match items.len() {
            1 => items.into_iter().next().expect("one"),
            2..=5 => quote!((#(#items),*)),
            _ => nest(items.chunks(5).map(|c| nest(c.to_vec())).collect()),
        }
    }
    let ty = nest(types);
    let value = nest(idents.iter().map(|f| quote!(self.#f)).collect());
    let pattern = nest(idents.iter().map(|f| quote!(#f)).collect());
    let (generics, args, bounds) = s.generics.split_for_impl();
    quote! {
        impl #generics ::emu::Bits for #name #args #bounds {
            const WIDTH: usize = <#ty as ::emu::Bits>::WIDTH;
            fn write_be(&self, out: &mut [u8]) {
                ::emu::Bits::write_be(&#value, out)
            }
            fn read_be(bytes: &[u8]) -> Self {
                let #pattern = <#ty as ::emu::Bits>::read_be(bytes);
                #name { #(#idents),* }
            }
        }
    }
    .into()
}

/// The attribute's arguments.
#[derive(Default)]
struct Args {
    ports: Option<usize>,
    window: Option<usize>,
}

/// Two spans as tokens, so `syn::Error::new_spanned` covers `start..end`.
struct SpanRange(Span, Span);

impl ToTokens for SpanRange {
    fn to_tokens(&self, tokens: &mut TokenStream2) {
        tokens.append(Ident::new("start", self.0));
        tokens.append(Ident::new("end", self.1));
    }
}

fn push(errors: &mut Option<syn::Error>, e: syn::Error) {
    match errors {
        Some(all) => all.combine(e),
        None => *errors = Some(e),
    }
}

fn parse_args(attr: TokenStream2, errors: &mut Option<syn::Error>) -> Args {
    const USAGE: &str =
        "`#[emu::nf]` takes `ports = N` and `window = BYTES`, e.g. `#[emu::nf(ports = 4, window = 64)]`";
    let mut args = Args::default();
    let parsed = syn::parse::Parser::parse2(Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated, attr);
    let list = match parsed {
        Ok(list) => list,
        Err(e) => {
            push(errors, syn::Error::new(e.span(), format!("{e}; {USAGE}")));
            return args;
        }
    };
    for nv in list {
        let name = nv.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        let (slot, min, max, what) = match name.as_str() {
            "ports" => (&mut args.ports, 1, emu_core::MAX_PORTS, "the number of ports"),
            "window" => (
                &mut args.window,
                emu_core::wire::ethernet::HEADER_LEN,
                emu_core::DEFAULT_MAX_FRAME,
                "the header window in bytes",
            ),
            _ => {
                push(
                    errors,
                    syn::Error::new_spanned(
                        &nv.path,
                        format!("unknown argument `{}`; {USAGE}", nv.path.to_token_stream()),
                    ),
                );
                continue;
            }
        };
        if slot.is_some() {
            push(errors, syn::Error::new_spanned(&nv.path, format!("`{name}` is given twice")));
            continue;
        }
        let value = match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) if matches!(i.suffix(), "" | "usize") => {
                i.base10_parse::<usize>().ok()
            }
            _ => None,
        };
        match value {
            Some(v) if (min..=max).contains(&v) => *slot = Some(v),
            Some(v) => push(
                errors,
                syn::Error::new_spanned(&nv.value, format!("`{name} = {v}` is out of range: {what} is {min} to {max}")),
            ),
            None => push(
                errors,
                syn::Error::new_spanned(
                    &nv.value,
                    format!("`{name}` takes an integer literal ({what}), e.g. `{name} = {min}`"),
                ),
            ),
        }
    }
    for (name, given, example) in
        [("ports", args.ports.is_some(), "ports = 4"), ("window", args.window.is_some(), "window = 64")]
    {
        if !given && errors.is_none() {
            push(
                errors,
                syn::Error::new(
                    Span::call_site(),
                    format!("missing `{name}`: write `#[emu::nf({example}, …)]`; {USAGE}"),
                ),
            );
        }
    }
    args
}

fn expand(attr: TokenStream2, item: TokenStream2) -> TokenStream2 {
    let mut errors = None;
    let args = parse_args(attr, &mut errors);
    let mut module: syn::ItemMod = match syn::parse2(item.clone()) {
        Ok(m) => m,
        Err(_) => {
            let e = syn::Error::new_spanned(
                &item,
                "`#[emu::nf]` goes on an inline module that holds the NF: \
                 `#[emu::nf(ports = 4, window = 64)] pub mod my_nf { … }`",
            );
            let e = e.to_compile_error();
            return quote!(#item #e);
        }
    };
    if module.content.is_none() {
        push(
            &mut errors,
            syn::Error::new(
                module.span(),
                "write the NF module inline (`mod my_nf { … }`), so the macro sees its items",
            ),
        );
        let e = errors.map(|e| e.to_compile_error());
        return quote!(#module #e);
    }
    let source = module.to_token_stream().to_string();
    // With a bad `window` the checks of constant window indices are skipped, not guessed.
    let options = Options { window: args.window.unwrap_or(usize::MAX) };
    let probes = match check_module(&module, &options) {
        Ok(nf) => {
            // What only lowering refuses (a loop too long to unroll, a division it cannot
            // build) is an error here too, at the user's own line, not at `emu hls` time.
            if let Some(window) = args.window {
                if let Err(e) = emu_hls::lower::lower(&nf, window as u32) {
                    push(&mut errors, syn::Error::new(e.span, e.message));
                }
            }
            nf.probes
        }
        Err(found) => {
            for e in found {
                push(&mut errors, syn::Error::new_spanned(SpanRange(e.start, e.end), e.message));
            }
            Vec::new()
        }
    };
    let ports = args.ports.unwrap_or(0);
    let window = args.window.unwrap_or(0);
    let consts: [syn::Item; 3] = [
        syn::parse_quote! {
            /// The source of this NF module, as text, for the HLS compiler (`emu hls`).
            pub const HLS_SOURCE: &str = #source;
        },
        syn::parse_quote! {
            /// The number of ports the hardware is built for (`#[emu::nf(ports = …)]`).
            pub const HLS_PORTS: usize = #ports;
        },
        syn::parse_quote! {
            /// The header window in bytes (`#[emu::nf(window = …)]`).
            pub const HLS_WINDOW: usize = #window;
        },
    ];
    if let Some((_, items)) = &mut module.content {
        items.extend(consts);
        // Only a module that passed the checks gets the debugger's view: on one that did not,
        // the method would add errors about the same fields.
        if errors.is_none() {
            add_elements(items);
        }
        let checked = errors.is_none();
        let mut rewrite = ProbeRewrite { probes: &probes, checked, errors: None };
        for item in items.iter_mut() {
            syn::visit_mut::VisitMut::visit_item_mut(&mut rewrite, item);
        }
        if let Some(e) = rewrite.errors {
            push(&mut errors, e);
        }
        if checked && !probes.is_empty() {
            add_probes(items, &probes);
        }
    }
    let errors = errors.map(|e| e.to_compile_error());
    quote!(#module #errors)
}

/// Writes `NetworkFunction::elements` into the module's `impl NetworkFunction for S`: every
/// named field of the state struct `S`, by name, in declaration order, so a debugger reaches
/// the state by the names in the source (and in `symbols.json`).
fn add_elements(items: &mut [syn::Item]) {
    let Some(state) = items.iter().find_map(|item| match item {
        syn::Item::Impl(i)
            if i.trait_
                .as_ref()
                .is_some_and(|(_, p, _)| p.segments.last().is_some_and(|s| s.ident == "NetworkFunction")) =>
        {
            match &*i.self_ty {
                syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.clone()),
                _ => None,
            }
        }
        _ => None,
    }) else {
        return;
    };
    let fields: Vec<Ident> = items
        .iter()
        .find_map(|item| match item {
            syn::Item::Struct(s) if s.ident == state => match &s.fields {
                syn::Fields::Named(f) => Some(f.named.iter().filter_map(|f| f.ident.clone()).collect()),
                _ => None,
            },
            _ => None,
        })
        .unwrap_or_default();
    let names = fields.iter().map(|f| f.to_string());
    let method: syn::ImplItem = syn::parse_quote! {
        fn elements(&mut self) -> ::std::vec::Vec<(&'static str, &mut dyn ::emu::state::Element)> {
            ::std::vec![#((#names, &mut self.#fields as &mut dyn ::emu::state::Element)),*]
        }
    };
    add_to_nf_impl(items, method);
}

/// `emu::probe!` or `emu::count!` (with or without the `emu::`): `Some(true)` for a probe.
fn probe_macro(mac: &syn::Macro) -> Option<bool> {
    let segs: Vec<String> = mac.path.segments.iter().map(|s| s.ident.to_string()).collect();
    match segs.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["emu", m] | [m] if m == "probe" || m == "count" => Some(m == "probe"),
        _ => None,
    }
}

/// Replaces each `emu::probe!(name, value)` with a write of `value` into the module's probe
/// table and each `emu::count!(name)` with an increment, by the probe's number.
struct ProbeRewrite<'a> {
    probes: &'a [emu_hls::front::ast::Probe],
    /// The module passed the checks: the probes are numbered. Otherwise each macro becomes
    /// its value alone, so the checker's errors are the only ones.
    checked: bool,
    errors: Option<syn::Error>,
}

impl ProbeRewrite<'_> {
    fn replace(&mut self, mac: &syn::Macro) -> Option<syn::Expr> {
        let is_probe = probe_macro(mac)?;
        let args = mac
            .parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
            .ok()
            .filter(|a| a.len() == if is_probe { 2 } else { 1 })?;
        let value = args.get(1);
        let name = match &args[0] {
            syn::Expr::Path(p) => p.path.get_ident()?.to_string(),
            _ => return None,
        };
        let index = self.probes.iter().position(|p| p.name == name);
        let index = match (self.checked, index) {
            (true, Some(i)) => i,
            (true, None) => {
                // Only a function `process` does not reach can hold a probe the checker did
                // not see.
                push(
                    &mut self.errors,
                    syn::Error::new_spanned(
                        mac,
                        format!(
                            "`{name}` is in a function `process` never calls, so no packet passes it; probes go in \
                             `process` or the functions it calls"
                        ),
                    ),
                );
                return Some(syn::parse_quote!(()));
            }
            (false, _) => {
                return Some(match value {
                    Some(v) => syn::parse_quote!({ let _ = #v; }),
                    None => syn::parse_quote!(()),
                })
            }
        };
        Some(match value {
            Some(v) => syn::parse_quote!({
                let __emu_probe_value = #v;
                __EMU_PROBES.with(|p| p.record(#index, __emu_probe_value));
            }),
            None => syn::parse_quote!(__EMU_PROBES.with(|p| p.count(#index))),
        })
    }
}

impl syn::visit_mut::VisitMut for ProbeRewrite<'_> {
    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        if let syn::Expr::Macro(m) = e {
            if let Some(new) = self.replace(&m.mac) {
                *e = new;
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }

    fn visit_stmt_mut(&mut self, s: &mut syn::Stmt) {
        if let syn::Stmt::Macro(m) = s {
            if let Some(new) = self.replace(&m.mac) {
                *s = syn::Stmt::Expr(new, Some(Default::default()));
                return;
            }
        }
        syn::visit_mut::visit_stmt_mut(self, s);
    }
}

/// Declares the module's probe table (one per thread) and writes `NetworkFunction::probes`.
fn add_probes(items: &mut Vec<syn::Item>, probes: &[emu_hls::front::ast::Probe]) {
    use emu_hls::front::ast::Ty;
    let decls = probes.iter().map(|p| {
        let name = &p.name;
        let (kind, width, shown) = match &p.value {
            None => (quote!(Count), 64, quote!(Uint)),
            Some(t) => {
                let shown = match t {
                    Ty::Bool => quote!(Bool),
                    Ty::Mac => quote!(Mac),
                    Ty::Ipv4Addr => quote!(Ipv4),
                    Ty::Bytes(_) => quote!(Hex),
                    _ => quote!(Uint),
                };
                (quote!(Value), t.width().expect("the checker gave the probe a width") as usize, shown)
            }
        };
        quote! {
            ::emu::probe::ProbeDecl {
                name: #name,
                kind: ::emu::probe::ProbeKind::#kind,
                shape: ::emu::state::Shape { width: #width, shown: ::emu::state::Shown::#shown },
            }
        }
    });
    items.push(syn::parse_quote! {
        ::std::thread_local! {
            /// The values of this module's `emu::probe!`s and `emu::count!`s (one table per
            /// thread; see `emu::probe`).
            #[doc(hidden)]
            pub static __EMU_PROBES: ::emu::probe::Probes = ::emu::probe::Probes::new(&[#(#decls),*]);
        }
    });
    let method: syn::ImplItem = syn::parse_quote! {
        fn probes(&self) -> ::std::option::Option<&'static ::std::thread::LocalKey<::emu::probe::Probes>> {
            ::std::option::Option::Some(&__EMU_PROBES)
        }
    };
    add_to_nf_impl(items, method);
}

/// Adds `method` to the module's `impl NetworkFunction for …`.
fn add_to_nf_impl(items: &mut [syn::Item], method: syn::ImplItem) {
    let nf_impl = items.iter_mut().find_map(|item| match item {
        syn::Item::Impl(i)
            if i.trait_
                .as_ref()
                .is_some_and(|(_, p, _)| p.segments.last().is_some_and(|s| s.ident == "NetworkFunction")) =>
        {
            Some(i)
        }
        _ => None,
    });
    if let Some(i) = nf_impl {
        i.items.push(method);
    }
}

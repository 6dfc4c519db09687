//! The front end: checks an NF's source against the synthesizable subset and types it.
//!
//! `#[emu::nf(ports = …, window = …)]` goes on an **inline module** holding the NF: the state
//! struct, its `impl NetworkFunction`, the helper functions and constants. The macro runs
//! [`check_module`] at compile time, so a construct outside the subset is an error in the
//! author's editor; `emu hls` runs the same check on `HLS_SOURCE` (the module's text) before
//! lowering. For tools that have a whole file, [`check_file`] takes the file's items as the
//! module's, and [`find_nf_module`] finds an annotated module in a file.
//!
//! The subset and its error messages are documented, one example per rule, in
//! `docs/hls-subset.md` (the examples there are checked by this module's tests).
//!
//! # What the hardware is
//!
//! The hardware is the state struct's fields, `process`, and what `process` reaches: the
//! functions of the module it calls (transitively), the `const`s, enums and type aliases they
//! name. Only those are checked. Everything else in the module — constructors such as `new`,
//! `Default` impls, descriptors, parameters, tests — runs on the CPU only, and is listed in
//! [`Nf::cpu_only`] (functions) or ignored (other items). There is no rule specific to any NF.
//!
//! # The typed AST
//!
//! On success the check returns an [`Nf`] (see [`ast`]):
//!
//! ```text
//! Nf { name, state: State { name, fields: [StateField { name, kind: Element(Element { kind, types, sizes })
//!                                                              | Value(Ty) }] },
//!      fns: [Func { name, receiver, params: [LocalId], ret: Ty, locals: [Local { name, ty, mutable }],
//!                   body: Block { stmts: [Let { pat, init, els } | Expr], tail, ty } }],   // fns[0] = process
//!      consts: [Const { name, ty, value }], enums: [EnumDef], cpu_only: [String] }
//! Expr { kind, ty: Ty, span }  where kind is one of
//!      Int | Bool | Const{name,value} | Local(id) | SelfField(name) | MetaField(name) | Field{base,index}
//!      | Unary | Binary | Cast | Tuple | Variant{Some/None/Ok/Err/Action/DropReason/Enum, args}
//!      | Call{func: index into fns, args} | Lib{op: LibOp, args} | WindowByte(i) | Borrow{field,mutable}
//!      | Assign{place, op, value} | If | Match{scrutinee, arms: [Arm{pat, guard, body}]}
//!      | For{var, start, end, body} | Block | Break | Continue | Return
//! LibOp = Packet(method) | View{header, mutable} | GetField{header, field} | SetField{header, field}
//!       | ViewMethod{header, method} | State{field, element, method, writes} | Checksum(name)
//!       | Method{ty, method} | Assoc{ty, name}
//! Ty = Bool | Int{bits, signed, size} | Mac | Ipv4Addr | PortMask | Bytes(n) | Action | DropReason | Enum
//!    | Option | Result | Tuple | Packet | Meta | View{header, mutable} | StateRef{field, mutable} | Never
//! ```
//!
//! Everything a lowering needs is resolved: each local has one id (shadowing is gone),
//! `if let` is a `match`, header views carry their header's name in `emu_core::wire::HEADERS`
//! (where the field offsets are) and their byte offset as `args[1]`, constants are folded,
//! literal types are inferred, and every call names either a function of [`Nf::fns`] or a
//! [`ast::LibOp`].
//!
//! ```
//! use emu_hls::front::{check_module, Options};
//!
//! let module: syn::ItemMod = syn::parse_str(r#"
//!     mod mirror {
//!         use emu::prelude::*;
//!         pub struct Mirror { frames: Counter }
//!         impl NetworkFunction for Mirror {
//!             fn process(&mut self, pkt: &mut Packet, _meta: &Meta) -> Action {
//!                 self.frames.inc();
//!                 Action::Reply
//!             }
//!         }
//!     }
//! "#).unwrap();
//! let nf = check_module(&module, &Options { window: 64 }).unwrap();
//! assert_eq!(nf.state.fields[0].name, "frames");
//! assert_eq!(nf.fns[0].name, "process");
//!
//! let bad: syn::ItemMod = syn::parse_str(r#"
//!     mod bad {
//!         pub struct Bad;
//!         impl NetworkFunction for Bad {
//!             fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
//!                 let scale = 1.5;
//!                 Action::Flood
//!             }
//!         }
//!     }
//! "#).unwrap();
//! let errors = check_module(&bad, &Options { window: 64 }).unwrap_err();
//! assert!(errors[0].message.starts_with("floating point is not in the subset"));
//! ```

pub mod ast;
mod body;
mod check;
pub mod error;
pub mod library;

pub use ast::Nf;
pub use error::Error;

/// What the checker needs to know of the NF's attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The header window in bytes (`#[emu::nf(window = …)]`): constant window indices are
    /// checked against it.
    pub window: usize,
}

/// Checks an NF module (`mod name { … }`, with its items inline) against the subset. Returns
/// the typed AST, or every error found.
pub fn check_module(module: &syn::ItemMod, options: &Options) -> Result<Nf, Vec<Error>> {
    let Some((_, items)) = &module.content else {
        return Err(vec![Error::spanned(
            module,
            "the NF module must be written inline (`mod my_nf { … }`), so the compiler sees its items",
        )]);
    };
    check::check_items(&module.ident.to_string(), items, &module.ident, options)
}

/// Checks a whole file as one NF module called `name` (for NFs not written as a module).
pub fn check_file(file: &syn::File, name: &str, options: &Options) -> Result<Nf, Vec<Error>> {
    let nothing = proc_macro2::TokenStream::new();
    let whole: &dyn quote::ToTokens = match file.items.first() {
        Some(item) => item,
        None => &nothing,
    };
    check::check_items(name, &file.items, whole, options)
}

/// The first inline module of `file` that carries an `#[nf(…)]` / `#[emu::nf(…)]` attribute.
pub fn find_nf_module(file: &syn::File) -> Option<&syn::ItemMod> {
    file.items.iter().find_map(|item| match item {
        syn::Item::Mod(m) if m.attrs.iter().any(|a| a.path().segments.last().is_some_and(|s| s.ident == "nf")) => {
            Some(m)
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests;

//! The HLS intermediate representation: one function per NF, a control-flow graph of basic
//! blocks holding typed operations on fixed-width bit vectors.
//!
//! - **Values** are SSA: defined once, by an instruction result or a block parameter
//!   (block parameters with jump arguments replace phi nodes, as in Cranelift). Every value
//!   has a [`Type`]: an unsigned bit vector of 1 to [`MAX_WIDTH`] bits.
//! - **Instructions** hold one [`Op`] each: constants, arithmetic, bitwise, shifts,
//!   comparisons, casts, select, slice, concat; packet window reads and writes at constant or
//!   computed byte offsets; packet length; metadata; one's-complement sums and the checksum
//!   fold; operations on the function's **state elements** (counters, registers, arrays,
//!   CAMs). Each op's exact semantics is on its variant ([`op`]).
//! - **Blocks** end in a [`Terminator`]: `jump`, `br` (two-way branch) or `return` of an
//!   [`ActionExpr`] (the packet's verdict).
//! - Everything lives in typed arenas ([`entity`]) named by `u32` handles.
//!
//! Make functions with the [`Builder`]; print them with `Display` ([`print`]); read the text
//! back with [`parse()`]; check them with [`verify()`].
//!
//! ```
//! use emu_hls::ir;
//!
//! let text = "\
//! fn count_and_flood(window=64) {
//!     state frames: counter<u64>
//!
//! block0:
//!     counter.inc frames
//!     return flood
//! }
//! ";
//! let f = ir::parse(text).unwrap();
//! ir::verify(&f).unwrap();
//! assert_eq!(f.to_string(), text);
//! ```

pub mod bits;
pub mod bounds;
pub mod builder;
pub mod cfg;
pub mod entity;
pub mod eval;
pub mod function;
pub mod op;
pub mod parse;
pub mod print;
pub mod types;
pub mod verify;
pub mod visit;

pub use bits::{BitVec, MAX_WIDTH};
pub use builder::{field, header, Builder, Evicted, Maybe, Var};
pub use cfg::{Cfg, DomTree};
pub use entity::{Arena, EntityRef, SecondaryMap};
pub use function::{
    ActionExpr, Block, BlockCall, BlockData, Function, Inst, InstData, StateDecl, StateId, StateKind, StateRole,
    Terminator, Value, ValueData, ValueDef,
};
pub use op::{Addr, BinaryOp, CastOp, CmpOp, Effect, MetaField, Op, StateOp, SumScope, UnaryOp};
pub use parse::{parse, ParseError};
pub use types::{u, Type};
pub use verify::{verify, VerifyError, VerifyErrors};

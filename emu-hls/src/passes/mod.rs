//! Optimization passes over the IR.
//!
//! One pass = one file = one struct implementing [`Pass`], with a name and a one-line
//! description, listed in [`registry`] (the one place passes are registered). Every pass keeps
//! the function verified and its behaviour (the interpreter's results) unchanged.
//!
//! | name | what it does |
//! |---|---|
//! | `const-fold` | evaluates operations on constants, simplifies identities, folds branches on constants |
//! | `if-convert` | turns a branch whose arms are short and side-effect-free into `select`s |
//! | `hoist` | moves a block's short, side-effect-free head into its dominator, so the block is bare |
//! | `simplify-cfg` | merges straight-line blocks, skips empty ones, drops parameters that always get one value |
//! | `dce` | removes unreachable blocks, unused side-effect-free instructions and unused block parameters |
//!
//! [`optimize`] runs them in that order until nothing changes.

mod const_fold;
mod dce;
mod hoist;
mod if_convert;
mod simplify_cfg;

pub use const_fold::ConstFold;
pub use dce::Dce;
pub use hoist::Hoist;
pub use if_convert::IfConvert;
pub use simplify_cfg::SimplifyCfg;

use crate::ir::{verify, Function, VerifyErrors};

/// A transformation of a function.
pub trait Pass {
    /// The pass's name, kebab-case (`const-fold`), as tools and golden files name it.
    fn name(&self) -> &'static str;
    /// What the pass does, one line.
    fn description(&self) -> &'static str;
    /// Transforms `func` (which is verified) and says whether anything changed.
    fn run(&mut self, func: &mut Function) -> bool;
}

/// Every pass, in the order [`optimize`] runs them.
pub fn registry() -> Vec<Box<dyn Pass>> {
    vec![
        Box::new(ConstFold),
        Box::new(IfConvert::default()),
        Box::new(Hoist::default()),
        Box::new(SimplifyCfg),
        Box::new(Dce),
    ]
}

/// The pass called `name`.
pub fn by_name(name: &str) -> Option<Box<dyn Pass>> {
    registry().into_iter().find(|p| p.name() == name)
}

/// Runs `pass` on `func` and verifies the result; an `Err` is a bug in the pass.
pub fn run_verified(pass: &mut dyn Pass, func: &mut Function) -> Result<bool, VerifyErrors> {
    let changed = pass.run(func);
    verify(func).map_err(|VerifyErrors(mut e)| {
        for x in &mut e {
            x.message = format!("{} (after pass {})", x.message, pass.name());
        }
        VerifyErrors(e)
    })?;
    Ok(changed)
}

/// The most rounds [`optimize`] runs before it stops looking for a fixed point.
pub const MAX_ROUNDS: usize = 16;

/// Runs every pass of the [`registry`] in order, repeatedly, until a round changes nothing
/// (at most [`MAX_ROUNDS`] rounds), verifying after each pass. Gives the number of rounds.
pub fn optimize(func: &mut Function) -> Result<usize, VerifyErrors> {
    let mut passes = registry();
    for round in 1..=MAX_ROUNDS {
        let mut changed = false;
        for p in passes.iter_mut() {
            changed |= run_verified(p.as_mut(), func)?;
        }
        if !changed {
            return Ok(round);
        }
    }
    Ok(MAX_ROUNDS)
}

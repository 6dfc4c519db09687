//! The attribute goes on a module.
#![allow(dead_code, unused)]

use emu::prelude::*;

#[emu::nf(ports = 4, window = 64)]
pub struct Hub;

fn main() {}

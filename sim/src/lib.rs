//! Emu's cross-target simulator: runs one NF through several tiers on the same traffic and
//! diffs their outputs (docs/architecture.md §6).
//!
//! Tiers: `cpu` (the CPU target itself, `emu-cpu`), `ir` (the NF's source through the HLS
//! front end and lowering, run by the IR interpreter: [`ir_tier`]), `cycle` (the generated
//! hardware's cycle-accurate model) and `verilator` (the generated Verilog under Verilator:
//! [`verilator`]), the last two driven through their stream ports by [`hw_tier`]. [`diff`]
//! compares tiers. [`verilator`] builds the generated Verilog into a Verilator model with the
//! same ports (checked against the cycle model cycle for cycle; `HwNf::new` takes it).
//! [`iverilog`] replays a recorded run on the Verilog under Icarus Verilog, a second,
//! event-driven simulator. [`fuzz`] makes seeded traffic for `emu sim --fuzz`. [`profile`] records what a run's packets cost on any tier (`--profile`), [`plot`] draws it.
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod cache;
pub mod diff;
pub mod fuzz;
pub mod hw_debug;
pub mod hw_tier;
pub mod ir_tier;
pub mod iverilog;
pub mod plot;
pub mod profile;
// Loading the compiled model and calling its C functions is unsafe by nature; the module
// keeps it behind a safe `Clocked` implementation.
#[allow(unsafe_code)]
pub mod verilator;

use core::fmt;
use core::str::FromStr;

/// A simulation tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    /// The native CPU target: the reference semantics.
    Cpu,
    /// Untimed interpretation of the HLS IR.
    Ir,
    /// The scheduled FSM stepped in Rust, cycle by cycle.
    Cycle,
    /// The generated Verilog under Verilator.
    Verilator,
}

impl Tier {
    /// Every tier, in the order they are run and reported.
    pub const ALL: [Tier; 4] = [Tier::Cpu, Tier::Ir, Tier::Cycle, Tier::Verilator];

    /// The tier's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Cpu => "cpu",
            Tier::Ir => "ir",
            Tier::Cycle => "cycle",
            Tier::Verilator => "verilator",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Tier {
    type Err = String;
    fn from_str(s: &str) -> Result<Tier, String> {
        Tier::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| format!("unknown tier `{s}`; tiers are cpu, ir, cycle, verilator"))
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in Tier::ALL {
            assert_eq!(t.name().parse::<Tier>(), Ok(t));
        }
        assert!("fpga".parse::<Tier>().unwrap_err().contains("tiers are cpu"));
    }
}

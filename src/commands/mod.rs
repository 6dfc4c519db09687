//! One module per verb.

pub(crate) mod dbg;
pub(crate) mod hls;
pub(crate) mod list;
pub(crate) mod mininet;
pub(crate) mod netfpga;
pub(crate) mod new;
pub(crate) mod profile;
pub(crate) mod progress;
pub(crate) mod run;
pub(crate) mod fuzz;
pub(crate) mod sim;
pub(crate) mod sim_debug;
pub(crate) mod synth;

//! Emu's Mininet target: runs any NF as the switches of a real Mininet topology and drives an
//! experiment on its hosts.
//!
//! The Rust side checks everything it can without root — the topology, the script, that
//! Mininet is installed — and writes a JSON spec; `driver.py` (run by `/usr/bin/python3`
//! with Debian's `mininet` package) builds the network, starts `emu run NF --iface …` as each
//! switch, runs the steps and tears everything down: the NF processes first, then
//! `net.stop()`, never Mininet's cleanup.
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod script;
pub mod topology;

pub use script::Step;
pub use topology::Topology;

use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Python driver, embedded so the tool works from any directory.
pub const DRIVER: &str = include_str!("driver.py");

/// The Python interpreter Debian's Mininet is installed for.
pub const PYTHON: &str = "/usr/bin/python3";

/// What the switches are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchKind {
    /// The NF, as `emu run`.
    Emu,
    /// A Linux bridge (Mininet's `LinuxBridge`), as a baseline to compare with.
    Bridge,
}

/// What to do once the network is up.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Run these steps.
    Script,
    /// Mininet's interactive CLI.
    Cli,
}

/// Everything the driver needs.
#[derive(Debug, Clone, Serialize)]
pub struct Experiment {
    /// The `emu` binary the switches run.
    pub emu: PathBuf,
    /// The NF's name.
    pub nf: String,
    /// The NF's own options, passed to `emu run`.
    pub nf_args: Vec<String>,
    /// Packet I/O of the live runner (`plain` or `ring`); `None` for its default.
    pub io: Option<String>,
    /// The network.
    pub topology: Topology,
    /// How `--topo` named it, for the report.
    pub topology_name: String,
    /// What the switches are.
    pub switch_kind: SwitchKind,
    /// Script or CLI.
    pub mode: Mode,
    /// The steps (script mode).
    pub steps: Vec<Step>,
    /// Working directory: NF logs, pid files, `$WORK` of the script.
    pub work_dir: PathBuf,
    /// Each switch's debug channel on, at `$WORK/<switch>.dbg`.
    pub debug: bool,
}

/// Checks that the experiment can run here: root, Python, Mininet.
pub fn check_host() -> Result<(), String> {
    if !is_root() {
        return Err("Mininet needs root (network namespaces, raw sockets): run emu mininet with sudo".into());
    }
    if !Path::new(PYTHON).exists() {
        return Err(format!("{PYTHON} not found: Mininet runs on Debian's Python 3 (apt-get install python3)"));
    }
    let ok = Command::new(PYTHON)
        .args(["-c", "import mininet.net"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        return Err("Mininet is not installed: install Debian's `mininet` package (apt-get install mininet), \
                    or run scripts/setup.sh"
            .into());
    }
    Ok(())
}

fn is_root() -> bool {
    // SAFETY-free: geteuid has no preconditions, but the libc call is still `unsafe` in Rust.
    #[allow(unsafe_code)]
    unsafe {
        libc::geteuid() == 0
    }
}

impl Experiment {
    /// Writes the spec and the driver into `work_dir` and runs the driver; output goes to this
    /// process's stdout. Returns the driver's exit status (0 passed, 1 a step failed, 2 setup
    /// failed).
    pub fn run(&self) -> Result<i32, String> {
        std::fs::create_dir_all(&self.work_dir).map_err(|e| format!("{}: {e}", self.work_dir.display()))?;
        let spec = self.work_dir.join("experiment.json");
        let driver = self.work_dir.join("driver.py");
        std::fs::write(&spec, serde_json::to_string_pretty(self).expect("spec serializes"))
            .map_err(|e| format!("{}: {e}", spec.display()))?;
        std::fs::write(&driver, DRIVER).map_err(|e| format!("{}: {e}", driver.display()))?;
        let status = Command::new(PYTHON)
            .arg(&driver)
            .arg(&spec)
            .status()
            .map_err(|e| format!("cannot start {PYTHON}: {e}"))?;
        Ok(status.code().unwrap_or(2))
    }
}

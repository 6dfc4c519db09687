//! `emu mininet`: an NF as the switches of a Mininet network.

use crate::cli::MininetArgs;
use emu::{Config, NfDescriptor};
use emu_mininet::{script, Experiment, Mode, Step, SwitchKind, Topology};

pub(crate) fn run(desc: &NfDescriptor, config: &Config, a: &MininetArgs) -> Result<i32, String> {
    let topology = Topology::parse(&a.topo)?;
    let steps = match &a.run {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            script::parse(&text, topology.host_names()).map_err(|e| format!("{}: {e}", path.display()))?
        }
        None => vec![Step::Pingall],
    };
    let switch_kind = match a.switch.as_str() {
        "emu" => SwitchKind::Emu,
        "linux-bridge" => SwitchKind::Bridge,
        other => return Err(format!("--switch {other}: give `emu` (the NF) or `linux-bridge`")),
    };
    if let Some(io) = &a.io {
        io.parse::<emu_cpu::IoMode>().map_err(|e| format!("--io {io}: {e}"))?;
    }
    // Options the NF rejects are reported now, not from inside Mininet.
    super::run::build(desc, config)?;
    emu_mininet::check_host()?;

    let emu = std::env::current_exe().map_err(|e| format!("cannot find the emu binary: {e}"))?;
    let work_dir = std::env::temp_dir().join(format!("emu-mininet-{}", std::process::id()));
    let nf_args = config.values().flat_map(|(k, v)| [format!("--{k}"), v.to_string()]).collect();
    let experiment = Experiment {
        emu,
        nf: desc.name.to_string(),
        nf_args,
        io: a.io.clone(),
        topology,
        topology_name: a.topo.clone(),
        switch_kind,
        mode: if a.cli { Mode::Cli } else { Mode::Script },
        steps,
        work_dir: work_dir.clone(),
        debug: a.debug,
    };
    let code = experiment.run()?;
    if code == 0 && !a.keep {
        let _ = std::fs::remove_dir_all(&work_dir);
    } else {
        eprintln!("the experiment's logs and spec are in {}", work_dir.display());
    }
    Ok(code)
}

//! `emu run`: an NF on the CPU, over captures or live interfaces.

use super::progress::Progress;
use crate::cli::{PcapArgs, RunArgs};
use emu::{Config, NetworkFunction, NfDescriptor};
use emu_cpu::{DebugOptions, Debugger, JsonLines, LiveDevice, NoDropLog, PcapDevice, Runner, Stats};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub(crate) fn run(desc: &NfDescriptor, config: &Config, a: &RunArgs) -> Result<i32, String> {
    match (a.pcap.inputs.is_empty(), a.iface.is_empty()) {
        (false, false) => Err("give either --in (capture files) or --iface (live interfaces), not both".into()),
        (true, true) => Err(format!(
            "nothing to run {} on: give --in FILE --out DIR for captures, or --iface IF,IF,... for live interfaces \
             (`emu run --help` has examples)",
            desc.name
        )),
        (false, true) if a.debug_port.is_some() || a.debug_socket.is_some() => Err(
            "the debug channel is for live runs (--iface): a capture run does not wait for the debugger; \
             to see a capture's packets one by one, replay it into an interface with tcpreplay"
                .into(),
        ),
        (false, true) => {
            let out =
                a.pcap.out.as_deref().ok_or("--out DIR is required with --in: it is where the output pcaps go")?;
            match &a.profile {
                None => run_pcaps(desc, config, &a.pcap, out),
                Some(file) => {
                    let (nf, profile) = super::profile::native(desc, config, build(desc, config)?);
                    let code = run_pcaps_with(desc, nf, &a.pcap, out)?;
                    super::profile::write_run(desc.name, profile.profile("cpu"), file, a.pcap.json)?;
                    Ok(code)
                }
            }
        }
        (true, false) => run_live(desc, config, a),
    }
}

pub(crate) fn build(desc: &NfDescriptor, config: &Config) -> Result<Box<dyn NetworkFunction + Send>, String> {
    (desc.build)(config).map_err(|e| format!("{}: {e}", desc.name))
}

pub(crate) fn port_count(desc: &NfDescriptor, requested: Option<usize>) -> Result<usize, String> {
    let n = requested.unwrap_or(desc.ports);
    if n == 0 || n > emu::MAX_PORTS {
        return Err(format!("--ports {n}: give a number of ports from 1 to {}", emu::MAX_PORTS));
    }
    Ok(n)
}

/// Runs `desc` over the captures of `p`, writing into `out`; prints the summary.
pub(crate) fn run_pcaps(desc: &NfDescriptor, config: &Config, p: &PcapArgs, out: &Path) -> Result<i32, String> {
    run_pcaps_with(desc, build(desc, config)?, p, out)
}

/// [`run_pcaps`] with an NF already built (the simulator's tiers build theirs).
pub(crate) fn run_pcaps_with(
    desc: &NfDescriptor,
    nf: Box<dyn NetworkFunction + Send>,
    p: &PcapArgs,
    out: &Path,
) -> Result<i32, String> {
    let ports = port_count(desc, p.ports)?;
    let device = PcapDevice::new(&p.inputs, out, ports).map_err(|e| e.to_string())?;
    let outputs: Vec<PathBuf> = device.output_paths().to_vec();
    let drops_path = out.join("drops.jsonl");
    let file = std::fs::File::create(&drops_path).map_err(|e| format!("{}: {e}", drops_path.display()))?;
    let mut drops = JsonLines(BufWriter::new(file));
    let sent_path = out.join("sent.jsonl");
    let sent = std::fs::File::create(&sent_path).map_err(|e| format!("{}: {e}", sent_path.display()))?;
    let mut device = Progress::new(device);
    let mut runner = Runner::new(nf, ports, desc.window)
        .with_max_frame(p.max_frame)
        .with_sent_log(Box::new(JsonLines(BufWriter::new(sent))));
    let result = runner.run(&mut device, &mut drops);
    drops.0.flush().map_err(|e| format!("{}: {e}", drops_path.display()))?;
    let _ = device.into_inner();

    let summary = serde_json::json!({
        "nf": desc.name,
        "ports": ports,
        "complete": result.is_ok(),
        "error": result.as_ref().err().map(|e| e.to_string()),
        "stats": runner.stats(),
        "nf_summary": runner.nf().summary(),
        "outputs": outputs,
        "drops": drops_path,
        "sent": sent_path,
    });
    let summary_path = out.join("summary.json");
    std::fs::write(&summary_path, serde_json::to_string_pretty(&summary).unwrap() + "\n")
        .map_err(|e| format!("{}: {e}", summary_path.display()))?;
    if p.json {
        println!("{}", serde_json::to_string_pretty(&summary).unwrap());
    } else {
        print_summary(desc, runner.stats(), &runner.nf().summary());
        println!("wrote {} port pcaps, sent.jsonl, drops.jsonl and summary.json to {}", ports, out.display());
    }
    result.map_err(|e| e.to_string())?;
    Ok(0)
}

pub(crate) fn print_summary(desc: &NfDescriptor, stats: &Stats, nf_summary: &str) {
    let tx: u64 = stats.ports().iter().map(|p| p.tx_packets).sum();
    println!(
        "{}: {} frames in, {} frames out, {} dropped, {} ports",
        desc.name,
        stats.rx_packets(),
        tx,
        stats.dropped(),
        stats.ports().len()
    );
    print!("{stats}");
    if !nf_summary.is_empty() {
        println!("{}", nf_summary.trim_end());
    }
}

fn run_live(desc: &NfDescriptor, config: &Config, a: &RunArgs) -> Result<i32, String> {
    if a.pcap.out.is_some() {
        return Err("--out goes with --in; for a live run, --drops FILE records the drops".into());
    }
    let ports = a.iface.len();
    if let Some(n) = a.pcap.ports {
        if n != ports {
            return Err(format!("--ports {n} does not match the {ports} interfaces given; leave --ports out"));
        }
    }
    // Every argument is checked before an interface is opened or a line printed.
    if let Some(p) = a.debug_port.filter(|&p| p as usize >= ports) {
        return Err(format!(
            "--debug-port {p}: the run has ports 0 to {} (one per --iface); give the management interface's port",
            ports - 1
        ));
    }
    let mut nf = build(desc, config)?;
    let mut profile = None;
    if a.profile.is_some() {
        let (wrapped, handle) = super::profile::native(desc, config, nf);
        nf = wrapped;
        profile = Some(handle);
    }
    emu_cpu::live::stop_on_signals();
    let mut device = LiveDevice::open_with(&a.iface, a.io).map_err(|e| e.to_string())?;
    for (name, why) in device.ring_fallbacks() {
        eprintln!("{}: {name}: no receive ring ({why}); using plain sockets there", desc.name);
    }
    let names: Vec<String> =
        device.io_modes().iter().enumerate().map(|(k, (n, io))| format!("{n} (port {k}, {io})")).collect();
    eprintln!("{}: running on {}; Ctrl-C stops", desc.name, names.join(", "));
    let mut runner = Runner::new(nf, ports, desc.window).with_max_frame(a.pcap.max_frame);
    if a.debug_port.is_some() || a.debug_socket.is_some() {
        let options = DebugOptions {
            port: a.debug_port,
            socket: a.debug_socket.clone(),
            hold_depth: None,
            break_timeout: Some(a.break_timeout),
        };
        let debugger = Debugger::new(desc.name, &options).map_err(|e| format!("the debug channel: {e}"))?;
        if let Some(path) = &a.debug_socket {
            eprintln!("{}: debug socket at {} (`emu dbg {}`)", desc.name, path.display(), path.display());
        }
        runner = runner.with_debugger(debugger);
    }
    let result = match &a.drops {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut sink = JsonLines(BufWriter::new(file));
            let r = runner.run(&mut device, &mut sink);
            sink.0.flush().map_err(|e| format!("{}: {e}", path.display()))?;
            r
        }
        None => runner.run(&mut device, &mut NoDropLog),
    };
    match device.end_reason() {
        Some(emu_cpu::EndReason::InterfaceGone(name)) => {
            eprintln!("{}: interface `{name}` went away; stopped", desc.name)
        }
        Some(emu_cpu::EndReason::Signal) => eprintln!("{}: stopped by signal", desc.name),
        None => {}
    }
    let kernel_drops = device.kernel_drops();
    if kernel_drops > 0 {
        eprintln!(
            "{}: the kernel dropped {kernel_drops} frames before the NF read them (it fell behind the offered load{})",
            desc.name,
            if a.io == emu_cpu::IoMode::Plain { "; --io ring is faster" } else { "" }
        );
    }
    if device.tx_errors > 0 {
        eprintln!("{}: {} frames could not be sent (too big for the MTU, or queue full)", desc.name, device.tx_errors);
    }
    if a.pcap.json {
        let summary =
            serde_json::json!({"nf": desc.name, "stats": runner.stats(), "nf_summary": runner.nf().summary()});
        println!("{}", serde_json::to_string_pretty(&summary).unwrap());
    } else {
        print_summary(desc, runner.stats(), &runner.nf().summary());
    }
    if let (Some(handle), Some(file)) = (profile, &a.profile) {
        super::profile::write_run(desc.name, handle.profile("cpu"), file, a.pcap.json)?;
    }
    result.map_err(|e| e.to_string())?;
    Ok(0)
}

//! `emu netfpga`: an NF as the output port lookup of the NetFPGA SUME reference switch, as a
//! Vivado project (emu-fpga's `project`), built to a bitstream when Vivado is on the PATH.

use crate::cli::{HlsArgs, NetfpgaArgs};
use crate::commands::hls;
use crate::registry::Registry;
use emu::{Config, NfDescriptor};
use emu_fpga::{opl, project, vivado};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The boards `emu netfpga` builds for.
const BOARDS: &[(&str, &str)] = &[("sume", "NetFPGA SUME (Virtex-7 xc7vx690t)")];

/// Runs `emu netfpga`. `config_of` gives a registered NF's options from the command line.
pub(crate) fn run(
    registry: &Registry,
    a: &NetfpgaArgs,
    config_of: impl Fn(&NfDescriptor) -> Config,
) -> Result<i32, String> {
    let start = Instant::now();
    if !BOARDS.iter().any(|(b, _)| *b == a.board) {
        let known: Vec<String> = BOARDS.iter().map(|(b, what)| format!("{b} ({what})")).collect();
        return Err(format!(
            "unknown board `{}`: `emu netfpga` builds for {}; give --board sume, or for an iCE40 \
             bitstream with the open toolchain run `emu synth {} --board icebreaker`",
            a.board,
            known.join(", "),
            a.nf
        ));
    }
    if a.width != opl::DATA_BITS as usize {
        return Err(format!(
            "--width {}: the NetFPGA SUME pipeline is {} bits wide; leave --width out (64-bit builds are \
             for `emu hls` and `emu synth`)",
            a.width,
            opl::DATA_BITS
        ));
    }
    let out = a.out.as_deref().ok_or(
        "-o DIR is required: it is where the Vivado project goes (e.g. `emu netfpga learning-switch -o sume/`)",
    )?;
    let hls_args = HlsArgs {
        nf: a.nf.clone(),
        out: None,
        width: a.width,
        max_frame: a.max_frame,
        clock_mhz: 200.0,
        params: a.params.clone(),
        module: a.module.clone(),
        debug: false,
        debug_port: None,
    };
    let source = hls::resolve(registry, &hls_args, config_of)?;
    let design = hls::design(&source, a.width, a.max_frame, a.debug, a.debug_port)?;
    let modules = hls::verilog_modules(&source.label, &design)?;
    let (verilog, _stale) = hls::write_verilog(out, &modules)?;
    let relative: Vec<String> = modules.iter().map(|(name, _)| format!("verilog/{name}.v")).collect();
    let files = project::files(&design, &source.label, &relative).map_err(|e| format!("{}: {e}", source.label))?;
    for (name, text) in &files {
        let path = out.join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }

    println!(
        "{}: the output port lookup of the NetFPGA SUME reference switch ({}, {} MHz data path), \
         frames up to {} bytes",
        source.label,
        project::PART,
        project::CLOCK_MHZ,
        a.max_frame
    );
    println!("  wrote {} ({} Verilog files of the NF)", out.join("verilog").display(), verilog.len());
    for (name, _) in files.iter().filter(|(n, _)| !n.starts_with("sim/")) {
        println!("        {}", out.join(name).display());
    }
    println!("        {} (the SUME-level simulation, for Verilator)", out.join("sim").display());
    println!(
        "  registers: {} on AXI4-Lite; the map is in {}",
        opl::register_map(&design).len(),
        out.join("README.md").display()
    );

    let Some(vivado_path) = find_on_path("vivado") else {
        println!(
            "Vivado was not found on the PATH: the project is ready in {dir}; where Vivado is installed, run \
             `SUME_FOLDER=/path/to/NetFPGA-SUME-live make -C {dir}`",
            dir = out.display()
        );
        return Ok(0);
    };
    if std::env::var_os(project::SUME_FOLDER).map_or(true, |v| v.is_empty()) {
        return Err(format!(
            "Vivado is on the PATH ({}), but SUME_FOLDER is not set: export SUME_FOLDER=/path/to/NetFPGA-SUME-live \
             (the reference switch and its input arbiter and output queues come from there), then run \
             `make -C {}` or this command again",
            vivado_path.display(),
            out.display()
        ));
    }
    build(out, &design, start)
}

/// Runs the flow (`make -C out`) and reports timing and utilisation; exit status 1 when timing
/// is not met.
fn build(out: &Path, design: &emu_hls::backend::Design, start: Instant) -> Result<i32, String> {
    let status = emu_fpga::synth::with_progress("Vivado: synthesis, place and route, bitstream (an hour or more)", || {
        Command::new("make").arg("-C").arg(out).status()
    })
    .map_err(|e| format!("cannot run make: {e}"))?;
    let log = out.join("vivado.log");
    if !status.success() {
        return Err(format!("the Vivado flow failed; its log is {}", log.display()));
    }
    let reports = out.join("reports");
    let summary = std::fs::read_to_string(reports.join("summary.txt")).unwrap_or_default();
    let (wns, whs) = vivado::summary(&summary);
    let util = vivado::utilisation(&std::fs::read_to_string(reports.join("utilization.rpt")).unwrap_or_default());
    match wns {
        Some(w) => println!(
            "  timing at {} MHz: WNS {w:.3} ns{}, WHS {} ({})",
            project::CLOCK_MHZ,
            if w >= 0.0 { " (met)" } else { " (NOT met)" },
            whs.map_or("?".into(), |h| format!("{h:.3} ns")),
            reports.join("timing_summary.rpt").display()
        ),
        None => println!("  timing: no slack in {}", reports.join("summary.txt").display()),
    }
    for (name, used, of) in &util {
        println!("  {name:<18} {used:>8} of {of} ({:.2}%)", 100.0 * *used as f64 / (*of).max(1) as f64);
    }
    println!("  bitstream: {}", out.join(project::bitstream(design)).display());
    println!("done in {:.1} s", start.elapsed().as_secs_f64());
    Ok(if wns.is_some_and(|w| w < 0.0) { 1 } else { 0 })
}

/// `program` in a directory of the PATH.
fn find_on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(program)).find(|p| p.is_file())
}

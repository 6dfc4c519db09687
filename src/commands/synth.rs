//! `emu synth`: an NF's generated Verilog through the open toolchain (the flows are
//! `emu_fpga::synth`): the resource table, with the change against the last run of the same
//! NF, width and part (`DIR/synth.json`), and for an iCE40 board the bitstream.

use crate::cli::{HlsArgs, SynthArgs};
use crate::commands::hls;
use crate::registry::Registry;
use emu::{Config, NfDescriptor};
use emu_fpga::synth::{check_part, check_tool, find_board, ice40, tool_version, xilinx, Outcome};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::{Instant, SystemTime};

/// Runs `emu synth`. `config_of` gives a registered NF's options from the command line.
pub(crate) fn run(
    registry: &Registry,
    a: &SynthArgs,
    config_of: impl Fn(&NfDescriptor) -> Config,
) -> Result<i32, String> {
    let start = Instant::now();
    let board = a.board.as_deref().map(find_board).transpose()?;
    let width = a.width.unwrap_or(if board.is_some() { 64 } else { 256 });
    if board.is_none() {
        check_part(&a.part)?;
    }
    if let Some(f) = a.freq {
        if !(f > 0.0 && f <= 1000.0) {
            return Err(format!("--freq {f}: give the clock to meet in MHz, e.g. --freq 12"));
        }
    }
    let hls_args = HlsArgs {
        nf: a.nf.clone(),
        out: None,
        width,
        max_frame: a.max_frame,
        clock_mhz: 200.0,
        params: a.params.clone(),
        module: a.module.clone(),
        debug: a.debug,
        debug_port: a.debug_port,
    };
    let source = hls::resolve(registry, &hls_args, config_of)?;
    let design = hls::design(&source, width, a.max_frame, a.debug, a.debug_port)?;
    let modules = hls::verilog_modules(&source.label, &design)?;
    let nf = design.func.name.replace('_', "-");
    let target = board.map_or_else(|| a.part.clone(), |b| b.name.to_string());
    let out = a.out.clone().unwrap_or_else(|| {
        PathBuf::from("synth").join(match board {
            Some(b) => format!("{nf}-{}", b.name),
            None => format!("{nf}-{width}"),
        })
    });

    let mut tools = vec!["yosys"];
    if board.is_some() {
        tools.extend(["nextpnr-ice40", "icepack"]);
    }
    for tool in &tools {
        check_tool(tool)?;
    }

    let (written, _stale) = hls::write_verilog(&out, &modules)?;
    let json_path = out.join("synth.json");
    let previous = std::fs::read_to_string(&json_path).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok());

    let flow = if board.is_some() { "ice40" } else { "synth_xilinx" };
    let outcome = match board {
        None => xilinx(&design, &modules, &a.part)?,
        Some(b) => ice40(&design, &modules, b, a.freq.unwrap_or(b.clock_mhz), &out, &nf)?,
    };

    // The header, then the table.
    match board {
        None => println!(
            "{}: yosys synth_xilinx -family xc7 for {} (a label: yosys maps to the 7-series family, \
             not to the part), {width}-bit bus, frames up to {} bytes",
            source.label, a.part, a.max_frame
        ),
        Some(b) => println!(
            "{}: iCE40 flow for the {} ({}): yosys synth_ice40, nextpnr-ice40, icepack; {width}-bit bus, \
             frames up to {} bytes",
            source.label, b.label, b.part, a.max_frame
        ),
    }
    let comparable = previous.as_ref().filter(|p| {
        p["nf"] == json!(nf) && p["flow"] == json!(flow) && p["target"] == json!(target) && p["width"] == json!(width)
    });
    print_table(&outcome, comparable);
    match (&previous, comparable) {
        (_, Some(p)) => {
            if p["max_frame"] != json!(a.max_frame) {
                println!("  (the last run had frames up to {} bytes)", p["max_frame"]);
            }
        }
        (Some(p), None) => println!(
            "  change: none to show: {} held a run of {} at {} bits for {}, not this one",
            json_path.display(),
            p["nf"].as_str().unwrap_or("?"),
            p["width"],
            p["target"].as_str().unwrap_or("?")
        ),
        (None, None) => println!("  change: first run (nothing in {} to compare with)", json_path.display()),
    }
    for note in &outcome.notes {
        println!("  {note}");
    }
    if !outcome.warnings.is_empty() {
        println!("  yosys warnings: {} (listed in {})", outcome.warnings.len(), json_path.display());
    }

    let record = json!({
        "nf": nf,
        "flow": flow,
        "target": target,
        "width": width,
        "max_frame": a.max_frame,
        "top": design.top_name(),
        "tools": tools.iter().map(|t| tool_version(t)).collect::<Vec<_>>(),
        "unix_time": SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        "resources": outcome.rows.iter().map(|r| (r.key.to_string(), json!(r.count))).collect::<serde_json::Map<_, _>>(),
        "freq_mhz": outcome.clock.map(|c| c.0),
        "fmax_mhz": outcome.clock.map(|c| c.1),
        "cells": outcome.cells,
        "warnings": outcome.warnings,
    });
    std::fs::write(&json_path, serde_json::to_string_pretty(&record).expect("JSON values serialize") + "\n")
        .map_err(|e| format!("cannot write {}: {e}", json_path.display()))?;

    println!("  wrote {} ({} Verilog files)", out.join("verilog").display(), written.len());
    if board.is_some() {
        for f in [
            format!("{nf}.bin"),
            "emu_ice40_top.v".into(),
            format!("{target}.pcf"),
            "yosys.log".into(),
            "nextpnr.log".into(),
        ] {
            println!("        {}", out.join(f).display());
        }
    }
    println!("        {}", json_path.display());
    println!("done in {:.1} s", start.elapsed().as_secs_f64());
    match outcome.clock {
        Some((want, got)) if got < want => {
            eprintln!(
                "error: timing not met: nextpnr reached {got:.2} MHz, below the {want:.2} MHz asked for; \
                 ask for less (--freq {:.0}) or shorten the NF's longest path (the critical path is in {})",
                got.floor().max(1.0),
                out.join("nextpnr.log").display()
            );
            Ok(1)
        }
        _ => Ok(0),
    }
}

/// `+12`, `-3`, `0`.
fn signed(d: i64) -> String {
    if d > 0 {
        format!("+{d}")
    } else {
        format!("{d}")
    }
}

/// The share of `n` in `of`: `86%`, `0.47%`.
fn share(n: u64, of: u64) -> String {
    let pct = 100.0 * n as f64 / of as f64;
    if pct == 0.0 {
        "0%".into()
    } else if pct < 0.01 {
        "<0.01%".into()
    } else if pct < 10.0 {
        format!("{pct:.2}%")
    } else {
        format!("{pct:.0}%")
    }
}

/// The resource table, with a change column when there is an earlier run to compare with.
fn print_table(outcome: &Outcome, previous: Option<&Value>) {
    let with_of = outcome.rows.iter().any(|r| r.of.is_some());
    let mut header = format!("  {:<26} {:>8}", "resource", "count");
    if with_of {
        header.push_str(&format!("  {:<16}", "of the device"));
    }
    if previous.is_some() {
        header.push_str(&format!("  {:>12}", "change"));
    }
    println!("{}", header.trim_end());
    for r in &outcome.rows {
        let mut line = format!("  {:<26} {:>8}", r.label, r.count);
        if with_of {
            let of = r.of.map(|t| format!("{} of {t}", share(r.count, t))).unwrap_or_default();
            line.push_str(&format!("  {of:<16}"));
        }
        if let Some(p) = previous {
            let change = match p["resources"][r.key].as_u64() {
                Some(before) => signed(r.count as i64 - before as i64),
                None => "new".into(),
            };
            line.push_str(&format!("  {change:>12}"));
        }
        println!("{}", line.trim_end());
    }
    if let Some((_, fmax)) = outcome.clock {
        let mut line = format!("  {:<26} {:>8.2}", "max clock (MHz)", fmax);
        if with_of {
            line.push_str(&format!("  {:<16}", ""));
        }
        if let Some(p) = previous {
            let change = match p["fmax_mhz"].as_f64() {
                Some(before) => format!("{:+.2}", fmax - before),
                None => "new".into(),
            };
            line.push_str(&format!("  {change:>12}"));
        }
        println!("{}", line.trim_end());
    }
}


//! Small runners around the external hardware tools (Debian's `verilator` and `yosys`,
//! installed by `scripts/setup.sh`): each writes the Verilog into a fresh temporary
//! directory, runs the tool there and reports what it said.
//!
//! These replace rust-hdl's `yosys_validate`, which deletes and reuses a fixed directory under
//! `$TMPDIR` and so cannot run in parallel tests.

use crate::verilog::Port;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::process::Command;

/// A tool that failed, or reported a problem, with its output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    /// The tool's name and arguments, as run.
    pub command: String,
    /// What went wrong, with the tool's own messages.
    pub message: String,
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` failed:\n{}", self.command, self.message)
    }
}

impl std::error::Error for ToolError {}

/// Runs `program args` in `dir`; an error when it cannot start or exits with a failure.
/// Returns stdout and stderr together.
fn run(program: &str, args: &[&str], dir: &Path) -> Result<String, ToolError> {
    let command = format!("{program} {}", args.join(" "));
    let output = Command::new(program).args(args).current_dir(dir).output().map_err(|e| ToolError {
        command: command.clone(),
        message: format!("cannot run {program}: {e} (install it with scripts/setup.sh)"),
    })?;
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    if !output.status.success() {
        return Err(ToolError { command, message: tail(&text, 60) });
    }
    Ok(text)
}

/// The last `n` lines of `text` (yosys logs run to thousands of lines; the error is at the
/// end).
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= n {
        return text.to_string();
    }
    format!("[{} lines left out]\n{}\n", lines.len() - n, lines[lines.len() - n..].join("\n"))
}

/// Writes `source` to `<top>.v` in a new temporary directory and returns the directory.
fn scratch(source: &str, top: &str) -> Result<tempfile::TempDir, ToolError> {
    let io = |e: std::io::Error| ToolError {
        command: "write Verilog to a temporary directory".into(),
        message: e.to_string(),
    };
    let dir = tempfile::Builder::new().prefix("emu-hls-").tempdir().map_err(io)?;
    std::fs::write(dir.path().join(format!("{top}.v")), source).map_err(io)?;
    Ok(dir)
}

/// Splits Verilog text into its modules, each with the text before it (comments), as
/// (module name, text) in order; text after the last `endmodule` goes with the last module.
pub fn split_modules(source: &str) -> Vec<(String, String)> {
    let mut modules: Vec<(String, String)> = vec![];
    let mut pending = String::new();
    let mut current: Option<(String, String)> = None;
    for line in source.lines() {
        let trimmed = line.trim_start();
        if current.is_none() {
            if let Some(rest) = trimmed.strip_prefix("module ") {
                let name: String = rest
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                    .collect();
                current = Some((name, std::mem::take(&mut pending)));
            }
        }
        let text = match &mut current {
            Some((_, text)) => text,
            None => &mut pending,
        };
        text.push_str(line);
        text.push('\n');
        if trimmed.starts_with("endmodule") {
            modules.extend(current.take());
        }
    }
    match (modules.last_mut(), current) {
        (_, Some(open)) => modules.push(open),
        (Some((_, text)), None) => text.push_str(&pending),
        (None, None) => {}
    }
    modules
}

/// `verilator --lint-only -Wall` on `source` with top module `top`. Every warning is an error;
/// with `allow_width` the WIDTH class alone is silenced (rust-hdl's own generated Verilog
/// trips it). Verilator's messages are in the error.
///
/// Each module of `source` goes into a file of its own name (rust-hdl writes a whole design
/// into one text), as Verilator's DECLFILENAME rule wants.
pub fn verilator_lint(source: &str, top: &str, allow_width: bool) -> Result<(), ToolError> {
    lint(source, top, allow_width, true)
}

/// `verilator --lint-only` on a generated design: Verilator's default warnings (every
/// warning an error) without the style class of `-Wall` (signals the generator leaves unused,
/// such as `tuser` bits the NF does not read); `allow_width` as for [`verilator_lint`].
pub fn verilator_lint_design(source: &str, top: &str, allow_width: bool) -> Result<(), ToolError> {
    lint(source, top, allow_width, false)
}

fn lint(source: &str, top: &str, allow_width: bool, all: bool) -> Result<(), ToolError> {
    let dir = scratch(source, top)?;
    let mut files = vec![];
    for (name, text) in split_modules(source) {
        let file = format!("{name}.v");
        std::fs::write(dir.path().join(&file), text).map_err(|e| ToolError {
            command: "write Verilog to a temporary directory".into(),
            message: e.to_string(),
        })?;
        if !files.contains(&file) {
            files.push(file);
        }
    }
    let mut args = vec!["--lint-only", "--top-module", top];
    if all {
        args.push("-Wall");
    }
    if allow_width {
        args.push("-Wno-WIDTH");
    }
    args.extend(files.iter().map(String::as_str));
    let out = run("verilator", &args, dir.path())?;
    if out.contains("%Warning") || out.contains("%Error") {
        return Err(ToolError { command: format!("verilator {}", args.join(" ")), message: out });
    }
    Ok(())
}

/// The cell counts yosys reports for a synthesized design, by cell type (`LUT6`, `FDRE`,
/// `RAMB18E1`, …).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SynthStats {
    /// Cells of each type.
    pub cells: BTreeMap<String, u64>,
    /// Yosys' warnings, one per entry.
    pub warnings: Vec<String>,
}

impl SynthStats {
    /// The number of cells whose type starts with `prefix` (`"RAMB"`: block RAMs, `"LUT"`,
    /// `"FD"`: flip-flops).
    pub fn count(&self, prefix: &str) -> u64 {
        self.cells.iter().filter(|(k, _)| k.starts_with(prefix)).map(|(_, v)| v).sum()
    }
}

/// `yosys -p "read_verilog -sv; synth_xilinx -family xc7 -top TOP; stat"` on `source`: synthesis
/// for the 7-series part of NetFPGA SUME. An error when yosys fails; on success, the cell
/// counts of the last `stat` and the warnings.
pub fn yosys_synth_xilinx(source: &str, top: &str) -> Result<SynthStats, ToolError> {
    let dir = scratch(source, top)?;
    let script = format!("read_verilog -sv {top}.v; synth_xilinx -family xc7 -top {top}; stat");
    let out = run("yosys", &["-p", &script], dir.path())?;
    let warnings = out.lines().filter(|l| l.starts_with("Warning:")).map(str::to_string).collect();
    Ok(SynthStats { cells: stat_cells(&out), warnings })
}

/// The cell counts of the last `stat` in a yosys log (the final one, of the whole design), by
/// cell type.
pub fn stat_cells(log: &str) -> BTreeMap<String, u64> {
    let mut cells = BTreeMap::new();
    let last = log.rfind("Number of cells").map_or("", |i| &log[i..]);
    for line in last.lines().skip(1) {
        let mut words = line.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some(cell), Some(n), None) => {
                if let Ok(n) = n.parse() {
                    cells.insert(cell.to_string(), n);
                }
            }
            (None, ..) => {}
            _ => {
                if !cells.is_empty() {
                    break;
                }
            }
        }
    }
    cells
}

/// Runs `source` (top module `top`, clocked by an input called `clock`) under Verilator, cycle
/// by cycle, and returns the outputs after each rising edge.
///
/// `stimulus` has one row per cycle: the values of `inputs` (every input but `clock`), in
/// hex. Each cycle the harness sets them with the clock low, evaluates, raises the clock and
/// evaluates again — what [`crate::hw::tick`] does to a rust-hdl block — then reads `outputs`.
/// The result has one row per cycle of the `outputs` in lowercase hex without leading zeros.
/// The model is compiled in a temporary directory with g++ (a few seconds).
pub fn verilator_replay(
    source: &str,
    top: &str,
    inputs: &[Port],
    outputs: &[Port],
    stimulus: &[Vec<String>],
) -> Result<Vec<Vec<String>>, ToolError> {
    let dir = scratch(source, top)?;
    let io = |e: std::io::Error| ToolError { command: "write the Verilator harness".into(), message: e.to_string() };
    std::fs::write(dir.path().join("harness.cpp"), harness(top, inputs, outputs)).map_err(io)?;
    let mut text = String::new();
    for row in stimulus {
        text.push_str(&row.join(" "));
        text.push('\n');
    }
    std::fs::write(dir.path().join("stimulus.txt"), text).map_err(io)?;
    let file = format!("{top}.v");
    run(
        "verilator",
        &[
            "--cc",
            "--exe",
            "--build",
            "-j",
            "2",
            "--top-module",
            top,
            "-Wno-fatal",
            // A short replay: compile time dominates, so compile without optimization.
            "-MAKEFLAGS",
            "OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0",
            "-o",
            "sim",
            &file,
            "harness.cpp",
        ],
        dir.path(),
    )?;
    let out = run("sh", &["-c", "./obj_dir/sim < stimulus.txt"], dir.path())?;
    Ok(out
        .lines()
        .filter_map(|l| l.strip_prefix("= "))
        .map(|l| l.split_whitespace().map(normalize_hex).collect())
        .collect())
}

/// `00ab` → `ab`, `0000` → `0`.
pub(crate) fn normalize_hex(h: &str) -> String {
    let t = h.trim_start_matches('0').to_ascii_lowercase();
    if t.is_empty() {
        "0".into()
    } else {
        t
    }
}

/// The C++ main of [`verilator_replay`].
fn harness(top: &str, inputs: &[Port], outputs: &[Port]) -> String {
    let mut set = String::new();
    for p in inputs {
        let name = &p.name;
        set.push_str("        if (!(std::cin >> tok)) break;\n");
        if p.width > 64 {
            let words = p.width.div_ceil(32);
            set.push_str(&format!("        set_wide(&top->{name}[0], {words}, tok);\n"));
        } else {
            set.push_str(&format!("        top->{name} = std::stoull(tok, nullptr, 16);\n"));
        }
    }
    let mut get = String::new();
    for (i, p) in outputs.iter().enumerate() {
        let name = &p.name;
        if i > 0 {
            get.push_str("        std::printf(\" \");\n");
        }
        if p.width > 64 {
            let words = p.width.div_ceil(32);
            get.push_str(&format!("        print_wide(&top->{name}[0], {words});\n"));
        } else {
            get.push_str(&format!("        std::printf(\"%llx\", (unsigned long long)top->{name});\n"));
        }
    }
    format!(
        r#"// Generated by emu-hls: replays a stimulus file through V{top}, one line per cycle.
#include "V{top}.h"
#include "verilated.h"
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

static void set_wide(uint32_t* words, int n, const std::string& hex) {{
    for (int i = 0; i < n; i++) words[i] = 0;
    int bit = 0;
    for (int i = (int)hex.size() - 1; i >= 0 && bit < 32 * n; i--, bit += 4) {{
        char c = hex[i];
        uint32_t v = (c >= '0' && c <= '9') ? (uint32_t)(c - '0') : (uint32_t)((c | 0x20) - 'a' + 10);
        words[bit / 32] |= v << (bit % 32);
    }}
}}

static void print_wide(const uint32_t* words, int n) {{
    for (int i = n - 1; i >= 0; i--) std::printf("%08x", words[i]);
}}

int main(int argc, char** argv) {{
    VerilatedContext* ctx = new VerilatedContext;
    ctx->commandArgs(argc, argv);
    V{top}* top = new V{top}{{ctx}};
    std::string tok;
    top->clock = 0;
    top->eval();
    for (;;) {{
{set}        top->clock = 0;
        top->eval();
        top->clock = 1;
        top->eval();
        std::printf("= ");
{get}        std::printf("\n");
    }}
    top->final();
    delete top;
    delete ctx;
    return 0;
}}
"#
    )
}

#[cfg(test)]
mod test {
    use super::*;

    const GOOD: &str = "module good (\n    input wire a,\n    input wire b,\n    output wire y\n);\n    assign y = a & b;\nendmodule\n";

    #[test]
    fn lint_passes_clean_verilog_and_reports_warnings() {
        verilator_lint(GOOD, "good", false).unwrap();
        let unused =
            "module bad (\n    input wire a,\n    input wire b,\n    output wire y\n);\n    assign y = a;\nendmodule\n";
        let err = verilator_lint(unused, "bad", false).unwrap_err();
        assert!(err.message.contains("UNUSED"), "{err}");
    }

    #[test]
    fn splits_a_design_into_modules() {
        let source = "// header\nmodule a(x);\n  input x;\nendmodule // a\n\n\nmodule b$c (y);\n  input y;\nendmodule\n// tail\n";
        let modules = split_modules(source);
        let names: Vec<_> = modules.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(names, ["a", "b$c"]);
        assert_eq!(modules[0].1, "// header\nmodule a(x);\n  input x;\nendmodule // a\n");
        assert_eq!(modules[1].1, "\n\nmodule b$c (y);\n  input y;\nendmodule\n// tail\n");
        let joined: String = modules.iter().map(|m| m.1.as_str()).collect();
        assert_eq!(joined, source);
    }

    #[test]
    fn synth_counts_cells() {
        let stats = yosys_synth_xilinx(GOOD, "good").unwrap();
        assert_eq!(stats.count("LUT"), 1, "{stats:?}");
        let broken = "module broken (input wire a, output wire y); assign y = ;\nendmodule\n";
        assert!(yosys_synth_xilinx(broken, "broken").is_err());
    }
}

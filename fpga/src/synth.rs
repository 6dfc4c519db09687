//! `emu synth`'s flows through the open toolchain:
//!
//! - [`xilinx`]: yosys `synth_xilinx -family xc7` for NetFPGA SUME's 7-series part, and the
//!   resource table (LUT, LUT as memory, FF, BRAM, DSP, CARRY4, MUXF7/8);
//! - [`ice40`]: the NF inside a small pin harness ([`harness`]) for an iCE40 board
//!   ([`BOARDS`]), yosys `synth_ice40`, `nextpnr-ice40` and `icepack`: a real bitstream, the
//!   clock nextpnr achieved, the logic cells and block RAMs used.
//!
//! [`with_progress`] shows a long tool run on a terminal (also `emu netfpga`'s Vivado run).

use emu_hls::backend::{rtl, Design};
use emu_hls::verilog::{Dir, Expr, Instance, Item, Module, Port, Stmt};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

/// What `scripts/setup.sh` installs, for the message when a tool is missing.
const SETUP: &str = "scripts/setup.sh installs it (Debian's yosys, nextpnr-ice40 and fpga-icestorm)";

/// An iCE40 board the open flow builds for: its device and the pins the harness uses.
#[derive(Debug)]
pub struct Board {
    /// Its name for `--board`.
    pub name: &'static str,
    /// Its name in full.
    pub label: &'static str,
    /// nextpnr-ice40's device option (`--up5k`).
    pub device: &'static str,
    /// nextpnr-ice40's `--package`.
    pub package: &'static str,
    /// The part, as printed on the chip.
    pub part: &'static str,
    /// The board's oscillator: the default clock to meet.
    pub clock_mhz: f64,
    /// The oscillator's pin.
    pub clk_pin: &'static str,
    /// An active-low push button, used as a reset besides the power-on one.
    pub button_pin: Option<&'static str>,
    /// The harness's serial input.
    pub sin_pin: &'static str,
    /// The harness's eight outputs, `sout[0]` first.
    pub sout_pins: [&'static str; 8],
    /// Where those are, for the PCF's comments and the docs.
    pub where_: &'static str,
}

/// The boards `--board` knows.
pub const BOARDS: &[Board] = &[
    Board {
        name: "icebreaker",
        label: "iCEBreaker",
        device: "--up5k",
        package: "sg48",
        part: "iCE40UP5K-SG48",
        clock_mhz: 12.0,
        clk_pin: "35",
        button_pin: Some("10"),
        sin_pin: "4",
        sout_pins: ["43", "38", "34", "31", "42", "36", "32", "28"],
        where_: "clk: the 12 MHz oscillator; btn_n: the user button; sin: PMOD 1A pin 1; \
                 sout[7:0]: PMOD 1B",
    },
    Board {
        name: "hx8k-breakout",
        label: "iCE40-HX8K Breakout Board",
        device: "--hx8k",
        package: "ct256",
        part: "iCE40HX8K-CT256",
        clock_mhz: 12.0,
        clk_pin: "J3",
        button_pin: None,
        sin_pin: "B10",
        sout_pins: ["C3", "B3", "C4", "C5", "A1", "A2", "B4", "B5"],
        where_: "clk: the 12 MHz oscillator; sin: the FTDI UART's RX line; sout[7:0]: LEDs D2-D9",
    },
];

/// The board called `name`, or an error that lists them.
pub fn find_board(name: &str) -> Result<&'static Board, String> {
    BOARDS.iter().find(|b| b.name == name).ok_or_else(|| {
        let known: Vec<String> = BOARDS.iter().map(|b| format!("{} ({})", b.name, b.part)).collect();
        format!("unknown board `{name}`; the iCE40 flow knows {}", known.join(", "))
    })
}

/// The SUME's part and its size, for the table's share column.
const XC7VX690T: &[(&str, u64)] = &[
    ("lut", 433_200),
    ("lutram", 174_200),
    ("ff", 866_400),
    ("bram18", 2_940),
    ("ramb36", 1_470),
    ("dsp", 3_600),
    ("carry4", 108_300),
    ("ramb18", 2_940),
    ("muxf", 324_900),
];

/// One row of the resource table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Its key in `synth.json`.
    pub key: &'static str,
    /// What the table calls it.
    pub label: &'static str,
    /// How many the design uses.
    pub count: u64,
    /// What the part or device has, when known.
    pub of: Option<u64>,
}

/// A flow's result: the table, the cells behind it, and for the iCE40 flow the clock.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The resource table.
    pub rows: Vec<Row>,
    /// yosys's cells by type.
    pub cells: BTreeMap<String, u64>,
    /// yosys's warnings.
    pub warnings: Vec<String>,
    /// (requested, achieved) in MHz.
    pub clock: Option<(f64, f64)>,
    /// Lines printed under the table.
    pub notes: Vec<String>,
}

/// yosys's `synth_xilinx -family xc7` is for 7-series parts only.
pub fn check_part(part: &str) -> Result<(), String> {
    let p = part.to_ascii_lowercase();
    if p.starts_with("xc7") && p.len() > 4 {
        Ok(())
    } else {
        Err(format!(
            "--part {part}: `emu synth` runs yosys's synth_xilinx for the 7-series family (parts xc7…, \
             e.g. xc7vx690t, the NetFPGA SUME's); for an iCE40 bitstream give --board icebreaker"
        ))
    }
}

/// An error that says how to install `tool` when it cannot be run.
pub fn check_tool(tool: &str) -> Result<(), String> {
    let flag = if tool == "icepack" { "-h" } else { "--version" };
    match Command::new(tool).arg(flag).output() {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("`{tool}` is not installed (not on the PATH): {SETUP}"))
        }
        Err(e) => Err(format!("cannot run `{tool}`: {e}; {SETUP}")),
    }
}

/// The first line a tool prints about its version.
pub fn tool_version(tool: &str) -> String {
    let flag = match tool {
        "yosys" => "-V",
        "icepack" => return "icepack (fpga-icestorm)".into(),
        _ => "--version",
    };
    Command::new(tool)
        .arg(flag)
        .output()
        .ok()
        .and_then(|o| {
            let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
            text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
        })
        .unwrap_or_else(|| tool.to_string())
}

/// Runs `f` while a line on standard error says what is running and for how long (on a
/// terminal; elsewhere one line when it starts).
pub fn with_progress<T: Send>(what: &str, f: impl FnOnce() -> T + Send) -> T {
    let start = Instant::now();
    if !std::io::stderr().is_terminal() {
        eprintln!("{what}…");
        return f();
    }
    let result = std::thread::scope(|s| {
        let worker = s.spawn(f);
        while !worker.is_finished() {
            eprint!("\r{what}… {} s", start.elapsed().as_secs());
            let _ = std::io::stderr().flush();
            std::thread::sleep(Duration::from_millis(250));
        }
        worker.join()
    });
    eprint!("\r\x1b[K");
    let _ = std::io::stderr().flush();
    match result {
        Ok(v) => v,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// LUTs a distributed-RAM or shift-register cell of yosys's xc7 mapping takes.
fn lutram_luts(cell: &str) -> u64 {
    match cell {
        "RAM32M" | "RAM64M" | "RAM128X1D" | "RAM256X1S" | "RAM32M16" | "RAM64M8" => 4,
        "RAM32X1D" | "RAM64X1D" | "RAM128X1S" => 2,
        "RAM32X1S" | "RAM64X1S" | "RAM16X1S" | "RAM16X1D" | "SRL16E" | "SRLC32E" | "SRLC16E" => 1,
        _ => 0,
    }
}

/// yosys `synth_xilinx` on the design, and the table.
pub fn xilinx(design: &Design, modules: &[(String, String)], part: &str) -> Result<Outcome, String> {
    let top = design.top_name();
    let text: String = modules.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join("\n");
    let started = Instant::now();
    // What to expect: yosys's time grows with the FSM far more than with the tables.
    let states = design.sched.states.len();
    let expect = match states {
        0..=60 => "about 20 s for the learning switch, 2 minutes for the firewall".to_string(),
        _ => format!("{states} FSM states: tens of minutes (the NAT's 178 take 10, the DNS server's 761 take 30)"),
    };
    let stats = with_progress(&format!("yosys synth_xilinx on {top} ({expect})"), || {
        emu_hls::hw::tools::yosys_synth_xilinx(&text, &top)
    })
    .map_err(|e| format!("yosys synthesis of {top} failed: {e}"))?;
    let took = started.elapsed();
    let c = |name: &str| stats.cells.get(name).copied().unwrap_or(0);
    let lutram: u64 = stats.cells.iter().map(|(k, v)| lutram_luts(k) * v).sum();
    let (ramb36, ramb18) = (c("RAMB36E1"), c("RAMB18E1"));
    let of = |key: &str| {
        if part.eq_ignore_ascii_case("xc7vx690t") {
            XC7VX690T.iter().find(|(k, _)| *k == key).map(|(_, n)| *n)
        } else {
            None
        }
    };
    let row = |key: &'static str, label: &'static str, count: u64| Row { key, label, count, of: of(key) };
    let rows = vec![
        row("lut", "LUT (logic, LUT1-LUT6)", stats.count("LUT")),
        row("lutram", "LUT as memory", lutram),
        row("ff", "FF (flip-flops)", stats.count("FD")),
        row("bram18", "BRAM, in RAMB18s", 2 * ramb36 + ramb18),
        row("ramb36", "  RAMB36E1", ramb36),
        row("ramb18", "  RAMB18E1", ramb18),
        row("dsp", "DSP48E1", c("DSP48E1")),
        row("carry4", "CARRY4", c("CARRY4")),
        row("muxf", "MUXF7 + MUXF8", c("MUXF7") + c("MUXF8")),
    ];
    let notes = vec![format!(
        "yosys took {:.1} s; no timing (synth_xilinx does not place or route: that needs Vivado)",
        took.as_secs_f64()
    )];
    Ok(Outcome { rows, cells: stats.cells, warnings: stats.warnings, clock: None, notes })
}

/// A directory under the system's temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, String> {
        let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("emu-synth-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `program args` in `dir`, writing what it printed to `log`; the error has the end of it.
fn run_logged(program: &str, args: &[&str], dir: &Path, log: &Path) -> Result<String, String> {
    let output = Command::new(program).args(args).current_dir(dir).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!("`{program}` is not installed: {SETUP}")
        } else {
            format!("cannot run {program}: {e}")
        }
    })?;
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    std::fs::write(log, &text).map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    if output.status.success() {
        Ok(text)
    } else {
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(25)..].join("\n");
        Err(format!("`{program} {}` failed (the whole log is {}):\n{tail}", args.join(" "), log.display()))
    }
}

/// The NF's module ports, and its clock and active-low reset among them.
pub fn nf_ports(design: &Design) -> Result<(Vec<Port>, String, String), String> {
    let modules = rtl::modules(design)?;
    let ports = modules.into_iter().next().ok_or("the compiler made no module")?.ports;
    let find = |suffix: &str| {
        ports
            .iter()
            .find(|p| matches!(p.dir, Dir::Input) && p.width == 1 && p.name.ends_with(suffix))
            .map(|p| p.name.clone())
            .ok_or_else(|| format!("the NF's module has no 1-bit input called *{suffix}"))
    };
    let (clock, reset) = (find("clk")?, find("resetn")?);
    Ok((ports, clock, reset))
}

/// The harness `emu_ice40_top` around the NF's module: every input of the NF from a shift
/// register fed by `sin`, every output XOR-folded onto `sout[7:0]` (registered), a power-on
/// reset (and the board's button, when it has one). Returns the text and the number of input
/// and output bits.
pub fn harness(design: &Design, board: &Board) -> Result<(String, u32, u32), String> {
    let (ports, clock, reset) = nf_ports(design)?;
    let top = design.top_name();
    if ports.iter().any(|p| matches!(p.dir, Dir::Inout)) {
        return Err(format!("{top} has an inout port; the iCE40 harness takes inputs and outputs only"));
    }
    let is_data = |p: &&Port| p.name != clock && p.name != reset;
    let n_in: u32 = ports.iter().filter(is_data).filter(|p| matches!(p.dir, Dir::Input)).map(|p| p.width).sum();
    let n_out: u32 = ports.iter().filter(|p| matches!(p.dir, Dir::Output)).map(|p| p.width).sum();
    if n_in < 2 || n_out == 0 {
        return Err(format!("{top} has too few ports for the iCE40 harness"));
    }
    let bits = |name: &str, lo: u32, w: u32| {
        if w == 1 {
            Expr::id(name).bit_at(lo)
        } else {
            Expr::id(name).slice(lo + w - 1, lo)
        }
    };
    let button = board.button_pin.is_some();

    let mut m = Module::new("emu_ice40_top");
    m.ports.push(Port::input("clk", 1));
    if button {
        m.ports.push(Port::input("btn_n", 1));
    }
    m.ports.push(Port::input("sin", 1));
    m.ports.push(Port::output_reg("sout", 8));
    m.items.push(Item::comment(format!(
        "Generated by `emu synth --board {}`: {top} for the open iCE40 flow.\n\
         The NF's {n_in} input bits come from a shift register fed by `sin`, and its {n_out} output\n\
         bits are folded by XOR onto `sout`: no input is constant and every output is observed, so\n\
         yosys keeps the whole design, on a handful of pins. Reset: at power-on{}.",
        board.name,
        if button { " and while the button is held" } else { "" }
    )));

    m.items.push(Item::Blank);
    m.items.push(Item::comment("Power-on reset: the NF is held in reset for the first 15 cycles."));
    m.items.push(Item::reg("por_q", 4));
    m.items.push(Item::Initial(vec![Stmt::blocking(Expr::id("por_q"), Expr::zero(4))]));
    let por_done = Expr::id("por_q").equals(Expr::hex(4, 0xf));
    m.items.push(Item::always_posedge(
        "clk",
        vec![Stmt::if_(
            por_done.clone().lnot(),
            vec![Stmt::nb(Expr::id("por_q"), Expr::id("por_q").plus(Expr::dec(4, 1)))],
        )],
    ));
    m.items.push(Item::wire("nf_resetn", 1));
    if button {
        m.items.push(Item::comment("The button, synchronized to the clock."));
        m.items.push(Item::reg("btn_q", 2));
        m.items.push(Item::Initial(vec![Stmt::blocking(Expr::id("btn_q"), Expr::zero(2))]));
        m.items.push(Item::always_posedge(
            "clk",
            vec![Stmt::nb(Expr::id("btn_q"), Expr::concat(vec![Expr::id("btn_q").bit_at(0), Expr::id("btn_n")]))],
        ));
        m.items.push(Item::assign(Expr::id("nf_resetn"), por_done.land(Expr::id("btn_q").bit_at(1))));
    } else {
        m.items.push(Item::assign(Expr::id("nf_resetn"), por_done));
    }

    m.items.push(Item::Blank);
    m.items.push(Item::comment("The NF's inputs, shifted in from `sin`."));
    m.items.push(Item::reg("in_q", n_in));
    m.items.push(Item::always_posedge(
        "clk",
        vec![Stmt::nb(Expr::id("in_q"), Expr::concat(vec![bits("in_q", 0, n_in - 1), Expr::id("sin")]))],
    ));
    m.items.push(Item::wire("out_w", n_out));
    let mut connections = vec![(clock.clone(), Expr::id("clk")), (reset.clone(), Expr::id("nf_resetn"))];
    let (mut i, mut o) = (0, 0);
    for p in ports.iter().filter(is_data) {
        if matches!(p.dir, Dir::Input) {
            connections.push((p.name.clone(), bits("in_q", i, p.width)));
            i += p.width;
        } else {
            connections.push((p.name.clone(), bits("out_w", o, p.width)));
            o += p.width;
        }
    }
    m.items.push(Item::Instance(Instance { module: top.clone(), name: "nf".into(), params: vec![], connections }));

    m.items.push(Item::Blank);
    m.items.push(Item::comment("The NF's outputs, bit k onto sout[k % 8]."));
    let fold = (0..8u32)
        .map(|k| {
            let parts: Vec<Expr> = (k..n_out).step_by(8).map(|b| Expr::id("out_w").bit_at(b)).collect();
            let rhs = if parts.is_empty() { Expr::zero(1) } else { Expr::concat(parts).parity() };
            Stmt::nb(Expr::id("sout").bit_at(k), rhs)
        })
        .collect();
    m.items.push(Item::always_posedge("clk", fold));
    Ok((m.to_string(), n_in, n_out))
}

/// The pin constraints of the harness on `board`.
pub fn pcf(board: &Board) -> String {
    let mut p =
        format!("# emu synth --board {}: the harness's pins on the {} ({}).\n", board.name, board.label, board.part);
    p.push_str(&format!("# {}\n", board.where_));
    p.push_str(&format!("set_io clk {}\n", board.clk_pin));
    if let Some(b) = board.button_pin {
        p.push_str(&format!("set_io btn_n {b}\n"));
    }
    p.push_str(&format!("set_io sin {}\n", board.sin_pin));
    for (k, pin) in board.sout_pins.iter().enumerate() {
        p.push_str(&format!("set_io sout[{k}] {pin}\n"));
    }
    p
}

/// nextpnr's "Device utilisation" lines: bel type → (used, available).
pub fn utilisation(log: &str) -> BTreeMap<String, (u64, u64)> {
    let mut used = BTreeMap::new();
    let Some(at) = log.rfind("Device utilisation:") else { return used };
    for line in log[at..].lines().skip(1) {
        let Some(rest) = line.strip_prefix("Info:") else { break };
        let Some((name, figures)) = rest.split_once(':') else { break };
        let mut parts = figures.split('/');
        let (Some(u), Some(t)) = (parts.next(), parts.next()) else { break };
        let total = t.split_whitespace().next().unwrap_or("");
        match (u.trim().parse(), total.parse()) {
            (Ok(u), Ok(t)) => {
                used.insert(name.trim().to_string(), (u, t));
            }
            _ => break,
        }
    }
    used
}

/// The last "Max frequency for clock" nextpnr reported, in MHz.
pub fn max_frequency(log: &str) -> Option<f64> {
    let line = log.lines().rev().find(|l| l.contains("Max frequency for clock"))?;
    let after = &line[line.rfind("':")? + 2..];
    after.split_whitespace().next()?.parse().ok()
}

/// The iCE40 flow: harness, yosys, nextpnr, icepack; the bitstream is `out/<nf>.bin`.
pub fn ice40(
    design: &Design,
    modules: &[(String, String)],
    board: &Board,
    freq: f64,
    out: &Path,
    nf: &str,
) -> Result<Outcome, String> {
    let (harness_text, n_in, n_out) = harness(design, board)?;
    let write = |path: PathBuf, text: &str| {
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    write(out.join("emu_ice40_top.v"), &harness_text)?;
    let pcf_name = format!("{}.pcf", board.name);
    write(out.join(&pcf_name), &pcf(board))?;

    let scratch = Scratch::new()?;
    let dir = &scratch.0;
    let mut files = vec![];
    for (name, text) in modules {
        write(dir.join(format!("{name}.v")), text)?;
        files.push(format!("{name}.v"));
    }
    write(dir.join("emu_ice40_top.v"), &harness_text)?;
    files.push("emu_ice40_top.v".into());
    write(dir.join(&pcf_name), &pcf(board))?;

    let script = format!("read_verilog -sv {}; synth_ice40 -top emu_ice40_top -json {nf}.json; stat", files.join(" "));
    let t0 = Instant::now();
    let ylog = with_progress("yosys synth_ice40 (about 15 s for the learning switch)", || {
        run_logged("yosys", &["-p", &script], dir, &out.join("yosys.log"))
    })?;
    let t_yosys = t0.elapsed();
    let cells = emu_hls::hw::tools::stat_cells(&ylog);
    let warnings: Vec<String> = ylog.lines().filter(|l| l.starts_with("Warning:")).map(str::to_string).collect();

    let freq_text = format!("{freq}");
    let (json_file, asc_file, bin_file) = (format!("{nf}.json"), format!("{nf}.asc"), format!("{nf}.bin"));
    let args = [
        board.device,
        "--package",
        board.package,
        "--json",
        &json_file,
        "--pcf",
        &pcf_name,
        "--asc",
        &asc_file,
        "--freq",
        &freq_text,
        "--timing-allow-fail",
    ];
    let t1 = Instant::now();
    let nlog =
        with_progress(&format!("nextpnr-ice40 placing and routing for the {} (about a minute)", board.part), || {
            run_logged("nextpnr-ice40", &args, dir, &out.join("nextpnr.log"))
        })
        .map_err(|e| {
            // nextpnr prints the utilisation before it gives up on placing: say what is too full.
            let log = std::fs::read_to_string(out.join("nextpnr.log")).unwrap_or_default();
            let full: Vec<String> = utilisation(&log)
                .into_iter()
                .filter(|(_, (used, total))| used > total)
                .map(|(bel, (used, total))| format!("{bel} {used} of {total} ({}%)", 100 * used / total.max(1)))
                .collect();
            if full.is_empty() {
                e
            } else {
                let larger = if board.name == "hx8k-breakout" {
                    ""
                } else {
                    ", or the larger iCE40HX8K (--board hx8k-breakout: 7680 logic cells, 32 block RAMs)"
                };
                format!(
                "{e}\n\nthe design does not fit the {}: {}; try --width 64 or a smaller --max-frame (e.g. 256){larger}",
                board.part,
                full.join(", "),
            )
            }
        })?;
    let t_pnr = t1.elapsed();
    let fmax = max_frequency(&nlog).ok_or_else(|| {
        format!("nextpnr-ice40 reported no maximum frequency; see {}", out.join("nextpnr.log").display())
    })?;
    let used = utilisation(&nlog);
    run_logged("icepack", &[&asc_file, &bin_file], dir, &dir.join("icepack.log"))?;
    let bin = out.join(&bin_file);
    std::fs::copy(dir.join(&bin_file), &bin)
        .map_err(|e| format!("cannot copy the bitstream to {}: {e}", bin.display()))?;
    let bin_len = std::fs::metadata(&bin).map(|m| m.len()).unwrap_or(0);
    if bin_len == 0 {
        return Err(format!("icepack wrote an empty bitstream ({})", bin.display()));
    }

    let c = |prefix: &str| cells.iter().filter(|(k, _)| k.starts_with(prefix)).map(|(_, v)| v).sum::<u64>();
    let bel = |name: &str| used.get(name).copied();
    let mut rows = vec![
        Row {
            key: "logic_cells",
            label: "logic cells (LUT4 + FF)",
            count: bel("ICESTORM_LC").map_or(0, |u| u.0),
            of: bel("ICESTORM_LC").map(|u| u.1),
        },
        Row { key: "lut4", label: "LUT4", count: c("SB_LUT4"), of: None },
        Row { key: "ff", label: "FF (flip-flops)", count: c("SB_DFF"), of: None },
        Row { key: "carry", label: "SB_CARRY", count: c("SB_CARRY"), of: None },
        Row {
            key: "bram",
            label: "BRAM (SB_RAM40_4K)",
            count: bel("ICESTORM_RAM").map_or(c("SB_RAM40_4K"), |u| u.0),
            of: bel("ICESTORM_RAM").map(|u| u.1),
        },
    ];
    if let Some((u, t)) = bel("ICESTORM_DSP") {
        rows.push(Row { key: "dsp", label: "DSP (SB_MAC16)", count: u, of: Some(t) });
    }
    if let Some((u, t)) = bel("SB_IO") {
        rows.push(Row { key: "io", label: "IO pins", count: u, of: Some(t) });
    }
    let status = if fmax >= freq { "timing met" } else { "timing NOT met" };
    let notes = vec![
        format!("clock: {freq:.2} MHz requested, {fmax:.2} MHz achieved (nextpnr's estimate after routing): {status}"),
        format!("bitstream: {} ({bin_len} bytes) for the {}; pins: {}", bin.display(), board.label, board.where_),
        format!(
            "the harness adds {n_in} flip-flops (the input shift register for the NF's {n_in} input bits), \
             about {} LUTs (the XOR fold of its {n_out} output bits) and 8 output flip-flops",
            n_out.div_ceil(3)
        ),
        format!("yosys took {:.1} s, nextpnr {:.1} s", t_yosys.as_secs_f64(), t_pnr.as_secs_f64()),
    ];
    Ok(Outcome { rows, cells, warnings, clock: Some((freq, fmax)), notes })
}

#[cfg(test)]
mod test {
    use super::*;
    use emu_core::Config;

    #[test]
    fn reads_nextpnr_figures() {
        let log = "Info: Max frequency for clock 'clk$SB_IO_IN_$glb_clk': 15.61 MHz (PASS at 12.00 MHz)\n\
                   Info: Device utilisation:\n\
                   Info: \t         ICESTORM_LC:  4563/ 5280    86%\n\
                   Info: \t        ICESTORM_RAM:     8/   30    26%\n\
                   Info: \t               SB_IO:    11/   96    11%\n\
                   \n\
                   Info: Max frequency for clock 'clk$SB_IO_IN_$glb_clk': 15.33 MHz (PASS at 12.00 MHz)\n";
        assert_eq!(max_frequency(log), Some(15.33));
        let u = utilisation(log);
        assert_eq!(u["ICESTORM_LC"], (4563, 5280));
        assert_eq!(u["ICESTORM_RAM"], (8, 30));
        assert_eq!(u["SB_IO"], (11, 96));
    }

    #[test]
    fn reads_the_last_stat() {
        let log = "   Number of cells:  3\n     SB_LUT4  1\n\n=== design hierarchy ===\n   Number of cells:   7\n\
                   \x20    SB_CARRY                      2\n     SB_DFFE                       3\n     SB_LUT4   2\n\n\
                   End of script.\n";
        let cells = emu_hls::hw::tools::stat_cells(log);
        assert_eq!(cells.len(), 3);
        assert_eq!(cells["SB_DFFE"], 3);
    }

    #[test]
    fn the_harness_connects_every_port() {
        let design = Design::from_descriptor(&learning_switch::DESCRIPTOR, &Config::new(), 64, 256).unwrap();
        let board = find_board("icebreaker").unwrap();
        let (text, n_in, n_out) = harness(&design, board).unwrap();
        let (ports, ..) = nf_ports(&design).unwrap();
        for p in &ports {
            assert!(text.contains(&format!(".{}(", p.name)), "{} unconnected:\n{text}", p.name);
        }
        assert_eq!(n_in, ports.iter().filter(|p| matches!(p.dir, Dir::Input)).map(|p| p.width).sum::<u32>() - 2);
        assert!(n_out > 64, "{n_out}");
        assert!(text.contains("btn_n") && pcf(board).contains("set_io btn_n 10"));
        assert!(!pcf(find_board("hx8k-breakout").unwrap()).contains("btn_n"));
        assert!(find_board("nexys").unwrap_err().contains("icebreaker (iCE40UP5K-SG48)"));
    }

    #[test]
    fn only_seven_series_parts() {
        check_part("xc7vx690t").unwrap();
        check_part("xc7a35t").unwrap();
        assert!(check_part("xcku040").unwrap_err().contains("7-series"));
    }
}

//! The SUME-level simulation: the pipeline model of [`crate::pipeline`] around the OPL wrapper
//! and the NF, compiled by Verilator with a small C++ testbench (`verilator --cc --exe
//! --build`), fed frames on its five input streams and read back per output stream, with the
//! OPL's registers read over AXI4-Lite at the end.
//!
//! The testbench reads a script on standard input and writes what it saw on standard output,
//! one record a line:
//!
//! ```text
//! in:   mode serial|concurrent     serial: one frame offered at a time, in the script's order;
//!                                  concurrent: every input offers its own frames back to back
//!       seed N                     the output streams' tready is pseudo-random (3 cycles in 4)
//!       frame K HEX                a frame on input K (0-3: nf0-nf3, 4: dma0); tuser[15:0] its length
//!       read ADDR | write ADDR VALUE   AXI4-Lite, after the traffic has drained
//! out:  out K LEN SRC DST HEX      a frame on output K, with its tuser length, source and destination bytes
//!       grant K                    the OPL took a frame from input K (its tuser source bits)
//!       reg ADDR VALUE             a read's result
//!       cycles N | timeout N
//! ```
//!
//! Models are built once per content (the Verilog, the testbench and Verilator's version) into
//! the cache the Verilator tier uses ([`emu_sim::cache`]), under `sume-sim/<hash>`.

use crate::pipeline::{self, STREAMS};
use emu_hls::backend::Design;
use emu_sim::cache::{self, cached_dir, Fnv64};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// How frames are offered to the inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One frame at a time, in the order given: the OPL sees the frames in that order.
    Serial,
    /// Each input offers its own frames back to back; the arbiter picks the order.
    Concurrent,
}

/// A frame that left an output stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutFrame {
    /// Its bytes (the lanes `tkeep` marked).
    pub data: Vec<u8>,
    /// `tuser[15:0]`, `[23:16]` and `[31:24]` of its first beat.
    pub len: u16,
    /// The source port byte.
    pub src: u8,
    /// The destination port byte.
    pub dst: u8,
}

/// What a run produced.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Per output stream (nf0–nf3, dma0), the frames in the order they left.
    pub outputs: Vec<Vec<OutFrame>>,
    /// The input of each frame the OPL took, in order.
    pub grants: Vec<usize>,
    /// The AXI4-Lite reads, in order: (address, value).
    pub reads: Vec<(u32, u32)>,
    /// Clock cycles simulated.
    pub cycles: u64,
}

/// An AXI4-Lite access made after the traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read the register at this address.
    Read(u32),
    /// Write the value to the address.
    Write(u32, u32),
}

/// A built simulation.
#[derive(Debug, Clone)]
pub struct SumeSim {
    exe: PathBuf,
}

/// The whole Verilog of the simulation: the NF's modules, the OPL wrapper, the pipeline model.
pub fn verilog(design: &Design) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = vec![];
    for m in emu_hls::backend::rtl::modules(design)? {
        if !out.iter().any(|(n, _)| *n == m.name) {
            out.push((m.name.clone(), m.to_string()));
        }
    }
    let opl = crate::opl::wrapper(design)?;
    out.push((opl.name.clone(), opl.to_string()));
    for m in pipeline::modules() {
        out.push((m.name.clone(), m.to_string()));
    }
    Ok(out)
}

fn run_tool(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out =
        cmd.output().map_err(|e| format!("cannot run {what}: {e} (scripts/setup.sh installs verilator and g++)"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.success() {
        Ok(text)
    } else {
        let lines: Vec<&str> = text.lines().collect();
        Err(format!("{what} failed:\n{}", lines[lines.len().saturating_sub(40)..].join("\n")))
    }
}

impl SumeSim {
    /// Builds (or finds in the cache) the simulation of `design` in the SUME pipeline model.
    pub fn build(design: &Design) -> Result<SumeSim, String> {
        let files = verilog(design)?;
        let tb = testbench();
        let version = run_tool(Command::new("verilator").arg("--version"), "verilator --version")?;
        let mut h = Fnv64::default();
        h.part(b"emu-fpga sume-sim 1");
        for (name, text) in &files {
            h.part(name.as_bytes());
            h.part(text.as_bytes());
        }
        h.part(tb.as_bytes());
        h.part(version.as_bytes());
        let (dir, _) = cached_dir(&cache::root("sume-sim"), &format!("{:016x}", h.finish()), "sim", |dir, log| {
            let mut names = vec![];
            for (name, text) in &files {
                let file = format!("{name}.v");
                std::fs::write(dir.join(&file), text).map_err(|e| format!("cannot write {file}: {e}"))?;
                names.push(file);
            }
            std::fs::write(dir.join("tb.cpp"), &tb).map_err(|e| format!("cannot write tb.cpp: {e}"))?;
            let mut cmd = Command::new("verilator");
            cmd.current_dir(dir).args([
                "--cc",
                "--exe",
                "--build",
                "-j",
                "2",
                "-Wno-WIDTH",
                "-Wno-fatal",
                "--top-module",
                "emu_sume_sim",
                // Compile time dominates a run of a few thousand cycles.
                "-MAKEFLAGS",
                "OPT_FAST=-O1 OPT_SLOW=-O0 OPT_GLOBAL=-O1",
                "-o",
                "sim",
            ]);
            cmd.args(&names).arg("tb.cpp");
            log.push_str(&run_tool(&mut cmd, "verilator --cc --exe --build")?);
            std::fs::rename(dir.join("obj_dir").join("sim"), dir.join("sim"))
                .map_err(|e| format!("cannot move the model: {e}"))?;
            // The objects are not needed once the testbench is linked.
            let _ = std::fs::remove_dir_all(dir.join("obj_dir"));
            Ok(())
        })?;
        Ok(SumeSim { exe: dir.join("sim") })
    }

    /// The compiled testbench.
    pub fn executable(&self) -> &Path {
        &self.exe
    }

    /// Runs `frames` (input stream, bytes) through the pipeline, then `accesses` over AXI4-Lite.
    pub fn run(&self, frames: &[(usize, Vec<u8>)], mode: Mode, seed: u64, accesses: &[Access]) -> Result<Run, String> {
        let mut script = String::new();
        let _ = writeln!(script, "mode {}", if mode == Mode::Serial { "serial" } else { "concurrent" });
        let _ = writeln!(script, "seed {seed}");
        for (k, data) in frames {
            if *k >= STREAMS || data.is_empty() {
                return Err(format!(
                    "frame on input {k} of {} bytes: the pipeline has inputs 0-4 and frames of 1 byte or more",
                    data.len()
                ));
            }
            let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
            let _ = writeln!(script, "frame {k} {hex}");
        }
        for a in accesses {
            let _ = match a {
                Access::Read(addr) => writeln!(script, "read {addr}"),
                Access::Write(addr, v) => writeln!(script, "write {addr} {v}"),
            };
        }
        let mut child = Command::new(&self.exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.exe.display()))?;
        child.stdin.take().expect("piped").write_all(script.as_bytes()).map_err(|e| e.to_string())?;
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("the SUME simulation failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        parse(&String::from_utf8_lossy(&out.stdout))
    }
}

fn parse(text: &str) -> Result<Run, String> {
    let mut run = Run { outputs: vec![vec![]; STREAMS], ..Run::default() };
    let bad = |l: &str| format!("the testbench wrote a line it should not: `{l}`");
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["out", k, len, src, dst, hex] => {
                let k: usize = k.parse().map_err(|_| bad(line))?;
                let data = (0..hex.len() / 2)
                    .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16))
                    .collect::<Result<Vec<u8>, _>>()
                    .map_err(|_| bad(line))?;
                let frame = OutFrame {
                    data,
                    len: len.parse().map_err(|_| bad(line))?,
                    src: u8::from_str_radix(src, 16).map_err(|_| bad(line))?,
                    dst: u8::from_str_radix(dst, 16).map_err(|_| bad(line))?,
                };
                run.outputs.get_mut(k).ok_or_else(|| bad(line))?.push(frame);
            }
            ["grant", k] => run.grants.push(k.parse().map_err(|_| bad(line))?),
            ["reg", a, v] => run.reads.push((a.parse().map_err(|_| bad(line))?, v.parse().map_err(|_| bad(line))?)),
            ["cycles", n] => run.cycles = n.parse().map_err(|_| bad(line))?,
            ["timeout", n] => {
                return Err(format!(
                    "the SUME simulation stopped after {n} cycles without draining: the pipeline hung \
                     ({} frames had come out)",
                    run.outputs.iter().map(Vec::len).sum::<usize>()
                ))
            }
            _ => return Err(bad(line)),
        }
    }
    Ok(run)
}

/// The C++ testbench (see the module's documentation for its script).
pub fn testbench() -> String {
    let mut set_inputs = String::new();
    let mut observe = String::new();
    for k in 0..STREAMS {
        let _ = write!(
            set_inputs,
            "    drive(in[{k}], top->s_axis_{k}_tdata, top->s_axis_{k}_tkeep, top->s_axis_{k}_tuser, \
             top->s_axis_{k}_tvalid, top->s_axis_{k}_tlast);\n    top->m_axis_{k}_tready = ready[{k}];\n"
        );
        let _ = write!(
            observe,
            "    if (top->s_axis_{k}_tvalid && top->s_axis_{k}_tready) {{ accepted[{k}] = true; }}\n\
             \x20   if (top->m_axis_{k}_tvalid && top->m_axis_{k}_tready) {{\n\
             \x20     capture(outs[{k}], top->m_axis_{k}_tdata, top->m_axis_{k}_tkeep, top->m_axis_{k}_tuser, \
             top->m_axis_{k}_tlast, {k});\n\
             \x20     activity = true;\n    }}\n"
        );
    }
    TB.replace("@STREAMS@", &STREAMS.to_string())
        .replace("@SET_INPUTS@", &set_inputs)
        .replace("@OBSERVE@", &observe)
        .replace("@SRC_TO_INPUT@", &src_to_input())
}

fn src_to_input() -> String {
    (0..STREAMS).map(|k| format!("    if (src & (1u << {})) return {k};\n", pipeline::port_bit(k))).collect()
}

const TB: &str = r#"// emu netfpga: the SUME-level simulation's testbench (generated; see emu-fpga's sim.rs).
#include "Vemu_sume_sim.h"
#include "verilated.h"
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

static const int STREAMS = @STREAMS@;
static const int BUS = 32;

struct Frame { std::vector<uint8_t> data; size_t beat = 0; };
struct Input { std::vector<Frame> frames; size_t next = 0; bool enabled = true; };
struct Out { std::vector<uint8_t> data; uint32_t tuser = 0; bool started = false; };

static Vemu_sume_sim* top;
static uint64_t cycles = 0;
static uint64_t lcg_state = 1;
static uint32_t lcg() { lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL; return (uint32_t)(lcg_state >> 33); }

template <typename W, typename U>
static void drive(Input& in, W& tdata, uint32_t& tkeep, U& tuser, uint8_t& tvalid, uint8_t& tlast) {
    for (int i = 0; i < 8; i++) tdata[i] = 0;
    for (int i = 0; i < 4; i++) tuser[i] = 0;
    tkeep = 0; tvalid = 0; tlast = 0;
    if (!in.enabled || in.next >= in.frames.size()) return;
    Frame& f = in.frames[in.next];
    size_t at = f.beat * BUS;
    for (size_t j = 0; j < BUS && at + j < f.data.size(); j++) {
        tdata[j / 4] |= (uint32_t)f.data[at + j] << (8 * (j % 4));
        tkeep |= 1u << j;
    }
    tuser[0] = (uint32_t)f.data.size() & 0xffff;
    tvalid = 1;
    tlast = at + BUS >= f.data.size();
}

template <typename W, typename U>
static void capture(Out& o, W& tdata, uint32_t tkeep, U& tuser, uint8_t tlast, int k) {
    if (!o.started) { o.tuser = tuser[0]; o.started = true; }
    for (int j = 0; j < BUS; j++)
        if (tkeep & (1u << j)) o.data.push_back((uint8_t)(tdata[j / 4] >> (8 * (j % 4))));
    if (tlast) {
        printf("out %d %u %02x %02x ", k, o.tuser & 0xffff, (o.tuser >> 16) & 0xff, (o.tuser >> 24) & 0xff);
        for (uint8_t b : o.data) printf("%02x", b);
        printf("\n");
        o = Out();
    }
}

static int input_of(uint32_t src) {
@SRC_TO_INPUT@    return -1;
}

static Input in[STREAMS];
static Out outs[STREAMS];
static bool ready[STREAMS];

// One clock cycle: inputs set with the clock low, handshakes seen, then the rising edge.
static bool step(bool traffic) {
    bool activity = false;
    bool accepted[STREAMS] = {false};
    top->clk = 0;
    for (int k = 0; k < STREAMS; k++) ready[k] = traffic ? (lcg() % 4 != 0) : true;
@SET_INPUTS@    top->eval();
@OBSERVE@    static bool opl_first = true;
    if (top->opl_in_tvalid && top->opl_in_tready) {
        if (opl_first) printf("grant %d\n", input_of((top->opl_in_tuser[0] >> 16) & 0xff));
        opl_first = top->opl_in_tlast;
        activity = true;
    }
    top->clk = 1;
    top->eval();
    cycles++;
    for (int k = 0; k < STREAMS; k++) {
        if (!accepted[k]) continue;
        activity = true;
        Frame& f = in[k].frames[in[k].next];
        f.beat++;
        if (f.beat * BUS >= f.data.size()) in[k].next++;
    }
    return activity;
}

static const uint64_t LIMIT = 5000000;

static void idle_axi() {
    top->S_AXI_AWVALID = 0; top->S_AXI_WVALID = 0; top->S_AXI_BREADY = 0;
    top->S_AXI_ARVALID = 0; top->S_AXI_RREADY = 0; top->S_AXI_WSTRB = 0xf;
}

static bool axi_read(uint32_t addr, uint32_t& value) {
    top->S_AXI_ARADDR = addr; top->S_AXI_ARVALID = 1; top->S_AXI_RREADY = 0;
    for (int i = 0; i < 100; i++) {
        top->clk = 0; top->eval();
        bool go = top->S_AXI_ARREADY;
        step(false);
        if (go) { top->S_AXI_ARVALID = 0; break; }
    }
    top->S_AXI_RREADY = 1;
    for (int i = 0; i < 100; i++) {
        top->clk = 0; top->eval();
        if (top->S_AXI_RVALID) { value = top->S_AXI_RDATA; step(false); top->S_AXI_RREADY = 0; return true; }
        step(false);
    }
    return false;
}

static bool axi_write(uint32_t addr, uint32_t value) {
    top->S_AXI_AWADDR = addr; top->S_AXI_WDATA = value; top->S_AXI_AWVALID = 1; top->S_AXI_WVALID = 1;
    for (int i = 0; i < 100; i++) {
        top->clk = 0; top->eval();
        bool go = top->S_AXI_AWREADY && top->S_AXI_WREADY;
        step(false);
        if (go) break;
    }
    top->S_AXI_AWVALID = 0; top->S_AXI_WVALID = 0; top->S_AXI_BREADY = 1;
    for (int i = 0; i < 100; i++) {
        top->clk = 0; top->eval();
        bool done = top->S_AXI_BVALID;
        step(false);
        if (done) { top->S_AXI_BREADY = 0; return true; }
    }
    return false;
}

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    top = new Vemu_sume_sim;
    bool serial = true;
    std::vector<int> order;
    std::vector<std::string> accesses;
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream ws(line);
        std::string word;
        ws >> word;
        if (word == "mode") { std::string m; ws >> m; serial = m == "serial"; }
        else if (word == "seed") { ws >> lcg_state; lcg_state = lcg_state * 2 + 1; }
        else if (word == "frame") {
            int k; std::string hex; ws >> k >> hex;
            Frame f;
            for (size_t i = 0; i + 1 < hex.size(); i += 2) f.data.push_back((uint8_t)std::stoul(hex.substr(i, 2), nullptr, 16));
            in[k].frames.push_back(f);
            order.push_back(k);
        } else if (word == "read" || word == "write") accesses.push_back(line);
    }
    idle_axi();
    top->resetn = 0;
    for (int i = 0; i < 8; i++) step(false);
    top->resetn = 1;
    // Serial: only the input of the next frame in the script's order offers it.
    size_t turn = 0;
    uint64_t quiet = 0;
    while (true) {
        if (serial) {
            for (int k = 0; k < STREAMS; k++) in[k].enabled = false;
            while (turn < order.size()) {
                int k = order[turn];
                size_t before = 0;
                for (size_t t = 0; t < turn; t++) if (order[t] == k) before++;
                if (in[k].next > before) { turn++; continue; }
                in[k].enabled = true;
                break;
            }
        }
        bool pending = false;
        for (int k = 0; k < STREAMS; k++) if (in[k].next < in[k].frames.size()) pending = true;
        bool act = step(true);
        quiet = act ? 0 : quiet + 1;
        if (!pending && quiet > 4000) break;
        if (cycles > LIMIT) { printf("timeout %llu\n", (unsigned long long)cycles); return 0; }
    }
    for (const std::string& a : accesses) {
        std::istringstream ws(a);
        std::string word; uint32_t addr = 0, value = 0;
        ws >> word >> addr;
        if (word == "read") {
            if (!axi_read(addr, value)) { printf("timeout %llu\n", (unsigned long long)cycles); return 0; }
            printf("reg %u %u\n", addr, value);
        } else {
            ws >> value;
            if (!axi_write(addr, value)) { printf("timeout %llu\n", (unsigned long long)cycles); return 0; }
        }
    }
    printf("cycles %llu\n", (unsigned long long)cycles);
    top->final();
    delete top;
    return 0;
}
"#;

//! Command-line parsing. Each verb's work lives in `commands/`.

use crate::commands;
use crate::registry::Registry;
use clap::{Arg, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use emu::{Config, NfDescriptor};
use emu_cpu::InputSpec;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  emu list
  emu run learning-switch --in examples/mixed.pcapng --out out/
  emu run icmp-echo --ip 10.0.0.1 --in 0=ping.pcap --out out/
  emu run learning-switch --iface veth0,veth1,veth2
  emu sim learning-switch --target cpu,ir,cycle,verilator --in examples/mixed.pcapng --out sim-out/
  emu hls learning-switch -o hw/
  emu synth learning-switch --width 64
  emu synth learning-switch --width 64 --debug -o synth/ls-64-debug
  emu synth learning-switch --board icebreaker
  emu netfpga learning-switch -o sume/
  emu new my-nf
  sudo emu mininet learning-switch --topo linear,3 --run experiment.txt
  emu dbg /tmp/emu.sock --exec 'read mac_table[0]'";

/// Emu: write a network function once in Rust; run it on the CPU, in Mininet and as hardware.
#[derive(Parser)]
#[command(name = "emu", version, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    verb: Verb,
}

#[derive(Subcommand)]
enum Verb {
    /// List the network functions this tool knows, with their ports and options
    #[command(after_help = "Example:\n  emu list")]
    List,
    /// Scaffold a new NF crate that builds, runs on the example pcap and passes its own test
    #[command(
        after_help = "Example:\n  emu new rate-limiter --dir ~/nfs/rate-limiter\n  cd ~/nfs/rate-limiter && cargo test"
    )]
    New(NewArgs),
    /// Run an NF on the CPU, over pcap files or live on network interfaces
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// Run an NF through simulator tiers (cpu, ir, cycle, verilator) on the same traffic and diff them
    #[command(after_help = SIM_EXAMPLES)]
    Sim(SimArgs),
    /// Run an NF as the switches of a Mininet network, with a scripted experiment or the CLI
    #[command(after_help = MININET_EXAMPLES)]
    Mininet(MininetArgs),
    /// Compile an NF into Verilog for NetFPGA SUME, with a report and a symbol table
    #[command(after_help = HLS_EXAMPLES)]
    Hls(HlsArgs),
    /// Synthesize an NF's Verilog with yosys: a resource table for the SUME part, or an iCE40 bitstream
    #[command(after_help = SYNTH_EXAMPLES)]
    Synth(SynthArgs),
    /// Make a NetFPGA SUME Vivado project with the NF as the reference switch's output port lookup
    #[command(after_help = NETFPGA_EXAMPLES)]
    Netfpga(NetfpgaArgs),
    /// Debug a running NF: read and write its state by name, watch, trace, break and step
    #[command(after_help = DBG_EXAMPLES)]
    Dbg(DbgArgs),
}

const HLS_EXAMPLES: &str = "\
NF is a name from `emu list`, or a .rs file holding an `#[emu::nf(ports = N, window = BYTES)]
mod name { … }` (ports 4 and window 64 when the attribute leaves them out). The module must
keep to the synthesizable subset (docs/hls-subset.md). A registered NF's options are given as
for `emu run` (`--ip 10.0.0.1` after the NF's name, or `-p ip=10.0.0.1`); they become the
reset values of its configuration registers.

Writes, creating DIR if needed:
  DIR/verilog/<module>.v   one file per module: the NF's (emu_<name>: ingress, FSM, egress,
                           the SUME AXI-Stream interface) and one per state element
  DIR/report.md            the FSM, cycles per packet by path (and whether that keeps up with
                           4x10G of 64-byte frames at --clock-mhz), memories, a resource estimate
  DIR/symbols.json         the state elements: kinds, widths, debug addresses

Examples:
  emu hls learning-switch -o hw/learning-switch
  emu hls icmp-echo --ip 10.0.0.1 --width 64 -o hw/icmp-echo
  emu hls learning-switch --clock-mhz 250 -o hw/learning-switch
  emu hls icmp-echo -p ip=10.0.0.1 -p mac=02:00:00:00:00:01 -o hw/icmp-echo
  emu hls my_nf.rs --max-frame 9018 -o hw/my-nf
  emu hls learning-switch --debug -o hw/learning-switch-dbg
  emu hls learning-switch --debug --debug-port 3 -o hw/ls-dbg    (then: sudo emu dbg IFACE --hardware learning-switch)";

#[derive(Args)]
pub(crate) struct HlsArgs {
    /// The NF: a name (`emu list` shows them) or a .rs file holding an #[emu::nf] module
    #[arg(value_name = "NF|FILE.rs")]
    pub nf: String,
    /// Output directory (created if missing)
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Width of the AXI-Stream data path in bits: 64 or 256
    #[arg(long, value_name = "BITS", default_value_t = 256, value_parser = parse_width)]
    pub width: usize,
    /// Largest frame in bytes (the packet buffer's size); longer frames are dropped as `oversize`
    #[arg(long, value_name = "BYTES", default_value_t = emu::DEFAULT_MAX_FRAME)]
    pub max_frame: usize,
    /// The clock the report judges line rate at (4×10G of 64-byte frames)
    #[arg(long, value_name = "MHZ", default_value_t = 200.0, value_parser = parse_clock)]
    pub clock_mhz: f64,
    /// An NF option, the same as `--NAME VALUE`; repeat for several
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// The module to compile when the file holds several #[emu::nf] modules
    #[arg(long, value_name = "NAME")]
    pub module: Option<String>,
    /// Build the debug unit into the NF (break/step, state access, watchpoints behind the
    /// dbg_* register port; docs/debug-protocol.md)
    #[arg(long)]
    pub debug: bool,
    /// With --debug, also reach the unit in band: control frames (EtherType 0x88B5) from this
    /// port are the unit's (reg_read and reg_write requests; docs/debug-protocol.md)
    #[arg(long, value_name = "PORT", requires = "debug", value_parser = clap::value_parser!(u8).range(0..4))]
    pub debug_port: Option<u8>,
}

const SYNTH_EXAMPLES: &str = "\
Generates the NF's Verilog as `emu hls` does, then runs the open toolchain on it.

Without --board: yosys `synth_xilinx -family xc7` with the NF's module as the top, and a table of
LUTs (logic, and LUTs used as memory), flip-flops, block RAM (RAMB36 and RAMB18, and the total in
RAMB18s), DSPs, CARRY4 and wide muxes, with the change against the last run of the same NF,
width and part. The part is a label on the report: synth_xilinx maps to the 7-series family,
not to one part (it knows no part's size, pins or speed grade); for xc7vx690t, the SUME's
part, the table also gives each figure as a share of the part. No timing: that needs Vivado.

With --board (icebreaker: iCE40UP5K-SG48; hx8k-breakout: iCE40HX8K-CT256): the NF inside a
small harness (its inputs from a shift register fed by one pin, its outputs folded by XOR onto
8 pins, a power-on reset), yosys `synth_ice40`, nextpnr-ice40 (placed, routed and timed at
--freq, by default the board's 12 MHz oscillator) and icepack, giving DIR/<nf>.bin; the report
gives the clock nextpnr achieved against the requested one, and the logic cells, LUTs,
flip-flops and block RAMs used. The bus is 64 bits unless --width says otherwise. The exit
status is 1 when timing is not met (the bitstream is still written).

Writes, creating DIR (default synth/<nf>-<width>, or synth/<nf>-<board> with --board):
  DIR/verilog/<module>.v   the design, as `emu hls` writes it
  DIR/synth.json           this run's figures; the next run compares with them
  DIR/<nf>.bin, DIR/emu_ice40_top.v, DIR/<board>.pcf, DIR/yosys.log, DIR/nextpnr.log
                           with --board: the bitstream, the harness, the pins and the tools' logs

Needs yosys (and, with --board, nextpnr-ice40 and icepack from fpga-icestorm): Debian's
packages, installed by scripts/setup.sh. The 64-bit learning switch takes about 20 s in
synth_xilinx and about a minute through the iCE40 flow; NFs of hundreds of FSM states take
tens of minutes (the NAT 10, the DNS server 30; docs/nfs.md has each NF's figures).

Examples:
  emu synth learning-switch --width 64
  emu synth learning-switch --width 64 --debug -o synth/ls-64-debug
  emu synth learning-switch --width 256 --part xc7vx690t -o synth/ls-256
  emu synth icmp-echo --ip 10.0.0.1 --width 64
  emu synth learning-switch --board icebreaker
  emu synth learning-switch --board hx8k-breakout --freq 25 --max-frame 256";

#[derive(Args)]
pub(crate) struct SynthArgs {
    /// The NF: a name (`emu list` shows them) or a .rs file holding an #[emu::nf] module
    #[arg(value_name = "NF|FILE.rs")]
    pub nf: String,
    /// Output directory (created if missing) [default: synth/<nf>-<width>, or synth/<nf>-<board>]
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The Xilinx part the report is labelled with; yosys synthesizes for its family (7-series),
    /// not for the part itself
    #[arg(long, value_name = "PART", default_value = "xc7vx690t", conflicts_with = "board")]
    pub part: String,
    /// Build a bitstream for an iCE40 board instead: icebreaker or hx8k-breakout
    #[arg(long, value_name = "BOARD")]
    pub board: Option<String>,
    /// With --board: the clock nextpnr must meet, in MHz [default: the board's oscillator, 12]
    #[arg(long, value_name = "MHZ", requires = "board")]
    pub freq: Option<f64>,
    /// Width of the AXI-Stream data path in bits: 64 or 256 [default: 256, or 64 with --board]
    #[arg(long, value_name = "BITS", value_parser = parse_width)]
    pub width: Option<usize>,
    /// Largest frame in bytes (the packet buffer's size)
    #[arg(long, value_name = "BYTES", default_value_t = emu::DEFAULT_MAX_FRAME)]
    pub max_frame: usize,
    /// An NF option, the same as `--NAME VALUE`; repeat for several
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// The module to compile when the file holds several #[emu::nf] modules
    #[arg(long, value_name = "NAME")]
    pub module: Option<String>,
    /// Synthesize with the debug unit built in (to see its cost)
    #[arg(long)]
    pub debug: bool,
    /// With --debug, also reach the unit in band: control frames (EtherType 0x88B5) from this
    /// port are the unit's (reg_read and reg_write requests; docs/debug-protocol.md)
    #[arg(long, value_name = "PORT", requires = "debug", value_parser = clap::value_parser!(u8).range(0..4))]
    pub debug_port: Option<u8>,
}

const NETFPGA_EXAMPLES: &str = "\
Generates the NF's Verilog as `emu hls` does (256-bit bus) and puts it in the NetFPGA SUME
reference switch: input arbiter -> the NF as output port lookup -> output queues, ports nf0-nf3
and DMA, with the NF's counters (frames in and out, drops per reason) on AXI4-Lite.

Writes, creating DIR:
  DIR/verilog/<module>.v             the NF, as `emu hls` writes it
  DIR/hdl/emu_output_port_lookup.v   the OPL wrapper: the reference OPL's ports, the register file
  DIR/hdl/nf_datapath.v              the reference data path around it
  DIR/constraints/emu_sume.xdc       the board's clocks and pins
  DIR/emu_sume.tcl, DIR/Makefile     the Vivado flow: `make -C DIR` builds the bitstream
  DIR/README.md                      building, loading, testing with pcaps; the register map
  DIR/sim/                           the SUME-level simulation, for Verilator

The reference IP is not shipped: the flow takes it from a NetFPGA-SUME-live checkout named by
SUME_FOLDER. When `vivado` is on the PATH this command runs the flow and reports timing (WNS)
and utilisation; otherwise it says so and leaves the project ready.

Examples:
  emu netfpga learning-switch -o sume/learning-switch
  SUME_FOLDER=~/NetFPGA-SUME-live make -C sume/learning-switch
  emu netfpga icmp-echo --ip 10.0.0.1 --board sume -o sume/icmp-echo";

#[derive(Args)]
pub(crate) struct NetfpgaArgs {
    /// The NF: a name (`emu list` shows them) or a .rs file holding an #[emu::nf] module
    #[arg(value_name = "NF|FILE.rs")]
    pub nf: String,
    /// Output directory (created if missing)
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The board: sume (NetFPGA SUME)
    #[arg(long, value_name = "BOARD", default_value = "sume")]
    pub board: String,
    /// Width of the AXI-Stream data path in bits; the SUME's is 256
    #[arg(long, value_name = "BITS", default_value_t = 256, value_parser = parse_width)]
    pub width: usize,
    /// Largest frame in bytes (the packet buffer's size); longer frames are dropped as `oversize`
    #[arg(long, value_name = "BYTES", default_value_t = emu::DEFAULT_MAX_FRAME)]
    pub max_frame: usize,
    /// An NF option, the same as `--NAME VALUE`; repeat for several
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// The module to compile when the file holds several #[emu::nf] modules
    #[arg(long, value_name = "NAME")]
    pub module: Option<String>,
    /// Build the debug unit into the NF, its registers on the OPL's AXI4-Lite slave (a page
    /// at a time from 0x800, DEBUG_PAGE at 0x7FC says which)
    #[arg(long)]
    pub debug: bool,
    /// With --debug, also reach the unit in band: control frames (EtherType 0x88B5) from this
    /// port are the unit's (reg_read and reg_write requests; docs/debug-protocol.md)
    #[arg(long, value_name = "PORT", requires = "debug", value_parser = clap::value_parser!(u8).range(0..4))]
    pub debug_port: Option<u8>,
}

fn parse_width(s: &str) -> Result<usize, String> {
    match s {
        "64" => Ok(64),
        "256" => Ok(256),
        _ => Err("the SUME data path is 64 or 256 bits wide: give --width 64 or --width 256".into()),
    }
}

fn parse_clock(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() && f > 0.0 => Ok(f),
        _ => Err(format!("`{s}` is not a clock: give the frequency in MHz, e.g. --clock-mhz 156.25")),
    }
}

fn parse_frames(s: &str) -> Result<std::ops::Range<u64>, String> {
    let bad = || format!("`{s}` is not a frame range: write A..B (B excluded) or a single frame N");
    match s.split_once("..") {
        Some((a, b)) => {
            let (a, b): (u64, u64) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
            if a < b {
                Ok(a..b)
            } else {
                Err(bad())
            }
        }
        None => s.parse::<u64>().map(|n| n..n + 1).map_err(|_| bad()),
    }
}

fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    s.trim_end_matches('s')
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0 && *x <= 86_400.0)
        .map(std::time::Duration::from_secs_f64)
        .ok_or_else(|| format!("`{s}` is not a time: write seconds, more than 0 and at most a day (e.g. 5, 0.5)"))
}

fn parse_fault(s: &str) -> Result<(String, u64), String> {
    let bad = || format!("`{s}` is not a fault: write TIER:N, e.g. cycle:500 (the 500th frame to reach the cycle tier)");
    let (tier, n) = s.split_once(':').ok_or_else(bad)?;
    tier.parse::<emu_sim::Tier>()?;
    Ok((tier.to_string(), n.parse().map_err(|_| bad())?))
}

fn parse_param(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_string(), value.to_string())),
        _ => Err("write an NF option as NAME=VALUE, e.g. -p ip=10.0.0.1".into()),
    }
}

const MININET_EXAMPLES: &str = "\
Needs root and Debian's `mininet` package (scripts/setup.sh installs it). Every switch of the
topology is `emu run NF` on the switch's ports; hosts get 10.0.0.k/24 unless a topology file
says otherwise. Without --run or --cli the experiment is `pingall`. After the teardown, each
switch's NF output is printed whole: its counters and its summary at exit.

Script (--run FILE), one step per line:
  pingall                     every host pings every other; passes on 0% loss
  h1: ping -c 3 10.0.0.2      a shell command on h1; passes on exit status 0
  h2 &: memcached -u nobody   started in the background, stopped at the end
  h1 !: ping -c 1 10.0.0.9    passes when the command fails
  timeout 20                  seconds each later command may take (default 30)
  sleep 0.5
`$WORK` in a command is the experiment's working directory, shared by all hosts; `$EMU` is this
emu binary. With --debug each switch's debug channel listens at $WORK/<switch>.dbg, for steps
such as `h1: $EMU dbg $WORK/s1.dbg --exec 'read mac_table[0]'`.

Topology file (--topo FILE, JSON):
  {\"hosts\": [{\"name\": \"h1\", \"ip\": \"10.0.0.1/24\"}, {\"name\": \"h2\"}],
   \"switches\": [\"s1\"], \"links\": [[\"h1\", \"s1\"], [\"h2\", \"s1\"]]}

Examples:
  sudo emu mininet learning-switch --topo single,4
  sudo emu mininet learning-switch --topo linear,3 --run experiment.txt
  sudo emu mininet icmp-echo --ip 10.0.0.100 --topo single,2 --cli
  sudo emu mininet learning-switch --topo single,2 --switch linux-bridge --run iperf.txt
  sudo emu mininet stats --top all --topo single,3 --run traffic.txt";

#[derive(Args)]
pub(crate) struct MininetArgs {
    /// The NF the switches run (`emu list` shows them)
    pub nf: String,
    /// `single,N`, `linear,N` or a JSON topology file
    #[arg(long, default_value = "single,2")]
    pub topo: String,
    /// Run the experiment script FILE (see below)
    #[arg(long, value_name = "FILE", conflicts_with = "cli")]
    pub run: Option<PathBuf>,
    /// Open Mininet's interactive CLI instead of running a script
    #[arg(long)]
    pub cli: bool,
    /// What the switches are: `emu` (the NF) or `linux-bridge` (a baseline to compare with)
    #[arg(long, default_value = "emu", value_name = "KIND")]
    pub switch: String,
    /// Packet I/O of the NF switches: `plain` or `ring` (see `emu run --help`)
    #[arg(long, value_name = "MODE")]
    pub io: Option<String>,
    /// Keep the working directory (NF logs, the spec) even when the experiment passes
    #[arg(long)]
    pub keep: bool,
    /// Turn on each switch's debug channel, a socket at $WORK/<switch>.dbg: a step runs
    /// `$EMU dbg $WORK/s1.dbg --exec '…'` against it
    #[arg(long)]
    pub debug: bool,
}

const RUN_EXAMPLES: &str = "\
Inputs: `--in FILE` for a pcapng whose interface ids are the ports (or a pcap, to port 0), or
`--in PORT=FILE` once per port; frames of several files are merged by timestamp. The output
directory gets port<N>.pcap for every port, drops.jsonl (one JSON line per dropped frame:
index, port, reason) and summary.json.

Live: `--iface a,b,c` binds port 0 to a, 1 to b, 2 to c (needs root or CAP_NET_RAW). The run
ends on Ctrl-C or when an interface disappears, and prints its counters.

Examples:
  emu run learning-switch --in examples/mixed.pcapng --out out/
  emu run learning-switch --in 0=h1.pcap --in 1=h2.pcap --out out/
  emu run icmp-echo --ip 10.0.0.1 --in 0=ping.pcap --out out/
  emu run learning-switch --iface veth0,veth1 --drops drops.jsonl
  emu run learning-switch --iface veth0,veth1 --debug-socket /tmp/emu.sock
  emu run learning-switch --in examples/mixed.pcapng --out out/ --profile out/profile.json";

const SIM_EXAMPLES: &str = "\
Tiers: cpu (native; the reference), ir (the NF's #[emu::nf] source through the HLS front end
and lowering, run by the IR interpreter), cycle (the generated hardware's cycle-accurate
model) and verilator (the generated Verilog compiled by Verilator; the model is cached by
content, so only the first run builds it). The hardware tiers are fed frame by frame through
their SUME stream ports. Each tier writes DIR/<tier>/port<N>.pcap and DIR/<tier>/drops.jsonl;
with two or more tiers, every tier is compared with the first, per port and per frame, and
the first difference is named by header field. The exit status is 1 when tiers disagree.
Hardware tiers also print latency (cycles, and ns at --clock-mhz), the cycles per frame and
the throughput against 4x10G; with --back-to-back, also the cycles per frame with the same
frames fed back to back (what the hardware sustains on this traffic).

With --fuzz N instead of --in, the traffic is N seeded frames of the protocols the shipped NFs
speak (ARP, IPv4 with options and fragments, ICMP, UDP, DNS, memcached, TCP, 802.1Q tags),
aimed at the addresses, names and ports of the NF's options, a third of them damaged, and
replies to what the first tier sent; the tiers run in lockstep and each frame's fate is
compared as it goes (nothing is written unless --out is given: DIR/traffic.pcapng then holds
the traffic, ports as interfaces, to replay with --in). The same --seed gives the same frames.

Examples:
  emu sim learning-switch --target cpu,ir,cycle,verilator --in examples/mixed.pcapng --out sim-out/
  emu sim learning-switch --target cpu,verilator --vcd ls.vcd --vcd-frames 3..5 --in examples/mixed.pcapng --out sim-out/
  emu sim learning-switch --target cpu,cycle --width 64 --clock-mhz 156.25 --in examples/mixed.pcapng --out sim-out/
  emu sim learning-switch --target cpu,cycle,verilator --back-to-back --in examples/mixed.pcapng --out sim-out/
  emu sim icmp-echo --ip 10.0.0.1 --target cpu,ir --in 0=ping.pcap --out sim-out/ --json
  emu sim learning-switch --target cpu,cycle --in examples/mixed.pcapng --out sim-out/ --profile sim-out/profile
  emu sim learning-switch --target verilator --in examples/mixed.pcapng --out sim-out/ --debug-socket /tmp/ls.sock
      then: emu dbg /tmp/ls.sock --exec 'watch floods >= 4; continue; wait 2000'
      (add --stay to read the state after the last frame: it serves until Ctrl-C)
  emu sim learning-switch --target cpu,ir,cycle,verilator --fuzz 1000000 --seed 7
  emu sim dns-server --zone z.txt --ip 10.0.0.53 --target cpu,verilator --fuzz 20000 --out fuzz-out/
  emu sim learning-switch --target cpu,cycle --fuzz 1000 --inject-drop cycle:500   (the diff must name frame 500)";

#[derive(Args)]
pub(crate) struct NewArgs {
    /// Name of the NF, in kebab-case (e.g. `rate-limiter`)
    pub name: String,
    /// Directory to create (default: ./NAME)
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// Options shared by `run` and `sim` for traffic from files.
#[derive(Args)]
pub(crate) struct PcapArgs {
    /// Input capture: `FILE` or `PORT=FILE`; repeat for several ports
    #[arg(long = "in", value_name = "[PORT=]FILE")]
    pub inputs: Vec<InputSpec>,
    /// Output directory
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Number of ports (default: the NF's own; with --iface, the number of interfaces)
    #[arg(long)]
    pub ports: Option<usize>,
    /// Largest frame in bytes; longer frames are dropped as `oversize`
    #[arg(long, default_value_t = emu::DEFAULT_MAX_FRAME)]
    pub max_frame: usize,
    /// Print the summary as JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub(crate) struct RunArgs {
    /// The NF to run (`emu list` shows them)
    pub nf: String,
    #[command(flatten)]
    pub pcap: PcapArgs,
    /// Run live on these interfaces, comma-separated; port k is the k-th
    #[arg(long, value_delimiter = ',', value_name = "IF,IF,...")]
    pub iface: Vec<String>,
    /// With --iface: write drop records (JSON lines) to this file
    #[arg(long, value_name = "FILE")]
    pub drops: Option<PathBuf>,
    /// With --iface: packet I/O, `plain` (a raw socket, a system call per frame) or `ring`
    /// (TPACKET_V3 receive ring, batched sends; falls back to plain per interface)
    #[arg(long, value_name = "MODE", default_value = "plain")]
    pub io: emu_cpu::IoMode,
    /// With --iface: turn the debug channel on, taking control frames (EtherType 0x88B5) on
    /// this port; from other ports they are ordinary traffic (docs/debug-protocol.md)
    #[arg(long, value_name = "PORT")]
    pub debug_port: Option<u8>,
    /// With --iface: turn the debug channel on, on this Unix socket (`emu dbg PATH`)
    #[arg(long, value_name = "PATH")]
    pub debug_socket: Option<PathBuf>,
    /// With the debug channel: a break with no client in touch (none connected to the socket,
    /// no request in band) for this long ends by itself, so live traffic is never held by a
    /// client that went away
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, default_value = "5")]
    pub break_timeout: std::time::Duration,
    /// Profile the run: per-packet latency (ns), table hit rates, queue occupancy; a table at
    /// the end, JSON in FILE and SVG plots beside it (FILE's stem + .cpu.latency.svg, .cpu.cdf.svg)
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
}

const DBG_EXAMPLES: &str = "\
TARGET is the Unix socket of a run (`emu run NF --iface … --debug-socket PATH`) or of the
generated hardware under Verilator (`emu sim NF --target verilator … --debug-socket PATH`), or
an interface linked to the management port of a run with `--debug-port` (in band, EtherType
0x88B5; needs root). Without --exec or --script, commands are read from the terminal (line
editing, history in ~/.emu_dbg_history or $EMU_DBG_HISTORY, Tab completion, Ctrl-C ends a
`wait`, `quit` leaves); `help` lists them. Names are the NF's field names and probes
(`symbols` lists them, with the runner's counters). Watches belong to the unit: each
session's takes a free slot, `watches` lists them all. A break ends by itself when no client
has been in touch for the run's --break-timeout (5 s): a session at the terminal keeps it.
What the hardware's unit does differently: docs/debug-protocol.md.

Examples:
  emu dbg /tmp/emu.sock
  emu dbg /tmp/emu.sock --exec 'symbols'
  emu dbg /tmp/emu.sock --exec 'read mac_table[key=02:00:00:00:00:01]' --exec 'read floods'
  emu dbg /tmp/emu.sock --exec 'dump mac_table'
  emu dbg /tmp/emu.sock --exec 'watch floods >= 10 record; wait 5000'
  emu dbg /tmp/emu.sock --exec 'watches; unwatch 0'
  emu dbg /tmp/emu.sock --exec 'break; wait 1000; step 3; continue'
  sudo emu dbg veth-mgmt --script session.txt
  sudo emu dbg eth2 --hardware learning-switch --exec 'read floods; watch floods >= 10 record; wait 5000'";

#[derive(Args)]
pub(crate) struct DbgArgs {
    /// A run's or `emu sim`'s debug socket, or an interface linked to a run's management port
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// Commands to run, `;`-separated; repeat for more; stops at the first that fails
    #[arg(long, short = 'e', value_name = "COMMANDS")]
    pub exec: Vec<String>,
    /// A file of commands, one per line (`#` starts a comment)
    #[arg(long, value_name = "FILE", conflicts_with = "exec")]
    pub script: Option<PathBuf>,
    /// TARGET is an interface linked to the management port of generated hardware built with
    /// `--debug --debug-port` running this NF (with its options): the protocol is served here,
    /// over the unit's reg_read and reg_write requests in band
    #[arg(long, value_name = "NF")]
    pub hardware: Option<String>,
    /// With --hardware: the unit's watchdog ends a break no host has touched for this long
    /// (this session keeps it while it lasts), so a killed session leaves no traffic held
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, default_value = "5", requires = "hardware")]
    pub break_timeout: std::time::Duration,
    /// With --hardware: the hardware's clock, to count the break timeout in its cycles
    /// (NetFPGA SUME's datapath: 200)
    #[arg(long, value_name = "MHZ", default_value_t = 200, requires = "hardware")]
    pub clock_mhz: u32,
}

#[derive(Args)]
pub(crate) struct SimArgs {
    /// The NF to simulate (`emu list` shows them)
    pub nf: String,
    /// Tiers to run, comma-separated: cpu, ir, cycle, verilator
    #[arg(long, value_delimiter = ',', default_value = "cpu")]
    pub target: Vec<String>,
    /// Data width of the hardware tiers' stream ports, in bits: 64 or 256
    #[arg(long, default_value_t = 256, value_parser = parse_width)]
    pub width: usize,
    /// Clock of the hardware tiers, for latencies in ns and throughput
    #[arg(long, default_value_t = 200.0, value_name = "MHZ", value_parser = parse_clock)]
    pub clock_mhz: f64,
    /// After the run, feed the hardware tiers' frames again back to back (the next frame's
    /// first beat right after the last one's, the sink always ready) and print the cycles per
    /// frame: the interval on this traffic. Each frame must come out as it did one at a time.
    #[arg(long)]
    pub back_to_back: bool,
    /// Write the verilator tier's waveform (every signal, every cycle) to FILE, for GTKWave
    #[arg(long, value_name = "FILE")]
    pub vcd: Option<PathBuf>,
    /// Record only these frames in the waveform, numbered from 0 as they reach the hardware
    /// (the ingress checks drop some before): `A..B` (B excluded) or `N`
    #[arg(long, value_name = "A..B", value_parser = parse_frames, requires = "vcd")]
    pub vcd_frames: Option<std::ops::Range<u64>>,
    /// Profile every tier: latency per packet (ns on cpu and ir, cycles on cycle and verilator),
    /// cycles per FSM state (cycle), table hit rates, queue occupancy; a table per tier, then
    /// DIR/profile.json and SVG plots DIR/<tier>.latency.svg, .cdf.svg, .states.svg
    #[arg(long, value_name = "DIR")]
    pub profile: Option<PathBuf>,
    /// Debug the verilator tier: build the Verilog with its debug unit, start at a break, and
    /// serve the unit on this Unix socket (`emu dbg PATH`)
    #[arg(long, value_name = "PATH")]
    pub debug_socket: Option<PathBuf>,
    /// With --debug-socket: keep serving the unit after the traffic has drained (to read the
    /// state the last frames left), until Ctrl-C
    #[arg(long, requires = "debug_socket")]
    pub stay: bool,
    /// With --debug-socket: once a client has connected, a break with no client connected for
    /// this long ends by itself (the break the run starts at waits for the first client)
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, default_value = "5", requires = "debug_socket")]
    pub break_timeout: std::time::Duration,
    /// Instead of --in: N seeded fuzz frames through every tier in lockstep (see below)
    #[arg(long, value_name = "N", conflicts_with_all = ["inputs", "debug_socket", "back_to_back", "profile"])]
    pub fuzz: Option<u64>,
    /// With --fuzz: the seed; the same seed gives the same frames
    #[arg(long, value_name = "S", default_value_t = 1, requires = "fuzz")]
    pub seed: u64,
    /// A fault, to check the check: the N-th frame (from 0) that reaches TIER's NF is dropped
    /// there (as `malformed`); the diff must report that one frame and nothing else
    #[arg(long, value_name = "TIER:N", value_parser = parse_fault)]
    pub inject_drop: Option<(String, u64)>,
    #[command(flatten)]
    pub pcap: PcapArgs,
}

/// Adds `--NAME VALUE` for every run-time option of `desc` to a verb.
fn with_nf_params(mut cmd: clap::Command, desc: &NfDescriptor) -> clap::Command {
    for p in desc.params {
        let default = p.default.map(|d| format!(" [default: {d}]")).unwrap_or_else(|| " [required]".into());
        cmd = cmd.arg(
            Arg::new(p.name)
                .long(p.name)
                .value_name("VALUE")
                .help(format!("{} option: {}{default}", desc.name, p.help)),
        );
    }
    cmd
}

/// The NF options given on the command line.
fn nf_config(desc: &NfDescriptor, m: &ArgMatches) -> Config {
    let mut c = Config::new();
    for p in desc.params {
        if let Ok(Some(v)) = m.try_get_one::<String>(p.name) {
            c.set(p.name, v);
        }
    }
    c
}

/// Runs the tool with the built-in NFs plus `extra`; returns the process exit code.
pub fn main_with(extra: &[NfDescriptor]) -> i32 {
    let registry = Registry::new(extra);
    let argv: Vec<String> = std::env::args().collect();
    let mut cmd = Cli::command();
    // An NF's own options exist only once we know which NF: find its name among the words
    // after the verb.
    let verb = argv.get(1).map(String::as_str).unwrap_or("");
    let nf = if matches!(verb, "run" | "sim" | "mininet" | "hls" | "synth" | "netfpga" | "dbg") {
        argv.iter().skip(2).find_map(|a| registry.find(a).ok()).copied()
    } else {
        None
    };
    if let Some(desc) = &nf {
        cmd = cmd.mut_subcommand(verb, |sc| with_nf_params(sc, desc));
    }
    let matches = match cmd.try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) => e.exit(),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let sub = matches.subcommand().map(|(_, m)| m);
    let result = match cli.verb {
        Verb::List => commands::list::run(&registry),
        Verb::New(a) => commands::new::run(&a),
        Verb::Run(a) => registry.find(&a.nf).and_then(|d| {
            let config = nf_config(d, sub.expect("run has matches"));
            commands::run::run(d, &config, &a)
        }),
        Verb::Sim(a) => registry.find(&a.nf).and_then(|d| {
            let config = nf_config(d, sub.expect("sim has matches"));
            commands::sim::run(d, &config, &a)
        }),
        Verb::Mininet(a) => registry.find(&a.nf).and_then(|d| {
            let config = nf_config(d, sub.expect("mininet has matches"));
            commands::mininet::run(d, &config, &a)
        }),
        Verb::Hls(a) => commands::hls::run(&registry, &a, |d| nf_config(d, sub.expect("hls has matches"))),
        Verb::Synth(a) => commands::synth::run(&registry, &a, |d| nf_config(d, sub.expect("synth has matches"))),
        Verb::Netfpga(a) => commands::netfpga::run(&registry, &a, |d| nf_config(d, sub.expect("netfpga has matches"))),
        Verb::Dbg(a) => match &a.hardware {
            Some(nf) => registry.find(nf).and_then(|d| {
                let config = nf_config(d, sub.expect("dbg has matches"));
                commands::dbg::run_hardware(d, &config, &a)
            }),
            None => commands::dbg::run(&a),
        },
    };
    match result {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("error: {msg}");
            1
        }
    }
}

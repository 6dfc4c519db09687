//! A second simulator for the generated Verilog: Icarus Verilog (Debian's `iverilog`), which,
//! like Vivado's xsim, is event-driven where Verilator is cycle-based, so Verilog that the two
//! kinds read otherwise (an `always @*` that never runs, an X that Verilator makes 0) shows up
//! as a difference. [`Recorder`] keeps what any [`Clocked`] hardware saw and showed, cycle by
//! cycle; [`replay`] feeds the same inputs to the Verilog under iverilog and returns what it
//! showed, to compare cycle for cycle.

use emu_core::DropReason;
use emu_hls::backend::model::{Beat, Inputs, Outputs};
use emu_hls::backend::top::Clocked;
use emu_hls::backend::{rtl, Design};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// Hardware that records, each cycle, the outputs it showed and the inputs of the edge after.
pub struct Recorder<H> {
    /// The hardware.
    pub hw: H,
    /// (outputs before the edge, inputs at the edge), one per cycle after the reset.
    pub cycles: Vec<(Outputs, Inputs)>,
}

impl<H: Clocked> Recorder<H> {
    /// Records `hw`.
    pub fn new(hw: H) -> Recorder<H> {
        Recorder { hw, cycles: vec![] }
    }
}

impl<H: Clocked> Clocked for Recorder<H> {
    fn outputs(&self) -> Outputs {
        self.hw.outputs()
    }
    fn clock(&mut self, inputs: &Inputs) {
        self.cycles.push((self.hw.outputs(), inputs.clone()));
        self.hw.clock(inputs);
    }
    fn reset(&mut self) {
        self.hw.reset();
    }
}

/// The testbench: one reset cycle (every input 0), then each cycle shows the outputs, applies
/// that cycle's inputs from `stimulus.hex`, and clocks.
fn testbench(top: &str, data_bits: usize, cycles: usize) -> String {
    let keep = data_bits / 8;
    let record = data_bits + keep + 128 + 3;
    format!(
        "`timescale 1ns/1ps
module emu_iverilog_tb;
    reg clk = 0;
    reg resetn = 0;
    reg [{d}:0] s_tdata = 0;
    reg [{k}:0] s_tkeep = 0;
    reg [127:0] s_tuser = 0;
    reg s_tvalid = 0, s_tlast = 0, m_tready = 0;
    wire [{d}:0] m_tdata;
    wire [{k}:0] m_tkeep;
    wire [127:0] m_tuser;
    wire m_tvalid, m_tlast, s_tready, drop_valid;
    wire [7:0] drop_reason;
    reg [{r}:0] stimulus [0:{last}];
    integer i;
    {top} nf (
        .axis_aclk(clk), .axis_resetn(resetn),
        .s_axis_tdata(s_tdata), .s_axis_tkeep(s_tkeep), .s_axis_tuser(s_tuser),
        .s_axis_tvalid(s_tvalid), .s_axis_tready(s_tready), .s_axis_tlast(s_tlast),
        .m_axis_tdata(m_tdata), .m_axis_tkeep(m_tkeep), .m_axis_tuser(m_tuser),
        .m_axis_tvalid(m_tvalid), .m_axis_tready(m_tready), .m_axis_tlast(m_tlast),
        .stat_drop_valid(drop_valid), .stat_drop_reason(drop_reason)
    );
    initial begin
        $readmemh(\"stimulus.hex\", stimulus);
        #5 clk = 1; #5 clk = 0;
        resetn = 1;
        for (i = 0; i < {cycles}; i = i + 1) begin
            #1 $display(\"%b %b %b %h %h %h %b %h\", s_tready, m_tvalid, m_tlast, m_tdata, m_tkeep, m_tuser,
                        drop_valid, drop_reason);
            {{s_tdata, s_tkeep, s_tuser, s_tvalid, s_tlast, m_tready}} = stimulus[i];
            #4 clk = 1; #5 clk = 0;
        end
        $finish;
    end
endmodule
",
        d = data_bits - 1,
        k = keep - 1,
        r = record - 1,
        last = cycles.max(1) - 1,
    )
}

/// A stimulus line: tdata (byte i at bits 8i+7:8i), tkeep, tuser, tvalid, tlast, tready, in hex.
fn stimulus_line(inputs: &Inputs, bus: usize) -> String {
    let none = Beat { tdata: vec![0; bus], ..Beat::default() };
    let b = inputs.s_axis.as_ref().unwrap_or(&none);
    let mut bits: Vec<bool> = vec![];
    for byte in b.tdata.iter().take(bus).rev() {
        bits.extend((0..8).rev().map(|i| byte >> i & 1 != 0));
    }
    bits.extend((0..bus).rev().map(|i| b.tkeep >> i & 1 != 0));
    bits.extend((0..128).rev().map(|i| b.tuser >> i & 1 != 0));
    bits.extend([inputs.s_axis.is_some(), b.tlast, inputs.m_axis_tready]);
    // Hex digits from the least significant end.
    let mut digits = vec![];
    for chunk in bits.rchunks(4) {
        let v = chunk.iter().fold(0u8, |v, &bit| v << 1 | bit as u8);
        digits.push(char::from_digit(v as u32, 16).unwrap());
    }
    digits.iter().rev().collect()
}

/// One line of the testbench's output as [`Outputs`]; an X or Z anywhere it matters is an error.
fn parse_outputs(line: &str, bus: usize) -> Result<Outputs, String> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let [tready, tvalid, tlast, tdata, tkeep, tuser, dvalid, dreason] = f[..] else {
        return Err(format!("not a line of outputs: {line}"));
    };
    let bit = |s: &str, what: &str| match s {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(format!("{what} is {s}")),
    };
    let hex = |s: &str, what: &str| -> Result<Vec<u8>, String> {
        if s.chars().any(|c| !c.is_ascii_hexdigit()) {
            return Err(format!("{what} is {s}"));
        }
        let padded = if s.len() % 2 == 1 { format!("0{s}") } else { s.to_string() };
        Ok((0..padded.len() / 2).map(|i| u8::from_str_radix(&padded[2 * i..2 * i + 2], 16).unwrap()).rev().collect())
    };
    let m_axis = if bit(tvalid, "m_axis_tvalid")? {
        let mut tdata = hex(tdata, "m_axis_tdata")?;
        tdata.resize(bus, 0);
        let keep = hex(tkeep, "m_axis_tkeep")?.iter().rev().fold(0u64, |v, b| v << 8 | *b as u64);
        let user = hex(tuser, "m_axis_tuser")?.iter().rev().fold(0u128, |v, b| v << 8 | *b as u128);
        Some(Beat { tdata, tkeep: keep, tuser: user, tlast: bit(tlast, "m_axis_tlast")? })
    } else {
        None
    };
    let drop = if bit(dvalid, "stat_drop_valid")? {
        let code = hex(dreason, "stat_drop_reason")?.first().copied().unwrap_or(0);
        Some(DropReason::from_code(code).ok_or_else(|| format!("stat_drop_reason is {code}, no reason's code"))?)
    } else {
        None
    };
    Ok(Outputs { s_axis_tready: bit(tready, "s_axis_tready")?, m_axis, drop })
}

/// Runs `design`'s Verilog under iverilog (`iverilog -g2012`, then `vvp`) in `dir` on `cycles`
/// of inputs after a reset cycle, and returns the outputs it showed before each edge.
pub fn replay(design: &Design, cycles: &[Inputs], dir: &Path) -> Result<Vec<Outputs>, String> {
    let bus = design.config.bus_bytes;
    let io = |what: &str, e: std::io::Error| format!("{what} in {}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(|e| io("cannot create the directory", e))?;
    let mut sources = vec![];
    for m in rtl::modules(design)? {
        let path = dir.join(format!("{}.v", m.name));
        std::fs::write(&path, m.to_string()).map_err(|e| io("cannot write the Verilog", e))?;
        sources.push(path);
    }
    let tb = dir.join("emu_iverilog_tb.v");
    std::fs::write(&tb, testbench(&design.top_name(), 8 * bus, cycles.len())).map_err(|e| io("cannot write", e))?;
    sources.push(tb);
    let mut hex = String::new();
    for c in cycles {
        let _ = writeln!(hex, "{}", stimulus_line(c, bus));
    }
    std::fs::write(dir.join("stimulus.hex"), hex).map_err(|e| io("cannot write the stimulus", e))?;
    let run = |cmd: &mut Command, what: &str| -> Result<String, String> {
        let out = cmd.current_dir(dir).output().map_err(|e| format!("{what}: {e} (scripts/setup.sh installs iverilog)"))?;
        let said = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            Ok(said)
        } else {
            Err(format!("{what} failed:\n{said}"))
        }
    };
    run(Command::new("iverilog").args(["-g2012", "-s", "emu_iverilog_tb", "-o", "tb.vvp"]).args(&sources), "iverilog")?;
    let said = run(Command::new("vvp").args(["-n", "tb.vvp"]), "vvp")?;
    let lines: Vec<&str> = said.lines().filter(|l| l.starts_with(['0', '1', 'x', 'z'])).collect();
    if lines.len() != cycles.len() {
        return Err(format!("vvp showed {} cycles of {}:\n{said}", lines.len(), cycles.len()));
    }
    lines.iter().enumerate().map(|(i, l)| parse_outputs(l, bus).map_err(|e| format!("cycle {i}: {e}"))).collect()
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn a_stimulus_line_puts_byte_0_lowest() {
        let beat = Beat { tdata: vec![0x11, 0x22], tkeep: 0b11, tuser: 0x40, tlast: true };
        let line = stimulus_line(&Inputs { s_axis: Some(beat), m_axis_tready: true }, 2);
        // 149 bits: tdata 0x2211 from bit 133, tkeep 0b11 from 131, tuser 0x40 from 3, then
        // valid, last and ready: above bit 128 that is 0x2211 << 5 | 0b11 << 3.
        assert_eq!(line, format!("{:06x}{:032x}", 0x2211 << 5 | 0b11 << 3, 0x40 << 3 | 0b111));
    }

    #[test]
    fn outputs_parse_and_an_x_is_an_error() {
        let o = parse_outputs("1 1 1 0000aabb 3 00000000000000000000000000000040 0 00", 4).unwrap();
        assert_eq!(o.m_axis.unwrap().tdata, [0xbb, 0xaa, 0, 0]);
        assert!(parse_outputs("1 0 0 x x x x xx", 4).unwrap_err().contains("stat_drop_valid is x"));
    }
}

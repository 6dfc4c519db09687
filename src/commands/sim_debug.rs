//! `emu sim NF --target verilator --debug-socket PATH`: the generated Verilog with its debug
//! unit under Verilator, the traffic of `--in` queued at its input, and the unit served on a
//! Unix socket for `emu dbg PATH` (docs/debug-protocol.md, "The hardware unit").
//!
//! The run starts at a break, so a client can set watchpoints before the first frame; `continue`
//! (or `step N`) lets the traffic in. Once a client has connected, a break no client is
//! connected to for `--break-timeout` ends by itself, as on the CPU. It ends when every frame has left or been dropped and no
//! client is connected (with `--stay`, only at Ctrl-C), or at Ctrl-C. The frames out
//! (DIR/verilator/port<N>.pcap) and the drops (drops.jsonl) are written as they happen.

use crate::cli::SimArgs;
use emu::{Config, NfDescriptor};
use emu_cpu::{Device, DropRecord, DropSink, JsonLines, PcapDevice};
use std::io::Write;
use emu_debug::hw::{reg, HwUnit, Registers, HOLD_DEPTH};
use emu_debug::socket::Server;
use emu_hls::backend::Design;
use emu_sim::hw_debug::DebugBench;
use emu_sim::verilator::VerilatorModel;
use std::path::Path;
use std::time::{Duration, Instant};

/// Cycles run between two looks at the socket while frames move; while tracing, between two
/// polls of the trace FIFO (8 records; a frame takes tens of cycles).
const CYCLES_PER_LOOK: usize = 2_000;
const CYCLES_PER_TRACE_POLL: usize = 64;
/// Frames queued at the bench's input per look while running.
const FRAMES_PER_LOOK: usize = 16;

pub(crate) fn run(desc: &NfDescriptor, config: &Config, a: &SimArgs, socket: &Path) -> Result<i32, String> {
    if a.target.len() != 1 || a.target[0] != "verilator" {
        return Err("--debug-socket debugs the generated hardware: give --target verilator alone".into());
    }
    if a.profile.is_some() {
        return Err("--debug-socket and --profile do not go together: profile without the debugger".into());
    }
    let out = a.pcap.out.as_deref().ok_or("--out DIR is required: the frames out go to DIR/verilator/port<N>.pcap")?;
    let mut design = Design::from_descriptor(desc, config, a.width, a.pcap.max_frame)?;
    design.config.debug = true;
    let (model, info) = VerilatorModel::build(&design, a.vcd.clone())?;
    println!(
        "verilator model with the debug unit {} in {:.1} s ({})",
        if info.cached { "from the cache" } else { "built" },
        info.seconds,
        info.dir.display()
    );
    let mut bench = DebugBench::new(model)?;
    let mut nf = (desc.build)(config).map_err(|e| e.to_string())?;
    let ports = a.pcap.ports.unwrap_or(desc.ports);
    let mut unit = HwUnit::new(desc.name, emu_cpu::debug::nf_symbols(&mut *nf))
        .with_ports(ports)
        .with_break_timeout(a.break_timeout);
    unit.check(&mut bench)?;

    let dir = out.join("verilator");
    let mut device = PcapDevice::new(&a.pcap.inputs, &dir, ports).map_err(|e| e.to_string())?;
    // The pcap is replayed as a sender that pauses while the break's hold buffer is full (a
    // frame sent then would pass it, as on a real link): frames go to the bench's input a few
    // at a time.
    let mut pending = std::collections::VecDeque::new();
    while let Some(f) = device.receive().map_err(|e| e.to_string())? {
        if (f.port as usize) < ports {
            pending.push_back(f);
        }
    }
    let frames = pending.len();
    bench.write(reg::CONTROL, 1);
    let mut server = Server::listen(socket).map_err(|e| format!("{}: {e}", socket.display()))?;
    emu_cpu::live::stop_on_signals();
    println!(
        "{}: {frames} frames wait at a break; `emu dbg {}` drives the hardware (`continue` lets them in)",
        desc.name,
        socket.display()
    );
    let drops_path = dir.join("drops.jsonl");
    let mut drops = JsonLines(std::io::BufWriter::new(
        std::fs::File::create(&drops_path).map_err(|e| format!("{}: {e}", drops_path.display()))?,
    ));
    // The frames given to the hardware, in order: a verdict's number is its frame's.
    let mut queued: Vec<(u8, usize, u64)> = Vec::with_capacity(frames);
    let (mut written, mut logged) = (0, 0);
    let mut said_drained = false;
    let mut had_client = false;
    loop {
        // A client connected until now was in touch until now, even if it has just gone.
        if server.connected() {
            unit.touch();
        }
        for msg in server.receive() {
            if let Some(reply) = unit.control(&msg, &mut bench) {
                server.send(&reply);
            }
        }
        if server.connected() {
            had_client = true;
            unit.touch();
        }
        if had_client {
            if let Some(released) = unit.expire(Instant::now(), &mut bench) {
                println!(
                    "{}: no client in touch for {:.1} s: the break ended by itself, {released} held frame{} released \
                     (--break-timeout)",
                    desc.name,
                    a.break_timeout.as_secs_f64(),
                    if released == 1 { "" } else { "s" }
                );
            }
        }
        // Frames left to go, and the hardware free to take them: at a break with a frame held
        // and no step credit, nothing moves until the client says so (the clock rests).
        let status = bench.read(reg::STATUS);
        let (broken, held) = (status & reg::BROKEN != 0, reg::held(status) as usize);
        let room = if broken { (HOLD_DEPTH as usize).saturating_sub(held) } else { FRAMES_PER_LOOK };
        if bench.waiting() == 0 {
            for f in pending.drain(..room.min(pending.len())) {
                bench.send(&f.data, f.port);
                queued.push((f.port, f.data.len(), f.timestamp));
            }
        }
        let left = bench.waiting() > 0 || bench.sent.len() + bench.dropped.len() < frames;
        let stopped = broken && bench.waiting() == 0 && bench.read(reg::STEP) == 0 && status & reg::EMPTY != 0;
        let moving = left && !stopped;
        if moving {
            let mut left = CYCLES_PER_LOOK;
            while left > 0 {
                let n = if unit.tracing() { CYCLES_PER_TRACE_POLL.min(left) } else { left };
                for _ in 0..n {
                    bench.cycle(None);
                }
                left -= n;
                for note in unit.poll(&mut bench) {
                    server.send(&note);
                }
            }
        }
        for n in unit.poll(&mut bench) {
            server.send(&n);
        }
        // What came out is written as it comes, so a user can open the pcaps and drops while
        // the session goes on.
        let new = bench.sent.len() > written || bench.dropped.len() > logged;
        for (mask, f) in &bench.sent[written..] {
            for port in (0..ports).filter(|p| mask & (1 << p) != 0) {
                device.transmit(port as u8, f, 0).map_err(|e| e.to_string())?;
            }
        }
        written = bench.sent.len();
        for &(k, reason) in &bench.dropped[logged..] {
            let (port, len, timestamp) = queued.get(k as usize).copied().unwrap_or_default();
            drops
                .record(&DropRecord { index: k, port, reason: reason.name(), len, timestamp })
                .map_err(|e| e.to_string())?;
        }
        logged = bench.dropped.len();
        if new {
            device.finish().map_err(|e| e.to_string())?;
            drops.0.flush().map_err(|e| format!("{}: {e}", drops_path.display()))?;
        }
        let done = bench.sent.len() + bench.dropped.len() >= frames;
        if done && a.stay && !said_drained {
            println!("{}: every frame is out; serving {} until Ctrl-C (--stay)", desc.name, socket.display());
            said_drained = true;
        }
        if (done && !a.stay && !server.connected()) || emu_cpu::live::stopping() {
            break;
        }
        if !moving || done {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    device.finish().map_err(|e| e.to_string())?;
    let held = frames - bench.sent.len() - bench.dropped.len();
    println!(
        "{}: {frames} frames in, {} sent, {} dropped{}, {} cycles; wrote {ports} port pcaps and drops.jsonl to {}",
        desc.name,
        bench.sent.len(),
        bench.dropped.len(),
        if held > 0 { format!(", {held} still held at the break") } else { String::new() },
        bench.cycles,
        dir.display()
    );
    Ok(0)
}

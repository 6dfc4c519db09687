//! `emu dbg`: the debug client (crate `emu-debug`) over a run's Unix socket or in band on an
//! interface, running `--exec` commands, a `--script`, or commands typed at the terminal. With
//! `--hardware NF`, the interface reaches generated hardware's unit, which answers register
//! accesses alone: the protocol is served here, by `HwUnit` over them.

use crate::cli::DbgArgs;
use emu::{Config, NfDescriptor};
use emu_cpu::debug::{nf_symbols, FrameTransport, SocketTransport};
use emu_cpu::EtherSocket;
use emu_debug::client::{Client, Transport};
use emu_debug::hw::{HwUnit, InBandRegisters, LocalUnit, Registers};
use emu_debug::protocol::ETHERTYPE;
use std::io::{BufRead, IsTerminal, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

pub(crate) fn run(a: &DbgArgs) -> Result<i32, String> {
    let path = Path::new(&a.target);
    let is_socket = std::fs::metadata(path).map(|m| m.file_type().is_socket()).unwrap_or(false);
    if is_socket {
        let t = SocketTransport::connect(path).map_err(|e| format!("{}: {e}; is the run still going?", a.target))?;
        session(t, a)
    } else if Path::new("/sys/class/net").join(&a.target).exists() {
        let s = EtherSocket::open(&a.target, ETHERTYPE).map_err(|e| e.to_string())?;
        session(FrameTransport(s), a)
    } else {
        Err(format!(
            "`{}` is neither a debug socket nor an interface: give the path of a run's --debug-socket, or an \
             interface linked to its --debug-port (`ip link` lists them)",
            a.target
        ))
    }
}

/// `emu dbg IFACE --hardware NF`: the unit of `desc`'s hardware behind IFACE, served here.
pub(crate) fn run_hardware(desc: &NfDescriptor, config: &Config, a: &DbgArgs) -> Result<i32, String> {
    if !Path::new("/sys/class/net").join(&a.target).exists() {
        return Err(format!(
            "`{}` is not an interface: with --hardware, give the interface linked to the hardware's --debug-port \
             (`ip link` lists them)",
            a.target
        ));
    }
    let s = EtherSocket::open(&a.target, ETHERTYPE).map_err(|e| e.to_string())?;
    let mut regs = InBandRegisters::new(FrameTransport(s), first_seq());
    let mut nf = (desc.build)(config).map_err(|e| e.to_string())?;
    let unit = HwUnit::new(desc.name, nf_symbols(&mut *nf));
    let checked = unit.check(&mut regs);
    if let Some(e) = regs.take_error() {
        return Err(format!("{e} (the hardware needs `emu hls --debug --debug-port M`, M the port on this link)"));
    }
    checked?;
    session(LocalUnit::new(unit, regs), a)
}

/// A session's first request number: where no recent session's were, so its first request is
/// never taken for a retransmission of the last session's last one.
fn first_seq() -> u32 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_micros() as u32)
}

fn session<T: Transport>(t: T, a: &DbgArgs) -> Result<i32, String> {
    let mut client = Client::connect(t, first_seq())?;
    let commands: Vec<String> = match (&a.script, a.exec.is_empty()) {
        (Some(file), _) => std::fs::read_to_string(file)
            .map_err(|e| format!("{}: {e}", file.display()))?
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
            .filter(|l| !l.is_empty())
            .collect(),
        (None, false) => {
            a.exec.iter().flat_map(|e| e.split(';')).map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect()
        }
        (None, true) => return interactive(&mut client),
    };
    for c in &commands {
        match client.exec(c) {
            Ok(out) if out.is_empty() => {}
            Ok(out) => println!("{out}"),
            Err(e) => return Err(format!("`{c}`: {e}")),
        }
    }
    Ok(0)
}

fn interactive<T: Transport>(client: &mut Client<T>) -> Result<i32, String> {
    let tty = std::io::stdin().is_terminal();
    if tty {
        println!(
            "connected to {} ({} symbols); `help` lists the commands, Ctrl-D leaves",
            client.nf(),
            client.symbols().len()
        );
    }
    let stdin = std::io::stdin();
    let mut failed = false;
    loop {
        if tty {
            print!("{}> ", client.nf());
            let _ = std::io::stdout().flush();
        }
        let mut line = String::new();
        if stdin.lock().read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            break;
        }
        match client.exec(&line) {
            Ok(out) if out.is_empty() => {}
            Ok(out) => println!("{out}"),
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    Ok(if failed && !tty { 1 } else { 0 })
}

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
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::{Editor, ExternalPrinter as _};
use std::io::{BufRead, IsTerminal};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
    let cycles = (a.break_timeout.as_secs_f64() * a.clock_mhz as f64 * 1e6).min(u32::MAX as f64) as u32;
    let unit = HwUnit::new(desc.name, nf_symbols(&mut *nf)).with_ports(desc.ports).with_watchdog(cycles.max(1));
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
        (None, true) if std::io::stdin().is_terminal() => return repl(&mut client),
        (None, true) => return piped(&mut client),
    };
    interrupt::catch();
    for c in &commands {
        match client.exec_until(c, &interrupt::caught) {
            Ok(out) if out.is_empty() => {}
            Ok(out) => println!("{out}"),
            Err(e) => return Err(format!("`{c}`: {e}")),
        }
        // Ctrl-C ends a `wait` and the script with it.
        if interrupt::take() {
            eprintln!("interrupted: the commands after `{c}` were not run");
            return Ok(130);
        }
    }
    Ok(0)
}

/// Commands from a pipe or file on standard input, one a line; the exit status says whether
/// one failed.
fn piped<T: Transport>(client: &mut Client<T>) -> Result<i32, String> {
    let mut failed = false;
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| e.to_string())?;
        if matches!(line.trim(), "quit" | "exit") {
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
    Ok(i32::from(failed))
}

/// How often the prompt looks for notifications, and how often a session at a break tells
/// the unit it is still there (in band there is no connection to say so).
const PROMPT_POLL: Duration = Duration::from_millis(100);
const KEEP_ALIVE: Duration = Duration::from_secs(1);

/// At a terminal: line editing, history (in `$EMU_DBG_HISTORY`, else `~/.emu_dbg_history`),
/// completion of commands and symbol names, notifications printed as they arrive above the
/// prompt, Ctrl-C ending a `wait`. The editor runs on a thread of its own, so the session can
/// watch the unit while the user types.
fn repl<T: Transport>(client: &mut Client<T>) -> Result<i32, String> {
    let config = rustyline::Config::builder().auto_add_history(true).max_history_size(1000).map_err(|e| e.to_string())?;
    let mut editor: Editor<Completion, FileHistory> =
        Editor::with_config(config.build()).map_err(|e| format!("the terminal: {e}"))?;
    let mut words: Vec<String> = client.symbols().iter().map(|s| s.name.clone()).collect();
    words.extend(["all", "on", "off", "changes", "record", "empty"].map(String::from));
    editor.set_helper(Some(Completion { symbols: words }));
    let history = std::env::var_os("EMU_DBG_HISTORY")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".emu_dbg_history")));
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    let mut printer = editor.create_external_printer().map_err(|e| format!("the terminal: {e}"))?;
    println!(
        "connected to {} ({} symbols); `help` lists the commands, Tab completes, `quit` or Ctrl-D leaves",
        client.nf(),
        client.symbols().len()
    );
    let prompt = format!("{}> ", client.nf());
    let (lines, typed) = mpsc::channel::<Option<String>>();
    let (done, next) = mpsc::channel::<()>();
    let reader = std::thread::spawn(move || {
        loop {
            match editor.readline(&prompt) {
                Ok(line) => {
                    if lines.send(Some(line)).is_err() || next.recv().is_err() {
                        break;
                    }
                }
                // Ctrl-C at the prompt clears the line, as in a shell.
                Err(ReadlineError::Interrupted) => continue,
                Err(_) => {
                    let _ = lines.send(None);
                    break;
                }
            }
        }
        if let Some(h) = &history {
            let _ = editor.save_history(h);
        }
    });
    interrupt::catch();
    let mut last_touch = std::time::Instant::now();
    let mut lost = false;
    loop {
        match typed.recv_timeout(PROMPT_POLL) {
            Ok(Some(line)) => {
                if matches!(line.trim(), "quit" | "exit") {
                    break;
                }
                interrupt::take();
                match client.exec_until(&line, &interrupt::caught) {
                    Ok(out) if out.is_empty() => {}
                    Ok(out) => println!("{out}"),
                    Err(e) => println!("error: {e}"),
                }
                if interrupt::take() {
                    println!("(interrupted)");
                }
                last_touch = std::time::Instant::now();
                if done.send(()).is_err() {
                    break;
                }
            }
            Ok(None) | Err(RecvTimeoutError::Disconnected) => break,
            // The unit gone (the run ended): said once; the prompt stays until the user leaves,
            // so the terminal is given back by the editor.
            Err(RecvTimeoutError::Timeout) if lost => {}
            Err(RecvTimeoutError::Timeout) => {
                let looked = client.arrived().and_then(|notes| {
                    for n in notes {
                        let _ = printer.print(format!("{n}\n"));
                    }
                    if last_touch.elapsed() >= KEEP_ALIVE {
                        last_touch = std::time::Instant::now();
                        client.keep_alive()?;
                    }
                    Ok(())
                });
                if let Err(e) = looked {
                    let _ = printer.print(format!("error: {e}\n"));
                    lost = true;
                }
            }
        }
    }
    drop(done);
    drop(typed);
    // The editor thread ends at its next line; history is saved as it does.
    let _ = reader.join();
    Ok(0)
}

/// Tab completion: commands first, then symbol names and the language's words.
struct Completion {
    symbols: Vec<String>,
}

impl rustyline::completion::Completer for Completion {
    type Candidate = String;

    fn complete(&self, line: &str, pos: usize, _: &rustyline::Context<'_>) -> rustyline::Result<(usize, Vec<String>)> {
        let before = &line[..pos];
        let start = before.rfind(|c: char| c.is_whitespace() || c == '[' || c == ';').map_or(0, |i| i + 1);
        let word = &before[start..];
        let first = before[..start].trim().is_empty();
        let pool: Vec<&str> = if first {
            emu_debug::client::COMMANDS.to_vec()
        } else {
            self.symbols.iter().map(String::as_str).collect()
        };
        Ok((start, pool.into_iter().filter(|c| c.starts_with(word)).map(String::from).collect()))
    }
}

impl rustyline::hint::Hinter for Completion {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for Completion {}
impl rustyline::validate::Validator for Completion {}
impl rustyline::Helper for Completion {}

/// Ctrl-C while a command runs (a `wait`): caught, so the command ends early and the session
/// goes on, instead of the signal ending the client.
mod interrupt {
    use std::sync::atomic::{AtomicBool, Ordering};

    static CAUGHT: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_sigint(_: libc::c_int) {
        CAUGHT.store(true, Ordering::SeqCst);
    }

    /// From now on, SIGINT sets the flag instead of ending the process.
    pub fn catch() {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { libc::signal(libc::SIGINT, on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t) };
    }

    /// Whether Ctrl-C came since the last [`take`].
    pub fn caught() -> bool {
        CAUGHT.load(Ordering::SeqCst)
    }

    /// Whether Ctrl-C came, clearing it.
    pub fn take() -> bool {
        CAUGHT.swap(false, Ordering::SeqCst)
    }
}

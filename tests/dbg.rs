//! `emu dbg` against a live CPU run (`emu run --iface … --debug-socket/--debug-port`): the same
//! script — read a table entry by key, watch a counter while traffic flows and see the
//! notification, break, step 3, continue — gives the same answers over the Unix socket and in
//! band on the management port, and the packets out of each port follow the break and steps.
//! A control frame on a data port is ordinary traffic.
//!
//! Needs root (a network namespace of its own, veth pairs, raw sockets); everything is made
//! inside that namespace and deleted with it.

use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

const EMU: &str = env!("CARGO_BIN_EXE_emu");

fn run(args: &[&str]) -> Output {
    Command::new("timeout").arg("30").args(args).stdin(Stdio::null()).output().expect("run a command")
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A namespace holding the switch's three ports (p0, p1 data; pm management) and their peers
/// (h0, h1, hm), deleted on drop.
struct Net {
    ns: String,
}

impl Net {
    fn new(tag: &str) -> Net {
        let ns = format!("emudbg{}{tag}", std::process::id());
        ok(&["ip", "netns", "add", &ns]);
        let net = Net { ns };
        net.exec(&["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        net.exec(&["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"]);
        for (p, h) in [("p0", "h0"), ("p1", "h1"), ("pm", "hm")] {
            net.exec(&["ip", "link", "add", p, "type", "veth", "peer", "name", h]);
            net.exec(&["ip", "link", "set", p, "up"]);
            net.exec(&["ip", "link", "set", h, "up"]);
        }
        net
    }

    fn cmd(&self, args: &[&str]) -> Vec<String> {
        ["ip", "netns", "exec", &self.ns].iter().chain(args).map(|s| s.to_string()).collect()
    }

    fn exec(&self, args: &[&str]) -> String {
        let c = self.cmd(args);
        ok(&c.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// Sends `n` broadcast frames of EtherType `ethertype` (60 bytes, or `payload`) from host
    /// `iface` with source MAC 02:00:00:00:00:`src`.
    fn send(&self, iface: &str, src: u8, ethertype: u16, n: usize, payload: &[u8]) {
        let script = format!(
            "import socket,sys\ns=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\ns.bind(('{iface}',0))\n\
             f=bytes([255]*6+[2,0,0,0,0,{src}])+({ethertype}).to_bytes(2,'big')+bytes.fromhex('{}')\n\
             f=f+bytes(max(0,60-len(f)))\nfor _ in range({n}): s.send(f)\n",
            payload.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        self.exec(&["/usr/bin/python3", "-c", &script]);
        std::thread::sleep(Duration::from_millis(200));
    }

    /// `emu dbg TARGET --exec COMMANDS` in the namespace: its stdout.
    fn dbg(&self, target: &str, commands: &str) -> String {
        self.exec(&[EMU, "dbg", target, "--exec", commands])
    }

    fn spawn(&self, args: &[&str]) -> Child {
        let c = self.cmd(args);
        Command::new(&c[0]).args(&c[1..]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn")
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        let _ = run(&["ip", "netns", "del", &self.ns]);
    }
}

/// The switch with its debug channel on, stopped (and its socket gone) on drop.
struct Switch(Child, String);

impl Switch {
    fn start(net: &Net, sock: &str) -> Switch {
        Switch::start_with(net, sock, &[])
    }

    fn start_with(net: &Net, sock: &str, more: &[&str]) -> Switch {
        let args = [EMU, "run", "learning-switch", "--iface", "p0,p1,pm", "--debug-port", "2", "--debug-socket", sock];
        let child = net.spawn(&[&args[..], more].concat());
        for _ in 0..100 {
            if std::path::Path::new(sock).exists() {
                return Switch(child, sock.to_string());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the switch did not open its debug socket");
    }
}

impl Drop for Switch {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        let _ = std::fs::remove_file(&self.1);
    }
}

/// The script on a fresh switch, through `target`; every answer, in order.
fn session(net: &Net, sock: &str, target: &str) -> Vec<String> {
    let _switch = Switch::start(net, sock);
    let mut answers = Vec::new();
    // Learn a host, and read its entry by key.
    net.send("h0", 0x11, 0x88b6, 2, &[]);
    answers.push(net.dbg(target, "read mac_table[key=02:00:00:00:00:11]; read floods"));
    // Watch the flood counter while traffic flows: the notification arrives during `wait`,
    // with the packet that fired it.
    let watcher = net.spawn(&[EMU, "dbg", target, "--exec", "watch floods >= 4 record; wait 3000; unwatch all"]);
    std::thread::sleep(Duration::from_millis(700));
    net.send("h0", 0x12, 0x88b6, 3, &[0xab]);
    let out = watcher.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    answers.push(String::from_utf8_lossy(&out.stdout).into_owned());
    // Break: packets are held, not sent; step 3 sends three; continue the rest.
    answers.push(net.dbg(target, "break; counters"));
    net.send("h0", 0x13, 0x88b6, 4, &[]);
    answers.push(net.dbg(target, "status; counters"));
    answers.push(net.dbg(target, "step 3; status; counters"));
    answers.push(net.dbg(target, "continue; counters"));
    answers
}

/// The script as an `emu mininet --debug` experiment on hosts h1, h2, h3 (ports 0, 1, 2 of the
/// switch `sd7`, so its ports do not clash with another experiment's `s1`): the answers, from
/// the output the experiment shows under each step.
fn mininet_session() -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("three.json");
    std::fs::write(
        &topo,
        r#"{"hosts": [{"name": "h1", "ip": "10.0.0.1/24"}, {"name": "h2", "ip": "10.0.0.2/24"},
                      {"name": "h3", "ip": "10.0.0.3/24"}],
            "switches": ["sd7"], "links": [["h1", "sd7"], ["h2", "sd7"], ["h3", "sd7"]]}"#,
    )
    .unwrap();
    let send = dir.path().join("send.py");
    std::fs::write(
        &send,
        "import socket,sys,time\niface,src,et,n,hexp=sys.argv[1:]\ns=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\n\
         s.bind((iface,0))\nf=bytes([255]*6+[2,0,0,0,0,int(src)])+int(et,16).to_bytes(2,'big')+bytes.fromhex(hexp)\n\
         f=f+bytes(max(0,60-len(f)))\nfor _ in range(int(n)): s.send(f)\ntime.sleep(0.2)\n",
    )
    .unwrap();
    let send = |src: u8, n: u8, payload: &str| {
        format!("h1: /usr/bin/python3 {} h1-eth0 {src} 88b6 {n} '{payload}'\n", send.display())
    };
    let dbg = |commands: &str| format!("h1: $EMU dbg $WORK/sd7.dbg --exec '{commands}'\n");
    let script = [
        "timeout 20\n".to_string(),
        send(0x11, 2, ""),
        dbg("read mac_table[key=02:00:00:00:00:11]; read floods"),
        "h1 &: $EMU dbg $WORK/sd7.dbg --exec 'watch floods >= 4 record; wait 3000; unwatch all' > $WORK/watch.txt 2>&1\n".into(),
        "sleep 0.7\n".into(),
        send(0x12, 3, "ab"),
        "sleep 3\n".into(),
        "h1: cat $WORK/watch.txt\n".into(),
        dbg("break; counters"),
        send(0x13, 4, ""),
        dbg("status; counters"),
        dbg("step 3; status; counters"),
        dbg("continue; counters"),
    ]
    .concat();
    let file = dir.path().join("debug.txt");
    std::fs::write(&file, script).unwrap();
    let out = Command::new(EMU)
        .args([
            "mininet",
            "learning-switch",
            "--debug",
            "--topo",
            topo.to_str().unwrap(),
            "--run",
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // Each `dbg` or `cat` step's output: the `      | ` lines under its heading.
    let mut answers = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in stdout.lines() {
        if let Some(text) = line.strip_prefix("      | ") {
            if let Some(c) = &mut current {
                c.push(text);
            }
            continue;
        }
        if let Some(c) = current.take() {
            answers.push(c.join("\n"));
        }
        if line.starts_with('[') && (line.contains("$EMU dbg") && !line.contains("in the background") || line.contains(": cat ")) {
            current = Some(Vec::new());
        }
    }
    answers
}

#[test]
fn the_same_script_over_the_socket_in_band_and_in_mininet() {
    let net = Net::new("a");
    let sock = format!("/tmp/emu-dbg-{}.sock", std::process::id());
    let over_socket = session(&net, &sock, &sock);
    let in_band = session(&net, &sock, "hm");
    assert_eq!(over_socket, in_band, "the two ways to the unit answer alike");
    let trimmed: Vec<String> = over_socket.iter().map(|a| a.trim_end().to_string()).collect();
    assert_eq!(mininet_session(), trimmed, "a switch in Mininet answers as the one on veths");

    let a = &over_socket;
    assert_eq!(a[0], "mac_table[0] = 02:00:00:00:00:11 -> 0\nfloods = 2\n");
    assert!(
        a[1].starts_with(
            "watch 0: floods >= 4\nwatch 0 hit: floods = 4 after packet 3 (in port 0: ffffffffffff02000000001288b6ab00"
        ),
        "{}",
        a[1]
    );
    // Five frames in on port 0 so far, each flooded to ports 1 and 2.
    assert!(a[2].starts_with("break: packets are held at the input (0 held)\nfloods = 5\nrx_packets[0] = 5\ntx_packets[1] = 5\ntx_packets[2] = 5"), "{}", a[2]);
    assert!(
        a[3].starts_with("broken, 4 held,") && a[3].contains("\nfloods = 5\nrx_packets[0] = 5\ntx_packets[1] = 5\n"),
        "held, not sent: {}",
        a[3]
    );
    assert!(
        a[4].starts_with("stepped 3 packets (1 still held)\nbroken, 1 held,")
            && a[4].contains("\nfloods = 8\nrx_packets[0] = 8\ntx_packets[1] = 8\n"),
        "{}",
        a[4]
    );
    assert!(
        a[5].starts_with("running (1 held packet released)\nfloods = 9\nrx_packets[0] = 9\ntx_packets[1] = 9\n"),
        "{}",
        a[5]
    );
}

#[test]
fn errors_and_control_frames_on_data_ports() {
    let net = Net::new("b");
    let sock = format!("/tmp/emu-dbg-{}-b.sock", std::process::id());
    let _switch = Switch::start(&net, &sock);
    // A well-formed `hello` request, but on data port 0: flooded like any other frame, no reply.
    let hello = [1u8, 0, 0x01, 0, 0, 0, 0, 9, 0, 0, 0, 0];
    net.send("h0", 0x21, 0x88b5, 1, &hello);
    let c = net.dbg(&sock, "counters");
    assert!(c.contains("rx_packets[0] = 1\ntx_packets[1] = 1\ntx_packets[2] = 1"), "{c}");
    // Malformed control frames on the management port change nothing, and the unit answers on.
    net.send("hm", 0x22, 0x88b5, 3, &[1, 0, 0x10, 0, 0, 0, 0, 1, 0, 40, 0, 0, 1]);
    net.send("hm", 0x22, 0x88b5, 1, &[7, 7]);
    assert!(net.dbg("hm", "counters").contains("floods = 1"));
    let e = run(&net
        .cmd(&[EMU, "dbg", &sock, "--exec", "read mac_table[99]"])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert!(!e.status.success());
    assert!(
        String::from_utf8_lossy(&e.stderr).contains("`read mac_table[99]`: `mac_table[99]`: mac_table has 16 entries (0 to 15)")
    );
    let e = run(&[EMU, "dbg", "/nonexistent.sock", "--exec", "symbols"]);
    assert!(String::from_utf8_lossy(&e.stderr).contains("is neither a debug socket nor an interface"));
    let e =
        run(&[EMU, "run", "learning-switch", "--in", "examples/mixed.pcapng", "--out", "/tmp/x", "--debug-port", "0"]);
    assert!(String::from_utf8_lossy(&e.stderr).contains("the debug channel is for live runs"));
}

/// Sessions, one `--exec` each as the docs show, over the socket and in band: a later session's
/// watch takes a free slot and the earlier one's stays armed and fires; a client killed at a
/// break does not keep live traffic held past the break timeout (nor does one in band that
/// stops asking).
#[test]
fn sessions_keep_each_others_watches_and_a_break_ends_when_its_client_is_gone() {
    let net = Net::new("c");
    let sock = format!("/tmp/emu-dbg-{}-c.sock", std::process::id());
    let _switch = Switch::start_with(&net, &sock, &["--break-timeout", "1"]);
    assert_eq!(net.dbg(&sock, "watch floods >= 2"), "watch 0: floods >= 2\n");
    assert_eq!(
        net.dbg("hm", "watch mac_table[0] changes record; watches"),
        "watch 1: mac_table[0] changes\nwatch 0: floods >= 2\nwatch 1: mac_table[0] changes record\n"
    );
    let watcher = net.spawn(&[EMU, "dbg", &sock, "--exec", "wait 3000"]);
    std::thread::sleep(Duration::from_millis(700));
    net.send("h0", 0x11, 0x88b6, 2, &[]);
    let out = watcher.wait_with_output().unwrap();
    let hits = String::from_utf8_lossy(&out.stdout);
    assert!(
        hits.starts_with("watch 1 hit: mac_table[0] = 02:00:00:00:00:11 -> 0 after packet 0 (in port 0: ffffffffffff020000000011")
            && hits.contains("\nwatch 0 hit: floods = 2 after packet 1\n"),
        "both sessions' watches fire: {hits}"
    );
    net.dbg(&sock, "unwatch all");

    // A client killed while it holds a break: the traffic that came meanwhile goes on within
    // the timeout, though no client ever says `continue`.
    let mut holder = net.spawn(&[EMU, "dbg", &sock, "--exec", "break; wait 60000"]);
    std::thread::sleep(Duration::from_millis(500));
    net.send("h0", 0x12, 0x88b6, 3, &[]);
    let _ = holder.kill();
    let _ = holder.wait();
    std::thread::sleep(Duration::from_millis(1800));
    let c = net.dbg(&sock, "status; counters");
    assert!(
        c.starts_with("running, 0 held, trace off, 2 watch hits, 0 passed while the hold was full, 1 break ended with no client in touch\n")
            && c.contains("\ntx_packets[1] = 5\n"),
        "the three held frames were sent: {c}"
    );
    // In band there is no connection: the last request is the last touch.
    net.dbg("hm", "break");
    net.send("h0", 0x13, 0x88b6, 2, &[]);
    std::thread::sleep(Duration::from_millis(1800));
    let c = net.dbg(&sock, "status; counters");
    assert!(c.contains("2 breaks ended with no client in touch") && c.contains("\ntx_packets[1] = 7\n"), "{c}");
}

/// `emu dbg SOCK` at a terminal (a pseudo-terminal the test drives, keys as a user types
/// them, and lines pasted whole): Tab completes a symbol, Up recalls the last command, a watch's hit is printed while
/// the prompt waits, Ctrl-C ends a `wait` and the session goes on, a typo gets "did you
/// mean", `quit` leaves, and the history is in the file.
#[test]
fn the_interactive_session_edits_completes_and_survives_ctrl_c() {
    let net = Net::new("d");
    let sock = format!("/tmp/emu-dbg-{}-d.sock", std::process::id());
    let _switch = Switch::start(&net, &sock);
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history");
    let driver = dir.path().join("drive.py");
    std::fs::write(
        &driver,
        r#"import os, pty, select, sys, time
emu, sock = sys.argv[1:3]
pid, fd = pty.fork()
if pid == 0:
    os.execv(emu, [emu, 'dbg', sock])
seen = b''
def until(pat, timeout=20):
    global seen
    end = time.time() + timeout
    while time.time() < end:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
        if pat in seen:
            cut = seen.index(pat) + len(pat)
            got, seen = seen[:cut], seen[cut:]
            return got
    sys.exit('no %r in %r' % (pat, seen))
def key(b, pause=0.3):
    # As typed: a key at a time (an escape sequence is one key).
    for c in [b] if b.startswith(b'\x1b') else [bytes([c]) for c in b]:
        os.write(fd, c)
        time.sleep(0.02)
    time.sleep(pause)
def paste(b):
    os.write(fd, b)
    time.sleep(0.3)
until(b'learning-switch> ')
key(b'read flo\t'); key(b'\r')
until(b'floods = 0')
key(b'\x1b[A'); key(b'\r')
print('recalled' if until(b'floods = 0', 5) else '')
paste(b'watch floods changes\r')
until(b'watch 0: floods changes')
time.sleep(0.3)
sys.stdout.write('READY\n'); sys.stdout.flush()
sys.stdin.readline()
print('hit' if until(b'watch 0 hit: floods = 1 after packet 0') else '')
key(b'wait 20000\r', 0.6)
t = time.time()
key(b'\x03', 0)
until(b'(interrupted)', 5)
print('wait ended in %.1f s' % (time.time() - t))
paste(b'flods\r')
print('hinted' if until(b'did you mean `read floods`?', 5) else '')
paste(b'quit\r')
os.waitpid(pid, 0)
print('left')
"#,
    )
    .unwrap();
    let mut py = Command::new("/usr/bin/python3")
        .arg(&driver)
        .args([EMU, &sock])
        .env("EMU_DBG_HISTORY", &history)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(py.stdout.take().unwrap());
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        use std::io::BufRead;
        if out.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if line.trim() == "READY" {
            // A frame while the prompt waits: the hit shows without a key pressed.
            net.send("h0", 0x11, 0x88b6, 1, &[]);
            use std::io::Write;
            writeln!(py.stdin.as_mut().unwrap()).unwrap();
            continue;
        }
        lines.push(line.trim().to_string());
    }
    assert!(py.wait().unwrap().success(), "{lines:?}");
    assert_eq!(lines[0], "recalled", "{lines:?}");
    assert_eq!(lines[1], "hit", "{lines:?}");
    let secs: f64 = lines[2].strip_prefix("wait ended in ").and_then(|l| l.strip_suffix(" s")).unwrap().parse().unwrap();
    assert!(secs < 3.0, "Ctrl-C ended the 20 s wait: {lines:?}");
    assert_eq!(lines[3..], ["hinted", "left"]);
    let h = std::fs::read_to_string(&history).unwrap();
    assert!(h.contains("read floods\n") && h.contains("watch floods changes\n"), "{h}");
}

//! End-to-end tests of `emu run --iface`: the NFs run live on veth pairs whose host ends sit in
//! network namespaces, and real tools (ping, a TCP transfer, tcpdump + tshark) talk through them.
//!
//! These tests need root (namespaces, veths, raw sockets); they fail, not skip, without it.
//! Every namespace and interface is created by the test itself, named after the process id and a
//! per-test tag, and removed by a Drop guard even when the test fails, so the tests can run in
//! parallel (as `scripts/test.sh` runs them).

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const EMU: &str = env!("CARGO_BIN_EXE_emu");

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Fails the test with a clear message unless it runs as root.
fn require_root() {
    let status = std::fs::read_to_string("/proc/self/status").expect("reading /proc/self/status");
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .expect("Uid line in /proc/self/status");
    assert_eq!(
        euid, "0",
        "the live tests need root (network namespaces, veth pairs, raw sockets); run them as root, \
         e.g. `sudo -E cargo test --test live -- --test-threads=1`"
    );
}

/// Runs a command to completion, bounded by `timeout 60`, and returns its output.
fn run(args: &[&str]) -> Output {
    Command::new("timeout")
        .arg("60")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("could not run {args:?}: {e}"))
}

/// Like [`run`], but the command must succeed; returns its stdout.
fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A unique name for this process and test: `prefix` + pid + `tag` (at most 15 characters, so
/// it also fits interface names).
fn name(prefix: &str, tag: &str) -> String {
    let n = format!("{prefix}{}{tag}", std::process::id());
    assert!(n.len() <= 15, "name `{n}` is longer than 15 characters");
    n
}

/// Checksum offload off (so captures show real checksums) and IPv6 off (no stray traffic).
fn quiet_interface(netns: Option<&str>, ifname: &str) {
    let sysctl = format!("net.ipv6.conf.{ifname}.disable_ipv6=1");
    match netns {
        Some(ns) => {
            ok(&["ip", "netns", "exec", ns, "ethtool", "-K", ifname, "tx", "off", "rx", "off"]);
            ok(&["ip", "netns", "exec", ns, "sysctl", "-qw", &sysctl]);
        }
        None => {
            ok(&["ethtool", "-K", ifname, "tx", "off", "rx", "off"]);
            ok(&["sysctl", "-qw", &sysctl]);
        }
    }
}

/// A network namespace, deleted on drop (which also deletes the interfaces inside it).
struct Netns {
    name: String,
}

impl Netns {
    fn new(name: String) -> Netns {
        ok(&["ip", "netns", "add", &name]);
        let ns = Netns { name };
        ns.exec(&["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        ns.exec(&["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"]);
        ns.exec(&["ip", "link", "set", "lo", "up"]);
        ns
    }

    /// `ip netns exec NS args...`; must succeed; returns stdout.
    fn exec(&self, args: &[&str]) -> String {
        ok(&[&["ip", "netns", "exec", &self.name], args].concat())
    }

    /// The command line prefix that runs a command in this namespace.
    fn cmd(&self, args: &[&str]) -> Vec<String> {
        ["ip", "netns", "exec", &self.name].iter().chain(args).map(|s| s.to_string()).collect()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = run(&["ip", "netns", "del", &self.name]);
    }
}

/// A veth pair: `root` stays in the root namespace (down, no addresses: an NF port), `host` is
/// moved into `netns` and gets `addr`. Both are up on return. The root end is deleted on drop.
struct Veth {
    root: String,
    host: String,
}

impl Veth {
    fn new(root: String, host: String, netns: &Netns, addr: &str) -> Veth {
        ok(&["ip", "link", "add", &root, "type", "veth", "peer", "name", &host, "netns", &netns.name]);
        let veth = Veth { root, host };
        quiet_interface(None, &veth.root);
        quiet_interface(Some(&netns.name), &veth.host);
        netns.exec(&["ip", "addr", "add", addr, "dev", &veth.host]);
        netns.exec(&["ip", "link", "set", &veth.host, "up"]);
        ok(&["ip", "link", "set", &veth.root, "up"]);
        veth
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        // Already gone if the test deleted it or its namespace went first; that is fine.
        let _ = run(&["ip", "link", "del", &self.root]);
    }
}

/// A background process whose stdout and stderr are collected as they come; killed on drop.
struct Background {
    what: String,
    child: Child,
    status: Option<ExitStatus>,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    readers: Vec<thread::JoinHandle<()>>,
}

impl Background {
    fn spawn<S: AsRef<str>>(args: &[S]) -> Background {
        let args: Vec<&str> = args.iter().map(|s| s.as_ref()).collect();
        let mut child = Command::new(args[0])
            .args(&args[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("could not start {args:?}: {e}"));
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let readers = vec![
            collect(child.stdout.take().unwrap(), stdout.clone()),
            collect(child.stderr.take().unwrap(), stderr.clone()),
        ];
        Background { what: args.join(" "), child, status: None, stdout, stderr, readers }
    }

    /// `emu args...`.
    fn emu(args: &[&str]) -> Background {
        Background::spawn(&[&[EMU], args].concat())
    }

    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout.lock().unwrap()).into_owned()
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// Waits until stderr contains `text`; panics (with the output so far) after `timeout` or
    /// if the process exits first.
    fn wait_for_stderr(&mut self, text: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            if self.stderr().contains(text) {
                return;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                thread::sleep(Duration::from_millis(100)); // let the readers catch up
                if self.stderr().contains(text) {
                    return;
                }
                panic!("`{}` exited ({status}) before printing {text:?}:\n{}", self.what, self.output());
            }
            assert!(
                Instant::now() < deadline,
                "`{}` did not print {text:?} within {timeout:?}:\n{}",
                self.what,
                self.output()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the process to exit by itself and for its output to be complete; None after
    /// `timeout`.
    fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                self.status = Some(status);
                for r in self.readers.drain(..) {
                    let _ = r.join();
                }
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `signal` (e.g. "INT", "TERM") with kill(1).
    fn signal(&self, signal: &str) {
        ok(&["kill", &format!("-{signal}"), &self.child.id().to_string()]);
    }

    fn output(&self) -> String {
        format!("--- stdout ---\n{}--- stderr ---\n{}", self.stdout(), self.stderr())
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn collect(mut from: impl Read + Send + 'static, into: Arc<Mutex<Vec<u8>>>) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            into.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    })
}

/// The counters of emu's summary: the header line `NF: N frames in, M frames out, D dropped, P
/// ports` and the per-port table rows `port rx_pkts rx_bytes tx_pkts tx_bytes dropped`.
#[derive(Debug)]
struct Summary {
    frames_in: u64,
    frames_out: u64,
    dropped: u64,
    ports: Vec<[u64; 5]>,
}

fn parse_summary(nf: &str, stdout: &str) -> Summary {
    let header = stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{nf}: ")))
        .unwrap_or_else(|| panic!("no `{nf}: ... frames in` summary line in stdout:\n{stdout}"));
    let numbers: Vec<u64> = header.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect();
    assert_eq!(numbers.len(), 4, "unexpected summary line `{header}`");
    let ports = stdout
        .lines()
        .filter_map(|l| {
            let v: Vec<u64> = l.split_whitespace().map(|w| w.parse().ok()).collect::<Option<_>>()?;
            (v.len() == 6).then(|| [v[1], v[2], v[3], v[4], v[5]])
        })
        .collect::<Vec<_>>();
    assert!(stdout.contains("drops:"), "no `drops:` line in the summary:\n{stdout}");
    Summary { frames_in: numbers[0], frames_out: numbers[1], dropped: numbers[2], ports }
}

/// `n` pseudo-random bytes (xorshift64*), the same on every run.
fn pseudo_random_bytes(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

/// A temporary directory that the `nobody` user can enter.
fn world_readable_tempdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

const TCP_SERVER: &str = r#"
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
s.settimeout(20)
print("listening", flush=True)
c, _ = s.accept()
c.settimeout(20)
with open(sys.argv[3], "wb") as f:
    while True:
        d = c.recv(65536)
        if not d:
            break
        f.write(d)
c.close()
"#;

const TCP_CLIENT: &str = r#"
import socket, sys
data = open(sys.argv[3], "rb").read()
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=20)
s.sendall(data)
s.shutdown(socket.SHUT_WR)
s.recv(1)  # wait for the server to close: everything was received
s.close()
"#;

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn learning_switch_connects_namespaces() {
    require_root();
    let tmp = tempfile::tempdir().unwrap();
    let hosts: Vec<Netns> = (1..=3).map(|k| Netns::new(name("emu", &format!("ls-h{k}")))).collect();
    let mut veths: Vec<Veth> = hosts
        .iter()
        .enumerate()
        .map(|(k, ns)| {
            Veth::new(
                name("e", &format!("lsp{}", k + 1)),
                name("e", &format!("lsh{}", k + 1)),
                ns,
                &format!("10.0.0.{}/24", k + 1),
            )
        })
        .collect();
    let ports: Vec<&str> = veths.iter().map(|v| v.root.as_str()).collect();
    let mut emu = Background::emu(&["run", "learning-switch", "--iface", &ports.join(",")]);
    emu.wait_for_stderr("running on", Duration::from_secs(10));

    // Pings: h1 -> h2, h1 -> h3, h2 -> h3.
    for (from, to) in [(0, "10.0.0.2"), (0, "10.0.0.3"), (1, "10.0.0.3")] {
        let out = run(&[&["ip", "netns", "exec", &hosts[from].name], &["ping", "-c", "3", "-W", "2", to][..]].concat());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains(" 0% packet loss"),
            "ping from h{} to {to} through the switch failed:\n{text}{}\n{}",
            from + 1,
            String::from_utf8_lossy(&out.stderr),
            emu.output()
        );
    }

    // A TCP transfer h1 -> h2 of 200 KB of known bytes.
    let data = pseudo_random_bytes(200 * 1024);
    let sent = tmp.path().join("sent.bin");
    let received = tmp.path().join("received.bin");
    std::fs::write(&sent, &data).unwrap();
    let mut server = Background::spawn(&hosts[1].cmd(&[
        "/usr/bin/python3",
        "-c",
        TCP_SERVER,
        "10.0.0.2",
        "5001",
        path_str(&received),
    ]));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !server.stdout().contains("listening") {
        assert!(Instant::now() < deadline, "TCP server in h2 did not start:\n{}", server.output());
        assert!(server.child.try_wait().unwrap().is_none(), "TCP server in h2 exited:\n{}", server.output());
        thread::sleep(Duration::from_millis(20));
    }
    hosts[0].exec(&["/usr/bin/python3", "-c", TCP_CLIENT, "10.0.0.2", "5001", path_str(&sent)]);
    let status = server.wait_exit(Duration::from_secs(20));
    assert!(status.is_some_and(|s| s.success()), "TCP server in h2 failed ({status:?}):\n{}", server.output());
    let got = std::fs::read(&received).unwrap();
    assert_eq!(got.len(), data.len(), "TCP transfer through the switch: wrong number of bytes");
    assert!(got == data, "TCP transfer through the switch: the bytes differ");

    // Deleting a port's interface ends the run cleanly, with the summary.
    ok(&["ip", "link", "del", &veths[0].root]);
    let gone = veths.remove(0); // its Drop finds nothing left to delete
    let status = emu.wait_exit(Duration::from_secs(5));
    assert!(status.is_some(), "emu did not stop within 5 s after `{}` was deleted:\n{}", gone.root, emu.output());
    assert!(status.unwrap().success(), "emu exited with {status:?} after an interface went away:\n{}", emu.output());
    let stderr = emu.stderr();
    assert!(
        stderr.contains(&format!("interface `{}` went away", gone.root)),
        "stderr does not say that `{}` went away:\n{stderr}",
        gone.root
    );
    let summary = parse_summary("learning-switch", &emu.stdout());
    assert!(summary.frames_in > 0 && summary.frames_out > 0, "no traffic counted: {summary:?}\n{}", emu.output());
    assert_eq!(summary.ports.len(), 3, "expected 3 port rows: {summary:?}\n{}", emu.output());
    for (k, p) in summary.ports.iter().enumerate() {
        assert!(
            p[0] > 0 && p[1] > 0 && p[2] > 0 && p[3] > 0,
            "port {k} has a zero rx/tx counter: {p:?}\n{}",
            emu.output()
        );
    }
}

#[test]
fn icmp_echo_answers_real_ping() {
    require_root();
    let tmp = tempfile::tempdir().unwrap();
    let h1 = Netns::new(name("emu", "ie-h1"));
    let veth = Veth::new(name("e", "iep"), name("e", "ieh"), &h1, "10.0.0.2/24");
    let mut emu = Background::emu(&["run", "icmp-echo", "--ip", "10.0.0.1", "--iface", &veth.root]);
    emu.wait_for_stderr("running on", Duration::from_secs(10));

    let pcap = tmp.path().join("cap.pcap");
    let mut tcpdump = Background::spawn(&h1.cmd(&[
        "tcpdump",
        "-n",
        "-U",
        "--immediate-mode",
        "-i",
        &veth.host,
        "-w",
        path_str(&pcap),
        "icmp",
    ]));
    tcpdump.wait_for_stderr("listening on", Duration::from_secs(10));

    let out = run(&["ip", "netns", "exec", &h1.name, "ping", "-c", "3", "-W", "2", "10.0.0.1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains(" 0% packet loss"),
        "ping of the icmp-echo NF failed:\n{text}{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        emu.output()
    );

    tcpdump.signal("INT");
    let status = tcpdump.wait_exit(Duration::from_secs(5));
    assert!(status.is_some(), "tcpdump did not stop on SIGINT:\n{}", tcpdump.output());

    // The replies, decoded with IP header checksum validation on (ICMP's is always checked).
    let decoded = ok(&["tshark", "-r", path_str(&pcap), "-o", "ip.check_checksum:TRUE", "-Y", "icmp.type == 0", "-V"]);
    let replies = decoded.matches("Type: 0 (Echo (ping) reply)").count();
    assert_eq!(replies, 3, "expected 3 echo replies in the capture:\n{decoded}");
    let ip_good = decoded.matches("Header checksum status: Good").count();
    let icmp_good = decoded.matches("Checksum Status: Good").count();
    assert_eq!(ip_good, 3, "every reply needs a good IP header checksum:\n{decoded}");
    assert_eq!(icmp_good, 3, "every reply needs a good ICMP checksum:\n{decoded}");
    for bad in ["Bad", "bad", "incorrect"] {
        assert!(!decoded.contains(bad), "tshark found something {bad} in the replies:\n{decoded}");
    }

    // SIGTERM ends the run with the summary.
    emu.signal("TERM");
    let status = emu.wait_exit(Duration::from_secs(5));
    assert!(status.is_some_and(|s| s.success()), "emu did not exit cleanly on SIGTERM ({status:?}):\n{}", emu.output());
    assert!(emu.stderr().contains("stopped by signal"), "stderr does not say it stopped by signal:\n{}", emu.output());
    let summary = parse_summary("icmp-echo", &emu.stdout());
    // In: at least one ARP request and 3 echo requests; out: an ARP reply and 3 echo replies.
    assert!(summary.frames_in >= 4, "expected at least 4 frames in: {summary:?}\n{}", emu.output());
    assert!(summary.frames_out >= 4, "expected at least 4 frames out: {summary:?}\n{}", emu.output());
    assert!(summary.dropped <= summary.frames_in, "more drops than frames: {summary:?}");
    assert_eq!(summary.ports.len(), 1, "expected 1 port row: {summary:?}\n{}", emu.output());
    assert_eq!(summary.ports[0][2], summary.frames_out, "port 0 tx count differs from the total: {summary:?}");
}

#[test]
fn nonexistent_interface_is_a_clear_error() {
    let missing = "nosuchif0";
    assert!(!Path::new("/sys/class/net").join(missing).exists(), "an interface `{missing}` exists here");
    let mut emu = Background::emu(&["run", "learning-switch", "--iface", missing]);
    let status = emu.wait_exit(Duration::from_secs(10));
    assert!(status.is_some(), "emu did not exit within 10 s:\n{}", emu.output());
    assert!(!status.unwrap().success(), "emu succeeded on a missing interface:\n{}", emu.output());
    assert!(
        emu.stderr().contains("does not exist"),
        "stderr does not say the interface does not exist:\n{}",
        emu.output()
    );
    assert!(emu.stderr().contains(missing), "stderr does not name the interface:\n{}", emu.output());
}

#[test]
fn raw_sockets_without_permission_is_a_clear_error() {
    require_root(); // to switch to `nobody`
                    // A copy of the binary that `nobody` can reach whatever the permissions of the build tree.
    let dir = world_readable_tempdir();
    let bin = dir.path().join("emu");
    std::fs::copy(EMU, &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = run(&[
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        path_str(&bin),
        "run",
        "learning-switch",
        "--iface",
        "lo",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "emu succeeded as `nobody` on raw sockets:\n{stderr}");
    assert_ne!(out.status.code(), Some(124), "emu as `nobody` hung until the timeout:\n{stderr}");
    assert!(stderr.contains("permission"), "stderr does not mention permission:\n{stderr}");
    assert!(
        stderr.contains("root") && stderr.contains("CAP_NET_RAW"),
        "stderr does not mention root/CAP_NET_RAW:\n{stderr}"
    );
}

//! `emu mininet`: real Mininet networks whose switches are the NF's own process, driven by real
//! hosts and clients. Needs root and Debian's `mininet` (scripts/setup.sh); CI runs as root.
//!
//! Mininet puts switch ports in the root namespace under fixed names (s1-eth1, …), so these
//! tests run one at a time.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn require_root() {
    let uid = Command::new("id").arg("-u").output().expect("id");
    assert_eq!(text(&uid.stdout).trim(), "0", "the Mininet tests need root (CI runs as root); run them with sudo");
}

/// Runs `emu mininet` with `args` and a script; returns its output and how long it took.
fn mininet(args: &[&str], script: &str) -> (Output, Duration) {
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("experiment.txt");
    std::fs::write(&path, script).unwrap();
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_emu"))
        .arg("mininet")
        .args(args)
        .arg("--run")
        .arg(&path)
        .output()
        .expect("run emu mininet");
    (out, t.elapsed())
}

fn show(out: &Output) -> String {
    format!("status {:?}\nstdout:\n{}\nstderr:\n{}", out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// Nothing of an experiment is left: no switch port, no NF process, no host shell, no server.
fn assert_clean(switches: &[&str]) {
    let links = text(&Command::new("ip").args(["-o", "link"]).output().unwrap().stdout);
    for s in switches {
        assert!(!links.contains(&format!(" {s}-eth")), "switch ports of {s} left behind:\n{links}");
    }
    let procs = text(&Command::new("ps").args(["-eo", "args"]).output().unwrap().stdout);
    for line in procs.lines() {
        assert!(!line.contains("--iface s1-eth"), "an NF process was left running: {line}");
        assert!(!line.starts_with("bash --norc") || !line.contains("mininet:"), "a Mininet host shell was left: {line}");
        assert!(!line.contains("memcached -u nobody -l 10.0.0."), "memcached was left running: {line}");
        assert!(!line.contains("iperf3 -s"), "iperf3 was left running: {line}");
    }
}

/// A TCP transfer of 1 MB of random bytes from `from` to `to_ip` (served by `to`), checked by
/// SHA-256 on both ends.
fn tcp_transfer(from: &str, to: &str, to_ip: &str) -> String {
    format!(
        "{to} &: python3 -c \"import socket,hashlib; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); \
s.bind(('0.0.0.0', 5001)); s.listen(1); c,_=s.accept(); h=hashlib.sha256(); \
[h.update(b) for b in iter(lambda: c.recv(65536), b'')]; open('$WORK/got.sha','w').write(h.hexdigest())\"\n\
sleep 0.5\n\
{from}: head -c 1000000 /dev/urandom > $WORK/data && python3 -c \"import socket; s=socket.create_connection(('{to_ip}', 5001)); s.sendall(open('$WORK/data','rb').read()); s.close()\"\n\
sleep 0.5\n\
{from}: test \"$(sha256sum < $WORK/data | cut -d' ' -f1)\" = \"$(cat $WORK/got.sha)\"\n"
    )
}

#[test]
fn learning_switch_single_4_pingall_and_tcp_intact() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let script = format!("pingall\n{}", tcp_transfer("h1", "h4", "10.0.0.4"));
    let (out, _) = mininet(&["learning-switch", "--topo", "single,4"], &script);
    assert!(out.status.success(), "{}", show(&out));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("0.0% packet loss") || stdout.contains(" 0% packet loss"), "{stdout}");
    assert!(stdout.contains("experiment passed"), "{stdout}");
    assert_clean(&["s1"]);
}

#[test]
fn learning_switch_linear_3_pingall_and_tcp_intact() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let script = format!("pingall\n{}", tcp_transfer("h1", "h3", "10.0.0.3"));
    let (out, _) = mininet(&["learning-switch", "--topo", "linear,3"], &script);
    assert!(out.status.success(), "{}", show(&out));
    // Three NF processes, each with its own counters.
    assert_eq!(text(&out.stdout).matches("NF stopped (status 0)").count(), 3, "{}", show(&out));
    assert_clean(&["s1", "s2", "s3"]);
}

#[test]
fn icmp_echo_answers_a_host() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let script = "h1: ping -c 3 -W 2 10.0.0.100\nh2: ping -c 2 -W 2 10.0.0.100\nh1 !: ping -c 1 -W 1 10.0.0.2\n";
    let (out, _) = mininet(&["icmp-echo", "--ip", "10.0.0.100", "--topo", "single,2"], script);
    assert!(out.status.success(), "{}", show(&out));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("3 packets transmitted, 3 received, 0% packet loss"), "{stdout}");
    assert!(stdout.contains("not_for_us"), "the NF's drop counters are reported: {stdout}");
    assert_clean(&["s1"]);
}

#[test]
fn memcached_through_the_learning_switch() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let script = "\
h1 &: memcached -u nobody -l 10.0.0.1 -p 11211 -U 0 -t 1
sleep 1
h2: memcslap --servers=10.0.0.1:11211 --test=set --concurrency=2 --execute-number=2000
h3: memcslap --servers=10.0.0.1:11211 --test=get --concurrency=2 --execute-number=2000
h2: echo 'value through emu' > $WORK/item && memccp --servers=10.0.0.1:11211 $WORK/item
h3: test \"$(memccat --servers=10.0.0.1:11211 item)\" = 'value through emu'
h2: memcstat --servers=10.0.0.1:11211 | grep -E 'cmd_(get|set)|get_hits'
";
    let (out, _) = mininet(&["learning-switch", "--topo", "single,3"], script);
    assert!(out.status.success(), "{}", show(&out));
    let stdout = text(&out.stdout);
    let hits: u64 = stdout
        .lines()
        .find_map(|l| l.trim_start_matches(|c| c == ' ' || c == '|').trim().strip_prefix("get_hits: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("memcstat shows get_hits:\n{stdout}"));
    assert!(hits > 0, "gets hit the server: {stdout}");
    let sets: u64 = stdout
        .lines()
        .find_map(|l| l.trim_start_matches(|c| c == ' ' || c == '|').trim().strip_prefix("cmd_set: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap();
    assert!(sets > 2000, "memcslap's sets reached the server: {stdout}");
    assert_clean(&["s1"]);
}

#[test]
fn killing_the_nf_mid_experiment_is_reported_not_a_hang() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let script = "timeout 10\npingall\nh1: kill -9 $(cat $WORK/s1.pid)\nsleep 0.5\nh1: ping -c 1 -W 1 10.0.0.2\n";
    let (out, took) = mininet(&["learning-switch", "--topo", "single,2"], script);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("FAILED: the NF process of s1") && stdout.contains("exited with status -9"), "{stdout}");
    assert!(took < Duration::from_secs(30), "ended within its timeouts: {took:?}");
    assert!(text(&out.stderr).contains("logs and spec are in"), "{}", show(&out));
    assert_clean(&["s1"]);
}

#[test]
fn a_failing_step_fails_the_experiment() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (out, _) = mininet(&["learning-switch", "--topo", "single,2"], "h1: ping -c 1 -W 1 10.0.0.77\nh2: sleep 5\ntimeout 1\nh2: sleep 5\n");
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("FAILED (exit 1"), "{stdout}");
    assert!(stdout.contains("FAILED (timed out after 1 s"), "{stdout}");
    assert!(stdout.contains("experiment FAILED: 2 step(s) failed"), "{stdout}");
    assert_clean(&["s1"]);
}

#[test]
fn bad_topologies_and_scripts_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("t.json");
    std::fs::write(&topo, r#"{"hosts": [{"name": "h1"}], "switches": ["s1"], "links": [["h1", "s2"]]}"#).unwrap();
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_emu")).arg("mininet").args(args).output().unwrap();
    let out = run(&["learning-switch", "--topo", topo.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("t.json: link h1–s2: no host or switch is called `s2`"), "{}", show(&out));
    let out = run(&["learning-switch", "--topo", "mesh,3"]);
    assert!(text(&out.stderr).contains("not `single,N`, `linear,N` or an existing topology file"), "{}", show(&out));
    let script = dir.path().join("x.txt");
    std::fs::write(&script, "pingall\nh7: true\n").unwrap();
    let out = run(&["learning-switch", "--topo", "single,2", "--run", script.to_str().unwrap()]);
    assert!(text(&out.stderr).contains("x.txt: line 2: no host `h7` in the topology (hosts: h1, h2)"), "{}", show(&out));
    let out = run(&["icmp-echo", "--ip", "nope", "--topo", "single,2"]);
    assert!(text(&out.stderr).contains("--ip nope"), "{}", show(&out));
}

#[test]
fn not_root_is_a_clear_error() {
    require_root();
    // The binary must be reachable by `nobody`.
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("emu");
    std::fs::copy(env!("CARGO_BIN_EXE_emu"), &bin).unwrap();
    Command::new("chmod").arg("-R").arg("a+rx").arg(dir.path()).status().unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&bin)
        .args(["mininet", "learning-switch", "--topo", "single,2"])
        .current_dir(Path::new("/"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(text(&out.stderr).contains("Mininet needs root"), "{}", show(&out));
}

#[test]
fn cli_mode_runs_mininet_commands() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_emu"))
        .args(["mininet", "learning-switch", "--topo", "single,2", "--cli"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"h1 ping -c 2 h2\nnodes\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", show(&out));
    // Mininet's CLI prints through its logger, on stderr.
    let all = text(&out.stdout) + &text(&out.stderr);
    assert!(all.contains("2 packets transmitted, 2 received, 0% packet loss"), "{all}");
    assert!(all.contains("h1 h2 s1"), "{all}");
    assert_clean(&["s1"]);
}

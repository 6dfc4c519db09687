//! `LiveDevice` in ring mode (`IoMode::Ring`: TPACKET_V3 receive ring, batched `sendmmsg`) on
//! veth pairs: it must deliver and send exactly the frames the plain path does.
//!
//! These tests need root (network namespaces, veth pairs, raw sockets); they fail, not skip,
//! without it. Each test makes its own namespace and veth pairs, named after the process id and
//! a per-test tag, with IPv6 off so no stray traffic appears, and removes them in a Drop guard
//! even when it fails; no other interface is touched. The far end of each pair sits in the
//! namespace, where a small `/usr/bin/python3` program sends or captures frames with an
//! AF_PACKET socket. Test frames carry EtherType 0x88b5 (local experimental); a frame of
//! EtherType 0x88b6 marks the end of a sequence.

use emu_cpu::{Device, EndReason, Frame, IoMode, LiveDevice};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const PYTHON: &str = "/usr/bin/python3";
const TEST_TYPE: [u8; 2] = [0x88, 0xb5];
const END_TYPE: [u8; 2] = [0x88, 0xb6];

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
        "the ring tests need root (network namespaces, veth pairs, raw sockets); run them as root, \
         e.g. `sudo -E cargo test -p emu-cpu --test ring`"
    );
}

/// Runs a command to completion, bounded by `timeout 60`.
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

/// `er` + pid + `tag`: unique to this process and test, at most 15 characters (an interface name).
fn name(tag: &str) -> String {
    let n = format!("er{}{tag}", std::process::id());
    assert!(n.len() <= 15, "name `{n}` is longer than 15 characters");
    n
}

/// A network namespace with IPv6 off, deleted on drop (with the interfaces inside it).
struct Netns {
    name: String,
    tag: String,
}

impl Netns {
    fn new(tag: &str) -> Netns {
        let ns = Netns { name: name(tag), tag: tag.to_string() };
        ok(&["ip", "netns", "add", &ns.name]);
        ns.exec(&["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        ns.exec(&["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"]);
        ns
    }

    fn exec(&self, args: &[&str]) -> String {
        ok(&[&["ip", "netns", "exec", &self.name], args].concat())
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = run(&["ip", "netns", "del", &self.name]);
    }
}

/// A veth pair: `root` in this namespace (up, no address: the device's port), `far` in `ns`
/// (up, no address), named after the namespace's tag and `tag`. IPv6 is off on both, so neither sends anything by itself. The root end
/// (and with it the pair) is deleted on drop.
struct Veth {
    root: String,
    far: String,
}

impl Veth {
    fn new(ns: &Netns, tag: &str, mtu: u32) -> Veth {
        let veth = Veth { root: name(&format!("{}{tag}r", ns.tag)), far: name(&format!("{}{tag}f", ns.tag)) };
        ok(&["ip", "link", "add", &veth.root, "type", "veth", "peer", "name", &veth.far, "netns", &ns.name]);
        let v6 = format!("/proc/sys/net/ipv6/conf/{}/disable_ipv6", veth.root);
        if std::path::Path::new(&v6).exists() {
            std::fs::write(&v6, "1").unwrap_or_else(|e| panic!("{v6}: {e}"));
        }
        ns.exec(&["sysctl", "-qw", &format!("net.ipv6.conf.{}.disable_ipv6=1", veth.far)]);
        let mtu = mtu.to_string();
        ok(&["ip", "link", "set", &veth.root, "mtu", &mtu, "up"]);
        ns.exec(&["ip", "link", "set", &veth.far, "mtu", &mtu, "up"]);
        veth
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        // Already gone if the test deleted it; that is fine.
        let _ = run(&["ip", "link", "del", &self.root]);
    }
}

/// Frame sizes (without FCS) that the tests cycle through: minimum, odd, around powers of two
/// and the standard maximum.
const SIZES: [usize; 16] = [60, 61, 64, 65, 100, 127, 128, 256, 511, 512, 1000, 1023, 1499, 1500, 1513, 1514];

/// Test frame `seq` of `len` bytes for `port`: fixed MACs, EtherType 0x88b5, then the port, the
/// sequence number and bytes that differ from frame to frame.
fn test_frame(port: u8, seq: u32, len: usize) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01];
    f.extend_from_slice(&TEST_TYPE);
    f.push(port);
    f.extend_from_slice(&seq.to_be_bytes());
    let mut x = seq.wrapping_mul(2654435761).wrapping_add(port as u32 + 1);
    while f.len() < len {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        f.push(x as u8);
    }
    f.truncate(len);
    f
}

fn end_frame(port: u8) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01];
    f.extend_from_slice(&END_TYPE);
    f.push(port);
    f.resize(60, 0);
    f
}

fn ethertype(data: &[u8]) -> [u8; 2] {
    if data.len() < 14 {
        return [0, 0];
    }
    [data[12], data[13]]
}

/// Sends `frames` (interface, bytes), in order, from inside `ns` with AF_PACKET sockets, pausing
/// a millisecond every `burst` frames so the receiver is never outrun (a plain socket's buffer
/// holds only about a hundred frames).
fn send_from_namespace(ns: &Netns, frames: &[(String, Vec<u8>)], burst: usize) {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    {
        let mut w = std::io::BufWriter::new(file.as_file());
        for (ifname, data) in frames {
            let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
            writeln!(w, "{ifname} {hex}").unwrap();
        }
    }
    const SEND: &str = r#"
import socket, sys, time
socks = {}
for n, line in enumerate(open(sys.argv[1])):
    ifname, data = line.split()
    if ifname not in socks:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        s.bind((ifname, 0))
        socks[ifname] = s
    socks[ifname].send(bytes.fromhex(data))
    if n % int(sys.argv[2]) == 0:
        time.sleep(0.001)
"#;
    ns.exec(&[PYTHON, "-c", SEND, file.path().to_str().unwrap(), &burst.to_string()]);
}

/// Receives from `device` on a thread until an end frame has arrived on each of `ports` ports
/// (or the input ends), keeping the test frames; gives up after `timeout` by deleting
/// `unblock` (the device's interfaces), which ends `receive`. Returns the device, the frames and
/// whether every end frame arrived.
fn collect(mut device: LiveDevice, ports: usize, timeout: Duration, unblock: &[String]) -> (LiveDevice, Vec<Frame>, bool) {
    let (tx, rx) = mpsc::channel();
    let worker = thread::spawn(move || {
        let mut frames = Vec::new();
        let mut ended = vec![false; ports];
        let complete = loop {
            match device.receive().expect("receive") {
                None => break false,
                Some(f) if ethertype(&f.data) == END_TYPE => {
                    ended[f.port as usize] = true;
                    if ended.iter().all(|&e| e) {
                        break true;
                    }
                }
                Some(f) if ethertype(&f.data) == TEST_TYPE => frames.push(f),
                Some(_) => {}
            }
        };
        let _ = tx.send(());
        (device, frames, complete)
    });
    if rx.recv_timeout(timeout).is_err() {
        for i in unblock {
            let _ = run(&["ip", "link", "del", i]);
        }
    }
    worker.join().expect("receiving thread")
}

fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64
}

/// Asserts that `got` holds exactly `want` (port, bytes), in order per port, with whole frames.
fn assert_same_frames(got: &[Frame], want: &[(u8, Vec<u8>)], ports: usize) {
    for port in 0..ports as u8 {
        let g: Vec<&Frame> = got.iter().filter(|f| f.port == port).collect();
        let w: Vec<&Vec<u8>> = want.iter().filter(|(p, _)| *p == port).map(|(_, d)| d).collect();
        assert_eq!(g.len(), w.len(), "port {port}: {} frames received, {} sent", g.len(), w.len());
        for (i, (f, d)) in g.iter().zip(&w).enumerate() {
            assert_eq!(f.wire_len, f.data.len(), "port {port}, frame {i}: cut short ({} of {} bytes)", f.data.len(), f.wire_len);
            assert!(
                f.data == **d,
                "port {port}, frame {i}: received {} bytes, sent {}; first difference at byte {:?}",
                f.data.len(),
                d.len(),
                f.data.iter().zip(d.iter()).position(|(a, b)| a != b)
            );
        }
    }
    // Frames of other ports must not show up as frames of these ports.
    for f in got {
        assert_eq!(f.data[14], f.port, "a frame sent to port {} arrived on port {}", f.data[14], f.port);
    }
}

/// Captures frames of EtherType 0x88b5 on `ifname` inside `ns` until an end frame arrives; the
/// program prints `ready` once its socket is bound. Returns the child.
fn capture_in_namespace(ns: &Netns, ifname: &str) -> std::process::Child {
    const CAPTURE: &str = r#"
import socket, sys, select, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE: never drop a burst
s.bind((sys.argv[1], 3))
print("ready", flush=True)
deadline = time.time() + 30
out = []
while time.time() < deadline:
    r, _, _ = select.select([s], [], [], max(0, deadline - time.time()))
    if not r:
        break
    data, addr = s.recvfrom(65536)
    if addr[2] == 4:  # PACKET_OUTGOING
        continue
    if data[12:14] == b"\x88\xb6":
        out.append("end")
        break
    if data[12:14] == b"\x88\xb5":
        out.append(data.hex())
print("\n".join(out), flush=True)
"#;
    Command::new("ip")
        .args(["netns", "exec", &ns.name, PYTHON, "-c", CAPTURE, ifname])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("starting the capture")
}

/// Waits for the capture to print `ready`; returns a reader of the rest.
fn wait_ready(child: &mut std::process::Child) -> BufReader<std::process::ChildStdout> {
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).expect("reading the capture");
    assert_eq!(line.trim(), "ready", "the capture did not start");
    out
}

/// The frames the capture printed, and whether it saw the end frame.
fn captured(mut child: std::process::Child, mut out: BufReader<std::process::ChildStdout>) -> (Vec<Vec<u8>>, bool) {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut out, &mut text).unwrap();
    let _ = child.wait();
    let mut frames = Vec::new();
    let mut end = false;
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if l == "end" {
            end = true;
        } else {
            frames.push((0..l.len()).step_by(2).map(|i| u8::from_str_radix(&l[i..i + 2], 16).unwrap()).collect());
        }
    }
    (frames, end)
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

/// 1600 frames of 60..1514 bytes on two ports, interleaved, arrive through the ring whole, in
/// order, on the right port, with kernel timestamps of now.
#[test]
fn ring_receives_exactly_the_frames_sent() {
    require_root();
    let ns = Netns::new("rx");
    let (a, b) = (Veth::new(&ns, "a", 1500), Veth::new(&ns, "b", 1500));
    let device = LiveDevice::open_with(&[a.root.clone(), b.root.clone()], IoMode::Ring).expect("opening in ring mode");
    assert_eq!(device.io_modes(), vec![(a.root.clone(), IoMode::Ring), (b.root.clone(), IoMode::Ring)]);
    assert!(device.ring_fallbacks().is_empty(), "{:?}", device.ring_fallbacks());

    let mut want = Vec::new();
    let mut send = Vec::new();
    for seq in 0..1600u32 {
        let port = (seq % 3 == 0) as u8; // two frames to port 0, one to port 1, ...
        let f = test_frame(port, seq, SIZES[seq as usize % SIZES.len()]);
        send.push((if port == 0 { a.far.clone() } else { b.far.clone() }, f.clone()));
        want.push((port, f));
    }
    send.push((a.far.clone(), end_frame(0)));
    send.push((b.far.clone(), end_frame(1)));

    let start = now_ns();
    let (tx, rx) = mpsc::channel();
    let unblock = vec![a.root.clone(), b.root.clone()];
    let receiver = thread::spawn(move || tx.send(collect(device, 2, Duration::from_secs(30), &unblock)).unwrap());
    send_from_namespace(&ns, &send, 32);
    let (device, got, complete) = rx.recv().unwrap();
    receiver.join().unwrap();
    let end = now_ns();
    assert!(complete, "the end frames did not arrive ({} of {} test frames did)", got.len(), want.len());
    assert_eq!(device.end_reason(), None);
    assert_same_frames(&got, &want, 2);
    for f in &got {
        assert!(f.timestamp >= start - 1_000_000_000 && f.timestamp <= end + 1_000_000_000, "timestamp {} is not now", f.timestamp);
    }
}

/// The same frames through a ring device and a plain device open on the same interface at the
/// same time: both deliver identical frames.
#[test]
fn ring_and_plain_deliver_the_same_frames() {
    require_root();
    let ns = Netns::new("eq");
    let v = Veth::new(&ns, "a", 1500);
    let ring = LiveDevice::open_with(std::slice::from_ref(&v.root), IoMode::Ring).unwrap();
    let plain = LiveDevice::open(std::slice::from_ref(&v.root)).unwrap();
    assert_eq!(plain.io_modes(), vec![(v.root.clone(), IoMode::Plain)]);
    let mut send: Vec<(String, Vec<u8>)> = (0..400u32).map(|seq| (v.far.clone(), test_frame(0, seq, SIZES[(seq as usize * 7) % SIZES.len()]))).collect();
    send.push((v.far.clone(), end_frame(0)));

    let unblock = vec![v.root.clone()];
    let (tx, rx) = mpsc::channel();
    for device in [ring, plain] {
        let (tx, unblock) = (tx.clone(), unblock.clone());
        thread::spawn(move || tx.send(collect(device, 1, Duration::from_secs(30), &unblock)).unwrap());
    }
    send_from_namespace(&ns, &send, 4);
    let results: Vec<_> = (0..2).map(|_| rx.recv().unwrap()).collect();
    for (device, got, complete) in &results {
        assert!(complete, "{:?}: the end frame did not arrive ({} frames did)", device.io_modes(), got.len());
    }
    let strip = |fs: &[Frame]| fs.iter().map(|f| (f.port, f.data.clone(), f.wire_len)).collect::<Vec<_>>();
    assert_eq!(strip(&results[0].1), strip(&results[1].1));
    assert_eq!(results[0].1.len(), 400);
}

/// Jumbo frames (MTU 9500) up to 9514 bytes arrive whole through the ring and go out whole.
#[test]
fn ring_carries_jumbo_frames() {
    require_root();
    let ns = Netns::new("jb");
    let v = Veth::new(&ns, "a", 9500);
    let sizes = [1514, 2047, 2048, 2049, 4096, 9014, 9216, 9514];
    let want: Vec<(u8, Vec<u8>)> = (0..64u32).map(|seq| (0, test_frame(0, seq, sizes[seq as usize % sizes.len()]))).collect();

    // Receive.
    let device = LiveDevice::open_with(std::slice::from_ref(&v.root), IoMode::Ring).unwrap();
    assert_eq!(device.io_modes()[0].1, IoMode::Ring);
    let mut send: Vec<(String, Vec<u8>)> = want.iter().map(|(_, f)| (v.far.clone(), f.clone())).collect();
    send.push((v.far.clone(), end_frame(0)));
    let (tx, rx) = mpsc::channel();
    let unblock = vec![v.root.clone()];
    thread::spawn(move || tx.send(collect(device, 1, Duration::from_secs(30), &unblock)).unwrap());
    send_from_namespace(&ns, &send, 8);
    let (mut device, got, complete) = rx.recv().unwrap();
    assert!(complete, "the end frame did not arrive ({} frames did)", got.len());
    assert_same_frames(&got, &want, 1);

    // Transmit.
    let mut child = capture_in_namespace(&ns, &v.far);
    let out = wait_ready(&mut child);
    for (_, f) in &want {
        device.transmit(0, f, 0).unwrap();
    }
    device.transmit(0, &end_frame(0), 0).unwrap();
    device.finish().unwrap();
    let (frames, end) = captured(child, out);
    assert!(end, "the end frame was not captured ({} frames were)", frames.len());
    assert_eq!(device.tx_errors, 0);
    assert_eq!(frames.len(), want.len());
    assert!(frames.iter().zip(&want).all(|(g, (_, w))| g == w), "captured jumbo frames differ from those sent");
}

/// 2000 frames of 60..1514 bytes sent through the ring device (batched `sendmmsg`) arrive at the
/// far end byte for byte and in order; two frames too big for the MTU are counted as transmit
/// errors, as on the plain path, without holding up the others.
#[test]
fn ring_transmits_exactly_the_frames_given() {
    require_root();
    let ns = Netns::new("tx");
    let v = Veth::new(&ns, "a", 1500);
    for mode in IoMode::ALL {
        let mut device = LiveDevice::open_with(std::slice::from_ref(&v.root), mode).unwrap();
        assert_eq!(device.io_modes()[0].1, mode);
        let mut child = capture_in_namespace(&ns, &v.far);
        let out = wait_ready(&mut child);
        let mut want = Vec::new();
        for seq in 0..2000u32 {
            let f = test_frame(0, seq, SIZES[seq as usize % SIZES.len()]);
            device.transmit(0, &f, 0).unwrap();
            want.push(f);
            if seq == 500 || seq == 1337 {
                // Too big for MTU 1500: refused by the kernel, counted, not sent.
                device.transmit(0, &test_frame(0, 99_999, 1600), 0).unwrap();
            }
        }
        device.transmit(0, &end_frame(0), 0).unwrap();
        device.finish().unwrap();
        assert_eq!(device.tx_errors, 2, "{mode}: transmit errors");
        let (frames, end) = captured(child, out);
        assert!(end, "{mode}: the end frame was not captured ({} frames were)", frames.len());
        assert_eq!(frames.len(), want.len(), "{mode}: frames captured");
        for (i, (g, w)) in frames.iter().zip(&want).enumerate() {
            assert!(g == w, "{mode}: frame {i} differs ({} bytes captured, {} sent)", g.len(), w.len());
        }
    }
}

/// A lone frame does not wait for its ring block to fill: the kernel hands the block over after
/// about a millisecond.
#[test]
fn ring_delivers_a_lone_frame_promptly() {
    require_root();
    let ns = Netns::new("lt");
    let v = Veth::new(&ns, "a", 1500);
    let mut device = LiveDevice::open_with(std::slice::from_ref(&v.root), IoMode::Ring).unwrap();
    let (tx, rx) = mpsc::channel::<Vec<u64>>();
    let unblock = v.root.clone();
    let far = v.far.clone();
    let nsname = ns.name.clone();
    // Ten frames, 50 ms apart: each is alone in its block.
    let sender = thread::spawn(move || {
        ok(&[
            "ip", "netns", "exec", &nsname, PYTHON, "-c",
            "import socket,sys,time\ns=socket.socket(socket.AF_PACKET,socket.SOCK_RAW,0)\ns.bind((sys.argv[1],0))\n\
             for i in range(10):\n    time.sleep(0.05)\n    s.send(bytes.fromhex('020000000002020000000001'+'88b5'+'00'*46))",
            &far,
        ]);
    });
    let watchdog = thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(20)).is_err() {
            let _ = run(&["ip", "link", "del", &unblock]);
        }
    });
    let mut delays = Vec::new();
    while delays.len() < 10 {
        let Some(f) = device.receive().unwrap() else { break };
        if ethertype(&f.data) == TEST_TYPE {
            delays.push(now_ns().saturating_sub(f.timestamp));
        }
    }
    let _ = tx.send(delays.clone());
    sender.join().unwrap();
    watchdog.join().unwrap();
    assert_eq!(delays.len(), 10, "only {} of 10 lone frames arrived", delays.len());
    delays.sort();
    eprintln!("lone-frame delays in the ring (ns): {delays:?}");
    let median_ms = delays[5] as f64 / 1e6;
    assert!(median_ms < 20.0, "a lone frame waited {median_ms:.1} ms in the ring (median); delays {delays:?}");
}

/// Deleting an interface ends `receive` with `Ok(None)` within a second, saying which one went,
/// while another interface carries traffic and on a quiet device (in both modes).
#[test]
fn ring_ends_when_the_interface_is_deleted() {
    require_root();
    let ns = Netns::new("gn");
    let (a, b) = (Veth::new(&ns, "a", 1500), Veth::new(&ns, "b", 1500));
    let mut device = LiveDevice::open_with(&[a.root.clone(), b.root.clone()], IoMode::Ring).unwrap();
    assert_eq!(device.io_modes().iter().filter(|(_, m)| *m == IoMode::Ring).count(), 2);
    // Traffic on `a` until the namespace goes; `b` is deleted while `a` is busy.
    let nsname = ns.name.clone();
    let far = a.far.clone();
    let _traffic = thread::spawn(move || {
        let _ = run(&[
            "ip", "netns", "exec", &nsname, PYTHON, "-c",
            "import socket,sys,time\ns=socket.socket(socket.AF_PACKET,socket.SOCK_RAW,0)\ns.bind((sys.argv[1],0))\n\
             f=bytes.fromhex('020000000002020000000001'+'88b5'+'00'*46)\nend=time.time()+10\n\
             while time.time()<end:\n    s.send(f)\n    time.sleep(0.0002)",
            &far,
        ]);
    });
    let (tx, rx) = mpsc::channel::<Instant>();
    let doomed = b.root.clone();
    thread::spawn(move || {
        thread::sleep(Duration::from_millis(500));
        ok(&["ip", "link", "del", &doomed]);
        tx.send(Instant::now()).unwrap();
    });
    let mut frames = 0u64;
    let ended = loop {
        match device.receive().unwrap() {
            Some(_) => frames += 1,
            None => break Instant::now(),
        }
    };
    let deleted = rx.recv_timeout(Duration::from_secs(5)).expect("the deleting thread");
    assert!(frames > 0, "no traffic arrived on the busy interface");
    assert_eq!(device.end_reason(), Some(&EndReason::InterfaceGone(b.root.clone())));
    let late = ended.saturating_duration_since(deleted);
    assert!(late < Duration::from_secs(1), "receive ended {late:?} after the interface went");
    assert_eq!(device.receive().unwrap(), None, "the input stays ended");

    // A quiet device whose only interface goes, on either path.
    for (mode, tag) in [(IoMode::Ring, "c"), (IoMode::Plain, "d")] {
        let c = Veth::new(&ns, tag, 1500);
        let mut device = LiveDevice::open_with(std::slice::from_ref(&c.root), mode).unwrap();
        let doomed = c.root.clone();
        let (tx, rx) = mpsc::channel::<Instant>();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(300));
            ok(&["ip", "link", "del", &doomed]);
            tx.send(Instant::now()).unwrap();
        });
        assert_eq!(device.receive().unwrap(), None, "{mode}");
        let ended = Instant::now();
        let deleted = rx.recv_timeout(Duration::from_secs(5)).expect("the deleting thread");
        assert!(ended.saturating_duration_since(deleted) < Duration::from_secs(1), "{mode}: ended late");
        assert_eq!(device.end_reason(), Some(&EndReason::InterfaceGone(c.root.clone())), "{mode}");
    }
}

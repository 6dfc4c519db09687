//! Live Linux interfaces through raw AF_PACKET sockets, one port per interface.
//!
//! Each interface gets its own socket, bound to it, in promiscuous mode, ignoring the frames
//! the host itself sends out of it. One thread polls all of them. When an interface disappears
//! (Mininet deletes its links before anything else) the device reports the end of input, so the
//! run ends cleanly with its summary instead of spinning or crashing.
//!
//! Two ways of moving frames, chosen with [`IoMode`] when the device is opened:
//!
//! - [`IoMode::Plain`]: one `recvfrom` per received frame and one `send` per sent frame.
//! - [`IoMode::Ring`]: a `TPACKET_V3` receive ring shared with the kernel (no system call per
//!   received frame) and batched `sendmmsg` for transmit; see the `ring` module. An interface
//!   whose ring cannot be set up (an old kernel, a refused `setsockopt` or `mmap`) falls back to
//!   the plain path; [`LiveDevice::io_modes`] tells which path each interface got and
//!   [`LiveDevice::ring_fallbacks`] why.
//!
//! Both deliver the same frames (whole, with their length on the wire), end the same way and
//! count transmit errors the same way. In ring mode a frame waits in the ring at most about a
//! millisecond when traffic is light, and sent frames are handed to the kernel in batches: when
//! the device next waits for input, when 64 are staged for an interface, and on
//! [`Device::finish`] or [`LiveDevice::flush`]; [`LiveDevice::tx_errors`] is up to date after
//! each of these.
#![allow(unsafe_code)] // FFI to the socket API is the point of this module.

use crate::device::{Arrival, Device, Frame};
use crate::error::{Error, ErrorKind, Result};
use crate::ring::{self, RxRing, TxBatch};
use emu::{Port, Timestamp};
use std::collections::VecDeque;
use std::ffi::CString;
use std::fmt;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const ETH_P_ALL: u16 = 0x0003;
/// `PACKET_IGNORE_OUTGOING` (Linux 4.20): do not deliver frames this host sends.
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const POLL_MS: libc::c_int = 100;
/// Frames read from one interface before the others get a turn.
const BURST: usize = 32;
/// Longest time between two checks that every interface still exists, while frames keep
/// arriving (a socket error, or a quiet `poll`, triggers a check at once).
const GONE_CHECK: Duration = Duration::from_millis(100);

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Whether SIGINT or SIGTERM arrived since [`stop_on_signals`].
pub fn stopping() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Makes SIGINT and SIGTERM end the run cleanly (the device reports the end of input).
pub fn stop_on_signals() {
    // SAFETY: installs a handler that only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
    }
}

/// How a [`LiveDevice`] moves frames on an interface.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum IoMode {
    /// One `recvfrom` per received frame, one `send` per sent frame: works everywhere.
    #[default]
    Plain,
    /// A `TPACKET_V3` receive ring mapped into the process and batched `sendmmsg`: faster; falls
    /// back to [`IoMode::Plain`] on an interface where the ring cannot be set up.
    Ring,
}

impl IoMode {
    /// Every mode, in the order the choices are listed.
    pub const ALL: [IoMode; 2] = [IoMode::Plain, IoMode::Ring];

    /// Its name on the command line: `plain` or `ring`.
    pub fn name(self) -> &'static str {
        match self {
            IoMode::Plain => "plain",
            IoMode::Ring => "ring",
        }
    }
}

impl fmt::Display for IoMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A string that names no [`IoMode`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseIoModeError(pub String);

impl fmt::Display for ParseIoModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown I/O mode `{}`: choose `plain` (one system call per frame, works everywhere) or `ring` \
             (TPACKET_V3 receive ring and batched sends, faster; falls back to plain where unavailable)",
            self.0
        )
    }
}

impl std::error::Error for ParseIoModeError {}

impl FromStr for IoMode {
    type Err = ParseIoModeError;

    fn from_str(s: &str) -> core::result::Result<IoMode, ParseIoModeError> {
        IoMode::ALL.into_iter().find(|m| m.name().eq_ignore_ascii_case(s.trim())).ok_or_else(|| ParseIoModeError(s.to_string()))
    }
}

struct Iface {
    name: String,
    index: libc::c_int,
    /// The receive ring, in ring mode; dropped (unmapped) before the socket closes.
    ring: Option<RxRing>,
    /// Frames staged for sending, in ring mode.
    tx: TxBatch,
    /// Why ring mode was asked for and not used.
    fallback: Option<String>,
    fd: OwnedFd,
}

impl Iface {
    fn mode(&self) -> IoMode {
        if self.ring.is_some() {
            IoMode::Ring
        } else {
            IoMode::Plain
        }
    }
}

/// Why a live run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndReason {
    /// A stop signal arrived.
    Signal,
    /// The interface of this name disappeared or went down for good.
    InterfaceGone(String),
}

/// Ports on live interfaces: port `k` is the `k`-th interface given.
pub struct LiveDevice {
    ifaces: Vec<Iface>,
    pending: VecDeque<Frame>,
    buf: Vec<u8>,
    ended: Option<EndReason>,
    /// Interfaces on the plain path (polled even while rings have frames, so they get turns).
    plain: usize,
    last_gone_check: Instant,
    /// Frames the kernel refused to send (too big for the MTU, queue full).
    pub tx_errors: u64,
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn index_of(name: &str) -> libc::c_int {
    let Ok(c) = CString::new(name) else { return 0 };
    // SAFETY: `c` is a NUL-terminated string alive for the call.
    unsafe { libc::if_nametoindex(c.as_ptr()) as libc::c_int }
}

/// A raw packet socket that receives nothing until bound (protocol 0), so no frame of another
/// interface is queued in between.
fn packet_socket(name: &str) -> Result<OwnedFd> {
    // SAFETY: plain socket creation; the result is checked before use.
    let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK, 0) };
    if raw < 0 {
        let e = errno();
        return Err(match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => Error::new(
                ErrorKind::Permission,
                format!(
                    "no permission to open a raw socket on `{name}`: live interfaces need root or the CAP_NET_RAW \
                     capability; run with sudo, or `setcap cap_net_raw,cap_net_admin+ep` on the emu binary"
                ),
            ),
            _ => Error::io(&format!("raw socket on `{name}`"), e),
        });
    }
    // SAFETY: `raw` is a fresh descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

fn open(name: &str, mode: IoMode, blocks: usize) -> Result<Iface> {
    let index = index_of(name);
    if index == 0 {
        return Err(Error::new(
            ErrorKind::NoInterface,
            format!("interface `{name}` does not exist; `ip link` lists the interfaces of this namespace"),
        ));
    }
    let mut fd = packet_socket(name)?;
    let mut ring = None;
    let mut fallback = None;
    if mode == IoMode::Ring {
        // The ring goes on before bind, while the socket receives nothing.
        match RxRing::new(fd.as_raw_fd(), blocks) {
            Ok(r) => ring = Some(r),
            Err(e) => {
                fallback = Some(format!("TPACKET_V3 ring on `{name}` unavailable ({e}); using plain sockets"));
                // A fresh socket, in case the failed attempt left it half set up.
                fd = packet_socket(name)?;
            }
        }
    }
    // SAFETY (all-zero sockaddr_ll): a valid value of a plain C struct.
    let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    addr.sll_family = libc::AF_PACKET as u16;
    addr.sll_protocol = ETH_P_ALL.to_be();
    addr.sll_ifindex = index;
    // SAFETY: `addr` is a valid sockaddr_ll of the size passed, alive for the call.
    let rc = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            &addr as *const libc::sockaddr_ll as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(Error::io(&format!("binding to `{name}`"), errno()));
    }
    let mreq = libc::packet_mreq {
        mr_ifindex: index,
        mr_type: libc::PACKET_MR_PROMISC as u16,
        mr_alen: 0,
        mr_address: [0; 8],
    };
    // SAFETY: `mreq` is a valid packet_mreq of the size passed, alive for the call.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_ADD_MEMBERSHIP,
            &mreq as *const libc::packet_mreq as *const libc::c_void,
            std::mem::size_of::<libc::packet_mreq>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(Error::io(&format!("promiscuous mode on `{name}`"), errno()));
    }
    let one: libc::c_int = 1;
    // Best effort: older kernels lack it, and both receive paths also skip outgoing frames.
    // SAFETY: `one` is a c_int of the size passed, alive for the call.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            PACKET_IGNORE_OUTGOING,
            &one as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
    Ok(Iface { name: name.to_string(), index, ring, tx: TxBatch::default(), fallback, fd })
}

/// Reads and so clears a socket's pending error (a ring socket is never read with `recv`, which
/// is what clears it on the plain path; left set, it would make every `poll` return at once).
fn clear_error(fd: &OwnedFd) {
    let mut err: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `err` and `len` are valid for writes of the sizes given, alive for the call.
    unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            &mut err as *mut libc::c_int as *mut libc::c_void,
            &mut len,
        );
    }
}

/// `PACKET_STATISTICS` of a packet socket: frames dropped since the last read (reading resets
/// the kernel's counters). The kernel fills `tpacket_stats` (TPACKET_V1/V2) or
/// `tpacket_stats_v3`; both start with `tp_packets`, `tp_drops`.
fn kernel_drops(fd: libc::c_int) -> u64 {
    let mut stats = [0u32; 3];
    let mut len = std::mem::size_of_val(&stats) as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `stats`, which is that long.
    let rc = unsafe {
        libc::getsockopt(fd, libc::SOL_PACKET, libc::PACKET_STATISTICS, stats.as_mut_ptr() as *mut libc::c_void, &mut len)
    };
    if rc == 0 {
        stats[1] as u64
    } else {
        0
    }
}

fn now() -> Timestamp {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

impl LiveDevice {
    /// Opens every interface on the plain path ([`IoMode::Plain`]); port `k` is `names[k]`.
    pub fn open(names: &[String]) -> Result<LiveDevice> {
        LiveDevice::open_with(names, IoMode::Plain)
    }

    /// Opens every interface in `mode`; port `k` is `names[k]`. In [`IoMode::Ring`], an
    /// interface whose ring cannot be set up uses the plain path instead (see
    /// [`LiveDevice::io_modes`]); errors that would stop the plain path too (no such
    /// interface, no permission) are errors.
    pub fn open_with(names: &[String], mode: IoMode) -> Result<LiveDevice> {
        if names.len() > emu::MAX_PORTS {
            return Err(Error::new(ErrorKind::BadPort, format!("{} interfaces given; at most {}", names.len(), emu::MAX_PORTS)));
        }
        let blocks = ring::blocks_per_ring(names.len());
        let ifaces = names.iter().map(|n| open(n, mode, blocks)).collect::<Result<Vec<_>>>()?;
        let plain = ifaces.iter().filter(|i| i.ring.is_none()).count();
        Ok(LiveDevice {
            ifaces,
            pending: VecDeque::new(),
            buf: vec![0; 65536 + 4],
            ended: None,
            plain,
            last_gone_check: Instant::now(),
            tx_errors: 0,
        })
    }

    /// Each interface, in port order, with the path it actually uses: [`IoMode::Ring`] only
    /// where the ring was asked for and could be set up.
    pub fn io_modes(&self) -> Vec<(String, IoMode)> {
        self.ifaces.iter().map(|i| (i.name.clone(), i.mode())).collect()
    }

    /// The interfaces where [`IoMode::Ring`] was asked for but the plain path is used, each with
    /// the reason (the error of the ring's setup).
    pub fn ring_fallbacks(&self) -> Vec<(String, String)> {
        self.ifaces.iter().filter_map(|i| i.fallback.clone().map(|why| (i.name.clone(), why))).collect()
    }

    /// Frames the kernel dropped on every interface since the last call, before the NF could
    /// read them (the socket's queue or ring was full: the NF fell behind the offered load).
    pub fn kernel_drops(&self) -> u64 {
        self.ifaces.iter().map(|i| kernel_drops(i.fd.as_raw_fd())).sum()
    }

    /// Why the run ended, once it has.
    pub fn end_reason(&self) -> Option<&EndReason> {
        self.ended.as_ref()
    }

    /// Hands every frame staged for sending (ring mode) to the kernel now, counting the ones it
    /// refuses in [`LiveDevice::tx_errors`]. The device does this by itself before it waits for
    /// input and when the run finishes.
    pub fn flush(&mut self) {
        for k in 0..self.ifaces.len() {
            self.flush_iface(k);
        }
    }

    fn flush_iface(&mut self, k: usize) {
        let iface = &mut self.ifaces[k];
        if iface.tx.is_empty() {
            return;
        }
        let out = iface.tx.flush(iface.fd.as_raw_fd());
        self.tx_errors += out.errors;
        if out.gone {
            self.ended = Some(EndReason::InterfaceGone(iface.name.clone()));
        }
    }

    fn gone(&self) -> Option<String> {
        self.ifaces.iter().find(|i| index_of(&i.name) != i.index).map(|i| i.name.clone())
    }

    /// Reads up to [`BURST`] frames from plain interface `k`. Returns false when it failed for good.
    fn drain(&mut self, k: usize) -> bool {
        for _ in 0..BURST {
            // SAFETY (all-zero sockaddr_ll): a valid value of a plain C struct.
            let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut from_len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            // SAFETY: `buf` is valid for writes of its length, `from`/`from_len` for the address;
            // all alive for the call.
            let n = unsafe {
                libc::recvfrom(
                    self.ifaces[k].fd.as_raw_fd(),
                    self.buf.as_mut_ptr() as *mut libc::c_void,
                    self.buf.len(),
                    libc::MSG_TRUNC,
                    &mut from as *mut libc::sockaddr_ll as *mut libc::sockaddr,
                    &mut from_len,
                )
            };
            if n < 0 {
                let e = errno();
                return match e.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => true,
                    _ => false,
                };
            }
            if from.sll_pkttype == libc::PACKET_OUTGOING {
                continue;
            }
            let wire_len = n as usize;
            let got = wire_len.min(self.buf.len());
            self.pending.push_back(Frame { port: k as Port, timestamp: now(), data: self.buf[..got].to_vec(), wire_len });
        }
        true
    }

    /// Reads up to [`BURST`] frames from the ring of interface `k`; returns how many it queued.
    fn drain_ring(&mut self, k: usize) -> usize {
        let pending = &mut self.pending;
        let Some(ring) = self.ifaces[k].ring.as_mut() else { return 0 };
        let mut queued = 0;
        ring.drain(BURST, |f| {
            if f.outgoing {
                return;
            }
            let timestamp = if f.timestamp != 0 { f.timestamp } else { now() };
            pending.push_back(Frame { port: k as Port, timestamp, data: f.data.to_vec(), wire_len: f.wire_len });
            queued += 1;
        });
        queued
    }

    /// One turn of every ring, without a system call; returns how many frames it queued.
    fn drain_rings(&mut self) -> usize {
        (0..self.ifaces.len()).map(|k| self.drain_ring(k)).sum()
    }

    /// Ends the input if an interface has gone away; checks now if `now` is set, else at most
    /// every [`GONE_CHECK`].
    fn check_gone(&mut self, now: bool) {
        if !now && self.last_gone_check.elapsed() < GONE_CHECK {
            return;
        }
        self.last_gone_check = Instant::now();
        if let Some(name) = self.gone() {
            self.ended = Some(EndReason::InterfaceGone(name));
        }
    }
}

/// A raw socket on one interface for frames of one EtherType: how `emu dbg` talks to a debug
/// unit in band. Frames the host itself sends are not received back.
pub struct EtherSocket {
    fd: OwnedFd,
    /// The interface's MAC: the source of frames sent.
    pub mac: [u8; 6],
}

impl EtherSocket {
    /// Opens `name` for frames of `ethertype`.
    pub fn open(name: &str, ethertype: u16) -> Result<EtherSocket> {
        let index = index_of(name);
        if index == 0 {
            return Err(Error::new(
                ErrorKind::NoInterface,
                format!("interface `{name}` does not exist; `ip link` lists the interfaces of this namespace"),
            ));
        }
        let fd = packet_socket(name)?;
        // SAFETY (all-zero sockaddr_ll): a valid value of a plain C struct.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = ethertype.to_be();
        addr.sll_ifindex = index;
        // SAFETY: `addr` is a valid sockaddr_ll of the size passed, alive for the call.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                &addr as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(Error::io(&format!("binding to `{name}`"), errno()));
        }
        let text = std::fs::read_to_string(format!("/sys/class/net/{name}/address")).unwrap_or_default();
        let mut mac = [0u8; 6];
        for (m, part) in mac.iter_mut().zip(text.trim().split(':')) {
            *m = u8::from_str_radix(part, 16).unwrap_or(0);
        }
        Ok(EtherSocket { fd, mac })
    }

    /// Sends one whole frame.
    pub fn send(&self, frame: &[u8]) -> Result<()> {
        // SAFETY: `frame` is valid for reads of its length, alive for the call.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr() as *const libc::c_void, frame.len(), 0) };
        if n < 0 {
            return Err(Error::io("sending a frame", errno()));
        }
        Ok(())
    }

    /// The next frame received, waiting at most `timeout`.
    pub fn receive(&self, timeout: Duration) -> Result<Option<Vec<u8>>> {
        let deadline = Instant::now() + timeout;
        let mut buf = vec![0u8; 65536];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let mut p = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd, alive for the call.
            let rc = unsafe { libc::poll(&mut p, 1, left.as_millis().min(i32::MAX as u128) as libc::c_int) };
            if rc < 0 && errno().raw_os_error() != Some(libc::EINTR) {
                return Err(Error::io("poll", errno()));
            }
            if rc > 0 {
                // SAFETY (all-zero sockaddr_ll): a valid value of a plain C struct.
                let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
                let mut len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
                // SAFETY: `buf` and `from` are valid for writes of the sizes passed.
                let n = unsafe {
                    libc::recvfrom(
                        self.fd.as_raw_fd(),
                        buf.as_mut_ptr() as *mut libc::c_void,
                        buf.len(),
                        0,
                        &mut from as *mut libc::sockaddr_ll as *mut libc::sockaddr,
                        &mut len,
                    )
                };
                if n > 0 && from.sll_pkttype != libc::PACKET_OUTGOING as u8 {
                    return Ok(Some(buf[..n as usize].to_vec()));
                }
            }
            if left.is_zero() {
                return Ok(None);
            }
        }
    }
}

impl Device for LiveDevice {
    fn receive(&mut self) -> Result<Option<Frame>> {
        match self.receive_or_wake(&[])? {
            Arrival::Frame(f) => Ok(Some(f)),
            Arrival::Woken | Arrival::End => Ok(None),
        }
    }

    fn receive_or_wake(&mut self, wake: &[BorrowedFd<'_>]) -> Result<Arrival> {
        loop {
            if let Some(f) = self.pending.pop_front() {
                return Ok(Arrival::Frame(f));
            }
            // Everything received so far has been processed: send what it produced before
            // waiting for more (or ending).
            self.flush();
            if self.ended.is_some() {
                return Ok(Arrival::End);
            }
            if STOP.load(Ordering::SeqCst) {
                self.ended = Some(EndReason::Signal);
                return Ok(Arrival::End);
            }
            let from_rings = self.drain_rings();
            if from_rings > 0 && self.plain == 0 {
                self.check_gone(false);
                continue;
            }
            // Wait only when no ring had a frame; plain interfaces still get their turn.
            let timeout = if from_rings > 0 { 0 } else { POLL_MS };
            let mut fds: Vec<libc::pollfd> = self
                .ifaces
                .iter()
                .map(|i| i.fd.as_raw_fd())
                .chain(wake.iter().map(|w| w.as_raw_fd()))
                .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
                .collect();
            // SAFETY: `fds` is a valid array of `fds.len()` pollfds, alive for the call.
            let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
            if rc < 0 {
                let e = errno();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(Error::io("poll", e));
            }
            // A quiet poll or a socket error (an interface going down or away sets one) makes
            // the check for vanished interfaces immediate.
            let mut check_now = rc == 0 && timeout > 0;
            let woken = fds[self.ifaces.len()..].iter().any(|p| p.revents != 0);
            for (k, p) in fds[..self.ifaces.len()].iter().enumerate() {
                let error = p.revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0;
                check_now |= error;
                if self.ifaces[k].ring.is_some() {
                    if error {
                        clear_error(&self.ifaces[k].fd);
                    }
                    if p.revents & libc::POLLIN != 0 {
                        self.drain_ring(k);
                    }
                } else if p.revents & libc::POLLIN != 0 || error {
                    // A socket error without the interface going away (e.g. it went down): keep
                    // polling, the error is cleared by reading it.
                    let _ = self.drain(k);
                }
            }
            self.check_gone(check_now);
            if woken && self.pending.is_empty() {
                return Ok(Arrival::Woken);
            }
        }
    }

    fn transmit(&mut self, port: Port, data: &[u8], _timestamp: Timestamp) -> Result<()> {
        let k = port as usize;
        let Some(iface) = self.ifaces.get_mut(k) else {
            return Err(Error::new(ErrorKind::BadPort, format!("no interface for port {port}")));
        };
        if iface.ring.is_some() {
            if iface.tx.push(data) {
                self.flush_iface(k);
            }
            return Ok(());
        }
        // SAFETY: `data` is valid for reads of its length, alive for the call.
        let n = unsafe { libc::send(iface.fd.as_raw_fd(), data.as_ptr() as *const libc::c_void, data.len(), 0) };
        if n < 0 {
            let e = errno();
            match e.raw_os_error() {
                Some(libc::ENXIO) | Some(libc::ENODEV) => {
                    self.ended = Some(EndReason::InterfaceGone(iface.name.clone()));
                }
                _ => self.tx_errors += 1,
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        self.flush();
        Ok(())
    }
}

impl Drop for LiveDevice {
    /// Sends what is still staged (best effort: a device dropped without `finish`).
    fn drop(&mut self) {
        self.flush();
    }
}

/// A one-shot monotonic timer whose descriptor is readable once it has run out (a
/// `timerfd`): the runner's wait includes it, so a break's timeout ends the break even when
/// no packet and no client comes.
pub struct Timer {
    fd: OwnedFd,
}

impl Timer {
    /// A timer that has not been set.
    pub fn new() -> std::io::Result<Timer> {
        // SAFETY: no pointers; the result is checked.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is a descriptor just opened and owned by nothing else.
        Ok(Timer { fd: unsafe { OwnedFd::from_raw_fd(fd) } })
    }

    /// Runs out at `at` (at once if it has passed), or never (`None`).
    pub fn set(&self, at: Option<Instant>) {
        let left = at.map(|t| t.saturating_duration_since(Instant::now()).max(Duration::from_millis(1)));
        let value = left.map_or(libc::timespec { tv_sec: 0, tv_nsec: 0 }, |d| libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        });
        let spec = libc::itimerspec { it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 }, it_value: value };
        // SAFETY: `spec` is a valid itimerspec for the call; the old value is not asked for.
        unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
    }

    /// Takes the expiry, so the descriptor is no longer readable.
    pub fn clear(&self) {
        let mut n = 0u64;
        // SAFETY: reads at most 8 bytes into `n`; a timer that has not run out gives EAGAIN.
        unsafe { libc::read(self.fd.as_raw_fd(), &mut n as *mut u64 as *mut libc::c_void, 8) };
    }
}

impl AsFd for Timer {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_mode_parses_and_prints() {
        assert_eq!("plain".parse::<IoMode>(), Ok(IoMode::Plain));
        assert_eq!("Ring".parse::<IoMode>(), Ok(IoMode::Ring));
        assert_eq!(IoMode::Ring.to_string(), "ring");
        assert_eq!(IoMode::default(), IoMode::Plain);
        let e = "mmap".parse::<IoMode>().unwrap_err().to_string();
        assert!(e.contains("`mmap`") && e.contains("`plain`") && e.contains("`ring`"), "{e}");
        for m in IoMode::ALL {
            assert_eq!(m.name().parse::<IoMode>(), Ok(m));
        }
    }

    /// In a private network namespace (only its own `lo`; no other interface is touched): a ring
    /// that cannot be set up (here: no blocks) leaves the interface on the plain path, with the
    /// reason recorded; a normal one is used.
    #[test]
    fn ring_falls_back_to_plain_when_it_cannot_be_set_up() {
        std::thread::spawn(|| {
            // SAFETY: moves only this thread, which ends with the test, into a new namespace.
            let rc = unsafe { libc::unshare(libc::CLONE_NEWNET) };
            assert_eq!(rc, 0, "this test needs root (a private network namespace): {}", errno());
            let iface = open("lo", IoMode::Ring, 0).expect("opening lo with a ring of no blocks");
            assert_eq!(iface.mode(), IoMode::Plain);
            let why = iface.fallback.clone().expect("a recorded fallback");
            assert!(why.contains("`lo`") && why.contains("TPACKET_V3") && why.contains("plain"), "{why}");

            let lo = ["lo".to_string()];
            let device = LiveDevice::open_with(&lo, IoMode::Ring).unwrap();
            assert_eq!(device.io_modes(), vec![("lo".to_string(), IoMode::Ring)]);
            assert!(device.ring_fallbacks().is_empty());
            let device = LiveDevice::open(&lo).unwrap();
            assert_eq!(device.io_modes(), vec![("lo".to_string(), IoMode::Plain)]);
            assert!(device.ring_fallbacks().is_empty());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn missing_interface_is_an_error_in_both_modes() {
        for mode in IoMode::ALL {
            let Err(e) = LiveDevice::open_with(&["emu-no-such-if".to_string()], mode) else { panic!("opened a missing interface") };
            assert_eq!(e.kind, ErrorKind::NoInterface, "{e}");
        }
    }
}

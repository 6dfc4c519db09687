//! Live Linux interfaces through raw AF_PACKET sockets, one port per interface.
//!
//! Each interface gets its own socket, bound to it, in promiscuous mode, ignoring the frames
//! the host itself sends out of it. One thread polls all of them. When an interface disappears
//! (Mininet deletes its links before anything else) the device reports the end of input, so the
//! run ends cleanly with its summary instead of spinning or crashing.
#![allow(unsafe_code)] // FFI to the socket API is the point of this module.

use crate::device::{Device, Frame};
use crate::error::{Error, ErrorKind, Result};
use emu::{Port, Timestamp};
use std::collections::VecDeque;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

const ETH_P_ALL: u16 = 0x0003;
/// `PACKET_IGNORE_OUTGOING` (Linux 4.20): do not deliver frames this host sends.
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const POLL_MS: libc::c_int = 100;
/// Frames read from one interface before the others get a turn.
const BURST: usize = 32;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Makes SIGINT and SIGTERM end the run cleanly (the device reports the end of input).
pub fn stop_on_signals() {
    unsafe {
        libc::signal(libc::SIGINT, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
    }
}

struct Iface {
    name: String,
    index: libc::c_int,
    fd: OwnedFd,
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
    /// Frames the kernel refused to send (too big for the MTU, queue full).
    pub tx_errors: u64,
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn index_of(name: &str) -> libc::c_int {
    let Ok(c) = CString::new(name) else { return 0 };
    unsafe { libc::if_nametoindex(c.as_ptr()) as libc::c_int }
}

fn open(name: &str) -> Result<Iface> {
    let index = index_of(name);
    if index == 0 {
        return Err(Error::new(
            ErrorKind::NoInterface,
            format!("interface `{name}` does not exist; `ip link` lists the interfaces of this namespace"),
        ));
    }
    // Protocol 0 until bound, so no frame of another interface is queued in between.
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
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    addr.sll_family = libc::AF_PACKET as u16;
    addr.sll_protocol = ETH_P_ALL.to_be();
    addr.sll_ifindex = index;
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
    // Best effort: older kernels lack it, and recv below also skips outgoing frames.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            PACKET_IGNORE_OUTGOING,
            &one as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
    Ok(Iface { name: name.to_string(), index, fd })
}

fn now() -> Timestamp {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

impl LiveDevice {
    /// Opens every interface; port `k` is `names[k]`.
    pub fn open(names: &[String]) -> Result<LiveDevice> {
        if names.len() > emu::MAX_PORTS {
            return Err(Error::new(ErrorKind::BadPort, format!("{} interfaces given; at most {}", names.len(), emu::MAX_PORTS)));
        }
        let ifaces = names.iter().map(|n| open(n)).collect::<Result<Vec<_>>>()?;
        Ok(LiveDevice { ifaces, pending: VecDeque::new(), buf: vec![0; 65536 + 4], ended: None, tx_errors: 0 })
    }

    /// Why the run ended, once it has.
    pub fn end_reason(&self) -> Option<&EndReason> {
        self.ended.as_ref()
    }

    fn gone(&self) -> Option<String> {
        self.ifaces.iter().find(|i| index_of(&i.name) != i.index).map(|i| i.name.clone())
    }

    /// Reads up to [`BURST`] frames from interface `k`. Returns false when it failed for good.
    fn drain(&mut self, k: usize) -> bool {
        for _ in 0..BURST {
            let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut from_len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
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
            if from.sll_pkttype == libc::PACKET_OUTGOING as u8 {
                continue;
            }
            let wire_len = n as usize;
            let got = wire_len.min(self.buf.len());
            self.pending.push_back(Frame { port: k as Port, timestamp: now(), data: self.buf[..got].to_vec(), wire_len });
        }
        true
    }
}

impl Device for LiveDevice {
    fn receive(&mut self) -> Result<Option<Frame>> {
        loop {
            if let Some(f) = self.pending.pop_front() {
                return Ok(Some(f));
            }
            if self.ended.is_some() {
                return Ok(None);
            }
            if STOP.load(Ordering::SeqCst) {
                self.ended = Some(EndReason::Signal);
                return Ok(None);
            }
            let mut fds: Vec<libc::pollfd> = self
                .ifaces
                .iter()
                .map(|i| libc::pollfd { fd: i.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 })
                .collect();
            let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, POLL_MS) };
            if rc < 0 {
                let e = errno();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(Error::io("poll", e));
            }
            let mut failed = None;
            for (k, p) in fds.iter().enumerate() {
                if p.revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 && !self.drain(k) {
                    failed = Some(k);
                }
            }
            if let Some(name) = self.gone() {
                self.ended = Some(EndReason::InterfaceGone(name));
            } else if let Some(k) = failed {
                // A socket error without the interface going away (e.g. it went down): keep
                // polling, the error is cleared by reading it.
                let _ = k;
            }
        }
    }

    fn transmit(&mut self, port: Port, data: &[u8], _timestamp: Timestamp) -> Result<()> {
        let Some(iface) = self.ifaces.get(port as usize) else {
            return Err(Error::new(ErrorKind::BadPort, format!("no interface for port {port}")));
        };
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
}

//! The debug channel on a local Unix socket (docs/debug-protocol.md): a stream socket carrying
//! each message after its length (u16, big-endian), one client at a time. The CPU target's runs
//! and `emu sim`'s Verilator model serve it; `emu dbg PATH` is the client.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The listening socket and its client. The socket file is removed on drop.
pub struct Server {
    listener: UnixListener,
    path: PathBuf,
    client: Option<UnixStream>,
    inbuf: Vec<u8>,
}

impl Server {
    /// Listens at `path`. A socket file already there is replaced only if nobody listens on
    /// it.
    pub fn listen(path: &Path) -> std::io::Result<Server> {
        if path.exists() {
            if UnixStream::connect(path).is_ok() {
                return Err(std::io::Error::new(
                    ErrorKind::AddrInUse,
                    format!("{}: another run is listening there; give another --debug-socket", path.display()),
                ));
            }
            std::fs::remove_file(path)?;
        }
        let listener = UnixListener::bind(path)?;
        listener.set_nonblocking(true)?;
        Ok(Server { listener, path: path.to_path_buf(), client: None, inbuf: Vec::new() })
    }

    /// Whether a client is connected.
    pub fn connected(&self) -> bool {
        self.client.is_some()
    }

    /// The descriptors whose readiness means there is something to [`receive`](Server::receive),
    /// and `extra` (the caller's own, e.g. a timer), without allocating.
    pub fn with_fds<R>(&self, extra: BorrowedFd<'_>, f: impl FnOnce(&[BorrowedFd<'_>]) -> R) -> R {
        match &self.client {
            None => f(&[self.listener.as_fd(), extra]),
            Some(c) => f(&[self.listener.as_fd(), c.as_fd(), extra]),
        }
    }

    /// Takes a new client (it replaces the old one) and the whole messages that arrived,
    /// without waiting.
    pub fn receive(&mut self) -> Vec<Vec<u8>> {
        if let Ok((stream, _)) = self.listener.accept() {
            if stream.set_nonblocking(true).is_ok() {
                self.client = Some(stream);
                self.inbuf.clear();
            }
        }
        let Some(client) = &mut self.client else { return Vec::new() };
        let mut buf = [0u8; 4096];
        loop {
            match client.read(&mut buf) {
                Ok(0) => {
                    self.client = None;
                    break;
                }
                Ok(n) => self.inbuf.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.client = None;
                    break;
                }
            }
        }
        let mut out = Vec::new();
        while self.inbuf.len() >= 2 {
            let len = u16::from_be_bytes([self.inbuf[0], self.inbuf[1]]) as usize;
            if self.inbuf.len() < 2 + len {
                break;
            }
            out.push(self.inbuf.drain(..2 + len).skip(2).collect());
        }
        out
    }

    /// Sends `msg` to the client, if one is connected; a client that stopped reading is
    /// dropped.
    pub fn send(&mut self, msg: &[u8]) {
        if let Some(c) = &mut self.client {
            let mut framed = (msg.len() as u16).to_be_bytes().to_vec();
            framed.extend_from_slice(msg);
            let _ = c.set_nonblocking(false);
            let _ = c.set_write_timeout(Some(Duration::from_millis(500)));
            if c.write_all(&framed).is_err() {
                self.client = None;
            } else {
                let _ = c.set_nonblocking(true);
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

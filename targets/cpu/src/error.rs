//! Errors of the CPU target: each says what went wrong and what to do about it.

use core::fmt;

/// What kind of failure, for callers that react differently (exit codes, tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A file does not exist or cannot be opened.
    NotFound,
    /// A file is neither pcap nor pcapng.
    NotPcap,
    /// A capture's link type is not Ethernet.
    LinkType,
    /// A capture ends in the middle of a record.
    Truncated,
    /// Raw sockets need privileges the process does not have.
    Permission,
    /// A network interface does not exist.
    NoInterface,
    /// A port number outside the NF's ports.
    BadPort,
    /// Any other I/O failure.
    Io,
}

/// An error of the CPU target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The whole message, naming the file or interface and what to do.
    pub message: String,
}

impl Error {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into() }
    }

    /// An I/O error about `what` (a file or interface name).
    pub fn io(what: &str, e: std::io::Error) -> Error {
        let kind = match e.kind() {
            std::io::ErrorKind::NotFound => ErrorKind::NotFound,
            std::io::ErrorKind::PermissionDenied => ErrorKind::Permission,
            _ => ErrorKind::Io,
        };
        Error::new(kind, format!("{what}: {e}"))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Result of the CPU target.
pub type Result<T> = core::result::Result<T, Error>;

//! The one small interface every way of moving frames implements (after smoltcp's `phy`):
//! pcap files, memory, live interfaces — and, later, Mininet nodes and simulators.

use crate::error::Result;
use emu::{Port, Timestamp};

/// A frame that arrived on a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The port it arrived on.
    pub port: Port,
    /// Arrival time, nanoseconds since the Unix epoch.
    pub timestamp: Timestamp,
    /// Its bytes as captured.
    pub data: Vec<u8>,
    /// Its length on the wire; more than `data.len()` when a capture cut it short.
    pub wire_len: usize,
}

impl Frame {
    /// A complete frame (captured whole).
    pub fn new(port: Port, timestamp: Timestamp, data: Vec<u8>) -> Frame {
        let wire_len = data.len();
        Frame { port, timestamp, data, wire_len }
    }
}

/// What [`Device::receive_or_wake`] returns.
#[derive(Debug)]
pub enum Arrival {
    /// A frame.
    Frame(Frame),
    /// One of the descriptors to wake on became readable before a frame arrived.
    Woken,
    /// The input has ended.
    End,
}

/// A source and sink of frames for all the ports of an NF.
pub trait Device {
    /// The next frame, waiting for one if the device is live; `None` when the input has ended
    /// (end of files, an interface that went away, a stop signal).
    fn receive(&mut self) -> Result<Option<Frame>>;

    /// As [`receive`](Device::receive), but a live device also stops waiting when one of
    /// `wake` becomes readable (a debugger's socket), so the runner serves it while no frame
    /// arrives. Devices that never wait (files, memory) just receive.
    fn receive_or_wake(&mut self, wake: &[std::os::fd::BorrowedFd<'_>]) -> Result<Arrival> {
        let _ = wake;
        Ok(match self.receive()? {
            Some(f) => Arrival::Frame(f),
            None => Arrival::End,
        })
    }

    /// Sends `data` out of `port`. `timestamp` is the time of the frame that caused it.
    fn transmit(&mut self, port: Port, data: &[u8], timestamp: Timestamp) -> Result<()>;

    /// Writes out anything buffered; called once when the run ends.
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

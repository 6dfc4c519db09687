//! A device wrapper that shows how far a long run has got, on a terminal only.

use emu::{Port, Timestamp};
use emu_cpu::{Device, Frame, Result};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

pub(crate) struct Progress<D> {
    inner: D,
    frames: u64,
    last: Instant,
    shown: bool,
    enabled: bool,
}

impl<D: Device> Progress<D> {
    pub(crate) fn new(inner: D) -> Progress<D> {
        Progress { inner, frames: 0, last: Instant::now(), shown: false, enabled: std::io::stderr().is_terminal() }
    }

    pub(crate) fn into_inner(self) -> D {
        self.inner
    }
}

impl<D: Device> Device for Progress<D> {
    fn receive(&mut self) -> Result<Option<Frame>> {
        let f = self.inner.receive()?;
        self.frames += 1;
        if self.enabled && self.frames % 4096 == 0 && self.last.elapsed() > Duration::from_secs(1) {
            self.last = Instant::now();
            self.shown = true;
            eprint!("\r{} frames…", self.frames);
            let _ = std::io::stderr().flush();
        }
        Ok(f)
    }

    fn transmit(&mut self, port: Port, data: &[u8], timestamp: Timestamp) -> Result<()> {
        self.inner.transmit(port, data, timestamp)
    }

    fn finish(&mut self) -> Result<()> {
        if self.shown {
            eprint!("\r\x1b[K");
        }
        self.inner.finish()
    }
}

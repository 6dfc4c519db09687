//! Frames in memory: the batch API the benchmarks and the simulator use.

use crate::device::{Device, Frame};
use crate::error::Result;
use crate::runner::{DropRecord, Runner};
use crate::stats::Stats;
use emu::{NetworkFunction, Port, Timestamp};
use std::collections::VecDeque;

/// A frame that left a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The port it left by.
    pub port: Port,
    /// Time of the frame that caused it.
    pub timestamp: Timestamp,
    /// Its bytes.
    pub data: Vec<u8>,
}

/// A device whose input is a list of frames and whose output is collected in order.
#[derive(Debug, Default)]
pub struct MemoryDevice {
    input: VecDeque<Frame>,
    /// Frames sent, in the order they were sent.
    pub output: Vec<Output>,
}

impl MemoryDevice {
    /// A device that will deliver `frames` in this order.
    pub fn new(frames: impl IntoIterator<Item = Frame>) -> MemoryDevice {
        MemoryDevice { input: frames.into_iter().collect(), output: Vec::new() }
    }
}

impl Device for MemoryDevice {
    fn receive(&mut self) -> Result<Option<Frame>> {
        Ok(self.input.pop_front())
    }

    fn transmit(&mut self, port: Port, data: &[u8], timestamp: Timestamp) -> Result<()> {
        self.output.push(Output { port, timestamp, data: data.to_vec() });
        Ok(())
    }
}

/// What a batch run produced.
#[derive(Debug, Clone)]
pub struct BatchResult {
    /// Frames sent, in order (a frame sent to several ports appears once per port, ports in
    /// increasing order).
    pub outputs: Vec<Output>,
    /// Frames dropped, in order.
    pub drops: Vec<DropRecord>,
    /// Counters.
    pub stats: Stats,
}

impl BatchResult {
    /// The frames that left `port`, in order.
    pub fn on_port(&self, port: Port) -> Vec<&[u8]> {
        self.outputs.iter().filter(|o| o.port == port).map(|o| &o.data[..]).collect()
    }
}

/// Runs `nf` over `frames` (in the order given) on `ports` ports with a `window`-byte header
/// window, and returns everything it did.
pub fn run_batch<N: ?Sized + NetworkFunction>(
    nf: Box<N>,
    ports: usize,
    window: usize,
    frames: impl IntoIterator<Item = Frame>,
) -> Result<BatchResult> {
    let mut runner = Runner::new(nf, ports, window);
    let mut device = MemoryDevice::new(frames);
    let mut drops = Vec::new();
    runner.run(&mut device, &mut drops)?;
    Ok(BatchResult { outputs: device.output, drops, stats: runner.stats().clone() })
}

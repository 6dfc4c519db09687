//! Counters of a run: per port and per drop reason.

use emu::DropReason;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// Traffic counters of one port.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PortStats {
    /// Frames that arrived.
    pub rx_packets: u64,
    /// Bytes that arrived.
    pub rx_bytes: u64,
    /// Frames sent.
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Frames that arrived here and were dropped.
    pub dropped: u64,
}

/// Counters of a whole run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Per port, index = port number.
    pub ports: Vec<PortStats>,
    /// Drops per reason name.
    pub drops: BTreeMap<&'static str, u64>,
}

impl Stats {
    /// Zeroed counters for `ports` ports.
    pub fn new(ports: usize) -> Stats {
        Stats { ports: vec![PortStats::default(); ports], drops: BTreeMap::new() }
    }

    pub(crate) fn count_drop(&mut self, port: usize, reason: DropReason) {
        if let Some(p) = self.ports.get_mut(port) {
            p.dropped += 1;
        }
        *self.drops.entry(reason.name()).or_default() += 1;
    }

    /// Frames that arrived on any port.
    pub fn rx_packets(&self) -> u64 {
        self.ports.iter().map(|p| p.rx_packets).sum()
    }

    /// Frames dropped, all reasons.
    pub fn dropped(&self) -> u64 {
        self.drops.values().sum()
    }
}

/// A table of ports and a line per drop reason, for the terminal.
impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{:>4}  {:>10} {:>12}  {:>10} {:>12}  {:>8}", "port", "rx pkts", "rx bytes", "tx pkts", "tx bytes", "dropped")?;
        for (i, p) in self.ports.iter().enumerate() {
            writeln!(
                f,
                "{:>4}  {:>10} {:>12}  {:>10} {:>12}  {:>8}",
                i, p.rx_packets, p.rx_bytes, p.tx_packets, p.tx_bytes, p.dropped
            )?;
        }
        if self.drops.is_empty() {
            writeln!(f, "drops: none")
        } else {
            let list: Vec<String> = self.drops.iter().map(|(r, n)| format!("{r} {n}")).collect();
            writeln!(f, "drops: {}", list.join(", "))
        }
    }
}

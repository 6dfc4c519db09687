//! Counters of a run: per port and per drop reason.

use emu::DropReason;
use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};
use std::fmt;

/// Traffic counters of one port.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
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

/// Counters of a whole run. As JSON: `{"ports": [..], "drops": {"<reason>": n, ..}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stats {
    /// Per port, index = port number; only the first `n` are in use. A fixed array, so the
    /// per-packet updates index without a bounds check on a port taken from a `PortMask`.
    ports: [PortStats; emu::MAX_PORTS],
    n: usize,
    /// Drops per reason code (a counter per code, so counting a drop is one add).
    by_reason: [u64; 256],
}

impl Default for Stats {
    fn default() -> Stats {
        Stats::new(0)
    }
}

impl Stats {
    /// Zeroed counters for `ports` ports.
    pub fn new(ports: usize) -> Stats {
        Stats { ports: [PortStats::default(); emu::MAX_PORTS], n: ports.min(emu::MAX_PORTS), by_reason: [0; 256] }
    }

    /// Counters per port, index = port number.
    pub fn ports(&self) -> &[PortStats] {
        &self.ports[..self.n]
    }

    /// Counts a frame of `len` bytes in on `port` (ignored past the last port).
    #[inline]
    pub(crate) fn count_rx(&mut self, port: usize, len: usize) {
        if port < self.n {
            let p = &mut self.ports[port % emu::MAX_PORTS];
            p.rx_packets += 1;
            p.rx_bytes += len as u64;
        }
    }

    /// Counts a frame of `len` bytes out of every port of `mask`.
    #[inline]
    pub(crate) fn count_tx(&mut self, mask: emu::PortMask, len: usize) {
        for port in mask.ports() {
            let p = &mut self.ports[port as usize % emu::MAX_PORTS];
            p.tx_packets += 1;
            p.tx_bytes += len as u64;
        }
    }

    #[inline]
    pub(crate) fn count_drop(&mut self, port: usize, reason: DropReason) {
        if port < self.n {
            self.ports[port % emu::MAX_PORTS].dropped += 1;
        }
        self.by_reason[reason as u8 as usize] += 1;
    }

    /// Frames dropped for `reason`.
    pub fn drops_for(&self, reason: DropReason) -> u64 {
        self.by_reason[reason as u8 as usize]
    }

    /// The reasons that dropped frames, with their counts, in code order.
    pub fn drops(&self) -> impl Iterator<Item = (DropReason, u64)> + '_ {
        DropReason::ALL.iter().map(|&r| (r, self.drops_for(r))).filter(|&(_, n)| n > 0)
    }

    /// Frames that arrived on any port.
    pub fn rx_packets(&self) -> u64 {
        self.ports().iter().map(|p| p.rx_packets).sum()
    }

    /// Frames dropped, all reasons.
    pub fn dropped(&self) -> u64 {
        self.by_reason.iter().sum()
    }
}

struct DropMap<'a>(&'a Stats);

impl Serialize for DropMap<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for (r, n) in self.0.drops() {
            m.serialize_entry(r.name(), &n)?;
        }
        m.end()
    }
}

impl Serialize for Stats {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Stats", 2)?;
        st.serialize_field("ports", self.ports())?;
        st.serialize_field("drops", &DropMap(self))?;
        st.end()
    }
}

/// A table of ports and a line per drop reason, for the terminal.
impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{:>4}  {:>10} {:>12}  {:>10} {:>12}  {:>8}", "port", "rx pkts", "rx bytes", "tx pkts", "tx bytes", "dropped")?;
        for (i, p) in self.ports().iter().enumerate() {
            writeln!(
                f,
                "{:>4}  {:>10} {:>12}  {:>10} {:>12}  {:>8}",
                i, p.rx_packets, p.rx_bytes, p.tx_packets, p.tx_bytes, p.dropped
            )?;
        }
        let list: Vec<String> = self.drops().map(|(r, n)| format!("{r} {n}")).collect();
        if list.is_empty() {
            writeln!(f, "drops: none")
        } else {
            writeln!(f, "drops: {}", list.join(", "))
        }
    }
}

//! The network-function trait and the descriptor a target uses to find, configure and build an
//! NF by name.

use crate::action::Action;
use crate::bits::Bits;
use crate::packet::{Meta, Packet};
use crate::state::{Cam, Tcam};
use core::fmt;
use std::collections::BTreeMap;

/// A network function: state plus a per-packet function.
///
/// The CPU target's run of `process` **is** the semantics every other target reproduces.
pub trait NetworkFunction {
    /// Decides what happens to `pkt`, which came in as `meta` describes. The NF may edit the
    /// packet's window, shorten it, or rewrite it into a reply.
    fn process(&mut self, pkt: &mut Packet<'_>, meta: &Meta) -> Action;

    /// What the runner calls: the whole frame, with `window` bytes of it visible to
    /// [`process`](NetworkFunction::process) (this default). Simulator tiers that run the NF
    /// as hardware override it, since the hardware receives the whole frame off the wire;
    /// NF authors write `process`.
    #[inline]
    fn process_frame(&mut self, frame: &mut Vec<u8>, window: usize, meta: &Meta) -> Action {
        self.process(&mut Packet::new(frame, window), meta)
    }

    /// The NF's own account of a run, printed by `emu run` when the run ends (after the
    /// runner's per-port totals) and kept in `summary.json` as `"nf_summary"`: counters,
    /// table contents, histograms, one item per line. Empty (the default) prints nothing.
    fn summary(&self) -> String {
        String::new()
    }

    /// The state struct's fields by name, in declaration order, as a debugger reads and
    /// writes them. `#[emu::nf]` writes this method into the NF's `impl NetworkFunction`;
    /// an NF written without the attribute has no state to show (the default).
    fn elements(&mut self) -> Vec<(&'static str, &mut dyn crate::state::Element)> {
        Vec::new()
    }

    /// The module's `emu::probe!`s and `emu::count!`s ([`crate::probe`]), which a debugger
    /// shows after [`elements`](NetworkFunction::elements). `#[emu::nf]` writes this method
    /// when the module has probes; `None` (the default) when it has none.
    fn probes(&self) -> Option<&'static std::thread::LocalKey<crate::probe::Probes>> {
        None
    }
}

/// A run-time option of an NF, given on the command line as `--NAME VALUE`.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// Option name, e.g. `"ip"`.
    pub name: &'static str,
    /// What the option sets, one line.
    pub help: &'static str,
    /// The value used when the option is not given; `None` makes it required.
    pub default: Option<&'static str>,
}

/// Values of an NF's [`Param`]s, as text, checked and converted by the NF.
#[derive(Debug, Clone, Default)]
pub struct Config {
    values: BTreeMap<String, String>,
}

/// A configuration error: what was wrong and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// An empty configuration (every parameter at its default).
    pub fn new() -> Config {
        Config::default()
    }

    /// Sets parameter `name` to `value`.
    pub fn set(&mut self, name: &str, value: &str) -> &mut Config {
        self.values.insert(name.to_string(), value.to_string());
        self
    }

    /// The values set, by parameter name.
    pub fn values(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The value of `param`: the one set, else its default.
    pub fn raw(&self, param: &Param) -> Result<&str, ConfigError> {
        match (self.values.get(param.name), param.default) {
            (Some(v), _) => Ok(v),
            (None, Some(d)) => Ok(d),
            (None, None) => Err(ConfigError(format!("--{} is required: {}", param.name, param.help))),
        }
    }

    /// The value of `param` parsed as `T`; a parse failure names the option and the value.
    pub fn get<T>(&self, param: &Param) -> Result<T, ConfigError>
    where
        T: core::str::FromStr,
        T::Err: fmt::Display,
    {
        let raw = self.raw(param)?;
        raw.parse().map_err(|e| ConfigError(format!("--{} {raw}: {e}", param.name)))
    }
}

/// Everything a target needs to know to run an NF it finds by name.
#[derive(Clone, Copy)]
pub struct NfDescriptor {
    /// The NF's name on the command line, e.g. `"learning-switch"`.
    pub name: &'static str,
    /// One line saying what it does.
    pub summary: &'static str,
    /// Number of ports it is built for (the CPU target may be told to use another number).
    pub ports: usize,
    /// Size of the header window in bytes.
    pub window: usize,
    /// Its run-time options.
    pub params: &'static [Param],
    /// Builds an instance from a configuration.
    pub build: fn(&Config) -> Result<Box<dyn NetworkFunction + Send>, ConfigError>,
    /// The NF's source as the HLS compiler reads it (`HLS_SOURCE` of `#[emu::nf]`); `None` for
    /// an NF that only runs on the CPU.
    pub hls_source: Option<&'static str>,
    /// The values of the NF's plain-value state fields (its configuration registers, such as
    /// an address to answer for) under a configuration, by field name: what the IR and
    /// hardware tiers load before the first packet.
    pub registers: fn(&Config) -> Result<Vec<(&'static str, u64)>, ConfigError>,
    /// The entries the NF's tables hold before the first packet under a configuration (the
    /// rules of a firewall, a list of open ports): what the IR and hardware tiers load, as
    /// the CPU constructor loads them into its own elements. [`tcam_entries`] and
    /// [`cam_entries`] turn a built `Tcam` or `Cam` into this form, so the constructor stays
    /// the one place that fills a table.
    pub tables: fn(&Config) -> Result<Vec<TableEntry>, ConfigError>,
}

/// One entry of a table state element before the first packet, by the element's field name.
/// Values are big-endian bytes of the element's key and value types ([`Bits::write_be`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableEntry {
    /// A rule in `Tcam` slot `slot`: as [`Tcam::set`](crate::Tcam::set)`(slot, value, mask, result)`.
    Tcam {
        /// The `Tcam` field of the state struct.
        table: &'static str,
        /// The slot (its priority: lower first).
        slot: usize,
        /// The value compared under the mask.
        value: Vec<u8>,
        /// Bits of the key that must equal `value`'s.
        mask: Vec<u8>,
        /// What a lookup that hits the rule returns.
        result: Vec<u8>,
    },
    /// An entry in `Cam` slot `slot`. A table's entries fill slots 0, 1, 2, … in order, as
    /// [`Cam::insert`](crate::Cam::insert)s into an empty `Cam` place them (the victim pointer
    /// stays at 0): the other tiers load them so.
    Cam {
        /// The `Cam` field of the state struct.
        table: &'static str,
        /// The slot.
        slot: usize,
        /// The key.
        key: Vec<u8>,
        /// The value.
        value: Vec<u8>,
    },
}

/// [`NfDescriptor::tables`] of an NF whose tables start empty.
pub fn no_tables(_: &Config) -> Result<Vec<TableEntry>, ConfigError> {
    Ok(Vec::new())
}

/// Every valid rule of `tcam` (the field `table` of an NF's state), in slot order, as
/// [`TableEntry`]s: how a descriptor hands a table its constructor filled to the other tiers.
pub fn tcam_entries<K: Bits, V: Bits, const N: usize>(table: &'static str, tcam: &Tcam<K, V, N>) -> Vec<TableEntry> {
    let be = |b: &dyn Fn(&mut [u8]), n: usize| {
        let mut v = vec![0u8; n];
        b(&mut v);
        v
    };
    (0..N)
        .filter_map(|slot| tcam.entry(slot).map(|e| (slot, e)))
        .map(|(slot, (value, mask, result))| TableEntry::Tcam {
            table,
            slot,
            value: be(&|o| value.write_be(o), K::BYTES),
            mask: be(&|o| mask.write_be(o), K::BYTES),
            result: be(&|o| result.write_be(o), V::BYTES),
        })
        .collect()
}

/// Every entry of `cam` (the field `table` of an NF's state), in slot order, as
/// [`TableEntry`]s. The CPU constructor fills the `Cam` by inserting into an empty one, so
/// the entries sit in slots 0, 1, 2, …, which is how the other tiers load them.
pub fn cam_entries<K: Bits, V: Bits, const N: usize>(table: &'static str, cam: &Cam<K, V, N>) -> Vec<TableEntry> {
    let be = |b: &dyn Fn(&mut [u8]), n: usize| {
        let mut v = vec![0u8; n];
        b(&mut v);
        v
    };
    cam.entries()
        .map(|(slot, key, value)| TableEntry::Cam {
            table,
            slot,
            key: be(&|o| key.write_be(o), K::BYTES),
            value: be(&|o| value.write_be(o), V::BYTES),
        })
        .collect()
}

/// [`NfDescriptor::registers`] of an NF without configuration registers.
pub fn no_registers(_: &Config) -> Result<Vec<(&'static str, u64)>, ConfigError> {
    Ok(Vec::new())
}

impl fmt::Debug for NfDescriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NfDescriptor")
            .field("name", &self.name)
            .field("ports", &self.ports)
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const IP: Param = Param { name: "ip", help: "address to answer for", default: Some("10.0.0.1") };
    const MAC: Param = Param { name: "mac", help: "our MAC", default: None };

    #[test]
    fn defaults_overrides_and_errors() {
        let mut c = Config::new();
        assert_eq!(c.get::<crate::Ipv4Addr>(&IP).unwrap().to_string(), "10.0.0.1");
        c.set("ip", "10.9.9.9");
        assert_eq!(c.get::<crate::Ipv4Addr>(&IP).unwrap().to_string(), "10.9.9.9");
        c.set("ip", "ten");
        let e = c.get::<crate::Ipv4Addr>(&IP).unwrap_err().0;
        assert!(e.starts_with("--ip ten: `ten` is not an IPv4 address"), "{e}");
        assert_eq!(c.raw(&MAC).unwrap_err().0, "--mac is required: our MAC");
    }

    #[test]
    fn tcam_entries_are_the_valid_slots_big_endian() {
        let mut t: Tcam<u16, u8, 4> = Tcam::new();
        t.set(3, 0x1234, 0xff00, 7);
        t.set(1, 0x0050, 0xffff, 9);
        let e = tcam_entries("open", &t);
        let rule = |slot, value: [u8; 2], mask: [u8; 2], result| TableEntry::Tcam {
            table: "open",
            slot,
            value: value.to_vec(),
            mask: mask.to_vec(),
            result: vec![result],
        };
        assert_eq!(e, [rule(1, [0x00, 0x50], [0xff, 0xff], 9), rule(3, [0x12, 0x34], [0xff, 0x00], 7)]);
    }

    #[test]
    fn cam_entries_are_the_filled_slots_big_endian() {
        let mut c: Cam<u16, u8, 4> = Cam::new();
        c.insert(0x1234, 7);
        c.insert(0x0050, 9);
        let entry =
            |slot, key: [u8; 2], value| TableEntry::Cam { table: "t", slot, key: key.to_vec(), value: vec![value] };
        assert_eq!(cam_entries("t", &c), [entry(0, [0x12, 0x34], 7), entry(1, [0x00, 0x50], 9)]);
    }
}

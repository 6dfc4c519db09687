//! The network-function trait and the descriptor a target uses to find, configure and build an
//! NF by name.

use crate::action::Action;
use crate::packet::{Meta, Packet};
use crate::state::{Element, ElementKind};
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
}

impl NfDescriptor {
    /// The NF's state as its constructor leaves it under `config`: every element the
    /// debugger sees ([`NetworkFunction::elements`]), with every entry. This is what the IR
    /// and hardware tiers load before the first packet, so whatever `build` puts into an
    /// `Array`, a `Register`, a plain field or a table reaches them without a list of its own.
    pub fn initial_state(&self, config: &Config) -> Result<Vec<ElementImage>, ConfigError> {
        let mut nf = (self.build)(config)?;
        Ok(state_image(nf.as_mut()))
    }
}

/// One state element's contents, read through [`Element`]: its entries as
/// [`Element::read`] gives them (big-endian bytes, a table slot as `valid`, key, value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementImage {
    /// The state struct's field.
    pub name: &'static str,
    /// What kind of element it is.
    pub kind: ElementKind,
    /// Entry `i` is `entries[i]`.
    pub entries: Vec<Vec<u8>>,
    /// It holds state that no entry shows ([`Element::unshown_state`]: a `Cam`'s moved
    /// victim pointer, a `Queue`'s values).
    pub unshown_state: bool,
}

impl ElementImage {
    /// The image of `element`, the field `name`.
    pub fn of(name: &'static str, element: &dyn Element) -> ElementImage {
        ElementImage {
            name,
            kind: element.kind(),
            entries: (0..element.size()).map(|i| element.read(i).unwrap_or_default()).collect(),
            unshown_state: element.unshown_state(),
        }
    }

    /// Whether every entry is zero (as a new element's are).
    pub fn is_zero(&self) -> bool {
        self.entries.iter().all(|e| e.iter().all(|&b| b == 0))
    }
}

/// Every state element of `nf`, in declaration order.
pub fn state_image(nf: &mut dyn NetworkFunction) -> Vec<ElementImage> {
    nf.elements().into_iter().map(|(name, e)| ElementImage::of(name, e)).collect()
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
    use crate::state::{Array, Cam, Tcam};

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
    fn images_hold_every_entry_big_endian() {
        let mut t: Tcam<u16, u8, 2> = Tcam::new();
        t.set(1, 0x0050, 0xffff, 9);
        let img = ElementImage::of("open", &t);
        assert_eq!(img.kind, ElementKind::Tcam);
        assert_eq!(img.entries, [vec![0, 0, 0, 0, 0, 0], vec![1, 0x00, 0x50, 0xff, 0xff, 9]]);
        let mut c: Cam<u16, u8, 2> = Cam::new();
        c.insert(0x1234, 7);
        assert_eq!(ElementImage::of("t", &c).entries[0], [1, 0x12, 0x34, 7]);
        assert!(!ElementImage::of("t", &c).unshown_state);
        c.insert(1, 1);
        c.insert(2, 2);
        assert!(ElementImage::of("t", &c).unshown_state, "the third insert evicted slot 0");
        let mut a: Array<u16, 3> = Array::new();
        assert!(ElementImage::of("a", &a).is_zero());
        a.set(2, 0xbeef);
        assert_eq!(ElementImage::of("a", &a).entries, [vec![0, 0], vec![0, 0], vec![0xbe, 0xef]]);
    }
}

//! Topologies: `single,N`, `linear,N`, or a JSON file.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A host: its name and its address with prefix length.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Host {
    /// Name, e.g. `h1`.
    pub name: String,
    /// Address and prefix, e.g. `10.0.0.1/24`. Defaults to 10.0.0.k/24 for the k-th host.
    #[serde(default)]
    pub ip: String,
}

/// Hosts, switches and the links between them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// The hosts.
    pub hosts: Vec<Host>,
    /// The switches; each runs the NF.
    pub switches: Vec<String>,
    /// Links as pairs of node names; a switch's ports are numbered in link order from 0.
    pub links: Vec<(String, String)>,
}

/// The most ports an NF switch takes.
pub const MAX_SWITCH_PORTS: usize = 32;

fn host(k: usize) -> Host {
    Host { name: format!("h{k}"), ip: format!("10.0.0.{k}/24") }
}

impl Topology {
    /// One switch `s1` with hosts `h1`…`hN`.
    pub fn single(n: usize) -> Topology {
        Topology {
            hosts: (1..=n).map(host).collect(),
            switches: vec!["s1".into()],
            links: (1..=n).map(|k| (format!("h{k}"), "s1".into())).collect(),
        }
    }

    /// Switches `s1`…`sN` in a chain, host `hk` on switch `sk`.
    pub fn linear(n: usize) -> Topology {
        let mut links: Vec<(String, String)> = (1..=n).map(|k| (format!("h{k}"), format!("s{k}"))).collect();
        links.extend((1..n).map(|k| (format!("s{k}"), format!("s{}", k + 1))));
        Topology { hosts: (1..=n).map(host).collect(), switches: (1..=n).map(|k| format!("s{k}")).collect(), links }
    }

    /// Parses `--topo`: `single,N`, `linear,N`, or the path of a JSON topology file.
    pub fn parse(spec: &str) -> Result<Topology, String> {
        let builtin = |kind: &str, n: &str, max: usize| -> Result<usize, String> {
            match n.trim().parse::<usize>() {
                Ok(n) if (1..=max).contains(&n) => Ok(n),
                _ => Err(format!("--topo {kind},{n}: give a number of hosts from 1 to {max}, e.g. {kind},3")),
            }
        };
        let topo = match spec.split_once(',') {
            Some(("single", n)) => Topology::single(builtin("single", n, MAX_SWITCH_PORTS)?),
            Some(("linear", n)) => Topology::linear(builtin("linear", n, 64)?),
            _ if Path::new(spec).exists() => Topology::from_file(Path::new(spec))?,
            _ => {
                return Err(format!(
                    "--topo {spec}: not `single,N`, `linear,N` or an existing topology file \
                     (JSON: {{\"hosts\": [{{\"name\": \"h1\", \"ip\": \"10.0.0.1/24\"}}], \"switches\": [\"s1\"], \
                     \"links\": [[\"h1\", \"s1\"]]}})"
                ))
            }
        };
        Ok(topo)
    }

    /// Reads and checks a JSON topology file.
    pub fn from_file(path: &Path) -> Result<Topology, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut topo: Topology =
            serde_json::from_str(&text).map_err(|e| format!("{}: not a topology file: {e}", path.display()))?;
        for (k, h) in topo.hosts.iter_mut().enumerate() {
            if h.ip.is_empty() {
                h.ip = format!("10.0.0.{}/24", k + 1);
            }
        }
        topo.check().map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(topo)
    }

    /// Checks names, addresses, links and port counts.
    pub fn check(&self) -> Result<(), String> {
        let mut kind: BTreeMap<&str, &str> = BTreeMap::new();
        for h in &self.hosts {
            check_name(&h.name, "host")?;
            if kind.insert(&h.name, "host").is_some() {
                return Err(format!("the name `{}` is used twice", h.name));
            }
            check_ip(&h.name, &h.ip)?;
        }
        for s in &self.switches {
            check_name(s, "switch")?;
            if !s.bytes().any(|b| b.is_ascii_digit()) {
                return Err(format!("switch `{s}`: a switch name needs a number in it, like s1"));
            }
            if kind.insert(s, "switch").is_some() {
                return Err(format!("the name `{s}` is used twice"));
            }
        }
        if self.switches.is_empty() {
            return Err("no switches: the NF runs as the switches, so give at least one".into());
        }
        let mut ports: BTreeMap<&str, usize> = BTreeMap::new();
        for (a, b) in &self.links {
            for end in [a, b] {
                if !kind.contains_key(end.as_str()) {
                    return Err(format!("link {a}–{b}: no host or switch is called `{end}`"));
                }
                *ports.entry(end).or_default() += 1;
            }
            if a == b {
                return Err(format!("link {a}–{b}: a node cannot be linked to itself"));
            }
        }
        for h in &self.hosts {
            if !ports.contains_key(h.name.as_str()) {
                return Err(format!("host `{}` has no link", h.name));
            }
        }
        for s in &self.switches {
            let n = ports.get(s.as_str()).copied().unwrap_or(0);
            if n > MAX_SWITCH_PORTS {
                return Err(format!("switch `{s}` has {n} links; an NF switch takes at most {MAX_SWITCH_PORTS}"));
            }
            if format!("{s}-eth{n}").len() > 15 {
                return Err(format!("switch `{s}`: its port names ({s}-eth{n}) would pass Linux's 15 characters; use a shorter name"));
            }
        }
        Ok(())
    }

    /// The names of the hosts.
    pub fn host_names(&self) -> impl Iterator<Item = &str> + Clone {
        self.hosts.iter().map(|h| h.name.as_str())
    }
}

fn check_name(name: &str, what: &str) -> Result<(), String> {
    let ok = name.len() <= 10
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(format!("{what} `{name}`: names are a lowercase letter then letters and digits, at most 10, like h1 or s2"))
    }
}

fn check_ip(host: &str, ip: &str) -> Result<(), String> {
    let bad = || format!("host `{host}`: `{ip}` is not an IPv4 address with a prefix length, like 10.0.0.1/24");
    let (addr, len) = ip.split_once('/').ok_or_else(bad)?;
    addr.parse::<std::net::Ipv4Addr>().map_err(|_| bad())?;
    match len.parse::<u8>() {
        Ok(n) if (1..=32).contains(&n) => Ok(()),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn builtins() {
        let s = Topology::parse("single,3").unwrap();
        assert_eq!(s.switches, ["s1"]);
        assert_eq!(s.links.len(), 3);
        assert_eq!(s.hosts[2], Host { name: "h3".into(), ip: "10.0.0.3/24".into() });
        let l = Topology::parse("linear,3").unwrap();
        assert_eq!(l.switches, ["s1", "s2", "s3"]);
        assert_eq!(l.links.last().unwrap(), &("s2".to_string(), "s3".to_string()));
        assert!(s.check().is_ok() && l.check().is_ok());
        assert!(Topology::parse("single,0").unwrap_err().contains("from 1 to 32"));
        assert!(Topology::parse("single,x").is_err());
        assert!(Topology::parse("ring,3").unwrap_err().contains("not `single,N`"));
    }

    #[test]
    fn files_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let write = |text: &str| {
            let p = dir.path().join("t.json");
            std::fs::write(&p, text).unwrap();
            Topology::from_file(&p)
        };
        let ok = write(r#"{"hosts": [{"name": "a1"}, {"name": "b1", "ip": "192.168.1.2/16"}], "switches": ["s9"], "links": [["a1", "s9"], ["b1", "s9"]]}"#).unwrap();
        assert_eq!(ok.hosts[0].ip, "10.0.0.1/24");
        let err = |text: &str| write(text).unwrap_err();
        assert!(err("{").contains("not a topology file"));
        assert!(err(r#"{"hosts": [], "switches": ["s1"], "links": [["h1", "s1"]]}"#).contains("no host or switch is called `h1`"));
        assert!(err(r#"{"hosts": [{"name": "h1"}], "switches": ["sw"], "links": [["h1", "sw"]]}"#).contains("needs a number"));
        assert!(err(r#"{"hosts": [{"name": "h1", "ip": "10.0.0.300/24"}], "switches": ["s1"], "links": [["h1", "s1"]]}"#).contains("not an IPv4 address"));
        assert!(err(r#"{"hosts": [{"name": "h1"}], "switches": ["s1"], "links": []}"#).contains("has no link"));
        assert!(err(r#"{"hosts": [{"name": "H1"}], "switches": ["s1"], "links": [["H1", "s1"]]}"#).contains("lowercase"));
        assert!(err(r#"{"hosts": [{"name": "h1"}], "switches": ["s1"], "links": [["h1", "s1"]], "extra": 1}"#).contains("unknown field"));
    }
}

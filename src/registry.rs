//! The network functions the tool knows by name.

use emu::NfDescriptor;

/// The NFs shipped in `netfuncs/`.
pub const BUILT_IN: &[NfDescriptor] = &[
    learning_switch::DESCRIPTOR,
    icmp_echo::DESCRIPTOR,
    tcp_ping::DESCRIPTOR,
    firewall::DESCRIPTOR,
    nat::DESCRIPTOR,
    stats::DESCRIPTOR,
    memcached_cache::DESCRIPTOR,
    dns_server::DESCRIPTOR,
];

/// Built-in NFs plus those a scaffolded crate adds.
pub struct Registry {
    nfs: Vec<NfDescriptor>,
}

impl Registry {
    /// The built-in NFs and `extra`.
    pub fn new(extra: &[NfDescriptor]) -> Registry {
        let mut nfs = BUILT_IN.to_vec();
        nfs.extend_from_slice(extra);
        Registry { nfs }
    }

    /// Every NF, in listing order.
    pub fn all(&self) -> &[NfDescriptor] {
        &self.nfs
    }

    /// The NF called `name`, or an error listing the known ones.
    pub fn find(&self, name: &str) -> Result<&NfDescriptor, String> {
        self.nfs.iter().find(|d| d.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.nfs.iter().map(|d| d.name).collect();
            let hint = names
                .iter()
                .filter(|n| edit_distance(n, name) <= 2)
                .map(|n| format!("did you mean `{n}`? "))
                .next()
                .unwrap_or_default();
            format!("unknown network function `{name}`; {hint}known: {} (`emu list` describes them)", names.join(", "))
        })
    }
}

/// Levenshtein distance, for suggesting the name the user probably meant.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + (ca != *cb) as usize).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn suggests_close_names() {
        let r = Registry::new(&[]);
        let e = r.find("learning-swich").unwrap_err();
        assert!(e.contains("did you mean `learning-switch`?"), "{e}");
        assert!(!r.find("dns").unwrap_err().contains("did you mean"));
        assert!(r.find("tcp-ping").is_ok() && r.find("firewall").is_ok() && r.find("nat").is_ok());
        assert!(r.find("memcached-cache").is_ok());
        assert!(r.find("stats").is_ok());
        assert!(r.find("dns-server").is_ok());
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    /// Every built-in NF, as the tools build it (wrappers included), shows its state to the
    /// debugger by field name.
    #[test]
    fn every_nf_shows_its_state_to_the_debugger() {
        let dir = tempfile::tempdir().unwrap();
        let rules = dir.path().join("fw.rules");
        std::fs::write(&rules, "-A -p tcp --dport 80 -j ACCEPT\n").unwrap();
        for desc in BUILT_IN {
            let mut c = emu::Config::new();
            for p in desc.params.iter().filter(|p| p.default.is_none()) {
                let value = match p.name {
                    "rules" => rules.to_str().unwrap(),
                    "zone" => "examples/example.zone",
                    "ip" => "10.0.0.53",
                    "outside-ip" => "203.0.113.1/24",
                    other => panic!("{}: give the test a value for the required option --{other}", desc.name),
                };
                c.set(p.name, value);
            }
            let mut nf = (desc.build)(&c).unwrap_or_else(|e| panic!("{}: {e}", desc.name));
            let names: Vec<&str> = nf.elements().iter().map(|(n, _)| *n).collect();
            assert!(!names.is_empty(), "{} hides its state from the debugger", desc.name);
        }
    }
}

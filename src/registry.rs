//! The network functions the tool knows by name.

use emu::NfDescriptor;

/// The NFs shipped in `netfuncs/`.
pub const BUILT_IN: &[NfDescriptor] =
    &[learning_switch::DESCRIPTOR, icmp_echo::DESCRIPTOR, tcp_ping::DESCRIPTOR, firewall::DESCRIPTOR, nat::DESCRIPTOR];

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
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}

//! The network functions the tool knows by name.

use emu::NfDescriptor;

/// The NFs shipped in `netfuncs/`.
pub const BUILT_IN: &[NfDescriptor] = &[learning_switch::DESCRIPTOR, icmp_echo::DESCRIPTOR];

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
            format!("unknown network function `{name}`; known: {} (`emu list` describes them)", names.join(", "))
        })
    }
}

//! `emu sim`: an NF through simulator tiers on the same traffic.

use crate::cli::SimArgs;
use emu::{Config, NfDescriptor};
use emu_sim::Tier;

pub(crate) fn run(desc: &NfDescriptor, config: &Config, a: &SimArgs) -> Result<i32, String> {
    let tiers = a.target.iter().map(|t| t.parse::<Tier>()).collect::<Result<Vec<_>, _>>()?;
    if let Some(t) = tiers.iter().find(|t| !t.is_available()) {
        let ready: Vec<&str> = Tier::ALL.iter().filter(|t| t.is_available()).map(|t| t.name()).collect();
        return Err(format!(
            "tier `{}` is not implemented yet ({}); available now: {}",
            t.name(),
            t.not_yet_because(),
            ready.join(", ")
        ));
    }
    if a.pcap.inputs.is_empty() {
        return Err("give the traffic with --in FILE (or --in PORT=FILE per port)".into());
    }
    let out = a.pcap.out.as_deref().ok_or("--out DIR is required: each tier writes DIR/<tier>/port<N>.pcap")?;
    let mut code = 0;
    for tier in tiers {
        match tier {
            Tier::Cpu => code = code.max(super::run::run_pcaps(desc, config, &a.pcap, &out.join(tier.name()))?),
            other => unreachable!("tier {} passed the availability check", other.name()),
        }
    }
    Ok(code)
}

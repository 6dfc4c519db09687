//! `--profile` of `emu run` and `emu sim`: wrapping each tier's NF to record, and writing what
//! it recorded as a table, JSON and SVG plots (emu_sim::profile, emu_sim::plot).

use emu::{Config, NetworkFunction, NfDescriptor};
use emu_sim::ir_tier::IrNf;
use emu_sim::plot;
use emu_sim::profile::{Profile, ProfileHandle, Profiled};
use std::path::{Path, PathBuf};

/// `nf` (the CPU's) wrapped to record a profile, with its IR beside it for the table figures.
pub(crate) fn native(
    desc: &NfDescriptor,
    config: &Config,
    nf: Box<dyn NetworkFunction + Send>,
) -> (Box<dyn NetworkFunction + Send>, ProfileHandle) {
    let (p, h) = Profiled::native(nf, IrNf::build(desc, config));
    (Box::new(p), h)
}

/// Writes the profiles of one run: JSON `{"nf": …, "tiers": [profile, …]}` at `json`, the
/// plots beside it as `<prefix><tier>.<plot>.svg`, and the tables on the terminal unless
/// `quiet`. Returns the files written.
pub(crate) fn write(
    nf: &str,
    profiles: &[Profile],
    json: &Path,
    prefix: &Path,
    quiet: bool,
) -> Result<Vec<PathBuf>, String> {
    if let Some(dir) = json.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let doc = serde_json::json!({ "nf": nf, "tiers": profiles });
    std::fs::write(json, serde_json::to_string_pretty(&doc).expect("a profile as JSON") + "\n")
        .map_err(|e| format!("{}: {e}", json.display()))?;
    let mut written = vec![json.to_path_buf()];
    for p in profiles {
        for (what, svg) in plot::plots(p) {
            let mut name = prefix.as_os_str().to_owned();
            name.push(format!("{}.{what}.svg", p.tier));
            let path = PathBuf::from(name);
            std::fs::write(&path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
            written.push(path);
        }
        if !quiet {
            print!("{}", p.table());
        }
    }
    if !quiet {
        let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        println!("wrote the profile: {}", names.join(", "));
    }
    Ok(written)
}

/// `emu run --profile FILE`: the JSON at FILE, the plots as FILE's stem + `.cpu.<plot>.svg`.
pub(crate) fn write_run(nf: &str, profile: Profile, file: &Path, quiet: bool) -> Result<(), String> {
    let stem = file.with_extension("");
    let mut prefix = stem.into_os_string();
    prefix.push(".");
    write(nf, &[profile], file, Path::new(&prefix), quiet).map(|_| ())
}

/// `emu sim --profile DIR`: DIR/profile.json and DIR/<tier>.<plot>.svg.
pub(crate) fn write_sim(nf: &str, profiles: &[Profile], dir: &Path, quiet: bool) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    write(nf, profiles, &dir.join("profile.json"), &dir.join(""), quiet).map(|_| ())
}

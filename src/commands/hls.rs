//! `emu hls`: an NF through the HLS compiler into Verilog, with its report and symbol table.

use crate::cli::HlsArgs;
use crate::registry::Registry;
use emu::{Config, NfDescriptor};
use emu_hls::backend::{report, rtl, symbols, Design, HwConfig};
use quote::ToTokens;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Ports and window of an `#[emu::nf]` attribute that leaves them out.
const DEFAULT_PORTS: usize = 4;
const DEFAULT_WINDOW: usize = 64;

/// What the compiler is given: the module's text and what the hardware is built for.
#[derive(Debug)]
pub(crate) struct Source {
    /// How the summary and errors name the NF: `learning-switch`, or `counter (nf.rs)`.
    pub label: String,
    /// The `#[emu::nf]` module's source, as `HLS_SOURCE` holds it.
    pub text: String,
    pub ports: usize,
    pub window: usize,
    /// The state as the NF's constructor leaves it (registers' reset values, a firewall's
    /// rules); empty for a file's NF, whose state starts at zero.
    pub state: Vec<emu::ElementImage>,
}

/// Runs `emu hls`. `config_of` gives a registered NF's options from the command line
/// (`--NAME VALUE`); `-p NAME=VALUE` adds to them.
pub(crate) fn run(
    registry: &Registry,
    a: &HlsArgs,
    config_of: impl Fn(&NfDescriptor) -> Config,
) -> Result<i32, String> {
    let start = Instant::now();
    let out = a.out.as_deref().ok_or(
        "-o DIR is required: it is where verilog/<module>.v, report.md and symbols.json go \
         (e.g. `emu hls learning-switch -o hw/`)",
    )?;
    let source = resolve(registry, a, config_of)?;
    let label = &source.label;

    let design = design(&source, a.width, a.max_frame, a.debug, a.debug_port)?;
    let modules = verilog_modules(label, &design)?;
    let report_text = report::report_at(&design, a.clock_mhz);
    let symbol_table = symbols::symbols(&design);

    let (mut written, stale) = write_verilog(out, &modules)?;
    let report_path = out.join("report.md");
    write(&report_path, &report_text)?;
    written.push(report_path);
    let symbols_path = out.join("symbols.json");
    write(&symbols_path, &(serde_json::to_string_pretty(&symbol_table).expect("JSON values serialize") + "\n"))?;
    written.push(symbols_path);

    let paths: u128 = design.sched.verdicts(&design.func).iter().map(|v| v.paths).fold(0, u128::saturating_add);
    let cycles = match report::cycles_range(&design, 64) {
        Some((lo, hi)) if lo == hi => format!("{lo}"),
        Some((lo, hi)) => format!("{lo}–{hi}"),
        None => "none (no path through the NF)".into(),
    };
    println!(
        "{label}: {}-bit bus, {}-byte window, {} ports, frames up to {} bytes",
        a.width, source.window, source.ports, a.max_frame
    );
    println!("  FSM states: {}", design.sched.states.len());
    if a.debug {
        println!("  with the debug unit: register port dbg_* (its map: docs/debug-protocol.md, \"The hardware unit\")");
    }
    println!(
        "  cycles per packet, 64-byte frames: {cycles} ({} path{} through the NF; report.md has {})",
        report::count(paths),
        if paths == 1 { "" } else { "s" },
        if paths <= report::PATHS_LISTED { "each" } else { "them by verdict" }
    );
    for (i, path) in written.iter().enumerate() {
        println!("  {} {}", if i == 0 { "wrote" } else { "     " }, path.display());
    }
    for path in &stale {
        println!("  removed stale {}", path.display());
    }
    println!("done in {:.2} s", start.elapsed().as_secs_f64());
    Ok(0)
}

/// `source` compiled and scheduled for a bus of `width` bits and frames up to `max_frame` bytes,
/// with the debug unit when `debug` (reached in band from `debug_port` too, if one is given).
pub(crate) fn design(
    source: &Source,
    width: usize,
    max_frame: usize,
    debug: bool,
    debug_port: Option<u8>,
) -> Result<Design, String> {
    let label = &source.label;
    let func = emu_hls::compile(&source.text, source.window).map_err(|e| format!("{label}: {e}"))?;
    let config = HwConfig {
        bus_bytes: width / 8,
        ports: source.ports,
        max_frame,
        state: source.state.clone(),
        debug,
        debug_port,
    };
    Design::new(func, config).map_err(|e| format!("{label}: {e}"))
}

/// The design's Verilog as (module name, text), the NF's module first, each module once.
pub(crate) fn verilog_modules(label: &str, design: &Design) -> Result<Vec<(String, String)>, String> {
    let modules = rtl::modules(design).map_err(|e| format!("{label}: generating Verilog: {e}"))?;
    // One file per module; a module generated twice (two elements of one shape) must be the same.
    let mut verilog: BTreeMap<String, String> = BTreeMap::new();
    let mut order = Vec::new();
    for m in &modules {
        let text = m.to_string();
        match verilog.get(&m.name) {
            Some(earlier) if *earlier != text => {
                return Err(format!("{label}: the compiler made two different Verilog modules named `{}`", m.name))
            }
            Some(_) => {}
            None => {
                order.push(m.name.clone());
                verilog.insert(m.name.clone(), text);
            }
        }
    }
    Ok(order
        .into_iter()
        .map(|name| {
            let text = verilog.remove(&name).expect("kept above");
            (name, text)
        })
        .collect())
}

/// Writes `modules` as `out/verilog/<module>.v` and removes the `.v` files there that they do
/// not name. Returns the files written and the stale files removed.
pub(crate) fn write_verilog(out: &Path, modules: &[(String, String)]) -> Result<(Vec<PathBuf>, Vec<PathBuf>), String> {
    let vdir = out.join("verilog");
    std::fs::create_dir_all(&vdir).map_err(|e| format!("cannot create {}: {e}", vdir.display()))?;
    let mut written: Vec<PathBuf> = Vec::new();
    for (name, text) in modules {
        let path = vdir.join(format!("{name}.v"));
        write(&path, text)?;
        written.push(path);
    }
    // Modules of an earlier build into the same directory would be picked up by a flow that
    // reads verilog/*.v: remove the ones this build did not write.
    let mut stale = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&vdir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "v") && !written.contains(&path) {
                std::fs::remove_file(&path).map_err(|e| format!("cannot remove stale {}: {e}", path.display()))?;
                stale.push(path);
            }
        }
    }
    Ok((written, stale))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The NF named on the command line: a registered name, else a `.rs` file.
pub(crate) fn resolve(
    registry: &Registry,
    a: &HlsArgs,
    config_of: impl Fn(&NfDescriptor) -> Config,
) -> Result<Source, String> {
    if let Ok(desc) = registry.find(&a.nf) {
        if a.module.is_some() {
            return Err(format!("--module picks a module in a .rs file; `{}` is a registered NF", desc.name));
        }
        let mut config = config_of(desc);
        for (name, value) in &a.params {
            if !desc.params.iter().any(|p| p.name == name) {
                let known: Vec<String> = desc.params.iter().map(|p| format!("{}=VALUE", p.name)).collect();
                return Err(if known.is_empty() {
                    format!("-p {name}={value}: {} has no options", desc.name)
                } else {
                    format!("-p {name}={value}: {} has no option `{name}`; it takes {}", desc.name, known.join(", "))
                });
            }
            config.set(name, value);
        }
        return from_descriptor(desc, &config);
    }
    let path = Path::new(&a.nf);
    if a.nf.ends_with(".rs") || path.exists() || a.nf.contains(std::path::MAIN_SEPARATOR) {
        if let Some((name, _)) = a.params.first() {
            return Err(format!(
                "-p {name}=…: NF options belong to registered NFs (`emu list`); the NF of {} has none \
                 (its registers start at zero)",
                path.display()
            ));
        }
        return from_file(path, a.module.as_deref());
    }
    let e = registry.find(&a.nf).unwrap_err();
    Err(format!("{e}; or give the path of a .rs file that holds an #[emu::nf] module"))
}

/// A registered NF: its `HLS_SOURCE`, ports, window, and its state under `config`.
pub(crate) fn from_descriptor(desc: &NfDescriptor, config: &Config) -> Result<Source, String> {
    let text = desc.hls_source.ok_or_else(|| {
        format!(
            "`{}` is not an #[emu::nf] module: it has no HLS source, so it runs on the CPU only; \
             put `#[emu::nf(ports = {}, window = {})]` on the module that holds it (docs/hls-subset.md) \
             and set `hls_source: Some(HLS_SOURCE)` in its descriptor",
            desc.name, desc.ports, desc.window
        )
    })?;
    let state = desc.initial_state(config).map_err(|e| format!("{}: {e}", desc.name))?;
    Ok(Source {
        label: desc.name.to_string(),
        text: text.to_string(),
        ports: desc.ports,
        window: desc.window,
        state,
    })
}

/// Is `attr` `#[emu::nf(…)]` (or `#[nf(…)]` after `use emu::nf`)?
fn is_nf_attr(attr: &syn::Attribute) -> bool {
    let segs: Vec<String> = attr.path().segments.iter().map(|s| s.ident.to_string()).collect();
    segs == ["emu", "nf"] || segs == ["nf"]
}

/// Every module of `items` (nested ones too) that carries `#[emu::nf]`.
fn nf_modules<'a>(items: &'a [syn::Item], found: &mut Vec<&'a syn::ItemMod>) {
    for item in items {
        if let syn::Item::Mod(m) = item {
            if m.attrs.iter().any(is_nf_attr) {
                found.push(m);
            } else if let Some((_, inner)) = &m.content {
                nf_modules(inner, found);
            }
        }
    }
}

/// `ports` and `window` of an `#[emu::nf(…)]` attribute, with defaults for the ones left out.
fn nf_args(attr: &syn::Attribute, at: &str) -> Result<(usize, usize), String> {
    const USAGE: &str = "write `#[emu::nf(ports = 4, window = 64)]`";
    let (mut ports, mut window) = (DEFAULT_PORTS, DEFAULT_WINDOW);
    let list = match &attr.meta {
        syn::Meta::Path(_) => return Ok((ports, window)),
        syn::Meta::List(l) => l
            .parse_args_with(syn::punctuated::Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated)
            .map_err(|e| format!("{at}: the #[emu::nf] attribute does not parse ({e}); {USAGE}"))?,
        syn::Meta::NameValue(_) => return Err(format!("{at}: {USAGE}")),
    };
    for nv in list {
        let name = nv.path.to_token_stream().to_string();
        let value = match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => i.base10_parse::<usize>().ok(),
            _ => None,
        };
        let slot = match name.as_str() {
            "ports" => &mut ports,
            "window" => &mut window,
            _ => return Err(format!("{at}: unknown #[emu::nf] argument `{name}`; {USAGE}")),
        };
        *slot = value.ok_or_else(|| format!("{at}: `{name}` takes an integer literal; {USAGE}"))?;
    }
    Ok((ports, window))
}

/// The `#[emu::nf]` module of a `.rs` file (the one called `module` when there are several).
pub(crate) fn from_file(path: &Path, module: Option<&str>) -> Result<Source, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let file = syn::parse_file(&text).map_err(|e| {
        let lc = e.span().start();
        format!("{shown}:{}:{}: not Rust source that parses: {e}", lc.line, lc.column + 1)
    })?;
    let mut found = Vec::new();
    nf_modules(&file.items, &mut found);
    let names: Vec<String> = found.iter().map(|m| m.ident.to_string()).collect();
    let m = match (module, found.as_slice()) {
        (_, []) => {
            return Err(format!(
                "{shown} has no #[emu::nf] module: put `#[emu::nf(ports = 4, window = 64)]` on an inline \
                 `mod name {{ … }}` holding the NF's state struct and its `impl NetworkFunction` \
                 (docs/hls-subset.md)"
            ))
        }
        (Some(want), _) => found
            .iter()
            .find(|m| m.ident == want)
            .ok_or_else(|| format!("{shown} has no #[emu::nf] module `{want}`; it has {}", names.join(", ")))?,
        (None, [one]) => one,
        (None, _) => {
            return Err(format!(
                "{shown} has {} #[emu::nf] modules ({}); pick one with --module NAME",
                found.len(),
                names.join(", ")
            ))
        }
    };
    let attr = m.attrs.iter().find(|a| is_nf_attr(a)).expect("found by its attribute");
    let lc = attr.pound_token.span.start();
    let (ports, window) = nf_args(attr, &format!("{shown}:{}:{}", lc.line, lc.column + 1))?;
    let mut module = (*m).clone();
    module.attrs.retain(|a| !is_nf_attr(a));
    // The subset check on the file's own tokens first, so its errors carry the file's lines.
    match emu_hls::front::check_module(&module, &emu_hls::front::Options { window }) {
        Err(errors) => {
            let lines: Vec<String> = errors.iter().map(|e| format!("{shown}:{e}")).collect();
            return Err(format!(
                "the NF `{}` is outside the synthesizable subset (docs/hls-subset.md):\n  {}",
                module.ident,
                lines.join("\n  ")
            ));
        }
        // And lowering, for the same reason: HLS_SOURCE's text has lost the file's lines.
        Ok(nf) => {
            if let Err(e) = emu_hls::lower::lower(&nf, window as u32) {
                return Err(format!("the NF `{}` cannot be built yet: {shown}:{e}", module.ident));
            }
        }
    }
    Ok(Source {
        label: format!("{} ({shown})", module.ident),
        // What `#[emu::nf]` puts in HLS_SOURCE: the module's tokens without the attribute.
        text: module.to_token_stream().to_string(),
        ports,
        window,
        state: Vec::new(),
    })
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn an_nf_without_hls_source_says_what_to_write() {
        let cpu_only = NfDescriptor { name: "cpu-only", hls_source: None, ..learning_switch::DESCRIPTOR };
        let e = from_descriptor(&cpu_only, &Config::new()).unwrap_err();
        assert!(e.contains("`cpu-only` is not an #[emu::nf] module"), "{e}");
    }

    #[test]
    fn finds_nested_modules_and_reads_the_attribute() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nf.rs");
        std::fs::write(
            &path,
            "mod outer {\n#[emu::nf(window = 128)]\npub mod m {\n use emu::prelude::*;\n pub struct S { c: Counter }\n\
             impl NetworkFunction for S {\n fn process(&mut self, _p: &mut Packet, _m: &Meta) -> Action \
             { self.c.inc(); Action::Flood }\n }\n}\n}\n",
        )
        .unwrap();
        let s = from_file(&path, None).unwrap();
        assert_eq!((s.ports, s.window), (DEFAULT_PORTS, 128));
        assert!(s.text.starts_with("pub mod m"), "{}", s.text);
        assert!(from_file(&path, Some("n")).unwrap_err().contains("no #[emu::nf] module `n`; it has m"));
    }

    #[test]
    fn what_only_lowering_refuses_names_the_files_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nf.rs");
        std::fs::write(
            &path,
            "#[emu::nf(window = 64)]\npub mod m {\n    use emu::prelude::*;\n    pub struct S { c: Counter }\n\
             \x20   impl NetworkFunction for S {\n        fn process(&mut self, _p: &mut Packet, _m: &Meta) -> Action {\n\
             \x20           for _ in 0..5000u32 { self.c.inc(); }\n            Action::Flood\n        }\n    }\n}\n",
        )
        .unwrap();
        let e = from_file(&path, None).unwrap_err();
        let at = format!("{}:7:13: this `for` loop runs 5000 times", path.display());
        assert!(e.contains(&at), "{e}");
    }
}

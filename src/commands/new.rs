//! `emu new NAME`: scaffold an NF crate.

use crate::cli::NewArgs;
use crate::registry::BUILT_IN;
use crate::EMU_ROOT;
use std::path::Path;

const TEMPLATES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("template/Cargo.toml.tmpl")),
    ("src/lib.rs", include_str!("template/lib.rs.tmpl")),
    ("src/main.rs", include_str!("template/main.rs.tmpl")),
    ("tests/example.rs", include_str!("template/test.rs.tmpl")),
    ("README.md", include_str!("template/README.md.tmpl")),
];

fn check_name(name: &str) -> Result<(), String> {
    let ok = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.ends_with('-')
        && !name.contains("--");
    if !ok {
        return Err(format!("`{name}` is not a valid NF name; use lowercase words joined by '-', e.g. rate-limiter"));
    }
    if BUILT_IN.iter().any(|d| d.name == name) || ["emu", "emu-cpu", "emu-tool", "test"].contains(&name) {
        return Err(format!("`{name}` is already taken by Emu itself; pick another name"));
    }
    Ok(())
}

fn camel(name: &str) -> String {
    name.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

pub(crate) fn run(a: &NewArgs) -> Result<i32, String> {
    check_name(&a.name)?;
    let dir = a.dir.clone().unwrap_or_else(|| a.name.clone().into());
    if dir.exists() {
        return Err(format!("{} already exists; pick another --dir", dir.display()));
    }
    let root = std::env::var("EMU_ROOT").unwrap_or_else(|_| EMU_ROOT.to_string());
    if !Path::new(&root).join("emu-lib").is_dir() {
        return Err(format!("Emu's source tree is not at {root}; set EMU_ROOT to the emu checkout"));
    }
    let subst = |t: &str| {
        t.replace("{{name}}", &a.name)
            .replace("{{crate_name}}", &a.name.replace('-', "_"))
            .replace("{{struct_name}}", &camel(&a.name))
            .replace("{{emu_root}}", &root)
    };
    for (path, text) in TEMPLATES {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).map_err(|e| format!("{}: {e}", p.display()))?;
        std::fs::write(&p, subst(text)).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    // The same dependency versions as Emu itself, so the first build needs nothing new.
    let lock = Path::new(&root).join("Cargo.lock");
    if lock.exists() {
        std::fs::copy(&lock, dir.join("Cargo.lock")).map_err(|e| format!("Cargo.lock: {e}"))?;
    }
    println!("created {} ({})", a.name, dir.display());
    println!("next:  cd {} && cargo test", dir.display());
    println!("       cargo run -- run {} --in {root}/examples/mixed.pcapng --out out/", a.name);
    Ok(0)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn names() {
        assert!(check_name("rate-limiter").is_ok());
        assert!(check_name("nat2").is_ok());
        assert!(check_name("Rate").is_err());
        assert!(check_name("-x").is_err());
        assert!(check_name("a--b").is_err());
        assert!(check_name("learning-switch").unwrap_err().contains("taken"));
        assert_eq!(camel("rate-limiter"), "RateLimiter");
    }
}

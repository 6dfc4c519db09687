//! Golden-file tests of the IR passes, the verifier and the parser.
//!
//! Each `tests/golden/{passes,verify,parse}/*.golden` file holds, side by side:
//!
//! ```text
//! ; run: const-fold dce        (passes in order; or `verify`, or `parse`)
//! fn …(window=64) {            the input, in the printer's canonical form
//! …
//! }
//! ; expect:
//! fn …                         the function after the passes — or the verifier's errors,
//! …                            or the parser's error, one per line
//! ```
//!
//! `EMU_BLESS=1 cargo test -p emu-hls --test ir_golden` rewrites the expected halves from
//! what the code does now (review the diff before committing it).

use emu_hls::ir::{parse, verify};
use emu_hls::passes;
use std::fs;
use std::path::{Path, PathBuf};

const EXPECT: &str = "; expect:\n";

fn cases(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(dir);
    let mut v: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "golden"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no golden files in {}", dir.display());
    v
}

/// What the case produces, or why it could not run.
fn run_case(run: &[&str], input: &str) -> Result<String, String> {
    if run == ["parse"] {
        return match parse(input) {
            Ok(_) => Err("the input parsed, but this case expects a parse error".into()),
            Err(e) => Ok(format!("{e}\n")),
        };
    }
    let mut f = parse(input).map_err(|e| format!("input does not parse: {e}"))?;
    if f.to_string() != input {
        return Err(format!("input is not in canonical form; it prints as:\n{f}"));
    }
    if run == ["verify"] {
        return match verify(&f) {
            Ok(()) => Err("the input verifies, but this case expects errors".into()),
            Err(e) => Ok(format!("{e}\n")),
        };
    }
    verify(&f).map_err(|e| format!("input does not verify:\n{e}"))?;
    for name in run {
        let mut pass = passes::by_name(name).ok_or_else(|| format!("no pass called `{name}`"))?;
        passes::run_verified(pass.as_mut(), &mut f).map_err(|e| format!("after {name}:\n{e}"))?;
    }
    Ok(f.to_string())
}

fn check_dir(dir: &str) {
    let bless = std::env::var_os("EMU_BLESS").is_some();
    let mut failures = Vec::new();
    for path in cases(dir) {
        let text = fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let (head, expected) = text.split_once(EXPECT).unwrap_or((&text, ""));
        let (first, input) = head.split_once('\n').unwrap_or((head, ""));
        let Some(run) = first.strip_prefix("; run:") else {
            failures.push(format!("{name}: the first line must be `; run: PASS…`"));
            continue;
        };
        let run: Vec<&str> = run.split_whitespace().collect();
        match run_case(&run, input) {
            Err(e) => failures.push(format!("{name}: {e}")),
            Ok(got) if got == expected => {}
            Ok(got) if bless => fs::write(&path, format!("{head}{EXPECT}{got}")).unwrap(),
            Ok(got) => failures.push(format!("{name}: expected\n{expected}\ngot\n{got}")),
        }
    }
    assert!(failures.is_empty(), "{}\n(EMU_BLESS=1 accepts new outputs)", failures.join("\n\n"));
}

#[test]
fn passes() {
    check_dir("passes");
}

#[test]
fn verifier_errors() {
    check_dir("verify");
}

#[test]
fn parse_errors() {
    check_dir("parse");
}

/// Every registered pass has a kebab-case name, a one-line description, and a golden case.
#[test]
fn every_pass_is_registered_and_tested() {
    let files: Vec<String> =
        cases("passes").iter().map(|p| fs::read_to_string(p).unwrap().lines().next().unwrap().to_string()).collect();
    for p in passes::registry() {
        assert!(p.name().chars().all(|c| c.is_ascii_lowercase() || c == '-'), "{}", p.name());
        assert!(!p.description().is_empty() && !p.description().contains('\n'), "{}", p.name());
        assert!(files.iter().any(|l| l.split_whitespace().any(|w| w == p.name())), "no golden case runs {}", p.name());
        assert_eq!(passes::by_name(p.name()).unwrap().name(), p.name());
    }
}

//! `emu new`: the scaffolded crate builds, passes its own test, and its `emu` runs the new NF
//! on the example pcap.

use std::path::Path;
use std::process::Command;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn new_nf_crate_builds_tests_and_runs_on_the_example() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("port-patch");
    let out = Command::new(env!("CARGO_BIN_EXE_emu")).args(["new", "port-patch", "--dir"]).arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("cargo test"));
    for f in ["Cargo.toml", "src/lib.rs", "src/main.rs", "tests/example.rs", "README.md", "Cargo.lock"] {
        assert!(dir.join(f).exists(), "{f}");
    }

    // The scaffold is its own workspace; in the workspace's target/ it reuses what the test
    // build compiled of the same crates with the same profile (most of its dependencies).
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let cargo_in = |args: &[&str]| {
        Command::new(&cargo).args(args).current_dir(&dir).env("CARGO_TARGET_DIR", &target).output().unwrap()
    };
    let test = cargo_in(&["test"]);
    assert!(test.status.success(), "cargo test in the new crate:\n{}", text(&test.stderr));
    let stdout = text(&test.stdout);
    assert!(stdout.contains("every_frame_is_sent_or_dropped_with_a_reason ... ok"), "{stdout}");
    assert!(stdout.contains("does_what_the_nf_is_for ... ignored"), "{stdout}");
    let ignored = cargo_in(&["test", "--", "--ignored"]);
    assert!(ignored.status.success(), "the scaffold's own behaviour:\n{}", text(&ignored.stdout));

    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mixed.pcapng");
    let run = Command::new(&cargo)
        .args(["run", "-q", "--", "run", "port-patch", "--in"])
        .arg(&example)
        .arg("--out")
        .arg(dir.join("out"))
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(text(&run.stdout).contains("port-patch: 17 frames in, 17 frames out, 0 dropped"), "{}", text(&run.stdout));
    assert!(dir.join("out/port1.pcap").exists());

    // A user's first edit (port 0's frames dropped, the rest flooded) keeps the default test
    // green; the one asserting the patch panel, run on request, now fails.
    let lib = dir.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib).unwrap();
    let edited = source.replace(
        "Action::Forward(meta.in_port ^ 1)",
        "if meta.in_port == 0 { Action::Drop(DropReason::Policy) } else { Action::Flood }",
    );
    assert_ne!(edited, source, "the scaffold's process is as this test expects");
    std::fs::write(&lib, edited).unwrap();
    let test = cargo_in(&["test"]);
    assert!(test.status.success(), "cargo test after an edit:\n{}{}", text(&test.stdout), text(&test.stderr));
    let ignored = cargo_in(&["test", "--", "--ignored"]);
    assert!(!ignored.status.success(), "the patch panel's test passes on a flood:\n{}", text(&ignored.stdout));

    // The name is checked, and an existing directory is never overwritten.
    let again =
        Command::new(env!("CARGO_BIN_EXE_emu")).args(["new", "port-patch", "--dir"]).arg(&dir).output().unwrap();
    assert!(text(&again.stderr).contains("already exists"), "{}", text(&again.stderr));
    let bad = Command::new(env!("CARGO_BIN_EXE_emu")).args(["new", "Bad_Name"]).output().unwrap();
    assert!(text(&bad.stderr).contains("not a valid NF name"), "{}", text(&bad.stderr));
}

//! Compile-time behaviour of `#[emu::nf]`: each `ui/reject_*.rs` must fail with exactly the
//! errors in its `.stderr`, each `ui/accept_*.rs` must compile and run. One trybuild run, since
//! every case is a crate to compile. `TRYBUILD=overwrite` rewrites the snapshots (review them).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/reject_*.rs");
    t.pass("tests/ui/accept_*.rs");
}

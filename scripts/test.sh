#!/usr/bin/env bash
# Runs every test of Emu: installs the Debian packages the tests need when they are missing
# (scripts/setup.sh) and cargo-nextest when it is missing (from crates.io), then the whole
# workspace's tests (unit, integration, end-to-end) with cargo-nextest, and the doc tests
# with cargo test (nextest does not run those). Live-interface and Mininet tests make their
# own network namespaces and need root. Arguments go to both runs (a test name filters).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "test: installing cargo-nextest from crates.io"
  cargo install --locked cargo-nextest
fi
# A one-off build gains nothing from incremental compilation's caches, which take gigabytes.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
# The tests' Verilator models are built at -O0: g++ takes seconds instead of minutes on a
# large NF, and the tests simulate thousands of frames, not millions (sim/src/verilator.rs).
export EMU_VERILATOR_OPT="${EMU_VERILATOR_OPT:--O0}"
# nextest runs every test in its own process, as many at once as there are cores, across all
# the test binaries (.config/nextest.toml keeps the Mininet tests to one at a time).
cargo nextest run --workspace --no-fail-fast "$@"
cargo test --workspace --doc "$@"

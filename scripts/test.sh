#!/usr/bin/env bash
# Runs every test of Emu: installs the Debian packages the tests need when they are missing
# (scripts/setup.sh), then the whole workspace's tests (unit, integration, end-to-end, doc).
# Live-interface tests make their own network namespaces and need root.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# A one-off build gains nothing from incremental compilation's caches, which take gigabytes.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
cargo test --workspace "$@"

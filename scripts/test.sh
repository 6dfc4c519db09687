#!/usr/bin/env bash
# Runs every test of Emu: installs the Debian packages the tests need when they are missing
# (scripts/setup.sh), then the whole workspace's tests (unit, integration, end-to-end, doc).
# Live-interface tests make their own network namespaces and need root.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --workspace "$@"

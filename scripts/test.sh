#!/usr/bin/env bash
# Runs every test of the project: formatting, lints, unit/integration/property tests,
# and a short smoke run of every fuzz target. This is the README's test command and what
# CI runs (.ci/run). Anything it needs is installed by the project's own scripts.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# A full run from a clean clone writes several GB of build output; a disk that
# fills up mid-run fails in whatever step happens to write (once: rustdoc). Say so first.
step "free disk space"
df -h . | tail -n 1

step "cargo fmt --check (the workspace and the fuzz package)"
cargo fmt --all -- --check
(cd fuzz && cargo fmt -- --check)

step "cargo clippy (all targets, -D warnings)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "ogp-proto without its optional features (toml, bzip2, os-rng, gqp)"
cargo clippy -p ogp-proto --no-default-features --locked -- -D warnings

step "cargo doc (no warnings)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

step "no import circles between modules (scripts/import-cycles.py)"
python3 scripts/import-cycles.py

step "interop peers: qstat, gamedig, python-a2s, opengsq (scripts/install-interop.sh)"
scripts/install-interop.sh
export OGP_INTEROP=1 # ogp-cli's interop_*.rs and ogp-ffi's peers.rs run them, and fail if one is missing

step "C and C++ compilers with ASan/UBSan, pkg-config (scripts/install-c.sh)"
scripts/install-c.sh # crates/ogp-ffi/tests/c_examples.rs builds and runs the C examples
cargo build --locked -p ogp-ffi # libogp.a, which those examples link

step "PostgreSQL server for the master's tests (scripts/install-postgres.sh)"
scripts/install-postgres.sh # crates/ogp-cli/tests/master.rs runs a throwaway cluster

step "headless Chromium, chromedriver, selenium for the page's tests (scripts/install-browser.sh)"
scripts/install-browser.sh # crates/ogp-cli/tests/master.rs drives the master's page

step "cargo test"
cargo test --workspace --locked

step "benchmarks compile"
# Only that they compile: without the release profile's fat LTO (which the measurements
# use), so that this step takes minutes, not tens of minutes, on two cores.
CARGO_PROFILE_BENCH_LTO=off CARGO_PROFILE_BENCH_CODEGEN_UNITS=16 CARGO_PROFILE_BENCH_DEBUG=0 \
  cargo bench --workspace --locked --no-run

if [ -x scripts/fuzz.sh ]; then
  step "fuzz smoke (${FUZZ_SMOKE_SECONDS:-10}s per target)"
  scripts/fuzz.sh smoke "${FUZZ_SMOKE_SECONDS:-10}"
fi

step "all tests passed"

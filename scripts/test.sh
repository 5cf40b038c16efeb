#!/usr/bin/env bash
# Runs every test of the project: formatting, lints, docs, unit/integration/property
# tests, interop tests against the real peers, the benchmarks in test mode, and every fuzz
# target over its corpus and mutations of it (fuzz/tests/corpora.rs). This is the README's
# test command and what CI runs (.ci/run). Anything it needs is installed by the
# project's own scripts.
#
#   scripts/test.sh           everything (CI)
#   scripts/test.sh --quick   the edit-compile-test loop: fmt, clippy, unit and property
#                             tests; no installs, no peers, no corpus replay
#
# Each step prints its wall time as it ends, and a table of all of them at the end (also
# when a step fails, so that the log says where the time went).
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK=0
case "${1:-}" in
  --quick) QUICK=1 ;;
  "") ;;
  *)
    sed -n '7,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac

LOGS=target/test-logs

# CI builds once from a clean clone: incremental compilation's caches cost CPU time and
# disk that a single build never uses (a developer's reruns keep them).
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL=0; fi
mkdir -p "$LOGS"

# --- step timing ----------------------------------------------------------------------
STEP_NAMES=()
STEP_SECS=()
STEP_CPU=()
current_cpu=0
current=""
current_start=0
START=$(date +%s)
now() { date +%s; }
# CPU seconds (user + system) of the commands this shell (or subshell) has run and waited
# for: the machine is CPU-bound for most of the run, so the CPU is what a step costs.
HZ=$(getconf CLK_TCK)
cpu() { # sets CPU (not a $(...): a subshell has its own children)
  local stat f
  read -r stat <"/proc/$BASHPID/stat"
  read -r -a f <<<"${stat##*) }"
  CPU=$(((f[13] + f[14]) / HZ))
}
end_step() {
  if [ -n "$current" ]; then
    local took=$(($(now) - current_start))
    cpu
    STEP_NAMES+=("$current")
    STEP_SECS+=("$took")
    STEP_CPU+=("$((CPU - current_cpu))")
    printf -- '--- %s: %ds, %d CPU s\n' "$current" "$took" "$((CPU - current_cpu))"
  fi
  current=""
}
step() {
  end_step
  current="$*"
  current_start=$(now)
  cpu
  current_cpu=$CPU
  printf '\n==> %s\n' "$*"
}
summary() {
  local rc=$1
  end_step
  printf '\n==> step times (wall; CPU s of what the step ran or waited for: a background job counts where it is waited for)\n'
  local i
  for i in "${!STEP_NAMES[@]}"; do
    printf '%6ds %6s  %s\n' "${STEP_SECS[$i]}" "${STEP_CPU[$i]}" "${STEP_NAMES[$i]}"
  done
  cpu
  printf '%6ds  total%s; %s CPU s in all\n' "$(($(now) - START))" "$([ "$rc" = 0 ] || echo " (FAILED, exit $rc)")" "$CPU"
}
# Stops a background job and everything it started (by parent id, never by name; from
# /proc, so that no procps is needed on a fresh machine).
stop_tree() {
  local f child
  for f in /proc/[0-9]*/status; do
    if grep -q "^PPid:[[:space:]]*$1\$" "$f" 2>/dev/null; then
      child="${f#/proc/}"
      stop_tree "${child%/status}"
    fi
  done
  kill "$1" 2>/dev/null || true
}
on_exit() {
  local rc=$?
  if [ -n "${LINT_PID:-}" ] && kill -0 "$LINT_PID" 2>/dev/null; then stop_tree "$LINT_PID"; fi
  summary "$rc"
}
trap on_exit EXIT

# A full run from a clean clone writes several GB of build output; a disk that
# fills up mid-run fails in whatever step happens to write (once: rustdoc). Say so first.
step "free disk space"
df -h . | tail -n 1

# The peers (apt, npm, PyPI) are fetched while the workspace compiles: one background job
# runs the installers one after another (they share apt's lock and one Python venv), and
# the tests that need them wait for it below.
INSTALL_PID=""
if [ "$QUICK" = 0 ]; then
  step "installers started in the background (log: $LOGS/install.log)"
  (
    set -e
    t=$(now)
    scripts/install-c.sh       # C/C++ compilers with ASan/UBSan, pkg-config (C examples)
    scripts/install-interop.sh # qstat, gamedig, python-a2s, opengsq
    scripts/install-postgres.sh # PostgreSQL for the master's store tests
    scripts/install-browser.sh # headless Chromium, chromedriver, selenium (the page)
    scripts/install-gameservers.sh # real game servers: openarena-server (Quake III)
    cpu
    echo "installers done in $(($(now) - t))s, $CPU CPU s"
  ) >"$LOGS/install.log" 2>&1 &
  INSTALL_PID=$!
fi

# Every build here has the `ogp master` command (the cargo feature `master` of ogp-cli,
# off in a default build: README, "Install"), so that clippy, the docs and the tests see
# the master's front-end too.
FEATURES=(--features ogp-cli/master)

step "cargo fmt --check (the workspace, the fuzz package among its members)"
cargo fmt --all -- --check

# The fuzz targets are a library of the workspace (fuzz/): the test build compiles them
# with the rest, and fuzz/tests/corpora.rs runs each over its committed corpus and crash
# reproducers and some thousands of mutations of them, among the tests below. The
# instrumented libFuzzer build (scripts/fuzz.sh: coverage-guided fuzzing, the same target
# code) is not part of this command: it compiled ogp-proto and its dependencies a second
# time, instrumented (about 300 of a fresh run's 1,600 CPU s, on 2 cores), for a smoke of
# one second a target, which the replay does in the test build's own code.

if [ "$QUICK" = 1 ]; then
  step "cargo clippy (all targets, -D warnings)"
  cargo clippy --workspace --all-targets --locked "${FEATURES[@]}" -- -D warnings
  step "ogp-proto without its optional features (toml, bzip2, os-rng, gqp)"
  cargo clippy -p ogp-proto --no-default-features --locked -- -D warnings
  # and the `ogp` of a default build (`cargo install`, `cargo run -- demo`):
  # without the master
  cargo clippy -p ogp-cli --bins --locked -- -D warnings
  step "unit and property tests (cargo test: every crate's unit tests, ogp-proto's test files)"
  cargo test --workspace --lib --bins --locked "${FEATURES[@]}"
  cargo test -p ogp-proto --tests --locked
  exit 0
fi

step "no import circles between modules (scripts/import-cycles.py)"
python3 scripts/import-cycles.py

step "build the tests, linted (cargo test --no-run, all targets; clippy -D warnings)"
# clippy is the compiler of the workspace's own crates in this build (cargo's
# RUSTC_WORKSPACE_WRAPPER, as `cargo clippy` sets it, with the same lints and -D warnings):
# `cargo clippy --all-targets` would compile every dependency a second time, in check
# mode. Every later cargo command of this script sees the same variables, so nothing is
# built twice. The wrapper is scripts/rustdoc.sh, which runs clippy-driver and records how
# the binaries were compiled, for their docs (below).
export RUSTC_WORKSPACE_WRAPPER="$PWD/scripts/rustdoc.sh"
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
# Benchmarks are built here in test mode with the test build (criterion runs each
# benchmark once then; the measurements use `cargo bench`, which builds the `bench`
# profile with fat LTO). The C examples link the libogp.a this build makes in
# target/debug/deps (a `cargo build -p ogp-ffi` would resolve other features than the
# whole workspace's and compile some 45 crates again).
cargo test --workspace --all-targets --locked --no-run "${FEATURES[@]}"

step "installers finish (qstat, gamedig, python-a2s, opengsq, C toolchain, PostgreSQL, Chromium, game servers)"
if ! wait "$INSTALL_PID"; then
  cat "$LOGS/install.log" >&2
  echo "an installer failed (above)" >&2
  exit 1
fi
grep -v '^install-[a-z]*: \(apt-get\|pip\|npm\|python3\)' "$LOGS/install.log" || true
export OGP_INTEROP=1 # ogp-cli's interop_*.rs and ogp-ffi's peers.rs run them, and fail if one is missing

# The binaries' docs and the builds with other features (`ogp-proto` without its optional
# ones, the `ogp` of a default build without the master) are checked in the background
# while the tests run, once scripts/run-tests.py is done with cargo (a marker file: they
# share the build directory's lock, and the proc macros and build scripts the test build
# made). clippy compiles ogp-proto's dependencies in check mode for the first (the test
# build's cannot be reused: other features); the second reuses the test build's. Niced
# below the tests; the step after the tests prints the verdict. The libraries' docs are made by the doc tests' step. Neither runs
# `cargo doc`, which would compile every dependency again in check mode (268 crates):
# scripts/rustdoc.sh gives rustdoc the test build's (`cargo doc --open` is for reading).
rm -f "$LOGS/tests-built"
(
  set -e
  until [ -e "$LOGS/tests-built" ]; do sleep 1; done # (stopped by on_exit if the script fails first)
  t=$(now)
  echo "== the binaries' docs (rustdoc -D warnings, scripts/rustdoc.sh)"
  nice -n 10 scripts/rustdoc.sh bins
  echo "== ogp-proto without its optional features (toml, bzip2, os-rng, gqp)"
  nice -n 10 cargo clippy -p ogp-proto --no-default-features --locked -- -D warnings
  echo "== the ogp of a default build (cargo install, cargo run -- demo): without the master"
  # The whole workspace's test build without ogp-cli's feature `master`: every
  # dependency resolves as in the test build (the master's crate is a member), so only
  # ogp-cli's binary compiles again, linted: 9 CPU s where `cargo clippy -p ogp-cli`
  # compiled ogp-cli's dependencies again in check mode (97).
  nice -n 10 cargo test --workspace --bins --no-run --locked
  cpu
  echo "docs and feature sets done in $(($(now) - t))s, $CPU CPU s"
) >"$LOGS/lint.log" 2>&1 &
LINT_PID=$!

step "cargo test (every test binary, benchmarks and examples in test mode; ${TEST_JOBS:-3} binaries at a time)"
# scripts/run-tests.py runs the binaries `cargo test` builds, several at once (most of the
# slow ones wait on peers and timers), and lists the slowest.
RUN_TESTS_BUILT="$LOGS/tests-built" python3 scripts/run-tests.py --jobs "${TEST_JOBS:-3}" --workspace --all-targets --locked "${FEATURES[@]}"


if [ -n "$LINT_PID" ]; then
  step "the binaries' docs and the other feature sets finish (rustdoc, clippy; started in the background)"
  if ! wait "$LINT_PID"; then
    tail -n 80 "$LOGS/lint.log" >&2
    echo "rustdoc or clippy failed (above; whole log: $LOGS/lint.log)" >&2
    exit 1
  fi
  grep '^== \|done in' "$LOGS/lint.log" || true
fi

step "the libraries' docs (rustdoc -D warnings) and doc tests"
# scripts/rustdoc.sh, as cargo's rustdoc, documents each library into target/doc with the
# arguments cargo gives its doc tests, then runs them.
RUSTDOC="$PWD/scripts/rustdoc.sh" cargo test --workspace --doc --locked "${FEATURES[@]}"

step "all tests passed"

#!/usr/bin/env bash
# Coverage-guided fuzzing of the ogp-proto decoders with libFuzzer, on STABLE Rust.
#
#   scripts/fuzz.sh build                  build the fuzz binary, every target in it (fuzz/target/)
#   scripts/fuzz.sh list                   print the target names
#   scripts/fuzz.sh run TARGET SECONDS [LIBFUZZER_ARGS...]
#                                          fuzz one target; new corpus entries go to
#                                          fuzz/corpus-run/TARGET, crashes to fuzz/artifacts/TARGET
#   scripts/fuzz.sh smoke SECONDS          run every target for SECONDS each; fails on any crash
#   scripts/fuzz.sh repro TARGET FILE...   run a target once on the given inputs (no fuzzing)
#   scripts/fuzz.sh tmin TARGET FILE       minimise a crashing input (to fuzz/artifacts/TARGET/)
#
# No nightly and no cargo-fuzz: the fuzz package (fuzz/, a workspace member) is built
# with the instrumentation flags cargo-fuzz passes for `--sanitizer none`, all of which are
# stable rustc options (-Cpasses=sancov-module plus LLVM's sanitizer-coverage options);
# libfuzzer-sys compiles libFuzzer itself with the C++ compiler (g++/clang++).
# Environment: FUZZ_JOBS (cargo -j), FUZZ_TRIPLE (default: the host triple),
# FUZZ_EXTRA_RUSTFLAGS (appended to the instrumentation flags), FUZZ_TARGET_DIR
# (fuzz/target), FUZZ_LOCKED=1 (cargo --locked), FUZZ_REBUILD=0 (run/smoke skip the cargo build when the binaries exist),
# FUZZ_CODEGEN_UNITS (1, as cargo-fuzz; the test command's smoke build uses 16: about half
# the build time, for a few percent of executions per second), FUZZ_SMOKE_JOBS (targets
# smoked at once in `smoke`; default one per core), FUZZ_TIMEOUT (libFuzzer's -timeout in
# seconds of wall time an input; 5).
#
# All the targets are linked into ONE binary, fuzz/target/TRIPLE/release/ogp_fuzz, which
# runs the target named by the environment variable OGP_FUZZ_TARGET (this script sets it;
# to run the binary by hand: OGP_FUZZ_TARGET=ogp_datagram .../ogp_fuzz [libFuzzer args]).
# Each target still runs in its own process with its own corpus, dictionary and max_len.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FUZZ="$ROOT/fuzz"
TARGET_DIR="${FUZZ_TARGET_DIR:-$FUZZ/target}"
TARGETS=(ogp_datagram ogp_answer_body ogp_query_body ogp_split state_json
         gqp_query gqp_reply ogp_draft_datagram responder client_machines gs3_datagram
         a2s_reply a2s_split a2s_request valve_master master_registry
         quake3_datagram bedrock_datagram dpmaster_request dpmaster_page minecraft_stream
         gs1_datagram unreal2_datagram gs2_datagram ase_datagram teeworlds_datagram
         openttd_stream doom3_datagram minetest_datagram mumble_datagram doom_datagram
         samp_datagram cube2_datagram quakeworld_datagram qwmaster_datagram teemaster
         cube2_master_stream teemaster7 http_response doomsday_datagram fivem_http
         battlefield_stream teamspeak3_stream teamspeak2_stream weblist_json
         oneshot_datagram http_games beammp_stream starmade_stream nadeo_stream
         tibia_stream)

TRIPLE="${FUZZ_TRIPLE:-$(rustc -vV | sed -n 's/^host: //p')}"

# What cargo-fuzz 0.12/0.13 passes for a release build without a sanitizer, plus debug
# assertions and overflow checks (cargo-fuzz's `-a`): the decoders promise checked
# arithmetic, so an overflow must be a crash, not a silent wrap.
INSTRUMENT=(
    -Cpasses=sancov-module
    -Cllvm-args=-sanitizer-coverage-level=4
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
    -Cllvm-args=-sanitizer-coverage-pc-table
    -Cllvm-args=-sanitizer-coverage-trace-compares
    -Cllvm-args=-simplifycfg-branch-fold-threshold=0
    --cfg fuzzing
    -Clink-dead-code
    -Cdebug-assertions
    -Coverflow-checks
    "-Ccodegen-units=${FUZZ_CODEGEN_UNITS:-1}"
)
case "$TRIPLE" in
    *-linux-*) INSTRUMENT+=(-Cllvm-args=-sanitizer-coverage-stack-depth) ;;
esac

usage() {
    sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
}

known_target() {
    local t
    for t in "${TARGETS[@]}"; do
        [[ "$t" == "$1" ]] && return 0
    done
    echo "unknown target '$1' (known: ${TARGETS[*]})" >&2
    exit 2
}

max_len_for() {
    case "$1" in
        ogp_answer_body) echo 9000 ;; # answer bodies up to 8 KiB and a bit
        ogp_split) echo 9000 ;;       # several ~470-byte split packets
        state_json) echo 4096 ;;      # the example state file is 2.1 KB
        gs3_datagram) echo 9000 ;;    # several reply packets of up to 1400 bytes
        a2s_reply) echo 9000 ;;       # reassembled replies (RULES of several fragments)
        a2s_split) echo 9000 ;;       # several fragments of up to 1400 bytes
        fivem_http) echo 9000 ;;      # three HTTP responses with their JSON documents
        weblist_json) echo 9000 ;;    # a list's JSON document
        http_games) echo 9000 ;;      # up to three HTTP responses with their JSON documents
        nadeo_stream) echo 9000 ;;    # the handshake and six XML-RPC replies
        tibia_stream) echo 4096 ;;    # the status document (The Forgotten Server's: under 1 KiB)
        *) echo 2048 ;;               # one datagram / query body
    esac
}

# The one fuzz binary (fuzz_targets/ogp_fuzz.rs); OGP_FUZZ_TARGET picks the target.
# FUZZ_PROFILE=smoke builds the `smoke` profile of fuzz/Cargo.toml (opt-level 1, no
# debug info: a quarter less of the build's CPU, for the test command's short smoke run)
# instead of `release` (the one to fuzz with for long).
PROFILE="${FUZZ_PROFILE:-release}"
BIN="$TARGET_DIR/$TRIPLE/$PROFILE/ogp_fuzz"

build() {
    local flags="${INSTRUMENT[*]} ${FUZZ_EXTRA_RUSTFLAGS:-}"
    local extra=()
    if [[ -n "${FUZZ_JOBS:-}" ]]; then extra+=(-j "$FUZZ_JOBS"); fi
    # The workspace's Cargo.lock pins every version (the fuzz package is a member, built
    # here with its own flags and target directory). FUZZ_LOCKED=1 is cargo's --locked.
    if [[ "${FUZZ_LOCKED:-0}" == 1 ]]; then extra+=(--locked); fi
    # --target makes RUSTFLAGS apply to the target only, not to build scripts and proc
    # macros (serde_derive), as cargo-fuzz does. CARGO_ENCODED_RUSTFLAGS would override
    # RUSTFLAGS, so it is cleared.
    env -u CARGO_ENCODED_RUSTFLAGS RUSTFLAGS="$flags" \
        cargo build --profile "$PROFILE" \
        --manifest-path "$FUZZ/Cargo.toml" \
        --target "$TRIPLE" \
        --target-dir "$TARGET_DIR" \
        --features libfuzzer --bin ogp_fuzz "${extra[@]}"
    # The binary's list of targets (printed when OGP_FUZZ_TARGET names none) must be
    # this script's: a target missing from either would silently never be smoked.
    local names
    names="$({ OGP_FUZZ_TARGET= "$BIN" -runs=0 2>&1 || true; } | sed -n 's/^ogp_fuzz: set OGP_FUZZ_TARGET to one of: \(.*\) (got .*/\1/p')"
    if [[ "$names" != "${TARGETS[*]}" ]]; then
        echo "the targets of fuzz_targets/ogp_fuzz.rs ($names) differ from scripts/fuzz.sh's (${TARGETS[*]})" >&2
        exit 1
    fi
}

ensure_built() {
    if [[ ! -x "$BIN" || "${FUZZ_REBUILD:-1}" == 1 ]]; then
        build
    fi
}

# run_target TARGET SECONDS [extra libFuzzer args...]
run_target() {
    local target="$1" seconds="$2"
    shift 2
    local seeds="$FUZZ/corpus/$target"
    local scratch="$FUZZ/corpus-run/$target"
    local artifacts="$FUZZ/artifacts/$target"
    mkdir -p "$scratch" "$artifacts"
    local corpora=("$scratch")
    if [[ -d "$seeds" ]]; then corpora+=("$seeds"); fi
    local dict=()
    if [[ -f "$FUZZ/dict/$target.dict" ]]; then dict=(-dict="$FUZZ/dict/$target.dict"); fi
    # The first corpus directory is the one libFuzzer writes new inputs to: the scratch
    # one. The committed seeds are only read.
    OGP_FUZZ_TARGET="$target" "$BIN" \
        -artifact_prefix="$artifacts/" \
        -max_total_time="$seconds" \
        -max_len="$(max_len_for "$target")" \
        -rss_limit_mb=2048 \
        -timeout="${FUZZ_TIMEOUT:-5}" \
        -print_final_stats=1 \
        "${dict[@]}" \
        "$@" \
        "${corpora[@]}"
}

cmd="${1:-}"
[[ -n "$cmd" ]] || usage
shift
case "$cmd" in
    build)
        build
        ;;
    list)
        printf '%s\n' "${TARGETS[@]}"
        ;;
    run)
        [[ $# -ge 2 ]] || usage
        target="$1"
        seconds="$2"
        shift 2
        known_target "$target"
        ensure_built
        run_target "$target" "$seconds" "$@"
        ;;
    smoke)
        [[ $# -eq 1 ]] || usage
        seconds="$1"
        ensure_built
        # The targets run FUZZ_SMOKE_JOBS at a time (default: one per core): each gets its
        # own core for the same wall time as when they ran one after another.
        jobs="${FUZZ_SMOKE_JOBS:-$(nproc 2>/dev/null || echo 1)}"
        logdir="$FUZZ/corpus-run/logs"
        mkdir -p "$logdir"
        smoke_one() { # runs one target, writes its verdict line to $logdir/$t.status
            local t="$1" start=$SECONDS status execs
            if run_target "$t" "$seconds" >"$logdir/$t.log" 2>&1; then
                status=ok
            else
                status=FAILED
            fi
            execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$logdir/$t.log" | tail -n1)"
            echo "=== $t: $status, ${execs:-?} execs in $((SECONDS - start))s (log: $logdir/$t.log) ===" >&2
            echo "$status" >"$logdir/$t.status"
        }
        running=0
        for t in "${TARGETS[@]}"; do
            rm -f "$logdir/$t.status"
            echo "=== smoke: $t for ${seconds}s ===" >&2
            smoke_one "$t" &
            running=$((running + 1))
            if [[ $running -ge $jobs ]]; then
                wait -n || true
                running=$((running - 1))
            fi
        done
        wait || true
        failed=()
        for t in "${TARGETS[@]}"; do
            if [[ "$(cat "$logdir/$t.status" 2>/dev/null)" != ok ]]; then
                failed+=("$t")
                tail -n 60 "$logdir/$t.log" >&2
            fi
        done
        if [[ ${#failed[@]} -gt 0 ]]; then
            echo "smoke FAILED: ${failed[*]} (crashing inputs in $FUZZ/artifacts/)" >&2
            exit 1
        fi
        echo "smoke ok: ${TARGETS[*]}" >&2
        ;;
    repro)
        [[ $# -ge 2 ]] || usage
        target="$1"
        shift
        known_target "$target"
        ensure_built
        OGP_FUZZ_TARGET="$target" "$BIN" -runs=1 "$@"
        ;;
    tmin)
        [[ $# -eq 2 ]] || usage
        known_target "$1"
        ensure_built
        mkdir -p "$FUZZ/artifacts/$1"
        OGP_FUZZ_TARGET="$1" "$BIN" -minimize_crash=1 -max_total_time=60 -runs=100000 \
            -exact_artifact_path="$FUZZ/artifacts/$1/minimized-$(basename "$2")" "$2"
        ;;
    *)
        usage
        ;;
esac

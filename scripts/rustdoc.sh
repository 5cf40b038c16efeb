#!/usr/bin/env bash
# The workspace's docs, built with rustdoc's lints as errors (-D warnings, as `RUSTDOCFLAGS="-D
# warnings" cargo doc --workspace --no-deps` would), from the dependencies the test build
# compiled. `cargo doc` compiles every dependency a second time in check mode first (268
# crates: about 170 of the 1,600 CPU seconds of a fresh run of scripts/test.sh); rustdoc
# itself needs only their metadata, which the test build's rlibs carry. scripts/test.sh
# uses this script in three roles:
#
#   RUSTC_WORKSPACE_WRAPPER=scripts/rustdoc.sh   while the tests build: runs clippy-driver
#       (the lints, as before) and records how each binary target (`ogp`, `ogp-load`) was
#       compiled: its arguments and cargo's environment, in target/rustdoc/
#   RUSTDOC=scripts/rustdoc.sh cargo test --doc  for each library's doc tests, first
#       documents the library with the same arguments (its dependencies, features, cfgs,
#       lints) into target/doc, then runs the doc tests as asked
#   scripts/rustdoc.sh bins                      documents the recorded binaries into
#       target/doc/bin (private items too, as `cargo doc` does for binaries)
#
# Either documenting role fails on any rustdoc warning. `cargo doc` stays the way to
# browse the docs (`cargo doc --open`); this is the check.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RECORDS="$ROOT/target/rustdoc"
DOC="$ROOT/target/doc"
REAL_RUSTDOC="$(rustc --print sysroot)/bin/rustdoc"

# A compiler argument list turned into rustdoc's: the crate, its sources, dependencies,
# cfgs and lints are kept; what only code generation and cargo's JSON messages need is
# dropped. Reads "$@", writes the array DOC_ARGS.
doc_args() {
    DOC_ARGS=()
    while [ $# -gt 0 ]; do
        case "$1" in
            --emit | --out-dir | -o | -C | --json | --error-format | --diagnostic-width | --test-run-directory | --test-args | --color)
                shift # and its value
                ;;
            --emit=* | --out-dir=* | -C* | --json=* | --error-format=* | --diagnostic-width=* | --color=* | --test) ;;
            *) DOC_ARGS+=("$1") ;;
        esac
        shift
    done
}

case "${1:-}" in
    bins)
        shopt -s nullglob
        for args in "$RECORDS"/*.args; do
            name="$(basename "$args" .args)"
            mapfile -d '' -t argv <"$args"
            mapfile -d '' -t envv <"$RECORDS/$name.env"
            doc_args "${argv[@]}"
            echo "rustdoc: the binary $name" >&2
            if ! (cd "$(cat "$RECORDS/$name.cwd")" && env "${envv[@]}" "$REAL_RUSTDOC" "${DOC_ARGS[@]}" \
                --document-private-items -o "$DOC/bin" -D warnings); then
                echo "scripts/rustdoc.sh: rustdoc warned on the docs of the binary $name (above)" >&2
                exit 1
            fi
        done
        ;;
    */rustc | rustc)
        # The workspace wrapper: "$1" is the compiler. A binary target (not its unit-test
        # build, not an example) is recorded, then compiled with clippy as before.
        rustc="$1"
        shift
        src=""
        bin=0
        test=0
        for a in "$@"; do
            case "$a" in
                *.rs) [ -z "$src" ] && src="$a" ;;
                bin) bin=1 ;;
                --test) test=1 ;;
            esac
        done
        if [ "$bin" = 1 ] && [ "$test" = 0 ] && [ -n "${CARGO_BIN_NAME:-}" ] && [[ "$src" == */src/* || "$src" == src/* ]]; then
            mkdir -p "$RECORDS"
            printf '%s\0' "$@" >"$RECORDS/$CARGO_BIN_NAME.args"
            # cargo's variables (env!("CARGO_PKG_VERSION"), OUT_DIR) and the working
            # directory the relative source paths are relative to
            env -0 | grep -z '^CARGO_\|^OUT_DIR=' | grep -zv '^CARGO_MAKEFLAGS=' >"$RECORDS/$CARGO_BIN_NAME.env" || true
            printf '%s' "$PWD" >"$RECORDS/$CARGO_BIN_NAME.cwd"
        fi
        exec clippy-driver "$rustc" "$@"
        ;;
    *)
        # cargo running rustdoc: for doc tests (--test), document the library first.
        for a in "$@"; do
            if [ "$a" = --test ]; then
                doc_args "$@"
                if ! "$REAL_RUSTDOC" "${DOC_ARGS[@]}" -o "$DOC" -D warnings; then
                    echo "scripts/rustdoc.sh: rustdoc warned on this library's docs (above); its doc tests were not run" >&2
                    exit 1
                fi
                break
            fi
        done
        exec "$REAL_RUSTDOC" "$@"
        ;;
esac

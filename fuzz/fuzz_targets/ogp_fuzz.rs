//! The one fuzz binary: every target of `fuzz_targets/` (modules of the `ogp_fuzz`
//! library, `ogp_fuzz::TARGETS`) linked into one instrumented executable, the target
//! chosen by the environment variable `OGP_FUZZ_TARGET` (a name that `scripts/fuzz.sh
//! list` prints; `scripts/fuzz.sh run TARGET …` sets it). Built only with the feature
//! `libfuzzer` (scripts/fuzz.sh), with the instrumentation flags.
//!
//! One binary instead of one per target: the instrumented `ogp-proto`, libFuzzer and the
//! helpers are linked once, not 21 times (a cold `scripts/fuzz.sh build` with 16 codegen
//! units: 196 CPU s instead of 220; fuzz/README.md). Each target is still fuzzed on its
//! own, in its own process with its own corpus: the counters of the other targets' code
//! are never hit, so they add nothing to libFuzzer's coverage.
#![no_main]

use std::sync::OnceLock;

use ogp_fuzz::{Target, TARGETS};

/// The target `OGP_FUZZ_TARGET` names, chosen once before the first input.
static TARGET: OnceLock<Target> = OnceLock::new();

/// Chooses the target, or exits with status 2 and the list of names (before any input
/// runs, so that a wrong name is not reported as a crash).
fn choose() {
    let name = std::env::var("OGP_FUZZ_TARGET").unwrap_or_default();
    match TARGETS.iter().find(|(n, _)| *n == name) {
        Some(&(_, run)) => {
            let _ = TARGET.set(run);
        }
        None => {
            let names: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
            eprintln!(
                "ogp_fuzz: set OGP_FUZZ_TARGET to one of: {} (got {name:?})",
                names.join(" ")
            );
            std::process::exit(2);
        }
    }
}

libfuzzer_sys::fuzz_target!(init: choose(), |data: &[u8]| {
    if let Some(run) = TARGET.get() {
        run(data);
    }
});

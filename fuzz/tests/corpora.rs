//! Every fuzz target over its committed seeds (`fuzz/corpus/TARGET/`) and crash
//! reproducers (`fuzz/artifacts/TARGET/`, where kept), then over mutations of them: the
//! targets as plain code, without libFuzzer or its instrumentation, in the test build.
//!
//! This is the test command's fuzz check. It replays what fuzzing found before (a fixed
//! crash must stay fixed) and runs some thousands of new inputs through each target's
//! assertions (round trips, offsets, caps), cheaply: the targets share the test build's
//! compiled `ogp-proto`. Coverage-guided fuzzing is `scripts/fuzz.sh run TARGET SECONDS`
//! (libFuzzer, instrumented), which runs the same target code.
//!
//! The mutations are deterministic (a fixed seed, `OGP_FUZZ_REPLAY_SEED` to pick another;
//! `OGP_FUZZ_REPLAY_MUTATIONS` for more or fewer a target). An input that panics is saved
//! under the test build's temporary directory and named with the command that replays it;
//! one that runs longer than [`HANG`] stops the test (a hang must not eat the CI's time).

use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ogp_fuzz::{Target, TARGETS};

/// Mutated inputs a target gets by default (its seeds come first, each once).
const MUTATIONS: usize = 1000;
/// The longest a mutated input may grow (the largest `max_len` of scripts/fuzz.sh).
const MAX_LEN: usize = 9000;
/// One input running this long is a hang: the test stops and saves it.
const HANG: Duration = Duration::from_secs(30);

/// The fuzz package's directory.
fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The target names of scripts/fuzz.sh's `TARGETS=( … )`.
fn script_targets() -> Vec<String> {
    let script = fuzz_dir().join("../scripts/fuzz.sh");
    let text = fs::read_to_string(&script).expect("scripts/fuzz.sh");
    let start = text
        .find("TARGETS=(")
        .expect("TARGETS=( in scripts/fuzz.sh")
        + "TARGETS=(".len();
    let end = start + text[start..].find(')').expect("the end of TARGETS");
    text[start..end]
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// The files of a directory, sorted by name (none if it does not exist).
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<u8>)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| {
            let path = e.path();
            let bytes = fs::read(&path).expect("a corpus file");
            (path.display().to_string(), bytes)
        })
        .collect();
    out.sort();
    out
}

/// xorshift64*: a small deterministic generator (the inputs of a run are a function of
/// the seed, so a failure reproduces).
struct Rng(u64);

impl Rng {
    fn new(seed: u64, target: &str) -> Rng {
        // FNV-1a of the name, so that each target has its own stream
        let mut h = 0xcbf2_9ce4_8422_2325_u64 ^ seed;
        for b in target.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        Rng(h | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A number below `n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn byte(&mut self) -> u8 {
        self.next().to_le_bytes()[0]
    }
}

/// Values at the edges of the widths that wire formats use.
const INTERESTING: &[u64] = &[
    0,
    1,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    u64::MAX,
];

/// One to four of libFuzzer's kinds of change, stacked, to `input`; `other` is another
/// input of the same target to splice with.
fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = v.len();
        match rng.below(10) {
            // flip a bit
            0 if len > 0 => {
                let i = rng.below(len);
                v[i] ^= 1 << rng.below(8);
            }
            // a random byte
            1 if len > 0 => {
                let i = rng.below(len);
                v[i] = rng.byte();
            }
            // an interesting integer, 1, 2, 4 or 8 bytes, either byte order
            2 if len > 0 => {
                let value = INTERESTING[rng.below(INTERESTING.len())];
                let width = 1 << rng.below(4);
                let bytes = if rng.below(2) == 0 {
                    value.to_le_bytes()
                } else {
                    value.to_be_bytes()
                };
                let bytes = if bytes[..8 - width].iter().all(|&b| b == 0) {
                    &bytes[8 - width..]
                } else {
                    &bytes[..width]
                };
                let at = rng.below(len);
                for (k, b) in bytes.iter().enumerate() {
                    if let Some(slot) = v.get_mut(at + k) {
                        *slot = *b;
                    }
                }
            }
            // cut a range out
            3 if len > 0 => {
                let at = rng.below(len);
                let n = 1 + rng.below((len - at).min(64));
                v.drain(at..at + n);
            }
            // insert random bytes
            4 => {
                let at = rng.below(len + 1);
                let n = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.byte()).collect();
                v.splice(at..at, bytes);
            }
            // repeat a range (lists, records, fragments)
            5 if len > 0 => {
                let at = rng.below(len);
                let n = 1 + rng.below((len - at).min(256));
                let chunk = v[at..at + n].to_vec();
                let to = rng.below(len + 1);
                v.splice(to..to, chunk);
            }
            // truncate
            6 if len > 0 => v.truncate(rng.below(len)),
            // splice: this input's head, the other's tail
            7 if !other.is_empty() => {
                let keep = rng.below(len + 1);
                let from = rng.below(other.len());
                v.truncate(keep);
                v.extend_from_slice(&other[from..]);
            }
            // a decimal number made long, negative or empty (text protocols: lengths,
            // counts and ports written in ASCII)
            8 => {
                let digits: Vec<usize> = (0..len).filter(|&i| v[i].is_ascii_digit()).collect();
                if let Some(&i) = digits.get(rng.below(digits.len())) {
                    let with: &[u8] = match rng.below(4) {
                        0 => b"99999999999999999999",
                        1 => b"-1",
                        2 => b"",
                        _ => b"4294967296",
                    };
                    v.splice(i..=i, with.iter().copied());
                }
            }
            // a byte that a text format gives meaning to
            _ if len > 0 => {
                let special = b"\0\\\"\n\r\t ;:,=&<>{}[]%/";
                let i = rng.below(len);
                v[i] = special[rng.below(special.len())];
            }
            _ => v.push(rng.byte()),
        }
        v.truncate(MAX_LEN);
    }
    v
}

/// What a worker is running now, for the watchdog: the target, the input and since when.
type Running = Mutex<Option<(&'static str, Vec<u8>, Instant)>>;

/// A target's outcome: its index in [`TARGETS`], its failures, its seed count, its time.
type Outcome = (usize, Vec<String>, usize, Duration);

/// Saves an input that failed, and says how to replay it.
fn save(target: &str, what: &str, input: &[u8]) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("fuzz-replay")
        .join(target);
    let _ = fs::create_dir_all(&dir);
    let path = dir.join(what.replace(['/', ' '], "_"));
    match fs::write(&path, input) {
        Ok(()) => format!(
            "saved as {} (replay: scripts/fuzz.sh repro {target} {}, or this test)",
            path.display(),
            path.display()
        ),
        Err(e) => format!("not saved: {e}"),
    }
}

/// Runs one input; a panic becomes an error line.
fn run_one(
    run: Target,
    target: &'static str,
    what: &str,
    input: &[u8],
    now: &Running,
) -> Option<String> {
    if let Ok(mut slot) = now.lock() {
        *slot = Some((target, input.to_vec(), Instant::now()));
    }
    let result = panic::catch_unwind(AssertUnwindSafe(|| run(input)));
    if let Ok(mut slot) = now.lock() {
        *slot = None;
    }
    match result {
        Ok(()) => None,
        Err(_) => Some(format!(
            "{target}: panicked on {what}: {}",
            save(target, what, input)
        )),
    }
}

/// One target: its seeds and reproducers, then `mutations` mutants of them.
fn replay(
    target: &'static str,
    run: Target,
    seed: u64,
    mutations: usize,
    now: &Running,
) -> (Vec<String>, usize, usize) {
    let dir = fuzz_dir();
    let mut inputs = files(&dir.join("corpus").join(target));
    let seeds = inputs.len();
    inputs.extend(files(&dir.join("artifacts").join(target)));
    let mut failures = Vec::new();
    for (name, bytes) in &inputs {
        failures.extend(run_one(run, target, name, bytes, now));
    }
    // the bases of the mutations: the inputs, and a few random ones (a target without
    // seeds starts from those)
    let mut rng = Rng::new(seed, target);
    let mut bases: Vec<Vec<u8>> = inputs.into_iter().map(|(_, b)| b).collect();
    bases.push(Vec::new());
    for n in [1, 4, 16, 64, 300] {
        bases.push((0..n).map(|_| rng.byte()).collect());
    }
    for i in 0..mutations {
        let base = &bases[rng.below(bases.len())];
        let other = &bases[rng.below(bases.len())];
        let input = mutate(&mut rng, base, other);
        if let Some(f) = run_one(run, target, &format!("mutant-{seed}-{i}"), &input, now) {
            failures.push(f);
        }
    }
    (failures, seeds, mutations)
}

#[test]
fn every_target_is_in_the_script_and_has_seeds() {
    let names: Vec<String> = TARGETS.iter().map(|(n, _)| (*n).to_owned()).collect();
    assert_eq!(
        names,
        script_targets(),
        "fuzz_targets/mod.rs's TARGETS and scripts/fuzz.sh's must list the same targets in the same order"
    );
    let without: Vec<&str> = TARGETS
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| files(&fuzz_dir().join("corpus").join(n)).is_empty())
        .collect();
    assert!(
        without.is_empty(),
        "targets without seeds in fuzz/corpus/ (add a real server's bytes in the target's input format): {without:?}"
    );
}

#[test]
fn every_corpus_and_its_mutations_pass_their_targets() {
    let seed = std::env::var("OGP_FUZZ_REPLAY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x06f2_0001_u64);
    let mutations = std::env::var("OGP_FUZZ_REPLAY_MUTATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(MUTATIONS);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Outcome>> = Mutex::new(Vec::new());
    let running: Vec<Running> = (0..workers).map(|_| Mutex::new(None)).collect();
    let done = AtomicUsize::new(0);
    // the targets' own assertions print their panics: keep them, they say what failed
    std::thread::scope(|s| {
        for now in &running {
            let (next, results, done) = (&next, &results, &done);
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(target, run)) = TARGETS.get(i) else {
                        break;
                    };
                    let t = Instant::now();
                    let (failures, seeds, _) = replay(target, run, seed, mutations, now);
                    if let Ok(mut r) = results.lock() {
                        r.push((i, failures, seeds, t.elapsed()));
                    }
                }
                done.fetch_add(1, Ordering::Relaxed);
            });
        }
        // the watchdog
        while done.load(Ordering::Relaxed) < workers {
            std::thread::sleep(Duration::from_millis(100));
            for now in &running {
                let hung = now.lock().ok().and_then(|slot| {
                    slot.as_ref()
                        .filter(|(_, _, since)| since.elapsed() > HANG)
                        .map(|(t, input, _)| (*t, input.clone()))
                });
                if let Some((target, input)) = hung {
                    eprintln!(
                        "{target}: an input ran for more than {HANG:?}: {}",
                        save(target, "hang", &input)
                    );
                    std::process::exit(101);
                }
            }
        }
    });
    let mut results = results.into_inner().expect("results");
    results.sort_by_key(|r| r.0);
    let mut failures = Vec::new();
    let mut slowest: Vec<(Duration, &str)> = Vec::new();
    for (i, f, seeds, took) in &results {
        failures.extend(f.iter().cloned());
        slowest.push((*took, TARGETS[*i].0));
        assert!(*seeds > 0 || mutations > 0);
    }
    slowest.sort_by(|a, b| b.cmp(a));
    println!(
        "{} targets, {mutations} mutants each (seed {seed:#x}); slowest: {}",
        results.len(),
        slowest
            .iter()
            .take(5)
            .map(|(d, t)| format!("{t} {:.2}s", d.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert_eq!(results.len(), TARGETS.len(), "every target ran");
    assert!(
        failures.is_empty(),
        "{} input(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

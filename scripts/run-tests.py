#!/usr/bin/env python3
"""Runs the workspace's test binaries several at a time, as `cargo test` would one by one.

    scripts/run-tests.py [--jobs N] [CARGO TEST ARGS...] [-- TEST BINARY ARGS...]

`cargo test` runs its test binaries one after another; most of our slow ones wait on
peers, child processes and timers rather than on the CPU, so running a few at once
shortens the step without changing any test. Each binary still runs its own tests as
libtest does (in threads, in one process), with the working directory and
CARGO_MANIFEST_DIR cargo gives it. The binaries are built first with
`cargo test --no-run` (so the build itself is cargo's, with its own parallelism), then
started longest first (durations of the previous run, in target/test-logs/; on a clean
clone, those of a run recorded in scripts/test-durations.json), and each
binary's whole output is printed when it ends, so outputs never interleave. A binary
built from `tests/DIR/main.rs` (a crate's test files as modules of one binary, built and
linked once) is run once per top-level module, each its own process, as separate files
would be.

Prints libtest's own lines per binary, then the slowest binaries, then one line
`tests: N passed, N failed` (and skipped); exits non-zero when a binary failed or could
not be run. Doc tests are not binaries: run them with `cargo test --doc`.
"""

import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGS = os.path.join(ROOT, "target", "test-logs")
DURATIONS = os.path.join(LOGS, "durations.json")
# A clean clone (CI) has no previous run: the order then comes from a recorded one, so
# that the binaries that wait longest (the masters, the C peers, the interop tests) start
# first there too instead of in name order.
RECORDED = os.path.join(ROOT, "scripts", "test-durations.json")


def parse_args(argv):
    jobs = max(2, (os.cpu_count() or 1))
    cargo_args, bin_args = [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--jobs" or a.startswith("--jobs="):
            value = a.split("=", 1)[1] if "=" in a else (argv[i + 1] if i + 1 < len(argv) else "")
            if not value.isdigit():
                sys.exit(f"run-tests: --jobs takes a whole number, not {value!r}")
            jobs = int(value)
            i += 1 if "=" in a else 2
            continue
        elif a == "--":
            bin_args = argv[i + 1 :]
            break
        else:
            cargo_args.append(a)
        i += 1
    if jobs < 1:
        sys.exit("run-tests: --jobs must be at least 1")
    return jobs, cargo_args, bin_args


def build(cargo_args):
    """Builds the test binaries; returns [(label, executable, package dir)]."""
    cmd = ["cargo", "test", "--no-run", "--message-format=json-render-diagnostics"] + cargo_args
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    found = []
    for line in proc.stdout:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg.get("profile", {}).get("test"):
            continue
        target = msg["target"]
        pkg_dir = os.path.dirname(msg["manifest_path"])
        src = os.path.relpath(target["src_path"], pkg_dir)
        kind = target["kind"][0]
        label = f"{os.path.basename(pkg_dir)} {'unittests ' if kind in ('lib', 'bin') else ''}{src}"
        found.append((label, msg["executable"], pkg_dir))
    if proc.wait() != 0:
        sys.exit(f"run-tests: `{' '.join(cmd)}` failed (exit {proc.returncode})")
    return found


def shard(binaries, bin_args):
    """Splits each binary built from `tests/DIR/main.rs` into one run per top-level
    module (the files that were test binaries of their own): [(label, exe, pkg_dir,
    args)]. A run passes `--exact` and its tests' names, so a module's tests share a
    process only with each other, as when each file was a binary. Not when the caller
    gives test arguments of their own (those go to each binary whole)."""
    out = []
    for label, exe, pkg_dir in binaries:
        parts = label.split(" ", 1)[-1].split(os.sep)
        if bin_args or len(parts) != 3 or parts[0] != "tests" or parts[2] != "main.rs":
            out.append((label, exe, pkg_dir, []))
            continue
        try:
            listed = subprocess.run(
                [exe, "--list", "--format", "terse"],
                cwd=pkg_dir,
                env=dict(os.environ, CARGO_MANIFEST_DIR=pkg_dir),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=60,
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            listed = ""
        groups = {}
        for line in listed.splitlines():
            if not line.endswith(": test"):
                continue
            name = line[: -len(": test")]
            module = name.split("::", 1)[0] if "::" in name else ""
            groups.setdefault(module, []).append(name)
        if not groups:
            # not listable: run it whole and let its own output say why
            out.append((label, exe, pkg_dir, []))
            continue
        for module, names in sorted(groups.items()):
            sub = f"{label} {module}" if module else label
            out.append((sub, exe, pkg_dir, ["--exact"] + names))
    return out


def load_durations():
    for path in (DURATIONS, RECORDED):
        try:
            with open(path) as f:
                return {k: float(v) for k, v in json.load(f).items()}
        except (OSError, ValueError, AttributeError):
            pass
    return {}


def counts(output):
    """Sums libtest's `test result:` lines: (passed, failed, ignored)."""
    p = f = ig = 0
    for line in output.splitlines():
        if line.startswith("test result:"):
            words = line.replace(";", "").split()
            for n, w in zip(words, words[1:]):
                if n.isdigit():
                    if w == "passed":
                        p += int(n)
                    elif w == "failed":
                        f += int(n)
                    elif w == "ignored":
                        ig += int(n)
    return p, f, ig


def main():
    jobs, cargo_args, bin_args = parse_args(sys.argv[1:])
    binaries = build(cargo_args)
    os.makedirs(LOGS, exist_ok=True)
    # Done with cargo: say so to whoever waits for the build directory's lock
    # (scripts/test.sh's background docs and lints).
    marker = os.environ.get("RUN_TESTS_BUILT")
    if marker:
        open(marker, "w").close()
    binaries = shard(binaries, bin_args)
    previous = load_durations()
    # Longest first: the slow binaries start at once and the short ones fill the gaps.
    binaries.sort(key=lambda b: -previous.get(b[0], 1e9))
    lock = threading.Lock()
    results = {}

    def run(b):
        label, exe, pkg_dir, args = b
        env = dict(os.environ, CARGO_MANIFEST_DIR=pkg_dir)
        t = time.monotonic()
        cpu = 0.0
        try:
            # os.wait4 rather than subprocess's own wait: the binary's CPU time (with
            # what it started and waited for), which the table below lists
            child = subprocess.Popen(
                [exe] + args + bin_args,
                cwd=pkg_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
            )
            out = child.stdout.read()
            child.stdout.close()
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = rc = os.waitstatus_to_exitcode(status)
            cpu = usage.ru_utime + usage.ru_stime
        except OSError as e:
            rc, out = -1, f"run-tests: cannot run {exe}: {e}\n"
        took = time.monotonic() - t
        with lock:
            results[label] = (rc, took, out, cpu)
            print(f"     Running {label} ({os.path.relpath(exe, ROOT)}) [{took:.1f}s, {cpu:.1f} CPU s]", flush=True)
            sys.stdout.write(out if out.endswith("\n") or not out else out + "\n")
            sys.stdout.flush()

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(run, binaries))
    wall = time.monotonic() - started

    with open(DURATIONS, "w") as f:
        json.dump({k: round(v[1], 2) for k, v in results.items()}, f, indent=1, sort_keys=True)

    passed = failed = ignored = 0
    broken = []
    for label, (rc, _, out, _) in results.items():
        p, f, ig = counts(out)
        passed, failed, ignored = passed + p, failed + f, ignored + ig
        if rc != 0:
            broken.append(label)
            if f == 0:
                failed += 1  # crashed or could not start: count it once
    print(f"\nslowest test binaries ({len(results)} run, {jobs} at a time, {wall:.1f}s wall):")
    for label, (rc, took, _, cpu) in sorted(results.items(), key=lambda kv: -kv[1][1])[:10]:
        print(f"  {took:6.1f}s  {label}{'' if rc == 0 else '  FAILED'}")
    total = sum(v[3] for v in results.values())
    print(f"\nthe most CPU ({total:.0f} CPU s in all):")
    for label, (rc, _, _, cpu) in sorted(results.items(), key=lambda kv: -kv[1][3])[:10]:
        print(f"  {cpu:6.1f}s  {label}")
    if broken:
        print("\nfailed: " + ", ".join(broken))
    print(f"\ntests: {passed} passed, {failed} failed, {ignored} skipped")
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()

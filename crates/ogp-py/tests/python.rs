//! The Python package's tests: pytest (tests/test_*.py) and `mypy --strict` (on
//! tests/typed_usage.py, against the stubs), in the interop venv
//! (scripts/install-interop.sh), on the cdylib of this very build
//! (`target/debug/deps/libogp_py.so`, loaded as `ogp/_ogp.abi3.so` from a temporary
//! directory, next to a copy of python/ogp). Nothing is compiled twice: the package
//! maturin builds for `pip install` is the same crate.
//!
//! The servers: `ogp serve` (the `ogp` binary of the same build, started by
//! tests/conftest.py), the testkit's Server List Ping responder (Minecraft, in this
//! process), the real OpenArena server and the npm Minecraft server (started here, in
//! parallel: `ogp_testkit::bindings`, shared with the Node package's tests), and hostile
//! servers of conftest.py. Behind `OGP_INTEROP=1` like the other tests that need the
//! installed peers.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use ogp_testkit::bindings::{self, profile_dir};
use ogp_testkit::interop::{enabled, missing_peer, TempDir};

fn copy_package(into: &Path) {
    let pkg = into.join("ogp");
    std::fs::create_dir_all(&pkg).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/ogp");
    for f in ["__init__.py", "__init__.pyi", "py.typed"] {
        std::fs::copy(src.join(f), pkg.join(f)).unwrap();
    }
    // deps/: where the test build puts the library it builds for this test (a
    // dependency's artifacts are not copied up to target/debug; a cdylib's name in
    // deps/ has no hash).
    let so = profile_dir().join("deps/libogp_py.so");
    assert!(
        so.is_file(),
        "{} missing (cargo test -p ogp-py builds it)",
        so.display()
    );
    std::fs::copy(&so, pkg.join("_ogp.abi3.so")).unwrap();
}

#[test]
fn pytest_and_mypy() {
    if !enabled("the Python package's tests (pytest, mypy)") {
        return;
    }
    let py = ogp_testkit::interop::interop_dir().join("venv/bin/python");
    let ok = Command::new(&py)
        .args(["-c", "import pytest, mypy.api"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        missing_peer(&format!("pytest and mypy in {}", py.display()));
    }
    bindings::ogp_bin();
    let dir = TempDir::new("ogp-py");
    copy_package(&dir.0);

    // The real servers start while mypy runs.
    let servers = bindings::start();
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let t = Instant::now();
    let mypy = Command::new(&py)
        .args([
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir=/dev/null",
        ])
        .arg(tests.join("typed_usage.py"))
        .env("MYPYPATH", &dir.0)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    eprintln!("mypy --strict: {:.1}s", t.elapsed().as_secs_f64());
    assert!(
        mypy.status.success(),
        "mypy --strict tests/typed_usage.py:\n{}{}",
        String::from_utf8_lossy(&mypy.stdout),
        String::from_utf8_lossy(&mypy.stderr)
    );

    let servers = servers.wait();
    let t = Instant::now();
    let out = Command::new(&py)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-x"])
        .arg(&tests)
        .current_dir(&dir.0)
        .env("PYTHONPATH", &dir.0)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .envs(servers.env())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("pytest: {:.1}s\n{text}", t.elapsed().as_secs_f64());
    assert!(out.status.success(), "pytest failed:\n{text}");
    assert!(text.contains(" passed"), "pytest ran no test:\n{text}");
    drop(servers);
}

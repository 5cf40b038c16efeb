//! The Node package's tests: `node --test` (tests/ogp.test.js) and `tsc --noEmit
//! --strict` (on tests/typed_usage.ts, against index.d.ts), with typescript and gamedig
//! from the interop npm prefix (scripts/install-interop.sh), on the cdylib of this very
//! build (`target/debug/deps/libogp_node.so`, loaded as `node_modules/ogp/ogp.node` from a
//! temporary directory, next to a copy of the package's files). Nothing is compiled
//! twice: the addon `npm install` takes is the same crate.
//!
//! The servers: `ogp serve` (the `ogp` binary of the same build, started by the test
//! file), the testkit's Server List Ping responder (Minecraft, in this process), the real
//! OpenArena server and the npm Minecraft server (started here, in parallel, by
//! `ogp_testkit::bindings` as for the Python package's tests), and hostile servers of the
//! test file. Behind `OGP_INTEROP=1` like the other tests that need the installed peers.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use ogp_testkit::bindings::{self, profile_dir};
use ogp_testkit::interop::{enabled, interop_dir, missing_peer, TempDir};

/// The package as `npm install` lays it out: `DIR/node_modules/ogp/`.
fn copy_package(into: &Path) {
    let pkg = into.join("node_modules/ogp");
    std::fs::create_dir_all(&pkg).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"));
    for f in ["index.js", "index.d.ts", "gamedig.js", "package.json"] {
        std::fs::copy(src.join(f), pkg.join(f)).unwrap();
    }
    let so = profile_dir().join("deps/libogp_node.so");
    assert!(
        so.is_file(),
        "{} missing (cargo test -p ogp-node builds it)",
        so.display()
    );
    std::fs::copy(&so, pkg.join("ogp.node")).unwrap();
    for f in ["ogp.test.js", "typed_usage.ts"] {
        std::fs::copy(src.join("tests").join(f), into.join(f)).unwrap();
    }
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn node_test_and_tsc() {
    if !enabled("the Node package's tests (node --test, tsc)") {
        return;
    }
    let npm = interop_dir().join("npm/node_modules");
    let tsc = npm.join("typescript/bin/tsc");
    let gamedig = npm.join("gamedig/lib/index.js");
    for p in [&tsc, &gamedig] {
        if !p.is_file() {
            missing_peer(&p.display().to_string());
        }
    }
    bindings::ogp_bin();
    let dir = TempDir::new("ogp-node");
    copy_package(&dir.0);
    let servers = bindings::start();

    // tsc runs while the servers start and the tests run (its own process).
    let t = Instant::now();
    let tsc = Command::new("node")
        .arg(&tsc)
        .args([
            "--noEmit",
            "--strict",
            "--target",
            "es2020",
            "--module",
            "commonjs",
            "--moduleResolution",
            "node",
            "--lib",
            "es2020",
            "typed_usage.ts",
        ])
        .current_dir(&dir.0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    let servers = servers.wait();
    let t_node = Instant::now();
    let out = Command::new("node")
        .args(["--test", "--test-concurrency=1", "ogp.test.js"])
        .current_dir(&dir.0)
        .envs(servers.env())
        .env("OGP_TEST_GAMEDIG", &gamedig)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let log = text(&out);
    eprintln!("node --test: {:.1}s\n{log}", t_node.elapsed().as_secs_f64());
    assert!(out.status.success(), "node --test failed:\n{log}");
    assert!(log.contains("# fail 0"), "node --test:\n{log}");
    assert!(!log.contains("# pass 0"), "node --test ran no test:\n{log}");
    let out = tsc.wait_with_output().unwrap();
    eprintln!(
        "tsc --noEmit --strict (alongside): {:.1}s",
        t.elapsed().as_secs_f64()
    );
    assert!(
        out.status.success(),
        "tsc --noEmit tests/typed_usage.ts:\n{}",
        text(&out)
    );
    drop(servers);
}

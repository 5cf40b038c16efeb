//! What the language bindings' tests share (crates/ogp-py/tests/python.rs,
//! crates/ogp-node/tests/node.rs): the directory of the build they test, and the real
//! servers their test files read (OpenArena, the npm Minecraft server, the Server List
//! Ping responder), started in parallel while the type checker runs.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::gameservers::{Minecraft, OpenArena, OpenArenaConfig};

/// `target/debug` (or the profile directory the running test was built in).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    // target/debug/deps/TEST-HASH
    exe.parent()
        .and_then(Path::parent)
        .expect("the test runs from target/PROFILE/deps")
        .to_path_buf()
}

/// The `ogp` binary of the same build (the test files run `ogp serve` and compare with
/// the CLI's JSON).
pub fn ogp_bin() -> PathBuf {
    let ogp = profile_dir().join("ogp");
    assert!(
        ogp.is_file(),
        "{} missing: the tests run `ogp serve` (cargo build -p ogp-cli)",
        ogp.display()
    );
    ogp
}

/// The servers on their way up (see [`Starting::wait`]).
pub struct Starting {
    openarena: JoinHandle<OpenArena>,
    minecraft: JoinHandle<Minecraft>,
    slp: SocketAddr,
    rt: tokio::runtime::Runtime,
}

/// The servers, up; stopped when dropped.
pub struct Servers {
    /// The real OpenArena server (`OA test`, map oa_dm1).
    pub openarena: OpenArena,
    /// The npm Minecraft server (`§aA §lreal§r test server`, 20 slots).
    pub minecraft: Minecraft,
    /// The testkit's SLP responder (`SLP test`, 3 of 10 players).
    pub slp: SocketAddr,
    _rt: tokio::runtime::Runtime,
}

/// Starts the servers: the two real ones on threads of their own, the SLP responder on
/// a runtime of this process.
pub fn start() -> Starting {
    let openarena = std::thread::spawn(|| OpenArena::start(&OpenArenaConfig::default()));
    let minecraft =
        std::thread::spawn(|| Minecraft::start("1.20.1", "§aA §lreal§r test server", 20, &[]));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("a loopback port");
    let slp = listener.local_addr().expect("its address");
    let json: Arc<str> = crate::slp::status_json("SLP test", 3, 10, "1.21.1", 767).into();
    rt.spawn(crate::slp::serve(listener, json));
    Starting {
        openarena,
        minecraft,
        slp,
        rt,
    }
}

impl Starting {
    /// Waits until the real servers are up.
    pub fn wait(self) -> Servers {
        Servers {
            openarena: self.openarena.join().expect("OpenArena starts"),
            minecraft: self
                .minecraft
                .join()
                .expect("the npm Minecraft server starts"),
            slp: self.slp,
            _rt: self.rt,
        }
    }
}

impl Servers {
    /// The variables the test files read: OGP_BIN, OGP_TEST_STATE, OGP_TEST_OPENARENA,
    /// OGP_TEST_MINECRAFT, OGP_TEST_SLP.
    pub fn env(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("OGP_BIN", ogp_bin()),
            (
                "OGP_TEST_STATE",
                crate::interop::root().join("crates/ogp-proto/tests/data/state.json"),
            ),
            (
                "OGP_TEST_OPENARENA",
                self.openarena.addr().to_string().into(),
            ),
            (
                "OGP_TEST_MINECRAFT",
                self.minecraft.addr().to_string().into(),
            ),
            ("OGP_TEST_SLP", self.slp.to_string().into()),
        ]
    }
}

//! Chocolate Doom (`chocolate-server`) on loopback (issue #38), and `chocolate-doom`
//! clients joining it with Freedoom's IWAD (no window: SDL's dummy video driver).
//!
//! `chocolate-server` binds 0.0.0.0 only (it has no address switch): it runs with
//! `-privateserver` (no master) on a free port, and every test datagram goes to
//! 127.0.0.1.

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::interop::{closed_port, missing_peer, KillOnDrop, TempDir};

/// Where the Debian package puts the server.
pub const CHOCOLATE_SERVER: &str = "/usr/games/chocolate-server";
/// Where the Debian package puts the client (also the query tool: `-query HOST:PORT`).
pub const CHOCOLATE_DOOM: &str = "/usr/games/chocolate-doom";
/// Freedoom: Phase 2's IWAD (Debian package freedoom).
pub const FREEDOOM2: &str = "/usr/share/games/doom/freedoom2.wad";

fn need(path: &str, package: &str) -> PathBuf {
    let p = PathBuf::from(path);
    if !p.is_file() {
        missing_peer(&format!(
            "{path} (Debian package {package}; run scripts/install-gameservers.sh)"
        ));
    }
    p
}

/// A running `chocolate-server`; killed when dropped (with its clients).
pub struct ChocolateDoom {
    _child: KillOnDrop,
    /// The UDP port it answers on.
    pub port: u16,
    clients: Vec<(KillOnDrop, TempDir)>,
    _dir: TempDir,
}

impl ChocolateDoom {
    /// Starts a server named `name` on a free port and waits (up to 20 s) until it
    /// answers the query on 127.0.0.1.
    pub fn start(name: &str) -> Self {
        let bin = need(CHOCOLATE_SERVER, "chocolate-doom");
        let dir = TempDir::new("doom");
        // Below the ephemeral range: no other test binary's socket takes it first.
        let port = closed_port().port();
        let child = Command::new(&bin)
            .args([
                "-port",
                &port.to_string(),
                "-privateserver",
                "-servername",
                name,
            ])
            .env("HOME", &dir.0)
            .current_dir(&dir.0)
            // A pipe that stays open: stdin at its end is read by nothing here.
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let mut s = Self {
            _child: KillOnDrop(child),
            port,
            clients: Vec::new(),
            _dir: dir,
        };
        assert!(
            s.players(Duration::from_secs(20)).is_some(),
            "chocolate-server did not answer its query on {port} within 20 s"
        );
        s
    }

    /// The address to query.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// The players its query reports, asked until `limit` (`None`: no answer).
    fn players(&mut self, limit: Duration) -> Option<u8> {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
        let _ = sock.set_read_timeout(Some(Duration::from_millis(200)));
        let deadline = Instant::now() + limit;
        let mut buf = [0u8; 1500];
        while Instant::now() < deadline {
            if self._child.0.try_wait().ok().flatten().is_some() {
                return None;
            }
            let _ = sock.send_to(&[0, 0x0d], self.addr());
            if let Ok((n, _)) = sock.recv_from(&mut buf) {
                let d = buf.get(..n).unwrap_or_default();
                // 00 0E, the version and its NUL, state, then players
                let nul = d.iter().skip(2).position(|&b| b == 0);
                if let Some(p) = nul.and_then(|i| d.get(2 + i + 2)) {
                    return Some(*p);
                }
            }
        }
        None
    }

    /// Joins a `chocolate-doom` client (Freedoom: Phase 2) and waits (up to 20 s) until
    /// the query counts it; it leaves with the server.
    pub fn join_player(&mut self) {
        let bin = need(CHOCOLATE_DOOM, "chocolate-doom");
        let iwad = need(FREEDOOM2, "freedoom");
        let before = self.players(Duration::from_secs(5)).unwrap_or(0);
        let home = TempDir::new("doom-client");
        let child = Command::new(&bin)
            .arg("-iwad")
            .arg(&iwad)
            .args(["-connect", &format!("127.0.0.1:{}", self.port)])
            .args(["-nosound", "-nomusic", "-nogui"])
            .env("HOME", &home.0)
            .env("SDL_VIDEODRIVER", "dummy")
            .env("SDL_AUDIODRIVER", "dummy")
            .current_dir(&home.0)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        self.clients.push((KillOnDrop(child), home));
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self
                .players(Duration::from_secs(2))
                .is_some_and(|p| p > before)
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the chocolate-doom client did not join within 20 s");
    }
}

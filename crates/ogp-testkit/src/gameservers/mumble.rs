//! Mumble (`mumble-server`, `murmurd`) on loopback (issue #38), with users connected by
//! `tests/interop/mumble-user.py` (TLS, Version and Authenticate).
//!
//! The server drops to the `mumble-server` user, so its ini, database and log live in a
//! temp dir anyone may write. Its first start makes a certificate and benchmarks
//! PBKDF2 (about 2 s here); `start` waits (bounded) until it answers the UDP ping.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use crate::interop::{closed_port, KillOnDrop, TempDir};

/// Where the Debian package puts the server.
pub const MURMURD: &str = "/usr/sbin/murmurd";

/// How to start a [`Mumble`] server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct MumbleConfig {
    /// `users`: the most users it takes.
    pub max_users: u32,
    /// `bandwidth`: bits per second allowed per user.
    pub bandwidth: u32,
    /// `registerName`: the root channel's name (not in the ping).
    pub name: String,
}

impl MumbleConfig {
    /// A server taking `max_users` users, 72000 bits per second each.
    pub fn new(max_users: u32) -> Self {
        Self {
            max_users,
            bandwidth: 72_000,
            name: "OGP Mumble".into(),
        }
    }
}

/// A running `murmurd` on 127.0.0.1 (TCP and UDP on one port); killed when dropped.
pub struct Mumble {
    _child: KillOnDrop,
    /// The port (TCP and UDP).
    pub port: u16,
    dir: TempDir,
}

impl Mumble {
    /// The server's binary, or a failed test.
    pub fn binary() -> PathBuf {
        super::installed(MURMURD, "Debian package mumble-server")
    }

    /// Starts a server on a free loopback port and waits (up to 30 s) until it answers
    /// the ping.
    pub fn start(config: &MumbleConfig) -> Self {
        let bin = Self::binary();
        let dir = TempDir::new("mumble");
        // murmurd switches to the mumble-server user: it must write here.
        let _ = Command::new("chmod").arg("777").arg(&dir.0).status();
        // Below the ephemeral range: no other test binary's socket takes it first.
        let port = closed_port().port();
        let ini = dir.0.join("murmur.ini");
        let d = dir.0.display();
        std::fs::write(
            &ini,
            format!(
                "host=127.0.0.1\nport={port}\nusers={}\nbandwidth={}\nregisterName={}\n\
                 database={d}/murmur.sqlite\nlogfile={d}/murmur.log\npidfile=\n\
                 bonjour=false\nwelcometext=\n",
                config.max_users, config.bandwidth, config.name
            ),
        )
        .expect("the ini");
        let child = Command::new(&bin)
            .args(["-fg", "-ini"])
            .arg(&ini)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let mut server = Self {
            _child: KillOnDrop(child),
            port,
            dir,
        };
        if !server.wait_ready(Duration::from_secs(30)) {
            let log = std::fs::read_to_string(server.dir.0.join("murmur.log")).unwrap_or_default();
            panic!("murmurd did not answer its ping on {port} within 30 s; log:\n{log}");
        }
        server
    }

    fn wait_ready(&mut self, limit: Duration) -> bool {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
        let _ = sock.set_read_timeout(Some(Duration::from_millis(200)));
        let deadline = Instant::now() + limit;
        let mut buf = [0u8; 64];
        while Instant::now() < deadline {
            if self._child.0.try_wait().ok().flatten().is_some() {
                return false;
            }
            let _ = sock.send_to(b"\0\0\0\0readyyyy", self.addr());
            if let Ok((24, _)) = sock.recv_from(&mut buf) {
                return true;
            }
        }
        false
    }

    /// The address it answers on.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// Connects a user named `name` and waits (up to 15 s) until the server has taken
    /// it in; the user leaves when the returned handle is dropped.
    pub fn connect_user(&self, name: &str) -> MumbleUser {
        let mut child = Command::new("python3")
            .arg(crate::interop::script("tests/interop/mumble-user.py"))
            .args(["127.0.0.1", &self.port.to_string(), name])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start python3: {e}"));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(15)).unwrap_or_default();
        assert_eq!(line.trim(), "joined", "the Mumble user {name} did not join");
        MumbleUser { child, stdin }
    }
}

/// A user connected to a [`Mumble`] server; it leaves when dropped.
pub struct MumbleUser {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Drop for MumbleUser {
    fn drop(&mut self) {
        if let Some(mut s) = self.stdin.take() {
            let _ = s.flush();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

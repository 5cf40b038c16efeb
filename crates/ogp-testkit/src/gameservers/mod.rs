//! Real game servers started on loopback for the interop tests, as
//! `scripts/install-gameservers.sh` installs them (behind the same `OGP_INTEROP` gate as
//! the query clients, [`crate::interop::enabled`]).
//!
//! * [`OpenArena`]: Debian's `openarena-server` (the ioquake3 engine), a real Quake III
//!   Arena protocol server; with a master address it heartbeats to it
//!   (`dedicated 2`, `shared/docs/reach.md`);
//! * [`Minecraft`]: npm `minecraft-protocol`'s server, a real Minecraft: Java Edition
//!   server implementation answering the Server List Ping.
//!
//! The families of issue #38 have a file each in this folder (declared below), with the
//! same shape: a config with a constructor, a `start` that waits until the server answers
//! on loopback, and a `Drop` that stops it.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::interop::{missing_peer, TempDir};

pub mod cube2;
pub mod doom;
pub mod doomsday;
pub mod minetest;
pub mod mumble;
pub mod netquake;
pub mod openttd;
pub mod quakeworld;
pub mod teeworlds;

/// Where the Debian package puts the dedicated server.
pub const OPENARENA_SERVER: &str = "/usr/games/openarena-server";

/// How to start an [`OpenArena`] server.
#[derive(Debug, Clone)]
pub struct OpenArenaConfig {
    /// `sv_hostname` (colour codes allowed, e.g. `^1Bar ^7OA`).
    pub hostname: String,
    /// The map (`oa_dm1` is in the package).
    pub map: String,
    /// `sv_maxclients`.
    pub max_clients: u32,
    /// `bot_minplayers`: the server adds bots until this many players are in (0: none).
    pub bots: u32,
    /// `sv_master1`: with one, the server runs with `dedicated 2` and heartbeats to it;
    /// without, `dedicated 1` (LAN: no heartbeats).
    pub master: Option<SocketAddr>,
}

impl Default for OpenArenaConfig {
    fn default() -> Self {
        Self {
            hostname: "OA test".into(),
            map: "oa_dm1".into(),
            max_clients: 8,
            bots: 0,
            master: None,
        }
    }
}

/// A running `openarena-server` on 127.0.0.1; killed (SIGKILL) when dropped unless
/// [`OpenArena::terminate`] stopped it first.
pub struct OpenArena {
    child: Option<Child>,
    /// The UDP port it answers on.
    pub port: u16,
    lines: mpsc::Receiver<String>,
    log: Vec<String>,
    _home: TempDir,
}

impl OpenArena {
    /// The server's binary, or a failed test (the interop tests are on, so a missing
    /// server is an installation error).
    pub fn binary() -> PathBuf {
        installed(OPENARENA_SERVER, "Debian package openarena-server")
    }

    /// Starts a server on a free loopback port and waits (up to 60 s) until it answers
    /// `getinfo`. Its console output is kept for [`OpenArena::log`].
    pub fn start(config: &OpenArenaConfig) -> Self {
        let bin = Self::binary();
        let mut last_err = String::new();
        // The engine moves to the next port when its port is taken; try again then.
        for _ in 0..5 {
            let home = TempDir::new("openarena");
            let port = crate::interop::free_port();
            let mut cmd = Command::new(&bin);
            cmd.env("HOME", &home.0)
                .current_dir(&home.0)
                .args(["+set", "net_ip", "127.0.0.1", "+set", "net_enabled", "1"])
                .args(["+set", "net_port", &port.to_string()])
                .args(["+set", "sv_hostname", &config.hostname])
                .args(["+set", "sv_maxclients", &config.max_clients.to_string()]);
            match config.master {
                Some(m) => cmd.args(["+set", "dedicated", "2"]).args([
                    "+set",
                    "sv_master1",
                    &m.to_string(),
                ]),
                None => cmd
                    .args(["+set", "dedicated", "1"])
                    .args(["+set", "sv_master1", ""]),
            };
            // No other master: the defaults name hosts on the internet.
            for i in 2..=5 {
                cmd.args(["+set", &format!("sv_master{i}"), ""]);
            }
            if config.bots > 0 {
                cmd.args(["+set", "bot_enable", "1"]).args([
                    "+set",
                    "bot_minplayers",
                    &config.bots.to_string(),
                ]);
            }
            cmd.args(["+map", &config.map])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = cmd
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
            let rx = console_lines(&mut child);
            let mut server = Self {
                child: Some(child),
                port,
                lines: rx,
                log: Vec::new(),
                _home: home,
            };
            let want = format!("Opening IP socket: 127.0.0.1:{port}");
            let opened = server.wait_for_line(Duration::from_secs(60), |l| {
                l.starts_with("Opening IP socket") || l.contains("ERROR")
            });
            if opened.as_deref() == Some(want.as_str()) && server.wait_ready() {
                return server;
            }
            last_err = format!("{opened:?}; log:\n{}", server.log().join("\n"));
            server.kill();
        }
        panic!("openarena-server did not start: {last_err}");
    }

    /// Waits until the server answers `getinfo` (the map has loaded).
    fn wait_ready(&mut self) -> bool {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
        let _ = sock.set_read_timeout(Some(Duration::from_millis(250)));
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut buf = [0u8; 2048];
        while Instant::now() < deadline {
            self.drain();
            if self.exited() {
                return false;
            }
            let _ = sock.send_to(b"\xff\xff\xff\xffgetinfo ready", ("127.0.0.1", self.port));
            if let Ok((n, _)) = sock.recv_from(&mut buf) {
                if buf
                    .get(..n)
                    .is_some_and(|d| d.starts_with(b"\xff\xff\xff\xffinfoResponse"))
                {
                    return true;
                }
            }
        }
        false
    }

    fn exited(&mut self) -> bool {
        self.child
            .as_mut()
            .is_none_or(|c| c.try_wait().ok().flatten().is_some())
    }

    fn drain(&mut self) {
        while let Ok(l) = self.lines.try_recv() {
            self.log.push(l);
        }
    }

    /// Waits up to `limit` for a console line (new or already seen) that `pred` accepts.
    pub fn wait_for_line(
        &mut self,
        limit: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> Option<String> {
        if let Some(l) = self.log.iter().find(|l| pred(l)) {
            return Some(l.clone());
        }
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match self
                .lines
                .recv_timeout(left.min(Duration::from_millis(200)))
            {
                Ok(l) => {
                    self.log.push(l.clone());
                    if pred(&l) {
                        return Some(l);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if self.exited() {
                        self.drain();
                        return None;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// The address it answers on.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// The console output so far.
    pub fn log(&mut self) -> &[String] {
        self.drain();
        &self.log
    }

    /// Stops the server as an init system does (SIGTERM), and waits up to 20 s for it to
    /// exit (ioquake3 sends its last heartbeats then). Returns whether it exited.
    pub fn terminate(&mut self) -> bool {
        let Some(child) = self.child.as_mut() else {
            return true;
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if child.try_wait().ok().flatten().is_some() {
                self.child = None;
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for OpenArena {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A running Minecraft: Java Edition server (npm `minecraft-protocol`, online mode off,
/// started by `tests/interop/mc-server.js` on a free loopback port); killed when dropped.
pub struct Minecraft {
    _child: crate::interop::KillOnDrop,
    /// The TCP port it listens on.
    pub port: u16,
}

impl Minecraft {
    /// Starts the server of `version` (`1.20.1`, `1.12.2`, …) with this MOTD (`§` codes
    /// allowed) and max players, and `MC_*` variables that add to its status
    /// (`MC_FAVICON`, `MC_PLAYERS`, `MC_FORGE`: see mc-server.js); waits up to 60 s
    /// until it listens.
    pub fn start(version: &str, motd: &str, max_players: u32, env: &[(&str, &str)]) -> Self {
        let modules = crate::interop::interop_dir().join("npm-mc/node_modules");
        if !modules.join("minecraft-protocol/package.json").is_file() {
            missing_peer(&format!(
                "minecraft-protocol in {} (run scripts/install-gameservers.sh)",
                modules.display()
            ));
        }
        let mut child = Command::new("node")
            .arg(crate::interop::script("tests/interop/mc-server.js"))
            .args([version, motd, &max_players.to_string()])
            .env("NODE_PATH", &modules)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start node: {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(p) = line.strip_prefix("listening ") {
                    let _ = tx.send(p.trim().parse::<u16>().ok());
                    return;
                }
            }
            let _ = tx.send(None);
        });
        let child = crate::interop::KillOnDrop(child);
        let port = rx
            .recv_timeout(Duration::from_secs(60))
            .ok()
            .flatten()
            .expect("the npm Minecraft server says it listens within 60 s");
        Self {
            _child: child,
            port,
        }
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }
}

/// `path`, a file a Debian package installs (`what`: "Debian package NAME"), or a failed
/// test: the interop tests are on, so a missing server is an installation error.
pub(crate) fn installed(path: &str, what: &str) -> PathBuf {
    let p = PathBuf::from(path);
    if !p.is_file() {
        missing_peer(&format!(
            "{path} ({what}; run scripts/install-gameservers.sh)"
        ));
    }
    p
}

/// The console output of `child` (its piped stdout and stderr), line by line, read by a
/// thread per pipe.
pub(crate) fn console_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    for pipe in [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    ]
    .into_iter()
    .flatten()
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    rx
}

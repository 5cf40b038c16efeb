//! OpenTTD's dedicated server (`openttd -D`, Debian's `openttd` with `openttd-opengfx`)
//! on loopback (issue #38): a real server of OpenTTD's TCP game info.
//!
//! It gets a config file in a temporary home (`server_game_type = local`: it never
//! registers with the game coordinator), a small map so that it is generated in well
//! under a second, its stdin a pipe that stays open (its console reads it), and a free
//! port it listens on with both TCP and UDP. `start` waits until the game info comes back
//! over TCP.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::interop::TempDir;

/// Where the Debian package puts the game.
pub const OPENTTD: &str = "/usr/games/openttd";

/// How to start an [`Openttd`] server.
#[derive(Debug, Clone)]
pub struct OpenttdConfig {
    /// `server_name`.
    pub name: String,
    /// `max_clients`.
    pub max_clients: u8,
    /// `max_companies`.
    pub max_companies: u8,
    /// `map_x` and `map_y`: the map is 2^x by 2^y tiles (6 to 12).
    pub map_log2: (u8, u8),
    /// `landscape`: `temperate`, `arctic`, `tropic` or `toyland`.
    pub landscape: String,
    /// `server_password` (empty: none).
    pub password: String,
}

impl OpenttdConfig {
    /// A server of this name: 8 clients, 5 companies, a 64 by 128 arctic map, no
    /// password.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            max_clients: 8,
            max_companies: 5,
            map_log2: (6, 7),
            landscape: "arctic".into(),
            password: String::new(),
        }
    }
}

/// A running `openttd -D` on 127.0.0.1; killed when dropped.
pub struct Openttd {
    child: Child,
    _stdin: Option<ChildStdin>,
    /// The port it listens on (TCP and UDP).
    pub port: u16,
    lines: mpsc::Receiver<String>,
    log: Vec<String>,
    _home: TempDir,
}

impl Openttd {
    /// The game's binary, or a failed test (the interop tests are on, so a missing
    /// server is an installation error).
    pub fn binary() -> PathBuf {
        super::installed(OPENTTD, "Debian packages openttd and openttd-opengfx")
    }

    /// Starts a server on a free loopback port and waits (up to 30 s) until it answers
    /// the game info over TCP.
    pub fn start(config: &OpenttdConfig) -> Self {
        let bin = Self::binary();
        let mut last_err = String::new();
        // Another process may take the free port meanwhile: then try another.
        for _ in 0..3 {
            let home = TempDir::new("openttd");
            let port = crate::interop::free_port();
            let cfg = home.0.join("openttd.cfg");
            let text = format!(
                "[game_creation]\nmap_x = {}\nmap_y = {}\nlandscape = {}\n\
                 [network]\nserver_game_type = local\nserver_name = {}\n\
                 server_password = {}\nmax_clients = {}\nmax_companies = {}\n\
                 [gui]\nautosave = off\n",
                config.map_log2.0,
                config.map_log2.1,
                config.landscape,
                config.name,
                config.password,
                config.max_clients,
                config.max_companies,
            );
            std::fs::write(&cfg, text).expect("write openttd.cfg");
            let mut child = Command::new(&bin)
                .env("HOME", &home.0)
                .env("XDG_DATA_HOME", home.0.join("data"))
                .env("XDG_CONFIG_HOME", home.0.join("config"))
                .current_dir(&home.0)
                .arg("-D")
                .arg(format!("127.0.0.1:{port}"))
                .arg("-c")
                .arg(&cfg)
                .arg("-x")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
            let stdin = child.stdin.take();
            let rx = super::console_lines(&mut child);
            let mut server = Self {
                child,
                _stdin: stdin,
                port,
                lines: rx,
                log: Vec::new(),
                _home: home,
            };
            if server.wait_ready(Duration::from_secs(30)) {
                return server;
            }
            last_err = server.log().join("\n");
            server.kill();
        }
        panic!("openttd did not start; log:\n{last_err}");
    }

    /// Waits until a `PACKET_CLIENT_GAME_INFO` gets its `SERVER_GAME_INFO` (the map is
    /// generated then).
    fn wait_ready(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            self.drain();
            if self.child.try_wait().ok().flatten().is_some() {
                return false;
            }
            if self.game_info().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    /// One game-info packet read with a plain socket, or `None`.
    pub fn game_info(&self) -> Option<Vec<u8>> {
        let mut s = TcpStream::connect_timeout(&self.addr(), Duration::from_millis(500)).ok()?;
        s.set_read_timeout(Some(Duration::from_millis(500))).ok()?;
        s.write_all(&[3, 0, 7]).ok()?;
        let mut head = [0u8; 2];
        s.read_exact(&mut head).ok()?;
        let size = usize::from(u16::from_le_bytes(head));
        let mut rest = vec![0u8; size.checked_sub(2)?];
        s.read_exact(&mut rest).ok()?;
        let mut p = head.to_vec();
        p.extend_from_slice(&rest);
        Some(p)
    }

    fn drain(&mut self) {
        while let Ok(l) = self.lines.try_recv() {
            self.log.push(l);
        }
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// The console output so far.
    pub fn log(&mut self) -> &[String] {
        self.drain();
        &self.log
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Openttd {
    fn drop(&mut self) {
        self.kill();
    }
}

//! Cube 2 servers on loopback (issue #38), as `scripts/gameservers.d/cube2.sh` installs
//! them:
//!
//! * [`Cube2Game::Sauerbraten`]: Debian's `cube2-server` (`/usr/games/cube2-server`);
//! * [`Cube2Game::RedEclipse`]: Red Eclipse 1.6's server, unpacked from Debian's
//!   packages into `target/interop/redeclipse` (without its 938 MB of data: it runs
//!   with an empty `maps/`), optionally also Red Eclipse's master (`-ms1`) on a TCP port.
//!
//! Both answer their query on the game port + 1; [`Cube2::start`] waits until that port
//! answers a ping. Each server gets a temporary home, a stdin pipe that stays open, and
//! is killed when dropped.

use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use crate::interop::{missing_peer, TempDir};

/// Where Debian's `cube2-server` puts Sauerbraten's dedicated server.
pub const SAUERBRATEN_SERVER: &str = "/usr/games/cube2-server";

/// The binary that wrapper runs (in `/usr/lib/cube2`).
pub const SAUERBRATEN_BINARY: &str = "/usr/lib/cube2/cube2_server";

/// Which Cube 2 game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cube2Game {
    /// Sauerbraten (`cube2-server`).
    Sauerbraten,
    /// Red Eclipse 1.6.
    RedEclipse,
}

/// How to start a [`Cube2`] server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Cube2Config {
    /// The game.
    pub game: Cube2Game,
    /// The server's description (its name in server lists).
    pub description: String,
    /// Max clients.
    pub max_clients: u32,
    /// Red Eclipse only: also run its master server on this TCP port of 127.0.0.1.
    pub master_port: Option<u16>,
    /// Register with the master on this TCP port of 127.0.0.1 (ours, say), not running
    /// one: Sauerbraten's `regserv`, Red Eclipse's `server` line.
    pub register_with: Option<u16>,
}

impl Cube2Config {
    /// A server of `game` with this description and max clients.
    pub fn new(game: Cube2Game, description: &str, max_clients: u32) -> Self {
        Self {
            game,
            description: description.into(),
            max_clients,
            master_port: None,
            register_with: None,
        }
    }

    /// Registering with the master on TCP `port` of 127.0.0.1 (both games).
    pub fn registering_with(mut self, port: u16) -> Self {
        self.register_with = Some(port);
        self
    }

    /// Red Eclipse: with its master on TCP `port` (127.0.0.1).
    pub fn with_master(mut self, port: u16) -> Self {
        self.master_port = Some(port);
        self
    }
}

/// A running Cube 2 server on 127.0.0.1; killed when dropped.
pub struct Cube2 {
    child: Option<Child>,
    _stdin: Option<ChildStdin>,
    /// The game port (ENet).
    pub port: u16,
    _home: TempDir,
}

/// Red Eclipse's folder (its binary, `config/` and `maps/`).
pub fn redeclipse_dir() -> PathBuf {
    crate::interop::interop_dir().join("redeclipse/root/usr/lib/games/redeclipse")
}

/// Two consecutive free ports on 127.0.0.1 (the game port and its query port), below
/// the ephemeral range and never handed out twice in this process
/// ([`crate::interop::closed_ports`]): a socket another test binary opens with port 0
/// cannot take them between this check and the server's bind.
fn free_pair() -> u16 {
    for _ in 0..100 {
        let a = crate::interop::closed_port().port();
        let b = crate::interop::closed_port().port();
        if a.checked_add(1) == Some(b) {
            return a;
        }
    }
    panic!("no two consecutive free ports in 20000-31999 on 127.0.0.1");
}

impl Cube2 {
    /// Starts a server on free loopback ports and waits (up to 20 s) until its query
    /// port answers a ping.
    /// A server that exits before it answers (a port taken by another test binary
    /// between our check and its bind) is started again on other ports, up to three
    /// times.
    pub fn start(config: &Cube2Config) -> Self {
        let mut why = String::new();
        for _ in 0..3 {
            match Self::try_start(config) {
                Ok(server) => return server,
                Err(e) => why = e,
            }
        }
        panic!("{why}")
    }

    fn try_start(config: &Cube2Config) -> Result<Self, String> {
        let home = TempDir::new("cube2");
        let port = free_pair();
        let mut cmd = match config.game {
            Cube2Game::Sauerbraten => {
                if !std::path::Path::new(SAUERBRATEN_SERVER).is_file() {
                    missing_peer(&format!(
                        "{SAUERBRATEN_SERVER} (Debian package cube2-server; run \
                         scripts/install-gameservers.sh)"
                    ));
                }
                // Debian's wrapper runs the binary in its own folder; registering with a
                // master on another port needs `masterport` from `server-init.cfg`,
                // which the server reads from its working folder: the binary, run in
                // the home folder (it needs no data of its own).
                let mut c = match config.register_with {
                    Some(m) => {
                        std::fs::write(home.0.join("server-init.cfg"), format!("masterport {m}\n"))
                            .expect("server-init.cfg");
                        Command::new(SAUERBRATEN_BINARY)
                    }
                    None => Command::new(SAUERBRATEN_SERVER),
                };
                c.current_dir(&home.0)
                    .env("HOME", &home.0)
                    .arg("-i127.0.0.1")
                    .arg(format!("-j{port}"))
                    .arg(format!("-n{}", config.description))
                    .arg(format!("-c{}", config.max_clients))
                    // A master that does not exist here (its connection fails at once),
                    // or ours: never the public one.
                    .arg(if config.register_with.is_some() {
                        "-m127.0.0.1"
                    } else {
                        "-mlocalhost"
                    });
                c
            }
            Cube2Game::RedEclipse => {
                let dir = redeclipse_dir();
                let bin = dir.join("redeclipse-server");
                if !bin.is_file() {
                    missing_peer(&format!(
                        "{} (Red Eclipse 1.6; run scripts/install-gameservers.sh)",
                        bin.display()
                    ));
                }
                let mut cfg = format!(
                    "sv_serverdesc \"{}\"\nsv_serverclients {}\n",
                    config.description, config.max_clients
                );
                // With its own master, it registers there (never the public one).
                match config.master_port.or(config.register_with) {
                    Some(m) => {
                        cfg += &format!("servermaster \"127.0.0.1\"\nservermasterport {m}\n")
                    }
                    None => cfg += "servermaster \"localhost\"\n",
                }
                std::fs::write(home.0.join("servinit.cfg"), cfg).expect("servinit.cfg");
                let mut c = Command::new(&bin);
                c.current_dir(&dir)
                    .env("HOME", &home.0)
                    .arg(format!("-h{}", home.0.display()))
                    .arg("-g")
                    .arg("-si127.0.0.1")
                    .arg(format!("-sp{port}"));
                if let Some(m) = config.master_port {
                    c.arg("-ms1").arg("-mi127.0.0.1").arg(format!("-mp{m}"));
                }
                c
            }
        };
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the {:?} server: {e}", config.game));
        let stdin = child.stdin.take();
        let mut server = Self {
            child: Some(child),
            _stdin: stdin,
            port,
            _home: home,
        };
        if server.wait_ready(Duration::from_secs(20)) {
            return Ok(server);
        }
        let exited = server
            .child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten());
        Err(match exited {
            Some(status) => format!(
                "the {:?} server on 127.0.0.1:{port} exited ({status}) before it answered a ping",
                config.game
            ),
            None => format!(
                "the {:?} server did not answer a ping on 127.0.0.1:{} within 20 s",
                config.game,
                port + 1
            ),
        })
    }

    fn wait_ready(&mut self, limit: Duration) -> bool {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
        let _ = sock.set_read_timeout(Some(Duration::from_millis(100)));
        let deadline = Instant::now() + limit;
        let mut buf = [0u8; 2048];
        while Instant::now() < deadline {
            if self
                .child
                .as_mut()
                .is_none_or(|c| c.try_wait().ok().flatten().is_some())
            {
                return false;
            }
            let _ = sock.send_to(&[0x01], self.query_addr());
            if let Ok((n, _)) = sock.recv_from(&mut buf) {
                if n > 1 && buf.first() == Some(&0x01) {
                    return true;
                }
            }
        }
        false
    }

    /// The query address (the game port + 1).
    pub fn query_addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port + 1))
    }

    /// The game address.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// Writes a line to the server's console (stdin).
    pub fn console(&mut self, line: &str) {
        if let Some(s) = self._stdin.as_mut() {
            let _ = writeln!(s, "{line}");
        }
    }
}

impl Drop for Cube2 {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

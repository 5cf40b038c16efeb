//! Doomsday (`doomsday-server` 2.3.1, the Doomsday Engine) on loopback (issue #38),
//! playing Freedoom: Phase 1 (`-game doom1-freedoom`, Debian package freedoom).
//!
//! The server's settings come from a `game.cfg` in a HOME of its own
//! (`.doomsday/runtime/configs/doom/game.cfg`: `server-name`, `server-info`,
//! `server-game-episode`, `server-game-map`, `server-player-limit`, `server-public 0`);
//! the map needs its episode too, else the server falls back to E1M1. Players join over
//! TCP on `-port` (a free port here); the beacon binds the first free UDP port of 13209
//! to 13224 on all addresses, whatever `-port` says: [`Doomsday::start`] finds it by
//! asking each of them and keeping the one whose reply names our TCP port. Every test
//! datagram goes to 127.0.0.1.

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::interop::{KillOnDrop, TempDir};

/// Where the Debian package puts the server.
pub const DOOMSDAY_SERVER: &str = "/usr/games/doomsday-server";
/// The folder of Freedoom's IWADs (Debian package freedoom).
pub const IWAD_DIR: &str = "/usr/share/games/doom";
/// The beacon's request.
pub const BEACON_REQUEST: &[u8] = b"Doomsday Beacon 1.1";
/// The UDP ports a beacon may take.
pub const BEACON_PORTS: std::ops::RangeInclusive<u16> = 13209..=13224;

/// How to start a [`Doomsday`] server.
#[derive(Debug, Clone)]
pub struct DoomsdayConfig {
    /// `server-name`.
    pub name: String,
    /// `server-info` (the description).
    pub description: String,
    /// `server-game-episode` (`1` for E1Mx).
    pub episode: String,
    /// `server-game-map`, without its `Maps:` scheme (`E1M3`).
    pub map: String,
    /// `server-player-limit`.
    pub max_players: u32,
}

impl Default for DoomsdayConfig {
    fn default() -> Self {
        Self {
            name: "OGP Doomsday".into(),
            description: "ogp test".into(),
            episode: "1".into(),
            map: "E1M3".into(),
            max_players: 5,
        }
    }
}

/// A running `doomsday-server`; killed when dropped (with its HOME).
pub struct Doomsday {
    child: KillOnDrop,
    /// The TCP port players join (`-port`).
    pub tcp_port: u16,
    /// The UDP port its beacon answers on.
    pub beacon_port: u16,
    /// Its first beacon reply that carried the record (the datagram as sent).
    pub first_reply: Vec<u8>,
    dir: TempDir,
}

impl Doomsday {
    /// Starts a server and waits (up to 40 s) until its beacon answers on 127.0.0.1
    /// with a record for our TCP port and the configured map.
    pub fn start(config: &DoomsdayConfig) -> Self {
        let bin = super::installed(DOOMSDAY_SERVER, "Debian package doomsday-server");
        // The beacon binds its port on all addresses: a socket on any address of one of
        // these ports (a scan farm on 127.x.y.z, another Doomsday) takes it away.
        let free = BEACON_PORTS
            .clone()
            .filter(|p| UdpSocket::bind(("0.0.0.0", *p)).is_ok())
            .count();
        assert!(
            free > 0,
            "UDP ports {}-{} are all taken on this machine (`ss -lunp`): doomsday-server's \
             beacon could not bind one",
            BEACON_PORTS.start(),
            BEACON_PORTS.end()
        );
        let iwad = format!("{IWAD_DIR}/freedoom1.wad");
        super::installed(&iwad, "Debian package freedoom");
        let dir = TempDir::new("doomsday");
        let cfg_dir = dir.0.join(".doomsday/runtime/configs/doom");
        std::fs::create_dir_all(&cfg_dir).expect("the server's config folder");
        let quote = |s: &str| s.replace(['"', '\\', '\n'], " ");
        let cfg = format!(
            "server-name \"{}\"\nserver-info \"{}\"\nserver-game-episode \"{}\"\n\
             server-game-map \"Maps:{}\"\nserver-player-limit {}\nserver-public 0\n",
            quote(&config.name),
            quote(&config.description),
            quote(&config.episode),
            quote(&config.map),
            config.max_players
        );
        std::fs::write(cfg_dir.join("game.cfg"), cfg).expect("game.cfg");
        let tcp_port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free TCP port");
        let log = std::fs::File::create(dir.0.join("server.log")).expect("server.log");
        let child = Command::new(&bin)
            .args(["-stdout", "-iwad", IWAD_DIR, "-game", "doom1-freedoom"])
            .args(["-port", &tcp_port.to_string()])
            .env("HOME", &dir.0)
            .current_dir(&dir.0)
            // A pipe that stays open: stdin at its end is read by nothing here.
            .stdin(Stdio::piped())
            .stdout(log.try_clone().map_or_else(|_| Stdio::null(), Stdio::from))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let mut s = Self {
            child: KillOnDrop(child),
            tcp_port,
            beacon_port: 0,
            first_reply: Vec::new(),
            dir,
        };
        match s.find_beacon(&config.map, Duration::from_secs(40)) {
            Some((port, reply)) => {
                s.beacon_port = port;
                s.first_reply = reply;
            }
            None => panic!(
                "doomsday-server (TCP {tcp_port}) did not answer its beacon on 127.0.0.1:{}-{} \
                 with map {} within 40 s; its log ends:\n{}",
                BEACON_PORTS.start(),
                BEACON_PORTS.end(),
                config.map,
                s.log_tail()
            ),
        }
        s
    }

    /// The address to query (the beacon's).
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.beacon_port))
    }

    /// The last lines of the server's log.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.0.join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines
            .get(lines.len().saturating_sub(30)..)
            .unwrap_or_default()
            .join("\n")
    }

    /// Whether the server said its beacon could not bind a port (it goes on without).
    fn beacon_failed(&self) -> bool {
        std::fs::read_to_string(self.dir.0.join("server.log"))
            .is_ok_and(|t| t.contains("Could not bind to UDP port"))
    }

    /// Asks every beacon port until one answers with our TCP port and a message that
    /// names `map` (the message is set once the map has loaded; before, the reply is
    /// the port alone).
    fn find_beacon(&mut self, map: &str, limit: Duration) -> Option<(u16, Vec<u8>)> {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
        let _ = sock.set_read_timeout(Some(Duration::from_millis(100)));
        let deadline = Instant::now() + limit;
        let ours = self.tcp_port.to_le_bytes();
        let mut buf = vec![0u8; 65536];
        while Instant::now() < deadline {
            if self.child.0.try_wait().ok().flatten().is_some() || self.beacon_failed() {
                return None;
            }
            for port in BEACON_PORTS {
                let _ = sock.send_to(BEACON_REQUEST, ("127.0.0.1", port));
            }
            let round = Instant::now() + Duration::from_millis(300);
            while Instant::now() < round {
                let Ok((n, from)) = sock.recv_from(&mut buf) else {
                    continue;
                };
                let d = buf.get(..n).unwrap_or_default();
                if d.get(..2) == Some(&ours[..]) && n > 6 && names_map(d, map) {
                    return Some((from.port(), d.to_vec()));
                }
            }
        }
        None
    }
}

/// Whether the reply decodes and names `map`.
fn names_map(d: &[u8], map: &str) -> bool {
    ogp_proto::doomsday::decode_reply(d)
        .is_ok_and(|r| r.text("map").is_some_and(|m| m.as_str() == map))
}

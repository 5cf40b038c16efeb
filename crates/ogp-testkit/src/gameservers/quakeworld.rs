//! QuakeWorld on loopback (issue #38): Debian's `mvdsv` with the `ktx` game module, as
//! `scripts/gameservers.d/quakeworld.sh` installs them.
//!
//! Debian has no Quake data: [`write_bsp29`] writes a minimal valid BSP29 map (a world
//! of one plane: empty above, solid below, with a player start) into a temporary base
//! directory, as `start.bsp` and `dm3.bsp` (KTX changes to `dm3` in some modes). The
//! game directory `ktx` holds a link to KTX's `qwprogs.so` and a `server.cfg` of ours
//! (host name, max clients, no master), so KTX's own configs (which set 8 clients and
//! a 4on4 mode) do not run. A player is a [`TestClient`]: the connectionless
//! `getchallenge` and `connect` of a real client, after which the server lists it in
//! `status` (with ping 999 until it sends game packets).

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::interop::TempDir;

/// Where the Debian package puts the server.
pub const MVDSV: &str = "/usr/games/mvdsv";
/// KTX's game module (Debian package `ktx`).
pub const KTX_PROGS: &str = "/usr/lib/quakeworld/ktx/qwprogs.so";

/// How to start a [`QuakeWorld`] server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct QuakeWorldConfig {
    /// `hostname`.
    pub hostname: String,
    /// `maxclients` (1–32).
    pub max_clients: u32,
    /// The map (a generated BSP29 of that name).
    pub map: String,
    /// A QuakeWorld master to announce to (`+setmaster`: MVDSV pings it, then sends its
    /// first heartbeat at once, and one every 300 s).
    pub master: Option<SocketAddr>,
}

impl QuakeWorldConfig {
    /// A server named `hostname` with `max_clients` slots on the map `start`.
    pub fn new(hostname: &str, max_clients: u32) -> Self {
        Self {
            hostname: hostname.into(),
            max_clients,
            map: "start".into(),
            master: None,
        }
    }
}

/// A running `mvdsv` on 127.0.0.1; killed when dropped.
pub struct QuakeWorld {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    /// The UDP port it answers on.
    pub port: u16,
    lines: mpsc::Receiver<String>,
    log: Vec<String>,
    _base: TempDir,
}

/// Writes a minimal valid BSP29 map to `path`: entities (`worldspawn`,
/// `info_player_start`, `info_player_deathmatch`), one plane (z = 0), one node with an
/// empty leaf above and a solid leaf below, one clip node for the player hulls, one
/// model. 440 bytes.
pub fn write_bsp29(path: &Path) -> std::io::Result<()> {
    std::fs::write(path, bsp29())
}

/// The bytes of [`write_bsp29`]'s map (the NetQuake server packs them into its data).
pub fn bsp29() -> Vec<u8> {
    fn le32(v: &mut Vec<u8>, n: i32) {
        v.extend_from_slice(&n.to_le_bytes());
    }
    fn le16(v: &mut Vec<u8>, n: i16) {
        v.extend_from_slice(&n.to_le_bytes());
    }
    fn f32le(v: &mut Vec<u8>, f: f32) {
        v.extend_from_slice(&f.to_le_bytes());
    }
    let entities = b"{\n\"classname\" \"worldspawn\"\n}\n{\n\"classname\" \"info_player_start\"\n\"origin\" \"0 0 24\"\n}\n{\n\"classname\" \"info_player_deathmatch\"\n\"origin\" \"0 0 24\"\n}\n\0".to_vec();
    // plane: normal (0, 0, 1), distance 0, type 2 (PLANE_Z)
    let mut planes = Vec::new();
    for f in [0.0, 0.0, 1.0, 0.0] {
        f32le(&mut planes, f);
    }
    le32(&mut planes, 2);
    // node: plane 0, front leaf 1 (-2), back leaf 0 (-1), bounds, no faces
    let mut nodes = Vec::new();
    le32(&mut nodes, 0);
    for n in [-2, -1, -64, -64, -64, 64, 64, 64, 0, 0] {
        le16(&mut nodes, n);
    }
    // leaves: 0 solid (-2), 1 empty (-1); no vis, bounds, no faces, no ambience
    let mut leafs = Vec::new();
    for (contents, bounds) in [(-2, [0i16; 6]), (-1, [-64, -64, 0, 64, 64, 64])] {
        le32(&mut leafs, contents);
        le32(&mut leafs, -1);
        for b in bounds {
            le16(&mut leafs, b);
        }
        le16(&mut leafs, 0);
        le16(&mut leafs, 0);
        leafs.extend_from_slice(&[0; 4]);
    }
    // clip node: plane 0, front empty (-1), back solid (-2)
    let mut clipnodes = Vec::new();
    le32(&mut clipnodes, 0);
    le16(&mut clipnodes, -1);
    le16(&mut clipnodes, -2);
    // model: bounds, origin, head nodes 0 (hull 0: node 0; hulls 1, 2: clip node 0),
    // one visible leaf, no faces
    let mut models = Vec::new();
    for f in [-64.0, -64.0, -64.0, 64.0, 64.0, 64.0, 0.0, 0.0, 0.0] {
        f32le(&mut models, f);
    }
    for n in [0, 0, 0, 0, 1, 0, 0] {
        le32(&mut models, n);
    }
    let mut lumps: Vec<Vec<u8>> = vec![Vec::new(); 15];
    for (i, l) in [
        (0, entities),
        (1, planes),
        (5, nodes),
        (9, clipnodes),
        (10, leafs),
        (14, models),
    ] {
        if let Some(slot) = lumps.get_mut(i) {
            *slot = l;
        }
    }
    let header_len = 4 + 15 * 8;
    let mut header = Vec::new();
    le32(&mut header, 29);
    let mut body = Vec::new();
    for l in &lumps {
        le32(&mut header, (header_len + body.len()) as i32);
        le32(&mut header, l.len() as i32);
        body.extend_from_slice(l);
        while body.len() % 4 != 0 {
            body.push(0);
        }
    }
    header.extend_from_slice(&body);
    header
}

impl QuakeWorld {
    /// The server's binary and KTX, or a failed test (the interop tests are on, so a
    /// missing server is an installation error).
    pub fn binary() -> PathBuf {
        super::installed(KTX_PROGS, "Debian package ktx");
        super::installed(MVDSV, "Debian package mvdsv")
    }

    /// Starts a server on a free loopback port and waits (up to 20 s) until it answers
    /// `status`.
    pub fn start(config: &QuakeWorldConfig) -> Self {
        let bin = Self::binary();
        let mut last_err = String::new();
        for _ in 0..5 {
            let base = TempDir::new("quakeworld");
            let maps = base.0.join("id1/maps");
            let ktx = base.0.join("ktx");
            std::fs::create_dir_all(&maps).expect("a maps folder");
            std::fs::create_dir_all(&ktx).expect("a ktx folder");
            for name in [config.map.as_str(), "dm3"] {
                write_bsp29(&maps.join(format!("{name}.bsp"))).expect("a map");
            }
            std::os::unix::fs::symlink(KTX_PROGS, ktx.join("qwprogs.so")).expect("a link");
            let cfg = format!(
                "sv_progtype 1\nsv_progsname qwprogs\ndeathmatch 1\nhostname \"{}\"\n\
                 maxclients {}\ntimeout 300\n",
                config.hostname.replace('"', ""),
                config.max_clients
            );
            std::fs::write(ktx.join("server.cfg"), cfg).expect("server.cfg");
            let port = crate::interop::free_port();
            let mut command = Command::new(&bin);
            command
                .arg("-basedir")
                .arg(&base.0)
                .args(["-port", &port.to_string(), "-ip", "127.0.0.1"])
                .args(["+gamedir", "ktx", "+map", &config.map]);
            if let Some(m) = config.master {
                command.args(["+setmaster", &m.to_string()]);
            }
            let mut child = command
                .current_dir(&base.0)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
            let stdin = child.stdin.take();
            let rx = super::console_lines(&mut child);
            let mut server = Self {
                child: Some(child),
                stdin,
                port,
                lines: rx,
                log: Vec::new(),
                _base: base,
            };
            if server.wait_ready() {
                return server;
            }
            last_err = server.log().join("\n");
            server.kill();
        }
        panic!("mvdsv did not start: {last_err}");
    }

    /// Waits until the server answers `status` with its server info.
    fn wait_ready(&mut self) -> bool {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
        let _ = sock.set_read_timeout(Some(Duration::from_millis(200)));
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut buf = [0u8; 8192];
        while Instant::now() < deadline {
            self.drain();
            if self.exited() {
                return false;
            }
            let _ = sock.send_to(b"\xff\xff\xff\xffstatus\n", self.addr());
            if let Ok((n, _)) = sock.recv_from(&mut buf) {
                if buf
                    .get(..n)
                    .is_some_and(|d| d.starts_with(b"\xff\xff\xff\xffn\\"))
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

    /// The address it answers on.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// The console output so far.
    pub fn log(&mut self) -> &[String] {
        self.drain();
        &self.log
    }

    /// Types `line` on the server's console (`quit`: it sends its masters `C\n` and
    /// exits; `heartbeat`: a heartbeat now).
    pub fn console(&mut self, line: &str) {
        use std::io::Write;
        if let Some(stdin) = self.stdin.as_mut() {
            // one write: MVDSV takes what one read returns as the line and drops its
            // last byte (`writeln!` writes the line and its newline apart: it ran "qui")
            let _ = stdin.write_all(format!("{line}\n").as_bytes());
            let _ = stdin.flush();
        }
    }

    /// Waits up to `limit` for the server to exit; whether it did.
    pub fn wait_exit(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.exited() {
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

impl Drop for QuakeWorld {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A client connected to a QuakeWorld server (`getchallenge`, then `connect` with its
/// user info); the server lists it in `status` until the socket is dropped and the
/// server's `timeout` (set to 300 s: a loaded machine may run the readers for a minute) passes.
pub struct TestClient {
    _sock: UdpSocket,
}

impl TestClient {
    /// Connects as `name` with these colours, skin and team; waits up to 5 s for the
    /// server's `j` (accepted).
    pub fn connect(
        server: SocketAddr,
        name: &str,
        colors: (u8, u8),
        skin: &str,
        team: &str,
    ) -> Self {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
        let _ = sock.set_read_timeout(Some(Duration::from_millis(300)));
        let mut buf = [0u8; 2048];
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let _ = sock.send_to(b"\xff\xff\xff\xffgetchallenge\n", server);
            let Ok((n, _)) = sock.recv_from(&mut buf) else {
                continue;
            };
            let Some(rest) = buf
                .get(..n)
                .and_then(|d| d.strip_prefix(b"\xff\xff\xff\xffc"))
            else {
                continue;
            };
            let challenge: String = rest
                .iter()
                .take_while(|b| b.is_ascii_digit() || **b == b'-')
                .map(|&b| char::from(b))
                .collect();
            let connect = format!(
                "\u{ff}\u{ff}\u{ff}\u{ff}connect 28 {} {challenge} \"\\name\\{name}\\topcolor\\{}\\bottomcolor\\{}\\skin\\{skin}\\team\\{team}\"\n",
                sock.local_addr().map_or(0, |a| a.port()),
                colors.0,
                colors.1,
            );
            // The prefix is four 0xFF bytes, not their UTF-8 encoding.
            let mut datagram = vec![0xff; 4];
            datagram.extend_from_slice(connect.trim_start_matches('\u{ff}').as_bytes());
            let _ = sock.send_to(&datagram, server);
            if let Ok((n, _)) = sock.recv_from(&mut buf) {
                if buf
                    .get(..n)
                    .is_some_and(|d| d.starts_with(b"\xff\xff\xff\xffj"))
                {
                    return Self { _sock: sock };
                }
            }
        }
        panic!("the QuakeWorld server at {server} did not accept a test client within 5 s");
    }
}

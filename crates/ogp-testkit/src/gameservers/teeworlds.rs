//! Teeworlds 0.7 (`teeworlds-server` 0.7.5) and DDNet (`ddnet-server` 16.4) on loopback
//! (issue #38), as `scripts/gameservers.d/teeworlds.sh` installs them.
//!
//! Both start headless in well under a second, with `sv_register 0` (no master). The
//! 0.7 server binds 127.0.0.1 (`bindaddr`); DDNet 16.4 exits when given `bindaddr
//! 127.0.0.1` (its IPv6 bind fails), so it binds every address on its free port.
//! Neither has bots outside debug builds: [`Teeworlds::connect_client`] makes a 0.7
//! connection (token handshake, then `CONNECT`), which 0.7 servers list as a client
//! named `(connecting)`, a spectator, until it times out.

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::interop::{free_port, TempDir};

/// Where the Debian package puts the 0.7 server.
pub const TEEWORLDS_SERVER: &str = "/usr/games/teeworlds-server";
/// Where the Debian package puts the DDNet server.
pub const DDNET_SERVER: &str = "/usr/games/DDNet-Server";

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// `teeworlds-server` 0.7.5: the 0.7 protocol only.
    Teeworlds07,
    /// `DDNet-Server` 16.4: 0.6 (`inf3`, `iext`) and 0.7.
    Ddnet,
}

/// How to start a [`Teeworlds`] server.
#[derive(Debug, Clone)]
pub struct TeeworldsConfig {
    /// Which server.
    pub flavor: Flavor,
    /// `sv_name`.
    pub name: String,
    /// `sv_map` (`dm1`, `ctf2` for 0.7; `Tutorial`, `Tsunami` for DDNet).
    pub map: String,
    /// `sv_max_clients`.
    pub max_clients: u32,
    /// More console commands, after ours (`sv_register ipv4` overrides our `sv_register
    /// 0`, `sv_register_url …` points DDNet at a master of the test's).
    pub extra_args: Vec<String>,
    /// The 0.7 server's `masters.cfg` (in its storage directory,
    /// `$HOME/.local/share/teeworlds/`): lines `NAME ADDRESS`. Each NAME replaces one of
    /// the four default masters (`master1.teeworlds.com` …) and is looked up (a numeric
    /// NAME needs no DNS) at each start of the registration; the masters are asked on
    /// port 8283, always. Give four lines, or the rest are looked up in the DNS.
    pub masters_cfg: Option<String>,
}

impl TeeworldsConfig {
    /// A server of `flavor` named `name`, on its first map, with 8 client slots.
    pub fn new(flavor: Flavor, name: &str) -> Self {
        Self {
            flavor,
            name: name.into(),
            map: match flavor {
                Flavor::Teeworlds07 => "dm1".into(),
                Flavor::Ddnet => "Tutorial".into(),
            },
            max_clients: 8,
            extra_args: Vec::new(),
            masters_cfg: None,
        }
    }
}

/// A running server on a free loopback port; killed when dropped.
pub struct Teeworlds {
    child: Option<Child>,
    /// Kept open: a closed stdin makes some servers spin.
    _stdin: Option<ChildStdin>,
    /// The UDP port it answers on.
    pub port: u16,
    lines: mpsc::Receiver<String>,
    log: Vec<String>,
    _home: TempDir,
}

/// A 0.7 connection held open (the server lists it until it times out or this drops).
pub struct Connected {
    _sock: UdpSocket,
}

/// The 0.7 token handshake from `sock` to `addr` with our `token`: the server's token.
fn handshake7(sock: &UdpSocket, addr: SocketAddr, token: [u8; 4]) -> Option<[u8; 4]> {
    let mut req = vec![0x04, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x05];
    req.extend_from_slice(&token);
    req.resize(520, 0);
    let mut buf = [0u8; 2048];
    for _ in 0..8 {
        sock.send_to(&req, addr).ok()?;
        if let Ok((n, _)) = sock.recv_from(&mut buf) {
            let d = buf.get(..n)?;
            if d.len() >= 12 && d.get(..3) == Some(&[4, 0, 0]) && d.get(7) == Some(&5) {
                return d.get(8..12)?.try_into().ok();
            }
        }
    }
    None
}

impl Teeworlds {
    /// The binary of `flavor`, or a failed test (a missing server is an installation
    /// error).
    pub fn binary(flavor: Flavor) -> PathBuf {
        match flavor {
            Flavor::Teeworlds07 => {
                super::installed(TEEWORLDS_SERVER, "Debian package teeworlds-server")
            }
            Flavor::Ddnet => super::installed(DDNET_SERVER, "Debian package ddnet-server"),
        }
    }

    /// Starts a server on a free port and waits (up to 20 s) until it answers.
    pub fn start(config: &TeeworldsConfig) -> Self {
        let bin = Self::binary(config.flavor);
        let mut last = String::new();
        for _ in 0..5 {
            let home = TempDir::new("teeworlds");
            let port = free_port();
            if let Some(cfg) = &config.masters_cfg {
                let storage = home.0.join(".local/share/teeworlds");
                std::fs::create_dir_all(&storage).expect("the server's storage directory");
                std::fs::write(storage.join("masters.cfg"), cfg).expect("masters.cfg");
            }
            let mut cmd = Command::new(&bin);
            cmd.env("HOME", &home.0).current_dir(&home.0);
            if config.flavor == Flavor::Teeworlds07 {
                cmd.arg("bindaddr 127.0.0.1");
            }
            cmd.arg(format!("sv_port {port}"))
                .arg(format!("sv_name {}", quote(&config.name)))
                .arg(format!("sv_map {}", quote(&config.map)))
                .arg(format!("sv_max_clients {}", config.max_clients))
                .arg("sv_register 0")
                .args(&config.extra_args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = cmd
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
            let rx = super::console_lines(&mut child);
            let mut s = Self {
                _stdin: child.stdin.take(),
                child: Some(child),
                port,
                lines: rx,
                log: Vec::new(),
                _home: home,
            };
            if s.wait_ready(config.flavor) {
                return s;
            }
            last = s.log().join("\n");
            s.kill();
        }
        panic!("{} did not start; log:\n{last}", bin.display());
    }

    /// The address it answers on.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// The console output so far.
    pub fn log(&mut self) -> &[String] {
        while let Ok(l) = self.lines.try_recv() {
            self.log.push(l);
        }
        &self.log
    }

    /// Opens a 0.7 connection (token handshake, `CONNECT`, until `CONNECTACCEPT`).
    pub fn connect_client(&self, token: u32) -> Connected {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
        let _ = sock.set_read_timeout(Some(Duration::from_millis(250)));
        let ours = token.to_be_bytes();
        let theirs = handshake7(&sock, self.addr(), ours).expect("a 0.7 token");
        let mut connect = vec![0x04, 0x00, 0x00];
        connect.extend_from_slice(&theirs);
        connect.push(0x01);
        connect.extend_from_slice(&ours);
        connect.resize(520, 0);
        let mut buf = [0u8; 2048];
        for _ in 0..8 {
            let _ = sock.send_to(&connect, self.addr());
            if let Ok((n, _)) = sock.recv_from(&mut buf) {
                // CONNECTACCEPT: control message 2.
                if buf.get(..n).and_then(|d| d.get(7)) == Some(&2) {
                    return Connected { _sock: sock };
                }
            }
        }
        panic!("no CONNECTACCEPT from {}", self.addr());
    }

    fn wait_ready(&mut self, flavor: Flavor) -> bool {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
        let _ = sock.set_read_timeout(Some(Duration::from_millis(200)));
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut buf = [0u8; 2048];
        while Instant::now() < deadline {
            if self.exited() {
                return false;
            }
            match flavor {
                Flavor::Teeworlds07 => {
                    if handshake7(&sock, self.addr(), [1, 2, 3, 4]).is_some() {
                        return true;
                    }
                }
                Flavor::Ddnet => {
                    let _ = sock.send_to(
                        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffgie3\x01",
                        self.addr(),
                    );
                    if let Ok((n, _)) = sock.recv_from(&mut buf) {
                        if buf.get(6..14) == Some(b"\xff\xff\xff\xffinf3".as_slice()) && n > 14 {
                            return true;
                        }
                    }
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

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Teeworlds {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A console argument: in double quotes, with `"` and `\` escaped.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

//! NetQuake on loopback (issue #38): Debian's `quakespasm` run as a dedicated server,
//! with the game logic (`progs.dat`) that `scripts/gameservers.d/netquake.sh` compiles
//! from our QuakeC (`tests/interop/netquake/`) with Debian's `fteqcc`.
//!
//! Debian has no Quake data, and the engine, finding no registered Quake, reads files in
//! folders (`maps/…`, `progs/…`) only from pack files, and refuses a pack file that is
//! not the shareware `pak0.pak` (by its count of files and the CRC of its directory).
//! [`write_pak`] writes one that passes that check: the map (the BSP29 of
//! [`super::quakeworld::bsp29`]), the same map as the player model the engine asks for
//! (it draws nothing on a dedicated server), `progs.dat` and an empty `gfx.wad`, then
//! empty entries up to the count, the last one's name (after its terminating zero)
//! chosen so that the directory's CRC is the expected one. `autoexec.cfg` sets the host
//! name and loads the map; `-dedicated N` sets the slots.
//!
//! The server binds its port on every address (quakespasm has no switch for one; `-ip
//! 127.0.0.1` only sets the address it reports); the tests talk to it on 127.0.0.1
//! only. A player is a [`TestClient`]: the `CCREQ_CONNECT` of a real client, then the
//! `name` and `color` commands in an unreliable datagram to the port the server gave;
//! the server lists it in `CCREQ_PLAYER_INFO` (it never spawns: frags 0).

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::interop::{missing_peer, TempDir};

/// Where the Debian package puts the engine.
pub const QUAKESPASM: &str = "/usr/games/quakespasm";

/// The shareware `pak0.pak`'s count of files, which the engine checks.
const PAK0_COUNT: usize = 339;
/// The CRC (CRC-16/CCITT, initial value 0xFFFF) of that pack's directory.
const PAK0_CRC: u16 = 32981;

/// How to start a [`NetQuake`] server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct NetQuakeConfig {
    /// `hostname` (no `"`).
    pub hostname: String,
    /// `-dedicated N`: the slots (1–16).
    pub max_players: u32,
    /// The map (a generated BSP29 of that name).
    pub map: String,
}

impl NetQuakeConfig {
    /// A server named `hostname` with `max_players` slots on the map `start`.
    pub fn new(hostname: &str, max_players: u32) -> Self {
        Self {
            hostname: hostname.into(),
            max_players,
            map: "start".into(),
        }
    }
}

/// A running dedicated `quakespasm`; killed when dropped.
pub struct NetQuake {
    child: Option<Child>,
    /// The UDP port it answers on.
    pub port: u16,
    lines: mpsc::Receiver<String>,
    log: Vec<String>,
    _base: TempDir,
}

/// The CRC of Quake's pack directories (CRC-16/CCITT: polynomial 0x1021, initial value
/// 0xFFFF, no final XOR) of `data`, continued from `crc`.
fn crc16(mut crc: u16, data: &[u8]) -> u16 {
    for &b in data {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// Writes a pack file (`PACK`, the directory's offset and length, the files, then a
/// 64-byte entry per file: name in 56 bytes, offset, length) holding `files`, padded with
/// empty entries to the shareware pack's count and with the shareware pack's directory
/// CRC, so that an engine without registered data loads it.
pub fn write_pak(path: &Path, files: &[(&str, &[u8])]) -> std::io::Result<()> {
    let mut data = Vec::new();
    let mut entries: Vec<([u8; 56], u32, u32)> = Vec::new();
    let entry = |name: &str, pos: usize, len: usize| {
        let mut n = [0u8; 56];
        for (d, s) in n.iter_mut().zip(name.bytes().take(55)) {
            *d = s;
        }
        (n, (12 + pos) as u32, len as u32)
    };
    for (name, bytes) in files {
        entries.push(entry(name, data.len(), bytes.len()));
        data.extend_from_slice(bytes);
    }
    let mut i = 0;
    while entries.len() < PAK0_COUNT {
        entries.push(entry(&format!("pad/{i:03}"), 0, 0));
        i += 1;
    }
    let encode = |(n, pos, len): &([u8; 56], u32, u32)| {
        let mut e = n.to_vec();
        e.extend_from_slice(&pos.to_le_bytes());
        e.extend_from_slice(&len.to_le_bytes());
        e
    };
    let mut dir: Vec<u8> = entries
        .iter()
        .take(PAK0_COUNT - 1)
        .flat_map(encode)
        .collect();
    let crc = crc16(0xffff, &dir);
    let mut last = entries.last().copied().expect("a last entry");
    let tuned = (0..=u16::MAX).find_map(|x| {
        last.0[54..].copy_from_slice(&x.to_be_bytes());
        let e = encode(&last);
        (crc16(crc, &e) == PAK0_CRC).then_some(e)
    });
    dir.extend(tuned.expect("two free bytes reach any CRC-16"));
    let mut pak = b"PACK".to_vec();
    pak.extend_from_slice(&((12 + data.len()) as u32).to_le_bytes());
    pak.extend_from_slice(&(dir.len() as u32).to_le_bytes());
    pak.extend_from_slice(&data);
    pak.extend_from_slice(&dir);
    std::fs::write(path, pak)
}

/// `CCREQ_SERVER_INFO` naming Quake (protocol version 3).
pub const SERVER_INFO_REQUEST: &[u8] = b"\x80\x00\x00\x0c\x02QUAKE\x00\x03";

impl NetQuake {
    /// The engine, or a failed test (the interop tests are on, so a missing server is an
    /// installation error).
    pub fn binary() -> PathBuf {
        super::installed(QUAKESPASM, "Debian package quakespasm")
    }

    /// The compiled game logic, or a failed test.
    pub fn progs() -> PathBuf {
        let p = crate::interop::interop_dir().join("netquake/progs.dat");
        if !p.is_file() {
            missing_peer(&format!(
                "{} (compiled by scripts/install-gameservers.sh)",
                p.display()
            ));
        }
        p
    }

    /// Starts a server on a free port and waits (up to 20 s) until it answers
    /// `CCREQ_SERVER_INFO`.
    pub fn start(config: &NetQuakeConfig) -> Self {
        let bin = Self::binary();
        let progs = std::fs::read(Self::progs()).expect("progs.dat");
        let map = super::quakeworld::bsp29();
        let mut last_err = String::new();
        for _ in 0..5 {
            let base = TempDir::new("netquake");
            let id1 = base.0.join("id1");
            std::fs::create_dir_all(&id1).expect("an id1 folder");
            let map_name = format!("maps/{}.bsp", config.map);
            write_pak(
                &id1.join("pak0.pak"),
                &[
                    (map_name.as_str(), &map[..]),
                    ("progs/player.mdl", &map[..]),
                    ("progs.dat", &progs[..]),
                    ("gfx.wad", b"WAD2\0\0\0\0\x0c\0\0\0"),
                ],
            )
            .expect("pak0.pak");
            let cfg = format!(
                "hostname \"{}\"\nmap {}\n",
                config.hostname.replace('"', ""),
                config.map
            );
            std::fs::write(id1.join("autoexec.cfg"), cfg).expect("autoexec.cfg");
            let port = crate::interop::free_port();
            let mut child = Command::new(&bin)
                .arg("-basedir")
                .arg(&base.0)
                .args(["-dedicated", &config.max_players.to_string()])
                .args(["-port", &port.to_string(), "-ip", "127.0.0.1"])
                .env("HOME", &base.0)
                .current_dir(&base.0)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
            let rx = super::console_lines(&mut child);
            let mut server = Self {
                child: Some(child),
                port,
                lines: rx,
                log: Vec::new(),
                _base: base,
            };
            if server.wait_ready() {
                return server;
            }
            server.kill();
            last_err = server.log().join("\n");
        }
        panic!("quakespasm did not start: {last_err}");
    }

    /// Waits until the server answers `CCREQ_SERVER_INFO` (`CCREP_SERVER_INFO`, 0x83).
    fn wait_ready(&mut self) -> bool {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
        let _ = sock.set_read_timeout(Some(Duration::from_millis(200)));
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut buf = [0u8; 1500];
        while Instant::now() < deadline {
            self.drain();
            if self.exited() {
                return false;
            }
            let _ = sock.send_to(SERVER_INFO_REQUEST, self.addr());
            if let Ok((n, _)) = sock.recv_from(&mut buf) {
                if buf.get(4) == Some(&0x83) && n > 5 {
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

    /// The console output so far (the engine writes it in blocks: most of it comes
    /// when it exits).
    pub fn log(&mut self) -> &[String] {
        self.drain();
        &self.log
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for NetQuake {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A client connected to a NetQuake server: listed in `CCREQ_PLAYER_INFO` with its name
/// and colours until the socket is dropped and the server's `net_messagetimeout` (300 s)
/// passes.
pub struct TestClient {
    _sock: UdpSocket,
}

impl TestClient {
    /// Connects as `name` with these colours (shirt, pants; 0–13) and waits up to 5 s
    /// until the server lists the name.
    pub fn connect(server: SocketAddr, name: &str, colors: (u8, u8)) -> Self {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
        let _ = sock.set_read_timeout(Some(Duration::from_millis(300)));
        let mut buf = [0u8; 1500];
        let deadline = Instant::now() + Duration::from_secs(5);
        // CCREQ_CONNECT "QUAKE" 3; CCREP_ACCEPT (0x81) gives the port of the connection.
        let mut port = None;
        while port.is_none() && Instant::now() < deadline {
            let _ = sock.send_to(b"\x80\x00\x00\x0c\x01QUAKE\x00\x03", server);
            if let Ok((n, _)) = sock.recv_from(&mut buf) {
                if let (Some(0x81), Some(p)) = (buf.get(4), buf.get(5..9).filter(|_| n >= 9)) {
                    let p = i32::from_le_bytes([p[0], p[1], p[2], p[3]]);
                    port = u16::try_from(p).ok();
                }
            }
        }
        let port = port.unwrap_or_else(|| panic!("{server} did not accept a connection"));
        let conn = SocketAddr::new(server.ip(), port);
        let mut body = Vec::new();
        for cmd in [
            format!("name \"{}\"", name.replace('"', "")),
            format!("color {} {}", colors.0, colors.1),
        ] {
            body.push(4); // clc_stringcmd
            body.extend_from_slice(cmd.as_bytes());
            body.push(0);
        }
        let query = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
        let _ = query.set_read_timeout(Some(Duration::from_millis(300)));
        let mut sequence: u32 = 0;
        while Instant::now() < deadline {
            // An unreliable datagram: NETFLAG_UNRELIABLE | length, then its sequence.
            let len = (8 + body.len()) as u32;
            let mut d = (0x0010_0000 | len).to_be_bytes().to_vec();
            d.extend_from_slice(&sequence.to_be_bytes());
            d.extend_from_slice(&body);
            let _ = sock.send_to(&d, conn);
            sequence += 1;
            // CCREQ_PLAYER_INFO for each slot: is the name there yet?
            for slot in 0..16u8 {
                let _ = query.send_to(&[0x80, 0, 0, 6, 0x03, slot], server);
                let Ok((n, _)) = query.recv_from(&mut buf) else {
                    break;
                };
                let reply = buf.get(..n).unwrap_or_default();
                if reply
                    .get(6..)
                    .is_some_and(|r| r.starts_with(name.as_bytes()))
                {
                    return Self { _sock: sock };
                }
            }
        }
        panic!("{server} did not list the test client {name} within 5 s");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pack has the shareware pack's count of entries and directory CRC, and its
    /// files where its directory says.
    #[test]
    fn the_pak_passes_the_engines_check() {
        let dir = TempDir::new("netquake-pak");
        let path = dir.0.join("pak0.pak");
        write_pak(
            &path,
            &[("maps/start.bsp", b"map"), ("progs.dat", b"progs")],
        )
        .unwrap();
        let pak = std::fs::read(&path).unwrap();
        assert_eq!(&pak[..4], b"PACK");
        let at = |i: usize| u32::from_le_bytes(pak[i..i + 4].try_into().unwrap()) as usize;
        let (ofs, len) = (at(4), at(8));
        assert_eq!(len, PAK0_COUNT * 64);
        let dir = &pak[ofs..ofs + len];
        assert_eq!(crc16(0xffff, dir), PAK0_CRC);
        assert!(dir.starts_with(b"maps/start.bsp\0"));
        let (pos, n) = (at(ofs + 56), at(ofs + 60));
        assert_eq!(&pak[pos..pos + n], b"map");
        // The CRC of "123456789" (CRC-16/CCITT-FALSE's check value).
        assert_eq!(crc16(0xffff, b"123456789"), 0x29b1);
    }
}

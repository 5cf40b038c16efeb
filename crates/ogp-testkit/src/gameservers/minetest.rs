//! Minetest / Luanti's dedicated server (`minetestserver`, Debian's `minetest-server`
//! 5.6 with its default game) on loopback (issue #38).
//!
//! It gets a config in a temporary home (`bind_address = 127.0.0.1`,
//! `server_announce = false`: it never talks to the public server list), a fresh world,
//! `--verbose` (its log says when a peer is added and deleted, and whether by a
//! timeout), its stdin a pipe that stays open, and a free port. `start` waits until the
//! log says it listens.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::interop::TempDir;

/// Where the Debian package puts the server.
pub const MINETESTSERVER: &str = "/usr/games/minetestserver";

/// How to start a [`Minetest`] server.
#[derive(Debug, Clone)]
pub struct MinetestConfig {
    /// `server_name`.
    pub name: String,
    /// `max_users`.
    pub max_users: u32,
}

impl MinetestConfig {
    /// A server of this name, for 8 users.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            max_users: 8,
        }
    }
}

/// A running `minetestserver` on 127.0.0.1; killed when dropped.
pub struct Minetest {
    child: Child,
    _stdin: Option<ChildStdin>,
    /// The UDP port it listens on.
    pub port: u16,
    lines: mpsc::Receiver<String>,
    log: Vec<String>,
    _home: TempDir,
}

impl Minetest {
    /// The server's binary, or a failed test (the interop tests are on, so a missing
    /// server is an installation error).
    pub fn binary() -> PathBuf {
        super::installed(MINETESTSERVER, "Debian package minetest-server")
    }

    /// Starts a server on a free loopback port and waits (up to 30 s) until its log says
    /// it listens there.
    pub fn start(config: &MinetestConfig) -> Self {
        let bin = Self::binary();
        let mut last_err = String::new();
        for _ in 0..3 {
            let home = TempDir::new("minetest");
            let port = crate::interop::free_port();
            let conf = home.0.join("minetest.conf");
            let text = format!(
                "bind_address = 127.0.0.1\nserver_announce = false\nserver_name = {}\n\
                 max_users = {}\nenable_ipv6 = false\nipv6_server = false\n",
                config.name, config.max_users,
            );
            std::fs::write(&conf, text).expect("write minetest.conf");
            let mut child = Command::new(&bin)
                .env("HOME", &home.0)
                .current_dir(&home.0)
                .arg("--config")
                .arg(&conf)
                .arg("--world")
                .arg(home.0.join("world"))
                .args(["--gameid", "minetest", "--verbose", "--port"])
                .arg(port.to_string())
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
            let want = format!("listening on 127.0.0.1:{port}");
            if server
                .wait_for_line(Duration::from_secs(30), |l| l.contains(&want))
                .is_some()
            {
                return server;
            }
            last_err = server.log().join("\n");
            server.kill();
        }
        panic!("minetestserver did not start; log:\n{last_err}");
    }

    /// Waits up to `limit` for a log line (new or already seen) that `pred` accepts.
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
                    if self.child.try_wait().ok().flatten().is_some() {
                        return None;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// The log so far.
    pub fn log(&mut self) -> &[String] {
        while let Ok(l) = self.lines.try_recv() {
            self.log.push(l);
        }
        &self.log
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Minetest {
    fn drop(&mut self) {
        self.kill();
    }
}

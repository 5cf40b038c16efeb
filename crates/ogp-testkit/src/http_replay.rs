//! A loopback HTTP/1.1 server replaying recorded documents by path, for the protocols
//! that read JSON documents over HTTP (FiveM, Eco, …): every client (ours, gamedig)
//! reads the same bytes.
//!
//! ```no_run
//! use ogp_testkit::http_replay::{Documents, HttpReplay};
//! let docs = Documents::recorded("eco", "letskautsch", &[("frontpage", "/frontpage")]);
//! let server = HttpReplay::start(docs);
//! println!("Eco's web port on {}", server.addr());
//! ```
//!
//! Each connection is served in a thread, request after request (keep-alive;
//! `Connection: close` ends it); a known path gets `200` with its document
//! (`Content-Length`), any other `404`. A path ending in `*` serves every path it
//! starts (Assetto Corsa's `/JSON|N`, whose `N` gamedig draws at random). The paths asked are recorded
//! ([`HttpReplay::paths`]). Everything stops when dropped.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The documents a replay serves, by path.
#[derive(Debug, Clone, Default)]
pub struct Documents(pub BTreeMap<String, Vec<u8>>);

impl Documents {
    /// The recorded documents `NAME.SUFFIX.json` (`NAME.json` for an empty suffix; or
    /// `.xml`) of
    /// `crates/ogp-proto/tests/data/GAME/`, each served at its path (`(suffix, path)`
    /// pairs; those that exist). Panics when none exists.
    pub fn recorded(game: &str, name: &str, files: &[(&str, &str)]) -> Self {
        let dir = format!(
            "{}/../ogp-proto/tests/data/{game}",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut d = BTreeMap::new();
        for (suffix, path) in files {
            let stem = if suffix.is_empty() {
                format!("{dir}/{name}")
            } else {
                format!("{dir}/{name}.{suffix}")
            };
            let read = |ext: &str| std::fs::read(format!("{stem}.{ext}"));
            if let Ok(b) = read("json").or_else(|_| read("xml")) {
                d.insert((*path).to_string(), b);
            }
        }
        assert!(!d.is_empty(), "no recorded {game} documents named {name}");
        Self(d)
    }

    /// These documents and `body` at `path`.
    pub fn with(mut self, path: &str, body: impl Into<Vec<u8>>) -> Self {
        self.0.insert(path.to_string(), body.into());
        self
    }
}

/// A replaying HTTP server on `127.0.0.1`; stops when dropped.
pub struct HttpReplay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    paths: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl HttpReplay {
    /// Starts serving `docs` on a free loopback port.
    pub fn start(docs: Documents) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a TCP port");
        Self::serve_on(listener, docs)
    }

    /// Starts serving `docs` on `listener` (bound by the caller: FiveM's replay binds
    /// TCP and UDP on one port).
    pub fn serve_on(listener: TcpListener, docs: Documents) -> Self {
        let addr = listener.local_addr().expect("local address");
        let stop = Arc::new(AtomicBool::new(false));
        let paths = Arc::new(Mutex::new(Vec::new()));
        let docs = Arc::new(docs);
        listener.set_nonblocking(true).expect("non-blocking");
        let (s, p) = (Arc::clone(&stop), Arc::clone(&paths));
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let (d, p) = (Arc::clone(&docs), Arc::clone(&p));
                        std::thread::spawn(move || serve(conn, &d, &p));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Self {
            addr,
            stop,
            paths,
            thread: Some(thread),
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The paths asked so far, in order.
    pub fn paths(&self) -> Vec<String> {
        self.paths.lock().map(|p| p.clone()).unwrap_or_default()
    }
}

impl Drop for HttpReplay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Serves one connection: requests until `Connection: close`, the client's close, 5 s
/// of silence or 100 requests.
fn serve(mut conn: TcpStream, docs: &Documents, paths: &Mutex<Vec<String>>) {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = Vec::new();
    for _ in 0..100 {
        let Some(end) = read_head(&mut conn, &mut buf) else {
            return;
        };
        let head = String::from_utf8_lossy(buf.get(..end).unwrap_or_default()).to_string();
        buf.drain(..end);
        let (path, close) = request_of(&head);
        let path = path.to_string();
        if let Ok(mut p) = paths.lock() {
            p.push(path.clone());
        }
        let found = docs.0.get(&path).or_else(|| {
            docs.0.iter().find_map(|(k, v)| {
                let prefix = k.strip_suffix('*')?;
                path.starts_with(prefix).then_some(v)
            })
        });
        let response = match found {
            Some(body) => [
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                )
                .into_bytes(),
                body.clone(),
            ]
            .concat(),
            None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(),
        };
        if conn.write_all(&response).is_err() || close {
            return;
        }
    }
}

/// A request head's path, and whether it asks to close the connection.
pub fn request_of(head: &str) -> (&str, bool) {
    let path = head
        .lines()
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("");
    let close = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("connection:") && l.contains("close")
    });
    (path, close)
}

/// Reads until a request head is whole: its length in `buf`; `None` when the client
/// closed, went silent or sent more than 16 KiB.
fn read_head(conn: &mut TcpStream, buf: &mut Vec<u8>) -> Option<usize> {
    loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Some(i + 4);
        }
        if buf.len() > 16 * 1024 {
            return None;
        }
        let mut chunk = [0u8; 4096];
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(chunk.get(..n).unwrap_or_default()),
        }
    }
}

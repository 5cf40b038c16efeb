//! A loopback FiveM server replaying recorded JSON documents: HTTP/1.1 on a TCP port
//! and Quake III's `getinfo` on the UDP port of the same number, as FXServer does, so
//! that every client (ours, gamedig) reads the same documents.
//!
//! ```no_run
//! use ogp_testkit::fivem::{Documents, FivemReplay};
//! let server = FivemReplay::start(Documents::recorded("zap-esx"));
//! println!("FiveM on {}", server.addr());
//! ```
//!
//! HTTP: each connection is served in a thread, request after request (keep-alive, as
//! FXServer; `Connection: close` ends it); a known path gets `200` with its document
//! (`Content-Length`), any other `404`. UDP: `getinfo CHALLENGE` gets an `infoResponse`
//! made from `/dynamic.json` in FXServer's order of keys, echoing the challenge. The
//! paths asked are recorded ([`FivemReplay::paths`]). Everything stops when dropped.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

/// The documents a replay serves, by path.
#[derive(Debug, Clone, Default)]
pub struct Documents(pub BTreeMap<String, Vec<u8>>);

impl Documents {
    /// The recorded documents `NAME.dynamic.json`, `NAME.info.json` and
    /// `NAME.players.json` of `crates/ogp-proto/tests/data/fivem/` (those that exist).
    pub fn recorded(name: &str) -> Self {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../ogp-proto/tests/data/fivem");
        let mut d = BTreeMap::new();
        for doc in ["dynamic", "info", "players"] {
            if let Ok(b) = std::fs::read(format!("{dir}/{name}.{doc}.json")) {
                d.insert(format!("/{doc}.json"), b);
            }
        }
        assert!(!d.is_empty(), "no recorded FiveM documents named {name}");
        Self(d)
    }

    /// The `infoResponse` to `getinfo CHALLENGE`, from `/dynamic.json`, in FXServer's
    /// order of keys.
    pub fn info_response(&self, challenge: &str) -> Vec<u8> {
        let dynamic: Value = self
            .0
            .get("/dynamic.json")
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or(Value::Null);
        let get = |k: &str| match &dynamic[k] {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            v => v.to_string(),
        };
        let mut out = b"\xff\xff\xff\xffinfoResponse\n".to_vec();
        for (k, v) in [
            ("sv_maxclients", get("sv_maxclients")),
            ("clients", get("clients")),
            ("challenge", challenge.to_string()),
            ("gamename", "CitizenFX".to_string()),
            ("protocol", "4".to_string()),
            ("hostname", get("hostname")),
            ("gametype", get("gametype")),
            ("mapname", get("mapname")),
            ("iv", get("iv")),
        ] {
            // FXServer always sends `iv`; a recorded document without it: left out
            if k == "iv" && v.is_empty() {
                continue;
            }
            out.extend_from_slice(format!("\\{k}\\{v}").as_bytes());
        }
        out
    }
}

/// A replaying FiveM server on `127.0.0.1` (TCP and UDP, one port); stops when dropped.
pub struct FivemReplay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    paths: Arc<Mutex<Vec<String>>>,
    threads: Vec<JoinHandle<()>>,
}

/// Binds TCP and UDP on one free loopback port.
fn bind_both() -> (TcpListener, UdpSocket) {
    for _ in 0..50 {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind a TCP port");
        let addr = l.local_addr().expect("local address");
        if let Ok(u) = UdpSocket::bind(addr) {
            return (l, u);
        }
    }
    panic!("no loopback port free for both TCP and UDP");
}

impl FivemReplay {
    /// Starts serving `docs`.
    pub fn start(docs: Documents) -> Self {
        let (listener, udp) = bind_both();
        let addr = listener.local_addr().expect("local address");
        let stop = Arc::new(AtomicBool::new(false));
        let paths = Arc::new(Mutex::new(Vec::new()));
        let docs = Arc::new(docs);
        let mut threads = Vec::new();

        udp.set_read_timeout(Some(Duration::from_millis(20)))
            .expect("read timeout");
        let (s, d) = (Arc::clone(&stop), Arc::clone(&docs));
        threads.push(std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while !s.load(Ordering::Relaxed) {
                let Ok((n, from)) = udp.recv_from(&mut buf) else {
                    continue;
                };
                let req = buf.get(..n).unwrap_or_default();
                if let Some(rest) = req.strip_prefix(b"\xff\xff\xff\xffgetinfo") {
                    let challenge = String::from_utf8_lossy(rest)
                        .trim_matches(|c: char| c == '\0' || c.is_whitespace())
                        .to_string();
                    let _ = udp.send_to(&d.info_response(&challenge), from);
                }
            }
        }));

        listener.set_nonblocking(true).expect("non-blocking");
        let (s, d, p) = (Arc::clone(&stop), docs, Arc::clone(&paths));
        threads.push(std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let (d, p) = (Arc::clone(&d), Arc::clone(&p));
                        std::thread::spawn(move || serve(conn, &d, &p));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        }));
        Self {
            addr,
            stop,
            paths,
            threads,
        }
    }

    /// Where it listens (TCP and UDP).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The HTTP paths asked so far, in order.
    pub fn paths(&self) -> Vec<String> {
        self.paths.lock().map(|p| p.clone()).unwrap_or_default()
    }
}

impl Drop for FivemReplay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
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
        let path = head
            .lines()
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .unwrap_or("")
            .to_string();
        let close = head.lines().any(|l| {
            let l = l.to_ascii_lowercase();
            l.starts_with("connection:") && l.contains("close")
        });
        if let Ok(mut p) = paths.lock() {
            p.push(path.clone());
        }
        let response = match docs.0.get(&path) {
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

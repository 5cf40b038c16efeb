//! A loopback FiveM server replaying recorded JSON documents: HTTP/1.1 on a TCP port
//! and Quake III's `getinfo` on the UDP port of the same number, as FXServer does, so
//! that every client (ours, gamedig) reads the same documents.
//!
//! ```no_run
//! use ogp_testkit::fivem::{recorded, FivemReplay};
//! let server = FivemReplay::start(recorded("zap-esx"));
//! println!("FiveM on {}", server.addr());
//! ```
//!
//! HTTP: [`HttpReplay`] (keep-alive, as FXServer; a known path `200` with its document,
//! any other `404`). UDP: `getinfo CHALLENGE` gets an `infoResponse` made from
//! `/dynamic.json` in FXServer's order of keys, echoing the challenge. The
//! paths asked are recorded ([`FivemReplay::paths`]). Everything stops when dropped.

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

pub use crate::http_replay::Documents;
use crate::http_replay::HttpReplay;

/// The recorded documents `NAME.dynamic.json`, `NAME.info.json` and `NAME.players.json`
/// of `crates/ogp-proto/tests/data/fivem/` (those that exist).
pub fn recorded(name: &str) -> Documents {
    Documents::recorded(
        "fivem",
        name,
        &[
            ("dynamic", "/dynamic.json"),
            ("info", "/info.json"),
            ("players", "/players.json"),
        ],
    )
}

/// The `infoResponse` to `getinfo CHALLENGE`, from `/dynamic.json`, in FXServer's order
/// of keys.
pub fn info_response(docs: &Documents, challenge: &str) -> Vec<u8> {
    let dynamic: Value = docs
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

/// The answer to a UDP datagram: `getinfo CHALLENGE` gets its [`info_response`];
/// anything else none.
pub fn answer_getinfo(docs: &Documents, datagram: &[u8]) -> Option<Vec<u8>> {
    let rest = datagram.strip_prefix(b"\xff\xff\xff\xffgetinfo")?;
    let challenge = String::from_utf8_lossy(rest)
        .trim_matches(|c: char| c == '\0' || c.is_whitespace())
        .to_string();
    Some(info_response(docs, &challenge))
}

/// A replaying FiveM server on `127.0.0.1` (TCP and UDP, one port); stops when dropped.
pub struct FivemReplay {
    http: HttpReplay,
    stop: Arc<AtomicBool>,
    udp: Option<JoinHandle<()>>,
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
        let stop = Arc::new(AtomicBool::new(false));
        udp.set_read_timeout(Some(Duration::from_millis(20)))
            .expect("read timeout");
        let (s, d) = (Arc::clone(&stop), docs.clone());
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while !s.load(Ordering::Relaxed) {
                let Ok((n, from)) = udp.recv_from(&mut buf) else {
                    continue;
                };
                if let Some(answer) = answer_getinfo(&d, buf.get(..n).unwrap_or_default()) {
                    let _ = udp.send_to(&answer, from);
                }
            }
        });
        Self {
            http: HttpReplay::serve_on(listener, docs),
            stop,
            udp: Some(thread),
        }
    }

    /// Where it listens (TCP and UDP).
    pub fn addr(&self) -> SocketAddr {
        self.http.addr()
    }

    /// The HTTP paths asked so far, in order.
    pub fn paths(&self) -> Vec<String> {
        self.http.paths()
    }
}

impl Drop for FivemReplay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.udp.take() {
            let _ = t.join();
        }
    }
}

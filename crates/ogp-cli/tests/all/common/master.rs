//! What the master's test files share: `ogp master` as a child process on loopback
//! ports of its own (read back from its log), plain HTTP/1.1 GETs against it, a bounded
//! wait, and the demo status under another host name.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{KillOnDrop, BIN};

/// A running `ogp master` on `127.0.0.1` with ports of its own, its log in a file; killed
/// when dropped.
pub struct Master {
    pub child: KillOnDrop,
    pub udp: SocketAddr,
    pub http: SocketAddr,
    pub log: PathBuf,
}

impl Master {
    /// `ogp master --udp 127.0.0.1:0 --http 127.0.0.1:0 ARGS…`, logging to `dir/NAME.log`;
    /// returns once the log names both ports.
    pub fn start<S: AsRef<OsStr>>(dir: &Path, name: &str, args: &[S]) -> Self {
        let log = dir.join(format!("{name}.log"));
        let mut child = KillOnDrop(
            Command::new(BIN)
                .args(["master", "--udp", "127.0.0.1:0", "--http", "127.0.0.1:0"])
                .args(args)
                .env("NO_COLOR", "1")
                .env_remove("OGP_LOG")
                .env_remove("RUST_LOG")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .expect("spawn ogp master"),
        );
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(30) {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let after = |key: &str| {
                text.split(key)
                    .nth(1)
                    .and_then(|r| r.split([' ', '/']).next())
                    .and_then(|a| a.parse().ok())
            };
            if let (Some(udp), Some(http)) = (after("UDP on "), after("HTTP on http://")) {
                return Self {
                    child,
                    udp,
                    http,
                    log,
                };
            }
            assert!(
                child.0.try_wait().unwrap().is_none(),
                "ogp master exited:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "ogp master did not start:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// [`Master::start`] with `config` (TOML) written to `dir/NAME.toml` and passed with
    /// `--config`, before `args`.
    pub fn with_config(dir: &Path, name: &str, config: &str, args: &[&str]) -> Self {
        let conf = dir.join(format!("{name}.toml"));
        std::fs::write(&conf, config).unwrap();
        let mut all: Vec<&OsStr> = vec![OsStr::new("--config"), conf.as_os_str()];
        all.extend(args.iter().map(OsStr::new));
        Self::start(dir, name, &all)
    }

    /// Every UDP address it serves (the log's `UDP on` lines): with more `--udp` flags,
    /// more than [`Master::udp`].
    #[allow(dead_code)] // not every test binary that includes this module uses it
    pub fn udp_addrs(&self) -> Vec<SocketAddr> {
        self.log_text()
            .split("UDP on ")
            .skip(1)
            .filter_map(|r| r.split(' ').next()?.parse().ok())
            .collect()
    }

    /// What it has logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A GET of `path` on its HTTP port: the status code and the body.
    pub fn get(&self, path: &str) -> (u16, String) {
        http_get(self.http, path)
    }

    /// Every listed server (`/api/v1/servers`, all pages).
    pub fn servers(&self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut path = "/api/v1/servers?limit=1000".to_owned();
        for _ in 0..100 {
            let (code, body) = self.get(&path);
            assert_eq!(code, 200, "{body}");
            let v: Value = serde_json::from_str(&body).unwrap();
            out.extend(v["servers"].as_array().unwrap().iter().cloned());
            match v["next"].as_str() {
                Some(n) => path = format!("/api/v1/servers?limit=1000&cursor={n}"),
                None => break,
            }
        }
        out
    }
}

/// `ogp master` with the config file `conf` (written to `dir/bad.toml`) and a database
/// in `dir`, run to its end: for configs it must refuse at start.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn run_with_config(dir: &Path, conf: &str) -> super::Ran {
    let path = dir.join("bad.toml");
    std::fs::write(&path, conf).unwrap();
    super::run(
        Command::new(BIN)
            .args([
                "master",
                "--udp",
                "127.0.0.1:0",
                "--http",
                "127.0.0.1:0",
                "--db",
            ])
            .arg(format!("sqlite://{}", dir.join("bad.db").display()))
            .arg("--config")
            .arg(&path),
        Duration::from_secs(60),
    )
}

/// Whether `ogp master`'s Valve list, asked on `client` (connected to its UDP port),
/// holds `server` (one page: the tests list few servers).
#[allow(dead_code)]
pub fn on_valve_list(client: &UdpSocket, server: std::net::SocketAddrV4) -> bool {
    let mut req = Vec::new();
    ogp_proto::master::valve::ListRequest::first(0xff, "").encode(&mut req);
    client.send(&req).unwrap();
    client
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut buf = [0u8; 2048];
    client
        .recv(&mut buf)
        .ok()
        .and_then(|n| ogp_proto::master::valve::decode_page(&buf[..n]).ok())
        .is_some_and(|p| p.servers.contains(&server))
}

/// `POST /api/v1/servers` of `{"addr", "protocol"}` with the bearer `token`: the status
/// code and the body.
#[allow(dead_code)]
pub fn post_server(m: &Master, token: &str, addr: &str, protocol: &str) -> (u16, String) {
    let body = serde_json::json!({ "addr": addr, "protocol": protocol }).to_string();
    let auth = format!("Bearer {token}");
    http_request(
        m.http,
        "POST",
        "/api/v1/servers",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", auth.as_str()),
        ],
        body.as_bytes(),
    )
}

/// A GET with `Connection: close`: the status code (0 when there is none) and the body
/// (de-chunked).
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    http_request(addr, "GET", path, &[], b"")
}

/// A chunked HTTP body, joined.
fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((len, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(len.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(rest.get(..n).unwrap_or(rest));
        s = rest.get(n + 2..).unwrap_or("");
    }
    out
}

/// Polls `f` every 100 ms until it holds, for at most `limit`; how long it took.
pub fn wait_for(what: &str, limit: Duration, f: impl FnMut() -> bool) -> Duration {
    wait_until(limit, f).unwrap_or_else(|| panic!("timed out after {limit:?} waiting for: {what}"))
}

/// Polls `f` every 100 ms until it holds, for at most `limit` (once at least): how long
/// it took, or `None` when it never held.
pub fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> Option<Duration> {
    let t = Instant::now();
    loop {
        if f() {
            return Some(t.elapsed());
        }
        if t.elapsed() >= limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The demo status (`state.json`) under the host name `name`.
pub fn state(name: &str) -> String {
    let text =
        std::fs::read_to_string(super::root().join("crates/ogp-proto/tests/data/state.json"))
            .unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["host_name"] = Value::String(name.into());
    v.to_string()
}

/// Whether an OGP responder answers on `sock`: any answer to a challenge probe.
pub fn ogp_ready(sock: &UdpSocket) -> bool {
    let probe = b"\xff\xff\xff\xffOGP\x00\x03\x01\x00";
    !super::exchange(sock, probe, Duration::from_millis(200)).is_empty()
}

/// A 1×1 PNG as the data URL a Minecraft server's favicon is.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub const FAVICON: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// A hostile MOTD with Minecraft's `§` codes and markup in it.
#[allow(dead_code)]
pub const CRAFTED_NAME: &str =
    "\u{a7}aGreen \u{a7}lBold\u{a7}r <script>window.__pwned=1</script><b>not bold</b>";

/// The demo status under the host name `name`, with a `favicon` rule ([`FAVICON`]) as a
/// Minecraft server's status has.
#[allow(dead_code)]
pub fn state_with_favicon(name: &str) -> String {
    let mut v: Value = serde_json::from_str(&state(name)).unwrap();
    v["rules"]["favicon"] = Value::String(FAVICON.into());
    v.to_string()
}

/// A request with `Connection: close` (and a `Content-Length`, 0 without a body): the
/// status code (0 when there is none) and the body (de-chunked).
#[allow(dead_code)]
pub fn http_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String) {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    s.write_all(head.as_bytes()).unwrap();
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    (code, body)
}

/// A connection to `to` from the loopback address `from` (port chosen by the kernel),
/// blocking. All of 127.0.0.0/8 is loopback on Linux, so a test stands for many
/// clients by binding to other addresses of it.
#[allow(dead_code)]
pub fn connect_from(rt: &tokio::runtime::Runtime, from: [u8; 4], to: SocketAddr) -> TcpStream {
    try_connect_from(rt, from, to).expect("connect from another loopback address")
}

/// [`connect_from`], or the error.
#[allow(dead_code)]
pub fn try_connect_from(
    rt: &tokio::runtime::Runtime,
    from: [u8; 4],
    to: SocketAddr,
) -> std::io::Result<TcpStream> {
    let s = rt.block_on(async {
        let sock = tokio::net::TcpSocket::new_v4()?;
        sock.bind(SocketAddr::from((from, 0)))?;
        let s = tokio::time::timeout(Duration::from_secs(10), sock.connect(to))
            .await
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "connect"))??;
        s.into_std()
    })?;
    s.set_nonblocking(false)?;
    Ok(s)
}

/// A connection from `from` whose client reads slowly: a receive buffer of 4 KiB and
/// segments of 536 bytes, so that the kernels hold about 100 KB of an answer it has
/// not read and the master keeps the rest.
#[allow(dead_code)]
pub fn slow_reader(rt: &tokio::runtime::Runtime, from: [u8; 4], to: SocketAddr) -> TcpStream {
    let s = rt.block_on(async {
        let sock = tokio::net::TcpSocket::new_v4()?;
        sock.set_recv_buffer_size(4096)?;
        nix::sys::socket::setsockopt(&sock, nix::sys::socket::sockopt::TcpMaxSeg, &536)
            .map_err(std::io::Error::from)?;
        sock.bind(SocketAddr::from((from, 0)))?;
        let s = tokio::time::timeout(Duration::from_secs(10), sock.connect(to))
            .await
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "connect"))??;
        s.into_std()
    });
    let s = s.expect("a slow reader's connection");
    s.set_nonblocking(false).unwrap();
    s
}

/// A single-threaded tokio runtime for [`connect_from`].
#[allow(dead_code)]
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Reads until the master closes the connection (end of stream or reset): how long it
/// took, or `None` if it was still open after `limit`.
#[allow(dead_code)]
pub fn closed_within(s: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let t = Instant::now();
    let mut buf = [0u8; 4096];
    while t.elapsed() < limit {
        s.set_read_timeout(Some(
            limit
                .saturating_sub(t.elapsed())
                .max(Duration::from_millis(10)),
        ))
        .unwrap();
        match s.read(&mut buf) {
            Ok(0) => return Some(t.elapsed()),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return Some(t.elapsed()),
        }
    }
    None
}

/// One answer read from a kept-alive connection: the status code, the head (lower
/// case) and the body; `None` when the connection ended first.
#[allow(dead_code)]
pub fn read_answer(s: &mut TcpStream) -> Option<(u16, String, String)> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
        assert!(raw.len() < 65_536, "an answer's head over 64 KiB");
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while raw.len() < head_end + len {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = String::from_utf8_lossy(&raw[head_end..head_end + len]).into_owned();
    Some((code, head, body))
}

/// Whether the master still holds the connection open (nothing to read, no end).
#[allow(dead_code)]
pub fn still_open(s: &TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 1];
    let open = matches!((&*s).read(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
    s.set_nonblocking(false).unwrap();
    open
}

/// The sum of the `/metrics` lines of `name` that contain `with`.
#[allow(dead_code)]
pub fn counter(m: &Master, name: &str, with: &str) -> u64 {
    let (_, text) = m.get("/metrics");
    text.lines()
        .filter(|l| l.starts_with(name) && l.contains(with))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// A gauge or counter's value in the `/metrics` text (the line that starts with `name`
/// and a space).
#[allow(dead_code)]
pub fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// The forged source `i`: 127.a.b.1 with a /24 of its own (never 127.0.0.0/24, where
/// the real servers are; `i` below 65,000). Each is a real loopback address, so the
/// master's probes to it go nowhere, as to a spoofed victim.
#[allow(dead_code)]
pub fn forged(i: u32) -> Ipv4Addr {
    Ipv4Addr::from(0x7f01_0001 + (i << 8))
}

/// A flood of forged OGP uplinks to a master, at about `rate` a second from `sources`
/// addresses ([`forged`]) in turn (each datagram from a socket bound to its address),
/// in a thread of its own, until stopped or dropped (or 120 s).
#[allow(dead_code)]
pub struct Flood {
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    started: Instant,
    thread: Option<JoinHandle<()>>,
}

#[allow(dead_code)]
impl Flood {
    /// Starts it.
    pub fn start(master: SocketAddr, rate: u64, sources: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicU64::new(0));
        let (st, n) = (stop.clone(), sent.clone());
        let thread = std::thread::spawn(move || {
            let uplink = b"\xff\xff\xff\xffOGP\x00\x03\x03\x01\x07\x00";
            let t0 = Instant::now();
            let mut i = 0u32;
            while !st.load(Ordering::Relaxed) && t0.elapsed() < Duration::from_secs(120) {
                let due = (t0.elapsed().as_secs_f64() * rate as f64) as u64;
                let done = n.load(Ordering::Relaxed);
                if done >= due {
                    // evenly spread, as many senders' datagrams arrive: a burst every few
                    // milliseconds would leave gaps in which a real server's datagram
                    // finds the master idle
                    std::thread::sleep(Duration::from_micros(200));
                    continue;
                }
                for _ in done..due.min(done + 500) {
                    if let Ok(s) = UdpSocket::bind((forged(i % sources.max(1)), 0)) {
                        let _ = s.send_to(uplink, master);
                    }
                    i = i.wrapping_add(1);
                    n.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        Self {
            stop,
            sent,
            started: Instant::now(),
            thread: Some(thread),
        }
    }

    /// Uplinks sent so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Stops it: the uplinks sent and the rate they went at (a second).
    pub fn stop(mut self) -> (u64, f64) {
        self.halt();
        let sent = self.sent();
        (sent, sent as f64 / self.started.elapsed().as_secs_f64())
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        self.halt();
    }
}

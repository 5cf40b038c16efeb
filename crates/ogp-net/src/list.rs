//! Server lists from masters and from the web: [`list_servers`] reads one
//! [`ListSource`] and hands each server to a sink, as `ogp list`, the Python package's
//! `ogp.list_servers` and (later) the Node package do.
//!
//! Blocking (std sockets and ureq), with every wait bounded by [`ListOptions`]: what a
//! page is, when a list has ended, the deadlines and the caps are ogp-proto's
//! [`list_client`](ogp_proto::master::list_client) (the masters' protocols) and
//! [`weblist`] (the JSON documents); this moves the bytes. Over HTTPS (feature `tls`:
//! rustls with ring, webpki's roots) the certificate is checked unless
//! [`ListOptions::insecure`] is set.
//!
//! A Steam Web API key ([`SteamKey`]) goes only into the request to the URL given; it
//! is never in an error, a log line or a `Debug` output (redirects are not followed for
//! Steam, so that it is not sent elsewhere).

use std::fmt;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::path::Path;
use std::time::{Duration, Instant};

use ogp_proto::master::dpmaster::ServersRequest;
use ogp_proto::master::list_client::{
    Cube2ListClient, DpListClient, GsListClient, GsProgress, HttpListClient,
    ListError as ClientError, ListLimits, QwListClient, Tw7ListClient, TwListClient, UdpListClient,
    UdpListProtocol, ValveListClient,
};
use ogp_proto::master::weblist::{self, WebListKind};
use serde_json::{json, Value};

/// The environment variable a Steam Web API key is read from ([`SteamKey::from_env`]).
pub const STEAM_KEY_ENV: &str = "OGP_STEAM_KEY";

/// Steam's Web API, where `--steam` asks when its MASTER has no path.
pub const STEAM_API: &str = "https://api.steampowered.com";

/// The path of `GetServerList` under [`STEAM_API`].
const STEAM_PATH: &str = "/IGameServersService/GetServerList/v1/";

/// Most servers Steam's `GetServerList` gives in one answer.
const STEAM_MAX_LIMIT: usize = 20_000;

/// Longest key file read (a key is 32 hex digits).
const MAX_KEY_FILE: u64 = 4096;

/// A Steam Web API key. Its `Debug` and `Display` say `<steam key>`, never the key.
#[derive(Clone, PartialEq, Eq)]
pub struct SteamKey(String);

impl SteamKey {
    /// A key (surrounding white space removed). Empty, or with characters other than
    /// letters and digits, it is refused (the message does not repeat it).
    pub fn new(key: &str) -> Result<Self, ListError> {
        let key = key.trim();
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(ListError::new(
                ListErrorKind::Usage,
                "the Steam key is empty or not letters and digits",
            ));
        }
        Ok(Self(key.to_string()))
    }

    /// The key in [`STEAM_KEY_ENV`], if set.
    pub fn from_env() -> Result<Option<Self>, ListError> {
        match std::env::var(STEAM_KEY_ENV) {
            Ok(v) if !v.is_empty() => Self::new(&v).map(Some),
            _ => Ok(None),
        }
    }

    /// The key in a file (its first line).
    pub fn from_file(path: &Path) -> Result<Self, ListError> {
        let shown = clean(&path.display().to_string());
        let f = std::fs::File::open(path)
            .map_err(|e| ListError::new(ListErrorKind::Usage, format!("{shown}: {e}")))?;
        let mut s = String::new();
        f.take(MAX_KEY_FILE)
            .read_to_string(&mut s)
            .map_err(|e| ListError::new(ListErrorKind::Usage, format!("{shown}: {e}")))?;
        Self::new(s.lines().next().unwrap_or_default())
            .map_err(|e| ListError::new(ListErrorKind::Usage, format!("{shown}: {e}")))
    }

    /// The key in `file` when given, else in [`STEAM_KEY_ENV`] if set.
    pub fn find(file: Option<&Path>) -> Result<Option<Self>, ListError> {
        match file {
            Some(f) => Self::from_file(f).map(Some),
            None => Self::from_env(),
        }
    }

    /// Removes the key from `s` (an error's text).
    fn redact(&self, s: &str) -> String {
        s.replace(&self.0, "<steam key>")
    }
}

impl fmt::Debug for SteamKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<steam key>")
    }
}

impl fmt::Display for SteamKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<steam key>")
    }
}

/// Where a list comes from. `master` is `HOST:PORT`; `url` is `http://…` or `https://…`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListSource {
    /// Valve's master server protocol over UDP, with a region byte and a filter string.
    Valve {
        /// HOST:PORT.
        master: String,
        /// 0 US east … 7 Africa, 255 all.
        region: u8,
        /// `\gamedir\tf\empty\1`.
        filter: String,
    },
    /// dpmaster's `getserversExt GAME PROTOCOL empty full FILTER`.
    Dp {
        /// HOST:PORT.
        master: String,
        /// `Quake3Arena`, `Xonotic`…
        game: String,
        /// The protocol number, as a word (`71`).
        protocol: String,
        /// Options (`ipv4`, `gametype=X`…), space-separated.
        filter: String,
    },
    /// The GameSpy master's list over TCP.
    Gs1 {
        /// HOST:PORT.
        master: String,
        /// The `gamename`.
        game: String,
        /// The game's secret key, to answer the challenge.
        key: Option<String>,
    },
    /// A Cube 2 master's list over TCP (servers listed at their query port).
    Cube2 {
        /// HOST:PORT.
        master: String,
    },
    /// A QuakeWorld master.
    QuakeWorld {
        /// HOST:PORT.
        master: String,
    },
    /// A Teeworlds 0.6 master.
    Teeworlds {
        /// HOST:PORT.
        master: String,
    },
    /// A Teeworlds 0.7 master.
    Teeworlds7 {
        /// HOST:PORT.
        master: String,
    },
    /// An ogp master's HTTP API (`/api/v1/servers`), with its query parameters.
    Api {
        /// The master's base URL.
        url: String,
        /// `game=tf&has_players=true`.
        filter: String,
    },
    /// A JSON document over HTTP(S): DDNet's, Minetest's or open.mp's list.
    Web {
        /// Which list.
        kind: WebListKind,
        /// Its URL.
        url: String,
    },
    /// Steam's Web API `GetServerList` (a key needed).
    Steam {
        /// [`STEAM_API`], or another base URL or the full URL of `GetServerList`.
        url: String,
        /// Valve's filter string (`\appid\440`).
        filter: String,
        /// The key.
        key: SteamKey,
    },
}

/// The kinds of source [`ListSource::new`] takes, by the name the CLI's flag has
/// (`valve` is the default over UDP, `api` over HTTP).
pub const KINDS: [&str; 12] = [
    "valve", "dp", "gs1", "cube2", "qw", "tw", "tw7", "api", "ddnet", "minetest", "openmp", "steam",
];

/// What some kinds of source need besides the master ([`ListSource::new`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListParams {
    /// Valve's filter string, dpmaster's options, the API's query parameters, Steam's
    /// filter string.
    pub filter: String,
    /// Valve's region byte (`None`: 255, all).
    pub region: Option<u8>,
    /// dpmaster's and the GameSpy master's game name.
    pub game: Option<String>,
    /// dpmaster's protocol number.
    pub protocol: Option<String>,
    /// The GameSpy game's secret key.
    pub gs1_key: Option<String>,
    /// Steam's Web API key.
    pub steam_key: Option<SteamKey>,
}

impl ListSource {
    /// The source of `kind` (one of [`KINDS`]; `None`: `api` for an http(s):// URL,
    /// else `valve`) at `master`.
    pub fn new(kind: Option<&str>, master: &str, p: ListParams) -> Result<Self, ListError> {
        let usage = |m: String| ListError::new(ListErrorKind::Usage, m);
        let is_url = master.starts_with("http://") || master.starts_with("https://");
        let kind = kind.unwrap_or(if is_url { "api" } else { "valve" });
        let web = matches!(kind, "api" | "ddnet" | "minetest" | "openmp" | "steam");
        if web && !is_url {
            return Err(usage(format!(
                "{}: this list takes an http:// or https:// URL",
                clean(master)
            )));
        }
        if !web && master.contains("://") {
            return Err(usage(format!(
                "{}: only http:// and https:// URLs (or HOST:PORT for Valve's UDP protocol)",
                clean(master)
            )));
        }
        let m = master.to_string();
        let need = |v: Option<String>, what: &str| {
            v.ok_or_else(|| usage(format!("a {kind} list needs {what}")))
        };
        Ok(match kind {
            "valve" => Self::Valve {
                master: m,
                region: p.region.unwrap_or(255),
                filter: p.filter,
            },
            "dp" => Self::Dp {
                master: m,
                game: need(p.game, "a game name")?,
                protocol: need(p.protocol, "a protocol number")?,
                filter: p.filter,
            },
            "gs1" => Self::Gs1 {
                master: m,
                game: need(p.game, "a game name")?,
                key: p.gs1_key,
            },
            "cube2" => Self::Cube2 { master: m },
            "qw" => Self::QuakeWorld { master: m },
            "tw" => Self::Teeworlds { master: m },
            "tw7" => Self::Teeworlds7 { master: m },
            "api" => Self::Api {
                url: m,
                filter: p.filter,
            },
            "ddnet" => Self::Web {
                kind: WebListKind::Ddnet,
                url: m,
            },
            "minetest" => Self::Web {
                kind: WebListKind::Minetest,
                url: m,
            },
            "openmp" => Self::Web {
                kind: WebListKind::OpenMp,
                url: m,
            },
            "steam" => Self::Steam {
                url: m,
                filter: p.filter,
                key: p.steam_key.ok_or_else(|| {
                    usage(format!(
                        "a Steam list needs a Steam Web API key: set {STEAM_KEY_ENV} or give a key file"
                    ))
                })?,
            },
            other => {
                return Err(usage(format!(
                    "{}: not a kind of list ({})",
                    clean(other),
                    KINDS.join(", ")
                )))
            }
        })
    }
}

/// Bounds and switches of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListOptions {
    /// The whole run (default 60 s): a list that has not ended by then is an error.
    pub timeout: Duration,
    /// Each page from its request (default 2 s); HTTP requests may take five times this.
    pub page_timeout: Duration,
    /// Stop after this many servers.
    pub limit: Option<usize>,
    /// HTTPS: take any certificate (self-signed servers). Off by default.
    pub insecure: bool,
}

impl Default for ListOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            page_timeout: Duration::from_secs(2),
            limit: None,
            insecure: false,
        }
    }
}

impl ListOptions {
    /// These deadlines, no limit, certificates checked.
    pub fn new(timeout: Duration, page_timeout: Duration) -> Self {
        Self {
            timeout,
            page_timeout,
            ..Self::default()
        }
    }
}

/// What a run hands its sink.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ListEvent {
    /// A server: its address (`IP:PORT`), the protocol to query it with and its JSON
    /// object (`addr`, `protocols` and what the list said of it: `ogp list --json`'s
    /// line).
    Server {
        /// `IP:PORT`.
        addr: String,
        /// The protocol's name (`a2s`, `teeworlds`…).
        protocol: String,
        /// The JSON object.
        item: Value,
    },
    /// An entry that is no server: as listed, and why (counted, not listed).
    Skipped {
        /// The entry as the list had it (not sanitized).
        entry: String,
        /// Why.
        why: &'static str,
    },
}

/// Why a run failed, grouped by cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListErrorKind {
    /// The source or an option is wrong (no request was made).
    Usage,
    /// The master's name did not resolve.
    Resolve,
    /// A socket, connection or I/O error.
    Network,
    /// The TLS handshake or the certificate failed.
    Tls,
    /// An HTTP status other than 200.
    Http,
    /// A deadline passed (a page or the whole run).
    Timeout,
    /// The list broke its format or our bounds (too large, too many, too deep, a loop).
    Malformed,
    /// The sink refused an entry (writing the output failed).
    Output,
}

impl ListErrorKind {
    /// The cause's name for the bindings (`usage`, `resolve`, `network`, `tls`, `http`,
    /// `timeout`, `malformed`, `output`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Usage => "usage",
            Self::Resolve => "resolve",
            Self::Network => "network",
            Self::Tls => "tls",
            Self::Http => "http",
            Self::Timeout => "timeout",
            Self::Malformed => "malformed",
            Self::Output => "output",
        }
    }
}

/// A failed run: its cause and a one-line message (control characters of the network
/// replaced).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListError {
    /// The cause.
    pub kind: ListErrorKind,
    message: String,
}

impl ListError {
    fn new(kind: ListErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: clean(&message.into()),
        }
    }

    /// The message (what `Display` prints).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ListError {}

/// Text for one line of a terminal: control characters replaced.
fn clean(s: &str) -> String {
    ogp_proto::result::sanitize(s)
}

/// The error of a list client (a deadline or the master's bytes).
fn client_error(name: &str, e: &ClientError) -> ListError {
    let kind = match e {
        ClientError::Deadline { .. }
        | ClientError::NoAnswer { .. }
        | ClientError::NoHandshake { .. }
        | ClientError::Stalled { .. }
        | ClientError::Quiet { .. } => ListErrorKind::Timeout,
        _ => ListErrorKind::Malformed,
    };
    ListError::new(kind, format!("{name}: {e}"))
}

fn io_error(name: &str, e: &std::io::Error) -> ListError {
    let kind = match e.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => ListErrorKind::Timeout,
        _ => ListErrorKind::Network,
    };
    ListError::new(kind, format!("{name}: {e}"))
}

/// The sink's verdict on one event: `Err` stops the run with an [`ListErrorKind::Output`]
/// error.
pub type SinkResult = std::io::Result<()>;

/// Reads `source` within `options`, handing each server and each skipped entry to
/// `sink` as they come; the number of servers listed. A list cut by
/// [`ListOptions::limit`] is no error.
pub fn list_servers(
    source: &ListSource,
    options: &ListOptions,
    sink: &mut dyn FnMut(ListEvent) -> SinkResult,
) -> Result<usize, ListError> {
    let limits = ListLimits::new(options.timeout, options.page_timeout);
    let mut run = Run {
        sink,
        count: 0,
        limit: options.limit.unwrap_or(usize::MAX),
    };
    match source {
        ListSource::Valve {
            master,
            region,
            filter,
        } => udp(master, "a2s", &mut run, |now| {
            ValveListClient::new(*region, filter, limits, now)
        }),
        ListSource::Dp {
            master,
            game,
            protocol,
            filter,
        } => {
            let request = dp_request(game, protocol, filter)?;
            udp(master, "quake3", &mut run, |now| {
                DpListClient::new(request, limits, now)
            })
        }
        ListSource::QuakeWorld { master } => udp(master, "quakeworld", &mut run, |now| {
            QwListClient::new(limits, now)
        }),
        ListSource::Teeworlds { master } => udp(master, "teeworlds", &mut run, |now| {
            TwListClient::new(limits, now)
        }),
        ListSource::Teeworlds7 { master } => udp(master, "teeworlds7", &mut run, |now| {
            Tw7ListClient::new(crate::random_u32(), limits, now)
        }),
        ListSource::Gs1 { master, game, key } => {
            gs1(master, game, key.as_deref(), limits, &mut run)
        }
        ListSource::Cube2 { master } => cube2(master, limits, &mut run),
        ListSource::Api { url, filter } => api(url, filter, limits, options, &mut run),
        ListSource::Web { kind, url } => {
            let agent = agent(url, options, true)?;
            web(&agent, *kind, url, &clean(url), None, options, &mut run)
        }
        ListSource::Steam { url, filter, key } => steam(url, filter, key, options, &mut run),
    }?;
    Ok(run.count)
}

/// Every server of `source`, and the skipped entries, collected (the list is bounded by
/// ogp-proto's caps and [`ListOptions::limit`]).
pub fn list_all(
    source: &ListSource,
    options: &ListOptions,
) -> Result<(Vec<ListEvent>, usize), ListError> {
    let mut events = Vec::new();
    let n = list_servers(source, options, &mut |e| {
        events.push(e);
        Ok(())
    })?;
    Ok((events, n))
}

/// The sink and the count of one run.
struct Run<'a> {
    sink: &'a mut dyn FnMut(ListEvent) -> SinkResult,
    count: usize,
    limit: usize,
}

impl Run<'_> {
    fn full(&self) -> bool {
        self.count >= self.limit
    }

    /// Hands a server over unless the limit is reached; whether to go on.
    fn server(&mut self, addr: String, protocol: &str, item: Value) -> Result<bool, ListError> {
        if self.full() {
            return Ok(false);
        }
        (self.sink)(ListEvent::Server {
            addr,
            protocol: protocol.to_string(),
            item,
        })
        .map_err(|e| ListError::new(ListErrorKind::Output, e.to_string()))?;
        self.count += 1;
        Ok(!self.full())
    }

    /// A server known only by its address.
    fn addr(&mut self, addr: impl fmt::Display, protocol: &str) -> Result<bool, ListError> {
        let a = addr.to_string();
        let item = json!({ "addr": a, "protocols": [protocol] });
        self.server(a, protocol, item)
    }

    fn skipped(&mut self, entry: String, why: &'static str) -> Result<(), ListError> {
        (self.sink)(ListEvent::Skipped { entry, why })
            .map_err(|e| ListError::new(ListErrorKind::Output, e.to_string()))
    }
}

/// The dpmaster request of `GAME PROTOCOL` and the filter's options.
fn dp_request(game: &str, protocol: &str, filter: &str) -> Result<ServersRequest, ListError> {
    let mut d = b"\xff\xff\xff\xffgetserversExt ".to_vec();
    d.extend_from_slice(format!("{game} {protocol} empty full {filter}").as_bytes());
    ServersRequest::decode(&d).map_err(|e| {
        ListError::new(
            ListErrorKind::Usage,
            format!("--dp {game} {protocol} {filter}: {e}"),
        )
    })
}

/// The master's name as shown and its first address.
fn resolve(master: &str) -> Result<(String, SocketAddr), ListError> {
    let name = clean(master);
    let addr = master
        .to_socket_addrs()
        .map_err(|e| {
            ListError::new(
                ListErrorKind::Resolve,
                format!("cannot resolve {name}: {e}"),
            )
        })?
        .next()
        .ok_or_else(|| ListError::new(ListErrorKind::Resolve, format!("{name} has no address")))?;
    Ok((name, addr))
}

/// Waits until `wake` for a datagram; `None` when none came.
fn recv_until(sock: &UdpSocket, wake: Instant, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
    let wait = wake.saturating_duration_since(Instant::now());
    if wait.is_zero() {
        return Ok(None);
    }
    sock.set_read_timeout(Some(wait))?;
    none_on_timeout(sock.recv(buf))
}

/// A read's result with its timeout (`WouldBlock`, `TimedOut`) as `Ok(None)`.
fn none_on_timeout(r: std::io::Result<usize>) -> std::io::Result<Option<usize>> {
    match r {
        Ok(n) => Ok(Some(n)),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// A run of a UDP list protocol (`start` makes its client once the socket is
/// connected), each server listed with the protocol `label`.
fn udp<P: UdpListProtocol>(
    master: &str,
    label: &str,
    run: &mut Run<'_>,
    start: impl FnOnce(Instant) -> UdpListClient<P>,
) -> Result<(), ListError> {
    let (name, addr) = resolve(master)?;
    let local: SocketAddr = if addr.is_ipv4() {
        SocketAddr::from(([0, 0, 0, 0], 0))
    } else {
        SocketAddr::from(([0u16; 8], 0))
    };
    let sock = UdpSocket::bind(local).map_err(|e| io_error(&name, &e))?;
    sock.connect(addr).map_err(|e| io_error(&name, &e))?;
    let mut client = start(Instant::now());
    // a whole datagram, however large (QuakeWorld masters may send their list in one)
    let mut buf = vec![0u8; 65536];
    let mut d = Vec::new();
    loop {
        d.clear();
        if client
            .poll_transmit(Instant::now(), &mut d)
            .map_err(|e| client_error(&name, &e))?
        {
            sock.send(&d).map_err(|e| io_error(&name, &e))?;
        }
        let Some(wake) = client.next_wake() else {
            return Ok(());
        };
        let Some(n) = recv_until(&sock, wake, &mut buf).map_err(|e| io_error(&name, &e))? else {
            continue;
        };
        let page = client
            .handle_datagram(buf.get(..n).unwrap_or_default(), Instant::now())
            .map_err(|e| client_error(&name, &e))?;
        let Some(page) = page else { continue };
        for (a, why) in &page.skipped {
            run.skipped(a.to_string(), why)?;
        }
        for a in &page.servers {
            if !run.addr(a, label)? {
                return Ok(());
            }
        }
    }
}

/// A TCP connection to `addr` within `wait`.
fn tcp(name: &str, addr: SocketAddr, wait: Duration) -> Result<TcpStream, ListError> {
    TcpStream::connect_timeout(&addr, wait.max(Duration::from_millis(1)))
        .map_err(|e| io_error(name, &e))
}

/// Reads what comes within `wait`: `Ok(None)` when nothing did, `Ok(Some(0))` at the end.
fn read_within(
    sock: &mut TcpStream,
    wait: Duration,
    buf: &mut [u8],
) -> std::io::Result<Option<usize>> {
    sock.set_read_timeout(Some(wait))?;
    none_on_timeout(sock.read(buf))
}

/// A GameSpy master's list over TCP.
fn gs1(
    master: &str,
    game: &str,
    key: Option<&str>,
    limits: ListLimits,
    run: &mut Run<'_>,
) -> Result<(), ListError> {
    let (name, addr) = resolve(master)?;
    let start = Instant::now();
    let mut client = GsListClient::new(game, game, key, limits, start);
    let mut sock = tcp(
        &name,
        addr,
        client.next_wake().saturating_duration_since(start),
    )?;
    let mut buf = vec![0u8; 16384];
    let (servers, skipped) = loop {
        let wait = client.next_wake().saturating_duration_since(Instant::now());
        if wait.is_zero() {
            return Err(client_error(&name, &client.timed_out(Instant::now())));
        }
        let n = match read_within(&mut sock, wait, &mut buf).map_err(|e| io_error(&name, &e))? {
            None => continue,
            Some(0) => return Err(client_error(&name, &client.handle_closed())),
            Some(n) => n,
        };
        match client
            .handle_bytes(Instant::now(), buf.get(..n).unwrap_or_default())
            .map_err(|e| client_error(&name, &e))?
        {
            GsProgress::Send(d) => sock.write_all(&d).map_err(|e| io_error(&name, &e))?,
            GsProgress::Done { servers, skipped } => break (servers, skipped),
            _ => {}
        }
    };
    for (a, why) in &skipped {
        run.skipped(a.to_string(), why)?;
    }
    for a in &servers {
        if !run.addr(a, "gamespy1")? {
            break;
        }
    }
    Ok(())
}

/// A Cube 2 master's list over TCP.
fn cube2(master: &str, limits: ListLimits, run: &mut Run<'_>) -> Result<(), ListError> {
    let (name, addr) = resolve(master)?;
    let mut client = Cube2ListClient::new(limits, Instant::now());
    let wait = client.next_wake().saturating_duration_since(Instant::now());
    let mut sock = tcp(&name, addr, wait)?;
    sock.write_all(client.request())
        .map_err(|e| io_error(&name, &e))?;
    let mut buf = vec![0u8; 16384];
    loop {
        let wait = client.next_wake().saturating_duration_since(Instant::now());
        if wait.is_zero() {
            return Err(client_error(&name, &client.timed_out(Instant::now())));
        }
        match read_within(&mut sock, wait, &mut buf).map_err(|e| io_error(&name, &e))? {
            None => {}
            Some(0) => break,
            Some(n) => client
                .handle_bytes(Instant::now(), buf.get(..n).unwrap_or_default())
                .map_err(|e| client_error(&name, &e))?,
        }
    }
    let (servers, skipped) = client
        .handle_closed()
        .map_err(|e| client_error(&name, &e))?;
    for (a, why) in &skipped {
        run.skipped(a.to_string(), why)?;
    }
    for a in &servers {
        let Some(port) = a.port().checked_add(ogp_proto::cube2::QUERY_PORT_OFFSET) else {
            run.skipped(a.to_string(), "no query port above its port")?;
            continue;
        };
        let q = SocketAddr::new(a.ip(), port).to_string();
        let item = json!({ "addr": q, "game_addr": a.to_string(), "protocols": ["cube2"] });
        if !run.server(q, "cube2", item)? {
            break;
        }
    }
    Ok(())
}

/// An HTTP agent for `url`: http:// or https:// (with the `tls` feature), redirects
/// followed (at most 3) only when `redirects`.
fn agent(url: &str, options: &ListOptions, redirects: bool) -> Result<ureq::Agent, ListError> {
    let https = url.starts_with("https://");
    if !https && !url.starts_with("http://") {
        return Err(ListError::new(
            ListErrorKind::Usage,
            format!("{}: not an http:// or https:// URL", clean(url)),
        ));
    }
    if https && !cfg!(feature = "tls") {
        return Err(ListError::new(
            ListErrorKind::Usage,
            format!(
                "{}: https:// needs ogp built with the `tls` feature (this build has none)",
                clean(url)
            ),
        ));
    }
    let config = ureq::Agent::config_builder()
        .max_redirects(if redirects { 3 } else { 0 })
        .user_agent(concat!("ogp/", env!("CARGO_PKG_VERSION")));
    #[cfg(feature = "tls")]
    let config = config.tls_config(
        ureq::tls::TlsConfig::builder()
            .disable_verification(options.insecure)
            .build(),
    );
    #[cfg(not(feature = "tls"))]
    let _ = options.insecure;
    Ok(config.build().into())
}

/// A ureq error as ours: its cause and text (`shown` names the request).
fn http_error(shown: &str, e: &ureq::Error) -> ListError {
    let kind = match e {
        ureq::Error::StatusCode(_) => ListErrorKind::Http,
        ureq::Error::Timeout(_) => ListErrorKind::Timeout,
        ureq::Error::HostNotFound => ListErrorKind::Resolve,
        ureq::Error::Tls(_) => ListErrorKind::Tls,
        #[cfg(feature = "tls")]
        ureq::Error::Rustls(_) => ListErrorKind::Tls,
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => ListErrorKind::Timeout,
        ureq::Error::BadUri(_) => ListErrorKind::Usage,
        ureq::Error::Protocol(_) | ureq::Error::BodyExceedsLimit(_) => ListErrorKind::Malformed,
        _ => ListErrorKind::Network,
    };
    let text = match e {
        // the URI may carry a key: not repeated
        ureq::Error::BadUri(_) => "not a valid URL".to_string(),
        ureq::Error::StatusCode(c) => format!("HTTP status {c}"),
        ureq::Error::Io(io) if io.to_string().contains("certificate") => {
            format!("TLS: {io} (--insecure takes a self-signed certificate)")
        }
        ureq::Error::Tls(_) => format!("TLS: {e} (--insecure takes a self-signed certificate)"),
        #[cfg(feature = "tls")]
        ureq::Error::Rustls(_) => {
            format!("TLS: {e} (--insecure takes a self-signed certificate)")
        }
        _ => e.to_string(),
    };
    let kind = if text.contains("certificate") {
        ListErrorKind::Tls
    } else {
        kind
    };
    ListError::new(kind, format!("{shown}: {text}"))
}

/// At most `max` bytes of a response body.
fn read_capped(body: impl Read, max: usize) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    body.take(u64::try_from(max).unwrap_or(u64::MAX))
        .read_to_end(&mut out)?;
    Ok(out)
}

/// An ogp master's HTTP API, page after page.
fn api(
    url: &str,
    filter: &str,
    limits: ListLimits,
    options: &ListOptions,
    run: &mut Run<'_>,
) -> Result<(), ListError> {
    let base = url.trim_end_matches('/');
    let base = base.strip_suffix("/api/v1/servers").unwrap_or(base);
    let name = clean(base);
    let agent = agent(base, options, true)?;
    let mut client = HttpListClient::new(limits, Instant::now());
    while let Some(next) = client
        .next_request(Instant::now())
        .map_err(|e| client_error(&name, &e))?
    {
        let mut url = format!("{base}/api/v1/servers?view=summary&limit=5000");
        if !filter.is_empty() {
            url.push('&');
            url.push_str(filter.trim_start_matches(['?', '&']));
        }
        let shown = clean(&url);
        let mut req = agent
            .get(&url)
            .config()
            .timeout_global(Some(next.timeout))
            .build();
        if let Some(c) = &next.cursor {
            req = req.query("cursor", c); // percent-encoded by ureq
        }
        // a request cut short by the whole run's deadline says so
        let failed = |e: ListError| match client.check_deadline(Instant::now()) {
            Err(d) => client_error(&name, &d),
            Ok(()) => e,
        };
        let mut res = req.call().map_err(|e| failed(http_error(&shown, &e)))?;
        // at most one byte more than a page may have: a larger one shows as such
        let body = read_capped(res.body_mut().as_reader(), next.max_bytes)
            .map_err(|e| failed(io_error(&shown, &e)))?;
        let page = client
            .handle_page(&body)
            .map_err(|e| client_error(&name, &e))?;
        drop(body);
        for (addr, why) in page.skipped {
            run.skipped(addr, why)?;
        }
        for (addr, item) in page.servers {
            let proto = item
                .get("protocols")
                .and_then(|p| p.get(0))
                .and_then(Value::as_str)
                .unwrap_or("auto")
                .to_string();
            if !run.server(addr.to_string(), &proto, item)? {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// One JSON document of `kind` at `url` (`query`: parameters added, not shown), read
/// within five page timeouts (at most the whole run's) and [`weblist::MAX_BYTES`].
fn web(
    agent: &ureq::Agent,
    kind: WebListKind,
    url: &str,
    shown: &str,
    query: Option<&[(&str, &str)]>,
    options: &ListOptions,
    run: &mut Run<'_>,
) -> Result<(), ListError> {
    let timeout = options.page_timeout.saturating_mul(5).min(options.timeout);
    let mut req = agent
        .get(url)
        .config()
        .timeout_global(Some(timeout))
        .build();
    for (k, v) in query.unwrap_or_default() {
        req = req.query(k, v);
    }
    let mut res = req.call().map_err(|e| http_error(shown, &e))?;
    let body = read_capped(
        res.body_mut().as_reader(),
        weblist::MAX_BYTES.saturating_add(1),
    )
    .map_err(|e| io_error(shown, &e))?;
    let list = weblist::decode(kind, &body)
        .map_err(|e| ListError::new(ListErrorKind::Malformed, format!("{shown}: {e}")))?;
    drop(body);
    for (entry, why) in list.skipped {
        run.skipped(entry.to_string(), why)?;
    }
    for s in &list.servers {
        let (Some(addr), Some(p)) = (s.addr, s.protocol) else {
            continue;
        };
        if !run.server(addr.to_string(), p.name(), s.to_json())? {
            break;
        }
    }
    Ok(())
}

/// Steam's `GetServerList`: the key and the filter as parameters, no redirect
/// followed; every message with the key taken out.
fn steam(
    url: &str,
    filter: &str,
    key: &SteamKey,
    options: &ListOptions,
    run: &mut Run<'_>,
) -> Result<(), ListError> {
    let base = url.trim_end_matches('/');
    let url = if base.contains("/IGameServersService/") {
        base.to_string()
    } else {
        format!("{base}{STEAM_PATH}")
    };
    let shown = key.redact(&clean(&url));
    let limit = options
        .limit
        .unwrap_or(STEAM_MAX_LIMIT)
        .min(STEAM_MAX_LIMIT)
        .to_string();
    tracing::debug!("GET {shown} (the key, filter {filter:?} and limit {limit} as parameters)");
    let agent = agent(&url, options, false).map_err(|e| redacted(key, &e))?;
    let mut query = vec![("key", key.0.as_str()), ("limit", limit.as_str())];
    if !filter.is_empty() {
        query.push(("filter", filter));
    }
    web(
        &agent,
        WebListKind::Steam,
        &url,
        &shown,
        Some(&query),
        options,
        run,
    )
    .map_err(|e| redacted(key, &e))
}

fn redacted(key: &SteamKey, e: &ListError) -> ListError {
    ListError {
        kind: e.kind,
        message: key.redact(&e.message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_never_shown() {
        let k = SteamKey::new(" 0123456789ABCDEF0123456789ABCDEF\n").unwrap();
        assert_eq!(format!("{k:?} {k}"), "<steam key> <steam key>");
        let src = ListSource::Steam {
            url: "http://x".into(),
            filter: String::new(),
            key: k.clone(),
        };
        assert!(!format!("{src:?}").contains("0123456789ABCDEF"));
        let e = SteamKey::new("abc def").unwrap_err();
        assert!(!e.to_string().contains("abc"), "{e}");
        assert_eq!(e.kind, ListErrorKind::Usage);
        // a URL that cannot be asked: the message names it without the key
        let bad = ListSource::Steam {
            url: "ftp://0123456789ABCDEF0123456789ABCDEF".into(),
            filter: String::new(),
            key: k,
        };
        let e = list_servers(&bad, &ListOptions::default(), &mut |_| Ok(())).unwrap_err();
        assert!(!e.to_string().contains("0123456789ABCDEF"), "{e}");
        assert_eq!(e.kind, ListErrorKind::Usage);
    }
}

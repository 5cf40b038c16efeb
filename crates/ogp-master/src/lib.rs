//! The OGP master server: it collects OGP uplinks, GameSpy v1 and v3 and Quake III
//! heartbeats, verifies every server by querying it back, polls the listed ones, stores
//! them (SQLite, or PostgreSQL shared by several instances) and serves the list over
//! Valve's UDP list protocol, dpmaster's, the GameSpy master's over TCP (opt-in), the Cube 2
//! masters' over TCP (opt-in: Sauerbraten's and Red Eclipse's registrations and lists)
//! and an HTTP API.
//!
//! ```no_run
//! # async fn run() -> anyhow::Result<()> {
//! let config = ogp_master::MasterConfig::default(); // UDP 0.0.0.0:27900, HTTP 127.0.0.1:8080, SQLite
//! let master = ogp_master::Master::start(config).await?;
//! tokio::signal::ctrl_c().await?;
//! master.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! The protocol decisions (what a datagram is, whether to verify, what to send back and
//! when, Valve's pages and filters) are the sans-IO [`ogp_proto::master`] modules; this
//! crate moves bytes, keeps the list, and talks to the database ([`store`]) and to HTTP
//! clients ([`api`]). `docs/master.md` describes the behaviour and every default.

use std::net::SocketAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Deserialize;
use tokio::sync::watch;
use tokio::task::JoinSet;

mod added;
pub mod api;
mod assets;
mod cube2;
mod gs1;
pub mod list;
pub mod metrics;
mod poller;
mod slots;
mod status_cache;
pub mod store;
mod udp;

pub use added::ServerEntry;
use list::List;
use metrics::Metrics;
use store::{Store, Timers};

/// Settings of a master, from its TOML file (`ogp master --config FILE`) and flags. Every
/// field has a default; the file may set any of them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct MasterConfig {
    /// UDP addresses for registrations and Valve list requests (default `0.0.0.0:27900`).
    pub udp: Vec<SocketAddr>,
    /// HTTP address for the API, the page and `/metrics` (default `127.0.0.1:8080`);
    /// `None`: no HTTP.
    pub http: Option<SocketAddr>,
    /// TCP address of the GameSpy master list (the classic port is 28900; default
    /// `None`: off): `\\list\\` requests of GameSpy v1 games' browsers and `quakestat
    /// -gsm`, answered with the servers their heartbeats listed.
    pub gs1_list: Option<SocketAddr>,
    /// GameSpy master list: time for a connection's whole exchange, from its accept to
    /// the last byte of its list (default 10,000 ms); idle, half-sent and slowly read
    /// connections are closed then.
    pub gs1_timeout_ms: u64,
    /// GameSpy master list: connections open at once from one address (IPv6: /64); a
    /// new one over it displaces one of that address's (default 8).
    pub gs1_max_connections_per_ip: usize,
    /// GameSpy master list: connections open at once from one network (IPv4 /24, IPv6
    /// /48), displacing as above (default 32).
    pub gs1_max_connections_per_prefix: usize,
    /// GameSpy master list: connections open at once in all, displacing as above
    /// (default 256).
    pub gs1_max_connections: usize,
    /// TCP address of the Cube 2 master (Sauerbraten's masters listen on 28787, Red
    /// Eclipse's on 28800; default `None`: off): Sauerbraten's and Red Eclipse's servers
    /// register on it (`regserv`, `server`), verified by the Cube 2 ping to their game
    /// port + 1 from the first UDP socket of their address family, and their clients and
    /// `ogp list --cube2` ask it for the list (`list`).
    pub cube2_master: Option<SocketAddr>,
    /// Cube 2 master: time for a connection that has no verified server, from its
    /// accept to its list's last byte or its registration's verdict (default 10,000
    /// ms).
    pub cube2_timeout_ms: u64,
    /// Cube 2 master: a verified server's connection is kept while it sends a line at
    /// least this often (default 4,200 s: Sauerbraten registers again every hour).
    pub cube2_server_idle_secs: u64,
    /// Cube 2 master: connections open at once from one address (IPv6: /64), displacing
    /// as the GameSpy list's (default 8).
    pub cube2_max_connections_per_ip: usize,
    /// Cube 2 master: connections open at once from one network (IPv4 /24, IPv6 /48)
    /// (default 32).
    pub cube2_max_connections_per_prefix: usize,
    /// Cube 2 master: connections open at once in all (default 256).
    pub cube2_max_connections: usize,
    /// The database: `sqlite://PATH` (default `sqlite://ogp-master.db`) or
    /// `postgres://USER@HOST/DB`.
    pub db: String,
    /// List loopback and private addresses (default false; for LANs and tests).
    pub allow_private: bool,
    /// Seconds between polls of each listed server (default 60).
    pub poll_interval_secs: u64,
    /// A server that has not registered for this long is marked down (default 600).
    pub registration_timeout_secs: u64,
    /// A server down for this long is removed (default 900).
    pub grace_secs: u64,
    /// Seconds between points of a server's player-count history (default 300).
    pub history_resolution_secs: u64,
    /// Days of history kept (default 7).
    pub history_retention_days: u64,
    /// Servers listed per IP address (default 64).
    pub max_servers_per_ip: usize,
    /// Registrations accepted per source IP address per minute (default 240, with a
    /// burst of 128 or a second's worth, whichever is more).
    pub registrations_per_minute: u32,
    /// Verifications started per second, all sources together (default 1000).
    pub verifications_per_second: u32,
    /// Verifications in progress at once (default 4096); registrations beyond it are
    /// dropped and verified at their next announcement.
    pub max_pending_verifications: usize,
    /// Verifications started per second per source prefix, IPv4 /24 or IPv6 /48
    /// (default 20, burst 256 or a second's worth if more): a flood from one network
    /// gets its share, not the whole.
    pub verifications_per_prefix_per_second: u32,
    /// Verifications in progress per source prefix (default 256).
    pub max_pending_verifications_per_prefix: usize,
    /// Bytes of list replies per second per source IP address (default 65536, burst four
    /// times that): what spoofed list requests can make us send to one address is
    /// bounded by it. Every reply is counted as a full page (Valve's 1,392 bytes,
    /// dpmaster's 1,400; the GameSpy master list over TCP shares it, a 1,400-byte page
    /// at a time).
    pub list_bytes_per_second: u32,
    /// Bytes of list replies per second to all source addresses together (default
    /// 1048576, burst four times that): what spoofed list requests can make us send in
    /// all is bounded by it.
    pub list_total_bytes_per_second: u32,
    /// Datagrams per second the poller sends (default 10000).
    pub poll_rate: u32,
    /// Every this many polls, a server is asked in every protocol again, to learn which
    /// it speaks (default 30: a rediscovery costs about 23 datagrams, a regular poll 2;
    /// one in 30 makes 2.7 datagrams a poll, within the default `poll_rate` at 3,300
    /// polls a second, where one in 10 made 4.1).
    pub rediscover_every: u32,
    /// This instance's name in poll leases (default: host name, process id and a random
    /// number).
    pub instance: Option<String>,
    /// Milliseconds between reads of the database's changes into the list (default
    /// 1000).
    pub refresh_ms: u64,
    /// Seconds after a server's poll was due before another instance sharing the
    /// database takes it over from the live one holding it (default 30); the servers of
    /// an instance that stopped noting itself in the database (it died) are taken as
    /// they fall due.
    pub lease_slack_secs: u64,
    /// HTTP: milliseconds a client has to send a request's whole head, counted from the
    /// connection's start or the end of its previous answer, so also how long an idle
    /// connection is kept (default 10000).
    pub http_header_timeout_ms: u64,
    /// HTTP: milliseconds without a byte read or written on a connection whose request is
    /// being answered (a client that stops reading its answer) before it is closed
    /// (default 30000).
    pub http_idle_timeout_ms: u64,
    /// HTTP: largest request body (default 16384); a longer one is refused with 413
    /// before it is read. Only `POST /api/v1/servers` reads a body, of at most 1024
    /// bytes.
    pub http_max_body_bytes: usize,
    /// HTTP: bytes buffered per connection to read a request's head (default 16384, at
    /// least 8192); a longer head is refused with 431.
    pub http_max_header_bytes: usize,
    /// HTTP: connections open at once from one source IP address (IPv6: /64); a new one
    /// over it displaces that address's connection that has gone longest without a
    /// request (default 32). Behind a reverse proxy every client has the proxy's
    /// address: raise it and `http_max_connections_per_prefix` to `http_max_connections`.
    pub http_max_connections_per_ip: usize,
    /// HTTP: connections open at once from one network (IPv4 /24, IPv6 /48); a new one
    /// over it displaces that network's connection that has gone longest without a
    /// request (default 128).
    pub http_max_connections_per_prefix: usize,
    /// HTTP: connections open at once in all; a new one over it displaces the connection
    /// that has gone longest without a request: idle kept-alive ones first (answer
    /// written to the socket, nothing of a next request), then answers still being
    /// written to slow readers, then half-sent requests, then answers in progress
    /// (default 512; keep it well below the open-file limit).
    pub http_max_connections: usize,
    /// HTTP: bytes of answers made in memory and not yet written to their clients, in
    /// all (default 67108864, 64 MiB). A listing page reserves its bound
    /// ([`api::MAX_PAGE_BYTES`]) before it is made; when the budget is spent, the
    /// answers of the slowest readers (made first, not all written yet) are dropped
    /// and their connections closed to make room, and when answers still being made
    /// hold the rest the request gets 503 with `Retry-After: 1`. Answers of at most 64
    /// KiB (errors, stats, health) always pass. The bytes are given back once an
    /// answer is written to the socket, or its connection closes.
    pub http_answer_bytes: usize,
    /// HTTP: the least rate, in bytes a second, at which a client must read a big
    /// answer (default 32768): an answer reserved from `http_answer_bytes` must be
    /// written within max(`http_idle_timeout_ms`, its size / this rate), else its
    /// connection is closed, however the client keeps reading a little.
    pub http_answer_rate: u64,
    /// Servers the operator adds (`[[server]]` tables: `addr`, `protocol`, optional
    /// `name` and `note`): polled without registering, listed after their first good
    /// poll. Minecraft servers never register, so this is how they are listed.
    #[serde(rename = "server")]
    pub servers: Vec<ServerEntry>,
    /// The bearer token of the write API (`POST /api/v1/servers`, `DELETE
    /// /api/v1/servers/{addr}`), at least 16 bytes; `None` (the default): no write API.
    pub api_token: Option<String>,
    /// Servers the write API may add, in all (default 1000).
    pub max_added_servers: usize,
}

impl Default for MasterConfig {
    fn default() -> Self {
        Self {
            udp: vec![SocketAddr::from(([0, 0, 0, 0], 27900))],
            http: Some(SocketAddr::from(([127, 0, 0, 1], 8080))),
            gs1_list: None,
            gs1_timeout_ms: 10_000,
            gs1_max_connections_per_ip: 8,
            gs1_max_connections_per_prefix: 32,
            gs1_max_connections: 256,
            cube2_master: None,
            cube2_timeout_ms: 10_000,
            cube2_server_idle_secs: 4_200,
            cube2_max_connections_per_ip: 8,
            cube2_max_connections_per_prefix: 32,
            cube2_max_connections: 256,
            db: "sqlite://ogp-master.db".into(),
            allow_private: false,
            poll_interval_secs: 60,
            registration_timeout_secs: 600,
            grace_secs: 900,
            history_resolution_secs: 300,
            history_retention_days: 7,
            max_servers_per_ip: 64,
            registrations_per_minute: 240,
            verifications_per_second: 1000,
            max_pending_verifications: 4096,
            verifications_per_prefix_per_second: 20,
            max_pending_verifications_per_prefix: 256,
            list_bytes_per_second: 65536,
            list_total_bytes_per_second: 1_048_576,
            poll_rate: 10_000,
            rediscover_every: 30,
            instance: None,
            refresh_ms: 1000,
            lease_slack_secs: 30,
            http_header_timeout_ms: 10_000,
            http_idle_timeout_ms: 30_000,
            http_max_body_bytes: 16_384,
            http_max_header_bytes: 16_384,
            http_max_connections_per_ip: 32,
            http_max_connections_per_prefix: 128,
            http_max_connections: 512,
            http_answer_bytes: 64 << 20,
            http_answer_rate: 32 * 1024,
            servers: Vec::new(),
            api_token: None,
            max_added_servers: 1000,
        }
    }
}

impl MasterConfig {
    /// Reads a TOML config file; unknown keys are errors, and so are a bad `[[server]]`
    /// table and a short `api_token` (host names in `[[server]]` are resolved, and
    /// addresses checked against `allow_private`, when the master starts).
    pub fn from_toml(text: &str) -> Result<Self> {
        let c: Self = toml::from_str(text)?;
        c.check()?;
        Ok(c)
    }

    /// What can be checked without the network: every `[[server]]` table's protocol,
    /// address form and texts, and the token's length.
    fn check(&self) -> Result<()> {
        if let Some(t) = &self.api_token {
            if t.len() < added::MIN_TOKEN_BYTES {
                anyhow::bail!(
                    "api_token: shorter than {} bytes (use a long random string)",
                    added::MIN_TOKEN_BYTES
                );
            }
        }
        for (i, e) in self.servers.iter().enumerate() {
            // the address's class is checked at start, when allow_private is final
            added::check_entry(e, true)
                .map_err(|m| anyhow::anyhow!("[[server]] #{} ({:?}): {m}", i + 1, e.addr))?;
        }
        Ok(())
    }

    fn timers(&self) -> Timers {
        let s = |x: u64| i64::try_from(x.saturating_mul(1000)).unwrap_or(i64::MAX);
        Timers {
            poll_interval_ms: s(self.poll_interval_secs.max(1)),
            registration_timeout_ms: s(self.registration_timeout_secs),
            grace_ms: s(self.grace_secs),
            history_retention_ms: s(self.history_retention_days.saturating_mul(86_400)),
            lease_slack_ms: s(self.lease_slack_secs),
            poll_max_ms: poller::POLL_MAX_MS,
            instance_live_ms: store::instance_live_ms(s(self.poll_interval_secs.max(1))),
        }
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// What the tasks of one master share.
pub(crate) struct Shared {
    pub(crate) config: MasterConfig,
    pub(crate) store: Store,
    pub(crate) list: RwLock<List>,
    /// The answers to first pages (by query string), with the list version of the page
    /// they show: made once per version of a cached page, not per request (a full view
    /// reads a hundred statuses from the database), while the others asking wait.
    pub(crate) first_bodies: api::FirstBodies,
    /// The gates of first pages being made.
    pub(crate) first_pages: api::FirstPages,
    /// Statuses read for full-view pages, by address and change time (bounded).
    pub(crate) statuses: status_cache::StatusCache,
    pub(crate) metrics: Metrics,
    pub(crate) instance: String,
    pub(crate) timers: Timers,
    /// Held while the write API adds or removes a server (so that its count is kept).
    pub(crate) writing: tokio::sync::Mutex<()>,
    /// Wakes the poller before its next tick: servers were just listed, due at once.
    pub(crate) poll_now: tokio::sync::Notify,
    /// The byte budgets of every list answer (UDP and TCP), per source and in total: its
    /// clones share its buckets.
    pub(crate) list_budget: ogp_proto::master::budget::ListBudget,
    /// DDNet's HTTP registrations handed to the UDP task (its challenges go out, and its
    /// verifications start, there); `None` without a UDP port.
    pub(crate) from_http: Option<tokio::sync::mpsc::Sender<udp::FromHttp>>,
    /// The challenge tokens of DDNet's HTTP registrations.
    pub(crate) ddnet_challenges: ogp_proto::master::ddnet_register::Challenges,
    /// Refreshes of the list so far (every tenth reads the whole overlap again).
    pub(crate) refreshes: std::sync::atomic::AtomicU64,
}

/// Refreshes of the list between two that read the whole overlap again (see
/// [`Shared::refresh`]).
const FULL_OVERLAP_EVERY: u64 = 10;

/// The overlap of the other refreshes: the last second.
const SHORT_OVERLAP_MS: i64 = 1_000;

impl Shared {
    /// Reads the database's changes into the list.
    pub(crate) async fn refresh(&self) -> Result<usize> {
        let since = self.list.read().map(|l| l.high_water).unwrap_or(0);
        // Rows written by other instances (or by slow transactions) may carry a time a
        // little older than what was already read: read the last seconds again (10 s
        // when instances share a PostgreSQL, whose clocks may differ a little; 2 s for
        // this process's own writes to SQLite) at every tenth refresh, and the last
        // second at the others (a batch of this process's writes commits within it).
        // Rows already seen are skipped cheaply: only their addresses and change times
        // are read again. At every refresh, the whole overlap read each change ten
        // times: under 10,000 changes a second, a PostgreSQL backend busy 60–80 % of
        // the time reading keys it had seen.
        let nth = self
            .refreshes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let overlap = match (nth % FULL_OVERLAP_EVERY == 0, self.store.is_shared()) {
            (false, _) => SHORT_OVERLAP_MS,
            (true, true) => 10_000,
            (true, false) => 2_000,
        };
        let since = if since == 0 {
            i64::MIN
        } else {
            since.saturating_sub(overlap)
        };
        const CHUNK: i64 = 5000;
        // the cursor: the last address read (the start reads by address), and its change
        // time (later refreshes read by change time and address)
        let mut after = String::new();
        let mut key_after = since;
        let mut changed = 0;
        let (mut keys_read, mut chunks) = (0usize, 0usize);
        // the rows of one chunk are parsed (on the blocking pool, without the lock:
        // readers, the API and list pages, wait only for the merge) while the next is
        // read: a start with a million rows reads and parses at once
        let mut parsing: Option<tokio::task::JoinHandle<Vec<_>>> = None;
        loop {
            let t = std::time::Instant::now();
            let (rows, n) = if since == i64::MIN {
                // the start: every row, read whole at once
                let rows = self
                    .store
                    .changed_since(since, after.clone(), CHUNK)
                    .await?;
                self.metrics.db("changed_since", t);
                if let Some(last) = rows.last() {
                    after.clone_from(&last.addr);
                }
                let n = rows.len();
                (rows, n)
            } else {
                // later: the overlap's rows were mostly read before; read the keys,
                // then whole only the rows not seen (a burst of registrations or polls
                // would otherwise be read whole again at every refresh for the overlap)
                let keys = self
                    .store
                    .changed_keys_since((key_after, after.clone()), CHUNK)
                    .await?;
                self.metrics.db("changed_keys_since", t);
                if let Some((last, updated)) = keys.last() {
                    after.clone_from(last);
                    key_after = *updated;
                }
                let n = keys.len();
                keys_read += n;
                chunks += 1;
                let unseen: Vec<String> = {
                    let l = self
                        .list
                        .read()
                        .map_err(|_| anyhow::anyhow!("list lock poisoned"))?;
                    keys.into_iter()
                        .filter(|(a, u)| l.is_unseen(a, *u))
                        .map(|(a, _)| a)
                        .collect()
                };
                let t = std::time::Instant::now();
                let rows = self.store.rows_of(unseen).await?;
                self.metrics.db("rows_of", t);
                (rows, n)
            };
            // chunks are disjoint ranges of addresses: this one's unseen rows do not
            // depend on the merge of the one being parsed
            let rows = self
                .list
                .read()
                .map_err(|_| anyhow::anyhow!("list lock poisoned"))?
                .unseen(rows);
            let next = tokio::task::spawn_blocking(move || list::prepare(rows));
            if let Some(p) = parsing.replace(next) {
                changed += self.merge(p.await?).await?;
            }
            if i64::try_from(n).unwrap_or(0) < CHUNK {
                if let Some(p) = parsing.take() {
                    changed += self.merge(p.await?).await?;
                }
                // every change up to the last key read (the keys come in change-time
                // order) is in the list now, seen before or merged: the mark moves
                // there even when nothing was merged. It moved only with a merge, so
                // while this instance's own writes were listed directly (registrations,
                // discovery news), the window read grew from the last refresh that had
                // merged anything: every change since, read at every refresh.
                if since != i64::MIN {
                    self.raise_mark(key_after).await?;
                }
                tracing::debug!(
                    target: "ogp_master::refresh",
                    "refresh {nth}: from {since} (overlap {overlap} ms), {keys_read} keys in {chunks} chunk(s), {changed} changed, mark {}",
                    self.list.read().map(|l| l.high_water).unwrap_or(0)
                );
                return Ok(changed);
            }
        }
    }

    /// Raises the list's mark for the next refresh to `to` (never lowers it).
    async fn raise_mark(&self, to: i64) -> Result<()> {
        if self.list.read().map(|l| l.high_water >= to).unwrap_or(true) {
            return Ok(());
        }
        let mut list = self.write_list().await?;
        list.high_water = list.high_water.max(to);
        Ok(())
    }

    /// The list's write lock, taken when it is free: never waited for inside the lock
    /// while a reader holds it, but after [`WRITE_PATIENCE`]. A writer waiting in a
    /// `std` lock holds every new reader back, and a reader may hold it for a pass over
    /// a million servers (a first page made again: tens of milliseconds). A merge on
    /// one async worker waited for such a pass, and the stats, a server's details and
    /// the cached pages on the other waited behind the merge: the whole runtime held for
    /// the pass, in about half the benchmark's runs at a million (issue 41). A writer
    /// that finds the lock taken for all of [`WRITE_PATIENCE`] (readers without a gap)
    /// waits in it, and is not starved.
    async fn write_list(&self) -> Result<std::sync::RwLockWriteGuard<'_, List>> {
        let asked = std::time::Instant::now();
        loop {
            match self.list.try_write() {
                Ok(list) => return Ok(list),
                Err(std::sync::TryLockError::Poisoned(_)) => {
                    anyhow::bail!("list lock poisoned")
                }
                Err(std::sync::TryLockError::WouldBlock) => {}
            }
            if asked.elapsed() >= WRITE_PATIENCE {
                self.metrics.list_write_waits.inc();
                return self
                    .list
                    .write()
                    .map_err(|_| anyhow::anyhow!("list lock poisoned"));
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// Reads these servers' rows into the list now (what this instance has just
    /// written: a verified server is listed without waiting for the next
    /// [`refresh`](Self::refresh), which reads every change of the last seconds again);
    /// returns how many changed the list.
    pub(crate) async fn refresh_addrs(&self, addrs: Vec<String>) -> Result<usize> {
        let t = std::time::Instant::now();
        let rows = self.store.rows_of(addrs).await?;
        self.metrics.db("rows_of", t);
        self.list_rows(rows).await
    }

    /// Puts these rows, just written by this instance, in the list now (see
    /// [`refresh_addrs`](Self::refresh_addrs)); returns how many changed the list.
    pub(crate) async fn list_rows(&self, rows: Vec<store::ListRow>) -> Result<usize> {
        let rows = self
            .list
            .read()
            .map_err(|_| anyhow::anyhow!("list lock poisoned"))?
            .unseen(rows);
        let prepared = tokio::task::spawn_blocking(move || list::prepare(rows)).await?;
        // Not a mark for the next refresh: rows of other writers (the poller, other
        // instances) older than these may not have been read yet.
        self.merge_with(prepared, true).await
    }

    async fn merge(&self, prepared: Vec<(SocketAddr, Option<list::Entry>, i64)>) -> Result<usize> {
        self.merge_with(prepared, false).await
    }

    /// Merges prepared rows into the list [`MERGE_CHUNK`] at a time, the write lock
    /// taken for each part alone: readers (the API's pages, list requests) wait for a
    /// part, not for a refresh of thousands (a poll cycle's answers: 10,000 rows held the
    /// lock for tens of milliseconds), each taken when free ([`Shared::write_list`]).
    /// With `keep_mark`, the list's mark for the next refresh stays where it was.
    async fn merge_with(
        &self,
        prepared: Vec<(SocketAddr, Option<list::Entry>, i64)>,
        keep_mark: bool,
    ) -> Result<usize> {
        // nothing to merge takes no write lock: readers (pages, list requests) would
        // queue behind it for every refresh that found nothing new
        let mut rows = prepared.into_iter().peekable();
        let mut changed = 0;
        while rows.peek().is_some() {
            let part: Vec<_> = rows.by_ref().take(MERGE_CHUNK).collect();
            let mut list = self.write_list().await?;
            let mark = list.high_water;
            changed += list.merge(part);
            if keep_mark {
                list.high_water = mark;
            }
        }
        Ok(changed)
    }
}

/// Rows merged into the list under one hold of its write lock.
const MERGE_CHUNK: usize = 512;

/// How long a writer looks for the list's lock free before it waits in it
/// ([`Shared::write_list`]).
const WRITE_PATIENCE: Duration = Duration::from_millis(250);

/// A running master.
pub struct Master {
    shared: Arc<Shared>,
    udp: Vec<SocketAddr>,
    http: Option<SocketAddr>,
    gs1_list: Option<SocketAddr>,
    cube2_master: Option<SocketAddr>,
    stop: watch::Sender<bool>,
    tasks: JoinSet<()>,
}

impl std::fmt::Debug for Master {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Master")
            .field("udp", &self.udp)
            .field("http", &self.http)
            .finish()
    }
}

fn instance_name() -> String {
    let mut r = [0u8; 4];
    let _ = getrandom::fill(&mut r);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    format!(
        "{}-{}-{:08x}",
        host.trim(),
        std::process::id(),
        u32::from_le_bytes(r)
    )
}

impl Master {
    /// Opens the database, binds the sockets and starts every task on the current tokio
    /// runtime.
    pub async fn start(config: MasterConfig) -> Result<Self> {
        config.check()?;
        let added = added::resolve_entries(&config.servers, config.allow_private).await?;
        let store = Store::open(&config.db)
            .await
            .with_context(|| format!("database {}", config.db))?;
        let instance = config.instance.clone().unwrap_or_else(instance_name);
        let (from_http, from_http_rx) = tokio::sync::mpsc::channel(udp::FROM_HTTP_QUEUE);
        let shared = Arc::new(Shared {
            from_http: (!config.udp.is_empty()).then_some(from_http),
            ddnet_challenges: {
                let mut secret = [0u8; 16];
                let _ = getrandom::fill(&mut secret);
                ogp_proto::master::ddnet_register::Challenges::new(secret)
            },
            timers: config.timers(),
            store,
            refreshes: std::sync::atomic::AtomicU64::new(0),
            list: RwLock::new(List::default()),
            first_bodies: api::FirstBodies::default(),
            first_pages: api::FirstPages::default(),
            statuses: status_cache::StatusCache::default(),
            metrics: Metrics::default(),
            instance,
            config: config.clone(),
            writing: tokio::sync::Mutex::new(()),
            poll_now: tokio::sync::Notify::new(),
            list_budget: {
                let mut secret = [0u8; 16];
                let _ = getrandom::fill(&mut secret);
                ogp_proto::master::budget::ListBudget::new(
                    ogp_proto::master::budget::ListBudgetConfig::new(
                        config.list_bytes_per_second,
                        config.list_total_bytes_per_second,
                    ),
                    secret,
                    std::time::Instant::now(),
                )
            },
        });
        shared
            .store
            .sync_config_servers(&added, now_ms(), shared.timers)
            .await
            .context("adding the config file's servers")?;
        shared.refresh().await?;
        let (stop, stop_rx) = watch::channel(false);
        let mut tasks = JoinSet::new();
        let mut udp = Vec::new();
        let mut socks = Vec::new();
        for addr in &config.udp {
            let sock =
                ogp_net::responder::bind_std(*addr, ogp_net::responder::SOCKET_RECV_BUFFER, false)
                    .with_context(|| format!("binding UDP {addr}"))?;
            udp.push(sock.local_addr()?);
            socks.push(sock);
        }
        // Cube 2 registrations come over TCP and are verified by the UDP task's registrar
        let (cube2_tx, cube2_rx) = match config.cube2_master {
            Some(_) => {
                let (tx, rx) = tokio::sync::mpsc::channel(cube2::QUEUE);
                (Some(tx), Some(rx))
            }
            None => (None, None),
        };
        if !socks.is_empty() {
            // one task for all sockets: the budgets and caps are the process's
            let udp = udp::start(
                shared.clone(),
                socks,
                from_http_rx,
                cube2_rx,
                stop_rx.clone(),
            )
            .context("starting the UDP thread")?;
            tasks.spawn(udp);
        }
        let http = match config.http {
            Some(addr) => {
                let listener =
                    http_listener(addr).with_context(|| format!("binding HTTP {addr}"))?;
                let bound = listener.local_addr()?;
                tasks.spawn(api::serve(shared.clone(), listener, stop_rx.clone()));
                Some(bound)
            }
            None => None,
        };
        let gs1_list = match config.gs1_list {
            Some(addr) => {
                let listener = http_listener(addr)
                    .with_context(|| format!("binding the GameSpy master list {addr}"))?;
                let bound = listener.local_addr()?;
                tasks.spawn(gs1::serve(shared.clone(), listener, stop_rx.clone()));
                Some(bound)
            }
            None => None,
        };
        let cube2_master = match (config.cube2_master, cube2_tx) {
            (Some(addr), Some(registrar)) => {
                let listener = http_listener(addr)
                    .with_context(|| format!("binding the Cube 2 master {addr}"))?;
                let bound = listener.local_addr()?;
                tasks.spawn(cube2::serve(
                    shared.clone(),
                    listener,
                    registrar,
                    stop_rx.clone(),
                ));
                Some(bound)
            }
            _ => None,
        };
        // live before the first claim (its share counts itself), and noted on a task of
        // its own from then on
        shared
            .store
            .heartbeat(&shared.instance, now_ms())
            .await
            .context("noting this instance in the database")?;
        tasks.spawn(poller::heartbeat(shared.clone(), stop_rx.clone()));
        tasks.spawn(poller::run(shared.clone(), stop_rx.clone()));
        tasks.spawn(housekeeping(shared.clone(), stop_rx));
        Ok(Self {
            shared,
            udp,
            http,
            gs1_list,
            cube2_master,
            stop,
            tasks,
        })
    }

    /// The bound UDP addresses.
    pub fn udp_addrs(&self) -> &[SocketAddr] {
        &self.udp
    }

    /// The bound HTTP address.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http
    }

    /// The bound TCP address of the GameSpy master list.
    pub fn gs1_list_addr(&self) -> Option<SocketAddr> {
        self.gs1_list
    }

    /// The bound TCP address of the Cube 2 master.
    pub fn cube2_master_addr(&self) -> Option<SocketAddr> {
        self.cube2_master
    }

    /// This instance's name in poll leases.
    pub fn instance(&self) -> &str {
        &self.shared.instance
    }

    /// Servers in the list now.
    pub fn listed(&self) -> usize {
        self.shared.list.read().map(|l| l.len()).unwrap_or(0)
    }

    /// Stops every task (polls in flight are recorded or left to their lease), then
    /// leaves the database's instances, so that other instances take this one's servers
    /// at once.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        let deadline = tokio::time::sleep(Duration::from_secs(5));
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                next = self.tasks.join_next() => if next.is_none() { break },
                () = &mut deadline => { self.tasks.abort_all(); break }
            }
        }
        if let Err(e) = self.shared.store.leave(&self.shared.instance).await {
            tracing::warn!("leaving the database's instances: {e:#}");
        }
    }
}

/// The HTTP listening socket, with a backlog of 4096 connections (the kernel caps it at
/// `net.core.somaxconn`) rather than the usual 1024: newcomers wait there while the
/// accept loop makes room for them by displacing others.
fn http_listener(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let sock = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    sock.set_reuseaddr(true)?;
    sock.bind(addr)?;
    sock.listen(4096)
}

/// Reads the database's changes into the list, and expires servers.
async fn housekeeping(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let mut refresh =
        tokio::time::interval(Duration::from_millis(shared.config.refresh_ms.max(50)));
    // a refresh that took longer than the interval is followed by one, not by one per
    // tick missed (the list's connection was read back to back under a burst of writes)
    refresh.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut expire = tokio::time::interval(Duration::from_secs(15));
    let mut last_expire = None;
    loop {
        tokio::select! {
            _ = refresh.tick() => {
                if let Err(e) = shared.refresh().await {
                    tracing::warn!("reading the list from the database: {e:#}");
                }
            }
            _ = expire.tick() => {
                let t = std::time::Instant::now();
                let now = now_ms();
                match shared.store.expire(now, shared.timers, last_expire).await {
                    Ok(()) => last_expire = Some(now),
                    Err(e) => tracing::warn!("expiring servers: {e:#}"),
                }
                shared.metrics.db("expire", t);
            }
            _ = stop.changed() => break,
        }
    }
}

#[cfg(test)]
mod refresh_tests {
    use super::*;

    /// A master on a fresh SQLite file with four simulated servers changed at `t0` (a
    /// minute ago), its two refreshes (the start's, the housekeeping's first tick) done
    /// and no more: the file, the master, two of the servers and `t0`.
    async fn started() -> (std::path::PathBuf, Master, SocketAddr, SocketAddr, i64) {
        let path = std::env::temp_dir().join(format!(
            "ogp-master-refresh-{}-{:08x}.db",
            std::process::id(),
            rand_u32()
        ));
        let db = format!("sqlite://{}", path.display());
        let t0 = now_ms() - 60_000;
        let store = Store::open(&db).await.unwrap();
        store.insert_simulated_with(4, t0, 0).await.unwrap();
        let rows = store.changed_since(0, String::new(), 10).await.unwrap();
        let (a, b) = (rows[0].addr.parse().unwrap(), rows[1].addr.parse().unwrap());
        drop(store);
        let config = MasterConfig {
            db,
            udp: Vec::new(),
            http: None,
            // the housekeeping's refreshes: its first tick only
            refresh_ms: 3_600_000,
            ..MasterConfig::default()
        };
        let master = Master::start(config).await.unwrap();
        let shared = master.shared.clone();
        for _ in 0..500 {
            if refreshes(&shared) >= 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(
            refreshes(&shared),
            2,
            "the start's refresh and the housekeeping's first"
        );
        (path, master, a, b, t0)
    }

    fn rand_u32() -> u32 {
        let mut r = [0u8; 4];
        let _ = getrandom::fill(&mut r);
        u32::from_le_bytes(r)
    }

    fn refreshes(shared: &Shared) -> u64 {
        shared.refreshes.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn updated(shared: &Shared, addr: SocketAddr) -> Option<i64> {
        shared
            .list
            .read()
            .unwrap()
            .get(addr)
            .map(list::Entry::updated)
    }

    async fn stop(path: std::path::PathBuf, master: Master) {
        master.shutdown().await;
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }

    /// A change committed late, with a change time 1.5 s older than the newest the list
    /// has read: the short overlap (the last second) of nine refreshes in ten leaves it,
    /// the whole overlap (2 s for SQLite) of the tenth reads it.
    #[tokio::test]
    async fn a_change_committed_late_is_read_by_the_next_whole_overlap() {
        let (path, master, a, b, t0) = started().await;
        let shared = master.shared.clone();
        shared.store.set_status(a, "{}", t0 + 10_000).await.unwrap();
        shared.refresh().await.unwrap();
        assert_eq!(updated(&shared, a), Some(t0 + 10_000));
        // committed now, changed 1.5 s before the newest change read
        shared.store.set_status(b, "{}", t0 + 8_500).await.unwrap();
        while refreshes(&shared) % FULL_OVERLAP_EVERY != 0 {
            shared.refresh().await.unwrap();
            assert_eq!(updated(&shared, b), Some(t0), "read by a short overlap");
        }
        shared.refresh().await.unwrap();
        assert_eq!(
            updated(&shared, b),
            Some(t0 + 8_500),
            "read by the whole overlap"
        );
        stop(path, master).await;
    }

    /// A change this instance listed itself (a registration, discovery news) does not
    /// move the mark; the next refresh, which finds it already seen, does: the window a
    /// refresh reads stays its overlap, where it grew from the last refresh that had
    /// merged anything (every change since read again at every refresh).
    #[tokio::test]
    async fn a_refresh_that_finds_only_seen_changes_moves_the_mark() {
        let (path, master, a, _, t0) = started().await;
        let shared = master.shared.clone();
        let mark = || shared.list.read().unwrap().high_water;
        assert_eq!(mark(), t0);
        shared.store.set_status(a, "{}", t0 + 10_000).await.unwrap();
        shared.refresh_addrs(vec![a.to_string()]).await.unwrap();
        assert_eq!(updated(&shared, a), Some(t0 + 10_000));
        assert_eq!(mark(), t0, "listed directly: the mark stays");
        assert_eq!(shared.refresh().await.unwrap(), 0, "nothing new to merge");
        assert_eq!(mark(), t0 + 10_000);
        stop(path, master).await;
    }

    /// A thread holding the list's read lock for `time` (a long pass over it), once it
    /// holds it.
    fn hold_the_list(shared: &Arc<Shared>, time: Duration) -> std::thread::JoinHandle<()> {
        let (held, holding) = std::sync::mpsc::channel();
        let shared = shared.clone();
        let long = std::thread::spawn(move || {
            let list = shared.list.read().unwrap();
            held.send(()).unwrap();
            std::thread::sleep(time);
            drop(list);
        });
        holding.recv().unwrap();
        long
    }

    /// A merge that finds the list held by a long reader (a first page made again: a
    /// pass over a million servers) waits for it outside the lock: a reader coming
    /// meanwhile (the stats, a server's details on an async worker) is not held behind
    /// the merge, which is done when the long reader is.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_merge_waiting_for_a_long_reader_holds_no_other_reader_back() {
        let (path, master, a, _, t0) = started().await;
        let shared = master.shared.clone();
        shared.store.set_status(a, "{}", t0 + 10_000).await.unwrap();
        let long = hold_the_list(&shared, Duration::from_millis(200));
        let merge = {
            let shared = shared.clone();
            tokio::spawn(async move { shared.refresh_addrs(vec![a.to_string()]).await })
        };
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(!merge.is_finished(), "the merge waits for the long reader");
        let asked = std::time::Instant::now();
        let servers = shared.list.read().unwrap().len();
        let waited = asked.elapsed();
        assert_eq!(servers, 4);
        assert!(
            waited < Duration::from_millis(80),
            "a reader waited {waited:?} behind the merge"
        );
        long.join().unwrap();
        assert_eq!(merge.await.unwrap().unwrap(), 1, "merged after the reader");
        assert_eq!(updated(&shared, a), Some(t0 + 10_000));
        assert_eq!(shared.metrics.list_write_waits.get(), 0);
        stop(path, master).await;
    }

    /// A writer that never finds the list free (a reader holding it longer than the
    /// patience) waits in the lock then, and is not starved.
    #[tokio::test]
    async fn a_writer_waits_in_the_lock_after_its_patience() {
        let (path, master, a, _, t0) = started().await;
        let shared = master.shared.clone();
        shared.store.set_status(a, "{}", t0 + 10_000).await.unwrap();
        let long = hold_the_list(&shared, WRITE_PATIENCE + Duration::from_millis(150));
        assert_eq!(shared.refresh_addrs(vec![a.to_string()]).await.unwrap(), 1);
        assert_eq!(shared.metrics.list_write_waits.get(), 1);
        assert_eq!(updated(&shared, a), Some(t0 + 10_000));
        long.join().unwrap();
        stop(path, master).await;
    }
}

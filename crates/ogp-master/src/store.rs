//! Storage: one schema, two databases. SQLite (embedded, WAL) by default; PostgreSQL
//! for several masters sharing one list.
//!
//! Every time is milliseconds since the Unix epoch in a 64-bit integer, every flag a 0/1
//! integer, so that the same statements run on both (SQLite's `?N` parameters are
//! written as PostgreSQL's `$N` and translated).
//!
//! Writes go through `Store::write`: a list of statements run in one transaction, on the
//! one connection that writes (PostgreSQL: a connection of its own, held for the whole
//! transaction, so that no other task's statement lands inside it); reads have their own
//! connections.
//!
//! Polling is shared through leases: [`Store::claim_due`] takes the servers due for a
//! poll that nobody else holds (`FOR UPDATE SKIP LOCKED` on PostgreSQL), marks them as
//! held by this instance while the poll runs and until a poll interval plus
//! [`Timers::lease_slack_ms`] after it. Every instance notes itself in `instances`
//! ([`Store::heartbeat`]); the leases of one that stopped noting itself for
//! [`Timers::instance_live_ms`] are void, so an instance that dies loses its servers to
//! the others as each falls due: within one poll interval of its death. Several live
//! instances on one PostgreSQL each own about 1/N of the servers (a hash of address and
//! instance name, [`Store::claim_share`]): a holder gives up the leases of servers that
//! belong to another as they fall due, so an instance started later takes its share
//! within a poll interval.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, bail, Context, Result};
use ogp_proto::master::addr::canonical;
use ogp_proto::master::dpmaster::Listing;
use ogp_proto::{Protocol, Status};

/// The schema, in order; each entry is one migration, applied once.
const MIGRATIONS: &[&str] = &[
    "
CREATE TABLE servers (
  addr TEXT PRIMARY KEY,
  ip TEXT NOT NULL,
  registered_via TEXT NOT NULL,
  game_hint TEXT,
  protocols TEXT NOT NULL DEFAULT '',
  up BIGINT NOT NULL DEFAULT 1,
  removed BIGINT NOT NULL DEFAULT 0,
  ping_ms DOUBLE PRECISION,
  players BIGINT NOT NULL DEFAULT 0,
  status TEXT,
  summary TEXT,
  first_seen BIGINT NOT NULL,
  last_seen BIGINT,
  last_registration BIGINT NOT NULL,
  fails BIGINT NOT NULL DEFAULT 0,
  polls BIGINT NOT NULL DEFAULT 0,
  next_poll BIGINT NOT NULL,
  lease_owner TEXT,
  lease_until BIGINT NOT NULL DEFAULT 0,
  last_history BIGINT NOT NULL DEFAULT 0,
  updated BIGINT NOT NULL
);
CREATE INDEX servers_next_poll ON servers (next_poll);
CREATE INDEX servers_updated ON servers (updated);
CREATE INDEX servers_ip ON servers (ip);
CREATE TABLE history (
  addr TEXT NOT NULL,
  t BIGINT NOT NULL,
  players BIGINT NOT NULL,
  PRIMARY KEY (addr, t)
);
",
    "
ALTER TABLE servers ADD COLUMN list_protocol BIGINT;
ALTER TABLE servers ADD COLUMN list_gametype TEXT;
",
    // Servers an operator added (`config` or `api`), polled without registering.
    "
ALTER TABLE servers ADD COLUMN operator TEXT;
ALTER TABLE servers ADD COLUMN operator_name TEXT;
ALTER TABLE servers ADD COLUMN note TEXT;
",
    // The game a GameSpy v1 heartbeat named: such servers are on the GameSpy master list
    // (TCP) under it.
    "
ALTER TABLE servers ADD COLUMN gs1_game TEXT;
",
    // A million servers: history is thinned by age (`expire`, by time), and servers that
    // stopped registering are found without a pass over every row.
    "
CREATE INDEX history_t ON history (t);
CREATE INDEX servers_registration ON servers (last_registration) WHERE removed = 0 AND operator IS NULL;
CREATE TABLE instances (name TEXT PRIMARY KEY, seen BIGINT NOT NULL);
",
    // A refresh reads the rows changed since its mark in (change time, address) order,
    // each chunk from where the last ended ([`Store::changed_keys_since`]).
    "
DROP INDEX servers_updated;
CREATE INDEX servers_updated_addr ON servers (updated, addr);
",
];

/// The longest an instance may go without noting itself ([`Store::heartbeat`]) and
/// still count as live (sharing the polling, holding its leases); shorter with a short
/// poll interval ([`instance_live_ms`]).
pub const INSTANCE_LIVE_MS: i64 = 5_000;

/// A server's row is free for instance `$1` at time `$2` (given as the statement's
/// parameters), with instances that noted themselves before the parameter named here
/// dead: nobody holds it, `$1` does, its lease ran out, or its holder is dead.
macro_rules! free {
    ($live_cut:literal) => {
        concat!(
            "(lease_owner IS NULL OR lease_owner = $1 OR lease_until < $2
              OR lease_owner NOT IN (SELECT name FROM instances WHERE seen >= ",
            $live_cut,
            "))"
        )
    };
}

/// The live instance a server's row belongs to when several share a PostgreSQL: of the
/// instances that noted themselves since the parameter named here, the one with the
/// highest hash of the row's address and its name (rendezvous hashing: each of N gets
/// about 1/N of the servers, and when one comes or goes only the servers it gains or
/// loses change hands). `hashtext` is PostgreSQL's own: every instance asks the same
/// server, so all agree.
#[cfg(feature = "postgres")]
macro_rules! owner_of {
    ($live_cut:literal) => {
        concat!(
            "(SELECT name FROM instances WHERE seen >= ",
            $live_cut,
            " ORDER BY hashtext(servers.addr || ' ' || name) DESC, name LIMIT 1)"
        )
    };
}

/// How far ahead of its due time an instance gives up the lease of a server that
/// belongs to another live instance ([`Store::claim_share`]): two of the poller's claim
/// ticks (500 ms), so that the owner finds it free when it falls due.
#[cfg(feature = "postgres")]
const RELEASE_AHEAD_MS: i64 = 1_000;

/// How long an instance counts as live after it last noted itself: half a poll
/// interval, from 2 s to [`INSTANCE_LIVE_MS`], so that an instance that dies is known
/// dead by the time the servers it polled last fall due (when the interval is at least
/// 2 s); it notes itself four times as often.
pub fn instance_live_ms(poll_interval_ms: i64) -> i64 {
    (poll_interval_ms / 2).clamp(2_000, INSTANCE_LIVE_MS)
}

/// How history is thinned with age: points older than the age (ms) are merged into one
/// per bucket (ms) of that size, the most players of the bucket. With the default
/// resolution (300 s) and retention (7 days), a server keeps at most 12 points of its
/// last hour, 60 of the next five hours (5 min), 42 of the rest of its last two days
/// (hourly) and 20 of the five days before (6-hourly): 134 points; with a resolution of
/// R seconds, at most 3600 / R + 122.
pub const HISTORY_TIERS: [(i64, i64); 3] = [
    (3_600_000, 300_000),
    (21_600_000, 3_600_000),
    (172_800_000, 21_600_000),
];

/// How far before the previous pass's cuts a thinning pass looks again (points written
/// late, by a slow transaction or another instance).
const HISTORY_THIN_OVERLAP_MS: i64 = 60_000;

/// A server's row key: its address, an IPv4-mapped one as its IPv4 (one server, one
/// row, whichever socket or form it came through).
pub(crate) fn key(addr: SocketAddr) -> String {
    canonical(addr).to_string()
}

/// A server the master verified.
#[derive(Debug, Clone)]
pub struct Verified {
    /// Its query address.
    pub addr: SocketAddr,
    /// The protocol it registered and was verified with.
    pub via: Protocol,
    /// The game its registration named (a Quake III server: its `infoResponse`'s
    /// `gamename`).
    pub game_hint: Option<String>,
    /// What a Quake III server is listed under for `getservers` (game name, protocol
    /// number, game type of its `infoResponse`); stored as `game_hint`, `list_protocol`
    /// and `list_gametype`.
    pub listing: Option<Listing>,
    /// Registered by a GameSpy v1 heartbeat: the game (its `gamename`, lowercase) it is
    /// on the GameSpy master list under; stored as `gs1_game`.
    pub gs1_game: Option<String>,
    /// Round trip of the verification.
    pub ping_ms: f64,
    /// What the verification answer said.
    pub status: Status,
}

/// The `operator` of a server added in the config file.
pub const SOURCE_CONFIG: &str = "config";
/// The `operator` of a server added through the API.
pub const SOURCE_API: &str = "api";

/// A server an operator added, to be polled without registering.
#[derive(Debug, Clone, PartialEq)]
pub struct Added {
    /// Its query address.
    pub addr: SocketAddr,
    /// The protocol to poll it with.
    pub protocol: Protocol,
    /// The operator's name for it (kept in the database, not shown).
    pub name: Option<String>,
    /// The operator's note about it (kept in the database, not shown).
    pub note: Option<String>,
}

/// A server this instance is to poll now.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// Its query address.
    pub addr: SocketAddr,
    /// The protocol it registered with.
    pub via: Protocol,
    /// The protocols it was last seen answering.
    pub protocols: Vec<Protocol>,
    /// Polls so far.
    pub polls: i64,
    /// When its player count was last added to its history.
    pub last_history: i64,
}

/// An answer as stored: serialised as soon as it is chosen, so that a poll cycle's
/// answers waiting to be written hold compact JSON rather than whole statuses.
#[derive(Debug, Clone)]
pub struct PolledAnswer {
    /// Round trip.
    pub ping_ms: f64,
    /// Players.
    pub players: i64,
    /// The status (JSON, the state-file schema).
    pub status: String,
    /// Its list fields ([`summary_of`], JSON).
    pub summary: String,
}

impl PolledAnswer {
    /// The stored form of an answer.
    pub fn new(ping_ms: f64, status: &Status) -> Result<Self> {
        Ok(Self {
            ping_ms,
            players: players_of(status),
            status: ogp_proto::result::to_json(status)?,
            summary: ogp_proto::result::to_json(&summary_of(status))?,
        })
    }
}

/// What a poll found.
#[derive(Debug, Clone)]
pub struct Polled {
    /// The server.
    pub addr: SocketAddr,
    /// The answer, if any protocol answered.
    pub answer: Option<PolledAnswer>,
    /// The protocols it speaks, as of this poll.
    pub protocols: Vec<Protocol>,
    /// Whether to add a point to its history.
    pub history: bool,
    /// What a discovery poll has learned so far (a protocol it did not know answered),
    /// written at once while the poll's other protocols still run: the status and
    /// protocols only, not the poll count, next poll or history.
    pub partial: bool,
}

/// Timers the store applies.
#[derive(Debug, Clone, Copy)]
pub struct Timers {
    /// Between polls of a server.
    pub poll_interval_ms: i64,
    /// A server that has not registered for this long is marked down.
    pub registration_timeout_ms: i64,
    /// A server down (unanswered, or unregistered) for this long is removed.
    pub grace_ms: i64,
    /// History points older than this are deleted.
    pub history_retention_ms: i64,
    /// How long after its next poll was due a server's lease outlives the live
    /// instance holding it (a slow one): another instance takes it over then. An
    /// instance that is not live holds no lease.
    pub lease_slack_ms: i64,
    /// The longest a poll runs, from its claim to its answers or timeouts (the scan's
    /// deadline for a target, plus time queued behind its rate cap): a server's lease
    /// covers it, so that nobody claims a server again while it is being polled.
    pub poll_max_ms: i64,
    /// An instance that has not noted itself for this long is not live
    /// ([`instance_live_ms`]).
    pub instance_live_ms: i64,
}

/// A row as the in-memory list needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ListRow {
    /// `IP:PORT`.
    pub addr: String,
    /// Comma-separated protocol names.
    pub protocols: String,
    /// Answering, and registering.
    pub up: bool,
    /// Removed: drop it from the list.
    pub removed: bool,
    /// Ping of the last answer.
    pub ping_ms: Option<f64>,
    /// When it last answered.
    pub last_seen: Option<i64>,
    /// Its status without the player, team and add-on lists (JSON).
    pub summary: Option<String>,
    /// When the row last changed.
    pub updated: i64,
    /// The game its registration named (Quake III: the `infoResponse`'s `gamename`).
    pub game_hint: Option<String>,
    /// Quake III: the protocol number it is listed under for `getservers`.
    pub list_protocol: Option<i64>,
    /// Quake III: the game type it is listed under.
    pub list_gametype: Option<String>,
    /// GameSpy v1: the game it is on the GameSpy master list under.
    pub gs1_game: Option<String>,
}

/// The columns of a [`ListRow`], in the order [`list_row_sqlite`] and [`list_row_pg`]
/// read them.
macro_rules! list_columns {
    () => {
        "addr, protocols, up, removed, ping_ms, last_seen, summary, updated, game_hint, list_protocol, list_gametype, gs1_game"
    };
}

/// A [`ListRow`] from a SQLite row of [`list_columns`].
fn list_row_sqlite(r: &rusqlite::Row<'_>) -> rusqlite::Result<ListRow> {
    Ok(ListRow {
        addr: r.get(0)?,
        protocols: r.get(1)?,
        up: r.get::<_, i64>(2)? == 1,
        removed: r.get::<_, i64>(3)? == 1,
        ping_ms: r.get(4)?,
        last_seen: r.get(5)?,
        summary: r.get(6)?,
        updated: r.get(7)?,
        game_hint: r.get(8)?,
        list_protocol: r.get(9)?,
        list_gametype: r.get(10)?,
        gs1_game: r.get(11)?,
    })
}

/// A [`ListRow`] from a PostgreSQL row of [`list_columns`].
#[cfg(feature = "postgres")]
fn list_row_pg(r: &tokio_postgres::Row) -> ListRow {
    ListRow {
        addr: r.get(0),
        protocols: r.get(1),
        up: r.get::<_, i64>(2) == 1,
        removed: r.get::<_, i64>(3) == 1,
        ping_ms: r.get(4),
        last_seen: r.get(5),
        summary: r.get(6),
        updated: r.get(7),
        game_hint: r.get(8),
        list_protocol: r.get(9),
        list_gametype: r.get(10),
        gs1_game: r.get(11),
    }
}

impl ListRow {
    /// What a Quake III server is listed under (`None` for other servers).
    pub fn listing(&self) -> Option<Listing> {
        let protocol = u32::try_from(self.list_protocol?).ok()?;
        Some(Listing {
            game: self.game_hint.clone(),
            protocol: Some(protocol),
            gametype: self.list_gametype.clone(),
        })
    }
}

/// Awaits `executes` (statements on one PostgreSQL connection), summing the rows they
/// changed: each is polled once first, which sends its statement, so that PostgreSQL
/// has them all before the first answer comes back (tokio-postgres pipelines the
/// requests of futures polled together; awaited one by one, each statement was a round
/// trip of its own, and 500 polls' updates 500 round trips). Their answers come in the
/// order sent, so after that first pass they are polled from the first unfinished one
/// on, until one is pending. The first error ends it (the transaction is rolled back).
#[cfg(feature = "postgres")]
async fn pipelined<F, E>(executes: Vec<F>) -> Result<u64, E>
where
    F: std::future::Future<Output = Result<u64, E>>,
{
    use std::task::Poll;
    let mut executes: Vec<Option<std::pin::Pin<Box<F>>>> =
        executes.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut first = 0;
    let mut all_sent = false;
    let mut changed = 0u64;
    std::future::poll_fn(move |cx| {
        for slot in executes.iter_mut().skip(first) {
            let Some(f) = slot else { continue };
            match f.as_mut().poll(cx) {
                Poll::Ready(Ok(n)) => {
                    changed += n;
                    *slot = None;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending if all_sent => break,
                Poll::Pending => {}
            }
        }
        all_sent = true;
        while executes.get(first).is_some_and(Option::is_none) {
            first += 1;
        }
        if first == executes.len() {
            Poll::Ready(Ok(changed))
        } else {
            Poll::Pending
        }
    })
    .await
}

/// The database.
#[derive(Clone)]
pub enum Store {
    /// SQLite: the connection that writes, one that reads for API requests and one that
    /// reads the list's changes (WAL lets them read while the other writes, so API
    /// requests wait neither for the poller's batches nor for the list's refreshes).
    Sqlite(
        Arc<Mutex<rusqlite::Connection>>,
        Arc<Mutex<rusqlite::Connection>>,
        Arc<Mutex<rusqlite::Connection>>,
    ),
    /// PostgreSQL.
    #[cfg(feature = "postgres")]
    Postgres(Arc<Pg>),
}

/// The PostgreSQL connections, as for SQLite: one that writes (a transaction holds it
/// from `BEGIN` to `COMMIT`), one that writes verified servers (a burst of
/// registrations does not wait for the poller's claims and records), four for API
/// requests, one for the list's refreshes.
#[cfg(feature = "postgres")]
pub struct Pg {
    write: tokio::sync::Mutex<tokio_postgres::Client>,
    register: tokio::sync::Mutex<tokio_postgres::Client>,
    /// API reads, taken in turn: each connection is one PostgreSQL backend, which runs
    /// its queries one at a time (50 clients reading statuses at once on one of them
    /// waited for each other).
    api: Vec<ApiConnection>,
    next_api: std::sync::atomic::AtomicUsize,
    list: tokio_postgres::Client,
}

/// A connection for API reads and the statements prepared on it.
#[cfg(feature = "postgres")]
struct ApiConnection {
    client: tokio_postgres::Client,
    /// Each statement is prepared once per connection: one given as text is prepared,
    /// run and closed each time, a round trip and a parse and plan more per request.
    prepared: Mutex<Vec<(&'static str, tokio_postgres::Statement)>>,
}

/// PostgreSQL connections for API reads, per instance.
#[cfg(feature = "postgres")]
const PG_API_CONNECTIONS: usize = 4;

#[cfg(feature = "postgres")]
impl Pg {
    fn api(&self) -> &ApiConnection {
        let i = self
            .next_api
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        &self.api[i % self.api.len()]
    }

    /// An API connection, in turn, and `sql` prepared on it.
    async fn api_statement(
        &self,
        sql: &'static str,
    ) -> Result<(&tokio_postgres::Client, tokio_postgres::Statement)> {
        let conn = self.api();
        let known = conn
            .prepared
            .lock()
            .map_err(|_| anyhow!("statement cache lock poisoned"))?
            .iter()
            .find(|(s, _)| *s == sql)
            .map(|(_, st)| st.clone());
        let st = match known {
            Some(st) => st,
            None => {
                let st = conn.client.prepare(sql).await?;
                if let Ok(mut p) = conn.prepared.lock() {
                    p.push((sql, st.clone()));
                }
                st
            }
        };
        Ok((&conn.client, st))
    }

    /// The rows of `sql` (one parameter), prepared on an API connection, as pairs of
    /// their two columns.
    async fn api_pairs<A, B>(
        &self,
        sql: &'static str,
        param: &(dyn tokio_postgres::types::ToSql + Sync),
    ) -> Result<Vec<(A, B)>>
    where
        A: for<'a> tokio_postgres::types::FromSql<'a>,
        B: for<'a> tokio_postgres::types::FromSql<'a>,
    {
        let (client, st) = self.api_statement(sql).await?;
        Ok(client
            .query(&st, &[param])
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }
}

/// A statement parameter of either database.
#[derive(Debug, Clone)]
enum Param {
    Text(String),
    OptText(Option<String>),
    Int(i64),
    OptInt(Option<i64>),
    Real(f64),
}

impl From<String> for Param {
    fn from(v: String) -> Self {
        Self::Text(v)
    }
}

impl From<&str> for Param {
    fn from(v: &str) -> Self {
        Self::Text(v.to_owned())
    }
}

impl From<Option<String>> for Param {
    fn from(v: Option<String>) -> Self {
        Self::OptText(v)
    }
}

impl From<Option<i64>> for Param {
    fn from(v: Option<i64>) -> Self {
        Self::OptInt(v)
    }
}

impl From<i64> for Param {
    fn from(v: i64) -> Self {
        Self::Int(v)
    }
}

impl From<f64> for Param {
    fn from(v: f64) -> Self {
        Self::Real(v)
    }
}

impl rusqlite::ToSql for Param {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Self::Text(v) => v.to_sql(),
            Self::OptText(v) => v.to_sql(),
            Self::Int(v) => v.to_sql(),
            Self::OptInt(v) => v.to_sql(),
            Self::Real(v) => v.to_sql(),
        }
    }
}

#[cfg(feature = "postgres")]
impl Param {
    fn pg(&self) -> &(dyn tokio_postgres::types::ToSql + Sync) {
        match self {
            Self::Text(v) => v,
            Self::OptText(v) => v,
            Self::Int(v) => v,
            Self::OptInt(v) => v,
            Self::Real(v) => v,
        }
    }
}

#[cfg(feature = "postgres")]
impl tokio_postgres::types::ToSql for Param {
    fn to_sql(
        &self,
        ty: &tokio_postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>>
    {
        // (`to_sql` cannot be called on a trait object; the checked call does the same.)
        self.pg().to_sql_checked(ty, out)
    }

    fn accepts(ty: &tokio_postgres::types::Type) -> bool {
        <String as tokio_postgres::types::ToSql>::accepts(ty)
            || <i64 as tokio_postgres::types::ToSql>::accepts(ty)
            || <f64 as tokio_postgres::types::ToSql>::accepts(ty)
    }

    // The value checks the column's type itself: an `Int` for a TEXT column is refused,
    // not written as eight bytes of text.
    fn to_sql_checked(
        &self,
        ty: &tokio_postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>>
    {
        self.pg().to_sql_checked(ty, out)
    }
}

/// One statement of a [`Store::write`] (written with `$N` parameters) and its parameters.
type Step = (&'static str, Vec<Param>);

/// The [`Param`]s of a statement, from values they convert from.
macro_rules! params {
    ($($v:expr),* $(,)?) => { vec![$(Param::from($v)),*] };
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Sqlite(..) => "Store::Sqlite",
            #[cfg(feature = "postgres")]
            Self::Postgres(_) => "Store::Postgres",
        })
    }
}

/// The list fields of a status: what stays in memory and in `summary` (no players,
/// teams, add-ons, rules or limits).
pub fn summary_of(status: &Status) -> Status {
    let mut s = status.clone();
    // the count survives the list it may have been taken from
    s.player_count = status.player_count();
    s.players = None;
    s.teams = None;
    s.addons = None;
    s.rules = None;
    s.limits = None;
    s
}

/// Protocol names, comma-separated, in the order of [`Protocol::ALL`].
pub fn protocols_text(ps: &[Protocol]) -> String {
    let mut v: Vec<Protocol> = Protocol::ALL
        .iter()
        .copied()
        .filter(|p| ps.contains(p))
        .collect();
    v.dedup();
    v.iter().map(|p| p.name()).collect::<Vec<_>>().join(",")
}

/// Protocols from their comma-separated names (unknown names are skipped).
pub fn parse_protocols(s: &str) -> Vec<Protocol> {
    s.split(',').filter_map(|n| n.parse().ok()).collect()
}

fn players_of(status: &Status) -> i64 {
    i64::from(status.player_count().unwrap_or(0))
}

/// The connection settings of a PostgreSQL URL; `env_password` (`PGPASSWORD`) when the URL
/// has no password.
#[cfg(feature = "postgres")]
fn pg_config(
    url: &str,
    env_password: Option<std::ffi::OsString>,
) -> Result<tokio_postgres::Config> {
    let mut config: tokio_postgres::Config = url.parse().context("the PostgreSQL URL")?;
    if config.get_password().is_none() {
        if let Some(p) = env_password {
            config.password(p.as_encoded_bytes());
        }
    }
    Ok(config)
}

/// The statements that thin history by age ([`HISTORY_TIERS`]): each tier's points
/// that are not on a bucket's start are merged into the point at its start (the most
/// players), then deleted. Both statements find their rows through the index on `t`.
///
/// `since`: the time of the previous pass (each tier then looks only at what aged into
/// it since, a few seconds' worth); `None` for a pass over everything (at start).
fn thin_history(now: i64, since: Option<i64>) -> Vec<Step> {
    let merge = "INSERT INTO history (addr, t, players)
          SELECT addr, (t / CAST($3 AS BIGINT)) * CAST($3 AS BIGINT), MAX(players) FROM history
          WHERE t < $1 AND t >= $2 AND t % CAST($3 AS BIGINT) <> 0
          GROUP BY 1, 2
        ON CONFLICT (addr, t) DO UPDATE SET players =
          CASE WHEN excluded.players > history.players THEN excluded.players ELSE history.players END";
    let delete = "DELETE FROM history WHERE t < $1 AND t >= $2 AND t % CAST($3 AS BIGINT) <> 0";
    HISTORY_TIERS
        .iter()
        .flat_map(|&(age, bucket)| {
            let cut = now - age;
            let lo = since.map_or(i64::MIN / 4, |s| s - age - HISTORY_THIN_OVERLAP_MS);
            [
                (merge, params![cut, lo, bucket]),
                (delete, params![cut, lo, bucket]),
            ]
        })
        .collect()
}

fn sqlite_sql(sql: &str) -> String {
    sql.replace('$', "?")
}

/// What an upsert of a verified server sets, and what it keeps (a status already
/// polled is kept until the next poll); `$1`–`$12` as [`VerifiedRow::params`] gives them.
macro_rules! upsert_verified {
    ($values:literal) => {
        concat!(
            "INSERT INTO servers (addr, ip, registered_via, game_hint, protocols, up, removed, ping_ms, players, status, summary, first_seen, last_seen, last_registration, next_poll, updated, list_protocol, list_gametype, gs1_game) ",
            $values,
            " ON CONFLICT (addr) DO UPDATE SET registered_via = excluded.registered_via, game_hint = excluded.game_hint,
              list_protocol = excluded.list_protocol, list_gametype = excluded.list_gametype, gs1_game = excluded.gs1_game,
              up = 1, removed = 0, fails = 0, ping_ms = excluded.ping_ms, last_seen = excluded.last_seen,
              last_registration = excluded.last_registration, next_poll = excluded.next_poll, updated = excluded.updated,
              status = COALESCE(servers.status, excluded.status), summary = COALESCE(servers.summary, excluded.summary)
             RETURNING ",
            list_columns!()
        )
    };
}

/// The upsert of one verified server.
const UPSERT_VERIFIED_ROW: &str = upsert_verified!(
    "VALUES ($1, $2, $3, $4, $3, 1, 0, $5, $6, $7, $8, $9, $9, $9, $9, $9, $10, $11, $12)"
);

/// The upsert of a batch of verified servers in one statement: each parameter but the
/// time (`$9`) an array of the batch's values (PostgreSQL).
#[cfg(feature = "postgres")]
const UPSERT_VERIFIED_ARRAYS: &str = upsert_verified!(
    "SELECT a, i, v, h, v, 1, 0, p, n, s, m, $9, $9, $9, $9, $9, lp, lg, g
     FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::int8[], $7::text[], $8::text[], $10::int8[], $11::text[], $12::text[])
       AS t (a, i, v, h, p, n, s, m, lp, lg, g)"
);

/// A verified server's values as the upsert writes them.
struct VerifiedRow {
    addr: String,
    ip: String,
    via: &'static str,
    game_hint: Option<String>,
    ping_ms: f64,
    players: i64,
    status: String,
    summary: String,
    list_protocol: Option<i64>,
    list_gametype: Option<String>,
    gs1_game: Option<String>,
}

impl VerifiedRow {
    fn new(addr: String, v: &Verified) -> Result<Self> {
        Ok(Self {
            addr,
            ip: canonical(v.addr).ip().to_string(),
            via: v.via.name(),
            game_hint: v.game_hint.clone(),
            ping_ms: v.ping_ms,
            players: players_of(&v.status),
            status: ogp_proto::result::to_json(&v.status)?,
            summary: ogp_proto::result::to_json(&summary_of(&v.status))?,
            list_protocol: v.listing.as_ref().and_then(|l| l.protocol).map(i64::from),
            list_gametype: v.listing.as_ref().and_then(|l| l.gametype.clone()),
            gs1_game: v.gs1_game.clone(),
        })
    }

    /// The parameters of [`UPSERT_VERIFIED_ROW`].
    fn params(&self, now: i64) -> Vec<Param> {
        params![
            self.addr.clone(),
            self.ip.clone(),
            self.via,
            self.game_hint.clone(),
            self.ping_ms,
            self.players,
            self.status.clone(),
            self.summary.clone(),
            now,
            self.list_protocol,
            self.list_gametype.clone(),
            self.gs1_game.clone(),
        ]
    }
}

/// The columns of a batch of [`VerifiedRow`]s, the arrays of [`UPSERT_VERIFIED_ARRAYS`].
#[cfg(feature = "postgres")]
struct VerifiedColumns<'a> {
    addr: Vec<&'a str>,
    ip: Vec<&'a str>,
    via: Vec<&'a str>,
    game_hint: Vec<Option<&'a str>>,
    ping_ms: Vec<f64>,
    players: Vec<i64>,
    status: Vec<&'a str>,
    summary: Vec<&'a str>,
    list_protocol: Vec<Option<i64>>,
    list_gametype: Vec<Option<&'a str>>,
    gs1_game: Vec<Option<&'a str>>,
}

#[cfg(feature = "postgres")]
impl<'a> VerifiedColumns<'a> {
    fn of(rows: &'a [VerifiedRow]) -> Self {
        Self {
            addr: rows.iter().map(|r| r.addr.as_str()).collect(),
            ip: rows.iter().map(|r| r.ip.as_str()).collect(),
            via: rows.iter().map(|r| r.via).collect(),
            game_hint: rows.iter().map(|r| r.game_hint.as_deref()).collect(),
            ping_ms: rows.iter().map(|r| r.ping_ms).collect(),
            players: rows.iter().map(|r| r.players).collect(),
            status: rows.iter().map(|r| r.status.as_str()).collect(),
            summary: rows.iter().map(|r| r.summary.as_str()).collect(),
            list_protocol: rows.iter().map(|r| r.list_protocol).collect(),
            list_gametype: rows.iter().map(|r| r.list_gametype.as_deref()).collect(),
            gs1_game: rows.iter().map(|r| r.gs1_game.as_deref()).collect(),
        }
    }
}

/// A claimed row: address, protocol it registered with, protocols, polls, last history.
type ClaimRow = (String, String, String, i64, i64);

/// How long a claim holds a server: while its poll runs, then a poll interval and the
/// slack (a record renews it without the poll's time).
fn claim_lease(t: Timers) -> i64 {
    t.poll_interval_ms
        .saturating_add(t.lease_slack_ms)
        .saturating_add(t.poll_max_ms)
}

/// The claim of the rows `pick` selects: `$1` the instance, `$2` now, `$3` the lease,
/// `$6` the poll interval.
fn claim_sql(pick: &str) -> String {
    format!(
        "UPDATE servers SET lease_owner = $1, lease_until = $2 + CAST($3 AS BIGINT), next_poll = $2 + CAST($6 AS BIGINT)
         WHERE addr IN ({pick}) RETURNING addr, registered_via, protocols, polls, last_history"
    )
}

fn claims(rows: Vec<ClaimRow>) -> Vec<Claim> {
    rows.into_iter()
        .filter_map(|(addr, via, protocols, polls, last_history)| {
            Some(Claim {
                addr: addr.parse().ok()?,
                via: via.parse().ok()?,
                protocols: parse_protocols(&protocols),
                polls,
                last_history,
            })
        })
        .collect()
}

#[cfg(feature = "postgres")]
async fn pg_claim_rows(
    client: &tokio_postgres::Client,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<Vec<ClaimRow>> {
    Ok(client
        .query(sql, params)
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
        .collect())
}

/// [`Store::claim_share`] with several live instances on PostgreSQL: gives up the
/// leases of servers that belong to another live instance and fall due soon, then
/// claims this instance's own due servers (and any overdue past the slack). One
/// statement each on the writing connection, held for both; each scans only the rows
/// due within [`RELEASE_AHEAD_MS`] (the index on `next_poll`), hashing each against the
/// few live instances.
#[cfg(feature = "postgres")]
async fn claim_owned(pg: &Pg, owner: &str, now: i64, t: Timers, limit: i64) -> Result<Vec<Claim>> {
    let release = concat!(
        "UPDATE servers SET lease_owner = NULL, lease_until = 0 WHERE addr IN (
           SELECT addr FROM servers WHERE removed = 0 AND next_poll <= $2 + CAST($3 AS BIGINT)
             AND lease_owner = $1 AND lease_until <= $2 + CAST($4 AS BIGINT) AND $1 <> ",
        owner_of!("$5"),
        " FOR UPDATE SKIP LOCKED)"
    );
    let pick = concat!(
        "SELECT addr FROM servers WHERE removed = 0 AND next_poll <= $2 AND ",
        free!("$5"),
        " AND (next_poll < $2 - CAST($7 AS BIGINT) OR $1 = ",
        owner_of!("$5"),
        ") ORDER BY next_poll LIMIT $4 FOR UPDATE SKIP LOCKED"
    );
    let live_cut = now - t.instance_live_ms;
    let recorded = t.poll_interval_ms.saturating_add(t.lease_slack_ms);
    let client = pg.write.lock().await;
    let released = client
        .execute(
            release,
            &[&owner, &now, &RELEASE_AHEAD_MS, &recorded, &live_cut],
        )
        .await?;
    if released > 0 {
        tracing::debug!(
            "gave up the leases of {released} server(s) that belong to another instance"
        );
    }
    let rows = pg_claim_rows(
        &client,
        &claim_sql(pick),
        &[
            &owner,
            &now,
            &claim_lease(t),
            &limit,
            &live_cut,
            &t.poll_interval_ms,
            &t.lease_slack_ms,
        ],
    )
    .await?;
    Ok(claims(rows))
}

impl Store {
    /// Opens (creating when missing) the database at `url`: `sqlite://PATH`,
    /// `sqlite::memory:`, or `postgres://…`; and brings its schema up to date.
    ///
    /// PostgreSQL: a URL without a password takes the one in the environment variable
    /// `PGPASSWORD`, as libpq's clients do, so that it need not be on a command line.
    pub async fn open(url: &str) -> Result<Self> {
        if let Some(path) = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            let path = path.to_owned();
            let (w, r) = tokio::task::spawn_blocking(
                move || -> Result<(rusqlite::Connection, Option<(rusqlite::Connection, rusqlite::Connection)>)> {
                    let open = || -> Result<rusqlite::Connection> {
                        let conn = if path == ":memory:" {
                            rusqlite::Connection::open_in_memory()?
                        } else {
                            rusqlite::Connection::open(&path)
                                .with_context(|| format!("opening {path}"))?
                        };
                        conn.pragma_update(None, "journal_mode", "WAL")?;
                        conn.pragma_update(None, "synchronous", "NORMAL")?;
                        conn.busy_timeout(std::time::Duration::from_secs(5))?;
                        Ok(conn)
                    };
                    let w = open()?;
                    // a second connection to an in-memory database would be another database
                    let r = if path == ":memory:" {
                        None
                    } else {
                        Some((open()?, open()?))
                    };
                    Ok((w, r))
                },
            )
            .await??;
            let w = Arc::new(Mutex::new(w));
            let (api, list) = match r {
                Some((a, l)) => (Arc::new(Mutex::new(a)), Arc::new(Mutex::new(l))),
                None => (w.clone(), w.clone()),
            };
            let store = Self::Sqlite(w, api, list);
            store.migrate().await?;
            return Ok(store);
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            #[cfg(feature = "postgres")]
            {
                let config = pg_config(url, std::env::var_os("PGPASSWORD"))?;
                let connect = || async {
                    let (client, conn) = config
                        .connect(tokio_postgres::NoTls)
                        .await
                        .context("connecting to PostgreSQL")?;
                    tokio::spawn(async move {
                        if let Err(e) = conn.await {
                            tracing::error!("PostgreSQL connection: {e}");
                        }
                    });
                    anyhow::Ok(client)
                };
                let store = Self::Postgres(Arc::new(Pg {
                    write: tokio::sync::Mutex::new(connect().await?),
                    register: tokio::sync::Mutex::new(connect().await?),
                    api: {
                        let mut v = Vec::with_capacity(PG_API_CONNECTIONS);
                        for _ in 0..PG_API_CONNECTIONS {
                            v.push(ApiConnection {
                                client: connect().await?,
                                prepared: Mutex::new(Vec::new()),
                            });
                        }
                        v
                    },
                    next_api: std::sync::atomic::AtomicUsize::new(0),
                    list: connect().await?,
                }));
                store.migrate().await?;
                return Ok(store);
            }
            #[cfg(not(feature = "postgres"))]
            bail!("this build has no PostgreSQL support (cargo feature `postgres`)");
        }
        bail!("unknown database URL {url:?}: use sqlite://PATH or postgres://…")
    }

    /// Whether several instances may share this database (PostgreSQL).
    pub fn is_shared(&self) -> bool {
        !matches!(self, Self::Sqlite(..))
    }

    /// Runs `f` on the SQLite connection on a blocking thread.
    async fn sqlite<T: Send + 'static>(
        conn: &Arc<Mutex<rusqlite::Connection>>,
        f: impl FnOnce(&mut rusqlite::Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let conn = conn.clone();
        tokio::task::spawn_blocking(move || {
            let mut c = conn.lock().map_err(|_| anyhow!("database lock poisoned"))?;
            f(&mut c)
        })
        .await?
    }

    /// Runs `steps` in order, in one transaction; returns the rows they changed.
    async fn write(&self, steps: Vec<Step>) -> Result<u64> {
        match self {
            Self::Sqlite(c, _, _) => {
                Self::sqlite(c, move |c| {
                    let tx = c.transaction()?;
                    let mut changed = 0;
                    for (sql, params) in &steps {
                        let mut st = tx.prepare_cached(&sqlite_sql(sql))?;
                        changed += st.execute(rusqlite::params_from_iter(params))? as u64;
                    }
                    tx.commit()?;
                    Ok(changed)
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Self::Postgres(pg) => {
                let mut c = pg.write.lock().await;
                // Dropped without a commit (an error, or this task cancelled), it rolls back.
                let tx = c.transaction().await?;
                let mut prepared: Vec<(&str, tokio_postgres::Statement)> = Vec::new();
                for (sql, _) in &steps {
                    if prepared.iter().all(|(s, _)| s != sql) {
                        prepared.push((sql, tx.prepare(sql).await?));
                    }
                }
                let refs: Vec<Vec<&(dyn tokio_postgres::types::ToSql + Sync)>> = steps
                    .iter()
                    .map(|(_, params)| {
                        params
                            .iter()
                            .map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync))
                            .collect()
                    })
                    .collect();
                let mut executes = Vec::with_capacity(steps.len());
                for ((sql, _), refs) in steps.iter().zip(&refs) {
                    let st = prepared
                        .iter()
                        .find(|(s, _)| s == sql)
                        .map(|(_, st)| st)
                        .ok_or_else(|| anyhow!("a statement not prepared"))?;
                    executes.push(tx.execute(st, refs));
                }
                let changed = pipelined(executes).await?;
                tx.commit().await?;
                Ok(changed)
            }
        }
    }

    /// Writes `rows` (each the statements of one server) in one transaction; when that
    /// fails, each row in a transaction of its own, so that a row the database refuses
    /// loses only itself. Fails, after writing the others, when any row was refused.
    async fn write_rows(&self, rows: Vec<Vec<Step>>) -> Result<()> {
        let all: Vec<Step> = rows.iter().flatten().cloned().collect();
        let Err(e) = self.write(all).await else {
            return Ok(());
        };
        if rows.len() < 2 {
            return Err(e);
        }
        let n = rows.len();
        let mut refused = 0;
        let mut first = None;
        for row in rows {
            if let Err(e) = self.write(row).await {
                refused += 1;
                first.get_or_insert(e);
            }
        }
        match first {
            None => Ok(()),
            Some(e) => Err(e.context(format!("{refused} of {n} rows refused, the rest written"))),
        }
    }

    async fn migrate(&self) -> Result<()> {
        match self {
            Self::Sqlite(c, _, _) => {
                Self::sqlite(c, |c| {
                    let tx = c.transaction()?;
                    tx.execute_batch(
                        "CREATE TABLE IF NOT EXISTS ogp_schema (version BIGINT NOT NULL)",
                    )?;
                    let v: i64 = tx.query_row(
                        "SELECT COALESCE(MAX(version), 0) FROM ogp_schema",
                        [],
                        |r| r.get(0),
                    )?;
                    for (i, m) in MIGRATIONS.iter().enumerate() {
                        let n = i64::try_from(i + 1)?;
                        if n > v {
                            tx.execute_batch(m)?;
                            tx.execute("INSERT INTO ogp_schema (version) VALUES (?1)", [n])?;
                        }
                    }
                    tx.commit()?;
                    Ok(())
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Self::Postgres(pg) => {
                let mut c = pg.write.lock().await;
                let tx = c.transaction().await?;
                // One migrating instance at a time.
                tx.batch_execute("SELECT pg_advisory_xact_lock(7266160); CREATE TABLE IF NOT EXISTS ogp_schema (version BIGINT NOT NULL);")
                    .await?;
                let v: i64 = tx
                    .query_one("SELECT COALESCE(MAX(version), 0) FROM ogp_schema", &[])
                    .await?
                    .get(0);
                for (i, m) in MIGRATIONS.iter().enumerate() {
                    let n = i64::try_from(i + 1)?;
                    if n > v {
                        tx.batch_execute(m).await?;
                        tx.execute("INSERT INTO ogp_schema (version) VALUES ($1)", &[&n])
                            .await?;
                    }
                }
                tx.commit().await?;
                Ok(())
            }
        }
    }

    /// Lists verified servers (or lists them again), due for a full poll at once, and
    /// returns their rows as the list reads them (RETURNING), so that they are listed
    /// without reading them back. One transaction: on PostgreSQL one statement over
    /// arrays of the batch's values, on the registrations' own connection (the poller's
    /// claims and records hold the writing connection for up to half a second each:
    /// a burst of registrations waited behind them, and ran 1,024 statements a batch).
    /// A server twice in the batch is written once, as it was last. When the batch is
    /// refused, each server is written alone, so that a row the database refuses loses
    /// only itself; fails, after writing the others, when any was refused.
    pub async fn upsert_verified(&self, batch: &[Verified], now: i64) -> Result<Vec<ListRow>> {
        let mut seen = std::collections::HashSet::with_capacity(batch.len());
        let mut rows = Vec::with_capacity(batch.len());
        // the last of each address: walk back, keep the first seen, then restore the order
        for v in batch.iter().rev() {
            let k = key(v.addr);
            if seen.insert(k.clone()) {
                rows.push(VerifiedRow::new(k, v)?);
            }
        }
        // in the order of their keys, as the poll records (see `record_polls`)
        rows.sort_by(|a, b| a.addr.cmp(&b.addr));
        match self {
            Self::Sqlite(c, _, _) => {
                Self::sqlite(c, move |c| {
                    let tx = c.transaction()?;
                    let mut out = Vec::with_capacity(rows.len());
                    let (mut refused, mut first) = (0usize, None);
                    {
                        let mut st = tx.prepare_cached(&sqlite_sql(UPSERT_VERIFIED_ROW))?;
                        for r in &rows {
                            match st.query_row(
                                rusqlite::params_from_iter(r.params(now)),
                                list_row_sqlite,
                            ) {
                                Ok(row) => out.push(row),
                                Err(e) => {
                                    refused += 1;
                                    first.get_or_insert(e);
                                }
                            }
                        }
                    }
                    tx.commit()?;
                    match first {
                        None => Ok(out),
                        Some(e) => Err(anyhow::Error::from(e).context(format!(
                            "{refused} of {} rows refused, the rest written",
                            rows.len()
                        ))),
                    }
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Self::Postgres(pg) => {
                let c = pg.register.lock().await;
                let cols = VerifiedColumns::of(&rows);
                let all = c
                    .query(
                        UPSERT_VERIFIED_ARRAYS,
                        &[
                            &cols.addr,
                            &cols.ip,
                            &cols.via,
                            &cols.game_hint,
                            &cols.ping_ms,
                            &cols.players,
                            &cols.status,
                            &cols.summary,
                            &now,
                            &cols.list_protocol,
                            &cols.list_gametype,
                            &cols.gs1_game,
                        ],
                    )
                    .await;
                let e = match all {
                    Ok(r) => return Ok(r.iter().map(list_row_pg).collect()),
                    Err(e) if rows.len() < 2 => return Err(e.into()),
                    Err(e) => e,
                };
                tracing::debug!(
                    "a batch of {} verified servers refused ({e}): one by one",
                    rows.len()
                );
                let mut out = Vec::with_capacity(rows.len());
                let (mut refused, mut first) = (0usize, None);
                for r in &rows {
                    let params = r.params(now);
                    let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                        params.iter().map(Param::pg).collect();
                    match c.query_one(UPSERT_VERIFIED_ROW, &refs).await {
                        Ok(row) => out.push(list_row_pg(&row)),
                        Err(e) => {
                            refused += 1;
                            first.get_or_insert(e);
                        }
                    }
                }
                match first {
                    None => Ok(out),
                    Some(e) => Err(anyhow::Error::from(e).context(format!(
                        "{refused} of {} rows refused, the rest written",
                        rows.len()
                    ))),
                }
            }
        }
    }

    /// Adds servers for an operator (`source`: `config` or `api`), due for a poll at once;
    /// listed after their first good poll. A server already listed (registered, or added
    /// before) keeps its row and becomes the operator's; one removed before starts anew.
    /// One transaction.
    pub async fn add_servers(
        &self,
        servers: &[Added],
        source: &'static str,
        now: i64,
    ) -> Result<()> {
        let purge = "DELETE FROM servers WHERE addr = $1 AND removed = 1";
        let insert = "INSERT INTO servers (addr, ip, registered_via, protocols, up, removed, players, first_seen, last_registration, next_poll, updated, operator, operator_name, note)
            VALUES ($1, $2, $3, $3, 0, 0, 0, $4, 0, $4, $4, $5, $6, $7)
            ON CONFLICT (addr) DO UPDATE SET operator = excluded.operator, operator_name = excluded.operator_name, note = excluded.note,
              registered_via = excluded.registered_via, updated = excluded.updated";
        let rows = servers
            .iter()
            .map(|a| {
                let addr = key(a.addr);
                vec![
                    (purge, params![addr.clone()]),
                    (
                        insert,
                        params![
                            addr,
                            canonical(a.addr).ip().to_string(),
                            a.protocol.name(),
                            now,
                            source,
                            a.name.clone(),
                            a.note.clone()
                        ],
                    ),
                ]
            })
            .collect();
        self.write_rows(rows).await
    }

    /// Gives up the operator's hold on a server added from `source`: it is no longer
    /// polled for the operator, and is removed from the list unless it registers. Returns
    /// whether there was such a server.
    pub async fn release_server(
        &self,
        addr: SocketAddr,
        source: &'static str,
        now: i64,
        t: Timers,
    ) -> Result<bool> {
        let sql =
            "UPDATE servers SET operator = NULL, operator_name = NULL, note = NULL, updated = $2,
              removed = CASE WHEN last_registration < $3 THEN 1 ELSE removed END
            WHERE addr = $1 AND operator = $4";
        let reg_cut = now - t.registration_timeout_ms;
        let n = self
            .write(vec![(sql, params![key(addr), now, reg_cut, source])])
            .await?;
        Ok(n > 0)
    }

    /// The servers operators added and not released: (address, `config` or `api`).
    pub async fn added_servers(&self) -> Result<Vec<(String, String)>> {
        let sql = "SELECT addr, operator FROM servers WHERE operator IS NOT NULL AND removed = 0 ORDER BY addr";
        match self {
            Self::Sqlite(_, c, _) => {
                Self::sqlite(c, move |c| {
                    let mut st = c.prepare_cached(sql)?;
                    let rows = st
                        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(rows)
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Self::Postgres(pg) => Ok(pg
                .api()
                .client
                .query(sql, &[])
                .await?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect()),
        }
    }

    /// Makes the config file's servers those of the database: adds `servers`, releases
    /// the servers a config file added before that are not among them.
    pub async fn sync_config_servers(&self, servers: &[Added], now: i64, t: Timers) -> Result<()> {
        for (addr, source) in self.added_servers().await? {
            let Ok(a) = addr.parse::<SocketAddr>() else {
                continue;
            };
            if source == SOURCE_CONFIG && !servers.iter().any(|s| s.addr == a) {
                self.release_server(a, SOURCE_CONFIG, now, t).await?;
            }
        }
        self.add_servers(servers, SOURCE_CONFIG, now).await
    }

    /// Notes registrations from listed servers (address, whether it asks to be looked
    /// at); a server that asks (status changed, starting, exiting) is polled within 5
    /// seconds. One transaction.
    pub async fn note_registrations(&self, batch: &[(SocketAddr, bool)], now: i64) -> Result<()> {
        let sql = "UPDATE servers SET last_registration = $2,
              next_poll = CASE WHEN CAST($3 AS BIGINT) = 1 AND next_poll > $2 + 5000 THEN $2 + 5000 ELSE next_poll END
            WHERE addr = $1 AND removed = 0";
        match self {
            Self::Sqlite(..) => {
                let rows = batch
                    .iter()
                    .map(|(a, w)| vec![(sql, params![key(*a), now, i64::from(*w)])])
                    .collect();
                self.write_rows(rows).await
            }
            // one statement over arrays, on the registrations' connection (as
            // `upsert_verified`): every server listed sends one every few minutes
            #[cfg(feature = "postgres")]
            Self::Postgres(pg) => {
                // in the order of their keys, as the poll records and the verified
                // batches (see `record_polls`): two instances noting overlapping
                // registrations lock their rows in one order, and neither is aborted
                let mut wants: std::collections::BTreeMap<String, i64> =
                    std::collections::BTreeMap::new();
                for (a, w) in batch {
                    let w = i64::from(*w);
                    let e = wants.entry(key(*a)).or_insert(w);
                    *e = (*e).max(w);
                }
                let (addrs, wants): (Vec<String>, Vec<i64>) = wants.into_iter().unzip();
                pg.register
                    .lock()
                    .await
                    .execute(
                        "UPDATE servers SET last_registration = $3::int8,
                           next_poll = CASE WHEN t.w = 1 AND next_poll > $3::int8 + 5000 THEN $3::int8 + 5000 ELSE next_poll END
                         FROM UNNEST($1::text[], $2::int8[]) AS t (a, w)
                         WHERE addr = t.a AND removed = 0",
                        &[&addrs, &wants, &now],
                    )
                    .await?;
                Ok(())
            }
        }
    }

    /// One number from a read (`COUNT(*)`), on the API's connection.
    async fn read_count(&self, sql: &'static str, params: Vec<Param>) -> Result<i64> {
        match self {
            Self::Sqlite(_, c, _) => {
                Self::sqlite(c, move |c| {
                    let mut st = c.prepare_cached(&sqlite_sql(sql))?;
                    Ok(st.query_row(rusqlite::params_from_iter(&params), |r| r.get(0))?)
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Self::Postgres(pg) => {
                let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
                    .iter()
                    .map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync))
                    .collect();
                let (client, st) = pg.api_statement(sql).await?;
                Ok(client.query_one(&st, &refs).await?.get(0))
            }
        }
    }

    /// Notes that `owner` is alive (every quarter of [`Timers::instance_live_ms`], on a
    /// task of its own, so that a busy poller does not look dead; on PostgreSQL outside
    /// the writing connection, so that it waits for no batch of polls being written).
    pub async fn heartbeat(&self, owner: &str, now: i64) -> Result<()> {
        let sql = "INSERT INTO instances (name, seen) VALUES ($1, $2)
            ON CONFLICT (name) DO UPDATE SET seen = excluded.seen";
        let gone = "DELETE FROM instances WHERE seen < $1";
        let gone_cut = now - 86_400_000;
        match self {
            Self::Sqlite(..) => self
                .write(vec![(sql, params![owner, now]), (gone, params![gone_cut])])
                .await
                .map(drop),
            #[cfg(feature = "postgres")]
            Self::Postgres(pg) => {
                pg.list.execute(sql, &[&owner, &now]).await?;
                pg.list.execute(gone, &[&gone_cut]).await?;
                Ok(())
            }
        }
    }

    /// Notes that `owner` stops: its row in `instances` goes, so that the servers it
    /// leased are free to the other instances at once, not once it no longer counts as
    /// live.
    pub async fn leave(&self, owner: &str) -> Result<()> {
        let sql = "DELETE FROM instances WHERE name = $1";
        match self {
            Self::Sqlite(..) => self.write(vec![(sql, params![owner])]).await.map(drop),
            #[cfg(feature = "postgres")]
            Self::Postgres(pg) => {
                pg.list.execute(sql, &[&owner]).await?;
                Ok(())
            }
        }
    }

    /// How many instances are live (at least 1: the caller): those that noted
    /// themselves within [`Timers::instance_live_ms`].
    pub async fn live(&self, now: i64, t: Timers) -> Result<i64> {
        let live = self
            .read_count(
                "SELECT COUNT(*) FROM instances WHERE seen >= $1",
                params![now - t.instance_live_ms],
            )
            .await?;
        Ok(live.max(1))
    }

    /// Servers due for a poll that no other live instance holds, counted up to `cap`.
    pub async fn due(&self, owner: &str, now: i64, t: Timers, cap: i64) -> Result<i64> {
        let sql = concat!(
            "SELECT COUNT(*) FROM (SELECT 1 FROM servers WHERE removed = 0 AND next_poll <= $2 AND ",
            free!("$4"),
            " LIMIT $3) AS due"
        );
        self.read_count(sql, params![owner, now, cap, now - t.instance_live_ms])
            .await
    }

    /// Takes this instance's share of the servers due for a poll that no other live
    /// instance holds, at most `limit`. One instance alone takes everything due.
    ///
    /// Several on PostgreSQL: each server belongs to one live instance (`owner_of!`,
    /// rendezvous hashing), and each claims only its own (and any overdue by more than
    /// [`Timers::lease_slack_ms`]: one that belongs to a live instance that does not poll
    /// it). Before it claims, an instance gives up the leases it holds of servers that
    /// belong to another and fall due within `RELEASE_AHEAD_MS`, unless their poll still
    /// runs (a lease taken at a claim, not yet renewed by a record, is longer by
    /// [`Timers::poll_max_ms`]): a live holder renewed every lease it held, so an
    /// instance started later got only new and orphaned servers. Now one started beside
    /// others takes its share as the servers fall due, within a poll interval, each
    /// polled once in it.
    ///
    /// Several on SQLite (not a shared setup): of the `due` servers that nobody live
    /// holds, `due / live` (rounded up).
    pub async fn claim_share(
        &self,
        owner: &str,
        now: i64,
        t: Timers,
        limit: i64,
    ) -> Result<Vec<Claim>> {
        let live = self.live(now, t).await?;
        if live <= 1 {
            return self.claim_due(owner, now, t, limit).await;
        }
        #[cfg(feature = "postgres")]
        if let Self::Postgres(pg) = self {
            return claim_owned(pg, owner, now, t, limit).await;
        }
        let due = self.due(owner, now, t, limit.saturating_mul(live)).await?;
        let share = (due + live - 1) / live;
        self.claim_due(owner, now, t, limit.min(share.max(1))).await
    }

    /// Takes up to `limit` servers due for a poll that no other live instance holds:
    /// held while the poll runs ([`Timers::poll_max_ms`]) and a poll interval plus the
    /// slack after, due again a poll interval from now (so that, should this instance
    /// die, another takes them when they were due anyway).
    pub async fn claim_due(
        &self,
        owner: &str,
        now: i64,
        t: Timers,
        limit: i64,
    ) -> Result<Vec<Claim>> {
        let pick = concat!(
            "SELECT addr FROM servers WHERE removed = 0 AND next_poll <= $2 AND ",
            free!("$5"),
            " ORDER BY next_poll LIMIT $4"
        );
        let lease = claim_lease(t);
        let live_cut = now - t.instance_live_ms;
        let interval = t.poll_interval_ms;
        let rows: Vec<ClaimRow> = match self {
            Self::Sqlite(c, _, _) => {
                let sql = sqlite_sql(&claim_sql(pick));
                let owner = owner.to_owned();
                Self::sqlite(c, move |c| {
                    let mut st = c.prepare_cached(&sql)?;
                    let rows = st
                        .query_map(
                            rusqlite::params![owner, now, lease, limit, live_cut, interval],
                            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                        )?
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(rows)
                })
                .await?
            }
            #[cfg(feature = "postgres")]
            Self::Postgres(pg) => {
                let sql = claim_sql(&format!("{pick} FOR UPDATE SKIP LOCKED"));
                pg_claim_rows(
                    &*pg.write.lock().await,
                    &sql,
                    &[&owner, &now, &lease, &limit, &live_cut, &interval],
                )
                .await?
            }
        };
        Ok(claims(rows))
    }

    /// Records what polls found, for servers this instance still holds. A server's next
    /// poll is the earlier of the row's (the claim put it a poll interval after the
    /// claim; a registration asking for a look, or [`Store::make_due`], may have moved it
    /// sooner while the poll ran or its answer waited for its batch) and a poll interval
    /// from now: a look asked for meanwhile is not lost (it was: the record put the next
    /// poll a whole interval after the answer).
    pub async fn record_polls(
        &self,
        owner: &str,
        polled: Vec<Polled>,
        now: i64,
        t: Timers,
    ) -> Result<()> {
        let ok_sql = "UPDATE servers SET up = CASE WHEN operator IS NOT NULL OR last_registration >= $3 THEN 1 ELSE 0 END, fails = 0,
              ping_ms = $4, players = $5, status = $6, summary = $7, protocols = $8,
              last_seen = $9, polls = polls + 1,
              next_poll = CASE WHEN next_poll < $9 + CAST($10 AS BIGINT) THEN next_poll ELSE $9 + CAST($10 AS BIGINT) END,
              lease_until = $9 + CAST($10 AS BIGINT) + CAST($11 AS BIGINT),
              last_history = CASE WHEN CAST($12 AS BIGINT) = 1 THEN $9 ELSE last_history END, updated = $9
            WHERE addr = $1 AND lease_owner = $2";
        let fail_sql = "UPDATE servers SET up = 0, fails = fails + 1, polls = polls + 1,
              next_poll = CASE WHEN next_poll < $3 + CAST($4 AS BIGINT) THEN next_poll ELSE $3 + CAST($4 AS BIGINT) END,
              lease_until = $3 + CAST($4 AS BIGINT) + CAST($5 AS BIGINT), updated = $3,
              removed = CASE WHEN operator IS NULL AND COALESCE(last_seen, first_seen) < $3 - CAST($6 AS BIGINT) THEN 1 ELSE 0 END
            WHERE addr = $1 AND lease_owner = $2";
        let partial_sql = "UPDATE servers SET up = CASE WHEN operator IS NOT NULL OR last_registration >= $3 THEN 1 ELSE 0 END,
              ping_ms = $4, players = $5, status = $6, summary = $7, protocols = $8, last_seen = $9, updated = $9
            WHERE addr = $1 AND lease_owner = $2";
        let history_sql =
            "INSERT INTO history (addr, t, players) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
        let reg_cut = now - t.registration_timeout_ms;
        // in the order of their keys: instances' batches (and registrations) lock the
        // rows they share in one order, and do not deadlock each other
        let mut polled = polled;
        polled.sort_by_cached_key(|p| key(p.addr));
        let mut rows = Vec::with_capacity(polled.len());
        for p in polled {
            let mut steps = Vec::with_capacity(2);
            let addr = p.addr.to_string();
            match p.answer {
                Some(a) if p.partial => steps.push((
                    partial_sql,
                    params![
                        addr,
                        owner,
                        reg_cut,
                        a.ping_ms,
                        a.players,
                        a.status,
                        a.summary,
                        protocols_text(&p.protocols),
                        now
                    ],
                )),
                None if p.partial => continue,
                Some(a) => {
                    let players = a.players;
                    steps.push((
                        ok_sql,
                        params![
                            addr.clone(),
                            owner,
                            reg_cut,
                            a.ping_ms,
                            players,
                            a.status,
                            a.summary,
                            protocols_text(&p.protocols),
                            now,
                            t.poll_interval_ms,
                            t.lease_slack_ms,
                            i64::from(p.history),
                        ],
                    ));
                    if p.history {
                        steps.push((history_sql, params![addr, now, players]));
                    }
                }
                None => steps.push((
                    fail_sql,
                    params![
                        addr,
                        owner,
                        now,
                        t.poll_interval_ms,
                        t.lease_slack_ms,
                        t.grace_ms
                    ],
                )),
            }
            rows.push(steps);
        }
        self.write_rows(rows).await
    }

    /// Marks down the servers that stopped registering, removes those down past the
    /// grace period, deletes old history and long-removed rows, thins history by age
    /// ([`HISTORY_TIERS`]; `since`: the time of the previous call, `None` for a pass
    /// over all of it).
    pub async fn expire(&self, now: i64, t: Timers, since: Option<i64>) -> Result<()> {
        let reg_cut = now - t.registration_timeout_ms;
        let remove_cut = reg_cut - t.grace_ms;
        let history_cut = now - t.history_retention_ms;
        let purge_cut = now - 86_400_000;
        let mut steps = vec![
            ("UPDATE servers SET up = 0, updated = $1 WHERE removed = 0 AND up = 1 AND operator IS NULL AND last_registration < $2", params![now, reg_cut]),
            ("UPDATE servers SET removed = 1, updated = $1 WHERE removed = 0 AND operator IS NULL AND last_registration < $2", params![now, remove_cut]),
            ("DELETE FROM servers WHERE removed = 1 AND updated < $1", params![purge_cut]),
        ];
        // thinned first: a merged point lies at its bucket's start, maybe past the
        // retention
        steps.extend(thin_history(now, since));
        steps.push(("DELETE FROM history WHERE t < $1", params![history_cut]));
        self.write(steps).await.map(drop)
    }

    /// Adds history points (time, players) to a server's (benchmarks and tests).
    pub async fn insert_history(&self, addr: SocketAddr, points: &[(i64, i64)]) -> Result<()> {
        let sql =
            "INSERT INTO history (addr, t, players) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
        let steps = points
            .iter()
            .map(|(t, n)| (sql, params![key(addr), *t, *n]))
            .collect();
        self.write(steps).await.map(drop)
    }

    /// Up to `limit` rows changed after `since` (all rows for `i64::MIN`) whose address
    /// sorts after `after`, by address (so that a large list is read a chunk at a
    /// time).
    pub async fn changed_since(
        &self,
        since: i64,
        after: String,
        limit: i64,
    ) -> Result<Vec<ListRow>> {
        let sql = concat!(
            "SELECT ",
            list_columns!(),
            " FROM servers WHERE updated > $1 AND addr > $2 ORDER BY addr LIMIT $3"
        );
        self.changed_rows(
            sql,
            (since, after, limit),
            list_row_sqlite,
            #[cfg(feature = "postgres")]
            list_row_pg,
        )
        .await
    }

    /// The rows of `sql` (parameters: changed after, address after, at most), read on
    /// the list's connection, each made by `sqlite_row` or `pg_row`.
    async fn changed_rows<T: Send + 'static>(
        &self,
        sql: &'static str,
        (since, after, limit): (i64, String, i64),
        sqlite_row: fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
        #[cfg(feature = "postgres")] pg_row: fn(&tokio_postgres::Row) -> T,
    ) -> Result<Vec<T>> {
        match self {
            Self::Sqlite(_, _, c) => {
                Self::sqlite(c, move |c| {
                    let mut st = c.prepare_cached(&sqlite_sql(sql))?;
                    let rows = st
                        .query_map(rusqlite::params![since, after, limit], sqlite_row)?
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(rows)
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Self::Postgres(pg) => Ok(pg
                .list
                .query(sql, &[&since, &after, &limit])
                .await?
                .iter()
                .map(pg_row)
                .collect()),
        }
    }

    /// The addresses and change times of the rows changed at or after `since`, in
    /// (change time, address) order from just after `after` (a change time and an
    /// address; start with `since` and an empty address), at most `limit`: what a refresh
    /// of the list reads first, to read whole only the rows it has not seen
    /// ([`rows_of`](Self::rows_of)). Each chunk is a range of the index on (updated,
    /// addr): ordered by address, every chunk sorted all the rows changed since the mark
    /// again, and a burst of 30,000 changes cost a refresh 180,000 row reads.
    pub async fn changed_keys_since(
        &self,
        after: (i64, String),
        limit: i64,
    ) -> Result<Vec<(String, i64)>> {
        let sql = "SELECT addr, updated FROM servers WHERE (updated, addr) > ($1, $2) ORDER BY updated, addr LIMIT $3";
        self.changed_rows(
            sql,
            (after.0, after.1, limit),
            |r| Ok((r.get(0)?, r.get(1)?)),
            #[cfg(feature = "postgres")]
            |r| (r.get(0), r.get(1)),
        )
        .await
    }

    /// The rows of these servers as the list needs them (those that exist), on the
    /// list's connection: what this instance has just written, read back to be listed
    /// at once, without reading again every change of the last seconds.
    pub async fn rows_of(&self, addrs: Vec<String>) -> Result<Vec<ListRow>> {
        if addrs.is_empty() {
            return Ok(Vec::new());
        }
        match self {
            Self::Sqlite(_, _, c) => {
                Self::sqlite(c, move |c| {
                    let sql = concat!("SELECT ", list_columns!(), " FROM servers WHERE addr = ?1");
                    let mut st = c.prepare_cached(sql)?;
                    let mut out = Vec::with_capacity(addrs.len());
                    for a in &addrs {
                        let mut rows = st.query_map([a], list_row_sqlite)?;
                        if let Some(r) = rows.next() {
                            out.push(r?);
                        }
                    }
                    Ok(out)
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Self::Postgres(pg) => {
                let sql = concat!(
                    "SELECT ",
                    list_columns!(),
                    " FROM servers WHERE addr = ANY($1)"
                );
                Ok(pg
                    .list
                    .query(sql, &[&addrs])
                    .await?
                    .iter()
                    .map(list_row_pg)
                    .collect())
            }
        }
    }

    /// The full statuses (JSON) of these servers, with the change time (`updated`) of the
    /// row each was read from, in no particular order: (address, updated, status).
    pub async fn statuses(&self, addrs: Vec<String>) -> Result<Vec<(String, i64, String)>> {
        if addrs.is_empty() {
            return Ok(Vec::new());
        }
        match self {
            Self::Sqlite(_, c, _) => {
                Self::sqlite(c, move |c| {
                    let mut st = c.prepare_cached(
                        "SELECT addr, updated, status FROM servers WHERE addr = ?1 AND status IS NOT NULL",
                    )?;
                    let mut out = Vec::with_capacity(addrs.len());
                    for a in &addrs {
                        let mut rows = st.query([a])?;
                        if let Some(r) = rows.next()? {
                            out.push((r.get(0)?, r.get(1)?, r.get(2)?));
                        }
                    }
                    Ok(out)
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Self::Postgres(pg) => {
                let (client, st) = pg
                    .api_statement(
                        "SELECT addr, updated, status FROM servers WHERE addr = ANY($1) AND status IS NOT NULL",
                    )
                    .await?;
                Ok(client
                    .query(&st, &[&addrs])
                    .await?
                    .iter()
                    .map(|r| (r.get(0), r.get(1), r.get(2)))
                    .collect())
            }
        }
    }

    /// A server's player-count history, oldest first: (time, players).
    pub async fn history(&self, addr: String) -> Result<Vec<(i64, i64)>> {
        let sql = "SELECT t, players FROM history WHERE addr = $1 ORDER BY t";
        match self {
            Self::Sqlite(_, c, _) => {
                Self::sqlite(c, move |c| {
                    let mut st = c.prepare_cached(&sqlite_sql(sql))?;
                    let rows = st
                        .query_map([addr], |r| Ok((r.get(0)?, r.get(1)?)))?
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(rows)
                })
                .await
            }
            #[cfg(feature = "postgres")]
            Self::Postgres(pg) => pg.api_pairs(sql, &addr).await,
        }
    }

    /// Makes every server due for a poll now, except those whose next poll is more than a
    /// day away (the simulated ones); returns how many (for benchmarks of a poll cycle).
    pub async fn make_due(&self, now: i64) -> Result<u64> {
        let sql = "UPDATE servers SET next_poll = $1 WHERE removed = 0 AND next_poll < $2";
        let far = now + 86_400_000;
        self.write(vec![(sql, params![now, far])]).await
    }

    /// Sets a server's status and change time, as a poll would (tests).
    #[cfg(test)]
    pub(crate) async fn set_status(
        &self,
        addr: SocketAddr,
        status: &str,
        updated: i64,
    ) -> Result<u64> {
        let sql = "UPDATE servers SET status = $1, updated = $2 WHERE addr = $3";
        self.write(vec![(sql, params![status, updated, addr.to_string()])])
            .await
    }

    /// [`Store::make_due`] for a cycle shared by every live instance (benchmarks): the
    /// leases are given up too, so that each instance takes its share of them (as after
    /// a start of them all together), not only the instance that held them; with
    /// `rediscovery` (the master's `rediscover_every`), each server's next poll is a
    /// rediscovery (its poll count set to that: not 0, which is a first poll).
    pub async fn make_due_shared(&self, now: i64, rediscovery: Option<u32>) -> Result<u64> {
        let sql = "UPDATE servers SET next_poll = $1, lease_owner = NULL, lease_until = 0,
              polls = CASE WHEN CAST($3 AS BIGINT) > 0 THEN $3 ELSE polls END
            WHERE removed = 0 AND next_poll < $2";
        let far = now + 86_400_000;
        let polls = i64::from(rediscovery.unwrap_or(0));
        self.write(vec![(sql, params![now, far, polls])]).await
    }

    /// [`Store::make_due_shared`] for a cycle of the default mix (benchmarks): every
    /// server's poll count is set so that one in `rediscover_every` of the polls due is
    /// a rediscovery (the servers in the order of their addresses, every
    /// `rediscover_every`-th), the others regular polls.
    pub async fn make_due_mixed(&self, now: i64, rediscover_every: u32) -> Result<u64> {
        let sql = "UPDATE servers SET next_poll = $1, lease_owner = NULL, lease_until = 0,
              polls = CAST($3 AS BIGINT) * 1000 + (r.n - 1) % CAST($3 AS BIGINT)
            FROM (SELECT addr AS a, ROW_NUMBER() OVER (ORDER BY addr) AS n FROM servers
                  WHERE removed = 0 AND next_poll < $2) AS r
            WHERE servers.addr = r.a";
        let far = now + 86_400_000;
        let every = i64::from(rediscover_every.max(1));
        self.write(vec![(sql, params![now, far, every])]).await
    }

    /// Servers due within a day (not the simulated ones) that have not answered since
    /// `since`: what a poll cycle left out (benchmarks).
    pub async fn unanswered_since(&self, now: i64, since: i64) -> Result<i64> {
        self.read_count(
            "SELECT COUNT(*) FROM servers WHERE removed = 0 AND next_poll < $1 AND COALESCE(last_seen, 0) < $2",
            params![now + 86_400_000, since],
        )
        .await
    }

    /// Inserts `n` listed servers that nobody polls (next poll far away), for benchmarks
    /// of the list paths: 10.x.y.z addresses with varied names, games, maps and players.
    /// They speak A2S, except one in a hundred on each game master's list that the
    /// benchmark walks: number `i` with `i % 100 == 1` a Quake III server (dpmaster's
    /// `Quake3Arena`, protocol 68) and with `i % 100 == 2` a GameSpy v1 one (`ut`).
    pub async fn insert_simulated(&self, n: u32, now: i64) -> Result<()> {
        self.insert_simulated_with(n, now, 0).await
    }

    /// [`Store::insert_simulated`], each status with a rule of `rule_bytes` bytes more
    /// (big statuses, for tests of big listings).
    pub async fn insert_simulated_with(&self, n: u32, now: i64, rule_bytes: usize) -> Result<()> {
        self.insert_simulated_range(0..n, now, rule_bytes).await
    }

    /// [`Store::insert_simulated_with`] for the servers numbered `range` (a large list is
    /// written a chunk at a time).
    pub async fn insert_simulated_range(
        &self,
        range: std::ops::Range<u32>,
        now: i64,
        rule_bytes: usize,
    ) -> Result<()> {
        let mut rows = Vec::with_capacity(range.len());
        for i in range {
            let addr = SocketAddr::from(([10, (i >> 16) as u8, (i >> 8) as u8, i as u8], 27015));
            let mut status = Status::default();
            status.host_name = Some(format!("Simulated server {i}").into());
            status.game_name = ["tf", "cstrike", "bf2", "quake"]
                .get((i % 4) as usize)
                .map(|&g| g.into());
            status.map = ["de_dust2", "2fort", "strike_at_karkand"]
                .get((i % 3) as usize)
                .map(|&m| ogp_proto::MapInfo::named(m));
            status.player_count = Some(i % 33);
            status.slot_max = Some(32);
            status.password = Some(i % 10 == 0);
            if rule_bytes > 0 {
                status.rules = Some(ogp_proto::Rules(vec![(
                    "padding".into(),
                    "x".repeat(rule_bytes).into(),
                )]));
            }
            let summary = ogp_proto::result::to_json(&summary_of(&status))?;
            let status = ogp_proto::result::to_json(&status)?;
            let kind = match i % 100 {
                1 => Simulated::Quake3,
                2 => Simulated::Gamespy1,
                _ => Simulated::A2s,
            };
            rows.push((addr, i64::from(i % 33), status, summary, kind));
        }
        // many rows a statement (a million rows are a million round trips otherwise)
        const ROWS: usize = 256;
        static MANY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        let one = |n: usize| {
            let values: Vec<String> = (0..n)
                .map(|r| {
                    let p = |k: usize| format!("${}", r * 11 + k);
                    format!(
                        "({}, {}, {}, {}, 1, 0, 1.0, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})",
                        p(1),
                        p(2),
                        p(8),
                        p(8),
                        p(3),
                        p(4),
                        p(7),
                        p(5),
                        p(5),
                        p(6),
                        p(6),
                        p(5),
                        p(9),
                        p(10),
                        p(11)
                    )
                })
                .collect();
            format!(
                "INSERT INTO servers (addr, ip, registered_via, protocols, up, removed, ping_ms, players, status, summary, first_seen, last_seen, last_registration, next_poll, updated, list_protocol, game_hint, gs1_game)
                 VALUES {} ON CONFLICT (addr) DO NOTHING",
                values.join(", ")
            )
        };
        static SINGLE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        let many: &'static str = MANY.get_or_init(|| one(ROWS));
        let single: &'static str = SINGLE.get_or_init(|| one(1));
        let far = now + 86_400_000 * 365;
        let mut steps = Vec::new();
        for chunk in rows.chunks(ROWS) {
            let params = |r: &(SocketAddr, i64, String, String, Simulated)| {
                let (protocol, list_protocol, game_hint, gs1_game) = match r.4 {
                    Simulated::A2s => ("a2s", None, None, None),
                    Simulated::Quake3 => ("quake3", Some(68i64), Some("Quake3Arena"), None),
                    Simulated::Gamespy1 => ("gamespy1", None, None, Some("ut")),
                };
                params![
                    r.0.to_string(),
                    r.0.ip().to_string(),
                    r.1,
                    r.2.clone(),
                    now,
                    far,
                    r.3.clone(),
                    protocol,
                    list_protocol,
                    game_hint.map(str::to_owned),
                    gs1_game.map(str::to_owned)
                ]
            };
            if chunk.len() == ROWS {
                steps.push((many, chunk.iter().flat_map(params).collect()));
            } else {
                steps.extend(chunk.iter().map(|r| (single, params(r))));
            }
        }
        self.write(steps).await.map(drop)
    }
}

/// What a simulated server speaks ([`Store::insert_simulated`]).
#[derive(Debug, Clone, Copy)]
enum Simulated {
    A2s,
    Quake3,
    Gamespy1,
}

#[cfg(test)]
mod sqlite_tests {
    use super::*;

    /// A point a minute for eight days: thinned to the tiers' bound (at most 134 points
    /// with points every 5 minutes; here 60 + 60 + 42 + 20 with one a minute), the
    /// largest count kept through the merges, nothing past the retention.
    #[tokio::test]
    async fn history_is_thinned_by_age_and_capped() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let now = 1_800_000_000_000 + 123_456;
        let got = thinned_history(&store, now, 60_000, 8 * 86_400_000)
            .await
            .unwrap();
        // the 8th point of the week, with 1,007 players, is older than 7 days: gone
        let (total, recent, five_min, hourly, six_hourly, max) =
            (got[0], got[1], got[2], got[3], got[4], got[5]);
        assert_eq!(recent, 60, "{got:?}");
        assert!((60..=61).contains(&five_min), "{got:?}");
        assert!((42..=43).contains(&hourly), "{got:?}");
        assert!((20..=21).contains(&six_hourly), "{got:?}");
        assert!(total <= 60 + 61 + 43 + 21, "{got:?}");
        assert_eq!(max, 49, "{got:?}");
        // thinning again changes nothing
        let again = thinned_history(&store, now, 1_000_000_000, 1)
            .await
            .unwrap();
        assert_eq!(again[0], total);
    }

    /// A refresh after the start reads the changed rows' keys, then whole only the rows
    /// it has not seen: the keys are those `changed_since` finds, in (change time,
    /// address) order across chunks that end inside a run of equal change times, and
    /// `rows_of` reads the same rows back (and nothing for an address with no row).
    #[tokio::test]
    async fn changed_keys_and_rows_of_agree_with_changed_since() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let now = 1_800_000_000_000;
        store.insert_simulated_range(0..300, now, 0).await.unwrap();
        store
            .insert_simulated_range(300..400, now + 5, 0)
            .await
            .unwrap();
        let mut whole = store
            .changed_since(now - 1, String::new(), 1000)
            .await
            .unwrap();
        assert_eq!(whole.len(), 400);
        whole.sort_by(|a, b| (a.updated, &a.addr).cmp(&(b.updated, &b.addr)));
        // in chunks, like the refresh
        let mut keys: Vec<(String, i64)> = Vec::new();
        let mut after = (now - 1, String::new());
        loop {
            let chunk = store.changed_keys_since(after.clone(), 128).await.unwrap();
            let n = chunk.len();
            if let Some((last, updated)) = chunk.last() {
                after = (*updated, last.clone());
            }
            keys.extend(chunk);
            if n < 128 {
                break;
            }
        }
        let want: Vec<(String, i64)> = whole.iter().map(|r| (r.addr.clone(), r.updated)).collect();
        assert_eq!(keys, want);
        // from a change time: the rows changed then and later
        let later = store
            .changed_keys_since((now + 5, String::new()), 1000)
            .await
            .unwrap();
        assert_eq!(later.len(), 100);
        assert!(store
            .changed_keys_since((now + 6, String::new()), 10)
            .await
            .unwrap()
            .is_empty());
        let mut addrs: Vec<String> = keys.into_iter().map(|(a, _)| a).collect();
        addrs.push("192.0.2.1:1".into());
        let mut back = store.rows_of(addrs).await.unwrap();
        back.sort_by(|a, b| (a.updated, &a.addr).cmp(&(b.updated, &b.addr)));
        assert_eq!(back, whole);
        assert!(store.rows_of(Vec::new()).await.unwrap().is_empty());
    }

    /// A server verified by OGP at `addr`, with an empty status.
    fn ogp_server(addr: SocketAddr) -> Verified {
        Verified {
            addr,
            via: Protocol::Ogp,
            game_hint: None,
            listing: None,
            gs1_game: None,
            ping_ms: 1.0,
            status: Status::default(),
        }
    }

    /// A database with one OGP server listed (verified at `t0`), its address and `t0`.
    async fn one_listed() -> (Store, SocketAddr, i64) {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let (addr, t0) = (SocketAddr::from(([127, 0, 0, 1], 27015)), 1_800_000_000_000);
        store
            .upsert_verified(&[ogp_server(addr)], t0)
            .await
            .unwrap();
        (store, addr, t0)
    }

    /// What `who` claims at `now` (at most 10): addresses and polls so far.
    async fn claimed(store: &Store, who: &str, now: i64, t: Timers) -> Vec<(SocketAddr, i64)> {
        store
            .claim_due(who, now, t, 10)
            .await
            .unwrap()
            .iter()
            .map(|c| (c.addr, c.polls))
            .collect()
    }

    /// Leases between two instances `a` and `b` on one database (2 s polls, 2 s slack,
    /// 2 s liveness): a live holder keeps its server past its due time, through a poll
    /// that runs longer than a poll interval and the slack, and a dead one loses it as
    /// soon as it is due, before its lease would have run out.
    #[tokio::test]
    async fn a_live_instance_keeps_its_leases_and_a_dead_ones_are_void() {
        let t = lease_timers(2_000, 2_000, 2_000);
        let (store, addr, t0) = one_listed().await;
        let claim = |who: &'static str, now: i64| {
            let store = store.clone();
            async move {
                claimed(&store, who, now, t)
                    .await
                    .into_iter()
                    .map(|(a, _)| a)
                    .collect::<Vec<_>>()
            }
        };
        let beat = |who: &'static str, now: i64| {
            let store = store.clone();
            async move { store.heartbeat(who, now).await.unwrap() }
        };
        beat("a", t0).await;
        beat("b", t0).await;
        assert_eq!(claim("a", t0).await, [addr]);
        // a's poll runs 9 s (a discovery poll's timeouts), longer than the interval and
        // the slack: b, both live, does not take it meanwhile
        for now in (t0 + 2_000..t0 + 9_000).step_by(1_000) {
            beat("a", now).await;
            beat("b", now).await;
            assert_eq!(claim("b", now).await, [], "at +{}", now - t0);
        }
        let polled = Polled {
            addr,
            answer: None,
            protocols: Vec::new(),
            history: false,
            partial: false,
        };
        store
            .record_polls("a", vec![polled], t0 + 9_000, t)
            .await
            .unwrap();
        assert_eq!(store.live(t0 + 9_000, t).await.unwrap(), 2);
        // due at +11 s; a noted itself last at +10 s: live, it keeps it
        beat("a", t0 + 10_000).await;
        beat("b", t0 + 11_000).await;
        assert_eq!(claim("b", t0 + 11_000).await, []);
        // a dies: more than 2 s after its last note its lease is void, 950 ms before
        // it would have run out (+13 s)
        beat("b", t0 + 12_000).await;
        assert_eq!(claim("b", t0 + 12_050).await, [addr]);
        assert_eq!(store.live(t0 + 12_050, t).await.unwrap(), 1);
        // and a dead instance takes nothing from a live one (b's claim is due again at
        // +14,050, its poll still running)
        beat("b", t0 + 14_000).await;
        assert_eq!(claim("a", t0 + 14_100).await, []);
    }

    /// A look asked for while a server's poll runs (an OGP uplink, which asks for a poll
    /// within 5 s) or a benchmark's `make_due` is kept by the poll's record, where the
    /// record put the next poll a whole interval after the answer; `make_due_shared`
    /// gives up the leases (another live instance takes the server) and makes the next
    /// poll a rediscovery.
    #[tokio::test]
    async fn a_look_asked_for_during_a_poll_survives_its_record() {
        let t = lease_timers(60_000, 30_000, 5_000);
        let (store, addr, t0) = one_listed().await;
        let polled = || Polled {
            addr,
            answer: Some(PolledAnswer::new(1.0, &Status::default()).unwrap()),
            protocols: vec![Protocol::Ogp],
            history: false,
            partial: false,
        };
        let claim = |who: &'static str, now: i64| {
            let store = store.clone();
            async move { claimed(&store, who, now, t).await }
        };
        store.heartbeat("a", t0).await.unwrap();
        assert_eq!(claim("a", t0).await, [(addr, 0)]);
        // an uplink while the poll runs: a look within 5 s; the answer recorded after
        store
            .note_registrations(&[(addr, true)], t0 + 100)
            .await
            .unwrap();
        store
            .record_polls("a", vec![polled()], t0 + 300, t)
            .await
            .unwrap();
        assert_eq!(claim("a", t0 + 5_099).await, []);
        assert_eq!(claim("a", t0 + 5_100).await, [(addr, 1)]);
        // made due while the poll runs (the benchmark's make_due): due at once after
        store.make_due(t0 + 5_200).await.unwrap();
        store
            .record_polls("a", vec![polled()], t0 + 5_400, t)
            .await
            .unwrap();
        assert_eq!(claim("a", t0 + 5_500).await, [(addr, 2)]);
        // a plain poll: due a poll interval after its claim
        store
            .record_polls("a", vec![polled()], t0 + 5_600, t)
            .await
            .unwrap();
        assert_eq!(claim("a", t0 + 65_499).await, []);
        // a live holder keeps it from b until make_due_shared gives up the lease
        store.heartbeat("a", t0 + 65_000).await.unwrap();
        store.heartbeat("b", t0 + 65_000).await.unwrap();
        assert_eq!(claim("a", t0 + 65_500).await, [(addr, 3)]);
        store
            .record_polls("a", vec![polled()], t0 + 65_600, t)
            .await
            .unwrap();
        store.make_due(t0 + 66_000).await.unwrap();
        assert_eq!(claim("b", t0 + 66_000).await, []);
        assert_eq!(
            store.make_due_shared(t0 + 66_000, Some(10)).await.unwrap(),
            1
        );
        assert_eq!(claim("b", t0 + 66_000).await, [(addr, 10)]);
    }

    /// A cycle of the default mix: one in `rediscover_every` of the servers due has
    /// the poll count of a rediscovery (none of a first poll); the others, and the
    /// servers not due within a day (simulated), are left as they are.
    #[tokio::test]
    async fn make_due_mixed_makes_one_poll_in_n_a_rediscovery() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let t0 = 1_800_000_000_000;
        let servers: Vec<Verified> = (0..25u16)
            .map(|k| ogp_server(SocketAddr::from(([127, 0, 0, 1], 20_000 + k))))
            .collect();
        store.upsert_verified(&servers, t0).await.unwrap();
        store.insert_simulated(7, t0).await.unwrap();
        let t = lease_timers(60_000, 30_000, 5_000);
        store.heartbeat("a", t0 + 1_000).await.unwrap();
        assert_eq!(store.make_due_mixed(t0 + 1_000, 10).await.unwrap(), 25);
        let claimed = store.claim_due("a", t0 + 1_000, t, 100).await.unwrap();
        assert_eq!(claimed.len(), 25);
        let every = 10;
        let rediscoveries = claimed.iter().filter(|c| c.polls % every == 0).count();
        assert_eq!(rediscoveries, 3, "1 in 10 of 25 (the 1st, 11th, 21st)");
        assert!(
            claimed.iter().all(|c| c.polls >= 10_000),
            "none a first poll"
        );
    }

    /// A Quake III server's listing is stored at verification and read back with the
    /// list's rows; another server has none.
    #[tokio::test]
    async fn a_quake3_listing_round_trips() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let v = |addr: SocketAddr, listing: Option<Listing>| Verified {
            addr,
            via: Protocol::Quake3,
            game_hint: listing.as_ref().and_then(|l| l.game.clone()),
            gs1_game: listing.as_ref().map(|_| "ut".to_owned()),
            listing,
            ping_ms: 1.0,
            status: Status::default(),
        };
        let l = Listing {
            game: Some("Xonotic".into()),
            protocol: Some(3),
            gametype: None,
        };
        let q3 = SocketAddr::from(([127, 0, 0, 1], 26000));
        let other = SocketAddr::from(([127, 0, 0, 2], 27015));
        store
            .upsert_verified(&[v(q3, Some(l.clone())), v(other, None)], 1_000)
            .await
            .unwrap();
        let rows = store
            .changed_since(i64::MIN, String::new(), 10)
            .await
            .unwrap();
        let of = |a: SocketAddr| {
            rows.iter()
                .find(|r| r.addr == a.to_string())
                .and_then(ListRow::listing)
        };
        assert_eq!(of(q3), Some(l));
        assert_eq!(of(other), None);
        // the GameSpy v1 game (migration 5) round-trips the same way
        let gs1 = |a: SocketAddr| {
            rows.iter()
                .find(|r| r.addr == a.to_string())
                .and_then(|r| r.gs1_game.clone())
        };
        assert_eq!(gs1(q3).as_deref(), Some("ut"));
        assert_eq!(gs1(other), None);
    }
}

/// The timers of the lease tests (SQLite's here, PostgreSQL's in
/// `tests/store_postgres.rs`): polls every `poll_interval_ms`, the lease's slack and how
/// long an instance counts as live as given; registrations time out after 10 minutes,
/// polls take 10 s at most.
#[doc(hidden)]
pub fn lease_timers(poll_interval_ms: i64, lease_slack_ms: i64, instance_live_ms: i64) -> Timers {
    Timers {
        poll_interval_ms,
        registration_timeout_ms: 600_000,
        grace_ms: 900_000,
        history_retention_ms: 86_400_000,
        lease_slack_ms,
        poll_max_ms: 10_000,
        instance_live_ms,
    }
}

/// History of `addr` as [`Store::expire`] leaves it, given a point every `step` ms over
/// the last `span` ms at `now`: (points, points in each tier and beyond, the most
/// players kept). Shared by the SQLite test here and the PostgreSQL one.
#[doc(hidden)]
pub async fn thinned_history(store: &Store, now: i64, step: i64, span: i64) -> Result<Vec<usize>> {
    let addr = SocketAddr::from(([127, 9, 9, 9], 27015));
    let t0 = now - span;
    let points: Vec<(i64, i64)> = (0..span / step)
        .map(|i| (t0 + i * step, (i % 50) + if i == 7 { 1000 } else { 0 }))
        .collect();
    store.insert_history(addr, &points).await?;
    store
        .expire(
            now,
            Timers {
                poll_interval_ms: 60_000,
                registration_timeout_ms: 600_000,
                grace_ms: 900_000,
                history_retention_ms: 7 * 86_400_000,
                lease_slack_ms: 30_000,
                poll_max_ms: 10_000,
                instance_live_ms: INSTANCE_LIVE_MS,
            },
            None,
        )
        .await?;
    let kept = store.history(key(addr)).await?;
    let in_range = |lo: i64, hi: i64| {
        kept.iter()
            .filter(|(t, _)| *t >= now - hi && *t < now - lo)
            .count()
    };
    let max = kept.iter().map(|(_, n)| *n).max().unwrap_or(0);
    Ok(vec![
        kept.len(),
        in_range(0, HISTORY_TIERS[0].0),
        in_range(HISTORY_TIERS[0].0, HISTORY_TIERS[1].0),
        in_range(HISTORY_TIERS[1].0, HISTORY_TIERS[2].0),
        in_range(HISTORY_TIERS[2].0, i64::MAX / 2),
        usize::try_from(max).unwrap_or(0),
    ])
}

#[cfg(all(test, feature = "postgres"))]
mod tests {
    use super::*;

    #[test]
    fn pgpassword_fills_in_only_a_missing_password() {
        let env = Some(std::ffi::OsString::from("from-env"));
        let c = pg_config("postgres://ogp@db.example/ogp", env.clone()).unwrap();
        assert_eq!(c.get_password(), Some(&b"from-env"[..]));
        let c = pg_config("postgres://ogp:in-url@db.example/ogp", env).unwrap();
        assert_eq!(c.get_password(), Some(&b"in-url"[..]));
        let c = pg_config("postgres://ogp@db.example/ogp", None).unwrap();
        assert_eq!(c.get_password(), None);
        let e = pg_config("postgres://ogp@db.example:notaport/ogp", None).unwrap_err();
        assert!(format!("{e:#}").starts_with("the PostgreSQL URL"), "{e:#}");
    }
}

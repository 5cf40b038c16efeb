//! Valve's Master Server Query Protocol, both sides, sans-IO.
//!
//! Request (client → master): `0x31`, a region byte, the seed `IP:port` as a
//! NUL-terminated string (`0.0.0.0:0` for the first page, afterwards the last address of
//! the previous page), then the filter as a NUL-terminated string (`\key\value` pairs,
//! empty for all). Reply (master → client): `FF FF FF FF 66 0A`, then 6-byte entries:
//! the IPv4 address and the port, both in network order (big-endian, unlike A2S). The
//! list ends with the entry `0.0.0.0:0`. Valve's master sent at most 231 entries a
//! datagram (1,392 bytes); so do we.
//!
//! [`Filter`] parses the filter string (bounded: [`MAX_FILTER_BYTES`],
//! [`MAX_CONDITIONS`]) and matches a server's status against it, reading the status as
//! our A2S responder presents it ([`status_to_info`]), so a filter selects exactly
//! what an A2S client of the server would see. A filter is compiled once per request:
//! its `name_match` and `version_match` patterns become [`Glob`]s, which match in time
//! linear in the text and the pattern. [`page_after`] cuts a sorted list into pages by
//! seed. [`ListBudget`] decides, before any filter or list work, whether a request is
//! answered at all: a page is up to 116 times the size of its request, so the bytes of
//! answers are capped per source address and for all sources together. Nothing here
//! panics; decoding reads through the crate's bounded reader.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Instant;

use memchr::memmem;

pub use super::budget::{ListAdmission, ListBudget, ListBudgetConfig};
use crate::a2s::mapping::status_to_info;
use crate::error::DecodeError;
use crate::reader::Reader;
use crate::Status;

/// The request's first byte (ASCII `1`).
pub const REQUEST_TYPE: u8 = 0x31;

/// The first six bytes of every reply.
pub const REPLY_HEADER: [u8; 6] = [0xff, 0xff, 0xff, 0xff, 0x66, 0x0a];

/// Most entries in one reply datagram (6 + 231 × 6 = 1,392 bytes).
pub const MAX_ENTRIES_PER_PAGE: usize = 231;

/// Bytes of the largest reply datagram: the header and [`MAX_ENTRIES_PER_PAGE`] entries.
pub const MAX_PAGE_BYTES: usize = REPLY_HEADER.len() + 6 * MAX_ENTRIES_PER_PAGE;

/// Bytes of the shortest request [`ListRequest::decode`] takes: `31`, the region,
/// `0.0.0.0:0` and its NUL, no filter.
pub const MIN_REQUEST_BYTES: usize = 12;

/// What one request can make us send, at most: [`MAX_PAGE_BYTES`] for
/// [`MIN_REQUEST_BYTES`] (1,392 / 12 = 116).
pub const MAX_AMPLIFICATION: usize = MAX_PAGE_BYTES / MIN_REQUEST_BYTES;

/// Longest filter string accepted.
pub const MAX_FILTER_BYTES: usize = 1024;

/// Most conditions in one filter (each key, `nand` and `nor` counts one).
pub const MAX_CONDITIONS: usize = 64;

/// Most `name_match` and `version_match` conditions in one filter, together: each
/// reads a server's whole name or version.
pub const MAX_GLOBS: usize = 4;

/// The seed of the first page, and the entry that ends the list.
pub const END: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0);

/// Region codes.
pub mod region {
    /// US east coast.
    pub const US_EAST: u8 = 0x00;
    /// US west coast.
    pub const US_WEST: u8 = 0x01;
    /// South America.
    pub const SOUTH_AMERICA: u8 = 0x02;
    /// Europe.
    pub const EUROPE: u8 = 0x03;
    /// Asia.
    pub const ASIA: u8 = 0x04;
    /// Australia.
    pub const AUSTRALIA: u8 = 0x05;
    /// Middle East.
    pub const MIDDLE_EAST: u8 = 0x06;
    /// Africa.
    pub const AFRICA: u8 = 0x07;
    /// The rest of the world, or all.
    pub const ALL: u8 = 0xff;
}

/// A list request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListRequest {
    /// The region byte ([`region`]).
    pub region: u8,
    /// The last address of the previous page, or [`END`] for the first page.
    pub seed: SocketAddrV4,
    /// The filter string, `\key\value…` (empty: every server).
    pub filter: String,
}

impl ListRequest {
    /// The request for the first page.
    pub fn first(region: u8, filter: &str) -> Self {
        Self {
            region,
            seed: END,
            filter: filter.to_string(),
        }
    }

    /// The request for the page after `last`.
    #[must_use]
    pub fn after(&self, last: SocketAddrV4) -> Self {
        Self {
            seed: last,
            ..self.clone()
        }
    }

    /// Appends the request datagram. NUL bytes in the filter are left out.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(REQUEST_TYPE);
        out.push(self.region);
        out.extend_from_slice(self.seed.to_string().as_bytes());
        out.push(0);
        out.extend(self.filter.bytes().filter(|&b| b != 0));
        out.push(0);
    }

    /// Decodes a request datagram. The seed must be `IPv4:port`; the filter at most
    /// [`MAX_FILTER_BYTES`] of UTF-8 (a missing final NUL is accepted, as some clients
    /// leave it out).
    pub fn decode(datagram: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(datagram);
        if r.u8("MessageType")? != REQUEST_TYPE {
            return Err(DecodeError::invalid(
                0,
                "MessageType",
                "not a list request (0x31)",
            ));
        }
        let region = r.u8("Region")?;
        let at = r.offset();
        let seed = std::str::from_utf8(r.cstr("Seed")?)
            .ok()
            .and_then(|s| s.parse::<SocketAddrV4>().ok())
            .ok_or(DecodeError::invalid(at, "Seed", "not IPv4:port"))?;
        let at = r.offset();
        let raw = if r.is_empty() {
            &[][..]
        } else {
            match r.cstr("Filter") {
                Ok(f) => f,
                Err(_) => r.take_rest(),
            }
        };
        if raw.len() > MAX_FILTER_BYTES {
            return Err(DecodeError::invalid(at, "Filter", "longer than 1024 bytes"));
        }
        let filter = std::str::from_utf8(raw)
            .map_err(|_| DecodeError::invalid(at, "Filter", "not UTF-8"))?
            .to_string();
        Ok(Self {
            region,
            seed,
            filter,
        })
    }
}

/// A decoded reply page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPage {
    /// The servers, in order (without the terminator).
    pub servers: Vec<SocketAddrV4>,
    /// Whether the page ends with `0.0.0.0:0`: the list is complete.
    pub end: bool,
}

/// Appends a reply datagram with `servers` (at most [`MAX_ENTRIES_PER_PAGE`] of them are
/// written; the rest are left for the next page) and, when `end`, the terminator.
/// Returns how many servers were written.
pub fn encode_page(servers: &[SocketAddrV4], end: bool, out: &mut Vec<u8>) -> usize {
    out.extend_from_slice(&REPLY_HEADER);
    let n = servers.len().min(MAX_ENTRIES_PER_PAGE);
    for a in servers.iter().take(n) {
        write_entry(*a, out);
    }
    if end && n == servers.len() {
        write_entry(END, out);
    }
    n
}

/// Valve's answers are charged as the largest page ([`MAX_PAGE_BYTES`]) each, before
/// the filter and the list are looked at.
impl ListBudget {
    /// Whether to answer a Valve list request from `from` at `now`: the budgets are
    /// charged [`MAX_PAGE_BYTES`] (see [`ListBudget::charge`]). Call it before parsing
    /// the filter or looking at the list: a refused request costs no more than this.
    pub fn admit(&self, now: Instant, from: IpAddr) -> ListAdmission {
        self.charge(now, from, MAX_PAGE_BYTES)
    }

    /// How many entries the pass that makes an admitted request's page may look at
    /// (entries of the list, and seeks into it beyond the first): the
    /// [`LOOKS_PER_PAGE`] its page paid for, and as many more as
    /// [`ListBudget::pass_allowance`] allows at [`BYTES_PER_LOOK`] each. A pass stops
    /// there, its page cut; [`ListBudget::pay_looks`] charges what it looked at.
    pub fn looks_allowed(&self, now: Instant, from: IpAddr) -> usize {
        LOOKS_PER_PAGE.saturating_add(self.pass_allowance(now, from) / BYTES_PER_LOOK)
    }

    /// Charges a pass that looked at `looked` entries: those past [`LOOKS_PER_PAGE`],
    /// [`BYTES_PER_LOOK`] each ([`ListBudget::owe`]).
    pub fn pay_looks(&self, now: Instant, from: IpAddr, looked: usize) {
        let extra = looked.saturating_sub(LOOKS_PER_PAGE);
        self.owe(now, from, extra.saturating_mul(BYTES_PER_LOOK));
    }
}

/// What one entry looked at by a list request's pass costs, in bytes of the list
/// budgets: the size of an entry on the page, so that a page's charge
/// ([`MAX_PAGE_BYTES`]) pays for the [`LOOKS_PER_PAGE`] entries of an unfiltered page
/// (or one filtered by game only, through the master's index), and all sources
/// together get at most `list_total_bytes_per_second / 6` entries looked at a second.
pub const BYTES_PER_LOOK: usize = 6;

/// Entries a pass looks at for the price of its page: 232, the 231 a full page holds
/// and the one that shows it is not the last.
pub const LOOKS_PER_PAGE: usize = MAX_PAGE_BYTES / BYTES_PER_LOOK;

fn write_entry(a: SocketAddrV4, out: &mut Vec<u8>) {
    out.extend_from_slice(&a.ip().octets());
    out.extend_from_slice(&a.port().to_be_bytes());
}

/// Decodes a reply datagram. Entries after the terminator are ignored; bytes that do not
/// make a whole entry are an error.
pub fn decode_page(datagram: &[u8]) -> Result<ListPage, DecodeError> {
    let mut r = Reader::new(datagram);
    if r.array::<6>("Header")? != REPLY_HEADER {
        return Err(DecodeError::invalid(
            0,
            "Header",
            "not a list reply (FF FF FF FF 66 0A)",
        ));
    }
    let mut servers = Vec::with_capacity(r.remaining() / 6);
    while !r.is_empty() {
        let ip = Ipv4Addr::from(r.array::<4>("EntryAddress")?);
        let port = r.u16_be("EntryPort")?;
        let a = SocketAddrV4::new(ip, port);
        if a == END {
            return Ok(ListPage { servers, end: true });
        }
        servers.push(a);
    }
    Ok(ListPage {
        servers,
        end: false,
    })
}

/// The page after `seed` in `sorted` (ascending, no duplicates): up to `max` addresses
/// greater than `seed` ([`END`] starts at the beginning), and whether they reach the end
/// of the list.
pub fn page_after(
    sorted: &[SocketAddrV4],
    seed: SocketAddrV4,
    max: usize,
) -> (&[SocketAddrV4], bool) {
    let start = if seed == END {
        0
    } else {
        sorted.partition_point(|a| sortable(*a) <= sortable(seed))
    };
    let rest = sorted.get(start..).unwrap_or_default();
    let n = rest.len().min(max);
    (rest.get(..n).unwrap_or_default(), n == rest.len())
}

/// The order pages follow: by address, then port (the order of the bytes on the wire).
pub fn sortable(a: SocketAddrV4) -> (u32, u16) {
    (u32::from(*a.ip()), a.port())
}

/// Why a filter string was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FilterError {
    /// Longer than [`MAX_FILTER_BYTES`].
    TooLong,
    /// More than [`MAX_CONDITIONS`] conditions.
    TooManyConditions,
    /// More than [`MAX_GLOBS`] `name_match` and `version_match` conditions.
    TooManyGlobs,
    /// A key without a value, or text before the first `\`.
    Malformed,
    /// `nand` or `nor` with a count that is not a number, or more than follow.
    BadGroup,
}

impl std::fmt::Display for FilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::TooLong => "filter longer than 1024 bytes",
            Self::TooManyConditions => "filter with more than 64 conditions",
            Self::TooManyGlobs => "filter with more than 4 name_match/version_match conditions",
            Self::Malformed => "filter is not \\key\\value pairs",
            Self::BadGroup => "nand/nor count is not a number of following conditions",
        })
    }
}

impl std::error::Error for FilterError {}

/// One condition of a filter.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Condition {
    /// `\type\d`: dedicated servers.
    Dedicated,
    /// `\secure\1`: servers with Valve Anti-Cheat.
    Secure,
    /// `\gamedir\X`: the game directory (A2S folder), case-insensitive.
    GameDir(String),
    /// `\map\X`: the map, case-insensitive.
    Map(String),
    /// `\linux\1`: servers on Linux.
    Linux,
    /// `\password\0`: servers without a password.
    NoPassword,
    /// `\empty\1`: servers that are not empty.
    NotEmpty,
    /// `\full\1`: servers that are not full.
    NotFull,
    /// `\proxy\1`: spectator proxies.
    Proxy,
    /// `\appid\N`: servers of this app.
    AppId(u32),
    /// `\napp\N`: servers not of this app.
    NotAppId(u32),
    /// `\noplayers\1`: empty servers.
    NoPlayers,
    /// `\white\1`: whitelisted servers (every server we list is verified: all match).
    White,
    /// `\gametype\a,b`: servers with all these tags (A2S keywords).
    GameType(Vec<String>),
    /// `\gamedata\a,b`: all these tags (we have no hidden tags: the keywords).
    GameData(Vec<String>),
    /// `\gamedataor\a,b`: any of these tags.
    GameDataOr(Vec<String>),
    /// `\name_match\glob`: the server name, `*` matching anything, case-insensitive.
    NameMatch(Glob),
    /// `\version_match\glob`: the version, as `name_match`.
    VersionMatch(Glob),
    /// `\gameaddr\IP` or `IP:port`: servers at this address.
    GameAddr(String),
    /// `\nand\N`: not all of the next N conditions.
    Nand(Vec<Condition>),
    /// `\nor\N`: none of the next N conditions.
    Nor(Vec<Condition>),
    /// A key we do not know: it matches every server.
    Unknown(String, String),
}

/// A parsed filter: every condition must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// The conditions.
    pub conditions: Vec<Condition>,
    /// `\collapse_addr_hash\1`: one server per IP address (applied to the list).
    pub collapse_addr_hash: bool,
}

fn tags(v: &str) -> Vec<String> {
    v.split(',')
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

impl Filter {
    /// Parses `\key\value…` and compiles its patterns. Bounded: at most
    /// [`MAX_FILTER_BYTES`], [`MAX_CONDITIONS`] and [`MAX_GLOBS`].
    pub fn parse(s: &str) -> Result<Self, FilterError> {
        if s.len() > MAX_FILTER_BYTES {
            return Err(FilterError::TooLong);
        }
        if s.is_empty() {
            return Ok(Self::default());
        }
        let mut parts = s.split('\\');
        if parts.next() != Some("") {
            return Err(FilterError::Malformed);
        }
        let mut flat = Vec::new();
        let mut collapse = false;
        let mut globs = 0;
        while let Some(key) = parts.next() {
            if key.is_empty() && parts.clone().next().is_none() {
                break; // a trailing backslash
            }
            let value = parts.next().ok_or(FilterError::Malformed)?;
            if flat.len() >= MAX_CONDITIONS {
                return Err(FilterError::TooManyConditions);
            }
            let key = key.to_ascii_lowercase();
            if matches!(key.as_str(), "name_match" | "version_match") {
                globs += 1;
                if globs > MAX_GLOBS {
                    return Err(FilterError::TooManyGlobs);
                }
            }
            if key == "collapse_addr_hash" {
                collapse = value == "1";
                continue;
            }
            flat.push((key, value.to_string()));
        }
        let mut it = flat.into_iter();
        let mut conditions = Vec::new();
        while let Some(c) = next_condition(&mut it)? {
            conditions.push(c);
        }
        Ok(Self {
            conditions,
            collapse_addr_hash: collapse,
        })
    }

    /// Whether the server at `addr` with `status` matches every condition.
    pub fn matches(&self, addr: SocketAddr, status: &Status) -> bool {
        if self.conditions.is_empty() {
            return true;
        }
        let mut name = String::new();
        lowercase_name(status.host_name.as_deref().unwrap_or_default(), &mut name);
        self.matches_view(addr, &View::of(status), &|| &name)
    }

    /// Whether the server at `addr` seen through its [`View`] (made once, matched many
    /// times) matches every condition. `name` gives its name as [`lowercase_name`]
    /// makes it, asked for by `name_match` conditions only (a master keeps the names
    /// apart from the views, once).
    pub fn matches_view<'n>(
        &self,
        addr: SocketAddr,
        view: &View,
        name: &dyn Fn() -> &'n str,
    ) -> bool {
        let seen = Seen { addr, view, name };
        self.conditions.iter().all(|c| seen.holds(c))
    }

    /// What every server the filter matches has, by the keys a master can index: the
    /// values of its `\appid\` conditions (the low 16 bits, as compared) and of its
    /// `\gamedir\` conditions (in ASCII lower case), not counting those inside `nand`
    /// or `nor`. Both empty: the filter names no game.
    pub fn required_games(&self) -> (Vec<u16>, Vec<&str>) {
        let mut apps = Vec::new();
        let mut dirs = Vec::new();
        for c in &self.conditions {
            match c {
                Condition::AppId(a) => apps.push((*a & 0xffff) as u16),
                Condition::GameDir(d) => dirs.push(d.as_str()),
                _ => {}
            }
        }
        (apps, dirs)
    }
}

/// Appends a server's name to `out` as `name_match` patterns are matched against it:
/// in lower case (Unicode's).
pub fn lowercase_name(name: &str, out: &mut String) {
    if name.is_ascii() {
        out.extend(name.chars().map(|c| c.to_ascii_lowercase()));
    } else {
        out.push_str(&name.to_lowercase());
    }
}

/// The next condition, taking the conditions a `nand` or `nor` groups.
fn next_condition(
    it: &mut impl Iterator<Item = (String, String)>,
) -> Result<Option<Condition>, FilterError> {
    let Some((key, value)) = it.next() else {
        return Ok(None);
    };
    let one = |b: &str| value == b;
    Ok(Some(match key.as_str() {
        "nand" | "nor" => {
            let n: usize = value.trim().parse().map_err(|_| FilterError::BadGroup)?;
            let mut group = Vec::new();
            for _ in 0..n.min(MAX_CONDITIONS) {
                group.push(next_condition(it)?.ok_or(FilterError::BadGroup)?);
            }
            if key == "nand" {
                Condition::Nand(group)
            } else {
                Condition::Nor(group)
            }
        }
        "type" if one("d") => Condition::Dedicated,
        "secure" if one("1") => Condition::Secure,
        "gamedir" => Condition::GameDir(value.to_ascii_lowercase()),
        "map" => Condition::Map(value.to_ascii_lowercase()),
        "linux" if one("1") => Condition::Linux,
        "password" if one("0") => Condition::NoPassword,
        "empty" if one("1") => Condition::NotEmpty,
        "full" if one("1") => Condition::NotFull,
        "proxy" if one("1") => Condition::Proxy,
        "appid" if value.parse::<u32>().is_ok() => Condition::AppId(value.parse().unwrap_or(0)),
        "napp" if value.parse::<u32>().is_ok() => Condition::NotAppId(value.parse().unwrap_or(0)),
        "noplayers" if one("1") => Condition::NoPlayers,
        "white" if one("1") => Condition::White,
        "gametype" => Condition::GameType(tags(&value)),
        "gamedata" => Condition::GameData(tags(&value)),
        "gamedataor" => Condition::GameDataOr(tags(&value)),
        "name_match" => Condition::NameMatch(Glob::new(&value.to_lowercase())),
        "version_match" => Condition::VersionMatch(Glob::new(&value.to_lowercase())),
        "gameaddr" => Condition::GameAddr(value),
        _ => Condition::Unknown(key, value),
    }))
}

/// A server as a filter sees it: the fields of the A2S view of its status that the
/// conditions look at, but its address and its name, which a master holds anyway (see
/// [`Filter::matches_view`]). A master keeps one per listed server (a million of them
/// at most), so that matching a filter does no conversion; kept compact (strings up to
/// 24 bytes inline, no heap).
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    server_type: u8,
    environment: u8,
    vac: bool,
    password: bool,
    players: u8,
    max_players: u8,
    app_id: u16,
    folder: compact_str::CompactString,
    map: compact_str::CompactString,
    tags: Box<[String]>,
    /// The version in lower case, as patterns are.
    version: compact_str::CompactString,
}

/// A [`View`] with the address and the name it is matched with.
struct Seen<'a, 'n> {
    addr: SocketAddr,
    view: &'a View,
    name: &'a dyn Fn() -> &'n str,
}

impl View {
    /// The view of a server with `status`.
    pub fn of(status: &Status) -> Self {
        let info = status_to_info(status);
        let tags = info
            .extra
            .as_ref()
            .and_then(|e| e.keywords.as_deref())
            .map(tags)
            .unwrap_or_default()
            .into_boxed_slice();
        let version = info.version.to_lowercase();
        Self {
            server_type: info.server_type,
            environment: info.environment,
            vac: info.vac,
            password: info.password,
            players: info.players,
            max_players: info.max_players,
            app_id: info.app_id,
            folder: compact_str::CompactString::from(&*info.folder),
            map: compact_str::CompactString::from(&*info.map),
            tags,
            version,
        }
    }

    /// The app id, as `\appid\` compares it (the low 16 bits of the server's).
    pub fn app_id(&self) -> u16 {
        self.app_id
    }

    /// The game directory, as `\gamedir\` compares it (ignoring ASCII case).
    pub fn folder(&self) -> &str {
        &self.folder
    }

    /// The server's map (empty when it has none).
    pub fn map(&self) -> &str {
        &self.map
    }
}

impl Seen<'_, '_> {
    fn holds(&self, c: &Condition) -> bool {
        let i = self.view;
        let has = |t: &String| i.tags.contains(t);
        match c {
            Condition::Dedicated => i.server_type == b'd',
            Condition::Secure => i.vac,
            Condition::GameDir(d) => i.folder.eq_ignore_ascii_case(d),
            Condition::Map(m) => i.map.eq_ignore_ascii_case(m),
            Condition::Linux => i.environment == b'l',
            Condition::NoPassword => !i.password,
            Condition::NotEmpty => i.players > 0,
            Condition::NotFull => i.players < i.max_players,
            Condition::Proxy => i.server_type == b'p',
            Condition::AppId(a) => u32::from(i.app_id) == *a & 0xffff,
            Condition::NotAppId(a) => u32::from(i.app_id) != *a & 0xffff,
            Condition::NoPlayers => i.players == 0,
            Condition::White | Condition::Unknown(..) => true,
            Condition::GameType(t) | Condition::GameData(t) => t.iter().all(has),
            Condition::GameDataOr(t) => t.iter().any(has),
            Condition::NameMatch(g) => g.matches((self.name)()),
            Condition::VersionMatch(g) => g.matches(&i.version),
            Condition::GameAddr(a) => match a.parse::<SocketAddr>() {
                Ok(sa) => sa == self.addr,
                Err(_) => a.parse::<std::net::IpAddr>() == Ok(self.addr.ip()),
            },
            Condition::Nand(g) => !g.iter().all(|c| self.holds(c)),
            Condition::Nor(g) => !g.iter().any(|c| self.holds(c)),
        }
    }
}

/// A compiled pattern where `*` matches any run of characters (and nothing else is
/// special). Matching is linear: the text between the fixed head and tail is searched
/// once, left to right, for each piece between stars in turn (the leftmost place of a
/// piece is always as good as any later one), with a precompiled substring searcher.
/// Each byte of the text is looked at a bounded number of times per piece, never once
/// per possible star position.
#[derive(Clone)]
pub struct Glob {
    pattern: String,
    /// The text before the first `*`.
    head: String,
    /// The text after the last `*`; `None` without a `*` (the text must equal `head`).
    tail: Option<String>,
    /// The non-empty pieces between stars, in order.
    middle: Vec<memmem::Finder<'static>>,
}

impl Glob {
    /// Compiles `pattern` (compared byte for byte: lower-case both sides first for a
    /// case-insensitive match).
    pub fn new(pattern: &str) -> Self {
        let mut parts = pattern.split('*');
        let head = parts.next().unwrap_or_default().to_owned();
        let mut rest: Vec<&str> = parts.collect();
        let tail = rest.pop().map(str::to_owned);
        let middle = rest
            .into_iter()
            .filter(|p| !p.is_empty())
            .map(|p| memmem::Finder::new(p.as_bytes()).into_owned())
            .collect();
        Self {
            pattern: pattern.to_owned(),
            head,
            tail,
            middle,
        }
    }

    /// The pattern as given.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether `text` matches the whole pattern.
    pub fn matches(&self, text: &str) -> bool {
        let Some(tail) = &self.tail else {
            return text == self.head;
        };
        let t = text.as_bytes();
        let fixed = self.head.len().saturating_add(tail.len());
        if t.len() < fixed || !t.starts_with(self.head.as_bytes()) || !t.ends_with(tail.as_bytes())
        {
            return false;
        }
        let mut rest = t
            .get(self.head.len()..t.len().saturating_sub(tail.len()))
            .unwrap_or_default();
        for piece in &self.middle {
            match piece.find(rest) {
                Some(at) => {
                    rest = rest
                        .get(at.saturating_add(piece.needle().len())..)
                        .unwrap_or_default();
                }
                None => return false,
            }
        }
        true
    }
}

impl std::fmt::Debug for Glob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Glob").field(&self.pattern).finish()
    }
}

impl PartialEq for Glob {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
    }
}

impl Eq for Glob {}

/// Whether `text` matches `pattern`, where `*` matches any run of characters: a
/// [`Glob`] compiled for one use (linear in the lengths of both).
pub fn glob(pattern: &str, text: &str) -> bool {
    Glob::new(pattern).matches(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(s: &str) -> SocketAddrV4 {
        s.parse().unwrap()
    }

    #[test]
    fn each_source_is_sent_at_most_its_byte_budget() {
        let t0 = Instant::now();
        // 2,784 bytes a second (two pages): bursts of 11,136, eight pages.
        let b = ListBudget::new(ListBudgetConfig::new(2_784, u32::MAX), [3; 16], t0);
        let (victim, other): (IpAddr, IpAddr) =
            ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
        let admitted = (0..20)
            .filter(|_| b.admit(t0, victim) == ListAdmission::Answer)
            .count();
        assert_eq!(admitted, 8, "four seconds' worth of whole pages");
        assert_eq!(b.admit(t0, victim), ListAdmission::SourceOverBudget);
        assert_eq!(b.admit(t0, other), ListAdmission::Answer, "its own budget");
        let later = t0 + std::time::Duration::from_millis(500);
        assert_eq!(b.admit(later, victim), ListAdmission::Answer, "refilled");
        assert_eq!(b.admit(later, victim), ListAdmission::SourceOverBudget);
    }

    /// Issue 29, item 5: 2,000 victims each got 1,392 bytes per 12-byte request, 2.78 MB
    /// for 24 KB, since the budget was per source only. Now all sources together get at
    /// most the total, and each at most 116 times what it sent.
    #[test]
    fn many_spoofed_sources_together_get_at_most_the_total_budget() {
        let t0 = Instant::now();
        let config = ListBudgetConfig::default();
        let b = ListBudget::new(config, [9; 16], t0);
        let victims: Vec<IpAddr> = (0..10_000u32)
            .map(|i| IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i)))
            .collect();
        let mut sent_to = vec![0usize; victims.len()];
        let mut received_from = vec![0usize; victims.len()];
        let mut refused_total = 0;
        // 10 simulated seconds; every victim's address sends a 12-byte request each 10 ms
        let ticks = 1_000u32;
        for tick in 0..ticks {
            let now = t0 + std::time::Duration::from_millis(u64::from(tick) * 10);
            for (i, v) in victims
                .iter()
                .enumerate()
                .skip(tick as usize % 10)
                .step_by(10)
            {
                received_from[i] += MIN_REQUEST_BYTES;
                match b.admit(now, *v) {
                    ListAdmission::Answer => sent_to[i] += MAX_PAGE_BYTES,
                    ListAdmission::TotalOverBudget => refused_total += 1,
                    ListAdmission::SourceOverBudget => {}
                }
            }
        }
        let out: usize = sent_to.iter().sum();
        let into: usize = received_from.iter().sum();
        let seconds = 10.0;
        let cap = f64::from(config.total) * (4.0 + seconds);
        assert!(
            out as f64 <= cap,
            "all sources together: {out} bytes out, cap {cap}"
        );
        assert!(refused_total > 0, "the total was what held");
        assert!(
            out > 0 && (out as f64) > cap * 0.9,
            "and it was used: {out}"
        );
        for (o, i) in sent_to.iter().zip(&received_from) {
            assert!(
                *o <= i * MAX_AMPLIFICATION,
                "one source: {o} bytes out for {i} in"
            );
        }
        assert_eq!(MAX_AMPLIFICATION, 116);
        eprintln!(
            "10,000 sources, 10 s: {into} bytes in, {out} out ({:.2}x overall), cap {cap}",
            out as f64 / into as f64
        );
    }

    /// Issue 41: a request's pass over the list is paid for in the same budgets, so the
    /// entries looked at are bounded per source and for all sources together. Sources
    /// that always use their whole allowance (a filter matching nothing at an endless
    /// list), 10 simulated seconds: all together look at no more than the total pays
    /// for, `(burst + rate × seconds) / 6`, and each source at no more than its own
    /// `(two bursts + rate × seconds) / 6`; an unfiltered page's 232 looks cost nothing
    /// beyond its page.
    #[test]
    fn the_entries_passes_look_at_are_paid_from_the_budgets() {
        assert_eq!(LOOKS_PER_PAGE, MAX_ENTRIES_PER_PAGE + 1);
        let t0 = Instant::now();
        let config = ListBudgetConfig::default();
        let b = ListBudget::new(config, [5; 16], t0);
        let plain: IpAddr = "198.51.100.1".parse().unwrap();
        for _ in 0..100 {
            assert_eq!(b.admit(t0, plain), ListAdmission::Answer);
            b.pay_looks(t0, plain, LOOKS_PER_PAGE);
        }
        // 100 pages, then the burst's 88 whole ones left (256 KiB / 1,392 = 188)
        let more = (0..200)
            .take_while(|_| b.admit(t0, plain) == ListAdmission::Answer)
            .count();
        assert_eq!(more, 88, "the looks of unfiltered pages cost nothing more");
        for sources in [1u32, 3_000] {
            let b = ListBudget::new(config, [6; 16], t0);
            let mut looked = vec![0usize; sources as usize];
            // a request from each source every 100 ms
            for tick in 0..100u32 {
                let now = t0 + std::time::Duration::from_millis(u64::from(tick) * 100);
                for (i, n) in looked.iter_mut().enumerate() {
                    let from = IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i as u32));
                    if b.admit(now, from) != ListAdmission::Answer {
                        continue;
                    }
                    let may = b.looks_allowed(now, from);
                    assert!(may >= LOOKS_PER_PAGE);
                    b.pay_looks(now, from, may);
                    *n += may;
                }
            }
            let seconds = 10.0;
            let all: usize = looked.iter().sum();
            let cap = (f64::from(config.total) * (4.0 + seconds)) / BYTES_PER_LOOK as f64;
            assert!(
                all as f64 <= cap * 1.001,
                "{sources}: {all} looks, cap {cap}"
            );
            let one = (f64::from(config.per_source) * (8.0 + seconds)) / BYTES_PER_LOOK as f64;
            let most = *looked.iter().max().unwrap();
            assert!(
                most as f64 <= one * 1.001,
                "{sources}: {most} looks, cap {one}"
            );
            assert!(
                (all as f64) > cap.min(one * f64::from(sources)) * 0.8,
                "{sources}: the budgets were used: {all} of {cap} / {one}"
            );
            eprintln!("{sources} sources, 10 s: {all} looks (cap {cap:.0}; one source {one:.0})");
        }
    }

    #[test]
    fn what_qstat_sends_decodes() {
        // `quakestat -stma2s` sends exactly this (observed with qstat 2.17).
        let d = b"\x31\xff0.0.0.0:0\x00\x00";
        let r = ListRequest::decode(d).unwrap();
        assert_eq!(r, ListRequest::first(region::ALL, ""));
        let mut out = Vec::new();
        r.encode(&mut out);
        assert_eq!(out, d);
        let r = ListRequest::first(region::EUROPE, "\\gamedir\\tf").after(v4("10.0.0.1:27015"));
        let mut out = Vec::new();
        r.encode(&mut out);
        assert_eq!(ListRequest::decode(&out).unwrap(), r);
        for bad in [
            &b""[..],
            b"\x32\xff0.0.0.0:0\x00\x00",
            b"\x31\xffnot an address\x00\x00",
            b"\x31",
        ] {
            assert!(ListRequest::decode(bad).is_err(), "{bad:?}");
        }
        // no final NUL after the filter: accepted
        assert_eq!(
            ListRequest::decode(b"\x31\x030.0.0.0:0\x00\\map\\x")
                .unwrap()
                .filter,
            "\\map\\x"
        );
    }

    #[test]
    fn the_shortest_request_is_12_bytes() {
        let shortest = b"\x31\xff0.0.0.0:0\x00";
        assert_eq!(shortest.len(), MIN_REQUEST_BYTES);
        assert!(ListRequest::decode(shortest).is_ok());
        for n in 0..shortest.len() {
            assert!(ListRequest::decode(&shortest[..n]).is_err(), "{n} bytes");
        }
        // no shorter seed is an IPv4 address and a port
        for seed in ["0.0.0.0:", "0.0.0:0", "0.0.0.0", ":0"] {
            let mut d = vec![REQUEST_TYPE, region::ALL];
            d.extend_from_slice(seed.as_bytes());
            d.push(0);
            assert!(ListRequest::decode(&d).is_err(), "{seed}");
        }
        assert_eq!(MAX_PAGE_BYTES, 1_392);
        assert_eq!(MAX_AMPLIFICATION, 116);
    }

    #[test]
    fn pages_round_trip_with_big_endian_ports() {
        let servers: Vec<SocketAddrV4> = (0..300u16)
            .map(|i| SocketAddrV4::new(Ipv4Addr::new(10, 0, (i >> 8) as u8, i as u8), 27015 + i))
            .collect();
        let mut d = Vec::new();
        assert_eq!(encode_page(&servers, true, &mut d), MAX_ENTRIES_PER_PAGE);
        assert_eq!(d.len(), 6 + 231 * 6);
        assert_eq!(&d[6..12], &[10, 0, 0, 0, 0x69, 0x87], "27015 big-endian");
        let p = decode_page(&d).unwrap();
        assert_eq!(
            (p.servers.len(), p.end),
            (231, false),
            "not the end: more follow"
        );
        let mut d = Vec::new();
        assert_eq!(encode_page(&servers[231..], true, &mut d), 69);
        let p = decode_page(&d).unwrap();
        assert_eq!((p.servers.as_slice(), p.end), (&servers[231..], true));
        assert!(decode_page(&d[..d.len() - 1]).is_err(), "a cut entry");
        assert!(decode_page(b"\xff\xff\xff\xffI").is_err());
    }

    #[test]
    fn paging_by_seed_visits_every_server_once() {
        let mut all: Vec<SocketAddrV4> = (0..500u32)
            .map(|i| SocketAddrV4::new(Ipv4Addr::from(0x0a00_0000 + i * 7 % 500), 27015))
            .collect();
        all.sort_by_key(|a| sortable(*a));
        all.dedup();
        let mut seen = Vec::new();
        let mut seed = END;
        for _ in 0..10 {
            let (page, end) = page_after(&all, seed, MAX_ENTRIES_PER_PAGE);
            seen.extend_from_slice(page);
            if end {
                break;
            }
            seed = *page.last().unwrap();
        }
        assert_eq!(seen, all);
        // a seed that is not in the list: the servers after it
        let (page, _) = page_after(
            &all,
            SocketAddrV4::new(Ipv4Addr::from(0x0a00_0000 + 10), 1),
            3,
        );
        assert_eq!(
            page[0],
            SocketAddrV4::new(Ipv4Addr::from(0x0a00_0000 + 10), 27015)
        );
    }

    #[test]
    fn filters_select_what_an_a2s_client_would_see() {
        let status = Status::from_json(
            r#"{"host_name":"My TF2 Server #1","player_count":3,"slot_max":24,
                "map":{"name":"ctf_2fort"},"password":false,"server_type":"dedicated","os":"linux",
                "a2s":{"folder":"tf","app_id":440,"keywords":"payload, alltalk","vac":true}}"#,
        )
        .unwrap();
        let addr: SocketAddr = "10.1.2.3:27015".parse().unwrap();
        let yes = [
            "",
            "\\gamedir\\tf",
            "\\gamedir\\TF\\map\\ctf_2fort",
            "\\appid\\440\\secure\\1\\dedicated\\1",
            "\\type\\d\\linux\\1\\password\\0\\empty\\1\\full\\1",
            "\\gametype\\payload,alltalk",
            "\\gamedataor\\nope,alltalk",
            "\\name_match\\my tf2*",
            "\\nand\\2\\map\\x\\gamedir\\tf",
            "\\nor\\2\\map\\x\\gamedir\\y",
            "\\gameaddr\\10.1.2.3",
            "\\gameaddr\\10.1.2.3:27015",
            "\\white\\1\\unknown_key\\v",
            "\\collapse_addr_hash\\1",
        ];
        for f in yes {
            assert!(Filter::parse(f).unwrap().matches(addr, &status), "{f}");
        }
        let no = [
            "\\gamedir\\cstrike",
            "\\napp\\440",
            "\\noplayers\\1",
            "\\proxy\\1",
            "\\gametype\\payload,hardcore",
            "\\name_match\\other*",
            "\\nand\\1\\gamedir\\tf",
            "\\nor\\1\\gamedir\\tf",
            "\\gameaddr\\10.1.2.4",
        ];
        for f in no {
            assert!(!Filter::parse(f).unwrap().matches(addr, &status), "{f}");
        }
        assert!(
            Filter::parse("\\collapse_addr_hash\\1")
                .unwrap()
                .collapse_addr_hash
        );
    }

    #[test]
    fn bad_filters_are_refused_and_bounded() {
        assert_eq!(Filter::parse("gamedir\\tf"), Err(FilterError::Malformed));
        assert_eq!(Filter::parse("\\gamedir"), Err(FilterError::Malformed));
        assert_eq!(Filter::parse("\\nand\\x"), Err(FilterError::BadGroup));
        assert_eq!(
            Filter::parse("\\nor\\3\\map\\a"),
            Err(FilterError::BadGroup)
        );
        assert_eq!(
            Filter::parse(&"\\map\\a".repeat(65)),
            Err(FilterError::TooManyConditions)
        );
        assert_eq!(Filter::parse(&"x".repeat(1025)), Err(FilterError::TooLong));
        // deep nesting stays bounded by the condition count
        let deep = "\\nand\\1".repeat(60) + "\\map\\a";
        assert!(Filter::parse(&deep).is_ok());
    }

    #[test]
    fn globs() {
        for (p, t, m) in [
            ("*", "", true),
            ("", "", true),
            ("", "a", false),
            ("a*c", "abbbc", true),
            ("a*c", "abbb", false),
            ("*b*", "abc", true),
            ("abc", "abc", true),
            ("ab", "abc", false),
            ("**x", "yyx", true),
            ("a*a", "a", false),
            ("a*b*b", "abb", true),
            ("a*b*b", "ab", false),
            ("*é*ß", "xéyß", true),
        ] {
            assert_eq!(glob(p, t), m, "{p} {t}");
        }
        // no blow-up on hostile patterns
        assert!(!glob(&"*a".repeat(100), &"a".repeat(99)));
    }

    /// Whether `t` matches `p` by dynamic programming over every pair of positions: slow,
    /// obviously right.
    fn reference(p: &[u8], t: &[u8]) -> bool {
        let mut m = vec![vec![false; t.len() + 1]; p.len() + 1];
        m[p.len()][t.len()] = true;
        for i in (0..p.len()).rev() {
            for j in (0..=t.len()).rev() {
                m[i][j] = if p[i] == b'*' {
                    m[i + 1][j] || (j < t.len() && m[i][j + 1])
                } else {
                    j < t.len() && p[i] == t[j] && m[i + 1][j + 1]
                };
            }
        }
        m[0][0]
    }

    #[test]
    fn globs_agree_with_a_reference_matcher() {
        // every pattern and text of a small alphabet, up to small lengths
        let alphabet = [b'a', b'b', b'*'];
        let words = |max: usize, with_star: bool| {
            let mut all = vec![Vec::new()];
            let mut last = vec![Vec::new()];
            for _ in 0..max {
                let mut next = Vec::new();
                for w in &last {
                    for &c in &alphabet[..if with_star { 3 } else { 2 }] {
                        let mut w: Vec<u8> = w.clone();
                        w.push(c);
                        next.push(w);
                    }
                }
                all.extend(next.iter().cloned());
                last = next;
            }
            all
        };
        let patterns = words(6, true);
        let texts = words(7, false);
        let mut checked = 0;
        for p in &patterns {
            let g = Glob::new(std::str::from_utf8(p).unwrap());
            for t in &texts {
                let want = reference(p, t);
                assert_eq!(
                    g.matches(std::str::from_utf8(t).unwrap()),
                    want,
                    "{:?} {:?}",
                    String::from_utf8_lossy(p),
                    String::from_utf8_lossy(t)
                );
                checked += 1;
            }
        }
        assert!(checked > 200_000, "{checked}");
    }

    /// Issue 29, item 2: `\name_match\*a…(1,000 times)…b` against 65 servers with
    /// 1,900-character names took 99 ms per request (release build) with the
    /// backtracking matcher, whose work grows with the product of the lengths. Compiled
    /// once per request and matched linearly, 40 such requests (parse and match against
    /// all 65) take a small fraction of a second even in a debug build; the old matcher
    /// took seconds for each one there.
    #[test]
    fn the_glob_flood_costs_linear_work() {
        let status = Status::from_json(&format!(
            r#"{{"host_name":"{}","a2s":{{"folder":"tf","app_id":440}}}}"#,
            "a".repeat(1_900)
        ))
        .unwrap();
        let views: Vec<(SocketAddr, View)> = (0..65u16)
            .map(|i| {
                (
                    SocketAddr::from(([10, 0, 0, 1], 27000 + i)),
                    View::of(&status),
                )
            })
            .collect();
        let mut name = String::new();
        lowercase_name(status.host_name.as_deref().unwrap_or_default(), &mut name);
        let name = &|| name.as_str();
        let filter = format!("\\name_match\\*{}b", "a".repeat(1_000));
        assert!(filter.len() <= MAX_FILTER_BYTES);
        let t = Instant::now();
        let mut matched = 0;
        for _ in 0..40 {
            let f = Filter::parse(&filter).unwrap();
            matched += views
                .iter()
                .filter(|(a, v)| f.matches_view(*a, v, name))
                .count();
        }
        let took = t.elapsed();
        assert_eq!(matched, 0, "no name ends in b");
        assert!(
            took < std::time::Duration::from_secs(2),
            "40 requests took {took:?}"
        );
        eprintln!("40 glob-flood requests against 65 servers: {took:?}");
        // the same with a match: it still finds it
        let f = Filter::parse(&format!("\\name_match\\*{}", "a".repeat(1_000))).unwrap();
        assert!(views.iter().all(|(a, v)| f.matches_view(*a, v, name)));
    }

    #[test]
    fn a_filter_has_at_most_four_patterns() {
        let four = "\\name_match\\a*".repeat(2) + &"\\version_match\\1*".repeat(2);
        assert!(Filter::parse(&four).is_ok());
        assert_eq!(
            Filter::parse(&(four + "\\name_match\\b*")),
            Err(FilterError::TooManyGlobs)
        );
        assert_eq!(
            Filter::parse("\\nand\\1\\name_match\\x")
                .unwrap()
                .conditions,
            vec![Condition::Nand(vec![Condition::NameMatch(Glob::new("x"))])]
        );
    }
}

//! The server lists published as JSON documents over HTTP(S), sans-IO: one document in,
//! the addresses to query out. [`decode`] reads each [`WebListKind`]:
//!
//! * [`WebListKind::Ddnet`]: DDNet's `servers.json` ([`super::ddnet`]).
//! * [`WebListKind::Minetest`]: Minetest's (Luanti's) list, `https://servers.minetest.net/list`:
//!   `{"total": {…}, "total_max": {…}, "list": [{"address": HOST, "ip": IP, "port": N,
//!   "name": …, "gameid": …, "version": …, "clients": N, "clients_max": N, …}, …]}`
//!   (the fields a server announces, minetest/serverlist's `server.py`). A server is
//!   queried at `ip` (the address it announced from) and `port`; without `ip`, at
//!   `address` when that is an IP address (a host name is skipped: we list addresses).
//! * [`WebListKind::OpenMp`]: open.mp's, `https://api.open.mp/servers`: an array of
//!   `{"ip": "IP:PORT", "hn": NAME, "pc": PLAYERS, "pm": MAX, "gm": GAMEMODE, "la":
//!   LANGUAGE, "pa": PASSWORDED, "vn": VERSION, "omp": …, "pr": …}`, listed as `samp`.
//! * [`WebListKind::Steam`]: Steam's Web API `IGameServersService/GetServerList/v1`
//!   (`https://api.steampowered.com/…?key=KEY&filter=…&limit=N`): `{"response":
//!   {"servers": [{"addr": "IP:QUERYPORT", "gameport": N, "steamid": …, "name": …,
//!   "appid": N, "gamedir": …, "map": …, "players": N, "max_players": N, "bots": N, …}]}}`
//!   (the fields of `CGameServers_GetServerList_Response`), listed as `a2s` at `addr`.
//!
//! Bounded like DDNet's list: a document over [`MAX_BYTES`] is refused before it is
//! parsed, more than [`MAX_SERVERS`] entries is an error (never a silent cut), JSON
//! nested deeper than serde_json's recursion limit (128) is an error, and of each entry
//! only the fields above are kept (the rest is skipped without being stored). Counts
//! that are no count (negative, fractional, strings, over `u32`) are left out of the
//! entry, not trusted; an address that is no server ([`invalid_reason`]) is skipped,
//! with the reason, as is a server listed twice.

use std::collections::HashSet;
use std::fmt;
use std::net::{IpAddr, SocketAddr};

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::ddnet;
use super::list_client::invalid_reason;
use crate::bounded;
use crate::model::Text;
use crate::protocol::Protocol;

/// Most servers of one document (Steam's API gives at most 20,000; Minetest's list has
/// about 300 servers, open.mp's about 1,500).
pub const MAX_SERVERS: usize = 20_000;
/// Largest document (DDNet's is about 4 MB, Steam's 20,000 servers about 10 MB).
pub const MAX_BYTES: usize = ddnet::MAX_BYTES;

/// Which list a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WebListKind {
    /// DDNet's `servers.json`.
    Ddnet,
    /// Minetest's (Luanti's) server list.
    Minetest,
    /// open.mp's server list.
    OpenMp,
    /// Steam's Web API `GetServerList`.
    Steam,
}

impl WebListKind {
    /// The list's name, as errors say it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ddnet => "DDNet's server list",
            Self::Minetest => "Minetest's server list",
            Self::OpenMp => "open.mp's server list",
            Self::Steam => "Steam's GetServerList answer",
        }
    }
}

/// One server of a list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebListed {
    /// The protocol to query it with (`None` only for [`Default`]).
    pub protocol: Option<Protocol>,
    /// The address to query.
    pub addr: Option<SocketAddr>,
    /// Its name, as listed.
    pub name: Option<Text>,
    /// Its map, as listed.
    pub map: Option<Text>,
    /// Its game (Minetest's `gameid`, Steam's `gamedir`, open.mp's game mode).
    pub game: Option<Text>,
    /// Its version, as listed.
    pub version: Option<Text>,
    /// Players, as listed.
    pub players: Option<u32>,
    /// Most players, as listed.
    pub max_players: Option<u32>,
    /// Whether it takes a password, as listed.
    pub password: Option<bool>,
    /// Its location, as listed (DDNet's `eu:de`).
    pub location: Option<Text>,
}

impl WebListed {
    /// The entry as `ogp list --json` prints it: `addr`, `protocols` and the fields the
    /// list gave.
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        let addr = self.addr.map(|a| a.to_string());
        m.insert("addr".into(), addr.into());
        let proto = self.protocol.map(|p| vec![p.name()]).unwrap_or_default();
        m.insert("protocols".into(), proto.into());
        let texts = [
            ("name", &self.name),
            ("map", &self.map),
            ("game", &self.game),
            ("version", &self.version),
            ("location", &self.location),
        ];
        for (k, v) in texts {
            if let Some(v) = v {
                m.insert(k.into(), v.as_str().into());
            }
        }
        for (k, v) in [("players", self.players), ("max_players", self.max_players)] {
            if let Some(v) = v {
                m.insert(k.into(), v.into());
            }
        }
        if let Some(p) = self.password {
            m.insert("password".into(), p.into());
        }
        Value::Object(m)
    }
}

/// A decoded document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebList {
    /// Every server to query, in the document's order, each once.
    pub servers: Vec<WebListed>,
    /// Entries skipped (as listed), and why.
    pub skipped: Vec<(Text, &'static str)>,
}

/// Why a document was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WebListError {
    /// Larger than [`MAX_BYTES`].
    TooLarge {
        /// The list.
        kind: WebListKind,
        /// Its size.
        bytes: usize,
    },
    /// Not the document's shape, over a cap or nested too deep (the message says which).
    Malformed {
        /// The list.
        kind: WebListKind,
        /// What serde_json said.
        message: String,
    },
}

impl fmt::Display for WebListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { kind, bytes } => write!(
                f,
                "{} of {bytes} bytes: over our limit of {MAX_BYTES}",
                kind.name()
            ),
            Self::Malformed { kind, message } => write!(f, "not {}: {message}", kind.name()),
        }
    }
}

impl std::error::Error for WebListError {}

/// A count as listed: a whole number within `u32`, or nothing.
fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    Ok(v.and_then(|v| v.as_u64())
        .and_then(|n| u32::try_from(n).ok()))
}

/// A text as listed: a string, or nothing (numbers and the like are left out).
fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Text>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    Ok(match v {
        Some(Value::String(s)) => Some(Text::from(s)),
        _ => None,
    })
}

/// A flag as listed: `true`/`false` (or 0/1), or nothing.
fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    Ok(match v {
        Some(Value::Bool(b)) => Some(b),
        Some(Value::Number(n)) => n.as_u64().map(|n| n != 0),
        _ => None,
    })
}

#[derive(Deserialize)]
struct MtDoc {
    #[serde(deserialize_with = "bounded::list::<_, _, MAX_SERVERS>")]
    list: Vec<MtServer>,
}

#[derive(Deserialize)]
struct MtServer {
    #[serde(default, deserialize_with = "text")]
    address: Option<Text>,
    #[serde(default, deserialize_with = "text")]
    ip: Option<Text>,
    #[serde(default, deserialize_with = "count")]
    port: Option<u32>,
    #[serde(default, deserialize_with = "text")]
    name: Option<Text>,
    #[serde(default, deserialize_with = "text")]
    gameid: Option<Text>,
    #[serde(default, deserialize_with = "text")]
    version: Option<Text>,
    #[serde(default, deserialize_with = "count")]
    clients: Option<u32>,
    #[serde(default, deserialize_with = "count")]
    clients_max: Option<u32>,
    #[serde(default, deserialize_with = "flag")]
    password: Option<bool>,
}

#[derive(Deserialize)]
struct OmpServer {
    #[serde(default, deserialize_with = "text")]
    ip: Option<Text>,
    #[serde(default, deserialize_with = "text")]
    hn: Option<Text>,
    #[serde(default, deserialize_with = "count")]
    pc: Option<u32>,
    #[serde(default, deserialize_with = "count")]
    pm: Option<u32>,
    #[serde(default, deserialize_with = "text")]
    gm: Option<Text>,
    #[serde(default, deserialize_with = "text")]
    vn: Option<Text>,
    #[serde(default, deserialize_with = "flag")]
    pa: Option<bool>,
}

#[derive(Deserialize)]
struct OmpDoc(#[serde(deserialize_with = "bounded::list::<_, _, MAX_SERVERS>")] Vec<OmpServer>);

#[derive(Deserialize)]
struct SteamDoc {
    response: SteamResponse,
}

#[derive(Deserialize)]
struct SteamResponse {
    // an empty answer is `{"response":{}}`
    #[serde(default, deserialize_with = "bounded::list::<_, _, MAX_SERVERS>")]
    servers: Vec<SteamServer>,
}

#[derive(Deserialize)]
struct SteamServer {
    #[serde(default, deserialize_with = "text")]
    addr: Option<Text>,
    #[serde(default, deserialize_with = "text")]
    name: Option<Text>,
    #[serde(default, deserialize_with = "text")]
    map: Option<Text>,
    #[serde(default, deserialize_with = "text")]
    gamedir: Option<Text>,
    #[serde(default, deserialize_with = "text")]
    version: Option<Text>,
    #[serde(default, deserialize_with = "count")]
    players: Option<u32>,
    #[serde(default, deserialize_with = "count")]
    max_players: Option<u32>,
}

/// What [`decode`] builds a list with: each entry once, the skipped with their reasons.
#[derive(Default)]
struct Builder {
    list: WebList,
    seen: HashSet<(Protocol, SocketAddr)>,
}

impl Builder {
    /// Adds `entry` at `addr` (`IP:PORT` as listed, or the reason it has none).
    fn add(&mut self, shown: Text, addr: Result<SocketAddr, &'static str>, entry: WebListed) {
        let addr = addr.and_then(|a| invalid_reason(a).map_or(Ok(a), Err));
        let protocol = entry.protocol;
        match (addr, protocol) {
            (Ok(a), Some(p)) if self.seen.insert((p, a)) => self.list.servers.push(WebListed {
                addr: Some(a),
                ..entry
            }),
            (Ok(_), _) => self.list.skipped.push((shown, "listed twice")),
            (Err(why), _) => self.list.skipped.push((shown, why)),
        }
    }
}

/// `IP:PORT` as listed.
fn socket_addr(s: Option<&str>) -> Result<SocketAddr, &'static str> {
    s.ok_or("no address")?.parse().map_err(|_| "not IP:PORT")
}

/// Minetest's `ip` (else `address`) and `port`.
fn minetest_addr(s: &MtServer) -> Result<SocketAddr, &'static str> {
    let host = s.ip.as_ref().or(s.address.as_ref()).ok_or("no address")?;
    let ip: IpAddr = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .map_err(|_| "a host name, not an address")?;
    let port = s.port.ok_or("no port")?;
    let port = u16::try_from(port).map_err(|_| "a port over 65535")?;
    Ok(SocketAddr::new(ip, port))
}

/// Reads one document of `kind`.
pub fn decode(kind: WebListKind, body: &[u8]) -> Result<WebList, WebListError> {
    if body.len() > MAX_BYTES {
        return Err(WebListError::TooLarge {
            kind,
            bytes: body.len(),
        });
    }
    let malformed = |e: serde_json::Error| WebListError::Malformed {
        kind,
        message: e.to_string(),
    };
    let mut b = Builder::default();
    match kind {
        WebListKind::Ddnet => {
            let l = ddnet::decode_list(body).map_err(|e| WebListError::Malformed {
                kind,
                message: match e {
                    ddnet::DdnetListError::Malformed(m) => m,
                    other => other.to_string(),
                },
            })?;
            b.list.skipped = l.skipped;
            b.list.servers = l
                .servers
                .into_iter()
                .map(|s| WebListed {
                    protocol: Some(s.protocol),
                    addr: Some(s.addr),
                    name: s.name,
                    map: s.map,
                    location: s.location,
                    ..WebListed::default()
                })
                .collect();
        }
        WebListKind::Minetest => {
            let doc: MtDoc = serde_json::from_slice(body).map_err(malformed)?;
            for s in doc.list {
                let shown = s.ip.clone().or(s.address.clone()).unwrap_or_default();
                let addr = minetest_addr(&s);
                b.add(
                    shown,
                    addr,
                    WebListed {
                        protocol: Some(Protocol::Minetest),
                        name: s.name,
                        game: s.gameid,
                        version: s.version,
                        players: s.clients,
                        max_players: s.clients_max,
                        password: s.password,
                        ..WebListed::default()
                    },
                );
            }
        }
        WebListKind::OpenMp => {
            let OmpDoc(servers) = serde_json::from_slice(body).map_err(malformed)?;
            for s in servers {
                let addr = socket_addr(s.ip.as_deref());
                b.add(
                    s.ip.unwrap_or_default(),
                    addr,
                    WebListed {
                        protocol: Some(Protocol::Samp),
                        name: s.hn,
                        game: s.gm,
                        version: s.vn,
                        players: s.pc,
                        max_players: s.pm,
                        password: s.pa,
                        ..WebListed::default()
                    },
                );
            }
        }
        WebListKind::Steam => {
            let doc: SteamDoc = serde_json::from_slice(body).map_err(malformed)?;
            for s in doc.response.servers {
                let addr = socket_addr(s.addr.as_deref());
                b.add(
                    s.addr.unwrap_or_default(),
                    addr,
                    WebListed {
                        protocol: Some(Protocol::A2s),
                        name: s.name,
                        map: s.map,
                        game: s.gamedir,
                        version: s.version,
                        players: s.players,
                        max_players: s.max_players,
                        ..WebListed::default()
                    },
                );
            }
        }
    }
    Ok(b.list)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Constructed from the documented formats (module docs), with addresses of the
    // documentation ranges.
    const MINETEST: &str = r#"{"total":{"servers":3,"clients":5},"total_max":{"servers":9,"clients":50},
      "list":[
        {"address":"mt.example.org","ip":"203.0.113.7","port":30000,"name":"Example MT","description":"d",
         "gameid":"minetest","version":"5.8.0","clients":5,"clients_max":20,"password":false,
         "clients_list":["a","b"],"mods":["default"],"proto_min":37,"proto_max":43,"lag":0.1},
        {"address":"host.example.org","port":30001,"name":"no ip"},
        {"address":"198.51.100.2","port":70000},
        {"address":"2001:db8::5","port":30002,"clients":-1,"clients_max":"many"}
      ]}"#;

    #[test]
    fn reads_minetest() {
        let l = decode(WebListKind::Minetest, MINETEST.as_bytes()).unwrap();
        assert_eq!(l.servers.len(), 2);
        let s = &l.servers[0];
        assert_eq!(s.addr, Some("203.0.113.7:30000".parse().unwrap()));
        assert_eq!(s.protocol, Some(Protocol::Minetest));
        assert_eq!(
            (
                s.name.as_deref(),
                s.game.as_deref(),
                s.players,
                s.max_players
            ),
            (Some("Example MT"), Some("minetest"), Some(5), Some(20))
        );
        // lying counts are left out
        assert_eq!(
            (l.servers[1].players, l.servers[1].max_players),
            (None, None)
        );
        assert_eq!(
            l.servers[1].addr,
            Some("[2001:db8::5]:30002".parse().unwrap())
        );
        let why: Vec<_> = l.skipped.iter().map(|(_, w)| *w).collect();
        assert_eq!(why, ["a host name, not an address", "a port over 65535"]);
    }

    #[test]
    fn reads_open_mp() {
        let doc = r#"[{"ip":"203.0.113.9:7777","hn":"Example RP","pc":12,"pm":100,"gm":"RP","la":"English",
            "pa":false,"vn":"omp 1.2.0","omp":true,"pr":false},
            {"ip":"203.0.113.9:7777","hn":"twice"},{"ip":"0.0.0.0:7777"},{"ip":"example.org:7777"},{"hn":"none"}]"#;
        let l = decode(WebListKind::OpenMp, doc.as_bytes()).unwrap();
        assert_eq!(l.servers.len(), 1);
        let j = l.servers[0].to_json();
        assert_eq!(j["addr"], "203.0.113.9:7777");
        assert_eq!(j["protocols"][0], "samp");
        assert_eq!(j["players"], 12);
        assert_eq!(j["password"], false);
        let why: Vec<_> = l.skipped.iter().map(|(_, w)| *w).collect();
        assert_eq!(why.len(), 4);
        assert_eq!(why[0], "listed twice");
        assert_eq!(why[2], "not IP:PORT");
        assert_eq!(why[3], "no address");
    }

    #[test]
    fn reads_steam() {
        let doc = r#"{"response":{"servers":[{"addr":"203.0.113.20:27015","gameport":27015,"steamid":"90000000000000001",
            "name":"Example TF2","appid":440,"gamedir":"tf","version":"9040010","product":"tf","region":255,
            "players":3,"max_players":24,"bots":0,"map":"cp_badlands","secure":true,"dedicated":true,"os":"l",
            "gametype":"cp"}]}}"#;
        let l = decode(WebListKind::Steam, doc.as_bytes()).unwrap();
        assert_eq!(l.servers.len(), 1);
        let s = &l.servers[0];
        assert_eq!(s.protocol, Some(Protocol::A2s));
        assert_eq!(s.map.as_deref(), Some("cp_badlands"));
        assert_eq!(s.game.as_deref(), Some("tf"));
        // no servers: `{"response":{}}`
        assert!(decode(WebListKind::Steam, br#"{"response":{}}"#)
            .unwrap()
            .servers
            .is_empty());
    }

    #[test]
    fn hostile_documents_are_errors() {
        for kind in [
            WebListKind::Ddnet,
            WebListKind::Minetest,
            WebListKind::OpenMp,
            WebListKind::Steam,
        ] {
            // oversized
            let big = vec![b' '; MAX_BYTES + 1];
            assert!(matches!(
                decode(kind, &big),
                Err(WebListError::TooLarge { .. })
            ));
            // deep
            let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
            let e = decode(kind, deep.as_bytes()).unwrap_err().to_string();
            assert!(e.starts_with("not "), "{e}");
            // truncated
            assert!(decode(kind, br#"{"list":[{"ip":"#).is_err());
            assert!(decode(kind, b"").is_err());
        }
        // deep inside a field that is kept: serde_json's recursion limit
        let deep = format!(
            r#"[{{"ip":"203.0.113.9:7777","hn":{}1{}}}]"#,
            "[".repeat(1000),
            "]".repeat(1000)
        );
        let e = decode(WebListKind::OpenMp, deep.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("recursion limit"), "{e}");
        // deep inside a field that is skipped: skipped without recursion (serde_json
        // ignores a value with a loop), bounded by MAX_BYTES
        let deep = deep.replace("\"hn\"", "\"x\"");
        let l = decode(WebListKind::OpenMp, deep.as_bytes()).unwrap();
        assert_eq!(l.servers.len(), 1);
        // lying: more entries than the cap
        let many = format!("[{}]", vec!["{}"; MAX_SERVERS + 1].join(","));
        let e = decode(WebListKind::OpenMp, many.as_bytes()).unwrap_err();
        assert!(matches!(e, WebListError::Malformed { .. }), "{e}");
        // the wrong shape
        assert!(decode(WebListKind::Steam, b"[]").is_err());
        assert!(decode(WebListKind::Minetest, br#"{"list":{}}"#).is_err());
    }
}

//! dpmaster's protocol, the master protocol of the Quake III family (ioquake3,
//! OpenArena, DarkPlaces games such as Xonotic, Wolfenstein: ET, Warsow…), both sides,
//! sans-IO.
//!
//! Every message starts with `FF FF FF FF` and a word:
//!
//! * **`heartbeat TAG\n`** (server → master): `TAG` names the engine's protocol
//!   (`DarkPlaces`, `QuakeArena-1`, `Wolfenstein-1`, `EnemyTerritory-1`), not the game.
//!   Shutdown forms: ioquake3 sends its regular heartbeat twice more; Wolfenstein and ET
//!   send `WolfFlatline-1` / `ETFlatline-1`, Call of Duty `flatline`, the Daemon engine
//!   `…-dead` ([`Heartbeat::shutdown`]). The master verifies a heartbeat by `getinfo
//!   CHALLENGE` to its source and lists the server only when the `infoResponse` echoes
//!   the challenge (the [`registry`](super::registry) does that, in the Quake III
//!   client's `getinfo`; [`Listing::of`] reads what it lists the server under).
//! * **`getservers [GAME] PROTOCOL [OPTIONS…]`** and **`getserversExt GAME PROTOCOL
//!   [OPTIONS…]`** (client → master), [`ServersRequest`]: options `empty`, `full`
//!   (also list empty / full servers; by default neither is), `ipv4`, `ipv6` (Ext only:
//!   which families; neither means both), `gametype=X` and its shortcuts `ffa`,
//!   `tourney`, `team`, `ctf`. Unknown options are ignored, as dpmaster does.
//! * **`getserversResponse`** / **`getserversExtResponse`** (master → client), pages of
//!   at most [`MAX_PAGE_BYTES`]: entries `\` + 4-byte IPv4 address + 2-byte port and (Ext
//!   only) `/` + 16-byte IPv6 address + port, all big-endian; the last page of the list
//!   ends with the fake entry `\EOT\0\0\0` ([`encode_page`], [`decode_page`]).
//!
//! Nothing here panics; decoding reads through the crate's bounded reader.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use std::time::Instant;

#[cfg(test)]
use super::budget::ListAdmission;
use super::budget::ListBudget;
use crate::client::{Answer, Details};
use crate::error::DecodeError;
use crate::reader::Reader;

/// The first four bytes of every message.
pub const PREFIX: [u8; 4] = [0xff; 4];

/// The largest answer datagram (dpmaster's).
pub const MAX_PAGE_BYTES: usize = 1400;

/// The end marker: a fake IPv4 entry after `\`.
pub const EOT: [u8; 6] = *b"EOT\0\0\0";

/// Longest heartbeat tag accepted.
pub const MAX_TAG: usize = 64;

/// Longest list request accepted (dpmaster's requests are a few dozen bytes).
pub const MAX_REQUEST_BYTES: usize = 512;

/// Most words in a list request (the command included).
pub const MAX_WORDS: usize = 16;

/// Longest game name or game type accepted.
pub const MAX_NAME: usize = 64;

const HEARTBEAT: &[u8] = b"heartbeat";
const GETSERVERS: &[u8] = b"getservers";
const GETSERVERS_EXT: &[u8] = b"getserversExt";
const RESPONSE: &[u8] = b"getserversResponse";
const EXT_RESPONSE: &[u8] = b"getserversExtResponse";

fn blank(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t' | 0)
}

/// The message after the prefix, if the datagram starts with `word` followed by a blank
/// or the end (`getservers` is not `getserversExt`).
fn after_word<'a>(datagram: &'a [u8], word: &[u8]) -> Option<&'a [u8]> {
    let rest = datagram.strip_prefix(&PREFIX)?.strip_prefix(word)?;
    match rest.first() {
        None => Some(rest),
        Some(&b) if blank(b) => Some(rest),
        Some(_) => None,
    }
}

/// Whether the datagram is a heartbeat (without decoding it).
pub fn is_heartbeat(datagram: &[u8]) -> bool {
    after_word(datagram, HEARTBEAT).is_some()
}

/// Whether the datagram is a list request (without decoding it).
pub fn is_list_request(datagram: &[u8]) -> bool {
    after_word(datagram, GETSERVERS).is_some() || after_word(datagram, GETSERVERS_EXT).is_some()
}

/// Splits `text` at blanks into at most [`MAX_WORDS`] words.
fn words(text: &[u8], at: usize) -> Result<Vec<&[u8]>, DecodeError> {
    let mut r = Reader::new(text);
    let mut out = Vec::new();
    loop {
        let skip = r.peek_rest().iter().take_while(|&&b| blank(b)).count();
        r.take(skip, "blank")?;
        if r.is_empty() {
            return Ok(out);
        }
        let n = r.peek_rest().iter().take_while(|&&b| !blank(b)).count();
        if out.len() >= MAX_WORDS {
            return Err(DecodeError::invalid(
                at + r.offset(),
                "options",
                "more than 16 words",
            ));
        }
        out.push(r.take(n, "word")?);
    }
}

/// A server's heartbeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heartbeat {
    /// The protocol string (`DarkPlaces`, `QuakeArena-1`, `ETFlatline-1`…), printable
    /// ASCII.
    pub tag: String,
}

impl Heartbeat {
    /// Decodes `FF FF FF FF heartbeat TAG` (a final newline and blanks are allowed; the
    /// tag is at most [`MAX_TAG`] bytes of printable ASCII).
    pub fn decode(datagram: &[u8]) -> Result<Self, DecodeError> {
        let Some(rest) = after_word(datagram, HEARTBEAT) else {
            return Err(DecodeError::invalid(0, "command", "not a heartbeat"));
        };
        let at = datagram.len() - rest.len();
        let w = words(rest, at)?;
        let tag = match w.as_slice() {
            [tag] => *tag,
            [] => return Err(DecodeError::invalid(at, "tag", "missing")),
            _ => return Err(DecodeError::invalid(at, "tag", "more than one word")),
        };
        if tag.len() > MAX_TAG || !tag.iter().all(u8::is_ascii_graphic) {
            return Err(DecodeError::invalid(
                at,
                "tag",
                "not up to 64 bytes of printable ASCII",
            ));
        }
        Ok(Self {
            tag: String::from_utf8_lossy(tag).into_owned(),
        })
    }

    /// Appends the datagram.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&PREFIX);
        out.extend_from_slice(HEARTBEAT);
        out.push(b' ');
        out.extend(self.tag.bytes().filter(u8::is_ascii_graphic));
        out.push(b'\n');
    }

    /// Whether it says the server is shutting down: `flatline`, `…Flatline-1`
    /// (Wolfenstein, ET), `…-dead` (Daemon engine), any case.
    pub fn shutdown(&self) -> bool {
        let t = self.tag.to_ascii_lowercase();
        t.contains("flatline") || t.ends_with("-dead")
    }
}

/// A list request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServersRequest {
    /// `getserversExt` (IPv6 entries allowed, the game name required).
    pub ext: bool,
    /// The game name (`None`: any game; the anonymous Quake III form).
    pub game: Option<String>,
    /// The protocol number.
    pub protocol: u32,
    /// Also list empty servers.
    pub empty: bool,
    /// Also list full servers.
    pub full: bool,
    /// Ext: list IPv4 servers (when neither `ipv4` nor `ipv6` is asked, both are).
    pub ipv4: bool,
    /// Ext: list IPv6 servers.
    pub ipv6: bool,
    /// Only servers of this game type (`gametype=X`, or `ffa` 0, `tourney` 1, `team` 3,
    /// `ctf` 4).
    pub gametype: Option<String>,
}

impl ServersRequest {
    /// A request for `protocol` (and `game`, if any): `getserversExt` when `ext`.
    pub fn new(ext: bool, game: Option<&str>, protocol: u32) -> Self {
        Self {
            ext,
            game: game.map(str::to_owned),
            protocol,
            empty: false,
            full: false,
            ipv4: false,
            ipv6: false,
            gametype: None,
        }
    }

    /// Decodes a `getservers` or `getserversExt` datagram (at most
    /// [`MAX_REQUEST_BYTES`] and [`MAX_WORDS`] words).
    pub fn decode(datagram: &[u8]) -> Result<Self, DecodeError> {
        let (ext, rest) = match (
            after_word(datagram, GETSERVERS_EXT),
            after_word(datagram, GETSERVERS),
        ) {
            (Some(r), _) => (true, r),
            (None, Some(r)) => (false, r),
            (None, None) => {
                return Err(DecodeError::invalid(0, "command", "not getservers"));
            }
        };
        if datagram.len() > MAX_REQUEST_BYTES {
            return Err(DecodeError::invalid(0, "request", "longer than 512 bytes"));
        }
        let at = datagram.len() - rest.len();
        let w = words(rest, at)?;
        let name = |b: &[u8], field: &'static str| {
            if b.is_empty() || b.len() > MAX_NAME || !b.iter().all(u8::is_ascii_graphic) {
                Err(DecodeError::invalid(
                    at,
                    field,
                    "not up to 64 bytes of printable ASCII",
                ))
            } else {
                Ok(String::from_utf8_lossy(b).into_owned())
            }
        };
        let number = |b: &[u8]| {
            std::str::from_utf8(b)
                .ok()
                .filter(|s| s.bytes().all(|c| c.is_ascii_digit()))
                .and_then(|s| s.parse::<u32>().ok())
        };
        let mut it = w.into_iter();
        let first = it
            .next()
            .ok_or(DecodeError::invalid(at, "protocol", "missing"))?;
        let (game, protocol) = match number(first) {
            Some(p) if !ext => (None, p),
            _ => {
                let game = name(first, "game")?;
                let p = it.next().and_then(number).ok_or(DecodeError::invalid(
                    at,
                    "protocol",
                    "not a number",
                ))?;
                (Some(game), p)
            }
        };
        let mut req = Self::new(ext, None, protocol);
        req.game = game;
        for opt in it {
            match opt {
                b"empty" => req.empty = true,
                b"full" => req.full = true,
                b"ipv4" if ext => req.ipv4 = true,
                b"ipv6" if ext => req.ipv6 = true,
                b"ffa" => req.gametype = Some("0".into()),
                b"tourney" => req.gametype = Some("1".into()),
                b"team" => req.gametype = Some("3".into()),
                b"ctf" => req.gametype = Some("4".into()),
                _ => {
                    if let Some(t) = opt.strip_prefix(b"gametype=") {
                        req.gametype = Some(name(t, "gametype")?);
                    }
                }
            }
        }
        Ok(req)
    }

    /// Appends the datagram.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&PREFIX);
        out.extend_from_slice(if self.ext { GETSERVERS_EXT } else { GETSERVERS });
        let mut word = |w: &str| {
            out.push(b' ');
            out.extend(w.bytes().filter(u8::is_ascii_graphic));
        };
        if let Some(g) = &self.game {
            word(g);
        }
        word(&self.protocol.to_string());
        if let Some(t) = &self.gametype {
            word(&format!("gametype={t}"));
        }
        for (on, w) in [
            (self.empty, "empty"),
            (self.full, "full"),
            (self.ext && self.ipv4, "ipv4"),
            (self.ext && self.ipv6, "ipv6"),
        ] {
            if on {
                word(w);
            }
        }
    }

    /// Whether an address of this family is asked for: IPv4 always by `getservers`
    /// (never IPv6); by `getserversExt` as its `ipv4` / `ipv6` options say (neither:
    /// both).
    pub fn wants_family(&self, addr: SocketAddr) -> bool {
        if !self.ext {
            return addr.is_ipv4();
        }
        if !self.ipv4 && !self.ipv6 {
            return true;
        }
        if addr.is_ipv4() {
            self.ipv4
        } else {
            self.ipv6
        }
    }

    /// Whether a server with this listing, `players` and `max_players` is asked for:
    /// the same protocol number, the same game name (case-insensitive; any game when
    /// the request names none), the game type if asked, and not empty (no players) or
    /// full (players ≥ max) unless `empty` / `full`.
    pub fn matches(&self, listing: &Listing, players: u32, max_players: Option<u32>) -> bool {
        if listing.protocol != Some(self.protocol) {
            return false;
        }
        if let Some(g) = &self.game {
            if !listing
                .game
                .as_deref()
                .is_some_and(|x| x.eq_ignore_ascii_case(g))
            {
                return false;
            }
        }
        if let Some(t) = &self.gametype {
            let theirs = listing.gametype.as_deref().unwrap_or("0");
            if !theirs.eq_ignore_ascii_case(t) {
                return false;
            }
        }
        if !self.empty && players == 0 {
            return false;
        }
        if !self.full && max_players.is_some_and(|m| players >= m) {
            return false;
        }
        true
    }
}

/// What a verified server is listed under: the game name, protocol number and game
/// type of its `infoResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// `gamename`.
    pub game: Option<String>,
    /// `protocol`.
    pub protocol: Option<u32>,
    /// `gametype` (dpmaster: `0` when absent).
    pub gametype: Option<String>,
}

impl Listing {
    /// The listing of a Quake III answer (its `infoResponse`); `None` for another
    /// protocol's answer or one without an `infoResponse`.
    pub fn of(answer: &Answer) -> Option<Self> {
        Self::of_details(&answer.details)
    }

    /// The listing of a Quake III answer's details (`None` for another protocol's).
    pub fn of_details(details: &Details) -> Option<Self> {
        let Details::Quake3(d) = details else {
            return None;
        };
        let info = d.info.as_ref()?;
        let short = |k: &str| {
            info.get(k)
                .map(str::trim)
                .filter(|v| !v.is_empty() && v.len() <= MAX_NAME)
                .map(str::to_owned)
        };
        Some(Self {
            game: short("gamename"),
            protocol: info.get("protocol").and_then(|p| p.trim().parse().ok()),
            gametype: short("gametype"),
        })
    }
}

/// Appends a page: the header (`getserversResponse`, or `getserversExtResponse` when
/// `ext`), then as many of `servers` as fit in [`MAX_PAGE_BYTES`] with room for the end
/// marker (IPv6 ones only when `ext`: others are skipped), then, when `end` and every
/// server was written, `\EOT\0\0\0`. Returns how many of `servers` were consumed.
pub fn encode_page(ext: bool, servers: &[SocketAddr], end: bool, out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.extend_from_slice(&PREFIX);
    out.extend_from_slice(if ext { EXT_RESPONSE } else { RESPONSE });
    let room = MAX_PAGE_BYTES.saturating_sub(1 + EOT.len());
    let mut n = 0;
    for a in servers {
        let need = if a.is_ipv4() { 7 } else { 19 };
        if out.len() - start + need > room {
            break;
        }
        match a {
            SocketAddr::V4(v4) => {
                out.push(b'\\');
                out.extend_from_slice(&v4.ip().octets());
                out.extend_from_slice(&v4.port().to_be_bytes());
            }
            SocketAddr::V6(v6) if ext => {
                out.push(b'/');
                out.extend_from_slice(&v6.ip().octets());
                out.extend_from_slice(&v6.port().to_be_bytes());
            }
            SocketAddr::V6(_) => {}
        }
        n += 1;
    }
    if end && n == servers.len() {
        out.push(b'\\');
        out.extend_from_slice(&EOT);
    }
    n
}

/// How an answer went ([`answer`]).
pub use super::budget::Answered;

/// Answers `request` from `from` with the servers `servers` finds (the matching ones,
/// in list order): [`budget::answer_pages`](super::budget::answer_pages) with pages of
/// [`MAX_PAGE_BYTES`], the last one ending with the end marker. A page the budget
/// refuses is not sent and ends the answer there (the client sees no end marker and may
/// ask again later).
pub fn answer(
    request: &ServersRequest,
    servers: impl FnOnce() -> Vec<SocketAddr>,
    from: IpAddr,
    now: Instant,
    budget: &mut ListBudget,
    send: impl FnMut(&[u8]),
) -> Answered {
    super::budget::answer_pages(
        servers,
        from,
        now,
        budget,
        MAX_PAGE_BYTES,
        |rest, out| encode_page(request.ext, rest, true, out),
        send,
    )
}

/// A decoded page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DpPage {
    /// A `getserversExtResponse`.
    pub ext: bool,
    /// The entries, in order (without the end marker).
    pub servers: Vec<SocketAddr>,
    /// Whether it ends with `\EOT\0\0\0`: the list is complete.
    pub end: bool,
}

/// Decodes a page. Bytes after the end marker are ignored; an entry cut short, a
/// separator that is neither `\` nor `/`, or an IPv6 entry in a `getserversResponse`
/// is an error. A marker cut to `\EOT` (some masters leave out the zeros) ends the list
/// too.
pub fn decode_page(datagram: &[u8]) -> Result<DpPage, DecodeError> {
    let (ext, rest) = match (
        datagram
            .strip_prefix(&PREFIX)
            .and_then(|r| r.strip_prefix(EXT_RESPONSE)),
        datagram
            .strip_prefix(&PREFIX)
            .and_then(|r| r.strip_prefix(RESPONSE)),
    ) {
        (Some(r), _) => (true, r),
        (None, Some(r)) => (false, r),
        (None, None) => {
            return Err(DecodeError::invalid(
                0,
                "header",
                "not getserversResponse or getserversExtResponse",
            ))
        }
    };
    let mut r = Reader::new(datagram);
    r.take(datagram.len() - rest.len(), "header")?;
    let mut servers = Vec::with_capacity(r.remaining() / 7);
    while !r.is_empty() {
        let at = r.offset();
        match r.u8("separator")? {
            b'\\' => {
                let tail = r.peek_rest();
                if tail.starts_with(&EOT) || tail == b"EOT" {
                    return Ok(DpPage {
                        ext,
                        servers,
                        end: true,
                    });
                }
                let ip = Ipv4Addr::from(r.array::<4>("address")?);
                let port = r.u16_be("port")?;
                servers.push(SocketAddr::V4(SocketAddrV4::new(ip, port)));
            }
            b'/' if ext => {
                let ip = Ipv6Addr::from(r.array::<16>("address")?);
                let port = r.u16_be("port")?;
                servers.push(SocketAddr::V6(SocketAddrV6::new(ip, port, 0, 0)));
            }
            _ => {
                return Err(DecodeError::invalid(
                    at,
                    "separator",
                    "neither \\ (IPv4) nor / (IPv6 in an Ext page)",
                ))
            }
        }
    }
    Ok(DpPage {
        ext,
        servers,
        end: false,
    })
}

/// The family of `ip` as dpmaster lists it: IPv4-mapped IPv6 addresses as IPv4.
pub fn canonical(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), addr.port()),
            None => addr,
        },
        IpAddr::V4(_) => addr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn heartbeats_and_their_shutdown_forms() {
        for (d, tag, down) in [
            (
                &b"\xff\xff\xff\xffheartbeat DarkPlaces\n"[..],
                "DarkPlaces",
                false,
            ),
            (
                b"\xff\xff\xff\xffheartbeat QuakeArena-1\n",
                "QuakeArena-1",
                false,
            ),
            (
                b"\xff\xff\xff\xffheartbeat EnemyTerritory-1\n",
                "EnemyTerritory-1",
                false,
            ),
            (
                b"\xff\xff\xff\xffheartbeat ETFlatline-1\n",
                "ETFlatline-1",
                true,
            ),
            (
                b"\xff\xff\xff\xffheartbeat WolfFlatline-1",
                "WolfFlatline-1",
                true,
            ),
            (b"\xff\xff\xff\xffheartbeat flatline\n", "flatline", true),
            (
                b"\xff\xff\xff\xffheartbeat Unvanquished-dead\n",
                "Unvanquished-dead",
                true,
            ),
        ] {
            let h = Heartbeat::decode(d).unwrap();
            assert_eq!((h.tag.as_str(), h.shutdown()), (tag, down));
            assert!(is_heartbeat(d));
        }
        let mut out = Vec::new();
        Heartbeat {
            tag: "DarkPlaces".into(),
        }
        .encode(&mut out);
        assert_eq!(out, b"\xff\xff\xff\xffheartbeat DarkPlaces\n");
        for bad in [
            &b"\xff\xff\xff\xffheartbeat\n"[..],
            b"\xff\xff\xff\xffheartbeat a b",
            b"\xff\xff\xff\xffheartbeat \x01",
            b"\xff\xff\xff\xffheartbeats x",
            b"heartbeat x",
        ] {
            assert!(Heartbeat::decode(bad).is_err(), "{bad:?}");
        }
        assert!(Heartbeat::decode(
            &[b"\xff\xff\xff\xffheartbeat ".as_slice(), &[b'a'; 65]].concat()
        )
        .is_err());
    }

    #[test]
    fn what_qstat_and_the_engines_send_decodes() {
        // `quakestat -q3m` (with its newline), `-openarenam`, `-xonoticm`, observed
        let q3 = ServersRequest::decode(b"\xff\xff\xff\xffgetservers 68 empty full\n").unwrap();
        assert_eq!(
            (q3.ext, q3.game.as_deref(), q3.protocol, q3.empty, q3.full),
            (false, None, 68, true, true)
        );
        let oa = ServersRequest::decode(b"\xff\xff\xff\xffgetservers 71 empty full").unwrap();
        assert_eq!(oa.protocol, 71);
        let x = ServersRequest::decode(b"\xff\xff\xff\xffgetservers Xonotic 3 empty full").unwrap();
        assert_eq!((x.game.as_deref(), x.protocol), (Some("Xonotic"), 3));
        // techinfo.txt's samples
        let e =
            ServersRequest::decode(b"\xff\xff\xff\xffgetserversExt Quake3Arena 68 ipv4 empty ipv6")
                .unwrap();
        assert_eq!(
            (e.ext, e.ipv4, e.ipv6, e.empty, e.full),
            (true, true, true, true, false)
        );
        let f = ServersRequest::decode(b"\xff\xff\xff\xffgetservers 67 ffa empty full").unwrap();
        assert_eq!(f.gametype.as_deref(), Some("0"));
        let g = ServersRequest::decode(
            b"\xff\xff\xff\xffgetservers qfusion 39 full gametype=ca unknown",
        )
        .unwrap();
        assert_eq!(
            (g.game.as_deref(), g.gametype.as_deref(), g.full),
            (Some("qfusion"), Some("ca"), true)
        );
        for bad in [
            &b"\xff\xff\xff\xffgetservers"[..],
            b"\xff\xff\xff\xffgetservers Xonotic",
            b"\xff\xff\xff\xffgetserversExt 68",
            b"\xff\xff\xff\xffgetservers 99999999999",
            b"\xff\xff\xff\xffgetserversX 68",
        ] {
            assert!(ServersRequest::decode(bad).is_err(), "{bad:?}");
        }
        let many = [
            b"\xff\xff\xff\xffgetservers 68".as_slice(),
            &b" empty".repeat(16),
        ]
        .concat();
        assert!(ServersRequest::decode(&many).is_err(), "more than 16 words");
    }

    #[test]
    fn filters() {
        let oa = Listing {
            game: Some("Quake3Arena".into()),
            protocol: Some(71),
            gametype: Some("0".into()),
        };
        let req = |s: &[u8]| ServersRequest::decode(&[&PREFIX[..], s].concat()).unwrap();
        assert!(req(b"getservers 71 empty").matches(&oa, 0, Some(8)));
        assert!(!req(b"getservers 71").matches(&oa, 0, Some(8)), "empty");
        assert!(req(b"getservers 71").matches(&oa, 3, Some(8)));
        assert!(!req(b"getservers 71").matches(&oa, 8, Some(8)), "full");
        assert!(req(b"getservers 71 full").matches(&oa, 8, Some(8)));
        assert!(
            !req(b"getservers 68 empty full").matches(&oa, 3, Some(8)),
            "protocol"
        );
        assert!(req(b"getserversExt quake3arena 71").matches(&oa, 3, Some(8)));
        assert!(
            !req(b"getservers Xonotic 71").matches(&oa, 3, Some(8)),
            "game"
        );
        assert!(req(b"getservers 71 ffa").matches(&oa, 3, Some(8)));
        assert!(
            !req(b"getservers 71 ctf").matches(&oa, 3, Some(8)),
            "gametype"
        );
        let v6: SocketAddr = "[2001:db8::1]:27960".parse().unwrap();
        let v4: SocketAddr = "192.0.2.1:27960".parse().unwrap();
        assert!(!req(b"getservers 71").wants_family(v6));
        assert!(req(b"getserversExt g 71").wants_family(v6));
        assert!(req(b"getserversExt g 71 ipv4").wants_family(v4));
        assert!(!req(b"getserversExt g 71 ipv4").wants_family(v6));
        assert!(!req(b"getserversExt g 71 ipv6").wants_family(v4));
    }

    #[test]
    fn pages_hold_at_most_1400_bytes_and_end_with_eot() {
        let servers: Vec<SocketAddr> = (0..500u32)
            .map(|i| SocketAddr::from((Ipv4Addr::from(0x0a00_0000 + i), 27960)))
            .collect();
        let mut all = Vec::new();
        let mut rest = &servers[..];
        let mut pages = 0;
        while !rest.is_empty() || pages == 0 {
            let mut d = Vec::new();
            let n = encode_page(false, rest, true, &mut d);
            assert!(d.len() <= MAX_PAGE_BYTES, "{}", d.len());
            let p = decode_page(&d).unwrap();
            assert_eq!(p.end, n == rest.len());
            all.extend(p.servers);
            rest = &rest[n..];
            pages += 1;
        }
        assert_eq!(all, servers);
        assert_eq!(pages, 3, "196 entries a page");
        let mut d = Vec::new();
        let a: SocketAddr = "1.2.3.4:2048".parse().unwrap();
        encode_page(false, &[a], true, &mut d);
        assert_eq!(
            d,
            b"\xff\xff\xff\xffgetserversResponse\\\x01\x02\x03\x04\x08\x00\\EOT\0\0\0"
        );
        // an IPv6 entry only in Ext pages
        let v6: SocketAddr = "[2001:db8::1]:27960".parse().unwrap();
        let mut d = Vec::new();
        encode_page(true, &[v6, a], true, &mut d);
        let p = decode_page(&d).unwrap();
        assert_eq!((p.ext, p.servers, p.end), (true, vec![v6, a], true));
        let mut d = Vec::new();
        assert_eq!(encode_page(false, &[v6], true, &mut d), 1);
        assert_eq!(decode_page(&d).unwrap().servers, vec![]);
        assert!(decode_page(b"\xff\xff\xff\xffgetserversResponse\\\x01\x02\x03").is_err());
        assert!(decode_page(b"\xff\xff\xff\xffgetserversResponse/0123456789abcdef01").is_err());
        assert!(decode_page(b"\xff\xff\xff\xffgetserversResponsex").is_err());
        assert!(
            decode_page(b"\xff\xff\xff\xffgetserversResponse\\EOT")
                .unwrap()
                .end
        );
    }

    #[test]
    fn a_flood_from_one_source_is_cut_by_its_budget() {
        use super::super::budget::ListBudgetConfig;
        let t0 = Instant::now();
        let per_source = 8_000u32;
        let mut b = ListBudget::new(ListBudgetConfig::new(per_source, u32::MAX), [4; 16], t0);
        let servers: Vec<SocketAddr> = (0..1000u32)
            .map(|i| SocketAddr::from((Ipv4Addr::from(0x0a00_0000 + i), 27960)))
            .collect();
        let req = ServersRequest::decode(b"\xff\xff\xff\xffgetservers 71 empty full").unwrap();
        let victim: IpAddr = "192.0.2.7".parse().unwrap();
        let (mut out, mut cut) = (0usize, 0);
        // 10 simulated seconds, 100 requests a second
        for tick in 0..1000u64 {
            let now = t0 + std::time::Duration::from_millis(tick * 10);
            let a = answer(
                &req,
                || servers.clone(),
                victim,
                now,
                &mut b,
                |p| {
                    assert!(p.len() <= MAX_PAGE_BYTES);
                    out += p.len();
                },
            );
            if a.stopped_by == ListAdmission::SourceOverBudget {
                cut += 1;
            }
        }
        let cap = f64::from(per_source) * (4.0 + 10.0);
        assert!((out as f64) <= cap, "{out} bytes out, budget {cap}");
        assert!(cut > 900, "{cut}");
        // one request under budget gets the whole list, 6 pages ending in EOT
        let mut b = ListBudget::new(ListBudgetConfig::default(), [4; 16], t0);
        let mut pages = Vec::new();
        let a = answer(
            &req,
            || servers.clone(),
            victim,
            t0,
            &mut b,
            |p| pages.push(p.to_vec()),
        );
        assert_eq!((a.pages, a.servers, a.complete), (6, 1000, true));
        assert!(decode_page(pages.last().unwrap()).unwrap().end);
        assert!(!decode_page(&pages[0]).unwrap().end);
    }

    proptest! {
        #[test]
        fn requests_round_trip(
            ext in any::<bool>(),
            game in proptest::option::of("[A-Za-z][A-Za-z0-9_.-]{0,20}"),
            protocol in any::<u32>(),
            flags in any::<[bool; 4]>(),
            gametype in proptest::option::of("[a-z0-9]{1,8}"),
        ) {
            let mut r = ServersRequest::new(ext, game.as_deref(), protocol);
            if ext && r.game.is_none() {
                r.game = Some("g".into());
            }
            [r.empty, r.full, r.ipv4, r.ipv6] = flags;
            if !ext {
                r.ipv4 = false;
                r.ipv6 = false;
            }
            r.gametype = gametype;
            let mut d = Vec::new();
            r.encode(&mut d);
            prop_assert_eq!(ServersRequest::decode(&d).unwrap(), r);
        }

        #[test]
        fn pages_round_trip(
            ext in any::<bool>(),
            v4 in proptest::collection::vec(any::<(u32, u16)>(), 0..300),
            v6 in proptest::collection::vec(any::<(u128, u16)>(), 0..80),
        ) {
            let mut servers: Vec<SocketAddr> = v4.iter()
                .map(|&(ip, port)| SocketAddr::from((Ipv4Addr::from(ip), port)))
                .collect();
            if ext {
                servers.extend(v6.iter().map(|&(ip, port)| SocketAddr::from((Ipv6Addr::from(ip), port))));
            }
            let mut rest = &servers[..];
            let mut got = Vec::new();
            for _ in 0..100 {
                let mut d = Vec::new();
                let n = encode_page(ext, rest, true, &mut d);
                prop_assert!(d.len() <= MAX_PAGE_BYTES);
                let p = decode_page(&d).unwrap();
                got.extend(p.servers);
                rest = &rest[n..];
                if p.end {
                    break;
                }
            }
            prop_assert_eq!(got, servers);
        }

        #[test]
        fn decoders_take_anything(d in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = ServersRequest::decode(&d);
            let _ = Heartbeat::decode(&d);
            let _ = decode_page(&d);
            let mut with = PREFIX.to_vec();
            with.extend_from_slice(b"getserversExtResponse");
            with.extend_from_slice(&d);
            let _ = decode_page(&with);
        }
    }
}

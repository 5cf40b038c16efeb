//! The Unreal 2 query's datagrams: the five-byte requests and the replies, decoded
//! through the bounded [`Reader`].
//!
//! A request is a little-endian 32-bit version (`79 00 00 00` from GameQ, gamedig and
//! opengsq, `78 00 00 00` from qstat; servers answer either) and one byte: `00` server
//! information, `01` rules, `02` players. A reply starts with the server's own version
//! (`80 00 00 00` from UT2004 and Killing Floor) and the same byte, then its body:
//!
//! * information: server id (i32), IP (string), game port, query port (i32), server
//!   name, map, game type (strings), players, maximum players (i32), then a tail that
//!   varies by engine revision ([`Info::extra`]): ping, flags (i32) and skill (string),
//!   with Killing Floor's current and total waves (i32) before them;
//! * rules: key and value strings until the end of the datagram (`Mutator` repeats);
//! * players: id, name (string), ping, score, stats id (i32) until the end.
//!
//! Rules and players may take several datagrams, each with the five-byte header and
//! whole entries; nothing counts or ends them (see the client). Strings are a length
//! byte and that many Latin-1 bytes, or, when the length's high bit is set, that many
//! UCS-2 little-endian characters (some servers put a stray `01` before them, not
//! counted: skipped, as gamedig does); a trailing NUL is counted and dropped. Colour
//! codes are `1B RR GG BB` inside the text ([`strip_colors`]).

use crate::error::{DecodeError, DecodeErrorKind};
use crate::reader::Reader;
use crate::text::Text;

/// The version our requests carry (`79 00 00 00`, as GameQ, gamedig and opengsq send).
pub const REQUEST_VERSION: u32 = 0x79;

/// Bytes of every request and of every reply's header.
pub const HEADER_LEN: usize = 5;

/// What a request asks for, and what a reply answers: its fifth byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `00`: server information.
    Info,
    /// `01`: rules (settings and mutators).
    Rules,
    /// `02`: players.
    Players,
}

impl Kind {
    /// Every kind, in the order the client asks.
    pub const ALL: [Kind; 3] = [Kind::Info, Kind::Rules, Kind::Players];

    /// Its byte on the wire.
    pub const fn byte(self) -> u8 {
        match self {
            Kind::Info => 0,
            Kind::Rules => 1,
            Kind::Players => 2,
        }
    }

    /// The kind of a fifth byte.
    pub const fn of(byte: u8) -> Option<Kind> {
        match byte {
            0 => Some(Kind::Info),
            1 => Some(Kind::Rules),
            2 => Some(Kind::Players),
            _ => None,
        }
    }

    /// Its name in events and warnings.
    pub const fn word(self) -> &'static str {
        match self {
            Kind::Info => "server info",
            Kind::Rules => "rules",
            Kind::Players => "players",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

/// A request: five bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The version it carries.
    pub version: u32,
    /// What it asks for.
    pub kind: Kind,
}

impl Request {
    /// Our request for `kind`.
    pub const fn new(kind: Kind) -> Self {
        Self {
            version: REQUEST_VERSION,
            kind,
        }
    }

    /// Appends its five bytes to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.version.to_le_bytes());
        out.push(self.kind.byte());
    }
}

/// The header of a datagram, when it has the shape of the protocol's: a version whose
/// high three bytes are zero and whose low byte is not (UT2003 `78`/`79`, UT2004 `80`),
/// then a kind byte.
pub fn header(datagram: &[u8]) -> Option<(u32, Kind)> {
    let h = datagram.first_chunk::<HEADER_LEN>()?;
    let [v, 0, 0, 0, k] = *h else { return None };
    if !(0x70..=0x9f).contains(&v) {
        return None;
    }
    Some((u32::from(v), Kind::of(k)?))
}

/// The request in `datagram`, if it is one (exactly five bytes).
pub fn decode_request(datagram: &[u8]) -> Option<Request> {
    if datagram.len() != HEADER_LEN {
        return None;
    }
    let (version, kind) = header(datagram)?;
    Some(Request { version, kind })
}

/// Caps on what replies may make us hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecodeLimits {
    /// Datagrams taken for one reply (rules or players); more are dropped.
    pub max_datagrams: usize,
    /// Rules of a whole reply.
    pub max_rules: usize,
    /// Players of a whole reply.
    pub max_players: usize,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        Self {
            max_datagrams: 32,
            max_rules: 1024,
            max_players: 512,
        }
    }
}

/// A string as sent: its text (colour codes kept) and whether it came as UCS-2.
fn string(r: &mut Reader<'_>, field: &'static str) -> Result<(Text, bool), DecodeError> {
    let len = r.u8(field)?;
    let mut out = Text::default();
    let ucs2 = len & 0x80 != 0;
    if ucs2 {
        let units = usize::from(len & 0x7f);
        if r.peek_u8() == Some(1) && r.remaining() > units.saturating_mul(2) {
            r.u8(field)?;
        }
        let bytes = r.take(units.saturating_mul(2), field)?;
        let codes = bytes.chunks_exact(2).map(|c| {
            u16::from_le_bytes([
                c.first().copied().unwrap_or(0),
                c.get(1).copied().unwrap_or(0),
            ])
        });
        for c in char::decode_utf16(codes) {
            out.push(c.unwrap_or(char::REPLACEMENT_CHARACTER));
        }
    } else {
        let bytes = r.take(usize::from(len), field)?;
        out.extend(bytes.iter().map(|&b| char::from(b)));
    }
    if out.ends_with('\0') {
        out.pop();
    }
    // Anything after an inner NUL is not part of the name (and no NUL reaches a terminal).
    if let Some(i) = out.find('\0') {
        out.truncate(i);
    }
    Ok((out, ucs2))
}

/// `s` without its colour codes (`ESC` and the three characters after it, red, green
/// and blue) and without other control characters.
pub fn strip_colors(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for _ in 0..3 {
                chars.next();
            }
        } else if !c.is_control() {
            out.push(c);
        }
    }
    out
}

/// Whether `s` has a colour code.
pub fn has_colors(s: &str) -> bool {
    s.contains('\x1b')
}

/// The server information reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Info {
    /// The version in the header (`0x80` from UT2004).
    pub version: u32,
    /// Server id (0 on the servers seen).
    pub server_id: i32,
    /// The IP the server reports (mostly empty).
    pub ip: Text,
    /// The game port.
    pub game_port: i32,
    /// The query port (0 on the servers seen).
    pub query_port: i32,
    /// The server's name as sent, colour codes included.
    pub server_name: Text,
    /// Whether the name came as UCS-2.
    pub server_name_ucs2: bool,
    /// The map, as sent.
    pub map: Text,
    /// The game type (`xDeathMatch`, `KFGameType`, `ROTeamGame`).
    pub game_type: Text,
    /// Players on the server.
    pub players: i32,
    /// Player slots.
    pub max_players: i32,
    /// The bytes after `max_players` (see [`Info::extra`]).
    pub tail: Vec<u8>,
}

/// What an information reply's tail says, read as one engine revision lays it out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Extra {
    /// Killing Floor's current and total waves.
    pub waves: Option<(i32, i32)>,
    /// The ping field (0 on the servers seen).
    pub ping: Option<i32>,
    /// Flags (later revisions).
    pub flags: Option<i32>,
    /// The skill (later revisions).
    pub skill: Option<Text>,
    /// Bytes left unread after them.
    pub unread: usize,
}

fn extra_layout(tail: &[u8], killing_floor: bool) -> Extra {
    let mut r = Reader::new(tail);
    let mut e = Extra::default();
    if killing_floor {
        let (Ok(w), Ok(t)) = (r.i32_le("wave"), r.i32_le("waves")) else {
            e.unread = tail.len();
            return e;
        };
        e.waves = Some((w, t));
    }
    e.ping = r.i32_le("ping").ok();
    if r.remaining() >= 5 {
        e.flags = r.i32_le("flags").ok();
        e.skill = string(&mut r, "skill").ok().map(|(s, _)| s);
    }
    e.unread = r.remaining();
    e
}

impl Info {
    /// The tail read as Killing Floor's (`Some(true)`: waves first), as the other
    /// games' (`Some(false)`), or as whichever of the two leaves fewer bytes unread
    /// (`None`; a tie reads it as the other games').
    pub fn extra(&self, killing_floor: Option<bool>) -> Extra {
        match killing_floor {
            Some(kf) => extra_layout(&self.tail, kf),
            None => {
                let plain = extra_layout(&self.tail, false);
                let kf = extra_layout(&self.tail, true);
                if kf.waves.is_some() && kf.skill.is_some() && kf.unread < plain.unread {
                    kf
                } else {
                    plain
                }
            }
        }
    }
}

/// One entry of a players reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlayerEntry {
    /// The player's number (0: a scoreboard line, not a player).
    pub id: u32,
    /// The name as sent, colour codes included.
    pub name: Text,
    /// Ping in milliseconds (0 for bots).
    pub ping: u32,
    /// Score.
    pub score: i32,
    /// The stats id field (its high bits carry a team on some servers).
    pub stats_id: u32,
}

impl PlayerEntry {
    /// An entry with these fields.
    pub fn new(id: u32, name: impl Into<Text>, ping: u32, score: i32, stats_id: u32) -> Self {
        Self {
            id,
            name: name.into(),
            ping,
            score,
            stats_id,
        }
    }
}

/// A reply datagram, decoded (the protocol has these three kinds and no other).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Server information.
    Info(Info),
    /// Rules, in order, as sent (`Mutator` repeats).
    Rules(Vec<(Text, Text)>),
    /// Players, in order.
    Players(Vec<PlayerEntry>),
}

impl Reply {
    /// Its kind.
    pub fn kind(&self) -> Kind {
        match self {
            Reply::Info(_) => Kind::Info,
            Reply::Rules(_) => Kind::Rules,
            Reply::Players(_) => Kind::Players,
        }
    }
}

fn too_many(r: &Reader<'_>, field: &'static str, limit: usize) -> DecodeError {
    DecodeError::new(
        r.offset(),
        field,
        DecodeErrorKind::TooLarge {
            limit: limit as u64,
        },
    )
}

/// Decodes one reply datagram, with at most `limits.max_rules` rules or
/// `limits.max_players` players in it.
pub fn decode_reply(datagram: &[u8], limits: &DecodeLimits) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(datagram);
    let h: [u8; HEADER_LEN] = r.array("header")?;
    let Some((version, kind)) = header(&h) else {
        return Err(DecodeError::new(0, "header", DecodeErrorKind::BadMagic));
    };
    Ok(match kind {
        Kind::Info => {
            let server_id = r.i32_le("server id")?;
            let (ip, _) = string(&mut r, "ip")?;
            let game_port = r.i32_le("game port")?;
            let query_port = r.i32_le("query port")?;
            let (server_name, server_name_ucs2) = string(&mut r, "server name")?;
            let (map, _) = string(&mut r, "map")?;
            let (game_type, _) = string(&mut r, "game type")?;
            let players = r.i32_le("players")?;
            let max_players = r.i32_le("max players")?;
            Reply::Info(Info {
                version,
                server_id,
                ip,
                game_port,
                query_port,
                server_name,
                server_name_ucs2,
                map,
                game_type,
                players,
                max_players,
                tail: r.take_rest().to_vec(),
            })
        }
        Kind::Rules => {
            let mut rules = Vec::new();
            while !r.is_empty() {
                if rules.len() >= limits.max_rules {
                    return Err(too_many(&r, "rules", limits.max_rules));
                }
                let (k, _) = string(&mut r, "rule key")?;
                let (v, _) = string(&mut r, "rule value")?;
                rules.push((k, v));
            }
            Reply::Rules(rules)
        }
        Kind::Players => {
            let mut players = Vec::new();
            while !r.is_empty() {
                if players.len() >= limits.max_players {
                    return Err(too_many(&r, "players", limits.max_players));
                }
                let id = r.u32_le("player id")?;
                let (name, _) = string(&mut r, "player name")?;
                players.push(PlayerEntry {
                    id,
                    name,
                    ping: r.u32_le("player ping")?,
                    score: r.i32_le("player score")?,
                    stats_id: r.u32_le("player stats id")?,
                });
            }
            Reply::Players(players)
        }
    })
}

/// Writes a string: Latin-1 when every character fits, else UCS-2; the trailing NUL
/// counted; cut at 126 characters.
pub fn put_string(out: &mut Vec<u8>, s: &str) {
    put_string_as(out, s, false);
}

/// [`put_string`], in UCS-2 also when every character fits Latin-1 if `ucs2`.
fn put_string_as(out: &mut Vec<u8>, s: &str, ucs2: bool) {
    let chars: Vec<char> = s.chars().take(126).collect();
    if !ucs2 && chars.iter().all(|&c| u32::from(c) < 0x100) {
        out.push(u8::try_from(chars.len() + 1).unwrap_or(0));
        out.extend(
            chars
                .iter()
                .map(|&c| u8::try_from(u32::from(c)).unwrap_or(b'?')),
        );
        out.push(0);
    } else {
        let units: Vec<u16> = chars
            .iter()
            .flat_map(|c| {
                let mut b = [0u16; 2];
                c.encode_utf16(&mut b).to_vec()
            })
            .take(126)
            .collect();
        out.push(0x80 | u8::try_from(units.len() + 1).unwrap_or(0));
        for u in units {
            out.extend_from_slice(&u.to_le_bytes());
        }
        out.extend_from_slice(&[0, 0]);
    }
}

impl Info {
    /// The whole reply datagram (its version and `00`), the server name in UCS-2 when it
    /// came so, the tail as kept.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.version.to_le_bytes());
        out.push(Kind::Info.byte());
        out.extend_from_slice(&self.server_id.to_le_bytes());
        put_string(out, &self.ip);
        out.extend_from_slice(&self.game_port.to_le_bytes());
        out.extend_from_slice(&self.query_port.to_le_bytes());
        put_string_as(out, &self.server_name, self.server_name_ucs2);
        put_string(out, &self.map);
        put_string(out, &self.game_type);
        out.extend_from_slice(&self.players.to_le_bytes());
        out.extend_from_slice(&self.max_players.to_le_bytes());
        out.extend_from_slice(&self.tail);
    }
}

/// A rules reply datagram of `version` with these pairs.
pub fn encode_rules(version: u32, rules: &[(Text, Text)], out: &mut Vec<u8>) {
    out.extend_from_slice(&version.to_le_bytes());
    out.push(Kind::Rules.byte());
    for (k, v) in rules {
        put_string(out, k);
        put_string(out, v);
    }
}

/// A players reply datagram of `version` with these entries.
pub fn encode_players(version: u32, players: &[PlayerEntry], out: &mut Vec<u8>) {
    out.extend_from_slice(&version.to_le_bytes());
    out.push(Kind::Players.byte());
    for p in players {
        out.extend_from_slice(&p.id.to_le_bytes());
        put_string(out, &p.name);
        out.extend_from_slice(&p.ping.to_le_bytes());
        out.extend_from_slice(&p.score.to_le_bytes());
        out.extend_from_slice(&p.stats_id.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_latin1_and_ucs2() {
        let mut b = vec![0x80, 0, 0, 0, 1];
        put_string(&mut b, "Key");
        put_string(&mut b, "Grüße ☃");
        let Reply::Rules(r) = decode_reply(&b, &DecodeLimits::default()).unwrap() else {
            panic!("not rules")
        };
        assert_eq!(r, [("Key".into(), "Grüße ☃".into())]);
        // UCS-2 length 3 (2 chars and the NUL), with the stray 01 some servers send
        let b = [0x80, 0, 0, 0, 1, 0x83, 1, b'a', 0, b'b', 0, 0, 0, 1, b'\0'];
        let Reply::Rules(r) = decode_reply(&b, &DecodeLimits::default()).unwrap() else {
            panic!("not rules")
        };
        assert_eq!(r, [("ab".into(), "".into())]);
    }

    #[test]
    fn colours_are_stripped() {
        assert_eq!(strip_colors("\x1b\u{fe}@@WWW \x1booo- x"), "WWW - x");
        assert_eq!(strip_colors("end\x1b\u{1}"), "end");
        assert!(has_colors("a\x1bxyzb"));
    }

    #[test]
    fn headers() {
        assert_eq!(header(&[0x80, 0, 0, 0, 2, 9]), Some((0x80, Kind::Players)));
        assert_eq!(header(&[0x80, 0, 0, 0, 3]), None);
        assert_eq!(header(&[0xff, 0xff, 0xff, 0xff, 0]), None);
        assert_eq!(header(&[0x80, 0, 1, 0, 0]), None);
        assert!(decode_request(&[0x78, 0, 0, 0, 0]).is_some());
        assert!(decode_request(&[0x78, 0, 0, 0, 0, 0]).is_none());
    }

    #[test]
    fn limits_hold() {
        let mut b = vec![0x80, 0, 0, 0, 2];
        for i in 0..3u32 {
            b.extend_from_slice(&(i + 1).to_le_bytes());
            put_string(&mut b, "p");
            b.extend_from_slice(&[0; 12]);
        }
        let l = DecodeLimits {
            max_players: 2,
            ..DecodeLimits::default()
        };
        let e = decode_reply(&b, &l).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::TooLarge { limit: 2 });
    }
}

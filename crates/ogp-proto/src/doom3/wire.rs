//! The Doom 3 engine's `getInfo` request and `infoResponse` reply, with the dialects of
//! Doom 3, Quake 4, Prey and Enemy Territory: Quake Wars, decoded through the bounded
//! reader.
//!
//! The request is `FF FF getInfo 00` and a 32-bit challenge, which the server echoes.
//! The reply:
//!
//! | part | Doom 3, Quake 4, Prey | ET:QW |
//! |---|---|---|
//! | header | `FF FF infoResponse 00` | the same |
//! | | — | task id (`u32`) |
//! | | challenge (`u32`), protocol (`u32`: major << 16 \| minor) | the same |
//! | | — | size (`u32`: the bytes after it) |
//! | rules | key `00` value `00` pairs, ended by an empty pair | the same |
//! | players | id (`u8`; 32 ends the list), ping (`u16`), rate (`u32`), name; Quake 4 adds a clan tag | id, ping, rate (protocol 10.19 and older), name, clan tag position (`u8`) and clan tag (10.17 and newer), bot (`u8`) |
//! | tail | OS mask (`u32`) | OS mask, ranked (`u8`), time left (`u32`), game state (`u8`), server type (`u8`: 0 then interested clients `u8`; 1, a TV server, then clients and max clients `u32`) |
//!
//! All integers are little-endian; strings are zero-terminated, UTF-8 or Latin-1. The
//! dialect is told by the reply itself: ET:QW's size field equals the bytes that follow
//! it; otherwise a protocol major of 2 is Quake 4's layout (with clan tags) and any other
//! Doom 3's (Prey's is the same), the other layout tried when the first does not read
//! to its end marker. Player ids are below 32 (the engine's client slots): a list of
//! more than 32 records is refused.

use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::model::Text;
use crate::reader::Reader;

/// The request's first bytes (the challenge follows).
pub const REQUEST_PREFIX: &[u8] = b"\xff\xffgetInfo\0";
/// The reply's first bytes.
pub const REPLY_PREFIX: &[u8] = b"\xff\xffinfoResponse\0";
/// The player id that ends the list (the engine's client slots are 0 to 31).
pub const END_OF_PLAYERS: u8 = 32;
/// Most player records read.
pub const MAX_PLAYERS: usize = 32;
/// Most rules read (a datagram holds a few hundred at most).
pub const MAX_RULES: usize = 1024;

/// Which game's layout the reply has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// Doom 3 (and Prey, the same layout): players with a rate.
    Doom3,
    /// Quake 4: players with a clan tag.
    Quake4,
    /// Enemy Territory: Quake Wars: a task id, a size, bot flags and a longer tail.
    Etqw,
}

impl Dialect {
    /// Its name: `doom3`, `quake4`, `etqw`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Doom3 => "doom3",
            Self::Quake4 => "quake4",
            Self::Etqw => "etqw",
        }
    }
}

/// One player record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct D3Player {
    /// The client slot (0 to 31).
    pub id: u8,
    /// The ping in milliseconds.
    pub ping: u16,
    /// The network rate (not in ET:QW after protocol 10.19).
    pub rate: Option<u32>,
    /// The name, colour codes and all.
    pub name: Text,
    /// Where the clan tag goes (ET:QW: 0 before the name, 1 after).
    pub clan_position: Option<u8>,
    /// The clan tag (Quake 4, ET:QW).
    pub clan: Option<Text>,
    /// Whether it is a bot (ET:QW).
    pub bot: Option<bool>,
}

/// What follows the player list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tail {
    /// The OS mask (`u32`).
    pub os_mask: Option<u32>,
    /// ET:QW: a ranked server.
    pub ranked: Option<bool>,
    /// ET:QW: time left in the match, in milliseconds.
    pub time_left: Option<u32>,
    /// ET:QW: the game state.
    pub game_state: Option<u8>,
    /// ET:QW: 0 a regular server, 1 a TV server.
    pub server_type: Option<u8>,
    /// ET:QW regular server: clients interested in joining.
    pub interested_clients: Option<u8>,
    /// ET:QW TV server: clients connected and most clients.
    pub tv_clients: Option<(u32, u32)>,
}

/// An `infoResponse`, every field as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfoResponse {
    /// The layout it was read with.
    pub dialect: Dialect,
    /// ET:QW's task id.
    pub task_id: Option<u32>,
    /// The challenge echoed.
    pub challenge: u32,
    /// The protocol version (major << 16 | minor).
    pub protocol: u32,
    /// ET:QW's size field.
    pub size: Option<u32>,
    /// The rules in wire order (`si_name`, `si_map`, `si_maxPlayers`…).
    pub rules: Vec<(Text, Text)>,
    /// The players.
    pub players: Vec<D3Player>,
    /// What follows the players.
    pub tail: Tail,
    /// What did not stop decoding (Latin-1 strings, duplicate ids, bytes left over).
    pub warnings: Vec<DecodeWarning>,
}

impl InfoResponse {
    /// The protocol as `major.minor`.
    pub fn protocol_string(&self) -> String {
        format!("{}.{}", self.protocol >> 16, self.protocol & 0xffff)
    }

    /// The value of rule `key` (its case ignored, as the engine does).
    pub fn rule(&self, key: &str) -> Option<&Text> {
        self.rules
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
    }
}

/// Appends the request with this challenge.
pub fn encode_request(challenge: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(REQUEST_PREFIX);
    out.extend_from_slice(&challenge.to_le_bytes());
}

/// Whether `d` is a request (its prefix and at least the challenge).
pub fn is_request(d: &[u8]) -> bool {
    d.starts_with(REQUEST_PREFIX)
}

/// Whether `d` is a reply (its prefix).
pub fn is_reply(d: &[u8]) -> bool {
    d.starts_with(REPLY_PREFIX)
}

struct Strings {
    warnings: Vec<DecodeWarning>,
}

impl Strings {
    fn read(&mut self, r: &mut Reader<'_>, field: &'static str) -> Result<Text, DecodeError> {
        let at = r.offset();
        let bytes = r.cstr(field)?;
        let (text, latin1) =
            crate::text::decode_utf8_or_latin1(std::str::from_utf8(bytes).map_err(|_| bytes));
        if latin1 {
            self.warn(at, field, "not UTF-8: read as Latin-1");
        }
        Ok(text)
    }

    fn warn(&mut self, offset: usize, field: &'static str, message: &'static str) {
        if self.warnings.len() < 16 {
            self.warnings.push(DecodeWarning {
                offset,
                field,
                message,
            });
        }
    }
}

/// Whether the reply after its prefix (`r`) has ET:QW's layout: its size field (the
/// fourth `u32`) counts exactly the bytes after it.
fn looks_like_etqw(r: &Reader<'_>) -> bool {
    let rest = r.peek_rest();
    let Some(size) = rest.get(12..16).and_then(|b| <[u8; 4]>::try_from(b).ok()) else {
        return false;
    };
    usize::try_from(u32::from_le_bytes(size)).ok() == Some(rest.len().saturating_sub(16))
}

/// Decodes an `infoResponse` datagram. `dialect` forces a layout; `None` tells it from
/// the reply (see the module's documentation).
pub fn decode_info_response(
    d: &[u8],
    dialect: Option<Dialect>,
) -> Result<InfoResponse, DecodeError> {
    let mut r = Reader::new(d);
    let head = r.take(REPLY_PREFIX.len().min(d.len()), "Header")?;
    if head != REPLY_PREFIX {
        return Err(DecodeError::new(0, "Header", DecodeErrorKind::BadMagic));
    }
    let etqw = match dialect {
        Some(d) => d == Dialect::Etqw,
        None => looks_like_etqw(&r),
    };
    let mut s = Strings {
        warnings: Vec::new(),
    };
    let task_id = if etqw {
        Some(r.u32_le("TaskId")?)
    } else {
        None
    };
    let challenge = r.u32_le("Challenge")?;
    let protocol = r.u32_le("Protocol")?;
    let size = if etqw { Some(r.u32_le("Size")?) } else { None };
    let mut rules = Vec::new();
    loop {
        let at = r.offset();
        let key = s.read(&mut r, "RuleKey")?;
        let value = s.read(&mut r, "RuleValue")?;
        if key.is_empty() && value.is_empty() {
            break;
        }
        if rules.len() >= MAX_RULES {
            return Err(DecodeError::new(
                at,
                "Rules",
                DecodeErrorKind::TooLarge {
                    limit: MAX_RULES as u64,
                },
            ));
        }
        rules.push((key, value));
    }
    let players_at = r.clone();
    let first = match (etqw, dialect) {
        (true, _) => Dialect::Etqw,
        (false, Some(d)) => d,
        (false, None) if protocol >> 16 == 2 => Dialect::Quake4,
        (false, None) => Dialect::Doom3,
    };
    let mut tried = players(&mut r, first, protocol, &mut s);
    let mut used = first;
    if tried.is_err() && dialect.is_none() && !etqw {
        // The other of the two layouts a protocol number does not settle.
        let other = if first == Dialect::Quake4 {
            Dialect::Doom3
        } else {
            Dialect::Quake4
        };
        let mut again = players_at.clone();
        let mut s2 = Strings {
            warnings: s.warnings.clone(),
        };
        if let Ok(p) = players(&mut again, other, protocol, &mut s2) {
            (r, s, used, tried) = (again, s2, other, Ok(p));
        }
    }
    let players = tried?;
    let tail = tail(&mut r, used)?;
    if !r.is_empty() {
        s.warn(r.offset(), "Tail", "bytes left over after the reply");
    }
    Ok(InfoResponse {
        dialect: used,
        task_id,
        challenge,
        protocol,
        size,
        rules,
        players,
        tail,
        warnings: s.warnings,
    })
}

fn players(
    r: &mut Reader<'_>,
    dialect: Dialect,
    protocol: u32,
    s: &mut Strings,
) -> Result<Vec<D3Player>, DecodeError> {
    let mut out: Vec<D3Player> = Vec::new();
    let mut seen = 0u32;
    loop {
        let at = r.offset();
        let id = r.u8("PlayerId")?;
        if id == END_OF_PLAYERS {
            return Ok(out);
        }
        if out.len() >= MAX_PLAYERS {
            return Err(DecodeError::new(
                at,
                "Players",
                DecodeErrorKind::TooLarge {
                    limit: MAX_PLAYERS as u64,
                },
            ));
        }
        if id > END_OF_PLAYERS {
            return Err(DecodeError::invalid(
                at,
                "PlayerId",
                "a player id past the engine's 32 client slots",
            ));
        }
        let bit = 1u32 << u32::from(id);
        if seen & bit != 0 {
            s.warn(at, "PlayerId", "the same player id twice");
        }
        seen |= bit;
        let mut p = D3Player {
            id,
            ping: r.u16_le("Ping")?,
            ..D3Player::default()
        };
        if dialect != Dialect::Etqw || protocol <= 0x000a_0013 {
            p.rate = Some(r.u32_le("Rate")?);
        }
        p.name = s.read(r, "PlayerName")?;
        match dialect {
            Dialect::Quake4 => p.clan = Some(s.read(r, "ClanTag")?),
            Dialect::Etqw => {
                if protocol >= 0x000a_0011 {
                    p.clan_position = Some(r.u8("ClanTagPosition")?);
                    p.clan = Some(s.read(r, "ClanTag")?);
                }
                p.bot = Some(r.u8("Bot")? != 0);
            }
            Dialect::Doom3 => {}
        }
        out.push(p);
    }
}

fn tail(r: &mut Reader<'_>, dialect: Dialect) -> Result<Tail, DecodeError> {
    let mut t = Tail::default();
    if r.remaining() < 4 {
        return Ok(t);
    }
    t.os_mask = Some(r.u32_le("OsMask")?);
    if dialect != Dialect::Etqw || r.is_empty() {
        return Ok(t);
    }
    t.ranked = Some(r.u8("Ranked")? != 0);
    if r.remaining() < 5 {
        return Ok(t);
    }
    t.time_left = Some(r.u32_le("TimeLeft")?);
    t.game_state = Some(r.u8("GameState")?);
    if r.is_empty() {
        return Ok(t);
    }
    let kind = r.u8("ServerType")?;
    t.server_type = Some(kind);
    match kind {
        0 => t.interested_clients = Some(r.u8("InterestedClients")?),
        1 => t.tv_clients = Some((r.u32_le("TvClients")?, r.u32_le("TvMaxClients")?)),
        _ => {}
    }
    Ok(t)
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend(s.bytes().filter(|&b| b != 0));
    out.push(0);
}

impl InfoResponse {
    /// Appends the reply as a datagram in its dialect's layout (for tests and replays;
    /// strings as UTF-8). ET:QW's size is computed.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(REPLY_PREFIX);
        let etqw = self.dialect == Dialect::Etqw;
        if etqw {
            out.extend_from_slice(&self.task_id.unwrap_or(0).to_le_bytes());
        }
        out.extend_from_slice(&self.challenge.to_le_bytes());
        out.extend_from_slice(&self.protocol.to_le_bytes());
        let size_at = out.len();
        if etqw {
            out.extend_from_slice(&[0; 4]);
        }
        for (k, v) in &self.rules {
            put_str(out, k);
            put_str(out, v);
        }
        out.extend_from_slice(&[0, 0]);
        for p in &self.players {
            out.push(p.id);
            out.extend_from_slice(&p.ping.to_le_bytes());
            if !etqw || self.protocol <= 0x000a_0013 {
                out.extend_from_slice(&p.rate.unwrap_or(0).to_le_bytes());
            }
            put_str(out, &p.name);
            match self.dialect {
                Dialect::Quake4 => put_str(out, p.clan.as_deref().unwrap_or("")),
                Dialect::Etqw => {
                    if self.protocol >= 0x000a_0011 {
                        out.push(p.clan_position.unwrap_or(0));
                        put_str(out, p.clan.as_deref().unwrap_or(""));
                    }
                    out.push(u8::from(p.bot.unwrap_or(false)));
                }
                Dialect::Doom3 => {}
            }
        }
        out.push(END_OF_PLAYERS);
        let t = &self.tail;
        if let Some(m) = t.os_mask {
            out.extend_from_slice(&m.to_le_bytes());
            if etqw {
                if let Some(r) = t.ranked {
                    out.push(u8::from(r));
                    if let (Some(left), Some(state)) = (t.time_left, t.game_state) {
                        out.extend_from_slice(&left.to_le_bytes());
                        out.push(state);
                        if let Some(kind) = t.server_type {
                            out.push(kind);
                            match (t.interested_clients, t.tv_clients) {
                                (Some(n), _) if kind == 0 => out.push(n),
                                (_, Some((a, b))) if kind == 1 => {
                                    out.extend_from_slice(&a.to_le_bytes());
                                    out.extend_from_slice(&b.to_le_bytes());
                                }
                                _ => {}
                            }
                        }
                    }
                }
            }
        }
        if etqw {
            let after = out.len().saturating_sub(size_at + 4);
            let size = u32::try_from(after).unwrap_or(u32::MAX).to_le_bytes();
            if let Some(s) = out.get_mut(size_at..size_at + 4) {
                s.copy_from_slice(&size);
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn sample(dialect: Dialect) -> InfoResponse {
        let protocol = match dialect {
            Dialect::Doom3 => 0x0001_0029,
            Dialect::Quake4 => 0x0002_0056,
            Dialect::Etqw => 0x000d_000a,
        };
        let player = |id: u8, name: &str| D3Player {
            id,
            ping: 50 + u16::from(id),
            rate: (dialect != Dialect::Etqw).then_some(16_000),
            name: name.into(),
            clan_position: (dialect == Dialect::Etqw).then_some(0),
            clan: (dialect != Dialect::Doom3).then(|| "[ogp]".into()),
            bot: (dialect == Dialect::Etqw).then_some(id == 3),
        };
        InfoResponse {
            dialect,
            task_id: (dialect == Dialect::Etqw).then_some(7),
            challenge: 0x1234_5678,
            protocol,
            size: None,
            rules: vec![
                ("si_name".into(), "^1Red ^7Server".into()),
                ("si_map".into(), "game/mp/d3dm1".into()),
                ("si_maxPlayers".into(), "8".into()),
            ],
            players: vec![player(0, "^2Marine"), player(3, "Bot")],
            tail: Tail {
                os_mask: Some(3),
                ..Tail::default()
            },
            warnings: Vec::new(),
        }
    }

    #[test]
    fn every_dialect_round_trips_and_is_told_apart() {
        for d in [Dialect::Doom3, Dialect::Quake4, Dialect::Etqw] {
            let mut want = sample(d);
            if d == Dialect::Etqw {
                want.tail = Tail {
                    os_mask: Some(1),
                    ranked: Some(true),
                    time_left: Some(600_000),
                    game_state: Some(2),
                    server_type: Some(0),
                    interested_clients: Some(4),
                    tv_clients: None,
                };
            }
            let mut bytes = Vec::new();
            want.encode(&mut bytes);
            let got = decode_info_response(&bytes, None).unwrap();
            if d == Dialect::Etqw {
                want.size = got.size;
                let after = bytes.len() - REPLY_PREFIX.len() - 16;
                assert_eq!(got.size, Some(after as u32));
            }
            assert_eq!(got, want, "{d:?}");
            assert_eq!(decode_info_response(&bytes, Some(d)).unwrap(), want);
        }
    }

    #[test]
    fn quake4_players_on_another_protocol_number_still_read() {
        let mut q4 = sample(Dialect::Quake4);
        q4.protocol = 0x0001_0000;
        let mut bytes = Vec::new();
        q4.encode(&mut bytes);
        let got = decode_info_response(&bytes, None).unwrap();
        assert_eq!(got.dialect, Dialect::Quake4);
        assert_eq!(got.players[0].clan.as_deref(), Some("[ogp]"));
    }

    #[test]
    fn lying_player_lists_are_refused() {
        let mut d3 = sample(Dialect::Doom3);
        d3.players = (0..40)
            .map(|i| D3Player {
                id: i % 32,
                name: "x".into(),
                rate: Some(0),
                ..D3Player::default()
            })
            .collect();
        let mut bytes = Vec::new();
        d3.encode(&mut bytes);
        let e = decode_info_response(&bytes, Some(Dialect::Doom3)).unwrap_err();
        assert_eq!(e.field, "Players");
        // no end marker: truncated, never a loop
        let mut cut = Vec::new();
        sample(Dialect::Doom3).encode(&mut cut);
        let end = cut.len() - 5;
        assert!(decode_info_response(&cut[..end], None).is_err());
        // an id past the slots
        let mut bad = sample(Dialect::Doom3);
        bad.players[0].id = 200;
        let mut bytes = Vec::new();
        bad.encode(&mut bytes);
        assert!(decode_info_response(&bytes, None).is_err());
        // duplicate ids: a warning
        let mut dup = sample(Dialect::Doom3);
        dup.players[1].id = 0;
        let mut bytes = Vec::new();
        dup.encode(&mut bytes);
        let got = decode_info_response(&bytes, None).unwrap();
        assert_eq!(got.players.len(), 2);
        assert_eq!(got.warnings[0].message, "the same player id twice");
    }

    #[test]
    fn every_cut_is_an_error_or_shorter() {
        let mut bytes = Vec::new();
        sample(Dialect::Quake4).encode(&mut bytes);
        // up to the end marker every cut fails; after it the tail is optional
        for n in 0..bytes.len() - 4 {
            assert!(decode_info_response(&bytes[..n], None).is_err(), "{n}");
        }
        assert_eq!(
            decode_info_response(b"\xff\xffinfoRespons", None)
                .unwrap_err()
                .kind,
            DecodeErrorKind::BadMagic
        );
    }
}

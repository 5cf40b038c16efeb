//! Teeworlds' server-info requests and replies, both dialects, decoded through the
//! bounded reader.
//!
//! **0.6 and DDNet** (every value a NUL-terminated string, numbers in decimal):
//!
//! * Request: a 6-byte connectionless header, `FF FF FF FF gie3` and one token byte.
//!   The header is DDNet's extended form, `x e` and four extra bytes whose first two
//!   carry 16 more token bits; a vanilla 0.6 server reads the same bytes as its own
//!   connectionless header (`FF`×6) and answers `inf3` with the token byte alone, a DDNet
//!   server answers `iext` with the whole 24-bit token.
//! * `inf3`: `FF`×6, `FF FF FF FF inf3`, then token, version, name, map, game type, flags,
//!   players, max players, clients, max clients, and per client name, clan, country,
//!   score and `1` for a player (`0`: a spectator). At most 16 clients.
//! * `iext` (DDNet): the same with the map's CRC and size after the map, and an empty
//!   reserved string after the counts and after each client. As many clients as fit;
//!   the rest follow in `iex+` datagrams: token, the datagram's number (1, 2…), an empty
//!   reserved string, then clients.
//!
//! **0.7** (strings NUL-terminated, numbers in the packer's variable-length integer: a
//! first byte with an extension bit, a sign bit and 6 bits, then bytes of 7 bits):
//!
//! * Token handshake: a control packet `04 00 00 FF FF FF FF 05`, our 4-byte token and
//!   zeros to 520 bytes (servers ignore shorter ones: the padding is the price a client
//!   pays, not the server); the server answers `04 00 00 <our token> 05 <its token>`.
//! * Request: `21`, the server's token, ours, `FF FF FF FF gie3` and an integer token.
//! * `inf3`: `21`, our token, the server's, `FF FF FF FF inf3`, then the integer token,
//!   version, name, host name, map, game type, flags, skill level, players, max players,
//!   clients, max clients, and per client name, clan, country, score and a flag (`0`
//!   player, `1` spectator, `2` bot).
//!
//! Peers make us hold at most [`MAX_CLIENTS`] clients per datagram and strings no
//! longer than their datagram.

use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::model::Text;
use crate::reader::Reader;

/// The connectionless header of 0.6 replies (and of vanilla 0.6 requests).
pub const HEADER6: [u8; 6] = [0xff; 6];
/// DDNet's extended header's first two bytes.
pub const HEADER_EXTENDED: [u8; 2] = *b"xe";
/// The request's message.
pub const GETINFO: [u8; 8] = *b"\xff\xff\xff\xffgie3";
/// The 0.6 (and 0.7) reply's message.
pub const INFO: [u8; 8] = *b"\xff\xff\xff\xffinf3";
/// DDNet's extended reply.
pub const INFO_EXTENDED: [u8; 8] = *b"\xff\xff\xff\xffiext";
/// DDNet's extended reply's continuation.
pub const INFO_MORE: [u8; 8] = *b"\xff\xff\xff\xffiex+";
/// The size of a 0.7 token request, padding included.
pub const TOKEN_REQUEST_LEN: usize = 520;
/// The first byte of a 0.7 connectionless packet (connless flag, version 1).
pub const CONNLESS7: u8 = 0x21;
/// The first three bytes of a 0.7 control packet (no ack, no chunks).
pub const CONTROL7: [u8; 3] = [0x04, 0x00, 0x00];
/// The 0.7 control message that carries a token.
pub const CTRL_TOKEN: u8 = 0x05;
/// "No token yet" in 0.7.
pub const TOKEN_NONE: u32 = 0xffff_ffff;
/// Most clients kept from one datagram (servers have at most 64; DDNet up to 128).
pub const MAX_CLIENTS: usize = 256;

/// Which reply a datagram is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// 0.6's `inf3` (vanilla, or DDNet answering a vanilla request).
    Info6,
    /// DDNet's `iext`.
    Extended,
    /// DDNet's `iex+`.
    More,
    /// 0.7's `inf3`.
    Info7,
}

/// One client of a reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Client {
    /// The name.
    pub name: Text,
    /// The clan.
    pub clan: Text,
    /// The country (ISO 3166-1 numeric; -1: none).
    pub country: i32,
    /// The score (DDNet race servers: the time in seconds, negated or -9999 when none).
    pub score: i32,
    /// In the game (false: a spectator).
    pub player: bool,
    /// A bot (0.7's flag 2).
    pub bot: bool,
}

/// A server-info reply (`inf3`, `iext` or 0.7's `inf3`), every field as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Info {
    /// The token echoed.
    pub token: i64,
    /// The version (`0.6.4, 16.4`, `0.7.5`).
    pub version: Text,
    /// The server's name.
    pub name: Text,
    /// 0.7's host name (usually empty).
    pub host_name: Text,
    /// The map.
    pub map: Text,
    /// DDNet's `iext`: the map's CRC (signed, as sent).
    pub map_crc: Option<i64>,
    /// DDNet's `iext`: the map's size in bytes.
    pub map_size: Option<i64>,
    /// The game type (`DM`, `CTF`, `DDraceNetwork`).
    pub game_type: Text,
    /// Flags: `1` a password is needed (0.7: `2` the score is a time).
    pub flags: i64,
    /// 0.7's skill level.
    pub skill_level: Option<i64>,
    /// Clients in the game.
    pub num_players: i64,
    /// Player slots.
    pub max_players: i64,
    /// Clients, spectators included.
    pub num_clients: i64,
    /// Client slots.
    pub max_clients: i64,
    /// The clients of this datagram.
    pub clients: Vec<Client>,
    /// What was read in a tolerant way.
    pub warnings: Vec<DecodeWarning>,
}

/// DDNet's `iex+`: more clients of an `iext`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct More {
    /// The token echoed.
    pub token: i64,
    /// The datagram's number (the `iext` is 0).
    pub part: i64,
    /// Its clients.
    pub clients: Vec<Client>,
    /// What was read in a tolerant way.
    pub warnings: Vec<DecodeWarning>,
}

/// A decoded 0.6 / DDNet reply (exhaustive: 0.6's replies are fixed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply6 {
    /// `inf3` or `iext` (boxed: an info is much larger than a continuation).
    Info(Kind, Box<Info>),
    /// `iex+`.
    More(More),
}

/// Appends the 0.6 / DDNet request carrying the 24-bit `token` to `out`.
pub fn encode_request6(out: &mut Vec<u8>, token: u32) {
    let [_, hi, mid, low] = token.to_be_bytes();
    out.extend_from_slice(&HEADER_EXTENDED);
    out.extend_from_slice(&[hi, mid, 0, 0]);
    out.extend_from_slice(&GETINFO);
    out.push(low);
}

/// Appends the 0.7 token request carrying our `token` to `out`.
pub fn encode_token_request(out: &mut Vec<u8>, token: u32) {
    let start = out.len();
    out.extend_from_slice(&CONTROL7);
    out.extend_from_slice(&TOKEN_NONE.to_be_bytes());
    out.push(CTRL_TOKEN);
    out.extend_from_slice(&token.to_be_bytes());
    out.resize(start + TOKEN_REQUEST_LEN, 0);
}

/// Appends the 0.7 request: to the server's token `theirs`, from `ours`, asking with
/// the integer `token`.
pub fn encode_request7(out: &mut Vec<u8>, theirs: u32, ours: u32, token: i32) {
    out.push(CONNLESS7);
    out.extend_from_slice(&theirs.to_be_bytes());
    out.extend_from_slice(&ours.to_be_bytes());
    out.extend_from_slice(&GETINFO);
    put_varint(out, token);
}

/// The server's token from a 0.7 token reply addressed to `ours`; `None` when the
/// datagram is not one.
pub fn token_reply(datagram: &[u8], ours: u32) -> Option<u32> {
    let mut r = Reader::new(datagram);
    (r.array::<3>("header").ok()? == CONTROL7).then_some(())?;
    (u32::from_be_bytes(r.array::<4>("token").ok()?) == ours).then_some(())?;
    (r.u8("control message").ok()? == CTRL_TOKEN).then_some(())?;
    Some(u32::from_be_bytes(r.array::<4>("server token").ok()?))
}

/// Whether `datagram` is a 0.6 / DDNet reply (by its first 14 bytes).
pub fn is_reply6(datagram: &[u8]) -> bool {
    let msg = datagram.get(6..14);
    datagram.starts_with(&HEADER6)
        && [INFO, INFO_EXTENDED, INFO_MORE]
            .iter()
            .any(|m| msg == Some(m.as_slice()))
}

/// Whether `datagram` is a 0.6 / DDNet request (vanilla or extended header).
pub fn is_request6(datagram: &[u8]) -> bool {
    (datagram.starts_with(&HEADER6) || datagram.starts_with(&HEADER_EXTENDED))
        && datagram.get(6..14) == Some(GETINFO.as_slice())
}

/// Whether `datagram` is a 0.7 info reply or request (`21`, two tokens, the message).
pub fn is_packet7(datagram: &[u8]) -> bool {
    let msg = datagram.get(9..17);
    datagram.first() == Some(&CONNLESS7)
        && (msg == Some(INFO.as_slice()) || msg == Some(GETINFO.as_slice()))
}

/// Whether `datagram` is a 0.7 token request or reply.
pub fn is_token7(datagram: &[u8]) -> bool {
    datagram.starts_with(&CONTROL7) && datagram.get(7) == Some(&CTRL_TOKEN)
}

/// Reads a 0.6 / DDNet reply.
pub fn decode_reply6(datagram: &[u8]) -> Result<Reply6, DecodeError> {
    let mut r = Reader::new(datagram);
    if r.array::<6>("header")? != HEADER6 {
        return Err(DecodeError::new(0, "header", DecodeErrorKind::BadMagic));
    }
    let at = r.offset();
    let msg = r.array::<8>("message")?;
    let kind = match msg {
        INFO => Kind::Info6,
        INFO_EXTENDED => Kind::Extended,
        INFO_MORE => Kind::More,
        _ => return Err(DecodeError::new(at, "message", DecodeErrorKind::BadMagic)),
    };
    let mut w = Vec::new();
    let token = dec(&mut r, "token")?;
    let extended = kind != Kind::Info6;
    if kind == Kind::More {
        let part = dec(&mut r, "part")?;
        text(&mut r, "reserved", &mut w)?;
        let clients = clients6(&mut r, extended, &mut w)?;
        return Ok(Reply6::More(More {
            token,
            part,
            clients,
            warnings: w,
        }));
    }
    let mut info = Info {
        token,
        version: text(&mut r, "version", &mut w)?,
        name: text(&mut r, "name", &mut w)?,
        map: text(&mut r, "map", &mut w)?,
        ..Info::default()
    };
    if extended {
        info.map_crc = Some(dec(&mut r, "map crc")?);
        info.map_size = Some(dec(&mut r, "map size")?);
    }
    info.game_type = text(&mut r, "game type", &mut w)?;
    info.flags = dec(&mut r, "flags")?;
    info.num_players = dec(&mut r, "players")?;
    info.max_players = dec(&mut r, "max players")?;
    info.num_clients = dec(&mut r, "clients")?;
    info.max_clients = dec(&mut r, "max clients")?;
    if extended {
        text(&mut r, "reserved", &mut w)?;
    }
    info.clients = clients6(&mut r, extended, &mut w)?;
    info.warnings = w;
    Ok(Reply6::Info(kind, Box::new(info)))
}

/// Reads a 0.7 `inf3` addressed to our token `ours` (`None`: any) and returns it with
/// the server's token from its header.
pub fn decode_reply7(datagram: &[u8], ours: Option<u32>) -> Result<(u32, Info), DecodeError> {
    let mut r = Reader::new(datagram);
    if r.u8("header")? != CONNLESS7 {
        return Err(DecodeError::new(0, "header", DecodeErrorKind::BadMagic));
    }
    let at = r.offset();
    let to = u32::from_be_bytes(r.array::<4>("token")?);
    if ours.is_some_and(|o| o != to) {
        return Err(DecodeError::invalid(at, "token", "not the token we sent"));
    }
    let theirs = u32::from_be_bytes(r.array::<4>("server token")?);
    let at = r.offset();
    if r.array::<8>("message")? != INFO {
        return Err(DecodeError::new(at, "message", DecodeErrorKind::BadMagic));
    }
    let mut w = Vec::new();
    let mut info = Info {
        token: varint(&mut r, "token")?.into(),
        version: text(&mut r, "version", &mut w)?,
        name: text(&mut r, "name", &mut w)?,
        host_name: text(&mut r, "host name", &mut w)?,
        map: text(&mut r, "map", &mut w)?,
        game_type: text(&mut r, "game type", &mut w)?,
        flags: varint(&mut r, "flags")?.into(),
        skill_level: Some(varint(&mut r, "skill level")?.into()),
        num_players: varint(&mut r, "players")?.into(),
        max_players: varint(&mut r, "max players")?.into(),
        num_clients: varint(&mut r, "clients")?.into(),
        max_clients: varint(&mut r, "max clients")?.into(),
        ..Info::default()
    };
    let mut dropped = false;
    while !r.is_empty() {
        let c = Client {
            name: text(&mut r, "client name", &mut w)?,
            clan: text(&mut r, "client clan", &mut w)?,
            country: varint(&mut r, "client country")?,
            score: varint(&mut r, "client score")?,
            ..Client::default()
        };
        let at = r.offset();
        let flag = varint(&mut r, "client flag")?;
        let c = Client {
            player: flag == 0,
            bot: flag == 2,
            ..c
        };
        if !(0..=2).contains(&flag) {
            warn(&mut w, at, "client flag", "neither 0, 1 nor 2");
        }
        keep(&mut info.clients, c, &mut dropped, &mut w, at);
    }
    info.warnings = w;
    Ok((theirs, info))
}

fn warn(w: &mut Vec<DecodeWarning>, offset: usize, field: &'static str, message: &'static str) {
    if w.len() < 16 {
        w.push(DecodeWarning {
            offset,
            field,
            message,
        });
    }
}

fn keep(
    into: &mut Vec<Client>,
    c: Client,
    dropped: &mut bool,
    w: &mut Vec<DecodeWarning>,
    at: usize,
) {
    if into.len() < MAX_CLIENTS {
        into.push(c);
    } else if !*dropped {
        *dropped = true;
        warn(
            w,
            at,
            "clients",
            "more clients than we keep: the rest dropped",
        );
    }
}

fn clients6(
    r: &mut Reader<'_>,
    extended: bool,
    w: &mut Vec<DecodeWarning>,
) -> Result<Vec<Client>, DecodeError> {
    let mut out = Vec::new();
    let mut dropped = false;
    while !r.is_empty() {
        let at = r.offset();
        let c = Client {
            name: text(r, "client name", w)?,
            clan: text(r, "client clan", w)?,
            country: int(r, "client country")?,
            score: int(r, "client score")?,
            player: int(r, "client is player")? != 0,
            bot: false,
        };
        if extended {
            text(r, "client reserved", w)?;
        }
        keep(&mut out, c, &mut dropped, w, at);
    }
    Ok(out)
}

/// A string, as UTF-8 (invalid bytes replaced, with a warning).
fn text(
    r: &mut Reader<'_>,
    field: &'static str,
    w: &mut Vec<DecodeWarning>,
) -> Result<Text, DecodeError> {
    let at = r.offset();
    let (t, bad) = crate::text::decode(r.cstr(field)?, true);
    if bad {
        warn(w, at, field, "not UTF-8: invalid bytes replaced");
    }
    Ok(t)
}

/// A decimal integer string (DDNet's tokens reach 24 bits, its CRCs are signed 32).
fn dec(r: &mut Reader<'_>, field: &'static str) -> Result<i64, DecodeError> {
    let at = r.offset();
    let s = r.cstr(field)?;
    std::str::from_utf8(s)
        .ok()
        .filter(|s| s.len() <= 20)
        .and_then(|s| s.trim_ascii().parse::<i64>().ok())
        .ok_or(DecodeError::invalid(at, field, "not a decimal integer"))
}

/// A decimal integer string that fits 32 bits.
fn int(r: &mut Reader<'_>, field: &'static str) -> Result<i32, DecodeError> {
    let at = r.offset();
    i32::try_from(dec(r, field)?).map_err(|_| {
        DecodeError::new(
            at,
            field,
            DecodeErrorKind::TooLarge {
                limit: i32::MAX as u64,
            },
        )
    })
}

/// Reads a 0.7 packer integer: at most 5 bytes.
pub fn varint(r: &mut Reader<'_>, field: &'static str) -> Result<i32, DecodeError> {
    let first = r.u8(field)?;
    let negative = first & 0x40 != 0;
    let mut v = u32::from(first & 0x3f);
    let mut more = first & 0x80 != 0;
    let mut shift = 6;
    while more {
        let b = r.u8(field)?;
        if shift > 27 {
            return Err(DecodeError::invalid(
                r.offset(),
                field,
                "integer longer than 5 bytes",
            ));
        }
        let bits = if shift == 27 { b & 0x0f } else { b & 0x7f };
        v |= u32::from(bits) << shift;
        more = b & 0x80 != 0 && shift < 27;
        shift += 7;
    }
    let v = v as i32;
    Ok(if negative { !v } else { v })
}

/// Appends a 0.7 packer integer.
pub fn put_varint(out: &mut Vec<u8>, v: i32) {
    let sign = if v < 0 { 0x40 } else { 0 };
    let mut u = (if v < 0 { !v } else { v }) as u32;
    let mut b = sign | (u & 0x3f) as u8;
    u >>= 6;
    while u != 0 {
        out.push(b | 0x80);
        b = (u & 0x7f) as u8;
        u >>= 7;
    }
    out.push(b);
}

/// Encoding of replies, for tests, fuzz seeds and hostile servers.
pub mod encode {
    use super::*;

    fn s(out: &mut Vec<u8>, v: &str) {
        crate::text::put_cstr(out, v, true);
    }

    fn clients(out: &mut Vec<u8>, clients: &[Client], extended: bool) {
        for c in clients {
            s(out, &c.name);
            s(out, &c.clan);
            s(out, &c.country.to_string());
            s(out, &c.score.to_string());
            s(out, if c.player { "1" } else { "0" });
            if extended {
                s(out, "");
            }
        }
    }

    /// A 0.6 `inf3` (`kind` [`Kind::Info6`]) or DDNet `iext` ([`Kind::Extended`]).
    pub fn info6(out: &mut Vec<u8>, kind: Kind, i: &Info) {
        let extended = kind == Kind::Extended;
        out.extend_from_slice(&HEADER6);
        out.extend_from_slice(if extended { &INFO_EXTENDED } else { &INFO });
        s(out, &i.token.to_string());
        s(out, &i.version);
        s(out, &i.name);
        s(out, &i.map);
        if extended {
            s(out, &i.map_crc.unwrap_or(0).to_string());
            s(out, &i.map_size.unwrap_or(0).to_string());
        }
        s(out, &i.game_type);
        for n in [
            i.flags,
            i.num_players,
            i.max_players,
            i.num_clients,
            i.max_clients,
        ] {
            s(out, &n.to_string());
        }
        if extended {
            s(out, "");
        }
        clients(out, &i.clients, extended);
    }

    /// A DDNet `iex+`.
    pub fn more(out: &mut Vec<u8>, token: i64, part: i64, c: &[Client]) {
        out.extend_from_slice(&HEADER6);
        out.extend_from_slice(&INFO_MORE);
        s(out, &token.to_string());
        s(out, &part.to_string());
        s(out, "");
        clients(out, c, true);
    }

    /// A 0.7 token reply from `theirs` to `ours`.
    pub fn token_reply(out: &mut Vec<u8>, ours: u32, theirs: u32) {
        out.extend_from_slice(&CONTROL7);
        out.extend_from_slice(&ours.to_be_bytes());
        out.push(CTRL_TOKEN);
        out.extend_from_slice(&theirs.to_be_bytes());
    }

    /// A 0.7 `inf3` from `theirs` to `ours`.
    pub fn info7(out: &mut Vec<u8>, ours: u32, theirs: u32, i: &Info) {
        out.push(CONNLESS7);
        out.extend_from_slice(&ours.to_be_bytes());
        out.extend_from_slice(&theirs.to_be_bytes());
        out.extend_from_slice(&INFO);
        let n = |v: i64| i32::try_from(v).unwrap_or(0);
        put_varint(out, n(i.token));
        for t in [&i.version, &i.name, &i.host_name, &i.map, &i.game_type] {
            s(out, t);
        }
        for v in [
            i.flags,
            i.skill_level.unwrap_or(0),
            i.num_players,
            i.max_players,
            i.num_clients,
            i.max_clients,
        ] {
            put_varint(out, n(v));
        }
        for c in &i.clients {
            s(out, &c.name);
            s(out, &c.clan);
            put_varint(out, c.country);
            put_varint(out, c.score);
            put_varint(out, if c.bot { 2 } else { i32::from(!c.player) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_match_the_packer() {
        for v in [
            0,
            1,
            63,
            64,
            -1,
            -64,
            -65,
            8303,
            i32::MAX,
            i32::MIN,
            1_000_000,
        ] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert!(b.len() <= 5);
            assert_eq!(varint(&mut Reader::new(&b), "v").unwrap(), v, "{b:02x?}");
        }
        // 64 is `80 01` as the real 0.7 server sends its max players.
        let mut b = Vec::new();
        put_varint(&mut b, 64);
        assert_eq!(b, [0x80, 0x01]);
        assert!(varint(&mut Reader::new(&[0xff; 6]), "v").is_ok());
        assert!(varint(&mut Reader::new(&[0x80]), "v").is_err());
    }

    #[test]
    fn the_request_carries_24_bits_of_token() {
        let mut d = Vec::new();
        encode_request6(&mut d, 0x12_3456);
        assert_eq!(d, b"xe\x12\x34\x00\x00\xff\xff\xff\xffgie3\x56");
        assert!(is_request6(&d));
    }

    #[test]
    fn the_token_request_is_520_bytes() {
        let mut d = Vec::new();
        encode_token_request(&mut d, 0x1122_3344);
        assert_eq!(d.len(), TOKEN_REQUEST_LEN);
        assert!(d.starts_with(b"\x04\x00\x00\xff\xff\xff\xff\x05\x11\x22\x33\x44\x00"));
        let mut r = Vec::new();
        encode::token_reply(&mut r, 0x1122_3344, 7);
        assert_eq!(token_reply(&r, 0x1122_3344), Some(7));
        assert_eq!(token_reply(&r, 0x1122_3345), None);
    }

    #[test]
    fn replies_round_trip() {
        let info = Info {
            token: 0x12_3456,
            version: "0.6.4, 16.4".into(),
            name: "DD".into(),
            map: "Tutorial".into(),
            map_crc: Some(-1_924_373_370),
            map_size: Some(1_082_711),
            game_type: "DDraceNetwork".into(),
            num_players: 1,
            max_players: 64,
            num_clients: 2,
            max_clients: 64,
            clients: vec![
                Client {
                    name: "nameless tee".into(),
                    clan: "c".into(),
                    country: -1,
                    score: -9999,
                    player: true,
                    bot: false,
                },
                Client {
                    name: "spec".into(),
                    ..Client::default()
                },
            ],
            ..Info::default()
        };
        let mut d = Vec::new();
        encode::info6(&mut d, Kind::Extended, &info);
        assert!(is_reply6(&d));
        assert_eq!(
            decode_reply6(&d).unwrap(),
            Reply6::Info(Kind::Extended, Box::new(info.clone()))
        );
        let mut d = Vec::new();
        let seven = Info {
            host_name: "h".into(),
            skill_level: Some(1),
            map_crc: None,
            map_size: None,
            ..info
        };
        encode::info7(&mut d, 5, 6, &seven);
        assert!(is_packet7(&d));
        assert_eq!(decode_reply7(&d, Some(5)).unwrap(), (6, seven));
        assert!(decode_reply7(&d, Some(4)).is_err());
    }
}

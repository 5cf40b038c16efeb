//! BeamMP's server information: the request, the reply's framing and its fields.
//!
//! On a TCP connection to the game port the client's first byte chooses what the server
//! does (BeamMP-Server, `TNetwork::Identify`); `I` asks for the information the server
//! last sent BeamMP's backend. Current servers answer with its length (a 32-bit integer,
//! little-endian) then JSON; older ones wrote a form-encoded body (`key=value&…`) without
//! a length and closed. The two are told apart by the fourth byte: a length under 16 MiB
//! has it zero, text never does. A length of 0 is a server that does not share its
//! information (`InformationPacket = false`).
//!
//! Fields (`THeartbeatThread.cpp`), numbers and flags sent as text: `players`,
//! `maxplayers`, `port`, `map`, `private`, `version`, `clientversion`, `name`, `tags`,
//! `guests`, `modlist`, `modstotalsize`, `modstotal`, `playerslist` (names separated by
//! `;`), `desc`. Their mapping to the shared status:
//!
//! | field | status |
//! |---|---|
//! | `name` | `host_name` without `^` colour codes; `host_name_raw` as sent when it had some |
//! | `map` | `map` |
//! | `players`, `maxplayers` | `player_count`, `slot_max` |
//! | `port` | `connect_port` |
//! | `version` | `game_version` |
//! | `playerslist` | `players` (at most [`MAX_PLAYERS`]) |
//! | `clientversion`, `private`, `guests`, `tags`, `modstotal`, `modstotalsize`, `modlist`, `desc` | `rules`, those sent, in this order |

use serde::Deserialize;

use crate::bounded::MAX_LIST_ENTRIES;
use crate::client_http::{parse_json, rules_of, Capped, ListOrText, Object, Scalar};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::model::{MapInfo, Player};
use crate::reader::Reader;
use crate::text::Text;
use crate::Status;

/// The request: one byte.
pub const REQUEST: [u8; 1] = *b"I";
/// The most bytes a reply's body may have (a server with many mods lists them all).
pub const MAX_BODY: usize = 256 * 1024;
/// Players kept (the rest are counted).
pub const MAX_PLAYERS: usize = MAX_LIST_ENTRIES;
/// Fields of a form-encoded body read, at most.
pub const MAX_FIELDS: usize = 64;

/// Where a reply's body is in the bytes received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framed {
    /// Bytes before the body: 4 (the length), or 0 (an old server's body that ends at the
    /// close).
    pub header: usize,
    /// The body's length.
    pub len: usize,
}

/// Where the reply is in `r` (the bytes received from its start; `closed`: the server has
/// closed its side, so what is held is all there is): `None` while more must come; an
/// error for a length over [`MAX_BODY`] or nothing at all.
pub fn frame(r: &Reader<'_>, closed: bool) -> Result<Option<Framed>, DecodeError> {
    let bytes = r.peek_rest();
    match bytes.get(..4) {
        Some(&[a, b, c, 0]) => {
            let len = usize::try_from(u32::from_le_bytes([a, b, c, 0])).unwrap_or(usize::MAX);
            if len > MAX_BODY {
                return Err(DecodeError::too_large(r.offset(), "Length", MAX_BODY));
            }
            let whole = bytes.len().saturating_sub(4) >= len;
            Ok(whole.then_some(Framed { header: 4, len }))
        }
        _ if !closed => Ok(None),
        _ if bytes.is_empty() => Err(DecodeError::new(
            r.offset(),
            "Reply",
            DecodeErrorKind::Truncated {
                needed: 1,
                available: 0,
            },
        )),
        _ => Ok(Some(Framed {
            header: 0,
            len: bytes.len(),
        })),
    }
}

/// The fields of a reply, as sent (see the module's documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
#[allow(missing_docs)]
pub struct Info {
    pub name: Scalar,
    pub map: Scalar,
    pub players: Scalar,
    pub maxplayers: Scalar,
    pub port: Scalar,
    pub private: Scalar,
    pub version: Scalar,
    pub clientversion: Scalar,
    pub tags: Scalar,
    pub guests: Scalar,
    pub modlist: Scalar,
    pub modstotalsize: Scalar,
    pub modstotal: Scalar,
    pub playerslist: Scalar,
    pub desc: Scalar,
}

impl Info {
    fn set(&mut self, key: &str, value: String) {
        let field = match key {
            "name" => &mut self.name,
            "map" => &mut self.map,
            "players" => &mut self.players,
            "maxplayers" => &mut self.maxplayers,
            "port" => &mut self.port,
            "private" => &mut self.private,
            "version" => &mut self.version,
            "clientversion" => &mut self.clientversion,
            "tags" => &mut self.tags,
            "guests" => &mut self.guests,
            "modlist" => &mut self.modlist,
            "modstotalsize" => &mut self.modstotalsize,
            "modstotal" => &mut self.modstotal,
            "playerslist" => &mut self.playerslist,
            "desc" => &mut self.desc,
            _ => return,
        };
        *field = Scalar(Some(value));
    }

    /// The player names (and how many were listed).
    pub fn names(&self) -> Option<Capped<String, MAX_PLAYERS>> {
        self.playerslist
            .as_str()
            .map(|t| ListOrText::<Scalar, MAX_PLAYERS>::split_text(t, ";"))
    }
}

/// `%XX` and `+` of a form-encoded value decoded (a bad escape kept as sent).
fn form_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let hex = b
            .get(i.saturating_add(1)..i.saturating_add(3))
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (c, hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i = i.saturating_add(3);
            }
            (b'+', _) => {
                out.push(b' ');
                i = i.saturating_add(1);
            }
            _ => {
                out.push(c);
                i = i.saturating_add(1);
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The body of a reply (JSON, or an old server's form), its offsets counted from `base`.
pub fn decode_info(body: &[u8], base: usize) -> Result<Info, DecodeError> {
    let start = body.iter().position(|b| !b.is_ascii_whitespace());
    let info = if start.and_then(|i| body.get(i)) == Some(&b'{') {
        let Object(info) = parse_json::<Object<Info>>(body, "Info").map_err(|mut e| {
            e.offset = e.offset.saturating_add(base);
            e
        })?;
        info
    } else {
        let text = String::from_utf8_lossy(body);
        let mut info = Info::default();
        for pair in text.trim().split('&').take(MAX_FIELDS) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            info.set(&form_decode(k), form_decode(v));
        }
        info
    };
    if info.name.0.is_none() && info.players.0.is_none() && info.maxplayers.0.is_none() {
        return Err(DecodeError::invalid(
            base,
            "Info",
            "no name, players or maxplayers: not BeamMP's server information",
        ));
    }
    Ok(info)
}

/// The status a reply says (see the module's documentation).
pub fn to_status(i: &Info) -> Status {
    let raw = i.name.as_str();
    let name = raw.map(crate::savage2::strip_colours);
    Status {
        game_name: Some(Text::from("BeamMP")),
        host_name_raw: raw.filter(|r| Some(*r) != name.as_deref()).map(Text::from),
        host_name: name.map(Text::from),
        map: i.map.as_str().map(MapInfo::named),
        player_count: i.players.number(),
        slot_max: i.maxplayers.number(),
        connect_port: i.port.number(),
        game_version: i.version.as_str().map(Text::from),
        players: i
            .names()
            .map(|n| n.kept.into_iter().map(Player::named).collect()),
        rules: Some(rules_of(&[
            ("clientversion", &i.clientversion),
            ("private", &i.private),
            ("guests", &i.guests),
            ("tags", &i.tags),
            ("modstotal", &i.modstotal),
            ("modstotalsize", &i.modstotalsize),
            ("modlist", &i.modlist),
            ("desc", &i.desc),
        ])),
        ..Status::default()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A current server's reply: the length, then the JSON.
    pub(crate) const JSON: &str = r#"{"players":"2","maxplayers":"8","port":"30814","map":"/levels/gridmap_v2/info.json","private":"false","version":"3.4.1","clientversion":"2.0","name":"^4ogp ^rBeam","tags":"Freeroam","guests":"true","modlist":"","modstotalsize":"0","modstotal":"0","playerslist":"alice;bob;","desc":"a test"}"#;

    pub(crate) fn framed(body: &[u8]) -> Vec<u8> {
        let mut v = u32::try_from(body.len()).unwrap().to_le_bytes().to_vec();
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn json_and_form_read_alike() {
        let bytes = framed(JSON.as_bytes());
        let f = frame(&Reader::new(&bytes), false).unwrap().unwrap();
        assert_eq!(
            f,
            Framed {
                header: 4,
                len: JSON.len()
            }
        );
        let a = to_status(&decode_info(&bytes[4..], 4).unwrap());
        assert_eq!(a.host_name.as_deref(), Some("ogp Beam"));
        assert_eq!(a.host_name_raw.as_deref(), Some("^4ogp ^rBeam"));
        assert_eq!((a.player_count, a.slot_max), (Some(2), Some(8)));
        let names: Vec<_> = a
            .players
            .unwrap()
            .into_iter()
            .filter_map(|p| p.name)
            .collect();
        assert_eq!(names, ["alice", "bob"]);
        let form = b"players=2&maxplayers=8&name=%5E4ogp+%5ErBeam&playerslist=alice%3Bbob%3B";
        // Not framed: wait for the close.
        assert_eq!(frame(&Reader::new(form), false).unwrap(), None);
        let f = frame(&Reader::new(form), true).unwrap().unwrap();
        assert_eq!(f.header, 0);
        let b = to_status(&decode_info(form, 0).unwrap());
        assert_eq!(b.host_name, a.host_name);
        assert_eq!(b.players.map(|p| p.len()), Some(2));
    }

    #[test]
    fn lying_lengths_and_foreign_bodies() {
        let e = frame(&Reader::new(&[0, 0, 0x10, 0, b'{']), false).unwrap_err();
        assert!(e.to_string().contains("Length"), "{e}");
        assert_eq!(
            frame(&Reader::new(&[9, 0, 0, 0, b'{']), false).unwrap(),
            None
        );
        assert!(frame(&Reader::new(&[]), true).is_err());
        let e = decode_info(br#"{"x":1}"#, 4).unwrap_err();
        assert!(e.to_string().contains("not BeamMP"), "{e}");
        let e = decode_info(br#"{"name":"#, 4).unwrap_err();
        assert_eq!(
            e.offset, 11,
            "the byte where the JSON stopped, from the stream start"
        );
        let deep = "[".repeat(10_000);
        assert!(decode_info(format!("{{\"name\":{deep}").as_bytes(), 0).is_err());
    }
}

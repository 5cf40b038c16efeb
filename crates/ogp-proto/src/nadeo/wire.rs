//! GBXRemote 2's framing, and the replies to the shared status.
//!
//! On connect the server sends a 32-bit length (11) and `GBXRemote 2`. Every call and
//! reply is then a frame: the XML's length (u32), a handle (u32), the XML; integers
//! little-endian. Our calls carry handles from `0x80000001` up and each reply the handle
//! of its call; a handle below `0x80000000` is a callback (the server's own message),
//! which the client skips.
//!
//! The replies to the status (names carry `$` colour codes: `host_name`, `map` and player
//! names without them, `host_name_raw` as sent):
//!
//! | call | member | status |
//! |---|---|---|
//! | `GetServerOptions` | `Name` | `host_name` |
//! | | `Password` | `password` (not empty nor `No password`) |
//! | | `CurrentMaxPlayers` | `slot_max` |
//! | | `CurrentMaxSpectators`, `Comment` | `rules` |
//! | `GetCurrentChallengeInfo` (`GetCurrentMapInfo`) | `Name` | `map` |
//! | | `Environnement`, `Author` | `rules` |
//! | `GetCurrentGameInfo` | `GameMode` | `game_mode`: 0 Rounds, 1 Time Attack, 2 Team, 3 Laps, 4 Stunts, 5 Cup (gamedig's names); the number in `rules` |
//! | | `NbChallenge` | `rules` `mapcount` |
//! | `GetVersion` | `Name`, `Version` | `game_name`, `game_version` |
//! | `GetPlayerList` | `Name` or else `NickName`, `TeamId`, `LadderRanking` | `players` (name, team, score); `player_count` their number |

use super::xmlrpc::Value;
use crate::error::DecodeError;
use crate::model::{MapInfo, Player, Rules};
use crate::reader::Reader;
use crate::text::Text;
use crate::Status;

/// The handshake's text.
pub const HANDSHAKE: &[u8] = b"GBXRemote 2";
/// The longest handshake text read.
pub const MAX_HANDSHAKE: usize = 64;
/// A frame's header: the length and the handle.
pub const HEADER: usize = 8;
/// The largest frame's XML (a full server's player list is well under it).
pub const MAX_FRAME: usize = 4 * 1024 * 1024;
/// Handles at or above this are replies to calls; below, callbacks.
pub const REPLY_HANDLE: u32 = 0x8000_0000;

/// The handshake at the start of `r`: its text and its size, once whole.
pub fn handshake<'a>(r: &Reader<'a>) -> Result<Option<(&'a [u8], usize)>, DecodeError> {
    let bytes = r.peek_rest();
    let Some(&[a, b, c, d]) = bytes.get(..4) else {
        return Ok(None);
    };
    let len = usize::try_from(u32::from_le_bytes([a, b, c, d])).unwrap_or(usize::MAX);
    if len > MAX_HANDSHAKE {
        return Err(DecodeError::too_large(
            r.offset(),
            "HandshakeLength",
            MAX_HANDSHAKE,
        ));
    }
    Ok(bytes.get(4..4 + len).map(|text| (text, 4 + len)))
}

/// A frame's header at the start of `r`: the XML's length and the handle, once the whole
/// frame is there; an error when it says more than [`MAX_FRAME`].
pub fn frame(r: &Reader<'_>) -> Result<Option<(usize, u32)>, DecodeError> {
    let bytes = r.peek_rest();
    let Some(h) = bytes.get(..HEADER) else {
        return Ok(None);
    };
    let word = |i: usize| {
        h.get(i..i + 4)
            .and_then(|w| <[u8; 4]>::try_from(w).ok())
            .map_or(0, u32::from_le_bytes)
    };
    let len = usize::try_from(word(0)).unwrap_or(usize::MAX);
    if len > MAX_FRAME {
        return Err(DecodeError::too_large(r.offset(), "FrameLength", MAX_FRAME));
    }
    Ok((bytes.len() - HEADER >= len).then_some((len, word(4))))
}

/// A call's frame: `xml` after its length and `handle`.
pub fn call_frame(handle: u32, xml: &str, out: &mut Vec<u8>) {
    let len = u32::try_from(xml.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&handle.to_le_bytes());
    out.extend_from_slice(xml.as_bytes());
}

/// `s` without `$` formatting codes (`$` and three hexadecimal digits, or `$` and a
/// letter; `$$` is a `$`), as gamedig strips them.
pub fn strip_codes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let after = from.get(1..).unwrap_or_default();
        let hex = after
            .get(..3)
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
        rest = if let Some(h) = hex {
            after.get(h.len()..).unwrap_or_default()
        } else if let Some(r) = after.strip_prefix('$') {
            out.push('$');
            r
        } else {
            match after.chars().next() {
                Some(c) if c.is_ascii_alphabetic() => after.get(1..).unwrap_or_default(),
                _ => {
                    out.push('$');
                    after
                }
            }
        };
    }
    out.push_str(rest);
    out
}

/// The replies that came (`None`: not asked, or a fault).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replies {
    /// `GetServerOptions`.
    pub server_options: Option<Value>,
    /// `GetCurrentChallengeInfo` or `GetCurrentMapInfo`.
    pub map_info: Option<Value>,
    /// `GetCurrentGameInfo`.
    pub game_info: Option<Value>,
    /// `GetVersion`.
    pub version: Option<Value>,
    /// `GetPlayerList`'s structs.
    pub players: Option<Vec<Value>>,
}

/// gamedig's names of `GameMode`.
pub fn game_mode_name(mode: i64) -> Option<&'static str> {
    Some(match mode {
        0 => "Rounds",
        1 => "Time Attack",
        2 => "Team",
        3 => "Laps",
        4 => "Stunts",
        5 => "Cup",
        _ => return None,
    })
}

fn member<'a>(v: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    v.and_then(|v| v.get(key))
}

fn text_of(v: Option<&Value>, key: &str) -> Option<String> {
    member(v, key).and_then(Value::text)
}

/// The status the replies say (see the module's documentation).
pub fn to_status(r: &Replies) -> Status {
    let opts = r.server_options.as_ref();
    let map = r.map_info.as_ref();
    let game = r.game_info.as_ref();
    let version = r.version.as_ref();
    let raw = text_of(opts, "Name");
    let name = raw.as_deref().map(strip_codes);
    let mut rules = Vec::new();
    for (k, v, key) in [
        ("CurrentMaxSpectators", opts, "CurrentMaxSpectators"),
        ("Comment", opts, "Comment"),
        ("Environnement", map, "Environnement"),
        ("Author", map, "Author"),
        ("GameMode", game, "GameMode"),
        ("mapcount", game, "NbChallenge"),
    ] {
        if let Some(t) = text_of(v, key) {
            rules.push((Text::from(k), Text::from(t)));
        }
    }
    let players: Option<Vec<Player>> = r.players.as_ref().map(|list| {
        list.iter()
            .map(|p| {
                let n = text_of(Some(p), "Name")
                    .filter(|n| !n.is_empty())
                    .or_else(|| text_of(Some(p), "NickName"))
                    .unwrap_or_default();
                Player {
                    team: member(Some(p), "TeamId")
                        .and_then(Value::as_int)
                        .and_then(|t| i32::try_from(t).ok()),
                    score: member(Some(p), "LadderRanking")
                        .and_then(Value::as_int)
                        .and_then(|t| i32::try_from(t).ok()),
                    ..Player::named(strip_codes(&n))
                }
            })
            .collect()
    });
    Status {
        game_name: text_of(version, "Name").map(Text::from),
        game_version: text_of(version, "Version").map(Text::from),
        host_name_raw: raw.filter(|r| Some(r) != name.as_ref()).map(Text::from),
        host_name: name.map(Text::from),
        password: text_of(opts, "Password").map(|p| !p.is_empty() && p != "No password"),
        slot_max: member(opts, "CurrentMaxPlayers")
            .and_then(Value::as_int)
            .and_then(|n| u32::try_from(n).ok()),
        map: text_of(map, "Name").map(|n| MapInfo::named(strip_codes(&n))),
        game_mode: member(game, "GameMode")
            .and_then(Value::as_int)
            .and_then(game_mode_name)
            .map(Text::from),
        player_count: players.as_ref().and_then(|p| u32::try_from(p.len()).ok()),
        players,
        rules: Some(Rules(rules)),
        ..Status::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stripped() {
        assert_eq!(strip_codes("$f00Red$z $$5 $o$iX$"), "Red $5 X$");
        assert_eq!(strip_codes("$"), "$");
        assert_eq!(strip_codes("a$é"), "a$é");
    }

    #[test]
    fn frames_and_lying_lengths() {
        let mut f = Vec::new();
        call_frame(0x8000_0001, "<x/>", &mut f);
        assert_eq!(frame(&Reader::new(&f)).unwrap(), Some((4, 0x8000_0001)));
        assert_eq!(frame(&Reader::new(&f[..9])).unwrap(), None);
        let e = frame(&Reader::new(&[0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0])).unwrap_err();
        assert!(e.to_string().contains("FrameLength"), "{e}");
        let e = handshake(&Reader::new(&[0xff, 0, 0, 0])).unwrap_err();
        assert!(e.to_string().contains("HandshakeLength"), "{e}");
        let mut h = 11u32.to_le_bytes().to_vec();
        h.extend_from_slice(HANDSHAKE);
        assert_eq!(handshake(&Reader::new(&h)).unwrap(), Some((HANDSHAKE, 15)));
    }
}

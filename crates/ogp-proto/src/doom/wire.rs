//! Chocolate Doom's query request and reply, decoded through the bounded reader.
//!
//! * Request: `00 0D` (the packet type NET_PACKET_TYPE_QUERY, 16 bits big-endian).
//! * Reply: `00 0E` (NET_PACKET_TYPE_QUERY_RESPONSE), then the version (a
//!   zero-terminated string, `Chocolate Doom 3.0.0`), the server's state (0 waiting
//!   for players, 1 in game), players, max players, game mode and game mission (one
//!   byte each), the description (zero-terminated), and, since version 3.0, the network
//!   protocols it speaks: a count byte and as many zero-terminated names
//!   (`CHOCOLATE_DOOM_0`). Servers before 3.0 end after the description.
//!
//! Strings are UTF-8 when they are, else Latin-1 (with a warning).

use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::model::Text;
use crate::reader::Reader;
use crate::text::decode_utf8_or_latin1;

/// The request.
pub const REQUEST: &[u8] = &[0x00, 0x0d];
/// The reply's packet type.
pub const REPLY_TYPE: [u8; 2] = [0x00, 0x0e];
/// Most protocol names kept; further names are read and dropped with a warning.
pub const MAX_PROTOCOLS: usize = 32;

/// The game modes (`GameMode_t`), by their byte.
pub const MODES: [&str; 5] = [
    "shareware",
    "registered",
    "commercial",
    "retail",
    "indetermined",
];

/// The game missions (`GameMission_t`), by their byte: the game they name.
pub const MISSIONS: [&str; 10] = [
    "doom", "doom2", "tnt", "plutonia", "chex", "hacx", "heretic", "hexen", "strife", "none",
];

/// A decoded reply, every field as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reply {
    /// The server's version (`Chocolate Doom 3.0.0`).
    pub version: Text,
    /// 0: waiting for players to join; 1: in game.
    pub state: u8,
    /// Players connected.
    pub players: u8,
    /// The most players it takes.
    pub max_players: u8,
    /// The game mode ([`MODES`]).
    pub mode: u8,
    /// The game mission ([`MISSIONS`]).
    pub mission: u8,
    /// The description (the server's name).
    pub description: Text,
    /// The network protocols it speaks (`None`: a server before 3.0 sends none).
    pub protocols: Option<Vec<Text>>,
    /// What was read in a tolerant way.
    pub warnings: Vec<DecodeWarning>,
}

impl Reply {
    /// The game mission's name, when known.
    pub fn mission_name(&self) -> Option<&'static str> {
        MISSIONS.get(usize::from(self.mission)).copied()
    }

    /// The game mode's name, when known.
    pub fn mode_name(&self) -> Option<&'static str> {
        MODES.get(usize::from(self.mode)).copied()
    }

    /// Appends the reply's bytes (for tests and replays). Strings are cut at a NUL.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let put = |out: &mut Vec<u8>, s: &str| {
            out.extend(s.bytes().take_while(|&b| b != 0));
            out.push(0);
        };
        out.extend_from_slice(&REPLY_TYPE);
        put(out, &self.version);
        out.extend_from_slice(&[
            self.state,
            self.players,
            self.max_players,
            self.mode,
            self.mission,
        ]);
        put(out, &self.description);
        if let Some(p) = &self.protocols {
            out.push(u8::try_from(p.len()).unwrap_or(u8::MAX));
            for name in p.iter().take(usize::from(u8::MAX)) {
                put(out, name);
            }
        }
    }
}

/// Whether `d` looks like a reply: the type, then a version that starts with three
/// printable ASCII bytes and ends with a NUL within its first 64 bytes.
pub fn looks_like_reply(d: &[u8]) -> bool {
    let Some(rest) = d.strip_prefix(&REPLY_TYPE) else {
        return false;
    };
    let head = rest.get(..rest.len().min(64)).unwrap_or_default();
    match memchr::memchr(0, head) {
        Some(n) if n >= 3 => head
            .get(..3)
            .is_some_and(|v| v.iter().all(|b| (0x20..0x7f).contains(b))),
        _ => false,
    }
}

/// Reads a reply.
pub fn decode_reply(datagram: &[u8]) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(datagram);
    if r.array::<2>("packet type")? != REPLY_TYPE {
        return Err(DecodeError::new(
            0,
            "packet type",
            DecodeErrorKind::BadMagic,
        ));
    }
    let mut latin1 = None;
    let mut text = |r: &mut Reader<'_>, field: &'static str| -> Result<Text, DecodeError> {
        let at = r.offset();
        let b = r.cstr(field)?;
        let (t, guessed) = decode_utf8_or_latin1(std::str::from_utf8(b).map_err(|_| b));
        if guessed {
            latin1.get_or_insert(at);
        }
        Ok(t)
    };
    let mut reply = Reply {
        version: text(&mut r, "version")?,
        state: r.u8("server state")?,
        players: r.u8("players")?,
        max_players: r.u8("max players")?,
        mode: r.u8("game mode")?,
        mission: r.u8("game mission")?,
        description: text(&mut r, "description")?,
        ..Reply::default()
    };
    let mut warnings = Vec::new();
    if let Some(count) = r.peek_u8() {
        r.u8("protocols")?;
        let mut names = Vec::new();
        for _ in 0..count {
            let name = text(&mut r, "protocol")?;
            if names.len() < MAX_PROTOCOLS {
                names.push(name);
            } else if names.len() == MAX_PROTOCOLS {
                warnings.push(DecodeWarning {
                    offset: r.offset(),
                    field: "protocol",
                    message: "protocols past the cap dropped",
                });
            }
        }
        reply.protocols = Some(names);
        if !r.is_empty() {
            warnings.push(DecodeWarning {
                offset: r.offset(),
                field: "reply",
                message: "bytes after the protocols ignored",
            });
        }
    }
    if let Some(at) = latin1 {
        warnings.push(DecodeWarning {
            offset: at,
            field: "string",
            message: "not UTF-8: read as Latin-1",
        });
    }
    reply.warnings = warnings;
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// chocolate-server 3.0.0 (Debian 12), `-servername "Test Doom"`, no game yet.
    pub(crate) const REAL: &str = "000e43686f636f6c61746520446f6f6d20332e302e300000000804005465737420446f6f6d000143484f434f4c4154455f444f4f4d5f3000";

    #[test]
    fn the_real_servers_reply_decodes_and_round_trips() {
        let d = crate::text::from_hex(REAL).unwrap();
        assert!(looks_like_reply(&d));
        let r = decode_reply(&d).unwrap();
        assert_eq!(r.version, "Chocolate Doom 3.0.0");
        assert_eq!((r.state, r.players, r.max_players), (0, 0, 8));
        assert_eq!(
            (r.mode_name(), r.mission_name()),
            (Some("indetermined"), Some("doom"))
        );
        assert_eq!(r.description, "Test Doom");
        assert_eq!(r.protocols, Some(vec!["CHOCOLATE_DOOM_0".into()]));
        assert!(r.warnings.is_empty());
        let mut back = Vec::new();
        r.encode(&mut back);
        assert_eq!(back, d);
    }

    #[test]
    fn bad_input_is_an_error_never_a_panic() {
        let d = crate::text::from_hex(REAL).unwrap();
        for n in 0..d.len() {
            // every cut: an error, or (cut after the description) a reply without protocols
            if let Ok(r) = decode_reply(&d[..n]) {
                assert!(n >= 38, "{n}");
                assert_eq!(r.protocols, None);
            }
        }
        assert_eq!(
            decode_reply(b"\x00\x0dx\0").unwrap_err().kind,
            DecodeErrorKind::BadMagic
        );
        // a count byte that lies: 255 names announced, 2 sent
        let mut lying = d[..38].to_vec();
        lying.extend_from_slice(b"\xffA\0B\0");
        assert_eq!(decode_reply(&lying).unwrap_err().field, "protocol");
        // 64 KiB of empty names: MAX_PROTOCOLS kept
        let mut many = d[..38].to_vec();
        many.push(255);
        many.resize(38 + 1 + 255, 0);
        let r = decode_reply(&many).unwrap();
        assert_eq!(r.protocols.unwrap().len(), MAX_PROTOCOLS);
        // Latin-1 description, unknown mode and mission bytes
        let r = decode_reply(b"\x00\x0ev\0\x01\x02\x03\xfe\xfeCaf\xe9\0").unwrap();
        assert_eq!(r.description, "Café");
        assert_eq!((r.mode_name(), r.mission_name()), (None, None));
        assert_eq!(r.warnings.len(), 1);
        assert!(!looks_like_reply(b"\x00\x0e\x01\x02\0"));
    }
}

//! The wire format of NetQuake's connection-control queries (Quake and Hexen II
//! servers: id's WinQuake and its ports, DarkPlaces, QuakeSpasm, FitzQuake, uHexen2),
//! decoded through the bounded reader and encoded back.
//!
//! ```text
//! datagram  HEADER OP DATA         HEADER: u32 big-endian, 0x8000_0000 | its length
//! requests  02 GAME\0 VERSION       server info; GAME `QUAKE` (version 3) or `HEXENII` (4)
//!           03 SLOT                 the SLOT-th connected player (from 0)
//!           04 NAME\0               the rule after NAME (`` for the first)
//! replies   83 ADDRESS\0 HOSTNAME\0 MAP\0 PLAYERS MAX VERSION
//!           84 SLOT NAME\0 COLOURS FRAGS SECONDS ADDRESS\0   (three i32 little-endian)
//!           85 NAME\0 VALUE\0       (nothing after the op: no rule after that one)
//!           81 REASON\0             reject (CCREP_REJECT)
//! ```
//!
//! A datagram whose header does not say its own length is refused (the engines drop
//! it). Strings are NUL-terminated, at most as long as the datagram.

use crate::error::{DecodeError, DecodeErrorKind};
use crate::reader::Reader;

/// The control flag of the header.
pub const NETFLAG_CTL: u32 = 0x8000_0000;

/// Which game a server-info request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Game {
    /// `QUAKE`, network protocol 3.
    Quake,
    /// `HEXENII`, network protocol 4 (Hexen II's servers ignore `QUAKE`).
    HexenII,
}

impl Game {
    /// Its name on the wire.
    pub const fn word(self) -> &'static [u8] {
        match self {
            Self::Quake => b"QUAKE",
            Self::HexenII => b"HEXENII",
        }
    }

    /// Its network protocol version.
    pub const fn version(self) -> u8 {
        match self {
            Self::Quake => 3,
            Self::HexenII => 4,
        }
    }
}

/// A query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// CCREQ_SERVER_INFO.
    ServerInfo(Game),
    /// CCREQ_PLAYER_INFO: the slot-th connected player.
    PlayerInfo(u8),
    /// CCREQ_RULE_INFO: the rule after this one (empty: the first).
    RuleInfo(Vec<u8>),
}

impl Request {
    /// Appends the datagram to `out` (a rule name is cut at a NUL).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        match self {
            Self::ServerInfo(g) => {
                out.push(0x02);
                out.extend_from_slice(g.word());
                out.push(0);
                out.push(g.version());
            }
            Self::PlayerInfo(slot) => {
                out.push(0x03);
                out.push(*slot);
            }
            Self::RuleInfo(prev) => {
                out.push(0x04);
                out.extend(prev.iter().take_while(|&&b| b != 0));
                out.push(0);
            }
        }
        write_header(out, start);
    }
}

/// Fills the header at `start` with the length of what follows it.
fn write_header(out: &mut [u8], start: usize) {
    let len = u32::try_from(out.len().saturating_sub(start)).unwrap_or(u32::MAX) & 0xffff;
    if let Some(h) = out.get_mut(start..start + 4) {
        h.copy_from_slice(&(NETFLAG_CTL | len).to_be_bytes());
    }
}

/// CCREP_SERVER_INFO.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServerInfo {
    /// The address the server gives itself (often `LOCAL` or its LAN address).
    pub address: Vec<u8>,
    /// The host name.
    pub hostname: Vec<u8>,
    /// The map.
    pub map: Vec<u8>,
    /// Players connected.
    pub players: u8,
    /// Slots.
    pub max_players: u8,
    /// Network protocol version (3 Quake, 4 Hexen II).
    pub version: u8,
}

/// CCREP_PLAYER_INFO.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlayerInfo {
    /// The slot asked for.
    pub slot: u8,
    /// The name (Quake character set).
    pub name: Vec<u8>,
    /// Shirt colour × 16 + pants colour.
    pub colors: i32,
    /// Frags.
    pub frags: i32,
    /// Seconds connected.
    pub seconds: i32,
    /// The player's address as the server writes it.
    pub address: Vec<u8>,
}

/// A reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// CCREP_SERVER_INFO.
    ServerInfo(ServerInfo),
    /// CCREP_PLAYER_INFO.
    PlayerInfo(PlayerInfo),
    /// CCREP_RULE_INFO: a rule, or `None` after the last.
    RuleInfo(Option<(Vec<u8>, Vec<u8>)>),
    /// CCREP_REJECT with its reason.
    Reject(Vec<u8>),
}

impl Reply {
    /// Appends the datagram to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        let cstr = |out: &mut Vec<u8>, s: &[u8]| {
            out.extend(s.iter().take_while(|&&b| b != 0));
            out.push(0);
        };
        match self {
            Self::ServerInfo(s) => {
                out.push(0x83);
                cstr(out, &s.address);
                cstr(out, &s.hostname);
                cstr(out, &s.map);
                out.extend_from_slice(&[s.players, s.max_players, s.version]);
            }
            Self::PlayerInfo(p) => {
                out.push(0x84);
                out.push(p.slot);
                cstr(out, &p.name);
                for n in [p.colors, p.frags, p.seconds] {
                    out.extend_from_slice(&n.to_le_bytes());
                }
                cstr(out, &p.address);
            }
            Self::RuleInfo(rule) => {
                out.push(0x85);
                if let Some((k, v)) = rule {
                    cstr(out, k);
                    cstr(out, v);
                }
            }
            Self::Reject(why) => {
                out.push(0x81);
                cstr(out, why);
            }
        }
        write_header(out, start);
    }

    /// The datagram in a buffer of its own.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        self.encode(&mut out);
        out
    }
}

/// The op byte of a control datagram whose header says its own length, if it is one.
pub fn control_op(datagram: &[u8]) -> Option<u8> {
    let (h, rest) = datagram.split_first_chunk::<4>()?;
    let h = u32::from_be_bytes(*h);
    let len = usize::try_from(h & 0xffff).ok()?;
    (h & 0xffff_0000 == NETFLAG_CTL && len == datagram.len())
        .then(|| rest.first().copied())
        .flatten()
}

/// Whether `datagram` is one of the requests or replies above.
pub fn is_netquake(datagram: &[u8]) -> bool {
    matches!(control_op(datagram), Some(0x02..=0x04 | 0x81 | 0x83..=0x85))
}

fn header(r: &mut Reader<'_>, len: usize) -> Result<u8, DecodeError> {
    let h = u32::from_be_bytes(r.array::<4>("header")?);
    if h & 0xffff_0000 != NETFLAG_CTL {
        return Err(DecodeError::new(0, "header", DecodeErrorKind::BadMagic));
    }
    if usize::try_from(h & 0xffff).ok() != Some(len) {
        return Err(DecodeError::invalid(
            2,
            "header",
            "its length is not the datagram's",
        ));
    }
    r.u8("op")
}

/// Decodes a request.
pub fn decode_request(datagram: &[u8]) -> Result<Request, DecodeError> {
    let mut r = Reader::new(datagram);
    let at = 4;
    let req = match header(&mut r, datagram.len())? {
        0x02 => {
            let game = r.cstr("game")?;
            let version = r.u8("version")?;
            match (game, version) {
                (b"QUAKE", 3) => Request::ServerInfo(Game::Quake),
                (b"HEXENII", 4) => Request::ServerInfo(Game::HexenII),
                _ => {
                    return Err(DecodeError::invalid(
                        5,
                        "game",
                        "neither QUAKE 3 nor HEXENII 4",
                    ))
                }
            }
        }
        0x03 => Request::PlayerInfo(r.u8("player")?),
        0x04 => Request::RuleInfo(r.cstr("rule")?.to_vec()),
        _ => {
            return Err(DecodeError::invalid(
                at,
                "op",
                "not a server, player or rule query",
            ))
        }
    };
    if !r.is_empty() {
        return Err(DecodeError::invalid(
            r.offset(),
            "request",
            "bytes after its end",
        ));
    }
    Ok(req)
}

/// Decodes a reply.
pub fn decode_reply(datagram: &[u8]) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(datagram);
    let reply = match header(&mut r, datagram.len())? {
        0x83 => Reply::ServerInfo(ServerInfo {
            address: r.cstr("address")?.to_vec(),
            hostname: r.cstr("hostname")?.to_vec(),
            map: r.cstr("map")?.to_vec(),
            players: r.u8("players")?,
            max_players: r.u8("max players")?,
            version: r.u8("version")?,
        }),
        0x84 => Reply::PlayerInfo(PlayerInfo {
            slot: r.u8("player")?,
            name: r.cstr("player name")?.to_vec(),
            colors: r.i32_le("colors")?,
            frags: r.i32_le("frags")?,
            seconds: r.i32_le("connect time")?,
            address: r.cstr("player address")?.to_vec(),
        }),
        0x85 if r.is_empty() => Reply::RuleInfo(None),
        0x85 => Reply::RuleInfo(Some((
            r.cstr("rule name")?.to_vec(),
            r.cstr("rule value")?.to_vec(),
        ))),
        0x81 => Reply::Reject(r.cstr("reason")?.to_vec()),
        _ => {
            return Err(DecodeError::invalid(
                4,
                "op",
                "not a server, player or rule reply",
            ))
        }
    };
    if !r.is_empty() {
        return Err(DecodeError::invalid(
            r.offset(),
            "reply",
            "bytes after its end",
        ));
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_qstats_bytes() {
        let mut out = Vec::new();
        Request::ServerInfo(Game::Quake).encode(&mut out);
        assert_eq!(out, b"\x80\x00\x00\x0c\x02QUAKE\x00\x03");
        out.clear();
        Request::ServerInfo(Game::HexenII).encode(&mut out);
        assert_eq!(out, b"\x80\x00\x00\x0e\x02HEXENII\x00\x04");
        out.clear();
        Request::PlayerInfo(2).encode(&mut out);
        assert_eq!(out, b"\x80\x00\x00\x06\x03\x02");
        assert_eq!(decode_request(&out), Ok(Request::PlayerInfo(2)));
        out.clear();
        Request::RuleInfo(b"sv_gravity".to_vec()).encode(&mut out);
        assert_eq!(
            decode_request(&out),
            Ok(Request::RuleInfo(b"sv_gravity".to_vec()))
        );
        assert!(is_netquake(&out));
    }

    #[test]
    fn replies_round_trip_and_lengths_must_agree() {
        for r in [
            Reply::ServerInfo(ServerInfo {
                address: b"LOCAL".to_vec(),
                hostname: b"NQ".to_vec(),
                map: b"e1m1".to_vec(),
                players: 1,
                max_players: 8,
                version: 3,
            }),
            Reply::PlayerInfo(PlayerInfo {
                slot: 0,
                name: b"Ranger".to_vec(),
                colors: 0x4c,
                frags: -2,
                seconds: 90,
                address: b"127.0.0.1:1".to_vec(),
            }),
            Reply::RuleInfo(Some((b"sv_gravity".to_vec(), b"800".to_vec()))),
            Reply::RuleInfo(None),
            Reply::Reject(b"Server is full.\n".to_vec()),
        ] {
            let b = r.to_bytes();
            assert_eq!(decode_reply(&b), Ok(r.clone()));
            let mut longer = b.clone();
            longer.push(0);
            assert_eq!(decode_reply(&longer).unwrap_err().field, "header");
            let mut cut = b.clone();
            cut.pop();
            cut[3] -= 1;
            assert!(decode_reply(&cut).is_err());
        }
        assert!(!is_netquake(b"\xff\xff\xff\xffstatus"));
    }
}

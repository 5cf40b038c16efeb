//! RakNet's unconnected ping and pong, as Minecraft: Bedrock Edition (and Education
//! Edition) servers answer them, decoded through the bounded reader and encoded back.
//!
//! * Ping (client → server, 33 bytes): `01` (or `02`, "open connections only"), the
//!   client's time (u64, big-endian), the 16-byte offline-message magic, the client's
//!   GUID (u64).
//! * Pong (server → client): `1C`, the ping's time echoed, the server's GUID, the magic,
//!   then a u16 (big-endian) length and that many bytes: the advertisement
//!   `MCPE;motd;protocol;version;online;max;serverId;subMotd;gameMode;gameModeNumeric;portV4;portV6;`
//!   (read by [`Advertisement::parse`]).
//!
//! The advertisement is split on every `;`, as the game and mcstatus do: a MOTD cannot
//! carry one (servers that escape it with `\` are read as mcstatus reads them). Fields
//! are text; the numbers are parsed by [`Advertisement`], which keeps the text as sent.

use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::reader::Reader;
use crate::text::Text;

/// RakNet's offline-message magic, in every unconnected packet.
pub const MAGIC: [u8; 16] = [
    0x00, 0xff, 0xff, 0x00, 0xfe, 0xfe, 0xfe, 0xfe, 0xfd, 0xfd, 0xfd, 0xfd, 0x12, 0x34, 0x56, 0x78,
];

/// The unconnected ping's packet id.
pub const PING: u8 = 0x01;
/// The "open connections only" ping: a server that is full does not answer it.
pub const PING_OPEN: u8 = 0x02;
/// The unconnected pong's packet id.
pub const PONG: u8 = 0x1c;
/// Length of a ping.
pub const PING_LEN: usize = 1 + 8 + 16 + 8;
/// Bytes of a pong before its advertisement (id, time, GUID, magic, length).
pub const PONG_HEADER: usize = 1 + 8 + 8 + 16 + 2;

/// Most advertisement fields read; the rest are counted in a warning and dropped.
pub const MAX_FIELDS: usize = 32;

/// An unconnected ping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ping {
    /// The client's time, echoed by the pong.
    pub time: u64,
    /// The client's GUID.
    pub client_guid: u64,
    /// `02` ("open connections only") rather than `01`.
    pub open_only: bool,
}

impl Ping {
    /// Appends the 33 bytes of the ping to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(if self.open_only { PING_OPEN } else { PING });
        out.extend_from_slice(&self.time.to_be_bytes());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&self.client_guid.to_be_bytes());
    }

    /// Reads a ping. Bytes after the GUID are allowed (some clients pad) and ignored.
    pub fn decode(datagram: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(datagram);
        let at = r.offset();
        let open_only = match r.u8("packet id")? {
            PING => false,
            PING_OPEN => true,
            _ => {
                return Err(DecodeError::new(
                    at,
                    "packet id",
                    DecodeErrorKind::Invalid("not an unconnected ping (01 or 02)"),
                ))
            }
        };
        let time = u64_be(&mut r, "time")?;
        magic(&mut r)?;
        let client_guid = u64_be(&mut r, "client GUID")?;
        Ok(Self {
            time,
            client_guid,
            open_only,
        })
    }
}

/// An unconnected pong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pong {
    /// The ping's time, echoed.
    pub time: u64,
    /// The server's GUID.
    pub server_guid: u64,
    /// The advertisement string as sent (invalid UTF-8 replaced, with a warning).
    pub advertisement: Text,
}

/// A decoded pong and what was noticed on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedPong {
    /// The pong.
    pub pong: Pong,
    /// Lossy text, bytes after the string.
    pub warnings: Vec<DecodeWarning>,
}

impl Pong {
    /// Appends the pong to `out`. An advertisement longer than 65,535 bytes is cut at a
    /// character boundary below that length (its length field is a u16).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(PONG);
        out.extend_from_slice(&self.time.to_be_bytes());
        out.extend_from_slice(&self.server_guid.to_be_bytes());
        out.extend_from_slice(&MAGIC);
        let mut text = self.advertisement.as_str();
        let mut cut = text.len().min(usize::from(u16::MAX));
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text = text.get(..cut).unwrap_or_default();
        let len = u16::try_from(text.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(text.as_bytes());
    }

    /// Reads a pong: every field must be there, the magic must be RakNet's, and the
    /// string must fit in the datagram. Bytes after the string are a warning.
    pub fn decode(datagram: &[u8]) -> Result<DecodedPong, DecodeError> {
        let mut r = Reader::new(datagram);
        let at = r.offset();
        if r.u8("packet id")? != PONG {
            return Err(DecodeError::new(
                at,
                "packet id",
                DecodeErrorKind::Invalid("not an unconnected pong (1C)"),
            ));
        }
        let time = u64_be(&mut r, "time")?;
        let server_guid = u64_be(&mut r, "server GUID")?;
        magic(&mut r)?;
        let len = r.u16_be("advertisement length")?;
        let at = r.offset();
        let bytes = r.take(usize::from(len), "advertisement")?;
        let mut warnings = Vec::new();
        let advertisement = match std::str::from_utf8(bytes) {
            Ok(s) => Text::from(s),
            Err(_) => {
                warnings.push(DecodeWarning {
                    offset: at,
                    field: "advertisement",
                    message: "not UTF-8: invalid bytes replaced",
                });
                Text::from(String::from_utf8_lossy(bytes))
            }
        };
        if !r.is_empty() {
            warnings.push(DecodeWarning {
                offset: r.offset(),
                field: "advertisement",
                message: "bytes after the advertisement ignored",
            });
        }
        Ok(DecodedPong {
            pong: Pong {
                time,
                server_guid,
                advertisement,
            },
            warnings,
        })
    }
}

fn u64_be(r: &mut Reader<'_>, field: &'static str) -> Result<u64, DecodeError> {
    r.array::<8>(field).map(u64::from_be_bytes)
}

fn magic(r: &mut Reader<'_>) -> Result<(), DecodeError> {
    let at = r.offset();
    if r.array::<16>("magic")? != MAGIC {
        return Err(DecodeError::new(at, "magic", DecodeErrorKind::BadMagic));
    }
    Ok(())
}

/// The packet id of a RakNet unconnected ping or pong, when `datagram` carries the magic
/// where that packet has it (a test of its first 25 or 33 bytes, no decoding).
pub fn packet_kind(datagram: &[u8]) -> Option<u8> {
    let mut r = Reader::new(datagram);
    let id = r.u8("packet id").ok()?;
    let skip = match id {
        PING | PING_OPEN => 8,
        PONG => 16,
        _ => return None,
    };
    r.take(skip, "header").ok()?;
    (r.array::<16>("magic").ok()? == MAGIC).then_some(id)
}

/// A pong's advertisement, field by field. Every field after the edition is optional:
/// short strings (older servers, proxies) stop early, and numbers that do not parse are
/// `None` with the text kept in [`Advertisement::fields`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Advertisement {
    /// Every field as sent, in order (at most [`MAX_FIELDS`]); the empty field after a
    /// final `;` is not one.
    pub fields: Vec<Text>,
    /// Fields past [`MAX_FIELDS`] that were dropped.
    pub dropped: usize,
}

/// The names of the advertisement's fields, in order (`rules` keys).
pub const FIELD_NAMES: [&str; 12] = [
    "edition",
    "motd",
    "protocol",
    "version",
    "online",
    "max",
    "server_id",
    "sub_motd",
    "game_mode",
    "game_mode_numeric",
    "port_v4",
    "port_v6",
];

impl Advertisement {
    /// Splits `text` on `;`.
    pub fn parse(text: &str) -> Self {
        let text = text.strip_suffix(';').unwrap_or(text);
        let mut fields = Vec::new();
        let mut dropped = 0;
        if !text.is_empty() {
            for f in text.split(';') {
                if fields.len() < MAX_FIELDS {
                    fields.push(Text::from(f));
                } else {
                    dropped += 1;
                }
            }
        }
        Self { fields, dropped }
    }

    /// The advertisement string these fields make (each followed by `;`).
    pub fn to_text(&self) -> Text {
        let mut s = Text::default();
        for f in &self.fields {
            s.push_str(f);
            s.push(';');
        }
        s
    }

    /// Field `i` as sent.
    pub fn field(&self, i: usize) -> Option<&str> {
        self.fields.get(i).map(Text::as_str)
    }

    fn number<T: std::str::FromStr>(&self, i: usize) -> Option<T> {
        self.field(i).and_then(|s| s.trim().parse().ok())
    }

    /// `MCPE` (Bedrock) or `MCEE` (Education Edition).
    pub fn edition(&self) -> Option<&str> {
        self.field(0)
    }
    /// The MOTD, with its `§` formatting codes.
    pub fn motd(&self) -> Option<&str> {
        self.field(1)
    }
    /// The network protocol number.
    pub fn protocol(&self) -> Option<u32> {
        self.number(2)
    }
    /// The game version (`1.20.40`).
    pub fn version(&self) -> Option<&str> {
        self.field(3)
    }
    /// Players online.
    pub fn online(&self) -> Option<u32> {
        self.number(4)
    }
    /// Most players.
    pub fn max(&self) -> Option<u32> {
        self.number(5)
    }
    /// The server's id (its GUID as a decimal number, on the vanilla server).
    pub fn server_id(&self) -> Option<&str> {
        self.field(6)
    }
    /// The second MOTD line: the level (world) name on the vanilla server.
    pub fn sub_motd(&self) -> Option<&str> {
        self.field(7)
    }
    /// The game mode (`Survival`, `Creative`, `Adventure`).
    pub fn game_mode(&self) -> Option<&str> {
        self.field(8)
    }
    /// The game mode as a number (`1` is Survival on the vanilla server).
    pub fn game_mode_numeric(&self) -> Option<i64> {
        self.number(9)
    }
    /// The IPv4 game port (`None` when absent, not a port, or `-1`/`0`).
    pub fn port_v4(&self) -> Option<u16> {
        self.number::<u16>(10).filter(|p| *p != 0)
    }
    /// The IPv6 game port (as [`Advertisement::port_v4`]).
    pub fn port_v6(&self) -> Option<u16> {
        self.number::<u16>(11).filter(|p| *p != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::from_hex;

    #[test]
    fn ping_is_33_bytes_and_reads_back() {
        let p = Ping {
            time: 0x0102_0304_0506_0708,
            client_guid: 42,
            open_only: false,
        };
        let mut out = Vec::new();
        p.encode(&mut out);
        assert_eq!(out.len(), PING_LEN);
        assert_eq!(
            crate::text::to_hex(&out),
            "01010203040506070800ffff00fefefefefdfdfdfd12345678000000000000002a"
        );
        assert_eq!(Ping::decode(&out), Ok(p));
        assert_eq!(packet_kind(&out), Some(PING));
        out[10] ^= 1;
        assert_eq!(
            Ping::decode(&out).unwrap_err().kind,
            DecodeErrorKind::BadMagic
        );
        assert_eq!(packet_kind(&out), None);
    }

    #[test]
    fn pong_reads_and_rejects_what_does_not_fit() {
        let pong = Pong {
            time: 7,
            server_guid: 9,
            advertisement: "MCPE;§aHi;1;1.0;0;10;".into(),
        };
        let mut out = Vec::new();
        pong.encode(&mut out);
        assert_eq!(packet_kind(&out), Some(PONG));
        let d = Pong::decode(&out).unwrap();
        assert_eq!(d.pong, pong);
        assert!(d.warnings.is_empty());
        // a length past the end is an error naming the field
        let mut long = out.clone();
        long[33] = 0xff;
        let e = Pong::decode(&long).unwrap_err();
        assert_eq!((e.field, e.offset), ("advertisement", PONG_HEADER));
        // trailing bytes are a warning
        out.push(0);
        assert_eq!(Pong::decode(&out).unwrap().warnings.len(), 1);
        // every truncation is an error
        for n in 0..out.len() - 1 {
            assert!(Pong::decode(&out[..n]).is_err(), "{n}");
        }
        assert!(from_hex("1c").is_some_and(|d| Pong::decode(&d).is_err()));
    }

    #[test]
    fn advertisement_fields_short_and_long() {
        let a = Advertisement::parse(
            "MCPE;Dedicated Server;924;1.26.3;0;10;9446695611411291546;Bedrock level;Survival;1;19132;19133;0;",
        );
        assert_eq!(a.fields.len(), 13);
        assert_eq!(a.edition(), Some("MCPE"));
        assert_eq!(a.protocol(), Some(924));
        assert_eq!((a.online(), a.max()), (Some(0), Some(10)));
        assert_eq!((a.port_v4(), a.port_v6()), (Some(19132), Some(19133)));
        assert_eq!(a.game_mode_numeric(), Some(1));
        let s = Advertisement::parse("MCEE;Class;390;1.14.60;1;40");
        assert_eq!(s.edition(), Some("MCEE"));
        assert_eq!(s.sub_motd(), None);
        assert_eq!(s.max(), Some(40));
        let g = Advertisement::parse("MCPE;x;422;;1;69;1;;Default;1;19132;-1;");
        assert_eq!(g.version(), Some(""));
        assert_eq!(g.port_v6(), None);
        assert_eq!(Advertisement::parse("").fields.len(), 0);
        let many = Advertisement::parse(&";".repeat(100));
        assert_eq!(
            (many.fields.len(), many.dropped),
            (MAX_FIELDS, 100 - MAX_FIELDS)
        );
    }
}

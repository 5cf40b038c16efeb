//! SA-MP's and open.mp's query, decoded through the bounded reader.
//!
//! Every request is 11 bytes: `SAMP`, the server's IPv4 address (4 bytes) and port
//! (16 bits little-endian) as the client addressed it, and an opcode; every reply
//! starts with the same 11 bytes. Numbers are little-endian.
//!
//! * `i`, information: password (1 byte), players (u16), max players (u16), then three
//!   strings with a u32 length: host name, game mode, and the language (the map before
//!   SA-MP 0.3.7).
//! * `r`, rules: a u16 count, then pairs of strings with a u8 length (`version`,
//!   `mapname`, `weather`, `weburl`, `worldtime`, `lagcomp`…).
//! * `c`, clients: a u16 count, then per player a u8-length name and an i32 score.
//!   Servers send no reply at all with more than 100 players.
//! * `d`, detailed clients (SA-MP only): a u16 count, then per player an id byte, a
//!   u8-length name, an i32 score and a u32 ping.
//! * `o`, open.mp's extra information (SA-MP sends nothing): four strings with a u32
//!   length: a Discord invite, a light and a dark banner's URL, and a logo's URL (the
//!   logo is missing from older open.mp servers).
//! * `p`, ping: four bytes after the header, echoed.
//!
//! VC:MP (Vice City Multiplayer) speaks the same query with another [`Dialect`]: its
//! requests start with `VCMP`, its replies with `MP04`, its `i` reply has the server's
//! version first (12 bytes, NUL-padded), and it answers `i` and `c` only.
//!
//! Strings are in the server's code page (Windows-1252, Windows-1251 on Russian
//! servers…): UTF-8 when they are, else the chosen charset, else Latin-1 with a warning.

use crate::charset::Charset;
use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::model::Text;
use crate::reader::Reader;
use crate::text::{decode_text, Unchosen};

/// The first four bytes of every request and reply.
pub const MAGIC: [u8; 4] = *b"SAMP";
/// The length of VC:MP's version, ahead of its `i` reply.
pub const VCMP_VERSION_LEN: usize = 12;

/// Which variant of the query: the magic of the requests and of the replies, and
/// whether the `i` reply starts with a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    /// The first four bytes of a request.
    pub request_magic: [u8; 4],
    /// The first four bytes of a reply.
    pub reply_magic: [u8; 4],
    /// The length of the version ahead of the `i` reply (0: none).
    pub version_len: usize,
}

impl Dialect {
    /// SA-MP and open.mp: `SAMP` both ways.
    pub const SAMP: Dialect = Dialect {
        request_magic: MAGIC,
        reply_magic: MAGIC,
        version_len: 0,
    };
    /// VC:MP: `VCMP` out, `MP04` back, a 12-byte version ahead of the information.
    pub const VCMP: Dialect = Dialect {
        request_magic: *b"VCMP",
        reply_magic: *b"MP04",
        version_len: VCMP_VERSION_LEN,
    };
}
/// The length of a request (and of every reply's header).
pub const HEADER_LEN: usize = 11;
/// Most rules kept; further pairs are read and dropped with a warning.
pub const MAX_RULES: usize = 1024;
/// Most players kept; further records are read and dropped with a warning.
pub const MAX_PLAYERS: usize = 1024;

/// The opcodes.
pub mod opcode {
    /// Server information.
    pub const INFO: u8 = b'i';
    /// Rules.
    pub const RULES: u8 = b'r';
    /// Players: name and score.
    pub const CLIENTS: u8 = b'c';
    /// Players: id, name, score and ping.
    pub const DETAILED: u8 = b'd';
    /// open.mp's extra information.
    pub const OPENMP: u8 = b'o';
    /// Ping.
    pub const PING: u8 = b'p';
}

/// A request (and the header of its reply).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The server's IPv4 address as addressed.
    pub addr: [u8; 4],
    /// The server's port as addressed.
    pub port: u16,
    /// What is asked ([`opcode`]).
    pub opcode: u8,
}

impl Request {
    /// Appends the request's 11 bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.encode_with(MAGIC, out);
    }

    /// Appends the 11 bytes with `magic` first (a dialect's request or reply magic).
    pub fn encode_with(&self, magic: [u8; 4], out: &mut Vec<u8>) {
        out.extend_from_slice(&magic);
        out.extend_from_slice(&self.addr);
        out.extend_from_slice(&self.port.to_le_bytes());
        out.push(self.opcode);
    }

    /// The header at the start of `d`, if it has one.
    pub fn of(d: &[u8]) -> Option<Self> {
        Self::of_magic(d, MAGIC)
    }

    /// The header at the start of `d`, if it has one and starts with `magic`.
    pub fn of_magic(d: &[u8], magic: [u8; 4]) -> Option<Self> {
        let h: &[u8; HEADER_LEN] = d.get(..HEADER_LEN)?.try_into().ok()?;
        let [m0, m1, m2, m3, a, b, c, e, p0, p1, opcode] = *h;
        ([m0, m1, m2, m3] == magic).then_some(Self {
            addr: [a, b, c, e],
            port: u16::from_le_bytes([p0, p1]),
            opcode,
        })
    }
}

/// The `i` reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Info {
    /// VC:MP's version (its 12 bytes up to the first NUL); `None` for SA-MP.
    pub version: Option<Text>,
    /// Whether a password is needed (the byte as sent: 0 no).
    pub password: u8,
    /// Players connected.
    pub players: u16,
    /// The most players it takes.
    pub max_players: u16,
    /// The server's name.
    pub host_name: Text,
    /// The game mode's text.
    pub game_mode: Text,
    /// The language (SA-MP 0.3.7 on; the map name before).
    pub language: Text,
}

/// One player of a `c` or `d` reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SampPlayer {
    /// The player's id (`d` only).
    pub id: Option<u8>,
    /// The name.
    pub name: Text,
    /// The score.
    pub score: i32,
    /// The ping in milliseconds (`d` only).
    pub ping: Option<u32>,
}

/// open.mp's `o` reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Extra {
    /// The Discord invite.
    pub discord: Text,
    /// The light banner's URL.
    pub light_banner: Text,
    /// The dark banner's URL.
    pub dark_banner: Text,
    /// The logo's URL (`None`: an older server sends none).
    pub logo: Option<Text>,
}

/// What one reply holds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Body {
    /// `i`.
    Info(Info),
    /// `r`, in wire order.
    Rules(Vec<(Text, Text)>),
    /// `c` or `d`.
    Players(Vec<SampPlayer>),
    /// `o`.
    Extra(Extra),
    /// `p`: the four bytes echoed.
    Ping([u8; 4]),
}

/// A decoded reply.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reply {
    /// The header (the request it answers).
    pub header: Request,
    /// What it holds.
    pub body: Body,
    /// What was read in a tolerant way.
    pub warnings: Vec<DecodeWarning>,
}

/// Reads a reply, strings that are not UTF-8 as Latin-1.
pub fn decode_reply(datagram: &[u8]) -> Result<Reply, DecodeError> {
    decode_reply_with(datagram, Charset::Auto)
}

/// Reads a reply, strings that are not UTF-8 in `charset` (`Auto`: Latin-1, with a
/// warning).
pub fn decode_reply_with(datagram: &[u8], charset: Charset) -> Result<Reply, DecodeError> {
    decode_reply_as(datagram, charset, &Dialect::SAMP)
}

/// Reads a reply of `dialect`, strings that are not UTF-8 in `charset`.
pub fn decode_reply_as(
    datagram: &[u8],
    charset: Charset,
    dialect: &Dialect,
) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(datagram).with_charset(charset);
    let head = r.take(HEADER_LEN, "header")?;
    let Some(header) = Request::of_magic(head, dialect.reply_magic) else {
        return Err(DecodeError::new(0, "magic", DecodeErrorKind::BadMagic));
    };
    let mut s = Strings::default();
    let body = match header.opcode {
        opcode::INFO => Body::Info(Info {
            version: match dialect.version_len {
                0 => None,
                n => Some(s.text(&mut r, n, "version", true)?),
            },
            password: r.u8("password")?,
            players: r.u16_le("players")?,
            max_players: r.u16_le("max players")?,
            host_name: s.long(&mut r, "host name")?,
            game_mode: s.long(&mut r, "game mode")?,
            language: s.long(&mut r, "language")?,
        }),
        opcode::RULES => {
            let count = r.u16_le("rule count")?;
            let mut rules = Vec::new();
            let mut dropped = false;
            for _ in 0..count {
                let k = s.short(&mut r, "rule name")?;
                let v = s.short(&mut r, "rule value")?;
                if rules.len() < MAX_RULES {
                    rules.push((k, v));
                } else if !dropped {
                    dropped = true;
                    s.note(r.offset(), "rule", "rules past the cap dropped");
                }
            }
            Body::Rules(rules)
        }
        op @ (opcode::CLIENTS | opcode::DETAILED) => {
            let count = r.u16_le("player count")?;
            let mut players = Vec::new();
            let mut dropped = false;
            for _ in 0..count {
                let id = match op {
                    opcode::DETAILED => Some(r.u8("player id")?),
                    _ => None,
                };
                let name = s.short(&mut r, "player name")?;
                let score = r.i32_le("player score")?;
                let ping = match op {
                    opcode::DETAILED => Some(r.u32_le("player ping")?),
                    _ => None,
                };
                if players.len() < MAX_PLAYERS {
                    players.push(SampPlayer {
                        id,
                        name,
                        score,
                        ping,
                    });
                } else if !dropped {
                    dropped = true;
                    s.note(r.offset(), "player", "players past the cap dropped");
                }
            }
            Body::Players(players)
        }
        opcode::OPENMP => Body::Extra(Extra {
            discord: s.long(&mut r, "discord")?,
            light_banner: s.long(&mut r, "light banner")?,
            dark_banner: s.long(&mut r, "dark banner")?,
            logo: match r.is_empty() {
                true => None,
                false => Some(s.long(&mut r, "logo")?),
            },
        }),
        opcode::PING => Body::Ping(r.array::<4>("ping")?),
        _ => {
            return Err(DecodeError::new(
                HEADER_LEN - 1,
                "opcode",
                DecodeErrorKind::Invalid("not an opcode of the query"),
            ))
        }
    };
    if !r.is_empty() {
        s.note(r.offset(), "reply", "bytes after the reply ignored");
    }
    Ok(Reply {
        header,
        body,
        warnings: s.finish(),
    })
}

/// The string reader and what it noticed.
#[derive(Default)]
struct Strings {
    latin1: Option<usize>,
    warnings: Vec<DecodeWarning>,
}

impl Strings {
    /// A string with a u32 length (bounded by the datagram: the reader checks).
    fn long(&mut self, r: &mut Reader<'_>, field: &'static str) -> Result<Text, DecodeError> {
        let at = r.offset();
        let n = r.u32_le(field)?;
        let n = usize::try_from(n).map_err(|_| {
            DecodeError::new(
                at,
                field,
                DecodeErrorKind::TooLarge {
                    limit: usize::MAX as u64,
                },
            )
        })?;
        self.text(r, n, field, false)
    }

    /// A string with a u8 length.
    fn short(&mut self, r: &mut Reader<'_>, field: &'static str) -> Result<Text, DecodeError> {
        let n = r.u8(field)?;
        self.text(r, usize::from(n), field, false)
    }

    /// A string of `n` bytes; `nul_padded`: cut at its first NUL (VC:MP's version).
    fn text(
        &mut self,
        r: &mut Reader<'_>,
        n: usize,
        field: &'static str,
        nul_padded: bool,
    ) -> Result<Text, DecodeError> {
        let at = r.offset();
        let mut bytes = r.take(n, field)?;
        if nul_padded {
            bytes = bytes.split(|&b| b == 0).next().unwrap_or_default();
        }
        let found = std::str::from_utf8(bytes).map_err(|_| bytes);
        let (text, guessed) = decode_text(found, r, Unchosen::Latin1);
        if guessed {
            self.latin1.get_or_insert(at);
        }
        Ok(text)
    }

    fn note(&mut self, offset: usize, field: &'static str, message: &'static str) {
        self.warnings.push(DecodeWarning {
            offset,
            field,
            message,
        });
    }

    fn finish(mut self) -> Vec<DecodeWarning> {
        if let Some(at) = self.latin1 {
            self.note(at, "string", "not UTF-8: read as Latin-1");
        }
        self.warnings
    }
}

/// Appends `s` with a u32 length.
fn put_long(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&u32::try_from(s.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// Appends `s` with a u8 length (cut to 255 bytes at a character boundary).
fn put_short(out: &mut Vec<u8>, s: &str) {
    let mut end = s.len().min(255);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let s = s.get(..end).unwrap_or_default();
    out.push(u8::try_from(s.len()).unwrap_or(u8::MAX));
    out.extend_from_slice(s.as_bytes());
}

impl Reply {
    /// Appends the reply's bytes (for tests and replays): what [`decode_reply`] reads
    /// back; a `c` header writes players without id nor ping, a `d` header with them.
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.encode_as(&Dialect::SAMP, out);
    }

    /// Appends the reply's bytes in `dialect` (what [`decode_reply_as`] reads back).
    pub fn encode_as(&self, dialect: &Dialect, out: &mut Vec<u8>) {
        self.header.encode_with(dialect.reply_magic, out);
        match &self.body {
            Body::Info(i) => {
                if dialect.version_len > 0 {
                    let v = i.version.as_deref().unwrap_or_default().as_bytes();
                    let v = v
                        .get(..v.len().min(dialect.version_len))
                        .unwrap_or_default();
                    out.extend_from_slice(v);
                    out.resize(out.len() + dialect.version_len - v.len(), 0);
                }
                out.push(i.password);
                out.extend_from_slice(&i.players.to_le_bytes());
                out.extend_from_slice(&i.max_players.to_le_bytes());
                for t in [&i.host_name, &i.game_mode, &i.language] {
                    put_long(out, t);
                }
            }
            Body::Rules(rules) => {
                let n = u16::try_from(rules.len()).unwrap_or(u16::MAX);
                out.extend_from_slice(&n.to_le_bytes());
                for (k, v) in rules.iter().take(usize::from(n)) {
                    put_short(out, k);
                    put_short(out, v);
                }
            }
            Body::Players(players) => {
                let n = u16::try_from(players.len()).unwrap_or(u16::MAX);
                out.extend_from_slice(&n.to_le_bytes());
                let detailed = self.header.opcode == opcode::DETAILED;
                for p in players.iter().take(usize::from(n)) {
                    if detailed {
                        out.push(p.id.unwrap_or_default());
                    }
                    put_short(out, &p.name);
                    out.extend_from_slice(&p.score.to_le_bytes());
                    if detailed {
                        out.extend_from_slice(&p.ping.unwrap_or_default().to_le_bytes());
                    }
                }
            }
            Body::Extra(e) => {
                for t in [&e.discord, &e.light_banner, &e.dark_banner] {
                    put_long(out, t);
                }
                if let Some(l) = &e.logo {
                    put_long(out, l);
                }
            }
            Body::Ping(p) => out.extend_from_slice(p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(opcode: u8) -> Request {
        Request {
            addr: [127, 0, 0, 1],
            port: 7777,
            opcode,
        }
    }

    #[test]
    fn every_reply_round_trips() {
        let bodies = [
            Body::Info(Info {
                version: None,
                password: 1,
                players: 2,
                max_players: 50,
                host_name: "Los Santos".into(),
                game_mode: "RP".into(),
                language: "English".into(),
            }),
            Body::Rules(vec![("version".into(), "0.3.7-R2".into())]),
            Body::Players(vec![SampPlayer {
                id: None,
                name: "CJ".into(),
                score: -3,
                ping: None,
            }]),
            Body::Extra(Extra {
                discord: "discord.gg/x".into(),
                logo: Some("https://x/logo.png".into()),
                ..Extra::default()
            }),
            Body::Ping(*b"abcd"),
        ];
        let ops = [b'i', b'r', b'c', b'o', b'p'];
        for (op, body) in ops.into_iter().zip(bodies) {
            let reply = Reply {
                header: header(op),
                body,
                warnings: Vec::new(),
            };
            let mut d = Vec::new();
            reply.encode(&mut d);
            assert_eq!(decode_reply(&d).unwrap(), reply);
        }
        let detailed = Reply {
            header: header(b'd'),
            body: Body::Players(vec![SampPlayer {
                id: Some(4),
                name: "Ryder".into(),
                score: 10,
                ping: Some(80),
            }]),
            warnings: Vec::new(),
        };
        let mut d = Vec::new();
        detailed.encode(&mut d);
        assert_eq!(d.len(), 11 + 2 + 1 + 6 + 4 + 4);
        assert_eq!(decode_reply(&d).unwrap(), detailed);
    }

    #[test]
    fn vcmp_replies_carry_mp04_and_the_version() {
        let v = &Dialect::VCMP;
        let info = Reply {
            header: header(b'i'),
            body: Body::Info(Info {
                version: Some("04rel006".into()),
                password: 0,
                players: 1,
                max_players: 100,
                host_name: "Vice City".into(),
                game_mode: "DM".into(),
                language: "English".into(),
            }),
            warnings: Vec::new(),
        };
        let mut d = Vec::new();
        info.encode_as(v, &mut d);
        assert!(d.starts_with(b"MP04"));
        assert_eq!(&d[11..23], b"04rel006\0\0\0\0");
        assert_eq!(decode_reply_as(&d, Charset::Auto, v).unwrap(), info);
        // not SA-MP's, and SA-MP's is not VC:MP's
        assert_eq!(decode_reply(&d).unwrap_err().field, "magic");
        let mut samp = Vec::new();
        info.encode(&mut samp);
        assert!(decode_reply_as(&samp, Charset::Auto, v).is_err());
        // the version cut short, a lying player count
        assert_eq!(
            decode_reply_as(&d[..18], Charset::Auto, v)
                .unwrap_err()
                .field,
            "version"
        );
        let mut c = Vec::new();
        header(b'c').encode_with(*b"MP04", &mut c);
        c.extend_from_slice(&[0xff, 0xff, 2, b'C', b'J', 1, 0, 0, 0]);
        assert!(decode_reply_as(&c, Charset::Auto, v).is_err());
    }

    #[test]
    fn code_pages_are_read_in_the_chosen_charset() {
        let mut d = Vec::new();
        header(b'c').encode(&mut d);
        d.extend_from_slice(&[1, 0, 4, 0xcf, 0xe5, 0xf2, 0xff, 1, 0, 0, 0]);
        let name = |c| match decode_reply_with(&d, c).unwrap().body {
            Body::Players(p) => p[0].name.to_string(),
            _ => unreachable!(),
        };
        assert_eq!(name(Charset::Windows1251), "Петя");
        assert_eq!(name(Charset::Windows1252), "Ïåòÿ");
        assert_eq!(name(Charset::Auto), "Ïåòÿ");
        assert_eq!(decode_reply(&d).unwrap().warnings.len(), 1);
    }

    #[test]
    fn hostile_replies_are_errors_or_held_to_the_caps() {
        // lying counts: 65535 rules or players announced, none sent
        for op in [b'r', b'c', b'd'] {
            let mut d = Vec::new();
            header(op).encode(&mut d);
            d.extend_from_slice(&[0xff, 0xff]);
            assert!(decode_reply(&d).is_err());
        }
        // a u32 length past the datagram
        let mut d = Vec::new();
        header(b'i').encode(&mut d);
        d.extend_from_slice(&[0, 1, 0, 2, 0, 0xff, 0xff, 0xff, 0xff, b'x']);
        assert_eq!(decode_reply(&d).unwrap_err().field, "host name");
        // 65535 empty rules in 128 KiB: MAX_RULES kept
        let mut d = Vec::new();
        header(b'r').encode(&mut d);
        d.extend_from_slice(&[0xff, 0xff]);
        d.resize(d.len() + 2 * 65535, 0);
        let r = decode_reply(&d).unwrap();
        assert!(matches!(r.body, Body::Rules(ref v) if v.len() == MAX_RULES));
        assert_eq!(r.warnings.len(), 1);
        // 65535 players: MAX_PLAYERS kept
        let mut d = Vec::new();
        header(b'c').encode(&mut d);
        d.extend_from_slice(&[0xff, 0xff]);
        d.resize(d.len() + 5 * 65535, 0);
        let r = decode_reply(&d).unwrap();
        assert!(matches!(r.body, Body::Players(ref v) if v.len() == MAX_PLAYERS));
        // not SA-MP, an unknown opcode, a short header
        assert!(decode_reply(b"SAMQ\x7f\0\0\x01\x61\x1ei").is_err());
        assert!(decode_reply(b"SAMP\x7f\0\0\x01\x61\x1ez").is_err());
        assert!(decode_reply(b"SAMP").is_err());
        // older open.mp: no logo
        let mut d = Vec::new();
        header(b'o').encode(&mut d);
        d.extend_from_slice(&[0; 12]);
        assert!(matches!(
            decode_reply(&d).unwrap().body,
            Body::Extra(Extra { logo: None, .. })
        ));
    }
}

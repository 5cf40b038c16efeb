//! Armagetron Advanced's server information (UDP 4534): a client, sans-IO, on the core's
//! one-request shape.
//!
//! Big-endian 16-bit words throughout. The request (8 bytes) is a message of descriptor
//! 53 (`00 35`), message id 0, data length 0, then `00 11`. A server ignores it from an
//! address that has not first sent the small-info request (the same with descriptor 52,
//! answered by descriptor 50; seen on Debian's armagetronad-dedicated 0.2.9.1): each
//! attempt sends that one, then the request. The reply: descriptor 51 (`00 33`), message
//! id and data length (skipped), then the game port, the host name
//! (the address the server names), the server's name, players, the lowest and highest
//! protocol versions, the version, max players, the player names (one string,
//! `\n`-separated), the options, the URL and the global ids; the last three are absent
//! from short replies. A number is 32 bits as two words, the low word first. A string is
//! a word with its length in bytes (its NUL included), then its bytes in pairs, each pair
//! swapped (the wire's first byte is the pair's second character). Names carry colour
//! codes `0xRRGGBB`. The decoder is total.

pub mod client;

use crate::client_oneshot::Strings;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::protocol::{Entry, Transport};
use crate::reader::Reader;
use crate::text::Text;
use crate::DecodeWarning;

/// The request.
pub const REQUEST: [u8; 8] = [0x00, 0x35, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11];
/// The small-info request, sent before the request.
pub const SMALL_REQUEST: [u8; 8] = [0x00, 0x34, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11];
/// The reply's descriptor.
pub const REPLY_DESCRIPTOR: [u8; 2] = [0x00, 0x33];
/// The reply's header (descriptor, message id, data length): the descriptor checked,
/// the rest skipped.
pub const HEADER_LEN: usize = 6;
/// The default port (game and query).
pub const DEFAULT_PORT: u16 = 4534;

/// Armagetron Advanced's entry (see [`Entry`]): its reply's descriptor is too short a
/// magic for a signature.
pub const ENTRY: Entry = Entry {
    aliases: &["armagetronadvanced", "armagetronad"],
    help: "Armagetron Advanced (port 4534): the server-info request (descriptor 53), \
        answered by the name, players, version and player names.",
    auto: false,
    default_port: Some(DEFAULT_PORT),
    ..Entry::new("armagetron", "Armagetron Advanced", Transport::Datagram)
};

/// A decoded reply, every field as sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Reply {
    /// The descriptor, message id and data length words.
    pub header: [u8; HEADER_LEN],
    /// The game port.
    pub game_port: u32,
    /// The host name: the address the server names.
    pub host: Text,
    /// The server's name, with colour codes.
    pub name: Text,
    /// Players.
    pub players: u32,
    /// The lowest protocol version it speaks.
    pub version_min: u32,
    /// The highest protocol version it speaks.
    pub version_max: u32,
    /// The version.
    pub version: Text,
    /// Max players.
    pub max_players: u32,
    /// The player names, with colour codes (the `\n`-separated string, split; empty
    /// names dropped).
    pub player_names: Vec<Text>,
    /// The options, the URL and the global ids, when sent.
    pub more: Option<[Text; 3]>,
    /// What was noticed while decoding.
    pub warnings: Vec<DecodeWarning>,
}

/// A number: two words, the low one first.
fn number(r: &mut Reader<'_>, field: &'static str) -> Result<u32, DecodeError> {
    let lo = r.u16_be(field)?;
    let hi = r.u16_be(field)?;
    Ok(u32::from(hi) << 16 | u32::from(lo))
}

/// A string: its length in bytes (NUL included), then the bytes in swapped pairs.
fn string(r: &mut Reader<'_>, s: &mut Strings, field: &'static str) -> Result<Text, DecodeError> {
    let at = r.offset();
    let len = usize::from(r.u16_be(field)?);
    // pairs: the length rounded up to an even count
    let wire = r.take(len.saturating_add(1) & !1, field)?;
    let mut b = Vec::with_capacity(len);
    for pair in wire.chunks_exact(2) {
        if let [hi, lo] = pair {
            b.extend_from_slice(&[*lo, *hi]);
        }
    }
    // the last character is the NUL
    b.truncate(len.saturating_sub(1));
    if b.contains(&0) {
        return Err(DecodeError::new(
            at,
            field,
            DecodeErrorKind::Invalid("a NUL inside a string"),
        ));
    }
    Ok(s.text(at, &b))
}

/// Reads a reply.
pub fn decode_reply(datagram: &[u8]) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(datagram);
    let mut s = Strings::default();
    if !datagram.starts_with(&REPLY_DESCRIPTOR) {
        return Err(DecodeError::new(0, "descriptor", DecodeErrorKind::BadMagic));
    }
    let mut reply = Reply {
        header: r.array("header")?,
        game_port: number(&mut r, "game port")?,
        host: string(&mut r, &mut s, "host name")?,
        name: string(&mut r, &mut s, "name")?,
        players: number(&mut r, "players")?,
        version_min: number(&mut r, "min version")?,
        version_max: number(&mut r, "max version")?,
        version: string(&mut r, &mut s, "version")?,
        max_players: number(&mut r, "max players")?,
        ..Reply::default()
    };
    let names = string(&mut r, &mut s, "player names")?;
    reply.player_names = names
        .split('\n')
        .filter(|n| !n.is_empty())
        .map(Text::from)
        .collect();
    if !r.is_empty() {
        reply.more = Some([
            string(&mut r, &mut s, "options")?,
            string(&mut r, &mut s, "URL")?,
            string(&mut r, &mut s, "global ids")?,
        ]);
    }
    reply.warnings = s.warnings();
    Ok(reply)
}

/// Writes `t` as a string of the protocol (tests and replays): cut at 65534 bytes.
pub fn put_string(out: &mut Vec<u8>, t: &str) {
    let mut b: Vec<u8> = t.bytes().filter(|&c| c != 0).take(65534).collect();
    b.push(0);
    out.extend_from_slice(&u16::try_from(b.len()).unwrap_or(u16::MAX).to_be_bytes());
    if b.len() % 2 == 1 {
        b.push(0);
    }
    for pair in b.chunks_exact(2) {
        if let [a, c] = pair {
            out.extend_from_slice(&[*c, *a]);
        }
    }
}

/// Writes `n` as a number of the protocol: the low word first.
pub fn put_number(out: &mut Vec<u8>, n: u32) {
    let [a, b, c, d] = n.to_be_bytes();
    out.extend_from_slice(&[c, d, a, b]);
}

impl Reply {
    /// Writes the reply as a server sends it (tests and replays).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.header);
        put_number(out, self.game_port);
        put_string(out, &self.host);
        put_string(out, &self.name);
        put_number(out, self.players);
        put_number(out, self.version_min);
        put_number(out, self.version_max);
        put_string(out, &self.version);
        put_number(out, self.max_players);
        let mut names = String::new();
        for n in &self.player_names {
            names.push_str(n);
            names.push('\n');
        }
        put_string(out, &names);
        if let Some(more) = &self.more {
            for t in more {
                put_string(out, t);
            }
        }
    }
}

/// `s` without colour codes (`0x` and six hexadecimal digits, or `0xRESETT`).
pub fn strip_colours(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("0x") {
        let (before, at) = rest.split_at(i);
        out.push_str(before);
        let code = at.get(2..8);
        let is_code = code.is_some_and(|c| {
            c.bytes().all(|b| b.is_ascii_hexdigit()) || c.eq_ignore_ascii_case("RESETT")
        });
        if is_code {
            rest = at.get(8..).unwrap_or_default();
        } else {
            out.push_str("0x");
            rest = at.get(2..).unwrap_or_default();
        }
    }
    out.push_str(rest);
    out
}

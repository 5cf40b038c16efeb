//! Satisfactory's lightweight query (UDP, on the game port 7777): a client, sans-IO, on
//! the core's one-request shape.
//!
//! Little-endian throughout. The request is 13 bytes: the magic `D5 F6` (`0xF6D5`),
//! message type 0 (poll), protocol version 1, an 8-byte cookie, and the terminator `01`.
//! The reply: the magic, type 1, the version, the cookie echoed, the server state
//! (1 idle, 2 loading, 3 playing), the server's net change list (`u32`, its build),
//! the server flags (`u64`; bit 0: modded), a count of sub-states and 3 bytes each
//! (id, version `u16`), the name (`u16` length, UTF-8), and the terminator `01`. It says
//! no player count: that is the HTTPS API's (not read here). The decoder is total.

pub mod client;

use crate::error::{DecodeError, DecodeErrorKind};
use crate::protocol::{Entry, Signature, Tier, Transport};
use crate::reader::Reader;
use crate::text::Text;
use crate::DecodeWarning;

/// The magic, as sent.
pub const MAGIC: [u8; 2] = [0xD5, 0xF6];
/// The request's length.
pub const REQUEST_LEN: usize = 13;
/// The default port (game and query).
pub const DEFAULT_PORT: u16 = 7777;
/// Sub-states kept (the rest are counted).
pub const MAX_SUB_STATES: usize = 64;

/// Satisfactory's entry (see [`Entry`]).
pub const ENTRY: Entry = Entry {
    aliases: &["satisfactory-udp", "sf"],
    help: "Satisfactory's lightweight query (port 7777): a 13-byte poll with a cookie, \
        answered by the state, build, flags and name (no players).",
    auto: false,
    default_port: Some(DEFAULT_PORT),
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: |d| d.starts_with(&MAGIC) && d.len() >= REQUEST_LEN,
    }],
    ..Entry::new("satisfactory", "Satisfactory", Transport::Datagram)
};

/// The poll request carrying `cookie`.
pub fn request(cookie: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&[0, 1]);
    out.extend_from_slice(&cookie.to_le_bytes());
    out.push(1);
}

/// A decoded reply, every field as sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Reply {
    /// The protocol version (1).
    pub version: u8,
    /// The cookie echoed.
    pub cookie: u64,
    /// The server state: 1 idle, 2 loading, 3 playing (0 offline).
    pub state: u8,
    /// The server's net change list (its build).
    pub change_list: u32,
    /// The server flags (bit 0: modded).
    pub flags: u64,
    /// Sub-states: id and version, at most [`MAX_SUB_STATES`].
    pub sub_states: Vec<(u8, u16)>,
    /// The server's name.
    pub name: Text,
    /// What was noticed while decoding.
    pub warnings: Vec<DecodeWarning>,
}

/// Reads a reply (its cookie is the caller's to check).
pub fn decode_reply(datagram: &[u8]) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(datagram);
    if r.array::<2>("magic")? != MAGIC || r.u8("message type")? != 1 {
        return Err(DecodeError::new(0, "magic", DecodeErrorKind::BadMagic));
    }
    let mut reply = Reply {
        version: r.u8("protocol version")?,
        cookie: u64::from_le_bytes(r.array::<8>("cookie")?),
        state: r.u8("server state")?,
        change_list: r.u32_le("change list")?,
        flags: u64::from_le_bytes(r.array::<8>("server flags")?),
        ..Reply::default()
    };
    if reply.version != 1 {
        reply.warnings.push(DecodeWarning {
            offset: 3,
            field: "protocol version",
            message: "not 1: read as version 1",
        });
    }
    let count = r.u8("sub-state count")?;
    for _ in 0..count {
        let at = r.offset();
        let id = r.u8("sub-state id")?;
        let v = r.u16_le("sub-state version")?;
        if reply.sub_states.len() < MAX_SUB_STATES {
            reply.sub_states.push((id, v));
        } else if reply.sub_states.len() == MAX_SUB_STATES && reply.warnings.len() < 2 {
            reply.warnings.push(DecodeWarning {
                offset: at,
                field: "sub-state",
                message: "sub-states past the cap dropped",
            });
        }
    }
    let n = r.u16_le("name length")?;
    let at = r.offset();
    let b = r.take(usize::from(n), "name")?;
    reply.name = match std::str::from_utf8(b) {
        Ok(s) => s.into(),
        Err(_) => {
            reply.warnings.push(DecodeWarning {
                offset: at,
                field: "name",
                message: "not UTF-8: invalid bytes replaced",
            });
            String::from_utf8_lossy(b).as_ref().into()
        }
    };
    if r.u8("terminator").ok() != Some(1) || !r.is_empty() {
        reply.warnings.push(DecodeWarning {
            offset: r.offset(),
            field: "terminator",
            message: "not a lone 01 after the name",
        });
    }
    Ok(reply)
}

impl Reply {
    /// Writes the reply as a server sends it (tests and replays).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&[1, self.version]);
        out.extend_from_slice(&self.cookie.to_le_bytes());
        out.push(self.state);
        out.extend_from_slice(&self.change_list.to_le_bytes());
        out.extend_from_slice(&self.flags.to_le_bytes());
        out.push(u8::try_from(self.sub_states.len()).unwrap_or(u8::MAX));
        for (id, v) in self.sub_states.iter().take(255) {
            out.push(*id);
            out.extend_from_slice(&v.to_le_bytes());
        }
        let b = self.name.as_bytes();
        let b = b
            .get(..b.len().min(usize::from(u16::MAX)))
            .unwrap_or_default();
        out.extend_from_slice(&u16::try_from(b.len()).unwrap_or(u16::MAX).to_le_bytes());
        out.extend_from_slice(b);
        out.push(1);
    }
}

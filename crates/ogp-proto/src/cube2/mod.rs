//! Cube 2: Sauerbraten, Red Eclipse and other games of the Cube 2 engine: the client
//! side, sans-IO.
//!
//! One protocol for both games: they share the port (the game port + 1), the ping, the
//! integer and string encoding and the echo of the request; what differs is the layout
//! of the ping reply's attributes, which the reply itself tells apart ([`Dialect`]), so
//! one probe serves both. Sauerbraten also answers extinfo (players, teams, uptime);
//! Red Eclipse 1.6 does not.
//!
//! * [`wire`]: the compressed integers (`getint`: one byte, or `80` and 16 bits, or `81`
//!   and 32 bits), strings, the ping and extinfo requests and replies, decoded through
//!   the bounded reader with caps on attributes, strings, players and teams.
//! * [`mapping`]: the replies to the shared [`Status`](crate::Status) (documented field
//!   by field there).
//! * [`client`]: the ping, then extinfo, on the shared client core.
//! * [`master`]: the masters' TCP protocol, both sides: the list lines (`list` →
//!   `addserver IP PORT …`) and the master's connection reader for servers' registrations
//!   (`regserv PORT`, Red Eclipse's `server PORT …`), as `ogp master` serves them.
//!
//! No responder. Every decoder here is total: on any input it returns a value or a
//! [`DecodeError`](crate::DecodeError), never panics, and allocates at most a small
//! multiple of its input.

pub mod client;
pub mod mapping;
pub mod master;
pub mod wire;

pub use wire::{decode_ext, decode_ping, Dialect, ExtCommand, ExtReply, PingReply, PlayerStats};

use crate::protocol::{Entry, Signature, Tier, Transport};

/// The query port of Sauerbraten's default game port 28785 (the entry's default port).
pub const DEFAULT_PORT: u16 = 28786;

/// The query port of a game port: the game port plus this.
pub const QUERY_PORT_OFFSET: u16 = 1;

/// Cube 2's entry (see [`Entry`]): an extinfo reply by its header (`00`, the command,
/// the ack `FF` and version 105: no other protocol starts so), a ping reply only by
/// decoding it (a guess of the last resort); not served.
pub const ENTRY: Entry = Entry {
    aliases: &["cube2s", "sauerbraten", "redeclipse"],
    help: "Cube 2: Sauerbraten and Red Eclipse on the game port + 1: the ping (name, map, \
        mode, players, max players), then Sauerbraten's extinfo (players, teams, uptime).",
    default_port: Some(DEFAULT_PORT),
    signatures: &[
        Signature {
            tier: Tier::Magic,
            matches: is_extinfo_reply,
        },
        Signature {
            tier: Tier::Weak,
            matches: is_cube2_datagram,
        },
    ],
    ..Entry::new("cube2", "Cube 2", Transport::Datagram)
};

/// Whether `datagram` is, as far as can be told without the request, a Cube 2 ping
/// reply (an echoed integer, then a reply with Sauerbraten's or Red Eclipse's layout)
/// or an extinfo reply (`00`, a command, the ack and version 105).
/// Also our requests: the ping (`81` and a 32-bit id) and the extinfo requests with it.
pub fn is_cube2_datagram(datagram: &[u8]) -> bool {
    is_request(datagram) || describe(datagram).is_some()
}

/// Whether `datagram` is one of our requests (the ping, or an extinfo request carrying
/// the ping's id).
pub fn is_request(datagram: &[u8]) -> bool {
    let ping = |d: &[u8]| matches!(d, [0x81, _, _, _, _]);
    match datagram {
        [0x81, ..] => ping(datagram),
        [0x00, 0x00 | 0x02, rest @ ..] | [0x00, 0x01, 0xff, rest @ ..] => ping(rest),
        _ => false,
    }
}

/// Whether `datagram` is a Sauerbraten extinfo reply (it decodes as one, ack and
/// version included).
pub fn is_extinfo_reply(datagram: &[u8]) -> bool {
    datagram.first() == Some(&0) && matches!(describe(datagram), Some(Decoded::Ext(..)))
}

/// What a datagram seen without its request decodes as.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decoded {
    /// A ping reply after an echoed integer.
    Ping(PingReply),
    /// An extinfo reply.
    Ext(ExtCommand, ExtReply),
}

/// Decodes a datagram seen without its request (`ogp decode`, the fuzz target): an
/// extinfo reply when it starts with `00`, else a ping reply after one echoed integer
/// (ours: `81` and an id). `None` when it is neither.
pub fn describe(datagram: &[u8]) -> Option<Decoded> {
    use crate::reader::Reader;
    let mut r = Reader::new(datagram);
    let first = wire::get_int(&mut r, "echo").ok()?;
    if first != 0 {
        let base = r.offset();
        let p = decode_ping(r.peek_rest(), base).ok()?;
        let plausible = p.attrs.first().is_some_and(|v| (100..=1000).contains(v))
            && p.dialect() != Dialect::Other
            && (0..=256).contains(&p.clients);
        return plausible.then_some(Decoded::Ping(p));
    }
    let cmd = match wire::get_int(&mut r, "command").ok()? {
        0 => ExtCommand::Uptime,
        1 => {
            wire::get_int(&mut r, "cn").ok()?;
            ExtCommand::Players
        }
        2 => ExtCommand::Teams,
        _ => return None,
    };
    // Our requests carry an id after the command (`81` and 32 bits), echoed back.
    let rest = r.peek_rest();
    let skip = match rest {
        [0x81, _, _, _, _, 0xff, ..] => 5,
        _ => 0,
    };
    let base = r.offset() + skip;
    let body = rest.get(skip..)?;
    decode_ext(cmd, body, base)
        .ok()
        .map(|e| Decoded::Ext(cmd, e))
}

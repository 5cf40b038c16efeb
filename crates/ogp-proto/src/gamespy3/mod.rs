//! GameSpy v3 as Battlefield 2 speaks it (`shared/specs/004_…`), both directions: the
//! requests, the challenge and echo replies, the multi-packet server-information replies
//! with their offset-based reassembly, heartbeats and keep-alives, the mapping to and
//! from the shared [`Status`](crate::Status), and the sans-IO responder and client.
//!
//! * [`request`]: `FE FD 09` challenge, `FE FD 00` sub-protocols A, B and C (with or
//!   without challenge bytes), `FE FD 02` echo, `FE FD 08` keep-alive.
//! * [`reply`]: `09` challenge replies, `05` echo replies, sub-protocol A/B packets,
//!   the `Reassembler` (any order, values placed by offset), the
//!   Battlefield 2-style packet writer, sub-protocol C replies.
//! * [`heartbeat`]: the `03` heartbeat a server sends its master servers.
//! * [`mapping`]: `ServerInfo` to and from the status model
//!   (documented key by key in `docs/gamespy3.md`).
//! * [`responder`] and [`client`]: the sans-IO state machines.
//!
//! Requests start with `FE FD` and a type byte; replies start with the type byte alone.
//! Every decoder here is total: on any input it returns a value or a
//! [`DecodeError`](crate::DecodeError), never panics, and allocates at most a small
//! multiple of its input.

pub mod client;
pub mod heartbeat;
pub mod mapping;
pub mod reply;
pub mod request;
pub mod responder;

pub use reply::{
    decode_packet, decode_packet_with, decode_reply, decode_reply_with, ChallengeReply, Column,
    Packet, Pushed, Reassembler, ReassemblyError, ReassemblyLimits, Reply, Section, ServerInfo,
};
pub use request::{InfoKind, Request};

/// The first two bytes of every request.
pub const MAGIC: [u8; 2] = [0xfe, 0xfd];

/// Largest packet Battlefield 2 sends and our responder sends (UDP payload).
pub const MAX_PACKET: usize = 1400;

/// The type bytes ("protocol ids").
pub mod kind {
    /// `00`: server information (request and reply).
    pub const INFO: u8 = 0x00;
    /// `02`: echo request.
    pub const ECHO: u8 = 0x02;
    /// `03`: heartbeat (server to master).
    pub const HEARTBEAT: u8 = 0x03;
    /// `05`: echo reply.
    pub const ECHO_REPLY: u8 = 0x05;
    /// `08`: keep-alive (master to server).
    pub const KEEP_ALIVE: u8 = 0x08;
    /// `09`: challenge (request and reply).
    pub const CHALLENGE: u8 = 0x09;
}

use crate::protocol::{AnswerKind as K, Entry, Serve, Signature, Tier, Transport};

/// The challenge keys' id of GameSpy v3 ([`Serve::guard_id`]).
pub(crate) const GUARD_ID: u8 = 3;

/// GameSpy v3's entry (see [`Entry`]): `FE FD` requests, replies told by their type
/// byte and a session id (a weak guess); two steps (the `09` handshake, the request);
/// served.
pub const ENTRY: Entry = Entry {
    aliases: &["gs3", "gs4", "gamespy4"],
    help: "GameSpy v3 (Battlefield 2, Crysis, UT3, Minecraft…): sub-protocol B, with the \
        0x09 challenge when the server answers it.",
    steps: 2,
    signatures: &[
        Signature {
            tier: Tier::Magic,
            matches: is_request_magic,
        },
        Signature {
            tier: Tier::Weak,
            matches: is_reply,
        },
    ],
    serve: Some(Serve {
        requests: Signature {
            tier: Tier::Magic,
            matches: is_gamespy3,
        },
        own_port: false,
        answers: &[K::Challenge, K::Ping, K::Info, K::Keys],
        guard_id: GUARD_ID,
    }),
    ..Entry::new("gamespy3", "GameSpy v3", Transport::Datagram)
};

/// Whether `datagram` starts with `FE FD` and is not a GameSpy v2 request: `FE FD 00`,
/// an id and three section bytes, 10 bytes in all, a length no GameSpy v3 request has
/// (sub-protocol A and B end with a fourth byte, C with two `00`).
fn is_request_magic(datagram: &[u8]) -> bool {
    datagram.starts_with(&MAGIC) && !(datagram.len() == 10 && datagram.get(2) == Some(&0))
}

/// Whether `datagram` can be a GameSpy v3 reply or heartbeat: `00`, `03`, `05` or `09`
/// and at least a session id.
fn is_reply(datagram: &[u8]) -> bool {
    matches!(
        datagram.first(),
        Some(&(kind::INFO | kind::HEARTBEAT | kind::ECHO_REPLY | kind::CHALLENGE))
    ) && datagram.len() >= 5
}

/// Whether `datagram` looks like a GameSpy v3 request (`FE FD` and a known type), the
/// test a shared port uses to tell it from OGP, A2S and GQP.
pub fn is_gamespy3(datagram: &[u8]) -> bool {
    matches!(
        datagram,
        [
            0xfe,
            0xfd,
            kind::INFO | kind::ECHO | kind::KEEP_ALIVE | kind::CHALLENGE,
            ..
        ]
    )
}

//! Minetest / Luanti: no status query exists, so the client proves a server by the
//! opening of its low-level UDP protocol (default port 30000), client side, sans-IO.
//!
//! * [`wire`]: the handshake's packets (open, acknowledgements, `TOSERVER_INIT`,
//!   DISCO) and the server's (SET_PEER_ID, `TOCLIENT_HELLO`, `TOCLIENT_ACCESS_DENIED`),
//!   through the bounded reader.
//! * [`client`]: the handshake as a state machine: open, be given a peer id, ask with
//!   `TOSERVER_INIT` for the protocol version, then close with a DISCO so that the
//!   server frees the peer at once.
//!
//! The server list's fields (name, players, game…) are served over HTTP by the list
//! server, not by the game server: not read here. No responder.

pub mod client;
pub mod wire;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Signature, Tier, Transport};

/// Minetest's entry (see [`Entry`]): packets start with `4F 45 74 03`; port 30000 when
/// none is given; two steps (the peer id, then the hello); not served.
///
/// Kept out of auto-detection (`auto: false`): its probe is a connection, which the
/// server counts as a peer, logs, and keeps for its timeout when a client goes away
/// without a DISCO; `-p minetest` asks for it.
pub const ENTRY: Entry = Entry {
    aliases: &["luanti", "mt"],
    help: "Minetest / Luanti: the handshake (peer id, then TOSERVER_INIT -> TOCLIENT_HELLO \
        with the protocol version), closed with a DISCO; without a port, 30000.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    steps: 2,
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: wire::is_packet,
    }],
    ..Entry::new("minetest", "Minetest", Transport::Datagram)
};

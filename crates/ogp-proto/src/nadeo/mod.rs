//! Nadeo's dedicated-server XML-RPC (GBXRemote 2) over TCP, client side, sans-IO: the
//! Trackmania games (Forever, 2) and Shootmania.
//!
//! * [`xmlrpc`]: the calls we write and a small bounded reader of `methodResponse`
//!   documents (depth, value count and size capped), to [`xmlrpc::Value`]s.
//! * [`wire`]: GBXRemote 2's framing (the handshake; each call and reply a length, a
//!   handle and the XML) and the replies to the shared status.
//! * [`client`]: the query as a stream machine on the shared core: the handshake, then
//!   `Authenticate` (with [`client::Credentials`]), `GetServerOptions`,
//!   `GetCurrentChallengeInfo` (or `GetCurrentMapInfo`), `GetCurrentGameInfo`,
//!   `GetVersion` and `GetPlayerList`, one at a time; callbacks skipped, bounded.
//!
//! The format is gamedig's `protocols/nadeo.js` (npm `gbxremote`) and qstat's `tm.c`.
//! Every decoder here is total. No responder.

pub mod client;
pub mod wire;
pub mod xmlrpc;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// Nadeo's entry (see [`Entry`]): TCP, port 5000 (the XML-RPC port) when none is given;
/// not served.
///
/// Kept out of auto-detection (`auto: false`): the server wants a login for its answers.
pub const ENTRY: Entry = Entry {
    aliases: &["gbxremote", "tm", "trackmania"],
    help: "Nadeo's XML-RPC (GBXRemote 2: Trackmania, Shootmania) over TCP, with a login (OGP_NADEO_LOGIN or --user, OGP_NADEO_PASSWORD); without a port, 5000.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    steps: 7,
    ..Entry::new("nadeo", "Nadeo GBXRemote", Transport::Stream)
};

//! # ogp-proto: sans-IO game-server query protocols
//!
//! A game that runs its own socket loop answers every protocol (OGP, Valve A2S,
//! GameSpy v3, GQP) on its port with a few lines:
//!
//! ```no_run
//! use std::net::UdpSocket;
//! use std::time::Instant;
//! use ogp_proto::responder::{Responder, ResponderConfig, Transmits};
//! use ogp_proto::Status;
//!
//! # fn main() -> std::io::Result<()> {
//! let socket = UdpSocket::bind("0.0.0.0:27015")?;
//! let mut responder = Responder::with_random_secret(ResponderConfig::default(), Instant::now())?;
//! let mut status = Status::default();
//! status.host_name = Some("My server".into());
//! let (mut buf, mut out) = ([0u8; 2048], Transmits::default());
//! loop {
//!     let (n, from) = socket.recv_from(&mut buf)?;
//!     let datagram = buf.get(..n).unwrap_or_default();
//!     responder.handle(Instant::now(), from, datagram, &status, &mut out);
//!     for answer in out.iter() {
//!         socket.send_to(answer, from)?;
//!     }
//! }
//! # }
//! ```
//!
//! With tokio, or on a thread of its own, `ogp_net::responder` runs the same responder
//! on any number of sockets; to ask servers, [`client::Machine`] drives any protocol's
//! query (`ogp_net::client::query` does it over tokio).
//!
//! This crate holds the [status model](model) shared by every protocol, and the wire
//! codecs: bytes in, bytes out, time passed in. It has no sockets, no async runtime and
//! no clock of its own, so the same code serves a tokio responder, a game engine's own
//! socket loop, a scanner driving thousands of queries, a fuzzer and a C API.
//!
//! Each protocol is a folder ([`ogp`], [`a2s`], [`gamespy3`], [`gqp`], [`ogp_draft`],
//! [`quake3`], [`bedrock`], [`gamespy1`], [`unreal2`], [`gamespy2`], [`ase`], [`mumble`], [`doom`], [`doomsday`], [`samp`])
//! with its wire format, its responder ([`responder::ProtocolResponder`]) and its client
//! (on the shared core of [`client`]: timers, retries, challenge resends, one
//! [`client::Answer`] and one [`client::QueryError`]).
//!
//! ## Rules every decoder here keeps
//! * Peer bytes are read only through a bounded reader (`internals::Reader`), which cannot
//!   run past the end.
//! * Arithmetic on wire values is checked; every count is checked against the bytes left
//!   before anything is allocated.
//! * No panics, no unbounded loops, no allocation beyond a small multiple of the input.
//!   Malformed input is a [`DecodeError`] naming the field and byte offset; oddities that
//!   do not stop decoding (lossy UTF-8, trailing bytes) are [`DecodeWarning`]s.
//! * Unknown values the spec lets grow (types, error values, enum codes) are kept.

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic
    )
)]

pub mod a2s;
pub use a2s::ffow;
pub mod announce;
pub mod armagetron;
pub mod ase;
pub mod assettocorsa;
pub mod battlefield;
pub mod beammp;
pub mod bedrock;
mod bounded;
pub mod buildandshoot;
mod charset;
pub mod client;
mod client_core;
mod client_http;
mod client_oneshot;
mod client_stream;
pub mod cs2d;
pub mod cube2;
pub mod decode;
pub mod detect;
pub mod doom;
pub mod doom3;
pub mod doomsday;
pub mod eco;
pub mod eldewrito;
mod entries;
pub mod error;
pub mod farmingsimulator;
pub mod fivem;
#[cfg(feature = "games")]
pub mod front;
#[cfg(feature = "games")]
pub mod games;
pub mod gamespy1;
pub mod gamespy2;
pub mod gamespy3;
pub mod gqp;
pub mod guard;
pub mod hexenworld;
pub mod http;
pub mod hytale;
mod inflate;
mod infostring;
mod json;
pub mod kspdmp;
pub mod limits;
pub mod mafia2;
pub use mafia2::online as mafia2online;
pub mod master;
pub mod minecraft;
pub mod minetest;
pub mod model;
pub mod mumble;
pub mod nadeo;
pub mod netquake;
pub mod ogp;
pub mod ogp_draft;
pub mod openttd;
pub mod palworld;
pub mod protocol;
pub mod quake2;
pub mod quake3;
pub mod quakeworld;
pub(crate) mod reader;
pub mod responder;
mod responder_core;
pub mod result;
pub mod rfactor;
pub mod samp;
pub use samp::vcmp;
pub mod satisfactory;
pub mod savage2;
pub mod starmade;
pub mod teamspeak2;
pub mod teamspeak3;
pub mod teeworlds;
pub mod terraria;
pub(crate) mod text;
pub mod tibia;
pub use teeworlds::v7 as teeworlds7;
pub mod tribes1;
pub use tribes1::starsiege;
pub mod unreal2;
pub mod ventrilo;
pub mod xml;

pub use charset::Charset;
pub use entries::PROTOCOLS;
pub use error::{DecodeError, DecodeErrorKind, DecodeWarning};
pub use model::{
    A2sInfo, AddOn, ColorEntry, ColorInfo, Limit, LimitType, MapInfo, ModInfo, Os, Player,
    PlayerAddress, Rules, ServerType, Status, Team, Text,
};
pub use protocol::{Entry, Protocol};

/// Internals of this crate, reachable for this workspace's own tests, benches, fuzz
/// targets and tools.
///
/// **Not a stable API.** Nothing here is covered by semver: items are added, changed and
/// removed without notice. Embedders use the documented modules above instead.
#[doc(hidden)]
pub mod internals {
    pub use crate::reader::Reader;
    pub use crate::text::{from_hex, push_hex, to_hex};

    /// Reads an OGP `ColorInfo` field (`crate::ogp::types`' reader, for tests that check
    /// how far it reads).
    pub fn read_color_info(
        r: &mut Reader<'_>,
        field: &'static str,
    ) -> Result<crate::ColorInfo, crate::DecodeError> {
        crate::ogp::types::read_color_info(r, field)
    }

    /// Protocol identifiers mixed into challenges (see
    /// [`ChallengeKeys`](crate::guard::ChallengeKeys)).
    pub mod protocol_id {
        /// Open Game Protocol v1.01.
        pub const OGP: u8 = crate::ogp::GUARD_ID;
        /// Valve A2S.
        pub const A2S: u8 = crate::a2s::GUARD_ID;
        /// GameSpy v3.
        pub const GAMESPY3: u8 = crate::gamespy3::GUARD_ID;
        /// GQP.
        pub const GQP: u8 = crate::gqp::GUARD_ID;
        /// OGP v0.02 draft.
        pub const OGP_DRAFT: u8 = crate::ogp_draft::GUARD_ID;
        /// Quake III.
        pub const QUAKE3: u8 = crate::quake3::GUARD_ID;
    }
}

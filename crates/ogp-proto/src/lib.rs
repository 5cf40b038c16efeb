//! # ogp-proto: sans-IO game-server query protocols
//!
//! This crate holds the [status model](model) shared by every protocol, and the wire
//! codecs: bytes in, bytes out, time passed in. It has no sockets, no async runtime, no
//! clock and no randomness of its own, so the same code serves a tokio responder, a
//! game engine's own socket loop, a scanner driving thousands of queries, a fuzzer and a
//! future C API.
//!
//! ```text
//!   datagram bytes ──► ogp::decode ──► Packet { header, message: Query | Answer(Status) | … }
//!   Status + query ──► ogp::encode_answer / split_answer ──► datagram bytes
//! ```
//!
//! The [`gqp`] module does the same for the GQP text-protocol draft (codec, responder,
//! client; choices in `docs/gqp.md`).
//!
//! ## Rules every decoder here keeps
//! * Peer bytes are read only through [`reader::Reader`], which cannot run past the end.
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
pub mod driver;
pub mod error;
pub mod gamespy3;
pub mod gqp;
pub mod guard;
pub mod limits;
pub mod model;
pub mod ogp;
pub mod ogp_draft;
pub mod reader;
pub mod responder;
pub mod retry;
pub mod text;

pub use error::{DecodeError, DecodeErrorKind, DecodeWarning};
pub use model::{
    A2sInfo, AddOn, ColorEntry, ColorInfo, Limit, LimitType, MapInfo, ModInfo, Os, Player,
    PlayerAddress, Rules, ServerType, Status, Team, Text,
};

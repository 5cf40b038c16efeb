//! Decode errors: what went wrong, in which field, at which byte offset.
//!
//! Every decoder in this crate reports malformed input through [`DecodeError`]. It is
//! small, `Clone`, carries no peer data and prints as one line, for example
//! `PlayerName at byte 212: no NUL terminator before the end of the data`.

use std::fmt;

/// Why a datagram could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The data ended before the field was complete.
    Truncated {
        /// Bytes the field needed.
        needed: usize,
        /// Bytes that were left.
        available: usize,
    },
    /// A zero-terminated string had no NUL byte before the end of its data.
    MissingNul,
    /// The datagram does not start with the protocol's magic bytes.
    BadMagic,
    /// A length, count or variable-length field exceeded a limit of ours.
    TooLarge {
        /// The largest value we accept.
        limit: u64,
    },
    /// A value that the protocol does not allow at this place.
    Invalid(&'static str),
}

/// A malformed-input error: the field being read, the byte offset where reading it failed
/// (from the start of the datagram, or of the reassembled body for split answers) and the
/// reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset at which the field started or the problem was found.
    pub offset: usize,
    /// Name of the field, in the protocol spec's spelling where it has one.
    pub field: &'static str,
    /// What was wrong.
    pub kind: DecodeErrorKind,
}

impl DecodeError {
    /// Builds an error for `field` at `offset`.
    pub const fn new(offset: usize, field: &'static str, kind: DecodeErrorKind) -> Self {
        Self {
            offset,
            field,
            kind,
        }
    }

    /// Builds an [`DecodeErrorKind::Invalid`] error.
    pub const fn invalid(offset: usize, field: &'static str, why: &'static str) -> Self {
        Self::new(offset, field, DecodeErrorKind::Invalid(why))
    }

    /// Builds a [`DecodeErrorKind::TooLarge`] error: a length over our `limit`.
    pub const fn too_large(offset: usize, field: &'static str, limit: usize) -> Self {
        Self::new(
            offset,
            field,
            DecodeErrorKind::TooLarge {
                limit: limit as u64,
            },
        )
    }
}

impl fmt::Display for DecodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated { needed, available } => write!(
                f,
                "truncated: needs {needed} byte{} but only {available} left",
                if *needed == 1 { "" } else { "s" }
            ),
            Self::MissingNul => f.write_str("no NUL terminator before the end of the data"),
            Self::BadMagic => f.write_str("not this protocol (magic bytes do not match)"),
            Self::TooLarge { limit } => write!(f, "value exceeds our limit of {limit}"),
            Self::Invalid(why) => f.write_str(why),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}: {}", self.field, self.offset, self.kind)
    }
}

impl std::error::Error for DecodeError {}

/// A problem that did not stop decoding but that the caller should know about, such as
/// a string that was not valid UTF-8 and was decoded lossily.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeWarning {
    /// Byte offset of the field.
    pub offset: usize,
    /// Name of the field.
    pub field: &'static str,
    /// What was noticed.
    pub message: &'static str,
}

impl fmt::Display for DecodeWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at byte {}: {}",
            self.field, self.offset, self.message
        )
    }
}

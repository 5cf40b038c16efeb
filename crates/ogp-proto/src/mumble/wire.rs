//! Mumble's ping request and reply, decoded through the bounded reader.
//!
//! * Request (12 bytes): `00 00 00 00` (the ping's type), then 8 bytes of ident the
//!   server echoes.
//! * Reply (24 bytes, big-endian): the version (`00 01 03 04` is 1.3.4: a 16-bit major,
//!   then minor and patch bytes), the ident, users connected, max users, and the
//!   bandwidth allowed per user in bits per second.
//!
//! A reply longer than 24 bytes is read for its first 24 (a warning names the rest).

use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::reader::Reader;

/// The request's length.
pub const REQUEST_LEN: usize = 12;
/// The reply's length.
pub const REPLY_LEN: usize = 24;

/// The last four bytes of the ident of our pings ([`Request::new`]).
pub const OUR_IDENT_TAIL: &[u8] = b"ogp!";

/// A ping: its ident, echoed by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The ident.
    pub ident: [u8; 8],
}

impl Request {
    /// A ping whose ident carries the low 28 bits of `id`, seven in each of its first
    /// four bytes with the top bit set (its other four bytes are `ogp!`): an ident without
    /// zero bytes, so that none of our pings reads as another protocol's datagram (a
    /// GameSpy v2 reply is `00`, an id, then keys ending in NULs).
    pub fn new(id: u32) -> Self {
        let mut ident = [0u8; 8];
        let (a, b) = ident.split_at_mut(4);
        for (k, byte) in a.iter_mut().enumerate() {
            *byte = 0x80 | ((id >> (7 * (3 - k))) & 0x7f) as u8;
        }
        b.copy_from_slice(OUR_IDENT_TAIL);
        Self { ident }
    }

    /// Appends the request's 12 bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&self.ident);
    }
}

/// A decoded reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reply {
    /// The version's major number.
    pub major: u16,
    /// The version's minor number.
    pub minor: u8,
    /// The version's patch number.
    pub patch: u8,
    /// The ident, as echoed.
    pub ident: [u8; 8],
    /// Users connected.
    pub users: u32,
    /// The most users the server takes.
    pub max_users: u32,
    /// Bandwidth allowed per user, in bits per second.
    pub bandwidth: u32,
    /// What was read in a tolerant way.
    pub warnings: Vec<DecodeWarning>,
}

impl Reply {
    /// The version as people write it: `1.3.4`.
    pub fn version(&self) -> String {
        format!("{}.{}.{}", self.major, self.minor, self.patch)
    }

    /// Appends the reply's 24 bytes (for tests and replays).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.major.to_be_bytes());
        out.extend_from_slice(&[self.minor, self.patch]);
        out.extend_from_slice(&self.ident);
        for v in [self.users, self.max_users, self.bandwidth] {
            out.extend_from_slice(&v.to_be_bytes());
        }
    }
}

fn u32_be(r: &mut Reader<'_>, field: &'static str) -> Result<u32, DecodeError> {
    r.array::<4>(field).map(u32::from_be_bytes)
}

/// Reads a reply.
pub fn decode_reply(datagram: &[u8]) -> Result<Reply, DecodeError> {
    if datagram.len() < REPLY_LEN {
        return Err(DecodeError::new(
            0,
            "ping reply",
            DecodeErrorKind::Truncated {
                needed: REPLY_LEN,
                available: datagram.len(),
            },
        ));
    }
    let mut r = Reader::new(datagram);
    let mut reply = Reply {
        major: r.u16_be("version")?,
        minor: r.u8("version")?,
        patch: r.u8("version")?,
        ident: r.array::<8>("ident")?,
        users: u32_be(&mut r, "users")?,
        max_users: u32_be(&mut r, "max users")?,
        bandwidth: u32_be(&mut r, "bandwidth")?,
        ..Reply::default()
    };
    if !r.is_empty() {
        reply.warnings.push(DecodeWarning {
            offset: r.offset(),
            field: "ping reply",
            message: "bytes after the 24 of a ping reply ignored",
        });
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_servers_reply_decodes() {
        // mumble-server 1.3.4 (Debian 12), users=12, bandwidth=72000, ident ABCDEFGH
        let d = crate::text::from_hex("000103044142434445464748000000000000000c00011940").unwrap();
        let r = decode_reply(&d).unwrap();
        assert_eq!(r.version(), "1.3.4");
        assert_eq!(&r.ident, b"ABCDEFGH");
        assert_eq!((r.users, r.max_users, r.bandwidth), (0, 12, 72000));
        let mut back = Vec::new();
        r.encode(&mut back);
        assert_eq!(back, d);
    }

    #[test]
    fn bad_input_is_an_error_never_a_panic() {
        for n in 0..REPLY_LEN {
            let e = decode_reply(&vec![0; n]).unwrap_err();
            assert_eq!(e.field, "ping reply");
        }
        let r = decode_reply(&[0xff; 1400]).unwrap();
        assert_eq!(r.major, u16::MAX);
        assert_eq!(r.users, u32::MAX);
        assert_eq!(r.warnings.len(), 1);
    }

    #[test]
    fn a_request_carries_the_id() {
        let mut d = Vec::new();
        Request::new(1 << 21 | 2 << 14 | 3 << 7 | 4).encode(&mut d);
        assert_eq!(d, b"\0\0\0\0\x81\x82\x83\x84ogp!");
    }
}

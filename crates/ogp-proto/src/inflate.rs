//! Decompression of peer bytes with a hard cap on what comes out: the one inflater the
//! protocols share (GQP's deflate and gzip datagrams, Doomsday's zlib-packed beacon).
//!
//! A stream that would inflate past the cap is an error
//! ([`DecodeErrorKind::TooLarge`]) as soon as one byte more than the cap comes out:
//! a zip bomb costs at most the cap in memory and its inflation up to there. Corrupt or
//! truncated streams are [`DecodeErrorKind::Invalid`]. Nothing here panics.

use std::io::Read as _;

use crate::error::{DecodeError, DecodeErrorKind};

/// The framing around the DEFLATE data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// Deflate and gzip are GQP's, a feature of its own.
#[cfg_attr(not(feature = "gqp"), allow(dead_code))]
pub(crate) enum Packing {
    /// Raw DEFLATE (RFC 1951).
    Deflate,
    /// gzip (RFC 1952).
    Gzip,
    /// zlib (RFC 1950): a two-byte header, DEFLATE and an Adler-32 checksum.
    Zlib,
}

impl Packing {
    fn invalid(self) -> &'static str {
        match self {
            Self::Deflate => "invalid or truncated deflate data",
            Self::Gzip => "invalid or truncated gzip data",
            Self::Zlib => "invalid or truncated zlib data",
        }
    }
}

/// Inflates `data` (reported as `field` at offset `at`), at most `cap` bytes out.
pub(crate) fn inflate(
    packing: Packing,
    data: &[u8],
    at: usize,
    field: &'static str,
    cap: usize,
) -> Result<Vec<u8>, DecodeError> {
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    let mut out = Vec::with_capacity(data.len().saturating_mul(4).min(cap));
    let read = match packing {
        Packing::Deflate => flate2::read::DeflateDecoder::new(data)
            .take(limit)
            .read_to_end(&mut out),
        Packing::Gzip => flate2::read::GzDecoder::new(data)
            .take(limit)
            .read_to_end(&mut out),
        Packing::Zlib => flate2::read::ZlibDecoder::new(data)
            .take(limit)
            .read_to_end(&mut out),
    };
    match read {
        Ok(n) if n > cap => Err(DecodeError::new(
            at,
            field,
            DecodeErrorKind::TooLarge {
                limit: u64::try_from(cap).unwrap_or(u64::MAX),
            },
        )),
        Ok(_) => Ok(out),
        Err(_) => Err(DecodeError::invalid(at, field, packing.invalid())),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn inflates_up_to_the_cap_and_no_further() {
        let packed = zlib(b"hello");
        assert_eq!(
            inflate(Packing::Zlib, &packed, 0, "x", 5).unwrap(),
            b"hello"
        );
        let e = inflate(Packing::Zlib, &packed, 3, "x", 4).unwrap_err();
        assert_eq!(
            (e.offset, e.kind),
            (3, DecodeErrorKind::TooLarge { limit: 4 })
        );
        // 16 MiB of zeros in about 16 KiB: stopped at the cap
        let bomb = zlib(&vec![0; 16 << 20]);
        assert!(bomb.len() < 20_000);
        let e = inflate(Packing::Zlib, &bomb, 0, "x", 1 << 16).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::TooLarge { limit: 1 << 16 });
        // cut, corrupt, the wrong framing
        for bad in [
            &packed[..packed.len() - 3],
            b"\x78\x9c\xff\xff",
            &packed[2..],
        ] {
            let e = inflate(Packing::Zlib, bad, 0, "x", 100).unwrap_err();
            assert_eq!(
                e.kind,
                DecodeErrorKind::Invalid("invalid or truncated zlib data")
            );
        }
    }
}

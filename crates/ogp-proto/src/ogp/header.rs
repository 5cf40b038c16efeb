//! The OGP header (spec §3.1) for queries and answers.
//!
//! ```text
//! FF FF FF FF | "OGP\0" | HeadSize | Type | HeadFlags (VarBitArray)
//!   query:  [ChallengeNumber u32] [RequestID u32] [MaxBytesPerPacket u16]
//!   answer: [ChallengeNumber u32] [RequestID u32] [SplitPacketCount u8, SplitPacketNo u8]
//! ```
//!
//! HeadSize counts from the HeadSize byte itself to the end of the header fields,
//! excluding the prefix and `"OGP\0"`: the body starts at byte `8 + HeadSize` (A1 in
//! `docs/ogp-wire-choices.md`). A HeadSize larger than the fields is accepted and the
//! extra header bytes are skipped; fields that run past HeadSize, or a HeadSize past the
//! end of the datagram, are errors. The encoder always writes the exact HeadSize.
//! Nothing here panics.

use std::fmt;

use super::types::{read_bits, write_bits, Bits};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::reader::Reader;

/// The 8 bytes every OGP datagram starts with: `FF FF FF FF "OGP\0"`.
pub const PREFIX: [u8; 8] = [0xff, 0xff, 0xff, 0xff, b'O', b'G', b'P', 0];

/// Header flag bits (HeadFlags).
pub mod flags {
    use super::Bits;
    /// 0.0 bAnswer: the datagram is an answer.
    pub const ANSWER: Bits = Bits::bit(0, 0);
    /// 0.1 bChallengeNumber: a ChallengeNumber field follows.
    pub const CHALLENGE: Bits = Bits::bit(0, 1);
    /// 0.2 bRequestID: a RequestID field follows.
    pub const REQUEST_ID: Bits = Bits::bit(0, 2);
    /// 0.3 bSplit: queries carry MaxBytesPerPacket, answers the split fields.
    pub const SPLIT: Bits = Bits::bit(0, 3);
    /// 0.4 bUTF8: in a query, "I can read UTF-8"; in an answer, "the strings are UTF-8"
    /// (the spec's "(bPassword)" placeholder; see A2 in docs/ogp-wire-choices.md).
    pub const UTF8: Bits = Bits::bit(0, 4);
    /// The flags whose presence is derived from the header's optional fields.
    pub const FIELD_FLAGS: Bits = CHALLENGE.with(REQUEST_ID).with(SPLIT);
}

/// The Type byte. Unknown values are kept.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PacketType(pub u8);

impl PacketType {
    /// 0x00 Ping.
    pub const PING: Self = Self(0x00);
    /// 0x01 Default query v1.
    pub const DEFAULT_QUERY: Self = Self(0x01);
    /// 0x02 (Rcon): bracketed in the spec, not implemented.
    pub const RCON: Self = Self(0x02);
    /// 0x03 Master server uplink (answer only).
    pub const MASTER_UPLINK: Self = Self(0x03);
    /// 0xFF Error (answer only).
    pub const ERROR: Self = Self(0xff);

    /// The spec's name, if the value is defined.
    pub const fn name(self) -> Option<&'static str> {
        match self.0 {
            0x00 => Some("ping"),
            0x01 => Some("default query v1"),
            0x02 => Some("rcon"),
            0x03 => Some("master server uplink"),
            0xff => Some("error"),
            _ => None,
        }
    }
}

impl fmt::Debug for PacketType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} (0x{:02x})", self.0),
            None => write!(f, "unknown (0x{:02x})", self.0),
        }
    }
}

impl fmt::Display for PacketType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Split fields of an answer header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitInfo {
    /// SplitPacketCount: the total number of packets.
    pub count: u8,
    /// SplitPacketNo: this packet's number, from 0.
    pub number: u8,
}

/// A decoded or to-be-encoded header. The flags for the optional fields (bChallengeNumber,
/// bRequestID, bSplit) follow from which fields are `Some`; the other bits of `flags`
/// (bAnswer, bUTF8, unknown bits) are carried as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The Type byte.
    pub packet_type: PacketType,
    /// HeadFlags as on the wire (decoding) or the non-field flags to send (encoding).
    pub flags: Bits,
    /// ChallengeNumber.
    pub challenge: Option<u32>,
    /// RequestID.
    pub request_id: Option<u32>,
    /// MaxBytesPerPacket (queries only).
    pub max_bytes_per_packet: Option<u16>,
    /// Split fields (answers only).
    pub split: Option<SplitInfo>,
}

/// A decoded header and where the body starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodedHeader {
    /// The header.
    pub header: Header,
    /// HeadSize as on the wire.
    pub head_size: u8,
    /// Header bytes beyond the known fields that HeadSize told us to skip.
    pub skipped: usize,
}

impl Header {
    /// A query header of the given type with no optional fields.
    pub const fn query(packet_type: PacketType) -> Self {
        Self {
            packet_type,
            flags: Bits::EMPTY,
            challenge: None,
            request_id: None,
            max_bytes_per_packet: None,
            split: None,
        }
    }

    /// An answer header of the given type with no optional fields.
    pub const fn answer(packet_type: PacketType) -> Self {
        Self {
            flags: flags::ANSWER,
            ..Self::query(packet_type)
        }
    }

    /// Whether bAnswer is set.
    pub const fn is_answer(&self) -> bool {
        self.flags.contains(flags::ANSWER)
    }

    /// Whether bUTF8 is set.
    pub const fn utf8(&self) -> bool {
        self.flags.contains(flags::UTF8)
    }

    /// Sets or clears bUTF8.
    #[must_use]
    pub const fn with_utf8(mut self, on: bool) -> Self {
        self.flags = if on {
            self.flags.with(flags::UTF8)
        } else {
            self.flags.without(flags::UTF8)
        };
        self
    }

    /// The HeadFlags this header is encoded with.
    pub const fn wire_flags(&self) -> Bits {
        let split = if self.is_answer() {
            self.split.is_some()
        } else {
            self.max_bytes_per_packet.is_some()
        };
        self.flags
            .without(flags::FIELD_FLAGS)
            .with_if(flags::CHALLENGE, self.challenge.is_some())
            .with_if(flags::REQUEST_ID, self.request_id.is_some())
            .with_if(flags::SPLIT, split)
    }

    /// The exact HeadSize of this header.
    pub fn head_size(&self) -> u8 {
        // A minimal VarBitArray carries 7 bits a byte, at least one byte.
        let bits = self.wire_flags().0;
        let flag_bytes = (64 - bits.leading_zeros() as usize).div_ceil(7).max(1);
        let mut n = 2 + flag_bytes;
        n += 4 * usize::from(self.challenge.is_some());
        n += 4 * usize::from(self.request_id.is_some());
        if self.is_answer() {
            n += 2 * usize::from(self.split.is_some());
        } else {
            n += 2 * usize::from(self.max_bytes_per_packet.is_some());
        }
        u8::try_from(n).unwrap_or(u8::MAX)
    }

    /// Appends the prefix and this header with its exact HeadSize.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&PREFIX);
        out.push(self.head_size());
        out.push(self.packet_type.0);
        write_bits(out, self.wire_flags());
        if let Some(c) = self.challenge {
            out.extend_from_slice(&c.to_le_bytes());
        }
        if let Some(id) = self.request_id {
            out.extend_from_slice(&id.to_le_bytes());
        }
        if self.is_answer() {
            if let Some(s) = self.split {
                out.push(s.count);
                out.push(s.number);
            }
        } else if let Some(m) = self.max_bytes_per_packet {
            out.extend_from_slice(&m.to_le_bytes());
        }
    }

    /// Decodes the prefix and header at the start of `datagram`: the header and the
    /// offset of the body. Offsets in errors count from the first byte of `datagram`.
    pub fn decode(datagram: &[u8]) -> Result<(DecodedHeader, usize), DecodeError> {
        let mut r = Reader::new(datagram);
        let h = Self::read(&mut r)?;
        Ok((h, r.offset()))
    }

    /// Decodes the prefix and header; the reader is left at the start of the body.
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<DecodedHeader, DecodeError> {
        let prefix: [u8; 8] = r.array("Prefix").map_err(|e| DecodeError {
            kind: DecodeErrorKind::BadMagic,
            ..e
        })?;
        if prefix != PREFIX {
            return Err(DecodeError::new(0, "Prefix", DecodeErrorKind::BadMagic));
        }
        let hs_offset = r.offset();
        let head_size = r.u8("HeadSize")?;
        if head_size < 3 {
            return Err(DecodeError::invalid(
                hs_offset,
                "HeadSize",
                "smaller than the 3 bytes every header has",
            ));
        }
        // The header (from the HeadSize byte on) is HeadSize bytes long.
        let mut hr = r
            .sub(usize::from(head_size) - 1, "HeadSize")
            .map_err(|e| DecodeError {
                offset: hs_offset,
                kind: DecodeErrorKind::Invalid("points past the end of the datagram"),
                ..e
            })?;
        let packet_type = PacketType(hr.u8("Type")?);
        let overrun = |e: DecodeError| match e.kind {
            DecodeErrorKind::Truncated { .. } => DecodeError {
                kind: DecodeErrorKind::Invalid("header field runs past HeadSize"),
                ..e
            },
            _ => e,
        };
        let wire_flags = read_bits(&mut hr, "HeadFlags").map_err(overrun)?;
        let answer = wire_flags.contains(flags::ANSWER);
        let challenge = if wire_flags.contains(flags::CHALLENGE) {
            Some(hr.u32_le("ChallengeNumber").map_err(overrun)?)
        } else {
            None
        };
        let request_id = if wire_flags.contains(flags::REQUEST_ID) {
            Some(hr.u32_le("RequestID").map_err(overrun)?)
        } else {
            None
        };
        let (mut max_bytes_per_packet, mut split) = (None, None);
        if wire_flags.contains(flags::SPLIT) {
            if answer {
                let count = hr.u8("SplitPacketCount").map_err(overrun)?;
                let number = hr.u8("SplitPacketNo").map_err(overrun)?;
                split = Some(SplitInfo { count, number });
            } else {
                max_bytes_per_packet = Some(hr.u16_le("MaxBytesPerPacket").map_err(overrun)?);
            }
        }
        Ok(DecodedHeader {
            header: Header {
                packet_type,
                flags: wire_flags,
                challenge,
                request_id,
                max_bytes_per_packet,
                split,
            },
            head_size,
            skipped: hr.remaining(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{from_hex, to_hex};

    fn dec(hex: &str) -> Result<DecodedHeader, DecodeError> {
        let b = from_hex(hex).unwrap();
        Header::read(&mut Reader::new(&b))
    }

    #[test]
    fn php_query_header() {
        let d = dec("ffffffff4f475000070112462613b9bf01").unwrap();
        assert_eq!(d.head_size, 7);
        assert_eq!(d.header.packet_type, PacketType::DEFAULT_QUERY);
        assert_eq!(d.header.challenge, Some(0xb913_2646));
        assert!(d.header.utf8() && !d.header.is_answer());
        let mut out = Vec::new();
        d.header.encode(&mut out);
        assert_eq!(to_hex(&out), "ffffffff4f475000070112462613b9");
    }

    #[test]
    fn head_sizes_match_the_observed_values() {
        let mut h = Header::answer(PacketType::DEFAULT_QUERY);
        assert_eq!(h.head_size(), 3);
        h.challenge = Some(1);
        assert_eq!(h.head_size(), 7);
        h.request_id = Some(1);
        assert_eq!(h.head_size(), 11);
        h.split = Some(SplitInfo {
            count: 9,
            number: 0,
        });
        assert_eq!(h.head_size(), 13);
        h.challenge = None;
        assert_eq!(h.head_size(), 9);
        let mut q = Header::query(PacketType::DEFAULT_QUERY);
        q.challenge = Some(1);
        q.max_bytes_per_packet = Some(500);
        assert_eq!(q.head_size(), 9);
    }

    #[test]
    fn head_size_counts_every_flag_byte() {
        let mut h = Header::answer(PacketType::DEFAULT_QUERY);
        for (flags, bytes) in [
            (0u64, 1usize),
            (0x7f, 1),
            (0x80, 2),
            (1 << 13, 2),
            (1 << 14, 3),
            (1 << 62, 9),
        ] {
            h.flags = Bits(flags).with(flags::ANSWER);
            let mut out = Vec::new();
            h.encode(&mut out);
            assert_eq!(usize::from(h.head_size()), 2 + bytes, "flags {flags:#x}");
            assert_eq!(out.len(), 8 + usize::from(h.head_size()));
        }
    }

    #[test]
    fn split_packet_header() {
        let d = dec("ffffffff4f4750000d011f462613b90100000009002a00").unwrap();
        assert_eq!(
            d.header.split,
            Some(SplitInfo {
                count: 9,
                number: 0
            })
        );
        assert_eq!(d.header.request_id, Some(1));
        let mut out = Vec::new();
        d.header.encode(&mut out);
        assert_eq!(to_hex(&out), "ffffffff4f4750000d011f462613b9010000000900");
    }

    #[test]
    fn larger_headsize_skips_extension_bytes() {
        // capture 21: HeadSize 9 with two unknown header bytes
        let b = from_hex("ffffffff4f475000090112462613b9aabb01").unwrap();
        let mut r = Reader::new(&b);
        let d = Header::read(&mut r).unwrap();
        assert_eq!(d.skipped, 2);
        assert_eq!(r.offset(), 8 + 9);
        assert_eq!(r.peek_rest(), [0x01]);
    }

    #[test]
    fn bad_headers_are_errors() {
        // capture 22: fields run past HeadSize
        let e = dec("ffffffff4f475000030102462613b9").unwrap_err();
        assert_eq!(e.field, "ChallengeNumber");
        assert_eq!(
            e.kind,
            DecodeErrorKind::Invalid("header field runs past HeadSize")
        );
        // HeadSize past the end
        let e = dec("ffffffff4f4750002001").unwrap_err();
        assert_eq!((e.field, e.offset), ("HeadSize", 8));
        // wrong magic, short magic
        assert_eq!(
            dec("ffffffff4f475100030100").unwrap_err().kind,
            DecodeErrorKind::BadMagic
        );
        assert_eq!(dec("ffff").unwrap_err().kind, DecodeErrorKind::BadMagic);
        // HeadSize too small
        assert!(dec("ffffffff4f4750000101").is_err());
        // endless flags inside the header
        assert!(dec("ffffffff4f47500006018080808080").is_err());
    }
}

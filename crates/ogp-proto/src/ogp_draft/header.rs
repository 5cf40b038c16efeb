//! The draft's header (001 l.4–32), the same shape for queries and answers up to the
//! split fields.
//!
//! ```text
//! FF FF FF FF | "OGP\0" | HeadFlags (VarBitArray)
//!   query:  [RequestID u32] [ChallengeNumber u32] [MaxBytesPerPacket i16] | Type u8
//!   answer: [RequestID u32] [ChallengeNumber u32] [SplitPacketCount i8, SplitPacketNo i8] | Type u8
//! ```
//!
//! Unlike v1.01 there is no HeadSize: nothing tells a reader where the header ends except
//! the flags it knows. A HeadFlags bit this implementation does not know could announce a
//! field of unknown size, so it is an error (D5 in `docs/ogp-draft.md`). Integers are
//! little-endian (D2); the signed split fields must not be negative, and SplitPacketNo
//! must be below SplitPacketCount (D12). Nothing here panics.

use std::fmt;

use crate::error::{DecodeError, DecodeErrorKind};
use crate::ogp::header::{SplitInfo, PREFIX};
use crate::ogp::types::{read_bits, write_bits, Bits};
use crate::reader::Reader;

/// HeadFlags bits (001 l.7–10, l.21–24).
pub mod flags {
    use super::Bits;
    /// 0.0 bAnswer: the datagram is an answer.
    pub const ANSWER: Bits = Bits::bit(0, 0);
    /// 0.1 bRequestID: a RequestID field follows.
    pub const REQUEST_ID: Bits = Bits::bit(0, 1);
    /// 0.2 bChallengeNumber: a ChallengeNumber field follows.
    pub const CHALLENGE: Bits = Bits::bit(0, 2);
    /// 0.3 bSplit: queries carry MaxBytesPerPacket, answers the split fields.
    pub const SPLIT: Bits = Bits::bit(0, 3);
    /// The flags whose presence follows from the header's optional fields.
    pub const FIELD_FLAGS: Bits = REQUEST_ID.with(CHALLENGE).with(SPLIT);
    /// Every bit the draft defines.
    pub const KNOWN: Bits = ANSWER.with(FIELD_FLAGS);
}

/// ChallengeNumber 0xFFFFFFFF asks for a new challenge (001 l.12). It is never issued.
pub const REQUEST_CHALLENGE: u32 = 0xffff_ffff;

/// The smallest MaxBytesPerPacket the draft allows (001 l.13).
pub const MIN_MAX_BYTES_PER_PACKET: i16 = 500;

/// The largest MaxBytesPerPacket the draft allows (001 l.13).
pub const MAX_MAX_BYTES_PER_PACKET: i16 = 1500;

/// The Type byte (001 l.14–17, l.29–32). Unknown values are kept.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PacketType(pub u8);

impl PacketType {
    /// 0 Banned: in an answer, the source is banned.
    pub const BANNED: Self = Self(0);
    /// 1 None: no data (we use it for challenge requests and answers, D9).
    pub const NONE: Self = Self(1);
    /// 2 Default query v1.
    pub const DEFAULT_QUERY: Self = Self(2);
    /// 3 Rcon: named by the draft, not defined further; not implemented.
    pub const RCON: Self = Self(3);

    /// The draft's name, if the value is defined.
    pub const fn name(self) -> Option<&'static str> {
        match self.0 {
            0 => Some("banned"),
            1 => Some("none"),
            2 => Some("default query v1"),
            3 => Some("rcon"),
            _ => None,
        }
    }
}

impl fmt::Debug for PacketType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "unknown ({})", self.0),
        }
    }
}

impl fmt::Display for PacketType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A decoded or to-be-encoded header. The flags of the optional fields follow from which
/// fields are `Some`; `flags` carries bAnswer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// HeadFlags as on the wire (decoding) or bAnswer to send (encoding).
    pub flags: Bits,
    /// RequestID (INT32 on the wire, kept as its bit pattern).
    pub request_id: Option<u32>,
    /// ChallengeNumber (INT32 on the wire, kept as its bit pattern; see
    /// [`REQUEST_CHALLENGE`]).
    pub challenge: Option<u32>,
    /// MaxBytesPerPacket (queries only; the draft allows 500–1500).
    pub max_bytes_per_packet: Option<i16>,
    /// SplitPacketCount and SplitPacketNo (answers only; each 0–127).
    pub split: Option<SplitInfo>,
    /// The Type byte.
    pub packet_type: PacketType,
}

impl Header {
    /// A query header of the given type with no optional fields.
    pub const fn query(packet_type: PacketType) -> Self {
        Self {
            flags: Bits::EMPTY,
            request_id: None,
            challenge: None,
            max_bytes_per_packet: None,
            split: None,
            packet_type,
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

    /// The HeadFlags this header is encoded with.
    pub const fn wire_flags(&self) -> Bits {
        let split = if self.is_answer() {
            self.split.is_some()
        } else {
            self.max_bytes_per_packet.is_some()
        };
        self.flags
            .and(flags::ANSWER)
            .with_if(flags::REQUEST_ID, self.request_id.is_some())
            .with_if(flags::CHALLENGE, self.challenge.is_some())
            .with_if(flags::SPLIT, split)
    }

    /// Bytes this header takes on the wire, prefix included.
    pub const fn encoded_len(&self) -> usize {
        let mut n = 8 + 1 + 1; // prefix, HeadFlags (one byte: bits 0.0–0.3), Type
        if self.request_id.is_some() {
            n += 4;
        }
        if self.challenge.is_some() {
            n += 4;
        }
        let split = if self.is_answer() {
            self.split.is_some()
        } else {
            self.max_bytes_per_packet.is_some()
        };
        if split {
            n += 2;
        }
        n
    }

    /// Appends the prefix and this header.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&PREFIX);
        write_bits(out, self.wire_flags());
        if let Some(id) = self.request_id {
            out.extend_from_slice(&id.to_le_bytes());
        }
        if let Some(c) = self.challenge {
            out.extend_from_slice(&c.to_le_bytes());
        }
        if self.is_answer() {
            if let Some(s) = self.split {
                out.push(s.count);
                out.push(s.number);
            }
        } else if let Some(m) = self.max_bytes_per_packet {
            out.extend_from_slice(&m.to_le_bytes());
        }
        out.push(self.packet_type.0);
    }

    /// Decodes the prefix and header at the start of `datagram`: the header and the
    /// offset of the body. Offsets in errors count from the first byte of `datagram`.
    pub fn decode(datagram: &[u8]) -> Result<(Self, usize), DecodeError> {
        let mut r = Reader::new(datagram);
        let h = Self::read(&mut r)?;
        Ok((h, r.offset()))
    }

    /// Decodes the prefix and header; the reader is left at the start of the body.
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let prefix: [u8; 8] = r.array("Prefix").map_err(|e| DecodeError {
            kind: DecodeErrorKind::BadMagic,
            ..e
        })?;
        if prefix != PREFIX {
            return Err(DecodeError::new(0, "Prefix", DecodeErrorKind::BadMagic));
        }
        let flags_at = r.offset();
        let wire_flags = read_bits(r, "HeadFlags")?;
        if !flags::KNOWN.contains(wire_flags) {
            return Err(DecodeError::invalid(
                flags_at,
                "HeadFlags",
                "unknown flag bit: the header's layout is unknown",
            ));
        }
        let answer = wire_flags.contains(flags::ANSWER);
        let request_id = if wire_flags.contains(flags::REQUEST_ID) {
            Some(r.u32_le("RequestID")?)
        } else {
            None
        };
        let challenge = if wire_flags.contains(flags::CHALLENGE) {
            Some(r.u32_le("ChallengeNumber")?)
        } else {
            None
        };
        let (mut max_bytes_per_packet, mut split) = (None, None);
        if wire_flags.contains(flags::SPLIT) {
            if answer {
                let count_at = r.offset();
                let count = r.u8("SplitPacketCount")?;
                let number_at = r.offset();
                let number = r.u8("SplitPacketNo")?;
                if count == 0 || count > 127 {
                    return Err(DecodeError::invalid(
                        count_at,
                        "SplitPacketCount",
                        "not within 1–127 (an INT8 count of packets)",
                    ));
                }
                if number >= count {
                    return Err(DecodeError::invalid(
                        number_at,
                        "SplitPacketNo",
                        "not below SplitPacketCount",
                    ));
                }
                split = Some(SplitInfo { count, number });
            } else {
                max_bytes_per_packet = Some(r.i16_le("MaxBytesPerPacket")?);
            }
        }
        let packet_type = PacketType(r.u8("Type")?);
        Ok(Self {
            flags: wire_flags,
            request_id,
            challenge,
            max_bytes_per_packet,
            split,
            packet_type,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{from_hex, to_hex};

    fn dec(hex: &str) -> Result<Header, DecodeError> {
        let b = from_hex(hex).unwrap();
        Header::read(&mut Reader::new(&b))
    }

    fn enc(h: &Header) -> String {
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(out.len(), h.encoded_len());
        to_hex(&out)
    }

    #[test]
    fn query_header_fields_in_draft_order() {
        // HeadFlags 0e: bRequestID | bChallengeNumber | bSplit; RequestID before
        // ChallengeNumber; MaxBytesPerPacket 1400 (78 05); Type 2
        let h = dec("ffffffff4f4750000e44332211ffffffff780502").unwrap();
        assert!(!h.is_answer());
        assert_eq!(h.request_id, Some(0x1122_3344));
        assert_eq!(h.challenge, Some(REQUEST_CHALLENGE));
        assert_eq!(h.max_bytes_per_packet, Some(1400));
        assert_eq!(h.packet_type, PacketType::DEFAULT_QUERY);
        assert_eq!(enc(&h), "ffffffff4f4750000e44332211ffffffff780502");
        // no optional field
        let h = dec("ffffffff4f4750000001").unwrap();
        assert_eq!(h, Header::query(PacketType::NONE));
    }

    #[test]
    fn answer_header_with_split_fields() {
        let h = dec("ffffffff4f4750000f0100000078563412030002").unwrap();
        assert!(h.is_answer());
        assert_eq!(h.request_id, Some(1));
        assert_eq!(h.challenge, Some(0x1234_5678));
        assert_eq!(
            h.split,
            Some(SplitInfo {
                count: 3,
                number: 0
            })
        );
        assert_eq!(h.packet_type, PacketType::DEFAULT_QUERY);
        assert_eq!(enc(&h), "ffffffff4f4750000f0100000078563412030002");
    }

    #[test]
    fn bad_headers_are_errors() {
        let e = dec("ffffffff4f47500010").unwrap_err();
        assert_eq!((e.field, e.offset), ("HeadFlags", 8));
        let e = dec("ffffffff4f475000").unwrap_err();
        assert_eq!((e.field, e.offset), ("HeadFlags", 8));
        assert_eq!(dec("ffffffff4f47500002").unwrap_err().field, "RequestID");
        assert_eq!(
            dec("ffffffff4f47500004010203").unwrap_err().field,
            "ChallengeNumber"
        );
        assert_eq!(dec("ffffffff4f47500000").unwrap_err().field, "Type");
        let e = dec("ffffffff4f475000098000").unwrap_err();
        assert_eq!((e.field, e.offset), ("SplitPacketCount", 9));
        let e = dec("ffffffff4f475000090000").unwrap_err();
        assert_eq!(e.field, "SplitPacketCount");
        let e = dec("ffffffff4f475000090202").unwrap_err();
        assert_eq!((e.field, e.offset), ("SplitPacketNo", 10));
        assert_eq!(
            dec("ffffffff4f475100000100").unwrap_err().kind,
            DecodeErrorKind::BadMagic
        );
        assert_eq!(dec("ffff").unwrap_err().kind, DecodeErrorKind::BadMagic);
        // a v1.01 query (HeadSize 7 = bAnswer|bRequestID|bChallengeNumber here) is read
        // as an answer; a bUTF8 flag (v1.01 HeadFlags 0x12 as draft HeadFlags) is unknown
        assert!(dec("ffffffff4f475000070112462613b9").is_err_and(|e| e.field != "Prefix"));
        assert!(dec("ffffffff4f47500012").is_err());
    }
}

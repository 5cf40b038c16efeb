//! Split answers (spec §3.1, SplitPacketCount / SplitPacketNo): building them for a
//! MaxBytesPerPacket, and reassembling them in any order.
//!
//! Layout, as the reference SDK sends it (A8): every packet has bRequestID and bSplit with
//! the same RequestID; SplitPacketCount is the total number of packets and SplitPacketNo
//! counts from 0; only packet 0 carries the ChallengeNumber. The body is cut at arbitrary
//! byte positions; the receiver concatenates the bodies in packet order and parses the
//! result as one answer body.
//!
//! Sizing starts from the SDK's, so that our packets are byte-identical to its own:
//! `per_packet = MaxBytesPerPacket − 22`, `count = body_len / per_packet + 1`, every
//! packet carries `body_len / count` bytes and the last one the remainder. Where that
//! would make a packet larger than MaxBytesPerPacket (the SDK's formula forgets the
//! remainder), the count is raised until every packet fits. A count of 1 is sent
//! unsplit; more than 255 packets cannot be expressed and is an error.
//!
//! The [`Reassembler`] bounds what a peer can make it hold: at most 255 parts, at most
//! [`MAX_REASSEMBLED_BYTES`] in total; duplicates are dropped, and parts that disagree
//! with the first one (RequestID, count) are refused. Nothing here panics.

use std::fmt;

use super::header::{flags, Header, SplitInfo};
use crate::responder_core::Transmits;

/// The smallest MaxBytesPerPacket the spec allows (other than 0, "no OGP splitting").
pub const MIN_MAX_BYTES_PER_PACKET: u16 = 500;

/// Header overhead the SDK reserves per packet: prefix 8 + HeadSize 1 + Type 1 + two
/// flag bytes + challenge 4 + request id 4 + split fields 2.
pub const SPLIT_OVERHEAD: usize = 22;

/// Most body bytes a [`Reassembler`] holds for one answer.
pub const MAX_REASSEMBLED_BYTES: usize = 1 << 20;

/// Why an answer could not be split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SplitError {
    /// MaxBytesPerPacket below 500.
    MaxBytesTooSmall(u16),
    /// The answer would need more than 255 packets.
    TooManyPackets(usize),
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MaxBytesTooSmall(m) => {
                write!(f, "MaxBytesPerPacket {m} is below the minimum of 500")
            }
            Self::TooManyPackets(n) => {
                write!(f, "answer would need {n} packets; at most 255 are possible")
            }
        }
    }
}

impl std::error::Error for SplitError {}

/// Builds the datagrams of an answer for a MaxBytesPerPacket. `header` is the answer
/// header as it would be unsplit (type, flags such as bUTF8, challenge); `body` the
/// answer body. Returns one datagram (unsplit, `header` unchanged) when the body fits.
pub fn split_answer(
    header: &Header,
    request_id: u32,
    body: &[u8],
    max_bytes_per_packet: u16,
) -> Result<Vec<Vec<u8>>, SplitError> {
    let mut out = Transmits::default();
    split_answer_into(header, request_id, body, max_bytes_per_packet, &mut out)?;
    Ok(out.iter().map(<[u8]>::to_vec).collect())
}

/// [`split_answer`], writing the datagrams into `out` (appended, reusing its buffers).
/// Returns how many were written; on an error nothing is.
pub fn split_answer_into(
    header: &Header,
    request_id: u32,
    body: &[u8],
    max_bytes_per_packet: u16,
    out: &mut Transmits,
) -> Result<usize, SplitError> {
    if max_bytes_per_packet < MIN_MAX_BYTES_PER_PACKET {
        return Err(SplitError::MaxBytesTooSmall(max_bytes_per_packet));
    }
    let per_packet = usize::from(max_bytes_per_packet) - SPLIT_OVERHEAD;
    let mut count = body.len() / per_packet + 1;
    if count == 1 {
        let d = out.push_buf();
        header.encode(d);
        d.extend_from_slice(body);
        return Ok(1);
    }
    // The SDK's count, raised while a packet would exceed MaxBytesPerPacket (the last
    // packet also carries the remainder, which the SDK's formula does not allow for).
    let limit = usize::from(max_bytes_per_packet);
    let first_header = 8 + usize::from(split_header(header, 1, 255, 0).head_size());
    let other_header = 8 + usize::from(split_header(header, 1, 255, 1).head_size());
    while count <= 255 {
        let each = body.len() / count;
        let last = body.len() - each * (count - 1);
        if first_header + each <= limit && other_header + last <= limit {
            break;
        }
        count += 1;
    }
    let count_u8 = u8::try_from(count).map_err(|_| SplitError::TooManyPackets(count))?;
    let each = body.len() / count;
    let mut rest = body;
    for number in 0..count_u8 {
        let take = if usize::from(number) + 1 == count {
            rest.len()
        } else {
            each
        };
        let (chunk, tail) = rest.split_at_checked(take).unwrap_or((rest, &[]));
        rest = tail;
        let d = out.push_buf();
        split_header(header, request_id, count_u8, number).encode(d);
        d.extend_from_slice(chunk);
    }
    Ok(count)
}

/// The header of split packet `number` of `count`.
fn split_header(header: &Header, request_id: u32, count: u8, number: u8) -> Header {
    Header {
        flags: header.flags.with(flags::ANSWER),
        challenge: if number == 0 { header.challenge } else { None },
        request_id: Some(request_id),
        split: Some(SplitInfo { count, number }),
        max_bytes_per_packet: None,
        ..*header
    }
}

/// Why a split packet was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReassemblyError {
    /// The packet has no split fields.
    NotSplit,
    /// SplitPacketCount is 0, or SplitPacketNo is not below it.
    BadNumber {
        /// SplitPacketNo.
        number: u8,
        /// SplitPacketCount.
        count: u8,
    },
    /// The packet belongs to another answer (RequestID or count differs from the first).
    Mismatch,
    /// The parts add up to more than [`MAX_REASSEMBLED_BYTES`].
    TooLarge,
}

impl fmt::Display for ReassemblyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotSplit => f.write_str("packet is not part of a split answer"),
            Self::BadNumber { number, count } => {
                write!(
                    f,
                    "split packet number {number} is out of range for a count of {count}"
                )
            }
            Self::Mismatch => {
                f.write_str("split packet belongs to another answer (RequestID or count differ)")
            }
            Self::TooLarge => write!(f, "split answer exceeds {MAX_REASSEMBLED_BYTES} bytes"),
        }
    }
}

impl std::error::Error for ReassemblyError {}

/// What [`Reassembler::push`] did with a packet. `H` is the protocol's header type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed<H = Header> {
    /// Stored; more parts are missing.
    Incomplete,
    /// A part we already had; dropped.
    Duplicate,
    /// All parts are in: packet 0's header and the concatenated body.
    Complete {
        /// Header of packet 0 (it carries the challenge).
        header: H,
        /// The reassembled answer body.
        body: Vec<u8>,
    },
}

/// Collects the packets of one split answer, in any order.
///
/// `H` is the header type kept from packet 0: OGP v1.01's [`Header`] by default (use
/// [`Reassembler::push`]); the v0.02 draft, whose split fields are the same, passes its own
/// header to [`Reassembler::push_part`].
#[derive(Debug, Clone)]
pub struct Reassembler<H = Header> {
    key: Option<(Option<u32>, u8)>,
    parts: Vec<Option<Vec<u8>>>,
    first: Option<H>,
    bytes: usize,
    have: usize,
}

impl<H> Default for Reassembler<H> {
    fn default() -> Self {
        Self {
            key: None,
            parts: Vec::new(),
            first: None,
            bytes: 0,
            have: 0,
        }
    }
}

impl Reassembler {
    /// An empty reassembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a packet given its decoded header and its body (the bytes after its header).
    pub fn push(&mut self, header: &Header, body: &[u8]) -> Result<Pushed, ReassemblyError> {
        let split = header.split.ok_or(ReassemblyError::NotSplit)?;
        self.push_part(*header, header.request_id, split, body)
    }
}

impl<H: Clone> Reassembler<H> {
    /// Number of parts received so far (without duplicates).
    pub fn received(&self) -> usize {
        self.have
    }

    /// The parts still missing, by SplitPacketNo.
    pub fn missing(&self) -> Vec<u8> {
        self.parts
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_none())
            .filter_map(|(i, _)| u8::try_from(i).ok())
            .collect()
    }

    /// Adds a packet given its header, its RequestID and split fields, and its body (the
    /// bytes after its header). Packets of one answer must agree on the RequestID and
    /// the count; the header of packet 0 is returned with the complete body.
    pub fn push_part(
        &mut self,
        header: H,
        request_id: Option<u32>,
        split: SplitInfo,
        body: &[u8],
    ) -> Result<Pushed<H>, ReassemblyError> {
        if split.count == 0 || split.number >= split.count {
            return Err(ReassemblyError::BadNumber {
                number: split.number,
                count: split.count,
            });
        }
        let key = (request_id, split.count);
        match self.key {
            None => {
                self.key = Some(key);
                self.parts = vec![None; usize::from(split.count)];
            }
            Some(k) if k != key => return Err(ReassemblyError::Mismatch),
            Some(_) => {}
        }
        let Some(slot) = self.parts.get_mut(usize::from(split.number)) else {
            return Err(ReassemblyError::Mismatch);
        };
        if slot.is_some() {
            return Ok(Pushed::Duplicate);
        }
        let total = self.bytes.saturating_add(body.len());
        if total > MAX_REASSEMBLED_BYTES {
            return Err(ReassemblyError::TooLarge);
        }
        *slot = Some(body.to_vec());
        self.bytes = total;
        self.have += 1;
        if split.number == 0 {
            self.first = Some(header.clone());
        }
        if self.have < self.parts.len() {
            return Ok(Pushed::Incomplete);
        }
        let mut body = Vec::with_capacity(self.bytes);
        for p in self.parts.iter().flatten() {
            body.extend_from_slice(p);
        }
        let header = self.first.take().unwrap_or(header);
        *self = Self::default();
        Ok(Pushed::Complete { header, body })
    }
}

#[cfg(test)]
mod tests {
    use super::super::header::PacketType;
    use super::*;
    use crate::reader::Reader;

    fn parse(d: &[u8]) -> (Header, Vec<u8>) {
        let mut r = Reader::new(d);
        let h = Header::read(&mut r).unwrap().header;
        (h, r.peek_rest().to_vec())
    }

    #[test]
    fn sizes_follow_the_sdk() {
        let mut h = Header::answer(PacketType::DEFAULT_QUERY).with_utf8(true);
        h.challenge = Some(7);
        let body: Vec<u8> = (0..4046u32).map(|i| i as u8).collect();
        let packets = split_answer(&h, 1, &body, 500).unwrap();
        let sizes: Vec<usize> = packets.iter().map(Vec::len).collect();
        assert_eq!(sizes, [470, 466, 466, 466, 466, 466, 466, 466, 471]);
        assert!(packets.iter().all(|p| p.len() <= 500));
        let (h0, _) = parse(&packets[0]);
        assert_eq!(h0.challenge, Some(7));
        assert_eq!(
            h0.split,
            Some(SplitInfo {
                count: 9,
                number: 0
            })
        );
        let (h1, _) = parse(&packets[1]);
        assert_eq!(h1.challenge, None);
        assert_eq!(h1.request_id, Some(1));

        // reassemble in reverse order with a duplicate
        let mut r = Reassembler::new();
        let mut done = None;
        for p in packets.iter().rev().chain(packets.iter().take(1)) {
            let (h, b) = parse(p);
            match r.push(&h, &b) {
                Ok(Pushed::Complete { header, body }) => done = Some((header, body)),
                Ok(_) => {}
                Err(e) => panic!("{e}"),
            }
        }
        let (header, got) = done.unwrap();
        assert_eq!(got, body);
        assert_eq!(header.challenge, Some(7));
    }

    #[test]
    fn no_packet_exceeds_the_limit() {
        let mut h = Header::answer(PacketType::DEFAULT_QUERY);
        h.challenge = Some(1);
        for len in [3823usize, 479, 957, 10_000, 100_000, 478 * 200 + 77] {
            let body = vec![7u8; len];
            for max in [500u16, 501, 777, 1400] {
                let packets = split_answer(&h, 3, &body, max).unwrap();
                assert!(
                    packets.iter().all(|p| p.len() <= usize::from(max)),
                    "len {len} max {max}"
                );
                let total: usize = packets.iter().map(|p| parse(p).1.len()).sum();
                assert_eq!(total, len);
            }
        }
    }

    #[test]
    fn small_answers_stay_unsplit() {
        let h = Header::answer(PacketType::DEFAULT_QUERY);
        let p = split_answer(&h, 5, &[1, 2, 3], 500).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(parse(&p[0]).0.split, None);
        assert_eq!(
            split_answer(&h, 5, &[], 499),
            Err(SplitError::MaxBytesTooSmall(499))
        );
        let huge = vec![0u8; 478 * 256];
        assert!(matches!(
            split_answer(&h, 5, &huge, 500),
            Err(SplitError::TooManyPackets(257))
        ));
    }

    #[test]
    fn hostile_parts_are_refused() {
        let mut h = Header::answer(PacketType::DEFAULT_QUERY);
        let mut r = Reassembler::new();
        assert_eq!(r.push(&h, &[]), Err(ReassemblyError::NotSplit));
        h.request_id = Some(1);
        h.split = Some(SplitInfo {
            count: 0,
            number: 0,
        });
        assert!(matches!(
            r.push(&h, &[]),
            Err(ReassemblyError::BadNumber { .. })
        ));
        h.split = Some(SplitInfo {
            count: 2,
            number: 2,
        });
        assert!(matches!(
            r.push(&h, &[]),
            Err(ReassemblyError::BadNumber { .. })
        ));
        h.split = Some(SplitInfo {
            count: 2,
            number: 1,
        });
        assert_eq!(r.push(&h, &[1]), Ok(Pushed::Incomplete));
        assert_eq!(r.missing(), [0]);
        h.request_id = Some(2);
        h.split = Some(SplitInfo {
            count: 2,
            number: 0,
        });
        assert_eq!(r.push(&h, &[0]), Err(ReassemblyError::Mismatch));
        h.request_id = Some(1);
        h.split = Some(SplitInfo {
            count: 3,
            number: 0,
        });
        assert_eq!(r.push(&h, &[0]), Err(ReassemblyError::Mismatch));
        h.split = Some(SplitInfo {
            count: 2,
            number: 1,
        });
        assert_eq!(r.push(&h, &[1]), Ok(Pushed::Duplicate));
        h.split = Some(SplitInfo {
            count: 2,
            number: 0,
        });
        assert_eq!(
            r.push(&h, &[0]),
            Ok(Pushed::Complete {
                header: h,
                body: vec![0, 1]
            })
        );
        // too much data
        let mut r = Reassembler::new();
        h.split = Some(SplitInfo {
            count: 255,
            number: 0,
        });
        let big = vec![0u8; MAX_REASSEMBLED_BYTES];
        assert_eq!(r.push(&h, &big), Ok(Pushed::Incomplete));
        h.split = Some(SplitInfo {
            count: 255,
            number: 1,
        });
        assert_eq!(r.push(&h, &[1]), Err(ReassemblyError::TooLarge));
    }
}

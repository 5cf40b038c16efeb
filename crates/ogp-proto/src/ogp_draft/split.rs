//! Split answers for the draft's MaxBytesPerPacket (001 l.13, l.27–28).
//!
//! The draft names SplitPacketCount and SplitPacketNo (both INT8) and nothing else. We
//! follow v1.01's reference layout (D12 in `docs/ogp-draft.md`): Count is the total number
//! of packets (1–127), No counts from 0, every packet has bRequestID with the same
//! RequestID, only packet 0 carries the ChallengeNumber, and every packet ends its header
//! with the Type byte. The body is cut at arbitrary byte positions into chunks of
//! `MaxBytesPerPacket − 20` bytes (20 = the largest split header: prefix 8, HeadFlags 1,
//! RequestID 4, ChallengeNumber 4, split fields 2, Type 1), so no packet exceeds
//! MaxBytesPerPacket. An answer that fits one packet is sent unsplit.
//!
//! Reassembly uses v1.01's [`Reassembler`](crate::ogp::Reassembler) (bounded: at most
//! 255 parts and [`MAX_REASSEMBLED_BYTES`](crate::ogp::split::MAX_REASSEMBLED_BYTES)).
//! Nothing here panics.

use std::fmt;

use super::header::{flags, Header, MAX_MAX_BYTES_PER_PACKET, MIN_MAX_BYTES_PER_PACKET};
use crate::ogp::header::SplitInfo;
use crate::responder_core::Transmits;

/// The largest split header: prefix 8, HeadFlags 1, RequestID 4, ChallengeNumber 4,
/// SplitPacketCount and SplitPacketNo 2, Type 1.
pub const SPLIT_OVERHEAD: usize = 20;

/// Most packets of one answer (SplitPacketCount is an INT8).
pub const MAX_PACKETS: usize = 127;

/// Why an answer could not be split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SplitError {
    /// MaxBytesPerPacket outside 500–1500.
    OutOfRange(i16),
    /// The answer would need more than 127 packets.
    TooManyPackets(usize),
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfRange(m) => {
                write!(f, "MaxBytesPerPacket {m} is outside the draft's 500–1500")
            }
            Self::TooManyPackets(n) => {
                write!(f, "answer would need {n} packets; at most 127 are possible")
            }
        }
    }
}

impl std::error::Error for SplitError {}

/// Builds the datagrams of an answer for a MaxBytesPerPacket of 500–1500. `header` is the
/// answer header as it would be unsplit (Type, challenge, RequestID if any); `request_id`
/// is used when it has none. Returns one datagram (`header` unchanged) when the answer
/// fits one packet.
pub fn split_answer(
    header: &Header,
    request_id: u32,
    body: &[u8],
    max_bytes_per_packet: i16,
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
    max_bytes_per_packet: i16,
    out: &mut Transmits,
) -> Result<usize, SplitError> {
    if !(MIN_MAX_BYTES_PER_PACKET..=MAX_MAX_BYTES_PER_PACKET).contains(&max_bytes_per_packet) {
        return Err(SplitError::OutOfRange(max_bytes_per_packet));
    }
    let limit = usize::try_from(max_bytes_per_packet).unwrap_or(0);
    if header.encoded_len() + body.len() <= limit {
        let d = out.push_buf();
        header.encode(d);
        d.extend_from_slice(body);
        return Ok(1);
    }
    let per_packet = limit.saturating_sub(SPLIT_OVERHEAD).max(1);
    let count = body.len().div_ceil(per_packet);
    if count > MAX_PACKETS {
        return Err(SplitError::TooManyPackets(count));
    }
    let count_u8 = u8::try_from(count).map_err(|_| SplitError::TooManyPackets(count))?;
    let request_id = header.request_id.unwrap_or(request_id);
    for (number, chunk) in (0..count_u8).zip(body.chunks(per_packet)) {
        let h = Header {
            flags: header.flags.with(flags::ANSWER),
            request_id: Some(request_id),
            challenge: if number == 0 { header.challenge } else { None },
            max_bytes_per_packet: None,
            split: Some(SplitInfo {
                count: count_u8,
                number,
            }),
            ..*header
        };
        let d = out.push_buf();
        h.encode(d);
        d.extend_from_slice(chunk);
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::super::header::PacketType;
    use super::*;
    use crate::ogp::split::{Pushed, Reassembler};
    use crate::reader::Reader;

    fn parse(d: &[u8]) -> (Header, Vec<u8>) {
        let mut r = Reader::new(d);
        let h = Header::read(&mut r).unwrap();
        (h, r.peek_rest().to_vec())
    }

    #[test]
    fn packets_fit_and_reassemble_in_any_order() {
        let mut h = Header::answer(PacketType::DEFAULT_QUERY);
        h.challenge = Some(7);
        for len in [0usize, 1, 481, 482, 1000, 4046, 127 * 480] {
            let body: Vec<u8> = (0..len).map(|i| i as u8).collect();
            for max in [500i16, 501, 777, 1400, 1500] {
                let packets = split_answer(&h, 9, &body, max).unwrap();
                assert!(packets.iter().all(|p| p.len() <= max as usize));
                if packets.len() == 1 {
                    let (h0, b) = parse(&packets[0]);
                    assert_eq!((h0.challenge, h0.split, b), (Some(7), None, body.clone()));
                    continue;
                }
                let mut r = Reassembler::<Header>::default();
                let mut done = None;
                for p in packets.iter().rev().chain(packets.first()) {
                    let (ph, b) = parse(p);
                    assert_eq!(ph.request_id, Some(9));
                    assert_eq!(ph.challenge.is_some(), ph.split.unwrap().number == 0);
                    match r.push_part(ph, ph.request_id, ph.split.unwrap(), &b) {
                        Ok(Pushed::Complete { header, body }) => done = Some((header, body)),
                        Ok(_) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
                let (h0, got) = done.unwrap();
                assert_eq!(got, body);
                assert_eq!(h0.challenge, Some(7));
            }
        }
    }

    #[test]
    fn limits() {
        let h = Header::answer(PacketType::DEFAULT_QUERY);
        assert_eq!(
            split_answer(&h, 1, &[], 499),
            Err(SplitError::OutOfRange(499))
        );
        assert_eq!(
            split_answer(&h, 1, &[], 1501),
            Err(SplitError::OutOfRange(1501))
        );
        let huge = vec![0u8; 127 * 480 + 1];
        assert_eq!(
            split_answer(&h, 1, &huge, 500),
            Err(SplitError::TooManyPackets(128))
        );
    }
}

//! Putting a reply split over several datagrams back together: any order, duplicates
//! dropped, bounded in parts, bytes and pairs.
//!
//! Parts carry `\queryid\ID.PART` (PART from 1); only the last says `\final\`, so the
//! count is known once the final part has come. The reply is complete when the final part
//! and every part before it are held. Parts of another query id (an answer to an
//! earlier or later send of ours, or someone else's) are not mixed in: the first id wins
//! ([`Pushed::OtherQuery`]); the client decides whether to start over with the new one.
//!
//! When parts are lost, [`Reassembler::missing`] says which, and
//! [`Reassembler::take_pairs`] gives what came, in part order: the client returns that as
//! a partial status with a warning rather than nothing (gamedig fails such a query after
//! its timeout; GameQ and opengsq wait on or join what they have without saying so).

use std::fmt;

use super::wire::Packet;
use crate::text::Text;

/// Bounds on one reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReassemblyLimits {
    /// Most parts (default 16; a 64-player Battlefield 1942 status takes 4 or 5).
    pub max_parts: u16,
    /// Most bytes of all parts together (default 65,536).
    pub max_bytes: usize,
    /// Most pairs of all parts together (default 4,096).
    pub max_pairs: usize,
}

impl Default for ReassemblyLimits {
    fn default() -> Self {
        Self {
            max_parts: 16,
            max_bytes: 65_536,
            max_pairs: 4096,
        }
    }
}

/// Why a part could not be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReassemblyError {
    /// Its part number is past our cap on parts.
    TooManyParts {
        /// The part number.
        part: u16,
        /// Our cap.
        limit: u16,
    },
    /// The parts together are larger than our cap (bytes or pairs).
    TooLarge {
        /// What: `bytes` or `pairs`.
        what: &'static str,
        /// Our cap.
        limit: usize,
    },
    /// A part numbered after the final one, or a second final part.
    Inconsistent(&'static str),
}

impl fmt::Display for ReassemblyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooManyParts { part, limit } => {
                write!(f, "part {part} is past our limit of {limit} parts")
            }
            Self::TooLarge { what, limit } => {
                write!(f, "the parts hold more {what} than our limit of {limit}")
            }
            Self::Inconsistent(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for ReassemblyError {}

/// What became of a pushed packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// Taken; the reply is complete.
    Complete,
    /// Taken; parts are still missing.
    Incomplete,
    /// A part already held: dropped.
    Duplicate,
    /// A part of another query id than the held parts': not taken.
    OtherQuery,
}

/// The parts of one reply received so far.
#[derive(Debug, Clone, Default)]
pub struct Reassembler {
    limits: ReassemblyLimits,
    query_id: Option<u32>,
    /// Held parts, sorted by number.
    parts: Vec<(u16, Vec<(Text, Text)>)>,
    final_part: Option<u16>,
    /// A packet without a query id was taken: it is the whole reply.
    whole: bool,
    bytes: usize,
    pairs: usize,
}

impl Reassembler {
    /// An empty reassembler with the default limits.
    pub fn new() -> Self {
        Self::with_limits(ReassemblyLimits::default())
    }

    /// An empty reassembler with these limits.
    pub fn with_limits(limits: ReassemblyLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The query id of the held parts.
    pub fn query_id(&self) -> Option<u32> {
        self.query_id
    }

    /// How many parts are held.
    pub fn held(&self) -> usize {
        self.parts.len()
    }

    /// The number of the final part, once it came.
    pub fn final_part(&self) -> Option<u16> {
        self.final_part
    }

    /// Bytes of the held parts.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Takes `packet` (its datagram was `bytes` long).
    pub fn push(&mut self, packet: Packet, bytes: usize) -> Result<Pushed, ReassemblyError> {
        let (id, part) = match packet.query_id {
            Some(q) => (Some(q.id), q.part),
            None => (None, 1),
        };
        if !self.parts.is_empty() && (self.whole || id.is_none() || id != self.query_id) {
            return Ok(Pushed::OtherQuery);
        }
        if part > self.limits.max_parts {
            return Err(ReassemblyError::TooManyParts {
                part,
                limit: self.limits.max_parts,
            });
        }
        let slot = match self.parts.binary_search_by_key(&part, |(n, _)| *n) {
            Ok(_) => return Ok(Pushed::Duplicate),
            Err(i) => i,
        };
        if let Some(f) = self.final_part {
            if part > f || packet.is_final {
                return Err(ReassemblyError::Inconsistent(
                    "a part after the final part, or a second final part",
                ));
            }
        }
        if packet.is_final && self.parts.last().is_some_and(|(n, _)| *n > part) {
            return Err(ReassemblyError::Inconsistent(
                "a final part before a part already held",
            ));
        }
        let total = self.bytes.saturating_add(bytes);
        if total > self.limits.max_bytes {
            return Err(ReassemblyError::TooLarge {
                what: "bytes",
                limit: self.limits.max_bytes,
            });
        }
        let pairs = self.pairs.saturating_add(packet.pairs.len());
        if pairs > self.limits.max_pairs {
            return Err(ReassemblyError::TooLarge {
                what: "pairs",
                limit: self.limits.max_pairs,
            });
        }
        self.bytes = total;
        self.pairs = pairs;
        self.query_id = id;
        self.whole = id.is_none();
        if packet.is_final || self.whole {
            self.final_part = Some(part);
        }
        self.parts.insert(slot, (part, packet.pairs));
        Ok(if self.is_complete() {
            Pushed::Complete
        } else {
            Pushed::Incomplete
        })
    }

    /// Whether the final part and every part before it are held.
    pub fn is_complete(&self) -> bool {
        self.whole
            || self
                .final_part
                .is_some_and(|f| self.parts.len() == usize::from(f))
    }

    /// The parts known to be missing: every number before the final part (or before the
    /// highest held part, when the final one has not come) that is not held.
    pub fn missing(&self) -> Vec<u16> {
        let top = match self.final_part {
            Some(f) => f,
            None => self.parts.last().map_or(0, |(n, _)| *n),
        };
        let mut held = self.parts.iter().map(|(n, _)| *n).peekable();
        let mut out = Vec::new();
        for n in 1..=top {
            if held.peek() == Some(&n) {
                held.next();
            } else {
                out.push(n);
            }
        }
        out
    }

    /// Says what is missing, in one line: `part 2 of 3 lost`, `parts 2, 3 lost and the
    /// final part never came`…; `None` when complete.
    pub fn missing_note(&self) -> Option<String> {
        if self.is_complete() {
            return None;
        }
        let missing = self.missing();
        let list = missing
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let s = if missing.len() == 1 { "" } else { "s" };
        Some(match (self.final_part, missing.is_empty()) {
            (Some(f), _) => format!("part{s} {list} of {f} lost"),
            (None, true) => "the final part never came".to_string(),
            (None, false) => format!("part{s} {list} lost and the final part never came"),
        })
    }

    /// Every pair held, in part order, leaving the reassembler empty.
    pub fn take_pairs(&mut self) -> Vec<(Text, Text)> {
        let parts = std::mem::take(&mut self.parts);
        let mut out = Vec::with_capacity(self.pairs);
        for (_, pairs) in parts {
            out.extend(pairs);
        }
        *self = Self::with_limits(self.limits);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::wire::QueryId;
    use super::*;

    fn part(id: u32, n: u16, fin: bool, k: &str) -> Packet {
        Packet {
            pairs: vec![(k.into(), "v".into())],
            query_id: Some(QueryId { id, part: n }),
            is_final: fin,
        }
    }

    #[test]
    fn any_order_duplicates_and_other_queries() {
        let mut r = Reassembler::new();
        assert_eq!(r.push(part(5, 3, true, "c"), 10), Ok(Pushed::Incomplete));
        assert_eq!(r.missing(), [1, 2]);
        assert_eq!(r.missing_note().unwrap(), "parts 1, 2 of 3 lost");
        assert_eq!(r.push(part(5, 3, true, "c"), 10), Ok(Pushed::Duplicate));
        assert_eq!(r.push(part(6, 1, false, "x"), 10), Ok(Pushed::OtherQuery));
        assert_eq!(r.push(part(5, 1, false, "a"), 10), Ok(Pushed::Incomplete));
        assert_eq!(r.missing_note().unwrap(), "part 2 of 3 lost");
        assert_eq!(r.push(part(5, 2, false, "b"), 10), Ok(Pushed::Complete));
        let keys: Vec<_> = r.take_pairs().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["a", "b", "c"]);
        assert!(r.is_empty());
    }

    #[test]
    fn inconsistent_and_over_the_caps() {
        let mut r = Reassembler::new();
        r.push(part(1, 2, true, "b"), 10).unwrap();
        assert!(matches!(
            r.push(part(1, 3, false, "c"), 10),
            Err(ReassemblyError::Inconsistent(_))
        ));
        let mut r = Reassembler::new();
        r.push(part(1, 4, false, "d"), 10).unwrap();
        assert_eq!(
            r.missing_note().unwrap(),
            "parts 1, 2, 3 lost and the final part never came"
        );
        assert!(r.push(part(1, 2, true, "b"), 10).is_err());
        let e = r.push(part(1, 17, false, "q"), 10).unwrap_err();
        assert_eq!(e.to_string(), "part 17 is past our limit of 16 parts");
        let e = r.push(part(1, 5, false, "q"), 70_000).unwrap_err();
        assert!(matches!(e, ReassemblyError::TooLarge { what: "bytes", .. }));
    }

    #[test]
    fn a_packet_without_query_id_is_whole() {
        let mut r = Reassembler::new();
        let p = Packet {
            pairs: vec![("echo".into(), "x".into())],
            ..Packet::default()
        };
        assert_eq!(r.push(p.clone(), 9), Ok(Pushed::Complete));
        assert_eq!(r.push(p, 9), Ok(Pushed::OtherQuery));
    }
}

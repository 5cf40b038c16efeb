//! The draft side of a responder: one query datagram in, zero or more answer datagrams
//! out, in the shape of [`OgpResponder`](crate::ogp::responder::OgpResponder). Called by
//! [`crate::responder::Responder`] on a listener configured with
//! [`Listener::OgpDraft`](crate::responder::Listener::OgpDraft); that owns the challenge
//! keys, the rate limiter and the ban hook.
//!
//! Order of checks (`docs/ogp-draft.md` D16–D19):
//! 1. datagrams over 500 bytes, with a malformed header (including an unknown HeadFlags
//!    bit), with bAnswer set, or of a Type other than 1 None and 2 Default query v1
//!    (Banned as a query, Rcon, undefined) are ignored: the draft has no error answers;
//! 2. a banned source gets a Type 0 Banned answer (or silence, as the ban hook says);
//! 3. bSplit with MaxBytesPerPacket below 500 is ignored; above 1500 it is read as 1500;
//! 4. a Type 1 None query gets a Type 1 None answer carrying the current challenge;
//! 5. a Default Query without a valid challenge (none, 0xFFFFFFFF, wrong, expired) gets
//!    the same Type 1 None answer with the challenge, and no data;
//! 6. a body that does not decode (or is empty) is ignored;
//! 7. otherwise the answer: what was asked and what the status has, RequestID echoed, the
//!    current challenge in the header when the query carried one, split when the query
//!    asks for it, never over 8192 bytes unsplit or 65536 bytes split: whole sections are
//!    dropped (the PLAYERLIST, then the info fields) until it fits.
//!
//! An unverified source therefore never gets more than 18 bytes, and never more than
//! 4 bytes more than it sent (the challenge field). Nothing here panics.

use super::answer::{
    answer_fields, answer_fields as af, answer_player_fields, encode_answer_sections,
};
use super::header::{Header, PacketType, MAX_MAX_BYTES_PER_PACKET, MIN_MAX_BYTES_PER_PACKET};
use super::query::DefaultQuery;
use super::split::split_answer_into;
use super::{decode_header, MAX_QUERY_SIZE};
use crate::ogp::responder::{emit_within, fit_answer, Fitted};
use crate::ogp::Bits;
use crate::reader::Reader;
use crate::responder_core::{
    ignorable_outcome, AnswerKind, Context, Incoming, ProtocolResponder, Transmits, Unanswered,
};
use crate::Status;

/// Draft responder settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DraftConfig {
    /// Require a valid challenge before answering a Default Query (default true). Turning
    /// it off makes the server an amplifier for spoofed queries; the rate limit still
    /// applies.
    pub require_challenge: bool,
    /// Largest unsplit answer datagram (default 8192).
    pub max_unsplit_bytes: usize,
    /// Largest total of a split answer, all packets together (default 65536).
    pub max_split_total_bytes: usize,
}

impl Default for DraftConfig {
    fn default() -> Self {
        Self {
            require_challenge: true,
            max_unsplit_bytes: 8192,
            max_split_total_bytes: 65536,
        }
    }
}

/// What the draft responder did with a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DraftOutcome {
    /// Not answered: too large, malformed, an answer, a Type we do not serve, …
    Ignored(Unanswered),
    /// Answered Type 0 Banned.
    Banned,
    /// Answered a Type 1 None query with a challenge.
    None,
    /// A Default Query without a valid challenge: answered Type 1 None with a new one.
    Challenge,
    /// Answered a Default Query.
    Answer {
        /// Number of datagrams (more than 1 when split).
        datagrams: usize,
        /// Sections dropped to fit the size limits.
        dropped_sections: bool,
    },
}

/// Sections in the order they are dropped when an answer is too large.
const DROP_ORDER: [Bits; 2] = [af::PLAYER_LIST, af::INFO];

/// The OGP v0.02 draft part of a responder.
#[derive(Debug, Clone)]
pub struct DraftResponder {
    config: DraftConfig,
    next_request_id: u32,
    body: Vec<u8>,
}

impl DraftResponder {
    /// A responder with the given settings.
    pub fn new(config: DraftConfig) -> Self {
        Self {
            config,
            next_request_id: 1,
            body: Vec::with_capacity(1024),
        }
    }

    /// The settings.
    pub fn config(&self) -> &DraftConfig {
        &self.config
    }

    fn choose_request_id(&mut self) -> u32 {
        let id = self.next_request_id;
        self.next_request_id = self.next_request_id.wrapping_add(1).max(1);
        id
    }

    fn answer(
        &mut self,
        ah: &Header,
        split_at: Option<i16>,
        query: &DefaultQuery,
        status: &Status,
        out: &mut Transmits,
    ) -> DraftOutcome {
        let fields = answer_fields(status, query);
        let player_mask = answer_player_fields(status, query);
        let id = match (split_at, ah.request_id) {
            (Some(_), None) => self.choose_request_id(),
            (_, id) => id.unwrap_or(0),
        };
        let max_unsplit = self.config.max_unsplit_bytes;
        let max_split_total = self.config.max_split_total_bytes;
        let fitted = fit_answer(
            fields,
            &DROP_ORDER,
            &mut self.body,
            |fields, body| encode_answer_sections(status, fields, player_mask, body),
            |body| match split_at {
                None => (ah.encoded_len() + body.len() <= max_unsplit).then(|| {
                    let buf = out.push_buf();
                    ah.encode(buf);
                    buf.extend_from_slice(body);
                    1
                }),
                Some(m) => emit_within(out, max_split_total, |out| {
                    split_answer_into(ah, id, body, m, out).ok()
                }),
            },
        );
        match fitted {
            Some(Fitted { datagrams, dropped }) => DraftOutcome::Answer {
                datagrams,
                dropped_sections: dropped,
            },
            None => DraftOutcome::Ignored(Unanswered::oversized(
                "answer cannot fit even without sections",
            )),
        }
    }
}

ignorable_outcome!(DraftOutcome);

impl ProtocolResponder for DraftResponder {
    type Outcome = DraftOutcome;

    fn answer_kind(&self, outcome: &DraftOutcome) -> Option<AnswerKind> {
        match outcome {
            DraftOutcome::Ignored(_) => None,
            DraftOutcome::Banned => Some(AnswerKind::Error),
            DraftOutcome::None | DraftOutcome::Challenge => Some(AnswerKind::Challenge),
            DraftOutcome::Answer { .. } => Some(AnswerKind::Full),
        }
    }

    fn max_request_bytes(&self) -> usize {
        MAX_QUERY_SIZE
    }

    fn proven(&self, outcome: &DraftOutcome) -> bool {
        self.config.require_challenge && matches!(outcome, DraftOutcome::Answer { .. })
    }

    fn answer(&mut self, incoming: Incoming<'_>, cx: Context<'_>) -> DraftOutcome {
        let (now, ip, datagram, reject) = incoming.parts();
        let (status, keys, out) = cx.parts();
        let Ok((qh, body_at)) = decode_header(datagram) else {
            return DraftOutcome::Ignored(Unanswered::malformed("malformed header"));
        };
        if qh.is_answer() {
            return DraftOutcome::Ignored(Unanswered::malformed("bAnswer set"));
        }
        let mut ah = Header::answer(PacketType::NONE);
        ah.request_id = qh.request_id;
        if reject {
            Header {
                packet_type: PacketType::BANNED,
                ..ah
            }
            .encode(out.push_buf());
            return DraftOutcome::Banned;
        }
        match qh.packet_type {
            PacketType::NONE | PacketType::DEFAULT_QUERY => {}
            PacketType::RCON => {
                return DraftOutcome::Ignored(Unanswered::disabled("Rcon is not implemented"))
            }
            _ => {
                return DraftOutcome::Ignored(Unanswered::malformed(
                    "Type other than None or Default query v1",
                ))
            }
        }
        let split_at = match qh.max_bytes_per_packet {
            Some(m) if m < MIN_MAX_BYTES_PER_PACKET => {
                return DraftOutcome::Ignored(Unanswered::malformed("MaxBytesPerPacket below 500"))
            }
            Some(m) => Some(m.min(MAX_MAX_BYTES_PER_PACKET)),
            None => None,
        };
        let current = keys.issue(now, super::GUARD_ID, ip);
        let verified = qh
            .challenge
            .is_some_and(|c| keys.verify(now, super::GUARD_ID, ip, c));
        if qh.packet_type == PacketType::NONE || (self.config.require_challenge && !verified) {
            ah.challenge = Some(current);
            ah.encode(out.push_buf());
            return if qh.packet_type == PacketType::NONE {
                DraftOutcome::None
            } else {
                DraftOutcome::Challenge
            };
        }
        let body = datagram.get(body_at..).unwrap_or_default();
        if body.is_empty() {
            return DraftOutcome::Ignored(Unanswered::malformed("Default Query without a body"));
        }
        let Ok(query) = DefaultQuery::read(&mut Reader::with_base(body, body_at)) else {
            return DraftOutcome::Ignored(Unanswered::malformed("malformed query body"));
        };
        ah.packet_type = PacketType::DEFAULT_QUERY;
        if qh.challenge.is_some() {
            ah.challenge = Some(current);
        }
        self.answer(&ah, split_at, &query.query, status, out)
    }
}

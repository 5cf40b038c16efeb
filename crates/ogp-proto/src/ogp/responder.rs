//! The OGP side of the responder: one query datagram in, zero or more answer datagrams
//! out. Called by [`crate::responder::Responder`], which owns the challenge keys, the rate
//! limiter and the ban hook shared by all protocols.
//!
//! Order of checks (as the reference SDK, with the choices of `docs/ogp-wire-choices.md`):
//! 1. datagrams over 500 bytes, with a malformed header, with bAnswer set or of Type
//!    0xFF are ignored (silence);
//! 2. a banned source gets Error 0 (or silence, as the ban hook says);
//! 3. a Type other than Ping or Default Query → Error 1;
//! 4. bSplit with MaxBytesPerPacket 1–499 → Error 2 (0 means "no OGP splitting");
//! 5. Ping is answered with its header, no challenge needed (same size as the query);
//! 6. a Default Query without a valid challenge → Error 3 with a new challenge in the
//!    header and, for queries up to 64 bytes, a clean resendable copy of the query;
//! 7. a body that ends before the announced field arrays → Error 4;
//! 8. otherwise the answer: exactly what was asked and what the status has, UTF-8 iff
//!    the query set bUTF8, RequestID echoed (one chosen for 0), split when the query asks
//!    for it, never over 8192 bytes unsplit: whole sections are dropped (limits, add-ons,
//!    rules, teams, players, then server info) until it fits. Player addresses are left
//!    out unless the operator opts in ([`OgpConfig::player_addresses`]).
//!
//! Unverified sources never get more than `max(16, query + 20)` bytes with a query of at
//! most 64 bytes; full answers only go to sources that proved their address. Nothing
//! here panics.

use super::answer::{answer_request_flags, encode_answer_sections, AnswerOptions};
use super::header::{Header, PacketType};
use super::query::{player_fields, request, DefaultQuery};
use super::split::{split_answer_into, MIN_MAX_BYTES_PER_PACKET};
use super::{encode_error, encode_resendable_copy, ErrorValue, MAX_QUERY_SIZE};
use crate::guard::ChallengeKeys;
use crate::responder_core::{
    ignorable_outcome, AnswerKind, Context, Incoming, ProtocolResponder, Transmits, Unanswered,
};
use crate::Status;

/// OGP responder settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct OgpConfig {
    /// Answer OGP at all (default true). Off, every OGP query is ignored (silence),
    /// counted like any other ignored datagram.
    pub enabled: bool,
    /// Require a valid challenge before answering a Default Query (default true). Turning
    /// it off makes the server an amplifier for spoofed queries; the rate limit still
    /// applies.
    pub require_challenge: bool,
    /// Send StringColorInfo when a query asks for coloured names (default false: the PHP
    /// client cannot parse it).
    pub colors: bool,
    /// Largest unsplit answer datagram (default 8192, what the PHP client can read).
    pub max_unsplit_bytes: usize,
    /// Largest query whose copy is returned in Error 3 (default 64; larger queries get
    /// the 16-byte Error 3 without a copy). Real clients send 11–30 bytes.
    pub max_copy_query_bytes: usize,
    /// Largest total of a split answer, all packets together (default 65536). Larger
    /// answers drop whole sections like unsplit ones; this bounds what one verified query
    /// can make the server send.
    pub max_split_total_bytes: usize,
    /// Answer bPlayerAddress with the players' network addresses (default false: they
    /// are personal data; the field is left out of answers even when the status has it).
    pub player_addresses: bool,
}

impl Default for OgpConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            require_challenge: true,
            colors: false,
            max_unsplit_bytes: 8192,
            max_copy_query_bytes: 64,
            max_split_total_bytes: 65536,
            player_addresses: false,
        }
    }
}

/// What the OGP responder did with a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OgpOutcome {
    /// Not answered: too large, malformed header, an answer, or Type 0xFF.
    Ignored(Unanswered),
    /// Answered a ping.
    Ping,
    /// Answered with an error.
    Error(ErrorValue),
    /// Answered a default query.
    Answer {
        /// Number of datagrams (more than 1 when split).
        datagrams: usize,
        /// Sections dropped to fit the size limits.
        dropped_sections: bool,
    },
}

/// Sections in the order they are dropped when an answer is too large.
const DROP_ORDER: [super::Bits; 6] = [
    request::LIMIT_LIST,
    request::ADDON_LIST,
    request::RULE_LIST,
    request::TEAM_LIST,
    request::PLAYER_LIST,
    request::SERVER_INFO,
];

/// The OGP part of a responder.
#[derive(Debug, Clone)]
pub struct OgpResponder {
    config: OgpConfig,
    next_request_id: u32,
    body: Vec<u8>,
    /// The answer body of the last query shape for the current status snapshot.
    cache: BodyCache,
}

/// An encoded answer body (all the sections a query asked for), kept for one status
/// generation and one query shape; reused while both stay the same. Only the header
/// (RequestID, challenge, split numbering) is written per query.
#[derive(Debug, Clone, Default)]
struct BodyCache {
    generation: u64,
    query: DefaultQuery,
    utf8: bool,
    sections: super::Bits,
    body: Vec<u8>,
}

impl BodyCache {
    fn hit(
        &self,
        generation: u64,
        query: &DefaultQuery,
        utf8: bool,
        sections: super::Bits,
    ) -> bool {
        generation != 0
            && self.generation == generation
            && self.query == *query
            && self.utf8 == utf8
            && self.sections == sections
    }
}

impl OgpResponder {
    /// A responder with the given settings.
    pub fn new(config: OgpConfig) -> Self {
        Self {
            config,
            next_request_id: 1,
            body: Vec::with_capacity(1024),
            cache: BodyCache::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &OgpConfig {
        &self.config
    }

    fn choose_request_id(&mut self) -> u32 {
        let id = self.next_request_id;
        self.next_request_id = self.next_request_id.wrapping_add(1).max(1);
        id
    }

    fn error(&mut self, ah: &Header, value: ErrorValue, out: &mut Transmits) -> OgpOutcome {
        encode_error(ah, value, &[], out.push_buf());
        OgpOutcome::Error(value)
    }

    fn answer(
        &mut self,
        ah: &Header,
        qh: &Header,
        query: &DefaultQuery,
        status: &Status,
        generation: u64,
        out: &mut Transmits,
    ) -> OgpOutcome {
        let opts = AnswerOptions {
            utf8: qh.utf8(),
            colors: self.config.colors,
        };
        let sections = answer_request_flags(status, query, &opts);
        // A client may ask for packets of up to 65535 bytes; none of ours exceeds the
        // unsplit cap (a UDP datagram cannot even carry 65535 bytes of payload).
        let cap = u16::try_from(self.config.max_unsplit_bytes).unwrap_or(u16::MAX);
        let split_at = qh
            .max_bytes_per_packet
            .filter(|&m| m != 0)
            .map(|m| m.min(cap.max(MIN_MAX_BYTES_PER_PACKET)));
        // Split answers need a request id: the query's, or one of ours.
        let id = match (split_at, ah.request_id) {
            (Some(_), None) => self.choose_request_id(),
            (_, id) => id.unwrap_or(0),
        };
        let max_unsplit = self.config.max_unsplit_bytes;
        let max_split_total = self.config.max_split_total_bytes;
        // The body with every asked section comes from the cache when this snapshot
        // already answered this query shape; fitting (leaving sections out) is rare and
        // encodes afresh.
        let asked = sections;
        let utf8 = qh.utf8();
        let cache = &mut self.cache;
        let fitted = fit_answer(
            sections,
            &DROP_ORDER,
            &mut self.body,
            |sections, body| {
                if sections == asked && cache.hit(generation, query, utf8, asked) {
                    body.extend_from_slice(&cache.body);
                    return;
                }
                encode_answer_sections(status, query, sections, &opts, body);
                if sections == asked && generation != 0 {
                    cache.generation = generation;
                    cache.query = *query;
                    cache.utf8 = utf8;
                    cache.sections = asked;
                    cache.body.clear();
                    cache.body.extend_from_slice(body);
                }
            },
            |body| match split_at {
                None => (8 + usize::from(ah.head_size()) + body.len() <= max_unsplit).then(|| {
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
            Some(Fitted { datagrams, dropped }) => OgpOutcome::Answer {
                datagrams,
                dropped_sections: dropped,
            },
            None => OgpOutcome::Ignored(Unanswered::oversized(
                "answer cannot fit even without sections",
            )),
        }
    }
}

ignorable_outcome!(OgpOutcome);

impl ProtocolResponder for OgpResponder {
    type Outcome = OgpOutcome;

    fn answer_kind(&self, outcome: &OgpOutcome) -> Option<AnswerKind> {
        match outcome {
            OgpOutcome::Ignored(_) => None,
            OgpOutcome::Ping => Some(AnswerKind::Ping),
            OgpOutcome::Error(ErrorValue::INVALID_CHALLENGE) => Some(AnswerKind::Challenge),
            OgpOutcome::Error(_) => Some(AnswerKind::Error),
            OgpOutcome::Answer { .. } => Some(AnswerKind::Full),
        }
    }

    fn max_request_bytes(&self) -> usize {
        MAX_QUERY_SIZE
    }

    fn enabled(&self) -> bool {
        self.config.enabled
    }

    fn proven(&self, outcome: &OgpOutcome) -> bool {
        self.config.require_challenge && matches!(outcome, OgpOutcome::Answer { .. })
    }

    fn answer(&mut self, incoming: Incoming<'_>, cx: Context<'_>) -> OgpOutcome {
        let (now, ip, datagram, reject) = incoming.parts();
        let generation = cx.generation;
        let (status, keys, out) = cx.parts();
        let Ok(packet) = super::decode_query_header(datagram) else {
            return OgpOutcome::Ignored(Unanswered::malformed("malformed header"));
        };
        let (qh, body_at) = packet;
        if qh.is_answer() {
            return OgpOutcome::Ignored(Unanswered::malformed("bAnswer set"));
        }
        if qh.packet_type == PacketType::ERROR {
            return OgpOutcome::Ignored(Unanswered::malformed("Type 0xFF in a query"));
        }
        let utf8 = qh.utf8();
        // Base answer header: bAnswer, bUTF8 as the query, RequestID echoed.
        let mut ah = Header::answer(qh.packet_type).with_utf8(utf8);
        ah.request_id = match qh.request_id {
            Some(0) => Some(self.choose_request_id()),
            other => other,
        };
        if reject {
            ah.request_id = qh.request_id.filter(|&id| id != 0);
            encode_error(&ah, ErrorValue::BANNED, &[], out.push_buf());
            return OgpOutcome::Error(ErrorValue::BANNED);
        }
        let current = |keys: &mut ChallengeKeys| keys.issue(now, super::GUARD_ID, ip);
        if qh.challenge.is_some() {
            ah.challenge = Some(current(keys));
        }
        if qh.packet_type != PacketType::PING && qh.packet_type != PacketType::DEFAULT_QUERY {
            return self.error(&ah, ErrorValue::INVALID_TYPE, out);
        }
        if let Some(m) = qh.max_bytes_per_packet {
            if m != 0 && m < MIN_MAX_BYTES_PER_PACKET {
                return self.error(&ah, ErrorValue::INVALID_VALUE, out);
            }
        }
        if qh.packet_type == PacketType::PING {
            let buf = out.push_buf();
            Header {
                packet_type: PacketType::PING,
                ..ah
            }
            .encode(buf);
            return OgpOutcome::Ping;
        }
        let body = datagram.get(body_at..).unwrap_or_default();
        let verified = qh
            .challenge
            .is_some_and(|c| keys.verify(now, super::GUARD_ID, ip, c));
        if self.config.require_challenge && !verified {
            let challenge = current(keys);
            ah.challenge = Some(challenge);
            let buf = out.push_buf();
            Header {
                packet_type: PacketType::ERROR,
                ..ah
            }
            .encode(buf);
            buf.push(ErrorValue::INVALID_CHALLENGE.0);
            if datagram.len() <= self.config.max_copy_query_bytes {
                let without_copy = buf.len();
                encode_resendable_copy(&qh, body, challenge, buf);
                // The copy adds the challenge field a challenge-less query lacks; with an
                // echoed RequestID in the outer header that makes query + 24 bytes. Keep
                // the bound of query + 20 (security.md §3.2): no copy then (no known
                // client sends a RequestID without a challenge field).
                if buf.len() > datagram.len() + 20 {
                    buf.truncate(without_copy);
                }
            }
            return OgpOutcome::Error(ErrorValue::INVALID_CHALLENGE);
        }
        // The body was located by the header; decode it once, from where it starts (an
        // empty body, a bare challenge probe, is no query either: Error 4).
        let mut body_reader = crate::reader::Reader::with_base(body, body_at);
        let mut query = match DefaultQuery::read(&mut body_reader) {
            Ok(q) if !body.is_empty() => q.query,
            _ => return self.error(&ah, ErrorValue::INVALID_QUERY, out),
        };
        if !self.config.player_addresses {
            query.player_fields = query.player_fields.without(player_fields::ADDRESS);
        }
        self.answer(&ah, &qh, &query, status, generation, out)
    }
}

/// How [`fit_answer`] got an answer out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fitted {
    /// Datagrams written.
    pub(crate) datagrams: usize,
    /// Whether sections were left out to make it fit.
    pub(crate) dropped: bool,
}

/// Encodes an answer body with `sections` into `body` and offers it to `emit`; while
/// `emit` refuses it (too large: `None`), leaves out the next present section in
/// `drop_order` and tries again. `None` when even the smallest answer does not fit.
/// Shared by the v1.01 and draft responders.
pub(crate) fn fit_answer(
    mut sections: super::Bits,
    drop_order: &[super::Bits],
    body: &mut Vec<u8>,
    mut encode: impl FnMut(super::Bits, &mut Vec<u8>),
    mut emit: impl FnMut(&[u8]) -> Option<usize>,
) -> Option<Fitted> {
    let mut dropped = false;
    let mut drop_iter = drop_order.iter();
    loop {
        body.clear();
        encode(sections, body);
        if let Some(datagrams) = emit(body) {
            return Some(Fitted { datagrams, dropped });
        }
        let next = drop_iter.by_ref().find(|s| sections.intersects(**s))?;
        sections = sections.without(*next);
        dropped = true;
    }
}

/// Runs `write` (which appends datagrams to `out` and says how many, or `None`) and
/// keeps what it wrote only when it succeeded within `max_total` bytes.
pub(crate) fn emit_within(
    out: &mut Transmits,
    max_total: usize,
    write: impl FnOnce(&mut Transmits) -> Option<usize>,
) -> Option<usize> {
    let before = out.len();
    let bytes_before = out.total_bytes();
    let written =
        write(out).filter(|_| out.total_bytes().saturating_sub(bytes_before) <= max_total);
    if written.is_none() {
        out.truncate(before);
    }
    written
}

//! The OGP client as a state machine: one query of one server, with challenges,
//! retries, split reassembly and timeouts, and no I/O. It embeds the shared client core
//! ([`client`](crate::client)) and keeps only OGP's wire logic; drive it
//! through [`QueryDriver`] (the tokio client in `ogp-net` does; a scanner drives
//! thousands from one socket).
//!
//! Flow: the query is sent at once with bChallengeNumber (the known challenge, or 0),
//! so a server that does not require challenges answers in one round trip. An Error 3
//! gives the challenge in its outer header (A9); the query is sent again right away, up
//! to [`Timing::max_challenges`] times. The challenge of an Error 2 is ignored (the
//! reference server leaves it uninitialised). Errors 0, 1, 2 and 4 end the query. Answers
//! whose RequestID is not ours are dropped; split answers are reassembled in any order
//! with duplicates dropped. A datagram that does not decode is remembered and reported if
//! nothing better arrives before the deadline. Nothing here panics; what a hostile
//! server can make it hold is bounded by the reassembler and a cap on recorded events.

use std::time::Instant;

use super::answer::decode_answer_body;
use super::header::{Header, PacketType};
use super::query::{request, DefaultQuery};
use super::split::{Pushed, Reassembler, ReassemblyError};
use super::Bits;
use super::{ErrorValue, Message};
use crate::client_core::{exchange_driver, Event, Exchange, QueryDriver, Rejection, Timing};
use crate::error::DecodeWarning;
use crate::protocol::Protocol;
use crate::Status;

/// OGP's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// What to ask for (default: everything).
    pub query: DefaultQuery,
    /// Ask for UTF-8 strings (default true).
    pub utf8: bool,
    /// Ask for OGP split answers of at most this many bytes per packet (default
    /// [`DEFAULT_MAX_BYTES_PER_PACKET`]), or None to let the server send one datagram,
    /// which servers keep under a size limit by leaving out whole sections (8 KiB for
    /// ours: a busy server's players and rules). Values below the protocol's minimum of
    /// 500 are raised to 500.
    pub max_bytes_per_packet: Option<u16>,
    /// A challenge from an earlier query of this server, if any.
    pub challenge: Option<u32>,
    /// Start with a bare 11-byte probe (Type 1, no header fields, no body) while no
    /// challenge is known, as the PHP client does, and accept only answers that echo our
    /// RequestID (default false). A master verifying a server it has only heard a
    /// 13-byte uplink from uses it: its first datagram is smaller than what it received,
    /// and only the real server at that address can answer the challenged query that
    /// follows with our RequestID.
    pub probe: bool,
}

/// The split size asked for by default: every packet fits an Ethernet MTU with room for
/// tunnels, and the whole status comes back however large it is (the reference server
/// and ours split when asked; an answer that fits one packet is sent unsplit).
pub const DEFAULT_MAX_BYTES_PER_PACKET: u16 = 1400;

/// The answer size limits known to cut OGP answers, unsplit: the smallest seen in clients
/// and servers (2 KiB) and ours and the PHP client's (8 KiB). A server that drops whole
/// sections to stay under one of them sends an answer that is still close to it.
const UNSPLIT_LIMITS: [usize; 2] = [SMALLEST_UNSPLIT_LIMIT, 8192];

/// The smallest unsplit answer size limit seen in clients and servers.
const SMALLEST_UNSPLIT_LIMIT: usize = 2048;

/// The same for split answers: our responder's cap on all packets together (64 KiB).
const SPLIT_LIMITS: [usize; 1] = [65536];

/// Whether the size of an answer says it may have been cut to fit a size limit.
///
/// * One datagram when the query asked for no splitting: a size limit for one datagram
///   was all that bound the server, so an answer from a quarter under the smallest one
///   seen (2 KiB) up may have met one of them (ours drops whole sections down from
///   8 KiB, to well below it).
/// * Otherwise (split, or one datagram although splitting was offered): only an answer
///   within a quarter under a known limit. An answer further below every limit had
///   room for more, so a section it lacks is one the server does not have or send: the
///   reference server, which never drops sections, answers 2-3 KiB in one datagram
///   without the sections it does not support.
fn size_says_cut(bytes: usize, split: bool, split_offered: bool) -> bool {
    if !split && !split_offered {
        return bytes >= SMALLEST_UNSPLIT_LIMIT - SMALLEST_UNSPLIT_LIMIT / 4;
    }
    let limits: &[usize] = if split {
        &SPLIT_LIMITS
    } else {
        &UNSPLIT_LIMITS
    };
    limits
        .iter()
        .any(|&limit| bytes <= limit && bytes >= limit - limit / 4)
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            query: DefaultQuery::everything(),
            utf8: true,
            max_bytes_per_packet: Some(DEFAULT_MAX_BYTES_PER_PACKET),
            challenge: None,
            probe: false,
        }
    }
}

/// What an OGP answer says beyond the status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Details {
    /// The challenge the server gave us (to reuse for the next query).
    pub challenge: Option<u32>,
    /// The RequestID used.
    pub request_id: u32,
}

/// What the server answered with an error value, as a refusal.
pub(crate) fn rejection(v: ErrorValue) -> Rejection {
    Rejection::Error {
        code: u32::from(v.0),
        meaning: v.description().unwrap_or("unknown").to_string(),
    }
}

/// The warning for sections asked for and missing from an answer, when that looks like
/// the server cutting its answer to a size limit rather than not having the data: the
/// answer's size says so ([`size_says_cut`]; a small answer without players is a server
/// that does not publish them).
fn left_out(
    asked: Bits,
    got: Bits,
    answer_bytes: usize,
    split: bool,
    split_offered: bool,
) -> Option<String> {
    let missing = asked.and(request::ALL_LISTS).without(got);
    if missing.is_empty() || !size_says_cut(answer_bytes, split, split_offered) {
        return None;
    }
    let names = [
        (request::SERVER_INFO, "server information"),
        (request::TEAM_LIST, "teams"),
        (request::PLAYER_LIST, "players"),
        (request::RULE_LIST, "rules"),
        (request::ADDON_LIST, "add-ons"),
        (request::LIMIT_LIST, "limits"),
    ]
    .iter()
    .filter(|(b, _)| missing.contains(*b))
    .map(|(_, n)| *n)
    .collect::<Vec<_>>()
    .join(", ");
    let how = if split { "split" } else { "in one datagram" };
    Some(format!(
        "the answer ({answer_bytes} B {how}) has no {names}, though they were asked for: \
         the server may have left them out to keep under its answer size limit"
    ))
}

/// One OGP query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    opts: QueryOptions,
    request_id: u32,
    challenge: Option<u32>,
    reasm: Reassembler,
    /// Bytes of the answer received so far (all its split packets).
    answer_bytes: usize,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now`. `request_id` should be random and not 0.
    pub fn new(opts: QueryOptions, timing: Timing, request_id: u32, now: Instant) -> Self {
        Self {
            challenge: opts.challenge,
            opts,
            request_id: request_id.max(1),
            reasm: Reassembler::new(),
            answer_bytes: 0,
            x: Exchange::new(Protocol::Ogp, &timing, now),
        }
    }

    /// The RequestID this query uses.
    pub fn request_id(&self) -> u32 {
        self.request_id
    }

    /// Whether the query has finished.
    pub fn is_done(&self) -> bool {
        self.x.is_done()
    }

    /// The query datagram for the current state.
    pub fn encode_query(&self, out: &mut Vec<u8>) {
        if self.opts.probe && self.challenge.is_none() {
            return super::encode_query(&Header::query(PacketType::DEFAULT_QUERY), None, out);
        }
        let h = Header {
            challenge: Some(self.challenge.unwrap_or(0)),
            request_id: Some(self.request_id),
            max_bytes_per_packet: self
                .opts
                .max_bytes_per_packet
                .map(|m| m.max(super::split::MIN_MAX_BYTES_PER_PACKET)),
            ..Header::query(PacketType::DEFAULT_QUERY).with_utf8(self.opts.utf8)
        };
        super::encode_query(&h, Some(&self.opts.query), out);
    }

    fn complete(
        &mut self,
        split: bool,
        request_flags: Bits,
        status: Status,
        warnings: Vec<DecodeWarning>,
    ) {
        self.x.warn(warnings);
        let asked = self.opts.query.request;
        let offered = self.opts.max_bytes_per_packet.is_some();
        if let Some(w) = left_out(asked, request_flags, self.answer_bytes, split, offered) {
            self.x.warn([w]);
        }
        let details = Details {
            challenge: self.challenge,
            request_id: self.request_id,
        };
        self.x.succeed(status, details);
    }

    fn received(&mut self, now: Instant, bytes: usize) {
        self.answer_bytes = self.answer_bytes.saturating_add(bytes);
        self.x.received(1, bytes);
        self.x.ping(now);
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    exchange_driver!(give_up_on_timeout);

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        if !self.x.due_datagram(d) {
            return false;
        }
        self.encode_query(d);
        let challenge = Some(self.challenge.unwrap_or(0));
        self.x
            .sent_query(now, d, "query", challenge, Some(self.request_id));
        true
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        let packet = match super::decode(datagram) {
            Ok(p) => p,
            Err(e) => {
                if super::is_ogp(datagram) {
                    self.x.malformed(e);
                }
                return self.x.dropped(bytes, "does not decode");
            }
        };
        let h = packet.header;
        if !h.is_answer() {
            return self.x.dropped(bytes, "not an answer");
        }
        if h.request_id.is_some_and(|id| id != self.request_id) {
            return self.x.dropped(bytes, "another RequestID");
        }
        // After a probe, data must prove it answers our query: it echoes our RequestID
        // (an error carries no data and a challenge proves nothing by itself).
        let data = matches!(
            packet.message,
            Message::Answer(_) | Message::Fragment { .. }
        );
        if self.opts.probe && data && h.request_id.is_none() {
            return self.x.dropped(bytes, "no RequestID after a probe");
        }
        match packet.message {
            Message::Error(e) if e.value == ErrorValue::INVALID_CHALLENGE => {
                let from_copy = e
                    .resend_copy()
                    .and_then(|c| super::decode_query_header(c).ok())
                    .and_then(|(qh, _)| qh.challenge);
                let Some(c) = h.challenge.or(from_copy) else {
                    return self.x.reject(rejection(e.value));
                };
                self.x.event(Event::Challenge {
                    bytes,
                    challenge: Some(c),
                });
                if !self.x.follow_challenge(now) {
                    return;
                }
                self.challenge = Some(c);
                self.reasm = Reassembler::new();
                self.answer_bytes = 0;
                // Resending with a new challenge after Error 3 is part of the
                // exchange, not a retry: only timeouts use up retries.
                self.x.timer.resend_now();
            }
            Message::Error(e) => self.x.reject(rejection(e.value)),
            Message::Answer(a) => {
                self.received(now, bytes);
                self.x.event(Event::Reply {
                    what: "query",
                    bytes,
                    datagrams: 1,
                });
                if h.challenge.is_some() {
                    self.challenge = h.challenge;
                }
                self.complete(false, a.request_flags, a.status, a.warnings);
            }
            Message::Fragment { body } => {
                let Some(split) = h.split else { return };
                let part = Event::Part {
                    bytes,
                    number: Some(split.number),
                    count: Some(split.count),
                };
                match self.reasm.push(&h, &body) {
                    Ok(Pushed::Duplicate) => self.x.dropped(bytes, "duplicate split packet"),
                    Ok(Pushed::Incomplete) => {
                        self.received(now, bytes);
                        self.x.event(part);
                    }
                    Ok(Pushed::Complete { header, body }) => {
                        self.received(now, bytes);
                        self.x.event(part);
                        if header.challenge.is_some() {
                            self.challenge = header.challenge;
                        }
                        match decode_answer_body(&body, header.utf8()) {
                            Ok(a) => self.complete(true, a.request_flags, a.status, a.warnings),
                            Err(e) => self.x.fail_malformed(e),
                        }
                    }
                    Err(ReassemblyError::Mismatch) => {
                        self.x.dropped(bytes, "split packet of another answer");
                    }
                    Err(e) => self.x.fail_reassembly(e),
                }
            }
            _ => self.x.dropped(bytes, "unexpected answer type"),
        }
    }
}

crate::client_core::start_query!(QueryOptions);

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::client_core::QueryError;
    use crate::responder::{Responder, ResponderConfig, Transmits};

    fn status() -> Status {
        Status {
            game_id: Some(7),
            host_name: Some("Host".into()),
            players: Some(vec![crate::Player {
                name: Some("A".into()),
                ..Default::default()
            }]),
            ..Status::default()
        }
    }

    fn retries(n: u32) -> Timing {
        Timing {
            retries: n,
            ..Timing::default()
        }
    }

    #[test]
    fn a_probe_comes_first_and_costs_less_than_an_uplink() {
        let t0 = Instant::now();
        let mut r = Responder::new(ResponderConfig::default(), [9; 32], t0);
        let opts = QueryOptions {
            query: DefaultQuery::server_info_only(),
            max_bytes_per_packet: None,
            probe: true,
            ..QueryOptions::default()
        };
        let mut m = QueryMachine::new(opts, Timing::default(), 78, t0);
        let src = "127.0.0.1:5556".parse().unwrap();
        let s = status();
        let mut out = Transmits::default();
        let mut sent = Vec::new();
        for _ in 0..4 {
            let Some(q) = m.poll_transmit(t0) else { break };
            sent.push(q.len());
            r.handle(t0, src, &q, &s, &mut out);
            for d in out.iter() {
                m.handle_datagram(t0, d);
            }
        }
        let o = m.take_result().expect("done").expect("ok");
        assert_eq!(o.status.host_name.as_deref(), Some("Host"));
        // the 11-byte probe, then the challenged query for the server info
        assert_eq!(sent[0], 11);
        assert_eq!(sent.len(), 2);
        assert!(sent[1] <= 24, "{sent:?}");
    }

    #[test]
    fn after_a_probe_an_answer_without_our_request_id_is_not_taken() {
        let t0 = Instant::now();
        let opts = QueryOptions {
            probe: true,
            ..QueryOptions::default()
        };
        let mut m = QueryMachine::new(opts, retries(0), 79, t0);
        let _ = m.poll_transmit(t0);
        // a forged answer without a RequestID, as a blind spoofer could send
        let mut d = Vec::new();
        let h = Header::answer(PacketType::DEFAULT_QUERY);
        super::super::encode_answer(
            &h,
            &status(),
            &DefaultQuery::everything(),
            &Default::default(),
            &mut d,
        );
        m.handle_datagram(t0, &d);
        assert!(!m.is_done());
    }

    #[test]
    fn challenge_flow_against_the_responder() {
        let t0 = Instant::now();
        let mut r = Responder::new(ResponderConfig::default(), [9; 32], t0);
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 77, t0);
        let src = "127.0.0.1:5555".parse().unwrap();
        let s = status();
        let mut out = Transmits::default();
        for _ in 0..4 {
            let Some(q) = m.poll_transmit(t0) else { break };
            r.handle(t0, src, &q, &s, &mut out);
            for d in out.iter() {
                m.handle_datagram(t0 + Duration::from_millis(3), d);
            }
        }
        let o = m.take_result().expect("done").expect("ok");
        assert_eq!(o.protocol, Protocol::Ogp);
        assert_eq!(o.status.host_name.as_deref(), Some("Host"));
        assert_eq!(o.details.challenge, Some(r.ogp_challenge(t0, src.ip())));
        assert_eq!(o.details.request_id, 77);
        assert!((o.ping_ms - 3.0).abs() < 0.01);
        assert_eq!(o.datagrams, 1);
        assert!(matches!(
            o.events.first(),
            Some(Event::Sent {
                challenge: Some(0),
                ..
            })
        ));
        assert!(o
            .events
            .iter()
            .any(|e| matches!(e, Event::Challenge { .. })));
    }

    #[test]
    fn retries_then_times_out() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), retries(2), 1, t0);
        let mut now = t0;
        let mut sent = 0;
        while !m.is_done() {
            if m.poll_transmit(now).is_some() {
                sent += 1;
            }
            now = m.poll_timeout().unwrap_or(now);
            m.handle_timeout(now);
        }
        assert_eq!(sent, 3);
        assert_eq!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer {
                protocol: Protocol::Ogp,
                step: None,
                attempts: 3
            }))
        );
        // 1 s + 1.5 s + 2.25 s = 4.75 s < the 5 s total
        assert_eq!(now - t0, Duration::from_millis(4750));
    }

    #[test]
    fn a_challenge_resend_does_not_use_up_a_retry() {
        let t0 = Instant::now();
        // No retries at all, even once the server has answered.
        let timing = retries(0).alive_retries(0);
        let mut m = QueryMachine::new(QueryOptions::default(), timing, 9, t0);
        assert!(m.poll_transmit(t0).is_some());
        let mut e = Vec::new();
        let mut eh = Header::answer(PacketType::ERROR);
        eh.challenge = Some(1234);
        eh.request_id = Some(9);
        super::super::encode_error(&eh, ErrorValue::INVALID_CHALLENGE, &[], &mut e);
        let t1 = t0 + Duration::from_millis(40);
        m.handle_datagram(t1, &e);
        let resend = m.poll_transmit(t1).expect("resent with the challenge");
        let (h, _) = super::super::decode_query_header(&resend).unwrap();
        assert_eq!(h.challenge, Some(1234));
        // the answer to the resend is lost: the timeout ends the query (0 retries), after
        // the attempt timeout of the measured round trip (40 ms: 40 + 4 × 20 = 120 ms,
        // raised to MIN_ALIVE_TIMEOUT, 250 ms) and not before
        m.handle_timeout(t1 + Duration::from_millis(249));
        assert!(!m.is_done());
        m.handle_timeout(t1 + Duration::from_millis(250));
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { attempts: 2, .. }))
        ));
    }

    #[test]
    fn sections_left_out_of_a_large_answer_are_named() {
        let all = request::ALL_LISTS;
        let info_players = request::SERVER_INFO.with(request::PLAYER_LIST);
        for offered in [true, false] {
            // A small server without rules, add-ons, limits or teams: nothing to say.
            assert_eq!(left_out(all, info_players, 900, false, offered), None);
            assert_eq!(left_out(all, info_players, 9000, true, offered), None);
            // Everything there: nothing to say, however large.
            assert_eq!(left_out(all, all, 60000, true, offered), None);
            // A small answer without players: a server that does not publish them.
            assert_eq!(
                left_out(all, request::SERVER_INFO, 300, true, offered),
                None
            );
            // Close under a size limit without some sections: probably cut.
            let w = left_out(all, request::SERVER_INFO, 60000, true, offered).unwrap();
            assert!(w.contains("players") && w.contains("60000 B split"), "{w}");
            let w = left_out(all, info_players, 7900, false, offered).unwrap();
            assert!(w.contains("no teams, rules, add-ons, limits"), "{w}");
            let w = left_out(all, info_players, 2000, false, offered).unwrap();
            assert!(w.contains("2000 B in one datagram"), "{w}");
            // Split, far under 64 KiB: not cut.
            assert_eq!(left_out(all, info_players, 40000, true, offered), None);
            // Sections not asked for are never missing.
            assert_eq!(
                left_out(
                    request::SERVER_INFO,
                    request::SERVER_INFO,
                    9000,
                    false,
                    offered
                ),
                None
            );
        }
        // Splitting offered, one datagram over 2 KiB but far under 8 KiB: the size says
        // nothing was cut (the reference server's answers without the sections it does
        // not support); over every limit, not cut to fit one either.
        for bytes in [2049, 2100, 3000, 4000, 6000, 9000] {
            assert_eq!(
                left_out(all, info_players, bytes, false, true),
                None,
                "{bytes}"
            );
        }
        // No splitting asked for: one datagram was all the server could send, and its
        // limit may be anywhere from 2 KiB up (ours drops sections down from 8 KiB).
        for bytes in [2049, 3900, 9000] {
            let w = left_out(all, info_players, bytes, false, false).unwrap();
            assert!(w.contains("size limit"), "{w}");
        }
    }

    #[test]
    fn small_split_sizes_are_raised_to_the_minimum() {
        let t0 = Instant::now();
        let opts = QueryOptions {
            max_bytes_per_packet: Some(100),
            ..QueryOptions::default()
        };
        let mut m = QueryMachine::new(opts, Timing::default(), 9, t0);
        let q = m.poll_transmit(t0).unwrap();
        let (h, _) = super::super::decode_query_header(&q).unwrap();
        assert_eq!(h.max_bytes_per_packet, Some(500));
    }

    #[test]
    fn server_errors_are_rejections() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 5, t0);
        m.poll_transmit(t0);
        let mut e = Vec::new();
        super::super::encode_error(
            &Header::answer(PacketType::ERROR),
            ErrorValue::BANNED,
            &[],
            &mut e,
        );
        m.handle_datagram(t0, &e);
        let err = m.take_result().unwrap().unwrap_err();
        assert_eq!(err.kind(), "rejected");
        assert_eq!(
            err.to_string(),
            "ogp: server answered with error 0 (banned)"
        );
    }

    #[test]
    fn hostile_answers_are_bounded() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 5, t0);
        m.poll_transmit(t0);
        // wrong request id: dropped
        let mut h = Header::answer(PacketType::DEFAULT_QUERY);
        h.request_id = Some(6);
        let mut d = Vec::new();
        h.encode(&mut d);
        m.handle_datagram(t0, &d);
        assert!(!m.is_done());
        // endless Error 3s end in a challenge loop
        for i in 0..10 {
            let mut e = Vec::new();
            let mut eh = Header::answer(PacketType::ERROR);
            eh.challenge = Some(100 + i);
            super::super::encode_error(&eh, ErrorValue::INVALID_CHALLENGE, &[], &mut e);
            m.handle_datagram(t0, &e);
            m.poll_transmit(t0);
        }
        assert_eq!(
            m.take_result(),
            Some(Err(QueryError::Rejected {
                protocol: Protocol::Ogp,
                reason: Rejection::ChallengeLoop
            }))
        );
        // garbage then timeout reports the garbage
        let mut m = QueryMachine::new(QueryOptions::default(), retries(0), 5, t0);
        m.poll_transmit(t0);
        m.handle_datagram(t0, b"\xff\xff\xff\xffOGP\x00\x30");
        m.handle_timeout(t0 + Duration::from_secs(2));
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::Malformed { .. }))
        ));
    }
}

//! The OGP client as a state machine: one query of one server, with challenges,
//! retries, split reassembly and timeouts, and no I/O.
//!
//! Drive it like this (the tokio client in `ogp-net` does exactly this; a scanner drives
//! thousands from one socket):
//! 1. [`QueryMachine::poll_transmit`] → a datagram to send now, if any;
//! 2. [`QueryMachine::handle_datagram`] for every datagram from the queried address
//!    (the caller filters by source address);
//! 3. [`QueryMachine::poll_timeout`] → when to call [`QueryMachine::handle_timeout`];
//! 4. [`QueryMachine::result`] once [`QueryMachine::is_done`].
//!
//! Flow: the query is sent at once with bChallengeNumber (the known challenge, or 0),
//! so a server that does not require challenges answers in one round trip. An Error 3
//! gives the challenge in its outer header (A9); the query is sent again right away, up
//! to `max_challenge_errors` times. The challenge of an Error 2 is ignored (the reference
//! server leaves it uninitialised). Errors 0, 1, 2 and 4 end the query. Answers whose
//! RequestID is not ours are dropped; split answers are reassembled in any order with
//! duplicates dropped. A datagram that does not decode is remembered and reported if
//! nothing better arrives before the deadline. Nothing here panics; what a hostile
//! server can make it hold is bounded by the reassembler and a cap on recorded events.

use std::fmt;
use std::time::{Duration, Instant};

use super::answer::decode_answer_body;
use super::header::{Header, PacketType};
use super::query::DefaultQuery;
use super::split::{Pushed, Reassembler, ReassemblyError};
use super::{ErrorValue, Message};
use crate::error::{DecodeError, DecodeWarning};
use crate::reader::Reader;
use crate::retry::{AttemptTimer, EventLog, Timeout};
use crate::Status;

/// Settings of one query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryOptions {
    /// What to ask for (default: everything).
    pub query: DefaultQuery,
    /// Ask for UTF-8 strings (default true).
    pub utf8: bool,
    /// Ask for OGP split answers of at most this many bytes per packet, or None to let
    /// the server send one datagram (default). Values below the protocol's minimum of 500
    /// are raised to 500.
    pub max_bytes_per_packet: Option<u16>,
    /// A challenge from an earlier query of this server, if any.
    pub challenge: Option<u32>,
    /// Time to wait for an answer before sending again (default 1 s).
    pub attempt_timeout: Duration,
    /// Growth of the attempt timeout per retry, in percent (default 150).
    pub backoff_percent: u32,
    /// Retries after the first attempt (default 2).
    pub retries: u32,
    /// Deadline for the whole query (default 5 s).
    pub total_timeout: Duration,
    /// Error 3 answers tolerated before giving up (default 3).
    pub max_challenge_errors: u32,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            query: DefaultQuery::everything(),
            utf8: true,
            max_bytes_per_packet: None,
            challenge: None,
            attempt_timeout: Duration::from_secs(1),
            backoff_percent: 150,
            retries: 2,
            total_timeout: Duration::from_secs(5),
            max_challenge_errors: 3,
        }
    }
}

/// Why a query failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryError {
    /// No usable answer before the deadline.
    Timeout {
        /// Datagrams sent.
        attempts: u32,
    },
    /// The server answered with an error.
    Server(ErrorValue),
    /// The server kept answering Error 3 to the challenge it gave us.
    ChallengeLoop,
    /// The server's answer did not decode.
    Malformed(DecodeError),
    /// The server's split answer was inconsistent.
    Reassembly(ReassemblyError),
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout { attempts } => write!(
                f,
                "no answer (timed out after {attempts} attempt{})",
                if *attempts == 1 { "" } else { "s" }
            ),
            Self::Server(v) => write!(f, "server answered with error {v}"),
            Self::ChallengeLoop => {
                f.write_str("server rejects the challenge it issued (challenge loop)")
            }
            Self::Malformed(e) => write!(f, "malformed answer: {e}"),
            Self::Reassembly(e) => write!(f, "bad split answer: {e}"),
        }
    }
}

impl std::error::Error for QueryError {}

/// Something that happened on the wire, for tools that show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireEvent {
    /// A query was sent.
    Sent {
        /// Size in bytes.
        bytes: usize,
        /// The challenge it carried (0 when none was known).
        challenge: u32,
        /// Its RequestID.
        request_id: u32,
    },
    /// The server gave us a challenge with Error 3.
    Challenge {
        /// Size of the error answer.
        bytes: usize,
        /// The challenge.
        challenge: u32,
    },
    /// A packet of a split answer arrived.
    Fragment {
        /// Size in bytes.
        bytes: usize,
        /// SplitPacketNo.
        number: u8,
        /// SplitPacketCount.
        count: u8,
    },
    /// The (last packet of the) answer arrived.
    Answer {
        /// Size in bytes.
        bytes: usize,
    },
    /// A datagram was dropped (wrong RequestID, not an answer, duplicate, undecodable).
    Dropped {
        /// Size in bytes.
        bytes: usize,
        /// Why.
        why: &'static str,
    },
}

/// A successful query.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryOutcome {
    /// The server's status.
    pub status: Status,
    /// Round-trip time of the answering attempt, in milliseconds.
    pub ping_ms: f64,
    /// The challenge the server gave us (to reuse for the next query).
    pub challenge: Option<u32>,
    /// The RequestID used.
    pub request_id: u32,
    /// Datagrams of the answer.
    pub answer_datagrams: usize,
    /// Bytes of the answer.
    pub answer_bytes: usize,
    /// Decoding warnings.
    pub warnings: Vec<DecodeWarning>,
    /// What happened on the wire (at most [`MAX_EVENTS`]).
    pub events: Vec<WireEvent>,
}

/// Most wire events recorded per query.
pub const MAX_EVENTS: usize = 64;

/// One OGP query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    opts: QueryOptions,
    request_id: u32,
    challenge: Option<u32>,
    timer: AttemptTimer,
    challenge_errors: u32,
    reasm: Reassembler,
    answer_bytes: usize,
    answer_datagrams: usize,
    last_malformed: Option<DecodeError>,
    events: EventLog<WireEvent>,
    result: Option<Result<QueryOutcome, QueryError>>,
}

impl QueryMachine {
    /// A query starting at `now`. `request_id` should be random and not 0.
    pub fn new(opts: QueryOptions, request_id: u32, now: Instant) -> Self {
        Self {
            challenge: opts.challenge,
            timer: AttemptTimer::new(
                now,
                opts.attempt_timeout,
                opts.backoff_percent,
                opts.retries,
                opts.total_timeout,
            ),
            opts,
            request_id: request_id.max(1),
            challenge_errors: 0,
            reasm: Reassembler::new(),
            answer_bytes: 0,
            answer_datagrams: 0,
            last_malformed: None,
            events: EventLog::new(MAX_EVENTS),
            result: None,
        }
    }

    /// The RequestID this query uses.
    pub fn request_id(&self) -> u32 {
        self.request_id
    }

    /// Whether the query has finished.
    pub fn is_done(&self) -> bool {
        self.result.is_some()
    }

    /// The result, once done.
    pub fn result(&mut self) -> Option<Result<QueryOutcome, QueryError>> {
        self.result.take()
    }

    fn event(&mut self, e: WireEvent) {
        self.events.push(e);
    }

    fn finish(&mut self, r: Result<QueryOutcome, QueryError>) {
        if self.result.is_none() {
            self.result = Some(r);
        }
        self.timer.stop();
    }

    /// The query datagram for the current state.
    pub fn encode_query(&self, out: &mut Vec<u8>) {
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

    /// The datagram to send now, if any.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        if !self.timer.send_due() || self.result.is_some() {
            return None;
        }
        let mut d = Vec::with_capacity(32);
        self.encode_query(&mut d);
        self.timer.sent(now);
        self.event(WireEvent::Sent {
            bytes: d.len(),
            challenge: self.challenge.unwrap_or(0),
            request_id: self.request_id,
        });
        Some(d)
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.result.is_some() {
            return None;
        }
        Some(self.timer.poll_timeout())
    }

    /// Advances timers: retries or gives up.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.result.is_some() {
            return;
        }
        if let Some(Timeout::GiveUp { .. }) = self.timer.handle_timeout(now) {
            self.give_up();
        }
    }

    fn give_up(&mut self) {
        let e = match self.last_malformed {
            Some(e) => QueryError::Malformed(e),
            None => QueryError::Timeout {
                attempts: self.timer.attempts(),
            },
        };
        self.finish(Err(e));
    }

    /// Handles a datagram from the queried address.
    pub fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.result.is_some() {
            return;
        }
        let bytes = datagram.len();
        let packet = match super::decode(datagram) {
            Ok(p) => p,
            Err(e) => {
                if super::is_ogp(datagram) {
                    self.last_malformed = Some(e);
                }
                return self.event(WireEvent::Dropped {
                    bytes,
                    why: "does not decode",
                });
            }
        };
        let h = packet.header;
        if !h.is_answer() {
            return self.event(WireEvent::Dropped {
                bytes,
                why: "not an answer",
            });
        }
        if h.request_id.is_some_and(|id| id != self.request_id) {
            return self.event(WireEvent::Dropped {
                bytes,
                why: "another RequestID",
            });
        }
        match packet.message {
            Message::Error(e) if e.value == ErrorValue::INVALID_CHALLENGE => {
                let from_copy = e
                    .resend_copy()
                    .and_then(|c| super::decode_query_header(c).ok())
                    .and_then(|(qh, _)| qh.challenge);
                let Some(c) = h.challenge.or(from_copy) else {
                    return self.finish(Err(QueryError::Server(e.value)));
                };
                self.event(WireEvent::Challenge {
                    bytes,
                    challenge: c,
                });
                self.challenge_errors += 1;
                if self.challenge_errors > self.opts.max_challenge_errors {
                    return self.finish(Err(QueryError::ChallengeLoop));
                }
                self.challenge = Some(c);
                self.reasm = Reassembler::new();
                // Resending with a new challenge after Error 3 is part of the
                // exchange, not a retry: only timeouts use up retries.
                self.timer.resend_now();
            }
            Message::Error(e) => self.finish(Err(QueryError::Server(e.value))),
            Message::Answer(a) => {
                self.answer_bytes += bytes;
                self.answer_datagrams += 1;
                self.event(WireEvent::Answer { bytes });
                if h.challenge.is_some() {
                    self.challenge = h.challenge;
                }
                self.complete(now, a.status, a.warnings);
            }
            Message::Fragment { body } => {
                let Some(split) = h.split else { return };
                match self.reasm.push(&h, &body) {
                    Ok(Pushed::Duplicate) => self.event(WireEvent::Dropped {
                        bytes,
                        why: "duplicate split packet",
                    }),
                    Ok(Pushed::Incomplete) => {
                        self.answer_bytes += bytes;
                        self.answer_datagrams += 1;
                        self.event(WireEvent::Fragment {
                            bytes,
                            number: split.number,
                            count: split.count,
                        });
                    }
                    Ok(Pushed::Complete { header, body }) => {
                        self.answer_bytes += bytes;
                        self.answer_datagrams += 1;
                        self.event(WireEvent::Fragment {
                            bytes,
                            number: split.number,
                            count: split.count,
                        });
                        if header.challenge.is_some() {
                            self.challenge = header.challenge;
                        }
                        let mut r = Reader::new(&body);
                        match decode_answer_body(&mut r, header.utf8()) {
                            Ok(a) => self.complete(now, a.status, a.warnings),
                            Err(e) => self.finish(Err(QueryError::Malformed(e))),
                        }
                    }
                    Err(ReassemblyError::Mismatch) => {
                        self.event(WireEvent::Dropped {
                            bytes,
                            why: "split packet of another answer",
                        });
                    }
                    Err(e) => self.finish(Err(QueryError::Reassembly(e))),
                }
            }
            _ => self.event(WireEvent::Dropped {
                bytes,
                why: "unexpected answer type",
            }),
        }
    }

    fn complete(&mut self, now: Instant, status: Status, warnings: Vec<DecodeWarning>) {
        let outcome = QueryOutcome {
            status,
            ping_ms: self.timer.rtt_ms(now),
            challenge: self.challenge,
            request_id: self.request_id,
            answer_datagrams: self.answer_datagrams,
            answer_bytes: self.answer_bytes,
            warnings,
            events: self.events.take(),
        };
        self.finish(Ok(outcome));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    #[test]
    fn challenge_flow_against_the_responder() {
        let t0 = Instant::now();
        let mut r = Responder::new(ResponderConfig::default(), [9; 32], t0);
        let mut m = QueryMachine::new(QueryOptions::default(), 77, t0);
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
        let o = m.result().expect("done").expect("ok");
        assert_eq!(o.status.host_name.as_deref(), Some("Host"));
        assert_eq!(o.challenge, Some(r.ogp_challenge(t0, src.ip())));
        assert!((o.ping_ms - 3.0).abs() < 0.01);
        assert!(matches!(
            o.events.first(),
            Some(WireEvent::Sent { challenge: 0, .. })
        ));
        assert!(o
            .events
            .iter()
            .any(|e| matches!(e, WireEvent::Challenge { .. })));
    }

    #[test]
    fn retries_then_times_out() {
        let t0 = Instant::now();
        let opts = QueryOptions {
            retries: 2,
            ..QueryOptions::default()
        };
        let mut m = QueryMachine::new(opts, 1, t0);
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
        assert_eq!(m.result(), Some(Err(QueryError::Timeout { attempts: 3 })));
        // 1 s + 1.5 s + 2.25 s = 4.75 s < the 5 s total
        assert_eq!(now - t0, Duration::from_millis(4750));
    }

    #[test]
    fn a_challenge_resend_does_not_use_up_a_retry() {
        let t0 = Instant::now();
        let opts = QueryOptions {
            retries: 0,
            ..QueryOptions::default()
        };
        let mut m = QueryMachine::new(opts, 9, t0);
        assert!(m.poll_transmit(t0).is_some());
        let mut e = Vec::new();
        let mut eh = Header::answer(PacketType::ERROR);
        eh.challenge = Some(1234);
        eh.request_id = Some(9);
        super::super::encode_error(&eh, ErrorValue::INVALID_CHALLENGE, &[], &mut e);
        m.handle_datagram(t0, &e);
        let resend = m.poll_transmit(t0).expect("resent with the challenge");
        let (h, _) = super::super::decode_query_header(&resend).unwrap();
        assert_eq!(h.challenge, Some(1234));
        // the answer to the resend is lost: the timeout ends the query (0 retries), after
        // the full attempt timeout and not before
        m.handle_timeout(t0 + Duration::from_millis(999));
        assert!(!m.is_done());
        m.handle_timeout(t0 + Duration::from_millis(1000));
        assert_eq!(m.result(), Some(Err(QueryError::Timeout { attempts: 2 })));
    }

    #[test]
    fn small_split_sizes_are_raised_to_the_minimum() {
        let t0 = Instant::now();
        let opts = QueryOptions {
            max_bytes_per_packet: Some(100),
            ..QueryOptions::default()
        };
        let mut m = QueryMachine::new(opts, 9, t0);
        let q = m.poll_transmit(t0).unwrap();
        let (h, _) = super::super::decode_query_header(&q).unwrap();
        assert_eq!(h.max_bytes_per_packet, Some(500));
    }

    #[test]
    fn hostile_answers_are_bounded() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), 5, t0);
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
        assert_eq!(m.result(), Some(Err(QueryError::ChallengeLoop)));
        // garbage then timeout reports the garbage
        let mut m = QueryMachine::new(
            QueryOptions {
                retries: 0,
                ..QueryOptions::default()
            },
            5,
            t0,
        );
        m.poll_transmit(t0);
        m.handle_datagram(t0, b"\xff\xff\xff\xffOGP\x00\x30");
        m.handle_timeout(t0 + Duration::from_secs(2));
        assert!(matches!(m.result(), Some(Err(QueryError::Malformed(_)))));
    }
}

//! The draft client as a state machine: one query of one server, with challenges,
//! retries, split reassembly and timeouts, and no I/O. Same interface as
//! [`ogp::client::QueryMachine`](crate::ogp::client::QueryMachine), and the same result
//! types ([`QueryOutcome`], [`QueryError`], [`WireEvent`]).
//!
//! Drive it like this:
//! 1. [`QueryMachine::poll_transmit`] → a datagram to send now, if any;
//! 2. [`QueryMachine::handle_datagram`] for every datagram from the queried address;
//! 3. [`QueryMachine::poll_timeout`] → when to call [`QueryMachine::handle_timeout`];
//! 4. [`QueryMachine::result`] once [`QueryMachine::is_done`].
//!
//! Flow (`docs/ogp-draft.md` D20): the Default Query is sent at once with bRequestID and
//! bChallengeNumber (the known challenge, or 0xFFFFFFFF to ask for one), so a server that
//! does not require challenges answers in one round trip. A Type 1 None answer gives the
//! challenge in its header; the query is sent again right away, up to
//! `max_challenge_errors` times (these resends are not retries). A Type 0 Banned answer
//! ends the query with [`QueryError::Server`]`(`[`ErrorValue::BANNED`]`)`. Answers whose
//! RequestID is not ours are dropped; split answers are reassembled in any order with
//! duplicates dropped. Nothing here panics; what a hostile server can make it hold is
//! bounded by the reassembler and a cap on recorded events.

use std::time::{Duration, Instant};

use super::answer::decode_answer_body;
use super::header::{
    Header, PacketType, MAX_MAX_BYTES_PER_PACKET, MIN_MAX_BYTES_PER_PACKET, REQUEST_CHALLENGE,
};
use super::query::DefaultQuery;
use super::Message;
use crate::error::{DecodeError, DecodeWarning};
use crate::ogp::split::{Pushed, Reassembler, ReassemblyError};
use crate::ogp::ErrorValue;
use crate::reader::Reader;
use crate::retry::{AttemptTimer, EventLog, Timeout};
use crate::Status;

pub use crate::ogp::client::{QueryError, QueryOutcome, WireEvent, MAX_EVENTS};

/// Settings of one query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryOptions {
    /// What to ask for (default: everything the draft defines data for).
    pub query: DefaultQuery,
    /// Ask for split answers of at most this many bytes per packet, or None for one
    /// datagram (default). Values are brought into the draft's 500–1500.
    pub max_bytes_per_packet: Option<i16>,
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
    /// Challenge answers (Type None) tolerated before giving up (default 3).
    pub max_challenge_errors: u32,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            query: DefaultQuery::everything(),
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

/// One draft query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    opts: QueryOptions,
    request_id: u32,
    challenge: Option<u32>,
    timer: AttemptTimer,
    challenge_errors: u32,
    reasm: Reassembler<Header>,
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
            reasm: Reassembler::default(),
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
            request_id: Some(self.request_id),
            challenge: Some(self.challenge.unwrap_or(REQUEST_CHALLENGE)),
            max_bytes_per_packet: self
                .opts
                .max_bytes_per_packet
                .map(|m| m.clamp(MIN_MAX_BYTES_PER_PACKET, MAX_MAX_BYTES_PER_PACKET)),
            ..Header::query(PacketType::DEFAULT_QUERY)
        };
        super::encode_query(&h, Some(&self.opts.query), out);
    }

    /// The datagram to send now, if any.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        if !self.timer.send_due() || self.result.is_some() {
            return None;
        }
        let mut d = Vec::with_capacity(24);
        self.encode_query(&mut d);
        self.timer.sent(now);
        self.event(WireEvent::Sent {
            bytes: d.len(),
            challenge: self.challenge.unwrap_or(REQUEST_CHALLENGE),
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
                if crate::ogp::is_ogp(datagram) {
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
            Message::None => {
                let Some(c) = h.challenge else {
                    return self.event(WireEvent::Dropped {
                        bytes,
                        why: "Type None answer without a challenge",
                    });
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
                self.reasm = Reassembler::default();
                self.timer.resend_now();
            }
            Message::Banned => self.finish(Err(QueryError::Server(ErrorValue::BANNED))),
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
                match self.reasm.push_part(h, h.request_id, split, &body) {
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
                        match decode_answer_body(&mut Reader::new(&body)) {
                            Ok(a) => self.complete(now, a.status, a.warnings),
                            Err(e) => self.finish(Err(QueryError::Malformed(e))),
                        }
                    }
                    Err(ReassemblyError::Mismatch) => self.event(WireEvent::Dropped {
                        bytes,
                        why: "split packet of another answer",
                    }),
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
    use crate::responder::{Listener, Responder, ResponderConfig, Transmits};

    fn status() -> Status {
        Status {
            host_name: Some("Host".into()),
            players: Some(vec![crate::Player {
                name: Some("A".into()),
                ..Default::default()
            }]),
            ..Status::default()
        }
    }

    fn draft_responder(t0: Instant) -> Responder {
        let config = ResponderConfig {
            listener: Listener::OgpDraft,
            ..ResponderConfig::default()
        };
        Responder::new(config, [9; 32], t0)
    }

    #[test]
    fn challenge_flow_against_the_responder() {
        let t0 = Instant::now();
        let mut r = draft_responder(t0);
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
        assert_eq!(o.status.players.as_ref().map(Vec::len), Some(1));
        assert_eq!(o.challenge, Some(r.ogp_draft_challenge(t0, src.ip())));
        assert!((o.ping_ms - 3.0).abs() < 0.01);
        assert!(matches!(
            o.events.first(),
            Some(WireEvent::Sent {
                challenge: REQUEST_CHALLENGE,
                ..
            })
        ));
        assert!(o
            .events
            .iter()
            .any(|e| matches!(e, WireEvent::Challenge { .. })));
    }

    #[test]
    fn retries_then_times_out() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), 1, t0);
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
        assert_eq!(now - t0, Duration::from_millis(4750));
    }

    #[test]
    fn split_sizes_are_brought_into_range() {
        let t0 = Instant::now();
        for (asked, sent) in [(100, 500), (-5, 500), (1400, 1400), (9000, 1500)] {
            let opts = QueryOptions {
                max_bytes_per_packet: Some(asked),
                ..QueryOptions::default()
            };
            let mut m = QueryMachine::new(opts, 9, t0);
            let q = m.poll_transmit(t0).unwrap();
            let (h, _) = super::super::decode_header(&q).unwrap();
            assert_eq!(h.max_bytes_per_packet, Some(sent));
        }
    }

    #[test]
    fn banned_ends_the_query() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), 5, t0);
        m.poll_transmit(t0);
        let mut d = Vec::new();
        Header {
            request_id: Some(5),
            ..Header::answer(PacketType::BANNED)
        }
        .encode(&mut d);
        m.handle_datagram(t0, &d);
        assert_eq!(
            m.result(),
            Some(Err(QueryError::Server(ErrorValue::BANNED)))
        );
    }

    #[test]
    fn hostile_answers_are_bounded() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), 5, t0);
        m.poll_transmit(t0);
        // another RequestID, a query, a None without a challenge: dropped
        for h in [
            Header {
                request_id: Some(6),
                ..Header::answer(PacketType::DEFAULT_QUERY)
            },
            Header::query(PacketType::NONE),
            Header::answer(PacketType::NONE),
        ] {
            let mut d = Vec::new();
            h.encode(&mut d);
            d.push(0);
            m.handle_datagram(t0, &d);
            assert!(!m.is_done());
        }
        // endless challenges end in a challenge loop
        for i in 0..10 {
            let mut d = Vec::new();
            Header {
                challenge: Some(100 + i),
                ..Header::answer(PacketType::NONE)
            }
            .encode(&mut d);
            m.handle_datagram(t0, &d);
            m.poll_transmit(t0);
        }
        assert_eq!(m.result(), Some(Err(QueryError::ChallengeLoop)));
        // garbage then timeout reports the garbage
        let opts = QueryOptions {
            retries: 0,
            ..QueryOptions::default()
        };
        let mut m = QueryMachine::new(opts, 5, t0);
        m.poll_transmit(t0);
        m.handle_datagram(t0, b"\xff\xff\xff\xffOGP\x00\x01\x02\x01");
        m.handle_timeout(t0 + Duration::from_secs(2));
        assert!(matches!(m.result(), Some(Err(QueryError::Malformed(_)))));
    }
}

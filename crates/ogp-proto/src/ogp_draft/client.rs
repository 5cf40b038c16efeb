//! The draft client as a state machine: one query of one server, with challenges,
//! retries, split reassembly and timeouts, and no I/O. It embeds the shared client core
//! ([`client`](crate::client)) like the [OGP client](crate::ogp::client),
//! and answers with the same [`Details`].
//!
//! Flow (`docs/ogp-draft.md` D20): the Default Query is sent at once with bRequestID and
//! bChallengeNumber (the known challenge, or 0xFFFFFFFF to ask for one), so a server that
//! does not require challenges answers in one round trip. A Type 1 None answer gives the
//! challenge in its header; the query is sent again right away, up to
//! [`Timing::max_challenges`] times (these resends are not retries). A Type 0 Banned
//! answer ends the query as a rejection. Answers whose RequestID is not ours are dropped;
//! split answers are reassembled in any order with duplicates dropped. Nothing here
//! panics; what a hostile server can make it hold is bounded by the reassembler and a
//! cap on recorded events.

use std::time::Instant;

use super::answer::decode_answer_body;
use super::header::{
    Header, PacketType, MAX_MAX_BYTES_PER_PACKET, MIN_MAX_BYTES_PER_PACKET, REQUEST_CHALLENGE,
};
use super::query::DefaultQuery;
use super::Message;
use crate::client_core::{exchange_driver, Event, Exchange, QueryDriver, Timing};
use crate::error::DecodeWarning;
use crate::ogp::client::rejection;
use crate::ogp::split::{Pushed, Reassembler, ReassemblyError};
use crate::ogp::ErrorValue;
use crate::protocol::Protocol;
use crate::Status;

pub use crate::ogp::client::Details;

/// The draft's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// What to ask for (default: everything the draft defines data for).
    pub query: DefaultQuery,
    /// Ask for split answers of at most this many bytes per packet (default 1400, as for
    /// OGP v1.01), or None for one datagram, which a server may have to cut. Values are
    /// brought into the draft's 500–1500.
    pub max_bytes_per_packet: Option<i16>,
    /// A challenge from an earlier query of this server, if any.
    pub challenge: Option<u32>,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            query: DefaultQuery::everything(),
            max_bytes_per_packet: Some(1400),
            challenge: None,
        }
    }
}

/// One draft query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    opts: QueryOptions,
    request_id: u32,
    challenge: Option<u32>,
    reasm: Reassembler<Header>,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now`. `request_id` should be random and not 0.
    pub fn new(opts: QueryOptions, timing: Timing, request_id: u32, now: Instant) -> Self {
        Self {
            challenge: opts.challenge,
            opts,
            request_id: request_id.max(1),
            reasm: Reassembler::default(),
            x: Exchange::new(Protocol::OgpDraft, &timing, now),
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

    fn complete(&mut self, status: Status, warnings: Vec<DecodeWarning>) {
        self.x.warn(warnings);
        let details = Details {
            challenge: self.challenge,
            request_id: self.request_id,
        };
        self.x.succeed(status, details);
    }

    fn received(&mut self, now: Instant, bytes: usize, event: Event) {
        self.x.received(1, bytes);
        self.x.ping(now);
        self.x.event(event);
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
        let challenge = Some(self.challenge.unwrap_or(REQUEST_CHALLENGE));
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
                if crate::ogp::is_ogp(datagram) {
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
        match packet.message {
            Message::None => {
                let Some(c) = h.challenge else {
                    return self
                        .x
                        .dropped(bytes, "Type None answer without a challenge");
                };
                let event = Event::Challenge {
                    bytes,
                    challenge: Some(c),
                };
                self.x.event(event);
                if self.x.follow_challenge(now) {
                    self.challenge = Some(c);
                    self.reasm = Reassembler::default();
                    self.x.timer.resend_now();
                }
            }
            Message::Banned => self.x.reject(rejection(ErrorValue::BANNED)),
            Message::Answer(a) => {
                let event = Event::Reply {
                    what: "query",
                    bytes,
                    datagrams: 1,
                };
                self.received(now, bytes, event);
                self.challenge = h.challenge.or(self.challenge);
                self.complete(a.status, a.warnings);
            }
            Message::Fragment { body } => {
                let Some(split) = h.split else { return };
                let event = Event::Part {
                    bytes,
                    number: Some(split.number),
                    count: Some(split.count),
                };
                match self.reasm.push_part(h, h.request_id, split, &body) {
                    Ok(Pushed::Duplicate) => self.x.dropped(bytes, "duplicate split packet"),
                    Ok(Pushed::Incomplete) => self.received(now, bytes, event),
                    Ok(Pushed::Complete { header, body }) => {
                        self.received(now, bytes, event);
                        self.challenge = header.challenge.or(self.challenge);
                        match decode_answer_body(&body) {
                            Ok(a) => self.complete(a.status, a.warnings),
                            Err(e) => self.x.fail_malformed(e),
                        }
                    }
                    Err(ReassemblyError::Mismatch) => {
                        self.x.dropped(bytes, "split packet of another answer")
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
    use crate::client_core::{QueryError, Rejection};
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
        assert_eq!(o.status.host_name.as_deref(), Some("Host"));
        assert_eq!(o.status.players.as_ref().map(Vec::len), Some(1));
        assert_eq!(
            o.details.challenge,
            Some(r.ogp_draft_challenge(t0, src.ip()))
        );
        assert!((o.ping_ms - 3.0).abs() < 0.01);
        assert!(matches!(
            o.events.first(),
            Some(Event::Sent {
                challenge: Some(REQUEST_CHALLENGE),
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
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
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
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { attempts: 3, .. }))
        ));
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
            let mut m = QueryMachine::new(opts, Timing::default(), 9, t0);
            let q = m.poll_transmit(t0).unwrap();
            let (h, _) = super::super::decode_header(&q).unwrap();
            assert_eq!(h.max_bytes_per_packet, Some(sent));
        }
    }

    #[test]
    fn banned_ends_the_query() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 5, t0);
        m.poll_transmit(t0);
        let mut d = Vec::new();
        Header {
            request_id: Some(5),
            ..Header::answer(PacketType::BANNED)
        }
        .encode(&mut d);
        m.handle_datagram(t0, &d);
        assert_eq!(
            m.take_result(),
            Some(Err(QueryError::Rejected {
                protocol: Protocol::OgpDraft,
                reason: rejection(ErrorValue::BANNED)
            }))
        );
    }

    #[test]
    fn hostile_answers_are_bounded() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 5, t0);
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
        assert_eq!(
            m.take_result(),
            Some(Err(QueryError::Rejected {
                protocol: Protocol::OgpDraft,
                reason: Rejection::ChallengeLoop
            }))
        );
        // garbage then timeout reports the garbage
        let timing = Timing {
            retries: 0,
            ..Timing::default()
        };
        let mut m = QueryMachine::new(QueryOptions::default(), timing, 5, t0);
        m.poll_transmit(t0);
        m.handle_datagram(t0, b"\xff\xff\xff\xffOGP\x00\x01\x02\x01");
        m.handle_timeout(t0 + Duration::from_secs(2));
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::Malformed { .. }))
        ));
    }
}

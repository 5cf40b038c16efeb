//! The GameSpy v3 client as a state machine: one server-information query of one
//! server (sub-protocol B by default, A or C on request), with the `09` challenge
//! handshake, retries, multi-packet reassembly and timeouts, and no I/O. It embeds the
//! shared client core ([`client`](crate::client)) and keeps only GameSpy v3's
//! wire logic; drive it through [`QueryDriver`] (call `poll_transmit` until `None`: an
//! attempt after the fallback sends two datagrams).
//!
//! Flow ([`Handshake::Auto`], the default; `interop.md` §2, §6):
//! * `FE FD 09 <sid>` goes out first. Its reply `09 <sid> "<decimal>" 00` gives the
//!   challenge: `"0"` (Battlefield 2), or any text that parses to 0, means "send no
//!   challenge bytes"; any other value is sent big-endian after the session id of the
//!   request (`FE FD 00 <sid> <challenge> FF FF FF 01` for sub-protocol B).
//! * When the `09` gets no reply within the attempt timeout (servers that never answer
//!   it, as some Battlefield 2 builds), the request goes out without a challenge; this
//!   fallback does not use up a retry. Every later attempt sends that request **and** a
//!   new `09`, so a server that ignores requests without a challenge but answers a `09`
//!   (late, or only the second one) is still read: its challenge makes the request go
//!   out again at once with it.
//! * [`Handshake::Always`] waits for the challenge (resending the `09` on timeouts);
//!   [`Handshake::Never`] sends the request without a challenge only (qstat `-gs3`).
//! * A challenge that changes the request is followed at once, without using up a retry,
//!   at most [`Timing::max_challenges`] times (then a challenge loop).
//!
//! Every reply must carry our session id (Minecraft servers echo only the low 4 bits of
//! each byte; [`QueryOptions::nibble_session_ids`] accepts that form too); others are
//! dropped and recorded as events. Packets are reassembled with
//! [`Reassembler`]: any order, duplicates dropped, values
//! placed by their offsets, the Just Cause 2 MP single packet without the last flag
//! taken as complete, bounded by [`QueryOptions::limits`]. A packet that does not fit the
//! held ones (a second reply of another size, after a retry) restarts the reassembly with
//! it, a bounded number of times.
//!
//! Nothing here panics. What a hostile server can make a query hold is bounded by the
//! reassembly limits and by caps on recorded events and warnings.

use std::fmt;
use std::time::Instant;

use super::mapping::{header_key, info_to_status};
use super::reply::{
    decode_reply_with, merge, Pushed, Reassembler, ReassemblyLimits, Reply, ServerInfo,
};
use super::request::{InfoKind, Request};
use crate::client_core::{exchange_driver, Event, Exchange, QueryDriver, Timeout, Timing};
use crate::error::DecodeError;
use crate::model::Text;
use crate::protocol::Protocol;
use crate::Charset;

/// Whether a query starts with the `09` challenge handshake.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Handshake {
    /// Send `09` first; without a reply in time, ask without a challenge (and keep
    /// sending `09` with every retry). Works with every server. The default.
    #[default]
    Auto,
    /// Send `09` and wait for the challenge (GameSpy 4 / UT3 / Minecraft style; qstat
    /// `-gs4`, gamedig).
    Always,
    /// Never send `09`: the request goes out without a challenge (Battlefield 2 style;
    /// qstat `-gs3`, opengsq `gamespy3`).
    Never,
}

/// The steps of a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// `FE FD 09`: asking for a challenge.
    Handshake,
    /// `FE FD 00`: asking for the server information.
    Info,
}

impl Step {
    /// What the step sends: `0x09 challenge request` or `information request`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Handshake => "0x09 challenge request",
            Self::Info => "information request",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Handshake => "the 0x09 challenge request",
            Self::Info => "the server-information request",
        })
    }
}

/// GameSpy v3's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// What to ask for (default [`InfoKind::Full`], sub-protocol B).
    pub kind: InfoKind,
    /// The `09` handshake (default [`Handshake::Auto`]).
    pub handshake: Handshake,
    /// Also accept replies whose session id is ours with the high 4 bits of every byte
    /// cleared, as Minecraft servers echo it (default true). Weakens the session-id
    /// check from 32 to 16 unpredictable bits for such replies only.
    pub nibble_session_ids: bool,
    /// Bounds on multi-packet replies.
    pub limits: ReassemblyLimits,
    /// How to read strings that are not UTF-8 (default [`Charset::Auto`]: as Latin-1,
    /// with a warning).
    pub charset: Charset,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            kind: InfoKind::Full,
            handshake: Handshake::Auto,
            nibble_session_ids: true,
            limits: ReassemblyLimits::default(),
            charset: Charset::Auto,
        }
    }
}

/// What a GameSpy v3 answer says beyond the status.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Details {
    /// The reply as sent: server keys, player and team columns (sub-protocol C: the
    /// asked header keys and their values).
    pub info: ServerInfo,
    /// The challenge the answered request carried (`None`: no challenge bytes).
    pub challenge: Option<u32>,
    /// Whether the server answered the `09` handshake.
    pub handshake_answered: bool,
    /// Whether the reply was the Just Cause 2 MP variant.
    pub jc2mp: bool,
}

/// How often a query drops held packets that do not fit a newer packet.
pub const MAX_REASSEMBLY_RESTARTS: u32 = 8;

/// One GameSpy v3 query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    opts: QueryOptions,
    session_id: u32,
    step: Step,
    /// The challenge the information request carries.
    challenge: Option<u32>,
    /// Whether the `09` reply came.
    handshake_answered: bool,
    /// Auto mode after the `09` timed out: every information attempt also sends a `09`.
    fallback: bool,
    /// A `09` to send right after the information request.
    pending_handshake: bool,
    /// Whether any `09` / information request went out.
    sent_handshake: bool,
    sent_info: bool,
    reasm: Reassembler,
    restarts: u32,
    held_bytes: usize,
    jc2mp: bool,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now`, with `session_id` (pick it at random: it is what tells
    /// our replies from spoofed or stale ones).
    pub fn new(opts: QueryOptions, timing: Timing, session_id: u32, now: Instant) -> Self {
        let step = match opts.handshake {
            Handshake::Auto | Handshake::Always => Step::Handshake,
            Handshake::Never => Step::Info,
        };
        Self {
            session_id,
            step,
            challenge: None,
            handshake_answered: false,
            fallback: false,
            pending_handshake: false,
            sent_handshake: false,
            sent_info: false,
            reasm: Reassembler::with_limits(opts.limits),
            restarts: 0,
            held_bytes: 0,
            jc2mp: false,
            x: Exchange::new(Protocol::Gamespy3, &timing, now),
            opts,
        }
    }

    /// The session id the requests carry.
    pub fn session_id(&self) -> u32 {
        self.session_id
    }

    /// The step in progress.
    pub fn step(&self) -> Step {
        self.step
    }

    /// Whether the query has finished.
    pub fn is_done(&self) -> bool {
        self.x.is_done()
    }

    /// The current information request.
    pub fn request(&self) -> Request {
        Request::Info {
            session_id: self.session_id,
            challenge: self.challenge,
            kind: self.opts.kind.clone(),
        }
    }

    fn handshake_request(&self) -> Request {
        Request::Challenge {
            session_id: self.session_id,
        }
    }

    fn send_handshake(&mut self, with_attempt: Option<Instant>, d: &mut Vec<u8>) {
        d.clear();
        self.handshake_request().encode(d);
        self.sent_handshake = true;
        let event = Event::Sent {
            what: Step::Handshake.name(),
            bytes: d.len(),
            challenge: None,
            id: Some(self.session_id),
        };
        match with_attempt {
            Some(now) => self.x.sent(now, event),
            None => self.x.sent_extra(event),
        }
    }

    fn seal(&mut self) {
        self.pending_handshake = false;
    }

    fn ours(&self, session_id: u32) -> bool {
        session_id == self.session_id
            || (self.opts.nibble_session_ids && session_id == self.session_id & 0x0f0f_0f0f)
    }

    fn drop_datagram(&mut self, bytes: usize, why: &'static str) {
        self.x.dropped(bytes, why);
    }

    fn datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        let reply = match decode_reply_with(datagram, self.opts.charset) {
            Ok(r) => r,
            Err(e) => {
                // Remember it when it carries our session id: a broken reply of this
                // server rather than stray traffic.
                let sid = datagram
                    .get(1..5)
                    .and_then(|s| <[u8; 4]>::try_from(s).ok())
                    .map(u32::from_be_bytes);
                if sid.is_some_and(|s| self.ours(s)) {
                    self.x.malformed(e);
                }
                return self.drop_datagram(bytes, "does not decode");
            }
        };
        match reply {
            Reply::Challenge(c) => {
                if !self.ours(c.session_id) {
                    return self.drop_datagram(bytes, "another session id");
                }
                if !self.sent_handshake {
                    return self.drop_datagram(bytes, "a challenge nobody asked for");
                }
                let Some(value) = c.value() else {
                    self.x.malformed(DecodeError::invalid(
                        5,
                        "Challenge",
                        "the challenge is not a decimal number",
                    ));
                    return self.drop_datagram(bytes, "challenge is not a number");
                };
                self.x.ping(now);
                self.x.event(Event::Challenge {
                    bytes,
                    challenge: Some(value),
                });
                self.handshake_answered = true;
                self.pending_handshake = false;
                let challenge = (value != 0).then_some(value);
                if self.step == Step::Info && self.sent_info && challenge == self.challenge {
                    // Already asked with exactly this (BF2's "0" after the fallback).
                    return;
                }
                if !self.x.follow_challenge(now) {
                    return self.seal();
                }
                if challenge != self.challenge {
                    self.reset_reassembly();
                }
                self.challenge = challenge;
                self.step = Step::Info;
                self.x.timer.restart_retries();
                self.x.timer.resend_now();
            }
            Reply::Packet(p) => {
                if !self.ours(p.session_id) {
                    return self.drop_datagram(bytes, "another session id");
                }
                if !self.sent_info {
                    return self.drop_datagram(bytes, "a reply before any request");
                }
                if matches!(self.opts.kind, InfoKind::Keys(_)) {
                    return self.drop_datagram(bytes, "not a sub-protocol C reply");
                }
                self.x.ping(now);
                self.x.event(Event::Part {
                    bytes,
                    number: Some(p.number),
                    count: None,
                });
                self.push_packet(p, bytes);
            }
            Reply::Keys { session_id, values } => {
                if !self.ours(session_id) {
                    return self.drop_datagram(bytes, "another session id");
                }
                if !self.sent_info {
                    return self.drop_datagram(bytes, "a reply before any request");
                }
                let InfoKind::Keys(indexes) = &self.opts.kind else {
                    return self.drop_datagram(bytes, "a sub-protocol C reply");
                };
                let server = indexes
                    .iter()
                    .zip(values)
                    .map(|(&i, v)| {
                        let key = header_key(i)
                            .map_or_else(|| Text::from(format!("header_{i:02x}")), Text::from);
                        (key, v)
                    })
                    .collect();
                let info = ServerInfo {
                    server,
                    ..ServerInfo::default()
                };
                self.x.ping(now);
                self.complete(info, 1, bytes);
            }
            Reply::Echo(_) => self.drop_datagram(bytes, "an echo reply"),
        }
    }

    fn reset_reassembly(&mut self) {
        self.reasm.reset();
        self.held_bytes = 0;
        self.jc2mp = false;
    }

    fn push_packet(&mut self, p: super::reply::Packet, bytes: usize) {
        if matches!(self.opts.kind, InfoKind::Basic { .. }) {
            // Sub-protocol A is one packet, whatever its flag says.
            if p.number != 0 {
                return self.drop_datagram(bytes, "sub-protocol A has one packet");
            }
            self.jc2mp = p.jc2mp;
            let (info, warnings) = merge(vec![p]);
            self.x.warn(warnings);
            return self.complete(info, 1, bytes);
        }
        let jc2mp = p.jc2mp;
        let retry = (self.restarts < MAX_REASSEMBLY_RESTARTS).then(|| p.clone());
        let pushed = match (self.reasm.push(p, bytes), retry) {
            (Err(_), Some(p)) => {
                // Most likely the held packets belong to another copy of the reply (a
                // retry answered twice, the server's state changed in between): start
                // over with this packet.
                self.restarts += 1;
                self.reset_reassembly();
                self.drop_datagram(0, "held packets of another reply");
                self.reasm.push(p, bytes)
            }
            (r, _) => r,
        };
        match pushed {
            Ok(Pushed::Duplicate) => self.drop_datagram(bytes, "duplicate packet"),
            Ok(Pushed::Incomplete) => {
                self.held_bytes = self.held_bytes.saturating_add(bytes);
                self.jc2mp |= jc2mp;
            }
            Ok(Pushed::Complete {
                info,
                packets,
                warnings,
            }) => {
                self.held_bytes = self.held_bytes.saturating_add(bytes);
                self.jc2mp |= jc2mp;
                self.x.warn(warnings);
                let held = self.held_bytes;
                self.complete(info, packets, held);
            }
            Err(e) => {
                self.x.fail_reassembly(e);
                self.seal();
            }
        }
    }

    fn complete(&mut self, info: ServerInfo, packets: usize, bytes: usize) {
        self.x.event(Event::Reply {
            what: Step::Info.name(),
            bytes,
            datagrams: packets,
        });
        self.x.received(packets, bytes);
        let status = info_to_status(&info);
        let details = Details {
            info,
            challenge: self.challenge,
            handshake_answered: self.handshake_answered,
            jc2mp: self.jc2mp,
        };
        self.x.succeed(status, details);
        self.seal();
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    exchange_driver!();

    /// Call it until it returns `false`: an attempt after the fallback sends two
    /// datagrams.
    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        if self.x.is_done() {
            return false;
        }
        if self.pending_handshake {
            self.pending_handshake = false;
            self.send_handshake(None, d);
            return true;
        }
        if !self.x.due_datagram(d) {
            return false;
        }
        match self.step {
            Step::Handshake => {
                self.send_handshake(Some(now), d);
                true
            }
            Step::Info => {
                self.request().encode(d);
                self.sent_info = true;
                let (challenge, id) = (self.challenge, Some(self.session_id));
                self.x.sent_query(now, d, Step::Info.name(), challenge, id);
                self.pending_handshake = self.fallback && !self.handshake_answered;
                true
            }
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.x.is_done() {
            return;
        }
        if self.step == Step::Handshake
            && self.opts.handshake == Handshake::Auto
            && self.x.timer.attempt_expired(now)
        {
            // The 09 went unanswered: ask without a challenge, without using a retry.
            self.step = Step::Info;
            self.fallback = true;
            self.x
                .event(Event::Note("no reply to 0x09: asking without a challenge"));
            self.x.timer.resend_now();
            return;
        }
        if self.x.handle_timeout(now) == Some(Timeout::GiveUp) {
            self.x.give_up(Some(self.step.name()));
            self.seal();
        }
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        self.datagram(now, datagram);
    }
}

crate::client_core::start_query!(QueryOptions);

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use crate::client_core::{QueryError, Rejection, MAX_EVENTS, MAX_WARNINGS};
    use crate::gamespy3::reply::ReassemblyError;
    use crate::gamespy3::reply::{encode_keys_reply, encode_packets, ChallengeReply, Column};

    const SID: u32 = 0x1234_5678;

    fn info(players: usize) -> ServerInfo {
        ServerInfo {
            server: vec![
                ("hostname".into(), "Test server".into()),
                ("numplayers".into(), players.to_string().into()),
            ],
            players: vec![Column {
                key: "player_".into(),
                values: (0..players)
                    .map(|i| format!("player {i:03} {}", "x".repeat(40)).into())
                    .collect(),
            }],
            teams: Vec::new(),
        }
    }

    fn packets(i: &ServerInfo, sid: u32) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        encode_packets(i, sid, 1400, |p| out.push(p.to_vec())).unwrap();
        out
    }

    fn challenge(text: &str) -> Vec<u8> {
        let mut v = Vec::new();
        ChallengeReply {
            session_id: SID,
            text: text.into(),
        }
        .encode(&mut v);
        v
    }

    fn sent(m: &mut QueryMachine, now: Instant) -> Vec<Request> {
        std::iter::from_fn(|| m.poll_transmit(now))
            .map(|d| Request::decode(&d).unwrap())
            .collect()
    }

    fn opts(handshake: Handshake) -> QueryOptions {
        QueryOptions {
            handshake,
            ..QueryOptions::default()
        }
    }

    fn hs() -> Request {
        Request::Challenge { session_id: SID }
    }

    #[test]
    fn a_late_challenge_after_the_fallback_is_followed() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(opts(Handshake::Auto), Timing::default(), SID, t0);
        assert_eq!(sent(&mut m, t0), [hs()]);
        // no reply within the attempt timeout: the request without a challenge, and a 09
        let t1 = m.poll_timeout().unwrap();
        assert_eq!(t1, t0 + Duration::from_secs(1));
        m.handle_timeout(t1);
        assert_eq!(sent(&mut m, t1), [Request::full(SID, None), hs()]);
        // the server ignores requests without a challenge but answers the 09 (late)
        m.handle_datagram(t1, &challenge("27111876"));
        assert_eq!(sent(&mut m, t1), [Request::full(SID, Some(27_111_876))]);
        let i = info(60);
        let ps = packets(&i, SID);
        assert!(ps.len() > 1);
        for p in ps.iter().rev() {
            m.handle_datagram(t1 + Duration::from_millis(5), p);
        }
        let o = m.take_result().unwrap().unwrap();
        assert_eq!(o.details.info, i);
        assert_eq!(o.details.challenge, Some(27_111_876));
        assert!(o.details.handshake_answered);
        assert_eq!(o.datagrams, ps.len());
        assert!(o.events.iter().any(|e| matches!(e, Event::Note(_))));
        assert_eq!(o.status.players.as_ref().map(Vec::len), Some(60));
        assert!(m.poll_transmit(t1).is_none() && m.poll_timeout().is_none());
    }

    #[test]
    fn a_bf2_zero_after_the_fallback_sends_nothing_more() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(opts(Handshake::Auto), Timing::default(), SID, t0);
        sent(&mut m, t0);
        let t1 = t0 + Duration::from_secs(1);
        m.handle_timeout(t1);
        assert_eq!(sent(&mut m, t1).len(), 2);
        m.handle_datagram(t1, &challenge("0"));
        assert!(
            sent(&mut m, t1).is_empty(),
            "already asked without a challenge"
        );
        // retries after the 09 was answered send the request alone
        let t2 = m.poll_timeout().unwrap();
        m.handle_timeout(t2);
        assert_eq!(sent(&mut m, t2), [Request::full(SID, None)]);
        for p in packets(&info(3), SID) {
            m.handle_datagram(t2, &p);
        }
        assert_eq!(m.take_result().unwrap().unwrap().details.challenge, None);
    }

    #[test]
    fn always_times_out_on_the_handshake_and_never_skips_it() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(opts(Handshake::Always), Timing::default(), SID, t0);
        let mut n = 0;
        let mut now = t0;
        for _ in 0..20 {
            for r in sent(&mut m, now) {
                assert_eq!(r, hs());
                n += 1;
            }
            let Some(t) = m.poll_timeout() else { break };
            now = t;
            m.handle_timeout(now);
        }
        let e = m.take_result().unwrap().unwrap_err();
        assert_eq!(
            e,
            QueryError::NoAnswer {
                protocol: Protocol::Gamespy3,
                step: Some("0x09 challenge request"),
                attempts: 3
            }
        );
        assert_eq!(n, 3);
        assert_eq!(
            e.to_string(),
            "gamespy3: no answer to 0x09 challenge request (timed out after 3 datagrams sent)"
        );
        let mut m = QueryMachine::new(opts(Handshake::Never), Timing::default(), SID, t0);
        assert_eq!(sent(&mut m, t0), [Request::full(SID, None)]);
        // a challenge nobody asked for is dropped
        m.handle_datagram(t0, &challenge("5"));
        assert!(sent(&mut m, t0).is_empty());
    }

    #[test]
    fn new_challenges_are_capped() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(opts(Handshake::Always), Timing::default(), SID, t0);
        sent(&mut m, t0);
        for c in 1..=5 {
            m.handle_datagram(t0, &challenge(&c.to_string()));
            assert_eq!(sent(&mut m, t0), [Request::full(SID, Some(c))]);
        }
        // the same challenge again changes nothing
        m.handle_datagram(t0, &challenge("5"));
        assert!(!m.is_done());
        m.handle_datagram(t0, &challenge("6"));
        let e = m.take_result().unwrap().unwrap_err();
        assert_eq!(
            e,
            QueryError::Rejected {
                protocol: Protocol::Gamespy3,
                reason: Rejection::ChallengeLoop
            }
        );
        assert_eq!(
            e.to_string(),
            "gamespy3: server keeps answering with new challenges"
        );
    }

    #[test]
    fn a_challenge_that_is_no_number_is_reported_as_malformed() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(
            opts(Handshake::Always),
            Timing {
                retries: 0,
                ..Timing::default()
            },
            SID,
            t0,
        );
        sent(&mut m, t0);
        m.handle_datagram(t0, &challenge("abc"));
        assert!(sent(&mut m, t0).is_empty());
        m.handle_timeout(t0 + Duration::from_secs(1));
        let e = m.take_result().unwrap().unwrap_err();
        assert!(matches!(e, QueryError::Malformed { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "gamespy3: malformed reply: Challenge at byte 5: the challenge is not a decimal number"
        );
    }

    #[test]
    fn other_sessions_and_stray_replies_are_dropped() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(opts(Handshake::Always), Timing::default(), SID, t0);
        sent(&mut m, t0);
        // a packet before any information request
        for p in packets(&info(1), SID) {
            m.handle_datagram(t0, &p);
        }
        // another session's challenge
        let mut other = challenge("9");
        other[4] ^= 1;
        m.handle_datagram(t0, &other);
        assert!(sent(&mut m, t0).is_empty());
        assert!(!m.is_done());
        // Minecraft's masked session id is ours
        let mut masked = challenge("9");
        masked[1..5].copy_from_slice(&(SID & 0x0f0f_0f0f).to_be_bytes());
        m.handle_datagram(t0, &masked);
        assert_eq!(sent(&mut m, t0), [Request::full(SID, Some(9))]);
        for p in packets(&info(2), SID & 0x0f0f_0f0f) {
            m.handle_datagram(t0, &p);
        }
        let o = m.take_result().unwrap().unwrap();
        let dropped: Vec<_> = o
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Dropped { why, .. } => Some(*why),
                _ => None,
            })
            .collect();
        assert_eq!(
            dropped,
            ["a reply before any request", "another session id"]
        );
        // without the option, the masked id is another session's
        let mut m = QueryMachine::new(
            QueryOptions {
                nibble_session_ids: false,
                ..opts(Handshake::Always)
            },
            Timing::default(),
            SID,
            t0,
        );
        sent(&mut m, t0);
        m.handle_datagram(t0, &masked);
        assert!(sent(&mut m, t0).is_empty());
    }

    #[test]
    fn a_second_reply_of_another_size_restarts_the_reassembly() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(opts(Handshake::Never), Timing::default(), SID, t0);
        sent(&mut m, t0);
        let a = packets(&info(60), SID);
        assert_eq!(a.len(), 3);
        let b = packets(&info(30), SID);
        assert_eq!(b.len(), 2);
        m.handle_datagram(t0, &a[0]);
        m.handle_datagram(t0, &a[2]);
        // b's last packet (number 1) contradicts a's last (number 2)
        m.handle_datagram(t0, &b[1]);
        assert!(!m.is_done());
        m.handle_datagram(t0, &b[0]);
        let o = m.take_result().unwrap().unwrap();
        assert_eq!(o.details.info, info(30));
        assert_eq!(o.datagrams, 2);
    }

    #[test]
    fn reassembly_errors_end_the_query_after_the_restarts() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(opts(Handshake::Never), Timing::default(), SID, t0);
        sent(&mut m, t0);
        let mut p = packets(&info(1), SID).remove(0);
        p[14] = 0x7f | 0x80; // packet 127, the last
        let mut m2 = QueryMachine::new(
            QueryOptions {
                limits: ReassemblyLimits {
                    max_packets: 64,
                    ..ReassemblyLimits::default()
                },
                ..opts(Handshake::Never)
            },
            Timing::default(),
            SID,
            t0,
        );
        sent(&mut m2, t0);
        m2.handle_datagram(t0, &p);
        let e = m2.take_result().unwrap().unwrap_err();
        assert_eq!(
            e,
            QueryError::BadReassembly {
                protocol: Protocol::Gamespy3,
                message: ReassemblyError::BadNumber { number: 127 }.to_string()
            }
        );
        assert_eq!(
            e.to_string(),
            "gamespy3: bad multi-datagram reply: packet number 127 out of range"
        );
        // within the limit, a packet 127 is just held
        m.handle_datagram(t0, &p);
        assert!(!m.is_done());
    }

    #[test]
    fn sub_protocols_a_and_c() {
        let t0 = Instant::now();
        let kind = InfoKind::Basic {
            server: true,
            players: true,
            teams: false,
        };
        let mut m = QueryMachine::new(
            QueryOptions {
                kind: kind.clone(),
                ..opts(Handshake::Never)
            },
            Timing::default(),
            SID,
            t0,
        );
        assert_eq!(
            sent(&mut m, t0),
            [Request::Info {
                session_id: SID,
                challenge: None,
                kind
            }]
        );
        let mut p = packets(&info(2), SID).remove(0);
        p[14] = 0; // no last flag: sub-protocol A is one packet anyway
        m.handle_datagram(t0, &p);
        assert_eq!(m.take_result().unwrap().unwrap().details.info, info(2));

        let kind = InfoKind::Keys(vec![8, 1, 0x09]);
        let mut m = QueryMachine::new(
            QueryOptions {
                kind: kind.clone(),
                ..opts(Handshake::Always)
            },
            Timing::default(),
            SID,
            t0,
        );
        sent(&mut m, t0);
        m.handle_datagram(t0, &challenge("77"));
        assert_eq!(
            sent(&mut m, t0),
            [Request::Info {
                session_id: SID,
                challenge: Some(77),
                kind
            }]
        );
        let mut r = Vec::new();
        encode_keys_reply(SID, &["84", "My Server", "?"], &mut r);
        m.handle_datagram(t0, &r);
        let o = m.take_result().unwrap().unwrap();
        let pairs: Vec<(&str, &str)> = o
            .details
            .info
            .server
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("numplayers", "84"),
                ("hostname", "My Server"),
                ("header_09", "?")
            ]
        );
        assert_eq!(o.status.host_name.as_deref(), Some("My Server"));
        assert_eq!(o.status.player_count, Some(84));
    }

    #[test]
    fn events_and_warnings_are_capped() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(opts(Handshake::Never), Timing::default(), SID, t0);
        sent(&mut m, t0);
        for _ in 0..1000 {
            m.handle_datagram(t0, b"\x00garbage");
            m.handle_datagram(t0, &challenge("1"));
        }
        // a reply whose strings are Latin-1, many times over
        let mut i = info(0);
        i.server.clear();
        let mut p = packets(&i, SID).remove(0);
        p.truncate(15);
        p.push(0);
        for k in 0..200 {
            p.extend_from_slice(format!("k{k}\0\u{e9}\0").as_bytes());
            let n = p.len();
            p[n - 3] = 0xe9;
            p.remove(n - 2);
        }
        p.push(0);
        m.handle_datagram(t0, &p);
        let o = m.take_result().unwrap().unwrap();
        assert_eq!(o.events.len(), MAX_EVENTS);
        assert!(o.warnings.len() <= MAX_WARNINGS);
        assert_eq!(o.details.info.server.len(), 200);
    }
}

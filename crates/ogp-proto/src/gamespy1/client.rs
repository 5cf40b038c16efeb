//! The GameSpy v1 client as a state machine: one query (`\status\` by default), its
//! reply reassembled from however many datagrams it came in, with retries and timeouts
//! from the shared client core, and no I/O. Drive it through [`QueryDriver`].
//!
//! * Parts are taken in any order; duplicates are dropped; the reply is complete when the
//!   `\final\` part and every part before it have come ([`Reassembler`]).
//! * A resent query makes the server answer again under a new query id. Parts of another
//!   id than the held ones replace them when nothing was taken since our last send (the
//!   old reply is kept aside, in case the new one fares worse), at most
//!   [`MAX_RESTARTS`] times; otherwise they are dropped.
//! * When the retries or the deadline run out with parts missing, the query still
//!   succeeds with what came: the status of the parts held (the most complete reply
//!   seen), a warning such as `incomplete reply: part 2 of 3 lost`, and
//!   [`Details::missing_parts`] / [`Details::complete`]. Without any part, it fails as
//!   no answer (or with the last datagram that did not decode).
//! * `\echo\`: the reply must carry our text back (by default eight hexadecimal digits of
//!   the query's random id), else it is dropped. GameSpy v1 has no other challenge: a
//!   `\status\` answer cannot be told from a spoofed one.
//!
//! What a hostile server can make a query hold is bounded by [`QueryOptions::packet`],
//! [`QueryOptions::limits`] and the two reassemblers (current and kept aside).

use std::time::Instant;

use super::mapping::reply_to_status;
use super::reassembly::{Pushed, Reassembler, ReassemblyLimits};
use super::wire::{decode_packet_with, PacketLimits, Query};
use crate::client_core::{exchange_driver, Event, Exchange, QueryDriver, Timeout, Timing};
use crate::text::Text;

/// How often a query replaces held parts by a newer reply's.
pub const MAX_RESTARTS: u32 = 8;

/// GameSpy v1's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// What to ask (default [`Query::Status`]). An [`Query::Echo`] with empty text sends
    /// the query id in hexadecimal.
    pub query: Query,
    /// Send `xserverquery` as the argument (default false; gamedig and opengsq send it,
    /// GameQ does not).
    pub xserverquery: bool,
    /// Caps on one datagram.
    pub packet: PacketLimits,
    /// Caps on one reply.
    pub limits: ReassemblyLimits,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            query: Query::Status,
            xserverquery: false,
            packet: PacketLimits::default(),
            limits: ReassemblyLimits::default(),
        }
    }
}

impl QueryOptions {
    /// The default options asking `query`.
    pub fn asking(query: Query) -> Self {
        Self {
            query,
            ..Self::default()
        }
    }
}

/// What a GameSpy v1 answer says beyond the status.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Details {
    /// The reply's pairs as sent, in part order (without `queryid` and `final`).
    pub pairs: Vec<(Text, Text)>,
    /// The server's query id of the reply.
    pub query_id: Option<u32>,
    /// Parts received.
    pub parts: usize,
    /// The final part's number, when it came.
    pub final_part: Option<u16>,
    /// Whether every part came.
    pub complete: bool,
    /// Parts known lost (see [`Reassembler::missing`]).
    pub missing_parts: Vec<u16>,
    /// The echo text sent (an `\echo\` query).
    pub echo: Option<Text>,
    /// Players dropped as listed twice (the same `keyhash`).
    pub duplicates: usize,
}

/// One GameSpy v1 query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    opts: QueryOptions,
    echo: Option<Text>,
    reasm: Reassembler,
    /// A reply replaced by a newer one, kept in case nothing better comes.
    aside: Option<Reassembler>,
    /// A part was taken since the last send.
    grew_since_send: bool,
    restarts: u32,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now`; `id` (pick it at random) makes the echo text.
    pub fn new(opts: QueryOptions, timing: Timing, id: u32, now: Instant) -> Self {
        let mut opts = opts;
        let echo = match &mut opts.query {
            Query::Echo(t) => {
                if t.is_empty() {
                    *t = compact_str::format_compact!("{id:08x}");
                }
                Some(t.clone())
            }
            _ => None,
        };
        Self {
            echo,
            reasm: Reassembler::with_limits(opts.limits),
            aside: None,
            grew_since_send: false,
            restarts: 0,
            x: Exchange::new(super::PROTOCOL, &timing, now),
            opts,
        }
    }

    /// The query this machine sends.
    pub fn query(&self) -> &Query {
        &self.opts.query
    }

    fn finish(&mut self, mut r: Reassembler) {
        let complete = r.is_complete();
        let missing = r.missing();
        let note = r.missing_note();
        let (query_id, parts, final_part, bytes) =
            (r.query_id(), r.held(), r.final_part(), r.bytes());
        let pairs = r.take_pairs();
        let mapped = reply_to_status(&pairs);
        if let Some(note) = note {
            self.x.warn([format!("incomplete reply: {note}")]);
        }
        if mapped.duplicates > 0 {
            self.x.warn([format!(
                "{} player{} listed twice (same keyhash) dropped",
                mapped.duplicates,
                if mapped.duplicates == 1 { "" } else { "s" }
            )]);
        }
        self.x.event(Event::Reply {
            what: self.opts.query.word(),
            bytes,
            datagrams: parts,
        });
        let details = Details {
            pairs,
            query_id,
            parts,
            final_part,
            complete,
            missing_parts: missing,
            echo: self.echo.clone(),
            duplicates: mapped.duplicates,
        };
        self.x.succeed(mapped.status, details);
    }

    /// Out of time: the most complete reply held, or no answer.
    fn give_up(&mut self) {
        let current = std::mem::take(&mut self.reasm);
        let best = match self.aside.take() {
            Some(a) if a.held() > current.held() => a,
            _ => current,
        };
        if best.is_empty() {
            self.x.give_up(Some(self.opts.query.word()));
        } else {
            self.finish(best);
        }
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    exchange_driver!();

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        if !self.x.due_datagram(d) {
            return false;
        }
        self.opts.query.encode(self.opts.xserverquery, d);
        self.x
            .sent_query(now, d, self.opts.query.word(), None, None);
        self.grew_since_send = false;
        true
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.x.handle_timeout(now) == Some(Timeout::GiveUp) {
            self.give_up();
        }
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        if datagram.first() != Some(&b'\\') {
            return self.x.dropped(bytes, "not a GameSpy v1 reply");
        }
        // Cube 2 servers answer any datagram after an echo of it (`\status\` and
        // binary): a reply that starts with our request is not a GameSpy v1 reply
        // (but for `\echo\`, whose reply rightly does).
        let mut request = Vec::new();
        self.opts.query.encode(self.opts.xserverquery, &mut request);
        if !matches!(self.opts.query, Query::Echo(_)) && datagram.starts_with(&request) {
            return self.x.dropped(bytes, "an echo of our request");
        }
        let decoded = match decode_packet_with(datagram, &self.opts.packet) {
            Ok(d) => d,
            Err(e) => {
                self.x.heard(now);
                self.x.malformed(e);
                return self.x.dropped(bytes, "does not decode");
            }
        };
        if let Some(ours) = &self.echo {
            if decoded.packet.get("echo") != Some(ours.as_str()) {
                return self.x.dropped(bytes, "echo text not ours");
            }
        }
        let number = decoded.packet.query_id.map(|q| q.part);
        let warnings = decoded.warnings;
        let mut pushed = self.reasm.push(decoded.packet.clone(), bytes);
        if pushed == Ok(Pushed::OtherQuery) {
            if self.grew_since_send || self.restarts >= MAX_RESTARTS {
                return self.x.dropped(bytes, "a part of another reply");
            }
            self.restarts += 1;
            let old =
                std::mem::replace(&mut self.reasm, Reassembler::with_limits(self.opts.limits));
            if self.aside.as_ref().is_none_or(|a| old.held() >= a.held()) {
                self.aside = Some(old);
            }
            self.x
                .event(Event::Note("a newer reply replaces the parts held"));
            pushed = self.reasm.push(decoded.packet, bytes);
        }
        match pushed {
            Ok(Pushed::Duplicate) => self.x.dropped(bytes, "a part already held"),
            Ok(Pushed::OtherQuery) => self.x.dropped(bytes, "a part of another reply"),
            Err(e) => {
                self.x.heard(now);
                self.x.fail_reassembly(e);
            }
            Ok(p @ (Pushed::Complete | Pushed::Incomplete)) => {
                self.grew_since_send = true;
                self.x.warn(warnings);
                self.x.received(1, bytes);
                self.x.ping(now);
                self.x.event(Event::Part {
                    bytes,
                    number: number.and_then(|n| u8::try_from(n.saturating_sub(1)).ok()),
                    count: self.reasm.final_part().and_then(|f| u8::try_from(f).ok()),
                });
                if p == Pushed::Complete {
                    let r = std::mem::take(&mut self.reasm);
                    self.finish(r);
                }
            }
        }
    }
}

crate::client_core::start_query!(QueryOptions);

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn run(m: &mut QueryMachine, now: Instant, replies: &[&[u8]]) {
        assert!(m.poll_transmit(now).is_some());
        for r in replies {
            m.handle_datagram(now, r);
        }
    }

    #[test]
    fn an_echo_of_the_request_is_not_a_reply() {
        // A Cube 2 server's answer to `\status\`: the request, then its ping reply.
        let now = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, now);
        run(
            &mut m,
            now,
            &[b"\\status\\\x00\x05\x80\x04\x01\x00\x00\x05\x00\x00S\x00"],
        );
        assert!(m.take_result().is_none());
        assert_eq!(m.last_dropped(), Some("an echo of our request"));
    }

    #[test]
    fn parts_in_any_order_make_one_status() {
        let now = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, now);
        let first = m.poll_transmit(now).unwrap();
        assert_eq!(first, b"\\status\\");
        m.handle_datagram(now, b"\\player_1\\b\\queryid\\4.2\\final\\");
        assert!(m.take_result().is_none());
        m.handle_datagram(now, b"\\player_1\\b\\queryid\\4.2\\final\\");
        m.handle_datagram(now, b"\\hostname\\h\\player_0\\a\\queryid\\4.1");
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.host_name.as_deref(), Some("h"));
        assert_eq!(a.status.players.as_ref().unwrap().len(), 2);
        assert_eq!(a.datagrams, 2);
        assert!(a.details.complete);
        assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    }

    #[test]
    fn a_lost_part_gives_a_partial_status_with_a_warning() {
        let t0 = Instant::now();
        let timing = Timing::default()
            .attempt_timeout(Duration::from_millis(100))
            .retries(1)
            .alive_retries(1);
        let mut m = QueryMachine::new(QueryOptions::default(), timing, 1, t0);
        run(
            &mut m,
            t0,
            &[
                b"\\hostname\\h\\queryid\\4.1",
                b"\\player_2\\c\\queryid\\4.3\\final\\",
            ],
        );
        let mut now = t0;
        for _ in 0..10 {
            let Some(t) = m.poll_timeout() else { break };
            now = t;
            m.handle_timeout(now);
            while m.poll_transmit(now).is_some() {}
        }
        let a = m.take_result().unwrap().unwrap();
        assert!(!a.details.complete);
        assert_eq!(a.details.missing_parts, [2]);
        assert_eq!(a.warnings, ["incomplete reply: part 2 of 3 lost"]);
        assert_eq!(a.status.host_name.as_deref(), Some("h"));
        assert!(now - t0 < Duration::from_secs(5));
    }

    #[test]
    fn a_resent_query_starts_over_with_the_new_reply() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        run(&mut m, t0, &[b"\\hostname\\old\\queryid\\4.1"]);
        // A part of another reply while the held one grows: dropped.
        m.handle_datagram(t0, b"\\hostname\\x\\final\\\\queryid\\9.1");
        assert_eq!(m.last_dropped(), Some("a part of another reply"));
        let t1 = m.poll_timeout().unwrap();
        m.handle_timeout(t1);
        assert!(m.poll_transmit(t1).is_some());
        m.handle_datagram(t1, b"\\hostname\\new\\final\\\\queryid\\5.1");
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.host_name.as_deref(), Some("new"));
        assert_eq!(a.details.query_id, Some(5));
    }

    #[test]
    fn echo_must_carry_our_text() {
        let now = Instant::now();
        let opts = QueryOptions::asking(Query::Echo(Text::default()));
        let mut m = QueryMachine::new(opts, Timing::default(), 0xabcd, now);
        assert_eq!(m.poll_transmit(now).unwrap(), b"\\echo\\0000abcd");
        m.handle_datagram(now, b"\\echo\\spoofed\\final\\");
        assert_eq!(m.last_dropped(), Some("echo text not ours"));
        m.handle_datagram(now, b"\\echo\\0000abcd\\final\\");
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.details.echo.as_deref(), Some("0000abcd"));
    }

    #[test]
    fn silence_and_garbage_are_errors() {
        let t0 = Instant::now();
        let timing = Timing::default()
            .attempt_timeout(Duration::from_millis(100))
            .retries(1);
        let mut m = QueryMachine::new(QueryOptions::default(), timing, 1, t0);
        run(
            &mut m,
            t0,
            &[b"\xff\xff\xff\xffinfoResponse\n", b"\\queryid\\x"],
        );
        while let Some(t) = m.poll_timeout() {
            m.handle_timeout(t);
            while m.poll_transmit(t).is_some() {}
        }
        let e = m.take_result().unwrap().unwrap_err();
        assert_eq!(e.kind(), "malformed");
        let mut m = QueryMachine::new(QueryOptions::default(), timing, 1, t0);
        run(&mut m, t0, &[b"\\a\\b\\queryid\\1.17"]);
        let e = m.take_result().unwrap().unwrap_err();
        assert!(e.to_string().contains("past our limit of 16 parts"), "{e}");
    }
}

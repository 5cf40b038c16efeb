//! The BeamMP client as a stream state machine on the shared core: no I/O, time passed
//! in.
//!
//! Once connected it writes `I` and reads one reply ([`wire::frame`](super::wire::frame)):
//! a length and that many bytes of JSON, or (older servers) a form-encoded body that ends
//! when the server closes. The core holds at most the length and [`MAX_BODY`] bytes: a
//! larger length is an error at once, an endless unframed body an error at the cap. A
//! length of 0 is a rejection (the server does not share its information). A server that
//! drips its bytes or stays silent meets the core's read and total timers.

use std::time::Instant;

use super::wire::{decode_info, frame, to_status, Info, MAX_BODY, REQUEST};
use crate::client_core::{Rejection, Timing};
use crate::client_http::Listed;
use crate::client_stream::Stream;
use crate::protocol::Protocol;

/// BeamMP's default game port.
pub const DEFAULT_PORT: u16 = 30814;

const WAITING_FOR: &str = "the server information";

/// BeamMP's own settings of one query (none yet; the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {}

/// What a BeamMP answer says beyond the status.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Details {
    /// The fields as sent.
    pub info: Info,
    /// Whether the reply had its length first (current servers) or ended at the close.
    pub framed: bool,
    /// Names `playerslist` held (more than the players kept when over the cap).
    pub players_listed: Option<usize>,
}

/// One BeamMP query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    s: Stream<Details>,
}

impl QueryMachine {
    /// A query starting at `now` (the request carries no id).
    pub fn new(_opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        Self {
            s: Stream::new(Protocol::Beammp, &timing, now, MAX_BODY.saturating_add(4)),
        }
    }

    fn parse(&mut self, now: Instant) {
        if self.s.is_done() {
            return;
        }
        let r = self.s.input();
        let f = match frame(&r, self.s.is_closed()) {
            Ok(Some(f)) => f,
            Ok(None) => return,
            Err(e) => return self.s.x.fail_malformed(e),
        };
        let base = r.offset().saturating_add(f.header);
        let body = r.peek_rest().get(f.header..f.header.saturating_add(f.len));
        let parsed = (f.len > 0).then(|| decode_info(body.unwrap_or_default(), base));
        self.s
            .took_reply(f.header.saturating_add(f.len), WAITING_FOR);
        match parsed {
            None => self.s.x.reject(Rejection::Error {
                code: 0,
                meaning: "an empty reply: the server does not share its information (InformationPacket = false)".to_owned(),
            }),
            Some(Err(e)) => self.s.x.fail_malformed(e),
            Some(Ok(info)) => {
                let mut warnings = Vec::new();
                let names = info.names();
                let listed = Listed::of(names.as_ref(), "playerslist", &mut warnings);
                let status = to_status(&info);
                let details = Details {
                    info,
                    framed: f.header > 0,
                    players_listed: listed.players_listed,
                };
                self.s.finish(now, status, details, &warnings);
            }
        }
    }

    /// The connection is up: the request goes out.
    fn connected(&mut self, now: Instant) {
        self.s.open_with(now, &REQUEST, "I", WAITING_FOR);
    }

    /// The server closed: an old server's body ends here; else the reply is cut.
    fn closed(&mut self, now: Instant) {
        self.parse(now);
        if !self.s.is_done() {
            self.s.fail_truncated(WAITING_FOR);
        }
    }
}

crate::client_stream::stream_driver!(QueryMachine, Details, |m: &mut QueryMachine, now| m
    .closed(now));

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use crate::client_core::{QueryDriver, StreamEvent};
    use crate::client_stream::testing::{connect, drip_to_the_end};

    use super::*;
    use crate::beammp::wire::tests::{framed, JSON};

    fn connected(t0: Instant) -> QueryMachine {
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        assert_eq!(connect(&mut m, t0, DEFAULT_PORT), REQUEST);
        m
    }

    #[test]
    fn a_framed_reply_byte_by_byte_and_a_form_at_the_close() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        for b in &framed(JSON.as_bytes()) {
            assert!(m.take_result().is_none());
            m.handle_stream(t0, StreamEvent::Received(std::slice::from_ref(b)));
        }
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Beammp);
        assert_eq!(a.status.slot_max, Some(8));
        assert!(a.details.framed);
        assert_eq!(a.details.players_listed, Some(2));
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(b"name=old&players=1"));
        assert!(m.take_result().is_none());
        m.handle_stream(t0, StreamEvent::Closed);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.host_name.as_deref(), Some("old"));
        assert!(!a.details.framed);
    }

    #[test]
    fn empty_lying_and_endless_replies() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(&[0, 0, 0, 0]));
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("InformationPacket"), "{e}");
        // A length that says more than comes, then the close: truncated.
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(&[200, 0, 0, 0, b'{']));
        m.handle_stream(t0, StreamEvent::Closed);
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("server information"), "{e}");
        // An unframed body that never ends: an error at the cap.
        let mut m = connected(t0);
        let flood = vec![b'a'; 64 * 1024];
        for _ in 0..10 {
            m.handle_stream(t0, StreamEvent::Received(&flood));
        }
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("malformed"), "{e}");
        assert!(m.stream_buffer(0) <= MAX_BODY + 4);
    }

    #[test]
    fn a_drip_meets_the_total_timer() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(&[0xff, 0xff, 0, 0]));
        drip_to_the_end(&mut m, t0, b' ', MAX_BODY + 4);
    }
}

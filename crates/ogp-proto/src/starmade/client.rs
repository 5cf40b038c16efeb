//! The StarMade client as a stream state machine on the shared core: no I/O, time passed
//! in.
//!
//! Once connected it writes the 13-byte request and reads one reply: its header says its
//! size (at most [`MAX_BODY`] after the header, else an error at once), and the core
//! holds no more than that. A server that drips its bytes or stays silent meets the
//! core's read and total timers.

use std::time::Instant;

use super::wire::{decode_reply, reply_size, to_status, Reply, HEADER, MAX_BODY, REQUEST};
use crate::client_core::Timing;
use crate::client_stream::Stream;
use crate::protocol::Protocol;

/// StarMade's default port.
pub const DEFAULT_PORT: u16 = 4242;

const WAITING_FOR: &str = "the server info";

/// StarMade's own settings of one query (none yet; the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {}

/// What a StarMade answer says beyond the status: the reply as sent.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Details {
    /// The reply.
    pub reply: Reply,
}

/// One StarMade query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    s: Stream<Details>,
}

impl QueryMachine {
    /// A query starting at `now` (the request carries no id).
    pub fn new(_opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        Self {
            s: Stream::new(Protocol::Starmade, &timing, now, HEADER + MAX_BODY),
        }
    }

    fn parse(&mut self, now: Instant) {
        if self.s.is_done() {
            return;
        }
        let r = self.s.input();
        let size = match reply_size(&r) {
            Ok(Some(n)) if r.remaining() >= n => n,
            Ok(_) => return,
            Err(e) => return self.s.x.fail_malformed(e),
        };
        let mut all = self.s.input();
        let parsed = all
            .sub(size, "Reply")
            .and_then(|mut reply| decode_reply(&mut reply));
        self.s.took_reply(size, WAITING_FOR);
        match parsed {
            Err(e) => self.s.x.fail_malformed(e),
            Ok(reply) => {
                let mut warnings = Vec::new();
                let said = usize::try_from(reply.count).unwrap_or(usize::MAX);
                if said != reply.values.len() {
                    warnings.push(format!(
                        "the reply says {said} values and has {}",
                        reply.values.len()
                    ));
                }
                let status = to_status(&reply);
                self.s.finish(now, status, Details { reply }, &warnings);
            }
        }
    }

    /// The connection is up: the request goes out.
    fn connected(&mut self, now: Instant) {
        self.s.open_with(now, &REQUEST, "server info", WAITING_FOR);
    }

    /// What a close now truncates.
    fn awaited(&self) -> &'static str {
        WAITING_FOR
    }
}

crate::client_stream::stream_driver!(QueryMachine, Details);

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use crate::client_core::{QueryDriver, StreamEvent};
    use crate::client_stream::testing::{connect, drip_to_the_end};

    use super::*;
    use crate::starmade::wire::tests::sample;

    fn connected(t0: Instant) -> QueryMachine {
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        assert_eq!(connect(&mut m, t0, DEFAULT_PORT), REQUEST);
        m
    }

    #[test]
    fn a_reply_byte_by_byte_is_the_answer() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        for b in &sample() {
            assert!(m.take_result().is_none());
            m.handle_stream(t0, StreamEvent::Received(std::slice::from_ref(b)));
        }
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Starmade);
        assert_eq!(a.status.slot_max, Some(32));
        assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    }

    #[test]
    fn lying_sizes_and_closes() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(&[0, 0, 0, 50, 0, 0]));
        m.handle_stream(t0, StreamEvent::Closed);
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("server info"), "{e}");
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(&[0xff, 0xff, 0xff, 0xff]));
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("Length"), "{e}");
        // A drip meets the total timer.
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(&[0, 0, 0xff, 0]));
        drip_to_the_end(&mut m, t0, 0, HEADER + MAX_BODY);
    }
}

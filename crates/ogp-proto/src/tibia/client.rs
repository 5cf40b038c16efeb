//! The Open Tibia status client as a stream state machine on the shared core: no I/O, time
//! passed in.
//!
//! Once connected it writes the request and reads the XML document up to its root's end
//! (`</tsqp>`, for a server that keeps the connection open) or the server's close.
//! The core holds at most [`MAX_BODY`] bytes: an endless reply is an error at the cap. A
//! close before any byte is what a server says to an address that asked within its
//! `statusTimeout`: an error that says so. A server that drips its bytes or stays silent
//! meets the core's read and total timers.

use std::time::Instant;

use super::wire::{decode_info, to_status, Info, END, MAX_BODY, REQUEST};
use crate::client_core::{Rejection, Timing};
use crate::client_stream::Stream;
use crate::protocol::Protocol;

/// The login port, where Open Tibia servers answer the status protocol.
pub const DEFAULT_PORT: u16 = 7171;

const WAITING_FOR: &str = "the status document";

/// The Open Tibia status query's own settings (none yet; the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {}

/// What an Open Tibia answer says beyond the status: the document's values as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Details {
    /// The values.
    pub info: Info,
}

/// One Open Tibia status query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    s: Stream<Details>,
    /// Bytes already searched for the root's end.
    scanned: usize,
}

impl QueryMachine {
    /// A query starting at `now` (the request carries no id).
    pub fn new(_opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        Self {
            s: Stream::new(Protocol::Tibia, &timing, now, MAX_BODY),
            scanned: 0,
        }
    }

    /// Reads the document once it is whole: up to the first `</tsqp>` (searched once per
    /// byte however the bytes come), or what came before the server closed.
    fn parse(&mut self, now: Instant) {
        if self.s.is_done() {
            return;
        }
        let r = self.s.input();
        let bytes = r.peek_rest();
        let from = self.scanned.saturating_sub(END.len().saturating_sub(1));
        let found = bytes
            .get(from..)
            .and_then(|tail| tail.windows(END.len()).position(|w| w == END))
            .map(|i| from.saturating_add(i).saturating_add(END.len()));
        self.scanned = bytes.len();
        let len = match found {
            Some(end) => end,
            None if self.s.is_closed() => bytes.len(),
            None => return,
        };
        let base = r.offset();
        let parsed = decode_info(bytes.get(..len).unwrap_or_default(), base);
        self.s.took_reply(len, WAITING_FOR);
        match parsed {
            Err(e) => self.s.x.fail_malformed(e),
            Ok(info) => {
                let status = to_status(&info);
                self.s.finish(now, status, Details { info }, &[]);
            }
        }
    }

    /// The connection is up: the request goes out.
    fn connected(&mut self, now: Instant) {
        self.s.open_with(now, &REQUEST, "info", WAITING_FOR);
    }

    /// The server closed: the document ends here; nothing at all is the server's
    /// refusal of a second query within its `statusTimeout`.
    fn closed(&mut self, now: Instant) {
        if self.s.input().remaining() == 0 {
            return self.s.x.reject(Rejection::Error {
                code: 0,
                meaning: "the server closed without answering (it answers one status query per address every statusTimeout, 5 s by default)".to_owned(),
            });
        }
        self.parse(now);
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
    use crate::tibia::wire::tests::TFS;

    fn connected(t0: Instant) -> QueryMachine {
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        assert_eq!(connect(&mut m, t0, DEFAULT_PORT), REQUEST);
        m
    }

    #[test]
    fn the_document_byte_by_byte_ends_at_its_root_or_the_close() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        for b in TFS.as_bytes() {
            assert!(m.take_result().is_none());
            m.handle_stream(t0, StreamEvent::Received(std::slice::from_ref(b)));
        }
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Tibia);
        assert_eq!(a.status.player_count, Some(42));
        // a document without its end tag read at the close: cut, an error
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(&TFS.as_bytes()[..100]));
        assert!(m.take_result().is_none());
        m.handle_stream(t0, StreamEvent::Closed);
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("malformed") && e.contains("ends"), "{e}");
    }

    #[test]
    fn a_close_without_a_byte_says_why() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Closed);
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("statusTimeout"), "{e}");
    }

    #[test]
    fn an_endless_reply_stops_at_the_cap_and_a_drip_at_the_timer() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        let flood = vec![b'a'; 16 * 1024];
        for _ in 0..10 {
            m.handle_stream(t0, StreamEvent::Received(&flood));
        }
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("malformed") || e.contains("large"), "{e}");
        assert!(m.stream_buffer(0) <= MAX_BODY);
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(b"<tsqp>"));
        drip_to_the_end(&mut m, t0, b' ', MAX_BODY);
    }
}

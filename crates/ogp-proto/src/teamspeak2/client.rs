//! The TeamSpeak 2 query client as a stream state machine on the shared core: no I/O,
//! time passed in.
//!
//! It reads the banner (`[TS]`: anything else first is not a TeamSpeak 2 query port),
//! then writes, each after the previous `OK`: `sel VOICE`, `si`, `pl`, and `cl` with
//! `quit` after it (the server answers `cl`, then closes): 5 commands. A `sel` or `si`
//! answered `ERROR…` is a rejection with the server's text; a refused `pl` or `cl`
//! leaves its part out. The core holds one line at most
//! ([`MAX_RECORD`]); [`MAX_ROWS`] players and
//! channels and [`MAX_INFO`] `si` lines are kept, and an answer of more than
//! [`MAX_LINES`] lines is an error. Silence meets the read and total timers.

use std::time::Instant;

use super::mapping::to_status;
use super::wire::{classify, Line, Table};
use crate::client_core::{Event, Rejection, Timing};
use crate::client_stream::Stream;
use crate::error::DecodeError;
use crate::model::Text;
use crate::protocol::Protocol;
use crate::teamspeak3::wire::{next_record, text, MAX_RECORD};

/// The TeamSpeak 2 query port (TCP).
pub const DEFAULT_PORT: u16 = 51234;
/// The default voice port (UDP), what `sel` names.
pub const DEFAULT_VOICE_PORT: u16 = 8767;
/// The most players and channels kept.
pub const MAX_ROWS: usize = 4_096;
/// The most `si` lines kept.
pub const MAX_INFO: usize = 512;
/// The most lines one answer may have.
pub const MAX_LINES: usize = 100_000;

/// TeamSpeak 2's own settings of one query.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// The virtual server's voice port (`sel`); 8767 by default.
    pub voice_port: u16,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            voice_port: DEFAULT_VOICE_PORT,
        }
    }
}

/// What a TeamSpeak 2 answer says beyond the status: the answers as read.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Details {
    /// `si`'s lines.
    pub info: Vec<(Text, Text)>,
    /// `pl`.
    pub players: Table,
    /// `cl`.
    pub channels: Table,
    /// How long the connection took, in milliseconds.
    pub connect_ms: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Banner,
    Sel,
    Info,
    Players,
    Channels,
}

impl Step {
    const fn what(self) -> &'static str {
        match self {
            Self::Banner => "the [TS] banner",
            Self::Sel => "sel",
            Self::Info => "si",
            Self::Players => "pl",
            Self::Channels => "cl",
        }
    }
}

/// One TeamSpeak 2 query of one virtual server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    s: Stream<Details>,
    opts: QueryOptions,
    step: Step,
    connected: bool,
    lines: usize,
    info: Vec<(Text, Text)>,
    players: Table,
    channels: Table,
}

impl QueryMachine {
    /// A query starting at `now`.
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        let mut s = Stream::new(Protocol::Teamspeak2, &timing, now, MAX_RECORD);
        s.wait_for(now, Step::Banner.what());
        Self {
            s,
            opts,
            step: Step::Banner,
            connected: false,
            lines: 0,
            info: Vec::new(),
            players: Table::default(),
            channels: Table::default(),
        }
    }

    fn ask(&mut self, now: Instant, step: Step) {
        self.step = step;
        self.lines = 0;
        let command = match step {
            Step::Banner => return,
            Step::Sel => format!("sel {}\n", self.opts.voice_port),
            Step::Info => "si\n".to_owned(),
            Step::Players => "pl\n".to_owned(),
            Step::Channels => "cl\nquit\n".to_owned(),
        };
        self.s
            .write(now, command.as_bytes(), step.what(), step.what());
    }

    fn parse(&mut self, now: Instant) {
        while !self.s.is_done() {
            let input = self.s.input();
            let (bytes, base) = (input.peek_rest(), input.offset());
            if self.step == Step::Banner && !b"[TS]".starts_with(bytes.get(..4).unwrap_or(bytes)) {
                return self.s.x.fail_malformed(DecodeError::invalid(
                    base,
                    "Banner",
                    "not [TS]: not a TeamSpeak 2 query port",
                ));
            }
            let (line, n) = match next_record(bytes, base, true) {
                Ok(Some((t, _, n))) => (text(t).0, n),
                Ok(None) => return,
                Err(e) => return self.s.x.fail_malformed(e),
            };
            self.s.consume(n);
            if self.step == Step::Banner {
                if line != "[TS]" {
                    return self.s.x.fail_malformed(DecodeError::invalid(
                        base,
                        "Banner",
                        "not [TS]: not a TeamSpeak 2 query port",
                    ));
                }
                self.s.x.event(Event::Note("[TS] banner"));
                self.s.x.ping(now);
                self.ask(now, Step::Sel);
                continue;
            }
            match classify(&line) {
                Line::Ok => {
                    self.answer_event(n);
                    self.next(now);
                }
                Line::Error(why) => {
                    self.answer_event(n);
                    self.refused(now, &why);
                }
                Line::Data => {
                    self.lines += 1;
                    if self.lines > MAX_LINES {
                        return self.s.x.fail_malformed(DecodeError::invalid(
                            base,
                            "Line",
                            "more lines than one answer may have",
                        ));
                    }
                    self.data(&line);
                }
            }
        }
    }

    fn answer_event(&mut self, bytes: usize) {
        self.s.x.received(1, 0);
        self.s.x.event(Event::Reply {
            what: self.step.what(),
            bytes,
            datagrams: 1,
        });
        self.s.answered();
    }

    fn data(&mut self, line: &str) {
        match self.step {
            Step::Info => {
                if self.info.len() < MAX_INFO {
                    let (k, v) = line.split_once('=').unwrap_or((line, ""));
                    self.info.push((k.into(), v.into()));
                }
            }
            Step::Players => self.players.push_line(line, MAX_ROWS),
            Step::Channels => self.channels.push_line(line, MAX_ROWS),
            Step::Banner | Step::Sel => {}
        }
    }

    fn next(&mut self, now: Instant) {
        match self.step {
            Step::Banner => {}
            Step::Sel => self.ask(now, Step::Info),
            Step::Info => self.ask(now, Step::Players),
            Step::Players => self.ask(now, Step::Channels),
            Step::Channels => self.finish(),
        }
    }

    fn refused(&mut self, now: Instant, why: &str) {
        match self.step {
            Step::Sel | Step::Info => self.s.x.reject(Rejection::Error {
                code: 0,
                meaning: format!("{}: {why}", self.step.what()),
            }),
            Step::Players | Step::Channels => {
                self.s.x.event(Event::Note("pl or cl refused"));
                self.next(now);
            }
            Step::Banner => {}
        }
    }

    fn finish(&mut self) {
        if self.players.listed > self.players.rows.len()
            || self.channels.listed > self.channels.rows.len()
        {
            self.s
                .x
                .warn(["more players or channels than we keep; the rest left out"]);
        }
        let status = to_status(&self.info, &self.players, &self.channels);
        let connect_ms = self.s.connect_ms;
        self.s.x.succeed(
            status,
            Details {
                info: std::mem::take(&mut self.info),
                players: std::mem::take(&mut self.players),
                channels: std::mem::take(&mut self.channels),
                connect_ms,
            },
        );
    }

    /// The connection is up.
    fn connected(&mut self, now: Instant) {
        if !self.connected {
            self.connected = true;
            self.s.connected(now);
            self.s.wait_for(now, Step::Banner.what());
        }
    }

    /// What a close now truncates.
    fn awaited(&self) -> &'static str {
        self.step.what()
    }
}

crate::client_stream::stream_driver!(QueryMachine, Details);

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use crate::client_core::{QueryDriver, StreamEvent};

    use super::*;

    fn connected(t0: Instant) -> QueryMachine {
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let peer: SocketAddr = "127.0.0.1:51234".parse().unwrap();
        m.handle_stream(t0, StreamEvent::Connected(peer));
        m
    }

    fn sent(m: &mut QueryMachine, t: Instant) -> String {
        let mut out = Vec::new();
        assert!(m.poll_transmit_into(t, &mut out), "nothing to send");
        String::from_utf8(out).unwrap()
    }

    /// A server that sends the whole conversation before it is asked (bytes a fuzz
    /// seed replays): the machine parses every answer and ends, and a machine that has
    /// ended hands out no more writes (its `quit` would go to a finished query; ogp-net
    /// once failed such a query as "stopped without a result").
    #[test]
    fn an_answer_before_the_question_ends_with_no_write_left() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        let all: &[u8] =
            b"[TS]\r\nOK\r\nserver_name=Funk\r\nOK\r\np_id\tnick\r\nOK\r\nid\tname\r\nOK\r\n";
        m.handle_stream(t0, StreamEvent::Received(all));
        let mut out = Vec::new();
        assert!(
            !m.poll_transmit_into(t0, &mut out),
            "wrote {out:?} after the end"
        );
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.host_name.as_deref(), Some("Funk"));
    }

    #[test]
    fn a_whole_query_byte_by_byte() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        let script: [(&str, &[u8]); 5] = [
            ("", b"[TS]\r\n"),
            ("sel 8767\n", b"OK\r\n"),
            (
                "si\n",
                b"server_name=Funk\r\nserver_maxusers=250\r\nserver_currentusers=1\r\nOK\r\n",
            ),
            (
                "pl\n",
                b"p_id\tc_id\tping\tnick\r\n6\t1\t2\t\"A B\"\t\r\nOK\r\n",
            ),
            ("cl\nquit\n", b"id\tname\r\n1\t\"Lobby\"\r\nOK\r\n"),
        ];
        for (want, reply) in script {
            if !want.is_empty() {
                assert_eq!(sent(&mut m, t0), want);
            }
            for b in reply {
                m.handle_stream(t0, StreamEvent::Received(std::slice::from_ref(b)));
            }
        }
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.host_name.as_deref(), Some("Funk"));
        let p = &a.status.players.as_ref().unwrap()[0];
        assert_eq!(p.name.as_deref(), Some("A B"));
        assert_eq!(p.ping, Some(2));
        assert_eq!(p.extra.get("channel").map(Text::as_str), Some("Lobby"));
    }

    #[test]
    fn garbage_errors_and_floods() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(b"TS3\n\r"));
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("[TS]"), "{e}");
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(b"[TS]\r\nERROR, invalid id\r\n"));
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("invalid id"), "{e}");
        // Endless lines without OK: bounded.
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(b"[TS]\r\nOK\r\n"));
        let lines = b"k=v\r\n".repeat(10_000);
        let mut n = 0;
        while m.take_result().is_none() {
            m.handle_stream(t0, StreamEvent::Received(&lines));
            n += 1;
            assert!(n <= 11, "never stopped");
        }
        // One endless line: capped.
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(b"[TS]\r\nOK\r\n"));
        m.handle_stream(t0, StreamEvent::Received(&vec![b'x'; 2 * MAX_RECORD]));
        assert!(m.take_result().unwrap().is_err());
        assert!(m.stream_buffer(0) <= MAX_RECORD);
    }
}

//! The Frostbite query as a stream state machine on the shared core: no I/O, time
//! passed in.
//!
//! Once connected it writes `serverInfo` (sequence 1), then, each after the previous
//! answer, `version` (2) and `listPlayers all` (3), as gamedig and GameQ do; no login.
//! `serverInfo` must answer `OK`; a `version` or `listPlayers` that answers an error (a
//! server that wants a login for them) leaves its part out. Packets the server
//! originates (events: sequence bit 31) are skipped, at most [`MAX_SKIPPED`] of them; a
//! response to a request we did not send is malformed. The core holds at most one packet
//! ([`MAX_PACKET`]); a size past it, a word longer than its packet or a word count
//! the packet cannot hold fail at once with the offset. A server that drips its bytes or
//! stays silent meets the core's read and total timers.

use std::time::Instant;

use super::mapping::to_status;
use super::wire::{
    decode_packet, decode_players, decode_server_info, decode_version, request, split_packet,
    status_word, Packet, PlayerTable, ServerInfo, MAX_PACKET,
};
use crate::client_core::{Event, Rejection, Timing};
use crate::client_stream::Stream;
use crate::error::DecodeError;
use crate::model::Text;
use crate::protocol::Protocol;

/// The query port of Battlefield 3, 4, Hardline and 1 (game port 25200 + 22000).
pub const DEFAULT_PORT: u16 = 47200;
/// The most event packets skipped while an answer is awaited.
pub const MAX_SKIPPED: u32 = 64;

/// Battlefield's own settings of one query.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// Also ask `listPlayers all` (default true).
    pub players: bool,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self { players: true }
    }
}

/// What a Battlefield answer says beyond the status: each answer as decoded.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Details {
    /// `serverInfo`.
    pub info: ServerInfo,
    /// `version`: the game and its build, when answered.
    pub version: (Option<Text>, Option<Text>),
    /// `listPlayers all`, when answered.
    pub players: Option<PlayerTable>,
    /// How long the connection took, in milliseconds.
    pub connect_ms: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Info = 1,
    Version = 2,
    Players = 3,
}

impl Step {
    const fn what(self) -> &'static str {
        match self {
            Self::Info => "serverInfo",
            Self::Version => "version",
            Self::Players => "listPlayers",
        }
    }
}

/// One Battlefield query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    s: Stream<Details>,
    opts: QueryOptions,
    step: Option<Step>,
    skipped: u32,
    info: Option<ServerInfo>,
    version: (Option<Text>, Option<Text>),
}

impl QueryMachine {
    /// A query starting at `now`.
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        Self {
            s: Stream::new(Protocol::Battlefield, &timing, now, MAX_PACKET),
            opts,
            step: None,
            skipped: 0,
            info: None,
            version: (None, None),
        }
    }

    fn ask(&mut self, now: Instant, step: Step) {
        self.step = Some(step);
        let words: &[&str] = match step {
            Step::Info => &["serverInfo"],
            Step::Version => &["version"],
            Step::Players => &["listPlayers", "all"],
        };
        let bytes = request(step as u32, words);
        self.s.write(now, &bytes, step.what(), step.what());
    }

    /// Parses every whole packet held.
    fn parse(&mut self, now: Instant) {
        while !self.s.is_done() {
            let size = match split_packet(&self.s.input()) {
                Ok(Some(n)) => n,
                Ok(None) => return,
                Err(e) => return self.s.x.fail_malformed(e),
            };
            let mut all = self.s.input();
            let decoded = all
                .sub(size, "Packet")
                .and_then(|mut p| decode_packet(&mut p));
            let at = self.s.input().offset();
            self.s.consume(size);
            match decoded {
                Err(e) => return self.s.x.fail_malformed(e),
                Ok(p) if !p.is_response() || p.from_server() => {
                    self.skipped += 1;
                    self.s
                        .x
                        .dropped(size, "an event packet the server originated");
                    if self.skipped > MAX_SKIPPED {
                        return self.s.x.fail_malformed(DecodeError::invalid(
                            at,
                            "Sequence",
                            "too many event packets while an answer was awaited",
                        ));
                    }
                }
                Ok(p) => self.answer(now, at, size, p),
            }
        }
    }

    fn answer(&mut self, now: Instant, at: usize, size: usize, p: Packet) {
        let Some(step) = self.step.filter(|s| *s as u32 == p.number()) else {
            return self.s.x.fail_malformed(DecodeError::invalid(
                at,
                "Sequence",
                "an answer to a request we did not send",
            ));
        };
        self.s.x.received(1, 0);
        self.s.x.event(Event::Reply {
            what: step.what(),
            bytes: size,
            datagrams: 1,
        });
        self.s.answered();
        match step {
            Step::Info => {
                if let Some(word) = status_word(&p.words) {
                    return self.s.x.reject(Rejection::Error {
                        code: 0,
                        meaning: format!("serverInfo answered {:?}", truncate(word)),
                    });
                }
                match decode_server_info(&p.words) {
                    Ok(info) => {
                        self.s.x.ping(now);
                        self.info = Some(info);
                        self.ask(now, Step::Version);
                    }
                    Err(e) => self.s.x.fail_malformed(e),
                }
            }
            Step::Version => {
                if status_word(&p.words).is_none() {
                    self.version = decode_version(&p.words);
                } else {
                    self.s.x.event(Event::Note("version not answered"));
                }
                if self.opts.players {
                    self.ask(now, Step::Players);
                } else {
                    self.finish(None);
                }
            }
            Step::Players => {
                if status_word(&p.words).is_some() {
                    self.s.x.event(Event::Note("listPlayers not answered"));
                    return self.finish(None);
                }
                match decode_players(&p.words) {
                    Ok(t) => self.finish(Some(t)),
                    Err(e) => self.s.x.fail_malformed(e),
                }
            }
        }
    }

    fn finish(&mut self, players: Option<PlayerTable>) {
        let Some(info) = self.info.take() else {
            return;
        };
        if let Some(t) = &players {
            if usize::try_from(t.announced).unwrap_or(usize::MAX) > t.rows.len() {
                self.s
                    .x
                    .warn(["listPlayers: more players than we keep; the rest left out"]);
            }
        }
        let version = std::mem::take(&mut self.version);
        let status = to_status(
            &info,
            (version.0.as_deref(), version.1.as_deref()),
            players.as_ref(),
        );
        let connect_ms = self.s.connect_ms;
        self.s.x.succeed(
            status,
            Details {
                info,
                version,
                players,
                connect_ms,
            },
        );
    }

    /// The connection is up.
    fn connected(&mut self, now: Instant) {
        if self.step.is_none() {
            self.s.connected(now);
            self.ask(now, Step::Info);
        }
    }

    /// What a close now truncates.
    fn awaited(&self) -> &'static str {
        self.step.map_or("serverInfo", Step::what)
    }
}

/// At most 64 characters of a server's word, for an error.
fn truncate(word: &str) -> String {
    word.chars().take(64).collect()
}

crate::client_stream::stream_driver!(QueryMachine, Details);

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use crate::client_core::{QueryDriver, StreamEvent};
    use std::time::Duration;

    use super::*;
    use crate::battlefield::wire::{encode, response, FROM_SERVER};

    const INFO: [&str; 18] = [
        "OK",
        "srv",
        "1",
        "16",
        "RushLarge0",
        "MP_001",
        "0",
        "2",
        "2",
        "168",
        "2277",
        "0",
        "",
        "false",
        "false",
        "true",
        "100",
        "50",
    ];

    fn connected(t0: Instant) -> QueryMachine {
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let peer: SocketAddr = "127.0.0.1:47200".parse().unwrap();
        m.handle_stream(t0, StreamEvent::Connected(peer));
        let mut out = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut out));
        assert_eq!(out, request(1, &["serverInfo"]));
        m
    }

    fn feed(m: &mut QueryMachine, t: Instant, bytes: &[u8]) {
        m.handle_stream(t, StreamEvent::Received(bytes));
    }

    #[test]
    fn three_answers_byte_by_byte_and_an_event_between() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        let mut all = Vec::new();
        encode(FROM_SERVER | 9, &["player.onJoin", "x"], &mut all);
        all.extend(response(1, &INFO));
        for b in &all {
            feed(&mut m, t0, std::slice::from_ref(b));
        }
        let mut out = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut out));
        assert_eq!(out, request(2, &["version"]));
        feed(&mut m, t0, &response(2, &["OK", "BF3", "1149977"]));
        assert!(m.poll_transmit_into(t0, &mut out));
        assert_eq!(out, request(3, &["listPlayers", "all"]));
        feed(
            &mut m,
            t0,
            &response(3, &["OK", "2", "name", "teamId", "1", "bob", "1"]),
        );
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Battlefield);
        assert_eq!(a.status.game_name.as_deref(), Some("Battlefield 3"));
        assert_eq!(a.status.players.as_ref().unwrap().len(), 1);
        assert!(m.close_due());
    }

    #[test]
    fn an_error_word_is_a_rejection_and_players_may_be_refused() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        feed(&mut m, t0, &response(1, &["LogInRequired"]));
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("LogInRequired"), "{e}");
        let mut m = connected(t0);
        feed(&mut m, t0, &response(1, &INFO));
        feed(&mut m, t0, &response(2, &["UnknownCommand"]));
        feed(&mut m, t0, &response(3, &["LogInRequired"]));
        let a = m.take_result().unwrap().unwrap();
        assert!(a.status.players.is_none());
        assert_eq!(a.status.game_name.as_deref(), Some("Battlefield"));
    }

    #[test]
    fn a_stray_answer_and_an_event_flood_are_errors() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        feed(&mut m, t0, &response(5, &INFO));
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("did not send"), "{e}");
        let mut m = connected(t0);
        let mut flood = Vec::new();
        for _ in 0..=MAX_SKIPPED {
            encode(FROM_SERVER, &["event"], &mut flood);
        }
        feed(&mut m, t0, &flood);
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("event packets"), "{e}");
    }

    /// A size past the cap fails at once; a lying size then a close is truncated.
    #[test]
    fn lying_sizes() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        let mut p = response(1, &INFO);
        p[4..8].copy_from_slice(&(1u32 << 30).to_le_bytes());
        feed(&mut m, t0, &p[..8]);
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("PacketSize at byte 4"), "{e}");
        let mut m = connected(t0);
        let mut p = response(1, &INFO);
        p[4..8].copy_from_slice(&60_000u32.to_le_bytes());
        feed(&mut m, t0, &p);
        assert!(m.take_result().is_none());
        m.handle_stream(t0, StreamEvent::Closed);
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("serverInfo"), "{e}");
    }

    /// A server that drips a byte short of each read timeout meets the total timer.
    #[test]
    fn a_drip_meets_the_total_timer() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        let mut p = response(1, &INFO);
        p[4..8].copy_from_slice(&60_000u32.to_le_bytes());
        feed(&mut m, t0, &p);
        let mut now = t0;
        let mut drips = 0;
        while m.take_result().is_none() {
            let due = m.poll_timeout().unwrap();
            let next = now + Duration::from_millis(500);
            if next < due {
                now = next;
                feed(&mut m, now, b"x");
                drips += 1;
                assert!(m.stream_buffer(0) <= MAX_PACKET);
            } else {
                now = due;
                m.handle_timeout(now);
            }
            assert!(drips < 10_000);
        }
        assert!(now.duration_since(t0) <= Timing::default().total_timeout);
    }
}

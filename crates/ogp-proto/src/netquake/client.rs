//! The NetQuake client as a state machine: the server info, then each connected
//! player by its rank (0 to the count the server gave, less one), then the rules one by
//! one (each asked by the name of the one before), with the shared client core's
//! retries and timeouts, and no I/O. Drive it through [`QueryDriver`].
//!
//! Quake servers answer a server-info request naming `QUAKE`, Hexen II servers one
//! naming `HEXENII`: the attempts alternate between the two (one datagram per attempt,
//! so auto-detection's one probe a round holds), and the reply's version says which
//! game answered. A player or rule step that gets no reply ends the query with what
//! came (a warning names the step); only a silent server-info step fails it. Caps: at
//! most [`MAX_PLAYERS`] player and [`MAX_RULES`] rule steps, and the rules end when a
//! server names the same rule again.

use std::time::Instant;

use super::mapping::to_status;
use super::wire::{control_op, decode_reply, Game, PlayerInfo, Reply, Request, ServerInfo};
use crate::client_core::{exchange_driver, Event, Exchange, QueryDriver, Timeout, Timing};
use crate::protocol::Protocol;

/// Most player steps (the engines have at most 16 slots, their descendants more).
pub const MAX_PLAYERS: usize = 64;
/// Most rule steps.
pub const MAX_RULES: usize = 256;

/// NetQuake's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// Ask for each player (default true).
    pub players: bool,
    /// Ask for the rules (default true).
    pub rules: bool,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            players: true,
            rules: true,
        }
    }
}

/// What a NetQuake answer says beyond the status: the replies as sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Details {
    /// The server reply.
    pub server: ServerInfo,
    /// The player replies.
    pub players: Vec<PlayerInfo>,
    /// The rules, in order.
    pub rules: Vec<(Vec<u8>, Vec<u8>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Server,
    Player(u8),
    Rule(Vec<u8>),
}

/// One NetQuake query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    opts: QueryOptions,
    step: Option<Step>,
    server_sends: u32,
    info: Option<ServerInfo>,
    players: Vec<PlayerInfo>,
    rules: Vec<(Vec<u8>, Vec<u8>)>,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now` (the protocol has no id to carry).
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        Self {
            opts,
            step: Some(Step::Server),
            server_sends: 0,
            info: None,
            players: Vec::new(),
            rules: Vec::new(),
            x: Exchange::new(Protocol::Netquake, &timing, now),
        }
    }

    fn request(&self) -> Option<Request> {
        Some(match self.step.as_ref()? {
            Step::Server if self.server_sends % 2 == 1 => Request::ServerInfo(Game::HexenII),
            Step::Server => Request::ServerInfo(Game::Quake),
            Step::Player(n) => Request::PlayerInfo(*n),
            Step::Rule(prev) => Request::RuleInfo(prev.clone()),
        })
    }

    /// The step after a player step (or the server step, `next` 0).
    fn after_players(&self, next: usize) -> Option<Step> {
        let count = self.info.as_ref().map_or(0, |i| usize::from(i.players));
        if self.opts.players && next < count.min(MAX_PLAYERS) {
            return u8::try_from(next).ok().map(Step::Player);
        }
        self.opts.rules.then(|| Step::Rule(Vec::new()))
    }

    fn go(&mut self, step: Option<Step>) {
        self.x.timer.restart_retries();
        match step {
            Some(s) => {
                self.step = Some(s);
                self.x.timer.resend_now();
            }
            None => self.complete(),
        }
    }

    fn complete(&mut self) {
        self.step = None;
        let Some(info) = self.info.take() else {
            return self.x.give_up(Some("server info"));
        };
        let status = to_status(&info, &self.players, &self.rules);
        let details = Details {
            server: info,
            players: std::mem::take(&mut self.players),
            rules: std::mem::take(&mut self.rules),
        };
        self.x.succeed(status, details);
    }

    fn what(&self) -> &'static str {
        match self.step {
            Some(Step::Server) | None => "server info",
            Some(Step::Player(_)) => "player info",
            Some(Step::Rule(_)) => "rule info",
        }
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    exchange_driver!();

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        let Some(req) = self.request() else {
            return false;
        };
        let what = self.what();
        let sent = self.x.transmit_query(now, d, what, None, |d| req.encode(d));
        if sent && self.step == Some(Step::Server) {
            self.server_sends = self.server_sends.saturating_add(1);
        }
        sent
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.step.is_none() {
            return;
        }
        if self.x.handle_timeout(now) == Some(Timeout::GiveUp) {
            if self.info.is_some() {
                self.x.warn([format!(
                    "no reply to {}: the answer ends there",
                    self.what()
                )]);
            }
            self.complete();
        }
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        let Some(step) = self.step.clone() else {
            return;
        };
        let bytes = datagram.len();
        if control_op(datagram).is_none() {
            return self.x.dropped(bytes, "not a NetQuake control reply");
        }
        let reply = match decode_reply(datagram) {
            Ok(r) => r,
            Err(e) => {
                self.x.heard(now);
                self.x.malformed(e);
                return self.x.dropped(bytes, "does not decode");
            }
        };
        let next = match (&step, reply) {
            (Step::Server, Reply::ServerInfo(s)) => {
                self.info = Some(s);
                self.after_players(0)
            }
            (Step::Player(n), Reply::PlayerInfo(p)) if p.slot == *n => {
                self.players.push(p);
                self.after_players(usize::from(*n) + 1)
            }
            (Step::Rule(prev), Reply::RuleInfo(Some((k, v)))) => {
                if k.is_empty() || &k == prev || self.rules.iter().any(|(r, _)| *r == k) {
                    self.x
                        .warn(["the server named a rule again: the rules end there"]);
                    None
                } else if self.rules.len() >= MAX_RULES {
                    self.x
                        .warn([format!("more than {MAX_RULES} rules: the rest left out")]);
                    None
                } else {
                    self.rules.push((k.clone(), v));
                    Some(Step::Rule(k))
                }
            }
            (Step::Rule(_), Reply::RuleInfo(None)) => None,
            _ => return self.x.dropped(bytes, "not the reply to the current step"),
        };
        self.x.received(1, bytes);
        if step == Step::Server {
            self.x.ping(now);
        } else {
            self.x.heard(now);
        }
        self.x.event(Event::Reply {
            what: self.what(),
            bytes,
            datagrams: 1,
        });
        self.go(next);
    }
}

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_core::QueryError;
    use crate::netquake::wire::decode_request;

    /// A server of `players` named P0… and two rules, answering as Quake (version 3) or
    /// Hexen II (4, only to HEXENII).
    fn server(version: u8, players: u8, req: &[u8]) -> Option<Vec<u8>> {
        let reply = match decode_request(req).ok()? {
            Request::ServerInfo(g) if g.version() == version => Reply::ServerInfo(ServerInfo {
                address: b"LOCAL".to_vec(),
                hostname: b"\xc1rena".to_vec(),
                map: b"e1m1".to_vec(),
                players,
                max_players: 8,
                version,
            }),
            Request::ServerInfo(_) => return None,
            Request::PlayerInfo(n) if n < players => Reply::PlayerInfo(PlayerInfo {
                slot: n,
                name: format!("P{n}").into_bytes(),
                colors: 0x4c,
                frags: i32::from(n),
                seconds: 60,
                address: Vec::new(),
            }),
            Request::PlayerInfo(_) => return None,
            Request::RuleInfo(prev) => Reply::RuleInfo(match prev.as_slice() {
                b"" => Some((b"sv_gravity".to_vec(), b"800".to_vec())),
                b"sv_gravity" => Some((b"teamplay".to_vec(), b"0".to_vec())),
                _ => None,
            }),
        };
        Some(reply.to_bytes())
    }

    fn run(
        version: u8,
        players: u8,
    ) -> (
        Result<crate::client_core::Answer<Details>, QueryError>,
        usize,
    ) {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let (mut t, mut sent, mut d) = (t0, 0, Vec::new());
        for _ in 0..200 {
            while m.poll_transmit_into(t, &mut d) {
                sent += 1;
                if let Some(r) = server(version, players, &d) {
                    m.handle_datagram(t, &r);
                }
            }
            if let Some(r) = m.take_result() {
                return (r, sent);
            }
            t = m.poll_timeout().unwrap_or(t);
            m.handle_timeout(t);
        }
        panic!("no end");
    }

    #[test]
    fn quake_server_players_and_rules() {
        let (a, sent) = run(3, 2);
        let a = a.unwrap();
        assert_eq!(sent, 1 + 2 + 3);
        let s = &a.status;
        assert_eq!(s.host_name.as_deref(), Some("Arena"));
        assert_eq!(s.game_name.as_deref(), Some("Quake"));
        assert_eq!((s.player_count, s.slot_max), (Some(2), Some(8)));
        let ps = s.players.as_ref().unwrap();
        assert_eq!(ps[1].name.as_deref(), Some("P1"));
        assert_eq!(ps[1].extra.get("topcolor").map(|t| t.as_str()), Some("4"));
        assert_eq!(s.rules.as_ref().unwrap().get("teamplay"), Some("0"));
    }

    #[test]
    fn hexen2_answers_the_second_attempt() {
        let (a, sent) = run(4, 0);
        let a = a.unwrap();
        assert_eq!(a.status.game_name.as_deref(), Some("Hexen II"));
        assert_eq!(sent, 2 + 3);
    }

    #[test]
    fn silence_fails_after_its_attempts() {
        let (a, sent) = run(9, 0);
        assert!(matches!(a, Err(QueryError::NoAnswer { .. })), "{a:?}");
        assert_eq!(sent, 3);
    }
}

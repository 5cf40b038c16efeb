//! The SA-MP / open.mp client as a state machine, with retries and timeouts from the
//! shared client core and no I/O. Drive it through [`QueryDriver`].
//!
//! Information (`i`) first; once it is in, the rules (`r`), the players (`c`, or `d`
//! with [`QueryOptions::detailed`]) and open.mp's extra information (`o`) are asked
//! together, and each attempt resends those not answered yet. The players are not
//! asked when the information counts more than 100 (servers send nothing then) nor
//! none. SA-MP servers do not answer `o`: once the others are in, it gets
//! [`QueryOptions::settle`] more (default 100 ms). A rules or players step that gets
//! no reply after the retries is left out with a warning; the query fails only without
//! the information.
//!
//! A reply is taken only when its 11-byte header is the one we sent (the address and
//! port in it are [`QueryOptions::server`]'s, `0.0.0.0:0` by default: servers copy
//! the header without checking it).
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | `i`'s host name |
//! | `game_type` | `i`'s game mode |
//! | `password` | `i`'s password byte |
//! | `player_count`, `slot_max` | `i`'s players and max players |
//! | `game_name` | `open.mp` when `o` is answered, else `SA-MP` |
//! | `game_version` | the `version` rule |
//! | `map` | the `mapname` rule |
//! | `rules` | `r`'s pairs in wire order, then `language` (from `i`) and open.mp's `discord`, `banner_light`, `banner_dark`, `logo` when not empty |
//! | `players` | `name`, `score`; `id` and `ping` from `d` |

use std::net::SocketAddrV4;
use std::time::{Duration, Instant};

use super::wire::{decode_reply_with, opcode, Body, Extra, Info, Request, SampPlayer};
use crate::client_core::{Event, Exchange, QueryDriver, Timeout, Timing};
use crate::model::{MapInfo, Player, Rules, Text};
use crate::protocol::Protocol;
use crate::{Charset, Status};

/// SA-MP's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// How to read strings that are not UTF-8 (default [`Charset::Auto`]: as Latin-1,
    /// with a warning; Russian servers send Windows-1251).
    pub charset: Charset,
    /// The address written in the requests' header (default `0.0.0.0:0`).
    pub server: Option<SocketAddrV4>,
    /// Ask for the rules (default true).
    pub rules: bool,
    /// Ask for the players (default true).
    pub players: bool,
    /// Ask `d` (ids and pings; SA-MP only) instead of `c` (default false).
    pub detailed: bool,
    /// Ask open.mp's `o` (default true).
    pub openmp: bool,
    /// How long `o` may come after the others (default 100 ms).
    pub settle: Duration,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            charset: Charset::Auto,
            server: None,
            rules: true,
            players: true,
            detailed: false,
            openmp: true,
            settle: Duration::from_millis(100),
        }
    }
}

/// What a SA-MP answer says beyond the status: the replies as decoded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Details {
    /// The information.
    pub info: Info,
    /// The rules, as sent.
    pub rules: Option<Vec<(Text, Text)>>,
    /// The players, as sent.
    pub players: Option<Vec<SampPlayer>>,
    /// open.mp's extra information.
    pub extra: Option<Extra>,
}

/// The status the replies describe (see the module's table).
pub fn to_status(d: &Details) -> Status {
    let i = &d.info;
    let rule = |k: &str| {
        d.rules
            .as_ref()?
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(k))
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let mut rules = d.rules.clone().unwrap_or_default();
    let mut add = |k: &str, v: &Text| {
        if !v.is_empty() {
            rules.push((k.into(), v.clone()));
        }
    };
    add("language", &i.language);
    if let Some(e) = &d.extra {
        add("discord", &e.discord);
        add("banner_light", &e.light_banner);
        add("banner_dark", &e.dark_banner);
        if let Some(l) = &e.logo {
            add("logo", l);
        }
    }
    Status {
        host_name: Some(i.host_name.clone()),
        game_type: (!i.game_mode.is_empty()).then(|| i.game_mode.clone()),
        password: Some(i.password != 0),
        player_count: Some(u32::from(i.players)),
        slot_max: Some(u32::from(i.max_players)),
        game_name: Some(match d.extra {
            Some(_) => "open.mp".into(),
            None => "SA-MP".into(),
        }),
        game_version: rule("version"),
        map: rule("mapname").map(MapInfo::named),
        rules: (!rules.is_empty()).then_some(Rules(rules)),
        players: d.players.as_ref().map(|ps| {
            ps.iter()
                .map(|p| Player {
                    name: Some(p.name.clone()),
                    score: Some(p.score),
                    ping: p.ping,
                    id: p.id.map(u32::from),
                    ..Player::default()
                })
                .collect()
        }),
        ..Status::default()
    }
}

/// One SA-MP query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    opts: QueryOptions,
    /// The opcodes asked and not answered yet (after the information).
    waiting: Vec<u8>,
    /// How many of `waiting` this attempt has sent.
    burst: usize,
    got_info: bool,
    settle_at: Option<Instant>,
    d: Details,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now` (the protocol has no id: the header is the check).
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        Self {
            opts,
            waiting: Vec::new(),
            burst: 0,
            got_info: false,
            settle_at: None,
            d: Details::default(),
            x: Exchange::new(Protocol::Samp, &timing, now),
        }
    }

    fn request(&self, op: u8) -> Request {
        let (addr, port) = self
            .opts
            .server
            .map_or(([0; 4], 0), |s| (s.ip().octets(), s.port()));
        Request {
            addr,
            port,
            opcode: op,
        }
    }

    fn word(op: u8) -> &'static str {
        match op {
            opcode::INFO => "information (i)",
            opcode::RULES => "rules (r)",
            opcode::CLIENTS => "players (c)",
            opcode::DETAILED => "players (d)",
            opcode::OPENMP => "open.mp information (o)",
            _ => "ping (p)",
        }
    }

    fn required_left(&self) -> bool {
        self.waiting.iter().any(|&o| o != opcode::OPENMP)
    }

    /// After a reply: done, waiting for `o` a little, or still waiting.
    fn check(&mut self, now: Instant) {
        if self.waiting.is_empty() {
            return self.complete();
        }
        if !self.required_left() {
            self.x.timer.stop();
            self.settle_at = now.checked_add(self.opts.settle);
        }
    }

    fn complete(&mut self) {
        let status = to_status(&self.d);
        let details = std::mem::take(&mut self.d);
        self.x.succeed(status, details);
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    crate::client_core::exchange_driver!(results);

    fn poll_timeout(&self) -> Option<Instant> {
        let t = self.x.poll_timeout()?;
        Some(self.settle_at.map_or(t, |s| s.min(t)))
    }

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        if self.x.is_done() || self.settle_at.is_some() {
            return false;
        }
        if !self.got_info {
            let req = self.request(opcode::INFO);
            return self
                .x
                .transmit_query(now, d, Self::word(opcode::INFO), None, |d| req.encode(d));
        }
        // The rest of this attempt's burst: no timer of their own.
        if let Some(&op) = self.waiting.get(self.burst) {
            if self.burst > 0 {
                d.clear();
                self.request(op).encode(d);
                self.burst += 1;
                self.x.sent_extra(Event::Sent {
                    what: Self::word(op),
                    bytes: d.len(),
                    challenge: None,
                    id: None,
                });
                return true;
            }
        }
        let Some(&first) = self.waiting.first() else {
            return false;
        };
        let req = self.request(first);
        if !self
            .x
            .transmit_query(now, d, Self::word(first), None, |d| req.encode(d))
        {
            return false;
        }
        self.burst = 1;
        true
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.x.is_done() {
            return;
        }
        if self.settle_at.is_some_and(|s| now >= s) {
            return self.complete();
        }
        if self.x.handle_timeout(now) != Some(Timeout::GiveUp) {
            self.burst = 0;
            return;
        }
        if !self.got_info {
            return self.x.give_up(Some(Self::word(opcode::INFO)));
        }
        let missing: Vec<String> = self
            .waiting
            .iter()
            .filter(|&&o| o != opcode::OPENMP)
            .map(|&o| format!("no reply to {}", Self::word(o)))
            .collect();
        for &o in &self.waiting {
            if o != opcode::OPENMP {
                self.x.event(Event::Skipped {
                    what: Self::word(o),
                });
            }
        }
        self.x.warn(missing);
        self.complete();
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        let Some(header) = Request::of(datagram) else {
            return self.x.dropped(bytes, "not a SA-MP reply");
        };
        let asked = match self.got_info {
            false => header.opcode == opcode::INFO,
            true => self.waiting.contains(&header.opcode),
        };
        if header != self.request(header.opcode) || !asked {
            return self
                .x
                .dropped(bytes, "not a reply to a request of ours now");
        }
        let reply = match decode_reply_with(datagram, self.opts.charset) {
            Ok(r) => r,
            Err(e) => {
                self.x.heard(now);
                self.x.malformed(e);
                return self.x.dropped(bytes, "does not decode");
            }
        };
        self.x
            .took_reply(now, bytes, Self::word(header.opcode), reply.warnings.iter());
        match reply.body {
            Body::Info(info) => {
                self.got_info = true;
                let o = &self.opts;
                let players = o.players && (1..=100).contains(&info.players);
                if !players && o.players && info.players > 100 {
                    self.x.warn([format!(
                        "{} players: servers list none past 100",
                        info.players
                    )]);
                }
                let wanted = [
                    (o.rules, opcode::RULES),
                    (players && !o.detailed, opcode::CLIENTS),
                    (players && o.detailed, opcode::DETAILED),
                    (o.openmp, opcode::OPENMP),
                ];
                self.waiting = wanted.iter().filter(|w| w.0).map(|w| w.1).collect();
                if o.players && info.players == 0 {
                    self.d.players = Some(Vec::new());
                }
                self.d.info = info;
                self.x.clear_malformed();
                self.x.timer.restart_retries();
                self.x.timer.resend_now();
                self.burst = 0;
            }
            Body::Rules(r) => self.d.rules = Some(r),
            Body::Players(p) => self.d.players = Some(p),
            Body::Extra(e) => self.d.extra = Some(e),
            Body::Ping(_) => {}
        }
        self.waiting.retain(|&o| o != header.opcode);
        self.burst = self.burst.min(self.waiting.len());
        self.check(now);
    }
}

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_core::{drive_to_end, QueryError};
    use crate::samp::wire::Reply;

    /// A server answering every request it knows; `openmp`: it answers `o` too.
    fn server(req: &[u8], openmp: bool, players: u16) -> Option<Vec<u8>> {
        let header = Request::of(req)?;
        let body = match header.opcode {
            opcode::INFO => Body::Info(Info {
                password: 0,
                players,
                max_players: 50,
                host_name: "Grove \x1b[2J".into(),
                game_mode: "Freeroam".into(),
                language: "English".into(),
            }),
            opcode::RULES => Body::Rules(vec![
                ("mapname".into(), "San Andreas".into()),
                ("version".into(), "0.3.7-R2".into()),
            ]),
            opcode::CLIENTS => Body::Players(
                (0..players)
                    .map(|i| SampPlayer {
                        name: format!("p{i}").into(),
                        score: i32::from(i),
                        ..SampPlayer::default()
                    })
                    .collect(),
            ),
            opcode::OPENMP if openmp => Body::Extra(Extra {
                discord: "discord.gg/omp".into(),
                ..Extra::default()
            }),
            _ => return None,
        };
        let mut out = Vec::new();
        Reply {
            header,
            body,
            warnings: Vec::new(),
        }
        .encode(&mut out);
        Some(out)
    }

    fn run(m: &mut QueryMachine, t0: Instant, answer: impl Fn(&[u8]) -> Option<Vec<u8>>) -> usize {
        let (mut now, mut sent, mut d) = (t0, 0, Vec::new());
        for _ in 0..100 {
            while m.poll_transmit_into(now, &mut d) {
                sent += 1;
                if let Some(r) = answer(&d) {
                    m.handle_datagram(now, &r);
                }
            }
            match m.poll_timeout() {
                Some(t) => {
                    now = t;
                    m.handle_timeout(now);
                }
                None => break,
            }
        }
        sent
    }

    #[test]
    fn samp_and_openmp_servers() {
        for openmp in [false, true] {
            let t0 = Instant::now();
            let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
            // i, then r, c and o together
            assert_eq!(run(&mut m, t0, |r| server(r, openmp, 2)), 4);
            let a = m.take_result().unwrap().unwrap();
            let s = &a.status;
            assert_eq!(s.host_name.as_deref(), Some("Grove \x1b[2J"));
            assert_eq!(s.game_version.as_deref(), Some("0.3.7-R2"));
            assert_eq!(s.map.as_ref().map(|m| m.name.as_str()), Some("San Andreas"));
            assert_eq!(s.players.as_ref().map(Vec::len), Some(2));
            let name = if openmp { "open.mp" } else { "SA-MP" };
            assert_eq!(s.game_name.as_deref(), Some(name));
            assert!(a.warnings.is_empty(), "{:?}", a.warnings);
        }
    }

    #[test]
    fn silent_steps_are_left_out_and_crowds_not_asked() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        // only the information is answered: the query ends with it and warnings
        run(&mut m, t0, |r| {
            server(r, false, 3).filter(|_| r.get(10) == Some(&b'i'))
        });
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.player_count, Some(3));
        assert_eq!(a.status.players, None);
        assert_eq!(a.warnings.len(), 2, "{:?}", a.warnings);
        // 150 players: no `c` asked
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let asked = std::cell::RefCell::new(Vec::new());
        run(&mut m, t0, |r| {
            asked.borrow_mut().push(r.get(10).copied());
            server(r, true, 150)
        });
        assert!(!asked.borrow().contains(&Some(b'c')));
        assert!(m.take_result().unwrap().is_ok());
    }

    #[test]
    fn a_reply_with_another_header_is_dropped() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        let mut r = server(&d, false, 0).unwrap();
        r[4] = 9; // another address
        m.handle_datagram(t0, &r);
        // a reply to a step not asked yet
        let mut rules = d.clone();
        rules[10] = b'r';
        m.handle_datagram(t0, &server(&rules, false, 0).unwrap());
        assert_eq!(
            m.last_dropped(),
            Some("not a reply to a request of ours now")
        );
        assert!(m.take_result().is_none());
    }

    #[test]
    fn a_flooding_server_is_taken_once_per_request() {
        // every request answered 200 times, with a reply to every opcode each time
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let mut d = Vec::new();
        let mut sent = 0;
        let mut now = t0;
        for _ in 0..20 {
            while m.poll_transmit_into(now, &mut d) {
                sent += 1;
                for _ in 0..200 {
                    for op in [b'i', b'r', b'c', b'o', b'd', b'p'] {
                        let mut req = d.clone();
                        req[10] = op;
                        if let Some(r) = server(&req, true, 5) {
                            m.handle_datagram(now, &r);
                        }
                    }
                }
            }
            match m.poll_timeout() {
                Some(t) => {
                    now = t;
                    m.handle_timeout(now);
                }
                None => break,
            }
        }
        let a = m.take_result().unwrap().unwrap();
        // one of each reply taken: i, r, c, o (the flood answered r, c and o before they
        // were asked: the header carries no id, so they are taken as the replies)
        assert_eq!((sent, a.datagrams), (1, 4));
        assert_eq!(a.status.players.map(|p| p.len()), Some(5));
        assert!(now < t0 + Duration::from_secs(1));
    }

    #[test]
    fn silence_times_out() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        assert_eq!(drive_to_end(&mut m, t0, None), 3);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { .. }))
        ));
    }
}

//! The SA-MP / open.mp client as a state machine, with retries and timeouts from the
//! shared client core and no I/O. Drive it through [`QueryDriver`].
//!
//! The information (`i`) and open.mp's extra information (`o`) first, together; once
//! the information is in, the rules (`r`) and the players (`c`, or `d` with
//! [`QueryOptions::detailed`]) together, and each attempt resends those not answered
//! yet. The players are not asked when the information counts more than 100 (servers
//! send nothing then) nor none. SA-MP servers do not answer `o`; open.mp answers it
//! right behind the information, so once the rules and players asked after the
//! information are in, `o` has had more than its round trip and the query ends without
//! waiting for it. Only when `o` could not go out with the information (auto-detection
//! sends one datagram per protocol while the server is silent) does it go with the
//! rules and players and get [`QueryOptions::settle`] more (default 100 ms) after them.
//! A rules or players step that gets no reply after the retries is left out with a
//! warning; the query fails only without the information.
//!
//! VC:MP ([`crate::vcmp`]) is the same machine on [`Dialect::VCMP`]: `i`, then `c`
//! (it answers no rules, no `d`, no `o`); its version comes with the information.
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
//! | `game_name` | `open.mp` when `o` is answered, else `SA-MP` (`VC:MP` for VC:MP) |
//! | `game_version` | the `version` rule (VC:MP: the version ahead of `i`) |
//! | `map` | the `mapname` rule |
//! | `rules` | `r`'s pairs in wire order, then `language` (from `i`) and open.mp's `discord`, `banner_light`, `banner_dark`, `logo` when not empty |
//! | `players` | `name`, `score`; `id` and `ping` from `d` |

use std::net::SocketAddrV4;
use std::time::{Duration, Instant};

use super::wire::{decode_reply_as, opcode, Body, Dialect, Extra, Info, Request, SampPlayer};
use crate::client_core::{Burst, Event, Exchange, QueryDriver, Timeout, Timing};
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
    /// How long `o` may come after the others when it was asked with them, not with
    /// the information (default 100 ms).
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
        game_name: Some(match (&d.extra, &i.version) {
            (Some(_), _) => "open.mp".into(),
            (None, Some(_)) => "VC:MP".into(),
            (None, None) => "SA-MP".into(),
        }),
        game_version: i
            .version
            .clone()
            .filter(|v| !v.is_empty())
            .or_else(|| rule("version")),
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
pub type QueryMachine = Machine<false>;

/// One query of one server: SA-MP's (`VCMP` false) or VC:MP's (true, [`Dialect::VCMP`]).
#[derive(Debug, Clone)]
pub struct Machine<const VCMP: bool> {
    opts: QueryOptions,
    /// The opcodes the query needs and has no reply to yet: the information, then the
    /// rules and players (open.mp's `o` is kept apart: it is never required).
    waiting: Vec<u8>,
    /// Requests of the current attempt still to send, after its first.
    burst: Burst,
    got_info: bool,
    /// `o` is asked and has no reply yet.
    o_pending: bool,
    /// `o` goes out with the next attempt.
    o_due: bool,
    /// `o` has been sent.
    o_sent: bool,
    /// `o` went out with the attempt of `i` that was answered (the first): once the
    /// requests sent after the information are answered, `o` has had more than its
    /// round trip.
    o_early: bool,
    /// Rules or players were asked after the information came.
    asked_after_info: bool,
    settle_at: Option<Instant>,
    d: Details,
    x: Exchange<Details>,
}

impl<const VCMP: bool> Machine<VCMP> {
    /// The variant's magic and layout.
    const DIALECT: Dialect = if VCMP { Dialect::VCMP } else { Dialect::SAMP };

    /// A query starting at `now` (the protocol has no id: the header is the check).
    /// VC:MP's asks neither rules, `d` nor `o`, whatever `opts` says.
    pub fn new(mut opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        if VCMP {
            opts.rules = false;
            opts.detailed = false;
            opts.openmp = false;
        }
        let openmp = opts.openmp;
        let protocol = if VCMP { Protocol::Vcmp } else { Protocol::Samp };
        Self {
            opts,
            waiting: vec![opcode::INFO],
            burst: Burst::new(&timing),
            got_info: false,
            o_pending: openmp,
            o_due: openmp,
            o_sent: false,
            o_early: false,
            asked_after_info: false,
            settle_at: None,
            d: Details::default(),
            x: Exchange::new(protocol, &timing, now),
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

    /// Whether a reply to `op` is one we wait for now.
    fn wanted(&self, op: u8) -> bool {
        if op == opcode::OPENMP {
            return self.o_pending && self.o_sent;
        }
        self.waiting.contains(&op)
    }

    /// After a reply or a send: done, waiting for `o` a little, or still waiting.
    fn check(&mut self, now: Instant) {
        if !self.got_info || !self.waiting.is_empty() {
            return;
        }
        if !self.o_pending || (self.o_early && self.asked_after_info) {
            // `o` answered or not asked; or asked with the information, and the
            // requests sent once the information came are answered: a reply to `o`
            // (sent right behind the information's) would have come before theirs.
            return self.complete();
        }
        if self.o_sent && self.settle_at.is_none() {
            // `o` went out with the last requests: it gets a little longer.
            self.x.timer.stop();
            self.settle_at = now.checked_add(self.opts.settle);
        }
    }

    fn complete(&mut self) {
        self.burst.clear();
        let status = to_status(&self.d);
        let details = std::mem::take(&mut self.d);
        self.x.succeed(status, details);
    }

    /// Records that `o` went out at `now`.
    fn sent_o(&mut self, now: Instant) {
        self.o_due = false;
        self.o_sent = true;
        self.o_early |= !self.got_info;
        self.check(now);
    }
}

impl<const VCMP: bool> QueryDriver for Machine<VCMP> {
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
        // The rest of this attempt's burst (a request answered meanwhile is not sent;
        // `o` left behind by a stale one goes with the next attempt).
        if self.burst.take_stale(now).contains(&opcode::OPENMP) {
            self.o_due = self.o_pending;
        }
        while let Some(op) = self.burst.next(now) {
            let pending = match op {
                opcode::OPENMP => self.o_pending,
                _ => self.waiting.contains(&op),
            };
            if !pending {
                continue;
            }
            d.clear();
            self.request(op).encode_with(Self::DIALECT.request_magic, d);
            self.x.sent_extra(Event::Sent {
                what: Self::word(op),
                bytes: d.len(),
                challenge: None,
                id: None,
            });
            if op == opcode::OPENMP {
                self.sent_o(now);
            }
            return true;
        }
        // A new attempt: the first request with the timer, the others queued behind it
        // (`o` last), without allocating once the burst's room is there.
        let o = self.o_due && self.o_pending;
        let Some(first) = self
            .waiting
            .first()
            .copied()
            .or(o.then_some(opcode::OPENMP))
        else {
            return false;
        };
        let req = self.request(first);
        if !self.x.transmit_query(now, d, Self::word(first), None, |d| {
            req.encode_with(Self::DIALECT.request_magic, d)
        }) {
            return false;
        }
        let o_behind = o && first != opcode::OPENMP;
        let rest = self.waiting.iter().skip(1).copied();
        self.burst
            .start(now, rest.chain(o_behind.then_some(opcode::OPENMP)));
        if first == opcode::OPENMP {
            self.sent_o(now);
        }
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
            // A resend: the whole burst again. Before the information, `i` alone (`o`
            // went with the first attempt: a silent server costs one datagram more,
            // not one per attempt), and `o` then goes with the rules and players; after
            // it, `o` too while unanswered, unless it went with the information.
            self.burst.clear();
            if self.got_info {
                self.o_due = self.o_pending && !self.o_early;
            } else {
                self.o_due = self.o_pending && !self.o_sent;
                self.o_early = false;
            }
            return;
        }
        if !self.got_info {
            return self.x.give_up(Some(Self::word(opcode::INFO)));
        }
        let missing: Vec<String> = self
            .waiting
            .iter()
            .map(|&o| format!("no reply to {}", Self::word(o)))
            .collect();
        for &o in &self.waiting {
            self.x.event(Event::Skipped {
                what: Self::word(o),
            });
        }
        self.x.warn(missing);
        self.complete();
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        let Some(header) = Request::of_magic(datagram, Self::DIALECT.reply_magic) else {
            return self.x.dropped(bytes, "not a SA-MP reply");
        };
        if header != self.request(header.opcode) || !self.wanted(header.opcode) {
            return self
                .x
                .dropped(bytes, "not a reply to a request of ours now");
        }
        let reply = match decode_reply_as(datagram, self.opts.charset, &Self::DIALECT) {
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
                ];
                self.waiting = wanted.iter().filter(|w| w.0).map(|w| w.1).collect();
                self.asked_after_info = !self.waiting.is_empty();
                if o.players && info.players == 0 {
                    self.d.players = Some(Vec::new());
                }
                self.d.info = info;
                self.x.clear_malformed();
                self.x.timer.restart_retries();
                // `o` asked with the information is not asked again now (its reply
                // comes right behind the information's); one not sent yet goes out
                // with the next requests.
                self.o_due = self.o_pending && !self.o_early;
                self.burst.clear();
                if !self.waiting.is_empty() || self.o_due {
                    self.x.timer.resend_now();
                }
            }
            Body::Rules(r) => self.d.rules = Some(r),
            Body::Players(p) => self.d.players = Some(p),
            Body::Extra(e) => {
                self.d.extra = Some(e);
                self.o_pending = false;
            }
            Body::Ping(_) => {}
        }
        self.waiting.retain(|&o| o != header.opcode);
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
                version: None,
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

    fn run<const V: bool>(
        m: &mut Machine<V>,
        t0: Instant,
        answer: impl Fn(&[u8]) -> Option<Vec<u8>>,
    ) -> usize {
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
    fn vcmp_asks_i_then_c_with_its_magic() {
        // a VC:MP server: answers `VCMP` requests with `MP04`, `i` and `c` only
        let vcmp = |req: &[u8]| {
            let header = Request::of_magic(req, *b"VCMP")?;
            let body = match header.opcode {
                opcode::INFO => Body::Info(Info {
                    version: Some("04rel006".into()),
                    players: 2,
                    max_players: 50,
                    host_name: "Vice \x1b[2J".into(),
                    ..Info::default()
                }),
                opcode::CLIENTS => Body::Players(vec![SampPlayer {
                    name: "Tommy".into(),
                    score: 7,
                    ..SampPlayer::default()
                }]),
                _ => return None,
            };
            let mut out = Vec::new();
            let reply = Reply {
                header,
                body,
                warnings: Vec::new(),
            };
            reply.encode_as(&Dialect::VCMP, &mut out);
            Some(out)
        };
        let t0 = Instant::now();
        let asked = std::cell::RefCell::new(Vec::new());
        let mut m = Machine::<true>::new(QueryOptions::default(), Timing::default(), t0);
        assert_eq!(
            run(&mut m, t0, |r| {
                asked.borrow_mut().push(r.get(10).copied());
                vcmp(r)
            }),
            2
        );
        assert_eq!(*asked.borrow(), [Some(b'i'), Some(b'c')]);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.game_name.as_deref(), Some("VC:MP"));
        assert_eq!(a.status.game_version.as_deref(), Some("04rel006"));
        assert_eq!(a.status.players.map(|p| p.len()), Some(1));
        assert!(a.warnings.is_empty(), "{:?}", a.warnings);
        // SA-MP's replies are not taken by the VC:MP machine
        let mut m = Machine::<true>::new(QueryOptions::default(), Timing::default(), t0);
        run(&mut m, t0, |r| {
            let mut req = r.to_vec();
            req[..4].copy_from_slice(b"SAMP");
            server(&req, false, 1)
        });
        assert!(matches!(m.take_result(), Some(Err(_))));
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
        // one of each reply taken: i, r, c, o (the flood answered r and c before they
        // were asked: the header carries no id, so they are taken as the replies; `o`
        // then went out alone, the information's reply having come before it was sent)
        assert_eq!((sent, a.datagrams), (2, 4));
        assert_eq!(a.status.players.map(|p| p.len()), Some(5));
        assert!(now < t0 + Duration::from_secs(1));
    }

    /// Every datagram due at `now`, as opcodes, up to `max`.
    fn opcodes(m: &mut QueryMachine, now: Instant, max: usize) -> Vec<(u8, Vec<u8>)> {
        let mut out = Vec::new();
        let mut d = Vec::new();
        while out.len() < max && m.poll_transmit_into(now, &mut d) {
            out.push((d.get(10).copied().unwrap_or(0), d.clone()));
        }
        out
    }

    #[test]
    fn o_goes_with_the_information_and_is_not_waited_for() {
        for openmp in [false, true] {
            let t0 = Instant::now();
            let ms = Duration::from_millis;
            let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
            let first = opcodes(&mut m, t0, 10);
            let ops: Vec<u8> = first.iter().map(|(o, _)| *o).collect();
            assert_eq!(ops, b"io");
            for (_, req) in &first {
                if let Some(r) = server(req, openmp, 2) {
                    m.handle_datagram(t0 + ms(10), &r);
                }
            }
            let second = opcodes(&mut m, t0 + ms(10), 10);
            let ops: Vec<u8> = second.iter().map(|(o, _)| *o).collect();
            assert_eq!(ops, b"rc", "o is not asked again");
            for (_, req) in &second {
                m.handle_datagram(t0 + ms(20), &server(req, openmp, 2).unwrap());
            }
            // done with the rules and players: no wait for an `o` SA-MP never sends
            let a = m.take_result().unwrap().unwrap();
            let name = if openmp { "open.mp" } else { "SA-MP" };
            assert_eq!(a.status.game_name.as_deref(), Some(name));
            assert_eq!(a.status.players.map(|p| p.len()), Some(2));
            assert!(a.warnings.is_empty(), "{:?}", a.warnings);
        }
    }

    #[test]
    fn o_left_behind_by_a_round_goes_with_the_rules_and_gets_the_settle() {
        // A driver that takes one datagram a round (auto-detection while the server is
        // silent) comes back after the information's reply: the rest of that old burst
        // (`o`) does not go out alone; it goes with `r` and `c`, and then gets the
        // settle time, as `o` asked late must.
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let first = opcodes(&mut m, t0, 1);
        assert_eq!(first.len(), 1);
        let t1 = t0 + ms(80);
        m.handle_datagram(t1, &server(&first[0].1, false, 2).unwrap());
        let second = opcodes(&mut m, t1, 10);
        let ops: Vec<u8> = second.iter().map(|(o, _)| *o).collect();
        assert_eq!(ops, b"rco");
        let t2 = t1 + ms(10);
        for (_, req) in &second {
            if let Some(r) = server(req, false, 2) {
                m.handle_datagram(t2, &r);
            }
        }
        assert!(m.take_result().is_none());
        let settle = QueryOptions::default().settle;
        assert_eq!(m.poll_timeout(), Some(t2 + settle));
        m.handle_timeout(t2 + settle);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.game_name.as_deref(), Some("SA-MP"));
    }

    #[test]
    fn silence_times_out() {
        // `i` and `o`, then `i` twice more: `o` is not resent while nothing answers
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        assert_eq!(drive_to_end(&mut m, t0, None), 4);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { .. }))
        ));
    }
}

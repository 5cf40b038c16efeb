//! The Unreal 2 client as a state machine: server information (`00`), then rules
//! (`01`), then players (`02`), with retries and timeouts from the shared client core,
//! and no I/O. Drive it through [`QueryDriver`].
//!
//! Rules and players may come in several datagrams, and nothing in them says how many:
//! after the first datagram of a reply the step waits [`QueryOptions::settle`] (default
//! 100 ms) for more, each one restarting that wait, up to
//! [`DecodeLimits::max_datagrams`]. The players step ends at once when it lists as
//! many players as the information reply counted, and is not asked at all when that
//! count is 0 (servers with nobody on send no players reply). A datagram equal to one
//! already taken (the answer to a resent request) is dropped; one over a cap of ours
//! ([`DecodeLimits`]) ends its step with what came before it, and a warning.
//!
//! The protocol has no challenge nor request id: any source that sees the query can
//! answer it, as for Quake III. A step that gets no reply after its retries is left out
//! (in [`Details::missing`] and a warning) and the query goes on; the query fails only
//! when no step was answered.

use std::time::{Duration, Instant};

use super::mapping::to_status;
use super::wire::{decode_reply, header, DecodeLimits, Info, Kind, PlayerEntry, Reply, Request};
use crate::client_core::{Event, Exchange, QueryDriver, QueryError, Timeout, Timing};
use crate::error::DecodeErrorKind;
use crate::protocol::Protocol;
use crate::text::Text;

/// Unreal 2's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// Ask for the server information (default true).
    pub info: bool,
    /// Ask for the rules (default true).
    pub rules: bool,
    /// Ask for the players (default true).
    pub players: bool,
    /// How long a rules or players step waits for one more datagram (default 100 ms).
    pub settle: Duration,
    /// Caps on what replies may make us hold.
    pub limits: DecodeLimits,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            info: true,
            rules: true,
            players: true,
            settle: Duration::from_millis(100),
            limits: DecodeLimits::default(),
        }
    }
}

/// What an Unreal 2 answer says beyond the status: the replies as decoded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Details {
    /// The server information.
    pub info: Option<Info>,
    /// The rules, as sent, from every datagram of the reply.
    pub rules: Option<Vec<(Text, Text)>>,
    /// The players reply's entries (scoreboard lines with id 0 included).
    pub players: Option<Vec<PlayerEntry>>,
    /// Datagrams of each reply: information, rules, players.
    pub datagrams: [usize; 3],
    /// Steps asked for that got no reply.
    pub missing: Vec<Kind>,
}

/// One Unreal 2 query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    opts: QueryOptions,
    step: Option<Kind>,
    d: Details,
    /// Hashes of the datagrams taken in the current step.
    seen: Vec<u64>,
    /// When the current step ends unless another datagram comes.
    settle_at: Option<Instant>,
    /// When the current step gives way to the next, if one follows.
    step_deadline: Option<Instant>,
    x: Exchange<Details>,
}

/// FNV-1a of a datagram, to know a resent answer.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl QueryMachine {
    /// A query starting at `now`.
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        let mut m = Self {
            step: None,
            d: Details::default(),
            seen: Vec::new(),
            settle_at: None,
            step_deadline: None,
            x: Exchange::new(Protocol::Unreal2, &timing, now),
            opts,
        };
        m.step = m.next_step(None);
        m.share_deadline(now);
        if m.step.is_none() {
            m.x.fail(QueryError::Options {
                message: "none of server info, rules and players asked",
            });
        }
        m
    }

    fn wanted(&self, k: Kind) -> bool {
        match k {
            Kind::Info => self.opts.info,
            Kind::Rules => self.opts.rules,
            Kind::Players => self.opts.players,
        }
    }

    fn next_step(&self, after: Option<Kind>) -> Option<Kind> {
        Kind::ALL
            .into_iter()
            .filter(|k| after.is_none_or(|a| *k > a))
            .find(|k| self.wanted(*k))
    }

    /// The request of the current step.
    pub fn request(&self) -> Option<Request> {
        self.step.map(Request::new)
    }

    /// The current step's share of the time left at `now`: an equal part for it and
    /// each step after it (a silent step does not starve the next). The last step runs
    /// to the query's deadline.
    fn share_deadline(&mut self, now: Instant) {
        let left = Kind::ALL
            .into_iter()
            .filter(|k| self.step.is_some_and(|s| *k >= s) && self.wanted(*k))
            .count();
        self.step_deadline = self.x.step_share(now, u32::try_from(left).unwrap_or(1));
    }

    fn advance(&mut self, done: Kind, now: Instant) {
        self.x.timer.restart_retries();
        self.x.clear_malformed();
        self.settle_at = None;
        self.seen.clear();
        let mut next = self.next_step(Some(done));
        if next == Some(Kind::Players) && self.d.info.as_ref().is_some_and(|i| i.players == 0) {
            // Nobody on: such servers send no players reply.
            self.d.players = Some(Vec::new());
            next = None;
        }
        match next {
            Some(s) => {
                self.step = Some(s);
                self.share_deadline(now);
                self.x.timer.resend_now();
            }
            None => self.complete(),
        }
    }

    fn skipped(&mut self, step: Kind, out_of_time: bool, now: Instant) {
        self.x.event(Event::Skipped { what: step.word() });
        let mut s = Some(step);
        let mut words = Vec::new();
        while let Some(k) = s {
            self.d.missing.push(k);
            words.push(format!("no reply to {k}"));
            s = match self.next_step(Some(k)) {
                Some(Kind::Players) if self.d.info.as_ref().is_some_and(|i| i.players == 0) => {
                    self.d.players = Some(Vec::new());
                    None
                }
                next if out_of_time => next,
                _ => None,
            };
        }
        self.x.warn(words);
        if out_of_time {
            self.complete();
        } else {
            self.advance(step, now);
        }
    }

    fn complete(&mut self) {
        self.step = None;
        self.settle_at = None;
        if self.d.info.is_none() && self.d.rules.is_none() && self.d.players.is_none() {
            let step = match self.d.missing.as_slice() {
                [k] => Some(k.word()),
                [_, _, ..] => Some("server info, rules or players"),
                [] => None,
            };
            return self.x.give_up(step);
        }
        let status = to_status(
            self.d.info.as_ref(),
            self.d.rules.as_deref(),
            self.d.players.as_deref(),
        );
        let details = std::mem::take(&mut self.d);
        self.x.succeed(status, details);
    }

    /// Takes one more datagram of a rules or players reply; true when the step is done.
    fn gather(&mut self, reply: Reply) -> bool {
        let l = self.opts.limits;
        let idx = usize::from(reply.kind().byte());
        let count = self.d.datagrams.get_mut(idx);
        let n = count.map_or(0, |c| {
            *c = c.saturating_add(1);
            *c
        });
        let mut full = n >= l.max_datagrams;
        match reply {
            Reply::Rules(r) => {
                let all = self.d.rules.get_or_insert_with(Vec::new);
                let room = l.max_rules.saturating_sub(all.len());
                if r.len() > room {
                    full = true;
                    self.x
                        .warn([format!("rules past the first {} dropped", l.max_rules)]);
                }
                all.extend(r.into_iter().take(room));
            }
            Reply::Players(p) => {
                let all = self.d.players.get_or_insert_with(Vec::new);
                let room = l.max_players.saturating_sub(all.len());
                if p.len() > room {
                    full = true;
                    self.x
                        .warn([format!("players past the first {} dropped", l.max_players)]);
                }
                all.extend(p.into_iter().take(room));
                let listed = all.iter().filter(|e| e.id != 0).count();
                let counted = self.d.info.as_ref().map_or(0, |i| i.players);
                if counted > 0 && i32::try_from(listed).unwrap_or(i32::MAX) >= counted {
                    full = true;
                }
            }
            Reply::Info(i) => {
                self.d.info = Some(i);
                return true;
            }
        }
        if full && n >= l.max_datagrams {
            self.x.warn([format!(
                "more than {} datagrams in one reply: the rest dropped",
                l.max_datagrams
            )]);
        }
        full
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    fn poll_timeout(&self) -> Option<Instant> {
        let t = self.x.poll_timeout()?;
        // While gathering, the settle wait replaces the step's share.
        Some(match self.settle_at {
            Some(s) => s.min(t),
            None => self.step_deadline.map_or(t, |d| d.min(t)),
        })
    }

    crate::client_core::exchange_driver!(results);

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        let Some(step) = self.step else { return false };
        let encode = |d: &mut Vec<u8>| Request::new(step).encode(d);
        self.x.transmit_query(now, d, step.word(), None, encode)
    }

    fn handle_timeout(&mut self, now: Instant) {
        let Some(step) = self.step else { return };
        let out_of_time = now >= self.x.timer.deadline();
        if self.settle_at.is_some_and(|s| now >= s) || (self.settle_at.is_some() && out_of_time) {
            // What came is the reply (out of time while gathering: the next steps are
            // left out).
            self.advance(step, now);
            if let (Some(next), true) = (self.step, out_of_time) {
                self.skipped(next, true, now);
            }
            return;
        }
        if self.settle_at.is_none() && !out_of_time && self.step_deadline.is_some_and(|d| now >= d)
        {
            // This step's share is spent: the next one gets its own.
            return self.skipped(step, false, now);
        }
        if self.x.handle_timeout(now) == Some(Timeout::GiveUp) {
            self.skipped(step, out_of_time, now);
        }
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        let Some(step) = self.step else { return };
        let bytes = datagram.len();
        let Some((_, kind)) = header(datagram) else {
            return self.x.dropped(bytes, "not an Unreal 2 reply");
        };
        if kind != step {
            return self.x.dropped(bytes, "not the reply to the current step");
        }
        let hash = fnv(datagram);
        if self.seen.contains(&hash) {
            return self
                .x
                .dropped(bytes, "the same as a datagram already taken");
        }
        let reply = match decode_reply(datagram, &self.opts.limits) {
            Ok(r) => r,
            Err(e) => {
                self.x.heard(now);
                self.x.malformed(e);
                if let DecodeErrorKind::TooLarge { limit } = e.kind {
                    self.x.warn([format!(
                        "{step} reply of {bytes} bytes dropped: {} over our limit of {limit}",
                        e.field
                    )]);
                    self.x.dropped(bytes, "over a limit of ours");
                    // The server would send the same again: the step ends with what came.
                    let got = self.d.datagrams.get(usize::from(step.byte())) > Some(&0);
                    return match got {
                        true => self.advance(step, now),
                        false => self.skipped(step, false, now),
                    };
                }
                return self.x.dropped(bytes, "does not decode");
            }
        };
        if self.seen.len() < self.opts.limits.max_datagrams {
            self.seen.push(hash);
        }
        self.x.received(1, bytes);
        self.x.ping(now);
        self.x.event(Event::Reply {
            what: step.word(),
            bytes,
            datagrams: 1,
        });
        if self.gather(reply) {
            return self.advance(step, now);
        }
        // Wait a little for more datagrams of this reply; no resend meanwhile.
        self.x.timer.stop();
        self.settle_at = now.checked_add(self.opts.settle);
    }
}

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unreal2::wire::{encode_players, encode_rules};

    fn info(players: i32) -> Vec<u8> {
        let mut out = Vec::new();
        Info {
            version: 0x80,
            server_name: "\x1b\u{fe}@@Red name".into(),
            map: "DM-Rankin".into(),
            game_type: "xDeathMatch".into(),
            game_port: 7777,
            players,
            max_players: 16,
            tail: vec![0; 4],
            ..Info::default()
        }
        .encode(&mut out);
        out
    }

    fn run(m: &mut QueryMachine, t0: Instant, answer: impl Fn(&[u8]) -> Vec<Vec<u8>>) -> Instant {
        let mut now = t0;
        let mut d = Vec::new();
        for _ in 0..100 {
            while m.poll_transmit_into(now, &mut d) {
                for r in answer(&d) {
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
        now
    }

    #[test]
    fn three_steps_with_split_rules() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let end = run(&mut m, t0, |req| {
            let mut a = Vec::new();
            let mut b = Vec::new();
            match req.get(4) {
                Some(0) => vec![info(1)],
                Some(1) => {
                    encode_rules(0x80, &[("A".into(), "1".into())], &mut a);
                    encode_rules(0x80, &[("Mutator".into(), "M".into())], &mut b);
                    vec![a, b.clone(), b]
                }
                _ => {
                    let p = PlayerEntry {
                        id: 3,
                        name: "p".into(),
                        ping: 50,
                        ..PlayerEntry::default()
                    };
                    encode_players(0x80, &[p], &mut a);
                    vec![a]
                }
            }
        });
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.host_name.as_deref(), Some("Red name"));
        assert_eq!(
            a.status.host_name_raw.as_deref(),
            Some("\x1b\u{fe}@@Red name")
        );
        assert_eq!(
            a.details.rules.as_ref().unwrap().len(),
            2,
            "the duplicate is dropped"
        );
        assert_eq!(a.details.datagrams, [1, 2, 1]);
        assert_eq!(a.status.players.as_ref().unwrap().len(), 1);
        assert_eq!(a.status.addons.as_ref().unwrap().len(), 1);
        // one settle wait (rules), none for players: they were all there
        assert_eq!(end.duration_since(t0), Duration::from_millis(100));
    }

    #[test]
    fn an_oversized_datagram_ends_its_step_with_what_came() {
        let t0 = Instant::now();
        let mut opts = QueryOptions::default();
        opts.limits.max_rules = 2;
        let mut m = QueryMachine::new(opts, Timing::default(), t0);
        let pair = |k: &str| (Text::from(k), Text::from("v"));
        run(&mut m, t0, |req| match req.get(4) {
            Some(0) => vec![info(0)],
            _ => {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                encode_rules(0x80, &[pair("a")], &mut a);
                encode_rules(0x80, &[pair("b"), pair("c"), pair("d")], &mut b);
                vec![a, b]
            }
        });
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.details.rules.as_deref(), Some(&[pair("a")][..]));
        assert!(a.details.missing.is_empty());
        assert!(
            a.warnings.iter().any(|w| w.contains("over our limit of 2")),
            "{:?}",
            a.warnings
        );
    }

    #[test]
    fn empty_server_is_not_asked_for_players_and_silence_fails() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let asked = std::cell::Cell::new(0);
        run(&mut m, t0, |req| {
            if req.get(4) == Some(&2) {
                asked.set(asked.get() + 1);
            }
            match req.get(4) {
                Some(0) => vec![info(0)],
                _ => vec![],
            }
        });
        assert_eq!(asked.get(), 0);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.details.missing, [Kind::Rules]);
        assert_eq!(a.status.players.as_deref(), Some(&[][..]));

        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        run(&mut m, t0, |_| vec![]);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { .. }))
        ));
    }
}

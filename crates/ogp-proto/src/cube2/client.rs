//! The Cube 2 client as a state machine: the ping and, right behind it, the three
//! extinfo requests (uptime, every player's stats, team scores), with the shared client
//! core's timers, and no I/O: one round trip. Drive it through [`QueryDriver`].
//!
//! The ping carries a 32-bit id that the server echoes at the start of its reply (a
//! reply without it is dropped); each extinfo request carries the id after its own
//! bytes, echoed the same way. The player stats come as one datagram listing the client
//! numbers, then one datagram per player: the step ends when every listed player came.
//! Red Eclipse 1.6 does not answer extinfo (it ignores the requests), nor do servers of
//! other Cube 2 games: extinfo replies are kept only when the ping reply has
//! Sauerbraten's attribute layout, and requests not yet sent when the ping reply comes
//! go out only then. The extinfo requests go with the first ping only (a silent server
//! costs three datagrams more, not three per attempt); those that went unanswered, or
//! did not go out with the ping (auto-detection sends one datagram per protocol while a
//! server is silent), are asked once the ping reply is in, as before.
//!
//! Bounds: at most [`MAX_EXT_DATAGRAMS`] extinfo datagrams are taken (a server sending
//! endless player datagrams ends the step with what came, and a warning); a player
//! already taken, one the ids reply did not list or one past
//! [`super::wire::MAX_PLAYERS`] is dropped; only datagrams that add
//! something keep the query alive, so a drip of repeats cannot stretch it past its
//! retries; the whole query stays within the timing's total timeout. Extinfo replies
//! that do not come in time are left out (a warning); the ping alone is an answer.

use std::time::Instant;

use super::mapping::to_status;
use super::wire::{
    decode_ext, decode_ping, ext_request, ping_request, put_ext, put_ping, Dialect, ExtCommand,
    ExtReply, PingReply, PlayerStats, Teams, EXTINFO, MAX_PLAYERS,
};
use crate::client_core::{Burst, Event, Exchange, QueryDriver, Timeout, Timing};
use crate::protocol::Protocol;

/// Most extinfo datagrams one query takes (the ids, 128 players, uptime, teams, and
/// room for a resent round).
pub const MAX_EXT_DATAGRAMS: usize = 2 * MAX_PLAYERS + 8;

/// Cube 2's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// Ask Sauerbraten's extinfo (players, teams, uptime) after the ping (default true).
    pub extinfo: bool,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self { extinfo: true }
    }
}

/// What a Cube 2 answer says beyond the status: the replies as decoded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Details {
    /// The ping reply.
    pub ping: PingReply,
    /// Extinfo: seconds since the server started.
    pub uptime: Option<i32>,
    /// Extinfo: the client numbers the server listed.
    pub player_ids: Option<Vec<i32>>,
    /// Extinfo: the players' stats, in the order they came.
    pub players: Vec<PlayerStats>,
    /// Extinfo: the team scores.
    pub teams: Option<Teams>,
    /// Extinfo requests asked that got no (complete) answer.
    pub missing: Vec<ExtCommand>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Ping,
    Ext,
    Done,
}

/// One Cube 2 query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    opts: QueryOptions,
    id: u32,
    phase: Phase,
    d: Details,
    ext_datagrams: usize,
    /// Extinfo requests of the current attempt still to send (indices of
    /// [`ExtCommand::ALL`]).
    burst: Burst,
    /// Extinfo requests sent with the current ping attempt (bits of those indices).
    with_ping: u8,
    /// A ping has been sent.
    pinged: bool,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now`; `id` goes into every request (0 is sent as 1).
    pub fn new(opts: QueryOptions, timing: Timing, id: u32, now: Instant) -> Self {
        Self {
            opts,
            id: id.max(1),
            phase: Phase::Ping,
            d: Details::default(),
            ext_datagrams: 0,
            burst: Burst::new(&timing),
            with_ping: 0,
            pinged: false,
            x: Exchange::new(Protocol::Cube2, &timing, now),
        }
    }

    /// The ping request this query sends.
    pub fn ping_request(&self) -> Vec<u8> {
        ping_request(self.id)
    }

    fn players_done(&self) -> bool {
        self.d.player_ids.as_ref().is_some_and(|ids| {
            ids.iter()
                .all(|cn| self.d.players.iter().any(|p| p.cn == *cn))
        })
    }

    fn is_missing(&self, c: ExtCommand) -> bool {
        match c {
            ExtCommand::Uptime => self.d.uptime.is_none(),
            ExtCommand::Players => !self.players_done(),
            ExtCommand::Teams => self.d.teams.is_none(),
        }
    }

    fn missing(&self) -> Vec<ExtCommand> {
        ExtCommand::ALL
            .into_iter()
            .filter(|c| self.is_missing(*c))
            .collect()
    }

    fn complete(&mut self) {
        self.phase = Phase::Done;
        self.burst.clear();
        let mut d = std::mem::take(&mut self.d);
        let asked = self.opts.extinfo && d.ping.dialect() == Dialect::Sauerbraten;
        if !asked {
            // Whatever came to the requests sent with the ping: not Sauerbraten's.
            d.uptime = None;
            d.player_ids = None;
            d.players.clear();
            d.teams = None;
        }
        if let Some(ids) = &d.player_ids {
            d.players.retain(|p| ids.contains(&p.cn));
        }
        let players = (asked && (d.player_ids.is_some() || !d.players.is_empty()))
            .then_some(d.players.as_slice());
        let status = to_status(&d.ping, d.uptime, players, d.teams.as_ref());
        self.x.succeed(status, d);
    }

    fn take_ext(&mut self, now: Instant, datagram: &[u8]) {
        let bytes = datagram.len();
        let Some((cmd, body_at)) = ExtCommand::ALL.into_iter().find_map(|c| {
            let req = ext_request(c, self.id);
            datagram.starts_with(&req).then_some((c, req.len()))
        }) else {
            let why = if datagram.starts_with(&self.ping_request()) {
                "a repeated ping reply"
            } else {
                "not a reply to our extinfo requests"
            };
            return self.x.dropped(bytes, why);
        };
        if self.ext_datagrams >= MAX_EXT_DATAGRAMS {
            if self.phase == Phase::Ping {
                return self.x.dropped(bytes, "too many extinfo datagrams");
            }
            self.x.warn([format!(
                "more than {MAX_EXT_DATAGRAMS} extinfo datagrams: the rest dropped"
            )]);
            self.d.missing = self.missing();
            return self.complete();
        }
        self.ext_datagrams += 1;
        let reply = match decode_ext(cmd, datagram.get(body_at..).unwrap_or_default(), body_at) {
            Ok(r) => r,
            Err(e) => {
                // Before the ping reply the server's game is not known yet: no warning.
                if self.phase == Phase::Ext {
                    self.x.warn([format!("{} reply dropped: {e}", cmd.word())]);
                }
                return self.x.dropped(bytes, "does not decode");
            }
        };
        let new = match reply {
            ExtReply::Uptime(u) => self.d.uptime.replace(u).is_none(),
            ExtReply::Teams(t) => self.d.teams.replace(t).is_none(),
            ExtReply::PlayerError => self.d.player_ids.replace(Vec::new()).is_none(),
            ExtReply::PlayerIds(ids) => {
                if self.d.player_ids.is_some() {
                    false
                } else {
                    self.d.player_ids = Some(ids);
                    true
                }
            }
            ExtReply::Player(p) => {
                let listed = self
                    .d
                    .player_ids
                    .as_ref()
                    .is_none_or(|ids| ids.contains(&p.cn));
                let fresh = !self.d.players.iter().any(|q| q.cn == p.cn);
                if listed && fresh && self.d.players.len() < MAX_PLAYERS {
                    self.d.players.push(p);
                    true
                } else {
                    false
                }
            }
        };
        if !new {
            return self.x.dropped(bytes, "nothing new");
        }
        self.x.received(1, bytes);
        self.x.heard(now);
        if self.phase == Phase::Ext && self.missing().is_empty() {
            self.x.event(Event::Reply {
                what: "extinfo",
                bytes,
                datagrams: self.ext_datagrams,
            });
            self.complete();
        }
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    crate::client_core::exchange_driver!();

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        if self.phase == Phase::Done {
            return false;
        }
        // The rest of this attempt: extinfo requests right behind its first datagram.
        while let Some(i) = self.burst.next(now) {
            let Some(cmd) = ExtCommand::ALL.get(usize::from(i)).copied() else {
                continue;
            };
            if !self.is_missing(cmd) {
                continue;
            }
            d.clear();
            put_ext(d, cmd, self.id);
            if self.phase == Phase::Ping {
                self.with_ping |= 1 << i;
            }
            self.x.sent_extra(Event::Sent {
                what: cmd.word(),
                bytes: d.len(),
                challenge: None,
                id: Some(self.id),
            });
            return true;
        }
        if !self.x.due_datagram(d) {
            return false;
        }
        match self.phase {
            Phase::Ping => {
                put_ping(d, self.id);
                self.x.sent_query(now, d, "ping", None, Some(self.id));
                // The extinfo requests go with the first ping only.
                let ext = self.opts.extinfo && !self.pinged;
                self.pinged = true;
                self.with_ping = 0;
                self.burst.start(now, (0u8..3).filter(|_| ext));
            }
            _ => {
                // The missing requests as bits of their indices (no allocation).
                let mask = (0u8..)
                    .zip(ExtCommand::ALL)
                    .filter(|(_, c)| self.is_missing(*c))
                    .fold(0u8, |m, (i, _)| m | (1 << i));
                let Some((first_i, first)) = (0u8..)
                    .zip(ExtCommand::ALL)
                    .find(|(i, _)| mask & (1 << i) != 0)
                else {
                    return false;
                };
                put_ext(d, first, self.id);
                self.x.sent_query(now, d, first.word(), None, Some(self.id));
                let rest = (first_i + 1..3).filter(|i| mask & (1 << i) != 0);
                self.burst.start(now, rest);
            }
        }
        true
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.x.handle_timeout(now) != Some(Timeout::GiveUp) {
            return;
        }
        match self.phase {
            Phase::Ping => self.x.give_up(Some("ping")),
            Phase::Ext => {
                let missing = self.missing();
                for c in &missing {
                    self.x.event(Event::Skipped { what: c.word() });
                }
                self.x
                    .warn(missing.iter().map(|c| format!("no reply to {}", c.word())));
                self.d.missing = missing;
                self.complete();
            }
            Phase::Done => {}
        }
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        match self.phase {
            Phase::Done => {}
            Phase::Ext => self.take_ext(now, datagram),
            Phase::Ping => {
                let bytes = datagram.len();
                let req = self.ping_request();
                let Some(body) = datagram.strip_prefix(req.as_slice()) else {
                    // Replies to the extinfo requests sent with the ping may come first
                    // (kept for Sauerbraten only, once the ping reply says which game).
                    if self.opts.extinfo && datagram.first() == Some(&EXTINFO) {
                        return self.take_ext(now, datagram);
                    }
                    return self.x.dropped(bytes, "not the reply to our ping");
                };
                let ping = match decode_ping(body, req.len()) {
                    Ok(p) => p,
                    Err(e) => {
                        self.x.malformed(e);
                        return self.x.dropped(bytes, "does not decode");
                    }
                };
                self.x.received(1, bytes);
                self.x.ping(now);
                self.x.event(Event::Reply {
                    what: "ping",
                    bytes,
                    datagrams: 1,
                });
                let ext = self.opts.extinfo && ping.dialect() == Dialect::Sauerbraten;
                self.d.ping = ping;
                if !ext {
                    return self.complete();
                }
                self.phase = Phase::Ext;
                self.x.clear_malformed();
                self.x.timer.restart_retries();
                // Requests of the ping's burst not sent yet go with the next attempt.
                self.burst.clear();
                let all_out = ExtCommand::ALL
                    .into_iter()
                    .enumerate()
                    .all(|(i, c)| !self.is_missing(c) || self.with_ping & (1 << i) != 0);
                if self.missing().is_empty() {
                    self.x.event(Event::Reply {
                        what: "extinfo",
                        bytes,
                        datagrams: self.ext_datagrams,
                    });
                    self.complete();
                } else if all_out {
                    // Every request still unanswered went with this ping: its replies
                    // are on their way; a timeout resends what does not come.
                    self.x.timer.rearm(now);
                } else {
                    self.x.timer.resend_now();
                }
            }
        }
    }
}

crate::client_core::start_query!(QueryOptions);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_core::{drive_to_end, QueryError};
    use crate::cube2::wire::{put_int, put_string};
    use std::time::Duration;

    fn sauer_ping(id: u32, clients: i32) -> Vec<u8> {
        let mut d = Vec::new();
        PingReply {
            clients,
            attrs: vec![260, 0, 0, 8, 0],
            map: b"complex".to_vec(),
            description: b"Test".to_vec(),
            ..PingReply::default()
        }
        .encode(&ping_request(id), &mut d);
        d
    }

    fn ext_head(cmd: ExtCommand, id: u32) -> Vec<u8> {
        let mut d = ext_request(cmd, id);
        put_int(&mut d, -1);
        put_int(&mut d, 105);
        d
    }

    fn player(id: u32, cn: i32, name: &[u8]) -> Vec<u8> {
        let mut d = ext_head(ExtCommand::Players, id);
        put_int(&mut d, 0);
        put_int(&mut d, -11);
        PlayerStats {
            cn,
            name: name.to_vec(),
            team: b"good".to_vec(),
            frags: 4,
            ..PlayerStats::default()
        }
        .encode(&mut d);
        d
    }

    fn ids(id: u32, cns: &[i32]) -> Vec<u8> {
        let mut d = ext_head(ExtCommand::Players, id);
        put_int(&mut d, 0);
        put_int(&mut d, -10);
        for &c in cns {
            put_int(&mut d, c);
        }
        d
    }

    fn uptime(id: u32) -> Vec<u8> {
        let mut d = ext_head(ExtCommand::Uptime, id);
        put_int(&mut d, 77);
        d
    }

    fn teams(id: u32) -> Vec<u8> {
        let mut d = ext_head(ExtCommand::Teams, id);
        for v in [0, 2, 100] {
            put_int(&mut d, v);
        }
        put_string(&mut d, b"good");
        put_int(&mut d, 9);
        put_int(&mut d, -1);
        d
    }

    fn sent(m: &mut QueryMachine, t: Instant) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut d = Vec::new();
        while m.poll_transmit_into(t, &mut d) {
            out.push(d.clone());
        }
        out
    }

    #[test]
    fn ping_then_extinfo_gathers_players_teams_and_uptime() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 0x0102_0304, t0);
        let id = 0x0102_0304;
        // the ping, the three extinfo requests right behind it
        let first = sent(&mut m, t0);
        assert_eq!(first.len(), 4);
        assert_eq!(first[0], [0x81, 4, 3, 2, 1]);
        for (d, c) in first[1..].iter().zip(ExtCommand::ALL) {
            assert_eq!(*d, ext_request(c, id));
        }
        // Someone else's ping reply is not ours.
        m.handle_datagram(t0, &sauer_ping(9, 2));
        assert!(sent(&mut m, t0).is_empty());
        m.handle_datagram(t0, &sauer_ping(0x0102_0304, 2));
        // nothing asked again: the extinfo replies are on their way
        assert!(sent(&mut m, t0).is_empty());
        m.handle_datagram(t0, &uptime(id));
        m.handle_datagram(t0, &player(id, 1, b"b"));
        m.handle_datagram(t0, &ids(id, &[0, 1]));
        m.handle_datagram(t0, &player(id, 1, b"b"));
        m.handle_datagram(t0, &player(id, 7, b"unlisted"));
        m.handle_datagram(t0, &teams(id));
        assert!(m.take_result().is_none());
        m.handle_datagram(t0, &player(id, 0, b"a"));
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.uptime_seconds, Some(77));
        let names: Vec<_> = a
            .status
            .players
            .unwrap()
            .into_iter()
            .map(|p| p.name.unwrap())
            .collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(a.status.teams.unwrap()[0].score, Some(9));
        assert!(a.details.missing.is_empty());
    }

    #[test]
    fn silent_extinfo_leaves_the_ping_answer() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 5, t0);
        sent(&mut m, t0);
        m.handle_datagram(t0, &sauer_ping(5, 0));
        drive_to_end(&mut m, t0, None);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.host_name.as_deref(), Some("Test"));
        assert_eq!(a.details.missing.len(), 3);
        assert!(a.warnings.iter().any(|w| w.contains("extinfo")));
    }

    #[test]
    fn silence_times_out() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 5, t0);
        // the ping with the extinfo requests, then the ping alone twice
        assert_eq!(drive_to_end(&mut m, t0, None), 6);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { .. }))
        ));
    }

    #[test]
    fn extinfo_replies_before_the_ping_reply_are_kept_for_sauerbraten_only() {
        let t0 = Instant::now();
        let id = 5;
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), id, t0);
        sent(&mut m, t0);
        m.handle_datagram(t0, &uptime(id));
        m.handle_datagram(t0, &ids(id, &[]));
        m.handle_datagram(t0, &teams(id));
        assert!(m.take_result().is_none(), "not before the ping reply");
        m.handle_datagram(t0, &sauer_ping(id, 0));
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.uptime_seconds, Some(77));
        assert_eq!(a.status.players.map(|p| p.len()), Some(0));
        assert_eq!(a.datagrams, 4);
        assert!(a.warnings.is_empty(), "{:?}", a.warnings);

        // A Red Eclipse ping reply: whatever came to the extinfo requests is dropped.
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), id, t0);
        sent(&mut m, t0);
        m.handle_datagram(t0, &uptime(id));
        let mut re = Vec::new();
        PingReply {
            clients: 0,
            attrs: vec![230, 1, 0, 600, 16, 0, 0, 0, 1, 6, 0, 2, 64, 0, 0],
            map: b"bloodlust".to_vec(),
            description: b"RE".to_vec(),
            ..PingReply::default()
        }
        .encode(&ping_request(id), &mut re);
        m.handle_datagram(t0, &re);
        assert!(sent(&mut m, t0).is_empty());
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.uptime_seconds, None);
        assert_eq!(a.status.players, None);
        assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    }

    #[test]
    fn extinfo_left_behind_goes_out_after_the_ping_reply() {
        // A driver that takes one datagram a round (auto-detection while the server is
        // silent): the ping alone goes, and the extinfo requests after its reply.
        let t0 = Instant::now();
        let id = 5;
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), id, t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(d, ping_request(id));
        let t1 = t0 + Duration::from_millis(80);
        m.handle_datagram(t1, &sauer_ping(id, 0));
        let asked = sent(&mut m, t1);
        assert_eq!(asked.len(), 3);
        m.handle_datagram(t1, &uptime(id));
        m.handle_datagram(t1, &ids(id, &[]));
        m.handle_datagram(t1, &teams(id));
        assert!(m.take_result().unwrap().is_ok());

        // One extinfo request went with the ping, two stayed behind: those two go.
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), id, t0);
        assert!(m.poll_transmit_into(t0, &mut d));
        assert!(m.poll_transmit_into(t0, &mut d));
        m.handle_datagram(t1, &sauer_ping(id, 0));
        m.handle_datagram(t1, &uptime(id));
        let asked = sent(&mut m, t1);
        assert_eq!(
            asked,
            [
                ext_request(ExtCommand::Players, id),
                ext_request(ExtCommand::Teams, id)
            ]
        );
    }

    #[test]
    fn endless_player_datagrams_are_capped() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 5, t0);
        sent(&mut m, t0);
        m.handle_datagram(t0, &sauer_ping(5, 3));
        sent(&mut m, t0);
        // A server that lists a player it never describes and repeats another forever.
        m.handle_datagram(t0, &ids(5, &[0, 1]));
        let mut n = 0;
        while m.take_result().is_none() {
            m.handle_datagram(t0, &player(5, 0, b"again"));
            n += 1;
            assert!(n <= MAX_EXT_DATAGRAMS + 1, "never ended");
        }
        assert!(n <= MAX_EXT_DATAGRAMS);
    }
}

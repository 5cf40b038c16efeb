//! The Teeworlds 0.6 / DDNet client as a state machine: one `gie3` in DDNet's extended
//! header, resent by the shared client core's timers, and no I/O. Drive it through
//! [`QueryDriver`].
//!
//! The request carries a 24-bit token taken from the query id. A vanilla 0.6 server
//! answers `inf3` echoing its low byte, and that one datagram is the answer. A DDNet
//! server answers `iext` echoing all 24 bits, and, when its clients do not fit one
//! datagram, `iex+` continuations numbered 1, 2…: the answer is complete when the
//! clients the `iext` counts have come (at most [`MAX_PARTS`] continuations, at most
//! [`MAX_CLIENTS`] clients in all). Continuations may come
//! before their `iext` (held, at most [`MAX_PARTS`]); after the `iext`, the query waits
//! at most [`PART_WAIT`] more (never past its deadline) and then answers with the
//! clients it has and a warning. A reply with another token is dropped.

use std::time::{Duration, Instant};

use super::mapping::info_to_status;
use super::wire::{decode_reply6, encode_request6, Client, Info, Kind, More, Reply6, MAX_CLIENTS};
use crate::client_core::{Event, Exchange, QueryDriver, Timeout, Timing};
use crate::protocol::Protocol;

/// Most `iex+` continuations taken (DDNet needs 2 or 3 for 64 clients).
pub const MAX_PARTS: usize = 16;
/// How long after the `iext` its missing continuations are waited for.
pub const PART_WAIT: Duration = Duration::from_millis(500);

/// Teeworlds 0.6's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {}

/// What a Teeworlds 0.6 / DDNet answer says beyond the status.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Details {
    /// `Info6` (a vanilla `inf3`) or `Extended` (DDNet's `iext`).
    pub kind: Kind,
    /// The reply as sent (its clients: those of its first datagram).
    pub info: Info,
    /// The continuations taken, in part order.
    pub more: Vec<More>,
    /// The token sent.
    pub token: u32,
}

/// One Teeworlds 0.6 / DDNet query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    token: u32,
    info: Option<Info>,
    more: Vec<More>,
    /// When an incomplete `iext` stops waiting for its continuations.
    complete_by: Option<Instant>,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now`; `id` (pick it at random) makes the token.
    pub fn new(_opts: QueryOptions, timing: Timing, id: u32, now: Instant) -> Self {
        Self {
            token: id & 0x00ff_ffff,
            info: None,
            more: Vec::new(),
            complete_by: None,
            x: Exchange::new(Protocol::Teeworlds, &timing, now),
        }
    }

    fn clients(&self) -> usize {
        let more: usize = self.more.iter().map(|m| m.clients.len()).sum();
        self.info
            .as_ref()
            .map_or(0, |i| i.clients.len())
            .saturating_add(more)
    }

    fn finish(&mut self, kind: Kind, partial: bool) {
        let Some(info) = self.info.take() else { return };
        let mut more = std::mem::take(&mut self.more);
        more.sort_by_key(|m| m.part);
        let mut extra: Vec<Client> = Vec::new();
        for m in &more {
            for c in &m.clients {
                if info.clients.len() + extra.len() < MAX_CLIENTS {
                    extra.push(c.clone());
                }
            }
        }
        if partial {
            let got = info.clients.len() + extra.len();
            self.x.warn([format!(
                "{got} of the {} clients the server counts came: continuation datagrams missing",
                info.num_clients
            )]);
        }
        let status = info_to_status(&info, &extra);
        let details = Details {
            kind,
            info,
            more,
            token: self.token,
        };
        self.x.succeed(status, details);
    }

    /// Finishes when the clients counted have come (or all we keep).
    fn check_complete(&mut self) {
        let Some(info) = &self.info else { return };
        let want = usize::try_from(info.num_clients.max(0))
            .unwrap_or(usize::MAX)
            .min(MAX_CLIENTS);
        if self.clients() >= want || self.more.len() >= MAX_PARTS {
            self.finish(Kind::Extended, self.clients() < want);
        }
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    crate::client_core::exchange_driver!(results);

    fn poll_timeout(&self) -> Option<Instant> {
        let t = self.x.poll_timeout()?;
        Some(self.complete_by.map_or(t, |c| c.min(t)))
    }

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        let token = self.token;
        self.x
            .transmit_query(now, d, "gie3", Some(token), |d| encode_request6(d, token))
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.x.is_done() {
            return;
        }
        if self.complete_by.is_some_and(|c| now >= c)
            || (self.info.is_some() && now >= self.x.timer.deadline())
        {
            return self.finish(Kind::Extended, true);
        }
        if self.info.is_some() {
            return;
        }
        if self.x.handle_timeout(now) == Some(Timeout::GiveUp) {
            self.x.give_up(None);
        }
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        if !super::wire::is_reply6(datagram) {
            return self.x.dropped(bytes, "not a Teeworlds 0.6 reply");
        }
        let reply = match decode_reply6(datagram) {
            Ok(r) => r,
            Err(e) => {
                self.x.heard(now);
                self.x.malformed(e);
                return self.x.dropped(bytes, "does not decode");
            }
        };
        match reply {
            Reply6::Info(Kind::Info6, info) => {
                if info.token != i64::from(self.token & 0xff) {
                    return self.x.dropped(bytes, "wrong token (not the one we sent)");
                }
                crate::teeworlds::took_info(&mut self.x, now, "inf3", bytes, &info);
                self.info = Some(*info);
                self.more.clear();
                self.finish(Kind::Info6, false);
            }
            Reply6::Info(_, info) => {
                if info.token != i64::from(self.token) {
                    return self.x.dropped(bytes, "wrong token (not the one we sent)");
                }
                if self.info.is_some() {
                    return self.x.dropped(bytes, "a second iext");
                }
                crate::teeworlds::took_info(&mut self.x, now, "iext", bytes, &info);
                self.info = Some(*info);
                self.x.timer.stop();
                let deadline = self.x.timer.deadline();
                self.complete_by = Some(
                    now.checked_add(PART_WAIT)
                        .map_or(deadline, |t| t.min(deadline)),
                );
                self.check_complete();
            }
            Reply6::More(more) => {
                if more.token != i64::from(self.token) {
                    return self.x.dropped(bytes, "wrong token (not the one we sent)");
                }
                if more.part < 1 || self.more.iter().any(|m| m.part == more.part) {
                    return self.x.dropped(bytes, "a continuation already taken");
                }
                if self.more.len() >= MAX_PARTS {
                    return self.x.dropped(bytes, "more continuations than we take");
                }
                self.x.heard(now);
                self.x.warn(more.warnings.iter());
                self.x.received(1, bytes);
                self.x.event(Event::Part {
                    bytes,
                    number: u8::try_from(more.part).ok(),
                    count: None,
                });
                self.more.push(more);
                self.check_complete();
            }
        }
    }
}

crate::client_core::start_query!(QueryOptions);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_core::{drive_to_end, QueryError};

    fn client(i: usize) -> Client {
        Client {
            name: format!("tee{i}").into(),
            player: true,
            ..Client::default()
        }
    }

    fn ext(token: i64, clients: Vec<Client>, num: i64) -> Vec<u8> {
        let mut d = Vec::new();
        let info = Info {
            token,
            version: "0.6.4, 16.4".into(),
            name: "DD".into(),
            map: "Tutorial".into(),
            map_crc: Some(1),
            map_size: Some(2),
            num_clients: num,
            max_clients: 64,
            clients,
            ..Info::default()
        };
        super::super::wire::encode::info6(&mut d, Kind::Extended, &info);
        d
    }

    fn more(token: i64, part: i64, clients: Vec<Client>) -> Vec<u8> {
        let mut d = Vec::new();
        super::super::wire::encode::more(&mut d, token, part, &clients);
        d
    }

    #[test]
    fn an_iext_and_its_continuations_make_one_answer_in_any_order() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 0xab12_3456, t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(&d[..4], b"xe\x12\x34");
        let tok = 0x12_3456;
        m.handle_datagram(t0, &more(tok, 2, vec![client(5)]));
        m.handle_datagram(t0, &ext(999, vec![client(0)], 6));
        m.handle_datagram(t0, &ext(tok, (0..3).map(client).collect(), 6));
        assert!(m.take_result().is_none());
        m.handle_datagram(t0, &more(tok, 1, vec![client(3), client(4)]));
        let a = m.take_result().unwrap().unwrap();
        let names: Vec<_> = a
            .status
            .players
            .unwrap()
            .into_iter()
            .map(|p| p.name.unwrap())
            .collect();
        assert_eq!(names, ["tee0", "tee1", "tee2", "tee3", "tee4", "tee5"]);
        assert_eq!(a.datagrams, 3);
        assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    }

    #[test]
    fn a_vanilla_inf3_echoes_the_low_byte() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 0x12_3456, t0);
        let mut d = Vec::new();
        let mut info = Info {
            token: 0x57,
            name: "v".into(),
            ..Info::default()
        };
        super::super::wire::encode::info6(&mut d, Kind::Info6, &info);
        m.handle_datagram(t0, &d);
        assert!(m.take_result().is_none(), "wrong token taken");
        info.token = 0x56;
        d.clear();
        super::super::wire::encode::info6(&mut d, Kind::Info6, &info);
        m.handle_datagram(t0, &d);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.host_name.as_deref(), Some("v"));
    }

    #[test]
    fn missing_continuations_end_after_the_part_wait_with_a_warning() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 7, t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        m.handle_datagram(t0, &ext(7, vec![client(0)], 1000));
        assert!(
            !m.poll_transmit_into(t0, &mut d),
            "no resend while collecting"
        );
        assert_eq!(m.poll_timeout(), Some(t0 + PART_WAIT));
        m.handle_timeout(t0 + PART_WAIT);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.players.unwrap().len(), 1);
        assert!(
            a.warnings.iter().any(|w| w.contains("1 of the 1000")),
            "{:?}",
            a.warnings
        );
    }

    #[test]
    fn silence_times_out() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        assert_eq!(drive_to_end(&mut m, t0, None), 3);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { .. }))
        ));
    }
}

//! The Teeworlds 0.7 client as a state machine: the token handshake, then `gie3`, with
//! retries and timeouts from the shared client core, and no I/O. Drive it through
//! [`QueryDriver`].
//!
//! Our 4-byte token comes from the query id. A token reply counts only when addressed
//! to our token; a server that keeps sending new tokens is stopped by the core's cap on
//! challenges. The `inf3` counts only when addressed to our token, from the server's
//! token we were given, and echoing our integer token; anything else is dropped.

use std::time::Instant;

use super::super::mapping::info_to_status;
use super::super::wire::{
    decode_reply7, encode_request7, encode_token_request, is_packet7, token_reply, Info, TOKEN_NONE,
};
use crate::client_core::{Event, Exchange, QueryDriver, Timeout, Timing};
use crate::protocol::Protocol;

/// Teeworlds 0.7's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {}

/// What a Teeworlds 0.7 answer says beyond the status.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Details {
    /// The reply as sent.
    pub info: Info,
    /// Our token.
    pub token: u32,
    /// The server's token.
    pub server_token: u32,
}

/// One Teeworlds 0.7 query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    token: u32,
    /// The integer token of `gie3`.
    info_token: i32,
    server_token: Option<u32>,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now`; `id` (pick it at random) makes the tokens.
    pub fn new(_opts: QueryOptions, timing: Timing, id: u32, now: Instant) -> Self {
        Self {
            // "No token" is all ones: never ours.
            token: if id == TOKEN_NONE { id ^ 1 } else { id },
            info_token: i32::from((id >> 8) as u8),
            server_token: None,
            x: Exchange::new(Protocol::Teeworlds7, &timing, now),
        }
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    crate::client_core::exchange_driver!(results);

    fn poll_timeout(&self) -> Option<Instant> {
        self.x.poll_timeout()
    }

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        let (ours, info_token) = (self.token, self.info_token);
        match self.server_token {
            None => self
                .x
                .transmit_query(now, d, "token request", Some(ours), |d| {
                    encode_token_request(d, ours)
                }),
            Some(theirs) => self.x.transmit_query(now, d, "gie3", Some(theirs), |d| {
                encode_request7(d, theirs, ours, info_token)
            }),
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.x.handle_timeout(now) == Some(Timeout::GiveUp) {
            let step = if self.server_token.is_some() {
                "gie3"
            } else {
                "token request"
            };
            self.x.give_up(Some(step));
        }
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        if let Some(theirs) = token_reply(datagram, self.token) {
            if self.server_token.is_some() {
                return self.x.dropped(bytes, "a token after the token");
            }
            self.x.event(Event::Challenge {
                bytes,
                challenge: Some(theirs),
            });
            if !self.x.follow_challenge(now) {
                return;
            }
            self.x.ping(now);
            self.server_token = Some(theirs);
            self.x.timer.restart_retries();
            self.x.timer.resend_now();
            return;
        }
        if !is_packet7(datagram) {
            return self.x.dropped(bytes, "not a Teeworlds 0.7 reply");
        }
        let Some(expected) = self.server_token else {
            return self.x.dropped(bytes, "an info before the handshake");
        };
        let (theirs, info) = match decode_reply7(datagram, Some(self.token)) {
            Ok(r) => r,
            Err(e) => {
                self.x.malformed(e);
                return self
                    .x
                    .dropped(bytes, "does not decode, or not to our token");
            }
        };
        if theirs != expected || info.token != i64::from(self.info_token) {
            return self.x.dropped(bytes, "wrong token (not the one we sent)");
        }
        crate::teeworlds::took_info(&mut self.x, now, "inf3", bytes, &info);
        let status = info_to_status(&info, &[]);
        self.x.succeed(
            status,
            Details {
                info,
                token: self.token,
                server_token: theirs,
            },
        );
    }
}

crate::client_core::start_query!(QueryOptions);

#[cfg(test)]
mod tests {
    use super::super::super::wire::{encode, Client};
    use super::*;
    use crate::client_core::{drive_to_end, QueryError};

    #[test]
    fn handshake_then_info() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 0x1122_3344, t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(d.len(), 520);
        // A token for someone else, then ours.
        let mut r = Vec::new();
        encode::token_reply(&mut r, 0x1122_3345, 9);
        m.handle_datagram(t0, &r);
        assert!(!m.poll_transmit_into(t0, &mut d));
        r.clear();
        encode::token_reply(&mut r, 0x1122_3344, 0xf06b_13fc);
        m.handle_datagram(t0, &r);
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(&d[..9], b"\x21\xf0\x6b\x13\xfc\x11\x22\x33\x44");
        let info = Info {
            token: 0x33,
            name: "TW".into(),
            map: "dm1".into(),
            max_clients: 8,
            num_clients: 1,
            skill_level: Some(0),
            clients: vec![Client {
                name: "bot".into(),
                bot: true,
                ..Client::default()
            }],
            ..Info::default()
        };
        // From another server token: dropped.
        r.clear();
        encode::info7(&mut r, 0x1122_3344, 1, &info);
        m.handle_datagram(t0, &r);
        assert!(m.take_result().is_none());
        r.clear();
        encode::info7(&mut r, 0x1122_3344, 0xf06b_13fc, &info);
        m.handle_datagram(t0, &r);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.host_name.as_deref(), Some("TW"));
        assert_eq!(a.status.bot_count, Some(1));
    }

    #[test]
    fn endless_new_tokens_end_as_a_challenge_loop() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 5, t0);
        let mut d = Vec::new();
        let mut r = Vec::new();
        encode::token_reply(&mut r, 5, 1);
        for _ in 0..100 {
            if m.poll_transmit_into(t0, &mut d) {
                m.handle_datagram(t0, &r);
            }
        }
        // The second token is dropped: the handshake happens once.
        assert!(m.take_result().is_none());
        let sent = drive_to_end(&mut m, t0, None);
        assert!((1..=10).contains(&sent), "{sent}");
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer {
                step: Some("gie3"),
                ..
            }))
        ));
    }
}

//! The OpenTTD game-info client as a stream state machine on the shared core
//! ([`Transport::Stream`](crate::client::Transport)): no I/O, time passed in.
//!
//! Once connected it writes `PACKET_CLIENT_GAME_INFO` and reads one packet: a
//! `SERVER_GAME_INFO` is the answer; `SERVER_FULL`, `SERVER_BANNED` or `SERVER_ERROR` a
//! rejection; any other type, a size below the header or a body that does not decode is
//! malformed with the offset. Bytes are parsed as they come, in any chunking; the core
//! holds at most one packet (65,535 bytes, what its size field can say). A server that
//! drips its bytes or stays silent meets the core's read and total timers.

use std::time::Instant;

use super::mapping::game_info_to_status;
use super::wire::{
    decode_game_info, split_packet, GameInfo, HEADER, PACKET_SERVER_BANNED, PACKET_SERVER_ERROR,
    PACKET_SERVER_FULL, PACKET_SERVER_GAME_INFO, REQUEST,
};
use crate::client_core::{Event, Rejection, Timing};
use crate::client_stream::Stream;
use crate::error::DecodeError;
use crate::protocol::Protocol;

/// OpenTTD's default game port.
pub const DEFAULT_PORT: u16 = 3979;

/// The most bytes held: one packet of the largest size its `u16` size field can say.
pub const MAX_PACKET: usize = u16::MAX as usize;

const WAITING_FOR: &str = "SERVER_GAME_INFO";

/// OpenTTD's own settings of one query (none yet; the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {}

/// What an OpenTTD answer says beyond the status: the game info as sent.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Details {
    /// The game info, every field as sent.
    pub info: GameInfo,
    /// How long the connection took, in milliseconds.
    pub connect_ms: f64,
}

enum Parsed {
    Info(GameInfo),
    /// A refusal: its packet type and error code.
    Refused(u8, Option<u8>),
}

/// One OpenTTD query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    s: Stream<Details>,
    asked: bool,
}

impl QueryMachine {
    /// A query starting at `now` (the request carries no id).
    pub fn new(_opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        Self {
            s: Stream::new(Protocol::Openttd, &timing, now, MAX_PACKET),
            asked: false,
        }
    }

    fn parse(&mut self, now: Instant) {
        if self.s.is_done() {
            return;
        }
        let r = self.s.input();
        let at = r.offset();
        let (kind, size) = match split_packet(&r) {
            Ok(Some(p)) => p,
            Ok(None) => return,
            Err(e) => return self.s.x.fail_malformed(e),
        };
        let mut all = self.s.input();
        let parsed = all
            .take(HEADER, "PacketHeader")
            .and_then(|_| all.sub(size.saturating_sub(HEADER), "Packet"))
            .and_then(|mut body| match kind {
                PACKET_SERVER_GAME_INFO => decode_game_info(&mut body).map(Parsed::Info),
                PACKET_SERVER_FULL | PACKET_SERVER_BANNED => Ok(Parsed::Refused(kind, None)),
                PACKET_SERVER_ERROR => Ok(Parsed::Refused(kind, body.u8("ErrorCode").ok())),
                _ => Err(DecodeError::invalid(
                    at.saturating_add(2),
                    "PacketType",
                    "not SERVER_GAME_INFO (6)",
                )),
            });
        self.s.consume(size);
        self.s.x.received(1, 0);
        self.s.x.event(Event::Reply {
            what: WAITING_FOR,
            bytes: size,
            datagrams: 1,
        });
        match parsed {
            Err(e) => self.s.x.fail_malformed(e),
            Ok(Parsed::Refused(kind, code)) => self.reject(kind, code),
            Ok(Parsed::Info(info)) => {
                self.s.x.ping(now);
                self.s.answered();
                self.s.x.warn(info.warnings.iter());
                let status = game_info_to_status(&info);
                let connect_ms = self.s.connect_ms;
                self.s.x.succeed(status, Details { info, connect_ms });
            }
        }
    }

    fn reject(&mut self, kind: u8, code: Option<u8>) {
        let (code, meaning) = match (kind, code) {
            (PACKET_SERVER_FULL, _) => (
                u32::from(kind),
                "SERVER_FULL: the server is full".to_owned(),
            ),
            (PACKET_SERVER_BANNED, _) => (
                u32::from(kind),
                "SERVER_BANNED: this address is banned".to_owned(),
            ),
            (_, Some(c)) => (u32::from(c), format!("SERVER_ERROR with code {c}")),
            (_, None) => (u32::from(kind), "SERVER_ERROR without a code".to_owned()),
        };
        self.s.x.reject(Rejection::Error { code, meaning });
    }

    /// The connection is up: the request goes out.
    fn connected(&mut self, now: Instant) {
        if !self.asked {
            self.asked = true;
            self.s.connected(now);
            self.s
                .write(now, &REQUEST, "PACKET_CLIENT_GAME_INFO", WAITING_FOR);
        }
    }

    /// What a close now truncates.
    fn awaited(&self) -> &'static str {
        WAITING_FOR
    }
}

crate::client_stream::stream_driver!(QueryMachine, Details);

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use crate::client_core::{QueryDriver, StreamEvent};
    use std::time::Duration;

    use super::*;
    use crate::openttd::wire::tests::sample;

    fn connected(t0: Instant) -> QueryMachine {
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let peer: SocketAddr = "127.0.0.1:3979".parse().unwrap();
        m.handle_stream(t0, StreamEvent::Connected(peer));
        let mut out = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut out));
        assert_eq!(out, REQUEST);
        m
    }

    #[test]
    fn a_reply_byte_by_byte_is_the_answer() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        let mut p = Vec::new();
        sample(6).encode_packet(&mut p);
        for b in &p {
            assert!(m.take_result().is_none());
            m.handle_stream(t0, StreamEvent::Received(std::slice::from_ref(b)));
        }
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Openttd);
        assert_eq!(a.status.host_name.as_deref(), Some("ogp ttd"));
        assert_eq!(a.status.slot_max, Some(25));
        assert_eq!(a.details.info.version, 6);
        assert!(m.close_due());
    }

    #[test]
    fn refusals_and_other_packets() {
        let t0 = Instant::now();
        for (bytes, want) in [
            (&[3u8, 0, 0][..], "error 0"),
            (&[4, 0, 3, 9], "error 9"),
            (&[3, 0, 1], "error 1"),
        ] {
            let mut m = connected(t0);
            m.handle_stream(t0, StreamEvent::Received(bytes));
            let e = m.take_result().unwrap().unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
        }
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(&[4, 0, 99, 1]));
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("PacketType at byte 2"), "{e}");
    }

    /// A size that says more than comes, then the server closes: truncated, not a hang.
    #[test]
    fn a_lying_size_then_close_is_truncated() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(&[0xff, 0xff, 6, 6, 0]));
        assert!(m.take_result().is_none());
        m.handle_stream(t0, StreamEvent::Closed);
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("SERVER_GAME_INFO"), "{e}");
        // A size below the header is an error at once.
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(&[1, 0, 6]));
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("PacketSize at byte 0"), "{e}");
    }

    /// A server that drips a byte short of each read timeout still meets the total
    /// timer; the held bytes never pass one packet.
    #[test]
    fn a_drip_meets_the_total_timer() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        m.handle_stream(t0, StreamEvent::Received(&[0xff, 0xff, 6]));
        let mut now = t0;
        let mut drips = 0;
        while m.take_result().is_none() {
            let due = m.poll_timeout().unwrap();
            let next = now + Duration::from_millis(500);
            if next < due {
                now = next;
                m.handle_stream(now, StreamEvent::Received(b"x"));
                drips += 1;
                assert!(m.stream_buffer(0) <= MAX_PACKET);
            } else {
                now = due;
                m.handle_timeout(now);
            }
            assert!(drips < 10_000);
        }
        let total = Timing::default().total_timeout;
        assert!(now.duration_since(t0) <= total, "{:?}", now - t0);
        let e = m.take_result();
        assert!(e.is_none());
    }

    /// More than one packet's worth of bytes before a whole packet cannot be held.
    #[test]
    fn the_held_bytes_are_capped() {
        let t0 = Instant::now();
        let mut m = connected(t0);
        let mut flood = vec![0xffu8, 0xff, 6, 7];
        flood.resize(3 * MAX_PACKET, b'a');
        m.handle_stream(t0, StreamEvent::Received(&flood));
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("malformed"), "{e}");
        assert!(m.stream_buffer(0) <= MAX_PACKET);
    }
}

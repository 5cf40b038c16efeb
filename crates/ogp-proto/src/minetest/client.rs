//! The Minetest handshake as a state machine on the shared client core: no I/O, time
//! passed in.
//!
//! 1. It sends the opening packet (resent by the core's timers) until a reliable
//!    SET_PEER_ID comes back, and acknowledges it.
//! 2. At once, it sends `TOSERVER_INIT` (unreliable), and again every [`INIT_REPEAT`]
//!    up to [`EARLY_INITS`] times, then as the core's timers resend, until
//!    `TOCLIENT_HELLO` (the answer: the protocol version) or `TOCLIENT_ACCESS_DENIED` (a
//!    rejection) comes back. The server ignores, without a trace in its log, an INIT
//!    that comes before its main loop has taken in the new peer, which it does once a
//!    server step (`dedicated_server_step`, 90 ms by default): Minetest 5.6 on
//!    loopback answered the first INIT sent 45–105 ms after SET_PEER_ID (INITs every
//!    10, 20, 50 or 100 ms), none sent within a few milliseconds. The repeats find that
//!    moment without a fixed wait (0.3 s before); one that the server takes after it
//!    has answered is ignored by it as well.
//! 3. It sends a DISCO, so that the server frees the peer at once rather than after its
//!    timeout (and with it the HELLO, which is not acknowledged: the server deletes the
//!    peer's unacknowledged packets with it); the answer is given once the DISCO is out.
//!
//! Every other reliable packet of the server is acknowledged, up to [`MAX_ACKS`] in a
//! query: a server that floods costs us no more. Packets from another sender than the server's
//! peer id 1 are dropped.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::wire::{
    decode_packet, encode_ack, encode_disco, encode_init, encode_open, Body, Control, Hello,
    PEER_ID_SERVER, PLAYER_NAME,
};
use crate::client_core::{Event, Exchange, QueryDriver, QueryError, Rejection, Timeout, Timing};
use crate::model::{Rules, Text};
use crate::protocol::Protocol;
use crate::Status;

/// Minetest's default port.
pub const DEFAULT_PORT: u16 = 30000;
/// How often `TOSERVER_INIT` is repeated while the server has not taken it.
pub const INIT_REPEAT: Duration = Duration::from_millis(25);
/// How many `TOSERVER_INIT` go out [`INIT_REPEAT`] apart (the first at once, the last
/// 275 ms after the peer id); then the core's timers resend it.
pub const EARLY_INITS: u8 = 12;
/// Most acknowledgements sent in one query.
pub const MAX_ACKS: usize = 16;

/// Minetest's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// The player name `TOSERVER_INIT` gives (default `ogpprobe`; at most 20 bytes).
    pub name: String,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            name: PLAYER_NAME.into(),
        }
    }
}

/// What a Minetest answer says beyond the status.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Details {
    /// The peer id the server gave.
    pub peer_id: u16,
    /// `TOCLIENT_HELLO` as sent.
    pub hello: Hello,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Open,
    Init,
    Closing,
}

/// One Minetest handshake with one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    name: String,
    step: Step,
    peer: u16,
    /// When the next early `TOSERVER_INIT` is due.
    init_at: Option<Instant>,
    /// Early `TOSERVER_INIT`s sent.
    inits: u8,
    out: VecDeque<(Vec<u8>, &'static str)>,
    acks: usize,
    hello: Option<Hello>,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A handshake starting at `now`.
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        Self {
            name: opts.name,
            step: Step::Open,
            peer: 0,
            init_at: None,
            inits: 0,
            out: VecDeque::new(),
            acks: 0,
            hello: None,
            x: Exchange::new(Protocol::Minetest, &timing, now),
        }
    }

    fn ack(&mut self, channel: u8, seq: u16) {
        if self.acks >= MAX_ACKS {
            return;
        }
        self.acks += 1;
        let mut d = Vec::with_capacity(11);
        encode_ack(&mut d, self.peer, channel, seq);
        self.out.push_back((d, "ACK"));
    }

    fn finish(&mut self) {
        if let Some(hello) = self.hello.take() {
            let mut rules = vec![
                ("protocol".into(), Text::from(hello.protocol.to_string())),
                (
                    "serialization".into(),
                    hello.serialization.to_string().into(),
                ),
                ("compression".into(), hello.compression.to_string().into()),
                ("auth_mechs".into(), hello.auth_mechs.to_string().into()),
            ];
            rules.retain(|(_, v): &(Text, Text)| !v.is_empty());
            let status = Status {
                game_name: Some("Minetest".into()),
                rules: Some(Rules(rules)),
                ..Status::default()
            };
            let peer_id = self.peer;
            self.x.succeed(status, Details { peer_id, hello });
        }
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    crate::client_core::exchange_driver!(results);

    fn poll_timeout(&self) -> Option<Instant> {
        let t = self.x.poll_timeout()?;
        Some(self.init_at.map_or(t, |i| i.min(t)))
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.step == Step::Closing {
            return;
        }
        if self.x.handle_timeout(now) == Some(Timeout::GiveUp) {
            let step = match self.step {
                Step::Open => "SET_PEER_ID",
                _ => "TOCLIENT_HELLO",
            };
            self.x.give_up(Some(step));
        }
    }

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        if let Some((bytes, what)) = self.out.pop_front() {
            d.clear();
            d.extend_from_slice(&bytes);
            self.x.sent_extra(Event::Sent {
                what,
                bytes: d.len(),
                challenge: None,
                id: None,
            });
            if self.step == Step::Closing && self.out.is_empty() {
                self.finish();
            }
            return true;
        }
        if self.x.is_done() {
            return false;
        }
        match self.step {
            Step::Open => {
                self.x
                    .transmit_query(now, d, "open (reliable ORIGINAL)", None, encode_open)
            }
            Step::Init => {
                let early = self.init_at.is_some_and(|i| now >= i);
                if early {
                    // Each early INIT restarts the attempt timer: it runs out only
                    // after the last one.
                    self.inits = self.inits.saturating_add(1);
                    self.init_at = (self.inits < EARLY_INITS)
                        .then(|| now.checked_add(INIT_REPEAT))
                        .flatten();
                    d.clear();
                } else if !self.x.due_datagram(d) {
                    return false;
                }
                encode_init(d, self.peer, &self.name);
                self.x.sent_query(now, d, "TOSERVER_INIT", None, None);
                true
            }
            Step::Closing => false,
        }
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() || self.step == Step::Closing {
            return;
        }
        let bytes = datagram.len();
        let p = match decode_packet(datagram) {
            Ok(p) => p,
            Err(e) => {
                self.x.malformed(e);
                return self.x.dropped(bytes, "does not decode");
            }
        };
        if p.sender != PEER_ID_SERVER {
            return self.x.dropped(bytes, "not from the server's peer id");
        }
        // Every reliable packet is acknowledged, but the answer (or rejection) that the
        // DISCO right behind it ends with: the server deletes the peer on the DISCO, its
        // unacknowledged packets with it (one datagram less per handshake).
        let closing =
            self.step == Step::Init && matches!(p.body, Body::Hello(_) | Body::AccessDenied(_));
        if let (Some(seq), false) = (p.reliable, closing) {
            self.ack(p.channel, seq);
        }
        match (self.step, p.body) {
            (Step::Open, Body::Control(Control::SetPeerId(id))) if id > PEER_ID_SERVER => {
                self.peer = id;
                // The acknowledgement queued above went out with peer id 0: now ours.
                if let Some((d, _)) = self.out.back_mut() {
                    if let Some(peer) = d.get_mut(4..6) {
                        peer.copy_from_slice(&id.to_be_bytes());
                    }
                }
                self.x.received(1, bytes);
                self.x.ping(now);
                self.x.event(Event::Reply {
                    what: "SET_PEER_ID",
                    bytes,
                    datagrams: 1,
                });
                self.step = Step::Init;
                self.init_at = Some(now);
                self.x.timer.restart_retries();
            }
            (Step::Init, Body::Hello(hello)) => {
                self.x.received(1, bytes);
                self.x.repinged(now);
                self.x.event(Event::Reply {
                    what: "TOCLIENT_HELLO",
                    bytes,
                    datagrams: 1,
                });
                self.hello = Some(hello);
                self.init_at = None;
                let mut disco = Vec::with_capacity(9);
                encode_disco(&mut disco, self.peer);
                self.out.push_back((disco, "DISCO"));
                self.step = Step::Closing;
            }
            (Step::Init, Body::AccessDenied(code)) => {
                self.init_at = None;
                self.x.received(1, bytes);
                let mut disco = Vec::with_capacity(9);
                encode_disco(&mut disco, self.peer);
                self.out.push_back((disco, "DISCO"));
                self.x.reject(Rejection::Error {
                    code: u32::from(code),
                    meaning: format!("TOCLIENT_ACCESS_DENIED with reason {code}"),
                });
            }
            (_, Body::Control(Control::Disco)) => {
                self.x.fail(QueryError::Rejected {
                    protocol: Protocol::Minetest,
                    reason: Rejection::Error {
                        code: 0,
                        meaning: "the server closed the connection (DISCO)".into(),
                    },
                });
            }
            _ => self.x.dropped(bytes, "not what the handshake waits for"),
        }
    }
}

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_core::drive_to_end;

    const SET: &[u8] = &[0x4f, 0x45, 0x74, 3, 0, 1, 0, 3, 0xff, 0xdc, 0, 1, 0, 3];
    const HELLO: &[u8] = b"\x4f\x45\x74\x03\x00\x01\x00\x03\xff\xdd\x01\x00\x02\x1d\x00\x00\x00\x29\x00\x00\x00\x04\x00\x08ogpprobe";

    fn sent(m: &mut QueryMachine, now: Instant) -> Vec<Vec<u8>> {
        let mut all = Vec::new();
        let mut d = Vec::new();
        while m.poll_transmit_into(now, &mut d) {
            all.push(d.clone());
        }
        all
    }

    #[test]
    fn the_handshake_repeats_init_until_the_server_takes_it_then_closes() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        assert_eq!(sent(&mut m, t0).len(), 1);
        m.handle_datagram(t0, SET);
        // the ACK of SET_PEER_ID, then TOSERVER_INIT at once
        let first = sent(&mut m, t0);
        assert_eq!(first.len(), 2);
        assert_eq!(first[0], b"\x4f\x45\x74\x03\x00\x03\x00\x00\x00\xff\xdc");
        assert_eq!(&first[1][4..10], b"\x00\x03\x01\x01\x00\x02");
        // the server ignores it (its step has not taken the peer in): again every
        // INIT_REPEAT, nothing in between
        assert_eq!(m.poll_timeout(), Some(t0 + INIT_REPEAT));
        assert!(sent(&mut m, t0 + INIT_REPEAT / 2).is_empty());
        let mut t = t0;
        for _ in 1..4 {
            t += INIT_REPEAT;
            m.handle_timeout(t);
            let again = sent(&mut m, t);
            assert_eq!(again, [first[1].clone()]);
        }
        m.handle_datagram(t, HELLO);
        assert!(m.take_result().is_none(), "not before the DISCO is out");
        let last = sent(&mut m, t);
        // the DISCO alone: no ACK of the hello, the server deletes the peer on the DISCO
        assert_eq!(last, [b"\x4f\x45\x74\x03\x00\x03\x00\x00\x03".to_vec()]);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Minetest);
        assert_eq!(a.details.hello.protocol, 41);
        assert_eq!(a.status.rules.unwrap().get("protocol"), Some("41"));
    }

    #[test]
    fn early_inits_are_bounded_then_the_timers_resend() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        sent(&mut m, t0);
        m.handle_datagram(t0, SET);
        let mut inits = sent(&mut m, t0).len() - 1;
        let mut t = t0;
        // a server that never takes the INIT: EARLY_INITS of them 25 ms apart, then
        // the core's retries until the total deadline ends the query
        for _ in 0..200 {
            let Some(next) = m.poll_timeout() else { break };
            if t < t0 + INIT_REPEAT * u32::from(EARLY_INITS - 1) {
                assert!(next <= t + INIT_REPEAT, "{:?}", next - t);
            }
            t = next;
            m.handle_timeout(t);
            inits += sent(&mut m, t).len();
        }
        let early = usize::from(EARLY_INITS);
        assert!(inits > early && inits <= early + 9, "{inits} INITs");
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { .. }))
        ));
        assert!(t <= t0 + Timing::default().total_timeout);
    }

    #[test]
    fn silence_times_out_and_a_flood_is_acknowledged_a_bounded_number_of_times() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        assert_eq!(drive_to_end(&mut m, t0, None), 3);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { .. }))
        ));
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        sent(&mut m, t0);
        m.handle_datagram(t0, SET);
        let mut total = 0;
        for i in 0..1000u16 {
            let mut p = SET.to_vec();
            p[8..10].copy_from_slice(&i.to_be_bytes());
            p[11] = 2; // a reliable PING
            p.truncate(12);
            m.handle_datagram(t0, &p);
            total += sent(&mut m, t0).len();
        }
        assert_eq!(
            total,
            MAX_ACKS + 1,
            "the peer id's ACK, the first INIT and 15 of the flood's ACKs"
        );
        // another sender's packets are dropped
        let mut other = HELLO.to_vec();
        other[5] = 9;
        m.handle_datagram(t0, &other);
        assert!(m.take_result().is_none());
    }
}

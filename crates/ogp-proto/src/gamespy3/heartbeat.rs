//! The `03` heartbeat a server sends to its master servers, both directions, and its
//! schedule (sans-IO: time passed in).
//!
//! The spec gives the start: `03 <4 bytes>`, then `localip0 00 <IPv4> 00 …` (one per
//! local address), `localport 00 <port>`, then names `natneg`, `stateChanged`,
//! `gamename`, `publicInfo` and `serverKeys` without their layouts. We write each of
//! them the way `localip`/`localport` are written, as `key 00 value 00` pairs
//! (`natneg`, `statechanged`, `gamename`, then the server keys of the status), and end
//! the list with an empty key (`docs/gamespy3.md`, S14). The 4 bytes after `03` are the
//! server's instance key, echoed by the master's `FE FD 08` keep-alive.
//!
//! [`Heartbeats`] is the shared timed-send machine ([`crate::announce`]) with GameSpy's
//! datagram: every 60 seconds (the spec's cadence), soon after the status changes but
//! not more often than every 10 seconds, at start and at exit, driven by the
//! [`Responder`](crate::responder::Responder): the I/O layer only sends what it hands
//! out and sleeps until it asks.
//!
//! Decoding is total and bounded (at most [`MAX_PAIRS`] pairs); nothing panics.

use std::net::SocketAddr;
use std::time::Instant;

use super::kind;
use crate::announce::{Announce, Announcer, Cadence, Occasion};
use crate::error::DecodeError;
use crate::model::Text;
use crate::reader::Reader;
use crate::Status;

/// Most key/value pairs a decoded heartbeat keeps.
pub const MAX_PAIRS: usize = 512;

/// The heartbeat's `statechanged` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateChanged {
    /// `0`: a regular heartbeat.
    Regular,
    /// `1`: the status changed since the last heartbeat.
    Changed,
    /// `2`: the server is shutting down.
    Exiting,
    /// `3`: the first heartbeat after start.
    Initial,
    /// Any other value, kept.
    Other(u8),
}

impl StateChanged {
    /// The wire value.
    pub fn code(self) -> u8 {
        match self {
            Self::Regular => 0,
            Self::Changed => 1,
            Self::Exiting => 2,
            Self::Initial => 3,
            Self::Other(c) => c,
        }
    }

    /// From the wire value.
    pub fn from_code(c: u8) -> Self {
        match c {
            0 => Self::Regular,
            1 => Self::Changed,
            2 => Self::Exiting,
            3 => Self::Initial,
            c => Self::Other(c),
        }
    }
}

/// A heartbeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heartbeat {
    /// The server's instance key (the 4 bytes after `03`).
    pub instance_key: u32,
    /// `localip0`, `localip1`, …: the server's local addresses, as text.
    pub local_ips: Vec<Text>,
    /// `localport`: the query port.
    pub local_port: Option<u16>,
    /// `natneg`: whether the server can do NAT negotiation.
    pub natneg: Option<bool>,
    /// `statechanged`.
    pub state_changed: Option<StateChanged>,
    /// `gamename`: the game's GameSpy name, e.g. `battlefield2`.
    pub game_name: Option<Text>,
    /// Every other pair (the server keys), in order.
    pub keys: Vec<(Text, Text)>,
}

impl Heartbeat {
    /// Appends the heartbeat's bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(kind::HEARTBEAT);
        out.extend_from_slice(&self.instance_key.to_be_bytes());
        let mut pair = |k: &str, v: &str| {
            out.extend(k.bytes().filter(|&b| b != 0));
            out.push(0);
            out.extend(v.bytes().filter(|&b| b != 0));
            out.push(0);
        };
        for (i, ip) in self.local_ips.iter().enumerate() {
            pair(&format!("localip{i}"), ip);
        }
        if let Some(p) = self.local_port {
            pair("localport", &p.to_string());
        }
        if let Some(n) = self.natneg {
            pair("natneg", if n { "1" } else { "0" });
        }
        if let Some(s) = self.state_changed {
            pair("statechanged", &s.code().to_string());
        }
        if let Some(g) = &self.game_name {
            pair("gamename", g);
        }
        for (k, v) in &self.keys {
            if !k.is_empty() {
                pair(k, v);
            }
        }
        out.push(0);
    }

    /// The heartbeat's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(256);
        self.encode(&mut v);
        v
    }

    /// Decodes a heartbeat datagram. A list cut short by the end of the datagram keeps
    /// what was complete.
    pub fn decode(datagram: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(datagram);
        if r.u8("ProtocolId")? != kind::HEARTBEAT {
            return Err(DecodeError::invalid(0, "ProtocolId", "not a heartbeat"));
        }
        let instance_key = u32::from_be_bytes(r.array::<4>("InstanceKey")?);
        let mut hb = Self {
            instance_key,
            local_ips: Vec::new(),
            local_port: None,
            natneg: None,
            state_changed: None,
            game_name: None,
            keys: Vec::new(),
        };
        let text = |b: &[u8]| -> Text { crate::text::decode_utf8_or_latin1(Err(b)).0 };
        for _ in 0..MAX_PAIRS {
            let Ok(k) = r.cstr("Key") else { break };
            if k.is_empty() {
                break;
            }
            let Ok(v) = r.cstr("Value") else { break };
            let (k, v) = (text(k), text(v));
            let t = v.trim();
            match k.as_str() {
                _ if k.starts_with("localip")
                    && k.get(7..).is_some_and(|n| n.parse::<u16>().is_ok()) =>
                {
                    hb.local_ips.push(v);
                }
                "localport" if t.parse::<u16>().is_ok() => hb.local_port = t.parse().ok(),
                "natneg" if t == "0" || t == "1" => hb.natneg = Some(t == "1"),
                "statechanged" if t.parse::<u8>().is_ok() => {
                    hb.state_changed = t.parse().ok().map(StateChanged::from_code);
                }
                "gamename" => hb.game_name = Some(v),
                _ => hb.keys.push((k, v)),
            }
        }
        Ok(hb)
    }
}

/// Heartbeats to GameSpy master servers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeartbeatConfig {
    /// The master servers.
    pub masters: Vec<SocketAddr>,
    /// The `gamename` to announce (default: the status's `game_name`).
    pub game_name: Option<Text>,
    /// How often (the spec's 60 s; 10 s after a change at the soonest).
    pub cadence: Cadence,
}

impl HeartbeatConfig {
    /// Heartbeats to `masters` on the spec's cadence.
    pub fn new(masters: Vec<SocketAddr>) -> Self {
        Self {
            masters,
            game_name: None,
            cadence: Cadence::default(),
        }
    }

    /// With this `gamename`.
    #[must_use]
    pub fn game_name(mut self, name: Option<Text>) -> Self {
        self.game_name = name;
        self
    }

    /// With this cadence.
    #[must_use]
    pub fn cadence(mut self, cadence: Cadence) -> Self {
        self.cadence = cadence;
        self
    }
}

/// What a GameSpy v3 heartbeat carries besides the status: the server's instance key
/// and the `gamename` to announce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gs3Heartbeat {
    instance_key: u32,
    game_name: Option<Text>,
}

impl Announce for Gs3Heartbeat {
    fn encode(&self, status: &Status, occasion: Occasion, local: SocketAddr, out: &mut Vec<u8>) {
        let mut keys = super::mapping::server_pairs(status);
        keys.retain(|(k, _)| k != "gamename");
        let ip = local.ip();
        let hb = Heartbeat {
            instance_key: self.instance_key,
            local_ips: if ip.is_unspecified() || !ip.is_ipv4() {
                Vec::new()
            } else {
                vec![ip.to_string().into()]
            },
            local_port: Some(local.port()),
            natneg: Some(false),
            state_changed: Some(match occasion {
                Occasion::Start => StateChanged::Initial,
                Occasion::Regular => StateChanged::Regular,
                Occasion::Changed => StateChanged::Changed,
                Occasion::Exit => StateChanged::Exiting,
            }),
            game_name: self.game_name.clone().or_else(|| status.game_name.clone()),
            keys,
        };
        hb.encode(out);
    }
}

/// The heartbeats of one listening address: at start (`statechanged` 3), every
/// `interval` (0), soon after a status change (1), and a last one marked "exiting" (2)
/// on [`close`](Announcer::close). The shared [`Announcer`] with GameSpy's datagram.
pub type Heartbeats = Announcer<Gs3Heartbeat>;

impl Announcer<Gs3Heartbeat> {
    /// Heartbeats from `local` (the query socket's address, which masters see), with the
    /// given instance key (unpredictable: the master's keep-alives echo it), the first
    /// due at `now`.
    pub fn new(
        config: HeartbeatConfig,
        local: SocketAddr,
        instance_key: u32,
        now: Instant,
    ) -> Self {
        let heartbeat = Gs3Heartbeat {
            instance_key,
            game_name: config.game_name,
        };
        Self::with(heartbeat, &config.masters, config.cadence, local, now)
    }

    /// The instance key the heartbeats carry.
    pub fn instance_key(&self) -> u32 {
        self.announce().instance_key
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn spec_prefix_and_round_trip() {
        let hb = Heartbeat {
            instance_key: 0x0102_0304,
            local_ips: vec!["192.168.1.3".into(), "192.168.1.4".into()],
            local_port: Some(29900),
            natneg: Some(false),
            state_changed: Some(StateChanged::Initial),
            game_name: Some("battlefield2".into()),
            keys: vec![("hostname".into(), "My server".into())],
        };
        let b = hb.to_bytes();
        // The spec's examples: 42 bytes of local IPs, then 15 bytes of localport.
        let ips = b"localip0\x00192.168.1.3\x00localip1\x00192.168.1.4\x00";
        assert_eq!(ips.len(), 42);
        assert_eq!(&b[..5], &[3, 1, 2, 3, 4]);
        assert_eq!(&b[5..47], ips);
        assert_eq!(&b[47..63], b"localport\x0029900\x00");
        assert_eq!(Heartbeat::decode(&b).unwrap(), hb);
        // truncated anywhere: no panic, keeps what was complete
        for n in 0..b.len() {
            let _ = Heartbeat::decode(&b[..n]);
        }
    }

    #[test]
    fn the_machine_sends_at_start_on_change_and_at_exit() {
        let t0 = Instant::now();
        let master: SocketAddr = "127.0.0.1:27900".parse().unwrap();
        let local: SocketAddr = "127.0.0.1:29900".parse().unwrap();
        let config = HeartbeatConfig::new(vec![master]).game_name(Some("bf2".into()));
        let mut h = Heartbeats::new(config, local, 0xabcd_0001, t0);
        let mut status = Status {
            host_name: Some("A".into()),
            ..Status::default()
        };
        h.handle_timeout(t0, &status);
        let (to, d) = h.poll_transmit().expect("the initial heartbeat");
        assert_eq!(to, master);
        let hb = Heartbeat::decode(&d).unwrap();
        assert_eq!(hb.state_changed, Some(StateChanged::Initial));
        assert_eq!(hb.local_port, Some(29900));
        assert_eq!(hb.game_name.as_deref(), Some("bf2"));
        assert!(h.poll_transmit().is_none());
        // nothing before the next check; a change is sent 10 s after the last one
        status.host_name = Some("B".into());
        let mut sent = Vec::new();
        for _ in 0..100 {
            let now = h.poll_timeout();
            h.handle_timeout(now, &status);
            if let Some((_, d)) = h.poll_transmit() {
                sent.push((now - t0, Heartbeat::decode(&d).unwrap().state_changed));
                break;
            }
        }
        assert_eq!(
            sent,
            [(Duration::from_secs(10), Some(StateChanged::Changed))]
        );
        h.close(&status);
        let (_, d) = h.poll_transmit().unwrap();
        assert_eq!(
            Heartbeat::decode(&d).unwrap().state_changed,
            Some(StateChanged::Exiting)
        );
    }
}

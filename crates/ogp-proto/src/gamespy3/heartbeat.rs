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
//! [`Schedule`] says when to send: every 60 seconds (the spec's cadence), and soon after
//! the status changes, but not more often than every 10 seconds.
//!
//! Decoding is total and bounded (at most [`MAX_PAIRS`] pairs); nothing panics.

use std::time::{Duration, Instant};

use super::kind;
use crate::error::DecodeError;
use crate::model::Text;
use crate::reader::Reader;

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
        let text = |b: &[u8]| -> Text {
            match std::str::from_utf8(b) {
                Ok(s) => s.into(),
                Err(_) => b.iter().map(|&c| char::from(c)).collect(),
            }
        };
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

/// When to send heartbeats: every `interval` (60 s), and after a status change once at
/// least `min_gap` (10 s) has passed since the last one.
#[derive(Debug, Clone)]
pub struct Schedule {
    interval: Duration,
    min_gap: Duration,
    last: Option<Instant>,
    changed: bool,
}

impl Schedule {
    /// The spec's cadence: 60 s, changes at most every 10 s.
    pub fn new() -> Self {
        Self::with(Duration::from_secs(60), Duration::from_secs(10))
    }

    /// A custom cadence.
    pub fn with(interval: Duration, min_gap: Duration) -> Self {
        Self {
            interval,
            min_gap: min_gap.min(interval),
            last: None,
            changed: false,
        }
    }

    /// Notes that the status changed.
    pub fn status_changed(&mut self) {
        self.changed = true;
    }

    /// When the next heartbeat is due.
    pub fn next_due(&self) -> Option<Instant> {
        let last = self.last?;
        Some(if self.changed {
            last + self.min_gap
        } else {
            last + self.interval
        })
    }

    /// The heartbeat to send at `now`, if one is due, and records it as sent.
    pub fn poll(&mut self, now: Instant) -> Option<StateChanged> {
        let kind = match self.next_due() {
            None => StateChanged::Initial,
            Some(due) if now >= due => {
                if self.changed {
                    StateChanged::Changed
                } else {
                    StateChanged::Regular
                }
            }
            Some(_) => return None,
        };
        self.last = Some(now);
        self.changed = false;
        Some(kind)
    }
}

impl Default for Schedule {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
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
    fn schedule_sends_at_start_every_minute_and_after_changes() {
        let t0 = Instant::now();
        let mut s = Schedule::new();
        assert_eq!(s.poll(t0), Some(StateChanged::Initial));
        assert_eq!(s.poll(t0 + Duration::from_secs(59)), None);
        assert_eq!(
            s.poll(t0 + Duration::from_secs(60)),
            Some(StateChanged::Regular)
        );
        s.status_changed();
        assert_eq!(s.poll(t0 + Duration::from_secs(65)), None);
        assert_eq!(
            s.next_due(),
            Some(t0 + Duration::from_secs(70)),
            "a change is sent 10 s after the last heartbeat"
        );
        assert_eq!(
            s.poll(t0 + Duration::from_secs(70)),
            Some(StateChanged::Changed)
        );
        assert_eq!(s.next_due(), Some(t0 + Duration::from_secs(130)));
    }
}

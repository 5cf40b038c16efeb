//! The OGP v1.01 Master Server Uplink: a server announcing itself to master servers.
//!
//! The spec (`000_…`, §3.1 type table: `0x03 - Master Server Uplink (answer only)`;
//! §3.3: body `UINT16 GameID`) gives the datagram and nothing else. What it leaves open
//! is chosen here and in `docs/master.md`:
//! - the datagram is an answer header (bAnswer set, no ChallengeNumber, no RequestID,
//!   no split fields: nothing was asked) of Type 0x03, then GameID, little-endian like
//!   every OGP integer;
//! - GameID is the configured one, else the status's, else 0 ("not known": a master
//!   learns the game when it queries the server back);
//! - it goes to each master from each listening address of the same family (IPv4 and
//!   IPv6 alike), at start, every 60 s, 10 s after a status change at the soonest, and
//!   once more when the server stops — an uplink carries no "exiting" flag, so that last
//!   one asks the master to look again now, and it finds the server gone.
//!
//! A master must not trust an uplink's source address (anyone can forge one): it lists
//! a server only after querying it back with a challenge ([`crate::announce`] only
//! sends; verifying is the master's).

use std::net::SocketAddr;
use std::time::Instant;

use super::header::{Header, PacketType};
use crate::announce::{Announce, Announcer, Cadence, Occasion};
use crate::Status;

/// OGP uplinks to master servers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UplinkConfig {
    /// The master servers.
    pub masters: Vec<SocketAddr>,
    /// The GameID to announce (default: the status's `game_id`, else 0).
    pub game_id: Option<u16>,
    /// How often (60 s; 10 s after a change at the soonest).
    pub cadence: Cadence,
}

impl UplinkConfig {
    /// Uplinks to `masters` every 60 s, and 10 s after a change at the soonest.
    pub fn new(masters: Vec<SocketAddr>) -> Self {
        Self {
            masters,
            game_id: None,
            cadence: Cadence::default(),
        }
    }

    /// With this GameID.
    #[must_use]
    pub fn game_id(mut self, id: Option<u16>) -> Self {
        self.game_id = id;
        self
    }

    /// With this cadence.
    #[must_use]
    pub fn cadence(mut self, cadence: Cadence) -> Self {
        self.cadence = cadence;
        self
    }
}

/// Appends a Master Server Uplink datagram announcing `game_id`.
pub fn encode_uplink(game_id: u16, out: &mut Vec<u8>) {
    Header::answer(PacketType::MASTER_UPLINK).encode(out);
    out.extend_from_slice(&game_id.to_le_bytes());
}

/// What an OGP uplink announces: the GameID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OgpUplink {
    game_id: Option<u16>,
}

impl Announce for OgpUplink {
    fn encode(&self, status: &Status, _: Occasion, _: SocketAddr, out: &mut Vec<u8>) {
        encode_uplink(self.game_id.or(status.game_id).unwrap_or(0), out);
    }
}

/// The uplinks of one listening address: the shared [`Announcer`] with OGP's datagram.
pub type Uplinks = Announcer<OgpUplink>;

impl Announcer<OgpUplink> {
    /// Uplinks from `local` (the query socket's address, which masters see and query
    /// back), the first due at `now`.
    pub fn new(config: UplinkConfig, local: SocketAddr, now: Instant) -> Self {
        let uplink = OgpUplink {
            game_id: config.game_id,
        };
        Self::with(uplink, &config.masters, config.cadence, local, now)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::ogp::{decode, Message};

    #[test]
    fn the_datagram_is_an_answer_of_type_3_with_the_game_id() {
        let mut d = Vec::new();
        encode_uplink(42, &mut d);
        // prefix, HeadSize 3, Type 3, flags: bAnswer only, GameID 42 little-endian
        assert_eq!(d, b"\xff\xff\xff\xffOGP\x00\x03\x03\x01\x2a\x00");
        let p = decode(&d).unwrap();
        assert!(p.header.is_answer());
        assert_eq!(p.header.challenge, None);
        assert_eq!(p.message, Message::MasterUplink { game_id: 42 });
    }

    #[test]
    fn uplinks_at_start_on_change_and_at_exit_with_the_right_game_id() {
        let t0 = Instant::now();
        let master: SocketAddr = "127.0.0.1:27900".parse().unwrap();
        let local: SocketAddr = "127.0.0.1:22222".parse().unwrap();
        let game = |d: &[u8]| match decode(d).unwrap().message {
            Message::MasterUplink { game_id } => game_id,
            m => panic!("{m:?}"),
        };
        let mut status = Status::default();
        let mut u = Uplinks::new(UplinkConfig::new(vec![master]), local, t0);
        u.handle_timeout(t0, &status);
        let (to, d) = u.poll_transmit().unwrap();
        assert_eq!((to, game(&d)), (master, 0), "no GameID known: 0");
        status.game_id = Some(7);
        let mut when = None;
        for _ in 0..100 {
            let now = u.poll_timeout();
            u.handle_timeout(now, &status);
            if let Some((_, d)) = u.poll_transmit() {
                when = Some((now - t0, game(&d)));
                break;
            }
        }
        assert_eq!(when, Some((Duration::from_secs(10), 7)));
        u.close(&status);
        assert_eq!(u.poll_transmit().map(|(_, d)| game(&d)), Some(7));
        // a configured GameID wins over the status's
        let mut u = Uplinks::new(UplinkConfig::new(vec![master]).game_id(Some(9)), local, t0);
        u.handle_timeout(t0, &status);
        assert_eq!(u.poll_transmit().map(|(_, d)| game(&d)), Some(9));
    }
}

//! The Mafia II Multiplayer query as a machine of the core's one-request shape (Mafia II
//! Online's is [`super::online::client`], the same machine with the other magic): the
//! magic, resent by the core's timers until a reply with it decodes.
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | the name |
//! | `player_count`, `slot_max` | players, max players (the text read as a number) |
//! | `game_type` | the game mode |
//! | `password` | the password byte |
//! | `players` | the names (Online: and pings) |
//!
//! `game_name` is `Mafia II Multiplayer` or `Mafia II Online`.

use super::{decode_reply, Reply, MAGIC_MP, MAGIC_ONLINE};
use crate::client_oneshot::{oneshot_machine, OneShot, Read};
use crate::model::Player;
use crate::protocol::Protocol;
use crate::Status;

/// What a Mafia II answer says beyond the status: the reply as sent.
pub type Details = Reply;

/// The status a reply describes (see the module's table).
pub fn reply_to_status(r: &Reply) -> Status {
    Status {
        game_name: Some(
            if r.online {
                "Mafia II Online"
            } else {
                "Mafia II Multiplayer"
            }
            .into(),
        ),
        host_name: Some(r.name.clone()),
        player_count: r.players.trim().parse().ok(),
        slot_max: r.max_players.trim().parse().ok(),
        game_type: Some(r.game_mode.clone()),
        password: Some(r.password),
        players: Some(
            r.player_list
                .iter()
                .map(|p| Player {
                    name: Some(p.name.clone()),
                    ping: p.ping.as_deref().and_then(|s| s.trim().parse().ok()),
                    ..Player::default()
                })
                .collect(),
        ),
        ..Status::default()
    }
}

/// Mafia II on the one-request shape: `ONLINE` picks Mafia II Online.
#[derive(Debug, Clone)]
pub struct Mafia2<const ONLINE: bool>;

impl<const ONLINE: bool> OneShot for Mafia2<ONLINE> {
    type Details = Details;
    const WHAT: &'static str = "info";

    fn new(_id: u32) -> Self {
        Self
    }

    fn request(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(if ONLINE { MAGIC_ONLINE } else { MAGIC_MP });
    }

    fn read(&mut self, datagram: &[u8]) -> Read<Details> {
        let magic = if ONLINE { MAGIC_ONLINE } else { MAGIC_MP };
        Read::decoded(
            decode_reply(datagram, ONLINE),
            magic.len(),
            "not a Mafia II reply with our magic",
            |r| (reply_to_status(&r), r.clone(), r.warnings),
        )
    }
}

oneshot_machine!(Protocol::Mafia2mp, Mafia2<false>, Details);

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::client_core::{drive_to_end, QueryDriver, Timing};
    use crate::error::DecodeErrorKind;
    use crate::mafia2::Player as WirePlayer;

    /// GameQ's M2MP capture's decoded values (`tests/Protocols/Providers/M2mp/`), rebuilt.
    pub(crate) fn sample(online: bool) -> Reply {
        let p = |n: &str, ping: &str| WirePlayer {
            name: n.into(),
            ping: online.then(|| ping.into()),
        };
        Reply {
            online,
            name: "Mafia 2 Roleplay".into(),
            players: "2".into(),
            max_players: "100".into(),
            game_mode: "Freeroam".into(),
            password: false,
            player_list: vec![p("Vito", "48"), p("Joe Barbaro", "112")],
            warnings: Vec::new(),
        }
    }

    #[test]
    fn both_magics_round_trip_and_map() {
        for online in [false, true] {
            let mut b = Vec::new();
            sample(online).encode(&mut b);
            assert_eq!(decode_reply(&b, online).unwrap(), sample(online));
            assert_eq!(
                decode_reply(&b, !online).unwrap_err().kind,
                DecodeErrorKind::BadMagic
            );
            for n in 0..b.len() {
                let _ = decode_reply(&b[..n], online);
            }
            let s = reply_to_status(&sample(online));
            assert_eq!((s.player_count, s.slot_max), (Some(2), Some(100)));
            let p = &s.players.unwrap()[1];
            assert_eq!(p.ping, online.then_some(112));
        }
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        let mut b = Vec::new();
        sample(false).encode(&mut b);
        m.handle_datagram(t0, b"M2Online\x01");
        assert_eq!(drive_to_end(&mut m, t0, Some(&b)), 1);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.game_type.as_deref(), Some("Freeroam"));
    }

    #[test]
    fn hostile_replies_are_bounded() {
        // a length byte of 0 is an error; 5,000 one-letter players: 1,024 kept, a warning
        assert!(decode_reply(b"M2MP\x00", false).is_err());
        let mut b = Vec::new();
        sample(false).encode(&mut b);
        for _ in 0..5_000 {
            b.extend_from_slice(b"\x02x");
        }
        let r = decode_reply(&b, false).unwrap();
        assert_eq!(r.player_list.len(), super::super::MAX_PLAYERS);
        assert_eq!(r.warnings.len(), 1);
        // a name running past the end
        let mut cut = Vec::new();
        sample(false).encode(&mut cut);
        cut.push(200);
        assert_eq!(decode_reply(&cut, false).unwrap_err().field, "player name");
    }
}

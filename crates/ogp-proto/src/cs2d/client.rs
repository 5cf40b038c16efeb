//! The CS2D query as a machine of the core's one-request shape: the 8-byte request,
//! resent by the core's timers until a reply starting `01 00 FB 01` decodes.
//!
//! | Status field | from |
//! |---|---|
//! | `host_name`, `map` | the name, the map |
//! | `player_count`, `slot_max`, `bot_count` | players, max players, bots |
//! | `password` | flag bit 0 |
//! | `game_mode` | the game mode's name (`Standard`, `Deathmatch`, `Team Deathmatch`, `Construction`, `Zombies!`), when sent |
//! | `players` | the list: id, name, team, score, deaths |
//! | `rules` | `gamemode` (its number), `registered_only`, `fog_of_war`, `friendly_fire`, `bots_enabled`, `lua_scripts`, `forced_light`, `recoil`, `offscreen_damage`, `downloads` (`0` or `1`) |
//!
//! `game_name` is `CS2D`.

use super::{decode_reply, Reply, REQUEST};
use crate::client_oneshot::{oneshot_machine, OneShot, Read};
use crate::model::{MapInfo, Player, Rules};
use crate::protocol::Protocol;
use crate::Status;

/// What a CS2D answer says beyond the status: the reply as sent.
pub type Details = Reply;

/// The name of game mode `m`.
pub fn mode_name(m: u8) -> Option<&'static str> {
    Some(match m {
        0 => "Standard",
        1 => "Deathmatch",
        2 => "Team Deathmatch",
        3 => "Construction",
        4 => "Zombies!",
        _ => return None,
    })
}

/// The status a reply describes (see the module's table).
pub fn reply_to_status(r: &Reply) -> Status {
    let bit = |b: u8, i: u32| if b & (1 << i) != 0 { "1" } else { "0" };
    let mut rules = Vec::new();
    if let Some(m) = r.game_mode {
        rules.push(("gamemode".into(), m.to_string().into()));
    }
    for (k, b, i) in [
        ("registered_only", r.flags, 1),
        ("fog_of_war", r.flags, 2),
        ("friendly_fire", r.flags, 3),
        ("bots_enabled", r.flags, 5),
        ("lua_scripts", r.flags, 6),
        ("forced_light", r.flags, 7),
        ("recoil", r.flags2, 0),
        ("offscreen_damage", r.flags2, 1),
        ("downloads", r.flags2, 2),
    ] {
        rules.push((k.into(), bit(b, i).into()));
    }
    Status {
        game_name: Some("CS2D".into()),
        host_name: Some(r.name.clone()),
        map: Some(MapInfo::named(r.map.clone())),
        player_count: Some(r.players.into()),
        slot_max: Some(r.max_players.into()),
        bot_count: Some(r.bots.into()),
        password: Some(r.flags & 1 != 0),
        game_mode: r.game_mode.and_then(mode_name).map(Into::into),
        players: r.player_list.as_ref().map(|l| {
            l.iter()
                .map(|p| Player {
                    id: Some(p.id.into()),
                    name: Some(p.name.clone()),
                    team: Some(p.team.into()),
                    score: Some(p.score),
                    deaths: Some(p.deaths),
                    ..Player::default()
                })
                .collect()
        }),
        rules: Some(Rules(rules)),
        ..Status::default()
    }
}

/// CS2D on the one-request shape.
#[derive(Debug, Clone)]
pub struct Cs2d;

impl OneShot for Cs2d {
    type Details = Details;
    const WHAT: &'static str = "info";

    fn new(_id: u32) -> Self {
        Self
    }

    fn request(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&REQUEST);
    }

    fn read(&mut self, datagram: &[u8]) -> Read<Details> {
        Read::decoded(decode_reply(datagram), 4, "not a CS2D reply", |r| {
            (reply_to_status(&r), r.clone(), r.warnings)
        })
    }
}

oneshot_machine!(Protocol::Cs2d, Cs2d, Details);

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::client_core::{drive_to_end, QueryDriver, QueryError, Timing};
    use crate::error::DecodeErrorKind;

    /// GameQ's first CS2D capture (`tests/Protocols/Providers/Cs2d/1_result.json`: its
    /// decoded values), rebuilt in the documented layout.
    pub(crate) fn gameq_1() -> Reply {
        let p = |id, name: &str, team, score, deaths| super::super::Player {
            id,
            name: name.into(),
            team,
            score,
            deaths,
        };
        Reply {
            flags: 0x60,
            name: "-[IFwsI]- SuperHero".into(),
            map: "sh_suntec".into(),
            players: 6,
            max_players: 32,
            game_mode: Some(1),
            bots: 6,
            flags2: 0,
            list_tag: [0xFB, 0x05],
            player_list: Some(vec![
                p(6, "figgernaggot", 1, 870, 959),
                p(2, "Gdip", 2, 557, 594),
                p(1, "señor naranja", 2, 386, 404),
            ]),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn a_reply_round_trips_and_maps() {
        let mut b = Vec::new();
        gameq_1().encode(&mut b);
        let r = decode_reply(&b).unwrap();
        assert_eq!(r, gameq_1());
        let s = reply_to_status(&r);
        assert_eq!(s.host_name.as_deref(), Some("-[IFwsI]- SuperHero"));
        assert_eq!(
            (s.player_count, s.slot_max, s.bot_count),
            (Some(6), Some(32), Some(6))
        );
        assert_eq!(s.game_mode.as_deref(), Some("Deathmatch"));
        assert_eq!(s.password, Some(false));
        let p = &s.players.as_ref().unwrap()[2];
        assert_eq!(
            (p.name.as_deref(), p.score, p.deaths),
            (Some("señor naranja"), Some(386), Some(404))
        );
        assert_eq!(s.rules.unwrap().get("lua_scripts"), Some("1"));
    }

    #[test]
    fn hostile_replies_are_errors_or_dropped() {
        let mut b = Vec::new();
        gameq_1().encode(&mut b);
        for n in 0..b.len() {
            // every cut is an error or a shorter answer, never a panic
            let _ = decode_reply(&b[..n]);
        }
        // a count that lies: 200 players announced, 3 sent
        let at = b.iter().position(|&x| x == 3).unwrap();
        let mut lying = b.clone();
        lying[at] = 200;
        let e = decode_reply(&lying).unwrap_err();
        assert!(matches!(e.kind, DecodeErrorKind::Truncated { .. }), "{e}");
        // a name longer than the datagram
        let mut long = super::super::REPLY_HEADER.to_vec();
        long.extend_from_slice(&[0, 255, b'a']);
        assert_eq!(decode_reply(&long).unwrap_err().field, "name");
        // trailing bytes: a warning
        let mut more = b.clone();
        more.extend_from_slice(&[0; 100]);
        assert_eq!(decode_reply(&more).unwrap().warnings.len(), 1);

        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(d, REQUEST);
        m.handle_datagram(t0, b"\xff\xff\xff\xffI");
        m.handle_datagram(t0, &lying);
        assert!(m.take_result().is_none());
        drive_to_end(&mut m, t0, None);
        match m.take_result() {
            Some(Err(QueryError::Malformed { .. })) => {}
            other => panic!("{other:?}"),
        }
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        assert_eq!(drive_to_end(&mut m, t0, Some(&b)), 1);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Cs2d);
        assert_eq!(a.status.map.unwrap().name, "sh_suntec");
    }
}

//! QuakeWorld and Quake 2 server variables and player lines to the shared [`Status`].
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | `hostname`, in plain text (below) |
//! | `host_name_raw` | the same as sent, when it differs |
//! | `map.name` | `map` (QuakeWorld), `mapname` (Quake 2) |
//! | `game_type` | `*gamedir`, `gamedir`, `gamename` (the mod: `ktx`, `qw`, `baseq2`) |
//! | `game_version` | `*version`, `version` |
//! | `slot_max` | `maxclients` |
//! | `password` | `needpass` (bit 1: players need one) |
//! | `player_count` | the player lines that are not spectators |
//! | `rules` | every variable as sent |
//!
//! Players: `id` the user id (QuakeWorld), `score` and `frags` the frags, `ping`, `time`
//! the minutes connected in seconds, `extra` the `skin`, `topcolor`, `bottomcolor` and
//! `team` (a team name); a spectator (frags `-9999` or `S`, name `\s\…`) has `team` -2
//! and no score.
//!
//! Plain text: the engines' character set puts a second, "brown" alphabet at bytes
//! 128–255 and digits at 18–27; `host_name` and a player's `name` fold those to ASCII
//! (as qstat and the clients' console do), and keep the bytes as sent (read as Latin-1)
//! in `host_name_raw` and `name_raw`.

use super::wire::{Dialect, PlayerLine, Reply};
use crate::model::{MapInfo, Player, Rules};
use crate::text::Text;
use crate::Status;

fn number<T: std::str::FromStr>(s: Option<&str>) -> Option<T> {
    s.and_then(|s| s.trim().parse().ok())
}

fn first<'a>(reply: &'a Reply, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| reply.get(k))
}

/// `s` in plain ASCII: the Quake character set's high half folded onto the low, its
/// digits and brackets mapped, other control characters dropped.
pub fn plain(s: &str) -> String {
    s.chars()
        .filter_map(|c| {
            let c = match u32::from(c) {
                n @ 0x80..=0xff => char::from_u32(n - 0x80)?,
                _ => c,
            };
            match u32::from(c) {
                n @ 0x12..=0x1b => char::from_u32(u32::from('0') + n - 0x12),
                0x10 => Some('['),
                0x11 => Some(']'),
                0x1c => Some('.'),
                n if n < 0x20 || n == 0x7f => None,
                _ => Some(c),
            }
        })
        .collect()
}

/// Reads `reply` into a fresh status.
pub fn reply_to_status(reply: &Reply) -> Status {
    let mut status = Status::default();
    if let Some(h) = reply.get("hostname") {
        let p = plain(h);
        status.host_name_raw = (p != h).then(|| h.into());
        status.host_name = Some(p.into());
    }
    if let Some(m) = first(reply, &["map", "mapname"]) {
        status.map = Some(MapInfo::named(m));
    }
    if let Some(g) = first(reply, &["*gamedir", "gamedir", "gamename"]) {
        status.game_type = Some(g.into());
    }
    if let Some(v) = first(reply, &["*version", "version"]) {
        status.game_version = Some(v.into());
    }
    status.slot_max = number(reply.get("maxclients"));
    if let Some(n) = number::<u32>(reply.get("needpass")) {
        status.password = Some(n & 1 != 0);
    }
    let players: Vec<Player> = reply
        .players
        .iter()
        .map(|l| player(l, reply.dialect))
        .collect();
    status.player_count = Some(
        players
            .iter()
            .filter(|p| p.team != Some(-2))
            .count()
            .try_into()
            .unwrap_or(u32::MAX),
    );
    status.players = Some(players);
    status.rules = Some(Rules(reply.vars.clone()));
    status
}

fn player(line: &PlayerLine, dialect: Dialect) -> Player {
    let col = |i: usize| line.before.get(i).map(Text::as_str);
    let (spectator_name, raw_name) = match line.name.strip_prefix("\\s\\") {
        Some(n) => (true, n),
        None => (false, line.name.as_str()),
    };
    let name = plain(raw_name);
    let mut p = Player::named(name.as_str());
    if name != raw_name {
        p.name_raw = Some(raw_name.into());
    }
    let (frags, ping) = match dialect {
        Dialect::QuakeWorld | Dialect::HexenWorld => {
            p.id = number(col(0));
            if let Some(m) = number::<u32>(col(2)) {
                p.time = Some(m.saturating_mul(60));
            }
            for (key, v) in ["skin", "topcolor", "bottomcolor", "team"]
                .into_iter()
                .zip(line.after.iter())
            {
                p.extra.insert(key.into(), v.clone());
            }
            (col(1), col(3))
        }
        Dialect::Quake2 => (col(0), col(1)),
    };
    let spectator = spectator_name || matches!(frags.map(str::trim), Some("S" | "-9999"));
    if spectator {
        p.team = Some(-2);
    } else {
        p.frags = number(frags);
        p.score = p.frags;
    }
    // A spectator's ping is sent negated.
    p.ping = number::<i64>(ping).and_then(|n| u32::try_from(n.unsigned_abs()).ok());
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quakeworld::wire::decode_reply;

    #[test]
    fn players_and_spectators_map() {
        let r = decode_reply(
            b"\xff\xff\xff\xffn\\hostname\\\xc1\xe2 \x12\x13\\map\\dm3\\maxclients\\8\\needpass\\4\n\
              7 12 3 25 \"Pl\xe1yer\" \"base\" 4 12 \"red\"\n\
              -8 -9999 1 -30 \"\\s\\Watcher\" \"\" 0 0 \"\"\n\x00",
        )
        .unwrap()
        .reply;
        let s = reply_to_status(&r);
        assert_eq!(s.host_name.as_deref(), Some("Ab 01"));
        assert!(s.host_name_raw.is_some());
        assert_eq!(s.map.as_ref().map(|m| m.name.as_str()), Some("dm3"));
        assert_eq!(
            (s.slot_max, s.player_count, s.password),
            (Some(8), Some(1), Some(false))
        );
        let ps = s.players.unwrap();
        assert_eq!(ps[0].name.as_deref(), Some("Player"));
        assert_eq!(
            (ps[0].id, ps[0].frags, ps[0].ping, ps[0].time),
            (Some(7), Some(12), Some(25), Some(180))
        );
        assert_eq!(ps[0].extra.get("team").map(Text::as_str), Some("red"));
        assert_eq!(
            (ps[1].name.as_deref(), ps[1].team, ps[1].frags, ps[1].ping),
            (Some("Watcher"), Some(-2), None, Some(30))
        );
    }
}

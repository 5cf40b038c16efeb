//! A reply's `\key\value` pairs to and from the shared [`Status`].
//!
//! | Status field | key |
//! |---|---|
//! | `host_name` | `hostname` (Quake III colour codes stripped for Medal of Honor) |
//! | `host_name_raw` | the same as sent, when it had colour codes |
//! | `game_name` | `gamename` (`ut`, `bfield1942`, `mohaa`…) |
//! | `game_version` | `gamever` |
//! | `connect_port` | `hostport` |
//! | `map.name` | `mapname` |
//! | `game_type` | `gametype` |
//! | `game_mode` | `gamemode` (`openplaying`, `pre`, `paused`…) |
//! | `player_count` | `numplayers` |
//! | `slot_max` | `maxplayers` |
//! | `reserved_slots` | `reservedslots` (Battlefield 1942) |
//! | `password` | `password` (`0`/`1`, `False`/`True`) |
//! | `rules` | every other key without an index, in wire order; a key sent twice (Unreal Tournament sends `gamever` and `minnetver` twice) is one rule with the last value, at its first place (a standard key's second value is a rule) |
//!
//! Keys of the form `BASE_N` (`N` up to 9 digits) describe player `N`, or team `N` when
//! `BASE` starts with `team` and is not `team` itself (`teamname_N`). Players are listed
//! in index order with `slot` = `N` (Medal of Honor skips indexes); a player's keys may
//! come in any order and in any part.
//!
//! | Player field | key |
//! |---|---|
//! | `name` | `player_N`, `playername_N` (Battlefield 1942), `name_N` |
//! | `name_raw` | the same as sent, when it had colour codes (Medal of Honor) |
//! | `frags` | `frags_N` |
//! | `score` | `score_N` |
//! | `ping` | `ping_N` (Unreal Tournament pads it with a space) |
//! | `team` | `team_N`: 0-based index into the teams, -1 for none. Battlefield 1942 counts from 1 (`team_N` 1 is `teamname_0`); Unreal Tournament says 255 for a spectator (none) |
//! | `deaths`, `kills` | `deaths_N`, `kills_N` |
//! | `model` | `mesh_N` (Unreal Tournament) |
//! | `extra` | every other key under its base: `skin`, `face`, `ngsecret`, `keyhash`…, and a value above that does not parse |
//!
//! Battlefield 1942 servers sometimes list one player twice (gamedig and opengsq both
//! note it): a later player with the `keyhash` of an earlier one is dropped and counted.
//! Team `N`: `teamname_N` is its name; other `team…_N` keys go to its `extra`.
//!
//! Back to the wire ([`status_to_pairs`]), the standard keys come first, then the rules,
//! players and teams; the names and team numbers of the game's dialect are used
//! (`playername_N` and 1-based teams for `bfield1942`). Decoding what it writes gives the
//! same status.

use std::collections::BTreeMap;

use crate::model::{MapInfo, Player, Rules, Status, Team};
use crate::quake3::color;
use crate::text::Text;

/// Most `extra` entries kept per player or team.
pub const MAX_EXTRA: usize = 64;

/// The games whose names carry Quake III colour codes.
const COLOR_GAMES: [&str; 3] = ["mohaa", "mohaas", "mohaab"];

/// What a reply's pairs say.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Mapped {
    /// The status.
    pub status: Status,
    /// Players dropped as duplicates (the same `keyhash` listed twice).
    pub duplicates: usize,
}

fn is_bf1942(game: Option<&str>) -> bool {
    game.is_some_and(|g| g.eq_ignore_ascii_case("bfield1942"))
}

fn has_colors(game: Option<&str>) -> bool {
    game.is_some_and(|g| COLOR_GAMES.iter().any(|c| g.eq_ignore_ascii_case(c)))
}

/// `BASE_N` split into `BASE` and `N`.
fn indexed(key: &str) -> Option<(&str, u32)> {
    // A key ends in a digit to be indexed: most rules are left at the first byte.
    if !key.as_bytes().last()?.is_ascii_digit() {
        return None;
    }
    let at = memchr::memrchr(b'_', key.as_bytes())?;
    let (base, n) = (key.get(..at)?, key.get(at + 1..)?);
    if base.is_empty() || n.is_empty() || n.len() > 9 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((base, n.parse().ok()?))
}

fn is_team_key(base: &str) -> bool {
    base.len() > 4
        && base
            .get(..4)
            .is_some_and(|p| p.eq_ignore_ascii_case("team"))
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

fn num<T: std::str::FromStr>(v: &str) -> Option<T> {
    v.trim().parse().ok()
}

/// `key` in lower case, in `buf` (without allocating: the keys matched by name are short;
/// a longer one matches none of them).
fn lower<'a>(key: &str, buf: &'a mut [u8; 16]) -> &'a [u8] {
    match buf.get_mut(..key.len()) {
        Some(dst) => {
            dst.copy_from_slice(key.as_bytes());
            dst.make_ascii_lowercase();
            dst
        }
        None => &[],
    }
}

/// Plain text and, when it had colour codes, the raw text.
fn plain_and_raw(v: &Text, colors: bool) -> (Text, Option<Text>) {
    if colors && color::has_colors(v) {
        (color::strip(v).into(), Some(v.clone()))
    } else {
        (v.clone(), None)
    }
}

/// The status the pairs of a reply describe.
pub fn reply_to_status(pairs: &[(Text, Text)]) -> Mapped {
    let game = super::wire::get(pairs, "gamename");
    let bf = is_bf1942(game);
    let colors = has_colors(game);
    let mut s = Status::default();
    let mut rules: Vec<(Text, Text)> = Vec::new();
    let mut players: BTreeMap<u32, Player> = BTreeMap::new();
    let mut teams: BTreeMap<u32, Team> = BTreeMap::new();
    for (k, v) in pairs {
        if let Some((base, n)) = indexed(k) {
            if base.eq_ignore_ascii_case("teamname") {
                teams.entry(n).or_default().name = Some(v.clone());
                continue;
            }
            if is_team_key(base) {
                let t = teams.entry(n).or_default();
                if t.extra.len() < MAX_EXTRA || t.extra.contains_key(base) {
                    t.extra.insert(base.into(), v.clone());
                }
                continue;
            }
            let p = players.entry(n).or_insert_with(|| Player {
                slot: Some(n),
                ..Player::default()
            });
            set_player(p, base, v, bf, colors);
            continue;
        }
        if !set_server(&mut s, k, v, colors) {
            rules.push((k.clone(), v.clone()));
        }
    }
    // A key sent twice keeps its first place and its last value (the state file's rules
    // are a map).
    if !crate::model::names_each_key_once(&rules) {
        rules = first_place_last_value(rules);
    }
    if !rules.is_empty() {
        s.rules = Some(Rules(rules));
    }
    let mut duplicates = 0;
    if !players.is_empty() {
        let mut seen: Vec<Text> = Vec::new();
        let mut list = Vec::with_capacity(players.len());
        for p in players.into_values() {
            if let Some(h) = p.extra.get("keyhash").filter(|h| !h.is_empty()) {
                if seen.contains(h) {
                    duplicates += 1;
                    continue;
                }
                seen.push(h.clone());
            }
            list.push(p);
        }
        s.players = Some(list);
    }
    if !teams.is_empty() {
        s.teams = Some(teams.into_values().collect());
    }
    Mapped {
        status: s,
        duplicates,
    }
}

/// Each key once, at its first place, with its last value.
fn first_place_last_value(rules: Vec<(Text, Text)>) -> Vec<(Text, Text)> {
    let mut out: Vec<(Text, Text)> = Vec::with_capacity(rules.len());
    if rules.len() <= crate::model::FEW_KEYS {
        let mut seen = crate::model::SeenKeys::default();
        for (k, v) in rules {
            if seen.mark(&k) {
                if let Some(slot) = out.iter_mut().find(|(earlier, _)| *earlier == k) {
                    slot.1 = v;
                    continue;
                }
            }
            out.push((k, v));
        }
        return out;
    }
    let mut at: BTreeMap<Text, usize> = BTreeMap::new();
    for (k, v) in rules {
        match at.get(&k) {
            Some(&i) => {
                if let Some(slot) = out.get_mut(i) {
                    slot.1 = v;
                }
            }
            None => {
                at.insert(k.clone(), out.len());
                out.push((k, v));
            }
        }
    }
    out
}

/// Sets the status field of a standard key seen first; false when the pair is a rule.
fn set_server(s: &mut Status, k: &str, v: &Text, colors: bool) -> bool {
    let mut buf = [0u8; 16];
    match lower(k, &mut buf) {
        b"hostname" if s.host_name.is_none() => {
            let (plain, raw) = plain_and_raw(v, colors);
            s.host_name = Some(plain);
            s.host_name_raw = raw;
        }
        b"gamename" if s.game_name.is_none() => s.game_name = Some(v.clone()),
        b"gamever" if s.game_version.is_none() => s.game_version = Some(v.clone()),
        b"mapname" if s.map.is_none() => s.map = Some(MapInfo::named(v.clone())),
        b"gametype" if s.game_type.is_none() => s.game_type = Some(v.clone()),
        b"gamemode" if s.game_mode.is_none() => s.game_mode = Some(v.clone()),
        b"hostport" if s.connect_port.is_none() => match num(v) {
            Some(p) => s.connect_port = Some(p),
            None => return false,
        },
        b"numplayers" if s.player_count.is_none() => match num(v) {
            Some(n) => s.player_count = Some(n),
            None => return false,
        },
        b"maxplayers" if s.slot_max.is_none() => match num(v) {
            Some(n) => s.slot_max = Some(n),
            None => return false,
        },
        b"reservedslots" if s.reserved_slots.is_none() => match num(v) {
            Some(n) => s.reserved_slots = Some(n),
            None => return false,
        },
        b"password" if s.password.is_none() => match parse_bool(v) {
            Some(b) => s.password = Some(b),
            None => return false,
        },
        _ => return false,
    }
    true
}

fn set_player(p: &mut Player, base: &str, v: &Text, bf: bool, colors: bool) {
    let mut buf = [0u8; 16];
    let ok = match lower(base, &mut buf) {
        b"player" | b"playername" | b"name" => {
            let (plain, raw) = plain_and_raw(v, colors);
            p.name = Some(plain);
            p.name_raw = raw;
            true
        }
        b"frags" => num(v).map(|n| p.frags = Some(n)).is_some(),
        b"score" => num(v).map(|n| p.score = Some(n)).is_some(),
        b"ping" => num(v).map(|n| p.ping = Some(n)).is_some(),
        b"deaths" => num(v).map(|n| p.deaths = Some(n)).is_some(),
        b"kills" => num(v).map(|n| p.kills = Some(n)).is_some(),
        b"team" => num::<i32>(v)
            .map(|t| p.team = Some(team_from_wire(t, bf)))
            .is_some(),
        b"mesh" => {
            p.model = Some(v.clone());
            true
        }
        _ => false,
    };
    if !ok && (p.extra.len() < MAX_EXTRA || p.extra.contains_key(base)) {
        p.extra.insert(base.into(), v.clone());
    }
}

fn team_from_wire(t: i32, bf: bool) -> i32 {
    if bf {
        if t >= 1 {
            t - 1
        } else {
            -1
        }
    } else if t == 255 || t < 0 {
        -1
    } else {
        t
    }
}

fn team_to_wire(t: i32, bf: bool) -> i32 {
    match (bf, t < 0) {
        (true, true) => 0,
        (true, false) => t.saturating_add(1),
        (false, true) => 255,
        (false, false) => t,
    }
}

/// Pairs a rule cannot be written as: what the decoder takes for packet structure
/// (`queryid`, an empty `final`) or for a player or team (`BASE_N`).
fn reserved(k: &str, v: &str) -> bool {
    k.eq_ignore_ascii_case("queryid")
        || (k.eq_ignore_ascii_case("final") && v.is_empty())
        || indexed(k).is_some()
}

/// Text with colour codes when the model keeps a raw form that still says the plain one.
fn raw_or_plain(plain: Option<&Text>, raw: Option<&Text>) -> Option<Text> {
    match (plain, raw) {
        (Some(p), Some(r)) if color::strip(r) == p.as_str() => Some(r.clone()),
        (Some(p), _) => Some(p.clone()),
        (None, r) => r.cloned(),
    }
}

/// The pairs of a reply for `status`: standard keys, rules, players, teams.
pub fn status_to_pairs(status: &Status) -> Vec<(Text, Text)> {
    let game = status.game_name.as_deref();
    let bf = is_bf1942(game);
    let mut out: Vec<(Text, Text)> = Vec::new();
    let mut put = |k: &str, v: Option<Text>| {
        if let Some(v) = v {
            out.push((k.into(), v));
        }
    };
    let dec = |n: Option<u32>| n.map(|n| Text::from(n.to_string()));
    put("gamename", status.game_name.clone());
    put("gamever", status.game_version.clone());
    put(
        "hostname",
        raw_or_plain(status.host_name.as_ref(), status.host_name_raw.as_ref()),
    );
    put(
        "hostport",
        status.connect_port.map(|p| Text::from(p.to_string())),
    );
    put("mapname", status.map.as_ref().map(|m| m.name.clone()));
    put("gametype", status.game_type.clone());
    put("gamemode", status.game_mode.clone());
    put("numplayers", dec(status.player_count));
    put("maxplayers", dec(status.slot_max));
    put("reservedslots", dec(status.reserved_slots));
    put(
        "password",
        status
            .password
            .map(|p| Text::from(if p { "1" } else { "0" })),
    );
    for (k, v) in status.rules.iter().flat_map(|r| r.iter()) {
        if !reserved(k, v) {
            out.push((k.into(), v.into()));
        }
    }
    let players: &[Player] = status.players.as_deref().unwrap_or_default();
    for (i, p) in players.iter().enumerate() {
        let n = p.slot.unwrap_or(u32::try_from(i).unwrap_or(u32::MAX));
        let mut put = |base: &str, v: Option<Text>| {
            if let Some(v) = v {
                out.push((format!("{base}_{n}").into(), v));
            }
        };
        let int = |v: Option<i32>| v.map(|n| Text::from(n.to_string()));
        put(
            if bf { "playername" } else { "player" },
            raw_or_plain(p.name.as_ref(), p.name_raw.as_ref()),
        );
        put("frags", int(p.frags));
        put("score", int(p.score));
        put("ping", dec(p.ping));
        put("team", int(p.team.map(|t| team_to_wire(t, bf))));
        put("deaths", dec(p.deaths));
        put("kills", dec(p.kills));
        put("mesh", p.model.clone());
        for (k, v) in &p.extra {
            // A key that would read as a team's is never a player's extra.
            if !k.is_empty() && !is_team_key(k) {
                put(k, Some(v.clone()));
            }
        }
    }
    let teams: &[Team] = status.teams.as_deref().unwrap_or_default();
    for (n, t) in teams.iter().enumerate() {
        if let Some(name) = &t.name {
            out.push((format!("teamname_{n}").into(), name.clone()));
        }
        for (k, v) in &t.extra {
            if is_team_key(k) && !k.eq_ignore_ascii_case("teamname") {
                out.push((format!("{k}_{n}").into(), v.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(s: &[(&str, &str)]) -> Vec<(Text, Text)> {
        s.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()
    }

    #[test]
    fn teams_of_each_dialect() {
        let bf = reply_to_status(&pairs(&[
            ("gamename", "bfield1942"),
            ("playername_0", "a"),
            ("team_0", "2"),
            ("teamname_0", "axis"),
            ("teamname_1", "allied"),
        ]))
        .status;
        let p = &bf.players.as_ref().unwrap()[0];
        assert_eq!(p.team, Some(1));
        assert_eq!(
            bf.teams.as_ref().unwrap()[1].name.as_deref(),
            Some("allied")
        );
        let ut = reply_to_status(&pairs(&[
            ("gamename", "ut"),
            ("player_3", "spec"),
            ("team_3", "255"),
            ("ping_3", " 86"),
            ("mesh_3", "Spectator"),
            ("skin_3", "None"),
        ]))
        .status;
        let p = &ut.players.as_ref().unwrap()[0];
        assert_eq!((p.team, p.ping, p.slot), (Some(-1), Some(86), Some(3)));
        assert_eq!(p.model.as_deref(), Some("Spectator"));
        assert_eq!(p.extra.get("skin").map(Text::as_str), Some("None"));
        for s in [bf, ut] {
            assert_eq!(reply_to_status(&status_to_pairs(&s)).status, s);
        }
    }

    #[test]
    fn duplicates_by_keyhash_are_dropped() {
        let m = reply_to_status(&pairs(&[
            ("playername_0", "a"),
            ("keyhash_0", "h1"),
            ("playername_1", "a"),
            ("keyhash_1", "h1"),
            ("playername_2", "b"),
            ("keyhash_2", "h2"),
        ]));
        assert_eq!(m.duplicates, 1);
        assert_eq!(m.status.players.unwrap().len(), 2);
    }

    #[test]
    fn colour_codes_only_in_the_games_that_use_them() {
        let m = reply_to_status(&pairs(&[("gamename", "mohaa"), ("hostname", "^3Luv")])).status;
        assert_eq!(m.host_name.as_deref(), Some("Luv"));
        assert_eq!(m.host_name_raw.as_deref(), Some("^3Luv"));
        let u = reply_to_status(&pairs(&[("gamename", "ut"), ("hostname", "^_^")])).status;
        assert_eq!(u.host_name.as_deref(), Some("^_^"));
        assert_eq!(reply_to_status(&status_to_pairs(&m)).status, m);
    }

    proptest::proptest! {
        /// Rules keep each key once, at its first place, with its last value, and the
        /// repeated-key check agrees with a map, on both sides of `FEW_KEYS`.
        #[test]
        fn rules_keep_first_place_and_last_value(
            keys in proptest::collection::vec("[a-c]{0,3}", 0..140)
        ) {
            let rules: Vec<(Text, Text)> = keys
                .iter()
                .enumerate()
                .map(|(i, k)| (Text::from(k.as_str()), Text::from(i.to_string())))
                .collect();
            let mut want: Vec<(Text, Text)> = Vec::new();
            for (k, v) in &rules {
                match want.iter_mut().find(|(w, _)| w == k) {
                    Some(slot) => slot.1 = v.clone(),
                    None => want.push((k.clone(), v.clone())),
                }
            }
            proptest::prop_assert_eq!(
                crate::model::names_each_key_once(&rules),
                want.len() == rules.len()
            );
            proptest::prop_assert_eq!(first_place_last_value(rules), want);
        }
    }
}

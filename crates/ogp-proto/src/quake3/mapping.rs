//! Quake III server variables and player lines to and from the shared
//! [`Status`].
//!
//! | Status field | from (first present) |
//! |---|---|
//! | `host_name` | `sv_hostname`, `hostname`, colour codes stripped |
//! | `host_name_raw` | the same as sent, with its `^` colour codes, when it has any |
//! | `map.name` | `mapname` |
//! | `game_name` | `gamename`, `com_gamename`, `fs_game` |
//! | `game_type` | `g_gametype`, `gametype` |
//! | `game_version` | `version`, `shortversion` |
//! | `slot_max` | `sv_maxclients` less `sv_privateClients` |
//! | `reserved_slots` | `sv_privateClients` |
//! | `password` | `g_needpass`, `pswrd`, `needpass` (`0` or not) |
//! | `player_count` | the player lines (`statusResponse`), else `clients` |
//! | `bot_count` | `bots` (DarkPlaces), else `clients` less `g_humanplayers` |
//! | `rules` | every variable as sent (the raw host name included) but `challenge` |
//!
//! The protocol number stays a rule (`protocol`). Players: `name` is the name without
//! colour codes and `name_raw` the name as sent, when they differ; `score` and `ping`
//! are the first two columns; `team` the third column (DarkPlaces) or the column after
//! the name (Warsow); a score that is not an integer is kept in `extra["score"]`.
//!
//! Back to the wire, the rules are written in order, with the variables above set from
//! the model where the model says otherwise (an edited host name wins over the raw one
//! it no longer matches). Teams go after the name when `gamename` is `Warsow`, before it
//! for DarkPlaces games (`Xonotic`, `Nexuiz`, `DarkPlaces-…`), and nowhere otherwise:
//! other engines write ioquake3's `score ping "name"`, the only player line that qstat,
//! gamedig and opengsq all read (gamedig and opengsq take a team column before the name
//! for the name).

use super::color;
use super::wire::{PlayerLine, Reply, ReplyKind};
use crate::model::{MapInfo, Player, Rules};
use crate::text::Text;
use crate::Status;

const HOST: [&str; 2] = ["sv_hostname", "hostname"];
const GAME: [&str; 3] = ["gamename", "com_gamename", "fs_game"];
const GAME_TYPE: [&str; 2] = ["g_gametype", "gametype"];
const VERSION: [&str; 2] = ["version", "shortversion"];
const PASSWORD: [&str; 3] = ["g_needpass", "pswrd", "needpass"];

fn first<'a>(reply: &'a Reply, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| reply.get(k))
}

fn number<T: std::str::FromStr>(s: Option<&str>) -> Option<T> {
    s.and_then(|s| s.trim().parse().ok())
}

/// Reads `reply` into `status`: the fields it has are set, the rules are added to
/// (a later reply's value of a key replaces an earlier one's).
pub fn reply_to_status(reply: &Reply, status: &mut Status) {
    if let Some(h) = first(reply, &HOST) {
        let plain = color::strip(h);
        status.host_name_raw = (plain != h).then(|| h.into());
        status.host_name = Some(plain.into());
    }
    if let Some(m) = reply.get("mapname") {
        status.map = Some(MapInfo::named(m));
    }
    if let Some(g) = first(reply, &GAME) {
        status.game_name = Some(g.into());
    }
    if let Some(t) = first(reply, &GAME_TYPE) {
        status.game_type = Some(t.into());
    }
    if let Some(v) = first(reply, &VERSION) {
        status.game_version = Some(v.into());
    }
    let max: Option<u32> = number(reply.get("sv_maxclients"));
    let private: Option<u32> = number(reply.get("sv_privateClients"));
    if let Some(m) = max {
        status.slot_max = Some(m.saturating_sub(private.unwrap_or(0)));
    }
    if private.is_some() {
        status.reserved_slots = private;
    }
    if let Some(p) = first(reply, &PASSWORD) {
        status.password = Some(p.trim() != "0" && !p.trim().is_empty());
    }
    let clients: Option<u32> = number(reply.get("clients"));
    let humans: Option<u32> = number(reply.get("g_humanplayers"));
    let bots: Option<u32> = number(reply.get("bots"));
    match reply.kind {
        ReplyKind::Status => {
            // The list is the count: an earlier infoResponse's `clients` gives way.
            status.players = Some(players(reply));
            status.player_count = None;
        }
        ReplyKind::Info => {
            if status.players.is_none() && clients.is_some() {
                status.player_count = clients;
            }
        }
    }
    if let Some(b) = bots.or_else(|| clients.zip(humans).map(|(c, h)| c.saturating_sub(h))) {
        status.bot_count = Some(b);
    }
    let rules = status.rules.get_or_insert_with(Rules::default);
    for (k, v) in &reply.vars {
        if k.eq_ignore_ascii_case("challenge") {
            continue;
        }
        match rules.0.iter_mut().find(|(rk, _)| rk == k) {
            Some(slot) => slot.1 = v.clone(),
            None => rules.0.push((k.clone(), v.clone())),
        }
    }
}

/// The players of a `statusResponse`.
pub fn players(reply: &Reply) -> Vec<Player> {
    reply.players.iter().map(player).collect()
}

fn player(line: &PlayerLine) -> Player {
    let plain = color::strip(&line.name);
    let mut p = Player::named(plain.as_str());
    if plain != line.name.as_str() {
        p.name_raw = Some(line.name.clone());
    }
    let col = |i: usize| line.before.get(i).map(Text::as_str);
    match number::<i32>(col(0)) {
        Some(s) => p.score = Some(s),
        None => {
            if let Some(s) = col(0) {
                p.extra.insert("score".into(), s.into());
            }
        }
    }
    p.ping = number(col(1));
    p.team = number(col(2)).or_else(|| number(line.after.first().map(Text::as_str)));
    p
}

/// The value the model gives `key`, if it has one.
fn model_value(status: &Status, key: &str, kind: ReplyKind) -> Option<Text> {
    let dec = |v: u32| Text::from(v.to_string());
    match key {
        "mapname" => status.map.as_ref().map(|m| m.name.clone()),
        "gamename" => status.game_name.clone(),
        "g_gametype" | "gametype" => status.game_type.clone(),
        "version" => status.game_version.clone(),
        "sv_maxclients" => status
            .slot_max
            .map(|m| dec(m.saturating_add(status.reserved_slots.unwrap_or(0)))),
        "sv_privateClients" => status.reserved_slots.map(dec),
        "g_needpass" => status
            .password
            .map(|p| Text::from(if p { "1" } else { "0" })),
        "clients" if kind == ReplyKind::Info => status.player_count().map(dec),
        _ => None,
    }
}

/// The host name with its colour codes, when the model keeps one that still says what
/// `host_name` says; else the plain name.
fn host_name_out(status: &Status) -> Option<Text> {
    status
        .host_name_raw
        .clone()
        .filter(|raw| agrees("hostname", raw, status, ReplyKind::Info))
        .or_else(|| status.host_name.clone())
}

/// Whether the raw `value` of `key` already says what the model says.
fn agrees(key: &str, value: &str, status: &Status, kind: ReplyKind) -> bool {
    if HOST.contains(&key) {
        return status
            .host_name
            .as_deref()
            .is_none_or(|h| color::strip(value) == h);
    }
    if PASSWORD.contains(&key) {
        return status
            .password
            .is_none_or(|p| (value.trim() != "0" && !value.trim().is_empty()) == p);
    }
    match model_value(status, key, kind) {
        Some(m) => m == value,
        None => true,
    }
}

/// The variables of a reply of `kind` for `status` (without a challenge).
///
/// A `statusResponse` carries every rule; an `infoResponse` the short set ioquake3
/// sends (`hostname`, `mapname`, `clients`, `sv_maxclients`, `gametype`, `g_needpass`,
/// `protocol`, `gamename`, and `g_humanplayers` when the bot count is known).
pub fn status_to_vars(status: &Status, kind: ReplyKind) -> Vec<(Text, Text)> {
    let mut vars: Vec<(Text, Text)> = Vec::new();
    let rule = |k: &str| status.rules.as_ref().and_then(|r| r.get(k));
    let set = |vars: &mut Vec<(Text, Text)>, key: &str, value: Option<Text>| {
        if let Some(v) = value {
            match vars.iter_mut().find(|(k, _)| k.eq_ignore_ascii_case(key)) {
                Some(slot) => slot.1 = v,
                None => vars.push((key.into(), v)),
            }
        }
    };
    let host_key = match kind {
        ReplyKind::Status => "sv_hostname",
        ReplyKind::Info => "hostname",
    };
    match kind {
        ReplyKind::Status => {
            for (k, v) in status.rules.iter().flat_map(|r| r.iter()) {
                if k.eq_ignore_ascii_case("challenge") {
                    continue;
                }
                let keep = agrees(k, v, status, kind);
                let v = if keep {
                    Text::from(v)
                } else if HOST.contains(&k) || PASSWORD.contains(&k) {
                    match HOST.contains(&k) {
                        true => host_name_out(status).unwrap_or_default(),
                        false => Text::from(if status.password == Some(true) {
                            "1"
                        } else {
                            "0"
                        }),
                    }
                } else {
                    model_value(status, k, kind).unwrap_or_else(|| Text::from(v))
                };
                vars.push((k.into(), v));
            }
        }
        ReplyKind::Info => {
            // The raw host name, when it still says what the model says.
            let raw = HOST
                .iter()
                .find_map(|k| rule(k))
                .filter(|v| agrees("hostname", v, status, kind));
            set(
                &mut vars,
                host_key,
                raw.map(Text::from).or_else(|| host_name_out(status)),
            );
            for k in ["mapname", "clients", "sv_maxclients", "gametype"] {
                set(&mut vars, k, model_value(status, k, kind));
            }
            // DarkPlaces counts bots (`bots`), ioquake3 humans (`g_humanplayers`).
            if rule("bots").is_some() {
                set(
                    &mut vars,
                    "bots",
                    status.bot_count().map(|b| b.to_string().into()),
                );
            } else if let (Some(c), Some(b)) = (status.player_count(), status.bot_count()) {
                set(
                    &mut vars,
                    "g_humanplayers",
                    Some(c.saturating_sub(b).to_string().into()),
                );
            }
            set(
                &mut vars,
                "g_needpass",
                model_value(status, "g_needpass", kind),
            );
            for k in ["protocol", "pure"] {
                set(&mut vars, k, rule(k).map(Text::from));
            }
            set(&mut vars, "gamename", status.game_name.clone());
            return vars;
        }
    }
    // Model fields the rules did not carry.
    let has = |vars: &Vec<(Text, Text)>, keys: &[&str]| {
        vars.iter()
            .any(|(k, _)| keys.iter().any(|x| k.eq_ignore_ascii_case(x)))
    };
    if !has(&vars, &HOST) {
        set(&mut vars, host_key, host_name_out(status));
    }
    for (keys, key) in [
        (&["mapname"][..], "mapname"),
        (&GAME[..], "gamename"),
        (&GAME_TYPE[..], "g_gametype"),
        (&VERSION[..], "version"),
        (&["sv_maxclients"][..], "sv_maxclients"),
        (&["sv_privateClients"][..], "sv_privateClients"),
        (&PASSWORD[..], "g_needpass"),
    ] {
        if !has(&vars, keys) {
            set(&mut vars, key, model_value(status, key, kind));
        }
    }
    vars
}

/// The player lines for `status`.
pub fn status_to_players(status: &Status) -> Vec<PlayerLine> {
    let game = status.game_name.as_deref().unwrap_or_default();
    let warsow = game.eq_ignore_ascii_case("warsow");
    let darkplaces = ["xonotic", "nexuiz"]
        .iter()
        .any(|g| game.eq_ignore_ascii_case(g))
        || game
            .get(..10)
            .is_some_and(|p| p.eq_ignore_ascii_case("darkplaces"));
    let players = status.players.as_deref().unwrap_or_default();
    players
        .iter()
        .map(|p| {
            let score = match (p.score, p.extra.get("score")) {
                (Some(s), _) => Text::from(s.to_string()),
                (None, Some(s)) => s.clone(),
                (None, None) => Text::from("0"),
            };
            let mut before = vec![score, Text::from(p.ping.unwrap_or(0).to_string())];
            let mut after = Vec::new();
            if let Some(t) = p.team {
                if warsow {
                    after.push(Text::from(t.to_string()));
                } else if darkplaces {
                    before.push(Text::from(t.to_string()));
                }
            }
            let name = match (&p.name_raw, &p.name) {
                (Some(raw), Some(plain)) if color::strip(raw) == plain.as_str() => raw.clone(),
                (_, Some(plain)) => plain.clone(),
                (Some(raw), None) => raw.clone(),
                (None, None) => Text::default(),
            };
            PlayerLine {
                before,
                name,
                after,
            }
        })
        .collect()
}

/// The whole reply of `kind` for `status` (no challenge).
pub fn status_to_reply(status: &Status, kind: ReplyKind) -> Reply {
    Reply {
        kind,
        vars: status_to_vars(status, kind),
        players: match kind {
            ReplyKind::Status => status_to_players(status),
            ReplyKind::Info => Vec::new(),
        },
    }
}

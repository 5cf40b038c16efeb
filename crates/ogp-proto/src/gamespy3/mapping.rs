//! [`ServerInfo`] to and from the shared [`Status`], key by key as `docs/gamespy3.md`
//! (§ Mapping) lists them.
//!
//! * Server keys: `hostname`, `gamename`, `gamever`, `hostport`, `mapname`, `gametype`,
//!   `gamevariant` (the mod), `numplayers`, `maxplayers`, `gamemode`, `password` map to
//!   the status fields (Minecraft's `map` and `version` stand for `mapname` and
//!   `gamever` in a reply without those); every other key is a rule, in wire order. Rules whose key is one
//!   of those standard keys are not written twice.
//! * Player columns: `player_` name, `score_`, `ping_`, `team_`, `deaths_`, `kills_`,
//!   `pid_` (id), `skill_`… : the known ones map to the player's fields, the others go
//!   to `Player::extra` under the key without its `_`. `team_` is 1-based on the wire
//!   (Battlefield 2: `team_` 1 is `team_t`'s first entry), 0-based in the model; 0 or a
//!   negative wire value is "no team" (-1).
//! * Team columns: `team_t` name, `score_t` score; others go to `Team::extra` under the
//!   key without its `_t`.
//!
//! Nothing here panics; numbers that do not parse are kept as text in `extra` or rules.

use super::reply::{Column, ServerInfo, MAX_VALUE};
use crate::model::{MapInfo, ModInfo, Player, Rules, Status, Team, Text};

/// Most players and teams the responder writes (the offset byte can address 256).
pub const MAX_ROWS: usize = 256;

/// The standard server keys, in the order the responder writes them.
pub const STANDARD_KEYS: [&str; 11] = [
    "hostname",
    "gamename",
    "gamever",
    "hostport",
    "mapname",
    "gametype",
    "gamevariant",
    "numplayers",
    "maxplayers",
    "gamemode",
    "password",
];

/// Sub-protocol C header indexes (spec table): index → key. Unknown indexes (`09`,
/// `0c`–`0f`, `12`, `13`, marked "??" in the spec) have no key.
pub fn header_key(index: u8) -> Option<&'static str> {
    Some(match index {
        0x01 => "hostname",
        0x02 => "gamename",
        0x03 => "gamever",
        0x04 => "hostport",
        0x05 => "mapname",
        0x06 => "gametype",
        0x07 => "gamevariant",
        0x08 => "numplayers",
        0x0a => "maxplayers",
        0x0b => "gamemode",
        0x10 => "timelimit",
        0x11 => "roundtime",
        _ => return None,
    })
}

fn num<T: ToString>(v: Option<T>) -> Option<Text> {
    v.map(|n| Text::from(n.to_string()))
}

/// The server keys and values for `status`, standard keys first, then the rules.
pub fn server_pairs(status: &Status) -> Vec<(Text, Text)> {
    let mut out: Vec<(Text, Text)> = Vec::new();
    let mut put = |k: &str, v: Option<Text>| {
        if let Some(v) = v {
            out.push((k.into(), v));
        }
    };
    put(
        "hostname",
        Some(status.host_name.clone().unwrap_or_default()),
    );
    put("gamename", status.game_name.clone());
    put("gamever", status.game_version.clone());
    put("hostport", num(status.connect_port));
    put(
        "mapname",
        Some(
            status
                .map
                .as_ref()
                .map(|m| m.name.clone())
                .unwrap_or_default(),
        ),
    );
    put("gametype", status.game_type.clone());
    put(
        "gamevariant",
        status.mod_info.as_ref().map(|m| m.name.clone()),
    );
    put(
        "numplayers",
        Some(Text::from(status.player_count().unwrap_or(0).to_string())),
    );
    put(
        "maxplayers",
        Some(Text::from(status.slot_max.unwrap_or(0).to_string())),
    );
    put("gamemode", status.game_mode.clone());
    put(
        "password",
        status
            .password
            .map(|p| Text::from(if p { "1" } else { "0" })),
    );
    if let Some(rules) = &status.rules {
        for (k, v) in rules.iter() {
            if k.is_empty() || STANDARD_KEYS.contains(&k) {
                continue;
            }
            out.push((k.into(), v.into()));
        }
    }
    out
}

/// The value of a sub-protocol C header index among `pairs` (the status's
/// [`server_pairs`], rules included): empty when the index or the key is unknown.
pub fn header_value(pairs: &[(Text, Text)], index: u8) -> Text {
    header_key(index)
        .and_then(|key| pairs.iter().find(|(k, _)| k == key))
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

/// `status` as a full reply: server keys, player and team columns (at most
/// [`MAX_ROWS`] players and teams).
pub fn status_to_info(status: &Status) -> ServerInfo {
    let players: &[Player] = status.players.as_deref().unwrap_or_default();
    let players = players
        .get(..players.len().min(MAX_ROWS))
        .unwrap_or_default();
    let teams: &[Team] = status.teams.as_deref().unwrap_or_default();
    let teams = teams.get(..teams.len().min(MAX_ROWS)).unwrap_or_default();
    ServerInfo {
        server: server_pairs(status),
        players: player_columns(players),
        teams: team_columns(teams),
    }
}

/// A known column: its key, whether it is numeric, and how to read it from a row.
type Known<'a, R> = (&'a str, bool, &'a dyn Fn(&R) -> Option<Text>);

/// Columns of one kind: a known column is written when any row has its value (rows
/// without it get `"0"` for numbers, `" "` for text); extra keys likewise.
fn columns<R>(
    rows: &[R],
    known: &[Known<'_, R>],
    extra: impl Fn(&R) -> &std::collections::BTreeMap<Text, Text>,
    suffix: &str,
) -> Vec<Column> {
    let mut out = Vec::new();
    for (key, numeric, get) in known {
        let vals: Vec<Option<Text>> = rows.iter().map(get).collect();
        if vals.iter().all(Option::is_none) {
            continue;
        }
        let fill = if *numeric { "0" } else { " " };
        out.push(Column {
            key: (*key).into(),
            values: vals
                .into_iter()
                .map(|v| v.unwrap_or_else(|| fill.into()))
                .collect(),
        });
    }
    let mut keys: Vec<&Text> = Vec::new();
    for r in rows {
        for k in extra(r).keys() {
            if !keys.contains(&k) && keys.len() < 64 {
                keys.push(k);
            }
        }
    }
    for k in keys {
        let key: Text = format!("{k}{suffix}").into();
        if out.iter().any(|c: &Column| c.key == key) {
            continue;
        }
        out.push(Column {
            key,
            values: rows
                .iter()
                .map(|r| extra(r).get(k).cloned().unwrap_or_else(|| " ".into()))
                .collect(),
        });
    }
    out
}

/// Player columns for `players`.
pub fn player_columns(players: &[Player]) -> Vec<Column> {
    let name = |p: &Player| Some(p.name.clone().unwrap_or_default());
    let score = |p: &Player| num(p.score.or(p.frags));
    let ping = |p: &Player| num(p.ping);
    let team = |p: &Player| num(p.team.map(|t| if t >= 0 { t.saturating_add(1) } else { 0 }));
    let deaths = |p: &Player| num(p.deaths);
    let kills = |p: &Player| num(p.kills);
    let pid = |p: &Player| num(p.id);
    let known: [Known<'_, Player>; 7] = [
        ("player_", false, &name),
        ("score_", true, &score),
        ("ping_", true, &ping),
        ("team_", true, &team),
        ("deaths_", true, &deaths),
        ("kills_", true, &kills),
        ("pid_", true, &pid),
    ];
    columns(players, &known, |p| &p.extra, "_")
}

/// Team columns for `teams`.
pub fn team_columns(teams: &[Team]) -> Vec<Column> {
    let name = |t: &Team| Some(t.name.clone().unwrap_or_default());
    let score = |t: &Team| num(t.score);
    let known: [Known<'_, Team>; 2] = [("team_t", false, &name), ("score_t", true, &score)];
    columns(teams, &known, |t| &t.extra, "_t")
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// The status a reply describes.
pub fn info_to_status(info: &ServerInfo) -> Status {
    let mut s = Status::default();
    let mut rules = Vec::new();
    // Minecraft's query says `map` and `version` where GameSpy says `mapname` and
    // `gamever`: read as those only when the reply has no standard key for them.
    let has = |key: &str| info.server.iter().any(|(k, _)| k == key);
    let (map_key, version_key) = (
        if has("mapname") { "mapname" } else { "map" },
        if has("gamever") { "gamever" } else { "version" },
    );
    for (k, v) in &info.server {
        let k = k.as_str();
        let used = match k {
            _ if k == version_key && s.game_version.is_none() => {
                s.game_version = Some(v.clone());
                true
            }
            _ if k == map_key && s.map.is_none() => {
                s.map = Some(MapInfo::named(v.clone()));
                true
            }
            "hostname" if s.host_name.is_none() => {
                s.host_name = Some(v.clone());
                true
            }
            "gamename" if s.game_name.is_none() => {
                s.game_name = Some(v.clone());
                true
            }
            "hostport" if s.connect_port.is_none() => v
                .trim_ascii()
                .parse()
                .map(|p| s.connect_port = Some(p))
                .is_ok(),
            "gametype" if s.game_type.is_none() => {
                s.game_type = Some(v.clone());
                true
            }
            "gamevariant" if s.mod_info.is_none() => {
                s.mod_info = Some(ModInfo {
                    name: v.clone(),
                    identifier: None,
                    size: None,
                    version: None,
                    url: None,
                    author: None,
                });
                true
            }
            "numplayers" if s.player_count.is_none() => v
                .trim_ascii()
                .parse()
                .map(|n| s.player_count = Some(n))
                .is_ok(),
            "maxplayers" if s.slot_max.is_none() => {
                v.trim_ascii().parse().map(|n| s.slot_max = Some(n)).is_ok()
            }
            "gamemode" if s.game_mode.is_none() => {
                s.game_mode = Some(v.clone());
                true
            }
            "password" if s.password.is_none() => {
                parse_bool(v).map(|b| s.password = Some(b)).is_some()
            }
            _ => false,
        };
        if !used {
            rules.push((Text::from(k), v.clone()));
        }
    }
    if !rules.is_empty() {
        s.rules = Some(Rules(rules));
    }
    let rows = |cols: &[Column]| cols.iter().map(|c| c.values.len()).max().unwrap_or(0);
    let n = rows(&info.players);
    if n > 0 || info.players.iter().any(|c| c.key == "player_") {
        let mut players = vec![Player::default(); n];
        for c in &info.players {
            // The key is read once per column, not once per value.
            let field = PlayerField::of(&c.key);
            let extra = base(&c.key, "_");
            for (p, v) in players.iter_mut().zip(&c.values) {
                set_player(p, field, &extra, v);
            }
        }
        s.players = Some(players);
    }
    let n = rows(&info.teams);
    if n > 0 {
        let mut teams = vec![Team::default(); n];
        for c in &info.teams {
            let field = TeamField::of(&c.key);
            let extra = base(&c.key, "_t");
            for (t, v) in teams.iter_mut().zip(&c.values) {
                set_team(t, field, &extra, v);
            }
        }
        s.teams = Some(teams);
    }
    s
}

fn base(key: &str, suffix: &str) -> Text {
    Text::from(key.strip_suffix(suffix).unwrap_or(key))
}

/// What a player column carries, from its key (`player_`, `score_`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PlayerField {
    Name,
    Score,
    Ping,
    Team,
    Deaths,
    Kills,
    Id,
    Other,
}

impl PlayerField {
    fn of(key: &str) -> Self {
        match key {
            "player_" | "name_" => Self::Name,
            "score_" => Self::Score,
            "ping_" => Self::Ping,
            "team_" => Self::Team,
            "deaths_" => Self::Deaths,
            "kills_" => Self::Kills,
            "pid_" => Self::Id,
            _ => Self::Other,
        }
    }
}

/// Sets a player's field from a column value; a value that does not parse, and any
/// other column, goes to `extra` under the column's base name `extra_key`.
fn set_player(p: &mut Player, field: PlayerField, extra_key: &Text, v: &Text) {
    let t = v.trim_ascii();
    let ok = match field {
        PlayerField::Name => {
            p.name = Some(v.clone());
            true
        }
        PlayerField::Score => t.parse().map(|n| p.score = Some(n)).is_ok(),
        PlayerField::Ping => t.parse().map(|n| p.ping = Some(n)).is_ok(),
        PlayerField::Team => t
            .parse::<i32>()
            .map(|n| p.team = Some(if n >= 1 { n - 1 } else { -1 }))
            .is_ok(),
        PlayerField::Deaths => t.parse().map(|n| p.deaths = Some(n)).is_ok(),
        PlayerField::Kills => t.parse().map(|n| p.kills = Some(n)).is_ok(),
        PlayerField::Id => t.parse().map(|n| p.id = Some(n)).is_ok(),
        PlayerField::Other => false,
    };
    if !ok && p.extra.len() < 64 {
        p.extra.insert(extra_key.clone(), cap(v));
    }
}

/// What a team column carries, from its key (`team_t`, `score_t`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TeamField {
    Name,
    Score,
    Other,
}

impl TeamField {
    fn of(key: &str) -> Self {
        match key {
            "team_t" => Self::Name,
            "score_t" => Self::Score,
            _ => Self::Other,
        }
    }
}

fn set_team(tm: &mut Team, field: TeamField, extra_key: &Text, v: &Text) {
    let ok = match field {
        TeamField::Name => {
            tm.name = Some(v.clone());
            true
        }
        TeamField::Score => v.trim_ascii().parse().map(|n| tm.score = Some(n)).is_ok(),
        TeamField::Other => false,
    };
    if !ok && tm.extra.len() < 64 {
        tm.extra.insert(extra_key.clone(), cap(v));
    }
}

fn cap(v: &Text) -> Text {
    if v.len() <= MAX_VALUE * 4 {
        v.clone()
    } else {
        let mut end = MAX_VALUE * 4;
        while !v.is_char_boundary(end) {
            end -= 1;
        }
        Text::from(v.get(..end).unwrap_or_default())
    }
}

//! The status model in GQP records: what the required `identify` command and our
//! extension commands answer, and how a client reads it back (G18, G19).
//!
//! * `identify`: `DC2 gamename US …`, `gamever`, `netver` (the draft's output).
//! * `serverinfo`: one `DC2 key US value` per scalar field the status has, keys as in the
//!   state file with `.` for nested maps and mods (`map.name`, `mod.version`).
//! * `rules`: one `DC2 name US value` per rule, in order, duplicates kept.
//! * `players`, `teams`, `addons`, `limits`: one `DC4` labelled array per entry, labelled
//!   with the entry's position (`0`, `1`, …), whose elements alternate key and value for
//!   the fields the entry has. Per-entry keys are exact, so an entry may have fields its
//!   neighbours lack; `extra.<key>` carries the model's `extra` maps.
//!
//! Numbers are decimal, booleans `1`/`0`, enums their state-file names (a number for a
//! value without a name), MD5 digests hex, player addresses as in the state file. A list
//! the status does not report (`None`) is answered 31; an empty list is an empty reply
//! (`ACK`). Colour information and the A2S block are not carried. Reading back never
//! fails: values that do not parse are skipped with a [`ModelWarning`]. Nothing here
//! panics.

use std::fmt;
use std::net::SocketAddr;

use compact_str::format_compact;

use super::wire::{Record, Reply};
use crate::model::Text;
use crate::{
    AddOn, Limit, LimitType, MapInfo, ModInfo, Os, Player, PlayerAddress, Rules, ServerType,
    Status, Team,
};

/// The extension commands that carry the status model, in the order a status query asks
/// them.
pub const STATUS_COMMANDS: [&str; 6] = [
    "serverinfo",
    "players",
    "teams",
    "rules",
    "addons",
    "limits",
];

/// A value in a reply that could not be read into the model (it was skipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelWarning {
    /// The command whose reply held it.
    pub command: Text,
    /// The key (or the entry label).
    pub key: Text,
    /// What was wrong.
    pub problem: &'static str,
}

impl fmt::Display for ModelWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}: {}", self.command, self.key, self.problem)
    }
}

// =======================================================================================
// Values

trait WireValue: Sized {
    fn to_wire(&self) -> Text;
    fn from_wire(s: &str) -> Option<Self>;
}

macro_rules! number_value {
    ($($t:ty),*) => {$(
        impl WireValue for $t {
            fn to_wire(&self) -> Text {
                format_compact!("{self}")
            }
            fn from_wire(s: &str) -> Option<Self> {
                s.parse().ok()
            }
        }
    )*};
}
number_value!(u16, u32, i32, f32);

impl WireValue for Text {
    fn to_wire(&self) -> Text {
        self.clone()
    }
    fn from_wire(s: &str) -> Option<Self> {
        Some(s.into())
    }
}

impl WireValue for bool {
    fn to_wire(&self) -> Text {
        Text::const_new(if *self { "1" } else { "0" })
    }
    fn from_wire(s: &str) -> Option<Self> {
        match s {
            "1" | "true" => Some(true),
            "0" | "false" => Some(false),
            _ => None,
        }
    }
}

macro_rules! named_value {
    ($($t:ty),*) => {$(
        impl WireValue for $t {
            fn to_wire(&self) -> Text {
                match self.name() {
                    Some(n) => Text::from(n),
                    None => format_compact!("{}", self.code()),
                }
            }
            fn from_wire(s: &str) -> Option<Self> {
                if let Ok(n) = s.parse::<u8>() {
                    return Some(<$t>::from_code(n));
                }
                (0..=u8::MAX).map(<$t>::from_code).find(|v| v.name() == Some(s))
            }
        }
    )*};
}
named_value!(ServerType, Os, LimitType);

impl WireValue for [u8; 16] {
    fn to_wire(&self) -> Text {
        Text::from(crate::text::to_hex(self))
    }
    fn from_wire(s: &str) -> Option<Self> {
        crate::text::from_hex(s).and_then(|v| v.try_into().ok())
    }
}

impl WireValue for PlayerAddress {
    fn to_wire(&self) -> Text {
        format_compact!("{self}")
    }
    fn from_wire(s: &str) -> Option<Self> {
        match s.strip_prefix("raw:") {
            Some(hex) => crate::text::from_hex(hex).map(PlayerAddress),
            None => s
                .parse::<SocketAddr>()
                .ok()
                .map(PlayerAddress::from_socket_addr),
        }
    }
}

fn set<T: WireValue>(slot: &mut Option<T>, value: &str) -> bool {
    match T::from_wire(value) {
        Some(v) => {
            *slot = Some(v);
            true
        }
        None => false,
    }
}

/// Generates `encode(&T, &mut Vec<(key, value)>)` and `decode(&mut T, key, value) ->
/// Option<bool>` (None: not one of these keys; Some(false): did not parse) for the
/// optional fields of a model struct.
macro_rules! fields {
    ($ty:ty { $($key:literal => $field:ident),* $(,)? }) => {
        pub(super) fn encode(x: &$ty, out: &mut Vec<(&'static str, Text)>) {
            $(if let Some(v) = &x.$field {
                out.push(($key, super::WireValue::to_wire(v)));
            })*
        }
        pub(super) fn decode(x: &mut $ty, key: &str, value: &str) -> Option<bool> {
            match key {
                $($key => Some(super::set(&mut x.$field, value)),)*
                _ => None,
            }
        }
    };
}

mod status_fields {
    use super::*;
    fields!(Status {
        "game_id" => game_id,
        "game_name" => game_name,
        "game_version" => game_version,
        "host_name" => host_name,
        "connect_port" => connect_port,
        "server_type" => server_type,
        "os" => os,
        "password" => password,
        "proxy" => proxy,
        "game_type" => game_type,
        "game_mode" => game_mode,
        "player_count" => player_count,
        "slot_max" => slot_max,
        "bot_count" => bot_count,
        "reserved_slots" => reserved_slots,
    });
}

mod mod_fields {
    use super::*;
    fields!(ModInfo {
        "identifier" => identifier,
        "size" => size,
        "version" => version,
        "url" => url,
        "author" => author,
    });
}

mod map_fields {
    use super::*;
    fields!(MapInfo {
        "file_name" => file_name,
        "file_size" => file_size,
        "file_md5" => file_md5,
        "version" => version,
        "url" => url,
        "author" => author,
    });
}

mod player_fields {
    use super::*;
    fields!(Player {
        "slot" => slot,
        "name" => name,
        "team" => team,
        "class" => class,
        "race" => race,
        "score" => score,
        "frags" => frags,
        "kills" => kills,
        "deaths" => deaths,
        "suicides" => suicides,
        "team_kills" => team_kills,
        "id" => id,
        "global_id" => global_id,
        "ping" => ping,
        "loss" => loss,
        "model" => model,
        "time" => time,
        "duration" => duration,
        "alive" => alive,
        "dead" => dead,
        "bot" => bot,
        "bomb" => bomb,
        "vip" => vip,
        "money" => money,
    });
}

mod team_fields {
    use super::*;
    fields!(Team {
        "name" => name,
        "score" => score,
        "average_ping" => average_ping,
        "average_loss" => average_loss,
        "player_count" => player_count,
        "color" => color,
    });
}

mod addon_fields {
    use super::*;
    fields!(AddOn {
        "short_name" => short_name,
        "long_name" => long_name,
        "version" => version,
        "active" => active,
        "anti_cheat" => anti_cheat,
        "mutator" => mutator,
        "admin_tool" => admin_tool,
    });
}

// =======================================================================================
// Status → records

fn pairs(v: Vec<(&'static str, Text)>) -> Vec<Record> {
    v.into_iter()
        .map(|(k, v)| Record::Pair(Text::from(k), v))
        .collect()
}

/// The draft's `identify` output: `gamename`, `gamever`, `netver` pairs for what is known
/// (`netver` is the operator's `net_version`, else the game version).
pub fn identify_records(status: &Status, net_version: Option<&str>) -> Vec<Record> {
    let mut out = Vec::new();
    let mut put = |k: &str, v: Option<&str>| {
        if let Some(v) = v {
            out.push(Record::Pair(k.into(), v.into()));
        }
    };
    put("gamename", status.game_name.as_deref());
    put("gamever", status.game_version.as_deref());
    put("netver", net_version.or(status.game_version.as_deref()));
    out
}

/// `serverinfo`: every scalar field the status has.
pub fn serverinfo_records(status: &Status) -> Vec<Record> {
    let mut kv: Vec<(&'static str, Text)> = Vec::new();
    status_fields::encode(status, &mut kv);
    let mut out = pairs(kv);
    let mut nested = |prefix: &str, name: &Text, fields: Vec<(&'static str, Text)>| {
        out.push(Record::Pair(format_compact!("{prefix}.name"), name.clone()));
        for (k, v) in fields {
            out.push(Record::Pair(format_compact!("{prefix}.{k}"), v));
        }
    };
    if let Some(m) = &status.mod_info {
        let mut f = Vec::new();
        mod_fields::encode(m, &mut f);
        nested("mod", &m.name, f);
    }
    for (prefix, map) in [("map", &status.map), ("next_map", &status.next_map)] {
        if let Some(m) = map {
            let mut f = Vec::new();
            map_fields::encode(m, &mut f);
            nested(prefix, &m.name, f);
        }
    }
    out
}

fn entry(index: usize, kv: Vec<(&'static str, Text)>, extra: &[(&Text, &Text)]) -> Record {
    let mut elems = Vec::with_capacity(kv.len() * 2 + extra.len() * 2);
    for (k, v) in kv {
        elems.push(Text::from(k));
        elems.push(v);
    }
    for (k, v) in extra {
        elems.push(format_compact!("extra.{k}"));
        elems.push((*v).clone());
    }
    Record::Labelled(format_compact!("{index}"), elems)
}

/// `players`, or `None` when the status does not report players. Addresses only when
/// `addresses` (they are personal data).
pub fn players_records(status: &Status, addresses: bool) -> Option<Vec<Record>> {
    let players = status.players.as_ref()?;
    Some(
        players
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut kv = Vec::new();
                player_fields::encode(p, &mut kv);
                if addresses {
                    if let Some(a) = &p.address {
                        kv.push(("address", a.to_wire()));
                    }
                }
                entry(i, kv, &p.extra.iter().collect::<Vec<_>>())
            })
            .collect(),
    )
}

/// `teams`, or `None` when the status does not report teams.
pub fn teams_records(status: &Status) -> Option<Vec<Record>> {
    let teams = status.teams.as_ref()?;
    Some(
        teams
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut kv = Vec::new();
                team_fields::encode(t, &mut kv);
                entry(i, kv, &t.extra.iter().collect::<Vec<_>>())
            })
            .collect(),
    )
}

/// `rules`, or `None` when the status does not report rules.
pub fn rules_records(status: &Status) -> Option<Vec<Record>> {
    let rules = status.rules.as_ref()?;
    Some(
        rules
            .0
            .iter()
            .map(|(k, v)| Record::Pair(k.clone(), v.clone()))
            .collect(),
    )
}

/// `addons`, or `None` when the status does not report add-ons.
pub fn addons_records(status: &Status) -> Option<Vec<Record>> {
    let addons = status.addons.as_ref()?;
    Some(
        addons
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let mut kv = Vec::new();
                addon_fields::encode(a, &mut kv);
                entry(i, kv, &[])
            })
            .collect(),
    )
}

/// `limits`, or `None` when the status does not report limits.
pub fn limits_records(status: &Status) -> Option<Vec<Record>> {
    let limits = status.limits.as_ref()?;
    Some(
        limits
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let mut kv = vec![("type", l.kind.to_wire()), ("limit", l.limit.to_wire())];
                if let Some(left) = l.left {
                    kv.push(("left", left.to_wire()));
                }
                entry(i, kv, &[])
            })
            .collect(),
    )
}

// =======================================================================================
// Records → status

struct Warn<'a> {
    command: &'a str,
    out: &'a mut Vec<ModelWarning>,
}

impl Warn<'_> {
    fn push(&mut self, key: &str, problem: &'static str) {
        // A hostile reply could hold thousands of bad values: keep the first few.
        if self.out.len() < 64 {
            self.out.push(ModelWarning {
                command: self.command.into(),
                key: key.into(),
                problem,
            });
        }
    }

    fn check(&mut self, key: &str, r: Option<bool>) {
        match r {
            Some(true) => {}
            Some(false) => self.push(key, "value does not parse"),
            None => self.push(key, "unknown key"),
        }
    }
}

/// Reads the DC4 entries of a list reply: (label, key/value pairs).
fn entries<'a>(reply: &'a Reply, w: &mut Warn<'_>) -> Vec<Vec<(&'a str, &'a str)>> {
    let mut out = Vec::new();
    for rec in &reply.records {
        let Record::Labelled(label, elems) = rec else {
            w.push("", "not a labelled array");
            continue;
        };
        if elems.len() % 2 != 0 {
            w.push(label, "odd number of elements: last key ignored");
        }
        out.push(
            elems
                .chunks_exact(2)
                .filter_map(|kv| match kv {
                    [k, v] => Some((k.as_str(), v.as_str())),
                    _ => None,
                })
                .collect(),
        );
    }
    out
}

fn pairs_of<'a>(reply: &'a Reply, w: &mut Warn<'_>) -> Vec<(&'a str, &'a str)> {
    let mut out = Vec::new();
    for rec in &reply.records {
        match rec {
            Record::Pair(k, v) => out.push((k.as_str(), v.as_str())),
            _ => w.push("", "not a name = value record"),
        }
    }
    out
}

/// Reads a successful reply to `identify` or to one of [`STATUS_COMMANDS`] into
/// `status`. Replies with another code or name are ignored. `identify` only fills the
/// game name and version when `serverinfo` did not.
pub fn apply_reply(status: &mut Status, reply: &Reply, warnings: &mut Vec<ModelWarning>) {
    if !reply.code.is_ok() {
        return;
    }
    let mut w = Warn {
        command: &reply.name,
        out: warnings,
    };
    match reply.name.as_str() {
        "identify" => {
            for (k, v) in pairs_of(reply, &mut w) {
                match k {
                    "gamename" if status.game_name.is_none() => status.game_name = Some(v.into()),
                    "gamever" if status.game_version.is_none() => {
                        status.game_version = Some(v.into());
                    }
                    _ => {}
                }
            }
        }
        "serverinfo" => {
            for (k, v) in pairs_of(reply, &mut w) {
                let r = if let Some(f) = k.strip_prefix("mod.") {
                    let m = status.mod_info.get_or_insert_with(ModInfo::default);
                    if f == "name" {
                        m.name = v.into();
                        Some(true)
                    } else {
                        mod_fields::decode(m, f, v)
                    }
                } else if let Some((prefix, f)) = k.split_once('.') {
                    let slot = match prefix {
                        "map" => Some(&mut status.map),
                        "next_map" => Some(&mut status.next_map),
                        _ => None,
                    };
                    slot.and_then(|slot| {
                        let m = slot.get_or_insert_with(MapInfo::default);
                        if f == "name" {
                            m.name = v.into();
                            Some(true)
                        } else {
                            map_fields::decode(m, f, v)
                        }
                    })
                } else {
                    status_fields::decode(status, k, v)
                };
                w.check(k, r);
            }
        }
        "rules" => {
            let rules = pairs_of(reply, &mut w)
                .into_iter()
                .map(|(k, v)| (Text::from(k), Text::from(v)))
                .collect();
            status.rules = Some(Rules(rules));
        }
        "players" => {
            let mut list = Vec::new();
            for e in entries(reply, &mut w) {
                let mut p = Player::default();
                for (k, v) in e {
                    let r = if let Some(x) = k.strip_prefix("extra.") {
                        p.extra.insert(x.into(), v.into());
                        Some(true)
                    } else if k == "address" {
                        Some(set(&mut p.address, v))
                    } else {
                        player_fields::decode(&mut p, k, v)
                    };
                    w.check(k, r);
                }
                list.push(p);
            }
            status.players = Some(list);
        }
        "teams" => {
            let mut list = Vec::new();
            for e in entries(reply, &mut w) {
                let mut t = Team::default();
                for (k, v) in e {
                    let r = if let Some(x) = k.strip_prefix("extra.") {
                        t.extra.insert(x.into(), v.into());
                        Some(true)
                    } else {
                        team_fields::decode(&mut t, k, v)
                    };
                    w.check(k, r);
                }
                list.push(t);
            }
            status.teams = Some(list);
        }
        "addons" => {
            let mut list = Vec::new();
            for e in entries(reply, &mut w) {
                let mut a = AddOn::default();
                for (k, v) in e {
                    let r = addon_fields::decode(&mut a, k, v);
                    w.check(k, r);
                }
                list.push(a);
            }
            status.addons = Some(list);
        }
        "limits" => {
            let mut list = Vec::new();
            for e in entries(reply, &mut w) {
                let (mut kind, mut limit, mut left) = (None, None, None);
                for (k, v) in e {
                    let r = match k {
                        "type" => Some(set(&mut kind, v)),
                        "limit" => Some(set(&mut limit, v)),
                        "left" => Some(set(&mut left, v)),
                        _ => None,
                    };
                    w.check(k, r);
                }
                match (kind, limit) {
                    (Some(kind), Some(limit)) => list.push(Limit { kind, limit, left }),
                    _ => w.push("", "limit without type or limit: skipped"),
                }
            }
            status.limits = Some(list);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gqp::wire::StatusCode;

    #[test]
    fn a_full_status_round_trips_through_records() {
        let json = include_str!("../../tests/data/state.json");
        let mut status = Status::from_json(json).unwrap();
        // not carried by GQP
        status.a2s = None;
        status.host_name_color = None;
        for t in status.teams.iter_mut().flatten() {
            t.name_color = None;
        }
        for p in status.players.iter_mut().flatten() {
            p.name_color = None;
        }
        let mut back = Status::default();
        let mut warnings = Vec::new();
        let replies = [
            Reply::ok("serverinfo", serverinfo_records(&status)),
            Reply::ok(
                "players",
                players_records(&status, true).unwrap_or_default(),
            ),
            Reply::ok("teams", teams_records(&status).unwrap_or_default()),
            Reply::ok("rules", rules_records(&status).unwrap_or_default()),
            Reply::ok("addons", addons_records(&status).unwrap_or_default()),
            Reply::ok("limits", limits_records(&status).unwrap_or_default()),
        ];
        for r in &replies {
            apply_reply(&mut back, r, &mut warnings);
        }
        assert!(warnings.is_empty(), "{warnings:?}");
        // lists the file does not have were not asked here (a server answers them 31)
        if status.teams.is_none() {
            back.teams = None;
        }
        if status.addons.is_none() {
            back.addons = None;
        }
        if status.players.is_none() {
            back.players = None;
        }
        if status.rules.is_none() {
            back.rules = None;
        }
        if status.limits.is_none() {
            back.limits = None;
        }
        assert_eq!(back, status);
    }

    #[test]
    fn identify_fills_only_what_serverinfo_did_not() {
        let s = Status {
            game_name: Some("ut".into()),
            game_version: Some("432".into()),
            ..Status::default()
        };
        assert_eq!(
            identify_records(&s, None),
            vec![
                Record::Pair("gamename".into(), "ut".into()),
                Record::Pair("gamever".into(), "432".into()),
                Record::Pair("netver".into(), "432".into()),
            ]
        );
        let mut back = Status {
            game_name: Some("kept".into()),
            ..Status::default()
        };
        apply_reply(
            &mut back,
            &Reply::ok("identify", identify_records(&s, Some("400"))),
            &mut Vec::new(),
        );
        assert_eq!(back.game_name.as_deref(), Some("kept"));
        assert_eq!(back.game_version.as_deref(), Some("432"));
    }

    #[test]
    fn bad_values_are_skipped_with_warnings() {
        let mut s = Status::default();
        let mut w = Vec::new();
        let reply = Reply::ok(
            "players",
            vec![
                Record::Labelled(
                    "0".into(),
                    vec![
                        "score".into(),
                        "x".into(),
                        "name".into(),
                        "A".into(),
                        "odd".into(),
                    ],
                ),
                Record::String("junk".into()),
            ],
        );
        apply_reply(&mut s, &reply, &mut w);
        assert_eq!(s.players.as_ref().unwrap().len(), 1);
        assert_eq!(s.players.as_ref().unwrap()[0].name.as_deref(), Some("A"));
        assert_eq!(w.len(), 3, "{w:?}");
        let limits = Reply::ok(
            "limits",
            vec![Record::Labelled(
                "0".into(),
                vec!["type".into(), "time".into()],
            )],
        );
        apply_reply(&mut s, &limits, &mut w);
        assert_eq!(s.limits, Some(vec![]));
        // errors are ignored
        apply_reply(
            &mut s,
            &Reply::error(StatusCode::UNAVAILABLE, "rules", None),
            &mut w,
        );
        assert!(s.rules.is_none());
    }
}

//! Shared test code: random [`Status`] strategies and the OGP normalisation (what a
//! client decodes from our answer to a query for everything), copied from
//! `crates/ogp-proto/tests/ogp_props.rs`. Used by `ogp-net/tests/e2e.rs` and (through
//! `#[path]`) by `ogp-proto/tests/ogp_responder.rs`; each test binary uses a part.

#![allow(dead_code)]

use std::collections::BTreeMap;

use ogp_proto::ogp::query::request;
use ogp_proto::ogp::Bits;
use ogp_proto::Text;
use ogp_proto::{
    AddOn, ColorEntry, ColorInfo, Limit, LimitType, MapInfo, ModInfo, Os, Player, PlayerAddress,
    Rules, ServerType, Status, Team,
};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

// =======================================================================================
// Strategies

/// Which strings the wire can carry: UTF-8 (any character but NUL) or Latin-1
/// (U+0001–U+00FF).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charset {
    Utf8,
    Latin1,
}

/// What kind of statuses to generate.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    pub cs: Charset,
    /// `false`: every field of a list is present in all entries or in none (one field
    /// mask per list on the wire), flag groups are all known or all unknown: the wire
    /// represents these exactly. `true`: each entry (and each map, each server flag)
    /// picks its fields on its own, which exercises the "absent is sent as zero" rules.
    pub mixed: bool,
    /// Occasionally 250–300 players (VarUINT counts of three bytes, many split packets).
    pub big: bool,
}

pub const EXACT: Params = Params {
    cs: Charset::Utf8,
    mixed: false,
    big: true,
};

pub fn wire_char(cs: Charset) -> BoxedStrategy<char> {
    let ascii = (0x20u8..0x7f).prop_map(char::from);
    match cs {
        Charset::Utf8 => prop_oneof![
            3 => ascii,
            1 => any::<char>().prop_map(|c| if c == '\0' { '0' } else { c }),
        ]
        .boxed(),
        Charset::Latin1 => prop_oneof![3 => ascii, 1 => (1u8..=0xff).prop_map(char::from)].boxed(),
    }
}

pub fn wire_string(cs: Charset) -> BoxedStrategy<Text> {
    vec(wire_char(cs), 0..10)
        .prop_map(|cs: Vec<char>| cs.into_iter().collect::<Text>())
        .boxed()
}

pub fn nonempty_string(cs: Charset) -> BoxedStrategy<Text> {
    vec(wire_char(cs), 1..10)
        .prop_map(|cs: Vec<char>| cs.into_iter().collect::<Text>())
        .boxed()
}

/// A u32 that takes each VarUINT8-32 form (1, 3 and 5 bytes) often.
pub fn var_u32() -> BoxedStrategy<u32> {
    prop_oneof![0u32..=0x100, 0xfd_u32..=0x1_0001, any::<u32>()].boxed()
}

/// An i32 that takes each VarSINT8-32 form often.
pub fn var_i32() -> BoxedStrategy<i32> {
    prop_oneof![-130i32..=130, -33_000i32..=33_000, any::<i32>()].boxed()
}

pub fn maybe<T: std::fmt::Debug + Clone + 'static>(
    on: bool,
    s: impl Strategy<Value = T> + 'static,
) -> BoxedStrategy<Option<T>> {
    if on {
        s.prop_map(Some).boxed()
    } else {
        Just(None).boxed()
    }
}

/// StringColorInfo. `undecoded` has at most one byte: one byte can never start a
/// complete entry, so it comes back as `undecoded` (two bytes may form an entry).
pub fn color_info() -> BoxedStrategy<ColorInfo> {
    let entry = (
        prop_oneof![0u32..300, any::<u32>()],
        prop_oneof![0u8..=0x42, 0x90u8..=0x9f, any::<u8>()],
        option::of(any::<u16>()),
    )
        .prop_map(|(delta, code, color16)| ColorEntry {
            delta,
            code,
            color16,
        });
    (vec(entry, 0..4), vec(any::<u8>(), 0..=1))
        .prop_map(|(entries, undecoded)| ColorInfo { entries, undecoded })
        .boxed()
}

pub fn address() -> BoxedStrategy<PlayerAddress> {
    prop_oneof![
        vec(any::<u8>(), 0..40).prop_map(PlayerAddress),
        any::<std::net::SocketAddr>().prop_map(PlayerAddress::from_socket_addr),
    ]
    .boxed()
}

/// A list whose entries are built from a presence mask: one mask for the whole list, or
/// one per entry when `mixed`.
pub fn list_of<T, const N: usize>(
    mixed: bool,
    len: std::ops::Range<usize>,
    entry: impl Fn([bool; N]) -> BoxedStrategy<T> + Clone + 'static,
) -> BoxedStrategy<Vec<T>>
where
    T: std::fmt::Debug + Clone + 'static,
    [bool; N]: Arbitrary,
{
    if mixed {
        vec(any::<[bool; N]>().prop_flat_map(entry), len).boxed()
    } else {
        any::<[bool; N]>()
            .prop_flat_map(move |m| vec(entry(m), len.clone()))
            .boxed()
    }
}

/// A flag of a flag group: all known or all unknown per mask, or anything when mixed.
pub fn flag(on: bool, mixed: bool) -> BoxedStrategy<Option<bool>> {
    match (on, mixed) {
        (false, _) => Just(None).boxed(),
        (true, false) => any::<bool>().prop_map(Some).boxed(),
        (true, true) => option::of(any::<bool>()).boxed(),
    }
}

pub fn team(m: [bool; 6], p: Params) -> BoxedStrategy<Team> {
    (
        maybe(m[0], wire_string(p.cs)),
        option::of(color_info()),
        maybe(m[1], var_i32()),
        maybe(m[2], any::<u16>()),
        maybe(m[3], any::<u16>()),
        maybe(m[4], var_u32()),
        maybe(m[5], any::<u16>()),
    )
        .prop_map(
            |(name, name_color, score, average_ping, average_loss, player_count, color)| Team {
                name,
                name_color,
                score,
                average_ping,
                average_loss,
                player_count,
                color,
                extra: BTreeMap::new(),
            },
        )
        .boxed()
}

pub fn player(m: [bool; 19], p: Params) -> BoxedStrategy<Player> {
    let s = || wire_string(p.cs);
    let flags = (
        flag(m[0], p.mixed),
        flag(m[0], p.mixed),
        flag(m[0], p.mixed),
        flag(m[0], p.mixed),
        flag(m[0], p.mixed),
    );
    let who = (
        maybe(m[1], var_u32()),
        maybe(m[2], s()),
        option::of(color_info()),
        maybe(m[3], var_i32()),
        maybe(m[4], s()),
        maybe(m[5], s()),
    );
    let stats = (
        maybe(m[6], var_i32()),
        maybe(m[7], var_i32()),
        maybe(m[8], var_u32()),
        maybe(m[9], var_u32()),
        maybe(m[10], var_u32()),
        maybe(m[11], var_u32()),
    );
    let net = (
        maybe(m[12], any::<u32>()),
        maybe(m[13], s()),
        maybe(m[14], any::<u16>()),
        maybe(m[15], any::<u16>()),
        maybe(m[16], s()),
        maybe(m[17], any::<u16>()),
        maybe(m[18], address()),
    );
    (flags, who, stats, net)
        .prop_map(
            |(
                (alive, dead, bot, bomb, vip),
                (slot, name, name_color, team, class, race),
                (score, frags, kills, deaths, suicides, team_kills),
                (id, global_id, ping, loss, model, time, address),
            )| Player {
                slot,
                name,
                name_color,
                team,
                class,
                race,
                score,
                frags,
                kills,
                deaths,
                suicides,
                team_kills,
                id,
                global_id,
                ping,
                loss,
                model,
                time,
                duration: None,
                address,
                alive,
                dead,
                bot,
                bomb,
                vip,
                money: None,
                extra: BTreeMap::new(),
            },
        )
        .boxed()
}

pub fn addon(m: [bool; 4], p: Params) -> BoxedStrategy<AddOn> {
    (
        (
            flag(m[0], p.mixed),
            flag(m[0], p.mixed),
            flag(m[0], p.mixed),
            flag(m[0], p.mixed),
        ),
        maybe(m[1], wire_string(p.cs)),
        maybe(m[2], wire_string(p.cs)),
        maybe(m[3], wire_string(p.cs)),
    )
        .prop_map(
            |((active, anti_cheat, mutator, admin_tool), short_name, long_name, version)| AddOn {
                short_name,
                long_name,
                version,
                active,
                anti_cheat,
                mutator,
                admin_tool,
            },
        )
        .boxed()
}

pub fn map(m: [bool; 6], cs: Charset) -> BoxedStrategy<MapInfo> {
    (
        wire_string(cs),
        maybe(m[0], wire_string(cs)),
        maybe(m[1], any::<u32>()),
        maybe(m[2], any::<[u8; 16]>()),
        maybe(m[3], wire_string(cs)),
        maybe(m[4], wire_string(cs)),
        maybe(m[5], wire_string(cs)),
    )
        .prop_map(
            |(name, file_name, file_size, file_md5, version, url, author)| MapInfo {
                name,
                file_name,
                file_size,
                file_md5,
                version,
                url,
                author,
            },
        )
        .boxed()
}

/// The map and the next map. They share one MapFields on the wire, so unless `mixed`
/// they share one presence mask.
pub fn maps(p: Params) -> BoxedStrategy<(Option<MapInfo>, Option<MapInfo>)> {
    let cs = p.cs;
    if p.mixed {
        let one = move || option::of(any::<[bool; 6]>().prop_flat_map(move |m| map(m, cs)));
        (one(), one()).boxed()
    } else {
        any::<[bool; 6]>()
            .prop_flat_map(move |m| (option::of(map(m, cs)), option::of(map(m, cs))))
            .boxed()
    }
}

/// MODINFO: an empty name (which ends the structure on the wire) or a named mod with any
/// of its fields. When `mixed`, an empty name may come with fields the wire cannot carry.
pub fn mod_info(p: Params) -> BoxedStrategy<ModInfo> {
    let cs = p.cs;
    let fields = move || {
        (
            option::of(wire_string(cs)),
            option::of(any::<u32>()),
            option::of(wire_string(cs)),
            option::of(wire_string(cs)),
            option::of(wire_string(cs)),
        )
    };
    let named = (nonempty_string(cs), fields()).prop_map(
        |(name, (identifier, size, version, url, author))| ModInfo {
            name,
            identifier,
            size,
            version,
            url,
            author,
        },
    );
    if p.mixed {
        let unnamed = fields().prop_map(|(identifier, size, version, url, author)| ModInfo {
            name: Text::default(),
            identifier,
            size,
            version,
            url,
            author,
        });
        prop_oneof![1 => unnamed, 3 => named].boxed()
    } else {
        prop_oneof![1 => Just(ModInfo::default()), 3 => named].boxed()
    }
}

pub type ServerFlags = (Option<ServerType>, Option<Os>, Option<bool>, Option<bool>);

/// ServerFlags: type 0–3 and OS 0–7 (every code the bits can hold), all four known or
/// all unknown unless `mixed`.
pub fn server_flags(mixed: bool) -> BoxedStrategy<ServerFlags> {
    let ty = || (0u8..=3).prop_map(ServerType::from_code);
    let os = || (0u8..=7).prop_map(Os::from_code);
    if mixed {
        (
            option::of(ty()),
            option::of(os()),
            option::of(any::<bool>()),
            option::of(any::<bool>()),
        )
            .boxed()
    } else {
        option::of((ty(), os(), any::<bool>(), any::<bool>()))
            .prop_map(|f| match f {
                Some((t, o, pw, px)) => (Some(t), Some(o), Some(pw), Some(px)),
                None => (None, None, None, None),
            })
            .boxed()
    }
}

pub fn rules(cs: Charset) -> BoxedStrategy<Rules> {
    let key = prop_oneof![3 => wire_string(cs), 1 => Just(Text::from("dup"))];
    vec((key, wire_string(cs)), 0..6).prop_map(Rules).boxed()
}

pub fn limits() -> BoxedStrategy<Vec<Limit>> {
    vec(
        (
            (0u8..=15).prop_map(LimitType::from_code),
            var_u32(),
            option::of(var_u32()),
        ),
        0..5,
    )
    .prop_map(|v| {
        v.into_iter()
            .map(|(kind, limit, left)| Limit { kind, limit, left })
            .collect()
    })
    .boxed()
}

pub fn players(p: Params) -> BoxedStrategy<Vec<Player>> {
    let small = list_of(p.mixed, 0..6, move |m| player(m, p));
    if p.big {
        prop_oneof![15 => small, 1 => list_of(p.mixed, 250..300, move |m| player(m, p))].boxed()
    } else {
        small
    }
}

/// A random status. Fields OGP does not carry (`game_version`, `a2s`, a player's
/// `duration`, `money`, `extra`, a team's `extra`) are left empty.
pub fn status(p: Params) -> BoxedStrategy<Status> {
    let s = move || option::of(wire_string(p.cs));
    let server = (
        option::of(any::<u16>()),
        s(),
        s(),
        option::of(color_info()),
        option::of(any::<u16>()),
        server_flags(p.mixed),
        option::of(mod_info(p)),
        s(),
        s(),
    );
    let counts = (
        option::of(var_u32()),
        option::of(var_u32()),
        option::of(var_u32()),
        option::of(var_u32()),
    );
    let lists = (
        option::of(list_of(p.mixed, 0..5, move |m| team(m, p))),
        option::of(players(p)),
        option::of(rules(p.cs)),
        option::of(list_of(p.mixed, 0..5, move |m| addon(m, p))),
        option::of(limits()),
    );
    (server, maps(p), counts, lists)
        .prop_map(
            |(
                (
                    game_id,
                    game_name,
                    host_name,
                    host_name_color,
                    connect_port,
                    (server_type, os, password, proxy),
                    mod_info,
                    game_type,
                    game_mode,
                ),
                (map, next_map),
                (player_count, slot_max, bot_count, reserved_slots),
                (teams, players, rules, addons, limits),
            )| Status {
                game_id,
                game_name,
                game_version: None,
                host_name,
                host_name_color,
                connect_port,
                server_type,
                os,
                password,
                proxy,
                mod_info,
                game_type,
                game_mode,
                map,
                next_map,
                player_count,
                slot_max,
                bot_count,
                reserved_slots,
                uptime_seconds: None,
                teams,
                players,
                rules,
                addons,
                limits,
                a2s: None,
            },
        )
        .boxed()
}

/// A status together with the charset its strings fit: Latin-1 statuses for
/// `utf8 == false`.
pub fn status_and_charset(big: bool) -> BoxedStrategy<(bool, Status)> {
    any::<bool>()
        .prop_flat_map(move |utf8| {
            let cs = if utf8 { Charset::Utf8 } else { Charset::Latin1 };
            let p = Params {
                cs,
                mixed: false,
                big,
            };
            (Just(utf8), status(p))
        })
        .boxed()
}

// =======================================================================================
// The normalisation

/// Sets an absent field to its wire zero when the field is on the wire.
pub fn fill<T: Default>(field: &mut Option<T>, sent: bool) {
    if sent && field.is_none() {
        *field = Some(T::default());
    }
}

/// A colour info as it comes back: a ColorValue16 exactly for codes 0x90–0x9F (absent is
/// sent as 0), nothing for other codes.
pub fn color_back(c: Option<&ColorInfo>) -> ColorInfo {
    let mut c = c.cloned().unwrap_or_default();
    for e in &mut c.entries {
        e.color16 = if (0x90..=0x9f).contains(&e.code) {
            Some(e.color16.unwrap_or(0))
        } else {
            None
        };
    }
    c
}

/// The status a client decodes from our answer to a query for everything (all sections,
/// all fields), worked out from `ogp/answer.rs` and spec §3.4:
///
/// 1. `game_id`: absent is sent as 0.
/// 2. Not carried by OGP and dropped: `game_version`, `a2s`, a player's `duration`,
///    `money` and `extra`, a team's `extra`.
/// 3. ServerFlags is sent when any of `server_type`, `os`, `password`, `proxy` is known;
///    then all four come back: type = code & 0x03, OS = code & 0x07, unknown ones as
///    code 0 / `false`.
/// 4. A mod with an empty name is "no mod" on the wire: only the empty name comes back.
/// 5. `next_map` comes back only with a `map` (bNextMap without bMap carries no data).
///    Map and next map share one MapFields: a field either has is sent for both, an
///    absent one as ""/0/zero MD5.
/// 6. `player_count`/`bot_count` become explicit: [`Status::player_count`] and
///    [`Status::bot_count`] (derived from the player list unless overridden).
/// 7. Team, player and add-on lists have one field mask each: the fields any entry has.
///    Entries lacking such a field get its wire zero: "" for strings, 0 for numbers, an
///    empty address, team -1 ("not assigned"), and `false` for every flag of the player
///    (alive/dead/bot/bomb/vip) or add-on (active/anti-cheat/mutator/admin-tool) flag
///    group once any entry has any flag of it.
/// 8. Colour info travels only when the answer has bColoredNames (`colored`: asked for
///    *and* `AnswerOptions::colors`). Then every name on the wire (host name, team names,
///    player names) carries one, absent ones as empty (see [`color_back`]); otherwise
///    no colour info comes back at all.
/// 9. A LimitType keeps its low four bits.
///
/// Strings are not touched: the strategies only generate strings the charset carries
/// (no NUL, and only U+0001–U+00FF for Latin-1).
pub fn normalise(s: &Status, colored: bool) -> Status {
    let mut n = s.clone();
    // 1, 2
    n.game_id = Some(s.game_id.unwrap_or(0));
    n.game_version = None;
    n.a2s = None;
    // 3
    if s.server_type.is_some() || s.os.is_some() || s.password.is_some() || s.proxy.is_some() {
        n.server_type = Some(ServerType::from_code(
            s.server_type.map_or(0, ServerType::code) & 0x03,
        ));
        n.os = Some(Os::from_code(s.os.map_or(0, Os::code) & 0x07));
        n.password = Some(s.password == Some(true));
        n.proxy = Some(s.proxy == Some(true));
    }
    // 8 (host name)
    n.host_name_color =
        (colored && s.host_name.is_some()).then(|| color_back(s.host_name_color.as_ref()));
    // 4
    if let Some(m) = &mut n.mod_info {
        if m.name.is_empty() {
            *m = ModInfo::default();
        }
    }
    // 5
    if n.map.is_none() {
        n.next_map = None;
    }
    let maps: Vec<&MapInfo> = n.map.iter().chain(n.next_map.iter()).collect();
    let any_map = |f: fn(&MapInfo) -> bool| maps.iter().any(|m| f(m));
    let (file_name, file_size, file_md5, version, url, author) = (
        any_map(|m| m.file_name.is_some()),
        any_map(|m| m.file_size.is_some()),
        any_map(|m| m.file_md5.is_some()),
        any_map(|m| m.version.is_some()),
        any_map(|m| m.url.is_some()),
        any_map(|m| m.author.is_some()),
    );
    for m in n.map.iter_mut().chain(n.next_map.iter_mut()) {
        fill(&mut m.file_name, file_name);
        fill(&mut m.file_size, file_size);
        fill(&mut m.file_md5, file_md5);
        fill(&mut m.version, version);
        fill(&mut m.url, url);
        fill(&mut m.author, author);
    }
    // 6
    n.player_count = s.player_count();
    n.bot_count = s.bot_count();
    // 7, 8 (teams)
    if let Some(teams) = &mut n.teams {
        let any = |f: fn(&Team) -> bool| teams.iter().any(f);
        let (name, score, ping, loss, count, color) = (
            any(|t| t.name.is_some()),
            any(|t| t.score.is_some()),
            any(|t| t.average_ping.is_some()),
            any(|t| t.average_loss.is_some()),
            any(|t| t.player_count.is_some()),
            any(|t| t.color.is_some()),
        );
        for t in teams.iter_mut() {
            t.extra.clear();
            fill(&mut t.name, name);
            t.name_color = (colored && name).then(|| color_back(t.name_color.as_ref()));
            fill(&mut t.score, score);
            fill(&mut t.average_ping, ping);
            fill(&mut t.average_loss, loss);
            fill(&mut t.player_count, count);
            fill(&mut t.color, color);
        }
    }
    // 7, 8 (players)
    if let Some(players) = &mut n.players {
        let any = |f: fn(&Player) -> bool| players.iter().any(f);
        let flags = any(|p| {
            p.alive.is_some()
                || p.dead.is_some()
                || p.bot.is_some()
                || p.bomb.is_some()
                || p.vip.is_some()
        });
        let sent = [
            any(|p| p.slot.is_some()),
            any(|p| p.name.is_some()),
            any(|p| p.team.is_some()),
            any(|p| p.class.is_some()),
            any(|p| p.race.is_some()),
            any(|p| p.score.is_some()),
            any(|p| p.frags.is_some()),
            any(|p| p.kills.is_some()),
            any(|p| p.deaths.is_some()),
            any(|p| p.suicides.is_some()),
            any(|p| p.team_kills.is_some()),
            any(|p| p.id.is_some()),
            any(|p| p.global_id.is_some()),
            any(|p| p.ping.is_some()),
            any(|p| p.loss.is_some()),
            any(|p| p.model.is_some()),
            any(|p| p.time.is_some()),
            any(|p| p.address.is_some()),
        ];
        for p in players.iter_mut() {
            p.duration = None;
            p.money = None;
            p.extra.clear();
            for f in [
                &mut p.alive,
                &mut p.dead,
                &mut p.bot,
                &mut p.bomb,
                &mut p.vip,
            ] {
                fill(f, flags);
            }
            fill(&mut p.slot, sent[0]);
            fill(&mut p.name, sent[1]);
            p.name_color = (colored && sent[1]).then(|| color_back(p.name_color.as_ref()));
            if sent[2] && p.team.is_none() {
                p.team = Some(-1);
            }
            fill(&mut p.class, sent[3]);
            fill(&mut p.race, sent[4]);
            fill(&mut p.score, sent[5]);
            fill(&mut p.frags, sent[6]);
            fill(&mut p.kills, sent[7]);
            fill(&mut p.deaths, sent[8]);
            fill(&mut p.suicides, sent[9]);
            fill(&mut p.team_kills, sent[10]);
            fill(&mut p.id, sent[11]);
            fill(&mut p.global_id, sent[12]);
            fill(&mut p.ping, sent[13]);
            fill(&mut p.loss, sent[14]);
            fill(&mut p.model, sent[15]);
            fill(&mut p.time, sent[16]);
            if sent[17] && p.address.is_none() {
                p.address = Some(PlayerAddress(Vec::new()));
            }
        }
    }
    // 7 (add-ons)
    if let Some(addons) = &mut n.addons {
        let any = |f: fn(&AddOn) -> bool| addons.iter().any(f);
        let flags = any(|a| {
            a.active.is_some()
                || a.anti_cheat.is_some()
                || a.mutator.is_some()
                || a.admin_tool.is_some()
        });
        let (short, long, version) = (
            any(|a| a.short_name.is_some()),
            any(|a| a.long_name.is_some()),
            any(|a| a.version.is_some()),
        );
        for a in addons.iter_mut() {
            for f in [
                &mut a.active,
                &mut a.anti_cheat,
                &mut a.mutator,
                &mut a.admin_tool,
            ] {
                fill(f, flags);
            }
            fill(&mut a.short_name, short);
            fill(&mut a.long_name, long);
            fill(&mut a.version, version);
        }
    }
    // 9
    if let Some(limits) = &mut n.limits {
        for l in limits.iter_mut() {
            l.kind = LimitType::from_code(l.kind.code() & 0x0f);
        }
    }
    n
}

// =======================================================================================
// Additions for the responder and end-to-end tests

/// [`normalise`] for an answer whose RequestFlags are `sections`: the sections the answer
/// does not carry come back absent (server info: every server-info field).
pub fn normalise_sections(s: &Status, colored: bool, sections: Bits) -> Status {
    let mut n = normalise(s, colored);
    if !sections.contains(request::SERVER_INFO) {
        let lists = Status {
            game_id: n.game_id,
            teams: n.teams.take(),
            players: n.players.take(),
            rules: n.rules.take(),
            addons: n.addons.take(),
            limits: n.limits.take(),
            ..Status::default()
        };
        n = lists;
    }
    if !sections.contains(request::TEAM_LIST) {
        n.teams = None;
    }
    if !sections.contains(request::PLAYER_LIST) {
        n.players = None;
    }
    if !sections.contains(request::RULE_LIST) {
        n.rules = None;
    }
    if !sections.contains(request::ADDON_LIST) {
        n.addons = None;
    }
    if !sections.contains(request::LIMIT_LIST) {
        n.limits = None;
    }
    n
}

/// A status with many players (`n` in the range), in the given charset: the player list
/// alone makes the answer larger than one 1400-byte packet.
pub fn big_status(cs: Charset, n: std::ops::Range<usize>) -> BoxedStrategy<Status> {
    let p = Params {
        cs,
        mixed: false,
        big: false,
    };
    (
        status(p),
        list_of(false, n, move |m| player(m, p)),
        nonempty_string(cs),
    )
        .prop_map(|(mut s, mut players, host)| {
            // every player has a name, so that the list is never made of empty entries
            for (i, pl) in players.iter_mut().enumerate() {
                pl.name = Some(format!("{}{i}", pl.name.clone().unwrap_or_default()).into());
            }
            s.players = Some(players);
            s.host_name = Some(host);
            s
        })
        .boxed()
}

/// The project's example state file.
pub fn demo_state() -> Status {
    Status::from_json(include_str!("../../../ogp-proto/tests/data/state.json"))
        .expect("state.json parses")
}

/// A synthetic status with `n` players with long names (for size limits and splitting).
pub fn many_players(n: usize, name_len: usize) -> Status {
    let mut s = demo_state();
    let players = (0..n)
        .map(|i| Player {
            slot: Some(u32::try_from(i).unwrap_or(u32::MAX)),
            name: Some(format!("{i:05}-{}", "x".repeat(name_len.saturating_sub(6))).into()),
            team: Some(i32::try_from(i % 2).unwrap_or(0)),
            score: Some(i32::try_from(i).unwrap_or(0) * 7 - 300),
            ping: Some(u16::try_from(i % 300).unwrap_or(0)),
            time: Some(u16::try_from(i * 3 % 60_000).unwrap_or(0)),
            alive: Some(i % 3 != 0),
            ..Player::default()
        })
        .collect();
    s.players = Some(players);
    s.slot_max = Some(u32::try_from(n).unwrap_or(u32::MAX) + 10);
    s
}

/// `s` without player addresses: what a responder with the default
/// `OgpConfig { player_addresses: false, .. }` serves (wire choice A20).
pub fn without_addresses(s: &Status) -> Status {
    let mut s = s.clone();
    for p in s.players.iter_mut().flatten() {
        p.address = None;
    }
    s
}

/// What a client decodes from a default responder's answer with RequestFlags `sections`
/// (no colours, no player addresses).
pub fn served(s: &Status, sections: Bits) -> Status {
    normalise_sections(&without_addresses(s), false, sections)
}

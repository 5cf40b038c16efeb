//! Random [`Status`] strategies for proptest.
//!
//! [`status`] builds a whole status from [`Params`]: the charset its strings fit, whether
//! list entries pick their fields together (what the wire represents exactly) or each on
//! its own, and whether the player list is sometimes large. The smaller strategies it is
//! built from are public too, for tests that need one part.

use std::collections::BTreeMap;

use ogp_proto::Text;
use ogp_proto::{
    AddOn, ColorEntry, ColorInfo, Limit, LimitType, MapInfo, ModInfo, Os, Player, PlayerAddress,
    Rules, ServerType, Status, Team,
};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

/// Which strings the wire can carry: UTF-8 (any character but NUL) or Latin-1
/// (U+0001–U+00FF).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charset {
    /// UTF-8: any character but NUL.
    Utf8,
    /// Latin-1: U+0001–U+00FF.
    Latin1,
}

/// What kind of statuses to generate.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    /// The charset every generated string fits.
    pub cs: Charset,
    /// `false`: every field of a list is present in all entries or in none (one field
    /// mask per list on the wire), flag groups are all known or all unknown: the wire
    /// represents these exactly. `true`: each entry (and each map, each server flag)
    /// picks its fields on its own, which exercises the "absent is sent as zero" rules.
    pub mixed: bool,
    /// Occasionally 250–300 players (VarUINT counts of three bytes, many split packets).
    pub big: bool,
}

/// UTF-8 statuses the wire represents exactly, sometimes with 250–300 players.
pub const EXACT: Params = Params {
    cs: Charset::Utf8,
    mixed: false,
    big: true,
};

/// A character the charset carries: mostly printable ASCII, else any character of the
/// charset (never NUL).
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

/// A string of 0–9 [`wire_char`]s.
pub fn wire_string(cs: Charset) -> BoxedStrategy<Text> {
    vec(wire_char(cs), 0..10)
        .prop_map(|cs: Vec<char>| cs.into_iter().collect::<Text>())
        .boxed()
}

/// A string of 1–9 [`wire_char`]s.
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

/// `Some` value of `s` when `on` (the field is in the presence mask), else always `None`.
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
        .prop_map(|(delta, code, color16)| ColorEntry::new(delta, code, color16));
    (vec(entry, 0..4), vec(any::<u8>(), 0..=1))
        .prop_map(|(entries, undecoded)| {
            let mut color = ColorInfo::default();
            color.entries = entries;
            color.undecoded = undecoded;
            color
        })
        .boxed()
}

/// A player address: raw bytes (0–39) or a socket address in its wire form.
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

/// A model value that fits a 16-bit wire field (the model's field is wider).
fn wire_u16() -> impl Strategy<Value = u32> {
    any::<u16>().prop_map(u32::from)
}

/// A team with the fields of presence mask `m` (name, score, ping, loss, player count,
/// colour); the name's colour info is random.
pub fn team(m: [bool; 6], p: Params) -> BoxedStrategy<Team> {
    (
        maybe(m[0], wire_string(p.cs)),
        option::of(color_info()),
        maybe(m[1], var_i32()),
        maybe(m[2], wire_u16()),
        maybe(m[3], wire_u16()),
        maybe(m[4], var_u32()),
        maybe(m[5], any::<u16>()),
    )
        .prop_map(
            |(name, name_color, score, average_ping, average_loss, player_count, color)| {
                let mut team = Team::default();
                team.name = name;
                team.name_color = name_color;
                team.score = score;
                team.average_ping = average_ping;
                team.average_loss = average_loss;
                team.player_count = player_count;
                team.color = color;
                team.extra = BTreeMap::new();
                team
            },
        )
        .boxed()
}

/// A player with the fields of presence mask `m`: `m[0]` is the flag group
/// (alive/dead/bot/bomb/vip, see [`flag`]), `m[1..]` the other fields in wire order.
/// `duration`, `money` and `extra` (not carried by OGP) stay empty.
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
        maybe(m[14], wire_u16()),
        maybe(m[15], wire_u16()),
        maybe(m[16], s()),
        maybe(m[17], wire_u16()),
        maybe(m[18], address()),
    );
    (flags, who, stats, net)
        .prop_map(
            |(
                (alive, dead, bot, bomb, vip),
                (slot, name, name_color, team, class, race),
                (score, frags, kills, deaths, suicides, team_kills),
                (id, global_id, ping, loss, model, time, address),
            )| {
                let mut player = Player::default();
                player.slot = slot;
                player.name = name;
                player.name_color = name_color;
                player.team = team;
                player.class = class;
                player.race = race;
                player.score = score;
                player.frags = frags;
                player.kills = kills;
                player.deaths = deaths;
                player.suicides = suicides;
                player.team_kills = team_kills;
                player.id = id;
                player.global_id = global_id;
                player.ping = ping;
                player.loss = loss;
                player.model = model;
                player.time = time;
                player.duration = None;
                player.address = address;
                player.alive = alive;
                player.dead = dead;
                player.bot = bot;
                player.bomb = bomb;
                player.vip = vip;
                player.money = None;
                player.extra = BTreeMap::new();
                player
            },
        )
        .boxed()
}

/// An add-on with the fields of presence mask `m`: `m[0]` is the flag group
/// (active/anti-cheat/mutator/admin-tool), then short name, long name, version.
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
            |((active, anti_cheat, mutator, admin_tool), short_name, long_name, version)| {
                let mut addon = AddOn::default();
                addon.short_name = short_name;
                addon.long_name = long_name;
                addon.version = version;
                addon.active = active;
                addon.anti_cheat = anti_cheat;
                addon.mutator = mutator;
                addon.admin_tool = admin_tool;
                addon
            },
        )
        .boxed()
}

/// A map with a name and the fields of presence mask `m` (file name, size, MD5, version,
/// URL, author).
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
            |(name, file_name, file_size, file_md5, version, url, author)| {
                let mut map = MapInfo::default();
                map.name = name;
                map.file_name = file_name;
                map.file_size = file_size;
                map.file_md5 = file_md5;
                map.version = version;
                map.url = url;
                map.author = author;
                map
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
        |(name, (identifier, size, version, url, author))| {
            let mut mod_info = ModInfo::default();
            mod_info.name = name;
            mod_info.identifier = identifier;
            mod_info.size = size;
            mod_info.version = version;
            mod_info.url = url;
            mod_info.author = author;
            mod_info
        },
    );
    if p.mixed {
        let unnamed = fields().prop_map(|(identifier, size, version, url, author)| {
            let mut mod_info = ModInfo::default();
            mod_info.name = Text::default();
            mod_info.identifier = identifier;
            mod_info.size = size;
            mod_info.version = version;
            mod_info.url = url;
            mod_info.author = author;
            mod_info
        });
        prop_oneof![1 => unnamed, 3 => named].boxed()
    } else {
        prop_oneof![1 => Just(ModInfo::default()), 3 => named].boxed()
    }
}

/// `server_type`, `os`, `password` and `proxy` of a status: one ServerFlags on the wire.
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

/// 0–5 rules; keys are sometimes the duplicate `"dup"`.
pub fn rules(cs: Charset) -> BoxedStrategy<Rules> {
    let key = prop_oneof![3 => wire_string(cs), 1 => Just(Text::from("dup"))];
    vec((key, wire_string(cs)), 0..6).prop_map(Rules).boxed()
}

/// 0–4 limits of any LimitType code 0–15, with or without the amount left.
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
            .map(|(kind, limit, left)| Limit::new(kind, limit).with_left(left))
            .collect()
    })
    .boxed()
}

/// 0–5 players, or (1 in 16, when `p.big`) 250–299.
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
            )| {
                let mut status = Status::default();
                status.game_id = game_id;
                status.game_name = game_name;
                status.game_version = None;
                status.host_name = host_name;
                status.host_name_color = host_name_color;
                status.connect_port = connect_port;
                status.server_type = server_type;
                status.os = os;
                status.password = password;
                status.proxy = proxy;
                status.mod_info = mod_info;
                status.game_type = game_type;
                status.game_mode = game_mode;
                status.map = map;
                status.next_map = next_map;
                status.player_count = player_count;
                status.slot_max = slot_max;
                status.bot_count = bot_count;
                status.reserved_slots = reserved_slots;
                status.uptime_seconds = None;
                status.teams = teams;
                status.players = players;
                status.rules = rules;
                status.addons = addons;
                status.limits = limits;
                status.a2s = None;
                status
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

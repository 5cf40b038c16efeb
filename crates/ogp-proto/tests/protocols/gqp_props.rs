//! Property tests for GQP: random statuses survive the client machine ↔ responder in
//! every encoding (ETB blocks included); queries and replies survive their encoding; no
//! input makes a decoder, the responder or the client panic; and a source that has not
//! proved its address never gets more bytes than it sent.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::gqp::client::{QueryMachine, QueryOptions};
use ogp_proto::gqp::responder::{GqpConfig, GqpOutcome, GqpResponder};
use ogp_proto::gqp::{
    decode_query, decode_reply, encode_query, wire, Command, Encoding, Query, Record, Reply,
    StatusCode,
};
use ogp_proto::guard::ChallengeKeys;
use ogp_proto::responder::Transmits;
use ogp_proto::responder::{Incoming, ProtocolResponder};
use ogp_proto::{
    AddOn, Limit, LimitType, MapInfo, ModInfo, Os, Player, PlayerAddress, Rules, ServerType,
    Status, Team, Text,
};
use proptest::collection::{btree_map, vec};
use proptest::option::of;
use proptest::prelude::*;

// =======================================================================================
// Strategies

/// Any character (UTF-8 mode: control characters included, they are escaped) or
/// Latin-1 only (plain 8-bit mode).
fn text(latin1: bool) -> BoxedStrategy<Text> {
    let c = if latin1 {
        prop_oneof![3 => (0x20u8..0x7f).prop_map(char::from), 1 => any::<u8>().prop_map(char::from)]
            .boxed()
    } else {
        prop_oneof![3 => (0x20u8..0x7f).prop_map(char::from), 1 => any::<char>()].boxed()
    };
    vec(c, 0..8)
        .prop_map(|v| v.into_iter().collect::<Text>())
        .boxed()
}

fn otext(l: bool) -> BoxedStrategy<Option<Text>> {
    of(text(l)).boxed()
}

fn map(l: bool) -> BoxedStrategy<MapInfo> {
    (
        text(l),
        otext(l),
        of(any::<u32>()),
        of(any::<[u8; 16]>()),
        otext(l),
        otext(l),
        otext(l),
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

fn address() -> BoxedStrategy<PlayerAddress> {
    prop_oneof![
        (any::<[u8; 4]>(), any::<u16>()).prop_map(|(ip, port)| PlayerAddress::from_socket_addr(
            (std::net::Ipv4Addr::from(ip), port).into()
        )),
        vec(any::<u8>(), 0..12).prop_map(PlayerAddress),
    ]
    .boxed()
}

fn extra(l: bool) -> BoxedStrategy<std::collections::BTreeMap<Text, Text>> {
    btree_map(text(l), text(l), 0..3).boxed()
}

fn player(l: bool) -> BoxedStrategy<Player> {
    let a = (
        of(any::<u32>()),
        otext(l),
        of(any::<i32>()),
        otext(l),
        otext(l),
        of(any::<i32>()),
        of(any::<i32>()),
        of(any::<u32>()),
        of(any::<u32>()),
        of(any::<u32>()),
        of(any::<u32>()),
        of(any::<u32>()),
    );
    let b = (
        otext(l),
        of(any::<u32>()),
        of(any::<u32>()),
        otext(l),
        of(any::<u32>()),
        of(prop_oneof![
            any::<f32>().prop_filter("finite", |f| f.is_finite()),
            0f32..1e6
        ]),
        of(address()),
        [
            of(any::<bool>()),
            of(any::<bool>()),
            of(any::<bool>()),
            of(any::<bool>()),
            of(any::<bool>()),
        ],
        of(any::<i32>()),
        extra(l),
    );
    (a, b)
        .prop_map(
            |(
                (
                    slot,
                    name,
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
                ),
                (
                    global_id,
                    ping,
                    loss,
                    model,
                    time,
                    duration,
                    address,
                    [alive, dead, bot, bomb, vip],
                    money,
                    extra,
                ),
            )| {
                let mut player = Player::default();
                player.slot = slot;
                player.name = name;
                player.name_color = None;
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
                player.duration = duration;
                player.address = address;
                player.alive = alive;
                player.dead = dead;
                player.bot = bot;
                player.bomb = bomb;
                player.vip = vip;
                player.money = money;
                player.extra = extra;
                player
            },
        )
        .boxed()
}

fn team(l: bool) -> BoxedStrategy<Team> {
    (
        otext(l),
        of(any::<i32>()),
        of(any::<u32>()),
        of(any::<u32>()),
        of(any::<u32>()),
        of(any::<u16>()),
        extra(l),
    )
        .prop_map(
            |(name, score, average_ping, average_loss, player_count, color, extra)| {
                let mut team = Team::default();
                team.name = name;
                team.name_color = None;
                team.score = score;
                team.average_ping = average_ping;
                team.average_loss = average_loss;
                team.player_count = player_count;
                team.color = color;
                team.extra = extra;
                team
            },
        )
        .boxed()
}

fn addon(l: bool) -> BoxedStrategy<AddOn> {
    (
        otext(l),
        otext(l),
        otext(l),
        [
            of(any::<bool>()),
            of(any::<bool>()),
            of(any::<bool>()),
            of(any::<bool>()),
        ],
    )
        .prop_map(
            |(short_name, long_name, version, [active, anti_cheat, mutator, admin_tool])| {
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

fn limit() -> BoxedStrategy<Limit> {
    (any::<u8>(), any::<u32>(), of(any::<u32>()))
        .prop_map(|(k, limit, left)| Limit::new(LimitType::from_code(k), limit).with_left(left))
        .boxed()
}

/// A status with every field GQP carries (not colours, not the A2S block).
fn status(l: bool) -> BoxedStrategy<Status> {
    let a = (
        of(any::<u16>()),
        otext(l),
        otext(l),
        otext(l),
        of(any::<u16>()),
        of(any::<u8>().prop_map(ServerType::from_code)),
        of(any::<u8>().prop_map(Os::from_code)),
        of(any::<bool>()),
        of(any::<bool>()),
        of((
            text(l),
            otext(l),
            of(any::<u32>()),
            otext(l),
            otext(l),
            otext(l),
        )),
        otext(l),
        otext(l),
    );
    let b = (
        of(map(l)),
        of(map(l)),
        [
            of(any::<u32>()),
            of(any::<u32>()),
            of(any::<u32>()),
            of(any::<u32>()),
        ],
        of(vec(team(l), 0..4)),
        of(vec(player(l), 0..12)),
        of(vec((text(l), text(l)), 0..6)),
        of(vec(addon(l), 0..3)),
        of(vec(limit(), 0..3)),
    );
    (a, b)
        .prop_map(
            |(
                (
                    game_id,
                    game_name,
                    game_version,
                    host_name,
                    connect_port,
                    server_type,
                    os,
                    password,
                    proxy,
                    m,
                    game_type,
                    game_mode,
                ),
                (
                    map,
                    next_map,
                    [player_count, slot_max, bot_count, reserved_slots],
                    teams,
                    players,
                    rules,
                    addons,
                    limits,
                ),
            )| {
                let mut status = Status::default();
                status.game_id = game_id;
                status.game_name = game_name;
                status.game_version = game_version;
                status.host_name = host_name;
                status.host_name_color = None;
                status.connect_port = connect_port;
                status.server_type = server_type;
                status.os = os;
                status.password = password;
                status.proxy = proxy;
                status.mod_info = m.map(|(name, identifier, size, version, url, author)| {
                    let mut mod_info = ModInfo::default();
                    mod_info.name = name;
                    mod_info.identifier = identifier;
                    mod_info.size = size;
                    mod_info.version = version;
                    mod_info.url = url;
                    mod_info.author = author;
                    mod_info
                });
                status.game_type = game_type;
                status.game_mode = game_mode;
                status.map = map;
                status.next_map = next_map;
                status.player_count = player_count;
                status.slot_max = slot_max;
                status.bot_count = bot_count;
                status.reserved_slots = reserved_slots;
                status.teams = teams;
                status.players = players;
                status.rules = rules.map(Rules::from_iter);
                status.addons = addons;
                status.limits = limits;
                status.a2s = None;
                status.uptime_seconds = None;
                status
            },
        )
        .boxed()
}

fn encoding() -> impl Strategy<Value = Encoding> {
    prop::sample::select(vec![
        "utf-8",
        "deflate+utf-8",
        "gzip+utf-8",
        "",
        "deflate",
        "gzip",
    ])
    .prop_map(|n| Encoding::parse(n).unwrap())
}

// =======================================================================================
// Harness

fn responder(config: GqpConfig) -> (GqpResponder, ChallengeKeys, Instant) {
    let t0 = Instant::now();
    (
        GqpResponder::new(config),
        ChallengeKeys::new([1; 16], Duration::from_secs(300), t0),
        t0,
    )
}

fn ip() -> IpAddr {
    "192.0.2.9".parse().unwrap()
}

/// A query built from the commands a responder knows, with random arguments.
fn known_query() -> impl Strategy<Value = Query> {
    let name = prop::sample::select(vec![
        "identify",
        "echo",
        "login",
        "validate",
        "extensions",
        "challenge",
        "serverinfo",
        "players",
        "teams",
        "rules",
        "addons",
        "limits",
        "",
        "x",
    ]);
    let command = (name, vec(text(true), 0..4)).prop_map(|(n, args)| Command {
        name: n.into(),
        args,
    });
    (encoding(), vec(command, 1..6)).prop_map(|(encoding, commands)| Query { encoding, commands })
}

fn big_status() -> Status {
    let mut status = Status::default();
    status.game_name = Some("game".into());
    status.host_name = Some("host".into());
    status.players = Some(
        (0..40)
            .map(|i| {
                let mut player = Player::default();
                player.name = Some(format!("p{i}").into());
                player.score = Some(i);
                player
            })
            .collect(),
    );
    status.rules = Some(Rules::from_iter((0..40).map(|i| (format!("r{i}"), "v"))));
    status
}

proptest! {
    // 256 cases by default; PROPTEST_CASES raises it.
    #![proptest_config(ProptestConfig::default())]

    #[test]
    fn random_statuses_survive_client_and_responder(
        s in prop_oneof![status(false), status(true)],
        enc in encoding(),
    ) {
        // Latin-1 strings only survive the 8-bit charset; use UTF-8 for the others.
        let enc = if enc.charset == wire::Charset::Latin1 && !status_is_latin1(&s) {
            Encoding { charset: wire::Charset::Utf8, ..enc }
        } else {
            enc
        };
        let (mut r, mut keys, t0) = responder({
            let mut config = GqpConfig::default();
            config.player_addresses = true;
            config
        });
        let mut m = QueryMachine::new({
            let mut opts = QueryOptions::default();
            opts.encoding = enc;
            opts
        }, Timing::default(), t0);
        let mut out = Transmits::default();
        for _ in 0..4 {
            let Some(q) = m.poll_transmit(t0) else { break };
            out.clear();
            r.handle(Incoming { now: t0, ip: ip(), datagram: &q, reject: false }, &s, &mut keys, &mut out);
            for d in out.iter() {
                m.handle_datagram(t0, d);
            }
        }
        let o = m.take_result().unwrap_or_else(|| panic!("not done: {m:?}")).expect("ok");
        prop_assert!(o.warnings.is_empty(), "{:?}", o.warnings);
        prop_assert_eq!(o.status, s);
    }

    #[test]
    fn queries_round_trip(q in known_query()) {
        let latin1 = q.commands.iter().all(|c| c.args.iter().chain([&c.name]).all(|s| s.chars().all(|c| u32::from(c) < 256)));
        prop_assume!(latin1);
        let mut d = Vec::new();
        encode_query(&q, &mut d);
        prop_assert_eq!(decode_query(&d, 64, 1 << 16).unwrap(), q);
    }

    #[test]
    fn replies_round_trip(
        replies in vec((0u8..100, text(true), vec(prop_oneof![
            text(true).prop_map(Record::Text),
            text(true).prop_map(Record::String),
            (text(true), text(true)).prop_map(|(k, v)| Record::Pair(k, v)),
            vec(text(true), 1..4).prop_map(Record::Array),
            (text(true), vec(text(true), 0..4)).prop_map(|(l, v)| Record::Labelled(l, v)),
        ], 0..4)), 1..5),
        enc in encoding(),
        last in any::<bool>(),
    ) {
        let replies: Vec<Reply> = replies
            .into_iter()
            .map(|(c, name, records)| Reply { code: StatusCode(c), name, records })
            .collect();
        let mut d = Vec::new();
        wire::encode_reply(enc, &[], &replies, last, &mut d);
        let got = decode_reply(&d, 1 << 20).unwrap();
        prop_assert_eq!(got.replies, replies);
        prop_assert_eq!(got.last, last);
        prop_assert_eq!(got.encoding, enc);
    }

    #[test]
    fn random_bytes_never_panic(
        bytes in vec(any::<u8>(), 0..300),
        framed in any::<bool>(),
        header in prop::sample::select(vec!["", "\x01utf-8\x06", "\x01deflate\x06", "\x01gzip+utf-8\x06"]),
    ) {
        let mut d = bytes;
        if framed {
            d.splice(0..0, header.bytes());
            d.push(wire::EOT);
        }
        let _ = decode_query(&d, 32, 4096);
        let _ = decode_reply(&d, 4096);
        let (mut r, mut keys, t0) = responder(GqpConfig::default());
        let mut out = Transmits::default();
        let o = r.handle(Incoming { now: t0, ip: ip(), datagram: &d, reject: false }, &big_status(), &mut keys, &mut out);
        prop_assert!(out.total_bytes() <= d.len(), "{:?}", o);
        let mut m = QueryMachine::new({
            let mut opts = QueryOptions::default();
            opts.token = Some("00000001".into());
            opts
        }, Timing::default(), t0);
        m.poll_transmit(t0);
        m.handle_datagram(t0, &d);
        m.handle_timeout(t0 + Duration::from_secs(10));
        prop_assert!(m.is_done());
    }

    /// The amplification property: whatever an unproven source sends, the responder sends
    /// back at most as many bytes (one datagram at most).
    #[test]
    fn unproven_sources_get_no_more_than_they_sent(
        q in known_query(),
        garbage in vec(any::<u8>(), 0..64),
        which in 0..3u8,
    ) {
        let mut d = Vec::new();
        encode_query(&q, &mut d);
        match which {
            0 => {}
            1 => { d.splice(0..0, garbage); }
            _ => { let at = d.len() - 1; d.splice(at..at, garbage); }
        }
        let (mut r, mut keys, t0) = responder(GqpConfig::default());
        let mut out = Transmits::default();
        let o = r.handle(Incoming { now: t0, ip: ip(), datagram: &d, reject: false }, &big_status(), &mut keys, &mut out);
        prop_assert!(out.len() <= 1);
        prop_assert!(out.total_bytes() <= d.len(), "{} > {} ({:?})", out.total_bytes(), d.len(), o);
        if let GqpOutcome::Answer { proven, .. } = o {
            prop_assert!(!proven);
        }
    }
}

fn status_is_latin1(s: &Status) -> bool {
    let json = serde_json::to_string(s).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
    fn walk(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::String(s) => s.chars().all(|c| u32::from(c) < 256),
            serde_json::Value::Array(a) => a.iter().all(walk),
            serde_json::Value::Object(o) => o
                .iter()
                .all(|(k, v)| k.chars().all(|c| u32::from(c) < 256) && walk(v)),
            _ => true,
        }
    }
    // Rules are a JSON object, where a repeated name keeps only its last value: look at
    // every pair itself.
    let latin1 = |t: &str| t.chars().all(|c| u32::from(c) < 256);
    let rules = s
        .rules
        .as_ref()
        .is_none_or(|r| r.iter().all(|(k, v)| latin1(k) && latin1(v)));
    walk(&v) && rules
}

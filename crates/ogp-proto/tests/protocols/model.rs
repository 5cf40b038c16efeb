//! The status model's serde form (the state-file schema): the canonical example loads as
//! it is and comes back out under the same keys, TOML and JSON agree, typos and bad
//! values are errors, unknown codes are kept, counts default from the lists, and player
//! addresses survive the text form without loss.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use ogp_proto::{LimitType, ModInfo, Os, Player, PlayerAddress, Rules, ServerType, Status};
use serde_json::{json, Value};

const STATE_JSON: &str = include_str!("../data/state.json");

/// The same status as `data/state.json`, written by hand in TOML the way a user would:
/// rule values as bare numbers where they are numbers.
const STATE_TOML: &str = r#"
game_id = 42
game_name = "Demo Arena"
host_name = "Demo Arena #1 – Ünïcödé ✓"
connect_port = 27015
server_type = "dedicated"
os = "linux"
password = false
proxy = false
game_type = "CTF"
game_mode = "openplaying"
slot_max = 24
reserved_slots = 2

[mod]
name = "ctfplus"
identifier = "ctfp"
size = 5242880
version = "2.1.0"
url = "http://example.invalid/ctfplus"
author = "Demo Team"

[map]
name = "Harbor"
file_name = "ctf_harbor"
file_size = 1048576
file_md5 = "00112233445566778899aabbccddeeff"
version = "1.0"
url = "http://example.invalid/maps/harbor"
author = "Mapper"

[next_map]
name = "Canyon"
file_name = "ctf_canyon"

[[teams]]
name = "Red"
score = 3
average_ping = 48
average_loss = 0
player_count = 2
color = 63488

[[teams]]
name = "Blue"
score = -1
average_ping = 61
average_loss = 1
player_count = 1
color = 31

[[players]]
slot = 0
name = "Alice"
team = 0
class = "Sniper"
race = "Human"
score = 1200
frags = 14
kills = 15
deaths = 3
suicides = 1
team_kills = 0
id = 1001
global_id = "STEAM_0:1:1001"
ping = 35
loss = 0
model = "m1"
time = 754
alive = true
dead = false
bot = false
address = "192.0.2.10:27005"

[[players]]
slot = 1
name = "Bob the Bot"
team = 0
score = -200
kills = 70000
deaths = 12
ping = 0
time = 3600
alive = false
dead = true
bot = true

[[players]]
slot = 2
name = "Zoë"
team = 1
score = 0
ping = 112
time = 31
alive = true

[rules]
timelimit = 20
fraglimit = 50
motd = "Hällo and welcome"

[[addons]]
short_name = "AMX"
long_name = "AMX Mod X"
version = "1.9.0"
active = true
admin_tool = true

[[addons]]
short_name = "VAC"
long_name = "Valve Anti-Cheat"
version = "2"
active = true
anti_cheat = true

[[limits]]
type = "time"
limit = 1200
left = 446

[[limits]]
type = "player_score"
limit = 50
"#;

fn state() -> Status {
    Status::from_json(STATE_JSON).expect("state.json loads")
}

fn json_err(text: &str) -> String {
    match Status::from_json(text) {
        Ok(s) => panic!("{text} should be rejected, loaded as {s:?}"),
        Err(e) => e.to_string(),
    }
}

fn toml_err(text: &str) -> String {
    match Status::from_toml(text) {
        Ok(s) => panic!("{text} should be rejected, loaded as {s:?}"),
        Err(e) => e.to_string(),
    }
}

// ---------------------------------------------------------------------------------------
// The canonical example

#[test]
fn state_json_round_trips_to_the_same_value() {
    let input: Value = serde_json::from_str(STATE_JSON).unwrap();
    let status = state();
    let output = serde_json::to_value(&status).unwrap();
    assert_eq!(output, input, "same keys, same values");

    // the pretty form the CLI writes loads back to the same status and the same value
    let pretty = status.to_json_pretty();
    let again = Status::from_json(&pretty).unwrap();
    assert_eq!(again, status);
    assert_eq!(serde_json::from_str::<Value>(&pretty).unwrap(), input);
}

#[test]
fn state_json_fields_land_where_expected() {
    let s = state();
    assert_eq!(s.game_id, Some(42));
    assert_eq!(s.host_name.as_deref(), Some("Demo Arena #1 – Ünïcödé ✓"));
    assert_eq!(s.server_type, Some(ServerType::Dedicated));
    assert_eq!(s.os, Some(Os::Linux));
    assert_eq!((s.password, s.proxy), (Some(false), Some(false)));
    assert_eq!(s.mod_info.as_ref().unwrap().effective_identifier(), "ctfp");

    let map = s.map.as_ref().unwrap();
    assert_eq!(
        map.file_md5,
        Some([
            0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd,
            0xee, 0xff
        ])
    );
    assert_eq!(map.effective_file_name(), "ctf_harbor");
    let next = s.next_map.as_ref().unwrap();
    assert_eq!((next.name.as_str(), next.file_size), ("Canyon", None));

    let teams = s.teams.as_ref().unwrap();
    assert_eq!(teams[0].color, Some(63488));
    assert_eq!(teams[1].score, Some(-1));

    let players = s.players.as_ref().unwrap();
    assert_eq!(players.len(), 3);
    assert_eq!(players[1].kills, Some(70000));
    assert_eq!(players[1].score, Some(-200));
    assert_eq!(players[1].bot, Some(true));
    assert_eq!(players[2].name.as_deref(), Some("Zoë"));
    assert_eq!(players[2].dead, None);
    let addr = players[0].address.as_ref().unwrap();
    assert_eq!(
        addr.socket_addr(),
        Some(SocketAddr::from((Ipv4Addr::new(192, 0, 2, 10), 27005)))
    );
    assert_eq!(
        addr.0,
        [2, 0, 0x69, 0x7d, 192, 0, 2, 10],
        "canonical sockaddr_in"
    );
    assert_eq!(players[1].address, None);

    // rules keep the file's order, which is not alphabetical
    let rules = s.rules.as_ref().unwrap();
    let keys: Vec<&str> = rules.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["timelimit", "fraglimit", "motd"]);
    assert_eq!(rules.get("motd"), Some("Hällo and welcome"));
    let pretty = s.to_json_pretty();
    let pos = |k: &str| pretty.find(&format!("\"{k}\"")).unwrap();
    assert!(pos("timelimit") < pos("fraglimit") && pos("fraglimit") < pos("motd"));

    let addons = s.addons.as_ref().unwrap();
    assert_eq!(addons[0].admin_tool, Some(true));
    assert_eq!(addons[1].anti_cheat, Some(true));
    assert_eq!(addons[0].anti_cheat, None);

    let limits = s.limits.as_ref().unwrap();
    let kinds: Vec<LimitType> = limits.iter().map(|l| l.kind).collect();
    assert_eq!(kinds, [LimitType::Time, LimitType::PlayerScore]);
    assert_eq!((limits[0].limit, limits[0].left), (1200, Some(446)));
    assert_eq!((limits[1].limit, limits[1].left), (50, None));

    // counts are not in the file: they come from the player list
    assert_eq!((s.player_count, s.bot_count), (None, None));
    assert_eq!((s.player_count(), s.bot_count()), (Some(3), Some(1)));
    assert_eq!(s.a2s, None);
}

#[test]
fn toml_form_equals_json_form() {
    let from_toml = Status::from_toml(STATE_TOML).expect("TOML loads");
    // bare numbers in [rules] became their text; everything else is the same
    assert_eq!(from_toml, state());
    let rules = from_toml.rules.as_ref().unwrap();
    assert_eq!(rules.get("timelimit"), Some("20"));
    assert_eq!(rules.get("fraglimit"), Some("50"));
    // and its JSON is the canonical file's
    assert_eq!(
        serde_json::to_value(&from_toml).unwrap(),
        serde_json::from_str::<Value>(STATE_JSON).unwrap()
    );
}

#[test]
fn bare_rule_values_become_text() {
    let s = Status::from_toml(
        "[rules]\nzeta = 1\nalpha = -3\nratio = 0.5\nflag = true\noff = false\ntext = \"x\"\n",
    )
    .unwrap();
    let rules: Vec<(&str, &str)> = s.rules.as_ref().unwrap().iter().collect();
    assert_eq!(
        rules,
        [
            ("zeta", "1"),
            ("alpha", "-3"),
            ("ratio", "0.5"),
            ("flag", "1"),
            ("off", "0"),
            ("text", "x")
        ]
    );
    let s = Status::from_json(r#"{"rules": {"b": 20, "a": true, "c": "20"}}"#).unwrap();
    assert_eq!(
        s.rules,
        Some(Rules::from_iter([("b", "20"), ("a", "1"), ("c", "20")]))
    );
    // rules serialize back as strings, in order
    assert_eq!(
        serde_json::to_string(&s.rules).unwrap(),
        r#"{"b":"20","a":"1","c":"20"}"#
    );
    // a nested table is not a rule value
    assert!(Status::from_json(r#"{"rules": {"a": {"b": 1}}}"#).is_err());
}

// ---------------------------------------------------------------------------------------
// Rejections

#[test]
fn unknown_keys_are_rejected_and_named() {
    for (text, key) in [
        (r#"{"game_nmae": "x"}"#, "game_nmae"),
        (r#"{"players": [{"nmae": "Alice"}]}"#, "nmae"),
        (r#"{"map": {"name": "m", "fiel_name": "f"}}"#, "fiel_name"),
        (r#"{"mod": {"name": "m", "homepage": "h"}}"#, "homepage"),
        (r#"{"teams": [{"colour": 1}]}"#, "colour"),
        (r#"{"addons": [{"enabled": true}]}"#, "enabled"),
        (
            r#"{"limits": [{"type": "time", "limit": 1, "remaining": 1}]}"#,
            "remaining",
        ),
        (r#"{"a2s": {"vac": true, "vak": true}}"#, "vak"),
        (
            r#"{"host_name_color": {"entries": [], "extra": 1}}"#,
            "extra",
        ),
    ] {
        let e = json_err(text);
        assert!(e.contains(key), "{text}: error {e:?} does not name {key}");
    }
    let e = toml_err("game_nmae = \"x\"\n");
    assert!(e.contains("game_nmae"), "{e}");
    let e = toml_err("[[players]]\nnmae = \"Alice\"\n");
    assert!(e.contains("nmae"), "{e}");
}

#[test]
fn bad_values_are_rejected() {
    // md5: wrong length, not hex, not a string
    for md5 in [
        r#""0011""#,
        r#""00112233445566778899aabbccddeeff00""#,
        r#""zz112233445566778899aabbccddeeff""#,
        r#""0112233445566778899aabbccddeeff""#,
        "16",
    ] {
        let text = format!(r#"{{"map": {{"name": "m", "file_md5": {md5}}}}}"#);
        assert!(Status::from_json(&text).is_err(), "{text}");
    }
    let e = json_err(r#"{"map": {"name": "m", "file_md5": "0011"}}"#);
    assert!(e.contains("file_md5"), "{e}");

    // addresses
    for addr in [
        "192.0.2.10",
        "192.0.2.300:1",
        "192.0.2.10:70000",
        "::1:27015",
        "localhost:27015",
        "raw:abc",
        "raw:zz",
        "",
    ] {
        let text = json!({ "players": [{ "address": addr }] }).to_string();
        assert!(Status::from_json(&text).is_err(), "{addr:?} accepted");
    }

    // server type, os, limit type: unknown names, out-of-range codes, wrong types
    for text in [
        r#"{"server_type": "dedi"}"#,
        r#"{"server_type": "Dedicated"}"#,
        r#"{"server_type": 256}"#,
        r#"{"server_type": -1}"#,
        r#"{"server_type": true}"#,
        r#"{"os": "windows95"}"#,
        r#"{"limits": [{"type": "frags", "limit": 1}]}"#,
        r#"{"limits": [{"limit": 1}]}"#,
        r#"{"mod": {"version": "1"}}"#,
        r#"{"map": {}}"#,
        r#"{"game_id": 65536}"#,
        r#"{"players": {}}"#,
    ] {
        assert!(Status::from_json(text).is_err(), "{text} accepted");
    }
    let e = json_err(r#"{"server_type": "dedi"}"#);
    assert!(e.contains("dedi") && e.contains("dedicated"), "{e}");
}

// ---------------------------------------------------------------------------------------
// Codes

#[test]
fn unknown_codes_are_kept_and_written_back_as_numbers() {
    let text = r#"{"server_type": 3, "os": 5, "limits": [{"type": 9, "limit": 7}]}"#;
    let s = Status::from_json(text).unwrap();
    assert_eq!(s.server_type, Some(ServerType::Other(3)));
    assert_eq!(s.os, Some(Os::Other(5)));
    assert_eq!(s.limits.as_ref().unwrap()[0].kind, LimitType::Other(9));
    assert_eq!(
        serde_json::to_value(&s).unwrap(),
        serde_json::from_str::<Value>(text).unwrap()
    );
    assert_eq!(Os::Other(5).to_string(), "unknown (5)");

    // a known code written as a number is that value, written back by its name
    let s =
        Status::from_json(r#"{"server_type": 2, "os": 2, "limits": [{"type": 1, "limit": 1}]}"#)
            .unwrap();
    assert_eq!(
        (s.server_type, s.os),
        (Some(ServerType::Dedicated), Some(Os::Linux))
    );
    assert_eq!(
        serde_json::to_value(&s).unwrap(),
        json!({"server_type": "dedicated", "os": "linux", "limits": [{"type": "player_score", "limit": 1}]})
    );

    // the same from TOML
    let s = Status::from_toml("os = 5\nserver_type = \"listen\"\n").unwrap();
    assert_eq!(
        (s.os, s.server_type),
        (Some(Os::Other(5)), Some(ServerType::Listen))
    );

    for code in 0..=255u8 {
        assert_eq!(ServerType::from_code(code).code(), code);
        assert_eq!(Os::from_code(code).code(), code);
        assert_eq!(LimitType::from_code(code).code(), code);
    }
}

// ---------------------------------------------------------------------------------------
// Counts

#[test]
fn counts_default_from_the_player_list_and_explicit_values_win() {
    let none = Status::default();
    assert_eq!((none.player_count(), none.bot_count()), (None, None));

    let bot = |b: Option<bool>| {
        let mut player = Player::default();
        player.bot = b;
        player
    };
    let mut s = Status::default();
    s.players = Some(vec![
        bot(Some(true)),
        bot(Some(false)),
        bot(None),
        bot(Some(true)),
    ]);
    assert_eq!((s.player_count(), s.bot_count()), (Some(4), Some(2)));

    // a list where no player says whether it is a bot does not count bots
    s.players = Some(vec![bot(None), bot(None)]);
    assert_eq!((s.player_count(), s.bot_count()), (Some(2), None));
    s.players = Some(vec![]);
    assert_eq!((s.player_count(), s.bot_count()), (Some(0), None));

    // explicit values win, over a list or without one
    s.players = Some(vec![bot(Some(true))]);
    s.player_count = Some(17);
    s.bot_count = Some(0);
    assert_eq!((s.player_count(), s.bot_count()), (Some(17), Some(0)));
    s.players = None;
    assert_eq!((s.player_count(), s.bot_count()), (Some(17), Some(0)));
    s.player_count = None;
    assert_eq!((s.player_count(), s.bot_count()), (None, Some(0)));

    // the same through the state file
    let s = Status::from_json(r#"{"player_count": 9, "players": [{"bot": true}]}"#).unwrap();
    assert_eq!((s.player_count(), s.bot_count()), (Some(9), Some(1)));
}

// ---------------------------------------------------------------------------------------
// Player addresses

fn address_via_json(a: &PlayerAddress) -> (String, PlayerAddress) {
    let v = serde_json::to_value(a).unwrap();
    let Value::String(text) = &v else {
        panic!("address serializes as a string, not {v}")
    };
    let back: PlayerAddress = serde_json::from_value(v.clone()).unwrap();
    (text.clone(), back)
}

#[test]
fn ipv4_addresses_round_trip_canonically() {
    let sa = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 1), 7777));
    let a = PlayerAddress::from_socket_addr(sa);
    // the capture data set's bytes: family 2 LE, port BE, address
    assert_eq!(a.0, [0x02, 0x00, 0x1e, 0x61, 0x7f, 0x00, 0x00, 0x01]);
    assert_eq!(a.socket_addr(), Some(sa));
    assert_eq!(a.to_string(), "127.0.0.1:7777");
    let (text, back) = address_via_json(&a);
    assert_eq!((text.as_str(), &back), ("127.0.0.1:7777", &a));
}

#[test]
fn ipv6_addresses_round_trip_with_flowinfo_and_scope() {
    let ip: Ipv6Addr = "fe80::1:2".parse().unwrap();
    for (flow, scope) in [(0, 0), (0, 3), (0x12345, 0), (0xdead_beef, 7)] {
        let sa = SocketAddr::V6(SocketAddrV6::new(ip, 27015, flow, scope));
        let a = PlayerAddress::from_socket_addr(sa);
        assert_eq!(a.0.len(), 28, "sockaddr_in6");
        assert_eq!(a.0[..4], [10, 0, 0x69, 0x87], "family 10 LE, port BE");
        assert_eq!(a.0[4..8], flow.to_le_bytes());
        assert_eq!(a.0[8..24], ip.octets());
        assert_eq!(a.0[24..], scope.to_le_bytes());
        assert_eq!(a.socket_addr(), Some(sa));
        let (text, back) = address_via_json(&a);
        assert_eq!(
            back, a,
            "{flow:#x}/{scope}: {text} must read back as the same bytes"
        );
        // `[v6%scope]:port` cannot hold a flowinfo: those bytes are shown raw
        if flow == 0 {
            assert_eq!(text, sa.to_string());
        } else {
            assert_eq!(text, format!("raw:{}", ogp_proto::internals::to_hex(&a.0)));
        }
    }
    let plain = PlayerAddress::from_socket_addr("[2001:db8::1]:80".parse().unwrap());
    assert_eq!(plain.to_string(), "[2001:db8::1]:80");
    let (text, back) = address_via_json(&plain);
    assert_eq!((text.as_str(), back), ("[2001:db8::1]:80", plain));
}

#[test]
fn non_canonical_addresses_are_raw_hex_and_lossless() {
    let mut sin_zero = vec![0x02, 0x00, 0x1e, 0x61, 0x7f, 0x00, 0x00, 0x01];
    sin_zero.extend_from_slice(&[0; 8]);
    let short_in6_hex = format!("raw:0a00{}", "00".repeat(25));
    let cases: Vec<(Vec<u8>, &str)> = vec![
        // a 16-byte sockaddr_in with sin_zero
        (sin_zero, "raw:02001e617f0000010000000000000000"),
        // nothing at all
        (vec![], "raw:"),
        // big-endian family
        (
            vec![0x00, 0x02, 0x1e, 0x61, 0x7f, 0x00, 0x00, 0x01],
            "raw:00021e617f000001",
        ),
        // IPX-ish family, odd sizes
        (vec![0x06, 0x00, 0xab], "raw:0600ab"),
        (vec![0x0a, 0x00, 0x00, 0x50], "raw:0a000050"),
        // sockaddr_in6 one byte short
        ([&[10u8, 0][..], &[0; 25]].concat(), &short_in6_hex),
    ];
    for (bytes, shown) in cases {
        let a = PlayerAddress(bytes);
        assert_eq!(a.socket_addr(), None, "{shown}");
        assert_eq!(a.to_string(), shown);
        let (text, back) = address_via_json(&a);
        assert_eq!((text.as_str(), &back), (shown, &a));
        // and inside a whole status
        let mut s = Status::default();
        s.players = Some(vec![{
            let mut player = Player::default();
            player.address = Some(a.clone());
            player
        }]);
        let again = Status::from_json(&s.to_json_pretty()).unwrap();
        assert_eq!(again, s);
    }
    // raw hex is read in either case
    let a: PlayerAddress = serde_json::from_value(json!("raw:0A00FF")).unwrap();
    assert_eq!(a.0, [0x0a, 0x00, 0xff]);
    // raw: may also spell a canonical address; it is shown as ip:port afterwards
    let a: PlayerAddress = serde_json::from_value(json!("raw:02001e617f000001")).unwrap();
    assert_eq!(a.to_string(), "127.0.0.1:7777");
}

#[test]
fn empty_mod_name_and_defaults() {
    let s = Status::from_json(r#"{"mod": {"name": ""}, "map": {"name": "m", "file_name": ""}}"#)
        .unwrap();
    assert_eq!(s.mod_info, Some(ModInfo::default()));
    assert_eq!(s.mod_info.as_ref().unwrap().effective_identifier(), "");
    assert_eq!(s.map.as_ref().unwrap().effective_file_name(), "m");
    // absent optional fields are not written
    assert_eq!(
        serde_json::to_value(&s).unwrap(),
        json!({"mod": {"name": ""}, "map": {"name": "m", "file_name": ""}})
    );
    assert_eq!(serde_json::to_value(Status::default()).unwrap(), json!({}));
    assert_eq!(Status::from_json("{}").unwrap(), Status::default());
    assert_eq!(Status::from_toml("").unwrap(), Status::default());
}

#[test]
fn uptime_seconds_is_optional_and_round_trips() {
    let s = Status::from_json(r#"{"uptime_seconds": 86400}"#).unwrap();
    assert_eq!(s.uptime_seconds, Some(86400));
    assert_eq!(
        serde_json::to_value(&s).unwrap(),
        json!({"uptime_seconds": 86400})
    );
    assert_eq!(
        Status::from_toml("uptime_seconds = 5")
            .unwrap()
            .uptime_seconds,
        Some(5)
    );
    assert!(Status::from_json(r#"{"uptime_seconds": -1}"#).is_err());
}

proptest::proptest! {
    /// Whatever bytes a server sends as a PlayerAddress come back from the state file
    /// unchanged.
    #[test]
    fn any_address_bytes_survive_json(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40)) {
        let a = PlayerAddress(bytes);
        let (_, back) = address_via_json(&a);
        proptest::prop_assert_eq!(back, a);
    }

    /// Every socket address, with any flowinfo and scope, survives the state file.
    #[test]
    fn any_socket_address_survives_json(
        v4 in proptest::prelude::any::<SocketAddrV4>(),
        v6 in proptest::prelude::any::<SocketAddrV6>(),
    ) {
        for sa in [SocketAddr::V4(v4), SocketAddr::V6(v6)] {
            let a = PlayerAddress::from_socket_addr(sa);
            proptest::prop_assert_eq!(a.socket_addr(), Some(sa));
            let (_, back) = address_via_json(&a);
            proptest::prop_assert_eq!(back, a);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Repeated rule keys

/// A key sent more than once is written once, with an array of its values, so that a
/// reader keeping one value per object key (serde_json's `Value`, like jq and Python's
/// `json`) still sees every value; read back, the pairs come back.
#[test]
fn repeated_rule_keys_survive_json_readers() {
    let rules = Rules::from_iter([
        ("a", "1"),
        ("mod", "x"),
        ("b", "2"),
        ("mod", "y"),
        ("mod", "z"),
    ]);
    let text = serde_json::to_string(&rules).unwrap();
    assert_eq!(text, r#"{"a":"1","mod":["x","y","z"],"b":"2"}"#);
    // what a tool that keeps the last of repeated keys sees
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["mod"], serde_json::json!(["x", "y", "z"]));
    assert_eq!(v.as_object().unwrap().len(), 3);
    // `to_value` (a map, one value per key) keeps them too
    assert_eq!(serde_json::to_value(&rules).unwrap(), v);
    // read back: every pair, a key's values in order
    let back: Rules = serde_json::from_str(&text).unwrap();
    assert_eq!(
        back,
        Rules::from_iter([
            ("a", "1"),
            ("mod", "x"),
            ("mod", "y"),
            ("mod", "z"),
            ("b", "2"),
        ])
    );
    assert_eq!(back.get("mod"), Some("x"));
    // through a whole status, JSON and TOML
    let mut s = Status::default();
    s.rules = Some(rules);
    let json = serde_json::to_string(&s).unwrap();
    let from_json = Status::from_json(&json).unwrap();
    assert_eq!(from_json.rules.as_ref().map(Rules::len), Some(5));
    let from_toml =
        Status::from_toml("[rules]\na = \"1\"\nmod = [\"x\", \"y\", \"z\"]\nb = 2\n").unwrap();
    assert_eq!(from_toml.rules, from_json.rules);
    // bare values in an array, like bare single values
    let s = Status::from_json(r#"{"rules": {"k": [1, true, "v"]}}"#).unwrap();
    assert_eq!(
        s.rules,
        Some(Rules::from_iter([("k", "1"), ("k", "1"), ("k", "v")]))
    );
    // an array is not a place for tables
    assert!(Status::from_json(r#"{"rules": {"k": [{"a": 1}]}}"#).is_err());
}

/// Arrays cannot smuggle more rule values than the cap on rules.
#[test]
fn repeated_rule_values_are_capped() {
    let many = vec!["v"; 5000];
    let json = serde_json::json!({ "rules": { "k": many } }).to_string();
    let e = Status::from_json(&json).unwrap_err().to_string();
    assert!(e.contains("at most 4096"), "{e}");
    let half = vec!["v"; 3000];
    let json = serde_json::json!({ "rules": { "k": half, "j": half } }).to_string();
    let e = Status::from_json(&json).unwrap_err().to_string();
    assert!(e.contains("4096"), "{e}");
}

/// A key written twice in one JSON object (what we wrote before arrays) reads like its
/// array, grouped at its first place, so what is read writes back to itself.
#[test]
fn repeated_object_keys_read_like_an_array() {
    let old = r#"{"rules": {"mod": "x", "a": "1", "mod": "y"}}"#;
    let s = Status::from_json(old).unwrap();
    assert_eq!(
        s.rules,
        Some(Rules::from_iter([("mod", "x"), ("mod", "y"), ("a", "1")]))
    );
    let written = serde_json::to_string(&s.rules).unwrap();
    assert_eq!(written, r#"{"mod":["x","y"],"a":"1"}"#);
    let back = Status::from_json(&serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(back, s);
}

//! The games catalogue (`catalogue/games.toml`, `ogp_proto::games`):
//! * the built-in catalogue parses and holds at least 150 games, each checked (ids and
//!   aliases unique case-insensitively, ports and derived query ports in range, every
//!   protocol known, a source for each entry);
//! * [`Catalogue::parse`] refuses each kind of bad entry;
//! * look-up by id and alias, the three closest ids for an unknown one, query ports;
//! * identification of the game from real answers: the A2S, GameSpy v3 and Quake III
//!   captures of `tests/data/`.

use std::collections::HashSet;
use std::path::PathBuf;

use ogp_proto::a2s::mapping::{goldsrc_to_status, info_to_status};
use ogp_proto::a2s::{decode, Message};
use ogp_proto::games::{catalogue, catalogue_error, Catalogue, QueryPort, Rule};
use ogp_proto::gamespy3::reply::{decode_packet, Pushed, Reassembler};
use ogp_proto::internals::from_hex;
use ogp_proto::{Protocol, Status};
use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data")).join(rel)
}

fn json(rel: &str) -> Value {
    let p = data(rel);
    serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap()
}

fn hexes(v: &Value) -> Vec<Vec<u8>> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|h| from_hex(h.as_str().unwrap()).unwrap())
                .collect()
        })
        .unwrap_or_default()
}

/// The status of an A2S capture's (single-datagram) INFO reply.
fn a2s_status(name: &str) -> Status {
    let j = json(&format!("a2s/{name}.json"));
    let infos = hexes(&j["responses"]["info"]);
    let mut s = Status::default();
    for d in infos {
        if let Ok(d) = decode(&d) {
            match d.message {
                Message::Info(i) => info_to_status(&i, &mut s),
                Message::GoldSrcInfo(m) => goldsrc_to_status(&m, &mut s),
                _ => {}
            }
        }
    }
    s
}

fn gs3_status(name: &str) -> Status {
    let j = json(&format!("gamespy3/{name}.json"));
    let mut r = Reassembler::default();
    for p in hexes(&j["responses"]["gs3"]) {
        let d = decode_packet(&p).unwrap();
        if let Pushed::Complete { info, .. } = r.push(d, p.len()).unwrap() {
            return ogp_proto::gamespy3::mapping::info_to_status(&info);
        }
    }
    panic!("{name}: incomplete")
}

fn quake3_status(file: &str) -> Status {
    let bytes = std::fs::read(data(&format!("quake3/{file}"))).unwrap();
    let d = ogp_proto::quake3::decode_reply(&bytes).unwrap();
    let mut s = Status::default();
    ogp_proto::quake3::mapping::reply_to_status(&d.reply, &mut s);
    s
}

#[test]
fn the_built_in_catalogue_is_valid_and_holds_at_least_150_games() {
    assert_eq!(catalogue_error(), None);
    let c = catalogue();
    assert!(c.games().len() >= 150, "{} games", c.games().len());
    let mut names = HashSet::new();
    for g in c.games() {
        for n in std::iter::once(&g.id).chain(&g.aliases) {
            assert!(names.insert(n.to_lowercase()), "{n} twice");
        }
        assert!(g.port >= 1, "{}", g.id);
        let q = g.query_port(None).unwrap_or_else(|| panic!("{}", g.id));
        assert!(q >= 1, "{}", g.id);
        assert!(Protocol::ALL.contains(&g.protocol));
        assert!(!g.sources.is_empty(), "{}", g.id);
        for s in &g.sources {
            assert!(
                c.sources().get(s).is_some_and(|t| !t.is_empty()),
                "{}: {s}",
                g.id
            );
        }
        assert!(!g.name.is_empty());
    }
    // every protocol family the issue names has games
    for p in [
        Protocol::A2s,
        Protocol::Gamespy3,
        Protocol::Quake3,
        Protocol::Gamespy1,
    ] {
        assert!(
            c.games().iter().filter(|g| g.protocol == p).count() >= 9,
            "{p}"
        );
    }
}

const GOOD: &str = r#"
[sources]
s = "a source"
[[game]]
id = "one"
aliases = ["uno"]
name = "One"
protocol = "a2s"
port = 27015
query = "+1"
match = { a2s_app_id = [1] }
sources = ["s"]
"#;

fn with(extra: &str) -> String {
    format!("{GOOD}\n[[game]]\n{extra}")
}

#[test]
fn parse_refuses_every_kind_of_bad_entry() {
    assert_eq!(Catalogue::parse(GOOD).unwrap().games().len(), 1);
    let base = r#"name = "Two"
protocol = "gamespy3"
port = 100
query = "same"
sources = ["s"]"#;
    let cases = [
        // an id taken by another's alias, case-insensitively
        (format!("id = \"uno\"\n{base}"), "taken twice"),
        (
            format!("id = \"two\"\naliases = [\"two\"]\n{base}"),
            "taken twice",
        ),
        (format!("id = \"Two\"\n{base}"), "lower-case"),
        (
            format!("id = \"two\"\n{}", base.replace("gamespy3", "quake9")),
            "unknown protocol",
        ),
        (
            format!("id = \"two\"\n{}", base.replace("100", "0")),
            "not in 1..=65535",
        ),
        (
            format!("id = \"two\"\n{}", base.replace("100", "65536")),
            "not in 1..=65535",
        ),
        (
            format!("id = \"two\"\n{}", base.replace("\"same\"", "\"-101\"")),
            "out of 1..=65535",
        ),
        (
            format!("id = \"two\"\n{}", base.replace("\"same\"", "\"+65500\"")),
            "out of 1..=65535",
        ),
        (
            format!("id = \"two\"\n{}", base.replace("\"same\"", "\"70000\"")),
            "is not same",
        ),
        (
            format!("id = \"two\"\n{}", base.replace("sources = [\"s\"]", "")),
            "no source",
        ),
        (
            format!("id = \"two\"\n{}", base.replace("[\"s\"]", "[\"t\"]")),
            "not in [sources]",
        ),
        (
            format!("id = \"two\"\nmatch = {{ a2s_app_id = [1] }}\n{base}"),
            "another game's",
        ),
        (format!("id = \"two\"\ncolour = 1\n{base}"), "unknown field"),
    ];
    for (text, want) in cases {
        let e = Catalogue::parse(&with(&text)).unwrap_err().to_string();
        assert!(e.contains(want), "{e} (wanted {want:?}) for\n{text}");
    }
}

#[test]
fn lookup_by_id_and_alias_and_closest_ids() {
    let c = catalogue();
    assert_eq!(c.get("bf2").unwrap().name, "Battlefield 2");
    assert_eq!(c.get("Battlefield2").unwrap().id, "bf2");
    assert_eq!(c.get("7D2D").unwrap().id, "7dtd");
    assert!(c.get("bf3000").is_none());
    // gamedig's current ids of games we list under other ids
    assert_eq!(c.get("mbe").unwrap().id, "minecraftbe");
    assert_eq!(c.get("prb2").unwrap().id, "prbf2");
    let close: Vec<&str> = c
        .closest("valhiem", 3)
        .iter()
        .map(|g| g.id.as_str())
        .collect();
    assert_eq!(close.len(), 3);
    assert_eq!(close[0], "valheim");
    let close: Vec<&str> = c
        .closest("bf2143", 3)
        .iter()
        .map(|g| g.id.as_str())
        .collect();
    assert_eq!(close[0], "bf2142", "{close:?}");
    assert!(close.contains(&"bf2"), "{close:?}");
}

#[test]
fn query_ports_follow_each_rule() {
    let c = catalogue();
    let port = |id: &str, p: Option<u16>| c.get(id).unwrap().query_port(p);
    assert_eq!(port("bf2", None), Some(29900));
    assert_eq!(port("bf2", Some(16569)), Some(29900));
    assert_eq!(port("valheim", None), Some(2457));
    assert_eq!(port("valheim", Some(3000)), Some(3001));
    assert_eq!(port("arkse", Some(7779)), Some(27015));
    assert_eq!(port("openarena", None), Some(27960));
    assert_eq!(port("onset", Some(7777)), Some(7776));
    assert_eq!(port("dayz", None), Some(27016));
    assert_eq!(QueryPort::Offset(1).apply(65535), None);
    assert_eq!(QueryPort::Offset(-1).apply(1), None);
    assert_eq!(QueryPort::Offset(-1277).to_string(), "-1277");
    assert_eq!(QueryPort::Offset(2).to_string(), "+2");
}

/// (capture, game id, rule).
const A2S: &[(&str, &str, Rule)] = &[
    ("gameq-csgo-1", "csgo", Rule::A2sAppId),
    ("gameq-css-1", "css", Rule::A2sAppId),
    ("gameq-cs16-1", "cs16", Rule::A2sAppId),
    ("gameq-cs15-1", "cs15", Rule::A2sFolder),
    ("gameq-cscz-1", "cscz", Rule::A2sAppId),
    ("gameq-tf2-1", "tf2", Rule::A2sAppId),
    ("gameq-gmod-1", "gmod", Rule::A2sAppId),
    ("gameq-rust-1", "rust", Rule::A2sAppId),
    ("gameq-arkse-1", "arkse", Rule::A2sAppId),
    ("gameq-dayz-1", "dayz", Rule::A2sAppId),
    ("gameq-valheim-1", "valheim", Rule::A2sAppId),
    ("gameq-sevendaystodie-1", "7dtd", Rule::A2sAppId),
    ("gameq-insurgency-1", "insurgency", Rule::A2sAppId),
    ("gameq-squad-1", "squad", Rule::A2sAppId),
    ("gameq-unturned-1", "unturned", Rule::A2sAppId),
    ("gameq-l4d-1", "l4d", Rule::A2sAppId),
    ("gameq-l4d2-1", "l4d2", Rule::A2sAppId),
    ("gameq-quakelive-1", "quakelive", Rule::A2sAppId),
    ("gameq-dods-1", "dods", Rule::A2sAppId),
    ("gameq-hl1-1", "hldm", Rule::A2sAppId),
    ("gameq-ship-1", "theship", Rule::A2sAppId),
    // a Fistful of Frags server in the HL2DM fixture: the app id says which game it is
    ("gameq-hl2dm-1", "fof", Rule::A2sAppId),
    ("gameq-hl2dm-2", "hl2dm", Rule::A2sAppId),
    // an ARK server in the Conan Exiles fixture
    ("gameq-conanexiles-3", "arkse", Rule::A2sAppId),
    ("libssq-info-tf2", "tf2", Rule::A2sAppId),
    ("xpaw-info-svencoop_nonsteam", "svencoop", Rule::A2sFolder),
];

#[test]
fn a2s_captures_are_identified_by_app_id_or_folder() {
    let c = catalogue();
    for (file, id, rule) in A2S {
        let s = a2s_status(file);
        let got = c
            .identify(Protocol::A2s, &s)
            .unwrap_or_else(|| panic!("{file}: not identified ({:?})", s.a2s));
        assert_eq!((got.game.id.as_str(), got.rule), (*id, *rule), "{file}");
        // the same answer read as another protocol's names nothing
        assert!(c.identify(Protocol::Quake3, &s).is_none(), "{file}");
    }
}

#[test]
fn every_a2s_capture_with_an_app_id_is_identified() {
    let c = catalogue();
    let mut n = 0;
    for e in std::fs::read_dir(data("a2s")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        let s = a2s_status(&name);
        let Some(app) = s
            .a2s
            .as_ref()
            .and_then(|a| a.game_id.map(|g| g & 0xFF_FFFF).or(a.app_id.map(u64::from)))
            .filter(|a| *a != 0)
        else {
            continue;
        };
        if c.identify(Protocol::A2s, &s).is_some() {
            n += 1;
        } else {
            // a test reply made up by its library, not a game
            panic!("{name}: app {app} is in no entry");
        }
    }
    assert!(n >= 90, "{n}");
}

#[test]
fn cs2_and_csgo_share_app_730_and_the_description_tells_them_apart() {
    let c = catalogue();
    let mut s = a2s_status("gameq-csgo-1");
    assert_eq!(c.identify(Protocol::A2s, &s).unwrap().game.id, "csgo");
    s.game_name = Some("Counter-Strike 2".into());
    assert_eq!(c.identify(Protocol::A2s, &s).unwrap().game.id, "cs2");
}

#[test]
fn gamespy3_captures_are_identified_by_gamename() {
    let c = catalogue();
    for (file, id) in [
        ("gameq-bf2-1", "bf2"),
        ("gameq-projectrealitybf2-1", "prbf2"),
        ("gameq-crysiswars-1", "crysiswars"),
    ] {
        let got = c.identify(Protocol::Gamespy3, &gs3_status(file)).unwrap();
        assert_eq!(
            (got.game.id.as_str(), got.rule),
            (id, Rule::GamespyGamename),
            "{file}"
        );
    }
}

#[test]
fn minecraft_is_identified_by_its_own_protocols_and_by_its_query() {
    let c = catalogue();
    // the Server List Ping and the RakNet ping are Minecraft's alone: any answer is it
    let got = c.identify(Protocol::Minecraft, &Status::default()).unwrap();
    assert_eq!(
        (got.game.id.as_str(), got.rule),
        ("minecraft", Rule::Protocol)
    );
    let pong = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/bedrock/bds_1_26_3.bin"
    ))
    .unwrap();
    let d = ogp_proto::bedrock::Pong::decode(&pong).unwrap();
    let s = ogp_proto::bedrock::mapping::pong_to_status(&d.pong);
    let got = c.identify(Protocol::Bedrock, &s).unwrap();
    assert_eq!(
        (got.game.id.as_str(), got.rule),
        ("minecraftbe", Rule::Protocol)
    );
    // the UDP query (GameSpy v3 with game_id MINECRAFT, no gamename)
    for file in ["gameq-minecraft-1", "gameq-minecraft-2"] {
        let got = c.identify(Protocol::Gamespy3, &gs3_status(file)).unwrap();
        assert_eq!(
            (got.game.id.as_str(), got.rule),
            ("minecraft", Rule::GamespyGamename),
            "{file}"
        );
    }
    // and a Quake III answer is not Minecraft
    assert!(c.identify(Protocol::Quake3, &Status::default()).is_none());
}

#[test]
fn quake3_captures_are_identified_by_gamename() {
    let c = catalogue();
    for (file, id) in [
        ("openarena_info.bin", "openarena"),
        ("ioq3_baseq3_status.bin", "q3a"),
        ("urbanterror_status.bin", "urbanterror"),
        ("cod1_status.bin", "cod"),
        ("cod2_status.bin", "cod2"),
        ("cod4x_status.bin", "cod4"),
        ("wolfet_status.bin", "wolfet"),
        ("warsow_status.bin", "warsow"),
        ("fivem_info.bin", "fivem"),
        ("darkplaces_nexuiz_info.bin", "nexuiz"),
        ("darkplaces_xonotic_status.bin", "xonotic"),
    ] {
        let got = c
            .identify(Protocol::Quake3, &quake3_status(file))
            .unwrap_or_else(|| panic!("{file}"));
        assert_eq!(
            (got.game.id.as_str(), got.rule),
            (id, Rule::Quake3Gamename),
            "{file}"
        );
    }
}

/// The status of a GameSpy v1 capture (`gamespy1/NAME.N.bin`, every part).
fn gs1_status(name: &str) -> Status {
    let mut r = ogp_proto::gamespy1::Reassembler::new();
    for n in 1.. {
        let Ok(bytes) = std::fs::read(data(&format!("gamespy1/{name}.{n}.bin"))) else {
            break;
        };
        let d = ogp_proto::gamespy1::decode_packet(&bytes).unwrap();
        r.push(d.packet, bytes.len()).unwrap();
    }
    assert!(r.is_complete(), "{name}");
    ogp_proto::gamespy1::reply_to_status(&r.take_pairs()).status
}

#[test]
fn gamespy1_captures_are_identified_by_gamename() {
    let c = catalogue();
    for (file, id) in [
        ("ut_1", "unrealtournament"),
        ("ut_2", "unrealtournament"),
        ("ut_3", "unrealtournament"),
        ("bf1942_1", "battlefield1942"),
        ("bf1942_3", "battlefield1942"),
        ("mohaa_1", "mohaa"),
    ] {
        let got = c
            .identify(Protocol::Gamespy1, &gs1_status(file))
            .unwrap_or_else(|| panic!("{file}"));
        assert_eq!(
            (got.game.id.as_str(), got.rule),
            (id, Rule::GamespyGamename),
            "{file}"
        );
    }
    // node-gamedig's 72 GameSpy v1 games, with their query ports
    let gs1: Vec<_> = c
        .games()
        .iter()
        .filter(|g| g.protocol == Protocol::Gamespy1)
        .collect();
    assert_eq!(gs1.len(), 72);
    let port = |id: &str| c.get(id).unwrap().query_port(None);
    assert_eq!(port("ut"), Some(7778));
    assert_eq!(port("bf1942"), Some(23000));
    assert_eq!(port("mohaa"), Some(12300));
    assert_eq!(port("deusex"), Some(7792));
    assert_eq!(port("serioussam"), Some(25601));
    assert_eq!(port("rs3rs"), Some(8777));
}

#[test]
fn ogp_game_ids_identify_with_a_catalogue_that_lists_them() {
    let c = Catalogue::parse(&GOOD.replace(
        "protocol = \"a2s\"\nport = 27015\nquery = \"+1\"\nmatch = { a2s_app_id = [1] }",
        "protocol = \"ogp\"\nport = 27015\nquery = \"+1\"\nmatch = { ogp_game_id = [42] }",
    ))
    .unwrap();
    let mut s = Status::default();
    s.game_id = Some(42);
    let got = c.identify(Protocol::Ogp, &s).unwrap();
    assert_eq!((got.game.id.as_str(), got.rule), ("one", Rule::OgpGameId));
    s.game_id = Some(43);
    assert!(c.identify(Protocol::Ogp, &s).is_none());
}

#[test]
fn filter_finds_by_name_id_and_protocol() {
    let c = catalogue();
    let ids: Vec<&str> = c.filter("battlefield").map(|g| g.id.as_str()).collect();
    assert!(ids.contains(&"bf2") && ids.contains(&"bf2142"), "{ids:?}");
    let q3 = c.filter("quake3").count();
    assert_eq!(
        q3,
        c.games()
            .iter()
            .filter(|g| g.protocol == Protocol::Quake3
                || g.aliases.iter().any(|a| a.contains("quake3")))
            .count()
    );
    assert_eq!(c.filter("").count(), c.games().len());
}

#[test]
fn ase_game_names_identify_multi_theft_auto() {
    let c = catalogue();
    let capture: serde_json::Value = serde_json::from_slice(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/ase/gameq-mta-2.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let hex = capture["responses"]["reply"][0].as_str().unwrap();
    let bytes: Vec<u8> = (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let r = ogp_proto::ase::decode_reply(&bytes).unwrap();
    let s = ogp_proto::ase::mapping::reply_to_status(&r);
    let got = c.identify(Protocol::Ase, &s).unwrap();
    assert_eq!(
        (got.game.id.as_str(), got.rule),
        ("gtasamta", Rule::AseGamename)
    );
    // the same game name in another protocol's answer says nothing
    assert!(c.identify(Protocol::Gamespy3, &s).is_none());
    // an ASE game with another name is not Multi Theft Auto
    let mut other = s.clone();
    other.game_name = Some("farcry".into());
    assert!(c.identify(Protocol::Ase, &other).is_none());
    // MTA's ASE port is its game port + 123
    let g = c.get("mtasa").unwrap();
    assert_eq!(g.query_port(None), Some(22126));
}

//! GameSpy v1 against real replies of real servers (`tests/data/gamespy1/`, sources in
//! `SOURCES.md`): Unreal Tournament, Battlefield 1942 and Medal of Honor: Allied Assault,
//! single and multi-datagram.
//!
//! For every capture: each datagram decodes and encodes back to its bytes; the parts
//! reassemble; the status is the one the test expects (host name, map, game, counts,
//! players, teams of each dialect) and its JSON says the same; the status encodes to a
//! reply that decodes to the same status (bytes → model → bytes → model); the client
//! machine reads the datagrams as its server's answer. Property tests split replies at
//! random sizes, reorder, duplicate and drop parts.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::gamespy1::client::{QueryMachine, QueryOptions};
use ogp_proto::gamespy1::{
    decode_packet, is_gamespy1_reply, reply_to_status, split_reply, status_to_pairs, Packet,
    Pushed, Reassembler,
};
use ogp_proto::Status;
use proptest::prelude::*;

type Pairs = Vec<(ogp_proto::Text, ogp_proto::Text)>;

/// Every capture and its number of datagrams.
const ALL: [(&str, usize); 9] = [
    ("bf1942_1", 3),
    ("bf1942_2", 1),
    ("bf1942_3", 2),
    ("ut_1", 3),
    ("ut_2", 3),
    ("ut_3", 1),
    ("mohaa_1", 1),
    ("mohaa_2", 1),
    ("mohaa_3", 1),
];

fn parts(name: &str, n: usize) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/gamespy1"));
    (1..=n)
        .map(|i| {
            let p = dir.join(format!("{name}.{i}.bin"));
            std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        })
        .collect()
}

fn packets(datagrams: &[Vec<u8>]) -> Vec<Packet> {
    datagrams
        .iter()
        .map(|d| decode_packet(d).unwrap().packet)
        .collect()
}

/// The pairs of a whole reply, its parts pushed in the order given.
fn reassemble(packets: &[Packet]) -> Pairs {
    let mut r = Reassembler::new();
    let mut last = Pushed::Incomplete;
    for p in packets {
        last = r.push(p.clone(), 100).unwrap();
    }
    assert_eq!(last, Pushed::Complete);
    r.take_pairs()
}

fn status_of(name: &str, n: usize) -> Status {
    reply_to_status(&reassemble(&packets(&parts(name, n)))).status
}

#[test]
fn every_datagram_decodes_and_encodes_back_to_its_bytes() {
    for (name, n) in ALL {
        for (i, bytes) in parts(name, n).iter().enumerate() {
            let d = decode_packet(bytes).unwrap_or_else(|e| panic!("{name}.{}: {e}", i + 1));
            let latin1 = (name, i) == ("bf1942_1", 1) || (name, i) == ("ut_1", 1);
            assert_eq!(
                d.warnings.len(),
                usize::from(latin1),
                "{name}: {:?}",
                d.warnings
            );
            assert_eq!(d.packet.query_id.map(|q| usize::from(q.part)), Some(i + 1));
            assert_eq!(d.packet.is_final, i + 1 == n, "{name}.{}", i + 1);
            assert!(is_gamespy1_reply(bytes), "{name}");
            let again = d.packet.to_bytes();
            if latin1 {
                // Written back as UTF-8: the same packet again.
                assert_eq!(decode_packet(&again).unwrap().packet, d.packet);
                continue;
            }
            // Battlefield 1942 and MoHAA put `\final\` before `\queryid\` as the encoder
            // does; Unreal Tournament after it.
            if name.starts_with("ut") && d.packet.is_final {
                assert_eq!(decode_packet(&again).unwrap().packet, d.packet);
            } else {
                assert_eq!(again, *bytes, "{name}.{}", i + 1);
            }
        }
    }
}

/// What the test expects of a capture.
struct Expect {
    host: &'static str,
    map: &'static str,
    game: &'static str,
    version: &'static str,
    count: u32,
    max: u32,
    port: u16,
    players: usize,
    teams: &'static [&'static str],
}

fn expected(name: &str) -> Expect {
    let e = |host, map, game, version, count, max, port, players, teams| Expect {
        host,
        map,
        game,
        version,
        count,
        max,
        port,
        players,
        teams,
    };
    const BF: &[&str] = &["axis", "allied"];
    match name {
        "bf1942_1" => e("SiMPLE | BF1942 [USA]", "berlin", "bfield1942", "v1.612", 17, 36, 14567, 18, BF),
        "bf1942_2" => e("HKHP CTF Guadal Canal CD&ORIGIN", "guadalcanal", "bfield1942", "v1.612", 0, 50, 14567, 0, BF),
        "bf1942_3" => e("SiMPLE | RtR+SW [FRA]", "telemark", "bfield1942", "v1.61", 14, 36, 14568, 14, BF),
        "ut_1" => e("zp|    [=======]    [PURE]    [INSTAGIB]    [US]    [=======] by www.unrealkillers.com", "CTF-w00tabulousFixed", "ut", "451", 11, 13, 7777, 11, &[]),
        "ut_2" => e("zp| *    *    *    -=[SIEGE]=- |uK| The One Night Stand -=[SIEGE]=- Server      *    *    *    In Loving Memory of |uK|*STARS*", "CTF-[4]-'uK-Bathrooms][", "ut", "451", 14, 23, 7777, 14, &[]),
        "ut_3" => e(" * * *  UTzone.de  * * *  iCTF #1     [ P U R E NN INSTAGIB ] by DNW", "CTF-Klondike_LE15", "ut", "451", 0, 10, 11337, 0, &[]),
        "mohaa_1" => e("=|LuV|= Freeze-Tag Server @ www.luvclan.eu", "dm/mohdm4", "mohaa", "1.11", 18, 32, 12203, 18, &[]),
        "mohaa_2" => e("=|LuV|= Freeze-Tag Server @ www.luvclan.eu", "dm/mohdm7", "mohaa", "1.11", 1, 32, 12203, 1, &[]),
        "mohaa_3" => e("=|LuV|= Team-Deathmatch Server @ www.luvclan.eu", "dm/mohdm4", "mohaa", "1.11", 2, 32, 12206, 2, &[]),
        _ => unreachable!(),
    }
}

#[test]
fn every_capture_maps_to_the_expected_status_and_json() {
    for (name, n) in ALL {
        let s = status_of(name, n);
        let e = expected(name);
        assert_eq!(s.host_name.as_deref(), Some(e.host), "{name}");
        assert_eq!(
            s.map.as_ref().map(|m| m.name.as_str()),
            Some(e.map),
            "{name}"
        );
        assert_eq!(s.game_name.as_deref(), Some(e.game), "{name}");
        assert_eq!(s.game_version.as_deref(), Some(e.version), "{name}");
        assert_eq!(s.player_count, Some(e.count), "{name}");
        assert_eq!(s.slot_max, Some(e.max), "{name}");
        assert_eq!(s.connect_port, Some(e.port), "{name}");
        // MoHAA sends no `password` key.
        let password = (e.game != "mohaa").then_some(false);
        assert_eq!(s.password, password, "{name}");
        let players = s.players.as_deref().unwrap_or_default();
        assert_eq!(players.len(), e.players, "{name}");
        assert!(players.iter().all(|p| p.name.is_some()), "{name}");
        let teams: Vec<&str> = s
            .teams
            .iter()
            .flatten()
            .filter_map(|t| t.name.as_deref())
            .collect();
        assert_eq!(teams, e.teams, "{name}");
        // The state file keeps it whole (UT sends `gamever` and `minnetver` twice: one
        // rule each, found by the fuzzer), and the JSON says the same.
        assert_eq!(Status::from_json(&s.to_json_pretty()).unwrap(), s, "{name}");
        let json: serde_json::Value = serde_json::from_str(&s.to_json_pretty()).unwrap();
        assert_eq!(json["host_name"], e.host, "{name}");
        assert_eq!(json["map"]["name"], e.map, "{name}");
        assert_eq!(json["slot_max"], e.max, "{name}");
        let names: Vec<&str> = json["players"]
            .as_array()
            .map(|a| a.iter().filter_map(|p| p["name"].as_str()).collect())
            .unwrap_or_default();
        let model: Vec<&str> = players.iter().filter_map(|p| p.name.as_deref()).collect();
        assert_eq!(names, model, "{name}");
    }
}

#[test]
fn each_dialect_maps_its_player_keys() {
    // Battlefield 1942: playername_, 1-based team_, kills, deaths, score; a Latin-1 name;
    // player 16 split over parts 2 and 3.
    let s = status_of("bf1942_1", 3);
    let p = s.players.as_ref().unwrap();
    assert_eq!(p[0].name.as_deref(), Some("FEDIYMAX"));
    assert_eq!(
        (p[0].team, p[0].kills, p[0].deaths, p[0].score, p[0].ping),
        (Some(1), Some(13), Some(8), Some(7), Some(187))
    );
    assert_eq!(p[2].name.as_deref(), Some("Åiôñ"));
    assert_eq!(p[12].name.as_deref(), Some("               Zong"));
    assert_eq!(
        (p[16].name.as_deref(), p[16].score, p[16].team),
        (Some("zDiogozCraftz"), Some(0), Some(0))
    );
    assert_eq!(s.reserved_slots, Some(0));
    assert_eq!(s.game_type.as_deref(), Some("conquest"));
    assert_eq!(s.game_mode.as_deref(), Some("openplaying"));
    let rules = s.rules.as_ref().unwrap();
    assert_eq!(rules.get("tk_mode"), Some("punish"));
    assert_eq!(rules.get("unpure_mods"), Some(""));

    // Unreal Tournament: player_, frags_, ping_ with a space, team 255 (a spectator),
    // mesh_ (the model), skin_/face_/ngsecret_ as extras; gamever sent twice.
    let s = status_of("ut_1", 3);
    let p = s.players.as_ref().unwrap();
    let spec = &p[2];
    assert_eq!(spec.name.as_deref(), Some("Resident Evil±"));
    assert_eq!(
        (spec.frags, spec.ping, spec.team),
        (Some(719), Some(86), Some(-1))
    );
    assert_eq!(spec.model.as_deref(), Some("Spectator"));
    assert_eq!(spec.extra.get("skin").map(|v| v.as_str()), Some("None"));
    assert_eq!(spec.extra.get("face").map(|v| v.as_str()), Some(""));
    assert_eq!(p[0].team, Some(1));
    assert_eq!(p[0].extra.get("ngsecret").map(|v| v.as_str()), Some("true"));
    let rules = s.rules.as_ref().unwrap();
    assert_eq!(
        rules.get("maptitle"),
        Some("W00tabulous !@Fixed [Fixed by: Nugglan]")
    );
    assert_eq!(rules.get("gamever"), Some("451"));

    // MoHAA: colour codes in the host name, sparse indexes kept as slots.
    let s = status_of("mohaa_1", 1);
    assert_eq!(
        s.host_name_raw.as_deref(),
        Some("^3=|LuV|= Freeze-Tag Server @ www.luvclan.eu")
    );
    let slots: Vec<u32> = s.players.iter().flatten().filter_map(|p| p.slot).collect();
    assert_eq!(
        slots,
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 22, 26]
    );
    let last = s.players.as_ref().unwrap().last().unwrap().clone();
    assert_eq!(
        (last.name.as_deref(), last.frags, last.deaths, last.ping),
        (Some("Miss Barmey"), Some(0), Some(0), Some(37))
    );
}

/// bytes → model → bytes (split in parts) → model gives the same model.
#[test]
fn every_capture_survives_model_and_back() {
    for (name, n) in ALL {
        let first = status_of(name, n);
        let pairs = status_to_pairs(&first);
        let (packets, left_out) = split_reply(&pairs, 77, 1400, 16);
        assert_eq!(left_out, 0);
        let wire: Vec<Packet> = packets
            .iter()
            .map(|p| decode_packet(&p.to_bytes()).unwrap().packet)
            .collect();
        let second = reply_to_status(&reassemble(&wire)).status;
        assert_eq!(second, first, "{name}");
    }
}

fn drive(m: &mut QueryMachine, t0: Instant, datagrams: &[Vec<u8>]) -> Instant {
    assert_eq!(m.poll_transmit(t0).unwrap(), b"\\status\\");
    for d in datagrams {
        m.handle_datagram(t0 + Duration::from_millis(30), d);
    }
    let mut now = t0;
    for _ in 0..64 {
        if let Some(t) = m.poll_timeout() {
            now = t;
            m.handle_timeout(now);
            while m.poll_transmit(now).is_some() {}
        }
    }
    now
}

#[test]
fn the_client_reads_every_capture_in_reverse_order() {
    for (name, n) in ALL {
        let mut datagrams = parts(name, n);
        datagrams.reverse();
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 7, t0);
        drive(&mut m, t0, &datagrams);
        let a = m.take_result().unwrap().unwrap();
        assert!(a.details.complete, "{name}");
        assert_eq!(a.datagrams, n, "{name}");
        assert_eq!(a.status, status_of(name, n), "{name}");
        assert!((a.ping_ms - 30.0).abs() < 1.0, "{name}: {}", a.ping_ms);
    }
}

#[test]
fn the_client_returns_what_came_when_a_part_is_lost() {
    let t0 = Instant::now();
    let timing = Timing::default()
        .attempt_timeout(Duration::from_millis(200))
        .retries(1)
        .alive_retries(2);
    let datagrams = parts("ut_1", 3);
    let mut m = QueryMachine::new(QueryOptions::default(), timing, 7, t0);
    let end = drive(&mut m, t0, &[datagrams[0].clone(), datagrams[2].clone()]);
    let a = m.take_result().unwrap().unwrap();
    assert!(!a.details.complete);
    assert_eq!(a.details.missing_parts, [2]);
    assert!(a
        .warnings
        .contains(&"incomplete reply: part 2 of 3 lost".to_string()));
    // The server keys and the players of parts 1 and 3.
    assert_eq!(a.status.map.unwrap().name, "CTF-w00tabulousFixed");
    let names: Vec<_> = a
        .status
        .players
        .unwrap()
        .into_iter()
        .filter_map(|p| p.name)
        .collect();
    assert_eq!(names, ["akatotosh<3", "EnDleSs", "Nap", "KindBud"]);
    // Bounded: the retries of a live server, well within the total deadline.
    assert!(end - t0 <= Duration::from_secs(5), "{:?}", end - t0);
}

fn multi_part() -> impl Strategy<Value = (&'static str, usize)> {
    prop::sample::select(vec![
        ("bf1942_1", 3),
        ("bf1942_3", 2),
        ("ut_1", 3),
        ("ut_2", 3),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Parts in any order, some twice, reassemble to the pairs of the parts in order.
    #[test]
    fn any_order_with_duplicates_reassembles(
        (name, n) in multi_part(),
        order in Just((0..6usize).collect::<Vec<_>>()).prop_shuffle(),
    ) {
        let ps = packets(&parts(name, n));
        let want = reassemble(&ps);
        let mut r = Reassembler::new();
        let mut done = false;
        for i in order {
            let p = ps[i % n].clone();
            match r.push(p, 100).unwrap() {
                Pushed::Complete => { done = true; break; }
                Pushed::Incomplete | Pushed::Duplicate => {}
                Pushed::OtherQuery => prop_assert!(false, "one query id"),
            }
        }
        prop_assert!(done);
        prop_assert_eq!(r.take_pairs(), want);
    }

    /// With parts dropped, the reassembler says which (those before the final part, when
    /// it came), and holds the pairs of the others in order.
    #[test]
    fn dropped_parts_are_named(
        (name, n) in multi_part(),
        keep in prop::collection::vec(any::<bool>(), 3),
    ) {
        let ps = packets(&parts(name, n));
        let kept: Vec<usize> = (0..n).filter(|&i| keep[i]).collect();
        prop_assume!(kept.len() < n && !kept.is_empty());
        let mut r = Reassembler::new();
        for &i in kept.iter().rev() {
            prop_assert_eq!(r.push(ps[i].clone(), 100).unwrap(), Pushed::Incomplete);
        }
        let top = if kept.contains(&(n - 1)) { n } else { kept.last().unwrap() + 1 };
        let lost: Vec<u16> = (0..top).filter(|i| !kept.contains(i)).map(|i| i as u16 + 1).collect();
        prop_assert_eq!(r.missing(), lost);
        prop_assert!(r.missing_note().is_some());
        let want: Pairs = kept.iter().flat_map(|&i| ps[i].pairs.clone()).collect();
        prop_assert_eq!(r.take_pairs(), want);
    }

    /// Any status split at any size, parts shuffled, gives the same status back.
    #[test]
    fn split_at_any_size_and_shuffled_round_trips(
        which in 0..ALL.len(),
        max_bytes in 120usize..1500,
        seed in any::<u64>(),
    ) {
        let (name, n) = ALL[which];
        let status = status_of(name, n);
        let pairs = status_to_pairs(&status);
        let (mut packets, left_out) = split_reply(&pairs, 3, max_bytes, 64);
        prop_assume!(left_out == 0 && packets.len() <= 16);
        // A cheap shuffle from the seed.
        let len = packets.len();
        for i in (1..len).rev() {
            let j = (seed.rotate_left(i as u32) as usize) % (i + 1);
            packets.swap(i, j);
        }
        let wire: Vec<Packet> = packets
            .iter()
            .map(|p| {
                let b = p.to_bytes();
                assert!(b.len() <= max_bytes.max(200) + 64);
                decode_packet(&b).unwrap().packet
            })
            .collect();
        prop_assert_eq!(reply_to_status(&reassemble(&wire)).status, status);
    }
}

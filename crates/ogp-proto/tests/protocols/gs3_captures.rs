//! The GameSpy v3 codec and client against the 22 captures of real servers in
//! `tests/data/gamespy3/` (Battlefield 2, Project Reality, Crysis, Crysis 2, Crysis Wars,
//! UT3, Minecraft, Minecraft PE, Just Cause 2 MP; all from GameQ's fixtures).
//!
//! For every file:
//! * the reply packets decode and reassemble in arrival order, reversed, rotated and with
//!   every packet duplicated, to the same reply each time, completing exactly at the last
//!   new packet;
//! * the reply equals the capture's reference decoding (`decoded`: every server pair,
//!   every column's first values and its length), except for the Just Cause 2 MP files,
//!   which the reference could not decode (its single packet has no last flag) and which
//!   are checked against GameQ alone;
//! * the reply says what GameQ asserts (`expected`, GameQ's key names), key by key, player
//!   by player and team by team; where GameQ reads differently (it trims values, derives
//!   UT3 keys, adds constants for Just Cause 2…), [`gameq_difference`] names the
//!   difference and the test checks that it is exactly that one;
//! * the status model gets the host name, player count, map and player names in order;
//! * the client [`QueryMachine`] given the capture as its server's reply (session id
//!   rewritten to the machine's), with and without a `09` step, ends with the same reply.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ogp_proto::client::{Answer, Event, QueryDriver, QueryError, Timing};
use ogp_proto::gamespy3::client::{Details, Handshake, QueryMachine, QueryOptions, Step};
use ogp_proto::gamespy3::mapping::info_to_status;
use ogp_proto::gamespy3::reply::{decode_packet, Pushed, Reassembler, Section, ServerInfo};
use ogp_proto::gamespy3::request::Request;
use ogp_proto::Protocol;
use serde_json::Value;

fn data_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/gamespy3"))
}

fn captures() -> Vec<(String, Value)> {
    let mut v: Vec<(String, Value)> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let json = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            (name, json)
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn packets(json: &Value) -> Vec<Vec<u8>> {
    ogp_testkit::datagrams_of(json, "gs3")
}

fn is_jc2(name: &str) -> bool {
    name.starts_with("gameq-justcause2-")
}

/// Feeds `packets` to a fresh reassembler; the reply, the packet count, and the index of
/// the packet that completed it.
fn reassemble(name: &str, packets: &[Vec<u8>]) -> (ServerInfo, usize, usize) {
    let mut r = Reassembler::default();
    let mut done = None;
    for (k, p) in packets.iter().enumerate() {
        let d = decode_packet(p).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(d.session_id, 0x1020_3040, "{name}");
        match r.push(d, p.len()).unwrap_or_else(|e| panic!("{name}: {e}")) {
            Pushed::Complete { info, packets, .. } => {
                assert!(done.is_none(), "{name}: completed twice");
                done = Some((info, packets, k));
            }
            Pushed::Incomplete | Pushed::Duplicate => {}
        }
    }
    done.unwrap_or_else(|| panic!("{name}: incomplete"))
}

/// The reply of a capture, checked to be the same in every arrival order.
fn reply_of(name: &str, json: &Value) -> ServerInfo {
    let ps = packets(json);
    let n = ps.len();
    let (info, count, at) = reassemble(name, &ps);
    assert_eq!(count, n, "{name}");
    assert_eq!(at, n - 1, "{name}");
    let mut rev = ps.clone();
    rev.reverse();
    let mut rot = ps.clone();
    rot.rotate_left(1);
    // every packet twice, the copies before the last new packet
    let mut dup: Vec<Vec<u8>> = ps[..n - 1]
        .iter()
        .flat_map(|p| [p.clone(), p.clone()])
        .collect();
    dup.push(ps[n - 1].clone());
    let mut dup_first = vec![ps[0].clone()];
    dup_first.extend(ps.iter().cloned());
    for (what, order) in [("reversed", rev), ("rotated", rot), ("duplicated", dup)] {
        let (again, count, at) = reassemble(name, &order);
        assert_eq!(again, info, "{name}: {what}");
        assert_eq!(count, n, "{name}: {what}");
        assert_eq!(at, order.len() - 1, "{name}: {what}");
    }
    if n > 1 {
        let (again, _, _) = reassemble(name, &dup_first);
        assert_eq!(again, info, "{name}: first packet twice");
    }
    info
}

// =======================================================================================
// The reference decoding

#[test]
fn all_22_captures_decode_to_the_reference_in_any_order() {
    let caps = captures();
    assert_eq!(caps.len(), 22);
    let mut checked_values = 0;
    let mut multi = 0;
    for (name, json) in &caps {
        let info = reply_of(name, json);
        if packets(json).len() > 1 {
            multi += 1;
        }
        let dec = &json["decoded"];
        if is_jc2(name) {
            // The reference stops at "missing packets": the single packet has no last
            // flag. GameQ's expectations are checked below.
            assert_eq!(dec["error"], "missing packets", "{name}");
            continue;
        }
        // server pairs: the same set, no key twice
        let want = dec["server"].as_object().unwrap();
        let ours: BTreeMap<&str, &str> = info
            .server
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(ours.len(), info.server.len(), "{name}: a server key twice");
        assert_eq!(ours.len(), want.len(), "{name}: server keys");
        for (k, v) in want {
            assert_eq!(ours.get(k.as_str()).copied(), v.as_str(), "{name}: {k}");
            checked_values += 1;
        }
        // columns: the same keys; each with its length and first values
        let fields = dec["fields"].as_object().unwrap();
        let lengths = dec["field_lengths"].as_object().unwrap();
        // (the reference leaves out columns without values: BF2 capture 4 has the
        // player keys of an empty server)
        let (cols, empty): (Vec<_>, Vec<_>) = info
            .players
            .iter()
            .chain(&info.teams)
            .partition(|c| !c.values.is_empty());
        assert!(
            empty.iter().all(|c| !fields.contains_key(c.key.as_str())),
            "{name}"
        );
        assert_eq!(cols.len(), fields.len(), "{name}: columns");
        for c in &cols {
            let want = fields[c.key.as_str()].as_array().unwrap();
            assert_eq!(
                lengths[c.key.as_str()].as_u64(),
                Some(c.values.len() as u64),
                "{name}: {} length",
                c.key
            );
            for (o, t) in c.values.iter().zip(want) {
                if t == "..." {
                    break;
                }
                assert_eq!(Some(o.as_str()), t.as_str(), "{name}: {}", c.key);
                checked_values += 1;
            }
        }
        // team columns end in _t, player columns in _
        assert!(info.teams.iter().all(|c| c.key.ends_with("_t")), "{name}");
        assert!(info.players.iter().all(|c| c.key.ends_with('_')), "{name}");
    }
    assert_eq!(multi, 5, "multi-packet captures");
    assert!(checked_values > 700, "{checked_values}");
}

#[test]
fn truncated_values_are_replaced_by_their_resent_copy() {
    // BF2 capture 1: packet 0 ends with " hekut", packet 1 re-sends " hekutooo" at 0x18.
    let (_, json) = captures()
        .into_iter()
        .find(|(n, _)| n == "gameq-bf2-1")
        .unwrap();
    let ps = packets(&json);
    let p0 = decode_packet(&ps[0]).unwrap();
    let last = p0.chunks.last().unwrap();
    assert_eq!(last.values.last().unwrap(), " hekut");
    let p1 = decode_packet(&ps[1]).unwrap();
    assert_eq!(p1.chunks[0].key, "player_");
    assert_eq!(p1.chunks[0].offset, 0x18);
    assert_eq!(p1.chunks[0].values[0], " hekutooo");
    let info = reply_of("gameq-bf2-1", &json);
    let names = &info.column(Section::Players, "player_").unwrap().values;
    assert_eq!(names[0x18], " hekutooo");
    assert!(!names.iter().any(|n| n == " hekut"));
}

// =======================================================================================
// What GameQ asserts

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null => String::new(),
        v => v.to_string(),
    }
}

/// GameQ keys that are not values of the server's reply, with the reason.
fn not_on_the_wire(name: &str, key: &str) -> Option<&'static str> {
    if key.starts_with("gq_") {
        return Some("GameQ's own query metadata (address, ports, join link, game table)");
    }
    if is_jc2(name) && (key == "mapname" || key == "dedicated") {
        return Some(
            "GameQ's Justcause2 class adds mapname \"Panau\" and dedicated \"true\" as \
             constants; the server does not send them",
        );
    }
    None
}

/// UT3: GameQ's Ut3 class renames wire keys (its `renameResult` table): GameQ key → the
/// wire key it comes from.
const UT3_RENAMED: [(&str, &str); 16] = [
    ("hostname", "OwningPlayerName"),
    ("mapname", "p1073741825"),
    ("gametype", "p1073741826"),
    ("servername", "p1073741827"),
    ("custom_mutators", "p1073741828"),
    ("open", "gamemode"),
    ("gamemode", "s32779"),
    ("bot_skill", "s0"),
    ("pure_server", "s6"),
    ("password", "s7"),
    ("vs_bots", "s8"),
    ("force_respawn", "s10"),
    ("frag_limit", "p268435704"),
    ("time_limit", "p268435705"),
    ("numbots", "p268435703"),
    ("stock_mutators", "p268435717"),
];

/// The server values where GameQ reads differently from the wire, with the reason. Each
/// entry checks that the difference is exactly the one explained.
fn gameq_difference(
    name: &str,
    key: &str,
    info: &ServerInfo,
    want: &Value,
) -> Option<&'static str> {
    if name == "gameq-ut3-1" {
        let (_, wire) = UT3_RENAMED.iter().find(|(g, _)| *g == key)?;
        let ours = info.get(wire)?;
        let same = match want {
            Value::Array(parts) => {
                ours.split('\u{1c}').collect::<Vec<_>>()
                    == parts
                        .iter()
                        .map(|p| p.as_str().unwrap())
                        .collect::<Vec<_>>()
            }
            v => ours == text_of(v),
        };
        return same.then_some(
            "GameQ's Ut3 class renames UT3's numeric property keys (p1073741825 → mapname, \
             s0 → bot_skill…) and splits custom_mutators on 0x1C; we keep the wire keys as \
             rules (UT3's own mapname is a comma list of its settings)",
        );
    }
    None
}

/// What a player or team value in GameQ's list is: GameQ trims every player and team
/// value (`trim($val)`), so Battlefield 2's leading space before names ("  Deniko…")
/// and Crysis Wars' one-space empty values are gone there; we keep the bytes.
fn gameq_row_value(ours: &str) -> &str {
    ours.trim()
}

/// The Just Cause 2 MP player name GameQ reports: it reads the big-endian u16 player
/// count as one byte, so the count's low byte is glued to the first name ("\u{7}That1…"
/// for 7 players, "+Moonman" for 43).
fn gameq_jc2_name(info: &ServerInfo, row: usize, ours: &str) -> String {
    if row == 0 {
        let n = info
            .column(Section::Players, "player_")
            .unwrap()
            .values
            .len();
        format!("{}{ours}", char::from(n as u8))
    } else {
        ours.to_string()
    }
}

fn check_rows(
    name: &str,
    info: &ServerInfo,
    section: Section,
    suffix: &str,
    want: &Value,
    problems: &mut Vec<String>,
) {
    let theirs = want.as_array().unwrap();
    let cols = match section {
        Section::Players => &info.players,
        Section::Teams => &info.teams,
    };
    let rows = cols.iter().map(|c| c.values.len()).max().unwrap_or(0);
    if rows != theirs.len() {
        problems.push(format!("{name}: {section:?} {rows} vs {}", theirs.len()));
        return;
    }
    for (i, t) in theirs.iter().enumerate() {
        for (k, v) in t.as_object().unwrap() {
            // GameQ's JC2 names its keys name/steamid/ping: our columns player_/steamid_/ping_
            let key = if is_jc2(name) && k == "name" {
                "player_".to_string()
            } else {
                format!("{k}{suffix}")
            };
            let Some(col) = info.column(section, &key) else {
                problems.push(format!("{name}: no column {key}"));
                continue;
            };
            let ours = col.values.get(i).map(|s| s.as_str()).unwrap_or_default();
            let want = text_of(v);
            let ok = if is_jc2(name) && key == "player_" {
                gameq_jc2_name(info, i, ours) == want
            } else {
                gameq_row_value(ours) == want
            };
            if !ok {
                problems.push(format!(
                    "{name}: {section:?}[{i}].{k} = {want:?}: ours {ours:?}"
                ));
            }
        }
    }
}

#[test]
fn every_capture_decodes_to_what_gameq_expects() {
    let mut problems = Vec::new();
    let mut checked = 0;
    let mut differences = BTreeMap::new();
    for (name, json) in captures() {
        let info = reply_of(&name, &json);
        let expected = json["expected"].as_object().unwrap();
        assert_eq!(expected.len(), 1, "{name}: one server");
        let e = expected.values().next().unwrap().as_object().unwrap();
        for (key, want) in e {
            if let Some(why) = not_on_the_wire(&name, key) {
                differences.insert(why, ());
                continue;
            }
            checked += 1;
            match key.as_str() {
                "players" => check_rows(&name, &info, Section::Players, "_", want, &mut problems),
                "teams" => check_rows(&name, &info, Section::Teams, "_t", want, &mut problems),
                _ => {
                    if info.get(key) == Some(text_of(want).as_str()) {
                        continue;
                    }
                    match gameq_difference(&name, key, &info, want) {
                        Some(why) => {
                            differences.insert(why, ());
                        }
                        None => problems
                            .push(format!("{name}: {key} = {want}: ours {:?}", info.get(key))),
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked > 500, "{checked}");
    // each listed difference is used
    assert_eq!(differences.len(), 3, "{differences:?}");
}

#[test]
fn the_status_model_gets_name_count_map_and_players_in_order() {
    for (name, json) in captures() {
        let info = reply_of(&name, &json);
        let s = info_to_status(&info);
        let e = json["expected"]
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap();
        let host = if name == "gameq-ut3-1" {
            // GameQ takes OwningPlayerName; the wire's hostname is the same text here
            info.get("hostname").unwrap().to_string()
        } else {
            text_of(&e["hostname"])
        };
        assert_eq!(s.host_name.as_deref(), Some(host.as_str()), "{name}");
        assert_eq!(
            s.player_count.map(|n| n.to_string()),
            Some(text_of(&e["numplayers"])),
            "{name}"
        );
        let map = info.get("mapname").or(info.get("map"));
        // Minecraft's `map` is the map when there is no `mapname`
        assert_eq!(s.map.as_ref().map(|m| m.name.as_str()), map, "{name}");
        if !is_jc2(&name) && name != "gameq-ut3-1" {
            let want_map = e.get("mapname").or(e.get("map")).map(text_of);
            assert_eq!(map.map(str::to_string), want_map, "{name}");
        }
        let names: Vec<&str> = s
            .players
            .iter()
            .flatten()
            .map(|p| p.name.as_deref().unwrap_or_default())
            .collect();
        let theirs: Vec<String> = e
            .get("players")
            .and_then(Value::as_array)
            .map(|ps| {
                ps.iter()
                    .map(|p| text_of(p.get("player").or(p.get("name")).unwrap()))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(names.len(), theirs.len(), "{name}");
        for (i, (o, t)) in names.iter().zip(&theirs).enumerate() {
            let o = if is_jc2(&name) {
                gameq_jc2_name(&info, i, o)
            } else {
                gameq_row_value(o).to_string()
            };
            assert_eq!(&o, t, "{name}: player {i}");
        }
        // team names and BF2's 1-based team_ column
        if let Some(teams) = e.get("teams").and_then(Value::as_array) {
            let ours: Vec<&str> = s
                .teams
                .iter()
                .flatten()
                .map(|t| t.name.as_deref().unwrap_or_default())
                .collect();
            let theirs: Vec<&str> = teams.iter().map(|t| t["team"].as_str().unwrap()).collect();
            assert_eq!(ours, theirs, "{name}");
            let rows = e
                .get("players")
                .and_then(Value::as_array)
                .into_iter()
                .flatten();
            for (p, t) in s.players.iter().flatten().zip(rows) {
                let wire: i32 = t["team"].as_str().unwrap().parse().unwrap();
                assert_eq!(p.team, Some(wire - 1), "{name}");
            }
        }
        if is_jc2(&name) {
            let p = &s.players.as_ref().unwrap()[0];
            assert!(
                p.ping.is_some() && p.extra.contains_key("steamid"),
                "{name}: {p:?}"
            );
        }
    }
}

// =======================================================================================
// The client machine with each capture as its server's reply

/// The capture's packets with the session id set to `sid`.
fn with_session(json: &Value, sid: u32) -> Vec<Vec<u8>> {
    packets(json)
        .into_iter()
        .map(|mut p| {
            p[1..5].copy_from_slice(&sid.to_be_bytes());
            p
        })
        .collect()
}

#[derive(Debug, Clone, Copy)]
enum Server {
    /// Answers `09` with this challenge text, then requests carrying it.
    Challenge(&'static str, Option<u32>),
    /// Never answers `09`; answers requests without a challenge.
    Bf2Silent,
}

/// Drives a machine against a fake server that replies with the capture; returns the
/// result and every datagram the machine sent.
fn run_client(
    json: &Value,
    handshake: Handshake,
    server: Server,
    reverse: bool,
) -> (Result<Answer<Details>, QueryError>, Vec<Vec<u8>>) {
    let t0 = Instant::now();
    let sid = 0x5a5a_1234;
    let mut opts = QueryOptions::default();
    opts.handshake = handshake;
    let timing = Timing::default().attempt_timeout(Duration::from_millis(500));
    let mut m = QueryMachine::new(opts, timing, sid, t0);
    let mut now = t0;
    let mut sent = Vec::new();
    for _ in 0..50 {
        let mut replies = Vec::new();
        while let Some(d) = m.poll_transmit(now) {
            let req = Request::decode(&d).unwrap();
            match (req, server) {
                (Request::Challenge { session_id }, Server::Challenge(text, _)) => {
                    let mut r = vec![0x09];
                    r.extend_from_slice(&session_id.to_be_bytes());
                    r.extend_from_slice(text.as_bytes());
                    r.push(0);
                    replies.push(r);
                }
                (Request::Challenge { .. }, Server::Bf2Silent) => {}
                (
                    Request::Info {
                        challenge,
                        session_id,
                        ..
                    },
                    s,
                ) => {
                    let accepted = match s {
                        Server::Challenge(_, want) => challenge == want,
                        Server::Bf2Silent => challenge.is_none(),
                    };
                    if accepted {
                        let mut ps = with_session(json, session_id);
                        if reverse {
                            ps.reverse();
                        }
                        replies.extend(ps);
                    }
                }
                (other, _) => panic!("unexpected request {other:?}"),
            }
            sent.push(d);
        }
        if let Some(r) = m.take_result() {
            return (r, sent);
        }
        if replies.is_empty() {
            // nothing came back: time passes until the machine's next timer
            now = now.max(m.poll_timeout().expect("running"));
            m.handle_timeout(now);
        } else {
            now += Duration::from_millis(7);
            for r in replies {
                m.handle_datagram(now, &r);
            }
        }
    }
    panic!("no result after 50 rounds");
}

#[test]
fn the_client_reads_every_capture_with_and_without_a_challenge_step() {
    for (name, json) in captures() {
        let want = reply_of(&name, &json);
        let n = packets(&json).len();
        let cases = [
            // BF2: 09 answered "0", request without challenge bytes
            (Handshake::Auto, Server::Challenge("0", None), 2),
            // UT3 / Minecraft style real challenge (also a negative i32 one)
            (
                Handshake::Auto,
                Server::Challenge("27111876", Some(27_111_876)),
                2,
            ),
            (
                Handshake::Always,
                Server::Challenge("-5", Some(0xffff_fffb)),
                2,
            ),
            // a server that never answers 09: the fallback after one attempt timeout
            (Handshake::Auto, Server::Bf2Silent, 3),
            // qstat -gs3 style
            (Handshake::Never, Server::Bf2Silent, 1),
        ];
        for (handshake, server, sends) in cases {
            for reverse in [false, true] {
                let (r, sent) = run_client(&json, handshake, server, reverse);
                let o = r.unwrap_or_else(|e| panic!("{name} {handshake:?} {server:?}: {e}"));
                assert_eq!(o.details.info, want, "{name} {handshake:?} {server:?}");
                assert_eq!(o.datagrams, n, "{name}");
                assert_eq!(o.details.jc2mp, is_jc2(&name), "{name}");
                assert_eq!(o.status, info_to_status(&want), "{name}");
                assert_eq!(
                    sent.len(),
                    sends,
                    "{name} {handshake:?} {server:?}: {sent:x?}"
                );
                // the last information request carried the outcome's challenge (after
                // the fallback, a 09 goes out with it)
                let challenge = sent
                    .iter()
                    .rev()
                    .find_map(|d| match Request::decode(d).unwrap() {
                        Request::Info { challenge, .. } => Some(challenge),
                        _ => None,
                    })
                    .unwrap();
                assert_eq!(challenge, o.details.challenge);
                match server {
                    Server::Challenge(_, c) => {
                        assert_eq!(o.details.challenge, c);
                        assert!(o.details.handshake_answered);
                    }
                    Server::Bf2Silent => {
                        assert_eq!(o.details.challenge, None);
                        assert!(!o.details.handshake_answered);
                    }
                }
                if matches!(server, Server::Bf2Silent) && handshake == Handshake::Auto {
                    // the fallback to a request without a challenge
                    assert!(
                        o.events
                            .contains(&Event::Note("no reply to 0x09: asking without a challenge")),
                        "{name}"
                    );
                }
                let packets_seen = o
                    .events
                    .iter()
                    .filter(|e| matches!(e, Event::Part { .. }))
                    .count();
                assert_eq!(packets_seen, n, "{name}");
                assert!(o.bytes > 0);
            }
        }
    }
}

#[test]
fn the_client_drops_replies_of_another_session_and_times_out() {
    let (_, json) = captures()
        .into_iter()
        .find(|(n, _)| n == "gameq-bf2-2")
        .unwrap();
    let t0 = Instant::now();
    let mut opts = QueryOptions::default();
    opts.handshake = Handshake::Never;
    let mut m = QueryMachine::new(opts, Timing::default().retries(1), 0x7777_0001, t0);
    assert!(m.poll_transmit(t0).is_some());
    for p in with_session(&json, 0x7777_0002) {
        m.handle_datagram(t0, &p);
    }
    assert!(!m.is_done());
    // retry, then give up
    for _ in 0..10 {
        let Some(now) = m.poll_timeout() else { break };
        m.handle_timeout(now);
        while m.poll_transmit(now).is_some() {}
    }
    let e = m.take_result().unwrap().unwrap_err();
    assert_eq!(
        e,
        QueryError::NoAnswer {
            protocol: Protocol::Gamespy3,
            step: Some(Step::Info.name()),
            attempts: 2
        }
    );
    assert_eq!(
        e.to_string(),
        "gamespy3: no answer to information request (timed out after 2 datagrams sent)"
    );
}

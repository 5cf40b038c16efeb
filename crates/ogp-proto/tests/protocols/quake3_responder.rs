//! The Quake III responder, in memory, through the shared [`Responder`]: off by default;
//! on, it answers `getinfo` and `getstatus` from the status model with the challenge
//! echoed, never lets a request inject variables, keeps its replies to one datagram, and
//! bounds the bytes it sends toward one source and in all (the protocol has no server
//! challenge, so every source may be spoofed). The client machine reads it back.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::model::{MapInfo, Player, Rules};
use ogp_proto::quake3::client::{QueryMachine, QueryOptions};
use ogp_proto::quake3::responder::{Q3Config, Q3Outcome};
use ogp_proto::quake3::{decode_reply, ReplyKind};
use ogp_proto::responder::{DropReason, Outcome, Responder, ResponderConfig, Transmits};
use ogp_proto::Status;

fn status(players: usize) -> Status {
    let mut s = Status::default();
    s.host_name = Some("Bar OA".into());
    s.map = Some(MapInfo::named("oa_dm1"));
    s.game_name = Some("baseoa".into());
    s.slot_max = Some(8);
    s.password = Some(false);
    s.rules = Some(Rules(vec![
        ("sv_hostname".into(), "^1Bar ^7OA".into()),
        ("protocol".into(), "71".into()),
    ]));
    s.players = Some(
        (0..players)
            .map(|i| {
                let mut p = Player::named(format!("player number {i}"));
                p.score = Some(i as i32);
                p.ping = Some(0);
                p
            })
            .collect(),
    );
    s
}

fn responder(on: bool) -> Responder {
    let mut c = ResponderConfig::default();
    c.quake3 = Q3Config::enabled(on);
    Responder::new(c, [7; 32], Instant::now())
}

fn src(i: u32) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::from(0x7f00_0001 + i)), 27960)
}

#[test]
fn off_by_default() {
    assert!(!ResponderConfig::default().quake3.enabled);
    let mut r = responder(false);
    let mut out = Transmits::default();
    let o = r.handle(
        Instant::now(),
        src(0),
        b"\xff\xff\xff\xffgetstatus",
        &status(2),
        &mut out,
    );
    assert!(out.is_empty());
    assert!(
        matches!(o, Outcome::Quake3(Q3Outcome::Ignored(u)) if u.reason == DropReason::Disabled)
    );
}

#[test]
fn answers_getinfo_and_getstatus_with_the_challenge() {
    let mut r = responder(true);
    let mut out = Transmits::default();
    let now = Instant::now();
    let s = status(3);
    let o = r.handle(now, src(0), b"\xff\xff\xff\xffgetinfo xyz", &s, &mut out);
    assert_eq!(o, Outcome::Quake3(Q3Outcome::Info));
    let d = decode_reply(out.iter().next().unwrap()).unwrap().reply;
    assert_eq!(d.kind, ReplyKind::Info);
    assert_eq!(d.get("challenge"), Some("xyz"));
    assert_eq!(d.get("hostname"), Some("^1Bar ^7OA"));
    assert_eq!(d.get("clients"), Some("3"));
    assert_eq!(d.get("sv_maxclients"), Some("8"));
    assert_eq!(d.get("mapname"), Some("oa_dm1"));

    r.handle(now, src(0), b"\xff\xff\xff\xffgetstatus\n", &s, &mut out);
    let d = decode_reply(out.iter().next().unwrap()).unwrap().reply;
    assert_eq!(d.kind, ReplyKind::Status);
    assert_eq!(d.get("challenge"), None);
    assert_eq!(d.players.len(), 3);
    assert_eq!(d.players[2].before, ["2", "0"]);
}

/// Players with teams: ioquake3-style games get `score ping "name"` (what qstat, gamedig
/// and opengsq all read: the last two take a team column before the name for the name),
/// DarkPlaces games the team before the name, Warsow after it.
#[test]
fn the_team_column_is_written_only_in_the_dialects_that_have_one() {
    let mut r = responder(true);
    let mut out = Transmits::default();
    let now = Instant::now();
    for (game, before, after) in [
        ("baseoa", &["0", "0"][..], &[][..]),
        ("Quake3Arena", &["0", "0"][..], &[][..]),
        ("Xonotic", &["0", "0", "1"][..], &[][..]),
        ("DarkPlaces-Quake", &["0", "0", "1"][..], &[][..]),
        ("Warsow", &["0", "0"][..], &["1"][..]),
    ] {
        let mut s = status(1);
        s.game_name = Some(game.into());
        s.players.as_mut().unwrap()[0].team = Some(1);
        r.handle(now, src(1), b"\xff\xff\xff\xffgetstatus", &s, &mut out);
        let d = decode_reply(out.iter().next().unwrap()).unwrap().reply;
        assert_eq!(d.players[0].before, before, "{game}");
        assert_eq!(d.players[0].after, after, "{game}");
        assert_eq!(d.players[0].name.as_str(), "player number 0", "{game}");
    }
}

#[test]
fn a_request_cannot_inject_variables() {
    let mut r = responder(true);
    let mut out = Transmits::default();
    let o = r.handle(
        Instant::now(),
        src(0),
        b"\xff\xff\xff\xffgetinfo x\\sv_hostname\\evil",
        &status(0),
        &mut out,
    );
    assert!(out.is_empty());
    assert!(
        matches!(o, Outcome::Quake3(Q3Outcome::Ignored(u)) if u.reason == DropReason::Malformed)
    );
}

#[test]
fn replies_fit_one_datagram() {
    let mut r = responder(true);
    let mut out = Transmits::default();
    let o = r.handle(
        Instant::now(),
        src(0),
        b"\xff\xff\xff\xffgetstatus",
        &status(300),
        &mut out,
    );
    assert_eq!(o, Outcome::Quake3(Q3Outcome::Status { truncated: true }));
    assert!(out.total_bytes() <= 1400);
}

/// Replies sent for `n` requests from `from(i)` at one instant: datagrams, bytes.
fn flood(r: &mut Responder, n: u32, from: impl Fn(u32) -> SocketAddr) -> (usize, usize) {
    let mut out = Transmits::default();
    let now = Instant::now();
    let s = status(60);
    let (mut datagrams, mut bytes) = (0, 0);
    for i in 0..n {
        r.handle(now, from(i), b"\xff\xff\xff\xffgetstatus", &s, &mut out);
        datagrams += out.len();
        bytes += out.total_bytes();
    }
    (datagrams, bytes)
}

#[test]
fn the_bytes_toward_one_spoofed_victim_are_bounded() {
    // One request is 13 bytes; the reply is about 1,400: a 100x amplifier without a budget.
    let mut r = responder(true);
    let (datagrams, bytes) = flood(&mut r, 1000, |_| src(0));
    let burst = Q3Config::default().per_source.burst as usize;
    assert!(bytes <= burst, "{bytes} bytes toward one address");
    assert!(datagrams >= 10, "{datagrams}");
    assert!(r.stats().rate_limited + r.stats().ignored >= 1000 - datagrams as u64);
}

#[test]
fn the_bytes_in_all_are_bounded() {
    // Spoofed sources, each new: the per-source budget does not help, the overall one does.
    let mut r = responder(true);
    let (_, bytes) = flood(&mut r, 2000, src);
    let total = Q3Config::default().total.burst as usize;
    assert!(bytes <= total, "{bytes} bytes in all");
    assert!(bytes >= total / 2, "{bytes}");
}

#[test]
fn the_budget_refills_with_time() {
    let mut r = responder(true);
    flood(&mut r, 1000, |_| src(1));
    let mut out = Transmits::default();
    let later = Instant::now() + Duration::from_secs(1);
    let o = r.handle(
        later,
        src(1),
        b"\xff\xff\xff\xffgetstatus",
        &status(60),
        &mut out,
    );
    assert!(
        matches!(o, Outcome::Quake3(Q3Outcome::Status { .. })),
        "{o:?}"
    );
}

#[test]
fn the_client_reads_the_responder() {
    let mut r = responder(true);
    let s = status(4);
    let mut m = QueryMachine::new(
        QueryOptions::default(),
        Timing::default(),
        42,
        Instant::now(),
    );
    let mut out = Transmits::default();
    let now = Instant::now();
    let mut replies = Vec::new();
    while let Some(d) = m.poll_transmit(now) {
        r.handle(now, src(9), &d, &s, &mut out);
        for reply in out.iter() {
            replies.push(reply.to_vec());
            m.handle_datagram(now, reply);
        }
    }
    let a = m.take_result().unwrap().unwrap();
    assert_eq!(replies.len(), 2);
    assert_eq!(a.status.host_name.as_deref(), Some("Bar OA"));
    assert_eq!(a.status.player_count(), Some(4));
    assert_eq!(a.status.slot_max, Some(8));
    assert_eq!(a.status.map, s.map);
    let names: Vec<_> = a
        .status
        .players
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    let want: Vec<_> = s.players.unwrap().into_iter().map(|p| p.name).collect();
    assert_eq!(names, want);
}

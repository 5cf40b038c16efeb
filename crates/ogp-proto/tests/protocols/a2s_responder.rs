//! The sans-IO A2S responder and client, in memory: the client against the responder in
//! every configuration, the responder's rules from `interop.md` §5.1 and `security.md`
//! §3, and the client against hand-made hostile or unusual servers.

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use ogp_proto::a2s::client::{Details, QueryMachine, QueryOptions, Step};
use ogp_proto::a2s::request::Request;
use ogp_proto::a2s::responder::{A2sConfig, A2sOutcome, A2sResponder, Flavor};
use ogp_proto::a2s::split::{detect_first, parse, split_reply, Layout, COMPRESSED};
use ogp_proto::a2s::{decode, Challenge, InfoReply, Message, Players, Rules};
use ogp_proto::client::{Answer, Event, QueryDriver, QueryError, Rejection, Timing};
use ogp_proto::guard::ChallengeKeys;
use ogp_proto::internals::protocol_id;
use ogp_proto::model::{A2sInfo, MapInfo, Os, Player, ServerType};
use ogp_proto::responder::Transmits;
use ogp_proto::responder::{Incoming, ProtocolResponder};
use ogp_proto::{Protocol, Status};

const IP: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));

fn status(players: usize, rules: usize) -> Status {
    let mut status = Status::default();
    status.host_name = Some("Test server".into());
    status.game_name = Some("Team Fortress".into());
    status.game_version = Some("1.2.3".into());
    status.map = Some(MapInfo::named("ctf_2fort"));
    status.slot_max = Some(64);
    status.server_type = Some(ServerType::Dedicated);
    status.os = Some(Os::Linux);
    status.password = Some(false);
    status.connect_port = Some(27015);
    status.players = Some(
        (0..players)
            .map(|i| {
                let mut p = Player::default();
                p.name = Some(format!("player number {i}").into());
                p.score = Some(i as i32);
                p.duration = Some(i as f32 * 1.5);
                p
            })
            .collect(),
    );
    status.rules = Some(
        (0..rules)
            .map(|i| (format!("rule_{i}"), format!("value {i}")))
            .collect(),
    );
    status.a2s = Some({
        let mut a2s = A2sInfo::default();
        a2s.folder = Some("tf".into());
        a2s.app_id = Some(440);
        a2s.vac = Some(true);
        a2s.keywords = Some("a,b,c".into());
        a2s.game_id = Some(440);
        a2s
    });
    status
}

struct Server {
    r: A2sResponder,
    keys: ChallengeKeys,
    out: Transmits,
    now: Instant,
}

impl Server {
    fn new(config: A2sConfig) -> Self {
        let now = Instant::now();
        Self {
            r: A2sResponder::new(config),
            keys: ChallengeKeys::new([5; 16], Duration::from_secs(300), now),
            out: Transmits::default(),
            now,
        }
    }

    fn handle_from(&mut self, ip: IpAddr, d: &[u8], s: &Status) -> (A2sOutcome, Vec<Vec<u8>>) {
        self.out.clear();
        let o = self.r.handle(
            Incoming {
                now: self.now,
                ip,
                datagram: d,
                reject: false,
            },
            s,
            &mut self.keys,
            &mut self.out,
        );
        (o, self.out.iter().map(<[u8]>::to_vec).collect())
    }

    fn handle(&mut self, d: &[u8], s: &Status) -> (A2sOutcome, Vec<Vec<u8>>) {
        self.handle_from(IP, d, s)
    }

    fn challenge(&mut self) -> u32 {
        A2sResponder::challenge(&mut self.keys, self.now, IP)
    }
}

fn req(r: Request) -> Vec<u8> {
    let mut d = Vec::new();
    r.encode(&mut d);
    d
}

/// Runs the client against the server; `mangle` may reorder or duplicate each reply's
/// datagrams.
fn run(
    server: &mut Server,
    s: &Status,
    opts: QueryOptions,
    mangle: impl Fn(Vec<Vec<u8>>) -> Vec<Vec<u8>>,
) -> Result<Answer<Details>, QueryError> {
    let mut m = QueryMachine::new(opts, Timing::default(), server.now);
    for _ in 0..50 {
        let Some(q) = m.poll_transmit(server.now) else {
            break;
        };
        let (_, out) = server.handle(&q, s);
        for d in mangle(out) {
            m.handle_datagram(server.now + Duration::from_millis(2), &d);
        }
    }
    m.take_result().expect("query finished")
}

// =======================================================================================
// Client against responder

#[test]
fn full_query_with_challenge_split_rules_and_many_players() {
    let s = status(64, 400);
    let mut server = Server::new(A2sConfig::default());
    let o = run(&mut server, &s, QueryOptions::default(), |v| v).unwrap();
    assert!(o.details.missing.is_empty());
    assert!(o.warnings.is_empty());
    assert_eq!(o.status.host_name.as_deref(), Some("Test server"));
    assert_eq!(o.status.players.as_ref().unwrap().len(), 64);
    assert_eq!(o.status.rules.as_ref().unwrap().len(), 400);
    assert_eq!(o.status.rules, s.rules);
    assert_eq!(o.status.player_count, Some(64));
    assert_eq!(o.status.connect_port, Some(27015));
    assert_eq!(o.details.challenge, Some(server.challenge()));
    // one challenge round trip in all: INFO's challenge is reused for PLAYER and RULES
    let challenges = o
        .events
        .iter()
        .filter(|e| matches!(e, Event::Challenge { .. }))
        .count();
    assert_eq!(challenges, 1);
    let sent = o
        .events
        .iter()
        .filter(|e| matches!(e, Event::Sent { .. }))
        .count();
    assert_eq!(sent, 4);
    assert!((o.ping_ms - 2.0).abs() < 0.01);
    // the status maps back to the same players and rules as the server's
    for (a, b) in o.status.players.unwrap().iter().zip(s.players.unwrap()) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.score, b.score);
        assert_eq!(a.duration, b.duration);
    }
}

#[test]
fn fragments_reversed_and_duplicated_still_reassemble() {
    let s = status(200, 2000);
    let mut server = Server::new(A2sConfig::default());
    let o = run(&mut server, &s, QueryOptions::default(), |mut v| {
        v.reverse();
        if let Some(first) = v.first().cloned() {
            v.insert(1, first);
        }
        v
    })
    .unwrap();
    assert_eq!(o.status.players.as_ref().unwrap().len(), 200);
    assert_eq!(o.status.rules.as_ref().unwrap().len(), 2000);
    assert!(o.datagrams > 10);
}

#[test]
fn a_server_that_never_challenges_info() {
    let s = status(3, 3);
    let mut server = Server::new({
        let mut config = A2sConfig::default();
        config.require_info_challenge = false;
        config
    });
    let o = run(&mut server, &s, QueryOptions::default(), |v| v).unwrap();
    // INFO answered at once; PLAYER asks with FFFFFFFF and gets its challenge
    assert!(matches!(
        o.events.as_slice(),
        [
            Event::Sent {
                what: "A2S_INFO",
                challenge: None,
                ..
            },
            Event::Reply {
                what: "A2S_INFO",
                ..
            },
            Event::Sent {
                what: "A2S_PLAYER",
                challenge: Some(u32::MAX),
                ..
            },
            Event::Challenge { .. },
            ..
        ]
    ));
    assert_eq!(o.status.rules.unwrap().len(), 3);
}

#[test]
fn goldsrc_emulation_both_ways() {
    for flavor in [Flavor::GoldSrcM, Flavor::GoldSrcI] {
        let s = status(30, 500);
        let mut server = Server::new({
            let mut config = A2sConfig::default();
            config.flavor = flavor;
            config
        });
        let c = server.challenge();
        let (_, info) = server.handle(&req(Request::info(Some(c))), &s);
        match (flavor, decode(&info[0]).unwrap().message) {
            (Flavor::GoldSrcM, Message::GoldSrcInfo(m)) => {
                assert_eq!(m.protocol, 48);
                assert_eq!(m.name, "Test server");
            }
            (Flavor::GoldSrcI, Message::Info(i)) => {
                assert_eq!(i.protocol, 48);
                assert!(i.app_id & 0xff < 200);
            }
            (f, m) => panic!("{f:?}: {m:?}"),
        }
        let (_, rules) = server.handle(&req(Request::rules(Some(c))), &s);
        assert!(rules.len() > 1 && rules.len() <= 15);
        assert_eq!(detect_first(&rules[0], 1), Some(Layout::GoldSrc));
        assert!(rules.iter().all(|d| d.len() <= 1400));
        let o = run(&mut server, &s, QueryOptions::default(), |v| v).unwrap();
        assert_eq!(o.status.rules.unwrap().len(), 500);
        assert_eq!(o.status.players.unwrap().len(), 30);
    }
}

#[test]
fn the_ship_gets_its_fields_and_player_extras() {
    let mut s = status(3, 1);
    let a = s.a2s.as_mut().unwrap();
    a.app_id = Some(2400);
    a.ship_mode = Some(1);
    a.ship_witnesses = Some(3);
    a.ship_duration = Some(5);
    for (i, p) in s.players.as_mut().unwrap().iter_mut().enumerate() {
        p.deaths = Some(i as u32);
        p.money = Some(1000 + i as i32);
    }
    let mut server = Server::new(A2sConfig::default());
    let o = run(&mut server, &s, QueryOptions::default(), |v| v).unwrap();
    let Some(InfoReply::Source(i)) = &o.details.info else {
        panic!()
    };
    let ship = i.ship.unwrap();
    assert_eq!((ship.mode, ship.witnesses, ship.duration), (1, 3, 5));
    let p = o.details.players.unwrap();
    assert!(p.players.iter().all(|p| p.ship.is_some()));
    assert_eq!(o.status.players.unwrap()[2].money, Some(1002));
}

// =======================================================================================
// Responder rules

#[test]
fn info_needs_a_challenge_accepting_trailing_bytes() {
    let s = status(2, 2);
    let mut server = Server::new(A2sConfig::default());
    let c = server.challenge();
    for bad in [None, Some(0), Some(u32::MAX), Some(c ^ 1)] {
        let q = req(Request::info(bad));
        let (o, out) = server.handle(&q, &s);
        assert_eq!(o, A2sOutcome::Challenge, "{bad:?}");
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].len(), 9);
        assert!(out[0].len() < q.len());
        assert_eq!(
            decode(&out[0]).unwrap().message,
            Message::Challenge(Challenge { challenge: c })
        );
    }
    // 4 and 8 trailing bytes (source-server-query sends FFFFFFFF after the challenge)
    for trailing in [0, 4] {
        let q = req(Request::Info {
            challenge: Some(c),
            trailing,
        });
        let (o, out) = server.handle(&q, &s);
        assert_eq!(o, A2sOutcome::Info);
        let Message::Info(i) = decode(&out[0]).unwrap().message else {
            panic!()
        };
        assert_eq!((i.server_type, i.environment), (b'd', b'l'));
        assert_eq!(i.extra.unwrap().port, Some(27015));
    }
    // the padding without a challenge first: FFFFFFFF is "no challenge"
    let mut q = req(Request::info(None));
    q.extend_from_slice(&[0xff; 4]);
    assert_eq!(server.handle(&q, &s).0, A2sOutcome::Challenge);
}

#[test]
fn one_challenge_per_ip_for_info_player_and_rules() {
    let s = status(2, 2);
    let mut server = Server::new(A2sConfig::default());
    let c = server.challenge();
    // qstat order: RULES with the INFO challenge, then PLAYER
    assert!(matches!(
        server.handle(&req(Request::rules(Some(c))), &s).0,
        A2sOutcome::Rules { .. }
    ));
    assert!(matches!(
        server.handle(&req(Request::player(Some(c))), &s).0,
        A2sOutcome::Players { .. }
    ));
    // PLAYER/RULES with FFFFFFFF or 00000000 get the challenge
    for q in [
        Request::player(None),
        Request::rules(Some(0)),
        Request::Player {
            challenge: None,
            trailing: 0,
        },
    ] {
        let (o, out) = server.handle(&req(q), &s);
        assert_eq!(o, A2sOutcome::Challenge);
        assert_eq!(out[0].len(), 9);
    }
    // another IP's challenge does not open this one; the protocol is part of the key
    let other = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
    let (o, _) = server.handle_from(other, &req(Request::player(Some(c))), &s);
    assert_eq!(o, A2sOutcome::Challenge);
    let ogp = server.keys.issue(server.now, protocol_id::OGP, IP);
    let (o, _) = server.handle(&req(Request::rules(Some(ogp))), &s);
    assert_eq!(o, A2sOutcome::Challenge);
}

#[test]
fn info_not_challenged_when_configured_but_player_still_is() {
    let s = status(2, 2);
    let mut server = Server::new({
        let mut config = A2sConfig::default();
        config.require_info_challenge = false;
        config
    });
    assert_eq!(
        server.handle(&req(Request::info(None)), &s).0,
        A2sOutcome::Info
    );
    assert_eq!(
        server.handle(&req(Request::player(None)), &s).0,
        A2sOutcome::Challenge
    );
}

#[test]
fn getchallenge_and_ping_are_off_by_default() {
    let s = status(0, 0);
    let mut server = Server::new(A2sConfig::default());
    for q in [Request::GetChallenge, Request::Ping] {
        let (o, out) = server.handle(&req(q), &s);
        assert!(matches!(o, A2sOutcome::Ignored(_)));
        assert!(out.is_empty());
    }
    for flavor in [Flavor::Source, Flavor::GoldSrcM] {
        let mut server = Server::new({
            let mut config = A2sConfig::default();
            config.answer_get_challenge = true;
            config.answer_ping = true;
            config.flavor = flavor;
            config
        });
        let (o, out) = server.handle(&req(Request::GetChallenge), &s);
        assert_eq!(o, A2sOutcome::Challenge);
        assert_eq!(out[0].len(), 9);
        let (o, out) = server.handle(&req(Request::Ping), &s);
        assert_eq!(o, A2sOutcome::Ping);
        let want = if flavor == Flavor::Source { 21 } else { 6 };
        assert_eq!(out[0].len(), want);
    }
}

#[test]
fn garbage_oversized_replies_and_banned_sources_get_silence() {
    let s = status(2, 2);
    let mut server = Server::new(A2sConfig::default());
    let c = server.challenge();
    let mut big = req(Request::info(Some(c)));
    big.resize(1401, 0);
    let mut info_reply = Vec::new();
    ogp_proto::a2s::mapping::status_to_info(&s).encode(&mut info_reply);
    for d in [
        vec![],
        vec![0xff; 4],
        vec![0xff, 0xff, 0xff, 0xff, 0x99],
        b"\xff\xff\xff\xffTSource Engine Quer\0".to_vec(),
        b"\xff\xff\xff\xffU\x01\x02".to_vec(),
        big,
        info_reply,
        vec![0xfe, 0xff, 0xff, 0xff, 1, 0, 0, 0, 1, 0],
    ] {
        let (o, out) = server.handle(&d, &s);
        assert!(matches!(o, A2sOutcome::Ignored(_)), "{d:?}");
        assert!(out.is_empty());
    }
    server.out.clear();
    let o = server.r.handle(
        Incoming {
            now: server.now,
            ip: IP,
            datagram: &req(Request::info(Some(c))),
            reject: true,
        },
        &s,
        &mut server.keys,
        &mut server.out,
    );
    assert!(matches!(o, A2sOutcome::Ignored(_)));
    assert!(server.out.is_empty());
}

#[test]
fn unverified_sources_never_get_more_than_9_bytes() {
    let s = status(255, 5000);
    let mut server = Server::new(A2sConfig::default());
    let mut rng = 0x1234_5678u32;
    for i in 0..2000u32 {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        let c = Some(rng).filter(|_| i % 3 != 0);
        let q = match i % 3 {
            0 => Request::info(c),
            1 => Request::player(c),
            _ => Request::rules(c),
        };
        let (_, out) = server.handle(&req(q), &s);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].len(), 9);
    }
}

#[test]
fn splits_use_source_layout_1248_ids_below_0x8000_in_order() {
    let s = status(255, 3000);
    let mut server = Server::new(A2sConfig::default());
    let c = server.challenge();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let (o, out) = server.handle(&req(Request::rules(Some(c))), &s);
        let A2sOutcome::Rules {
            datagrams,
            truncated,
        } = o
        else {
            panic!()
        };
        assert!(!truncated);
        assert_eq!(datagrams, out.len());
        assert!(out.len() > 2);
        let layout = detect_first(&out[0], 0).unwrap();
        assert_eq!(layout, Layout::Source { size_field: true });
        for (n, d) in out.iter().enumerate() {
            assert!(d.len() <= 1260);
            let p = parse(d, layout).unwrap();
            assert_eq!(usize::from(p.number), n);
            assert_eq!(p.size, Some(1248));
            let id = u32::from_le_bytes(d[4..8].try_into().unwrap());
            assert!(id < 0x8000 && id & COMPRESSED == 0);
            ids.push(id);
        }
    }
    ids.dedup();
    assert_eq!(ids, [1, 2, 3]);
    // players too
    let (o, out) = server.handle(&req(Request::player(Some(c))), &s);
    assert!(matches!(o, A2sOutcome::Players { datagrams: 2.., .. }));
    assert!(out.iter().all(|d| d[0] == 0xfe));
}

#[test]
fn split_ids_wrap_before_0x8000() {
    let s = status(0, 100);
    let mut server = Server::new(A2sConfig::default());
    let c = server.challenge();
    let mut last = 0;
    for _ in 0..0x7fff + 2 {
        let (_, out) = server.handle(&req(Request::rules(Some(c))), &s);
        last = u32::from_le_bytes(out[0][4..8].try_into().unwrap());
        assert!((1..0x8000).contains(&last));
    }
    assert_eq!(last, 2);
}

#[test]
fn info_is_never_split_and_oversized_replies_are_cut_by_whole_entries() {
    let mut s = status(255, 20_000);
    s.a2s.as_mut().unwrap().keywords = Some("k".repeat(5000).into());
    s.host_name = Some("h".repeat(3000).into());
    s.players.as_mut().unwrap()[0].name = Some("n".repeat(1000).into());
    let mut server = Server::new({
        let mut config = A2sConfig::default();
        config.max_reply_bytes = 16 * 1024;
        config
    });
    let c = server.challenge();
    let (_, out) = server.handle(&req(Request::info(Some(c))), &s);
    assert_eq!(out.len(), 1);
    assert!(out[0].len() <= 1400);
    assert!(matches!(decode(&out[0]).unwrap().message, Message::Info(_)));
    let (o, out) = server.handle(&req(Request::rules(Some(c))), &s);
    assert!(matches!(
        o,
        A2sOutcome::Rules {
            truncated: true,
            ..
        }
    ));
    let payload: usize = out.iter().map(|d| d.len() - 12).sum();
    assert!(payload <= 16 * 1024);
    let mut m = ogp_proto::a2s::Reassembler::new();
    let mut reply = None;
    for d in &out {
        if let ogp_proto::a2s::Pushed::Complete { reply: r, .. } = m.push(d).unwrap() {
            reply = Some(r);
        }
    }
    let Message::Rules(r) = ogp_proto::a2s::split::decode_reassembled(&reply.unwrap())
        .unwrap()
        .message
    else {
        panic!()
    };
    assert!(r.rules.len() > 100 && r.rules.len() < 20_000);
    assert_eq!(r.rules[..], s.rules.as_ref().unwrap().0[..r.rules.len()]);
    let (o, _) = server.handle(&req(Request::player(Some(c))), &s);
    assert!(matches!(o, A2sOutcome::Players { .. }));
}

#[test]
fn a_cut_player_reply_keeps_every_player_that_fits() {
    // 255 players of 60-byte names: 18.6 KB, cut at 4000 bytes. Found by the a2s_request
    // fuzz target: the responder dropped players in steps of (excess / 16), so long names
    // left none at all.
    let mut s = status(255, 0);
    for p in s.players.as_mut().unwrap() {
        p.name = Some("n".repeat(60).into());
    }
    let mut server = Server::new({
        let mut config = A2sConfig::default();
        config.max_reply_bytes = 4000;
        config
    });
    let c = server.challenge();
    let (o, out) = server.handle(&req(Request::player(Some(c))), &s);
    assert!(matches!(
        o,
        A2sOutcome::Players {
            truncated: true,
            ..
        }
    ));
    let mut m = ogp_proto::a2s::Reassembler::new();
    let mut reply = None;
    for d in &out {
        if let ogp_proto::a2s::Pushed::Complete { reply: r, .. } = m.push(d).unwrap() {
            reply = Some(r);
        }
    }
    let reply = reply.unwrap();
    let Message::Players(p) = ogp_proto::a2s::split::decode_reassembled(&reply)
        .unwrap()
        .message
    else {
        panic!()
    };
    // 4 + 2 bytes of header, 1 + 61 + 8 bytes per player: 57 fit in 4000 bytes
    assert_eq!(p.players.len(), 57);
    assert_eq!(reply.len(), 6 + 57 * 70);
}

// =======================================================================================
// Client against hand-made servers

fn drive_fake(
    opts: QueryOptions,
    server: impl FnMut(&Request) -> Vec<Vec<u8>>,
) -> Result<Answer<Details>, QueryError> {
    drive_fake_timed(opts, Timing::default(), server)
}

fn drive_fake_timed(
    opts: QueryOptions,
    timing: Timing,
    mut server: impl FnMut(&Request) -> Vec<Vec<u8>>,
) -> Result<Answer<Details>, QueryError> {
    let t0 = Instant::now();
    let mut m = QueryMachine::new(opts, timing, t0);
    let mut now = t0;
    for _ in 0..100 {
        if m.is_done() {
            break;
        }
        if let Some(q) = m.poll_transmit(now) {
            let r = Request::decode(&q).unwrap();
            for d in server(&r) {
                m.handle_datagram(now, &d);
            }
            continue;
        }
        now = m.poll_timeout().unwrap();
        m.handle_timeout(now);
    }
    m.take_result().expect("done")
}

fn encoded(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut v = Vec::new();
    f(&mut v);
    v
}

#[test]
fn endless_challenges_end_in_a_challenge_loop() {
    let mut n = 0;
    let r = drive_fake(QueryOptions::default(), |_| {
        n += 1;
        vec![encoded(|o| Challenge { challenge: n }.encode(o))]
    });
    assert_eq!(
        r,
        Err(QueryError::Rejected {
            protocol: Protocol::A2s,
            reason: Rejection::ChallengeLoop
        })
    );
    assert_eq!(n, 6);
}

#[test]
fn a_repeated_challenge_is_not_a_new_one() {
    // Every request is answered with the same challenge (a late copy of an earlier
    // answer, or a server that will not take it): the request in flight already carries
    // it, so it is neither followed again nor counted as a challenge loop. The server is
    // alive: the step gets the alive retries, then times out.
    let mut sent = 0;
    let r = drive_fake_timed(
        QueryOptions::default(),
        Timing::default()
            .retries(1)
            .alive_retries(4)
            .total_timeout(Duration::from_secs(60)),
        |_| {
            sent += 1;
            vec![encoded(|o| Challenge { challenge: 7 }.encode(o))]
        },
    );
    assert_eq!(
        r,
        Err(QueryError::NoAnswer {
            protocol: Protocol::A2s,
            step: Some("A2S_INFO"),
            attempts: 6
        })
    );
    // The first request, its resend with the challenge, then 4 retries.
    assert_eq!(sent, 6);
}

#[test]
fn silence_times_out_after_the_retries() {
    let mut sent = 0;
    let r = drive_fake(QueryOptions::default(), |_| {
        sent += 1;
        vec![]
    });
    assert_eq!(
        r,
        Err(QueryError::NoAnswer {
            protocol: Protocol::A2s,
            step: Some("A2S_INFO"),
            attempts: 3
        })
    );
    assert_eq!(sent, 3);
}

#[test]
fn a_silent_player_step_is_reported_missing_and_rules_still_come() {
    let s = status(1, 2);
    let r = drive_fake_timed(
        QueryOptions::default(),
        Timing::default()
            .retries(1)
            .total_timeout(Duration::from_secs(30)),
        |q| match q {
            Request::Info { .. } => vec![encoded(|o| {
                ogp_proto::a2s::mapping::status_to_info(&s).encode(o)
            })],
            Request::Player { .. } => vec![],
            Request::Rules { .. } => vec![encoded(|o| {
                ogp_proto::a2s::mapping::status_to_rules(&s).encode(o)
            })],
            _ => vec![],
        },
    )
    .unwrap();
    assert_eq!(r.details.missing, [Step::Players]);
    assert_eq!(r.warnings, ["no A2S_PLAYER reply"]);
    assert_eq!(r.status.rules.unwrap().len(), 2);
    assert!(r.status.players.is_none());
}

#[test]
fn bzip2_replies_and_their_failures() {
    let rules = Rules {
        rules: (0..500)
            .map(|i| (format!("r{i}").into(), format!("{i}").into()))
            .collect(),
        trailing: vec![],
    };
    let plain = encoded(|o| rules.encode(o));
    let fragments = |crc_xor: u32| -> Vec<Vec<u8>> {
        let mut c = bzip2::Compress::new(bzip2::Compression::best(), 30);
        let mut z = Vec::with_capacity(plain.len() + 100);
        c.compress_vec(&plain, &mut z, bzip2::Action::Finish)
            .unwrap();
        let mut payload = (plain.len() as i32).to_le_bytes().to_vec();
        payload.extend_from_slice(&(crc32fast::hash(&plain) ^ crc_xor).to_le_bytes());
        payload.extend_from_slice(&z);
        // the 2006 engine's layout: no size field
        let chunks: Vec<&[u8]> = payload.chunks(1000).collect();
        chunks
            .iter()
            .enumerate()
            .map(|(i, ch)| {
                let mut d = vec![0xfe, 0xff, 0xff, 0xff];
                d.extend_from_slice(&0x8000_2897u32.to_le_bytes());
                d.push(chunks.len() as u8);
                d.push(i as u8);
                d.extend_from_slice(ch);
                d
            })
            .rev()
            .collect()
    };
    let mut opts = QueryOptions::default();
    opts.info = false;
    opts.players = false;
    let r = drive_fake(opts.clone(), |_| fragments(0)).unwrap();
    assert_eq!(r.details.rules.unwrap(), rules);
    let r = drive_fake(opts, |_| fragments(1));
    let bad_crc = ogp_proto::a2s::ReassemblyError::BadCrc {
        expected: crc32fast::hash(&plain) ^ 1,
        actual: crc32fast::hash(&plain),
    };
    assert_eq!(
        r,
        Err(QueryError::BadReassembly {
            protocol: Protocol::A2s,
            message: bad_crc.to_string(),
        })
    );
}

#[test]
fn oversized_unsplit_and_goldsrc_split_replies_are_read() {
    let s = status(100, 300);
    let players = ogp_proto::a2s::mapping::status_to_players(&s, false);
    let big = encoded(|o| players.encode(o));
    assert!(big.len() > 1400);
    let rules = encoded(|o| ogp_proto::a2s::mapping::status_to_rules(&s).encode(o));
    let r = drive_fake(
        {
            let mut opts = QueryOptions::default();
            opts.info = false;
            opts
        },
        |q| match q {
            Request::Player { .. } => vec![big.clone()],
            _ => split_reply(&rules, 0x1e6a, Layout::GoldSrc).unwrap(),
        },
    )
    .unwrap();
    assert_eq!(r.details.players.unwrap(), players);
    assert_eq!(r.details.rules.unwrap().rules.len(), 300);
}

#[test]
fn stray_and_foreign_datagrams_are_dropped() {
    let s = status(1, 1);
    let info = encoded(|o| ogp_proto::a2s::mapping::status_to_info(&s).encode(o));
    let players: Players = ogp_proto::a2s::mapping::status_to_players(&s, false);
    let r = drive_fake(
        {
            let mut opts = QueryOptions::default();
            opts.rules = false;
            opts
        },
        |q| match q {
            Request::Info { .. } => vec![
                b"garbage".to_vec(),
                encoded(|o| players.encode(o)), // not the reply to INFO
                info.clone(),
            ],
            _ => vec![info.clone(), encoded(|o| players.encode(o))],
        },
    )
    .unwrap();
    assert_eq!(r.details.players.unwrap(), players);
    assert!(r.events.iter().any(|e| matches!(e, Event::Dropped { .. })));
}

#[test]
fn goldsrc_servers_answering_with_both_m_and_i_are_merged() {
    let s = status(2, 2);
    let m = ogp_proto::a2s::mapping::status_to_goldsrc(&s);
    let mut i = ogp_proto::a2s::mapping::status_to_info(&s);
    i.protocol = 48;
    i.version = "1.1.2.7/Stdio".into();
    let p = ogp_proto::a2s::mapping::status_to_players(&s, false);
    // (with INFO alone the query is over at the first reply: the second one can only be
    // taken while a later step is in progress)
    let r = drive_fake(
        {
            let mut opts = QueryOptions::default();
            opts.rules = false;
            opts
        },
        |q| match q {
            Request::Info { .. } => vec![encoded(|o| m.encode(o)), encoded(|o| i.encode(o))],
            _ => vec![encoded(|o| p.encode(o))],
        },
    )
    .unwrap();
    assert!(matches!(r.details.info, Some(InfoReply::GoldSrc(_))));
    assert_eq!(r.details.other_info, Some(InfoReply::Source(i)));
    assert_eq!(r.status.game_version.as_deref(), Some("1.1.2.7/Stdio"));
    assert_eq!(r.status.a2s.unwrap().protocol, Some(48));
}

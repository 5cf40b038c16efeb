//! The sans-IO GameSpy v3 responder through the shared [`Responder`]: both challenge
//! modes as `interop.md` §5.2 describes them, the amplification bounds of
//! `security.md` §3.2, sub-protocols A, B and C, echo and keep-alive, byte-exact where
//! the spec gives bytes, and the replies read back through the reassembler.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use ogp_proto::gamespy3::mapping::info_to_status;
use ogp_proto::gamespy3::reply::{decode_packet, decode_reply, Pushed, Reassembler, Reply};
use ogp_proto::gamespy3::request::{InfoKind, Request};
use ogp_proto::gamespy3::responder::{ChallengeMode, Gs3Outcome};
use ogp_proto::model::{MapInfo, Player, Rules, Team};
use ogp_proto::responder::{Outcome, Responder, ResponderConfig, Transmits, Unanswered};
use ogp_proto::Status;

const SRC: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)), 40000);
const SID: u32 = 0x1020_3040;

fn status(players: usize) -> Status {
    let mut status = Status::default();
    status.host_name = Some("GS3 test server".into());
    status.game_name = Some("battlefield2".into());
    status.game_version = Some("1.5.3153-802.0".into());
    status.map = Some(MapInfo::named("Strike At Karkand"));
    status.game_type = Some("gpm_cq".into());
    status.slot_max = Some(64);
    status.password = Some(false);
    status.connect_port = Some(16567);
    status.players = Some(
        (0..players)
            .map(|i| {
                let mut player = Player::default();
                player.name = Some(format!("Player {i:02} with a long enough name").into());
                player.score = Some(i as i32 * 3 - 10);
                player.ping = Some(20 + i as u32);
                player.team = Some((i % 2) as i32);
                player.deaths = Some(i as u32);
                player
            })
            .collect(),
    );
    status.teams = Some(vec![
        {
            let mut team = Team::default();
            team.name = Some("MEC".into());
            team.score = Some(10);
            team
        },
        {
            let mut team = Team::default();
            team.name = Some("US".into());
            team.score = Some(20);
            team
        },
    ]);
    status.rules = Some(Rules(vec![
        ("bf2_ranked".into(), "1".into()),
        ("motd".into(), "hello".into()),
    ]));
    status
}

struct Server {
    r: Responder,
    now: Instant,
    out: Transmits,
}

impl Server {
    fn new(mode: ChallengeMode) -> Self {
        let now = Instant::now();
        let mut config = ResponderConfig::default();
        config.gamespy3.challenge = mode;
        Self {
            r: Responder::new(config, [9; 32], now),
            now,
            out: Transmits::default(),
        }
    }

    fn ask(&mut self, d: &[u8], s: &Status) -> (Outcome, Vec<Vec<u8>>) {
        self.now += Duration::from_millis(100); // stay under the rate limit
        let o = self.r.handle(self.now, SRC, d, s, &mut self.out);
        (o, self.out.iter().map(<[u8]>::to_vec).collect())
    }
}

fn full(challenge: Option<u32>) -> Vec<u8> {
    Request::full(SID, challenge).to_bytes()
}

fn challenge_req() -> Vec<u8> {
    Request::Challenge { session_id: SID }.to_bytes()
}

/// Reassembles reply packets (in the given order) into the status.
fn read(packets: &[Vec<u8>]) -> (Status, usize) {
    let mut r = Reassembler::default();
    for p in packets {
        let d = decode_packet(p).unwrap();
        assert_eq!(d.session_id, SID);
        if let Pushed::Complete { info, packets, .. } = r.push(d, p.len()).unwrap() {
            return (info_to_status(&info), packets);
        }
    }
    panic!("incomplete reply");
}

fn check_status(got: &Status, want: &Status) {
    assert_eq!(got.host_name, want.host_name);
    assert_eq!(
        got.map.as_ref().map(|m| &m.name),
        want.map.as_ref().map(|m| &m.name)
    );
    assert_eq!(got.game_type, want.game_type);
    assert_eq!(got.slot_max, want.slot_max);
    assert_eq!(got.player_count, want.player_count());
    assert_eq!(got.password, want.password);
    assert_eq!(got.connect_port, want.connect_port);
    type Row = (Option<String>, Option<i32>, Option<u32>, Option<i32>);
    let names = |s: &Status| -> Vec<Row> {
        s.players
            .iter()
            .flatten()
            .map(|p| {
                (
                    p.name.as_ref().map(|n| n.to_string()),
                    p.score,
                    p.ping,
                    p.team,
                )
            })
            .collect()
    };
    assert_eq!(names(got), names(want));
    let teams = |s: &Status| -> Vec<(Option<String>, Option<i32>)> {
        s.teams
            .iter()
            .flatten()
            .map(|t| (t.name.as_ref().map(|n| n.to_string()), t.score))
            .collect()
    };
    assert_eq!(teams(got), teams(want));
    assert_eq!(got.rules, want.rules);
}

#[test]
fn bf2_mode_answers_like_battlefield_2() {
    let mut s = Server::new(ChallengeMode::Bf2);
    let st = status(3);
    // 0x09 → 09 <sid> "0" 00, exactly (spec, security.md: BAF 1.0); gamedig's longer form too
    let (_, r) = s.ask(&challenge_req(), &st);
    assert_eq!(r, vec![vec![0x09, 0x10, 0x20, 0x30, 0x40, 0x30, 0x00]]);
    let (_, r) = s.ask(&[&challenge_req()[..], &[0, 0, 0, 0]].concat(), &st);
    assert_eq!(r[0], [0x09, 0x10, 0x20, 0x30, 0x40, 0x30, 0x00]);
    // queries with and without challenge bytes are answered
    for c in [None, Some(0), Some(12345)] {
        let (o, r) = s.ask(&full(c), &st);
        assert!(
            matches!(o, Outcome::Gamespy3(Gs3Outcome::Info { packets: 1, .. })),
            "{o:?}"
        );
        assert_eq!(r.len(), 1);
        assert_eq!(&r[0][..15], b"\x00\x10\x20\x30\x40splitnum\x00\x80");
        check_status(&read(&r).0, &st);
    }
}

#[test]
fn real_mode_requires_the_challenge_it_issued() {
    let mut s = Server::new(ChallengeMode::Real);
    let st = status(3);
    let (_, r) = s.ask(&challenge_req(), &st);
    let Reply::Challenge(c) = decode_reply(&r[0]).unwrap() else {
        panic!("not a challenge reply")
    };
    assert_eq!(c.session_id, SID);
    let value = c.value().unwrap();
    assert!(
        value != 0 && value < 0x8000_0000,
        "31-bit, non-zero: {value}"
    );
    assert!(r[0].len() <= 16, "challenge reply of {} bytes", r[0].len());
    // without, with 0, with a wrong one: silence
    for bad in [None, Some(0), Some(value ^ 1), Some(u32::MAX)] {
        let (o, r) = s.ask(&full(bad), &st);
        assert!(r.is_empty(), "{bad:?} answered");
        assert_eq!(
            o,
            Outcome::Gamespy3(Gs3Outcome::Ignored(Unanswered::bad_challenge(
                "no valid challenge"
            )))
        );
    }
    // big-endian (qstat -gs4, opengsq gamespy4, gamedig) and little-endian (gamedig ut3)
    for c in [value, value.swap_bytes()] {
        let (_, r) = s.ask(&full(Some(c)), &st);
        assert_eq!(r.len(), 1);
        check_status(&read(&r).0, &st);
    }
    // sub-protocols A and C need it too
    for kind in [
        InfoKind::Basic {
            server: true,
            players: true,
            teams: true,
        },
        InfoKind::Keys(vec![1]),
    ] {
        let req = |challenge| {
            Request::Info {
                session_id: SID,
                challenge,
                kind: kind.clone(),
            }
            .to_bytes()
        };
        assert!(s.ask(&req(None), &st).1.is_empty());
        assert_eq!(s.ask(&req(Some(value)), &st).1.len(), 1);
    }
    // the challenge is bound to the IP and survives one rotation, not two
    let other = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)), 1);
    s.now += Duration::from_millis(100);
    assert_eq!(
        s.r.handle(s.now, other, &full(Some(value)), &st, &mut s.out),
        Outcome::Gamespy3(Gs3Outcome::Ignored(Unanswered::bad_challenge(
            "no valid challenge"
        )))
    );
    s.now += Duration::from_secs(301);
    assert_eq!(s.ask(&full(Some(value)), &st).1.len(), 1);
    s.now += Duration::from_secs(301);
    assert!(s.ask(&full(Some(value)), &st).1.is_empty());
}

#[test]
fn unverified_sources_never_get_more_than_16_bytes_in_real_mode() {
    let mut s = Server::new(ChallengeMode::Real);
    let st = status(64);
    let mut probes: Vec<Vec<u8>> = vec![challenge_req(), full(None), full(Some(1))];
    for n in 0..40u8 {
        probes.push([&[0xfe, 0xfd][..], &[n % 10; 1], &vec![0xff; usize::from(n)]].concat());
    }
    for p in probes {
        let (_, r) = s.ask(&p, &st);
        let total: usize = r.iter().map(Vec::len).sum();
        assert!(
            total <= 16.max(p.len()),
            "{} bytes for a {}-byte request",
            total,
            p.len()
        );
    }
}

#[test]
fn big_status_is_split_in_order_within_1400_bytes() {
    let mut s = Server::new(ChallengeMode::Bf2);
    let st = status(64);
    let (o, r) = s.ask(&full(None), &st);
    assert!(r.len() >= 2, "{} packets", r.len());
    assert_eq!(
        o,
        Outcome::Gamespy3(Gs3Outcome::Info {
            packets: r.len(),
            truncated: false
        })
    );
    for (n, p) in r.iter().enumerate() {
        assert!(p.len() <= 1400);
        let last = n + 1 == r.len();
        assert_eq!(p[14], n as u8 | if last { 0x80 } else { 0 });
    }
    let (got, packets) = read(&r);
    assert_eq!(packets, r.len());
    check_status(&got, &st);
    // any order
    let mut rev = r.clone();
    rev.reverse();
    check_status(&read(&rev).0, &st);
}

#[test]
fn oversized_status_loses_rows_not_structure() {
    let mut s = Server::new(ChallengeMode::Bf2);
    let mut st = status(256);
    for p in st.players.iter_mut().flatten() {
        p.name = Some("x".repeat(250).into());
        p.extra.insert("longcolumn".into(), "y".repeat(250).into());
    }
    let (o, r) = s.ask(&full(None), &st);
    let Outcome::Gamespy3(Gs3Outcome::Info { packets, truncated }) = o else {
        panic!("{o:?}")
    };
    assert!(truncated);
    assert!(packets <= 48 && packets == r.len());
    let (got, _) = read(&r);
    let n = got.players.as_ref().map_or(0, Vec::len);
    assert!(n > 0 && n < 256, "{n} players kept");
    assert_eq!(got.host_name, st.host_name);
}

#[test]
fn sub_protocol_a_is_one_packet_with_the_flagged_sections() {
    let mut s = Server::new(ChallengeMode::Bf2);
    let st = status(200);
    let req = Request::Info {
        session_id: SID,
        challenge: None,
        kind: InfoKind::Basic {
            server: true,
            players: false,
            teams: true,
        },
    }
    .to_bytes();
    assert_eq!(req, b"\xfe\xfd\x00\x10\x20\x30\x40\xff\x00\xff\x00");
    let (_, r) = s.ask(&req, &st);
    assert_eq!(r.len(), 1);
    let (got, _) = read(&r);
    assert_eq!(got.host_name, st.host_name);
    assert!(got.players.is_none());
    assert_eq!(got.teams.as_ref().map(Vec::len), Some(2));
    // players asked: one packet, truncated rows
    let req = Request::Info {
        session_id: SID,
        challenge: None,
        kind: InfoKind::Basic {
            server: true,
            players: true,
            teams: true,
        },
    }
    .to_bytes();
    let (o, r) = s.ask(&req, &st);
    assert_eq!(r.len(), 1);
    assert!(r[0].len() <= 1400);
    assert!(matches!(
        o,
        Outcome::Gamespy3(Gs3Outcome::Info {
            packets: 1,
            truncated: true
        })
    ));
    let n = read(&r).0.players.map_or(0, |p| p.len());
    assert!(n > 0 && n < 200);
}

#[test]
fn sub_protocol_c_answers_the_spec_example() {
    let mut s = Server::new(ChallengeMode::Bf2);
    let mut st = status(0);
    st.player_count = Some(84);
    st.host_name = Some("[PR v1.4.17.0] My Server".into());
    // spec: FE FD 00 20 21 21 20 02 08 01 00 00 → numplayers, hostname
    let (o, r) = s.ask(b"\xfe\xfd\x00\x20\x21\x21\x20\x02\x08\x01\x00\x00", &st);
    assert_eq!(o, Outcome::Gamespy3(Gs3Outcome::Keys));
    assert_eq!(
        r,
        vec![b"\x00\x20\x21\x21\x2084\x00[PR v1.4.17.0] My Server\x00".to_vec()]
    );
    match decode_reply(&r[0]).unwrap() {
        Reply::Keys { session_id, values } => {
            assert_eq!(session_id, 0x2021_2120);
            assert_eq!(values, ["84", "[PR v1.4.17.0] My Server"]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn echo_keep_alive_and_garbage() {
    let mut s = Server::new(ChallengeMode::Real);
    let st = status(1);
    let data: Vec<u8> = (0..40).collect();
    let (o, r) = s.ask(&[&[0xfe, 0xfd, 0x02][..], &data].concat(), &st);
    assert_eq!(o, Outcome::Gamespy3(Gs3Outcome::Echo));
    assert_eq!(r, vec![[&[0x05][..], &data[..32]].concat()]);
    let (o, r) = s.ask(b"\xfe\xfd\x08\x01\x02\x03\x04", &st);
    assert_eq!(o, Outcome::Gamespy3(Gs3Outcome::KeepAlive));
    assert!(r.is_empty());
    for g in [
        &b"\xfe\xfd\x00\x01"[..],
        b"\xfe\xfd\x00\x01\x02\x03\x04\x05",
        &[0xfe, 0xfd, 0x09],
        &[0xfe, 0xfd, 0x00, 1, 2, 3, 4, 0xff, 0xff, 0xff, 0x01].repeat(30),
    ] {
        let (_, r) = s.ask(g, &st);
        assert!(r.is_empty(), "{g:x?}");
    }
}

#[test]
fn disabled_gamespy3_is_silent() {
    let now = Instant::now();
    let mut r = Responder::new(
        {
            let mut cfg = ResponderConfig::default();
            cfg.gamespy3.enabled = false;
            cfg.gamespy3.challenge = ChallengeMode::Bf2;
            cfg
        },
        [1; 32],
        now,
    );
    let mut out = Transmits::default();
    r.handle(now, SRC, &full(None), &status(1), &mut out);
    assert!(out.is_empty());
}

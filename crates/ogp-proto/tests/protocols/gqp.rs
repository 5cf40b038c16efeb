//! GQP end to end, sans-IO: the draft's own examples byte for byte, every status code,
//! the abuse limits, ETB blocks, encodings, authentication, and the client machine
//! against the responder in memory.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use ogp_proto::client::{Answer, Event, QueryDriver, QueryError, Rejection, Timing};
use ogp_proto::gqp::client::{Credentials, Details, QueryMachine, QueryMode, QueryOptions, Step};
use ogp_proto::gqp::responder::{GqpConfig, GqpOutcome, GqpResponder, GqpUser};
use ogp_proto::gqp::wire::{self, EOT, ETB};
use ogp_proto::gqp::{
    self, auth, decode_reply, encode_query, Command, Encoding, Query, Record, Reply, StatusCode,
};
use ogp_proto::guard::ChallengeKeys;
use ogp_proto::responder::Transmits;
use ogp_proto::responder::{Incoming, ProtocolResponder};
use ogp_proto::{Player, Protocol, Rules, Status, Text};

const IP: &str = "198.51.100.7";

struct Server {
    r: GqpResponder,
    keys: ChallengeKeys,
    status: Status,
    t0: Instant,
    ip: IpAddr,
}

impl Server {
    fn new(config: GqpConfig, status: Status) -> Self {
        let t0 = Instant::now();
        Self {
            r: GqpResponder::new(config),
            keys: ChallengeKeys::new([5; 16], Duration::from_secs(300), t0),
            status,
            t0,
            ip: IP.parse().unwrap(),
        }
    }

    fn open(status: Status) -> Self {
        Self::new(
            {
                let mut config = GqpConfig::default();
                config.require_proof = false;
                config
            },
            status,
        )
    }

    fn token(&mut self) -> Text {
        auth::issue_token(&mut self.keys, self.t0, self.ip)
    }

    fn send(&mut self, datagram: &[u8]) -> (GqpOutcome, Vec<Vec<u8>>) {
        self.send_from(self.ip, datagram)
    }

    fn send_from(&mut self, ip: IpAddr, datagram: &[u8]) -> (GqpOutcome, Vec<Vec<u8>>) {
        let mut out = Transmits::default();
        let o = self.r.handle(
            Incoming {
                now: self.t0,
                ip,
                datagram,
                reject: false,
            },
            &self.status,
            &mut self.keys,
            &mut out,
        );
        (o, out.iter().map(<[u8]>::to_vec).collect())
    }

    /// Sends `commands` (plain) with a valid token first; returns the replies after the
    /// token's.
    fn proven(&mut self, commands: &[Command]) -> Vec<Reply> {
        let mut c = vec![Command::new("challenge", [self.token()])];
        c.extend_from_slice(commands);
        let mut d = Vec::new();
        encode_query(
            &Query {
                encoding: Encoding::PLAIN,
                commands: c,
            },
            &mut d,
        );
        let (o, out) = self.send(&d);
        assert!(
            matches!(o, GqpOutcome::Answer { proven: true, .. }),
            "{o:?}"
        );
        let mut replies = Vec::new();
        for d in out {
            let dg = decode_reply(&d, 1 << 20).unwrap();
            if !dg.continued.is_empty() {
                let last: &mut Reply = replies.last_mut().unwrap();
                last.records.extend(dg.continued);
            }
            replies.extend(dg.replies);
        }
        let first = replies.remove(0);
        assert_eq!(
            (first.code, first.name.as_str()),
            (StatusCode::OK, "challenge")
        );
        replies
    }
}

fn cmd(line: &str) -> Command {
    Command::parse_line(line).unwrap()
}

fn ut_status() -> Status {
    let mut status = Status::default();
    status.game_name = Some("ut".into());
    status.game_version = Some("432".into());
    status
}

/// Runs a client machine against a server until it is done (no loss); returns the
/// result and the number of datagrams the client sent.
fn run(server: &mut Server, opts: QueryOptions) -> (Result<Answer<Details>, QueryError>, usize) {
    let mut m = QueryMachine::new(opts, Timing::default(), server.t0);
    let mut round_trips = 0;
    let mut now = server.t0;
    for _ in 0..40 {
        if m.is_done() {
            break;
        }
        match m.poll_transmit(now) {
            Some(q) => {
                round_trips += 1;
                let (_, out) = server.send(&q);
                for d in out {
                    m.handle_datagram(now + Duration::from_millis(2), &d);
                }
            }
            None => {
                now = m.poll_timeout().unwrap();
                m.handle_timeout(now);
            }
        }
    }
    (m.take_result().expect("done"), round_trips)
}

// =======================================================================================
// The draft's examples, byte for byte

#[test]
fn draft_example_identify() {
    // "identify" <EOT>
    let mut q = Vec::new();
    encode_query(
        &Query {
            encoding: Encoding::PLAIN,
            commands: vec![cmd("identify")],
        },
        &mut q,
    );
    assert_eq!(q, b"identify\x04");
    // 10 "identify" <RS> "gamename" <US> "ut" <RS> "gamever" <US> "432" <RS> "netver"
    // <US> "432" <EOT>, with the DC2 of the grammar's name = value records (the example
    // is "adapted to a more readable format")
    let mut s = Server::open(ut_status());
    let (o, out) = s.send(&q);
    assert_eq!(
        o,
        GqpOutcome::Answer {
            datagrams: 1,
            commands: 1,
            proven: false
        }
    );
    assert_eq!(
        out,
        vec![
            b"10identify\x1e\x12gamename\x1fut\x1e\x12gamever\x1f432\x1e\x12netver\x1f432\x04"
                .to_vec()
        ]
    );
}

#[test]
fn draft_example_unknown_command() {
    // "unknown command" <EOT>  →  20 "unknown command" <RS> <STX> "error: unknown command" <EOT>
    let mut s = Server::open(Status::default());
    let (_, out) = s.send(b"unknown command\x04");
    assert_eq!(
        out,
        vec![b"20unknown command\x1e\x02error: unknown command\x04".to_vec()]
    );
    let d = decode_reply(&out[0], 1000).unwrap();
    assert_eq!(
        d.replies,
        vec![Reply::error(
            StatusCode::UNKNOWN_COMMAND,
            "unknown command",
            None
        )]
    );
    assert_eq!(d.replies[0].message(), Some("error: unknown command"));
}

#[test]
fn draft_example_empty_reply() {
    // 20 <RS> <ACK> <EOT>: the reply to an empty command
    let d = decode_reply(b"20\x1e\x06\x04", 100).unwrap();
    let empty = Reply {
        code: StatusCode::UNKNOWN_COMMAND,
        name: Text::default(),
        records: vec![],
    };
    assert_eq!(d.replies, vec![empty.clone()]);
    let mut b = Vec::new();
    wire::encode_reply(Encoding::PLAIN, &[], &[empty], true, &mut b);
    assert_eq!(b, b"20\x1e\x06\x04");
    let mut s = Server::open(ut_status());
    let (_, out) = s.send(b"echo\x1d\x04");
    assert_eq!(out, vec![b"10echo\x1e\x06\x1d20\x1e\x06\x04".to_vec()]);
}

#[test]
fn draft_example_two_echoes() {
    // "echo" <RS> "this text" <GS> "echo" <RS> "more text" <EOT>
    let query = Query {
        encoding: Encoding::PLAIN,
        commands: vec![
            Command::new("echo", ["this text"]),
            Command::new("echo", ["more text"]),
        ],
    };
    let mut q = Vec::new();
    encode_query(&query, &mut q);
    assert_eq!(q, b"echo\x1ethis text\x1decho\x1emore text\x04");
    // 10 "echo" <RS> <STX> "this text" <GS> 10 "echo" <RS> <STX> "more text" <EOT>
    let mut s = Server::open(Status::default());
    let (_, out) = s.send(&q);
    assert_eq!(
        out,
        vec![b"10echo\x1e\x02this text\x1d10echo\x1e\x02more text\x04".to_vec()]
    );
}

// =======================================================================================
// Every status code

fn code_of(replies: &[Reply], name: &str) -> StatusCode {
    replies.iter().find(|r| r.name == name).unwrap().code
}

#[test]
fn every_command_status_code_is_produced() {
    let mut config = GqpConfig::default();
    config.disabled = vec!["echo".into()];
    config.protected = vec!["rules".into()];
    let mut status = ut_status();
    status.rules = Some(Rules::from_iter([("a", "b")]));
    let mut s = Server::new(config, status);
    let r = s.proven(&[
        cmd("identify"),      // 10
        cmd("frobnicate"),    // 20
        cmd("login alice"),   // 21: no users configured
        cmd("identify x"),    // 22
        cmd("challenge xyz"), // 23
        cmd("echo hi"),       // 30
        cmd("players"),       // 31: the status has no player list
        cmd("rules"),         // 32: protected
    ]);
    let codes: Vec<u8> = r.iter().map(|r| r.code.0).collect();
    assert_eq!(codes, [10, 20, 21, 22, 23, 30, 31, 32]);
    for reply in &r[1..] {
        assert!(reply.message().unwrap().starts_with("error: "), "{reply:?}");
    }
    assert_eq!(
        r[6].message(),
        Some("error: temporarily unavailable: not reported by this server")
    );
}

#[test]
fn query_level_codes_40_and_41() {
    let mut s = Server::new(GqpConfig::default(), Status::default());
    // 40: unknown encoding, message when it fits the query size
    let q = b"\x01bzip2+utf-8\x06identify\x1eaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\x04";
    let (o, out) = s.send(q);
    assert_eq!(o, GqpOutcome::QueryError(StatusCode::UNSUPPORTED_ENCODING));
    let d = decode_reply(&out[0], 1000).unwrap();
    assert_eq!(d.replies[0].code, StatusCode::UNSUPPORTED_ENCODING);
    assert_eq!(
        d.replies[0].message(),
        Some("error: unsupported encoding: bzip2+utf-8")
    );
    assert!(out[0].len() <= q.len());
    // short query: the bare form
    let (o, out) = s.send(b"\x01UNICODE\x06x\x04");
    assert_eq!(o, GqpOutcome::QueryError(StatusCode::UNSUPPORTED_ENCODING));
    assert_eq!(out, vec![b"40\x1e\x06\x04".to_vec()]);
    // 41: a raw control byte in a string, a bad escape, invalid UTF-8, bad deflate data
    for bad in [
        &b"iden\x07tify\x04"[..],
        b"echo\x1ea\x10\x01b\x04",
        b"\x01utf-8\x06echo\x1e\xff\xfe\x04",
        b"\x01deflate\x06\x00\x05\x00\xfa\xffabcd\x04",
        b"\x01gzip\x06\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x04",
        b"echo\x1ea\x1fb\x04",
    ] {
        let (o, out) = s.send(bad);
        assert_eq!(
            o,
            GqpOutcome::QueryError(StatusCode::DECODE_ERROR),
            "{bad:?}"
        );
        assert_eq!(out.len(), 1);
        assert!(out[0].len() <= bad.len(), "{bad:?}");
        assert_eq!(
            decode_reply(&out[0], 1000).unwrap().replies[0].code,
            StatusCode::DECODE_ERROR
        );
    }
    // with room for it, the message names the field and offset
    let mut open = Server::open(Status::default());
    let (_, out) = open.send(b"iden\x07tify\x04");
    assert_eq!(
        decode_reply(&out[0], 1000).unwrap().replies[0].message(),
        Some("error: decode error: command at byte 4: unexpected control byte")
    );
}

#[test]
fn too_many_commands_and_oversized_decompression_are_41() {
    let mut s = Server::open(Status::default());
    let many = vec![cmd("identify"); 33];
    let mut d = Vec::new();
    encode_query(
        &Query {
            encoding: Encoding::PLAIN,
            commands: many,
        },
        &mut d,
    );
    assert_eq!(
        s.send(&d).0,
        GqpOutcome::QueryError(StatusCode::DECODE_ERROR)
    );
    let bomb = Query {
        encoding: Encoding::parse("deflate").unwrap(),
        commands: vec![Command::new("echo", ["x".repeat(100_000)])],
    };
    let mut d = Vec::new();
    encode_query(&bomb, &mut d);
    assert!(d.len() < 1024);
    assert_eq!(
        s.send(&d).0,
        GqpOutcome::QueryError(StatusCode::DECODE_ERROR)
    );
}

// =======================================================================================
// Silence

#[test]
fn garbage_oversized_and_missing_eot_get_silence() {
    let mut s = Server::new(GqpConfig::default(), ut_status());
    for d in [
        &b"identify"[..],
        b"identify\x17",
        b"\xff\xff\xff\xffOGP\x00\x04",
        b"\x04",
        b"",
        b"\x1didentify\x04",
    ] {
        let (o, out) = s.send(d);
        assert!(matches!(o, GqpOutcome::Ignored(_)), "{d:?}: {o:?}");
        assert!(out.is_empty());
    }
    let mut big = vec![b'a'; 1100];
    big.push(EOT);
    assert!(matches!(s.send(&big).0, GqpOutcome::Ignored(_)));
    // switched off
    let mut off = Server::new(
        {
            let mut config = GqpConfig::default();
            config.enabled = false;
            config
        },
        ut_status(),
    );
    assert!(matches!(off.send(b"echo\x04").0, GqpOutcome::Ignored(_)));
    // banned: silence (GQP has no banned reply)
    let mut out = Transmits::default();
    let o = s.r.handle(
        Incoming {
            now: s.t0,
            ip: s.ip,
            datagram: b"echo\x1ea\x04",
            reject: true,
        },
        &s.status,
        &mut s.keys,
        &mut out,
    );
    assert!(matches!(o, GqpOutcome::Ignored(_)) && out.is_empty());
}

// =======================================================================================
// Address proof and amplification

#[test]
fn unproven_sources_never_get_more_than_they_sent() {
    let mut s = Server::new(GqpConfig::default(), ut_status());
    // small enough reply: answered as it is
    let q = b"frobnicate\x1eaaaaaaaaaaaaaaaaaaaaaaaaaa\x04";
    let (o, out) = s.send(q);
    assert!(matches!(o, GqpOutcome::Answer { proven: false, .. }));
    assert_eq!(
        out,
        vec![b"20frobnicate\x1e\x02error: unknown command\x04".to_vec()]
    );
    assert!(out[0].len() <= q.len());
    // an echo is always longer than its query (code and STX): never to unproven sources
    let (o, out) = s.send(b"echo\x1eabc\x04");
    assert!(matches!(o, GqpOutcome::Ignored(_)) && out.is_empty());
    // too large: the token instead, if it fits
    let q = b"identify\x1dserverinfo\x1dplayers\x04";
    let (o, out) = s.send(q);
    assert_eq!(o, GqpOutcome::ProofRequired);
    let tok = s.token();
    let mut expected = b"32challenge\x1e\x11".to_vec();
    expected.extend_from_slice(tok.as_bytes());
    expected.push(EOT);
    assert_eq!(out, vec![expected.clone()]);
    assert_eq!(expected.len(), 22);
    // even the token does not fit: silence
    let (o, out) = s.send(b"identify\x04");
    assert!(matches!(o, GqpOutcome::Ignored(_)) && out.is_empty());
    // the token proves the address of its IP only
    let mut d = b"challenge\x1e".to_vec();
    d.extend_from_slice(tok.as_bytes());
    d.extend_from_slice(b"\x1didentify\x04");
    let (o, out) = s.send(&d);
    assert!(matches!(o, GqpOutcome::Answer { proven: true, .. }));
    assert!(out[0].len() > d.len());
    let (o, _) = s.send_from("198.51.100.8".parse().unwrap(), &d);
    assert_eq!(o, GqpOutcome::ProofRequired);
    // an expired token: a fresh one with 32
    let later = s.t0 + Duration::from_secs(700);
    let mut out = Transmits::default();
    let o = s.r.handle(
        Incoming {
            now: later,
            ip: s.ip,
            datagram: &d,
            reject: false,
        },
        &s.status,
        &mut s.keys,
        &mut out,
    );
    assert_eq!(o, GqpOutcome::ProofRequired);
    // the padded probe the client sends gets its token (10)
    let (o, out) = s.send(b"challenge\x1e0000000000000\x04");
    assert!(matches!(o, GqpOutcome::Answer { proven: false, .. }));
    let r = &decode_reply(&out[0], 100).unwrap().replies[0];
    assert_eq!(r.code, StatusCode::OK);
    assert_eq!(r.records, vec![Record::String(tok.clone())]);
    // a proven query with a wrong token elsewhere: still proven, that command says 32
    let mut s2 = Server::new(GqpConfig::default(), ut_status());
    let r = s2.proven(&[cmd("challenge 12345678")]);
    assert_eq!(r[0].code, StatusCode::UNAUTHORISED);
    assert!(matches!(r[0].records.as_slice(), [Record::String(t)] if t.len() == 8));
}

#[test]
fn disabling_challenge_disables_proofs() {
    let mut s = Server::new(
        {
            let mut config = GqpConfig::default();
            config.disabled = vec!["challenge".into()];
            config
        },
        ut_status(),
    );
    let tok = s.token();
    let mut d = b"challenge\x1e".to_vec();
    d.extend_from_slice(tok.as_bytes());
    d.extend_from_slice(b"\x1didentify\x04");
    let (o, out) = s.send(&d);
    assert!(matches!(o, GqpOutcome::Ignored(_)) && out.is_empty());
}

// =======================================================================================
// Authentication

fn auth_config() -> GqpConfig {
    let mut config = GqpConfig::default();
    config.protected = vec!["rules".into(), "players".into()];
    config.users = vec![GqpUser::new("admin", "hunter2")];
    config
}

fn rules_status() -> Status {
    let mut status = ut_status();
    status.rules = Some(Rules::from_iter([("sv_cheats", "0")]));
    status.players = Some(vec![Player::named("A")]);
    status
}

#[test]
fn validate_then_protected_command_in_one_datagram() {
    let mut s = Server::new(auth_config(), rules_status());
    let r = s.proven(&[cmd("login admin")]);
    assert_eq!(r[0].code, StatusCode::OK);
    let Record::String(challenge) = &r[0].records[0] else {
        panic!()
    };
    assert_eq!(challenge.len(), 16);
    let mac = auth::login_response("hunter2", challenge);
    // before validate: 32; after it: answered; the password is nowhere on the wire
    let r = s.proven(&[
        cmd("rules"),
        Command::new("validate", ["admin".into(), mac.clone()]),
        cmd("rules"),
    ]);
    assert_eq!(r[0].code, StatusCode::UNAUTHORISED);
    assert_eq!(r[0].message(), Some("error: unauthorised: validate first"));
    assert_eq!(r[1], Reply::ok("validate", vec![]));
    assert_eq!(
        r[2].records,
        vec![Record::Pair("sv_cheats".into(), "0".into())]
    );
    // wrong password, other user, bad hex, plain password, wrong argument count
    let bad = auth::login_response("hunter3", challenge);
    let r = s.proven(&[
        Command::new("validate", ["admin".into(), bad]),
        Command::new("validate", ["root".into(), mac.clone()]),
        Command::new("validate", ["admin", "xyz"]),
        Command::new("login", ["admin", "hunter2"]),
        Command::new("validate", ["admin"]),
        Command::new("login", Vec::<Text>::new()),
        cmd("rules"),
    ]);
    let codes: Vec<u8> = r.iter().map(|r| r.code.0).collect();
    assert_eq!(codes, [32, 32, 23, 21, 22, 22, 32]);
    // the same MAC from another address fails
    let mut d = Vec::new();
    let other: IpAddr = "203.0.113.1".parse().unwrap();
    encode_query(
        &Query {
            encoding: Encoding::PLAIN,
            commands: vec![
                Command::new("challenge", [auth::issue_token(&mut s.keys, s.t0, other)]),
                Command::new("validate", ["admin".into(), mac]),
            ],
        },
        &mut d,
    );
    let (_, out) = s.send_from(other, &d);
    let replies = decode_reply(&out[0], 1000).unwrap().replies;
    assert_eq!(replies[1].code, StatusCode::UNAUTHORISED);
}

#[test]
fn client_authenticates_and_reads_protected_sections() {
    let mut s = Server::new(auth_config(), rules_status());
    let mut opts = QueryOptions::default();
    opts.credentials = Some(Credentials::new("admin", "hunter2"));
    let (r, trips) = run(&mut s, opts.clone());
    let o = r.unwrap();
    assert!(o.details.authenticated);
    assert_eq!(trips, 3, "probe, login, main");
    assert_eq!(o.status.rules, s.status.rules);
    assert_eq!(o.status.players, s.status.players);
    // with the token kept, two round trips
    let (r, trips) = run(&mut s, {
        let mut opts2 = opts.clone();
        opts2.token = o.details.token.clone();
        opts2
    });
    assert!(r.unwrap().details.authenticated);
    assert_eq!(trips, 2);
    // wrong password: AuthFailed (after one fresh login)
    let (r, _) = run(&mut s, {
        let mut opts = QueryOptions::default();
        opts.credentials = Some(Credentials::new("admin", "nope"));
        opts
    });
    assert_eq!(
        r.unwrap_err(),
        QueryError::Rejected {
            protocol: Protocol::Gqp,
            reason: Rejection::AuthFailed
        }
    );
    // no credentials: the protected sections stay out, their 32 replies are there
    let (r, _) = run(&mut s, QueryOptions::default());
    let o = r.unwrap();
    assert!(o.status.rules.is_none() && o.status.players.is_none());
    assert_eq!(
        code_of(&o.details.replies, "rules"),
        StatusCode::UNAUTHORISED
    );
    assert_eq!(o.status.game_name.as_deref(), Some("ut"));
    // a server without users
    let mut plain = Server::new(GqpConfig::default(), rules_status());
    let (r, _) = run(&mut plain, opts);
    assert_eq!(
        r.unwrap_err(),
        QueryError::Rejected {
            protocol: Protocol::Gqp,
            reason: Rejection::AuthUnsupported {
                code: u32::from(StatusCode::UNSUPPORTED_FEATURE.0)
            }
        }
    );
}

// =======================================================================================
// Client ↔ responder

fn big_status(players: usize) -> Status {
    let mut status = ut_status();
    status.host_name = Some("Big \u{1}server ✓".into());
    status.players = Some(
        (0..players)
            .map(|i| {
                let mut p = Player::default();
                p.name = Some(format!("player number {i} ✓").into());
                p.score = Some(i as i32 * 7 - 100);
                p.ping = Some(i as u32);
                p
            })
            .collect(),
    );
    status.rules = Some(Rules::from_iter(
        (0..50).map(|i| (format!("rule{i}"), "x".repeat(i))),
    ));
    status
}

#[test]
fn large_replies_are_split_into_etb_blocks_and_reassembled() {
    for enc in ["utf-8", "deflate+utf-8", "gzip+utf-8"] {
        let mut s = Server::new(GqpConfig::default(), big_status(300));
        let mut opts = QueryOptions::default();
        opts.encoding = Encoding::parse(enc).unwrap();
        // look at the blocks
        let r = {
            let mut d = Vec::new();
            encode_query(
                &Query {
                    encoding: opts.encoding,
                    commands: vec![
                        Command::new("challenge", [s.token()]),
                        cmd("players"),
                        cmd("rules"),
                    ],
                },
                &mut d,
            );
            s.send(&d)
        };
        let (GqpOutcome::Answer { datagrams, .. }, out) = r else {
            panic!("{r:?}")
        };
        assert!(datagrams > 1, "{enc}: {datagrams}");
        assert_eq!(out.len(), datagrams);
        for (i, d) in out.iter().enumerate() {
            assert!(d.len() <= 1400, "{enc}: block {i} is {} bytes", d.len());
            let last = *d.last().unwrap();
            assert_eq!(last, if i + 1 == out.len() { EOT } else { ETB });
        }
        if enc == "utf-8" {
            assert!(out.len() >= 10, "{}", out.len());
        }
        let (r, _) = run(&mut s, opts);
        let o = r.unwrap();
        assert_eq!(o.status.players, s.status.players, "{enc}");
        assert_eq!(o.status.rules, s.status.rules);
        assert_eq!(o.status.host_name, s.status.host_name);
        assert!(o.datagrams > 1);
    }
}

#[test]
fn replies_over_the_caps_become_31() {
    let mut s = Server::new(
        {
            let mut config = GqpConfig::default();
            config.max_datagrams = 2;
            config.max_query_bytes = 2048;
            config
        },
        big_status(300),
    );
    let r = s.proven(&[
        cmd("players"),
        cmd("identify"),
        Command::new("echo", ["x".repeat(1400)]),
    ]);
    assert_eq!(r[0].code, StatusCode::UNAVAILABLE);
    assert_eq!(
        r[0].message(),
        Some("error: temporarily unavailable: reply too large")
    );
    assert_eq!(r[1].code, StatusCode::OK);
    assert_eq!(r[2].code, StatusCode::UNAVAILABLE);
}

#[test]
fn a_command_name_too_long_for_a_block_still_gets_its_31() {
    // Found by the responder fuzz target: deflate lets a 1024-byte query carry a
    // 4 KiB command name, whose echo fits neither its own reply nor the 31; the reply was
    // left out, so the client never saw one reply per command.
    let mut s = Server::new(GqpConfig::default(), ut_status());
    let query = Query {
        encoding: Encoding::parse("deflate").unwrap(),
        commands: vec![
            Command::new("challenge", [s.token()]),
            Command::new("x".repeat(3000), Vec::<Text>::new()),
            cmd("identify"),
        ],
    };
    let mut d = Vec::new();
    encode_query(&query, &mut d);
    assert!(d.len() < 100);
    let (o, out) = s.send(&d);
    assert_eq!(
        o,
        GqpOutcome::Answer {
            datagrams: 1,
            commands: 3,
            proven: true
        }
    );
    let replies = decode_reply(&out[0], 1 << 16).unwrap().replies;
    let codes: Vec<_> = replies.iter().map(|r| r.code).collect();
    assert_eq!(
        codes,
        [StatusCode::OK, StatusCode::UNAVAILABLE, StatusCode::OK]
    );
    assert_eq!(replies[1].name, "");
}

#[test]
fn raw_mode_returns_the_records() {
    let mut s = Server::new(GqpConfig::default(), ut_status());
    let mut opts = QueryOptions::default();
    opts.mode = QueryMode::Raw(Command::parse_lines("echo a b; extensions; nope"));
    opts.encoding = Encoding::PLAIN;
    let (r, trips) = run(&mut s, opts);
    let o = r.unwrap();
    assert_eq!(trips, 2);
    assert_eq!(
        o.details.replies[0],
        Reply::ok(
            "echo",
            vec![Record::Text("a".into()), Record::Text("b".into())]
        )
    );
    assert_eq!(
        o.details.replies[1].records[0],
        Record::Labelled(
            "commands".into(),
            [
                "challenge",
                "serverinfo",
                "players",
                "teams",
                "rules",
                "addons",
                "limits"
            ]
            .map(Text::from)
            .to_vec()
        )
    );
    assert_eq!(o.details.replies[2].code, StatusCode::UNKNOWN_COMMAND);
    let text = gqp::render_replies(&o.details.replies);
    assert!(
        text.starts_with("10 echo\n  a\n  b\n10 extensions\n  commands: [challenge"),
        "{text}"
    );
    assert!(
        text.ends_with("20 nope (unknown command)\n  error: unknown command\n"),
        "{text}"
    );
    assert!(o.events.iter().any(|e| matches!(
        e,
        Event::Challenge {
            challenge: None,
            ..
        }
    )));
}

#[test]
fn client_against_a_server_without_tokens() {
    // require_proof off and challenge disabled: the probe gets 30, the client goes on
    // without tokens
    let mut s = Server::new(
        {
            let mut config = GqpConfig::default();
            config.require_proof = false;
            config.disabled = vec!["challenge".into()];
            config
        },
        ut_status(),
    );
    let (r, trips) = run(&mut s, QueryOptions::default());
    assert_eq!(r.unwrap().status.game_version.as_deref(), Some("432"));
    assert_eq!(trips, 2);
}

#[test]
fn client_rejects_an_unsupported_encoding_and_times_out_on_silence() {
    let t0 = Instant::now();
    let mut m = QueryMachine::new(
        {
            let mut opts = QueryOptions::default();
            opts.token = Some("01234567".into());
            opts
        },
        Timing::default(),
        t0,
    );
    assert_eq!(m.step(), Step::Main);
    m.poll_transmit(t0).unwrap();
    m.handle_datagram(t0, b"40\x1e\x02error: unsupported encoding: utf-8\x04");
    assert_eq!(
        m.take_result().unwrap().unwrap_err(),
        QueryError::Rejected {
            protocol: Protocol::Gqp,
            reason: Rejection::Error {
                code: u32::from(StatusCode::UNSUPPORTED_ENCODING.0),
                meaning: "error: unsupported encoding: utf-8".into()
            }
        }
    );
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
    let mut now = t0;
    let mut sent = 0;
    while !m.is_done() {
        if m.poll_transmit(now).is_some() {
            sent += 1;
        }
        now = m.poll_timeout().unwrap_or(now);
        m.handle_timeout(now);
    }
    assert_eq!(sent, 3);
    assert_eq!(
        m.take_result(),
        Some(Err(QueryError::NoAnswer {
            protocol: Protocol::Gqp,
            step: None,
            attempts: 3
        }))
    );
}

#[test]
fn client_survives_hostile_replies() {
    let t0 = Instant::now();
    let mut m = QueryMachine::new(
        {
            let mut opts = QueryOptions::default();
            opts.token = Some("01234567".into());
            opts
        },
        Timing::default().retries(0),
        t0,
    );
    m.poll_transmit(t0).unwrap();
    // endless fresh tokens end in a challenge loop
    for i in 0..10 {
        let d = format!("32challenge\x1e\x11{i:08x}\x04");
        m.handle_datagram(t0, d.as_bytes());
        m.poll_transmit(t0);
    }
    assert_eq!(
        m.take_result().unwrap().unwrap_err(),
        QueryError::Rejected {
            protocol: Protocol::Gqp,
            reason: Rejection::ChallengeLoop
        }
    );
    // garbage, then a timeout, reports the garbage; many ETB blocks are bounded
    let mut m = QueryMachine::new(
        {
            let mut opts = QueryOptions::default();
            opts.token = Some("01234567".into());
            opts
        },
        Timing::default().retries(0),
        t0,
    );
    m.poll_transmit(t0).unwrap();
    for i in 0..1000 {
        let d = format!("10echo\x1e\x02{i}\x17");
        m.handle_datagram(t0, d.as_bytes());
    }
    m.handle_datagram(t0, b"10echo\x1e\x13\x10\x01\x04");
    m.handle_timeout(t0 + Duration::from_secs(2));
    assert!(matches!(
        m.take_result(),
        Some(Err(QueryError::Malformed {
            protocol: Protocol::Gqp,
            ..
        }))
    ));
}

#[test]
fn continuation_blocks_decode_and_render() {
    let d = decode_reply(b"\x1e\x11more\x1d10x\x1e\x06\x04", 100).unwrap();
    assert_eq!(d.continued, vec![Record::String("more".into())]);
    assert_eq!(d.replies, vec![Reply::ok("x", vec![])]);
    assert!(d.last);
}

#[test]
fn stale_datagrams_of_an_earlier_step_do_not_spoil_the_reply() {
    let mut s = Server::new(GqpConfig::default(), ut_status());
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), s.t0);
    let probe = m.poll_transmit(s.t0).unwrap();
    let (_, probe_reply) = s.send(&probe);
    m.handle_datagram(s.t0, &probe_reply[0]);
    let main = m.poll_transmit(s.t0).unwrap();
    assert_eq!(m.step(), Step::Main);
    // the probe's answer arrives again (a duplicate on the path), then the real reply
    m.handle_datagram(s.t0, &probe_reply[0]);
    assert!(!m.is_done());
    let (_, out) = s.send(&main);
    for d in &out {
        m.handle_datagram(s.t0, d);
    }
    let o = m.take_result().unwrap().unwrap();
    assert_eq!(o.status.game_name.as_deref(), Some("ut"));
}

#[test]
fn compressed_replies_are_held_at_their_decompressed_size() {
    // Found by the client_machines fuzz target: the cap on held replies counted wire
    // bytes, so 64 deflate datagrams of ~300 bytes could each inflate to max_reply_bytes
    // of records (hundreds of MB held for one query).
    let t0 = Instant::now();
    let encoding = Encoding::parse("deflate").unwrap();
    let mut opts = QueryOptions::default();
    opts.mode = QueryMode::Raw(vec![cmd("echo")]);
    opts.encoding = encoding;
    opts.token = Some("0badcafe".into());
    opts.max_reply_bytes = 4096;
    let reply = |n: usize| {
        let text = vec![Record::Text("a".repeat(n).into())];
        let mut a = Vec::new();
        wire::encode_reply(
            encoding,
            &[],
            &[
                Reply::ok("challenge", vec![]),
                Reply::ok("echo", text.clone()),
            ],
            false,
            &mut a,
        );
        let mut b = Vec::new();
        wire::encode_reply(encoding, &text, &[], true, &mut b);
        (a, b)
    };
    // 2 × 3000 bytes after decompression, in under 100 bytes: over the 4096-byte cap
    let (a, b) = reply(3000);
    assert!(a.len() + b.len() < 100, "{} + {}", a.len(), b.len());
    let mut m = QueryMachine::new(opts.clone(), Timing::default(), t0);
    m.poll_transmit(t0).unwrap();
    m.handle_datagram(t0, &a);
    m.handle_datagram(t0, &b);
    assert!(!m.is_done());
    // within the cap the same replies are taken; bytes counts wire bytes
    let (a, b) = reply(1000);
    let mut m = QueryMachine::new(opts, Timing::default(), t0);
    m.poll_transmit(t0).unwrap();
    m.handle_datagram(t0, &a);
    m.handle_datagram(t0, &b);
    let o = m.take_result().unwrap().unwrap();
    assert_eq!(o.details.replies[0].records.len(), 2);
    assert_eq!((o.datagrams, o.bytes), (2, a.len() + b.len()));
}

//! The Minecraft client machine on the stream core, driven by hand (no I/O): the whole
//! exchange, chunking independence, and every hostile server of issue 31 (slow drip,
//! endless VarInt, a 2 GB length, a never-ending JSON, never closing), each ending with
//! a clear error in bounded time and memory.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ogp_proto::client::{QueryDriver, QueryError, StreamEvent, Timing, Transport};
use ogp_proto::minecraft::client::{QueryMachine, QueryOptions};
use ogp_proto::minecraft::wire::{
    encode_legacy, encode_ping, encode_status, read_varint, read_varlong, write_varint,
    write_varlong, LegacyReply, MAX_STATUS_FRAME,
};
use ogp_proto::Protocol;
use proptest::prelude::*;

const NPM: &str = r#"{"version":{"name":"1.20.1","protocol":763},"players":{"max":50,"online":0,"sample":[]},"description":{"text":"§aA §lreal§r test server"}}"#;

fn peer() -> SocketAddr {
    "127.0.0.1:25565".parse().unwrap()
}

fn machine(opts: QueryOptions, now: Instant) -> QueryMachine {
    QueryMachine::new(opts, Timing::default(), 0x1234_5678, now)
}

/// Connects `m` and returns what it writes.
fn connect(m: &mut QueryMachine, now: Instant) -> Vec<u8> {
    assert_eq!(m.transport(), Transport::Stream);
    assert_eq!(
        m.poll_transmit(now),
        None,
        "nothing is written before the connection"
    );
    m.handle_stream(now, StreamEvent::Connected(peer()));
    m.poll_transmit(now)
        .expect("the handshake is due once connected")
}

/// The pong our ping asks for (the ping is the last thing written).
fn pong_for(ping: &[u8]) -> Vec<u8> {
    assert_eq!(&ping[..2], &[0x09, 0x01]);
    let payload = i64::from_be_bytes(ping[2..10].try_into().unwrap());
    let mut out = Vec::new();
    encode_ping(&mut out, payload);
    out
}

#[test]
fn handshake_status_ping_pong() {
    let t0 = Instant::now();
    let mut m = machine(QueryOptions::default(), t0);
    let hs = connect(&mut m, t0);
    // Handshake: id 0, protocol -1 (5 bytes), "127.0.0.1", port 25565, next state 1;
    // then the status request.
    let mut want = vec![0x13, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x09];
    want.extend_from_slice(b"127.0.0.1");
    want.extend_from_slice(&[0x63, 0xdd, 0x01, 0x01, 0x00]);
    assert_eq!(hs, want);
    let mut reply = Vec::new();
    encode_status(&mut reply, NPM);
    let t1 = t0 + Duration::from_millis(20);
    m.handle_stream(t1, StreamEvent::Received(&reply));
    let ping = m.poll_transmit(t1).expect("a ping after the status");
    assert!(m.take_result().is_none(), "waits for the pong");
    let t2 = t1 + Duration::from_millis(7);
    m.handle_stream(t2, StreamEvent::Received(&pong_for(&ping)));
    let a = m.take_result().unwrap().unwrap();
    assert!(m.close_due());
    assert_eq!(a.protocol, Protocol::Minecraft);
    assert!(
        (a.ping_ms - 7.0).abs() < 0.01,
        "the pong's round trip: {}",
        a.ping_ms
    );
    assert!(a.details.pong);
    assert_eq!(a.details.json.as_deref(), Some(NPM));
    assert_eq!(a.status.host_name.as_deref(), Some("A real test server"));
    assert_eq!(a.status.slot_max, Some(50));
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
}

#[test]
fn a_lone_surrogate_is_read_as_u_fffd_not_refused_whole() {
    let t0 = Instant::now();
    let mut m = machine(QueryOptions::default(), t0);
    connect(&mut m, t0);
    let json = NPM.replace("test server", r"test\ud800 server");
    let mut reply = Vec::new();
    encode_status(&mut reply, &json);
    m.handle_stream(t0, StreamEvent::Received(&reply));
    m.handle_stream(t0, StreamEvent::Closed);
    let a = m.take_result().unwrap().expect("the status is read");
    assert_eq!(
        a.status.host_name.as_deref(),
        Some("A real test\u{fffd} server")
    );
    assert_eq!(a.status.slot_max, Some(50));
    assert!(
        a.warnings
            .iter()
            .any(|w| w == "1 lone UTF-16 surrogate in the status JSON read as U+FFFD"),
        "{:?}",
        a.warnings
    );
    // The JSON as sent is kept as sent.
    assert_eq!(a.details.json.as_deref(), Some(json.as_str()));
}

#[test]
fn the_host_name_given_goes_in_the_handshake() {
    let t0 = Instant::now();
    let mut o = QueryOptions::default();
    o.host = Some("mc.example.org".into());
    o.port = Some(25566);
    o.protocol_version = 763;
    let hs = connect(&mut machine(o, t0), t0);
    assert_eq!(&hs[2..5], &[0xfb, 0x05, 14]);
    assert_eq!(&hs[5..19], b"mc.example.org");
    assert_eq!(&hs[19..21], &25566u16.to_be_bytes());
}

#[test]
fn a_close_without_pong_still_gives_the_status() {
    let t0 = Instant::now();
    let mut m = machine(QueryOptions::default(), t0);
    connect(&mut m, t0);
    let mut reply = Vec::new();
    encode_status(&mut reply, NPM);
    m.handle_stream(t0, StreamEvent::Received(&reply));
    m.handle_stream(t0, StreamEvent::Closed);
    let a = m.take_result().unwrap().unwrap();
    assert!(!a.details.pong);
    assert_eq!(a.status.game_version.as_deref(), Some("1.20.1"));
    assert!(a.warnings[0].contains("without a pong"), "{:?}", a.warnings);
}

#[test]
fn a_server_that_never_pongs_nor_closes_gives_the_status_at_the_read_timeout() {
    let t0 = Instant::now();
    let mut m = machine(QueryOptions::default(), t0);
    connect(&mut m, t0);
    let mut reply = Vec::new();
    encode_status(&mut reply, NPM);
    m.handle_stream(t0, StreamEvent::Received(&reply));
    let _ping = m.poll_transmit(t0).unwrap();
    let due = m.poll_timeout().unwrap();
    assert_eq!(due - t0, Timing::default().read_timeout);
    m.handle_timeout(due);
    let a = m.take_result().unwrap().unwrap();
    assert!(a.warnings[0].contains("no pong"), "{:?}", a.warnings);
}

fn fail_with(m: &mut QueryMachine) -> QueryError {
    m.take_result().expect("finished").expect_err("failed")
}

#[test]
fn an_endless_varint_is_malformed_after_five_bytes() {
    let t0 = Instant::now();
    let mut m = machine(QueryOptions::default(), t0);
    connect(&mut m, t0);
    for _ in 0..4 {
        m.handle_stream(t0, StreamEvent::Received(&[0x80]));
        assert!(
            m.take_result().is_none(),
            "four bytes may still be a VarInt"
        );
    }
    m.handle_stream(t0, StreamEvent::Received(&[0x80]));
    let e = fail_with(&mut m);
    assert_eq!(e.kind(), "malformed");
    assert_eq!(
        e.to_string(),
        "minecraft: malformed reply: Length at byte 0: VarInt longer than its maximum size"
    );
}

#[test]
fn a_length_of_two_gigabytes_is_refused_from_the_prefix() {
    let t0 = Instant::now();
    let mut m = machine(QueryOptions::default(), t0);
    connect(&mut m, t0);
    m.handle_stream(t0, StreamEvent::Received(&[0xff, 0xff, 0xff, 0xff, 0x07]));
    let e = fail_with(&mut m);
    assert_eq!(
        e.to_string(),
        format!(
            "minecraft: malformed reply: Length at byte 0: value exceeds our limit of {MAX_STATUS_FRAME}"
        )
    );
}

#[test]
fn a_slow_drip_ends_at_the_total_deadline() {
    let t0 = Instant::now();
    let timing = Timing::default();
    let mut m = QueryMachine::new(QueryOptions::default(), timing, 1, t0);
    connect(&mut m, t0);
    let mut reply = Vec::new();
    encode_status(&mut reply, NPM);
    // One byte a second: the read timeout (5 s) never runs out, the total one does.
    let mut now = t0;
    let mut fed = 0;
    for b in &reply {
        now += Duration::from_secs(1);
        if now >= m.poll_timeout().unwrap() {
            m.handle_timeout(now);
            break;
        }
        m.handle_stream(now, StreamEvent::Received(std::slice::from_ref(b)));
        fed += 1;
    }
    let e = fail_with(&mut m);
    assert!(e.is_timeout());
    assert_eq!(
        e.to_string(),
        format!(
            "minecraft: timed out waiting for StatusResponse (total timeout, {fed} bytes received)"
        )
    );
    assert_eq!(now - t0, timing.total_timeout);
    assert_eq!(e.fault().name(), "server");
}

#[test]
fn a_never_ending_json_is_cut_off_at_the_frame_cap() {
    let t0 = Instant::now();
    let mut m = machine(QueryOptions::default(), t0);
    connect(&mut m, t0);
    // A frame of the largest length allowed, holding an unfinished JSON string, then
    // more: the frame ends where its length says and does not parse.
    let mut reply = Vec::new();
    write_varint(&mut reply, i32::try_from(MAX_STATUS_FRAME).unwrap());
    reply.extend_from_slice(&[0x00, 0xfd, 0xff, 0x05]); // id 0, JSON length 98301
    reply.extend_from_slice(b"{\"description\":\"");
    let chunk = vec![b'a'; 64 * 1024];
    let mut sent = reply.len();
    m.handle_stream(t0, StreamEvent::Received(&reply));
    let mut rounds = 0;
    while !m.close_due() {
        m.handle_stream(t0, StreamEvent::Received(&chunk));
        sent += chunk.len();
        rounds += 1;
        assert!(rounds < 10, "still reading after {sent} bytes");
    }
    let e = fail_with(&mut m);
    assert_eq!(e.kind(), "malformed");
    assert!(e.to_string().contains("Json at byte"), "{e}");
}

#[test]
fn a_megabyte_in_one_read_is_taken_a_frame_at_a_time_not_held() {
    let t0 = Instant::now();
    let mut m = machine(QueryOptions::default(), t0);
    connect(&mut m, t0);
    // The status, then a megabyte of junk, in one read: the core takes at most its cap
    // at a time, the status counts, the junk ends the query at its first bad frame.
    let mut reply = Vec::new();
    encode_status(&mut reply, NPM);
    let status_len = reply.len();
    reply.resize(1 << 20, 0x80);
    m.handle_stream(t0, StreamEvent::Received(&reply));
    let a = m.take_result().unwrap().unwrap();
    assert_eq!(a.status.slot_max, Some(50));
    assert!(a.bytes < MAX_STATUS_FRAME + 64, "took {} bytes", a.bytes);
    assert!(a.bytes > status_len);
    assert!(a.warnings[0].contains("VarInt longer"), "{:?}", a.warnings);
}

#[test]
fn closed_before_the_status_is_malformed_with_the_offset() {
    let t0 = Instant::now();
    let mut m = machine(QueryOptions::default(), t0);
    connect(&mut m, t0);
    let mut reply = Vec::new();
    encode_status(&mut reply, NPM);
    m.handle_stream(t0, StreamEvent::Received(&reply[..40]));
    m.handle_stream(t0, StreamEvent::Closed);
    let e = fail_with(&mut m);
    assert_eq!(
        e.to_string(),
        "minecraft: malformed reply: StatusResponse at byte 40: truncated: needs 1 byte but only 0 left"
    );
}

#[test]
fn a_refused_connection_is_reported_at_once() {
    let t0 = Instant::now();
    let mut m = machine(QueryOptions::default(), t0);
    let e = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
    m.handle_stream(t0, StreamEvent::Failed(&e));
    let e = fail_with(&mut m);
    assert_eq!(
        e,
        QueryError::Refused {
            protocol: Some(Protocol::Minecraft)
        }
    );
}

#[test]
fn no_connection_in_time_is_a_connect_timeout() {
    let t0 = Instant::now();
    let timing = Timing::default().connect_timeout(Duration::from_secs(2));
    let mut m = QueryMachine::new(QueryOptions::default(), timing, 1, t0);
    let due = m.poll_timeout().unwrap();
    assert_eq!(due - t0, Duration::from_secs(2));
    m.handle_timeout(due);
    let e = fail_with(&mut m);
    assert_eq!(
        e.to_string(),
        "minecraft: timed out waiting for the connection (connect timeout, 0 bytes received)"
    );
    assert_eq!(e.fault().name(), "network");
}

#[test]
fn a_connected_server_that_says_nothing_is_a_read_timeout() {
    let t0 = Instant::now();
    let timing = Timing::default().total_timeout(Duration::from_secs(30));
    let mut m = QueryMachine::new(QueryOptions::default(), timing, 1, t0);
    connect(&mut m, t0);
    let due = m.poll_timeout().unwrap();
    assert_eq!(due - t0, timing.read_timeout);
    m.handle_timeout(due);
    let e = fail_with(&mut m);
    assert!(
        e.to_string()
            .contains("StatusResponse (read timeout, 0 bytes"),
        "{e}"
    );
}

#[test]
fn the_legacy_ping() {
    let t0 = Instant::now();
    let mut o = QueryOptions::default();
    o.legacy = true;
    let mut m = machine(o, t0);
    assert_eq!(connect(&mut m, t0), [0xfe, 0x01]);
    let mut reply = Vec::new();
    let mut l = LegacyReply::default();
    l.protocol = Some(78);
    l.version = Some("1.6.4".into());
    l.motd = "§4Old §rserver".into();
    l.online = Some(2);
    l.max = Some(20);
    encode_legacy(&mut reply, &l);
    for b in &reply {
        m.handle_stream(t0, StreamEvent::Received(std::slice::from_ref(b)));
    }
    let a = m.take_result().unwrap().unwrap();
    assert_eq!(a.status.host_name.as_deref(), Some("Old server"));
    assert_eq!(a.status.host_name_raw.as_deref(), Some("§4Old §rserver"));
    assert_eq!(
        (a.status.player_count, a.status.slot_max),
        (Some(2), Some(20))
    );
    assert_eq!(a.status.game_version.as_deref(), Some("1.6.4"));
    assert_eq!(a.details.legacy, Some(l));
}

/// The answer to `reply` fed in the pieces `cuts` make (then the pong, whole).
fn answer_in_pieces(reply: &[u8], cuts: &[usize]) -> Result<ogp_proto::Status, String> {
    let t0 = Instant::now();
    let mut m = machine(QueryOptions::default(), t0);
    connect(&mut m, t0);
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (reply.len() + 1)).collect();
    cuts.push(0);
    cuts.push(reply.len());
    cuts.sort_unstable();
    for w in cuts.windows(2) {
        m.handle_stream(t0, StreamEvent::Received(&reply[w[0]..w[1]]));
    }
    if let Some(ping) = m.poll_transmit(t0) {
        m.handle_stream(t0, StreamEvent::Received(&pong_for(&ping)));
    }
    m.handle_stream(t0, StreamEvent::Closed);
    match m.take_result().unwrap() {
        Ok(a) => Ok(a.status),
        Err(e) => Err(e.to_string()),
    }
}

proptest! {
    #[test]
    fn varints_and_varlongs_round_trip(v in any::<i32>(), l in any::<i64>()) {
        let mut out = Vec::new();
        write_varint(&mut out, v);
        prop_assert!(out.len() <= 5);
        let mut r = ogp_proto::internals::Reader::new(&out);
        prop_assert_eq!(read_varint(&mut r, "v").unwrap(), v);
        prop_assert!(r.is_empty());
        out.clear();
        write_varlong(&mut out, l);
        prop_assert!(out.len() <= 10);
        prop_assert_eq!(read_varlong(&mut ogp_proto::internals::Reader::new(&out), "v").unwrap(), l);
    }

    #[test]
    fn any_split_of_the_reply_gives_the_same_answer(
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
        junk in proptest::collection::vec(any::<u8>(), 0..40),
    ) {
        let mut good = Vec::new();
        encode_status(&mut good, NPM);
        prop_assert_eq!(answer_in_pieces(&good, &cuts), answer_in_pieces(&good, &[]));
        // A hostile reply too: the same error (or answer) however it is cut.
        prop_assert_eq!(answer_in_pieces(&junk, &cuts), answer_in_pieces(&junk, &[]));
    }
}

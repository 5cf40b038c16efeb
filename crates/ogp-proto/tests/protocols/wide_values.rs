//! The status model holds the widest value any protocol carries; each encoder clamps to
//! its own wire width. A player connected for a day, a ping over 65 s, a Steam app id
//! above 65535: the state file loads them, and every protocol answers with what its
//! field can hold.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ogp_proto::client::{Answer, Details, Machine, Options, QueryDriver};
use ogp_proto::responder::{Responder, ResponderConfig, Transmits};
use ogp_proto::{Protocol, Status};

const STATE: &str = r#"{
  "host_name": "Survival",
  "players": [
    { "name": "idle", "time": 87698, "ping": 70000, "loss": 100000 },
    { "name": "fresh", "time": 12, "ping": 35 }
  ],
  "teams": [ { "name": "red", "average_ping": 99999 } ],
  "a2s": { "app_id": 252490 }
}"#;

/// Queries `status` over `protocol` through the sans-IO responder.
fn ask(protocol: Protocol, status: &Status) -> Answer {
    let t0 = Instant::now();
    let mut r = Responder::new(ResponderConfig::default(), [3; 32], t0);
    let mut m = Machine::new(protocol, &Options::default(), 0x5eed, t0);
    let src: SocketAddr = "192.0.2.9:40000".parse().unwrap();
    let mut out = Transmits::default();
    for _ in 0..20 {
        while let Some(q) = m.poll_transmit(t0) {
            r.handle(t0, src, &q, status, &mut out);
            for d in out.iter() {
                m.handle_datagram(t0 + Duration::from_millis(1), d);
            }
        }
        if let Some(result) = m.take_result() {
            return result.unwrap_or_else(|e| panic!("{protocol}: {e}"));
        }
    }
    panic!("{protocol}: no result");
}

#[test]
fn the_state_file_holds_a_day_of_play_and_big_app_ids() {
    let s = Status::from_json(STATE).expect("a day of play loads");
    let p = &s.players.as_ref().unwrap()[0];
    assert_eq!(p.time, Some(87_698));
    assert_eq!(p.ping, Some(70_000));
    assert_eq!(s.a2s.as_ref().unwrap().app_id, Some(252_490));
    // and writes back as it was read
    let again = Status::from_json(&s.to_json_pretty()).unwrap();
    assert_eq!(again, s);
}

#[test]
fn ogp_saturates_its_16_bit_fields() {
    let s = Status::from_json(STATE).unwrap();
    let a = ask(Protocol::Ogp, &s);
    let players = a.status.players.unwrap();
    assert_eq!(
        players[0].time,
        Some(u32::from(u16::MAX)),
        "18 h 12 min at most"
    );
    assert_eq!(players[0].ping, Some(65_535));
    assert_eq!(players[0].loss, Some(65_535));
    assert_eq!(players[1].time, Some(12));
    assert_eq!(players[1].ping, Some(35));
    assert_eq!(a.status.teams.unwrap()[0].average_ping, Some(65_535));
}

#[test]
fn a2s_carries_the_whole_day_and_the_full_app_id() {
    let s = Status::from_json(STATE).unwrap();
    let a = ask(Protocol::A2s, &s);
    let players = a.status.players.as_ref().unwrap();
    assert_eq!(
        players[0].duration,
        Some(87_698.0),
        "A2S sends a float duration"
    );
    let Details::A2s(d) = &a.details else {
        panic!("not an A2S answer")
    };
    let Some(ogp_proto::a2s::info::InfoReply::Source(info)) = &d.info else {
        panic!("no Source INFO reply")
    };
    // the 16-bit ID field holds the low 16 bits; the game id the full id
    assert_eq!(info.app_id, (252_490u32 & 0xffff) as u16);
    assert_eq!(info.extra.as_ref().and_then(|x| x.game_id), Some(252_490));
    assert_eq!(a.status.a2s.as_ref().unwrap().app_id, Some(252_490));
}

#[test]
fn gamespy3_sends_text_so_any_value() {
    let s = Status::from_json(STATE).unwrap();
    let a = ask(Protocol::Gamespy3, &s);
    let players = a.status.players.unwrap();
    assert_eq!(players[0].ping, Some(70_000));
}

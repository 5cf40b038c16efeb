//! The Ventrilo query as a machine of the core's one-request shape: the detailed-status
//! request (command 2, keys at random), resent by the core's timers until the reply's
//! packets are all in (the core's `Parts`: any order, duplicates
//! ignored, at most 64 packets and 64 KiB).
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | `NAME` |
//! | `slot_max` | `MAXCLIENTS` |
//! | `player_count` | `CLIENTCOUNT`, else the clients listed |
//! | `game_version` | `VERSION` |
//! | `password` | `AUTH` other than `0` |
//! | `uptime_seconds` | `UPTIME` |
//! | `teams` | the channels: `NAME`, the rest of their list in `extra` |
//! | `players` | the clients: `NAME`, `PING`, `team` the index of their channel (`CID`), the rest in `extra` |
//! | `rules` | every other `KEY: value` line, as sent |
//!
//! `game_name` is `Ventrilo`.

use std::collections::BTreeMap;

use super::{decode_packet, decode_text, encode_request, get, Reply, HEADER_LEN};
use crate::client_oneshot::{oneshot_machine, OneShot, Parts, Pushed, Read};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::model::{Player, Rules, Team};
use crate::protocol::Protocol;
use crate::text::Text;
use crate::Status;

/// What a Ventrilo answer says beyond the status: the reply as sent.
pub type Details = Reply;

/// The keys mapped to the status, not repeated in its rules.
const MAPPED: [&str; 6] = [
    "NAME",
    "MAXCLIENTS",
    "CLIENTCOUNT",
    "VERSION",
    "AUTH",
    "UPTIME",
];

fn rest(list: &[(Text, Text)], skip: &[&str]) -> BTreeMap<Text, Text> {
    list.iter()
        .filter(|(k, _)| !skip.contains(&&**k))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
        .collect()
}

/// The status a reply describes (see the module's table).
pub fn reply_to_status(r: &Reply) -> Status {
    let num = |k: &str| r.get(k).and_then(|v| v.trim().parse::<u32>().ok());
    let channel_ids: Vec<Option<&str>> = r.channels.iter().map(|c| get(c, "CID")).collect();
    Status {
        game_name: Some("Ventrilo".into()),
        host_name: r.get("NAME").map(Into::into),
        slot_max: num("MAXCLIENTS"),
        player_count: num("CLIENTCOUNT").or_else(|| u32::try_from(r.clients.len()).ok()),
        game_version: r.get("VERSION").map(Into::into),
        password: r.get("AUTH").map(|a| a.trim() != "0"),
        uptime_seconds: num("UPTIME"),
        teams: Some(
            r.channels
                .iter()
                .map(|c| Team {
                    name: get(c, "NAME").map(Into::into),
                    extra: rest(c, &["NAME"]),
                    ..Team::default()
                })
                .collect(),
        ),
        players: Some(
            r.clients
                .iter()
                .map(|c| Player {
                    name: get(c, "NAME").map(Into::into),
                    ping: get(c, "PING").and_then(|p| p.trim().parse().ok()),
                    team: get(c, "CID").and_then(|cid| {
                        let i = channel_ids.iter().position(|&id| id == Some(cid))?;
                        i32::try_from(i).ok()
                    }),
                    extra: rest(c, &["NAME", "PING"]),
                    ..Player::default()
                })
                .collect(),
        ),
        rules: Some(Rules(
            r.fields
                .iter()
                .filter(|(k, _)| !MAPPED.contains(&&**k))
                .cloned()
                .collect(),
        )),
        ..Status::default()
    }
}

/// Ventrilo on the one-request shape: the request's keys, and the reply's packets so far.
#[derive(Debug, Clone)]
pub struct Ventrilo {
    keys: u32,
    parts: Parts,
}

impl OneShot for Ventrilo {
    type Details = Details;
    const WHAT: &'static str = "status";

    fn new(id: u32) -> Self {
        Self {
            keys: id,
            parts: Parts::default(),
        }
    }

    fn request(&self, out: &mut Vec<u8>) {
        encode_request(self.keys, out);
    }

    fn read(&mut self, datagram: &[u8]) -> Read<Details> {
        let p = match decode_packet(datagram) {
            Ok(p) => p,
            Err(e) if e.kind == DecodeErrorKind::BadMagic || e.offset < HEADER_LEN => {
                return Read::NotOurs("not a Ventrilo packet")
            }
            Err(e) => return Read::Malformed(e),
        };
        let h = p.header;
        match self.parts.push(h.number, h.count, &p.body) {
            Ok(Pushed::Waiting) => Read::Part,
            Ok(Pushed::BadNumber) => Read::Malformed(DecodeError::new(
                14,
                "packet number",
                DecodeErrorKind::Invalid("at or past the packet count"),
            )),
            Ok(Pushed::Complete(text)) => {
                let r = decode_text(&text);
                Read::Answer(reply_to_status(&r), r.clone(), r.warnings)
            }
            Err(e) => Read::Failed(e),
        }
    }
}

oneshot_machine!(Protocol::Ventrilo, Ventrilo, Details);

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::super::{crc, encode_reply, encode_text, Packet, DETAILED, REQUEST_BODY_LEN};
    use super::*;
    use crate::client_core::{QueryDriver, QueryError, Timing};

    /// GameQ's Ventrilo result 1 (`tests/Protocols/Providers/Ventrilo/1_result.json`):
    /// its fields, three of its channels and three of its clients.
    pub(crate) fn sample() -> Reply {
        let l = |kv: &[(&str, &str)]| -> Vec<(Text, Text)> {
            kv.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()
        };
        Reply {
            fields: l(&[
                ("NAME", "tan.cleanvoice.ru"),
                ("PHONETIC", "Clean Voice"),
                ("COMMENT", ""),
                ("AUTH", "0"),
                ("MAXCLIENTS", "40"),
                ("VOICECODEC", "3,Speex"),
                ("VOICEFORMAT", "31,32 KHz, 16 bit, 9 Qlty"),
                ("UPTIME", "2186"),
                ("PLATFORM", "Linux-i386"),
                ("VERSION", "3.0.6"),
                ("CHANNELCOUNT", "54"),
                ("CLIENTCOUNT", "14"),
            ]),
            channels: vec![
                l(&[
                    ("CID", "294"),
                    ("PID", "0"),
                    ("PROT", "0"),
                    ("NAME", "!Public #1"),
                    ("COMM", ""),
                ]),
                l(&[
                    ("CID", "295"),
                    ("PID", "0"),
                    ("PROT", "0"),
                    ("NAME", "!Public #2"),
                    ("COMM", ""),
                ]),
                l(&[
                    ("CID", "305"),
                    ("PID", "0"),
                    ("PROT", "1"),
                    ("NAME", "NA"),
                    ("COMM", "ACTIVATED TO 01.04.2015"),
                ]),
            ],
            clients: vec![
                l(&[
                    ("ADMIN", "0"),
                    ("CID", "305"),
                    ("PHAN", "0"),
                    ("PING", "63"),
                    ("SEC", "2181"),
                    ("NAME", "Tuzik"),
                    ("COMM", ""),
                ]),
                l(&[
                    ("ADMIN", "0"),
                    ("CID", "295"),
                    ("PHAN", "0"),
                    ("PING", "111"),
                    ("SEC", "2180"),
                    ("NAME", "NyK FuRy"),
                    ("COMM", ""),
                ]),
                l(&[
                    ("ADMIN", "0"),
                    ("CID", "0"),
                    ("PHAN", "0"),
                    ("PING", "149"),
                    ("SEC", "2180"),
                    ("NAME", "Wrath"),
                    ("COMM", ""),
                ]),
            ],
            warnings: Vec::new(),
        }
    }

    #[test]
    fn the_request_reads_back_and_the_tables_are_the_protocols() {
        let mut b = Vec::new();
        encode_request(0x0102_0304, &mut b);
        assert_eq!(b.len(), HEADER_LEN + REQUEST_BODY_LEN);
        let p = decode_packet(&b).unwrap();
        assert_eq!(p.header.command, DETAILED);
        assert_eq!((p.header.count, p.header.number), (1, 0));
        assert_eq!(p.body, [0; 16]);
        assert_eq!(p.header.crc, crc(&[0; 16]));
        // keys 00 01 and body keys 00 01: the first header byte is 0 + table[0] (0x80),
        // the first body byte 0 + table[0] (0x82)
        let mut b = Vec::new();
        encode_request(0x0100_0100, &mut b);
        assert_eq!(&b[..3], [0x00, 0x01, 0x80]);
        assert_eq!(b[20], 0x82);
        // the CRC's table: polynomial 0x1021 (entries 1, 16 and 255 as published)
        // (a byte b then two zeros: table[b])
        assert_eq!(crc(&[0x01, 0, 0]), 0x1021);
        assert_eq!(crc(&[0x10, 0, 0]), 0x1231);
        assert_eq!(crc(&[0xFF, 0, 0]), 0x1EF0);
    }

    #[test]
    fn a_reply_in_packets_any_order_is_joined_and_mapped() {
        let text = encode_text(&sample());
        assert_eq!(decode_text(&text), sample());
        let mut packets = Vec::new();
        encode_reply(&text, 200, 7, &mut packets);
        assert!(packets.len() >= 3);
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        let mut out = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut out));
        m.handle_datagram(t0, b"short");
        // the last first, one twice
        m.handle_datagram(t0, packets.last().unwrap());
        for p in packets.iter().rev() {
            m.handle_datagram(t0, p);
        }
        let a = m.take_result().unwrap().unwrap();
        let st = a.status;
        assert_eq!(st.host_name.as_deref(), Some("tan.cleanvoice.ru"));
        assert_eq!((st.player_count, st.slot_max), (Some(14), Some(40)));
        assert_eq!(st.uptime_seconds, Some(2186));
        assert_eq!(st.password, Some(false));
        let players = st.players.unwrap();
        assert_eq!(players[0].name.as_deref(), Some("Tuzik"));
        assert_eq!(players[0].ping, Some(63));
        assert_eq!(players[0].team, Some(2));
        assert_eq!(players[2].team, None);
        assert_eq!(players[0].extra.get("sec").map(|s| &**s), Some("2181"));
        assert_eq!(st.teams.unwrap()[2].name.as_deref(), Some("NA"));
        assert_eq!(st.rules.unwrap().get("PLATFORM"), Some("Linux-i386"));
    }

    #[test]
    fn hostile_packets_end_in_one_clear_error() {
        let t0 = Instant::now();
        let packet = |number: u16, count: u16, body: Vec<u8>| {
            let mut b = Vec::new();
            Packet {
                header: super::super::Header {
                    key: [9, 3],
                    command: DETAILED,
                    len: body.len() as u16,
                    count,
                    number,
                    body_key: [4, 5],
                    ..Default::default()
                },
                body,
            }
            .encode(&mut b);
            b
        };
        // a count past the cap: fails at once
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        m.handle_datagram(t0, &packet(0, 1000, b"NAME: x\n".to_vec()));
        let e = m.take_result().unwrap().unwrap_err();
        assert!(matches!(e, QueryError::BadReassembly { .. }), "{e}");
        assert!(e.to_string().contains("1000 packets"), "{e}");
        // 64 packets of 1200 bytes: past 64 KiB
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        for n in 0..64 {
            m.handle_datagram(t0, &packet(n, 64, vec![b'a'; 1200]));
        }
        let e = m.take_result().unwrap().unwrap_err();
        assert!(e.to_string().contains("65536 bytes"), "{e}");
        // a number past the count, a body shorter than its length: malformed
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        m.handle_datagram(t0, &packet(5, 2, b"NAME: x\n".to_vec()));
        let mut cut = packet(0, 2, b"NAME: x\n".to_vec());
        cut.pop();
        m.handle_datagram(t0, &cut);
        assert!(m.take_result().is_none());
        // a flood of clients, a client of many values: kept up to the caps, one warning
        let mut text = String::from("NAME: x\n");
        for i in 0..2000 {
            text.push_str(&format!("CLIENT: NAME=p{i},PING=1\n"));
        }
        text.push_str(&format!("CHANNEL: {}\n", "K=V,".repeat(500)));
        let r = decode_text(text.as_bytes());
        assert_eq!(r.clients.len(), super::super::MAX_CLIENTS);
        assert_eq!(r.channels[0].len(), super::super::MAX_PAIRS);
        assert_eq!(r.warnings.len(), 1);
        let st = reply_to_status(&r);
        assert_eq!(st.player_count, Some(1024));
        // a header whose zero word is not zero: not ours
        let mut b = packet(0, 1, b"NAME: x\n".to_vec());
        b[2] ^= 0x40;
        assert!(matches!(Ventrilo::new(1).read(&b), Read::NotOurs(_)));
    }
}

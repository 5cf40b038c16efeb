//! The Armagetron Advanced query as a machine of the core's one-request shape: the
//! small-info request (the primer its server wants first), then the server-info
//! request, resent by the core's timers until a reply decodes.
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | the name without `0xRRGGBB` colour codes (as sent in `host_name_raw`) |
//! | `player_count`, `slot_max` | players, max players |
//! | `game_version` | the version |
//! | `connect_port` | the game port |
//! | `players` | the names without colour codes (as sent in `name_raw`) |
//! | `rules` | `hostname`, `versionmin`, `versionmax`, and when sent `options` (without colour codes), `url`, `globalids` |
//!
//! `game_name` is `Armagetron Advanced`.

use super::{decode_reply, strip_colours, Reply, REQUEST, SMALL_REQUEST};
use crate::client_oneshot::{oneshot_machine, OneShot, Read};
use crate::model::{Player, Rules};
use crate::protocol::Protocol;
use crate::Status;

/// What an Armagetron Advanced answer says beyond the status: the reply as sent.
pub type Details = Reply;

/// The status a reply describes (see the module's table).
pub fn reply_to_status(r: &Reply) -> Status {
    let mut rules = vec![
        ("hostname".into(), r.host.clone()),
        ("versionmin".into(), r.version_min.to_string().into()),
        ("versionmax".into(), r.version_max.to_string().into()),
    ];
    if let Some([options, url, ids]) = &r.more {
        rules.push(("options".into(), strip_colours(options).into()));
        rules.push(("url".into(), url.clone()));
        rules.push(("globalids".into(), ids.clone()));
    }
    Status {
        game_name: Some("Armagetron Advanced".into()),
        host_name: Some(strip_colours(&r.name).into()),
        host_name_raw: Some(r.name.clone()),
        player_count: Some(r.players),
        slot_max: Some(r.max_players),
        game_version: Some(r.version.clone()),
        connect_port: u16::try_from(r.game_port).ok().filter(|&p| p != 0),
        players: Some(
            r.player_names
                .iter()
                .map(|n| Player {
                    name: Some(strip_colours(n).into()),
                    name_raw: Some(n.clone()),
                    ..Player::default()
                })
                .collect(),
        ),
        rules: Some(Rules(rules)),
        ..Status::default()
    }
}

/// Armagetron Advanced on the one-request shape.
#[derive(Debug, Clone)]
pub struct Armagetron;

impl OneShot for Armagetron {
    type Details = Details;
    const WHAT: &'static str = "info";

    fn new(_id: u32) -> Self {
        Self
    }

    const PRIMER: &'static str = "small info";

    fn request(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&REQUEST);
    }

    fn primer(&self, out: &mut Vec<u8>) -> bool {
        out.extend_from_slice(&SMALL_REQUEST);
        true
    }

    fn read(&mut self, datagram: &[u8]) -> Read<Details> {
        // the descriptor is the magic: the small-info reply is not ours
        Read::decoded(
            decode_reply(datagram),
            2,
            "not the server-info reply (descriptor 51)",
            |r| (reply_to_status(&r), r.clone(), r.warnings),
        )
    }
}

oneshot_machine!(Protocol::Armagetron, Armagetron, Details);

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::super::{put_number, put_string};
    use super::*;
    use crate::client_core::{drive_to_end, QueryDriver, QueryError, Timing};

    pub(crate) fn sample() -> Reply {
        Reply {
            header: [0x00, 0x33, 0x00, 0x00, 0x00, 0x40],
            game_port: 4534,
            host: "192.0.2.5".into(),
            name: "0xff0000Crazy 0xffffffTronners".into(),
            players: 2,
            version_min: 0,
            version_max: 20,
            version: "0.2.9.1.0_amd64_unix".into(),
            max_players: 16,
            player_names: vec!["0x00ff00Flynn".into(), "Tron".into()],
            more: Some([
                "0xRESETTNo team kills".into(),
                "http://example.org".into(),
                "flynn@forums".into(),
            ]),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn strings_are_swapped_pairs_with_their_nul_counted() {
        let mut b = Vec::new();
        put_string(&mut b, "abc");
        assert_eq!(b, [0, 4, b'b', b'a', 0, b'c']);
        b.clear();
        put_string(&mut b, "ab");
        assert_eq!(b, [0, 3, b'b', b'a', 0, 0]);
        b.clear();
        put_number(&mut b, 0x0001_11D6);
        assert_eq!(b, [0x11, 0xD6, 0x00, 0x01]);
        assert_eq!(strip_colours("0xff00ffA0xRESETTb 0x12"), "Ab 0x12");
    }

    /// A real server's replies (Debian's armagetronad-dedicated 0.2.9.1; see
    /// tests/data/armagetron/SOURCES.md).
    #[test]
    fn a_real_servers_reply_is_read() {
        let big = include_bytes!("../../tests/data/armagetron/big_info_0.2.9.1.bin");
        let small = include_bytes!("../../tests/data/armagetron/small_info_0.2.9.1.bin");
        let r = decode_reply(big).unwrap();
        assert_eq!(r.game_port, 4601);
        assert_eq!(&*r.name, "0xff0000Loop 0xffffffTron");
        assert_eq!((r.players, r.max_players), (0, 12));
        assert_eq!(&*r.version, "0.2.9.1_alpha20230222 unix dedicated");
        assert_eq!((r.version_min, r.version_max), (0, 17));
        assert!(r.player_names.is_empty() && r.warnings.is_empty());
        let [options, url, _] = r.more.clone().unwrap();
        assert_eq!(&*options, "All settings at default values.");
        assert_eq!(&*url, "http://www.armagetronad.net");
        let st = reply_to_status(&r);
        assert_eq!(st.host_name.as_deref(), Some("Loop Tron"));
        // the small-info reply is not ours: dropped, the query goes on
        assert!(matches!(Armagetron.read(small), Read::NotOurs(_)));
        assert!(matches!(Armagetron.read(big), Read::Answer(..)));
    }

    #[test]
    fn a_reply_round_trips_and_maps() {
        let mut b = Vec::new();
        sample().encode(&mut b);
        assert_eq!(decode_reply(&b).unwrap(), sample());
        let short = sample();
        let mut without = short.clone();
        without.more = None;
        let mut c = Vec::new();
        without.encode(&mut c);
        assert_eq!(decode_reply(&c).unwrap(), without);
        for n in 0..c.len() {
            assert!(decode_reply(&b[..n]).is_err(), "{n}");
        }
        // a lying length: past the end
        let mut lying = c.clone();
        lying.extend_from_slice(&[0xFF, 0xFF, b'a']);
        assert_eq!(decode_reply(&lying).unwrap_err().field, "options");
        // another descriptor (the small-info reply): not ours
        let mut small = b.clone();
        small[1] = 0x32;
        assert_eq!(
            decode_reply(&small).unwrap_err().kind,
            crate::error::DecodeErrorKind::BadMagic
        );
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        let mut out = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut out));
        assert_eq!(out, SMALL_REQUEST);
        out.clear();
        assert!(m.poll_transmit_into(t0, &mut out));
        assert_eq!(out, REQUEST);
        assert!(!m.poll_transmit_into(t0, &mut out));
        m.handle_datagram(t0, b"short");
        m.handle_datagram(t0, &small);
        assert!(m.take_result().is_none());
        m.handle_datagram(t0, &b);
        let st = m.take_result().unwrap().unwrap().status;
        assert_eq!(st.host_name.as_deref(), Some("Crazy Tronners"));
        assert_eq!(st.connect_port, Some(4534));
        let players = st.players.unwrap();
        assert_eq!(players[0].name.as_deref(), Some("Flynn"));
        assert_eq!(players[0].name_raw.as_deref(), Some("0x00ff00Flynn"));
        assert_eq!(st.rules.unwrap().get("options"), Some("No team kills"));
        // three attempts of two datagrams, each answered by a cut reply: malformed
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        assert_eq!(drive_to_end(&mut m, t0, Some(&b[..20])), 6);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::Malformed { .. }))
        ));
    }
}

//! Frontlines: Fuel of War: A2S in a dialect of its own, on the game port + 2.
//!
//! * The information is asked with `FF FF FF FF 46 4C 53 51` (`F` then `LSQ`) and comes
//!   back as an `'I'` of its own layout ([`FfowInfo`]): the protocol byte (2), six
//!   strings (name, map, mod, game mode, description, version), the game port, the
//!   player counts, the listen type, environment, password and anti-cheat bytes, the
//!   average frame rate, the round, the rounds and the time left.
//! * The players and the rules are A2S's PLAYER and RULES with the old challenge
//!   request first (`FF FF FF FF 57`, answered by `41` and the challenge); the players'
//!   scores and times and the rules' count are big-endian, as every 16-bit number here.
//!
//! The byte order is what GameQ's two captures show (their game port, read
//! little-endian by GameQ, is 25621: 5476 big-endian, the game port of their address;
//! their rules reply starts `45 00` with a count below 256) and what gamedig's reader
//! does. The client is A2S's machine in this dialect ([`Machine`](crate::a2s::client::Machine)`<true>`).

use super::{kind, put_str, string, take_trailing, SINGLE};
use crate::error::{DecodeError, DecodeWarning};
use crate::model::Text;
use crate::protocol::{Entry, Signature, Tier, Transport};
use crate::reader::Reader;

/// The information request.
pub const INFO_REQUEST: [u8; 8] = [0xff, 0xff, 0xff, 0xff, 0x46, 0x4c, 0x53, 0x51];

/// FFOW's entry (see [`Entry`]): its information request is its own; default port
/// 5478 (the game's 5476 + 2); not auto-detected (any A2S server answers the rest).
pub const ENTRY: Entry = Entry {
    aliases: &["frontlines", "fls"],
    help: "Frontlines: Fuel of War (port 5478, the game port + 2): its own information \
        request and reply, then A2S's players and rules after the old challenge request, \
        numbers big-endian.",
    auto: false,
    default_port: Some(5478),
    steps: 3,
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: |d| d.starts_with(&INFO_REQUEST),
    }],
    ..Entry::new("ffow", "Frontlines: Fuel of War", Transport::Datagram)
};

/// FFOW's `'I'` reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FfowInfo {
    /// The protocol byte (2).
    pub protocol: u8,
    /// Server name.
    pub name: Text,
    /// Current map.
    pub map: Text,
    /// The mod (`FOW`).
    pub folder: Text,
    /// The game mode (`FL`, `CQ`…).
    pub game_mode: Text,
    /// The game's description.
    pub description: Text,
    /// Game version.
    pub version: Text,
    /// The game port.
    pub port: u16,
    /// Players on the server.
    pub players: u8,
    /// Maximum players.
    pub max_players: u8,
    /// Listen type: `d` dedicated, `l` listen.
    pub server_type: u8,
    /// Environment: `w` Windows, `l` Linux.
    pub environment: u8,
    /// A password is needed.
    pub password: bool,
    /// Anti-cheat on.
    pub secure: bool,
    /// Average frames per second.
    pub average_fps: u8,
    /// The round being played.
    pub round: u8,
    /// Rounds per map.
    pub max_rounds: u8,
    /// Seconds left in the round.
    pub time_left: u16,
    /// Bytes after the last field.
    pub trailing: Vec<u8>,
}

impl FfowInfo {
    /// Decodes from the type byte on (the decoder calls it on an `'I'` only).
    pub(crate) fn decode_body(
        r: &mut Reader<'_>,
        w: &mut Vec<DecodeWarning>,
    ) -> Result<Self, DecodeError> {
        r.u8("Type")?;
        Ok(Self {
            protocol: r.u8("Protocol")?,
            name: string(r, "Name", w)?,
            map: string(r, "Map", w)?,
            folder: string(r, "Mod", w)?,
            game_mode: string(r, "GameMode", w)?,
            description: string(r, "Description", w)?,
            version: string(r, "Version", w)?,
            port: r.u16_be("Port")?,
            players: r.u8("Players")?,
            max_players: r.u8("MaxPlayers")?,
            server_type: r.u8("ListenType")?,
            environment: r.u8("Environment")?,
            password: r.u8("Password")? != 0,
            secure: r.u8("Secure")? != 0,
            average_fps: r.u8("AverageFps")?,
            round: r.u8("Round")?,
            max_rounds: r.u8("MaxRounds")?,
            time_left: r.u16_be("TimeLeft")?,
            trailing: take_trailing(r, "TimeLeft", w),
        })
    }

    /// Appends the whole datagram (`FF FF FF FF 'I' …`).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&SINGLE);
        out.push(kind::INFO);
        out.push(self.protocol);
        for s in [
            &self.name,
            &self.map,
            &self.folder,
            &self.game_mode,
            &self.description,
            &self.version,
        ] {
            put_str(out, s);
        }
        out.extend_from_slice(&self.port.to_be_bytes());
        out.extend_from_slice(&[
            self.players,
            self.max_players,
            self.server_type,
            self.environment,
            u8::from(self.password),
            u8::from(self.secure),
            self.average_fps,
            self.round,
            self.max_rounds,
        ]);
        out.extend_from_slice(&self.time_left.to_be_bytes());
        out.extend_from_slice(&self.trailing);
    }
}

/// The FFOW machine: A2S's in FFOW's dialect.
pub mod client {
    pub use crate::a2s::client::{Details, QueryOptions};

    /// One FFOW query of one server.
    pub type QueryMachine = crate::a2s::client::Machine<true>;

    crate::client_core::start_query!(QueryOptions, no_id);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2s::{decode_ffow_with, decode_with, Message, Players, Rules};
    use crate::Charset;

    /// GameQ's first capture's information, as its result file decodes it.
    pub(crate) fn gameq_info() -> FfowInfo {
        FfowInfo {
            protocol: 2,
            name: "The Killing Crew [FL] use console".into(),
            map: "FL-Boneyard".into(),
            folder: "FOW".into(),
            game_mode: "FL".into(),
            description: "Frontlines: Fuel of War".into(),
            version: "1.3.0".into(),
            port: 5476,
            players: 0,
            max_players: 32,
            server_type: b'd',
            environment: b'w',
            password: false,
            secure: false,
            average_fps: 1,
            round: 0,
            max_rounds: 1,
            time_left: 0x0708,
            trailing: Vec::new(),
        }
    }

    #[test]
    fn the_info_reads_big_endian_as_gameqs_capture_shows() {
        let i = gameq_info();
        let mut d = Vec::new();
        i.encode(&mut d);
        // GameQ read the port little-endian: 25621
        let at = d.len() - 13;
        assert_eq!(u16::from_le_bytes([d[at], d[at + 1]]), 25621);
        let got = decode_ffow_with(&d, Charset::Auto).unwrap();
        assert_eq!(got.message, Message::FfowInfo(i));
        assert!(got.warnings.is_empty());
        // the same bytes in plain A2S: not an A2S info (too short for its fields)
        assert!(!matches!(
            decode_with(&d, Charset::Auto).map(|d| d.message),
            Ok(Message::FfowInfo(_))
        ));
        // cut anywhere: an error naming a field, never a panic
        for n in 5..d.len() {
            assert!(decode_ffow_with(&d[..n], Charset::Auto).is_err(), "{n}");
        }
    }

    /// One player, Grunt: 300 points in 61.5 s.
    fn grunt() -> Players {
        Players {
            players: vec![crate::a2s::PlayerEntry {
                name: "Grunt".into(),
                score: 300,
                duration: 61.5,
                ..Default::default()
            }],
            trailing: Vec::new(),
        }
    }

    #[test]
    fn players_and_rules_are_big_endian_and_their_counts_bounded() {
        let p = grunt();
        let mut d = SINGLE.to_vec();
        p.encode_body_in(&mut d, true);
        assert_eq!(&d[d.len() - 8..d.len() - 4], &300i32.to_be_bytes());
        assert_eq!(
            decode_ffow_with(&d, Charset::Auto).unwrap().message,
            Message::Players(p)
        );
        let rules = Rules {
            rules: vec![("Map:0".into(), "FL-Gnaw".into())],
            trailing: Vec::new(),
        };
        let mut d = SINGLE.to_vec();
        rules.encode_body_in(&mut d, true);
        assert_eq!(&d[4..7], &[0x45, 0, 1]);
        assert_eq!(
            decode_ffow_with(&d, Charset::Auto).unwrap().message,
            Message::Rules(rules)
        );
        // lying counts: 255 players and 65535 rules announced, one sent: what came,
        // with a warning
        let mut d = SINGLE.to_vec();
        d.extend_from_slice(&[0x44, 0xff, 0, b'x', 0, 0, 0, 0, 1, 0, 0, 0, 0]);
        let got = decode_ffow_with(&d, Charset::Auto).unwrap();
        assert!(matches!(got.message, Message::Players(ref p) if p.players.len() == 1));
        assert_eq!(got.warnings.len(), 1);
        let mut d = SINGLE.to_vec();
        d.extend_from_slice(&[0x45, 0xff, 0xff, b'k', 0, b'v', 0]);
        let got = decode_ffow_with(&d, Charset::Auto).unwrap();
        assert!(matches!(got.message, Message::Rules(ref r) if r.rules.len() == 1));
        assert_eq!(got.warnings.len(), 1);
    }

    /// A FFOW server: its information, the challenge `C0 FF EE 00`, then the players
    /// and rules only with that challenge.
    fn server(req: &[u8]) -> Option<Vec<u8>> {
        const CHALLENGE: [u8; 4] = [0xc0, 0xff, 0xee, 0x00];
        let mut out = Vec::new();
        match req {
            r if r == INFO_REQUEST => gameq_info().encode(&mut out),
            [0xff, 0xff, 0xff, 0xff, 0x57] => {
                out.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x41]);
                out.extend_from_slice(&CHALLENGE);
            }
            [0xff, 0xff, 0xff, 0xff, 0x55, c @ ..] if *c == CHALLENGE => {
                out.extend_from_slice(&SINGLE);
                grunt().encode_body_in(&mut out, true);
            }
            [0xff, 0xff, 0xff, 0xff, 0x56, c @ ..] if *c == CHALLENGE => {
                out.extend_from_slice(&SINGLE);
                Rules {
                    rules: vec![("AdminName".into(), "[TKC]TacTicToe".into())],
                    trailing: Vec::new(),
                }
                .encode_body_in(&mut out, true);
            }
            _ => return None,
        }
        Some(out)
    }

    #[test]
    fn the_machine_asks_info_then_the_challenge_then_players_and_rules() {
        use crate::client_core::{QueryDriver, Timing};
        use std::time::Instant;
        let t0 = Instant::now();
        let mut m = client::QueryMachine::new(Default::default(), Timing::default(), t0);
        let (mut d, mut sent) = (Vec::new(), Vec::new());
        for _ in 0..10 {
            while m.poll_transmit_into(t0, &mut d) {
                sent.push(d.get(4).copied());
                if let Some(r) = server(&d) {
                    m.handle_datagram(t0, &r);
                }
            }
        }
        assert_eq!(
            sent,
            [Some(0x46), Some(0x57), Some(0x55), Some(0x56)],
            "FLSQ, the challenge, the players and the rules with it"
        );
        let a = m.take_result().unwrap().unwrap();
        let st = &a.status;
        assert_eq!(
            st.host_name.as_deref(),
            Some("The Killing Crew [FL] use console")
        );
        assert_eq!(st.game_type.as_deref(), Some("FL"));
        assert_eq!(st.connect_port, Some(5476));
        assert_eq!(st.slot_max, Some(32));
        assert_eq!(st.bot_count, None);
        let p = st.players.as_ref().unwrap();
        assert_eq!((p.len(), p[0].score), (1, Some(300)));
        assert!(st.rules.is_some());
        assert_eq!(a.details.ffow.map(|f| f.time_left), Some(0x0708));
        assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    }
}

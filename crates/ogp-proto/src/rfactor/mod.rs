//! rFactor's `rF_S` status query (rFactor 1 and the games on its engine, Arca Sim Racing
//! '08): a client, sans-IO, on the core's one-request shape.
//!
//! UDP to the game port − 100 (34297 for the default 34397). The request is the four
//! bytes `rF_S`. The reply has no magic: fixed fields, little-endian, 224 bytes, then the
//! vehicle classes (NUL-terminated, or to the end): game name (8, NUL-padded), full
//! update u8, region u16, IPv4 (4), size u16, version u16, RaceCast version u16, game
//! port u16, query port u16, game (20), name (28), map (32), MOTD (96), aids bits u16,
//! ping u16, flags u8, rate u8, players u8, max players u8, bots u8, special bits u8
//! (bit 1 password, 2 RaceCast, 4 fixed setups), damage u8, rules bits u16, credits u8 and
//! u16, time u16, laps u16 (in sixteenths), 3 bytes. The decoder is total.

pub mod client;

use crate::client_oneshot::Strings;
use crate::error::DecodeError;
use crate::protocol::{Entry, Transport};
use crate::reader::Reader;
use crate::text::Text;
use crate::DecodeWarning;

/// The request.
pub const REQUEST: [u8; 4] = *b"rF_S";
/// The fixed part of a reply, before the vehicle classes.
pub const FIXED_LEN: usize = 224;
/// The default query port (the game port 34397 − 100).
pub const DEFAULT_PORT: u16 = 34297;

/// rFactor's entry (see [`Entry`]): its replies have no magic, so no signature.
pub const ENTRY: Entry = Entry {
    aliases: &["rf_s", "asr08"],
    help: "rFactor 1 and Arca Sim Racing '08 (port 34297, the game port - 100): `rF_S`, \
        answered by the name, track, players, version and session settings.",
    auto: false,
    default_port: Some(DEFAULT_PORT),
    ..Entry::new("rfactor", "rFactor", Transport::Datagram)
};

/// A decoded reply, every field as sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Reply {
    /// The game name field (8 bytes).
    pub game_name: Text,
    /// The full-update byte.
    pub full_update: u8,
    /// The region.
    pub region: u16,
    /// The IPv4 address the server names.
    pub ip: [u8; 4],
    /// The size field.
    pub size: u16,
    /// The version (a number, e.g. 1255 for 1.255).
    pub version: u16,
    /// The RaceCast version.
    pub racecast_version: u16,
    /// The game port.
    pub game_port: u16,
    /// The query port.
    pub query_port: u16,
    /// The game (mod) (20 bytes).
    pub game: Text,
    /// The server's name (28 bytes).
    pub name: Text,
    /// The track (32 bytes).
    pub map: Text,
    /// The message of the day (96 bytes).
    pub motd: Text,
    /// The driving aids allowed, one bit each ([`AIDS`]).
    pub aids: u16,
    /// The ping field.
    pub ping: u16,
    /// The flags byte.
    pub flags: u8,
    /// The rate byte.
    pub rate: u8,
    /// Players.
    pub players: u8,
    /// Max players.
    pub max_players: u8,
    /// Bots (AI drivers).
    pub bots: u8,
    /// Bit 1 password, bit 2 RaceCast, bit 4 fixed setups.
    pub special: u8,
    /// The damage setting.
    pub damage: u8,
    /// The rules bits.
    pub rules: u16,
    /// The first credits field.
    pub credits1: u8,
    /// The second credits field.
    pub credits2: u16,
    /// The session time.
    pub time: u16,
    /// The laps, in sixteenths of a lap.
    pub laps16: u16,
    /// The three bytes after the laps.
    pub tail: [u8; 3],
    /// The vehicle classes.
    pub vehicles: Text,
    /// What was noticed while decoding.
    pub warnings: Vec<DecodeWarning>,
}

/// The driving aids, by bit of [`Reply::aids`] from bit 0.
pub const AIDS: [&str; 11] = [
    "TractionControl",
    "AntiLockBraking",
    "StabilityControl",
    "AutoShifting",
    "AutoClutch",
    "Invulnerability",
    "OppositeLock",
    "SteeringHelp",
    "BrakingHelp",
    "SpinRecovery",
    "AutoPitstop",
];

/// Reads a reply.
pub fn decode_reply(datagram: &[u8]) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(datagram);
    let mut s = Strings::default();
    let mut reply = Reply {
        game_name: s.fixed(&mut r, 8, "game name")?,
        full_update: r.u8("full update")?,
        region: r.u16_le("region")?,
        ip: r.array("address")?,
        size: r.u16_le("size")?,
        version: r.u16_le("version")?,
        racecast_version: r.u16_le("RaceCast version")?,
        game_port: r.u16_le("game port")?,
        query_port: r.u16_le("query port")?,
        game: s.fixed(&mut r, 20, "game")?,
        name: s.fixed(&mut r, 28, "name")?,
        map: s.fixed(&mut r, 32, "map")?,
        motd: s.fixed(&mut r, 96, "MOTD")?,
        aids: r.u16_le("aids")?,
        ping: r.u16_le("ping")?,
        flags: r.u8("flags")?,
        rate: r.u8("rate")?,
        players: r.u8("players")?,
        max_players: r.u8("max players")?,
        bots: r.u8("bots")?,
        special: r.u8("special")?,
        damage: r.u8("damage")?,
        rules: r.u16_le("rules")?,
        credits1: r.u8("credits")?,
        credits2: r.u16_le("credits")?,
        time: r.u16_le("time")?,
        laps16: r.u16_le("laps")?,
        tail: r.array("reserved")?,
        ..Reply::default()
    };
    reply.vehicles = s.cstr_or_rest(&mut r);
    reply.warnings = s.warnings();
    Ok(reply)
}

impl Reply {
    /// Writes the reply as a server sends it (tests and replays): strings cut to their
    /// fields and NUL-padded, the vehicle classes NUL-terminated.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let fixed = |out: &mut Vec<u8>, t: &str, n: usize| {
            let b: Vec<u8> = t.bytes().filter(|&c| c != 0).take(n).collect();
            out.extend_from_slice(&b);
            out.resize(out.len() + (n - b.len()), 0);
        };
        fixed(out, &self.game_name, 8);
        out.push(self.full_update);
        out.extend_from_slice(&self.region.to_le_bytes());
        out.extend_from_slice(&self.ip);
        for v in [
            self.size,
            self.version,
            self.racecast_version,
            self.game_port,
            self.query_port,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        fixed(out, &self.game, 20);
        fixed(out, &self.name, 28);
        fixed(out, &self.map, 32);
        fixed(out, &self.motd, 96);
        out.extend_from_slice(&self.aids.to_le_bytes());
        out.extend_from_slice(&self.ping.to_le_bytes());
        out.extend_from_slice(&[
            self.flags,
            self.rate,
            self.players,
            self.max_players,
            self.bots,
            self.special,
            self.damage,
        ]);
        out.extend_from_slice(&self.rules.to_le_bytes());
        out.push(self.credits1);
        for v in [self.credits2, self.time, self.laps16] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.tail);
        out.extend(self.vehicles.bytes().filter(|&c| c != 0));
        out.push(0);
    }
}

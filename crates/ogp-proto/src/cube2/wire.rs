//! Cube 2's query datagrams, read through the bounded [`Reader`].
//!
//! Every number is the engine's compressed integer (`getint`): one signed byte for
//! -126..=127 (`80` and `81` are markers), else the byte `0x80` and a little-endian `i16`, or `0x81` and a
//! little-endian `i32`. A string is a run of such integers, one per character of the
//! engine's 8-bit character set (the low byte is kept), ended by 0.
//!
//! A server answers on its game port + 1 and begins every reply with the request's own
//! bytes, so a request that carries an id comes back with it:
//!
//! * the ping: a non-zero integer (ours: `81` and a 32-bit id) → the player count, the
//!   count of attributes and the attributes, the map and the description (Red Eclipse
//!   1.6 adds strings after the description);
//! * Sauerbraten's extinfo: `00` and a command: `00` uptime, `01 cn` player stats (`-1`:
//!   all; one datagram with the client numbers, then one per player), `02` team scores.
//!   Each answer has `-1` (ack), the extinfo version (105) and the command's fields.

use crate::error::{DecodeError, DecodeErrorKind};
use crate::reader::Reader;
use crate::text::Text;

/// Most characters we read of one string (the engine's `MAXSTRLEN` is 260).
pub const MAX_STRING: usize = 260;
/// Most attributes we keep from a ping reply (Sauerbraten sends 5 or 7, Red Eclipse 1.6
/// sends 15; the engine's own limit is 32).
pub const MAX_ATTRS: usize = 32;
/// Most client numbers one player-ids reply may list (the engine's `MAXCLIENTS` is 128).
pub const MAX_PLAYERS: usize = 128;
/// Most strings after a Red Eclipse description that we keep.
pub const MAX_TRAILING: usize = 130;

/// The first byte of an extinfo request (a ping's first integer is never 0).
pub const EXTINFO: u8 = 0;
/// The extinfo version Sauerbraten 2010–2020 answers with.
pub const EXT_VERSION: i32 = 105;
/// The extinfo acknowledgement.
pub const EXT_ACK: i32 = -1;
/// The player-stats reply listing client numbers.
pub const EXT_PLAYER_IDS: i32 = -10;
/// The player-stats reply of one player.
pub const EXT_PLAYER_STATS: i32 = -11;

/// One extinfo command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ExtCommand {
    /// `00`: seconds since the server started.
    Uptime,
    /// `01 -1`: every player's stats.
    Players,
    /// `02`: the team scores.
    Teams,
}

impl ExtCommand {
    /// Every command, in the order asked.
    pub const ALL: [ExtCommand; 3] = [Self::Uptime, Self::Players, Self::Teams];

    /// The request's bytes after `00` (without the id).
    pub const fn bytes(self) -> &'static [u8] {
        match self {
            Self::Uptime => &[0x00],
            Self::Players => &[0x01, 0xff],
            Self::Teams => &[0x02],
        }
    }

    /// What it asks, for events and warnings.
    pub const fn word(self) -> &'static str {
        match self {
            Self::Uptime => "extinfo uptime",
            Self::Players => "extinfo players",
            Self::Teams => "extinfo teams",
        }
    }
}

/// Appends the compressed integer `v` (the engine's `putint`).
pub fn put_int(out: &mut Vec<u8>, v: i32) {
    if (-126..=127).contains(&v) {
        out.push(v.to_le_bytes()[0]);
    } else if let Ok(s) = i16::try_from(v) {
        out.push(0x80);
        out.extend_from_slice(&s.to_le_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends `s` as the engine's string: one compressed integer per byte, then 0 (bytes
/// past 127 as the negative numbers a signed `char` makes of them).
pub fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    for &b in s.iter().filter(|&&b| b != 0) {
        put_int(out, i32::from(b as i8));
    }
    out.push(0);
}

/// Reads one compressed integer.
pub fn get_int(r: &mut Reader<'_>, field: &'static str) -> Result<i32, DecodeError> {
    match r.u8(field)? {
        0x80 => r.i16_le(field).map(i32::from),
        0x81 => r.i32_le(field),
        b => Ok(i32::from(b as i8)),
    }
}

/// Reads a count: a compressed integer in `0..=limit`.
pub fn get_count(
    r: &mut Reader<'_>,
    field: &'static str,
    limit: usize,
) -> Result<usize, DecodeError> {
    let at = r.offset();
    let v = get_int(r, field)?;
    let n = usize::try_from(v).map_err(|_| DecodeError::invalid(at, field, "negative count"))?;
    if n > limit {
        return Err(DecodeError::new(
            at,
            field,
            DecodeErrorKind::TooLarge {
                limit: limit as u64,
            },
        ));
    }
    Ok(n)
}

/// Reads one string: its characters' bytes (in the engine's character set), at most
/// [`MAX_STRING`].
pub fn get_string(r: &mut Reader<'_>, field: &'static str) -> Result<Vec<u8>, DecodeError> {
    let at = r.offset();
    let mut s = Vec::new();
    // The engine reads characters until one is 0 as an integer, and stores each as a
    // byte: a character such as 0x100 stores a 0 byte, where its C string ends. The
    // characters after it are read (they are on the wire) and not kept, as the game
    // shows none of them.
    let mut ended = false;
    let mut read = 0usize;
    loop {
        let c = get_int(r, field)?;
        if c == 0 {
            return Ok(s);
        }
        if read >= MAX_STRING {
            return Err(DecodeError::new(
                at,
                field,
                DecodeErrorKind::TooLarge {
                    limit: MAX_STRING as u64,
                },
            ));
        }
        read += 1;
        let byte = c.to_le_bytes()[0];
        ended |= byte == 0;
        if !ended {
            s.push(byte);
        }
    }
}

/// A string as text: colour codes (`\f` and the character after it, `\f[…]` and
/// `\f(…)` whole) left out, ASCII as it is, every other byte of the engine's own
/// character set as U+FFFD (its table to Unicode is not carried here), control
/// characters dropped.
pub fn text(raw: &[u8]) -> Text {
    let mut t = Text::default();
    let mut it = raw.iter().copied();
    while let Some(b) = it.next() {
        match b {
            0x0c => {
                if let Some(open @ (b'[' | b'(')) = it.next() {
                    let close = if open == b'[' { b']' } else { b')' };
                    for c in it.by_ref() {
                        if c == close {
                            break;
                        }
                    }
                }
            }
            0x20..=0x7e => t.push(char::from(b)),
            0x00..=0x1f | 0x7f => {}
            _ => t.push('\u{fffd}'),
        }
    }
    t
}

/// The ping request carrying `id` (never 0: a first integer of 0 asks for extinfo).
pub fn ping_request(id: u32) -> Vec<u8> {
    let mut d = Vec::with_capacity(5);
    put_ping(&mut d, id);
    d
}

/// Appends the ping request carrying `id` (as [`ping_request`]).
pub fn put_ping(out: &mut Vec<u8>, id: u32) {
    out.push(0x81);
    out.extend_from_slice(&id.max(1).to_le_bytes());
}

/// The extinfo request for `cmd`, with `id` after it (the server ignores it and echoes it).
pub fn ext_request(cmd: ExtCommand, id: u32) -> Vec<u8> {
    let mut d = Vec::with_capacity(8);
    put_ext(&mut d, cmd, id);
    d
}

/// Appends the extinfo request for `cmd` with `id` (as [`ext_request`]).
pub fn put_ext(out: &mut Vec<u8>, cmd: ExtCommand, id: u32) {
    out.push(EXTINFO);
    out.extend_from_slice(cmd.bytes());
    put_ping(out, id);
}

/// Which game a ping reply is from, told by its attribute layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// Sauerbraten: 5 attributes (7 while paused or at another game speed): protocol,
    /// mode, seconds left, max clients, master mode.
    Sauerbraten,
    /// Red Eclipse: 6 or more attributes (15 in 1.6): version, mode, mutators, time
    /// left, max clients, master mode, then (1.6) game variables, mods, version major,
    /// minor and patch, platform, architecture, game state and time left in it.
    RedEclipse,
    /// Some other Cube 2 game (fewer than 5 attributes).
    Other,
}

impl Dialect {
    /// The dialect a reply with `attrs` is from.
    pub fn of(attrs: &[i32]) -> Self {
        match attrs.len() {
            5 | 7 => Self::Sauerbraten,
            n if n == 6 || n >= 8 => Self::RedEclipse,
            _ => Self::Other,
        }
    }

    /// Its name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Sauerbraten => "sauerbraten",
            Self::RedEclipse => "redeclipse",
            Self::Other => "cube2",
        }
    }
}

/// A ping reply, as sent (strings in the engine's character set).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PingReply {
    /// Clients on the server (Red Eclipse counts players, not bots).
    pub clients: i32,
    /// The attributes (at most [`MAX_ATTRS`]).
    pub attrs: Vec<i32>,
    /// The map.
    pub map: Vec<u8>,
    /// The server's description (its name).
    pub description: Vec<u8>,
    /// Strings after the description (Red Eclipse 1.6: its version branch, then the
    /// players' names), at most [`MAX_TRAILING`].
    pub trailing: Vec<Vec<u8>>,
}

impl PingReply {
    /// The game it is from.
    pub fn dialect(&self) -> Dialect {
        Dialect::of(&self.attrs)
    }

    /// Encodes it after `request` (for tests and seeds).
    pub fn encode(&self, request: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(request);
        put_int(out, self.clients);
        put_int(out, i32::try_from(self.attrs.len()).unwrap_or(0));
        for &a in &self.attrs {
            put_int(out, a);
        }
        put_string(out, &self.map);
        put_string(out, &self.description);
        for s in &self.trailing {
            put_string(out, s);
        }
    }
}

/// Decodes a ping reply after the echoed request (`body`: the bytes after it; `base`:
/// its offset in the datagram).
pub fn decode_ping(body: &[u8], base: usize) -> Result<PingReply, DecodeError> {
    let mut r = Reader::with_base(body, base);
    let clients = get_int(&mut r, "clients")?;
    let n = get_count(&mut r, "attribute count", MAX_ATTRS)?;
    let mut attrs = Vec::with_capacity(n);
    for _ in 0..n {
        attrs.push(get_int(&mut r, "attribute")?);
    }
    let map = get_string(&mut r, "map")?;
    let description = get_string(&mut r, "description")?;
    let mut trailing = Vec::new();
    while !r.is_empty() {
        if trailing.len() >= MAX_TRAILING {
            return Err(DecodeError::new(
                r.offset(),
                "trailing strings",
                DecodeErrorKind::TooLarge {
                    limit: MAX_TRAILING as u64,
                },
            ));
        }
        trailing.push(get_string(&mut r, "trailing string")?);
    }
    Ok(PingReply {
        clients,
        attrs,
        map,
        description,
        trailing,
    })
}

/// One player's extinfo stats (extinfo version 105), strings as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlayerStats {
    /// Client number.
    pub cn: i32,
    /// Ping in milliseconds.
    pub ping: i32,
    /// Name.
    pub name: Vec<u8>,
    /// Team.
    pub team: Vec<u8>,
    /// Frags.
    pub frags: i32,
    /// Flags scored.
    pub flags: i32,
    /// Deaths.
    pub deaths: i32,
    /// Team kills.
    pub teamkills: i32,
    /// Accuracy in percent.
    pub accuracy: i32,
    /// Health.
    pub health: i32,
    /// Armour.
    pub armour: i32,
    /// Selected gun.
    pub gun: i32,
    /// Privilege: 0 none, 1 master, 2 auth, 3 admin.
    pub privilege: i32,
    /// State: 0 alive, 1 dead, 2 spawning, 3 lagged, 4 editing, 5 spectator.
    pub state: i32,
    /// The first three bytes of the player's IPv4 address.
    pub ip: [u8; 3],
}

impl PlayerStats {
    /// Encodes its fields (after the echoed request, ack, version, 0 and `-11`).
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_int(out, self.cn);
        put_int(out, self.ping);
        put_string(out, &self.name);
        put_string(out, &self.team);
        for v in [
            self.frags,
            self.flags,
            self.deaths,
            self.teamkills,
            self.accuracy,
            self.health,
            self.armour,
            self.gun,
            self.privilege,
            self.state,
        ] {
            put_int(out, v);
        }
        out.extend_from_slice(&self.ip);
    }
}

/// One team's score.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TeamScore {
    /// Team name, as sent.
    pub name: Vec<u8>,
    /// Score.
    pub score: i32,
    /// Bases held (capture modes), else empty.
    pub bases: Vec<i32>,
}

/// The team-scores reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Teams {
    /// Whether the mode has teams (the server sends no teams otherwise).
    pub team_mode: bool,
    /// The game mode.
    pub mode: i32,
    /// Seconds left.
    pub seconds_left: i32,
    /// The teams.
    pub teams: Vec<TeamScore>,
}

/// An extinfo reply, after the echoed request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExtReply {
    /// Seconds since the server started.
    Uptime(i32),
    /// The client numbers of the players that follow, one datagram each.
    PlayerIds(Vec<i32>),
    /// One player.
    Player(PlayerStats),
    /// The server has no such player (or refused).
    PlayerError,
    /// The team scores.
    Teams(Teams),
}

/// Most teams we keep.
pub const MAX_TEAMS: usize = 64;
/// Most bases we read for one team.
pub const MAX_BASES: usize = 128;

/// Decodes the reply to `cmd` (`body`: the bytes after the echoed request, at `base`).
pub fn decode_ext(cmd: ExtCommand, body: &[u8], base: usize) -> Result<ExtReply, DecodeError> {
    let mut r = Reader::with_base(body, base);
    let at = r.offset();
    if get_int(&mut r, "ack")? != EXT_ACK {
        return Err(DecodeError::invalid(at, "ack", "not an extinfo answer"));
    }
    let at = r.offset();
    let v = get_int(&mut r, "extinfo version")?;
    if v != EXT_VERSION {
        return Err(DecodeError::invalid(
            at,
            "extinfo version",
            "an extinfo version other than 105",
        ));
    }
    let reply = match cmd {
        ExtCommand::Uptime => ExtReply::Uptime(get_int(&mut r, "uptime")?),
        ExtCommand::Players => {
            if get_int(&mut r, "error")? != 0 {
                return Ok(ExtReply::PlayerError);
            }
            let at = r.offset();
            match get_int(&mut r, "player reply type")? {
                EXT_PLAYER_IDS => {
                    let mut ids = Vec::new();
                    while !r.is_empty() {
                        if ids.len() >= MAX_PLAYERS {
                            return Err(DecodeError::new(
                                r.offset(),
                                "client numbers",
                                DecodeErrorKind::TooLarge {
                                    limit: MAX_PLAYERS as u64,
                                },
                            ));
                        }
                        ids.push(get_int(&mut r, "client number")?);
                    }
                    ExtReply::PlayerIds(ids)
                }
                EXT_PLAYER_STATS => {
                    let mut p = PlayerStats {
                        cn: get_int(&mut r, "cn")?,
                        ping: get_int(&mut r, "ping")?,
                        name: get_string(&mut r, "name")?,
                        team: get_string(&mut r, "team")?,
                        ..PlayerStats::default()
                    };
                    for (v, f) in [
                        (&mut p.frags, "frags"),
                        (&mut p.flags, "flags"),
                        (&mut p.deaths, "deaths"),
                        (&mut p.teamkills, "teamkills"),
                        (&mut p.accuracy, "accuracy"),
                        (&mut p.health, "health"),
                        (&mut p.armour, "armour"),
                        (&mut p.gun, "gun"),
                        (&mut p.privilege, "privilege"),
                        (&mut p.state, "state"),
                    ] {
                        *v = get_int(&mut r, f)?;
                    }
                    p.ip = r.array::<3>("ip")?;
                    ExtReply::Player(p)
                }
                _ => {
                    return Err(DecodeError::invalid(
                        at,
                        "player reply type",
                        "neither -10 nor -11",
                    ))
                }
            }
        }
        ExtCommand::Teams => {
            let team_mode = get_int(&mut r, "team mode")? == 0;
            let mode = get_int(&mut r, "mode")?;
            let seconds_left = get_int(&mut r, "seconds left")?;
            let mut teams = Vec::new();
            while team_mode && !r.is_empty() {
                if teams.len() >= MAX_TEAMS {
                    return Err(DecodeError::new(
                        r.offset(),
                        "teams",
                        DecodeErrorKind::TooLarge {
                            limit: MAX_TEAMS as u64,
                        },
                    ));
                }
                let name = get_string(&mut r, "team name")?;
                let score = get_int(&mut r, "team score")?;
                let at = r.offset();
                let n = get_int(&mut r, "bases")?;
                let bases = match usize::try_from(n) {
                    // -1: a mode without bases.
                    Err(_) => Vec::new(),
                    Ok(n) if n > MAX_BASES => {
                        return Err(DecodeError::new(
                            at,
                            "bases",
                            DecodeErrorKind::TooLarge {
                                limit: MAX_BASES as u64,
                            },
                        ))
                    }
                    Ok(n) => {
                        let mut b = Vec::with_capacity(n.min(r.remaining()));
                        for _ in 0..n {
                            b.push(get_int(&mut r, "base")?);
                        }
                        b
                    }
                };
                teams.push(TeamScore { name, score, bases });
            }
            ExtReply::Teams(Teams {
                team_mode,
                mode,
                seconds_left,
                teams,
            })
        }
    };
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip_in_each_width() {
        for v in [
            0,
            1,
            -1,
            127,
            -126,
            -127,
            128,
            -128,
            260,
            -32768,
            32767,
            32768,
            i32::MIN,
            i32::MAX,
        ] {
            let mut d = Vec::new();
            put_int(&mut d, v);
            let mut r = Reader::new(&d);
            assert_eq!(get_int(&mut r, "v").unwrap(), v, "{d:02x?}");
            assert!(r.is_empty());
        }
        // 260 as Sauerbraten sends its protocol version.
        let mut d = Vec::new();
        put_int(&mut d, 260);
        assert_eq!(d, [0x80, 0x04, 0x01]);
        assert!(get_int(&mut Reader::new(&[0x81, 1, 2]), "v").is_err());
        assert!(get_int(&mut Reader::new(&[0x80, 1]), "v").is_err());
    }

    #[test]
    fn the_real_sauerbraten_ping_reply_decodes() {
        // cube2-server 2020-12-27, `-nMy Sauer -c5`, asked with `01`.
        let d = b"\x01\x00\x05\x80\x04\x01\x00\x00\x05\x00\x00My Sauer\x00";
        let p = decode_ping(&d[1..], 1).unwrap();
        assert_eq!(p.attrs, [260, 0, 0, 5, 0]);
        assert_eq!(p.dialect(), Dialect::Sauerbraten);
        assert_eq!(text(&p.description), "My Sauer");
        assert!(p.map.is_empty());
    }

    #[test]
    fn strings_are_capped_and_colour_codes_left_out() {
        let mut d = Vec::new();
        put_string(&mut d, &[b'a'; MAX_STRING + 1]);
        assert!(matches!(
            get_string(&mut Reader::new(&d), "s").unwrap_err().kind,
            DecodeErrorKind::TooLarge { .. }
        ));
        assert_eq!(
            text(b"\x0c3red\x0c7 \x0c[0xff0000]x\x0c(img)y\xe9\x1b"),
            "red xy\u{fffd}"
        );
        let mut d = Vec::new();
        put_string(&mut d, b"\xe9t\xe9");
        assert_eq!(get_string(&mut Reader::new(&d), "s").unwrap(), b"\xe9t\xe9");
        // a character whose byte is 0 (0x7400, as 80 00 74) ends the string as the game
        // stores it; what follows up to the real end is read and left (the fuzzer's
        // re-encoding case)
        let d = [b'a', 0x80, 0x00, 0x74, b'b', 0, b'c', 0];
        let mut r = Reader::new(&d);
        assert_eq!(get_string(&mut r, "s").unwrap(), b"a");
        assert_eq!(get_string(&mut r, "s").unwrap(), b"c");
    }

    #[test]
    fn counts_that_lie_are_errors() {
        let mut d = Vec::new();
        put_int(&mut d, 0);
        put_int(&mut d, 1_000_000);
        assert!(decode_ping(&d, 0).is_err());
        let mut d = Vec::new();
        put_int(&mut d, 0);
        put_int(&mut d, -3);
        assert!(decode_ping(&d, 0).is_err());
        // Attributes promised but missing.
        assert!(decode_ping(&[0, 5, 1, 2], 0).is_err());
    }
}

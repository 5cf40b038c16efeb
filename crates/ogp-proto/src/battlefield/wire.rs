//! The Frostbite remote-administration packet (Battlefield: Bad Company 2, 3, 4,
//! Hardline, 1; Medal of Honor 2010 and Warfighter) and the answers of the three
//! commands a query sends without logging in: `serverInfo`, `version` and
//! `listPlayers all`.
//!
//! A packet, every integer a little-endian `u32`:
//!
//! | field | meaning |
//! |---|---|
//! | sequence | bits 0–29 the sequence number; bit 30 set on a response; bit 31 set when the server originated the exchange (an event) |
//! | size | the whole packet's size in bytes, header included |
//! | word count | how many words follow |
//! | words | each a `u32` length, that many bytes, and a NUL (not counted) |
//!
//! The protocol documents packets of at most 16,384 bytes; we accept up to
//! [`MAX_PACKET`], cap the word count at [`MAX_WORDS`] and a word at what its packet
//! holds. An answer's first word is `OK` or an error (`UnknownCommand`,
//! `InvalidArguments`, `LogInRequired`…).
//!
//! `serverInfo`'s words after `OK` (the layouts of the games' server-administration
//! documents, in order):
//!
//! | words | every game |
//! |---|---|
//! | 1–7 | server name, players, max players, game mode, map, rounds played, rounds total |
//! | 8… | the team scores: their count N, N scores (decimal numbers), the target score |
//! | then | online state, ranked, PunkBuster, password (`true`/`false`), uptime, round time (seconds) |
//!
//! and then, per game: Bad Company 2: game mod (`BC2`, `VIETNAM`), map pack, game address
//! (`IP:PORT`), PunkBuster version, join queue, region; Battlefield 3 (and Medal of Honor:
//! Warfighter): game address, PunkBuster version, join queue, region, closest ping site,
//! country, matchmaking; Battlefield 4, Hardline and 1: game address, PunkBuster version,
//! join queue, region, closest ping site, country, Blaze player count, Blaze game state.
//! Servers of older releases stop early; every word past the common part is optional, and
//! words beyond the known layout are kept ([`ServerInfo::extra`]).
//!
//! `listPlayers all`: `OK`, the number of fields F, F field names, the number of players
//! P, then P rows of F words. Bad Company 2 sends `clanTag name guid teamId squadId kills
//! deaths score ping`; Battlefield 3 `name guid teamId squadId kills deaths score rank`;
//! Battlefield 4 and later add `ping type`.

use crate::error::{DecodeError, DecodeErrorKind};
use crate::model::Text;
use crate::reader::Reader;

/// The header: sequence, size, word count.
pub const HEADER: usize = 12;
/// The largest packet we hold (four times the documented 16,384 bytes).
pub const MAX_PACKET: usize = 65_536;
/// The most words a packet may announce.
pub const MAX_WORDS: u32 = 8_192;
/// The most players we keep from `listPlayers`.
pub const MAX_PLAYERS: usize = 1_024;
/// The most fields a player row may have.
pub const MAX_FIELDS: usize = 64;
/// The most teams a `serverInfo` may list.
pub const MAX_TEAMS: usize = 16;

/// Sequence bit 31: the server originated this exchange (an event).
pub const FROM_SERVER: u32 = 0x8000_0000;
/// Sequence bit 30: this packet is a response.
pub const IS_RESPONSE: u32 = 0x4000_0000;
/// The sequence number's bits.
pub const SEQUENCE_MASK: u32 = 0x3fff_ffff;

/// One decoded packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// The sequence word as sent (flags included).
    pub sequence: u32,
    /// The words, as text (UTF-8, or Latin-1 when not).
    pub words: Vec<Text>,
}

impl Packet {
    /// Whether it is a response (bit 30).
    pub fn is_response(&self) -> bool {
        self.sequence & IS_RESPONSE != 0
    }

    /// Whether the server originated it (bit 31).
    pub fn from_server(&self) -> bool {
        self.sequence & FROM_SERVER != 0
    }

    /// The sequence number without its flags.
    pub fn number(&self) -> u32 {
        self.sequence & SEQUENCE_MASK
    }
}

/// Appends a packet with `sequence` (flags included) and `words` to `out`.
pub fn encode(sequence: u32, words: &[&str], out: &mut Vec<u8>) {
    let size = words
        .iter()
        .fold(HEADER, |n, w| n.saturating_add(w.len() + 5));
    let put = |out: &mut Vec<u8>, n: usize| {
        out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
    };
    out.extend_from_slice(&sequence.to_le_bytes());
    put(out, size);
    put(out, words.len());
    for w in words {
        put(out, w.len());
        out.extend_from_slice(w.as_bytes());
        out.push(0);
    }
}

/// A client's request: `sequence` (its number, no flags) and `words`.
pub fn request(sequence: u32, words: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    encode(sequence & SEQUENCE_MASK, words, &mut out);
    out
}

/// The server's response to the client's request number `sequence`.
pub fn response(sequence: u32, words: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    encode((sequence & SEQUENCE_MASK) | IS_RESPONSE, words, &mut out);
    out
}

/// The size of the first packet in `input` once it is all there: `Ok(None)` while its
/// header or body is incomplete; an error when the size cannot be a packet (below the
/// header, or past [`MAX_PACKET`]).
pub fn split_packet(input: &Reader<'_>) -> Result<Option<usize>, DecodeError> {
    let mut r = input.clone();
    if r.remaining() < 8 {
        return Ok(None);
    }
    r.u32_le("Sequence")?;
    let at = r.offset();
    let size = usize::try_from(r.u32_le("PacketSize")?).unwrap_or(usize::MAX);
    if size < HEADER {
        return Err(DecodeError::invalid(
            at,
            "PacketSize",
            "a packet size below its own 12-byte header",
        ));
    }
    if size > MAX_PACKET {
        return Err(DecodeError::new(
            at,
            "PacketSize",
            DecodeErrorKind::TooLarge {
                limit: MAX_PACKET as u64,
            },
        ));
    }
    if input.remaining() < size {
        return Ok(None);
    }
    Ok(Some(size))
}

/// Decodes one whole packet (`r` holds exactly its bytes, as [`split_packet`] sized
/// them). Every word must fit in the packet; bytes after the last word are an error.
pub fn decode_packet(r: &mut Reader<'_>) -> Result<Packet, DecodeError> {
    let sequence = r.u32_le("Sequence")?;
    r.u32_le("PacketSize")?;
    let at = r.offset();
    let count = r.u32_le("NumWords")?;
    if count > MAX_WORDS {
        return Err(DecodeError::new(
            at,
            "NumWords",
            DecodeErrorKind::TooLarge {
                limit: u64::from(MAX_WORDS),
            },
        ));
    }
    // Each word takes at least 5 bytes: a count larger than the packet can hold lies.
    if usize::try_from(count).unwrap_or(usize::MAX) > r.remaining() / 5 {
        return Err(DecodeError::invalid(
            at,
            "NumWords",
            "more words than the packet's size can hold",
        ));
    }
    let mut words = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    for _ in 0..count {
        let wat = r.offset();
        let len = usize::try_from(r.u32_le("WordSize")?).unwrap_or(usize::MAX);
        if len >= r.remaining() {
            return Err(DecodeError::new(
                wat,
                "WordSize",
                DecodeErrorKind::TooLarge {
                    limit: r.remaining().saturating_sub(1) as u64,
                },
            ));
        }
        let bytes = r.take(len, "Word")?;
        let nul_at = r.offset();
        if r.u8("WordTerminator")? != 0 {
            return Err(DecodeError::new(
                nul_at,
                "WordTerminator",
                DecodeErrorKind::MissingNul,
            ));
        }
        let (text, _) = crate::text::decode_utf8_or_latin1(Err(bytes));
        words.push(text);
    }
    if !r.is_empty() {
        return Err(DecodeError::invalid(
            r.offset(),
            "Packet",
            "bytes after the last word",
        ));
    }
    Ok(Packet { sequence, words })
}

/// Which game's `serverInfo` layout an answer follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Layout {
    /// Bad Company 2 (a game mod word, `BC2` or `VIETNAM`, after the round time).
    BadCompany2,
    /// Battlefield 3 and Medal of Honor: Warfighter (matchmaking after the country).
    Bf3,
    /// Battlefield 4, Hardline and 1 (Blaze player count and game state after the
    /// country).
    Bf4,
    /// Only the common part was sent.
    #[default]
    Common,
}

impl Layout {
    /// Its name in JSON and rules.
    pub const fn name(self) -> &'static str {
        match self {
            Self::BadCompany2 => "bc2",
            Self::Bf3 => "bf3",
            Self::Bf4 => "bf4",
            Self::Common => "common",
        }
    }
}

/// A `serverInfo` answer, every field as sent (numbers parsed; those a layout lacks are
/// `None`).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ServerInfo {
    /// The layout the words follow.
    pub layout: Layout,
    /// The server name.
    pub name: Text,
    /// Players on the server.
    pub players: u32,
    /// The most players.
    pub max_players: u32,
    /// The game mode (`ConquestLarge0`, `RushLarge0`…).
    pub game_mode: Text,
    /// The map (`MP_001`, `XP0_Metro`…).
    pub map: Text,
    /// Rounds played on this map.
    pub rounds_played: u32,
    /// Rounds per map.
    pub rounds_total: u32,
    /// Each team's score (tickets), as sent (a decimal number).
    pub team_scores: Vec<Text>,
    /// The score that wins the round.
    pub target_score: i64,
    /// The online state word (often empty).
    pub online_state: Text,
    /// Ranked.
    pub ranked: Option<bool>,
    /// PunkBuster on.
    pub punkbuster: Option<bool>,
    /// Joining needs a password.
    pub password: Option<bool>,
    /// Seconds since the server started.
    pub uptime: Option<u32>,
    /// Seconds since the round started.
    pub round_time: Option<u32>,
    /// Bad Company 2: `BC2` or `VIETNAM`.
    pub game_mod: Option<Text>,
    /// Bad Company 2: the map pack.
    pub map_pack: Option<Text>,
    /// The game's address, `IP:PORT`.
    pub game_address: Option<Text>,
    /// The PunkBuster version.
    pub punkbuster_version: Option<Text>,
    /// The join queue is on.
    pub join_queue: Option<bool>,
    /// The region (`NAm`, `EU`…).
    pub region: Option<Text>,
    /// The closest ping site (`iad`…).
    pub ping_site: Option<Text>,
    /// The country code.
    pub country: Option<Text>,
    /// Battlefield 3: matchmaking (quick match) enabled.
    pub matchmaking: Option<bool>,
    /// Battlefield 4 and later.
    pub blaze_player_count: Option<u32>,
    /// Battlefield 4 and later.
    pub blaze_game_state: Option<Text>,
    /// Words past the known layout, in order.
    pub extra: Vec<Text>,
}

/// Where a word sits, for errors: its index in the answer.
fn bad(index: usize, field: &'static str, why: &'static str) -> DecodeError {
    DecodeError::invalid(index, field, why)
}

struct Words<'a> {
    words: &'a [Text],
    at: usize,
}

impl<'a> Words<'a> {
    fn next(&mut self, field: &'static str) -> Result<&'a Text, DecodeError> {
        let w = self.words.get(self.at).ok_or(DecodeError::new(
            self.at,
            field,
            DecodeErrorKind::Truncated {
                needed: 1,
                available: 0,
            },
        ))?;
        self.at += 1;
        Ok(w)
    }

    fn opt(&mut self) -> Option<&'a Text> {
        let w = self.words.get(self.at)?;
        self.at += 1;
        Some(w)
    }

    fn left(&self) -> usize {
        self.words.len().saturating_sub(self.at)
    }

    fn num<T: std::str::FromStr>(&mut self, field: &'static str) -> Result<T, DecodeError> {
        let at = self.at;
        self.next(field)?
            .trim()
            .parse()
            .map_err(|_| bad(at, field, "not a number"))
    }
}

fn boolean(w: &str) -> Option<bool> {
    match w {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// The error word of an answer that is not `OK` (`None` when it is).
pub fn status_word(words: &[Text]) -> Option<&str> {
    match words.first().map(Text::as_str) {
        Some("OK") => None,
        Some(other) => Some(other),
        None => Some(""),
    }
}

/// Decodes a `serverInfo` answer's words (the first, `OK`, included). Word indexes
/// stand in for byte offsets in errors.
pub fn decode_server_info(words: &[Text]) -> Result<ServerInfo, DecodeError> {
    let mut w = Words { words, at: 1 };
    let mut s = ServerInfo {
        name: w.next("serverName")?.clone(),
        players: w.num("currentPlayercount")?,
        max_players: w.num("maxPlayercount")?,
        game_mode: w.next("currentGamemode")?.clone(),
        map: w.next("currentMap")?.clone(),
        rounds_played: w.num("roundsPlayed")?,
        rounds_total: w.num("roundsTotal")?,
        ..ServerInfo::default()
    };
    let at = w.at;
    let teams: usize = w.num("scores.count")?;
    if teams > MAX_TEAMS {
        return Err(DecodeError::new(
            at,
            "scores.count",
            DecodeErrorKind::TooLarge {
                limit: MAX_TEAMS as u64,
            },
        ));
    }
    for _ in 0..teams {
        let at = w.at;
        let score = w.next("scores.score")?;
        if score.trim().parse::<f64>().is_err() {
            return Err(bad(at, "scores.score", "not a number"));
        }
        s.team_scores.push(score.clone());
    }
    s.target_score = w.num("scores.targetScore")?;
    // Older releases end the answer here or anywhere after.
    s.online_state = w.opt().cloned().unwrap_or_default();
    s.ranked = w.opt().and_then(|v| boolean(v));
    s.punkbuster = w.opt().and_then(|v| boolean(v));
    s.password = w.opt().and_then(|v| boolean(v));
    s.uptime = w.opt().and_then(|v| v.trim().parse().ok());
    s.round_time = w.opt().and_then(|v| v.trim().parse().ok());
    if w.left() == 0 {
        return Ok(s);
    }
    let next_is_mod = w
        .words
        .get(w.at)
        .is_some_and(|m| matches!(m.as_str(), "BC2" | "VIETNAM"));
    if next_is_mod {
        s.layout = Layout::BadCompany2;
        s.game_mod = w.opt().cloned();
        s.map_pack = w.opt().cloned();
    }
    s.game_address = w.opt().cloned();
    s.punkbuster_version = w.opt().cloned();
    s.join_queue = w.opt().and_then(|v| boolean(v));
    s.region = w.opt().cloned();
    if s.layout != Layout::BadCompany2 {
        s.ping_site = w.opt().cloned();
        s.country = w.opt().cloned();
        match w.left() {
            0 => {}
            1 => {
                s.layout = Layout::Bf3;
                s.matchmaking = w.opt().and_then(|v| boolean(v));
            }
            _ => {
                s.layout = Layout::Bf4;
                s.blaze_player_count = w.opt().and_then(|v| v.trim().parse().ok());
                s.blaze_game_state = w.opt().cloned();
            }
        }
    }
    while let Some(x) = w.opt() {
        s.extra.push(x.clone());
    }
    Ok(s)
}

/// A `listPlayers` answer: the field names and one row of values per player.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct PlayerTable {
    /// The field names, as sent.
    pub fields: Vec<Text>,
    /// Each player's values, in field order.
    pub rows: Vec<Vec<Text>>,
    /// How many players the answer announced (more than `rows` when we kept at most
    /// [`MAX_PLAYERS`]).
    pub announced: u32,
}

impl PlayerTable {
    /// The value of `field` in `row`.
    pub fn get<'a>(&self, row: &'a [Text], field: &str) -> Option<&'a str> {
        let i = self.fields.iter().position(|f| f == field)?;
        row.get(i).map(Text::as_str)
    }
}

/// Decodes a `listPlayers` answer's words (`OK` included).
pub fn decode_players(words: &[Text]) -> Result<PlayerTable, DecodeError> {
    let mut w = Words { words, at: 1 };
    let at = w.at;
    let nf: usize = w.num("fieldCount")?;
    if nf == 0 || nf > MAX_FIELDS {
        return Err(bad(at, "fieldCount", "not between 1 and 64"));
    }
    let mut fields = Vec::with_capacity(nf);
    for _ in 0..nf {
        fields.push(w.next("fieldName")?.clone());
    }
    let at = w.at;
    let announced: u32 = w.num("playerCount")?;
    let n = usize::try_from(announced).unwrap_or(usize::MAX);
    // The rows must all be there: a count the words cannot back is a lie.
    if n.checked_mul(nf).is_none_or(|need| need > w.left()) {
        return Err(bad(
            at,
            "playerCount",
            "more players than the answer has words for",
        ));
    }
    let kept = n.min(MAX_PLAYERS);
    let mut rows = Vec::with_capacity(kept);
    for _ in 0..kept {
        let row = w.words.get(w.at..w.at + nf).unwrap_or_default().to_vec();
        w.at += nf;
        rows.push(row);
    }
    Ok(PlayerTable {
        fields,
        rows,
        announced,
    })
}

/// The `version` answer: game (`BC2`, `BF3`, `BF4`, `BFHL`, `MOH`, `MOHW`…) and build.
pub fn decode_version(words: &[Text]) -> (Option<Text>, Option<Text>) {
    (words.get(1).cloned(), words.get(2).cloned())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn texts(words: &[&str]) -> Vec<Text> {
        words.iter().map(|w| Text::from(*w)).collect()
    }

    #[test]
    fn a_packet_round_trips_and_its_size_is_checked() {
        let p = response(7, &["OK", "a b", ""]);
        let r = Reader::new(&p);
        assert_eq!(split_packet(&r).unwrap(), Some(p.len()));
        let got = decode_packet(&mut Reader::new(&p)).unwrap();
        assert!(got.is_response() && !got.from_server());
        assert_eq!(got.number(), 7);
        assert_eq!(got.words, texts(&["OK", "a b", ""]));
        // Incomplete: not yet.
        assert_eq!(split_packet(&Reader::new(&p[..p.len() - 1])).unwrap(), None);
        // A size below the header, or past the cap.
        let mut bad = p.clone();
        bad[4..8].copy_from_slice(&3u32.to_le_bytes());
        assert!(split_packet(&Reader::new(&bad)).is_err());
        bad[4..8].copy_from_slice(&(1u32 << 30).to_le_bytes());
        let e = split_packet(&Reader::new(&bad)).unwrap_err().to_string();
        assert!(e.contains("PacketSize at byte 4"), "{e}");
    }

    #[test]
    fn lying_counts_and_sizes_are_errors() {
        // A word of 1 GB announced inside a small packet.
        let mut p = response(1, &["OK"]);
        p[12..16].copy_from_slice(&(1u32 << 30).to_le_bytes());
        let e = decode_packet(&mut Reader::new(&p)).unwrap_err().to_string();
        assert!(e.contains("WordSize at byte 12"), "{e}");
        // More words announced than the packet holds.
        let mut p = response(1, &["OK"]);
        p[8..12].copy_from_slice(&5000u32.to_le_bytes());
        let e = decode_packet(&mut Reader::new(&p)).unwrap_err().to_string();
        assert!(e.contains("NumWords"), "{e}");
        p[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = decode_packet(&mut Reader::new(&p)).unwrap_err().to_string();
        assert!(e.contains("NumWords"), "{e}");
        // A missing NUL.
        let mut p = response(1, &["OK"]);
        let last = p.len() - 1;
        p[last] = b'x';
        let e = decode_packet(&mut Reader::new(&p)).unwrap_err().to_string();
        assert!(e.contains("WordTerminator"), "{e}");
        // Fewer words announced than sent.
        let mut p = response(1, &["OK", "x"]);
        p[8..12].copy_from_slice(&1u32.to_le_bytes());
        assert!(decode_packet(&mut Reader::new(&p)).is_err());
    }

    #[test]
    fn server_info_layouts() {
        let common = [
            "OK", "name", "3", "16", "CONQUEST", "MP_001", "0", "2", "2", "10.5", "20", "0",
        ];
        let s = decode_server_info(&texts(&common)).unwrap();
        assert_eq!(s.layout, Layout::Common);
        assert_eq!(s.team_scores, texts(&["10.5", "20"]));
        let mut bc2 = common.to_vec();
        bc2.extend([
            "",
            "true",
            "false",
            "true",
            "100",
            "50",
            "BC2",
            "0",
            "1.2.3.4:19567",
        ]);
        bc2.extend(["v1", "true", "EU"]);
        let s = decode_server_info(&texts(&bc2)).unwrap();
        assert_eq!(s.layout, Layout::BadCompany2);
        assert_eq!(s.game_mod.as_deref(), Some("BC2"));
        assert_eq!(s.region.as_deref(), Some("EU"));
        assert_eq!(s.password, Some(true));
        let mut bf3 = common.to_vec();
        bf3.extend([
            "",
            "true",
            "false",
            "false",
            "100",
            "50",
            "1.2.3.4:25200",
            "v1",
        ]);
        bf3.extend(["false", "NAm", "iad", "US", "true"]);
        let s = decode_server_info(&texts(&bf3)).unwrap();
        assert_eq!(s.layout, Layout::Bf3);
        assert_eq!(s.matchmaking, Some(true));
        let mut bf4 = bf3.clone();
        bf4.pop();
        bf4.extend(["64", "0", "more"]);
        let s = decode_server_info(&texts(&bf4)).unwrap();
        assert_eq!(s.layout, Layout::Bf4);
        assert_eq!(s.blaze_player_count, Some(64));
        assert_eq!(s.extra, texts(&["more"]));
        // A lying team count, a word that is not a number.
        let mut lie = common.to_vec();
        lie[8] = "100000";
        assert!(decode_server_info(&texts(&lie)).is_err());
        let mut nan = common.to_vec();
        nan[2] = "many";
        let e = decode_server_info(&texts(&nan)).unwrap_err().to_string();
        assert!(e.contains("currentPlayercount at byte 2"), "{e}");
        assert!(decode_server_info(&texts(&common[..5])).is_err());
    }

    #[test]
    fn player_tables() {
        let w = texts(&["OK", "2", "name", "ping", "2", "a", "10", "b", "20"]);
        let t = decode_players(&w).unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.get(&t.rows[1], "ping"), Some("20"));
        // A count the words cannot back.
        let w = texts(&["OK", "2", "name", "ping", "3", "a", "10", "b", "20"]);
        assert!(decode_players(&w).is_err());
        let w = texts(&["OK", "2", "name", "ping", "4294967295"]);
        assert!(decode_players(&w).is_err());
        let w = texts(&["OK", "0", "0"]);
        assert!(decode_players(&w).is_err());
    }
}

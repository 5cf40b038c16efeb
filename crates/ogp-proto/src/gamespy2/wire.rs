//! GameSpy v2's request and reply, decoded through the bounded reader.
//!
//! * Request (client → server, 10 bytes): `FE FD 00`, a 4-byte id (big-endian), then
//!   one byte per section, `FF` to ask for it and `00` not to: server, players, teams.
//! * Reply (one datagram): `00`, the id echoed, then the asked sections in that order:
//!   * server: `key 00 value 00 …`, ended by an empty key;
//!   * players, then teams: a `00`, a count byte, the column keys (`player_`, `score_`,
//!     `ping_`, `team_`…; `team_t`, `score_t`…) each ended by a `00` and the list by an
//!     empty key, then `count` rows of one `value 00` per column.
//!
//! Servers vary (the facts qstat, gamedig, opengsq and GameQ agree on): some leave the
//! leading `00` out, America's Army leaves the count out (then the next bytes are a usual
//! first key such as `player_`, and rows are read until one starts with an empty value),
//! and a section may stop early. Each such case is read and noted in [`Reply::warnings`]. Strings are
//! read as UTF-8 when they are, else in the chosen charset (Latin-1 by default).

use crate::charset::Charset;
use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::gamespy3::{Column, ServerInfo};
use crate::model::Text;
use crate::reader::Reader;
use crate::text::Unchosen;

/// The request's first three bytes.
pub const REQUEST_MAGIC: [u8; 3] = [0xfe, 0xfd, 0x00];
/// Length of a request.
pub const REQUEST_LEN: usize = 10;
/// What follows the id in a GameSpy v3 packet, never in a GameSpy v2 reply.
pub const SPLITNUM: &[u8] = b"splitnum\0";
/// Most columns a section keeps; further keys are read and dropped with a warning.
pub const MAX_COLUMNS: usize = 64;
/// Most rows a section without a count keeps.
pub const MAX_ROWS: usize = 1024;
/// Most server keys kept; further pairs are read and dropped with a warning.
pub const MAX_KEYS: usize = 1024;

/// A GameSpy v2 request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The id the reply echoes.
    pub id: u32,
    /// Ask for the server keys.
    pub server: bool,
    /// Ask for the player section.
    pub players: bool,
    /// Ask for the team section.
    pub teams: bool,
}

impl Request {
    /// A request for all three sections.
    pub const fn full(id: u32) -> Self {
        Self {
            id,
            server: true,
            players: true,
            teams: true,
        }
    }

    /// Appends the 10 bytes of the request to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&REQUEST_MAGIC);
        out.extend_from_slice(&self.id.to_be_bytes());
        for on in [self.server, self.players, self.teams] {
            out.push(if on { 0xff } else { 0x00 });
        }
    }

    /// Reads a request (exactly 10 bytes; each section byte `00` or not).
    pub fn decode(datagram: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(datagram);
        if r.array::<3>("magic")? != REQUEST_MAGIC {
            return Err(DecodeError::new(0, "magic", DecodeErrorKind::BadMagic));
        }
        let id = u32::from_be_bytes(r.array::<4>("id")?);
        let [server, players, teams] = r.array::<3>("sections")?;
        if !r.is_empty() {
            return Err(DecodeError::invalid(
                REQUEST_LEN,
                "sections",
                "bytes after the three section bytes",
            ));
        }
        Ok(Self {
            id,
            server: server != 0,
            players: players != 0,
            teams: teams != 0,
        })
    }
}

/// A decoded reply.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Reply {
    /// The id echoed.
    pub id: u32,
    /// Server keys, player and team columns, in wire order.
    pub info: ServerInfo,
    /// The player count the section announced (`None`: left out).
    pub player_count: Option<u8>,
    /// The team count the section announced (`None`: left out).
    pub team_count: Option<u8>,
    /// What was read in a tolerant way.
    pub warnings: Vec<DecodeWarning>,
}

/// Reads a reply, strings that are not UTF-8 as Latin-1.
pub fn decode_reply(datagram: &[u8]) -> Result<Reply, DecodeError> {
    decode_reply_with(datagram, Charset::Auto)
}

/// Reads a reply, strings that are not UTF-8 in `charset` (`Auto`: Latin-1, with a
/// warning).
pub fn decode_reply_with(datagram: &[u8], charset: Charset) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(datagram).with_charset(charset);
    if r.u8("type")? != 0 {
        return Err(DecodeError::new(0, "type", DecodeErrorKind::BadMagic));
    }
    let id = u32::from_be_bytes(r.array::<4>("id")?);
    if r.peek_rest().starts_with(SPLITNUM) {
        return Err(DecodeError::invalid(
            5,
            "server",
            "a GameSpy v3 packet (splitnum), not a GameSpy v2 reply",
        ));
    }
    let mut reply = Reply {
        id,
        ..Reply::default()
    };
    let mut latin1 = None;
    // The server section, unless the reply starts with a player section (`00` count).
    if !matches!(r.peek_rest(), [0, ..]) {
        loop {
            let key = string(&mut r, "server key", &mut latin1)?;
            if key.is_empty() {
                break;
            }
            let value = string(&mut r, "server value", &mut latin1)?;
            if reply.info.server.len() < MAX_KEYS {
                reply.info.server.push((key, value));
            } else if reply.info.server.len() == MAX_KEYS {
                warn(
                    &mut reply,
                    r.offset(),
                    "server",
                    "server keys past the cap dropped",
                );
            }
        }
    }
    if !r.is_empty() {
        let (cols, count) = section(&mut r, "players", &mut reply.warnings, &mut latin1)?;
        reply.info.players = cols;
        reply.player_count = count;
    }
    if !r.is_empty() {
        let (cols, count) = section(&mut r, "teams", &mut reply.warnings, &mut latin1)?;
        reply.info.teams = cols;
        reply.team_count = count;
    }
    // A trailing `00` ends some replies.
    while r.peek_u8() == Some(0) {
        r.u8("end")?;
    }
    if !r.is_empty() {
        warn(
            &mut reply,
            r.offset(),
            "end",
            "bytes after the team section ignored",
        );
    }
    if let Some(at) = latin1 {
        reply.warnings.push(DecodeWarning {
            offset: at,
            field: "string",
            message: "not UTF-8: read as Latin-1",
        });
    }
    Ok(reply)
}

fn warn(reply: &mut Reply, offset: usize, field: &'static str, message: &'static str) {
    reply.warnings.push(DecodeWarning {
        offset,
        field,
        message,
    });
}

/// A zero-terminated string; `latin1` keeps the offset of the first one guessed.
fn string(
    r: &mut Reader<'_>,
    field: &'static str,
    latin1: &mut Option<usize>,
) -> Result<Text, DecodeError> {
    let at = r.offset();
    let bytes = r.cstr(field)?;
    let found = std::str::from_utf8(bytes).map_err(|_| bytes);
    let (text, guessed) = crate::text::decode_text(found, r, Unchosen::Latin1);
    if guessed && latin1.is_none() {
        *latin1 = Some(at);
    }
    Ok(text)
}

/// The column keys a section may start with when its count is left out.
const FIRST_KEYS: [&[u8]; 10] = [
    b"player_", b"score_", b"ping_", b"team_", b"deaths_", b"kills_", b"pid_", b"skill_",
    b"team_t", b"score_t",
];

/// Whether the next byte starts a column key rather than being a count: the string from
/// it is one of the usual first keys ([`FIRST_KEYS`]: `player_`, `team_t`…). A count is
/// a byte like any other (66 players is `B`), so any other string after a letter is a
/// count followed by its first key.
fn starts_key(r: &Reader<'_>) -> bool {
    let rest = r.peek_rest();
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let key = rest.get(..end).unwrap_or_default();
    FIRST_KEYS.contains(&key)
}

/// One player or team section: columns and the announced count.
fn section(
    r: &mut Reader<'_>,
    name: &'static str,
    warnings: &mut Vec<DecodeWarning>,
    latin1: &mut Option<usize>,
) -> Result<(Vec<Column>, Option<u8>), DecodeError> {
    let at = r.offset();
    if r.peek_u8() == Some(0) {
        r.u8(name)?;
    } else {
        warnings.push(DecodeWarning {
            offset: at,
            field: name,
            message: "no 00 before the section",
        });
    }
    if r.is_empty() {
        // Only the `00`: the reply's end.
        return Ok((Vec::new(), None));
    }
    let count = if starts_key(r) {
        warnings.push(DecodeWarning {
            offset: r.offset(),
            field: name,
            message: "no count: rows read until an empty first value",
        });
        None
    } else {
        Some(r.u8(name)?)
    };
    let mut cols: Vec<Column> = Vec::new();
    let mut keys = 0usize;
    loop {
        if r.is_empty() {
            // A section cut after its count (nothing asked, or a short reply).
            return Ok((cols, count));
        }
        let key = string(r, "column key", latin1)?;
        if key.is_empty() {
            break;
        }
        keys = keys.saturating_add(1);
        if cols.len() < MAX_COLUMNS {
            cols.push(Column {
                key,
                values: Vec::new(),
            });
        }
    }
    if keys > cols.len() {
        warnings.push(DecodeWarning {
            offset: r.offset(),
            field: name,
            message: "columns past the cap dropped",
        });
    }
    if keys == 0 {
        return Ok((cols, count));
    }
    let rows = count.map_or(MAX_ROWS, usize::from);
    'rows: for _ in 0..rows {
        if r.is_empty() || (count.is_none() && r.peek_u8() == Some(0)) {
            break;
        }
        for i in 0..keys {
            if r.is_empty() {
                warnings.push(DecodeWarning {
                    offset: r.offset(),
                    field: name,
                    message: "the section ends inside a row",
                });
                break 'rows;
            }
            let value = string(r, "value", latin1)?;
            if let Some(c) = cols.get_mut(i) {
                c.values.push(value);
            }
        }
    }
    Ok((cols, count))
}

/// Appends a reply of `info` with `id` to `out`: the layout [`decode_reply`] reads (a
/// `00` and a count before each section), for tests and replays. Counts above 255 and
/// columns of unequal length are cut to fit.
pub fn encode_reply(id: u32, info: &ServerInfo, out: &mut Vec<u8>) {
    encode_sections(&Request::full(id), info, out);
}

/// Appends the reply to `request` (only the sections it asks for) of `info`.
pub fn encode_sections(request: &Request, info: &ServerInfo, out: &mut Vec<u8>) {
    fn cstr(out: &mut Vec<u8>, s: &str) {
        out.extend(s.bytes().filter(|&b| b != 0));
        out.push(0);
    }
    out.push(0);
    out.extend_from_slice(&request.id.to_be_bytes());
    if request.server {
        for (k, v) in &info.server {
            cstr(out, k);
            cstr(out, v);
        }
        out.push(0);
    }
    let asked = [
        (request.players, &info.players),
        (request.teams, &info.teams),
    ];
    for cols in asked.into_iter().filter(|(on, _)| *on).map(|(_, c)| c) {
        let rows = cols
            .iter()
            .map(|c| c.values.len())
            .min()
            .unwrap_or(0)
            .min(255);
        out.push(0);
        out.push(u8::try_from(rows).unwrap_or(u8::MAX));
        for c in cols.iter() {
            cstr(out, &c.key);
        }
        out.push(0);
        for row in 0..rows {
            for c in cols.iter() {
                cstr(out, c.values.get(row).map_or("", Text::as_str));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(key: &str, values: &[&str]) -> Column {
        Column {
            key: key.into(),
            values: values.iter().map(|v| Text::from(*v)).collect(),
        }
    }

    fn sample() -> ServerInfo {
        ServerInfo {
            server: vec![
                ("hostname".into(), "Halo".into()),
                ("numplayers".into(), "2".into()),
            ],
            players: vec![
                col("player_", &["a", "b"]),
                col("score_", &["1", "2"]),
                col("team_", &["0", "1"]),
            ],
            teams: vec![col("team_t", &["Red", "Blue"]), col("score_t", &["3", "4"])],
        }
    }

    #[test]
    fn a_reply_round_trips() {
        let mut d = Vec::new();
        encode_reply(7, &sample(), &mut d);
        let r = decode_reply(&d).unwrap();
        assert_eq!(r.id, 7);
        assert_eq!(r.info, sample());
        assert_eq!((r.player_count, r.team_count), (Some(2), Some(2)));
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        assert!(super::super::is_reply(&d));
    }

    #[test]
    fn the_request_is_ten_bytes() {
        let mut d = Vec::new();
        Request::full(0x0102_0304).encode(&mut d);
        assert_eq!(d, b"\xfe\xfd\x00\x01\x02\x03\x04\xff\xff\xff");
        assert_eq!(Request::decode(&d).unwrap(), Request::full(0x0102_0304));
        assert!(Request::decode(&d[..9]).is_err());
    }

    #[test]
    fn a_missing_count_and_a_missing_lead_are_read() {
        // America's Army style: no count; rows until an empty first value
        let d = b"\x00\x00\x00\x00\x01hostname\x00x\x00\x00\x00player_\x00ping_\x00\x00a\x0010\x00b\x0020\x00\x00";
        let r = decode_reply(d).unwrap();
        assert_eq!(r.player_count, None);
        assert_eq!(r.info.players[0].values, ["a", "b"]);
        assert_eq!(r.info.players[1].values, ["10", "20"]);
        assert!(!r.warnings.is_empty());
        // no leading 00 before the count
        let d = b"\x00\x00\x00\x00\x01hostname\x00x\x00\x00\x01player_\x00\x00a\x00";
        let r = decode_reply(d).unwrap();
        assert_eq!(r.info.players[0].values, ["a"]);
    }

    #[test]
    fn a_count_that_is_a_letter_is_a_count() {
        // 66 players: the count byte is `B`, then the key `a_`
        let info = ServerInfo {
            server: vec![("k".into(), "v".into())],
            players: vec![col("a_", &["x"; 66])],
            teams: Vec::new(),
        };
        let mut d = Vec::new();
        encode_reply(1, &info, &mut d);
        let r = decode_reply(&d).unwrap();
        assert_eq!(r.player_count, Some(66));
        assert_eq!(r.info.players, info.players);
    }

    #[test]
    fn a_hostile_reply_is_held_to_the_caps() {
        // 64 KiB of one-byte keys and values: at most MAX_KEYS server keys are kept
        let mut d = b"\x00\x00\x00\x00\x00".to_vec();
        while d.len() < 65_000 {
            d.extend_from_slice(b"k\x00v\x00");
        }
        d.push(0);
        let r = decode_reply(&d).unwrap();
        assert_eq!(r.info.server.len(), MAX_KEYS);
        assert!(r.warnings.iter().any(|w| w.message.contains("cap")));
        // thousands of columns: MAX_COLUMNS kept, the others' values read and dropped
        let mut d = b"\x00\x00\x00\x00\x00k\x00v\x00\x00\x00\x02".to_vec();
        for i in 0..5000 {
            d.extend_from_slice(format!("c{i}_\0").as_bytes());
        }
        d.push(0);
        for _ in 0..2 * 5000 {
            d.extend_from_slice(b"x\x00");
        }
        let r = decode_reply(&d).unwrap();
        assert_eq!(r.info.players.len(), MAX_COLUMNS);
        assert!(r.info.players.iter().all(|c| c.values.len() == 2));
        // no count and endless rows of one-byte values: MAX_ROWS rows at most
        let mut d = b"\x00\x00\x00\x00\x00k\x00v\x00\x00\x00player_\x00\x00".to_vec();
        for _ in 0..30_000 {
            d.extend_from_slice(b"x\x00");
        }
        let r = decode_reply(&d).unwrap();
        assert_eq!(r.info.players[0].values.len(), MAX_ROWS);
        assert!(r.warnings.iter().any(|w| w.message.contains("ignored")));
    }

    #[test]
    fn bad_input_is_an_error_or_a_warning_never_a_panic() {
        assert!(decode_reply(b"").is_err());
        assert!(decode_reply(b"\x01\x00\x00\x00\x00").is_err());
        assert!(decode_reply(b"\x00\x00\x00\x00\x00splitnum\x00\x80").is_err());
        assert!(decode_reply(b"\x00\x00\x00\x00\x00hostname").is_err());
        // a count of 255 with one short row
        let r = decode_reply(b"\x00\x00\x00\x00\x00k\x00v\x00\x00\x00\xffplayer_\x00\x00a\x00")
            .unwrap();
        assert_eq!(r.info.players[0].values, ["a"]);
        // Latin-1
        let r = decode_reply(b"\x00\x00\x00\x00\x00hostname\x00\xe9\x00\x00").unwrap();
        assert_eq!(r.info.get("hostname"), Some("\u{e9}"));
        assert_eq!(r.warnings.len(), 1);
    }
}

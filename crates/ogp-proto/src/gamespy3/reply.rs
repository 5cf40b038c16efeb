//! GameSpy v3 replies (server → client): the `09` challenge and `05` echo replies, the
//! packets of a server-information reply (sub-protocols A and B), their reassembly, and
//! the sub-protocol C reply; both directions.
//!
//! A sub-protocol A/B packet is
//! `00 <sid> "splitnum" 00 <number | 0x80 on the last> <sections…>`, where a section is a
//! type byte (`00` server, `01` players, `02` teams) and then:
//! * server: `key 00 value 00 … 00` (an empty key ends it);
//! * players / teams: columns `key 00 <offset> value 00 value 00 … 00`, ended by an empty
//!   key. The offset byte is the index of the column's first value in this packet.
//!   UT3 writes two more `00` after every column; NULs followed by a key (no section
//!   byte) are read as that padding.
//!
//! A server splits a reply into packets of at most 1400 bytes. Battlefield 2 ends every
//! packet but the last with a truncated copy of the next value, and starts the next
//! packet with the section byte, the column's key and the offset of that value, sent in
//! full. [`Reassembler`] therefore merges packets in number order and places every value
//! by its offset (a later packet overwrites), and [`encode_packets`] writes exactly that
//! shape (`docs/gamespy3.md`, S6–S9).
//!
//! The Just Cause 2 Multiplayer variant sends one packet numbered 0 without the last
//! flag; right after the server section its players follow as `u16 count` (big-endian) and
//! `name 00 steam id 00 u16 ping` each. [`decode_packet`] recognises it when the bytes
//! after the server section parse exactly that way, and gives the players as the columns
//! `player_`, `steamid_` and `ping_`.
//!
//! Decoding never panics and allocates at most a small multiple of its input; a packet
//! that ends inside a structure (the truncated tail) keeps what was complete.

use super::MAX_PACKET;
use crate::charset::Charset;
use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::model::Text;
use crate::reader::Reader;
use crate::text::{TextRuns, Unchosen};

/// `"splitnum\0"`: what follows the session id in every sub-protocol A/B packet.
pub const SPLITNUM: &[u8; 9] = b"splitnum\0";

/// Bytes before the sections: type, session id, `splitnum\0`, packet number.
pub const PACKET_HEADER: usize = 1 + 4 + SPLITNUM.len() + 1;

/// Most values a column keeps (indexes beyond are ignored with a warning).
pub const MAX_COLUMN_VALUES: usize = 4096;

/// Most player and team columns a reply keeps (further keys are ignored with a
/// warning): real servers send up to about ten. Without it, a 256 KiB reply of 7-byte
/// columns at offset 255 would hold some 37 000 columns of 256 slots (over 200 MB). It
/// also bounds the column chunks of one packet, which carries each column at most once.
pub const MAX_COLUMNS: usize = 128;

/// The last-packet flag of the packet-number byte.
pub const LAST_FLAG: u8 = 0x80;

/// Which section a column belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Section {
    /// `01`: player columns (keys ending in `_`).
    Players,
    /// `02`: team columns (keys ending in `_t`).
    Teams,
}

impl Section {
    /// The section's type byte.
    pub const fn byte(self) -> u8 {
        match self {
            Self::Players => 1,
            Self::Teams => 2,
        }
    }
}

/// One column of the player or team section: a key and a value per player or team.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Column {
    /// The key, with its suffix (`player_`, `score_t`).
    pub key: Text,
    /// The values, in player (team) order.
    pub values: Vec<Text>,
}

/// Everything a server-information reply carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerInfo {
    /// Server keys and values, in wire order.
    pub server: Vec<(Text, Text)>,
    /// Player columns, in wire order.
    pub players: Vec<Column>,
    /// Team columns, in wire order.
    pub teams: Vec<Column>,
}

impl ServerInfo {
    /// The first value of server key `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.server
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The column `key` of `section`.
    pub fn column(&self, section: Section, key: &str) -> Option<&Column> {
        let cols = match section {
            Section::Players => &self.players,
            Section::Teams => &self.teams,
        };
        cols.iter().find(|c| c.key == key)
    }
}

/// A run of one column's values inside one packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The section.
    pub section: Section,
    /// The column's key.
    pub key: Text,
    /// Index of the first value.
    pub offset: u8,
    /// The values whose NUL arrived in this packet.
    pub values: Vec<Text>,
}

/// One decoded sub-protocol A/B packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// The session id, as the request sent it.
    pub session_id: u32,
    /// The packet number (0-based).
    pub number: u8,
    /// Whether the last-packet flag is set.
    pub last: bool,
    /// Server keys in this packet.
    pub server: Vec<(Text, Text)>,
    /// Column runs in this packet.
    pub chunks: Vec<Chunk>,
    /// Whether this is the Just Cause 2 MP variant (players given as columns).
    pub jc2mp: bool,
    /// Whether the packet ended inside a structure (a truncated tail was dropped).
    pub cut: bool,
    /// Section bytes this decoder does not know, kept with their offsets.
    pub unknown_sections: Vec<(usize, u8)>,
    /// Strings that were not UTF-8 (decoded as Latin-1).
    pub warnings: Vec<DecodeWarning>,
}

/// A reply to a `09` challenge request: `09 <sid> <ASCII decimal> 00`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChallengeReply {
    /// The session id echoed.
    pub session_id: u32,
    /// The challenge text as sent (`"0"` from Battlefield 2).
    pub text: Text,
}

impl ChallengeReply {
    /// The challenge as a number: what goes, big-endian, into the next request. `None`
    /// when the text is no number; `Some(0)` means "send no challenge bytes".
    pub fn value(&self) -> Option<u32> {
        let t = self.text.trim();
        if let Ok(v) = t.parse::<u32>() {
            return Some(v);
        }
        // Signed values (some servers print the challenge as an i32).
        t.parse::<i32>().ok().map(|v| v as u32)
    }

    /// Appends the reply's bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(super::kind::CHALLENGE);
        out.extend_from_slice(&self.session_id.to_be_bytes());
        out.extend(self.text.bytes().filter(|&b| b != 0));
        out.push(0);
    }
}

/// A decoded reply datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `09 <sid> <challenge> 00`.
    Challenge(ChallengeReply),
    /// `05 <data>`: an echo reply.
    Echo(Vec<u8>),
    /// `00 <sid> splitnum 00 …`: a sub-protocol A/B packet.
    Packet(Packet),
    /// `00 <sid> value 00 value 00 …`: a sub-protocol C reply.
    Keys {
        /// The session id echoed.
        session_id: u32,
        /// The values, in request order.
        values: Vec<Text>,
    },
}

/// Decodes a string (as [`TextRuns::cstr`] found it): UTF-8 when valid, else in the
/// charset of `r` (the reader it came from, looked at only then), or (`Auto`) Latin-1
/// with a warning.
fn string(
    found: Result<&str, &[u8]>,
    at: usize,
    r: &Reader<'_>,
    field: &'static str,
    warnings: &mut Vec<DecodeWarning>,
) -> Text {
    let (text, latin1) = crate::text::decode_text(found, r, Unchosen::Latin1);
    if latin1 && warnings.len() < 16 {
        warnings.push(DecodeWarning {
            offset: at,
            field,
            message: "not UTF-8; decoded as Latin-1",
        });
    }
    text
}

fn is_empty(found: Result<&str, &[u8]>) -> bool {
    found.map_or_else(<[u8]>::is_empty, str::is_empty)
}

/// Decodes any GameSpy v3 reply datagram.
pub fn decode_reply(datagram: &[u8]) -> Result<Reply, DecodeError> {
    decode_reply_with(datagram, Charset::Auto)
}

/// [`decode_reply`], reading strings that are not UTF-8 in `charset`.
pub fn decode_reply_with(datagram: &[u8], charset: Charset) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(datagram).with_charset(charset);
    match r.u8("ProtocolId")? {
        super::kind::CHALLENGE => {
            let session_id = u32::from_be_bytes(r.array::<4>("SessionId")?);
            let at = r.offset();
            let text = match r.cstr("Challenge") {
                Ok(t) => t,
                // Tolerate a missing NUL.
                Err(_) => r.take_rest(),
            };
            if text.len() > 32 {
                return Err(DecodeError::new(
                    at,
                    "Challenge",
                    DecodeErrorKind::TooLarge { limit: 32 },
                ));
            }
            Ok(Reply::Challenge(ChallengeReply {
                session_id,
                text: string(Err(text), at, &r, "Challenge", &mut Vec::new()),
            }))
        }
        super::kind::ECHO_REPLY => Ok(Reply::Echo(r.take_rest().to_vec())),
        super::kind::INFO => {
            if r.peek_rest().get(4..4 + SPLITNUM.len()) == Some(&SPLITNUM[..]) {
                decode_packet_with(datagram, charset).map(Reply::Packet)
            } else {
                let session_id = u32::from_be_bytes(r.array::<4>("SessionId")?);
                let mut values = Vec::new();
                let mut w = Vec::new();
                let mut runs = TextRuns::default();
                while !r.is_empty() && values.len() < 256 {
                    let at = r.offset();
                    let Ok(v) = runs.cstr(&mut r, "Value") else {
                        break;
                    };
                    values.push(string(v, at, &r, "Value", &mut w));
                }
                Ok(Reply::Keys { session_id, values })
            }
        }
        _ => Err(DecodeError::invalid(
            0,
            "ProtocolId",
            "not a GameSpy v3 reply type",
        )),
    }
}

/// Decodes one sub-protocol A/B packet (the whole datagram).
pub fn decode_packet(datagram: &[u8]) -> Result<Packet, DecodeError> {
    decode_packet_with(datagram, Charset::Auto)
}

/// [`decode_packet`], reading strings that are not UTF-8 in `charset`.
pub fn decode_packet_with(datagram: &[u8], charset: Charset) -> Result<Packet, DecodeError> {
    let mut r = Reader::new(datagram).with_charset(charset);
    if r.u8("ProtocolId")? != super::kind::INFO {
        return Err(DecodeError::invalid(
            0,
            "ProtocolId",
            "not a server-information reply",
        ));
    }
    let session_id = u32::from_be_bytes(r.array::<4>("SessionId")?);
    if r.array::<9>("splitnum")? != *SPLITNUM {
        return Err(DecodeError::invalid(
            5,
            "splitnum",
            "no \"splitnum\" after the session id",
        ));
    }
    let nb = r.u8("PacketNumber")?;
    let mut p = Packet {
        session_id,
        number: nb & !LAST_FLAG,
        last: nb & LAST_FLAG != 0,
        server: Vec::new(),
        chunks: Vec::new(),
        jc2mp: false,
        cut: false,
        unknown_sections: Vec::new(),
        warnings: Vec::new(),
    };
    let mut prev: Option<u8> = None;
    let mut runs = TextRuns::default();
    while let Some(section) = r.peek_u8() {
        let at = r.offset();
        r.u8("Section")?;
        let complete = match section {
            0 => {
                // Just Cause 2 MP: the player list right after the server section. The
                // count's high byte is the 00 just read: parse from there.
                if prev == Some(0) {
                    let rest = datagram.get(at..).unwrap_or_default();
                    if let Some(players) = jc2mp_players(rest, at, r.charset()) {
                        p.chunks.extend(players);
                        p.jc2mp = true;
                        break;
                    }
                }
                server_section(&mut r, &mut runs, &mut p)
            }
            1 => columns(&mut r, &mut runs, Section::Players, &mut p),
            2 => columns(&mut r, &mut runs, Section::Teams, &mut p),
            other => {
                // Unknown section: keep its position and stop (its layout is unknown).
                p.unknown_sections.push((at, other));
                break;
            }
        };
        if !complete {
            p.cut = true;
            break;
        }
        prev = Some(section);
    }
    Ok(p)
}

/// Server pairs until the empty key; `false` when the packet ended first.
fn server_section<'a>(r: &mut Reader<'a>, runs: &mut TextRuns<'a>, p: &mut Packet) -> bool {
    // A pair takes at least 4 bytes ("k", NUL, "v", NUL): room for what the packet can
    // hold, up to what real servers send, without growing pair by pair.
    p.server.reserve((r.remaining() / 4).min(64));
    loop {
        let at = r.offset();
        let Ok(key) = runs.cstr(r, "ServerKey") else {
            return false;
        };
        if is_empty(key) {
            return true;
        }
        let vat = r.offset();
        let Ok(value) = runs.cstr(r, "ServerValue") else {
            return false;
        };
        let key = string(key, at, r, "ServerKey", &mut p.warnings);
        let value = string(value, vat, r, "ServerValue", &mut p.warnings);
        p.server.push((key, value));
    }
}

/// Columns until the empty key; `false` when the packet ended first.
fn columns<'a>(
    r: &mut Reader<'a>,
    runs: &mut TextRuns<'a>,
    section: Section,
    p: &mut Packet,
) -> bool {
    loop {
        let at = r.offset();
        let Ok(key) = runs.cstr(r, "ColumnKey") else {
            return false;
        };
        if is_empty(key) {
            // UT3 pads every column with two more NULs (`key 00 offset values 00 00 00`):
            // an empty key followed by more NULs and then no section byte is padding.
            let rest = r.peek_rest();
            let nuls = rest.iter().take_while(|&&b| b == 0).count();
            if nuls >= 1 && rest.get(nuls).is_some_and(|&b| b > 2) {
                let _ = r.take(nuls, "Padding");
                continue;
            }
            return true;
        }
        // A packet carries each column at most once: more chunks than the columns a reply
        // may have are a hostile packet's, whose tail is dropped as a cut one is.
        if p.chunks.len() >= MAX_COLUMNS {
            return false;
        }
        let key = string(key, at, r, "ColumnKey", &mut p.warnings);
        let Ok(offset) = r.u8("Offset") else {
            return false;
        };
        let mut chunk = Chunk {
            section,
            key,
            offset,
            // Nothing reserved before the first value: an empty chunk costs no allocation.
            values: Vec::new(),
        };
        let ended = loop {
            let vat = r.offset();
            let Ok(v) = runs.cstr(r, "ColumnValue") else {
                break false;
            };
            if is_empty(v) {
                break true;
            }
            if chunk.values.is_empty() {
                // Player columns run to dozens of values: start past the first doublings.
                chunk.values.reserve(16);
            }
            chunk
                .values
                .push(string(v, vat, r, "ColumnValue", &mut p.warnings));
        };
        p.chunks.push(chunk);
        if !ended {
            return false;
        }
    }
}

/// The Just Cause 2 MP player list, if `rest` (after a second `00` section byte) is
/// exactly `u16 count` and `count` × (name, steam id, u16 ping).
fn jc2mp_players(rest: &[u8], base: usize, charset: Charset) -> Option<[Chunk; 3]> {
    let mut r = Reader::with_base(rest, base).with_charset(charset);
    let count = r.array::<2>("PlayerCount").ok().map(u16::from_be_bytes)?;
    // Each player needs at least 4 bytes: checked before allocating.
    if usize::from(count) * 4 > r.remaining() {
        return None;
    }
    let mut w = Vec::new();
    let mut names = Vec::with_capacity(usize::from(count));
    let mut ids = Vec::with_capacity(usize::from(count));
    let mut pings = Vec::with_capacity(usize::from(count));
    for _ in 0..count {
        let at = r.offset();
        let name = r.cstr("PlayerName").ok()?;
        names.push(string(Err(name), at, &r, "PlayerName", &mut w));
        let at = r.offset();
        let id = r.cstr("SteamId").ok()?;
        ids.push(string(Err(id), at, &r, "SteamId", &mut w));
        let ping = r.array::<2>("Ping").ok().map(u16::from_be_bytes)?;
        pings.push(Text::from(ping.to_string()));
    }
    if !r.is_empty() {
        return None;
    }
    let chunk = |key: &str, values| Chunk {
        section: Section::Players,
        key: key.into(),
        offset: 0,
        values,
    };
    Some([
        chunk("player_", names),
        chunk("steamid_", ids),
        chunk("ping_", pings),
    ])
}

/// Bounds on what a reassembly may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReassemblyLimits {
    /// Most packets (the number has 7 bits: at most 128).
    pub max_packets: usize,
    /// Most bytes of all packets together.
    pub max_bytes: usize,
}

impl Default for ReassemblyLimits {
    fn default() -> Self {
        Self {
            max_packets: 128,
            max_bytes: 256 * 1024,
        }
    }
}

/// Why packets could not be reassembled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReassemblyError {
    /// A packet's number is beyond the limit or beyond the last packet's.
    BadNumber {
        /// The number.
        number: u8,
    },
    /// Two packets claim to be the last.
    TwoLasts,
    /// More bytes than the limit.
    TooLarge {
        /// The limit.
        limit: usize,
    },
}

impl std::fmt::Display for ReassemblyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BadNumber { number } => write!(f, "packet number {number} out of range"),
            Self::TwoLasts => f.write_str("two packets carry the last-packet flag"),
            Self::TooLarge { limit } => write!(f, "reply larger than {limit} bytes"),
        }
    }
}

impl std::error::Error for ReassemblyError {}

/// What [`Reassembler::push`] did with a packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// Held; more packets are needed.
    Incomplete,
    /// A packet with this number was already held (dropped).
    Duplicate,
    /// Every packet is there: the merged reply.
    Complete {
        /// The reply.
        info: ServerInfo,
        /// Packets it came in.
        packets: usize,
        /// Oddities noticed while merging (gaps, Latin-1 strings, unknown sections).
        warnings: Vec<DecodeWarning>,
    },
}

/// Collects the packets of one reply, in any order, and merges them.
#[derive(Debug, Clone, Default)]
pub struct Reassembler {
    limits: ReassemblyLimits,
    packets: Vec<Packet>,
    bytes: usize,
    last: Option<u8>,
}

impl Reassembler {
    /// A reassembler with these limits.
    pub fn with_limits(limits: ReassemblyLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// Forgets the held packets.
    pub fn reset(&mut self) {
        self.packets.clear();
        self.bytes = 0;
        self.last = None;
    }

    /// Packets held.
    pub fn held(&self) -> usize {
        self.packets.len()
    }

    /// Adds a decoded packet of `bytes` wire bytes. A packet refused with an error
    /// changes nothing: the held packets stay as they were.
    pub fn push(&mut self, packet: Packet, bytes: usize) -> Result<Pushed, ReassemblyError> {
        let n = packet.number;
        if usize::from(n) >= self.limits.max_packets.min(128) {
            return Err(ReassemblyError::BadNumber { number: n });
        }
        if self.packets.iter().any(|p| p.number == n) {
            return Ok(Pushed::Duplicate);
        }
        if packet.last {
            if self.last.is_some() {
                return Err(ReassemblyError::TwoLasts);
            }
            if self.packets.iter().any(|p| p.number > n) {
                return Err(ReassemblyError::BadNumber { number: n });
            }
        } else if self.last.is_some_and(|l| n > l) {
            return Err(ReassemblyError::BadNumber { number: n });
        }
        // Checked before anything changes: a refused packet leaves no trace.
        let total = self.bytes.saturating_add(bytes);
        if total > self.limits.max_bytes {
            return Err(ReassemblyError::TooLarge {
                limit: self.limits.max_bytes,
            });
        }
        self.bytes = total;
        if packet.last {
            self.last = Some(n);
        }
        // Just Cause 2 MP: one packet 0 without the last flag.
        let single_jc2 = packet.jc2mp && n == 0 && self.packets.is_empty();
        self.packets.push(packet);
        let complete = single_jc2
            || self
                .last
                .is_some_and(|l| self.packets.len() == usize::from(l) + 1);
        if !complete {
            return Ok(Pushed::Incomplete);
        }
        let mut packets = std::mem::take(&mut self.packets);
        self.reset();
        packets.sort_by_key(|p| p.number);
        let count = packets.len();
        let (info, warnings) = merge(packets);
        Ok(Pushed::Complete {
            info,
            packets: count,
            warnings,
        })
    }
}

/// Merges packets given in number order: server keys in order (a key that starts a
/// packet and ended the previous one replaces it: a truncated value re-sent), column
/// values placed by offset (later packets overwrite), at most [`MAX_COLUMNS`] columns of
/// at most [`MAX_COLUMN_VALUES`] values.
pub fn merge(packets: Vec<Packet>) -> (ServerInfo, Vec<DecodeWarning>) {
    let mut info = ServerInfo::default();
    let mut warnings = Vec::new();
    // Columns as (section, key) → values with gaps.
    let mut cols: Vec<(Section, Text, Vec<Option<Text>>)> = Vec::new();
    let mut clipped = false;
    let mut too_many = false;
    info.server
        .reserve(packets.iter().map(|p| p.server.len()).sum::<usize>());
    for p in packets {
        for (i, (k, v)) in p.server.into_iter().enumerate() {
            if i == 0 && info.server.last().is_some_and(|(lk, _)| *lk == k) {
                if let Some(last) = info.server.last_mut() {
                    last.1 = v;
                }
                continue;
            }
            info.server.push((k, v));
        }
        for c in p.chunks {
            let idx = match cols
                .iter()
                .position(|(s, k, _)| *s == c.section && *k == c.key)
            {
                Some(i) => i,
                None if cols.len() >= MAX_COLUMNS => {
                    too_many = true;
                    continue;
                }
                None => {
                    cols.push((c.section, c.key.clone(), Vec::new()));
                    cols.len() - 1
                }
            };
            let Some((_, _, values)) = cols.get_mut(idx) else {
                continue;
            };
            // The chunk's values go to offset, offset + 1, …; the column grows once.
            let offset = usize::from(c.offset);
            let end = offset.saturating_add(c.values.len());
            if end > MAX_COLUMN_VALUES {
                clipped = true;
            }
            let end = end.min(MAX_COLUMN_VALUES);
            if values.len() < end {
                values.resize(end, None);
            }
            let slots = values.get_mut(offset..end).unwrap_or_default();
            for (slot, v) in slots.iter_mut().zip(c.values) {
                *slot = Some(v);
            }
        }
        for (at, s) in p.unknown_sections {
            let _ = s;
            if warnings.len() < 32 {
                warnings.push(DecodeWarning {
                    offset: at,
                    field: "Section",
                    message: "unknown section type; the rest of the packet was skipped",
                });
            }
        }
        for w in p.warnings {
            if warnings.len() < 32 {
                warnings.push(w);
            }
        }
    }
    if clipped {
        warnings.push(DecodeWarning {
            offset: 0,
            field: "ColumnValue",
            message: "column longer than 4096 values; the rest was ignored",
        });
    }
    if too_many {
        warnings.push(DecodeWarning {
            offset: 0,
            field: "ColumnKey",
            message: "more than 128 player and team columns; the others were ignored",
        });
    }
    for (section, key, values) in cols {
        if values.iter().any(Option::is_none) && warnings.len() < 32 {
            warnings.push(DecodeWarning {
                offset: 0,
                field: "ColumnValue",
                message: "a column has gaps (values no packet carried); they read as empty",
            });
        }
        let col = Column {
            key,
            values: values.into_iter().map(Option::unwrap_or_default).collect(),
        };
        match section {
            Section::Players => info.players.push(col),
            Section::Teams => info.teams.push(col),
        }
    }
    (info, warnings)
}

// ------------------------------------------------------------------------------------
// Encoding

/// Longest key and value the encoder writes (longer ones are cut at a character
/// boundary): a continuation value must always fit a fresh packet.
pub const MAX_KEY: usize = 63;
/// See [`MAX_KEY`].
pub const MAX_VALUE: usize = 255;

fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or_default()
}

/// A string as written: NULs removed, cut to `max` bytes. Column values are never empty
/// (an empty value would end the list): an empty one is written as one space.
fn wire(s: &str, max: usize, nonempty: bool) -> Vec<u8> {
    let mut v: Vec<u8> = cut(s, max).bytes().filter(|&b| b != 0).collect();
    if nonempty && v.is_empty() {
        v.push(b' ');
    }
    v
}

fn put_header(out: &mut Vec<u8>, session_id: u32, number: u8) {
    out.push(super::kind::INFO);
    out.extend_from_slice(&session_id.to_be_bytes());
    out.extend_from_slice(SPLITNUM);
    out.push(number);
}

/// Bytes of the server section as written by [`encode_packets`] (type byte and end
/// included).
pub fn server_section_len(server: &[(Text, Text)]) -> usize {
    1 + server
        .iter()
        .map(|(k, v)| wire(k, MAX_KEY, false).len() + wire(v, MAX_VALUE, false).len() + 2)
        .sum::<usize>()
        + 1
}

/// Writes a sub-protocol B reply as packets of at most `max_packet` bytes (clamped to
/// 256…1400), calling `emit` with each in order; returns the number of packets.
///
/// The server section goes whole into packet 0 (gamedig reads server keys from packet 0
/// only); keys that do not fit are dropped (see [`server_section_len`]). Player and team
/// columns follow; if no value of them fits packet 0, packet 1 starts with the column
/// whose header or first value would not fit, at offset 0 (as UT3 starts a section on a
/// new packet; the same for a packet of one-value columns). Where a packet is full, it
/// ends the Battlefield 2 way: a truncated copy of the next value, which the next packet
/// sends in full after its section byte, the column's key and the value's offset. A
/// break always falls after at least one complete value of the column in the same
/// packet, so a continuation's offset is never 0 (opengsq relies on it), and only before
/// values 1…255 (the offset is a byte): the caller keeps at most 256 players and teams.
/// Columns end with `00`, sections with `00`; empty sections are `01 00` / `02 00`.
///
/// `Err(packets_emitted)` when the reply needs more than 128 packets or cannot be broken
/// (a column of more than 256 values); what was emitted is then incomplete and should
/// not be sent.
pub fn encode_packets(
    info: &ServerInfo,
    session_id: u32,
    max_packet: usize,
    mut emit: impl FnMut(&[u8]),
) -> Result<usize, usize> {
    let max = max_packet.clamp(256, MAX_PACKET);
    let cols: Vec<(Section, Vec<u8>, Vec<Vec<u8>>)> = [
        (Section::Players, &info.players),
        (Section::Teams, &info.teams),
    ]
    .into_iter()
    .flat_map(|(s, cs)| {
        cs.iter().filter(|c| !c.key.is_empty()).map(move |c| {
            (
                s,
                wire(&c.key, MAX_KEY, false),
                c.values.iter().map(|v| wire(v, MAX_VALUE, true)).collect(),
            )
        })
    })
    .collect();

    let mut buf: Vec<u8> = Vec::with_capacity(max);
    // Where the next packet resumes: column, value.
    let mut resume: Option<(usize, usize)> = None;
    let mut players_started = false;
    for number in 0..128u8 {
        buf.clear();
        put_header(&mut buf, session_id, number);
        let mut open: Option<Section> = None;
        let (mut ci, mut vi) = (0usize, 0usize);
        // First value index of the current column written in this packet.
        let mut first_here = 0usize;
        match resume {
            None => {
                buf.push(0);
                for (k, v) in &info.server {
                    let (k, v) = (wire(k, MAX_KEY, false), wire(v, MAX_VALUE, false));
                    if k.is_empty() {
                        continue;
                    }
                    // Room for the section's end and `01 00 02 00`.
                    if buf.len() + k.len() + v.len() + 2 + 1 + 4 > max {
                        break;
                    }
                    buf.extend_from_slice(&k);
                    buf.push(0);
                    buf.extend_from_slice(&v);
                    buf.push(0);
                }
                buf.push(0);
            }
            Some((c, v)) => {
                let Some((section, key, _)) = cols.get(c) else {
                    return Err(usize::from(number));
                };
                buf.push(section.byte());
                buf.extend_from_slice(key);
                buf.push(0);
                buf.push(u8::try_from(v).unwrap_or(u8::MAX));
                open = Some(*section);
                players_started |= *section == Section::Players;
                (ci, vi, first_here) = (c, v, v);
            }
        }
        // The resumed column's header is written already.
        let mut skip_header = resume.is_some();
        // The last place this packet may end: (length before value vi of column ci).
        let mut brk: Option<(usize, usize, usize)> = None;
        // Where the last column header of this packet starts: (length before it, column,
        // players_started before it), the place to end a packet that has no break point.
        let mut col_start: Option<(usize, usize, bool)> = None;
        let fits = |buf: &Vec<u8>, n: usize| buf.len() + n + 2 <= max;
        let mut full = false;
        'fill: while let Some((section, key, values)) = cols.get(ci) {
            if vi == 0 && !skip_header {
                // A column header (and a section change) before the first value.
                let mut head = Vec::with_capacity(key.len() + 6);
                if open != Some(*section) {
                    if open.is_some() {
                        head.push(0);
                    }
                    if *section == Section::Teams && !players_started {
                        head.extend_from_slice(&[1, 0]);
                    }
                    head.push(section.byte());
                }
                head.extend_from_slice(key);
                head.push(0);
                head.push(0);
                col_start = Some((buf.len(), ci, players_started));
                if !fits(&buf, head.len()) {
                    full = true;
                    break 'fill;
                }
                buf.extend_from_slice(&head);
                players_started = true;
                open = Some(*section);
                first_here = 0;
            }
            skip_header = false;
            while let Some(v) = values.get(vi) {
                if vi > first_here && vi <= 255 {
                    brk = Some((buf.len(), ci, vi));
                }
                if !fits(&buf, v.len() + 1) {
                    full = true;
                    break 'fill;
                }
                buf.extend_from_slice(v);
                buf.push(0);
                vi += 1;
            }
            if !fits(&buf, 1) {
                full = true;
                break 'fill;
            }
            buf.push(0);
            ci += 1;
            vi = 0;
        }
        if !full {
            let mut tail = Vec::with_capacity(5);
            if open.is_some() {
                tail.push(0);
            }
            if !players_started && cols.iter().all(|(s, _, _)| *s != Section::Players) {
                tail.extend_from_slice(&[1, 0]);
            }
            if cols.iter().all(|(s, _, _)| *s != Section::Teams) {
                tail.extend_from_slice(&[2, 0]);
            }
            if buf.len() + tail.len() <= max {
                buf.extend_from_slice(&tail);
                if let Some(b) = buf.get_mut(PACKET_HEADER - 1) {
                    *b = number | LAST_FLAG;
                }
                emit(&buf);
                return Ok(usize::from(number) + 1);
            }
        }
        // Full: end with a truncated copy of the value at the break point.
        let Some((len, c, v)) = brk else {
            // No value can end this packet (the server section filled packet 0 but for
            // a column header, or the columns here have one value each): end it before
            // the last column's header, which starts the next packet at offset 0 (as UT3
            // starts a section on a new packet).
            let Some((len, c, started)) = col_start else {
                return Err(usize::from(number));
            };
            buf.truncate(len);
            players_started = started;
            emit(&buf);
            resume = Some((c, 0));
            continue;
        };
        buf.truncate(len);
        let value = cols
            .get(c)
            .and_then(|(_, _, vs)| vs.get(v))
            .map_or(&[][..], Vec::as_slice);
        let room = max.saturating_sub(buf.len() + 1).max(1);
        let mut copy = value.get(..value.len().min(room)).unwrap_or_default();
        // Cut at a UTF-8 boundary where one is near, so the copy stays valid text.
        while copy.len() > 1 && std::str::from_utf8(copy).is_err() {
            copy = copy.get(..copy.len() - 1).unwrap_or_default();
        }
        buf.extend_from_slice(copy);
        buf.push(0);
        emit(&buf);
        resume = Some((c, v));
    }
    Err(128)
}

/// Appends a sub-protocol C reply: `00 <sid>` and each value followed by `00`.
pub fn encode_keys_reply(session_id: u32, values: &[&str], out: &mut Vec<u8>) {
    out.push(super::kind::INFO);
    out.extend_from_slice(&session_id.to_be_bytes());
    for v in values {
        out.extend_from_slice(&wire(v, MAX_VALUE, false));
        out.push(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sub-protocol C reply (the values of asked keys) with a Windows-1251 host name.
    #[test]
    fn strings_that_are_not_utf8_are_read_in_the_chosen_charset() {
        let mut d = vec![0x00, 1, 2, 3, 4];
        d.extend_from_slice(&[0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2, 0x00]);
        d.extend_from_slice(b"de_dust2\x00");
        let values = |charset| match decode_reply_with(&d, charset).unwrap() {
            Reply::Keys { values, .. } => values,
            other => panic!("{other:?}"),
        };
        assert_eq!(values(Charset::Windows1251), ["Привет", "de_dust2"]);
        assert_eq!(values(Charset::Auto), ["Ïðèâåò", "de_dust2"]);
        assert_eq!(values(Charset::Latin1), ["Ïðèâåò", "de_dust2"]);
    }

    fn info(players: usize, name_len: usize, teams: usize) -> ServerInfo {
        ServerInfo {
            server: vec![
                ("hostname".into(), "Test".into()),
                ("numplayers".into(), players.to_string().into()),
            ],
            players: vec![
                Column {
                    key: "player_".into(),
                    values: (0..players)
                        .map(|i| format!("{i:03}{}", "n".repeat(name_len)).into())
                        .collect(),
                },
                Column {
                    key: "score_".into(),
                    values: (0..players).map(|i| (i * 7).to_string().into()).collect(),
                },
            ],
            teams: (teams > 0)
                .then(|| Column {
                    key: "team_t".into(),
                    values: (0..teams).map(|i| format!("T{i}").into()).collect(),
                })
                .into_iter()
                .collect(),
        }
    }

    fn round_trip(i: &ServerInfo, reverse: bool) -> (Vec<Vec<u8>>, ServerInfo) {
        let mut packets = Vec::new();
        let n = encode_packets(i, 0x1020_3040, 1400, |p| packets.push(p.to_vec())).unwrap();
        assert_eq!(n, packets.len());
        let mut r = Reassembler::default();
        let mut order: Vec<&Vec<u8>> = packets.iter().collect();
        if reverse {
            order.reverse();
        }
        let mut done = None;
        for p in order {
            assert!(p.len() <= 1400);
            let d = decode_packet(p).unwrap();
            assert_eq!(d.session_id, 0x1020_3040);
            if let Pushed::Complete { info, .. } = r.push(d, p.len()).unwrap() {
                done = Some(info);
            }
        }
        (packets, done.expect("complete"))
    }

    #[test]
    fn encode_decode_round_trip_single_and_multi_packet() {
        for (players, len, teams) in [(0, 0, 0), (3, 5, 2), (64, 40, 2), (200, 60, 4), (256, 1, 0)]
        {
            let i = info(players, len, teams);
            for reverse in [false, true] {
                let (packets, got) = round_trip(&i, reverse);
                let want = i.clone();
                assert_eq!(got.server, want.server);
                assert_eq!(got.players, want.players, "{players} players");
                assert_eq!(got.teams, want.teams);
                for (n, p) in packets.iter().enumerate() {
                    let last = n + 1 == packets.len();
                    assert_eq!(p[14], n as u8 | if last { 0x80 } else { 0 });
                    if n > 0 {
                        // continuation: section byte, key, offset never 0
                        let d = decode_packet(p).unwrap();
                        let first = &d.chunks[0];
                        assert_ne!(first.offset, 0, "packet {n} continues at offset 0");
                    }
                }
            }
        }
    }

    #[test]
    fn a_full_server_section_moves_the_columns_to_packet_1() {
        let mut i = info(10, 10, 2);
        for n in 0..60 {
            i.server
                .push((format!("rule_{n:02}").into(), "v".repeat(16).into()));
        }
        let (packets, got) = round_trip(&i, false);
        assert_eq!(packets.len(), 2);
        assert!(
            packets[0].ends_with(&[0, 0]),
            "packet 0 ends with the server section"
        );
        assert_eq!(&packets[1][15..25], b"\x01player_\x00\x00");
        assert_eq!(got.players, i.players);
        assert_eq!(got.teams, i.teams);
        assert!(got.server.len() > 40 && got.server.len() < i.server.len());
        assert_eq!(got.server[..], i.server[..got.server.len()]);
    }

    #[test]
    fn empty_sections_are_written_like_crysis() {
        let mut out = Vec::new();
        let i = ServerInfo {
            server: vec![("hostname".into(), "x".into())],
            ..ServerInfo::default()
        };
        encode_packets(&i, 1, 1400, |p| out = p.to_vec()).unwrap();
        assert!(
            out.ends_with(b"hostname\x00x\x00\x00\x01\x00\x02\x00"),
            "{out:x?}"
        );
        assert_eq!(out[14], 0x80);
    }

    #[test]
    fn offsets_place_values_and_later_packets_overwrite() {
        // packet 0 ends with a truncated copy of value 2; packet 1 re-sends it at 2
        let mut p0 = Vec::new();
        put_header(&mut p0, 9, 0);
        p0.extend_from_slice(b"\x00hostname\x00h\x00\x00\x01player_\x00\x00a\x00b\x00c-trunc\x00");
        let mut p1 = Vec::new();
        put_header(&mut p1, 9, 0x81);
        p1.extend_from_slice(b"\x01player_\x00\x02c-full\x00d\x00\x00\x00\x02\x00");
        let mut r = Reassembler::default();
        assert_eq!(
            r.push(decode_packet(&p1).unwrap(), p1.len()).unwrap(),
            Pushed::Incomplete
        );
        let Pushed::Complete { info, .. } = r.push(decode_packet(&p0).unwrap(), p0.len()).unwrap()
        else {
            panic!("not complete")
        };
        assert_eq!(info.players[0].values, ["a", "b", "c-full", "d"]);
    }

    #[test]
    fn hostile_packets_are_bounded_errors() {
        let mut r = Reassembler::default();
        let mut p = Vec::new();
        put_header(&mut p, 1, 0x85);
        let d = decode_packet(&p).unwrap();
        r.push(d.clone(), p.len()).unwrap();
        assert_eq!(r.push(d, p.len()), Ok(Pushed::Duplicate));
        let mut q = Vec::new();
        put_header(&mut q, 1, 0x83);
        assert_eq!(
            r.push(decode_packet(&q).unwrap(), q.len()),
            Err(ReassemblyError::TwoLasts)
        );
        assert!(decode_packet(b"\x00\x01\x02\x03\x04splitnum").is_err());
        // A packet of 2,000 empty columns keeps MAX_COLUMNS of them, allocating no values,
        // and counts as cut.
        let mut b = Vec::new();
        put_header(&mut b, 1, 0x80);
        b.push(1);
        for _ in 0..2000 {
            b.extend_from_slice(b"k\x00\x00\x00");
        }
        let d = decode_packet(&b).unwrap();
        assert_eq!(d.chunks.len(), MAX_COLUMNS);
        assert!(d.cut);
        assert!(d.chunks.iter().all(|c| c.values.capacity() == 0));
        for n in 0..60 {
            let mut b = Vec::new();
            put_header(&mut b, 1, 0x80);
            let body = b"\x00k\x00v\x00\x00\x01p_\x00\x05x\x00y\x00\x00\x00";
            b.extend_from_slice(&body[..n.min(body.len())]);
            let _ = decode_packet(&b).unwrap();
        }
    }
}

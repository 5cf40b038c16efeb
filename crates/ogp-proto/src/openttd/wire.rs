//! OpenTTD's TCP game info: the request packet and the `SERVER_GAME_INFO` reply in every
//! version of its format seen in the wild (1 to 7), decoded through the bounded reader.
//!
//! A TCP packet of OpenTTD's game protocol is a little-endian `u16` size (counting its
//! own two bytes and the type), a type byte, then the body. The client sends
//! `PACKET_CLIENT_GAME_INFO` (type 7, no body: `03 00 07`); the server answers
//! `PACKET_SERVER_GAME_INFO` (type 6) and closes. Its body starts with the format
//! version; each newer version puts its fields in front of the older ones:
//!
//! | version | fields (in wire order) |
//! |---|---|
//! | 7 | ticks playing (`u64`) |
//! | 6 | NewGRF serialisation (`u8`: 0 id + MD5, 1 id + MD5 + name, 2 lookup id) |
//! | 5 | game script version (`u32`, -1: none), game script name |
//! | 4 | NewGRF count (`u8`), then per NewGRF its id (`u32`), MD5 (16 bytes) and, when the serialisation says so, its name |
//! | 3 | current date, start date (`u32` days since year 0) |
//! | 2 | max companies, companies, max spectators (`u8` each) |
//! | 1 | server name, revision, language (`u8`, before 6), password (`u8` bool), max clients, clients, spectators (`u8` each), current and start date (`u16` days since 1920, before 3), map name (before 6), map width and height (`u16`), landscape (`u8`), dedicated (`u8` bool) |
//!
//! Strings are zero-terminated UTF-8. Servers of 12.0 and later answer on their game port
//! over TCP; older ones answered the same body over UDP. The packet size caps a reply at
//! 65,535 bytes and the NewGRF count at 255.

use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::model::Text;
use crate::reader::Reader;

/// `PACKET_CLIENT_GAME_INFO`: the request, a whole packet (size 3, type 7).
pub const REQUEST: [u8; 3] = [0x03, 0x00, PACKET_CLIENT_GAME_INFO];
/// The request's packet type.
pub const PACKET_CLIENT_GAME_INFO: u8 = 7;
/// The reply's packet type.
pub const PACKET_SERVER_GAME_INFO: u8 = 6;
/// `PACKET_SERVER_FULL`: the server refuses the connection.
pub const PACKET_SERVER_FULL: u8 = 0;
/// `PACKET_SERVER_BANNED`: the server refuses this address.
pub const PACKET_SERVER_BANNED: u8 = 1;
/// `PACKET_SERVER_ERROR`: an error code (`u8`) and maybe a reason.
pub const PACKET_SERVER_ERROR: u8 = 3;
/// The newest format version we read.
pub const NEWEST_VERSION: u8 = 7;
/// The size field counts these bytes of header (the size and the type).
pub const HEADER: usize = 3;
/// Days from year 0 to 1 January 1920, the base of the 16-bit dates before version 3.
pub const DAYS_TILL_1920: u32 = 701_265;

/// A NewGRF the server runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grf {
    /// Its id (as the four bytes read little-endian).
    pub id: u32,
    /// The MD5 digest of its file.
    pub md5: [u8; 16],
    /// Its name, when the server sent names.
    pub name: Option<Text>,
}

/// A `SERVER_GAME_INFO` body, every field as sent (those a version lacks are `None`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GameInfo {
    /// The format version (1 to 7).
    pub version: u8,
    /// Game ticks since the game started (7).
    pub ticks_playing: Option<u64>,
    /// How NewGRFs are described (6): 0 id and MD5, 1 with names.
    pub newgrf_serialisation: Option<u8>,
    /// The game script's version, -1 without one (5).
    pub gamescript_version: Option<i32>,
    /// The game script's name (5).
    pub gamescript_name: Option<Text>,
    /// The NewGRFs (4).
    pub grfs: Vec<Grf>,
    /// The current date, in days since year 0 (from 1920 before 3).
    pub date: u32,
    /// The date the game started, in days since year 0.
    pub start_date: u32,
    /// Most companies (2).
    pub companies_max: Option<u8>,
    /// Companies in the game (2).
    pub companies_on: Option<u8>,
    /// Most spectators, no longer used (2).
    pub spectators_max: Option<u8>,
    /// The server's name.
    pub server_name: Text,
    /// The server's revision (its version, e.g. `13.0`).
    pub server_revision: Text,
    /// The server's language (before 6: 0 any, 1 English, 2 German, 3 French).
    pub language: Option<u8>,
    /// Whether joining needs a password.
    pub password: bool,
    /// Most clients.
    pub clients_max: u8,
    /// Clients connected.
    pub clients_on: u8,
    /// Spectators among them.
    pub spectators_on: u8,
    /// The map's name (before 6).
    pub map_name: Option<Text>,
    /// The map's width in tiles.
    pub map_width: u16,
    /// The map's height in tiles.
    pub map_height: u16,
    /// The landscape: 0 temperate, 1 sub-arctic, 2 sub-tropical, 3 toyland.
    pub landscape: u8,
    /// Whether the server is dedicated.
    pub dedicated: bool,
    /// Strings that were not UTF-8 (read with U+FFFD).
    pub warnings: Vec<DecodeWarning>,
}

/// The landscape's name (`None` for a number OpenTTD does not have).
pub fn landscape_name(landscape: u8) -> Option<&'static str> {
    ["temperate", "arctic", "tropic", "toyland"]
        .get(usize::from(landscape))
        .copied()
}

/// A date in days since year 0 (OpenTTD's proleptic Gregorian calendar) as
/// `YYYY-MM-DD`.
pub fn date_string(days: u32) -> String {
    // Days since 0000-03-01 in 400-year eras of 146,097 days (the civil-from-days
    // algorithm); year 0 is a leap year, so 1 January of year 0 is day -60.
    let z = i64::from(days) - 60;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The packet's type and body when `input` starts with a whole packet: `Ok(None)` while
/// more bytes are needed, the total size with them. A size below the header is an
/// error.
pub fn split_packet(input: &Reader<'_>) -> Result<Option<(u8, usize)>, DecodeError> {
    let mut r = input.clone();
    if r.remaining() < HEADER {
        return Ok(None);
    }
    let at = r.offset();
    let size = usize::from(r.u16_le("PacketSize")?);
    if size < HEADER {
        return Err(DecodeError::invalid(
            at,
            "PacketSize",
            "a packet size below its own 3-byte header",
        ));
    }
    let kind = r.u8("PacketType")?;
    if input.remaining() < size {
        return Ok(None);
    }
    Ok(Some((kind, size)))
}

struct Strings {
    warnings: Vec<DecodeWarning>,
}

impl Strings {
    fn read(&mut self, r: &mut Reader<'_>, field: &'static str) -> Result<Text, DecodeError> {
        let at = r.offset();
        let bytes = r.cstr(field)?;
        let (text, lossy) = crate::text::decode(bytes, true);
        if lossy {
            self.warnings.push(DecodeWarning {
                offset: at,
                field,
                message: "not UTF-8: read with U+FFFD",
            });
        }
        Ok(text)
    }
}

fn u64_le(r: &mut Reader<'_>, field: &'static str) -> Result<u64, DecodeError> {
    r.array::<8>(field).map(u64::from_le_bytes)
}

fn flag(r: &mut Reader<'_>, field: &'static str) -> Result<bool, DecodeError> {
    r.u8(field).map(|b| b != 0)
}

/// Decodes a `SERVER_GAME_INFO` body (after the size and type).
pub fn decode_game_info(r: &mut Reader<'_>) -> Result<GameInfo, DecodeError> {
    let at = r.offset();
    let version = r.u8("GameInfoVersion")?;
    if version == 0 || version > NEWEST_VERSION {
        return Err(DecodeError::new(
            at,
            "GameInfoVersion",
            DecodeErrorKind::TooLarge {
                limit: u64::from(NEWEST_VERSION),
            },
        ));
    }
    let mut s = Strings {
        warnings: Vec::new(),
    };
    let mut g = GameInfo {
        version,
        ..GameInfo::default()
    };
    let mut with_names = false;
    if version >= 7 {
        g.ticks_playing = Some(u64_le(r, "TicksPlaying")?);
    }
    if version >= 6 {
        let at = r.offset();
        let kind = r.u8("NewGrfSerialisation")?;
        match kind {
            0 => {}
            1 => with_names = true,
            _ => {
                return Err(DecodeError::invalid(
                    at,
                    "NewGrfSerialisation",
                    "a NewGRF lookup table only the game coordinator has",
                ))
            }
        }
        g.newgrf_serialisation = Some(kind);
    }
    if version >= 5 {
        g.gamescript_version = Some(r.i32_le("GameScriptVersion")?);
        g.gamescript_name = Some(s.read(r, "GameScriptName")?);
    }
    if version >= 4 {
        // At most 255, each at least 20 bytes of the packet: bounded by the input.
        let count = r.u8("NewGrfCount")?;
        g.grfs = Vec::with_capacity(usize::from(count).min(r.remaining() / 20));
        for _ in 0..count {
            let id = r.u32_le("GrfId")?;
            let md5 = r.array::<16>("GrfMd5")?;
            let name = if with_names {
                Some(s.read(r, "GrfName")?)
            } else {
                None
            };
            g.grfs.push(Grf { id, md5, name });
        }
    }
    if version >= 3 {
        g.date = r.u32_le("CurrentDate")?;
        g.start_date = r.u32_le("StartDate")?;
    }
    if version >= 2 {
        g.companies_max = Some(r.u8("CompaniesMax")?);
        g.companies_on = Some(r.u8("CompaniesOn")?);
        g.spectators_max = Some(r.u8("SpectatorsMax")?);
    }
    g.server_name = s.read(r, "ServerName")?;
    g.server_revision = s.read(r, "ServerRevision")?;
    if version < 6 {
        g.language = Some(r.u8("ServerLanguage")?);
    }
    g.password = flag(r, "UsePassword")?;
    g.clients_max = r.u8("ClientsMax")?;
    g.clients_on = r.u8("ClientsOn")?;
    g.spectators_on = r.u8("SpectatorsOn")?;
    if version < 3 {
        g.date = DAYS_TILL_1920 + u32::from(r.u16_le("CurrentDate")?);
        g.start_date = DAYS_TILL_1920 + u32::from(r.u16_le("StartDate")?);
    }
    if version < 6 {
        g.map_name = Some(s.read(r, "MapName")?);
    }
    g.map_width = r.u16_le("MapWidth")?;
    g.map_height = r.u16_le("MapHeight")?;
    g.landscape = r.u8("Landscape")?;
    g.dedicated = flag(r, "Dedicated")?;
    g.warnings = s.warnings;
    Ok(g)
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend(s.bytes().filter(|&b| b != 0));
    out.push(0);
}

impl GameInfo {
    /// Appends this info as a whole `SERVER_GAME_INFO` packet in the format of
    /// `self.version` (for tests and replays; fields the version lacks are left out). A
    /// body past 65,532 bytes is cut to fit the size field.
    pub fn encode_packet(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0, 0, PACKET_SERVER_GAME_INFO]);
        let v = self.version;
        out.push(v);
        if v >= 7 {
            out.extend_from_slice(&self.ticks_playing.unwrap_or(0).to_le_bytes());
        }
        let with_names = v >= 6 && self.newgrf_serialisation == Some(1);
        if v >= 6 {
            out.push(u8::from(with_names));
        }
        if v >= 5 {
            out.extend_from_slice(&self.gamescript_version.unwrap_or(-1).to_le_bytes());
            put_str(out, self.gamescript_name.as_deref().unwrap_or(""));
        }
        if v >= 4 {
            let grfs = self.grfs.get(..self.grfs.len().min(255)).unwrap_or(&[]);
            out.push(u8::try_from(grfs.len()).unwrap_or(u8::MAX));
            for g in grfs {
                out.extend_from_slice(&g.id.to_le_bytes());
                out.extend_from_slice(&g.md5);
                if with_names {
                    put_str(out, g.name.as_deref().unwrap_or(""));
                }
            }
        }
        if v >= 3 {
            out.extend_from_slice(&self.date.to_le_bytes());
            out.extend_from_slice(&self.start_date.to_le_bytes());
        }
        if v >= 2 {
            out.push(self.companies_max.unwrap_or(0));
            out.push(self.companies_on.unwrap_or(0));
            out.push(self.spectators_max.unwrap_or(0));
        }
        put_str(out, &self.server_name);
        put_str(out, &self.server_revision);
        if v < 6 {
            out.push(self.language.unwrap_or(0));
        }
        out.push(u8::from(self.password));
        out.extend_from_slice(&[self.clients_max, self.clients_on, self.spectators_on]);
        if v < 3 {
            for d in [self.date, self.start_date] {
                let d = u16::try_from(d.saturating_sub(DAYS_TILL_1920)).unwrap_or(u16::MAX);
                out.extend_from_slice(&d.to_le_bytes());
            }
        }
        if v < 6 {
            put_str(out, self.map_name.as_deref().unwrap_or(""));
        }
        out.extend_from_slice(&self.map_width.to_le_bytes());
        out.extend_from_slice(&self.map_height.to_le_bytes());
        out.push(self.landscape);
        out.push(u8::from(self.dedicated));
        let most = start.saturating_add(usize::from(u16::MAX));
        out.truncate(most);
        let size = u16::try_from(out.len().saturating_sub(start)).unwrap_or(u16::MAX);
        if let Some(s) = out.get_mut(start..start.saturating_add(2)) {
            s.copy_from_slice(&size.to_le_bytes());
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn sample(version: u8) -> GameInfo {
        GameInfo {
            version,
            ticks_playing: (version >= 7).then_some(123_456),
            newgrf_serialisation: (version >= 6).then_some(1),
            gamescript_version: (version >= 5).then_some(-1),
            gamescript_name: (version >= 5).then(|| "".into()),
            grfs: if version >= 4 {
                vec![Grf {
                    id: 0x0102_0304,
                    md5: [7; 16],
                    name: (version >= 6).then(|| "OpenGFX+ Trains".into()),
                }]
            } else {
                Vec::new()
            },
            date: 720_000,
            start_date: 719_900,
            companies_max: (version >= 2).then_some(15),
            companies_on: (version >= 2).then_some(2),
            spectators_max: (version >= 2).then_some(0),
            server_name: "ogp ttd".into(),
            server_revision: "13.0".into(),
            language: (version < 6).then_some(1),
            password: true,
            clients_max: 25,
            clients_on: 3,
            spectators_on: 1,
            map_name: (version < 6).then(|| "Random Map".into()),
            map_width: 256,
            map_height: 512,
            landscape: 2,
            dedicated: true,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn every_version_round_trips() {
        for v in 1..=NEWEST_VERSION {
            let g = sample(v);
            let mut p = Vec::new();
            g.encode_packet(&mut p);
            let r = Reader::new(&p);
            let (kind, size) = split_packet(&r).unwrap().unwrap();
            assert_eq!((kind, size), (PACKET_SERVER_GAME_INFO, p.len()), "v{v}");
            let mut body = Reader::new(&p[HEADER..]);
            let got = decode_game_info(&mut body).unwrap();
            assert!(body.is_empty(), "v{v}: {} left", body.remaining());
            assert_eq!(got, g, "v{v}");
        }
    }

    /// The body of version 6 as OpenTTD 13.0 (Debian 12) sends it, laid out by hand from
    /// the table in the module's documentation.
    #[test]
    fn a_version_6_vector() {
        let mut p = vec![0, 0, 6, 6, 1];
        p.extend_from_slice(&(-1i32).to_le_bytes());
        p.push(0); // no game script name
        p.push(0); // no NewGRF
        p.extend_from_slice(&720_000u32.to_le_bytes());
        p.extend_from_slice(&719_900u32.to_le_bytes());
        p.extend_from_slice(&[15, 0, 0]);
        p.extend_from_slice(b"TTD\0");
        p.extend_from_slice(b"13.0\0");
        p.extend_from_slice(&[0, 25, 0, 0]);
        p.extend_from_slice(&[0, 1, 0, 1, 0, 1]); // 256 x 256, landscape 0, dedicated
        let n = u16::try_from(p.len()).unwrap();
        p[..2].copy_from_slice(&n.to_le_bytes());
        let mut r = Reader::new(&p[HEADER..]);
        let g = decode_game_info(&mut r).unwrap();
        assert_eq!(g.server_name, "TTD");
        assert_eq!(g.server_revision, "13.0");
        assert_eq!((g.clients_max, g.clients_on), (25, 0));
        assert_eq!((g.map_width, g.map_height), (256, 256));
        assert_eq!(g.map_name, None);
        assert!(g.dedicated && !g.password);
        assert_eq!(date_string(g.date), "1971-04-18");
    }

    #[test]
    fn dates_in_the_calendar() {
        assert_eq!(date_string(0), "0000-01-01");
        assert_eq!(date_string(DAYS_TILL_1920), "1920-01-01");
        assert_eq!(date_string(DAYS_TILL_1920 + 366), "1921-01-01");
        // 1950-01-01, OpenTTD's default start year.
        assert_eq!(date_string(712_223), "1950-01-01");
    }

    #[test]
    fn bad_versions_and_sizes_are_errors() {
        for v in [0u8, 8, 255] {
            let e = decode_game_info(&mut Reader::new(&[v])).unwrap_err();
            assert_eq!(e.field, "GameInfoVersion");
        }
        let e = split_packet(&Reader::new(&[2, 0, 6])).unwrap_err();
        assert_eq!(e.field, "PacketSize");
        assert_eq!(split_packet(&Reader::new(&[9, 0, 6, 1])).unwrap(), None);
        // A lookup table id is not ours to resolve.
        let e = decode_game_info(&mut Reader::new(&[6, 2, 0, 0, 0, 0])).unwrap_err();
        assert_eq!(e.field, "NewGrfSerialisation");
    }

    #[test]
    fn every_cut_is_an_error() {
        let mut p = Vec::new();
        sample(7).encode_packet(&mut p);
        let body = &p[HEADER..];
        for n in 0..body.len() {
            assert!(
                decode_game_info(&mut Reader::new(&body[..n])).is_err(),
                "{n}"
            );
        }
    }
}

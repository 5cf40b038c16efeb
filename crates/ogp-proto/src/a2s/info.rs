//! S2A_INFO replies: Source `'I'` and GoldSrc `'m'`, decoded and encoded field by field
//! in wire order.
//!
//! Source `'I'`: protocol, name, map, folder, game, app id (u16), players, max players,
//! bots, server type, environment, password, VAC, *(The Ship, app id 2400: mode,
//! witnesses, duration)*, version, then optionally the Extra Data Flag (EDF) byte and its
//! fields **in the order 0x80, 0x10, 0x40, 0x20, 0x01** (port u16, Steam id u64, SourceTV
//! port u16 + name, keywords, game id u64), which is not the order of the bits.
//!
//! GoldSrc `'m'`: address, name, map, folder, game, players, max players, protocol,
//! server type, environment, password, is-mod (+ mod info), VAC, bots. Real replies end
//! early (HLTV stops before the bots byte): every field from is-mod on is optional, and a
//! reply that ends between them is not an error. A reply that ends inside the mod info is.
//!
//! Server type and environment are kept as the bytes sent (`'d'`, `'l'`, `'p'`; `'l'`,
//! `'w'`, `'m'`, `'o'`; real servers also send `0` or upper case). Booleans decode any
//! non-zero byte as true. Unknown EDF bits are kept; since their fields cannot be read,
//! everything after the known fields is then kept as trailing bytes. Nothing here panics.

use super::{kind, put_str, string, take_trailing, SINGLE};
use crate::error::{DecodeError, DecodeWarning};
use crate::model::Text;
use crate::reader::Reader;

/// The Ship's app id, whose INFO carries mode, witnesses and duration.
pub const SHIP_APP_ID: u16 = 2400;

/// EDF bits.
pub mod edf {
    /// Game port (u16).
    pub const PORT: u8 = 0x80;
    /// Server Steam id (u64).
    pub const STEAM_ID: u8 = 0x10;
    /// SourceTV port (u16) and name (string).
    pub const SOURCE_TV: u8 = 0x40;
    /// Keywords / tags (string).
    pub const KEYWORDS: u8 = 0x20;
    /// 64-bit game id (u64).
    pub const GAME_ID: u8 = 0x01;
    /// Every bit we know.
    pub const KNOWN: u8 = PORT | STEAM_ID | SOURCE_TV | KEYWORDS | GAME_ID;
}

/// The Ship's extra INFO fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShipInfo {
    /// Game mode: 0 Hunt, 1 Elimination, 2 Duel, 3 Deathmatch, 4 VIP Team, 5 Team
    /// Elimination.
    pub mode: u8,
    /// Witnesses needed for an arrest.
    pub witnesses: u8,
    /// Seconds before an arrest.
    pub duration: u8,
}

/// SourceTV fields (EDF 0x40).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceTv {
    /// Spectator port.
    pub port: u16,
    /// Spectator server name.
    pub name: Text,
}

/// The Extra Data Flag fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extra {
    /// 0x80: the game port.
    pub port: Option<u16>,
    /// 0x10: the server's Steam id.
    pub steam_id: Option<u64>,
    /// 0x40: SourceTV.
    pub source_tv: Option<SourceTv>,
    /// 0x20: keywords (tags).
    pub keywords: Option<Text>,
    /// 0x01: the 64-bit game id.
    pub game_id: Option<u64>,
    /// EDF bits we do not know (0x02, 0x04, 0x08), as sent.
    pub unknown_bits: u8,
}

impl Extra {
    /// The EDF byte for the fields present.
    pub fn flags(&self) -> u8 {
        let mut f = self.unknown_bits & !edf::KNOWN;
        if self.port.is_some() {
            f |= edf::PORT;
        }
        if self.steam_id.is_some() {
            f |= edf::STEAM_ID;
        }
        if self.source_tv.is_some() {
            f |= edf::SOURCE_TV;
        }
        if self.keywords.is_some() {
            f |= edf::KEYWORDS;
        }
        if self.game_id.is_some() {
            f |= edf::GAME_ID;
        }
        f
    }
}

/// A Source S2A_INFO `'I'` reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Info {
    /// Protocol version of the game (17 for most Source games, 48 for GoldSrc, 7 The
    /// Ship).
    pub protocol: u8,
    /// Server name.
    pub name: Text,
    /// Current map.
    pub map: Text,
    /// Game directory.
    pub folder: Text,
    /// Game description.
    pub game: Text,
    /// Steam app id (16 bits; the full id is in the EDF game id).
    pub app_id: u16,
    /// Players on the server.
    pub players: u8,
    /// Maximum players.
    pub max_players: u8,
    /// Bots on the server.
    pub bots: u8,
    /// Server type byte: `d` dedicated, `l` listen, `p` proxy (SourceTV/HLTV).
    pub server_type: u8,
    /// Environment byte: `l` Linux, `w` Windows, `m`/`o` macOS.
    pub environment: u8,
    /// A password is needed.
    pub password: bool,
    /// Valve Anti-Cheat.
    pub vac: bool,
    /// The Ship's fields: present exactly when `app_id` is 2400.
    pub ship: Option<ShipInfo>,
    /// Game version.
    pub version: Text,
    /// The EDF byte and its fields, if the reply has an EDF byte.
    pub extra: Option<Extra>,
    /// Bytes after the last field we could read.
    pub trailing: Vec<u8>,
}

fn flag(r: &mut Reader<'_>, field: &'static str) -> Result<bool, DecodeError> {
    r.u8(field).map(|b| b != 0)
}

impl Info {
    /// Decodes from the `'I'` byte on.
    pub(crate) fn decode_body(
        r: &mut Reader<'_>,
        w: &mut Vec<DecodeWarning>,
    ) -> Result<Self, DecodeError> {
        let at = r.offset();
        if r.u8("Type")? != kind::INFO {
            return Err(DecodeError::invalid(at, "Type", "not an 'I' info reply"));
        }
        let protocol = r.u8("Protocol")?;
        let name = string(r, "Name", w)?;
        let map = string(r, "Map", w)?;
        let folder = string(r, "Folder", w)?;
        let game = string(r, "Game", w)?;
        let app_id = r.u16_le("ID")?;
        let players = r.u8("Players")?;
        let max_players = r.u8("MaxPlayers")?;
        let bots = r.u8("Bots")?;
        let server_type = r.u8("ServerType")?;
        let environment = r.u8("Environment")?;
        let password = flag(r, "Visibility")?;
        let vac = flag(r, "VAC")?;
        let ship = if app_id == SHIP_APP_ID {
            Some(ShipInfo {
                mode: r.u8("Mode")?,
                witnesses: r.u8("Witnesses")?,
                duration: r.u8("Duration")?,
            })
        } else {
            None
        };
        let version = string(r, "Version", w)?;
        let extra = match r.peek_u8() {
            None => None,
            Some(_) => {
                let edf_at = r.offset();
                let flags = r.u8("EDF")?;
                let mut x = Extra {
                    unknown_bits: flags & !edf::KNOWN,
                    ..Extra::default()
                };
                if flags & edf::PORT != 0 {
                    x.port = Some(r.u16_le("Port")?);
                }
                if flags & edf::STEAM_ID != 0 {
                    x.steam_id = Some(r.array::<8>("SteamID").map(u64::from_le_bytes)?);
                }
                if flags & edf::SOURCE_TV != 0 {
                    let port = r.u16_le("SourceTVPort")?;
                    let name = string(r, "SourceTVName", w)?;
                    x.source_tv = Some(SourceTv { port, name });
                }
                if flags & edf::KEYWORDS != 0 {
                    x.keywords = Some(string(r, "Keywords", w)?);
                }
                if flags & edf::GAME_ID != 0 {
                    x.game_id = Some(r.array::<8>("GameID").map(u64::from_le_bytes)?);
                }
                if x.unknown_bits != 0 {
                    w.push(DecodeWarning {
                        offset: edf_at,
                        field: "EDF",
                        message: "unknown EDF bits; the bytes after the known fields are kept",
                    });
                }
                Some(x)
            }
        };
        let trailing = take_trailing(r, "EDF", w);
        Ok(Self {
            protocol,
            name,
            map,
            folder,
            game,
            app_id,
            players,
            max_players,
            bots,
            server_type,
            environment,
            password,
            vac,
            ship,
            version,
            extra,
            trailing,
        })
    }

    /// Appends the whole datagram (`FF FF FF FF 'I' …`). The Ship's fields are written
    /// when `app_id` is 2400 (zeros if `ship` is `None`) and only then.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&SINGLE);
        out.push(kind::INFO);
        out.push(self.protocol);
        put_str(out, &self.name);
        put_str(out, &self.map);
        put_str(out, &self.folder);
        put_str(out, &self.game);
        out.extend_from_slice(&self.app_id.to_le_bytes());
        out.extend_from_slice(&[
            self.players,
            self.max_players,
            self.bots,
            self.server_type,
            self.environment,
            u8::from(self.password),
            u8::from(self.vac),
        ]);
        if self.app_id == SHIP_APP_ID {
            let s = self.ship.unwrap_or_default();
            out.extend_from_slice(&[s.mode, s.witnesses, s.duration]);
        }
        put_str(out, &self.version);
        if let Some(x) = &self.extra {
            out.push(x.flags());
            if let Some(p) = x.port {
                out.extend_from_slice(&p.to_le_bytes());
            }
            if let Some(s) = x.steam_id {
                out.extend_from_slice(&s.to_le_bytes());
            }
            if let Some(tv) = &x.source_tv {
                out.extend_from_slice(&tv.port.to_le_bytes());
                put_str(out, &tv.name);
            }
            if let Some(k) = &x.keywords {
                put_str(out, k);
            }
            if let Some(g) = x.game_id {
                out.extend_from_slice(&g.to_le_bytes());
            }
        }
        out.extend_from_slice(&self.trailing);
    }
}

/// GoldSrc mod information (`'m'` replies with is-mod 1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GoldSrcMod {
    /// URL with information about the mod.
    pub url_info: Text,
    /// URL to download the mod.
    pub url_download: Text,
    /// The byte after the URLs (0 in every reply seen).
    pub reserved: u8,
    /// Mod version.
    pub version: i32,
    /// Download size in bytes.
    pub size: i32,
    /// Server-side only.
    pub server_only: bool,
    /// Has its own client DLL.
    pub custom_dll: bool,
}

/// A GoldSrc S2A_INFO `'m'` reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GoldSrcInfo {
    /// The server's address as it reports it (`ip:port`).
    pub address: Text,
    /// Server name.
    pub name: Text,
    /// Current map.
    pub map: Text,
    /// Game directory.
    pub folder: Text,
    /// Game description.
    pub game: Text,
    /// Players on the server.
    pub players: u8,
    /// Maximum players.
    pub max_players: u8,
    /// Protocol version.
    pub protocol: u8,
    /// Server type byte (`d`, `l`, `p`).
    pub server_type: u8,
    /// Environment byte (`l`, `w`).
    pub environment: u8,
    /// A password is needed.
    pub password: bool,
    /// Is-mod byte (`None`: the reply ended before it).
    pub is_mod: Option<bool>,
    /// Mod information (present when is-mod is true).
    pub mod_info: Option<GoldSrcMod>,
    /// VAC (`None`: the reply ended before it).
    pub vac: Option<bool>,
    /// Bots (`None`: the reply ended before it, as HLTV's does).
    pub bots: Option<u8>,
    /// Bytes after the last field.
    pub trailing: Vec<u8>,
}

impl GoldSrcInfo {
    /// Decodes from the `'m'` byte on.
    pub(crate) fn decode_body(
        r: &mut Reader<'_>,
        w: &mut Vec<DecodeWarning>,
    ) -> Result<Self, DecodeError> {
        let at = r.offset();
        if r.u8("Type")? != kind::INFO_GOLDSRC {
            return Err(DecodeError::invalid(at, "Type", "not an 'm' info reply"));
        }
        let mut m = Self {
            address: string(r, "Address", w)?,
            name: string(r, "Name", w)?,
            map: string(r, "Map", w)?,
            folder: string(r, "Folder", w)?,
            game: string(r, "Game", w)?,
            players: r.u8("Players")?,
            max_players: r.u8("MaxPlayers")?,
            protocol: r.u8("Protocol")?,
            server_type: r.u8("ServerType")?,
            environment: r.u8("Environment")?,
            password: flag(r, "Visibility")?,
            ..Self::default()
        };
        if r.is_empty() {
            return Ok(m);
        }
        let is_mod = flag(r, "Mod")?;
        m.is_mod = Some(is_mod);
        if is_mod {
            m.mod_info = Some(GoldSrcMod {
                url_info: string(r, "Link", w)?,
                url_download: string(r, "DownloadLink", w)?,
                reserved: r.u8("NULL")?,
                version: r.i32_le("Version")?,
                size: r.i32_le("Size")?,
                server_only: flag(r, "Type")?,
                custom_dll: flag(r, "DLL")?,
            });
        }
        if r.is_empty() {
            return Ok(m);
        }
        m.vac = Some(flag(r, "VAC")?);
        if r.is_empty() {
            return Ok(m);
        }
        m.bots = Some(r.u8("Bots")?);
        m.trailing = take_trailing(r, "Bots", w);
        Ok(m)
    }

    /// Appends the whole datagram (`FF FF FF FF 'm' …`). Optional fields are written up
    /// to the last one present (a missing one before it is written as 0); mod info is
    /// written when is-mod is true (zeros if `mod_info` is `None`).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&SINGLE);
        out.push(kind::INFO_GOLDSRC);
        put_str(out, &self.address);
        put_str(out, &self.name);
        put_str(out, &self.map);
        put_str(out, &self.folder);
        put_str(out, &self.game);
        out.extend_from_slice(&[
            self.players,
            self.max_players,
            self.protocol,
            self.server_type,
            self.environment,
            u8::from(self.password),
        ]);
        let is_mod = self.is_mod.unwrap_or(self.mod_info.is_some());
        let tail = !self.trailing.is_empty();
        let bots = self.bots.is_some() || tail;
        let vac = self.vac.is_some() || bots;
        if !(self.is_mod.is_some() || self.mod_info.is_some() || vac) {
            return;
        }
        out.push(u8::from(is_mod));
        if is_mod {
            let m = self.mod_info.clone().unwrap_or_default();
            put_str(out, &m.url_info);
            put_str(out, &m.url_download);
            out.push(m.reserved);
            out.extend_from_slice(&m.version.to_le_bytes());
            out.extend_from_slice(&m.size.to_le_bytes());
            out.push(u8::from(m.server_only));
            out.push(u8::from(m.custom_dll));
        }
        if vac {
            out.push(u8::from(self.vac.unwrap_or(false)));
        }
        if bots {
            out.push(self.bots.unwrap_or(0));
        }
        out.extend_from_slice(&self.trailing);
    }
}

/// Either kind of INFO reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InfoReply {
    /// Source `'I'`.
    Source(Info),
    /// GoldSrc `'m'`.
    GoldSrc(GoldSrcInfo),
}

impl InfoReply {
    /// Appends the whole datagram.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Self::Source(i) => i.encode(out),
            Self::GoldSrc(m) => m.encode(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2s::{decode, Message};
    use crate::text::{from_hex, to_hex};

    fn info(b: &[u8]) -> Info {
        match decode(b).unwrap().message {
            Message::Info(i) => i,
            m => panic!("{m:?}"),
        }
    }

    fn hex(s: &str) -> Vec<u8> {
        from_hex(s).unwrap()
    }

    #[test]
    fn ship_fields_before_version() {
        let mut i = Info {
            protocol: 7,
            name: "Ship Server".into(),
            map: "batavier".into(),
            folder: "ship".into(),
            game: "The Ship".into(),
            app_id: SHIP_APP_ID,
            players: 1,
            max_players: 5,
            server_type: b'l',
            environment: b'w',
            ship: Some(ShipInfo {
                mode: 1,
                witnesses: 3,
                duration: 3,
            }),
            version: "1.0.0.4".into(),
            ..Info::default()
        };
        let mut out = Vec::new();
        i.encode(&mut out);
        assert_eq!(
            to_hex(&out),
            "ffffffff4907536869702053657276657200626174617669657200736869700054686520536869700060090105006c77000001030331\
2e302e302e3400"
        );
        assert_eq!(info(&out), i);
        // not The Ship: no ship bytes even if set
        i.app_id = 2401;
        let mut out2 = Vec::new();
        i.encode(&mut out2);
        assert_eq!(out2.len(), out.len() - 3);
        assert_eq!(info(&out2).ship, None);
    }

    #[test]
    fn edf_fields_in_wire_order() {
        let i = Info {
            extra: Some(Extra {
                port: Some(27015),
                steam_id: Some(0x0102_0304_0506_0708),
                source_tv: Some(SourceTv {
                    port: 27020,
                    name: "tv".into(),
                }),
                keywords: Some("a,b".into()),
                game_id: Some(440),
                unknown_bits: 0,
            }),
            ..Info::default()
        };
        let mut out = Vec::new();
        i.encode(&mut out);
        assert_eq!(
            to_hex(&out[out.len() - 28..]),
            "f1876908070605040302018c69747600612c6200b801000000000000"
        );
        assert_eq!(info(&out), i);
    }

    #[test]
    fn truncated_info_is_an_error_at_every_cut() {
        let i = Info {
            name: "n".into(),
            version: "v".into(),
            extra: Some(Extra {
                port: Some(1),
                keywords: Some("k".into()),
                ..Extra::default()
            }),
            ..Info::default()
        };
        let mut out = Vec::new();
        i.encode(&mut out);
        // every cut before the version's NUL fails; after it, only inside EDF fields
        for cut in 5..out.len() {
            let r = decode(&out[..cut]);
            let version_end = out.iter().rposition(|&b| b == b'v').unwrap() + 1;
            if cut <= version_end {
                assert!(r.is_err(), "cut {cut}");
            } else if cut == version_end + 1 {
                assert!(r.is_ok(), "cut {cut}: no EDF byte");
            } else {
                assert!(r.is_err(), "cut {cut}");
            }
        }
    }

    #[test]
    fn goldsrc_truncated_and_full() {
        // HLTV: ends before the bots byte
        let hltv = hex("ffffffff6d3139322e3136382e312e3139373a323730323000436173746c65204d6f7274696d75733a30006f70345f6b626173650067656172626f7800484c5456000001307077000000");
        let Message::GoldSrcInfo(m) = decode(&hltv).unwrap().message else {
            panic!()
        };
        assert_eq!(m.bots, None);
        assert_eq!(m.vac, Some(false));
        assert_eq!(m.is_mod, Some(false));
        assert_eq!(m.server_type, b'p');
        let mut out = Vec::new();
        m.encode(&mut out);
        assert_eq!(out, hltv);
        // ends right after the password byte
        let short = &hltv[..hltv.len() - 2];
        let Message::GoldSrcInfo(s) = decode(short).unwrap().message else {
            panic!()
        };
        assert_eq!((s.is_mod, s.vac, s.bots), (None, None, None));
        let mut out = Vec::new();
        s.encode(&mut out);
        assert_eq!(out, short);
        // a mod cut in its middle is an error
        let mut full = GoldSrcInfo {
            is_mod: Some(true),
            mod_info: Some(GoldSrcMod {
                url_info: "u".into(),
                version: 1,
                ..GoldSrcMod::default()
            }),
            vac: Some(true),
            bots: Some(3),
            ..GoldSrcInfo::default()
        };
        let mut out = Vec::new();
        full.encode(&mut out);
        let Message::GoldSrcInfo(back) = decode(&out).unwrap().message else {
            panic!()
        };
        assert_eq!(back, full);
        assert!(decode(&out[..out.len() - 4]).is_err());
        full.trailing = vec![1, 2];
        let mut out = Vec::new();
        full.encode(&mut out);
        let d = decode(&out).unwrap();
        assert_eq!(d.warnings.len(), 1);
    }
}

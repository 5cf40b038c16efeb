//! The Default Query v1 request body (spec §3.4) and its field-mask bits.
//!
//! ```text
//! RequestFlags [ServerInfoFields [ModFields] [MapFields]] [TeamFields] [PlayerFields] [AddOnFields]
//! ```
//! Each array is present only when the bit it depends on is set: ServerInfoFields with
//! bServerInfo, ModFields with ServerInfoFields.bMod, MapFields with bMap, TeamFields with
//! bTeamList, PlayerFields with bPlayerList, AddOnFields with bAddOnList. The decoder
//! reads exactly these and reports how many trailing bytes it ignored (real clients send
//! stray bytes; A16). Running out of bytes is an error that a responder answers with
//! Error 4. Nothing here panics.

use super::types::{read_bits, write_bits, Bits};
use crate::error::DecodeError;
use crate::reader::Reader;

/// RequestFlags bits.
pub mod request {
    use super::Bits;
    /// 0.0 bServerInfo.
    pub const SERVER_INFO: Bits = Bits::bit(0, 0);
    /// 0.1 bTeamList.
    pub const TEAM_LIST: Bits = Bits::bit(0, 1);
    /// 0.2 bPlayerList.
    pub const PLAYER_LIST: Bits = Bits::bit(0, 2);
    /// 0.3 bRuleList.
    pub const RULE_LIST: Bits = Bits::bit(0, 3);
    /// 0.4 bAddOnList.
    pub const ADDON_LIST: Bits = Bits::bit(0, 4);
    /// 0.5 bLimitList.
    pub const LIMIT_LIST: Bits = Bits::bit(0, 5);
    /// 1.0 bColoredNames.
    pub const COLORED_NAMES: Bits = Bits::bit(1, 0);
    /// Every section.
    pub const ALL_LISTS: Bits = Bits(0x3f);
    /// Every bit this implementation knows.
    pub const KNOWN: Bits = ALL_LISTS.with(COLORED_NAMES);
}

/// ServerInfoFields bits.
pub mod server_info {
    use super::Bits;
    /// 0.0 bGameName.
    pub const GAME_NAME: Bits = Bits::bit(0, 0);
    /// 0.1 bServerFlags.
    pub const SERVER_FLAGS: Bits = Bits::bit(0, 1);
    /// 0.2 bHostName.
    pub const HOST_NAME: Bits = Bits::bit(0, 2);
    /// 0.3 bConnectPort.
    pub const CONNECT_PORT: Bits = Bits::bit(0, 3);
    /// 1.0 bMod.
    pub const MOD: Bits = Bits::bit(1, 0);
    /// 1.1 bGameType.
    pub const GAME_TYPE: Bits = Bits::bit(1, 1);
    /// 1.2 bGameMode.
    pub const GAME_MODE: Bits = Bits::bit(1, 2);
    /// 1.3 bMap.
    pub const MAP: Bits = Bits::bit(1, 3);
    /// 1.4 bNextMap.
    pub const NEXT_MAP: Bits = Bits::bit(1, 4);
    /// 2.0 bPlayerCount.
    pub const PLAYER_COUNT: Bits = Bits::bit(2, 0);
    /// 2.1 bSlotMax.
    pub const SLOT_MAX: Bits = Bits::bit(2, 1);
    /// 2.2 bBotCount.
    pub const BOT_COUNT: Bits = Bits::bit(2, 2);
    /// 2.3 bReservedSlots.
    pub const RESERVED_SLOTS: Bits = Bits::bit(2, 3);
    /// Every field.
    pub const ALL: Bits = Bits(0x0f | 0x1f << 7 | 0x0f << 14);
}

/// ModFields bits.
pub mod mod_fields {
    use super::Bits;
    /// 0.0 bModIdentifier.
    pub const IDENTIFIER: Bits = Bits::bit(0, 0);
    /// 0.1 bModSize.
    pub const SIZE: Bits = Bits::bit(0, 1);
    /// 0.2 bModVersion.
    pub const VERSION: Bits = Bits::bit(0, 2);
    /// 0.3 bModURL.
    pub const URL: Bits = Bits::bit(0, 3);
    /// 0.4 bModAuthor.
    pub const AUTHOR: Bits = Bits::bit(0, 4);
    /// Every field.
    pub const ALL: Bits = Bits(0x1f);
}

/// MapFields bits.
pub mod map_fields {
    use super::Bits;
    /// 0.0 bMapFileName.
    pub const FILE_NAME: Bits = Bits::bit(0, 0);
    /// 0.1 bMapFileSize.
    pub const FILE_SIZE: Bits = Bits::bit(0, 1);
    /// 0.2 bMapFileMD5.
    pub const FILE_MD5: Bits = Bits::bit(0, 2);
    /// 0.3 bMapVersion.
    pub const VERSION: Bits = Bits::bit(0, 3);
    /// 0.4 bMapURL.
    pub const URL: Bits = Bits::bit(0, 4);
    /// 0.5 bMapAuthor.
    pub const AUTHOR: Bits = Bits::bit(0, 5);
    /// Every field.
    pub const ALL: Bits = Bits(0x3f);
}

/// TeamFields bits.
pub mod team_fields {
    use super::Bits;
    /// 0.0 bTeamName.
    pub const NAME: Bits = Bits::bit(0, 0);
    /// 0.1 bTeamScore.
    pub const SCORE: Bits = Bits::bit(0, 1);
    /// 0.2 bTeamAveragePing.
    pub const AVERAGE_PING: Bits = Bits::bit(0, 2);
    /// 0.3 bTeamAverageLoss.
    pub const AVERAGE_LOSS: Bits = Bits::bit(0, 3);
    /// 0.4 bTeamPlayerCount.
    pub const PLAYER_COUNT: Bits = Bits::bit(0, 4);
    /// 0.5 bTeamColor.
    pub const COLOR: Bits = Bits::bit(0, 5);
    /// Every field.
    pub const ALL: Bits = Bits(0x3f);
}

/// PlayerFields bits.
pub mod player_fields {
    use super::Bits;
    /// 0.0 bPlayerFlags.
    pub const FLAGS: Bits = Bits::bit(0, 0);
    /// 0.1 bPlayerSlot.
    pub const SLOT: Bits = Bits::bit(0, 1);
    /// 0.2 bPlayerName.
    pub const NAME: Bits = Bits::bit(0, 2);
    /// 0.3 bPlayerTeam.
    pub const TEAM: Bits = Bits::bit(0, 3);
    /// 0.4 bPlayerClass.
    pub const CLASS: Bits = Bits::bit(0, 4);
    /// 0.5 bPlayerRace.
    pub const RACE: Bits = Bits::bit(0, 5);
    /// 1.0 bPlayerScore.
    pub const SCORE: Bits = Bits::bit(1, 0);
    /// 1.1 bPlayerFrags.
    pub const FRAGS: Bits = Bits::bit(1, 1);
    /// 1.2 bPlayerKills.
    pub const KILLS: Bits = Bits::bit(1, 2);
    /// 1.3 bPlayerDeath.
    pub const DEATH: Bits = Bits::bit(1, 3);
    /// 1.4 bPlayerSuicides.
    pub const SUICIDES: Bits = Bits::bit(1, 4);
    /// 1.5 bPlayerTeamKills.
    pub const TEAM_KILLS: Bits = Bits::bit(1, 5);
    /// 2.0 bPlayerID.
    pub const ID: Bits = Bits::bit(2, 0);
    /// 2.1 bPlayerGlobalID.
    pub const GLOBAL_ID: Bits = Bits::bit(2, 1);
    /// 2.2 bPlayerPing.
    pub const PING: Bits = Bits::bit(2, 2);
    /// 2.3 bPlayerLoss.
    pub const LOSS: Bits = Bits::bit(2, 3);
    /// 2.4 bPlayerModel.
    pub const MODEL: Bits = Bits::bit(2, 4);
    /// 2.5 bPlayerTime.
    pub const TIME: Bits = Bits::bit(2, 5);
    /// 3.0 bPlayerAddress.
    pub const ADDRESS: Bits = Bits::bit(3, 0);
    /// Every field.
    pub const ALL: Bits = Bits(0x3f | 0x3f << 7 | 0x3f << 14 | 1 << 21);
}

/// AddOnFields bits.
pub mod addon_fields {
    use super::Bits;
    /// 0.0 bAddOnFlags.
    pub const FLAGS: Bits = Bits::bit(0, 0);
    /// 0.1 bAddOnShortName.
    pub const SHORT_NAME: Bits = Bits::bit(0, 1);
    /// 0.2 bAddOnLongName.
    pub const LONG_NAME: Bits = Bits::bit(0, 2);
    /// 0.3 bAddOnVersion.
    pub const VERSION: Bits = Bits::bit(0, 3);
    /// Every field.
    pub const ALL: Bits = Bits(0x0f);
}

/// What a Default Query v1 asks for. Field masks whose dependency bit is clear are
/// [`Bits::EMPTY`] and are not on the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DefaultQuery {
    /// RequestFlags.
    pub request: Bits,
    /// ServerInfoFields.
    pub server_info: Bits,
    /// ModFields.
    pub mod_fields: Bits,
    /// MapFields (used for both the map and the next map).
    pub map_fields: Bits,
    /// TeamFields.
    pub team_fields: Bits,
    /// PlayerFields.
    pub player_fields: Bits,
    /// AddOnFields.
    pub addon_fields: Bits,
}

/// A decoded query body and the number of bytes after it that were ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodedQuery {
    /// The query.
    pub query: DefaultQuery,
    /// Bytes after the last field array.
    pub trailing: usize,
}

impl DefaultQuery {
    /// A query for everything (what the PHP client sends, minus colours).
    pub const fn everything() -> Self {
        Self {
            request: request::ALL_LISTS,
            server_info: server_info::ALL,
            mod_fields: mod_fields::ALL,
            map_fields: map_fields::ALL,
            team_fields: team_fields::ALL,
            player_fields: player_fields::ALL,
            addon_fields: addon_fields::ALL,
        }
    }

    /// A query for the server info alone, without the mod and map detail arrays (what a
    /// master asks when it verifies a server: the smallest useful query).
    pub const fn server_info_only() -> Self {
        Self {
            request: request::SERVER_INFO,
            server_info: server_info::ALL.without(server_info::MOD),
            mod_fields: Bits::EMPTY,
            map_fields: map_fields::FILE_NAME,
            team_fields: Bits::EMPTY,
            player_fields: Bits::EMPTY,
            addon_fields: Bits::EMPTY,
        }
    }

    /// Appends the query body. Arrays whose dependency is clear are omitted.
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_bits(out, self.request);
        if self.request.contains(request::SERVER_INFO) {
            write_bits(out, self.server_info);
            if self.server_info.contains(server_info::MOD) {
                write_bits(out, self.mod_fields);
            }
            if self.server_info.contains(server_info::MAP) {
                write_bits(out, self.map_fields);
            }
        }
        if self.request.contains(request::TEAM_LIST) {
            write_bits(out, self.team_fields);
        }
        if self.request.contains(request::PLAYER_LIST) {
            write_bits(out, self.player_fields);
        }
        if self.request.contains(request::ADDON_LIST) {
            write_bits(out, self.addon_fields);
        }
    }

    /// Decodes a query body. Trailing bytes are counted, not rejected. Offsets in errors
    /// count from the first byte of `body`.
    pub fn decode(body: &[u8]) -> Result<DecodedQuery, DecodeError> {
        Self::read(&mut Reader::new(body))
    }

    /// [`decode`](Self::decode) from a reader (offsets in errors are those of `r`).
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<DecodedQuery, DecodeError> {
        let mut q = DefaultQuery {
            request: read_bits(r, "RequestFlags")?,
            ..Self::default()
        };
        if q.request.contains(request::SERVER_INFO) {
            q.server_info = read_bits(r, "ServerInfoFields")?;
            if q.server_info.contains(server_info::MOD) {
                q.mod_fields = read_bits(r, "ModFields")?;
            }
            if q.server_info.contains(server_info::MAP) {
                q.map_fields = read_bits(r, "MapFields")?;
            }
        }
        if q.request.contains(request::TEAM_LIST) {
            q.team_fields = read_bits(r, "TeamFields")?;
        }
        if q.request.contains(request::PLAYER_LIST) {
            q.player_fields = read_bits(r, "PlayerFields")?;
        }
        if q.request.contains(request::ADDON_LIST) {
            q.addon_fields = read_bits(r, "AddOnFields")?;
        }
        Ok(DecodedQuery {
            query: q,
            trailing: r.remaining(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{from_hex, to_hex};

    fn decode(hex: &str) -> Result<DecodedQuery, DecodeError> {
        let b = from_hex(hex).unwrap();
        DefaultQuery::decode(&b)
    }

    #[test]
    fn php_full_query() {
        let d = decode("bf018f9f0f1f3f3fbfbfbf010f").unwrap();
        let q = d.query;
        assert_eq!(d.trailing, 0);
        assert_eq!(q.request, request::ALL_LISTS.with(request::COLORED_NAMES));
        assert_eq!(q.server_info, server_info::ALL);
        assert_eq!(q.player_fields, player_fields::ALL);
        let mut out = Vec::new();
        q.encode(&mut out);
        assert_eq!(to_hex(&out), "bf018f9f0f1f3f3fbfbfbf010f");
        let mut out = Vec::new();
        DefaultQuery::everything().encode(&mut out);
        assert_eq!(to_hex(&out), "3f8f9f0f1f3f3fbfbfbf010f");
    }

    #[test]
    fn onset_query_with_non_minimal_flags_and_stray_bytes() {
        let d = decode("81008f8f031f3f000000").unwrap();
        assert_eq!(d.query.request, request::SERVER_INFO);
        assert_eq!(d.trailing, 3);
        assert_eq!(d.query.team_fields, Bits::EMPTY);
    }

    #[test]
    fn dependencies_decide_which_arrays_are_read() {
        // bServerInfo without bMod/bMap: only ServerInfoFields
        let d = decode("0105").unwrap();
        assert_eq!(d.query.server_info, Bits(5));
        assert_eq!(d.trailing, 0);
        // bNextMap without bMap: no MapFields
        let d = decode("018010").unwrap();
        assert_eq!(d.query.server_info, server_info::NEXT_MAP);
        assert_eq!(d.query.map_fields, Bits::EMPTY);
        // each list's field array
        let d = decode("16 3f 04 0f".replace(' ', "").as_str()).unwrap();
        assert_eq!(
            (
                d.query.team_fields,
                d.query.player_fields,
                d.query.addon_fields
            ),
            (Bits(0x3f), Bits(0x04), Bits(0x0f))
        );
        // rules and limits have no field array
        assert_eq!(decode("28").unwrap().trailing, 0);
    }

    #[test]
    fn missing_arrays_are_errors() {
        // capture 20: bServerInfo but nothing follows
        let e = decode("01").unwrap_err();
        assert_eq!((e.field, e.offset), ("ServerInfoFields", 1));
        assert_eq!(decode("0180").unwrap_err().field, "ServerInfoFields");
        assert_eq!(decode("018001").unwrap_err().field, "ModFields");
        assert_eq!(decode("04").unwrap_err().field, "PlayerFields");
        assert_eq!(decode("").unwrap_err().field, "RequestFlags");
    }
}

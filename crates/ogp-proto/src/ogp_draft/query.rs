//! The draft's Default Query v1 request body (001 l.33–55) and its bit names.
//!
//! ```text
//! Requests (VarBitArray) [PlayerFields (VarBitArray), if Requests.bPlayerList]
//! ```
//!
//! The decoder reads exactly these two arrays and counts the bytes after them (ignored,
//! as v1.01 clients send stray bytes too). Unknown bits are kept: in a query they cannot
//! change the layout, since no further array is defined. Nothing here panics.

use crate::error::DecodeError;
use crate::ogp::types::{read_bits, write_bits, Bits};
use crate::reader::Reader;

/// Requests bits (001 l.34–40).
pub mod requests {
    use super::Bits;
    /// 0.0 bNoStaticData: leave out data that does not change while the server runs
    /// (D13: Hostname, MaxPlayers, ModDir).
    pub const NO_STATIC_DATA: Bits = Bits::bit(0, 0);
    /// 0.1 bInfo: the server info fields Hostname, RunTime, MaxPlayers, ModDir, Map
    /// (D10).
    pub const INFO: Bits = Bits::bit(0, 1);
    /// 0.2 bTeamList: the draft defines no team data (D11); never answered.
    pub const TEAM_LIST: Bits = Bits::bit(0, 2);
    /// 0.3 bPlayerList: the PLAYERLIST; PlayerFields follows in the query.
    pub const PLAYER_LIST: Bits = Bits::bit(0, 3);
    /// 0.4 bLimits: the draft defines no limit data (D11); never answered.
    pub const LIMITS: Bits = Bits::bit(0, 4);
    /// 0.5 bMods: the draft defines no mod list (D11); never answered.
    pub const MODS: Bits = Bits::bit(0, 5);
    /// 0.6 bRules: the draft defines no rule data (D11); never answered.
    pub const RULES: Bits = Bits::bit(0, 6);
    /// Every bit the draft defines.
    pub const KNOWN: Bits = Bits(0x7f);
}

/// PlayerFields bits (001 l.42–55). Bit `n.x` is bit `7n + x` of the answer's 16-bit
/// PLAYERLIST field mask (001 l.64–74), so `Bits(mask)` and `bits.0 as u16` convert
/// between the two.
pub mod player_fields {
    use super::Bits;
    /// 0.0 bSlot.
    pub const SLOT: Bits = Bits::bit(0, 0);
    /// 0.1 bName.
    pub const NAME: Bits = Bits::bit(0, 1);
    /// 0.2 bFrags.
    pub const FRAGS: Bits = Bits::bit(0, 2);
    /// 0.3 bID.
    pub const ID: Bits = Bits::bit(0, 3);
    /// 0.4 bWONID.
    pub const WONID: Bits = Bits::bit(0, 4);
    /// 0.5 bPing.
    pub const PING: Bits = Bits::bit(0, 5);
    /// 0.6 bLoss.
    pub const LOSS: Bits = Bits::bit(0, 6);
    /// 1.0 bTeam.
    pub const TEAM: Bits = Bits::bit(1, 0);
    /// 1.1 bModel.
    pub const MODEL: Bits = Bits::bit(1, 1);
    /// 1.2 bRate.
    pub const RATE: Bits = Bits::bit(1, 2);
    /// 1.3 bDead.
    pub const DEAD: Bits = Bits::bit(1, 3);
    /// Every field (bits 0–10 of the answer's mask).
    pub const ALL: Bits = Bits(0x7ff);
}

/// What a draft Default Query v1 asks for. `player_fields` is on the wire only with
/// bPlayerList (it is [`Bits::EMPTY`] otherwise).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DefaultQuery {
    /// Requests.
    pub requests: Bits,
    /// PlayerFields.
    pub player_fields: Bits,
}

/// A decoded query body and the number of bytes after it that were ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodedQuery {
    /// The query.
    pub query: DefaultQuery,
    /// Bytes after the last array.
    pub trailing: usize,
}

impl DefaultQuery {
    /// A query for everything the draft defines data for: bInfo and bPlayerList with
    /// every player field.
    pub const fn everything() -> Self {
        Self {
            requests: requests::INFO.with(requests::PLAYER_LIST),
            player_fields: player_fields::ALL,
        }
    }

    /// Appends the query body.
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_bits(out, self.requests);
        if self.requests.contains(requests::PLAYER_LIST) {
            write_bits(out, self.player_fields);
        }
    }

    /// Decodes a query body. Trailing bytes are counted, not rejected. Offsets in errors
    /// count from the first byte of `body`.
    pub fn decode(body: &[u8]) -> Result<DecodedQuery, DecodeError> {
        Self::read(&mut Reader::new(body))
    }

    /// [`decode`](Self::decode) from a reader (offsets in errors are those of `r`).
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<DecodedQuery, DecodeError> {
        let requests = read_bits(r, "Requests")?;
        let player_fields = if requests.contains(requests::PLAYER_LIST) {
            read_bits(r, "PlayerFields")?
        } else {
            Bits::EMPTY
        };
        Ok(DecodedQuery {
            query: DefaultQuery {
                requests,
                player_fields,
            },
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
    fn everything_is_info_and_all_player_fields() {
        let mut out = Vec::new();
        DefaultQuery::everything().encode(&mut out);
        // Requests 0a = bInfo | bPlayerList; PlayerFields ff 0f = 0.0–0.6, 1.0–1.3
        assert_eq!(to_hex(&out), "0aff0f");
        let d = decode("0aff0f").unwrap();
        assert_eq!(d.query, DefaultQuery::everything());
        assert_eq!(d.trailing, 0);
    }

    #[test]
    fn player_fields_only_with_player_list() {
        let d = decode("0205").unwrap();
        assert_eq!(d.query.requests, requests::INFO);
        assert_eq!(d.query.player_fields, Bits::EMPTY);
        assert_eq!(d.trailing, 1);
        // non-minimal arrays are accepted
        let d = decode("880003").unwrap();
        assert_eq!(d.query.requests, requests::PLAYER_LIST);
        assert_eq!(d.query.player_fields, Bits(3));
        assert_eq!(player_fields::DEAD.0, 1 << 10);
    }

    #[test]
    fn missing_arrays_are_errors() {
        assert_eq!(decode("").unwrap_err().field, "Requests");
        let e = decode("08").unwrap_err();
        assert_eq!((e.field, e.offset), ("PlayerFields", 1));
        assert_eq!(decode("0880").unwrap_err().field, "PlayerFields");
    }
}

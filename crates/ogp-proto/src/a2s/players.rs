//! S2A_PLAYER `'D'` replies.
//!
//! ```text
//! 'D' count:u8 { index:u8 name:string score:i32 duration:f32 } × count
//!     [ { deaths:i32 money:i32 } × count ]        (The Ship only)
//! ```
//!
//! The Ship's extras follow the whole list. The reply does not say whether they are
//! there; the decoder takes them when exactly `8 × count` bytes (count > 0) follow the
//! list, as every Ship server sends them, and keeps any other leftover bytes as
//! `trailing` with a warning. A list that ends cleanly before `count` entries is accepted
//! with a warning (the count byte is 8 bits; some servers stop early); one that ends
//! inside an entry is an error. The encoder writes at most 255 entries. Nothing here
//! panics; entries are allocated only as they are read.

use super::{kind, put_str, string, take_trailing, SINGLE};
use crate::error::{DecodeError, DecodeWarning};
use crate::model::Text;
use crate::reader::Reader;

/// The Ship's per-player extras.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShipPlayer {
    /// Deaths.
    pub deaths: i32,
    /// Money.
    pub money: i32,
}

/// One player of an S2A_PLAYER reply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlayerEntry {
    /// Index byte (0 on Source servers, the slot on GoldSrc ones).
    pub index: u8,
    /// Name.
    pub name: Text,
    /// Score (kills).
    pub score: i32,
    /// Seconds connected.
    pub duration: f32,
    /// The Ship's extras, when the reply carries them.
    pub ship: Option<ShipPlayer>,
}

/// An S2A_PLAYER reply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Players {
    /// The players, in reply order.
    pub players: Vec<PlayerEntry>,
    /// Bytes after the list (and after The Ship's extras) that we could not read.
    pub trailing: Vec<u8>,
}

/// Most players a reply can announce.
pub const MAX_PLAYERS: usize = 255;

impl Players {
    /// Decodes from the `'D'` byte on, scores and durations big-endian when
    /// `big_endian` (FFOW's players; no The Ship extras then).
    pub(crate) fn decode_body_in(
        r: &mut Reader<'_>,
        w: &mut Vec<DecodeWarning>,
        big_endian: bool,
    ) -> Result<Self, DecodeError> {
        let at = r.offset();
        if r.u8("Type")? != kind::PLAYERS {
            return Err(DecodeError::invalid(at, "Type", "not a 'D' player reply"));
        }
        let count = usize::from(r.u8("Players")?);
        // Each entry takes at least 10 bytes: never reserve more than the data can hold.
        let mut players = Vec::with_capacity(count.min(r.remaining() / 10));
        for _ in 0..count {
            if r.is_empty() {
                w.push(DecodeWarning {
                    offset: r.offset(),
                    field: "Players",
                    message: "fewer players than the count byte announces",
                });
                break;
            }
            players.push(PlayerEntry {
                index: r.u8("Index")?,
                name: string(r, "Name", w)?,
                score: r.array::<4>("Score").map(|b| match big_endian {
                    true => i32::from_be_bytes(b),
                    false => i32::from_le_bytes(b),
                })?,
                duration: r.array::<4>("Duration").map(|b| match big_endian {
                    true => f32::from_be_bytes(b),
                    false => f32::from_le_bytes(b),
                })?,
                ship: None,
            });
        }
        let n = players.len();
        if !big_endian && n > 0 && r.remaining() == n * 8 {
            for p in &mut players {
                p.ship = Some(ShipPlayer {
                    deaths: r.i32_le("Deaths")?,
                    money: r.i32_le("Money")?,
                });
            }
        }
        let trailing = take_trailing(r, "Players", w);
        Ok(Self { players, trailing })
    }

    /// Appends the whole datagram (`FF FF FF FF 'D' …`): at most 255 players; The
    /// Ship's extras when the first player has them (zeros for players without).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&SINGLE);
        self.encode_body(out);
    }

    /// Appends the reply without the `FF FF FF FF` prefix.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        self.encode_body_in(out, false);
    }

    /// [`Players::encode_body`], numbers big-endian when `big_endian` (FFOW; no The
    /// Ship extras then).
    pub fn encode_body_in(&self, out: &mut Vec<u8>, big_endian: bool) {
        let list = self.players.get(..MAX_PLAYERS).unwrap_or(&self.players);
        out.push(kind::PLAYERS);
        out.push(u8::try_from(list.len()).unwrap_or(u8::MAX));
        for p in list {
            out.push(p.index);
            put_str(out, &p.name);
            if big_endian {
                out.extend_from_slice(&p.score.to_be_bytes());
                out.extend_from_slice(&p.duration.to_be_bytes());
            } else {
                out.extend_from_slice(&p.score.to_le_bytes());
                out.extend_from_slice(&p.duration.to_le_bytes());
            }
        }
        if !big_endian && list.first().is_some_and(|p| p.ship.is_some()) {
            for p in list {
                let s = p.ship.unwrap_or_default();
                out.extend_from_slice(&s.deaths.to_le_bytes());
                out.extend_from_slice(&s.money.to_le_bytes());
            }
        }
        out.extend_from_slice(&self.trailing);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2s::{decode, Message};
    use crate::text::from_hex;

    fn players(b: &[u8]) -> (Players, Vec<DecodeWarning>) {
        let d = decode(b).unwrap();
        match d.message {
            Message::Players(p) => (p, d.warnings),
            m => panic!("{m:?}"),
        }
    }

    #[test]
    fn libssq_example() {
        let b = from_hex("ffffffff4402015b445d2d2d2d2d3e542e4e2e573c2d2d2d2d000e000000b4970044024b696c6c65722021212100050000006924d943").unwrap();
        let (p, w) = players(&b);
        assert!(w.is_empty());
        assert_eq!(p.players.len(), 2);
        assert_eq!(p.players[0].index, 1);
        assert_eq!(p.players[0].name, "[D]---->T.N.W<----");
        assert_eq!(p.players[0].score, 14);
        assert!((p.players[0].duration - 514.370_36).abs() < 1e-3);
        let mut out = Vec::new();
        p.encode(&mut out);
        assert_eq!(out, b);
    }

    #[test]
    fn empty_and_255_and_more() {
        let mut out = Vec::new();
        Players::default().encode(&mut out);
        assert_eq!(out, [0xff, 0xff, 0xff, 0xff, 0x44, 0]);
        assert_eq!(players(&out).0, Players::default());
        let many = Players {
            players: (0..300)
                .map(|i| PlayerEntry {
                    index: (i % 256) as u8,
                    name: format!("p{i}").into(),
                    score: i,
                    duration: i as f32,
                    ship: None,
                })
                .collect(),
            trailing: Vec::new(),
        };
        let mut out = Vec::new();
        many.encode(&mut out);
        let (back, w) = players(&out);
        assert!(w.is_empty());
        assert_eq!(back.players.len(), 255);
        assert_eq!(back.players[..], many.players[..255]);
    }

    #[test]
    fn ship_extras_and_trailing() {
        let p = Players {
            players: vec![
                PlayerEntry {
                    name: "a".into(),
                    ship: Some(ShipPlayer {
                        deaths: 3,
                        money: 1750,
                    }),
                    ..PlayerEntry::default()
                },
                PlayerEntry {
                    index: 1,
                    name: "b".into(),
                    duration: -1.0,
                    ship: Some(ShipPlayer {
                        deaths: -1,
                        money: 0,
                    }),
                    ..PlayerEntry::default()
                },
            ],
            trailing: Vec::new(),
        };
        let mut out = Vec::new();
        p.encode(&mut out);
        assert_eq!(players(&out).0, p);
        // 3 leftover bytes are trailing, with a warning
        out.extend_from_slice(&[1, 2, 3]);
        let (back, w) = players(&out);
        assert_eq!(back.trailing.len(), 19);
        assert!(back.players.iter().all(|p| p.ship.is_none()));
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn truncated_entries_fail_short_lists_warn() {
        let b = from_hex("ffffffff4402015b445d2d2d2d2d3e542e4e2e573c2d2d2d2d000e000000b4970044024b696c6c65722021212100050000006924d943").unwrap();
        for cut in 6..b.len() {
            let r = decode(&b[..cut]);
            let first_end = 5 + 1 + 1 + 19 + 8;
            if cut == 6 || cut == first_end {
                let Message::Players(p) = r.unwrap().message else {
                    panic!()
                };
                assert_eq!(p.players.len(), usize::from(cut == first_end));
            } else {
                assert!(r.is_err(), "cut {cut}");
            }
        }
        // count 200 with no entries: a warning, and no big allocation
        let (p, w) = players(&[0xff, 0xff, 0xff, 0xff, 0x44, 200]);
        assert!(p.players.is_empty());
        assert_eq!(w.len(), 1);
    }
}

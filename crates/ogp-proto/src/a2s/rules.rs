//! S2A_RULES `'E'` replies.
//!
//! ```text
//! 'E' count:u16 { name:string value:string } × count
//! ```
//!
//! Rule names may repeat; order is kept. A list that ends cleanly (between two rules)
//! before `count` rules is accepted with a warning; one that ends inside a rule is an
//! error. The encoder writes at most 65535 rules. Nothing here panics; rules are
//! allocated only as they are read.

use super::{kind, put_str, take_trailing, text_string, SINGLE};
use crate::error::{DecodeError, DecodeWarning};
use crate::model::Text;
use crate::reader::Reader;
use crate::text::TextRuns;

/// An S2A_RULES reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// Name/value pairs in reply order.
    pub rules: Vec<(Text, Text)>,
    /// Bytes after the announced rules.
    pub trailing: Vec<u8>,
}

impl Rules {
    /// Decodes from the `'E'` byte on, the count big-endian when `big_endian` (FFOW).
    pub(crate) fn decode_body_in(
        r: &mut Reader<'_>,
        w: &mut Vec<DecodeWarning>,
        big_endian: bool,
    ) -> Result<Self, DecodeError> {
        let at = r.offset();
        if r.u8("Type")? != kind::RULES {
            return Err(DecodeError::invalid(at, "Type", "not an 'E' rules reply"));
        }
        let count = usize::from(match big_endian {
            true => r.u16_be("Rules")?,
            false => r.u16_le("Rules")?,
        });
        // Each rule takes at least 2 bytes.
        let mut rules = Vec::with_capacity(count.min(r.remaining() / 2));
        let mut runs = TextRuns::default();
        for _ in 0..count {
            if r.is_empty() {
                w.push(DecodeWarning {
                    offset: r.offset(),
                    field: "Rules",
                    message: "fewer rules than the count announces",
                });
                break;
            }
            let name = text_string(r, &mut runs, "Name", w)?;
            let value = text_string(r, &mut runs, "Value", w)?;
            rules.push((name, value));
        }
        let trailing = take_trailing(r, "Rules", w);
        Ok(Self { rules, trailing })
    }

    /// Appends the whole datagram (`FF FF FF FF 'E' …`).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&SINGLE);
        self.encode_body(out);
    }

    /// Appends the reply without the `FF FF FF FF` prefix (at most 65535 rules).
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        self.encode_body_in(out, false);
    }

    /// [`Rules::encode_body`], the count big-endian when `big_endian` (FFOW).
    pub fn encode_body_in(&self, out: &mut Vec<u8>, big_endian: bool) {
        let list = self
            .rules
            .get(..usize::from(u16::MAX))
            .unwrap_or(&self.rules);
        out.push(kind::RULES);
        let n = u16::try_from(list.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&if big_endian {
            n.to_be_bytes()
        } else {
            n.to_le_bytes()
        });
        for (k, v) in list {
            put_str(out, k);
            put_str(out, v);
        }
        out.extend_from_slice(&self.trailing);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2s::{decode, Message};

    fn rules(b: &[u8]) -> (Rules, Vec<DecodeWarning>) {
        let d = decode(b).unwrap();
        match d.message {
            Message::Rules(p) => (p, d.warnings),
            m => panic!("{m:?}"),
        }
    }

    #[test]
    fn round_trip_empty_and_u16_count() {
        for n in [0usize, 1, 300, 65535, 65536 + 7] {
            let r = Rules {
                rules: (0..n)
                    .map(|i| (Text::from(format!("k{i}")), Text::from("v")))
                    .collect(),
                trailing: Vec::new(),
            };
            let mut out = Vec::new();
            r.encode(&mut out);
            let (back, w) = rules(&out);
            assert!(w.is_empty());
            assert_eq!(back.rules.len(), n.min(65535));
            assert_eq!(back.rules[..], r.rules[..n.min(65535)]);
        }
    }

    #[test]
    fn truncation() {
        let r = Rules {
            rules: vec![("a".into(), "1".into()), ("b".into(), "".into())],
            trailing: Vec::new(),
        };
        let mut out = Vec::new();
        r.encode(&mut out);
        for cut in 5..out.len() {
            let res = decode(&out[..cut]);
            if cut == 7 || cut == 11 {
                let (got, w) = rules(&out[..cut]);
                assert_eq!(got.rules.len(), (cut - 7) / 4);
                assert_eq!(w.len(), 1);
            } else {
                assert!(res.is_err(), "cut {cut}");
            }
        }
        // duplicates kept in order, trailing kept with a warning
        let mut out = Vec::new();
        Rules {
            rules: vec![("a".into(), "1".into()), ("a".into(), "2".into())],
            trailing: vec![9],
        }
        .encode(&mut out);
        let (got, w) = rules(&out);
        assert_eq!(got.rules[1].1, "2");
        assert_eq!(got.trailing, [9]);
        assert_eq!(w.len(), 1);
    }
}

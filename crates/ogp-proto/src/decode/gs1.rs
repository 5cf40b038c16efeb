//! `ogp decode` of GameSpy v1 datagrams: queries (`\status\`, `\echo\TEXT`…),
//! heartbeats (`\heartbeat\PORT\gamename\NAME`) and reply parts (`\key\value` pairs with
//! `\queryid\ID.PART` and `\final\`), which are put back together in any order into one
//! status. A reply whose parts do not all come is still described, with what is lost.

use super::error::{Context as _, Result};
use crate::gamespy1::heartbeat::{decode_heartbeat, is_heartbeat};
use crate::gamespy1::mapping::reply_to_status;
use crate::gamespy1::wire::{decode_packet, decode_query, Query};
use crate::gamespy1::{Pushed, Reassembler};
use crate::Protocol;
use serde_json::json;

use super::{plural, quote, Input, Msg};

const P: Protocol = Protocol::Gamespy1;

fn query_msg(input: &Input, queries: &[Query]) -> Msg {
    let size = input.bytes.len();
    let words: Vec<String> = queries
        .iter()
        .map(|q| match q {
            Query::Echo(t) => format!("echo {}", quote(t)),
            q => q.word().to_string(),
        })
        .collect();
    let echo = queries.iter().find_map(|q| match q {
        Query::Echo(t) => Some(t.as_str()),
        _ => None,
    });
    Msg::new(
        P,
        "query",
        format!("GameSpy v1 query: {} ({size} bytes)", words.join(", ")),
        json!({
            "queries": queries.iter().map(Query::word).collect::<Vec<_>>(),
            "echo": echo,
            "size": size,
        }),
    )
}

fn heartbeat_msg(input: &Input) -> Result<Msg> {
    let hb = decode_heartbeat(&input.bytes).with_context(|| input.name.clone())?;
    let size = input.bytes.len();
    let extra: serde_json::Map<String, serde_json::Value> = hb
        .extra
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v.as_str())))
        .collect();
    Ok(Msg::new(
        P,
        "heartbeat",
        format!(
            "GameSpy v1 heartbeat (game {}, query port {}{}, {size} bytes)",
            quote(&hb.game_name),
            hb.port,
            hb.state_changed
                .map(|n| format!(", state changed {n}"))
                .unwrap_or_default()
        ),
        json!({
            "port": hb.port, "game_name": hb.game_name.as_str(),
            "state_changed": hb.state_changed, "extra": extra, "size": size,
        }),
    ))
}

/// The reply held so far, and what it came in.
#[derive(Default)]
struct Reply {
    reasm: Reassembler,
    sizes: Vec<usize>,
    warnings: Vec<String>,
}

impl Reply {
    /// The answer of the parts held (none held: nothing), with what is missing.
    fn finish(&mut self) -> Option<Msg> {
        if self.reasm.is_empty() {
            return None;
        }
        let mut r = std::mem::take(self);
        let complete = r.reasm.is_complete();
        let missing = r.reasm.missing();
        if let Some(note) = r.reasm.missing_note() {
            r.warnings.push(format!("incomplete reply: {note}"));
        }
        let (query_id, final_part) = (r.reasm.query_id(), r.reasm.final_part());
        let pairs = r.reasm.take_pairs();
        let mapped = reply_to_status(&pairs);
        if mapped.duplicates > 0 {
            r.warnings.push(format!(
                "{} listed twice (same keyhash) dropped",
                plural(mapped.duplicates, "player", "players")
            ));
        }
        let size: usize = r.sizes.iter().sum();
        let parts = r.sizes.len();
        let mut m = Msg::answer(
            P,
            format!(
                "GameSpy v1 reply{}: {}, {} ({size} bytes{})",
                query_id.map(|q| format!(" {q}")).unwrap_or_default(),
                plural(parts, "part", "parts"),
                plural(pairs.len(), "pair", "pairs"),
                if complete { "" } else { ", incomplete" }
            ),
            json!({
                "query_id": query_id, "parts": parts, "final_part": final_part,
                "complete": complete, "missing_parts": missing, "pairs": pairs.len(),
                "size": size,
            }),
            mapped.status,
        );
        m.warnings = r.warnings;
        Some(m)
    }
}

/// Describes GameSpy v1 datagrams, in order; the parts of a reply are put back together
/// in any order into one status (a part of another reply ends the one held).
pub fn describe(inputs: &[Input], notes: &mut Vec<String>) -> Result<Vec<Msg>> {
    let mut msgs = Vec::new();
    let mut reply = Reply::default();
    for input in inputs {
        let b = &input.bytes;
        if is_heartbeat(b) {
            msgs.push(heartbeat_msg(input)?);
            continue;
        }
        if let Ok(q) = decode_query(b) {
            msgs.push(query_msg(input, &q));
            continue;
        }
        let d = decode_packet(b).with_context(|| input.name.clone())?;
        let warnings = d.warnings.iter().map(|w| format!("{}: {w}", input.name));
        let mut pushed = reply.reasm.push(d.packet.clone(), b.len());
        if pushed == Ok(Pushed::OtherQuery) {
            msgs.extend(reply.finish());
            pushed = reply.reasm.push(d.packet, b.len());
        }
        match pushed.with_context(|| format!("{}: reply parts do not fit together", input.name))? {
            Pushed::Duplicate | Pushed::OtherQuery => notes.push(format!(
                "warning: {}: a part already held, ignored",
                input.name
            )),
            p @ (Pushed::Complete | Pushed::Incomplete) => {
                reply.warnings.extend(warnings);
                reply.sizes.push(b.len());
                if p == Pushed::Complete {
                    msgs.extend(reply.finish());
                }
            }
        }
    }
    msgs.extend(reply.finish());
    Ok(msgs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(datagrams: &[&[u8]]) -> Vec<Input> {
        datagrams
            .iter()
            .enumerate()
            .map(|(i, d)| Input {
                name: format!("d{i}"),
                bytes: d.to_vec(),
            })
            .collect()
    }

    fn describe_all(datagrams: &[&[u8]]) -> Result<Vec<Msg>> {
        describe(&inputs(datagrams), &mut Vec::new())
    }

    #[test]
    fn parts_in_any_order_make_one_answer_and_a_lost_part_is_said() {
        let m = describe_all(&[
            b"\\status\\",
            b"\\player_1\\b\\queryid\\7.2\\final\\",
            b"\\hostname\\h\\player_0\\a\\queryid\\7.1",
            b"\\hostname\\x\\queryid\\8.1",
            b"\\heartbeat\\7778\\gamename\\ut",
        ])
        .unwrap();
        let kinds: Vec<&str> = m.iter().map(|m| m.kind).collect();
        assert_eq!(kinds, ["query", "answer", "heartbeat", "answer"]);
        assert_eq!(
            m[1].status
                .as_ref()
                .unwrap()
                .players
                .as_ref()
                .unwrap()
                .len(),
            2
        );
        assert_eq!(m[1].fields["complete"], true);
        assert_eq!(m[3].fields["complete"], false);
        assert_eq!(
            m[3].warnings,
            ["incomplete reply: the final part never came"]
        );
    }

    /// Hostile parts: past the part cap, a second final part, garbage. Errors, never a
    /// panic; control characters stay in the data (the printer sanitizes lines).
    #[test]
    fn hostile_parts_are_errors() {
        for bad in [&b"\\a\\b\\queryid\\1.17"[..], b"\\queryid\\x"] {
            assert!(describe_all(&[bad]).is_err(), "{bad:?}");
        }
        let e = describe_all(&[
            b"\\a\\b\\queryid\\1.2\\final\\",
            b"\\a\\c\\queryid\\1.3\\final\\",
        ])
        .err()
        .unwrap();
        assert!(format!("{e:#}").contains("do not fit"), "{e:#}");
        let m = describe_all(&[b"\\hostname\\\x1b[31mred\\final\\"]).unwrap();
        assert_eq!(
            m[0].status.as_ref().unwrap().host_name.as_deref(),
            Some("\u{1b}[31mred")
        );
    }

    /// A part sent twice is a note for the caller (the CLI prints it to stderr), not an
    /// error: the answer still comes out.
    #[test]
    fn a_duplicate_part_is_a_note() {
        let part = &b"\\hostname\\h\\queryid\\7.1"[..];
        let mut notes = Vec::new();
        let m = describe(
            &inputs(&[part, part, b"\\player_0\\a\\queryid\\7.2\\final\\"]),
            &mut notes,
        )
        .unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(notes, ["warning: d1: a part already held, ignored"]);
    }
}

//! Valve A2S split replies: a sequence of datagrams through one `a2s::Reassembler`
//! (Source layout with and without the size field, GoldSrc layout, bzip2-compressed
//! replies with their size and CRC check).
//!
//! Input: `[f: u8] [b: u8] [z: u8]`, then records `[w: u16 LE] [w & 0x7ff bytes, fewer if
//! the input ends]` until the input ends. The reassembler's limits: `max_fragments = f`,
//! `max_bytes = 256 × (b + 1)` (256 B – 64 KiB), `max_decompressed = 256 × (z + 1)`, so
//! that every limit is reachable. A record is a datagram, pushed as it is, unless
//! `w >> 11 == 0x1f`: then it is `[k: u8] [j: u8] [body]` and the harness builds a
//! compressed reply of `FF FF FF FF body` with id `0x80000000 | j`: bzip2 with the
//! declared size exact, one more, one less or negative (`k & 3`), the CRC right or wrong
//! (`k & 4`), the size field or not (`k & 8`), split into `1 + (k >> 5)` fragments pushed
//! in order or reversed (`k & 16`), so that a compressed reply can pass its checks.
//!
//! The harness keeps the fragments the reassembler accepted since it was last empty.
//! Asserts: no panic; after every push, the reassembler holds at most `max_fragments`
//! fragments and `max_bytes` bytes (raw datagrams while fragment 0 has not come, their
//! payloads once it has), `received()` counts the distinct accepted fragments, `id()` is
//! theirs and `layout()` is known exactly when fragment 0 came; a duplicate and a refused
//! fragment change nothing (the whole reassembler, compared through `Debug`); a reply
//! refused by its bzip2 checks (declared size, stream, size, CRC) is the same error
//! `split::decompress` gives for the payloads and leaves the reassembler empty; a complete
//! reply is the payloads of the accepted fragments in number order (each number once,
//! `fragments` of them, at most 15 in the GoldSrc layout), at most `max_bytes` bytes or,
//! compressed, exactly the declared size, at most `max_decompressed`, with the right
//! CRC32; it leaves the reassembler empty, and `decode_reassembled` reads it without
//! panicking, errors and warnings pointing into it.

use std::collections::{BTreeMap, BTreeSet};

use ogp_fuzz::a2s::{bzip2_payload, source_fragments};
use ogp_fuzz::{check_error, record_flags, records};
use ogp_proto::a2s::split::{
    decode_reassembled, decompress, detect_first, parse, Layout, COMPRESSED, GOLDSRC_MAX_FRAGMENTS,
};
use ogp_proto::a2s::{Fragment, Pushed, Reassembler, ReassemblyError, ReassemblyLimits, SINGLE};

struct Run {
    r: Reassembler,
    limits: ReassemblyLimits,
    /// Fragments accepted since the reassembler was last empty.
    held: Vec<Vec<u8>>,
}

/// The fragments of one reply by number (a repeated number must repeat the payload).
fn by_number(held: &[Vec<u8>], layout: Layout) -> BTreeMap<u8, (u8, &[u8])> {
    let mut parts = BTreeMap::new();
    for d in held {
        let p = match parse(d, layout) {
            Ok(p) => p,
            Err(e) => panic!("an accepted fragment does not parse in {layout:?}: {e}"),
        };
        if let Some((_, have)) = parts.insert(p.number, (p.total, p.payload)) {
            assert_eq!(have, p.payload, "two fragments numbered {}", p.number);
        }
    }
    parts
}

fn assert_empty(r: &Reassembler) {
    assert_eq!((r.received(), r.id(), r.layout()), (0, None, None), "{r:?}");
}

impl Run {
    /// The payloads of a complete reply, in number order.
    fn reply_data(&self, layout: Layout, fragments: u8) -> Vec<u8> {
        let parts = by_number(&self.held, layout);
        let numbers: Vec<u8> = parts.keys().copied().collect();
        assert_eq!(
            numbers,
            (0..fragments).collect::<Vec<_>>(),
            "fragment numbers"
        );
        assert!(
            parts.values().all(|&(t, _)| t == fragments),
            "fragment counts"
        );
        let mut data = Vec::with_capacity(parts.values().map(|&(_, p)| p.len()).sum());
        for &(_, p) in parts.values() {
            data.extend_from_slice(p);
        }
        data
    }

    /// What the reassembler holds agrees with the accepted fragments and the limits.
    fn check_held(&mut self, id: u32) {
        assert!(self.held.iter().all(|d| Fragment::peek_id(d) == Ok(id)));
        assert_eq!(self.r.id(), Some(id));
        let bytes = match self.r.layout() {
            Some(layout) => {
                let (total, bytes) = {
                    let parts = by_number(&self.held, layout);
                    let total = parts.get(&0).map(|&(t, _)| t);
                    assert!(total.is_some(), "a layout without fragment 0");
                    assert!(
                        parts.values().all(|&(t, _)| Some(t) == total),
                        "fragment counts"
                    );
                    let bytes: usize = parts.values().map(|&(_, p)| p.len()).sum();
                    (total.unwrap_or(0), bytes)
                };
                assert!(total <= self.limits.max_fragments);
                if layout == Layout::GoldSrc {
                    assert!(usize::from(total) <= GOLDSRC_MAX_FRAGMENTS);
                }
                // a fragment repeating an earlier one's number and payload is a duplicate
                let mut seen = BTreeSet::new();
                self.held
                    .retain(|d| seen.insert(parse(d, layout).map(|p| p.number).ok()));
                bytes
            }
            None => {
                for d in &self.held {
                    assert_eq!(detect_first(d, id), None, "fragment 0 held raw");
                }
                self.held.iter().map(Vec::len).sum::<usize>()
            }
        };
        assert_eq!(self.r.received(), self.held.len(), "received()");
        assert!(self.held.len() <= usize::from(self.limits.max_fragments));
        assert!(bytes <= self.limits.max_bytes, "{bytes} bytes held");
    }

    fn push(&mut self, d: &[u8]) {
        let before = self.r.clone();
        let result = self.r.push(d);
        let layout = || {
            before
                .layout()
                .or_else(|| detect_first(d, Fragment::peek_id(d).ok()?))
        };
        match result {
            Ok(Pushed::Incomplete) => {
                self.held.push(d.to_vec());
                self.check_held(Fragment::peek_id(d).expect("accepted, so a fragment"));
            }
            Ok(Pushed::Duplicate) => {
                assert_eq!(
                    format!("{before:?}"),
                    format!("{:?}", self.r),
                    "a duplicate changed it"
                );
            }
            Ok(Pushed::Complete {
                reply,
                layout: l,
                fragments,
            }) => {
                assert_eq!(Some(l), layout(), "layout of a complete reply");
                assert!(fragments <= self.limits.max_fragments);
                if l == Layout::GoldSrc {
                    assert!(usize::from(fragments) <= GOLDSRC_MAX_FRAGMENTS);
                }
                if fragments == 1 {
                    self.held.clear();
                }
                self.held.push(d.to_vec());
                let data = self.reply_data(l, fragments);
                let id = Fragment::peek_id(d).expect("a fragment");
                if id & COMPRESSED != 0 {
                    let declared = i32::from_le_bytes(data[..4].try_into().expect("4 bytes"));
                    let crc = u32::from_le_bytes(data[4..8].try_into().expect("4 bytes"));
                    assert_eq!(usize::try_from(declared).ok(), Some(reply.len()), "size");
                    assert!(reply.len() <= self.limits.max_decompressed);
                    assert_eq!(crc32fast::hash(&reply), crc, "CRC32");
                } else {
                    assert!(data.len() <= self.limits.max_bytes);
                    assert_eq!(reply, data, "reassembled reply");
                }
                self.held.clear();
                assert_empty(&self.r);
                match decode_reassembled(&reply) {
                    Ok(m) => {
                        for w in &m.warnings {
                            assert!(w.offset <= reply.len(), "{w}");
                        }
                    }
                    Err(e) => check_error(&e, 0, reply.len()),
                }
            }
            Err(
                e @ (ReassemblyError::DeclaredTooLarge { .. }
                | ReassemblyError::Bzip2
                | ReassemblyError::SizeMismatch { .. }
                | ReassemblyError::BadCrc { .. }),
            ) => {
                let l = layout().expect("a complete reply has a layout");
                let total = parse(d, l).expect("the last fragment parses").total;
                if total == 1 {
                    self.held.clear();
                }
                self.held.push(d.to_vec());
                let data = self.reply_data(l, total);
                assert_eq!(decompress(&data, self.limits.max_decompressed), Err(e));
                self.held.clear();
                assert_empty(&self.r);
            }
            Err(e) => {
                assert_eq!(
                    format!("{before:?}"),
                    format!("{:?}", self.r),
                    "refused ({e}) but changed"
                );
                if let ReassemblyError::OtherId { expected, got } = e {
                    assert_eq!(
                        (Some(expected), Fragment::peek_id(d)),
                        (before.id(), Ok(got))
                    );
                }
            }
        }
        assert!(self.r.received() <= usize::from(self.limits.max_fragments));
    }
}

/// One input of the `a2s_split` target.
pub fn run(data: &[u8]) {
    let (f, b, z, rest) = match data {
        [f, b, z, rest @ ..] => (*f, *b, *z, rest),
        _ => return,
    };
    let mut limits = ReassemblyLimits::default();
    limits.max_fragments = f;
    limits.max_bytes = 256 * (usize::from(b) + 1);
    limits.max_decompressed = 256 * (usize::from(z) + 1);
    let mut run = Run {
        r: Reassembler::with_limits(limits),
        limits,
        held: Vec::new(),
    };
    for (head, record) in records::<2>(rest) {
        if record_flags(&head) != 0x1f {
            run.push(record);
            continue;
        }
        let [k, j, body @ ..] = record else { continue };
        let mut reply = SINGLE.to_vec();
        reply.extend_from_slice(body);
        let size_delta = [0, 1, -1, i32::MIN / 2][usize::from(k & 3)];
        let payload = bzip2_payload(&reply, size_delta, u32::from(k & 4 != 0));
        let id = COMPRESSED | u32::from(*j);
        let mut fragments = source_fragments(&payload, id, k & 8 != 0, usize::from(k >> 5) + 1);
        if k & 16 != 0 {
            fragments.reverse();
        }
        for d in &fragments {
            run.push(d);
        }
    }
}

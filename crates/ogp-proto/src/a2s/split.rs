//! Split replies: the three layouts real servers send, bzip2-compressed replies, the
//! [`Reassembler`], and splitting our own replies.
//!
//! ```text
//! Source, size field:    FE FF FF FF | id:i32 | total:u8 | number:u8 | size:u16 | payload
//! Source, no size field: FE FF FF FF | id:i32 | total:u8 | number:u8 | payload     (2006 engine)
//! GoldSrc:               FE FF FF FF | id:i32 | number << 4 | total              | payload
//! ```
//!
//! Concatenated in number order, the payloads form the reply, starting with `FF FF FF
//! FF`. When bit 31 of the id is set the reply is bzip2-compressed: the payloads then
//! start with `decompressed size:i32 | CRC32:u32`, followed by the bzip2 stream; the CRC
//! covers the decompressed reply including its `FF FF FF FF` (as the Fortress Forever
//! capture shows).
//!
//! **Layout detection** is per reply and by content (as opengsq does), because real
//! servers mix the layouts with either kind of INFO: fragment 0 is the one whose payload
//! starts with `FF FF FF FF` and a reply type byte, at offset 9 (GoldSrc), 12 (Source with
//! the size field) or 10 (Source without), or, when compressed, with a bzip2 stream
//! (`"BZh"`) at offset 20 or 18. Other fragments cannot tell the layouts apart, so the
//! [`Reassembler`] holds them, raw, until fragment 0 has decided.
//!
//! The reassembler bounds what a peer can make it hold ([`ReassemblyLimits`]: fragment
//! count, total bytes, decompressed size, checked before anything is decompressed),
//! accepts fragments in any order, drops exact duplicates and refuses fragments that
//! contradict the others (another id is [`ReassemblyError::OtherId`], which callers
//! usually just drop); a refused fragment changes nothing. Nothing here panics.
//!
//! Our own replies ([`split_reply`]) use the Source layout with the size field 1248, ids
//! the caller keeps below 0x8000 (python-a2s mistakes bit 15 for "compressed"), fragments
//! in order, never compressed; the GoldSrc layout (at most 15 fragments of at most 1400
//! bytes) is there for GoldSrc emulation.

use std::fmt;

use super::{kind, SINGLE, SPLIT};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::reader::Reader;

/// Bit of the id that marks a bzip2-compressed reply.
pub const COMPRESSED: u32 = 0x8000_0000;

/// The size field Source servers send, and the payload bytes per fragment we send.
pub const SOURCE_SPLIT_SIZE: u16 = 1248;

/// Payload bytes per GoldSrc fragment we send (1400-byte datagrams).
pub const GOLDSRC_SPLIT_PAYLOAD: usize = super::MAX_DATAGRAM - 9;

/// Most fragments the GoldSrc layout can number.
pub const GOLDSRC_MAX_FRAGMENTS: usize = 15;

/// The layout of a split reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Source: total and number bytes, and the u16 size field unless the server is from
    /// the 2006 engine.
    Source {
        /// Whether fragments carry the u16 size field.
        size_field: bool,
    },
    /// GoldSrc: one byte, `number << 4 | total`.
    GoldSrc,
}

impl Layout {
    /// Bytes of the fragment header, prefix and id included.
    pub const fn header_len(self) -> usize {
        match self {
            Self::Source { size_field: true } => 12,
            Self::Source { size_field: false } => 10,
            Self::GoldSrc => 9,
        }
    }
}

/// One fragment as received: its id and the whole datagram (parsed once the layout is
/// known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fragment {
    /// The id (bit 31: compressed).
    pub id: u32,
    /// The whole datagram.
    pub datagram: Vec<u8>,
}

/// A fragment's header fields and payload, for a known layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parsed<'a> {
    /// Fragment number, from 0.
    pub number: u8,
    /// Number of fragments.
    pub total: u8,
    /// The size field (Source layout with the field).
    pub size: Option<u16>,
    /// The fragment's share of the reply.
    pub payload: &'a [u8],
}

fn is_reply_kind(b: u8) -> bool {
    matches!(
        b,
        kind::CHALLENGE
            | kind::INFO
            | kind::INFO_GOLDSRC
            | kind::PLAYERS
            | kind::RULES
            | kind::PING_REPLY
    )
}

fn starts_reply(d: &[u8], at: usize) -> bool {
    match d.get(at..at + 5) {
        Some([a, b, c, e, k]) => [*a, *b, *c, *e] == SINGLE && is_reply_kind(*k),
        _ => false,
    }
}

impl Fragment {
    /// Reads the prefix and id of a split datagram and keeps it.
    pub fn decode_raw(datagram: &[u8]) -> Result<Self, DecodeError> {
        let id = Self::peek_id(datagram)?;
        Ok(Self {
            id,
            datagram: datagram.to_vec(),
        })
    }

    /// The id of a split datagram (checks the prefix and that a header byte follows).
    pub fn peek_id(datagram: &[u8]) -> Result<u32, DecodeError> {
        let mut r = Reader::new(datagram);
        if r.array::<4>("Header")? != SPLIT {
            return Err(DecodeError::new(0, "Header", DecodeErrorKind::BadMagic));
        }
        let id = r.u32_le("ID")?;
        r.u8("Packet")?;
        Ok(id)
    }

    /// Whether the reply is bzip2-compressed (bit 31 of the id).
    pub fn compressed(&self) -> bool {
        self.id & COMPRESSED != 0
    }

    /// If this is fragment 0, the layout its content shows.
    pub fn detect_first(&self) -> Option<Layout> {
        detect_first(&self.datagram, self.id)
    }

    /// Parses the header for `layout`.
    pub fn parse(&self, layout: Layout) -> Result<Parsed<'_>, DecodeError> {
        parse(&self.datagram, layout)
    }
}

/// If `d` (a split datagram with id `id`) is fragment 0, its layout.
pub fn detect_first(d: &[u8], id: u32) -> Option<Layout> {
    let b8 = *d.get(8)?;
    if id & COMPRESSED != 0 {
        // GoldSrc never compressed. Source fragment 0: number byte 0, then the bzip2
        // stream after size and CRC.
        if d.get(9) != Some(&0) || b8 == 0 {
            return None;
        }
        if d.get(18..21) == Some(b"BZh") {
            return Some(Layout::Source { size_field: false });
        }
        if d.get(20..23) == Some(b"BZh") {
            return Some(Layout::Source { size_field: true });
        }
        return None;
    }
    if b8 >> 4 == 0 && b8 & 0x0f != 0 && starts_reply(d, 9) {
        return Some(Layout::GoldSrc);
    }
    if d.get(9) == Some(&0) && b8 != 0 {
        if starts_reply(d, 12) {
            return Some(Layout::Source { size_field: true });
        }
        if starts_reply(d, 10) {
            return Some(Layout::Source { size_field: false });
        }
    }
    None
}

/// Parses a split datagram's header for `layout`.
pub fn parse(d: &[u8], layout: Layout) -> Result<Parsed<'_>, DecodeError> {
    let mut r = Reader::new(d);
    if r.array::<4>("Header")? != SPLIT {
        return Err(DecodeError::new(0, "Header", DecodeErrorKind::BadMagic));
    }
    r.u32_le("ID")?;
    let at = r.offset();
    let (number, total, size) = match layout {
        Layout::GoldSrc => {
            let b = r.u8("Packet")?;
            (b >> 4, b & 0x0f, None)
        }
        Layout::Source { size_field } => {
            let total = r.u8("Total")?;
            let number = r.u8("Number")?;
            let size = if size_field {
                Some(r.u16_le("Size")?)
            } else {
                None
            };
            (number, total, size)
        }
    };
    if total == 0 || number >= total {
        return Err(DecodeError::invalid(
            at,
            "Packet",
            "fragment number not below the fragment count",
        ));
    }
    Ok(Parsed {
        number,
        total,
        size,
        payload: r.take_rest(),
    })
}

/// What a [`Reassembler`] may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReassemblyLimits {
    /// Most fragments per reply (default 128; GoldSrc cannot exceed 15).
    pub max_fragments: u8,
    /// Most bytes held, all fragments together (default 256 KiB).
    pub max_bytes: usize,
    /// Largest decompressed size accepted from a bzip2 reply, checked before
    /// decompressing (default 4 MiB).
    pub max_decompressed: usize,
}

impl Default for ReassemblyLimits {
    fn default() -> Self {
        Self {
            max_fragments: 128,
            max_bytes: 256 * 1024,
            max_decompressed: 4 << 20,
        }
    }
}

/// Why a fragment or a reassembled reply was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReassemblyError {
    /// The datagram is not a well-formed fragment.
    Malformed(DecodeError),
    /// The fragment belongs to another reply (its id differs from the first one's).
    OtherId {
        /// The id being reassembled.
        expected: u32,
        /// The fragment's id.
        got: u32,
    },
    /// The fragment's count differs from the others'.
    TotalMismatch,
    /// Two fragments with the same number and different bytes.
    Conflict {
        /// The fragment number.
        number: u8,
    },
    /// More fragments than [`ReassemblyLimits::max_fragments`].
    TooManyFragments {
        /// What the fragment announced.
        total: u8,
    },
    /// More bytes than [`ReassemblyLimits::max_bytes`].
    TooLarge,
    /// The bzip2 header declares a size above [`ReassemblyLimits::max_decompressed`] (or
    /// a negative one).
    DeclaredTooLarge {
        /// The declared size.
        declared: i64,
    },
    /// The bzip2 stream is corrupt or ends early.
    Bzip2,
    /// The decompressed size differs from the declared one.
    SizeMismatch {
        /// Declared.
        declared: usize,
    },
    /// The CRC32 of the decompressed reply does not match.
    BadCrc {
        /// The CRC the server sent.
        expected: u32,
        /// The CRC of what we decompressed.
        actual: u32,
    },
}

impl fmt::Display for ReassemblyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed(e) => write!(f, "malformed fragment: {e}"),
            Self::OtherId { expected, got } => write!(
                f,
                "fragment of another reply (id {got:#010x}, expected {expected:#010x})"
            ),
            Self::TotalMismatch => f.write_str("fragment count differs between fragments"),
            Self::Conflict { number } => {
                write!(f, "two different fragments numbered {number}")
            }
            Self::TooManyFragments { total } => {
                write!(f, "{total} fragments exceed our limit")
            }
            Self::TooLarge => f.write_str("split reply exceeds our size limit"),
            Self::DeclaredTooLarge { declared } => write!(
                f,
                "bzip2 reply declares {declared} decompressed bytes, beyond our limit"
            ),
            Self::Bzip2 => f.write_str("bzip2 data is corrupt or incomplete"),
            Self::SizeMismatch { declared } => write!(
                f,
                "bzip2 data does not decompress to the declared {declared} bytes"
            ),
            Self::BadCrc { expected, actual } => write!(
                f,
                "CRC32 mismatch: server sent {expected:#010x}, data has {actual:#010x}"
            ),
        }
    }
}

impl std::error::Error for ReassemblyError {}

impl From<DecodeError> for ReassemblyError {
    fn from(e: DecodeError) -> Self {
        Self::Malformed(e)
    }
}

/// What [`Reassembler::push`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// Stored; fragments are missing.
    Incomplete,
    /// An exact copy of a fragment we have; dropped.
    Duplicate,
    /// All fragments are in: the reply, starting with `FF FF FF FF`, decompressed if it
    /// was compressed. Decode it with [`decode_reassembled`].
    Complete {
        /// The reply.
        reply: Vec<u8>,
        /// The layout the fragments had.
        layout: Layout,
        /// Number of fragments.
        fragments: u8,
    },
}

/// Collects the fragments of one split reply, in any order.
#[derive(Debug, Clone, Default)]
pub struct Reassembler {
    limits: ReassemblyLimits,
    id: Option<u32>,
    layout: Option<Layout>,
    total: Option<u8>,
    parts: Vec<Option<Vec<u8>>>,
    pending: Vec<Vec<u8>>,
    bytes: usize,
    have: usize,
}

impl Reassembler {
    /// An empty reassembler with the default limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty reassembler with `limits`.
    pub fn with_limits(limits: ReassemblyLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// The id being reassembled, once a fragment arrived.
    pub fn id(&self) -> Option<u32> {
        self.id
    }

    /// The layout, once fragment 0 arrived.
    pub fn layout(&self) -> Option<Layout> {
        self.layout
    }

    /// Distinct fragments received so far (placed or held).
    pub fn received(&self) -> usize {
        self.have + self.pending.len()
    }

    /// Forgets everything (keeps the limits).
    pub fn reset(&mut self) {
        *self = Self::with_limits(self.limits);
    }

    /// Adds one split datagram. A fragment refused with an error leaves the reassembler
    /// as it was, except when it completes a compressed reply that fails its bzip2 checks
    /// ([`ReassemblyError::DeclaredTooLarge`], [`Bzip2`](ReassemblyError::Bzip2),
    /// [`SizeMismatch`](ReassemblyError::SizeMismatch),
    /// [`BadCrc`](ReassemblyError::BadCrc)): that reply's fragments are dropped and the
    /// reassembler is empty.
    pub fn push(&mut self, datagram: &[u8]) -> Result<Pushed, ReassemblyError> {
        let id = Fragment::peek_id(datagram)?;
        match self.id {
            Some(expected) if expected != id => {
                return Err(ReassemblyError::OtherId { expected, got: id })
            }
            _ => {}
        }
        if let Some(layout) = self.layout {
            let placed = self.place(datagram, layout)?;
            return self.finish(placed, layout);
        }
        let Some(layout) = detect_first(datagram, id) else {
            if self.pending.iter().any(|p| p.as_slice() == datagram) {
                return Ok(Pushed::Duplicate);
            }
            if self.pending.len() >= usize::from(self.limits.max_fragments) {
                return Err(ReassemblyError::TooManyFragments { total: u8::MAX });
            }
            self.bytes = self.charged(datagram.len())?;
            self.id = Some(id);
            self.pending.push(datagram.to_vec());
            return Ok(Pushed::Incomplete);
        };
        // Fragment 0 decides the layout. It and the held fragments go into a fresh
        // reassembler, which replaces this one only if every one of them fits.
        let mut next = Self {
            limits: self.limits,
            id: Some(id),
            layout: Some(layout),
            ..Self::default()
        };
        let mut placed = next.place(datagram, layout)?;
        // A one-fragment reply: whatever was held cannot belong to it. Otherwise every
        // held fragment must fit (once the reply is complete, as a duplicate).
        if !matches!(placed, Placed::Complete { .. }) {
            for d in &self.pending {
                match next.place(d, layout)? {
                    Placed::Duplicate => {}
                    p => placed = p,
                }
            }
        }
        *self = next;
        self.finish(placed, layout)
    }

    /// The bytes held after taking `n` more, unless that is over the limit.
    fn charged(&self, n: usize) -> Result<usize, ReassemblyError> {
        let total = self.bytes.saturating_add(n);
        if total > self.limits.max_bytes {
            return Err(ReassemblyError::TooLarge);
        }
        Ok(total)
    }

    /// Stores a fragment of a reply whose layout is known; changes nothing when it
    /// refuses it.
    fn place(&mut self, datagram: &[u8], layout: Layout) -> Result<Placed, ReassemblyError> {
        let p = parse(datagram, layout)?;
        if p.total > self.limits.max_fragments
            || (layout == Layout::GoldSrc && usize::from(p.total) > GOLDSRC_MAX_FRAGMENTS)
        {
            return Err(ReassemblyError::TooManyFragments { total: p.total });
        }
        let number = usize::from(p.number);
        if let Some(total) = self.total {
            if total != p.total {
                return Err(ReassemblyError::TotalMismatch);
            }
            match self.parts.get(number) {
                Some(None) => {}
                Some(Some(have)) => {
                    return if have.as_slice() == p.payload {
                        Ok(Placed::Duplicate)
                    } else {
                        Err(ReassemblyError::Conflict { number: p.number })
                    };
                }
                // parse() checks that the number is below the count
                None => return Err(ReassemblyError::TotalMismatch),
            }
        }
        let bytes = self.charged(p.payload.len())?;
        if self.total.is_none() {
            self.total = Some(p.total);
            self.parts = vec![None; usize::from(p.total)];
        }
        let Some(slot) = self.parts.get_mut(number) else {
            return Err(ReassemblyError::TotalMismatch);
        };
        *slot = Some(p.payload.to_vec());
        self.bytes = bytes;
        self.have += 1;
        if self.have < self.parts.len() {
            return Ok(Placed::Incomplete);
        }
        let mut data = Vec::with_capacity(self.bytes);
        for part in self.parts.iter().flatten() {
            data.extend_from_slice(part);
        }
        Ok(Placed::Complete {
            data,
            fragments: p.total,
        })
    }

    /// What a push did, once stored: a complete reply empties the reassembler and is
    /// decompressed if it was compressed.
    fn finish(&mut self, placed: Placed, layout: Layout) -> Result<Pushed, ReassemblyError> {
        match placed {
            Placed::Incomplete => Ok(Pushed::Incomplete),
            Placed::Duplicate => Ok(Pushed::Duplicate),
            Placed::Complete { data, fragments } => {
                let compressed = self.id.is_some_and(|id| id & COMPRESSED != 0);
                self.reset();
                let reply = if compressed {
                    decompress(&data, self.limits.max_decompressed)?
                } else {
                    data
                };
                Ok(Pushed::Complete {
                    reply,
                    layout,
                    fragments,
                })
            }
        }
    }
}

/// What [`Reassembler::place`] did.
enum Placed {
    Incomplete,
    Duplicate,
    Complete { data: Vec<u8>, fragments: u8 },
}

/// Decompresses a bzip2 split reply's data (`size:i32 | crc:u32 | bzip2 stream`): refuses
/// a declared size above `max` before decompressing, then checks the size and the CRC32.
/// Without the `bzip2` feature, every compressed reply is [`ReassemblyError::Bzip2`].
#[cfg(not(feature = "bzip2"))]
pub fn decompress(_data: &[u8], _max: usize) -> Result<Vec<u8>, ReassemblyError> {
    Err(ReassemblyError::Bzip2)
}

/// Decompresses a bzip2 split reply body (`DecompressedSize`, `CRC32`, data): refuses
/// a declared size above `max` before decompressing, then checks the size and the CRC32.
#[cfg(feature = "bzip2")]
pub fn decompress(data: &[u8], max: usize) -> Result<Vec<u8>, ReassemblyError> {
    let mut r = Reader::new(data);
    let declared = r.i32_le("DecompressedSize")?;
    let crc = r.u32_le("CRC32")?;
    let declared_usize = usize::try_from(declared).ok().filter(|&d| d <= max).ok_or(
        ReassemblyError::DeclaredTooLarge {
            declared: i64::from(declared),
        },
    )?;
    let input = r.take_rest();
    let mut d = bzip2::Decompress::new(false);
    let limit = declared_usize.saturating_add(1);
    let mut out: Vec<u8> = Vec::with_capacity(limit.min(64 * 1024));
    loop {
        if out.len() >= out.capacity() {
            if out.len() >= limit {
                return Err(ReassemblyError::SizeMismatch {
                    declared: declared_usize,
                });
            }
            out.reserve_exact((limit - out.len()).min(64 * 1024));
        }
        let consumed = usize::try_from(d.total_in()).unwrap_or(usize::MAX);
        let rest = input.get(consumed..).unwrap_or_default();
        let (in_before, out_before) = (d.total_in(), d.total_out());
        match d.decompress_vec(rest, &mut out) {
            Ok(bzip2::Status::StreamEnd) => break,
            Ok(_) if d.total_in() == in_before && d.total_out() == out_before => {
                return Err(ReassemblyError::Bzip2)
            }
            Ok(_) => {}
            Err(_) => return Err(ReassemblyError::Bzip2),
        }
    }
    if out.len() != declared_usize {
        return Err(ReassemblyError::SizeMismatch {
            declared: declared_usize,
        });
    }
    let actual = crc32fast::hash(&out);
    if actual != crc {
        return Err(ReassemblyError::BadCrc {
            expected: crc,
            actual,
        });
    }
    Ok(out)
}

/// Decodes a reassembled reply (which starts with `FF FF FF FF`). Offsets count from the
/// start of the reassembled data.
pub fn decode_reassembled(reply: &[u8]) -> Result<super::Decoded, DecodeError> {
    decode_reassembled_with(reply, crate::charset::Charset::Auto)
}

/// [`decode_reassembled`], reading strings that are not UTF-8 in `charset`.
pub fn decode_reassembled_with(
    reply: &[u8],
    charset: crate::charset::Charset,
) -> Result<super::Decoded, DecodeError> {
    decode_reassembled_in(reply, charset, false)
}

/// [`decode_reassembled_with`], in FFOW's dialect when `ffow`.
pub(crate) fn decode_reassembled_in(
    reply: &[u8],
    charset: crate::charset::Charset,
    ffow: bool,
) -> Result<super::Decoded, DecodeError> {
    let mut r = Reader::new(reply).with_charset(charset);
    if r.array::<4>("Header")? != SINGLE {
        return Err(DecodeError::new(0, "Header", DecodeErrorKind::BadMagic));
    }
    super::decode_body(&mut r, ffow)
}

/// Why a reply could not be split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SplitError {
    /// The reply needs more fragments than the layout can number (255 Source, 15
    /// GoldSrc) or than the caller allows.
    TooManyFragments(usize),
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooManyFragments(n) => write!(f, "reply would need {n} fragments"),
        }
    }
}

impl std::error::Error for SplitError {}

/// Payload bytes per fragment we send in `layout`.
pub const fn payload_per_fragment(layout: Layout) -> usize {
    match layout {
        Layout::Source { .. } => SOURCE_SPLIT_SIZE as usize,
        Layout::GoldSrc => GOLDSRC_SPLIT_PAYLOAD,
    }
}

/// Number of fragments `reply_len` bytes need in `layout`, or an error past the layout's
/// numbering.
pub fn fragment_count(reply_len: usize, layout: Layout) -> Result<usize, SplitError> {
    let n = reply_len.div_ceil(payload_per_fragment(layout)).max(1);
    let max = match layout {
        Layout::Source { .. } => 255,
        Layout::GoldSrc => GOLDSRC_MAX_FRAGMENTS,
    };
    if n > max {
        return Err(SplitError::TooManyFragments(n));
    }
    Ok(n)
}

/// Appends fragment `number` of `reply` (a whole reply starting with `FF FF FF FF`),
/// split in `layout` with `id` (bit 31 cleared: we never compress). `total` must come
/// from [`fragment_count`]; a number past the end appends a header with no payload.
pub fn encode_fragment(
    reply: &[u8],
    id: u32,
    layout: Layout,
    number: u8,
    total: u8,
    out: &mut Vec<u8>,
) {
    let per = payload_per_fragment(layout);
    out.extend_from_slice(&SPLIT);
    out.extend_from_slice(&(id & !COMPRESSED).to_le_bytes());
    match layout {
        Layout::GoldSrc => out.push((number << 4) | (total & 0x0f)),
        Layout::Source { size_field } => {
            out.push(total);
            out.push(number);
            if size_field {
                out.extend_from_slice(&SOURCE_SPLIT_SIZE.to_le_bytes());
            }
        }
    }
    let start = usize::from(number).saturating_mul(per);
    let chunk = reply
        .get(start..)
        .map(|rest| rest.get(..per).unwrap_or(rest))
        .unwrap_or_default();
    out.extend_from_slice(chunk);
}

/// Splits `reply` (starting with `FF FF FF FF`) into fragments in `layout`, in order.
pub fn split_reply(reply: &[u8], id: u32, layout: Layout) -> Result<Vec<Vec<u8>>, SplitError> {
    let n = fragment_count(reply.len(), layout)?;
    let total = u8::try_from(n).map_err(|_| SplitError::TooManyFragments(n))?;
    Ok((0..total)
        .map(|i| {
            let mut d = Vec::with_capacity(layout.header_len() + payload_per_fragment(layout));
            encode_fragment(reply, id, layout, i, total, &mut d);
            d
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(n: usize) -> Vec<u8> {
        let mut r = vec![0xff, 0xff, 0xff, 0xff, kind::RULES];
        r.extend((0..n).map(|i| (i % 251) as u8));
        r
    }

    fn reassemble(frags: &[Vec<u8>]) -> Result<Pushed, ReassemblyError> {
        let mut ra = Reassembler::new();
        let mut last = Pushed::Incomplete;
        for f in frags {
            last = ra.push(f)?;
        }
        Ok(last)
    }

    #[test]
    fn every_layout_round_trips_in_any_order() {
        for layout in [
            Layout::Source { size_field: true },
            Layout::Source { size_field: false },
            Layout::GoldSrc,
        ] {
            let r = reply(5000);
            let mut frags = split_reply(&r, 0x1234, layout).unwrap();
            assert_eq!(
                frags.len(),
                5000usize.div_ceil(payload_per_fragment(layout))
            );
            assert!(frags.iter().all(|f| f.len() <= super::super::MAX_DATAGRAM));
            for f in &frags {
                assert_eq!(detect_first(f, 0x1234).is_some(), f == &frags[0]);
            }
            assert_eq!(detect_first(&frags[0], 0x1234), Some(layout));
            frags.reverse();
            let dup = frags[1].clone();
            frags.insert(2, dup);
            match reassemble(&frags).unwrap() {
                Pushed::Complete {
                    reply,
                    layout: l,
                    fragments,
                } => {
                    assert_eq!(reply, r);
                    assert_eq!(l, layout);
                    assert_eq!(usize::from(fragments), frags.len() - 1);
                }
                p => panic!("{p:?}"),
            }
        }
    }

    #[test]
    fn source_fragments_are_1260_bytes_with_size_1248() {
        let frags = split_reply(&reply(3000), 7, Layout::Source { size_field: true }).unwrap();
        assert_eq!(frags[0].len(), 1260);
        assert_eq!(
            &frags[0][..12],
            &[0xfe, 0xff, 0xff, 0xff, 7, 0, 0, 0, 3, 0, 0xe0, 0x04]
        );
        // the id never has bit 31 set
        let frags = split_reply(&reply(3000), 0x8000_0001, Layout::GoldSrc).unwrap();
        assert_eq!(&frags[1][4..9], &[1, 0, 0, 0, 0x13]);
        assert_eq!(
            fragment_count(16 * GOLDSRC_SPLIT_PAYLOAD, Layout::GoldSrc),
            Err(SplitError::TooManyFragments(16))
        );
    }

    #[test]
    fn inconsistent_fragments_are_refused() {
        let r = reply(3000);
        let l = Layout::Source { size_field: true };
        let frags = split_reply(&r, 9, l).unwrap();
        let mut ra = Reassembler::new();
        ra.push(&frags[0]).unwrap();
        // another id
        let other = split_reply(&r, 10, l).unwrap();
        assert_eq!(
            ra.push(&other[1]),
            Err(ReassemblyError::OtherId {
                expected: 9,
                got: 10
            })
        );
        // same number, other bytes
        let mut changed = frags[1].clone();
        *changed.last_mut().unwrap() ^= 1;
        ra.push(&frags[1]).unwrap();
        assert_eq!(
            ra.push(&changed),
            Err(ReassemblyError::Conflict { number: 1 })
        );
        // another total
        let mut t = frags[2].clone();
        t[8] = 4;
        assert_eq!(ra.push(&t), Err(ReassemblyError::TotalMismatch));
        // number beyond total
        let mut n = frags[2].clone();
        n[9] = 3;
        assert!(matches!(ra.push(&n), Err(ReassemblyError::Malformed(_))));
        assert!(matches!(ra.push(&frags[2]), Ok(Pushed::Complete { .. })));
    }

    #[test]
    fn limits_hold() {
        let r = reply(20_000);
        let frags = split_reply(&r, 9, Layout::Source { size_field: true }).unwrap();
        let mut ra = Reassembler::with_limits(ReassemblyLimits {
            max_fragments: 8,
            ..ReassemblyLimits::default()
        });
        assert_eq!(
            ra.push(&frags[0]),
            Err(ReassemblyError::TooManyFragments { total: 17 })
        );
        let mut ra = Reassembler::with_limits(ReassemblyLimits {
            max_bytes: 5000,
            ..ReassemblyLimits::default()
        });
        let res: Result<Vec<_>, _> = frags.iter().map(|f| ra.push(f)).collect();
        assert_eq!(res, Err(ReassemblyError::TooLarge));
        // fragments held before fragment 0 are bounded too
        let mut ra = Reassembler::with_limits(ReassemblyLimits {
            max_fragments: 3,
            ..ReassemblyLimits::default()
        });
        for f in &frags[1..4] {
            ra.push(f).unwrap();
        }
        assert!(ra.push(&frags[4]).is_err());
        // garbage
        let mut ra = Reassembler::new();
        assert!(ra.push(&[0xfe, 0xff, 0xff, 0xff, 1, 0, 0]).is_err());
        assert!(ra.push(&[0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 0]).is_err());
    }

    #[test]
    fn a_refused_fragment_changes_nothing() {
        let state = |ra: &Reassembler| format!("{ra:?}");
        let frags = split_reply(&reply(5000), 9, Layout::Source { size_field: true }).unwrap();
        // held before fragment 0: refused for size or count, the id stays unset
        for limits in [
            ReassemblyLimits {
                max_fragments: 0,
                ..ReassemblyLimits::default()
            },
            ReassemblyLimits {
                max_bytes: 100,
                ..ReassemblyLimits::default()
            },
        ] {
            let mut ra = Reassembler::with_limits(limits);
            assert!(ra.push(&frags[1]).is_err());
            assert_eq!(state(&ra), state(&Reassembler::with_limits(limits)));
            assert_eq!(ra.id(), None);
        }
        // fragment 0 too large or too many: the held fragments stay, no layout
        for limits in [
            ReassemblyLimits {
                max_bytes: 2000,
                ..ReassemblyLimits::default()
            },
            ReassemblyLimits {
                max_fragments: 3,
                ..ReassemblyLimits::default()
            },
        ] {
            let mut ra = Reassembler::with_limits(limits);
            assert_eq!(ra.push(&frags[1]), Ok(Pushed::Incomplete));
            let before = state(&ra);
            assert!(ra.push(&frags[0]).is_err());
            assert_eq!(state(&ra), before);
            assert_eq!((ra.layout(), ra.received()), (None, 1));
        }
        // a held fragment that does not fit fragment 0: fragment 0 is refused, not kept;
        // also when the held fragments complete the reply before the misfit
        let mut ra = Reassembler::new();
        let mut conflict = frags[1].clone();
        *conflict.last_mut().unwrap() ^= 1;
        for f in [&frags[1], &frags[2], &frags[3], &frags[4], &conflict] {
            ra.push(f).unwrap();
        }
        let before = state(&ra);
        assert_eq!(
            ra.push(&frags[0]),
            Err(ReassemblyError::Conflict { number: 1 })
        );
        assert_eq!(state(&ra), before);
        let mut ra = Reassembler::new();
        let mut other_total = frags[2].clone();
        other_total[8] = 9;
        ra.push(&frags[1]).unwrap();
        ra.push(&other_total).unwrap();
        let before = state(&ra);
        assert_eq!(ra.push(&frags[0]), Err(ReassemblyError::TotalMismatch));
        assert_eq!(state(&ra), before);
    }

    #[test]
    fn held_duplicates_do_not_hide_the_complete_reply() {
        // fragment 1 held twice (the size field differs, the payload does not), then
        // fragment 0: the reply completes once, and nothing is left behind
        let frags = split_reply(&reply(2000), 9, Layout::Source { size_field: true }).unwrap();
        assert_eq!(frags.len(), 2);
        let mut again = frags[1].clone();
        again[10] = 0;
        let mut ra = Reassembler::new();
        assert_eq!(ra.push(&frags[1]), Ok(Pushed::Incomplete));
        assert_eq!(ra.push(&again), Ok(Pushed::Incomplete));
        assert!(matches!(ra.push(&frags[0]), Ok(Pushed::Complete { .. })));
        assert_eq!((ra.received(), ra.id(), ra.layout()), (0, None, None));
    }

    fn bz(data: &[u8]) -> Vec<u8> {
        let mut c = bzip2::Compress::new(bzip2::Compression::best(), 30);
        let mut out = Vec::with_capacity(data.len() + 1024);
        c.compress_vec(data, &mut out, bzip2::Action::Finish)
            .unwrap();
        out
    }

    fn compressed_fragments(r: &[u8], crc: u32, declared: i32, size_field: bool) -> Vec<Vec<u8>> {
        let mut payload = declared.to_le_bytes().to_vec();
        payload.extend_from_slice(&crc.to_le_bytes());
        payload.extend_from_slice(&bz(r));
        let per = 1000;
        let chunks: Vec<&[u8]> = payload.chunks(per).collect();
        let total = chunks.len() as u8;
        chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut d = SPLIT.to_vec();
                d.extend_from_slice(&(0x8000_0042u32).to_le_bytes());
                d.push(total);
                d.push(i as u8);
                if size_field {
                    d.extend_from_slice(&1248u16.to_le_bytes());
                }
                d.extend_from_slice(c);
                d
            })
            .collect()
    }

    #[test]
    fn bzip2_with_and_without_size_field_and_every_failure() {
        let r = reply(30_000);
        let crc = crc32fast::hash(&r);
        for size_field in [false, true] {
            let mut frags = compressed_fragments(&r, crc, r.len() as i32, size_field);
            assert_eq!(
                detect_first(&frags[0], 0x8000_0042),
                Some(Layout::Source { size_field })
            );
            frags.reverse();
            match reassemble(&frags).unwrap() {
                Pushed::Complete { reply, .. } => assert_eq!(reply, r),
                p => panic!("{p:?}"),
            }
        }
        let bad_crc = compressed_fragments(&r, crc ^ 1, r.len() as i32, false);
        assert!(matches!(
            reassemble(&bad_crc),
            Err(ReassemblyError::BadCrc { .. })
        ));
        let too_big = compressed_fragments(&r, crc, 5 << 20, false);
        assert_eq!(
            reassemble(&too_big),
            Err(ReassemblyError::DeclaredTooLarge { declared: 5 << 20 })
        );
        let negative = compressed_fragments(&r, crc, -1, false);
        assert!(matches!(
            reassemble(&negative),
            Err(ReassemblyError::DeclaredTooLarge { .. })
        ));
        for declared in [r.len() as i32 - 1, r.len() as i32 + 1, 0] {
            let wrong = compressed_fragments(&r, crc, declared, false);
            assert!(matches!(
                reassemble(&wrong),
                Err(ReassemblyError::SizeMismatch { .. })
            ));
        }
        // a truncated stream
        let mut cut = compressed_fragments(&r, crc, r.len() as i32, false);
        let last = cut.last_mut().unwrap();
        last.truncate(last.len() - 10);
        assert!(matches!(
            reassemble(&cut),
            Err(ReassemblyError::Bzip2 | ReassemblyError::SizeMismatch { .. })
        ));
        // garbage after the header
        assert!(decompress(&[4, 0, 0, 0, 0, 0, 0, 0, b'B', b'Z', b'h', b'9', 1, 2], 100).is_err());
        assert!(decompress(&[1, 2], 100).is_err());
    }
}

//! Split answers: a sequence of datagrams fed to a `Reassembler`, reassembled bodies
//! decoded with `decode_answer_body`.
//!
//! Input format, repeated until the input ends:
//!   `[v: u16 LE] [p: u8, only when v >> 11 == 0x1f] [datagram: (v & 0x7ff) bytes, fewer
//!   if the input ends]`
//! `p` asks for `p` × 8 KiB of zero bytes to be appended to the datagram's body (at most
//! 4 MiB per input), so that the 1 MiB reassembly limit is reachable from a small input;
//! padding is opt-in (1 in 32 random records) so that most runs stay fast. Two length
//! bytes rather than one: real split packets, the seeds, are ~470 bytes.
//!
//! Each datagram goes through `Header::decode`; headers that decode are pushed with the
//! rest of the datagram as body. Asserts: no panic; every push agrees with a small model
//! of the documented rules (NotSplit, BadNumber, Mismatch on RequestID/count, Duplicate,
//! TooLarge above MAX_REASSEMBLED_BYTES, Complete once every part is in, concatenated in
//! packet order, with packet 0's header); `received()` and `missing()` agree with the
//! model; the model, hence the reassembler, never holds more than MAX_REASSEMBLED_BYTES;
//! complete bodies decode without panic, errors and warnings within the body.

use std::collections::BTreeMap;

use ogp_fuzz::{check_error, check_warnings};
use ogp_proto::ogp::split::MAX_REASSEMBLED_BYTES;
use ogp_proto::ogp::{decode_answer_body, Header, Pushed, Reassembler, ReassemblyError};

const PAD_UNIT: usize = 8 << 10;
const PAD_BUDGET: usize = 4 << 20;
const PAD_MARK: u16 = 0x1f;

/// What the reassembler should hold, by its documented rules.
#[derive(Default)]
struct Model {
    /// (RequestID, SplitPacketCount) of the first accepted packet.
    key: Option<(Option<u32>, u8)>,
    parts: BTreeMap<u8, Vec<u8>>,
    first: Option<Header>,
    bytes: usize,
}

impl Model {
    fn push(&mut self, h: &Header, body: &[u8]) -> Result<Pushed, ReassemblyError> {
        let split = h.split.ok_or(ReassemblyError::NotSplit)?;
        if split.count == 0 || split.number >= split.count {
            return Err(ReassemblyError::BadNumber {
                number: split.number,
                count: split.count,
            });
        }
        let key = (h.request_id, split.count);
        if *self.key.get_or_insert(key) != key {
            return Err(ReassemblyError::Mismatch);
        }
        if self.parts.contains_key(&split.number) {
            return Ok(Pushed::Duplicate);
        }
        if self.bytes + body.len() > MAX_REASSEMBLED_BYTES {
            return Err(ReassemblyError::TooLarge);
        }
        self.bytes += body.len();
        self.parts.insert(split.number, body.to_vec());
        if split.number == 0 {
            self.first = Some(*h);
        }
        if self.parts.len() < usize::from(split.count) {
            return Ok(Pushed::Incomplete);
        }
        let body = self.parts.values().flatten().copied().collect();
        let header = self.first.expect("part 0 is in");
        *self = Self::default();
        Ok(Pushed::Complete { header, body })
    }

    fn missing(&self) -> Vec<u8> {
        match self.key {
            None => Vec::new(),
            Some((_, count)) => (0..count).filter(|n| !self.parts.contains_key(n)).collect(),
        }
    }
}

/// One input of the `ogp_split` target.
pub fn run(data: &[u8]) {
    let mut re = Reassembler::new();
    let mut model = Model::default();
    let mut pad_budget = PAD_BUDGET;
    let mut rest = data;
    while let Some((v, tail)) = rest.split_first_chunk::<2>() {
        let v = u16::from_le_bytes(*v);
        let (pad_units, tail) = match tail.split_first() {
            Some((&p, t)) if v >> 11 == PAD_MARK => (usize::from(p), t),
            _ => (0, tail),
        };
        let len = usize::from(v & 0x7ff).min(tail.len());
        let (datagram, tail) = tail.split_at(len);
        rest = tail;

        let (h, body_at) = match Header::decode(datagram) {
            Ok(h) => h,
            Err(e) => {
                check_error(&e, 0, datagram.len());
                continue;
            }
        };
        let mut body = datagram[body_at..].to_vec();
        let pad = (pad_units * PAD_UNIT).min(pad_budget);
        pad_budget -= pad;
        body.resize(body.len() + pad, 0);

        let got = re.push(&h.header, &body);
        let want = model.push(&h.header, &body);
        assert_eq!(got, want, "push result");
        assert!(model.bytes <= MAX_REASSEMBLED_BYTES);
        assert_eq!(re.received(), model.parts.len(), "received()");
        assert_eq!(re.missing(), model.missing(), "missing()");

        if let Ok(Pushed::Complete { header, body }) = got {
            assert!(body.len() <= MAX_REASSEMBLED_BYTES);
            assert_eq!(header.split.map(|s| s.number), Some(0));
            match decode_answer_body(&body, header.utf8()) {
                Ok(a) => check_warnings(&a.warnings, 0, body.len()),
                Err(e) => check_error(&e, 0, body.len()),
            }
        }
    }
}

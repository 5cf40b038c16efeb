//! The fuzz targets of `fuzz_targets/` (one module each, listed in [`TARGETS`]) and the
//! helpers they share.

// The targets name the helpers `ogp_fuzz::…`, as code outside the library would.
extern crate self as ogp_fuzz;

use ogp_proto::{DecodeError, Status};

pub mod a2s;
#[path = "../fuzz_targets/mod.rs"]
mod targets;

pub use targets::{Target, TARGETS};

/// The records of a fuzz input: `[head: N bytes, the last two a u16 LE word w] [record:
/// w & 0x7ff bytes, fewer if the input ends]`, repeated until the input ends (a partial
/// head ends it). Yields each head with its record; [`record_flags`] reads `w >> 11`.
pub fn records<const N: usize>(data: &[u8]) -> impl Iterator<Item = ([u8; N], &[u8])> {
    let mut rest = data;
    std::iter::from_fn(move || {
        let (head, tail) = rest.split_first_chunk::<N>()?;
        let n = usize::from(length_word(head) & 0x7ff).min(tail.len());
        let (record, tail) = tail.split_at(n);
        rest = tail;
        Some((*head, record))
    })
}

/// The top five bits of a record head's length word (see [`records`]).
pub fn record_flags<const N: usize>(head: &[u8; N]) -> u8 {
    (length_word(head) >> 11) as u8
}

fn length_word<const N: usize>(head: &[u8; N]) -> u16 {
    match head[..] {
        [.., lo, hi] => u16::from_le_bytes([lo, hi]),
        _ => 0,
    }
}

/// Asserts that a master's list of `servers` (and its `end`) survives paging: encoded
/// page after page by `encode` (which writes what fits of the servers it is given, and
/// says how many) and each page read back by `decode`, the pages give back the same
/// servers in order, and the last page the same end.
pub fn check_pages<A: PartialEq + std::fmt::Debug>(
    servers: &[A],
    end: bool,
    encode: impl Fn(&[A], bool, &mut Vec<u8>) -> usize,
    decode: impl Fn(&[u8]) -> (Vec<A>, bool),
) {
    let mut all = Vec::new();
    let mut rest = servers;
    loop {
        let mut out = Vec::new();
        let n = encode(rest, end, &mut out);
        let (back, back_end) = decode(&out);
        all.extend(back);
        rest = &rest[n..];
        if rest.is_empty() {
            assert_eq!(back_end, end);
            break;
        }
    }
    assert_eq!(all, servers);
}

/// Asserts that a decode error points into the input (or just past its end).
pub fn check_error(e: &DecodeError, base: usize, len: usize) {
    assert!(
        e.offset >= base && e.offset <= base + len,
        "error offset {} outside the input [{base}, {}]: {e}",
        e.offset,
        base + len
    );
}

/// Asserts that every warning of a decode of `len` bytes at `base` points into them (or
/// just past their end).
pub fn check_warnings(warnings: &[ogp_proto::DecodeWarning], base: usize, len: usize) {
    for w in warnings {
        assert!(
            w.offset >= base && w.offset <= base + len,
            "warning offset {} outside the input [{base}, {}]: {w}",
            w.offset,
            base + len
        );
    }
}

/// A status with the player and bot counts made explicit. An encoder derives
/// PlayerCount/BotCount from the player list when they are not set, so after a round trip
/// the counts can be explicit where they were derived before; this makes both sides
/// comparable.
pub fn with_explicit_counts(s: &Status) -> Status {
    let mut s = s.clone();
    s.player_count = s.player_count();
    s.bot_count = s.bot_count();
    s
}

/// The project's example state file (`crates/ogp-proto/tests/data/state.json`), loaded
/// once: the status the responder targets answer from.
pub fn state_status() -> &'static Status {
    static STATUS: std::sync::OnceLock<Status> = std::sync::OnceLock::new();
    STATUS.get_or_init(|| {
        Status::from_json(include_str!("../../crates/ogp-proto/tests/data/state.json"))
            .expect("tests/data/state.json loads")
    })
}

/// The payload of a GQP datagram as it is on the wire: without the `SOH … ACK` encoding
/// header and without the final `EOT`/`ETB`. `None` when there is no final byte or the
/// header has no ACK.
pub fn gqp_wire_payload(datagram: &[u8]) -> Option<&[u8]> {
    use ogp_proto::gqp::wire::{ACK, SOH};
    let (_, body) = datagram.split_last()?;
    match body.split_first() {
        Some((&SOH, rest)) => {
            let ack = rest.iter().position(|&b| b == ACK)?;
            rest.get(ack + 1..)
        }
        _ => Some(body),
    }
}

/// Asserts that text rendered for people holds no control character but `\n`: peer
/// strings must not reach a terminal raw.
pub fn assert_render_safe(s: &str) {
    if let Some(c) = s.chars().find(|&c| c.is_control() && c != '\n') {
        panic!("rendered text holds control character {c:?}: {s:?}");
    }
}

/// Asserts that a GQP frame error is well formed: a decode error points into the
/// datagram or, for a compressed one, into its decompressed payload (at most
/// `max_decoded` bytes); an unknown encoding is printable ASCII, at most
/// `MAX_ENCODING_NAME` bytes, and really unknown.
pub fn check_gqp_error(e: &ogp_proto::gqp::FrameError, len: usize, max_decoded: usize) {
    use ogp_proto::gqp::wire::MAX_ENCODING_NAME;
    use ogp_proto::gqp::{Encoding, FrameError};
    match e {
        FrameError::Decode(e) => check_error(e, 0, len.max(max_decoded)),
        FrameError::UnknownEncoding(name) => {
            assert!(name.len() <= MAX_ENCODING_NAME, "encoding name {name:?}");
            assert!(
                name.bytes().all(|b| (0x20..=0x7e).contains(&b)),
                "encoding name {name:?}"
            );
            assert_eq!(
                Encoding::parse(name),
                None,
                "known encoding {name:?} refused"
            );
        }
    }
}

/// Drives a client machine for at most `rounds` timer rounds, calling `answer` after each
/// datagram it sends (to feed it replies); true when it ended with a result.
pub fn drive_client<M: ogp_proto::client::QueryDriver>(
    m: &mut M,
    rounds: usize,
    mut answer: impl FnMut(&mut M, std::time::Instant),
) -> bool {
    let mut t = std::time::Instant::now();
    for _ in 0..rounds {
        while m.poll_transmit(t).is_some() {
            answer(m, t);
        }
        if m.take_result().is_some() {
            return true;
        }
        let Some(next) = m.poll_timeout() else {
            return false;
        };
        t = next;
        m.handle_timeout(t);
    }
    false
}

/// Drives a client machine whose server answers every datagram it sends with `reply`,
/// for at most 8 rounds ([`drive_client`]). Panics when the machine has not ended by
/// then.
pub fn answer_every_send<M: ogp_proto::client::QueryDriver>(m: &mut M, reply: &[u8]) {
    let ended = drive_client(m, 8, |m, t| m.handle_datagram(t, reply));
    assert!(
        ended || m.poll_timeout().is_none(),
        "the client did not end"
    );
}

/// Drives a stream client machine over `stream`, handed to it `piece` bytes a read
/// (whatever it writes is taken and dropped), then closes the connection; the status
/// (`Debug`) or the error's text. Each read leaves the machine holding at most
/// `max_buffer` bytes. Comparing a whole-stream run with a chunked one checks that the
/// chunking does not change the result.
pub fn drive_stream<M: ogp_proto::client::QueryDriver>(
    mut m: M,
    port: u16,
    stream: &[u8],
    piece: usize,
    max_buffer: usize,
) -> Result<String, String> {
    use ogp_proto::client::StreamEvent;
    let now = std::time::Instant::now();
    let peer = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    m.handle_stream(now, StreamEvent::Connected(peer));
    for chunk in stream.chunks(piece.max(1)) {
        while m.poll_transmit(now).is_some() {}
        m.handle_stream(now, StreamEvent::Received(chunk));
        assert!(m.stream_buffer(0) <= max_buffer);
    }
    m.handle_stream(now, StreamEvent::Closed);
    match m
        .take_result()
        .expect("the machine ends once the stream closes")
    {
        Ok(a) => Ok(format!("{:?}", a.status)),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs `query` (a stream client over the stream, handed `piece` bytes a read) with the
/// whole stream at once and with `piece` bytes a read, and asserts the same result.
pub fn same_in_two_chunkings(
    len: usize,
    piece: usize,
    query: impl Fn(usize) -> Result<String, String>,
) {
    assert_eq!(query(len), query(piece), "the chunking changed the result");
}

/// Asserts that `status` survives its JSON state file, a rule key sent more than once
/// reading back grouped (one JSON key, its values in order: [`ogp_proto::Rules::grouped`]).
pub fn same_through_json(status: &Status) {
    let json = Status::from_json(&status.to_json_pretty()).expect("state file");
    let mut grouped = status.clone();
    grouped.rules = grouped.rules.map(|r| r.grouped());
    assert_eq!(json, grouped, "status changed through JSON");
}

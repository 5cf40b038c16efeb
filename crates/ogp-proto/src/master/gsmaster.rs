//! The GameSpy master's list protocol over TCP (the classic port 28900), sans-IO: what
//! Unreal Tournament's and the other GameSpy v1 games' server browsers, the community
//! masters' clients and `quakestat -gsm` speak.
//!
//! ```text
//! master → client   \basic\\secure\CHALLENGE                    (6 letters)
//! client → master   \gamename\GAME\gamever\V\location\0\validate\RESPONSE\final\
//! client → master   \list\\gamename\GAME\final\                  (or \list\cmp\…)
//! master → client   \ip\1.2.3.4:7778\ip\5.6.7.8:7778\…\final\    (cmp: 6 bytes a server)
//! ```
//!
//! The first `gamename` is the *client's* game (qstat 2.17 says `gamespy2`, the
//! GameSpy Arcade browser; a game's own browser its game), the list's `gamename` the
//! game whose servers are asked for. Both messages may come in one segment.
//!
//! **`validate`** is GameSpy's "gsmsalg" (enctype 0): the client's game has a secret key
//! of six characters (Unreal Tournament's is `Z5Nfb0`, public for two decades); the
//! response is the challenge encrypted with a stream cipher keyed by it (an RC4-like
//! table: 256 bytes put in order, then swapped by the key; each challenge byte moves two
//! indexes through the table and is XORed with the byte they point at) and written in
//! base64 (`A`–`Z`, `a`–`z`, `0`–`9`, `+`, `/`; six bytes → eight characters). It
//! proves only that the client knows a game's key, which every copy of the game and
//! every third-party browser carries, and which no open master holds for every game:
//! qstat itself answers any challenge with the constant `12345678`. **Our master does
//! not check it**: the list is public (as over Valve's and dpmaster's protocols, which
//! have no such step), and refusing unknown keys would refuse qstat. It checks the form
//! only: a `validate` pair before the list request, every value at most
//! [`MAX_VALUE`] bytes. [`validate`] computes the response, for `ogp list` toward a
//! master that does check (the community masters check it for the games they hold a
//! key of).
//!
//! Bounds: a request is read in at most [`MAX_REQUEST`] bytes and 32 pairs a message;
//! the list's answer is built by the caller from the servers it chooses
//! ([`encode_list`]); the caller bounds its time, its connections and its bytes (the
//! master: `gs1_*` settings).

use std::net::SocketAddrV4;

use crate::error::{DecodeError, DecodeWarning};
use crate::gamespy1::wire::decode_pairs;
use crate::text::Text;

/// The most bytes a client may send before its list request is whole (real requests
/// are under 150).
pub const MAX_REQUEST: usize = 1024;
/// The longest value of a request's pair (a game name, a validate response).
pub const MAX_VALUE: usize = 64;
/// Most pairs in one message of a request.
const MAX_PAIRS: usize = 32;
/// Letters of a challenge.
pub const CHALLENGE_LEN: usize = 6;
/// The end of every message.
const FINAL: &[u8] = b"\\final\\";

/// A challenge of six capital letters from six random bytes.
pub fn challenge(random: [u8; CHALLENGE_LEN]) -> [u8; CHALLENGE_LEN] {
    random.map(|b| b'A' + b % 26)
}

/// Appends the master's greeting: `\basic\\secure\CHALLENGE`.
pub fn greeting(challenge: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(b"\\basic\\\\secure\\");
    out.extend(challenge.iter().filter(|&&b| b != b'\\'));
}

/// A client's list request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListRequest {
    /// The game whose servers are asked for (the list message's `gamename`).
    pub game: Text,
    /// `\list\cmp\`: six bytes a server (address and port, big-endian) instead of
    /// `\ip\A:P` text.
    pub compressed: bool,
    /// The client's game (the first message's `gamename`), if it said.
    pub client_game: Option<Text>,
    /// Its `validate` response (not checked: see the module documentation).
    pub validate: Text,
}

impl ListRequest {
    /// A request for `game`'s servers as text, from a client of `client_game` whose
    /// response to the challenge is `validate`.
    pub fn new(
        game: impl Into<Text>,
        client_game: impl Into<Text>,
        validate: impl Into<Text>,
    ) -> Self {
        Self {
            game: game.into(),
            compressed: false,
            client_game: Some(client_game.into()),
            validate: validate.into(),
        }
    }

    /// Appends the client's two messages (`\` dropped from values).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let put = |out: &mut Vec<u8>, s: &str| out.extend(s.bytes().filter(|&b| b != b'\\'));
        out.extend_from_slice(b"\\gamename\\");
        put(out, self.client_game.as_deref().unwrap_or(&self.game));
        out.extend_from_slice(b"\\location\\0\\validate\\");
        put(out, &self.validate);
        out.extend_from_slice(FINAL);
        out.extend_from_slice(if self.compressed {
            b"\\list\\cmp\\gamename\\"
        } else {
            b"\\list\\\\gamename\\"
        });
        put(out, &self.game);
        out.extend_from_slice(FINAL);
    }
}

/// Why a client's request was refused (the connection is closed without an answer).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestError {
    /// More than [`MAX_REQUEST`] bytes without a whole list request.
    TooLong,
    /// A message that does not decode as `\key\value` pairs.
    Malformed(DecodeError),
    /// A list request before any `validate`.
    NotValidated,
    /// A list request without a game, or a value over [`MAX_VALUE`] bytes.
    Invalid(&'static str),
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooLong => write!(f, "no whole list request in {MAX_REQUEST} bytes"),
            Self::Malformed(e) => write!(f, "malformed request: {e}"),
            Self::NotValidated => f.write_str("a list request before the validate response"),
            Self::Invalid(why) => write!(f, "bad list request: {why}"),
        }
    }
}

impl std::error::Error for RequestError {}

/// A client's side of the exchange as the master reads it: bytes in, the list request
/// out once it is whole.
#[derive(Debug, Default)]
pub struct RequestReader {
    buf: Vec<u8>,
    /// The validate message: the client's game and its response.
    hello: Option<(Option<Text>, Text)>,
}

impl RequestReader {
    /// A reader of a new connection.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes the client sent: the request once its list message has come (bytes after
    /// it are ignored), `None` while it is not whole, or why it is refused.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Option<ListRequest>, RequestError> {
        let room = MAX_REQUEST.saturating_sub(self.buf.len());
        if bytes.len() > room {
            return Err(RequestError::TooLong);
        }
        self.buf.extend_from_slice(bytes);
        while let Some(end) = find_final(&self.buf) {
            let message: Vec<u8> = self.buf.drain(..end).collect();
            if let Some(r) = self.message(&message)? {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }

    fn message(&mut self, message: &[u8]) -> Result<Option<ListRequest>, RequestError> {
        let mut warnings: Vec<DecodeWarning> = Vec::new();
        let pairs =
            decode_pairs(message, MAX_PAIRS, &mut warnings).map_err(RequestError::Malformed)?;
        if pairs.iter().any(|p| p.value.len() > MAX_VALUE) {
            return Err(RequestError::Invalid("a value over 64 bytes"));
        }
        let get = |k: &str| {
            pairs
                .iter()
                .find(|p| p.key.eq_ignore_ascii_case(k))
                .map(|p| p.value.clone())
        };
        if let Some(v) = get("validate") {
            self.hello = Some((get("gamename"), v));
            if get("list").is_none() {
                return Ok(None);
            }
        }
        let Some(list) = get("list") else {
            // another message (`\queryid\`, a client's own keys): nothing to do
            return Ok(None);
        };
        let Some((client_game, validate)) = self.hello.clone() else {
            return Err(RequestError::NotValidated);
        };
        // the list's game is the last `gamename` of its message (a message holding both
        // the validate and the list names the client's game first)
        let game = pairs
            .iter()
            .rev()
            .find(|p| p.key.eq_ignore_ascii_case("gamename"))
            .map(|p| p.value.clone())
            .filter(|g| !g.is_empty())
            .ok_or(RequestError::Invalid("no game name"))?;
        Ok(Some(ListRequest {
            game,
            compressed: list.eq_ignore_ascii_case("cmp"),
            client_game,
            validate,
        }))
    }
}

/// The end (exclusive) of the first message in `buf`: just after its `\final\`.
fn find_final(buf: &[u8]) -> Option<usize> {
    buf.windows(FINAL.len())
        .position(|w| w.eq_ignore_ascii_case(FINAL))
        .and_then(|i| i.checked_add(FINAL.len()))
}

/// Appends a list answer: `\ip\A:P` for each server then `\final\`, or six bytes a
/// server (address, port, big-endian) then `\final\` when `compressed`. Returns the
/// bytes appended.
pub fn encode_list(servers: &[SocketAddrV4], compressed: bool, out: &mut Vec<u8>) -> usize {
    let start = out.len();
    for s in servers {
        if compressed {
            out.extend_from_slice(&s.ip().octets());
            out.extend_from_slice(&s.port().to_be_bytes());
        } else {
            out.extend_from_slice(format!("\\ip\\{s}").as_bytes());
        }
    }
    out.extend_from_slice(FINAL);
    out.len().saturating_sub(start)
}

/// The most servers a list answer's decoder takes.
pub const MAX_LIST_SERVERS: usize = 100_000;

/// Decodes a whole text list answer (`\ip\A:P…\final\`); `Ok(None)` while `\final\` has
/// not come. At most [`MAX_LIST_SERVERS`] entries; entries that are not `A:P` are
/// errors.
pub fn decode_list(bytes: &[u8]) -> Result<Option<Vec<SocketAddrV4>>, DecodeError> {
    let Some(body) = bytes.strip_suffix(FINAL) else {
        return Ok(None);
    };
    if body.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let mut warnings: Vec<DecodeWarning> = Vec::new();
    let pairs = decode_pairs(body, MAX_LIST_SERVERS, &mut warnings)?;
    pairs
        .iter()
        .map(|p| {
            if !p.key.eq_ignore_ascii_case("ip") {
                return Err(DecodeError::invalid(p.at, "ip", "not an \\ip\\ entry"));
            }
            p.value
                .parse::<SocketAddrV4>()
                .map_err(|_| DecodeError::invalid(p.at, "ip", "not IPv4:PORT"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The `validate` response to `challenge` for a game whose secret key is `key`
/// (gsmsalg, enctype 0: see the module documentation). An empty key or a challenge
/// longer than 64 bytes gives an empty response.
pub fn validate(challenge: &[u8], key: &[u8]) -> String {
    if key.is_empty() || challenge.is_empty() || challenge.len() > 64 {
        return String::new();
    }
    // the table, put in order and then swapped by the key
    let mut table: [u8; 256] = std::array::from_fn(|i| u8::try_from(i).unwrap_or(0));
    let at = |t: &[u8; 256], i: u8| t.get(usize::from(i)).copied().unwrap_or(0);
    let mut a: u8 = 0;
    for (i, k) in (0..=255u8).zip(key.iter().copied().cycle()) {
        a = a.wrapping_add(at(&table, i)).wrapping_add(k);
        table.swap(usize::from(i), usize::from(a));
    }
    // the challenge through the stream
    let (mut a, mut b) = (0u8, 0u8);
    let mut enc: Vec<u8> = Vec::with_capacity(challenge.len().saturating_add(2));
    for &c in challenge {
        a = a.wrapping_add(c).wrapping_add(1);
        let x = at(&table, a);
        b = b.wrapping_add(x);
        let y = at(&table, b);
        table.swap(usize::from(a), usize::from(b));
        enc.push(c ^ at(&table, x.wrapping_add(y)));
    }
    while enc.len() % 3 != 0 {
        enc.push(0);
    }
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let sym = |v: u8| char::from(B64.get(usize::from(v & 63)).copied().unwrap_or(b'A'));
    let mut out = String::with_capacity(enc.len() / 3 * 4);
    for t in enc.chunks_exact(3) {
        if let [x, y, z] = *t {
            out.push(sym(x >> 2));
            out.push(sym(((x & 3) << 4) | (y >> 4)));
            out.push(sym(((y & 15) << 2) | (z >> 6)));
            out.push(sym(z & 63));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What qstat 2.17 sends (`quakestat -gsm,ut`, observed on loopback), in one read
    /// and in pieces.
    const QSTAT: &[u8] =
        b"\\gamename\\gamespy2\\gamever\\020109017\\location\\5\\validate\\12345678\\final\\\\list\\\\gamename\\ut\\final\\";

    #[test]
    fn qstat_and_game_clients_are_read_whole_or_in_pieces() {
        let want = ListRequest {
            game: "ut".into(),
            compressed: false,
            client_game: Some("gamespy2".into()),
            validate: "12345678".into(),
        };
        assert_eq!(RequestReader::new().push(QSTAT), Ok(Some(want.clone())));
        for cut in 1..QSTAT.len() {
            let mut r = RequestReader::new();
            let (a, b) = QSTAT.split_at(cut);
            assert_eq!(r.push(a), Ok(None), "cut {cut}");
            assert_eq!(r.push(b), Ok(Some(want.clone())), "cut {cut}");
        }
        // a game's own browser, compressed list
        let mut d = Vec::new();
        let mut req = ListRequest::new("ut", "ut", "abcdEFGH");
        req.compressed = true;
        req.encode(&mut d);
        assert_eq!(
            d,
            b"\\gamename\\ut\\location\\0\\validate\\abcdEFGH\\final\\\\list\\cmp\\gamename\\ut\\final\\"
        );
        assert_eq!(RequestReader::new().push(&d), Ok(Some(req)));
    }

    #[test]
    fn bad_requests_are_refused() {
        let e = |b: &[u8]| RequestReader::new().push(b).unwrap_err();
        assert_eq!(
            e(b"\\list\\\\gamename\\ut\\final\\"),
            RequestError::NotValidated
        );
        assert!(matches!(
            e(b"\\validate\\x\\final\\\\list\\\\final\\"),
            RequestError::Invalid(_)
        ));
        let long = [b"\\validate\\".as_slice(), &[b'a'; 100], b"\\final\\"].concat();
        assert!(matches!(e(&long), RequestError::Invalid(_)));
        assert!(matches!(e(b"junk\\final\\"), RequestError::Malformed(_)));
        // a client that never ends its message is cut at the cap, in any pieces
        let mut r = RequestReader::new();
        let mut refused = false;
        for _ in 0..100 {
            if r.push(&[b'a'; 100]).is_err() {
                refused = true;
                break;
            }
        }
        assert!(refused && r.buf.len() <= MAX_REQUEST);
        assert_eq!(e(&[b'\\'; MAX_REQUEST + 1]), RequestError::TooLong);
        // and every error says what it is in one line
        for err in [
            RequestError::TooLong,
            RequestError::NotValidated,
            RequestError::Invalid("no game name"),
        ] {
            assert!(!err.to_string().contains('\n'));
        }
    }

    #[test]
    fn lists_encode_and_decode() {
        let servers: Vec<SocketAddrV4> = vec![
            "1.2.3.4:7778".parse().unwrap(),
            "5.6.7.8:23000".parse().unwrap(),
        ];
        let mut out = Vec::new();
        encode_list(&servers, false, &mut out);
        assert_eq!(out, b"\\ip\\1.2.3.4:7778\\ip\\5.6.7.8:23000\\final\\");
        assert_eq!(decode_list(&out).unwrap(), Some(servers.clone()));
        assert_eq!(decode_list(&out[..out.len() - 1]).unwrap(), None);
        let mut out = Vec::new();
        encode_list(&servers, true, &mut out);
        assert_eq!(&out[..6], [1, 2, 3, 4, 0x1e, 0x62]);
        assert_eq!(decode_list(b"\\final\\").unwrap(), Some(vec![]));
        for bad in [
            &b"\\ip\\1.2.3.4\\final\\"[..],
            b"\\ip\\x:1\\final\\",
            b"\\host\\1.2.3.4:1\\final\\",
            b"junk\\final\\",
        ] {
            assert!(decode_list(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn greeting_and_challenge() {
        let c = challenge([0, 25, 26, 255, 7, 100]);
        assert!(c.iter().all(u8::is_ascii_uppercase));
        let mut g = Vec::new();
        greeting(&c, &mut g);
        assert_eq!(&g[..15], b"\\basic\\\\secure\\");
        assert_eq!(g.len(), 21);
    }

    #[test]
    fn validate_is_eight_base64_characters_that_depend_on_key_and_challenge() {
        // vectors from a separate transcription (Python) of the published description of
        // gsmsalg's enctype 0 (the key schedule, the stream, the base64 alphabet)
        assert_eq!(validate(b"ABCDEF", b"Z5Nfb0"), "5OOIQ5Ha");
        assert_eq!(validate(b"TXKOAT", b"Z5Nfb0"), "wptAmKCn");
        assert_eq!(validate(b"ABCDEF", b"DAncRK"), "7qaTlhDT");
        let v = validate(b"ABCDEF", b"Z5Nfb0");
        assert_eq!(v.len(), 8);
        assert!(v
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/'));
        assert_eq!(v, validate(b"ABCDEF", b"Z5Nfb0"));
        assert_ne!(v, validate(b"ABCDEG", b"Z5Nfb0"));
        assert_ne!(v, validate(b"ABCDEF", b"DAncRK"));
        assert_eq!(validate(b"ABCDEF", b""), "");
        assert_eq!(validate(&[b'A'; 65], b"k"), "");
    }
}

//! The Teeworlds 0.7 master protocol (what `teeworlds-server` 0.7 and the 0.7 client
//! speak with a master on UDP port 8283), both sides, sans-IO.
//!
//! The messages are the 0.6 master protocol's ([`super::teemaster`]: `bea2` and the
//! port, `cou2` / `siz2`, `req2` / `lis2` pages of 18-byte entries), carried in 0.7's
//! connectionless packets, which need a token handshake first:
//!
//! * **token request** (server or client → master): the control packet `04 00 00 FF FF
//!   FF FF 05`, the sender's 4-byte token and zeros to 520 bytes (0.7 peers answer no
//!   shorter one: the padding is the asker's price). The master answers `04 00 00
//!   <their token> 05 <our token>`: 12 bytes ([`encode_token_reply`]).
//! * **connectionless packet**: `21` (the connless flag, version 1), the receiver's token,
//!   the sender's token, then `FF FF FF FF` and the word ([`Frame`]). A master takes one
//!   only when the receiver's token is the one it gives the packet's source address, and
//!   answers with the sender's token first.
//!
//! What a 0.7.5 server does (observed on Debian's `teeworlds-server`, whose masters are
//! `master1.teeworlds.com` to `master4`, looked up by name at each start and every
//! hour, or the names of `masters.cfg` in its storage directory, always on port 8283):
//! a token request, `cou2` to each master that gives it a token (a master that does not
//! answer `siz2` within 3 s is not chosen: "No master servers"), then to the chosen one
//! `bea2` every 15 s with a fresh token request when its cached token has expired. The
//! reference master then checks the server with `fw??` (answered `fw!!`) and says `fwok`;
//! a master of ours verifies it instead by the 0.7 query (a token handshake, then
//! `gie3` with our integer token, [`crate::teeworlds7`]) and says `fwok` once it has
//! ([`encode_fwok`]), which the server logs as "server registered".
//!
//! Our tokens are stateless ([`Tokens`]): a keyed hash (SipHash-2-4 with the master's
//! secret) of the peer's address and a 60-second window, the current or the previous
//! window's taken, as the 0.7 engine derives its own from the address and a seed it
//! renews every 16 s (a peer keeps a token it was given for 16 s in 0.7.5, for 64 in
//! some forks: a token of ours lasts 60 to 120 s). A datagram forged from an address we never answered carries no
//! valid token: it is not acted on. A token reply (12 bytes) answers a request of at
//! least 520: the master sends nobody more than it was sent. A valid token in a
//! heartbeat proves that its source received our reply to a 520-byte request from it
//! within the last two minutes; the master counts that request's bytes toward the
//! verification's budget ([`HEARTBEAT_CREDIT`]), so that its 520-byte handshake may go
//! to a server whose heartbeat is 19 bytes. A heartbeat that finds no place for its
//! verification is probed (the token request) as every registration is, but the 12-byte
//! token reply would not pay for the 18-byte `gie3`: it starts nothing, and the server
//! is verified at one of its next heartbeats (every 15 s).
//!
//! Nothing here panics; decoding reads through the crate's bounded reader and the 0.6
//! decoders.

use std::hash::Hasher;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use siphasher::sip::SipHasher24;

use super::addr::canonical;
use super::budget::{answer_pages, Answered, ListAdmission, ListBudget};
use super::teemaster::{self, Heartbeat, Request};
use crate::error::DecodeError;
use crate::reader::Reader;
use crate::teeworlds::wire::{CONNLESS7, CONTROL7, CTRL_TOKEN, TOKEN_NONE, TOKEN_REQUEST_LEN};

/// The port 0.7 masters listen on (0.7 servers know no other).
pub const DEFAULT_PORT: u16 = 8283;

/// A connectionless packet's header: `21` and the two tokens.
pub const HEADER_LEN: usize = 9;

/// The largest `lis2` page of ours (1,367 bytes).
pub const MAX_PAGE_BYTES: usize = teemaster::MAX_PAGE_BYTES - teemaster::HEADER_LEN + HEADER_LEN;

/// A token reply's length.
pub const TOKEN_REPLY_LEN: usize = 12;

/// How long one window of our tokens lasts (a token is taken in its window and the
/// next: 60 to 120 s).
pub const TOKEN_WINDOW: Duration = Duration::from_secs(60);

/// The bytes a heartbeat with a valid token stands for: its own and those of the
/// 520-byte token request its source must have sent to learn the token.
pub const HEARTBEAT_CREDIT: usize = TOKEN_REQUEST_LEN;

/// A 0.7 connectionless packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The receiver's token (ours, in what a master receives).
    pub to: u32,
    /// The sender's token (what an answer must carry first).
    pub from: u32,
    /// What follows the header: `FF FF FF FF` and the word.
    pub payload: &'a [u8],
}

impl<'a> Frame<'a> {
    /// Reads the header of a connectionless packet (`None`: not one).
    pub fn parse(datagram: &'a [u8]) -> Option<Self> {
        let mut r = Reader::new(datagram);
        (r.u8("header").ok()? == CONNLESS7).then_some(())?;
        let to = u32::from_be_bytes(r.array::<4>("token").ok()?);
        let from = u32::from_be_bytes(r.array::<4>("response token").ok()?);
        Some(Self {
            to,
            from,
            payload: r.take_rest(),
        })
    }

    /// The payload as the 0.6 master protocol's datagram (its `FF`×6 header added), for
    /// its decoders.
    fn as_06(&self) -> Vec<u8> {
        let mut d = Vec::with_capacity(teemaster::HEADER_LEN + self.payload.len());
        d.extend_from_slice(&teemaster::HEADER);
        d.extend_from_slice(self.payload);
        d
    }
}

/// What a 0.7 master takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message {
    /// A token request carrying the asker's token (answered by [`encode_token_reply`]).
    TokenRequest {
        /// The asker's token.
        theirs: u32,
    },
    /// `bea2` (only with a valid token: [`Tokens::check`]).
    Heartbeat {
        /// The receiver's token (ours, if valid).
        to: u32,
        /// The server's token.
        from: u32,
        /// The heartbeat.
        heartbeat: Heartbeat,
    },
    /// `req2` or `cou2` (only with a valid token).
    Request {
        /// The receiver's token (ours, if valid).
        to: u32,
        /// The client's token.
        from: u32,
        /// The request.
        request: Request,
    },
}

/// Whether `datagram` is a token request: `04 00 00`, no token, `05` (without looking
/// at its length).
pub fn is_token_request(datagram: &[u8]) -> bool {
    let mut r = Reader::new(datagram);
    r.array::<3>("header").ok() == Some(CONTROL7)
        && r.array::<4>("token").ok() == Some(TOKEN_NONE.to_be_bytes())
        && r.u8("control message").ok() == Some(CTRL_TOKEN)
}

/// Whether the datagram is one a 0.7 master takes: a token request, or a connectionless
/// packet with `bea2`, `req2` or `cou2` (without decoding it).
pub fn is_master_message(datagram: &[u8]) -> bool {
    is_token_request(datagram)
        || Frame::parse(datagram).is_some_and(|f| teemaster::is_master_message(&f.as_06()))
}

impl Message {
    /// Decodes a datagram a master takes. A token request shorter than 520 bytes is an
    /// error (0.7 peers answer none); so is a connectionless packet of another word.
    pub fn decode(datagram: &[u8]) -> Result<Self, DecodeError> {
        if is_token_request(datagram) {
            if datagram.len() < TOKEN_REQUEST_LEN {
                return Err(DecodeError::invalid(
                    0,
                    "token request",
                    "shorter than 520 bytes (not padded as 0.7 peers pad it)",
                ));
            }
            let mut r = Reader::new(datagram);
            r.take(8, "header")?;
            let theirs = u32::from_be_bytes(r.array::<4>("token")?);
            return Ok(Self::TokenRequest { theirs });
        }
        let Some(f) = Frame::parse(datagram) else {
            return Err(DecodeError::invalid(
                0,
                "header",
                "not a Teeworlds 0.7 connectionless packet",
            ));
        };
        let d = f.as_06();
        if teemaster::is_heartbeat(&d) {
            let heartbeat = Heartbeat::decode(&d).map_err(|e| shift(e, datagram))?;
            return Ok(Self::Heartbeat {
                to: f.to,
                from: f.from,
                heartbeat,
            });
        }
        let request = Request::decode(&d).map_err(|e| shift(e, datagram))?;
        Ok(Self::Request {
            to: f.to,
            from: f.from,
            request,
        })
    }
}

/// A 0.6 decoder's error at the offset of the 0.7 datagram (its header is 3 bytes
/// longer).
fn shift(e: DecodeError, datagram: &[u8]) -> DecodeError {
    let offset = e
        .offset
        .saturating_add(HEADER_LEN - teemaster::HEADER_LEN)
        .min(datagram.len());
    DecodeError { offset, ..e }
}

/// Our stateless tokens: a keyed hash of the peer's address and the time window.
#[derive(Clone)]
pub struct Tokens {
    secret: [u8; 16],
    epoch: Instant,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tokens { .. }")
    }
}

impl Tokens {
    /// Tokens of `secret` (random, the master's), their windows counted from `now`.
    pub fn new(secret: [u8; 16], now: Instant) -> Self {
        Self { secret, epoch: now }
    }

    fn window(&self, now: Instant) -> u64 {
        let secs = now.saturating_duration_since(self.epoch).as_secs();
        secs / TOKEN_WINDOW.as_secs()
    }

    fn hash(&self, addr: SocketAddr, window: u64) -> u32 {
        let (k0, k1) = self.secret.split_at(8);
        let key = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        let mut h = SipHasher24::new_with_keys(key(k0), key(k1));
        h.write(b"tw7 token");
        h.write_u64(window);
        let a = canonical(addr);
        match a.ip() {
            IpAddr::V4(v4) => h.write(&v4.octets()),
            IpAddr::V6(v6) => h.write(&v6.octets()),
        }
        h.write_u16(a.port());
        let t = (h.finish() & 0xffff_ffff) as u32;
        // "No token" is never one of ours.
        if t == TOKEN_NONE {
            t ^ 1
        } else {
            t
        }
    }

    /// The token we give `addr` at `now`.
    pub fn token(&self, addr: SocketAddr, now: Instant) -> u32 {
        self.hash(addr, self.window(now))
    }

    /// Whether `token` is one we gave `addr` in this window or the one before.
    pub fn check(&self, addr: SocketAddr, token: u32, now: Instant) -> bool {
        let w = self.window(now);
        token == self.hash(addr, w) || (w > 0 && token == self.hash(addr, w - 1))
    }
}

/// Appends our token reply: to `theirs` (the asker's token), carrying `ours`.
pub fn encode_token_reply(theirs: u32, ours: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(&CONTROL7);
    out.extend_from_slice(&theirs.to_be_bytes());
    out.push(CTRL_TOKEN);
    out.extend_from_slice(&ours.to_be_bytes());
}

/// The asker's token from a token reply addressed to `ours` (a client's side).
pub fn token_reply(datagram: &[u8], ours: u32) -> Option<u32> {
    crate::teeworlds::wire::token_reply(datagram, ours)
}

/// Appends a token request carrying `ours` (520 bytes, as 0.7 peers send it).
pub fn encode_token_request(ours: u32, out: &mut Vec<u8>) {
    crate::teeworlds::wire::encode_token_request(out, ours);
}

/// Appends the 0.6 datagram `d06` (its 6-byte header dropped) as a connectionless packet
/// to `to` from `from`.
fn reframe(d06: &[u8], to: u32, from: u32, out: &mut Vec<u8>) {
    out.push(CONNLESS7);
    out.extend_from_slice(&to.to_be_bytes());
    out.extend_from_slice(&from.to_be_bytes());
    out.extend_from_slice(d06.get(teemaster::HEADER_LEN..).unwrap_or_default());
}

/// Appends a connectionless packet to `to` from `from` with `FF FF FF FF` and `word`
/// (`fwok`, and what tests send).
pub fn encode_word(word: &[u8; 4], to: u32, from: u32, out: &mut Vec<u8>) {
    out.push(CONNLESS7);
    out.extend_from_slice(&to.to_be_bytes());
    out.extend_from_slice(&from.to_be_bytes());
    out.extend_from_slice(&[0xff; 4]);
    out.extend_from_slice(word);
}

/// Appends `fwok` (the server may be reached: it logs "server registered"), 17 bytes.
pub fn encode_fwok(to: u32, from: u32, out: &mut Vec<u8>) {
    encode_word(b"fwok", to, from, out);
}

/// Appends a request (`req2`, `cou2`) to `to` from `from`.
pub fn encode_request(request: Request, to: u32, from: u32, out: &mut Vec<u8>) {
    let mut d = Vec::with_capacity(teemaster::HEADER_LEN + 8);
    request.encode(&mut d);
    reframe(&d, to, from, out);
}

/// Appends a heartbeat to `to` from `from`.
pub fn encode_heartbeat(heartbeat: Heartbeat, to: u32, from: u32, out: &mut Vec<u8>) {
    let mut d = Vec::with_capacity(teemaster::HEADER_LEN + 10);
    heartbeat.encode(&mut d);
    reframe(&d, to, from, out);
}

/// Appends `siz2` saying `count` (65,535 and more as 65,535) to `to` from `from`.
pub fn encode_count(count: usize, to: u32, from: u32, out: &mut Vec<u8>) {
    let mut d = Vec::with_capacity(teemaster::HEADER_LEN + 10);
    teemaster::encode_count(count, &mut d);
    reframe(&d, to, from, out);
}

/// Appends a `lis2` page of the first [`teemaster::MAX_PAGE_SERVERS`] of `servers` to
/// `to` from `from`, and returns how many it took.
pub fn encode_page(
    servers: &[std::net::SocketAddr],
    to: u32,
    from: u32,
    out: &mut Vec<u8>,
) -> usize {
    let mut d = Vec::with_capacity(teemaster::MAX_PAGE_BYTES);
    let n = teemaster::encode_page(servers, &mut d);
    reframe(&d, to, from, out);
    n
}

/// Answers `req2` from `from` (its token `theirs`, ours `ours`) with the servers
/// `servers` finds: `lis2` pages, each charged against `budget` before it is built
/// ([`answer_pages`]).
pub fn answer(
    servers: impl FnOnce() -> Vec<SocketAddr>,
    from: IpAddr,
    (theirs, ours): (u32, u32),
    now: Instant,
    budget: &ListBudget,
    send: impl FnMut(&[u8]),
) -> Answered {
    answer_pages(
        servers,
        from,
        now,
        budget,
        MAX_PAGE_BYTES,
        |s, out| encode_page(s, theirs, ours, out),
        send,
    )
}

/// Answers `cou2` from `from` with `siz2` and how many servers `count` says (asked only
/// once the answer is within `budget`).
pub fn answer_count(
    count: impl FnOnce() -> usize,
    from: IpAddr,
    (theirs, ours): (u32, u32),
    now: Instant,
    budget: &ListBudget,
    mut send: impl FnMut(&[u8]),
) -> ListAdmission {
    let len = HEADER_LEN + 10;
    let admission = budget.charge(now, from, len);
    if admission == ListAdmission::Answer {
        let mut d = Vec::with_capacity(len);
        encode_count(count(), theirs, ours, &mut d);
        send(&d);
    }
    admission
}

/// Answers a token request from `from` (its token `theirs`) with ours for it, within
/// `budget` (12 bytes, to a request of at least 520).
pub fn answer_token(
    tokens: &Tokens,
    from: SocketAddr,
    theirs: u32,
    now: Instant,
    budget: &ListBudget,
    mut send: impl FnMut(&[u8]),
) -> ListAdmission {
    let admission = budget.charge(now, from.ip(), TOKEN_REPLY_LEN);
    if admission == ListAdmission::Answer {
        let mut d = Vec::with_capacity(TOKEN_REPLY_LEN);
        encode_token_reply(theirs, tokens.token(from, now), &mut d);
        send(&d);
    }
    admission
}

/// A master's answer to a client: `siz2` or a `lis2` page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `siz2`.
    Count(u16),
    /// `lis2`.
    Page(Vec<SocketAddr>),
}

/// Decodes a master's answer addressed to our token `ours` (`None`: not one, or not to
/// us; `Some(Err)`: to us, and malformed).
pub fn decode_answer(datagram: &[u8], ours: u32) -> Option<Result<Answer, DecodeError>> {
    let f = Frame::parse(datagram).filter(|f| f.to == ours)?;
    let d = f.as_06();
    if let Ok(n) = teemaster::decode_count(&d) {
        return Some(Ok(Answer::Count(n)));
    }
    match teemaster::decode_page(&d) {
        Ok(p) => Some(Ok(Answer::Page(p))),
        Err(e) if d.get(6..14) == Some(b"\xff\xff\xff\xfflis2".as_slice()) => {
            Some(Err(shift(e, datagram)))
        }
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A token request as `teeworlds-server` 0.7.5 sent it to a master (observed).
    fn server_token_request() -> Vec<u8> {
        let mut d = b"\x04\x00\x00\xff\xff\xff\xff\x05\x4d\x2f\x82\x14".to_vec();
        d.resize(520, 0);
        d
    }

    #[test]
    fn what_the_0_7_5_server_sends_decodes() {
        assert_eq!(
            Message::decode(&server_token_request()),
            Ok(Message::TokenRequest {
                theirs: 0x4d2f_8214
            })
        );
        assert!(is_master_message(&server_token_request()));
        // unpadded: refused
        assert!(Message::decode(&server_token_request()[..12]).is_err());
        // cou2 and bea2 8303 as the server sent them (our token a1b2c3d4)
        let cou2 = b"\x21\xa1\xb2\xc3\xd4\x4d\x2f\x82\x14\xff\xff\xff\xffcou2";
        assert_eq!(
            Message::decode(cou2),
            Ok(Message::Request {
                to: 0xa1b2_c3d4,
                from: 0x4d2f_8214,
                request: Request::Count
            })
        );
        let bea2 = b"\x21\xa1\xb2\xc3\xd4\x44\xb2\x88\x06\xff\xff\xff\xffbea2\x47\x7f";
        assert_eq!(
            Message::decode(bea2),
            Ok(Message::Heartbeat {
                to: 0xa1b2_c3d4,
                from: 0x44b2_8806,
                heartbeat: Heartbeat { port: 18303 }
            })
        );
        assert!(is_master_message(bea2));
        let mut again = Vec::new();
        encode_heartbeat(
            Heartbeat { port: 18303 },
            0xa1b2_c3d4,
            0x44b2_8806,
            &mut again,
        );
        assert_eq!(again, bea2);
        // port 0, another word, a 0.6 datagram, an info reply: not ours
        assert!(
            Message::decode(b"\x21\xa1\xb2\xc3\xd4\x44\xb2\x88\x06\xff\xff\xff\xffbea2\0\0")
                .is_err()
        );
        let fw = b"\x21\xa1\xb2\xc3\xd4\x44\xb2\x88\x06\xff\xff\xff\xfffw!!";
        assert!(!is_master_message(fw));
        assert!(Message::decode(fw).is_err());
        assert!(!is_master_message(
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffbea2\x20\x6f"
        ));
        assert!(!is_master_message(
            b"\x21\xa1\xb2\xc3\xd4\x44\xb2\x88\x06\xff\xff\xff\xffinf3\x01"
        ));
        let mut r = Vec::new();
        encode_token_reply(0x4d2f_8214, 0xa1b2_c3d4, &mut r);
        assert_eq!(r, b"\x04\x00\x00\x4d\x2f\x82\x14\x05\xa1\xb2\xc3\xd4");
        assert_eq!(token_reply(&r, 0x4d2f_8214), Some(0xa1b2_c3d4));
        let mut ok = Vec::new();
        encode_fwok(0x44b2_8806, 0xa1b2_c3d4, &mut ok);
        assert_eq!(
            ok,
            b"\x21\x44\xb2\x88\x06\xa1\xb2\xc3\xd4\xff\xff\xff\xfffwok"
        );
    }

    #[test]
    fn tokens_are_per_address_and_last_two_windows() {
        let t0 = Instant::now();
        let t = Tokens::new([9; 16], t0);
        let a: SocketAddr = "192.0.2.1:8303".parse().unwrap();
        let b: SocketAddr = "192.0.2.1:8304".parse().unwrap();
        let mapped: SocketAddr = "[::ffff:192.0.2.1]:8303".parse().unwrap();
        let tok = t.token(a, t0);
        assert_ne!(tok, TOKEN_NONE);
        assert!(t.check(a, tok, t0));
        assert!(t.check(mapped, tok, t0), "one address, however it came");
        assert!(!t.check(b, tok, t0));
        assert!(t.check(a, tok, t0 + TOKEN_WINDOW + Duration::from_secs(59)));
        assert!(!t.check(a, tok, t0 + TOKEN_WINDOW * 2));
        assert!(
            !Tokens::new([8; 16], t0).check(a, tok, t0),
            "another secret"
        );
    }

    #[test]
    fn answers_round_trip_to_our_token_only() {
        let servers: Vec<SocketAddr> = (0..80u16)
            .map(|i| SocketAddr::from(([10, 0, 0, 1], 8300 + i)))
            .collect();
        let mut d = Vec::new();
        let n = encode_page(&servers, 7, 9, &mut d);
        assert_eq!(n, teemaster::MAX_PAGE_SERVERS);
        assert_eq!(d.len(), MAX_PAGE_BYTES);
        assert_eq!(
            decode_answer(&d, 7),
            Some(Ok(Answer::Page(servers[..n].to_vec())))
        );
        assert_eq!(decode_answer(&d, 8), None, "to another token");
        assert!(matches!(decode_answer(&d[..d.len() - 1], 7), Some(Err(_))));
        let mut c = Vec::new();
        encode_count(3, 7, 9, &mut c);
        assert_eq!(decode_answer(&c, 7), Some(Ok(Answer::Count(3))));
        let mut q = Vec::new();
        encode_request(Request::List, 9, 7, &mut q);
        assert_eq!(
            Message::decode(&q),
            Ok(Message::Request {
                to: 9,
                from: 7,
                request: Request::List
            })
        );
    }

    #[test]
    fn a_flood_of_requests_and_token_requests_is_cut_by_the_budget() {
        use super::super::budget::ListBudgetConfig;
        let t0 = Instant::now();
        let per_source = 8_000u32;
        let b = ListBudget::new(ListBudgetConfig::new(per_source, u32::MAX), [4; 16], t0);
        let tokens = Tokens::new([1; 16], t0);
        let servers: Vec<SocketAddr> = (0..1000u32)
            .map(|i| SocketAddr::from((std::net::Ipv4Addr::from(0x0a00_0000 + i), 8303)))
            .collect();
        let victim: SocketAddr = "192.0.2.7:8303".parse().unwrap();
        let mut out = 0usize;
        for tick in 0..1000u64 {
            let now = t0 + Duration::from_millis(tick * 10);
            let tt = (1, 2);
            answer(
                || servers.clone(),
                victim.ip(),
                tt,
                now,
                &b,
                |p| out += p.len(),
            );
            answer_count(|| 1000, victim.ip(), tt, now, &b, |p| out += p.len());
            answer_token(&tokens, victim, 3, now, &b, |p| out += p.len());
        }
        let cap = f64::from(per_source) * (4.0 + 10.0);
        assert!((out as f64) <= cap, "{out} bytes out, budget {cap}");
        let b = ListBudget::new(ListBudgetConfig::default(), [4; 16], t0);
        let mut pages = Vec::new();
        let a = answer(
            || servers.clone(),
            victim.ip(),
            (5, 6),
            t0,
            &b,
            |p| pages.push(p.to_vec()),
        );
        assert_eq!((a.pages, a.servers, a.complete), (14, 1000, true));
        assert!(pages.iter().all(|p| p.len() <= MAX_PAGE_BYTES));
        let back: usize = pages
            .iter()
            .map(|p| match decode_answer(p, 5) {
                Some(Ok(Answer::Page(s))) => s.len(),
                other => panic!("{other:?}"),
            })
            .sum();
        assert_eq!(back, 1000);
    }

    proptest! {
        #[test]
        fn decoders_take_anything(d in proptest::collection::vec(any::<u8>(), 0..2000)) {
            let _ = Message::decode(&d);
            let _ = is_master_message(&d);
            if let Some(Ok(Answer::Page(p))) = decode_answer(&d, 0) {
                prop_assert!(p.len() <= d.len() / teemaster::ENTRY_LEN);
            }
            let mut with = b"\x21\0\0\0\0\0\0\0\0\xff\xff\xff\xfflis2".to_vec();
            with.extend_from_slice(&d);
            let _ = decode_answer(&with, 0);
        }
    }
}

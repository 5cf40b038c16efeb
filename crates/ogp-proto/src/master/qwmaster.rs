//! The QuakeWorld master protocol (id's `qwmaster`, qstat's `-qwm`; MVDSV, FTE,
//! ezQuake and the other QuakeWorld servers announce themselves with it), both sides,
//! sans-IO.
//!
//! Unlike the connectionless `status` query, what servers and clients send the master
//! carries no `FF FF FF FF` prefix; only the master's answer does:
//!
//! * **`a\n<sequence>\n<players>\n`** (server → master, `S2M_HEARTBEAT`): sent by
//!   MVDSV at start (`setmaster`, `heartbeat`) and every 300 s, from the server's own
//!   socket (the query port), [`Heartbeat::Alive`]. `setmaster` also sends `k\0`
//!   (`A2A_PING`, 2 bytes) to the master first; a master need not answer it.
//! * **`FF FF FF FF k`** (master → server, `A2A_PING`), answered by the single byte `l`
//!   (`A2A_ACK`, no prefix): the verification ([`PING`], [`is_ping_reply`]).
//! * **`C\n`** (server → master, `S2M_SHUTDOWN`): the server is going down,
//!   [`Heartbeat::Shutdown`].
//! * **`c\n`** (client → master; qstat and masterstat send `c\n\0`): the list request,
//!   [`is_list_request`], [`decode_list_request`].
//! * **`FF FF FF FF d \n`** then 6-byte entries, IPv4 address and port big-endian
//!   (master → client): the list, [`encode_page`], [`decode_page`]. There is no end
//!   marker and no paging: id's master sent one datagram; ours sends pages of at most
//!   [`MAX_PAGE_BYTES`] ([`ENTRIES_PER_PAGE`] servers), so a page with fewer entries is
//!   the last, and qstat, which reads one datagram, gets the first page.
//!
//! **Verification** ([`PingMachine`]). Nothing a QuakeWorld server answers carries
//! anything of the asker's: `status` has no challenge and echoes nothing, `ping`
//! (`FF FF FF FF k`) is answered by the one byte `l`, `getchallenge` by the
//! server's own number. So no QuakeWorld query proves that its answer came from the
//! address it names: whoever can forge the heartbeat can forge the answer too. What the
//! master checks is what it can: the source answers, from the heartbeat's address and
//! port, a query the master sends from its own socket. It sends the ping, not `status`:
//! a heartbeat is 6 bytes or more (`a\n1\n0\n`), the ping 5 and its answer 1, so the
//! verification stays within the no-amplification rule (never more bytes toward an
//! unverified address than came from it) at the first heartbeat, where `status 23\n`
//! (14 bytes) would wait for the third (15 minutes, at MVDSV's interval). The status is
//! the master's poll, right after the listing; a server whose polls stop being answered
//! goes down and off the lists, so a forged listing lasts only while its forger keeps
//! forging `status` answers too.
//!
//! A shutdown is not verified either (2 bytes: nothing can be sent back within them),
//! so it removes nothing by itself: from a listed address it makes the master poll the
//! server at once, and the server leaves the lists when that poll goes unanswered; from
//! an address that is not listed it is dropped.
//!
//! Nothing here panics; decoding reads through the crate's bounded reader.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Instant;

use super::budget::{answer_pages, Answered, ListBudget};
use crate::client_core::{exchange_driver, Event, Exchange, QueryDriver, Timing};
use crate::error::DecodeError;
use crate::protocol::Protocol;
use crate::reader::Reader;
use crate::Status;

/// The first four bytes of the master's answer (and of the ping and its answer).
pub const PREFIX: [u8; 4] = [0xff; 4];

/// The answer's header: the prefix, `d` (`M2C_MASTER_REPLY`) and a newline.
pub const REPLY_HEADER: [u8; 6] = [0xff, 0xff, 0xff, 0xff, b'd', b'\n'];

/// The largest answer datagram we send (as dpmaster's pages).
pub const MAX_PAGE_BYTES: usize = 1400;

/// Entries in a full page: (1,400 − 6) / 6.
pub const ENTRIES_PER_PAGE: usize = (MAX_PAGE_BYTES - REPLY_HEADER.len()) / 6;

/// The longest heartbeat accepted (MVDSV's are 6 to 17 bytes).
pub const MAX_HEARTBEAT_BYTES: usize = 64;

/// The list request as we send it.
pub const LIST_REQUEST: &[u8] = b"c\n";

/// The verification query: `A2A_PING` with the connectionless prefix (5 bytes, less
/// than the shortest heartbeat).
pub const PING: [u8; 5] = [0xff, 0xff, 0xff, 0xff, b'k'];

/// What a server sent the master.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heartbeat {
    /// `a\n<sequence>\n<players>\n`: the server is up.
    Alive {
        /// The heartbeat's sequence number (MVDSV counts from 1).
        sequence: u32,
        /// Clients connected.
        players: u32,
    },
    /// `C\n`: the server is shutting down.
    Shutdown,
}

/// Whether the datagram is a heartbeat or a shutdown (without decoding it): it starts
/// with `a\n`, or is `C` with an optional newline.
pub fn is_heartbeat(datagram: &[u8]) -> bool {
    datagram.starts_with(b"a\n") || datagram.starts_with(b"C\n") || datagram == b"C"
}

impl Heartbeat {
    /// Decodes `a\n<sequence>\n<players>\n` (the last newline optional; numbers of
    /// decimal digits, at most [`MAX_HEARTBEAT_BYTES`] in all) or `C\n`.
    pub fn decode(datagram: &[u8]) -> Result<Self, DecodeError> {
        if datagram.len() > MAX_HEARTBEAT_BYTES {
            return Err(DecodeError::invalid(0, "heartbeat", "longer than 64 bytes"));
        }
        let mut r = Reader::new(datagram);
        match r.u8("command")? {
            b'C' => {
                let rest = r.peek_rest();
                if rest.is_empty() || rest == b"\n" {
                    return Ok(Self::Shutdown);
                }
                return Err(DecodeError::invalid(1, "shutdown", "not C\\n"));
            }
            b'a' => {}
            _ => return Err(DecodeError::invalid(0, "command", "not a heartbeat")),
        }
        if r.u8("newline")? != b'\n' {
            return Err(DecodeError::invalid(1, "newline", "not \\n after a"));
        }
        let mut number = |field: &'static str, last: bool| -> Result<u32, DecodeError> {
            let at = r.offset();
            let n = r
                .peek_rest()
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            let digits = r.take(n, field)?;
            let value = std::str::from_utf8(digits)
                .ok()
                .filter(|s| !s.is_empty())
                .and_then(|s| s.parse::<u32>().ok())
                .ok_or(DecodeError::invalid(at, field, "not a decimal number"))?;
            match r.peek_rest() {
                [] if last => {}
                [b'\n', ..] => {
                    r.take(1, "newline")?;
                }
                _ => return Err(DecodeError::invalid(r.offset(), field, "not ended by \\n")),
            }
            Ok(value)
        };
        let sequence = number("sequence", false)?;
        let players = number("players", true)?;
        if !r.is_empty() {
            return Err(DecodeError::invalid(
                r.offset(),
                "heartbeat",
                "bytes after the player count",
            ));
        }
        Ok(Self::Alive { sequence, players })
    }

    /// Appends the datagram (as MVDSV sends it).
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Self::Alive { sequence, players } => {
                out.extend_from_slice(format!("a\n{sequence}\n{players}\n").as_bytes());
            }
            Self::Shutdown => out.extend_from_slice(b"C\n"),
        }
    }

    /// Whether it says the server is shutting down.
    pub fn shutdown(&self) -> bool {
        matches!(self, Self::Shutdown)
    }
}

/// Whether the datagram is a list request (without decoding it): `c`, alone or
/// followed by a newline.
pub fn is_list_request(datagram: &[u8]) -> bool {
    datagram == b"c" || datagram.starts_with(b"c\n")
}

/// Checks a list request: `c`, an optional newline and an optional NUL (qstat's and
/// masterstat's `c\n\0`), nothing more.
pub fn decode_list_request(datagram: &[u8]) -> Result<(), DecodeError> {
    match datagram {
        b"c" | b"c\n" | b"c\n\0" | b"c\0" => Ok(()),
        [b'c', ..] => Err(DecodeError::invalid(1, "request", "bytes after c\\n")),
        _ => Err(DecodeError::invalid(0, "request", "not c\\n")),
    }
}

/// Appends one answer page of `servers`' IPv4 entries, as many as fit in
/// [`MAX_PAGE_BYTES`], and returns how many of `servers` it took (IPv6 addresses,
/// which the protocol cannot carry, are taken and left out).
pub fn encode_page(servers: &[SocketAddr], out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.extend_from_slice(&REPLY_HEADER);
    let mut n = 0;
    for a in servers {
        if let SocketAddr::V4(v4) = a {
            if out.len() - start + 6 > MAX_PAGE_BYTES {
                break;
            }
            out.extend_from_slice(&v4.ip().octets());
            out.extend_from_slice(&v4.port().to_be_bytes());
        }
        n += 1;
    }
    n
}

/// A decoded answer page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QwPage {
    /// The entries, in order.
    pub servers: Vec<SocketAddrV4>,
}

impl QwPage {
    /// Whether more pages may follow: the page is at least as full as ours are
    /// ([`ENTRIES_PER_PAGE`]); a master that sends one large datagram (id's) sends
    /// more entries than that in it.
    pub fn may_continue(&self) -> bool {
        self.servers.len() >= ENTRIES_PER_PAGE
    }
}

/// Decodes an answer page: the header, then whole 6-byte entries (a trailing entry cut
/// short is an error: the datagram was truncated).
pub fn decode_page(datagram: &[u8]) -> Result<QwPage, DecodeError> {
    let mut r = Reader::new(datagram);
    if r.take(REPLY_HEADER.len(), "header")? != REPLY_HEADER {
        return Err(DecodeError::invalid(0, "header", "not FF FF FF FF d \\n"));
    }
    if r.remaining() % 6 != 0 {
        return Err(DecodeError::invalid(
            r.offset(),
            "entries",
            "not a whole number of 6-byte entries",
        ));
    }
    let mut servers = Vec::with_capacity(r.remaining() / 6);
    while !r.is_empty() {
        let ip = Ipv4Addr::from(r.array::<4>("address")?);
        let port = r.u16_be("port")?;
        servers.push(SocketAddrV4::new(ip, port));
    }
    Ok(QwPage { servers })
}

/// Answers a list request from `from` with the servers `servers` finds (called only
/// once the first page is within budget): pages of [`MAX_PAGE_BYTES`], each charged a
/// whole page against `budget` before it is built and handed to `send`; a page the
/// budget refuses ends the answer there. An empty list is one page with the header
/// alone.
pub fn answer(
    servers: impl FnOnce() -> Vec<SocketAddr>,
    from: IpAddr,
    now: Instant,
    budget: &mut ListBudget,
    send: impl FnMut(&[u8]),
) -> Answered {
    answer_pages(
        servers,
        from,
        now,
        budget,
        MAX_PAGE_BYTES,
        encode_page,
        send,
    )
}

/// Whether `datagram` is the answer to [`PING`]: `l` (`A2A_ACK`), the one byte that
/// MVDSV, FTE and id's server send (without the connectionless prefix), or with the
/// prefix, each optionally followed by a NUL or a newline.
pub fn is_ping_reply(datagram: &[u8]) -> bool {
    let rest = datagram.strip_prefix(&PREFIX).unwrap_or(datagram);
    matches!(rest, b"l" | b"l\0" | b"l\n")
}

/// The verification of a QuakeWorld heartbeat: [`PING`] to the heartbeat's source,
/// sent again on the shared timers, until its answer comes back (see the module docs
/// for why the ping and what it proves). The answer has an empty status and no details:
/// the master's poll after the listing reads the status.
#[derive(Debug, Clone)]
pub struct PingMachine {
    x: Exchange<()>,
}

impl PingMachine {
    /// A verification starting at `now`.
    pub fn new(timing: Timing, now: Instant) -> Self {
        Self {
            x: Exchange::new(Protocol::Quakeworld, &timing, now),
        }
    }
}

impl QueryDriver for PingMachine {
    type Details = ();

    exchange_driver!(give_up_on_timeout);

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        if !self.x.due_datagram(d) {
            return false;
        }
        d.extend_from_slice(&PING);
        self.x.sent_query(now, d, "ping", None, None);
        true
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        if !is_ping_reply(datagram) {
            return self.x.dropped(bytes, "not the ping's answer (l)");
        }
        self.x.received(1, bytes);
        self.x.ping(now);
        self.x.event(Event::Reply {
            what: "ping",
            bytes,
            datagrams: 1,
        });
        self.x.succeed(Status::default(), ());
    }
}

#[cfg(test)]
mod tests {
    use super::super::budget::{ListAdmission, ListBudgetConfig};
    use super::*;
    use proptest::prelude::*;
    use std::time::Duration;

    #[test]
    fn what_mvdsv_sends_decodes() {
        // Master_Heartbeat's "%c\n%i\n%i\n" and Master_Shutdown's "%c\n"
        assert_eq!(
            Heartbeat::decode(b"a\n1\n0\n").unwrap(),
            Heartbeat::Alive {
                sequence: 1,
                players: 0
            }
        );
        assert_eq!(
            Heartbeat::decode(b"a\n4294967295\n32").unwrap(),
            Heartbeat::Alive {
                sequence: u32::MAX,
                players: 32
            }
        );
        assert_eq!(Heartbeat::decode(b"C\n").unwrap(), Heartbeat::Shutdown);
        assert!(Heartbeat::decode(b"C").unwrap().shutdown());
        for d in [&b"a\n1\n0\n"[..], b"C\n", b"C"] {
            assert!(is_heartbeat(d));
        }
        for bad in [
            &b"a\n"[..],
            b"a\n1\n",
            b"a\n1",
            b"a\nx\n0\n",
            b"a\n1\n0\nextra",
            b"a\n-1\n0\n",
            b"a\n99999999999\n0\n",
            b"a1\n0\n",
            b"C\nx",
            b"b\n1\n0\n",
            b"",
        ] {
            assert!(Heartbeat::decode(bad).is_err(), "{bad:?}");
        }
        let long = [b"a\n1\n".as_slice(), &[b'0'; 70]].concat();
        assert!(Heartbeat::decode(&long).is_err());
        for h in [
            Heartbeat::Alive {
                sequence: 7,
                players: 3,
            },
            Heartbeat::Shutdown,
        ] {
            let mut d = Vec::new();
            h.encode(&mut d);
            assert_eq!(Heartbeat::decode(&d).unwrap(), h);
        }
    }

    #[test]
    fn list_requests() {
        for ok in [&b"c\n"[..], b"c\n\0", b"c", b"c\0"] {
            decode_list_request(ok).unwrap();
        }
        assert!(is_list_request(b"c\n\0") && is_list_request(LIST_REQUEST));
        assert!(!is_list_request(b"connect") && !is_list_request(b"\xff\xff\xff\xffc\n"));
        assert!(decode_list_request(b"c\nmore").is_err());
        assert!(decode_list_request(b"x").is_err());
    }

    #[test]
    fn pages_hold_232_servers_and_the_last_is_short() {
        let servers: Vec<SocketAddr> = (0..500u32)
            .map(|i| SocketAddr::from((Ipv4Addr::from(0x0a00_0000 + i), 27500)))
            .collect();
        let mut rest = &servers[..];
        let mut got = Vec::new();
        let mut pages = Vec::new();
        while !rest.is_empty() {
            let mut d = Vec::new();
            let n = encode_page(rest, &mut d);
            assert!(d.len() <= MAX_PAGE_BYTES);
            let p = decode_page(&d).unwrap();
            pages.push(p.may_continue());
            got.extend(p.servers.into_iter().map(SocketAddr::V4));
            rest = &rest[n..];
        }
        assert_eq!(got, servers);
        assert_eq!(pages, [true, true, false], "232 + 232 + 36");
        let mut d = Vec::new();
        let a: SocketAddr = "1.2.3.4:27500".parse().unwrap();
        let v6: SocketAddr = "[2001:db8::1]:27500".parse().unwrap();
        assert_eq!(encode_page(&[v6, a], &mut d), 2);
        assert_eq!(d, b"\xff\xff\xff\xffd\n\x01\x02\x03\x04\x6b\x6c");
        assert!(decode_page(b"\xff\xff\xff\xffd\n")
            .unwrap()
            .servers
            .is_empty());
        assert!(decode_page(b"\xff\xff\xff\xffd\n\x01\x02\x03\x04\x6b").is_err());
        assert!(decode_page(b"\xff\xff\xff\xffc\n").is_err());
        assert!(decode_page(b"\xff\xff").is_err());
    }

    #[test]
    fn a_flood_of_requests_is_cut_by_the_budget() {
        let t0 = Instant::now();
        let per_source = 8_000u32;
        let mut b = ListBudget::new(ListBudgetConfig::new(per_source, u32::MAX), [4; 16], t0);
        let servers: Vec<SocketAddr> = (0..1000u32)
            .map(|i| SocketAddr::from((Ipv4Addr::from(0x0a00_0000 + i), 27500)))
            .collect();
        let victim: IpAddr = "192.0.2.7".parse().unwrap();
        let (mut out, mut cut) = (0usize, 0);
        for tick in 0..1000u64 {
            let now = t0 + Duration::from_millis(tick * 10);
            let a = answer(
                || servers.clone(),
                victim,
                now,
                &mut b,
                |p| {
                    assert!(p.len() <= MAX_PAGE_BYTES);
                    out += p.len();
                },
            );
            if a.stopped_by == ListAdmission::SourceOverBudget {
                cut += 1;
            }
        }
        let cap = f64::from(per_source) * (4.0 + 10.0);
        assert!((out as f64) <= cap, "{out} bytes out, budget {cap}");
        assert!(cut > 900, "{cut}");
        let mut b = ListBudget::new(ListBudgetConfig::default(), [4; 16], t0);
        let mut pages = 0;
        let a = answer(|| servers.clone(), victim, t0, &mut b, |_| pages += 1);
        assert_eq!((a.pages, a.servers, a.complete, pages), (5, 1000, true, 5));
        let a = answer(Vec::new, victim, t0, &mut b, |p| {
            assert_eq!(p, REPLY_HEADER)
        });
        assert_eq!((a.pages, a.complete), (1, true));
    }

    #[test]
    fn the_ping_verifies_and_nothing_else_does() {
        let t0 = Instant::now();
        let mut m = PingMachine::new(Timing::default(), t0);
        let d = m.poll_transmit(t0).unwrap();
        assert_eq!(d, PING);
        assert!(d.len() < b"a\n1\n0\n".len());
        m.handle_datagram(t0, b"\xff\xff\xff\xffn\\hostname\\x\n");
        m.handle_datagram(t0, b"\xff\xff\xff\xfflx");
        m.handle_datagram(t0, b"lx");
        assert!(m.take_result().is_none());
        assert!(m.last_dropped().is_some());
        for ok in [&b"\xff\xff\xff\xffl\0"[..], b"l\n", b"\xff\xff\xff\xffl"] {
            assert!(is_ping_reply(ok), "{ok:?}");
        }
        // MVDSV's SVC_Ping: the one byte A2A_ACK
        m.handle_datagram(t0, b"l");
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Quakeworld);
        // silence: retried, then given up
        let mut m = PingMachine::new(Timing::default(), t0);
        let mut sent = 0;
        let mut now = t0;
        for _ in 0..20 {
            while m.poll_transmit(now).is_some() {
                sent += 1;
            }
            match m.poll_timeout() {
                Some(t) => {
                    now = t;
                    m.handle_timeout(now);
                }
                None => break,
            }
        }
        assert!(m.take_result().unwrap().is_err());
        assert!((1..=3).contains(&sent), "{sent}");
    }

    proptest! {
        #[test]
        fn decoders_take_anything(d in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = Heartbeat::decode(&d);
            let _ = decode_list_request(&d);
            let _ = decode_page(&d);
            let with = [&REPLY_HEADER[..], &d].concat();
            let _ = decode_page(&with);
            let _ = is_ping_reply(&d);
        }

        #[test]
        fn pages_round_trip(v4 in proptest::collection::vec(any::<(u32, u16)>(), 0..700)) {
            let servers: Vec<SocketAddr> = v4.iter()
                .map(|&(ip, port)| SocketAddr::from((Ipv4Addr::from(ip), port)))
                .collect();
            let mut rest = &servers[..];
            let mut got = Vec::new();
            while !rest.is_empty() {
                let mut d = Vec::new();
                let n = encode_page(rest, &mut d);
                prop_assert!(n > 0 && d.len() <= MAX_PAGE_BYTES);
                got.extend(decode_page(&d).unwrap().servers.into_iter().map(SocketAddr::V4));
                rest = &rest[n..];
            }
            prop_assert_eq!(got, servers);
        }
    }
}

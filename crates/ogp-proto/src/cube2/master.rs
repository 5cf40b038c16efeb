//! The Cube 2 masters over TCP, both sides, sans-IO.
//!
//! **The list** as Red Eclipse's and Sauerbraten's masters answer it: the client sends
//! `list\n`, the master answers one line per server and closes the connection. Red
//! Eclipse 1.6: `clearservers`, then `addserver IP PORT PRIORITY "DESC" "HANDLE"
//! "FLAGS" "BRANCH"`; Sauerbraten: `addserver IP PORT`. The port is the game port (the
//! query port is one up). [`crate::master::list_client::Cube2ListClient`] reads it,
//! bounded; [`encode_list`] writes it.
//!
//! **Registrations** ([`Session`]): a Sauerbraten server connects and sends `regserv
//! PORT`; the master pings PORT + 1 over UDP and answers `succreg` once the ping is
//! answered, or `failreg REASON`. A Red Eclipse 1.6 server sends `server PORT IP
//! VERSION "DESC" STATS "BRANCH"` (IP may be `*`; another address than the
//! connection's is refused) and gets `echo "…"` lines. Both keep the connection open
//! and register again on it (Sauerbraten hourly). The TCP handshake has proved the
//! source address already; the ping proves that the game's query port answers there,
//! and carries a random id of ours that the answer must echo (an answer forged by a
//! third party cannot carry it).
//!
//! Bounds: lines of at most [`MAX_INPUT_LINE`] bytes; [`LINE_BURST`] lines that act at
//! once and then [`LINES_PER_SECOND`], and [`OTHER_LINE_BURST`] others, then
//! [`OTHER_LINES_PER_SECOND`]; one game port per connection; the caller bounds each
//! connection's time and the connections (the master: `cube2_*` settings).

use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

use crate::guard::{RateConfig, RateDecision, TokenBucket};
use crate::reader::Reader;

/// What a client sends.
pub const LIST_REQUEST: &[u8] = b"list\n";

/// The longest line read (Red Eclipse's carry a description, a handle and a branch).
pub const MAX_LINE: usize = 1024;

/// The server an `addserver IP PORT …` line names (its game port); `None` for any other
/// line (`clearservers`, and lines that do not parse).
pub fn decode_line(line: &[u8]) -> Option<SocketAddr> {
    let text = std::str::from_utf8(line).ok()?;
    let mut words = text.split_ascii_whitespace();
    if words.next()? != "addserver" {
        return None;
    }
    let ip: IpAddr = words.next()?.parse().ok()?;
    let port: u16 = words.next()?.parse().ok()?;
    Some(SocketAddr::new(ip, port))
}

// ---------------------------------------------------------------------------------
// The master's side: what servers and clients send to a Cube 2 master over TCP.
// ---------------------------------------------------------------------------------

/// Longest line a client or server may send the master (Red Eclipse's `server` line
/// carries a description of up to 80 characters and a branch; real lines are under 200
/// bytes; Sauerbraten's master reads 4,096 bytes of input at most).
pub const MAX_INPUT_LINE: usize = 512;

/// Lines that act (`list`, `regserv`, `server`) a connection may send at once: the
/// bucket's size (a list client sends one, a server its registration).
pub const LINE_BURST: f32 = 32.0;

/// Lines that act a connection's bucket gains a second (one every 10 s: a registered
/// server registers again hourly).
pub const LINES_PER_SECOND: f32 = 0.1;

/// Other lines (auth requests, Red Eclipse's game statistics at the end of each match:
/// a line a player and weapon) a connection may send at once.
pub const OTHER_LINE_BURST: f32 = 1024.0;

/// Other lines a connection's second bucket gains a second.
pub const OTHER_LINES_PER_SECOND: f32 = 10.0;

/// Words of a line looked at (Red Eclipse's `server` line has 7).
const MAX_WORDS: usize = 8;

/// Which game's master dialect a server registered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MasterDialect {
    /// Sauerbraten: `regserv PORT`, answered `succreg` or `failreg REASON`; listed as
    /// `addserver IP PORT`.
    Sauerbraten,
    /// Red Eclipse 1.6: `server PORT IP VERSION "DESC" STATS "BRANCH"`, answered by
    /// `echo "…"` lines; listed as `addserver IP PORT PRIORITY "DESC" "HANDLE" "FLAGS"
    /// "BRANCH"`.
    RedEclipse,
}

/// A server's registration line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Register {
    /// The game port (the query port is one up): 1 to 65,534.
    pub port: u16,
    /// The dialect it came in (what to answer it).
    pub dialect: MasterDialect,
}

/// What one line asks of the master.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Command {
    /// `list` (both games' clients), or Red Eclipse's `update`: the server list.
    List,
    /// A server registering: verify it (a ping to its port + 1), then list it.
    Register(Register),
    /// A registration refused as it stands (a bad port, a port other than the one this
    /// connection registered, an IP address that is not the connection's): answer it
    /// with [`refusal`] and list nothing.
    Refused(MasterDialect, &'static str),
    /// Anything else (auth requests, stats, blank lines): ignored.
    Ignored,
}

/// Why a connection is closed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionError {
    /// A line over [`MAX_INPUT_LINE`] bytes.
    LineTooLong,
    /// More lines than the connection's budgets ([`LINE_BURST`], then
    /// [`LINES_PER_SECOND`], for lines that act; [`OTHER_LINE_BURST`], then
    /// [`OTHER_LINES_PER_SECOND`], for the others).
    TooManyLines,
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::LineTooLong => write!(f, "a line over {MAX_INPUT_LINE} bytes"),
            Self::TooManyLines => f.write_str("more lines than a connection may send"),
        }
    }
}

impl std::error::Error for SessionError {}

/// One TCP connection to the master, as it reads it: bytes in, [`Command`]s out, each
/// line within [`MAX_INPUT_LINE`] bytes and the lines within a budget. A connection
/// registers one game port (a second `regserv` or `server` naming another is
/// refused, as Sauerbraten's master does). The source address is the TCP peer's, which
/// the handshake proved: the caller passes it in.
#[derive(Debug, Clone)]
pub struct Session {
    peer: IpAddr,
    buf: Vec<u8>,
    lines: TokenBucket,
    other: TokenBucket,
    port: Option<u16>,
    seen: u64,
}

impl Session {
    /// A connection from `peer` opened at `now`.
    pub fn new(peer: IpAddr, now: Instant) -> Self {
        Self {
            peer,
            buf: Vec::new(),
            lines: TokenBucket::new(RateConfig::new(LINES_PER_SECOND, LINE_BURST), now),
            other: TokenBucket::new(
                RateConfig::new(OTHER_LINES_PER_SECOND, OTHER_LINE_BURST),
                now,
            ),
            port: None,
            seen: 0,
        }
    }

    /// The game port this connection registered, if any (a server's connection, kept
    /// open while the server keeps it).
    pub fn registered_port(&self) -> Option<u16> {
        self.port
    }

    /// Lines read so far.
    pub fn lines(&self) -> u64 {
        self.seen
    }

    /// Bytes the peer sent at `now`: the commands of the lines they complete, appended
    /// to `out` (bytes after the last newline wait for more), or why the connection
    /// is to be closed (the commands before it are in `out`).
    pub fn push(
        &mut self,
        now: Instant,
        bytes: &[u8],
        out: &mut Vec<Command>,
    ) -> Result<(), SessionError> {
        let mut r = Reader::new(bytes);
        loop {
            let rest = r.peek_rest();
            let Some(end) = rest.iter().position(|&b| b == b'\n' || b == 0) else {
                if self.buf.len().saturating_add(rest.len()) > MAX_INPUT_LINE {
                    return Err(SessionError::LineTooLong);
                }
                self.buf.extend_from_slice(r.take_rest());
                return Ok(());
            };
            let part = r
                .take(end.saturating_add(1), "line")
                .map_err(|_| SessionError::LineTooLong)?;
            if self.buf.len().saturating_add(part.len()) > MAX_INPUT_LINE.saturating_add(1) {
                return Err(SessionError::LineTooLong);
            }
            self.buf.extend_from_slice(part);
            let line = std::mem::take(&mut self.buf);
            let command = self.command(&line);
            let bucket = match command {
                Command::Ignored => &mut self.other,
                _ => &mut self.lines,
            };
            if bucket.check(now) == RateDecision::Limited {
                return Err(SessionError::TooManyLines);
            }
            self.seen = self.seen.saturating_add(1);
            out.push(command);
        }
    }

    fn command(&mut self, line: &[u8]) -> Command {
        let words = words(line);
        let word = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
        let (dialect, port) = match word(0) {
            "list" | "update" => return Command::List,
            "regserv" => (MasterDialect::Sauerbraten, word(1)),
            "server" => (MasterDialect::RedEclipse, word(1)),
            _ => return Command::Ignored,
        };
        let Some(port) = port
            .parse::<u16>()
            .ok()
            .filter(|p| (1..u16::MAX).contains(p))
        else {
            return Command::Refused(dialect, "invalid port");
        };
        if self.port.is_some_and(|p| p != port) {
            return Command::Refused(dialect, "invalid port");
        }
        // Red Eclipse names its address (or `*`): it must be the connection's.
        let claimed = word(2);
        if dialect == MasterDialect::RedEclipse && !claimed.is_empty() && claimed != "*" {
            let same = claimed
                .parse::<IpAddr>()
                .is_ok_and(|ip| canonical_ip(ip) == canonical_ip(self.peer));
            if !same {
                return Command::Refused(dialect, "server IP does not match the connection's");
            }
        }
        self.port = Some(port);
        Command::Register(Register { port, dialect })
    }
}

/// An IPv4-mapped IPv6 address as its IPv4.
fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The words of a line as the games' script reads them, at most [`MAX_WORDS`]: runs
/// of non-blank bytes, or `"…"` strings (`^` escapes the next byte); invalid UTF-8 is
/// replaced.
fn words(line: &[u8]) -> Vec<String> {
    let mut words = Vec::new();
    let mut r = Reader::new(line);
    while words.len() < MAX_WORDS {
        while r.peek_u8().is_some_and(|b| b.is_ascii_whitespace()) {
            let _ = r.u8("blank");
        }
        let Some(first) = r.peek_u8() else { break };
        let mut word = Vec::new();
        if first == b'"' {
            let _ = r.u8("quote");
            while let Ok(b) = r.u8("string") {
                match b {
                    b'"' | b'\n' => break,
                    b'^' => {
                        if let Ok(e) = r.u8("escape") {
                            word.push(match e {
                                b'n' => b'\n',
                                b't' => b'\t',
                                b'f' => 0x0c,
                                other => other,
                            });
                        }
                    }
                    other => word.push(other),
                }
            }
        } else {
            while let Some(b) = r.peek_u8().filter(|b| !b.is_ascii_whitespace()) {
                let _ = r.u8("word");
                word.push(b);
            }
        }
        words.push(String::from_utf8_lossy(&word).into_owned());
    }
    words
}

/// The answer to a refused or failed registration: Sauerbraten's `failreg REASON`, Red
/// Eclipse's `echo "REASON, server will not be listed"`. Control characters are dropped.
pub fn refusal(dialect: MasterDialect, reason: &str, out: &mut Vec<u8>) {
    match dialect {
        MasterDialect::Sauerbraten => {
            out.extend_from_slice(b"failreg ");
            out.extend(clean(reason).bytes());
        }
        MasterDialect::RedEclipse => {
            out.extend_from_slice(b"echo ");
            put_string(out, &format!("{reason}, server will not be listed"));
        }
    }
    out.push(b'\n');
}

/// What Red Eclipse's master says once a registration is taken and the ping is sent
/// (Sauerbraten's says nothing until the ping's answer).
pub fn verifying(dialect: MasterDialect, port: u16, out: &mut Vec<u8>) {
    if dialect == MasterDialect::RedEclipse {
        out.extend_from_slice(b"echo ");
        let query = u32::from(port) + 1;
        put_string(
            out,
            &format!("server registered (port {port}), sending ping request (on port {query})"),
        );
        out.push(b'\n');
    }
}

/// The answer to a verified registration: Sauerbraten's `succreg`, Red Eclipse's
/// `echo "ping reply confirmed …"`.
pub fn registered(dialect: MasterDialect, port: u16, out: &mut Vec<u8>) {
    match dialect {
        MasterDialect::Sauerbraten => out.extend_from_slice(b"succreg"),
        MasterDialect::RedEclipse => {
            out.extend_from_slice(b"echo ");
            let query = u32::from(port) + 1;
            put_string(
                out,
                &format!("ping reply confirmed (on port {query}), server is now listed"),
            );
        }
    }
    out.push(b'\n');
}

/// A server on a Cube 2 master's list.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listed {
    /// Its game address (the query port minus one).
    pub addr: SocketAddr,
    /// The game it runs (how its line is written).
    pub dialect: MasterDialect,
    /// Its description (Red Eclipse's lines carry it).
    pub description: String,
}

impl Listed {
    /// A server at game address `addr`.
    pub fn new(addr: SocketAddr, dialect: MasterDialect, description: impl Into<String>) -> Self {
        Self {
            addr,
            dialect,
            description: description.into(),
        }
    }
}

/// Appends the answer to `list`: `clearservers` (both games' clients take it: Red
/// Eclipse's master sends it, Sauerbraten's clients clear their list themselves), then
/// one `addserver` line a server: `addserver IP PORT` for a Sauerbraten server (its
/// clients read a third word as the server's password), `addserver IP PORT 0 "DESC"
/// "" "" "?"` for a Red Eclipse one (priority 0: no auth handle; branch unknown, `?`
/// as Red Eclipse's master writes it). Descriptions lose control characters and are
/// cut to 80 characters.
pub fn encode_list(servers: &[Listed], out: &mut Vec<u8>) {
    out.extend_from_slice(b"clearservers\n");
    for s in servers {
        let ip = canonical_ip(s.addr.ip());
        out.extend_from_slice(format!("addserver {ip} {}", s.addr.port()).as_bytes());
        if s.dialect == MasterDialect::RedEclipse {
            out.extend_from_slice(b" 0 ");
            let desc: String = s.description.chars().take(80).collect();
            put_string(out, &desc);
            out.extend_from_slice(br#" "" "" "?""#);
        }
        out.push(b'\n');
    }
}

/// `text` without control characters.
fn clean(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// A script string: `"…"` with `"` and `^` escaped by `^`, control characters dropped.
fn put_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    for c in clean(text).chars() {
        if c == '"' || c == '^' {
            out.push(b'^');
        }
        let mut b = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(
            decode_line(br#"addserver 127.0.0.1 40011 0 "My RE" "" "" "?""#),
            Some("127.0.0.1:40011".parse().unwrap())
        );
        assert_eq!(
            decode_line(b"addserver 192.0.2.7 28785\r"),
            Some("192.0.2.7:28785".parse().unwrap())
        );
        for l in [
            &b"clearservers"[..],
            b"addserver x 1",
            b"addserver 1.2.3.4 99999",
            b"addserver 1.2.3.4",
            b"\xff",
        ] {
            assert_eq!(decode_line(l), None);
        }
    }
    fn session() -> (Session, Instant) {
        let t0 = Instant::now();
        (Session::new("192.0.2.7".parse().unwrap(), t0), t0)
    }

    fn push(s: &mut Session, t: Instant, b: &[u8]) -> Result<Vec<Command>, SessionError> {
        let mut out = Vec::new();
        s.push(t, b, &mut out).map(|()| out)
    }

    #[test]
    fn registrations_and_lists_of_both_games() {
        let (mut s, t0) = session();
        assert_eq!(push(&mut s, t0, b"regserv 28785").unwrap(), vec![]);
        let got = push(&mut s, t0, b"\nlist\r\nreqauth 1 x\n").unwrap();
        assert_eq!(
            got,
            vec![
                Command::Register(Register {
                    port: 28785,
                    dialect: MasterDialect::Sauerbraten
                }),
                Command::List,
                Command::Ignored
            ]
        );
        assert_eq!(s.registered_port(), Some(28785));
        assert_eq!(
            push(&mut s, t0, b"regserv 28790\n").unwrap(),
            vec![Command::Refused(MasterDialect::Sauerbraten, "invalid port")]
        );
        let (mut s, t0) = session();
        let re = br#"server 28801 192.0.2.7 160 "My ^"RE^" server" 1 "stable""#;
        let got = push(&mut s, t0, &[&re[..], b"\n"].concat()).unwrap();
        assert_eq!(
            got,
            vec![Command::Register(Register {
                port: 28801,
                dialect: MasterDialect::RedEclipse
            })]
        );
        for (line, why) in [
            (
                &b"server 1 192.0.2.8 160\n"[..],
                "server IP does not match the connection's",
            ),
            (b"server 65535 *\n", "invalid port"),
            (b"server 0\n", "invalid port"),
            (b"server x\n", "invalid port"),
        ] {
            let (mut s, t0) = session();
            assert_eq!(
                push(&mut s, t0, line).unwrap(),
                vec![Command::Refused(MasterDialect::RedEclipse, why)]
            );
        }
        assert_eq!(
            words(br#"a "b c" "d^^e^"" ^x"#),
            ["a", "b c", "d^e\"", "^x"]
        );
    }

    #[test]
    fn endless_lines_and_floods_of_lines_close_the_connection() {
        let (mut s, t0) = session();
        let big = vec![b'a'; MAX_INPUT_LINE / 2];
        assert!(push(&mut s, t0, &big).is_ok());
        assert_eq!(push(&mut s, t0, &big), Ok(vec![]));
        assert_eq!(push(&mut s, t0, b"a"), Err(SessionError::LineTooLong));
        // a line at the cap passes
        let (mut s, t0) = session();
        let mut line = vec![b'x'; MAX_INPUT_LINE];
        line.push(b'\n');
        assert_eq!(push(&mut s, t0, &line), Ok(vec![Command::Ignored]));
        // 10,000 regserv lines in one go: the burst, then the connection is closed
        let (mut s, t0) = session();
        let flood = b"regserv 28785\n".repeat(10_000);
        let mut out = Vec::new();
        assert_eq!(
            s.push(t0, &flood, &mut out),
            Err(SessionError::TooManyLines)
        );
        assert_eq!(out.len(), LINE_BURST as usize);
        // lines that do nothing (Red Eclipse's statistics) have a budget of their own
        let (mut s, t0) = session();
        let stats = b"stats player x y 1 2 3 4 5 6\n".repeat(1000);
        assert_eq!(push(&mut s, t0, &stats).map(|c| c.len()), Ok(1000));
        assert_eq!(
            push(&mut s, t0, &b"stats end\n".repeat(100)),
            Err(SessionError::TooManyLines)
        );
        // one line every ten seconds is within the budget for ever
        let (mut s, t0) = session();
        for i in 0..1000u64 {
            let t = t0 + std::time::Duration::from_secs(i * 10);
            assert!(push(&mut s, t, b"regserv 28785\n").is_ok(), "line {i}");
        }
    }

    #[test]
    fn list_answers_each_game_in_its_form() {
        let mut out = Vec::new();
        encode_list(
            &[
                Listed::new(
                    "192.0.2.1:28785".parse().unwrap(),
                    MasterDialect::Sauerbraten,
                    "x",
                ),
                Listed::new(
                    "[::ffff:192.0.2.2]:28801".parse().unwrap(),
                    MasterDialect::RedEclipse,
                    "a \"b\"^\x1b[31m",
                ),
            ],
            &mut out,
        );
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            "clearservers\naddserver 192.0.2.1 28785\n\
             addserver 192.0.2.2 28801 0 \"a ^\"b^\"^^[31m\" \"\" \"\" \"?\"\n"
        );
        let read: Vec<_> = out.split(|&b| b == b'\n').filter_map(decode_line).collect();
        assert_eq!(
            read,
            [
                "192.0.2.1:28785".parse().unwrap(),
                "192.0.2.2:28801".parse().unwrap()
            ]
        );
        let mut out = Vec::new();
        refusal(MasterDialect::Sauerbraten, "too\nmany", &mut out);
        registered(MasterDialect::Sauerbraten, 1, &mut out);
        refusal(MasterDialect::RedEclipse, "no", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "failreg toomany\nsuccreg\necho \"no, server will not be listed\"\n"
        );
    }
}

//! What a master does with what servers send it, sans-IO: registrations (OGP uplinks,
//! GameSpy v1 and v3 heartbeats, Quake III / DarkPlaces heartbeats, QuakeWorld
//! heartbeats) in, verification queries out, verdicts back.
//!
//! ```
//! # use std::time::Instant;
//! use ogp_proto::master::registry::{classify, Inbound, Known, Registrar, RegistrarConfig};
//! let now = Instant::now();
//! let mut reg = Registrar::new(RegistrarConfig::default().allow_private(true), [7; 16], now);
//! let uplink = b"\xff\xff\xff\xffOGP\x00\x03\x03\x01\x2a\x00";
//! let from = "127.0.0.1:22222".parse().unwrap();
//! if let Ok(Inbound::Registration(r)) = classify(uplink) {
//!     reg.register(now, from, &r, uplink.len(), Known::default());
//! }
//! // the verification query goes back to the address the uplink came from
//! let (to, datagram) = reg.poll_transmit(now).unwrap();
//! assert_eq!((to, datagram.len()), (from, 11));
//! ```
//!
//! An uplink or a heartbeat proves nothing about its source address: anyone can forge
//! one. So a registration only starts a *verification*: the master queries the source
//! back, from its own socket, in the registering protocol, with that protocol's
//! challenge round trip and a random id of ours (OGP's RequestID after a bare probe,
//! GameSpy's session id, Quake III's `getinfo` challenge, which the `infoResponse` must
//! carry back: one without it is not verified), and lists the server only after a correct answer.
//! QuakeWorld has no query that carries anything of ours: its heartbeats are verified by
//! a ping (`FF FF FF FF k`, 5 bytes, answered by `l`) from the master's socket, the
//! least the protocol offers ([`super::qwmaster`] says what that proves). The master
//! is no amplifier: toward an address under verification it never sends more bytes
//! than it has received from that address (registrations and replies together); a
//! datagram that would exceed that is withheld, and a retry goes out only when more has
//! come in. A forged uplink (13 bytes) costs the victim one 11-byte probe.
//!
//! Caps: registrations per source address ([`RegistrarConfig::per_source`]),
//! verifications started per second overall ([`RegistrarConfig::verifications`]),
//! verifications in progress ([`RegistrarConfig::max_pending`]), listed servers per IP
//! address ([`RegistrarConfig::max_servers_per_ip`]); private, loopback and other
//! non-global addresses only with [`RegistrarConfig::allow_private`].
//!
//! Fair shares under a flood: forged registrations cost nothing to send, and each one
//! that starts a verification holds a place for the whole verification (5 s, since a
//! forged source never answers). So the capacity is shared by source prefix (IPv4 /24,
//! IPv6 /48): each prefix starts at most [`RegistrarConfig::per_prefix`] verifications
//! and holds at most [`RegistrarConfig::max_pending_per_prefix`] at once, and a reserve
//! of starts ([`RegistrarConfig::reserve`]) and of places
//! ([`RegistrarConfig::reserve_pending`]) is kept for prefixes that started no
//! verification within [`RegistrarConfig::seen_window`]. A flood from thousands of
//! addresses fills the general share; a real server that starts meanwhile comes from a
//! prefix the flood has not used and is verified from the reserve at once. A full pool
//! makes room by ending its oldest verification that has had no reply for
//! [`RegistrarConfig::evict_after`] (1 s), so that the places the flood took in its
//! first pass, while its prefixes were new, come free within a second.
//!
//! Probes: a registration that finds no place (its prefix's share or the pool used up)
//! is not lost. Its source is sent the verification's first query at once
//! ([`Admission::Probed`]), with an id that is a keyed hash of our secret, its address,
//! the protocol and a 5-second window, no larger than the registration, within
//! [`RegistrarConfig::probes`] a second; what is kept is a record of the probe (a keyed
//! 64-bit tag and the time, [`RegistrarConfig::max_probe_records`] a window). A datagram
//! from an address with no verification in progress is tried as the answer to such a
//! probe only if that address was probed in the last 5 s and has not answered yet (a
//! lookup: junk and made-up answers from addresses never probed cost nothing more and
//! spend no budget): the probe's machine is made again from the id and fed it, and an
//! answer it takes is charged to its prefix ([`RegistrarConfig::probe_answers_per_prefix`])
//! and to all ([`RegistrarConfig::probe_answers`]). A complete answer (Quake III's
//! `infoResponse` with our challenge) verifies the server at once; a challenge starts
//! the verification there, in [`RegistrarConfig::answered_pending`] places of its own.
//! One answer per address and window: a replayed answer verifies nothing again. A
//! forged source never answers; a real server does within a round trip, however full
//! the pools are.
//!
//! OGP's probe carries no id of ours: OGP v1.01 carries one only in the RequestID
//! header field, which makes the probe 15 bytes, more than the 13-byte uplink it
//! answers (the amplification rule), so the probe stays the bare 11-byte one and the
//! record is what proves that we probed the address. A challenge answer forged in the
//! name of an address we did not probe starts nothing; one forged in the name of an
//! address we did probe (the forger having spoofed its uplink, within that address's
//! registration budget) starts one verification, whose queries stay within what came
//! from the address, and lists nothing (the challenged query's answer must echo our
//! RequestID).
//!
//! Verifications are kept by canonical address ([`super::addr::canonical`]): one server
//! reached through an IPv4 socket and a dual-stack one (`[::ffff:a.b.c.d]`) is one
//! verification and one probe record; its queries go out from the socket its first
//! registration came on, to the address as that socket gave it.
//!
//! A master with several sockets keeps one registrar for all (its caps are the
//! process's) and tells it which socket each datagram came on
//! ([`Registrar::register_on`], [`Registrar::handle_reply_on`],
//! [`Registrar::poll_transmit_on`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::Hasher;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

use siphasher::sip::SipHasher24;

use super::addr::canonical;
use super::dpmaster::{self, ServersRequest};
use super::qwmaster;
use super::teemaster;
use super::teemaster7;
use super::valve::ListRequest;
use crate::client::Details;
use crate::client::{Answer, Machine, Options};
use crate::client_core::{QueryDriver, QueryError, Timing};
use crate::error::DecodeError;
use crate::gamespy1;
use crate::gamespy3::heartbeat::{Heartbeat, StateChanged};
use crate::guard::{RateConfig, RateDecision, RateLimiter, TokenBucket};
use crate::ogp::query::DefaultQuery;
use crate::protocol::Protocol;

/// Prefixes remembered as seen (a table of 32-byte slots: 2 MiB). A flood from more
/// prefixes than this within the seen window can make some of its prefixes look new.
const SEEN_PREFIXES: usize = 1 << 16;

/// What arrived on a master's UDP port.
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// A server announcing itself.
    Registration(Registration),
    /// A Valve master list request.
    List(ListRequest),
    /// A dpmaster list request (`getservers`, `getserversExt`).
    DpList(ServersRequest),
    /// A QuakeWorld master list request (`c\n`).
    QwList,
    /// A Teeworlds 0.6 master request (`req2`, `cou2`).
    TwList(teemaster::Request),
    /// A Teeworlds 0.7 master message: a token request, or a heartbeat or request whose
    /// token the caller checks ([`teemaster7::Tokens`]) before acting on it (a heartbeat
    /// with a valid one is a [`Registration::Teeworlds7`]).
    Tw7(teemaster7::Message),
    /// Anything else (a reply to one of our verification queries, or noise).
    Other,
}

/// A server's announcement.
#[derive(Debug, Clone, PartialEq)]
pub enum Registration {
    /// An OGP Master Server Uplink with its GameID.
    OgpUplink {
        /// The GameID (0: not known).
        game_id: u16,
    },
    /// A GameSpy v3 heartbeat.
    Heartbeat(Box<Heartbeat>),
    /// A Quake III / DarkPlaces heartbeat (`heartbeat QuakeArena-1`, `heartbeat
    /// DarkPlaces`…), verified by `getinfo`.
    Quake3(dpmaster::Heartbeat),
    /// A GameSpy v1 heartbeat (`\heartbeat\PORT\gamename\NAME`), verified by
    /// `\echo\` with our random text from the master's socket to its source address,
    /// and listed on the GameSpy master list under its `gamename`.
    Gamespy1(Box<gamespy1::Heartbeat>),
    /// A QuakeWorld heartbeat (`a\n<sequence>\n<players>\n`) or shutdown (`C\n`),
    /// verified by a ping ([`qwmaster::PingMachine`]).
    QuakeWorld(qwmaster::Heartbeat),
    /// A Teeworlds 0.6 heartbeat (`bea2` and the server's port), verified by `gie3`
    /// with our token to its source IP and that port, and listed as `teeworlds`.
    Teeworlds(teemaster::Heartbeat),
    /// A Teeworlds 0.7 heartbeat (`bea2` and the port in a connectionless packet
    /// carrying our token: [`teemaster7`]), verified by the 0.7 query (a token
    /// handshake, then `gie3`) to its source IP and that port, and listed as
    /// `teeworlds7`. [`classify`] never makes it: the caller checks the token of an
    /// [`Inbound::Tw7`] heartbeat first.
    Teeworlds7(teemaster::Heartbeat),
    /// A Cube 2 server's registration over the master's TCP port (Sauerbraten's
    /// `regserv PORT`, Red Eclipse's `server PORT …`: [`crate::cube2::master`]), never
    /// a datagram: [`classify`] does not make it. The TCP handshake has proved the
    /// source address; the verification is the Cube 2 ping to the game port + 1, from
    /// the master's UDP socket, whose answer must echo our random id (it proves that
    /// the game's query port answers there). Its registration's bytes are the line's,
    /// so the pings stay within them as every verification's queries do.
    Cube2 {
        /// The game port (1 to 65,534; the query port is one up).
        port: u16,
    },
}

/// How a registration is verified: by a protocol of the table's machine, or by the
/// GameSpy v1 echo (`\echo\` with our random text: the protocol's client asks `\status\`,
/// whose answer carries nothing of ours that a spoofer could not forge; its answers are
/// reported as `gamespy1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    Table(Protocol),
    Gamespy1,
    /// QuakeWorld's ping ([`qwmaster::PingMachine`]).
    QuakeWorld,
}

impl Via {
    fn name(self) -> &'static str {
        match self {
            Self::Table(p) => p.name(),
            Self::Gamespy1 => "gamespy1",
            Self::QuakeWorld => "quakeworld",
        }
    }
}

/// A verification's query machine.
#[derive(Debug)]
enum Verifier {
    Table(Machine),
    /// GameSpy v1: `\echo\` with eight hexadecimal digits of our random id, which the
    /// answer must carry back (`\status\` has no challenge: anyone could forge its
    /// answer). 14 bytes, less than the shortest heartbeat (23).
    Gamespy1(Box<gamespy1::client::QueryMachine>),
    /// QuakeWorld: the ping (5 bytes, less than the shortest heartbeat, 6).
    QuakeWorld(Box<qwmaster::PingMachine>),
}

impl Verifier {
    fn new(via: Via, options: &Options, id: u32, now: Instant) -> Self {
        match via {
            Via::Table(p) => Self::Table(Machine::new(p, options, id, now)),
            Via::Gamespy1 => Self::Gamespy1(Box::new(gamespy1::client::QueryMachine::new(
                gamespy1::client::QueryOptions::asking(gamespy1::Query::Echo("".into())),
                options.timing,
                id,
                now,
            ))),
            Via::QuakeWorld => {
                Self::QuakeWorld(Box::new(qwmaster::PingMachine::new(options.timing, now)))
            }
        }
    }

    fn protocol(&self) -> Protocol {
        match self {
            Self::Table(m) => m.protocol(),
            Self::Gamespy1(_) => gamespy1::PROTOCOL,
            Self::QuakeWorld(_) => Protocol::Quakeworld,
        }
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        match self {
            Self::Table(m) => m.poll_transmit(now),
            Self::Gamespy1(m) => m.poll_transmit(now),
            Self::QuakeWorld(m) => m.poll_transmit(now),
        }
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        match self {
            Self::Table(m) => m.handle_datagram(now, datagram),
            Self::Gamespy1(m) => m.handle_datagram(now, datagram),
            Self::QuakeWorld(m) => m.handle_datagram(now, datagram),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match self {
            Self::Table(m) => m.poll_timeout(),
            Self::Gamespy1(m) => m.poll_timeout(),
            Self::QuakeWorld(m) => m.poll_timeout(),
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        match self {
            Self::Table(m) => m.handle_timeout(now),
            Self::Gamespy1(m) => m.handle_timeout(now),
            Self::QuakeWorld(m) => m.handle_timeout(now),
        }
    }

    fn last_dropped(&self) -> Option<&'static str> {
        match self {
            Self::Table(m) => m.last_dropped(),
            Self::Gamespy1(m) => m.last_dropped(),
            Self::QuakeWorld(m) => m.last_dropped(),
        }
    }

    /// The result: the table's answers with their details, GameSpy v1's and
    /// QuakeWorld's without (their status comes from the poll that follows the listing).
    fn take_result(&mut self) -> Option<Result<Verification, QueryError>> {
        match self {
            Self::Table(m) => Some(m.take_result()?.map(|a| a.map_details(Some))),
            Self::Gamespy1(m) => Some(m.take_result()?.map(|a| a.map_details(|_| None))),
            Self::QuakeWorld(m) => Some(m.take_result()?.map(|a| a.map_details(|()| None))),
        }
    }
}

/// A verification's answer: status, ping, protocol, and the protocol's details where
/// its machine has them in [`Details`] (GameSpy v1's echo: none).
pub type Verification = Answer<Option<Details>>;

impl Registration {
    /// The protocol the server registered with (and is verified in).
    pub fn protocol(&self) -> Protocol {
        match self {
            Self::OgpUplink { .. } => Protocol::Ogp,
            Self::Heartbeat(_) => Protocol::Gamespy3,
            Self::Quake3(_) => Protocol::Quake3,
            Self::Gamespy1(_) => gamespy1::PROTOCOL,
            Self::QuakeWorld(_) => Protocol::Quakeworld,
            Self::Teeworlds(_) => Protocol::Teeworlds,
            Self::Teeworlds7(_) => Protocol::Teeworlds7,
            Self::Cube2 { .. } => Protocol::Cube2,
        }
    }

    /// The address to verify and list for a registration from `from`: `from` itself,
    /// but for a GameSpy v1 heartbeat its source IP with the query port it names (Unreal
    /// Tournament sends its heartbeats from a socket of their own, not from the query
    /// port, as the GameSpy masters and their successors expect); a Teeworlds heartbeat
    /// names its port too.
    pub fn query_addr(&self, from: SocketAddr) -> SocketAddr {
        match self {
            Self::Gamespy1(h) => SocketAddr::new(from.ip(), h.port),
            Self::Teeworlds(h) | Self::Teeworlds7(h) => SocketAddr::new(from.ip(), h.port),
            Self::Cube2 { port } => SocketAddr::new(
                from.ip(),
                port.saturating_add(crate::cube2::QUERY_PORT_OFFSET),
            ),
            _ => from,
        }
    }

    /// The metrics' and logs' name of the registration's protocol.
    pub fn protocol_name(&self) -> &'static str {
        self.via().name()
    }

    fn via(&self) -> Via {
        match self {
            Self::Gamespy1(_) => Via::Gamespy1,
            Self::QuakeWorld(_) => Via::QuakeWorld,
            other => Via::Table(other.protocol()),
        }
    }

    /// Whether the server says it is shutting down (a GameSpy heartbeat with
    /// `statechanged` 2, a Quake III flatline heartbeat, a QuakeWorld `C\n`).
    pub fn exiting(&self) -> bool {
        match self {
            Self::Heartbeat(h) => h.state_changed == Some(StateChanged::Exiting),
            Self::Quake3(h) => h.shutdown(),
            Self::Gamespy1(h) => h.state_changed == Some(2),
            Self::QuakeWorld(h) => h.shutdown(),
            Self::OgpUplink { .. }
            | Self::Teeworlds(_)
            | Self::Teeworlds7(_)
            | Self::Cube2 { .. } => false,
        }
    }

    /// Whether the server asks to be looked at now: a heartbeat saying its status
    /// changed, it started or it is exiting. Every OGP uplink may be one (the spec gives
    /// it no reason field), so it counts as one too, and so does every Quake III
    /// heartbeat: servers send one on each change and, ioquake3, twice on shutdown in
    /// the same form as the regular one (dpmaster verifies every heartbeat again).
    pub fn wants_poll(&self) -> bool {
        match self {
            // a Cube 2 server registers on start and hourly
            Self::OgpUplink { .. } | Self::Quake3(_) | Self::Cube2 { .. } => true,
            // sent every 15 s whatever changed (the game's status is polled)
            Self::Teeworlds(_) | Self::Teeworlds7(_) => false,
            Self::Heartbeat(h) => !matches!(h.state_changed, None | Some(StateChanged::Regular)),
            // the games send 1 on a change (map, players) and 2 when shutting down
            Self::Gamespy1(h) => h.state_changed.is_some_and(|n| n != 0),
            // a shutdown: the poll finds out whether the server really went (the notice
            // itself proves nothing); MVDSV's regular heartbeats come every 300 s
            Self::QuakeWorld(h) => h.shutdown(),
        }
    }

    /// The game as announced: GameSpy's `gamename`, or the OGP GameID as a number
    /// (`None` for GameID 0, and for a Quake III heartbeat, whose tag names the
    /// protocol: the game is the `infoResponse`'s, [`dpmaster::Listing`]).
    pub fn game(&self) -> Option<String> {
        match self {
            // Cube 2: the ping's answer tells the game
            Self::OgpUplink { game_id: 0 }
            | Self::Quake3(_)
            | Self::QuakeWorld(_)
            | Self::Teeworlds(_)
            | Self::Teeworlds7(_)
            | Self::Cube2 { .. } => None,
            Self::OgpUplink { game_id } => Some(game_id.to_string()),
            Self::Heartbeat(h) => h.game_name.as_ref().map(|g| g.to_string()),
            Self::Gamespy1(h) => Some(h.game_name.to_ascii_lowercase().to_string()),
        }
    }
}

/// Tells what a datagram sent to a master is. `Err` only for a datagram that starts
/// like a registration or a list request and then does not decode.
pub fn classify(datagram: &[u8]) -> Result<Inbound, DecodeError> {
    // Teeworlds 0.7's: a token request (`04 00 00 FF FF FF FF 05`) or a connectionless
    // packet (`21`, two tokens) with a master's word; its replies to our queries are
    // neither
    if teemaster7::is_master_message(datagram) {
        return teemaster7::Message::decode(datagram).map(Inbound::Tw7);
    }
    // Teeworlds' packet header may start with any byte (`FF`, qstat's `20`)
    if teemaster::is_master_message(datagram) {
        return if teemaster::is_heartbeat(datagram) {
            teemaster::Heartbeat::decode(datagram)
                .map(|h| Inbound::Registration(Registration::Teeworlds(h)))
        } else {
            teemaster::Request::decode(datagram).map(Inbound::TwList)
        };
    }
    match datagram.first() {
        Some(&0x31) => ListRequest::decode(datagram).map(Inbound::List),
        Some(&b'\\') if gamespy1::is_heartbeat(datagram) => gamespy1::decode_heartbeat(datagram)
            .map(|h| Inbound::Registration(Registration::Gamespy1(Box::new(h)))),
        Some(&0x03) => Heartbeat::decode(datagram)
            .map(|h| Inbound::Registration(Registration::Heartbeat(Box::new(h)))),
        Some(&(b'a' | b'C')) if qwmaster::is_heartbeat(datagram) => {
            qwmaster::Heartbeat::decode(datagram)
                .map(|h| Inbound::Registration(Registration::QuakeWorld(h)))
        }
        Some(&b'c') if qwmaster::is_list_request(datagram) => {
            qwmaster::decode_list_request(datagram).map(|()| Inbound::QwList)
        }
        Some(&0xFF) if dpmaster::is_heartbeat(datagram) => dpmaster::Heartbeat::decode(datagram)
            .map(|h| Inbound::Registration(Registration::Quake3(h))),
        Some(&0xFF) if dpmaster::is_list_request(datagram) => {
            ServersRequest::decode(datagram).map(Inbound::DpList)
        }
        Some(&0xFF) if crate::ogp::is_ogp(datagram) => match crate::ogp::decode(datagram) {
            Ok(p) => match p.message {
                crate::ogp::Message::MasterUplink { game_id } if p.header.is_answer() => {
                    Ok(Inbound::Registration(Registration::OgpUplink { game_id }))
                }
                _ => Ok(Inbound::Other),
            },
            Err(_) => Ok(Inbound::Other),
        },
        _ => Ok(Inbound::Other),
    }
}

/// Whether an address may be listed on the internet ([`super::addr`]: the one judgement
/// of the master's addresses).
pub use super::addr::is_global;

/// The prefix a source shares verification capacity with: its IPv4 /24 or IPv6 /48
/// (IPv4-mapped IPv6 addresses as IPv4), as an address with the host bits cleared.
pub fn prefix_of(ip: IpAddr) -> IpAddr {
    let v4 = match ip {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(v6) => v6.to_ipv4_mapped(),
    };
    match (v4, ip) {
        (Some(v4), _) => IpAddr::V4(Ipv4Addr::from(u32::from(v4) & 0xffff_ff00)),
        (None, IpAddr::V6(v6)) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !0u128 << 80)),
        (None, IpAddr::V4(v4)) => IpAddr::V4(v4),
    }
}

/// The key answers to probes are charged to: an IPv4 /24 (as its address with the host
/// bits cleared), or an IPv6 address, which the [`RateLimiter`] keys by its /64.
fn answer_prefix(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        v4 @ IpAddr::V4(_) => prefix_of(v4),
        v6 => v6,
    }
}

/// What a probe's machine made of an answer it took.
enum Taken {
    /// The whole answer: the server is verified.
    Complete(Box<Verification>),
    /// A challenge: the verification goes on with this next query.
    Challenge(Vec<u8>),
}

/// Settings of a [`Registrar`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RegistrarConfig {
    /// List loopback, private and other non-global addresses (default false; for LANs
    /// and tests).
    pub allow_private: bool,
    /// Listed servers per IP address (default 64).
    pub max_servers_per_ip: usize,
    /// Registrations accepted per source IP address (IPv6: per /64); default 4 a second
    /// with a burst of 128, which fits 64 servers on one address that each announce at
    /// start, every minute and on every change.
    pub per_source: RateConfig,
    /// Verifications started per second, all sources together (default 1000, burst
    /// 2000): what a flood of forged registrations can make the master send.
    pub verifications: RateConfig,
    /// Verifications in progress at once (default 4096).
    pub max_pending: usize,
    /// Timers of a verification query (default: 1 s per attempt, 2 retries, 5 s in
    /// all).
    pub timing: Timing,
    /// Verifications started per source prefix (IPv4 /24, IPv6 /48); default 20 a
    /// second with a burst of 256 (a prefix's servers restarting together).
    pub per_prefix: RateConfig,
    /// Verifications in progress per source prefix (default 256).
    pub max_pending_per_prefix: usize,
    /// Verifications started per second from the reserve, for prefixes not seen within
    /// [`seen_window`](Self::seen_window), beyond [`verifications`](Self::verifications)
    /// (default 250, burst 500).
    pub reserve: RateConfig,
    /// Places of [`max_pending`](Self::max_pending) kept for verifications from the
    /// reserve (default 512; at most half of `max_pending`).
    pub reserve_pending: usize,
    /// A prefix that started a verification (or tried to) within this long is "seen" and
    /// has no claim on the reserve (default 30 s).
    pub seen_window: Duration,
    /// A verification that has had no reply this long after it started may be ended to
    /// make room for a new one when its pool is full (default 1 s: a real server
    /// answers the probe within a round trip, a forged source never does).
    pub evict_after: Duration,
    /// Probes sent a second, all sources together, for registrations that cannot start
    /// a verification now (default 10,000, burst 20,000; each no larger than its
    /// registration): see [`Admission::Probed`].
    pub probes: RateConfig,
    /// Answers to probes taken a second, all sources together (default 10,000, burst
    /// 20,000: as many as probes go out). Charged only for an answer that matches a
    /// probe we sent and carries its id: junk and made-up answers spend nothing.
    pub probe_answers: RateConfig,
    /// Answers to probes taken a second per source prefix (IPv4 /24, IPv6 /64), within
    /// [`probe_answers`](Self::probe_answers): default 100, burst 256, so that one
    /// prefix cannot take the tries of all.
    pub probe_answers_per_prefix: RateConfig,
    /// Verifications in progress that an answered probe started, beyond
    /// [`max_pending`](Self::max_pending) (default 256).
    pub answered_pending: usize,
    /// Probes remembered per 5-second window (default 131,072: more than the
    /// [`probes`](Self::probes) a window can send, 70,000 by default); a probe beyond is
    /// not sent. Two windows are kept: at most two tables of 262,144 slots of 17 bytes
    /// (8.5 MiB).
    pub max_probe_records: usize,
}

impl Default for RegistrarConfig {
    fn default() -> Self {
        Self {
            allow_private: false,
            max_servers_per_ip: 64,
            per_source: RateConfig::new(4.0, 128.0),
            verifications: RateConfig::new(1000.0, 2000.0),
            max_pending: 4096,
            timing: Timing::default(),
            per_prefix: RateConfig::new(20.0, 256.0),
            max_pending_per_prefix: 256,
            reserve: RateConfig::new(250.0, 500.0),
            reserve_pending: 512,
            seen_window: Duration::from_secs(30),
            evict_after: Duration::from_secs(1),
            probes: RateConfig::new(10_000.0, 20_000.0),
            probe_answers: RateConfig::new(10_000.0, 20_000.0),
            probe_answers_per_prefix: RateConfig::new(100.0, 256.0),
            answered_pending: 256,
            max_probe_records: 1 << 17,
        }
    }
}

impl RegistrarConfig {
    /// With [`allow_private`](Self::allow_private) set.
    #[must_use]
    pub fn allow_private(mut self, on: bool) -> Self {
        self.allow_private = on;
        self
    }
}

/// What the master knows of a registering address, for the caps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Known {
    /// The address is listed already (verified earlier): no new verification.
    pub listed: bool,
    /// Servers listed on its IP address.
    pub servers_on_ip: usize,
}

/// Why a registration was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// A non-global address, without [`RegistrarConfig::allow_private`].
    Private,
    /// Over the source's registration budget.
    RateLimited,
    /// The IP address already has [`RegistrarConfig::max_servers_per_ip`] servers.
    TooManyOnIp,
    /// Too many verifications in progress, or started this second.
    Busy,
    /// The source's prefix (IPv4 /24, IPv6 /48) used its share of verifications.
    PrefixBusy,
    /// A shutdown notice (QuakeWorld's `C\n`) from an address that is not listed:
    /// nothing to verify or to remove.
    NotListed,
}

impl DropReason {
    /// A short name (metrics labels, logs).
    pub fn name(self) -> &'static str {
        match self {
            Self::Private => "private",
            Self::RateLimited => "rate_limited",
            Self::TooManyOnIp => "too_many_on_ip",
            Self::Busy => "busy",
            Self::PrefixBusy => "prefix_busy",
            Self::NotListed => "not_listed",
        }
    }
}

/// What became of a registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// From a listed server: noted, no verification needed.
    Listed,
    /// A verification started, or one in progress got the bytes as credit.
    Verifying,
    /// No verification could start now (why: its prefix's share or the pool is used
    /// up), so only a record of the probe is kept, and its source was sent the
    /// verification's first query (no larger than the registration) with an id keyed by
    /// our secret: a real server's answer, within 5 s, starts the verification then
    /// ([`Registrar::handle_reply_on`]). A forged source never answers.
    Probed(DropReason),
    /// Dropped.
    Dropped(DropReason),
}

/// The end of a verification.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The server answered correctly: list it.
    Verified {
        /// Its query address (where the registration came from).
        addr: SocketAddr,
        /// The game as registered ([`Registration::game`]).
        game: Option<String>,
        /// Its answer (status, ping, protocol; the protocol's details but for GameSpy
        /// v1's echo).
        answer: Box<Verification>,
        /// Registered by a GameSpy v1 heartbeat: listed on the GameSpy master list under
        /// `game`.
        gamespy1: bool,
        /// The caller's socket its queries went out from (where an acknowledgement to
        /// it goes: Teeworlds 0.7's `fwok`).
        local: usize,
    },
    /// No correct answer: list nothing.
    Failed {
        /// The address.
        addr: SocketAddr,
        /// The protocol it was queried in.
        protocol: Protocol,
        /// Why.
        error: QueryError,
        /// Datagrams not sent because the address had not sent us as many bytes.
        withheld: u32,
        /// Datagrams that came back from the address during the verification (0 for a
        /// forged registration: its source never answers). A server that answered and
        /// still failed is worth telling its operator about.
        replies: u32,
        /// Why the last of those replies was not taken (`"wrong challenge (not the one
        /// we sent)"`…), when one was dropped: a server that answered wrongly, not one
        /// whose answer never came.
        refused: Option<&'static str>,
    },
}

/// Counters of a [`Registrar`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RegistrarStats {
    /// Registrations from listed servers.
    pub listed: u64,
    /// Verifications started.
    pub started: u64,
    /// Servers verified.
    pub verified: u64,
    /// Verifications failed.
    pub failed: u64,
    /// Registrations dropped, by [`DropReason`] (private, rate-limited, too many on
    /// the IP, busy, prefix busy, not listed).
    pub dropped: [u64; 6],
    /// Verifications started from the reserve (a prefix not seen lately).
    pub reserved: u64,
    /// Verifications ended early, unanswered, to make room (counted in `failed` too).
    pub evicted: u64,
    /// Registrations that could not start a verification and whose source was probed
    /// instead (counted in `dropped` too).
    pub probed: u64,
    /// Answers to probes taken: each verified a server at once or started a
    /// verification.
    pub answered: u64,
    /// Datagrams withheld by the no-amplification rule.
    pub withheld: u64,
    /// Bytes sent toward addresses under verification.
    pub sent_bytes: u64,
    /// Bytes received from them (registrations and replies).
    pub received_bytes: u64,
}

/// Which share of the places a verification holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pool {
    /// [`RegistrarConfig::max_pending`] less the reserve.
    General,
    /// [`RegistrarConfig::reserve_pending`]: prefixes not seen lately.
    Reserve,
    /// [`RegistrarConfig::answered_pending`]: started by an answer to a probe.
    Answered,
}

impl Pool {
    fn index(self) -> usize {
        match self {
            Self::General => 0,
            Self::Reserve => 1,
            Self::Answered => 2,
        }
    }
}

#[derive(Debug)]
struct Pending {
    machine: Verifier,
    game: Option<String>,
    received: u64,
    sent: u64,
    withheld: u32,
    replies: u32,
    /// `replies` when it started (1 when an answer to a probe started it): a
    /// verification with no reply since is a candidate for eviction.
    start_replies: u32,
    prefix: IpAddr,
    pool: Pool,
    started: Instant,
    /// The caller's socket it arrived on, where its queries go out from.
    local: usize,
    /// The address its queries go to, as that socket gave it (the table's key is its
    /// canonical form: an IPv4-mapped address as its IPv4).
    peer: SocketAddr,
}

/// Probes waiting to be handed out (the caller takes them after each call, so this holds
/// a few; a caller that does not loses the ones beyond).
const OUTBOX: usize = 1024;

/// The window of a probe's id: its id is the same for every probe of an address (in a
/// protocol) within a window, and the registrar remembers the probes of the current
/// window and the last.
const PROBE_WINDOW_MS: u64 = 5_000;

/// How long after its probe an answer is taken: 5 s (checked exactly, against the
/// probe's record).
const PROBE_LIFETIME_MS: u64 = 5_000;

/// What the registrar remembers of a probe it sent.
#[derive(Debug, Clone, Copy)]
struct ProbeRecord {
    /// Milliseconds into its window when it was sent (the last time, if sent again).
    sent_ms: u16,
    /// An answer was taken: no other is within the window.
    answered: bool,
}

/// The probes sent in the current window and the last, by tag (a keyed 64-bit hash of
/// the window, the protocol and the canonical address): an answer is tried only from an
/// address probed within [`PROBE_LIFETIME_MS`], once.
#[derive(Debug, Default)]
struct ProbeRecords {
    window: u64,
    current: HashMap<u64, ProbeRecord>,
    previous: HashMap<u64, ProbeRecord>,
}

impl ProbeRecords {
    /// Moves on to `window` (the previous window's records are dropped with it).
    fn rotate(&mut self, window: u64) {
        if window == self.window {
            return;
        }
        self.previous = if window == self.window.saturating_add(1) {
            std::mem::take(&mut self.current)
        } else {
            HashMap::new()
        };
        self.current = HashMap::new();
        self.window = window;
    }

    /// The record of `tag`, made in `window` (the current one or the last).
    fn get_mut(&mut self, window: u64, tag: u64) -> Option<&mut ProbeRecord> {
        if window == self.window {
            self.current.get_mut(&tag)
        } else if window.checked_add(1) == Some(self.window) {
            self.previous.get_mut(&tag)
        } else {
            None
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.current.len().saturating_add(self.previous.len())
    }
}

/// Verifies registrations (see the module docs). Sans-IO: the caller passes in what
/// arrived and the time, sends what [`poll_transmit`](Self::poll_transmit) hands out
/// from the master's own socket, and calls [`handle_timeout`](Self::handle_timeout) at
/// [`poll_timeout`](Self::poll_timeout). A master with several sockets uses one
/// registrar for all of them (its caps are the process's), passes the socket's index
/// with what arrived ([`register_on`](Self::register_on),
/// [`handle_reply_on`](Self::handle_reply_on)) and sends each datagram of
/// [`poll_transmit_on`](Self::poll_transmit_on) from the socket it names.
#[derive(Debug)]
pub struct Registrar {
    config: RegistrarConfig,
    options: Options,
    per_source: RateLimiter,
    starts: TokenBucket,
    prefix_starts: RateLimiter,
    /// Prefixes that reached the start decision lately: a bucket of one token that takes
    /// `seen_window` to refill, so that its slot is kept that long.
    seen: RateLimiter,
    reserve_starts: TokenBucket,
    probes: TokenBucket,
    probe_answers: TokenBucket,
    /// Answers to probes taken per source prefix (IPv4 /24, IPv6 /64).
    prefix_answers: RateLimiter,
    /// The probes of this window and the last.
    records: ProbeRecords,
    /// Verifications in progress per prefix (entries removed at zero).
    per_prefix: HashMap<IpAddr, usize>,
    /// Verifications in progress in each [`Pool`].
    in_pool: [usize; 3],
    /// Verifications of each [`Pool`], oldest first (entries of finished ones are
    /// skipped when they come up): the candidates for eviction.
    order: [VecDeque<(Instant, SocketAddr)>; 3],
    /// Verifications in progress, by canonical address (as are `order`, `ready` and
    /// `timers`): one server reached through an IPv4 socket and a dual-stack one is one
    /// verification.
    pending: HashMap<SocketAddr, Pending>,
    ready: VecDeque<SocketAddr>,
    /// Probes and first queries after an answered probe, due now.
    outbox: VecDeque<(usize, SocketAddr, Vec<u8>)>,
    /// Deadlines of the pending machines, earliest first; an entry is stale when its
    /// machine's deadline has moved since (checked when it comes up), so that finding
    /// the next deadline costs O(log n) rather than a pass over every verification.
    timers: BinaryHeap<Reverse<(Instant, SocketAddr)>>,
    verdicts: VecDeque<Verdict>,
    ids: SipHasher24,
    counter: u64,
    /// Where the probes' windows count from.
    base: Instant,
    stats: RegistrarStats,
}

impl Registrar {
    /// A registrar; `secret` keys its random ids and its rate-limit table (take it from
    /// the system's random source).
    pub fn new(config: RegistrarConfig, secret: [u8; 16], now: Instant) -> Self {
        let mut options = Options::with_timing(config.timing);
        options.ogp.query = DefaultQuery::server_info_only();
        options.ogp.max_bytes_per_packet = None;
        options.ogp.probe = true;
        // Quake III: `getinfo` alone, whose `infoResponse` must echo the challenge (the
        // master's poller asks `getstatus` once the server is listed)
        options.quake3.status = false;
        options.quake3.require_challenge = true;
        // Our session ids are random and servers that register echo them whole: the
        // masked form some query-only servers send (Minecraft's) would leave 16 bits
        // for a spoofer to guess toward a listing.
        options.gamespy3.nibble_session_ids = false;
        // Cube 2: the ping alone (its id echoed is the proof); Sauerbraten's extinfo
        // would be three more datagrams than the registration's bytes cover
        options.cube2.extinfo = false;
        let capacity = config.max_pending.saturating_mul(4).max(1024);
        Self {
            per_source: RateLimiter::new(config.per_source, capacity, secret, now),
            starts: TokenBucket::new(config.verifications, now),
            prefix_starts: RateLimiter::new(config.per_prefix, capacity, secret, now),
            seen: RateLimiter::new(
                RateConfig::new(1.0 / config.seen_window.as_secs_f32().max(0.001), 1.0),
                SEEN_PREFIXES,
                secret,
                now,
            ),
            reserve_starts: TokenBucket::new(config.reserve, now),
            probes: TokenBucket::new(config.probes, now),
            probe_answers: TokenBucket::new(config.probe_answers, now),
            prefix_answers: RateLimiter::new(
                config.probe_answers_per_prefix,
                capacity,
                secret,
                now,
            ),
            records: ProbeRecords::default(),
            per_prefix: HashMap::new(),
            in_pool: [0; 3],
            order: [VecDeque::new(), VecDeque::new(), VecDeque::new()],
            options,
            pending: HashMap::new(),
            ready: VecDeque::new(),
            outbox: VecDeque::new(),
            timers: BinaryHeap::new(),
            verdicts: VecDeque::new(),
            ids: SipHasher24::new_with_key(&secret),
            counter: 0,
            base: now,
            stats: RegistrarStats::default(),
            config,
        }
    }

    /// The settings.
    pub fn config(&self) -> &RegistrarConfig {
        &self.config
    }

    /// Counters.
    pub fn stats(&self) -> RegistrarStats {
        self.stats
    }

    /// Verifications in progress.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Whether the pool has a verification to evict: its oldest one with no reply since
    /// it started, started at least `evict_after` ago. Drops finished and answered
    /// entries from the front.
    fn can_evict(&mut self, now: Instant, pool: Pool) -> bool {
        let evict_after = self.config.evict_after;
        let Some(order) = self.order.get_mut(pool.index()) else {
            return false;
        };
        while let Some(&(t, addr)) = order.front() {
            match self.pending.get(&addr) {
                Some(p) if p.started == t && p.pool == pool && p.replies == p.start_replies => {
                    return now.saturating_duration_since(t) >= evict_after;
                }
                _ => {
                    order.pop_front();
                }
            }
        }
        false
    }

    /// Ends the verification at the front of the pool's order (checked by
    /// [`can_evict`](Self::can_evict)) as failed: no answer.
    fn evict(&mut self, pool: Pool) {
        let Some((_, addr)) = self
            .order
            .get_mut(pool.index())
            .and_then(VecDeque::pop_front)
        else {
            return;
        };
        let Some(p) = self.remove(addr) else {
            return;
        };
        self.stats.failed += 1;
        self.stats.evicted += 1;
        self.verdicts.push_back(Verdict::Failed {
            addr,
            protocol: p.machine.protocol(),
            error: QueryError::NoAnswer {
                protocol: p.machine.protocol(),
                step: None,
                attempts: 1,
            },
            withheld: p.withheld,
            replies: p.replies,
            refused: p.machine.last_dropped(),
        });
    }

    /// Removes a verification, with its places in the counts.
    fn remove(&mut self, addr: SocketAddr) -> Option<Pending> {
        let p = self.pending.remove(&addr)?;
        if let Some(n) = self.in_pool.get_mut(p.pool.index()) {
            *n = n.saturating_sub(1);
        }
        if let Some(n) = self.per_prefix.get_mut(&p.prefix) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_prefix.remove(&p.prefix);
            }
        }
        Some(p)
    }

    fn in_pool(&self, pool: Pool) -> usize {
        self.in_pool.get(pool.index()).copied().unwrap_or(0)
    }

    fn reserve_pending(&self) -> usize {
        self.config.reserve_pending.min(self.config.max_pending / 2)
    }

    fn count_drop(&mut self, reason: DropReason) {
        let i = match reason {
            DropReason::Private => 0,
            DropReason::RateLimited => 1,
            DropReason::TooManyOnIp => 2,
            DropReason::Busy => 3,
            DropReason::PrefixBusy => 4,
            DropReason::NotListed => 5,
        };
        if let Some(c) = self.stats.dropped.get_mut(i) {
            *c += 1;
        }
    }

    fn drop_for(&mut self, reason: DropReason) -> Admission {
        self.count_drop(reason);
        Admission::Dropped(reason)
    }

    fn next_id(&mut self) -> u32 {
        self.counter = self.counter.wrapping_add(1);
        let mut h = self.ids;
        h.write_u64(self.counter);
        (h.finish() as u32).max(1)
    }

    /// The probes' window at `now`, and the milliseconds into it.
    fn clock(&self, now: Instant) -> (u64, u64) {
        let ms =
            u64::try_from(now.saturating_duration_since(self.base).as_millis()).unwrap_or(u64::MAX);
        (ms / PROBE_WINDOW_MS, ms % PROBE_WINDOW_MS)
    }

    /// A keyed hash of `what`, a probe's window, its protocol and its (canonical)
    /// address.
    fn probe_hash(&self, what: &[u8], window: u64, protocol: Via, addr: SocketAddr) -> u64 {
        let mut h = self.ids;
        h.write(what);
        h.write(protocol.name().as_bytes());
        h.write_u64(window);
        match addr.ip().to_canonical() {
            IpAddr::V4(v4) => h.write(&v4.octets()),
            IpAddr::V6(v6) => h.write(&v6.octets()),
        }
        h.write_u16(addr.port());
        h.finish()
    }

    /// The id of a probe of `addr` in `protocol` sent in `window`: keyed by our secret,
    /// so that only who sees the probe can answer it.
    fn probe_id(&self, window: u64, protocol: Via, addr: SocketAddr) -> u32 {
        (self.probe_hash(b"probe", window, protocol, addr) as u32).max(1)
    }

    /// The tag of its record (64 bits: nobody can aim at another address's record).
    fn probe_tag(&self, window: u64, protocol: Via, addr: SocketAddr) -> u64 {
        self.probe_hash(b"record", window, protocol, addr)
    }

    /// A registration of `len` bytes from `from` (on the caller's only socket: see
    /// [`register_on`](Self::register_on)).
    pub fn register(
        &mut self,
        now: Instant,
        from: SocketAddr,
        registration: &Registration,
        len: usize,
        known: Known,
    ) -> Admission {
        self.register_on(now, 0, from, registration, len, known)
    }

    /// A registration of `len` bytes from `from` that arrived on the caller's socket
    /// `local` (an index of the caller's: the queries to `from` go out from it).
    pub fn register_on(
        &mut self,
        now: Instant,
        local: usize,
        from: SocketAddr,
        registration: &Registration,
        len: usize,
        known: Known,
    ) -> Admission {
        let from = registration.query_addr(from);
        if !self.config.allow_private && !is_global(from.ip()) {
            return self.drop_for(DropReason::Private);
        }
        if self.per_source.check(now, from.ip()) == RateDecision::Limited {
            return self.drop_for(DropReason::RateLimited);
        }
        let len = u64::try_from(len).unwrap_or(u64::MAX);
        let key = canonical(from);
        if let Some(p) = self.pending.get_mut(&key) {
            p.received = p.received.saturating_add(len);
            self.stats.received_bytes = self.stats.received_bytes.saturating_add(len);
            self.ready.push_back(key);
            return Admission::Verifying;
        }
        if known.listed {
            self.stats.listed += 1;
            return Admission::Listed;
        }
        if matches!(registration, Registration::QuakeWorld(h) if h.shutdown()) {
            return self.drop_for(DropReason::NotListed);
        }
        if known.servers_on_ip >= self.config.max_servers_per_ip {
            return self.drop_for(DropReason::TooManyOnIp);
        }
        let prefix = prefix_of(from.ip());
        // Seen: this prefix started (or tried to start) a verification lately. Asked
        // before this registration is charged to it.
        let seen = self.seen.knows(now, prefix, self.config.seen_window);
        let _ = self.seen.check(now, prefix);
        if self.per_prefix.get(&prefix).copied().unwrap_or(0) >= self.config.max_pending_per_prefix
            || self.prefix_starts.check(now, prefix) == RateDecision::Limited
        {
            return self.probe(now, local, from, registration, len, DropReason::PrefixBusy);
        }
        let reserve_pending = self.reserve_pending();
        let general = self.config.max_pending.saturating_sub(reserve_pending);
        // A full pool makes room by ending its oldest verification that has had no reply
        // for `evict_after` (a forged one: its source never answers).
        let general_full = self.in_pool(Pool::General) >= general;
        let reserve_full = self.in_pool(Pool::Reserve) >= reserve_pending;
        let pool = if (!general_full || self.can_evict(now, Pool::General))
            && self.starts.check(now) == RateDecision::Allow
        {
            if general_full {
                self.evict(Pool::General);
            }
            Pool::General
        } else if !seen
            && (!reserve_full || self.can_evict(now, Pool::Reserve))
            && self.reserve_starts.check(now) == RateDecision::Allow
        {
            if reserve_full {
                self.evict(Pool::Reserve);
            }
            Pool::Reserve
        } else {
            return self.probe(now, local, from, registration, len, DropReason::Busy);
        };
        let id = self.next_id();
        let machine = Verifier::new(registration.via(), &self.options, id, now);
        self.start(
            key,
            Pending {
                machine,
                game: registration.game(),
                received: len,
                sent: 0,
                withheld: 0,
                replies: 0,
                start_replies: 0,
                prefix,
                pool,
                started: now,
                local,
                peer: from,
            },
        );
        if pool == Pool::Reserve {
            self.stats.reserved += 1;
        }
        self.stats.received_bytes = self.stats.received_bytes.saturating_add(len);
        self.ready.push_back(key);
        Admission::Verifying
    }

    /// Puts a verification in the table under `key` (its canonical address), its pool's
    /// order and the counts.
    fn start(&mut self, key: SocketAddr, p: Pending) {
        let (pool, started, prefix) = (p.pool, p.started, p.prefix);
        self.pending.insert(key, p);
        let limit = self
            .config
            .max_pending
            .max(self.config.answered_pending)
            .saturating_mul(4)
            .saturating_add(1024);
        let pending = &self.pending;
        if let Some(order) = self.order.get_mut(pool.index()) {
            order.push_back((started, key));
            if order.len() > limit {
                order.retain(|(t, a)| {
                    pending
                        .get(a)
                        .is_some_and(|p| p.started == *t && p.pool == pool)
                });
            }
        }
        if let Some(n) = self.in_pool.get_mut(pool.index()) {
            *n += 1;
        }
        *self.per_prefix.entry(prefix).or_insert(0) += 1;
        self.stats.started += 1;
        self.arm(key);
    }

    /// A registration that cannot start a verification now (`reason`: its prefix's share
    /// or the pool is used up): its source is sent the verification's first query
    /// anyway, with an id keyed by our secret, the window and its address, and only a
    /// record of the probe is kept (a tag and the time). A real server answers it, and
    /// its answer starts the verification ([`handle_reply_on`](Self::handle_reply_on));
    /// a forged source never answers. No larger than the registration, like every query
    /// toward an unverified address. Not sent again to an address whose answer was
    /// taken within the window.
    fn probe(
        &mut self,
        now: Instant,
        local: usize,
        from: SocketAddr,
        registration: &Registration,
        len: u64,
        reason: DropReason,
    ) -> Admission {
        self.count_drop(reason);
        let protocol = registration.via();
        let (window, ms) = self.clock(now);
        self.records.rotate(window);
        let tag = self.probe_tag(window, protocol, from);
        let known = self.records.current.get(&tag).copied();
        let room = known.is_some() || self.records.current.len() < self.config.max_probe_records;
        if known.is_some_and(|r| r.answered)
            || !room
            || self.outbox.len() >= OUTBOX
            || self.probes.check(now) == RateDecision::Limited
        {
            return Admission::Dropped(reason);
        }
        let id = self.probe_id(window, protocol, from);
        let mut m = Verifier::new(protocol, &self.options, id, now);
        let Some(d) = m.poll_transmit(now) else {
            return Admission::Dropped(reason);
        };
        let n = u64::try_from(d.len()).unwrap_or(u64::MAX);
        if n > len {
            self.stats.withheld += 1;
            return Admission::Dropped(reason);
        }
        let record = ProbeRecord {
            sent_ms: u16::try_from(ms).unwrap_or(u16::MAX),
            answered: false,
        };
        self.records.current.insert(tag, record);
        self.outbox.push_back((local, from, d));
        self.stats.probed += 1;
        self.stats.sent_bytes = self.stats.sent_bytes.saturating_add(n);
        self.stats.received_bytes = self.stats.received_bytes.saturating_add(len);
        Admission::Probed(reason)
    }

    /// A datagram from `from` that is not a registration (on the caller's only socket:
    /// see [`handle_reply_on`](Self::handle_reply_on)).
    pub fn handle_reply(&mut self, now: Instant, from: SocketAddr, datagram: &[u8]) -> bool {
        self.handle_reply_on(now, 0, from, datagram)
    }

    /// A datagram from `from` that is not a registration, on the caller's socket
    /// `local`: a reply to our verification query if one is in progress for that address,
    /// or an answer to a probe ([`Admission::Probed`]) that starts one (returns true);
    /// else ignored.
    pub fn handle_reply_on(
        &mut self,
        now: Instant,
        local: usize,
        from: SocketAddr,
        datagram: &[u8],
    ) -> bool {
        let key = canonical(from);
        let Some(p) = self.pending.get_mut(&key) else {
            return self.answer_to_probe(now, local, from, datagram);
        };
        let len = u64::try_from(datagram.len()).unwrap_or(u64::MAX);
        p.received = p.received.saturating_add(len);
        p.replies = p.replies.saturating_add(1);
        self.stats.received_bytes = self.stats.received_bytes.saturating_add(len);
        p.machine.handle_datagram(now, datagram);
        self.ready.push_back(key);
        self.settle(key);
        self.arm(key);
        true
    }

    /// Whether `datagram` answers a probe we sent `from` within the last 5 s, whose
    /// answer was not taken yet: checked first against the probe's record (a lookup: a
    /// datagram from an address we did not probe costs nothing more and spends no
    /// budget), then by the probe's machine, made again from its id, which takes it or
    /// not; only then is it charged to its prefix's and the overall answers. A complete
    /// answer (Quake III's `infoResponse` with our challenge) verifies the server at
    /// once; a challenge starts the verification from there, in the places kept for
    /// answered probes ([`RegistrarConfig::answered_pending`]). Either way the record is
    /// spent: one answer per address and window.
    fn answer_to_probe(
        &mut self,
        now: Instant,
        local: usize,
        from: SocketAddr,
        datagram: &[u8],
    ) -> bool {
        let protocol = match crate::detect::guess(datagram) {
            _ if datagram.first() == Some(&b'\\') => Via::Gamespy1,
            _ if qwmaster::is_ping_reply(datagram) => Via::QuakeWorld,
            Some(p @ (Protocol::Ogp | Protocol::Gamespy3 | Protocol::Quake3 | Protocol::Cube2)) => {
                Via::Table(p)
            }
            _ => return false,
        };
        if !self.config.allow_private && !is_global(from.ip()) {
            return false;
        }
        let (window, ms) = self.clock(now);
        self.records.rotate(window);
        let prefix = prefix_of(from.ip());
        if self.per_prefix.get(&prefix).copied().unwrap_or(0) >= self.config.max_pending_per_prefix
        {
            return false;
        }
        for w in [Some(window), window.checked_sub(1)].into_iter().flatten() {
            let tag = self.probe_tag(w, protocol, from);
            let Some(record) = self.records.get_mut(w, tag) else {
                continue;
            };
            let age = (window - w)
                .saturating_mul(PROBE_WINDOW_MS)
                .saturating_add(ms)
                .saturating_sub(u64::from(record.sent_ms));
            if record.answered || age > PROBE_LIFETIME_MS {
                continue;
            }
            let id = self.probe_id(w, protocol, from);
            let mut m = Verifier::new(protocol, &self.options, id, now);
            let Some(probe) = m.poll_transmit(now) else {
                continue;
            };
            m.handle_datagram(now, datagram);
            let next = m.poll_transmit(now);
            let taken = match (m.take_result(), next) {
                (Some(Ok(answer)), _) => Taken::Complete(Box::new(answer)),
                (None, Some(next)) => Taken::Challenge(next),
                _ => continue,
            };
            return self.take_answer(now, local, from, (w, tag), m, probe, taken, datagram);
        }
        false
    }

    /// An answer to a probe that its machine took: charged to the source's prefix and
    /// to the answers of all, its record spent, and the server verified or its
    /// verification started (`m`, which sent `probe`, holds it).
    #[allow(clippy::too_many_arguments)]
    fn take_answer(
        &mut self,
        now: Instant,
        local: usize,
        from: SocketAddr,
        (window, tag): (u64, u64),
        m: Verifier,
        probe: Vec<u8>,
        taken: Taken,
        datagram: &[u8],
    ) -> bool {
        let key = canonical(from);
        let prefix = prefix_of(key.ip());
        if self.prefix_answers.check(now, answer_prefix(key.ip())) == RateDecision::Limited
            || self.probe_answers.check(now) == RateDecision::Limited
        {
            return false;
        }
        let full = self.in_pool(Pool::Answered) >= self.config.answered_pending;
        if matches!(taken, Taken::Challenge(_)) && full && !self.can_evict(now, Pool::Answered) {
            self.count_drop(DropReason::Busy);
            return true;
        }
        if let Some(r) = self.records.get_mut(window, tag) {
            r.answered = true;
        }
        self.stats.answered += 1;
        let len = u64::try_from(datagram.len()).unwrap_or(u64::MAX);
        self.stats.received_bytes = self.stats.received_bytes.saturating_add(len);
        let gamespy1 = matches!(m, Verifier::Gamespy1(_));
        let next = match taken {
            Taken::Complete(mut answer) => {
                self.stats.verified += 1;
                answer.addr = Some(key);
                self.verdicts.push_back(Verdict::Verified {
                    addr: key,
                    game: None,
                    answer,
                    gamespy1,
                    local,
                });
                return true;
            }
            Taken::Challenge(next) => next,
        };
        if full {
            self.evict(Pool::Answered);
        }
        // The probe was paid for by the registration; the rest is this answer.
        let probe = u64::try_from(probe.len()).unwrap_or(u64::MAX);
        let mut p = Pending {
            machine: m,
            game: None,
            received: probe.saturating_add(len),
            sent: probe,
            withheld: 0,
            replies: 1,
            start_replies: 1,
            prefix,
            pool: Pool::Answered,
            started: now,
            local,
            peer: from,
        };
        let n = u64::try_from(next.len()).unwrap_or(u64::MAX);
        if p.sent.saturating_add(n) <= p.received && self.outbox.len() < OUTBOX {
            p.sent = p.sent.saturating_add(n);
            self.stats.sent_bytes = self.stats.sent_bytes.saturating_add(n);
            self.outbox.push_back((local, from, next));
        } else {
            p.withheld = p.withheld.saturating_add(1);
            self.stats.withheld += 1;
        }
        self.start(key, p);
        true
    }

    /// The next verification datagram to send now, with its destination (on the
    /// caller's only socket: see [`poll_transmit_on`](Self::poll_transmit_on)).
    pub fn poll_transmit(&mut self, now: Instant) -> Option<(SocketAddr, Vec<u8>)> {
        self.poll_transmit_on(now).map(|(_, to, d)| (to, d))
    }

    /// The next verification datagram to send now: the caller's socket to send it from
    /// (the one the registration arrived on), its destination and its bytes.
    pub fn poll_transmit_on(&mut self, now: Instant) -> Option<(usize, SocketAddr, Vec<u8>)> {
        if let Some(t) = self.outbox.pop_front() {
            return Some(t);
        }
        while let Some(addr) = self.ready.pop_front() {
            let Some(p) = self.pending.get_mut(&addr) else {
                continue;
            };
            let Some(d) = p.machine.poll_transmit(now) else {
                self.arm(addr);
                continue;
            };
            // The machine may have more to send (it sends one datagram per call).
            self.ready.push_front(addr);
            let len = u64::try_from(d.len()).unwrap_or(u64::MAX);
            if p.sent.saturating_add(len) > p.received {
                p.withheld = p.withheld.saturating_add(1);
                self.stats.withheld += 1;
                continue;
            }
            p.sent = p.sent.saturating_add(len);
            self.stats.sent_bytes = self.stats.sent_bytes.saturating_add(len);
            return Some((p.local, p.peer, d));
        }
        None
    }

    /// When [`handle_timeout`](Self::handle_timeout) is next due (possibly a little
    /// early: a deadline that has moved since is found out then).
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse((t, _))| *t)
    }

    fn arm(&mut self, addr: SocketAddr) {
        if let Some(t) = self
            .pending
            .get(&addr)
            .and_then(|p| p.machine.poll_timeout())
        {
            self.timers.push(Reverse((t, addr)));
        }
        if self.timers.len() > self.pending.len().saturating_mul(4).saturating_add(1024) {
            self.timers = self
                .pending
                .iter()
                .filter_map(|(a, p)| Some(Reverse((p.machine.poll_timeout()?, *a))))
                .collect();
        }
    }

    /// Advances the timers of verifications due by `now`: each at most once per call,
    /// so a machine whose deadline is still `now` afterwards cannot keep this looping.
    pub fn handle_timeout(&mut self, now: Instant) {
        let mut due = Vec::new();
        while let Some(Reverse((t, addr))) = self.timers.peek().copied() {
            if t > now {
                break;
            }
            self.timers.pop();
            due.push(addr);
        }
        due.sort_unstable();
        due.dedup();
        for addr in due {
            let is_due = self
                .pending
                .get(&addr)
                .and_then(|p| p.machine.poll_timeout())
                .is_some_and(|d| d <= now);
            if !is_due {
                // stale (finished, or its deadline moved): arm the real one, if any
                self.arm(addr);
                continue;
            }
            if let Some(p) = self.pending.get_mut(&addr) {
                p.machine.handle_timeout(now);
            }
            self.ready.push_back(addr);
            self.settle(addr);
            self.arm(addr);
        }
    }

    /// The next finished verification.
    pub fn poll_verdict(&mut self) -> Option<Verdict> {
        self.verdicts.pop_front()
    }

    fn settle(&mut self, addr: SocketAddr) {
        let Some(p) = self.pending.get_mut(&addr) else {
            return;
        };
        let Some(result) = p.machine.take_result() else {
            return;
        };
        let protocol = p.machine.protocol();
        let gamespy1 = matches!(p.machine, Verifier::Gamespy1(_));
        let Some(p) = self.remove(addr) else {
            return;
        };
        let verdict = match result {
            Ok(mut answer) => {
                self.stats.verified += 1;
                answer.addr = Some(addr);
                Verdict::Verified {
                    addr,
                    game: p.game,
                    answer: Box::new(answer),
                    gamespy1,
                    local: p.local,
                }
            }
            Err(error) => {
                self.stats.failed += 1;
                Verdict::Failed {
                    addr,
                    protocol,
                    error,
                    withheld: p.withheld,
                    replies: p.replies,
                    refused: p.machine.last_dropped(),
                }
            }
        };
        self.verdicts.push_back(verdict);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gamespy3::heartbeat::Heartbeat;
    use crate::ogp::uplink::encode_uplink;
    use crate::responder::{Responder, ResponderConfig, Transmits};
    use crate::Status;

    fn uplink() -> Vec<u8> {
        let mut d = Vec::new();
        encode_uplink(7, &mut d);
        d
    }

    fn heartbeat() -> Vec<u8> {
        Heartbeat {
            instance_key: 1,
            local_ips: vec!["10.0.0.2".into()],
            local_port: Some(29900),
            natneg: Some(false),
            state_changed: Some(StateChanged::Initial),
            game_name: Some("battlefield2".into()),
            keys: vec![("hostname".into(), "x".into())],
        }
        .to_bytes()
    }

    fn status() -> Status {
        Status {
            host_name: Some("Verified".into()),
            ..Status::default()
        }
    }

    /// Runs a registrar against a responder at `server` until it settles; the responder
    /// answers only datagrams sent to `server` (anything sent elsewhere is lost, as to a
    /// spoofed victim). Returns the verdict and the bytes sent to each address.
    fn run(reg: &mut Registrar, server: SocketAddr, t0: Instant) -> (Option<Verdict>, u64) {
        let mut config = ResponderConfig::default();
        config.quake3.enabled = true;
        let mut r = Responder::new(config, [3; 32], t0);
        let master: SocketAddr = "127.0.0.9:27900".parse().unwrap();
        let mut now = t0;
        let mut sent = 0;
        let mut out = Transmits::default();
        for _ in 0..50 {
            while let Some((to, d)) = reg.poll_transmit(now) {
                sent += d.len() as u64;
                if to == server {
                    r.handle(now, master, &d, &status(), &mut out);
                    let replies: Vec<Vec<u8>> = out.iter().map(<[u8]>::to_vec).collect();
                    out.clear();
                    for a in replies {
                        assert!(reg.handle_reply(now, server, &a));
                    }
                }
            }
            if let Some(v) = reg.poll_verdict() {
                return (Some(v), sent);
            }
            match reg.poll_timeout() {
                Some(t) => {
                    now = t.max(now);
                    reg.handle_timeout(now);
                }
                None => break,
            }
        }
        (reg.poll_verdict(), sent)
    }

    /// A Cube 2 ping answer to `ping` (the request echoed, then Sauerbraten's reply).
    fn cube2_answer(ping: &[u8]) -> Vec<u8> {
        let mut d = Vec::new();
        crate::cube2::PingReply {
            clients: 0,
            attrs: vec![260, 0, 0, 8, 0],
            map: b"complex".to_vec(),
            description: b"Sauer".to_vec(),
            ..crate::cube2::PingReply::default()
        }
        .encode(ping, &mut d);
        d
    }

    /// A `regserv` over TCP (its source proved by the handshake) is verified by the
    /// ping to the game port + 1 whose answer echoes our random id; an answer without
    /// it, from the right address, is not taken; a registration whose port never
    /// answers fails, having cost that port one 5-byte ping and its retries, within the
    /// line's 14 bytes.
    #[test]
    fn a_cube2_registration_is_verified_by_the_ping_echoing_our_id() {
        let t0 = Instant::now();
        let config = RegistrarConfig::default().allow_private(true);
        let r = Registration::Cube2 { port: 28785 };
        let peer: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        let query: SocketAddr = "127.0.0.1:28786".parse().unwrap();
        assert_eq!(r.query_addr(peer), query);
        assert_eq!(r.protocol(), Protocol::Cube2);

        let mut reg = Registrar::new(config.clone(), [5; 16], t0);
        let line = b"regserv 28785\n".len();
        assert_eq!(
            reg.register(t0, peer, &r, line, Known::default()),
            Admission::Verifying
        );
        let (to, ping) = reg.poll_transmit(t0).unwrap();
        assert_eq!((to, ping.len(), ping.first()), (query, 5, Some(&0x81)));
        assert!(reg.poll_transmit(t0).is_none(), "no extinfo");
        // a forged answer (another id) from the right address: not taken
        let mut forged = ping.clone();
        forged[1] ^= 0xff;
        reg.handle_reply(t0, query, &cube2_answer(&forged));
        assert!(reg.poll_verdict().is_none());
        reg.handle_reply(t0, query, &cube2_answer(&ping));
        match reg.poll_verdict() {
            Some(Verdict::Verified { addr, answer, .. }) => {
                assert_eq!(addr, query);
                assert_eq!(answer.protocol, Protocol::Cube2);
                assert_eq!(answer.status.host_name.as_deref(), Some("Sauer"));
            }
            other => panic!("{other:?}"),
        }

        // silence: it fails, and what went to the port stays within the line's bytes
        let mut reg = Registrar::new(config, [6; 16], t0);
        reg.register(t0, peer, &r, line, Known::default());
        let mut now = t0;
        let mut sent = 0;
        let verdict = loop {
            while let Some((to, d)) = reg.poll_transmit(now) {
                assert_eq!(to, query);
                sent += d.len();
            }
            if let Some(v) = reg.poll_verdict() {
                break v;
            }
            now = reg.poll_timeout().expect("a timer");
            reg.handle_timeout(now);
        };
        assert!(
            matches!(verdict, Verdict::Failed { replies: 0, .. }),
            "{verdict:?}"
        );
        assert!(sent >= 5 && sent <= line, "{sent} bytes sent");
    }

    #[test]
    fn datagrams_are_classified() {
        assert!(matches!(
            classify(&uplink()),
            Ok(Inbound::Registration(Registration::OgpUplink {
                game_id: 7
            }))
        ));
        match classify(&heartbeat()) {
            Ok(Inbound::Registration(r)) => {
                assert_eq!(r.protocol(), Protocol::Gamespy3);
                assert_eq!(r.game().as_deref(), Some("battlefield2"));
                assert!(r.wants_poll());
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            classify(b"1\xff0.0.0.0:0\x00\x00"),
            Ok(Inbound::List(_))
        ));
        assert!(classify(b"1\xff0.0.0.0:0").is_err());
        assert_eq!(classify(b"\xff\xff\xff\xffI"), Ok(Inbound::Other));
        match classify(b"\xff\xff\xff\xffheartbeat ETFlatline-1\n") {
            Ok(Inbound::Registration(r)) => {
                assert_eq!(r.protocol(), Protocol::Quake3);
                assert!(r.exiting() && r.wants_poll());
                assert_eq!(r.game(), None);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            classify(b"\xff\xff\xff\xffgetserversExt Xonotic 3 ipv6"),
            Ok(Inbound::DpList(ServersRequest {
                ext: true,
                protocol: 3,
                ..
            }))
        ));
        assert!(classify(b"\xff\xff\xff\xffgetservers").is_err());
        assert!(classify(b"\xff\xff\xff\xffheartbeat").is_err());
        // replies to our getinfo are not registrations
        assert_eq!(classify(&info_response(Some("x"))), Ok(Inbound::Other));
        assert_eq!(classify(b""), Ok(Inbound::Other));
    }

    #[test]
    fn an_uplink_is_verified_by_an_ogp_query_back_within_its_byte_budget() {
        let t0 = Instant::now();
        let mut reg = Registrar::new(RegistrarConfig::default().allow_private(true), [1; 16], t0);
        let server: SocketAddr = "127.0.0.2:22222".parse().unwrap();
        let d = uplink();
        assert_eq!(
            reg.register(
                t0,
                server,
                &Registration::OgpUplink { game_id: 7 },
                d.len(),
                Known::default()
            ),
            Admission::Verifying
        );
        let (v, _) = run(&mut reg, server, t0);
        match v {
            Some(Verdict::Verified {
                addr, game, answer, ..
            }) => {
                assert_eq!(addr, server);
                assert_eq!(game.as_deref(), Some("7"));
                assert_eq!(answer.status.host_name.as_deref(), Some("Verified"));
            }
            other => panic!("{other:?}"),
        }
        let s = reg.stats();
        assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
        assert_eq!(reg.pending(), 0);
    }

    #[test]
    fn a_heartbeat_is_verified_by_a_gamespy_query_back() {
        let t0 = Instant::now();
        let mut reg = Registrar::new(RegistrarConfig::default().allow_private(true), [1; 16], t0);
        let server: SocketAddr = "127.0.0.2:29900".parse().unwrap();
        let d = heartbeat();
        let Ok(Inbound::Registration(r)) = classify(&d) else {
            panic!()
        };
        assert_eq!(
            reg.register(t0, server, &r, d.len(), Known::default()),
            Admission::Verifying
        );
        let (v, _) = run(&mut reg, server, t0);
        assert!(matches!(v, Some(Verdict::Verified { .. })), "{v:?}");
        let s = reg.stats();
        assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
    }

    #[test]
    fn a_spoofed_uplink_costs_the_victim_one_small_probe_and_lists_nothing() {
        let t0 = Instant::now();
        let mut reg = Registrar::new(RegistrarConfig::default().allow_private(true), [1; 16], t0);
        let victim: SocketAddr = "127.0.0.3:22222".parse().unwrap();
        let nobody: SocketAddr = "127.0.0.2:1".parse().unwrap();
        let d = uplink();
        reg.register(
            t0,
            victim,
            &Registration::OgpUplink { game_id: 0 },
            d.len(),
            Known::default(),
        );
        // the responder sits elsewhere: nothing reaches the victim's port but our probe
        let (v, sent) = run(&mut reg, nobody, t0);
        match v {
            Some(Verdict::Failed { addr, withheld, .. }) => {
                assert_eq!(addr, victim);
                assert!(withheld >= 1, "retries are withheld");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(sent, 11, "one probe, no retry: the victim sent us 13 bytes");
    }

    #[test]
    fn garbage_and_lies_from_the_registering_address_list_nothing() {
        let t0 = Instant::now();
        let mut reg = Registrar::new(RegistrarConfig::default().allow_private(true), [1; 16], t0);
        let liar: SocketAddr = "127.0.0.4:22222".parse().unwrap();
        reg.register(
            t0,
            liar,
            &Registration::OgpUplink { game_id: 0 },
            13,
            Known::default(),
        );
        let mut now = t0;
        let (to, _) = reg.poll_transmit(now).unwrap();
        assert_eq!(to, liar);
        // garbage, a challenge error with a challenge, then an answer for another RequestID
        // and one without any: none of them is our answer
        let mut lies: Vec<Vec<u8>> =
            vec![vec![0xff; 40], b"\xff\xff\xff\xffOGP\x00".to_vec(), vec![]];
        let mut other = Vec::new();
        let mut h = crate::ogp::Header::answer(crate::ogp::PacketType::DEFAULT_QUERY);
        h.request_id = Some(12345);
        crate::ogp::encode_answer(
            &h,
            &status(),
            &DefaultQuery::everything(),
            &Default::default(),
            &mut other,
        );
        lies.push(other);
        for _ in 0..200 {
            for l in &lies {
                assert!(reg.handle_reply(now, liar, l) || reg.pending() == 0);
            }
            while reg.poll_transmit(now).is_some() {}
            if let Some(t) = reg.poll_timeout() {
                now = t;
                reg.handle_timeout(now);
            }
            if reg.pending() == 0 {
                break;
            }
        }
        assert!(matches!(reg.poll_verdict(), Some(Verdict::Failed { .. })));
        assert_eq!(reg.stats().verified, 0);
        let s = reg.stats();
        assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
    }

    fn info_response(challenge: Option<&str>) -> Vec<u8> {
        let mut d = b"\xff\xff\xff\xffinfoResponse\n\\gamename\\Quake3Arena\\protocol\\71\\clients\\2\\sv_maxclients\\8\\hostname\\OA".to_vec();
        if let Some(c) = challenge {
            d.extend_from_slice(b"\\challenge\\");
            d.extend_from_slice(c.as_bytes());
        }
        d
    }

    /// Registers `heartbeat` from `server`, answers each `getinfo` with `answer(its
    /// challenge)` until the verification ends; returns the verdict and the bytes sent.
    fn run_quake3(
        heartbeat: &[u8],
        answer: impl Fn(&str) -> Option<Vec<u8>>,
    ) -> (Option<Verdict>, u64, RegistrarStats) {
        let t0 = Instant::now();
        let mut reg = Registrar::new(RegistrarConfig::default().allow_private(true), [1; 16], t0);
        let server: SocketAddr = "127.0.0.2:27960".parse().unwrap();
        let Ok(Inbound::Registration(r)) = classify(heartbeat) else {
            panic!("{heartbeat:?}")
        };
        assert_eq!(r.protocol(), Protocol::Quake3);
        assert!(r.wants_poll());
        assert_eq!(
            reg.register(t0, server, &r, heartbeat.len(), Known::default()),
            Admission::Verifying
        );
        let mut now = t0;
        let mut sent = 0;
        for _ in 0..50 {
            while let Some((to, d)) = reg.poll_transmit(now) {
                assert_eq!(to, server);
                sent += d.len() as u64;
                let q = crate::quake3::decode_request(&d).unwrap();
                assert_eq!(q.command, crate::quake3::Command::GetInfo, "getinfo only");
                let c = q.challenge.expect("a challenge");
                if let Some(a) = answer(&c) {
                    reg.handle_reply(now, server, &a);
                }
            }
            if let Some(v) = reg.poll_verdict() {
                return (Some(v), sent, reg.stats());
            }
            match reg.poll_timeout() {
                Some(t) => {
                    now = t.max(now);
                    reg.handle_timeout(now);
                }
                None => break,
            }
        }
        (reg.poll_verdict(), sent, reg.stats())
    }

    #[test]
    fn a_quake3_heartbeat_is_verified_by_getinfo_with_its_challenge() {
        let hb = b"\xff\xff\xff\xffheartbeat QuakeArena-1\n";
        let (v, sent, s) = run_quake3(hb, |c| Some(info_response(Some(c))));
        match v {
            Some(Verdict::Verified { answer, game, .. }) => {
                assert_eq!(game, None);
                let l = answer
                    .details
                    .as_ref()
                    .and_then(dpmaster::Listing::of_details)
                    .unwrap();
                assert_eq!(
                    (l.game.as_deref(), l.protocol),
                    (Some("Quake3Arena"), Some(71))
                );
                assert_eq!(answer.status.host_name.as_deref(), Some("OA"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(sent, 20, "one getinfo of 20 bytes");
        assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
    }

    #[test]
    fn a_wrong_or_missing_challenge_is_not_verified() {
        let hb = b"\xff\xff\xff\xffheartbeat DarkPlaces\n";
        for (lie, why) in [
            (
                (|_: &str| Some(info_response(None))) as fn(&str) -> Option<Vec<u8>>,
                "no challenge echoed",
            ),
            (
                |_: &str| Some(info_response(Some("12345678"))),
                "wrong challenge (not the one we sent)",
            ),
            (
                |c: &str| Some(info_response(Some(&c[1..]))),
                "wrong challenge (not the one we sent)",
            ),
        ] {
            let (v, _, s) = run_quake3(hb, lie);
            // the verdict says why the answers were refused: not "no answer" alone
            assert!(
                matches!(v, Some(Verdict::Failed { refused: Some(r), replies: 3.., .. }) if r == why),
                "{v:?}"
            );
            assert_eq!(s.verified, 0);
            assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
        }
    }

    #[test]
    fn a_spoofed_quake3_heartbeat_costs_the_victim_one_getinfo_no_larger() {
        // the victim never answers: one getinfo, retries withheld
        for hb in [
            &b"\xff\xff\xff\xffheartbeat DarkPlaces\n"[..],
            b"\xff\xff\xff\xffheartbeat QuakeArena-1\n",
            // Call of Duty 4's, the shortest an engine sends: 20 bytes, as our getinfo
            b"\xff\xff\xff\xffheartbeat COD-4\n",
        ] {
            let (v, sent, s) = run_quake3(hb, |_| None);
            assert!(
                matches!(v, Some(Verdict::Failed { withheld, .. }) if withheld >= 1),
                "{v:?}"
            );
            assert!(
                sent <= hb.len() as u64,
                "{sent} bytes for a {}-byte heartbeat",
                hb.len()
            );
            assert_eq!(sent, 20);
            assert_eq!(s.verified, 0);
        }
        // a heartbeat shorter than a getinfo gets nothing at all
        let (_, sent, _) = run_quake3(b"\xff\xff\xff\xffheartbeat x", |_| None);
        assert_eq!(sent, 0);
    }

    /// A Teeworlds 0.7 heartbeat (its token checked by the caller) is verified by the
    /// 0.7 query: a 520-byte token handshake, then `gie3` to the server's token, whose
    /// `inf3` must echo our integer token. Its bytes and the token request's stand for
    /// the handshake ([`teemaster7::HEARTBEAT_CREDIT`]); without that credit the
    /// handshake is withheld (more than the heartbeat's 19 bytes).
    #[test]
    fn a_teeworlds07_heartbeat_is_verified_by_the_07_query() {
        use crate::teeworlds::wire;
        let mut hb = Vec::new();
        teemaster7::encode_heartbeat(teemaster::Heartbeat { port: 8303 }, 1, 2, &mut hb);
        let Ok(Inbound::Tw7(teemaster7::Message::Heartbeat { heartbeat, .. })) = classify(&hb)
        else {
            panic!("{hb:?}")
        };
        let r = Registration::Teeworlds7(heartbeat);
        let from: SocketAddr = "127.0.0.2:8303".parse().unwrap();
        assert_eq!(
            (r.protocol(), r.query_addr(from)),
            (Protocol::Teeworlds7, from)
        );
        for (credit, honest) in [
            (teemaster7::HEARTBEAT_CREDIT, true),
            (0, true),
            (teemaster7::HEARTBEAT_CREDIT, false),
        ] {
            let t0 = Instant::now();
            let mut reg =
                Registrar::new(RegistrarConfig::default().allow_private(true), [1; 16], t0);
            let len = hb.len() + credit;
            assert_eq!(
                reg.register_on(t0, 3, from, &r, len, Known::default()),
                Admission::Verifying
            );
            let mut now = t0;
            let mut sent = 0u64;
            let mut verdict = None;
            for _ in 0..50 {
                while let Some((local, to, d)) = reg.poll_transmit_on(now) {
                    assert_eq!((local, to), (3, from));
                    sent += d.len() as u64;
                    if wire::is_token7(&d) {
                        assert_eq!(d.len(), wire::TOKEN_REQUEST_LEN);
                        let ours = u32::from_be_bytes(d[8..12].try_into().unwrap());
                        let mut a = Vec::new();
                        wire::encode::token_reply(&mut a, ours, 0x5e5e_5e5e);
                        reg.handle_reply_on(now, 3, from, &a);
                    } else {
                        assert_eq!(&d[1..5], &[0x5e; 4], "gie3 to the server's token");
                        let ours = u32::from_be_bytes(d[5..9].try_into().unwrap());
                        let mut rd = crate::reader::Reader::new(&d[17..]);
                        let token = wire::varint(&mut rd, "token").unwrap();
                        let info = crate::teeworlds::Info {
                            token: i64::from(token) + i64::from(!honest),
                            name: "Seven".into(),
                            ..crate::teeworlds::Info::default()
                        };
                        let mut a = Vec::new();
                        wire::encode::info7(&mut a, ours, 0x5e5e_5e5e, &info);
                        reg.handle_reply_on(now, 3, from, &a);
                    }
                }
                if let Some(v) = reg.poll_verdict() {
                    verdict = Some(v);
                    break;
                }
                now = reg.poll_timeout().unwrap_or(now);
                reg.handle_timeout(now);
            }
            let s = reg.stats();
            assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
            match (credit > 0, honest, verdict) {
                (true, true, Some(Verdict::Verified { answer, local, .. })) => {
                    assert_eq!(answer.protocol, Protocol::Teeworlds7);
                    assert_eq!(answer.status.host_name.as_deref(), Some("Seven"));
                    assert_eq!(local, 3);
                    assert!(matches!(
                        answer.details,
                        Some(Details::Teeworlds7(ref d)) if d.server_token == 0x5e5e_5e5e
                    ));
                }
                (false, _, Some(Verdict::Failed { withheld, .. })) => {
                    assert!(withheld >= 1);
                    assert_eq!(sent, 0, "nothing larger than the heartbeat");
                }
                (true, false, Some(Verdict::Failed { .. })) => {}
                (c, h, v) => panic!("credit {c}, honest {h}: {v:?}"),
            }
        }
    }

    /// Registers a `bea2` naming port 8303 from another port of 127.0.0.2, answers each
    /// `gie3` (which must go to port 8303) with `answer(its 24-bit token)` until the
    /// verification ends; returns the verdict and the bytes sent.
    fn run_teeworlds(
        answer: impl Fn(u32) -> Option<Vec<u8>>,
    ) -> (Option<Verdict>, u64, RegistrarStats) {
        let t0 = Instant::now();
        let mut reg = Registrar::new(RegistrarConfig::default().allow_private(true), [1; 16], t0);
        let from: SocketAddr = "127.0.0.2:40000".parse().unwrap();
        let server: SocketAddr = "127.0.0.2:8303".parse().unwrap();
        let mut hb = Vec::new();
        teemaster::Heartbeat { port: 8303 }.encode(&mut hb);
        let Ok(Inbound::Registration(r)) = classify(&hb) else {
            panic!("{hb:?}")
        };
        assert_eq!(
            (r.protocol(), r.query_addr(from)),
            (Protocol::Teeworlds, server)
        );
        assert_eq!(
            reg.register(t0, from, &r, hb.len(), Known::default()),
            Admission::Verifying
        );
        let mut now = t0;
        let mut sent = 0;
        for _ in 0..50 {
            while let Some((to, d)) = reg.poll_transmit(now) {
                assert_eq!(to, server);
                sent += d.len() as u64;
                assert!(crate::teeworlds::wire::is_request6(&d), "gie3 only: {d:?}");
                let token = u32::from_be_bytes([0, d[2], d[3], d[d.len() - 1]]);
                if let Some(a) = answer(token) {
                    reg.handle_reply(now, server, &a);
                }
            }
            if let Some(v) = reg.poll_verdict() {
                return (Some(v), sent, reg.stats());
            }
            match reg.poll_timeout() {
                Some(t) => {
                    now = t.max(now);
                    reg.handle_timeout(now);
                }
                None => break,
            }
        }
        (reg.poll_verdict(), sent, reg.stats())
    }

    fn inf3(token: i64) -> Vec<u8> {
        let mut d = Vec::new();
        let info = crate::teeworlds::Info {
            token,
            version: "0.6.4".into(),
            name: "tw".into(),
            map: "dm1".into(),
            max_players: 8,
            max_clients: 8,
            ..crate::teeworlds::Info::default()
        };
        crate::teeworlds::wire::encode::info6(&mut d, crate::teeworlds::Kind::Info6, &info);
        d
    }

    #[test]
    fn a_teeworlds_heartbeat_is_verified_by_gie3_with_its_token() {
        let (v, sent, s) = run_teeworlds(|t| Some(inf3(i64::from(t & 0xff))));
        match v {
            Some(Verdict::Verified { answer, addr, .. }) => {
                assert_eq!(addr.port(), 8303);
                assert_eq!(answer.protocol, Protocol::Teeworlds);
                assert_eq!(answer.status.host_name.as_deref(), Some("tw"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(sent, 15, "one gie3 of 15 bytes for a 16-byte bea2");
        assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
        // the wrong token is no proof
        let (v, _, s) = run_teeworlds(|t| Some(inf3(i64::from((t + 1) & 0xff))));
        assert!(
            matches!(v, Some(Verdict::Failed { refused: Some(r), .. }) if r.contains("token")),
            "{v:?}"
        );
        assert_eq!(s.verified, 0);
        // a spoofed heartbeat: the victim never answers, one gie3 no larger, retries
        // withheld
        let (v, sent, s) = run_teeworlds(|_| None);
        assert!(
            matches!(v, Some(Verdict::Failed { withheld, .. }) if withheld >= 1),
            "{v:?}"
        );
        assert_eq!(sent, 15);
        assert_eq!(s.verified, 0);
    }

    /// 20,000 forged `bea2` from 5,000 addresses in 500 prefixes within 2 s of
    /// simulated time: never more pending than the cap, every `gie3` within what its
    /// address sent, nothing verified.
    #[test]
    fn a_flood_of_forged_teeworlds_heartbeats_holds_the_caps() {
        let t0 = Instant::now();
        let mut reg = Registrar::new(RegistrarConfig::default(), [9; 16], t0);
        let mut hb = Vec::new();
        teemaster::Heartbeat { port: 8303 }.encode(&mut hb);
        let Ok(Inbound::Registration(r)) = classify(&hb) else {
            panic!()
        };
        let mut sent: HashMap<IpAddr, u64> = HashMap::new();
        let mut got: HashMap<IpAddr, u64> = HashMap::new();
        let mut max_pending = 0;
        for i in 0..20_000u32 {
            let now = t0 + Duration::from_micros(u64::from(i) * 100);
            let n = i % 5000;
            let ip = IpAddr::from([203, (n / 2500) as u8, (n % 500 / 10) as u8, (n % 10) as u8]);
            let from = SocketAddr::new(ip, 40_000);
            *got.entry(ip).or_default() += hb.len() as u64;
            let _ = reg.register(now, from, &r, hb.len(), Known::default());
            while let Some((to, d)) = reg.poll_transmit(now) {
                assert_eq!(to.port(), 8303);
                assert!(d.len() <= hb.len());
                *sent.entry(to.ip()).or_default() += d.len() as u64;
            }
            reg.handle_timeout(now);
            max_pending = max_pending.max(reg.pending());
        }
        assert!(
            max_pending <= RegistrarConfig::default().max_pending,
            "{max_pending}"
        );
        for (ip, bytes) in &sent {
            assert!(
                bytes <= &got[ip],
                "{ip}: {bytes} sent for {} received",
                got[ip]
            );
        }
        assert_eq!(reg.stats().verified, 0);
        assert!(!sent.is_empty());
    }

    #[test]
    fn teeworlds_requests_and_garbage_are_told_apart() {
        let qstat = b"\x20\x00\x00\x00\x00\x00\xff\xff\xff\xffreq2";
        assert_eq!(
            classify(qstat),
            Ok(Inbound::TwList(teemaster::Request::List))
        );
        let mut d = Vec::new();
        teemaster::Request::Count.encode(&mut d);
        assert_eq!(classify(&d), Ok(Inbound::TwList(teemaster::Request::Count)));
        // a heartbeat without its port, or naming port 0: an error, nothing verified
        assert!(classify(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffbea2").is_err());
        assert!(classify(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffbea2\0\0").is_err());
        // 0.5's and other words, a gie3 (a server's query, not ours to answer): other
        for other in [
            &b"\x20\x00\x00\x00\x00\x00\xff\xff\xff\xffreqt"[..],
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffgie3\x01",
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfffw!!",
        ] {
            assert_eq!(classify(other), Ok(Inbound::Other), "{other:?}");
        }
    }

    #[test]
    fn caps_and_private_addresses() {
        let t0 = Instant::now();
        let r = Registration::OgpUplink { game_id: 1 };
        let mut reg = Registrar::new(RegistrarConfig::default(), [1; 16], t0);
        let lan: SocketAddr = "192.168.1.2:22222".parse().unwrap();
        assert_eq!(
            reg.register(t0, lan, &r, 13, Known::default()),
            Admission::Dropped(DropReason::Private)
        );
        let public: SocketAddr = "203.0.114.2:22222".parse().unwrap();
        let full = Known {
            listed: false,
            servers_on_ip: 64,
        };
        assert_eq!(
            reg.register(t0, public, &r, 13, full),
            Admission::Dropped(DropReason::TooManyOnIp)
        );
        let listed = Known {
            listed: true,
            servers_on_ip: 64,
        };
        assert_eq!(reg.register(t0, public, &r, 13, listed), Admission::Listed);
        // a flood from one source runs out of its budget
        let mut limited = 0;
        for port in 0..1000u16 {
            let a = SocketAddr::new(public.ip(), port);
            if reg.register(t0, a, &r, 13, Known::default())
                == Admission::Dropped(DropReason::RateLimited)
            {
                limited += 1;
            }
        }
        assert!(limited >= 800, "{limited}");
        // pending verifications are capped
        let cfg = RegistrarConfig {
            max_pending: 10,
            reserve_pending: 0,
            ..RegistrarConfig::default()
        };
        let mut reg = Registrar::new(cfg, [1; 16], t0);
        let mut busy = 0;
        for i in 0..100u8 {
            let a = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(203, 0, i, 1)), 1);
            // no place: its source is probed (an 11-byte probe for a 13-byte uplink)
            if reg.register(t0, a, &r, 13, Known::default()) == Admission::Probed(DropReason::Busy)
            {
                busy += 1;
            }
        }
        assert_eq!((busy, reg.pending()), (90, 10));
        assert_eq!(reg.stats().probed, 90);
        // nothing is probed with more bytes than its registration
        let tiny = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(203, 0, 200, 1)), 1);
        assert_eq!(
            reg.register(t0, tiny, &r, 10, Known::default()),
            Admission::Dropped(DropReason::Busy)
        );
    }

    /// Floods a registrar with forged uplinks, `per_ms` a millisecond for `secs`
    /// simulated seconds, from `sources` addresses (`source(i)`), while a real server
    /// registers once at `late`; returns how long after its registration it was verified
    /// (None: never), and the registrar.
    fn flood_with_late_server(
        per_ms: usize,
        secs: u64,
        sources: u32,
        source: impl Fn(u32) -> SocketAddr,
        late: Duration,
    ) -> (Option<Duration>, Registrar) {
        let t0 = Instant::now();
        let mut reg = Registrar::new(RegistrarConfig::default(), [5; 16], t0);
        let mut responder = Responder::new(ResponderConfig::default(), [3; 32], t0);
        let master: SocketAddr = "192.0.2.1:27900".parse().unwrap();
        let server: SocketAddr = "93.184.216.34:27015".parse().unwrap();
        let d = uplink();
        let r = Registration::OgpUplink { game_id: 7 };
        let mut out = Transmits::default();
        let mut next = 0u32;
        let mut registered_at = None;
        for ms in 0..secs * 1000 {
            let now = t0 + Duration::from_millis(ms);
            for _ in 0..per_ms {
                reg.register(now, source(next % sources), &r, d.len(), Known::default());
                next = next.wrapping_add(1);
            }
            if registered_at.is_none() && now >= t0 + late {
                reg.register(now, server, &r, d.len(), Known::default());
                registered_at = Some(now);
            }
            if reg.poll_timeout().is_some_and(|t| t <= now) {
                reg.handle_timeout(now);
            }
            while let Some((to, q)) = reg.poll_transmit(now) {
                if to != server {
                    continue; // a forged source: nobody answers
                }
                responder.handle(now, master, &q, &status(), &mut out);
                let replies: Vec<Vec<u8>> = out.iter().map(<[u8]>::to_vec).collect();
                out.clear();
                for a in replies {
                    reg.handle_reply(now, server, &a);
                }
            }
            while let Some(v) = reg.poll_verdict() {
                if let (Verdict::Verified { addr, .. }, Some(at)) = (&v, registered_at) {
                    if *addr == server {
                        return (Some(now - at), reg);
                    }
                }
            }
        }
        (None, reg)
    }

    /// A spoofed source in a /24 of its own: 11.x.y.1.
    fn spread(i: u32) -> SocketAddr {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::from(0x0b00_0001 | (i << 8))), 27015)
    }

    #[test]
    fn a_real_server_is_verified_at_once_during_a_flood_from_ten_thousand_prefixes() {
        // 9,900 forged uplinks a second (about 129 KB/s) from 10,000 addresses, each in
        // its own /24, for 20 s; a real server registers once, 10 s in
        let (took, reg) = flood_with_late_server(10, 20, 10_000, spread, Duration::from_secs(10));
        let s = reg.stats();
        assert!(s.dropped[3] > 50_000, "the flood saturates: {s:?}");
        let took = took.unwrap_or_else(|| panic!("never verified: {s:?}"));
        eprintln!("verified {took:?} after its uplink; {s:?}");
        assert!(took < Duration::from_secs(2), "{took:?}");
        assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
    }

    #[test]
    fn a_real_server_is_verified_two_seconds_into_a_flood_from_new_prefixes() {
        // the flood's first pass over its 10,000 prefixes takes the reserve (each is new
        // then); its unanswered verifications make room after 1 s
        let (took, reg) = flood_with_late_server(10, 6, 10_000, spread, Duration::from_secs(2));
        let s = reg.stats();
        let took = took.unwrap_or_else(|| panic!("never verified: {s:?}"));
        eprintln!("verified {took:?} after its uplink; {s:?}");
        assert!(took < Duration::from_secs(2), "{took:?}");
        assert!(s.evicted > 0, "{s:?}");
        assert!(reg.pending() <= reg.config().max_pending);
        assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
    }

    #[test]
    fn a_real_server_is_verified_at_once_during_a_flood_from_one_prefix() {
        // the same rate from 10,000 ports of 254 addresses of one /24
        let one = |i: u32| {
            let host = (i % 254 + 1) as u8;
            SocketAddr::new(
                IpAddr::V4(Ipv4Addr::new(11, 1, 1, host)),
                1024 + (i / 254) as u16,
            )
        };
        let (took, reg) = flood_with_late_server(10, 12, 10_000, one, Duration::from_secs(6));
        let s = reg.stats();
        assert!(
            s.dropped[4] > 10_000,
            "the prefix is held to its share: {s:?}"
        );
        assert!(reg.pending() <= 256 + 1, "{}", reg.pending());
        let took = took.unwrap_or_else(|| panic!("never verified: {s:?}"));
        eprintln!("verified {took:?} after its uplink; {s:?}");
        assert!(took < Duration::from_secs(2), "{took:?}");
    }

    /// Issue 36, item 4: 5,000 forged uplinks a second from 10,000 sources (each in a
    /// /24 of its own) or from 60,000 fresh prefixes, with the default capacities (1,000
    /// starts a second, 250 more from the reserve): a real server whose one uplink comes
    /// at any moment of the flood is verified at once. Before, it was dropped as busy
    /// whenever the flood had taken the second's starts (in this simulation, always:
    /// the flood's registrations of each millisecond come first).
    #[test]
    fn a_real_server_is_verified_at_any_moment_of_a_flood_of_five_thousand_a_second() {
        for sources in [10_000, 60_000] {
            for late_ms in [0, 700, 2_500, 6_000] {
                let late = Duration::from_millis(late_ms);
                let (took, reg) = flood_with_late_server(5, 8, sources, spread, late);
                let s = reg.stats();
                let took = took.unwrap_or_else(|| {
                    panic!("{sources} sources, {late:?}: never verified: {s:?}")
                });
                eprintln!("{sources} sources, uplink {late:?} in: verified {took:?} after; {s:?}");
                assert!(took < Duration::from_millis(100), "{took:?}");
                assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
                assert!(reg.pending() <= reg.config().max_pending + 256);
                if late_ms >= 2_500 {
                    assert!(s.probed > 1_000, "the flood saturates: {s:?}");
                }
            }
        }
    }

    /// A registration that finds the pool full is probed, and the server's answer to the
    /// probe verifies it, in each registering protocol: Quake III's `infoResponse` at
    /// once, OGP and GameSpy after the challenged query that follows the challenge.
    #[test]
    fn a_probed_server_is_verified_by_its_answer_in_every_protocol() {
        let q3 = b"\xff\xff\xff\xffheartbeat QuakeArena-1\n".to_vec();
        for (d, protocol) in [
            (uplink(), Protocol::Ogp),
            (heartbeat(), Protocol::Gamespy3),
            (q3, Protocol::Quake3),
        ] {
            let t0 = Instant::now();
            let cfg = RegistrarConfig {
                max_pending: 1,
                ..RegistrarConfig::default().allow_private(true)
            };
            let mut reg = Registrar::new(cfg, [6; 16], t0);
            let Ok(Inbound::Registration(r)) = classify(&d) else {
                panic!("{d:?}")
            };
            let forged: SocketAddr = "127.0.5.1:1".parse().unwrap();
            let server: SocketAddr = "127.0.6.1:27960".parse().unwrap();
            assert_eq!(
                reg.register(t0, forged, &r, d.len(), Known::default()),
                Admission::Verifying
            );
            assert_eq!(
                reg.register(t0, server, &r, d.len(), Known::default()),
                Admission::Probed(DropReason::Busy),
                "{protocol}"
            );
            let (v, _) = run(&mut reg, server, t0);
            match v {
                Some(Verdict::Verified { addr, answer, .. }) => {
                    assert_eq!((addr, answer.protocol), (server, protocol));
                }
                other => panic!("{protocol}: {other:?}"),
            }
            let s = reg.stats();
            assert_eq!((s.probed, s.answered, s.verified), (1, 1, 1), "{protocol}");
            assert!(s.sent_bytes <= s.received_bytes, "{protocol}: {s:?}");
        }
    }

    /// A Teeworlds 0.7 server probed (no place for its verification): the probe is the
    /// 520-byte token request, within the heartbeat's credit. Its token reply (12 bytes)
    /// would not pay for the `gie3` (18): it starts nothing, and the server is verified
    /// at one of its next heartbeats (every 15 s), when there is a place.
    #[test]
    fn a_probed_teeworlds07_server_waits_for_its_next_heartbeat() {
        use crate::teeworlds::wire;
        let t0 = Instant::now();
        let cfg = RegistrarConfig {
            max_pending: 1,
            ..RegistrarConfig::default().allow_private(true)
        };
        let mut reg = Registrar::new(cfg, [6; 16], t0);
        let r = Registration::Teeworlds7(teemaster::Heartbeat { port: 8303 });
        let len = 19 + teemaster7::HEARTBEAT_CREDIT;
        let forged: SocketAddr = "127.0.5.1:8303".parse().unwrap();
        let server: SocketAddr = "127.0.6.1:8303".parse().unwrap();
        assert_eq!(
            reg.register(t0, forged, &r, len, Known::default()),
            Admission::Verifying
        );
        while reg.poll_transmit(t0).is_some() {}
        assert_eq!(
            reg.register(t0, server, &r, len, Known::default()),
            Admission::Probed(DropReason::Busy)
        );
        let (to, probe) = reg.poll_transmit(t0).expect("a probe");
        assert_eq!((to, probe.len()), (server, wire::TOKEN_REQUEST_LEN));
        let ours = u32::from_be_bytes(probe[8..12].try_into().unwrap());
        let mut a = Vec::new();
        wire::encode::token_reply(&mut a, ours, 0x7777_7777);
        assert!(!reg.handle_reply(t0, server, &a));
        assert!(reg.poll_transmit(t0).is_none());
        assert!(reg.poll_verdict().is_none());
        let s = reg.stats();
        assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
    }

    /// A registrar whose two places (`max_pending` 2, no reserve) two forged uplinks
    /// from 93.184.100.0/24 took at `t0`, so that a registration from elsewhere within
    /// the next second (before they can be evicted) is probed; `tweak` changes the
    /// settings first.
    fn full_registrar(
        secret: [u8; 16],
        t0: Instant,
        tweak: impl FnOnce(&mut RegistrarConfig),
    ) -> Registrar {
        let mut cfg = RegistrarConfig {
            max_pending: 2,
            reserve_pending: 0,
            ..RegistrarConfig::default()
        };
        tweak(&mut cfg);
        let mut reg = Registrar::new(cfg, secret, t0);
        let r = Registration::OgpUplink { game_id: 7 };
        for i in 1..=2u8 {
            let a = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(93, 184, 100, i)), 1);
            assert_eq!(
                reg.register(t0, a, &r, 13, Known::default()),
                Admission::Verifying
            );
        }
        while reg.poll_transmit(t0).is_some() {}
        reg
    }

    /// Registers `d` from `from` at `now` on a full registrar: the probe it sent back.
    fn probed(reg: &mut Registrar, now: Instant, from: SocketAddr, d: &[u8]) -> Vec<u8> {
        let Ok(Inbound::Registration(r)) = classify(d) else {
            panic!("{d:?}")
        };
        let a = reg.register(now, from, &r, d.len(), Known::default());
        assert!(matches!(a, Admission::Probed(_)), "{from}: {a:?}");
        let (to, probe) = reg.poll_transmit(now).expect("a probe");
        assert_eq!(to, from);
        probe
    }

    /// What a server (this crate's responder, Quake III on) answers to `probe`.
    fn answer_of(probe: &[u8], now: Instant) -> Vec<u8> {
        let mut config = ResponderConfig::default();
        config.quake3.enabled = true;
        let mut responder = Responder::new(config, [3; 32], now);
        let master: SocketAddr = "192.0.2.1:27900".parse().unwrap();
        let mut out = Transmits::default();
        responder.handle(now, master, probe, &status(), &mut out);
        let answer = out.iter().next().expect("an answer").to_vec();
        answer
    }

    const Q3_HEARTBEAT: &[u8] = b"\xff\xff\xff\xffheartbeat QuakeArena-1\n";

    /// A [`full_registrar`] that probed a Quake III server, 93.184.216.40:27960, at
    /// `sent`: the registrar, the server and its answer to the probe.
    fn probed_quake3_server(
        secret: [u8; 16],
        t0: Instant,
        sent: Instant,
        tweak: impl FnOnce(&mut RegistrarConfig),
    ) -> (Registrar, SocketAddr, Vec<u8>) {
        let mut reg = full_registrar(secret, t0, tweak);
        let server: SocketAddr = "93.184.216.40:27960".parse().unwrap();
        let answer = answer_of(&probed(&mut reg, sent, server, Q3_HEARTBEAT), sent);
        (reg, server, answer)
    }

    /// The verdicts waiting: (verified, failed).
    fn verdicts(reg: &mut Registrar) -> (usize, usize) {
        let mut n = (0, 0);
        while let Some(v) = reg.poll_verdict() {
            match v {
                Verdict::Verified { .. } => n.0 += 1,
                Verdict::Failed { .. } => n.1 += 1,
            }
        }
        n
    }

    /// Answers to probes prove nothing by themselves: garbage, replies of another
    /// protocol, stale or made-up Quake III answers and a real server's OGP challenge
    /// (the bare OGP probe carries no id of ours), from an address never probed, start
    /// nothing and cost no query.
    #[test]
    fn made_up_answers_to_probes_start_nothing() {
        let t0 = Instant::now();
        let mut reg = full_registrar([8; 16], t0, |_| {});
        let never: SocketAddr = "93.184.216.40:27960".parse().unwrap();
        let elsewhere: SocketAddr = "93.184.2.1:27015".parse().unwrap();
        let challenge = answer_of(&probed(&mut reg, t0, elsewhere, &uplink()), t0);
        for d in [
            &b"\xff\xff\xff\xffinfoResponse\n\\challenge\\0000abcd\\gamename\\Q"[..],
            &info_response(Some("12345678")),
            b"junk",
            b"",
            &challenge,
        ] {
            assert!(!reg.handle_reply(t0, never, d), "{d:?}");
        }
        assert!(reg.poll_transmit(t0).is_none());
        assert_eq!((reg.stats().answered, reg.pending()), (0, 2));
    }

    /// Issue 36 (b): attacks on the probes. One victim spoofed 1,000 times with the pool
    /// full gets at most one 11-byte probe per 13-byte uplink its per-source budget lets
    /// in; a real OGP challenge answer forged from 10,000 spoofed sources (each in a /24
    /// of its own) within 3 s starts nothing and makes us send them nothing (before:
    /// each started a verification in the 256 answered places, and its challenged query
    /// went to the address of the attacker's choosing, 1:1); forged from the victim,
    /// which was probed, it starts one verification, whose query stays within what the
    /// victim's address sent.
    #[test]
    fn probes_keep_the_victim_bounds_and_forged_answers_start_nothing() {
        let t0 = Instant::now();
        let mut reg = full_registrar([2; 16], t0, |_| {});
        let r = Registration::OgpUplink { game_id: 7 };
        let victim: SocketAddr = "93.184.216.34:27015".parse().unwrap();
        let (mut probes, mut bytes) = (0u64, 0u64);
        let mut probe = Vec::new();
        for _ in 0..1000 {
            reg.register(t0, victim, &r, 13, Known::default());
            while let Some((to, d)) = reg.poll_transmit(t0) {
                assert_eq!(to, victim);
                probes += 1;
                bytes += d.len() as u64;
                probe = d;
            }
        }
        assert!(
            probes <= 128,
            "{probes} datagrams for one source's burst of 128"
        );
        let challenge = answer_of(&probe, t0);
        let mut now = t0;
        let mut elsewhere = 0u64;
        for i in 0..10_000u32 {
            if i % 1000 == 0 {
                now += Duration::from_millis(300);
                reg.handle_timeout(now);
            }
            reg.handle_reply(now, spread(i), &challenge);
            while let Some((to, _)) = reg.poll_transmit(now) {
                assert_ne!(to, victim);
                elsewhere += 1;
            }
            assert!(reg.pending() <= 2, "{}", reg.pending());
        }
        assert_eq!(elsewhere, 0, "queries sent to forged sources");
        assert_eq!(reg.stats().answered, 0);
        // forged from the victim itself: one verification, its query no larger
        for _ in 0..100 {
            reg.handle_reply(now, victim, &challenge);
            while let Some((to, d)) = reg.poll_transmit(now) {
                assert_eq!(to, victim);
                bytes += d.len() as u64;
            }
        }
        assert_eq!(reg.stats().answered, 1);
        // the victim: no more than the 13-byte uplinks its budget let in (a burst of
        // 128) and the 100 forged answers in its name
        let forged = 100 * challenge.len() as u64;
        assert!(bytes <= 128 * 13 + forged, "{bytes} bytes to the victim");
        for _ in 0..20 {
            if let Some(t) = reg.poll_timeout() {
                reg.handle_timeout(t);
            }
        }
        assert_eq!(verdicts(&mut reg).0, 0);
        let s = reg.stats();
        assert_eq!(s.verified, 0);
        assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
    }

    /// Issue 36 (c): made-up answers (a Quake III `infoResponse` with a wrong challenge)
    /// from 50,000 spoofed sources never probed, in 0.1 s, do not spend the tries: the
    /// real server's answer is still taken (before: the first 20,000 spent the bucket's
    /// burst, and the real answer was dropped).
    #[test]
    fn junk_from_spoofed_sources_leaves_the_tries_to_real_answers() {
        let t0 = Instant::now();
        let (mut reg, server, answer) = probed_quake3_server([9; 16], t0, t0, |_| {});
        let junk = info_response(Some("0badcafe"));
        for i in 0..50_000u32 {
            let now = t0 + Duration::from_micros(u64::from(i) * 2);
            assert!(!reg.handle_reply(now, spread(i), &junk));
        }
        let now = t0 + Duration::from_millis(100);
        assert!(reg.handle_reply(now, server, &answer));
        assert_eq!(verdicts(&mut reg), (1, 0));
    }

    /// Issue 36 (c): answers are charged per prefix (IPv4 /24, IPv6 /64), so that one
    /// prefix's 2,000 answering addresses cannot spend the tries of all (here 500): a
    /// server of another prefix (for IPv6, the next /64 of the same /48) is still
    /// verified. Before, the prefix's first 500 answers spent them all.
    #[test]
    fn one_prefix_cannot_spend_the_answers_of_all() {
        let flood_v4 = |i: u16| {
            let ip = Ipv4Addr::new(11, 1, 1, (i % 254 + 1) as u8);
            SocketAddr::new(IpAddr::V4(ip), 1024 + i / 254)
        };
        let flood_v6 = |i: u16| {
            let ip = Ipv6Addr::new(0x2a00, 0x1450, 0x4001, 0x81c, 0, 0, 0, i + 1);
            SocketAddr::new(IpAddr::V6(ip), 27960)
        };
        let cases: [(&dyn Fn(u16) -> SocketAddr, &str); 2] = [
            (&flood_v4, "93.184.216.40:27960"),
            (&flood_v6, "[2a00:1450:4001:81d::1]:27960"),
        ];
        for (flood, other) in cases {
            let t0 = Instant::now();
            let mut reg = full_registrar([10; 16], t0, |c| {
                c.per_source = RateConfig::new(1e6, 1e6);
                c.probe_answers = RateConfig::new(500.0, 500.0);
            });
            let other: SocketAddr = other.parse().unwrap();
            let answer = answer_of(&probed(&mut reg, t0, other, Q3_HEARTBEAT), t0);
            // each a server's `infoResponse` with the challenge of its `getinfo`
            let answers: Vec<(SocketAddr, Vec<u8>)> = (0..2000)
                .map(|i| {
                    let a = flood(i);
                    let getinfo = probed(&mut reg, t0, a, Q3_HEARTBEAT);
                    let q = crate::quake3::decode_request(&getinfo).unwrap();
                    (a, info_response(q.challenge.as_deref()))
                })
                .collect();
            let now = t0 + Duration::from_millis(10);
            let taken = answers
                .iter()
                .filter(|(a, d)| reg.handle_reply(now, *a, d))
                .count();
            assert!(taken <= 300, "{other}: {taken} taken from one prefix");
            assert!(reg.handle_reply(now, other, &answer), "{other}");
            let (verified, _) = verdicts(&mut reg);
            assert_eq!(verified, taken + 1, "{other}");
        }
    }

    /// Issue 36 (d): a valid Quake III answer to a probe, replayed 1,000 times within a
    /// second, verifies the server once (before: 1,000 verifications, each a database
    /// write and a poll).
    #[test]
    fn a_replayed_answer_to_a_probe_verifies_once() {
        let t0 = Instant::now();
        let (mut reg, server, answer) = probed_quake3_server([11; 16], t0, t0, |_| {});
        let mut taken = 0;
        for i in 0..1000u64 {
            let now = t0 + Duration::from_millis(i);
            taken += usize::from(reg.handle_reply(now, server, &answer));
        }
        assert_eq!((taken, verdicts(&mut reg)), (1, (1, 0)));
        assert_eq!(reg.stats().verified, 1);
    }

    /// Issue 36 (e): an answer is taken up to 5 s after its probe, as the docs say, and
    /// not later, wherever the probe falls in the id's 5-second window (before: up to
    /// 10 s, by window).
    #[test]
    fn an_answer_to_a_probe_is_taken_for_five_seconds() {
        for (sent_ms, age_ms, taken) in [
            (100, 0, true),
            (100, 4_900, true),
            (4_900, 5_000, true),
            (100, 5_100, false),
            (100, 9_000, false),
            (4_900, 5_100, false),
        ] {
            let t0 = Instant::now();
            let sent = t0 + Duration::from_millis(sent_ms);
            let (mut reg, server, answer) = probed_quake3_server([12; 16], t0, sent, |c| {
                c.evict_after = Duration::from_secs(60);
            });
            let now = sent + Duration::from_millis(age_ms);
            assert_eq!(
                reg.handle_reply(now, server, &answer),
                taken,
                "sent {sent_ms} ms in, answered {age_ms} ms after"
            );
        }
    }

    /// Issue 36 (f): one server registering through an IPv4 socket and a dual-stack one
    /// (`[::ffff:a.b.c.d]`) is one verification, answered through either (before: two).
    #[test]
    fn a_server_through_an_ipv4_and_a_dual_stack_socket_is_verified_once() {
        let v4: SocketAddr = "127.0.0.2:27960".parse().unwrap();
        let mapped: SocketAddr = "[::ffff:127.0.0.2]:27960".parse().unwrap();
        let Ok(Inbound::Registration(r)) = classify(Q3_HEARTBEAT) else {
            panic!()
        };
        let n = Q3_HEARTBEAT.len();
        let t0 = Instant::now();
        let mut reg = Registrar::new(RegistrarConfig::default().allow_private(true), [1; 16], t0);
        assert_eq!(
            reg.register_on(t0, 0, v4, &r, n, Known::default()),
            Admission::Verifying
        );
        assert_eq!(
            reg.register_on(t0, 1, mapped, &r, n, Known::default()),
            Admission::Verifying
        );
        assert_eq!((reg.pending(), reg.stats().started), (1, 1));
        // the query goes out once, from the socket the first registration came on
        let (local, to, getinfo) = reg.poll_transmit_on(t0).expect("a getinfo");
        assert_eq!((local, to), (0, v4));
        assert!(reg.poll_transmit_on(t0).is_none());
        // its answer comes back through the dual-stack socket
        assert!(reg.handle_reply_on(t0, 1, mapped, &answer_of(&getinfo, t0)));
        match reg.poll_verdict() {
            Some(Verdict::Verified { addr, .. }) => assert_eq!(addr, v4),
            other => panic!("{other:?}"),
        }
        assert_eq!((reg.pending(), verdicts(&mut reg)), (0, (0, 0)));
        // probed: the two forms are one record and one answer
        let mut reg = full_registrar([13; 16], t0, |c| c.allow_private = true);
        let probe = probed(&mut reg, t0, v4, Q3_HEARTBEAT);
        let answer = answer_of(&probe, t0);
        assert!(reg.handle_reply_on(t0, 1, mapped, &answer));
        assert!(!reg.handle_reply_on(t0, 0, v4, &answer));
        assert_eq!(verdicts(&mut reg), (1, 0));
    }

    /// What the probes keep is capped: forged uplinks from 30,000 spoofed sources over
    /// 12 s (each in a /24 of its own), with room for 1,000 records a window, leave at
    /// most 2,000 records (this window's and the last's) and send no probe beyond
    /// 1,000 a window; a real server probed in a window with room is verified by its
    /// answer.
    #[test]
    fn probe_records_are_capped_under_a_flood_from_many_sources() {
        let t0 = Instant::now();
        let mut reg = full_registrar([14; 16], t0, |c| {
            c.max_probe_records = 1000;
            c.evict_after = Duration::from_secs(3600);
        });
        let r = Registration::OgpUplink { game_id: 7 };
        let mut per_window: HashMap<u64, u64> = HashMap::new();
        let mut most = 0;
        for i in 0..30_000u32 {
            let now = t0 + Duration::from_micros(u64::from(i) * 400);
            reg.register(now, spread(i), &r, 13, Known::default());
            while reg.poll_transmit(now).is_some() {
                *per_window.entry(reg.clock(now).0).or_default() += 1;
            }
            most = most.max(reg.records.len());
        }
        assert!(most <= 2000, "{most} records");
        assert!(per_window.values().all(|&n| n <= 1000), "{per_window:?}");
        assert!(per_window.values().filter(|&&n| n == 1000).count() >= 2);
        // a new window has room again: a real server is probed and verified
        let now = t0 + Duration::from_secs(15);
        let server: SocketAddr = "93.184.216.40:27960".parse().unwrap();
        let answer = answer_of(&probed(&mut reg, now, server, Q3_HEARTBEAT), now);
        assert!(reg.handle_reply(now, server, &answer));
        assert_eq!(verdicts(&mut reg), (1, 0));
    }

    #[test]
    fn prefixes() {
        for (a, p) in [
            ("203.0.114.77", "203.0.114.0"),
            ("::ffff:8.8.4.4", "8.8.4.0"),
            ("2a00:1450:4001:81c::200e", "2a00:1450:4001::"),
        ] {
            assert_eq!(
                prefix_of(a.parse().unwrap()),
                p.parse::<IpAddr>().unwrap(),
                "{a}"
            );
        }
    }

    #[test]
    fn global_addresses() {
        for a in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.0.1",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:10.0.0.1",
            "224.0.0.1",
        ] {
            assert!(!is_global(a.parse().unwrap()), "{a}");
        }
        for a in ["8.8.8.8", "203.0.114.2", "2a00:1450::1", "::ffff:8.8.4.4"] {
            assert!(is_global(a.parse().unwrap()), "{a}");
        }
    }

    /// A GameSpy v1 server's answers: `\echo\TEXT` back as the games send it (with a
    /// query id and `\final\`), or what `lie` makes of the query.
    fn run_gamespy1(
        heartbeat: &[u8],
        lie: impl Fn(&[u8]) -> Option<Vec<u8>>,
    ) -> (Option<Verdict>, Vec<Vec<u8>>, RegistrarStats) {
        let t0 = Instant::now();
        let mut reg = Registrar::new(RegistrarConfig::default().allow_private(true), [5; 16], t0);
        let server: SocketAddr = "127.0.0.2:7778".parse().unwrap();
        let Ok(Inbound::Registration(r)) = classify(heartbeat) else {
            panic!("{heartbeat:?}")
        };
        assert_eq!(r.protocol_name(), "gamespy1");
        assert_eq!(
            reg.register(t0, server, &r, heartbeat.len(), Known::default()),
            Admission::Verifying
        );
        let mut now = t0;
        let mut queries = Vec::new();
        for _ in 0..50 {
            while let Some((to, d)) = reg.poll_transmit(now) {
                assert_eq!(to, server);
                if let Some(a) = lie(&d) {
                    assert!(reg.handle_reply(now, server, &a));
                }
                queries.push(d);
            }
            if let Some(v) = reg.poll_verdict() {
                return (Some(v), queries, reg.stats());
            }
            match reg.poll_timeout() {
                Some(t) => {
                    now = t.max(now);
                    reg.handle_timeout(now);
                }
                None => break,
            }
        }
        (reg.poll_verdict(), queries, reg.stats())
    }

    fn echo_back(q: &[u8]) -> Option<Vec<u8>> {
        let text = q.strip_prefix(b"\\echo\\")?;
        Some([b"\\echo\\", text, b"\\final\\\\queryid\\7.1"].concat())
    }

    #[test]
    fn a_gamespy1_heartbeat_is_verified_by_its_echo_within_its_byte_budget() {
        let hb = b"\\heartbeat\\7778\\gamename\\UT\\statechanged\\1";
        match classify(hb) {
            Ok(Inbound::Registration(r)) => {
                assert_eq!(r.game().as_deref(), Some("ut"));
                assert!(r.wants_poll() && !r.exiting());
            }
            other => panic!("{other:?}"),
        }
        let (v, queries, s) = run_gamespy1(hb, echo_back);
        match v {
            Some(Verdict::Verified {
                game,
                gamespy1,
                answer,
                ..
            }) => {
                assert_eq!(game.as_deref(), Some("ut"));
                assert!(gamespy1);
                assert_eq!(answer.protocol, gamespy1::PROTOCOL);
            }
            other => panic!("{other:?}"),
        }
        // one `\echo\` with 8 hex digits: 14 bytes toward a 42-byte heartbeat
        assert_eq!(queries.len(), 1);
        assert_eq!(queries[0].len(), 14, "{:?}", queries[0]);
        assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
        // a short heartbeat (26 bytes; the shortest, with a one-digit port, is 23) still
        // pays for the echo
        let (v, queries, _) = run_gamespy1(b"\\heartbeat\\7778\\gamename\\a", echo_back);
        assert!(matches!(v, Some(Verdict::Verified { .. })), "{v:?}");
        assert_eq!(queries[0].len(), 14);
    }

    #[test]
    fn a_lying_gamespy1_server_is_not_verified() {
        let hb = b"\\heartbeat\\7778\\gamename\\ut";
        // a status with no echo, a wrong echo, junk: none is taken
        for lie in [
            |_: &[u8]| Some(b"\\gamename\\ut\\hostname\\x\\final\\".to_vec()),
            |_: &[u8]| Some(b"\\echo\\00000000\\final\\".to_vec()),
            |_: &[u8]| Some(b"\xff\xff\xff\xffjunk".to_vec()),
        ] {
            let (v, _, s) = run_gamespy1(hb, lie);
            assert!(matches!(v, Some(Verdict::Failed { .. })), "{v:?}");
            assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
        }
    }

    #[test]
    fn a_spoofed_gamespy1_heartbeat_costs_the_victim_one_echo_and_lists_nothing() {
        let hb = b"\\heartbeat\\7778\\gamename\\ut";
        let (v, queries, s) = run_gamespy1(hb, |_| None);
        assert!(matches!(v, Some(Verdict::Failed { .. })), "{v:?}");
        // one 14-byte echo for a 27-byte heartbeat: no retry without more bytes from it
        assert_eq!(queries.iter().map(Vec::len).collect::<Vec<_>>(), [14]);
        assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
        // malformed heartbeats are errors, not registrations
        for bad in [
            &b"\\heartbeat\\0\\gamename\\ut"[..],
            b"\\heartbeat\\7778",
            b"\\heartbeat\\7778\\gamename\\",
        ] {
            assert!(classify(bad).is_err(), "{bad:?}");
        }
        // a GameSpy v1 query or reply is no registration
        assert_eq!(classify(b"\\status\\"), Ok(Inbound::Other));
        // the echo goes to the query port the heartbeat names, at its source IP
        let t0 = Instant::now();
        let mut reg = Registrar::new(RegistrarConfig::default().allow_private(true), [8; 16], t0);
        let Ok(Inbound::Registration(r)) = classify(hb) else {
            panic!()
        };
        let uplink_socket: SocketAddr = "127.0.0.2:5555".parse().unwrap();
        reg.register(t0, uplink_socket, &r, hb.len(), Known::default());
        let (to, _) = reg.poll_transmit(t0).unwrap();
        assert_eq!(to, "127.0.0.2:7778".parse().unwrap());
    }

    #[test]
    fn a_probed_gamespy1_server_is_verified_by_its_echo() {
        let t0 = Instant::now();
        let mut config = RegistrarConfig::default().allow_private(true);
        config.max_pending = 0;
        let mut reg = Registrar::new(config, [6; 16], t0);
        let server: SocketAddr = "127.0.0.3:7778".parse().unwrap();
        let hb = b"\\heartbeat\\7778\\gamename\\ut";
        let Ok(Inbound::Registration(r)) = classify(hb) else {
            panic!()
        };
        assert!(matches!(
            reg.register(t0, server, &r, hb.len(), Known::default()),
            Admission::Probed(_)
        ));
        let (to, probe) = reg.poll_transmit(t0).unwrap();
        assert_eq!((to, probe.len()), (server, 14));
        // a wrong echo from it is not taken; the right one verifies it, once
        assert!(!reg.handle_reply(t0, server, b"\\echo\\0badf00d\\final\\"));
        let answer = echo_back(&probe).unwrap();
        probe_answer_verifies(&mut reg, server, &answer);
        assert!(
            !reg.handle_reply(t0, server, &answer),
            "a replay verifies nothing"
        );
    }

    fn probe_answer_verifies(reg: &mut Registrar, server: SocketAddr, answer: &[u8]) {
        assert!(reg.handle_reply(Instant::now(), server, answer));
        match reg.poll_verdict() {
            Some(Verdict::Verified { gamespy1, addr, .. }) => {
                assert!(gamespy1);
                assert_eq!(addr, server);
            }
            other => panic!("{other:?}"),
        }
    }
}

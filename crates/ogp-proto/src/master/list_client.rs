//! The client side of server lists (what `ogp list` runs), sans-IO: Valve's UDP list
//! protocol ([`ValveListClient`]), dpmaster's ([`DpListClient`]), QuakeWorld's
//! ([`QwListClient`]), Teeworlds 0.6's ([`TwListClient`]) and 0.7's ([`Tw7ListClient`]:
//! a token handshake first), the GameSpy master's
//! over TCP ([`GsListClient`]) and our master's HTTP API ([`HttpListClient`]), all
//! bounded against a hostile master.
//!
//! * **One deadline for the whole run** ([`ListLimits::deadline`]) and one per page
//!   ([`ListLimits::page_timeout`]) that is set when the request is sent: datagrams that
//!   are not the page (junk, late copies of an earlier page) are ignored and do not move
//!   it.
//! * **An end or an error.** A dpmaster list ends with its `\EOT` marker: silence for
//!   a page timeout before it, more than [`ListLimits::max_pages`] pages or more than
//!   [`ListLimits::max_servers`] distinct servers are errors. A QuakeWorld list has no
//!   end marker: a page with fewer entries than a full page of ours
//!   ([`qwmaster::ENTRIES_PER_PAGE`]) ends it, and after a full one, silence for a page
//!   timeout does (the same caps on pages and servers hold). A Valve list ends with its
//!   `0.0.0.0:0` marker; a page with no
//!   entries and no marker, pages that go backwards, more than [`ListLimits::max_pages`]
//!   pages or no answer after [`ListLimits::attempts`] sends are errors, never a short
//!   list passed off as whole. Over HTTP, a cursor or a page seen before is an error (a
//!   loop), and so is a page over [`ListLimits::max_page_bytes`] or with more than
//!   [`ListLimits::max_page_servers`] entries: a page is parsed only within those bounds,
//!   and all pages together within [`ListLimits::max_total_bytes`].
//! * **Entries that are no server** ([`invalid_reason`]: `0.0.0.0`, port 0, broadcast,
//!   multicast…) are handed back as skipped, with the reason, never as servers.
//!
//! Both UDP protocols share one client, [`UdpListClient`] (the deadlines, the attempts,
//! the pages), over what differs ([`UdpListProtocol`]: the request, a page, whether each
//! page is asked for). The caller moves the bytes: it sends what
//! [`UdpListClient::poll_transmit`] writes, waits until [`UdpListClient::next_wake`] for
//! a datagram and hands it to [`UdpListClient::handle_datagram`]; over HTTP it asks for what
//! [`HttpListClient::next_request`] says, reading at most its `max_bytes`, and hands the
//! body to [`HttpListClient::handle_page`]. Nothing here panics.

use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::net::{IpAddr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::dpmaster::{self, DpPage, ServersRequest};
use super::qwmaster::{self, QwPage};
use super::teemaster;
use super::teemaster7;
use super::valve::{decode_page, sortable, ListPage, ListRequest, END};

/// Bounds on one `ogp list` run. Build with [`ListLimits::new`] and change fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListLimits {
    /// The whole run, all pages together (default 60 s).
    pub deadline: Duration,
    /// How long a page is waited for after its request: over UDP before asking again,
    /// over HTTP five times this for each request (default 2 s).
    pub page_timeout: Duration,
    /// Sends of each UDP page request before giving up (default 3).
    pub attempts: u32,
    /// Most pages (default 10,000: 231 servers each over UDP, 5,000 over HTTP).
    pub max_pages: usize,
    /// Largest HTTP page body read and parsed (default 8 MiB; a full page of 5,000
    /// summaries is about 1.5 MB).
    pub max_page_bytes: usize,
    /// Most bytes of all HTTP pages together (default 256 MiB).
    pub max_total_bytes: u64,
    /// Most entries in one HTTP page (default 5,000, the API's largest page).
    pub max_page_servers: usize,
    /// Most distinct servers of a dpmaster list (default 100,000; dpmaster keeps 4,096
    /// by default).
    pub max_servers: usize,
}

impl ListLimits {
    /// The defaults with this deadline for the whole run and this timeout per page.
    pub fn new(deadline: Duration, page_timeout: Duration) -> Self {
        Self {
            deadline,
            page_timeout,
            attempts: 3,
            max_pages: 10_000,
            max_page_bytes: 8 << 20,
            max_total_bytes: 256 << 20,
            max_page_servers: 5_000,
            max_servers: 100_000,
        }
    }
}

impl Default for ListLimits {
    fn default() -> Self {
        Self::new(Duration::from_secs(60), Duration::from_secs(2))
    }
}

/// Why a list could not be read to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListError {
    /// The whole run's deadline passed.
    Deadline {
        /// The deadline.
        deadline: Duration,
        /// Pages read by then.
        pages: usize,
    },
    /// A page request and its retries got no page back.
    NoAnswer {
        /// The page (1, 2, …).
        page: usize,
        /// Requests sent for it.
        attempts: u32,
    },
    /// A page with no entries and no end marker: the list stops without its end.
    NoEnd {
        /// The page (1, 2, …).
        page: usize,
    },
    /// A page's last address is not past the one it was asked to follow.
    Backwards {
        /// The page (1, 2, …).
        page: usize,
        /// The address it was asked to follow.
        seed: SocketAddrV4,
    },
    /// More pages than [`ListLimits::max_pages`].
    TooManyPages {
        /// The limit.
        max: usize,
    },
    /// An HTTP page or its cursor came back a second time: the list loops.
    Repeated {
        /// The page (1, 2, …).
        page: usize,
        /// `"page"` or `"cursor"`.
        what: &'static str,
    },
    /// An HTTP page larger than [`ListLimits::max_page_bytes`].
    PageTooLarge {
        /// The page (1, 2, …).
        page: usize,
        /// The limit.
        max: usize,
    },
    /// All HTTP pages together over [`ListLimits::max_total_bytes`].
    TooManyBytes {
        /// The limit.
        max: u64,
    },
    /// The master answered none of our handshakes (Teeworlds 0.7's token request).
    NoHandshake {
        /// Handshakes sent.
        attempts: u32,
    },
    /// A dpmaster list that stopped sending pages before its end marker.
    Stalled {
        /// Pages read.
        pages: usize,
    },
    /// A Teeworlds list whose pages stopped before as many servers as its master
    /// counted (`siz2`) had come, or before the count itself.
    Short {
        /// Distinct entries read.
        got: usize,
        /// The count, if it came.
        count: Option<usize>,
    },
    /// More distinct servers than [`ListLimits::max_servers`].
    TooManyServers {
        /// The limit.
        max: usize,
    },
    /// The master closed the connection before the list's end (`\\final\\`), or
    /// before its greeting's challenge (GameSpy, over TCP).
    Unfinished {
        /// Bytes of the list read.
        bytes: usize,
    },
    /// The master sent nothing for a page timeout before the list's end (over
    /// TCP).
    Quiet {
        /// The page timeout.
        waited: Duration,
    },
    /// An HTTP page that is not what the API sends.
    Malformed {
        /// The page (1, 2, …).
        page: usize,
        /// What is wrong, one line.
        reason: String,
    },
}

impl fmt::Display for ListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Deadline { deadline, pages } => write!(
                f,
                "the list did not end within the deadline of {} ms ({pages} pages read)",
                deadline.as_millis()
            ),
            Self::NoAnswer { page, attempts } => write!(
                f,
                "no answer to the request for page {page} ({attempts} attempts; the master may \
                 not speak this list protocol, or rate-limits us)"
            ),
            Self::NoHandshake { attempts } => write!(
                f,
                "no answer to the token handshake ({attempts} attempts; the master may not \
                 speak the Teeworlds 0.7 master protocol, or rate-limits us)"
            ),
            Self::NoEnd { page } => write!(
                f,
                "page {page} has no servers and no end marker: the list stops without its end"
            ),
            Self::Backwards { page, seed } => {
                write!(
                    f,
                    "page {page} went backwards (asked for what follows {seed})"
                )
            }
            Self::TooManyPages { max } => write!(f, "more than {max} pages"),
            Self::Repeated { page, what } => write!(
                f,
                "page {page}: the same {what} came back again: the list loops"
            ),
            Self::PageTooLarge { page, max } => {
                write!(f, "page {page} is larger than {max} bytes")
            }
            Self::TooManyBytes { max } => write!(f, "the pages together exceed {max} bytes"),
            Self::Stalled { pages } => write!(
                f,
                "the list stopped after {pages} pages without its end marker (EOT)"
            ),
            Self::Short {
                got,
                count: Some(count),
            } => write!(
                f,
                "the list stopped after {got} of the {count} servers its master counted"
            ),
            Self::Short { got, count: None } => write!(
                f,
                "the list stopped after {got} servers without its count (siz2), so its end \
                 is not known"
            ),
            Self::TooManyServers { max } => write!(f, "more than {max} servers"),
            Self::Unfinished { bytes } => write!(
                f,
                "the master closed the connection before the list's end (\\final\\; {bytes} bytes read)"
            ),
            Self::Quiet { waited } => write!(
                f,
                "the master sent nothing for {} ms before the list's end",
                waited.as_millis()
            ),
            Self::Malformed { page, reason } => write!(f, "page {page}: {reason}"),
        }
    }
}

impl std::error::Error for ListError {}

/// Why a listed address is no server to query, or `None` for one that may be: the
/// unspecified network (`0.0.0.0/8`, `::`), port 0, broadcast, multicast and the
/// reserved `240.0.0.0/4`. Loopback and private addresses are servers (a LAN master).
pub fn invalid_reason(addr: SocketAddr) -> Option<&'static str> {
    if addr.port() == 0 {
        return Some("port 0");
    }
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_broadcast() => Some("the broadcast address"),
        IpAddr::V4(ip) if ip.octets().first() == Some(&0) => Some("not a host (0.0.0.0/8)"),
        IpAddr::V4(ip) if ip.is_multicast() => Some("a multicast address"),
        IpAddr::V4(ip) if ip.octets().first().is_some_and(|&o| o >= 240) => {
            Some("a reserved address (240.0.0.0/4)")
        }
        IpAddr::V6(ip) if ip.is_unspecified() => Some("not a host (::)"),
        IpAddr::V6(ip) if ip.is_multicast() => Some("a multicast address"),
        _ => None,
    }
}

/// One page of a UDP list, sorted into servers and skipped entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpListPage<A> {
    /// The servers, in the master's order (for dpmaster: only those not seen before).
    pub servers: Vec<A>,
    /// Entries that are no server, with [`invalid_reason`].
    pub skipped: Vec<(A, &'static str)>,
}

impl<A> Default for UdpListPage<A> {
    fn default() -> Self {
        Self {
            servers: Vec::new(),
            skipped: Vec::new(),
        }
    }
}

/// One page of a Valve list.
pub type ValvePage = UdpListPage<SocketAddrV4>;

/// One page of a dpmaster list (servers already seen in an earlier page are left out).
pub type DpListPage = UdpListPage<SocketAddr>;

/// One page of a QuakeWorld list (servers already seen in an earlier page are left out).
pub type QwListPage = UdpListPage<SocketAddr>;

mod sealed {
    pub trait Sealed {}
}

/// What one UDP list protocol adds to [`UdpListClient`]'s pacing: its request, its
/// pages, and whether each page has a request of its own. Implemented by [`ValveList`]
/// and [`DpList`] only.
pub trait UdpListProtocol: sealed::Sealed {
    /// A listed address.
    type Addr: Copy + fmt::Display;
    /// A decoded page, before it is sorted.
    type Raw;
    /// Whether each page is asked for by a request of its own (Valve), sent again after
    /// a page timeout; otherwise one request is answered by all pages (dpmaster), and
    /// silence for a page timeout after the first page is [`ListError::Stalled`] (or
    /// what [`Self::stalled`] says).
    const REQUEST_PER_PAGE: bool;
    /// Whether the list has no end marker, so that (one request for all pages) silence
    /// for a page timeout after a page ends it rather than being
    /// [`ListError::Stalled`] (QuakeWorld's).
    const SILENCE_ENDS: bool = false;
    /// Datagrams one request is made of, sent one right after the other (Teeworlds:
    /// `cou2`, then `req2`).
    const PARTS: usize = 1;
    /// Appends part `part` (0 to [`Self::PARTS`] − 1) of the request for the next page.
    fn encode_request(&self, part: usize, out: &mut Vec<u8>);
    /// Whether the request may go: false while a handshake is due first (Teeworlds
    /// 0.7's token), whose datagram then goes instead, paced and retried as a request.
    fn ready(&self) -> bool {
        true
    }
    /// Appends the handshake's datagram (sent while not [`Self::ready`]).
    fn encode_handshake(&self, _out: &mut Vec<u8>) {}
    /// Takes `datagram` as the handshake's answer if it is one (true: now ready).
    fn handshake(&mut self, _datagram: &[u8]) -> bool {
        false
    }
    /// The error of a list whose pages stopped, after `pages` of them, before its end.
    fn stalled(&self, pages: usize) -> ListError {
        ListError::Stalled { pages }
    }
    /// The page in `datagram`, or `None` for a datagram that is not the page asked for
    /// (ignored).
    fn decode(&self, datagram: &[u8]) -> Option<Self::Raw>;
    /// Sorts page number `page` into servers and skipped entries, and says whether it
    /// ends the list. An error ends the run.
    fn accept(
        &mut self,
        raw: Self::Raw,
        page: usize,
        limits: &ListLimits,
    ) -> Result<(UdpListPage<Self::Addr>, bool), ListError>;
}

/// Valve's list protocol: pages requested one after another, each following the last
/// address of the one before, until the `0.0.0.0:0` end marker.
#[derive(Debug, Clone)]
pub struct ValveList {
    request: ListRequest,
}

/// dpmaster's list protocol: one request, answered by pages until the `\EOT` marker.
#[derive(Debug, Clone)]
pub struct DpList {
    request: ServersRequest,
    seen: HashSet<SocketAddr>,
}

/// QuakeWorld's list protocol: one request (`c\n`), answered by one datagram or by
/// pages of `FF FF FF FF d \n` and 6-byte entries, with no end marker.
#[derive(Debug, Clone, Default)]
pub struct QwList {
    seen: HashSet<SocketAddr>,
}

/// The Teeworlds 0.6 master protocol: `cou2` and `req2` sent together, answered by
/// `siz2` (the count) and `lis2` pages in any order; the list has ended once as many
/// distinct entries as the count have come.
#[derive(Debug, Clone, Default)]
pub struct TwList {
    count: Option<usize>,
    /// Every distinct entry read (servers and skipped ones: the master counts both).
    seen: HashSet<SocketAddr>,
}

/// The Teeworlds 0.7 master protocol: a token handshake (our 520-byte request, the
/// master's token back), then the 0.6 protocol's `cou2` and `req2` ([`TwList`]) in
/// connectionless packets carrying both tokens; only answers addressed to our token are
/// read.
#[derive(Debug, Clone)]
pub struct Tw7List {
    ours: u32,
    theirs: Option<u32>,
    list: TwList,
}

/// A decoded Teeworlds master datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TwRaw {
    /// `siz2`.
    Count(u16),
    /// `lis2`.
    Page(Vec<SocketAddr>),
}

/// One run of a UDP list protocol (`P`: [`ValveList`], [`DpList`], [`QwList`] or [`TwList`]): the request sent
/// when due and again (up to [`ListLimits::attempts`] times) while unanswered, one
/// deadline for the whole run and one per page, pages handed back sorted.
#[derive(Debug, Clone)]
pub struct UdpListClient<P> {
    protocol: P,
    limits: ListLimits,
    deadline: Instant,
    /// When the next request is due (from the start, and when a page of a
    /// request-per-page protocol came).
    due: Option<Instant>,
    /// When the page waited for is given up on (and asked for again).
    page_deadline: Option<Instant>,
    /// Requests sent for the current page.
    attempts: u32,
    /// The next part of a request of several datagrams, and when it is due.
    part: Option<(usize, Instant)>,
    pages: usize,
    finished: bool,
}

/// One run of Valve's list protocol: pages requested one after another, each following
/// the last address of the one before, until the end marker.
pub type ValveListClient = UdpListClient<ValveList>;

/// One run of dpmaster's list protocol: one request, answered by pages until the
/// `\EOT` marker. The request is sent again (up to [`ListLimits::attempts`] times) only
/// while no page has come; once pages come, silence for a page timeout is an error
/// ([`ListError::Stalled`]), never a short list passed off as whole.
pub type DpListClient = UdpListClient<DpList>;

/// One run of the Teeworlds 0.6 master protocol: `cou2` and `req2` sent together (again,
/// up to [`ListLimits::attempts`] times, only while nothing has come), until as many
/// distinct entries as the `siz2` count have come. Silence for a page timeout before
/// that is [`ListError::Short`]; a count over [`ListLimits::max_servers`] is
/// [`ListError::TooManyServers`] at once.
pub type TwListClient = UdpListClient<TwList>;

impl UdpListClient<TwList> {
    /// A run starting at `now`.
    pub fn new(limits: ListLimits, now: Instant) -> Self {
        Self::start(TwList::default(), limits, now)
    }
}

/// One run of the Teeworlds 0.7 master protocol: the token handshake (again, up to
/// [`ListLimits::attempts`] times, while unanswered: then [`ListError::NoHandshake`]),
/// then as [`TwListClient`].
pub type Tw7ListClient = UdpListClient<Tw7List>;

impl UdpListClient<Tw7List> {
    /// A run starting at `now` with our `token` (pick it at random; not `FFFFFFFF`).
    pub fn new(token: u32, limits: ListLimits, now: Instant) -> Self {
        let ours = if token == u32::MAX { token ^ 1 } else { token };
        Self::start(
            Tw7List {
                ours,
                theirs: None,
                list: TwList::default(),
            },
            limits,
            now,
        )
    }
}

impl UdpListClient<ValveList> {
    /// A run for `region` and `filter` starting at `now`.
    pub fn new(region: u8, filter: &str, limits: ListLimits, now: Instant) -> Self {
        Self::start(
            ValveList {
                request: ListRequest::first(region, filter),
            },
            limits,
            now,
        )
    }
}

/// One run of QuakeWorld's list protocol: one request, answered by pages without an
/// end marker. The request is sent again (up to [`ListLimits::attempts`] times) while
/// no page has come; a page shorter than a full one of ours ends the list, and so does
/// silence for a page timeout after a full one.
pub type QwListClient = UdpListClient<QwList>;

impl UdpListClient<QwList> {
    /// A run starting at `now`.
    pub fn new(limits: ListLimits, now: Instant) -> Self {
        Self::start(QwList::default(), limits, now)
    }
}

impl UdpListClient<DpList> {
    /// A run of `request` starting at `now`.
    pub fn new(request: ServersRequest, limits: ListLimits, now: Instant) -> Self {
        Self::start(
            DpList {
                request,
                seen: HashSet::new(),
            },
            limits,
            now,
        )
    }
}

impl<P: UdpListProtocol> UdpListClient<P> {
    fn start(protocol: P, limits: ListLimits, now: Instant) -> Self {
        Self {
            protocol,
            deadline: now.checked_add(limits.deadline).unwrap_or(now),
            limits,
            due: Some(now),
            page_deadline: None,
            attempts: 0,
            part: None,
            pages: 0,
            finished: false,
        }
    }

    fn deadline_error(&self) -> ListError {
        ListError::Deadline {
            deadline: self.limits.deadline,
            pages: self.pages,
        }
    }

    /// Sets the page deadline a page timeout from `now` (within the run's deadline).
    fn arm(&mut self, now: Instant) {
        self.page_deadline = Some(
            now.checked_add(self.limits.page_timeout)
                .map_or(self.deadline, |d| d.min(self.deadline)),
        );
    }

    /// Appends the request to send now, if one is due (the first of a page, or again
    /// after [`ListLimits::page_timeout`]), and says whether it did. An error ends the
    /// run: the deadline passed, the request's last attempt went unanswered, or (one
    /// request for all pages) the pages stopped before the end marker.
    pub fn poll_transmit(&mut self, now: Instant, out: &mut Vec<u8>) -> Result<bool, ListError> {
        if self.finished {
            return Ok(false);
        }
        if now >= self.deadline {
            return Err(self.deadline_error());
        }
        if let Some((part, _)) = self.part {
            // the rest of a request of several datagrams, right after its first
            self.part = part
                .checked_add(1)
                .filter(|&next| next < P::PARTS)
                .map(|next| (next, now));
            self.protocol.encode_request(part, out);
            return Ok(true);
        }
        let fresh = self.due.is_some_and(|d| now >= d);
        let timed_out = self.page_deadline.is_some_and(|d| now >= d);
        if !fresh && !timed_out {
            return Ok(false);
        }
        if !P::REQUEST_PER_PAGE && self.pages > 0 {
            if P::SILENCE_ENDS {
                self.finished = true;
                return Ok(false);
            }
            return Err(self.protocol.stalled(self.pages));
        }
        if !fresh && self.attempts >= self.limits.attempts && !self.protocol.ready() {
            return Err(ListError::NoHandshake {
                attempts: self.attempts,
            });
        }
        if !fresh && self.attempts >= self.limits.attempts {
            return Err(ListError::NoAnswer {
                page: self.pages.saturating_add(1),
                attempts: self.attempts,
            });
        }
        self.due = None;
        self.attempts = self.attempts.saturating_add(1);
        self.arm(now);
        if !self.protocol.ready() {
            self.protocol.encode_handshake(out);
            return Ok(true);
        }
        self.protocol.encode_request(0, out);
        if P::PARTS > 1 {
            self.part = Some((1, now));
        }
        Ok(true)
    }

    /// When to call [`Self::poll_transmit`] again if no datagram comes (`None` once the
    /// list has ended).
    pub fn next_wake(&self) -> Option<Instant> {
        if self.finished {
            return None;
        }
        let at = self
            .part
            .map(|(_, at)| at)
            .or(self.due)
            .or(self.page_deadline)
            .unwrap_or(self.deadline);
        Some(at.min(self.deadline))
    }

    /// Whether the list has been read to its end marker.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Pages read so far.
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// A datagram from the master. A list page (`Ok(Some)`) moves on to the next
    /// request or page, or ends the list; anything else, and a late copy of a Valve
    /// page already read, is ignored (`Ok(None)`) and leaves the page's deadline where
    /// it was. A dpmaster page of the other form (`getserversResponse` to a
    /// `getserversExt`) is accepted: some masters answer so. An error ends the run.
    pub fn handle_datagram(
        &mut self,
        datagram: &[u8],
        now: Instant,
    ) -> Result<Option<UdpListPage<P::Addr>>, ListError> {
        if self.finished || self.page_deadline.is_none() {
            return Ok(None);
        }
        if now >= self.deadline {
            return Err(self.deadline_error());
        }
        if !self.protocol.ready() {
            if self.protocol.handshake(datagram) {
                // the request goes now, with attempts of its own
                self.due = Some(now);
                self.attempts = 0;
                self.page_deadline = None;
            }
            return Ok(None);
        }
        let Some(raw) = self.protocol.decode(datagram) else {
            return Ok(None);
        };
        self.pages = self.pages.saturating_add(1);
        if self.pages > self.limits.max_pages {
            return Err(ListError::TooManyPages {
                max: self.limits.max_pages,
            });
        }
        let (page, end) = self.protocol.accept(raw, self.pages, &self.limits)?;
        if end {
            self.finished = true;
        } else if P::REQUEST_PER_PAGE {
            self.due = Some(now);
            self.attempts = 0;
            self.page_deadline = None;
        } else {
            self.arm(now);
        }
        Ok(Some(page))
    }
}

impl sealed::Sealed for ValveList {}

impl UdpListProtocol for ValveList {
    type Addr = SocketAddrV4;
    type Raw = ListPage;
    const REQUEST_PER_PAGE: bool = true;

    fn encode_request(&self, _part: usize, out: &mut Vec<u8>) {
        self.request.encode(out);
    }

    fn decode(&self, datagram: &[u8]) -> Option<ListPage> {
        let page = decode_page(datagram).ok()?;
        // a late copy of an earlier page (a retry answered twice), or a master
        // repeating itself: not the page asked for
        page.servers
            .first()
            .is_none_or(|a| self.after_seed(*a))
            .then_some(page)
    }

    fn accept(
        &mut self,
        raw: ListPage,
        page: usize,
        _limits: &ListLimits,
    ) -> Result<(ValvePage, bool), ListError> {
        let last = raw.servers.last().copied();
        if last.is_some_and(|l| !self.after_seed(l)) {
            return Err(ListError::Backwards {
                page,
                seed: self.request.seed,
            });
        }
        let mut out = ValvePage::default();
        for a in raw.servers {
            match invalid_reason(SocketAddr::V4(a)) {
                Some(why) => out.skipped.push((a, why)),
                None => out.servers.push(a),
            }
        }
        match (raw.end, last) {
            (true, _) => {}
            (false, None) => return Err(ListError::NoEnd { page }),
            (false, Some(l)) => self.request = self.request.after(l),
        }
        Ok((out, raw.end))
    }
}

impl ValveList {
    /// Whether `a` comes after the address the page was asked to follow.
    fn after_seed(&self, a: SocketAddrV4) -> bool {
        let seed = self.request.seed;
        seed == END || sortable(a) > sortable(seed)
    }
}

impl sealed::Sealed for DpList {}

impl UdpListProtocol for DpList {
    type Addr = SocketAddr;
    type Raw = DpPage;
    const REQUEST_PER_PAGE: bool = false;

    fn encode_request(&self, _part: usize, out: &mut Vec<u8>) {
        self.request.encode(out);
    }

    fn decode(&self, datagram: &[u8]) -> Option<DpPage> {
        dpmaster::decode_page(datagram).ok()
    }

    fn accept(
        &mut self,
        raw: DpPage,
        _page: usize,
        limits: &ListLimits,
    ) -> Result<(DpListPage, bool), ListError> {
        let mut out = DpListPage::default();
        for a in raw.servers {
            if let Some(why) = invalid_reason(a) {
                out.skipped.push((a, why));
                continue;
            }
            if self.seen.contains(&a) {
                continue;
            }
            if self.seen.len() >= limits.max_servers {
                return Err(ListError::TooManyServers {
                    max: limits.max_servers,
                });
            }
            self.seen.insert(a);
            out.servers.push(a);
        }
        Ok((out, raw.end))
    }
}

impl sealed::Sealed for QwList {}

impl UdpListProtocol for QwList {
    type Addr = SocketAddr;
    type Raw = QwPage;
    const REQUEST_PER_PAGE: bool = false;
    const SILENCE_ENDS: bool = true;

    fn encode_request(&self, _part: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(qwmaster::LIST_REQUEST);
    }

    fn decode(&self, datagram: &[u8]) -> Option<QwPage> {
        qwmaster::decode_page(datagram).ok()
    }

    fn accept(
        &mut self,
        raw: QwPage,
        _page: usize,
        limits: &ListLimits,
    ) -> Result<(QwListPage, bool), ListError> {
        let end = !raw.may_continue();
        let mut out = QwListPage::default();
        for a in raw.servers.into_iter().map(SocketAddr::V4) {
            if let Some(why) = invalid_reason(a) {
                out.skipped.push((a, why));
                continue;
            }
            if self.seen.contains(&a) {
                continue;
            }
            if self.seen.len() >= limits.max_servers {
                return Err(ListError::TooManyServers {
                    max: limits.max_servers,
                });
            }
            self.seen.insert(a);
            out.servers.push(a);
        }
        Ok((out, end))
    }
}

impl sealed::Sealed for TwList {}

impl UdpListProtocol for TwList {
    type Addr = SocketAddr;
    type Raw = TwRaw;
    const REQUEST_PER_PAGE: bool = false;
    const PARTS: usize = 2;

    fn encode_request(&self, part: usize, out: &mut Vec<u8>) {
        if part == 0 {
            teemaster::Request::Count.encode(out);
        } else {
            teemaster::Request::List.encode(out);
        }
    }

    fn decode(&self, datagram: &[u8]) -> Option<TwRaw> {
        if let Ok(n) = teemaster::decode_count(datagram) {
            return Some(TwRaw::Count(n));
        }
        teemaster::decode_page(datagram).ok().map(TwRaw::Page)
    }

    fn accept(
        &mut self,
        raw: TwRaw,
        _page: usize,
        limits: &ListLimits,
    ) -> Result<(UdpListPage<SocketAddr>, bool), ListError> {
        let mut out = UdpListPage::default();
        match raw {
            // the first count is the list's; a later one changes nothing
            TwRaw::Count(n) if self.count.is_none() => {
                let n = usize::from(n);
                if n > limits.max_servers {
                    return Err(ListError::TooManyServers {
                        max: limits.max_servers,
                    });
                }
                self.count = Some(n);
            }
            TwRaw::Count(_) => {}
            TwRaw::Page(entries) => {
                for a in entries {
                    if self.count.is_some_and(|n| self.seen.len() >= n) {
                        break;
                    }
                    if self.seen.contains(&a) {
                        continue;
                    }
                    if self.seen.len() >= limits.max_servers {
                        return Err(ListError::TooManyServers {
                            max: limits.max_servers,
                        });
                    }
                    self.seen.insert(a);
                    match invalid_reason(a) {
                        Some(why) => out.skipped.push((a, why)),
                        None => out.servers.push(a),
                    }
                }
            }
        }
        let end = self.count.is_some_and(|n| self.seen.len() >= n);
        Ok((out, end))
    }

    fn stalled(&self, _pages: usize) -> ListError {
        ListError::Short {
            got: self.seen.len(),
            count: self.count,
        }
    }
}

impl sealed::Sealed for Tw7List {}

impl UdpListProtocol for Tw7List {
    type Addr = SocketAddr;
    type Raw = TwRaw;
    const REQUEST_PER_PAGE: bool = false;
    const PARTS: usize = 2;

    fn encode_request(&self, part: usize, out: &mut Vec<u8>) {
        let request = if part == 0 {
            teemaster::Request::Count
        } else {
            teemaster::Request::List
        };
        let theirs = self.theirs.unwrap_or(u32::MAX);
        teemaster7::encode_request(request, theirs, self.ours, out);
    }

    fn ready(&self) -> bool {
        self.theirs.is_some()
    }

    fn encode_handshake(&self, out: &mut Vec<u8>) {
        teemaster7::encode_token_request(self.ours, out);
    }

    fn handshake(&mut self, datagram: &[u8]) -> bool {
        match teemaster7::token_reply(datagram, self.ours) {
            Some(t) if t != u32::MAX => {
                self.theirs = Some(t);
                true
            }
            _ => false,
        }
    }

    fn decode(&self, datagram: &[u8]) -> Option<TwRaw> {
        match teemaster7::decode_answer(datagram, self.ours)?.ok()? {
            teemaster7::Answer::Count(n) => Some(TwRaw::Count(n)),
            teemaster7::Answer::Page(p) => Some(TwRaw::Page(p)),
        }
    }

    fn accept(
        &mut self,
        raw: TwRaw,
        page: usize,
        limits: &ListLimits,
    ) -> Result<(UdpListPage<SocketAddr>, bool), ListError> {
        self.list.accept(raw, page, limits)
    }

    fn stalled(&self, pages: usize) -> ListError {
        self.list.stalled(pages)
    }
}

/// What to ask an HTTP master for next.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpRequest {
    /// The `cursor` parameter (`None` for the first page).
    pub cursor: Option<String>,
    /// The longest the request may take, body included.
    pub timeout: Duration,
    /// The most body bytes to read: one more than a page may have, so that a larger one
    /// shows (hand what was read to [`HttpListClient::handle_page`] either way).
    pub max_bytes: usize,
}

/// One page of the HTTP API, sorted into servers and skipped entries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HttpPage {
    /// The servers: each address and the API's item for it, in the master's order.
    pub servers: Vec<(SocketAddr, Value)>,
    /// Entries that are no server: the address as sent and why.
    pub skipped: Vec<(String, &'static str)>,
}

/// Longest cursor kept (ours are a few dozen bytes).
const MAX_CURSOR_BYTES: usize = 1024;

/// One run over our master's HTTP API: pages followed by their `next` cursor until a
/// page without one.
#[derive(Debug, Clone)]
pub struct HttpListClient {
    limits: ListLimits,
    deadline: Instant,
    next: Option<String>,
    /// Cursors asked for so far.
    cursors: HashSet<String>,
    /// Hashes of the pages read so far.
    seen: HashSet<u64>,
    pages: usize,
    bytes: u64,
    /// An error found after the page it came with was handed back.
    pending: Option<ListError>,
    finished: bool,
}

impl HttpListClient {
    /// A run starting at `now`.
    pub fn new(limits: ListLimits, now: Instant) -> Self {
        Self {
            deadline: now.checked_add(limits.deadline).unwrap_or(now),
            limits,
            next: None,
            cursors: HashSet::new(),
            seen: HashSet::new(),
            pages: 0,
            bytes: 0,
            pending: None,
            finished: false,
        }
    }

    /// The next page to ask for, `Ok(None)` once the list has ended, or the error that
    /// ends the run (the deadline, a loop, too many pages).
    pub fn next_request(&mut self, now: Instant) -> Result<Option<HttpRequest>, ListError> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        if self.finished {
            return Ok(None);
        }
        let left = self.deadline.saturating_duration_since(now);
        if left.is_zero() {
            return Err(ListError::Deadline {
                deadline: self.limits.deadline,
                pages: self.pages,
            });
        }
        if self.pages >= self.limits.max_pages {
            return Err(ListError::TooManyPages {
                max: self.limits.max_pages,
            });
        }
        Ok(Some(HttpRequest {
            cursor: self.next.clone(),
            timeout: self.limits.page_timeout.saturating_mul(5).min(left),
            max_bytes: self.limits.max_page_bytes.saturating_add(1),
        }))
    }

    /// Whether the list has been read to its last page.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The deadline error once the whole run's deadline has passed: what a request
    /// that failed at `now` ran into when its timeout was the time left.
    pub fn check_deadline(&self, now: Instant) -> Result<(), ListError> {
        if now >= self.deadline {
            return Err(ListError::Deadline {
                deadline: self.limits.deadline,
                pages: self.pages,
            });
        }
        Ok(())
    }

    /// The body of the page asked for. Parsed only within the limits: a page too large,
    /// with too many entries, not the API's shape, or seen before is an error. A page
    /// whose `next` cursor was seen before is handed back, and the next
    /// [`Self::next_request`] is the error.
    pub fn handle_page(&mut self, body: &[u8]) -> Result<HttpPage, ListError> {
        let page = self.pages.saturating_add(1);
        self.pages = page;
        if body.len() > self.limits.max_page_bytes {
            return Err(ListError::PageTooLarge {
                page,
                max: self.limits.max_page_bytes,
            });
        }
        self.bytes = self
            .bytes
            .saturating_add(u64::try_from(body.len()).unwrap_or(u64::MAX));
        if self.bytes > self.limits.max_total_bytes {
            return Err(ListError::TooManyBytes {
                max: self.limits.max_total_bytes,
            });
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        body.hash(&mut h);
        if !self.seen.insert(h.finish()) {
            return Err(ListError::Repeated { page, what: "page" });
        }
        let malformed = |reason: String| ListError::Malformed { page, reason };
        let mut de = serde_json::Deserializer::from_slice(body);
        let doc = PageSeed {
            max: self.limits.max_page_servers,
        }
        .deserialize(&mut de)
        .and_then(|d| de.end().map(|()| d))
        .map_err(|e| malformed(format!("not a page of the API ({e})")))?;
        let mut out = HttpPage::default();
        for (i, item) in doc.servers.into_iter().enumerate() {
            let Some(addr) = item.get("addr").and_then(Value::as_str) else {
                return Err(malformed(format!(
                    "entry {} is not a server (no \"addr\" string)",
                    i.saturating_add(1)
                )));
            };
            match addr.parse::<SocketAddr>() {
                Err(_) => out.skipped.push((addr.to_owned(), "not IP:PORT")),
                Ok(a) => match invalid_reason(a) {
                    Some(why) => out.skipped.push((addr.to_owned(), why)),
                    None => out.servers.push((a, item)),
                },
            }
        }
        match doc.next {
            Some(n) if doc.had_servers => {
                if n.len() > MAX_CURSOR_BYTES {
                    return Err(malformed(format!(
                        "a cursor of {} bytes (at most {MAX_CURSOR_BYTES})",
                        n.len()
                    )));
                }
                if self.cursors.contains(&n) {
                    self.pending = Some(ListError::Repeated {
                        page,
                        what: "cursor",
                    });
                } else {
                    self.cursors.insert(n.clone());
                    self.next = Some(n);
                }
            }
            _ => self.finished = true,
        }
        Ok(out)
    }
}

/// A page of the API as read: its entries (at most `max`) and its cursor; other keys are
/// skipped without being kept.
struct PageDoc {
    servers: Vec<Value>,
    had_servers: bool,
    next: Option<String>,
}

struct PageSeed {
    max: usize,
}

impl<'de> DeserializeSeed<'de> for PageSeed {
    type Value = PageDoc;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<PageDoc, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for PageSeed {
    type Value = PageDoc;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object with \"servers\" and \"next\"")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<PageDoc, A::Error> {
        let mut servers = None;
        let mut next = None;
        while let Some(k) = m.next_key::<std::borrow::Cow<'de, str>>()? {
            match k.as_ref() {
                "servers" if servers.is_none() => {
                    servers = Some(m.next_value_seed(Entries { max: self.max })?);
                }
                "next" if next.is_none() => next = Some(m.next_value::<Option<String>>()?),
                "servers" | "next" => {
                    return Err(serde::de::Error::custom(format_args!("{k} twice")))
                }
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        let servers = servers.ok_or_else(|| serde::de::Error::custom("no \"servers\" list"))?;
        Ok(PageDoc {
            had_servers: !servers.is_empty(),
            servers,
            next: next.flatten(),
        })
    }
}

/// The `servers` list, refused at its first entry past `max`.
struct Entries {
    max: usize,
}

impl<'de> DeserializeSeed<'de> for Entries {
    type Value = Vec<Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Value>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Entries {
    type Value = Vec<Value>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a list of at most {} servers", self.max)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.max).min(1024));
        while let Some(v) = seq.next_element::<Value>()? {
            if out.len() >= self.max {
                return Err(serde::de::Error::custom(format_args!(
                    "more than {} servers in one page",
                    self.max
                )));
            }
            if !v.is_object() {
                return Err(serde::de::Error::custom(format_args!(
                    "entry {} is not a server object",
                    out.len().saturating_add(1)
                )));
            }
            out.push(v);
        }
        Ok(out)
    }
}

/// What a [`GsListClient`] made of bytes from the master.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GsProgress {
    /// Nothing to do yet: wait for more bytes (until [`GsListClient::next_wake`]).
    More,
    /// The greeting is whole: send these bytes (the validate and list messages).
    Send(Vec<u8>),
    /// The list has ended: its servers (distinct, in the master's order) and the
    /// entries skipped as no server, with why.
    Done {
        /// The servers.
        servers: Vec<SocketAddrV4>,
        /// Entries that are no server ([`invalid_reason`]).
        skipped: Vec<(SocketAddrV4, &'static str)>,
    },
}

/// The most bytes of a GameSpy greeting before its challenge.
const MAX_GREETING: usize = 1024;

/// The client of a GameSpy master's list over TCP ([`super::gsmaster`]): reads the
/// greeting, answers its challenge with `\\validate\\` and asks for one game's list,
/// then reads the `\\ip\\A:P…\\final\\` answer. Bounded: the whole run within
/// [`ListLimits::deadline`], silence within [`ListLimits::page_timeout`], the greeting
/// within 1 KiB, the answer within [`ListLimits::max_page_bytes`] and
/// [`ListLimits::max_servers`] entries; a connection closed before `\\final\\` is
/// [`ListError::Unfinished`].
#[derive(Debug)]
pub struct GsListClient {
    request: super::gsmaster::ListRequest,
    key: Option<Vec<u8>>,
    run: TcpRun,
    greeted: bool,
    buf: Vec<u8>,
}

/// The timers of a list read over one TCP connection (GameSpy's, Cube 2's): the whole
/// run within [`ListLimits::deadline`], silence within [`ListLimits::page_timeout`].
#[derive(Debug, Clone, Copy)]
struct TcpRun {
    limits: ListLimits,
    started: Instant,
    last: Instant,
}

impl TcpRun {
    fn new(limits: ListLimits, now: Instant) -> Self {
        Self {
            limits,
            started: now,
            last: now,
        }
    }

    /// The page timeout after the last bytes, or the run's deadline, whichever first.
    fn next_wake(&self) -> Instant {
        let deadline = self.started.checked_add(self.limits.deadline);
        let silence = self.last.checked_add(self.limits.page_timeout);
        match (deadline, silence) {
            (Some(d), Some(s)) => d.min(s),
            (Some(t), None) | (None, Some(t)) => t,
            (None, None) => self.last,
        }
    }

    fn timed_out(&self, now: Instant) -> ListError {
        if now.saturating_duration_since(self.started) >= self.limits.deadline {
            ListError::Deadline {
                deadline: self.limits.deadline,
                pages: 0,
            }
        } else {
            ListError::Quiet {
                waited: self.limits.page_timeout,
            }
        }
    }

    /// Bytes came at `now`: an error once the run's deadline has passed.
    fn heard(&mut self, now: Instant) -> Result<(), ListError> {
        self.last = now;
        if now.saturating_duration_since(self.started) >= self.limits.deadline {
            return Err(self.timed_out(now));
        }
        Ok(())
    }
}

impl GsListClient {
    /// A client asking for `game`'s servers as a client of `client_game`, answering the
    /// challenge with `key` (the client game's secret key; without one, with `00000000`,
    /// which a master that does not check, ours included, takes), starting at `now`
    /// (when the connection was opened).
    pub fn new(
        game: &str,
        client_game: &str,
        key: Option<&str>,
        limits: ListLimits,
        now: Instant,
    ) -> Self {
        Self {
            request: super::gsmaster::ListRequest::new(game, client_game, "00000000"),
            key: key.map(|k| k.as_bytes().to_vec()),
            run: TcpRun::new(limits, now),
            greeted: false,
            buf: Vec::new(),
        }
    }

    /// When to give up waiting for bytes: the page timeout after the last bytes, or the
    /// run's deadline, whichever comes first.
    pub fn next_wake(&self) -> Instant {
        self.run.next_wake()
    }

    /// Nothing came by [`next_wake`](Self::next_wake): the error to end with.
    pub fn timed_out(&self, now: Instant) -> ListError {
        self.run.timed_out(now)
    }

    /// The master closed the connection.
    pub fn handle_closed(&self) -> ListError {
        ListError::Unfinished {
            bytes: self.buf.len(),
        }
    }

    /// Bytes from the master.
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) -> Result<GsProgress, ListError> {
        self.run.heard(now)?;
        let cap = if self.greeted {
            self.run.limits.max_page_bytes
        } else {
            MAX_GREETING
        };
        if bytes.len() > cap.saturating_sub(self.buf.len()) {
            return Err(ListError::PageTooLarge { page: 1, max: cap });
        }
        self.buf.extend_from_slice(bytes);
        if !self.greeted {
            return Ok(self.greeting());
        }
        let list = match super::gsmaster::decode_list(&self.buf) {
            Ok(None) => return Ok(GsProgress::More),
            Ok(Some(list)) => list,
            Err(e) => {
                return Err(ListError::Malformed {
                    page: 1,
                    reason: e.to_string(),
                })
            }
        };
        let mut seen = HashSet::new();
        let (mut servers, mut skipped) = (Vec::new(), Vec::new());
        for a in list {
            if let Some(why) = invalid_reason(SocketAddr::V4(a)) {
                skipped.push((a, why));
            } else if seen.insert(a) {
                if servers.len() >= self.run.limits.max_servers {
                    return Err(ListError::TooManyServers {
                        max: self.run.limits.max_servers,
                    });
                }
                servers.push(a);
            }
        }
        Ok(GsProgress::Done { servers, skipped })
    }

    /// The greeting so far: once `\\secure\\` and its six letters are in, the request.
    fn greeting(&mut self) -> GsProgress {
        const SECURE: &[u8] = b"\\secure\\";
        let Some(at) = self
            .buf
            .windows(SECURE.len())
            .position(|w| w.eq_ignore_ascii_case(SECURE))
        else {
            return GsProgress::More;
        };
        let start = at.saturating_add(SECURE.len());
        let Some(challenge) = self
            .buf
            .get(start..start.saturating_add(super::gsmaster::CHALLENGE_LEN))
        else {
            return GsProgress::More;
        };
        let mut request = self.request.clone();
        if let Some(key) = &self.key {
            request.validate = super::gsmaster::validate(challenge, key).into();
        }
        self.greeted = true;
        self.buf.clear();
        let mut out = Vec::new();
        request.encode(&mut out);
        GsProgress::Send(out)
    }
}

/// The client of a Cube 2 master's list over TCP (Red Eclipse's and Sauerbraten's):
/// sends `list\n`, then reads lines until the master closes the connection:
/// `addserver IP PORT …` is a server (its game port: the query port is one up),
/// `clearservers` and other lines are passed over. Bounded like [`GsListClient`]: the
/// run within [`ListLimits::deadline`], silence within [`ListLimits::page_timeout`], the
/// whole answer within [`ListLimits::max_page_bytes`], a line within
/// [`crate::cube2::master::MAX_LINE`] bytes, at most [`ListLimits::max_servers`]
/// distinct servers.
#[derive(Debug)]
pub struct Cube2ListClient {
    run: TcpRun,
    bytes: usize,
    line: Vec<u8>,
    seen: HashSet<SocketAddr>,
    servers: Vec<SocketAddr>,
    skipped: Vec<(SocketAddr, &'static str)>,
}

impl Cube2ListClient {
    /// A client starting at `now` (when the connection was opened).
    pub fn new(limits: ListLimits, now: Instant) -> Self {
        Self {
            run: TcpRun::new(limits, now),
            bytes: 0,
            line: Vec::new(),
            seen: HashSet::new(),
            servers: Vec::new(),
            skipped: Vec::new(),
        }
    }

    /// What to send once connected.
    pub fn request(&self) -> &'static [u8] {
        crate::cube2::master::LIST_REQUEST
    }

    /// When to give up waiting for bytes (as [`GsListClient::next_wake`]).
    pub fn next_wake(&self) -> Instant {
        self.run.next_wake()
    }

    /// Nothing came by [`next_wake`](Self::next_wake): the error to end with.
    pub fn timed_out(&self, now: Instant) -> ListError {
        self.run.timed_out(now)
    }

    /// Bytes from the master.
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) -> Result<(), ListError> {
        self.run.heard(now)?;
        let max = self.run.limits.max_page_bytes;
        if bytes.len() > max.saturating_sub(self.bytes) {
            return Err(ListError::PageTooLarge { page: 1, max });
        }
        self.bytes = self.bytes.saturating_add(bytes.len());
        for &b in bytes {
            if b == b'\n' {
                let line = std::mem::take(&mut self.line);
                self.take_line(&line)?;
            } else if self.line.len() >= crate::cube2::master::MAX_LINE {
                return Err(ListError::Malformed {
                    page: 1,
                    reason: format!(
                        "a line longer than {} bytes",
                        crate::cube2::master::MAX_LINE
                    ),
                });
            } else {
                self.line.push(b);
            }
        }
        Ok(())
    }

    fn take_line(&mut self, line: &[u8]) -> Result<(), ListError> {
        let Some(a) = crate::cube2::master::decode_line(line) else {
            return Ok(());
        };
        if let Some(why) = invalid_reason(a) {
            self.skipped.push((a, why));
        } else if self.seen.insert(a) {
            if self.servers.len() >= self.run.limits.max_servers {
                return Err(ListError::TooManyServers {
                    max: self.run.limits.max_servers,
                });
            }
            self.servers.push(a);
        }
        Ok(())
    }

    /// The master closed the connection: the list (distinct servers with their game
    /// ports, in the master's order) and the entries skipped as no server.
    #[allow(clippy::type_complexity)]
    pub fn handle_closed(
        mut self,
    ) -> Result<(Vec<SocketAddr>, Vec<(SocketAddr, &'static str)>), ListError> {
        let line = std::mem::take(&mut self.line);
        self.take_line(&line)?;
        Ok((self.servers, self.skipped))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::master::valve::encode_page;
    use std::net::Ipv4Addr;

    fn a(last: u8, port: u16) -> SocketAddrV4 {
        SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, last), port)
    }

    fn page(servers: &[SocketAddrV4], end: bool) -> Vec<u8> {
        let mut d = Vec::new();
        encode_page(servers, end, &mut d);
        d
    }

    #[test]
    fn junk_does_not_move_the_page_deadline() {
        let t0 = Instant::now();
        let limits = ListLimits::new(Duration::from_secs(60), Duration::from_secs(2));
        let mut c = ValveListClient::new(0xff, "", limits, t0);
        let mut out = Vec::new();
        assert_eq!(c.poll_transmit(t0, &mut out), Ok(true));
        let first_wake = c.next_wake();
        // junk every 1.5 s: ignored, the wake-up stays
        for i in 1..=3u64 {
            let at = t0 + Duration::from_millis(1500 * i);
            assert_eq!(c.handle_datagram(b"\xff\xff\xff\xffjunk", at), Ok(None));
            assert_eq!(c.next_wake(), first_wake);
        }
        // three attempts, then an error
        let mut at = t0;
        for _ in 0..2 {
            at += Duration::from_secs(2);
            assert_eq!(c.poll_transmit(at, &mut out), Ok(true));
        }
        at += Duration::from_secs(2);
        assert_eq!(
            c.poll_transmit(at, &mut out),
            Err(ListError::NoAnswer {
                page: 1,
                attempts: 3
            })
        );
    }

    #[test]
    fn the_whole_run_has_one_deadline() {
        let t0 = Instant::now();
        let limits = ListLimits::new(Duration::from_secs(5), Duration::from_secs(2));
        let mut c = ValveListClient::new(0xff, "", limits, t0);
        let mut out = Vec::new();
        let mut at = t0;
        // each page answered just before its own timeout: the run still ends at 5 s
        let mut last = END;
        for i in 1..=10u8 {
            assert_eq!(c.poll_transmit(at, &mut out), Ok(true), "page {i}");
            assert!(c
                .next_wake()
                .is_some_and(|w| w <= t0 + Duration::from_secs(5)));
            at += Duration::from_millis(1900);
            let next = a(i, 1);
            match c.handle_datagram(&page(&[next], false), at) {
                Ok(Some(_)) => last = next,
                Err(e) => {
                    assert!(matches!(e, ListError::Deadline { .. }), "{e}");
                    assert!(at >= t0 + Duration::from_secs(5));
                    assert_ne!(last, END);
                    return;
                }
                Ok(None) => panic!("page {i} ignored"),
            }
        }
        panic!("no deadline");
    }

    #[test]
    fn a_list_without_its_end_is_an_error() {
        let t0 = Instant::now();
        let mut c = ValveListClient::new(0xff, "", ListLimits::default(), t0);
        let mut out = Vec::new();
        assert_eq!(c.poll_transmit(t0, &mut out), Ok(true));
        assert_eq!(
            c.handle_datagram(&page(&[], false), t0),
            Err(ListError::NoEnd { page: 1 })
        );
        // with servers, then an empty page
        let mut c = ValveListClient::new(0xff, "", ListLimits::default(), t0);
        assert_eq!(c.poll_transmit(t0, &mut out), Ok(true));
        let got = c.handle_datagram(&page(&[a(1, 1)], false), t0).unwrap();
        assert_eq!(got.map(|p| p.servers), Some(vec![a(1, 1)]));
        assert_eq!(c.poll_transmit(t0, &mut out), Ok(true));
        assert_eq!(
            c.handle_datagram(&page(&[], false), t0),
            Err(ListError::NoEnd { page: 2 })
        );
        // the end marker ends it
        let mut c = ValveListClient::new(0xff, "", ListLimits::default(), t0);
        assert_eq!(c.poll_transmit(t0, &mut out), Ok(true));
        assert!(c.handle_datagram(&page(&[a(1, 1)], true), t0).is_ok());
        assert!(c.is_finished());
        assert_eq!(c.next_wake(), None);
    }

    #[test]
    fn late_copies_are_ignored_and_backwards_pages_refused() {
        let t0 = Instant::now();
        let mut c = ValveListClient::new(0xff, "", ListLimits::default(), t0);
        let mut out = Vec::new();
        assert_eq!(c.poll_transmit(t0, &mut out), Ok(true));
        let p1 = page(&[a(1, 1), a(2, 1)], false);
        assert!(c.handle_datagram(&p1, t0).unwrap().is_some());
        assert_eq!(c.poll_transmit(t0, &mut out), Ok(true));
        // the answer to a retry of page 1
        assert_eq!(c.handle_datagram(&p1, t0), Ok(None));
        assert!(matches!(
            c.handle_datagram(&page(&[a(3, 1), a(1, 0)], false), t0),
            Err(ListError::Backwards { page: 2, .. })
        ));
    }

    #[test]
    fn invalid_entries_are_skipped_with_a_reason() {
        let t0 = Instant::now();
        let mut c = ValveListClient::new(0xff, "", ListLimits::default(), t0);
        let mut out = Vec::new();
        assert_eq!(c.poll_transmit(t0, &mut out), Ok(true));
        let zero5 = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 5);
        let bcast = SocketAddrV4::new(Ipv4Addr::BROADCAST, 27015);
        let got = c
            .handle_datagram(&page(&[zero5, a(1, 0), a(2, 27015), bcast], true), t0)
            .unwrap()
            .unwrap();
        assert_eq!(got.servers, vec![a(2, 27015)]);
        let skipped: Vec<_> = got.skipped.iter().map(|(a, _)| *a).collect();
        assert_eq!(skipped, vec![zero5, a(1, 0), bcast]);
        for (addr, ok) in [
            ("127.0.0.1:27015", true),
            ("192.168.1.2:1", true),
            ("[::1]:5", true),
            ("0.0.0.0:5", false),
            ("0.1.2.3:5", false),
            ("224.0.0.1:5", false),
            ("250.0.0.1:5", false),
            ("[::]:5", false),
            ("[ff02::1]:5", false),
            ("1.2.3.4:0", false),
        ] {
            let parsed: SocketAddr = addr.parse().unwrap();
            assert_eq!(invalid_reason(parsed).is_none(), ok, "{addr}");
        }
    }

    fn qw_page(from: u32, n: u32) -> Vec<u8> {
        let servers: Vec<SocketAddr> = (from..from + n)
            .map(|i| SocketAddr::from((std::net::Ipv4Addr::from(0x0a00_0000 + i), 27500)))
            .collect();
        let mut d = Vec::new();
        assert_eq!(qwmaster::encode_page(&servers, &mut d) as u32, n);
        d
    }

    #[test]
    fn a_qw_list_ends_at_a_short_page_or_silence_after_a_full_one() {
        let t0 = Instant::now();
        let full = qwmaster::ENTRIES_PER_PAGE as u32;
        let mut c = QwListClient::new(ListLimits::default(), t0);
        let mut d = Vec::new();
        assert_eq!(c.poll_transmit(t0, &mut d), Ok(true));
        assert_eq!(d, b"c\n");
        // junk and a truncated page are ignored
        assert_eq!(c.handle_datagram(b"\xff\xff\xff\xffn\\x\n", t0), Ok(None));
        let mut cut = qw_page(0, 3);
        cut.pop();
        assert_eq!(c.handle_datagram(&cut, t0), Ok(None));
        let p = c.handle_datagram(&qw_page(0, full), t0).unwrap().unwrap();
        assert_eq!(p.servers.len(), full as usize);
        assert!(!c.is_finished());
        // the same page again adds nothing; a short page ends the list
        let p = c.handle_datagram(&qw_page(0, full), t0).unwrap().unwrap();
        assert!(p.servers.is_empty());
        let p = c.handle_datagram(&qw_page(full, 5), t0).unwrap().unwrap();
        assert_eq!(p.servers.len(), 5);
        assert!(c.is_finished() && c.next_wake().is_none());
        // a full page, then silence: the end, not an error
        let mut c = QwListClient::new(ListLimits::default(), t0);
        assert_eq!(c.poll_transmit(t0, &mut d), Ok(true));
        assert!(c.handle_datagram(&qw_page(0, full), t0).unwrap().is_some());
        let wake = c.next_wake().unwrap();
        assert_eq!(c.poll_transmit(wake, &mut d), Ok(false));
        assert!(c.is_finished());
        // no answer at all: asked three times, then an error
        let mut c = QwListClient::new(ListLimits::default(), t0);
        let mut at = t0;
        for _ in 0..3 {
            assert_eq!(c.poll_transmit(at, &mut d), Ok(true));
            at = c.next_wake().unwrap();
        }
        assert!(matches!(
            c.poll_transmit(at, &mut d),
            Err(ListError::NoAnswer { attempts: 3, .. })
        ));
    }

    #[test]
    fn an_endless_qw_master_is_cut_by_the_caps() {
        let t0 = Instant::now();
        let full = qwmaster::ENTRIES_PER_PAGE as u32;
        // new full pages for ever: the server cap
        let mut limits = ListLimits::new(Duration::from_secs(60), Duration::from_secs(2));
        limits.max_servers = 1000;
        let mut c = QwListClient::new(limits, t0);
        let mut d = Vec::new();
        assert_eq!(c.poll_transmit(t0, &mut d), Ok(true));
        let mut err = None;
        for i in 0..100 {
            match c.handle_datagram(&qw_page(i * full, full), t0) {
                Ok(_) => {}
                Err(e) => {
                    err = Some((i, e));
                    break;
                }
            }
        }
        assert_eq!(
            err,
            Some((4, ListError::TooManyServers { max: 1000 })),
            "the fifth page passes 1000"
        );
        // the same full page for ever: the page cap
        let mut limits = ListLimits::new(Duration::from_secs(60), Duration::from_secs(2));
        limits.max_pages = 50;
        let mut c = QwListClient::new(limits, t0);
        assert_eq!(c.poll_transmit(t0, &mut d), Ok(true));
        let page = qw_page(0, full);
        let n = (0..1000)
            .take_while(|_| c.handle_datagram(&page, t0).is_ok())
            .count();
        assert_eq!(n, 50);
        // a drip of full pages just inside the page timeout: the run's deadline
        let limits = ListLimits::new(Duration::from_secs(5), Duration::from_secs(2));
        let mut c = QwListClient::new(limits, t0);
        assert_eq!(c.poll_transmit(t0, &mut d), Ok(true));
        let mut at = t0;
        let e = (0..100u32)
            .find_map(|i| {
                at += Duration::from_millis(1900);
                c.handle_datagram(&qw_page(i * full, full), at).err()
            })
            .unwrap();
        assert!(matches!(e, ListError::Deadline { .. }), "{e}");
    }

    fn dp_page(from: u32, n: u32, end: bool) -> Vec<u8> {
        let servers: Vec<SocketAddr> = (from..from + n)
            .map(|i| SocketAddr::from((std::net::Ipv4Addr::from(0x0a00_0000 + i), 27960)))
            .collect();
        let mut d = Vec::new();
        assert_eq!(dpmaster::encode_page(true, &servers, end, &mut d) as u32, n);
        d
    }

    fn dp_client(limits: ListLimits, t0: Instant) -> DpListClient {
        let req = ServersRequest::new(true, Some("Quake3Arena"), 71);
        let mut c = DpListClient::new(req, limits, t0);
        let mut d = Vec::new();
        assert!(c.poll_transmit(t0, &mut d).unwrap());
        assert_eq!(d, b"\xff\xff\xff\xffgetserversExt Quake3Arena 71");
        c
    }

    fn tw_page(from: u32, n: u32) -> Vec<u8> {
        let servers: Vec<SocketAddr> = (from..from + n)
            .map(|i| SocketAddr::from((std::net::Ipv4Addr::from(0x0a00_0000 + i), 8303)))
            .collect();
        let mut d = Vec::new();
        assert_eq!(teemaster::encode_page(&servers, &mut d) as u32, n);
        d
    }

    fn tw_count(n: usize) -> Vec<u8> {
        let mut d = Vec::new();
        teemaster::encode_count(n, &mut d);
        d
    }

    /// A started run: `cou2` and `req2` sent, one right after the other.
    fn tw_client(limits: ListLimits, t0: Instant) -> TwListClient {
        let mut c = TwListClient::new(limits, t0);
        let mut d = Vec::new();
        assert!(c.poll_transmit(t0, &mut d).unwrap());
        assert_eq!(d, b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffcou2");
        assert_eq!(c.next_wake(), Some(t0), "the second part is due at once");
        d.clear();
        assert!(c.poll_transmit(t0, &mut d).unwrap());
        assert_eq!(d, b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffreq2");
        assert!(!c.poll_transmit(t0, &mut Vec::new()).unwrap());
        c
    }

    #[test]
    fn a_tw_list_ends_at_its_count_in_any_order() {
        let t0 = Instant::now();
        let mut c = tw_client(ListLimits::default(), t0);
        let p = c.handle_datagram(&tw_page(0, 75), t0).unwrap().unwrap();
        assert_eq!(p.servers.len(), 75);
        assert_eq!(c.handle_datagram(b"junk", t0), Ok(None));
        let p = c.handle_datagram(&tw_count(100), t0).unwrap().unwrap();
        assert!(p.servers.is_empty() && !c.is_finished());
        // a repeated page adds nothing; a second count changes nothing
        assert!(c
            .handle_datagram(&tw_page(0, 75), t0)
            .unwrap()
            .unwrap()
            .servers
            .is_empty());
        c.handle_datagram(&tw_count(10_000), t0).unwrap();
        let p = c.handle_datagram(&tw_page(75, 25), t0).unwrap().unwrap();
        assert_eq!(p.servers.len(), 25);
        assert!(c.is_finished());
        assert_eq!(c.next_wake(), None);
        // an empty master: the count alone ends it
        let mut c = tw_client(ListLimits::default(), t0);
        c.handle_datagram(&tw_count(0), t0).unwrap();
        assert!(c.is_finished());
        // a count smaller than a page: only that many are taken
        let mut c = tw_client(ListLimits::default(), t0);
        c.handle_datagram(&tw_count(3), t0).unwrap();
        let p = c.handle_datagram(&tw_page(0, 75), t0).unwrap().unwrap();
        assert_eq!(p.servers.len(), 3);
        assert!(c.is_finished());
    }

    /// A 0.6 master datagram as the 0.7 master sends it to our token `to`.
    fn tw7(d06: &[u8], to: u32) -> Vec<u8> {
        let mut d = vec![0x21];
        d.extend_from_slice(&to.to_be_bytes());
        d.extend_from_slice(&0x5555_5555u32.to_be_bytes());
        d.extend_from_slice(&d06[6..]);
        d
    }

    #[test]
    fn a_tw7_list_follows_the_token_handshake() {
        let t0 = Instant::now();
        let limits = ListLimits::new(Duration::from_secs(60), Duration::from_secs(1));
        let mut c = Tw7ListClient::new(0x0102_0304, limits, t0);
        let mut d = Vec::new();
        assert!(c.poll_transmit(t0, &mut d).unwrap());
        assert_eq!(d.len(), 520);
        assert_eq!(
            &d[..12],
            b"\x04\x00\x00\xff\xff\xff\xff\x05\x01\x02\x03\x04"
        );
        assert!(!c.poll_transmit(t0, &mut Vec::new()).unwrap());
        // pages before the token, a token for someone else: ignored
        assert_eq!(
            c.handle_datagram(&tw7(&tw_page(0, 3), 0x0102_0304), t0),
            Ok(None)
        );
        let mut r = Vec::new();
        teemaster7::encode_token_reply(0x0102_0305, 0xaabb_ccdd, &mut r);
        assert_eq!(c.handle_datagram(&r, t0), Ok(None));
        assert!(!c.poll_transmit(t0, &mut Vec::new()).unwrap());
        r.clear();
        teemaster7::encode_token_reply(0x0102_0304, 0xaabb_ccdd, &mut r);
        assert_eq!(c.handle_datagram(&r, t0), Ok(None));
        d.clear();
        assert!(c.poll_transmit(t0, &mut d).unwrap());
        assert_eq!(
            d,
            b"\x21\xaa\xbb\xcc\xdd\x01\x02\x03\x04\xff\xff\xff\xffcou2"
        );
        d.clear();
        assert!(c.poll_transmit(t0, &mut d).unwrap());
        assert_eq!(&d[13..], b"req2");
        // answers to another token are not ours; 0.6 answers neither
        assert_eq!(c.handle_datagram(&tw7(&tw_count(1), 9), t0), Ok(None));
        assert_eq!(c.handle_datagram(&tw_count(1), t0), Ok(None));
        c.handle_datagram(&tw7(&tw_count(5), 0x0102_0304), t0)
            .unwrap();
        let p = c
            .handle_datagram(&tw7(&tw_page(0, 5), 0x0102_0304), t0)
            .unwrap()
            .unwrap();
        assert_eq!(p.servers.len(), 5);
        assert!(c.is_finished());
    }

    #[test]
    fn a_silent_or_lying_tw7_master_ends_with_an_error() {
        let t0 = Instant::now();
        let limits = ListLimits::new(Duration::from_secs(60), Duration::from_secs(1));
        // no token: three handshakes, then a clear error
        let mut c = Tw7ListClient::new(7, limits, t0);
        let mut sent = 0;
        let err = loop {
            let now = c.next_wake().unwrap();
            match c.poll_transmit(now, &mut Vec::new()) {
                Ok(true) => sent += 1,
                Ok(false) => {}
                Err(e) => break e,
            }
        };
        assert_eq!(
            (err.clone(), sent),
            (ListError::NoHandshake { attempts: 3 }, 3)
        );
        assert!(err.to_string().contains("token handshake"), "{err}");
        // a token, then a count the pages never reach
        let mut c = Tw7ListClient::new(7, limits, t0);
        c.poll_transmit(t0, &mut Vec::new()).unwrap();
        let mut r = Vec::new();
        teemaster7::encode_token_reply(7, 8, &mut r);
        c.handle_datagram(&r, t0).unwrap();
        c.poll_transmit(t0, &mut Vec::new()).unwrap();
        c.poll_transmit(t0, &mut Vec::new()).unwrap();
        c.handle_datagram(&tw7(&tw_count(500), 7), t0).unwrap();
        c.handle_datagram(&tw7(&tw_page(0, 75), 7), t0).unwrap();
        // endless new tokens change nothing
        for i in 0..100 {
            r.clear();
            teemaster7::encode_token_reply(7, i, &mut r);
            assert_eq!(c.handle_datagram(&r, t0), Ok(None));
        }
        let now = c.next_wake().unwrap();
        assert_eq!(
            c.poll_transmit(now, &mut Vec::new()),
            Err(ListError::Short {
                got: 75,
                count: Some(500)
            })
        );
    }

    #[test]
    fn hostile_tw_masters_end_with_an_error() {
        let t0 = Instant::now();
        let limits = ListLimits::new(Duration::from_secs(60), Duration::from_secs(1));
        // a count the pages never reach: short, after a page timeout
        let mut c = tw_client(limits, t0);
        c.handle_datagram(&tw_count(500), t0).unwrap();
        c.handle_datagram(&tw_page(0, 75), t0).unwrap();
        let now = c.next_wake().unwrap();
        assert_eq!(
            c.poll_transmit(now, &mut Vec::new()),
            Err(ListError::Short {
                got: 75,
                count: Some(500)
            })
        );
        // pages and no count
        let mut c = tw_client(limits, t0);
        c.handle_datagram(&tw_page(0, 10), t0).unwrap();
        let now = c.next_wake().unwrap();
        let e = c.poll_transmit(now, &mut Vec::new()).unwrap_err();
        assert_eq!(
            e,
            ListError::Short {
                got: 10,
                count: None
            }
        );
        assert!(e.to_string().contains("siz2"), "{e}");
        // a count over the cap
        let mut small = limits;
        small.max_servers = 100;
        let mut c = tw_client(small, t0);
        assert_eq!(
            c.handle_datagram(&tw_count(101), t0),
            Err(ListError::TooManyServers { max: 100 })
        );
        // endless pages of new servers and no count: the server cap
        let mut c = tw_client(small, t0);
        let e = (0..10)
            .find_map(|i| c.handle_datagram(&tw_page(i * 75, 75), t0).err())
            .unwrap();
        assert_eq!(e, ListError::TooManyServers { max: 100 });
        // the same page forever: the page cap
        let mut few = limits;
        few.max_pages = 50;
        let mut c = tw_client(few, t0);
        let e = (0..100)
            .find_map(|_| c.handle_datagram(&tw_page(0, 75), t0).err())
            .unwrap();
        assert_eq!(e, ListError::TooManyPages { max: 50 });
        // a page cut short, and garbage: ignored; no answer after three sends
        let mut c = tw_client(limits, t0);
        let cut = tw_page(0, 2);
        assert_eq!(c.handle_datagram(&cut[..cut.len() - 1], t0), Ok(None));
        let mut sent = 2;
        let err = loop {
            let now = c.next_wake().unwrap();
            match c.poll_transmit(now, &mut Vec::new()) {
                Ok(true) => sent += 1,
                Ok(false) => {}
                Err(e) => break e,
            }
        };
        assert_eq!(
            err,
            ListError::NoAnswer {
                page: 1,
                attempts: 3
            }
        );
        assert_eq!(sent, 6, "cou2 and req2, three times");
        // a drip of junk does not move the deadline
        let mut c = tw_client(limits, t0);
        for ms in 0..5000 {
            let _ = c.handle_datagram(
                b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfflis2\x01",
                t0 + Duration::from_millis(ms),
            );
        }
        assert!(c.next_wake().unwrap() <= t0 + Duration::from_secs(1));
    }

    #[test]
    fn a_dp_list_reads_to_its_end_marker() {
        let t0 = Instant::now();
        let mut c = dp_client(ListLimits::default(), t0);
        let p = c
            .handle_datagram(&dp_page(0, 100, false), t0)
            .unwrap()
            .unwrap();
        assert_eq!(p.servers.len(), 100);
        // a page repeated (a master answering a retry twice) adds nothing
        let p = c
            .handle_datagram(&dp_page(0, 100, false), t0)
            .unwrap()
            .unwrap();
        assert!(p.servers.is_empty());
        assert_eq!(c.handle_datagram(b"junk", t0), Ok(None));
        let p = c
            .handle_datagram(&dp_page(100, 5, true), t0)
            .unwrap()
            .unwrap();
        assert_eq!(p.servers.len(), 5);
        assert!(c.is_finished());
        assert_eq!(c.next_wake(), None);
    }

    #[test]
    fn hostile_dp_masters_end_with_an_error() {
        let t0 = Instant::now();
        let limits = ListLimits::new(Duration::from_secs(60), Duration::from_secs(1));
        // garbage only: the request is sent three times, then no answer
        let mut c = dp_client(limits, t0);
        let mut now = t0;
        let mut sent = 1;
        let err = loop {
            assert_eq!(
                c.handle_datagram(b"\xff\xff\xff\xffgetserversResponse?", now),
                Ok(None)
            );
            now = c.next_wake().unwrap();
            match c.poll_transmit(now, &mut Vec::new()) {
                Ok(true) => sent += 1,
                Ok(false) => {}
                Err(e) => break e,
            }
        };
        assert_eq!(
            err,
            ListError::NoAnswer {
                page: 1,
                attempts: 3
            }
        );
        assert_eq!(sent, 3);
        // pages without the end marker, then silence
        let mut c = dp_client(limits, t0);
        c.handle_datagram(&dp_page(0, 10, false), t0).unwrap();
        let now = c.next_wake().unwrap();
        assert_eq!(now, t0 + Duration::from_secs(1));
        let e = c.poll_transmit(now, &mut Vec::new()).unwrap_err();
        assert_eq!(e, ListError::Stalled { pages: 1 });
        assert!(e.to_string().contains("without its end marker"), "{e}");
        // endless pages of new servers: the server cap
        let mut limits_small = limits;
        limits_small.max_servers = 1000;
        let mut c = dp_client(limits_small, t0);
        let e = (0..100u32)
            .find_map(|i| c.handle_datagram(&dp_page(i * 100, 100, false), t0).err())
            .unwrap();
        assert_eq!(e, ListError::TooManyServers { max: 1000 });
        // endless pages of the same servers: the page cap
        let mut c = dp_client(limits, t0);
        let e = (0..20_000)
            .find_map(|_| c.handle_datagram(&dp_page(0, 1, false), t0).err())
            .unwrap();
        assert_eq!(e, ListError::TooManyPages { max: 10_000 });
        // pages that keep coming before each page timeout: the whole run's deadline
        let mut c = dp_client(limits, t0);
        let mut now = t0;
        let e = loop {
            now += Duration::from_millis(900);
            if let Err(e) = c.handle_datagram(&dp_page(0, 1, false), now) {
                break e;
            }
        };
        assert!(matches!(e, ListError::Deadline { .. }), "{e:?}");
    }

    fn http_page(addrs: &[&str], next: Option<&str>) -> Vec<u8> {
        let servers: Vec<Value> = addrs
            .iter()
            .map(|a| serde_json::json!({ "addr": a, "protocols": ["ogp"] }))
            .collect();
        serde_json::to_vec(&serde_json::json!({ "servers": servers, "next": next })).unwrap()
    }

    #[test]
    fn http_repeats_are_loops() {
        let t0 = Instant::now();
        let mut c = HttpListClient::new(ListLimits::default(), t0);
        let r = c.next_request(t0).unwrap().unwrap();
        assert_eq!(r.cursor, None);
        let p = c
            .handle_page(&http_page(&["127.0.0.1:1"], Some("abc")))
            .unwrap();
        assert_eq!(p.servers.len(), 1);
        assert_eq!(
            c.next_request(t0).unwrap().unwrap().cursor.as_deref(),
            Some("abc")
        );
        // the same page again
        assert_eq!(
            c.handle_page(&http_page(&["127.0.0.1:1"], Some("abc"))),
            Err(ListError::Repeated {
                page: 2,
                what: "page"
            })
        );
        // new servers, a cursor seen before: the page, then the error
        let mut c = HttpListClient::new(ListLimits::default(), t0);
        c.handle_page(&http_page(&["127.0.0.1:1"], Some("abc")))
            .unwrap();
        let p = c
            .handle_page(&http_page(&["127.0.0.1:2"], Some("abc")))
            .unwrap();
        assert_eq!(p.servers.len(), 1);
        assert_eq!(
            c.next_request(t0),
            Err(ListError::Repeated {
                page: 2,
                what: "cursor"
            })
        );
        // the end: no cursor
        let mut c = HttpListClient::new(ListLimits::default(), t0);
        c.handle_page(&http_page(&["127.0.0.1:1"], None)).unwrap();
        assert_eq!(c.next_request(t0), Ok(None));
    }

    #[test]
    fn http_pages_are_parsed_within_bounds() {
        let t0 = Instant::now();
        let mut limits = ListLimits::new(Duration::from_secs(60), Duration::from_secs(2));
        limits.max_page_bytes = 1000;
        limits.max_page_servers = 3;
        let mut c = HttpListClient::new(limits, t0);
        assert_eq!(c.next_request(t0).unwrap().unwrap().max_bytes, 1001);
        let big = format!("{{\"servers\":[{}0]}}", "0,".repeat(600));
        assert_eq!(
            c.handle_page(big.as_bytes()),
            Err(ListError::PageTooLarge { page: 1, max: 1000 })
        );
        let junk = b"{\"servers\":[0,0,0]}";
        let e = HttpListClient::new(limits, t0)
            .handle_page(junk)
            .unwrap_err();
        assert!(e.to_string().contains("not a server"), "{e}");
        let many = http_page(&["127.0.0.1:1"; 4], None);
        let e = HttpListClient::new(limits, t0)
            .handle_page(&many)
            .unwrap_err();
        assert!(e.to_string().contains("more than 3 servers"), "{e}");
        let e = HttpListClient::new(limits, t0)
            .handle_page(b"[1]")
            .unwrap_err();
        assert!(matches!(e, ListError::Malformed { page: 1, .. }), "{e}");
        let p = HttpListClient::new(limits, t0)
            .handle_page(&http_page(&["0.0.0.0:5", "x", "127.0.0.1:7"], None))
            .unwrap();
        assert_eq!(p.servers.len(), 1);
        assert_eq!(
            p.skipped,
            vec![
                ("0.0.0.0:5".to_owned(), "not a host (0.0.0.0/8)"),
                ("x".to_owned(), "not IP:PORT")
            ]
        );
        // all pages together
        let mut limits = ListLimits::new(Duration::from_secs(60), Duration::from_secs(2));
        limits.max_total_bytes = 100;
        let mut c = HttpListClient::new(limits, t0);
        c.handle_page(&http_page(&["127.0.0.1:1"], Some("a")))
            .unwrap();
        assert_eq!(
            c.handle_page(&http_page(&["127.0.0.1:2"], Some("b"))),
            Err(ListError::TooManyBytes { max: 100 })
        );
        // the deadline
        let mut c = HttpListClient::new(ListLimits::default(), t0);
        assert!(matches!(
            c.next_request(t0 + Duration::from_secs(61)),
            Err(ListError::Deadline { .. })
        ));
    }

    #[test]
    fn gamespy_lists_are_read_within_their_bounds() {
        let t0 = Instant::now();
        let limits = ListLimits::new(Duration::from_secs(10), Duration::from_secs(2));
        let mut c = GsListClient::new("ut", "ut", Some("Z5Nfb0"), limits, t0);
        // the greeting in two pieces, then the request with the key's response
        assert_eq!(
            c.handle_bytes(t0, b"\\basic\\\\secure\\ABC"),
            Ok(GsProgress::More)
        );
        let GsProgress::Send(req) = c.handle_bytes(t0, b"DEF").unwrap() else {
            panic!()
        };
        let want = super::super::gsmaster::validate(b"ABCDEF", b"Z5Nfb0");
        let text = String::from_utf8(req).unwrap();
        assert!(
            text.contains(&format!("\\validate\\{want}\\final\\")),
            "{text}"
        );
        assert!(text.ends_with("\\list\\\\gamename\\ut\\final\\"), "{text}");
        // the list in pieces, a duplicate and a broadcast entry
        assert_eq!(
            c.handle_bytes(t0, b"\\ip\\1.2.3.4:7778\\ip\\1.2.3.4:7778"),
            Ok(GsProgress::More)
        );
        assert_eq!(
            c.handle_bytes(t0, b"\\ip\\255.255.255.255:1\\final\\"),
            Ok(GsProgress::Done {
                servers: vec!["1.2.3.4:7778".parse().unwrap()],
                skipped: vec![(
                    "255.255.255.255:1".parse().unwrap(),
                    "the broadcast address"
                )],
            })
        );
        // without a key: the placeholder response
        let mut c = GsListClient::new("ut", "gamespy2", None, limits, t0);
        let GsProgress::Send(req) = c.handle_bytes(t0, b"\\basic\\\\secure\\ABCDEF").unwrap()
        else {
            panic!()
        };
        assert!(req.starts_with(b"\\gamename\\gamespy2\\location\\0\\validate\\00000000\\final\\"));
        // junk, an endless greeting, an endless list, a close, silence
        assert!(matches!(
            c.handle_bytes(t0, b"\\ip\\nonsense\\final\\"),
            Err(ListError::Malformed { .. })
        ));
        let mut c = GsListClient::new("ut", "ut", None, limits, t0);
        assert!(matches!(
            c.handle_bytes(t0, &[b'x'; 2000]),
            Err(ListError::PageTooLarge { max: 1024, .. })
        ));
        let mut small = limits;
        small.max_page_bytes = 100;
        let mut c = GsListClient::new("ut", "ut", None, small, t0);
        c.handle_bytes(t0, b"\\basic\\\\secure\\ABCDEF").unwrap();
        assert!(c.handle_bytes(t0, &[b'x'; 60]).is_ok());
        assert!(matches!(
            c.handle_bytes(t0, &[b'x'; 60]),
            Err(ListError::PageTooLarge { max: 100, .. })
        ));
        assert_eq!(c.handle_closed(), ListError::Unfinished { bytes: 60 });
        assert_eq!(c.next_wake(), t0 + Duration::from_secs(2));
        assert_eq!(
            c.timed_out(t0 + Duration::from_secs(2)),
            ListError::Quiet {
                waited: Duration::from_secs(2)
            }
        );
        assert!(matches!(
            c.timed_out(t0 + Duration::from_secs(10)),
            ListError::Deadline { .. }
        ));
    }

    #[test]
    fn a_cube2_list_reads_addserver_lines_until_the_close() {
        let t0 = Instant::now();
        let mut c = Cube2ListClient::new(ListLimits::default(), t0);
        assert_eq!(c.request(), b"list\n");
        // Red Eclipse 1.6's answer, cut anywhere.
        let answer: &[u8] = b"clearservers\naddserver 127.0.0.1 40011 0 \"My RE\" \"\" \"\" \"?\"\naddserver 0.0.0.0 1 0\naddserver 192.0.2.1 28785\naddserver 127.0.0.1 40011\n";
        for part in answer.chunks(7) {
            c.handle_bytes(t0, part).unwrap();
        }
        // The last line without its newline still counts at the close.
        c.handle_bytes(t0, b"addserver 192.0.2.2 28801").unwrap();
        let (servers, skipped) = c.handle_closed().unwrap();
        let want: Vec<SocketAddr> = ["127.0.0.1:40011", "192.0.2.1:28785", "192.0.2.2:28801"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        assert_eq!(servers, want);
        assert_eq!(skipped.len(), 1);
    }

    #[test]
    fn a_hostile_cube2_master_is_bounded() {
        let t0 = Instant::now();
        let limits = ListLimits {
            max_servers: 3,
            max_page_bytes: 4096,
            ..ListLimits::default()
        };
        // An endless line.
        let mut c = Cube2ListClient::new(limits, t0);
        let e = c.handle_bytes(t0, &[b'a'; 2000]).unwrap_err();
        assert!(matches!(e, ListError::Malformed { .. }), "{e}");
        // More servers than the cap.
        let mut c = Cube2ListClient::new(limits, t0);
        let mut lines = Vec::new();
        for i in 1..=4u8 {
            lines.extend_from_slice(format!("addserver 192.0.2.{i} 1\n").as_bytes());
        }
        let e = c.handle_bytes(t0, &lines).unwrap_err();
        assert_eq!(e, ListError::TooManyServers { max: 3 });
        // More bytes than the cap, a few at a time (junk lines).
        let mut c = Cube2ListClient::new(limits, t0);
        let mut r = Ok(());
        for _ in 0..1000 {
            r = c.handle_bytes(t0, b"junk junk\n");
            if r.is_err() {
                break;
            }
        }
        assert!(matches!(r, Err(ListError::PageTooLarge { .. })), "{r:?}");
        // A drip past the deadline, and silence.
        let mut c = Cube2ListClient::new(limits, t0);
        let mut t = t0;
        let e = loop {
            t += Duration::from_secs(1);
            if let Err(e) = c.handle_bytes(t, b"c") {
                break e;
            }
            assert!(t - t0 <= limits.deadline, "the drip outlived the deadline");
        };
        assert!(matches!(e, ListError::Deadline { .. }), "{e}");
        let c = Cube2ListClient::new(limits, t0);
        assert_eq!(c.next_wake(), t0 + limits.page_timeout);
        assert!(matches!(
            c.timed_out(c.next_wake()),
            ListError::Quiet { .. }
        ));
    }
}

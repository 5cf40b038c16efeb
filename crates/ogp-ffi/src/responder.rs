//! `ogp_responder`: managed (its own sockets and thread) or driven by the game's own
//! socket loop, answering from the status last published.

use std::ffi::{c_int, c_void};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ogp_net::responder::ThreadedResponder;
use ogp_net::StatusCell;
use ogp_proto::responder::{Listener, Responder, Stats, Transmits};
use ogp_proto::Status;

use crate::addr::{from_sockaddr, to_sockaddr};
use crate::config::{self, ogp_config};
use crate::error::{guard, Error, Result, OGP_ERR_INVALID, OGP_ERR_IO, OGP_ERR_SIZE, OGP_OK};
use crate::status::ogp_status;

/// `ogp_responder_poll`'s `*out_wait_ms` when nothing is scheduled.
pub const OGP_WAIT_NONE: u32 = u32::MAX;

/// A responder (opaque): made by `ogp_responder_start` (managed) or `ogp_responder_new`
/// (game-owned socket), freed by `ogp_responder_stop`.
///
/// Thread safety: every function may be called from any thread, concurrently, except
/// `ogp_responder_stop`, which must be the last call on it (no call running or made after
/// it). `ogp_responder_publish` never waits for queries being answered.
#[allow(non_camel_case_types)]
#[derive(Debug)]
pub struct ogp_responder {
    status: Arc<StatusCell>,
    mode: Mode,
}

#[derive(Debug)]
enum Mode {
    /// Sockets and a thread of its own.
    Managed(ThreadedResponder),
    /// Datagrams from the game.
    Owned(Box<Mutex<Owned>>),
}

#[derive(Debug)]
struct Owned {
    responder: Responder,
    out: Transmits,
    clock: Clock,
}

/// The game's milliseconds as `Instant`s: the first value seen is the responder's
/// creation time, and time never goes backwards.
#[derive(Debug)]
struct Clock {
    base: Instant,
    base_ms: Option<u64>,
    last: Instant,
}

impl Clock {
    fn new(now: Instant) -> Self {
        Self {
            base: now,
            base_ms: None,
            last: now,
        }
    }

    fn at(&mut self, now_ms: u64) -> Instant {
        let base_ms = *self.base_ms.get_or_insert(now_ms);
        let t = self
            .base
            .checked_add(Duration::from_millis(now_ms.saturating_sub(base_ms)))
            .unwrap_or(self.last)
            .max(self.last);
        self.last = t;
        t
    }
}

impl Owned {
    fn lock(m: &Mutex<Self>) -> MutexGuard<'_, Self> {
        // Every call leaves the responder whole: a panic in one cannot make it
        // inconsistent, so a poisoned lock is taken as is.
        m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Counters of a responder.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ogp_stats {
    /// Datagrams received.
    pub received: u64,
    /// Datagrams in no protocol spoken here.
    pub unknown: u64,
    /// Answers dropped by a rate limit.
    pub rate_limited: u64,
    /// Datagrams silenced by the ban function (`OGP_BAN_IGNORE`).
    pub banned: u64,
    /// Datagrams ignored by a protocol (malformed, oversize…).
    pub ignored: u64,
    /// Datagrams sent.
    pub sent: u64,
    /// Bytes sent.
    pub sent_bytes: u64,
}

impl From<Stats> for ogp_stats {
    fn from(s: Stats) -> Self {
        Self {
            received: s.received,
            unknown: s.unknown,
            rate_limited: s.rate_limited,
            banned: s.banned,
            ignored: s.ignored,
            sent: s.sent,
            sent_bytes: s.sent_bytes,
        }
    }
}

/// The function `ogp_responder_handle` and `ogp_responder_poll` call to send a datagram:
/// `user` as given, the destination address (`struct sockaddr_in` or `sockaddr_in6`) and
/// its length, the datagram. It is called on the calling thread, before the call
/// returns; the pointers are valid during the call only. Its return value is ignored. It
/// must not unwind (C++ exceptions, longjmp) through the library.
#[allow(non_camel_case_types)]
pub type ogp_send_fn = Option<
    unsafe extern "C" fn(
        user: *mut c_void,
        to: *const libc::sockaddr,
        to_len: libc::socklen_t,
        data: *const u8,
        len: usize,
    ) -> c_int,
>;

/// The responder behind `r`.
///
/// # Safety
///
/// `r` must be `NULL` or a live responder.
unsafe fn responder<'a>(r: *const ogp_responder) -> Result<&'a ogp_responder> {
    // SAFETY: NULL or live (the caller's promise); only shared references are made.
    unsafe { r.as_ref() }.ok_or_else(|| Error::null("responder"))
}

/// Writes `value` to `out` unless `out` is `NULL`.
///
/// # Safety
///
/// `out` must be `NULL` or valid for a write.
unsafe fn write_out<T>(out: *mut T, value: T) -> Result<()> {
    if out.is_null() {
        return Err(Error::null("out"));
    }
    // SAFETY: not NULL, valid for a write (the caller's promise).
    unsafe { out.write(value) };
    Ok(())
}

/// Starts a managed responder: binds every address of `cfg->listen` (and
/// `cfg->listen_ogp_draft`) and answers on a thread of its own until
/// `ogp_responder_stop`. It answers from an empty status until the first
/// `ogp_responder_publish`. On success `*out` is the responder; on error (`OGP_ERR_IO`:
/// an address is taken or not local) nothing is left running and `*out` is untouched.
///
/// # Safety
///
/// `cfg` must be `NULL` or a configuration set up by `ogp_config_init`; `out` must be
/// `NULL` or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ogp_responder_start(
    cfg: *const ogp_config,
    out: *mut *mut ogp_responder,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `cfg`.
        let cfg = unsafe { config::read(cfg) }?;
        if out.is_null() {
            return Err(Error::null("out"));
        }
        // SAFETY: the string fields come from `ogp_config_init` or the caller, NUL-terminated.
        let rc = unsafe { cfg.responder_config() }?;
        let mut listeners = Vec::new();
        // SAFETY: as above.
        for a in unsafe { config::addresses(cfg.listen, "listen") }? {
            listeners.push((a, Listener::Standard));
        }
        // SAFETY: as above.
        for a in unsafe { config::addresses(cfg.listen_ogp_draft, "listen_ogp_draft") }? {
            listeners.push((a, Listener::OgpDraft));
        }
        if listeners.is_empty() {
            return Err(Error::invalid("listen: no address to answer on"));
        }
        let status = StatusCell::new(Status::default());
        let threaded = ogp_net::responder::spawn_thread(&listeners, Arc::clone(&status), rc)
            .map_err(|e| Error::new(OGP_ERR_IO, e.to_string()))?;
        let r = Box::new(ogp_responder {
            status,
            mode: Mode::Managed(threaded),
        });
        // SAFETY: `out` is not NULL, valid for a write.
        unsafe { write_out(out, Box::into_raw(r)) }?;
        Ok(OGP_OK)
    })
}

/// Makes a responder for the game's own sockets: it opens nothing (`cfg->listen` is
/// ignored); the game passes each datagram to `ogp_responder_handle`. Its challenge
/// secret comes from the operating system.
///
/// # Safety
///
/// `cfg` must be `NULL` or a configuration set up by `ogp_config_init`; `out` must be
/// `NULL` or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ogp_responder_new(
    cfg: *const ogp_config,
    out: *mut *mut ogp_responder,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `cfg`.
        let cfg = unsafe { config::read(cfg) }?;
        if out.is_null() {
            return Err(Error::null("out"));
        }
        // SAFETY: the string fields are NULL or NUL-terminated.
        let rc = unsafe { cfg.responder_config() }?;
        let now = Instant::now();
        let responder = Responder::with_random_secret(rc, now)
            .map_err(|e| Error::new(OGP_ERR_IO, format!("no random secret: {e}")))?;
        let r = Box::new(ogp_responder {
            status: StatusCell::new(Status::default()),
            mode: Mode::Owned(Box::new(Mutex::new(Owned {
                responder,
                out: Transmits::default(),
                clock: Clock::new(now),
            }))),
        });
        // SAFETY: `out` is not NULL, valid for a write.
        unsafe { write_out(out, Box::into_raw(r)) }?;
        Ok(OGP_OK)
    })
}

/// Stops a responder and frees it. Managed: stops answering, sends the GameSpy v3
/// "exiting" heartbeats if configured, joins its thread. `NULL` is accepted. Returns
/// `OGP_ERR_IO` if the managed thread failed (it is freed all the same).
///
/// # Safety
///
/// `r` must be `NULL` or a responder not stopped before, with no other call on it
/// running or to come.
#[no_mangle]
pub unsafe extern "C" fn ogp_responder_stop(r: *mut ogp_responder) -> c_int {
    guard(|| {
        if r.is_null() {
            return Ok(OGP_OK);
        }
        // SAFETY: made by `Box::into_raw` in `ogp_responder_start`/`_new`, freed once, and
        // no other call uses it any more (the caller's promise).
        let r = unsafe { Box::from_raw(r) };
        match r.mode {
            Mode::Managed(t) => t
                .stop()
                .map_err(|e| Error::new(OGP_ERR_IO, e.to_string()))?,
            Mode::Owned(_) => {}
        }
        Ok(OGP_OK)
    })
}

/// Publishes `status`: a copy of it answers every query from now on (all protocols
/// together, atomically: a query never sees half of a status). `status` stays the
/// caller's, to change and publish again or to free. Callable from any thread, while
/// queries are answered; it never waits for them.
///
/// # Safety
///
/// `r` must be `NULL` or a live responder; `status` must be `NULL` or a live status not
/// used by another thread during the call.
#[no_mangle]
pub unsafe extern "C" fn ogp_responder_publish(
    r: *const ogp_responder,
    status: *const ogp_status,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `r`.
        let r = unsafe { responder(r) }?;
        // SAFETY: NULL or live, not written during the call (the caller's promise).
        let s = unsafe { status.as_ref() }.ok_or_else(|| Error::null("status"))?;
        r.status.set(s.status.clone());
        Ok(OGP_OK)
    })
}

/// The port of the `index`th listening socket of a managed responder (in the order of
/// `cfg->listen`, then `cfg->listen_ogp_draft`): useful with port 0. Returns the port
/// (1–65535) or a negative error code (`OGP_ERR_INVALID`: no such socket, or a
/// game-owned responder).
///
/// # Safety
///
/// `r` must be `NULL` or a live responder.
#[no_mangle]
pub unsafe extern "C" fn ogp_responder_local_port(r: *const ogp_responder, index: usize) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `r`.
        let r = unsafe { responder(r) }?;
        match &r.mode {
            Mode::Managed(t) => t
                .local_addrs()
                .get(index)
                .map(|a| c_int::from(a.port()))
                .ok_or_else(|| Error::invalid(format!("no listening socket {index}"))),
            Mode::Owned(_) => Err(Error::invalid("a game-owned responder has no sockets")),
        }
    })
}

/// The responder's counters so far, in `*out`. `out_size` is `sizeof(ogp_stats)` of the
/// caller's header: a library with more counters writes only those the caller knows
/// (`OGP_ERR_SIZE` for a size that is not one of a released version's).
///
/// # Safety
///
/// `r` must be `NULL` or a live responder; `out` must be `NULL` or valid for a write of
/// `out_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ogp_responder_stats(
    r: *const ogp_responder,
    out: *mut ogp_stats,
    out_size: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `r`.
        let r = unsafe { responder(r) }?;
        if out.is_null() {
            return Err(Error::null("out"));
        }
        let ours = std::mem::size_of::<ogp_stats>();
        if !STATS_KNOWN_SIZES.contains(&out_size) || out_size > ours {
            return Err(Error::new(
                OGP_ERR_SIZE,
                format!(
                    "out_size is {out_size}, this library writes {STATS_KNOWN_SIZES:?} (sizeof(ogp_stats))"
                ),
            ));
        }
        let stats = ogp_stats::from(match &r.mode {
            Mode::Managed(t) => t.stats(),
            Mode::Owned(m) => Owned::lock(m).responder.stats(),
        });
        // SAFETY: `out` has `out_size` writable bytes (the caller's promise), of which
        // `min(out_size, ours)` are written from a local of `ours` bytes; no overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(
                std::ptr::from_ref(&stats).cast::<u8>(),
                out.cast::<u8>(),
                out_size.min(ours),
            );
        }
        Ok(OGP_OK)
    })
}

/// The sizes of the released versions of `ogp_stats` (one so far).
pub(crate) const STATS_KNOWN_SIZES: [usize; 1] = [std::mem::size_of::<ogp_stats>()];

/// Sends each datagram of `out` to `to` through `send`.
///
/// # Safety
///
/// `send` must be a function of the documented type; it is called with `user`.
unsafe fn send_all<'a>(
    send: unsafe extern "C" fn(
        *mut c_void,
        *const libc::sockaddr,
        libc::socklen_t,
        *const u8,
        usize,
    ) -> c_int,
    user: *mut c_void,
    to: SocketAddr,
    datagrams: impl Iterator<Item = &'a [u8]>,
) -> usize {
    let (storage, len) = to_sockaddr(to);
    let mut n = 0;
    for d in datagrams {
        // SAFETY: the caller's function, with pointers valid for the call.
        unsafe {
            send(
                user,
                std::ptr::from_ref(&storage).cast(),
                len,
                d.as_ptr(),
                d.len(),
            )
        };
        n += 1;
    }
    n
}

fn owned(r: &ogp_responder) -> Result<&Mutex<Owned>> {
    match &r.mode {
        Mode::Owned(m) => Ok(m),
        Mode::Managed(_) => Err(Error::new(
            OGP_ERR_INVALID,
            "a managed responder answers on its own sockets (ogp_responder_new makes one for the game's)",
        )),
    }
}

/// The shared body of `ogp_responder_handle` and `ogp_responder_handle_draft`.
///
/// # Safety
///
/// As `ogp_responder_handle`.
#[allow(clippy::too_many_arguments)]
unsafe fn handle_on(
    kind: Listener,
    r: *const ogp_responder,
    from: *const libc::sockaddr,
    from_len: libc::socklen_t,
    data: *const u8,
    len: usize,
    now_ms: u64,
    send: ogp_send_fn,
    user: *mut c_void,
) -> Result<c_int> {
    // SAFETY: the caller's promise on `r`.
    let r = unsafe { responder(r) }?;
    let m = owned(r)?;
    // SAFETY: the caller's promise on `from`/`from_len`.
    let src = unsafe { from_sockaddr(from, from_len) }?;
    let send = send.ok_or_else(|| Error::null("send"))?;
    if data.is_null() {
        return Err(Error::null("data"));
    }
    if len > isize::MAX as usize {
        return Err(Error::invalid(format!("length {len} is too large")));
    }
    // SAFETY: not NULL, `len` readable bytes (the caller's promise).
    let datagram = unsafe { std::slice::from_raw_parts(data, len) };
    // The answers are built under the lock, then sent without it, so that `send` may
    // call into this responder (publish, even handle) without a deadlock.
    let mut out = {
        let mut o = Owned::lock(m);
        let now = o.clock.at(now_ms);
        let mut out = std::mem::take(&mut o.out);
        let snapshot = r.status.peek();
        o.responder
            .handle_on(kind, now, src, datagram, &snapshot, &mut out);
        out
    };
    // SAFETY: `send` is the caller's function of the documented type.
    let n = unsafe { send_all(send, user, src, out.iter()) };
    out.clear();
    let mut o = Owned::lock(m);
    if o.out.is_empty() {
        // Keep the grown buffers for the next datagram.
        o.out = out;
    }
    Ok(c_int::try_from(n).unwrap_or(c_int::MAX))
}

/// Game-owned mode: handles one datagram `data`/`len` that the game's socket received
/// from `from` (a `struct sockaddr_in` or `sockaddr_in6` of `from_len` bytes) at
/// `now_ms` (any monotonic millisecond clock, the same for every call), and calls
/// `send(user, to, to_len, datagram, datagram_len)` for each answer, to be sent to `to`
/// (the source) from the socket it came in on, before returning. Returns the number of
/// answers (often 0: unknown datagrams, rate limits and abuse get silence) or a negative
/// error code. Nothing the datagram holds makes it fail or panic.
///
/// # Safety
///
/// `r` must be `NULL` or a live responder from `ogp_responder_new`; `from` must be `NULL`
/// or point to `from_len` readable bytes; `data` must be `NULL` or point to `len`
/// readable bytes; `send` must be `NULL` or a function of type `ogp_send_fn`.
#[no_mangle]
pub unsafe extern "C" fn ogp_responder_handle(
    r: *const ogp_responder,
    from: *const libc::sockaddr,
    from_len: libc::socklen_t,
    data: *const u8,
    len: usize,
    now_ms: u64,
    send: ogp_send_fn,
    user: *mut c_void,
) -> c_int {
    // SAFETY: forwarded from the caller.
    guard(|| unsafe {
        handle_on(
            Listener::Standard,
            r,
            from,
            from_len,
            data,
            len,
            now_ms,
            send,
            user,
        )
    })
}

/// `ogp_responder_handle` for a datagram received on the game's OGP v0.02 draft socket
/// (a port of its own: its datagrams cannot be told from OGP v1.01's).
///
/// # Safety
///
/// As `ogp_responder_handle`.
#[no_mangle]
pub unsafe extern "C" fn ogp_responder_handle_draft(
    r: *const ogp_responder,
    from: *const libc::sockaddr,
    from_len: libc::socklen_t,
    data: *const u8,
    len: usize,
    now_ms: u64,
    send: ogp_send_fn,
    user: *mut c_void,
) -> c_int {
    // SAFETY: forwarded from the caller.
    guard(|| unsafe {
        handle_on(
            Listener::OgpDraft,
            r,
            from,
            from_len,
            data,
            len,
            now_ms,
            send,
            user,
        )
    })
}

/// Game-owned mode: tells the responder the game answers on the local address `local`
/// (its socket's bound address), so that GameSpy v3 heartbeats (`cfg->gamespy3_masters`)
/// are sent for it through `ogp_responder_poll`, the first at `now_ms`. Without masters
/// configured it does nothing.
///
/// # Safety
///
/// `r` must be `NULL` or a live responder; `local` must be `NULL` or point to
/// `local_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ogp_responder_add_listener(
    r: *const ogp_responder,
    local: *const libc::sockaddr,
    local_len: libc::socklen_t,
    now_ms: u64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `r`.
        let r = unsafe { responder(r) }?;
        // SAFETY: the caller's promise on `local`/`local_len`.
        let local = unsafe { from_sockaddr(local, local_len) }?;
        let mut o = Owned::lock(owned(r)?);
        let now = o.clock.at(now_ms);
        o.responder.add_listener(local, now);
        Ok(OGP_OK)
    })
}

/// Game-owned mode: sends what is due at `now_ms` (GameSpy v3 heartbeats) through
/// `send`, and writes to `*out_wait_ms` (unless `NULL`) the milliseconds until the next
/// call is due, or `OGP_WAIT_NONE` when nothing is scheduled: a good `poll()` timeout.
///
/// # Safety
///
/// `r` must be `NULL` or a live responder; `send` must be `NULL` or a function of type
/// `ogp_send_fn`; `out_wait_ms` must be `NULL` or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ogp_responder_poll(
    r: *const ogp_responder,
    now_ms: u64,
    send: ogp_send_fn,
    user: *mut c_void,
    out_wait_ms: *mut u32,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `r`.
        let r = unsafe { responder(r) }?;
        let m = owned(r)?;
        let send = send.ok_or_else(|| Error::null("send"))?;
        let (batch, wait) = {
            let mut o = Owned::lock(m);
            let now = o.clock.at(now_ms);
            let status = r.status.load();
            o.responder.handle_timeout(now, &status);
            let batch: Vec<_> = std::iter::from_fn(|| o.responder.poll_transmit()).collect();
            let wait = o.responder.poll_timeout().map_or(OGP_WAIT_NONE, |at| {
                let ms = at.saturating_duration_since(now).as_millis();
                u32::try_from(ms)
                    .unwrap_or(OGP_WAIT_NONE - 1)
                    .min(OGP_WAIT_NONE - 1)
            });
            (batch, wait)
        };
        for t in &batch {
            // SAFETY: `send` is the caller's function of the documented type.
            unsafe { send_all(send, user, t.to, std::iter::once(t.datagram.as_slice())) };
        }
        if !out_wait_ms.is_null() {
            // SAFETY: not NULL, valid for a write.
            unsafe { out_wait_ms.write(wait) };
        }
        Ok(OGP_OK)
    })
}

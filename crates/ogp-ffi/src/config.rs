//! `ogp_config`: responder settings, versioned by their size.

use std::ffi::{c_char, c_int, c_void};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;

use ogp_proto::gamespy3::heartbeat::HeartbeatConfig;
use ogp_proto::gamespy3::responder::ChallengeMode;
use ogp_proto::guard::RateConfig;
use ogp_proto::ogp::uplink::UplinkConfig;
use ogp_proto::responder::{BanAction, ResponderConfig};

use crate::error::{guard, opt_cstr, Error, Result, OGP_ERR_SIZE, OGP_OK};

/// GameSpy v3: a real stateless challenge is required (UT3 / GameSpy 4 style, qstat
/// `-gs4`, gamedig); no reply larger than its request goes to an unproven source. The
/// default.
pub const OGP_GS3_CHALLENGE_REAL: c_int = 0;
/// GameSpy v3: answer exactly as Battlefield 2 does, with or without a challenge (qstat
/// `-gs3`); a reflection amplifier bounded only by the rate limit.
pub const OGP_GS3_CHALLENGE_BF2: c_int = 1;
/// GameSpy v3: not answered at all.
pub const OGP_GS3_OFF: c_int = 2;

/// `ogp_ban_fn`: answer the source normally.
pub const OGP_BAN_ALLOW: c_int = 0;
/// `ogp_ban_fn`: tell the source it is banned (OGP Error 0; silence in protocols without
/// such an error).
pub const OGP_BAN_REJECT: c_int = 1;
/// `ogp_ban_fn`: silence.
pub const OGP_BAN_IGNORE: c_int = 2;

/// The game's decision on a source address (`ogp_config.ban`): `user` as given in
/// `ogp_config.ban_user`, the source's IP address (a `sockaddr_in` or `sockaddr_in6`,
/// port 0); returns `OGP_BAN_ALLOW`, `OGP_BAN_REJECT` or `OGP_BAN_IGNORE` (anything else
/// is `OGP_BAN_ALLOW`). Called for each datagram of a protocol the responder speaks:
/// managed, on the responder's thread; game-owned, inside `ogp_responder_handle`. It must
/// be quick and thread-safe, must not unwind, and must not call `ogp_responder_handle`,
/// `_poll`, `_stats` or `_stop` on the same responder (publishing is fine).
#[allow(non_camel_case_types)]
pub type ogp_ban_fn = Option<
    unsafe extern "C" fn(
        user: *mut c_void,
        addr: *const libc::sockaddr,
        addr_len: libc::socklen_t,
    ) -> c_int,
>;

/// Responder settings. Versioned by size: set `size` to `sizeof(ogp_config)` (which
/// `ogp_config_init` does) so that a library built with more fields reads only those the
/// program knows. Only the sizes of released versions are accepted (up to `ban_user`, up
/// to `ogp_masters`, and today's); any other `size` is `OGP_ERR_SIZE`. Strings are NUL-terminated UTF-8, read during the call only (the
/// library keeps no pointer).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ogp_config {
    /// `sizeof(ogp_config)`, set by `ogp_config_init`.
    pub size: usize,
    /// Managed mode: the addresses to answer on, comma-separated, e.g.
    /// `"0.0.0.0:27015,[::]:27015"` (port 0: any free port, see
    /// `ogp_responder_local_port`). Default `"0.0.0.0:27015"`. Game-owned mode ignores it.
    pub listen: *const c_char,
    /// Managed mode: the addresses of the OGP v0.02 draft's own ports, comma-separated;
    /// `NULL` (the default) for none.
    pub listen_ogp_draft: *const c_char,
    /// Answers per second to each source that proved its address (default 20).
    pub rate: f32,
    /// Burst of those answers (default 40).
    pub burst: f32,
    /// Answers per second to each source that did not, when they are larger than its
    /// request (errors, pings; default 20). Challenges (at most 3 times the request) and
    /// answers no larger than the request are not limited per source, only overall: a
    /// per-source limit on them would let a spoofer using a client's address cut the
    /// client off.
    pub unproven_rate: f32,
    /// Burst of those answers (default 40).
    pub unproven_burst: f32,
    /// GameSpy v3 challenge mode: `OGP_GS3_CHALLENGE_REAL` (default),
    /// `OGP_GS3_CHALLENGE_BF2` or `OGP_GS3_OFF`.
    pub gamespy3_challenge: c_int,
    /// GameSpy v3 master servers to send heartbeats to, comma-separated `host:port`;
    /// `NULL` (the default) for none.
    pub gamespy3_masters: *const c_char,
    /// Send OGP colour information when asked (default 0: the PHP client cannot read
    /// it).
    pub colors: c_int,
    /// Answer OGP queries for players' network addresses (default 0: personal data).
    pub player_addresses: c_int,
    /// Require a valid challenge before a full OGP answer (default 1; 0 makes the server
    /// an amplifier for spoofed queries, bounded by the rate limit).
    pub require_challenge: c_int,
    /// The game's ban decision on each source (`NULL`, the default: everyone answered).
    pub ban: ogp_ban_fn,
    /// Passed to `ban` as is.
    pub ban_user: *mut c_void,
    /// OGP master servers to send master server uplinks to (at start, every 60 s, after
    /// status changes and at exit; docs/master.md), comma-separated `host:port`; `NULL`
    /// (the default) for none. Added after the first version: a caller built against
    /// that one (a smaller `size`) gets the default.
    pub ogp_masters: *const c_char,
    /// Answer Quake III `getinfo` and `getstatus` (default 0: the protocol has no server
    /// challenge, so every reply goes to an unproven source, a `getstatus` reply up to
    /// about 108 times its request; docs/quake3-responder.md). Added in the third
    /// version, with the two budgets below: a caller built against an earlier one gets
    /// the defaults (off).
    pub quake3: c_int,
    /// Quake III reply bytes per second toward one source address (burst: twice as
    /// many); default 14,000, at least 1,400 (one full reply).
    pub quake3_budget: f32,
    /// Quake III reply bytes per second in all (and at once); default 140,000, at least
    /// 1,400.
    pub quake3_total_budget: f32,
}

/// The sizes of the released versions of `ogp_config`: the first (up to `ban_user`), the
/// second (up to `ogp_masters`) and today's (up to `quake3_total_budget`, and its
/// padding). Only these are read, the fields past a caller's size keep their defaults; a
/// size between two versions would end inside a field (a pointer copied in part).
pub(crate) const KNOWN_SIZES: [usize; 3] = [
    std::mem::offset_of!(ogp_config, ogp_masters),
    std::mem::offset_of!(ogp_config, quake3),
    std::mem::size_of::<ogp_config>(),
];

impl Default for ogp_config {
    fn default() -> Self {
        let rc = ResponderConfig::default();
        Self {
            size: std::mem::size_of::<Self>(),
            listen: c"0.0.0.0:27015".as_ptr(),
            listen_ogp_draft: std::ptr::null(),
            rate: rc.rate.per_second,
            burst: rc.rate.burst,
            unproven_rate: rc.unproven_rate.per_second,
            unproven_burst: rc.unproven_rate.burst,
            gamespy3_challenge: OGP_GS3_CHALLENGE_REAL,
            gamespy3_masters: std::ptr::null(),
            colors: 0,
            player_addresses: 0,
            require_challenge: 1,
            ban: None,
            ban_user: std::ptr::null_mut(),
            ogp_masters: std::ptr::null(),
            quake3: c_int::from(rc.quake3.enabled),
            quake3_budget: rc.quake3.per_source.per_second,
            quake3_total_budget: rc.quake3.total.per_second,
        }
    }
}

/// Fills `cfg` with the defaults, `size` included. Call it first, then change fields.
///
/// # Safety
///
/// `cfg` must be `NULL` or valid for a write of `sizeof(ogp_config)` bytes.
#[no_mangle]
pub unsafe extern "C" fn ogp_config_init(cfg: *mut ogp_config) -> c_int {
    guard(|| {
        if cfg.is_null() {
            return Err(Error::null("cfg"));
        }
        // SAFETY: not NULL, valid for a write (the caller's promise).
        unsafe { cfg.write(ogp_config::default()) };
        Ok(OGP_OK)
    })
}

/// A copy of the caller's configuration, checked for its size: the fields the caller's
/// version has, the defaults for the rest.
///
/// # Safety
///
/// `cfg` must be `NULL` or point to `cfg->size` readable bytes.
pub(crate) unsafe fn read(cfg: *const ogp_config) -> Result<ogp_config> {
    if cfg.is_null() {
        return Err(Error::null("cfg"));
    }
    // SAFETY: not NULL; `size` is the first field of every version.
    let size = unsafe { cfg.cast::<usize>().read_unaligned() };
    let ours = std::mem::size_of::<ogp_config>();
    if !KNOWN_SIZES.contains(&size) || size > ours {
        return Err(Error::new(
            OGP_ERR_SIZE,
            format!(
                "cfg->size is {size}, this library reads {KNOWN_SIZES:?} (set it with ogp_config_init)"
            ),
        ));
    }
    let mut out = ogp_config::default();
    // SAFETY: the caller's struct has `size` readable bytes and `out` has `ours >= size`
    // writable ones; they do not overlap (`out` is a local).
    unsafe {
        std::ptr::copy_nonoverlapping(
            cfg.cast::<u8>(),
            std::ptr::from_mut(&mut out).cast::<u8>(),
            size,
        );
    }
    Ok(out)
}

fn rate(per_second: f32, burst: f32, what: &str) -> Result<RateConfig> {
    if !(per_second.is_finite() && burst.is_finite() && per_second >= 0.0 && burst >= 1.0) {
        return Err(Error::invalid(format!(
            "{what}: rate {per_second}/s, burst {burst}: the rate must be 0 or more, the burst 1 or more"
        )));
    }
    Ok(RateConfig::new(per_second, burst))
}

/// A Quake III byte budget: finite, and enough for one full reply (1,400 bytes).
fn byte_budget(bytes: f32, what: &str) -> Result<f32> {
    if !(bytes.is_finite() && (1400.0..=1e12).contains(&bytes)) {
        return Err(Error::invalid(format!(
            "{what} {bytes}: must be 1400 bytes a second (one full reply) or more"
        )));
    }
    Ok(bytes)
}

impl ogp_config {
    /// The responder settings.
    ///
    /// # Safety
    ///
    /// The string fields must be `NULL` or NUL-terminated.
    pub(crate) unsafe fn responder_config(&self) -> Result<ResponderConfig> {
        let mut c = ResponderConfig::default();
        c.rate = rate(self.rate, self.burst, "rate")?;
        c.unproven_rate = rate(self.unproven_rate, self.unproven_burst, "unproven rate")?;
        match self.gamespy3_challenge {
            OGP_GS3_CHALLENGE_REAL => c.gamespy3.challenge = ChallengeMode::Real,
            OGP_GS3_CHALLENGE_BF2 => c.gamespy3.challenge = ChallengeMode::Bf2,
            OGP_GS3_OFF => c.gamespy3.enabled = false,
            other => {
                return Err(Error::invalid(format!(
                    "gamespy3_challenge {other}: not OGP_GS3_CHALLENGE_REAL, _BF2 or OGP_GS3_OFF"
                )))
            }
        }
        c.quake3.enabled = self.quake3 != 0;
        c.quake3.per_source = RateConfig::new(
            byte_budget(self.quake3_budget, "quake3_budget")?,
            2.0 * self.quake3_budget,
        );
        let total = byte_budget(self.quake3_total_budget, "quake3_total_budget")?;
        c.quake3.total = RateConfig::new(total, total);
        c.ogp.colors = self.colors != 0;
        c.ogp.player_addresses = self.player_addresses != 0;
        c.ogp.require_challenge = self.require_challenge != 0;
        c.ogp_draft.require_challenge = self.require_challenge != 0;
        // SAFETY: the caller's promise on the string fields.
        let masters = unsafe { addresses(self.gamespy3_masters, "gamespy3_masters") }?;
        if !masters.is_empty() {
            c.gamespy3_heartbeat = Some(HeartbeatConfig::new(masters));
        }
        // SAFETY: as above.
        let masters = unsafe { addresses(self.ogp_masters, "ogp_masters") }?;
        if !masters.is_empty() {
            c.ogp_uplink = Some(UplinkConfig::new(masters));
        }
        if let Some(f) = self.ban {
            let hook = BanHook {
                f,
                user: self.ban_user,
            };
            c.ban = Some(Arc::new(move |ip| hook.decide(ip)));
        }
        Ok(c)
    }
}

/// A comma-separated list of `host:port` (IPv6 in brackets), each resolved to its first
/// address; `NULL` is the empty list.
///
/// # Safety
///
/// `list` must be `NULL` or NUL-terminated.
pub(crate) unsafe fn addresses(list: *const c_char, what: &str) -> Result<Vec<SocketAddr>> {
    // SAFETY: forwarded from the caller.
    let Some(list) = unsafe { opt_cstr(list, what) }? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let addr = match item.parse::<SocketAddr>() {
            Ok(a) => a,
            Err(_) => item
                .to_socket_addrs()
                .ok()
                .and_then(|mut a| a.next())
                .ok_or_else(|| Error::invalid(format!("{what}: {item:?} is not host:port")))?,
        };
        out.push(addr);
    }
    Ok(out)
}

/// The game's ban function and its user pointer, called from the responder.
struct BanHook {
    f: unsafe extern "C" fn(*mut c_void, *const libc::sockaddr, libc::socklen_t) -> c_int,
    user: *mut c_void,
}

// SAFETY: `ogp_ban_fn` is documented to be thread-safe, `user` included: the game
// promises it may be called from the responder's thread.
unsafe impl Send for BanHook {}
// SAFETY: as above.
unsafe impl Sync for BanHook {}

impl BanHook {
    fn decide(&self, ip: IpAddr) -> BanAction {
        let (sa, len) = crate::addr::to_sockaddr(SocketAddr::new(ip, 0));
        // SAFETY: the game's function of the documented type, with a valid address for
        // the duration of the call.
        let decision = unsafe { (self.f)(self.user, std::ptr::from_ref(&sa).cast(), len) };
        match decision {
            OGP_BAN_REJECT => BanAction::Reject,
            OGP_BAN_IGNORE => BanAction::Ignore,
            _ => BanAction::Allow,
        }
    }
}

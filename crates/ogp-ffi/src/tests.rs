//! The extern functions called as C would: bad calls return errors, hostile datagrams
//! through `ogp_responder_handle` never panic and get bounded replies.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::net::SocketAddr;
use std::ptr::{null, null_mut};

use crate::*;

fn last_error() -> String {
    // SAFETY: the library's static or thread-local NUL-terminated string.
    unsafe { CStr::from_ptr(ogp_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn config() -> ogp_config {
    let mut cfg = std::mem::MaybeUninit::<ogp_config>::uninit();
    // SAFETY: a writable `ogp_config`.
    assert_eq!(unsafe { ogp_config_init(cfg.as_mut_ptr()) }, OGP_OK);
    // SAFETY: initialised by `ogp_config_init`.
    unsafe { cfg.assume_init() }
}

fn owned_responder() -> *mut ogp_responder {
    let cfg = config();
    let mut r = null_mut();
    // SAFETY: valid configuration and out pointer.
    assert_eq!(unsafe { ogp_responder_new(&cfg, &mut r) }, OGP_OK);
    r
}

fn s(text: &str) -> (*const c_char, usize) {
    (text.as_ptr().cast(), text.len())
}

/// What the send callback saw.
#[derive(Default)]
struct Sent {
    datagrams: Vec<(SocketAddr, Vec<u8>)>,
}

unsafe extern "C" fn collect(
    user: *mut c_void,
    to: *const libc::sockaddr,
    to_len: libc::socklen_t,
    data: *const u8,
    len: usize,
) -> c_int {
    // SAFETY: `user` is the `Sent` the test passed; the pointers are valid for the call.
    let sent = unsafe { &mut *user.cast::<Sent>() };
    // SAFETY: the library passes a valid address and datagram.
    let addr = unsafe { crate::addr::from_sockaddr(to, to_len) }.expect("address");
    // SAFETY: as above.
    let d = unsafe { std::slice::from_raw_parts(data, len) }.to_vec();
    sent.datagrams.push((addr, d));
    0
}

fn handle(
    r: *mut ogp_responder,
    from: SocketAddr,
    data: &[u8],
    now_ms: u64,
    sent: &mut Sent,
) -> c_int {
    let (sa, len) = crate::addr::to_sockaddr(from);
    // SAFETY: live responder, a valid address and datagram, a matching callback.
    unsafe {
        ogp_responder_handle(
            r,
            std::ptr::from_ref(&sa).cast(),
            len,
            data.as_ptr(),
            data.len(),
            now_ms,
            Some(collect),
            std::ptr::from_mut(sent).cast(),
        )
    }
}

#[test]
fn bad_calls_return_errors() {
    // SAFETY: every call below is made with the invalid argument under test and
    // otherwise valid ones.
    unsafe {
        assert_eq!(
            ogp_status_set_host_name(null_mut(), c"x".as_ptr(), 1),
            OGP_ERR_NULL
        );
        assert!(last_error().contains("status"), "{}", last_error());

        let st = ogp_status_new();
        let bad = [0xffu8, 0xfe];
        assert_eq!(
            ogp_status_set_host_name(st, bad.as_ptr().cast(), 2),
            OGP_ERR_UTF8
        );
        assert!(last_error().contains("UTF-8"), "{}", last_error());
        let long = "x".repeat(5000);
        assert_eq!(
            ogp_status_set_game_name(st, long.as_ptr().cast(), long.len()),
            OGP_ERR_INVALID
        );
        assert_eq!(ogp_status_set_connect_port(st, 70000), OGP_ERR_INVALID);
        assert_eq!(ogp_status_set_player_team(st, 3, 1), OGP_ERR_INVALID);
        let (k, kl) = s("key");
        assert_eq!(ogp_status_set_rule(st, null(), 3, k, kl), OGP_ERR_NULL);
        let (j, jl) = s("{\"host_name\": 3}");
        assert_eq!(ogp_status_set_json(st, j, jl), OGP_ERR_INVALID);
        assert!(last_error().contains("host_name") || last_error().contains("status JSON"));
        let (j, jl) = s("{\"nope\": 1}");
        assert_eq!(ogp_status_set_json(st, j, jl), OGP_ERR_INVALID);

        let mut cfg = config();
        let mut r = null_mut();
        cfg.size = 8;
        assert_eq!(ogp_responder_new(&cfg, &mut r), OGP_ERR_SIZE);
        cfg.size = std::mem::size_of::<ogp_config>() + 8;
        assert_eq!(ogp_responder_new(&cfg, &mut r), OGP_ERR_SIZE);
        assert!(r.is_null());
        let mut cfg = config();
        cfg.gamespy3_challenge = 7;
        assert_eq!(ogp_responder_new(&cfg, &mut r), OGP_ERR_INVALID);
        let mut cfg = config();
        cfg.rate = f32::NAN;
        assert_eq!(ogp_responder_new(&cfg, &mut r), OGP_ERR_INVALID);
        assert_eq!(ogp_responder_new(null(), &mut r), OGP_ERR_NULL);
        assert_eq!(ogp_responder_new(&config(), null_mut()), OGP_ERR_NULL);
        let mut cfg = config();
        cfg.listen = c"not an address".as_ptr();
        assert_eq!(ogp_responder_start(&cfg, &mut r), OGP_ERR_INVALID);
        cfg.listen = c"".as_ptr();
        assert_eq!(ogp_responder_start(&cfg, &mut r), OGP_ERR_INVALID);

        let r = owned_responder();
        assert_eq!(ogp_responder_publish(r, null()), OGP_ERR_NULL);
        assert_eq!(ogp_responder_publish(null(), st), OGP_ERR_NULL);
        assert_eq!(ogp_responder_local_port(r, 0), OGP_ERR_INVALID);
        let d = [1u8];
        let (sa, len) = crate::addr::to_sockaddr("127.0.0.1:1".parse().expect("addr"));
        let from = std::ptr::from_ref(&sa).cast();
        assert_eq!(
            ogp_responder_handle(r, null(), 0, d.as_ptr(), 1, 0, Some(collect), null_mut()),
            OGP_ERR_NULL
        );
        assert_eq!(
            ogp_responder_handle(r, from, 3, d.as_ptr(), 1, 0, Some(collect), null_mut()),
            OGP_ERR_INVALID
        );
        assert_eq!(
            ogp_responder_handle(r, from, len, null(), 1, 0, Some(collect), null_mut()),
            OGP_ERR_NULL
        );
        assert_eq!(
            ogp_responder_handle(r, from, len, d.as_ptr(), 1, 0, None, null_mut()),
            OGP_ERR_NULL
        );
        let mut out = null_mut();
        assert_eq!(
            ogp_query(null(), OGP_PROTO_AUTO, 100, &mut out, null_mut()),
            OGP_ERR_NULL
        );
        assert_eq!(
            ogp_query(c"127.0.0.1:1".as_ptr(), 999, 100, &mut out, null_mut()),
            OGP_ERR_INVALID
        );
        assert!(out.is_null());

        assert_eq!(ogp_responder_stop(r), OGP_OK);
        assert_eq!(ogp_responder_stop(null_mut()), OGP_OK);
        assert_eq!(ogp_status_free(st), OGP_OK);
        assert_eq!(ogp_status_free(null_mut()), OGP_OK);
        assert_eq!(ogp_string_free(null_mut()), OGP_OK);
    }
}

#[test]
fn status_setters_build_the_model() {
    // SAFETY: a live status and valid strings throughout.
    unsafe {
        let st = ogp_status_new();
        let (h, hl) = s("Host ✓");
        assert_eq!(ogp_status_set_host_name(st, h, hl), OGP_OK);
        assert_eq!(ogp_status_set_slot_max(st, 16), OGP_OK);
        assert_eq!(ogp_status_set_password(st, 1), OGP_OK);
        let (k, kl) = s("sv_gravity");
        let (v, vl) = s("800");
        assert_eq!(ogp_status_set_rule(st, k, kl, v, vl), OGP_OK);
        let (v2, vl2) = s("600");
        assert_eq!(ogp_status_set_rule(st, k, kl, v2, vl2), OGP_OK);
        let t = ogp_status_add_team(st, c"Red".as_ptr(), 3, 5);
        assert_eq!(t, 0);
        assert_eq!(ogp_status_add_player(st, c"a".as_ptr(), 1, 3, 20, 60), 0);
        assert_eq!(ogp_status_add_player(st, c"b".as_ptr(), 1, 4, 30, 61), 1);
        assert_eq!(ogp_status_set_player_team(st, 1, t), OGP_OK);
        assert_eq!(ogp_status_set_player_bot(st, 1, 1), OGP_OK);
        let status = &(*st).status;
        assert_eq!(status.host_name.as_deref(), Some("Host ✓"));
        assert_eq!(status.player_count(), Some(2));
        assert_eq!(status.bot_count(), Some(1));
        assert_eq!(
            status.rules.as_ref().and_then(|r| r.get("sv_gravity")),
            Some("600")
        );
        assert_eq!(ogp_status_set_rule(st, k, kl, null(), 0), OGP_OK);
        assert_eq!((*st).status.rules.as_ref().map(|r| r.len()), Some(0));

        let mut json = null_mut();
        let mut len = 0;
        assert_eq!(ogp_status_to_json(st, &mut json, &mut len), OGP_OK);
        let text = CStr::from_ptr(json).to_str().expect("UTF-8").to_owned();
        assert_eq!(text.len(), len);
        assert_eq!(ogp_string_free(json), OGP_OK);
        let other = ogp_status_new();
        assert_eq!(
            ogp_status_set_json(other, text.as_ptr().cast(), text.len()),
            OGP_OK
        );
        assert_eq!((*other).status, (*st).status);
        ogp_status_free(other);
        ogp_status_free(st);
    }
}

#[test]
fn status_json_escapes_terminal_controls() {
    // A host name a game copied from a hostile player: ESC, C1 CSI, a bidi override and a
    // line separator. The JSON the C API hands out must carry none of them raw (a tool
    // printing it would act on them), and still read back to the same name.
    let name = "a\u{1b}[2Jb\u{9b}31mc\u{202e}d\u{2028}e\u{7f}";
    // SAFETY: a live status and valid strings throughout.
    unsafe {
        let st = ogp_status_new();
        let (h, hl) = s(name);
        assert_eq!(ogp_status_set_host_name(st, h, hl), OGP_OK);
        let mut json = null_mut();
        let mut len = 0;
        assert_eq!(ogp_status_to_json(st, &mut json, &mut len), OGP_OK);
        let text = CStr::from_ptr(json).to_str().expect("UTF-8").to_owned();
        assert_eq!(ogp_string_free(json), OGP_OK);
        ogp_status_free(st);
        for c in ['\u{1b}', '\u{9b}', '\u{202e}', '\u{2028}', '\u{7f}'] {
            assert!(!text.contains(c), "{c:?} raw in {text}");
        }
        assert!(text.contains("\\u202e"), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(back["host_name"], name);
    }
}

/// A tiny deterministic generator (xorshift) for the hostile datagrams.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn hostile_datagrams_get_bounded_replies() {
    let r = owned_responder();
    let st = ogp_status_new();
    // SAFETY: live status and responder, valid strings.
    unsafe {
        let (h, hl) = s("hostile");
        assert_eq!(ogp_status_set_host_name(st, h, hl), OGP_OK);
        for i in 0..64 {
            let name = format!("player{i}");
            assert!(ogp_status_add_player(st, name.as_ptr().cast(), name.len(), i, 10, 10) >= 0);
        }
        assert_eq!(ogp_responder_publish(r, st), OGP_OK);
    }
    let prefixes: [&[u8]; 6] = [
        b"",
        b"\xff\xff\xff\xffOGP\x00",
        b"\xff\xff\xff\xffT",
        b"\xff\xff\xff\xffU",
        b"\xfe\xfd",
        b"\x01",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut sent = Sent::default();
    let mut replies = 0usize;
    for i in 0..20_000u64 {
        let prefix = prefixes[(rng.next() % prefixes.len() as u64) as usize];
        let len = (rng.next() % 600) as usize;
        let mut d = prefix.to_vec();
        d.extend((0..len).map(|_| rng.next() as u8));
        let from: SocketAddr = ([10, 0, (i % 7) as u8, (rng.next() % 200) as u8], 40000).into();
        sent.datagrams.clear();
        let n = handle(r, from, &d, i / 10, &mut sent);
        assert!(n >= 0, "handle failed: {n} {}", last_error());
        assert_eq!(n as usize, sent.datagrams.len());
        for (to, reply) in &sent.datagrams {
            assert_eq!(*to, from);
            // No reply to an unproven source is much larger than its query.
            assert!(
                reply.len() <= (d.len() + 20).max(16),
                "reply of {} bytes to {} bytes",
                reply.len(),
                d.len()
            );
        }
        replies += n as usize;
    }
    let mut stats = ogp_stats::default();
    // SAFETY: live responder, valid out pointer.
    unsafe {
        assert_eq!(
            ogp_responder_stats(r, &mut stats, std::mem::size_of::<ogp_stats>()),
            OGP_OK
        );
        assert_eq!(stats.received, 20_000);
        assert_eq!(stats.sent as usize, replies);
        ogp_status_free(st);
        ogp_responder_stop(r);
    }
}

#[test]
fn own_socket_mode_answers_an_ogp_query_after_the_challenge() {
    let r = owned_responder();
    let st = ogp_status_new();
    // SAFETY: live status and responder.
    unsafe {
        let (h, hl) = s("owned");
        assert_eq!(ogp_status_set_host_name(st, h, hl), OGP_OK);
        assert_eq!(ogp_responder_publish(r, st), OGP_OK);
    }
    let from: SocketAddr = "127.0.0.1:50000".parse().expect("addr");
    let mut sent = Sent::default();
    // The probe from the sans-IO responder's doc: Error 3 with a challenge.
    let probe = [0xff, 0xff, 0xff, 0xff, b'O', b'G', b'P', 0, 3, 1, 0];
    assert_eq!(handle(r, from, &probe, 5, &mut sent), 1);
    assert_eq!(sent.datagrams.len(), 1);
    let mut wait = 0;
    // SAFETY: live responder, valid callback and out pointer.
    unsafe {
        assert_eq!(
            ogp_responder_poll(
                r,
                10,
                Some(collect),
                std::ptr::from_mut(&mut sent).cast(),
                &mut wait
            ),
            OGP_OK
        );
        assert_eq!(wait, OGP_WAIT_NONE);
        ogp_status_free(st);
        ogp_responder_stop(r);
    }
}

#[test]
fn version_is_the_crate_version() {
    // SAFETY: a static NUL-terminated string.
    let v = unsafe { CStr::from_ptr(ogp_version()) };
    assert_eq!(v.to_str().ok(), Some(env!("CARGO_PKG_VERSION")));
}

fn query_json(target: &str, protocol: c_int) -> (c_int, serde_json::Value) {
    let target = std::ffi::CString::new(target).expect("target");
    let mut out = null_mut();
    let mut len = 0;
    // SAFETY: a NUL-terminated target and valid out pointers.
    let rc = unsafe { ogp_query(target.as_ptr(), protocol, 3000, &mut out, &mut len) };
    assert!(!out.is_null(), "no JSON: {rc} {}", last_error());
    // SAFETY: the library's NUL-terminated string, freed once below.
    let text = unsafe { CStr::from_ptr(out) }
        .to_str()
        .expect("UTF-8")
        .to_owned();
    assert_eq!(text.len(), len);
    // SAFETY: returned by `ogp_query`.
    assert_eq!(unsafe { ogp_string_free(out) }, OGP_OK);
    (rc, serde_json::from_str(&text).expect("JSON"))
}

#[test]
fn managed_responder_answers_ogp_query_in_every_protocol() {
    let mut cfg = config();
    cfg.listen = c"127.0.0.1:0".as_ptr();
    cfg.listen_ogp_draft = c"127.0.0.1:0".as_ptr();
    let mut r = null_mut();
    let st = ogp_status_new();
    // SAFETY: valid configuration, out pointer, status and strings.
    let (port, draft_port) = unsafe {
        assert_eq!(
            ogp_responder_start(&cfg, &mut r),
            OGP_OK,
            "{}",
            last_error()
        );
        let (h, hl) = s("managed");
        assert_eq!(ogp_status_set_host_name(st, h, hl), OGP_OK);
        assert_eq!(ogp_status_add_player(st, c"p".as_ptr(), 1, 1, 2, 3), 0);
        assert_eq!(ogp_responder_publish(r, st), OGP_OK);
        (
            ogp_responder_local_port(r, 0),
            ogp_responder_local_port(r, 1),
        )
    };
    assert!(port > 0 && draft_port > 0);
    let target = format!("127.0.0.1:{port}");
    for (protocol, name) in [
        (OGP_PROTO_AUTO, "ogp"),
        (OGP_PROTO_OGP, "ogp"),
        (OGP_PROTO_A2S, "a2s"),
        (OGP_PROTO_GAMESPY3, "gamespy3"),
        (OGP_PROTO_GQP, "gqp"),
    ] {
        let (rc, v) = query_json(&target, protocol);
        assert_eq!(rc, OGP_OK, "{name}: {v}");
        assert_eq!(v["ok"], true);
        assert_eq!(v["schema"], 1);
        assert_eq!(v["protocol"], name);
        assert_eq!(v["status"]["host_name"], "managed", "{name}: {v}");
    }
    let (rc, v) = query_json(&format!("127.0.0.1:{draft_port}"), OGP_PROTO_OGP_DRAFT);
    assert_eq!(rc, OGP_OK, "{v}");
    assert_eq!(v["status"]["host_name"], "managed");

    // The port is taken: OGP_ERR_IO, nothing started.
    let taken = std::ffi::CString::new(target.clone()).expect("address");
    let mut cfg2 = config();
    cfg2.listen = taken.as_ptr();
    let mut r2 = null_mut();
    // SAFETY: valid configuration and out pointer.
    assert_eq!(unsafe { ogp_responder_start(&cfg2, &mut r2) }, OGP_ERR_IO);
    assert!(r2.is_null());
    assert!(last_error().contains(&target), "{}", last_error());
    // SAFETY: a live (managed) responder; the callback is never called.
    let rc = unsafe { ogp_responder_poll(r, 0, Some(collect), null_mut(), null_mut()) };
    assert_eq!(rc, OGP_ERR_INVALID);

    // SAFETY: the live responder and status, stopped and freed once.
    unsafe {
        assert_eq!(ogp_responder_stop(r), OGP_OK);
        ogp_status_free(st);
    }
    // Nothing listens there any more: refused at once (ICMP port unreachable).
    let (rc, v) = query_json(&target, OGP_PROTO_OGP);
    assert!(rc == OGP_ERR_REFUSED || rc == OGP_ERR_TIMEOUT, "{rc}: {v}");
    assert_eq!(v["ok"], false);
    assert!(v["error"] == "refused" || v["error"] == "timeout", "{v}");
    let (rc, v) = query_json("no port here", OGP_PROTO_OGP);
    assert_eq!(rc, OGP_ERR_RESOLVE, "{v}");
}

#[test]
fn draft_socket_and_ipv6_sources_take_hostile_datagrams() {
    let r = owned_responder();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut sent = Sent::default();
    for i in 0..5_000u64 {
        let mut d = b"\xff\xff\xff\xffOGP\x00".to_vec();
        d.extend((0..(rng.next() % 80)).map(|_| rng.next() as u8));
        let from: SocketAddr = format!("[2001:db8::{:x}]:{}", rng.next() % 500, 1024 + i)
            .parse()
            .expect("address");
        let (sa, len) = crate::addr::to_sockaddr(from);
        sent.datagrams.clear();
        // SAFETY: live responder, valid address, datagram and callback.
        let n = unsafe {
            ogp_responder_handle_draft(
                r,
                std::ptr::from_ref(&sa).cast(),
                len,
                d.as_ptr(),
                d.len(),
                i,
                Some(collect),
                std::ptr::from_mut(&mut sent).cast(),
            )
        };
        assert!(n >= 0, "{n}: {}", last_error());
        for (to, reply) in &sent.datagrams {
            assert_eq!(*to, from);
            assert!(reply.len() <= (d.len() + 20).max(16));
        }
    }
    // SAFETY: stopped once.
    unsafe { ogp_responder_stop(r) };
}

#[test]
fn publish_while_another_thread_handles() {
    struct Shared(*mut ogp_responder);
    // SAFETY: the responder is thread-safe (its documented contract); the pointer is
    // only shared while both threads run, and stopped after they are joined.
    unsafe impl Send for Shared {}
    // SAFETY: as above.
    unsafe impl Sync for Shared {}
    let r = Shared(owned_responder());
    std::thread::scope(|scope| {
        let r = &r;
        scope.spawn(move || {
            let st = ogp_status_new();
            for i in 0..2_000 {
                let name = format!("host {i}");
                // SAFETY: a live status used by this thread alone, a live responder.
                unsafe {
                    ogp_status_set_host_name(st, name.as_ptr().cast(), name.len());
                    assert_eq!(ogp_responder_publish(r.0, st), OGP_OK);
                }
            }
            // SAFETY: freed once.
            unsafe { ogp_status_free(st) };
        });
        scope.spawn(move || {
            let mut sent = Sent::default();
            let probe = [0xff, 0xff, 0xff, 0xff, b'O', b'G', b'P', 0, 3, 1, 0];
            for i in 0..2_000u64 {
                let from: SocketAddr = ([10, 1, (i >> 8) as u8, i as u8], 5000).into();
                sent.datagrams.clear();
                assert!(handle(r.0, from, &probe, i, &mut sent) >= 0);
            }
        });
    });
    // SAFETY: both threads are done; stopped once.
    unsafe { ogp_responder_stop(r.0) };
}

#[test]
fn poll_sends_gamespy3_heartbeats_for_the_games_socket() {
    let mut cfg = config();
    cfg.gamespy3_masters = c"127.0.0.1:27900".as_ptr();
    let mut r = null_mut();
    let st = ogp_status_new();
    let mut sent = Sent::default();
    let mut wait = 0u32;
    let (local, local_len) = crate::addr::to_sockaddr("127.0.0.1:27015".parse().expect("addr"));
    // SAFETY: valid configuration, pointers, status and callback throughout.
    unsafe {
        assert_eq!(ogp_responder_new(&cfg, &mut r), OGP_OK, "{}", last_error());
        let (g, gl) = s("Example");
        ogp_status_set_game_name(st, g, gl);
        ogp_responder_publish(r, st);
        assert_eq!(
            ogp_responder_add_listener(r, std::ptr::from_ref(&local).cast(), local_len, 1000),
            OGP_OK
        );
        let user = std::ptr::from_mut(&mut sent).cast();
        assert_eq!(
            ogp_responder_poll(r, 1000, Some(collect), user, &mut wait),
            OGP_OK
        );
        assert!(!sent.datagrams.is_empty(), "no heartbeat");
        let master: SocketAddr = "127.0.0.1:27900".parse().expect("addr");
        assert!(sent.datagrams.iter().all(|(to, _)| *to == master));
        assert!(wait > 0 && wait != OGP_WAIT_NONE, "wait {wait}");
        // Nothing more before it is due.
        sent.datagrams.clear();
        let user = std::ptr::from_mut(&mut sent).cast();
        assert_eq!(
            ogp_responder_poll(r, 1001, Some(collect), user, &mut wait),
            OGP_OK
        );
        assert!(sent.datagrams.is_empty());
        ogp_status_free(st);
        ogp_responder_stop(r);
    }
}

#[test]
fn poll_sends_ogp_uplinks_and_a_first_version_config_still_reads() {
    let mut cfg = config();
    cfg.ogp_masters = c"127.0.0.1:27900".as_ptr();
    let mut r = null_mut();
    let st = ogp_status_new();
    let mut sent = Sent::default();
    let mut wait = 0u32;
    let (local, local_len) = crate::addr::to_sockaddr("127.0.0.1:27015".parse().expect("addr"));
    // SAFETY: valid configuration, pointers, status and callback throughout.
    unsafe {
        assert_eq!(ogp_responder_new(&cfg, &mut r), OGP_OK, "{}", last_error());
        ogp_responder_publish(r, st);
        assert_eq!(
            ogp_responder_add_listener(r, std::ptr::from_ref(&local).cast(), local_len, 1000),
            OGP_OK
        );
        let user = std::ptr::from_mut(&mut sent).cast();
        assert_eq!(
            ogp_responder_poll(r, 1000, Some(collect), user, &mut wait),
            OGP_OK
        );
        let master: SocketAddr = "127.0.0.1:27900".parse().expect("addr");
        assert_eq!(sent.datagrams.len(), 1, "one uplink");
        let (to, d) = &sent.datagrams[0];
        assert_eq!(*to, master);
        assert!(matches!(
            ogp_proto::ogp::decode(d).expect("OGP").message,
            ogp_proto::ogp::Message::MasterUplink { game_id: 0 }
        ));
        ogp_responder_stop(r);
        // A caller built against the first version (no ogp_masters): read, default used.
        cfg.size = std::mem::offset_of!(ogp_config, ogp_masters);
        assert_eq!(ogp_responder_new(&cfg, &mut r), OGP_OK, "{}", last_error());
        sent.datagrams.clear();
        assert_eq!(
            ogp_responder_add_listener(r, std::ptr::from_ref(&local).cast(), local_len, 1000),
            OGP_OK
        );
        let user = std::ptr::from_mut(&mut sent).cast();
        assert_eq!(
            ogp_responder_poll(r, 1000, Some(collect), user, &mut wait),
            OGP_OK
        );
        assert!(sent.datagrams.is_empty(), "the old size has no masters");
        ogp_responder_stop(r);
        cfg.size = std::mem::offset_of!(ogp_config, ogp_masters) - 1;
        assert_eq!(ogp_responder_new(&cfg, &mut r), OGP_ERR_SIZE);
        ogp_status_free(st);
    }
}

unsafe extern "C" fn ban_10_net(
    user: *mut c_void,
    addr: *const libc::sockaddr,
    addr_len: libc::socklen_t,
) -> c_int {
    // SAFETY: `user` is the test's call counter; the address is valid for the call.
    unsafe { *user.cast::<u32>() += 1 };
    // SAFETY: as above.
    let a = unsafe { crate::addr::from_sockaddr(addr, addr_len) }.expect("address");
    assert_eq!(a.port(), 0);
    match a.ip() {
        std::net::IpAddr::V4(v4) if v4.octets()[0] == 10 => OGP_BAN_IGNORE,
        std::net::IpAddr::V4(v4) if v4.octets()[0] == 11 => OGP_BAN_REJECT,
        _ => OGP_BAN_ALLOW,
    }
}

#[test]
fn ban_hook_silences_and_rejects() {
    let mut calls = 0u32;
    let mut cfg = config();
    cfg.ban = Some(ban_10_net);
    cfg.ban_user = std::ptr::from_mut(&mut calls).cast();
    let mut r = null_mut();
    // SAFETY: valid configuration and out pointer.
    assert_eq!(unsafe { ogp_responder_new(&cfg, &mut r) }, OGP_OK);
    let probe = [0xff, 0xff, 0xff, 0xff, b'O', b'G', b'P', 0, 3, 1, 0];
    let mut sent = Sent::default();
    assert_eq!(
        handle(r, ([10, 0, 0, 1], 5000).into(), &probe, 0, &mut sent),
        0
    );
    assert_eq!(
        handle(r, ([11, 0, 0, 1], 5000).into(), &probe, 0, &mut sent),
        1
    );
    assert_eq!(
        handle(r, ([12, 0, 0, 1], 5000).into(), &probe, 0, &mut sent),
        1
    );
    assert_eq!(calls, 3);
    let mut stats = ogp_stats::default();
    // SAFETY: live responder, valid out pointer; stopped once.
    unsafe {
        ogp_responder_stats(r, &mut stats, std::mem::size_of::<ogp_stats>());
        ogp_responder_stop(r);
    }
    assert_eq!(stats.received, 3);
    assert_eq!(stats.banned, 1);
    assert_eq!(stats.sent, 2);
}

#[test]
fn stats_respect_the_callers_size() {
    let r = owned_responder();
    let mut stats = ogp_stats::default();
    // SAFETY: live responder, valid out pointer of the given size; stopped once.
    unsafe {
        assert_eq!(ogp_responder_stats(r, &mut stats, 8), OGP_ERR_SIZE);
        assert_eq!(ogp_responder_stats(r, null_mut(), 64), OGP_ERR_NULL);
        assert_eq!(
            ogp_responder_stats(r, &mut stats, std::mem::size_of::<ogp_stats>()),
            OGP_OK
        );
        ogp_responder_stop(r);
    }
}

/// The C API's game-owned responder is the sans-IO one, so a spoofer sending A2S_INFO
/// (and the OGP probe) with a client's address at 2,000 a second does not stop the
/// client, which asks for a fresh challenge before every query, from being answered;
/// the spoofed requests get their challenges, none larger than 3× the request.
#[test]
fn a_spoofer_cannot_stop_a_client_that_asks_for_a_fresh_challenge() {
    let r = owned_responder();
    let st = ogp_status_new();
    // SAFETY: live status and responder.
    unsafe {
        let (h, hl) = s("spoofed");
        assert_eq!(ogp_status_set_host_name(st, h, hl), OGP_OK);
        assert_eq!(ogp_responder_publish(r, st), OGP_OK);
    }
    let info = b"\xff\xff\xff\xffTSource Engine Query\x00".to_vec();
    let probe = [0xff, 0xff, 0xff, 0xff, b'O', b'G', b'P', 0, 3, 1, 0];
    let victim = |port: u16| -> SocketAddr { ([192, 0, 2, 7], port).into() };
    let mut sent = Sent::default();
    let (mut asked, mut answered, mut largest) = (0, 0, 0.0f64);
    // 5 simulated seconds: 2 spoofed datagrams a millisecond, alternating A2S and OGP;
    // the victim's A2S exchange every 150 ms.
    for ms in 0..5_000u64 {
        for k in 0..2u16 {
            let d: &[u8] = if k == 0 { &info } else { &probe };
            sent.datagrams.clear();
            assert!(handle(r, victim(1024 + k), d, ms, &mut sent) >= 0);
            for (_, reply) in &sent.datagrams {
                largest = largest.max(reply.len() as f64 / d.len() as f64);
            }
        }
        if ms % 150 == 149 {
            asked += 1;
            sent.datagrams.clear();
            handle(r, victim(27005), &info, ms, &mut sent);
            let challenge = match sent.datagrams.as_slice() {
                [(_, c)] if c.len() == 9 && c[4] == b'A' => c[5..9].to_vec(),
                _ => continue,
            };
            let mut again = info.clone();
            again.extend_from_slice(&challenge);
            sent.datagrams.clear();
            handle(r, victim(27005), &again, ms, &mut sent);
            if sent
                .datagrams
                .first()
                .is_some_and(|(_, d)| d.get(4) == Some(&b'I'))
            {
                answered += 1;
            }
        }
    }
    assert_eq!(answered, asked, "victim answered {answered} of {asked}");
    assert!(asked >= 33);
    assert!(largest > 0.0 && largest <= 3.0, "{largest}");
    // SAFETY: live status and responder, each freed once.
    unsafe {
        ogp_status_free(st);
        ogp_responder_stop(r);
    }
}

/// A config followed by spare bytes, so that a `size` one past the struct is still
/// readable memory (the walk below passes every size up to that).
#[repr(C)]
struct PaddedConfig {
    cfg: ogp_config,
    spare: [u8; 16],
}

#[test]
fn only_released_config_sizes_are_read() {
    let first = std::mem::offset_of!(ogp_config, ogp_masters);
    let second = std::mem::offset_of!(ogp_config, quake3);
    let ours = std::mem::size_of::<ogp_config>();
    assert!(first < second && second < ours);
    // The released sizes on 64-bit targets, in bytes: changing one breaks every program
    // built against it (docs/c-api.md, "ABI versioning").
    #[cfg(target_pointer_width = "64")]
    assert_eq!((first, second, ours), (88, 96, 112));
    for size in 0..=ours + 1 {
        let mut padded = PaddedConfig {
            cfg: config(),
            spare: [0xa5; 16],
        };
        padded.cfg.size = size;
        padded.cfg.listen = c"127.0.0.1:0".as_ptr();
        // A real pointer: a size ending inside this field would copy a part of it.
        padded.cfg.ogp_masters = c"127.0.0.1:9".as_ptr();
        let expected = if size == first || size == second || size == ours {
            OGP_OK
        } else {
            OGP_ERR_SIZE
        };
        // SAFETY: `padded` has `ours + 16 > size` readable bytes; valid out pointer.
        unsafe {
            let mut r = null_mut();
            let rc = ogp_responder_new(&padded.cfg, &mut r);
            assert_eq!(
                rc,
                expected,
                "ogp_responder_new, size {size}: {}",
                last_error()
            );
            assert_eq!(r.is_null(), rc != OGP_OK, "size {size}");
            if rc == OGP_ERR_SIZE {
                assert!(last_error().contains("cfg->size"), "{}", last_error());
            }
            assert_eq!(ogp_responder_stop(r), OGP_OK);
            let mut r = null_mut();
            let rc = ogp_responder_start(&padded.cfg, &mut r);
            assert_eq!(
                rc,
                expected,
                "ogp_responder_start, size {size}: {}",
                last_error()
            );
            assert_eq!(r.is_null(), rc != OGP_OK, "size {size}");
            assert_eq!(ogp_responder_stop(r), OGP_OK);
        }
    }
}

#[test]
fn only_released_stats_sizes_are_written() {
    let ours = std::mem::size_of::<ogp_stats>();
    let r = owned_responder();
    for size in 0..=ours + 1 {
        // Room for `ours + 1` bytes; what is written past `size` would show.
        let mut buf = [0xa5u8; 256];
        assert!(buf.len() > ours + 1);
        // SAFETY: a live responder and `buf.len() > size` writable bytes.
        let rc = unsafe { ogp_responder_stats(r, buf.as_mut_ptr().cast(), size) };
        let expected = if size == ours { OGP_OK } else { OGP_ERR_SIZE };
        assert_eq!(
            rc,
            expected,
            "ogp_responder_stats, size {size}: {}",
            last_error()
        );
        assert!(
            buf.iter().skip(size).all(|&b| b == 0xa5),
            "size {size}: bytes written past it"
        );
        if rc != OGP_OK {
            assert!(buf.iter().all(|&b| b == 0xa5), "size {size}: written");
        }
    }
    // SAFETY: the responder made above, stopped once.
    assert_eq!(unsafe { ogp_responder_stop(r) }, OGP_OK);
}

#[test]
fn player_team_is_a_team_index_none_or_spectator() {
    // SAFETY: a live status throughout.
    unsafe {
        let st = ogp_status_new();
        assert_eq!(ogp_status_add_player(st, c"a".as_ptr(), 1, 0, 0, 0), 0);
        // No team yet: only none and spectator.
        for team in [-3, -4, i32::MIN, 0, 1, i32::MAX] {
            assert_eq!(
                ogp_status_set_player_team(st, 0, team),
                OGP_ERR_INVALID,
                "team {team}"
            );
            assert!(last_error().contains("team"), "{}", last_error());
        }
        assert_eq!(ogp_status_set_player_team(st, 0, -1), OGP_OK);
        assert_eq!(ogp_status_set_player_team(st, 0, -2), OGP_OK);
        assert_eq!(ogp_status_add_team(st, c"Red".as_ptr(), 3, 0), 0);
        assert_eq!(ogp_status_add_team(st, c"Blue".as_ptr(), 4, 0), 1);
        assert_eq!(ogp_status_set_player_team(st, 0, 1), OGP_OK);
        assert_eq!(ogp_status_set_player_team(st, 0, 2), OGP_ERR_INVALID);
        assert_eq!(ogp_status_set_player_team(st, 0, -3), OGP_ERR_INVALID);
        // The refused calls left the last good one in place.
        let players = (*st).status.players.as_ref().expect("players");
        assert_eq!(players.first().and_then(|p| p.team), Some(1));
        // A bad player index is still refused with a good team.
        assert_eq!(ogp_status_set_player_team(st, 1, 0), OGP_ERR_INVALID);
        assert_eq!(ogp_status_set_player_team(st, -1, 0), OGP_ERR_INVALID);
        assert_eq!(ogp_status_free(st), OGP_OK);
    }
}

/// `getstatus`, as qstat sends it.
const Q3_GETSTATUS: &[u8] = b"\xFF\xFF\xFF\xFFgetstatus";

/// A game-owned responder from `cfg` (with `size`), given a status with a host name and a
/// player; what it sends to `getstatus` and to `getinfo CHALLENGE`.
fn quake3_replies(cfg: &ogp_config) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let mut r = null_mut();
    // SAFETY: a valid configuration (for its `size`) and out pointer.
    let rc = unsafe { ogp_responder_new(cfg, &mut r) };
    assert_eq!(rc, OGP_OK, "{}", last_error());
    // SAFETY: live responder and status; valid strings.
    unsafe {
        let st = ogp_status_new();
        let (p, n) = s("Q3 via C");
        assert_eq!(ogp_status_set_host_name(st, p, n), OGP_OK);
        let (p, n) = s("q3dm17");
        assert_eq!(ogp_status_set_map(st, p, n), OGP_OK);
        let (p, n) = s("Sarge");
        assert_eq!(ogp_status_add_player(st, p, n, 7, 42, 60), OGP_OK);
        assert_eq!(ogp_responder_publish(r, st), OGP_OK);
        ogp_status_free(st);
    }
    let from: SocketAddr = "127.0.0.1:40000".parse().expect("addr");
    let mut status = Sent::default();
    let n = handle(r, from, Q3_GETSTATUS, 1000, &mut status);
    assert_eq!(usize::try_from(n), Ok(status.datagrams.len()));
    let mut info = Sent::default();
    let getinfo = b"\xFF\xFF\xFF\xFFgetinfo c-api-1";
    let n = handle(r, from, getinfo, 1001, &mut info);
    assert_eq!(usize::try_from(n), Ok(info.datagrams.len()));
    // SAFETY: live responder, stopped once.
    unsafe { ogp_responder_stop(r) };
    let only = |s: Sent| s.datagrams.into_iter().map(|(_, d)| d).collect();
    (only(status), only(info))
}

#[test]
fn quake3_is_answered_only_when_the_config_enables_it() {
    // Default: off.
    let cfg = config();
    assert_eq!(cfg.quake3, 0);
    let (status, info) = quake3_replies(&cfg);
    assert!(
        status.is_empty() && info.is_empty(),
        "{status:02x?} {info:02x?}"
    );

    // On: getstatus carries the published status, getinfo echoes the challenge.
    let mut cfg = config();
    cfg.quake3 = 1;
    let (status, info) = quake3_replies(&cfg);
    let [status] = status.as_slice() else {
        panic!("{} replies to getstatus", status.len())
    };
    let reply = ogp_proto::quake3::decode_reply(status)
        .expect("statusResponse")
        .reply;
    assert_eq!(reply.kind, ogp_proto::quake3::ReplyKind::Status);
    assert_eq!(reply.get("sv_hostname"), Some("Q3 via C"));
    assert_eq!(reply.get("mapname"), Some("q3dm17"));
    let [p] = reply.players.as_slice() else {
        panic!("players: {:?}", reply.players)
    };
    assert_eq!(p.name.as_str(), "Sarge");
    assert_eq!(
        p.before.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
        ["7", "42"]
    );
    let [info] = info.as_slice() else {
        panic!("{} replies to getinfo", info.len())
    };
    let reply = ogp_proto::quake3::decode_reply(info)
        .expect("infoResponse")
        .reply;
    assert_eq!(reply.get("challenge"), Some("c-api-1"));

    // A caller built against the second version (no quake3 field): off, whatever lies
    // past its size.
    cfg.size = std::mem::offset_of!(ogp_config, quake3);
    let (status, info) = quake3_replies(&cfg);
    assert!(
        status.is_empty() && info.is_empty(),
        "{status:02x?} {info:02x?}"
    );

    // A budget that cannot pay one full reply is refused.
    let mut cfg = config();
    cfg.quake3 = 1;
    cfg.quake3_budget = 100.0;
    let mut r = null_mut();
    // SAFETY: valid configuration and out pointer.
    assert_eq!(unsafe { ogp_responder_new(&cfg, &mut r) }, OGP_ERR_INVALID);
    assert!(last_error().contains("quake3_budget"), "{}", last_error());
}

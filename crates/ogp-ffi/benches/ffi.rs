//! The cost of the C boundary: answers per second through `ogp_responder_handle` against
//! the Rust `Responder` directly (an A2S_INFO query with its challenge, answered in
//! full), and publishing a 64-player status (`ogp_responder_publish`: a copy and an
//! atomic swap).
//!
//! Run: `cargo bench -p ogp-ffi --bench ffi`.

#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn

use std::ffi::{c_int, c_void};
use std::net::SocketAddr;
use std::ptr::null_mut;
use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use ogp::*;
use ogp_proto::guard::RateConfig;
use ogp_proto::responder::{Responder, ResponderConfig, Transmits};
use ogp_proto::{MapInfo, Player, Status};

/// A status with `n` players, a map and a few rules.
fn status(n: usize) -> Status {
    let mut status = Status::default();
    status.host_name = Some("Benchmark server".into());
    status.game_name = Some("Bench".into());
    status.map = Some(MapInfo::named("dm_arena"));
    status.slot_max = Some(64);
    status.players = Some(
        (0..n)
            .map(|i| {
                let mut p = Player::default();
                p.name = Some(format!("player{i}").into());
                p.score = Some(i as i32);
                p.ping = Some(30);
                p.time = Some(600);
                p
            })
            .collect(),
    );
    status
}

const UNLIMITED: RateConfig = RateConfig::new(1e9, 1e9);

/// An `ogp_status` holding `status(n)`.
fn c_status(n: usize) -> *mut ogp_status {
    let json = serde_json::to_string(&status(n)).expect("JSON");
    let s = ogp_status_new();
    // SAFETY: a live status and a valid string.
    let rc = unsafe { ogp_status_set_json(s, json.as_ptr().cast(), json.len()) };
    assert_eq!(rc, OGP_OK);
    s
}

unsafe extern "C" fn count(
    user: *mut c_void,
    _to: *const libc::sockaddr,
    _to_len: libc::socklen_t,
    _data: *const u8,
    len: usize,
) -> c_int {
    // SAFETY: `user` is the benchmark's byte counter.
    unsafe { *user.cast::<usize>() += len };
    0
}

const INFO: &[u8] = b"\xff\xff\xff\xffTSource Engine Query\x00";

/// The A2S_INFO query with the challenge the responder issues to `from` (or the plain
/// query if it answers without one).
fn info_query(mut ask: impl FnMut(&[u8]) -> Vec<Vec<u8>>) -> Vec<u8> {
    let replies = ask(INFO);
    match replies.first() {
        Some(r) if r.get(4) == Some(&b'A') => {
            let mut q = INFO.to_vec();
            q.extend_from_slice(r.get(5..9).expect("challenge"));
            q
        }
        _ => INFO.to_vec(),
    }
}

fn bench(c: &mut Criterion) {
    let from: SocketAddr = "127.0.0.1:50000".parse().expect("address");
    let mut g = c.benchmark_group("a2s_info_answer");
    g.throughput(Throughput::Elements(1));
    g.measurement_time(Duration::from_secs(3));

    // The Rust responder directly.
    {
        let mut config = ResponderConfig::default();
        config.rate = UNLIMITED;
        config.unproven_rate = UNLIMITED;
        config.unproven_total = UNLIMITED;
        let start = Instant::now();
        let mut r = Responder::new(config, [7; 32], start);
        let st = status(16);
        let mut out = Transmits::default();
        let query = info_query(|d| {
            r.handle(start, from, d, &st, &mut out);
            out.iter().map(<[u8]>::to_vec).collect()
        });
        g.bench_function("rust_responder", |b| {
            b.iter(|| {
                r.handle(Instant::now(), from, black_box(&query), &st, &mut out);
                assert_eq!(out.len(), 1);
            });
        });
    }

    // Through the C API.
    {
        let mut cfg = std::mem::MaybeUninit::<ogp_config>::uninit();
        // SAFETY: a writable config.
        unsafe { ogp_config_init(cfg.as_mut_ptr()) };
        // SAFETY: initialised above.
        let mut cfg = unsafe { cfg.assume_init() };
        cfg.rate = 1e9;
        cfg.burst = 1e9;
        cfg.unproven_rate = 1e9;
        cfg.unproven_burst = 1e9;
        let mut r = null_mut();
        // SAFETY: valid config and out pointer.
        assert_eq!(unsafe { ogp_responder_new(&cfg, &mut r) }, OGP_OK);
        let st = c_status(16);
        // SAFETY: live responder and status.
        assert_eq!(unsafe { ogp_responder_publish(r, st) }, OGP_OK);
        let (sa, sa_len) = {
            // The C caller's address: a sockaddr_in.
            let mut sin: libc::sockaddr_in = unsafe_zeroed();
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = 50000u16.to_be();
            sin.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
            (
                sin,
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        let t0 = Instant::now();
        let now_ms = || t0.elapsed().as_millis() as u64;
        let handle = |d: &[u8], bytes: &mut usize| -> c_int {
            // SAFETY: live responder, valid address, datagram and callback.
            unsafe {
                ogp_responder_handle(
                    r,
                    std::ptr::from_ref(&sa).cast(),
                    sa_len,
                    d.as_ptr(),
                    d.len(),
                    now_ms(),
                    Some(count),
                    std::ptr::from_mut(bytes).cast(),
                )
            }
        };
        let query = {
            // Collect the challenge reply through a callback that keeps the bytes.
            let mut replies: Vec<Vec<u8>> = Vec::new();
            unsafe extern "C" fn keep(
                user: *mut c_void,
                _to: *const libc::sockaddr,
                _to_len: libc::socklen_t,
                data: *const u8,
                len: usize,
            ) -> c_int {
                // SAFETY: `user` is the Vec below; `data` has `len` bytes.
                unsafe {
                    (*user.cast::<Vec<Vec<u8>>>())
                        .push(std::slice::from_raw_parts(data, len).to_vec());
                }
                0
            }
            info_query(|d| {
                replies.clear();
                // SAFETY: as above, with the keeping callback.
                unsafe {
                    ogp_responder_handle(
                        r,
                        std::ptr::from_ref(&sa).cast(),
                        sa_len,
                        d.as_ptr(),
                        d.len(),
                        0,
                        Some(keep),
                        std::ptr::from_mut(&mut replies).cast(),
                    )
                };
                replies.clone()
            })
        };
        let mut bytes = 0usize;
        g.bench_function("ffi_handle", |b| {
            b.iter(|| {
                assert_eq!(handle(black_box(&query), &mut bytes), 1);
            });
        });
        g.finish();

        let mut p = c.benchmark_group("publish");
        p.measurement_time(Duration::from_secs(3));
        let st64 = c_status(64);
        p.bench_function("ffi_publish_64_players", |b| {
            // SAFETY: live responder and status.
            b.iter(|| assert_eq!(unsafe { ogp_responder_publish(r, st64) }, OGP_OK));
        });
        let cell = ogp_net::StatusCell::new(Status::default());
        let s64 = status(64);
        p.bench_function("rust_statuscell_set_64_players", |b| {
            b.iter(|| cell.set(black_box(&s64).clone()));
        });
        p.finish();
        // SAFETY: freed once, nothing uses them after.
        unsafe {
            ogp_status_free(st);
            ogp_status_free(st64);
            ogp_responder_stop(r);
        }
    }
}

/// An all-zero `sockaddr_in` (valid: plain integers).
fn unsafe_zeroed() -> libc::sockaddr_in {
    // SAFETY: all-zero is a valid `sockaddr_in`.
    unsafe { std::mem::zeroed() }
}

criterion_group!(benches, bench);
criterion_main!(benches);

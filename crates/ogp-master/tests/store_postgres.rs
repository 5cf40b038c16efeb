//! The store on a real PostgreSQL cluster (`scripts/install-postgres.sh`): writes that run
//! at the same time, as the UDP writer and the poller's recorder do, each stay one
//! transaction of their own.
#![cfg(feature = "postgres")]

use std::net::SocketAddr;

use ogp_master::store::{lease_timers, Store, Verified};
use ogp_proto::{Protocol, Status};

fn verified(addr: SocketAddr, hint: &str) -> Verified {
    let mut status = Status::default();
    status.host_name = Some(format!("server {addr}").into());
    Verified {
        addr,
        via: Protocol::Ogp,
        game_hint: Some(hint.to_owned()),
        listing: None,
        gs1_game: None,
        ping_ms: 1.0,
        status,
    }
}

async fn listed(store: &Store) -> Vec<String> {
    let rows = store
        .changed_since(i64::MIN, String::new(), 1_000_000)
        .await
        .unwrap();
    let mut v: Vec<String> = rows
        .into_iter()
        .filter(|r| !r.removed)
        .map(|r| r.addr)
        .collect();
    v.sort();
    v
}

/// Two tasks write batches at once; every batch of one of them has a bad last row (a NUL
/// byte, which PostgreSQL's text refuses). The good task's batches all succeed, whole;
/// of the other's, the refused row loses only itself (the batch is written again row by
/// row) and the call says so. On one connection shared by both (the old store), the
/// failing task's ROLLBACK also took back rows of the good task's open transaction, and
/// its statements failed inside it: 14 of 40 good batches failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_batches_are_separate_transactions() {
    let pg = ogp_testkit::postgres::Cluster::start();
    let store = Store::open(&pg.url()).await.unwrap();
    const ROUNDS: u8 = 40;
    const BATCH: u8 = 20;
    let good = {
        let store = store.clone();
        tokio::spawn(async move {
            let mut failures = Vec::new();
            for r in 0..ROUNDS {
                let batch: Vec<Verified> = (0..BATCH)
                    .map(|i| verified(SocketAddr::from(([127, 1, r, i], 27015)), "good"))
                    .collect();
                if let Err(e) = store.upsert_verified(&batch, 1_000).await {
                    failures.push(format!("round {r}: {e:#}"));
                }
            }
            failures
        })
    };
    let bad = {
        let store = store.clone();
        tokio::spawn(async move {
            let mut refused = Vec::new();
            for r in 0..ROUNDS {
                let mut batch: Vec<Verified> = (0..BATCH)
                    .map(|i| verified(SocketAddr::from(([127, 2, r, i], 27015)), "bad"))
                    .collect();
                batch.push(verified(SocketAddr::from(([127, 3, r, 0], 27015)), "nul\0"));
                if let Err(e) = store.upsert_verified(&batch, 1_000).await {
                    refused.push(format!("{e:#}"));
                }
            }
            refused
        })
    };
    let failures = good.await.unwrap();
    let refused = bad.await.unwrap();
    assert_eq!(
        failures,
        Vec::<String>::new(),
        "the good task's batches failed"
    );
    assert_eq!(
        refused.len(),
        usize::from(ROUNDS),
        "every batch with a NUL byte fails"
    );
    assert!(
        refused
            .iter()
            .all(|e| e.starts_with("1 of 21 rows refused, the rest written")),
        "{refused:?}"
    );
    let all = listed(&store).await;
    let mut want: Vec<String> = (0..ROUNDS)
        .flat_map(|r| {
            (0..BATCH).flat_map(move |i| {
                [1, 2].map(|task| SocketAddr::from(([127, task, r, i], 27015)).to_string())
            })
        })
        .collect();
    want.sort();
    assert_eq!(
        all.len(),
        want.len(),
        "stored: {} rows, want {}",
        all.len(),
        want.len()
    );
    assert_eq!(all, want);

    // The store keeps working after the refusals: reads and writes on every connection.
    let more = verified(SocketAddr::from(([127, 4, 0, 1], 27015)), "after");
    store.upsert_verified(&[more], 2_000).await.unwrap();
    assert_eq!(listed(&store).await.len(), want.len() + 1);
    assert_eq!(store.make_due(3_000).await.unwrap(), want.len() as u64 + 1);

    // A server twice in one batch (it registered twice before the writer ran): written
    // once, as it was last (one statement cannot change a row twice), and the rows
    // returned are the batch's, as the list reads them.
    let twice = SocketAddr::from(([127, 5, 0, 1], 27015));
    let other = SocketAddr::from(([127, 5, 0, 2], 27015));
    let rows = store
        .upsert_verified(
            &[
                verified(twice, "first"),
                verified(other, "other"),
                verified(twice, "last"),
            ],
            4_000,
        )
        .await
        .unwrap();
    let mut got: Vec<(String, Option<String>, i64, bool)> = rows
        .into_iter()
        .map(|r| (r.addr, r.game_hint, r.updated, r.up))
        .collect();
    got.sort();

    // Registrations noted in one statement: an uplink asking for a look (the same
    // server twice in the batch, once asking) brings its next poll within 5 s.
    let t = lease_timers(60_000, 30_000, 5_000);
    let t0 = 1_800_000_000_000;
    let solo = SocketAddr::from(([127, 6, 0, 1], 27015));
    store
        .upsert_verified(&[verified(solo, "solo")], t0)
        .await
        .unwrap();
    store.heartbeat("a", t0).await.unwrap();
    let claimed = |now: i64| {
        let store = store.clone();
        async move {
            store
                .claim_due("a", now, t, 100_000)
                .await
                .unwrap()
                .iter()
                .map(|c| c.addr)
                .filter(|a| *a == solo)
                .count()
        }
    };
    assert_eq!(claimed(t0).await, 1);
    store
        .note_registrations(&[(solo, false), (solo, true), (other, false)], t0 + 100)
        .await
        .unwrap();
    assert_eq!(claimed(t0 + 5_099).await, 0);
    assert_eq!(claimed(t0 + 5_100).await, 1);
    assert_eq!(
        got,
        vec![
            (twice.to_string(), Some("last".into()), 4_000, true),
            (other.to_string(), Some("other".into()), 4_000, true),
        ]
    );
}

/// A Quake III server's listing (game name, protocol number, game type) is stored at
/// verification and read back with the list's rows (migration 2's columns).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quake3_listing_round_trips() {
    let pg = ogp_testkit::postgres::Cluster::start();
    let store = Store::open(&pg.url()).await.unwrap();
    let addr = SocketAddr::from(([127, 4, 0, 1], 27960));
    let mut v = verified(addr, "Quake3Arena");
    v.via = Protocol::Quake3;
    let l = ogp_proto::master::dpmaster::Listing {
        game: Some("Quake3Arena".into()),
        protocol: Some(71),
        gametype: Some("4".into()),
    };
    v.listing = Some(l.clone());
    store.upsert_verified(&[v], 1_000).await.unwrap();
    let rows = store
        .changed_since(i64::MIN, String::new(), 10)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].listing(), Some(l));
}

/// History thinned by age on PostgreSQL as on SQLite (`store::sqlite_tests`): a point a
/// minute for eight days leaves 60 + 60 + 42 + 20 or so, the largest count kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_is_thinned_by_age_and_capped() {
    let pg = ogp_testkit::postgres::Cluster::start();
    let store = Store::open(&pg.url()).await.unwrap();
    let now = 1_800_000_000_000 + 123_456;
    let got = ogp_master::store::thinned_history(&store, now, 60_000, 8 * 86_400_000)
        .await
        .unwrap();
    assert_eq!(got[1], 60, "{got:?}");
    assert!((60..=61).contains(&got[2]), "{got:?}");
    assert!((42..=43).contains(&got[3]), "{got:?}");
    assert!((20..=21).contains(&got[4]), "{got:?}");
    assert_eq!(got[5], 49, "{got:?}");
    let again = ogp_master::store::thinned_history(&store, now, 1_000_000_000, 1)
        .await
        .unwrap();
    assert_eq!(again[0], got[0]);
}

/// What a history point costs in PostgreSQL, table and indexes: `cargo test -p
/// ogp-master --test store_postgres history_bytes -- --ignored --nocapture`
/// (docs/master.md, "History is thinned").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement"]
async fn history_bytes_per_point() {
    let pg = ogp_testkit::postgres::Cluster::start();
    let store = Store::open(&pg.url()).await.unwrap();
    let (servers, points) = (1000u32, 134i64);
    for i in 0..servers {
        let addr = SocketAddr::from(([10, 1, (i >> 8) as u8, i as u8], 27015));
        let p: Vec<(i64, i64)> = (0..points)
            .map(|k| (1_800_000_000_000 + k * 300_000, k % 40))
            .collect();
        store.insert_history(addr, &p).await.unwrap();
    }
    let (client, conn) = tokio_postgres::connect(&pg.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
        .batch_execute("VACUUM ANALYZE history")
        .await
        .unwrap();
    let row = client
        .query_one(
            "SELECT pg_relation_size('history'), pg_indexes_size('history'), COUNT(*) FROM history",
            &[],
        )
        .await
        .unwrap();
    let (table, indexes, n): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
    println!(
        "{n} points: table {} bytes a point, indexes {} bytes a point",
        table / n,
        indexes / n
    );
}

/// Instance `a` polls 200 servers alone; `b` starts beside it (2 s polls, 2 s slack,
/// 2 s liveness, both claiming every 500 ms and recording each poll 50 ms after its
/// claim). Within a poll interval of `b`'s first note each polls about half (the
/// servers that belong to it by the hash of address and name), no server is polled
/// twice within an interval nor waits more than an interval and a claim tick; when `b`
/// stops noting itself, `a` takes everything back within the interval and the liveness
/// window. Before, `a` renewed every lease it held and `b` got nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_started_later_takes_its_share_within_a_poll_interval() {
    use ogp_master::store::{Polled, PolledAnswer};
    use std::collections::HashMap;
    let pg = ogp_testkit::postgres::Cluster::start();
    let store = Store::open(&pg.url()).await.unwrap();
    let t = lease_timers(2_000, 2_000, 2_000);
    const N: usize = 200;
    let t0: i64 = 1_800_000_000_000;
    let servers: Vec<Verified> = (0..N)
        .map(|i| {
            verified(
                SocketAddr::from(([127, 5, (i >> 8) as u8, i as u8], 27015)),
                "x",
            )
        })
        .collect();
    store.upsert_verified(&servers, t0).await.unwrap();
    // every poll: server -> (time, instance)
    let mut polls: HashMap<SocketAddr, Vec<(i64, &str)>> = HashMap::new();
    let b_from = t0 + 4_000;
    let b_until = t0 + 12_000;
    let end = t0 + 18_000;
    let mut now = t0;
    while now < end {
        let mut turn = vec!["a"];
        if (b_from..b_until).contains(&now) {
            // who claims first alternates, as two pollers' ticks do
            turn.insert(usize::from(now / 500 % 2 == 0), "b");
        }
        for (k, who) in turn.into_iter().enumerate() {
            let at = now + 10 * k as i64;
            store.heartbeat(who, at).await.unwrap();
            let claimed = store.claim_share(who, at, t, 4096).await.unwrap();
            let answered: Vec<Polled> = claimed
                .iter()
                .map(|c| {
                    polls.entry(c.addr).or_default().push((at, who));
                    Polled {
                        addr: c.addr,
                        answer: Some(PolledAnswer::new(1.0, &Status::default()).unwrap()),
                        protocols: vec![Protocol::Ogp],
                        history: false,
                        partial: false,
                    }
                })
                .collect();
            store.record_polls(who, answered, at + 50, t).await.unwrap();
        }
        now += 500;
    }
    assert_eq!(polls.len(), N, "every server polled");
    let by = |who: &str, from: i64, to: i64| {
        polls
            .values()
            .filter(|v| v.iter().any(|(at, w)| *w == who && (from..to).contains(at)))
            .count()
    };
    // a alone: everything; the interval after b's first poll interval: a share each
    assert_eq!(by("a", t0, b_from), N);
    let (from, to) = (b_from + 2_000, b_from + 4_000);
    let (a, b) = (by("a", from, to), by("b", from, to));
    eprintln!("servers polled in the second interval with b: a {a}, b {b}");
    assert_eq!(a + b, N, "each server polled once in the interval");
    assert!(
        (N * 35 / 100..=N * 65 / 100).contains(&b),
        "b polls {b} of {N}"
    );
    // a alone again: b's last note at b_until - 490; dead 2 s later, its servers taken as
    // they fall due
    assert_eq!(by("a", b_until + 4_000, end), N);
    // no server polled twice within an interval, none waiting longer than an interval
    // and the claim tick (b's death aside: its servers wait for the liveness window)
    for (addr, v) in &polls {
        for w in v.windows(2) {
            let gap = w[1].0 - w[0].0;
            assert!(
                gap >= t.poll_interval_ms - 10,
                "{addr}: polled again after {gap} ms: {v:?}"
            );
            let bound = if (b_until - 500..b_until + 4_500).contains(&w[1].0) {
                t.poll_interval_ms + t.instance_live_ms + 500
            } else {
                t.poll_interval_ms + 500
            };
            assert!(
                gap <= bound,
                "{addr}: waited {gap} ms (bound {bound}): {v:?}"
            );
        }
    }
}

/// An instance that stops cleanly leaves `instances` ([`Store::leave`], at
/// `Master::shutdown`): the servers it leased are the others' when they come due, not
/// once it no longer counts as live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_that_leaves_hands_its_leases_over_at_once() {
    let pg = ogp_testkit::postgres::Cluster::start();
    let store = Store::open(&pg.url()).await.unwrap();
    // live for a minute without noting itself again: only leaving ends it here
    let t = lease_timers(2_000, 30_000, 60_000);
    let t0: i64 = 1_800_000_000_000;
    let addr = SocketAddr::from(([127, 7, 0, 1], 27015));
    store
        .upsert_verified(&[verified(addr, "x")], t0)
        .await
        .unwrap();
    let claimed = |who: &'static str, now: i64| {
        let store = store.clone();
        async move {
            store
                .claim_due(who, now, t, 100)
                .await
                .unwrap()
                .iter()
                .filter(|c| c.addr == addr)
                .count()
        }
    };
    store.heartbeat("b", t0).await.unwrap();
    assert_eq!(claimed("b", t0).await, 1, "b alone takes it");
    let due = t0 + t.poll_interval_ms;
    store.heartbeat("a", due).await.unwrap();
    assert_eq!(claimed("a", due).await, 0, "due again, and b's lease holds");
    assert_eq!(store.live(due, t).await.unwrap(), 2);
    store.leave("b").await.unwrap();
    assert_eq!(store.live(due, t).await.unwrap(), 1);
    assert_eq!(claimed("a", due + 1).await, 1, "b gone: a takes it at once");
}

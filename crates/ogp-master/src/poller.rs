//! Polling: every listed server is queried again each poll interval through the scan
//! engine, by whichever instance holds its lease; what it answered is written back in
//! batches.
//!
//! A discovery poll (the first, and every `rediscover_every`-th) sends the queries of
//! every protocol together (the scan gets a socket per protocol: it runs one query per
//! socket and address at a time); each protocol it did not know that answers is written at
//! once ([`Polled::partial`]) and the list read again, so that a newly listed server is
//! on the lists of every protocol it speaks within a round trip or two, not when the
//! slowest protocol has given up (up to the scan's 6 s deadline).
//!
//! The first discovery queries every protocol in full (the richest answer is the status
//! kept). A rediscovery queries in full only the protocol the server registered with,
//! whose status is kept, as a regular poll does, and probes the others
//! ([`ogp_proto::client::Machine::probe`]): one exchange each, its first reply (a
//! challenge counts) proving the server still speaks the protocol; the protocols it is
//! known to speak keep the scan's retries, so one lost datagram does not take it off
//! their lists, and the others get one datagram. A rediscovery of an `ogp serve` costs 23
//! datagrams (35 when every protocol was queried in full), a regular poll 2: at the
//! default `rediscover_every` of 30, 2.7 datagrams a poll on average (4.1 at 10)
//! ([`poll_protocols`]).
//!
//! The poller judges every address it is given again ([`may_poll`]): a row that no
//! entrance would take (written by an older master, or by anyone into a shared
//! PostgreSQL) is not polled but recorded as unanswered.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ogp_net::scan::{self, ScanConfig, ScanResult, Target};
use ogp_proto::client::Details;
use ogp_proto::master::addr::{canonical, may_poll};
use ogp_proto::{Protocol, Status};
use tokio::sync::{mpsc, watch};

use crate::metrics::label;
use crate::store::{Claim, Polled, PolledAnswer};
use crate::{now_ms, Shared};

/// Servers being polled at once (claimed, not yet recorded).
const MAX_IN_POLL: usize = 4096;

/// Protocols a discovery poll asks at most: every auto-detectable one and the one the
/// server registered with.
const DISCOVERY_PROTOCOLS: usize = Protocol::AUTO.len() + 1;

/// The longest a poll runs from its claim (the lease it takes covers it): the scan's
/// deadline for a target (6 s from its first datagram) and 4 s queued behind the rate
/// cap (a full poller, [`MAX_IN_POLL`] servers, asks at most 36,864 queries: under 4 s
/// at the default 10,000 a second).
pub(crate) const POLL_MAX_MS: i64 = 10_000;

/// Shortest time between two reads of the list after discovery news, and between two
/// claims woken by verifications (a flood of registrations makes no more of either).
const NEWS_GAP: Duration = Duration::from_millis(100);

struct InPoll {
    claim: Claim,
    discovery: bool,
    expected: usize,
    /// The protocols that answered.
    answered: Vec<Protocol>,
    /// The richest answer so far (its rank in [`Protocol::AUTO`], ping, status): only
    /// one status is held per server, however many protocols answer.
    best: Option<(usize, f64, Status)>,
}

fn rank(p: Protocol) -> usize {
    Protocol::AUTO
        .iter()
        .position(|x| *x == p)
        .unwrap_or(Protocol::AUTO.len())
}

type Pending = Arc<Mutex<HashMap<SocketAddr, InPoll>>>;

/// How a poll asks one protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ask {
    protocol: Protocol,
    /// Retries while the server is silent (`None`: the scan's, 3: four datagrams in
    /// 2.32 s).
    retries: Option<u32>,
    /// Only whether the server speaks it: one exchange ([`Target::with_probe`]).
    probe: bool,
}

/// The protocols a poll asks, and how.
///
/// A regular poll asks the protocol the server registered with (`via`), in full. A
/// discovery poll asks every auto-detectable protocol too. The first (no poll yet, the
/// server just verified) queries each in full with the scan's retries: the richest
/// answer is the status kept, and a lost datagram does not keep the server off a list.
/// A later one (every `rediscover_every`-th poll) queries `via` in full and only probes
/// the others ([`Machine::probe`](ogp_proto::client::Machine::probe)): the protocol's
/// first request, its first reply (a challenge counts) proving the server still speaks
/// it. Those the server is known to speak keep the scan's retries (a lost datagram does
/// not take it off their lists); the others get one datagram. An `ogp serve` (OGP,
/// GameSpy v3, A2S and GQP of the 22) cost 35 datagrams a rediscovery when every
/// protocol was queried in full (A2S four, a silent Unreal 2 three, Cube 2 four…); 23
/// now, one per protocol and OGP's challenge and query
/// (`tests::a_rediscovery_of_an_ogp_serve_sends_23_datagrams`).
fn poll_protocols(claim: &Claim, discovery: bool) -> Vec<Ask> {
    let full = |protocol| Ask {
        protocol,
        retries: None,
        probe: false,
    };
    if !discovery {
        return vec![full(claim.via)];
    }
    let first = claim.polls == 0;
    let mut v: Vec<Ask> = Protocol::AUTO
        .iter()
        .map(|&p| {
            if first || p == claim.via {
                full(p)
            } else {
                let known = claim.protocols.contains(&p);
                Ask {
                    protocol: p,
                    retries: (!known).then_some(0),
                    probe: true,
                }
            }
        })
        .collect();
    if !Protocol::AUTO.contains(&claim.via) {
        v.push(full(claim.via));
    }
    v
}

fn sorted(mut protocols: Vec<Protocol>) -> Vec<Protocol> {
    protocols.sort_by_key(|x| Protocol::ALL.iter().position(|y| y == x).unwrap_or(9));
    protocols.dedup();
    protocols
}

fn stored(addr: SocketAddr, ping: f64, s: &Status) -> Option<PolledAnswer> {
    match PolledAnswer::new(ping, s) {
        Ok(a) => Some(a),
        Err(e) => {
            tracing::warn!("{addr}: cannot store its status: {e}");
            None
        }
    }
}

fn finish(p: InPoll, history_resolution_ms: i64, now: i64) -> Polled {
    let mut protocols = p.answered;
    if !p.discovery {
        protocols.extend(p.claim.protocols.iter().copied());
        protocols.push(p.claim.via);
    }
    let answer = p
        .best
        .and_then(|(_, ping, s)| stored(p.claim.addr, ping, &s));
    Polled {
        addr: p.claim.addr,
        history: answer.is_some() && now - p.claim.last_history >= history_resolution_ms,
        answer,
        protocols: sorted(protocols),
        partial: false,
    }
}

/// What a discovery poll still running has learned when a protocol it did not know
/// answered: the protocols known before and those that answered, and the richest status
/// so far.
fn learned(p: &InPoll) -> Option<Polled> {
    let (_, ping, s) = p.best.as_ref()?;
    let mut protocols = p.answered.clone();
    protocols.extend(p.claim.protocols.iter().copied());
    protocols.push(p.claim.via);
    Some(Polled {
        addr: p.claim.addr,
        answer: Some(stored(p.claim.addr, *ping, s)?),
        protocols: sorted(protocols),
        history: false,
        partial: true,
    })
}

/// The polls of one batch to write: a partial one superseded by a later poll of the
/// same server in the batch is left out.
fn superseded_left_out(batch: Vec<Polled>) -> Vec<Polled> {
    let mut last: HashMap<SocketAddr, usize> = HashMap::with_capacity(batch.len());
    for (i, p) in batch.iter().enumerate() {
        last.insert(p.addr, i);
    }
    batch
        .into_iter()
        .enumerate()
        .filter(|(i, p)| !p.partial || last.get(&p.addr) == Some(i))
        .map(|(_, p)| p)
        .collect()
}

/// Notes this instance in the database every quarter of the time after which it would
/// count as dead, until `stop`: on a task of its own, so that a poller waiting for room
/// in the scan, or for the database, is not taken for dead.
pub(crate) async fn heartbeat(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let every = u64::try_from(shared.timers.instance_live_ms / 4).unwrap_or(250);
    let mut tick = tokio::time::interval(Duration::from_millis(every.max(50)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.changed() => break,
        }
        let t = Instant::now();
        if let Err(e) = shared.store.heartbeat(&shared.instance, now_ms()).await {
            tracing::warn!("noting this instance in the database: {e:#}");
        }
        shared.metrics.db("heartbeat", t);
    }
}

/// Claims due servers and feeds them to the scan, until `stop`.
pub(crate) async fn run(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let mut config = ScanConfig::default();
    config.rate = shared.config.poll_rate.max(1);
    // a rediscovery holds 22 targets, the silent ones for an attempt's timeout (0.5 s):
    // at 4,096 in flight, rediscoveries went at most 4,096 / 11 ≈ 370 a second
    config.max_in_flight = 4 * MAX_IN_POLL;
    // A discovery poll's protocols query the server together: the scan engine runs one
    // query per socket and address at a time (a third query to an address waits for
    // one of the two default sockets), so as many sockets as a discovery has protocols,
    // sharing the default sockets' receive buffer between them.
    let default_sockets = config.sockets.max(1);
    config.sockets = default_sockets.max(DISCOVERY_PROTOCOLS);
    config.recv_buffer =
        (config.recv_buffer.saturating_mul(default_sockets) / config.sockets).max(1 << 20);
    let scan = match scan::start(config) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("the poller cannot open its sockets: {e}");
            return;
        }
    };
    let pending: Pending = Arc::new(Mutex::new(HashMap::new()));
    let (done_tx, done_rx) = mpsc::channel::<Polled>(1024);
    let refuse_tx = done_tx.clone();
    let collector = tokio::spawn(collect(
        shared.clone(),
        pending.clone(),
        scan.results,
        done_tx,
    ));
    let recorder = tokio::spawn(record(shared.clone(), done_rx));
    let targets = scan.targets;
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    // a loop held up (waiting for room in the scan) claims once after, not once per
    // tick missed: each claim is a statement on the writing connection
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut next_id: u64 = 0;
    let mut last_claim = Instant::now();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = shared.poll_now.notified() => {
                tokio::time::sleep(NEWS_GAP.saturating_sub(last_claim.elapsed())).await;
            }
            _ = stop.changed() => break,
        }
        last_claim = Instant::now();
        let room =
            MAX_IN_POLL.saturating_sub(pending.lock().map(|p| p.len()).unwrap_or(MAX_IN_POLL));
        if room == 0 {
            continue;
        }
        let t = Instant::now();
        let claims = shared
            .store
            .claim_share(
                &shared.instance,
                now_ms(),
                shared.timers,
                i64::try_from(room).unwrap_or(0),
            )
            .await;
        shared.metrics.db("claim_due", t);
        let claims = match claims {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!("claiming servers to poll: {e:#}");
                continue;
            }
        };
        if !claims.is_empty() {
            tracing::debug!(
                "claimed {} server(s) to poll (address, polls so far): {:?}",
                claims.len(),
                claims.iter().map(|c| (c.addr, c.polls)).collect::<Vec<_>>()
            );
        }
        let every = i64::from(shared.config.rediscover_every.max(1));
        let (claims, refused): (Vec<Claim>, Vec<Claim>) = claims
            .into_iter()
            .partition(|c| may_poll(c.addr.ip(), shared.config.allow_private));
        if let Some(first) = refused.first() {
            tracing::warn!(
                "not polling {} server(s) whose address is not global (first: {}): \
                 recorded as unanswered",
                refused.len(),
                first.addr
            );
        }
        for c in refused {
            let down = Polled {
                addr: c.addr,
                answer: None,
                protocols: Vec::new(),
                history: false,
                partial: false,
            };
            if refuse_tx.send(down).await.is_err() {
                break;
            }
        }
        for claim in claims {
            let discovery = claim.polls % every == 0;
            let protocols = poll_protocols(&claim, discovery);
            // what the row holds stays its key; the query goes to the canonical form
            let addr = canonical(claim.addr);
            if let Ok(mut p) = pending.lock() {
                // claimed again while its poll still runs (due again, its lease ours): that
                // poll records it, and a second one would be mixed up with it
                if p.contains_key(&addr) {
                    continue;
                }
                p.insert(
                    addr,
                    InPoll {
                        claim,
                        discovery,
                        expected: protocols.len(),
                        answered: Vec::new(),
                        best: None,
                    },
                );
            }
            for ask in protocols {
                next_id += 1;
                let target = Target::new(addr.to_string(), Some(ask.protocol))
                    .with_id(next_id)
                    .with_retries(ask.retries)
                    .with_probe(ask.probe);
                tokio::select! {
                    r = targets.send(target) => if r.is_err() { break },
                    _ = stop.changed() => break,
                }
            }
        }
    }
    drop(targets);
    collector.abort();
    recorder.abort();
}

async fn collect(
    shared: Arc<Shared>,
    pending: Pending,
    mut results: mpsc::Receiver<ScanResult>,
    done: mpsc::Sender<Polled>,
) {
    let history_ms = i64::try_from(shared.config.history_resolution_secs.saturating_mul(1000))
        .unwrap_or(i64::MAX);
    while let Some(r) = results.recv().await {
        let Ok(addr) = r.target.parse::<SocketAddr>().map(canonical) else {
            continue;
        };
        let mut partial = None;
        let finished = {
            let Ok(mut map) = pending.lock() else { return };
            let Some(p) = map.get_mut(&addr) else {
                continue;
            };
            p.expected = p.expected.saturating_sub(1);
            if let (Ok(a), Some(proto)) = (r.outcome, r.requested) {
                p.answered.push(proto);
                // a probe's answer says the server speaks it, with no status
                let probed = matches!(a.details, Details::Probed);
                if !probed && p.best.as_ref().is_none_or(|(r, _, _)| rank(proto) < *r) {
                    p.best = Some((rank(proto), a.ping_ms, a.status));
                }
                let new = proto != p.claim.via && !p.claim.protocols.contains(&proto);
                if p.discovery && new && p.expected > 0 {
                    partial = learned(p);
                }
            }
            if p.expected == 0 {
                map.remove(&addr)
            } else {
                None
            }
        };
        if let Some(p) = partial {
            if done.send(p).await.is_err() {
                return;
            }
        }
        if let Some(p) = finished {
            let polled = finish(p, history_ms, now_ms());
            let outcome = if polled.answer.is_some() {
                "up"
            } else {
                "down"
            };
            shared
                .metrics
                .polls
                .get_or_create(&label("outcome", outcome))
                .inc();
            if done.send(polled).await.is_err() {
                return;
            }
        }
    }
}

/// Writes finished polls in batches (up to 500, or what arrived within 200 ms; 20 ms
/// when a discovery has news).
async fn record(shared: Arc<Shared>, mut done: mpsc::Receiver<Polled>) {
    let mut last_refresh = Instant::now();
    loop {
        let Some(first) = done.recv().await else {
            return;
        };
        let started = Instant::now();
        let mut batch = vec![first];
        // a discovery's news of a protocol is written without the batch's wait (but the
        // list is read again at most every NEWS_GAP)
        let wait = if batch.iter().any(|p| p.partial) {
            Duration::from_millis(20).max(NEWS_GAP.saturating_sub(last_refresh.elapsed()))
        } else {
            Duration::from_millis(200)
        };
        let deadline = tokio::time::sleep(wait);
        tokio::pin!(deadline);
        while batch.len() < 500 {
            tokio::select! {
                p = done.recv() => match p { Some(p) => batch.push(p), None => break },
                () = &mut deadline => break,
            }
        }
        let batch = superseded_left_out(batch);
        tracing::debug!(
            "recording {} poll(s) (address, answered, partial): {:?}",
            batch.len(),
            batch
                .iter()
                .map(|p| (p.addr, p.answer.is_some(), p.partial))
                .collect::<Vec<_>>()
        );
        let news = batch
            .iter()
            .any(|p| p.partial)
            .then(|| batch.iter().map(|p| crate::store::key(p.addr)).collect());
        let t = Instant::now();
        let res = shared
            .store
            .record_polls(&shared.instance, batch, now_ms(), shared.timers)
            .await;
        shared.metrics.db("record_polls", t);
        if let (Some(addrs), true) = (news, res.is_ok()) {
            // show what discovery learned now rather than at the next refresh (these
            // servers' rows alone)
            last_refresh = Instant::now();
            if let Err(e) = shared.refresh_addrs(addrs).await {
                tracing::warn!("reading the list from the database: {e:#}");
            }
        }
        shared
            .metrics
            .poll_batch_seconds
            .observe(started.elapsed().as_secs_f64());
        if let Err(e) = res {
            tracing::warn!("recording polls: {e:#}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn polled(addr: &str, partial: bool, protocols: &[Protocol]) -> Polled {
        Polled {
            addr: addr.parse().unwrap(),
            answer: None,
            protocols: protocols.to_vec(),
            history: false,
            partial,
        }
    }

    #[test]
    fn a_claims_lease_outlasts_the_scans_deadline_for_a_poll() {
        let deadline = ScanConfig::default().options.timing.total_timeout;
        let deadline = i64::try_from(deadline.as_millis()).unwrap();
        assert!(
            POLL_MAX_MS >= deadline + 4_000,
            "{POLL_MAX_MS} ms, deadline {deadline} ms"
        );
    }

    fn claim(polls: i64, via: Protocol, protocols: &[Protocol]) -> Claim {
        Claim {
            addr: "8.8.8.8:27015".parse().unwrap(),
            via,
            protocols: protocols.to_vec(),
            polls,
            last_history: 0,
        }
    }

    /// Datagrams a poll sends to a server that answers only the protocols it speaks:
    /// a full query two each (a challenge, then the query), a probe one, a silent
    /// protocol its first request `1 + retries` times.
    fn datagrams(asked: &[Ask], speaks: &[Protocol]) -> u32 {
        let retries = ScanConfig::default().options.timing.retries;
        asked
            .iter()
            .map(|a| match (speaks.contains(&a.protocol), a.probe) {
                (true, false) => 2,
                (true, true) => 1,
                (false, _) => 1 + a.retries.unwrap_or(retries),
            })
            .sum()
    }

    #[test]
    fn a_rediscovery_queries_via_and_probes_every_other_protocol() {
        use Protocol::{A2s, Gamespy3, Ogp};
        let speaks = [Ogp, A2s, Gamespy3];
        let full = |protocol| Ask {
            protocol,
            retries: None,
            probe: false,
        };
        // a regular poll: the protocol it registered with
        let regular = poll_protocols(&claim(3, Ogp, &speaks), false);
        assert_eq!(regular, [full(Ogp)]);
        // the first poll: every protocol in full, the scan's retries to each
        let first = poll_protocols(&claim(0, Ogp, &[]), true);
        assert_eq!(first.len(), Protocol::AUTO.len());
        assert!(first.iter().all(|a| *a == full(a.protocol)), "{first:?}");
        // a rediscovery: every protocol still; via in full, the others probed, with the
        // scan's retries those known (one lost datagram does not take them off a
        // list), one datagram the others
        let again = poll_protocols(&claim(10, Ogp, &speaks), true);
        let asked: Vec<Protocol> = again.iter().map(|a| a.protocol).collect();
        assert_eq!(asked, Protocol::AUTO.to_vec());
        for a in &again {
            if a.protocol == Ogp {
                assert_eq!(*a, full(Ogp));
            } else {
                assert!(a.probe, "{a:?}");
                assert_eq!(a.retries.is_none(), speaks.contains(&a.protocol), "{a:?}");
            }
        }
        // what that costs of the poll_rate budget: the first asks 4 datagrams of each
        // silent protocol, a rediscovery one, and one of each known but via
        let (before, after) = (datagrams(&first, &speaks), datagrams(&again, &speaks));
        let silent = u32::try_from(Protocol::AUTO.len() - speaks.len()).unwrap();
        assert_eq!(before, 6 + 4 * silent);
        assert_eq!(after, 2 + 2 + silent);
        assert!(after * 3 < before, "{after} vs {before}");
        // a protocol outside auto-detection that the server registered with is asked
        // too, in full
        let outside = Protocol::ALL
            .iter()
            .copied()
            .find(|p| !Protocol::AUTO.contains(p))
            .unwrap();
        let v = poll_protocols(&claim(10, outside, &[]), true);
        assert_eq!(v.last(), Some(&full(outside)));
        assert_eq!(v.len(), Protocol::AUTO.len() + 1);
        assert!(v.iter().take(Protocol::AUTO.len()).all(|a| a.probe));
    }

    /// The datagrams a rediscovery of an `ogp serve` (what `ogp-load master` registers:
    /// OGP, GameSpy v3, A2S and GQP answer of the 22) sends through the scan engine,
    /// counted by the scan: 23 (OGP's challenge and query, one each for the 21 others),
    /// where querying every protocol in full (the rediscovery before probes) sent 35;
    /// and what it learns is the same: the four protocols, the status OGP's.
    #[tokio::test]
    async fn a_rediscovery_of_an_ogp_serve_sends_23_datagrams() {
        use ogp_proto::guard::RateConfig;
        use ogp_proto::responder::ResponderConfig;
        use Protocol::{A2s, Gamespy3, Gqp, Ogp};
        let mut rc = ResponderConfig::default();
        rc.rate = RateConfig::new(1e6, 1e6);
        let status = ogp_testkit::demo_state();
        let server = ogp_net::responder::spawn(
            "127.0.0.1:0".parse().unwrap(),
            ogp_net::StatusCell::new(status.clone()),
            rc,
        )
        .await
        .unwrap();
        let addr = server.local_addrs()[0];
        let speaks = [Ogp, Gamespy3, A2s, Gqp];
        let rediscovery = poll_protocols(&claim(10, Ogp, &speaks), true);
        let in_full: Vec<Ask> = rediscovery
            .iter()
            .map(|a| Ask { probe: false, ..*a })
            .collect();
        for (asks, sent) in [(rediscovery, 23), (in_full, 35)] {
            let mut cfg = ScanConfig::default();
            cfg.sockets = DISCOVERY_PROTOCOLS;
            cfg.rate = 100_000;
            cfg.options.timing = cfg
                .options
                .timing
                .attempt_timeout(Duration::from_millis(100));
            let mut scan = scan::start(cfg).unwrap();
            for (k, a) in (0u64..).zip(&asks) {
                let t = Target::new(addr.to_string(), Some(a.protocol))
                    .with_id(k)
                    .with_retries(a.retries)
                    .with_probe(a.probe);
                scan.targets.send(t).await.unwrap();
            }
            drop(scan.targets);
            let mut answered = Vec::new();
            while let Some(r) = scan.results.recv().await {
                if let (Ok(a), Some(p)) = (r.outcome, r.requested) {
                    let probed = matches!(a.details, Details::Probed);
                    assert_eq!(probed, asks.iter().any(|x| x.protocol == p && x.probe));
                    if p == Ogp {
                        assert_eq!(a.status.host_name, status.host_name);
                    }
                    answered.push(p);
                }
            }
            assert_eq!(sorted(answered), sorted(speaks.to_vec()));
            let stats = scan.handle.stats();
            assert_eq!(stats.sent, sent, "{stats:?}");
        }
    }

    #[test]
    fn a_partial_poll_superseded_in_its_batch_is_not_written() {
        use Protocol::{A2s, Ogp};
        let batch = vec![
            polled("8.8.8.8:1", true, &[Ogp, A2s]),
            polled("8.8.4.4:1", true, &[Ogp]),
            polled("8.8.8.8:1", false, &[A2s]),
            polled("8.8.4.4:1", true, &[Ogp, A2s]),
        ];
        let kept: Vec<(String, bool, usize)> = superseded_left_out(batch)
            .iter()
            .map(|p| (p.addr.to_string(), p.partial, p.protocols.len()))
            .collect();
        assert_eq!(
            kept,
            [
                ("8.8.8.8:1".to_owned(), false, 1),
                ("8.8.4.4:1".to_owned(), true, 2)
            ]
        );
    }
}

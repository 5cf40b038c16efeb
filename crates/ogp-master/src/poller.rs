//! Polling: every listed server is queried again each poll interval through the scan
//! engine, by whichever instance holds its lease; what it answered is written back in
//! batches.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ogp_net::scan::{self, ScanConfig, ScanResult, Target};
use ogp_proto::{Protocol, Status};
use tokio::sync::{mpsc, watch};

use crate::metrics::label;
use crate::store::{Claim, Polled, PolledAnswer};
use crate::{now_ms, Shared};

/// Servers being polled at once (claimed, not yet recorded).
const MAX_IN_POLL: usize = 4096;

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

fn finish(p: InPoll, history_resolution_ms: i64, now: i64) -> Polled {
    let mut protocols = p.answered;
    if !p.discovery {
        protocols.extend(p.claim.protocols.iter().copied());
        protocols.push(p.claim.via);
    }
    protocols.sort_by_key(|x| Protocol::ALL.iter().position(|y| y == x).unwrap_or(9));
    protocols.dedup();
    let answer = p
        .best
        .and_then(|(_, ping, s)| match PolledAnswer::new(ping, &s) {
            Ok(a) => Some(a),
            Err(e) => {
                tracing::warn!("{}: cannot store its status: {e}", p.claim.addr);
                None
            }
        });
    Polled {
        addr: p.claim.addr,
        history: answer.is_some() && now - p.claim.last_history >= history_resolution_ms,
        answer,
        protocols,
    }
}

/// Claims due servers and feeds them to the scan, until `stop`.
pub(crate) async fn run(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let mut config = ScanConfig::default();
    config.rate = shared.config.poll_rate.max(1);
    config.max_in_flight = 4096;
    let scan = match scan::start(config) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("the poller cannot open its sockets: {e}");
            return;
        }
    };
    let pending: Pending = Arc::new(Mutex::new(HashMap::new()));
    let (done_tx, done_rx) = mpsc::channel::<Polled>(1024);
    let collector = tokio::spawn(collect(
        shared.clone(),
        pending.clone(),
        scan.results,
        done_tx,
    ));
    let recorder = tokio::spawn(record(shared.clone(), done_rx));
    let targets = scan.targets;
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    let mut next_id: u64 = 0;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.changed() => break,
        }
        let room =
            MAX_IN_POLL.saturating_sub(pending.lock().map(|p| p.len()).unwrap_or(MAX_IN_POLL));
        if room == 0 {
            continue;
        }
        let t = Instant::now();
        let claims = shared
            .store
            .claim_due(
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
        let every = i64::from(shared.config.rediscover_every.max(1));
        for claim in claims {
            let discovery = claim.polls % every == 0;
            let protocols: Vec<Protocol> = if discovery {
                let mut v = Protocol::AUTO.to_vec();
                if !v.contains(&claim.via) {
                    v.push(claim.via);
                }
                v
            } else {
                vec![claim.via]
            };
            let addr = claim.addr;
            if let Ok(mut p) = pending.lock() {
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
            for protocol in protocols {
                next_id += 1;
                let target = Target::new(addr.to_string(), Some(protocol)).with_id(next_id);
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
        let Ok(addr) = r.target.parse::<SocketAddr>() else {
            continue;
        };
        let finished = {
            let Ok(mut map) = pending.lock() else { return };
            let Some(p) = map.get_mut(&addr) else {
                continue;
            };
            p.expected = p.expected.saturating_sub(1);
            if let (Ok(a), Some(proto)) = (r.outcome, r.requested) {
                p.answered.push(proto);
                if p.best.as_ref().is_none_or(|(r, _, _)| rank(proto) < *r) {
                    p.best = Some((rank(proto), a.ping_ms, a.status));
                }
            }
            if p.expected == 0 {
                map.remove(&addr)
            } else {
                None
            }
        };
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

/// Writes finished polls in batches (up to 500, or what arrived within 200 ms).
async fn record(shared: Arc<Shared>, mut done: mpsc::Receiver<Polled>) {
    loop {
        let Some(first) = done.recv().await else {
            return;
        };
        let started = Instant::now();
        let mut batch = vec![first];
        let deadline = tokio::time::sleep(Duration::from_millis(200));
        tokio::pin!(deadline);
        while batch.len() < 500 {
            tokio::select! {
                p = done.recv() => match p { Some(p) => batch.push(p), None => break },
                () = &mut deadline => break,
            }
        }
        let t = Instant::now();
        let res = shared
            .store
            .record_polls(&shared.instance, batch, now_ms(), shared.timers)
            .await;
        shared.metrics.db("record_polls", t);
        shared
            .metrics
            .poll_batch_seconds
            .observe(started.elapsed().as_secs_f64());
        if let Err(e) = res {
            tracing::warn!("recording polls: {e:#}");
        }
    }
}

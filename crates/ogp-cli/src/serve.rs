//! `ogp serve`: a standalone responder for a state file, reloaded when it changes.
//!
//! The file is read on a thread of its own ([`Loader`]), one read at a time, each given
//! [`LOAD_TIME_LIMIT`]; the responders keep answering from the last good status until a
//! new one is read and checked in full, which then replaces it at once. A file that is
//! refused is logged once, and read again only when it changes (or on SIGHUP).
//! SIGTERM and SIGINT stop the responders cleanly (GameSpy v3 masters get the "exiting"
//! heartbeat); SIGHUP reads the file again at once.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use ogp_net::{responder, StatusCell};
use ogp_proto::gamespy3::heartbeat::HeartbeatConfig;
use ogp_proto::ogp::uplink::UplinkConfig;
use ogp_proto::responder::{Listener, ResponderConfig};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::metrics::{self, Metrics, Reload};
use crate::state::{self, Load, Seen};

/// Options of `ogp serve`.
pub struct ServeOptions {
    /// The state file (JSON, or TOML when it ends in .toml).
    pub state: PathBuf,
    /// Addresses to listen on.
    pub listen: Vec<SocketAddr>,
    /// Addresses to answer the OGP v0.02 draft on.
    pub listen_ogp_draft: Vec<SocketAddr>,
    /// Responder settings.
    pub config: ResponderConfig,
    /// How often to look at the file for changes.
    pub reload_interval: Duration,
    /// Largest state file read, in bytes.
    pub max_state_bytes: u64,
    /// GameSpy v3 master servers to send heartbeats to.
    pub gamespy3_masters: Vec<SocketAddr>,
    /// The `gamename` of the heartbeats.
    pub gamespy3_game: Option<String>,
    /// Master servers to send OGP uplinks to.
    pub ogp_masters: Vec<SocketAddr>,
    /// Where to serve `GET /metrics` (TCP), if anywhere.
    pub metrics: Option<SocketAddr>,
    /// Receive buffer and answering threads.
    pub net: ogp_net::NetConfig,
}

/// The smallest Quake III `getstatus` request: `FF FF FF FF "getstatus"`.
const GETSTATUS_BYTES: usize = 13;

/// Longest a read of the state file may take before it is given up on (a file system
/// that hangs). The read goes on in the background; no other starts until it returns.
pub const LOAD_TIME_LIMIT: Duration = Duration::from_secs(5);

/// Why the file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    /// The first read, before serving.
    Start,
    /// The poll saw it change.
    Poll,
    /// SIGHUP.
    Hangup,
}

impl Why {
    /// What a log line adds for it.
    fn note(self) -> &'static str {
        match self {
            Why::Hangup => " (SIGHUP)",
            Why::Start | Why::Poll => "",
        }
    }
}

/// What one read found.
#[derive(Debug)]
enum Found {
    /// The file has the stamp of the last read: not read again.
    Unchanged,
    /// It was read.
    Read(Box<Load>),
}

/// One read: given the stamp of the last read and whether to read even if unchanged.
type Job = Arc<dyn Fn(Option<Seen>, bool) -> Found + Send + Sync>;

/// The read of `path` that `serve` runs: look (stat), and read only when changed or forced.
fn read_job(path: PathBuf, max_bytes: u64) -> Job {
    Arc::new(move |last, force| {
        if !force && last == Some(state::see(&path)) {
            return Found::Unchanged;
        }
        Found::Read(Box::new(state::load(&path, max_bytes)))
    })
}

/// Runs reads of the state file on threads of their own, one at a time, each with a time
/// limit.
struct Loader {
    job: Job,
    limit: Duration,
    in_flight: Option<InFlight>,
    /// The stamp of the last file read, good or refused: an unchanged file is not read
    /// (nor its refusal logged) again.
    last: Option<Seen>,
    /// A SIGHUP came while a read was running: read again after it.
    hangup_pending: bool,
}

struct InFlight {
    rx: oneshot::Receiver<Found>,
    started: Instant,
    why: Why,
    overdue: bool,
}

/// What became of the read in flight.
#[derive(Debug)]
enum Event {
    /// It returned (`None`: its thread died without an answer).
    Finished {
        found: Option<Found>,
        why: Why,
        took: Duration,
        overdue: bool,
    },
    /// It has run past the time limit; it is left to finish in the background.
    Overdue { why: Why, took: Duration },
}

/// Whether [`Loader::start`] started a read.
#[derive(Debug, PartialEq, Eq)]
enum Started {
    Yes,
    /// One is still in flight (for SIGHUP: a read follows it).
    Busy {
        overdue: bool,
        running: Duration,
    },
}

impl Loader {
    fn new(job: Job, limit: Duration) -> Self {
        Self {
            job,
            limit,
            in_flight: None,
            last: None,
            hangup_pending: false,
        }
    }

    /// Starts a read on a new thread, unless one is in flight.
    fn start(&mut self, why: Why) -> std::io::Result<Started> {
        if let Some(f) = &self.in_flight {
            if why == Why::Hangup {
                self.hangup_pending = true;
            }
            return Ok(Started::Busy {
                overdue: f.overdue,
                running: f.started.elapsed(),
            });
        }
        let (tx, rx) = oneshot::channel();
        let job = Arc::clone(&self.job);
        let last = self.last.clone();
        let force = why != Why::Poll;
        std::thread::Builder::new()
            .name("ogp-state-loader".into())
            .spawn(move || {
                let _ = tx.send(job(last, force));
            })?;
        self.in_flight = Some(InFlight {
            rx,
            started: Instant::now(),
            why,
            overdue: false,
        });
        Ok(Started::Yes)
    }

    /// Waits for the read in flight to return or to pass its time limit; never returns
    /// when none is in flight.
    async fn next(&mut self) -> Event {
        let Some(f) = self.in_flight.as_mut() else {
            return std::future::pending().await;
        };
        let deadline = f.started + self.limit;
        let done = if f.overdue {
            (&mut f.rx).await
        } else {
            tokio::select! {
                r = &mut f.rx => r,
                () = tokio::time::sleep_until(deadline) => {
                    f.overdue = true;
                    return Event::Overdue { why: f.why, took: f.started.elapsed() };
                }
            }
        };
        let (why, took, overdue) = (f.why, f.started.elapsed(), f.overdue);
        self.in_flight = None;
        if let Ok(Found::Read(load)) = &done {
            self.last = Some(load.seen.clone());
        }
        Event::Finished {
            found: done.ok(),
            why,
            took,
            overdue,
        }
    }
}

/// The SIGTERM, SIGINT and SIGHUP streams.
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Self> {
        let listen = |k: SignalKind| signal(k).context("cannot listen for signals");
        Ok(Self {
            term: listen(SignalKind::terminate())?,
            int: listen(SignalKind::interrupt())?,
            hup: listen(SignalKind::hangup())?,
        })
    }

    /// The next SIGTERM or SIGINT, by name.
    async fn stop(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
        }
    }
}

/// Reads the state file before serving: the status, or an error for the command line.
async fn first_load(
    loader: &mut Loader,
    path: &Path,
    signals: &mut Signals,
) -> Result<Option<state::Loaded>> {
    loader
        .start(Why::Start)
        .with_context(|| format!("{}: cannot start reading it", path.display()))?;
    let event = tokio::select! {
        e = loader.next() => e,
        name = signals.stop() => {
            tracing::info!("stopped on {name} before serving");
            return Ok(None);
        }
    };
    match event {
        Event::Finished {
            found: Some(Found::Read(load)),
            ..
        } => Ok(Some(load.result?)),
        Event::Finished { .. } => bail!("{}: the read failed", path.display()),
        Event::Overdue { took, .. } => bail!(
            "{}: not read within {:.0} s (a hung file system?)",
            path.display(),
            took.as_secs_f64()
        ),
    }
}

/// Logs what a read did, and serves what it read; says how the read ended (`None`: the
/// file was unchanged, not read).
fn apply(loader: &mut Loader, event: Event, cell: &StatusCell, path: &Path) -> Option<Reload> {
    let outcome = match event {
        Event::Overdue { why, took } => {
            tracing::error!(
                "{}: not read within {:.0} s{} (a hung file system?); still serving the last \
                 good state, and not reading the file again until that read returns",
                path.display(),
                took.as_secs_f64(),
                why.note()
            );
            Some(Reload::Error)
        }
        Event::Finished { found: None, .. } => {
            tracing::error!(
                "{}: the read failed; still serving the last good state",
                path.display()
            );
            Some(Reload::Error)
        }
        Event::Finished {
            found: Some(Found::Unchanged),
            ..
        } => None,
        Event::Finished {
            found: Some(Found::Read(load)),
            why,
            took,
            overdue,
        } => {
            let late = if overdue {
                format!(" after {:.1} s", took.as_secs_f64())
            } else {
                String::new()
            };
            match load.result {
                Ok(loaded) => {
                    cell.set(loaded.status);
                    if loaded.clipped.is_empty() {
                        tracing::info!("reloaded {}{}{late}", path.display(), why.note());
                    } else {
                        tracing::warn!(
                            "reloaded {}{}{late}; {}",
                            path.display(),
                            why.note(),
                            loaded.clipped
                        );
                    }
                    Some(Reload::Ok)
                }
                Err(e) => {
                    tracing::error!("{e}{}{late}; still serving the last good state", why.note());
                    Some(Reload::Error)
                }
            }
        }
    };
    if loader.hangup_pending && loader.in_flight.is_none() {
        loader.hangup_pending = false;
        start_logged(loader, Why::Hangup, path);
    }
    outcome
}

/// Starts a read, logging when that is not possible now.
fn start_logged(loader: &mut Loader, why: Why, path: &Path) {
    match loader.start(why) {
        Ok(Started::Yes) => {}
        // A SIGHUP during a read that is about to return is quietly read after it (its
        // one line comes then); during a hung read, it says why nothing happens yet.
        Ok(Started::Busy { overdue, running }) => {
            if why == Why::Hangup && overdue {
                tracing::warn!(
                    "SIGHUP: a read of {} has been running for {:.1} s (past its time \
                     limit); it is read again when that one returns",
                    path.display(),
                    running.as_secs_f64(),
                );
            }
        }
        Err(e) => tracing::error!(
            "{}: cannot start reading it: {e}; still serving the last good state",
            path.display()
        ),
    }
}

/// Runs until SIGTERM or SIGINT.
pub async fn run(opts: ServeOptions) -> Result<()> {
    let mut signals = Signals::new()?;
    let mut loader = Loader::new(
        read_job(opts.state.clone(), opts.max_state_bytes),
        LOAD_TIME_LIMIT,
    );
    let Some(loaded) = first_load(&mut loader, &opts.state, &mut signals).await? else {
        return Ok(());
    };
    if !loaded.clipped.is_empty() {
        tracing::warn!("{}: {}", opts.state.display(), loaded.clipped);
    }
    let cell = StatusCell::new(loaded.status);
    if opts.listen.is_empty() {
        bail!("nothing to listen on");
    }
    let metrics_listener = match opts.metrics {
        Some(addr) => Some(metrics::bind(addr).await?),
        None => None,
    };
    let mut config = opts.config.clone();
    if !opts.gamespy3_masters.is_empty() {
        config.gamespy3_heartbeat = Some(
            HeartbeatConfig::new(opts.gamespy3_masters.clone())
                .game_name(opts.gamespy3_game.as_deref().map(Into::into)),
        );
    }
    if !opts.ogp_masters.is_empty() {
        config.ogp_uplink = Some(UplinkConfig::new(opts.ogp_masters.clone()));
    }
    // One responder for every socket: one rate limiter and one challenge secret.
    let listeners: Vec<(SocketAddr, Listener)> = opts
        .listen
        .iter()
        .map(|a| (*a, Listener::Standard))
        .chain(
            opts.listen_ogp_draft
                .iter()
                .map(|a| (*a, Listener::OgpDraft)),
        )
        .collect();
    let handle = responder::spawn_many_with(&listeners, Arc::clone(&cell), config, opts.net)
        .await
        .context("listening")?;
    tracing::info!(
        "{} answering thread{}, receive buffer {} bytes asked",
        opts.net.threads,
        if opts.net.threads == 1 { "" } else { "s" },
        opts.net.recv_buffer
    );
    let locals = handle.local_addrs();
    let (standard, draft) = locals.split_at(opts.listen.len().min(locals.len()));
    // One line per address, up to a few; a summary line beyond (3,000 addresses would
    // make one enormous line).
    const LISTED: usize = 8;
    for a in standard.iter().take(LISTED) {
        tracing::info!("listening on {a}");
    }
    for d in draft.iter().take(LISTED) {
        tracing::info!("answering the OGP v0.02 draft on {d}");
    }
    let more = standard.len().saturating_sub(LISTED) + draft.len().saturating_sub(LISTED);
    if more > 0 {
        tracing::info!(
            "listening on {} addresses in all ({more} more not listed)",
            locals.len()
        );
    }
    let answered: Vec<&str> = [
        (opts.config.ogp.enabled, "OGP"),
        (opts.config.a2s.enabled, "A2S"),
        (opts.config.gqp.enabled, "GQP"),
        (opts.config.gamespy3.enabled, "GameSpy v3"),
        (opts.config.quake3.enabled, "Quake III"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    let q3 = &opts.config.quake3;
    let quake3 = if q3.enabled {
        format!(
            "on (no challenge: an amplifier, a getstatus reply up to {}x its {GETSTATUS_BYTES}-byte \
             request, bounded to {} bytes/s per source and {} bytes/s in all)",
            q3.max_reply_bytes / GETSTATUS_BYTES,
            q3.per_source.per_second,
            q3.total.per_second
        )
    } else {
        "off".to_string()
    };
    tracing::info!(
        "serving {} on {} address{} ({}; OGP challenge {}, GameSpy v3 {}, Quake III {}, rate {}/s burst {})",
        opts.state.display(),
        standard.len(),
        if standard.len() == 1 { "" } else { "es" },
        if answered.is_empty() {
            "no protocol".to_string()
        } else {
            answered.join(", ")
        },
        if opts.config.ogp.require_challenge {
            "required"
        } else {
            "OFF"
        },
        match (opts.config.gamespy3.enabled, opts.config.gamespy3.challenge) {
            (false, _) => "off",
            (true, ogp_proto::gamespy3::responder::ChallengeMode::Real) => "challenge required",
            (true, ogp_proto::gamespy3::responder::ChallengeMode::Bf2) =>
                "in bf2 mode (no challenge: an amplifier, bounded by the rate limit)",
        },
        quake3,
        opts.config.rate.per_second,
        opts.config.rate.burst
    );
    let (stop_metrics, metrics_stopped) = oneshot::channel::<()>();
    let metrics = match metrics_listener {
        Some(listener) => {
            let m = Arc::new(Metrics::new(handle.stats_reader(), Arc::clone(&cell)));
            if let Ok(a) = listener.local_addr() {
                tracing::info!("metrics on http://{a}/metrics");
            }
            let stop = async {
                let _ = metrics_stopped.await;
            };
            let task = tokio::spawn(metrics::serve(listener, Arc::clone(&m), stop));
            Some((m, task))
        }
        None => None,
    };
    let mut tick = tokio::time::interval(opts.reload_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    tick.reset(); // the first tick would read the file that was just read
    let stopped_by = loop {
        tokio::select! {
            _ = signals.term.recv() => break "SIGTERM",
            _ = signals.int.recv() => break "SIGINT",
            _ = signals.hup.recv() => start_logged(&mut loader, Why::Hangup, &opts.state),
            _ = tick.tick() => start_logged(&mut loader, Why::Poll, &opts.state),
            event = loader.next() => {
                let outcome = apply(&mut loader, event, &cell, &opts.state);
                if let (Some((m, _)), Some(outcome)) = (&metrics, outcome) {
                    m.reloaded(outcome);
                }
            }
        }
    };
    if let Some((_, task)) = metrics {
        // Scrapes in progress get a moment to finish; a client that holds its
        // connection open does not hold up the exit.
        let _ = stop_metrics.send(());
        match tokio::time::timeout(Duration::from_secs(1), task).await {
            Ok(Ok(Err(e))) => tracing::warn!("metrics endpoint: {e}"),
            Ok(_) => {}
            Err(_) => tracing::debug!("metrics endpoint: stopped with a scrape in progress"),
        }
    }
    let sent = handle.stats().sent;
    if let Some(drops) = handle.kernel_drops().filter(|&d| d > 0) {
        tracing::warn!(
            "the kernel dropped {drops} datagrams at full receive buffers (raise --recv-buffer and net.core.rmem_max, or --threads)"
        );
    }
    handle.shutdown().await.ok();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut beats = String::new();
    if !opts.gamespy3_masters.is_empty() {
        let n = opts.gamespy3_masters.len();
        beats.push_str(&format!(
            "; GameSpy v3 exit heartbeats sent to {n} master{}",
            plural(n)
        ));
    }
    if !opts.ogp_masters.is_empty() {
        let n = opts.ogp_masters.len();
        beats.push_str(&format!(
            "; last OGP uplinks sent to {n} master{}",
            plural(n)
        ));
    }
    tracing::info!("stopped on {stopped_by} ({sent} datagrams sent{beats})");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{mpsc, Mutex};

    use ogp_proto::Status;

    /// A job that counts its runs and returns only when the test lets it.
    fn held_job() -> (Job, Arc<AtomicUsize>, mpsc::Sender<()>) {
        let runs = Arc::new(AtomicUsize::new(0));
        let (release, held) = mpsc::channel::<()>();
        let held = Mutex::new(held);
        let counted = Arc::clone(&runs);
        let job: Job = Arc::new(move |_, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            if let Ok(rx) = held.lock() {
                let _ = rx.recv_timeout(Duration::from_secs(10));
            }
            Found::Unchanged
        });
        (job, runs, release)
    }

    async fn next_within(loader: &mut Loader, limit: Duration) -> Event {
        tokio::time::timeout(limit, loader.next())
            .await
            .expect("the loader reports within the limit")
    }

    #[tokio::test]
    async fn a_hung_read_is_given_up_on_and_never_doubled() {
        let (job, runs, release) = held_job();
        let mut loader = Loader::new(job, Duration::from_millis(100));
        assert_eq!(loader.start(Why::Poll).unwrap(), Started::Yes);
        let t = Instant::now();
        let event = next_within(&mut loader, Duration::from_secs(3)).await;
        assert!(
            matches!(event, Event::Overdue { why: Why::Poll, .. }),
            "{event:?}"
        );
        assert!(
            t.elapsed() >= Duration::from_millis(100),
            "{:?}",
            t.elapsed()
        );
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        // while it hangs, no other read starts: polls are dropped, a SIGHUP waits
        for why in [Why::Poll, Why::Hangup, Why::Poll] {
            assert!(matches!(
                loader.start(why).unwrap(),
                Started::Busy { overdue: true, .. }
            ));
        }
        assert!(loader.hangup_pending);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        // it comes back late: reported as such, then the SIGHUP's read starts
        release.send(()).unwrap();
        let event = next_within(&mut loader, Duration::from_secs(3)).await;
        assert!(
            matches!(
                event,
                Event::Finished {
                    found: Some(Found::Unchanged),
                    why: Why::Poll,
                    overdue: true,
                    ..
                }
            ),
            "{event:?}"
        );
        let cell = StatusCell::new(Status::default());
        apply(&mut loader, event, &cell, Path::new("state.json"));
        assert!(!loader.hangup_pending);
        release.send(()).unwrap();
        let event = next_within(&mut loader, Duration::from_secs(3)).await;
        assert!(
            matches!(
                event,
                Event::Finished {
                    why: Why::Hangup,
                    overdue: false,
                    ..
                }
            ),
            "{event:?}"
        );
        assert_eq!(runs.load(Ordering::SeqCst), 2);
    }

    struct Dir(PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn read(job: &Job, last: Option<Seen>, force: bool) -> Option<Box<Load>> {
        match job(last, force) {
            Found::Read(load) => Some(load),
            Found::Unchanged => None,
        }
    }

    #[test]
    fn a_file_is_read_again_only_when_it_changed_good_or_refused() {
        let dir = Dir(std::env::temp_dir().join(format!("ogp-serve-unit-{}", std::process::id())));
        let _ = std::fs::remove_dir_all(&dir.0);
        std::fs::create_dir_all(&dir.0).unwrap();
        let path = dir.0.join("state.json");
        std::fs::write(&path, "{\"host_name\": \"one\"}").unwrap();
        let job = read_job(path.clone(), 1 << 20);
        let cell = StatusCell::new(Status::default());
        let mut loader = Loader::new(Arc::clone(&job), LOAD_TIME_LIMIT);

        let first = read(&job, None, false).expect("read the first time");
        let seen = first.seen.clone();
        assert!(first.result.is_ok());
        assert!(read(&job, Some(seen.clone()), false).is_none(), "unchanged");
        assert!(read(&job, Some(seen.clone()), true).is_some(), "forced");
        apply(&mut loader, finished(first), &cell, &path);
        assert_eq!(cell.load().host_name.as_deref(), Some("one"));

        // a FIFO swapped in: refused, and then unchanged (no second refusal)
        let fifo = dir.0.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        std::fs::rename(&fifo, &path).unwrap();
        let refused = read(&job, Some(seen), false).expect("a new file is read");
        let e = refused.result.as_ref().unwrap_err().to_string();
        assert!(e.contains("a FIFO (named pipe), not a regular file"), "{e}");
        let seen = refused.seen.clone();
        assert!(read(&job, Some(seen.clone()), false).is_none());
        apply(&mut loader, finished(refused), &cell, &path);
        assert_eq!(
            cell.load().host_name.as_deref(),
            Some("one"),
            "last good kept"
        );

        // gone: refused once too
        std::fs::remove_file(&path).unwrap();
        let gone = read(&job, Some(seen), false).expect("a missing file is reported");
        assert!(gone.result.is_err());
        assert!(read(&job, Some(gone.seen.clone()), false).is_none());

        // back, good: read and served
        std::fs::write(&path, "{\"host_name\": \"two\"}").unwrap();
        let back = read(&job, Some(gone.seen.clone()), false).expect("read again");
        apply(&mut loader, finished(back), &cell, &path);
        assert_eq!(cell.load().host_name.as_deref(), Some("two"));
    }

    fn finished(load: Box<Load>) -> Event {
        Event::Finished {
            found: Some(Found::Read(load)),
            why: Why::Poll,
            took: Duration::ZERO,
            overdue: false,
        }
    }
}

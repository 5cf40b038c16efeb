//! `ogp-load scan`: how fast `ogp scan` gets through a large list, against qstat on the
//! same list, and how much memory it needs.
//!
//! Responders run in child processes of this binary (`ogp-load scan-serve`, up to
//! `--per-process` sockets each, so that no process needs more file descriptors than
//! the usual limit), each child on its own loopback address 127.77.k.1, ports 10000 and
//! up (below the ephemeral range). One `StatusCell` is shared by all responders of a
//! child; their per-source rate limit is lifted (one scanner is the only source) and
//! their rate tables are tiny.
//!
//! Then the real `ogp` binary scans the list (`ogp scan --json LIST …` as a child
//! process, its NDJSON read and counted here), its peak resident set (VmHWM) sampled from
//! /proc every 10 ms; and qstat (`quakestat -f LIST -maxsim M …`) scans the qstat-speakable
//! part of the list at several `-maxsim` values, and the best run counts. Every loop is
//! bounded in count and time; children are killed when dropped.
//!
//! Quake III (`--quake3-targets`, 10,000 by default): a farm of its own (children on
//! 127.78.k.1, each socket a responder with Quake III on, as `ogp serve --quake3`), a
//! list of `quake3 ADDR` for `ogp scan` and of `Q3S ADDR` for qstat (`-q3s`, as fast as
//! its settings allow: the same `-maxsim` and `-sendinterval` values), and each line of
//! each scanner's output checked against the served status: a target counts as answered
//! only when its host name, map, max players and player count are reported as served.
//!
//! GameSpy v1 (`--gs1-targets`, 10,000 by default): a farm of its own (children on
//! 127.80.k.1), each socket answering `\status\` with a real server's reply replayed from
//! the captures of `crates/ogp-proto/tests/data/gamespy1/` (Battlefield 1942 and Unreal
//! Tournament, two or three datagrams each, in turn), a list of `gamespy1 ADDR` for
//! `ogp scan` and of `GPS ADDR` for qstat (`-gps`, at the same settings as Quake III),
//! each line checked against the capture its address replays (map, max players, player
//! count; for `ogp scan` also no part missing), and the answered addresses of the best
//! runs compared.
//!
//! The new UDP families (`--family NAME,…` or `all`, `--family-targets`, 10,000 each):
//! farms of their own (127.82.k.1 and up) replaying the captures as [`crate::replay`]'s
//! table says (the GameSpy v1 farm is served from it too), scanned by `ogp scan` and,
//! where it reads the family, by qstat, every line checked against its target's
//! capture: every `ogp scan` run must report all targets correctly, and one qstat run at
//! least. Where qstat does not read a family, `ogp scan` on an A2S farm of the same size
//! (127.81.k.1) is the baseline.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _, Result};
use ogp_net::scan::Protocol;
use ogp_proto::guard::RateConfig;
use ogp_proto::responder::{Listener, ResponderConfig};

use crate::common;
use crate::replay::{Capture, ReplayFamily, GS1_CAPTURES};

/// First port of every responder child.
pub(crate) const FIRST_PORT: u16 = 10_000;

/// Options of `ogp-load scan`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Targets in the mixed list (1–200,000), one responder socket each.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=200_000))]
    pub targets: u32,
    /// Protocols of the mixed list, in turn (gamespy3 is left out while unsupported).
    #[arg(long, default_value = "ogp,a2s,gqp,gamespy3,ogp-draft,auto")]
    pub mix: String,
    /// `ogp scan --rate` (datagrams per second; its own default, 5,000, is for the
    /// internet; on loopback the cap is lifted to show the engine's speed).
    #[arg(long, default_value_t = 100_000)]
    pub rate: u32,
    /// `ogp scan --max-in-flight` values tried (the best run on each list counts, as
    /// for qstat's `-maxsim`; on loopback fewer in flight is faster, because each
    /// responder wake-up then finds more to do).
    #[arg(long, default_value = "64,256,2048", value_delimiter = ',')]
    pub max_in_flight: Vec<u32>,
    /// Responder sockets per child process (1–15,000).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=15_000))]
    pub per_process: u32,
    /// The `ogp` binary (default: next to this one).
    #[arg(long, value_name = "PATH")]
    pub ogp_bin: Option<PathBuf>,
    /// Skip the qstat comparison.
    #[arg(long)]
    pub no_qstat: bool,
    /// The qstat binary.
    #[arg(long, default_value = "quakestat", value_name = "PATH")]
    pub qstat_bin: PathBuf,
    /// `-maxsim` values tried for qstat (the best run counts).
    #[arg(long, default_value = "100,250,500,1000", value_delimiter = ',')]
    pub maxsim: Vec<u32>,
    /// `-sendinterval` values tried for qstat, in milliseconds (its default is 5, which
    /// paces it to 200 datagrams/s; 0 sends as fast as it can).
    #[arg(long, default_value = "5,0", value_delimiter = ',')]
    pub sendinterval: Vec<u32>,
    /// Targets in the qstat comparison list (default: as many as `--targets`, at most the
    /// A2S-speaking responders).
    #[arg(long)]
    pub qstat_targets: Option<u32>,
    /// Targets of the defaults comparison: `ogp scan` and qstat, each with its own
    /// default settings, on the first N targets of the comparison list (0 skips it; 100
    /// targets take qstat about a second at its default pacing).
    #[arg(long, default_value_t = 1000)]
    pub defaults_targets: u32,
    /// Time limit of each scan run, in seconds.
    #[arg(long, default_value_t = 600)]
    pub max_seconds: u64,
    /// Quake III targets (0–200,000; 0 skips the Quake III comparison): responders of
    /// their own, scanned by `ogp scan` and by qstat `-q3s`, each result checked.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(0..=200_000))]
    pub quake3_targets: u32,
    /// GameSpy v1 targets (0–200,000; 0 skips the GameSpy v1 comparison): a farm of
    /// their own replaying real servers' multi-datagram replies to `\status\`, scanned by
    /// `ogp scan` and by qstat `-gps`, each result checked.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(0..=200_000))]
    pub gs1_targets: u32,
    /// Families scanned on replay farms of their own (comma-separated, or `all`):
    /// teeworlds, teeworlds7, quakeworld, quake2, hexenworld, cube2, mumble, doom, samp,
    /// doom3, minetest, doomsday (and gamespy1, as `--gs1-targets`). Each is scanned by `ogp scan` and, where
    /// it reads the family, by qstat; every run must report all targets correctly. Where
    /// qstat does not read it, our A2S scan of the same size is the baseline.
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    pub family: Vec<String>,
    /// Targets of each `--family` (0–200,000).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(0..=200_000))]
    pub family_targets: u32,
    /// A2S targets of the baseline comparison (0 skips it): `ogp scan --rate 1000000`
    /// against the bare batched scanner (`scan-bare`: the same four round trips per
    /// target, one socket, `recvmmsg`/`sendmmsg`, nothing parsed), alternately, at each
    /// `--max-in-flight`; the ratio of their best times.
    #[arg(long, default_value_t = 6000)]
    pub bare_targets: u32,
    /// Runs of each scanner in the baseline comparison (the best counts).
    #[arg(long, default_value_t = 3)]
    pub bare_runs: u32,
    /// Only the baseline comparison.
    #[arg(long)]
    pub bare_only: bool,
}

/// Options of the hidden `ogp-load scan-serve` (one responder child).
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Loopback address to bind.
    #[arg(long)]
    pub ip: Ipv4Addr,
    /// Responder sockets, on ports 10000 and up.
    #[arg(long)]
    pub count: u32,
    /// The mix (as `ogp-load scan --mix`): ports whose protocol is ogp-draft get a draft
    /// listener.
    #[arg(long)]
    pub mix: String,
    /// Index of this child's first target in the whole list.
    #[arg(long)]
    pub offset: u64,
}

/// The mix: each entry a protocol, or `None` for `auto` (auto-detection).
fn parse_mix(mix: &str) -> Result<Vec<Option<Protocol>>> {
    let mut v = Vec::new();
    for name in mix.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let p = Protocol::parse_or_auto(name).map_err(|e| anyhow::anyhow!("--mix: {e}"))?;
        v.push(p);
    }
    ensure!(!v.is_empty(), "--mix names no supported protocol");
    Ok(v)
}

fn protocol_of(mix: &[Option<Protocol>], index: u64) -> Option<Protocol> {
    let n = mix.len().max(1) as u64;
    mix.get(usize::try_from(index % n).unwrap_or(0))
        .copied()
        .unwrap_or(Some(Protocol::Ogp))
}

/// The second octet of the mixed farm's addresses, and of the Quake III farm's.
const MIXED_NET: u8 = 77;
const QUAKE3_NET: u8 = 78;
/// The GameSpy v1 farm's (127.79 is the Minecraft benchmark's).
const GS1_NET: u8 = 80;
/// The A2S baseline's farm (the replay families are on 127.82 and up).
const A2S_NET: u8 = 81;

pub(crate) fn child_ip(net: u8, k: u32) -> Ipv4Addr {
    Ipv4Addr::new(
        127,
        net,
        u8::try_from(k / 250).unwrap_or(0),
        u8::try_from(k % 250 + 1).unwrap_or(1),
    )
}

/// `ogp-load scan-serve`: binds the responders, prints `ready <bound> <failed,…>`, and
/// serves until standard input closes (or an hour passes).
pub fn serve(args: &ServeArgs) -> Result<()> {
    if let Some(f) = crate::replay::family(args.mix.trim()) {
        return serve_replay(args, f);
    }
    let mix = parse_mix(&args.mix)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let cell = ogp_net::StatusCell::new(common::status()?);
        let mut handles = Vec::with_capacity(args.count as usize);
        let mut failed = Vec::new();
        for j in 0..args.count {
            let listener =
                if protocol_of(&mix, args.offset + u64::from(j)) == Some(Protocol::OgpDraft) {
                    Listener::OgpDraft
                } else {
                    Listener::Standard
                };
            let mut config = ResponderConfig::default();
            config.listener = listener;
            // As `ogp serve --quake3`, where the mix asks for it (budgets as default: one
            // scanner asks each responder once or twice).
            config.quake3.enabled = mix.contains(&Some(Protocol::Quake3));
            config.rate = RateConfig::new(1e9, 1e9);
            config.rate_table_capacity = 4;
            let port = u16::try_from(u32::from(FIRST_PORT) + j).unwrap_or(u16::MAX);
            let addr = SocketAddr::new(IpAddr::V4(args.ip), port);
            match ogp_net::responder::spawn(addr, Arc::clone(&cell), config).await {
                Ok(h) => handles.push(h),
                Err(_) => failed.push(j.to_string()),
            }
        }
        ready_until_stdin_closes(handles.len(), &failed).await?;
        drop(handles);
        Ok(())
    })
}

/// The capture target `index` replays.
fn gs1_capture(index: u64) -> &'static [&'static [u8]] {
    let n = GS1_CAPTURES.len() as u64;
    GS1_CAPTURES[usize::try_from(index % n).unwrap_or(0)]
}

/// `scan-serve --mix FAMILY` for a family of the replay table: each socket answers as
/// [`crate::replay`] says with the capture of its place in the list; anything else is
/// ignored.
fn serve_replay(args: &ServeArgs, family: &'static ReplayFamily) -> Result<()> {
    let captures = Arc::new((family.load)()?);
    serve_each(args.ip, args.count, args.offset, |addr, index| {
        let captures = Arc::clone(&captures);
        async move {
            let sock = tokio::net::UdpSocket::bind(addr).await?;
            Ok(tokio::spawn(replay_socket(sock, family, captures, index)))
        }
    })
}

/// One replay server: answers every datagram on `sock` with the capture `index` replays
/// (forever; the caller aborts it).
pub(crate) async fn replay_socket(
    sock: tokio::net::UdpSocket,
    family: &'static ReplayFamily,
    captures: Arc<Vec<Capture>>,
    index: u64,
) {
    let mut buf = [0u8; 2048];
    let mut out = Vec::new();
    loop {
        let Ok((n, from)) = sock.recv_from(&mut buf).await else {
            tokio::task::yield_now().await;
            continue;
        };
        let (Some(c), Some(q)) = (crate::replay::capture_of(&captures, index), buf.get(..n)) else {
            continue;
        };
        out.clear();
        (family.answer)(c, q, from, &mut out);
        for d in &out {
            let _ = sock.send_to(d, from).await;
        }
    }
}

/// In a child: `count` servers on `ip`, ports 10000 and up, each bound and spawned by
/// `start(ADDR, INDEX)` (INDEX: its place in the whole list, from `offset`); says
/// `ready <bound> <failed,…>`, serves until standard input closes, then stops them.
pub(crate) fn serve_each<F, Fut>(ip: Ipv4Addr, count: u32, offset: u64, start: F) -> Result<()>
where
    F: Fn(SocketAddr, u64) -> Fut,
    Fut: std::future::Future<Output = std::io::Result<tokio::task::JoinHandle<()>>>,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut tasks = Vec::with_capacity(count as usize);
        let mut failed = Vec::new();
        for j in 0..count {
            let port = u16::try_from(u32::from(FIRST_PORT) + j).unwrap_or(u16::MAX);
            match start(SocketAddr::new(IpAddr::V4(ip), port), offset + u64::from(j)).await {
                Ok(t) => tasks.push(t),
                Err(_) => failed.push(j.to_string()),
            }
        }
        ready_until_stdin_closes(tasks.len(), &failed).await?;
        for t in tasks {
            t.abort();
        }
        Ok(())
    })
}

/// A child process, killed and reaped when dropped.
pub(crate) struct Kid(pub(crate) Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One responder child and the targets it serves.
pub(crate) struct Responders {
    pub(crate) kid: Kid,
    pub(crate) ip: Ipv4Addr,
    pub(crate) offset: u64,
    pub(crate) count: u32,
    pub(crate) failed: Vec<u32>,
}

/// Children serving `targets` responders of `mix` on 127.`net`.k.1.
fn start_responders(args: &Args, mix: &str, targets: u32, net: u8) -> Result<Vec<Responders>> {
    start_children(
        "scan-serve",
        &["--mix", mix],
        targets,
        args.per_process,
        net,
        "responder",
    )
}

/// Starts children of this binary (`ogp-load SUBCOMMAND --ip 127.NET.k.1 --count N
/// --offset O EXTRA…`) until `targets` are served, `per_process` each; each prints
/// `ready <bound> <failed,…>` once it listens, and serves until its stdin closes.
pub(crate) fn start_children(
    subcommand: &str,
    extra: &[&str],
    targets: u32,
    per_process: u32,
    net: u8,
    what: &str,
) -> Result<Vec<Responders>> {
    let me = std::env::current_exe().context("locating this binary")?;
    let mut out = Vec::new();
    let mut offset = 0u64;
    let mut k = 0u32;
    while offset < u64::from(targets) {
        let count = u32::try_from((u64::from(targets) - offset).min(u64::from(per_process)))
            .unwrap_or(per_process);
        let ip = child_ip(net, k);
        let mut child = Kid(Command::new(&me)
            .args([
                subcommand,
                "--ip",
                &ip.to_string(),
                "--count",
                &count.to_string(),
                "--offset",
                &offset.to_string(),
            ])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting a {what} child"))?);
        let stdout = child.0.stdout.take().context("child stdout")?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        let mut words = line.split_whitespace();
        ensure!(words.next() == Some("ready"), "{what} child said {line:?}");
        let failed: Vec<u32> = words
            .nth(1)
            .map(|f| f.split(',').filter_map(|x| x.parse().ok()).collect())
            .unwrap_or_default();
        if !failed.is_empty() {
            println!(
                "child {ip}: {} port(s) could not be bound; left out of the lists",
                failed.len()
            );
        }
        out.push(Responders {
            kid: child,
            ip,
            offset,
            count,
            failed,
        });
        offset += u64::from(count);
        k += 1;
    }
    Ok(out)
}

/// In a child: says `ready <bound> <failed,…>` on stdout, then waits until the parent
/// closes our stdin (it holds the other end), at most an hour.
pub(crate) async fn ready_until_stdin_closes(bound: usize, failed: &[String]) -> Result<()> {
    println!("ready {bound} {}", failed.join(","));
    std::io::stdout().flush()?;
    let stdin_closed = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        let mut input = std::io::stdin().lock();
        for _ in 0..1_000 {
            line.clear();
            if input.read_line(&mut line).map_or(true, |n| n == 0) {
                break;
            }
        }
    });
    let _ = tokio::time::timeout(Duration::from_secs(3600), stdin_closed).await;
    Ok(())
}

/// What one scan run did.
#[derive(Clone)]
pub(crate) struct Run {
    pub(crate) targets: u64,
    pub(crate) answered: u64,
    pub(crate) seconds: f64,
    pub(crate) peak_kb: Option<u64>,
    /// CPU time of the scanner process (user + system), from `getrusage` of reaped
    /// children.
    pub(crate) cpu: Option<Duration>,
    /// CPU time the responder children spent meanwhile.
    pub(crate) farm_cpu: Option<Duration>,
    pub(crate) summary: String,
}

/// User + system time of this process's reaped children (the scanner runs are reaped
/// one at a time; the responder children live on and are not counted).
fn children_cpu() -> Option<Duration> {
    use nix::sys::resource::{getrusage, UsageWho};
    let u = getrusage(UsageWho::RUSAGE_CHILDREN).ok()?;
    let tv = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(u64::try_from(t.tv_sec()).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec()).unwrap_or(0))
    };
    Some(tv(u.user_time()) + tv(u.system_time()))
}

/// CPU time of all responder children.
fn farm_cpu(farm: &[u32]) -> Option<Duration> {
    farm.iter().map(|p| common::process_cpu(*p)).sum()
}

impl Run {
    fn per_second(&self) -> f64 {
        self.targets as f64 / self.seconds.max(1e-6)
    }

    /// Targets answered (for Quake III: reported correctly) per second.
    fn answered_per_second(&self) -> f64 {
        self.answered as f64 / self.seconds.max(1e-6)
    }
}

/// Runs a scanner child: `count` reads its stdout lines and says whether one is an
/// answer; returns what it counted, the time, the peak RSS (sampled) and its last
/// stderr line.
pub(crate) fn run_child(
    mut cmd: Command,
    targets: u64,
    limit: Duration,
    mut is_answer: impl FnMut(&str) -> bool + Send + 'static,
    farm: &[u32],
) -> Result<Run> {
    let cpu0 = children_cpu();
    let farm0 = farm_cpu(farm);
    let t0 = Instant::now();
    let mut kid = Kid(cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {cmd:?}"))?);
    let pid = kid.0.id();
    let stdout = kid.0.stdout.take().context("stdout")?;
    let stderr = kid.0.stderr.take().context("stderr")?;
    let counter = std::thread::spawn(move || {
        let mut answered = 0u64;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if is_answer(&line) {
                answered += 1;
            }
        }
        answered
    });
    let err_reader = std::thread::spawn(move || {
        let mut last = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if !line.trim().is_empty() {
                last = line;
            }
        }
        last
    });
    let mut peak = None;
    let status = loop {
        if let Some(s) = kid.0.try_wait()? {
            break s;
        }
        if let Ok((kb, _)) = common::memory_kb(pid) {
            peak = Some(peak.map_or(kb, |p: u64| p.max(kb)));
        }
        if t0.elapsed() > limit {
            bail!("{cmd:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let seconds = t0.elapsed().as_secs_f64();
    let cpu = children_cpu().zip(cpu0).map(|(a, b)| a.saturating_sub(b));
    let farm_cpu = farm_cpu(farm).zip(farm0).map(|(a, b)| a.saturating_sub(b));
    let answered = counter.join().unwrap_or(0);
    let summary = err_reader.join().unwrap_or_default();
    ensure!(status.success(), "{cmd:?} failed: {status}; {summary}");
    Ok(Run {
        targets,
        answered,
        seconds,
        peak_kb: peak,
        cpu,
        farm_cpu,
        summary,
    })
}

pub(crate) fn ogp_answer(line: &str) -> bool {
    line.contains("\"ok\":true")
}

/// qstat's `-raw ,` server lines: `TYPE,ADDR,NAME,…`, or `TYPE,ADDR,DOWN` (also
/// TIMEOUT, ERROR, HOSTNOTFOUND) for no answer. Player and rule lines do not start with
/// the type.
fn qstat_answer(line: &str) -> bool {
    let mut f = line.split(',');
    let (Some(kind), Some(_addr), Some(third)) = (f.next(), f.next(), f.next()) else {
        return false;
    };
    matches!(kind, "A2S" | "GS3" | "GS4")
        && !matches!(third, "DOWN" | "TIMEOUT" | "ERROR" | "HOSTNOTFOUND" | "")
}

pub(crate) fn find_ogp(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    let me = std::env::current_exe().context("locating this binary")?;
    let p = me.with_file_name("ogp");
    ensure!(
        p.exists(),
        "{} not found: build it (cargo build --profile dist -p ogp-cli) or pass --ogp-bin",
        p.display()
    );
    Ok(p)
}

fn join(v: &[u32]) -> String {
    v.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn mb(kb: Option<u64>) -> String {
    kb.map_or("?".into(), common::mb)
}

pub(crate) fn print_run(label: &str, r: &Run) {
    println!(
        "{label:<34} {:>7} targets {:>7} answered ({:>6.2}%) in {:>7.2} s = {:>8.0} targets/s   peak RSS {}   CPU {} ({} µs/target), responders {}",
        r.targets,
        r.answered,
        100.0 * r.answered as f64 / r.targets.max(1) as f64,
        r.seconds,
        r.per_second(),
        mb(r.peak_kb),
        r.cpu.map_or("?".into(), |c| format!("{:.2} s", c.as_secs_f64())),
        r.cpu.map_or("?".into(), |c| format!("{:.1}", c.as_secs_f64() * 1e6 / r.targets.max(1) as f64)),
        r.farm_cpu.map_or("?".into(), |c| format!(
            "{:.2} s = {:.0}% of a core",
            c.as_secs_f64(),
            100.0 * c.as_secs_f64() / r.seconds.max(1e-6)
        )),
    );
}

/// `ogp-load scan`.
pub fn run(args: &Args) -> Result<()> {
    let ogp = find_ogp(args.ogp_bin.as_deref())?;
    let mix = parse_mix(&args.mix)?;
    let mix_names: Vec<&str> = mix
        .iter()
        .map(|p| p.map_or("auto", Protocol::name))
        .collect();
    let mix_arg = mix_names.join(",");
    common::print_command(
        "scan",
        &format!(
            "--targets {} --mix {mix_arg} --rate {} --max-in-flight {} --per-process {} --maxsim {} --sendinterval {} --defaults-targets {} --quake3-targets {} --gs1-targets {}{}{}",
            args.targets,
            args.rate,
            join(&args.max_in_flight),
            args.per_process,
            join(&args.maxsim),
            join(&args.sendinterval),
            args.defaults_targets,
            args.quake3_targets,
            args.gs1_targets,
            if args.family.is_empty() {
                String::new()
            } else {
                format!(" --family {} --family-targets {}", args.family.join(","), args.family_targets)
            },
            if args.no_qstat { " --no-qstat" } else { "" },
        ),
    );
    common::print_load("before");
    let t = Instant::now();
    let children = start_responders(args, &mix_arg, args.targets, MIXED_NET)?;
    println!(
        "{} responder child process(es) ready in {:.1} s",
        children.len(),
        t.elapsed().as_secs_f64()
    );
    let dir = std::env::temp_dir().join(format!("ogp-load-scan-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let _cleanup = RemoveDir(dir.clone());
    // The mixed list, and the A2S part of it for the comparison.
    let mixed = dir.join("mixed.txt");
    let ours_a2s = dir.join("a2s.txt");
    let qstat_list = dir.join("qstat.txt");
    let qstat_cap = u64::from(args.qstat_targets.unwrap_or(args.targets));
    let (mut n_mixed, mut n_a2s) = (0u64, 0u64);
    {
        let mut m = std::io::BufWriter::new(std::fs::File::create(&mixed)?);
        let mut a = std::io::BufWriter::new(std::fs::File::create(&ours_a2s)?);
        let mut q = std::io::BufWriter::new(std::fs::File::create(&qstat_list)?);
        for c in &children {
            for j in 0..c.count {
                if c.failed.contains(&j) {
                    continue;
                }
                let index = c.offset + u64::from(j);
                let port = u32::from(FIRST_PORT) + j;
                let p = protocol_of(&mix, index);
                writeln!(m, "{} {}:{port}", p.map_or("auto", Protocol::name), c.ip)?;
                n_mixed += 1;
                if p != Some(Protocol::OgpDraft) && n_a2s < qstat_cap {
                    // Every other one over GameSpy v3 (qstat's -gs4: with the 09
                    // challenge our responders require by default).
                    if n_a2s % 2 == 0 {
                        writeln!(a, "a2s {}:{port}", c.ip)?;
                        writeln!(q, "A2S {}:{port}", c.ip)?;
                    } else {
                        writeln!(a, "gamespy3 {}:{port}", c.ip)?;
                        writeln!(q, "GS4 {}:{port}", c.ip)?;
                    }
                    n_a2s += 1;
                }
            }
        }
        m.flush()?;
        a.flush()?;
        q.flush()?;
    }
    let limit = Duration::from_secs(args.max_seconds);
    let farm: Vec<u32> = children.iter().map(|c| c.kid.0.id()).collect();
    if args.bare_targets > 0 {
        bare_comparison(args, &ogp, &children, &dir, &farm, limit)?;
        if args.bare_only {
            return Ok(());
        }
    }
    let scan_cmd = |list: &Path, in_flight: u32| {
        let mut c = Command::new(&ogp);
        c.arg("scan")
            .arg("--json")
            .arg(list)
            .args(["--rate", &args.rate.to_string()])
            .args(["--max-in-flight", &in_flight.to_string()])
            .env_remove("OGP_LOG");
        c
    };
    // Each list at every --max-in-flight; the best run (answered targets/s) counts.
    let mut mixed_best: Option<(u32, Run)> = None;
    let mut a2s_best: Option<(u32, Run)> = None;
    let rate_of = |r: &Run| r.answered as f64 / r.seconds.max(1e-6);
    // The largest peak RSS of any run on the mixed list (the largest in-flight cap).
    let mut peak_mixed: Option<u64> = None;
    for &m in &args.max_in_flight {
        println!(
            "scanner: {} scan --json LIST --rate {} --max-in-flight {m}",
            ogp.display(),
            args.rate,
        );
        let r = run_child(scan_cmd(&mixed, m), n_mixed, limit, ogp_answer, &farm)?;
        print_run(&format!("ogp scan, mixed ({mix_arg})"), &r);
        peak_mixed = peak_mixed.max(r.peak_kb);
        println!("  {}", r.summary);
        if mixed_best
            .as_ref()
            .is_none_or(|(_, b)| rate_of(&r) > rate_of(b))
        {
            mixed_best = Some((m, r));
        }
        let r = run_child(scan_cmd(&ours_a2s, m), n_a2s, limit, ogp_answer, &farm)?;
        print_run("ogp scan, A2S+GS3 list", &r);
        println!("  {}", r.summary);
        if a2s_best
            .as_ref()
            .is_none_or(|(_, b)| rate_of(&r) > rate_of(b))
        {
            a2s_best = Some((m, r));
        }
    }
    let (Some((mixed_m, mixed_run)), Some((a2s_m, a2s_run))) = (mixed_best, a2s_best) else {
        bail!("--max-in-flight names no value");
    };
    // The best run for each -sendinterval: (sendinterval, label, run).
    let mut best: Vec<(u32, String, Run)> = Vec::new();
    // Each with its own defaults, on the first --defaults-targets of the comparison list.
    let mut defaults = None;
    if args.defaults_targets > 0 {
        let n = u64::from(args.defaults_targets).min(n_a2s);
        let take = |from: &Path, to: &Path| -> Result<()> {
            let text = std::fs::read_to_string(from)?;
            let lines: Vec<&str> = text.lines().take(n as usize).collect();
            std::fs::write(to, lines.join("\n") + "\n")?;
            Ok(())
        };
        let (ours_small, qstat_small) = (dir.join("a2s-small.txt"), dir.join("qstat-small.txt"));
        take(&ours_a2s, &ours_small)?;
        take(&qstat_list, &qstat_small)?;
        let mut c = Command::new(&ogp);
        c.arg("scan")
            .arg("--json")
            .arg(&ours_small)
            .env_remove("OGP_LOG");
        println!(
            "defaults: {} scan --json LIST  ({n} targets)",
            ogp.display()
        );
        let ours = run_child(c, n, limit, ogp_answer, &farm)?;
        print_run("ogp scan, its defaults", &ours);
        let theirs = if args.no_qstat {
            None
        } else {
            let mut c = Command::new(&args.qstat_bin);
            c.arg("-f")
                .arg(&qstat_small)
                .args(["-raw", ",", "-nh", "-R", "-P"]);
            println!(
                "defaults: {} -f LIST -raw , -nh -R -P  ({n} targets)",
                args.qstat_bin.display()
            );
            let r = run_child(c, n, limit, qstat_answer, &farm)?;
            print_run("qstat, its defaults", &r);
            Some(r)
        };
        defaults = Some((ours, theirs));
    }
    if !args.no_qstat {
        for &si in &args.sendinterval {
            for &m in &args.maxsim {
                let mut c = Command::new(&args.qstat_bin);
                c.arg("-f")
                    .arg(&qstat_list)
                    .args(["-maxsim", &m.to_string(), "-sendinterval", &si.to_string()])
                    .args([
                        "-retry",
                        "1",
                        "-interval",
                        "0.3",
                        "-raw",
                        ",",
                        "-nh",
                        "-R",
                        "-P",
                    ]);
                println!(
                    "qstat: {} -f LIST -maxsim {m} -sendinterval {si} -retry 1 -interval 0.3 -raw , -nh -R -P",
                    args.qstat_bin.display()
                );
                let r = match run_child(c, n_a2s, limit, qstat_answer, &farm) {
                    Ok(r) => r,
                    Err(e) => {
                        println!("  qstat -maxsim {m} failed: {e:#}");
                        continue;
                    }
                };
                let label = format!("qstat -maxsim {m} -sendinterval {si}");
                print_run(&label, &r);
                let rate = r.answered as f64 / r.seconds.max(1e-6);
                match best.iter_mut().find(|(s, _, _)| *s == si) {
                    Some(b) if rate > b.2.answered as f64 / b.2.seconds.max(1e-6) => {
                        *b = (si, label, r);
                    }
                    Some(_) => {}
                    None => best.push((si, label, r)),
                }
            }
        }
    }
    let mut families = Vec::new();
    if args.quake3_targets > 0 {
        served()?;
        families.push(family_scans(
            args,
            &ogp,
            &dir,
            limit,
            QUAKE3,
            args.quake3_targets,
        )?);
    }
    if args.gs1_targets > 0 {
        families.push(family_scans(
            args,
            &ogp,
            &dir,
            limit,
            GAMESPY1,
            args.gs1_targets,
        )?);
    }
    // Where qstat does not read a family (or is not run), our A2S scan of the same size is
    // the baseline: one per size, run once.
    let mut baselines: Vec<(u32, u32, Run)> = Vec::new();
    if args.family_targets > 0 {
        for f in chosen_families(&args.family)? {
            let runs = family_scans(args, &ogp, &dir, limit, f, args.family_targets)?;
            if runs.theirs.is_none() && !baselines.iter().any(|b| b.0 == args.family_targets) {
                println!("A2S baseline: {} targets", args.family_targets);
                let (m, r) = a2s_baseline(args, &ogp, &dir, limit, args.family_targets)?;
                baselines.push((args.family_targets, m, r));
            }
            families.push(runs);
        }
    }
    common::print_load("after");
    println!("summary:");
    print_run(
        &format!("  best: ogp scan --max-in-flight {mixed_m}, mixed ({mix_arg})"),
        &mixed_run,
    );
    print_run(
        &format!("  best: ogp scan --max-in-flight {a2s_m}, A2S+GS3 list"),
        &a2s_run,
    );
    let ours = a2s_run.answered as f64 / a2s_run.seconds.max(1e-6);
    for (si, label, q) in &best {
        print_run(&format!("  best: {label}"), q);
        let theirs = q.answered as f64 / q.seconds.max(1e-6);
        let pacing = if *si == 5 {
            "its default pacing"
        } else {
            "its pacing changed"
        };
        println!(
            "  ratio, each at its best, vs qstat -sendinterval {si} ({pacing}): {:.2}x answered targets/s, {} CPU per target (same list; target >= 5x)",
            ours / theirs.max(1e-9),
            match (a2s_run.cpu, q.cpu) {
                (Some(a), Some(b)) => format!(
                    "{:.2}x less",
                    b.as_secs_f64() / a.as_secs_f64().max(1e-9)
                ),
                _ => "?".into(),
            }
        );
    }
    if let Some((ours, theirs)) = &defaults {
        print_run("  defaults: ogp scan", ours);
        if let Some(t) = theirs {
            print_run("  defaults: qstat", t);
            println!(
                "  ratio, each with its defaults: {:.1}x answered targets/s",
                (ours.answered as f64 / ours.seconds.max(1e-6))
                    / (t.answered as f64 / t.seconds.max(1e-6)).max(1e-9)
            );
        }
    }
    println!(
        "  memory: ogp scan peak RSS {} at most for {} targets (target <= 20 MB at 100,000)",
        mb(peak_mixed),
        mixed_run.targets
    );
    for FamilyRuns {
        family,
        ours_m,
        ours,
        ours_seen,
        theirs,
    } in &families
    {
        let name = family.label;
        print_run(
            &format!("  best: ogp scan --max-in-flight {ours_m}, {name} list"),
            ours,
        );
        if let Some((label, q, seen)) = theirs {
            print_run(&format!("  best: {label}"), q);
            println!(
                "  ratio, {name}, each at its best: {:.2}x correctly reported targets/s (target >= 1x)",
                ours.answered_per_second() / q.answered_per_second().max(1e-9)
            );
            println!(
                "  {name}, best runs: {} targets reported correctly by both, {} by ogp scan only, {} by qstat only",
                ours_seen.intersection(seen).count(),
                ours_seen.difference(seen).count(),
                seen.difference(ours_seen).count(),
            );
            println!(
                "  {name}, CPU per target: ogp scan {} µs, qstat {} µs",
                per_target_us(ours),
                per_target_us(q)
            );
        } else if let Some((_, m, b)) = baselines.iter().find(|b| u64::from(b.0) == ours.targets) {
            print_run(
                &format!("  baseline: ogp scan --max-in-flight {m}, A2S list"),
                b,
            );
            println!(
                "  ratio, {name} against our A2S scan of the same size, each at its best: {:.2}x the time (target <= 1.2x), {} CPU per target ({} / {} µs); {}",
                ours.seconds / b.seconds.max(1e-6),
                match (ours.cpu, b.cpu) {
                    (Some(a), Some(c)) => format!("{:.2}x", a.as_secs_f64() / c.as_secs_f64().max(1e-9)),
                    _ => "?".into(),
                },
                per_target_us(ours),
                per_target_us(b),
                family.shape,
            );
        }
    }
    Ok(())
}

/// CPU microseconds per target of a run, or `?`.
fn per_target_us(r: &Run) -> String {
    r.cpu.map_or("?".into(), |c| {
        format!("{:.1}", c.as_secs_f64() * 1e6 / r.targets.max(1) as f64)
    })
}

/// What the Quake III farm serves, as a scanner must report it.
struct Served {
    host: String,
    map: String,
    /// `sv_maxclients`: slots and reserved slots.
    max_clients: u64,
    /// `slot_max` as `ogp scan` reads it back (`sv_maxclients` less `sv_privateClients`).
    slot_max: u64,
    players: u64,
}

static SERVED: std::sync::OnceLock<Served> = std::sync::OnceLock::new();

fn served() -> Result<&'static Served> {
    if let Some(s) = SERVED.get() {
        return Ok(s);
    }
    let st = common::status()?;
    let slot_max = u64::from(st.slot_max.context("state without slot_max")?);
    let s = Served {
        host: st.host_name.context("state without host_name")?.to_string(),
        map: st.map.context("state without map")?.name.to_string(),
        max_clients: slot_max + u64::from(st.reserved_slots.unwrap_or(0)),
        slot_max,
        players: st.players.map_or(0, |p| p.len() as u64),
    };
    Ok(SERVED.get_or_init(|| s))
}

/// The `addr` of an `ogp scan --json` line that says `ok` for `protocol`, and the line.
fn ogp_ok(line: &str, protocol: &str) -> Option<(SocketAddr, serde_json::Value)> {
    let v = serde_json::from_str::<serde_json::Value>(line).ok()?;
    if v["ok"] != true || v["protocol"] != protocol {
        return None;
    }
    let addr = v["addr"].as_str()?.parse().ok()?;
    Some((addr, v))
}

/// An `ogp scan --json` line that reports a Quake III target as served: its address.
fn quake3_ogp_correct(line: &str) -> Option<SocketAddr> {
    let s = SERVED.get()?;
    let (addr, v) = ogp_ok(line, "quake3")?;
    let st = &v["status"];
    (st["host_name"].as_str() == Some(s.host.as_str())
        && st["map"]["name"].as_str() == Some(s.map.as_str())
        && st["slot_max"].as_u64() == Some(s.slot_max)
        && st["players"].as_array().map(|p| p.len() as u64) == Some(s.players))
    .then_some(addr)
}

/// A qstat `-raw , -nh` server line of `kind`
/// (`KIND,ADDR,NAME,MAP,MAX,PLAYERS,PING,RETRIES`; NetQuake's
/// `QS,ADDR,NAME,ITS ADDR,PROTOCOL,MAP,MAX,PLAYERS,PING,RETRIES,0,0`, its name then
/// holding its own address and protocol): the address, name, map, max players and
/// players. The name may hold commas: the fields after it are taken from the end.
fn qstat_server_line<'a>(
    line: &'a str,
    kind: &str,
) -> Option<(SocketAddr, &'a str, &'a str, u64, u64)> {
    let rest = line.strip_prefix(kind)?.strip_prefix(',')?;
    let (addr, rest) = rest.split_once(',')?;
    // NetQuake's lines (`QS`) end with two more fields after the retries.
    let rest = if kind == "QS" {
        rest.rsplitn(3, ',').nth(2)?
    } else {
        rest
    };
    let mut back = rest.rsplitn(6, ',');
    let (_retries, _ping, players, max, map, name) = (
        back.next()?,
        back.next()?,
        back.next()?,
        back.next()?,
        back.next()?,
        back.next()?,
    );
    Some((
        addr.parse().ok()?,
        name,
        map,
        max.parse().ok()?,
        players.parse().ok()?,
    ))
}

/// A qstat `-raw , -nh` line that reports a Quake III target as served. qstat rewrites
/// bytes ≥ 0x80 of the name (its Quake III character set), so the name is compared up to
/// its first non-ASCII character.
fn quake3_qstat_correct(line: &str) -> Option<SocketAddr> {
    let s = SERVED.get()?;
    let (addr, name, map, max, players) = qstat_server_line(line, "Q3S")?;
    let ascii_prefix: String = s.host.chars().take_while(char::is_ascii).collect();
    (name.starts_with(&ascii_prefix)
        && map == s.map
        && max == s.max_clients
        && players == s.players)
        .then_some(addr)
}

/// What a GameSpy v1 capture says, as both scanners must report it: `mapname`,
/// `maxplayers`, `numplayers`.
#[derive(Debug, PartialEq)]
struct Gs1Served {
    map: String,
    max: u64,
    players: u64,
}

/// The values of a capture's first datagram (`\key\value\…`).
fn gs1_served(parts: &[&[u8]]) -> Option<Gs1Served> {
    let first = String::from_utf8_lossy(parts.first()?);
    let mut words = first.split('\\').skip(1);
    let (mut map, mut max, mut players) = (None, None, None);
    while let (Some(k), Some(v)) = (words.next(), words.next()) {
        match k {
            "mapname" => map = Some(v.to_string()),
            "maxplayers" => max = v.trim().parse().ok(),
            "numplayers" => players = v.trim().parse().ok(),
            _ => {}
        }
    }
    Some(Gs1Served {
        map: map?,
        max: max?,
        players: players?,
    })
}

/// The GameSpy v1 farm: each target's address and the index of the capture it replays.
static GS1_TARGETS: std::sync::OnceLock<std::collections::HashMap<SocketAddr, u64>> =
    std::sync::OnceLock::new();

fn gs1_expected(addr: SocketAddr) -> Option<Gs1Served> {
    gs1_served(gs1_capture(*GS1_TARGETS.get()?.get(&addr)?))
}

/// The fields of an `ogp scan --json` line that the GameSpy v1 check reads. serde skips
/// the rest (the players and rules: most of a 3 KB line) without building it: the checker
/// runs beside the scanners on the same 2 cores, and building every line as a
/// `serde_json::Value` cost it more CPU than `ogp scan` spent scanning.
#[derive(serde::Deserialize)]
struct Gs1Line {
    ok: bool,
    protocol: String,
    addr: Option<String>,
    #[serde(default)]
    warnings: Vec<String>,
    status: Option<Gs1Status>,
}

#[derive(serde::Deserialize)]
struct Gs1Status {
    map: Option<Gs1Map>,
    slot_max: Option<u64>,
    player_count: Option<u64>,
}

#[derive(serde::Deserialize)]
struct Gs1Map {
    name: String,
}

/// An `ogp scan --json` line that reports a GameSpy v1 target as its capture says, with
/// no part missing: its address.
fn gs1_ogp_correct(line: &str) -> Option<SocketAddr> {
    let l: Gs1Line = serde_json::from_str(line).ok()?;
    if !l.ok || l.protocol != "gamespy1" {
        return None;
    }
    let addr: SocketAddr = l.addr?.parse().ok()?;
    let want = gs1_expected(addr)?;
    let st = l.status?;
    let incomplete = l.warnings.iter().any(|w| w.contains("incomplete"));
    (!incomplete
        && st.map.map(|m| m.name) == Some(want.map)
        && st.slot_max == Some(want.max)
        && st.player_count == Some(want.players))
    .then_some(addr)
}

/// A qstat `-gps -raw , -nh` line that reports a GameSpy v1 target as its capture says.
fn gs1_qstat_correct(line: &str) -> Option<SocketAddr> {
    let (addr, _name, map, max, players) = qstat_server_line(line, "GPS")?;
    let want = gs1_expected(addr)?;
    (map == want.map && max == want.max && players == want.players).then_some(addr)
}

/// A line check: the target a scanner's output line reports correctly, if it does.
type Check = Arc<dyn Fn(&str) -> Option<SocketAddr> + Send + Sync>;

/// How a family's lines are checked.
#[derive(Clone, Copy)]
enum Checks {
    /// By functions of their own (Quake III's served status, GameSpy v1's captures).
    Fixed {
        ours: fn(&str) -> Option<SocketAddr>,
        qstat: fn(&str) -> Option<SocketAddr>,
    },
    /// Against the capture each target replays ([`crate::replay`]).
    Replay(&'static ReplayFamily),
}

/// A protocol compared on a farm of its own: `ogp scan` and qstat on the same targets,
/// each line checked.
#[derive(Clone, Copy)]
struct Family {
    /// For output: `Quake III`.
    label: &'static str,
    /// The farm's `--mix` and the word of `ogp scan`'s list.
    protocol: &'static str,
    /// qstat's word in its list file, its flag (for output), and the offset of the port
    /// it is given from the farm's port; `None`: qstat does not read the family, and
    /// `ogp scan` is compared with its own A2S scan of the same size.
    qstat: Option<(&'static str, &'static str, i32)>,
    /// The second octet of the farm's addresses.
    net: u8,
    checks: Checks,
    /// Every run must report every target correctly (else the benchmark fails).
    exact: bool,
    /// Round trips per target, for the report.
    shape: &'static str,
}

static QUAKE3: Family = Family {
    label: "Quake III",
    protocol: "quake3",
    qstat: Some(("Q3S", "-q3s", 0)),
    net: QUAKE3_NET,
    checks: Checks::Fixed {
        ours: quake3_ogp_correct,
        qstat: quake3_qstat_correct,
    },
    exact: false,
    shape: "two round trips (getinfo with its challenge, then getstatus)",
};

static GAMESPY1: Family = Family {
    label: "GameSpy v1",
    protocol: "gamespy1",
    qstat: Some(("GPS", "-gps", 0)),
    net: GS1_NET,
    checks: Checks::Fixed {
        ours: gs1_ogp_correct,
        qstat: gs1_qstat_correct,
    },
    exact: false,
    shape: "one request, two or three reply datagrams",
};

/// The family of `--family NAME`: one of the replay table (GameSpy v1 with its own
/// checks).
fn named_family(name: &str) -> Result<Family> {
    if name == GAMESPY1.protocol {
        return Ok(GAMESPY1);
    }
    let f = crate::replay::family(name)
        .with_context(|| format!("--family {name}: not one of {}", family_names().join(", ")))?;
    Ok(Family {
        label: f.label,
        protocol: f.protocol,
        qstat: f.qstat.as_ref().map(|q| (q.kind, q.flag, q.port_offset)),
        net: f.net,
        checks: Checks::Replay(f),
        exact: true,
        shape: f.shape,
    })
}

/// The names `--family` takes (`all`: every one but GameSpy v1, which has
/// `--gs1-targets`).
fn family_names() -> Vec<&'static str> {
    crate::replay::FAMILIES.iter().map(|f| f.protocol).collect()
}

/// The families of `--family`, in table order, without repeats.
fn chosen_families(names: &[String]) -> Result<Vec<Family>> {
    let mut want: Vec<&str> = Vec::new();
    for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        if n == "all" {
            want.extend(family_names().into_iter().filter(|f| *f != "gamespy1"));
        } else {
            want.push(n);
        }
    }
    let mut out: Vec<Family> = Vec::new();
    for n in want {
        let f = named_family(n)?;
        if !out.iter().any(|o| o.protocol == f.protocol) {
            out.push(f);
        }
    }
    Ok(out)
}

/// The fields of an `ogp scan --json` line a replay check reads (serde skips the rest).
#[derive(serde::Deserialize)]
struct ReplayLine {
    ok: bool,
    protocol: String,
    addr: Option<String>,
    #[serde(default)]
    warnings: Vec<String>,
    status: Option<ReplayStatus>,
}

#[derive(serde::Deserialize)]
struct ReplayStatus {
    host_name: Option<String>,
    map: Option<Gs1Map>,
    slot_max: Option<u64>,
    player_count: Option<u64>,
    #[serde(default)]
    players: Vec<serde::de::IgnoredAny>,
}

/// Warnings that say a part of the answer did not come: such a line does not count.
fn says_incomplete(w: &str) -> bool {
    let w = w.to_ascii_lowercase();
    [
        "incomplete",
        "no reply",
        "left out",
        "timed out",
        "lost",
        "missing",
    ]
    .iter()
    .any(|k| w.contains(k))
}

/// Whether an `ogp scan --json` line reports `want` for `protocol`, with no part
/// missing: its address.
fn replay_ogp_correct(
    line: &str,
    protocol: &str,
    want_of: impl Fn(SocketAddr) -> Option<crate::replay::Want>,
) -> Option<SocketAddr> {
    let l: ReplayLine = serde_json::from_str(line).ok()?;
    if !l.ok || l.protocol != protocol || l.warnings.iter().any(|w| says_incomplete(w)) {
        return None;
    }
    let addr: SocketAddr = l.addr?.parse().ok()?;
    let want = want_of(addr)?;
    let st = l.status?;
    let players = st
        .player_count
        .unwrap_or(u64::try_from(st.players.len()).ok()?);
    (want.host.is_none_or(|h| st.host_name.as_deref() == Some(h))
        && want
            .map
            .is_none_or(|m| st.map.as_ref().map(|x| x.name.as_str()) == Some(m))
        && want.slot_max.is_none_or(|m| st.slot_max == Some(m))
        && want.players.is_none_or(|p| players == p))
    .then_some(addr)
}

/// Whether a qstat `-raw , -nh` server line of `kind` reports `want` (map, max players,
/// players; the port as qstat was given it, `offset` from the farm's): the farm address.
fn replay_qstat_correct(
    line: &str,
    kind: &str,
    offset: i32,
    want_of: impl Fn(SocketAddr) -> Option<crate::replay::Want>,
) -> Option<SocketAddr> {
    let (mut addr, _name, map, max, players) = qstat_server_line(line, kind)?;
    addr.set_port(u16::try_from(i32::from(addr.port()).checked_sub(offset)?).ok()?);
    let want = want_of(addr)?;
    (want.map.is_none_or(|m| m == map)
        && want.slot_max.is_none_or(|m| m == max)
        && want.players.is_none_or(|p| p == players))
    .then_some(addr)
}

/// The checks of a replay family on a farm whose targets `index` lists (address → place
/// in the list): ours, and qstat's when it reads the family.
fn replay_checks(
    f: &'static ReplayFamily,
    index: std::collections::HashMap<SocketAddr, u64>,
) -> Result<(Check, Check)> {
    let captures = Arc::new((f.load)()?);
    let index = Arc::new(index);
    let (c1, i1) = (Arc::clone(&captures), Arc::clone(&index));
    let ours: Check = Arc::new(move |line: &str| {
        replay_ogp_correct(line, f.protocol, |a| {
            Some(crate::replay::capture_of(&c1, *i1.get(&a)?)?.ours.clone())
        })
    });
    let (kind, offset) = f
        .qstat
        .as_ref()
        .map_or(("", 0), |q| (q.kind, q.port_offset));
    let qstat: Check = Arc::new(move |line: &str| {
        replay_qstat_correct(line, kind, offset, |a| {
            crate::replay::capture_of(&captures, *index.get(&a)?)?
                .qstat
                .clone()
        })
    });
    Ok((ours, qstat))
}

/// The targets a run reported correctly.
type Seen = std::collections::HashSet<SocketAddr>;

/// Runs a scanner and keeps the addresses `correct` accepts.
fn run_checked(
    cmd: Command,
    n: u64,
    limit: Duration,
    correct: Check,
    farm: &[u32],
) -> Result<(Run, Seen)> {
    let seen = Arc::new(std::sync::Mutex::new(Seen::new()));
    let into = Arc::clone(&seen);
    let r = run_child(
        cmd,
        n,
        limit,
        move |l| correct(l).is_some_and(|a| into.lock().is_ok_and(|mut s| s.insert(a))),
        farm,
    )?;
    let seen = std::mem::take(&mut *seen.lock().map_err(|_| anyhow::anyhow!("poisoned"))?);
    Ok((r, seen))
}

/// The best runs of one family: `ogp scan` (with its `--max-in-flight`) and qstat (with
/// its settings), if qstat ran, each with the targets it reported correctly.
struct FamilyRuns {
    family: Family,
    ours_m: u32,
    ours: Run,
    ours_seen: Seen,
    theirs: Option<(String, Run, Seen)>,
}

/// One family's comparison: its farm, its lists, `ogp scan` at each `--max-in-flight`
/// and qstat at each `-maxsim` and `-sendinterval`; the best run of each.
fn family_scans(
    args: &Args,
    ogp: &Path,
    dir: &Path,
    limit: Duration,
    family: Family,
    targets: u32,
) -> Result<FamilyRuns> {
    let name = family.protocol;
    let t = Instant::now();
    let children = start_responders(args, name, targets, family.net)?;
    println!(
        "{name}: {} responder child process(es) ready in {:.1} s; ogp scan: {}",
        children.len(),
        t.elapsed().as_secs_f64(),
        family.shape,
    );
    let (ours_list, qstat_list) = (
        dir.join(format!("{name}.txt")),
        dir.join(format!("{name}-qstat.txt")),
    );
    let mut n = 0u64;
    let mut index = std::collections::HashMap::new();
    {
        let mut a = std::io::BufWriter::new(std::fs::File::create(&ours_list)?);
        let mut q = std::io::BufWriter::new(std::fs::File::create(&qstat_list)?);
        for c in &children {
            for j in (0..c.count).filter(|j| !c.failed.contains(j)) {
                let port = u32::from(FIRST_PORT) + j;
                writeln!(a, "{name} {}:{port}", c.ip)?;
                if let Some((kind, _, offset)) = family.qstat {
                    let qport = i64::from(port) + i64::from(offset);
                    writeln!(q, "{kind} {}:{qport}", c.ip)?;
                }
                if let Ok(p) = u16::try_from(port) {
                    index.insert(
                        SocketAddr::new(IpAddr::V4(c.ip), p),
                        c.offset + u64::from(j),
                    );
                }
                n += 1;
            }
        }
        a.flush()?;
        q.flush()?;
    }
    let (ours_check, qstat_check): (Check, Check) = match family.checks {
        Checks::Fixed { ours, qstat } => {
            if family.protocol == GAMESPY1.protocol {
                ensure!(
                    GS1_TARGETS.set(index).is_ok(),
                    "the GameSpy v1 farm was started twice"
                );
            }
            (Arc::new(ours), Arc::new(qstat))
        }
        Checks::Replay(f) => replay_checks(f, index)?,
    };
    let farm: Vec<u32> = children.iter().map(|c| c.kid.0.id()).collect();
    let mut ours: Option<(u32, Run, Seen)> = None;
    for &m in &args.max_in_flight {
        println!(
            "{name} scanner: {} scan --json LIST --rate {} --max-in-flight {m}",
            ogp.display(),
            args.rate
        );
        let mut c = Command::new(ogp);
        c.arg("scan")
            .arg("--json")
            .arg(&ours_list)
            .args(["--rate", &args.rate.to_string()])
            .args(["--max-in-flight", &m.to_string()])
            .env_remove("OGP_LOG");
        let (r, seen) = run_checked(c, n, limit, Arc::clone(&ours_check), &farm)?;
        print_run(&format!("ogp scan, {} list", family.label), &r);
        println!("  {}", r.summary);
        ensure!(
            !family.exact || r.answered == n,
            "{name}: ogp scan --max-in-flight {m} reported {} of {n} targets correctly",
            r.answered
        );
        if ours
            .as_ref()
            .is_none_or(|(_, b, _)| r.answered_per_second() > b.answered_per_second())
        {
            ours = Some((m, r, seen));
        }
    }
    let (ours_m, ours, ours_seen) = ours.context("--max-in-flight names no value")?;
    let mut theirs: Option<(String, Run, Seen)> = None;
    if let (false, Some((_, flag, _))) = (args.no_qstat, family.qstat) {
        for &si in &args.sendinterval {
            for &m in &args.maxsim {
                let mut c = Command::new(&args.qstat_bin);
                c.arg("-f")
                    .arg(&qstat_list)
                    .args(["-maxsim", &m.to_string(), "-sendinterval", &si.to_string()])
                    .args(["-retry", "1", "-interval", "0.3", "-raw", ",", "-nh"]);
                let label = format!("qstat {flag} -maxsim {m} -sendinterval {si}");
                println!(
                    "{name} qstat: {} -f LIST -maxsim {m} -sendinterval {si} -retry 1 -interval 0.3 -raw , -nh",
                    args.qstat_bin.display()
                );
                let (r, seen) = match run_checked(c, n, limit, Arc::clone(&qstat_check), &farm) {
                    Ok(r) => r,
                    Err(e) => {
                        println!("  {label} failed: {e:#}");
                        continue;
                    }
                };
                print_run(&label, &r);
                if family.exact && r.answered != n {
                    // qstat loses targets at some settings: such a run is shown, not
                    // counted; one run at least must have them all.
                    println!(
                        "  not counted: {} of {n} targets reported correctly",
                        r.answered
                    );
                    continue;
                }
                if theirs
                    .as_ref()
                    .is_none_or(|(_, b, _)| r.answered_per_second() > b.answered_per_second())
                {
                    theirs = Some((label, r, seen));
                }
            }
        }
        ensure!(
            !family.exact || theirs.is_some(),
            "{name}: no qstat run reported all {n} targets correctly"
        );
    }
    drop(children);
    Ok(FamilyRuns {
        family,
        ours_m,
        ours,
        ours_seen,
        theirs,
    })
}

/// `ogp scan` on an A2S farm of `targets` (the responder as in the mixed list, challenge
/// and all: INFO, its challenge, INFO again, PLAYER, RULES) at each `--max-in-flight`,
/// every target answered: the best run, the baseline of families qstat cannot read.
fn a2s_baseline(
    args: &Args,
    ogp: &Path,
    dir: &Path,
    limit: Duration,
    targets: u32,
) -> Result<(u32, Run)> {
    let children = start_responders(args, "a2s", targets, A2S_NET)?;
    let list = dir.join("a2s-baseline.txt");
    let n = write_list(&children, &list, "a2s ")?;
    let farm: Vec<u32> = children.iter().map(|c| c.kid.0.id()).collect();
    let mut best: Option<(u32, Run)> = None;
    for &m in &args.max_in_flight {
        let mut c = Command::new(ogp);
        c.arg("scan")
            .arg("--json")
            .arg(&list)
            .args(["--rate", &args.rate.to_string()])
            .args(["--max-in-flight", &m.to_string()])
            .env_remove("OGP_LOG");
        let r = run_child(c, n, limit, ogp_answer, &farm)?;
        print_run(&format!("ogp scan, A2S baseline, in flight {m}"), &r);
        ensure!(
            r.answered == n,
            "A2S baseline: {} of {n} targets answered",
            r.answered
        );
        if best
            .as_ref()
            .is_none_or(|(_, b)| r.answered_per_second() > b.answered_per_second())
        {
            best = Some((m, r));
        }
    }
    best.context("--max-in-flight names no value")
}

/// Removes a directory when dropped.
pub(crate) struct RemoveDir(pub(crate) PathBuf);

impl Drop for RemoveDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_mix_parses_with_auto() {
        let mix = parse_mix("ogp,a2s,gqp,gamespy3,ogp-draft,auto").unwrap();
        assert_eq!(mix.len(), 6);
        assert_eq!(protocol_of(&mix, 5), None);
        assert_eq!(protocol_of(&mix, 6), Some(Protocol::Ogp));
        assert_eq!(protocol_of(&mix, 4), Some(Protocol::OgpDraft));
        assert!(parse_mix("ogp,nosuch").is_err());
        assert!(parse_mix(" , ").is_err());
    }

    /// The Quake III checks accept a line only when it reports the served status: the
    /// lines here are what `ogp scan --json` and `quakestat -raw , -nh` printed for an
    /// `ogp serve --quake3` of the same state.
    #[test]
    fn quake3_lines_count_only_when_they_report_the_served_status() {
        served().unwrap();
        let ogp = r#"{"schema":1,"protocol":"quake3","addr":"127.78.0.1:10000","ok":true,"status":{"host_name":"Demo Arena #1 – Ünïcödé ✓","map":{"name":"Harbor"},"slot_max":24,"players":[{"name":"Alice"},{"name":"Bob the Bot"},{"name":"Zoë"}]}}"#;
        assert_eq!(quake3_ogp_correct(ogp), "127.78.0.1:10000".parse().ok());
        assert!(quake3_ogp_correct(&ogp.replace("Harbor", "Canyon")).is_none());
        assert!(quake3_ogp_correct(&ogp.replace(r#",{"name":"Zoë"}"#, "")).is_none());
        assert!(quake3_ogp_correct(&ogp.replace("\"ok\":true", "\"ok\":false")).is_none());
        let qstat = "Q3S,127.78.0.1:10000,Demo Arena #1 B(1 CnC/cC6dC) B1,Harbor,26,3,0,0";
        assert_eq!(quake3_qstat_correct(qstat), "127.78.0.1:10000".parse().ok());
        assert!(quake3_qstat_correct(&qstat.replace(",3,0,0", ",2,0,0")).is_none());
        assert!(quake3_qstat_correct(&qstat.replace("Harbor", "Canyon")).is_none());
        assert!(quake3_qstat_correct("Q3S,127.78.0.1:10000,DOWN").is_none());
        assert!(quake3_qstat_correct("Alice,1200,35").is_none());
    }

    /// Targets of each family's tiny run.
    const TINY: u64 = 20;

    /// qstat, when it is installed; without it the qstat part is skipped with a note,
    /// and fails with `OGP_INTEROP=1` (where the peers must be there).
    fn qstat_if_installed(test: &str) -> Option<PathBuf> {
        let found = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .chain([PathBuf::from("/usr/bin")])
            .map(|d| d.join("quakestat"))
            .find(|p| p.is_file());
        if found.is_none() {
            if std::env::var("OGP_INTEROP").as_deref() == Ok("1") {
                ogp_testkit::interop::missing_peer("quakestat (Debian package qstat)");
            }
            eprintln!("note: {test}: quakestat not installed, its part not run");
        }
        found
    }

    /// A family's benchmark in small: [`TINY`] replay servers in this process (the
    /// farm's own serving loop), scanned by the engine `ogp scan` runs, each result
    /// printed as `ogp scan --json` prints it and checked by the benchmark's own check;
    /// then, where qstat reads the family and is installed, qstat on the same servers
    /// with its list as the benchmark writes it. Every target must be reported correctly
    /// by each. Returns the time the scan took.
    fn tiny_family_run(name: &str) -> Duration {
        let f = crate::replay::family(name).unwrap();
        let fam = named_family(name).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let captures = Arc::new((f.load)().unwrap());
            let mut index = std::collections::HashMap::new();
            let mut tasks = Vec::new();
            for i in 0..TINY {
                let sock = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
                index.insert(sock.local_addr().unwrap(), i);
                tasks.push(tokio::spawn(replay_socket(
                    sock,
                    f,
                    Arc::clone(&captures),
                    i,
                )));
            }
            let (ours, qstat) = replay_checks(f, index.clone()).unwrap();
            let mut config = ogp_net::scan::ScanConfig::default();
            config.rate = 100_000;
            config.max_in_flight = 64;
            let ogp_net::scan::Scan {
                targets,
                mut results,
                handle,
            } = ogp_net::scan::start(config).unwrap();
            let protocol: Protocol = name.parse().unwrap();
            let t0 = Instant::now();
            for (k, a) in index.keys().enumerate() {
                let t =
                    ogp_net::scan::Target::new(a.to_string(), Some(protocol)).with_id(k as u64 + 1);
                targets.send(t).await.unwrap();
            }
            drop(targets);
            let mut seen = Seen::new();
            let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
            while let Ok(Some(r)) = tokio::time::timeout_at(deadline, results.recv()).await {
                let about = ogp_proto::result::About {
                    target: &r.target,
                    line: Some(r.id),
                    requested: r.requested,
                    addr: r.addr,
                };
                let line = ogp_proto::result::line(&about, r.outcome.as_ref());
                let a = ours(line.trim_end());
                assert!(a.is_some(), "{name}: the check refused {line}");
                seen.extend(a);
            }
            let took = t0.elapsed();
            let _ = handle.join().await;
            assert_eq!(
                seen.len() as u64,
                TINY,
                "{name}: targets reported correctly"
            );
            if let Some((kind, _, offset)) = fam.qstat {
                if let Some(qstat_bin) = qstat_if_installed(name) {
                    let dir = std::env::temp_dir()
                        .join(format!("ogp-load-tiny-{name}-{}", std::process::id()));
                    std::fs::create_dir_all(&dir).unwrap();
                    let _cleanup = RemoveDir(dir.clone());
                    let list = dir.join("qstat.txt");
                    let text: String = index
                        .keys()
                        .map(|a| format!("{kind} {}:{}\n", a.ip(), i32::from(a.port()) + offset))
                        .collect();
                    std::fs::write(&list, text).unwrap();
                    let ran = tokio::task::spawn_blocking(move || {
                        ogp_testkit::interop::run(
                            Command::new(qstat_bin)
                                .arg("-f")
                                .arg(&list)
                                .args(["-maxsim", "20", "-sendinterval", "0"])
                                .args(["-retry", "1", "-interval", "0.3", "-raw", ",", "-nh"]),
                            Duration::from_secs(20),
                        )
                    })
                    .await
                    .unwrap();
                    let out = String::from_utf8_lossy(&ran.stdout).into_owned();
                    let got: Seen = out.lines().filter_map(|l| qstat(l)).collect();
                    assert_eq!(
                        got.len() as u64,
                        TINY,
                        "{name}: qstat lines reported correctly; {}",
                        ran.describe()
                    );
                }
            }
            for t in tasks {
                t.abort();
            }
            took
        })
    }

    #[test]
    fn tiny_teeworlds() {
        tiny_family_run("teeworlds");
    }

    #[test]
    fn tiny_teeworlds7() {
        tiny_family_run("teeworlds7");
    }

    #[test]
    fn tiny_quakeworld() {
        tiny_family_run("quakeworld");
    }

    #[test]
    fn tiny_quake2() {
        tiny_family_run("quake2");
    }

    #[test]
    fn tiny_hexenworld() {
        tiny_family_run("hexenworld");
    }

    #[test]
    fn tiny_cube2() {
        tiny_family_run("cube2");
    }

    #[test]
    fn tiny_mumble() {
        tiny_family_run("mumble");
    }

    #[test]
    fn tiny_doom() {
        tiny_family_run("doom");
    }

    #[test]
    fn tiny_doomsday() {
        tiny_family_run("doomsday");
    }

    #[test]
    fn tiny_samp() {
        tiny_family_run("samp");
    }

    #[test]
    fn tiny_minetest() {
        tiny_family_run("minetest");
    }

    #[test]
    fn tiny_doom3() {
        tiny_family_run("doom3");
    }

    #[test]
    fn tiny_netquake() {
        tiny_family_run("netquake");
    }

    /// A replay family's line counts only when it reports its own target's capture:
    /// `ok`, the family's protocol, host, map, max players and players as wanted, no
    /// warning that a part is missing; qstat's when its map, max players and players
    /// are, at its port less the family's offset. The lines are what `ogp scan --json`
    /// and `quakestat -cubes -raw , -nh` printed for the Cube 2 farm.
    #[test]
    fn replay_lines_count_only_when_they_report_the_capture() {
        let a: SocketAddr = "127.87.0.1:10000".parse().unwrap();
        let want = |x: SocketAddr| {
            (x == a).then_some(crate::replay::Want {
                host: Some("Sauer capture"),
                map: None,
                slot_max: Some(12),
                players: Some(0),
            })
        };
        let ogp = r#"{"protocol":"cube2","ok":true,"addr":"127.87.0.1:10000","warnings":[],"status":{"host_name":"Sauer capture","player_count":0,"slot_max":12,"players":[]}}"#;
        assert_eq!(replay_ogp_correct(ogp, "cube2", want), Some(a));
        for bad in [
            ogp.replace("\"ok\":true", "\"ok\":false"),
            ogp.replace("\"protocol\":\"cube2\"", "\"protocol\":\"quake2\""),
            ogp.replace(":10000", ":10001"),
            ogp.replace("Sauer capture", "Sauer"),
            ogp.replace("\"slot_max\":12", "\"slot_max\":13"),
            ogp.replace("\"player_count\":0", "\"player_count\":1"),
            ogp.replace(
                "[],\"status",
                r#"["extinfo: no reply to the players request: left out"],"status"#,
            ),
            ogp.replace(",\"status\":{", ",\"x\":{"),
            "not json".into(),
        ] {
            assert!(replay_ogp_correct(&bad, "cube2", want).is_none(), "{bad}");
        }
        // Without player_count, the players listed are counted.
        let listed = ogp
            .replace("\"player_count\":0,", "")
            .replace("[]}", r#"[{"name":"x"}]}"#);
        assert!(replay_ogp_correct(&listed, "cube2", want).is_none());
        let qstat = "CUBE2,127.87.0.1:9999,Sauer capture,,12,0,0,0";
        assert_eq!(replay_qstat_correct(qstat, "CUBE2", -1, want), Some(a));
        for bad in [
            "CUBE2,127.87.0.1:10000,Sauer capture,,12,0,0,0",
            "CUBE2,127.87.0.1:9999,Sauer capture,,11,0,0,0",
            "CUBE2,127.87.0.1:9999,Sauer capture,,12,1,0,0",
            "QWS,127.87.0.1:9999,Sauer capture,,12,0,0,0",
            "CUBE2,127.87.0.1:9999,DOWN",
            "CUBE2,127.87.0.1:0,Sauer capture,,12,0,0,0",
        ] {
            assert!(
                replay_qstat_correct(bad, "CUBE2", -1, want).is_none(),
                "{bad}"
            );
        }
        // NetQuake's line: its own address and protocol after the name, two more fields
        // at the end (as `quakestat -qs -raw , -nh` printed them for the NetQuake farm).
        let qs = "QS,127.87.0.1:10000,Sauer capture,127.0.0.1:26000,3,,12,0,0,0,0,0";
        assert_eq!(replay_qstat_correct(qs, "QS", 0, want), Some(a));
        let short = "QS,127.87.0.1:10000,Sauer capture,,12,0,0,0";
        assert!(replay_qstat_correct(short, "QS", 0, want).is_none());
    }

    /// `--family` takes the table's names and `all` (every one but GameSpy v1, which
    /// has `--gs1-targets`), without repeats, and refuses others.
    #[test]
    fn families_are_chosen_by_name() {
        let all = chosen_families(&["all".into()]).unwrap();
        assert_eq!(all.len(), crate::replay::FAMILIES.len() - 1);
        assert!(all.iter().all(|f| f.exact && f.protocol != "gamespy1"));
        let two = chosen_families(&["mumble".into(), " mumble".into(), "gamespy1".into()]).unwrap();
        assert_eq!(
            two.iter().map(|f| f.protocol).collect::<Vec<_>>(),
            ["mumble", "gamespy1"]
        );
        assert!(chosen_families(&["quake3".into()]).is_err());
        for f in &crate::replay::FAMILIES {
            // Every farm on a network of its own, none the other farms'.
            assert!(f.net >= 80);
            assert_eq!(
                crate::replay::FAMILIES
                    .iter()
                    .filter(|g| g.net == f.net)
                    .count(),
                1
            );
            assert!(f.protocol.parse::<Protocol>().is_ok(), "{}", f.protocol);
        }
    }

    /// Every capture the GameSpy v1 farm replays has several datagrams and the values
    /// the checks compare; a line counts only when it reports its own target's capture.
    #[test]
    fn gs1_lines_count_only_when_they_report_the_capture() {
        let want: Vec<Gs1Served> = GS1_CAPTURES
            .iter()
            .map(|c| {
                assert!(c.len() >= 2);
                gs1_served(c).unwrap()
            })
            .collect();
        assert_eq!(
            want[0],
            Gs1Served {
                map: "berlin".into(),
                max: 36,
                players: 17
            }
        );
        let a: SocketAddr = "127.80.0.1:10000".parse().unwrap();
        let b: SocketAddr = "127.80.0.1:10001".parse().unwrap();
        let _ = GS1_TARGETS.set([(a, 0), (b, 1)].into_iter().collect());
        let qstat = "GPS,127.80.0.1:10000,SiMPLE | BF1942, [USA],berlin,36,17,30,0";
        assert_eq!(gs1_qstat_correct(qstat), Some(a));
        assert!(gs1_qstat_correct(&qstat.replace(",17,", ",16,")).is_none());
        assert!(gs1_qstat_correct(&qstat.replace(":10000", ":10001")).is_none());
        assert!(gs1_qstat_correct(&qstat.replace(":10000", ":10002")).is_none());
        assert!(gs1_qstat_correct("GPS,127.80.0.1:10000,DOWN").is_none());
        let ogp = r#"{"protocol":"gamespy1","addr":"127.80.0.1:10000","ok":true,"status":{"map":{"name":"berlin"},"slot_max":36,"player_count":17},"warnings":[]}"#;
        assert_eq!(gs1_ogp_correct(ogp), Some(a));
        assert!(
            gs1_ogp_correct(&ogp.replace("\"player_count\":17", "\"player_count\":18")).is_none()
        );
        assert!(gs1_ogp_correct(&ogp.replace("berlin", "kursk")).is_none());
        assert!(
            gs1_ogp_correct(&ogp.replace("[]", r#"["incomplete reply: part 2 of 3 lost"]"#))
                .is_none()
        );
        assert!(gs1_ogp_correct(&ogp.replace("gamespy1", "quake3")).is_none());
    }
}

/// `ogp scan --rate 1000000` against `scan-bare` on the first `--bare-targets` A2S
/// ports of the farm, alternately, `--bare-runs` times at each `--max-in-flight`.
fn bare_comparison(
    args: &Args,
    ogp: &Path,
    children: &[Responders],
    dir: &Path,
    farm: &[u32],
    limit: Duration,
) -> Result<()> {
    let mix = parse_mix(&args.mix)?;
    let list = dir.join("bare-a2s.txt");
    let mut n = 0u64;
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&list)?);
        'fill: for c in children {
            for j in 0..c.count {
                if n >= u64::from(args.bare_targets) {
                    break 'fill;
                }
                // Every port but the draft's answers A2S.
                if c.failed.contains(&j)
                    || protocol_of(&mix, c.offset + u64::from(j)) == Some(Protocol::OgpDraft)
                {
                    continue;
                }
                writeln!(f, "a2s {}:{}", c.ip, u32::from(FIRST_PORT) + j)?;
                n += 1;
            }
        }
        f.flush()?;
    }
    let me = std::env::current_exe().context("locating this binary")?;
    println!("baseline: {n} A2S targets, ogp scan --rate 1000000 against ogp-load scan-bare, alternately");
    for &m in &args.max_in_flight {
        let (mut ours, mut bare): (Option<Run>, Option<Run>) = (None, None);
        let (mut least_cpu, mut bare_cpu): (Option<Duration>, Option<Duration>) = (None, None);
        for _ in 0..args.bare_runs.max(1) {
            let mut c = Command::new(ogp);
            c.arg("scan")
                .arg("--json")
                .arg(&list)
                .args(["--rate", "1000000", "--max-in-flight", &m.to_string()])
                .env_remove("OGP_LOG");
            let r = run_child(c, n, limit, ogp_answer, farm)?;
            print_run(&format!("ogp scan --max-in-flight {m}"), &r);
            least_cpu = least(least_cpu, r.cpu);
            if ours.as_ref().is_none_or(|b| r.seconds < b.seconds) {
                ours = Some(r);
            }
            let mut c = Command::new(&me);
            c.arg("scan-bare")
                .arg(&list)
                .args(["--max-in-flight", &m.to_string()]);
            let r = run_child(c, n, limit, |l| l.starts_with("ok "), farm)?;
            print_run(&format!("bare scanner, in flight {m}"), &r);
            bare_cpu = least(bare_cpu, r.cpu);
            if bare.as_ref().is_none_or(|b| r.seconds < b.seconds) {
                bare = Some(r);
            }
        }
        if let (Some(o), Some(b)) = (ours, bare) {
            println!(
                "  ratio at {m} in flight, best of each: ogp scan {:.2} s / bare {:.2} s = {:.2}x the time (target <= 1.15x); answered {} / {}",
                o.seconds,
                b.seconds,
                o.seconds / b.seconds.max(1e-6),
                o.answered,
                b.answered
            );
        }
        // On a machine shared with other work the wall times move by more than the
        // gap; the CPU each scanner spent is steadier (least of its runs).
        if let (Some(o), Some(b)) = (least_cpu, bare_cpu) {
            println!(
                "  CPU at {m} in flight, least of each: ogp scan {:.3} s / bare {:.3} s = {:.2}x ({:.1} / {:.1} µs per target)",
                o.as_secs_f64(),
                b.as_secs_f64(),
                o.as_secs_f64() / b.as_secs_f64().max(1e-6),
                o.as_secs_f64() * 1e6 / n.max(1) as f64,
                b.as_secs_f64() * 1e6 / n.max(1) as f64,
            );
        }
    }
    Ok(())
}

/// The lesser of two CPU times, either of which may be unknown.
fn least(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Options of the hidden `ogp-load scan-bare`: the baseline scanner.
#[derive(clap::Args, Debug)]
pub struct BareArgs {
    /// The list: lines ending with `ADDR` (the A2S list of `ogp-load scan`).
    pub list: PathBuf,
    /// Targets in flight at once.
    #[arg(long, default_value_t = 2048)]
    pub max_in_flight: usize,
}

/// The bare scanner's per-target state: the step (0 INFO, 1 PLAYER, 2 RULES), the
/// challenge echoed, when to send again, and sends left.
struct BareTarget {
    step: u8,
    challenge: [u8; 4],
    due: Instant,
    tries: u8,
}

/// A2S requests as `ogp scan` sends them: INFO with its payload, PLAYER and RULES with
/// the challenge (`FFFFFFFF` before one is known); INFO carries it once known.
fn bare_request(t: &BareTarget, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&[0xff; 4]);
    match t.step {
        0 => {
            out.push(0x54);
            out.extend_from_slice(b"Source Engine Query\0");
            if t.challenge != [0xff; 4] {
                out.extend_from_slice(&t.challenge);
            }
        }
        1 => {
            out.push(0x55);
            out.extend_from_slice(&t.challenge);
        }
        _ => {
            out.push(0x56);
            out.extend_from_slice(&t.challenge);
        }
    }
}

/// `ogp-load scan-bare`: the floor `ogp scan` is measured against. The same A2S
/// exchange per target as `ogp scan` (INFO, its challenge, INFO again, PLAYER, RULES:
/// four round trips) from one socket with batched I/O (`recvmmsg`/`sendmmsg` through
/// `ogp_net::batch`), nothing parsed beyond a reply's type byte and the challenge, no
/// pacing, 500 ms and three resends per step. Prints `ok ADDR` per target that got
/// its RULES reply, then a summary on stderr.
pub fn bare(args: &BareArgs) -> Result<()> {
    use ogp_net::batch;
    use std::collections::HashMap;
    use tokio::io::Interest;
    let text = std::fs::read_to_string(&args.list)?;
    let targets: Vec<SocketAddr> = text
        .lines()
        .filter_map(|l| l.split_whitespace().last()?.parse().ok())
        .collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None)?;
        let _ = s.set_recv_buffer_size(4 << 20);
        s.set_nonblocking(true)?;
        s.bind(&SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)).into())?;
        let sock = tokio::net::UdpSocket::from_std(s.into())?;
        let mut live: HashMap<SocketAddr, BareTarget> = HashMap::new();
        let mut next = 0usize;
        let (mut ok, mut lost) = (0u64, 0u64);
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        let mut outbox: Vec<(Vec<u8>, SocketAddr)> = Vec::new();
        let mut spare: Vec<Vec<u8>> = Vec::new();
        let mut rx = batch::RecvBatch::new(2048);
        let attempt = Duration::from_millis(500);
        let started = Instant::now();
        let limit = started + Duration::from_secs(600);
        while Instant::now() < limit {
            let now = Instant::now();
            while live.len() < args.max_in_flight.max(1) {
                let Some(addr) = targets.get(next).copied() else {
                    break;
                };
                next += 1;
                let t = BareTarget {
                    step: 0,
                    challenge: [0xff; 4],
                    due: now + attempt,
                    tries: 3,
                };
                let mut d = spare.pop().unwrap_or_default();
                bare_request(&t, &mut d);
                outbox.push((d, addr));
                live.insert(addr, t);
            }
            // Send everything queued, a batch per call.
            let mut at = 0;
            while at < outbox.len() {
                let msgs: Vec<(&[u8], SocketAddr)> = outbox
                    .iter()
                    .skip(at)
                    .take(batch::BATCH)
                    .map(|(d, a)| (d.as_slice(), *a))
                    .collect();
                match sock.try_io(Interest::WRITABLE, || batch::send(&sock, &msgs)) {
                    Ok(n) if n > 0 => at += n,
                    Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => at += 1,
                    _ => sock.writable().await?,
                }
            }
            spare.extend(outbox.drain(..).map(|(d, _)| d));
            if live.is_empty() && next >= targets.len() {
                break;
            }
            // Replies, or the next resend.
            let wake = live.values().map(|t| t.due).min().unwrap_or(now + attempt);
            tokio::select! {
                r = sock.readable() => r?,
                () = tokio::time::sleep_until(wake.into()) => {}
            }
            let now = Instant::now();
            // Bounded: at most 64 batches before the timers are looked at.
            for _ in 0..64 {
                let n = match sock.try_io(Interest::READABLE, || batch::recv_batch(&sock, &mut rx))
                {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(_) => continue,
                };
                for i in 0..n {
                    let Some((d, src)) = rx.get(i) else { continue };
                    let Some(t) = live.get_mut(&src) else {
                        continue;
                    };
                    let kind = match d.get(..4) {
                        Some([0xff, 0xff, 0xff, 0xff]) => d.get(4).copied(),
                        // A split reply: its last part ends the step.
                        Some([0xfe, 0xff, 0xff, 0xff]) => match (d.get(8), d.get(9)) {
                            (Some(total), Some(number)) if *number + 1 == *total => Some(0),
                            _ => None,
                        },
                        _ => None,
                    };
                    match kind {
                        Some(0x41) => {
                            if let Some(c) = d.get(5..9) {
                                t.challenge.copy_from_slice(c);
                            }
                        }
                        Some(_) if t.step >= 2 => {
                            live.remove(&src);
                            ok += 1;
                            writeln!(out, "ok {src}")?;
                            continue;
                        }
                        Some(_) => t.step += 1,
                        None => continue,
                    }
                    t.due = now + attempt;
                    t.tries = 3;
                    let mut q = spare.pop().unwrap_or_default();
                    bare_request(t, &mut q);
                    outbox.push((q, src));
                }
                if n < batch::BATCH {
                    break;
                }
            }
            // Resends, and targets given up.
            let mut gone = Vec::new();
            for (addr, t) in &mut live {
                if t.due <= now {
                    if t.tries == 0 {
                        gone.push(*addr);
                        continue;
                    }
                    t.tries -= 1;
                    t.due = now + attempt;
                    let mut q = spare.pop().unwrap_or_default();
                    bare_request(t, &mut q);
                    outbox.push((q, *addr));
                }
            }
            for a in gone {
                live.remove(&a);
                lost += 1;
            }
        }
        out.flush()?;
        eprintln!(
            "bare: {} targets, {ok} answered, {lost} lost, in {:.2} s",
            targets.len(),
            started.elapsed().as_secs_f64()
        );
        Ok(())
    })
}

/// Writes `PREFIXHOST:PORT` for every server the children bound; how many.
pub(crate) fn write_list(children: &[Responders], path: &Path, prefix: &str) -> Result<u64> {
    let mut n = 0u64;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for c in children {
        for j in (0..c.count).filter(|j| !c.failed.contains(j)) {
            writeln!(f, "{prefix}{}:{}", c.ip, u32::from(FIRST_PORT) + j)?;
            n += 1;
        }
    }
    f.flush()?;
    Ok(n)
}

//! `ogp scan`: query a list of servers with the scan engine, and `ogp query`'s
//! auto-detection.
//!
//! The list is read on a thread of its own, line by line (lines over 4096 bytes are
//! reported and skipped), and streamed into the engine through its bounded channel, so a
//! list of any size runs in bounded memory. Results are printed as they complete: NDJSON
//! with `--json`, else a table; a summary and bad lines go to stderr, and a progress line
//! too when stderr is a terminal.

use std::io::{BufRead, IsTerminal as _};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use ogp_net::scan::{self, Protocol, QueryError, ScanConfig, ScanResult, Target};
use ogp_proto::client::Options;
use tokio::sync::mpsc;

use crate::render::sanitize;

/// Longest list line read; longer ones are reported and skipped.
const MAX_LINE: usize = 4096;

/// Options of `ogp scan`.
#[derive(clap::Args, Debug)]
pub struct ScanArgs {
    /// The list: one `PROTOCOL HOST:PORT` per line (ogp, a2s, gamespy3, gqp, ogp-draft,
    /// auto; qstat's `-f` lines such as `A2S host:port` or `-gs3 host:port` work too),
    /// or `game:ID HOST[:GAMEPORT]` (the game's protocol and query port, `ogp games`).
    /// `#` starts a comment. Without a file, or with -, standard input is read.
    #[arg(value_name = "FILE|-")]
    pub list: Option<String>,
    /// Print one result object per target as it completes (NDJSON; docs/json.md).
    #[arg(long)]
    pub json: bool,
    /// Protocol of lines that give only HOST:PORT.
    #[arg(long, default_value = "auto", value_parser = parse_protocol)]
    pub protocol: Wanted,
    /// Milliseconds to wait for an answer before sending again (grows 1.1× per retry);
    /// once a target has answered anything, its round trip sets the wait instead (never
    /// longer).
    #[arg(long, default_value_t = 500, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub timeout: u64,
    /// How many times to send again when no answer comes, while the target has sent
    /// nothing (a target that answered anything gets 8, within --deadline).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub retries: u32,
    /// Milliseconds one target may take in all (a closed port is refused before, at
    /// once on Linux).
    #[arg(long, default_value_t = 6000, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub deadline: u64,
    /// Datagrams sent per second, all targets together. The default, 5000, is polite to
    /// the networks on the way (about 2 Mbit/s of small queries) and still gets through a
    /// list of 10,000 servers in about 6 s (3 datagrams a server); qstat's default
    /// pacing sends 200 a second. On a LAN or loopback, raise it.
    #[arg(long, default_value_t = 5000, value_name = "PACKETS",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub rate: u32,
    /// Targets in progress at once.
    #[arg(long, default_value_t = 2048, value_name = "N", value_parser = at_least_one)]
    pub max_in_flight: usize,
    /// Host names resolved at once.
    #[arg(long, default_value_t = 32, value_name = "N", value_parser = at_least_one)]
    pub resolvers: usize,
    /// UDP sockets per address family.
    #[arg(long, default_value_t = 2, value_name = "N", value_parser = socket_count)]
    pub sockets: usize,
    /// Also try the well-known query ports for each given port.
    #[arg(long)]
    pub try_query_ports: bool,
    /// No progress line, even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
    /// A2S and GameSpy v3: how to read names that are not UTF-8: auto (A2S replaces the
    /// bytes, GameSpy v3 reads Latin-1; each with a warning), latin1, cp1251 (Cyrillic),
    /// cp1252.
    #[arg(long, default_value = "auto", value_name = "CHARSET")]
    pub charset: ogp_proto::Charset,
    /// HTTPS game servers (Hytale): accept any certificate (a self-signed one).
    #[arg(long)]
    pub insecure: bool,
    /// HTTPS game servers (Hytale): ask over plain HTTP instead.
    #[arg(long)]
    pub no_tls: bool,
}

/// A count of at least 1.
fn at_least_one(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("must be a whole number of at least 1".into()),
    }
}

/// `--sockets`: 1–64.
fn socket_count(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=64).contains(&n) => Ok(n),
        _ => Err("must be 1–64".into()),
    }
}

/// The protocol a target is queried with: one, or auto-detection (`None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wanted(pub Option<Protocol>);

/// The name of a wanted protocol, `auto` for auto-detection.
pub fn wanted_name(p: Option<Protocol>) -> &'static str {
    p.map_or("auto", Protocol::name)
}

/// `--protocol` values: our names, case-insensitive, or `auto`.
pub fn parse_protocol(s: &str) -> std::result::Result<Wanted, String> {
    let p = Protocol::parse_or_auto(s).map_err(|e| e.to_string())?;
    Ok(Wanted(p))
}

pub use ogp_proto::front::{check_host, parse_line};

/// What the list reader sends besides targets.
enum Note {
    /// A bad line: its number and why.
    Bad(u64, String),
    /// The list could not be read further.
    Failed(String),
}

/// Targets handed from the reader thread to the scan at once.
const BATCH: usize = 256;

/// The list input: a buffered reader whose buffer can be looked at.
type Input = std::io::BufReader<Box<dyn std::io::Read + Send>>;

/// Reads the list and feeds the scan in batches (one thread handoff per batch, or
/// whenever the input has nothing more buffered, so a slow pipe is not held back); bad
/// lines go to `notes`. Runs on its own thread.
fn read_list(
    input: Input,
    default: Option<Protocol>,
    try_query_ports: bool,
    targets: mpsc::Sender<Vec<Target>>,
    notes: mpsc::Sender<Note>,
) {
    let mut input = input;
    let mut buf = Vec::with_capacity(256);
    let mut batch = Vec::with_capacity(BATCH);
    // Bounded by the input: each round consumes at least one byte or ends.
    for number in 1u64.. {
        if !batch.is_empty() && (batch.len() >= BATCH || input.buffer().is_empty()) {
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
            if targets.blocking_send(full).is_err() {
                return;
            }
        }
        buf.clear();
        let n = match std::io::Read::take(&mut input, MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
        {
            Ok(n) => n,
            Err(e) => {
                let _ = targets.blocking_send(batch);
                let _ = notes.blocking_send(Note::Failed(e.to_string()));
                return;
            }
        };
        if n == 0 {
            let _ = targets.blocking_send(batch);
            return;
        }
        if buf.len() > MAX_LINE && buf.last() != Some(&b'\n') {
            // Skip the rest of the long line, a bounded chunk at a time.
            loop {
                buf.clear();
                match std::io::Read::take(&mut input, 65536).read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if buf.last() == Some(&b'\n') => break,
                    Ok(_) => {}
                }
            }
            if notes
                .blocking_send(Note::Bad(
                    number,
                    format!("line longer than {MAX_LINE} bytes"),
                ))
                .is_err()
            {
                return;
            }
            continue;
        }
        let line = String::from_utf8_lossy(&buf);
        let sent = match parse_line(&line, default) {
            Ok(None) => true,
            Ok(Some((protocol, host))) => {
                batch.push(
                    Target::new(host, protocol)
                        .with_id(number)
                        .with_query_ports(try_query_ports),
                );
                true
            }
            Err(why) => notes.blocking_send(Note::Bad(number, why)).is_ok(),
        };
        if !sent {
            return;
        }
    }
}

/// One NDJSON line for a result (with its newline), in the one result schema
/// (`docs/json.md`).
pub fn result_json(r: &ScanResult) -> String {
    let about = ogp_proto::result::About {
        target: &r.target,
        line: Some(r.id),
        requested: r.requested,
        addr: r.addr,
    };
    ogp_proto::result::line(&about, r.outcome.as_ref())
}

/// `s` made safe for a terminal ([`sanitize`]) and cut to `n` characters.
fn cut(s: &str, n: usize) -> String {
    let s = sanitize(s);
    if s.chars().count() <= n {
        s
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// One table row for a result.
pub fn result_row(r: &ScanResult) -> String {
    match &r.outcome {
        Ok(a) => {
            let s = &a.status;
            // The count the server gave, else its player list's length (Quake III sends
            // the players, not a count).
            let players = match (s.player_count(), s.slot_max) {
                (Some(p), Some(m)) => format!("{p}/{m}"),
                (Some(p), None) => p.to_string(),
                _ => "-".into(),
            };
            let map = s.map.as_ref().map_or("-".into(), |m| cut(&m.name, 16));
            let name = s.host_name.as_deref().map_or(String::new(), |n| cut(n, 40));
            let target = match (r.addr, a.addr) {
                (Some(given), Some(found)) if given.port() != found.port() => {
                    format!("{} (port {})", r.target, found.port())
                }
                _ => r.target.clone(),
            };
            format!(
                "{:<24} {:<9} {:>8.1} {:>7} {:<16} {}\n",
                cut(&target, 24),
                a.protocol.name(),
                a.ping_ms,
                players,
                map,
                name
            )
        }
        Err(e) => format!(
            "{:<24} {:<9} {:>8} {:>7} {:<16} {}\n",
            cut(&r.target, 24),
            wanted_name(r.requested),
            "-",
            "-",
            "-",
            sanitize(&e.to_string())
        ),
    }
}

const TABLE_HEAD: &str =
    "TARGET                   PROTOCOL  PING(ms) PLAYERS MAP              NAME / ERROR\n";

/// Counts of the output side.
#[derive(Default)]
struct Tally {
    done: u64,
    answered: u64,
    timed_out: u64,
    refused: u64,
    errors: u64,
    bad_lines: u64,
}

fn config(args: &ScanArgs) -> ScanConfig {
    let mut cfg = ScanConfig::default();
    cfg.rate = args.rate.max(1);
    cfg.max_in_flight = args.max_in_flight.max(1);
    cfg.resolve_concurrency = args.resolvers.max(1);
    // The scan's own timing (its backoff, and more retries for targets that answered
    // anything), with the options given.
    cfg.options = Options::with_timing(ogp_proto::front::scan_timing(
        cfg.options.timing,
        Duration::from_millis(args.timeout.max(1)),
        args.retries,
        Duration::from_millis(args.deadline.max(1)),
    ));
    crate::query::set_charset(&mut cfg.options, args.charset);
    crate::query::Tls {
        insecure: args.insecure,
        no_tls: args.no_tls,
    }
    .set(&mut cfg.options, None);
    // Palworld's password and TShock's token from the environment (an unreadable
    // password file: those servers refuse, each with its error).
    if let Err(e) = crate::query::set_http_credentials(&mut cfg.options) {
        eprintln!("ogp: {e}");
    }
    cfg.sockets = args.sockets.clamp(1, 64);
    cfg
}

/// Lines in a regular file (for the progress line), counted in bounded memory.
fn count_lines(path: &str) -> Option<u64> {
    let f = std::fs::File::open(path).ok()?;
    let mut r = std::io::BufReader::with_capacity(1 << 16, f);
    let mut n = 0u64;
    loop {
        let buf = r.fill_buf().ok()?;
        if buf.is_empty() {
            return Some(n);
        }
        n += buf.iter().filter(|b| **b == b'\n').count() as u64;
        let len = buf.len();
        r.consume(len);
    }
}

/// Runs `ogp scan`. Exit 0 when the scan ran, whatever the servers did.
pub fn run(args: &ScanArgs) -> Result<ExitCode> {
    let (input, name, total): (Input, String, Option<u64>) = match args.list.as_deref() {
        None | Some("-") => (
            std::io::BufReader::new(Box::new(std::io::stdin())),
            "<stdin>".into(),
            None,
        ),
        Some(path) => {
            let f = std::fs::File::open(path).with_context(|| format!("cannot open {path}"))?;
            let progress = !args.no_progress && std::io::stderr().is_terminal();
            (
                std::io::BufReader::with_capacity(1 << 16, Box::new(f)),
                path.to_string(),
                if progress { count_lines(path) } else { None },
            )
        }
    };
    // One thread for the engine and the output: results pass between them without a
    // thread handoff each (the list reader has a thread of its own).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(scan_list(args, input, &name, total))
}

async fn scan_list(
    args: &ScanArgs,
    input: Input,
    name: &str,
    total: Option<u64>,
) -> Result<ExitCode> {
    let started = Instant::now();
    // TCP targets (Minecraft) hold a socket each: the soft open-file limit is raised
    // toward the hard one, and the user told when even that caps --max-in-flight.
    let limit = scan::raise_open_file_limit(args.max_in_flight);
    if limit.capped {
        eprintln!(
            "ogp: warning: the open-file limit ({} soft, {} hard) caps TCP (minecraft) connections at {} of --max-in-flight {}",
            limit.soft, limit.hard, limit.connections, args.max_in_flight
        );
    }
    let scan = scan::start(config(args)).context("cannot open a UDP socket")?;
    let (targets, mut results, handle) = (scan.targets, scan.results, scan.handle);
    let (notes_tx, mut notes) = mpsc::channel(64);
    let (default, try_ports) = (args.protocol.0, args.try_query_ports);
    let (batches_tx, mut batches) = mpsc::channel::<Vec<Target>>(4);
    let reader =
        std::thread::spawn(move || read_list(input, default, try_ports, batches_tx, notes_tx));
    let forward = tokio::spawn(async move {
        while let Some(batch) = batches.recv().await {
            for t in batch {
                if targets.send(t).await.is_err() {
                    return;
                }
            }
        }
    });
    let progress = !args.no_progress && std::io::stderr().is_terminal();
    let mut tally = Tally::default();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if !args.json {
        write_out(&mut out, TABLE_HEAD.as_bytes())?;
    }
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    let mut shown = false;
    let mut notes_open = true;
    loop {
        tokio::select! {
            r = results.recv() => {
                let Some(r) = r else { break };
                tally.done += 1;
                match &r.outcome {
                    Ok(_) => tally.answered += 1,
                    Err(e) if e.is_timeout() => tally.timed_out += 1,
                    Err(QueryError::Refused { .. }) => tally.refused += 1,
                    Err(_) => tally.errors += 1,
                }
                let line = if args.json {
                    result_json(&r)
                } else {
                    result_row(&r)
                };
                if shown {
                    eprint!("\r\x1b[K");
                    shown = false;
                }
                write_out(&mut out, line.as_bytes())?;
                // NDJSON is for pipes: each line as it completes, unless many are coming.
                if results.is_empty() {
                    flush_out(&mut out)?;
                }
            }
            n = notes.recv(), if notes_open => match n {
                Some(Note::Bad(number, why)) => {
                    tally.bad_lines += 1;
                    flush_out(&mut out)?;
                    if shown {
                        eprint!("\r\x1b[K");
                        shown = false;
                    }
                    eprintln!("ogp: {name}:{number}: {} (skipped)", sanitize(&why));
                }
                Some(Note::Failed(why)) => eprintln!("ogp: {name}: read error: {why}"),
                None => notes_open = false,
            },
            _ = tick.tick(), if progress => {
                let s = handle.stats();
                let secs = started.elapsed().as_secs_f64().max(1e-3);
                let of = total.map(|t| format!("/{t} lines")).unwrap_or_default();
                eprint!(
                    "\r\x1b[K{}{of} done: {} answered, {} timed out, {} refused, {} errors, {} in flight, {:.0}/s",
                    tally.done, tally.answered, tally.timed_out, tally.refused, tally.errors, s.in_flight,
                    tally.done as f64 / secs
                );
                shown = true;
            }
        }
    }
    flush_out(&mut out)?;
    // Remaining notes (the reader has finished: results end only after its input did).
    while let Ok(n) = notes.try_recv() {
        if let Note::Bad(number, why) = n {
            tally.bad_lines += 1;
            eprintln!("ogp: {name}:{number}: {} (skipped)", sanitize(&why));
        }
    }
    let _ = reader.join();
    let _ = forward.await;
    let stats = handle.join().await;
    if shown {
        eprint!("\r\x1b[K");
    }
    let secs = started.elapsed().as_secs_f64();
    // Replies that reach no query are normal in auto-detection (the protocols that
    // answer after the first) and after retries: worth a note, not an alarm.
    let ignored = if stats.unknown_source > 0 {
        format!(
            ", {} ignored (late: a target already done, such as the slower protocols of \
             auto-detection, or an address not queried)",
            stats.unknown_source
        )
    } else {
        String::new()
    };
    // Minecraft targets, and auto-detection's one try of Minecraft per target.
    let tcp = if stats.connections > 0 {
        format!(", {} TCP connections", stats.connections)
    } else {
        String::new()
    };
    eprintln!(
        "scanned {} targets in {:.2} s ({:.0} targets/s): {} answered, {} timed out, {} refused, {} errors; {} bad lines; {} datagrams sent, {} received{tcp}{ignored}",
        tally.done,
        secs,
        tally.done as f64 / secs.max(1e-3),
        tally.answered,
        tally.timed_out,
        tally.refused,
        tally.errors,
        tally.bad_lines,
        stats.sent,
        stats.received,
    );

    Ok(ExitCode::SUCCESS)
}

/// Writes to standard output; a closed pipe ends the program quietly.
fn write_out(out: &mut impl std::io::Write, bytes: &[u8]) -> Result<()> {
    match out.write_all(bytes) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        r => Ok(r?),
    }
}

fn flush_out(out: &mut impl std::io::Write) -> Result<()> {
    match out.flush() {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        r => Ok(r?),
    }
}

/// `ogp query` with protocol auto (`protocol` `None`: every protocol at once) or with
/// `--game --try-query-ports` (the game's protocol), on the given port (and with
/// `try_query_ports` the well-known query ports); prints like the other protocols.
pub async fn query_auto(
    args: &crate::query::QueryArgs,
    protocol: Option<Protocol>,
    try_query_ports: bool,
    json: bool,
    level: crate::Level,
) -> Result<ExitCode> {
    let target = {
        let mut t = Target::new(args.target.clone(), protocol);
        t.try_query_ports = try_query_ports;
        t
    };
    // Every protocol's steps (three for A2S, the most) in the time each attempt and
    // retry takes; --split and --charset as for one protocol.
    let mut config = ScanConfig::default();
    config.options =
        crate::query::options(args, ogp_proto::Protocol::A2s).map_err(anyhow::Error::msg)?;
    // Auto-detection tries Minecraft's handshake too.
    crate::query::set_handshake_host(&mut config.options, &args.target);
    let r = scan::query(target, config).await;
    let about = ogp_proto::result::About {
        target: &args.target,
        line: None,
        requested: protocol,
        addr: r.addr,
    };
    let a = match &r.outcome {
        Ok(a) => a,
        Err(e) => return crate::print_outcome(&about, Err(e), json, level, ""),
    };
    let given_port = r.addr.map(|g| g.port());
    let found_port = a.addr.map(|a| a.port());
    let mut notes = match protocol {
        None => format!(
            "  auto-detected: {} answered first among {}\n",
            a.protocol.label(),
            Protocol::AUTO
                .into_iter()
                .chain(Protocol::AUTO_STREAM)
                .map(Protocol::label)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Some(_) => String::new(),
    };
    let moved = given_port.is_some() && found_port.is_some() && given_port != found_port;
    if try_query_ports {
        if moved {
            notes.push_str(&format!(
                "  query port {} (given port {})\n",
                found_port.unwrap_or_default(),
                given_port.unwrap_or_default()
            ));
        } else {
            notes.push_str("  the given port is the query port\n");
        }
    }
    if level >= 2 {
        eprintln!("(hex dumps are shown for one protocol at a time: -p PROTOCOL)");
    }
    if !json && try_query_ports && moved && level < 1 {
        crate::emit(&format!(
            "query port {} answered (given port {})\n",
            found_port.unwrap_or_default(),
            given_port.unwrap_or_default()
        ))?;
    }
    crate::print_outcome(&about, Ok(a), json, level, &notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minecraft_lines_are_scanned_with_the_default_port_when_they_have_none() {
        assert_eq!(
            parse_protocol("mc").unwrap(),
            Wanted(Some(Protocol::Minecraft))
        );
        assert_eq!(
            parse_line("minecraft 127.0.0.1:25566", None).unwrap(),
            Some((Some(Protocol::Minecraft), "127.0.0.1:25566".to_string()))
        );
        assert_eq!(
            parse_line("127.0.0.1:25567", Some(Protocol::Minecraft)).unwrap(),
            Some((Some(Protocol::Minecraft), "127.0.0.1:25567".to_string()))
        );
        assert_eq!(
            parse_line("mc mc.example.org", None).unwrap(),
            Some((
                Some(Protocol::Minecraft),
                "mc.example.org:25565".to_string()
            ))
        );
        // Other protocols still need a port.
        assert!(parse_line("quake3 example.org", None).is_err());
        assert!(parse_line("quake3 127.0.0.1:27960", None).is_ok());
    }

    fn details() -> ogp_proto::client::Details {
        ogp_proto::client::Details::Ogp(Box::new(ogp_proto::ogp::client::Details {
            challenge: None,
            request_id: 1,
        }))
    }

    #[test]
    fn json_lines_parse() {
        let ok = ScanResult {
            id: 7,
            target: "a\"b:1".into(),
            requested: None,
            addr: Some("127.0.0.1:1".parse().unwrap()),
            outcome: Ok({
                let mut status = ogp_proto::Status::default();
                status.host_name = Some("x \"y\"\n".into());
                let mut a = ogp_proto::client::Answer::new(Protocol::A2s, status, details());
                a.addr = Some("127.0.0.1:2".parse().unwrap());
                a.ping_ms = 1.23456;
                a.datagrams = 1;
                a
            }),
            elapsed: Duration::ZERO,
        };
        let v: serde_json::Value = serde_json::from_str(&result_json(&ok)).unwrap();
        assert_eq!(v["target"], "a\"b:1");
        assert_eq!(v["protocol"], "a2s");
        assert_eq!(v["ok"], true);
        assert_eq!(v["line"], 7);
        assert_eq!(v["addr"], "127.0.0.1:2");
        assert_eq!(v["ping_ms"], 1.235);
        assert_eq!(v["status"]["host_name"], "x \"y\"\n");
        let failed = ScanResult {
            outcome: Err(ogp_proto::client::QueryError::NoAnswer {
                protocol: Protocol::Ogp,
                step: None,
                attempts: 3,
            }),
            ..ok
        };
        let line = result_json(&failed);
        assert!(line.ends_with("}\n") && !line.trim_end().contains('\n'));
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["ok"], false);
        assert_eq!(v["protocol"], "auto");
        assert_eq!(v["error"], "timeout");
        assert_eq!(v["addr"], "127.0.0.1:1");
    }

    #[test]
    fn list_lines() {
        let auto = None;
        // TeamSpeak by game: its default voice port only, never another silently.
        assert_eq!(
            parse_line("game:teamspeak3 127.0.0.1:9987", auto),
            Ok(Some((Some(Protocol::Teamspeak3), "127.0.0.1:10011".into())))
        );
        assert!(parse_line("game:teamspeak3 127.0.0.1:9988", auto).is_err());
        assert_eq!(
            parse_line("ts2 127.0.0.1", auto),
            Ok(Some((Some(Protocol::Teamspeak2), "127.0.0.1:51234".into())))
        );
        assert_eq!(parse_line("", auto), Ok(None));
        assert_eq!(parse_line("   # comment", auto), Ok(None));
        assert_eq!(
            parse_line("a2s 127.0.0.1:27015 # a comment", auto),
            Ok(Some((Some(Protocol::A2s), "127.0.0.1:27015".into())))
        );
        assert_eq!(
            parse_line("A2S 127.0.0.1:27015", auto),
            Ok(Some((Some(Protocol::A2s), "127.0.0.1:27015".into())))
        );
        assert_eq!(
            parse_line("-gs3 game.example.org:29900", auto),
            Ok(Some((
                Some(Protocol::Gamespy3),
                "game.example.org:29900".into()
            )))
        );
        assert_eq!(
            parse_line("GS4 [::1]:29900", auto),
            Ok(Some((Some(Protocol::Gamespy3), "[::1]:29900".into())))
        );
        assert_eq!(
            parse_line("ogp-draft 10.0.0.1:22223", auto),
            Ok(Some((Some(Protocol::OgpDraft), "10.0.0.1:22223".into())))
        );
        assert_eq!(
            parse_line("127.0.0.1:1", Some(Protocol::Gqp)),
            Ok(Some((Some(Protocol::Gqp), "127.0.0.1:1".into())))
        );
        for bad in [
            "a2s 127.0.0.1",
            "a2s 127.0.0.1:0",
            "a2s 127.0.0.1:70000",
            "a2s ::1:27015",
            "a2s host:port",
            "nosuch 127.0.0.1:1",
            "SNS 127.0.0.1:27910",
            "a2s 127.0.0.1:1 extra",
        ] {
            assert!(parse_line(bad, auto).is_err(), "{bad}");
        }
        assert!(parse_line("SNS 127.0.0.1:27910", auto)
            .unwrap_err()
            .contains("not supported"));
        // qstat's Quake III type is ours
        assert_eq!(
            parse_line("Q3S 127.0.0.1:27960", auto),
            Ok(Some((Some(Protocol::Quake3), "127.0.0.1:27960".into())))
        );
        // and its GameSpy v1 types: the protocol's and the games'
        for t in ["GPS", "gamespy1", "UNS", "-sms", "netp"] {
            assert_eq!(
                parse_line(&format!("{t} 127.0.0.1:7778"), auto),
                Ok(Some((Some(Protocol::Gamespy1), "127.0.0.1:7778".into()))),
                "{t}"
            );
        }
        let e = parse_line("SNS 127.0.0.1:22450", auto).unwrap_err();
        assert!(e.contains("not supported") && e.contains("gamespy1"), "{e}");
        // and its GameSpy v2 and All-Seeing Eye types
        assert_eq!(
            parse_line("-gs2 127.0.0.1:2302", auto),
            Ok(Some((Some(Protocol::Gamespy2), "127.0.0.1:2302".into())))
        );
        assert_eq!(
            parse_line("EYE 127.0.0.1:22126", auto),
            Ok(Some((Some(Protocol::Ase), "127.0.0.1:22126".into())))
        );
        // qstat's Cube 2 type gives the game port; ours takes the query port
        assert_eq!(
            parse_line("-cubes 127.0.0.1:28785", auto),
            Ok(Some((Some(Protocol::Cube2), "127.0.0.1:28786".into())))
        );
        assert_eq!(
            parse_line("cube2 127.0.0.1:28786", auto),
            Ok(Some((Some(Protocol::Cube2), "127.0.0.1:28786".into())))
        );
        assert!(parse_line("CUBES 127.0.0.1:65535", auto).is_err());
    }
}

//! The `ogp` command-line tool: decode, query and serve game-server query protocols.
//! Exit codes: 0 success, 1 no or bad answer / malformed input (one-line reason on
//! stderr), 2 bad usage.

// The doc comments of the argument structs are the --help text, written for a terminal
// (`[::]:22222`), not rustdoc links.
#![allow(rustdoc::broken_intra_doc_links)]

mod decode;
mod games;
mod list;
mod master;
mod metrics;
mod query;
mod render;

mod scan;
mod serve;
mod state;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use ogp_proto::client::{Answer, Details};
use ogp_proto::guard::RateConfig;
use ogp_proto::responder::ResponderConfig;

/// Query, serve and decode game-server status protocols (Open Game Protocol and friends).
#[derive(Parser)]
#[command(name = "ogp", version, about, propagate_version = true)]
struct Cli {
    /// More output on standard error: -v shows each query's exchange and debug logs, -vv
    /// also the datagrams in hex and every log line.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Less output: errors only (no warnings, no log lines below error).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

/// How much goes to standard error: -1 quiet, 0 normal, 1 (-v) the exchange, 2 (-vv)
/// the datagrams in hex.
pub type Level = i8;

/// `-p`: a protocol of ogp-proto's table, or auto. The values, their aliases and their
/// help come from the protocols' entries ([`ogp_proto::Entry`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Protocol {
    /// One protocol.
    Wire(ogp_proto::Protocol),
    /// Query: every protocol at once; the first to answer correctly is used, and named
    /// (`--split` implies OGP). Decode: guessed from each datagram's first bytes.
    Auto,
}

/// Every value of `-p`: the protocols in their table's order, then `auto`.
const PROTOCOL_VALUES: [Protocol; ogp_proto::Protocol::ALL.len() + 1] = {
    let mut out = [Protocol::Auto; ogp_proto::Protocol::ALL.len() + 1];
    let mut i = 0;
    while i < ogp_proto::Protocol::ALL.len() {
        out[i] = Protocol::Wire(ogp_proto::Protocol::ALL[i]);
        i += 1;
    }
    out
};

impl ValueEnum for Protocol {
    fn value_variants<'a>() -> &'a [Self] {
        &PROTOCOL_VALUES
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        use clap::builder::PossibleValue;
        Some(match self {
            Self::Wire(p) => {
                let e = p.entry();
                PossibleValue::new(e.name)
                    .aliases(e.aliases.iter().copied())
                    .help(e.help)
            }
            Self::Auto => {
                let labels: Vec<&str> = ogp_proto::Protocol::AUTO
                    .iter()
                    .chain(&ogp_proto::Protocol::AUTO_STREAM)
                    .map(|p| p.label())
                    .collect();
                PossibleValue::new("auto").help(format!(
                    "Query: every protocol at once ({}); the first to answer correctly is \
                     used, and named (`--split` implies OGP)",
                    labels.join(", ")
                ))
            }
        })
    }
}

impl Protocol {
    /// The protocol on the wire; `None` for auto-detection.
    fn wire(self) -> Option<ogp_proto::Protocol> {
        match self {
            Self::Wire(p) => Some(p),
            Self::Auto => None,
        }
    }
}

/// `ogp serve --gamespy3-challenge`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Gs3Challenge {
    /// A real stateless challenge, required (no amplification).
    Real,
    /// Battlefield 2's behaviour: challenge "0", answers without one (an amplifier).
    Bf2,
}

#[derive(Subcommand)]
enum Command {
    /// Query a server and print its status.
    Query {
        /// Protocol to speak (auto: every protocol's query at once; the first correct
        /// answer wins, and without one the error of the protocol that heard from the
        /// server, or "connection refused" at once for a closed port).
        #[arg(long, short, value_enum, default_value = "auto")]
        protocol: Protocol,
        /// Also try the well-known query ports for this port (+1, -1, +10, +15, 27015,
        /// 29900) and say which one answered; with --game, the game's query port first.
        #[arg(long)]
        try_query_ports: bool,
        /// The game (an id or alias of `ogp games`): picks the protocol, and the query
        /// port from the port given (the game port; default: the game's) by the game's
        /// rule (same port, an offset, or a fixed port). -v says which and why.
        #[arg(long, short, value_name = "ID")]
        game: Option<String>,
        /// The server: host:port, 1.2.3.4:port or [v6::addr]:port; with --game, HOST or
        /// HOST:GAMEPORT.
        #[arg(value_name = "HOST:PORT", value_parser = query_target_arg)]
        target: String,
        /// Print the result as JSON (docs/json.md): protocol, address, ping, warnings and
        /// the status in the state-file schema, or the error; also when the query fails.
        #[arg(long)]
        json: bool,
        /// Milliseconds to wait for an answer before sending again (grows 1.5× per retry);
        /// once the server has answered anything, its round trip sets the wait instead
        /// (never longer).
        #[arg(long, default_value_t = 1000, value_name = "MS",
              value_parser = clap::value_parser!(u64).range(1..=600_000))]
        timeout: u64,
        /// How many times to send again when no answer comes, while the server has sent
        /// nothing (a server that answered anything gets 8 per step, within the deadline).
        #[arg(long, default_value_t = 2, value_name = "N")]
        retries: u32,
        /// OGP: ask the server to split its answer into packets of at most this many bytes
        /// (500–65535; default 1400, so that the whole status comes back), or 0 for one
        /// datagram (servers cut those to a size limit by leaving out whole sections).
        #[arg(long, value_name = "BYTES", value_parser = split_size)]
        split: Option<u16>,
        /// GQP only: send these commands (separated by `;`, arguments by spaces, e.g.
        /// 'echo a b; identify') and print the records instead of the status.
        #[arg(long, value_name = "COMMANDS")]
        command: Option<String>,
        /// GQP: user name for protected commands (the password is read from the
        /// OGP_GQP_PASSWORD environment variable and never sent). TeamSpeak 3: the
        /// ServerQuery login (its password from OGP_TS3_PASSWORD, never from the command
        /// line, never logged). Nadeo: the XML-RPC login (else OGP_NADEO_LOGIN; its
        /// password from OGP_NADEO_PASSWORD or OGP_NADEO_PASSWORD_FILE).
        #[arg(long, value_name = "USER")]
        user: Option<String>,
        /// TeamSpeak 3 and 2: the virtual server's voice port that `use port=` (`sel`)
        /// names (default 9987, 8767; with --game, the port given); the target is the
        /// query port.
        #[arg(long, value_name = "PORT")]
        voice_port: Option<u16>,
        /// HTTPS game servers (Hytale): accept any certificate (the self-signed one Nitrado's
        /// web server makes): the connection is encrypted, the server not authenticated.
        #[arg(long)]
        insecure: bool,
        /// HTTPS game servers (Hytale): ask over plain HTTP instead.
        #[arg(long)]
        no_tls: bool,
        /// A2S and GameSpy v3: how to read names that are not UTF-8: auto (A2S replaces
        /// the bytes, GameSpy v3 reads Latin-1; each with a warning), latin1, cp1251
        /// (Cyrillic), cp1252.
        #[arg(long, default_value = "auto", value_name = "CHARSET")]
        charset: ogp_proto::Charset,
    },
    /// Serve a state file (JSON, or TOML by extension) as a game server would, reloading
    /// it when it changes or on SIGHUP; SIGTERM or SIGINT stops it cleanly.
    Serve {
        /// The status to serve.
        #[arg(long, value_name = "FILE")]
        state: PathBuf,
        /// Address to listen on (repeatable). IPv6 works: [::]:22222. On a host with
        /// several addresses, listen on each one rather than 0.0.0.0, so that answers leave
        /// from the address the query was sent to.
        #[arg(long, value_name = "ADDR:PORT", default_value = "0.0.0.0:22222",
              value_parser = listen_addrs)]
        listen: Vec<Vec<SocketAddr>>,
        /// Also answer the OGP v0.02 draft on this address (repeatable). Its datagrams
        /// cannot be told apart from v1.01's, so it needs a port of its own.
        #[arg(long, value_name = "ADDR:PORT", value_parser = listen_addrs)]
        listen_ogp_draft: Vec<Vec<SocketAddr>>,
        /// Answer default queries without a challenge. Makes the server a traffic
        /// amplifier for spoofed queries; for testing only.
        #[arg(long)]
        no_challenge: bool,
        /// Answers per second allowed per source address (IPv6: per /64). Each source has
        /// two such budgets: one for answers to requests with its valid challenge, which
        /// nobody else can spend, and one for the other answers larger than their request
        /// (errors, pings), which a spoofer using its address can. Challenges (at most 3×
        /// their request) and answers no larger than their request have no per-source
        /// limit, so that a spoofer cannot cut off a client that asks for a fresh
        /// challenge before each query; all sources together get at most 10,000 answers
        /// without a valid challenge per second.
        #[arg(long, default_value_t = 20.0, value_name = "N", value_parser = positive)]
        rate: f32,
        /// Burst allowed per source address (at least 1).
        #[arg(long, default_value_t = 40.0, value_name = "N", value_parser = at_least_one)]
        burst: f32,
        /// Send colour information for names when asked (off: the PHP client cannot
        /// read it).
        #[arg(long)]
        colors: bool,
        /// Publish players' network addresses when the state has them (off: they are
        /// personal data).
        #[arg(long)]
        player_addresses: bool,
        /// Seconds between checks of the state file for changes (SIGHUP reads it at
        /// once).
        #[arg(long, default_value_t = 1.0, value_name = "SECONDS", value_parser = seconds)]
        reload_interval: f64,
        /// Largest state file read, in bytes: a larger one is refused without being read
        /// (only a regular file is read at all; a FIFO, device or directory is refused).
        #[arg(long, default_value_t = state::DEFAULT_MAX_STATE_BYTES, value_name = "BYTES",
              value_parser = clap::value_parser!(u64).range(1..))]
        max_state_bytes: u64,
        /// GameSpy v3 challenge mode. `real` (default): a real challenge, required before
        /// any status is sent, so no amplification; works with gamedig, qstat -gs4 and
        /// opengsq gamespy4. `bf2`: exactly Battlefield 2 (challenge "0", queries answered
        /// without one), for clients that never ask for a challenge (qstat -gs3, opengsq
        /// gamespy3/battlefield2); it reflects about 127 times the request size per
        /// packet to spoofed sources, bounded only by --rate and --burst.
        #[arg(long, value_enum, default_value = "real", value_name = "MODE")]
        gamespy3_challenge: Gs3Challenge,
        /// Do not answer GameSpy v3.
        #[arg(long)]
        no_gamespy3: bool,
        /// Do not answer Valve A2S (its requests are ignored, and counted as dropped with
        /// reason "disabled").
        #[arg(long)]
        no_a2s: bool,
        /// Do not answer OGP v1.01 (its queries are ignored, and counted as dropped with
        /// reason "disabled"); --listen-ogp-draft ports still answer the draft.
        #[arg(long)]
        no_ogp: bool,
        /// Also answer Quake III `getinfo` and `getstatus` (off by default: the protocol
        /// has no server challenge, so every answer goes to an unproven source; a
        /// `getstatus` reply is up to about 108 times its request). The replies are
        /// bounded by --quake3-budget and --quake3-total-budget (docs/quake3-responder.md).
        #[arg(long)]
        quake3: bool,
        /// Quake III reply bytes per second toward one source address (burst: twice as
        /// many), at least 1400 (one full reply).
        #[arg(long, default_value_t = 14_000.0, value_name = "BYTES", value_parser = byte_budget)]
        quake3_budget: f32,
        /// Quake III reply bytes per second in all (and at once), at least 1400.
        #[arg(long, default_value_t = 140_000.0, value_name = "BYTES", value_parser = byte_budget)]
        quake3_total_budget: f32,
        /// Send GameSpy v3 heartbeats to this master server (repeatable): at start, every
        /// 60 s, after status changes and at exit, from each listening socket.
        #[arg(long, value_name = "HOST:PORT", value_parser = listen_addrs)]
        gamespy3_master: Vec<Vec<SocketAddr>>,
        /// The `gamename` announced in heartbeats (default: the state's game_name).
        #[arg(long, value_name = "NAME")]
        gamespy3_game: Option<String>,
        /// Send OGP master server uplinks to this master (repeatable): at start, every
        /// 60 s, 10 s after status changes and at exit, from each listening socket of the
        /// master's address family (docs/master.md).
        #[arg(long, value_name = "HOST:PORT", value_parser = listen_addrs)]
        master: Vec<Vec<SocketAddr>>,
        /// Serve Prometheus metrics over HTTP on this address: GET /metrics (text format
        /// 0.0.4) with answers by protocol and type, dropped datagrams by reason,
        /// datagrams and bytes received and sent, state reloads, players. Bind it to
        /// loopback or a private address: it is not access-controlled.
        #[arg(long, value_name = "ADDR:PORT")]
        metrics: Option<SocketAddr>,
        /// Socket receive buffer asked for, in bytes (default 4 MiB): room for bursts of
        /// queries while the answering threads are busy. Linux caps it at
        /// net.core.rmem_max; a smaller grant is logged with the sysctl that raises it.
        /// Datagrams the kernel still drops are counted (--metrics:
        /// ogp_kernel_dropped_datagrams).
        #[arg(long, default_value_t = ogp_net::responder::SOCKET_RECV_BUFFER as u64,
              value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..=(1 << 31)))]
        recv_buffer: u64,
        /// Answering threads (default: the number of available cores). Each has, for
        /// every listen address, a socket of its own bound with SO_REUSEPORT; all share
        /// one challenge secret. On Linux each source address is answered by one
        /// thread, which keeps that source's rate limits (no lock between threads).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
        threads: Option<u16>,
    },
    /// Decode datagrams (hex on the command line, files, or - for stdin) and describe
    /// each message on one line; answers also show their status. The fragments of a split
    /// answer are reassembled, in any order.
    Decode {
        /// Protocol of the datagrams (auto: guessed from each datagram's first bytes;
        /// OGP v1.01 is preferred to the v0.02 draft, which looks the same).
        #[arg(long, short, value_enum, default_value = "auto")]
        protocol: Protocol,
        /// Print one JSON object per message and line: "protocol", "kind" and its fields;
        /// answers carry "status" (the state-file schema) and "warnings".
        #[arg(long)]
        json: bool,
        /// Hex strings or files (raw bytes, hex text, or a JSON capture whose hex
        /// datagrams are decoded in order); - reads standard input.
        #[arg(required = true, value_name = "HEX-OR-FILE")]
        inputs: Vec<String>,
        /// A2S and GameSpy v3: how to read strings that are not UTF-8 (auto, latin1,
        /// cp1251, cp1252; as for query).
        #[arg(long, default_value = "auto", value_name = "CHARSET")]
        charset: ogp_proto::Charset,
    },
    /// Query a list of servers at once (`PROTOCOL HOST:PORT` per line) and print each
    /// result as it completes, then a summary. A closed port (ICMP port unreachable) is
    /// reported as refused at once (on Linux), a silent one as a timeout.
    Scan(scan::ScanArgs),
    /// Run a master server: receive OGP uplinks, GameSpy v3 heartbeats, Quake III /
    /// DarkPlaces heartbeats, Teeworlds 0.6 and 0.7 heartbeats and DDNet's HTTP registrations,
    /// verify each server by querying it back, poll the listed ones, and serve the list
    /// over Valve's UDP list protocol, dpmaster's protocol (`getservers`, `getserversExt`:
    /// the Quake III family's DP master protocol), the Teeworlds 0.6 and 0.7 master
    /// protocols (`req2`), an HTTP API and a web page (docs/master.md). SIGTERM or SIGINT stops it cleanly. In builds
    /// with the cargo feature `master` (`cargo install --locked --path crates/ogp-cli
    /// --features master`).
    Master(master::MasterArgs),
    /// Read a server list from a master (Valve's UDP list protocol, the DP master protocol
    /// of dpmaster and the Quake III family with --dp, the Teeworlds 0.6 master protocol
    /// with --tw, Teeworlds 0.7's with --tw7, or an ogp master's HTTP API) and
    /// print `PROTOCOL HOST:PORT` lines that `ogp scan -` reads, or NDJSON.
    List(list::ListArgs),
    /// Start a responder on loopback with a demo status, query it, and show what
    /// happened.
    Demo,
    /// List the games catalogue: each game's protocol, default game port and query port
    /// rule (docs/games.md), as a table or as JSON.
    Games {
        /// Only the games whose id, alias or name contains this, or whose protocol it
        /// names.
        filter: Option<String>,
        /// Print JSON (an array of entries, with how answers name each game and the
        /// sources of its facts).
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script (e.g. `ogp completions bash >
    /// /etc/bash_completion.d/ogp`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff; e.g. `ogp man > /usr/local/share/man/man1/ogp.1`).
    Man,
}

/// The log filter: `RUST_LOG` when set (or the older `OGP_LOG`), else by -q / -v / -vv.
/// Directives are `LEVEL` and `TARGET=LEVEL`, comma-separated (`debug,ogp_net=trace`):
/// `tracing_subscriber`'s `Targets`, which needs no regular expressions (span and field
/// filters are not taken).
fn log_filter(level: Level) -> tracing_subscriber::filter::Targets {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    for var in ["RUST_LOG", "OGP_LOG"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            match v.to_string_lossy().parse::<Targets>() {
                Ok(f) => return f,
                Err(e) => eprintln!("ogp: ignoring {var}: {e}"),
            }
        }
    }
    Targets::new().with_default(match level {
        ..=-1 => LevelFilter::ERROR,
        0 => LevelFilter::INFO,
        1 => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    })
}

/// Colours on standard error: only on a terminal, and never with `NO_COLOR` set
/// (<https://no-color.org>).
fn colours() -> bool {
    std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let level: Level = if cli.quiet {
        -1
    } else {
        Level::try_from(cli.verbose).unwrap_or(Level::MAX)
    };
    {
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::util::SubscriberInitExt;
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_max_level(tracing::Level::TRACE)
            .with_target(false)
            .with_ansi(colours())
            .finish()
            .with(log_filter(level))
            .init();
    }
    let result = match cli.command {
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut cmd, "ogp", &mut out);
            emit(&String::from_utf8_lossy(&out)).map(|()| ExitCode::SUCCESS)
        }
        Command::Man => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut out)
                .map_err(anyhow::Error::from)
                .and_then(|()| emit(&String::from_utf8_lossy(&out)))
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Decode {
            protocol,
            json,
            inputs,
            charset,
        } => decode::run(protocol.wire(), &inputs, json, charset),
        Command::Scan(args) => scan::run(&args),
        Command::Games { filter, json } => games::run(filter.as_deref(), json),
        Command::Master(args) => master::run(&args),
        Command::List(args) => list::run(&args),
        Command::Demo => runtime().and_then(|rt| rt.block_on(run_demo())),
        Command::Query {
            protocol,
            try_query_ports,
            game,
            target,
            json,
            timeout,
            retries,
            split,
            command,
            user,
            voice_port,
            charset,
            insecure,
            no_tls,
        } => {
            // TeamSpeak 3 by --game: the port given is the voice port.
            let voice_port = voice_port.or_else(|| {
                game.as_ref()?;
                target.rsplit_once(':')?.1.parse().ok()
            });
            // Minecraft without a port: its SRV record, then 25565 (not for addresses).
            let srv = game.is_none()
                && protocol.wire() == Some(ogp_proto::Protocol::Minecraft)
                && !target.contains(':');
            let (protocol, target) = match game.as_deref().map(games::find) {
                None => match query::with_default_port(&target, protocol.wire()) {
                    Some(t) => (protocol, t),
                    None => {
                        eprintln!("ogp: {target}: no port (expected HOST:PORT)");
                        return ExitCode::from(2);
                    }
                },
                Some(Err(e)) => {
                    eprintln!("ogp: {e}");
                    return ExitCode::from(2);
                }
                Some(Ok(_)) if protocol != Protocol::Auto => {
                    eprintln!("ogp: --game picks the protocol: leave out --protocol");
                    return ExitCode::from(2);
                }
                Some(Ok(g)) => match games::target_for(g, &target) {
                    Ok((t, why)) => {
                        if level >= 1 {
                            eprintln!("{why}");
                        }
                        // the protocol enum's variant that speaks the game's protocol
                        let Some(p) = Protocol::value_variants()
                            .iter()
                            .copied()
                            .find(|p| p.wire() == Some(g.protocol))
                        else {
                            eprintln!("ogp: {} is not queried here", g.protocol.label());
                            return ExitCode::from(2);
                        };
                        (p, t)
                    }
                    Err(e) => {
                        eprintln!("ogp: {e}");
                        return ExitCode::from(2);
                    }
                },
            };
            let args = query::QueryArgs {
                target,
                timeout: Duration::from_millis(timeout.max(1)),
                retries,
                split,
                command,
                user,
                charset,
                srv,
                voice_port,
                tls: query::Tls { insecure, no_tls },
            };
            let ts3 = protocol == Protocol::Wire(ogp_proto::Protocol::Teamspeak3);
            let nadeo = protocol == Protocol::Wire(ogp_proto::Protocol::Nadeo);
            if protocol != Protocol::Wire(ogp_proto::Protocol::Gqp)
                && (args.command.is_some() || (args.user.is_some() && !ts3 && !nadeo))
            {
                eprintln!(
                    "ogp: --command and --user are for --protocol gqp (--user also teamspeak3, nadeo)"
                );
                return ExitCode::from(2);
            }
            let ts2 = protocol == Protocol::Wire(ogp_proto::Protocol::Teamspeak2);
            if !ts3 && !ts2 && voice_port.is_some() && game.is_none() {
                eprintln!("ogp: --voice-port is for --protocol teamspeak3 or teamspeak2");
                return ExitCode::from(2);
            }
            let protocol = match protocol {
                Protocol::Auto if split.is_some() => Protocol::Wire(ogp_proto::Protocol::Ogp),
                p => p,
            };
            if try_query_ports && protocol != Protocol::Auto && game.is_none() {
                eprintln!("ogp: --try-query-ports is for --protocol auto (or --game)");
                return ExitCode::from(2);
            }
            match protocol.wire() {
                Some(p) if !try_query_ports => {
                    let opts = match query::options(&args, p) {
                        Ok(o) => o,
                        Err(e) => {
                            eprintln!("ogp: {e}");
                            return ExitCode::from(2);
                        }
                    };
                    runtime().and_then(|rt| rt.block_on(run_query(&args, p, &opts, json, level)))
                }
                // auto, or --game --try-query-ports: the game's protocol, from its query
                // port
                p => runtime().and_then(|rt| {
                    rt.block_on(scan::query_auto(&args, p, try_query_ports, json, level))
                }),
            }
        }
        Command::Serve {
            state,
            listen,
            listen_ogp_draft,
            no_challenge,
            rate,
            burst,
            colors,
            player_addresses,
            reload_interval,
            max_state_bytes,
            gamespy3_challenge,
            no_gamespy3,
            no_a2s,
            no_ogp,
            quake3,
            quake3_budget,
            quake3_total_budget,
            gamespy3_master,
            gamespy3_game,
            master,
            metrics,
            recv_buffer,
            threads,
        } => {
            let mut config = ResponderConfig::default();
            config.ogp.require_challenge = !no_challenge;
            config.ogp.colors = colors;
            config.ogp.player_addresses = player_addresses;
            config.ogp_draft.require_challenge = !no_challenge;
            // Each source's two budgets: answers to its valid challenges, and the other
            // answers a spoofer can trigger in its name that are larger than the request
            // and no challenge (challenges are held to the overall budget only).
            config.rate = RateConfig::new(rate, burst);
            config.unproven_rate = RateConfig::new(rate, burst);
            config.gamespy3.enabled = !no_gamespy3;
            config.a2s.enabled = !no_a2s;
            config.ogp.enabled = !no_ogp;
            config.quake3.enabled = quake3;
            config.quake3.per_source = RateConfig::new(quake3_budget, 2.0 * quake3_budget);
            config.quake3.total = RateConfig::new(quake3_total_budget, quake3_total_budget);
            config.gamespy3.challenge = match gamespy3_challenge {
                Gs3Challenge::Real => ogp_proto::gamespy3::responder::ChallengeMode::Real,
                Gs3Challenge::Bf2 => ogp_proto::gamespy3::responder::ChallengeMode::Bf2,
            };
            let opts = serve::ServeOptions {
                state,
                listen: listen.into_iter().flatten().collect(),
                listen_ogp_draft: listen_ogp_draft.into_iter().flatten().collect(),
                config,
                reload_interval: Duration::from_secs_f64(reload_interval),
                max_state_bytes,
                gamespy3_masters: gamespy3_master.into_iter().flatten().collect(),
                gamespy3_game,
                ogp_masters: master.into_iter().flatten().collect(),
                metrics,
                net: ogp_net::NetConfig::default()
                    .with_recv_buffer(usize::try_from(recv_buffer).unwrap_or(usize::MAX))
                    .with_threads(match threads {
                        Some(n) => usize::from(n),
                        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
                    }),
            };
            runtime().and_then(|rt| rt.block_on(serve::run(opts)).map(|()| ExitCode::SUCCESS))
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ogp: {}", one_line(&e));
            ExitCode::from(1)
        }
    }
}

/// `--listen` and the masters: `ADDR:PORT`, `[V6]:PORT` or `HOST:PORT` (every address
/// the host name has, e.g. `localhost:22222` → 127.0.0.1 and ::1).
fn listen_addrs(s: &str) -> Result<Vec<SocketAddr>, String> {
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(vec![a]);
    }
    scan::check_host(s)?;
    let mut addrs: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(s)
        .map_err(|e| format!("cannot resolve {s}: {e}"))?
        .collect();
    addrs.sort();
    addrs.dedup();
    if addrs.is_empty() {
        return Err(format!("{s} has no address"));
    }
    Ok(addrs)
}

/// A query target: `HOST:PORT`, `1.2.3.4:PORT` or `[V6]:PORT` with a port of 1–65535.
fn target_arg(s: &str) -> Result<String, String> {
    match scan::check_host(s) {
        Ok(()) => Ok(s.to_string()),
        // A host without a port: protocols with a default port take it (checked with
        // the protocol).
        Err(_) if !s.contains(':') && scan::check_host(&format!("{s}:1")).is_ok() => {
            Ok(s.to_string())
        }
        Err(e) => Err(e),
    }
}

/// `ogp query`'s target: as [`target_arg`], or a host without a port (for --game).
fn query_target_arg(s: &str) -> Result<String, String> {
    match games::split_target(s) {
        Ok((host, None)) if !host.is_empty() => Ok(s.to_string()),
        _ => target_arg(s),
    }
}

/// A rate: a finite number above 0.
fn positive(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err("must be a number above 0".into()),
    }
}

/// A byte budget per second: a finite number of bytes that pays one full reply (1400).
fn byte_budget(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(v) if (1400.0..=1e12).contains(&v) => Ok(v),
        _ => Err("must be a number of bytes from 1400 (one full reply) up".into()),
    }
}

/// A burst: a finite number of at least 1.
fn at_least_one(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(v) if v >= 1.0 && v.is_finite() => Ok(v),
        _ => Err("must be a number of at least 1".into()),
    }
}

/// An interval in seconds: above 0, at most a day.
fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err("must be a number of seconds above 0 (at most 86400)".into()),
    }
}

/// `--split`: 0, or 500–65535.
fn split_size(s: &str) -> Result<u16, String> {
    match s.parse::<u16>() {
        Ok(n) if n == 0 || n >= 500 => Ok(n),
        _ => Err("must be 0 (one datagram) or 500–65535 bytes".into()),
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// An error chain on one line: "context: cause: cause".
fn one_line(e: &anyhow::Error) -> String {
    e.chain()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

/// Writes to standard output. A closed pipe (`ogp … | head`) ends the program quietly
/// instead of panicking as `println!` would.
fn emit(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        r => Ok(r?),
    }
}

/// Prints a query's outcome. Standard output gets the result: with `--json` the one
/// result object (`docs/json.md`), success or failure; else, for an answer, a summary
/// line and the status tables. Standard error gets warnings, a failure's one line, and
/// with `-v` the exchange (`notes`, then one line per event).
fn print_outcome(
    about: &ogp_proto::result::About<'_>,
    outcome: Result<&Answer, &ogp_proto::client::QueryError>,
    json: bool,
    level: Level,
    notes: &str,
) -> anyhow::Result<ExitCode> {
    if let Ok(a) = outcome {
        if level >= 0 {
            for w in &a.warnings {
                eprintln!("warning: {}", render::sanitize(w));
            }
        }
        if level >= 1 {
            eprint!("{}{}", notes, query::wire_summary(&a.events));
        }
    }
    if json {
        emit(&ogp_proto::result::pretty(about, outcome))?;
    }
    let a = match outcome {
        Ok(a) => a,
        Err(e) => {
            eprintln!(
                "ogp: {}: {}",
                render::sanitize(about.target),
                render::sanitize(&e.to_string())
            );
            return Ok(ExitCode::from(1));
        }
    };
    if json {
        return Ok(ExitCode::SUCCESS);
    }
    let plural = if a.datagrams == 1 { "" } else { "s" };
    let addr = a.addr.map(|a| a.to_string()).unwrap_or_default();
    emit(&format!(
        "{} server {addr} answered in {:.1} ms ({} B in {} datagram{plural})\n\n",
        a.protocol.label(),
        a.ping_ms,
        a.bytes,
        a.datagrams
    ))?;
    emit(&render::status(&a.status))?;
    Ok(ExitCode::SUCCESS)
}

async fn run_query(
    args: &query::QueryArgs,
    protocol: ogp_proto::Protocol,
    opts: &ogp_proto::client::Options,
    json: bool,
    level: Level,
) -> anyhow::Result<ExitCode> {
    let addr = query::resolve(args, protocol).await;
    let mut dump = String::new();
    let secrets = query::secrets(opts);
    let mut tap = |w: ogp_net::client::Wire<'_>| {
        if level >= 2 {
            match w {
                ogp_net::client::Wire::Sent(d) if !secrets.is_empty() => {
                    let d = query::redact(d, &secrets);
                    query::hex_dump(&mut dump, ogp_net::client::Wire::Sent(&d));
                }
                w => query::hex_dump(&mut dump, w),
            }
        }
    };
    let outcome = match &addr {
        Ok(addr) => ogp_net::client::query_traced(*addr, protocol, opts, &mut tap).await,
        Err(e) => Err(e.clone()),
    };
    eprint!("{dump}");
    if level >= 0 && protocol == ogp_proto::Protocol::OgpDraft {
        if let Err(e) = &outcome {
            // Silence, or a v1.01 answer the draft cannot read.
            if e.is_timeout() || e.kind() == "malformed" {
                eprintln!(
                    "hint: the OGP v0.02 draft is answered on a port of its own \
                     (ogp serve --listen-ogp-draft); a server's main port answers -p ogp"
                );
            }
        }
    }
    let about = ogp_proto::result::About {
        target: &args.target,
        line: None,
        requested: Some(protocol),
        addr: addr.ok(),
    };
    match &outcome {
        // GQP raw commands: their replies, as they are.
        Ok(a) if args.command.is_some() => {
            if let Details::Gqp(g) = &a.details {
                if json {
                    emit(&format!(
                        "{}\n",
                        ogp_proto::result::to_json_pretty(&g.replies)?
                    ))?;
                } else {
                    emit(&ogp_proto::gqp::render_replies(&g.replies))?;
                }
                return Ok(ExitCode::SUCCESS);
            }
            print_outcome(&about, Ok(a), json, level, "")
        }
        _ => print_outcome(&about, outcome.as_ref(), json, level, ""),
    }
}

/// The demo status (the project's canonical example state file).
const DEMO_STATE: &str = include_str!("../../ogp-proto/tests/data/state.json");

async fn run_demo() -> anyhow::Result<ExitCode> {
    let status = ogp_proto::Status::from_json(DEMO_STATE)?;
    let cell = ogp_net::StatusCell::new(status);
    let loopback: SocketAddr = "127.0.0.1:0".parse()?;
    let handle =
        ogp_net::responder::spawn(loopback, Arc::clone(&cell), ResponderConfig::default()).await?;
    let addr = handle.local_addr();
    emit(&format!(
        "Started a responder on {addr} serving the demo status; querying it with each protocol's client.\n\n"
    ))?;
    let args = query::QueryArgs {
        target: addr.to_string(),
        timeout: Duration::from_millis(500),
        retries: 2,
        ..query::QueryArgs::default()
    };
    let ask = |p: ogp_proto::Protocol, target: String| {
        let opts = ogp_proto::client::Options::with_timing(query::timing(&args, p));
        async move { query::run(&target, p, &opts).await }
    };
    use ogp_proto::Protocol as P;
    let ogp = ask(P::Ogp, addr.to_string()).await;
    let others = [
        (P::Gqp, "GQP on the same port"),
        (P::A2s, "Valve A2S on the same port"),
        (
            P::Gamespy3,
            "GameSpy v3 on the same port (real challenge mode)",
        ),
    ];
    let mut answers = Vec::new();
    for (p, title) in others {
        answers.push((title, ask(p, addr.to_string()).await));
    }
    let mut draft_config = ResponderConfig::default();
    draft_config.listener = ogp_proto::responder::Listener::OgpDraft;
    let draft_handle = ogp_net::responder::spawn(loopback, Arc::clone(&cell), draft_config).await?;
    let draft_addr = draft_handle.local_addr();
    answers.push((
        "OGP v0.02 draft on its own port",
        ask(P::OgpDraft, draft_addr.to_string()).await,
    ));
    draft_handle.shutdown().await?;
    let stats = handle.stats();
    handle.shutdown().await?;
    let o = ogp?;
    emit(&format!(
        "OGP on the wire:\n{}",
        query::wire_summary(&o.events)
    ))?;
    emit(&format!("  answered in {:.2} ms\n", o.ping_ms))?;
    let o_players = o.status.players.as_ref().map(Vec::len);
    for (title, answer) in &answers {
        emit(&match answer {
            Ok(a) => {
                let same = a.status.host_name == o.status.host_name
                    && a.status.players.as_ref().map(Vec::len) == o_players;
                format!(
                    "\n{title}:\n{}  answered in {:.2} ms; {} the OGP answer\n",
                    query::wire_summary(&a.events),
                    a.ping_ms,
                    if same {
                        "same server name and players as"
                    } else {
                        "DIFFERENT from"
                    }
                )
            }
            Err(e) => format!("\n{title} failed: {e}\n"),
        })?;
    }
    emit(&format!(
        "\nThe responder received {} and sent {} datagrams ({} bytes).\n\n",
        stats.received, stats.sent, stats.sent_bytes
    ))?;
    emit(&render::status(&o.status))?;
    Ok(ExitCode::SUCCESS)
}

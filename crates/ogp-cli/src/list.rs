//! `ogp list`: a server list from a master, over Valve's UDP list protocol
//! (`HOST:PORT`), dpmaster's (`HOST:PORT --dp GAME PROTOCOL`), the GameSpy master's
//! over TCP (`HOST:PORT --gs1 GAME`), a Cube 2 master's over TCP (`HOST:PORT --cube2`:
//! Red Eclipse's, Sauerbraten's), a Teeworlds 0.6 master's (`HOST:PORT --tw`) or 0.7
//! master's (`HOST:PORT --tw7`), the lists on the web over HTTP(S) (DDNet's, Minetest's,
//! open.mp's, Steam's Web API) or our HTTP API (`http(s)://HOST:PORT`), one server per
//! line in the format `ogp scan` reads, or NDJSON. Reading the list is
//! `ogp_net::list::list_servers`; this turns the flags into its source and prints.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use ogp_net::list::{list_servers, ListEvent, ListOptions, ListParams, ListSource, SteamKey};
use serde_json::Value;

use crate::render::sanitize;

/// Skipped entries named one by one; past that, only counted.
const MAX_SKIP_WARNINGS: usize = 10;

/// `ogp list` flags.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// The master: HOST:PORT (Valve's master protocol over UDP; with --dp, the DP master
    /// protocol of dpmaster; with --gs1, the GameSpy master protocol over TCP; with --tw,
    /// the Teeworlds 0.6 master protocol; with --tw7, Teeworlds 0.7's),
    /// http(s)://HOST:PORT (an ogp master's HTTP API) or, with --ddnet, --minetest,
    /// --openmp or --steam, the URL of that list.
    #[arg(value_name = "MASTER")]
    master: String,
    /// Valve: the filter string, e.g. '\gamedir\tf\empty\1'. HTTP: the API's query
    /// parameters, e.g. 'game=tf&has_players=true'.
    #[arg(long, default_value = "")]
    filter: String,
    /// Valve: the region byte (0 US east … 7 Africa, 255 all).
    #[arg(long, default_value_t = 255)]
    region: u8,
    /// The master speaks the DP master protocol (dpmaster's, the Quake III family): ask it with
    /// `getserversExt GAME PROTOCOL empty full` (IPv4 and IPv6), e.g. `--dp Quake3Arena
    /// 71` (OpenArena), `--dp Xonotic 3`. --filter then adds options (`ipv4`, `ipv6`,
    /// `gametype=X`, `ffa`, …).
    #[arg(long, num_args = 2, value_names = ["GAME", "PROTOCOL"])]
    dp: Option<Vec<String>>,
    /// The master speaks the GameSpy master protocol over TCP (the GameSpy v1 games'
    /// masters, port 28900, and `ogp master --gs1-list`): ask it for GAME's servers
    /// (its `gamename`: `ut`, `bfield1942`, `mohaa`…).
    #[arg(long, value_name = "GAME", conflicts_with = "dp")]
    gs1: Option<String>,
    /// With --gs1: the secret key of GAME, to answer the master's challenge (`validate`)
    /// as the game does; without it the answer is `00000000`, which only masters that do
    /// not check take (ours does not).
    #[arg(long, value_name = "KEY", requires = "gs1")]
    gs1_key: Option<String>,
    /// MASTER is the URL of DDNet's HTTP server list (the document
    /// `https://master1.ddnet.org/ddnet/15/servers.json` serves): its `tw-0.6+udp`
    /// addresses are listed as `teeworlds`, its `tw-0.7+udp` ones as `teeworlds7`.
    #[arg(long, conflicts_with_all = ["dp", "gs1", "cube2"])]
    ddnet: bool,
    /// MASTER is the URL of Minetest's (Luanti's) server list
    /// (`https://servers.minetest.net/list`): each server listed as `minetest` at the IP
    /// address it announced from.
    #[arg(long, conflicts_with_all = ["dp", "gs1", "cube2", "ddnet", "qw", "tw", "tw7"])]
    minetest: bool,
    /// MASTER is the URL of open.mp's server list (`https://api.open.mp/servers`): each
    /// server listed as `samp`.
    #[arg(long, conflicts_with_all = ["dp", "gs1", "cube2", "ddnet", "qw", "tw", "tw7", "minetest"])]
    openmp: bool,
    /// Steam's Web API `IGameServersService/GetServerList` (MASTER: its base URL,
    /// `https://api.steampowered.com`, or its whole URL), with --filter as Valve's filter
    /// string (`\appid\440`) and --limit (at most 20,000). Needs a Steam Web API key:
    /// from the environment variable OGP_STEAM_KEY or --steam-key-file, never on the
    /// command line; it is never printed or logged. Servers listed as `a2s`.
    #[arg(long, conflicts_with_all = ["dp", "gs1", "cube2", "ddnet", "qw", "tw", "tw7", "minetest", "openmp"])]
    steam: bool,
    /// With --steam: read the key from FILE's first line (instead of OGP_STEAM_KEY).
    #[arg(long, value_name = "FILE", requires = "steam")]
    steam_key_file: Option<std::path::PathBuf>,
    /// HTTPS: DO NOT CHECK THE SERVER'S CERTIFICATE. Any certificate is taken, so anyone
    /// on the path can read and change the list. Only for your own servers with a
    /// self-signed certificate.
    #[arg(long)]
    insecure: bool,
    /// The master is a Cube 2 master (Red Eclipse's, port 28800; Sauerbraten's, port
    /// 28787): `list` over TCP, answered by `addserver IP PORT` lines; each server is
    /// printed with its query port (the game port + 1).
    #[arg(long, conflicts_with_all = ["dp", "gs1"])]
    cube2: bool,
    /// The master is a QuakeWorld master (port 27000; qstat's -qwm, `ogp master`): `c\n`,
    /// answered by IPv4 addresses, listed as `quakeworld`. The list has no end marker: a
    /// short page ends it, or silence for --page-timeout after a full one.
    #[arg(long, conflicts_with_all = ["dp", "gs1", "cube2", "ddnet", "tw", "tw7"])]
    qw: bool,
    /// The master speaks the Teeworlds 0.6 master protocol (Teeworlds' and DDNet's older
    /// masters, port 8300, and `ogp master`'s UDP port): `cou2` and `req2`, answered by
    /// the count and `lis2` pages; the servers are listed as `teeworlds`.
    #[arg(long, conflicts_with_all = ["dp", "gs1", "cube2", "ddnet", "qw", "tw7"])]
    tw: bool,
    /// The master speaks the Teeworlds 0.7 master protocol (Teeworlds 0.7's masters,
    /// port 8283, and `ogp master`'s UDP port): a token handshake (a 520-byte request),
    /// then `cou2` and `req2` with both tokens, answered by the count and `lis2` pages;
    /// the servers are listed as `teeworlds7`.
    #[arg(long, conflicts_with_all = ["dp", "gs1", "cube2", "ddnet"])]
    tw7: bool,
    /// Stop after this many servers.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Milliseconds for the whole run, all pages together: a list that has not ended by
    /// then is an error (exit 1), whatever the master keeps sending.
    #[arg(long, default_value_t = 60_000, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    timeout: u64,
    /// Milliseconds to wait for each page from its request. UDP: then it is asked for
    /// again, twice; datagrams that are not the page do not extend the wait. HTTP: each
    /// request may take five times this.
    #[arg(long, default_value_t = 2000, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=600_000))]
    page_timeout: u64,
    /// One JSON object per server and line (the API's items; over UDP: addr and
    /// protocols).
    #[arg(long)]
    json: bool,
}

fn print(out: &mut impl Write, json: bool, addr: &str, item: &Value) -> std::io::Result<()> {
    if json {
        let line = ogp_proto::result::to_json(item).map_err(std::io::Error::other)?;
        writeln!(out, "{line}")
    } else {
        let proto = item
            .get("protocols")
            .and_then(|p| p.get(0))
            .and_then(Value::as_str)
            .unwrap_or("auto");
        writeln!(out, "{} {}", sanitize(proto), sanitize(addr))
    }
}

/// Entries that are no server: the first few named, then counted.
#[derive(Default)]
struct Skips {
    count: usize,
}

impl Skips {
    fn skip(&mut self, master: &str, addr: &str, why: &str) {
        self.count = self.count.saturating_add(1);
        if self.count <= MAX_SKIP_WARNINGS {
            tracing::warn!(
                "{}: skipped the entry {}: {why}",
                sanitize(master),
                sanitize(addr)
            );
        }
    }

    fn report(&self, master: &str) {
        if self.count > MAX_SKIP_WARNINGS {
            tracing::warn!(
                "{}: skipped {} entries that are no server in all",
                sanitize(master),
                self.count
            );
        }
    }
}

/// The source the flags name.
fn source(args: &ListArgs) -> anyhow::Result<ListSource> {
    let flags = [
        (args.ddnet, "ddnet"),
        (args.minetest, "minetest"),
        (args.openmp, "openmp"),
        (args.steam, "steam"),
        (args.gs1.is_some(), "gs1"),
        (args.cube2, "cube2"),
        (args.qw, "qw"),
        (args.tw, "tw"),
        (args.tw7, "tw7"),
        (args.dp.is_some(), "dp"),
    ];
    let kind = flags.iter().find(|(on, _)| *on).map(|(_, k)| *k);
    let (game, protocol) = match (&args.gs1, args.dp.as_deref()) {
        (Some(g), _) => (Some(g.clone()), None),
        (None, Some([g, p])) => (Some(g.clone()), Some(p.clone())),
        (None, Some(_)) => bail!("--dp takes a game name and a protocol number"),
        (None, None) => (None, None),
    };
    let mut p = ListParams::default();
    p.filter = args.filter.clone();
    p.region = Some(args.region);
    p.game = game;
    p.protocol = protocol;
    p.gs1_key = args.gs1_key.clone();
    if args.steam {
        p.steam_key = SteamKey::find(args.steam_key_file.as_deref())?;
    }
    Ok(ListSource::new(kind, &args.master, p)?)
}

/// Runs `ogp list`.
pub fn run(args: &ListArgs) -> anyhow::Result<ExitCode> {
    let source = source(args)?;
    let mut options = ListOptions::new(
        Duration::from_millis(args.timeout),
        Duration::from_millis(args.page_timeout),
    );
    options.limit = args.limit;
    options.insecure = args.insecure;
    if args.insecure {
        tracing::warn!("--insecure: the server's certificate is not checked");
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut skips = Skips::default();
    let result = list_servers(&source, &options, &mut |e| match e {
        ListEvent::Server { addr, item, .. } => print(&mut out, args.json, &addr, &item),
        ListEvent::Skipped { entry, why } => {
            skips.skip(&args.master, &entry, why);
            Ok(())
        }
        _ => Ok(()),
    });
    out.flush()?;
    skips.report(&args.master);
    let n = result?;
    tracing::info!("{n} servers");
    Ok(ExitCode::SUCCESS)
}

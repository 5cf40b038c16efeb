//! `ogp list`: a server list from a master, over Valve's UDP list protocol
//! (`HOST:PORT`), dpmaster's (`HOST:PORT --dp GAME PROTOCOL`), the GameSpy master's
//! over TCP (`HOST:PORT --gs1 GAME`), a Cube 2 master's over TCP (`HOST:PORT --cube2`:
//! Red Eclipse's, Sauerbraten's), a Teeworlds 0.6 master's (`HOST:PORT --tw`) or 0.7
//! master's (`HOST:PORT --tw7`), DDNet's
//! HTTP server list (`http://… --ddnet`) or our
//! HTTP API
//! (`http://HOST:PORT`), one server per line in the
//! format `ogp scan` reads, or NDJSON. What a page is, when the list has ended, the
//! deadlines and the budgets are ogp-proto's `master::list_client`; this moves bytes and
//! prints.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use ogp_proto::master::ddnet;
use ogp_proto::master::dpmaster::ServersRequest;
use ogp_proto::master::list_client::{
    Cube2ListClient, DpListClient, GsListClient, GsProgress, HttpListClient, ListLimits,
    QwListClient, Tw7ListClient, TwListClient, UdpListClient, UdpListProtocol, ValveListClient,
};
use serde_json::{json, Value};

use crate::render::sanitize;

/// Skipped entries named one by one; past that, only counted.
const MAX_SKIP_WARNINGS: usize = 10;

/// `ogp list` flags.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// The master: HOST:PORT (Valve's master protocol over UDP; with --dp, the DP master
    /// protocol of dpmaster; with --gs1, the GameSpy master protocol over TCP; with --tw,
    /// the Teeworlds 0.6 master protocol; with --tw7, Teeworlds 0.7's) or
    /// http://HOST:PORT (an ogp master's HTTP API).
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
    /// `https://master1.ddnet.org/ddnet/15/servers.json` serves; http:// only here): its
    /// `tw-0.6+udp` addresses are listed as `teeworlds`, its `tw-0.7+udp` ones as
    /// `teeworlds7`.
    #[arg(long, conflicts_with_all = ["dp", "gs1", "cube2"])]
    ddnet: bool,
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

/// Runs `ogp list`.
pub fn run(args: &ListArgs) -> anyhow::Result<ExitCode> {
    let limit = args.limit.unwrap_or(usize::MAX);
    let limits = ListLimits::new(
        Duration::from_millis(args.timeout),
        Duration::from_millis(args.page_timeout),
    );
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut skips = Skips::default();
    let result = if args.ddnet {
        ddnet(args, limits, limit, &mut out, &mut skips)
    } else if args.master.starts_with("http://") {
        http(args, limits, limit, &mut out, &mut skips)
    } else if args.master.contains("://") {
        bail!(
            "{}: only http:// URLs (or HOST:PORT for Valve's UDP protocol)",
            sanitize(&args.master)
        )
    } else if let Some(game) = &args.gs1 {
        gs1(args, game, limits, limit, &mut out, &mut skips)
    } else if args.cube2 {
        cube2(args, limits, limit, &mut out, &mut skips)
    } else if args.qw {
        let start = |now| QwListClient::new(limits, now);
        udp(args, "quakeworld", start, limit, &mut out, &mut skips)
    } else if args.tw {
        let start = |now| TwListClient::new(limits, now);
        udp(args, "teeworlds", start, limit, &mut out, &mut skips)
    } else if args.tw7 {
        let start = |now| Tw7ListClient::new(ogp_net::random_u32(), limits, now);
        udp(args, "teeworlds7", start, limit, &mut out, &mut skips)
    } else if let Some(dp_args) = &args.dp {
        dp_request(dp_args, &args.filter).and_then(|request| {
            let start = |now| DpListClient::new(request, limits, now);
            udp(args, "quake3", start, limit, &mut out, &mut skips)
        })
    } else {
        let start = |now| ValveListClient::new(args.region, &args.filter, limits, now);
        udp(args, "a2s", start, limit, &mut out, &mut skips)
    };
    out.flush()?;
    skips.report(&args.master);
    let n = result?;
    tracing::info!("{n} servers");
    Ok(ExitCode::SUCCESS)
}

/// The dpmaster request of `--dp GAME PROTOCOL` and `--filter`'s options.
fn dp_request(dp: &[String], filter: &str) -> anyhow::Result<ServersRequest> {
    let [game, protocol] = dp else {
        bail!("--dp takes a game name and a protocol number");
    };
    let mut d = b"\xff\xff\xff\xffgetserversExt ".to_vec();
    d.extend_from_slice(format!("{game} {protocol} empty full {filter}").as_bytes());
    ServersRequest::decode(&d).map_err(|e| {
        anyhow!(
            "--dp {} {} {}: {e}",
            sanitize(game),
            sanitize(protocol),
            sanitize(filter)
        )
    })
}

/// A UDP socket connected to the master.
fn connect(master: &str) -> anyhow::Result<(UdpSocket, SocketAddr)> {
    let name = sanitize(master);
    let addr: SocketAddr = master
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {name}"))?
        .next()
        .ok_or_else(|| anyhow!("{name} has no address"))?;
    let local: SocketAddr = if addr.is_ipv4() {
        "0.0.0.0:0"
    } else {
        "[::]:0"
    }
    .parse()?;
    let sock = UdpSocket::bind(local)?;
    sock.connect(addr)?;
    Ok((sock, addr))
}

/// Waits until `wake` for a datagram; `None` when none came.
fn recv_until(sock: &UdpSocket, wake: Instant, buf: &mut [u8]) -> anyhow::Result<Option<usize>> {
    let wait = wake.saturating_duration_since(Instant::now());
    if wait.is_zero() {
        return Ok(None);
    }
    sock.set_read_timeout(Some(wait))?;
    match sock.recv(buf) {
        Ok(n) => Ok(Some(n)),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(anyhow!(e)),
    }
}

/// A run of a UDP list protocol (`start` makes its client once the socket is
/// connected), printing each server with the protocol `label`.
fn udp<P: UdpListProtocol>(
    args: &ListArgs,
    label: &str,
    start: impl FnOnce(Instant) -> UdpListClient<P>,
    limit: usize,
    out: &mut impl Write,
    skips: &mut Skips,
) -> anyhow::Result<usize> {
    let (sock, master) = connect(&args.master)?;
    let mut client = start(Instant::now());
    let mut count = 0;
    // a whole datagram, however large (QuakeWorld masters may send their list in one)
    let mut buf = vec![0u8; 65536];
    let mut d = Vec::new();
    loop {
        d.clear();
        if client
            .poll_transmit(Instant::now(), &mut d)
            .map_err(|e| anyhow!("{master}: {e}"))?
        {
            sock.send(&d)?;
        }
        let Some(wake) = client.next_wake() else {
            return Ok(count);
        };
        let Some(n) = recv_until(&sock, wake, &mut buf).with_context(|| format!("{master}"))?
        else {
            continue;
        };
        let page = client
            .handle_datagram(buf.get(..n).unwrap_or_default(), Instant::now())
            .map_err(|e| anyhow!("{master}: {e}"))?;
        let Some(page) = page else { continue };
        for (a, why) in &page.skipped {
            skips.skip(&args.master, &a.to_string(), why);
        }
        for a in &page.servers {
            if count == limit {
                return Ok(count);
            }
            print(
                out,
                args.json,
                &a.to_string(),
                &json!({ "addr": a.to_string(), "protocols": [label] }),
            )?;
            count += 1;
        }
        if count == limit {
            return Ok(count);
        }
    }
}

/// The master's name as shown (sanitized) and its first address.
fn resolve_master(master: &str) -> anyhow::Result<(String, SocketAddr)> {
    let name = sanitize(master);
    let addr = master
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {name}"))?
        .next()
        .ok_or_else(|| anyhow!("{name} has no address"))?;
    Ok((name, addr))
}

/// A GameSpy master's list over TCP.
fn gs1(
    args: &ListArgs,
    game: &str,
    limits: ListLimits,
    limit: usize,
    out: &mut impl Write,
    skips: &mut Skips,
) -> anyhow::Result<usize> {
    let (name, addr) = resolve_master(&args.master)?;
    let start = Instant::now();
    let mut client = GsListClient::new(game, game, args.gs1_key.as_deref(), limits, start);
    let wait = client.next_wake().saturating_duration_since(start);
    let mut sock = TcpStream::connect_timeout(&addr, wait.max(Duration::from_millis(1)))
        .with_context(|| name.to_string())?;
    let mut buf = vec![0u8; 16384];
    let (servers, skipped) = loop {
        let wait = client.next_wake().saturating_duration_since(Instant::now());
        if wait.is_zero() {
            bail!("{name}: {}", client.timed_out(Instant::now()));
        }
        sock.set_read_timeout(Some(wait))?;
        let n = match sock.read(&mut buf) {
            Ok(0) => bail!("{name}: {}", client.handle_closed()),
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            Err(e) => bail!("{name}: {e}"),
        };
        match client
            .handle_bytes(Instant::now(), buf.get(..n).unwrap_or_default())
            .map_err(|e| anyhow!("{name}: {e}"))?
        {
            GsProgress::Send(d) => sock.write_all(&d).with_context(|| name.to_string())?,
            GsProgress::Done { servers, skipped } => break (servers, skipped),
            _ => {}
        }
    };
    for (a, why) in &skipped {
        skips.skip(&args.master, &a.to_string(), why);
    }
    let mut count = 0;
    for a in servers.iter().take(limit) {
        let addr = a.to_string();
        print(
            out,
            args.json,
            &addr,
            &json!({ "addr": addr, "protocols": ["gamespy1"] }),
        )?;
        count += 1;
    }
    Ok(count)
}

/// A Cube 2 master's list over TCP.
fn cube2(
    args: &ListArgs,
    limits: ListLimits,
    limit: usize,
    out: &mut impl Write,
    skips: &mut Skips,
) -> anyhow::Result<usize> {
    let (name, addr) = resolve_master(&args.master)?;
    let mut client = Cube2ListClient::new(limits, Instant::now());
    let wait = client.next_wake().saturating_duration_since(Instant::now());
    let mut sock = TcpStream::connect_timeout(&addr, wait.max(Duration::from_millis(1)))
        .with_context(|| name.to_string())?;
    sock.write_all(client.request())
        .with_context(|| name.to_string())?;
    let mut buf = vec![0u8; 16384];
    loop {
        let wait = client.next_wake().saturating_duration_since(Instant::now());
        if wait.is_zero() {
            bail!("{name}: {}", client.timed_out(Instant::now()));
        }
        sock.set_read_timeout(Some(wait))?;
        match sock.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => client
                .handle_bytes(Instant::now(), buf.get(..n).unwrap_or_default())
                .map_err(|e| anyhow!("{name}: {e}"))?,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => bail!("{name}: {e}"),
        }
    }
    let (servers, skipped) = client.handle_closed().map_err(|e| anyhow!("{name}: {e}"))?;
    for (a, why) in &skipped {
        skips.skip(&args.master, &a.to_string(), why);
    }
    let mut count = 0;
    for a in servers.iter().take(limit) {
        let Some(port) = a.port().checked_add(ogp_proto::cube2::QUERY_PORT_OFFSET) else {
            skips.skip(&args.master, &a.to_string(), "no query port above its port");
            continue;
        };
        let addr = SocketAddr::new(a.ip(), port).to_string();
        print(
            out,
            args.json,
            &addr,
            &json!({ "addr": addr, "game_addr": a.to_string(), "protocols": ["cube2"] }),
        )?;
        count += 1;
    }
    Ok(count)
}

fn http(
    args: &ListArgs,
    limits: ListLimits,
    limit: usize,
    out: &mut impl Write,
    skips: &mut Skips,
) -> anyhow::Result<usize> {
    let base = args.master.trim_end_matches('/');
    let base = base.strip_suffix("/api/v1/servers").unwrap_or(base);
    let name = sanitize(base);
    let agent: ureq::Agent = ureq::Agent::config_builder().build().into();
    let mut client = HttpListClient::new(limits, Instant::now());
    let mut count = 0;
    while let Some(next) = client
        .next_request(Instant::now())
        .map_err(|e| anyhow!("{name}: {e}"))?
    {
        let mut url = format!("{base}/api/v1/servers?view=summary&limit=5000");
        if !args.filter.is_empty() {
            url.push('&');
            url.push_str(args.filter.trim_start_matches(['?', '&']));
        }
        let shown = sanitize(&url);
        let mut req = agent
            .get(&url)
            .config()
            .timeout_global(Some(next.timeout))
            .build();
        if let Some(c) = &next.cursor {
            req = req.query("cursor", c); // percent-encoded by ureq
        }
        // a request cut short by the whole run's deadline says so
        let failed = |e: &dyn std::fmt::Display| match client.check_deadline(Instant::now()) {
            Err(d) => anyhow!("{name}: {d}"),
            Ok(()) => anyhow!("{shown}: {e}"),
        };
        let mut res = req.call().map_err(|e| failed(&e))?;
        // at most one byte more than a page may have: a larger one shows as such
        let body =
            read_capped(res.body_mut().as_reader(), next.max_bytes).map_err(|e| failed(&e))?;
        let page = client
            .handle_page(&body)
            .map_err(|e| anyhow!("{name}: {e}"))?;
        drop(body);
        for (addr, why) in &page.skipped {
            skips.skip(base, addr, why);
        }
        for (addr, item) in &page.servers {
            if count == limit {
                return Ok(count);
            }
            print(out, args.json, &addr.to_string(), item)?;
            count += 1;
        }
        if count == limit {
            return Ok(count);
        }
    }
    Ok(count)
}

/// DDNet's HTTP server list: one document, read within the page timeout (five times,
/// as for the HTTP API) and [`ddnet::MAX_BYTES`].
fn ddnet(
    args: &ListArgs,
    limits: ListLimits,
    limit: usize,
    out: &mut impl Write,
    skips: &mut Skips,
) -> anyhow::Result<usize> {
    if !args.master.starts_with("http://") {
        bail!("{}: --ddnet takes an http:// URL", sanitize(&args.master));
    }
    let shown = sanitize(&args.master);
    let agent: ureq::Agent = ureq::Agent::config_builder().build().into();
    let timeout = limits
        .page_timeout
        .saturating_mul(5)
        .min(Duration::from_millis(args.timeout));
    let mut res = agent
        .get(&args.master)
        .config()
        .timeout_global(Some(timeout))
        .build()
        .call()
        .map_err(|e| anyhow!("{shown}: {e}"))?;
    let body = read_capped(
        res.body_mut().as_reader(),
        ddnet::MAX_BYTES.saturating_add(1),
    )
    .map_err(|e| anyhow!("{shown}: {e}"))?;
    let list = ddnet::decode_list(&body).map_err(|e| anyhow!("{shown}: {e}"))?;
    for (a, why) in &list.skipped {
        skips.skip(&args.master, a, why);
    }
    let mut count = 0;
    for s in list.servers.iter().take(limit) {
        let item = json!({
            "addr": s.addr.to_string(),
            "protocols": [s.protocol.name()],
            "name": s.name.as_deref(),
            "map": s.map.as_deref(),
            "location": s.location.as_deref(),
        });
        print(out, args.json, &s.addr.to_string(), &item)?;
        count += 1;
    }
    Ok(count)
}

/// At most `max` bytes of a response body.
fn read_capped(body: impl Read, max: usize) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    body.take(u64::try_from(max).unwrap_or(u64::MAX))
        .read_to_end(&mut out)?;
    Ok(out)
}

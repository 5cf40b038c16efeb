//! `ogp list`: a server list from a master, over Valve's UDP list protocol
//! (`HOST:PORT`) or our HTTP API (`http://HOST:PORT`), one server per line in the
//! format `ogp scan` reads, or NDJSON.

use std::io::Write;
use std::net::{SocketAddr, SocketAddrV4, ToSocketAddrs, UdpSocket};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use ogp_proto::master::valve::{decode_page, ListRequest, END};
use serde_json::{json, Value};

use crate::render::sanitize;

/// Most pages read from a master (231 servers each over UDP, 5,000 over HTTP).
const MAX_PAGES: usize = 10_000;

/// `ogp list` flags.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// The master: HOST:PORT (Valve's master protocol over UDP) or http://HOST:PORT (an
    /// ogp master's HTTP API).
    #[arg(value_name = "MASTER")]
    master: String,
    /// Valve: the filter string, e.g. '\gamedir\tf\empty\1'. HTTP: the API's query
    /// parameters, e.g. 'game=tf&has_players=true'.
    #[arg(long, default_value = "")]
    filter: String,
    /// Valve: the region byte (0 US east … 7 Africa, 255 all).
    #[arg(long, default_value_t = 255)]
    region: u8,
    /// Stop after this many servers.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Milliseconds to wait for each page before asking again (twice).
    #[arg(long, default_value_t = 2000, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=600_000))]
    timeout: u64,
    /// One JSON object per server and line (the API's items; over UDP: addr and
    /// protocols).
    #[arg(long)]
    json: bool,
}

fn print(out: &mut impl Write, json: bool, addr: &str, item: &Value) -> std::io::Result<()> {
    if json {
        writeln!(out, "{item}")
    } else {
        let proto = item
            .get("protocols")
            .and_then(|p| p.get(0))
            .and_then(Value::as_str)
            .unwrap_or("auto");
        writeln!(out, "{} {}", sanitize(proto), sanitize(addr))
    }
}

/// Runs `ogp list`.
pub fn run(args: &ListArgs) -> anyhow::Result<ExitCode> {
    let limit = args.limit.unwrap_or(usize::MAX);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let n = if args.master.starts_with("http://") {
        http(args, limit, &mut out)?
    } else if args.master.contains("://") {
        bail!(
            "{}: only http:// URLs (or HOST:PORT for Valve's UDP protocol)",
            args.master
        )
    } else {
        valve(args, limit, &mut out)?
    };
    out.flush()?;
    tracing::info!("{n} servers");
    Ok(ExitCode::SUCCESS)
}

fn valve(args: &ListArgs, limit: usize, out: &mut impl Write) -> anyhow::Result<usize> {
    let master: SocketAddr = args
        .master
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {}", args.master))?
        .next()
        .ok_or_else(|| anyhow!("{} has no address", args.master))?;
    let local: SocketAddr = if master.is_ipv4() {
        "0.0.0.0:0"
    } else {
        "[::]:0"
    }
    .parse()?;
    let sock = UdpSocket::bind(local)?;
    sock.connect(master)?;
    sock.set_read_timeout(Some(Duration::from_millis(args.timeout)))?;
    let mut req = ListRequest::first(args.region, &args.filter);
    let mut count = 0;
    let mut buf = vec![0u8; 2048];
    for _ in 0..MAX_PAGES {
        let mut d = Vec::new();
        req.encode(&mut d);
        let page = 'attempts: {
            for _ in 0..3 {
                sock.send(&d)?;
                loop {
                    match sock.recv(&mut buf) {
                        Ok(n) => {
                            if let Ok(p) = decode_page(buf.get(..n).unwrap_or_default()) {
                                break 'attempts p;
                            }
                            // not a list page: wait for the real one
                        }
                        Err(e)
                            if matches!(
                                e.kind(),
                                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                            ) =>
                        {
                            break
                        }
                        Err(e) => return Err(anyhow!(e).context(format!("{master}"))),
                    }
                }
            }
            bail!("{master}: no answer (the master may not speak Valve's list protocol, or rate-limits us)");
        };
        for a in &page.servers {
            if count == limit {
                return Ok(count);
            }
            print(
                out,
                args.json,
                &a.to_string(),
                &json!({ "addr": a.to_string(), "protocols": ["a2s"] }),
            )?;
            count += 1;
        }
        let last: Option<SocketAddrV4> = page.servers.last().copied();
        match last {
            _ if page.end => return Ok(count),
            None => return Ok(count),
            Some(l)
                if ogp_proto::master::valve::sortable(l)
                    <= ogp_proto::master::valve::sortable(req.seed)
                    && req.seed != END =>
            {
                bail!("{master}: the list went backwards after {}", req.seed)
            }
            Some(l) => req = req.after(l),
        }
    }
    bail!("{master}: more than {MAX_PAGES} pages")
}

fn http(args: &ListArgs, limit: usize, out: &mut impl Write) -> anyhow::Result<usize> {
    let base = args.master.trim_end_matches('/');
    let base = base.strip_suffix("/api/v1/servers").unwrap_or(base);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_millis(args.timeout.saturating_mul(5))))
        .build()
        .into();
    let mut cursor: Option<String> = None;
    let mut count = 0;
    for _ in 0..MAX_PAGES {
        let mut url = format!("{base}/api/v1/servers?view=summary&limit=5000");
        if !args.filter.is_empty() {
            url.push('&');
            url.push_str(args.filter.trim_start_matches(['?', '&']));
        }
        let mut req = agent.get(&url);
        if let Some(c) = &cursor {
            req = req.query("cursor", c); // percent-encoded by ureq
        }
        let mut res = req.call().map_err(|e| anyhow!("{url}: {e}"))?;
        let body = res
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_string()
            .map_err(|e| anyhow!("{url}: {e}"))?;
        let v: Value = serde_json::from_str(&body).with_context(|| format!("{url}: not JSON"))?;
        let servers = v
            .get("servers")
            .and_then(Value::as_array)
            .ok_or_else(|| anyhow!("{url}: no \"servers\""))?;
        for s in servers {
            if count == limit {
                return Ok(count);
            }
            let addr = s.get("addr").and_then(Value::as_str).unwrap_or_default();
            print(out, args.json, addr, s)?;
            count += 1;
        }
        match v.get("next").and_then(Value::as_str) {
            Some(n) if !servers.is_empty() => cursor = Some(n.to_owned()),
            _ => return Ok(count),
        }
    }
    bail!("{base}: more than {MAX_PAGES} pages")
}

//! `ogp-load flood`: a real `ogp serve` under a flood from many spoofed source
//! addresses, while a legitimate client keeps querying it.
//!
//! The flood comes from one thread of this process: each datagram carries its own source
//! address (127.a.b.c, `--sources` of them, never 127.0.x.x), so to the server it is
//! `--sources` different hosts. As root it is written whole (IPv4 and UDP headers) to a
//! raw socket, 64 datagrams per `sendmmsg`; otherwise each goes out of a UDP socket with
//! its source in an `IP_PKTINFO` control message, one `sendmsg` each (slower: the flood
//! may then fall short of `--rate`, which the output shows). The
//! datagrams are each protocol's first query as the library client sends it (OGP without
//! a challenge, A2S_INFO, the GameSpy v3 challenge request), in turn: every one of them
//! makes the server answer (a challenge), so the server's replies flood back toward the
//! spoofed addresses, where nothing reads them (the kernel drops them). Smooth (`--bursts 1`: sent as the clock allows) or in bursts of N datagrams
//! sent back to back, at `--rate` datagrams per second either way.
//!
//! The legitimate client, from 127.0.0.1, starts a complete query every `--every-ms`
//! (OGP, A2S, GameSpy v3 in turn, each with its challenge step) that never sends again:
//! one lost datagram, either way, is a lost answer. That is the measure: answers kept.
//! It asked once before the flood began, as a client that keeps watching a server has
//! (so the server knows it proved its address). Apart from it, once a second a client
//! from an address the server never saw (127.0.1.x, 127.0.2.x …) asks once: new clients
//! compete with the flood for the overall budget of answers to unproven sources.
//!
//! Every second: the server's VmHWM and VmRSS, the kernel's drop count at its sockets
//! (`/proc/net/udp`), the flood's sent count. Every loop is bounded in count and time; the
//! server is killed afterwards.

use std::collections::BTreeMap;
use std::io::IoSlice;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context as _, Result};
use nix::sys::socket::{sendmmsg, sendmsg, ControlMessage, MsgFlags, MultiHeaders, SockaddrIn};
use ogp_proto::client::{Machine, Options, QueryDriver as _, QueryError, Timing};
use ogp_proto::Protocol;
use tokio::task::JoinSet;

use crate::common;
use crate::common::memory_kb;
use crate::sources::{find_ogp, source_ip, start_server, wait_ready};

/// Options of `ogp-load flood`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Distinct spoofed source addresses (1–1,000,000).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub sources: u32,
    /// Flood datagrams per second (1–2,000,000).
    #[arg(long, default_value_t = 150_000, value_parser = clap::value_parser!(u32).range(1..=2_000_000))]
    pub rate: u32,
    /// One run per value: datagrams sent back to back per burst (1 = smooth).
    #[arg(long, default_value = "1,1000", value_delimiter = ',')]
    pub bursts: Vec<u32>,
    /// Seconds each run floods (1–600).
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub seconds: u64,
    /// Milliseconds between the legitimate client's queries (10–10,000).
    #[arg(long, default_value_t = 150, value_parser = clap::value_parser!(u64).range(10..=10_000))]
    pub every_ms: u64,
    /// Milliseconds the legitimate client waits for each reply; it never sends again.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=10_000))]
    pub timeout_ms: u64,
    /// More `ogp serve` arguments, split on spaces (for example `--threads 1` or
    /// `--recv-buffer 212992`); by default the server runs with its own defaults.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub serve_args: String,
    /// The `ogp` binary (default: next to this one).
    #[arg(long, value_name = "PATH")]
    pub ogp_bin: Option<PathBuf>,
}

/// What the flood thread did.
#[derive(Debug, Default)]
struct Flooded {
    sent: u64,
    errors: u64,
    seconds: f64,
    cpu: Option<Duration>,
}

/// The first datagram of each protocol's library query.
fn first_queries() -> Result<Vec<Vec<u8>>> {
    let now = Instant::now();
    [Protocol::Ogp, Protocol::A2s, Protocol::Gamespy3]
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let mut m = Machine::new(p, &Options::default(), 0x5eed_0000 + i as u32, now);
            m.poll_transmit(now)
                .with_context(|| format!("{} sends nothing first", p.name()))
        })
        .collect()
}

/// Datagrams per `sendmmsg` of the raw sender.
const BATCH: usize = 64;
/// Source port of every flood datagram (where the server's replies go; nothing listens
/// there, so the kernel drops them).
const FLOOD_PORT: u16 = 9;

/// How the flood leaves this process.
enum Sender {
    /// A raw socket (`IPPROTO_RAW`, root only): each datagram written whole, IPv4 and
    /// UDP headers included, `BATCH` per system call.
    Raw {
        socket: socket2::Socket,
        headers: MultiHeaders<SockaddrIn>,
        packets: Vec<Vec<u8>>,
    },
    /// Without root: a UDP socket, one `sendmsg` per datagram with its source address in
    /// an `IP_PKTINFO` control message.
    Pktinfo(UdpSocket),
}

impl Sender {
    fn new() -> Result<Self> {
        match socket2::Socket::new_raw(
            socket2::Domain::IPV4,
            socket2::Type::RAW,
            Some(socket2::Protocol::from(nix::libc::IPPROTO_RAW)),
        ) {
            Ok(socket) => Ok(Self::Raw {
                socket,
                headers: MultiHeaders::preallocate(BATCH, None),
                packets: (0..BATCH).map(|_| Vec::with_capacity(128)).collect(),
            }),
            Err(_) => Ok(Self::Pktinfo(
                UdpSocket::bind("0.0.0.0:0").context("binding the flood socket")?,
            )),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Self::Raw { .. } => "raw socket, sendmmsg",
            Self::Pktinfo(_) => "UDP socket with IP_PKTINFO, one sendmsg per datagram",
        }
    }

    /// Sends datagrams `first .. first + count` (payload and source chosen by number);
    /// returns (sent, failed).
    fn send(
        &mut self,
        dest: SocketAddrV4,
        payloads: &[Vec<u8>],
        sources: u32,
        first: u64,
        count: u64,
    ) -> (u64, u64) {
        let pick = |i: u64| {
            (
                source_ip((i % u64::from(sources)) as u32),
                payloads
                    .get((i % payloads.len().max(1) as u64) as usize)
                    .map_or(&[][..], Vec::as_slice),
            )
        };
        let (mut sent, mut failed) = (0, 0);
        match self {
            Self::Raw {
                socket,
                headers,
                packets,
            } => {
                let fd = socket.as_raw_fd();
                let to = SockaddrIn::from(dest);
                let addrs = [Some(to); BATCH];
                let mut i = first;
                while i < first + count {
                    let n = (first + count - i).min(BATCH as u64) as usize;
                    for (k, packet) in packets.iter_mut().take(n).enumerate() {
                        let (src, payload) = pick(i + k as u64);
                        ipv4_udp(packet, SocketAddrV4::new(src, FLOOD_PORT), dest, payload);
                    }
                    let iovs: Vec<[IoSlice<'_>; 1]> =
                        packets.iter().take(n).map(|p| [IoSlice::new(p)]).collect();
                    let cmsgs: [ControlMessage<'_>; 0] = [];
                    match sendmmsg(
                        fd,
                        headers,
                        &iovs,
                        addrs.get(..n).unwrap_or_default(),
                        cmsgs,
                        MsgFlags::empty(),
                    ) {
                        Ok(r) => {
                            let k = r.count() as u64;
                            sent += k;
                            failed += n as u64 - k;
                        }
                        Err(_) => failed += n as u64,
                    }
                    i += n as u64;
                }
            }
            Self::Pktinfo(socket) => {
                let fd = socket.as_raw_fd();
                let to = SockaddrIn::from(dest);
                for i in first..first + count {
                    let (src, payload) = pick(i);
                    let info = nix::libc::in_pktinfo {
                        ipi_ifindex: 0,
                        ipi_spec_dst: nix::libc::in_addr {
                            s_addr: u32::from(src).to_be(),
                        },
                        ipi_addr: nix::libc::in_addr { s_addr: 0 },
                    };
                    let cmsg = [ControlMessage::Ipv4PacketInfo(&info)];
                    match sendmsg(
                        fd,
                        &[IoSlice::new(payload)],
                        &cmsg,
                        MsgFlags::empty(),
                        Some(&to),
                    ) {
                        Ok(_) => sent += 1,
                        Err(_) => failed += 1,
                    }
                }
            }
        }
        (sent, failed)
    }
}

/// Writes an IPv4 + UDP datagram into `out`: no options, no UDP checksum (0: none, as
/// IPv4 allows); the kernel fills in the IPv4 checksum and id of a raw socket's packet.
fn ipv4_udp(out: &mut Vec<u8>, src: SocketAddrV4, dst: SocketAddrV4, payload: &[u8]) {
    let udp_len = u16::try_from(8 + payload.len()).unwrap_or(u16::MAX);
    let total = udp_len.saturating_add(20);
    out.clear();
    out.extend_from_slice(&[0x45, 0]);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0]);
    out.extend_from_slice(&src.ip().octets());
    out.extend_from_slice(&dst.ip().octets());
    out.extend_from_slice(&src.port().to_be_bytes());
    out.extend_from_slice(&dst.port().to_be_bytes());
    out.extend_from_slice(&udp_len.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(payload);
}

/// Sends the flood until `stop` (or `limit` passes): datagram `i` from source
/// `source_ip(i % sources)`, `burst` datagrams back to back, `rate` per second.
fn flood(
    server: SocketAddrV4,
    sources: u32,
    rate: u32,
    burst: u32,
    stop: &AtomicBool,
    sent_now: &AtomicU64,
    limit: Duration,
) -> Result<Flooded> {
    let cpu_path = common::this_thread_schedstat_path();
    let cpu0 = common::thread_cpu(cpu_path.as_deref());
    let mut sender = Sender::new()?;
    println!("  flood sender: {}", sender.name());
    let payloads = first_queries()?;
    let mut out = Flooded::default();
    let t0 = Instant::now();
    let burst = u64::from(burst.max(1));
    let rate = f64::from(rate.max(1));
    let mut i: u64 = 0;
    while !stop.load(Ordering::Relaxed) && t0.elapsed() < limit {
        // Datagrams due by now, in whole bursts.
        let due = (t0.elapsed().as_secs_f64() * rate) as u64;
        let due = due / burst * burst + burst;
        if i >= due {
            let next = Duration::from_secs_f64(due as f64 / rate);
            let wait = next.saturating_sub(t0.elapsed());
            std::thread::sleep(wait.min(Duration::from_millis(5)));
            continue;
        }
        // At most one burst (or 64 smooth datagrams) before looking at the clock again.
        let chunk = (due - i).min(burst.max(64));
        let (sent, failed) = sender.send(server, &payloads, sources, i, chunk);
        out.sent += sent;
        out.errors += failed;
        i += chunk;
        sent_now.store(out.sent, Ordering::Relaxed);
    }
    out.seconds = t0.elapsed().as_secs_f64();
    out.cpu = common::thread_cpu(cpu_path.as_deref())
        .zip(cpu0)
        .map(|(a, b)| a.saturating_sub(b));
    Ok(out)
}

/// Kernel drops at the sockets bound to `addr` (all `SO_REUSEPORT` sockets of the
/// server), from /proc/net/udp.
fn kernel_drops(addr: SocketAddrV4) -> u64 {
    let local = format!(
        "{:08X}:{:04X}",
        u32::from_le_bytes(addr.ip().octets()),
        addr.port()
    );
    let Ok(text) = std::fs::read_to_string("/proc/net/udp") else {
        return 0;
    };
    text.lines()
        .skip(1)
        .filter(|l| l.split_whitespace().nth(1) == Some(local.as_str()))
        .filter_map(|l| l.split_whitespace().last()?.parse::<u64>().ok())
        .sum()
}

/// The legitimate client's tally.
#[derive(Default)]
struct Legit {
    asked: u64,
    answered: u64,
    failures: BTreeMap<String, u64>,
    pings: Vec<f64>,
    /// Queries from addresses the server never saw before (one a second).
    new_asked: u64,
    new_answered: u64,
}

/// One run: a fresh server, the flood, the client, the readings.
fn one_run(args: &Args, bin: &std::path::Path, burst: u32) -> Result<bool> {
    let extra: Vec<String> = args
        .serve_args
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let (server, addr) = start_server(bin, "flood", &extra)?;
    let pid = server.child.id();
    let SocketAddr::V4(addr4) = addr else {
        anyhow::bail!("the server is not on IPv4");
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(wait_ready(addr))?;
    let (hwm0, rss0) = memory_kb(pid)?;
    let drops0 = kernel_drops(addr4);
    let cpu0 = common::process_cpu(pid);
    let mode = if burst <= 1 {
        "smooth".to_string()
    } else {
        format!("in bursts of {burst}")
    };
    println!(
        "run: {} datagrams/s {mode} from {} spoofed sources for {} s; a client from 127.0.0.1 \
         every {} ms (one try per step, {} ms each); server VmHWM {} VmRSS {} at start",
        args.rate,
        args.sources,
        args.seconds,
        args.every_ms,
        args.timeout_ms,
        common::mb(hwm0),
        common::mb(rss0)
    );

    let stop = Arc::new(AtomicBool::new(false));
    let sent_now = Arc::new(AtomicU64::new(0));
    let flooder = {
        let (stop, sent_now) = (Arc::clone(&stop), Arc::clone(&sent_now));
        let (sources, rate, limit) = (
            args.sources,
            args.rate,
            Duration::from_secs(args.seconds + 30),
        );
        std::thread::Builder::new()
            .name("flood".into())
            .spawn(move || flood(addr4, sources, rate, burst, &stop, &sent_now, limit))?
    };

    let timing = Timing::default()
        .attempt_timeout(Duration::from_millis(args.timeout_ms))
        .retries(0)
        .total_timeout(Duration::from_millis(args.timeout_ms * 3));
    let opts = Options::with_timing(timing);
    let started = Instant::now();
    let until = started + Duration::from_secs(args.seconds);
    let mut peak_hwm = hwm0;
    let legit = rt.block_on(async {
        let mut set: JoinSet<(Protocol, Result<f64, QueryError>)> = JoinSet::new();
        let mut legit = Legit::default();
        let record =
            |legit: &mut Legit, r: Result<(Protocol, Result<f64, QueryError>), _>| match r {
                Ok((_, Ok(ping))) => {
                    legit.answered += 1;
                    legit.pings.push(ping);
                }
                Ok((p, Err(e))) => {
                    *legit
                        .failures
                        .entry(format!("{}: {}", p.name(), e.kind()))
                        .or_default() += 1;
                }
                Err(_) => {
                    *legit.failures.entry("task failed".into()).or_default() += 1;
                }
            };
        let protocols = [Protocol::Ogp, Protocol::A2s, Protocol::Gamespy3];
        let mut tick = tokio::time::interval(Duration::from_millis(args.every_ms));
        let mut report = started + Duration::from_secs(1);
        let mut last_sent = 0u64;
        let mut last_drops = drops0;
        let mut n = 0usize;
        let mut newcomers: JoinSet<Option<()>> = JoinSet::new();
        let (mut fresh, mut new_asked, mut new_answered) = (0u32, 0u64, 0u64);
        while Instant::now() < until {
            tick.tick().await;
            let p = protocols[n % protocols.len()];
            n += 1;
            let query_opts = opts.clone();
            set.spawn(async move {
                let t = Instant::now();
                let r = ogp_net::client::query(addr, p, &query_opts).await;
                (p, r.map(|_| t.elapsed().as_secs_f64() * 1e3))
            });
            legit.asked += 1;
            // Every 1 s, one complete query from an address never seen before.
            if n % (1000 / args.every_ms.min(1000)).max(1) as usize == 0 {
                let ip = Ipv4Addr::new(127, 0, 1 + (fresh / 250) as u8, 1 + (fresh % 250) as u8);
                fresh += 1;
                let opts = opts.clone();
                newcomers.spawn(async move {
                    let socket = tokio::net::UdpSocket::bind(SocketAddr::new(ip.into(), 0)).await.ok()?;
                    socket.connect(addr).await.ok()?;
                    ogp_net::client::query_on(&socket, p, &opts).await.ok().map(|_| ())
                });
                new_asked += 1;
            }
            while let Some(r) = set.try_join_next() {
                record(&mut legit, r);
            }
            while let Some(r) = newcomers.try_join_next() {
                new_answered += u64::from(matches!(r, Ok(Some(()))));
            }
            if Instant::now() >= report {
                report += Duration::from_secs(1);
                let (hwm, rss) = memory_kb(pid).unwrap_or((0, 0));
                peak_hwm = peak_hwm.max(hwm);
                let sent = sent_now.load(Ordering::Relaxed);
                let drops = kernel_drops(addr4);
                println!(
                    "  {:>4.1} s: flood {:>7}/s, kernel drops at the server {:>7}/s, client {}/{} answered; server VmHWM {} VmRSS {}",
                    started.elapsed().as_secs_f64(),
                    sent - last_sent,
                    drops.saturating_sub(last_drops),
                    legit.answered,
                    legit.asked - set.len() as u64,
                    common::mb(hwm),
                    common::mb(rss)
                );
                last_sent = sent;
                last_drops = drops;
            }
        }
        stop.store(true, Ordering::Relaxed);
        // Each query ends by its own deadline (3 × --timeout-ms).
        while let Some(r) = set.join_next().await {
            record(&mut legit, r);
        }
        while let Some(r) = newcomers.join_next().await {
            new_answered += u64::from(matches!(r, Ok(Some(()))));
        }
        legit.new_asked = new_asked;
        legit.new_answered = new_answered;
        legit
    });
    stop.store(true, Ordering::Relaxed);
    let flooded = flooder
        .join()
        .map_err(|_| anyhow::anyhow!("the flood thread panicked"))??;
    let (hwm, rss) = memory_kb(pid)?;
    peak_hwm = peak_hwm.max(hwm);
    let drops = kernel_drops(addr4).saturating_sub(drops0);
    let server_cpu = common::process_cpu(pid)
        .zip(cpu0)
        .map(|(a, b)| a.saturating_sub(b));
    drop(server);

    let share = 100.0 * legit.answered as f64 / legit.asked.max(1) as f64;
    let mut pings = legit.pings.clone();
    pings.sort_by(f64::total_cmp);
    let pct = |q: f64| {
        pings
            .get(((pings.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    println!(
        "  flood: {} datagrams in {:.1} s = {:.0}/s ({} send errors); flood thread CPU {}",
        flooded.sent,
        flooded.seconds,
        flooded.sent as f64 / flooded.seconds.max(1e-6),
        flooded.errors,
        flooded
            .cpu
            .map_or("?".into(), |c| format!("{:.2} s", c.as_secs_f64()))
    );
    println!(
        "  server: kernel drops {drops} ({:.2}% of the flood); CPU {} ({} cores); VmHWM {} (target <= 20 MB), VmRSS {} at the end",
        100.0 * drops as f64 / flooded.sent.max(1) as f64,
        server_cpu.map_or("?".into(), |c| format!("{:.2} s", c.as_secs_f64())),
        server_cpu.map_or("?".into(), |c| format!("{:.2}", c.as_secs_f64() / flooded.seconds.max(1e-6))),
        common::mb(peak_hwm),
        common::mb(rss)
    );
    println!(
        "  client: {}/{} answered = {share:.2}% (target >= 99%); round trip p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        legit.answered,
        legit.asked,
        pct(0.5),
        pct(0.99),
        pings.last().copied().unwrap_or(f64::NAN)
    );
    for (why, count) in &legit.failures {
        println!("    {count} × {why}");
    }
    println!(
        "  new clients (a never-seen address each second, one try per step): {}/{} answered",
        legit.new_answered, legit.new_asked
    );
    ensure!(flooded.sent > 0, "the flood sent nothing");
    Ok(share >= 99.0 && peak_hwm <= 20 * 1024)
}

/// `ogp-load flood`.
pub fn run(args: &Args) -> Result<()> {
    let bin = find_ogp(args.ogp_bin.as_deref())?;
    common::print_command(
        "flood",
        &format!(
            "--sources {} --rate {} --bursts {} --seconds {} --every-ms {} --timeout-ms {}{}",
            args.sources,
            args.rate,
            args.bursts
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(","),
            args.seconds,
            args.every_ms,
            args.timeout_ms,
            if args.serve_args.is_empty() {
                String::new()
            } else {
                format!(" --serve-args '{}'", args.serve_args)
            }
        ),
    );
    common::print_load("before");
    let mut verdicts = Vec::new();
    for &b in &args.bursts {
        let ok = one_run(args, &bin, b)?;
        verdicts.push((b, ok));
    }
    common::print_load("after");
    for (b, ok) in verdicts {
        println!(
            "{}: {}",
            if b <= 1 {
                "smooth".to_string()
            } else {
                format!("bursts of {b}")
            },
            if ok {
                "targets met (client >= 99%, VmHWM <= 20 MB)"
            } else {
                "targets NOT met"
            }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_protocol_has_a_first_query() {
        let q = first_queries().unwrap();
        assert_eq!(q.len(), 3);
        assert!(q.iter().all(|d| !d.is_empty() && d.len() < 64));
    }

    #[test]
    fn local_address_is_written_as_proc_net_udp_does() {
        // 127.0.0.1:8080 is "0100007F:1F90" there.
        let a = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 8080);
        let local = format!(
            "{:08X}:{:04X}",
            u32::from_le_bytes(a.ip().octets()),
            a.port()
        );
        assert_eq!(local, "0100007F:1F90");
    }
}

//! The client over tokio: `query(addr, protocol, &options)` for any protocol.
//!
//! It drives a sans-IO [`Machine`] on a socket connected to the server, so only
//! datagrams from the queried address and port are seen (the kernel filters the rest),
//! and an ICMP port-unreachable comes back at once as [`QueryError::Refused`]. Receive
//! buffers are 64 KiB: an unsplit answer may arrive IP-fragmented.
//!
//! A stream machine ([`Transport::Stream`], Minecraft) is driven over a [`TcpStream`]
//! instead: connected (a refused connection comes back at once as
//! [`QueryError::Refused`]), then every read is handed to the machine as it comes and
//! every chunk it emits written, until it has a result. The connect, read and total
//! timeouts are the machine's own ([`QueryDriver::poll_timeout`]): this code only
//! sleeps until it says. A machine that asks for TLS ([`QueryDriver::tls`]: HTTPS) gets
//! it here, its handshake within the connect timeout (`crate::tls`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Instant;

use ogp_proto::client::{
    Answer, Machine, Options, QueryDriver, QueryError, StreamEvent, Transport,
};
use ogp_proto::Protocol;
use tokio::net::{TcpStream, UdpSocket};

use crate::tls::Conn;

/// Resolves `host:port` (names, IPv4, `[IPv6]:port`) to its first address.
pub async fn resolve(target: &str) -> Result<SocketAddr, QueryError> {
    if let Ok(a) = target.parse::<SocketAddr>() {
        return Ok(a);
    }
    let unresolved = || QueryError::Resolve {
        target: target.to_string(),
    };
    tokio::net::lookup_host(target)
        .await
        .map_err(|_| unresolved())?
        .next()
        .ok_or_else(unresolved)
}

fn unspecified_for(addr: &SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(_) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
        IpAddr::V6(_) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
    }
}

/// Queries one server in `protocol`.
pub async fn query(
    addr: SocketAddr,
    protocol: Protocol,
    opts: &Options,
) -> Result<Answer, QueryError> {
    query_traced(addr, protocol, opts, &mut |_| {}).await
}

/// A datagram of a query as it crossed the wire, for [`query_traced`].
#[derive(Debug, Clone, Copy)]
pub enum Wire<'a> {
    /// Sent to the server.
    Sent(&'a [u8]),
    /// Received from it.
    Received(&'a [u8]),
}

/// [`query`], showing `tap` every datagram sent and received (for hex dumps).
pub async fn query_traced(
    addr: SocketAddr,
    protocol: Protocol,
    opts: &Options,
    tap: &mut (dyn FnMut(Wire<'_>) + Send),
) -> Result<Answer, QueryError> {
    let m = Machine::new(protocol, opts, crate::random_u32(), Instant::now());
    if m.transport() == Transport::Stream {
        let mut answer = drive_stream_traced(addr, m, tap).await?;
        answer.addr = Some(addr);
        return Ok(answer);
    }
    let socket = connect(addr).await?;
    finish(&socket, protocol, drive_traced(&socket, m, tap).await)
}

/// Queries the server `socket` is connected to, in `protocol`.
pub async fn query_on(
    socket: &UdpSocket,
    protocol: Protocol,
    opts: &Options,
) -> Result<Answer, QueryError> {
    let m = Machine::new(protocol, opts, crate::random_u32(), Instant::now());
    finish(socket, protocol, drive(socket, m).await)
}

/// The answer with the address it came from, or the error with the protocol named.
fn finish(
    socket: &UdpSocket,
    protocol: Protocol,
    r: Result<Answer, QueryError>,
) -> Result<Answer, QueryError> {
    let mut answer = r.map_err(|e| match e {
        QueryError::Refused { protocol: None } => QueryError::Refused {
            protocol: Some(protocol),
        },
        e => e,
    })?;
    answer.addr = socket.peer_addr().ok();
    Ok(answer)
}

/// Runs any protocol's query machine on a connected socket until it finishes.
pub async fn drive<M: QueryDriver>(
    socket: &UdpSocket,
    m: M,
) -> Result<Answer<M::Details>, QueryError> {
    drive_traced(socket, m, &mut |_| {}).await
}

/// [`drive`], showing `tap` every datagram sent and received.
pub async fn drive_traced<M: QueryDriver>(
    socket: &UdpSocket,
    mut m: M,
    tap: &mut (dyn FnMut(Wire<'_>) + Send),
) -> Result<Answer<M::Details>, QueryError> {
    let mut buf = vec![0u8; 65536];
    let io = |e: std::io::Error| QueryError::socket(&e);
    loop {
        while let Some(d) = m.poll_transmit(Instant::now()) {
            tap(Wire::Sent(&d));
            socket.send(&d).await.map_err(io)?;
        }
        if let Some(r) = m.take_result() {
            return r;
        }
        let Some(deadline) = m.poll_timeout() else {
            // A machine that neither finished nor asks for time: never loop forever.
            return Err(QueryError::Socket {
                message: "the query machine stopped without a result".into(),
            });
        };
        tokio::select! {
            r = socket.recv(&mut buf) => {
                let n = r.map_err(io)?;
                let d = buf.get(..n).unwrap_or_default();
                tap(Wire::Received(d));
                m.handle_datagram(Instant::now(), d);
            }
            _ = tokio::time::sleep_until(deadline.into()) => m.handle_timeout(Instant::now()),
        }
    }
}

/// A UDP socket connected to `addr`, bound to the unspecified address of its family.
pub async fn connect(addr: SocketAddr) -> Result<UdpSocket, QueryError> {
    let io = |e: std::io::Error| QueryError::socket(&e);
    let socket = UdpSocket::bind(unspecified_for(&addr)).await.map_err(io)?;
    socket.connect(addr).await.map_err(io)?;
    Ok(socket)
}

/// Runs a stream machine ([`Transport::Stream`]) over a TCP connection to `addr` until
/// it finishes.
pub async fn drive_stream<M: QueryDriver>(
    addr: SocketAddr,
    m: M,
) -> Result<Answer<M::Details>, QueryError> {
    drive_stream_traced(addr, m, &mut |_| {}).await
}

/// What the stream loop waits for next.
enum Step {
    Readable(std::io::Result<()>),
    Timer,
}

/// The most bytes read at a time.
const MAX_READ: usize = 16 * 1024;

/// [`drive_stream`], showing `tap` every chunk written and read.
pub async fn drive_stream_traced<M: QueryDriver>(
    addr: SocketAddr,
    m: M,
    tap: &mut (dyn FnMut(Wire<'_>) + Send),
) -> Result<Answer<M::Details>, QueryError> {
    drive_stream_with(addr, m, tap, 16 * 1024, None).await
}

/// [`drive_stream_traced`] reading at most `read_buf` bytes at a time (the scanner
/// keeps thousands of connections, each with its buffer), and, with a `lease` of a
/// byte budget, holding in the machine only what the lease covers
/// ([`QueryDriver::stream_buffer`]): bytes read wait in `read_buf` until the budget
/// has room (within the machine's timers), and no more is read meanwhile.
pub(crate) async fn drive_stream_with<M: QueryDriver>(
    addr: SocketAddr,
    mut m: M,
    tap: &mut (dyn FnMut(Wire<'_>) + Send),
    read_buf: usize,
    mut lease: Option<crate::budget::Lease>,
) -> Result<Answer<M::Details>, QueryError> {
    let stopped = || QueryError::Socket {
        message: "the query machine stopped without a result".into(),
    };
    // Connect (and, when the machine asks, the TLS handshake), within the machine's
    // connect timeout.
    let tls = m.tls();
    let mut stream = loop {
        if let Some(r) = m.take_result() {
            return r;
        }
        let deadline = m.poll_timeout().ok_or_else(stopped)?;
        let connect = async {
            let s = TcpStream::connect(addr).await?;
            let _ = s.set_nodelay(true);
            Conn::handshake(s, tls.clone()).await
        };
        tokio::select! {
            r = connect => match r {
                Ok(s) => {
                    let peer = s.tcp().peer_addr().unwrap_or(addr);
                    m.handle_stream(Instant::now(), StreamEvent::Connected(peer));
                    break s;
                }
                Err(e) => {
                    m.handle_stream(Instant::now(), StreamEvent::Failed(&e));
                    return m.take_result().unwrap_or_else(|| Err(QueryError::socket(&e)));
                }
            },
            _ = tokio::time::sleep_until(deadline.into()) => m.handle_timeout(Instant::now()),
        }
    };
    // Reads go into a buffer on the stack, never held across a wait: thousands of
    // connections waiting hold no read buffer each.
    let read_buf = read_buf.clamp(1, MAX_READ);
    let mut out = Vec::with_capacity(64);
    loop {
        while m.poll_transmit_into(Instant::now(), &mut out) {
            // A machine that has ended asks for no write (the stream core holds them
            // back); one that still did would have no timer left to bound it: its
            // result stands, the write is dropped.
            let Some(deadline) = m.poll_timeout() else {
                break;
            };
            tap(Wire::Sent(&out));
            match tokio::time::timeout_at(deadline.into(), stream.write_all(&out)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => m.handle_stream(Instant::now(), StreamEvent::Failed(&e)),
                Err(_) => m.handle_timeout(Instant::now()),
            }
        }
        if let Some(r) = m.take_result() {
            // Dropping the stream closes it.
            return r;
        }
        if m.close_due() {
            return Err(stopped());
        }
        let deadline = m.poll_timeout().ok_or_else(stopped)?;
        // With a budget, room first for what the next read may make the machine hold
        // (nothing is read meanwhile: the kernel's window pushes back on the server),
        // within the machine's timers.
        if let Some(lease) = lease.as_mut() {
            let want = m.stream_buffer(read_buf);
            if !lease.covers(want) {
                tokio::select! {
                    () = lease.grow_to(want) => {}
                    _ = tokio::time::sleep_until(deadline.into()) => m.handle_timeout(Instant::now()),
                }
                continue;
            }
        }
        let step = tokio::select! {
            r = stream.readable() => Step::Readable(r),
            _ = tokio::time::sleep_until(deadline.into()) => Step::Timer,
        };
        let now = Instant::now();
        let e = match step {
            Step::Readable(Ok(())) => {
                let mut buf = [0u8; MAX_READ];
                let b = buf.get_mut(..read_buf).unwrap_or_default();
                match stream.try_read(b) {
                    Ok(0) => {
                        m.handle_stream(now, StreamEvent::Closed);
                        // Nothing more can come: a machine must decide now.
                        return m.take_result().unwrap_or_else(|| Err(stopped()));
                    }
                    Ok(n) => {
                        let d = b.get(..n).unwrap_or_default();
                        tap(Wire::Received(d));
                        m.handle_stream(now, StreamEvent::Received(d));
                        if let Some(lease) = lease.as_mut() {
                            lease.shrink_to(m.stream_buffer(0));
                        }
                        continue;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                    Err(e) => e,
                }
            }
            Step::Readable(Err(e)) => e,
            Step::Timer => {
                m.handle_timeout(now);
                continue;
            }
        };
        m.handle_stream(now, StreamEvent::Failed(&e));
    }
}

/// Where the Minecraft server `host` (a name without a port) is, as the game client
/// finds it: its `_minecraft._tcp.HOST` SRV record when it has one
/// ([`ogp_proto::minecraft::srv`] decides which), else `host:25565`. No look-up for an
/// IP address. `nameserver`: the DNS server to ask (tests point it at a loopback one);
/// `None` for the system's (`/etc/resolv.conf`). The look-up takes at most `limit`
/// (one attempt, then the fallback); any failure falls back to 25565.
pub async fn minecraft_srv(
    host: &str,
    nameserver: Option<SocketAddr>,
    limit: std::time::Duration,
) -> (String, u16) {
    use hickory_resolver::config::{NameServerConfigGroup, ResolverConfig};
    use hickory_resolver::name_server::TokioConnectionProvider;
    use hickory_resolver::Resolver;
    use ogp_proto::minecraft::srv;

    let fallback = srv::pick(host, &[]);
    let Some(name) = srv::srv_name(host) else {
        return fallback;
    };
    let builder = match nameserver {
        Some(ns) => Resolver::builder_with_config(
            ResolverConfig::from_parts(
                None,
                vec![],
                NameServerConfigGroup::from_ips_clear(&[ns.ip()], ns.port(), true),
            ),
            TokioConnectionProvider::default(),
        ),
        None => match Resolver::builder_tokio() {
            Ok(b) => b,
            Err(_) => return fallback,
        },
    };
    let mut builder = builder;
    builder.options_mut().timeout = limit;
    builder.options_mut().attempts = 1;
    let resolver = builder.build();
    let lookup = match tokio::time::timeout(limit, resolver.srv_lookup(name)).await {
        Ok(Ok(l)) => l,
        _ => return fallback,
    };
    // At most a few dozen records are looked at.
    let records: Vec<srv::SrvRecord> = lookup
        .iter()
        .take(64)
        .map(|r| srv::SrvRecord {
            priority: r.priority(),
            weight: r.weight(),
            port: r.port(),
            target: r.target().to_utf8(),
        })
        .collect();
    srv::pick(host, &records)
}

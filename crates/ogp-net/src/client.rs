//! The OGP client over tokio: `query(addr, options)`.
//!
//! It drives the sans-IO [`QueryMachine`] on a socket connected to the server, so only
//! datagrams from the queried address and port are seen (the kernel filters the rest).
//! Receive buffers are 64 KiB: an unsplit answer may arrive IP-fragmented.

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Instant;

use ogp_proto::driver::QueryDriver;
use ogp_proto::ogp::client::{QueryError, QueryMachine, QueryOptions, QueryOutcome};
use tokio::net::UdpSocket;

/// Why a query failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The host name did not resolve.
    Resolve(String),
    /// The server's host refused (ICMP port unreachable): nothing listens there.
    Refused,
    /// A local socket error.
    Io(io::Error),
    /// The protocol exchange failed (timeout, server error, malformed answer…).
    Query(QueryError),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Resolve(h) => write!(f, "cannot resolve {h}"),
            Self::Refused => f.write_str("connection refused (nothing listens on that port)"),
            Self::Io(e) => write!(f, "socket error: {e}"),
            Self::Query(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<io::Error> for ClientError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::ConnectionRefused {
            Self::Refused
        } else {
            Self::Io(e)
        }
    }
}

/// Resolves `host:port` (names, IPv4, `[IPv6]:port`) to its first address.
pub async fn resolve(target: &str) -> Result<SocketAddr, ClientError> {
    if let Ok(a) = target.parse::<SocketAddr>() {
        return Ok(a);
    }
    tokio::net::lookup_host(target)
        .await
        .map_err(|_| ClientError::Resolve(target.to_string()))?
        .next()
        .ok_or_else(|| ClientError::Resolve(target.to_string()))
}

fn unspecified_for(addr: &SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(_) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
        IpAddr::V6(_) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
    }
}

/// Queries one OGP server.
pub async fn query(addr: SocketAddr, opts: QueryOptions) -> Result<QueryOutcome, ClientError> {
    let socket = connect(addr).await?;
    query_on(&socket, opts).await
}

/// Queries the server `socket` is connected to.
pub async fn query_on(socket: &UdpSocket, opts: QueryOptions) -> Result<QueryOutcome, ClientError> {
    let m = QueryMachine::new(opts, crate::random_u32(), Instant::now());
    match drive(socket, m).await? {
        Some(r) => r.map_err(ClientError::Query),
        None => Err(ClientError::Query(QueryError::Timeout { attempts: 0 })),
    }
}

/// Runs any protocol's query machine on a connected socket until it finishes. Returns
/// `None` if the machine stopped asking for time without producing a result (a machine
/// bug; never loops forever).
pub async fn drive<M: QueryDriver>(
    socket: &UdpSocket,
    mut m: M,
) -> Result<Option<M::Output>, ClientError> {
    let mut buf = vec![0u8; 65536];
    loop {
        while let Some(d) = m.poll_transmit(Instant::now()) {
            socket.send(&d).await?;
        }
        if let Some(r) = m.take_result() {
            return Ok(Some(r));
        }
        let Some(deadline) = m.poll_timeout() else {
            return Ok(None);
        };
        tokio::select! {
            r = socket.recv(&mut buf) => {
                let n = r?;
                m.handle_datagram(Instant::now(), buf.get(..n).unwrap_or_default());
            }
            _ = tokio::time::sleep_until(deadline.into()) => m.handle_timeout(Instant::now()),
        }
    }
}

/// A UDP socket connected to `addr`, bound to the unspecified address of its family.
pub async fn connect(addr: SocketAddr) -> Result<UdpSocket, ClientError> {
    let socket = UdpSocket::bind(unspecified_for(&addr)).await?;
    socket.connect(addr).await?;
    Ok(socket)
}

/// Queries one server speaking the OGP v0.02 draft (on its own port).
pub async fn query_draft(
    addr: SocketAddr,
    opts: ogp_proto::ogp_draft::client::QueryOptions,
) -> Result<QueryOutcome, ClientError> {
    let socket = connect(addr).await?;
    let m =
        ogp_proto::ogp_draft::client::QueryMachine::new(opts, crate::random_u32(), Instant::now());
    match drive(&socket, m).await? {
        Some(r) => r.map_err(ClientError::Query),
        None => Err(ClientError::Query(QueryError::Timeout { attempts: 0 })),
    }
}

/// Queries one Valve A2S server (INFO, PLAYER and RULES, as the options say).
pub async fn query_a2s(
    addr: SocketAddr,
    opts: ogp_proto::a2s::client::QueryOptions,
) -> Result<ogp_proto::a2s::client::QueryOutcome, A2sClientError> {
    let socket = connect(addr).await.map_err(A2sClientError::Client)?;
    let m = ogp_proto::a2s::client::QueryMachine::new(opts, Instant::now());
    match drive(&socket, m).await.map_err(A2sClientError::Client)? {
        Some(r) => r.map_err(A2sClientError::Query),
        None => Err(A2sClientError::Query(
            ogp_proto::a2s::client::QueryError::NothingToAsk,
        )),
    }
}

/// Why an A2S query failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum A2sClientError {
    /// Resolution or socket trouble.
    Client(ClientError),
    /// The A2S exchange failed.
    Query(ogp_proto::a2s::client::QueryError),
}

impl fmt::Display for A2sClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Client(e) => e.fmt(f),
            Self::Query(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for A2sClientError {}

/// Queries one GQP server.
pub async fn query_gqp(
    addr: SocketAddr,
    opts: ogp_proto::gqp::client::QueryOptions,
) -> Result<ogp_proto::gqp::client::QueryOutcome, GqpClientError> {
    let socket = connect(addr).await.map_err(GqpClientError::Client)?;
    let m = ogp_proto::gqp::client::QueryMachine::new(opts, Instant::now());
    match drive(&socket, m).await.map_err(GqpClientError::Client)? {
        Some(r) => r.map_err(GqpClientError::Query),
        None => Err(GqpClientError::Query(
            ogp_proto::gqp::client::QueryError::Timeout { attempts: 0 },
        )),
    }
}

/// Why a GQP query failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum GqpClientError {
    /// Resolution or socket trouble.
    Client(ClientError),
    /// The GQP exchange failed.
    Query(ogp_proto::gqp::client::QueryError),
}

impl fmt::Display for GqpClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Client(e) => e.fmt(f),
            Self::Query(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for GqpClientError {}

/// Queries one GameSpy v3 server (sub-protocol B by default; the `09` handshake as the
/// options say), with a random session id.
pub async fn query_gamespy3(
    addr: SocketAddr,
    opts: ogp_proto::gamespy3::client::QueryOptions,
) -> Result<ogp_proto::gamespy3::client::QueryOutcome, Gs3ClientError> {
    let socket = connect(addr).await.map_err(Gs3ClientError::Client)?;
    let m =
        ogp_proto::gamespy3::client::QueryMachine::new(opts, crate::random_u32(), Instant::now());
    match drive(&socket, m).await.map_err(Gs3ClientError::Client)? {
        Some(r) => r.map_err(Gs3ClientError::Query),
        None => Err(Gs3ClientError::Query(
            ogp_proto::gamespy3::client::QueryError::Timeout {
                step: ogp_proto::gamespy3::client::Step::Info,
                attempts: 0,
            },
        )),
    }
}

/// Why a GameSpy v3 query failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Gs3ClientError {
    /// Resolution or socket trouble.
    Client(ClientError),
    /// The GameSpy v3 exchange failed.
    Query(ogp_proto::gamespy3::client::QueryError),
}

impl fmt::Display for Gs3ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Client(e) => e.fmt(f),
            Self::Query(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Gs3ClientError {}

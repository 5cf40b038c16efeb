//! `ogp query`: query one server and print its status.

use std::fmt::Write as _;
use std::time::Duration;

use anyhow::Result;
use ogp_net::client::{self, ClientError};
use ogp_proto::ogp::client::{QueryOptions, QueryOutcome, WireEvent};

/// Options of `ogp query`.
pub struct QueryArgs {
    /// HOST:PORT.
    pub target: String,
    /// Per-attempt timeout.
    pub timeout: Duration,
    /// Retries.
    pub retries: u32,
    /// Ask for split answers of this size.
    pub split: Option<u16>,
}

/// The query options for the arguments: the total deadline is the sum of the attempt
/// timeouts with their backoff.
pub fn options(args: &QueryArgs) -> QueryOptions {
    let mut o = QueryOptions {
        attempt_timeout: args.timeout,
        retries: args.retries,
        max_bytes_per_packet: args.split,
        ..QueryOptions::default()
    };
    let mut total = Duration::ZERO;
    let mut t = args.timeout;
    for _ in 0..=args.retries.min(64) {
        total += t;
        t = t * o.backoff_percent / 100;
    }
    o.total_timeout = total;
    o
}

/// Resolves and queries.
pub async fn run(args: &QueryArgs) -> Result<(std::net::SocketAddr, QueryOutcome), ClientError> {
    let addr = client::resolve(&args.target).await?;
    let outcome = client::query(addr, options(args)).await?;
    Ok((addr, outcome))
}

/// A one-line summary of what happened on the wire.
pub fn wire_summary(o: &QueryOutcome) -> String {
    let mut s = String::new();
    for e in &o.events {
        let part = match e {
            WireEvent::Sent {
                bytes,
                challenge,
                request_id,
            } => {
                format!("→ query {bytes} B (challenge {challenge:#010x}, request id {request_id})")
            }
            WireEvent::Challenge { bytes, challenge } => {
                format!("← error 3 {bytes} B: challenge {challenge:#010x}")
            }
            WireEvent::Fragment {
                bytes,
                number,
                count,
            } => format!("← split packet {}/{count} {bytes} B", number + 1),
            WireEvent::Answer { bytes } => format!("← answer {bytes} B"),
            WireEvent::Dropped { bytes, why } => format!("← dropped {bytes} B ({why})"),
            _ => continue,
        };
        let _ = writeln!(s, "  {part}");
    }
    s
}

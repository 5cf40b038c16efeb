//! `ogp query`: query one server and print its status.

use std::fmt::Write as _;
use std::time::Duration;

use anyhow::Result;
use ogp_net::client::{self, ClientError};
use ogp_proto::gqp;
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
                format!("← {bytes} B: new challenge {challenge:#010x}")
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

/// Resolves and queries over the OGP v0.02 draft.
pub async fn run_draft(
    args: &QueryArgs,
) -> Result<(std::net::SocketAddr, QueryOutcome), ClientError> {
    let base = options(args);
    let opts = ogp_proto::ogp_draft::client::QueryOptions {
        attempt_timeout: base.attempt_timeout,
        retries: base.retries,
        total_timeout: base.total_timeout,
        max_bytes_per_packet: args.split.map(|m| i16::try_from(m).unwrap_or(i16::MAX)),
        ..Default::default()
    };
    let addr = client::resolve(&args.target).await?;
    let outcome = client::query_draft(addr, opts).await?;
    Ok((addr, outcome))
}

/// Resolves and queries over Valve A2S (INFO, PLAYER, RULES).
pub async fn run_a2s(
    args: &QueryArgs,
) -> Result<(std::net::SocketAddr, ogp_proto::a2s::client::QueryOutcome), String> {
    let base = options(args);
    let opts = ogp_proto::a2s::client::QueryOptions {
        attempt_timeout: base.attempt_timeout,
        retries: base.retries,
        // three steps, each with its retries
        total_timeout: base.total_timeout * 3,
        ..Default::default()
    };
    let addr = client::resolve(&args.target)
        .await
        .map_err(|e| e.to_string())?;
    let o = client::query_a2s(addr, opts)
        .await
        .map_err(|e| e.to_string())?;
    Ok((addr, o))
}

/// A summary of an A2S exchange.
pub fn a2s_wire_summary(o: &ogp_proto::a2s::client::QueryOutcome) -> String {
    use ogp_proto::a2s::client::WireEvent;
    let mut s = String::new();
    for e in &o.events {
        let line = match e {
            WireEvent::Sent {
                step,
                bytes,
                challenge,
            } => match challenge {
                Some(c) => format!("→ {step:?} {bytes} B (challenge {c:#010x})"),
                None => format!("→ {step:?} {bytes} B"),
            },
            WireEvent::Challenge { challenge } => format!("← challenge {challenge:#010x}"),
            WireEvent::Fragment { bytes, id } => format!("← split fragment {bytes} B (id {id:#x})"),
            WireEvent::Reply {
                step,
                bytes,
                datagrams,
            } => {
                format!("← {step:?} reply {bytes} B in {datagrams} datagram(s)")
            }
            WireEvent::Skipped { step } => format!("   {step:?}: no reply, skipped"),
            WireEvent::Dropped { bytes, why } => format!("← dropped {bytes} B ({why})"),
            other => format!("{other:?}"),
        };
        let _ = writeln!(s, "  {line}");
    }
    s
}

/// GQP-specific arguments of `ogp query`.
#[derive(Debug, Default)]
pub struct GqpArgs {
    /// Raw commands, `;`-separated.
    pub command: Option<String>,
    /// User for protected commands.
    pub user: Option<String>,
}

/// GQP query options for the arguments.
pub fn gqp_options(args: &QueryArgs, gqp: &GqpArgs) -> Result<gqp::client::QueryOptions, String> {
    let base = options(args);
    let mut o = gqp::client::QueryOptions {
        attempt_timeout: base.attempt_timeout,
        retries: base.retries,
        total_timeout: base.total_timeout,
        ..gqp::client::QueryOptions::default()
    };
    if let Some(c) = &gqp.command {
        let commands = gqp::Command::parse_lines(c);
        if commands.is_empty() {
            return Err(format!("no command in {c:?}"));
        }
        o.mode = gqp::client::QueryMode::Raw(commands);
    }
    if let Some(user) = &gqp.user {
        let password = std::env::var("OGP_GQP_PASSWORD")
            .map_err(|_| "--user needs the password in OGP_GQP_PASSWORD".to_string())?;
        o.credentials = Some(gqp::client::Credentials {
            user: user.as_str().into(),
            password: password.into(),
        });
    }
    Ok(o)
}

/// Resolves and queries over GQP.
pub async fn run_gqp(
    args: &QueryArgs,
    gqp: &GqpArgs,
) -> Result<(std::net::SocketAddr, gqp::client::QueryOutcome), String> {
    let opts = gqp_options(args, gqp)?;
    let addr = client::resolve(&args.target)
        .await
        .map_err(|e| e.to_string())?;
    let o = client::query_gqp(addr, opts)
        .await
        .map_err(|e| e.to_string())?;
    Ok((addr, o))
}

/// A summary of a GQP exchange.
pub fn gqp_wire_summary(o: &gqp::client::QueryOutcome) -> String {
    let mut s = String::new();
    use gqp::client::{Step, WireEvent};
    for e in &o.events {
        let line = match e {
            WireEvent::Sent { bytes, step } => {
                let what = match step {
                    Step::Probe => "token request",
                    Step::Login => "login",
                    Step::Main => "query",
                };
                format!("→ {what} {bytes} B")
            }
            WireEvent::Token { token } => format!("← token {token} (address proof)"),
            WireEvent::Reply { bytes, last } => {
                format!(
                    "← reply {bytes} B{}",
                    if *last { "" } else { " (more blocks follow)" }
                )
            }
            WireEvent::Dropped { bytes, why } => format!("← dropped {bytes} B ({why})"),
            other => format!("{other:?}"),
        };
        let _ = writeln!(s, "  {line}");
    }
    s
}

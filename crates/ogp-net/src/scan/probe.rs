//! One protocol's query of one address behind one type: the scanner drives every
//! protocol's sans-IO machine through [`Machine`], and reads every outcome as a
//! [`Finished`] status or a [`ScanError`]. No I/O and no panics here.

use std::time::Instant;

use ogp_proto::driver::QueryDriver;
use ogp_proto::Status;

use super::{Protocol, ScanConfig, ScanError};

/// A successful query, whatever the protocol.
pub(crate) struct Finished {
    pub status: Status,
    pub ping_ms: f64,
    pub warnings: Vec<String>,
    pub datagrams: usize,
    pub bytes: Option<usize>,
}

/// Any protocol's client machine.
pub(crate) enum Machine {
    Ogp(Box<ogp_proto::ogp::client::QueryMachine>),
    A2s(Box<ogp_proto::a2s::client::QueryMachine>),
    Gqp(Box<ogp_proto::gqp::client::QueryMachine>),
    OgpDraft(Box<ogp_proto::ogp_draft::client::QueryMachine>),
    Gamespy3(Box<ogp_proto::gamespy3::client::QueryMachine>),
}

macro_rules! each {
    ($self:expr, $m:ident => $e:expr) => {
        match $self {
            Machine::Ogp($m) => $e,
            Machine::A2s($m) => $e,
            Machine::Gqp($m) => $e,
            Machine::OgpDraft($m) => $e,
            Machine::Gamespy3($m) => $e,
        }
    };
}

fn query_error(protocol: Protocol, timeout: bool, message: String) -> ScanError {
    if timeout {
        ScanError::Timeout
    } else {
        ScanError::Protocol { protocol, message }
    }
}

impl Machine {
    /// A query of `protocol` starting at `now` (`Auto` is not a protocol of its own).
    pub(crate) fn new(
        protocol: Protocol,
        cfg: &ScanConfig,
        now: Instant,
    ) -> Result<Self, ScanError> {
        let (attempt_timeout, retries, total_timeout) =
            (cfg.attempt_timeout, cfg.retries, cfg.deadline);
        Ok(match protocol {
            Protocol::Ogp => {
                let opts = ogp_proto::ogp::client::QueryOptions {
                    attempt_timeout,
                    retries,
                    total_timeout,
                    ..Default::default()
                };
                Self::Ogp(Box::new(ogp_proto::ogp::client::QueryMachine::new(
                    opts,
                    crate::random_u32(),
                    now,
                )))
            }
            Protocol::A2s => {
                let opts = ogp_proto::a2s::client::QueryOptions {
                    attempt_timeout,
                    retries,
                    total_timeout,
                    ..Default::default()
                };
                Self::A2s(Box::new(ogp_proto::a2s::client::QueryMachine::new(
                    opts, now,
                )))
            }
            Protocol::Gqp => {
                let opts = ogp_proto::gqp::client::QueryOptions {
                    attempt_timeout,
                    retries,
                    total_timeout,
                    ..Default::default()
                };
                Self::Gqp(Box::new(ogp_proto::gqp::client::QueryMachine::new(
                    opts, now,
                )))
            }
            Protocol::OgpDraft => {
                let opts = ogp_proto::ogp_draft::client::QueryOptions {
                    attempt_timeout,
                    retries,
                    total_timeout,
                    ..Default::default()
                };
                Self::OgpDraft(Box::new(ogp_proto::ogp_draft::client::QueryMachine::new(
                    opts,
                    crate::random_u32(),
                    now,
                )))
            }
            Protocol::Gamespy3 => {
                let opts = ogp_proto::gamespy3::client::QueryOptions {
                    attempt_timeout,
                    retries,
                    total_timeout,
                    ..Default::default()
                };
                Self::Gamespy3(Box::new(ogp_proto::gamespy3::client::QueryMachine::new(
                    opts,
                    crate::random_u32(),
                    now,
                )))
            }
            Protocol::Auto => return Err(ScanError::Unsupported(protocol)),
        })
    }

    pub(crate) fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        each!(self, m => m.poll_transmit(now))
    }

    pub(crate) fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        each!(self, m => m.handle_datagram(now, datagram))
    }

    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        each!(self, m => QueryDriver::poll_timeout(m.as_ref()))
    }

    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        each!(self, m => m.handle_timeout(now))
    }

    /// The outcome, once.
    pub(crate) fn take_result(&mut self) -> Option<Result<Finished, ScanError>> {
        Some(match self {
            Self::Ogp(m) => match m.take_result()? {
                Ok(o) => Ok(Finished {
                    status: o.status,
                    ping_ms: o.ping_ms,
                    warnings: o.warnings.iter().map(ToString::to_string).collect(),
                    datagrams: o.answer_datagrams,
                    bytes: Some(o.answer_bytes),
                }),
                Err(e) => Err(query_error(
                    Protocol::Ogp,
                    matches!(e, ogp_proto::ogp::client::QueryError::Timeout { .. }),
                    e.to_string(),
                )),
            },
            Self::OgpDraft(m) => match m.take_result()? {
                Ok(o) => Ok(Finished {
                    status: o.status,
                    ping_ms: o.ping_ms,
                    warnings: o.warnings.iter().map(ToString::to_string).collect(),
                    datagrams: o.answer_datagrams,
                    bytes: Some(o.answer_bytes),
                }),
                Err(e) => Err(query_error(
                    Protocol::OgpDraft,
                    matches!(e, ogp_proto::ogp::client::QueryError::Timeout { .. }),
                    e.to_string(),
                )),
            },
            Self::A2s(m) => match m.take_result()? {
                Ok(o) => Ok(Finished {
                    status: o.status,
                    ping_ms: o.ping_ms,
                    warnings: o
                        .warnings
                        .iter()
                        .map(ToString::to_string)
                        .chain(o.missing.iter().map(|s| format!("no {s} reply")))
                        .collect(),
                    datagrams: o.reply_datagrams,
                    bytes: None,
                }),
                Err(e) => Err(query_error(
                    Protocol::A2s,
                    matches!(e, ogp_proto::a2s::client::QueryError::Timeout { .. }),
                    e.to_string(),
                )),
            },
            Self::Gamespy3(m) => match m.take_result()? {
                Ok(o) => Ok(Finished {
                    status: o.status,
                    ping_ms: o.ping_ms,
                    warnings: o.warnings.iter().map(ToString::to_string).collect(),
                    datagrams: o.packets,
                    bytes: Some(o.reply_bytes),
                }),
                Err(e) => Err(query_error(
                    Protocol::Gamespy3,
                    matches!(e, ogp_proto::gamespy3::client::QueryError::Timeout { .. }),
                    e.to_string(),
                )),
            },
            Self::Gqp(m) => match m.take_result()? {
                Ok(o) => Ok(Finished {
                    status: o.status,
                    ping_ms: o.ping_ms,
                    warnings: o.warnings.iter().map(ToString::to_string).collect(),
                    datagrams: o.answer_datagrams,
                    bytes: Some(o.answer_bytes),
                }),
                Err(e) => Err(query_error(
                    Protocol::Gqp,
                    matches!(e, ogp_proto::gqp::client::QueryError::Timeout { .. }),
                    e.to_string(),
                )),
            },
        })
    }
}

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
        // Every protocol's options carry the same timers; the rest stays at its default.
        macro_rules! opts {
            ($module:ident) => {
                ogp_proto::$module::client::QueryOptions {
                    attempt_timeout: cfg.attempt_timeout,
                    retries: cfg.retries,
                    total_timeout: cfg.deadline,
                    ..Default::default()
                }
            };
        }
        use ogp_proto::{a2s, gamespy3, gqp, ogp, ogp_draft};
        let id = crate::random_u32;
        Ok(match protocol {
            Protocol::Ogp => Self::Ogp(Box::new(ogp::client::QueryMachine::new(
                opts!(ogp),
                id(),
                now,
            ))),
            Protocol::A2s => Self::A2s(Box::new(a2s::client::QueryMachine::new(opts!(a2s), now))),
            Protocol::Gqp => Self::Gqp(Box::new(gqp::client::QueryMachine::new(opts!(gqp), now))),
            Protocol::OgpDraft => Self::OgpDraft(Box::new(ogp_draft::client::QueryMachine::new(
                opts!(ogp_draft),
                id(),
                now,
            ))),
            Protocol::Gamespy3 => Self::Gamespy3(Box::new(gamespy3::client::QueryMachine::new(
                opts!(gamespy3),
                id(),
                now,
            ))),
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
            Self::Ogp(m) => finish(Protocol::Ogp, m.take_result()?),
            Self::OgpDraft(m) => finish(Protocol::OgpDraft, m.take_result()?),
            Self::A2s(m) => finish(Protocol::A2s, m.take_result()?),
            Self::Gamespy3(m) => finish(Protocol::Gamespy3, m.take_result()?),
            Self::Gqp(m) => finish(Protocol::Gqp, m.take_result()?),
        })
    }
}

/// A protocol client's successful outcome, as a scan reports it.
trait IntoFinished {
    fn finished(self) -> Finished;
}

/// A protocol client's failure: whether it was a timeout.
trait QueryFailure: std::fmt::Display {
    fn is_timeout(&self) -> bool;
}

fn finish<O: IntoFinished, E: QueryFailure>(
    protocol: Protocol,
    r: Result<O, E>,
) -> Result<Finished, ScanError> {
    r.map(IntoFinished::finished)
        .map_err(|e| query_error(protocol, e.is_timeout(), e.to_string()))
}

fn strings<W: ToString>(w: &[W]) -> Vec<String> {
    w.iter().map(ToString::to_string).collect()
}

impl IntoFinished for ogp_proto::ogp::client::QueryOutcome {
    fn finished(self) -> Finished {
        Finished {
            warnings: strings(&self.warnings),
            status: self.status,
            ping_ms: self.ping_ms,
            datagrams: self.answer_datagrams,
            bytes: Some(self.answer_bytes),
        }
    }
}

impl IntoFinished for ogp_proto::a2s::client::QueryOutcome {
    fn finished(self) -> Finished {
        let mut warnings = strings(&self.warnings);
        warnings.extend(self.missing.iter().map(|s| format!("no {s} reply")));
        Finished {
            warnings,
            status: self.status,
            ping_ms: self.ping_ms,
            datagrams: self.reply_datagrams,
            bytes: None,
        }
    }
}

impl IntoFinished for ogp_proto::gamespy3::client::QueryOutcome {
    fn finished(self) -> Finished {
        Finished {
            warnings: strings(&self.warnings),
            status: self.status,
            ping_ms: self.ping_ms,
            datagrams: self.packets,
            bytes: Some(self.reply_bytes),
        }
    }
}

impl IntoFinished for ogp_proto::gqp::client::QueryOutcome {
    fn finished(self) -> Finished {
        Finished {
            warnings: strings(&self.warnings),
            status: self.status,
            ping_ms: self.ping_ms,
            datagrams: self.answer_datagrams,
            bytes: Some(self.answer_bytes),
        }
    }
}

macro_rules! timeout_variant {
    ($($e:ty),*) => {$(
        impl QueryFailure for $e {
            fn is_timeout(&self) -> bool {
                matches!(self, Self::Timeout { .. })
            }
        }
    )*};
}

timeout_variant!(
    ogp_proto::ogp::client::QueryError,
    ogp_proto::a2s::client::QueryError,
    ogp_proto::gamespy3::client::QueryError,
    ogp_proto::gqp::client::QueryError
);

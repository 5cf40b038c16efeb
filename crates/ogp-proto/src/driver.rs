//! The interface every protocol's client state machine offers, so that one piece of
//! I/O code (a tokio task, an engine's loop, a scanner) can drive any of them.
//!
//! The contract, for a machine `m`:
//! 1. send every datagram [`QueryDriver::poll_transmit`] returns, until it returns `None`;
//! 2. feed every datagram from the queried address to [`QueryDriver::handle_datagram`];
//! 3. call [`QueryDriver::handle_timeout`] once [`QueryDriver::poll_timeout`] has passed;
//! 4. stop when [`QueryDriver::take_result`] returns `Some`.
//!
//! Machines take time as a parameter and never block, panic or do I/O.

use std::time::Instant;

/// A client-side query state machine.
pub trait QueryDriver {
    /// What the query produces when done.
    type Output;

    /// The next datagram to send now, if any.
    fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>>;

    /// A datagram from the queried address.
    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]);

    /// When [`handle_timeout`](Self::handle_timeout) is due (`None` when done).
    fn poll_timeout(&self) -> Option<Instant>;

    /// Advances timers.
    fn handle_timeout(&mut self, now: Instant);

    /// The result, once; `None` while the query runs.
    fn take_result(&mut self) -> Option<Self::Output>;
}

macro_rules! impl_driver {
    ($machine:ty, $out:ty) => {
        impl QueryDriver for $machine {
            type Output = $out;
            fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
                <$machine>::poll_transmit(self, now)
            }
            fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
                <$machine>::handle_datagram(self, now, datagram)
            }
            fn poll_timeout(&self) -> Option<Instant> {
                <$machine>::poll_timeout(self)
            }
            fn handle_timeout(&mut self, now: Instant) {
                <$machine>::handle_timeout(self, now)
            }
            fn take_result(&mut self) -> Option<Self::Output> {
                <$machine>::result(self)
            }
        }
    };
}

impl_driver!(
    crate::ogp::client::QueryMachine,
    Result<crate::ogp::client::QueryOutcome, crate::ogp::client::QueryError>
);
impl_driver!(
    crate::gqp::client::QueryMachine,
    Result<crate::gqp::client::QueryOutcome, crate::gqp::client::QueryError>
);
impl_driver!(
    crate::ogp_draft::client::QueryMachine,
    Result<crate::ogp::client::QueryOutcome, crate::ogp::client::QueryError>
);
impl_driver!(
    crate::a2s::client::QueryMachine,
    Result<crate::a2s::client::QueryOutcome, crate::a2s::client::QueryError>
);
impl_driver!(
    crate::gamespy3::client::QueryMachine,
    Result<crate::gamespy3::client::QueryOutcome, crate::gamespy3::client::QueryError>
);

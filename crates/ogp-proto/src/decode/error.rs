//! The decoder's error: one line, the cause after what was being decoded
//! (`FILE[2]: a2s: …`), as `bail!` and `.context(…)` build it.

use std::fmt;

/// Why a run of datagrams did not decode: one line, unsanitized (it may quote the input:
/// a printer passes it through `result::sanitize`).
pub struct DecodeError(String);

/// A decoder's result.
pub type Result<T, E = DecodeError> = std::result::Result<T, E>;

impl DecodeError {
    /// An error of this message.
    pub fn msg(m: impl fmt::Display) -> Self {
        Self(m.to_string())
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

// Not `std::error::Error` itself, so that every error converts into it with `?`.
impl<E: std::error::Error> From<E> for DecodeError {
    fn from(e: E) -> Self {
        Self(e.to_string())
    }
}

/// `what: cause` for results and options.
pub trait Context<T> {
    /// The error (or a missing value) said after `c`.
    fn context(self, c: impl fmt::Display) -> Result<T>;
    /// [`Context::context`] with the text made only on error.
    fn with_context<C: fmt::Display>(self, f: impl FnOnce() -> C) -> Result<T>;
}

impl<T, E: fmt::Display> Context<T> for std::result::Result<T, E> {
    fn context(self, c: impl fmt::Display) -> Result<T> {
        self.map_err(|e| DecodeError(format!("{c}: {e}")))
    }
    fn with_context<C: fmt::Display>(self, f: impl FnOnce() -> C) -> Result<T> {
        self.map_err(|e| DecodeError(format!("{}: {e}", f())))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, c: impl fmt::Display) -> Result<T> {
        self.ok_or_else(|| DecodeError(c.to_string()))
    }
    fn with_context<C: fmt::Display>(self, f: impl FnOnce() -> C) -> Result<T> {
        self.ok_or_else(|| DecodeError(f().to_string()))
    }
}

/// A [`DecodeError`] of a format string.
macro_rules! anyhow {
    ($($t:tt)*) => {
        $crate::decode::DecodeError::msg(format!($($t)*))
    };
}

/// Returns a [`DecodeError`] of a format string.
macro_rules! bail {
    ($($t:tt)*) => {
        return Err($crate::decode::error::anyhow!($($t)*))
    };
}

pub(crate) use {anyhow, bail};

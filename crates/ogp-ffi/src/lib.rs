//! The C API of `ogp`: `libogp.a` / `libogp.so` and `include/ogp.h`.
//!
//! A game written in C or C++ publishes its status and lets the library answer every
//! query protocol (OGP v1.01, Valve A2S, GameSpy v3, GQP, the OGP v0.02 draft), in one
//! of two modes:
//!
//! * **managed**: [`ogp_responder_start`] opens the sockets and answers on a thread of
//!   its own; the game calls [`ogp_responder_publish`] whenever its status changes;
//! * **game-owned socket**: [`ogp_responder_new`] opens nothing; the game hands each
//!   datagram it receives to [`ogp_responder_handle`], which calls the game's send
//!   function for each reply, and calls [`ogp_responder_poll`] for timed sends.
//!
//! [`ogp_query`] queries a server from C and returns the result as JSON.
//!
//! # The rules of the C boundary
//!
//! * Every function returns an `int` error code (`OGP_OK`, 0, or a negative
//!   `OGP_ERR_*`), except the few documented otherwise; [`ogp_last_error_message`]
//!   says why, in one line, on the thread of the failed call.
//! * No panic crosses the boundary: each body runs under `catch_unwind` and a panic is
//!   `OGP_ERR_PANIC`. Null pointers are checked (`OGP_ERR_NULL`); strings are UTF-8
//!   with explicit lengths (`OGP_ERR_UTF8` otherwise) and need no terminating NUL.
//! * Ownership is written on each function: what the library allocates, the caller
//!   frees with the matching `*_free` (or `ogp_responder_stop`).
//!
//! `docs/c-api.md` is the guide; `examples/c/` shows both modes.

mod addr;
mod config;
mod error;
mod query;
mod responder;
mod status;

pub use config::*;
pub use error::*;
pub use query::*;
pub use responder::*;
pub use status::*;

use std::ffi::{c_char, c_int};

/// The library version (`"0.1.0"`), a static NUL-terminated string: never freed.
#[no_mangle]
pub extern "C" fn ogp_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Frees a string the library returned (`ogp_query`'s JSON, `ogp_status_to_json`).
/// `NULL` is accepted and does nothing. Returns `OGP_OK`.
///
/// # Safety
///
/// `s` must be `NULL` or a string returned by this library, not freed before.
#[no_mangle]
pub unsafe extern "C" fn ogp_string_free(s: *mut c_char) -> c_int {
    error::guard(|| {
        if !s.is_null() {
            // SAFETY: the caller passes a string made by `CString::into_raw` in this
            // library (`error::out_string`), freed once.
            drop(unsafe { std::ffi::CString::from_raw(s) });
        }
        Ok(OGP_OK)
    })
}

#[cfg(test)]
mod tests;

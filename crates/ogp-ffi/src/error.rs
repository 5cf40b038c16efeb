//! Error codes, the thread-local last error message, the panic guard and argument
//! checks shared by every function.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Success.
pub const OGP_OK: c_int = 0;
/// A pointer argument that must not be `NULL` was `NULL`.
pub const OGP_ERR_NULL: c_int = -1;
/// A string argument is not valid UTF-8.
pub const OGP_ERR_UTF8: c_int = -2;
/// An argument is out of range or malformed (an address, a JSON status, a value past
/// the protocols' limits), or the call does not fit the object's mode.
pub const OGP_ERR_INVALID: c_int = -3;
/// An operating-system error (binding a socket, starting a thread).
pub const OGP_ERR_IO: c_int = -4;
/// The library panicked (a bug): the call had no effect, or only part of it.
pub const OGP_ERR_PANIC: c_int = -5;
/// `ogp_config.size` is not a size this library knows.
pub const OGP_ERR_SIZE: c_int = -6;
/// A query got no usable answer before its deadline.
pub const OGP_ERR_TIMEOUT: c_int = -7;
/// A query was refused: nothing listens on that port (ICMP port unreachable).
pub const OGP_ERR_REFUSED: c_int = -8;
/// The server answered with a refusal (an error code of its protocol, endless
/// challenges).
pub const OGP_ERR_REJECTED: c_int = -9;
/// The server's answer did not decode.
pub const OGP_ERR_MALFORMED: c_int = -10;
/// The target is not `host:port`, or the host name did not resolve.
pub const OGP_ERR_RESOLVE: c_int = -11;

/// A failed call: its code and a one-line message.
#[derive(Debug)]
pub(crate) struct Error {
    pub(crate) code: c_int,
    pub(crate) message: String,
}

impl Error {
    pub(crate) fn new(code: c_int, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub(crate) fn null(what: &str) -> Self {
        Self::new(OGP_ERR_NULL, format!("{what} is NULL"))
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::new(OGP_ERR_INVALID, message)
    }
}

pub(crate) type Result<T> = std::result::Result<T, Error>;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    // A message with a NUL inside cannot be a C string: cut it there.
    let bytes = message.as_bytes();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let c = CString::new(bytes.get(..end).unwrap_or_default()).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// Runs an extern function's body: a panic becomes `OGP_ERR_PANIC`, an error its code,
/// and either one the thread's last error message.
pub(crate) fn guard(f: impl FnOnce() -> Result<c_int>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            set_last_error(&e.message);
            e.code
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".to_owned());
            set_last_error(&format!("internal error (panic): {what}"));
            OGP_ERR_PANIC
        }
    }
}

/// The message of the last call that failed on this thread, in one line (`""` when none
/// failed yet). Never `NULL`. The string belongs to the library and stays valid until the
/// next `ogp_*` call on the same thread: copy it to keep it.
#[no_mangle]
pub extern "C" fn ogp_last_error_message() -> *const c_char {
    let r = catch_unwind(|| LAST_ERROR.with(|e| e.borrow().as_ptr()));
    r.unwrap_or(c"".as_ptr())
}

/// The string argument `ptr`/`len`: `None` for `NULL` (any length), an error for
/// invalid UTF-8.
///
/// # Safety
///
/// `ptr` must be `NULL` or point to `len` readable bytes.
pub(crate) unsafe fn opt_str<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<Option<&'a str>> {
    if ptr.is_null() {
        return Ok(None);
    }
    if len > isize::MAX as usize {
        return Err(Error::invalid(format!("{what}: length {len} is too large")));
    }
    // SAFETY: `ptr` is not NULL and the caller promises `len` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    std::str::from_utf8(bytes).map(Some).map_err(|e| {
        Error::new(
            OGP_ERR_UTF8,
            format!("{what}: invalid UTF-8 at byte {}", e.valid_up_to()),
        )
    })
}

/// The string argument `ptr`/`len`, which must not be `NULL`.
///
/// # Safety
///
/// As [`opt_str`].
pub(crate) unsafe fn req_str<'a>(ptr: *const c_char, len: usize, what: &str) -> Result<&'a str> {
    // SAFETY: forwarded from the caller.
    unsafe { opt_str(ptr, len, what) }?.ok_or_else(|| Error::null(what))
}

/// The NUL-terminated string argument `ptr` (for the few arguments without a length:
/// `ogp_config` addresses, query targets).
///
/// # Safety
///
/// `ptr` must be `NULL` or a NUL-terminated string.
pub(crate) unsafe fn opt_cstr<'a>(ptr: *const c_char, what: &str) -> Result<Option<&'a str>> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: not NULL, NUL-terminated by the caller's promise.
    let c = unsafe { std::ffi::CStr::from_ptr(ptr) };
    c.to_str().map(Some).map_err(|e| {
        Error::new(
            OGP_ERR_UTF8,
            format!("{what}: invalid UTF-8 at byte {}", e.valid_up_to()),
        )
    })
}

/// Hands `s` to the caller as a NUL-terminated string it frees with `ogp_string_free`.
///
/// # Safety
///
/// `out` and `out_len` must be `NULL` or valid for a write.
pub(crate) unsafe fn out_string(
    s: String,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> Result<()> {
    if out.is_null() {
        return Err(Error::null("out"));
    }
    let len = s.len();
    let c = CString::new(s).map_err(|_| Error::invalid("the string has a NUL byte inside"))?;
    // SAFETY: `out` is not NULL and valid for a write (the caller's promise).
    unsafe { out.write(c.into_raw()) };
    if !out_len.is_null() {
        // SAFETY: not NULL, valid for a write.
        unsafe { out_len.write(len) };
    }
    Ok(())
}

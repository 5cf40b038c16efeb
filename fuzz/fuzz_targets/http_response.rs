//! HTTP/1.1 responses: the sans-IO response reader of the stream core, on a server's
//! bytes fed whole and in chunks.
//!
//! Input: a first byte (the chunk size of the second run), then the bytes the server
//! sends.
//!
//! Asserts: no panic; no more consumed than given; the body within its cap; errors point
//! into the stream; the same outcome (the response, or an error) however the bytes are
//! chunked; a response read whole leaves the bytes after it unconsumed.

use ogp_fuzz::check_error;
use ogp_proto::http::{HttpLimits, Response, ResponseReader};

const LIMITS: HttpLimits = HttpLimits::new(2048, 4096);

/// Feeds `stream` in chunks of `size` bytes, then the close: the response or the error,
/// and the bytes consumed.
fn read(stream: &[u8], size: usize) -> (Result<Response, ()>, usize) {
    let mut r = ResponseReader::new(LIMITS);
    let mut used = 0;
    for chunk in stream.chunks(size.max(1)) {
        match r.feed(chunk) {
            Ok(n) => {
                assert!(n <= chunk.len());
                used += n;
                if n < chunk.len() {
                    assert!(
                        r.response().is_some(),
                        "bytes left while the response is not whole"
                    );
                    break;
                }
            }
            Err(e) => {
                check_error(&e, 0, stream.len());
                return (Err(()), used);
            }
        }
        if r.response().is_some() {
            break;
        }
    }
    if r.response().is_none() {
        if let Err(e) = r.closed() {
            check_error(&e, 0, stream.len());
            return (Err(()), used);
        }
    }
    let response = r.take_response().expect("a whole response");
    assert!(response.body.len() <= LIMITS.max_body);
    (Ok(response), used)
}

/// One input of the `http_response` target.
pub fn run(data: &[u8]) {
    let Some((&a, stream)) = data.split_first() else {
        return;
    };
    let (whole, used_whole) = read(stream, stream.len());
    let (chunked, used_chunked) = read(stream, usize::from(a % 17) + 1);
    assert_eq!(whole, chunked, "the chunking changed the outcome");
    if whole.is_ok() {
        assert_eq!(
            used_whole, used_chunked,
            "the chunking changed what was consumed"
        );
    }
}

//! Helpers shared by the fuzz targets in `fuzz_targets/`.

use ogp_proto::ogp::answer::Answer;
use ogp_proto::{DecodeError, Status};

/// Asserts that a decode error points into the input (or just past its end).
pub fn check_error(e: &DecodeError, base: usize, len: usize) {
    assert!(
        e.offset >= base && e.offset <= base + len,
        "error offset {} outside the input [{base}, {}]: {e}",
        e.offset,
        base + len
    );
}

/// Asserts that every warning of a decoded answer points into the input.
pub fn check_warnings(a: &Answer, base: usize, len: usize) {
    for w in &a.warnings {
        assert!(
            w.offset >= base && w.offset <= base + len,
            "warning offset {} outside the input [{base}, {}]: {w}",
            w.offset,
            base + len
        );
    }
}

/// A status with the player and bot counts made explicit. An encoder derives
/// PlayerCount/BotCount from the player list when they are not set, so after a round trip
/// the counts can be explicit where they were derived before; this makes both sides
/// comparable.
pub fn with_explicit_counts(s: &Status) -> Status {
    let mut s = s.clone();
    s.player_count = s.player_count();
    s.bot_count = s.bot_count();
    s
}

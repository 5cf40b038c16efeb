//! The HTTP-JSON games of issue #39's second batch: TShock (`terraria`), Palworld,
//! KSP DarkMultiPlayer, Build and Shoot and Assetto Corsa, each machine of the
//! HTTP-JSON shape (`client_http`) on the same server bytes (the answers to its
//! requests one after the other), fed whole and in chunks. Their documents go through
//! the core's lenient readers (`ListOrText`: a list or a joined string; `Pairs`: an
//! object's keys; Build and Shoot's list-or-teams players and name-or-object entries).
//! Farming Simulator's machine reads XML (the bounded `ogp_proto::xml` reader), and
//! the same bytes go to that reader as a document too. Hytale's (over plain HTTP here:
//! TLS is the networking layer's) reads a list or an object by key (`Keyed`).
//!
//! Input: a first byte (the chunk size of the second run), then the bytes the server
//! sends.
//!
//! Asserts: no panic; a result once the server closed; the same outcome however the
//! bytes are chunked; the machine's buffer within its cap on every read.

use std::time::Instant;

use ogp_fuzz::drive_stream;
use ogp_proto::client::Timing;
use ogp_proto::http::Secret;
use ogp_proto::{
    assettocorsa, buildandshoot, farmingsimulator, hytale, kspdmp, palworld, terraria,
};

/// What a machine may hold of a response: its body cap and head cap, with the engine's
/// input buffer (64 KiB) on top.
const MAX_BUFFER: usize = 512 * 1024 + 8 * 1024 + 64 * 1024 + 4096;

/// `make`'s machine on `stream`, whole and in chunks of `size`: the same outcome.
fn same<M: ogp_proto::client::QueryDriver>(make: impl Fn() -> M, stream: &[u8], size: usize) {
    same_within(make, stream, size, MAX_BUFFER);
}

/// [`same`], the machine's buffer within `cap`.
fn same_within<M: ogp_proto::client::QueryDriver>(
    make: impl Fn() -> M,
    stream: &[u8],
    size: usize,
    cap: usize,
) {
    let whole = drive_stream(make(), 8080, stream, stream.len(), cap);
    let chunked = drive_stream(make(), 8080, stream, size, cap);
    assert_eq!(whole, chunked, "the chunking changed the outcome");
}

/// One input of the `http_games` target.
pub fn run(data: &[u8]) {
    let Some((&a, stream)) = data.split_first() else {
        return;
    };
    let size = usize::from(a % 17) + 1;
    let t = Instant::now();
    let timing = Timing::default();
    same(
        || {
            let mut o = terraria::client::QueryOptions::default();
            o.token = Some(Secret("t&k".into()));
            terraria::client::QueryMachine::new(o, timing, t)
        },
        stream,
        size,
    );
    same(
        || {
            let mut o = palworld::client::QueryOptions::default();
            o.password = Some(Secret("pw".into()));
            palworld::client::QueryMachine::new(o, timing, t)
        },
        stream,
        size,
    );
    same(
        || kspdmp::client::QueryMachine::new(Default::default(), timing, t),
        stream,
        size,
    );
    same(
        || buildandshoot::client::QueryMachine::new(Default::default(), timing, t),
        stream,
        size,
    );
    same(
        || assettocorsa::client::QueryMachine::new(Default::default(), timing, t),
        stream,
        size,
    );
    same_within(
        || {
            let mut o = farmingsimulator::client::QueryOptions::default();
            o.code = Some(Secret("c&d".into()));
            farmingsimulator::client::QueryMachine::new(o, timing, t)
        },
        stream,
        size,
        farmingsimulator::client::MAX_BODY + 8 * 1024 + 64 * 1024 + 4096,
    );
    let _ = farmingsimulator::client::Feed::read(stream);
    same_within(
        || {
            let mut o = hytale::client::QueryOptions::default();
            o.plain = true;
            hytale::client::QueryMachine::new(o, timing, t)
        },
        stream,
        size,
        hytale::client::MAX_BODY + 8 * 1024 + 64 * 1024 + 4096,
    );
}

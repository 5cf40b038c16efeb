//! Decoding GameSpy v3 replies: the three-packet full reply of a real Battlefield 2
//! server (`gameq-bf2-1`: server keys, 64 players' columns, teams), each packet decoded,
//! reassembled and merged, then mapped to the shared status; and our own responder's
//! full reply of `state.json` (one packet).
//!
//! No peer crate is timed beside it here: gamedig (the one Rust crate that reads GameSpy
//! v3) parses only inside its socket query (its parsers are crate-private). Whole
//! queries of the same Battlefield 2 reply, ours against gamedig's, are compared by
//! instruction count in `scripts/gs3-peer.sh` (`ogp-load/examples/gs3_peer.rs`).
//!
//! Run: `cargo bench -p ogp-proto --bench gs3_codec`.
//! Instructions per decode, which do not move with the machine's load as times do:
//! `examples/decode_loop.rs`.

#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use ogp_proto::gamespy3::mapping::{info_to_status, status_to_info};
use ogp_proto::gamespy3::reply::{decode_packet, encode_packets, Pushed, Reassembler};
use ogp_proto::Status;
use ogp_testkit::capture_datagrams;

fn capture_packets(name: &str) -> Vec<Vec<u8>> {
    let p = format!(
        "{}/tests/data/gamespy3/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    capture_datagrams(&std::fs::read_to_string(p).expect("capture"), "gs3")
}

/// Decodes, reassembles and maps a whole reply.
fn decode_all(packets: &[Vec<u8>]) -> Status {
    let mut r = Reassembler::default();
    for p in packets {
        let d = decode_packet(p).expect("decodes");
        if let Ok(Pushed::Complete { info, .. }) = r.push(d, p.len()) {
            return info_to_status(&info);
        }
    }
    panic!("incomplete")
}

fn bench(c: &mut Criterion) {
    let bf2 = capture_packets("gameq-bf2-1");
    let status = Status::from_json(include_str!("../tests/data/state.json")).expect("state");
    let mut ours = Vec::new();
    encode_packets(&status_to_info(&status), 0x1020_3040, 1400, |p| {
        ours.push(p.to_vec())
    })
    .expect("encodes");
    // sanity: what we time is a whole reply
    assert!(decode_all(&bf2)
        .players
        .as_ref()
        .is_some_and(|p| !p.is_empty()));
    assert!(decode_all(&ours).host_name.is_some());

    let mut g = c.benchmark_group("gamespy3_decode");
    for (name, packets) in [
        ("bf2_full_reply_3_packets", bf2),
        ("state_json_full_reply", ours),
    ] {
        g.throughput(Throughput::Bytes(
            packets.iter().map(|p| p.len() as u64).sum(),
        ));
        g.bench_function(name, |b| {
            b.iter(|| black_box(decode_all(black_box(&packets))))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

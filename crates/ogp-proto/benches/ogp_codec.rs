//! Encoding and decoding the answer to a full OGP query of `shared/examples/state.json`.
//!
//! Run: `cargo bench -p ogp-proto --bench ogp_codec`. Target: each ≤ 1 µs.
//! Instructions per decode, which do not move with the machine's load as times do:
//! `examples/decode_loop.rs`.

#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use ogp_proto::ogp::{self, query, AnswerOptions, DefaultQuery, Header, PacketType};
use ogp_proto::Status;

fn state() -> Status {
    Status::from_json(include_str!("../tests/data/state.json")).expect("state.json loads")
}

fn full_query() -> DefaultQuery {
    DefaultQuery {
        request: query::request::ALL_LISTS.with(query::request::COLORED_NAMES),
        ..DefaultQuery::everything()
    }
}

fn bench(c: &mut Criterion) {
    let status = state();
    let q = full_query();
    let opts = AnswerOptions {
        utf8: true,
        colors: false,
    };
    let mut header = Header::answer(PacketType::DEFAULT_QUERY).with_utf8(true);
    header.challenge = Some(0x1234_5678);

    let mut datagram = Vec::new();
    ogp::encode_answer(&header, &status, &q, &opts, &mut datagram);
    let body_at = 8 + usize::from(header.head_size());

    let mut g = c.benchmark_group("ogp");
    g.throughput(Throughput::Bytes(datagram.len() as u64));
    let mut buf = Vec::with_capacity(2048);
    g.bench_function("encode_full_answer", |b| {
        b.iter(|| {
            buf.clear();
            ogp::encode_answer(
                black_box(&header),
                black_box(&status),
                black_box(&q),
                &opts,
                &mut buf,
            );
            black_box(buf.len())
        })
    });
    g.bench_function("decode_full_answer_datagram", |b| {
        b.iter(|| black_box(ogp::decode(black_box(&datagram)).expect("decodes")))
    });
    g.bench_function("decode_full_answer_body", |b| {
        b.iter(|| {
            let body = black_box(&datagram[body_at..]);
            black_box(ogp::decode_answer_body(body, true).expect("decodes"))
        })
    });
    let mut qbytes = Vec::new();
    ogp::encode_query(
        &Header::query(PacketType::DEFAULT_QUERY),
        Some(&q),
        &mut qbytes,
    );
    g.bench_function("decode_full_query", |b| {
        b.iter(|| black_box(ogp::decode(black_box(&qbytes)).expect("decodes")))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

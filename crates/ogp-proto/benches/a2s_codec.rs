//! Decoding A2S replies, side by side with the crates.io `a2s` crate (0.5.3) where it can
//! parse the message.
//!
//! * `info_edf_b1`: the real TF2 INFO reply of `gameq-tf2-1` (EDF 0xB1);
//! * `info_edf_f1`: the real TF2 INFO of `xpaw-info-tf2` (EDF 0xF1): ours only, the `a2s`
//!   crate reads keywords before SourceTV and mis-parses it (`interop.md` §2.7);
//! * `players_64`: a 64-player PLAYER reply;
//! * `rules_224`: the 224 rules of `libssq-rules-wiki_example`, reassembled;
//! * `split_rules_224`: reassembling its 5 fragments (in reverse order) and decoding.
//!
//! The `a2s` crate's parsers take an owned `Cursor<Vec<u8>>`; the copy into it is made
//! outside the timed part (`iter_batched`). Ours decode from a borrowed slice.
//!
//! Run: `cargo bench -p ogp-proto --bench a2s_codec`.

#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn

use std::io::Cursor;

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ogp_proto::a2s::{self, PlayerEntry, Players, Pushed, Reassembler};
use ogp_testkit::capture_datagrams;

/// The datagrams of capture `name` under `responses.<kind>`.
fn datagrams(name: &str, kind: &str) -> Vec<Vec<u8>> {
    let p = format!("{}/tests/data/a2s/{name}.json", env!("CARGO_MANIFEST_DIR"));
    capture_datagrams(&std::fs::read_to_string(p).expect("capture"), kind)
}

fn players_64() -> Vec<u8> {
    let names = [
        "Zien",
        "ＤｏｆｆｙＸ",
        "TheMasterSnake |USSR|",
        "JawlessBullet",
        "Gandolf Rodriguez",
        "[D]---->T.N.W<----",
        "Killer !!!",
        "a",
    ];
    let p = Players {
        players: (0..64)
            .map(|i| PlayerEntry {
                index: 0,
                name: format!("{} {i}", names[i % names.len()]).into(),
                score: i as i32 * 3,
                duration: 100.0 + i as f32 * 37.25,
                ship: None,
            })
            .collect(),
        trailing: Vec::new(),
    };
    let mut out = Vec::new();
    p.encode(&mut out);
    out
}

fn reassembled(frags: &[Vec<u8>]) -> Vec<u8> {
    let mut r = Reassembler::new();
    for f in frags {
        if let Ok(Pushed::Complete { reply, .. }) = r.push(f) {
            return reply;
        }
    }
    panic!("incomplete")
}

fn bench(c: &mut Criterion) {
    let info_b1 = datagrams("gameq-tf2-1", "info").remove(0);
    let info_f1 = datagrams("xpaw-info-tf2", "info").remove(0);
    let players = players_64();
    let rules_frags = datagrams("libssq-rules-wiki_example", "rules");
    let rules = reassembled(&rules_frags);

    // sanity: both parsers agree where the a2s crate can parse
    let theirs = ::a2s::info::Info::from_cursor(Cursor::new(info_b1[4..].to_vec()))
        .expect("a2s parses EDF 0xB1");
    let a2s::Message::Info(ours) = a2s::decode(&info_b1).expect("decodes").message else {
        panic!("not info")
    };
    assert_eq!(theirs.name, ours.name.as_str());
    assert_eq!(
        theirs.extended_server_info.keywords.as_deref(),
        ours.extra.and_then(|x| x.keywords).as_deref()
    );
    assert_eq!(
        ::a2s::players::Player::from_cursor(Cursor::new(players[4..].to_vec()), 440)
            .expect("a2s parses players")
            .len(),
        64
    );
    assert_eq!(
        ::a2s::rules::Rule::from_cursor(Cursor::new(rules[4..].to_vec()))
            .expect("a2s parses rules")
            .len(),
        224
    );

    let mut g = c.benchmark_group("a2s_decode");
    for (name, bytes) in [
        ("info_edf_b1", &info_b1),
        ("players_64", &players),
        ("rules_224", &rules),
    ] {
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(format!("{name}/ogp_proto"), |b| {
            b.iter(|| black_box(a2s::decode(black_box(bytes)).expect("decodes")))
        });
        let payload = bytes[4..].to_vec();
        g.bench_function(format!("{name}/a2s_crate"), |b| {
            b.iter_batched(
                || Cursor::new(payload.clone()),
                |cur| match name {
                    "info_edf_b1" => {
                        black_box(::a2s::info::Info::from_cursor(cur).expect("a2s info"));
                    }
                    "players_64" => {
                        black_box(
                            ::a2s::players::Player::from_cursor(cur, 440).expect("a2s players"),
                        );
                    }
                    _ => {
                        black_box(::a2s::rules::Rule::from_cursor(cur).expect("a2s rules"));
                    }
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.throughput(Throughput::Bytes(info_f1.len() as u64));
    g.bench_function("info_edf_f1/ogp_proto", |b| {
        b.iter(|| black_box(a2s::decode(black_box(&info_f1)).expect("decodes")))
    });
    let mut frags = rules_frags.clone();
    frags.reverse();
    g.bench_function("split_rules_224_reversed/ogp_proto", |b| {
        b.iter(|| {
            let reply = reassembled(black_box(&frags));
            black_box(a2s::split::decode_reassembled(&reply).expect("decodes"))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

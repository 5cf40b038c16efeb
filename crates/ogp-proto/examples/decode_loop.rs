//! Decodes one answer many times, for counting instructions: wall-clock timings on a
//! shared 2-core machine move by ±20% from run to run, instruction counts do not.
//!
//! ```sh
//! cargo build --profile dist -p ogp-proto --example decode_loop
//! for n in 1000 2000; do
//!   valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
//!     target/dist/examples/decode_loop gs3 $n
//! done
//! ```
//!
//! The difference of the two `I refs` totals divided by 1,000 is the instructions of
//! one decode (the set-up cancels out). `ogp`: the OGP full answer of `state.json` (the
//! `ogp_codec` bench's); `ogp-encode` encodes that answer into a reused buffer, as the
//! bench does. `gs3`: the three-packet reply of a real Battlefield 2 server,
//! decoded, reassembled and mapped to the status (the `gs3_codec` bench's). `a2s-rules`:
//! the 224 rules of a real server, reassembled (the `a2s_codec` bench's).

use ogp_proto::a2s;
use ogp_proto::gamespy3::mapping::info_to_status;
use ogp_proto::gamespy3::reply::{decode_packet, Pushed, Reassembler};
use ogp_proto::ogp::{self, query, AnswerOptions, DefaultQuery, Header, PacketType};
use ogp_proto::Status;
use ogp_testkit::capture_datagrams;
use std::hint::black_box;

/// The status, query, options and header of the `ogp_codec` bench's full answer.
fn ogp_answer() -> (Status, DefaultQuery, AnswerOptions, Header) {
    let status = Status::from_json(include_str!("../tests/data/state.json")).expect("state");
    let q = DefaultQuery {
        request: query::request::ALL_LISTS.with(query::request::COLORED_NAMES),
        ..DefaultQuery::everything()
    };
    let opts = AnswerOptions {
        utf8: true,
        colors: false,
    };
    let header = Header::answer(PacketType::DEFAULT_QUERY).with_utf8(true);
    (status, q, opts, header)
}

fn ogp_body() -> Vec<u8> {
    let (status, q, opts, header) = ogp_answer();
    let mut d = Vec::new();
    ogp::encode_answer(&header, &status, &q, &opts, &mut d);
    d.split_off(8 + usize::from(header.head_size()))
}

fn bf2_packets() -> Vec<Vec<u8>> {
    capture_datagrams(
        include_str!("../tests/data/gamespy3/gameq-bf2-1.json"),
        "gs3",
    )
}

/// The 224 rules of `libssq-rules-wiki_example`, reassembled (the `a2s_codec` bench's).
fn a2s_rules() -> Vec<u8> {
    let text = include_str!("../tests/data/a2s/libssq-rules-wiki_example.json");
    let mut r = a2s::Reassembler::new();
    for f in capture_datagrams(text, "rules") {
        if let Ok(a2s::Pushed::Complete { reply, .. }) = r.push(&f) {
            return reply;
        }
    }
    panic!("incomplete rules reply")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_default();
    let n: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    match what.as_str() {
        "ogp" => {
            let body = ogp_body();
            for _ in 0..n {
                black_box(ogp::decode_answer_body(black_box(&body), true).expect("decodes"));
            }
        }
        "ogp-encode" => {
            let (status, q, opts, header) = ogp_answer();
            let mut buf = Vec::with_capacity(2048);
            for _ in 0..n {
                buf.clear();
                ogp::encode_answer(&header, black_box(&status), &q, &opts, &mut buf);
                black_box(buf.len());
            }
        }
        "gs3" => {
            let packets = bf2_packets();
            for _ in 0..n {
                let mut r = Reassembler::default();
                for p in &packets {
                    let d = decode_packet(black_box(p)).expect("decodes");
                    if let Ok(Pushed::Complete { info, .. }) = r.push(d, p.len()) {
                        black_box(info_to_status(&info));
                    }
                }
            }
        }
        "a2s-rules" => {
            let reply = a2s_rules();
            for _ in 0..n {
                black_box(a2s::split::decode_reassembled(black_box(&reply)).expect("decodes"));
            }
        }
        _ => {
            eprintln!("usage: decode_loop ogp|ogp-encode|gs3|a2s-rules [N]");
            std::process::exit(2);
        }
    }
}

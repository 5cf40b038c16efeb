//! Seed inputs that need the encoders: what the clients send and what a responder answers
//! them from `tests/data/state.json`, for GQP, the OGP v0.02 draft and Valve A2S, and the
//! split replies of the A2S captures (`tests/data/a2s/`) reassembled. Run by
//! `fuzz/seeds.py` (`cargo run --release --example gen_seeds -- fuzz/corpus`); writes
//! `gen-*` files into `<corpus>/{gqp_query,gqp_reply,ogp_draft_datagram,a2s_reply,
//! a2s_split}/`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ogp_fuzz::a2s::big_status;
use ogp_fuzz::state_status;
use ogp_proto::a2s::responder::Flavor;
use ogp_proto::a2s::{self, Pushed, Reassembler};
use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::gqp::client::{Credentials, QueryMode};
use ogp_proto::gqp::responder::GqpUser;
use ogp_proto::gqp::{self, Command, Encoding};
use ogp_proto::model::A2sInfo;
use ogp_proto::ogp_draft;
use ogp_proto::responder::{Listener, Responder, ResponderConfig, Transmits};
use ogp_proto::Status;

struct Out {
    dir: PathBuf,
}

impl Out {
    fn put(&self, target: &str, name: &str, data: &[u8]) {
        let d = self.dir.join(target);
        std::fs::create_dir_all(&d).expect("corpus directory");
        std::fs::write(d.join(format!("gen-{name}.bin")), data).expect("seed written");
    }
}

fn responder(listener: Listener, max_datagram_bytes: usize) -> Responder {
    let mut config = ResponderConfig::default();
    config.listener = listener;
    config.gqp.users = vec![GqpUser::new("admin", "hunter2")];
    config.gqp.protected = vec!["rules".into()];
    config.gqp.max_datagram_bytes = max_datagram_bytes;
    Responder::new(config, [7; 32], Instant::now())
}

/// Runs a client machine against `r` answering from `status` without loss; calls `seen`
/// with every datagram each way (`true`: from the client).
fn exchange<M: QueryDriver>(
    mut m: M,
    r: &mut Responder,
    status: &Status,
    mut seen: impl FnMut(bool, &[u8]),
) {
    let now = Instant::now();
    let src = "192.0.2.1:27005".parse().expect("address");
    let mut out = Transmits::default();
    for _ in 0..16 {
        if m.take_result().is_some() {
            return;
        }
        let Some(q) = m.poll_transmit(now) else {
            let t = m.poll_timeout().unwrap_or(now + Duration::from_secs(10));
            m.handle_timeout(t);
            continue;
        };
        seen(true, &q);
        r.handle(now, src, &q, status, &mut out);
        for a in out.iter() {
            seen(false, a);
            m.handle_datagram(now, a);
        }
    }
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "fuzz/corpus".into());
    let out = Out {
        dir: Path::new(&dir).to_path_buf(),
    };

    // GQP: status and raw queries in every encoding, with and without credentials;
    // small blocks (ETB, continued records) as well as whole replies.
    let encodings = ["", "utf-8", "deflate+utf-8", "gzip"];
    for (e, enc) in encodings.iter().enumerate() {
        let encoding = Encoding::parse(enc).expect("known encoding");
        for (c, credentials) in [None, Some(("admin", "hunter2"))].into_iter().enumerate() {
            for (b, block) in [1400, 300].into_iter().enumerate() {
                let mut opts = gqp::client::QueryOptions::default();
                opts.encoding = encoding;
                opts.credentials =
                    credentials.map(|(user, password)| Credentials::new(user, password));
                let mut r = responder(Listener::Standard, block);
                let (mut q, mut a) = (0, 0);
                exchange(
                    gqp::client::QueryMachine::new(opts, Timing::default(), Instant::now()),
                    &mut r,
                    state_status(),
                    |from_client, d| {
                        if from_client {
                            q += 1;
                            out.put("gqp_query", &format!("status-e{e}-c{c}-b{b}-{q}"), d);
                        } else {
                            a += 1;
                            out.put("gqp_reply", &format!("status-e{e}-c{c}-b{b}-{a}"), d);
                        }
                    },
                );
            }
        }
        let raw = QueryMode::Raw(Command::parse_lines(
            "echo a b; extensions; identify; nosuch; limits",
        ));
        let mut opts = gqp::client::QueryOptions::default();
        opts.mode = raw;
        opts.encoding = encoding;
        let mut r = responder(Listener::Standard, 1400);
        let mut n = 0;
        exchange(
            gqp::client::QueryMachine::new(opts, Timing::default(), Instant::now()),
            &mut r,
            state_status(),
            |from_client, d| {
                n += 1;
                let target = if from_client {
                    "gqp_query"
                } else {
                    "gqp_reply"
                };
                out.put(target, &format!("raw-e{e}-{n}"), d);
            },
        );
    }

    // The draft: queries and answers, unsplit and split.
    for (s, max) in [None, Some(500), Some(1500)].into_iter().enumerate() {
        let mut opts = ogp_draft::client::QueryOptions::default();
        opts.max_bytes_per_packet = max;
        let mut r = responder(Listener::OgpDraft, 1400);
        let mut n = 0;
        exchange(
            ogp_draft::client::QueryMachine::new(
                opts,
                Timing::default(),
                0x1122_3344,
                Instant::now(),
            ),
            &mut r,
            state_status(),
            |_, d| {
                n += 1;
                out.put("ogp_draft_datagram", &format!("state-s{s}-{n}"), d);
            },
        );
    }
    a2s_seeds(&out);
}

/// An `a2s_split` record: `[n: u16 LE] [datagram]`.
fn split_record(d: &[u8]) -> Vec<u8> {
    let mut r = u16::try_from(d.len())
        .expect("a datagram")
        .to_le_bytes()
        .to_vec();
    r.extend_from_slice(d);
    r
}

/// The limits prefix of `a2s_split` seeds: 128 fragments, 64 KiB, 64 KiB decompressed.
const SPLIT_LIMITS: [u8; 3] = [128, 0xff, 0xff];

fn a2s_seeds(out: &Out) {
    // What our responder answers the A2S client, in each flavor, from state.json as The
    // Ship (INFO with The Ship's fields, players with deaths and money): a2s_reply.
    let mut ship = state_status().clone();
    ship.a2s.get_or_insert_with(A2sInfo::default).app_id = Some(u32::from(a2s::info::SHIP_APP_ID));
    let flavors = [Flavor::Source, Flavor::GoldSrcM, Flavor::GoldSrcI];
    for (f, flavor) in flavors.into_iter().enumerate() {
        let mut r = a2s_responder(flavor, 65536);
        let mut n = 0;
        exchange(
            a2s::client::QueryMachine::new(Default::default(), Timing::default(), Instant::now()),
            &mut r,
            &ship,
            |from_client, d| {
                if !from_client {
                    n += 1;
                    out.put("a2s_reply", &format!("a2s-ship-f{f}-{n}"), d);
                }
            },
        );
        // A big status with replies cut at 4000 bytes: split PLAYER and RULES replies
        // in the flavor's layout, fragments in order (a2s_split).
        if flavor == Flavor::GoldSrcI {
            continue;
        }
        let mut r = a2s_responder(flavor, 4000);
        let mut frags = Vec::new();
        exchange(
            a2s::client::QueryMachine::new(Default::default(), Timing::default(), Instant::now()),
            &mut r,
            big_status(flavor == Flavor::Source),
            |from_client, d| {
                if !from_client && d.starts_with(&a2s::SPLIT) {
                    frags.push(d.to_vec());
                }
            },
        );
        let mut seed = SPLIT_LIMITS.to_vec();
        frags.iter().for_each(|d| seed.extend(split_record(d)));
        out.put("a2s_split", &format!("a2s-big-f{f}"), &seed);
    }

    // The split replies of some captures, reassembled (a2s_reply): Source rules and
    // players, GoldSrc rules, bzip2-compressed rules.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/ogp-proto/tests/data/a2s");
    for (name, kind) in [
        ("gameq-tf2-1", "rules"),
        ("xpaw-players-csgo", "players"),
        ("gameq-cs16-1", "rules"),
        ("gameq-ffe-1", "rules"),
    ] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).expect("capture");
        let json: serde_json::Value = serde_json::from_str(&text).expect("capture JSON");
        let mut r = Reassembler::new();
        let mut reply = None;
        for hex in json["responses"][kind].as_array().expect("datagrams") {
            let d = ogp_proto::internals::from_hex(hex.as_str().expect("hex")).expect("hex");
            if let Ok(Pushed::Complete { reply: x, .. }) = r.push(&d) {
                reply = Some(x);
            }
        }
        let reply = reply.expect("the capture's fragments reassemble");
        out.put("a2s_reply", &format!("a2s-reassembled-{name}"), &reply);
    }
}

fn a2s_responder(flavor: Flavor, max_reply_bytes: usize) -> Responder {
    let mut config = ResponderConfig::default();
    config.a2s.flavor = flavor;
    config.a2s.max_reply_bytes = max_reply_bytes;
    Responder::new(config, [7; 32], Instant::now())
}

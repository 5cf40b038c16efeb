//! Seed inputs that need the encoders: what the clients send and what a responder answers
//! them from `tests/data/state.json`, for GQP and the OGP v0.02 draft. Run by
//! `fuzz/seeds.py` (`cargo run --release --example gen_seeds -- fuzz/corpus`); writes
//! `gen-*` files into `<corpus>/{gqp_query,gqp_reply,ogp_draft_datagram}/`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ogp_fuzz::state_status;
use ogp_proto::driver::QueryDriver;
use ogp_proto::gqp::client::{Credentials, QueryMode};
use ogp_proto::gqp::responder::{GqpConfig, GqpUser};
use ogp_proto::gqp::{self, Command, Encoding};
use ogp_proto::ogp_draft;
use ogp_proto::responder::{Listener, Responder, ResponderConfig, Transmits};

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
    let config = ResponderConfig {
        listener,
        gqp: GqpConfig {
            users: vec![GqpUser {
                name: "admin".into(),
                password: "hunter2".into(),
            }],
            protected: vec!["rules".into()],
            max_datagram_bytes,
            ..GqpConfig::default()
        },
        ..ResponderConfig::default()
    };
    Responder::new(config, [7; 32], Instant::now())
}

/// Runs a client machine against `r` without loss; calls `seen` with every datagram each
/// way (`true`: from the client).
fn exchange<M: QueryDriver>(mut m: M, r: &mut Responder, mut seen: impl FnMut(bool, &[u8])) {
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
        r.handle(now, src, &q, state_status(), &mut out);
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
                let opts = gqp::client::QueryOptions {
                    encoding,
                    credentials: credentials.map(|(user, password)| Credentials {
                        user: user.into(),
                        password: password.into(),
                    }),
                    ..gqp::client::QueryOptions::default()
                };
                let mut r = responder(Listener::Standard, block);
                let (mut q, mut a) = (0, 0);
                exchange(
                    gqp::client::QueryMachine::new(opts, Instant::now()),
                    &mut r,
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
        let opts = gqp::client::QueryOptions {
            mode: raw,
            encoding,
            ..gqp::client::QueryOptions::default()
        };
        let mut r = responder(Listener::Standard, 1400);
        let mut n = 0;
        exchange(
            gqp::client::QueryMachine::new(opts, Instant::now()),
            &mut r,
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
        let opts = ogp_draft::client::QueryOptions {
            max_bytes_per_packet: max,
            ..ogp_draft::client::QueryOptions::default()
        };
        let mut r = responder(Listener::OgpDraft, 1400);
        let mut n = 0;
        exchange(
            ogp_draft::client::QueryMachine::new(opts, 0x1122_3344, Instant::now()),
            &mut r,
            |_, d| {
                n += 1;
                out.put("ogp_draft_datagram", &format!("state-s{s}-{n}"), d);
            },
        );
    }
}

//! A game without tokio: the responder runs on a thread of its own, and the game loop
//! publishes its status from its own thread.
//!
//! Run: `cargo run -p ogp-net --example embed_thread`, then in another terminal
//! `cargo run -- query 127.0.0.1:22222`.

use std::time::Duration;

use ogp_net::{responder, StatusCell};
use ogp_proto::responder::{Listener, ResponderConfig};
use ogp_proto::Status;

fn main() -> std::io::Result<()> {
    let status = StatusCell::new(Status::default());
    let addr = "127.0.0.1:22222".parse().expect("address");
    let server = responder::spawn_thread(
        &[(addr, Listener::Standard)],
        status.clone(),
        ResponderConfig::default(),
    )?;
    println!("answering on {:?}", server.local_addrs());
    for tick in 0u32..30 {
        status.update(|s| s.host_name = Some(format!("My server (tick {tick})").into()));
        std::thread::sleep(Duration::from_secs(1));
    }
    println!("answered {} datagrams", server.stats().sent);
    server.stop()
}

//! How a game embeds the responder: publish a status, update it from the game loop,
//! and let the responder answer queries on its own task.
//!
//! Run: `cargo run -p ogp-net --example embed`, then in another terminal
//! `cargo run -- query 127.0.0.1:22222`.

use std::time::Duration;

use ogp_net::{responder, StatusCell};
use ogp_proto::responder::ResponderConfig;
use ogp_proto::{MapInfo, Player, Status};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    // 1. The status the game publishes. Fields left `None` are simply not reported.
    let status = StatusCell::new({
        let mut status = Status::default();
        status.game_name = Some("My Game".into());
        status.host_name = Some("My Game server #1".into());
        status.map = Some(MapInfo::named("dm_arena"));
        status.slot_max = Some(16);
        status.players = Some(Vec::new());
        status
    });

    // 2. The responder: a tokio task answering on one UDP port (challenges, rate
    //    limits and size caps are on by default).
    let handle = responder::spawn(
        "127.0.0.1:22222".parse().expect("address"),
        status.clone(),
        ResponderConfig::default(),
    )
    .await?;
    println!("answering OGP queries on {}", handle.local_addr());

    // 3. The game loop updates the status whenever it likes, from any thread. Each
    //    update swaps a new snapshot in atomically; queries never block the game.
    for tick in 0u32..30 {
        status.update(|s| {
            let players = s.players.get_or_insert_with(Vec::new);
            if tick % 3 == 0 && players.len() < 16 {
                players.push({
                    let mut p = Player::default();
                    p.name = Some(format!("player{}", players.len() + 1).into());
                    p.score = Some(0);
                    p
                });
            }
            for p in players.iter_mut() {
                p.score = p.score.map(|s| s + 1);
            }
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    handle.shutdown().await
}

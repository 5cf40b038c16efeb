//! A lightweight Minecraft: Java Edition Server List Ping responder on tokio, for tests
//! and the scan benchmark: it answers the real exchange (handshake with next state 1,
//! status request, status response, ping, pong with the same payload, close), one
//! connection at a time per task, with every wait and buffer bounded. It speaks only
//! the modern ping (a legacy `FE` ping is closed at once).

use std::sync::Arc;
use std::time::Duration;

use ogp_proto::minecraft::wire;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Most bytes a client may send before its exchange is done (a handshake is under
/// 300 bytes, the request 2, the ping 10).
const MAX_IN: usize = 1024;
/// Longest silence of a client before its connection is dropped.
const IDLE: Duration = Duration::from_secs(10);

/// The status JSON a server of `motd`, `online` / `max` players and `version` answers.
pub fn status_json(motd: &str, online: u32, max: u32, version: &str, protocol: i32) -> String {
    serde_json::json!({
        "version": { "name": version, "protocol": protocol },
        "players": { "max": max, "online": online, "sample": [] },
        "description": { "text": motd },
    })
    .to_string()
}

/// Serves `json` to every connection `listener` accepts, until the task is dropped or
/// aborted.
pub async fn serve(listener: TcpListener, json: Arc<str>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors and the like: wait a little, bounded by the caller.
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        let json = json.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(IDLE * 3, answer(stream, &json)).await;
        });
    }
}

/// Length of the frame at the front of `buf`: `Some((header, body))` once whole.
fn frame(buf: &[u8]) -> Option<(usize, usize)> {
    let mut len: u32 = 0;
    for (i, b) in buf.iter().take(wire::MAX_VARINT_LEN).enumerate() {
        len |= u32::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            let body = len as usize;
            return (buf.len() >= i + 1 + body).then_some((i + 1, body));
        }
    }
    None
}

/// Answers one connection: status for the status request, the pong for the ping.
pub async fn answer(mut stream: TcpStream, json: &str) -> std::io::Result<()> {
    let _ = stream.set_nodelay(true);
    let mut buf: Vec<u8> = Vec::with_capacity(256);
    let mut chunk = [0u8; 512];
    let mut frames = 0;
    loop {
        while let Some((header, body)) = frame(&buf) {
            let packet = buf.get(header..header + body).unwrap_or_default().to_vec();
            buf.drain(..header + body);
            frames += 1;
            match (frames, packet.first()) {
                // The handshake.
                (1, Some(0)) => {}
                // The status request.
                (2, Some(0)) => {
                    let mut out = Vec::with_capacity(json.len() + 8);
                    wire::encode_status(&mut out, json);
                    stream.write_all(&out).await?;
                }
                // The ping: the pong carries its payload, then the server closes.
                (3, Some(1)) => {
                    let mut out = Vec::with_capacity(body + 1);
                    wire::write_frame(&mut out, &packet);
                    stream.write_all(&out).await?;
                    return Ok(());
                }
                _ => return Ok(()),
            }
        }
        if buf.first() == Some(&0xfe) || buf.len() > MAX_IN {
            return Ok(());
        }
        let n = match tokio::time::timeout(IDLE, stream.read(&mut chunk)).await {
            Ok(r) => r?,
            Err(_) => return Ok(()),
        };
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(chunk.get(..n).unwrap_or_default());
    }
}

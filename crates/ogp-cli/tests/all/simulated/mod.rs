//! What the master's test files with simulated servers in its database share: a module
//! apart from `common`, so that the other test files do not link `ogp-master`.

use std::time::Duration;

use crate::common::master::{runtime, wait_for, Master};
use crate::common::TempDir;

/// `ogp master` with `config` (TOML, after `allow_private = true`) and `servers`
/// simulated servers in its database (`Store::insert_simulated_with`: each status padded
/// by `status_bytes`), once its list holds them; in a directory of its own.
pub fn with_simulated(
    label: &str,
    config: &str,
    servers: u32,
    status_bytes: usize,
) -> (Master, TempDir) {
    let dir = TempDir::new(label);
    let db = format!("sqlite://{}", dir.0.join("m.db").display());
    runtime().block_on(async {
        let store = ogp_master::store::Store::open(&db).await.unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        store
            .insert_simulated_with(servers, now, status_bytes)
            .await
            .unwrap();
    });
    let config = format!("allow_private = true\n{config}");
    let m = Master::with_config(&dir.0, "master", &config, &["--db", &db]);
    wait_for("the list", Duration::from_secs(20), || {
        let (_, body) = m.get("/api/v1/stats");
        body.contains(&format!("\"servers\":{servers}"))
    });
    (m, dir)
}

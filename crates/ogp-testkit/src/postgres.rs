//! A throwaway PostgreSQL cluster for tests: `initdb` and `pg_ctl` from Debian's packages
//! (`scripts/install-postgres.sh`), in a temporary directory, stopped on drop.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::interop::TempDir;

/// A throwaway PostgreSQL cluster in a temporary directory (run as the `postgres` user
/// when the tests run as root, as initdb requires).
pub struct Cluster {
    dir: TempDir,
    bin: PathBuf,
    port: u16,
}

fn as_postgres(bin: &Path, tool: &str) -> Command {
    // the effective user, from `id -u`
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0\n"))
        .unwrap_or(false);
    if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(bin.join(tool));
        c
    } else {
        Command::new(bin.join(tool))
    }
}

impl Cluster {
    /// Starts a cluster on a free port of 127.0.0.1. Panics (with what to run) when
    /// PostgreSQL is not installed.
    pub fn start() -> Self {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL is not installed: run scripts/install-postgres.sh")
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|p| p.join("initdb").exists())
            .max()
            .expect("no initdb: run scripts/install-postgres.sh");
        let dir = TempDir::new("pg");
        let data = dir.0.join("data");
        let _ = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(&dir.0)
            .status();
        let ok = as_postgres(&bin, "initdb")
            .args([
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--no-sync",
                "-D",
            ])
            .arg(&data)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(ok.success(), "initdb failed");
        // A free port can be taken between finding it and PostgreSQL binding it (other
        // tests start servers at the same time): start again on another one then.
        let log = dir.0.join("pg.log");
        let mut tries = 0;
        let port = loop {
            tries += 1;
            let port = crate::interop::free_port();
            let opts = format!(
                "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50",
                dir.0.display()
            );
            let _ = std::fs::remove_file(&log);
            let ok = as_postgres(&bin, "pg_ctl")
                .args(["-w", "-t", "30", "-D"])
                .arg(&data)
                .args(["-l"])
                .arg(&log)
                .args(["-o", &opts, "start"])
                .stdout(Stdio::null())
                .status()
                .unwrap();
            if ok.success() {
                break port;
            }
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            assert!(
                tries < 5 && text.contains("Address already in use"),
                "pg_ctl start failed: {text}"
            );
        };
        Self { dir, bin, port }
    }

    /// The rows `sql` returns, through `psql` (unaligned: a line per row, `|` between
    /// columns).
    pub fn query(&self, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-X",
                "-A",
                "-t",
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-d",
                "postgres",
            ])
            .args(["-p", &self.port.to_string(), "-c", sql])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Its URL, as `ogp master --db` takes it.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = as_postgres(&self.bin, "pg_ctl")
            .args(["-m", "immediate", "-D"])
            .arg(self.dir.0.join("data"))
            .arg("stop")
            .stdout(Stdio::null())
            .status();
    }
}

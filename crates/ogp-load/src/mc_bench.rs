//! `ogp-load minecraft`: 10,000 Minecraft: Java Edition status queries against loopback
//! servers, `ogp scan` side by side with mcstatus in its fastest bulk form (asyncio,
//! `JavaServer.async_status()` under a semaphore: `tests/interop/mcstatus_bulk.py`), on
//! the same targets, in one run.
//!
//! The servers run in child processes of this binary (`ogp-load mc-serve`, up to
//! `--per-process` listeners each on one thread), each child on its own loopback
//! address 127.79.k.1, ports 10000 and up (below the ephemeral range): every port a
//! TCP listener answering the real Server List Ping exchange (handshake, status
//! request, status JSON, ping, pong: `ogp_testkit::slp`), with a JSON of its own (the
//! online count is the port's index, so that an answer is the target's).
//!
//! Then the real `ogp` binary scans the list (`ogp scan --json --protocol minecraft …`)
//! at a few `--max-in-flight` values, its peak resident set (VmHWM) sampled from /proc
//! every 10 ms, and mcstatus reads the same list at a few concurrencies; the best run
//! of each counts. CPU per target is the scanner's user + system time over the targets.
//! Every loop is bounded in count and time; children are killed when dropped.

use std::io::Write as _;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::common;
use crate::scan_bench::{
    find_ogp, ogp_answer, print_run, run_child, start_children, RemoveDir, Responders, Run,
};

/// First port of every server child.
const FIRST_PORT: u16 = 10_000;

/// Options of `ogp-load minecraft`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Targets (servers), one listener each (1–100,000).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub targets: u32,
    /// `ogp scan --max-in-flight` values tried (the best run counts).
    #[arg(long, default_value = "256,1024,2048", value_delimiter = ',')]
    pub max_in_flight: Vec<u32>,
    /// `ogp scan --rate` (a connection takes a token, as a datagram does; on loopback
    /// the internet's cap is lifted).
    #[arg(long, default_value_t = 100_000)]
    pub rate: u32,
    /// mcstatus concurrencies tried (the semaphore; the best run counts).
    #[arg(long, default_value = "100,500,1000", value_delimiter = ',')]
    pub concurrency: Vec<u32>,
    /// Listeners per server child process (1–15,000).
    #[arg(long, default_value_t = 5_000, value_parser = clap::value_parser!(u32).range(1..=15_000))]
    pub per_process: u32,
    /// The `ogp` binary (default: next to this one).
    #[arg(long, value_name = "PATH")]
    pub ogp_bin: Option<PathBuf>,
    /// The Python with mcstatus (default: the interop venv, target/interop/venv).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Skip the mcstatus comparison.
    #[arg(long)]
    pub no_mcstatus: bool,
}

/// Options of the internal `ogp-load mc-serve`.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Loopback address to listen on.
    #[arg(long)]
    pub ip: Ipv4Addr,
    /// Listeners (ports FIRST_PORT…).
    #[arg(long)]
    pub count: u32,
    /// Index of the first (the online count of its status).
    #[arg(long, default_value_t = 0)]
    pub offset: u64,
}

/// The loopback network of the Minecraft servers: 127.79.k.1 (the scan benchmark's
/// farms use 127.77 and 127.78).
const MC_NET: u8 = 79;

/// `ogp-load mc-serve`: binds the listeners, prints `ready <bound> <failed,…>`, and
/// serves until standard input closes (or an hour passes).
pub fn serve(args: &ServeArgs) -> Result<()> {
    // A listener and an accepted connection each hold a descriptor.
    let _ = ogp_net::scan::raise_open_file_limit(args.count as usize * 2);
    crate::scan_bench::serve_each(args.ip, args.count, args.offset, |addr, index| async move {
        let json: Arc<str> = ogp_testkit::slp::status_json(
            &format!("bench server {index}"),
            u32::try_from(index).unwrap_or(u32::MAX),
            100_000,
            "1.20.1",
            763,
        )
        .into();
        let l = tokio::net::TcpListener::bind(addr).await?;
        Ok(tokio::spawn(ogp_testkit::slp::serve(l, json)))
    })
}

/// One server child and the ports it serves.
fn start_servers(args: &Args) -> Result<Vec<Responders>> {
    start_children(
        "mc-serve",
        &[],
        args.targets,
        args.per_process,
        MC_NET,
        "server",
    )
}

fn mcstatus_answer(line: &str) -> bool {
    line.starts_with("ok ")
}

fn best(runs: &[(u32, Run)]) -> Option<&(u32, Run)> {
    runs.iter().max_by(|a, b| {
        (a.1.answered, -a.1.seconds)
            .partial_cmp(&(b.1.answered, -b.1.seconds))
            .unwrap_or(std::cmp::Ordering::Equal)
    })
}

/// `ogp-load minecraft`.
pub fn run(args: &Args) -> Result<()> {
    let ogp = find_ogp(args.ogp_bin.as_deref())?;
    let join = |v: &[u32]| {
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    common::print_command(
        "minecraft",
        &format!(
            "--targets {} --max-in-flight {} --rate {} --concurrency {} --per-process {}{}",
            args.targets,
            join(&args.max_in_flight),
            args.rate,
            join(&args.concurrency),
            args.per_process,
            if args.no_mcstatus {
                " --no-mcstatus"
            } else {
                ""
            },
        ),
    );
    common::print_load("before");
    let t = Instant::now();
    let children = start_servers(args)?;
    println!(
        "{} server child process(es) ready in {:.1} s",
        children.len(),
        t.elapsed().as_secs_f64()
    );
    let farm: Vec<u32> = children.iter().map(|c| c.kid.0.id()).collect();
    let dir = std::env::temp_dir().join(format!("ogp-load-mc-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let _cleanup = RemoveDir(dir.clone());
    let list = dir.join("targets.txt");
    let mut n = 0u64;
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&list)?);
        for c in &children {
            for j in (0..c.count).filter(|j| !c.failed.contains(j)) {
                writeln!(f, "{}:{}", c.ip, u32::from(FIRST_PORT) + j)?;
                n += 1;
            }
        }
        f.flush()?;
    }
    println!("{n} targets in {}", list.display());
    let limit = Duration::from_secs(600);
    let mut ours = Vec::new();
    for m in &args.max_in_flight {
        let mut cmd = Command::new(&ogp);
        cmd.args(["scan", "--json", "--no-progress", "--protocol", "minecraft"])
            .args(["--rate", &args.rate.to_string()])
            .args(["--max-in-flight", &m.to_string()])
            .arg(&list);
        let r = run_child(cmd, n, limit, ogp_answer, &farm)?;
        print_run(&format!("ogp scan --max-in-flight {m}"), &r);
        ours.push((*m, r));
    }
    let mut theirs = Vec::new();
    if !args.no_mcstatus {
        let py = match &args.python {
            Some(p) => p.clone(),
            None => ogp_testkit::interop::venv_python("mcstatus", "mcstatus", "14.2.0"),
        };
        let script = ogp_testkit::interop::script("tests/interop/mcstatus_bulk.py");
        for c in &args.concurrency {
            let mut cmd = Command::new(&py);
            cmd.arg(&script).arg(&list).arg(c.to_string()).arg("10");
            let r = run_child(cmd, n, limit, mcstatus_answer, &farm)?;
            print_run(&format!("mcstatus async, concurrency {c}"), &r);
            theirs.push((*c, r));
        }
    }
    println!();
    if let Some((m, r)) = best(&ours) {
        println!(
            "ogp scan (best, --max-in-flight {m}): {} of {n} answered in {:.2} s, peak RSS {}, CPU {:.1} µs/target; {}",
            r.answered,
            r.seconds,
            r.peak_kb.map_or("?".into(), common::mb),
            r.cpu.map_or(f64::NAN, |c| c.as_secs_f64() * 1e6 / n.max(1) as f64),
            r.summary
        );
    }
    if let Some((c, r)) = best(&theirs) {
        println!(
            "mcstatus (best, concurrency {c}): {} of {n} answered in {:.2} s, peak RSS {}, CPU {:.1} µs/target",
            r.answered,
            r.seconds,
            r.peak_kb.map_or("?".into(), common::mb),
            r.cpu.map_or(f64::NAN, |c| c.as_secs_f64() * 1e6 / n.max(1) as f64),
        );
    }
    common::print_load("after");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_told_from_failures() {
        assert!(mcstatus_answer("ok 127.79.0.1:10000 0/100000"));
        assert!(!mcstatus_answer("err 127.79.0.1:10001 TimeoutError"));
        assert_eq!(
            crate::scan_bench::child_ip(MC_NET, 251),
            Ipv4Addr::new(127, 79, 1, 2)
        );
    }
}

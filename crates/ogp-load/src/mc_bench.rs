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

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use anyhow::Result;

use crate::scan_bench::ogp_answer;
use crate::{common, farm};

/// Options of `ogp-load minecraft`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub farm: farm::FarmArgs,
    /// mcstatus concurrencies tried (the semaphore; the best run counts).
    #[arg(long, default_value = "100,500,1000", value_delimiter = ',')]
    pub concurrency: Vec<u32>,
    /// The Python with mcstatus (default: the interop venv, target/interop/venv).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Skip the mcstatus comparison.
    #[arg(long)]
    pub no_mcstatus: bool,
}

/// The loopback network of the Minecraft servers: 127.79.k.1 (the scan benchmark's
/// farms use 127.77 and 127.78).
const MC_NET: u8 = 79;

/// `ogp-load mc-serve`: binds the listeners, prints `ready <bound> <failed,…>`, and
/// serves until standard input closes (or an hour passes).
pub fn serve(args: &farm::ChildArgs) -> Result<()> {
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

fn mcstatus_answer(line: &str) -> bool {
    line.starts_with("ok ")
}

/// `ogp-load minecraft`.
pub fn run(args: &Args) -> Result<()> {
    common::print_command(
        "minecraft",
        &format!(
            "{} --concurrency {}{}",
            args.farm.spelled(),
            farm::join(&args.concurrency),
            if args.no_mcstatus {
                " --no-mcstatus"
            } else {
                ""
            },
        ),
    );
    common::print_load("before");
    let farm = farm::start_farm("mc-serve", MC_NET, &args.farm)?;
    let (list, n) = (&farm.list, farm.targets);
    let ours = farm::ogp_scans(&args.farm, &farm, "minecraft", ogp_answer)?;
    let theirs = if args.no_mcstatus {
        Vec::new()
    } else {
        let py = match &args.python {
            Some(p) => p.clone(),
            None => ogp_testkit::interop::venv_python("mcstatus", "mcstatus", "14.2.0"),
        };
        let script = ogp_testkit::interop::script("tests/interop/mcstatus_bulk.py");
        farm::client_runs(
            &farm,
            "mcstatus async",
            &args.concurrency,
            mcstatus_answer,
            |c| {
                let mut cmd = Command::new(&py);
                cmd.arg(&script).arg(list).arg(c.to_string()).arg("10");
                cmd
            },
        )?
    };
    println!();
    if let Some((m, r)) = farm::best_run(&ours) {
        println!(
            "ogp scan (best, --max-in-flight {m}): {} of {n} answered in {:.2} s, peak RSS {}, CPU {:.1} µs/target; {}",
            r.answered,
            r.seconds,
            r.peak_kb.map_or("?".into(), common::mb),
            r.cpu.map_or(f64::NAN, |c| c.as_secs_f64() * 1e6 / n.max(1) as f64),
            r.summary
        );
    }
    if let Some((c, r)) = farm::best_run(&theirs) {
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
    use std::net::Ipv4Addr;

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

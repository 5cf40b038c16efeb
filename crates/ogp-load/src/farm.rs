//! The TCP farms side by side with another client (`minecraft`, `fivem`): the farm
//! children, their list, the `ogp scan` runs and the other client's runs, the best run.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use crate::scan_bench::{
    find_ogp, print_run, run_child, start_children, write_list, RemoveDir, Responders, Run,
};

/// Options of a farm child (`mc-serve`, `fivem-serve`).
#[derive(clap::Args, Debug)]
pub struct ChildArgs {
    /// Loopback address to listen on.
    #[arg(long)]
    pub ip: std::net::Ipv4Addr,
    /// Servers (ports 10000…).
    #[arg(long)]
    pub count: u32,
    /// Index of the first in the whole list.
    #[arg(long, default_value_t = 0)]
    pub offset: u64,
}

/// What a TCP farm benchmark sets for the farm and for `ogp scan`.
#[derive(clap::Args, Debug)]
pub struct FarmArgs {
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
    /// Listeners per server child process (1–15,000).
    #[arg(long, default_value_t = 5_000, value_parser = clap::value_parser!(u32).range(1..=15_000))]
    pub per_process: u32,
    /// The `ogp` binary (default: next to this one).
    #[arg(long, value_name = "PATH")]
    pub ogp_bin: Option<PathBuf>,
}

/// Numbers joined by commas, as the options take them.
pub fn join(v: &[u32]) -> String {
    v.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

impl FarmArgs {
    /// The options spelled out, for [`print_command`](crate::common::print_command).
    pub fn spelled(&self) -> String {
        format!(
            "--targets {} --max-in-flight {} --rate {} --per-process {}",
            self.targets,
            join(&self.max_in_flight),
            self.rate,
            self.per_process
        )
    }
}

/// A running farm and the list of its targets (`HOST:PORT` lines).
pub struct Farm {
    /// The server children (killed when dropped).
    _children: Vec<Responders>,
    /// The children's process ids (their CPU is read meanwhile).
    pub pids: Vec<u32>,
    pub list: PathBuf,
    pub targets: u64,
    _dir: RemoveDir,
}

/// Starts `args.targets` servers in children `ogp-load SUBCOMMAND` on 127.`net`.k.1 and
/// writes their list.
pub fn start_farm(subcommand: &str, net: u8, args: &FarmArgs) -> Result<Farm> {
    let t = std::time::Instant::now();
    let children = start_children(
        subcommand,
        &[],
        args.targets,
        args.per_process,
        net,
        "server",
    )?;
    println!(
        "{} server child process(es) ready in {:.1} s",
        children.len(),
        t.elapsed().as_secs_f64()
    );
    let pids = children.iter().map(|c| c.kid.0.id()).collect();
    let dir = std::env::temp_dir().join(format!("ogp-load-{subcommand}-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let list = dir.join("targets.txt");
    let targets = write_list(&children, &list, "")?;
    println!("{targets} targets in {}", list.display());
    Ok(Farm {
        _children: children,
        pids,
        list,
        targets,
        _dir: RemoveDir(dir),
    })
}

/// `ogp scan --json --protocol PROTOCOL` over the farm at each `--max-in-flight`;
/// `is_read` tells a target read from a line.
pub fn ogp_scans(
    args: &FarmArgs,
    farm: &Farm,
    protocol: &str,
    is_read: fn(&str) -> bool,
) -> Result<Vec<(u32, Run)>> {
    let ogp = find_ogp(args.ogp_bin.as_deref())?;
    let mut runs = Vec::new();
    for m in &args.max_in_flight {
        let mut cmd = std::process::Command::new(&ogp);
        cmd.args(["scan", "--json", "--no-progress", "--protocol", protocol])
            .args(["--rate", &args.rate.to_string()])
            .args(["--max-in-flight", &m.to_string()])
            .arg(&farm.list);
        let r = run_child(cmd, farm.targets, FARM_LIMIT, is_read, &farm.pids)?;
        print_run(&format!("ogp scan --max-in-flight {m}"), &r);
        runs.push((*m, r));
    }
    Ok(runs)
}

/// The longest a client run may take.
pub const FARM_LIMIT: Duration = Duration::from_secs(600);

/// The run that read the most targets, the faster of equals.
pub fn best_run(runs: &[(u32, Run)]) -> Option<&(u32, Run)> {
    runs.iter().max_by(|a, b| {
        (a.1.answered, -a.1.seconds)
            .partial_cmp(&(b.1.answered, -b.1.seconds))
            .unwrap_or(std::cmp::Ordering::Equal)
    })
}

/// Another client over the farm at each concurrency: `command(C)` is its command line;
/// `is_read` tells a target read from a line of its output.
pub fn client_runs(
    farm: &Farm,
    label: &str,
    concurrency: &[u32],
    is_read: fn(&str) -> bool,
    command: impl Fn(u32) -> std::process::Command,
) -> Result<Vec<(u32, Run)>> {
    let mut runs = Vec::new();
    for &c in concurrency {
        let r = run_child(command(c), farm.targets, FARM_LIMIT, is_read, &farm.pids)?;
        print_run(&format!("{label}, concurrency {c}"), &r);
        runs.push((c, r));
    }
    Ok(runs)
}

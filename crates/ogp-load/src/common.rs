//! What both measurements share: the served status, CPU and load readings from /proc,
//! and the exact command line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result};
use ogp_proto::Status;

/// The state file every measurement serves (the project's example status).
pub const STATE_JSON: &str = include_str!("../../ogp-proto/tests/data/state.json");

/// The served status.
pub fn status() -> Result<Status> {
    Status::from_json(STATE_JSON).context("parsing the embedded state.json")
}

/// kB as megabytes with one decimal.
pub fn mb(kb: u64) -> String {
    format!("{:.1} MB", kb as f64 / 1024.0)
}

/// The VmHWM and VmRSS lines of `/proc/<pid>/status`, in kB.
pub fn memory_kb(pid: u32) -> Result<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    let field = |name: &str| -> Option<u64> {
        text.lines()
            .find(|l| l.starts_with(name))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    Ok((
        field("VmHWM:").context("no VmHWM")?,
        field("VmRSS:").context("no VmRSS")?,
    ))
}

/// CPU time of a running process (user + system, all threads), from
/// `/proc/<pid>/stat` in clock ticks of 10 ms.
pub fn process_cpu(pid: u32) -> Option<Duration> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command in parentheses: state is field 3; utime and stime are 14 and 15.
    let f: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// `/proc/self/task/<tid>/schedstat` of the calling thread, to be read from any thread.
pub fn this_thread_schedstat_path() -> Option<PathBuf> {
    // /proc/thread-self -> "<pid>/task/<tid>"
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    let tid = link.file_name()?.to_str()?.to_string();
    Some(PathBuf::from(format!("/proc/self/task/{tid}/schedstat")))
}

/// CPU time a thread has run, from its schedstat file (first field, nanoseconds).
pub fn thread_cpu(path: Option<&Path>) -> Option<Duration> {
    let text = std::fs::read_to_string(path?).ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Machine-wide CPU counters from /proc/stat: (busy, total) in clock ticks over all
/// cores.
#[derive(Debug, Clone, Copy)]
pub struct MachineCpu {
    busy: u64,
    total: u64,
}

impl MachineCpu {
    /// Reads /proc/stat.
    pub fn read() -> Option<Self> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        let line = text.lines().next()?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        // user nice system idle iowait irq softirq steal (guest is already in user)
        let field = |i: usize| v.get(i).copied().unwrap_or(0);
        let idle = field(3) + field(4);
        let total: u64 = (0..8).map(field).sum();
        Some(Self {
            busy: total.saturating_sub(idle),
            total,
        })
    }

    /// Cores busy on average between `earlier` and `self` (0..=number of cores).
    pub fn busy_cores_since(&self, earlier: &Self) -> f64 {
        let total = self.total.saturating_sub(earlier.total) as f64;
        let busy = self.busy.saturating_sub(earlier.busy) as f64;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        if total > 0.0 {
            busy / total * cores
        } else {
            0.0
        }
    }
}

/// The load averages, as `uptime` shows them.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// Other processes whose command line mentions "fuzz" (a fuzzer loads a core), as
/// "pid name" strings. Reads /proc only.
pub fn fuzzers() -> Vec<String> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in dir.flatten().take(100_000) {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmd: String = String::from_utf8_lossy(&cmd).replace('\0', " ");
        // the `fuzz` subcommand of cargo, libFuzzer binaries, fuzz scripts; not grep
        if cmd.contains("fuzz") && !cmd.starts_with("grep") {
            let short: String = cmd.chars().take(80).collect();
            found.push(format!("{pid} {}", short.trim()));
        }
    }
    found
}

/// Prints the machine load next to a measurement and warns about fuzzers.
pub fn print_load(when: &str) {
    println!("load average {when}: {}", loadavg());
    let f = fuzzers();
    if !f.is_empty() {
        println!(
            "WARNING: {} fuzz process(es) running; numbers may be low:",
            f.len()
        );
        for p in f.iter().take(5) {
            println!("  {p}");
        }
    }
}

/// The command line this run was started with, and the equivalent `cargo run`.
pub fn print_command(sub: &str, args: &str) {
    let argv: Vec<String> = std::env::args().collect();
    println!("command: {}", argv.join(" "));
    println!("equivalent: cargo run --profile dist -p ogp-load -- {sub} {args}");
}

/// Median of some values (NaN for none).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v.get(n / 2).copied().unwrap_or(f64::NAN),
        n => {
            let a = v.get(n / 2 - 1).copied().unwrap_or(f64::NAN);
            let b = v.get(n / 2).copied().unwrap_or(f64::NAN);
            (a + b) / 2.0
        }
    }
}

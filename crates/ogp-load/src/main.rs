//! `ogp-load`: load measurements of the OGP responder.
//!
//! * `ogp-load responder`: replies per second one responder core sustains to full
//!   default queries with valid challenges, against a raw UDP echo baseline run the same
//!   way (same runtime, same socket type, same datagram sizes).
//! * `ogp-load sources`: peak and final memory of an `ogp serve` process after queries
//!   from many distinct source addresses.
//! * `ogp-load scan`: targets per second and peak memory of `ogp scan` over many
//!   loopback responders, against qstat on the same list.
//!
//! * `ogp-load flood`: an `ogp serve` process under a flood from 100,000 spoofed
//!   sources, with a legitimate client's answers counted.
//! * `ogp-load master`: the master server with 10,000 live and 100,000 simulated
//!   servers: poll cycles, API latency, Valve list pages/s, memory.
//! * `ogp-load fivem`: `ogp scan -p fivem` against gamedig over 10,000 loopback FiveM
//!   servers.
//!
//! Every loop here is bounded in count and in time. See `README.md` next to this crate.

mod common;
mod farm;
mod fivem_bench;
mod flood;
mod master_bench;
mod mc_bench;
mod replay;
mod responder_bench;
mod scan_bench;
mod sources;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Load measurements of the OGP responder (loopback only).
#[derive(Parser)]
#[command(name = "ogp-load", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replies/second of one responder core against a raw UDP echo baseline.
    Responder(responder_bench::Args),
    /// Memory (VmHWM, VmRSS) of an `ogp serve` process queried from many sources.
    Sources(sources::Args),
    /// Targets/second and peak memory of `ogp scan` over many loopback responders,
    /// against qstat at its best -maxsim.
    Scan(scan_bench::Args),
    /// The master server at scale: registrations, poll cycles, API latency over 110,000
    /// servers, Valve list pages/s, memory.
    Master(master_bench::Args),
    /// A real `ogp serve` under a flood from 100,000 spoofed sources, while a client
    /// keeps querying it: answers kept, kernel drops, memory.
    Flood(flood::Args),
    /// 10,000 Minecraft: Java Edition status queries over TCP: `ogp scan` against
    /// mcstatus (asyncio) on the same loopback servers; time, answers, peak RSS, CPU.
    Minecraft(mc_bench::Args),
    /// 10,000 FiveM servers (HTTP documents and UDP `getinfo`): `ogp scan -p fivem`
    /// against gamedig on the same loopback servers; time, servers read, peak RSS, CPU.
    Fivem(fivem_bench::Args),
    /// (internal) Serve FiveM servers for `fivem`, until standard input closes.
    #[command(hide = true)]
    FivemServe(farm::ChildArgs),
    /// (internal) Serve Minecraft listeners for `minecraft`, until standard input closes.
    #[command(hide = true)]
    McServe(farm::ChildArgs),
    /// (internal) Serve responders for `scan`, until standard input closes.
    #[command(hide = true)]
    ScanServe(scan_bench::ServeArgs),
    /// (internal) The baseline scanner `scan` measures `ogp scan` against.
    #[command(hide = true)]
    ScanBare(scan_bench::BareArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Responder(a) => responder_bench::run(&a),
        Command::Sources(a) => sources::run(&a),
        Command::Scan(a) => scan_bench::run(&a),
        Command::Master(a) => master_bench::run(&a),
        Command::Flood(a) => flood::run(&a),
        Command::ScanServe(a) => scan_bench::serve(&a),
        Command::ScanBare(a) => scan_bench::bare(&a),
        Command::Minecraft(a) => mc_bench::run(&a),
        Command::McServe(a) => mc_bench::serve(&a),
        Command::Fivem(a) => fivem_bench::run(&a),
        Command::FivemServe(a) => fivem_bench::serve(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ogp-load: {e:#}");
            ExitCode::FAILURE
        }
    }
}

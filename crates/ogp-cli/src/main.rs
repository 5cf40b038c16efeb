//! The `ogp` command-line tool: decode, query, serve and scan game-server query
//! protocols. Exit codes: 0 success, 1 no or bad answer / malformed input (one-line
//! reason on stderr), 2 bad usage.

mod decode;
mod render;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// Query, serve and decode game-server status protocols (Open Game Protocol and friends).
#[derive(Parser)]
#[command(name = "ogp", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Protocol {
    /// Open Game Protocol v1.01.
    Ogp,
}

#[derive(Subcommand)]
enum Command {
    /// Decode datagrams (hex on the command line, files, or - for stdin). Several
    /// fragments of one split answer are reassembled.
    Decode {
        /// Protocol of the datagrams.
        #[arg(long, short, value_enum, default_value = "ogp")]
        protocol: Protocol,
        /// Print JSON: answers in the state-file schema, other messages as a description.
        #[arg(long)]
        json: bool,
        /// Hex strings or files (raw bytes or hex text); - reads standard input.
        #[arg(required = true, value_name = "HEX-OR-FILE")]
        inputs: Vec<String>,
    },
    /// Run the demo: decode the bundled reference answer and show it.
    Demo,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Decode {
            protocol: Protocol::Ogp,
            json,
            inputs,
        } => run_decode(&inputs, json),
        Command::Demo => run_demo(),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ogp: {}", one_line(&e));
            ExitCode::from(1)
        }
    }
}

/// An error chain on one line: "context: cause: cause".
fn one_line(e: &anyhow::Error) -> String {
    e.chain()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

fn run_decode(args: &[String], json: bool) -> anyhow::Result<ExitCode> {
    let inputs = args
        .iter()
        .map(|a| decode::read_input(a))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let decoded = decode::decode_all(&inputs)?;
    print_items(&decoded, json)?;
    Ok(ExitCode::SUCCESS)
}

/// Writes to standard output. A closed pipe (`ogp … | head`) ends the program quietly
/// instead of panicking as `println!` would.
fn emit(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        r => Ok(r?),
    }
}

fn print_items(decoded: &decode::Decoded, json: bool) -> anyhow::Result<()> {
    for item in &decoded.items {
        if let ogp_proto::ogp::Message::Answer(a) = &item.message {
            if json {
                for w in &a.warnings {
                    eprintln!("warning: {w}");
                }
            }
        }
        if json {
            let v = decode::item_json(item);
            emit(&format!("{}\n", serde_json::to_string_pretty(&v)?))?;
        } else {
            if decoded.items.len() > 1 {
                emit(&format!("== {}\n", item.sources))?;
            }
            emit(&decode::item_text(item))?;
        }
    }
    Ok(())
}

/// The bundled demo answer: the reference OGP SDK's answer to the PHP client's full
/// query (capture sdk/02).
const DEMO_ANSWER: &[u8] =
    include_bytes!("../../ogp-proto/tests/data/ogp/sdk/02_php_full_utf8.answer.bin");

fn run_demo() -> anyhow::Result<ExitCode> {
    emit(&format!(
        "Decoding the reference OGP server's answer to a full query ({} bytes):\n\n",
        DEMO_ANSWER.len()
    ))?;
    let input = decode::Input {
        name: "demo".into(),
        bytes: DEMO_ANSWER.to_vec(),
    };
    let decoded = decode::decode_all(std::slice::from_ref(&input))?;
    print_items(&decoded, false)?;
    Ok(ExitCode::SUCCESS)
}

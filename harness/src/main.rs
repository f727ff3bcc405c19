//! `filterlab`: measures the filters and writes the report (the default
//! command), sizes filters for a workload, compares them at one (n, p).

use std::process::ExitCode;

use clap::Parser;
use filterlab_harness::cli::{Cli, run};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    // No arguments runs `report` with its defaults (what `cargo run --release` does).
    let command_line = if arguments.is_empty() {
        "filterlab report".to_owned()
    } else {
        format!("filterlab {}", arguments.join(" "))
    };
    match run(cli, &command_line) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("filterlab: error: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}

//! `pause-sweep`: the main job (`cargo run --release`). Parses the command line and hands over to
//! `workloads::sweep::execute` with the real runner; see `pause-sweep --help`.

use clap::Parser;
use std::process::ExitCode;
use workloads::cli::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    ExitCode::from(workloads::sweep::execute(
        cli,
        workloads::runner::run_workload,
    ))
}

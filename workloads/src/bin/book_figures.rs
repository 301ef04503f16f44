//! `book-figures`: draw the book's concept figures from a real heap and write them as SVG
//! (see `workloads::figures`). `cargo run --release -p workloads --bin book-figures` rewrites
//! them in `docs/src/img/`; `-- --out DIR` writes them elsewhere.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

/// Draw the book's concept figures (a real object's colored pointers in the three views, one
/// real GC cycle's phases) from a real heap, as SVG files.
#[derive(Parser)]
#[command(name = "book-figures")]
struct Cli {
    /// Directory to write the figures into (created if missing).
    #[arg(long, default_value = "docs/src/img")]
    out: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match workloads::figures::write_all(&cli.out) {
        Ok(files) => {
            for f in files {
                println!("wrote {}", f.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("book-figures: {e}");
            ExitCode::FAILURE
        }
    }
}

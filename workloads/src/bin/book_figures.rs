//! `book-figures`: draw the book's figures. The concept figures are drawn from a real heap
//! (see `workloads::figures`); the report plots are drawn by the sweep's own plot functions
//! from the run data committed under `docs/src/figures/data/` (see
//! `workloads::figures::report_plots`). `cargo run --release -p workloads --bin book-figures`
//! rewrites them all under `docs/src/`; `-- --out DIR` writes them under DIR instead, and
//! `-- --import results/<run>/results.json --as NAME.json` thins a sweep's results into a
//! data file first.

use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use workloads::figures::report_plots;

/// Draw the book's figures: the concept figures from a real heap (into OUT/img/), and the
/// report plots the book shows from the committed run data (into OUT/figures/).
#[derive(Parser)]
#[command(name = "book-figures")]
struct Cli {
    /// The book's source directory to write into: concept figures go to OUT/img/, report
    /// plots to OUT/figures/ (created if missing).
    #[arg(long, default_value = "docs/src")]
    out: PathBuf,
    /// Where the report plots' run data is.
    #[arg(long, default_value = "docs/src/figures/data")]
    data: PathBuf,
    /// A sweep's results.json to thin into a data file of DATA (named by --as) before
    /// drawing: it keeps what the plots draw and fails if a plot would change.
    #[arg(long, value_name = "RESULTS_JSON", requires = "name")]
    import: Option<PathBuf>,
    /// The data file name for --import (e.g. sweep-5s.json).
    #[arg(long = "as", value_name = "NAME")]
    name: Option<String>,
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn run(cli: &Cli) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    if let (Some(results), Some(name)) = (&cli.import, &cli.name) {
        if !name.ends_with(".json") || name.contains('/') {
            return Err(format!(
                "--as {name:?}: give a file name ending in .json, without a directory"
            ));
        }
        let text = report_plots::import(results)?;
        let path = report_plots::data_path(&cli.data, name);
        write(&path, &text)?;
        written.push(path);
    }
    written.extend(workloads::figures::write_all(&cli.out.join("img"))?);
    for (svg, text) in report_plots::render_book_plots(&cli.data)? {
        let path = cli.out.join(svg);
        write(&path, &text)?;
        written.push(path);
    }
    Ok(written)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
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

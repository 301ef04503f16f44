//! `lox-bench`: runs the Lox benchmark scripts (`workloads/lox/bench/*.lox`) under each GC
//! mode and reports the median wall-clock time per script and mode, and the ratio of the
//! collecting modes to `epsilon` (which never collects: the cost of the barriers and the
//! interpreter alone).
//!
//! ```text
//! cargo run --release -p lox --bin lox-bench -- [--runs 5] [--only fib,zoo] [--markdown]
//! ```
//!
//! Every run is a fresh `lox` process (the binary next to this one) with `--gc-stats`; runs of
//! the three modes are interleaved so that a change in machine load hits all of them alike.
//! The output of every run must equal the epsilon run's, or the driver fails.

use clap::Parser;
use lox::cli::parse_heap_size;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    name = "lox-bench",
    about = "Run the Lox benchmarks under each GC mode"
)]
struct Args {
    /// Runs per script and mode (the median is reported).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Only these scripts (comma-separated names without `.lox`).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Directory of the benchmark scripts.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/bench"))]
    dir: PathBuf,
    /// Heap for the concurrent and stw modes.
    #[arg(long, default_value = "64m", value_parser = parse_heap_size)]
    heap: u64,
    /// Heap for epsilon mode: must hold everything a script allocates.
    #[arg(long, default_value = "2g", value_parser = parse_heap_size)]
    epsilon_heap: u64,
    /// The lox binary (default: the one next to this program).
    #[arg(long)]
    lox: Option<PathBuf>,
    /// Print the table as Markdown.
    #[arg(long)]
    markdown: bool,
}

const MODES: [&str; 3] = ["epsilon", "concurrent", "stw"];

/// One run's measurements.
#[derive(Clone, Debug, Default)]
struct Run {
    seconds: f64,
    cycles: u64,
    max_pause_ms: f64,
}

fn main() {
    let args = Args::parse();
    let lox = args.lox.clone().unwrap_or_else(|| {
        std::env::current_exe()
            .expect("the path of this program")
            .with_file_name("lox")
    });
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&args.dir)
        .unwrap_or_else(|e| panic!("{}: {e}", args.dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "lox"))
        .filter(|p| args.only.is_empty() || args.only.iter().any(|o| *o == stem(p)))
        .collect();
    scripts.sort();
    assert!(!scripts.is_empty(), "no benchmark scripts selected");

    let mut rows = Vec::new();
    for script in &scripts {
        let mut runs: Vec<Vec<Run>> = vec![Vec::new(); MODES.len()];
        let mut expected: Option<String> = None;
        for _ in 0..args.runs {
            for (m, mode) in MODES.iter().enumerate() {
                let heap = if *mode == "epsilon" {
                    args.epsilon_heap
                } else {
                    args.heap
                };
                let (run, stdout) = run_once(&lox, script, mode, heap);
                match &expected {
                    None => expected = Some(stdout),
                    Some(e) => assert_eq!(
                        e,
                        &stdout,
                        "{}: --gc {mode} printed something else",
                        script.display()
                    ),
                }
                runs[m].push(run);
            }
        }
        let medians: Vec<Run> = runs.iter().map(|r| median(r)).collect();
        eprintln!(
            "{}: {}",
            stem(script),
            MODES
                .iter()
                .zip(&medians)
                .map(|(m, r)| format!("{m} {:.3}s", r.seconds))
                .collect::<Vec<_>>()
                .join(", ")
        );
        rows.push((stem(script), medians));
    }
    print_table(&rows, args.markdown, args.heap);
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Runs `lox --gc mode --heap heap --gc-stats script`; returns its time and GC figures, and
/// its stdout.
fn run_once(lox: &Path, script: &Path, mode: &str, heap: u64) -> (Run, String) {
    let start = Instant::now();
    let output = Command::new(lox)
        .args(["--gc", mode, "--heap", &heap.to_string(), "--gc-stats"])
        .arg(script)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", lox.display()));
    let seconds = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{} --gc {mode} failed: {stderr}",
        script.display()
    );
    let stats = stderr
        .lines()
        .find(|l| l.starts_with("gc-stats:"))
        .unwrap_or_else(|| panic!("no gc-stats line in {stderr:?}"));
    let run = Run {
        seconds,
        cycles: number_before(stats, " cycles").unwrap_or(0.0) as u64,
        max_pause_ms: number_after(stats, "max ").unwrap_or(0.0),
    };
    (run, String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The number just before `marker` in `text`.
fn number_before(text: &str, marker: &str) -> Option<f64> {
    let end = text.find(marker)?;
    let start = text[..end].rfind(' ').map_or(0, |i| i + 1);
    text[start..end].parse().ok()
}

/// The number just after `marker` in `text`.
fn number_after(text: &str, marker: &str) -> Option<f64> {
    let start = text.find(marker)? + marker.len();
    let rest = &text[start..];
    let end = rest.find(' ').unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The run with the median time (with its GC figures).
fn median(runs: &[Run]) -> Run {
    let mut sorted = runs.to_vec();
    sorted.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    sorted[sorted.len() / 2].clone()
}

fn print_table(rows: &[(String, Vec<Run>)], markdown: bool, heap: u64) {
    let header = [
        "script".to_string(),
        "epsilon".to_string(),
        format!("concurrent {}m", heap >> 20),
        format!("stw {}m", heap >> 20),
        "concurrent/epsilon".to_string(),
        "stw/epsilon".to_string(),
        "cycles".to_string(),
        "max pause concurrent".to_string(),
        "max pause stw".to_string(),
    ];
    let mut lines = vec![header.to_vec()];
    for (name, r) in rows {
        let (e, c, s) = (&r[0], &r[1], &r[2]);
        lines.push(vec![
            name.clone(),
            format!("{:.3} s", e.seconds),
            format!("{:.3} s", c.seconds),
            format!("{:.3} s", s.seconds),
            format!("{:.2}x", c.seconds / e.seconds),
            format!("{:.2}x", s.seconds / e.seconds),
            format!("{}", c.cycles),
            format!("{:.2} ms", c.max_pause_ms),
            format!("{:.2} ms", s.max_pause_ms),
        ]);
    }
    if markdown {
        for (i, line) in lines.iter().enumerate() {
            println!("| {} |", line.join(" | "));
            if i == 0 {
                println!("|{}", "---|".repeat(line.len()));
            }
        }
    } else {
        let widths: Vec<usize> = (0..header.len())
            .map(|c| lines.iter().map(|l| l[c].len()).max().unwrap_or(0))
            .collect();
        for line in &lines {
            let cells: Vec<String> = line
                .iter()
                .zip(&widths)
                .map(|(cell, w)| format!("{cell:>w$}"))
                .collect();
            println!("{}", cells.join("  "));
        }
    }
}

//! `lox-bench`: runs the Lox benchmark scripts (`workloads/lox/bench/*.lox`) and reports the
//! median wall-clock time of each.
//!
//! ```text
//! cargo run --release -p lox --bin lox-bench -- [--runs 5] [--only fib,zoo] [--markdown]
//! cargo run --release -p lox --bin lox-bench -- --baseline /tmp/clox [--runs 5] [--markdown]
//! ```
//!
//! - Without `--baseline`: each script under each GC mode, and the ratio of the collecting
//!   modes to `epsilon` (which never collects: the cost of the barriers and the interpreter
//!   alone).
//! - With `--baseline CLOX`: each script under the given clox binary (the book's C
//!   interpreter, built by `shared/bench/clox/build.sh`), under `lox --gc concurrent` and under
//!   `lox --gc epsilon`; the table has `lox ÷ clox` (concurrent) and `concurrent ÷ epsilon` per
//!   script, and the geometric mean of each ratio over the scripts.
//!
//! Every run is a fresh process (`lox` is the binary next to this one, run with `--gc-stats`);
//! the runs of one script are interleaved round by round, the order rotating every round, so
//! that a change in machine load hits all of them alike. Each time reported is the median of
//! the `--runs` rounds, and the ratios are ratios of those medians. The output of every run
//! must equal the first run's — a run that prints a wrong result cannot look fast — or the
//! driver fails.
//!
//! A script may ask for a bigger heap for the collecting modes than `--heap` with a line
//! `// lox-bench heap: SIZE` (a large live set).

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
    /// Compare with this clox binary instead of comparing GC modes (see the module
    /// documentation).
    #[arg(long, value_name = "CLOX")]
    baseline: Option<PathBuf>,
}

const MODES: [&str; 3] = ["epsilon", "concurrent", "stw"];

/// One run's measurements.
#[derive(Clone, Debug, Default)]
struct Run {
    seconds: f64,
    cycles: u64,
    max_pause_ms: f64,
    /// The longest time to safepoint of any pause.
    max_ttsp_ms: f64,
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
    assert!(args.runs > 0, "--runs must be at least 1");
    if let Some(clox) = &args.baseline {
        baseline(&args, &lox, clox, &scripts);
        return;
    }

    let mut rows = Vec::new();
    for script in &scripts {
        let mut runs: Vec<Vec<Run>> = vec![Vec::new(); MODES.len()];
        let mut expected: Option<String> = None;
        for _ in 0..args.runs {
            for (m, mode) in MODES.iter().enumerate() {
                let heap = if *mode == "epsilon" {
                    args.epsilon_heap
                } else {
                    script_heap(script, args.heap)
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

/// One interpreter of a `--baseline` comparison.
#[derive(Clone, Copy, Debug)]
enum Interpreter {
    Clox,
    Lox(&'static str),
}

/// `--baseline`: clox, lox concurrent and lox epsilon on every script.
fn baseline(args: &Args, lox: &Path, clox: &Path, scripts: &[PathBuf]) {
    let interpreters = [
        Interpreter::Clox,
        Interpreter::Lox("concurrent"),
        Interpreter::Lox("epsilon"),
    ];
    let mut rows = Vec::new();
    for script in scripts {
        let heap = script_heap(script, args.heap);
        let mut runs: Vec<Vec<Run>> = vec![Vec::new(); interpreters.len()];
        let mut expected: Option<(String, String)> = None;
        for round in 0..args.runs {
            for k in 0..interpreters.len() {
                let i = (round + k) % interpreters.len();
                let (name, (run, stdout)) = match interpreters[i] {
                    Interpreter::Clox => ("clox".to_string(), run_clox(clox, script)),
                    Interpreter::Lox(mode) => {
                        let heap = if mode == "epsilon" {
                            args.epsilon_heap
                        } else {
                            heap
                        };
                        (
                            format!("lox --gc {mode}"),
                            run_once(lox, script, mode, heap),
                        )
                    }
                };
                match &expected {
                    None => expected = Some((name, stdout)),
                    Some((first, e)) => assert!(
                        *e == stdout,
                        "{}: {name} printed\n{stdout}\nbut {first} printed\n{e}",
                        script.display()
                    ),
                }
                runs[i].push(run);
            }
        }
        let medians: Vec<Run> = runs.iter().map(|r| median(r)).collect();
        eprintln!(
            "{}: clox {:.3}s, concurrent {:.3}s, epsilon {:.3}s",
            stem(script),
            medians[0].seconds,
            medians[1].seconds,
            medians[2].seconds
        );
        rows.push((stem(script), heap, medians));
    }
    print_baseline_table(&rows, args.markdown, args.runs);
}

/// Runs `clox script`; returns its time and stdout.
fn run_clox(clox: &Path, script: &Path) -> (Run, String) {
    let start = Instant::now();
    let output = Command::new(clox)
        .arg(script)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", clox.display()));
    let seconds = start.elapsed().as_secs_f64();
    assert!(
        output.status.success(),
        "{} under {} failed: {}",
        script.display(),
        clox.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let run = Run {
        seconds,
        ..Run::default()
    };
    (run, String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The heap of the collecting modes for `script`: its `// lox-bench heap: SIZE` line, or
/// `default`.
fn script_heap(script: &Path, default: u64) -> u64 {
    let text =
        std::fs::read_to_string(script).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    let Some(line) = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("// lox-bench heap:"))
    else {
        return default;
    };
    let size = line.split_whitespace().next().unwrap_or("");
    parse_heap_size(size)
        .unwrap_or_else(|e| panic!("{}: bad `// lox-bench heap:` line: {e}", script.display()))
}

/// The geometric mean of positive numbers.
fn geometric_mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x.ln(), n + 1));
    (sum / n as f64).exp()
}

fn print_baseline_table(rows: &[(String, u64, Vec<Run>)], markdown: bool, runs: usize) {
    let header = [
        "script",
        "clox",
        "lox concurrent",
        "lox ÷ clox",
        "lox epsilon",
        "concurrent ÷ epsilon",
        "heap",
        "cycles",
    ]
    .map(String::from);
    let mut lines = vec![header.to_vec()];
    for (name, heap, r) in rows {
        let (clox, c, e) = (&r[0], &r[1], &r[2]);
        lines.push(vec![
            name.clone(),
            format!("{:.3} s", clox.seconds),
            format!("{:.3} s", c.seconds),
            format!("{:.2}x", c.seconds / clox.seconds),
            format!("{:.3} s", e.seconds),
            format!("{:.2}x", c.seconds / e.seconds),
            format!("{}m", heap >> 20),
            format!("{}", c.cycles),
        ]);
    }
    let lox_clox = geometric_mean(rows.iter().map(|(_, _, r)| r[1].seconds / r[0].seconds));
    let conc_eps = geometric_mean(rows.iter().map(|(_, _, r)| r[1].seconds / r[2].seconds));
    let mut last = vec![String::new(); header.len()];
    last[0] = "geometric mean".to_string();
    last[3] = format!("{lox_clox:.2}x");
    last[5] = format!("{conc_eps:.2}x");
    lines.push(last);
    print_lines(&lines, markdown);
    println!("(medians of {runs} interleaved rounds; ratios of medians)");
}

fn print_lines(lines: &[Vec<String>], markdown: bool) {
    if markdown {
        for (i, line) in lines.iter().enumerate() {
            println!("| {} |", line.join(" | "));
            if i == 0 {
                println!("|{}", "---|".repeat(line.len()));
            }
        }
    } else {
        let widths: Vec<usize> = (0..lines[0].len())
            .map(|c| {
                lines
                    .iter()
                    .map(|l| l[c].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for line in lines {
            let cells: Vec<String> = line
                .iter()
                .zip(&widths)
                .map(|(cell, w)| format!("{cell:>w$}"))
                .collect();
            println!("{}", cells.join("  "));
        }
    }
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
        max_ttsp_ms: number_after(stats, "max ttsp ").unwrap_or(0.0),
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
        "max ttsp concurrent".to_string(),
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
            format!("{:.2} ms", c.max_ttsp_ms),
        ]);
    }
    print_lines(&lines, markdown);
}

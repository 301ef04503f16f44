//! `lox-bench`: runs the Lox benchmark scripts (`workloads/lox/bench/*.lox`) and reports the
//! best (or the median) wall-clock time of each.
//!
//! ```text
//! cargo build --release -p lox    # lox and lox-bench together: it runs the lox next to it
//! target/release/lox-bench [--runs 5] [--only fib,zoo] [--markdown]
//! target/release/lox-bench --baseline /tmp/clox [--runs 5] [--markdown]
//!     [--stat best|median]
//! ```
//!
//! - Without `--baseline`: each script under each GC mode, and the ratio of the collecting
//!   modes to `epsilon` (which never collects: the cost of the barriers and the interpreter
//!   alone); with `--modes` a list of modes of one's own (`--modes
//!   concurrent,generational`), each mode's time, its ratio to the first listed, the
//!   collecting modes' cycles and their GC CPU per MiB allocated (the collector's threads'
//!   CPU time from `--gc-stats`, the median over the rounds, which load moves less than a
//!   wall time), and each further collecting mode's GC CPU as a ratio to the first's.
//! - With `--baseline CLOX`: each script under the given clox binary (the book's C
//!   interpreter, built by `shared/bench/clox/build.sh`), under `lox --gc concurrent` and under
//!   `lox --gc epsilon`; the table has `lox ÷ clox` (concurrent) and `concurrent ÷ epsilon` per
//!   script, and the geometric mean of each ratio over the scripts.
//!
//! Every run is a fresh process (`lox` is the binary next to this one, run with `--gc-stats`);
//! the runs of one script are interleaved round by round, the order rotating every round, so
//! that a change in machine load hits all of them alike. Each time reported is one statistic of
//! the `--runs` rounds, chosen by `--stat`: `best` (the default, the shortest run: what the
//! program costs when nothing else on the machine gets in its way; issue 29's targets are best
//! of 5) or `median` (the middle run: typical of a loaded machine). The ratios are ratios of
//! those times, and the Markdown footer names the statistic and the number of rounds. The output of every run
//! must equal the first run's — with `--baseline`, clox's — so that a run printing a wrong
//! result cannot look fast: otherwise the driver stops with exit status 1 and says which
//! script, which interpreter and the first line that differs.
//!
//! The scripts (each prints a check value, never a time):
//!
//! - this repository's own: `binary_trees`, `equality`, `fib`, `instantiation` (instances with
//!   two fields), `large_strings`, `method_call`, `properties`, `string_equality`, `trees`,
//!   `zoo`;
//! - patterns of the benchmark suite of *Crafting Interpreters*: `invocation` (calls of an empty
//!   function), `constructor` (a class with an empty `init()` called 30 times per iteration),
//!   `closures` (lists made of closures, folded through higher-order functions), `strings`
//!   (8-byte strings built from four 2-byte pieces and compared), `dispatch` (`super` calls
//!   through five levels of classes);
//! - classic interpreter benchmarks, written here in standard Lox (lists of instances, no
//!   arrays): `richards` (an operating system's task scheduler), `deltablue` (an incremental
//!   constraint solver), `havlak` (loops and strongly connected components of a control-flow
//!   graph), `json_tokenizer` (tokens of a JSON-like document held as a list of one-character
//!   strings), `nbody` (five bodies' orbits), `bst` (a binary search tree under insertion,
//!   lookup and deletion), `queue` (a linked deque under churn).
//!
//! A script may ask for a bigger heap for the collecting modes than `--heap` with a line
//! `// lox-bench heap: SIZE` (a large live set), and for `epsilon` than `--epsilon-heap` with
//! `// lox-bench epsilon heap: SIZE` (more allocated in all than 2 GiB). Every script takes its size from a line
//! `var N = ...;` and names a small size with `// lox-bench test: N = ...`: `tests/bench.rs`
//! runs each at that size and compares its output with `bench/expected/NAME.out` (clox's).

use clap::Parser;
use lox::cli::parse_heap_size;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant, SystemTime};

#[derive(Parser, Debug)]
#[command(
    name = "lox-bench",
    about = "Run the Lox benchmarks under each GC mode"
)]
struct Args {
    /// Runs per script and mode (rounds; `--stat` says which one is reported).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Which run of the `--runs` rounds each time is: `best` is the shortest (what the
    /// program costs when nothing else gets in the way: the default, as the targets are
    /// "best of 5"); `median` is the middle one (typical of a loaded machine; the upper
    /// middle for an even number of rounds). Ratios are ratios of these times.
    #[arg(long, value_enum, default_value_t = Stat::Best)]
    stat: Stat,
    /// Only these scripts (comma-separated names without `.lox`).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Directory of the benchmark scripts.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/bench"))]
    dir: PathBuf,
    /// Heap for the collecting modes (concurrent, stw, generational).
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
    /// The GC modes to run, comma-separated, in this order each round. The default's table
    /// compares `concurrent` and `stw` with `epsilon`; any other list gets a table of each
    /// mode's time, every mode's ratio to the first listed, each collecting mode's cycles
    /// and GC CPU per MiB allocated (median of the rounds), and each further collecting
    /// mode's GC CPU as a ratio to the first's (e.g. `--modes concurrent,generational`: the
    /// generational mode against concurrent).
    #[arg(long, value_delimiter = ',', default_values_t = MODES.map(String::from))]
    modes: Vec<String>,
}

/// The statistic that stands for a script's rounds (`--stat`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Stat {
    /// The shortest run.
    Best,
    /// The middle run (the upper middle for an even number).
    Median,
}

impl Stat {
    /// The run standing for `runs` (with its GC figures); `runs` is not empty.
    fn pick(self, runs: &[Run]) -> Run {
        let mut sorted = runs.to_vec();
        sorted.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
        match self {
            Stat::Best => sorted[0].clone(),
            Stat::Median => sorted[sorted.len() / 2].clone(),
        }
    }

    /// The footer under a table of `runs` rounds: which statistic, how many rounds.
    fn footer(self, runs: usize) -> String {
        match self {
            Stat::Best => format!("(best of {runs} interleaved rounds; ratios of the best times)"),
            Stat::Median => {
                format!("(medians of {runs} interleaved rounds; ratios of medians)")
            }
        }
    }
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
    /// Mebibytes the program allocated (`--gc-stats`).
    allocated_mib: f64,
    /// CPU time of the collector's threads (`--gc-stats`' `GC CPU`).
    gc_cpu_ms: f64,
}

impl Run {
    /// GC CPU time per mebibyte allocated, in µs (0 for a run that allocated nothing).
    fn gc_cpu_us_per_mib(&self) -> f64 {
        if self.allocated_mib > 0.0 {
            self.gc_cpu_ms * 1000.0 / self.allocated_mib
        } else {
            0.0
        }
    }
}

/// The median over `runs` of each run's GC CPU per MiB allocated: the collector's cost is
/// judged on every round, not only on the round whose time [`Stat`] picked.
fn median_gc_cpu_us_per_mib(runs: &[Run]) -> f64 {
    let mut xs: Vec<f64> = runs.iter().map(Run::gc_cpu_us_per_mib).collect();
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(0.0)
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("lox-bench: {message}");
            ExitCode::FAILURE
        }
    }
}

/// How much older than this program the `lox` next to it may be before the run warns:
/// `cargo build -p lox` links the two within seconds of each other.
const STALE_LOX_SLACK: Duration = Duration::from_secs(60);

/// Whether a `lox` built at `lox_built` predates this program, built at `bench_built`, by
/// more than [`STALE_LOX_SLACK`]. `cargo run --bin lox-bench` rebuilds this program alone: after
/// a change to the interpreter the `lox` next to it is still the one from before the change,
/// and its times are not the change's.
fn lox_looks_stale(lox_built: SystemTime, bench_built: SystemTime) -> bool {
    bench_built
        .duration_since(lox_built)
        .is_ok_and(|older| older > STALE_LOX_SLACK)
}

/// The `lox` next to this program, checked to exist; a warning on stderr when it looks older
/// than this program (see [`lox_looks_stale`]).
fn lox_next_to_this_program() -> Result<PathBuf, String> {
    let this = std::env::current_exe()
        .map_err(|e| format!("the path of this program: {e}; give --lox"))?;
    let lox = this.with_file_name("lox");
    let built = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified());
    let lox_built = built(&lox).map_err(|e| {
        format!(
            "{}: {e}; build it with `cargo build --release -p lox`, or give --lox",
            lox.display()
        )
    })?;
    if let Ok(bench_built) = built(&this) {
        if lox_looks_stale(lox_built, bench_built) {
            eprintln!(
                "lox-bench: warning: {} is older than this program, so it may not include your \
                 latest change to the interpreter (`cargo run --bin lox-bench` rebuilds only \
                 lox-bench): build both with `cargo build --release -p lox`, or give --lox",
                lox.display()
            );
        }
    }
    Ok(lox)
}

fn run(args: &Args) -> Result<(), String> {
    let lox = match &args.lox {
        Some(lox) => lox.clone(),
        None => lox_next_to_this_program()?,
    };
    let entries = std::fs::read_dir(&args.dir).map_err(|e| {
        format!(
            "{}: {e}; give the scripts' directory with --dir",
            args.dir.display()
        )
    })?;
    let mut scripts = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| format!("{}: {e}", args.dir.display()))?
            .path();
        if path.extension().is_some_and(|e| e == "lox")
            && (args.only.is_empty() || args.only.iter().any(|o| *o == stem(&path)))
        {
            scripts.push(path);
        }
    }
    scripts.sort();
    if scripts.is_empty() {
        return Err(format!(
            "no benchmark scripts selected in {} (check --dir and --only)",
            args.dir.display()
        ));
    }
    if args.runs == 0 {
        return Err("--runs must be at least 1".to_string());
    }
    check_modes(&args.modes)?;
    if let Some(clox) = &args.baseline {
        return baseline(args, &lox, clox, &scripts);
    }

    let mut rows = Vec::new();
    for script in &scripts {
        let mut runs: Vec<Vec<Run>> = vec![Vec::new(); args.modes.len()];
        let mut expected: Option<(String, String)> = None;
        for _ in 0..args.runs {
            for (m, mode) in args.modes.iter().enumerate() {
                let heap = if mode == "epsilon" {
                    script_heap(script, EPSILON_HEAP_LINE, args.epsilon_heap)?
                } else {
                    script_heap(script, HEAP_LINE, args.heap)?
                };
                let (run, stdout) = run_once(&lox, script, mode, heap)?;
                let name = format!("lox --gc {mode}");
                match &expected {
                    None => expected = Some((name, stdout)),
                    Some((first, e)) => check_same_output(script, first, e, &name, &stdout)?,
                }
                runs[m].push(run);
            }
        }
        let medians: Vec<Run> = runs.iter().map(|r| args.stat.pick(r)).collect();
        let gc_cpu: Vec<f64> = runs.iter().map(|r| median_gc_cpu_us_per_mib(r)).collect();
        eprintln!(
            "{}: {}",
            stem(script),
            args.modes
                .iter()
                .zip(&medians)
                .map(|(m, r)| format!("{m} {:.3}s", r.seconds))
                .collect::<Vec<_>>()
                .join(", ")
        );
        rows.push((stem(script), medians, gc_cpu));
    }
    if args.modes == MODES {
        let rows: Vec<_> = rows.into_iter().map(|(n, r, _)| (n, r)).collect();
        print_table(&rows, args.markdown, args.heap);
    } else {
        print_lines(&modes_table(&args.modes, &rows, args.heap), args.markdown);
    }
    println!("{}", args.stat.footer(args.runs));
    Ok(())
}

/// An error unless `stdout`, printed by `name`, equals `expected`, printed by `first` on the
/// same script: the error names the first line that differs.
fn check_same_output(
    script: &Path,
    first: &str,
    expected: &str,
    name: &str,
    stdout: &str,
) -> Result<(), String> {
    if expected == stdout {
        return Ok(());
    }
    let (mut a, mut b) = (expected.lines(), stdout.lines());
    let mut line = 1;
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            (x, y) => {
                let show =
                    |l: Option<&str>| l.map_or("(nothing)".to_string(), |l| format!("`{l}`"));
                return Err(format!(
                    "{}: {name} printed something other than {first}: at line {line} {first} \
                     printed {} and {name} printed {}. A benchmark's output must not depend on \
                     the interpreter or the GC mode: fix the interpreter, or the script if it \
                     relies on something unspecified",
                    script.display(),
                    show(x),
                    show(y)
                ));
            }
        }
    }
}

/// One interpreter of a `--baseline` comparison.
#[derive(Clone, Copy, Debug)]
enum Interpreter {
    Clox,
    Lox(&'static str),
}

/// `--baseline`: clox, lox concurrent and lox epsilon on every script. Clox runs first, so the
/// output every other run must match is clox's.
fn baseline(args: &Args, lox: &Path, clox: &Path, scripts: &[PathBuf]) -> Result<(), String> {
    let interpreters = [
        Interpreter::Clox,
        Interpreter::Lox("concurrent"),
        Interpreter::Lox("epsilon"),
    ];
    let mut rows = Vec::new();
    for script in scripts {
        let heap = script_heap(script, HEAP_LINE, args.heap)?;
        let epsilon_heap = script_heap(script, EPSILON_HEAP_LINE, args.epsilon_heap)?;
        let mut runs: Vec<Vec<Run>> = vec![Vec::new(); interpreters.len()];
        let mut expected: Option<(String, String)> = None;
        for round in 0..args.runs {
            for k in 0..interpreters.len() {
                let i = (round + k) % interpreters.len();
                let (name, (run, stdout)) = match interpreters[i] {
                    Interpreter::Clox => ("clox".to_string(), run_clox(clox, script)?),
                    Interpreter::Lox(mode) => {
                        let heap = if mode == "epsilon" {
                            epsilon_heap
                        } else {
                            heap
                        };
                        (
                            format!("lox --gc {mode}"),
                            run_once(lox, script, mode, heap)?,
                        )
                    }
                };
                match &expected {
                    None => expected = Some((name, stdout)),
                    Some((first, e)) => check_same_output(script, first, e, &name, &stdout)?,
                }
                runs[i].push(run);
            }
        }
        let medians: Vec<Run> = runs.iter().map(|r| args.stat.pick(r)).collect();
        eprintln!(
            "{}: clox {:.3}s, concurrent {:.3}s, epsilon {:.3}s",
            stem(script),
            medians[0].seconds,
            medians[1].seconds,
            medians[2].seconds
        );
        rows.push((stem(script), heap, medians));
    }
    print_baseline_table(&rows, args.markdown, args.stat.footer(args.runs));
    Ok(())
}

/// Runs `clox script`; returns its time and stdout.
fn run_clox(clox: &Path, script: &Path) -> Result<(Run, String), String> {
    let start = Instant::now();
    let output = Command::new(clox).arg(script).output().map_err(|e| {
        format!(
            "running {}: {e}; build clox with shared/bench/clox/build.sh and give its path",
            clox.display()
        )
    })?;
    let seconds = start.elapsed().as_secs_f64();
    if !output.status.success() {
        return Err(format!(
            "{} under {} failed ({}): {}",
            script.display(),
            clox.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let run = Run {
        seconds,
        ..Run::default()
    };
    Ok((run, String::from_utf8_lossy(&output.stdout).into_owned()))
}

/// The line that sets a script's heap for the collecting modes.
const HEAP_LINE: &str = "// lox-bench heap:";
/// The line that sets a script's heap for `epsilon`, which must hold all it allocates.
const EPSILON_HEAP_LINE: &str = "// lox-bench epsilon heap:";

/// The heap `script` asks for with a line `prefix SIZE`, or `default`.
fn script_heap(script: &Path, prefix: &str, default: u64) -> Result<u64, String> {
    let text = std::fs::read_to_string(script).map_err(|e| format!("{}: {e}", script.display()))?;
    let Some(line) = text.lines().find_map(|l| l.trim().strip_prefix(prefix)) else {
        return Ok(default);
    };
    let size = line.split_whitespace().next().unwrap_or("");
    parse_heap_size(size).map_err(|e| format!("{}: bad `{prefix}` line: {e}", script.display()))
}

/// The geometric mean of positive numbers.
fn geometric_mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x.ln(), n + 1));
    (sum / n as f64).exp()
}

fn print_baseline_table(rows: &[(String, u64, Vec<Run>)], markdown: bool, footer: String) {
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
    println!("{footer}");
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
fn run_once(lox: &Path, script: &Path, mode: &str, heap: u64) -> Result<(Run, String), String> {
    let start = Instant::now();
    let output = Command::new(lox)
        .args(["--gc", mode, "--heap", &heap.to_string(), "--gc-stats"])
        .arg(script)
        .output()
        .map_err(|e| {
            format!(
                "running {}: {e}; give the lox binary with --lox",
                lox.display()
            )
        })?;
    let seconds = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!(
            "{} under lox --gc {mode} failed ({}): {stderr}",
            script.display(),
            output.status
        ));
    }
    let stats = stderr
        .lines()
        .find(|l| l.starts_with("gc-stats:"))
        .ok_or_else(|| {
            format!(
                "{}: no gc-stats line in lox's stderr {stderr:?}",
                script.display()
            )
        })?;
    let run = Run {
        seconds,
        cycles: number_before(stats, " cycles").unwrap_or(0.0) as u64,
        max_pause_ms: number_after(stats, "max ").unwrap_or(0.0),
        max_ttsp_ms: number_after(stats, "max ttsp ").unwrap_or(0.0),
        allocated_mib: number_before(stats, " MiB allocated").unwrap_or(0.0),
        gc_cpu_ms: number_after(stats, "GC CPU ").unwrap_or(0.0),
    };
    Ok((run, String::from_utf8_lossy(&output.stdout).into_owned()))
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

/// The modes `lox --gc` takes.
const KNOWN_MODES: [&str; 4] = ["epsilon", "concurrent", "stw", "generational"];

/// An error unless `modes` names at least one mode, each one `lox --gc` knows, none twice.
fn check_modes(modes: &[String]) -> Result<(), String> {
    if modes.is_empty() {
        return Err(format!(
            "--modes needs at least one of {}",
            KNOWN_MODES.join(", ")
        ));
    }
    for (i, mode) in modes.iter().enumerate() {
        if !KNOWN_MODES.contains(&mode.as_str()) {
            return Err(format!(
                "--modes: unknown mode `{mode}`; give any of {}",
                KNOWN_MODES.join(", ")
            ));
        }
        if modes[..i].contains(mode) {
            return Err(format!("--modes names `{mode}` twice; give each mode once"));
        }
    }
    Ok(())
}

/// The table of a `--modes` list other than the default (first line the header): each
/// mode's time (a collecting mode's with its heap), each further mode's ratio to the first,
/// each collecting mode's cycles and GC CPU per MiB allocated (the median over the rounds,
/// `gc_cpu[m]` of a row), and each further collecting mode's GC CPU per MiB as a ratio to the
/// first collecting mode's.
fn modes_table(
    modes: &[String],
    rows: &[(String, Vec<Run>, Vec<f64>)],
    heap: u64,
) -> Vec<Vec<String>> {
    let collecting: Vec<usize> = (0..modes.len())
        .filter(|&m| modes[m] != "epsilon")
        .collect();
    let mut header = vec!["script".to_string()];
    for mode in modes {
        header.push(if mode == "epsilon" {
            mode.clone()
        } else {
            format!("{mode} {}m", heap >> 20)
        });
    }
    for mode in &modes[1..] {
        header.push(format!("{mode}/{}", modes[0]));
    }
    for &m in &collecting {
        header.push(format!("cycles {}", modes[m]));
    }
    for &m in &collecting {
        header.push(format!("GC CPU µs/MiB {}", modes[m]));
    }
    if let Some((&first, rest)) = collecting.split_first() {
        for &m in rest {
            header.push(format!("GC CPU {}/{}", modes[m], modes[first]));
        }
    }
    let mut lines = vec![header];
    for (name, r, gc_cpu) in rows {
        let mut line = vec![name.clone()];
        line.extend(r.iter().map(|run| format!("{:.3} s", run.seconds)));
        line.extend(
            r[1..]
                .iter()
                .map(|run| format!("{:.2}x", run.seconds / r[0].seconds)),
        );
        line.extend(collecting.iter().map(|&m| r[m].cycles.to_string()));
        line.extend(collecting.iter().map(|&m| format!("{:.0}", gc_cpu[m])));
        if let Some((&first, rest)) = collecting.split_first() {
            line.extend(rest.iter().map(|&m| {
                if gc_cpu[first] > 0.0 {
                    format!("{:.2}x", gc_cpu[m] / gc_cpu[first])
                } else {
                    "-".to_string()
                }
            }));
        }
        lines.push(line);
    }
    lines
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lox_built_well_before_this_program_looks_stale() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        // Linked by one `cargo build`, in either order.
        assert!(!lox_looks_stale(t, t + Duration::from_secs(2)));
        assert!(!lox_looks_stale(t + Duration::from_secs(2), t));
        // This program rebuilt alone ten minutes after the interpreter.
        assert!(lox_looks_stale(t, t + Duration::from_secs(600)));
        assert!(!lox_looks_stale(t, t + STALE_LOX_SLACK));
    }

    fn runs(seconds: &[f64]) -> Vec<Run> {
        seconds
            .iter()
            .enumerate()
            .map(|(i, &seconds)| Run {
                seconds,
                cycles: i as u64,
                ..Run::default()
            })
            .collect()
    }

    #[test]
    fn stat_best_is_the_default_and_median_is_chosen_by_name() {
        let args = Args::try_parse_from(["lox-bench"]).unwrap();
        assert_eq!(args.stat, Stat::Best);
        let args = Args::try_parse_from(["lox-bench", "--stat", "median"]).unwrap();
        assert_eq!(args.stat, Stat::Median);
        let args = Args::try_parse_from(["lox-bench", "--stat", "best"]).unwrap();
        assert_eq!(args.stat, Stat::Best);
        let error = Args::try_parse_from(["lox-bench", "--stat", "mean"])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("best") && error.contains("median"),
            "{error}"
        );
    }

    #[test]
    fn stat_picks_the_shortest_or_the_middle_run_with_its_figures() {
        let rounds = runs(&[3.0, 1.5, 9.0, 2.0, 4.0]);
        let best = Stat::Best.pick(&rounds);
        assert_eq!((best.seconds, best.cycles), (1.5, 1));
        let median = Stat::Median.pick(&rounds);
        assert_eq!((median.seconds, median.cycles), (3.0, 0));
        let even = runs(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(Stat::Median.pick(&even).seconds, 3.0);
        assert_eq!(Stat::Best.pick(&even).seconds, 1.0);
        let one = runs(&[7.0]);
        assert_eq!(Stat::Best.pick(&one).seconds, 7.0);
        assert_eq!(Stat::Median.pick(&one).seconds, 7.0);
    }

    #[test]
    fn the_footer_names_the_statistic_and_the_rounds() {
        assert_eq!(
            Stat::Best.footer(5),
            "(best of 5 interleaved rounds; ratios of the best times)"
        );
        assert_eq!(
            Stat::Median.footer(3),
            "(medians of 3 interleaved rounds; ratios of medians)"
        );
    }

    #[test]
    fn modes_default_to_the_three_and_are_checked() {
        let args = Args::try_parse_from(["lox-bench"]).unwrap();
        assert_eq!(args.modes, MODES);
        let args =
            Args::try_parse_from(["lox-bench", "--modes", "concurrent,generational"]).unwrap();
        assert_eq!(args.modes, ["concurrent", "generational"]);
        assert_eq!(check_modes(&args.modes), Ok(()));
        let error = check_modes(&["concurrent".to_string(), "gen".to_string()]).unwrap_err();
        assert!(
            error.contains("unknown mode `gen`") && error.contains("generational"),
            "{error}"
        );
        let twice = ["stw".to_string(), "stw".to_string()];
        assert!(check_modes(&twice).unwrap_err().contains("twice"));
        assert!(check_modes(&[]).unwrap_err().contains("at least one"));
    }

    #[test]
    fn a_modes_table_compares_every_mode_with_the_first() {
        let modes = [
            "epsilon".to_string(),
            "concurrent".to_string(),
            "generational".to_string(),
        ];
        let rows = vec![(
            "s".to_string(),
            vec![
                Run {
                    seconds: 1.0,
                    ..Run::default()
                },
                Run {
                    seconds: 2.0,
                    cycles: 10,
                    ..Run::default()
                },
                Run {
                    seconds: 1.5,
                    cycles: 7,
                    ..Run::default()
                },
            ],
            vec![0.0, 400.0, 100.0],
        )];
        let lines = modes_table(&modes, &rows, 64 << 20);
        assert_eq!(
            lines[0],
            [
                "script",
                "epsilon",
                "concurrent 64m",
                "generational 64m",
                "concurrent/epsilon",
                "generational/epsilon",
                "cycles concurrent",
                "cycles generational",
                "GC CPU µs/MiB concurrent",
                "GC CPU µs/MiB generational",
                "GC CPU generational/concurrent",
            ]
        );
        assert_eq!(
            lines[1],
            [
                "s", "1.000 s", "2.000 s", "1.500 s", "2.00x", "1.50x", "10", "7", "400", "100",
                "0.25x"
            ]
        );
    }

    #[test]
    fn gc_cpu_per_mib_is_read_from_the_stats_line_and_its_median_taken() {
        let line = "gc-stats: 3 cycles, 9 pauses (p50 0.001 ms, p99 0.002 ms, max 0.003 ms, \
                    max ttsp 0.001 ms), 0 stalls, 0 pacing delays, 200.0 MiB allocated, GC CPU 5.0 ms";
        let run = Run {
            allocated_mib: number_before(line, " MiB allocated").unwrap(),
            gc_cpu_ms: number_after(line, "GC CPU ").unwrap(),
            ..Run::default()
        };
        assert_eq!(run.gc_cpu_us_per_mib(), 25.0);
        let at = |gc_cpu_ms| Run {
            allocated_mib: 10.0,
            gc_cpu_ms,
            ..Run::default()
        };
        assert_eq!(
            median_gc_cpu_us_per_mib(&[at(3.0), at(1.0), at(2.0)]),
            200.0
        );
        assert_eq!(Run::default().gc_cpu_us_per_mib(), 0.0, "nothing allocated");
    }

    #[test]
    fn a_script_sets_each_heap_with_its_own_line() {
        let dir = std::env::temp_dir().join(format!("lox-bench-heap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("s.lox");
        std::fs::write(
            &script,
            "// lox-bench epsilon heap: 6g (why)\n// lox-bench heap: 256m\nprint 1;\n",
        )
        .unwrap();
        assert_eq!(script_heap(&script, HEAP_LINE, 1), Ok(256 << 20));
        assert_eq!(script_heap(&script, EPSILON_HEAP_LINE, 1), Ok(6 << 30));
        std::fs::write(&script, "print 1;\n").unwrap();
        assert_eq!(script_heap(&script, EPSILON_HEAP_LINE, 7), Ok(7));
        std::fs::write(&script, "// lox-bench epsilon heap: lots\n").unwrap();
        let error = script_heap(&script, EPSILON_HEAP_LINE, 7).unwrap_err();
        assert!(
            error.contains("bad `// lox-bench epsilon heap:` line"),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

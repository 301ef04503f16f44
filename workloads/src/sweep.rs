//! Orchestration of `pause-sweep`: run the planned [`RunConfig`]s one after another with a
//! progress bar, stop at the first run that fails, then write every output for the runs that
//! completed and print the table. [`execute`] is the whole command behind `main`, with the
//! runner passed in (the binary passes [`crate::runner::run_workload`]; tests pass fakes).
//!
//! Exit status: 0 when every run succeeded and the outputs were written; 2 when the arguments
//! are invalid or a run failed (the outputs of the runs before it are still written); 1 when
//! an output could not be written.

use crate::cli::{Cli, Command};
use crate::report::{self, format};
use crate::run_result::{RunConfig, RunResult};
use crate::summary::RunSummary;
use crate::waits::WaitKind;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Exit status: success.
pub const EXIT_OK: u8 = 0;
/// Exit status: an output could not be written.
pub const EXIT_OUTPUT: u8 = 1;
/// Exit status: invalid arguments or a failed run.
pub const EXIT_RUN: u8 = 2;

/// A run that failed.
#[derive(Clone, Debug, PartialEq)]
pub struct RunFailure {
    pub config: RunConfig,
    pub message: String,
}

/// What a sweep produced: the results of the runs that completed, in order, and the failure
/// that stopped it, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepOutcome {
    pub results: Vec<RunResult>,
    pub failure: Option<RunFailure>,
}

/// Run `configs` in order with `run`, stopping at the first failure. With `progress`, shows a
/// progress bar on stderr (hidden when stderr is not a terminal) and one line per finished run.
pub fn run_sweep<F>(configs: &[RunConfig], progress: bool, mut run: F) -> SweepOutcome
where
    F: FnMut(&RunConfig) -> Result<RunResult, String>,
{
    let bar = if progress {
        let bar = ProgressBar::new(configs.len() as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30.cyan/blue} {pos}/{len} runs  {msg}",
            )
            .expect("the template is valid")
            .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    } else {
        ProgressBar::hidden()
    };
    let mut results = Vec::with_capacity(configs.len());
    for config in configs {
        let cycles = if config.min_cycles > 0 && config.mode != crate::Mode::Epsilon {
            format!(", longer until {} complete cycles", config.min_cycles)
        } else {
            String::new()
        };
        bar.set_message(format!(
            "{} {} ({} measured{cycles})",
            config.workload,
            config.label(),
            format::duration_ns(config.duration_ms * 1_000_000)
        ));
        match run(config) {
            Ok(result) => {
                if progress {
                    bar.println(run_line(&result));
                    if let Some(text) = &result.memory_report_text {
                        bar.println(format!("Memory report, {}:\n{text}\n", result.label()));
                    }
                }
                results.push(result);
                bar.inc(1);
            }
            Err(message) => {
                bar.finish_and_clear();
                return SweepOutcome {
                    results,
                    failure: Some(RunFailure {
                        config: config.clone(),
                        message,
                    }),
                };
            }
        }
    }
    bar.finish_and_clear();
    SweepOutcome {
        results,
        failure: None,
    }
}

/// One line about a finished run: `concurrent 1G: 123 pauses, p99 180 µs, max 420 µs, longest
/// wait 3.10 ms stall, 4 allocation stalls, 1.23M ops/s, 5 cycles` (the longest wait the
/// collector imposed after it when that differs: `longest wait 18.9 ms pacing (1.00 ms pacing
/// imposed)`; the too-few-cycles warning or the `--min-cycles` extension when there is one).
pub fn run_line(r: &RunResult) -> String {
    let s = RunSummary::of(r);
    let mut line = format!("{}: {} pauses", s.label, s.pauses.count);
    if s.pauses.count > 0 {
        line += &format!(
            ", p99 {}, max {}",
            format::duration_ns(s.pauses.p99_ns),
            format::duration_ns(s.pauses.max_ns)
        );
    }
    if let Some(w) = &s.longest_wait {
        if w.kind != WaitKind::Pause {
            line += &format!(
                ", longest wait {} {}",
                format::duration_ns(w.duration_ns),
                w.kind
            );
            if let Some(i) = s.longest_wait_imposed.as_ref().filter(|i| *i != w) {
                line += &format!(
                    " ({} {} imposed)",
                    format::duration_ns(i.duration_ns),
                    i.kind
                );
            }
        }
    }
    let counted = |n: u64, what: &str| format!(", {n} {what}{}", if n == 1 { "" } else { "s" });
    if s.stalls > 0 {
        line += &counted(s.stalls, "allocation stall");
    }
    if s.pacing.count > 0 {
        line += &counted(s.pacing.count, "pacing delay");
    }
    if s.page_allocations.count > 0 {
        line += &counted(s.page_allocations.count, "slow page allocation");
    }
    line += &format!(
        ", {} ops/s, {} complete cycles",
        format::rate(s.ops_per_sec),
        s.complete_cycles
    );
    if let Some(p) = r.pages.filter(|p| p.huge_bytes > 0 || p.got_none()) {
        line += &format!(", pages {}", p.label());
    }
    if s.extended_by_ms > 0 {
        line += &format!(
            " (extended by {})",
            format::duration_ns(s.extended_by_ms * 1_000_000)
        );
    }
    if s.cycles_warning.is_some() {
        line += &format!(" {}", crate::report::table::FEW_CYCLES_MARK);
    }
    line
}

/// A UTC timestamp for directory names: `2025-01-31_12-34-56`.
pub fn timestamp(now: SystemTime) -> String {
    let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}_{:02}-{:02}-{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `results/<timestamp>` (with `-2`, `-3`, ... if that directory already exists).
pub fn default_out_dir(now: SystemTime) -> PathBuf {
    let base = Path::new("results").join(timestamp(now));
    if !base.exists() {
        return base;
    }
    (2..)
        .map(|i| PathBuf::from(format!("{}-{i}", base.display())))
        .find(|p| !p.exists())
        .expect("some suffix is free")
}

/// After the runs: write the outputs of the completed runs into `out`, print the table
/// (unless `quiet`) and the failure, and return the exit status.
pub fn finish(outcome: &SweepOutcome, out: &Path, quiet: bool) -> u8 {
    let mut status = EXIT_OK;
    if !outcome.results.is_empty() {
        match report::write_reports(out, &outcome.results) {
            Ok(files) => {
                if quiet {
                    println!("{}", files.dir.display());
                } else {
                    println!("{}", report::markdown_report(&outcome.results));
                    println!("Wrote:");
                    for f in files.all() {
                        println!("  {}", f.display());
                    }
                }
            }
            Err(e) => {
                eprintln!("pause-sweep: {e}");
                status = EXIT_OUTPUT;
            }
        }
    }
    if let Some(f) = &outcome.failure {
        let done = outcome.results.len();
        eprintln!(
            "pause-sweep: run {} {} failed: {}",
            f.config.workload,
            f.config.label(),
            f.message
        );
        if done > 0 {
            eprintln!("pause-sweep: the {done} runs before it are reported above");
        }
        status = EXIT_RUN;
    }
    status
}

/// The huge-page setting of every run of this project checked against the system before the
/// first run (`--huge-pages`, else `ZRS_HUGE_PAGES`): a setting the system does not allow is
/// an error that says what to set, never a sweep that runs on other pages than asked.
pub fn check_huge_pages(configs: &[RunConfig]) -> Result<(), String> {
    let system = gc_runtime::HugePageSystem::read();
    for c in configs.iter().filter(|c| c.jvm.is_none()) {
        let huge = match c.huge_pages {
            Some(h) => h,
            None => {
                gc_runtime::HeapConfig::from_env(c.heap_bytes)
                    .map_err(|e| e.to_string())?
                    .memory
                    .huge_pages
            }
        };
        system
            .check(huge, c.heap_bytes, None)
            .map_err(|e| format!("{} {}: {e}", c.workload, c.label()))?;
    }
    Ok(())
}

/// Warn (on stderr) about settings that make latency figures untrustworthy.
fn warn_about(configs: &[RunConfig]) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if let Some(c) = configs.iter().find(|c| c.threads as usize >= cores) {
        eprintln!(
            "pause-sweep: warning: {} mutator threads on {cores} cores: with the hiccup meter and \
             the GC threads the CPUs are oversubscribed, and scheduler delays will show up as \
             pauses and hiccups",
            c.threads
        );
    }
}

/// `pause-sweep memory`: one short run with the memory report, printed (text or JSON); with
/// `--out`, the run's outputs written there too.
fn memory<F>(args: &crate::cli::MemoryArgs, mut run: F) -> u8
where
    F: FnMut(&RunConfig) -> Result<RunResult, String>,
{
    let config = match args.config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("pause-sweep: {e}");
            return EXIT_RUN;
        }
    };
    eprintln!(
        "pause-sweep: running {} {} for {} before the memory report",
        config.workload,
        config.label(),
        format::duration_ns(config.duration_ms * 1_000_000)
    );
    let result = match run(&config) {
        Ok(r) => r,
        Err(e) => {
            eprintln!(
                "pause-sweep: run {} {} failed: {e}",
                config.workload,
                config.label()
            );
            return EXIT_RUN;
        }
    };
    eprintln!("pause-sweep: {}", run_line(&result));
    match (args.json, &result.memory_report, &result.memory_report_text) {
        (true, Some(json), _) => println!(
            "{}",
            serde_json::to_string_pretty(json).expect("JSON values serialize")
        ),
        (false, _, Some(text)) => println!("{text}"),
        _ => {
            eprintln!("pause-sweep: the run returned no memory report");
            return EXIT_RUN;
        }
    }
    match &args.out {
        Some(dir) => match report::write_reports(dir, std::slice::from_ref(&result)) {
            Ok(files) => {
                eprintln!("pause-sweep: wrote {}", files.dir.display());
                EXIT_OK
            }
            Err(e) => {
                eprintln!("pause-sweep: {e}");
                EXIT_OUTPUT
            }
        },
        None => EXIT_OK,
    }
}

/// The whole `pause-sweep` command for parsed arguments, with `run` running one workload.
pub fn execute<F>(cli: Cli, run: F) -> u8
where
    F: FnMut(&RunConfig) -> Result<RunResult, String>,
{
    let (configs, out, quiet) = match &cli.command {
        None => {
            let s = &cli.sweep;
            // The JVM runs (`--jvm`) need the output directory for their GC logs, and fail
            // here, before the first run, when there is no fit JDK.
            let out = s
                .common
                .out
                .clone()
                .unwrap_or_else(|| default_out_dir(SystemTime::now()));
            let planned = s.configs().and_then(|configs| {
                crate::jvm::sweep_runs::add_jvm_runs(configs, &s.jvm, s.java.as_deref(), &out)
            });
            match planned {
                Ok(configs) => (configs, Some(out), s.common.quiet),
                Err(e) => {
                    eprintln!("pause-sweep: {e}");
                    return EXIT_RUN;
                }
            }
        }
        Some(Command::Memory(args)) => return memory(args, run),
        Some(Command::Report(args)) => {
            let results = match report::read_results_json(&args.results) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("pause-sweep: {e}");
                    return EXIT_RUN;
                }
            };
            let out = args.out.clone().unwrap_or_else(|| {
                args.results
                    .parent()
                    .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
            });
            let outcome = SweepOutcome {
                results,
                failure: None,
            };
            return finish(&outcome, &out, args.quiet);
        }
        Some(cmd) => {
            let config = match cmd.run_config().expect("a workload subcommand") {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("pause-sweep: {e}");
                    return EXIT_RUN;
                }
            };
            let args = cmd.run_args().expect("a workload subcommand");
            (vec![config], args.common.out.clone(), args.common.quiet)
        }
    };
    warn_about(&configs);
    if let Err(e) = check_huge_pages(&configs) {
        eprintln!("pause-sweep: {e}");
        return EXIT_RUN;
    }
    let out = out.unwrap_or_else(|| default_out_dir(SystemTime::now()));
    let mut run = run;
    let outcome = run_sweep(&configs, !quiet, |c| match c.jvm {
        Some(_) => crate::jvm::twin_run::run_twin(c),
        None => run(c),
    });
    crate::jvm::sweep_runs::remove_twins(&configs);
    finish(&outcome, &out, quiet)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{sample_result, scratch_dir};
    use clap::Parser;

    fn cli(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("pause-sweep").chain(args.iter().copied())).unwrap()
    }

    /// A fake runner: the sample result for the config's mode and heap.
    fn fake(c: &RunConfig) -> Result<RunResult, String> {
        let pauses: &[u64] = match c.mode {
            crate::Mode::Stw => &[(c.heap_bytes >> 20) * 50_000],
            _ => &[100_000, 200_000, 150_000],
        };
        let mut r = sample_result(c.mode, c.heap_bytes, pauses);
        r.config = c.clone();
        Ok(r)
    }

    #[test]
    fn timestamps_are_utc_civil_time() {
        let at = |s: u64| timestamp(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01_00-00-00");
        assert_eq!(at(1_700_000_000), "2023-11-14_22-13-20");
        assert_eq!(at(951_782_400), "2000-02-29_00-00-00");
        assert_eq!(at(4_102_444_799), "2099-12-31_23-59-59");
    }

    #[test]
    fn sweep_runs_in_order_and_stops_at_the_first_failure() {
        let configs = cli(&["--heaps", "256M,1G", "--duration", "1"])
            .sweep
            .configs()
            .unwrap();
        let mut seen = Vec::new();
        let outcome = run_sweep(&configs, false, |c| {
            seen.push(c.label());
            if c.heap_bytes == 1 << 30 && c.mode == crate::Mode::Stw {
                Err("out of memory".into())
            } else {
                fake(c)
            }
        });
        assert_eq!(
            seen,
            ["concurrent 256M", "stw 256M", "concurrent 1G", "stw 1G"]
        );
        assert_eq!(outcome.results.len(), 3);
        let f = outcome.failure.unwrap();
        assert_eq!(
            (f.config.label(), f.message.as_str()),
            ("stw 1G".into(), "out of memory")
        );
    }

    #[test]
    fn execute_writes_every_output_for_a_fake_sweep() {
        let dir = scratch_dir("execute-sweep").join("out");
        let d = dir.to_str().unwrap();
        let status = execute(cli(&["--heaps", "256M,1G", "--out", d, "--quiet"]), fake);
        assert_eq!(status, EXIT_OK);
        let runs = report::read_results_json(&dir.join(report::RESULTS_JSON)).unwrap();
        assert_eq!(runs.len(), 4);
        assert_eq!(runs[3].config.label(), "stw 1G");
        let table = std::fs::read_to_string(dir.join(report::TABLE_MD)).unwrap();
        // Two stw rows in each of the seven tables (main, felt and imposed, time to
        // safepoint, waits, utilization, collector, CPU budget).
        assert_eq!(table.matches("| stw ").count(), 14, "{table}");
        for f in [
            report::PAUSE_VS_HEAP_SVG,
            report::MMU_VS_HEAP_SVG,
            report::PAUSE_TIMELINE_SVG,
            report::TRACE_JSON,
        ] {
            assert!(dir.join(f).is_file(), "{f}");
        }

        // `report` renders the same table again from results.json, into another directory.
        let again = dir.parent().unwrap().join("again");
        let status = execute(
            cli(&[
                "report",
                dir.join("results.json").to_str().unwrap(),
                "--out",
                again.to_str().unwrap(),
                "--quiet",
            ]),
            |_| unreachable!("report runs nothing"),
        );
        assert_eq!(status, EXIT_OK);
        assert_eq!(
            std::fs::read_to_string(again.join(report::TABLE_MD)).unwrap(),
            table
        );
    }

    #[test]
    fn a_failed_run_still_reports_the_runs_before_it() {
        let dir = scratch_dir("execute-partial").join("out");
        let d = dir.to_str().unwrap();
        let status = execute(cli(&["--heaps", "256M,1G", "--out", d, "-q"]), |c| {
            if c.heap_bytes == 1 << 30 {
                Err("boom".into())
            } else {
                fake(c)
            }
        });
        assert_eq!(status, EXIT_RUN);
        let runs = report::read_results_json(&dir.join(report::RESULTS_JSON)).unwrap();
        assert_eq!(runs.len(), 2);
    }

    #[test]
    fn run_line_summarizes() {
        let mut r = sample_result(
            crate::Mode::Concurrent,
            1 << 30,
            &[
                100_000, 300_000, 200_000, 100_000, 100_000, 100_000, 100_000, 100_000, 100_000,
            ],
        );
        assert_eq!(
            run_line(&r),
            "concurrent 1G: 9 pauses, p99 300 µs, max 300 µs, 12.3k ops/s, 3 complete cycles"
        );
        r.gc.stalls.push(gc_runtime::stats::StallRecord {
            thread: "mutator-0".into(),
            start_at_ns: r.measure_start_at_ns + 5_000_000,
            duration_ns: 1_500_000,
            failed: false,
        });
        r.gc.cycles.truncate(2);
        r.extended_by_ms = 500;
        assert_eq!(
            run_line(&r),
            "concurrent 1G: 9 pauses, p99 300 µs, max 300 µs, longest wait 1.50 ms stall, 1 \
             allocation stall, 12.3k ops/s, 2 complete cycles (extended by 500 ms) †"
        );
        // A pacing delay held 7 ms for 1 ms asked: the imposed longest wait follows.
        let o = crate::test_support::oversleeping_result(1 << 30);
        assert!(
            run_line(&o).contains("longest wait 7.00 ms pacing (2.00 ms pause imposed)"),
            "{}",
            run_line(&o)
        );
    }
}

//! The `pause-sweep` binary as a user runs it: help, argument errors, a short real sweep
//! with every output file, a clean failure for an impossible heap, and `report` rendering the
//! outputs from a results.json.

mod common;

use common::{pause_sweep, scratch, text};
use workloads::test_support::sample_result;
use workloads::Mode;

/// Names this file's scratch directories.
const SUITE: &str = "pause-sweep-cli";

#[test]
fn help_explains_the_sweep_and_its_outputs() {
    let out = pause_sweep(&["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for s in [
        "--heaps",
        "--modes",
        "--duration",
        "heap-churn",
        "pause-vs-heap.svg",
        "Perfetto",
    ] {
        assert!(help.contains(s), "help lacks {s}:\n{help}");
    }
    let out = pause_sweep(&["heap-churn", "--help"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("--subgraph-nodes"));
}

#[test]
fn a_short_sweep_runs_on_the_real_collector_and_writes_every_output() {
    let dir = scratch(SUITE, "real-run");
    let d = dir.to_str().unwrap();
    let out = pause_sweep(&[
        "--heaps",
        "64M",
        "--modes",
        "concurrent,stw,generational",
        "--duration",
        "0.5",
        "--out",
        d,
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let table = text(&out.stdout);
    assert!(table.contains("| concurrent   | 64M"), "{table}");
    assert!(table.contains("| stw          | 64M"), "{table}");
    assert!(table.contains("| generational | 64M"), "{table}");
    for f in [
        "results.json",
        "table.md",
        "pause-vs-heap.svg",
        "pause-timeline.svg",
        "trace.json",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let json = std::fs::read_to_string(dir.join("results.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for r in runs {
        assert!(r["operations"].as_u64().unwrap() > 0, "a run did no work");
        // The pauses say how much of their time to safepoint a mutator waited for a CPU,
        // where the kernel keeps per-thread schedstat (a pause with no mutator attached, as
        // after the run's threads detached, has no reading).
        if std::path::Path::new("/proc/thread-self/schedstat").exists() {
            let pauses = r["gc"]["pauses"].as_array().unwrap();
            let measured = r["measure_start_at_ns"].as_u64().unwrap();
            let read = |p: &serde_json::Value| p["time_to_safepoint_cpu_wait_ns"].is_u64();
            assert!(
                pauses
                    .iter()
                    .filter(|p| p["start_at_ns"].as_u64().unwrap() >= measured)
                    .any(read),
                "{pauses:?}"
            );
        }
    }
    let generational = &runs[2]["remembered_set"];
    assert!(
        generational["barrier_remembered"].is_u64(),
        "{generational}"
    );
    assert!(runs[0].get("remembered_set").is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--min-cycles` on the real collector: a 0.2 s run either reaches 3 complete cycles (extended
/// or not) or stops at the 4× limit (0.6 s of extension); the warning and the table's † follow
/// the count of complete cycles, whichever way the machine went.
#[test]
fn min_cycles_extends_a_short_run_within_its_limit() {
    let dir = scratch(SUITE, "min-cycles");
    let d = dir.to_str().unwrap();
    let out = pause_sweep(&[
        "--heaps",
        "64M",
        "--modes",
        "concurrent",
        "--duration",
        "0.2",
        "--min-cycles",
        "3",
        "--out",
        d,
        "-q",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let json = std::fs::read_to_string(dir.join("results.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let (run, summary) = (&v["runs"][0], &v["summaries"][0]);
    assert_eq!(run["config"]["min_cycles"], 3);
    let complete = summary["complete_cycles"].as_u64().unwrap();
    let extended = run["extended_by_ms"].as_u64().unwrap();
    assert!(
        extended <= 600,
        "extended by {extended} ms, past the 4× limit"
    );
    assert!(
        complete >= 3 || extended == 600,
        "{complete} complete cycles after an extension of only {extended} ms"
    );
    assert!(run["wall_ns"].as_u64().unwrap() >= (200 + extended) * 1_000_000);
    let warned = !summary["cycles_warning"].is_null();
    assert_eq!(warned, complete < 3, "{summary}");
    let table = std::fs::read_to_string(dir.join("table.md")).unwrap();
    assert_eq!(table.contains('†'), warned, "{table}");
    assert_eq!(table.contains("extended by"), extended > 0, "{table}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_impossible_heap_fails_cleanly_with_status_2() {
    let out = pause_sweep(&["heap-churn", "--heap", "64T", "--duration", "1", "-q"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_arguments_exit_2_with_a_message() {
    for (args, needle) in [
        (vec!["--heaps", "256Q"], "unknown size unit"),
        (vec!["--heaps", "3M"], "2 MiB granule"),
        (vec!["--modes", "parallel"], "parallel"),
        (vec!["--workload", "specjbb"], "specjbb"),
        (vec!["--duration", "0"], "more than 0 seconds"),
        (vec!["--min-cycles", "lots"], "--min-cycles"),
        (
            vec!["heap-churn", "--heap", "256M", "--live-mb", "256"],
            "does not fit",
        ),
    ] {
        let out = pause_sweep(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn a_malformed_environment_variable_exits_2_naming_it_and_what_to_give() {
    let dir = scratch(SUITE, "bad-env");
    let d = dir.to_str().unwrap();
    for (var, value, needles) in [
        (
            "ZRS_GC_THREADS",
            "lots",
            &["ZRS_GC_THREADS", "\"lots\"", "whole number"][..],
        ),
        (
            "ZRS_PACING_MIN_MUTATOR_SHARE",
            "1.5",
            &["pacing_min_mutator_share is 1.5", "below 1"][..],
        ),
        ("ZRS_HUGE_PAGES", "sometimes", &["ZRS_HUGE_PAGES"][..]),
        ("ZRS_GC_LOG", "verbose", &["ZRS_GC_LOG"][..]),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pause-sweep"))
            .args([
                "--heaps",
                "64M",
                "--modes",
                "stw",
                "--duration",
                "0.2",
                "--out",
                d,
            ])
            .env(var, value)
            .output()
            .expect("the binary runs");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{var}={value}: {err}");
        assert!(!err.contains("panicked"), "{var}={value}: {err}");
        for n in needles {
            assert!(err.contains(n), "{var}={value}: no {n:?} in: {err}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
#[test]
fn report_renders_every_output_from_results_json() {
    let dir = scratch(SUITE, "report");
    std::fs::create_dir_all(&dir).unwrap();
    let results = vec![
        sample_result(Mode::Concurrent, 256 << 20, &[90_000, 120_000, 100_000]),
        sample_result(Mode::Stw, 256 << 20, &[12_000_000]),
        sample_result(Mode::Concurrent, 4 << 30, &[95_000, 130_000, 110_000]),
        sample_result(Mode::Stw, 4 << 30, &[180_000_000]),
    ];
    let json = dir.join("results.json");
    workloads::report::write_results_json(&json, &results).unwrap();
    let out = pause_sweep(&["report", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("| concurrent | 4G "), "{stdout}");
    assert!(stdout.contains("## concurrent ÷ stw"), "{stdout}");
    for f in [
        "table.md",
        "pause-vs-heap.svg",
        "pause-timeline.svg",
        "trace.json",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
        assert!(stdout.contains(f), "{f} not listed");
    }
    let bad = pause_sweep(&["report", dir.join("table.md").to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("is not a pause-sweep results.json"));
}

//! `results.json`: every [`RunResult`] of a sweep (pretty-printed), with each run's
//! [`RunSummary`] beside it for readers that do not want to recompute percentiles or MMU.
//! Histograms appear as percentile summaries plus their full HdrHistogram encoding (see
//! [`crate::latency`]), so reading the file back gives the same results.

use crate::run_result::RunResult;
use crate::summary::RunSummary;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Version of the file layout; bumped when a field changes meaning.
pub const FORMAT_VERSION: u32 = 1;

/// The contents of `results.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultsFile {
    pub format_version: u32,
    /// The program that wrote it (`pause-sweep 0.1.0`).
    pub generator: String,
    pub runs: Vec<RunResult>,
    /// `summaries[i]` is derived from `runs[i]`.
    pub summaries: Vec<RunSummary>,
    /// Set when the runs hold only what the plots draw (the book's committed run data, see
    /// `crate::figures::report_plots`): what was left out. The summaries are then the full
    /// runs' and cannot be computed again from the runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinned: Option<String>,
}

impl ResultsFile {
    /// The file for `results`, with their summaries.
    pub fn new(results: &[RunResult]) -> Self {
        ResultsFile {
            format_version: FORMAT_VERSION,
            generator: format!("pause-sweep {}", env!("CARGO_PKG_VERSION")),
            runs: results.to_vec(),
            summaries: results.iter().map(RunSummary::of).collect(),
            thinned: None,
        }
    }
}

/// The pretty-printed JSON text of `results.json`.
pub fn results_json(results: &[RunResult]) -> String {
    serde_json::to_string_pretty(&ResultsFile::new(results))
        .expect("results contain only serializable values")
}

/// Write `results.json` to `path`.
pub fn write_results_json(path: &Path, results: &[RunResult]) -> std::io::Result<()> {
    let mut text = results_json(results);
    text.push('\n');
    std::fs::write(path, text)
}

/// Read the runs back from a `results.json` (summaries are recomputed by whoever needs them).
/// A file thinned for the book's plots is refused: its runs no longer give its summaries.
pub fn read_results_json(path: &Path) -> Result<Vec<RunResult>, String> {
    let file = read_results_file(path)?;
    if let Some(what) = &file.thinned {
        return Err(format!(
            "{} holds only what the book's plots draw ({what}): its tables cannot be computed \
             again from it; `cargo run --release -p workloads --bin book-figures` renders its \
             plots",
            path.display()
        ));
    }
    Ok(file.runs)
}

/// Read a whole `results.json`, runs and summaries as written, thinned or not.
pub fn read_results_file(path: &Path) -> Result<ResultsFile, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let file: ResultsFile = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a pause-sweep results.json: {e}", path.display()))?;
    if file.format_version != FORMAT_VERSION {
        return Err(format!(
            "{} has format version {}, this program reads version {FORMAT_VERSION}",
            path.display(),
            file.format_version
        ));
    }
    if file.summaries.len() != file.runs.len() {
        return Err(format!(
            "{} has {} runs but {} summaries: write it again with pause-sweep",
            path.display(),
            file.runs.len(),
            file.summaries.len()
        ));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_result::Mode;
    use crate::test_support::{sample_result, scratch_dir};

    #[test]
    fn results_round_trip_through_the_file() {
        let mut with_requests = sample_result(Mode::Concurrent, 1 << 30, &[100_000, 250_000]);
        let mut lat = crate::LatencyHistogram::new();
        for v in [10_000, 20_000, 5_000_000] {
            lat.record(v);
        }
        with_requests.request_latency = Some(lat);
        let results = vec![
            with_requests,
            sample_result(Mode::Stw, 1 << 30, &[40_000_000]),
        ];
        let dir = scratch_dir("json-round-trip");
        let path = dir.join("results.json");
        write_results_json(&path, &results).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("{\n  \"format_version\": 1,"),
            "pretty-printed"
        );
        let back = read_results_json(&path).unwrap();
        assert_eq!(back, results);

        // What a reader without this crate sees.
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let run = &v["runs"][0];
        assert_eq!(run["config"]["mode"], "concurrent");
        assert_eq!(run["config"]["workload"], "heap-churn");
        assert_eq!(run["config"]["heap_bytes"], 1u64 << 30);
        assert_eq!(run["gc"]["pauses"][1]["total_ns"], 250_000);
        assert_eq!(run["gc"]["pauses"][0]["kind"], "Pause Mark Start");
        assert_eq!(run["hiccup"]["corrected"]["count"], 100);
        assert_eq!(run["control_hiccup"]["overshoot_ns"][0], 200_000);
        assert_eq!(v["summaries"][0]["control_hiccup"]["count"], 100);
        assert_eq!(run["request_latency"]["count"], 3);
        assert_eq!(v["runs"][1]["request_latency"], serde_json::Value::Null);
        assert_eq!(v["summaries"][0]["pauses"]["max_ns"], 250_000);
        assert_eq!(v["summaries"][1]["label"], "stw 1G");
        // What the program felt, per run.
        let s0 = &v["summaries"][0];
        assert_eq!(s0["longest_wait"]["kind"], "pause");
        assert_eq!(s0["longest_wait"]["duration_ns"], 250_000);
        assert_eq!(s0["longest_wait"]["thread"], serde_json::Value::Null);
        assert_eq!(s0["total_wait_ns"], 350_000);
        assert_eq!(s0["wait_by_thread"]["mutator-0"], 350_000);
        assert_eq!(s0["pacing"]["count"], 0);
        assert_eq!(s0["longest_stall_ns"], 0);
        assert_eq!(s0["mmu"].as_array().unwrap().len(), 3);
        // What the collector imposed, beside it: the same with no pacing delay.
        assert_eq!(s0["mmu_imposed"], s0["mmu"]);
        assert_eq!(s0["longest_wait_imposed"], s0["longest_wait"]);
        assert_eq!(s0["imposed_unavailable"], serde_json::Value::Null);
        assert_eq!(s0["complete_cycles"], 1);
        assert!(s0["cycles_warning"]
            .as_str()
            .unwrap()
            .contains("only 1 complete GC cycle"));
        assert_eq!(run["config"]["min_cycles"], 0);
        assert_eq!(run["extended_by_ms"], 0);
    }

    /// The felt and imposed figures of a run where they differ, as a reader of the file sees
    /// them (see `oversleeping_result`), and a run whose imposed figures are not available.
    #[test]
    fn imposed_figures_sit_beside_the_felt_ones() {
        let mut old = crate::test_support::oversleeping_result(1 << 30);
        for p in &mut old.gc.pacing {
            p.imposed_ns = 0;
        }
        let results = [crate::test_support::oversleeping_result(1 << 30), old];
        let v: serde_json::Value = serde_json::from_str(&results_json(&results)).unwrap();
        let s = &v["summaries"][0];
        assert_eq!(s["longest_wait"]["kind"], "pacing");
        assert_eq!(s["longest_wait"]["duration_ns"], 7_000_000);
        assert_eq!(s["longest_wait_imposed"]["kind"], "pause");
        assert_eq!(s["longest_wait_imposed"]["duration_ns"], 2_000_000);
        assert_eq!(s["mmu"][1]["window_ns"], 10_000_000);
        assert_eq!(s["mmu_imposed"][1]["window_ns"], 10_000_000);
        let at10 = |k: &str| s[k][1]["utilization"].as_f64().unwrap();
        assert!((at10("mmu") - 0.3).abs() < 1e-9);
        assert!((at10("mmu_imposed") - 0.75).abs() < 1e-9);
        assert_eq!(s["imposed_unavailable"], serde_json::Value::Null);
        let s = &v["summaries"][1];
        assert_eq!(s["mmu_imposed"], serde_json::json!([]));
        assert_eq!(s["longest_wait_imposed"], serde_json::Value::Null);
        assert!(s["imposed_unavailable"]
            .as_str()
            .unwrap()
            .contains("no delay asked for"));
    }

    #[test]
    fn files_written_before_the_wait_figures_still_read() {
        let results = vec![sample_result(Mode::Concurrent, 1 << 30, &[100_000])];
        let mut v = serde_json::to_value(ResultsFile::new(&results)).unwrap();
        for key in [
            "longest_stall_ns",
            "pacing",
            "longest_wait",
            "total_wait_ns",
            "total_wait_thread",
            "wait_by_thread",
            "mmu_imposed",
            "longest_wait_imposed",
            "imposed_unavailable",
            "complete_cycles",
            "cycles_warning",
            "min_cycles",
            "extended_by_ms",
        ] {
            v["summaries"][0]
                .as_object_mut()
                .unwrap()
                .remove(key)
                .unwrap();
        }
        v["runs"][0]
            .as_object_mut()
            .unwrap()
            .remove("extended_by_ms");
        v["runs"][0]["config"]
            .as_object_mut()
            .unwrap()
            .remove("min_cycles");
        v["runs"][0]["gc"].as_object_mut().unwrap().remove("pacing");
        let dir = scratch_dir("json-old");
        let path = dir.join("results.json");
        std::fs::write(&path, v.to_string()).unwrap();
        assert_eq!(read_results_json(&path).unwrap(), results);
    }

    #[test]
    fn reading_bad_files_says_what_is_wrong() {
        let dir = scratch_dir("json-bad");
        let missing = read_results_json(&dir.join("nope.json")).unwrap_err();
        assert!(missing.starts_with("cannot read "), "{missing}");
        let path = dir.join("other.json");
        std::fs::write(&path, "{\"traceEvents\": []}").unwrap();
        let err = read_results_json(&path).unwrap_err();
        assert!(err.contains("is not a pause-sweep results.json"), "{err}");
        let mut file = ResultsFile::new(&[]);
        file.format_version = 99;
        std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
        let err = read_results_json(&path).unwrap_err();
        assert!(err.contains("format version 99"), "{err}");
    }
}

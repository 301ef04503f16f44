//! Everything a sweep writes, and the one call that writes it all: [`write_reports`] puts
//! `results.json`, `table.md`, `pause-vs-heap.svg`, `pause-timeline.svg`, `trace.json` and a
//! `memory-N-<run>.svg` per run with memory samples in the caller's directory (the sweep uses `results/<timestamp>/`). The pieces are public too,
//! for callers that want only one output.

pub mod format;
pub mod json;
pub mod plot_heap;
pub mod plot_memory;
pub mod plot_timeline;
pub mod style;
pub mod table;
pub mod trace;

use crate::run_result::RunResult;
use crate::summary::RunSummary;
use std::fmt;
use std::path::{Path, PathBuf};

pub use json::{read_results_json, write_results_json, ResultsFile};
pub use plot_heap::pause_vs_heap_svg;
pub use plot_memory::{memory_svg, memory_svg_name};
pub use plot_timeline::pause_timeline_svg;
pub use table::markdown_report;
pub use trace::{chrome_trace, write_trace_json};

/// File names inside the output directory.
pub const RESULTS_JSON: &str = "results.json";
pub const TABLE_MD: &str = "table.md";
pub const PAUSE_VS_HEAP_SVG: &str = "pause-vs-heap.svg";
pub const PAUSE_TIMELINE_SVG: &str = "pause-timeline.svg";
pub const TRACE_JSON: &str = "trace.json";

/// The files [`write_reports`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportFiles {
    pub dir: PathBuf,
    pub results_json: PathBuf,
    pub table_md: PathBuf,
    pub pause_vs_heap_svg: PathBuf,
    pub pause_timeline_svg: PathBuf,
    pub trace_json: PathBuf,
    /// One memory-over-time plot per run that has memory samples, in results.json order.
    pub memory_svgs: Vec<PathBuf>,
}

impl ReportFiles {
    /// Every file, in the order written.
    pub fn all(&self) -> Vec<&Path> {
        let mut v: Vec<&Path> = vec![
            &self.results_json,
            &self.table_md,
            &self.pause_vs_heap_svg,
            &self.pause_timeline_svg,
            &self.trace_json,
        ];
        v.extend(self.memory_svgs.iter().map(PathBuf::as_path));
        v
    }
}

/// An output that could not be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportError {
    pub path: PathBuf,
    pub message: String,
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write {}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for ReportError {}

/// Create `dir` (and its parents) and write every report of `results` into it. Returns the
/// paths; the markdown written to `table.md` is [`markdown_report`]`(results)`, which the
/// caller prints.
pub fn write_reports(dir: &Path, results: &[RunResult]) -> Result<ReportFiles, ReportError> {
    let fail = |path: &Path, message: String| ReportError {
        path: path.to_path_buf(),
        message,
    };
    std::fs::create_dir_all(dir).map_err(|e| fail(dir, e.to_string()))?;
    let mut files = ReportFiles {
        dir: dir.to_path_buf(),
        results_json: dir.join(RESULTS_JSON),
        table_md: dir.join(TABLE_MD),
        pause_vs_heap_svg: dir.join(PAUSE_VS_HEAP_SVG),
        pause_timeline_svg: dir.join(PAUSE_TIMELINE_SVG),
        trace_json: dir.join(TRACE_JSON),
        memory_svgs: Vec::new(),
    };
    let summaries: Vec<RunSummary> = results.iter().map(RunSummary::of).collect();

    write_results_json(&files.results_json, results)
        .map_err(|e| fail(&files.results_json, e.to_string()))?;
    std::fs::write(&files.table_md, markdown_report(results))
        .map_err(|e| fail(&files.table_md, e.to_string()))?;
    let svg = pause_vs_heap_svg(&summaries).map_err(|m| fail(&files.pause_vs_heap_svg, m))?;
    std::fs::write(&files.pause_vs_heap_svg, svg)
        .map_err(|e| fail(&files.pause_vs_heap_svg, e.to_string()))?;
    let svg = pause_timeline_svg(results).map_err(|m| fail(&files.pause_timeline_svg, m))?;
    std::fs::write(&files.pause_timeline_svg, svg)
        .map_err(|e| fail(&files.pause_timeline_svg, e.to_string()))?;
    write_trace_json(&files.trace_json, results)
        .map_err(|e| fail(&files.trace_json, e.to_string()))?;
    for (i, r) in results.iter().enumerate() {
        if r.memory.is_empty() {
            continue;
        }
        let path = dir.join(memory_svg_name(i, r));
        let svg = memory_svg(r).map_err(|m| fail(&path, m))?;
        std::fs::write(&path, svg).map_err(|e| fail(&path, e.to_string()))?;
        files.memory_svgs.push(path);
    }
    Ok(files)
}

/// Constructed results for the tests of the report writers (and the crate's integration tests).
#[doc(hidden)]
pub mod test_support {
    use crate::hiccup::HiccupSamples;
    use crate::run_result::{Mode, RunConfig, RunResult};
    use crate::workload::Workload;
    use gc_runtime::stats::{CycleRecord, GcStats, PauseKind, PauseRecord, PhaseRecord};
    use std::path::PathBuf;

    /// A 2 s heap-churn run (live set half the heap, seed 42, 12 345 ops/s, 100 hiccup samples
    /// of 1 ms) whose measured phase starts 1 s after heap creation and has `pauses_ns` as its
    /// pauses, 200 ms apart from 100 ms on. `stw` pauses are full pauses, one cycle each;
    /// `concurrent` ones cycle through Mark Start, Mark End, Relocate Start, three per cycle.
    pub fn sample_result(mode: Mode, heap_bytes: u64, pauses_ns: &[u64]) -> RunResult {
        let start = 1_000_000_000u64;
        let per_cycle = if mode == Mode::Stw { 1 } else { 3 };
        let kinds = [
            PauseKind::MarkStart,
            PauseKind::MarkEnd,
            PauseKind::RelocateStart,
        ];
        let pauses: Vec<PauseRecord> = pauses_ns
            .iter()
            .enumerate()
            .map(|(i, &total)| PauseRecord {
                kind: if mode == Mode::Stw {
                    PauseKind::Full
                } else {
                    kinds[i % 3]
                },
                cycle: (i / per_cycle) as u64 + 1,
                start_at_ns: start + 100_000_000 + i as u64 * 200_000_000,
                time_to_safepoint_ns: total / 10,
                at_safepoint_ns: total - total / 10,
                total_ns: total,
                work_items: 0,
            })
            .collect();
        let cycles: Vec<CycleRecord> = pauses
            .chunks(per_cycle)
            .enumerate()
            .map(|(i, ps)| {
                let first = ps[0].start_at_ns;
                let last = ps.last().unwrap();
                let end = last.start_at_ns + last.total_ns;
                CycleRecord {
                    cycle: i as u64 + 1,
                    cause: "Allocation Rate".into(),
                    start_at_ns: first,
                    duration_ns: end - first,
                    phases: ps
                        .iter()
                        .map(|p| PhaseRecord {
                            name: p.kind.name().into(),
                            start_at_ns: p.start_at_ns,
                            duration_ns: p.total_ns,
                        })
                        .collect(),
                    heap_before: heap_bytes / 2,
                    heap_after: heap_bytes / 3,
                    heap_capacity: heap_bytes,
                    live_bytes: heap_bytes / 4,
                    gc_cpu_ns: 1_000_000,
                    ..CycleRecord::default()
                }
            })
            .collect();
        let mut config =
            RunConfig::new(Workload::HeapChurn, mode, heap_bytes, heap_bytes / 2, 2000);
        config.seed = 42;
        RunResult {
            config,
            wall_ns: 2_000_000_000,
            operations: 24_690,
            ops_per_sec: 12_345.0,
            gc: GcStats {
                pauses,
                cycles,
                stalls: Vec::new(),
                pacing: Vec::new(),
                allocated_bytes: heap_bytes * 3,
                gc_cpu_ns: 5_000_000,
                ..GcStats::default()
            },
            hiccup: HiccupSamples::from_overshoots(vec![1_000_000; 100], 1_000_000),
            control_hiccup: HiccupSamples::from_overshoots(vec![200_000; 100], 1_000_000),
            request_latency: None,
            committed_heap_bytes: heap_bytes / 2,
            pss_bytes: heap_bytes / 2,
            rss_bytes: heap_bytes * 3 / 2,
            measure_start_at_ns: start,
            heap_created_unix_ms: 1_700_000_000_000,
            extended_by_ms: 0,
            memory: Vec::new(),
            memory_report: None,
            memory_report_text: None,
        }
    }

    /// A fresh, empty directory under the system temp dir for one test.
    pub fn scratch_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("workloads-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir is writable");
        dir
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{sample_result, scratch_dir};
    use super::*;
    use crate::run_result::Mode;

    #[test]
    fn write_reports_writes_every_file() {
        let results = [
            sample_result(Mode::Concurrent, 256 << 20, &[100_000, 200_000, 150_000]),
            sample_result(Mode::Stw, 256 << 20, &[20_000_000]),
        ];
        let dir = scratch_dir("write-reports")
            .join("results")
            .join("20250101-000000");
        let files = write_reports(&dir, &results).unwrap();
        assert_eq!(files.dir, dir);
        for f in files.all() {
            let text = std::fs::read_to_string(f).unwrap();
            assert!(!text.is_empty(), "{} is empty", f.display());
            assert_eq!(f.parent().unwrap(), dir);
        }
        assert_eq!(
            std::fs::read_to_string(&files.table_md).unwrap(),
            markdown_report(&results)
        );
        assert!(std::fs::read_to_string(&files.pause_vs_heap_svg)
            .unwrap()
            .contains("<svg"));
        assert_eq!(read_results_json(&files.results_json).unwrap(), results);
    }

    #[test]
    fn unwritable_directory_names_the_path() {
        let dir = scratch_dir("unwritable");
        let file = dir.join("a-file");
        std::fs::write(&file, "x").unwrap();
        let err = write_reports(&file.join("sub"), &[]).unwrap_err();
        assert!(err.to_string().starts_with("cannot write "), "{err}");
        assert!(err.to_string().contains("a-file"), "{err}");
    }
}

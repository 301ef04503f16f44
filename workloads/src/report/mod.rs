//! Everything a sweep writes, and the one call that writes it all: [`write_reports`] puts
//! `results.json`, `table.md`, `pause-vs-heap.svg`, its companion `mmu-vs-heap.svg`,
//! `pause-timeline.svg`, `trace.json` and a
//! `memory-N-<run>.svg` per run with memory samples in the caller's directory (the sweep uses `results/<timestamp>/`). The pieces are public too,
//! for callers that want only one output.

pub mod format;
pub mod json;
pub mod plot_heap;
pub mod plot_memory;
pub mod plot_mmu;
pub mod plot_timeline;
pub mod style;
pub mod table;
pub mod trace;

use crate::run_result::RunResult;
use crate::summary::RunSummary;
use std::fmt;
use std::path::{Path, PathBuf};

pub use json::{read_results_file, read_results_json, write_results_json, ResultsFile};
pub use plot_heap::pause_vs_heap_svg;
pub use plot_memory::{memory_svg, memory_svg_name};
pub use plot_mmu::mmu_vs_heap_svg;
pub use plot_timeline::pause_timeline_svg;
pub use table::markdown_report;
pub use trace::{chrome_trace, write_trace_json};

/// File names inside the output directory.
pub const RESULTS_JSON: &str = "results.json";
pub const TABLE_MD: &str = "table.md";
pub const PAUSE_VS_HEAP_SVG: &str = "pause-vs-heap.svg";
pub const MMU_VS_HEAP_SVG: &str = "mmu-vs-heap.svg";
pub const PAUSE_TIMELINE_SVG: &str = "pause-timeline.svg";
pub const TRACE_JSON: &str = "trace.json";

/// The files [`write_reports`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportFiles {
    pub dir: PathBuf,
    pub results_json: PathBuf,
    pub table_md: PathBuf,
    pub pause_vs_heap_svg: PathBuf,
    pub mmu_vs_heap_svg: PathBuf,
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
            &self.mmu_vs_heap_svg,
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
        mmu_vs_heap_svg: dir.join(MMU_VS_HEAP_SVG),
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
    let svg = mmu_vs_heap_svg(&summaries).map_err(|m| fail(&files.mmu_vs_heap_svg, m))?;
    std::fs::write(&files.mmu_vs_heap_svg, svg)
        .map_err(|e| fail(&files.mmu_vs_heap_svg, e.to_string()))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_result::Mode;
    use crate::test_support::{sample_result, scratch_dir};

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

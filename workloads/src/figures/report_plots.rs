//! The report plots the book shows, rendered again from run data committed beside them: each
//! plot is drawn by the sweep's own function (`pause_vs_heap_svg`, `mmu_vs_heap_svg`,
//! `pause_timeline_svg` of [`crate::report`]) from a `results.json` under
//! `docs/src/figures/data/`, so a figure in the book is what its data renders to, and a test
//! says so byte for byte. A sweep's `results.json` is megabytes (every pacing delay, hiccup
//! sample and memory sample); [`thin_for_plots`] keeps of it what the plots draw, in the same
//! format, and `book-figures --import` refuses a thinning that would change a plot.

use crate::report::{
    mmu_vs_heap_svg, pause_timeline_svg, pause_vs_heap_svg, plot_timeline, read_results_file,
    ResultsFile,
};
use crate::run_result::RunResult;
use crate::summary::RunSummary;
use gc_runtime::stats::{DirectStats, EventTotals, GcStats, PacingRecord};
use std::path::{Path, PathBuf};

/// Which of the sweep's plots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plot {
    /// `pause-vs-heap.svg`: pauses and waits against heap size.
    PauseVsHeap,
    /// `mmu-vs-heap.svg`: MMU at 10 ms, felt and imposed, against heap size.
    MmuVsHeap,
    /// `pause-timeline.svg`: every wait of every run over time.
    Timeline,
}

impl Plot {
    /// Every plot, in the order a sweep writes them.
    pub const ALL: [Plot; 3] = [Plot::PauseVsHeap, Plot::MmuVsHeap, Plot::Timeline];

    /// The file name a sweep gives it.
    pub fn file_name(self) -> &'static str {
        match self {
            Plot::PauseVsHeap => crate::report::PAUSE_VS_HEAP_SVG,
            Plot::MmuVsHeap => crate::report::MMU_VS_HEAP_SVG,
            Plot::Timeline => crate::report::PAUSE_TIMELINE_SVG,
        }
    }

    /// Draw it from `file` with the sweep's own function: the heap plots from the file's
    /// summaries (as written by the sweep, from the whole runs), the timeline from its runs.
    pub fn render(self, file: &ResultsFile) -> Result<String, String> {
        match self {
            Plot::PauseVsHeap => pause_vs_heap_svg(&file.summaries),
            Plot::MmuVsHeap => mmu_vs_heap_svg(&file.summaries),
            Plot::Timeline => pause_timeline_svg(&file.runs),
        }
    }
}

/// One plot of the book: the data file it is drawn from (under `docs/src/figures/data/`)
/// and where the book keeps it (under `docs/src/`).
#[derive(Clone, Copy, Debug)]
pub struct BookPlot {
    pub data: &'static str,
    pub plot: Plot,
    pub svg: &'static str,
}

/// The data file of the sweep behind the reports chapter's figures:
/// `cargo run --release -p workloads -- --duration 5` on 2026-12-04.
pub const SWEEP_5S: &str = "sweep-5s.json";

/// The data file of the side-by-side run with HotSpot in the reports chapter:
/// `cargo run --release -p workloads -- --jvm ZGC,G1 --heaps 256M,1G --duration 5` on
/// 2026-12-04 (JDK 17).
pub const JVM_5S: &str = "jvm-5s.json";

/// Every report plot the book shows.
pub const BOOK_PLOTS: [BookPlot; 4] = [
    BookPlot {
        data: SWEEP_5S,
        plot: Plot::PauseVsHeap,
        svg: "figures/pause-vs-heap.svg",
    },
    BookPlot {
        data: SWEEP_5S,
        plot: Plot::MmuVsHeap,
        svg: "figures/mmu-vs-heap.svg",
    },
    BookPlot {
        data: SWEEP_5S,
        plot: Plot::Timeline,
        svg: "figures/pause-timeline.svg",
    },
    BookPlot {
        data: JVM_5S,
        plot: Plot::PauseVsHeap,
        svg: "figures/jvm/pause-vs-heap.svg",
    },
];

/// What [`thin_for_plots`] leaves out, as the thinned file says.
pub const THINNED: &str = "of each run only the measured phase's pauses, stalls and slow page \
                           allocations, and the pacing delays pause-timeline.svg draws (the \
                           longest held and the longest asked for of each 10 ms, and the \
                           shortest); no cycles, hiccup or memory samples";

/// `file` with only what the plots draw: the summaries as they are (the heap plots draw
/// them), and of each run what [`pause_timeline_svg`] reads. The pacing delays it leaves out
/// are counted in [`RunResult::pacing_thinned_out`], which the timeline's caption adds.
pub fn thin_for_plots(file: &ResultsFile) -> ResultsFile {
    ResultsFile {
        format_version: file.format_version,
        generator: file.generator.clone(),
        runs: file.runs.iter().map(thin_run).collect(),
        summaries: file.summaries.clone(),
        thinned: Some(THINNED.to_string()),
    }
}

fn thin_run(r: &RunResult) -> RunResult {
    let (held, asked) = plot_timeline::drawn_pacing(r);
    // The shortest held delay sets the bottom of the timeline's axis.
    let shortest = r.measured_pacing().min_by_key(|d| d.duration_ns);
    let kept: std::collections::HashSet<*const PacingRecord> = held
        .iter()
        .chain(&asked)
        .copied()
        .chain(shortest)
        .map(|d| d as *const PacingRecord)
        .collect();
    let keep = |d: &PacingRecord| kept.contains(&(d as *const PacingRecord));
    let pacing: Vec<_> = r.measured_pacing().filter(|d| keep(d)).cloned().collect();
    let dropped = r.measured_pacing().count() - pacing.len();
    RunResult {
        config: r.config.clone(),
        gc: GcStats {
            pauses: r.measured_pauses().cloned().collect(),
            cycles: Vec::new(),
            stalls: r.measured_stalls().cloned().collect(),
            pacing,
            page_allocations: r.measured_page_allocations().cloned().collect(),
            safepoint_timeouts: Vec::new(),
            allocated_bytes: r.gc.allocated_bytes,
            gc_cpu_ns: r.gc.gc_cpu_ns,
            uncommitted_bytes: r.gc.uncommitted_bytes,
            direct: DirectStats::default(),
            totals: EventTotals::default(),
            safepoint_barrier: r.gc.safepoint_barrier.clone(),
        },
        hiccup: crate::hiccup::HiccupSamples::empty(),
        control_hiccup: crate::hiccup::HiccupSamples::empty(),
        request_latency: None,
        memory: Vec::new(),
        memory_report: None,
        memory_report_text: None,
        pacing_thinned_out: r.pacing_thinned_out + dropped as u64,
        ..r.clone()
    }
}

/// Read a committed data file (thinned or a sweep's whole `results.json`).
pub fn read_data(path: &Path) -> Result<ResultsFile, String> {
    read_results_file(path)
}

/// Every report plot of the book drawn from the data files in `data_dir`: (path under the
/// book's `src/`, SVG text).
pub fn render_book_plots(data_dir: &Path) -> Result<Vec<(&'static str, String)>, String> {
    let mut out = Vec::new();
    let mut loaded: Vec<(&str, ResultsFile)> = Vec::new();
    for p in BOOK_PLOTS {
        if !loaded.iter().any(|(n, _)| *n == p.data) {
            loaded.push((p.data, read_data(&data_dir.join(p.data))?));
        }
        let file = &loaded.iter().find(|(n, _)| *n == p.data).expect("loaded").1;
        let svg = p
            .plot
            .render(file)
            .map_err(|e| format!("drawing {} from {}: {e}", p.svg, p.data))?;
        out.push((p.svg, svg));
    }
    Ok(out)
}

/// Thin the sweep results at `results` for the book and check that every plot drawn from the
/// thinned file is the one drawn from the whole file (its summaries computed again from its
/// runs, as the sweep does); returns the thinned file's JSON text.
pub fn import(results: &Path) -> Result<String, String> {
    let full = read_results_file(results)?;
    if full.thinned.is_some() {
        return Err(format!(
            "{} is already thinned: import a sweep's own results.json",
            results.display()
        ));
    }
    let whole = ResultsFile {
        summaries: full.runs.iter().map(RunSummary::of).collect(),
        ..full.clone()
    };
    let thin = thin_for_plots(&full);
    for plot in Plot::ALL {
        if plot.render(&whole)? != plot.render(&thin)? {
            return Err(format!(
                "{} drawn from the thinned data differs from the whole run's: thin_for_plots \
                 leaves out something it draws",
                plot.file_name()
            ));
        }
    }
    // Compact: the same format as the sweep's (pretty-printed) file, half the size.
    let mut text =
        serde_json::to_string(&thin).map_err(|e| format!("cannot write the thinned data: {e}"))?;
    text.push('\n');
    Ok(text)
}

/// Where [`import`] writes a data file named `name` in `data_dir`.
pub fn data_path(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_result::Mode;
    use crate::test_support::{oversleeping_result, sample_result, scratch_dir};

    /// A paced run with thousands of delays a few hundred microseconds apart, some asked for
    /// and held longer, like a real concurrent run.
    fn paced(heap: u64) -> RunResult {
        let mut r = sample_result(Mode::Concurrent, heap, &[100_000, 30_000, 2_000_000]);
        let start = r.measure_start_at_ns;
        for i in 0..5_000u64 {
            r.gc.pacing.push(PacingRecord {
                thread: "mutator-0".into(),
                start_at_ns: start + i * 190_000,
                duration_ns: 50_000 + (i * 7919) % 3_000_000,
                imposed_ns: (i * 104_729) % 1_000_000,
                beyond_floor_ns: 0,
            });
        }
        r
    }

    #[test]
    fn thinning_keeps_every_plot_and_leaves_out_most_records() {
        let runs = vec![
            paced(256 << 20),
            sample_result(Mode::Stw, 256 << 20, &[20_000_000]),
            oversleeping_result(1 << 30),
        ];
        let dir = scratch_dir("thin-for-plots");
        let path = dir.join("results.json");
        crate::report::write_results_json(&path, &runs).unwrap();
        let text = import(&path).unwrap();
        let thin: ResultsFile = serde_json::from_str(&text).unwrap();
        assert!(thin.runs[0].gc.pacing.len() < 2_000, "thinned");
        assert_eq!(
            thin.runs[0].gc.pacing.len() as u64 + thin.runs[0].pacing_thinned_out,
            runs[0].measured_pacing().count() as u64
        );
        let whole = ResultsFile::new(&runs);
        for plot in Plot::ALL {
            assert!(plot.render(&whole).unwrap() == plot.render(&thin).unwrap());
        }
        let svg = Plot::Timeline.render(&thin).unwrap();
        assert!(svg.contains("5000 pacing delays"), "the caption counts all");
    }

    #[test]
    fn the_timeline_counts_the_delays_thinned_out() {
        // A thinned file whose timeline lost its count differs from the whole run's.
        let runs = vec![paced(256 << 20)];
        let whole = ResultsFile::new(&runs);
        let mut thin = thin_for_plots(&whole);
        thin.runs[0].pacing_thinned_out = 0;
        assert!(Plot::Timeline.render(&whole).unwrap() != Plot::Timeline.render(&thin).unwrap());
    }

    #[test]
    fn thinned_files_are_refused_where_the_runs_must_be_whole() {
        let dir = scratch_dir("thinned-refused");
        let path = dir.join("thin.json");
        let thin = thin_for_plots(&ResultsFile::new(&[paced(256 << 20)]));
        std::fs::write(&path, serde_json::to_string(&thin).unwrap()).unwrap();
        let err = crate::report::read_results_json(&path).unwrap_err();
        assert!(
            err.contains("holds only what the book's plots draw"),
            "{err}"
        );
        let err = import(&path).unwrap_err();
        assert!(err.contains("already thinned"), "{err}");
        assert!(read_data(&path).is_ok());
    }

    #[test]
    fn a_missing_data_file_is_named() {
        let err = render_book_plots(Path::new("/nonexistent-book-data")).unwrap_err();
        assert!(err.contains(SWEEP_5S), "{err}");
    }
}

//! The markdown report for people (`table.md`, also printed): one row per (mode, heap) with
//! pause count and percentiles, hiccups, MMU at 10 ms, stalls, throughput and cycles; then the
//! `concurrent` ÷ `stw` ratios at each heap (ratios measured in the same run, not single times).
//!
//! Columns are padded so the table reads well in a terminal as well as rendered.

use super::format;
use crate::run_result::{Mode, RunResult};
use crate::summary::RunSummary;

const MMU_WINDOW_NS: u64 = 10_000_000;

/// Render rows as a padded markdown table; `right[i]` right-aligns column `i`.
fn render(header: &[&str], right: &[bool], rows: &[Vec<String>]) -> String {
    let width = |s: &str| s.chars().count();
    let mut widths: Vec<usize> = header.iter().map(|h| width(h).max(3)).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(cell));
        }
    }
    let pad = |cell: &str, i: usize| {
        let fill = " ".repeat(widths[i] - width(cell));
        if right[i] {
            format!("{fill}{cell}")
        } else {
            format!("{cell}{fill}")
        }
    };
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut out = line(header.iter().enumerate().map(|(i, h)| pad(h, i)).collect());
    out += &line(
        widths
            .iter()
            .enumerate()
            .map(|(i, &w)| {
                if right[i] {
                    format!("{}:", "-".repeat(w - 1))
                } else {
                    "-".repeat(w)
                }
            })
            .collect(),
    );
    for row in rows {
        out += &line(row.iter().enumerate().map(|(i, c)| pad(c, i)).collect());
    }
    out
}

/// Summaries in report order: by heap size, then mode (`concurrent`, `stw`, `epsilon`), so
/// the modes of one heap sit next to each other.
pub fn sorted(summaries: &[RunSummary]) -> Vec<&RunSummary> {
    let mut v: Vec<&RunSummary> = summaries.iter().collect();
    v.sort_by_key(|s| (s.heap_bytes, s.mode));
    v
}

/// The main table: one row per run.
pub fn main_table(summaries: &[RunSummary]) -> String {
    let with_requests = summaries.iter().any(|s| s.request_latency.is_some());
    let mut header = vec![
        "mode",
        "heap",
        "pauses",
        "pause p50",
        "pause p99",
        "pause max",
        "hiccup p99",
        "hiccup p99.9",
        "hiccup max",
        "MMU 10 ms",
        "stalls",
        "ops/s",
        "cycles",
    ];
    if with_requests {
        header.push("request p99");
    }
    let mut right = vec![true; header.len()];
    right[0] = false;
    right[1] = false;
    let pause_cell = |s: &RunSummary, v: u64| {
        if s.pauses.count == 0 {
            "–".to_string()
        } else {
            format::duration_ns(v)
        }
    };
    let hiccup_cell = |s: &RunSummary, v: u64| {
        if s.hiccup.count == 0 {
            "–".to_string()
        } else {
            format::duration_ns(v)
        }
    };
    let rows: Vec<Vec<String>> = sorted(summaries)
        .into_iter()
        .map(|s| {
            let mut row = vec![
                s.mode.to_string(),
                format::bytes(s.heap_bytes),
                s.pauses.count.to_string(),
                pause_cell(s, s.pauses.p50_ns),
                pause_cell(s, s.pauses.p99_ns),
                pause_cell(s, s.pauses.max_ns),
                hiccup_cell(s, s.hiccup.p99_ns),
                hiccup_cell(s, s.hiccup.p99_9_ns),
                hiccup_cell(s, s.hiccup.max_ns),
                s.mmu_at(MMU_WINDOW_NS)
                    .map_or("–".to_string(), format::percent),
                s.stalls.to_string(),
                format::rate(s.ops_per_sec),
                s.cycles.to_string(),
            ];
            if with_requests {
                row.push(match &s.request_latency {
                    Some(l) if l.count > 0 => format::duration_ns(l.p99_ns),
                    _ => "–".to_string(),
                });
            }
            row
        })
        .collect();
    render(&header, &right, &rows)
}

/// `concurrent` ÷ `stw` at each heap where both ran (the first run of each), or `None` if
/// there is no such heap. Pause and hiccup ratios below 1 favour `concurrent`; throughput near
/// 1 means concurrency costs little. MMU is shown as both values (`concurrent / stw`).
pub fn ratio_table(summaries: &[RunSummary]) -> Option<String> {
    let find = |mode: Mode, heap: u64| {
        summaries
            .iter()
            .find(|s| s.mode == mode && s.heap_bytes == heap)
    };
    let mut heaps: Vec<u64> = summaries.iter().map(|s| s.heap_bytes).collect();
    heaps.sort_unstable();
    heaps.dedup();
    let rows: Vec<Vec<String>> = heaps
        .into_iter()
        .filter_map(|heap| {
            let (c, s) = (find(Mode::Concurrent, heap)?, find(Mode::Stw, heap)?);
            let pause = |f: fn(&RunSummary) -> u64| {
                if c.pauses.count == 0 || s.pauses.count == 0 {
                    "–".to_string()
                } else {
                    format::ratio(f(c) as f64, f(s) as f64)
                }
            };
            let hiccup = |f: fn(&RunSummary) -> u64| {
                if c.hiccup.count == 0 || s.hiccup.count == 0 {
                    "–".to_string()
                } else {
                    format::ratio(f(c) as f64, f(s) as f64)
                }
            };
            // Utilizations side by side: a ratio over an stw MMU of 0% says nothing.
            let mmu = match (c.mmu_at(MMU_WINDOW_NS), s.mmu_at(MMU_WINDOW_NS)) {
                (Some(a), Some(b)) => format!("{} / {}", format::percent(a), format::percent(b)),
                _ => "–".to_string(),
            };
            Some(vec![
                format::bytes(heap),
                pause(|x| x.pauses.p99_ns),
                pause(|x| x.pauses.max_ns),
                hiccup(|x| x.hiccup.p99_ns),
                hiccup(|x| x.hiccup.max_ns),
                mmu,
                format::ratio(c.ops_per_sec, s.ops_per_sec),
            ])
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let header = [
        "heap",
        "pause p99",
        "pause max",
        "hiccup p99",
        "hiccup max",
        "MMU 10 ms (both)",
        "throughput",
    ];
    let mut right = vec![true; header.len()];
    right[0] = false;
    Some(render(&header, &right, &rows))
}

/// One line saying what ran: the workload(s), live fraction, threads, duration and seed where
/// all runs agree.
fn description(results: &[RunResult]) -> String {
    let same = |f: &dyn Fn(&RunResult) -> String| -> Option<String> {
        let first = f(results.first()?);
        results.iter().all(|r| f(r) == first).then_some(first)
    };
    let mut parts = Vec::new();
    if let Some(live) = same(&|r| {
        format::percent(r.config.live_set_bytes as f64 / r.config.heap_bytes.max(1) as f64)
    }) {
        parts.push(format!("live set {live} of the heap"));
    }
    if let Some(t) = same(&|r| r.config.threads.to_string()) {
        let s = if t == "1" { "" } else { "s" };
        parts.push(format!("{t} mutator thread{s}"));
    }
    if let Some(d) = same(&|r| format::duration_ns(r.config.duration_ms * 1_000_000)) {
        parts.push(format!("{d} per run"));
    }
    if let Some(seed) = same(&|r| r.config.seed.to_string()) {
        parts.push(format!("seed {seed}"));
    }
    parts.join(", ")
}

/// The whole markdown report (`table.md`): title, what ran, the main table, the ratio table
/// and how to read them.
pub fn markdown_report(results: &[RunResult]) -> String {
    let summaries: Vec<RunSummary> = results.iter().map(RunSummary::of).collect();
    let mut workloads: Vec<&str> = results.iter().map(|r| r.config.workload.name()).collect();
    workloads.sort_unstable();
    workloads.dedup();
    let mut out = format!("# Pauses vs heap size: {}\n\n", workloads.join(", "));
    let what = description(results);
    if !what.is_empty() {
        out += &format!("{what}.\n\n");
    }
    out += &main_table(&summaries);
    if let Some(ratios) = ratio_table(&summaries) {
        out += "\n## concurrent ÷ stw\n\n";
        out += &ratios;
    }
    out += "\nPauses include time to safepoint; only the measured phase counts (not set-up). \
            Hiccups: a 1 ms sleep-and-allocate loop's overshoot, coordinated-omission \
            corrected. MMU 10 ms: the worst share of any 10 ms window left to mutators by \
            pauses and allocation stalls. `–`: nothing to show.\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::sample_result;

    #[test]
    fn main_table_has_one_aligned_row_per_run_in_heap_then_mode_order() {
        let results = [
            sample_result(Mode::Stw, 1 << 30, &[40_000_000, 50_000_000]),
            sample_result(Mode::Concurrent, 1 << 30, &[100_000, 200_000, 150_000]),
            sample_result(Mode::Concurrent, 256 << 20, &[90_000, 80_000]),
        ];
        let summaries: Vec<RunSummary> = results.iter().map(RunSummary::of).collect();
        let table = main_table(&summaries);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 2 + 3, "{table}");
        assert!(lines[0].starts_with("| mode "));
        assert!(lines[0].contains("| pause p99 |"));
        assert!(lines[1].starts_with("| ----"), "{}", lines[1]);
        assert!(
            lines[1].starts_with("| ---------- |"),
            "mode is left-aligned: {}",
            lines[1]
        );
        assert!(
            lines[1].ends_with(": |"),
            "numbers are right-aligned: {}",
            lines[1]
        );
        // Every line has the same width and the same number of cells.
        let w = lines[0].chars().count();
        for l in &lines {
            assert_eq!(l.chars().count(), w, "{table}");
            assert_eq!(l.matches('|').count(), 14, "{l}");
        }
        let cells = |l: &str| -> Vec<String> {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        };
        let row0 = cells(lines[2]);
        assert_eq!(
            &row0[..6],
            ["concurrent", "256M", "2", "80.0 µs", "90.0 µs", "90.0 µs"]
        );
        let row1 = cells(lines[3]);
        assert_eq!(
            &row1[..6],
            ["concurrent", "1G", "3", "150 µs", "200 µs", "200 µs"]
        );
        let row2 = cells(lines[4]);
        assert_eq!(
            &row2[..6],
            ["stw", "1G", "2", "40.0 ms", "50.0 ms", "50.0 ms"]
        );
        // Hiccups (sample: 1 ms overshoot on every sample), MMU, stalls, ops/s, cycles.
        assert_eq!(row2[6], "1.00 ms");
        assert_eq!(row2[9], "0%"); // a 50 ms pause fills a 10 ms window
        assert_eq!(row1[9], "98.0%"); // 0.2 ms of 10 ms
        assert_eq!(row2[10], "0");
        assert_eq!(row2[11], "12.3k");
        assert_eq!(row2[12], "2");
        assert!(!table.contains("request p99"));
    }

    #[test]
    fn ratio_table_pairs_concurrent_with_stw_per_heap() {
        let results = [
            sample_result(Mode::Concurrent, 1 << 30, &[100_000, 200_000]),
            sample_result(Mode::Stw, 1 << 30, &[40_000_000, 50_000_000]),
            sample_result(Mode::Concurrent, 4 << 30, &[100_000]), // no stw partner
        ];
        let summaries: Vec<RunSummary> = results.iter().map(RunSummary::of).collect();
        let t = ratio_table(&summaries).unwrap();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3, "{t}");
        assert!(lines[2].starts_with("| 1G "));
        // p99 200 µs ÷ 50 ms and max the same: 0.004; equal throughput: 1.0.
        assert_eq!(lines[2].matches("0.0040×").count(), 2, "{t}");
        assert!(lines[2].contains("1.0×"), "{t}");
        assert!(lines[2].contains(" 98.0% / 0% |"), "{t}");
        assert!(ratio_table(&summaries[..1]).is_none());
    }

    #[test]
    fn markdown_report_describes_the_runs() {
        let results = [
            sample_result(Mode::Concurrent, 1 << 30, &[100_000]),
            sample_result(Mode::Stw, 1 << 30, &[40_000_000]),
        ];
        let md = markdown_report(&results);
        assert!(
            md.starts_with("# Pauses vs heap size: heap-churn\n"),
            "{md}"
        );
        assert!(
            md.contains("live set 50.0% of the heap, 1 mutator thread, 2.00 s per run, seed 42.")
        );
        assert!(md.contains("## concurrent ÷ stw"));
        assert_eq!(md.matches("| concurrent |").count(), 1);
    }

    #[test]
    fn runs_without_pauses_show_dashes() {
        let results = [sample_result(Mode::Epsilon, 1 << 30, &[])];
        let summaries: Vec<RunSummary> = results.iter().map(RunSummary::of).collect();
        let t = main_table(&summaries);
        let row: Vec<&str> = t
            .lines()
            .nth(2)
            .unwrap()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        assert_eq!(&row[..6], ["epsilon", "1G", "0", "–", "–", "–"], "{t}");
        assert_eq!(row[9], "100%");
    }
}

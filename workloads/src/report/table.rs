//! The markdown report for people (`table.md`, also printed): tables with one row per
//! (mode, heap), each under ~100 columns: complete cycles, pauses and, next to the maximum
//! pause, the longest mutator wait of any kind and the total wait ([`main_table`]); the
//! longest wait and MMU at 10 ms as the program felt them and counting only what the collector
//! imposed, beside the control meter ([`felt_imposed_table`]); time to safepoint and the part
//! of it a mutator waited for a CPU, and the pauses without that wait ([`safepoint_table`]);
//! allocation stalls, pacing
//! delays and throughput ([`waits_table`]); MMU at 1/10/100 ms and hiccups
//! ([`utilization_table`]). Then notes on single runs (too few cycles, `--min-cycles`
//! extensions), the `concurrent` ÷ `stw` ratios at each heap, and what the columns mean.
//!
//! Columns are padded so the tables read well in a terminal as well as rendered.

use super::format;
use crate::latency::PercentileSummary;
use crate::mmu::STANDARD_WINDOWS_NS;
use crate::run_result::{Mode, RunResult};
use crate::summary::RunSummary;
use crate::waits::WaitFigures;

/// The MMU window of the ratio table.
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

/// Summaries in report order: by heap size, then mode (`concurrent`, `stw`, `epsilon`,
/// `generational`), then
/// buffer kind, so the modes and buffer kinds of one heap sit next to each other; the JVM
/// runs of a heap (`--jvm`) after this project's, in the order they ran.
pub fn sorted(summaries: &[RunSummary]) -> Vec<&RunSummary> {
    let mut v: Vec<&RunSummary> = summaries.iter().collect();
    v.sort_by_key(|s| {
        (
            s.heap_bytes,
            !s.is_ours(),
            s.is_ours().then_some((s.mode, s.buffers)),
        )
    });
    v
}

/// True when some run shows a buffer kind: the tables then have a buffers column.
fn with_buffers(summaries: &[RunSummary]) -> bool {
    summaries.iter().any(|s| s.buffers.is_some())
}

/// The marker of a row with too few complete GC cycles (explained under the tables).
pub const FEW_CYCLES_MARK: &str = "†";

/// `–` when `present` is false, else the duration.
fn duration_or_dash(present: bool, ns: u64) -> String {
    if present {
        format::duration_ns(ns)
    } else {
        "–".to_string()
    }
}

/// `332 ms stall`: the longest wait and its kind, or `–`.
fn longest_wait_cell(s: &RunSummary) -> String {
    s.longest_wait.as_ref().map_or("–".to_string(), |w| {
        format!("{} {}", format::duration_ns(w.duration_ns), w.kind)
    })
}

/// What a cell shows for a figure that cannot be computed for the run (see
/// `RunSummary::imposed_unavailable`).
pub const NOT_AVAILABLE: &str = "n/a";

/// `18.9 ms / 1.02 ms pacing` (felt / imposed, one kind), `18.9 ms pacing / 5.47 ms
/// page-alloc` (two kinds), `18.9 ms pacing / n/a`, or `–` when nothing waited.
fn felt_imposed_wait_cell(s: &RunSummary) -> String {
    let felt = s.longest_wait.as_ref();
    let imposed = s.longest_wait_imposed.as_ref();
    let d = |w: &crate::waits::Wait| format::duration_ns(w.duration_ns);
    match (felt, imposed) {
        (None, None) if s.imposed_unavailable.is_none() => "–".to_string(),
        (Some(f), Some(i)) if f.kind == i.kind => format!("{} / {} {}", d(f), d(i), i.kind),
        (f, i) => {
            let felt = f.map_or("–".to_string(), |w| format!("{} {}", d(w), w.kind));
            let imposed = match i {
                Some(w) => format!("{} {}", d(w), w.kind),
                None if s.imposed_unavailable.is_some() => NOT_AVAILABLE.to_string(),
                None => "–".to_string(),
            };
            format!("{felt} / {imposed}")
        }
    }
}

/// `0% / 72.5%`: MMU at `window_ns` felt / imposed (`n/a` for an imposed figure that cannot
/// be computed).
fn felt_imposed_mmu_cell(s: &RunSummary, window_ns: u64) -> String {
    let felt = s.mmu_at(window_ns).map_or("–".to_string(), format::percent);
    let imposed = match s.mmu_imposed_at(window_ns) {
        Some(u) => format::percent(u),
        None if s.imposed_unavailable.is_some() => NOT_AVAILABLE.to_string(),
        None => "–".to_string(),
    };
    format!("{felt} / {imposed}")
}

/// The first cells of every table (mode, heap and, with `buffers`, the buffer kind), and
/// the alignment of a table whose other columns are numbers.
fn mode_heap(s: &RunSummary, buffers: bool) -> Vec<String> {
    let mut v = vec![s.series(), format::bytes(s.heap_bytes)];
    if buffers {
        v.push(s.buffers.map_or("–".to_string(), |b| b.to_string()));
    }
    v
}

/// The headers of [`mode_heap`]'s cells.
fn lead_header(buffers: bool) -> Vec<&'static str> {
    if buffers {
        vec!["mode", "heap", "buffers"]
    } else {
        vec!["mode", "heap"]
    }
}

/// `lead_header(buffers)` then `rest`.
fn header_with<'a>(buffers: bool, rest: &[&'a str]) -> Vec<&'a str> {
    let mut h = lead_header(buffers);
    h.extend_from_slice(rest);
    h
}

fn numbers_right(columns: usize, buffers: bool) -> Vec<bool> {
    let mut right = vec![true; columns];
    for r in right.iter_mut().take(lead_header(buffers).len()) {
        *r = false;
    }
    right
}

/// The main table: one row per run with complete GC cycles (marked [`FEW_CYCLES_MARK`] when
/// too few), pauses and their percentiles, and right after the maximum pause the longest
/// mutator wait of any kind and the total wait of the most-delayed thread.
pub fn main_table(summaries: &[RunSummary]) -> String {
    let b = with_buffers(summaries);
    let header = header_with(
        b,
        &[
            "cycles",
            "pauses",
            "pause p50",
            "pause p99",
            "pause max",
            "longest wait",
            "wait total",
        ],
    );
    let rows: Vec<Vec<String>> = sorted(summaries)
        .into_iter()
        .map(|s| {
            let paused = s.pauses.count > 0;
            let mut cycles = s.complete_cycles.to_string();
            if s.minor_cycles > 0 {
                cycles = format!("{cycles} ({} minor)", s.minor_cycles);
            }
            if s.cycles_warning.is_some() {
                cycles = format!("{cycles} {FEW_CYCLES_MARK}");
            }
            let mut row = mode_heap(s, b);
            row.extend([
                cycles,
                s.pauses.count.to_string(),
                duration_or_dash(paused, s.pauses.p50_ns),
                duration_or_dash(paused, s.pauses.p99_ns),
                duration_or_dash(paused, s.pauses.max_ns),
                longest_wait_cell(s),
                format::duration_ns(s.total_wait_ns),
            ]);
            row
        })
        .collect();
    render(&header, &numbers_right(header.len(), b), &rows)
}

/// What the program felt beside what the collector imposed: the longest wait and MMU at 10 ms
/// each as `felt / imposed`, and the control meter's longest overshoot (what a thread outside
/// the heap felt in the same run). Imposed counts pauses (time to safepoint included),
/// stalls, page allocations and each pacing delay as long as the pacer asked for; felt counts
/// a pacing delay as long as the thread was held. A felt figure far beyond the imposed one
/// with a long control max is the machine's doing, not the collector's.
pub fn felt_imposed_table(summaries: &[RunSummary]) -> String {
    let b = with_buffers(summaries);
    let mmu_header = format!(
        "MMU {} felt / imposed",
        format::duration_axis(MMU_WINDOW_NS as f64)
    );
    let header = header_with(
        b,
        &[
            "longest wait felt / imposed",
            &mmu_header,
            "control max",
            "beyond floor",
        ],
    );
    let rows: Vec<Vec<String>> = sorted(summaries)
        .into_iter()
        .map(|s| {
            let mut row = mode_heap(s, b);
            row.extend([
                felt_imposed_wait_cell(s),
                felt_imposed_mmu_cell(s, MMU_WINDOW_NS),
                duration_or_dash(s.control_hiccup.count > 0, s.control_hiccup.max_ns),
                beyond_floor(&s.pacing_beyond_floor),
            ]);
            row
        })
        .collect();
    render(&header, &numbers_right(header.len(), b), &rows)
}

/// Time to safepoint and the part of it the scheduler decided: time to safepoint p99
/// and max, the longest wait for a CPU of a mutator during one (see
/// `gc_runtime::stats::PauseRecord::time_to_safepoint_cpu_wait_ns`), and the pauses' p99 and
/// max less that wait (`RunSummary::pauses_less_cpu_wait`). `–` where a run has no pauses or
/// no reading.
pub fn safepoint_table(summaries: &[RunSummary]) -> String {
    let b = with_buffers(summaries);
    let header = header_with(
        b,
        &[
            "pauses",
            "ttsp p99",
            "ttsp max",
            "CPU wait max",
            "pause p99 / max less CPU wait",
        ],
    );
    let rows: Vec<Vec<String>> = sorted(summaries)
        .into_iter()
        .map(|s| {
            let paused = s.pauses.count > 0;
            let read =
                |f: &dyn Fn(&PercentileSummary) -> String, x: &Option<PercentileSummary>| match x {
                    Some(l) if l.count > 0 => f(l),
                    _ => "–".to_string(),
                };
            let mut row = mode_heap(s, b);
            row.extend([
                s.pauses.count.to_string(),
                duration_or_dash(paused, s.time_to_safepoint.p99_ns),
                duration_or_dash(paused, s.time_to_safepoint.max_ns),
                read(
                    &|l| format::duration_ns(l.max_ns),
                    &s.time_to_safepoint_cpu_wait,
                ),
                read(
                    &|l| {
                        format!(
                            "{} / {}",
                            format::duration_ns(l.p99_ns),
                            format::duration_ns(l.max_ns)
                        )
                    },
                    &s.pauses_less_cpu_wait,
                ),
            ]);
            row
        })
        .collect();
    render(&header, &numbers_right(header.len(), b), &rows)
}

/// The waits that are not pauses: allocation stalls and pacing delays (count, total, longest),
/// slow page allocations (count and longest), and throughput.
pub fn waits_table(summaries: &[RunSummary]) -> String {
    let b = with_buffers(summaries);
    let header = header_with(
        b,
        &[
            "stalls",
            "stall total",
            "stall max",
            "pacing",
            "pacing total",
            "pacing max",
            "page allocs",
            "ops/s",
        ],
    );
    let rows: Vec<Vec<String>> = sorted(summaries)
        .into_iter()
        .map(|s| {
            let (stalled, paced) = (s.stalls > 0, s.pacing.count > 0);
            let mut row = mode_heap(s, b);
            row.extend([
                s.stalls.to_string(),
                duration_or_dash(stalled, s.total_stall_ns),
                duration_or_dash(stalled, s.longest_stall_ns),
                s.pacing.count.to_string(),
                duration_or_dash(paced, s.pacing.total_ns),
                duration_or_dash(paced, s.pacing.longest_ns),
                page_allocs(&s.page_allocations),
                format::rate(s.ops_per_sec),
            ]);
            row
        })
        .collect();
    render(&header, &numbers_right(header.len(), b), &rows)
}

/// Pacing delays beyond the floor as `count / time beyond it`, `0` when the floor held.
fn beyond_floor(f: &WaitFigures) -> String {
    if f.count == 0 {
        "0".to_string()
    } else {
        format!("{} / {}", f.count, format::duration_ns(f.total_ns))
    }
}

/// Slow page allocations as `count / longest`, `0` when there were none.
fn page_allocs(f: &WaitFigures) -> String {
    if f.count == 0 {
        "0".to_string()
    } else {
        format!("{} / {}", f.count, format::duration_ns(f.longest_ns))
    }
}

/// What the waits cost in utilization (MMU at 1, 10 and 100 ms) and what the hiccup meter saw;
/// request latency too when a workload serves requests.
pub fn utilization_table(summaries: &[RunSummary]) -> String {
    let with_requests = summaries.iter().any(|s| s.request_latency.is_some());
    let b = with_buffers(summaries);
    let mut header: Vec<String> = lead_header(b).into_iter().map(String::from).collect();
    header.extend(
        STANDARD_WINDOWS_NS
            .iter()
            .map(|&w| format!("MMU {}", format::duration_axis(w as f64))),
    );
    header.extend(["hiccup p99", "hiccup p99.9", "hiccup max", "control max"].map(String::from));
    if with_requests {
        header.push("request p99".into());
    }
    let rows: Vec<Vec<String>> = sorted(summaries)
        .into_iter()
        .map(|s| {
            let metered = s.hiccup.count > 0;
            let mut row = mode_heap(s, b);
            row.extend(
                STANDARD_WINDOWS_NS
                    .iter()
                    .map(|&w| s.mmu_at(w).map_or("–".to_string(), format::percent)),
            );
            row.extend([
                duration_or_dash(metered, s.hiccup.p99_ns),
                duration_or_dash(metered, s.hiccup.p99_9_ns),
                duration_or_dash(metered, s.hiccup.max_ns),
                duration_or_dash(s.control_hiccup.count > 0, s.control_hiccup.max_ns),
            ]);
            if with_requests {
                row.push(match &s.request_latency {
                    Some(l) if l.count > 0 => format::duration_ns(l.p99_ns),
                    _ => "–".to_string(),
                });
            }
            row
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    render(&header, &numbers_right(header.len(), b), &rows)
}

/// How fast the collector worked: per run, the complete cycles and their medians of marking
/// wall time per object marked, GC CPU time per object, and MB/s relocated; `None` when no
/// run completed a cycle (`epsilon` only).
pub fn collector_table(summaries: &[RunSummary]) -> Option<String> {
    if !summaries.iter().any(|s| s.collector.cycles > 0) {
        return None;
    }
    let b = with_buffers(summaries);
    let header = header_with(
        b,
        &[
            "cycles",
            "mark ns/object",
            "GC CPU ns/object",
            "relocated MB/s",
        ],
    );
    let cell = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{x:.0}"));
    let rows: Vec<Vec<String>> = sorted(summaries)
        .into_iter()
        .filter(|s| s.mode != gc_runtime::Mode::Epsilon && s.is_ours())
        .map(|s| {
            let c = &s.collector;
            let mut row = mode_heap(s, b);
            row.extend([
                c.cycles.to_string(),
                cell(c.mark_ns_per_object),
                cell(c.gc_cpu_ns_per_object),
                cell(c.relocate_mb_per_s),
            ]);
            row
        })
        .collect();
    Some(render(&header, &numbers_right(header.len(), b), &rows))
}

/// The CPU budget of each run of this project's collector (`crate::cpu_budget`): the mutators'
/// running time and the collector's CPU per operation, their ratio, the mutator share of the
/// run against the share the cores allow at that ratio, how busy the cores were, and the ratio
/// at which the cores would allow the mutators half of the run. `None` when no run has one
/// (JVM runs only, or results without a core count).
pub fn cpu_budget_table(summaries: &[RunSummary]) -> Option<String> {
    if !summaries.iter().any(|s| s.cpu_budget.is_some()) {
        return None;
    }
    let b = with_buffers(summaries);
    let header = header_with(
        b,
        &[
            "cores",
            "mutator µs/op",
            "GC CPU µs/op",
            "GC ÷ mutator",
            "mutator share: run / cores allow",
            "cores busy",
            "GC ÷ mutator for 50%",
        ],
    );
    let rows: Vec<Vec<String>> = sorted(summaries)
        .into_iter()
        .filter_map(|s| {
            let c = s.cpu_budget.as_ref()?;
            let mut row = mode_heap(s, b);
            let half = c.gc_per_mutator_for(0.5);
            row.extend([
                c.cores.to_string(),
                format!("{:.2}", c.mutator_ns_per_op / 1e3),
                format!("{:.2}", c.gc_cpu_ns_per_op / 1e3),
                format!("{:.1}", c.gc_per_mutator()),
                format!(
                    "{} / {}",
                    format::percent(c.mutator_share),
                    format::percent(c.share_allowed)
                ),
                format::percent(c.busy),
                if half > 0.0 {
                    format!("≤ {half:.1}")
                } else {
                    "–".to_string()
                },
            ]);
            Some(row)
        })
        .collect();
    Some(render(&header, &numbers_right(header.len(), b), &rows))
}

/// Requests (workloads that serve them): rate and latency percentiles; `None` when no run
/// recorded request latency.
pub fn requests_table(summaries: &[RunSummary]) -> Option<String> {
    if !summaries.iter().any(|s| s.request_latency.is_some()) {
        return None;
    }
    let b = with_buffers(summaries);
    let header = header_with(b, &["requests/s", "p50", "p99", "p99.9", "max"]);
    let rows: Vec<Vec<String>> = sorted(summaries)
        .into_iter()
        .map(|s| {
            let mut row = mode_heap(s, b);
            match &s.request_latency {
                Some(l) if l.count > 0 => row.extend([
                    format::rate(s.ops_per_sec),
                    format::duration_ns(l.p50_ns),
                    format::duration_ns(l.p99_ns),
                    format::duration_ns(l.p99_9_ns),
                    format::duration_ns(l.max_ns),
                ]),
                _ => row.extend(std::iter::repeat_n("–".to_string(), 5)),
            }
            row
        })
        .collect();
    Some(render(&header, &numbers_right(header.len(), b), &rows))
}

/// Memory: the peaks of the samples over the run (committed heap, direct and pooled buffer
/// bytes, Pss, RSS) and how the direct buffers were freed; `None` when no run has samples.
pub fn memory_table(summaries: &[RunSummary]) -> Option<String> {
    if !summaries.iter().any(|s| s.memory.samples > 0) {
        return None;
    }
    // JVM runs sample no memory.
    let summaries: Vec<RunSummary> = summaries.iter().filter(|s| s.is_ours()).cloned().collect();
    let summaries = summaries.as_slice();
    let b = with_buffers(summaries);
    let header = header_with(
        b,
        &[
            "committed",
            "direct",
            "pooled",
            "Pss",
            "RSS",
            "buffers freed",
            "by cleaner",
        ],
    );
    let rows: Vec<Vec<String>> = sorted(summaries)
        .into_iter()
        .map(|s| {
            let m = &s.memory;
            let mut row = mode_heap(s, b);
            row.extend([
                format::memory(m.peak_committed_heap_bytes),
                format::memory(m.peak_direct_bytes),
                format::memory(m.peak_pooled_bytes),
                format::memory(m.peak_pss_bytes),
                format::memory(m.peak_rss_bytes),
                (m.direct_released + m.direct_cleaned).to_string(),
                m.direct_cleaned.to_string(),
            ]);
            row
        })
        .collect();
    Some(render(&header, &numbers_right(header.len(), b), &rows))
}

/// Lines under the tables about single runs: the too-few-cycles footnote (once, if any row is
/// marked) and each run that `--min-cycles` extended.
pub fn run_notes(summaries: &[RunSummary]) -> Vec<String> {
    let mut notes = Vec::new();
    let few: Vec<&RunSummary> = sorted(summaries)
        .into_iter()
        .filter(|s| s.cycles_warning.is_some())
        .collect();
    if !few.is_empty() {
        let labels: Vec<&str> = few.iter().map(|s| s.label.as_str()).collect();
        notes.push(format!(
            "{FEW_CYCLES_MARK} Fewer than {} complete GC cycles in the measured window ({}): \
             such a row measures too little to compare. Rerun with `--min-cycles {}` (extends \
             a short run, up to {}× `--duration`) or with a longer `--duration`.",
            crate::min_cycles::WARN_BELOW_CYCLES,
            labels.join(", "),
            crate::min_cycles::WARN_BELOW_CYCLES,
            crate::min_cycles::MAX_DURATION_FACTOR,
        ));
    }
    for s in sorted(summaries) {
        if s.extended_by_ms > 0 {
            let short = if s.complete_cycles < u64::from(s.min_cycles) {
                format!(
                    ": the {}× limit came first",
                    crate::min_cycles::MAX_DURATION_FACTOR
                )
            } else {
                String::new()
            };
            notes.push(format!(
                "{}: extended by {} for `--min-cycles {}` (measured {}, {} complete cycles{short}).",
                s.label,
                format::duration_ns(s.extended_by_ms * 1_000_000),
                s.min_cycles,
                format::duration_ns(s.wall_ns),
                s.complete_cycles
            ));
        }
    }
    notes
}

/// `concurrent` ÷ `stw` at each heap where both ran (the first run of each), or `None` if
/// there is no such heap. Pause, longest-wait and hiccup ratios below 1 favour `concurrent`; throughput near
/// 1 means concurrency costs little. MMU is shown as both values (`concurrent / stw`).
pub fn ratio_table(summaries: &[RunSummary]) -> Option<String> {
    let find = |mode: Mode, heap: u64| {
        summaries
            .iter()
            .find(|s| s.mode == mode && s.heap_bytes == heap && s.is_ours())
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
            let wait = match (&c.longest_wait, &s.longest_wait) {
                (Some(a), Some(b)) => format::ratio(a.duration_ns as f64, b.duration_ns as f64),
                _ => "–".to_string(),
            };
            Some(vec![
                format::bytes(heap),
                pause(|x| x.pauses.p99_ns),
                pause(|x| x.pauses.max_ns),
                wait,
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
        "longest wait",
        "hiccup p99",
        "hiccup max",
        "MMU 10 ms (both)",
        "throughput",
    ];
    let mut right = vec![true; header.len()];
    right[0] = false;
    Some(render(&header, &right, &rows))
}

/// What a JVM row's numbers are, under the tables of a sweep with `--jvm`.
pub const JVM_ROWS: &str = "JDK rows: the workload's Java twin under that HotSpot collector, \
    its figures read from the JVM's GC log. pauses: every safepoint (a collection's or not: \
    every one stops every Java thread), from the request to stop until the threads resumed, \
    time to safepoint included, as this project counts its pauses; the log's own `Pause Mark \
    Start 0.009ms` is only the work inside it. stalls: ZGC's allocation stalls (a thread waited \
    for a cycle to free memory) and relocation stalls (it waited for a page being relocated) \
    of the workload's threads; G1, Parallel and Serial do not stall, they pause. cycles: the \
    log's collections (`GC(n)`) that started and ended in the window; for G1 each young, mixed \
    and full collection and each concurrent mark cycle is one. There is no pacing or page \
    allocation to record on the JVM (0). hiccups: the twin's own 1 ms meter, a Java thread; \
    control max: this program's control meter, run while the twin ran. MMU counts the pauses \
    and the workload's stalls. felt / imposed: the same for a JVM run, whose log gives each \
    safepoint (time to safepoint included) and stall once, with no pacer whose delay could be \
    held longer than asked; page allocations are not in the log. Collector speed and memory are not measured for JVM runs.";

/// One line per JVM run: the JDK's version and launcher and every JVM option.
pub fn jvm_notes(results: &[RunResult]) -> Vec<String> {
    results
        .iter()
        .filter_map(|r| {
            let j = r.config.jvm.as_ref()?;
            Some(format!(
                "- {}: Java {} ({}), `{}`",
                r.label(),
                j.version,
                j.java.display(),
                j.flags.join(" ")
            ))
        })
        .collect()
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
    let ours: Vec<&RunResult> = results.iter().filter(|r| r.pages.is_some()).collect();
    if let Some(first) = ours.first().and_then(|r| r.pages) {
        if ours
            .iter()
            .all(|r| r.pages.map(|p| p.label()) == Some(first.label()))
        {
            parts.push(format!(
                "pages: {} (--huge-pages {})",
                first.label(),
                first.requested
            ));
        }
    }
    parts.join(", ")
}

/// Lines on the pages each run's heap was on, when the runs differ (one line per run), and a
/// plain statement for each run that asked for huge pages and got none.
pub fn pages_notes(results: &[RunResult]) -> Vec<String> {
    let ours: Vec<&RunResult> = results.iter().filter(|r| r.pages.is_some()).collect();
    let labels: Vec<String> = ours
        .iter()
        .filter_map(|r| r.pages.map(|p| p.label()))
        .collect();
    let mut notes = Vec::new();
    if labels.iter().any(|l| *l != labels[0]) {
        for r in &ours {
            let p = r.pages.expect("filtered");
            notes.push(format!(
                "{}: pages {} (--huge-pages {}).",
                r.label(),
                p.label(),
                p.requested
            ));
        }
    }
    for r in &ours {
        let p = r.pages.expect("filtered");
        if p.got_none() {
            notes.push(format!(
                "{}: asked for huge pages (--huge-pages {}) but got none: its heap was on 4 KiB \
                 pages the whole run (the kernel found no free 2 MiB page when it committed).",
                r.label(),
                p.requested
            ));
        }
    }
    notes
}

/// A line per run with the generational bookkeeping (`RunResult::remembered_set`): what its
/// remembered set did since the heap was created, set-up included.
pub fn remembered_set_notes(results: &[RunResult]) -> Vec<String> {
    results
        .iter()
        .filter_map(|r| {
            let m = r.remembered_set?;
            Some(format!(
                "{}: remembered set since the heap's creation (set-up included): {} slots \
                 remembered by the store barrier and {} by relocation; minors scanned {} \
                 remembered slots and kept {}; {} full cycles stopped the remembering (no \
                 minor was coming before the next).",
                r.label(),
                m.barrier_remembered,
                m.relocation_remembered,
                m.scanned,
                m.scanned_kept,
                m.majors_unremembered
            ))
        })
        .collect()
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
    out += "\n## Felt and collector-imposed\n\n";
    out += &felt_imposed_table(&summaries);
    out += "\n## Time to safepoint and the wait for a CPU\n\n";
    out += &safepoint_table(&summaries);
    out += "\n## Allocation stalls and pacing delays\n\n";
    out += &waits_table(&summaries);
    out += "\n## Utilization and hiccups\n\n";
    out += &utilization_table(&summaries);
    if let Some(t) = collector_table(&summaries) {
        out += "\n## Collector speed (medians over complete cycles)\n\n";
        out += &t;
    }
    if let Some(t) = cpu_budget_table(&summaries) {
        out += "\n## CPU budget\n\n";
        out += &t;
    }
    if let Some(t) = requests_table(&summaries) {
        out += "\n## Requests\n\n";
        out += &t;
    }
    if let Some(t) = memory_table(&summaries) {
        out += "\n## Memory (peaks of the 100 ms samples)\n\n";
        out += &t;
    }
    let mut notes = run_notes(&summaries);
    notes.extend(pages_notes(results));
    notes.extend(remembered_set_notes(results));
    if !notes.is_empty() {
        out += "\n";
        for n in notes {
            out += &format!("{n}\n");
        }
    }
    if let Some(ratios) = ratio_table(&summaries) {
        out += "\n## concurrent ÷ stw\n\n";
        out += &ratios;
    }
    let jvm = jvm_notes(results);
    if !jvm.is_empty() {
        out += "\n## JVM runs\n\n";
        for n in jvm {
            out += &format!("{n}\n");
        }
        out += &format!("\n{JVM_ROWS}\n");
    }
    out += "\nOnly the measured phase counts (not set-up): the pauses, stalls, pacing delays and \
            cycles that start in it. cycles: GC cycles that started and ended in it (for a \
            generational run, \"12 (9 minor)\": 9 minor (young-only) cycles, 3 majors). Pauses \
            include time to safepoint. stw: the whole cycle in one pause, started when the \
            heap is nearly full (a stall there is an allocation that found it full first and \
            waited through that pause). longest wait: the longest single time a mutator of the \
            workload could not run (the hiccup meter's own waits are left out here and in MMU), \
            and why: a pause, an allocation stall, a pacing delay or a page allocation \
            (page-alloc: a new page whose memory the heap had to commit and map, 1 ms or \
            longer). wait total: the time the most-delayed mutator thread spent waiting (every \
            pause, which stops all threads, and its own stalls, pacing delays and page \
            allocations; overlaps count once). beyond floor: the pacing delays that went \
            beyond the pacer's floor (it yields when free memory would run out before the \
            cycle ends: a window at a lower share instead of an allocation stall), and their \
            time beyond it in all. page allocs: how many such page allocations, \
            and the longest. MMU W: the \
            worst share of any W-long window left to the mutators by pauses, stalls, pacing \
            delays and page allocations. felt / imposed: the longest wait and MMU as the \
            program felt them (a pacing delay as long as the thread was held: the sleep, the \
            operating system's late wake-up, a pause that held the sleeper) and counting only \
            what the collector imposed (pauses with time to safepoint, stalls, page \
            allocations, and each pacing delay as long as the pacer asked for); a felt figure \
            far beyond the imposed one, with a long control max, is the machine's doing; \
            `n/a`: results written before the delay asked for was recorded. ttsp: time to \
            safepoint, from the collector's request until every mutator stopped; CPU wait max: \
            the longest time a mutator spent in one runnable but without a CPU (its thread's \
            run delay from the kernel, at most the time to safepoint); pause p99 / max less \
            CPU wait: each pause less that wait, so a pause far beyond this figure waited for \
            the scheduler, not for the collector or the mutator's path to its safepoint poll. Hiccups: a 1 ms sleep-and-allocate loop's overshoot, coordinated-omission \
            corrected; control max: the longest overshoot of the same 1 ms sleep on a thread \
            outside the heap (no barrier, allocation or safepoint): the machine's noise, plus \
            in `stw` the pauses' GC workers on every core, as any thread felt it in that run. Collector speed: marking wall time (its phases, roots included) per object \
            marked, all GC threads' CPU time of the cycle per object marked, and bytes \
            relocated per second of the relocation phases. CPU budget: \
            per operation, the time the mutators ran (not held by pauses, stalls, pacing or \
            page allocations) and the CPU time of the GC threads; since both draw on the same \
            cores, the mutators can run at most cores ÷ (threads × (1 + GC ÷ mutator)) of the \
            run whatever the pacer does, and a share near that bound with the cores near fully \
            busy means the collector's CPU, not the pacer's schedule, decided how long they \
            were held; GC ÷ mutator for 50%: what the ratio must come down to for the cores to \
            allow the mutators half of the run (a floor under an MMU of 50%). Requests: round trips as the clients saw them (from the moment a request \
            was due when throttled). Memory: the highest of the samples taken every 100 ms of \
            the measured phase: committed heap, direct and pooled buffer bytes held, RSS (it \
            counts a heap page once per view it was touched through), and Pss, which is read \
            only at the start and the end, while no mutator runs; buffers freed: \
            direct and pooled buffers freed by release or by their owner's cleaner, and of \
            those by the cleaner. `–`: nothing to show.\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu_budget::CpuBudget;
    use crate::test_support::sample_result;
    use gc_runtime::stats::{PacingRecord, PageAllocationRecord, StallRecord};

    fn cells(l: &str) -> Vec<String> {
        l.trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    }

    /// The cells of data row `i` (after header and rule) of `table`.
    fn row(table: &str, i: usize) -> Vec<String> {
        cells(table.lines().nth(2 + i).unwrap())
    }

    /// Every line of `table` has the same width and `columns` cells.
    fn assert_aligned(table: &str, columns: usize) {
        let lines: Vec<&str> = table.lines().collect();
        let w = lines[0].chars().count();
        for l in &lines {
            assert_eq!(l.chars().count(), w, "{table}");
            assert_eq!(l.matches('|').count(), columns + 1, "{l}");
        }
        assert!(
            lines[1].ends_with(": |"),
            "numbers are right-aligned: {}",
            lines[1]
        );
    }

    fn stall(r: &crate::RunResult, at_ms: u64, dur_ns: u64) -> StallRecord {
        StallRecord {
            thread: "mutator-0".into(),
            start_at_ns: r.measure_start_at_ns + at_ms * 1_000_000,
            duration_ns: dur_ns,
            failed: false,
        }
    }

    fn pacing(r: &crate::RunResult, at_ms: u64, dur_ns: u64) -> PacingRecord {
        PacingRecord {
            thread: "mutator-0".into(),
            start_at_ns: r.measure_start_at_ns + at_ms * 1_000_000,
            duration_ns: dur_ns,
            imposed_ns: dur_ns,
            beyond_floor_ns: 0,
        }
    }

    /// Three runs: stw 1G (2 pauses), concurrent 1G (6 pauses, a 3 ms stall, two pacing
    /// delays), concurrent 256M (2 pauses).
    fn three_runs() -> Vec<crate::RunResult> {
        let mut conc = sample_result(
            Mode::Concurrent,
            1 << 30,
            &[100_000, 200_000, 150_000, 100_000, 120_000, 110_000],
        );
        conc.gc.stalls.push(stall(&conc, 50, 3_000_000));
        conc.gc.pacing.push(pacing(&conc, 700, 400_000));
        conc.gc.pacing.push(pacing(&conc, 900, 600_000));
        vec![
            sample_result(Mode::Stw, 1 << 30, &[40_000_000, 50_000_000, 45_000_000]),
            conc,
            sample_result(Mode::Concurrent, 256 << 20, &[90_000, 80_000]),
        ]
    }

    /// A generational run's cycles cell counts its minors apart, and `results.json` carries
    /// them (left out for runs without minors, so older readers see the same file).
    #[test]
    fn minor_cycles_are_counted_apart_in_the_table_and_the_json() {
        let mut gen = sample_result(Mode::Generational, 256 << 20, &[100_000; 12]);
        for c in gen.gc.cycles.iter_mut().take(2) {
            c.minor = true;
            c.cause = gc_runtime::stats::GcCause::MinorYoungOccupancy;
        }
        let conc = sample_result(Mode::Concurrent, 256 << 20, &[100_000; 12]);
        let summaries: Vec<RunSummary> = [&conc, &gen].map(RunSummary::of).to_vec();
        assert_eq!(
            (summaries[0].minor_cycles, summaries[1].minor_cycles),
            (0, 2)
        );
        let complete = summaries[1].complete_cycles;
        assert!(complete > 2, "{complete}");
        let table = main_table(&summaries);
        assert_eq!(row(&table, 0)[2], complete.to_string());
        let cell = format!("{complete} (2 minor)");
        assert_eq!(row(&table, 1)[..3], ["generational", "256M", cell.as_str()]);
        assert_aligned(&table, 9);
        let json = |s: &RunSummary| serde_json::to_value(s).unwrap();
        assert!(json(&summaries[0]).get("minor_cycles").is_none());
        assert_eq!(json(&summaries[1])["minor_cycles"], 2);
        let back: RunSummary = serde_json::from_value(json(&summaries[1])).unwrap();
        assert_eq!(back.minor_cycles, 2);
        assert!(markdown_report(&[conc, gen]).contains(&cell));
    }

    #[test]
    fn main_table_has_one_aligned_row_per_run_in_heap_then_mode_order() {
        let summaries: Vec<RunSummary> = three_runs().iter().map(RunSummary::of).collect();
        let table = main_table(&summaries);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 2 + 3, "{table}");
        assert!(lines[0].starts_with("| mode "));
        assert!(
            lines[1].starts_with("| ---------- |"),
            "mode is left-aligned: {}",
            lines[1]
        );
        assert_aligned(&table, 9);
        // The longest wait sits right after the maximum pause.
        let header = cells(lines[0]);
        let max = header.iter().position(|h| h == "pause max").unwrap();
        assert_eq!(header[max + 1], "longest wait");
        assert_eq!(header[max + 2], "wait total");
        assert_eq!(
            row(&table, 0),
            [
                "concurrent",
                "256M",
                "1 †",
                "2",
                "80.0 µs",
                "90.0 µs",
                "90.0 µs",
                "90.0 µs pause",
                "170 µs"
            ]
        );
        // The 3 ms stall is longer than any pause. The thread waited 780 µs of pauses, 3 ms of
        // stall and 1 ms of pacing, but the pacing delays at 700 and 900 ms overlap the
        // pauses there (100 and 120 µs), which count once: 4.56 ms.
        assert_eq!(
            row(&table, 1),
            [
                "concurrent",
                "1G",
                "2 †",
                "6",
                "110 µs",
                "200 µs",
                "200 µs",
                "3.00 ms stall",
                "4.56 ms"
            ]
        );
        assert_eq!(
            row(&table, 2),
            [
                "stw",
                "1G",
                "3",
                "3",
                "45.0 ms",
                "50.0 ms",
                "50.0 ms",
                "50.0 ms pause",
                "135 ms"
            ]
        );
    }

    #[test]
    fn waits_and_utilization_tables() {
        let mut runs = three_runs();
        // Two slow page allocations of the concurrent 1G run's mutator, one in the window.
        let page = |start_at_ns: u64, duration_ns: u64| PageAllocationRecord {
            thread: "mutator-0".into(),
            start_at_ns,
            duration_ns,
        };
        let start = runs[1].measure_start_at_ns;
        let (inside, before) = (
            page(start + 1_500_000_000, 2_500_000),
            page(start - 20_000_000, 9_000_000),
        );
        runs[1].gc.page_allocations.extend([inside, before]);
        let summaries: Vec<RunSummary> = runs.iter().map(RunSummary::of).collect();
        let t = waits_table(&summaries);
        assert_aligned(&t, 10);
        assert_eq!(
            row(&t, 1),
            [
                "concurrent",
                "1G",
                "1",
                "3.00 ms",
                "3.00 ms",
                "2",
                "1.00 ms",
                "600 µs",
                "1 / 2.50 ms",
                "12.3k"
            ]
        );
        assert_eq!(
            row(&t, 2),
            ["stw", "1G", "0", "–", "–", "0", "–", "–", "0", "12.3k"]
        );
        // The page allocation counts in the thread's total wait, not in the pause figures.
        assert_eq!(summaries[1].page_allocations.total_ns, 2_500_000);
        let u = utilization_table(&summaries);
        assert_aligned(&u, 9);
        assert_eq!(
            cells(u.lines().next().unwrap()),
            [
                "mode",
                "heap",
                "MMU 1 ms",
                "MMU 10 ms",
                "MMU 100 ms",
                "hiccup p99",
                "hiccup p99.9",
                "hiccup max",
                "control max"
            ]
        );
        // concurrent 1G: the 3 ms stall fills a 1 ms window and 30% of a 10 ms one; a 100 ms
        // window holds it and the 100 µs pause 50 ms later.
        assert_eq!(row(&u, 1)[2..5], ["0%", "70.0%", "96.9%"]);
        assert_eq!(row(&u, 2)[2..6], ["0%", "0%", "50.0%", "1.00 ms"]);
        assert_eq!(row(&u, 2)[8], "200 µs");
        assert!(!u.contains("request p99"));
    }

    #[test]
    fn felt_and_imposed_side_by_side() {
        let mut runs = three_runs();
        runs.push(crate::test_support::oversleeping_result(2 << 30));
        // A result written before the delay asked for was recorded.
        let mut old = crate::test_support::oversleeping_result(4 << 30);
        for p in &mut old.gc.pacing {
            p.imposed_ns = 0;
        }
        runs.push(old);
        let summaries: Vec<RunSummary> = runs.iter().map(RunSummary::of).collect();
        let t = felt_imposed_table(&summaries);
        assert_aligned(&t, 6);
        assert_eq!(
            cells(t.lines().next().unwrap()),
            [
                "mode",
                "heap",
                "longest wait felt / imposed",
                "MMU 10 ms felt / imposed",
                "control max",
                "beyond floor"
            ]
        );
        // concurrent 1G: the 3 ms stall either way, and no pacing delay was held longer
        // than asked, nor beyond the floor.
        assert_eq!(
            row(&t, 1)[2..],
            ["3.00 ms / 3.00 ms stall", "70.0% / 70.0%", "200 µs", "0"]
        );
        // A delay that went 400 µs beyond the floor is counted, with its time beyond it.
        let mut past = crate::test_support::oversleeping_result(4 << 30);
        past.gc.pacing[0].beyond_floor_ns = 400_000;
        let t_past = felt_imposed_table(&[RunSummary::of(&past)]);
        assert_eq!(row(&t_past, 0)[5], "1 / 400 µs", "{t_past}");
        // The oversleeping run: held 7 ms, asked 1 ms, so the 2 ms pause is the longest
        // imposed wait (the figures are derived in `oversleeping_result`'s comment).
        assert_eq!(
            row(&t, 3)[..4],
            [
                "concurrent",
                "2G",
                "7.00 ms pacing / 2.00 ms pause",
                "30.0% / 75.0%"
            ]
        );
        // Without the delay asked for, the imposed figures are not made up.
        assert_eq!(row(&t, 4)[2..4], ["7.00 ms pacing / n/a", "30.0% / n/a"]);
        // A run that never waited.
        let epsilon = [RunSummary::of(&sample_result(Mode::Epsilon, 1 << 30, &[]))];
        assert_eq!(
            row(&felt_imposed_table(&epsilon), 0)[2..4],
            ["–", "100% / 100%"]
        );
    }

    #[test]
    fn the_time_to_safepoint_and_its_wait_for_a_cpu() {
        let mut runs = three_runs();
        // A result without the reading (a JVM run, an older result).
        let mut old = sample_result(Mode::Concurrent, 4 << 30, &[100_000]);
        old.gc.pauses[0].time_to_safepoint_cpu_wait_ns = None;
        runs.push(old);
        let summaries: Vec<RunSummary> = runs.iter().map(RunSummary::of).collect();
        let t = safepoint_table(&summaries);
        assert_aligned(&t, 7);
        assert_eq!(
            cells(t.lines().next().unwrap()),
            [
                "mode",
                "heap",
                "pauses",
                "ttsp p99",
                "ttsp max",
                "CPU wait max",
                "pause p99 / max less CPU wait"
            ]
        );
        // concurrent 1G: pauses of 100-200 µs, a tenth of each the time to safepoint and a
        // twentieth a wait for a CPU (`sample_result`).
        assert_eq!(
            row(&t, 1)[2..],
            ["6", "20.0 µs", "20.0 µs", "10.0 µs", "190 µs / 190 µs"]
        );
        assert_eq!(row(&t, 3)[5..], ["–", "–"], "{t}");
    }

    #[test]
    fn a_generational_run_says_what_its_remembered_set_did() {
        let mut runs = three_runs();
        runs[1].config.mode = Mode::Generational;
        runs[1].remembered_set = Some(gc_runtime::RememberedSetStats {
            barrier_remembered: 5,
            relocation_remembered: 7,
            scanned: 11,
            scanned_kept: 3,
            majors_unremembered: 2,
            ..Default::default()
        });
        let notes = remembered_set_notes(&runs);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("generational 1G: remembered set since the heap's creation")
                && notes[0].contains("5 slots remembered by the store barrier and 7 by")
                && notes[0].contains("minors scanned 11 remembered slots and kept 3; 2 full"),
            "{notes:?}"
        );
        assert!(markdown_report(&runs).contains(&notes[0]));
    }

    #[test]
    fn tables_fit_a_120_column_terminal() {
        let mut runs = three_runs();
        // Wide cells: a 4-digit pause count and seconds-long waits.
        runs.push(sample_result(Mode::Stw, 4 << 30, &[2_140_000_000; 9]));
        let long = stall(&runs[3], 10, 1_234_000_000);
        runs[3].gc.stalls.push(long);
        let summaries: Vec<RunSummary> = runs.iter().map(RunSummary::of).collect();
        for t in [
            main_table(&summaries),
            felt_imposed_table(&summaries),
            safepoint_table(&summaries),
            waits_table(&summaries),
            utilization_table(&summaries),
            ratio_table(&summaries).unwrap(),
        ] {
            let w = t.lines().map(|l| l.chars().count()).max().unwrap();
            assert!(w <= 120, "{w} columns:\n{t}");
        }
    }

    #[test]
    fn the_pages_are_stated_once_when_runs_agree_and_per_run_when_not() {
        use gc_runtime::{HugePages, PageSizeReading};
        let mut runs = three_runs();
        let small = PageSizeReading {
            requested: HugePages::Off,
            committed: 1 << 30,
            huge_bytes: 0,
        };
        for r in &mut runs {
            r.pages = Some(small);
        }
        assert!(description(&runs).ends_with("pages: 4 KiB (--huge-pages off)"));
        assert!(pages_notes(&runs).is_empty());
        // One run on huge pages, one that asked and got none.
        runs[1].pages = Some(PageSizeReading {
            requested: HugePages::Hugetlb,
            committed: 1 << 30,
            huge_bytes: 512 << 20,
        });
        runs[2].pages = Some(PageSizeReading {
            requested: HugePages::Transparent,
            ..small
        });
        assert!(!description(&runs).contains("pages:"));
        let notes = pages_notes(&runs);
        assert_eq!(notes.len(), 4, "{notes:?}");
        assert!(
            notes[1].ends_with(
                "pages 2 MiB (512 MiB of the heap on huge pages) (--huge-pages hugetlb)."
            ),
            "{}",
            notes[1]
        );
        assert!(
            notes[3].contains("asked for huge pages (--huge-pages transparent) but got none"),
            "{}",
            notes[3]
        );
        let report = markdown_report(&runs);
        assert!(report.contains(&notes[3]), "{report}");
    }

    #[test]
    fn too_few_cycles_are_marked_and_explained_and_extensions_noted() {
        let mut runs = three_runs();
        runs[1].extended_by_ms = 1_500;
        runs[1].wall_ns = 3_500_000_000;
        runs[1].config.min_cycles = 3;
        runs[2].extended_by_ms = 500;
        runs[2].config.min_cycles = 1;
        let summaries: Vec<RunSummary> = runs.iter().map(RunSummary::of).collect();
        let notes = run_notes(&summaries);
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes[0].starts_with("† Fewer than 3 complete GC cycles"),
            "{}",
            notes[0]
        );
        assert!(
            notes[0].contains("(concurrent 256M, concurrent 1G)"),
            "{}",
            notes[0]
        );
        assert!(notes[0].contains("`--min-cycles 3`"), "{}", notes[0]);
        // Notes in table order: 256M first.
        assert_eq!(
            notes[1],
            "concurrent 256M: extended by 500 ms for `--min-cycles 1` (measured 2.00 s, 1 \
             complete cycles)."
        );
        assert_eq!(
            notes[2],
            "concurrent 1G: extended by 1.50 s for `--min-cycles 3` (measured 3.50 s, 2 complete \
             cycles: the 4× limit came first)."
        );
        let md = markdown_report(&runs);
        assert!(md.contains(&notes[0]), "{md}");
        // Enough cycles everywhere: no marker, no footnote.
        let ok = [sample_result(Mode::Stw, 1 << 30, &[1_000_000; 3])];
        let md = markdown_report(&ok);
        assert!(!md.contains(FEW_CYCLES_MARK), "{md}");
        let epsilon = [sample_result(Mode::Epsilon, 1 << 30, &[])];
        assert!(!markdown_report(&epsilon).contains(FEW_CYCLES_MARK));
    }

    #[test]
    fn jvm_rows_follow_ours_and_stay_out_of_the_ratios() {
        use crate::jvm::JvmCollector;
        use crate::test_support::sample_jvm_result;
        let results = [
            sample_jvm_result(JvmCollector::G1, 1 << 30, &[9_000_000]),
            sample_jvm_result(JvmCollector::Zgc, 1 << 30, &[50_000, 60_000, 70_000]),
            sample_result(Mode::Stw, 1 << 30, &[40_000_000, 50_000_000]),
            sample_result(Mode::Concurrent, 1 << 30, &[100_000, 200_000]),
            sample_jvm_result(JvmCollector::G1, 256 << 20, &[3_000_000]),
        ];
        let summaries: Vec<RunSummary> = results.iter().map(RunSummary::of).collect();
        let t = main_table(&summaries);
        let names: Vec<String> = (0..5).map(|i| row(&t, i)[0].clone()).collect();
        assert_eq!(
            names,
            ["JDK 17 G1", "concurrent", "stw", "JDK 17 G1", "JDK 17 ZGC"],
            "{t}"
        );
        assert_eq!(row(&t, 3)[6], "9.00 ms");
        // The ratios pair this project's modes only: the G1 run is no stw partner.
        let r = ratio_table(&summaries).unwrap();
        assert!(r.contains("0.0040×"), "{r}");
        assert!(ratio_table(&summaries[..2]).is_none());
        assert!(!collector_table(&summaries).unwrap().contains("JDK"));
        let md = markdown_report(&results);
        assert!(md.contains("## JVM runs"), "{md}");
        assert!(
            md.contains("- JDK 17 ZGC 1G: Java 17.0.15+6 (/usr/bin/java), `-Xmx1024m -XX:+UseZGC`"),
            "{md}"
        );
        assert!(md.contains(JVM_ROWS));
        assert!(!markdown_report(&results[2..4]).contains("JVM runs"));
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
        // p99 200 µs ÷ 50 ms, max and longest wait the same: 0.004; equal throughput: 1.0.
        assert_eq!(lines[2].matches("0.0040×").count(), 3, "{t}");
        assert!(lines[2].contains("1.0×"), "{t}");
        assert!(lines[2].contains(" 98.0% / 0% |"), "{t}");
        assert!(ratio_table(&summaries[..1]).is_none());
    }

    #[test]
    fn cpu_budget_table_shows_each_run_against_its_bound() {
        let results = [
            sample_result(Mode::Concurrent, 1 << 30, &[100_000]),
            sample_result(Mode::Stw, 1 << 30, &[40_000_000]),
        ];
        let mut summaries: Vec<RunSummary> = results.iter().map(RunSummary::of).collect();
        // The sample's own figures: 2 s, one 100 µs pause, 24,690 operations, 1 ms of GC CPU.
        let b = summaries[0]
            .cpu_budget
            .clone()
            .expect("a budget for our runs");
        assert_eq!((b.cores, b.threads), (2, 1));
        assert!((b.mutator_share - (2e9 - 1e5) / 2e9).abs() < 1e-9, "{b:?}");
        assert_eq!(b.share_allowed, 1.0);
        // A run whose collector costs three times its mutator: half of two cores at most.
        summaries[0].cpu_budget =
            CpuBudget::from_figures(2, 1, 10_000_000_000, 5_000_000_000, 1_000_000, 15e9 as u64);
        summaries[1].cpu_budget = None;
        let t = cpu_budget_table(&summaries).unwrap();
        assert_eq!(
            row(&t, 0),
            [
                "concurrent",
                "1G",
                "2",
                "5.00",
                "15.00",
                "3.0",
                "50.0% / 50.0%",
                "100%",
                "≤ 3.0"
            ],
            "{t}"
        );
        assert_eq!(
            t.lines().count(),
            3,
            "runs without a budget have no row: {t}"
        );
        summaries[0].cpu_budget = None;
        assert!(cpu_budget_table(&summaries).is_none());
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
        assert!(md.contains("## Allocation stalls and pacing delays"));
        assert!(md.contains("## Utilization and hiccups"));
        assert!(md.contains("## concurrent ÷ stw"));
        assert!(md.contains("## Collector speed (medians over complete cycles)"));
        assert!(md.contains("## CPU budget"));
        // One row per table.
        assert_eq!(md.matches("| concurrent |").count(), 7);
        assert!(md.contains("## Time to safepoint and the wait for a CPU"));
        assert!(md.contains("## Felt and collector-imposed"));
        assert!(md.contains(
            "longest wait: the longest single time a mutator of the workload could not run"
        ));
    }

    #[test]
    fn runs_without_pauses_show_dashes() {
        let results = [sample_result(Mode::Epsilon, 1 << 30, &[])];
        let summaries: Vec<RunSummary> = results.iter().map(RunSummary::of).collect();
        let t = main_table(&summaries);
        assert_eq!(
            row(&t, 0),
            ["epsilon", "1G", "0", "0", "–", "–", "–", "–", "0"],
            "{t}"
        );
        let u = utilization_table(&summaries);
        assert_eq!(row(&u, 0)[2..5], ["100%", "100%", "100%"]);
    }
}

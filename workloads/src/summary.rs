//! The derived figures of one run, as the tables and plots show them and `results.json` lists
//! them next to the raw results: pause percentiles (all kinds together and per kind), time to
//! safepoint, the mutator waits (the longest of any kind, the total per thread, allocation
//! stalls and pacing delays; see [`crate::waits`]), hiccups, MMU at 1/10/100 ms, throughput,
//! cycles (and a warning when too few completed, see [`crate::min_cycles`]) and causes. The
//! MMU and the longest wait come twice: as the program felt them, and counting only what the
//! collector imposed (see [`crate::waits::WaitMeasure`]).
//!
//! Pause percentiles are exact (nearest rank over the run's pauses); hiccup and request
//! percentiles come from their HDR histograms (within 0.1%). Only the measured phase counts
//! (see [`RunResult::measured_pauses`]).

use crate::buffer_kind::BufferKind;
use crate::collector_speed::CollectorSpeed;
use crate::cpu_budget::CpuBudget;
use crate::latency::PercentileSummary;
use crate::memory_timeline::MemoryFigures;
use crate::mmu::STANDARD_WINDOWS_NS;
use crate::run_result::{Mode, RunResult};
use crate::waits::{self, Wait, WaitFigures, WaitKind, WaitMeasure};
use crate::workloads::WorkloadKind;
use gc_runtime::{GcCause, PauseKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// MMU at one window size.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MmuPoint {
    pub window_ns: u64,
    /// Fraction in [0, 1].
    pub utilization: f64,
}

/// The derived figures of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// `concurrent 1G`.
    pub label: String,
    pub workload: WorkloadKind,
    pub mode: Mode,
    pub heap_bytes: u64,
    pub live_set_bytes: u64,
    /// For a JVM run (`--jvm`), its series: the JDK and collector (`JDK 17 ZGC`); `mode` is
    /// then only the nearest of this project's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jvm: Option<String>,
    /// The buffer kind the run shows (see `RunConfig::shown_buffers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffers: Option<BufferKind>,
    /// The pages the heap was on (`4 KiB`, `2 MiB (N MiB of the heap on huge pages)`, see
    /// `gc_runtime::PageSizeReading::label`); `None` for JVM runs and older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<String>,
    /// Whole pauses (time to safepoint included).
    pub pauses: PercentileSummary,
    /// Time to safepoint alone.
    pub time_to_safepoint: PercentileSummary,
    /// Whole pauses less the part of their time to safepoint a mutator spent runnable without
    /// a CPU (`gc_runtime::stats::PauseRecord::time_to_safepoint_cpu_wait_ns`): the pauses as
    /// the collector and the mutators' paths to their next safepoint poll made them, without
    /// what the scheduler added (whoever held the mutator's core). A pause without the reading counts whole. `None`
    /// when no pause of the run has it (JVM runs, older results, kernels without
    /// `schedstat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pauses_less_cpu_wait: Option<PercentileSummary>,
    /// The time to safepoint's wait for a CPU itself, over the pauses that have the reading;
    /// `None` as for `pauses_less_cpu_wait`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_safepoint_cpu_wait: Option<PercentileSummary>,
    /// Whole pauses per kind (keyed by log name in results.json: "Pause Mark Start", ...).
    pub pauses_by_kind: BTreeMap<PauseKind, PercentileSummary>,
    /// Sum of all pause times.
    pub total_pause_ns: u64,
    pub stalls: u64,
    pub failed_stalls: u64,
    pub total_stall_ns: u64,
    /// The longest allocation stall (0 when none).
    #[serde(default)]
    pub longest_stall_ns: u64,
    /// Pacing delays: count, sum and longest.
    #[serde(default)]
    pub pacing: WaitFigures,
    /// The pacing delays that went beyond the pacer's floor (it yields when free memory
    /// would run out before the cycle ends, see `gc_runtime::PacingRecord::beyond_floor_ns`):
    /// how many, and the delay time beyond the floor in all and the most of one.
    #[serde(default)]
    pub pacing_beyond_floor: WaitFigures,
    /// Page allocations that committed and mapped memory (100 µs or longer): count, sum and
    /// longest.
    #[serde(default)]
    pub page_allocations: WaitFigures,
    /// The longest single mutator wait of any kind: a pause (time to safepoint included), an
    /// allocation stall, a pacing delay or a page allocation. `None` when nothing waited.
    #[serde(default)]
    pub longest_wait: Option<Wait>,
    /// Total wait of the mutator thread that waited most: the length of the union of every
    /// pause and that thread's own stalls and pacing delays (see [`crate::waits`]).
    #[serde(default)]
    pub total_wait_ns: u64,
    /// That thread (`None` when there are no threads to speak of).
    #[serde(default)]
    pub total_wait_thread: Option<String>,
    /// Total wait of every mutator thread: the workload's threads and any other thread a
    /// stall or pacing delay names (the hiccup meter, say).
    #[serde(default)]
    pub wait_by_thread: BTreeMap<String, u64>,
    /// The hiccup meter, coordinated-omission corrected.
    pub hiccup: PercentileSummary,
    /// The control meter (a thread outside the heap: what any thread felt), corrected
    /// the same way. All zero when the run had none.
    #[serde(default)]
    pub control_hiccup: PercentileSummary,
    /// MMU at 1, 10 and 100 ms, as the program felt it.
    pub mmu: Vec<MmuPoint>,
    /// MMU at the same windows counting only what the collector imposed: pauses (time to
    /// safepoint included), allocation stalls, pacing delays as long as the pacer asked for
    /// (not as long as the thread was held), page allocations. Empty when
    /// `imposed_unavailable` says why it cannot be computed.
    #[serde(default)]
    pub mmu_imposed: Vec<MmuPoint>,
    /// The longest single wait counting only what the collector imposed (a pacing delay as
    /// asked for), and its kind. `None` when nothing waited or when `imposed_unavailable`
    /// says why it cannot be computed.
    #[serde(default)]
    pub longest_wait_imposed: Option<Wait>,
    /// Why the imposed figures (`mmu_imposed`, `longest_wait_imposed`) are missing; `None`
    /// when they are computed.
    #[serde(default)]
    pub imposed_unavailable: Option<String>,
    pub operations: u64,
    pub ops_per_sec: f64,
    pub wall_ns: u64,
    /// GC cycles that started in the measured phase.
    pub cycles: u64,
    /// GC cycles that started and ended in the measured phase.
    #[serde(default)]
    pub complete_cycles: u64,
    /// How many of `complete_cycles` were minor (young-only) cycles: the `generational`
    /// mode's, or requested ones; the others were majors. Left out of `results.json` when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub minor_cycles: u64,
    /// Set when `complete_cycles` is too few for the row to mean much (see
    /// [`crate::min_cycles::cycles_warning`]).
    #[serde(default)]
    pub cycles_warning: Option<String>,
    /// The run's `--min-cycles` (0: none).
    #[serde(default)]
    pub min_cycles: u32,
    /// How far `--min-cycles` extended the measurement past the requested duration.
    #[serde(default)]
    pub extended_by_ms: u64,
    /// Cycles per cause (keyed by log name in results.json: "Allocation Rate", ...).
    pub causes: BTreeMap<GcCause, u64>,
    /// GC thread CPU time of the measured cycles.
    pub gc_cpu_ns: u64,
    pub request_latency: Option<PercentileSummary>,
    pub committed_heap_bytes: u64,
    pub pss_bytes: u64,
    pub rss_bytes: u64,
    /// Memory over the run: the peaks of the samples, how direct buffers were freed.
    #[serde(default)]
    pub memory: MemoryFigures,
    /// The collector's marking cost per object and relocation rate.
    #[serde(default)]
    pub collector: CollectorSpeed,
    /// The run's CPU budget: the mutator share the cores allow at the collector's CPU per
    /// operation. `None` for JVM runs and results without a core count.
    #[serde(default)]
    pub cpu_budget: Option<CpuBudget>,
}

/// For `skip_serializing_if`: a count of 0 is left out of `results.json`.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl RunSummary {
    /// Compute the figures of `r`.
    pub fn of(r: &RunResult) -> Self {
        let totals: Vec<u64> = r.measured_pauses().map(|p| p.total_ns).collect();
        let ttsp: Vec<u64> = r
            .measured_pauses()
            .map(|p| p.time_to_safepoint_ns)
            .collect();
        let less_cpu_wait: Vec<u64> = r
            .measured_pauses()
            .map(|p| {
                let wait = p.time_to_safepoint_cpu_wait_ns.unwrap_or(0);
                p.total_ns.saturating_sub(wait)
            })
            .collect();
        let cpu_waits: Vec<u64> = r
            .measured_pauses()
            .filter_map(|p| p.time_to_safepoint_cpu_wait_ns)
            .collect();
        let cpu_wait_read = !cpu_waits.is_empty();
        let mut by_kind: BTreeMap<PauseKind, Vec<u64>> = BTreeMap::new();
        for p in r.measured_pauses() {
            by_kind.entry(p.kind).or_default().push(p.total_ns);
        }
        let mut causes: BTreeMap<GcCause, u64> = BTreeMap::new();
        for c in r.measured_cycles() {
            *causes.entry(c.cause.clone()).or_default() += 1;
        }
        let timeline = r.unavailability_timeline();
        let waits = waits::measured_waits(r);
        let imposed_unavailable = r.imposed_unavailable();
        let (mmu_imposed, longest_wait_imposed) = if imposed_unavailable.is_some() {
            (Vec::new(), None)
        } else {
            let imposed = waits::measured_waits_as(r, WaitMeasure::Imposed);
            (
                mmu_points(&r.imposed_timeline(), r.wall_ns),
                waits::longest_wait(&imposed, &r.config.mutator_names()).cloned(),
            )
        };
        let wait_by_thread = waits::wait_by_thread(&waits, &r.config.mutator_names());
        // The thread that waited most; the first by name on a tie.
        let most = wait_by_thread
            .iter()
            .rev()
            .max_by_key(|(_, &ns)| ns)
            .map(|(t, &ns)| (t.clone(), ns));
        let complete_cycles = r.complete_cycles().count() as u64;
        let gc_cpu_ns = r.measured_cycles().map(|c| c.gc_cpu_ns).sum();
        let mutator_waits: u64 = r
            .config
            .mutator_names()
            .iter()
            .filter_map(|t| wait_by_thread.get(t))
            .sum();
        let cpu_budget = r
            .config
            .jvm
            .is_none()
            .then(|| {
                CpuBudget::from_figures(
                    r.cores,
                    r.config.threads,
                    r.wall_ns,
                    mutator_waits,
                    r.operations,
                    gc_cpu_ns,
                )
            })
            .flatten();
        RunSummary {
            label: r.label(),
            workload: r.config.workload,
            mode: r.config.mode,
            heap_bytes: r.config.heap_bytes,
            live_set_bytes: r.config.live_set_bytes,
            jvm: r.config.jvm.as_ref().map(|j| j.series()),
            buffers: r.config.shown_buffers(),
            pages: r.pages.map(|p| p.label()),
            pauses: PercentileSummary::from_values(&totals),
            time_to_safepoint: PercentileSummary::from_values(&ttsp),
            pauses_less_cpu_wait: cpu_wait_read
                .then(|| PercentileSummary::from_values(&less_cpu_wait)),
            time_to_safepoint_cpu_wait: cpu_wait_read
                .then(|| PercentileSummary::from_values(&cpu_waits)),
            pauses_by_kind: by_kind
                .into_iter()
                .map(|(k, v)| (k, PercentileSummary::from_values(&v)))
                .collect(),
            total_pause_ns: totals.iter().sum(),
            stalls: r.measured_stalls().count() as u64,
            failed_stalls: r.measured_stalls().filter(|s| s.failed).count() as u64,
            total_stall_ns: r.measured_stalls().map(|s| s.duration_ns).sum(),
            longest_stall_ns: WaitFigures::of(&waits, WaitKind::Stall).longest_ns,
            pacing: WaitFigures::of(&waits, WaitKind::Pacing),
            pacing_beyond_floor: beyond_floor(r),
            page_allocations: WaitFigures::of(&waits, WaitKind::PageAlloc),
            longest_wait: waits::longest_wait(&waits, &r.config.mutator_names()).cloned(),
            total_wait_ns: most.as_ref().map_or(0, |m| m.1),
            total_wait_thread: most.map(|m| m.0),
            wait_by_thread,
            hiccup: r.hiccup.corrected.summary(),
            control_hiccup: r.control_hiccup.corrected.summary(),
            mmu: mmu_points(&timeline, r.wall_ns),
            mmu_imposed,
            longest_wait_imposed,
            imposed_unavailable,
            operations: r.operations,
            ops_per_sec: r.ops_per_sec,
            wall_ns: r.wall_ns,
            cycles: r.measured_cycles().count() as u64,
            complete_cycles,
            minor_cycles: r.complete_cycles().filter(|c| c.minor).count() as u64,
            cycles_warning: crate::min_cycles::cycles_warning(r.config.mode, complete_cycles),
            min_cycles: r.config.min_cycles,
            extended_by_ms: r.extended_by_ms,
            causes,
            gc_cpu_ns,
            request_latency: r.request_latency.as_ref().map(|h| h.summary()),
            committed_heap_bytes: r.committed_heap_bytes,
            pss_bytes: r.pss_bytes,
            rss_bytes: r.rss_bytes,
            memory: MemoryFigures::of(&r.memory, &r.gc.direct),
            collector: CollectorSpeed::of(r),
            cpu_budget,
        }
    }

    /// The row's name in tables and plots without the heap: the mode, or the JVM series.
    pub fn series(&self) -> String {
        self.jvm.clone().unwrap_or_else(|| self.mode.to_string())
    }

    /// Whether the run is one of this project's (not a JVM run).
    pub fn is_ours(&self) -> bool {
        self.jvm.is_none()
    }

    /// MMU at `window_ns`, if it is one of the computed windows.
    pub fn mmu_at(&self, window_ns: u64) -> Option<f64> {
        point_at(&self.mmu, window_ns)
    }

    /// The imposed MMU at `window_ns`, if it is one of the computed windows and the imposed
    /// figures are available.
    pub fn mmu_imposed_at(&self, window_ns: u64) -> Option<f64> {
        point_at(&self.mmu_imposed, window_ns)
    }
}

/// MMU of `timeline` over a run of `wall_ns` at the standard windows.
fn mmu_points(timeline: &[(u64, u64)], wall_ns: u64) -> Vec<MmuPoint> {
    crate::mmu::mmu_curve(timeline, wall_ns, &STANDARD_WINDOWS_NS)
        .into_iter()
        .map(|(window_ns, utilization)| MmuPoint {
            window_ns,
            utilization,
        })
        .collect()
}

/// The utilization at `window_ns` among `points`.
fn point_at(points: &[MmuPoint], window_ns: u64) -> Option<f64> {
    points
        .iter()
        .find(|p| p.window_ns == window_ns)
        .map(|p| p.utilization)
}

/// The measured pacing delays of `r` that went beyond the floor: how many, and their time
/// beyond it in all and at most.
fn beyond_floor(r: &RunResult) -> WaitFigures {
    r.measured_pacing()
        .map(|p| p.beyond_floor_ns)
        .filter(|&b| b > 0)
        .fold(WaitFigures::default(), |f, b| WaitFigures {
            count: f.count + 1,
            total_ns: f.total_ns + b,
            longest_ns: f.longest_ns.max(b),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hiccup::HiccupSamples;
    use crate::run_result::RunConfig;
    use gc_runtime::stats::{
        CycleRecord, GcStats, PacingRecord, PauseKind, PauseRecord, StallRecord,
    };

    #[test]
    fn a_pause_less_its_wait_for_a_cpu() {
        let mut r = crate::test_support::sample_result(
            Mode::Concurrent,
            1 << 30,
            &[100_000, 300_000, 200_000],
        );
        for p in &mut r.gc.pauses {
            p.time_to_safepoint_cpu_wait_ns = None;
        }
        r.gc.pauses[1].time_to_safepoint_cpu_wait_ns = Some(8_000);
        let s = RunSummary::of(&r);
        let less = s.pauses_less_cpu_wait.expect("one pause has the reading");
        // The others count whole.
        assert_eq!(
            (less.count, less.max_ns, less.p50_ns),
            (3, 292_000, 200_000)
        );
        let waits = s.time_to_safepoint_cpu_wait.expect("the reading");
        assert_eq!((waits.count, waits.max_ns), (1, 8_000));
        assert_eq!(s.pauses.max_ns, 300_000);
    }

    #[test]
    fn summary_counts_pauses_cycles_and_causes() {
        let p = |kind, start, total| PauseRecord {
            kind,
            cycle: 1,
            start_at_ns: start,
            time_to_safepoint_ns: 10_000,
            at_safepoint_ns: total - 10_000,
            total_ns: total,
            time_to_safepoint_cpu_wait_ns: None,
            work_items: 0,
            verify_ns: 0,
        };
        let c = |start, cause: GcCause| CycleRecord {
            cycle: 1,
            cause,
            start_at_ns: start,
            duration_ns: 1_000_000,
            gc_cpu_ns: 2_000_000,
            ..CycleRecord::default()
        };
        let r = RunResult {
            config: RunConfig::new(
                WorkloadKind::HeapChurn,
                Mode::Concurrent,
                1 << 30,
                1 << 29,
                1000,
            ),
            wall_ns: 1_000_000_000,
            operations: 5_000,
            ops_per_sec: 5_000.0,
            gc: GcStats {
                pauses: vec![
                    p(PauseKind::MarkStart, 100_000_000, 100_000),
                    p(PauseKind::MarkEnd, 200_000_000, 300_000),
                    p(PauseKind::RelocateStart, 300_000_000, 200_000),
                ],
                cycles: vec![
                    c(100_000_000, GcCause::AllocationRate),
                    c(500_000_000, GcCause::AllocationRate),
                    c(600_000_000, GcCause::Warmup),
                ],
                ..GcStats::default()
            },
            hiccup: HiccupSamples::from_overshoots(vec![100_000; 10], 1_000_000),
            control_hiccup: HiccupSamples::from_overshoots(vec![50_000; 10], 1_000_000),
            request_latency: None,
            committed_heap_bytes: 1 << 29,
            pss_bytes: 1 << 29,
            rss_bytes: 3 << 29,
            measure_start_at_ns: 0,
            heap_created_unix_ms: 0,
            extended_by_ms: 0,
            memory: Vec::new(),
            memory_report: None,
            memory_report_text: None,
            pages: None,
            remembered_set: None,
            pacing_thinned_out: 0,
            cores: 2,
        };
        let s = RunSummary::of(&r);
        assert_eq!(s.label, "concurrent 1G");
        assert_eq!(s.pauses.count, 3);
        assert_eq!(s.pauses.p50_ns, 200_000);
        assert_eq!(s.pauses.max_ns, 300_000);
        assert_eq!(s.total_pause_ns, 600_000);
        assert_eq!(s.time_to_safepoint.max_ns, 10_000);
        assert_eq!(s.pauses_less_cpu_wait, None, "no pause has the reading");
        assert_eq!(s.pauses_by_kind[&PauseKind::MarkEnd].max_ns, 300_000);
        assert_eq!(s.cycles, 3);
        assert_eq!(s.causes[&GcCause::AllocationRate], 2);
        assert_eq!(s.gc_cpu_ns, 6_000_000);
        assert_eq!(s.hiccup.count, 10);
        assert_eq!(s.control_hiccup.count, 10);
        assert!(s.control_hiccup.max_ns.abs_diff(50_000) * 1000 <= 50_000);
        assert_eq!(s.stalls, 0);
        assert_eq!((s.longest_stall_ns, s.pacing.count), (0, 0));
        // The longest wait is the longest pause; the one thread waited for all three.
        let w = s.longest_wait.as_ref().unwrap();
        assert_eq!(
            (w.kind, w.duration_ns, w.thread.as_deref()),
            (WaitKind::Pause, 300_000, None)
        );
        assert_eq!(s.total_wait_ns, 600_000);
        assert_eq!(s.total_wait_thread.as_deref(), Some("mutator-0"));
        assert_eq!(s.wait_by_thread.len(), 1);
        // Three cycles that started in the window, all complete: no warning.
        assert_eq!((s.complete_cycles, s.cycles_warning.as_deref()), (3, None));
        // A 1 ms window can hold the 0.3 ms pause: 70%.
        assert!((s.mmu_at(1_000_000).unwrap() - 0.7).abs() < 1e-9);
        assert!((s.mmu_at(100_000_000).unwrap() - 0.997).abs() < 1e-9);
        assert_eq!(s.mmu_at(5), None);
    }

    #[test]
    fn waits_of_every_kind_and_too_few_cycles() {
        let mut r = crate::test_support::sample_result(
            Mode::Concurrent,
            1 << 30,
            &[100_000, 200_000, 150_000],
        );
        r.config.threads = 2;
        let at = |ms: u64| r.measure_start_at_ns + ms * 1_000_000;
        r.gc.stalls = vec![
            StallRecord {
                thread: "mutator-1".into(),
                start_at_ns: at(500),
                duration_ns: 2_000_000,
                failed: false,
            },
            StallRecord {
                thread: "mutator-1".into(),
                start_at_ns: at(600),
                duration_ns: 1_000_000,
                failed: true,
            },
        ];
        r.gc.pacing = vec![PacingRecord {
            thread: "mutator-0".into(),
            start_at_ns: at(800),
            duration_ns: 2_500_000,
            imposed_ns: 0,
            beyond_floor_ns: 0,
        }];
        let s = RunSummary::of(&r);
        let w = s.longest_wait.clone().unwrap();
        assert_eq!(
            (w.kind, w.duration_ns, w.thread.as_deref()),
            (WaitKind::Pacing, 2_500_000, Some("mutator-0"))
        );
        assert_eq!(
            (
                s.stalls,
                s.failed_stalls,
                s.total_stall_ns,
                s.longest_stall_ns
            ),
            (2, 1, 3_000_000, 2_000_000)
        );
        assert_eq!(
            s.pacing,
            WaitFigures {
                count: 1,
                total_ns: 2_500_000,
                longest_ns: 2_500_000
            }
        );
        // Pauses (at 100, 300, 500 ms) 450 µs for both; mutator-0 was paced 2.5 ms;
        // mutator-1 stalled 3 ms, and the 150 µs pause at 500 ms fell inside its first stall.
        assert_eq!(s.wait_by_thread["mutator-0"], 2_950_000);
        assert_eq!(s.wait_by_thread["mutator-1"], 3_300_000);
        assert_eq!(
            (s.total_wait_ns, s.total_wait_thread.as_deref()),
            (3_300_000, Some("mutator-1"))
        );
        // One cycle (three pauses): flagged.
        assert_eq!(s.complete_cycles, 1);
        assert!(s
            .cycles_warning
            .as_deref()
            .unwrap()
            .contains("only 1 complete GC cycle"));
        // MMU counts the pacing delay: 2.5 ms of a 1 ms window is all of it.
        assert_eq!(s.mmu_at(1_000_000), Some(0.0));
        // The pacing record has no delay asked for (a result written before it was kept):
        // the imposed figures are missing, and the summary says why instead of guessing.
        assert!(s.mmu_imposed.is_empty());
        assert_eq!(s.mmu_imposed_at(10_000_000), None);
        assert_eq!(s.longest_wait_imposed, None);
        assert!(s
            .imposed_unavailable
            .as_deref()
            .unwrap()
            .contains("1 pacing delays have no delay asked for"));
    }

    const MS: u64 = 1_000_000;

    /// The figures of `crate::test_support::oversleeping_result` (its comment derives them).
    #[test]
    fn imposed_figures_count_the_delay_asked_for_not_the_time_held() {
        let r = crate::test_support::oversleeping_result(1 << 30);
        let s = RunSummary::of(&r);
        assert_eq!(s.imposed_unavailable, None);
        let felt = s.longest_wait.as_ref().unwrap();
        assert_eq!(
            (felt.kind, felt.duration_ns),
            (WaitKind::Pacing, 7 * MS),
            "felt: the pacing delay as held"
        );
        let imposed = s.longest_wait_imposed.as_ref().unwrap();
        assert_eq!(
            (imposed.kind, imposed.duration_ns),
            (WaitKind::Pause, 2 * MS),
            "imposed: the 1 ms asked for is shorter than the 2 ms pause"
        );
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-9;
        assert!(close(s.mmu_at(10 * MS), 0.3), "{:?}", s.mmu);
        assert!(
            close(s.mmu_imposed_at(10 * MS), 0.75),
            "{:?}",
            s.mmu_imposed
        );
        // 100 ms windows: 7 ms of the held delay against [99.5, 102] ms.
        assert!(close(s.mmu_at(100 * MS), 0.93));
        assert!(close(s.mmu_imposed_at(100 * MS), 0.975));
        // Whatever the window, the collector imposed no more than the program felt.
        assert_eq!(s.mmu_imposed.len(), s.mmu.len());
        for (f, i) in s.mmu.iter().zip(&s.mmu_imposed) {
            assert_eq!(f.window_ns, i.window_ns);
            assert!(i.utilization >= f.utilization, "{f:?} vs {i:?}");
        }
        // The pauses are the same either way: time to safepoint and time at it.
        let pauses = |m| {
            crate::waits::measured_waits_as(&r, m)
                .into_iter()
                .filter(|w| w.kind == WaitKind::Pause)
                .map(|w| w.duration_ns)
                .collect::<Vec<_>>()
        };
        assert_eq!(pauses(WaitMeasure::Felt), [2 * MS, MS / 5, MS / 5]);
        assert_eq!(pauses(WaitMeasure::Imposed), pauses(WaitMeasure::Felt));
    }

    /// A JVM run's imposed figures come from its safepoints and stalls: there is no pacing
    /// to tell apart, so they equal the felt ones, and they are available.
    #[test]
    fn jvm_runs_have_imposed_figures_equal_to_the_felt_ones() {
        let mut r = crate::test_support::sample_jvm_result(
            crate::jvm::JvmCollector::Zgc,
            1 << 30,
            &[50_000, 3_000_000, 70_000],
        );
        r.gc.stalls.push(StallRecord {
            thread: "mutator-0".into(),
            start_at_ns: r.measure_start_at_ns + 900 * MS,
            duration_ns: 4 * MS,
            failed: false,
        });
        let s = RunSummary::of(&r);
        assert_eq!(s.imposed_unavailable, None);
        assert_eq!(s.mmu_imposed, s.mmu);
        assert_eq!(s.longest_wait_imposed, s.longest_wait);
        assert_eq!(s.longest_wait_imposed.unwrap().kind, WaitKind::Stall);
    }
}

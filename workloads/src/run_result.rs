//! What one run is ([`RunConfig`]) and what it measured ([`RunResult`]): the unit every report
//! is made from. Both are serde types; `results.json` is a list of `RunResult`s.
//!
//! Time bases: the collector's records (`GcStats`) count nanoseconds from the heap's creation.
//! The measured phase of a run (after the workload built its live set) starts at
//! [`RunResult::measure_start_at_ns`] on that clock and lasts [`RunResult::wall_ns`]; the
//! reports look at the pauses, stalls and cycles that start inside that window, and timelines
//! show time since its start. Pauses during set-up are kept in `gc` but not reported.

use crate::buffer_kind::BufferKind;
use crate::ctx::RunShape;
use crate::hiccup::HiccupSamples;
use crate::jvm::JvmSpec;
use crate::latency::LatencyHistogram;
use crate::memory_timeline::MemorySample;
use crate::mmu;
use crate::wait_measure::WaitMeasure;
use crate::workloads::{WorkloadKind, WorkloadParams};
use gc_runtime::stats::{
    CycleRecord, GcStats, PacingRecord, PageAllocationRecord, PauseRecord, StallRecord,
};
pub use gc_runtime::Mode;
use serde::{Deserialize, Serialize};

/// One run: which workload, under which heap configuration, for how long.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub workload: WorkloadKind,
    pub mode: Mode,
    /// Maximum heap size (a multiple of the 2 MiB granule).
    pub heap_bytes: u64,
    /// Target live set (heap-churn's graph, lru-cache's capacity, message-engine's retention
    /// window; binary-trees derives its depth from it unless its `depth` option is set).
    pub live_set_bytes: u64,
    /// Mutator threads of the workload (the hiccup meter is one more).
    pub threads: u32,
    /// Length of the measured phase.
    pub duration_ms: u64,
    /// Complete GC cycles the measured phase should hold: the run is extended past
    /// `duration_ms` (within limits, see [`crate::min_cycles`]) until it has them. 0: never.
    #[serde(default)]
    pub min_cycles: u32,
    pub seed: u64,
    /// Mutator pacing (`gc_runtime::PacingConfig::enabled`; used in `concurrent` mode only).
    /// Results written before the option existed ran with it on.
    #[serde(default = "pacing_default")]
    pub pacing: bool,
    /// The pacer's floor, the mutator's least share of each window
    /// (`gc_runtime::PacingConfig::min_mutator_share`, `--pacing-floor`); `None`: the heap's
    /// default (0.5) or the environment's. Results written before the floor existed ran
    /// without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing_floor: Option<f64>,
    /// The floor's window in milliseconds (`--pacing-window`); `None`: the default (10 ms)
    /// or the environment's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing_window_ms: Option<u64>,
    /// The workload's own options (in JSON, an object with one key per option).
    pub params: WorkloadParams,
    /// Take the memory report (`gc_runtime::MemoryReport`) at the end of the run
    /// (`--memory-report`).
    #[serde(default)]
    pub memory_report: bool,
    /// Memory the heap commits at creation (`HeapConfig::initial_heap`, `--initial-heap`).
    /// Results written before the option existed grew their heap from 0.
    #[serde(default)]
    pub initial_heap_bytes: u64,
    /// For a run of the Java twin under a HotSpot collector (`--jvm`), the collector, the JDK
    /// and the JVM's options; `mode` is then the nearest of this project's (`concurrent` for
    /// ZGC, `stw` for the others). `None` for this project's runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jvm: Option<JvmSpec>,
    /// The heap's pages as `--huge-pages` asked (`off`, `transparent`, `hugetlb`); `None`
    /// leaves it to `ZRS_HUGE_PAGES`, else off. What the run used is in
    /// [`RunResult::pages`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub huge_pages: Option<gc_runtime::HugePages>,
    /// The young generation of a `generational` run (`HeapConfig::young_size`,
    /// `--young-size`); `None`: the runtime's default. Ignored by the other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub young_size: Option<u64>,
    /// The live share under which a `generational` run's minors evacuate a young page
    /// (`HeapConfig::young_evacuation_live_percent`, `--young-evacuation-live-percent`);
    /// `None`: the runtime's default. Ignored by the other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub young_evacuation_live_percent: Option<u8>,
}

impl RunConfig {
    /// A configuration with the workload's default parameters.
    pub fn new(
        workload: WorkloadKind,
        mode: Mode,
        heap_bytes: u64,
        live_set_bytes: u64,
        duration_ms: u64,
    ) -> Self {
        RunConfig {
            workload,
            mode,
            heap_bytes,
            live_set_bytes,
            threads: 1,
            duration_ms,
            min_cycles: 0,
            seed: 42,
            pacing: pacing_default(),
            pacing_floor: None,
            pacing_window_ms: None,
            params: WorkloadParams::defaults(workload),
            memory_report: false,
            initial_heap_bytes: heap_bytes,
            jvm: None,
            huge_pages: None,
            young_size: None,
            young_evacuation_live_percent: None,
        }
    }

    /// `concurrent 1G` (`concurrent 1G pooled` with buffers, see [`Self::shown_buffers`];
    /// `JDK 17 ZGC 1G` for a JVM run): how tables and plots name the run.
    pub fn label(&self) -> String {
        let mut l = format!(
            "{} {}",
            self.series(),
            gc_core::format_size(self.heap_bytes)
        );
        if let Some(b) = self.shown_buffers() {
            l += &format!(" {b}");
        }
        l
    }

    /// What the run is a point of, whatever its heap: the mode (`concurrent`), or for a JVM
    /// run the JDK and collector (`JDK 17 ZGC`).
    pub fn series(&self) -> String {
        match &self.jvm {
            Some(j) => j.series(),
            None => self.mode.to_string(),
        }
    }

    /// The buffer kind the reports show for this run: always for buffer-echo, for
    /// message-engine when it is not the default `heap` (so earlier runs read as before).
    pub fn shown_buffers(&self) -> Option<BufferKind> {
        let b = self.params.buffers()?;
        (self.workload == WorkloadKind::BufferEcho || b != BufferKind::Heap).then_some(b)
    }

    /// What a workload thread is told of this run.
    pub fn shape(&self) -> RunShape {
        RunShape {
            heap_bytes: self.heap_bytes,
            live_set_bytes: self.live_set_bytes,
            threads: self.threads,
            seed: self.seed,
        }
    }

    /// The name of the workload's mutator thread `index` (`mutator-0`, ...), as the runner
    /// attaches it and the collector's stall and pacing records name it.
    pub fn mutator_name(index: u32) -> String {
        format!("mutator-{index}")
    }

    /// The names of all the workload's mutator threads (not the hiccup meter's).
    pub fn mutator_names(&self) -> Vec<String> {
        (0..self.threads.max(1)).map(Self::mutator_name).collect()
    }
}

/// The runtime's default: pacing on.
fn pacing_default() -> bool {
    true
}

/// Everything one run measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub config: RunConfig,
    /// Measured wall time of the measured phase.
    pub wall_ns: u64,
    /// Workload operations completed in the measured phase.
    pub operations: u64,
    /// `operations / wall time`.
    pub ops_per_sec: f64,
    /// The collector's records since the heap was created.
    pub gc: GcStats,
    /// The hiccup meter's samples.
    pub hiccup: HiccupSamples,
    /// The control meter's samples: the same 1 ms sleep on a thread that never touches the
    /// heap: what any thread felt in this run (see [`crate::hiccup`]). Empty in results
    /// written before it existed.
    #[serde(default = "HiccupSamples::empty")]
    pub control_hiccup: HiccupSamples,
    /// Request latency (lru-cache, message-engine), coordinated-omission corrected when the
    /// workload is throttled.
    pub request_latency: Option<LatencyHistogram>,
    /// Peak committed heap memory by the collector's own accounting.
    pub committed_heap_bytes: u64,
    /// Proportional set size of the process at the end of the run (counts multi-mapped
    /// pages once).
    pub pss_bytes: u64,
    /// Resident set size at the end of the run (counts a page once per view it was touched
    /// through: misleading with multi-mapping, shown for contrast).
    pub rss_bytes: u64,
    /// Heap clock (ns since the heap's creation) at the start of the measured phase.
    pub measure_start_at_ns: u64,
    /// Wall-clock time of the heap's creation, milliseconds since the Unix epoch.
    pub heap_created_unix_ms: u64,
    /// How far `--min-cycles` moved the end of the measurement past `config.duration_ms`
    /// (0 when it did not).
    #[serde(default)]
    pub extended_by_ms: u64,
    /// Memory every [`crate::memory_timeline::SAMPLE_INTERVAL_MS`] of the measured phase
    /// (committed heap, direct and pooled bytes, RSS, Pss), the last at its end.
    #[serde(default)]
    pub memory: Vec<MemorySample>,
    /// The memory report at the end of the run (`--memory-report`): `gc_runtime::MemoryReport`
    /// as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_report: Option<serde_json::Value>,
    /// The same report as text, as `pause-sweep` prints it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_report_text: Option<String>,
    /// The pages the heap was on at the end of the run, read from `/proc/self/smaps` over its
    /// views: the setting in effect and how much of the heap was on 2 MiB pages
    /// (`gc_runtime::PageSizeReading`). `None` for JVM runs and results written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<gc_runtime::PageSizeReading>,
    /// What the generational bookkeeping did since the heap was created (set-up included):
    /// slots remembered by the store barrier and by relocation, remembered-set scans, pages
    /// aged and promoted, full cycles that stopped the remembering
    /// (`gc_runtime::RememberedSetStats`). `None` for heaps without it (every mode but
    /// `generational`), JVM runs and results written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remembered_set: Option<gc_runtime::RememberedSetStats>,
    /// Pacing records of the measured phase left out of `gc.pacing` because no plot draws
    /// them (`crate::figures::report_plots::thin_for_plots`, for the data the book commits):
    /// the timeline still counts them. 0 in a sweep's own results.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pacing_thinned_out: u64,
    /// The cores the process could run on when it ran (`std::thread::available_parallelism`),
    /// for the CPU budget ([`crate::cpu_budget`]); 0 in results written before it.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub cores: u32,
}

/// Whether a count is 0 (left out of results.json then).
fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// Whether a count is 0 (left out of results.json then).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl RunResult {
    /// `operations / wall_ns` in operations per second (0 for an empty run).
    pub fn throughput(operations: u64, wall_ns: u64) -> f64 {
        if wall_ns == 0 {
            0.0
        } else {
            operations as f64 * 1e9 / wall_ns as f64
        }
    }

    /// The run's label (`concurrent 1G`).
    pub fn label(&self) -> String {
        self.config.label()
    }

    /// Heap clock at the end of the measured phase.
    pub fn measure_end_at_ns(&self) -> u64 {
        self.measure_start_at_ns.saturating_add(self.wall_ns)
    }

    fn in_window(&self, at_ns: u64) -> bool {
        at_ns >= self.measure_start_at_ns && at_ns < self.measure_end_at_ns()
    }

    /// Pauses that started in the measured phase.
    pub fn measured_pauses(&self) -> impl Iterator<Item = &PauseRecord> {
        self.gc
            .pauses
            .iter()
            .filter(|p| self.in_window(p.start_at_ns))
    }

    /// Allocation stalls that started in the measured phase.
    pub fn measured_stalls(&self) -> impl Iterator<Item = &StallRecord> {
        self.gc
            .stalls
            .iter()
            .filter(|s| self.in_window(s.start_at_ns))
    }

    /// Pacing delays that started in the measured phase.
    pub fn measured_pacing(&self) -> impl Iterator<Item = &PacingRecord> {
        self.gc
            .pacing
            .iter()
            .filter(|p| self.in_window(p.start_at_ns))
    }

    /// Slow mutator page allocations (memory committed and mapped) that started in the
    /// measured phase.
    pub fn measured_page_allocations(&self) -> impl Iterator<Item = &PageAllocationRecord> {
        self.gc
            .page_allocations
            .iter()
            .filter(|p| self.in_window(p.start_at_ns))
    }

    /// GC cycles that started in the measured phase.
    pub fn measured_cycles(&self) -> impl Iterator<Item = &CycleRecord> {
        self.gc
            .cycles
            .iter()
            .filter(|c| self.in_window(c.start_at_ns))
    }

    /// GC cycles that started and ended inside the measured phase.
    pub fn complete_cycles(&self) -> impl Iterator<Item = &CycleRecord> {
        let end = self.measure_end_at_ns();
        self.measured_cycles()
            .filter(move |c| c.start_at_ns.saturating_add(c.duration_ns) <= end)
    }

    /// Every wait of the workload's mutators — pauses, and the allocation stalls, pacing
    /// delays and page allocations of the workload's own threads — as `(start_ns,
    /// duration_ns)` relative to the start of the measured phase, cut to it (a pause that began
    /// during set-up counts from the start), as the program felt them (see
    /// [`WaitMeasure::Felt`]). A stall, pacing delay or page allocation of any
    /// one workload thread counts as time the mutators could not run, as a pause does; the
    /// hiccup meter's own (it is an attached thread too) do not: it measures, it is not the
    /// program.
    pub fn unavailability_timeline(&self) -> Vec<(u64, u64)> {
        self.timeline_as(WaitMeasure::Felt)
    }

    /// [`Self::unavailability_timeline`] counting only what the collector imposed: each
    /// pacing delay as long as the pacer asked for, not as long as the thread was held (see
    /// [`WaitMeasure::Imposed`]). Meaningful only when [`Self::imposed_unavailable`] is
    /// `None`.
    pub fn imposed_timeline(&self) -> Vec<(u64, u64)> {
        self.timeline_as(WaitMeasure::Imposed)
    }

    /// The timeline of the workload's waits, each as long as `measure` counts it.
    pub fn timeline_as(&self, measure: WaitMeasure) -> Vec<(u64, u64)> {
        let (from, to) = (self.measure_start_at_ns, self.measure_end_at_ns());
        let workload = self.config.mutator_names();
        let ours = |t: &String| workload.contains(t);
        let pauses = self
            .gc
            .pauses
            .iter()
            .map(|p| (p.start_at_ns, measure.pause_ns(p)));
        let stalls = self
            .gc
            .stalls
            .iter()
            .filter(|s| ours(&s.thread))
            .map(|s| (s.start_at_ns, s.duration_ns));
        let pacing = self
            .gc
            .pacing
            .iter()
            .filter(|p| ours(&p.thread))
            .map(|p| (p.start_at_ns, measure.pacing_ns(p)));
        let page_allocations = self
            .gc
            .page_allocations
            .iter()
            .filter(|p| ours(&p.thread))
            .map(|p| (p.start_at_ns, p.duration_ns));
        pauses
            .chain(stalls)
            .chain(pacing)
            .chain(page_allocations)
            .filter_map(|(start, dur)| {
                let s = start.max(from);
                let e = start.saturating_add(dur).min(to);
                (e > s).then(|| (s - from, e - s))
            })
            .collect()
    }

    /// Minimum mutator utilization of the measured phase for `window_ns` (see [`mmu`]), as
    /// the program felt it.
    pub fn mmu(&self, window_ns: u64) -> f64 {
        mmu::mmu(&self.unavailability_timeline(), self.wall_ns, window_ns)
    }

    /// [`Self::mmu`] counting only what the collector imposed ([`Self::imposed_timeline`]).
    pub fn mmu_imposed(&self, window_ns: u64) -> f64 {
        mmu::mmu(&self.imposed_timeline(), self.wall_ns, window_ns)
    }

    /// Why the imposed figures cannot be computed for this run, or `None` when they can: a
    /// pacing delay of the workload's with no delay asked for (`imposed_ns` 0) comes from a
    /// result written before the pacer's delay was recorded (the pacer never asks for 0).
    pub fn imposed_unavailable(&self) -> Option<String> {
        let workload = self.config.mutator_names();
        let missing = self
            .gc
            .pacing
            .iter()
            .filter(|p| workload.contains(&p.thread) && p.imposed_ns == 0)
            .count();
        (missing > 0).then(|| {
            format!(
                "{missing} pacing delays have no delay asked for (`imposed_ns`): results \
                 written before it was recorded"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gc_runtime::stats::{PageAllocationRecord, PauseKind};

    fn pause(start: u64, total: u64) -> PauseRecord {
        PauseRecord {
            kind: PauseKind::MarkStart,
            cycle: 1,
            start_at_ns: start,
            time_to_safepoint_ns: total / 4,
            at_safepoint_ns: total - total / 4,
            total_ns: total,
            time_to_safepoint_cpu_wait_ns: None,
            work_items: 0,
            verify_ns: 0,
        }
    }

    fn result_with(pauses: Vec<PauseRecord>, stalls: Vec<StallRecord>) -> RunResult {
        RunResult {
            config: RunConfig::new(
                WorkloadKind::HeapChurn,
                Mode::Concurrent,
                1 << 30,
                1 << 29,
                100,
            ),
            wall_ns: 100_000_000,
            operations: 1000,
            ops_per_sec: RunResult::throughput(1000, 100_000_000),
            gc: GcStats {
                pauses,
                stalls,
                ..GcStats::default()
            },
            hiccup: HiccupSamples::empty(),
            control_hiccup: HiccupSamples::empty(),
            request_latency: None,
            committed_heap_bytes: 0,
            pss_bytes: 0,
            rss_bytes: 0,
            measure_start_at_ns: 1_000_000_000,
            heap_created_unix_ms: 0,
            extended_by_ms: 0,
            memory: Vec::new(),
            memory_report: None,
            memory_report_text: None,
            pages: None,
            remembered_set: None,
            pacing_thinned_out: 0,
            cores: 2,
        }
    }

    #[test]
    fn modes_parse_and_print() {
        for m in Mode::ALL {
            assert_eq!(m.to_string().parse::<Mode>().unwrap(), m);
            assert_eq!(
                serde_json::to_value(m).unwrap(),
                serde_json::json!(m.name())
            );
        }
        assert!("parallel"
            .parse::<Mode>()
            .unwrap_err()
            .contains("concurrent, generational, stw or epsilon"));
    }

    #[test]
    fn label_and_params() {
        let c = RunConfig::new(
            WorkloadKind::HeapChurn,
            Mode::Stw,
            256 << 20,
            128 << 20,
            1000,
        );
        assert_eq!(c.label(), "stw 256M");
        assert_eq!(
            c.params,
            crate::workloads::WorkloadParams::defaults(WorkloadKind::HeapChurn)
        );
        assert_eq!(RunResult::throughput(500, 2_000_000_000), 250.0);
        assert_eq!(RunResult::throughput(500, 0), 0.0);
    }

    #[test]
    fn only_the_measured_phase_is_reported() {
        let start = 1_000_000_000;
        let r = result_with(
            vec![
                pause(start - 500_000, 1_000_000), // set-up, overlapping the start by 0.5 ms
                pause(start + 10_000_000, 2_000_000),
                pause(start + 99_000_000, 5_000_000), // runs 4 ms past the end
                pause(start + 200_000_000, 1_000_000), // after the run
            ],
            vec![StallRecord {
                thread: "mutator-0".into(),
                start_at_ns: start + 11_000_000,
                duration_ns: 3_000_000,
                failed: false,
            }],
        );
        assert_eq!(r.measured_pauses().count(), 2);
        assert_eq!(r.measured_stalls().count(), 1);
        assert_eq!(
            r.unavailability_timeline(),
            vec![
                (0, 500_000),
                (10_000_000, 2_000_000),
                (99_000_000, 1_000_000),
                (11_000_000, 3_000_000)
            ]
        );
        // Pause [10, 12] ms and stall [11, 14] ms merge into 4 ms.
        assert!((r.mmu(10_000_000) - 0.6).abs() < 1e-9);
    }

    #[test]
    fn complete_cycles_start_and_end_inside_the_window() {
        let start = 1_000_000_000;
        let cycle = |at: u64, dur: u64| CycleRecord {
            start_at_ns: at,
            duration_ns: dur,
            ..CycleRecord::default()
        };
        let mut r = result_with(Vec::new(), Vec::new());
        r.gc.cycles = vec![
            cycle(start - 1_000_000, 5_000_000), // began in set-up
            cycle(start + 1_000_000, 5_000_000),
            cycle(start + 90_000_000, 10_000_000), // ends exactly at the window's end
            cycle(start + 95_000_000, 10_000_000), // runs past it
        ];
        assert_eq!(r.measured_cycles().count(), 3);
        assert_eq!(r.complete_cycles().count(), 2);
    }

    #[test]
    fn pacing_delays_count_as_mutator_waits_in_the_mmu() {
        let start = 1_000_000_000;
        let pacing = |at: u64, dur: u64| PacingRecord {
            thread: "mutator-0".into(),
            start_at_ns: start + at,
            duration_ns: dur,
            imposed_ns: 0,
            beyond_floor_ns: 0,
        };
        let mut r = result_with(vec![pause(start + 10_000_000, 2_000_000)], Vec::new());
        let only_pause = r.mmu(10_000_000);
        r.gc.pacing = vec![
            pacing(12_000_000, 3_000_000), // right after the pause: [10, 15] ms
            pacing(50_000_000, 1_000_000),
            pacing(start + 500_000_000, 1_000_000), // after the run
        ];
        assert_eq!(r.measured_pacing().count(), 2);
        assert_eq!(
            r.unavailability_timeline(),
            vec![
                (10_000_000, 2_000_000),
                (12_000_000, 3_000_000),
                (50_000_000, 1_000_000)
            ]
        );
        // 5 ms of a 10 ms window lost, against 2 ms for the pause alone.
        assert!((only_pause - 0.8).abs() < 1e-9);
        assert!((r.mmu(10_000_000) - 0.5).abs() < 1e-9);
        assert!((r.mmu(1_000_000) - 0.0).abs() < 1e-9);
        // The hiccup meter's own waits are not the program's.
        let before = r.unavailability_timeline();
        r.gc.pacing.push(PacingRecord {
            thread: "hiccup-meter".into(),
            ..pacing(70_000_000, 4_000_000)
        });
        r.gc.page_allocations.push(PageAllocationRecord {
            thread: "hiccup-meter".into(),
            start_at_ns: start + 80_000_000,
            duration_ns: 9_000_000,
        });
        assert_eq!(r.unavailability_timeline(), before);
    }

    /// The imposed timeline keeps every pause, stall and page allocation as the felt one
    /// does, and puts each pacing delay's asked-for length in place of the time held.
    #[test]
    fn the_imposed_timeline_counts_the_delay_asked_for() {
        let r = crate::test_support::oversleeping_result(1 << 30);
        const US: u64 = 1_000;
        let felt = r.unavailability_timeline();
        let imposed = r.imposed_timeline();
        let pauses = [
            (100_000 * US, 2_000 * US),
            (300_000 * US, 200 * US),
            (500_000 * US, 200 * US),
        ];
        assert_eq!(felt[..3], pauses);
        assert_eq!(imposed[..3], pauses);
        assert_eq!(
            felt[3..],
            [(99_500 * US, 2_500 * US), (1_000_000 * US, 7_000 * US)]
        );
        assert_eq!(
            imposed[3..],
            [(99_500 * US, 1_000 * US), (1_000_000 * US, 1_000 * US)]
        );
        assert_eq!(r.timeline_as(WaitMeasure::Felt), felt);
        assert!((r.mmu(10_000_000) - 0.3).abs() < 1e-9);
        assert!((r.mmu_imposed(10_000_000) - 0.75).abs() < 1e-9);
        assert_eq!(r.imposed_unavailable(), None);
    }
}

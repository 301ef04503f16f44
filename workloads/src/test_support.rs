//! Constructed results for the tests of the report writers, the summary and the sweep (and
//! the crate's integration tests): a run with given pauses and cycles, as a real run of the
//! harness records them, and scratch directories. Not part of the harness proper.

use crate::hiccup::HiccupSamples;
use crate::jvm::{JvmCollector, JvmSpec};
use crate::run_result::{Mode, RunConfig, RunResult};
use crate::workloads::WorkloadKind;
use gc_runtime::stats::{
    CycleRecord, GcCause, GcStats, PacingRecord, PauseKind, PauseRecord, PhaseRecord,
};
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
            time_to_safepoint_cpu_wait_ns: Some(total / 20),
            work_items: 0,
            verify_ns: 0,
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
                cause: GcCause::AllocationRate,
                start_at_ns: first,
                duration_ns: end - first,
                phases: ps
                    .iter()
                    .map(|p| PhaseRecord {
                        name: p.kind.into(),
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
    let mut config = RunConfig::new(
        WorkloadKind::HeapChurn,
        mode,
        heap_bytes,
        heap_bytes / 2,
        2000,
    );
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
        pages: None,
        remembered_set: None,
        pacing_thinned_out: 0,
        cores: 2,
    }
}

/// A `concurrent` [`sample_result`] whose felt and imposed figures differ: pauses of 2 ms
/// (at 100 ms into the measured phase), 200 µs and 200 µs (at 300 and 500 ms), and two
/// pacing delays of `mutator-0`, each asked for 1 ms: one from 99.5 ms, which the 2 ms pause
/// held until 102 ms (held 2.5 ms), and one at 1000 ms that the operating system woke 6 ms
/// late (held 7 ms).
///
/// Felt: longest wait the 7 ms pacing delay; the worst 10 ms window holds 7 ms of it (MMU
/// 30%). Imposed: longest wait the 2 ms pause; the worst 10 ms window holds [99.5, 102] ms
/// (MMU 75%). Counting the held time as imposed would give 7 ms and 30% again.
pub fn oversleeping_result(heap_bytes: u64) -> RunResult {
    let mut r = sample_result(Mode::Concurrent, heap_bytes, &[2_000_000, 200_000, 200_000]);
    let at = |us: u64| r.measure_start_at_ns + us * 1_000;
    let pacing = |start_at_ns: u64, held_ns: u64| PacingRecord {
        thread: RunConfig::mutator_name(0),
        start_at_ns,
        duration_ns: held_ns,
        imposed_ns: 1_000_000,
        beyond_floor_ns: 0,
    };
    r.gc.pacing = vec![
        pacing(at(99_500), 2_500_000),
        pacing(at(1_000_000), 7_000_000),
    ];
    r
}

/// [`sample_result`] as a JVM run (`--jvm`) of `collector` on JDK 17: its mode the nearest
/// of this project's, its spec the options such a run has.
pub fn sample_jvm_result(collector: JvmCollector, heap_bytes: u64, pauses_ns: &[u64]) -> RunResult {
    let mode = if collector.is_concurrent() {
        Mode::Concurrent
    } else {
        Mode::Stw
    };
    let mut r = sample_result(mode, heap_bytes, pauses_ns);
    r.config.jvm = Some(JvmSpec {
        collector,
        major: 17,
        version: "17.0.15+6".into(),
        java: PathBuf::from("/usr/bin/java"),
        flags: vec![
            format!("-Xmx{}m", heap_bytes >> 20),
            collector.flags(17).unwrap().join(" "),
        ],
        log: PathBuf::from("gc.log"),
        classes: PathBuf::from("classes"),
    });
    r
}

/// A fresh, empty directory under the system temp dir for one test.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("workloads-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir is writable");
    dir
}

//! Exercises of the chapter *Reading the reports*: minimum mutator utilization worked out by
//! hand from a run's pauses, a size as the report prints it, and a run's CPU budget, checked
//! against the workloads' own code.

use workloads::cpu_budget::CpuBudget;
use workloads::mmu::mmu;

const MS: u64 = 1_000_000;

/// A 100 ms run paused from 10 to 12 ms and from 14 to 17 ms: `(start, length)` in ns.
const PAUSES: [(u64, u64); 2] = [(10 * MS, 2 * MS), (14 * MS, 3 * MS)];

/// Exercise 1: What is its MMU at 10 ms, 50 ms and 1 ms windows?
fn mmu_10_50_1_ms() -> [f64; 3] {
    // 10 ms: the window 8-18 ms (or any that holds both pauses) loses 5 ms: 50%.
    // 50 ms: any window holding both loses 5 of 50: 90%.
    // 1 ms: a window inside a pause loses all of it: 0%.
    [0.5, 0.9, 0.0]
}

/// Exercise 2: How does the report write a 1536 MiB heap?
fn report_name_of_1536_mib() -> &'static str {
    // Whole units only, the largest that divides it: 1.5 GiB is not whole gibibytes.
    "1536M"
}

/// Exercise 3: On 4 cores, 2 mutator threads run 10 s. Between them they were held 8 s (the
/// waits summed over both), did 2 million operations, and the GC threads used 24 s of CPU.
/// What share of the run could the mutators be running at most, at that collector cost per
/// operation? And to what must the GC CPU per operation (in µs) come down for the cores to
/// allow them all of it, with the mutators' own cost unchanged?
fn cpu_budget_share_and_needed_gc_us() -> (f64, f64) {
    // The mutators ran 2 × 10 − 8 = 12 s: m = 12 s / 2M = 6 µs per operation; the collector
    // g = 24 s / 2M = 12 µs, so g/m = 2. Both on 4 cores: 2 · share · (1 + 2) ≤ 4, so the
    // share is at most 4 / 6 = 2/3. All of it needs 4 / (2 · 1) − 1 = 1 = g/m: g = 6 µs.
    (2.0 / 3.0, 6.0)
}

#[test]
fn minimum_mutator_utilization() {
    let real = [10 * MS, 50 * MS, MS].map(|w| mmu(&PAUSES, 100 * MS, w));
    let answer = mmu_10_50_1_ms();
    for i in 0..3 {
        assert!(
            (answer[i] - real[i]).abs() < 1e-9,
            "answers {answer:?}, the code {real:?}"
        );
    }
}

#[test]
fn size_names() {
    assert_eq!(report_name_of_1536_mib(), gc_core::format_size(1536 << 20));
}

#[test]
fn cpu_budget() {
    let b = CpuBudget::from_figures(4, 2, 10_000_000_000, 8_000_000_000, 2_000_000, 24e9 as u64)
        .unwrap();
    let (share, gc_us) = cpu_budget_share_and_needed_gc_us();
    assert!(
        (share - b.share_allowed).abs() < 1e-9,
        "answer {share}, the code {b:?}"
    );
    let needed = b.gc_per_mutator_for(1.0) * b.mutator_ns_per_op / 1e3;
    assert!(
        (gc_us - needed).abs() < 1e-9,
        "answer {gc_us} µs, the code {needed} µs"
    );
}

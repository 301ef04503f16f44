//! Exercises of the chapter *Reading the reports*: minimum mutator utilization worked out by
//! hand from a run's pauses, and a size as the report prints it, checked against the
//! workloads' own code.

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

//! A mutator that needs a page the heap must first get from the operating system (memory
//! committed to the backing file, mapped into the four views) waits for the kernel, for
//! milliseconds on a large page or a slow machine. The runtime records such page allocations,
//! those of `PAGE_ALLOCATION_RECORD_MIN` or longer, as mutator waits
//! (`GcStats::page_allocations`), so the reports can count them with pauses, stalls and pacing
//! delays.

use gc_runtime::stats::PAGE_ALLOCATION_RECORD_MIN;
use gc_runtime::{Heap, HeapConfig};

const MIB: u64 = 1 << 20;

/// A 64 MiB object needs a large page of fresh memory: committing it clears 64 MiB, which no
/// machine does in 100 µs (that would be 640 GB/s), so the allocation is recorded, with the
/// thread's name.
#[test]
fn committing_a_large_page_is_recorded_as_a_mutator_wait() {
    let heap = Heap::new(HeapConfig::new(256 * MIB).initial_heap(16 * MIB)).unwrap();
    let mut m = heap.attach("grower").unwrap();
    assert!(
        heap.usage().committed < 64 * MIB,
        "the page must need fresh memory"
    );
    m.scope(|s| {
        let big = s.alloc(1, 0, 64 << 20).unwrap();
        assert_eq!(s.get(big).n_bytes(), 64 << 20);
    });
    assert!(heap.usage().committed >= 64 * MIB);
    let records = heap.stats().page_allocations;
    let min = PAGE_ALLOCATION_RECORD_MIN.as_nanos() as u64;
    assert!(
        records.iter().all(|r| r.duration_ns >= min),
        "only allocations of at least the minimum are recorded: {records:?}"
    );
    let grower: Vec<_> = records.iter().filter(|r| r.thread == "grower").collect();
    assert!(
        !grower.is_empty(),
        "the 64 MiB page allocation was not recorded: {records:?}"
    );
    eprintln!(
        "recorded {} page allocations of the mutator, longest {:.2} ms",
        grower.len(),
        grower.iter().map(|r| r.duration_ns).max().unwrap() as f64 / 1e6
    );
}

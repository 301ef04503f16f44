//! Exercises of the chapter *Embedding the collector*: what an embedder's objects cost and
//! where they go, and the smallest heap a collected mode accepts, checked against the code.

use crate::{GIB, KIB, MIB};
use gc_core::page::{PageKind, PageSizes};
use gc_runtime::HeapConfig;

/// Exercise 1: How many heap bytes does an object with 3 reference slots and 10 raw bytes take?
fn object_with_3_refs_and_10_bytes() -> u64 {
    // Header (shape u32, n_refs u32, n_bytes u64) 16 + 3 slots x 8 + 10 bytes rounded up to
    // 16 = 56.
    16 + 3 * 8 + 16
}

/// Exercise 2: On which kind of page does a 300 KiB object go in a 1 GiB heap, and in a 32 MiB
/// heap?
fn page_kind_of_300_kib() -> (PageKind, PageKind) {
    // Small pages take objects up to 256 KiB (2 MiB / 8). A 1 GiB heap has 32 MiB medium
    // pages, which take objects up to 4 MiB: medium. A 32 MiB heap has no medium pages
    // (1/32 of it is 1 MiB, not larger than a small page): a large page of its own, 2 MiB.
    (PageKind::Medium, PageKind::Large)
}

/// Exercise 3: What is the smallest maximum heap a `concurrent` heap accepts with the default
/// relocation reserve?
fn smallest_collected_heap() -> u64 {
    // The reserve is at least one small page, and mutators need two more (the page a cycle
    // leaves survivors on, and one to allocate in): three 2 MiB pages.
    6 * MIB
}

#[test]
fn object_size() {
    assert_eq!(
        object_with_3_refs_and_10_bytes(),
        gc_core::object_size(3, 10).unwrap()
    );
}

#[test]
fn page_kind() {
    let real = (
        PageSizes::for_max_heap(GIB).kind_for(300 * KIB),
        PageSizes::for_max_heap(32 * MIB).kind_for(300 * KIB),
    );
    assert_eq!(page_kind_of_300_kib(), real);
}

#[test]
fn smallest_heap() {
    let answer = smallest_collected_heap();
    assert!(
        HeapConfig::new(answer).validate().is_ok(),
        "a {answer} byte heap is refused"
    );
    let smaller = answer - gc_core::GRANULE_SIZE;
    assert!(
        HeapConfig::new(smaller).validate().is_err(),
        "a {smaller} byte heap is accepted too: the answer is not the smallest"
    );
}

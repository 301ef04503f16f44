//! Dropping a heap gives everything back: creating and dropping 200 heaps in one process (each
//! with pages allocated, written, some freed into the page cache) leaves the number of open file
//! descriptors and of mappings (`/proc/self/fd`, `/proc/self/maps`) exactly as it was, and none
//! of the heaps' view ranges stays mapped. This is the only test in its binary, so no other test
//! creates heaps in the same process while it counts.

use gc_core::virtual_memory::count_mappings;
use gc_core::{Backing, MemoryConfig, PageAllocator, PageKind, View};

const MIB: u64 = 1 << 20;

/// Number of open file descriptors (entries of `/proc/self/fd`; the runtime's reports have
/// their own reader, `gc_runtime::proc_info::count_fds`, which gc-core cannot use).
fn count_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd is readable")
        .count()
}

/// One heap's life: create, allocate, write through every view, free some pages, drop.
/// Returns the heap's view ranges (start, end) for the after-check.
fn one_heap(i: u64) -> Vec<(u64, u64)> {
    let mut cfg = MemoryConfig::new(64 * MIB);
    cfg.initial_heap = 4 * MIB;
    if i % 4 == 3 {
        // Every fourth heap uses a file in a directory instead of a memfd.
        cfg.backing = Backing::Directory(std::env::temp_dir());
    }
    let heap = PageAllocator::new(&cfg).unwrap();
    let l = heap.layout();
    let mut pages = Vec::new();
    for k in 0..3 {
        pages.push(heap.alloc_page(PageKind::Small, 2 * MIB, k).unwrap());
    }
    pages.push(heap.alloc_page(PageKind::Large, 4 * MIB, 3).unwrap());
    for (k, p) in pages.iter().enumerate() {
        for v in View::ALL {
            let a = l.address(p.start() + 8 * k as u64, v);
            // SAFETY: the page is mapped read-write in every view and used only here.
            unsafe { a.as_ptr::<u64>().write(i ^ k as u64) };
        }
        let a = l.address(p.start() + 8 * k as u64, View::Remapped);
        // SAFETY: as above.
        assert_eq!(unsafe { a.as_ptr::<u64>().read() }, i ^ k as u64);
    }
    // SAFETY: nothing reads or writes the page's objects after it is freed.
    unsafe { heap.free_page(&pages[1]) };
    // SAFETY: nothing reads or writes the page's objects after it is freed.
    unsafe { heap.free_page(&pages[3]) };
    if i.is_multiple_of(2) {
        // Half the heaps flush their cache (unmap + punch holes) before being dropped.
        heap.uncommit(0).unwrap();
    }
    let (start, size) = heap.reservation();
    let ranges = View::ALL
        .iter()
        .map(|&v| {
            let a = l.address(start, v).raw();
            (a, a + size)
        })
        .collect();
    if i.is_multiple_of(3) {
        // Drop the heap while the caller still holds page references (metadata only).
        drop(heap);
        drop(pages);
    } else {
        drop(pages);
        drop(heap);
    }
    ranges
}

/// Start addresses of every mapping of this process.
fn mapping_ranges() -> Vec<(u64, u64)> {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .filter_map(|l| {
            let (lo, hi) = l.split_whitespace().next()?.split_once('-')?;
            Some((
                u64::from_str_radix(lo, 16).ok()?,
                u64::from_str_radix(hi, 16).ok()?,
            ))
        })
        .collect()
}

/// Run the frees the page table deferred (crossbeam-epoch destroys a removed page once no
/// thread can still hold it, on a later pin): a page keeps its live map, whose bits are a slot
/// of the pool's side-table arena, a mapping of its own that goes with its last slot.
fn settle_deferred_frees() {
    for _ in 0..256 {
        gc_core::heap_epoch::pin().flush();
    }
}

#[test]
fn two_hundred_heaps_leak_no_fd_and_no_mapping() {
    // Warm up: the first heaps may make the allocator and crossbeam grow their own memory.
    for i in 0..4 {
        one_heap(i);
    }
    settle_deferred_frees();
    let fds = count_fds();
    let maps = count_mappings();
    let mut all_ranges = Vec::new();
    for i in 0..200 {
        all_ranges.extend(one_heap(i));
        if i % 50 == 49 {
            assert_eq!(
                count_fds(),
                fds,
                "file descriptors leaked after {} heaps",
                i + 1
            );
        }
    }
    assert_eq!(count_fds(), fds, "file descriptors leaked");
    settle_deferred_frees();
    let after = count_mappings();
    assert_eq!(
        after, maps,
        "mappings leaked: {maps} before, {after} after 200 heaps"
    );
    // No mapping overlaps any view range a dropped heap had reserved.
    all_ranges.sort();
    all_ranges.dedup();
    for (lo, hi) in mapping_ranges() {
        for &(s, e) in &all_ranges {
            assert!(
                hi <= s || lo >= e,
                "mapping {lo:#x}-{hi:#x} lies in a dropped heap's view {s:#x}-{e:#x}"
            );
        }
    }
    // No backing file is left in the directory either.
    let prefix = format!("zgc-rs-heap.{}.", std::process::id());
    assert!(!std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy().starts_with(&prefix)));
}

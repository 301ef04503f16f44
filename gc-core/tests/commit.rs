//! Commit and uncommit accounting: `committed_bytes()` is exact after every commit and uncommit,
//! the kernel agrees (the backing file's `st_blocks` rises on `fallocate` and goes down after
//! `PUNCH_HOLE`), the initial heap is committed at start and kept, and
//! `PageAllocator::uncommit(keep)` lowers the committed bytes to `keep`. Also shows why RSS is
//! the wrong number for a multi-mapped heap: each view's mapping counts the same memory again,
//! while Pss counts it once.

use gc_core::physical::{PhysRange, PhysicalMemory};
use gc_core::{Backing, MemoryConfig, PageAllocator, PageKind, View, GRANULE_SIZE};

const MIB: u64 = 1 << 20;

fn range(first_granule: u64, granules: u64) -> PhysRange {
    PhysRange {
        offset: first_granule * GRANULE_SIZE,
        len: granules * GRANULE_SIZE,
    }
}

fn file_bytes(p: &PhysicalMemory) -> u64 {
    p.allocated_file_bytes().unwrap()
}

#[test]
fn physical_commit_and_uncommit_are_exact() {
    let p = PhysicalMemory::new(64 * MIB, &Backing::Memfd, gc_core::HugePages::Off).unwrap();
    assert_eq!(p.size(), 64 * MIB);
    assert_eq!(p.committed_bytes(), 0);
    assert_eq!(file_bytes(&p), 0, "a fresh memfd has no blocks");

    p.commit(range(0, 4)).unwrap();
    assert_eq!(p.committed_bytes(), 8 * MIB);
    assert_eq!(file_bytes(&p), 8 * MIB);

    // Overlapping commit: only the new granules count.
    p.commit(range(2, 4)).unwrap();
    assert_eq!(p.committed_bytes(), 12 * MIB);
    assert_eq!(file_bytes(&p), 12 * MIB);

    // A hole in the middle.
    assert_eq!(p.uncommit(range(1, 2)).unwrap(), 4 * MIB);
    assert_eq!(p.committed_bytes(), 8 * MIB);
    assert_eq!(file_bytes(&p), 8 * MIB, "PUNCH_HOLE must return the blocks");

    // Uncommitting an uncommitted range is a no-op; a range spanning both kinds counts only
    // what was committed.
    assert_eq!(p.uncommit(range(1, 2)).unwrap(), 0);
    assert_eq!(p.uncommit(range(0, 8)).unwrap(), 8 * MIB);
    assert_eq!(p.committed_bytes(), 0);
    assert_eq!(file_bytes(&p), 0);
}

#[test]
fn punch_hole_drops_touched_memory() {
    // Memory written through a mapping is also returned by uncommit, and reads back as zeros.
    let heap = PageAllocator::new(&MemoryConfig::new(32 * MIB)).unwrap();
    let page = heap.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap();
    let base = heap.layout().address(page.start(), View::Remapped);
    // SAFETY: the page's 2 MiB are mapped read-write in the Remapped view and only used here.
    unsafe { std::ptr::write_bytes(base.as_ptr::<u8>(), 0x5A, GRANULE_SIZE as usize) };
    let before = file_bytes(heap.physical());
    assert_eq!(before, 2 * MIB);
    // SAFETY: nothing reads or writes the page's objects after it is freed.
    unsafe { heap.free_page(&page) };
    assert_eq!(heap.uncommit(0).unwrap(), 2 * MIB);
    assert_eq!(heap.physical().committed_bytes(), 0);
    assert_eq!(file_bytes(heap.physical()), 0);
    // The next page gets fresh (zeroed) memory.
    let page = heap.alloc_page(PageKind::Small, 2 * MIB, 2).unwrap();
    let base = heap.layout().address(page.start(), View::Marked1);
    // SAFETY: mapped read-write, 2 MiB long.
    let bytes = unsafe { std::slice::from_raw_parts(base.as_ptr::<u8>(), GRANULE_SIZE as usize) };
    assert!(bytes.iter().all(|&b| b == 0));
}

/// Writes `byte` over the first granule of `page` (through the Remapped view).
fn dirty(heap: &PageAllocator, page: &gc_core::Page, byte: u8) {
    let base = heap.layout().address(page.start(), View::Remapped);
    // SAFETY: the page is mapped read-write, at least a granule long, and only used here.
    unsafe { std::ptr::write_bytes(base.as_ptr::<u8>(), byte, GRANULE_SIZE as usize) };
}

#[test]
fn only_memory_never_handed_out_counts_as_zeroed() {
    // The initial heap is committed and never handed out: zero.
    let mut cfg = MemoryConfig::new(32 * MIB);
    cfg.initial_heap = 8 * MIB;
    let heap = PageAllocator::new(&cfg).unwrap();
    let a = heap.alloc_page(PageKind::Large, 8 * MIB, 1).unwrap();
    assert!(a.take_zeroed(), "initial heap, never handed out");
    assert!(!a.take_zeroed(), "only the page's first taker is told");

    let heap = PageAllocator::new(&MemoryConfig::new(32 * MIB)).unwrap();
    let a = heap.alloc_page(PageKind::Large, 8 * MIB, 1).unwrap();
    assert!(a.take_zeroed(), "committed for this page");
    dirty(&heap, &a, 0x5A);
    // SAFETY: nothing reads or writes the page's objects after it is freed.
    unsafe { heap.free_page(&a) };
    // The page cache's memory, of the same size: written.
    let b = heap.alloc_page(PageKind::Large, 8 * MIB, 2).unwrap();
    assert_eq!(b.start(), a.start(), "the cached memory is reused");
    assert!(!b.take_zeroed(), "memory from the page cache");
    // SAFETY: as above.
    unsafe { heap.free_page(&b) };
    // A size that needs the whole file: the cache is flushed and its granules, still
    // committed and written, are taken again beside fresh ones.
    let c = heap.alloc_page(PageKind::Large, 32 * MIB, 3).unwrap();
    assert_eq!(heap.usage().cached, 0, "the cache was flushed");
    assert!(!c.take_zeroed(), "flushed memory keeps what was written");
    dirty(&heap, &c, 0xA5);
    // SAFETY: as above.
    unsafe { heap.free_page(&c) };
    // Uncommitted (punched out), then committed again: zero again, as the flag says.
    heap.uncommit(0).unwrap();
    assert_eq!(heap.physical().committed_bytes(), 0);
    let d = heap.alloc_page(PageKind::Large, 32 * MIB, 4).unwrap();
    assert!(d.take_zeroed(), "committed again after the punch");
    let base = heap.layout().address(d.start(), View::Marked0);
    // SAFETY: mapped read-write, 32 MiB long.
    let bytes = unsafe { std::slice::from_raw_parts(base.as_ptr::<u8>(), 32 * MIB as usize) };
    assert_eq!(bytes.iter().position(|&b| b != 0), None);
}

#[test]
fn initial_heap_is_committed_and_kept() {
    let mut cfg = MemoryConfig::new(64 * MIB);
    cfg.initial_heap = 16 * MIB;
    let heap = PageAllocator::new(&cfg).unwrap();
    assert_eq!(heap.physical().committed_bytes(), 16 * MIB);
    assert_eq!(file_bytes(heap.physical()), 16 * MIB);
    assert_eq!(heap.usage().committed, 16 * MIB);

    // Pages inside the initial heap commit nothing new; beyond it they do.
    let pages: Vec<_> = (0..12)
        .map(|_| heap.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap())
        .collect();
    assert_eq!(heap.physical().committed_bytes(), 24 * MIB);
    assert_eq!(file_bytes(heap.physical()), 24 * MIB);
    assert_eq!(heap.used(), 24 * MIB);

    // Pages in the cache stay committed until uncommit flushes them.
    for p in &pages {
        // SAFETY: nothing reads or writes the page's objects after it is freed.
        unsafe { heap.free_page(p) };
    }
    assert_eq!(heap.used(), 0);
    assert_eq!(heap.usage().cached, 24 * MIB);
    assert_eq!(heap.physical().committed_bytes(), 24 * MIB);

    // uncommit(0) never goes below the initial heap.
    assert_eq!(heap.uncommit(0).unwrap(), 8 * MIB);
    assert_eq!(heap.usage().cached, 0);
    assert_eq!(heap.physical().committed_bytes(), 16 * MIB);
    assert_eq!(file_bytes(heap.physical()), 16 * MIB);
}

#[test]
fn uncommit_keep_lowers_committed_bytes() {
    let heap = PageAllocator::new(&MemoryConfig::new(64 * MIB)).unwrap();
    let pages: Vec<_> = (0..10)
        .map(|_| heap.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap())
        .collect();
    assert_eq!(heap.physical().committed_bytes(), 20 * MIB);
    // Free all but the first two pages; in-use pages are never uncommitted.
    for p in &pages[2..] {
        // SAFETY: nothing reads or writes the page's objects after it is freed.
        unsafe { heap.free_page(p) };
    }
    let done = heap.uncommit(10 * MIB).unwrap();
    assert_eq!(done, 10 * MIB);
    assert_eq!(heap.physical().committed_bytes(), 10 * MIB);
    assert_eq!(file_bytes(heap.physical()), 10 * MIB);

    let done = heap.uncommit(0).unwrap();
    assert_eq!(done, 6 * MIB);
    assert_eq!(
        heap.physical().committed_bytes(),
        4 * MIB,
        "the two pages in use stay"
    );
    assert_eq!(file_bytes(heap.physical()), 4 * MIB);

    // The pages in use still hold their data.
    let l = heap.layout();
    for (i, p) in pages[..2].iter().enumerate() {
        let a = l.address(p.start(), View::Marked0);
        // SAFETY: the page is in use and mapped.
        unsafe { a.as_ptr::<u64>().write(i as u64 + 77) };
    }
    assert_eq!(heap.uncommit(0).unwrap(), 0);
    for (i, p) in pages[..2].iter().enumerate() {
        let a = l.address(p.start(), View::Remapped);
        // SAFETY: the page is in use and mapped.
        assert_eq!(unsafe { a.as_ptr::<u64>().read() }, i as u64 + 77);
    }
}

#[test]
fn directory_backing_commits_and_punches_holes_too() {
    let dir = std::path::Path::new("/dev/shm");
    if !dir.is_dir() {
        eprintln!("no /dev/shm: skipped");
        return;
    }
    let p = PhysicalMemory::new(
        16 * MIB,
        &Backing::Directory(dir.into()),
        gc_core::HugePages::Off,
    )
    .unwrap();
    p.commit(range(0, 3)).unwrap();
    assert_eq!(p.committed_bytes(), 6 * MIB);
    assert_eq!(file_bytes(&p), 6 * MIB);
    assert_eq!(p.uncommit(range(0, 2)).unwrap(), 4 * MIB);
    assert_eq!(file_bytes(&p), 2 * MIB);
    assert_eq!(p.committed_bytes(), 2 * MIB);
}

/// Sum `Rss:` and `Pss:` (bytes) of the `/proc/self/smaps` entries that start at one of `starts`.
fn smaps_rss_pss(starts: &[u64]) -> (u64, u64, usize) {
    let text = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let (mut rss, mut pss, mut found) = (0, 0, 0);
    let mut current = false;
    for line in text.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((lo, _)) = first.split_once('-') {
            if let Ok(lo) = u64::from_str_radix(lo, 16) {
                current = starts.contains(&lo);
                found += current as usize;
                continue;
            }
        }
        if !current {
            continue;
        }
        let kb = |l: &str| -> u64 {
            l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
        };
        if line.starts_with("Rss:") {
            rss += kb(line);
        } else if line.starts_with("Pss:") {
            pss += kb(line);
        }
    }
    (rss, pss, found)
}

#[test]
fn rss_counts_each_view_pss_counts_once() {
    let heap = PageAllocator::new(&MemoryConfig::new(64 * MIB)).unwrap();
    let page = heap.alloc_page(PageKind::Large, 8 * MIB, 1).unwrap();
    let l = heap.layout();
    // Touch every byte through each view (so each view's page tables map it).
    for v in View::ALL {
        let a = l.address(page.start(), v);
        // SAFETY: the page's 8 MiB are mapped read-write in every view.
        unsafe { std::ptr::write_bytes(a.as_ptr::<u8>(), 1, page.size() as usize) };
    }
    let starts: Vec<u64> = View::ALL
        .iter()
        .map(|&v| l.address(page.start(), v).raw())
        .collect();
    let (rss, pss, found) = smaps_rss_pss(&starts);
    let views = View::ALL.len();
    assert_eq!(found, views, "one mapping per view");
    assert_eq!(
        rss,
        views as u64 * 8 * MIB,
        "RSS counts the memory once per view"
    );
    assert!(
        pss.abs_diff(8 * MIB) <= 64 << 10,
        "Pss should count the memory once: {pss}"
    );
    assert_eq!(heap.physical().committed_bytes(), 8 * MIB);
}

#[test]
fn an_unaligned_initial_heap_is_rounded_up_and_kept_whole() {
    let mut cfg = MemoryConfig::new(32 * MIB);
    cfg.initial_heap = 3 * MIB;
    let heap = PageAllocator::new(&cfg).unwrap();
    assert_eq!(heap.physical().committed_bytes(), 4 * MIB);
    let pages: Vec<_> = (0..4)
        .map(|_| heap.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap())
        .collect();
    assert_eq!(heap.physical().committed_bytes(), 8 * MIB);
    for p in &pages {
        // SAFETY: nothing reads or writes the page's objects after it is freed.
        unsafe { heap.free_page(p) };
    }
    heap.uncommit(0).unwrap();
    assert_eq!(
        heap.physical().committed_bytes(),
        4 * MIB,
        "uncommit went below the (rounded-up) initial heap"
    );
    assert_eq!(file_bytes(heap.physical()), 4 * MIB);
}

#[test]
fn a_heap_committed_whole_is_mapped_at_creation_and_served_from_the_cache() {
    let mut cfg = MemoryConfig::new(32 * MIB);
    cfg.initial_heap = 32 * MIB;
    let heap = PageAllocator::new(&cfg).unwrap();
    assert_eq!(
        heap.views_mapped(),
        1,
        "one mapping for the whole initial heap"
    );
    assert_eq!(heap.usage().cached, 32 * MIB, "all of it in the page cache");
    // Every small page comes from the cache: no mmap on the allocating thread.
    let pages: Vec<_> = (0..16)
        .map(|_| heap.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap())
        .collect();
    assert_eq!(
        heap.views_mapped(),
        1,
        "a small page of the primed heap was mapped again"
    );
    assert_eq!(heap.usage().cached, 0);
    assert!(
        pages.windows(2).all(|w| w[0].start() < w[1].start()),
        "the lowest addresses are handed out first"
    );
    for p in &pages {
        dirty(&heap, p, 0x5A);
        // SAFETY: nothing reads or writes the page's objects after it is freed.
        unsafe { heap.free_page(p) };
    }
    // Nothing to uncommit below the initial heap: the cache stays mapped.
    assert_eq!(heap.uncommit(0).unwrap(), 0);
    assert_eq!(
        heap.usage().cached,
        32 * MIB,
        "uncommit flushed a cache it could not shrink"
    );
    let again = heap.alloc_page(PageKind::Small, 2 * MIB, 2).unwrap();
    assert_eq!(heap.views_mapped(), 1);
    // SAFETY: as above.
    unsafe { heap.free_page(&again) };
}

#[test]
fn primed_memory_no_page_wrote_is_still_zero_for_a_large_page() {
    let mut cfg = MemoryConfig::new(32 * MIB);
    cfg.initial_heap = 32 * MIB;
    let heap = PageAllocator::new(&cfg).unwrap();
    // One small page written and freed; the large page needs the whole file: the cache is
    // flushed, and only the written granule's memory is not zero.
    let a = heap.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap();
    dirty(&heap, &a, 0x5A);
    // SAFETY: nothing reads or writes the page's objects after it is freed.
    unsafe { heap.free_page(&a) };
    let b = heap.alloc_page(PageKind::Large, 32 * MIB, 2).unwrap();
    assert!(!b.take_zeroed(), "a written granule is in it");
    dirty(&heap, &b, 0xA5);
    // SAFETY: as above.
    unsafe { heap.free_page(&b) };

    let heap = PageAllocator::new(&cfg).unwrap();
    let c = heap.alloc_page(PageKind::Large, 16 * MIB, 1).unwrap();
    assert!(c.take_zeroed(), "primed memory no page took reads as zeros");
    let base = heap.layout().address(c.start(), View::Marked0);
    // SAFETY: mapped read-write, 16 MiB long.
    let bytes = unsafe { std::slice::from_raw_parts(base.as_ptr::<u8>(), 16 * MIB as usize) };
    assert_eq!(bytes.iter().position(|&b| b != 0), None);
}

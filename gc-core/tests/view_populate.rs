//! Populating a view by read fault-around (`gc_core::view_populate`): a page written through
//! one view and then written through another takes one minor fault per 4 KiB page of the second
//! view; populated first, the second view's writes take (almost) none, and the populate itself
//! takes at most one fault per 64 KiB. Counted with this thread's minor faults (`RUSAGE_THREAD`),
//! which other threads do not disturb. Also: what was populated is not read again, a freed
//! page is left alone, and the page's bytes are unchanged.

use gc_core::view_populate::FAULT_AROUND_BYTES;
use gc_core::{MemoryConfig, PageAllocator, PageKind, View, GRANULE_SIZE};

const MIB: u64 = 1 << 20;
const PAGE: u64 = 4096;

/// Minor faults taken by the calling thread so far.
fn thread_minor_faults() -> u64 {
    // SAFETY: `ru` is plain old data, fully written by getrusage on success.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to `ru`; RUSAGE_THREAD reads the calling thread's counters.
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) }, 0);
    ru.ru_minflt as u64
}

/// Write one byte per 4 KiB page of `[at, at + len)` through `view`; the faults it took.
fn write_pages(heap: &PageAllocator, at: gc_core::Offset, len: u64, view: View, v: u8) -> u64 {
    let base = heap.layout().address(at, view).as_ptr::<u8>();
    let before = thread_minor_faults();
    for off in (0..len).step_by(PAGE as usize) {
        // SAFETY: the range lies in a page of `heap` that this test allocated and has not freed,
        // mapped read-write in every view.
        unsafe { std::ptr::write_volatile(base.add(off as usize), v) };
    }
    thread_minor_faults() - before
}

#[test]
fn a_populated_view_is_written_without_a_fault_per_page() {
    let heap = PageAllocator::new(&MemoryConfig::new(64 * MIB)).unwrap();
    let size = 4 * GRANULE_SIZE;
    let pages = size / PAGE;
    let page = heap.alloc_page(PageKind::Large, size, 1).unwrap();
    page.alloc_shared(size).expect("the whole page");
    let start = page.start();

    // Fresh memory through Remapped: one fault per page, whatever is done about it.
    let fresh = write_pages(&heap, start, size, View::Remapped, 1);
    assert!(fresh >= pages, "{fresh} faults writing {pages} fresh pages");

    // Marked0 unpopulated: a fault per page again (the baseline the mechanism cuts).
    let plain = write_pages(&heap, start, size, View::Marked0, 2);
    assert!(plain >= pages, "{plain} faults for {pages} pages in file");

    // Marked1 populated first: one read per 64 KiB, and the writes after it nearly free.
    let before = thread_minor_faults();
    let reads = heap.populate_view(&page, View::Marked1);
    let populate_faults = thread_minor_faults() - before;
    assert_eq!(reads, pages);
    assert!(
        populate_faults <= size / FAULT_AROUND_BYTES,
        "{populate_faults} faults for {reads} reads"
    );
    let after = write_pages(&heap, start, size, View::Marked1, 3);
    assert!(
        populate_faults + after <= pages / 4,
        "populated: {populate_faults} + {after} faults for {pages} pages (unpopulated: {plain})"
    );

    // Nothing is read twice; the bytes are what the last write left.
    assert_eq!(heap.populate_view(&page, View::Marked1), 0);
    let base = heap.layout().address(start, View::Remapped).as_ptr::<u8>();
    for off in (0..size).step_by(PAGE as usize) {
        // SAFETY: inside the page allocated above, still in use.
        assert_eq!(
            unsafe { std::ptr::read_volatile(base.add(off as usize)) },
            3
        );
    }

    // A freed page has no memory to populate.
    // SAFETY: no thread uses the page's objects any more.
    unsafe { heap.free_page(&page) };
    assert_eq!(heap.populate_view(&page, View::Remapped), 0);
}

#[test]
fn populating_follows_the_allocated_top() {
    let heap = PageAllocator::new(&MemoryConfig::new(64 * MIB)).unwrap();
    let page = heap.alloc_page(PageKind::Small, GRANULE_SIZE, 1).unwrap();
    assert_eq!(
        heap.populate_view(&page, View::Marked0),
        0,
        "nothing allocated"
    );
    page.alloc_shared(100 << 10).unwrap();
    // 100 KiB + 8 bytes: 25 whole 4 KiB pages and a partial one, left below the watermark.
    page.alloc_shared(8).unwrap();
    assert_eq!(heap.populate_view(&page, View::Marked0), 26);
    page.alloc_shared(200 << 10).unwrap();
    // 300 KiB + 8: the partial page again, then pages up to 304 KiB.
    assert_eq!(heap.populate_view(&page, View::Marked0), 51);
    // Other views keep their own watermark.
    assert_eq!(heap.populate_view(&page, View::Remapped), 76);
}

#[test]
fn a_prefaulted_relocation_target_is_written_without_a_fault_per_page() {
    let heap = PageAllocator::new(&MemoryConfig::new(64 * MIB)).unwrap();
    let page = heap.alloc_page(PageKind::Small, GRANULE_SIZE, 1).unwrap();
    let pages = GRANULE_SIZE / PAGE;
    let start = page.start();
    // A word written before (through another view) keeps its value.
    let marked0 = heap.layout().address(start, View::Marked0).as_ptr::<u64>();
    // SAFETY: the first word of the page allocated above, which no other thread uses.
    unsafe { std::ptr::write_volatile(marked0.add(100), 0xfeed) };

    let before = thread_minor_faults();
    // SAFETY: the page was just allocated by this thread and no other thread reaches it.
    let writes = unsafe {
        gc_core::view_populate::prefault_unpublished(heap.layout(), &page, View::Remapped)
    };
    let prefault_faults = thread_minor_faults() - before;
    assert_eq!(writes, pages);
    assert!(
        prefault_faults >= pages / 2,
        "{prefault_faults} faults: the prefault did not fault the fresh memory in"
    );

    // Copies into the target through Remapped now take (almost) no fault.
    page.alloc_shared(GRANULE_SIZE).expect("the whole page");
    let after = write_pages(&heap, start, GRANULE_SIZE, View::Remapped, 7);
    assert!(
        after <= 2,
        "{after} faults writing {pages} prefaulted pages"
    );
    // The view's watermark covers the page: nothing to populate there any more.
    assert_eq!(heap.populate_view(&page, View::Remapped), 0);
    // SAFETY: as above.
    assert_eq!(unsafe { std::ptr::read_volatile(marked0.add(100)) }, 0xfeed);
}

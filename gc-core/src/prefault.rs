//! Prefaulting fresh off-heap tables. A large zeroed allocation (a forwarding table of a
//! relocation-set page, up to a few hundred KiB) comes from the allocator as untouched
//! anonymous memory: its first read maps the kernel's shared zero page, and the first write
//! after that takes a second fault that allocates and clears a real page. During Concurrent
//! Relocate those faults land on the relocating GC workers and, worse, on mutators whose
//! barrier relocates an object: a profile of heap-churn at 1G put about a tenth of all CPU
//! time in the kernel clearing such pages one fault at a time. [`prefault_writable`] asks the
//! kernel for all of a table's pages at once (`MADV_POPULATE_WRITE`, Linux 5.14).
//! Concurrent Select Relocation Set does so for the new tables, for at most 50 ms, and the GC
//! worker that evacuates a page does it for that page's table first (a no-op if already
//! done). Without the bound, the whole cost sat in selection, before any page is freed:
//! seconds at 8G the first time, in a virtual machine whose fresh memory is slow to touch,
//! and the mutator stalled. A mutator that reaches a table not yet faulted in probes it with
//! writes (`ForwardingTable::find_to_insert`), so each page it touches faults in once. ZGC's
//! forwarding tables face the same; HotSpot allocates them with `os::malloc` and takes the
//! faults.

/// Tables smaller than this are left to fault (one syscall is not worth a page or two).
pub(crate) const PREFAULT_MIN_BYTES: usize = 64 << 10;

/// Populate the page tables of `[ptr, ptr + len)` writable, without touching its contents;
/// only the whole pages inside the range. Best effort: an older kernel refuses and the memory
/// faults on first use as before. True if the pages were populated.
pub(crate) fn prefault_writable(ptr: *const u8, len: usize) -> bool {
    if len < PREFAULT_MIN_BYTES {
        return false;
    }
    const PAGE: usize = 4096;
    let start = (ptr as usize).next_multiple_of(PAGE);
    let end = (ptr as usize + len) & !(PAGE - 1);
    if end <= start {
        return false;
    }
    // SAFETY: `[start, end)` lies inside an allocation the caller owns (the range it passed,
    // shrunk to whole pages); MADV_POPULATE_WRITE only faults the pages in, as a write would,
    // and changes no byte of them, so every value the caller holds there stays as it was.
    unsafe {
        libc::madvise(
            start as *mut libc::c_void,
            end - start,
            libc::MADV_POPULATE_WRITE,
        ) == 0
    }
}

//! Populating a view's page-table entries ahead of use, by read fault-around. Every view
//! (Marked0, Marked1, Remapped, and Marked2 when the mark colors rotate) maps the same memory
//! with page-table entries of its own, so a heap page that the program reaches through three
//! colors is faulted in three times (four with Marked2): once fresh, where its first write
//! allocates and clears the memory, and once more through each other view, minor faults on
//! memory already in the file. ZGC on Linux has the same three
//! mappings (`ZPhysicalMemoryBacking` multi-mapping, before generational ZGC dropped it).
//!
//! A *write* fault on a shared file mapping maps one 4 KiB page. A *read* fault on one maps,
//! besides the faulting page, every neighbour in the same aligned `fault_around_bytes` block
//! (64 KiB by default) that is already in the file and up to date, writable, with no further
//! fault when it is written. [`populate`] reads a page's allocated range through a view, one
//! byte per 4 KiB: the first read of a page not yet mapped faults and maps its block, sixteen
//! pages, and the reads of the block's other pages find them mapped. Measured on this 4 KiB-page
//! virtual machine (256 MiB of memory already in the file): sixteen write faults per 64 KiB
//! took 143–162 ms, one read per 64 KiB 15–36 ms, and the writes after it took 2 faults in
//! all. Memory that was never written is not up to date in the file, so fault-around skips it
//! (the read only faults its own page in): the first write of fresh memory stays one fault per
//! 4 KiB, whoever makes it.
//!
//! A relocation target is the other case: it holds nothing yet, so there is nothing to read,
//! and its memory may never have been written (a heap committed by `fallocate` is only
//! cleared on first use). [`prefault_unpublished`] writes one word per 4 KiB of such a page,
//! before it is published, so the copies into it take no fault.
//!
//! The collector populates the view that becomes good at a flip (the mark color at Pause Mark
//! Start, Remapped at Pause Relocate Start) over the pages in use, on a GC thread, before the
//! mutators reach that memory through it one fault per page. Each page's memory remembers, per
//! view, up to where it was populated (`ViewWatermarks`, in `page`); the memory keeps its mappings when
//! the page is freed into the page cache, so the next page over it skips what is mapped
//! already, and a heap whose memory is all mapped in every view costs a walk and no faults.

use crate::address::{AddressLayout, View};
use crate::page::Page;
use std::sync::atomic::Ordering;

/// The span one read fault maps: the kernel's default `fault_around_bytes`. A system set to a
/// smaller value maps fewer neighbours per read; the reads stay correct, only less useful.
pub const FAULT_AROUND_BYTES: u64 = 64 << 10;

/// The memory page size the reads are spaced by.
const PAGE_BYTES: u64 = 4096;

/// Populate `view`'s page-table entries over `page`'s allocated range (start to top) that an
/// earlier call did not cover: one byte read per 4 KiB page, of which at most one per
/// [`FAULT_AROUND_BYTES`] block faults. Returns the number of reads made (0 for a page already
/// populated up to its top, or freed).
///
/// The page's memory lock is held while reading, so the memory cannot be freed, cached and
/// unmapped meanwhile: freeing the page waits (for at most one page's reads).
pub fn populate(layout: AddressLayout, page: &Page, view: View) -> u64 {
    let top = page.top();
    page.with_memory(|m| {
        let used = (top - m.start).min(m.size);
        let from = m.populated.get(view);
        if used <= from {
            return 0;
        }
        let base = layout.address(m.start, view).as_ptr::<u8>();
        // Every 4 KiB page is read, not one per block: a block where the program already
        // reached a page through this view has it mapped, and a read of a mapped page takes
        // no fault and maps no neighbour. Reading on, the first page still missing faults and
        // maps the rest of the block; the other reads are loads of mapped memory.
        let mut page_start = from;
        let mut reads = 0;
        while page_start < used {
            // SAFETY: `page_start` lies in the page's memory (below `used` <= its size),
            // mapped in every view while the memory lock is held with the memory present
            // (freeing the page takes it under that lock, and only cached memory is ever
            // unmapped).
            unsafe { touch(base.add(page_start as usize)) };
            reads += 1;
            page_start += PAGE_BYTES;
        }
        // Up to the last whole 4 KiB page: the partial last one is read again next time (its
        // block may hold fresh pages that fault-around skipped).
        m.populated.set(view, used - used % PAGE_BYTES);
        reads
    })
    .unwrap_or(0)
}

/// Fault in `view`'s page-table entries over all of `page`'s memory by one write per 4 KiB (a
/// compare-exchange of 0 by 0, which changes nothing), for a page that no other thread can
/// reach yet: a relocation target before it is published. Fault-around maps neighbours only
/// for memory already written once; memory never written yet (a heap committed by
/// `fallocate` is not, until first use) takes one write fault per 4 KiB that also clears it,
/// and when a mutator's barrier and a GC worker copy into the same fresh target page, one
/// waits on the other's fault for the page's lock. Faulting the shared target in before
/// relocation starts takes those faults off both. Returns the pages written (0 for a page
/// freed meanwhile).
///
/// # Safety
/// No other thread reads or writes `page`'s memory during the call.
pub unsafe fn prefault_unpublished(layout: AddressLayout, page: &Page, view: View) -> u64 {
    page.with_memory(|m| {
        let base = layout.address(m.start, view).as_ptr::<u64>();
        let mut at = 0;
        let mut writes = 0;
        while at < m.size {
            // SAFETY: `at` lies in the page's memory, mapped in every view while the memory
            // lock is held with the memory present; the word is 8-byte aligned (pages and
            // 4 KiB steps are); no other thread accesses the memory (the caller's contract),
            // so the atomic access races with nothing.
            let w = unsafe { std::sync::atomic::AtomicU64::from_ptr(base.add((at / 8) as usize)) };
            let _ = w.compare_exchange(0, 0, Ordering::Relaxed, Ordering::Relaxed);
            writes += 1;
            at += PAGE_BYTES;
        }
        m.populated.set(view, m.size);
        writes
    })
    .unwrap_or(0)
}

/// Read one byte at `p`, invisibly to the compiler's memory model: another thread may be
/// writing the same heap memory with plain stores (a mutator initializing an object), and the
/// value is thrown away; only the read access, and the page fault it takes, matters.
///
/// # Safety
/// `p` is mapped and readable.
#[inline]
unsafe fn touch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller guarantees `p` is mapped readable; the instruction only loads a byte
    // into a scratch register and touches no Rust-visible memory.
    unsafe {
        std::arch::asm!("mov {0}, byte ptr [{1}]", out(reg_byte) _, in(reg) p,
            options(nostack, readonly, preserves_flags));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above.
    unsafe {
        std::arch::asm!("ldrb {0:w}, [{1}]", out(reg) _, in(reg) p,
            options(nostack, readonly, preserves_flags));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    // SAFETY: the caller guarantees `p` is mapped readable. (A racing plain store makes this a
    // data race in the Rust model; only the two architectures above are supported targets.)
    unsafe {
        std::ptr::read_volatile(p);
    }
}

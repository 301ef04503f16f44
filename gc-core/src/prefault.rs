//! Prefaulting fresh off-heap tables. A large zeroed allocation (a forwarding table of a
//! relocation-set page, up to a few hundred KiB) comes from the allocator as untouched
//! anonymous memory: its first read maps the kernel's shared zero page, and the first write
//! after that takes a second fault that allocates and clears a real page. During Concurrent
//! Relocate those faults land on the relocating GC workers and, worse, on mutators whose
//! barrier relocates an object: a profile of heap-churn at 1G put about a tenth of all CPU
//! time in the kernel clearing such pages one fault at a time. [`prefault_words`] faults a
//! table's pages in, writable, before it is used: Concurrent Select Relocation Set does so for
//! the new tables, for at most 50 ms, and the GC worker that evacuates a page does it for that
//! page's table first (a no-op if already done). Without the bound, the whole cost sat in
//! selection, before any page is freed: seconds at 8G the first time, in a virtual machine
//! whose fresh memory is slow to touch, and the mutator stalled. A mutator that reaches a
//! table not yet faulted in probes it with writes (`ForwardingEntries::find_to_insert`), so each
//! page it touches faults in once. ZGC's forwarding tables face the same; HotSpot allocates
//! them with `os::malloc` and takes the faults.
//!
//! # How: one write per memory page, not `madvise`
//!
//! A page is faulted in by an atomic read-modify-write that changes nothing (a
//! compare-exchange of 0 by 0) on one word of it: a write fault, which allocates the page at once, and atomic, so a mutator
//! or relocator inserting into the same table meanwhile loses nothing. An earlier version asked
//! for all of a table's pages in one `madvise(MADV_POPULATE_WRITE)`. That call holds the
//! process's memory-map lock for the whole table, and the GC workers making it run in the idle
//! scheduling class while mutators are paced: preempted while holding the lock, they held up
//! every thread that needed it for writing — a mutator mapping a new heap page waited up to
//! 110 ms (`mmap_lock` tracepoints; the sweep recorded them as page-allocation waits). A
//! page fault on anonymous memory takes only that memory area's own lock (per-VMA locks,
//! Linux 6.4 and later; older kernels take the memory-map lock for reading, one fault at a
//! time): with faults instead, the longest page allocation of 1G and 4G runs went from
//! 20–110 ms to 4–5 ms.

use crate::sync::AtomicWord;
use std::sync::atomic::Ordering;

/// The memory page size the faults are spaced by (a larger page only means some writes find
/// their page present already).
const PAGE_BYTES: usize = 4096;

/// Fault in every memory page of `words`, writable, without changing any value (see the module
/// documentation). Small tables too: a table of a page or two, carved from fresh memory at
/// the top of an allocator arena, left to fault on its first use would fault on a mutator
/// (which then waits for the memory-map lock whenever another thread is growing that arena
/// with `mprotect`: traced, 1–4 such waits a 6 s run at 1G), and a mutator probes a table not
/// prefaulted with locked writes instead of loads.
pub(crate) fn prefault_words<W: AtomicWord>(words: &[W]) {
    let step = (PAGE_BYTES / std::mem::size_of::<W>().max(1)).max(1);
    for w in words.iter().step_by(step) {
        touch_for_write(w);
    }
    // The last page, if the stride stepped over its start.
    if let Some(last) = words.last() {
        touch_for_write(last);
    }
}

/// A write access to `w` that changes nothing: a compare-exchange of 0 by 0. Not a
/// `fetch_or(0)`: the compiler knows that one changes nothing, turns it into a load and, its
/// value unused, drops it, so the prefault did nothing at all (found in the release binary's
/// code: the loop only advanced its pointer). A failed `lock cmpxchg` still writes its
/// operand back on x86, so either outcome faults the page in writable.
#[inline]
fn touch_for_write<W: AtomicWord>(w: &W) {
    let _ = w.compare_exchange(0, 0, Ordering::Relaxed, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// Minor faults taken by the calling thread so far.
    fn thread_minor_faults() -> u64 {
        // SAFETY: `ru` is plain old data, fully written by getrusage on success.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: a valid pointer to `ru`; RUSAGE_THREAD reads the calling thread's counters.
        assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) }, 0);
        ru.ru_minflt as u64
    }

    /// After a prefault, writing every memory page of a fresh table takes no fault. 64 MiB,
    /// above the allocator's largest mmap threshold (32 MiB), so the memory is always fresh.
    #[test]
    fn a_prefaulted_table_is_written_without_faults() {
        let n = (64 << 20) / 8;
        let words: Box<[AtomicU64]> = AtomicU64::zeroed_words(n);
        prefault_words(&words);
        let before = thread_minor_faults();
        for w in words.iter().step_by(PAGE_BYTES / 8) {
            w.store(1, Ordering::Relaxed);
        }
        let faults = thread_minor_faults() - before;
        assert!(
            faults < (n / (PAGE_BYTES / 8)) as u64 / 100,
            "{faults} faults writing {} prefaulted pages",
            n / (PAGE_BYTES / 8)
        );
    }

    #[test]
    fn values_never_change_in_tables_of_any_size() {
        for n in [0, 1, 16, PAGE_BYTES / 8 + 3, (64 << 10) / 8 + 3] {
            let words: Vec<AtomicU64> = (0..n as u64).map(|i| AtomicU64::new(i * 7)).collect();
            prefault_words(&words);
            assert!(words
                .iter()
                .enumerate()
                .all(|(i, w)| w.load(Ordering::Relaxed) == i as u64 * 7));
        }
    }
}

//! The heap's own epoch domain: the `crossbeam-epoch` collector that guards lock-free
//! lookups in the heap's granule maps (the page table, the forwarding index), apart from the
//! process's default one. It plays the part of ZGC's page-table and forwarding-table
//! reclamation: a table entry removed while a reader may still hold it is freed only once
//! every reader that could have seen it has left its critical section.
//!
//! Why a domain of its own: an epoch collector runs its deferred frees on whichever thread
//! happens to pin it when they become due. The mark stacks (`crossbeam-deque`) defer the
//! frees of their outgrown buffers on the default collector; had the maps shared it, a
//! mutator pinning for a barrier's slow path would now and then free a GC worker's buffer
//! inside its scope, waiting for the allocator's lock of the worker's arena. Here a mutator
//! only ever pins this domain, so the only frees it can run are the maps' own (an `Arc`
//! reference dropped), and the mark stacks' stay with the GC workers that pin the default.
//!
//! [`HeapGuard`] is the only way to read a granule map, and only [`pin`] makes one, so a
//! lookup cannot be protected by a pin of the wrong domain: that would let a removed entry
//! be freed under a reader, and the compiler refuses it.

use crossbeam_epoch::{Collector, Guard, LocalHandle};
use std::sync::LazyLock;

/// The heap's collector, shared by every heap in the process (the maps' garbage is small,
/// and one domain keeps a thread to one registration).
static COLLECTOR: LazyLock<Collector> = LazyLock::new(Collector::new);

thread_local! {
    /// This thread's registration with [`COLLECTOR`], made on its first pin.
    static HANDLE: LocalHandle = COLLECTOR.register();
}

/// A pin of the heap's epoch domain: while it lives, no granule-map entry this thread can
/// read is freed. Not `Send`, like the guard it wraps.
pub struct HeapGuard(Guard);

/// Pin the heap's epoch domain on this thread (cheap when the thread is already pinned:
/// pins nest).
#[inline]
pub fn pin() -> HeapGuard {
    HeapGuard(
        HANDLE
            .try_with(LocalHandle::pin)
            // During the thread's own teardown, after its handle is gone: a temporary
            // registration, as `crossbeam_epoch::pin` does for the default domain.
            .unwrap_or_else(|_| COLLECTOR.register().pin()),
    )
}

impl HeapGuard {
    /// Leave and re-enter the critical section, so frees deferred before now can proceed;
    /// references read under this guard must not be used afterwards (the borrow checker
    /// holds every `&'g` reference to that).
    #[inline]
    pub fn repin(&mut self) {
        self.0.repin();
    }

    /// Hand this thread's deferred frees to the domain and run those that are due.
    pub fn flush(&self) {
        self.0.flush();
    }

    /// The wrapped guard, for deferring a free in this domain (inside `gc-core` only).
    pub(crate) fn guard(&self) -> &Guard {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_free_deferred_here_runs_once_no_reader_is_pinned() {
        let freed = Arc::new(AtomicUsize::new(0));
        let reader = pin();
        {
            let f = freed.clone();
            let g = pin();
            g.guard().defer(move || f.fetch_add(1, Ordering::SeqCst));
            g.flush();
        }
        // Another thread pins and flushes as often as it likes: this thread's reader is
        // still pinned, so the free cannot run.
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..1000 {
                    pin().flush();
                }
            });
        });
        assert_eq!(
            freed.load(Ordering::SeqCst),
            0,
            "freed under a pinned reader"
        );
        drop(reader);
        for _ in 0..10_000 {
            if freed.load(Ordering::SeqCst) == 1 {
                break;
            }
            pin().flush();
        }
        assert_eq!(freed.load(Ordering::SeqCst), 1, "run once the reader left");
    }
}

//! The forwarding index (ZGC's `ZForwardingTable`): from a heap offset to the relocation-set
//! entry of the page that held it, one slot per 2 MiB granule.
//!
//! Barrier slow paths read it lock-free inside a `crossbeam-epoch` guard. The relocation set
//! that owns the entries is dropped through the epoch after the index is cleared (Concurrent
//! Reset Relocation Set), so a reader never sees a freed forwarding (invariant 5).

use crate::forwarding::Forwarding;
use crossbeam_epoch::Guard;
use gc_core::GRANULE_SIZE;
use std::sync::atomic::{AtomicPtr, Ordering};

pub(crate) struct ForwardingIndex {
    start: u64,
    entries: Box<[AtomicPtr<Forwarding>]>,
}

impl ForwardingIndex {
    pub(crate) fn new(start: u64, size: u64) -> Self {
        let n = (size / GRANULE_SIZE) as usize;
        ForwardingIndex {
            start,
            entries: (0..n)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
        }
    }

    fn range(&self, f: &Forwarding) -> std::ops::Range<usize> {
        let first = ((f.page().start() - self.start) / GRANULE_SIZE) as usize;
        first..first + (f.page().size() / GRANULE_SIZE) as usize
    }

    /// Enter `f` for its page's granules. `f` must stay alive until [`Self::remove`] and one
    /// epoch after.
    pub(crate) fn insert(&self, f: &Forwarding) {
        for i in self.range(f) {
            self.entries[i].store(f as *const _ as *mut _, Ordering::Release);
        }
    }

    pub(crate) fn remove(&self, f: &Forwarding) {
        for i in self.range(f) {
            self.entries[i].store(std::ptr::null_mut(), Ordering::Release);
        }
    }

    /// The forwarding of the page that held `offset`, valid while `guard` is pinned.
    #[inline]
    pub(crate) fn get<'g>(&self, offset: u64, _guard: &'g Guard) -> Option<&'g Forwarding> {
        let i = (offset.checked_sub(self.start)? / GRANULE_SIZE) as usize;
        let p = self.entries.get(i)?.load(Ordering::Acquire);
        // SAFETY: a non-null entry points into the current relocation set, which is dropped
        // only through the epoch after its entries are removed; `_guard` was pinned before
        // this load, so the forwarding outlives the returned reference.
        unsafe { p.as_ref() }
    }
}

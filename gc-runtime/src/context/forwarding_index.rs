//! The forwarding index (ZGC's `ZForwardingTable`): from a heap offset to the relocation-set
//! entry of the page that held it, a granule map with one slot per 2 MiB granule.
//!
//! Barrier slow paths read it lock-free inside a pin of the heap's epoch domain
//! (`gc_core::heap_epoch`). The index holds its own reference to each entry and drops it only
//! once no reader that could have seen it is still pinned, so a reader never touches a freed
//! forwarding.
//!
//! Remapping a stale pointer — one colored with the previous cycle's mark color, which may
//! point into the previous relocation set — is a lookup here: [`ForwardingIndex::remap`].
//! The stale color is the one the mark-color rule gave the previous cycle (`GcState::stale`):
//! with full cycles only, the index holds the previous cycle's relocation set until the next
//! marking ends, the one table a stale color selects. With minors that evacuate, the context
//! holds two indexes, the last major's and the latest evacuating minor's, and a stale
//! pointer's color selects one (`GcContext::index_for`, gc-core's `StaleSource`).

use super::forwarding::Forwarding;
use gc_core::granule_map::GranuleMap;
use gc_core::heap_epoch::HeapGuard;
use gc_core::Offset;
use std::sync::Arc;

pub(crate) struct ForwardingIndex(GranuleMap<Forwarding>);

impl ForwardingIndex {
    pub(crate) fn new(start: Offset, size: u64) -> Self {
        ForwardingIndex(GranuleMap::new(start, size))
    }

    /// Enter `f` for its page's granules.
    pub(crate) fn insert(&self, f: &Arc<Forwarding>) {
        self.0.insert(f.page().start(), f.page().size(), f)
    }

    /// Remove `f` (entered with [`Self::insert`]).
    pub(crate) fn remove(&self, f: &Forwarding) {
        self.0.remove(f.page().start(), f.page().size(), f)
    }

    /// The forwarding of the page that held `offset`, valid while `guard` is pinned.
    #[inline]
    pub(crate) fn get<'g>(&self, offset: Offset, guard: &'g HeapGuard) -> Option<&'g Forwarding> {
        self.0.get(offset, guard)
    }

    /// True if no page of the granule of `off` has a forwarding: `off` was not relocated
    /// and cannot be. Read without a guard, so the barrier slow paths pin one only for a
    /// granule that has an entry (a pin is a locked instruction, and every 128th pin tries
    /// to advance the epoch).
    #[inline]
    pub(crate) fn is_vacant(&self, offset: Offset) -> bool {
        self.0.is_vacant(offset)
    }

    /// The forwarding of the relocated page that holds `off`, if `off` lies in one, valid
    /// while `guard` is pinned.
    #[inline]
    pub(crate) fn relocated<'g>(
        &self,
        off: Offset,
        guard: &'g HeapGuard,
    ) -> Option<&'g Forwarding> {
        self.get(off, guard).filter(|f| f.page().contains(off))
    }

    /// The current offset of the object that was at `off` (forwarded if its page was
    /// relocated, else unchanged).
    ///
    /// # Panics
    /// If `off` lies in a relocated page but has no entry: a live object was not relocated.
    pub(crate) fn remap(&self, off: Offset) -> Offset {
        if self.is_vacant(off) {
            return off;
        }
        self.remap_in(off, &gc_core::heap_epoch::pin())
    }

    /// [`Self::remap`] inside the caller's pin.
    #[inline]
    pub(crate) fn remap_in(&self, off: Offset, guard: &HeapGuard) -> Offset {
        match self.relocated(off, guard) {
            Some(f) => {
                let idx = f.page().index_of(off) as u64;
                f.find(idx).unwrap_or_else(|| {
                    panic!(
                        "stale pointer to {off:#x} in relocated page {:?} has no forwarding entry \
                         (a live object was not relocated)",
                        f.page()
                    )
                })
            }
            None => off,
        }
    }
}

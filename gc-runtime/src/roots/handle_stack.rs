//! The local-handle stack of one mutator (V8's `HandleScope` storage): an array of colored
//! pointer slots that the collector scans as roots. Scopes push handles and truncate back to
//! their base when they end.
//!
//! The slots live in an anonymous `NORESERVE` mapping of fixed capacity, so a handle's slot
//! never moves (a `Local` can point at it) and untouched capacity costs no memory. The owner
//! thread pushes and reads; the collector scans the slots below `top` while the owner runs
//! (Concurrent Mark Roots), healing them with a CAS. That is safe because the owner reads a
//! handle only through the load barrier and writes only good pointers: whatever value the
//! scan meets in a slot was a root during this cycle (marking it keeps garbage one cycle at
//! worst), and a CAS from a bad value can only replace the value the scan read.

use gc_core::{ColoredPtr, ColoredSlot};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Handle slots of one mutator.
pub(crate) struct HandleStack {
    map: memmap2::MmapMut,
    capacity: usize,
    /// Number of slots in use. Written by the owner only; read by the collector's scans.
    top: AtomicUsize,
}

impl HandleStack {
    pub(crate) fn new(capacity: usize) -> std::io::Result<Self> {
        let map = memmap2::MmapOptions::new()
            .len(capacity.max(1) * 8)
            .map_anon()?;
        Ok(HandleStack {
            map,
            capacity,
            top: AtomicUsize::new(0),
        })
    }

    fn slots(&self) -> &[ColoredSlot] {
        // SAFETY: the mapping is `capacity * 8` bytes, page aligned (so 8-byte aligned), zero
        // initialized (null slots), lives as long as `self`, and ColoredSlot
        // (repr(transparent) over AtomicU64) has the layout of u64.
        unsafe {
            std::slice::from_raw_parts(self.map.as_ptr() as *const ColoredSlot, self.capacity)
        }
    }

    /// Push `ptr`; returns its slot.
    #[inline]
    pub(crate) fn push(&self, ptr: ColoredPtr) -> &ColoredSlot {
        let top = self.top.load(Ordering::Relaxed);
        assert!(
            top < self.capacity,
            "local handle stack overflow ({} handles): open a nested scope in loops, or raise \
             HeapConfig::handle_capacity",
            self.capacity
        );
        let slot = &self.slots()[top];
        slot.store(ptr, Ordering::Relaxed);
        self.top.store(top + 1, Ordering::Release);
        slot
    }

    pub(crate) fn top(&self) -> usize {
        self.top.load(Ordering::Acquire)
    }

    /// True if `slot` is one of this stack's slots in use (a handle made by a scope of this
    /// mutator that is still open).
    #[inline]
    pub(crate) fn owns(&self, slot: &ColoredSlot) -> bool {
        let base = self.map.as_ptr() as usize;
        let addr = slot as *const ColoredSlot as usize;
        addr >= base && addr < base + self.top() * 8
    }

    /// Drop every handle above `base`.
    pub(crate) fn truncate(&self, base: usize) {
        debug_assert!(base <= self.top());
        self.top.store(base, Ordering::Release);
    }

    /// The slots in use when called (for root scanning).
    pub(super) fn live_slots(&self) -> &[ColoredSlot] {
        &self.slots()[..self.top()]
    }
}

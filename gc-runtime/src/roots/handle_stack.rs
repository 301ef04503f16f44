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
    /// A stack of `capacity` slots (at least one). The mapping's size is computed with checked
    /// arithmetic: a capacity whose byte size overflows is an error, never a smaller mapping
    /// treated as `capacity` slots. (`HeapConfig::validate` keeps the capacity in a range
    /// first; this check holds whatever the caller.)
    pub(crate) fn new(capacity: usize) -> std::io::Result<Self> {
        let capacity = capacity.max(1);
        let bytes = capacity
            .checked_mul(std::mem::size_of::<ColoredSlot>())
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "a handle stack of {capacity} slots is larger than the address space: \
                         lower HeapConfig::handle_capacity"
                    ),
                )
            })?;
        let map = memmap2::MmapOptions::new().len(bytes).map_anon()?;
        debug_assert_eq!(map.len(), bytes);
        Ok(HandleStack {
            map,
            capacity,
            top: AtomicUsize::new(0),
        })
    }

    fn slots(&self) -> &[ColoredSlot] {
        // SAFETY: the mapping is `capacity * 8` bytes (checked in `new`), page aligned (so 8-byte aligned), zero
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A capacity whose byte size wraps is refused, not mapped short.
    #[test]
    fn a_capacity_whose_size_overflows_is_an_error() {
        for capacity in [usize::MAX, (usize::MAX >> 3) + 2, 1 << 61] {
            let e = HandleStack::new(capacity).err().expect("must be refused");
            assert_eq!(
                e.kind(),
                std::io::ErrorKind::InvalidInput,
                "{capacity}: {e}"
            );
            assert!(e.to_string().contains("handle_capacity"), "{e}");
        }
    }

    /// Every slot of the capacity is usable, and one more push is refused by the overflow check.
    #[test]
    fn every_slot_of_the_capacity_is_mapped() {
        let s = HandleStack::new(1000).unwrap();
        for _ in 0..1000 {
            s.push(ColoredPtr::NULL);
        }
        assert_eq!(s.top(), 1000);
        let over = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            s.push(ColoredPtr::NULL);
        }));
        assert!(over.is_err());
    }
}

//! Registered root regions: arrays of reference slots owned by the embedder (an interpreter's
//! value stack) that the collector scans precisely in every pause, like a handle stack whose
//! slots the embedder indexes directly. Unused slots should hold null (set them when popping);
//! a stale non-null slot only keeps its object alive longer.
//!
//! An interpreter's dispatch loop reads and writes its region on nearly every instruction, so
//! besides the per-call accessors ([`RootRegion::get`], [`RootRegion::set`]), which check the
//! scope's heap each time, a region can be opened for one safepoint-free stretch as a
//! [`RegionView`]: the heap is checked once, and the view's accessors are the bare barrier
//! load and store.

use super::mutator::Mutator;
use super::scope::{Local, ObjRef, Scope};
use crate::heap::HeapInner;
use crate::roots::RegionSlots;
use gc_core::{ColoredPtr, ColoredSlot};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A root region of fixed capacity. `Send + Sync`; accessed through a [`Scope`] of its heap.
pub struct RootRegion {
    heap: Arc<HeapInner>,
    inner: Arc<RegionSlots>,
}

impl RootRegion {
    pub(super) fn new(heap: &Arc<HeapInner>, capacity: usize) -> Self {
        RootRegion {
            heap: heap.clone(),
            inner: heap.roots().add_region(capacity),
        }
    }

    /// The region opened for the stretch `'a` in which `s` is borrowed (no safepoint can
    /// happen in it), as an array of `N` slots: indices are checked against the constant `N`,
    /// which the compiler can fold with the embedder's own checks.
    ///
    /// # Panics
    /// If `s` is a scope of another heap, or the region does not have exactly `N` slots.
    #[inline]
    pub fn view<'a, const N: usize>(&'a self, s: &'a Scope<'_>) -> RegionView<'a, N> {
        self.check(s);
        let slots: &'a [ColoredSlot; N] = match (*self.inner.slots).try_into() {
            Ok(slots) => slots,
            Err(_) => panic!(
                "RootRegion::view::<{N}> of a region of {} slots",
                self.capacity()
            ),
        };
        let m = s.mutator();
        RegionView {
            slots,
            m,
            bad_mask: m.bad_mask.get(),
        }
    }

    /// Number of slots.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.inner.slots.len()
    }

    #[inline]
    fn check(&self, s: &Scope<'_>) {
        if !Arc::ptr_eq(&self.heap, &s.mutator().heap) {
            super::scope::foreign("RootRegion (used with a scope of another heap)");
        }
    }

    /// The object in slot `i` (through the load barrier), or `None` for null.
    #[inline]
    pub fn get<'a>(&self, s: &'a Scope<'_>, i: usize) -> Option<ObjRef<'a>> {
        self.check(s);
        let p = s.mutator().load_slot(&self.inner.slots[i]);
        ObjRef::from_ptr(p, s.mutator())
    }

    /// Store an object (or null) into slot `i`.
    ///
    /// # Panics
    /// If `v` is an object of another heap, `s` a scope of another heap, or `i` out of range.
    #[inline]
    pub fn set(&self, s: &Scope<'_>, i: usize, v: Option<ObjRef<'_>>) {
        self.check(s);
        let p = v.map_or(ColoredPtr::NULL, |o| {
            o.ptr_for(&self.heap, "RootRegion::set")
        });
        self.inner.slots[i].store(p, Ordering::Release);
    }

    /// Store the object of a local handle (or null) into slot `i`.
    pub fn set_local(&self, s: &Scope<'_>, i: usize, v: Option<Local<'_>>) {
        let o = v.map(|l| s.get(l));
        self.set(s, i, o);
    }

    /// Null every slot from `from` on.
    pub fn clear_from(&self, from: usize) {
        for slot in &self.inner.slots[from.min(self.capacity())..] {
            slot.store(ColoredPtr::NULL, Ordering::Release);
        }
    }

    /// True if slot `i` holds null (no barrier needed).
    pub fn is_null(&self, i: usize) -> bool {
        self.inner.slots[i].load(Ordering::Acquire).is_null()
    }
}

/// A [`RootRegion`] of `N` slots opened with [`RootRegion::view`] for one safepoint-free
/// stretch: the region's heap was checked once, and the mutator's bad mask is read once, since
/// only a safepoint or leaving the blocked state changes it, and neither can happen while the
/// scope is borrowed. Every load still goes through the load barrier.
#[derive(Clone, Copy)]
pub struct RegionView<'a, const N: usize> {
    slots: &'a [ColoredSlot; N],
    m: &'a Mutator,
    bad_mask: u64,
}

impl<'a, const N: usize> RegionView<'a, N> {
    /// The object in slot `i` (through the load barrier), or `None` for null.
    ///
    /// # Panics
    /// If `i` is out of range.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<ObjRef<'a>> {
        let p = self.m.load_slot_masked(&self.slots[i], self.bad_mask);
        ObjRef::from_ptr(p, self.m)
    }

    /// Store an object (or null) into slot `i`.
    ///
    /// # Panics
    /// If `v` is an object of another heap or `i` is out of range.
    #[inline(always)]
    pub fn set(&self, i: usize, v: Option<ObjRef<'_>>) {
        let p = v.map_or(ColoredPtr::NULL, |o| o.ptr_of(self.m, "RegionView::set"));
        self.slots[i].store(p, Ordering::Release);
    }

    /// True if slot `i` holds null (no barrier needed to test that).
    #[inline(always)]
    pub fn is_null(&self, i: usize) -> bool {
        self.slots[i].load(Ordering::Acquire).is_null()
    }
}

impl Drop for RootRegion {
    fn drop(&mut self) {
        self.heap.roots().remove_region(&self.inner);
    }
}

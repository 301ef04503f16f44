//! A map from heap offsets to shared values, one entry per 2 MiB granule of a reservation
//! (ZGC's `ZGranuleMap`): the page table maps each granule to its page, the forwarding index
//! to its page's relocation-set entry.
//!
//! A value spans the granules of its range. Readers look entries up lock-free inside a
//! `crossbeam-epoch` guard; the map holds one `Arc` reference per entered value, and removing
//! a value defers dropping that reference until no guard that could have seen it is still
//! pinned, so a lookup never touches a freed value.

use crate::word::Offset;
use crate::GRANULE_SIZE;
use crossbeam_epoch::Guard;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

/// Granule → `Arc<T>`, over `[start, start + size)` of the offset space.
pub struct GranuleMap<T: Send + Sync + 'static> {
    start: Offset,
    entries: Box<[AtomicPtr<T>]>,
}

/// A raw `Arc` pointer moved into a deferred drop.
struct SendPtr<T>(*const T);
// SAFETY: the pointer is an `Arc<T>` reference the map owned, and `T: Send + Sync`, so the
// reference may be dropped on whichever thread runs the deferred function.
unsafe impl<T: Send + Sync> Send for SendPtr<T> {}

impl<T: Send + Sync + 'static> GranuleMap<T> {
    /// An empty map covering `[start, start + size)`.
    pub fn new(start: Offset, size: u64) -> Self {
        let n = (size / GRANULE_SIZE) as usize;
        GranuleMap {
            start,
            entries: (0..n)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
        }
    }

    #[inline]
    fn index(&self, offset: Offset) -> Option<usize> {
        let i = (offset.raw().checked_sub(self.start.raw())? / GRANULE_SIZE) as usize;
        (i < self.entries.len()).then_some(i)
    }

    /// The granule indices of `[start, start + size)`; panics outside the map.
    fn range(&self, start: Offset, size: u64) -> std::ops::Range<usize> {
        let first = self.index(start).expect("range inside the map");
        let n = (size / GRANULE_SIZE) as usize;
        assert!(first + n <= self.entries.len(), "range inside the map");
        first..first + n
    }

    /// Enter `value` for the granules of `[start, start + size)`, which must be empty; the
    /// map keeps one reference until [`Self::remove`].
    pub fn insert(&self, start: Offset, size: u64, value: &Arc<T>) {
        let raw = Arc::into_raw(value.clone()) as *mut T;
        for i in self.range(start, size) {
            let old = self.entries[i].swap(raw, Ordering::AcqRel);
            debug_assert!(old.is_null(), "granule map entry already taken");
        }
    }

    /// Remove `value` from the granules of `[start, start + size)`, where it was entered; its
    /// reference is dropped once no reader can still see it.
    pub fn remove(&self, start: Offset, size: u64, value: &T) {
        let mut raw = std::ptr::null_mut();
        for i in self.range(start, size) {
            raw = self.entries[i].swap(std::ptr::null_mut(), Ordering::AcqRel);
            debug_assert!(std::ptr::eq(raw, value), "granule map entry does not match");
        }
        if raw.is_null() {
            return;
        }
        let p = SendPtr(raw as *const T);
        let guard = crossbeam_epoch::pin();
        // SAFETY: the pointer came from `Arc::into_raw` in `insert` and is no longer reachable
        // from the map; readers that loaded it hold a guard pinned before this unlink, and the
        // closure runs only after all of them are unpinned.
        unsafe {
            guard.defer_unchecked(move || {
                let p = p;
                drop(Arc::from_raw(p.0));
            });
        }
    }

    /// The value entered for `offset`, valid while `guard` is pinned.
    #[inline]
    pub fn get<'g>(&self, offset: Offset, _guard: &'g Guard) -> Option<&'g T> {
        let p = self.entries[self.index(offset)?].load(Ordering::Acquire);
        // SAFETY: a non-null entry is a live `Arc<T>` owned by the map; removal defers its
        // release until every guard pinned before the removal (like `_guard`) is dropped.
        unsafe { p.as_ref() }
    }

    /// The value entered for `offset`, as a new strong reference.
    pub fn get_arc(&self, offset: Offset) -> Option<Arc<T>> {
        let _guard = crossbeam_epoch::pin();
        let p = self.entries[self.index(offset)?].load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` is a live Arc pointer while `_guard` is pinned (see `get`); a strong count
        // is added before our own Arc is made from it.
        unsafe {
            Arc::increment_strong_count(p);
            Some(Arc::from_raw(p))
        }
    }
}

impl<T: Send + Sync + 'static> Drop for GranuleMap<T> {
    fn drop(&mut self) {
        // Drop the map's references of values still entered (each value once: a value's
        // granules are consecutive).
        let mut last: *mut T = std::ptr::null_mut();
        for e in self.entries.iter() {
            let p = e.swap(std::ptr::null_mut(), Ordering::AcqRel);
            if !p.is_null() && p != last {
                // SAFETY: `p` came from `Arc::into_raw`; consecutive entries of one value are
                // skipped, so each reference is released exactly once; `&mut self` means no
                // reader is active.
                unsafe { drop(Arc::from_raw(p)) };
                last = p;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_span_their_granules_and_are_released_once() {
        let g = GRANULE_SIZE;
        let o = Offset::from_raw;
        let map: GranuleMap<u64> = GranuleMap::new(o(4 * g), 8 * g);
        let a = Arc::new(1u64);
        let b = Arc::new(2u64);
        map.insert(o(4 * g), 2 * g, &a);
        map.insert(o(6 * g), g, &b);
        let guard = crossbeam_epoch::pin();
        assert_eq!(map.get(o(4 * g + 5), &guard), Some(&1));
        assert_eq!(map.get(o(5 * g + 5), &guard), Some(&1));
        assert_eq!(map.get(o(6 * g), &guard), Some(&2));
        assert_eq!(map.get(o(7 * g), &guard), None);
        assert_eq!(map.get(o(3 * g), &guard), None, "below the map");
        assert_eq!(map.get(o(12 * g), &guard), None, "above the map");
        drop(guard);
        assert_eq!(Arc::strong_count(&a), 2);
        map.remove(o(6 * g), g, &b);
        assert!(map.get_arc(o(6 * g)).is_none());
        drop(map);
        assert_eq!(
            Arc::strong_count(&a),
            1,
            "the map's reference of a was dropped"
        );
    }
}

//! A map from heap offsets to shared values, one entry per 2 MiB granule of a reservation
//! (ZGC's `ZGranuleMap`): the page table maps each granule to its page, the forwarding index
//! to its page's relocation-set entry.
//!
//! A value spans the granules of its range. Readers look entries up lock-free inside a pin
//! of the heap's epoch domain ([`crate::heap_epoch`]); each granule's entry holds its own
//! `Arc` reference, and an entry replaced or removed defers dropping its reference until no
//! guard that could have seen it is still pinned, so a lookup never touches a freed value.
//! Because no entry shares its reference, no call can free a value another entry still names
//! — whatever ranges it is given (a value entered over a taken granule, or removed from part
//! of its range, costs only that granule's reference): the map's safety rests on no caller
//! contract.

use crate::heap_epoch::{self, HeapGuard};
use crate::word::Offset;
use crate::GRANULE_SIZE;
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
        let n = usize::try_from(size / GRANULE_SIZE).unwrap_or(usize::MAX);
        let end = first.checked_add(n).filter(|&e| e <= self.entries.len());
        first..end.expect("range inside the map")
    }

    /// Enter `value` for the granules of `[start, start + size)`, which should be empty (a
    /// value entered before is replaced); each granule keeps one reference until
    /// [`Self::remove`]. Panics if the range is not inside the map.
    pub fn insert(&self, start: Offset, size: u64, value: &Arc<T>) {
        for i in self.range(start, size) {
            let raw = Arc::into_raw(value.clone()) as *mut T;
            let old = self.entries[i].swap(raw, Ordering::AcqRel);
            debug_assert!(old.is_null(), "granule map entry already taken");
            Self::release(old);
        }
    }

    /// Remove `value` from the granules of `[start, start + size)`, where it was entered;
    /// each granule's reference is dropped once no reader can still see it. (A granule that
    /// holds another value is emptied all the same.) Panics if the range is not inside the
    /// map.
    pub fn remove(&self, start: Offset, size: u64, value: &T) {
        for i in self.range(start, size) {
            let old = self.entries[i].swap(std::ptr::null_mut(), Ordering::AcqRel);
            debug_assert!(std::ptr::eq(old, value), "granule map entry does not match");
            Self::release(old);
        }
    }

    /// Drop the reference `raw` (one entry's, just unlinked; null: none) once no reader that
    /// could have loaded it is still pinned.
    fn release(raw: *mut T) {
        if raw.is_null() {
            return;
        }
        let p = SendPtr(raw as *const T);
        let guard = heap_epoch::pin();
        // SAFETY: the pointer came from `Arc::into_raw` in `insert`, is the reference of the
        // one entry it was just swapped out of (no other entry shares it), and is no longer
        // reachable from the map; readers that loaded it hold a `HeapGuard` (the only way to
        // read the map) of the same domain as `guard`, pinned before this unlink, and the
        // closure runs only after all of them are unpinned.
        unsafe {
            guard.guard().defer_unchecked(move || {
                let p = p;
                drop(Arc::from_raw(p.0));
            });
        }
    }

    /// The value entered for `offset`, valid while `guard` is pinned.
    #[inline]
    pub fn get<'g>(&self, offset: Offset, _guard: &'g HeapGuard) -> Option<&'g T> {
        let p = self.entries[self.index(offset)?].load(Ordering::Acquire);
        // SAFETY: a non-null entry is a live `Arc<T>` owned by the map; removal defers its
        // release, in the heap's epoch domain, until every guard of that domain pinned before
        // the removal (like `_guard`) is dropped.
        unsafe { p.as_ref() }
    }

    /// True if no value is entered for `offset` (or it lies outside the map): a [`Self::get`]
    /// made with the same load would return `None`. Needs no guard, as nothing is read
    /// through the entry; a caller that finds the granule vacant skips pinning one.
    #[inline]
    pub fn is_vacant(&self, offset: Offset) -> bool {
        self.index(offset)
            .is_none_or(|i| self.entries[i].load(Ordering::Acquire).is_null())
    }

    /// The value entered for `offset`, as a new strong reference.
    pub fn get_arc(&self, offset: Offset) -> Option<Arc<T>> {
        let _guard = heap_epoch::pin();
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
        // Drop the references of the entries still taken, one per entry.
        for e in self.entries.iter() {
            let p = e.swap(std::ptr::null_mut(), Ordering::AcqRel);
            if !p.is_null() {
                // SAFETY: `p` came from `Arc::into_raw` and is this entry's own reference,
                // released exactly once here; `&mut self` means no reader is active.
                unsafe { drop(Arc::from_raw(p)) };
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
        let guard = heap_epoch::pin();
        assert_eq!(map.get(o(4 * g + 5), &guard), Some(&1));
        assert_eq!(map.get(o(5 * g + 5), &guard), Some(&1));
        assert_eq!(map.get(o(6 * g), &guard), Some(&2));
        assert_eq!(map.get(o(7 * g), &guard), None);
        assert_eq!(map.get(o(3 * g), &guard), None, "below the map");
        assert_eq!(map.get(o(12 * g), &guard), None, "above the map");
        drop(guard);
        // Vacant exactly where `get` finds nothing.
        for at in [3 * g, 4 * g + 5, 5 * g + 5, 6 * g, 7 * g, 12 * g] {
            let guard = heap_epoch::pin();
            assert_eq!(
                map.is_vacant(o(at)),
                map.get(o(at), &guard).is_none(),
                "{at:#x}"
            );
        }
        assert!(!map.is_vacant(o(6 * g)) && map.is_vacant(o(7 * g)));
        assert_eq!(
            Arc::strong_count(&a),
            1 + 2,
            "one reference per granule of a"
        );
        map.remove(o(6 * g), g, &b);
        assert!(map.get_arc(o(6 * g)).is_none());
        assert!(map.is_vacant(o(6 * g)), "removed");
        drop(map);
        assert_eq!(
            Arc::strong_count(&a),
            1,
            "the map's references of a were dropped"
        );
    }
}

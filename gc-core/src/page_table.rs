//! The page table: from a heap offset to the page that holds it (ZGC's `ZPageTable`), one
//! entry per 2 MiB granule of the reservation.
//!
//! Readers (a barrier slow path, a GC worker) look pages up lock-free inside a
//! `crossbeam-epoch` guard; removing a page defers dropping the table's reference until no
//! guard that could have seen it is still pinned, so a lookup never touches freed metadata.

use crate::page::Page;
use crate::GRANULE_SIZE;
use crossbeam_epoch::Guard;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

/// Offset → page.
pub struct PageTable {
    start: u64,
    entries: Box<[AtomicPtr<Page>]>,
}

struct SendPtr(*const Page);
// SAFETY: the pointer is an `Arc<Page>` reference the table owns; `Page` is Send + Sync.
unsafe impl Send for SendPtr {}

impl PageTable {
    /// A table covering `[start, start + size)`.
    pub fn new(start: u64, size: u64) -> Self {
        let n = (size / GRANULE_SIZE) as usize;
        PageTable {
            start,
            entries: (0..n)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
        }
    }

    #[inline]
    fn index(&self, offset: u64) -> Option<usize> {
        let i = (offset.checked_sub(self.start)? / GRANULE_SIZE) as usize;
        (i < self.entries.len()).then_some(i)
    }

    /// Enter `page` for all its granules; the table keeps a reference until [`Self::remove`].
    pub fn insert(&self, page: &Arc<Page>) {
        let raw = Arc::into_raw(page.clone()) as *mut Page;
        let first = self
            .index(page.start())
            .expect("page inside the reservation");
        for i in 0..(page.size() / GRANULE_SIZE) as usize {
            let old = self.entries[first + i].swap(raw, Ordering::AcqRel);
            debug_assert!(old.is_null(), "page table entry already taken");
        }
    }

    /// Remove `page`; its reference is dropped once no reader can still see it.
    pub fn remove(&self, page: &Page) {
        let first = self
            .index(page.start())
            .expect("page inside the reservation");
        let mut raw = std::ptr::null_mut();
        for i in 0..(page.size() / GRANULE_SIZE) as usize {
            raw = self.entries[first + i].swap(std::ptr::null_mut(), Ordering::AcqRel);
            debug_assert!(std::ptr::eq(raw, page), "page table entry does not match");
        }
        if raw.is_null() {
            return;
        }
        let p = SendPtr(raw);
        let guard = crossbeam_epoch::pin();
        let guard = &guard;
        // SAFETY: the pointer came from `Arc::into_raw` in `insert` and is no longer reachable
        // from the table; readers that loaded it hold a guard pinned before this unlink, and the
        // closure runs only after all of them are unpinned.
        unsafe {
            guard.defer_unchecked(move || {
                let p = p;
                drop(Arc::from_raw(p.0));
            });
        }
    }

    /// The page holding `offset`, valid while `guard` is pinned.
    #[inline]
    pub fn get<'g>(&self, offset: u64, _guard: &'g Guard) -> Option<&'g Page> {
        let p = self.entries[self.index(offset)?].load(Ordering::Acquire);
        // SAFETY: a non-null entry is a live `Arc<Page>` owned by the table; removal defers its
        // release until every guard pinned before the removal (like `_guard`) is dropped.
        unsafe { p.as_ref() }
    }

    /// The page holding `offset` as a new strong reference.
    pub fn get_arc(&self, offset: u64) -> Option<Arc<Page>> {
        let _guard = crossbeam_epoch::pin();
        let p = self.entries[self.index(offset)?].load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` is a live Arc pointer while `guard` is pinned (see `get`); we add a
        // strong count before materializing our own Arc.
        unsafe {
            Arc::increment_strong_count(p);
            Some(Arc::from_raw(p))
        }
    }
}

impl Drop for PageTable {
    fn drop(&mut self) {
        // Drop the table's references of pages still entered (each page once).
        let mut last: *mut Page = std::ptr::null_mut();
        for e in self.entries.iter() {
            let p = e.swap(std::ptr::null_mut(), Ordering::AcqRel);
            if !p.is_null() && p != last {
                // SAFETY: `p` came from `Arc::into_raw`; consecutive entries of one page are
                // skipped, so each page's reference is released exactly once; `&mut self`
                // means no reader is active.
                unsafe { drop(Arc::from_raw(p)) };
                last = p;
            }
        }
    }
}

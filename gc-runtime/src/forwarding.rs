//! A relocation-set entry (ZGC's `ZForwarding`): one from-page, its forwarding table, and the
//! reference count that keeps the page's memory alive while relocators copy out of it.
//!
//! Protocol (as ZGC's `retain_page`/`release_page`): the count starts at 1 (the GC worker's
//! own reference). A mutator that must relocate an object retains the page first (fails once
//! the page is released: then every live object already has a forwarding entry). When the GC
//! worker has relocated every live object it releases its reference by negating the count
//! and waits for the remaining mutators to drop theirs; then the page can be freed.
//!
//! When no target memory is left, the worker instead claims the page for *in-place*
//! compaction (only while no mutator holds a reference): it slides the page's remaining live
//! objects down to its start, entering each move in the table, while mutators that need an
//! object of the page wait until it is done. The compacted page is kept and becomes the
//! worker's target for the next pages, so a full heap still makes progress (ZGC does the same
//! since JDK 16).

use crate::sync::{Atomic, Primitives, Std};
use gc_core::{ForwardingTable, Page};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Reference count while the GC worker compacts the page in place (mutators cannot retain).
const IN_PLACE: i64 = i64::MIN / 2;

/// The retain/release reference count of a from-page (ZGC's `ZForwarding::_ref_count`),
/// generic over [`Primitives`] so the loom models check this very code.
///
/// Positive: the GC worker's reference (1) plus the mutators copying out of the page. After
/// the worker's [`Self::release_and_wait`] it is `-(copiers still running)`, counting up to 0;
/// from then on [`Self::retain`] fails.
pub struct PageRefCount<P: Primitives = Std> {
    count: P::AtomicI64,
}

impl<P: Primitives> Default for PageRefCount<P> {
    fn default() -> Self {
        PageRefCount {
            count: P::AtomicI64::new(1),
        }
    }
}

impl<P: Primitives> PageRefCount<P> {
    /// Keep the page's memory alive for a copy; false once the page has been released.
    pub fn retain(&self) -> bool {
        let mut c = self.count.load(Ordering::Acquire);
        loop {
            if c <= 0 {
                return false;
            }
            match self
                .count
                .compare_exchange_weak(c, c + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(v) => c = v,
            }
        }
    }

    /// Drop a reference taken with [`Self::retain`].
    pub fn release(&self) {
        let mut c = self.count.load(Ordering::Acquire);
        loop {
            // Positive: the worker has not released yet. Negative: it waits for us to reach 0.
            let new = if c > 0 { c - 1 } else { c + 1 };
            match self
                .count
                .compare_exchange_weak(c, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return,
                Err(v) => c = v,
            }
        }
    }

    /// The GC worker's release: afterwards nobody can retain the page; waits until the
    /// mutators that still copy out of it are done. When it returns, every copy out of the
    /// page happened before (the page may be freed).
    pub fn release_and_wait(&self) {
        let mut c = self.count.load(Ordering::Acquire);
        if c == 0 {
            // Compacted in place: `finish_in_place` released it already.
            return;
        }
        loop {
            debug_assert!(c >= 1, "worker reference already released");
            match self
                .count
                .compare_exchange_weak(c, -(c - 1), Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(v) => c = v,
            }
        }
        while self.count.load(Ordering::Acquire) != 0 {
            P::backoff();
        }
    }

    /// The GC worker claims the page for in-place compaction: succeeds only while it holds
    /// the sole reference (no mutator copies out); then [`Self::retain`] fails until
    /// [`Self::finish_in_place`].
    pub fn claim_in_place(&self) -> bool {
        loop {
            match self
                .count
                .compare_exchange_weak(1, IN_PLACE, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                // A weak CAS may fail spuriously: retry while the count still says 1.
                Err(1) => continue,
                Err(_) => return false,
            }
        }
    }

    /// End in-place compaction: the page counts as released.
    pub fn finish_in_place(&self) {
        self.count.store(0, Ordering::Release);
    }

    /// True while the page is being compacted in place.
    pub fn is_in_place(&self) -> bool {
        self.count.load(Ordering::Acquire) == IN_PLACE
    }
}

/// One page of the relocation set.
pub(crate) struct Forwarding {
    pub(crate) page: Arc<Page>,
    pub(crate) table: ForwardingTable,
    refcount: PageRefCount,
    /// Set when some object was forwarded to itself because no target memory was left: the
    /// page must then be kept (it still holds that object).
    pinned: AtomicBool,
}

impl Forwarding {
    pub(crate) fn new(page: Arc<Page>, live_objects: u64) -> Self {
        Forwarding {
            page,
            table: ForwardingTable::new(live_objects),
            refcount: PageRefCount::default(),
            pinned: AtomicBool::new(false),
        }
    }

    /// Keep the page's memory alive for a copy; false once the page has been released.
    pub(crate) fn retain_page(&self) -> bool {
        self.refcount.retain()
    }

    /// Drop a reference taken with [`Self::retain_page`].
    pub(crate) fn release_page(&self) {
        self.refcount.release()
    }

    /// The GC worker's release: afterwards nobody can retain the page; waits until the
    /// mutators that still copy out of it are done.
    pub(crate) fn release_page_and_wait(&self) {
        self.refcount.release_and_wait()
    }

    /// Claim the page for in-place compaction: succeeds only while no mutator copies out of
    /// it; afterwards no mutator can retain it (they wait for [`Self::finish_in_place`] and
    /// then read the table).
    pub(crate) fn claim_in_place(&self) -> bool {
        self.refcount.claim_in_place()
    }

    /// In-place compaction is over: every live object of the page has its entry.
    pub(crate) fn finish_in_place(&self) {
        self.pin();
        self.refcount.finish_in_place();
    }

    /// True while the worker compacts the page in place.
    pub(crate) fn is_in_place(&self) -> bool {
        self.refcount.is_in_place()
    }

    pub(crate) fn pin(&self) {
        self.pinned.store(true, Ordering::Release);
    }

    pub(crate) fn is_pinned(&self) -> bool {
        self.pinned.load(Ordering::Acquire)
    }
}

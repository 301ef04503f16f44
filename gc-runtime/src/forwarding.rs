//! A relocation-set entry (ZGC's `ZForwarding`): one from-page, its forwarding table, and the
//! reference count that keeps the page's memory alive while relocators copy out of it.
//!
//! Protocol (as ZGC's `retain_page`/`release_page`): the count starts at 1 (the GC worker's
//! own reference). A mutator that must relocate an object retains the page first (fails once
//! the page is released: then every live object already has a forwarding entry). When the GC
//! worker has relocated every live object it releases its reference by negating the count
//! and waits for the remaining mutators to drop theirs; then the page can be freed.

use gc_core::{ForwardingTable, Page};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// One page of the relocation set.
pub(crate) struct Forwarding {
    pub(crate) page: Arc<Page>,
    pub(crate) table: ForwardingTable,
    refcount: AtomicI64,
    /// Set when some object was forwarded to itself because no target memory was left: the
    /// page must then be kept (it still holds that object).
    pinned: AtomicBool,
}

impl Forwarding {
    pub(crate) fn new(page: Arc<Page>, live_objects: u64) -> Self {
        Forwarding {
            page,
            table: ForwardingTable::new(live_objects),
            refcount: AtomicI64::new(1),
            pinned: AtomicBool::new(false),
        }
    }

    /// Keep the page's memory alive for a copy; false once the page has been released.
    pub(crate) fn retain_page(&self) -> bool {
        let mut c = self.refcount.load(Ordering::Acquire);
        loop {
            if c <= 0 {
                return false;
            }
            match self
                .refcount
                .compare_exchange_weak(c, c + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(v) => c = v,
            }
        }
    }

    /// Drop a reference taken with [`Self::retain_page`].
    pub(crate) fn release_page(&self) {
        let mut c = self.refcount.load(Ordering::Acquire);
        loop {
            // Positive: the worker has not released yet. Negative: it waits for us to reach 0.
            let new = if c > 0 { c - 1 } else { c + 1 };
            match self
                .refcount
                .compare_exchange_weak(c, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return,
                Err(v) => c = v,
            }
        }
    }

    /// The GC worker's release: afterwards nobody can retain the page; waits until the
    /// mutators that still copy out of it are done.
    pub(crate) fn release_page_and_wait(&self) {
        let mut c = self.refcount.load(Ordering::Acquire);
        loop {
            debug_assert!(c >= 1, "worker reference already released");
            match self.refcount.compare_exchange_weak(
                c,
                -(c - 1),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(v) => c = v,
            }
        }
        // Mutator copies are a few microseconds: sleep briefly rather than spin.
        while self.refcount.load(Ordering::Acquire) != 0 {
            std::thread::sleep(Duration::from_micros(20));
        }
    }

    pub(crate) fn pin(&self) {
        self.pinned.store(true, Ordering::Release);
    }

    pub(crate) fn is_pinned(&self) -> bool {
        self.pinned.load(Ordering::Acquire)
    }
}

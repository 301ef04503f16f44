//! The mutators' shared allocation state (ZGC's `ZObjectAllocator`): the medium page all
//! mutators bump-allocate into with a CAS, and the count of bytes allocated. Small objects go
//! to each mutator's private page (kept in the `Mutator`), large ones to a page of their own.

use gc_core::{Offset, Page};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Default)]
pub(crate) struct ObjectAllocator {
    /// The medium page mutators share.
    shared_medium: Mutex<Option<Arc<Page>>>,
    allocated: AtomicU64,
}

impl ObjectAllocator {
    /// `size` bytes on the shared medium page, if it was born with `seqnum` (a page from
    /// before the last Pause Mark Start is retired) and has room.
    pub(crate) fn alloc_medium(&self, size: u64, seqnum: u64) -> Option<Offset> {
        let shared = self.shared_medium.lock();
        shared
            .as_ref()
            .filter(|p| p.seqnum() == seqnum)
            .and_then(|p| p.alloc_shared(size))
    }

    /// Make `page` the shared medium page. If another thread installed one meanwhile, that
    /// page keeps only what was allocated on it so far.
    pub(crate) fn install_medium(&self, page: Arc<Page>) {
        *self.shared_medium.lock() = Some(page);
    }

    /// Count `size` allocated bytes.
    #[inline]
    pub(crate) fn count(&self, size: u64) {
        self.allocated.fetch_add(size, Ordering::Relaxed);
    }

    /// Bytes mutators allocated since the heap was created.
    pub(crate) fn allocated(&self) -> u64 {
        self.allocated.load(Ordering::Relaxed)
    }
}

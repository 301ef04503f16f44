//! The pages in use and the limits on taking new ones (the runtime's side of ZGC's
//! `ZPageAllocator`: gc-core's [`PageAllocator`] maps and commits memory; this registry knows
//! which pages the collector must scan and select from, and what share of the heap mutators may
//! take).
//!
//! Mutators may not use the *relocation reserve*: a few pages' worth of the heap kept for
//! relocation targets, so evacuation can make progress on a full heap (ZGC before JDK 16 kept
//! such a reserve too; when even the reserve runs out, relocation compacts pages in place).
//! A mutator's page is registered only once the mutator is sure no Pause Mark Start ran while
//! it was taking it (see `mutator`), so it comes out of [`PageRegistry::new_mutator_page`]
//! unregistered; a relocation target is registered at once.
//!
//! With the generational bookkeeping on, registering a page gives it its age (a mutator's
//! page eden, a relocation target old) and freeing it forgets it (see `generations`).

use super::generations::Generations;
use gc_core::{AllocError, MemoryUsage, Offset, Page, PageAge, PageAllocator, PageKind, PageSizes};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

pub(crate) struct PageRegistry {
    mem: PageAllocator,
    /// Every page in use, by start offset.
    pages: Mutex<HashMap<Offset, Arc<Page>>>,
    relocation_reserve: u64,
    generations: Option<Arc<Generations>>,
}

impl PageRegistry {
    /// The registry over `mem`, keeping `relocation_reserve` bytes from mutators, and the
    /// ages of its pages in `generations` if given.
    pub(crate) fn new(
        mem: PageAllocator,
        relocation_reserve: u64,
        generations: Option<Arc<Generations>>,
    ) -> Self {
        PageRegistry {
            mem,
            pages: Mutex::new(HashMap::new()),
            relocation_reserve,
            generations,
        }
    }

    /// The memory underneath (page table, sizes, layout).
    pub(crate) fn memory(&self) -> &PageAllocator {
        &self.mem
    }

    pub(crate) fn sizes(&self) -> &PageSizes {
        self.mem.sizes()
    }

    pub(crate) fn usage(&self) -> MemoryUsage {
        self.mem.usage()
    }

    /// The heap's maximum size.
    pub(crate) fn capacity(&self) -> u64 {
        self.mem.capacity()
    }

    /// Bytes in pages in use.
    pub(crate) fn used(&self) -> u64 {
        self.mem.used()
    }

    /// What mutators may fill: the heap without the relocation reserve.
    fn mutator_limit(&self) -> u64 {
        self.mem.capacity().saturating_sub(self.relocation_reserve)
    }

    /// Bytes mutators may still take before the heap is full for them (the mutator limit
    /// less the pages in use).
    pub(crate) fn mutator_free(&self) -> u64 {
        self.mutator_limit().saturating_sub(self.mem.used())
    }

    /// A page for a mutator, born with sequence number `seqnum`, within the mutator limit
    /// and not yet registered: [`Self::register`] it, or give it back with
    /// [`Self::free_unregistered`].
    pub(crate) fn new_mutator_page(
        &self,
        kind: PageKind,
        size: u64,
        seqnum: u64,
    ) -> Result<Arc<Page>, AllocError> {
        self.mem
            .alloc_page_within(kind, size, seqnum, self.mutator_limit())
    }

    /// Register a mutator's page (eden: its objects are allocated from now on).
    pub(crate) fn register(&self, page: &Arc<Page>) {
        self.register_aged(page, PageAge::Eden);
    }

    fn register_aged(&self, page: &Arc<Page>, age: PageAge) {
        // The age first: a page's objects are handed out only after this returns.
        if let Some(g) = &self.generations {
            g.page_born(page, age);
        }
        self.pages.lock().insert(page.start(), page.clone());
    }

    /// Free a page that was never registered.
    pub(crate) fn free_unregistered(&self, page: &Page) {
        // SAFETY: an unregistered page is a mutator's page that was never published (see
        // the module documentation): no object on it was ever handed out.
        unsafe { self.mem.free_page(page) };
    }

    /// A relocation target page (it may use the relocation reserve), registered, of age
    /// `age`: old, or a minor's survivor age (its copies stay young, see
    /// `relocation_set_selector::select_minor`).
    pub(crate) fn new_relocation_page(
        &self,
        kind: PageKind,
        size: u64,
        seqnum: u64,
        age: PageAge,
    ) -> Result<Arc<Page>, AllocError> {
        debug_assert!(age != PageAge::Eden, "eden pages are mutators' pages");
        let page = self.mem.alloc_page(kind, size, seqnum)?;
        self.register_aged(&page, age);
        Ok(page)
    }

    /// Unregister and free a page (its memory goes to the page cache). Called only for a page
    /// the collector found empty (relocation-set selection) or has evacuated completely and
    /// no relocator reads any more (relocation): gc-core's `PageAllocator::free_page`
    /// contract.
    pub(crate) fn free(&self, page: &Page) {
        self.pages.lock().remove(&page.start());
        if let Some(g) = &self.generations {
            g.page_freed(page);
        }
        // SAFETY: see above: no object on the page is in use by any thread.
        unsafe { self.mem.free_page(page) };
    }

    /// The registered pages now.
    pub(crate) fn snapshot(&self) -> Vec<Arc<Page>> {
        self.pages.lock().values().cloned().collect()
    }

    /// True if `live` bytes of live data leave room for `size` more bytes of mutator pages.
    pub(crate) fn room_after(&self, live: u64, size: u64) -> bool {
        live + size <= self.mutator_limit()
    }
}

//! The page table: from a heap offset to the page that holds it (ZGC's `ZPageTable`), a
//! [`GranuleMap`] with one entry per 2 MiB granule of the reservation. Readers (a barrier slow
//! path, a GC worker) look pages up lock-free inside a pin of the heap's epoch domain; a removed
//! page's table reference is dropped only once no such reader can still see it.

use crate::granule_map::GranuleMap;
use crate::heap_epoch::HeapGuard;
use crate::page::Page;
use crate::word::Offset;
use std::sync::Arc;

/// Offset → page.
pub struct PageTable(GranuleMap<Page>);

impl PageTable {
    /// A table covering `[start, start + size)`.
    pub fn new(start: Offset, size: u64) -> Self {
        PageTable(GranuleMap::new(start, size))
    }

    /// Enter `page` for all its granules; the table keeps a reference until [`Self::remove`].
    pub fn insert(&self, page: &Arc<Page>) {
        self.0.insert(page.start(), page.size(), page)
    }

    /// Remove `page`; its reference is dropped once no reader can still see it.
    pub fn remove(&self, page: &Page) {
        self.0.remove(page.start(), page.size(), page)
    }

    /// The page holding `offset`, valid while `guard` is pinned.
    #[inline]
    pub fn get<'g>(&self, offset: Offset, guard: &'g HeapGuard) -> Option<&'g Page> {
        self.0.get(offset, guard)
    }

    /// The page holding `offset` as a new strong reference.
    pub fn get_arc(&self, offset: Offset) -> Option<Arc<Page>> {
        self.0.get_arc(offset)
    }
}

//! The page cache (ZGC's `ZPageCache`): freed page memory kept mapped and committed, by size,
//! so the next page of that size costs no `mmap` and no page faults. When physical memory is
//! needed for another size, cached memory is flushed (unmapped and returned).

use crate::page::PageMemory;
use std::collections::HashMap;

/// Freed page memory by page size.
#[derive(Default)]
pub struct PageCache {
    by_size: HashMap<u64, Vec<PageMemory>>,
    bytes: u64,
}

impl PageCache {
    /// Cached memory of exactly `size` bytes, most recently freed first (warm in caches).
    pub fn take(&mut self, size: u64) -> Option<PageMemory> {
        let m = self.by_size.get_mut(&size)?.pop()?;
        self.bytes -= m.size;
        Some(m)
    }

    /// Keep `memory` for reuse.
    pub fn put(&mut self, memory: PageMemory) {
        self.bytes += memory.size;
        self.by_size.entry(memory.size).or_default().push(memory);
    }

    /// Take some cached memory to flush, largest sizes first.
    pub fn evict(&mut self) -> Option<PageMemory> {
        let size = *self
            .by_size
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(s, _)| s)
            .max()?;
        let m = self.by_size.get_mut(&size)?.remove(0);
        self.bytes -= m.size;
        Some(m)
    }

    /// Bytes of memory in the cache.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

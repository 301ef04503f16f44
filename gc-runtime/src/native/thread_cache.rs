//! Per-thread caches of free slots (Netty's `PoolThreadCache`, jemalloc's tcache).
//!
//! A released buffer's slot goes to the releasing thread's cache for its pool, if that has
//! room, and the thread's next allocation of the class takes it back without a lock. Small
//! classes get more entries than large ones (about 256 KiB per class, 4..=128 entries);
//! classes above 64 KiB are not cached. The cache also remembers the thread's arena, assigned
//! round-robin on the thread's first allocation from the pool. When the thread exits, its
//! caches go back to their arenas.

use super::arena::Slot;
use super::pool::PoolShared;
use std::cell::RefCell;
use std::sync::{Arc, Weak};

/// Largest class a thread cache keeps.
const MAX_CACHED_SIZE: usize = 64 << 10;
/// Bytes a thread cache keeps per class, at most.
const BYTES_PER_CLASS: usize = 256 << 10;

/// Entries a thread cache keeps for slots of `size` bytes.
pub(crate) fn cache_entries(size: usize) -> usize {
    if size > MAX_CACHED_SIZE {
        0
    } else {
        (BYTES_PER_CLASS / size).clamp(4, 128)
    }
}

/// One thread's cache for one pool.
pub(crate) struct ThreadCache {
    pool_id: u64,
    pool: Weak<PoolShared>,
    /// The thread's arena in this pool.
    pub(crate) arena: usize,
    bins: Vec<Vec<Slot>>,
}

impl ThreadCache {
    /// A cached slot of `class`.
    pub(crate) fn pop(&mut self, class: usize) -> Option<Slot> {
        self.bins[class].pop()
    }

    /// Keep `slot` if its class has fewer than `limit` entries; otherwise hand it back.
    pub(crate) fn push(&mut self, slot: Slot, limit: usize) -> Result<(), Slot> {
        let bin = &mut self.bins[slot.class as usize];
        if bin.len() < limit {
            bin.push(slot);
            Ok(())
        } else {
            Err(slot)
        }
    }

    /// Every cached slot, removed from the cache.
    fn drain(&mut self) -> Vec<Slot> {
        self.bins.iter_mut().flat_map(std::mem::take).collect()
    }
}

impl Drop for ThreadCache {
    fn drop(&mut self) {
        let slots = self.drain();
        // A pool already gone unmapped its chunks: its slots are nothing to give back.
        if let Some(pool) = self.pool.upgrade() {
            for s in slots {
                pool.uncache(s);
            }
        }
    }
}

thread_local! {
    static CACHES: RefCell<Vec<ThreadCache>> = const { RefCell::new(Vec::new()) };
}

/// Run `f` on the calling thread's cache for `pool`, creating it (and assigning the thread
/// an arena) if `create`. `None` when there is no cache and `create` is false, or while the
/// thread's caches are being torn down (thread exit).
pub(crate) fn with_cache<R>(
    pool: &Arc<PoolShared>,
    create: bool,
    f: impl FnOnce(&mut ThreadCache) -> R,
) -> Option<R> {
    CACHES
        .try_with(|caches| {
            let mut caches = caches.try_borrow_mut().ok()?;
            let i = match caches.iter().position(|c| c.pool_id == pool.id) {
                Some(i) => i,
                None if create => {
                    // Caches of pools gone are empty husks: drop them here.
                    caches.retain(|c| c.pool.strong_count() > 0);
                    caches.push(ThreadCache {
                        pool_id: pool.id,
                        pool: Arc::downgrade(pool),
                        arena: pool.next_arena(),
                        bins: vec![Vec::new(); pool.class_count()],
                    });
                    caches.len() - 1
                }
                None => return None,
            };
            Some(f(&mut caches[i]))
        })
        .ok()
        .flatten()
}

/// Give the calling thread's cached slots of `pool` back to their arenas.
pub(crate) fn flush(pool: &Arc<PoolShared>) {
    let slots = with_cache(pool, false, |c| c.drain()).unwrap_or_default();
    for s in slots {
        pool.uncache(s);
    }
}

//! Per-thread caches of free slots (Netty's `PoolThreadCache`, jemalloc's tcache).
//!
//! A released buffer's slot goes to the releasing thread's cache for its pool, if that has
//! room, and the thread's next allocation of the class takes it back without a lock. Small
//! classes get more entries than large ones (about 256 KiB per class, 4..=128 entries);
//! classes above 64 KiB are not cached. The cache also remembers the thread's arena, assigned
//! round-robin on the thread's first allocation from the pool. When the thread exits, its
//! caches go back to their arenas.

use super::arena::Slot;
use super::counters::{sub, Counts, Writer};
use super::shared::PoolShared;
use std::cell::RefCell;
use std::sync::{Arc, Weak};

/// Largest class a thread cache keeps.
const MAX_CACHED_SIZE: usize = 64 << 10;
/// Bytes a thread cache keeps per class, at most.
const BYTES_PER_CLASS: usize = 256 << 10;
/// Buffer ids a thread takes from its pool at a time.
const ID_BLOCK: u64 = 1024;

/// Entries a thread cache keeps for slots of `size` bytes.
pub(super) fn cache_entries(size: usize) -> usize {
    if size > MAX_CACHED_SIZE {
        0
    } else {
        (BYTES_PER_CLASS / size).clamp(4, 128)
    }
}

/// One thread's cache for one pool.
pub(super) struct ThreadCache {
    pool_id: u64,
    pool: Weak<PoolShared>,
    /// The thread's arena in this pool.
    pub(super) arena: usize,
    bins: Vec<Vec<Slot>>,
    /// This thread's counts for the pool (written by this thread only).
    pub(super) counts: Arc<Counts>,
    /// Buffer ids reserved for this thread: `ids.0 .. ids.1`.
    ids: (u64, u64),
}

impl ThreadCache {
    /// A cached slot of `class`.
    pub(super) fn pop(&mut self, class: usize) -> Option<Slot> {
        self.bins[class].pop()
    }

    /// Keep `slot` if its class has fewer than `limit` entries; otherwise hand it back.
    pub(super) fn push(&mut self, slot: Slot, limit: usize) -> Result<(), Slot> {
        let bin = &mut self.bins[slot.class as usize];
        if bin.len() < limit {
            bin.push(slot);
            Ok(())
        } else {
            Err(slot)
        }
    }

    /// A new buffer id.
    pub(super) fn next_id(&mut self, pool: &PoolShared) -> u64 {
        if self.ids.0 == self.ids.1 {
            let start = pool
                .next_buffer
                .fetch_add(ID_BLOCK, std::sync::atomic::Ordering::Relaxed);
            self.ids = (start, start + ID_BLOCK);
        }
        self.ids.0 += 1;
        self.ids.0 - 1
    }

    /// Give every cached slot back to its arena.
    fn flush(&mut self, pool: &PoolShared) {
        for slot in self.bins.iter_mut().flat_map(std::mem::take) {
            let size = pool.class_size(slot.class as usize) as u64;
            sub(Writer::Owner, &self.counts.cached, size);
            pool.free_to_arena(slot);
        }
    }
}

impl Drop for ThreadCache {
    fn drop(&mut self) {
        // A pool already gone unmapped its chunks: its slots are nothing to give back.
        if let Some(pool) = self.pool.upgrade() {
            self.flush(&pool);
            pool.retire_thread(&self.counts);
        }
    }
}

thread_local! {
    static CACHES: RefCell<Vec<ThreadCache>> = const { RefCell::new(Vec::new()) };
}

/// Run `f` on the calling thread's cache for `pool`, creating it (and assigning the thread
/// an arena) if `create`. `None` when there is no cache and `create` is false, or while the
/// thread's caches are being torn down (thread exit).
pub(super) fn with_cache<R>(
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
                    let counts = Arc::new(Counts::new(pool.class_count()));
                    pool.register_thread(counts.clone());
                    caches.push(ThreadCache {
                        pool_id: pool.id,
                        pool: Arc::downgrade(pool),
                        arena: pool.next_arena(),
                        bins: vec![Vec::new(); pool.class_count()],
                        counts,
                        ids: (0, 0),
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
pub(super) fn flush(pool: &Arc<PoolShared>) {
    with_cache(pool, false, |c| c.flush(pool));
}

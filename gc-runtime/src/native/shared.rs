//! What every handle and buffer of a pool shares ([`PoolShared`], Netty's `PoolArena`s and
//! their counters behind one `Arc`): the arenas, the size classes, the per-thread counts and
//! the leak detector. Buffers keep it, and so its chunks, alive. Taking a slot through the
//! thread's cache and giving it back are in `memory.rs`, above the thread cache.

use super::arena::{Arena, Slot};
use super::counters::Counts;
use super::error::NativeError;
use super::leak_detector::{LeakDetector, LeakRecord};
use super::pool_config::PoolConfig;
use super::size_class::SizeClasses;
use parking_lot::Mutex;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// The pool's rarely written counters (the hot ones are per thread: `counters`).
#[derive(Default)]
pub(super) struct Counters {
    pub(super) chunk_bytes: AtomicU64,
    pub(super) chunks: AtomicU64,
    pub(super) unpooled_bytes: AtomicU64,
    pub(super) unpooled_allocs: AtomicU64,
    pub(super) unpooled_frees: AtomicU64,
    pub(super) unreported_drops: AtomicU64,
}

/// What every handle of a pool shares; buffers keep it (and so its chunks) alive.
pub(super) struct PoolShared {
    pub(super) id: u64,
    pub(super) config: PoolConfig,
    pub(super) classes: SizeClasses,
    pub(super) arenas: Vec<Mutex<Arena>>,
    pub(super) next_arena: AtomicUsize,
    pub(super) next_buffer: AtomicU64,
    pub(super) cache_limits: Vec<usize>,
    pub(super) class_chunks: Vec<AtomicU64>,
    pub(super) counters: Counters,
    /// The counts of the threads with a cache of this pool.
    pub(super) threads: Mutex<Vec<Arc<Counts>>>,
    /// The counts of threads that exited.
    pub(super) retired: Counts,
    /// Counts written by threads without a cache (being torn down) and by unpooled buffers.
    pub(super) shared_counts: Counts,
    pub(super) leaks: LeakDetector,
}

impl PoolShared {
    /// Round-robin arena for a thread's first allocation.
    pub(super) fn next_arena(&self) -> usize {
        self.next_arena.fetch_add(1, Ordering::Relaxed) % self.arenas.len()
    }

    pub(super) fn class_count(&self) -> usize {
        self.classes.count()
    }

    /// A new thread cache's counts, summed by `stats` from now on.
    pub(super) fn register_thread(&self, counts: Arc<Counts>) {
        self.threads.lock().push(counts);
    }

    /// A thread cache going away (its thread exits): fold its counts into the retired ones.
    pub(super) fn retire_thread(&self, counts: &Arc<Counts>) {
        let mut threads = self.threads.lock();
        counts.fold_into(&self.retired);
        threads.retain(|c| !Arc::ptr_eq(c, counts));
    }

    /// A slot of `class` from arena `arena`.
    pub(super) fn alloc_from_arena(&self, arena: usize, class: usize) -> Result<Slot, NativeError> {
        let (slot, mapped) =
            self.arenas[arena]
                .lock()
                .alloc(class, &self.classes, self.config.chunk_size)?;
        if mapped > 0 {
            self.counters
                .chunk_bytes
                .fetch_add(mapped as u64, Ordering::Relaxed);
            self.counters.chunks.fetch_add(1, Ordering::Relaxed);
            self.class_chunks[class].fetch_add(1, Ordering::Relaxed);
        }
        Ok(slot)
    }

    /// Give a slot straight to its arena.
    pub(super) fn free_to_arena(&self, slot: Slot) {
        let out = self.arenas[slot.arena as usize].lock().free(slot);
        if out.unmapped > 0 {
            self.counters
                .chunk_bytes
                .fetch_sub(out.unmapped as u64, Ordering::Relaxed);
            self.counters.chunks.fetch_sub(1, Ordering::Relaxed);
            self.class_chunks[slot.class as usize].fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The slot size of `class`.
    pub(super) fn class_size(&self, class: usize) -> usize {
        self.classes.size(class)
    }

    /// A buffer dropped with its count above zero; `site` if it was tracked.
    pub(super) fn dropped_unreleased(
        &self,
        record: LeakRecord,
        site: Option<&'static Location<'static>>,
    ) {
        if site.is_some() {
            self.leaks.report(record);
        } else {
            self.counters
                .unreported_drops
                .fetch_add(1, Ordering::Relaxed);
        }
    }
}

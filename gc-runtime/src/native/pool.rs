//! The pool: Netty's `PooledByteBufAllocator` over jemalloc-style arenas.
//!
//! [`NativePool::allocate`] rounds a length up to its size class and takes a slot from the
//! calling thread's cache, else from the thread's arena (which maps a new chunk when its
//! chunks of the class are full). A length above the largest class gets a mapping of its own
//! (unpooled), which `munmap` gives back when the buffer is freed. [`PoolStats`] counts the
//! bytes in use, the chunks mapped, allocations and frees per class, and the leaks reported.
//!
//! Pools register themselves (unless [`PoolConfig::register`] is off) so that a memory report
//! can list the native memory of every pool alive: see [`super::registered_pools`].

use super::arena::Arena;
use super::buffer::PooledBuffer;
use super::chunk::OsMapping;
use super::counters::{add, Counts, Totals, Writer};
use super::error::NativeError;
use super::leak_detector::{LeakDetection, LeakDetector, LeakRecord};
use super::memory::Memory;
use super::pool_config::PoolConfig;
use super::shared::{Counters, PoolShared};
use super::size_class::SizeClasses;
use super::thread_cache;
use parking_lot::Mutex;
use serde::Serialize;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

/// Counters of one size class.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SizeClassStats {
    /// The slot size.
    pub size: usize,
    /// Buffers of this class allocated since the pool was created.
    pub allocations: u64,
    /// Buffers of this class freed (back in a cache or an arena).
    pub frees: u64,
    /// Chunks mapped for this class now, over all arenas.
    pub chunks: u64,
}

/// A snapshot of a pool's accounting.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PoolStats {
    pub name: String,
    pub arenas: usize,
    /// Sum of the lengths of the buffers alive (reference count above zero).
    pub used_bytes: u64,
    /// Sum of their capacities (size classes, or mappings of unpooled buffers).
    pub used_capacity_bytes: u64,
    /// Bytes of the chunks mapped now (virtual; a chunk costs RSS as its slots are written).
    pub chunk_bytes: u64,
    /// Chunks mapped now.
    pub chunks: u64,
    /// Bytes of pooled chunks resident in RAM (`mincore`); filled by
    /// [`NativePool::stats_with_residency`], 0 otherwise.
    pub chunk_resident_bytes: u64,
    /// Bytes mapped for unpooled (larger than a quarter chunk) buffers alive.
    pub unpooled_bytes: u64,
    /// Free slots sitting in thread caches (part of `chunk_bytes`).
    pub thread_cached_bytes: u64,
    /// Buffers allocated since the pool was created (pooled and unpooled).
    pub allocations: u64,
    /// Buffers freed.
    pub frees: u64,
    /// Unpooled buffers allocated (part of `allocations`).
    pub unpooled_allocations: u64,
    /// Buffers alive now (`allocations - frees`).
    pub live_buffers: u64,
    pub size_classes: Vec<SizeClassStats>,
    pub leak_detection: LeakDetection,
    /// Buffers the leak detector tracked.
    pub tracked_buffers: u64,
    /// Tracked buffers dropped without their count reaching zero.
    pub leaks_reported: u64,
    /// Untracked buffers dropped without their count reaching zero (the memory was taken
    /// back; no site is known).
    pub unreported_drops: u64,
    /// The first leak reports (up to 4096).
    pub leaks: Vec<LeakRecord>,
}

impl std::fmt::Display for PoolStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = |b: u64| match b {
            b if b >= 1 << 20 => format!("{:.1}M", b as f64 / (1u64 << 20) as f64),
            b if b >= 1 << 10 => format!("{:.1}K", b as f64 / 1024.0),
            b => format!("{b}B"),
        };
        write!(
            f,
            "pool '{}': {} buffers alive ({} used, {} capacity), {} chunks ({} mapped, {} resident, \
             {} in thread caches), {} unpooled; {} allocations, {} frees; leaks: {} reported, {} unreported",
            self.name,
            self.live_buffers,
            m(self.used_bytes),
            m(self.used_capacity_bytes),
            self.chunks,
            m(self.chunk_bytes),
            m(self.chunk_resident_bytes),
            m(self.thread_cached_bytes),
            m(self.unpooled_bytes),
            self.allocations,
            self.frees,
            self.leaks_reported,
            self.unreported_drops
        )
    }
}

static NEXT_POOL_ID: AtomicU64 = AtomicU64::new(1);
static REGISTRY: std::sync::Mutex<Vec<Weak<PoolShared>>> = std::sync::Mutex::new(Vec::new());

/// A pool of native (off-heap) buffers. Cloning the handle shares the pool; the memory is
/// unmapped when the last handle and the last buffer are gone.
#[derive(Clone)]
pub struct NativePool {
    shared: Arc<PoolShared>,
}

impl std::fmt::Debug for NativePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativePool")
            .field("id", &self.shared.id)
            .field("name", &self.shared.config.name)
            .finish_non_exhaustive()
    }
}

impl NativePool {
    /// A pool laid out as `config` says.
    pub fn new(config: PoolConfig) -> Result<NativePool, NativeError> {
        config.validate()?;
        let classes = SizeClasses::new(config.min_class, config.max_pooled_size());
        let n = classes.count();
        let cache_limits = (0..n)
            .map(|k| {
                if config.thread_cache {
                    thread_cache::cache_entries(classes.size(k))
                } else {
                    0
                }
            })
            .collect();
        let shared = Arc::new(PoolShared {
            id: NEXT_POOL_ID.fetch_add(1, Ordering::Relaxed),
            arenas: (0..config.arenas)
                .map(|i| Mutex::new(Arena::new(i as u32, &classes)))
                .collect(),
            classes,
            next_arena: AtomicUsize::new(0),
            next_buffer: AtomicU64::new(1),
            cache_limits,
            class_chunks: (0..n).map(|_| AtomicU64::new(0)).collect(),
            counters: Counters::default(),
            threads: Mutex::new(Vec::new()),
            retired: Counts::new(n),
            shared_counts: Counts::new(n),
            leaks: LeakDetector::new(config.leak_detection, config.log_leaks, config.name.clone()),
            config,
        });
        if shared.config.register {
            let mut reg = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
            reg.retain(|w| w.strong_count() > 0);
            reg.push(Arc::downgrade(&shared));
        }
        Ok(NativePool { shared })
    }

    /// The configuration.
    pub fn config(&self) -> &PoolConfig {
        &self.shared.config
    }

    /// A buffer of `len` bytes with reference count 1, pooled if `len` fits a size class.
    /// Its contents are unspecified (a previous buffer's bytes): [`PooledBuffer::fill`] it
    /// if that matters. The caller's location is the allocation site leak reports show.
    #[track_caller]
    pub fn allocate(&self, len: usize) -> Result<PooledBuffer, NativeError> {
        self.allocate_at(len, false, Location::caller())
    }

    /// A buffer of `len` bytes in a mapping of its own, whatever its size: what every buffer
    /// would cost without the pool (`mmap` + page faults + `munmap`).
    #[track_caller]
    pub fn allocate_unpooled(&self, len: usize) -> Result<PooledBuffer, NativeError> {
        self.allocate_at(len, true, Location::caller())
    }

    fn allocate_at(
        &self,
        len: usize,
        unpooled: bool,
        site: &'static Location<'static>,
    ) -> Result<PooledBuffer, NativeError> {
        let s = &self.shared;
        if len == 0 {
            return Err(NativeError::ZeroSize);
        }
        if len > s.config.max_buffer_size {
            return Err(NativeError::TooLarge {
                requested: len,
                max: s.config.max_buffer_size,
            });
        }
        let class = if unpooled {
            None
        } else {
            s.classes.class_of(len)
        };
        let (memory, capacity, id) = match class {
            Some(k) => {
                let cap = s.classes.size(k);
                let (slot, id) = s.alloc_pooled(k, len, cap)?;
                (Memory::Pooled(slot), cap, id)
            }
            None => {
                let map = OsMapping::new(len, "mmap of an unpooled native buffer")?;
                let cap = map.len();
                s.counters.unpooled_allocs.fetch_add(1, Ordering::Relaxed);
                s.counters
                    .unpooled_bytes
                    .fetch_add(cap as u64, Ordering::Relaxed);
                add(Writer::Shared, &s.shared_counts.used_bytes, len as u64);
                add(Writer::Shared, &s.shared_counts.used_capacity, cap as u64);
                let id = s.next_buffer.fetch_add(1, Ordering::Relaxed);
                (Memory::Unpooled(map), cap, id)
            }
        };
        let tracked = s.leaks.track(site);
        Ok(PooledBuffer::new(
            s.clone(),
            id,
            len,
            capacity,
            memory,
            tracked,
        ))
    }

    /// Give the calling thread's cached free slots of this pool back to their arenas (which
    /// may then unmap empty chunks). Threads do this when they exit.
    pub fn flush_thread_cache(&self) {
        thread_cache::flush(&self.shared);
    }

    /// The pool's counters now.
    pub fn stats(&self) -> PoolStats {
        let s = &self.shared;
        let c = &s.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut t = Totals::default();
        {
            // Under the lock a thread cannot retire (move its counts) mid-sum.
            let threads = s.threads.lock();
            s.retired.add_to(&mut t);
            s.shared_counts.add_to(&mut t);
            for counts in threads.iter() {
                counts.add_to(&mut t);
            }
        }
        let t = t.clamped();
        let size_classes: Vec<SizeClassStats> = (0..s.classes.count())
            .map(|k| SizeClassStats {
                size: s.classes.size(k),
                allocations: t.allocs[k],
                frees: t.frees[k],
                chunks: get(&s.class_chunks[k]),
            })
            .collect();
        let allocations =
            size_classes.iter().map(|k| k.allocations).sum::<u64>() + get(&c.unpooled_allocs);
        let frees = size_classes.iter().map(|k| k.frees).sum::<u64>() + get(&c.unpooled_frees);
        PoolStats {
            name: s.config.name.clone(),
            arenas: s.arenas.len(),
            used_bytes: t.used_bytes,
            used_capacity_bytes: t.used_capacity,
            chunk_bytes: get(&c.chunk_bytes),
            chunks: get(&c.chunks),
            chunk_resident_bytes: 0,
            unpooled_bytes: get(&c.unpooled_bytes),
            thread_cached_bytes: t.cached,
            allocations,
            frees,
            unpooled_allocations: get(&c.unpooled_allocs),
            live_buffers: allocations.saturating_sub(frees),
            size_classes,
            leak_detection: s.leaks.level(),
            tracked_buffers: s.leaks.tracked(),
            leaks_reported: s.leaks.reported(),
            unreported_drops: get(&c.unreported_drops),
            leaks: s.leaks.records(),
        }
    }

    /// [`NativePool::stats`] with `chunk_resident_bytes` measured (`mincore` over every chunk,
    /// under each arena's lock: for reports, not for hot paths).
    pub fn stats_with_residency(&self) -> PoolStats {
        let mut st = self.stats();
        st.chunk_resident_bytes = self
            .shared
            .arenas
            .iter()
            .map(|a| a.lock().resident_bytes())
            .sum();
        st
    }

    /// Both handles are of the same pool.
    pub fn same_pool(&self, other: &NativePool) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// The leaks reported so far (also in [`PoolStats::leaks`]).
    pub fn leaks(&self) -> Vec<LeakRecord> {
        self.shared.leaks.records()
    }
}

/// Every registered pool alive now (see [`PoolConfig::register`]), oldest first.
pub fn registered_pools() -> Vec<NativePool> {
    let reg = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    let pools: Vec<NativePool> = reg
        .iter()
        .filter_map(Weak::upgrade)
        .map(|shared| NativePool { shared })
        .collect();
    drop(reg);
    pools
}

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

use super::arena::{Arena, Slot};
use super::buffer::{Memory, PooledBuffer};
use super::chunk::OsMapping;
use super::counters::{add, sub, Counts, Totals, Writer};
use super::error::NativeError;
use super::leak_detector::{LeakDetection, LeakDetector, LeakRecord};
use super::size_class::SizeClasses;
use super::thread_cache;
use parking_lot::Mutex;
use serde::Serialize;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

/// The largest `max_buffer_size` a pool accepts (1 TiB).
pub const MAX_BUFFER_SIZE_LIMIT: usize = 1 << 40;

/// How a pool is laid out and what it checks.
#[derive(Clone, Debug, Serialize)]
pub struct PoolConfig {
    /// Shown in leak reports and memory reports.
    pub name: String,
    /// Arenas (1..=64); threads are assigned to them round-robin. Default: the number of
    /// CPUs, at most 8.
    pub arenas: usize,
    /// Bytes of one chunk (a power of two, 64 KiB ..= 1 GiB; default 2 MiB). The largest
    /// pooled buffer is a quarter of a chunk; larger ones are unpooled.
    pub chunk_size: usize,
    /// The smallest size class (a power of two, 64 B ..= a quarter of a chunk; default 512 B).
    pub min_class: usize,
    /// The largest buffer the pool hands out (1 ..= 1 TiB; default 1 GiB): a larger request
    /// is an error rather than an attempt to map it.
    pub max_buffer_size: usize,
    /// Keep per-thread caches of free slots (default on).
    pub thread_cache: bool,
    /// Which buffers the leak detector tracks (default one in 128, as Netty's `SIMPLE`).
    pub leak_detection: LeakDetection,
    /// Print each leak report on stderr (default on).
    pub log_leaks: bool,
    /// List the pool in [`super::registered_pools`] for memory reports (default on).
    pub register: bool,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig::new()
    }
}

impl PoolConfig {
    /// The defaults.
    pub fn new() -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        PoolConfig {
            name: "native".into(),
            arenas: cpus.min(8),
            chunk_size: 2 << 20,
            min_class: 512,
            max_buffer_size: 1 << 30,
            thread_cache: true,
            leak_detection: LeakDetection::Sampled(128),
            log_leaks: true,
            register: true,
        }
    }
    pub fn name(mut self, name: &str) -> Self {
        self.name = name.into();
        self
    }
    pub fn arenas(mut self, n: usize) -> Self {
        self.arenas = n;
        self
    }
    pub fn chunk_size(mut self, bytes: usize) -> Self {
        self.chunk_size = bytes;
        self
    }
    pub fn min_class(mut self, bytes: usize) -> Self {
        self.min_class = bytes;
        self
    }
    pub fn max_buffer_size(mut self, bytes: usize) -> Self {
        self.max_buffer_size = bytes;
        self
    }
    pub fn thread_cache(mut self, on: bool) -> Self {
        self.thread_cache = on;
        self
    }
    pub fn leak_detection(mut self, level: LeakDetection) -> Self {
        self.leak_detection = level;
        self
    }
    pub fn log_leaks(mut self, on: bool) -> Self {
        self.log_leaks = on;
        self
    }
    pub fn register(mut self, on: bool) -> Self {
        self.register = on;
        self
    }

    /// The largest pooled buffer.
    pub fn max_pooled_size(&self) -> usize {
        self.chunk_size / 4
    }

    /// Check every field; the message names the field and its range.
    pub fn validate(&self) -> Result<(), NativeError> {
        let bad = |m: String| Err(NativeError::Config(m));
        if !(1..=64).contains(&self.arenas) {
            return bad(format!("arenas must be 1..=64, got {}", self.arenas));
        }
        if !self.chunk_size.is_power_of_two()
            || !((64 << 10)..=(1 << 30)).contains(&self.chunk_size)
        {
            return bad(format!(
                "chunk_size must be a power of two from 64 KiB to 1 GiB, got {}",
                self.chunk_size
            ));
        }
        if !self.min_class.is_power_of_two()
            || !(64..=self.max_pooled_size()).contains(&self.min_class)
        {
            return bad(format!(
                "min_class must be a power of two from 64 to chunk_size / 4 ({}), got {}",
                self.max_pooled_size(),
                self.min_class
            ));
        }
        if !(1..=MAX_BUFFER_SIZE_LIMIT).contains(&self.max_buffer_size) {
            return bad(format!(
                "max_buffer_size must be 1 ..= {MAX_BUFFER_SIZE_LIMIT}, got {}",
                self.max_buffer_size
            ));
        }
        if self.leak_detection == LeakDetection::Sampled(0) {
            return bad("leak_detection Sampled(n) needs n >= 1".into());
        }
        Ok(())
    }
}

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

/// The pool's rarely written counters (the hot ones are per thread: `counters`).
#[derive(Default)]
struct Counters {
    chunk_bytes: AtomicU64,
    chunks: AtomicU64,
    unpooled_bytes: AtomicU64,
    unpooled_allocs: AtomicU64,
    unpooled_frees: AtomicU64,
    unreported_drops: AtomicU64,
}

/// What every handle of a pool shares; buffers keep it (and so its chunks) alive.
pub(super) struct PoolShared {
    pub(super) id: u64,
    config: PoolConfig,
    classes: SizeClasses,
    arenas: Vec<Mutex<Arena>>,
    next_arena: AtomicUsize,
    pub(super) next_buffer: AtomicU64,
    cache_limits: Vec<usize>,
    class_chunks: Vec<AtomicU64>,
    counters: Counters,
    /// The counts of the threads with a cache of this pool.
    threads: Mutex<Vec<Arc<Counts>>>,
    /// The counts of threads that exited.
    retired: Counts,
    /// Counts written by threads without a cache (being torn down) and by unpooled buffers.
    shared_counts: Counts,
    leaks: LeakDetector,
}

static NEXT_POOL_ID: AtomicU64 = AtomicU64::new(1);
static REGISTRY: std::sync::Mutex<Vec<Weak<PoolShared>>> = std::sync::Mutex::new(Vec::new());

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
    fn alloc_from_arena(&self, arena: usize, class: usize) -> Result<Slot, NativeError> {
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

    /// A pooled buffer's slot of `class` and the buffer's id; `len` and `cap` are counted.
    fn alloc_pooled(
        self: &Arc<Self>,
        class: usize,
        len: usize,
        cap: usize,
    ) -> Result<(Slot, u64), NativeError> {
        let count = |w: Writer, c: &Counts| {
            add(w, &c.allocs[class], 1);
            add(w, &c.used_bytes, len as u64);
            add(w, &c.used_capacity, cap as u64);
        };
        let cached = thread_cache::with_cache(self, true, |c| {
            let slot = match c.pop(class) {
                Some(slot) => {
                    sub(Writer::Owner, &c.counts.cached, cap as u64);
                    slot
                }
                None => self.alloc_from_arena(c.arena, class)?,
            };
            count(Writer::Owner, &c.counts);
            Ok((slot, c.next_id(self)))
        });
        match cached {
            Some(r) => r,
            // No thread cache (thread exit): any arena will do.
            None => {
                let slot = self.alloc_from_arena(self.next_arena(), class)?;
                count(Writer::Shared, &self.shared_counts);
                Ok((slot, self.next_buffer.fetch_add(1, Ordering::Relaxed)))
            }
        }
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

    /// Free a buffer's memory: `len` and `capacity` are the buffer's.
    pub(super) fn free(self: &Arc<Self>, memory: Memory, len: usize, capacity: usize) {
        let count = |w: Writer, c: &Counts, class: Option<usize>| {
            if let Some(k) = class {
                add(w, &c.frees[k], 1);
            }
            sub(w, &c.used_bytes, len as u64);
            sub(w, &c.used_capacity, capacity as u64);
        };
        match memory {
            Memory::Pooled(slot) => {
                let class = slot.class as usize;
                let limit = self.cache_limits[class];
                let cached = thread_cache::with_cache(self, true, |c| {
                    count(Writer::Owner, &c.counts, Some(class));
                    if limit > 0 && c.push(slot, limit).is_ok() {
                        add(Writer::Owner, &c.counts.cached, capacity as u64);
                        return true;
                    }
                    false
                });
                match cached {
                    Some(true) => {}
                    Some(false) => self.free_to_arena(slot),
                    None => {
                        count(Writer::Shared, &self.shared_counts, Some(class));
                        self.free_to_arena(slot);
                    }
                }
            }
            Memory::Unpooled(map) => {
                count(Writer::Shared, &self.shared_counts, None);
                self.counters.unpooled_frees.fetch_add(1, Ordering::Relaxed);
                self.counters
                    .unpooled_bytes
                    .fetch_sub(map.len() as u64, Ordering::Relaxed);
                drop(map);
            }
        }
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

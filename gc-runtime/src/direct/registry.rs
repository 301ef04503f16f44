//! The heap's direct buffers: native memory owned by heap objects and given back when the
//! owner dies (JDK's `DirectByteBuffer` with its `Cleaner`, and the accounting of
//! `java.nio.Bits` against `MaxDirectMemorySize`).
//!
//! A direct buffer is a small heap object, its *owner* (shape [`DIRECT_BUFFER_SHAPE`], no
//! reference slots, two raw words: an entry id and a random key), plus an entry here that
//! holds the native memory, a [`PooledBuffer`] from the heap's own unpooled pool or from an
//! embedder's [`NativePool`]. The entry id is the id of a *phantom slot* in the weak
//! processor's phantom table, the collector's only reference to the owner: it does not keep
//! the owner alive, and nothing loads it.
//!
//! - Concurrent Process Non-Strong References finds the phantom slots whose owner was not
//!   marked (`WeakProcessor::process`) and hands their ids to [`DirectBuffers::discover`],
//!   which moves the entries out of the table, to be freed by [`DirectBuffers::run_cleaners`]
//!   outside every pause: right after, in the same concurrent phase, or after the `stw`
//!   pause. Each dead owner's entry is taken out once, under the table's lock, and its slot
//!   freed after that, so a cleaner runs exactly once per owner.
//! - The embedder's `release` (Netty's) frees the memory early; the entry stays until the
//!   owner dies, and every later access is an error ([`crate::native::NativeError::Released`]).
//! - An owner's memory counts against the limit from its allocation until it is freed, by
//!   `release` or by its cleaner ([`DirectBuffers::try_reserve`], [`DirectBuffers::unreserve`]).
//!
//! The random key in the owner makes an entry id unforgeable: an object that is not a
//! buffer's owner (an embedder's object of the same shape, or an owner whose words were
//! overwritten) is refused, never given another owner's memory.

use crate::mark::WeakProcessor;
use crate::native::{LeakDetection, NativeError, NativePool, PoolConfig, PooledBuffer};
use crate::observe::DirectStats;
use parking_lot::{Mutex, RwLock};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};

/// The shape id of a direct buffer's owner object. Embedders should not use it for their own
/// objects (the runtime refuses such an object as a buffer: its key does not match).
pub const DIRECT_BUFFER_SHAPE: u32 = u32::MAX;

/// Raw bytes of an owner: the entry id and the key.
pub(crate) const OWNER_BYTES: usize = 16;

/// One buffer's native memory and what it was counted as.
struct Entry {
    buffer: PooledBuffer,
    key: u64,
    /// Bytes counted against the limit (the length asked for).
    len: u64,
    /// From an embedder's pool (else the heap's unpooled direct memory).
    pooled: bool,
}

/// A dead owner's buffer, waiting for its cleaner.
struct Dead {
    slot: usize,
    entry: Entry,
}

/// What one round of cleaners freed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cleaned {
    /// Dead owners whose cleaner ran.
    pub(crate) owners: u64,
    /// Requested bytes those cleaners freed (owners released before dying free nothing).
    pub(crate) bytes: u64,
}

#[derive(Default)]
struct Counters {
    /// Entries in the table (owners not found dead yet).
    owners: AtomicU64,
    allocated: AtomicU64,
    /// Requested bytes of every buffer allocated so far.
    allocated_bytes: AtomicU64,
    released: AtomicU64,
    cleaned: AtomicU64,
    cleaned_bytes: AtomicU64,
    owners_dead: AtomicU64,
    limit_cycles: AtomicU64,
    limit_failures: AtomicU64,
    direct_bytes: AtomicU64,
    pooled_bytes: AtomicU64,
}

pub(crate) struct DirectBuffers {
    /// Indexed by phantom slot id.
    entries: RwLock<Vec<Option<Entry>>>,
    /// Dead owners' buffers, found in Concurrent Process Non-Strong References.
    pending: Mutex<Vec<Dead>>,
    /// Where unpooled direct memory comes from (each buffer a mapping of its own).
    unpooled: NativePool,
    limit: u64,
    /// Requested bytes of buffers whose memory is not freed yet.
    reserved: AtomicU64,
    keys: std::collections::hash_map::RandomState,
    counters: Counters,
}

impl DirectBuffers {
    /// The direct buffers of heap `heap_id`, limited to `limit` requested bytes.
    pub(crate) fn new(heap_id: u64, limit: u64) -> Self {
        let unpooled = NativePool::new(
            PoolConfig::new()
                .name(&format!("direct (heap #{heap_id})"))
                .arenas(1)
                .max_buffer_size(crate::native::MAX_BUFFER_SIZE_LIMIT)
                // Dying unreleased is how a direct buffer normally ends: not a leak.
                .leak_detection(LeakDetection::Off)
                .log_leaks(false),
        )
        .expect("the direct pool's configuration is valid");
        DirectBuffers {
            entries: RwLock::new(Vec::new()),
            pending: Mutex::new(Vec::new()),
            unpooled,
            limit,
            reserved: AtomicU64::new(0),
            keys: Default::default(),
            counters: Counters::default(),
        }
    }

    /// The limit in requested bytes.
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// The heap's own pool of unpooled direct memory.
    pub(crate) fn unpooled_pool(&self) -> &NativePool {
        &self.unpooled
    }

    /// Count `len` bytes against the limit; false (nothing counted) if that would pass it.
    pub(crate) fn try_reserve(&self, len: u64) -> bool {
        self.reserved
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| {
                r.checked_add(len).filter(|&n| n <= self.limit)
            })
            .is_ok()
    }

    /// Stop counting `len` bytes (a buffer's memory was freed, or its allocation failed).
    pub(crate) fn unreserve(&self, len: u64) {
        self.reserved.fetch_sub(len, Ordering::AcqRel);
    }

    /// Requested bytes counted now.
    pub(crate) fn reserved(&self) -> u64 {
        self.reserved.load(Ordering::Acquire)
    }

    /// Requested bytes of every buffer allocated so far (the director's turnover).
    pub(crate) fn allocated_bytes(&self) -> u64 {
        self.counters.allocated_bytes.load(Ordering::Relaxed)
    }

    /// A cycle was requested because an allocation would pass the limit.
    pub(crate) fn note_limit_cycle(&self) {
        self.counters.limit_cycles.fetch_add(1, Ordering::Relaxed);
    }

    /// An allocation failed at the limit after its cycles.
    pub(crate) fn note_limit_failure(&self) {
        self.counters.limit_failures.fetch_add(1, Ordering::Relaxed);
    }

    fn bytes_counter(&self, pooled: bool) -> &AtomicU64 {
        if pooled {
            &self.counters.pooled_bytes
        } else {
            &self.counters.direct_bytes
        }
    }

    /// Register `buffer` (already counted with [`Self::try_reserve`]) for the owner whose
    /// phantom slot is `slot`; returns the key to store in the owner.
    pub(crate) fn register(&self, slot: usize, buffer: PooledBuffer, pooled: bool) -> u64 {
        let key = self.keys.hash_one((slot, buffer.id(), pooled)) | 1;
        let len = buffer.len() as u64;
        {
            let mut e = self.entries.write();
            if e.len() <= slot {
                e.resize_with(slot + 1, || None);
            }
            debug_assert!(e[slot].is_none(), "a phantom slot has one entry at a time");
            e[slot] = Some(Entry {
                buffer,
                key,
                len,
                pooled,
            });
        }
        self.counters.owners.fetch_add(1, Ordering::Relaxed);
        self.counters.allocated.fetch_add(1, Ordering::Relaxed);
        self.counters
            .allocated_bytes
            .fetch_add(len, Ordering::Relaxed);
        self.bytes_counter(pooled).fetch_add(len, Ordering::Relaxed);
        key
    }

    /// The buffer of the owner whose raw words are `(slot, key)` and whether it is from an
    /// embedder's pool, or `None` if those words are not a live owner's.
    pub(crate) fn lookup(&self, slot: u64, key: u64) -> Option<(PooledBuffer, bool)> {
        let e = self.entries.read();
        let entry = e.get(usize::try_from(slot).ok()?)?.as_ref()?;
        (entry.key == key).then(|| (entry.buffer.clone(), entry.pooled))
    }

    /// Release one reference of a registered `buffer` (the embedder's `release`); `Ok(true)`
    /// if that freed its memory.
    pub(crate) fn release(&self, buffer: &PooledBuffer, pooled: bool) -> Result<bool, NativeError> {
        let freed = buffer.release()?;
        if freed {
            self.freed(buffer.len() as u64, pooled);
            self.counters.released.fetch_add(1, Ordering::Relaxed);
        }
        Ok(freed)
    }

    fn freed(&self, len: u64, pooled: bool) {
        self.unreserve(len);
        self.bytes_counter(pooled).fetch_sub(len, Ordering::Relaxed);
    }

    /// Concurrent Process Non-Strong References: the owners of phantom slots `slots` died;
    /// take their entries out, for [`Self::run_cleaners`].
    pub(crate) fn discover(&self, slots: &[usize]) {
        if slots.is_empty() {
            return;
        }
        let mut dead = Vec::with_capacity(slots.len());
        {
            let mut e = self.entries.write();
            for &slot in slots {
                // A slot is registered before its owner can become unreachable (no safepoint
                // in between), so a dead owner's slot always has its entry.
                let entry = e[slot]
                    .take()
                    .expect("a dead owner's phantom slot has an entry");
                dead.push(Dead { slot, entry });
            }
        }
        self.counters
            .owners
            .fetch_sub(dead.len() as u64, Ordering::Relaxed);
        self.pending.lock().extend(dead);
    }

    /// Free the memory of every dead owner discovered so far and give their phantom slots
    /// back. Runs outside pauses, on the driver thread.
    pub(crate) fn run_cleaners(&self, weaks: &WeakProcessor) -> Cleaned {
        let dead = std::mem::take(&mut *self.pending.lock());
        let mut c = Cleaned::default();
        for d in dead {
            c.owners += 1;
            let Entry {
                buffer,
                len,
                pooled,
                ..
            } = d.entry;
            // Count 0: released before the owner died; nothing left to free.
            if buffer.ref_count() > 0 {
                // The entry held the last handle (accessors' copies live no longer than a
                // borrow of a scope that roots the owner): dropping it frees the memory, and
                // a pool's leak detector reports it if it tracked the buffer.
                drop(buffer);
                self.freed(len, pooled);
                c.bytes += len;
                self.counters.cleaned.fetch_add(1, Ordering::Relaxed);
            }
            weaks.phantoms().free(d.slot);
        }
        self.counters
            .owners_dead
            .fetch_add(c.owners, Ordering::Relaxed);
        self.counters
            .cleaned_bytes
            .fetch_add(c.bytes, Ordering::Relaxed);
        c
    }

    /// The counters now.
    pub(crate) fn stats(&self) -> DirectStats {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let c = &self.counters;
        DirectStats {
            limit: self.limit,
            reserved_bytes: self.reserved(),
            direct_bytes: get(&c.direct_bytes),
            pooled_bytes: get(&c.pooled_bytes),
            owners: get(&c.owners),
            allocated: get(&c.allocated),
            released: get(&c.released),
            cleaned: get(&c.cleaned),
            cleaned_bytes: get(&c.cleaned_bytes),
            owners_dead: get(&c.owners_dead),
            limit_cycles: get(&c.limit_cycles),
            limit_failures: get(&c.limit_failures),
            unpooled_mapped_bytes: self.unpooled.stats().unpooled_bytes,
        }
    }
}

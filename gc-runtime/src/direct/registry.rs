//! The heap's direct buffers: native memory owned by heap objects and given back when the
//! owner dies (JDK's `DirectByteBuffer` with its `Cleaner`, and the accounting of
//! `java.nio.Bits` against `MaxDirectMemorySize`).
//!
//! A direct buffer is a small heap object, its *owner* (shape [`DIRECT_BUFFER_SHAPE`], no
//! reference slots, two raw words: an entry id and a key), plus an entry here that
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
//!   `release` or by its cleaner ([`DirectBuffers::try_reserve`], [`DirectBuffers::unreserve`]),
//!   whichever frees it: the cleaner frees the memory itself ([`PooledBuffer::reclaim`]) rather
//!   than trusting that its handle is the last, so a reservation is given back exactly once,
//!   and `unreserve` is checked (a second one is a bug: a debug assertion, and a saturating,
//!   never wrapping, subtraction in release builds).
//!
//! The owner's words are not what makes it an owner: any embedder can read and write them.
//! [`DirectBuffers::lookup`] gives an entry only to the very object its phantom slot refers
//! to (the caller's identity test, `HeapInner::phantom_refers_to`), so the words copied into
//! another object of the same shape open nothing. The key is a generation, heap-wide and
//! increasing, never given out twice: a dead owner's words, kept somewhere, never match the
//! entry of a later owner that reuses its phantom slot.

use crate::mark::WeakProcessor;
use crate::native::{LeakDetection, NativeError, NativePool, PoolConfig, PooledBuffer};
use crate::observe::DirectStats;
use parking_lot::{Mutex, RwLock};
use std::sync::atomic::{AtomicU64, Ordering};

/// The shape id of a direct buffer's owner object. Embedders should not use it for their own
/// objects (the runtime refuses such an object as a buffer: its phantom slot, if any, refers
/// to another object).
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
    /// The last key given out (keys are 1, 2, ...: never reused while the heap lives).
    generation: AtomicU64,
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
            generation: AtomicU64::new(0),
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
        checked_sub(&self.reserved, len, "reserved direct bytes");
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
        let key = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
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
    /// embedder's pool, or `None` if those words are not a live owner's. `is_owner(slot)`
    /// says whether phantom slot `slot` refers to the object that holds the words: words
    /// copied into any other object are refused.
    pub(crate) fn lookup(
        &self,
        slot: u64,
        key: u64,
        is_owner: impl FnOnce(usize) -> bool,
    ) -> Option<(PooledBuffer, bool)> {
        let slot = usize::try_from(slot).ok()?;
        let e = self.entries.read();
        let entry = e.get(slot)?.as_ref()?;
        // Under the lock: the slot is not given to another owner meanwhile.
        (entry.key == key && is_owner(slot)).then(|| (entry.buffer.clone(), entry.pooled))
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
        checked_sub(self.bytes_counter(pooled), len, "direct buffer bytes");
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
            // Freed here unless `release` freed it first (then nothing is left to free). The
            // memory is freed now even if a copy of the handle is still somewhere: that copy
            // sees the buffer released, and its `release` counts nothing again. A pool's leak
            // detector reports the buffer if it tracked it.
            if buffer.reclaim() {
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

/// Take `n` from `counter`: never below zero. Taking more than it holds is an accounting bug
/// (a reservation given back twice): a debug assertion, and zero in release builds.
fn checked_sub(counter: &AtomicU64, n: u64, what: &str) {
    let before = counter
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
            Some(v.saturating_sub(n))
        })
        .expect("the update always succeeds");
    debug_assert!(before >= n, "{what}: {n} given back, only {before} counted");
}

#[cfg(test)]
mod tests {
    use super::*;
    use gc_core::ColoredPtr;

    fn buffers(limit: u64) -> (DirectBuffers, WeakProcessor) {
        (
            DirectBuffers::new(u64::MAX, limit),
            WeakProcessor::default(),
        )
    }

    /// A copy of the handle released after the owner's cleaner freed the memory counts
    /// nothing again (issue 26, item 2: it once unreserved the length twice, `reserved`
    /// wrapped to ~2^64 and every later reservation failed).
    #[test]
    fn a_handle_released_after_the_cleaner_gives_nothing_back_twice() {
        let (d, w) = buffers(1 << 20);
        assert!(d.try_reserve(4096));
        let buffer = d.unpooled_pool().allocate_unpooled(4096).unwrap();
        let (_, slot) = w.phantoms().alloc(ColoredPtr::NULL);
        let key = d.register(slot, buffer, false);
        let (copy, pooled) = d.lookup(slot as u64, key, |_| true).unwrap();
        d.discover(&[slot]);
        let c = d.run_cleaners(&w);
        assert_eq!((c.owners, c.bytes), (1, 4096));
        assert_eq!(d.reserved(), 0);
        assert!(
            matches!(d.release(&copy, pooled), Err(NativeError::Released { .. })),
            "the cleaner freed it: the copy sees it released"
        );
        assert_eq!(d.reserved(), 0);
        assert_eq!(d.stats().direct_bytes, 0);
        assert!(d.try_reserve(1 << 20), "the whole limit is still there");
    }

    /// Released first, the cleaner frees nothing and gives nothing back.
    #[test]
    fn a_released_buffer_is_given_back_once() {
        let (d, w) = buffers(1 << 20);
        assert!(d.try_reserve(100));
        let buffer = d.unpooled_pool().allocate_unpooled(100).unwrap();
        let (_, slot) = w.phantoms().alloc(ColoredPtr::NULL);
        let key = d.register(slot, buffer, false);
        let (b, pooled) = d.lookup(slot as u64, key, |_| true).unwrap();
        assert!(d.release(&b, pooled).unwrap());
        assert_eq!(d.reserved(), 0);
        d.discover(&[slot]);
        assert_eq!(d.run_cleaners(&w).bytes, 0);
        assert_eq!((d.reserved(), d.stats().cleaned), (0, 0));
    }

    /// Keys are never given out twice, whatever the slot and the pool, and an entry is given
    /// only to the object its phantom slot refers to.
    #[test]
    fn keys_are_unique_and_the_owner_test_decides() {
        let (d, w) = buffers(1 << 20);
        let mut keys = std::collections::HashSet::new();
        for _ in 0..3 {
            assert!(d.try_reserve(8));
            let buffer = d.unpooled_pool().allocate_unpooled(8).unwrap();
            let (_, slot) = w.phantoms().alloc(ColoredPtr::NULL);
            let key = d.register(slot, buffer, false);
            assert!(keys.insert(key), "key {key} given twice");
            assert!(d.lookup(slot as u64, key, |_| false).is_none());
            assert!(d.lookup(slot as u64, key, |s| s == slot).is_some());
            d.discover(&[slot]);
            d.run_cleaners(&w); // frees the slot: the next owner reuses it
        }
        assert_eq!(d.reserved(), 0);
    }

    /// A second give-back never wraps: a debug assertion, zero in release builds.
    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "given back"))]
    fn unreserving_more_than_reserved_never_wraps() {
        let (d, _) = buffers(1 << 20);
        assert!(d.try_reserve(10));
        d.unreserve(10);
        d.unreserve(10);
        assert_eq!(d.reserved(), 0);
        assert!(d.try_reserve(1 << 20));
    }
}

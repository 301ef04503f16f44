//! The embedding API of direct buffers (JDK's `ByteBuffer.allocateDirect`, Netty's pooled
//! `ByteBuf`): [`Scope::alloc_direct`] and [`Scope::alloc_pooled`] make a heap object that
//! owns native memory, [`Scope::direct`] gives access to it as a [`DirectBuffer`].
//!
//! The owner is an ordinary object: it can be stored in reference slots, rooted, made global;
//! the collector never copies or scans its native bytes. When the owner dies, its cleaner
//! frees the memory (see `direct/registry.rs`); `release` frees it early. A [`DirectBuffer`]
//! borrows the scope exclusively, so no [`crate::ObjRef`] lives beside it, and reaches the
//! bytes only through copying, bounds-checked accessors: no slice into native memory is ever
//! handed out, and an access after the memory was freed is an error, never a use after free.
//!
//! A copy longer than one chunk of bulk work (128 KiB, the chunk a large object is zeroed in)
//! is done a chunk at a time, each chunk as a blocked thread whose end is a safepoint check,
//! as ZGC clears large arrays in segments: a `write`, `read` or `fill` of 256 MB holds no
//! pause for its length. That is safe because the buffer's bytes are native memory, which
//! no collector reads or moves, and the exclusive borrow leaves no heap pointer alive across
//! the checks. Between chunks the owner may move, but it stays alive (its handle roots it),
//! so its entry and the buffer's memory stay too; the one thing that can change is a
//! `release` by another thread sharing the owner, which the next chunk sees under the
//! buffer's lock: the call returns [`NativeError::Released`], the chunks before it done.

use super::mutator::{Mutator, OutOfMemory};
use super::scope::{Local, Scope};
use crate::direct::{DirectBuffers, DIRECT_BUFFER_SHAPE, OWNER_BYTES};
use crate::heap::BULK_CHUNK;
use crate::native::{NativeError, NativePool, PooledBuffer};
use crate::observe::EventStart;
use crate::observe::GcCause;
use crate::Mode;
use std::sync::Arc;

/// Cycles a direct allocation runs at the limit before it gives up. An owner that died
/// before the request is found dead by the first; the second catches owners whose death the
/// first could not see yet (dropped while it was marking).
const LIMIT_CYCLES: u32 = 2;

/// Why a direct buffer could not be made or reached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DirectError {
    /// The buffer would pass the heap's direct-memory limit, even after GC cycles freed what
    /// dead owners held.
    #[error(
        "direct memory limit reached: {requested} bytes requested, {in_use} of {limit} bytes \
         held by live buffers after {cycles} GC cycle(s){epsilon}; raise \
         HeapConfig::max_direct_memory or release buffers (or drop their owners) sooner",
        epsilon = if *.collects { "" } else { " (an epsilon heap never collects: only release frees)" }
    )]
    LimitReached {
        /// Bytes asked for.
        requested: u64,
        /// Requested bytes of the buffers whose memory is not freed.
        in_use: u64,
        /// The limit.
        limit: u64,
        /// Cycles run for this allocation.
        cycles: u32,
        /// The heap collects (not `epsilon`).
        collects: bool,
    },
    /// The heap has no room for the owner object.
    #[error("{0}")]
    OutOfMemory(#[from] OutOfMemory),
    /// The native memory could not be had, or an access was refused.
    #[error("{0}")]
    Native(#[from] NativeError),
    /// The object is not a direct buffer's owner.
    #[error(
        "the object is not a direct buffer (shape {shape}): use a handle that Scope::alloc_direct \
         or Scope::alloc_pooled returned"
    )]
    NotDirect {
        /// The object's shape.
        shape: u32,
    },
}

/// Access to one direct buffer, borrowed exclusively from the scope (see the module
/// documentation).
pub struct DirectBuffer<'a> {
    buffer: PooledBuffer,
    pooled: bool,
    direct: &'a DirectBuffers,
    /// The scope's mutator, reached through the scope's exclusive borrow: a long copy stops
    /// at safepoints between its chunks.
    m: &'a Mutator,
}

impl std::fmt::Debug for DirectBuffer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectBuffer")
            .field("buffer", &self.buffer)
            .field("pooled", &self.pooled)
            .finish()
    }
}

impl DirectBuffer<'_> {
    /// Bytes readable and writable.
    pub fn len(&self) -> usize {
        self.buffer.len()
    }
    /// Never true: a buffer has at least one byte.
    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }
    /// Bytes of native memory behind it (a size class, or a page-rounded mapping).
    pub fn capacity(&self) -> usize {
        self.buffer.capacity()
    }
    /// From an embedder's pool ([`Scope::alloc_pooled`]).
    pub fn is_pooled(&self) -> bool {
        self.pooled
    }
    /// The reference count (0 once released).
    pub fn ref_count(&self) -> u32 {
        self.buffer.ref_count()
    }
    /// Run `op(at, n)`, access `what` of the bytes `offset + at..offset + at + n`, on
    /// consecutive pieces of `0..len`: in one go up to one chunk, else each chunk as a blocked
    /// thread whose end is a safepoint check (see the module documentation), after checking
    /// the whole access. Stops at the first error.
    fn chunked(
        &self,
        what: &'static str,
        offset: usize,
        len: usize,
        mut op: impl FnMut(usize, usize) -> Result<(), NativeError>,
    ) -> Result<(), NativeError> {
        if len <= BULK_CHUNK {
            return op(0, len);
        }
        // The whole access first: one refused (released, out of bounds) does nothing, as in
        // one piece.
        self.buffer.check_access(what, offset, len)?;
        let mut at = 0;
        while at < len {
            let n = BULK_CHUNK.min(len - at);
            self.m.blocked_chunk(|| op(at, n))?;
            at += n;
        }
        Ok(())
    }
    /// Copy `data` into the buffer at `offset`, a chunk at a time (see the module
    /// documentation).
    pub fn write(&self, offset: usize, data: &[u8]) -> Result<(), NativeError> {
        self.chunked("write", offset, data.len(), |at, n| {
            self.buffer.write(offset + at, &data[at..at + n])
        })
    }
    /// Copy `out.len()` bytes at `offset` into `out`, a chunk at a time.
    pub fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), NativeError> {
        self.chunked("read", offset, out.len(), |at, n| {
            self.buffer.read(offset + at, &mut out[at..at + n])
        })
    }
    /// Set `len` bytes at `offset` to `byte`, a chunk at a time.
    pub fn fill(&self, offset: usize, len: usize, byte: u8) -> Result<(), NativeError> {
        self.chunked("fill", offset, len, |at, n| {
            self.buffer.fill(offset + at, n, byte)
        })
    }
    /// Write a little-endian `u64` at `offset`.
    pub fn write_u64(&self, offset: usize, v: u64) -> Result<(), NativeError> {
        self.buffer.write_u64(offset, v)
    }
    /// Read a little-endian `u64` at `offset`.
    pub fn read_u64(&self, offset: usize) -> Result<u64, NativeError> {
        self.buffer.read_u64(offset)
    }
    /// A copy of the whole buffer, read a chunk at a time.
    pub fn to_vec(&self) -> Result<Vec<u8>, NativeError> {
        let mut v = vec![0u8; self.len()];
        self.read(0, &mut v)?;
        Ok(v)
    }
    /// Add one to the reference count (Netty's `retain`).
    pub fn retain(&self) -> Result<(), NativeError> {
        self.buffer.retain()
    }
    /// Take one from the reference count (Netty's `release`); at zero the memory is freed
    /// now (back to its pool, or unmapped) and this returns `Ok(true)`. The owner object
    /// stays until it dies; every later access is an error.
    pub fn release(&self) -> Result<bool, NativeError> {
        if self.len() <= BULK_CHUNK {
            return self.direct.release(&self.buffer, self.pooled);
        }
        // Unmapping a long buffer takes as long as a chunk's copy or more: as a blocked
        // thread too (it touches no heap memory).
        self.m
            .blocked_chunk(|| self.direct.release(&self.buffer, self.pooled))
    }
}

impl<'s> Scope<'s> {
    /// A direct buffer of `len` zeroed bytes of native memory (a mapping of its own, outside
    /// the heap), owned by a new heap object: freed by [`DirectBuffer::release`] or when the
    /// owner dies. At the direct-memory limit this runs GC cycles (cause "Direct Memory") for
    /// dead owners' cleaners to free memory, and fails only if they do not free enough; the
    /// wait is recorded as an allocation stall (`GcStats::stalls`).
    #[track_caller]
    pub fn alloc_direct(&mut self, len: usize) -> Result<Local<'s>, DirectError> {
        self.alloc_owned_buffer(len, None)
    }

    /// A direct buffer of `len` bytes from `pool` (contents unspecified: a previous buffer's
    /// bytes), owned by a new heap object: back to the pool on [`DirectBuffer::release`] or
    /// when the owner dies (reported by the pool's leak detector if it tracked the buffer).
    /// Counted against the same limit as [`Scope::alloc_direct`].
    #[track_caller]
    pub fn alloc_pooled(
        &mut self,
        pool: &NativePool,
        len: usize,
    ) -> Result<Local<'s>, DirectError> {
        self.alloc_owned_buffer(len, Some(pool))
    }

    #[track_caller]
    fn alloc_owned_buffer(
        &mut self,
        len: usize,
        pool: Option<&NativePool>,
    ) -> Result<Local<'s>, DirectError> {
        if len == 0 {
            return Err(NativeError::ZeroSize.into());
        }
        let heap = Arc::clone(self.heap());
        let direct = heap.direct();
        let requested = len as u64;
        let collects = heap.config().mode != Mode::Epsilon;
        let mut cycles = 0;
        // The wait for "Direct Memory" cycles is an allocation stall: recorded as one, and
        // logged as a direct-memory stall.
        let mut stall: Option<EventStart> = None;
        let record_stall = |stall: Option<EventStart>, failed: bool, thread: &str| {
            if let Some(began) = stall {
                heap.events().direct_memory_stall(thread, began, failed);
            }
        };
        while !direct.try_reserve(requested) {
            if cycles == LIMIT_CYCLES || !collects {
                direct.note_limit_failure();
                record_stall(stall, true, self.mutator().name());
                return Err(DirectError::LimitReached {
                    requested,
                    in_use: direct.reserved(),
                    limit: direct.limit(),
                    cycles,
                    collects,
                });
            }
            stall.get_or_insert_with(|| heap.events().begin());
            direct.note_limit_cycle();
            self.mutator_mut().collect_for(GcCause::DirectMemory);
            cycles += 1;
        }
        record_stall(stall, false, self.mutator().name());
        let buffer = match pool {
            Some(p) => p.allocate(len),
            None => direct.unpooled_pool().allocate_unpooled(len),
        };
        let buffer = buffer.inspect_err(|_| direct.unreserve(requested))?;
        let owner = match self.alloc(DIRECT_BUFFER_SHAPE, 0, OWNER_BYTES) {
            Ok(l) => l,
            Err(e) => {
                // Never registered: free it as its owner would have.
                let _ = buffer.release();
                direct.unreserve(requested);
                return Err(e.into());
            }
        };
        // From here to the end no call can reach a safepoint: the owner's pointer stays good
        // while it is stored in the phantom slot, and the owner is rooted by `owner`.
        let o = self.get(owner);
        let ptr = o.ptr_for(&heap, "Scope::alloc_direct");
        let (_, slot) = heap.phantoms().alloc(ptr);
        let key = direct.register(slot, buffer, pool.is_some());
        o.write_u64(0, slot as u64);
        o.write_u64(8, key);
        Ok(owner)
    }

    /// The direct buffer owned by `l`. It borrows the scope exclusively: a long copy through
    /// it stops at safepoints (see the module documentation).
    ///
    /// # Errors
    /// [`DirectError::NotDirect`] if `l` is not a direct buffer's owner: an object of another
    /// shape, or of the owner's shape whose raw words are not its own (copied from another
    /// owner, live or dead, or made up).
    ///
    /// # Panics
    /// If `l` was made by a scope of another heap's mutator.
    pub fn direct(&mut self, l: Local<'_>) -> Result<DirectBuffer<'_>, DirectError> {
        let this: &Self = self;
        let (buffer, pooled) = this.direct_entry(l)?;
        Ok(DirectBuffer {
            buffer,
            pooled,
            direct: this.heap().direct(),
            m: this.mutator(),
        })
    }

    /// True if `l` is a direct buffer's owner.
    pub fn is_direct(&self, l: Local<'_>) -> bool {
        self.direct_entry(l).is_ok()
    }

    /// The buffer of owner `l` and whether it is pooled (see [`Scope::direct`]).
    fn direct_entry(&self, l: Local<'_>) -> Result<(PooledBuffer, bool), DirectError> {
        let o = self.get(l);
        let shape = o.shape();
        let not_direct = DirectError::NotDirect { shape };
        if shape != DIRECT_BUFFER_SHAPE || o.n_refs() != 0 || o.n_bytes() != OWNER_BYTES {
            return Err(not_direct);
        }
        let heap = self.heap();
        let (slot, key) = (o.read_u64(0), o.read_u64(8));
        let direct = heap.direct();
        // The words are the embedder's to write: the entry goes only to the object its
        // phantom slot refers to.
        let ptr = o.ptr_for(heap, "Scope::direct");
        direct
            .lookup(slot, key, |id| heap.phantom_refers_to(id, ptr))
            .ok_or(not_direct)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Heap, HeapConfig, LogLevel, Mode};

    /// A wait at the direct-memory limit goes through the event sink like a heap stall: one
    /// record and one log line each (the record alone, without its line, was once the case).
    #[test]
    fn a_direct_memory_stall_is_recorded_and_logged() {
        for mode in [Mode::Concurrent, Mode::Stw] {
            let config = HeapConfig::new(64 << 20)
                .mode(mode)
                .log(LogLevel::Gc)
                .max_direct_memory(1 << 20);
            let h = Heap::new(config).unwrap();
            let mut m = h.attach("main").unwrap();
            // 64 buffers of 64 KiB dropped as they go: 4 MiB through a 1 MiB limit.
            for _ in 0..64 {
                m.scope(|s| {
                    s.alloc_direct(64 << 10).unwrap();
                });
            }
            let stalls = h.stats().stalls;
            assert!(!stalls.is_empty(), "{mode}: the limit was never waited at");
            let lines: Vec<String> = h
                .inner
                .events()
                .logged()
                .into_iter()
                .filter(|l| l.contains("[info][gc] Direct Memory Stall (main) "))
                .collect();
            assert_eq!(lines.len(), stalls.len(), "{mode}: {lines:?}");
            assert!(lines.iter().all(|l| l.ends_with("ms")), "{lines:?}");
        }
    }
}

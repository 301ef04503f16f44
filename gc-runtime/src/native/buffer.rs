//! A pooled buffer: native memory with a reference count (Netty's `PooledByteBuf` and its
//! `ReferenceCounted` contract).
//!
//! A new buffer has count 1. [`PooledBuffer::retain`] adds one, [`PooledBuffer::release`]
//! takes one; when the count reaches zero the memory goes back to the pool, and every later
//! `release`, `retain`, read or write is an error ([`NativeError::Released`]), never a
//! double free or a use after free. Cloning the handle copies a *reference* (as assigning a
//! `ByteBuf` variable does in Java): the count does not change. When the last handle is
//! dropped while the count is still above zero, the buffer leaked: the pool takes the memory
//! back, and the leak detector reports it if the buffer was tracked.
//!
//! The bytes are reached only through copying accessors, bounds-checked against the length,
//! under the buffer's lock (which `release` takes too): no slice into native memory escapes,
//! and two threads sharing a buffer cannot race on its bytes or free it under a reader.

use super::error::NativeError;
use super::leak_detector::LeakRecord;
use super::memory::Memory;
use super::shared::PoolShared;
use parking_lot::Mutex;
use std::panic::Location;
use std::sync::Arc;

#[derive(Debug)]
struct State {
    refs: u32,
    /// `Some` exactly while `refs > 0`.
    memory: Option<Memory>,
}

struct Inner {
    pool: Arc<PoolShared>,
    id: u64,
    len: usize,
    capacity: usize,
    pooled: bool,
    site: Option<&'static Location<'static>>,
    state: Mutex<State>,
}

/// A reference-counted native buffer from a [`super::NativePool`].
#[derive(Clone)]
pub struct PooledBuffer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for PooledBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PooledBuffer")
            .field("id", &self.inner.id)
            .field("len", &self.inner.len)
            .field("capacity", &self.inner.capacity)
            .field("ref_count", &self.ref_count())
            .finish()
    }
}

impl PooledBuffer {
    pub(super) fn new(
        pool: Arc<PoolShared>,
        id: u64,
        len: usize,
        capacity: usize,
        memory: Memory,
        site: Option<&'static Location<'static>>,
    ) -> Self {
        PooledBuffer {
            inner: Arc::new(Inner {
                pool,
                id,
                len,
                capacity,
                pooled: matches!(memory, Memory::Pooled(_)),
                site,
                state: Mutex::new(State {
                    refs: 1,
                    memory: Some(memory),
                }),
            }),
        }
    }

    /// The buffer's id (unique in its pool; leak reports name it).
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    /// Bytes readable and writable: the length asked for.
    pub fn len(&self) -> usize {
        self.inner.len
    }

    /// Never true: a buffer has at least one byte.
    pub fn is_empty(&self) -> bool {
        self.inner.len == 0
    }

    /// Bytes of memory behind it (its size class, or its page-rounded mapping).
    pub fn capacity(&self) -> usize {
        self.inner.capacity
    }

    /// From a pool chunk (rather than a mapping of its own).
    pub fn is_pooled(&self) -> bool {
        self.inner.pooled
    }

    /// The reference count now (0 once released).
    pub fn ref_count(&self) -> u32 {
        self.inner.state.lock().refs
    }

    /// Where it was allocated, if the leak detector tracks it.
    pub fn allocation_site(&self) -> Option<&'static Location<'static>> {
        self.inner.site
    }

    /// Add one to the reference count.
    pub fn retain(&self) -> Result<(), NativeError> {
        let mut st = self.inner.state.lock();
        match st.refs {
            0 => Err(self.released("retain")),
            u32::MAX => Err(NativeError::RefCountOverflow {
                id: self.inner.id,
                count: u32::MAX,
            }),
            _ => {
                st.refs += 1;
                Ok(())
            }
        }
    }

    /// Take one from the reference count; at zero the memory goes back to the pool and this
    /// returns `Ok(true)`.
    pub fn release(&self) -> Result<bool, NativeError> {
        let memory = {
            let mut st = self.inner.state.lock();
            match st.refs {
                0 => return Err(self.released("release")),
                1 => {
                    st.refs = 0;
                    st.memory.take().expect("memory is present while refs > 0")
                }
                _ => {
                    st.refs -= 1;
                    return Ok(false);
                }
            }
        };
        self.inner
            .pool
            .free(memory, self.inner.len, self.inner.capacity);
        Ok(true)
    }

    /// Free the memory now if no `release` has yet (the owner of a direct buffer died): every
    /// handle of the buffer sees it released from then on. Reported as a leak, as a last
    /// handle dropped unreleased is. True if this call freed it; racing [`Self::release`], it
    /// is exactly one of the two that frees.
    pub(crate) fn reclaim(&self) -> bool {
        let (memory, refs) = {
            let mut st = self.inner.state.lock();
            let Some(memory) = st.memory.take() else {
                return false;
            };
            let refs = std::mem::replace(&mut st.refs, 0);
            (memory, refs)
        };
        let i = &*self.inner;
        let record = LeakRecord {
            buffer_id: i.id,
            len: i.len,
            capacity: i.capacity,
            ref_count: refs,
            site: i
                .site
                .map_or_else(|| "(not tracked)".into(), |l| l.to_string()),
        };
        i.pool.dropped_unreleased(record, i.site);
        i.pool.free(memory, i.len, i.capacity);
        true
    }

    fn released(&self, op: &'static str) -> NativeError {
        NativeError::Released {
            id: self.inner.id,
            op,
        }
    }

    /// The error `op` of `n` bytes at `offset` would return now, if any (released, else out
    /// of bounds), without touching a byte: for a caller that splits one access into
    /// several, to refuse it as a whole before any part of it is done.
    pub(crate) fn check_access(
        &self,
        op: &'static str,
        offset: usize,
        n: usize,
    ) -> Result<(), NativeError> {
        self.with_bytes(op, offset, n, |_| ())
    }

    /// Run `f` on the address of byte `offset`, with `n` bytes from there checked to be inside
    /// the buffer, under the lock, while the memory is the buffer's.
    fn with_bytes<R>(
        &self,
        op: &'static str,
        offset: usize,
        n: usize,
        f: impl FnOnce(*mut u8) -> R,
    ) -> Result<R, NativeError> {
        let st = self.inner.state.lock();
        let memory = st.memory.as_ref().ok_or_else(|| self.released(op))?;
        if !matches!(offset.checked_add(n), Some(end) if end <= self.inner.len) {
            return Err(NativeError::OutOfBounds {
                id: self.inner.id,
                offset,
                len: n,
                buffer_len: self.inner.len,
            });
        }
        let r = f((memory.addr() + offset) as *mut u8);
        drop(st);
        Ok(r)
    }

    /// Copy `data` into the buffer at `offset`.
    pub fn write(&self, offset: usize, data: &[u8]) -> Result<(), NativeError> {
        self.with_bytes("write", offset, data.len(), |p| {
            // SAFETY: `with_bytes` checked `offset + data.len() <= len <= capacity`, so the
            // destination is inside the buffer's memory, which stays mapped and the buffer's
            // alone while the lock is held (it is given back only under the same lock); `data`
            // is a Rust slice, which cannot point into native memory (no accessor hands one
            // out), so the ranges do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) }
        })
    }

    /// Copy `out.len()` bytes from the buffer at `offset` into `out`.
    pub fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), NativeError> {
        self.with_bytes("read", offset, out.len(), |p| {
            // SAFETY: as in `write`: the source is inside the buffer's memory, mapped and
            // owned by the buffer under the lock; every byte of it is initialized (the kernel
            // zero-fills anonymous mappings, and only whole bytes are written); `out` is a
            // distinct Rust slice.
            unsafe { std::ptr::copy_nonoverlapping(p as *const u8, out.as_mut_ptr(), out.len()) }
        })
    }

    /// Set `len` bytes at `offset` to `byte`.
    pub fn fill(&self, offset: usize, len: usize, byte: u8) -> Result<(), NativeError> {
        self.with_bytes("fill", offset, len, |p| {
            // SAFETY: `offset + len` is inside the buffer's memory, mapped and owned by the
            // buffer while the lock is held (see `write`).
            unsafe { std::ptr::write_bytes(p, byte, len) }
        })
    }

    /// Write `v` (little-endian) at `offset`.
    pub fn write_u64(&self, offset: usize, v: u64) -> Result<(), NativeError> {
        self.write(offset, &v.to_le_bytes())
    }

    /// Read a little-endian `u64` at `offset`.
    pub fn read_u64(&self, offset: usize) -> Result<u64, NativeError> {
        let mut b = [0u8; 8];
        self.read(offset, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// A copy of the whole buffer.
    pub fn to_vec(&self) -> Result<Vec<u8>, NativeError> {
        let mut v = vec![0u8; self.inner.len];
        self.read(0, &mut v)?;
        Ok(v)
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let st = self.state.get_mut();
        if let Some(memory) = st.memory.take() {
            let record = LeakRecord {
                buffer_id: self.id,
                len: self.len,
                capacity: self.capacity,
                ref_count: st.refs,
                site: self
                    .site
                    .map_or_else(|| "(not tracked)".into(), |l| l.to_string()),
            };
            self.pool.dropped_unreleased(record, self.site);
            self.pool.free(memory, self.len, self.capacity);
        }
    }
}

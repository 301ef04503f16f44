//! A buffer's memory (a slot of a pool chunk, or a mapping of its own) and how a pooled slot
//! is taken and given back: through the calling thread's cache first (Netty's
//! `PoolThreadCache`), else straight from and to the thread's arena, counting the bytes.

use super::arena::Slot;
use super::chunk::OsMapping;
use super::counters::{add, sub, Counts, Writer};
use super::error::NativeError;
use super::shared::PoolShared;
use super::thread_cache;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Where a buffer's bytes are.
#[derive(Debug)]
pub(super) enum Memory {
    /// A slot of a pool chunk.
    Pooled(Slot),
    /// A mapping of its own.
    Unpooled(OsMapping),
}

impl Memory {
    pub(super) fn addr(&self) -> usize {
        match self {
            Memory::Pooled(s) => s.addr,
            Memory::Unpooled(m) => m.addr(),
        }
    }
}

impl PoolShared {
    /// A pooled buffer's slot of `class` and the buffer's id; `len` and `cap` are counted.
    pub(super) fn alloc_pooled(
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
}

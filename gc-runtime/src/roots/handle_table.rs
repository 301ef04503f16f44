//! Global (persistent) and weak handle tables: slabs of colored-pointer slots outside any
//! scope, shared by all mutators (HotSpot's `OopStorage`).
//!
//! Slots are allocated in fixed chunks that are never freed while the table lives, so a
//! handle keeps a stable slot address; a freed slot is zeroed and reused. The collector scans
//! global slots as strong roots, and weak and phantom slots in Concurrent Process Non-Strong
//! References (clearing dead referents, healing live ones).

use gc_core::{ColoredPtr, ColoredSlot};
use parking_lot::Mutex;
use std::sync::atomic::Ordering;
use std::sync::Arc;

const CHUNK: usize = 256;

struct Slab {
    /// Shared with scans that run without the lock (a chunk never moves or shrinks).
    chunks: Vec<Arc<[ColoredSlot]>>,
    free: Vec<(usize, usize)>,
}

/// A table of handle slots.
pub(crate) struct HandleTable {
    slab: Mutex<Slab>,
}

impl Default for HandleTable {
    fn default() -> Self {
        Self::new()
    }
}

impl HandleTable {
    pub(super) fn new() -> Self {
        HandleTable {
            slab: Mutex::new(Slab {
                chunks: Vec::new(),
                free: Vec::new(),
            }),
        }
    }

    /// A slot holding `ptr`, and its id for [`Self::free`]. The slot pointer stays valid until
    /// the slot is freed or the table drops.
    pub(crate) fn alloc(&self, ptr: ColoredPtr) -> (*const ColoredSlot, usize) {
        let mut s = self.slab.lock();
        if s.free.is_empty() {
            let c = s.chunks.len();
            s.chunks.push(
                (0..CHUNK)
                    .map(|_| ColoredSlot::new(ColoredPtr::NULL))
                    .collect(),
            );
            s.free.extend((0..CHUNK).rev().map(|i| (c, i)));
        }
        let (c, i) = s.free.pop().expect("a free slot");
        let slot = &s.chunks[c][i];
        slot.store(ptr, Ordering::Release);
        (slot as *const ColoredSlot, c * CHUNK + i)
    }

    /// Give the slot with id `id` back.
    pub(crate) fn free(&self, id: usize) {
        let mut s = self.slab.lock();
        let (c, i) = (id / CHUNK, id % CHUNK);
        s.chunks[c][i].store(ColoredPtr::NULL, Ordering::Release);
        s.free.push((c, i));
    }

    /// Call `f` on every slot (free slots hold null). The table lock is held only to take the
    /// list of chunks, so handles can be made and dropped while the scan runs: a slot freed
    /// meanwhile reads as null or as its last value, one allocated meanwhile as null or its new
    /// value.
    pub(crate) fn for_each_slot(&self, mut f: impl FnMut(&ColoredSlot)) {
        self.for_each_slot_with_id(|_, slot| f(slot))
    }

    /// [`Self::for_each_slot`], with each slot's id (as [`Self::alloc`] returned it).
    pub(crate) fn for_each_slot_with_id(&self, mut f: impl FnMut(usize, &ColoredSlot)) {
        let chunks: Vec<Arc<[ColoredSlot]>> = self.slab.lock().chunks.clone();
        for (c, chunk) in chunks.iter().enumerate() {
            for (i, slot) in chunk.iter().enumerate() {
                f(c * CHUNK + i, slot);
            }
        }
    }

    /// The value of the slot with id `id` (null if it is free), or `None` if the table never
    /// had such a slot.
    pub(crate) fn load(&self, id: usize) -> Option<ColoredPtr> {
        let chunk = Arc::clone(self.slab.lock().chunks.get(id / CHUNK)?);
        Some(chunk[id % CHUNK].load(Ordering::Acquire))
    }

    /// Number of slots in use.
    pub(crate) fn len(&self) -> usize {
        let s = self.slab.lock();
        s.chunks.len() * CHUNK - s.free.len()
    }
}

//! Just-allocated objects: the allocation fast path an interpreter's dispatch loop inlines
//! (a JIT's inlined TLAB bump allocation, HotSpot's `MemAllocator` fast path), and the
//! initializing stores into the object it hands out (a compiled allocation's field
//! initialization, which needs no barrier).
//!
//! [`Scope::alloc_fresh`] takes the scope by shared borrow, so it can run inside a stretch
//! that holds [`ObjRef`]s: it bump-allocates a small object on the mutator's private page and
//! zeroes it, and it neither polls nor blocks. Where the allocation would need more — a page
//! refill, a pacing decision, a stall, a medium or large object — it returns `None` and
//! changes nothing; the caller then gives up its `ObjRef`s and calls [`Scope::alloc`] (which
//! polls). Since the mutator is running and the scope is borrowed, no safepoint happens until
//! the borrow ends: the object is on a page born in the current cycle, so it is live for this
//! cycle's marking and in no relocation set of it, like every object allocated since Mark
//! Start.
//!
//! The object comes as a [`Fresh`], valid for the same borrow: its stores
//! ([`Fresh::init`], [`Fresh::init_u64`]) are plain relaxed stores — no collector thread reads
//! an object before a pointer to it has been published (stored with release ordering into a
//! slot, a root region or a handle, or seen in a pause), and publishing orders every
//! initializing store before it (value slots too: [`Fresh::init_value`]). [`Fresh::get`] hands the object out as an ordinary
//! [`ObjRef`] and consumes the `Fresh`, so every initializing store comes before the object
//! can be published. The lifetime ends both at the next call that can reach a safepoint, which the
//! borrow checker enforces as for every `ObjRef`.
//!
//! Initializing stores need no store barrier either (`HeapConfig::track_generations`): the
//! barrier remembers only stores into objects on old pages, and a fresh object is on the
//! mutator's private page, born after the last Pause Mark Start (`alloc_fast` declines an
//! older page), which is eden until the next Pause Mark Start — after which this `Fresh` can
//! no longer be used. The invariant: *every object allocated since the last Pause Mark Start
//! is on an eden page*.

use super::scope::{ObjRef, Scope};
use super::value_slots::{encode_bits, ValueBits};
use gc_core::ColoredPtr;
use std::sync::atomic::Ordering;

/// A just-allocated object, valid (like an [`ObjRef`]) until the next call that can reach a
/// safepoint: its reference slots are null and its raw bytes zero until initialized. See the
/// module documentation.
///
/// Neither `Clone` nor `Copy`: [`Fresh::get`] consumes it, so no relaxed initializing store
/// can follow the object's publication (which needs the `ObjRef` that `get` returns).
#[derive(Debug)]
pub struct Fresh<'a> {
    obj: ObjRef<'a>,
}

impl<'s> Scope<'s> {
    /// Allocate a small object without leaving a safepoint-free stretch: `n_refs` null
    /// reference slots and `n_bytes` zeroed raw bytes on the mutator's private page, or
    /// `None` (nothing allocated) where the allocation needs the slow path — call
    /// [`Scope::alloc`] then. Does not poll: a loop that allocates only this way must poll
    /// elsewhere (a backward jump, a call), as every long-running loop must.
    #[inline(always)]
    pub fn alloc_fresh<'a>(&'a self, shape: u32, n_refs: u32, n_bytes: usize) -> Option<Fresh<'a>> {
        let m = self.mutator();
        let ptr = m.alloc_fast(shape, n_refs, 0, n_bytes as u64)?;
        Some(Fresh {
            obj: ObjRef::from_non_null(ptr, m),
        })
    }

    /// As [`Scope::alloc_fresh`], with `n_values` value slots holding `0.0` after the
    /// reference slots (see [`Scope::alloc_with_values`]); `None` also where `n_values`
    /// exceeds `gc_core::MAX_VALUES` (then [`Scope::alloc_with_values`] says so).
    #[inline(always)]
    pub fn alloc_fresh_with_values<'a>(
        &'a self,
        shape: u32,
        n_refs: u32,
        n_values: u32,
        n_bytes: usize,
    ) -> Option<Fresh<'a>> {
        let m = self.mutator();
        let ptr = m.alloc_fast(shape, n_refs, n_values, n_bytes as u64)?;
        Some(Fresh {
            obj: ObjRef::from_non_null(ptr, m),
        })
    }
}

impl<'a> Fresh<'a> {
    /// Initialize reference slot `i` with `v` (or null): one relaxed store.
    ///
    /// # Panics
    /// If `v` is an object of another heap, or `i` is out of range.
    #[inline(always)]
    pub fn init(&self, i: usize, v: Option<ObjRef<'_>>) {
        // No store barrier: the object is on an eden page (see the module documentation).
        let m = self.obj.mutator();
        let p = v.map_or(ColoredPtr::NULL, |o| o.ptr_of(m, "Fresh::init"));
        self.obj.obj().ref_slot(i).store(p, Ordering::Relaxed);
    }

    /// Initialize value slot `i` with `v`: one relaxed store.
    ///
    /// # Panics
    /// If `v` is an object of another heap, or `i` is out of range.
    #[inline(always)]
    pub fn init_value(&self, i: usize, v: ValueBits<ObjRef<'_>>) {
        // No store barrier: the object is on an eden page (see the module documentation).
        let w = encode_bits(v, self.obj.mutator());
        self.obj.obj().value_slot(i).store(w, Ordering::Relaxed);
    }

    /// Initialize the little-endian u64 at raw byte `offset`.
    ///
    /// # Panics
    /// If `offset..offset + 8` is not inside the raw bytes.
    #[inline(always)]
    pub fn init_u64(&self, offset: usize, v: u64) {
        self.obj.write_u64(offset, v)
    }

    /// The object, as an ordinary [`ObjRef`] for the rest of the stretch.
    #[inline(always)]
    pub fn get(self) -> ObjRef<'a> {
        self.obj
    }
}

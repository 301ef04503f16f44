//! What the load barrier's slow path does in each phase (ZGC's `ZBarrier` slow paths).
//!
//! - **Mark**: the pointer has the previous cycle's color (stale: remap it through the
//!   previous relocation set's forwarding) or Remapped; color it with this cycle's mark color,
//!   mark the object in its page's live map and, if this call marked it, hand it to the
//!   marker (a mutator's buffer or a GC worker's stack).
//! - **MarkComplete**: marking is over; a bad pointer cannot be reached here (every reachable
//!   slot was healed by marking), so it is only recolored.
//! - **Weak loads** (a `WeakRef`): as a strong load, except between Pause Mark End and Pause
//!   Relocate Start, when an unmarked referent reads as null.
//! - **Relocate**: the pointer has this cycle's mark color; if its page is in the relocation
//!   set, relocate the object (or take the winner's copy), else keep the offset; color it
//!   Remapped.

use crate::gc_state::Phase;
use crate::heap::HeapInner;
use gc_core::GoodColor;
use std::sync::atomic::{AtomicU64, Ordering};

impl HeapInner {
    /// The good pointer for the bad pointer `ptr`; `push` receives newly marked offsets.
    #[inline]
    pub(crate) fn make_good(&self, ptr: u64, push: &mut dyn FnMut(u64)) -> u64 {
        debug_assert!(ptr != 0);
        // One pin for the whole slow path: the pins below nest cheaply inside it.
        let _guard = crossbeam_epoch::pin();
        let layout = self.state.layout();
        let off = layout.offset(ptr);
        match self.state.phase() {
            Phase::Mark => {
                let mark = self.state.good();
                let off = self.remap_if_stale(ptr, mark);
                self.mark_object(off, push);
                layout.good(off, mark)
            }
            Phase::MarkComplete => {
                let mark = self.state.good();
                let off = self.remap_if_stale(ptr, mark);
                debug_assert!(
                    self.is_live(off),
                    "a barrier after Pause Mark End met an unmarked object at {off:#x}"
                );
                layout.good(off, mark)
            }
            Phase::Relocate => layout.good(self.relocate_or_remap(off), GoodColor::Remapped),
        }
    }

    /// During marking: a pointer with the previous cycle's mark color may point into the
    /// previous relocation set; return the object's current offset.
    #[inline]
    pub(crate) fn remap_if_stale(&self, ptr: u64, mark: GoodColor) -> u64 {
        let layout = self.state.layout();
        let off = layout.offset(ptr);
        if !layout.color(ptr).intersects(mark.other_mark().color()) {
            return off;
        }
        self.remap(off)
    }

    /// The current offset of the object that was at `off` (forwarded if its page was
    /// relocated, else unchanged).
    pub(crate) fn remap(&self, off: u64) -> u64 {
        let guard = crossbeam_epoch::pin();
        match self.forwarding_index.get(off, &guard) {
            Some(f) if f.page().contains(off) => {
                let idx = f.page().index_of(off) as u64;
                f.find(idx).unwrap_or_else(|| {
                    panic!(
                        "stale pointer to {off:#x} in relocated page {:?} has no forwarding entry \
                         (a live object was not relocated)",
                        f.page()
                    )
                })
            }
            _ => off,
        }
    }

    /// During relocation: relocate the object at `off` if its page is in the relocation set.
    pub(crate) fn relocate_or_remap(&self, off: u64) -> u64 {
        let guard = crossbeam_epoch::pin();
        match self.forwarding_index.get(off, &guard) {
            Some(f) if f.page().contains(off) => self.relocate_object(f, off),
            _ => off,
        }
    }

    /// [`Self::relocate_or_remap`] inside a pause (roots at Pause Relocate Start), where
    /// nothing may wait for a GC worker.
    pub(crate) fn relocate_or_remap_in_pause(&self, off: u64) -> u64 {
        let guard = crossbeam_epoch::pin();
        match self.forwarding_index.get(off, &guard) {
            Some(f) if f.page().contains(off) => self.relocate_object_in_pause(f, off),
            _ => off,
        }
    }

    /// Mark the object at `off` strongly; pass it to `push` if this call marked it.
    /// Objects on pages allocated in this cycle are live without marking.
    #[inline]
    pub(crate) fn mark_object(&self, off: u64, push: &mut dyn FnMut(u64)) {
        let seq = self.state.seqnum();
        let guard = crossbeam_epoch::pin();
        let page = self
            .mem
            .page_table()
            .get(off, &guard)
            .unwrap_or_else(|| panic!("marking met a pointer to {off:#x} outside every page"));
        if page.seqnum() == seq {
            return;
        }
        let idx = page.index_of(off);
        let live = page.live_map();
        if live.is_strongly_marked(seq, idx) {
            return;
        }
        // The object's size is added to the live bytes when it is traced (the tracer reads the
        // header anyway): marking itself touches only the live map, one cache miss less.
        if live.mark(seq, idx, true, 0).newly_strong {
            push(off);
        }
    }

    /// True if the object at `off` is live in the current cycle (marked, or allocated since
    /// Pause Mark Start).
    pub(crate) fn is_live(&self, off: u64) -> bool {
        let seq = self.state.seqnum();
        let guard = crossbeam_epoch::pin();
        match self.mem.page_table().get(off, &guard) {
            Some(p) => p.seqnum() == seq || p.live_map().is_marked(seq, p.index_of(off)),
            None => false,
        }
    }

    /// The weak-load barrier (a `WeakRef`'s slot): `strong` is the strong barrier load of the
    /// slot, used in every phase but one. Between Pause Mark End and Pause Relocate Start an
    /// unmarked referent reads as null (it is about to be cleared: it must not be resurrected);
    /// a marked one is healed to the good color like any slot.
    pub(crate) fn load_weak(&self, slot: &AtomicU64, strong: impl FnOnce() -> u64) -> u64 {
        if self.state.phase() != Phase::MarkComplete {
            return strong();
        }
        let p = slot.load(Ordering::Acquire);
        if p == 0 {
            return 0;
        }
        let good = self.state.good();
        let off = self.remap_if_stale(p, good);
        if !self.is_live(off) {
            return 0;
        }
        let g = self.state.layout().good(off, good);
        if g != p {
            gc_core::self_heal(slot, p, g, self.state.bad_mask());
        }
        g
    }
}

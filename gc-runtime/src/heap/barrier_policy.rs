//! What the load barrier's slow path does in each phase (ZGC's `ZBarrier` slow paths), for a
//! mutator. gc-core's barrier calls [`MutatorSlowPath::make_good`] on a bad pointer and heals
//! the slot with the result.
//!
//! - **Mark**: the pointer has the previous cycle's color (stale: remap it through the
//!   previous relocation set's forwarding) or Remapped; color it with this cycle's mark color,
//!   mark the object in its page's live map and, if this call marked it, put it in the
//!   mutator's mark buffer (handed to the GC workers in batches): `mark::mark_barrier`.
//! - **MarkComplete**: marking is over; a bad pointer cannot be reached here (every reachable
//!   slot was healed by marking), so it is only recolored.
//! - **Relocate**: the pointer has this cycle's mark color; if its page is in the relocation
//!   set, relocate the object (or take the winner's copy), else keep the offset; color it
//!   Remapped: `Relocate::relocate_or_remap`.
//!   After a minor cycle, a pointer of its mark color is relocated the same way through the
//!   minor's own relocation set (the sparse young pages it evacuates); one of the last
//!   major's color is remapped through the major's set, which the minors keep; any other is
//!   only recolored.
//! - **Weak loads** (a `WeakRef`): as a strong load, except between Pause Mark End and Pause
//!   Relocate Start, when an unmarked referent reads as null ([`load_weak`]).

use super::heap_inner::HeapInner;
use crate::context::BarrierPhase;
use crate::mark;
use crate::roots::MutatorShared;
use gc_core::{ColoredPtr, ColoredSlot, GoodColor, Offset, SlowPath};
use std::sync::atomic::Ordering;

/// The barrier slow path of a mutator: marks into its buffer, relocates with the shared
/// relocation targets.
pub(crate) struct MutatorSlowPath<'a> {
    pub(crate) heap: &'a HeapInner,
    pub(crate) shared: &'a MutatorShared,
}

impl SlowPath for MutatorSlowPath<'_> {
    fn make_good(&self, ptr: ColoredPtr) -> ColoredPtr {
        debug_assert!(!ptr.is_null());
        let cx = &self.heap.cx;
        let layout = cx.layout();
        match cx.state.phase() {
            BarrierPhase::Mark => mark::mark_barrier(cx, ptr, &mut |off| self.mark_push(off)),
            BarrierPhase::MarkComplete => {
                let mark = cx.state.good();
                let off = cx.remap_stale(ptr);
                debug_assert!(
                    mark::is_live(cx, off),
                    "a barrier after Pause Mark End met an unmarked object at {off:#x}"
                );
                mark::good_for(cx, off, mark)
            }
            // After a minor cycle: a pointer of its mark color may lead into the young pages
            // it evacuates, and is relocated through its own forwarding index (the minor
            // relocation set); one of the last major's color (an old-to-old slot the minor
            // never visited) is remapped through the major's, which the index keeps; any
            // other color's offset is current (the minor healed it), and may lie on a page
            // that reuses a from-page's memory, so it is only recolored.
            BarrierPhase::Relocate if cx.state.is_minor() => {
                let off = if layout.color(ptr) == cx.state.mark().color() {
                    self.heap.relocate.relocate_or_remap(
                        cx,
                        &cx.minor_forwarding,
                        layout.offset(ptr),
                        &self.shared.thread,
                    )
                } else {
                    cx.remap_stale(ptr)
                };
                layout.good(off, GoodColor::Remapped)
            }
            BarrierPhase::Relocate => layout.good(
                self.heap.relocate.relocate_or_remap(
                    cx,
                    &cx.forwarding,
                    layout.offset(ptr),
                    &self.shared.thread,
                ),
                GoodColor::Remapped,
            ),
        }
    }
}

impl MutatorSlowPath<'_> {
    fn mark_push(&self, off: Offset) {
        self.shared
            .mark_buffer
            .push(off, &self.heap.mark, &self.shared.thread);
    }
}

/// The weak-load barrier (a `WeakRef`'s slot): `strong` is the strong barrier load of the
/// slot, used in every phase but one. Between Pause Mark End and Pause Relocate Start an
/// unmarked referent reads as null (it is about to be cleared: it must not be resurrected); a
/// marked one is healed to the good color like any slot.
///
/// The liveness test is only as good as the slot value it tests, read before it: a thread
/// preempted between the read and the test can resume after Concurrent Process Non-Strong
/// References cleared the slot (its referent was dead), Concurrent Select Relocation Set freed
/// the referent's page as empty and a page of this cycle took the same memory (a relocation
/// target, say), on which every offset reads as live. So the answer is confirmed on the slot:
/// the heal is a CAS from the value read, made even when that value is good already, and a
/// slot that changed meanwhile is judged again (null: dead). This is sound because the slot is
/// cleared before the page is freed, and the page's reuse is published through the page table
/// (release) that the liveness test reads (acquire): a test that saw the reused page is
/// followed by a CAS that sees the cleared slot. (ZGC closes the same window with a handshake
/// after processing its weak roots, before any page is freed.)
pub(crate) fn load_weak(
    heap: &HeapInner,
    slot: &ColoredSlot,
    strong: impl FnOnce() -> ColoredPtr,
) -> ColoredPtr {
    let cx = &heap.cx;
    if cx.state.phase() != BarrierPhase::MarkComplete {
        return strong();
    }
    let good = cx.state.good();
    let mut p = slot.load(Ordering::Acquire);
    loop {
        if p.is_null() {
            return ColoredPtr::NULL;
        }
        // Where a test holds this thread, as a preemption would (see above).
        heap.weak_upgrade_hold.pass();
        let off = cx.remap_stale(p);
        if !mark::is_live(cx, off) {
            return ColoredPtr::NULL;
        }
        let g = mark::good_for(cx, off, good);
        match slot.compare_exchange(p, g, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return g,
            // Healed to the same pointer by the collector or another upgrade.
            Err(current) if current == g => return g,
            // Cleared (the referent was dead) or changed: judge the new value.
            Err(current) => p = current,
        }
    }
}

//! Weak handles and their processing (ZGC's `ZWeakProcessor` over its weak `OopStorage`):
//! the table of [`crate::WeakRef`] slots, cleared in Concurrent Process Non-Strong References
//! when their referent was not marked, healed to the good color when it was.
//!
//! A second table holds *phantom* slots, one per direct buffer (`direct_buffers`): the
//! collector's own reference to a buffer's owner object, which nothing ever loads. It is
//! processed the same way, but a dead referent's slot is not freed here: its id is handed to
//! the direct buffers' cleaner, which frees the native memory and then the slot (as JDK's
//! `Cleaner` is told of a dead referent through its `PhantomReference`). The liveness test is
//! the live map's *marked* bit, strong or finalizable, the test ZGC applies to phantom
//! referents.
//!
//! Nobody relocates weak handles at Pause Relocate Start (only the `stw` pause does, with the
//! strong roots), so after a cycle a weak slot may still point where its object was before
//! that cycle's relocation. Concurrent Mark Roots of the next cycle remaps such slots
//! ([`WeakProcessor::remap_stale`]) while the previous relocation set's forwarding is still
//! installed, so that none is stale after Pause Mark End: from then on the forwarding index is
//! reset concurrently, and a weak load racing that reset could not find the object any more.
//!
//! Between Pause Mark End and that clearing, a weak load must not resurrect an unmarked
//! referent: the barrier for weak loads (`barrier_policy::load_weak`) reads it as null, and
//! confirms a live answer on the slot with a CAS, since a load preempted long enough can test
//! a referent whose slot this processing cleared and whose page selection then freed.

use super::marker as mark;
use crate::context::GcContext;
use crate::roots::HandleTable;
use gc_core::{Color, ColoredPtr, ColoredSlot};
use std::sync::atomic::Ordering;

#[derive(Default)]
pub(crate) struct WeakProcessor {
    weaks: HandleTable,
    phantoms: HandleTable,
}

/// What Concurrent Process Non-Strong References did.
#[derive(Debug, Default)]
pub(crate) struct WeakResult {
    /// Weak handles cleared (referent dead).
    pub(crate) cleared: u64,
    /// Weak handles kept (referent live), healed to the good color.
    pub(crate) kept: u64,
    /// Ids of the phantom slots whose referent died: each now holds null and stays allocated
    /// until its owner (the cleaner) frees it.
    pub(crate) dead_phantoms: Vec<usize>,
}

impl WeakProcessor {
    /// The weak handle table.
    pub(crate) fn handles(&self) -> &HandleTable {
        &self.weaks
    }

    /// The phantom slot table (see the module documentation).
    pub(crate) fn phantoms(&self) -> &HandleTable {
        &self.phantoms
    }

    /// Call `f` on every weak and phantom slot.
    pub(crate) fn for_each_slot(&self, mut f: impl FnMut(&ColoredSlot)) {
        self.weaks.for_each_slot(&mut f);
        self.phantoms.for_each_slot(f)
    }

    /// Concurrent Mark Roots: rewrite every weak slot that carries a stale mark color (the
    /// last major's or the latest evacuating minor's) (it may point into the previous relocation set) to its object's current offset,
    /// colored Remapped — not the mark color: the object is not marked by this, and a strong
    /// load of the slot during marking must still mark it. Returns the slots rewritten.
    ///
    /// The CAS from the value read may fail: a concurrent upgrade healed the slot itself, the
    /// handle was dropped (null), or its slot now holds a new handle's good pointer. A non-null
    /// weak slot is stale only if its object was live at the previous Pause Mark End (else the
    /// slot was cleared), so its forwarding entry exists.
    pub(crate) fn remap_stale(&self, cx: &GcContext) -> u64 {
        let layout = cx.layout();
        let mut n = 0;
        self.for_each_slot(|slot| {
            let p = slot.load(Ordering::Acquire);
            // A stale color names its forwarding index: the last major's or the latest
            // evacuating minor's.
            let Some(index) = (!p.is_null()).then(|| cx.index_for(p)).flatten() else {
                return;
            };
            let off = index.remap(layout.offset(p));
            let new = layout.with_color(off, Color::REMAPPED);
            if slot
                .compare_exchange(p, new, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                n += 1;
            }
        });
        n
    }

    /// Concurrent Process Non-Strong References: clear weak handles whose referent was not
    /// marked; heal the others to the good color. The same for phantom slots, whose dead ones
    /// are listed for the cleaner.
    pub(crate) fn process(&self, cx: &GcContext) -> WeakResult {
        let mut r = WeakResult::default();
        self.weaks
            .for_each_slot(|slot| match process_slot(cx, slot) {
                Some(true) => r.kept += 1,
                Some(false) => r.cleared += 1,
                None => {}
            });
        // Only the collector writes a phantom slot (nothing loads it), so the slot read dead
        // is the one cleared: no handle can have been dropped or re-made in it meanwhile.
        self.phantoms.for_each_slot_with_id(|id, slot| {
            if process_slot(cx, slot) == Some(false) {
                r.dead_phantoms.push(id);
            }
        });
        r
    }
}

/// Clear `slot` if its referent is dead, else heal it to the good color: `Some(live)`, or
/// `None` for an empty slot.
fn process_slot(cx: &GcContext, slot: &ColoredSlot) -> Option<bool> {
    let good = cx.state.good();
    let p = slot.load(Ordering::Acquire);
    if p.is_null() {
        return None;
    }
    let off = cx.remap_stale(p);
    let live = mark::is_live(cx, off);
    let new = if live {
        mark::good_for(cx, off, good)
    } else {
        ColoredPtr::NULL
    };
    // A concurrent upgrade may have healed it to the same value: ignore failure.
    let _ = slot.compare_exchange(p, new, Ordering::AcqRel, Ordering::Acquire);
    Some(live)
}

//! Weak handles and their processing (ZGC's `ZWeakProcessor` over its weak `OopStorage`):
//! the table of [`crate::WeakRef`] slots, cleared in Concurrent Process Non-Strong References
//! when their referent was not marked, healed to the good color when it was.
//!
//! Nobody relocates weak handles at Pause Relocate Start (only the `stw` pause does, with the
//! strong roots), so after a cycle a weak slot may still point where its object was before
//! that cycle's relocation. Concurrent Mark Roots of the next cycle remaps such slots
//! ([`WeakProcessor::remap_stale`]) while the previous relocation set's forwarding is still
//! installed, so that none is stale after Pause Mark End: from then on the forwarding index is
//! reset concurrently, and a weak load racing that reset could not find the object any more.
//!
//! Between Pause Mark End and that clearing, a weak load must not resurrect an unmarked
//! referent: the barrier for weak loads (`barrier_policy::load_weak`) reads it as null.

use crate::gc_context::GcContext;
use crate::handle_table::HandleTable;
use crate::mark;
use gc_core::{Color, ColoredPtr};
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Default)]
pub(crate) struct WeakProcessor {
    weaks: HandleTable,
}

impl WeakProcessor {
    /// The weak handle table.
    pub(crate) fn handles(&self) -> &HandleTable {
        &self.weaks
    }

    /// Call `f` on every weak slot.
    pub(crate) fn for_each_slot(&self, f: impl FnMut(&AtomicU64)) {
        self.weaks.for_each_slot(f)
    }

    /// Concurrent Mark Roots: rewrite every weak slot that carries the previous cycle's mark
    /// color (it may point into the previous relocation set) to its object's current offset,
    /// colored Remapped — not the mark color: the object is not marked by this, and a strong
    /// load of the slot during marking must still mark it. Returns the slots rewritten.
    ///
    /// The CAS from the value read may fail: a concurrent upgrade healed the slot itself, the
    /// handle was dropped (0), or its slot now holds a new handle's good pointer. A non-null
    /// weak slot is stale only if its object was live at the previous Pause Mark End (else the
    /// slot was cleared), so its forwarding entry exists.
    pub(crate) fn remap_stale(&self, cx: &GcContext) -> u64 {
        let layout = cx.layout();
        let stale = cx.state.good().other_mark().color();
        let mut n = 0;
        self.weaks.for_each_slot(|slot| {
            let p = ColoredPtr::from_raw(slot.load(Ordering::Acquire));
            if p.is_null() || !layout.color(p).intersects(stale) {
                return;
            }
            let off = cx.forwarding.remap(layout.offset(p));
            let new = layout.with_color(off, Color::REMAPPED);
            if slot
                .compare_exchange(p.raw(), new.raw(), Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                n += 1;
            }
        });
        n
    }

    /// Concurrent Process Non-Strong References: clear weak handles whose referent was not
    /// marked; heal the others to the good color. Returns (cleared, kept).
    pub(crate) fn process(&self, cx: &GcContext) -> (u64, u64) {
        let layout = cx.layout();
        let good = cx.state.good();
        let (mut cleared, mut kept) = (0, 0);
        self.weaks.for_each_slot(|slot| {
            let p = ColoredPtr::from_raw(slot.load(Ordering::Acquire));
            if p.is_null() {
                return;
            }
            let off = cx.forwarding.remap_if_stale(layout, p, good);
            let new = if mark::is_live(cx, off) {
                kept += 1;
                layout.good(off, good)
            } else {
                cleared += 1;
                ColoredPtr::NULL
            };
            // A concurrent upgrade may have healed it to the same value: ignore failure.
            let _ = slot.compare_exchange(p.raw(), new.raw(), Ordering::AcqRel, Ordering::Acquire);
        });
        (cleared, kept)
    }
}

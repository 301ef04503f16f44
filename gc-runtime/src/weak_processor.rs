//! Weak handles and their processing (ZGC's `ZWeakProcessor` over its weak `OopStorage`):
//! the table of [`crate::WeakRef`] slots, cleared in Concurrent Process Non-Strong References
//! when their referent was not marked, healed to the good color when it was. At Pause
//! Relocate Start `Relocate::relocate_roots` remaps the survivors with the strong roots.
//!
//! Between Pause Mark End and that clearing, a weak load must not resurrect an unmarked
//! referent: the barrier for weak loads (`barrier_policy::load_weak`) reads it as null.

use crate::gc_context::GcContext;
use crate::handle_table::HandleTable;
use crate::mark;
use gc_core::ColoredPtr;
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

//! Root processing in the pauses (JDK 15 style, so a pause is O(threads + roots)):
//! mutators' handle stacks, global handles and registered root regions are strong roots;
//! weak handles are remapped at Pause Relocate Start and cleared or healed by Concurrent
//! Process Non-Strong References.

use crate::heap::HeapInner;
use crate::mutator::MutatorShared;
use gc_core::GoodColor;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

impl HeapInner {
    /// Call `f` on every strong root slot. Mutators must be stopped (or blocked).
    pub(crate) fn for_each_strong_root(
        &self,
        muts: &[Arc<MutatorShared>],
        f: &mut dyn FnMut(&AtomicU64),
    ) {
        for m in muts {
            for slot in m.handles.live_slots() {
                f(slot);
            }
        }
        self.globals.for_each_slot(|s| f(s));
        for r in self.regions.lock().iter() {
            for slot in r.slots.iter() {
                f(slot);
            }
        }
    }

    /// Pause Mark Start: make every root good (mark color), mark its object, queue it.
    ///
    /// Slots are healed with a CAS, as the barrier heals: a root region may be cleared by a
    /// thread that is not a running mutator (`RootRegion::clear_from` needs no scope), even
    /// during a pause, and that null must not be overwritten with the old object.
    pub(crate) fn mark_roots(&self, muts: &[Arc<MutatorShared>]) -> u64 {
        let mut n = 0;
        let bad = self.state.bad_mask();
        let q = &self.mark_queue;
        self.for_each_strong_root(muts, &mut |slot| {
            let p = slot.load(Ordering::Acquire);
            if p == 0 {
                return;
            }
            n += 1;
            if p & bad != 0 {
                let good = self.make_good(p, &mut |o| q.push(o));
                gc_core::self_heal(slot, p, good, bad);
            } else {
                self.mark_object(self.state.layout().offset(p), &mut |o| q.push(o));
            }
        });
        n
    }

    /// Pause Relocate Start: relocate or remap every root, weak handles included (healed
    /// with a CAS, as in [`Self::mark_roots`]).
    pub(crate) fn relocate_roots(&self, muts: &[Arc<MutatorShared>]) -> u64 {
        let mut n = 0;
        let bad = self.state.bad_mask();
        let layout = self.state.layout();
        let mut fix = |slot: &AtomicU64| {
            let p = slot.load(Ordering::Acquire);
            if p & bad != 0 {
                n += 1;
                let good = layout.good(
                    self.relocate_or_remap_in_pause(layout.offset(p)),
                    GoodColor::Remapped,
                );
                gc_core::self_heal(slot, p, good, bad);
            }
        };
        self.for_each_strong_root(muts, &mut fix);
        self.weaks.for_each_slot(|s| fix(s));
        n
    }

    /// Concurrent Process Non-Strong References: clear weak handles whose referent was not
    /// marked; heal the others to the good color. Returns (cleared, kept).
    pub(crate) fn process_weak_handles(&self) -> (u64, u64) {
        let layout = self.state.layout();
        let good = self.state.good();
        let (mut cleared, mut kept) = (0, 0);
        self.weaks.for_each_slot(|slot| {
            let p = slot.load(Ordering::Acquire);
            if p == 0 {
                return;
            }
            let off = self.remap_if_stale(p, good);
            let new = if self.is_live(off) {
                kept += 1;
                layout.good(off, good)
            } else {
                cleared += 1;
                0
            };
            // A concurrent upgrade may have healed it to the same value: ignore failure.
            let _ = slot.compare_exchange(p, new, Ordering::AcqRel, Ordering::Acquire);
        });
        (cleared, kept)
    }
}

//! The strong root sets (ZGC's `ZRoots`): every attached mutator's handle stack, the global
//! handles and the registered root regions. This module only keeps and enumerates them;
//! what a phase does with a root is the phase's business (`Mark::mark_roots` in Concurrent
//! Mark Roots, or inside the `stw` pause; `Relocate::relocate_roots` in the `stw` pause; the
//! verifier). Weak handles are not strong roots: the `WeakProcessor` owns them.
//!
//! Enumeration holds no lock while it calls back (the root lists are snapshots, the global
//! table is walked chunk by chunk), so it may run while mutators run, push and pop handles,
//! and make or drop globals and regions.

use super::handle_table::HandleTable;
use super::mutator_shared::MutatorShared;
use gc_core::{ColoredPtr, ColoredSlot};
use parking_lot::Mutex;
use std::sync::Arc;

/// The slots of one registered root region (see `RootRegion`).
pub(crate) struct RegionSlots {
    pub(crate) slots: Box<[ColoredSlot]>,
}

#[derive(Default)]
pub(crate) struct Roots {
    mutators: Mutex<Vec<Arc<MutatorShared>>>,
    globals: HandleTable,
    regions: Mutex<Vec<Arc<RegionSlots>>>,
}

impl Roots {
    /// Register an attached mutator (inside the safepoint's attach protocol).
    pub(crate) fn add_mutator(&self, m: Arc<MutatorShared>) {
        self.mutators.lock().push(m);
    }

    /// Unregister a detaching mutator.
    pub(crate) fn remove_mutator(&self, m: &Arc<MutatorShared>) {
        self.mutators.lock().retain(|x| !Arc::ptr_eq(x, m));
    }

    /// The attached mutators now.
    pub(crate) fn mutators(&self) -> Vec<Arc<MutatorShared>> {
        self.mutators.lock().clone()
    }

    /// The global handle table.
    pub(crate) fn globals(&self) -> &HandleTable {
        &self.globals
    }

    /// Register a root region of `capacity` null slots.
    pub(crate) fn add_region(&self, capacity: usize) -> Arc<RegionSlots> {
        let r = Arc::new(RegionSlots {
            slots: (0..capacity)
                .map(|_| ColoredSlot::new(ColoredPtr::NULL))
                .collect(),
        });
        self.regions.lock().push(r.clone());
        r
    }

    pub(crate) fn remove_region(&self, r: &Arc<RegionSlots>) {
        self.regions.lock().retain(|x| !Arc::ptr_eq(x, r));
    }

    /// Call `f` on every strong root slot: the handle stacks of `muts` (the mutators a pause
    /// stopped, or [`Self::mutators`] for a concurrent scan), the globals, the regions.
    ///
    /// Generic, not a `dyn` callback: an interpreter's root region holds thousands of slots,
    /// mostly null, and a call per slot made the walk of `lox`'s 16,705 root slots cost
    /// 32–48 µs of every cycle; inlined, the walk is a loop of loads.
    pub(crate) fn for_each_strong_root(
        &self,
        muts: &[Arc<MutatorShared>],
        mut f: impl FnMut(&ColoredSlot),
    ) {
        for m in muts {
            for slot in m.handles.live_slots() {
                f(slot);
            }
        }
        self.globals.for_each_slot(|s| f(s));
        let regions = self.regions.lock().clone();
        for r in &regions {
            for slot in r.slots.iter() {
                f(slot);
            }
        }
    }
}

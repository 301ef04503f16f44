//! What the collector did to value slots (the NaN-boxed slots of `gc_core::value`): how many
//! it healed and how many it pointed at a moved object, per path — the mutators' value barrier,
//! GC marking, the `stw` mode's full remap. No ZGC counter has these (ZGC has no value slots);
//! they are this collector's way to show a test that the value-slot paths ran, as
//! `CycleRecord::stale_slots_remapped` shows it for reference slots.

use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};

/// Value-slot counters of one heap since its creation (relaxed: totals, not a protocol).
#[derive(Default)]
pub(crate) struct ValueSlotCounts {
    barrier_heals: AtomicU64,
    barrier_moves: AtomicU64,
    mark_heals: AtomicU64,
    mark_moves: AtomicU64,
    full_remap_moves: AtomicU64,
}

/// A snapshot of `ValueSlotCounts` (`Heap::value_slot_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ValueSlotStats {
    /// Value slots a mutator's barrier found holding a pointer with a bad color and healed
    /// (its own CAS, or one a racing thread won).
    pub barrier_heals: u64,
    /// Of those, the ones whose object had moved: the barrier relocated it or remapped the
    /// pointer through a forwarding table.
    pub barrier_moves: u64,
    /// Value slots GC marking found holding a pointer with a bad color and healed.
    pub mark_heals: u64,
    /// Of those, the ones whose object the previous cycle had moved (remapped while tracing).
    pub mark_moves: u64,
    /// Value slots the `stw` mode's full remap pointed at a moved object.
    pub full_remap_moves: u64,
}

impl ValueSlotCounts {
    /// A mutator's value barrier healed a slot; `moved` if its object had moved.
    pub(crate) fn barrier_healed(&self, moved: bool) {
        self.barrier_heals.fetch_add(1, Ordering::Relaxed);
        if moved {
            self.barrier_moves.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A GC worker's totals: `heals` value slots healed, `moves` of them to a moved object.
    pub(crate) fn marked(&self, heals: u64, moves: u64) {
        self.mark_heals.fetch_add(heals, Ordering::Relaxed);
        self.mark_moves.fetch_add(moves, Ordering::Relaxed);
    }

    /// The full remap pointed `moves` value slots at moved objects.
    pub(crate) fn full_remapped(&self, moves: u64) {
        self.full_remap_moves.fetch_add(moves, Ordering::Relaxed);
    }

    /// The totals now.
    pub(crate) fn snapshot(&self) -> ValueSlotStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ValueSlotStats {
            barrier_heals: get(&self.barrier_heals),
            barrier_moves: get(&self.barrier_moves),
            mark_heals: get(&self.mark_heals),
            mark_moves: get(&self.mark_moves),
            full_remap_moves: get(&self.full_remap_moves),
        }
    }
}

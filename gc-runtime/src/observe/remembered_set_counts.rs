//! What the generational bookkeeping did (`HeapConfig::track_generations`): old-to-young
//! stores the store barrier remembered, young slots remembered at a moved object's new
//! address, pages promoted at Pause Mark Start, pages minor cycles aged or promoted in place
//! and the promoted objects' slots they remembered, and what the verifier checked. ZGC keeps no
//! such totals; they are this collector's way to show a test that the paths of the store
//! barrier, the remembered set and its verification ran (as `ValueSlotStats` does for value
//! slots).

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};

/// Remembered-set counters of one heap since its creation (relaxed: totals, not a protocol).
#[derive(Default)]
pub(crate) struct RememberedSetCounts {
    barrier_remembered: AtomicU64,
    relocation_remembered: AtomicU64,
    objects_moved_remembered: AtomicU64,
    in_place_remembered: AtomicU64,
    granules_promoted: AtomicU64,
    granules_promoted_in_pause: AtomicU64,
    verified_old_slots: AtomicU64,
    verified_young_slots: AtomicU64,
    verifications: AtomicU64,
    scanned: AtomicU64,
    scanned_kept: AtomicU64,
    pages_aged: AtomicU64,
    pages_promoted_in_place: AtomicU64,
    promoted_slots_remembered: AtomicU64,
    major_copies_read: AtomicU64,
    majors_unremembered: AtomicU64,
}

/// A snapshot of `RememberedSetCounts` (`Heap::remembered_set_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RememberedSetStats {
    /// Old-to-young stores (an old holder receiving a young value) whose slot the store
    /// barrier remembered: the ones that set its bit. (A store to a slot remembered already
    /// is not counted: a shared counter on every slow-path store would cost more than the
    /// rest of it.)
    pub barrier_remembered: u64,
    /// Slots pointing young that relocation remembered at an object's new address on an old
    /// page (GC workers' and mutators' copies, in-place compaction).
    pub relocation_remembered: u64,
    /// Objects copied or compacted onto an old page that had at least one slot pointing
    /// young.
    pub objects_moved_remembered: u64,
    /// Of `relocation_remembered`, the slots in-place compaction remembered.
    pub in_place_remembered: u64,
    /// Granules of young pages made old by full cycles (the Pause Mark Start's flip of the
    /// young tag, rewritten by the cycle's Concurrent Mark Roots: `GenerationMap::settle`).
    pub granules_promoted: u64,
    /// Of those, the granules a Pause Mark Start rewrote itself because the last full
    /// cycle had not settled its flip: never, unless a full cycle ended before its
    /// Concurrent Mark Roots. The pause's one walk over the map, which grows with the heap.
    pub granules_promoted_in_pause: u64,
    /// Slots (reference and value slots) of reachable objects on old pages the verifier
    /// checked for remembered-set completeness.
    pub verified_old_slots: u64,
    /// Of those, the ones pointing into a young page (each had its bit, or the verifier
    /// failed).
    pub verified_young_slots: u64,
    /// Pauses in which the verifier checked the remembered set.
    pub verifications: u64,
    /// Remembered slots minor cycles' scans visited (each taken from the previous bitmap).
    pub scanned: u64,
    /// Of those, the ones that still pointed young and were remembered again.
    pub scanned_kept: u64,
    /// Young pages with survivors that minor cycles aged (kept young, one minor older).
    pub pages_aged: u64,
    /// Young pages with survivors that minor cycles promoted in place (made old without
    /// moving an object) once their age reached `HeapConfig::tenuring_threshold`.
    pub pages_promoted_in_place: u64,
    /// Slots of objects on pages promoted in place that pointed young or carried the minor's
    /// mark color, remembered by the minor's Concurrent Relocate.
    pub promoted_slots_remembered: u64,
    /// Objects a full cycle copied onto an old page whose original had a remembered slot, so
    /// the copy was read for young slots (`Generations::original_remembered`); every other
    /// copy of a full cycle skips that read.
    pub major_copies_read: u64,
    /// Full cycles whose Pause Mark Start stopped the store barrier's remembering until the
    /// next full cycle (no minor was expected before it: minors did not pay; see
    /// `Generations::remembering`).
    pub majors_unremembered: u64,
}

impl RememberedSetCounts {
    /// The store barrier set a slot's bit.
    #[inline]
    pub(crate) fn barrier_remembered(&self) {
        self.barrier_remembered.fetch_add(1, Ordering::Relaxed);
    }

    /// An object moved onto an old page with `slots` slots pointing young (remembered there),
    /// by in-place compaction if `in_place`.
    pub(crate) fn moved(&self, slots: u64, in_place: bool) {
        if slots == 0 {
            return;
        }
        self.relocation_remembered
            .fetch_add(slots, Ordering::Relaxed);
        self.objects_moved_remembered
            .fetch_add(1, Ordering::Relaxed);
        if in_place {
            self.in_place_remembered.fetch_add(slots, Ordering::Relaxed);
        }
    }

    /// A full cycle made `granules` young granules old (`in_pause`: Pause Mark Start had to
    /// walk the map for them).
    pub(crate) fn promoted(&self, granules: u64, in_pause: bool) {
        self.granules_promoted
            .fetch_add(granules, Ordering::Relaxed);
        if in_pause {
            self.granules_promoted_in_pause
                .fetch_add(granules, Ordering::Relaxed);
        }
    }

    /// One verification checked `old` slots of old objects, `young` of them pointing young.
    pub(crate) fn verified(&self, old: u64, young: u64) {
        self.verified_old_slots.fetch_add(old, Ordering::Relaxed);
        self.verified_young_slots
            .fetch_add(young, Ordering::Relaxed);
        self.verifications.fetch_add(1, Ordering::Relaxed);
    }

    /// A minor cycle's scan visited `visited` remembered slots and kept `kept`.
    pub(crate) fn scanned(&self, visited: u64, kept: u64) {
        self.scanned.fetch_add(visited, Ordering::Relaxed);
        self.scanned_kept.fetch_add(kept, Ordering::Relaxed);
    }

    /// A minor aged a young page.
    pub(crate) fn aged(&self) {
        self.pages_aged.fetch_add(1, Ordering::Relaxed);
    }

    /// A minor began to promote a young page in place.
    pub(crate) fn promoted_in_place(&self) {
        self.pages_promoted_in_place.fetch_add(1, Ordering::Relaxed);
    }

    /// A full cycle's copy was read for young slots: its original had a remembered slot.
    pub(crate) fn major_copy_read(&self) {
        self.major_copies_read.fetch_add(1, Ordering::Relaxed);
    }

    /// A full cycle's Pause Mark Start stopped the store barrier's remembering.
    pub(crate) fn major_unremembered(&self) {
        self.majors_unremembered.fetch_add(1, Ordering::Relaxed);
    }

    /// A minor's scan of its promoted pages remembered `slots` slots.
    pub(crate) fn promoted_remembered(&self, slots: u64) {
        self.promoted_slots_remembered
            .fetch_add(slots, Ordering::Relaxed);
    }

    /// The totals now.
    pub(crate) fn snapshot(&self) -> RememberedSetStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        RememberedSetStats {
            barrier_remembered: get(&self.barrier_remembered),
            relocation_remembered: get(&self.relocation_remembered),
            objects_moved_remembered: get(&self.objects_moved_remembered),
            in_place_remembered: get(&self.in_place_remembered),
            granules_promoted: get(&self.granules_promoted),
            granules_promoted_in_pause: get(&self.granules_promoted_in_pause),
            verified_old_slots: get(&self.verified_old_slots),
            verified_young_slots: get(&self.verified_young_slots),
            verifications: get(&self.verifications),
            scanned: get(&self.scanned),
            scanned_kept: get(&self.scanned_kept),
            pages_aged: get(&self.pages_aged),
            pages_promoted_in_place: get(&self.pages_promoted_in_place),
            promoted_slots_remembered: get(&self.promoted_slots_remembered),
            major_copies_read: get(&self.major_copies_read),
            majors_unremembered: get(&self.majors_unremembered),
        }
    }
}

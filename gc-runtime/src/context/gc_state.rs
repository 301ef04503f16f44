//! The collector's global phase state: the good color, the phase and the sequence number
//! (ZGC's `ZGlobalPhase`, `ZGlobalSeqNum` and the address masks).
//!
//! All three change only inside pauses; mutators copy the bad mask into their own state when
//! they resume, so the barrier's fast path tests against a thread-owned value.

use gc_core::{AddressLayout, GoodColor};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// The phase a mutator's barrier works in (ZGC's `ZGlobalPhase`): not a phase of the GC log
/// or of the records (those are `GcPhase` and `PauseKind`), but which slow path a bad pointer
/// takes, set only inside pauses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BarrierPhase {
    /// From Pause Mark Start to Pause Mark End: bad pointers are marked (and remapped).
    Mark,
    /// From Pause Mark End to Pause Relocate Start: marking is complete; weak references
    /// to unmarked objects must read as null.
    MarkComplete,
    /// From Pause Relocate Start to the next Pause Mark Start (also before the first cycle):
    /// bad pointers are relocated or remapped.
    Relocate,
}

pub(crate) struct GcState {
    layout: AddressLayout,
    good: AtomicU8,
    phase: AtomicU8,
    seqnum: AtomicU64,
}

fn enc_good(g: GoodColor) -> u8 {
    match g {
        GoodColor::Marked0 => 0,
        GoodColor::Marked1 => 1,
        GoodColor::Remapped => 2,
        GoodColor::Marked2 => 3,
    }
}

fn dec_good(v: u8) -> GoodColor {
    match v {
        0 => GoodColor::Marked0,
        1 => GoodColor::Marked1,
        3 => GoodColor::Marked2,
        _ => GoodColor::Remapped,
    }
}

impl GcState {
    pub(crate) fn new(layout: AddressLayout) -> Self {
        GcState {
            layout,
            good: AtomicU8::new(enc_good(GoodColor::Remapped)),
            phase: AtomicU8::new(BarrierPhase::Relocate as u8),
            // Live maps treat 0 as "no cycle"; the first Pause Mark Start makes it 2.
            seqnum: AtomicU64::new(1),
        }
    }

    pub(super) fn layout(&self) -> AddressLayout {
        self.layout
    }

    #[inline]
    pub(crate) fn good(&self) -> GoodColor {
        dec_good(self.good.load(Ordering::Acquire))
    }

    #[inline]
    pub(crate) fn bad_mask(&self) -> u64 {
        self.layout.bad_mask(self.good())
    }

    #[inline]
    pub(crate) fn phase(&self) -> BarrierPhase {
        match self.phase.load(Ordering::Acquire) {
            0 => BarrierPhase::Mark,
            1 => BarrierPhase::MarkComplete,
            _ => BarrierPhase::Relocate,
        }
    }

    /// The current sequence number: pages born with it were allocated since the last Pause
    /// Mark Start.
    #[inline]
    pub(crate) fn seqnum(&self) -> u64 {
        self.seqnum.load(Ordering::Acquire)
    }

    /// Pause Mark Start: new sequence number, good color = the cycle's mark color.
    pub(crate) fn flip_to_mark(&self, cycle: u64) -> GoodColor {
        let mark = GoodColor::mark_color_for_cycle(cycle);
        self.seqnum.fetch_add(1, Ordering::AcqRel);
        self.good.store(enc_good(mark), Ordering::Release);
        self.phase
            .store(BarrierPhase::Mark as u8, Ordering::Release);
        mark
    }

    /// Pause Mark End (successful).
    pub(crate) fn set_mark_complete(&self) {
        self.phase
            .store(BarrierPhase::MarkComplete as u8, Ordering::Release);
    }

    /// Pause Relocate Start: good color = Remapped.
    pub(crate) fn flip_to_remapped(&self) {
        self.good
            .store(enc_good(GoodColor::Remapped), Ordering::Release);
        self.phase
            .store(BarrierPhase::Relocate as u8, Ordering::Release);
    }
}

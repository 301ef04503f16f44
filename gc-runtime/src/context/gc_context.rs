//! The context every collector subsystem is handed: the global phase state, the pages, the
//! forwarding index, the cycle monitor and the cycle's progress counters (what ZGC's subsystems reach through `ZHeap` and its
//! globals). The subsystems themselves (`Mark`, `Relocate`, `RelocationSet`, `Roots`,
//! `WeakProcessor`, the verifier) keep their own state private and touch the heap only
//! through this context and the calls of the subsystems below them.

use super::cycle_control::CycleControl;
use super::cycle_progress::CycleProgress;
use super::forwarding::Forwarding;
use super::forwarding_index::ForwardingIndex;
use super::gc_state::{GcState, Table};
use super::generations::Generations;
use super::page_registry::PageRegistry;
use crate::observe::ValueSlotCounts;
use crate::threads::IdleClassGuard;
use gc_core::heap_epoch::HeapGuard;
use gc_core::page_table::PageTable;
use gc_core::{AddressLayout, ColoredPtr, Offset, Page};
use std::sync::Arc;

pub(crate) struct GcContext {
    pub(crate) state: GcState,
    pub(crate) pages: PageRegistry,
    /// The forwarding index of the last major's relocation set (of every cycle's, with full
    /// cycles only), selected by the color `GcState::forwarded`.
    pub(crate) forwarding: ForwardingIndex,
    /// The forwarding index of the latest evacuating minor's relocation set (the sparse
    /// young pages it evacuated), selected by the color `GcState::minor_forwarded`: kept
    /// beside the major's, which the old-to-old slots no minor visits still need, until the
    /// next cycle's marking has remapped every pointer of the minor's color. Separate
    /// because a granule may be in both sets: a major's from-page freed, its memory reused
    /// by a young page that a minor evacuates.
    pub(crate) minor_forwarding: ForwardingIndex,
    pub(crate) control: CycleControl,
    /// The running cycle's work done and expected, published by the GC workers for the pacer.
    pub(crate) progress: CycleProgress,
    /// Whether GC threads may run in the idle scheduling class now.
    pub(crate) idle_class: IdleClassGuard,
    /// What the barrier, marking and the full remap did to value slots.
    pub(crate) value_slots: ValueSlotCounts,
    /// Page ages and the remembered set, if `HeapConfig::track_generations` is on (the
    /// page registry keeps the ages of the pages it hands out and frees).
    pub(crate) generations: Option<Arc<Generations>>,
}

impl GcContext {
    #[inline]
    pub(crate) fn layout(&self) -> AddressLayout {
        self.state.layout()
    }

    /// The forwarding index `table` names.
    #[inline]
    pub(crate) fn index(&self, table: Table) -> &ForwardingIndex {
        match table {
            Table::Major => &self.forwarding,
            Table::Minor => &self.minor_forwarding,
        }
    }

    /// The forwarding index the color of `ptr` names (`GcState::table_for`), if any: the
    /// only one a stale pointer may be looked up in.
    #[inline]
    pub(crate) fn index_for(&self, ptr: ColoredPtr) -> Option<&ForwardingIndex> {
        let table = self.state.table_for(self.layout().color(ptr))?;
        Some(self.index(table))
    }

    /// The current offset of the object the non-null `ptr` points at: looked up in the
    /// forwarding index its color names, unchanged if it names none.
    #[inline]
    pub(crate) fn remap_stale(&self, ptr: ColoredPtr) -> Offset {
        let off = self.layout().offset(ptr);
        match self.index_for(ptr) {
            Some(ix) => ix.remap(off),
            None => off,
        }
    }

    /// [`Self::remap_stale`] inside the caller's pin.
    #[inline]
    pub(crate) fn remap_stale_in(&self, ptr: ColoredPtr, guard: &HeapGuard) -> Offset {
        let off = self.layout().offset(ptr);
        match self.index_for(ptr) {
            Some(ix) if !ix.is_vacant(off) => ix.remap_in(off, guard),
            _ => off,
        }
    }

    /// The forwarding of the relocated page `ptr` points into, looked up in the index its
    /// color names, valid while `guard` is pinned.
    #[inline]
    pub(crate) fn stale_forwarding<'g>(
        &self,
        ptr: ColoredPtr,
        guard: &'g HeapGuard,
    ) -> Option<&'g Forwarding> {
        self.index_for(ptr)?
            .relocated(self.layout().offset(ptr), guard)
    }

    /// Offset → page, for every page mapped (registered or still being handed out).
    #[inline]
    pub(crate) fn page_table(&self) -> &PageTable {
        self.pages.memory().page_table()
    }

    /// Unregister and free a page, and let stalled mutators retry at once (as ZGC satisfies
    /// stalled allocations while relocation frees pages, not only at the end of the cycle).
    pub(crate) fn free_page(&self, page: &Page) {
        self.pages.free(page);
        self.control.page_freed();
    }
}

//! The context every collector subsystem is handed: the global phase state, the pages, the
//! forwarding index, the cycle monitor and the cycle's progress counters (what ZGC's subsystems reach through `ZHeap` and its
//! globals). The subsystems themselves (`Mark`, `Relocate`, `RelocationSet`, `Roots`,
//! `WeakProcessor`, the verifier) keep their own state private and touch the heap only
//! through this context and the calls of the subsystems below them.

use super::cycle_control::CycleControl;
use super::cycle_progress::CycleProgress;
use super::forwarding_index::ForwardingIndex;
use super::gc_state::GcState;
use super::generations::Generations;
use super::page_registry::PageRegistry;
use crate::observe::ValueSlotCounts;
use crate::threads::IdleClassGuard;
use gc_core::page_table::PageTable;
use gc_core::{AddressLayout, Page};
use std::sync::Arc;

pub(crate) struct GcContext {
    pub(crate) state: GcState,
    pub(crate) pages: PageRegistry,
    pub(crate) forwarding: ForwardingIndex,
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

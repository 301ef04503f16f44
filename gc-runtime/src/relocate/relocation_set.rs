//! The relocation set (ZGC's `ZRelocationSet`): the pages being evacuated in this cycle, each
//! with its forwarding. Installed by Concurrent Select Relocation Set (from what the
//! `RelocationSetSelector` chose), read by relocation and by every barrier through the
//! forwarding index, and reset by the next cycle's Concurrent Reset Relocation Set (or at the
//! end of the `stw` pause, whose full remap leaves no stale pointer behind).
//!
//! A heap has two: the full cycles' (entered in `GcContext::forwarding`) and the evacuating
//! minors' (entered in `GcContext::minor_forwarding`), each reset after the marking that
//! remapped the last pointers of its color.

use super::retired_forwardings::RetiredForwardings;
use crate::context::Forwarding;
use crate::context::GcContext;
use crate::context::Table;
use parking_lot::Mutex;
use std::sync::Arc;

/// The current relocation set's forwardings.
pub(super) type Forwardings = Arc<[Arc<Forwarding>]>;

pub(crate) struct RelocationSet {
    current: Mutex<Forwardings>,
    /// Forwardings of earlier sets, out of the index but perhaps still referenced by its
    /// deferred drops, freed by the driver (see [`RetiredForwardings`]).
    retired: Mutex<RetiredForwardings<Forwarding>>,
    /// Which forwarding index the set is entered in.
    table: Table,
}

impl Default for RelocationSet {
    /// The full cycles' relocation set.
    fn default() -> Self {
        RelocationSet {
            current: Mutex::new(Arc::new([])),
            retired: Mutex::default(),
            table: Table::Major,
        }
    }
}

impl RelocationSet {
    /// The evacuating minors' relocation set.
    pub(crate) fn minor() -> Self {
        RelocationSet {
            current: Mutex::new(Arc::new([])),
            retired: Mutex::default(),
            table: Table::Minor,
        }
    }

    /// Make `forwardings` the relocation set and enter them in the forwarding index.
    pub(crate) fn install(&self, cx: &GcContext, forwardings: Vec<Arc<Forwarding>>) {
        self.free_retired();
        for f in &forwardings {
            cx.index(self.table).insert(f);
        }
        *self.current.lock() = forwardings.into();
    }

    /// Concurrent Reset Relocation Set: forget the previous cycle's forwarding (safe after
    /// Pause Mark End: marking remapped every stale pointer). The index drops its references
    /// only once no barrier that could still be reading an entry is pinned; the set keeps
    /// one of its own until then (see [`Self::free_retired`]).
    pub(crate) fn reset(&self, cx: &GcContext) {
        self.free_retired();
        let old = std::mem::replace(&mut *self.current.lock(), Arc::new([]));
        for f in old.iter() {
            cx.index(self.table).remove(f);
        }
        self.retired.lock().retire(old.iter().cloned());
        // The index's deferred drops go from this thread's bag to the domain's queue now, so
        // that other threads' pins can run them before the next reset frees what is retired.
        gc_core::heap_epoch::pin().flush();
    }

    /// Free, on this thread, the retired forwardings that nothing else references any more
    /// (the index's deferred drops have run, no relocation holds a copy of the set); keep
    /// the others for a later call. Returns how many were freed.
    pub(crate) fn free_retired(&self) -> usize {
        self.retired.lock().free_unshared()
    }

    /// The pages of the current set, with their forwardings.
    pub(crate) fn forwardings(&self) -> Forwardings {
        self.current.lock().clone()
    }

    /// Bytes of forwarding tables the current set holds, and the retired ones not yet freed.
    pub(crate) fn footprint(&self) -> u64 {
        let current: u64 = self
            .current
            .lock()
            .iter()
            .map(|f| f.footprint() as u64)
            .sum();
        let retired: u64 = self
            .retired
            .lock()
            .iter()
            .map(|f| f.footprint() as u64)
            .sum();
        current + retired
    }
}

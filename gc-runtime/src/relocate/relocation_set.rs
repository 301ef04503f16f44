//! The relocation set (ZGC's `ZRelocationSet`): the pages being evacuated in this cycle, each
//! with its forwarding. Installed by Concurrent Select Relocation Set (from what the
//! `RelocationSetSelector` chose), read by relocation and by every barrier through the
//! forwarding index, and reset by the next cycle's Concurrent Reset Relocation Set (or at the
//! end of the `stw` pause, whose full remap leaves no stale pointer behind).
//!
//! A heap has two: the full cycles' (entered in `GcContext::forwarding`) and the evacuating
//! minors' (entered in `GcContext::minor_forwarding`), each reset after the marking that
//! remapped the last pointers of its color.

use crate::context::Forwarding;
use crate::context::GcContext;
use crate::context::Table;
use parking_lot::Mutex;
use std::sync::Arc;

/// The current relocation set's forwardings.
pub(super) type Forwardings = Arc<[Arc<Forwarding>]>;

pub(crate) struct RelocationSet {
    current: Mutex<Forwardings>,
    /// Which forwarding index the set is entered in.
    table: Table,
}

impl Default for RelocationSet {
    /// The full cycles' relocation set.
    fn default() -> Self {
        RelocationSet {
            current: Mutex::new(Arc::new([])),
            table: Table::Major,
        }
    }
}

impl RelocationSet {
    /// The evacuating minors' relocation set.
    pub(crate) fn minor() -> Self {
        RelocationSet {
            current: Mutex::new(Arc::new([])),
            table: Table::Minor,
        }
    }

    /// Make `forwardings` the relocation set and enter them in the forwarding index.
    pub(crate) fn install(&self, cx: &GcContext, forwardings: Vec<Arc<Forwarding>>) {
        for f in &forwardings {
            cx.index(self.table).insert(f);
        }
        *self.current.lock() = forwardings.into();
    }

    /// Concurrent Reset Relocation Set: forget the previous cycle's forwarding (safe after
    /// Pause Mark End: marking remapped every stale pointer). The index drops its references
    /// only once no barrier that could still be reading an entry is pinned.
    pub(crate) fn reset(&self, cx: &GcContext) {
        let old = std::mem::replace(&mut *self.current.lock(), Arc::new([]));
        for f in old.iter() {
            cx.index(self.table).remove(f);
        }
    }

    /// The pages of the current set, with their forwardings.
    pub(crate) fn forwardings(&self) -> Forwardings {
        self.current.lock().clone()
    }

    /// Bytes of forwarding tables the current set holds.
    pub(crate) fn footprint(&self) -> u64 {
        self.current
            .lock()
            .iter()
            .map(|f| f.footprint() as u64)
            .sum()
    }
}

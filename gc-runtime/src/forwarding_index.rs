//! The forwarding index (ZGC's `ZForwardingTable`): from a heap offset to the relocation-set
//! entry of the page that held it, a granule map with one slot per 2 MiB granule.
//!
//! Barrier slow paths read it lock-free inside a `crossbeam-epoch` guard. The index holds its
//! own reference to each entry and drops it only once no reader that could have seen it is
//! still pinned, so a reader never touches a freed forwarding.

use crate::forwarding::Forwarding;
use crossbeam_epoch::Guard;
use gc_core::granule_map::GranuleMap;
use std::sync::Arc;

pub(crate) struct ForwardingIndex(GranuleMap<Forwarding>);

impl ForwardingIndex {
    pub(crate) fn new(start: u64, size: u64) -> Self {
        ForwardingIndex(GranuleMap::new(start, size))
    }

    /// Enter `f` for its page's granules.
    pub(crate) fn insert(&self, f: &Arc<Forwarding>) {
        self.0.insert(f.page().start(), f.page().size(), f)
    }

    /// Remove `f` (entered with [`Self::insert`]).
    pub(crate) fn remove(&self, f: &Forwarding) {
        self.0.remove(f.page().start(), f.page().size(), f)
    }

    /// The forwarding of the page that held `offset`, valid while `guard` is pinned.
    #[inline]
    pub(crate) fn get<'g>(&self, offset: u64, guard: &'g Guard) -> Option<&'g Forwarding> {
        self.0.get(offset, guard)
    }
}

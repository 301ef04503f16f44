//! Relocation-set selection (ZGC's `ZRelocationSetSelector`), after marking:
//! empty pages are freed at once; pages whose garbage exceeds 25% of their size
//! (`ZFragmentationLimit`) are selected, medium before small, emptiest first, and each gets a
//! forwarding table sized to its live objects. Large pages and pages allocated in this cycle
//! are never selected.

use crate::forwarding::Forwarding;
use crate::heap::HeapInner;
use gc_core::PageKind;
use std::sync::Arc;

/// Garbage share above which a page is evacuated (percent of the page size).
pub(crate) const FRAGMENTATION_LIMIT_PERCENT: u64 = 25;

/// The pages being evacuated in this cycle.
pub(crate) struct RelocationSet {
    pub(crate) forwardings: Vec<Arc<Forwarding>>,
}

/// What selection found.
#[derive(Default, Debug, Clone, Copy)]
pub(crate) struct Selection {
    pub(crate) empty_pages_freed: u64,
    pub(crate) empty_bytes_freed: u64,
    pub(crate) pages_selected: u64,
    pub(crate) live_bytes_selected: u64,
    pub(crate) live_bytes: u64,
}

impl HeapInner {
    /// Concurrent Reset Relocation Set: forget the previous cycle's forwarding (safe after
    /// Pause Mark End: marking remapped every stale pointer). The index drops its references
    /// only once no barrier that could still be reading an entry is pinned.
    pub(crate) fn reset_relocation_set(&self) {
        let Some(old) = self.relocation_set.lock().take() else {
            return;
        };
        for f in &old.forwardings {
            self.forwarding_index.remove(f);
        }
    }

    /// Concurrent Select Relocation Set.
    pub(crate) fn select_relocation_set(&self) -> Selection {
        let seq = self.state.seqnum();
        let pages: Vec<_> = self.pages.lock().values().cloned().collect();
        let mut sel = Selection::default();
        let mut candidates = Vec::new();
        for p in pages {
            if p.seqnum() == seq {
                continue;
            }
            let live = p.live_map().live_bytes(seq);
            sel.live_bytes += live;
            if live == 0 {
                sel.empty_pages_freed += 1;
                sel.empty_bytes_freed += p.size();
                self.free_page(&p);
                continue;
            }
            if p.kind() == PageKind::Large {
                continue;
            }
            let garbage = p.size() - live;
            if garbage * 100 > p.size() * FRAGMENTATION_LIMIT_PERCENT {
                candidates.push((p, live));
            }
        }
        candidates.sort_by_key(|(p, live)| (p.kind() != PageKind::Medium, *live));
        let forwardings: Vec<Arc<Forwarding>> = candidates
            .into_iter()
            .map(|(p, live)| {
                sel.pages_selected += 1;
                sel.live_bytes_selected += live;
                let n = p.live_map().live_objects(seq);
                Arc::new(Forwarding::new(p, n))
            })
            .collect();
        for f in &forwardings {
            self.forwarding_index.insert(f);
        }
        let has = |k: PageKind| forwardings.iter().any(|f| f.page().kind() == k);
        self.prepare_relocation_targets(has(PageKind::Small), has(PageKind::Medium));
        *self.relocation_set.lock() = Some(Arc::new(RelocationSet { forwardings }));
        sel
    }
}

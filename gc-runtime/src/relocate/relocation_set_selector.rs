//! Relocation-set selection (ZGC's `ZRelocationSetSelector`), after marking: empty pages are
//! freed at once; pages whose garbage exceeds 25% of their size (`ZFragmentationLimit`) are
//! selected, medium before small, emptiest first, and each gets a forwarding sized to its live
//! objects. Large pages and pages allocated in this cycle are never selected.

use crate::context::Forwarding;
use crate::context::GcContext;
use gc_core::{Page, PageKind};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Garbage share above which a page is evacuated (percent of the page size).
pub(super) const FRAGMENTATION_LIMIT_PERCENT: u64 = 25;
/// How long selection spends faulting in the new forwarding tables.
const PREFAULT_BUDGET: Duration = Duration::from_millis(50);

/// What selection found.
#[derive(Default, Debug, Clone, Copy)]
pub(crate) struct Selection {
    pub(crate) empty_pages_freed: u64,
    pub(crate) empty_bytes_freed: u64,
    pub(crate) pages_selected: u64,
    pub(crate) live_bytes_selected: u64,
    pub(crate) live_bytes: u64,
    /// A minor's young pages with survivors kept young, one minor older.
    pub(crate) pages_aged: u64,
    /// A minor's young pages with survivors whose in-place promotion began.
    pub(crate) pages_promoted: u64,
}

/// A minor cycle's selection: free the young pages (not allocated in this cycle) that
/// marking found empty; put the sparse ones (live bytes under `live_percent` of the page,
/// `HeapConfig::young_evacuation_live_percent`, 25 by default, argued there; small and
/// medium pages only) in the
/// minor's relocation set, returned as forwardings, whose survivors relocation copies to old
/// target pages; age the others or, once their age reaches `threshold`
/// (`HeapConfig::tenuring_threshold`), begin their in-place promotion
/// (`Generations::age_or_promote`: ZGC's in-place promotion of a dense page). Old pages,
/// whose live maps a minor does not compute, are not looked at. A freed page's age and
/// remembered bits are cleared by the page registry. Returns what it found, the pages whose
/// promotion began (finished after Pause Relocate Start, `Generations::finish_promotions`)
/// and the relocation set.
pub(crate) fn select_minor(
    cx: &GcContext,
    threshold: u8,
    live_percent: u8,
) -> (Selection, Vec<Arc<Page>>, Vec<Arc<Forwarding>>) {
    let seq = cx.state.seqnum();
    let mut sel = Selection::default();
    let mut promoted = Vec::new();
    let mut evacuated = Vec::new();
    let Some(g) = cx.generations.as_deref() else {
        return (sel, promoted, evacuated);
    };
    for p in cx.pages.snapshot() {
        if p.seqnum() == seq || !g.is_young(p.start()) {
            continue;
        }
        let live = p.live_map().live_bytes(seq);
        sel.live_bytes += live;
        if live == 0 {
            sel.empty_pages_freed += 1;
            sel.empty_bytes_freed += p.size();
            cx.free_page(&p);
        } else if p.kind() != PageKind::Large && live * 100 < p.size() * u64::from(live_percent) {
            sel.pages_selected += 1;
            sel.live_bytes_selected += live;
            let n = p.live_map().live_objects(seq);
            evacuated.push(Arc::new(Forwarding::new(p, n)));
        } else if g.age_or_promote(&p, threshold) {
            sel.pages_promoted += 1;
            promoted.push(p);
        } else {
            sel.pages_aged += 1;
        }
    }
    for f in &evacuated {
        f.prefault_table();
    }
    (sel, promoted, evacuated)
}

/// Concurrent Select Relocation Set: free the empty pages, and return the forwardings of the
/// pages to evacuate, with what was found.
pub(crate) fn select(cx: &GcContext) -> (Selection, Vec<Arc<Forwarding>>) {
    let seq = cx.state.seqnum();
    let mut sel = Selection::default();
    let mut candidates = Vec::new();
    for p in cx.pages.snapshot() {
        if p.seqnum() == seq {
            continue;
        }
        let live = p.live_map().live_bytes(seq);
        sel.live_bytes += live;
        if live == 0 {
            sel.empty_pages_freed += 1;
            sel.empty_bytes_freed += p.size();
            cx.free_page(&p);
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
    // Fault the tables in now, so that mutators relocating through their barrier take no
    // fault on them, but for a bounded time: fresh memory can be slow to touch (seconds for
    // a big heap's first relocation set, in a virtual machine), and no page is freed before
    // relocation starts. The GC worker that evacuates a page faults in what is left of its
    // table first.
    let start = Instant::now();
    for f in &forwardings {
        if start.elapsed() > PREFAULT_BUDGET {
            break;
        }
        f.prefault_table();
    }
    (sel, forwardings)
}

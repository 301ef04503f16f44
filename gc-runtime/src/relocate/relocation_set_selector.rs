//! Relocation-set selection (ZGC's `ZRelocationSetSelector`), after marking: empty pages are
//! freed at once; pages whose garbage exceeds 25% of their size (`ZFragmentationLimit`) are
//! selected, medium before small, emptiest first, and each gets a forwarding sized to its live
//! objects. Large pages and pages allocated in this cycle are never selected.

use super::tenuring::YOUNG_AGES;
use crate::context::Forwarding;
use crate::context::GcContext;
use gc_core::{Page, PageAge, PageKind};
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
    /// Of the pages selected by a minor, those whose survivors are copied to survivor
    /// target pages (aged by copy; the others' go to old targets, promoted by copy).
    pub(crate) pages_aged_by_copy: u64,
    /// A minor's census: the live bytes it found on young pages of each age (eden 0,
    /// survivor `n`), for the adaptive tenuring threshold (`tenuring`).
    pub(crate) live_by_age: [u64; YOUNG_AGES],
}

/// A minor cycle's selection: free the young pages (not allocated in this cycle) that
/// marking found empty; put the sparse ones (live bytes under `live_percent` of the page,
/// `HeapConfig::young_evacuation_live_percent`, argued there; small and medium pages only)
/// in the minor's relocation set, returned as forwardings, whose survivors relocation copies
/// to target pages of the page's next survivor age while its age is below `threshold` (aging
/// by copy) and to old target pages at it (promotion by copy: ZGC's `compute_to_age`); age
/// the others or, once their age reaches `threshold`, begin their in-place promotion
/// (`Generations::age_or_promote`: ZGC's in-place promotion of a dense page). The threshold
/// is `HeapConfig::tenuring_threshold` or the adaptive one (`tenuring`). Old pages, whose
/// live maps a minor does not compute, are not looked at. A page born in this cycle (its
/// sequence number is the cycle's: a mutator's, or the previous minor's survivor targets
/// only if that minor were this one) is skipped; the previous minors' survivor target pages
/// are young pages as any other here. A freed page's age and remembered bits are cleared by
/// the page registry. Returns what it found (with the census of live bytes per young age),
/// the pages whose promotion began (finished after Pause Relocate Start,
/// `Generations::finish_promotions`) and the relocation set.
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
        let years = match g.age(p.start()) {
            Some(PageAge::Survivor(n)) => n,
            _ => 0,
        };
        sel.live_by_age[usize::from(years)] += live;
        if live == 0 {
            sel.empty_pages_freed += 1;
            sel.empty_bytes_freed += p.size();
            cx.free_page(&p);
        } else if p.kind() != PageKind::Large && live * 100 < p.size() * u64::from(live_percent) {
            sel.pages_selected += 1;
            sel.live_bytes_selected += live;
            let n = p.live_map().live_objects(seq);
            let to_age = if years >= threshold {
                PageAge::Old
            } else {
                sel.pages_aged_by_copy += 1;
                // Below the threshold, so at most survivor 13: the next age is young.
                PageAge::Survivor(years + 1)
            };
            evacuated.push(Arc::new(Forwarding::new(p, n).with_to_age(to_age)));
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

//! Relocation-set selection (ZGC's `ZRelocationSetSelector`), after marking: empty pages are
//! freed at once; pages whose garbage exceeds 25% of their size (`ZFragmentationLimit`) are
//! selected, medium before small, emptiest first, and each gets a forwarding sized to its live
//! objects. Large pages and pages allocated in this cycle are never selected.

use crate::context::Forwarding;
use crate::context::GcContext;
use gc_core::PageKind;
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
}

/// Concurrent Select Relocation Set: free the empty pages, and return the forwardings of the
/// pages to evacuate, with what was found.
pub(crate) fn select(cx: &GcContext) -> (Selection, Vec<Arc<Forwarding>>) {
    let seq = cx.state.seqnum();
    let mut sel = Selection::default();
    let mut pages = Vec::new();
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
        candidates.push(Candidate {
            kind: p.kind(),
            size: p.size(),
            live,
        });
        pages.push(p);
    }
    let rule = SelectionRule::from_env(cx.pages.capacity());
    let chosen = rule.choose(&candidates);
    let candidates: Vec<_> = chosen
        .into_iter()
        .map(|i| (pages[i].clone(), candidates[i].live))
        .collect();
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

/// A page selection may evacuate: its kind, size and live bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub(crate) kind: PageKind,
    pub(crate) size: u64,
    pub(crate) live: u64,
}

/// Which pages to evacuate: those whose garbage exceeds `fragmentation_limit_percent` of the
/// page, and, with a `live_budget`, only the emptiest of them (by live share) whose live bytes
/// add up to at most the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SelectionRule {
    pub(crate) fragmentation_limit_percent: u64,
    pub(crate) live_budget: Option<u64>,
}

impl SelectionRule {
    /// EXPERIMENT: the rule from `ZRS_FRAGMENTATION_LIMIT` (percent) and
    /// `ZRS_RELOCATION_BUDGET_PERCENT` (percent of the heap's capacity).
    fn from_env(capacity: u64) -> Self {
        let num = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
        SelectionRule {
            fragmentation_limit_percent: num("ZRS_FRAGMENTATION_LIMIT")
                .unwrap_or(FRAGMENTATION_LIMIT_PERCENT),
            live_budget: num("ZRS_RELOCATION_BUDGET_PERCENT").map(|p| capacity / 100 * p),
        }
    }

    /// Indices of the selected `pages`, in evacuation order: medium before small, emptiest
    /// first.
    pub(crate) fn choose(&self, pages: &[Candidate]) -> Vec<usize> {
        let mut chosen: Vec<usize> = (0..pages.len())
            .filter(|&i| {
                let c = &pages[i];
                (c.size - c.live) * 100 > c.size * self.fragmentation_limit_percent
            })
            .collect();
        if let Some(budget) = self.live_budget {
            // Emptiest by live share first: they free the most memory per byte copied.
            chosen.sort_by(|&a, &b| {
                let (a, b) = (&pages[a], &pages[b]);
                (a.live as u128 * b.size as u128).cmp(&(b.live as u128 * a.size as u128))
            });
            let mut spent = 0u64;
            chosen.retain(|&i| {
                let fits = spent + pages[i].live <= budget;
                if fits {
                    spent += pages[i].live;
                }
                fits
            });
        }
        chosen.sort_by_key(|&i| (pages[i].kind != PageKind::Medium, pages[i].live));
        chosen
    }
}

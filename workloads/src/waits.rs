//! Mutator waits: every stretch of time in which a mutator thread of the program wanted to run
//! and could not because of the collector. There are four kinds, all in `GcStats`:
//!
//! - a **pause** ([`PauseRecord`](gc_runtime::stats::PauseRecord)): from the collector's request to stop until it released
//!   the mutators, time to safepoint included (`total_ns`); it stops *every* mutator thread;
//! - an **allocation stall** ([`StallRecord`](gc_runtime::stats::StallRecord)): one thread waited for memory;
//! - a **pacing delay** ([`PacingRecord`](gc_runtime::stats::PacingRecord)): one thread was slowed down, every quantum of bytes
//!   it allocated, so it would not outrun the cycle;
//! - a **page allocation** ([`PageAllocationRecord`](gc_runtime::stats::PageAllocationRecord)): one thread waited while the heap got a
//!   new page from the operating system (memory committed and mapped, 100 µs or longer; a
//!   page from the page cache takes microseconds and is not recorded).
//!
//! Like the other figures of a run, only waits that *start* inside the measured window count,
//! with their whole duration. From them: the longest single wait and its kind
//! ([`longest_wait`]), and per thread the total time that thread waited ([`wait_by_thread`]):
//! the length of the union of every pause and that thread's own stalls, pacing delays and
//! page allocations,
//! so a pause that falls inside the thread's own stall (a stalled thread waits for a cycle,
//! whose pauses happen meanwhile) counts once, not twice.
//!
//! Each wait has two lengths ([`WaitMeasure`]): as the program felt it and as the collector
//! imposed it; [`measured_waits_as`] gives the waits in either.

use crate::mmu::merge_intervals;
use crate::run_result::RunResult;
pub use crate::wait_measure::WaitMeasure;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// What a mutator waited for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WaitKind {
    /// A stop-the-world pause, time to safepoint included.
    Pause,
    /// An allocation stall.
    Stall,
    /// A pacing delay.
    Pacing,
    /// A page allocation that committed and mapped memory.
    #[serde(rename = "page-alloc")]
    PageAlloc,
}

impl WaitKind {
    /// The name in tables and JSON: `pause`, `stall`, `pacing`, `page-alloc`.
    pub fn name(self) -> &'static str {
        match self {
            WaitKind::Pause => "pause",
            WaitKind::Stall => "stall",
            WaitKind::Pacing => "pacing",
            WaitKind::PageAlloc => "page-alloc",
        }
    }
}

impl fmt::Display for WaitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One mutator wait.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wait {
    pub kind: WaitKind,
    /// Heap clock (ns since the heap's creation).
    pub start_at_ns: u64,
    pub duration_ns: u64,
    /// The thread that waited; `None` for a pause, which stops every thread.
    pub thread: Option<String>,
}

impl Wait {
    /// Whether `thread` waited during this wait.
    pub fn stops(&self, thread: &str) -> bool {
        match &self.thread {
            None => true,
            Some(t) => t == thread,
        }
    }
}

/// Count, sum and maximum of the waits of one kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitFigures {
    pub count: u64,
    pub total_ns: u64,
    pub longest_ns: u64,
}

impl WaitFigures {
    /// The figures of the waits of `kind` among `waits`.
    pub fn of(waits: &[Wait], kind: WaitKind) -> Self {
        waits
            .iter()
            .filter(|w| w.kind == kind)
            .fold(WaitFigures::default(), |f, w| WaitFigures {
                count: f.count + 1,
                total_ns: f.total_ns + w.duration_ns,
                longest_ns: f.longest_ns.max(w.duration_ns),
            })
    }
}

/// The waits of `r` that started in its measured window, as the program felt them, in the
/// order pauses, stalls, pacing delays, page allocations (each in record order).
pub fn measured_waits(r: &RunResult) -> Vec<Wait> {
    measured_waits_as(r, WaitMeasure::Felt)
}

/// [`measured_waits`], each wait as long as `measure` counts it (see [`WaitMeasure`]).
pub fn measured_waits_as(r: &RunResult, measure: WaitMeasure) -> Vec<Wait> {
    let pauses = r.measured_pauses().map(|p| Wait {
        kind: WaitKind::Pause,
        start_at_ns: p.start_at_ns,
        duration_ns: measure.pause_ns(p),
        thread: None,
    });
    let stalls = r.measured_stalls().map(|s| Wait {
        kind: WaitKind::Stall,
        start_at_ns: s.start_at_ns,
        duration_ns: s.duration_ns,
        thread: Some(s.thread.clone()),
    });
    let pacing = r.measured_pacing().map(|p| Wait {
        kind: WaitKind::Pacing,
        start_at_ns: p.start_at_ns,
        duration_ns: measure.pacing_ns(p),
        thread: Some(p.thread.clone()),
    });
    let page_allocations = r.measured_page_allocations().map(|p| Wait {
        kind: WaitKind::PageAlloc,
        start_at_ns: p.start_at_ns,
        duration_ns: p.duration_ns,
        thread: Some(p.thread.clone()),
    });
    pauses
        .chain(stalls)
        .chain(pacing)
        .chain(page_allocations)
        .collect()
}

/// The longest single wait of the workload's threads `threads` (a pause, or one of their own
/// stalls, pacing delays and page allocations: not the hiccup meter's); on a tie the
/// earliest, then the kind listed first in [`WaitKind`] (pause, stall, pacing, page
/// allocation). `None` when nothing waited.
pub fn longest_wait<'w>(waits: &'w [Wait], threads: &[String]) -> Option<&'w Wait> {
    let ours = |w: &&Wait| w.thread.as_ref().is_none_or(|t| threads.contains(t));
    waits.iter().filter(ours).min_by(|a, b| {
        b.duration_ns
            .cmp(&a.duration_ns)
            .then(a.start_at_ns.cmp(&b.start_at_ns))
            .then(a.kind.cmp(&b.kind))
    })
}

/// Per mutator thread, the total time it waited: the length of the union of the waits that
/// stopped it (every pause, its own stalls, pacing delays and page allocations). The threads are `threads`
/// (the workload's, which every pause stops even if they never stalled) and every thread
/// named by a stall or pacing delay (the hiccup meter, say, if it stalled).
pub fn wait_by_thread(waits: &[Wait], threads: &[String]) -> BTreeMap<String, u64> {
    let mut names: BTreeSet<&str> = threads.iter().map(String::as_str).collect();
    names.extend(waits.iter().filter_map(|w| w.thread.as_deref()));
    names
        .into_iter()
        .map(|t| {
            let intervals: Vec<(u64, u64)> = waits
                .iter()
                .filter(|w| w.stops(t))
                .map(|w| (w.start_at_ns, w.duration_ns))
                .collect();
            let total = merge_intervals(&intervals, u64::MAX)
                .iter()
                .map(|&(s, e)| e - s)
                .sum();
            (t.to_string(), total)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn wait(kind: WaitKind, start_ms: u64, dur_ms: u64, thread: Option<&str>) -> Wait {
        Wait {
            kind,
            start_at_ns: start_ms * MS,
            duration_ns: dur_ms * MS,
            thread: thread.map(str::to_string),
        }
    }

    #[test]
    fn figures_per_kind() {
        let w = [
            wait(WaitKind::Pause, 10, 2, None),
            wait(WaitKind::Stall, 20, 5, Some("mutator-0")),
            wait(WaitKind::Stall, 40, 7, Some("mutator-1")),
            wait(WaitKind::Pacing, 60, 1, Some("mutator-0")),
        ];
        assert_eq!(
            WaitFigures::of(&w, WaitKind::Stall),
            WaitFigures {
                count: 2,
                total_ns: 12 * MS,
                longest_ns: 7 * MS
            }
        );
        assert_eq!(WaitFigures::of(&w, WaitKind::Pacing).longest_ns, MS);
        assert_eq!(
            WaitFigures::of(&[], WaitKind::Pause),
            WaitFigures::default()
        );
    }

    #[test]
    fn the_longest_wait_can_be_of_any_kind() {
        let mut w = vec![
            wait(WaitKind::Pause, 10, 2, None),
            wait(WaitKind::Stall, 20, 5, Some("mutator-0")),
        ];
        let threads = ["mutator-0".to_string()];
        assert_eq!(longest_wait(&w, &threads).unwrap().kind, WaitKind::Stall);
        w.push(wait(WaitKind::Pacing, 30, 6, Some("mutator-0")));
        assert_eq!(longest_wait(&w, &threads).unwrap().kind, WaitKind::Pacing);
        w.push(wait(WaitKind::Pause, 90, 6, None));
        // A tie goes to the earlier wait.
        assert_eq!(longest_wait(&w, &threads).unwrap().start_at_ns, 30 * MS);
        // The hiccup meter's page allocation is longer, but it is not the program's wait.
        w.push(wait(WaitKind::PageAlloc, 95, 9, Some("hiccup-meter")));
        assert_eq!(longest_wait(&w, &threads).unwrap().start_at_ns, 30 * MS);
        w.push(wait(WaitKind::PageAlloc, 97, 8, Some("mutator-0")));
        assert_eq!(
            longest_wait(&w, &threads).unwrap().kind,
            WaitKind::PageAlloc
        );
        assert_eq!(longest_wait(&[], &threads), None);
    }

    #[test]
    fn pauses_stop_every_thread_stalls_and_pacing_only_their_own() {
        let threads = ["mutator-0".to_string(), "mutator-1".to_string()];
        let w = [
            wait(WaitKind::Pause, 10, 2, None),
            // mutator-0 stalls over a pause: [20, 30] holds the pause [22, 24].
            wait(WaitKind::Stall, 20, 10, Some("mutator-0")),
            wait(WaitKind::Pause, 22, 2, None),
            wait(WaitKind::Pacing, 50, 3, Some("mutator-1")),
            wait(WaitKind::Stall, 70, 1, Some("hiccup-meter")),
        ];
        let by = wait_by_thread(&w, &threads);
        assert_eq!(by["mutator-0"], 12 * MS); // 2 + 10 (the second pause inside the stall)
        assert_eq!(by["mutator-1"], 7 * MS); // 2 + 2 + 3
        assert_eq!(by["hiccup-meter"], 5 * MS); // 2 + 2 + 1
        assert_eq!(by.len(), 3);
        // With no waits, every workload thread waited 0.
        let none = wait_by_thread(&[], &threads);
        assert_eq!(none.values().copied().collect::<Vec<_>>(), [0, 0]);
    }
}

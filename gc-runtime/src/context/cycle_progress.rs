//! Cycle progress: the work the running cycle has done and the work it is expected to do,
//! published by the GC workers for the pacer (what Shenandoah's GC workers report to
//! `ShenandoahPacer` with `report_mark` and `report_evac`; ZGC has no counterpart, it only
//! stalls).
//!
//! The work is counted in bytes: bytes traced by marking, then live bytes of the relocation
//! set evacuated. Workers add to the counters once per batch (1024 objects traced, one page
//! evacuated), with relaxed atomics: a reader sees a count a batch behind at most, which is
//! all a pacing decision needs. What the cycle must do is estimated at its start from the
//! previous cycle (its bytes marked and relocated), and corrected as soon as it is known: at
//! Concurrent Select Relocation Set, the bytes marked are final and the relocation set's live
//! bytes are the relocation work. The counters also keep what the mutators may take during
//! the cycle (the free memory at its start) and how much they took, counted per pacing
//! quantum.

use std::sync::atomic::{AtomicU64, Ordering};

/// The running cycle's work, as the pacer reads it: `done` of `total` bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Progress {
    /// Bytes marked and relocated so far.
    pub(crate) done: u64,
    /// Bytes the cycle is expected to mark and relocate (0: no estimate yet, before the first
    /// cycle completed); never less than `done`.
    pub(crate) total: u64,
    /// Bytes mutators could take when the cycle began.
    pub(crate) free_at_start: u64,
    /// Bytes mutators allocated since, counted per pacing decision.
    pub(crate) allocated: u64,
}

/// The counters. See the module documentation.
#[derive(Default)]
pub(crate) struct CycleProgress {
    marked: AtomicU64,
    relocated: AtomicU64,
    expected_mark: AtomicU64,
    expected_relocate: AtomicU64,
    free_at_start: AtomicU64,
    allocated: AtomicU64,
}

impl CycleProgress {
    /// A cycle begins (Pause Mark Start) with `free` bytes left to mutators: the last cycle's
    /// work becomes the estimate of this one's, and the counts start from zero.
    pub(crate) fn begin(&self, free: u64) {
        let marked = self.marked.swap(0, Ordering::Relaxed);
        let relocated = self.relocated.swap(0, Ordering::Relaxed);
        self.expected_mark.store(marked, Ordering::Relaxed);
        self.expected_relocate.store(relocated, Ordering::Relaxed);
        self.free_at_start.store(free, Ordering::Relaxed);
        self.allocated.store(0, Ordering::Relaxed);
    }

    /// A GC worker traced `bytes` more (once per batch).
    #[inline]
    pub(crate) fn add_marked(&self, bytes: u64) {
        self.marked.fetch_add(bytes, Ordering::Relaxed);
    }

    /// A GC worker evacuated a page of `bytes` live bytes (or compacted it in place).
    #[inline]
    pub(crate) fn add_relocated(&self, bytes: u64) {
        self.relocated.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Marking is over and the relocation set holds `bytes` live bytes: the work left is
    /// known exactly.
    pub(crate) fn relocation_selected(&self, bytes: u64) {
        let marked = self.marked.load(Ordering::Relaxed);
        self.expected_mark.store(marked, Ordering::Relaxed);
        self.expected_relocate.store(bytes, Ordering::Relaxed);
    }

    /// Mutators allocated `bytes` more (a pacing quantum); returns the cycle's total so far.
    #[inline]
    pub(crate) fn add_allocated(&self, bytes: u64) -> u64 {
        self.allocated.fetch_add(bytes, Ordering::Relaxed) + bytes
    }

    /// The running cycle's progress now.
    pub(crate) fn snapshot(&self) -> Progress {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let (marked, relocated) = (load(&self.marked), load(&self.relocated));
        let expected = load(&self.expected_mark) + load(&self.expected_relocate);
        let done = marked + relocated;
        // A cycle that does more than the last one did still has some work left: its total
        // grows with what it has done.
        let total = if expected == 0 {
            0
        } else {
            load(&self.expected_mark).max(marked) + load(&self.expected_relocate).max(relocated)
        };
        Progress {
            done,
            total,
            free_at_start: load(&self.free_at_start),
            allocated: load(&self.allocated),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_cycle_estimates_the_next_and_selection_corrects_it() {
        let p = CycleProgress::default();
        p.begin(100);
        assert_eq!(
            p.snapshot().total,
            0,
            "no estimate before a cycle completed"
        );
        p.add_marked(40);
        p.relocation_selected(10);
        p.add_relocated(10);
        p.begin(200);
        let s = p.snapshot();
        assert_eq!((s.done, s.total, s.free_at_start), (0, 50, 200));
        p.add_marked(60);
        // More marked than the estimate: the total grows with it.
        assert_eq!(p.snapshot().total, 70);
        p.relocation_selected(5);
        assert_eq!(p.snapshot().total, 65);
        p.add_relocated(5);
        assert_eq!(p.snapshot().done, 65);
        assert_eq!(p.add_allocated(7), 7);
        assert_eq!(p.add_allocated(7), 14);
    }
}

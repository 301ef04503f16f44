//! The phase methods of the heap, which the driver calls one by one to run a cycle (ZGC's
//! `ZHeap::mark_start`, `mark_end`, `relocate_start`, ... and the `ZDriver` steps around
//! them). Each is one call, or a few, on the subsystems `HeapInner` owns, handed its
//! `GcContext`; the driver never touches a subsystem itself, so the order and the owner of
//! every step of a cycle can be read in `cycle/driver.rs` and its mechanics here.

use super::heap_inner::HeapInner;
use crate::direct::Cleaned;
use crate::mark::WeakResult;
use crate::observe::{proc_info, Straggler};
use crate::relocate::{self, RelocationTotals, Selection};
use crate::roots::MutatorShared;
use crate::threads::{CrewTotals, WorkerTarget, SAFEPOINT_TIMEOUT};
use gc_core::{CycleKind, GoodColor, PageKind};
use std::sync::Arc;
use std::time::Instant;

impl HeapInner {
    /// Stop every mutator for a pause (see `Safepoint::stop`), ordered by `ticket` against
    /// other heaps' pauses. Returns when the stop was requested and the mutators of the pause
    /// (taken after the request is published, so a thread attaching in between is waited for),
    /// and the mutators still running at the safepoint timeout, if it passed (counted in the
    /// records at once; the caller records the pause's `SafepointTimeoutRecord`).
    pub(crate) fn stop_mutators(
        &self,
        ticket: u64,
    ) -> (Instant, Vec<Arc<MutatorShared>>, Vec<Straggler>) {
        let mut stragglers = Vec::new();
        let (t0, muts) = self.safepoint.stop_watched(
            ticket,
            || self.roots.mutators(),
            SAFEPOINT_TIMEOUT,
            |m, doing| {
                if stragglers.is_empty() {
                    self.events().safepoint_timed_out();
                }
                stragglers.push(Straggler {
                    thread: m.name.clone(),
                    doing,
                    run_state: proc_info::thread_run_state(m.tid),
                });
            },
        );
        (t0, muts, stragglers)
    }

    /// End the pause: resume every mutator.
    pub(crate) fn resume_mutators(&self) {
        self.safepoint.resume();
    }

    /// The mutators attached now.
    pub(crate) fn mutators(&self) -> Vec<Arc<MutatorShared>> {
        self.roots.mutators()
    }

    /// Pause Mark Start: the cycle's mark color (chosen by the mark-color rule) and a new
    /// sequence number (a flip), and the progress counters the pacer reads start again. With
    /// the generational bookkeeping on, every page becomes old and the remembered set's other
    /// bitmap current (a full cycle promotes every survivor: see `context::generations`).
    /// Returns the mark color and the stale colors: the one the last major's forwarding table
    /// remaps (the previous cycle's mark color with full cycles only) and, after a minor, the
    /// one the latest minor's table remaps (`GcState::stale`, `GcState::stale_minor`).
    ///
    /// A minor cycle's (`kind`) flips the remembered set's index and promotes nothing; a full
    /// cycle's flips the generation map's young tag, and its [`Self::mark_roots`] settles
    /// the ages: O(1) either way. A full cycle's `remember` says whether the store barrier
    /// remembers until the next full cycle (`Generations::remembering`).
    pub(crate) fn mark_start(
        &self,
        kind: CycleKind,
        remember: bool,
    ) -> (GoodColor, GoodColor, Option<GoodColor>) {
        let mark = self.cx.state.flip_to_mark(kind);
        if let Some(g) = &self.cx.generations {
            g.forget_latest_promotion();
            match kind {
                CycleKind::Major => g.major_mark_start(remember),
                CycleKind::Minor => g.minor_mark_start(),
            }
        }
        self.cx.progress.begin(self.cx.pages.mutator_free());
        (mark, self.cx.state.stale(), self.cx.state.stale_minor())
    }

    /// Mark and heal the strong roots of `muts` (Concurrent Mark Roots, or Mark Roots inside
    /// the `stw` pause). Returns the number of roots marked.
    /// In `concurrent` mode, the new mark view is populated after the roots over the small and
    /// medium pages (see [`Self::populate_good_view`]).
    pub(crate) fn mark_roots(&self, muts: &[Arc<MutatorShared>]) -> u64 {
        if self.config().mode.is_concurrent() {
            // Concurrent: mutators' barriers fill mark buffers from now on; the spares they
            // swap full ones for are made here, not on them.
            self.mark.prepare_batches(self.config().memory.max_heap);
        }
        if let Some(g) = self
            .cx
            .generations
            .as_deref()
            .filter(|_| !self.cx.state.is_minor())
        {
            g.settle_ages();
        }
        let roots = self.mark.mark_roots(&self.cx, &self.roots, muts);
        self.populate_good_view(false);
        roots
    }

    /// A minor cycle's scan of the remembered set (Concurrent Mark Roots, after the strong
    /// roots; see `Mark::scan_remembered`). Returns (slots visited, slots kept).
    pub(crate) fn scan_remembered(&self) -> (u64, u64) {
        self.mark.scan_remembered(&self.cx)
    }

    /// In `concurrent` mode, after a flip: populate the good view's page-table entries over
    /// the pages in use by read fault-around (gc-core's `view_populate`), so that mutators
    /// reaching those pages through the view take one fault per 64 KiB here instead of one
    /// per 4 KiB each. The `stw` mode's mutators use only the Remapped view, which they
    /// faulted in themselves. Returns the reads made.
    ///
    /// Large pages only if `large`: at Relocate Start, when the selection has just freed the
    /// empty ones, not at Mark Start. A large page is one object, and the pages in use at
    /// Mark Start include every dead one not yet freed: populating those maps memory in a
    /// view nobody reaches it through (and the process pays again to unmap it), while a live
    /// large object the mutator reads before Relocate Start costs it one read fault per
    /// 64 KiB, the same fault-around as here. (`large_strings.lox`, 4g, 2 kHz samples of
    /// three runs: populating large pages at both flips, mutator 3740 and GC thread 1313;
    /// at Relocate Start only, 3276 and 722; `epsilon`'s mutator 3805.)
    fn populate_good_view(&self, large: bool) -> u64 {
        if !self.config().mode.is_concurrent() {
            return 0;
        }
        let view = self.cx.state.good().view();
        let mem = self.cx.pages.memory();
        // While a minor marks, only pointers to young objects carry its color (see
        // `mark::good_for`): old pages are not reached through its view.
        let young_only = (self.cx.state.is_minor()
            && self.cx.state.phase() == crate::context::BarrierPhase::Mark)
            .then_some(self.cx.generations.as_deref())
            .flatten();
        self.cx
            .pages
            .snapshot()
            .iter()
            .filter(|p| large || p.kind() != PageKind::Large)
            .filter(|p| young_only.is_none_or(|g| g.is_young(p.start())))
            .map(|p| mem.populate_view(p, view))
            .sum()
    }

    /// Remap the weak handles the last relocation left stale. Returns how many.
    pub(crate) fn remap_stale_weaks(&self) -> u64 {
        self.weaks.remap_stale(&self.cx)
    }

    /// Concurrent Mark: drain marking until the queue and the mutators' buffers are empty,
    /// with GC workers that follow `workers()` while they run, up to the most the heap allows
    /// ([`Self::most_gc_workers`]). Returns the CPU ns of the workers other than the caller
    /// and how their number changed.
    pub(crate) fn mark(&self, workers: WorkerTarget) -> CrewTotals {
        let max = self.most_gc_workers();
        self.mark
            .drain(&self.cx, &self.roots, workers, max, &self.injected_panics)
    }

    /// The most GC workers a parallel phase may have: `gc_threads`, or one per core if more.
    pub(crate) fn most_gc_workers(&self) -> usize {
        self.config().gc_threads.max(self.cores())
    }

    /// Pause Mark End in `concurrent` mode: ends marking if no work is left anywhere (the
    /// queue is empty and no mutator's mark buffer holds work); false means Concurrent Mark
    /// Continue.
    pub(crate) fn try_mark_end(&self) -> bool {
        if !self.mark.is_complete() {
            return false;
        }
        self.mark_end();
        true
    }

    /// Marking is complete (the `stw` pause ends it unconditionally).
    pub(crate) fn mark_end(&self) {
        self.cx.state.set_mark_complete();
    }

    /// Concurrent Process Non-Strong References: clear dead weak handles, heal live ones, and
    /// hand the dead direct-buffer owners to the direct buffers' cleaners.
    pub(crate) fn process_non_strong_references(&self) -> WeakResult {
        let r = self.weaks.process(&self.cx);
        self.direct.discover(&r.dead_phantoms);
        r
    }

    /// Free the native memory of the direct-buffer owners found dead (never inside a pause).
    pub(crate) fn run_cleaners(&self) -> Cleaned {
        self.direct.run_cleaners(&self.weaks)
    }

    /// Concurrent Reset Relocation Set: forget the previous cycle's forwardings, and the
    /// remembered set's previous bitmap (see `context::generations`).
    pub(crate) fn reset_relocation_set(&self) {
        self.relocation_set.reset(&self.cx);
        self.reset_minor_relocation_set();
        if let Some(g) = &self.cx.generations {
            g.clear_previous();
        }
    }

    /// Concurrent Select Relocation Set: free empty pages, choose sparse ones, take their
    /// target pages now (so the roots' relocation inside a pause only bumps a pointer) and
    /// publish the set.
    pub(crate) fn select_relocation_set(&self) -> Selection {
        let (sel, forwardings) = relocate::select(&self.cx);
        self.cx
            .progress
            .relocation_selected(sel.live_bytes_selected);
        self.relocate.prepare_targets(&self.cx, &forwardings);
        self.relocation_set.install(&self.cx, forwardings);
        self.cx.state.relocation_set_installed();
        sel
    }

    /// A minor cycle's Concurrent Reset Relocation Set: drop the previous evacuating
    /// minor's relocation set, whose color this cycle's marking has just remapped wherever it
    /// met it (roots, young objects, remembered slots: the only places a pointer of that
    /// color can be, see `Generations::remember_moved`). The last major's set stays.
    pub(crate) fn reset_minor_relocation_set(&self) {
        self.minor_relocation_set.reset(&self.cx);
        self.cx.state.minor_relocation_set_reset();
    }

    /// A minor cycle's Concurrent Select Relocation Set: free the empty young pages, put the
    /// sparse ones in the minor's relocation set (its own forwarding index, beside the last
    /// major's, which its stale pointers still need), to be copied to survivor or old
    /// targets, and age the others or begin their in-place promotion, by the tenuring
    /// threshold (`HeapConfig::tenuring_threshold`, or the adaptive one, which the census of
    /// this selection updates). Returns what it found and the threshold used.
    pub(crate) fn select_minor(&self) -> (Selection, u8) {
        let config = self.config();
        let threshold = self.tenuring.threshold(config.tenuring_threshold);
        let (sel, promoted, evacuated) =
            relocate::select_minor(&self.cx, threshold, config.young_evacuation_live_percent);
        self.tenuring
            .record(self.cx.state.seqnum(), threshold, &sel.live_by_age);
        if let Some(g) = &self.cx.generations {
            g.promotions_begun(self.cx.state.good(), promoted);
        }
        self.cx
            .progress
            .relocation_selected(sel.live_bytes_selected);
        self.relocate.prepare_targets(&self.cx, &evacuated);
        self.minor_relocation_set.install(&self.cx, evacuated);
        self.cx.state.minor_relocation_set_installed();
        (sel, threshold)
    }

    /// A minor cycle's evacuation, in Concurrent Relocate: copy the survivors of its
    /// relocation set's pages to survivor or old target pages (each page's `to_age`) and
    /// free the pages, as a full cycle's
    /// relocation does (see [`Self::relocate`]). Returns (pages freed, the workers' CPU time
    /// and crew changes).
    pub(crate) fn relocate_minor(&self, workers: WorkerTarget) -> (u64, CrewTotals) {
        let set = self.minor_relocation_set.forwardings();
        if set.is_empty() {
            return (0, CrewTotals::default());
        }
        let max = self.most_gc_workers();
        let r = self
            .relocate
            .relocate_parallel(&self.cx, &set, workers, max);
        if self
            .drop_minor_table_early
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            self.reset_minor_relocation_set();
        }
        r
    }

    /// A minor cycle's Concurrent Relocate, after Pause Relocate Start: remember the young
    /// and minor-colored slots of the objects on the pages its selection promoted, and make
    /// those pages old (`Generations::finish_promotions`). Returns (pages, slots remembered).
    pub(crate) fn finish_promotions(&self) -> (u64, u64) {
        match &self.cx.generations {
            Some(g) => g.finish_promotions(self.cx.layout(), self.cx.state.seqnum()),
            None => (0, 0),
        }
    }

    /// Pause Relocate Start: from now on a root with the mark color is bad (only a flip).
    pub(crate) fn relocate_start(&self) {
        self.cx.state.flip_to_remapped();
    }

    /// Relocate or remap every strong root of `muts` and every weak handle (the `stw` pause).
    /// Returns the number of slots that were bad.
    pub(crate) fn relocate_roots(&self, muts: &[Arc<MutatorShared>]) -> u64 {
        self.relocate
            .relocate_roots(&self.cx, &self.roots, &self.weaks, muts)
    }

    /// Concurrent Relocate: evacuate the relocation set with GC workers that follow
    /// `workers()` while they run. Returns (pages freed, CPU ns of the workers other than the
    /// caller and how their number changed). In `concurrent` mode, the Remapped view is
    /// populated first, large pages included (see [`Self::populate_good_view`]).
    pub(crate) fn relocate(&self, workers: WorkerTarget) -> (u64, CrewTotals) {
        self.populate_good_view(true);
        let set = self.relocation_set.forwardings();
        let max = self.most_gc_workers();
        self.relocate
            .relocate_parallel(&self.cx, &set, workers, max)
    }

    /// The `stw` mode's full remap, then the relocation set is reset: no stale pointer and no
    /// forwarding survives the pause.
    pub(crate) fn remap_all(&self) {
        relocate::remap_all(&self.cx);
    }

    /// The cycle's relocation counters, and their reset at the start of a cycle.
    pub(crate) fn relocation_totals(&self) -> RelocationTotals {
        self.relocate.totals()
    }

    pub(crate) fn reset_relocation_counters(&self) {
        self.relocate.reset_counters();
    }

    /// Objects traced and stale slots remapped by marking since the last call.
    pub(crate) fn take_mark_counts(&self) -> (u64, u64) {
        (self.mark.take_traced(), self.mark.take_stale_remapped())
    }
}

//! Keeping a thread's live set under its budget: once the model outgrows the budget, prune
//! it and measure what is strongly reachable; above the shedding threshold, drop roots (about
//! half of them, or in fill mode one at a time down to a lower share); and an out-of-memory
//! error, which is counted, allowed only where the configuration says so, and followed by
//! dropping nearly every root.
//!
//! A fill-mode shed traverses the model once per root it drops: on a nearly full heap,
//! hundreds of traversals of tens of thousands of objects, seconds of CPU when other
//! processes share the cores. That work, pruning's traversals and a weak upgrade's
//! reachability checks read no heap memory, so they run as a blocked thread
//! (`Scope::blocking`, HotSpot's "in native"): a pause does not wait for them. Inside a
//! scope, as they once ran, they kept pauses waiting for seconds (a Pause Mark Start with
//! 2 s to safepoint; the safepoint timeout named the thread, in its own code and runnable).
//!
//! The invariant a blocked thread keeps: it touches no heap memory until it runs again. The
//! closures read only the Rust-side model, and `Scope::blocking` borrows the scope mutably,
//! so no `ObjRef` (a raw pointer a pause may move the object under) lives across one; the
//! handles (`Local`, globals, region slots) are roots the pause updates.

use super::program::{Program, FILL_SHED_AT, FILL_SHED_TO};
use super::SHED_PROBE_LIMIT;
use gc_runtime::{Heap, Mode, Scope};
use std::time::Instant;

impl<'h> Program<'h> {
    pub(super) fn on_oom(&mut self, s: &Scope<'_>, msg: &str, size: u64) {
        self.st.ooms += 1;
        ensure!(
            self,
            msg.contains("out of memory"),
            "allocation of {size} bytes failed with an unexpected error: {msg}"
        );
        if self.cfg.mode == Mode::Epsilon {
            if self.after_oom.is_none() {
                self.after_oom = Some(2000);
            }
        } else {
            ensure!(
                self,
                self.cfg.oom_ok,
                "out of memory with at most {} MiB strongly reachable per thread in a {} MiB heap: {msg}",
                self.live_cap >> 20,
                self.cfg.max_heap >> 20
            );
            // Make room: drop everything but a few roots.
            self.drop_roots(s, true);
        }
    }

    /// Drop roots to bring the live set down: unwind to the top scope, drop some globals and
    /// region slots (in fill mode, one at a time down to [`FILL_SHED_TO`]).
    pub(super) fn shed(&mut self, s: &mut Scope<'_>) {
        if self.cfg.fill {
            self.st.sheds += 1;
            self.unwind = true;
            self.shed_to_fill(s);
            return;
        }
        self.drop_roots(s, false);
    }

    /// Unwind to the top scope and drop about half of the globals and a few region slots, or
    /// (`hard`) all but two globals and every region slot.
    fn drop_roots(&mut self, s: &Scope<'_>, hard: bool) {
        self.st.sheds += 1;
        self.unwind = true;
        let keep = if hard { 2 } else { self.globals.len() / 2 };
        while self.globals.len() > keep {
            let i = self.rng.index(self.globals.len());
            self.globals.swap_remove(i);
        }
        for r in 0..self.region_ids.len() {
            if self.region_ids[r].is_some() && (hard || self.rng.chance(500)) {
                self.region.set(s, self.region_base + r, None);
                self.region_ids[r] = None;
            }
        }
    }

    /// `per_mille` of `n`.
    pub(super) fn share(&self, n: u64, per_mille: u64) -> u64 {
        n / 1000 * per_mille + n % 1000 * per_mille / 1000
    }

    /// Live-set share (per mille of the budget) above which a thread sheds roots.
    pub(super) fn shed_at(&self) -> u64 {
        if self.cfg.fill {
            FILL_SHED_AT
        } else {
            800
        }
    }

    /// Drop random globals and region slots, one at a time, until what they keep reachable
    /// is at most [`FILL_SHED_TO`] of the budget (the locals go with the unwind).
    ///
    /// Each round's model traversal runs as a blocked thread (see the module documentation).
    fn shed_to_fill(&mut self, s: &mut Scope<'_>) {
        let mut probe = self.cfg.shed_probe && self.st.shed_probes == 0;
        loop {
            let held: Vec<u64> = self
                .globals
                .iter()
                .map(|g| g.1)
                .chain(self.region_ids.iter().flatten().copied())
                .collect();
            let me = &*self;
            let (bytes, objects, paused) = s.blocking(|| {
                let paused = probe.then(|| pause_completes(me.heap));
                let live = me.reach(held);
                let bytes: u64 = live.iter().map(|id| me.objs[id].footprint).sum();
                (bytes, live.len(), paused)
            });
            if let Some(paused) = paused {
                probe = false;
                self.st.shed_probes += 1;
                self.st.shed_probes_paused += u64::from(paused);
            }
            if bytes <= self.share(self.live_cap, FILL_SHED_TO)
                && objects <= self.share(self.max_objects as u64, FILL_SHED_TO) as usize
            {
                return;
            }
            let region: Vec<usize> = (0..self.region_ids.len())
                .filter(|&r| self.region_ids[r].is_some())
                .collect();
            let n = self.globals.len() + region.len();
            if n == 0 {
                return;
            }
            let k = self.rng.index(n);
            if k < self.globals.len() {
                self.globals.swap_remove(k);
            } else {
                let r = region[k - self.globals.len()];
                self.region.set(s, self.region_base + r, None);
                self.region_ids[r] = None;
            }
        }
    }

    /// [`Program::prune`] as a blocked thread (a model traversal: see the module
    /// documentation). Returns the strongly reachable bytes.
    pub(super) fn prune_blocked(&mut self, s: &mut Scope<'_>) -> u64 {
        s.blocking(|| self.prune())
    }

    pub(super) fn over_budget(&mut self, s: &mut Scope<'_>) -> bool {
        let (bytes, objects) = self.prune_at;
        if self.model_bytes <= bytes.max(self.live_cap)
            && self.objs.len() <= objects.max(self.max_objects)
        {
            return false;
        }
        let strong = self.prune_blocked(s);
        // Prune again only after the model has grown by another eighth (pruning is a model
        // traversal; doing it at every allocation near the cap would dominate the run).
        self.prune_at = (
            self.model_bytes + self.live_cap / 8,
            self.objs.len() + self.max_objects / 8,
        );
        let at = self.shed_at();
        strong > self.share(self.live_cap, at)
            || self.objs.len() as u64 > self.share(self.max_objects as u64, at)
    }
}

/// The shed probe (`Config::shed_probe`), on a thread inside a shed's model traversal: true
/// if a GC pause completes within [`SHED_PROBE_LIMIT`] (cycles run back to back, so one is
/// always coming). A pause waits for every running mutator, this thread included: it
/// completes only if the traversal runs as a blocked thread.
fn pause_completes(heap: &Heap) -> bool {
    let before = heap.stats().totals.pauses.len();
    let start = Instant::now();
    while start.elapsed() < SHED_PROBE_LIMIT {
        if heap.stats().totals.pauses.len() > before {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    false
}

//! Keeping a thread's live set under its budget: once the model outgrows the budget, prune
//! it and measure what is strongly reachable; above the shedding threshold, drop roots (about
//! half of them, or in fill mode one at a time down to a lower share); and an out-of-memory
//! error, which is counted, allowed only where the configuration says so, and followed by
//! dropping nearly every root.

use super::program::{Program, FILL_SHED_AT, FILL_SHED_TO};
use gc_runtime::{Mode, Scope};

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
            self.shed(s, true);
        }
    }

    /// Drop roots to bring the live set down: unwind to the top scope, drop some globals and
    /// region slots.
    pub(super) fn shed(&mut self, s: &Scope<'_>, hard: bool) {
        self.st.sheds += 1;
        self.unwind = true;
        if self.cfg.fill && !hard {
            self.shed_to_fill(s);
            return;
        }
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
    fn shed_to_fill(&mut self, s: &Scope<'_>) {
        loop {
            let held: Vec<u64> = self
                .globals
                .iter()
                .map(|g| g.1)
                .chain(self.region_ids.iter().flatten().copied())
                .collect();
            let live = self.reach(held);
            let bytes: u64 = live.iter().map(|id| self.objs[id].footprint).sum();
            if bytes <= self.share(self.live_cap, FILL_SHED_TO)
                && live.len() <= self.share(self.max_objects as u64, FILL_SHED_TO) as usize
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

    pub(super) fn over_budget(&mut self) -> bool {
        let (bytes, objects) = self.prune_at;
        if self.model_bytes <= bytes.max(self.live_cap)
            && self.objs.len() <= objects.max(self.max_objects)
        {
            return false;
        }
        let strong = self.prune();
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

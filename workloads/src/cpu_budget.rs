//! The CPU budget of a run: how much of the machine the collector's work leaves to the
//! mutators. It answers the question the pacing figures raise: when the mutators were held
//! most of the run, was that the pacer's schedule, or was there no more CPU to give them?
//!
//! In a run of wall time `T` on `P` cores, `n` mutator threads ran (were not held by a
//! pause, a stall, a pacing delay or a page allocation) for `R` in all and completed `N`
//! operations; the collector's threads used `C` of CPU time. Per operation the mutators ran
//! `m = R / N` and the collector spent `g = C / N`. Both draw on the same cores, so
//! `R + C = R · (1 + g/m) ≤ P · T`, and the share of the run the mutators can be running is
//! at most `P / (n · (1 + g/m))` (and at most all of it). That bound is what a collector of
//! this CPU cost per operation allows on this machine whatever its pacer does: a pacer
//! chooses *when* the mutators wait, not *how much*. Concurrent collectors all face it; it is
//! the "GC CPU overhead" a throughput target limits (HotSpot's `GCTimeRatio`). ZGC sizes its
//! concurrent workers from the same arithmetic: enough to finish a cycle before the
//! allocation rate fills the heap.
//!
//! `busy` is `(R + C) / (P · T)`: how much of the machine the run's mutators and collector
//! used between them. Near 100%, the run's share was all the cores allowed; well below, the
//! CPU went elsewhere (other processes: compare the control meter), or the mutators were held
//! with CPU to spare. `R` is wall time, including any time the operating system ran something
//! else on the mutator's core, so on a loaded machine `m` reads high and the bound flatters
//! the collector.

use serde::{Deserialize, Serialize};

/// The cores this process may run on (1 when the system does not say).
pub fn cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// The CPU budget of one run (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuBudget {
    /// Cores the run had (`std::thread::available_parallelism` when it ran).
    pub cores: u32,
    /// Mutator threads of the run (`n`).
    pub threads: u32,
    /// The mutators' running time per operation, in ns (`m`).
    pub mutator_ns_per_op: f64,
    /// The collector threads' CPU time per operation, in ns (`g`).
    pub gc_cpu_ns_per_op: f64,
    /// The share of the run the mutator threads were running: `R / (n · T)`.
    pub mutator_share: f64,
    /// The largest share the cores allow at this `g / m`: `min(1, P / (n · (1 + g/m)))`.
    pub share_allowed: f64,
    /// How much of the cores' time mutators and collector used: `(R + C) / (P · T)`.
    pub busy: f64,
}

impl CpuBudget {
    /// The budget of a run from its figures: `threads` mutators on `cores` cores for
    /// `wall_ns`, held `waits_ns` in all (summed over the threads), `operations` done and
    /// `gc_cpu_ns` of collector CPU. `None` when there is nothing to divide by (no core
    /// count recorded, no operation, no running time).
    pub fn from_figures(
        cores: u32,
        threads: u32,
        wall_ns: u64,
        waits_ns: u64,
        operations: u64,
        gc_cpu_ns: u64,
    ) -> Option<Self> {
        if cores == 0 || threads == 0 || wall_ns == 0 || operations == 0 {
            return None;
        }
        let capacity = threads as f64 * wall_ns as f64;
        let running = (capacity - waits_ns as f64).max(0.0);
        if running == 0.0 {
            return None;
        }
        let m = running / operations as f64;
        let g = gc_cpu_ns as f64 / operations as f64;
        let allowed = (cores as f64 / (threads as f64 * (1.0 + g / m))).min(1.0);
        Some(CpuBudget {
            cores,
            threads,
            mutator_ns_per_op: m,
            gc_cpu_ns_per_op: g,
            mutator_share: running / capacity,
            share_allowed: allowed,
            busy: (running + gc_cpu_ns as f64) / (cores as f64 * wall_ns as f64),
        })
    }

    /// `g / m`: collector CPU per unit of mutator running time.
    pub fn gc_per_mutator(&self) -> f64 {
        self.gc_cpu_ns_per_op / self.mutator_ns_per_op
    }

    /// The `g / m` at which the cores allow the mutators `share` of the run:
    /// `P / (n · share) − 1` (what the collector's CPU per operation must come down to for
    /// that share, with the mutators' own cost unchanged; 0 or less: no collector cost
    /// would do, there are too few cores for the mutators alone).
    pub fn gc_per_mutator_for(&self, share: f64) -> f64 {
        self.cores as f64 / (self.threads as f64 * share) - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collector_that_costs_three_mutators_leaves_one_half_of_two_cores() {
        // 1 mutator, 2 cores, 10 s: held 5 s, 1M operations, 15 s of collector CPU.
        let b =
            CpuBudget::from_figures(2, 1, 10_000_000_000, 5_000_000_000, 1_000_000, 15e9 as u64)
                .unwrap();
        assert_eq!(b.mutator_ns_per_op, 5_000.0);
        assert_eq!(b.gc_cpu_ns_per_op, 15_000.0);
        assert_eq!(b.gc_per_mutator(), 3.0);
        assert_eq!(b.mutator_share, 0.5);
        assert_eq!(b.share_allowed, 0.5);
        assert_eq!(b.busy, 1.0);
        assert_eq!(b.gc_per_mutator_for(0.5), 3.0);
    }

    #[test]
    fn a_cheap_collector_allows_everything_and_a_dear_one_little() {
        let cheap = CpuBudget::from_figures(2, 1, 1_000_000_000, 0, 1_000, 100_000_000).unwrap();
        assert_eq!(cheap.share_allowed, 1.0);
        assert!((cheap.busy - 0.55).abs() < 1e-12);
        // Nine times the mutator's cost: 2 / 10 of the run at most.
        let dear = CpuBudget::from_figures(2, 1, 1_000_000_000, 800_000_000, 1_000, 1_800_000_000)
            .unwrap();
        assert!((dear.share_allowed - 0.2).abs() < 1e-12);
        assert!((dear.mutator_share - 0.2).abs() < 1e-12);
        // Two mutators share the cores: the bound halves.
        let two = CpuBudget::from_figures(2, 2, 1_000_000_000, 0, 1_000, 2_000_000_000).unwrap();
        assert!((two.share_allowed - 0.5).abs() < 1e-12);
    }

    #[test]
    fn nothing_to_divide_by_gives_no_budget() {
        assert_eq!(CpuBudget::from_figures(0, 1, 1, 0, 1, 1), None);
        assert_eq!(CpuBudget::from_figures(2, 1, 1_000, 0, 0, 1), None);
        assert_eq!(CpuBudget::from_figures(2, 1, 1_000, 1_000, 10, 1), None);
        assert_eq!(CpuBudget::from_figures(2, 0, 1_000, 0, 10, 1), None);
    }
}

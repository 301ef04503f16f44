//! Memory over time: the runner's own thread (never a mutator) samples, every
//! [`SAMPLE_INTERVAL_MS`] of the measured phase, the heap's committed and used bytes, the
//! direct buffers' native bytes (unpooled and pooled, from `Heap::direct_stats`) and the
//! process's RSS (`/proc/self/statm`, a counter the kernel keeps, read without a lock).
//!
//! Pss is read only while no mutator runs: once with every workload thread built and held at
//! the start barrier (it goes into the first sample) and once after every thread, the meters
//! too, has stopped (the last sample); the samples in between carry 0, "not read". Pss comes
//! from `/proc/self/smaps_rollup`, a walk of every page table of the process under the
//! kernel's memory-map lock, and a mutator that changes its memory map meanwhile — a page
//! allocation that maps fresh heap memory into the views, malloc growing an arena — waits for
//! the whole walk. Read during the run (an earlier version read it at most 1% of the time, on
//! an idle-class thread), it held a 4 GiB heap-churn mutator for up to 190 ms at a time
//! (`mmap_lock` tracepoints: the waiting `mmap`/`mprotect` behind `show_smaps_rollup`), a
//! wait no report counted (the hiccup meter's first round at 4G, 40–100 ms in five runs,
//! waited for the first read).
//! A run keeps the samples in `RunResult::memory`; `report::plot_memory` draws them.
use gc_runtime::Heap;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Time between samples.
pub const SAMPLE_INTERVAL_MS: u64 = 100;

/// The most of its time the sampler spends reading Pss (see the module documentation).
pub const PSS_DUTY: f64 = 0.01;

/// Memory at one moment of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemorySample {
    /// Time since the start of the measured phase.
    pub at_ns: u64,
    /// Physical memory committed to the heap (the collector's accounting).
    pub committed_heap_bytes: u64,
    /// Bytes in heap pages in use.
    pub used_heap_bytes: u64,
    /// Requested bytes of unpooled direct buffers not freed yet.
    pub direct_bytes: u64,
    /// Requested bytes of pooled buffers owned by heap objects, not freed yet.
    pub pooled_bytes: u64,
    /// Direct buffers' owner objects the collector has not found dead yet.
    pub direct_owners: u64,
    /// Resident set size (counts a heap page once per view touched).
    pub rss_bytes: u64,
    /// Proportional set size (counts it once); 0 where not read: it is read for the first
    /// and the last sample only (see the module documentation).
    pub pss_bytes: u64,
}

impl MemorySample {
    /// Sample `heap` and the process now, `at_ns` into the measured phase, with `pss` as the
    /// Pss (read by the caller, at its own pace).
    pub fn take(heap: &Heap, at_ns: u64, pss: u64) -> Self {
        let u = heap.usage();
        let d = heap.direct_stats();
        MemorySample {
            at_ns,
            committed_heap_bytes: u.committed,
            used_heap_bytes: u.used,
            direct_bytes: d.direct_bytes,
            pooled_bytes: d.pooled_bytes,
            direct_owners: d.owners,
            rss_bytes: gc_runtime::proc_info::resident_bytes(),
            pss_bytes: pss,
        }
    }

    /// Native bytes of direct and pooled buffers together.
    pub fn native_bytes(&self) -> u64 {
        self.direct_bytes + self.pooled_bytes
    }
}

/// Takes a sample whenever one is due; reads Pss at the two ends (see the module
/// documentation).
pub struct MemorySampler {
    start: Instant,
    next: Instant,
    interval: Duration,
    /// Pss read before the start, for the first sample.
    first_pss: Option<u64>,
    samples: Vec<MemorySample>,
}

impl MemorySampler {
    /// Read Pss now, for the first sample. Call it while no mutator runs (the workload's
    /// threads held at the start barrier, the meters not started yet).
    pub fn before_start() -> Self {
        let now = Instant::now();
        MemorySampler {
            start: now,
            next: now,
            interval: Duration::from_millis(SAMPLE_INTERVAL_MS),
            first_pss: Some(gc_runtime::proc_info::process_memory().pss),
            samples: Vec::new(),
        }
    }

    /// Start the clock: the measured phase begins at `start`.
    pub fn start(&mut self, start: Instant) {
        self.start = start;
        self.next = start;
    }

    /// Sample `heap` if a sample is due (the first one at once).
    pub fn poll(&mut self, heap: &Heap) {
        let now = Instant::now();
        if now >= self.next {
            self.take(heap, now);
            // Skip the slots missed while the thread was held up rather than catching up.
            while self.next <= now {
                self.next += self.interval;
            }
        }
    }

    /// How long until the next sample is due.
    pub fn until_next(&self) -> Duration {
        self.next.saturating_duration_since(Instant::now())
    }

    fn take(&mut self, heap: &Heap, now: Instant) {
        let at = now.saturating_duration_since(self.start).as_nanos() as u64;
        let pss = self.first_pss.take().unwrap_or(0);
        self.samples.push(MemorySample::take(heap, at, pss));
    }

    /// One last sample now, with Pss read afresh, and every sample. Call it once no mutator
    /// runs any more.
    pub fn finish(mut self, heap: &Heap) -> Vec<MemorySample> {
        let now = Instant::now();
        let at = now.saturating_duration_since(self.start).as_nanos() as u64;
        let pss = gc_runtime::proc_info::process_memory().pss;
        self.samples.push(MemorySample::take(heap, at, pss));
        self.samples
    }
}

/// The largest value of `f` over `samples` (0 when empty).
pub fn peak(samples: &[MemorySample], f: impl Fn(&MemorySample) -> u64) -> u64 {
    samples.iter().map(f).max().unwrap_or(0)
}

/// What the reports show of a run's memory: the peaks of its samples and how its direct
/// buffers were freed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryFigures {
    /// Samples taken.
    pub samples: u64,
    pub peak_committed_heap_bytes: u64,
    pub peak_direct_bytes: u64,
    pub peak_pooled_bytes: u64,
    pub peak_pss_bytes: u64,
    pub peak_rss_bytes: u64,
    /// Direct and pooled buffers freed by `release` (whole run).
    pub direct_released: u64,
    /// Direct and pooled buffers freed by their owner's cleaner (whole run).
    pub direct_cleaned: u64,
}

impl MemoryFigures {
    /// The figures of `samples`, with the buffer counts of `direct`.
    pub fn of(samples: &[MemorySample], direct: &gc_runtime::stats::DirectStats) -> Self {
        MemoryFigures {
            samples: samples.len() as u64,
            peak_committed_heap_bytes: peak(samples, |s| s.committed_heap_bytes),
            peak_direct_bytes: peak(samples, |s| s.direct_bytes),
            peak_pooled_bytes: peak(samples, |s| s.pooled_bytes),
            peak_pss_bytes: peak(samples, |s| s.pss_bytes),
            peak_rss_bytes: peak(samples, |s| s.rss_bytes),
            direct_released: direct.released,
            direct_cleaned: direct.cleaned,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_the_peaks_of_the_samples() {
        let s = |at_ns, committed, direct, pss| MemorySample {
            at_ns,
            committed_heap_bytes: committed,
            direct_bytes: direct,
            pss_bytes: pss,
            rss_bytes: 2 * pss,
            ..MemorySample::default()
        };
        let samples = [s(0, 10, 0, 100), s(1, 30, 7, 90), s(2, 20, 3, 120)];
        let direct = gc_runtime::stats::DirectStats {
            released: 4,
            cleaned: 2,
            ..Default::default()
        };
        let f = MemoryFigures::of(&samples, &direct);
        assert_eq!(f.samples, 3);
        assert_eq!(
            (
                f.peak_committed_heap_bytes,
                f.peak_direct_bytes,
                f.peak_pss_bytes
            ),
            (30, 7, 120)
        );
        assert_eq!((f.peak_rss_bytes, f.peak_pooled_bytes), (240, 0));
        assert_eq!((f.direct_released, f.direct_cleaned), (4, 2));
        assert_eq!(samples[1].native_bytes(), 7);
        assert_eq!(MemoryFigures::of(&[], &direct).peak_pss_bytes, 0);
    }
}

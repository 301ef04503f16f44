//! Memory over time: the runner's own thread (never a mutator) samples, every
//! [`SAMPLE_INTERVAL_MS`] of the measured phase, the heap's committed and used bytes, the
//! direct buffers' native bytes (unpooled and pooled, from `Heap::direct_stats`), the
//! process's RSS (`/proc/self/statm`, a counter the kernel keeps) and its Pss.
//!
//! Pss comes from `/proc/self/smaps_rollup`, which costs the kernel a walk of every page
//! table of the process — milliseconds at 256 MiB, tens of milliseconds for a heap of
//! gigabytes mapped three times — and holds up the mutators' page faults meanwhile: read every
//! 100 ms it once halved the throughput of a 4 GiB run. So Pss is read at most [`PSS_DUTY`]
//! of the time: after a read that took `d`, the next one waits at least `d / PSS_DUTY`; the
//! samples in between carry the last value read.
//!
//! The reads run on a thread of their own, `pss-reader`, in the GC workers' idle scheduling
//! class (`gc_runtime::worker_priority`). At normal priority the walk kept a mutator waking
//! from a pacing delay off its core for as long as it lasted: a `perf sched` trace of a
//! 256 MiB run showed a mutator runnable for 5.2 ms behind it, the longest wait of that run.
//! A run keeps the samples in `RunResult::memory`; `report::plot_memory` draws them.
use gc_runtime::Heap;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
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
    /// Proportional set size (counts it once).
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
            rss_bytes: gc_core::proc_info::resident_bytes(),
            pss_bytes: pss,
        }
    }

    /// Native bytes of direct and pooled buffers together.
    pub fn native_bytes(&self) -> u64 {
        self.direct_bytes + self.pooled_bytes
    }
}

/// Takes a sample whenever one is due.
pub struct MemorySampler {
    start: Instant,
    next: Instant,
    interval: Duration,
    pss: PssReader,
    samples: Vec<MemorySample>,
}

impl MemorySampler {
    /// A sampler whose clock starts at `start` (the start of the measured phase). Starts the
    /// `pss-reader` thread and waits for its first read; [`Self::finish`] stops it.
    pub fn new(start: Instant) -> Self {
        let interval = Duration::from_millis(SAMPLE_INTERVAL_MS);
        MemorySampler {
            start,
            next: start,
            interval,
            pss: PssReader::start(interval),
            samples: Vec::new(),
        }
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
        self.samples
            .push(MemorySample::take(heap, at, self.pss.last()));
    }

    /// One last sample now, with Pss read afresh, and every sample. Stops the `pss-reader`.
    pub fn finish(mut self, heap: &Heap) -> Vec<MemorySample> {
        self.pss.stop();
        let now = Instant::now();
        self.take(heap, now);
        self.samples
    }
}

/// The `pss-reader` thread (see the module documentation): reads Pss at once, then whenever
/// the duty allows, and once more when stopped.
struct PssReader {
    pss: Arc<AtomicU64>,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl PssReader {
    /// Start the thread and wait for its first read, so every sample has a Pss.
    fn start(interval: Duration) -> Self {
        let pss = Arc::new(AtomicU64::new(0));
        let (stop, stopped) = mpsc::channel::<()>();
        let (first_tx, first_rx) = mpsc::channel::<()>();
        let shared = pss.clone();
        let read =
            move || shared.store(gc_core::proc_info::process_memory().pss, Ordering::Relaxed);
        let thread = std::thread::Builder::new()
            .name("pss-reader".into())
            .spawn(move || {
                gc_runtime::worker_priority::lower_current_thread();
                let t = Instant::now();
                read();
                let _ = first_tx.send(());
                let mut took = t.elapsed();
                loop {
                    match stopped.recv_timeout(interval.max(took.div_f64(PSS_DUTY))) {
                        Err(RecvTimeoutError::Timeout) => {
                            let t = Instant::now();
                            read();
                            took = t.elapsed();
                        }
                        // The last sample's Pss, read afresh.
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => return read(),
                    }
                }
            });
        let thread = match thread {
            Ok(t) => {
                let _ = first_rx.recv();
                Some(t)
            }
            // Without the thread the samples carry Pss 0 ("not read"); the run goes on.
            Err(_) => None,
        };
        PssReader {
            pss,
            stop: Some(stop),
            thread,
        }
    }

    fn last(&self) -> u64 {
        self.pss.load(Ordering::Relaxed)
    }

    /// Stop the thread, after one last read, and wait for it.
    fn stop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for PssReader {
    fn drop(&mut self) {
        self.stop();
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

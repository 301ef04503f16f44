//! The workloads themselves: programs that run on the collector through `gc-runtime`'s public
//! API, one function per workload, run on every mutator thread of a run.
//!
//! A workload thread first builds its share of the live set, then calls
//! [`Ctx::ready`] (a barrier the runner waits on before it starts measuring), then runs
//! operations until [`Ctx::running`] turns false. Everything is seeded from
//! `RunConfig::seed` and the thread index, so a run is reproducible.

pub mod binary_trees;
pub mod buffer_echo;
pub mod heap_churn;
pub mod lru_cache;
pub mod message_engine;

use crate::latency::LatencyHistogram;
use crate::run_result::RunConfig;
use gc_runtime::native::NativePool;
use gc_runtime::Scope;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Heap bytes of an object with `n_refs` reference slots and `n_bytes` raw bytes: a 16-byte
/// header, 8 bytes per slot, raw bytes rounded up to 8 (the collector's object layout). Used to
/// size live sets; the runtime does not export its own helper.
pub const fn object_bytes(n_refs: u64, n_bytes: u64) -> u64 {
    16 + 8 * n_refs + n_bytes.div_ceil(8) * 8
}

/// What one workload thread did in the measured phase.
#[derive(Default)]
pub struct ThreadOutcome {
    pub operations: u64,
    /// Request latencies, for workloads that serve requests.
    pub latency: Option<LatencyHistogram>,
}

/// Shared state of a run, handed to every workload thread.
pub struct Ctx<'a> {
    pub config: &'a RunConfig,
    /// This thread's index, `0..config.threads`.
    pub thread: u32,
    ready: &'a Barrier,
    stop: &'a AtomicBool,
    was_ready: std::cell::Cell<bool>,
    /// The native pool shared by the run's threads (runs with `--buffers pooled`).
    pub pool: Option<&'a NativePool>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        config: &'a RunConfig,
        thread: u32,
        ready: &'a Barrier,
        stop: &'a AtomicBool,
        pool: Option<&'a NativePool>,
    ) -> Self {
        Ctx {
            config,
            thread,
            ready,
            stop,
            was_ready: std::cell::Cell::new(false),
            pool,
        }
    }

    /// The flag [`Self::running`] reads, for helper threads (not mutators) of the workload
    /// that must stop with it.
    pub fn stop_flag(&self) -> &'a AtomicBool {
        self.stop
    }

    /// True once [`Self::ready`] was called.
    pub(crate) fn was_ready(&self) -> bool {
        self.was_ready.get()
    }

    /// End the measured phase early (a thread failed).
    pub(crate) fn abort(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Signal that this thread's live set is built, and wait (as a blocked thread, so GC
    /// pauses do not wait for us) until the runner releases every thread: the barrier is
    /// passed twice, once when all are ready, once when the runner has taken its first
    /// memory sample.
    pub fn ready(&self, s: &mut Scope<'_>) {
        self.was_ready.set(true);
        s.blocking(|| {
            self.ready.wait();
            self.ready.wait();
        });
    }

    /// True until the measured duration is over.
    #[inline]
    pub fn running(&self) -> bool {
        !self.stop.load(Ordering::Relaxed)
    }

    /// This thread's share of the live-set target, in bytes.
    pub fn live_bytes(&self) -> u64 {
        self.config.live_set_bytes / self.config.threads.max(1) as u64
    }

    /// A generator seeded from the run's seed and this thread.
    pub fn rng(&self) -> SmallRng {
        SmallRng::seed_from_u64(
            self.config.seed ^ (u64::from(self.thread) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        )
    }
}

/// Paces operations at a fixed rate per thread (0 = unthrottled). Waiting happens in a
/// blocking region, so a throttled thread never holds up a pause.
pub struct Pacer {
    start: Instant,
    interval: Option<Duration>,
    n: u64,
}

impl Pacer {
    pub fn new(ops_per_sec_per_thread: f64) -> Self {
        Pacer {
            start: Instant::now(),
            interval: (ops_per_sec_per_thread > 0.0)
                .then(|| Duration::from_secs_f64(1.0 / ops_per_sec_per_thread)),
            n: 0,
        }
    }

    /// The expected interval between operations, if throttled.
    pub fn interval(&self) -> Option<Duration> {
        self.interval
    }

    /// Wait until the next operation is due; returns when it was due (for latency measured
    /// from the intended start, which corrects coordinated omission).
    pub fn wait(&mut self, s: &mut Scope<'_>) -> Instant {
        let Some(iv) = self.interval else {
            return Instant::now();
        };
        let due = self.start + iv * self.n as u32;
        self.n += 1;
        let now = Instant::now();
        if due > now {
            s.blocking(|| std::thread::sleep(due - now));
        }
        due
    }
}

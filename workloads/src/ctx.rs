//! What a workload thread is handed: [`Ctx`], the run it belongs to ([`RunShape`]: heap and
//! live-set sizes, threads, seed), its index, the barrier that starts the measured phase, the
//! stop flag that ends it and the run's shared native pool. The runner builds one per mutator
//! thread; a workload reads it and never sees the runner itself (the harness's counterpart of
//! a benchmark's view of the JVM it runs on: sizes and threads, not the launcher).

use gc_runtime::native::NativePool;
use gc_runtime::Scope;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;

/// What a workload thread knows of its run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunShape {
    /// Maximum heap size.
    pub heap_bytes: u64,
    /// Target live set of the whole run (every thread's share together).
    pub live_set_bytes: u64,
    /// Mutator threads of the workload.
    pub threads: u32,
    /// The run's random seed.
    pub seed: u64,
}

/// Shared state of a run, handed to every workload thread.
pub struct Ctx<'a> {
    /// The run's sizes, thread count and seed.
    pub run: RunShape,
    /// This thread's index, `0..run.threads`.
    pub thread: u32,
    ready: &'a Barrier,
    stop: &'a AtomicBool,
    was_ready: std::cell::Cell<bool>,
    /// The native pool shared by the run's threads (runs with `--buffers pooled`).
    pub pool: Option<&'a NativePool>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        run: RunShape,
        thread: u32,
        ready: &'a Barrier,
        stop: &'a AtomicBool,
        pool: Option<&'a NativePool>,
    ) -> Self {
        Ctx {
            run,
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
        self.run.live_set_bytes / self.run.threads.max(1) as u64
    }

    /// A generator seeded from the run's seed and this thread.
    pub fn rng(&self) -> SmallRng {
        SmallRng::seed_from_u64(
            self.run.seed ^ (u64::from(self.thread) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        )
    }
}

//! The embedder's handle to a heap ([`Heap`], ZGC's `ZCollectedHeap`): it creates the
//! collector's state (`HeapInner`), owns the driver thread, and offers what an embedder
//! does with a heap as a whole — attach threads, request a cycle, read statistics and usage,
//! register root regions.

use super::mutator::{AttachError, CycleWait, Mutator};
use super::root_region::RootRegion;
use crate::config::{HeapConfig, Mode};
use crate::heap::HeapInner;
use crate::heap::MemoryReport;
use crate::observe::EventSubscription;
use crate::observe::GcCause;
use crate::observe::GcStats;
use crate::observe::InjectedPanic;
use gc_core::HeapError;
use serde::Serialize;
use std::sync::Arc;
use std::thread::JoinHandle;

/// A snapshot of heap usage for embedders.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct HeapUsage {
    /// Max heap.
    pub capacity: u64,
    /// Bytes in pages in use.
    pub used: u64,
    /// Physical memory committed (the collector's own accounting; see `process_memory` for Pss).
    pub committed: u64,
    /// The most physical memory that was ever committed at once.
    pub peak_committed: u64,
    /// Bytes allocated by mutators since start.
    pub allocated: u64,
    /// GC cycles completed.
    pub cycles: u64,
    /// Of `cycles`, the majors (full cycles): every cycle but the minor (young-only) ones.
    pub majors: u64,
}

/// A garbage-collected heap. Dropping it stops the collector; the memory is released when
/// the last mutator and handle are gone too.
///
/// Dropping the heap waits for the driver thread to finish its cycle, unless the dropping
/// thread has a mutator of this heap or is inside a scope of any heap: that cycle's pauses may
/// need the thread, so the driver is left to finish the cycle and exit on its own. The
/// thread's mutators keep working after the drop (allocation, scopes, polls; `collect`
/// returns at once, and an allocation that would need a cycle fails).
///
/// A panic in the collector (the driver thread or a GC worker: a broken invariant) aborts the
/// process, with a message naming the heap and the panic on stderr: the heap can no longer be
/// trusted, and its mutators may be parked in a pause that would never end.
pub struct Heap {
    pub(super) inner: Arc<HeapInner>,
    driver: Option<JoinHandle<()>>,
}

impl Heap {
    /// Create a heap: validate the configuration, map the memory, start the driver thread.
    pub fn new(config: HeapConfig) -> Result<Heap, HeapError> {
        let inner = Arc::new(HeapInner::new(config)?);
        let driver = if inner.config().mode == Mode::Epsilon {
            None
        } else {
            let i = inner.clone();
            Some(
                std::thread::Builder::new()
                    .name("gc-driver".into())
                    .spawn(move || crate::cycle::run_or_abort(&i))
                    .map_err(|source| HeapError::Os {
                        what: "spawning the GC driver thread",
                        source,
                    })?,
            )
        };
        Ok(Heap { inner, driver })
    }

    /// Attach the calling thread as a mutator named `name`.
    ///
    /// The mutator holds one file descriptor until it is dropped: its thread's
    /// `/proc/thread-self/schedstat`, from which each pause record reads how long the thread
    /// waited for a CPU during the pause's time to safepoint. Where it cannot be opened (no
    /// such file, or the process out of descriptors) the mutator works as before and the
    /// records have no such reading.
    pub fn attach(&self, name: &str) -> Result<Mutator, AttachError> {
        Mutator::attach(&self.inner, name)
    }

    /// Run a GC cycle now and wait for it to complete (`System.gc()`).
    ///
    /// Call it from a thread that has no mutator of this heap (use [`crate::Scope::collect`]
    /// from a mutator): inside one of its scopes the mutator would never reach the safepoint
    /// while this call waits. Such a call returns an error instead of hanging.
    ///
    /// Called inside a scope of another heap's mutator, it may also return an error before
    /// the cycle completed, when waiting on could deadlock (see the `safepoint` module).
    pub fn collect(&self, cause: &str) -> Result<(), String> {
        if super::mutator::thread_has_mutator(self.inner.id()) {
            return Err(
                "Heap::collect called on a thread with an attached mutator: use Scope::collect"
                    .into(),
            );
        }
        if self.inner.config().mode == Mode::Epsilon {
            return Ok(());
        }
        let control = self.inner.control();
        let wait = CycleWait::begin(&self.inner);
        let n = control.request(GcCause::Explicit(cause.to_string()));
        if control.wait_for_cycle(n, || wait.must_give_up()) || control.is_shut_down() {
            return Ok(());
        }
        Err(
            "Heap::collect gave up waiting: the calling thread is inside a scope of another \
             heap whose collector needs it while it waits"
                .into(),
        )
    }

    /// Run a minor (young-only) cycle now and wait for it to complete: it marks the young
    /// generation from the strong roots and the remembered set, frees the young pages found
    /// empty, evacuates the sparse ones (`HeapConfig::young_evacuation_live_percent`) to
    /// survivor pages of the next age or, at the tenuring threshold, to old pages, and ages the
    /// others or promotes them in place (`HeapConfig::tenuring_threshold`, adaptive by
    /// default) (see `cycle/driver.rs`). An error, and no cycle, unless
    /// the heap is in `generational` mode, or in `concurrent` mode with
    /// `HeapConfig::track_generations` on; the other
    /// errors of [`Heap::collect`]. A full cycle requested at the same time runs instead
    /// (it collects the young generation too), and so does a full cycle if the store barrier
    /// is not keeping the remembered set at the moment (in `generational` mode the director
    /// stops it while its own minors do not pay); from the first request on, the set is kept
    /// for the embedder's minors at every later full cycle.
    pub fn collect_minor(&self) -> Result<(), String> {
        super::mutator::minor_allowed(self.inner.config())?;
        if super::mutator::thread_has_mutator(self.inner.id()) {
            return Err(
                "Heap::collect_minor called on a thread with an attached mutator: use \
                 Scope::collect_minor"
                    .into(),
            );
        }
        let control = self.inner.control();
        let wait = CycleWait::begin(&self.inner);
        let n = control.request(GcCause::MinorRequested);
        if control.wait_for_cycle(n, || wait.must_give_up()) || control.is_shut_down() {
            return Ok(());
        }
        Err(
            "Heap::collect_minor gave up waiting: the calling thread is inside a scope of \
             another heap whose collector needs it while it waits"
                .into(),
        )
    }

    /// The recent records (the newest [`crate::stats::RECENT_EVENTS`] pauses, cycles, stalls,
    /// pacing delays and slow page allocations), the counts of each since creation and the
    /// totals: bounded, however long the heap runs. For every event, [`Heap::subscribe`].
    pub fn stats(&self) -> GcStats {
        let mut s = self.inner.events().stats();
        s.allocated_bytes = self.inner.allocator().allocated();
        s.direct = self.inner.direct().stats();
        s
    }

    /// Receive every event from now on, starting with the records the heap still keeps (all
    /// of them when called before any kind passed [`crate::stats::RECENT_EVENTS`], e.g. right
    /// after [`Heap::new`]; [`EventSubscription::missed`] tells). The subscription keeps them
    /// all, growing with the run, until it is dropped: for harnesses that need every pause or
    /// delay (percentiles, MMU), not for a server that runs for days.
    pub fn subscribe(&self) -> EventSubscription {
        self.inner.events().subscribe()
    }

    /// The direct buffers' counters now: what [`Heap::stats`] puts in `direct`, without
    /// copying the pause, cycle and stall records (cheap enough to sample often).
    pub fn direct_stats(&self) -> crate::observe::DirectStats {
        self.inner.direct().stats()
    }

    /// Which pages the heap's memory is on now (4 KiB, or how much of it on 2 MiB pages),
    /// read from `/proc/self/smaps` over the heap's views: what a report states as the page
    /// size of a run. Its page-table walk holds the memory-map lock, which a mutator mapping
    /// a page waits for: read it while no mutator runs.
    pub fn page_size_reading(&self) -> gc_core::PageSizeReading {
        self.inner.pages().memory().page_size_reading()
    }

    /// Heap usage now.
    pub fn usage(&self) -> HeapUsage {
        let u = self.inner.pages().usage();
        HeapUsage {
            capacity: u.capacity,
            used: u.used,
            committed: u.committed,
            peak_committed: u.peak_committed,
            allocated: self.inner.allocator().allocated(),
            cycles: self.inner.control().completed(),
            majors: self.inner.control().completed_majors(),
        }
    }

    /// The configuration the heap was created with.
    pub fn config(&self) -> &HeapConfig {
        self.inner.config()
    }

    /// A root region of `capacity` reference slots (an interpreter's value stack), scanned
    /// precisely by the collector as long as the returned handle lives.
    pub fn root_region(&self, capacity: usize) -> RootRegion {
        RootRegion::new(&self.inner, capacity)
    }

    /// Nanoseconds since the heap was created (the time base of [`GcStats`]).
    pub fn uptime_ns(&self) -> u64 {
        self.inner.now_ns()
    }

    /// Make the GC driver panic inside its next pause, with every mutator stopped: what a
    /// broken invariant in the collector does (for the tests of that).
    #[doc(hidden)]
    pub fn inject_gc_panic_for_tests(&self) {
        self.inner.injected_panics().request(InjectedPanic::Driver);
    }

    /// Make a GC mark worker thread panic in the next parallel marking (needs two GC
    /// threads or more; in `stw` mode that is inside the pause).
    #[doc(hidden)]
    pub fn inject_gc_worker_panic_for_tests(&self) {
        self.inner
            .injected_panics()
            .request(InjectedPanic::MarkWorker);
    }

    /// Make the GC workers' target of every parallel phase (marking, relocation) swing
    /// between `gc_threads` and one per core every `every` reads (each worker reads it at
    /// every safe point of its loop; 0 turns the swing off): crews then grow and shrink many
    /// times while a phase runs (for the tests that no work is lost when they do). Needs two
    /// cores or more (or `gc_threads` above one) to change anything.
    #[doc(hidden)]
    pub fn swing_gc_workers_for_tests(&self, every: u64) {
        self.inner.crew_swing().set(every);
    }

    /// Run `hook` once, in the next weak upgrade between Pause Mark End and Pause Relocate
    /// Start that reads a non-null slot, right after that read and before the referent's
    /// liveness is tested: a test holds the upgrading mutator there, to open on purpose the
    /// window a preempted thread opens by chance (for the tests of that race).
    #[doc(hidden)]
    pub fn hold_next_weak_upgrade_for_tests(&self, hook: impl FnOnce() + Send + 'static) {
        self.inner.weak_upgrade_hold().arm(Box::new(hook));
    }

    /// Page table and memory facts for reports: page counts by kind and memory usage.
    ///
    /// Registered native pools (the default, see [`crate::native::PoolConfig::register`]) are
    /// in it; [`Heap::memory_report_with_pools`] adds unregistered ones.
    pub fn memory_report(&self) -> MemoryReport {
        MemoryReport::collect(&self.inner, &[])
    }

    /// [`Heap::memory_report`] with `pools` listed too (registered or not; each once).
    pub fn memory_report_with_pools(&self, pools: &[crate::native::NativePool]) -> MemoryReport {
        MemoryReport::collect(&self.inner, pools)
    }
}

impl Drop for Heap {
    fn drop(&mut self) {
        self.inner.control().shut_down();
        let may_need_this_thread = super::mutator::thread_has_mutator(self.inner.id())
            || super::mutator::thread_is_running_a_mutator();
        if let Some(d) = self.driver.take() {
            if !may_need_this_thread {
                let _ = d.join();
            }
        }
    }
}

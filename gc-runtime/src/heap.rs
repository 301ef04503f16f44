//! The heap: the collector's shared state ([`HeapInner`]) and the embedder's handle to it
//! ([`Heap`]), which owns the driver thread.

use crate::config::{HeapConfig, Mode};
use crate::forwarding_index::ForwardingIndex;
use crate::gc_cause::GcCause;
use crate::gc_log::GcLog;
use crate::gc_state::GcState;
use crate::handle_table::HandleTable;
use crate::mark::MarkQueue;
use crate::mutator::{CycleWait, Mutator, MutatorShared};
use crate::relocate::RelocationAllocator;
use crate::relocation_set::RelocationSet;
use crate::root_region::{RegionSlots, RootRegion};
use crate::safepoint::Safepoint;
use crate::stats::GcStats;
use gc_core::{AllocError, HeapError, MemoryUsage, Page, PageAllocator, PageKind};
use parking_lot::{Condvar, Mutex};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

static NEXT_HEAP_ID: AtomicU64 = AtomicU64::new(1);

/// Requests to the driver and the cycle counters stalled threads wait on.
#[derive(Default)]
pub(crate) struct Control {
    /// An explicit or stall request, with its cause.
    pub(crate) requested: Option<GcCause>,
    /// Cycles started / completed.
    pub(crate) started: u64,
    pub(crate) completed: u64,
    /// Mutators waiting in an allocation stall.
    pub(crate) stalled: u64,
    pub(crate) shutdown: bool,
}

/// Everything the collector and the mutators share.
pub(crate) struct HeapInner {
    pub(crate) id: u64,
    pub(crate) config: HeapConfig,
    pub(crate) mem: PageAllocator,
    pub(crate) state: GcState,
    pub(crate) safepoint: Safepoint,
    pub(crate) mutators: Mutex<Vec<Arc<MutatorShared>>>,
    pub(crate) globals: HandleTable,
    pub(crate) weaks: HandleTable,
    pub(crate) regions: Mutex<Vec<Arc<RegionSlots>>>,
    /// Every page in use, by start offset.
    pub(crate) pages: Mutex<HashMap<u64, Arc<Page>>>,
    /// The medium page mutators share (CAS bump allocation).
    pub(crate) shared_medium: Mutex<Option<Arc<Page>>>,
    pub(crate) reloc_alloc: RelocationAllocator,
    pub(crate) mark_queue: MarkQueue,
    /// Bytes mutators may not allocate, kept for relocation targets so evacuation can make
    /// progress on a full heap (ZGC before JDK 16 kept such a reserve too).
    pub(crate) relocation_reserve: u64,
    /// Cores available to the process (GC workers are boosted to this many when mutators
    /// stall, and in the `stw` pause).
    pub(crate) cores: usize,
    pub(crate) forwarding_index: ForwardingIndex,
    pub(crate) relocation_set: Mutex<Option<Arc<RelocationSet>>>,
    pub(crate) control: Mutex<Control>,
    /// Signals the driver (requests) and waiters (cycle completed).
    pub(crate) control_cv: Condvar,
    pub(crate) stats: Mutex<GcStats>,
    /// Mutators waiting in an allocation stall (read without the lock by `free_page`).
    pub(crate) stalled_waiters: AtomicU64,
    pub(crate) allocated: AtomicU64,
    pub(crate) start: Instant,
    pub(crate) log: GcLog,
    /// A panic tests asked the collector to raise ([`InjectedPanic`] as `u8`; 0: none).
    pub(crate) injected_panic: AtomicU8,
}

/// Where a test wants the collector to panic.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum InjectedPanic {
    /// The driver, inside its next pause (every mutator stopped).
    Driver = 1,
    /// A GC mark worker thread (not the driver), in the next parallel marking.
    MarkWorker = 2,
}

impl HeapInner {
    /// Nanoseconds since the heap was created.
    pub(crate) fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// A page born in the current cycle for a mutator (the relocation reserve stays
    /// untouched), not yet in `pages`, so relocation-set selection cannot see (and free) it:
    /// [`Self::register_page`] it, or give it back with `mem.free_page`.
    pub(crate) fn new_page_unregistered(
        &self,
        kind: PageKind,
        size: u64,
    ) -> Result<Arc<Page>, AllocError> {
        let limit = self.mem.capacity().saturating_sub(self.relocation_reserve);
        self.mem
            .alloc_page_within(kind, size, self.state.seqnum(), limit)
    }

    pub(crate) fn register_page(&self, page: &Arc<Page>) {
        self.pages.lock().insert(page.start(), page.clone());
    }

    /// True if the live data the last completed cycle found leaves room for `size` more
    /// bytes of mutator pages: a stalled allocation that still failed lost what that cycle
    /// freed to other threads, and should wait for another cycle rather than fail.
    pub(crate) fn last_cycle_left_room_for(&self, size: u64) -> bool {
        let live = self.stats.lock().cycles.last().map(|c| c.live_bytes);
        let limit = self.mem.capacity().saturating_sub(self.relocation_reserve);
        live.is_some_and(|l| l + size <= limit)
    }

    /// Allocate and register a relocation target page: may use the relocation reserve.
    pub(crate) fn new_relocation_page(
        &self,
        kind: PageKind,
        size: u64,
    ) -> Result<Arc<Page>, AllocError> {
        let page = self.mem.alloc_page(kind, size, self.state.seqnum())?;
        self.pages.lock().insert(page.start(), page.clone());
        Ok(page)
    }

    /// Unregister and free a page (its memory goes to the page cache). Wakes mutators
    /// stalled on allocation, which retry at once (as ZGC satisfies stalled allocations
    /// while relocation frees pages, not only at the end of the cycle).
    pub(crate) fn free_page(&self, page: &Page) {
        self.pages.lock().remove(&page.start());
        self.mem.free_page(page);
        if self.stalled_waiters.load(Ordering::Acquire) > 0 {
            let _c = self.control.lock();
            self.control_cv.notify_all();
        }
    }

    /// Snapshot of attached mutators.
    pub(crate) fn mutators_snapshot(&self) -> Vec<Arc<MutatorShared>> {
        self.mutators.lock().clone()
    }

    /// Ask the driver for a cycle; returns the number of the cycle that will satisfy the
    /// request (the next one to start).
    pub(crate) fn request_cycle(&self, cause: GcCause) -> u64 {
        let mut c = self.control.lock();
        if c.requested.is_none() {
            c.requested = Some(cause);
        }
        self.control_cv.notify_all();
        c.started + 1
    }

    /// Wait until cycle `n` has completed, the heap shuts down, or `wait` must give up.
    /// Returns true if the cycle completed.
    pub(crate) fn wait_for_cycle(&self, n: u64, wait: &CycleWait<'_>) -> bool {
        let mut c = self.control.lock();
        while c.completed < n && !c.shutdown && !wait.must_give_up() {
            // Giving up is decided by another heap's pause, which does not signal this
            // condvar: look again now and then.
            self.control_cv
                .wait_for(&mut c, std::time::Duration::from_millis(10));
        }
        c.completed >= n
    }

    pub(crate) fn usage(&self) -> MemoryUsage {
        self.mem.usage()
    }

    /// True (once) if a test asked for a panic at `at`.
    pub(crate) fn take_injected_panic(&self, at: InjectedPanic) -> bool {
        self.injected_panic
            .compare_exchange(at as u8, 0, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }
}

/// A snapshot of heap usage for embedders.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct HeapUsage {
    /// Max heap.
    pub capacity: u64,
    /// Bytes in pages in use.
    pub used: u64,
    /// Physical memory committed (the collector's own accounting; see `process_memory` for Pss).
    pub committed: u64,
    /// Bytes allocated by mutators since start.
    pub allocated: u64,
    /// GC cycles completed.
    pub cycles: u64,
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
    pub(crate) inner: Arc<HeapInner>,
    driver: Option<JoinHandle<()>>,
}

impl Heap {
    /// Create a heap: validate the configuration, map the memory, start the driver thread.
    pub fn new(config: HeapConfig) -> Result<Heap, HeapError> {
        let mem = PageAllocator::new(&config.memory)?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        mem.set_poison(config.verify);
        let layout = mem.layout();
        let (start, size) = mem.reservation();
        let id = NEXT_HEAP_ID.fetch_add(1, Ordering::Relaxed);
        let inner = Arc::new(HeapInner {
            id,
            state: GcState::new(layout),
            safepoint: Safepoint::default(),
            mutators: Mutex::new(Vec::new()),
            globals: HandleTable::new(),
            weaks: HandleTable::new(),
            regions: Mutex::new(Vec::new()),
            pages: Mutex::new(HashMap::new()),
            shared_medium: Mutex::new(None),
            reloc_alloc: RelocationAllocator::default(),
            mark_queue: MarkQueue::default(),
            cores,
            relocation_reserve: if config.mode == Mode::Epsilon {
                0
            } else {
                let sizes = mem.sizes();
                // One small page per GC worker and one for mutators, plus a medium page, but
                // never more than an eighth of the heap (at least one small page): on a small
                // heap a larger reserve would leave mutators almost nothing. When the reserve
                // runs out, relocation forwards objects in place instead of failing.
                let wanted = (config.gc_threads.max(cores) as u64 + 1) * sizes.small
                    + sizes.medium.unwrap_or(0);
                let cap = (config.memory.max_heap / 8 / sizes.small).max(1) * sizes.small;
                wanted.min(cap)
            },
            forwarding_index: ForwardingIndex::new(start, size),
            relocation_set: Mutex::new(None),
            control: Mutex::new(Control::default()),
            control_cv: Condvar::new(),
            stats: Mutex::new(GcStats::default()),
            stalled_waiters: AtomicU64::new(0),
            allocated: AtomicU64::new(0),
            start: Instant::now(),
            log: GcLog::new(config.log),
            injected_panic: AtomicU8::new(0),
            mem,
            config,
        });
        let driver = if inner.config.mode == Mode::Epsilon {
            None
        } else {
            let i = inner.clone();
            Some(
                std::thread::Builder::new()
                    .name("gc-driver".into())
                    .spawn(move || crate::driver::run_or_abort(&i))
                    .map_err(|source| HeapError::Os {
                        what: "spawning the GC driver thread",
                        source,
                    })?,
            )
        };
        Ok(Heap { inner, driver })
    }

    /// Attach the calling thread as a mutator named `name`.
    pub fn attach(&self, name: &str) -> Result<Mutator, crate::AttachError> {
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
        if crate::mutator::thread_has_mutator(self.inner.id) {
            return Err(
                "Heap::collect called on a thread with an attached mutator: use Scope::collect"
                    .into(),
            );
        }
        if self.inner.config.mode == Mode::Epsilon {
            return Ok(());
        }
        let wait = CycleWait::begin(&self.inner);
        let n = self
            .inner
            .request_cycle(GcCause::Explicit(cause.to_string()));
        if self.inner.wait_for_cycle(n, &wait) || self.inner.control.lock().shutdown {
            return Ok(());
        }
        Err(
            "Heap::collect gave up waiting: the calling thread is inside a scope of another \
             heap whose collector needs it while it waits"
                .into(),
        )
    }

    /// Everything recorded so far (pauses, cycles, stalls).
    pub fn stats(&self) -> GcStats {
        let mut s = self.inner.stats.lock().clone();
        s.allocated_bytes = self.inner.allocated.load(Ordering::Relaxed);
        s
    }

    /// Heap usage now.
    pub fn usage(&self) -> HeapUsage {
        let u = self.inner.usage();
        HeapUsage {
            capacity: u.capacity,
            used: u.used,
            committed: u.committed,
            allocated: self.inner.allocated.load(Ordering::Relaxed),
            cycles: self.inner.control.lock().completed,
        }
    }

    /// The configuration the heap was created with.
    pub fn config(&self) -> &HeapConfig {
        &self.inner.config
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
        self.inner
            .injected_panic
            .store(InjectedPanic::Driver as u8, Ordering::Release);
    }

    /// Make a GC mark worker thread panic in the next parallel marking (needs two GC
    /// threads or more; in `stw` mode that is inside the pause).
    #[doc(hidden)]
    pub fn inject_gc_worker_panic_for_tests(&self) {
        self.inner
            .injected_panic
            .store(InjectedPanic::MarkWorker as u8, Ordering::Release);
    }

    /// Page table and memory facts for reports: page counts by kind and memory usage.
    pub fn memory_report(&self) -> crate::memory_report::MemoryReport {
        crate::memory_report::MemoryReport::collect(&self.inner)
    }
}

impl Drop for Heap {
    fn drop(&mut self) {
        {
            let mut c = self.inner.control.lock();
            c.shutdown = true;
            self.inner.control_cv.notify_all();
        }
        let may_need_this_thread = crate::mutator::thread_has_mutator(self.inner.id)
            || crate::mutator::thread_is_running_a_mutator();
        if let Some(d) = self.driver.take() {
            if !may_need_this_thread {
                let _ = d.join();
            }
        }
    }
}

//! The heap's collector state as a composition of subsystems (ZGC's `ZHeap`): the context
//! every phase is handed ([`GcContext`]: phase state, pages, forwarding index, cycle monitor),
//! the safepoint, the strong roots, the weak handles, the direct buffers, marking, relocation, the relocation set,
//! the mutators' shared allocation state, the pacer, the statistics and the log. Each subsystem keeps its
//! state private; the driver runs a cycle as a list of calls on them, and the mutators and
//! the embedding API reach them through this struct.

use super::object_allocator::ObjectAllocator;
use super::pacer::Pacer;
use crate::config::{HeapConfig, Mode};
use crate::context::CycleControl;
use crate::context::ForwardingIndex;
use crate::context::GcContext;
use crate::context::GcState;
use crate::context::PageRegistry;
use crate::direct::DirectBuffers;
use crate::mark::Mark;
use crate::mark::WeakProcessor;
use crate::observe::GcLog;
use crate::observe::GcStats;
use crate::observe::InjectedPanics;
use crate::relocate::Relocate;
use crate::relocate::RelocationSet;
use crate::roots::Roots;
use crate::threads::IdleClassGuard;
use crate::threads::Safepoint;
use gc_core::{HeapError, PageAllocator};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

static NEXT_HEAP_ID: AtomicU64 = AtomicU64::new(1);

pub(crate) struct HeapInner {
    /// Process-unique: tells heaps apart in a thread's mutator registry and in messages.
    pub(crate) id: u64,
    pub(crate) config: HeapConfig,
    pub(crate) cx: GcContext,
    pub(crate) safepoint: Safepoint,
    pub(crate) roots: Roots,
    pub(crate) weaks: WeakProcessor,
    /// Native memory owned by heap objects, and its cleaners.
    pub(crate) direct: DirectBuffers,
    pub(crate) mark: Mark,
    pub(crate) relocate: Relocate,
    /// Slows mutators that would fill the heap before the running cycle ends.
    pub(crate) pacer: Pacer,
    pub(crate) relocation_set: RelocationSet,
    pub(crate) allocator: ObjectAllocator,
    pub(crate) stats: Mutex<GcStats>,
    pub(crate) log: GcLog,
    /// The time base of the statistics and the log.
    pub(crate) start: Instant,
    /// Cores available to the process (GC workers are boosted to this many when mutators
    /// stall, and in the `stw` pause).
    pub(crate) cores: usize,
    pub(crate) injected_panics: InjectedPanics,
}

impl HeapInner {
    /// Validate the configuration, map the memory and build the subsystems.
    pub(crate) fn new(config: HeapConfig) -> Result<HeapInner, HeapError> {
        config.validate()?;
        let mem = PageAllocator::new(&config.memory)?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        mem.set_poison(config.verify);
        let layout = mem.layout();
        let (start, size) = mem.reservation();
        let reserve = relocation_reserve(&config, &mem, cores);
        let id = NEXT_HEAP_ID.fetch_add(1, Ordering::Relaxed);
        Ok(HeapInner {
            id,
            cx: GcContext {
                state: GcState::new(layout),
                pages: PageRegistry::new(mem, reserve),
                forwarding: ForwardingIndex::new(start, size),
                control: CycleControl::default(),
                idle_class: IdleClassGuard::default(),
            },
            safepoint: Safepoint::default(),
            roots: Roots::default(),
            weaks: WeakProcessor::default(),
            direct: DirectBuffers::new(id, config.direct_memory_limit()),
            mark: Mark::default(),
            relocate: Relocate::default(),
            pacer: Pacer::new(&config),
            relocation_set: RelocationSet::default(),
            allocator: ObjectAllocator::default(),
            stats: Mutex::new(GcStats::default()),
            log: GcLog::new(config.log),
            start: Instant::now(),
            cores,
            injected_panics: InjectedPanics::default(),
            config,
        })
    }

    /// Nanoseconds since the heap was created.
    pub(crate) fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// True if the live data the last completed cycle found leaves room for `size` more
    /// bytes of mutator pages: a stalled allocation that still failed lost what that cycle
    /// freed to other threads, and should wait for another cycle rather than fail.
    pub(crate) fn last_cycle_left_room_for(&self, size: u64) -> bool {
        let live = self.stats.lock().cycles.last().map(|c| c.live_bytes);
        live.is_some_and(|l| self.cx.pages.room_after(l, size))
    }
}

/// Bytes mutators may not allocate, kept for relocation targets: the configured
/// [`HeapConfig::relocation_reserve`], or by default one small page per GC
/// worker and one for mutators, plus a medium page, but never more than an eighth of the heap
/// (at least one small page): on a small heap a larger reserve would leave mutators almost
/// nothing. When the reserve runs out, relocation compacts pages in place instead of failing.
/// An `epsilon` heap never relocates and keeps none.
fn relocation_reserve(config: &HeapConfig, mem: &PageAllocator, cores: usize) -> u64 {
    if config.mode == Mode::Epsilon {
        return 0;
    }
    if let Some(bytes) = config.relocation_reserve {
        return bytes;
    }
    let sizes = mem.sizes();
    let wanted =
        (config.gc_threads.max(cores) as u64 + 1) * sizes.small + sizes.medium.unwrap_or(0);
    let cap = (config.memory.max_heap / 8 / sizes.small).max(1) * sizes.small;
    wanted.min(cap)
}

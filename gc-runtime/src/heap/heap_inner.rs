//! The heap's collector state as a composition of subsystems (ZGC's `ZHeap`): the context
//! every phase is handed ([`GcContext`]: phase state, pages, forwarding index, cycle monitor),
//! the safepoint, the strong roots, the weak handles, the direct buffers, marking, relocation,
//! the relocation set, the object allocator, the pacer, and the event sink (the statistics,
//! the log and their time base). Each subsystem keeps its state private, and so does this struct: its fields are
//! visible only inside the `heap` folder. The driver runs a cycle through the phase methods of
//! `phases.rs` (ZGC's `ZHeap::mark_start`, `mark_end`, `relocate_start`...); the mutators and
//! the embedding API reach the subsystems they register with or read through the narrow
//! accessors below.

use super::object_allocator::{AllocationHeap, ObjectAllocator};
use super::pacer::{Pacer, PacingDecision};
use super::pacing_floor::HeldTimes;
use crate::config::HeapConfig;
use crate::context::{
    CycleControl, CycleProgress, Forwarding, ForwardingIndex, GcContext, GcState, Generations,
    PageRegistry,
};
use crate::direct::DirectBuffers;
use crate::mark::Mark;
use crate::mark::WeakProcessor;
use crate::observe::GcEvents;
use crate::observe::ValueSlotCounts;
use crate::observe::{InjectedCrewSwing, InjectedHold, InjectedPanics};
use crate::relocate::Relocate;
use crate::relocate::RelocationSet;
use crate::roots::{HandleTable, MutatorShared, Roots};
use crate::threads::IdleClassGuard;
use crate::threads::{ProcessBarrier, Safepoint};
use gc_core::{AddressLayout, HeapError, PageAllocator};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

static NEXT_HEAP_ID: AtomicU64 = AtomicU64::new(1);

pub(crate) struct HeapInner {
    /// Process-unique: tells heaps apart in a thread's mutator registry and in messages.
    pub(super) id: u64,
    pub(super) config: HeapConfig,
    pub(super) cx: GcContext,
    pub(super) safepoint: Safepoint,
    pub(super) roots: Roots,
    pub(super) weaks: WeakProcessor,
    /// Native memory owned by heap objects, and its cleaners.
    pub(super) direct: DirectBuffers,
    pub(super) mark: Mark,
    pub(super) relocate: Relocate,
    /// Slows mutators that would fill the heap before the running cycle ends.
    pub(super) pacer: Pacer,
    pub(super) relocation_set: RelocationSet,
    /// The latest evacuating minor's relocation set (see `GcContext::minor_forwarding`).
    pub(super) minor_relocation_set: RelocationSet,
    /// A test's planted bug: an evacuating minor drops its forwarding table as soon as its
    /// relocation ends, a cycle early (`Heap::drop_minor_forwarding_early_for_tests`).
    pub(super) drop_minor_table_early: std::sync::atomic::AtomicBool,
    /// The adaptive tenuring threshold's survival measurements (`relocate::tenuring`).
    pub(super) tenuring: crate::relocate::Tenuring,
    pub(super) allocator: ObjectAllocator,
    /// The statistics and the log, each event written to both, and their time base.
    pub(super) events: GcEvents,
    /// Cores available to the process (GC workers are boosted to this many when mutators
    /// stall, and in the `stw` pause).
    pub(super) cores: usize,
    pub(super) injected_panics: InjectedPanics,
    /// Where a test holds a weak upgrade between Pause Mark End and Pause Relocate Start
    /// (`barrier_policy::load_weak`).
    pub(super) weak_upgrade_hold: InjectedHold,
    /// A test's swing of the GC workers' target (see `observe::InjectedCrewSwing`).
    pub(super) crew_swing: InjectedCrewSwing,
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
        config.validate_room_beyond_reserve(mem.sizes().small, reserve)?;
        let id = NEXT_HEAP_ID.fetch_add(1, Ordering::Relaxed);
        let barrier = ProcessBarrier::choose(config.membarrier);
        let generations = config
            .tracks_generations()
            .then(|| Arc::new(Generations::new(start, size)));
        let events = GcEvents::new(config.log);
        events.safepoint_barrier(barrier.name());
        Ok(HeapInner {
            id,
            cx: GcContext {
                state: GcState::new(layout, config.mark_colors),
                pages: PageRegistry::new(mem, reserve, generations.clone()),
                forwarding: ForwardingIndex::new(start, size),
                minor_forwarding: ForwardingIndex::new(start, size),
                control: CycleControl::default(),
                progress: CycleProgress::default(),
                idle_class: IdleClassGuard::default(),
                value_slots: ValueSlotCounts::default(),
                generations,
            },
            safepoint: Safepoint::new(barrier),
            roots: Roots::default(),
            weaks: WeakProcessor::default(),
            direct: DirectBuffers::new(id, config.direct_memory_limit()),
            mark: Mark::default(),
            relocate: Relocate::default(),
            pacer: Pacer::new(&config),
            relocation_set: RelocationSet::default(),
            minor_relocation_set: RelocationSet::minor(),
            drop_minor_table_early: std::sync::atomic::AtomicBool::new(false),
            tenuring: crate::relocate::Tenuring::default(),
            allocator: ObjectAllocator::default(),
            events,
            cores,
            injected_panics: InjectedPanics::default(),
            weak_upgrade_hold: InjectedHold::default(),
            crew_swing: InjectedCrewSwing::default(),
            config,
        })
    }

    /// Process-unique: tells heaps apart in a thread's mutator registry and in messages.
    #[inline]
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    #[inline]
    pub(crate) fn config(&self) -> &HeapConfig {
        &self.config
    }

    /// Cores available to the process.
    #[inline]
    pub(crate) fn cores(&self) -> usize {
        self.cores
    }

    /// The statistics and the log: every event is one call here.
    #[inline]
    pub(crate) fn events(&self) -> &GcEvents {
        &self.events
    }

    #[inline]
    pub(crate) fn injected_panics(&self) -> &InjectedPanics {
        &self.injected_panics
    }

    /// The hold point of weak upgrades, for tests (see `observe::InjectedHold`).
    pub(crate) fn weak_upgrade_hold(&self) -> &InjectedHold {
        &self.weak_upgrade_hold
    }

    /// A test's swing of the GC workers' target.
    #[inline]
    pub(crate) fn crew_swing(&self) -> &InjectedCrewSwing {
        &self.crew_swing
    }

    /// The global phase state: good color, phase, sequence number.
    #[inline]
    pub(crate) fn state(&self) -> &GcState {
        &self.cx.state
    }

    /// The address layout: views, colors, offsets.
    #[inline]
    pub(crate) fn layout(&self) -> AddressLayout {
        self.cx.layout()
    }

    /// The pages in use and the limits on taking new ones.
    #[inline]
    pub(crate) fn pages(&self) -> &PageRegistry {
        &self.cx.pages
    }

    /// Cycle requests, counters and stall bookkeeping.
    #[inline]
    pub(crate) fn control(&self) -> &CycleControl {
        &self.cx.control
    }

    /// What the barrier, marking and the full remap did to value slots.
    #[inline]
    pub(crate) fn value_slot_counts(&self) -> &ValueSlotCounts {
        &self.cx.value_slots
    }

    /// Page ages and the remembered set, if `HeapConfig::track_generations` is on (each
    /// mutator keeps a reference for its store barrier).
    #[inline]
    pub(crate) fn generations(&self) -> Option<&Arc<Generations>> {
        self.cx.generations.as_ref()
    }

    /// The starvation guard of the idle-class GC threads.
    #[inline]
    pub(crate) fn idle_class(&self) -> &IdleClassGuard {
        &self.cx.idle_class
    }

    /// The safepoint mutators attach to, block at and leave.
    #[inline]
    pub(crate) fn safepoint(&self) -> &Safepoint {
        &self.safepoint
    }

    /// The strong root sets: mutators, global handles, root regions register here.
    #[inline]
    pub(crate) fn roots(&self) -> &Roots {
        &self.roots
    }

    /// The table of weak handles.
    #[inline]
    pub(crate) fn weak_handles(&self) -> &HandleTable {
        self.weaks.handles()
    }

    /// The phantom slots of direct-buffer owners.
    #[inline]
    pub(crate) fn phantoms(&self) -> &HandleTable {
        self.weaks.phantoms()
    }

    /// Native memory owned by heap objects, and its cleaners.
    #[inline]
    pub(crate) fn direct(&self) -> &DirectBuffers {
        &self.direct
    }

    /// The mutators' shared allocation state (bytes allocated).
    #[inline]
    pub(crate) fn allocator(&self) -> &ObjectAllocator {
        &self.allocator
    }

    /// True if the pacer delayed a mutator within `d`.
    pub(crate) fn paced_within(&self, d: Duration) -> bool {
        self.pacer.paced_within(d)
    }

    /// The pages of the current relocation set, with their forwardings (installed by
    /// Concurrent Select Relocation Set, kept until the next cycle's Reset Relocation Set).
    pub(crate) fn relocation_set(&self) -> Vec<Arc<Forwarding>> {
        self.relocation_set.forwardings().to_vec()
    }

    /// Plant the bug of an evacuating minor's table dropped a cycle early.
    pub(crate) fn drop_minor_table_early_for_tests(&self) {
        self.drop_minor_table_early
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The pages of the latest evacuating minor's relocation set (installed by its
    /// selection, kept until the next cycle's Mark End).
    pub(crate) fn minor_relocation_set(&self) -> Vec<Arc<Forwarding>> {
        self.minor_relocation_set.forwardings().to_vec()
    }

    /// Hand a detaching mutator's buffered mark work to the mark queue.
    pub(crate) fn flush_mark_buffer(&self, shared: &MutatorShared) {
        shared.mark_buffer.flush(&self.mark);
    }

    /// Nanoseconds since the heap was created.
    pub(crate) fn now_ns(&self) -> u64 {
        self.events.now_ns()
    }
}

/// What an allocation reads of the heap (see `object_allocator`).
impl AllocationHeap for HeapInner {
    #[inline]
    fn config(&self) -> &HeapConfig {
        &self.config
    }

    #[inline]
    fn cx(&self) -> &GcContext {
        &self.cx
    }

    #[inline]
    fn pacing_delay(&self, bytes: u64, held: &HeldTimes) -> Option<PacingDecision> {
        self.pacer.delay_for(&self.cx, bytes, held)
    }

    #[inline]
    fn record_pacing(&self, held: &mut HeldTimes, start: Instant, imposed: Duration) {
        self.pacer.record(held, start, imposed);
    }

    #[inline]
    fn events(&self) -> &GcEvents {
        &self.events
    }

    #[inline]
    fn shared(&self) -> &ObjectAllocator {
        &self.allocator
    }
}

/// Bytes mutators may not allocate, kept for relocation targets (see
/// [`HeapConfig::relocation_reserve_bytes`]): the configured
/// [`HeapConfig::relocation_reserve`], or by default one small page per GC worker and one for
/// mutators, plus a medium page, but never more than an eighth of the heap (at least one small
/// page): on a small heap a larger reserve would leave mutators almost nothing. When the
/// reserve runs out, relocation compacts pages in place instead of failing. An `epsilon` heap
/// never relocates and keeps none.
fn relocation_reserve(config: &HeapConfig, mem: &PageAllocator, cores: usize) -> u64 {
    let sizes = mem.sizes();
    config.relocation_reserve_bytes(sizes.small, sizes.medium, cores)
}

//! Statistics an embedder can read and serialize (ZGC's `ZStatistics`, in the units of
//! `-Xlog:gc`): the most recent pauses, cycles, allocation stalls, pacing delays and slow page
//! allocations (a bounded number, [`RECENT_EVENTS`] of each kind), every event since the
//! heap's creation as counts and latency histograms ([`EventTotals`]), and totals. A heap's
//! statistics stay the same size however long it runs; every single event of its life is for
//! a subscriber (`Heap::subscribe`), which owns the memory they take.
//!
//! Times are nanoseconds; `*_at_ns` timestamps count from the heap's creation. Pauses, phases
//! and causes are the enums of `gc_phase` and `gc_cause`, serialized as their log names.

use super::latency_histogram::LatencyHistogram;
use gc_core::GoodColor;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use super::gc_cause::GcCause;
pub use super::gc_phase::{CyclePhase, GcPhase, PauseKind};
pub use super::safepoint_timeout::{Activity, SafepointTimeoutRecord, Straggler};

/// One stop-the-world pause.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PauseRecord {
    pub kind: PauseKind,
    /// GC cycle number (`GC(n)`).
    pub cycle: u64,
    /// When the collector asked mutators to stop.
    pub start_at_ns: u64,
    /// From the request to stop until every mutator had stopped.
    pub time_to_safepoint_ns: u64,
    /// From all stopped until the collector released the mutators.
    pub at_safepoint_ns: u64,
    /// `time_to_safepoint_ns + at_safepoint_ns` (the whole pause a mutator can see).
    pub total_ns: u64,
    /// Of `time_to_safepoint_ns`, the longest time a mutator was runnable but had no CPU (the
    /// kernel's run delay of its thread over the pause, at most the time to safepoint): the
    /// part of the wait the scheduler decided — another process, a meter, or the collector's
    /// own driver holding the mutator's core —, not the mutator's path to its next safepoint
    /// poll. `None` where the kernel keeps no per-thread `schedstat`, for pauses with no
    /// mutator, and in records written before it was measured.
    #[serde(default)]
    pub time_to_safepoint_cpu_wait_ns: Option<u64>,
    /// Work items done inside the pause: root slots visited, mark-buffer entries handed
    /// over, objects relocated (the heap verifier's walk, a debugging aid, is not counted).
    /// The `concurrent` mode's pauses do none of these (0 however many roots and threads
    /// there are); the `stw` pause's grows with the roots.
    #[serde(default)]
    pub work_items: u64,
    /// Time the heap verifier (`HeapConfig::verify`, a debugging aid) spent inside this pause,
    /// included in `at_safepoint_ns` and `total_ns`; 0 when the verifier is off. A report
    /// judging the collector's pauses subtracts it: the walk visits the whole heap.
    #[serde(default)]
    pub verify_ns: u64,
}

/// One concurrent (or stop-the-world) phase of a cycle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseRecord {
    /// The pause or phase, serialized as its log name, e.g. "Concurrent Mark".
    pub name: CyclePhase,
    pub start_at_ns: u64,
    pub duration_ns: u64,
}

/// One GC cycle.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CycleRecord {
    pub cycle: u64,
    /// Why the cycle ran, serialized as its log name, e.g. "Allocation Rate", "Warmup",
    /// "System.gc".
    pub cause: GcCause,
    pub start_at_ns: u64,
    pub duration_ns: u64,
    /// Phases in order, pauses included (named as the pauses).
    pub phases: Vec<PhaseRecord>,
    pub heap_before: u64,
    pub heap_after: u64,
    pub heap_capacity: u64,
    /// Bytes found live by marking.
    pub live_bytes: u64,
    /// Objects GC workers traced (each live object once, objects allocated in the cycle
    /// never): with the marking phases' wall time, the cost of marking per object.
    #[serde(default)]
    pub objects_marked: u64,
    /// The cycle's mark color, chosen by the mark-color rule at Pause Mark Start (`None` in
    /// records written before it was recorded).
    #[serde(default)]
    pub mark_color: Option<GoodColor>,
    /// The color of stale pointers during its marking: the mark color of the cycle whose
    /// relocation set was installed at its Pause Mark Start, the previous cycle's with full
    /// cycles only, the last major's after minors (Remapped, never stale, in the first cycle).
    #[serde(default)]
    pub stale_color: Option<GoodColor>,
    /// The other color of stale pointers during its marking, after an evacuating minor: the
    /// mark color of the minor whose relocation set the minor forwarding index held at its
    /// Pause Mark Start (pointers of it are remapped through that minor's table, those of
    /// `stale_color` through the last major's), a major's as well as a minor's; `None` when the
    /// cycle before it was a major, or there was none.
    #[serde(default)]
    pub stale_minor_color: Option<GoodColor>,
    /// Slots holding a stale pointer (the previous cycle's mark color, into its relocation
    /// set) that GC workers remapped and healed while tracing, each after prefetching its
    /// forwarding entry (the mark ring's stale stage).
    #[serde(default)]
    pub stale_slots_remapped: u64,
    /// True for a minor (young-only) cycle (`Heap::collect_minor`).
    #[serde(default)]
    pub minor: bool,
    /// Remembered slots a minor cycle's Concurrent Mark Roots scanned (0 in a full cycle).
    #[serde(default)]
    pub remembered_slots_scanned: u64,
    /// Non-null strong roots marked by Concurrent Mark Roots (0 in `stw` mode, which marks
    /// them inside its pause).
    #[serde(default)]
    pub roots_marked_concurrently: u64,
    /// Weak handles Concurrent Mark Roots remapped because the previous cycle's relocation
    /// had moved their object.
    #[serde(default)]
    pub weak_handles_remapped: u64,
    pub pages_relocated: u64,
    /// Relocation-set pages compacted in place because no target memory was left.
    #[serde(default)]
    pub pages_compacted_in_place: u64,
    /// Live objects placed by in-place compaction (moved down within their page, or left
    /// where they were).
    #[serde(default)]
    pub objects_compacted_in_place: u64,
    /// Objects in-place compaction left at their own address (forwarded to themselves).
    #[serde(default)]
    pub objects_self_forwarded: u64,
    /// Times a mutator's barrier (or a root relocation) found its object's page being
    /// compacted in place, or could not get target memory, and waited for the page instead.
    #[serde(default)]
    pub relocation_waits: u64,
    pub bytes_relocated: u64,
    /// Copies GC workers made of objects a mutator's barrier had relocated first: the worker
    /// copies without looking the entry up, so its CAS lost and the copy was given back (or
    /// left behind as a dead object).
    #[serde(default)]
    pub worker_copies_lost: u64,
    /// Slots of GC workers' copies that pointed into the page just evacuated, healed to the
    /// new addresses right after it (so the next marking has fewer stale slots to remap).
    #[serde(default)]
    pub copy_slots_remapped: u64,
    /// Empty pages freed without relocation.
    pub pages_freed_empty: u64,
    /// Young pages with survivors a minor cycle aged (kept young, one minor older; 0 in a
    /// full cycle).
    #[serde(default)]
    pub pages_aged: u64,
    /// Young pages with survivors a minor cycle promoted in place (0 in a full cycle, which
    /// promotes every page at its Pause Mark Start).
    #[serde(default)]
    pub pages_promoted: u64,
    /// Slots of the objects on those pages that the minor's Concurrent Relocate remembered
    /// (pointing young, or carrying the minor's mark color).
    #[serde(default)]
    pub promoted_slots_remembered: u64,
    /// Live objects a minor cycle copied out of the sparse young pages it evacuated (to
    /// survivor or old target pages; 0 in a full cycle, whose copies count in
    /// `bytes_relocated` only).
    #[serde(default)]
    pub objects_evacuated_by_minor: u64,
    /// Of those, the objects copied to survivor target pages (aged by copy: they stay young,
    /// one minor older).
    #[serde(default)]
    pub objects_aged_by_copy: u64,
    /// The tenuring threshold a minor used (`HeapConfig::tenuring_threshold`, or the
    /// adaptive one); `None` in a full cycle.
    #[serde(default)]
    pub tenuring_threshold: Option<u8>,
    /// A minor's census: the live bytes it found on young pages of each age, eden first,
    /// then survivor 1, 2, ... up to the oldest populated age (empty in a full cycle).
    #[serde(default)]
    pub young_live_by_age: Vec<u64>,
    /// CPU time used by GC threads during the cycle.
    pub gc_cpu_ns: u64,
    /// How many times Pause Mark End had to go back to Concurrent Mark.
    pub mark_end_retries: u64,
    /// Concurrent phases that ran on a GC worker thread in the idle scheduling class, the
    /// driver sleeping meanwhile, because mutators were paced (and none stalled); the others
    /// ran on the driver.
    #[serde(default)]
    pub phases_on_idle_workers: u64,
    /// GC workers that joined a running parallel phase (marking, relocation) because a
    /// mutator started waiting for the cycle (paced or stalled) after the phase began.
    #[serde(default)]
    pub workers_joined: u64,
    /// GC workers that left a running parallel phase (parked) because no mutator waited any
    /// more.
    #[serde(default)]
    pub workers_left: u64,
    /// Idle-class GC threads found starved in this cycle (other processes kept every core
    /// busy): each keeps GC threads at normal priority for a while (see the
    /// `idle_class_guard` module).
    #[serde(default)]
    pub idle_class_starvations: u64,
    /// Of those, the ones moved back to normal priority at once (the system may refuse it:
    /// leaving the idle class needs `CAP_SYS_NICE` or an `RLIMIT_NICE` of 20).
    #[serde(default)]
    pub idle_class_raised: u64,
    /// Dead direct-buffer owners found this cycle (one cleaner run each).
    #[serde(default)]
    pub cleaners_run: u64,
    /// Requested bytes of native memory those cleaners freed.
    #[serde(default)]
    pub direct_bytes_cleaned: u64,
}

/// A mutator that waited for memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StallRecord {
    pub thread: String,
    pub start_at_ns: u64,
    pub duration_ns: u64,
    /// True if the wait ended in an out-of-memory error.
    pub failed: bool,
}

/// A mutator the collector slowed down so it would not outrun the cycle (a pacing delay,
/// see `pacer`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PacingRecord {
    pub thread: String,
    pub start_at_ns: u64,
    /// How long the mutator was held: from going to sleep until it ran again (the OS wakes
    /// a sleeper a little late, and a pause in progress holds it until the pause ends). The
    /// figure the wait reports use.
    pub duration_ns: u64,
    /// The delay the pacer imposed (never more than `PacingConfig::max_delay`); 0 in records
    /// written before it was kept.
    #[serde(default)]
    pub imposed_ns: u64,
    /// The part of `imposed_ns` beyond what the pacer's floor allows at its full share
    /// (`PacingConfig::min_mutator_share`): the floor yields when free memory would run out
    /// before the running cycle frees any, so that the mutator is slowed rather than stalled.
    /// 0 when the floor held, and in records written before it was kept.
    #[serde(default)]
    pub beyond_floor_ns: u64,
}

/// A mutator that waited for a new page the heap had to get from the operating system:
/// committing memory to the backing file and mapping it into the four views, or waiting for
/// the kernel's memory-map lock to do so (ZGC's page allocation; JFR's `ZPageAllocation`).
/// A page handed out from the page cache takes microseconds, and mapping fresh memory about a
/// tenth of a millisecond on the development VM; only allocations that took
/// [`PAGE_ALLOCATION_RECORD_MIN`] (1 ms, the waits the reports care about) or longer are
/// recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageAllocationRecord {
    pub thread: String,
    pub start_at_ns: u64,
    pub duration_ns: u64,
}

/// The shortest mutator page allocation recorded as a [`PageAllocationRecord`].
pub const PAGE_ALLOCATION_RECORD_MIN: std::time::Duration = std::time::Duration::from_millis(1);

/// The most recent events of each kind a heap keeps ([`GcStats`]'s `pauses`, `cycles`,
/// `stalls`, `pacing` and `page_allocations` each hold at most this many, the newest): a heap
/// that runs for a day keeps the same few megabytes of records as one that ran a minute. What
/// happened since creation is in [`GcStats::totals`]; a harness that wants every event
/// subscribes (`Heap::subscribe`).
pub const RECENT_EVENTS: usize = 1024;

/// Every event of a heap's life, aggregated: counts, sums and a latency histogram per kind
/// (three significant digits), the same size after a day as after a second. Percentiles and
/// maxima come from here once a kind has passed [`RECENT_EVENTS`] records.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EventTotals {
    /// Cycles completed.
    pub cycles: u64,
    /// Every pause, its whole length (`PauseRecord::total_ns`, time to safepoint included).
    pub pauses: LatencyHistogram,
    /// The pauses of each kind (a kind that never ran is absent).
    pub pauses_by_kind: BTreeMap<PauseKind, LatencyHistogram>,
    /// Every pause's time to safepoint: how long the collector waited for the last mutator.
    pub time_to_safepoint: LatencyHistogram,
    /// Allocation and direct-memory stalls, each as long as its thread waited.
    pub stalls: LatencyHistogram,
    /// Of the stalls, those that ended in an out-of-memory error.
    pub failed_stalls: u64,
    /// Pacing delays, each as long as its thread was held (`PacingRecord::duration_ns`).
    pub pacing: LatencyHistogram,
    /// Nanoseconds mutators were held by pacing delays, in all (exact; the histogram's sum
    /// would be rounded).
    pub pacing_held_ns: u64,
    /// Mutator page allocations of [`PAGE_ALLOCATION_RECORD_MIN`] or longer.
    pub page_allocations: LatencyHistogram,
    /// Pauses that waited longer than the safepoint timeout for their mutators (each also a
    /// [`SafepointTimeoutRecord`]), counted when the timeout passes, before the pause ends.
    #[serde(default)]
    pub safepoint_timeouts: u64,
}

impl EventTotals {
    /// All events of the kinds kept as records.
    pub fn events(&self) -> u64 {
        self.cycles
            + self.pauses.len()
            + self.stalls.len()
            + self.pacing.len()
            + self.page_allocations.len()
    }

    /// Add a pause.
    pub(crate) fn add_pause(&mut self, p: &PauseRecord) {
        self.pauses.record(p.total_ns);
        self.pauses_by_kind
            .entry(p.kind)
            .or_default()
            .record(p.total_ns);
        self.time_to_safepoint.record(p.time_to_safepoint_ns);
    }

    /// Add a stall.
    pub(crate) fn add_stall(&mut self, s: &StallRecord) {
        self.stalls.record(s.duration_ns);
        self.failed_stalls += u64::from(s.failed);
    }

    /// Add a pacing delay.
    pub(crate) fn add_pacing(&mut self, p: &PacingRecord) {
        self.pacing.record(p.duration_ns);
        self.pacing_held_ns += p.duration_ns;
    }
}

/// What the runtime recorded: the most recent events of each kind ([`RECENT_EVENTS`] at most,
/// oldest first, from `Heap::stats`; every event of a heap's life, from a subscription), the
/// counts since creation and the totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GcStats {
    pub pauses: Vec<PauseRecord>,
    pub cycles: Vec<CycleRecord>,
    pub stalls: Vec<StallRecord>,
    /// Pacing delays, in the order they ended.
    #[serde(default)]
    pub pacing: Vec<PacingRecord>,
    /// Mutator page allocations that took [`PAGE_ALLOCATION_RECORD_MIN`] or longer, in the
    /// order they ended.
    #[serde(default)]
    pub page_allocations: Vec<PageAllocationRecord>,
    /// Pauses that waited longer than the safepoint timeout for their mutators, with the
    /// mutators still running then (see `observe::safepoint_timeout`).
    #[serde(default)]
    pub safepoint_timeouts: Vec<SafepointTimeoutRecord>,
    /// Bytes allocated by mutators since the heap was created.
    pub allocated_bytes: u64,
    /// Total CPU time of GC threads since the heap was created.
    pub gc_cpu_ns: u64,
    /// Bytes of committed memory given back to the operating system (see
    /// `HeapConfig::uncommit_delay`).
    #[serde(default)]
    pub uncommitted_bytes: u64,
    /// Direct and pooled buffers owned by heap objects, now.
    #[serde(default)]
    pub direct: DirectStats,
    /// Every event since the heap was created, as counts and histograms (more than the
    /// records hold once a kind passed [`RECENT_EVENTS`]).
    #[serde(default)]
    pub totals: EventTotals,
    /// How the safepoint handshake orders its two sides, chosen when the heap was created:
    /// `membarrier` (the collector issues a process-wide barrier per pause request, the
    /// mutators no fence) or `fences` (a `SeqCst` fence on both sides); empty where no heap
    /// of this runtime recorded it (a JVM's log).
    #[serde(default)]
    pub safepoint_barrier: String,
}

/// The heap's direct buffers (`Scope::alloc_direct`, `Scope::alloc_pooled`): native memory
/// owned by heap objects, freed by `release` or by the owner's cleaner.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectStats {
    /// The limit in requested bytes (`HeapConfig::max_direct_memory`).
    pub limit: u64,
    /// Requested bytes of buffers whose memory is not freed yet (what the limit counts).
    pub reserved_bytes: u64,
    /// Of those, unpooled direct memory.
    pub direct_bytes: u64,
    /// Of those, buffers from embedders' pools.
    pub pooled_bytes: u64,
    /// Owner objects the collector has not found dead yet (released buffers included).
    pub owners: u64,
    /// Buffers allocated since the heap was created.
    pub allocated: u64,
    /// Buffers whose memory `release` freed.
    pub released: u64,
    /// Buffers whose memory their owner's cleaner freed (the owner died unreleased).
    pub cleaned: u64,
    /// Requested bytes the cleaners freed.
    pub cleaned_bytes: u64,
    /// Dead owners found (one cleaner run each, released or not).
    pub owners_dead: u64,
    /// GC cycles requested because an allocation would have passed the limit.
    pub limit_cycles: u64,
    /// Allocations refused at the limit after those cycles.
    pub limit_failures: u64,
    /// Bytes mapped for unpooled direct buffers now (page-rounded).
    pub unpooled_mapped_bytes: u64,
}

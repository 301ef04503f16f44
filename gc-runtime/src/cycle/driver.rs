//! The driver (ZGC's `ZDriver`): the thread that runs GC cycles, phase by phase, with the
//! same names in code, logs and statistics ([`crate::GcPhase`], [`crate::PauseKind`]). Each
//! phase is one phase method of `HeapInner` (`heap/phases.rs`, as ZGC's driver calls
//! `ZHeap::mark_start` and the like), a call on one subsystem handed the heap's `GcContext`;
//! the driver reaches no subsystem itself:
//!
//! 1. Pause Mark Start — only `GcState::flip_to_mark` (the cycle's mark color, a new sequence
//!    number, which retires every allocating page: mutators never bump a page of an older
//!    sequence number);
//! 2. Concurrent Mark Roots — `Mark::mark_roots` marks and heals the strong roots while the
//!    mutators run (their barriers heal the roots they load first), and
//!    `WeakProcessor::remap_stale` remaps the weak handles the last relocation left behind;
//! 3. Concurrent Mark — `Mark::drain`: GC workers trace; mutators' barriers mark what they
//!    load;
//! 4. Pause Mark End — `Mark::is_complete`: the queue is empty and no mutator's mark buffer
//!    holds work (one counter, not a walk over the mutators; see `mark_buffer`); if not, back
//!    to 3 ("Concurrent Mark Continue"), which flushes the buffers; the buffers are drained
//!    concurrently first, so the pause usually succeeds;
//! 5. Concurrent Process Non-Strong References — `WeakProcessor::process` clears dead weak
//!    handles and finds dead direct-buffer owners, whose cleaners
//!    (`DirectBuffers::run_cleaners`) free their native memory right away;
//! 6. Concurrent Reset Relocation Set — `RelocationSet::reset` forgets the previous cycle's
//!    forwarding;
//! 7. Concurrent Select Relocation Set — `relocation_set_selector::select` frees empty pages
//!    and picks sparse ones, `Relocate::prepare_targets` takes target pages,
//!    `RelocationSet::install` publishes the set;
//! 8. Pause Relocate Start — only `GcState::flip_to_remapped`: from now on a root with the
//!    mark color is bad, and the mutator that loads it relocates or remaps it;
//! 9. Concurrent Relocate — `Relocate::relocate_parallel` evacuates the relocation set,
//!    freeing each page when done.
//!
//! So no pause of the `concurrent` mode visits a root or copies an object: Pause Mark Start
//! and Pause Relocate Start are a color flip, Pause Mark End reads two words (each pause's work
//! is recorded as `PauseRecord::work_items`: 0 for all three).
//!
//! A minor (young-only) cycle — in `generational` mode started by the director when the young
//! generation is full (`GcCause::MinorYoungOccupancy`), in either `generational` or
//! `concurrent` mode with the generational bookkeeping on requested with
//! `Heap::collect_minor` — runs the same pauses and phases (`Cycle::run_minor`):
//! Pause Mark Start flips the color and the remembered set's index, Concurrent Mark Roots
//! also scans the remembered set, marking follows young objects only, selection frees empty
//! young pages, puts the sparse ones in the minor's own relocation set, ages the others or
//! begins their in-place promotion (by the tenuring threshold, `HeapConfig::tenuring_threshold`
//! or adaptive), Concurrent Relocate remembers the promoted objects' young and minor-colored
//! slots, makes their pages old and evacuates the sparse pages to survivor targets of the next
//! age, or to old targets at the threshold; its Concurrent Reset Relocation Set drops only
//! the previous evacuating minor's table: the last major's forwarding tables stay for the
//! old-to-old slots of its color no minor visits.
//!
//! Before each concurrent phase the driver passes the phase gate (`context/phase_gate.rs`),
//! open unless an embedder steps through the cycle with a `Stepper`; then it waits there
//! until the stepper lets the phase run, and the director starts no cycle of its own.
//!
//! In `stw` mode the same calls run inside one pause ("Pause Full"), roots included (marked,
//! then relocated by `Relocate::relocate_roots`), followed by a full remap of the heap
//! (`full_remap`) so no stale pointer and no forwarding table survives the pause. The
//! cleaners of the owners that pause found dead run after it, in Concurrent Clean Direct
//! Buffers: freeing native memory is never pause work.

use super::director::{CycleYield, Director};
use super::uncommitter::Uncommitter;
use crate::config::Mode;
use crate::context::NextCycle;
use crate::heap::HeapInner;
use crate::heap::{verify, VerifyPoint};
use crate::observe::GcCause;
use crate::observe::GcPhase;
use crate::observe::InjectedPanic;
use crate::observe::{longest_cpu_wait, thread_cpu_ns};
use crate::observe::{CycleRecord, PauseKind, PauseRecord, SafepointTimeoutRecord};
use crate::roots::MutatorShared;
use crate::threads;
use crate::threads::{CrewTotals, WorkerTarget};
use gc_core::CycleKind;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A mutator delayed by the pacer this recently counts as paced (see `Cycle::workers`).
const PACED_RECENTLY: Duration = Duration::from_millis(50);

/// True while a mutator is stalled on allocation or was paced in the last
/// [`PACED_RECENTLY`]: it waits for the collector.
fn mutators_wait(heap: &HeapInner) -> bool {
    heap.control().has_stalled_mutators() || paced_recently(heap)
}

fn paced_recently(heap: &HeapInner) -> bool {
    heap.paced_within(PACED_RECENTLY)
}

/// The driver thread's body: [`run`], and if that panics, a fatal message on stderr and
/// `abort()`. A panic in the collector means a broken invariant (or a resource it cannot do
/// without, such as room in a forwarding table): the heap can no longer be trusted, and inside
/// a pause every mutator is parked with the safepoint requested, so anything but ending the
/// process would be a silent hang. GC worker threads are scoped threads of the driver: a
/// worker's panic reaches the driver when the phase's workers have exited (`gc_workers`), and
/// aborts the same way.
pub(crate) fn run_or_abort(heap: &Arc<HeapInner>) {
    // Unwind safety does not matter: nothing observes the heap after the unwind.
    let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(heap))) else {
        return;
    };
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    // Writing to stderr can fail; the abort must happen anyway.
    let _ = writeln!(
        std::io::stderr(),
        "fatal: the GC driver of heap #{} panicked: {msg}; the heap's invariants can no \
         longer be trusted; aborting",
        heap.id()
    );
    std::process::abort();
}

/// The driver thread's loop: wait for a request or a director decision, run the cycle.
pub(super) fn run(heap: &Arc<HeapInner>) {
    let config = heap.config();
    let young_size = (config.mode == Mode::Generational).then(|| config.young_size_bytes());
    let mut director = Director::new(config.mode.is_concurrent(), young_size);
    let mut uncommitter = heap.config().uncommit_delay.map(Uncommitter::new);
    let control = heap.control();
    // A stop-the-world cycle is one pause: back to back (`DirectorConfig::continuous`), the
    // next pause would be requested the moment the last one let the mutators go, and a
    // mutator the machine was slow to reschedule would never run between them (a program
    // then advances only by chance, at the verifier's cost per pause). The continuous rule
    // waits until the mutators had as long as the last cycle took.
    let mut rest_until: Option<Instant> = None;
    loop {
        let next = control.next_cycle(heap.config().director.interval, || {
            if let Some(u) = uncommitter.as_mut() {
                uncommit(heap, u);
            }
            // While an embedder steps through cycles, only its requests (and stalls, which
            // open the gate) start one.
            let decided = director.decide(heap);
            if decided == Some(GcCause::Continuous)
                && rest_until.is_some_and(|t| Instant::now() < t)
            {
                return None;
            }
            if control.gate().is_closed() && decided != Some(GcCause::AllocationStall) {
                return None;
            }
            decided
        });
        let NextCycle::Run(cause) = next else {
            return;
        };
        let allocated_at_start = heap.allocator().allocated();
        director.cycle_started(heap.direct().allocated_bytes(), allocated_at_start);
        if cause == GcCause::MinorRequested {
            director.minor_requested();
        }
        // A minor needs the remembered set; while the store barrier does not keep it, a full
        // cycle runs instead (it collects the young generation too), and whether the next
        // interval remembers is decided at its Pause Mark Start.
        let minor = cause.is_minor()
            && config.mode != Mode::Stw
            && heap.generations().is_none_or(|g| g.remembering());
        let n = control.begin_cycle(minor);
        let t = Instant::now();
        let mut cycle = Cycle::new(heap, n, &cause);
        match heap.config().mode {
            Mode::Concurrent | Mode::Generational if minor => cycle.run_minor(),
            Mode::Concurrent | Mode::Generational => {
                let asked_off = heap
                    .generations()
                    .is_some_and(|g| g.take_unremembered_request());
                let remember =
                    director.keeps_remembered_set(config.director.continuous) && !asked_off;
                cycle.run_concurrent(remember)
            }
            Mode::Stw => cycle.run_stw(),
            Mode::Epsilon => unreachable!("epsilon heaps have no driver"),
        }
        let rec = cycle.finish();
        let during = heap.allocator().allocated() - allocated_at_start;
        let done = CycleYield {
            minor: rec.minor,
            freed: (rec.heap_before + during).saturating_sub(rec.heap_after),
            gc_cpu_ns: rec.gc_cpu_ns,
        };
        director.cycle_done(t.elapsed(), rec.heap_after, done);
        rest_until = (config.mode == Mode::Stw && config.director.continuous)
            .then(|| Instant::now() + t.elapsed());
        control.end_cycle(rec.minor);
        control.gate().cycle_ended();
    }
}

/// Between cycles: give back memory the heap has not needed for the uncommit delay.
fn uncommit(heap: &HeapInner, u: &mut Uncommitter) {
    match u.tick(heap.pages()) {
        Ok(Some(done)) => {
            heap.events()
                .uncommitted(done.bytes, done.committed_before, done.committed_after)
        }
        Ok(None) => {}
        // The memory stays committed: the heap works on, it only keeps its footprint.
        Err(e) => heap.events().uncommit_failed(&e),
    }
}

/// One GC cycle in progress.
struct Cycle<'h> {
    heap: &'h HeapInner,
    rec: CycleRecord,
    started: Instant,
    driver_cpu0: u64,
    worker_cpu: u64,
    /// Starved idle-class threads seen, and raised, before this cycle.
    starvations0: (u64, u64),
    /// Work items of the pause in progress (see `PauseRecord::work_items`).
    pause_work: u64,
    /// Time the verifier took in the pause in progress (see `PauseRecord::verify_ns`).
    pause_verify: Duration,
}

impl<'h> Cycle<'h> {
    fn new(heap: &'h HeapInner, n: u64, cause: &GcCause) -> Self {
        heap.reset_relocation_counters();
        Cycle {
            rec: CycleRecord {
                cycle: n,
                cause: cause.clone(),
                start_at_ns: heap.now_ns(),
                heap_before: heap.pages().used(),
                heap_capacity: heap.pages().capacity(),
                ..Default::default()
            },
            heap,
            started: Instant::now(),
            driver_cpu0: thread_cpu_ns(),
            worker_cpu: 0,
            starvations0: (heap.idle_class().starvations(), heap.idle_class().raised()),
            pause_work: 0,
            pause_verify: Duration::ZERO,
        }
    }

    fn n(&self) -> u64 {
        self.rec.cycle
    }

    /// A concurrent phase (or a phase inside the stw pause). While mutators are paced (see
    /// [`Self::offload_phases`]), a concurrent phase runs on a spawned GC worker thread, in
    /// the idle scheduling class, and the driver sleeps until it is done: a mutator waking
    /// from a pacing delay then finds no collector thread of normal priority on any core, and
    /// the scheduler places it on the core the collector uses and preempts the collector at
    /// once. With the driver working at normal priority on one core, a mutator woken behind
    /// another thread on the other core (a kernel thread, the VM's own agent) waited for it
    /// for up to several milliseconds: `perf sched` traces found the driver on the other core
    /// in 44 of the 45 such waits over 1 ms of a 256 MiB and a 1 GiB run. The phase keeps its
    /// progress while the mutators run flat out: they are paced, and sleep.
    fn phase<R: Send>(&mut self, phase: GcPhase, f: impl FnOnce(&mut Self) -> R + Send) -> R {
        if self.heap.config().mode.is_concurrent() {
            // A stepped cycle waits here until its stepper lets the phase run (`phase_gate`).
            self.heap.control().gate().pass(phase);
        }
        let began = self.heap.events().begin();
        let r = if self.offload_phases() {
            let guard = self.heap.idle_class();
            let (r, cpu) = crate::threads::offload("gc-phase", guard, || f(self));
            self.worker_cpu += cpu;
            self.rec.phases_on_idle_workers += 1;
            r
        } else {
            f(self)
        };
        self.heap.events().phase(&mut self.rec, phase, began);
        r
    }

    /// A stop-the-world pause: stop every mutator, run `f`, resume; records the pause.
    fn pause<R>(
        &mut self,
        kind: PauseKind,
        f: impl FnOnce(&mut Self, &[Arc<MutatorShared>]) -> R,
    ) -> R {
        let heap = self.heap;
        // Each mutator's wait-for-a-CPU counter before the request (outside the pause: a
        // read is a `pread` of under a microsecond), read again after the release.
        let waiting = heap.mutators();
        let cpu_wait_before: Vec<_> = waiting.iter().map(|m| m.run_delay.read_ns()).collect();
        let start_at_ns = heap.now_ns();
        // The snapshot of mutators is taken inside `stop`, after the request is published:
        // a thread attaching in between would otherwise be neither waited for nor see the
        // request, and run through the pause with a stale bad mask.
        // The ticket orders this pause against other heaps' (see `safepoint`).
        let ticket = threads::next_ticket();
        let (t0, muts, stragglers) = heap.stop_mutators(ticket);
        let t1 = Instant::now();
        if heap.injected_panics().take(InjectedPanic::Driver) {
            panic!("GC panic injected for a test, in {}", kind.name());
        }
        self.pause_work = 0;
        self.pause_verify = Duration::ZERO;
        let r = f(self, &muts);
        heap.resume_mutators();
        let t2 = Instant::now();
        let ttsp = t1.duration_since(t0);
        let at = t2.duration_since(t1);
        let total = t2.duration_since(t0);
        let cpu_wait_after: Vec<_> = waiting.iter().map(|m| m.run_delay.read_ns()).collect();
        let cpu_wait = longest_cpu_wait(&cpu_wait_before, &cpu_wait_after, ttsp.as_nanos() as u64);
        let pause = PauseRecord {
            kind,
            cycle: self.n(),
            start_at_ns,
            time_to_safepoint_ns: ttsp.as_nanos() as u64,
            at_safepoint_ns: at.as_nanos() as u64,
            total_ns: total.as_nanos() as u64,
            time_to_safepoint_cpu_wait_ns: cpu_wait,
            work_items: self.pause_work,
            verify_ns: self.pause_verify.as_nanos() as u64,
        };
        if !stragglers.is_empty() {
            heap.events().safepoint_timeout(SafepointTimeoutRecord {
                kind,
                cycle: self.n(),
                start_at_ns,
                time_to_safepoint_ns: pause.time_to_safepoint_ns,
                stragglers,
            });
        }
        heap.events().pause(&mut self.rec, pause);
        r
    }

    /// Run the heap verifier at `point` if it is on, its time added to the pause's
    /// `verify_ns`.
    fn verify(&mut self, muts: &[Arc<MutatorShared>], point: VerifyPoint) {
        if self.heap.config().verify {
            let t = Instant::now();
            verify(self.heap, muts, point);
            self.pause_verify += t.elapsed();
        }
    }

    /// GC workers a parallel phase wants now: `gc_threads`, boosted to every core while
    /// mutators are stalled on allocation or being paced (they leave their cores idle, or
    /// partly idle, and the cycle is what they wait for; ZGC boosts its workers when mutators
    /// stall) and in the `stw` pause (nothing else runs then, as with a parallel
    /// stop-the-world collector). The phase's workers read it at safe points of their loops
    /// while the phase runs (`threads::Crew`): a phase started with `gc_threads` workers gains
    /// the others when a mutator starts waiting, and gives them up when none waits.
    fn workers(heap: &HeapInner) -> usize {
        let normal = heap.config().gc_threads;
        if let Some(n) = heap.crew_swing().target(normal, heap.most_gc_workers()) {
            return n;
        }
        let boost = heap.config().mode == Mode::Stw || mutators_wait(heap);
        if boost {
            heap.most_gc_workers()
        } else {
            normal
        }
    }

    /// What a parallel phase's workers follow: [`Self::workers`]; a worker that joined in
    /// the idle scheduling class stays to the end of the phase (it takes only what nobody
    /// else wants), unless a test swings the target to make every worker come and go.
    fn target<'a>(heap: &HeapInner, count: &'a (dyn Fn() -> usize + Sync)) -> WorkerTarget<'a> {
        WorkerTarget {
            count,
            idle_class_stays: !heap.crew_swing().is_on(),
        }
    }

    fn paced_recently(&self) -> bool {
        paced_recently(self.heap)
    }

    /// Run concurrent phases on idle-class workers (see [`Self::phase`]): in `concurrent`
    /// mode, while mutators are paced and none is stalled. Paced mutators sleep and wake
    /// every millisecond or so and want a core at once; a stalled one waits for the whole
    /// cycle, which must then not depend on what other processes leave idle (idle-class
    /// threads get almost nothing of a core something else wants).
    fn offload_phases(&self) -> bool {
        self.heap.config().mode.is_concurrent()
            && self.paced_recently()
            && !self.heap.control().has_stalled_mutators()
            && self.heap.idle_class().allowed()
    }

    /// Concurrent Mark (or Mark inside the `stw` pause): drain marking until the queue and the
    /// mutators' buffers are empty.
    fn mark(&mut self) {
        let heap = self.heap;
        let crew = heap.mark(Self::target(heap, &|| Self::workers(heap)));
        self.crew_done(crew);
    }

    /// A parallel phase's crew is done: its CPU time and how its size changed.
    fn crew_done(&mut self, crew: CrewTotals) {
        self.worker_cpu += crew.cpu_ns;
        self.rec.workers_joined += crew.joined;
        self.rec.workers_left += crew.left;
    }

    /// A full concurrent cycle; `remember`: whether the store barrier remembers from its
    /// Pause Mark Start to the next full cycle's (with the generational bookkeeping on: see
    /// `Generations::remembering`).
    fn run_concurrent(&mut self, remember: bool) {
        let h = self.heap;
        self.pause(PauseKind::MarkStart, |c, muts| {
            c.verify(muts, VerifyPoint::BeforeMarkStart);
            let (mark, stale, stale_minor) = h.mark_start(CycleKind::Major, remember);
            c.rec.mark_color = Some(mark);
            c.rec.stale_color = Some(stale);
            c.rec.stale_minor_color = stale_minor;
        });
        let (roots, weaks) = self.phase(GcPhase::ConcurrentMarkRoots, |_| {
            let roots = h.mark_roots(&h.mutators());
            (roots, h.remap_stale_weaks())
        });
        self.rec.roots_marked_concurrently = roots;
        self.rec.weak_handles_remapped = weaks;
        self.mark_until_end();
        self.after_mark_end();
        // Only the flip: roots are relocated by the mutators' barriers as they load them, or
        // remapped by the next cycle's Concurrent Mark Roots (see `relocate`).
        self.pause(PauseKind::RelocateStart, |c, muts| {
            h.relocate_start();
            c.verify(muts, VerifyPoint::RelocateStart);
        });
        self.phase(GcPhase::ConcurrentRelocate, |c| c.relocate());
    }

    /// A minor (young-only) cycle, `generational` mode or `concurrent` with the generational
    /// bookkeeping on:
    /// the phases and pauses of [`Self::run_concurrent`], each pause O(1) as there. Pause
    /// Mark Start flips the mark color (`CycleKind::Minor`) and the remembered set's index,
    /// and promotes nothing; Concurrent Mark Roots marks the strong roots and scans the
    /// remembered set's previous bitmap; marking follows young objects only (an old target
    /// is healed, not marked); Concurrent Reset Relocation Set drops the previous evacuating
    /// minor's table (never the last major's, which stays installed for the pointers of its
    /// color the minor never visits); selection frees the empty young pages, puts the sparse
    /// ones in the minor's relocation set, ages the others or begins their in-place
    /// promotion; Concurrent Relocate, after Pause Relocate Start, remembers the promoted
    /// objects' young and minor-colored slots, makes their pages old, and evacuates the
    /// sparse pages to survivor or old targets (by the tenuring threshold) through the
    /// minor's own forwarding index.
    fn run_minor(&mut self) {
        let h = self.heap;
        self.rec.minor = true;
        self.pause(PauseKind::MarkStart, |c, muts| {
            c.verify(muts, VerifyPoint::BeforeMarkStart);
            let (mark, stale, stale_minor) = h.mark_start(CycleKind::Minor, true);
            c.rec.mark_color = Some(mark);
            c.rec.stale_color = Some(stale);
            c.rec.stale_minor_color = stale_minor;
        });
        let (roots, weaks, scanned) = self.phase(GcPhase::ConcurrentMarkRoots, |_| {
            let roots = h.mark_roots(&h.mutators());
            let weaks = h.remap_stale_weaks();
            (roots, weaks, h.scan_remembered())
        });
        self.rec.roots_marked_concurrently = roots;
        self.rec.weak_handles_remapped = weaks;
        self.rec.remembered_slots_scanned = scanned.0;
        self.mark_until_end();
        self.phase(GcPhase::ConcurrentProcessNonStrongReferences, |c| {
            let r = h.process_non_strong_references();
            h.events().info(
                c.n(),
                &format!(
                    "Weak handles: {} cleared, {} kept; {} dead direct-buffer owners",
                    r.cleared,
                    r.kept,
                    r.dead_phantoms.len()
                ),
            );
            c.run_cleaners();
        });
        // The previous evacuating minor's table: its color was remapped by this marking
        // wherever it can be (see `HeapInner::reset_minor_relocation_set`).
        self.phase(GcPhase::ConcurrentResetRelocationSet, |_| {
            h.reset_minor_relocation_set()
        });
        let (sel, threshold) =
            self.phase(GcPhase::ConcurrentSelectRelocationSet, |_| h.select_minor());
        self.rec.live_bytes = sel.live_bytes;
        self.rec.pages_freed_empty = sel.empty_pages_freed;
        self.rec.pages_aged = sel.pages_aged;
        self.rec.pages_promoted = sel.pages_promoted;
        self.rec.tenuring_threshold = Some(threshold);
        let populated = sel
            .live_by_age
            .iter()
            .rposition(|&b| b != 0)
            .map_or(0, |i| i + 1);
        self.rec.young_live_by_age = sel.live_by_age[..populated].to_vec();
        self.heap.events().info(
            self.n(),
            &format!(
                "Minor: {} remembered slots scanned ({} kept), {} empty young pages freed \
                 ({}M), {} aged, {} promoted in place, {} evacuated ({} aged by copy, {}K \
                 live), {}K young live, tenuring threshold {}",
                scanned.0,
                scanned.1,
                sel.empty_pages_freed,
                sel.empty_bytes_freed >> 20,
                sel.pages_aged,
                sel.pages_promoted,
                sel.pages_selected,
                sel.pages_aged_by_copy,
                sel.live_bytes_selected >> 10,
                sel.live_bytes >> 10,
                threshold
            ),
        );
        self.pause(PauseKind::RelocateStart, |c, muts| {
            h.relocate_start();
            c.verify(muts, VerifyPoint::RelocateStart);
        });
        // After the pause, a handshake with every mutator: a store whose barrier read a
        // promoted page's young age has landed, and the scan sees it (see
        // `Generations::finish_promotions`).
        // Then the sparse pages are evacuated, as a full cycle's relocation set is.
        let (slots, freed) = self.phase(GcPhase::ConcurrentRelocate, |c| {
            let (_, slots) = h.finish_promotions();
            let (freed, crew) = h.relocate_minor(Self::target(h, &|| Self::workers(h)));
            c.crew_done(crew);
            (slots, freed)
        });
        self.rec.promoted_slots_remembered = slots;
        self.rec.pages_relocated = freed;
        let totals = h.relocation_totals();
        self.rec.objects_evacuated_by_minor = totals.objects_relocated;
        self.rec.objects_aged_by_copy = totals.survivor_copies;
    }

    /// Concurrent Mark and Pause Mark End, repeated (Concurrent Mark Continue) until the
    /// pause finds no work left.
    fn mark_until_end(&mut self) {
        let h = self.heap;
        let mut phase = GcPhase::ConcurrentMark;
        loop {
            self.phase(phase, |c| c.mark());
            // Two words read, whatever the number of mutators: if a mutator's barrier marked
            // an object since the drain ended, its buffer holds it and the pause ends at once
            // (Concurrent Mark Continue flushes it). Each failed try found an object newly
            // marked, so the tries end.
            let done = self.pause(PauseKind::MarkEnd, |c, muts| {
                if !h.try_mark_end() {
                    return false;
                }
                c.verify(muts, VerifyPoint::MarkEnd);
                true
            });
            if done {
                break;
            }
            self.rec.mark_end_retries += 1;
            phase = GcPhase::ConcurrentMarkContinue;
        }
    }

    /// Phases 4-6 (concurrent in `concurrent` mode, inside the pause in `stw` mode).
    fn after_mark_end(&mut self) {
        let h = self.heap;
        self.phase(GcPhase::ConcurrentProcessNonStrongReferences, |c| {
            let r = h.process_non_strong_references();
            h.events().info(
                c.n(),
                &format!(
                    "Weak handles: {} cleared, {} kept; {} dead direct-buffer owners",
                    r.cleared,
                    r.kept,
                    r.dead_phantoms.len()
                ),
            );
            // In `concurrent` mode the cleaners run now, in this concurrent phase; inside the
            // `stw` pause they wait until it ends (`run_stw`).
            if h.config().mode.is_concurrent() {
                c.run_cleaners();
            }
        });
        self.phase(GcPhase::ConcurrentResetRelocationSet, |_| {
            h.reset_relocation_set()
        });
        // Target pages are taken now, so the roots' relocation inside Pause Relocate Start
        // only bumps a pointer.
        let sel = self.phase(GcPhase::ConcurrentSelectRelocationSet, |_| {
            h.select_relocation_set()
        });
        self.rec.live_bytes = sel.live_bytes;
        self.rec.pages_freed_empty = sel.empty_pages_freed;
        self.heap.events().info(
            self.n(),
            &format!(
                "Relocation Set: {} pages ({}K live), {} empty pages freed ({}M)",
                sel.pages_selected,
                sel.live_bytes_selected >> 10,
                sel.empty_pages_freed,
                sel.empty_bytes_freed >> 20
            ),
        );
    }

    /// Free the native memory of the direct-buffer owners found dead (never inside a pause).
    fn run_cleaners(&mut self) {
        let h = self.heap;
        let c = h.run_cleaners();
        self.rec.cleaners_run += c.owners;
        self.rec.direct_bytes_cleaned += c.bytes;
        if c.owners > 0 {
            let st = h.direct().stats();
            h.events().info(
                self.n(),
                &format!(
                    "Cleaners: {} run, {}K of direct memory freed; buffers hold {}K direct, \
                     {}K pooled ({} owners)",
                    c.owners,
                    c.bytes >> 10,
                    st.direct_bytes >> 10,
                    st.pooled_bytes >> 10,
                    st.owners
                ),
            );
        }
    }

    /// Concurrent Relocate (or Relocate inside the `stw` pause).
    fn relocate(&mut self) {
        let h = self.heap;
        let (freed, crew) = h.relocate(Self::target(h, &|| Self::workers(h)));
        self.crew_done(crew);
        self.rec.pages_relocated = freed;
    }

    fn run_stw(&mut self) {
        let h = self.heap;
        self.pause(PauseKind::Full, |c, muts| {
            c.verify(muts, VerifyPoint::BeforeMarkStart);
            let (mark, stale, stale_minor) = h.mark_start(CycleKind::Major, true);
            c.rec.mark_color = Some(mark);
            c.rec.stale_color = Some(stale);
            c.rec.stale_minor_color = stale_minor;
            c.pause_work += c.phase(GcPhase::MarkRoots, |_| h.mark_roots(muts));
            c.phase(GcPhase::Mark, |c| c.mark());
            h.mark_end();
            c.verify(muts, VerifyPoint::MarkEnd);
            c.after_mark_end();
            h.relocate_start();
            c.pause_work += c.phase(GcPhase::RelocateRoots, |_| h.relocate_roots(muts));
            c.verify(muts, VerifyPoint::RelocateStart);
            c.phase(GcPhase::Relocate, |c| c.relocate());
            c.pause_work += h.relocation_totals().objects_relocated;
            c.phase(GcPhase::Remap, |_| h.remap_all());
            h.reset_relocation_set();
            c.verify(muts, VerifyPoint::AfterRelocation);
        });
        self.phase(GcPhase::ConcurrentCleanDirectBuffers, |c| c.run_cleaners());
    }

    fn finish(mut self) -> CycleRecord {
        let heap = self.heap;
        self.rec.duration_ns = self.started.elapsed().as_nanos() as u64;
        self.rec.heap_after = heap.pages().used();
        (self.rec.objects_marked, self.rec.stale_slots_remapped) = heap.take_mark_counts();
        let r = heap.relocation_totals();
        self.rec.bytes_relocated = r.bytes_relocated;
        self.rec.pages_compacted_in_place = r.pages_in_place;
        self.rec.objects_compacted_in_place = r.objects_in_place;
        self.rec.objects_self_forwarded = r.self_forwards;
        self.rec.relocation_waits = r.waits;
        self.rec.worker_copies_lost = r.worker_copies_lost;
        self.rec.copy_slots_remapped = r.copy_slots_remapped;
        self.rec.gc_cpu_ns = thread_cpu_ns() - self.driver_cpu0 + self.worker_cpu;
        let guard = heap.idle_class();
        self.rec.idle_class_starvations = guard.starvations() - self.starvations0.0;
        self.rec.idle_class_raised = guard.raised() - self.starvations0.1;
        if self.rec.idle_class_starvations > 0 {
            heap.events().info(
                self.n(),
                &format!(
                    "Idle-class GC threads starved: {} (other threads kept every core busy), \
                     {} moved back to normal priority; GC threads stay there for a while",
                    self.rec.idle_class_starvations, self.rec.idle_class_raised
                ),
            );
        }
        heap.events().cycle(&self.rec);
        self.rec
    }
}

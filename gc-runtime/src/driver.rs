//! The driver (ZGC's `ZDriver`): the thread that runs GC cycles, phase by phase, with the
//! same names in code, logs and statistics ([`crate::GcPhase`], [`crate::PauseKind`]):
//!
//! 1. Pause Mark Start — flip to the cycle's mark color, new sequence number (which retires
//!    every allocating page: mutators never bump a page of an older sequence number), mark
//!    and heal the roots;
//! 2. Concurrent Mark — GC workers trace; mutators' barriers mark what they load;
//! 3. Pause Mark End — take the mutators' buffers; if they held work, back to 2
//!    ("Concurrent Mark Continue"); the buffers are drained concurrently first, so the pause
//!    usually succeeds;
//! 4. Concurrent Process Non-Strong References — clear dead weak handles;
//! 5. Concurrent Reset Relocation Set — forget the previous cycle's forwarding;
//! 6. Concurrent Select Relocation Set — free empty pages, pick sparse pages;
//! 7. Pause Relocate Start — flip to Remapped, relocate or remap the roots;
//! 8. Concurrent Relocate — evacuate the relocation set, freeing each page when done.
//!
//! In `stw` mode the same phases run inside one pause ("Pause Full"), followed by a full
//! remap of the heap so no stale pointer and no forwarding table survives the pause.

use crate::cpu_time::thread_cpu_ns;
use crate::director::Director;
use crate::gc_cause::GcCause;
use crate::gc_phase::GcPhase;
use crate::heap::{HeapInner, InjectedPanic};
use crate::mutator::MutatorShared;
use crate::stats::{CycleRecord, PauseKind, PauseRecord, PhaseRecord};
use crate::verifier::VerifyPoint;
use crate::Mode;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// The driver thread's body: [`run`], and if that panics, a fatal message on stderr and
/// `abort()`. A panic in the collector means a broken invariant (or a resource it cannot do
/// without, such as room in a forwarding table): the heap can no longer be trusted, and inside
/// a pause every mutator is parked with the safepoint requested, so anything but ending the
/// process would be a silent hang. GC worker threads are scoped threads of the driver: a
/// worker's panic reaches the driver when its `std::thread::scope` ends, and aborts the same
/// way.
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
    // What `std::thread::scope` panics with when one of its threads panicked.
    let msg = if msg == "a scoped thread panicked" {
        "a GC worker thread panicked (its own message is printed above, by the panic hook)"
            .to_string()
    } else {
        msg
    };
    // Writing to stderr can fail; the abort must happen anyway.
    let _ = writeln!(
        std::io::stderr(),
        "fatal: the GC driver of heap #{} panicked: {msg}; the heap's invariants can no \
         longer be trusted; aborting",
        heap.id
    );
    std::process::abort();
}

/// The driver thread's loop: wait for a request or a director decision, run the cycle.
pub(crate) fn run(heap: &Arc<HeapInner>) {
    let mut director = Director::new();
    loop {
        let cause = {
            let mut c = heap.control.lock();
            loop {
                if c.shutdown {
                    return;
                }
                if let Some(cause) = c.requested.take() {
                    break cause;
                }
                drop(c);
                let decided = director.decide(heap);
                c = heap.control.lock();
                if let Some(cause) = decided {
                    break cause;
                }
                if c.requested.is_none() && !c.shutdown {
                    heap.control_cv
                        .wait_for(&mut c, heap.config.director.interval);
                }
            }
        };
        let n = {
            let mut c = heap.control.lock();
            c.started += 1;
            c.started - 1
        };
        let t = Instant::now();
        let mut cycle = Cycle::new(heap, n, &cause);
        match heap.config.mode {
            Mode::Concurrent => cycle.run_concurrent(),
            Mode::Stw => cycle.run_stw(),
            Mode::Epsilon => unreachable!("epsilon heaps have no driver"),
        }
        let rec = cycle.finish();
        director.cycle_done(t.elapsed(), rec.heap_after);
        {
            let mut c = heap.control.lock();
            c.completed += 1;
            heap.control_cv.notify_all();
        }
    }
}

/// One GC cycle in progress.
struct Cycle<'h> {
    heap: &'h HeapInner,
    rec: CycleRecord,
    started: Instant,
    driver_cpu0: u64,
    worker_cpu: u64,
}

impl<'h> Cycle<'h> {
    fn new(heap: &'h HeapInner, n: u64, cause: &GcCause) -> Self {
        heap.reloc_alloc.counters.reset();
        Cycle {
            rec: CycleRecord {
                cycle: n,
                cause: cause.name().to_string(),
                start_at_ns: heap.now_ns(),
                heap_before: heap.mem.used(),
                heap_capacity: heap.mem.capacity(),
                ..Default::default()
            },
            heap,
            started: Instant::now(),
            driver_cpu0: thread_cpu_ns(),
            worker_cpu: 0,
        }
    }

    fn n(&self) -> u64 {
        self.rec.cycle
    }

    /// A concurrent phase (or a phase inside the stw pause).
    fn phase<R>(&mut self, phase: GcPhase, f: impl FnOnce(&mut Self) -> R) -> R {
        let name = phase.name();
        let start_at_ns = self.heap.now_ns();
        let t = Instant::now();
        let r = f(self);
        let d = t.elapsed();
        self.heap.log.phase(self.heap.start, self.n(), name, d);
        self.rec.phases.push(PhaseRecord {
            name: name.to_string(),
            start_at_ns,
            duration_ns: d.as_nanos() as u64,
        });
        r
    }

    /// A stop-the-world pause: stop every mutator, run `f`, resume; records the pause.
    fn pause<R>(
        &mut self,
        kind: PauseKind,
        f: impl FnOnce(&mut Self, &[Arc<MutatorShared>]) -> R,
    ) -> R {
        let heap = self.heap;
        let start_at_ns = heap.now_ns();
        // The snapshot of mutators is taken inside `stop`, after the request is published:
        // a thread attaching in between would otherwise be neither waited for nor see the
        // request, and run through the pause with a stale bad mask.
        // The ticket orders this pause against other heaps' (see `safepoint`).
        let ticket = crate::safepoint::next_ticket();
        let (t0, muts) = heap.safepoint.stop(ticket, || heap.mutators_snapshot());
        let t1 = Instant::now();
        if heap.take_injected_panic(InjectedPanic::Driver) {
            panic!("GC panic injected for a test, in {}", kind.name());
        }
        let r = f(self, &muts);
        heap.safepoint.resume();
        let t2 = Instant::now();
        let ttsp = t1.duration_since(t0);
        let at = t2.duration_since(t1);
        let total = t2.duration_since(t0);
        heap.log.phase(heap.start, self.n(), kind.name(), total);
        heap.stats.lock().pauses.push(PauseRecord {
            kind,
            cycle: self.n(),
            start_at_ns,
            time_to_safepoint_ns: ttsp.as_nanos() as u64,
            at_safepoint_ns: at.as_nanos() as u64,
            total_ns: total.as_nanos() as u64,
        });
        self.rec.phases.push(PhaseRecord {
            name: kind.name().to_string(),
            start_at_ns,
            duration_ns: total.as_nanos() as u64,
        });
        r
    }

    fn verify(&self, muts: &[Arc<MutatorShared>], point: VerifyPoint) {
        if self.heap.config.verify {
            self.heap.verify(muts, point);
        }
    }

    /// GC workers for the next parallel phase: `gc_threads`, boosted to every core while
    /// mutators are stalled on allocation (they leave their cores idle, and the cycle is what
    /// they wait for; ZGC boosts its workers the same way) and in the `stw` pause (nothing
    /// else runs then, as with a parallel stop-the-world collector).
    fn workers(&self) -> usize {
        let boost = self.heap.config.mode == Mode::Stw
            || self.heap.stalled_waiters.load(Ordering::Acquire) > 0;
        if boost {
            self.heap.config.gc_threads.max(self.heap.cores)
        } else {
            self.heap.config.gc_threads
        }
    }

    /// Drain marking until the queue and the mutators' buffers are empty.
    fn mark_until_empty(&mut self) {
        loop {
            self.worker_cpu += self.heap.mark_parallel(self.workers());
            if !self.heap.flush_mutator_buffers() && self.heap.mark_queue.is_empty() {
                break;
            }
        }
    }

    fn run_concurrent(&mut self) {
        let n = self.n();
        self.pause(PauseKind::MarkStart, |c, muts| {
            c.verify(muts, VerifyPoint::BeforeMarkStart);
            c.heap.state.flip_to_mark(n);
            c.heap.mark_roots(muts);
        });
        let mut phase = GcPhase::ConcurrentMark;
        loop {
            self.phase(phase, |c| c.mark_until_empty());
            let done = self.pause(PauseKind::MarkEnd, |c, muts| {
                c.heap.flush_mutator_buffers();
                if !c.heap.mark_queue.is_empty() {
                    return false;
                }
                c.heap.state.set_mark_complete();
                c.verify(muts, VerifyPoint::MarkEnd);
                true
            });
            if done {
                break;
            }
            self.rec.mark_end_retries += 1;
            phase = GcPhase::ConcurrentMarkContinue;
        }
        self.after_mark_end();
        self.pause(PauseKind::RelocateStart, |c, muts| {
            c.heap.state.flip_to_remapped();
            c.heap.relocate_roots(muts);
            c.verify(muts, VerifyPoint::RelocateStart);
        });
        self.phase(GcPhase::ConcurrentRelocate, |c| c.relocate());
    }

    /// Phases 4-6 (concurrent in `concurrent` mode, inside the pause in `stw` mode).
    fn after_mark_end(&mut self) {
        self.phase(GcPhase::ConcurrentProcessNonStrongReferences, |c| {
            let (cleared, kept) = c.heap.process_weak_handles();
            c.heap.log.info(
                c.heap.start,
                c.n(),
                &format!("Weak handles: {cleared} cleared, {kept} kept"),
            );
        });
        self.phase(GcPhase::ConcurrentResetRelocationSet, |c| {
            c.heap.reset_relocation_set()
        });
        let sel = self.phase(GcPhase::ConcurrentSelectRelocationSet, |c| {
            c.heap.select_relocation_set()
        });
        self.rec.live_bytes = sel.live_bytes;
        self.rec.pages_freed_empty = sel.empty_pages_freed;
        self.heap.log.info(
            self.heap.start,
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

    fn relocate(&mut self) {
        let (freed, cpu) = self.heap.relocate_parallel(self.workers());
        self.worker_cpu += cpu;
        self.rec.pages_relocated = freed;
    }

    fn run_stw(&mut self) {
        let n = self.n();
        self.pause(PauseKind::Full, |c, muts| {
            c.verify(muts, VerifyPoint::BeforeMarkStart);
            c.heap.state.flip_to_mark(n);
            c.phase(GcPhase::MarkRoots, |c| {
                c.heap.mark_roots(muts);
            });
            c.phase(GcPhase::Mark, |c| c.mark_until_empty());
            c.heap.state.set_mark_complete();
            c.verify(muts, VerifyPoint::MarkEnd);
            c.after_mark_end();
            c.heap.state.flip_to_remapped();
            c.phase(GcPhase::RelocateRoots, |c| {
                c.heap.relocate_roots(muts);
            });
            c.verify(muts, VerifyPoint::RelocateStart);
            c.phase(GcPhase::Relocate, |c| c.relocate());
            c.phase(GcPhase::Remap, |c| c.heap.remap_all());
            c.heap.reset_relocation_set();
            c.verify(muts, VerifyPoint::AfterRelocation);
        });
    }

    fn finish(mut self) -> CycleRecord {
        let heap = self.heap;
        self.rec.duration_ns = self.started.elapsed().as_nanos() as u64;
        self.rec.heap_after = heap.mem.used();
        let r = heap.reloc_alloc.counters.totals();
        self.rec.bytes_relocated = r.bytes_relocated;
        self.rec.pages_compacted_in_place = r.pages_in_place;
        self.rec.objects_compacted_in_place = r.objects_in_place;
        self.rec.objects_self_forwarded = r.self_forwards;
        self.rec.relocation_waits = r.waits;
        self.rec.gc_cpu_ns = thread_cpu_ns() - self.driver_cpu0 + self.worker_cpu;
        heap.log.cycle(
            heap.start,
            self.n(),
            &self.rec.cause,
            self.rec.heap_before,
            self.rec.heap_after,
            self.rec.heap_capacity,
        );
        let mut s = heap.stats.lock();
        s.gc_cpu_ns += self.rec.gc_cpu_ns;
        s.cycles.push(self.rec.clone());
        self.rec
    }
}

//! Cycle control: the requests that start GC cycles, the cycle counters threads wait on, and
//! the bookkeeping of allocation stalls (the request ports of ZGC's `ZDriver` and the stall
//! queue of its `ZPageAllocator`, in one small monitor).
//!
//! Requests come from [`crate::Heap::collect`], [`crate::Scope::collect`] and stalled
//! allocations; the driver takes them (or asks the director) between cycles. A thread that
//! waits for "the cycle that satisfies my request" waits for the *next cycle to start* to
//! complete, so a cycle already running when it asked does not count. Stalled mutators also
//! wake when a page is freed: relocation frees pages during the cycle, and a stalled
//! allocation is retried then rather than only at the cycle's end.
//!
//! A stall that begins while a major runs (and no request is pending) asks for no cycle yet:
//! its request is *deferred* ([`StallRequest`]) until the running cycle has ended and the
//! allocation, retried after that end, still fails. The running cycle usually frees what the
//! stalled allocation needs (the binary-trees trace of the generational mode: a High Usage
//! major that started late, the mutator stalled during it, and the stall's request then ran
//! a second major back to back, after the first had already made room). A deferred stall
//! still waits for the *next* cycle before it may fail with out-of-memory: the rule above is
//! unchanged, only the next cycle is not started for it unless it still cannot allocate.
//!
//! The monitor also times the cycles (when the running one began, how long the last few took)
//! for the pacer, which budgets free memory over what is left of the running cycle. The pacer
//! reads that on a mutator's allocation path, so it is published outside the lock as well
//! ([`CycleClock`]): a mutator must not sleep on a lock that a preempted holder keeps.

use super::phase_gate::PhaseGate;
use crate::atomic_instant::AtomicInstant;
use crate::observe::GcCause;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How many recent cycle durations are kept for [`RunningCycle::expected`].
const TIMED_CYCLES: usize = 5;

/// How long a waiter sleeps before it looks again at a condition nobody signals (another
/// heap's pause deciding that a wait must give up).
const RECHECK: Duration = Duration::from_millis(10);

#[derive(Default)]
struct Control {
    /// An explicit or stall request, with its cause.
    requested: Option<GcCause>,
    /// Cycles started / completed.
    started: u64,
    completed: u64,
    /// Whether the last completed cycle was a minor (young-only) cycle.
    last_minor: bool,
    /// Majors (every cycle but the minors) completed.
    completed_majors: u64,
    /// Mutators waiting in an allocation stall.
    stalled: u64,
    /// Of those, the ones whose request waits for the running cycle's end (see
    /// [`StallRequest`]).
    stalls_deferred: u64,
    /// The latest target of a stall request that asked for a cycle (was not deferred): once
    /// it completed, every stall is answered until one asks again.
    stall_target: u64,
    shutdown: bool,
    /// When the running cycle began (`None` between cycles).
    began_at: Option<Instant>,
    /// The running cycle is a minor.
    running_minor: bool,
    /// The durations of the last few cycles, newest last.
    durations: VecDeque<Duration>,
}

/// The cycle in progress, as the pacer sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RunningCycle {
    /// Time since it began.
    pub(crate) elapsed: Duration,
    /// The longest duration of the last few cycles (`None` before the first completed).
    pub(crate) expected: Option<Duration>,
}

/// A stalled mutator's request for a cycle (see the module documentation and
/// [`CycleControl::request_stall`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StallRequest {
    /// The cycle whose completion answers the request (the next one to start when it was
    /// made): the stall may fail with out-of-memory only once it completed.
    pub(crate) target: u64,
    /// Made while a cycle ran, and not yet renewed: the driver starts no cycle for it until
    /// the allocation, retried after that cycle ended, failed again.
    deferred: bool,
}

/// Where a stalled allocation stands, read before it retries (see
/// [`CycleControl::stall_progress`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StallProgress {
    /// The request's target cycle completed.
    pub(crate) done: bool,
    /// The heap is being dropped.
    pub(crate) shutdown: bool,
    /// The last completed cycle was a minor.
    pub(crate) last_minor: bool,
    /// Cycles completed when this was read: a retry that fails after it failed after those
    /// cycles ended.
    pub(crate) completed: u64,
}

/// What the driver should do next.
pub(crate) enum NextCycle {
    /// Run a cycle for this cause.
    Run(GcCause),
    /// The heap is being dropped: leave the loop.
    Shutdown,
}

/// The running cycle's timing, readable without the monitor's lock (the pacer's
/// [`CycleControl::running_cycle`]); written under the lock by the driver's
/// [`CycleControl::begin_cycle`] and [`CycleControl::end_cycle`].
struct CycleClock {
    /// When the running cycle began; `None` between cycles.
    began: AtomicInstant,
    /// The longest of the last few cycles' durations in nanoseconds; 0 before the first
    /// completed.
    expected_ns: AtomicU64,
}

impl Default for CycleClock {
    fn default() -> Self {
        CycleClock {
            began: AtomicInstant::new(Instant::now()),
            expected_ns: AtomicU64::new(0),
        }
    }
}

/// The heap's cycle monitor. See the module documentation.
#[derive(Default)]
pub(crate) struct CycleControl {
    control: Mutex<Control>,
    /// The running cycle's timing for the pacer, outside the lock.
    clock: CycleClock,
    /// Signals the driver (requests) and waiters (cycle completed, page freed).
    cv: Condvar,
    /// Mutators in an allocation stall, readable without the lock (page frees look at it).
    stalled_waiters: AtomicU64,
    /// Where the driver waits between phases while an embedder steps through a cycle.
    gate: PhaseGate,
}

impl CycleControl {
    /// Ask the driver for a cycle; returns the number of the cycle that will satisfy the
    /// request (the next one to start), for [`Self::wait_for_cycle`].
    pub(crate) fn request(&self, cause: GcCause) -> u64 {
        let mut c = self.control.lock();
        // A pending minor request gives way to any other (a full cycle also collects the
        // young generation); any other pending request absorbs a minor one.
        if c.requested.as_ref().is_none_or(GcCause::is_minor) {
            c.requested = Some(cause);
        }
        self.cv.notify_all();
        c.started + 1
    }

    /// Wait until cycle `n` has completed, the heap shuts down, or `give_up` says so (looked
    /// at every few milliseconds). Returns true if the cycle completed.
    pub(crate) fn wait_for_cycle(&self, n: u64, give_up: impl Fn() -> bool) -> bool {
        self.gate
            .open_for_wait("a thread waited for a requested cycle");
        let mut c = self.control.lock();
        while c.completed < n && !c.shutdown && !give_up() {
            self.cv.wait_for(&mut c, RECHECK);
        }
        c.completed >= n
    }

    /// The driver, between cycles: a pending request, else what `decide` (the director)
    /// says, else sleep for `interval` or until a request arrives, and ask again.
    pub(crate) fn next_cycle(
        &self,
        interval: Duration,
        mut decide: impl FnMut() -> Option<GcCause>,
    ) -> NextCycle {
        let mut c = self.control.lock();
        loop {
            if c.shutdown {
                return NextCycle::Shutdown;
            }
            if let Some(cause) = c.requested.take() {
                return NextCycle::Run(cause);
            }
            drop(c);
            let decided = decide();
            c = self.control.lock();
            if let Some(cause) = decided {
                return NextCycle::Run(cause);
            }
            if c.requested.is_none() && !c.shutdown {
                self.cv.wait_for(&mut c, interval);
            }
        }
    }

    /// The driver starts a cycle (a minor one if `minor`); returns its number (GC(n),
    /// counting from 0).
    pub(crate) fn begin_cycle(&self, minor: bool) -> u64 {
        let mut c = self.control.lock();
        c.started += 1;
        c.running_minor = minor;
        let now = Instant::now();
        c.began_at = Some(now);
        self.clock.began.store(Some(now));
        c.started - 1
    }

    /// The driver completed a cycle (a minor one if `minor`): wake everyone waiting for one.
    pub(crate) fn end_cycle(&self, minor: bool) {
        let mut c = self.control.lock();
        c.completed += 1;
        c.last_minor = minor;
        c.completed_majors += u64::from(!minor);
        if let Some(t) = c.began_at.take() {
            if c.durations.len() == TIMED_CYCLES {
                c.durations.pop_front();
            }
            c.durations.push_back(t.elapsed());
            let longest = c.durations.iter().max().copied().unwrap_or_default();
            let ns = u64::try_from(longest.as_nanos()).unwrap_or(u64::MAX).max(1);
            self.clock.expected_ns.store(ns, Ordering::Relaxed);
        }
        self.clock.began.store(None);
        self.cv.notify_all();
    }

    /// The heap is being dropped: the driver leaves its loop, waiters return.
    pub(crate) fn shut_down(&self) {
        let mut c = self.control.lock();
        c.shutdown = true;
        self.cv.notify_all();
    }

    pub(crate) fn is_shut_down(&self) -> bool {
        self.control.lock().shutdown
    }

    /// The gate the driver passes before each concurrent phase (see `phase_gate`).
    pub(crate) fn gate(&self) -> &PhaseGate {
        &self.gate
    }

    /// Cycles completed so far.
    pub(crate) fn completed(&self) -> u64 {
        self.control.lock().completed
    }

    /// Majors completed so far (every cycle but the minors).
    pub(crate) fn completed_majors(&self) -> u64 {
        self.control.lock().completed_majors
    }

    /// The cycle in progress, if one is. Takes no lock (see [`CycleClock`]): the two words
    /// are read apart, so a cycle that ends meanwhile may pair its start with the duration it
    /// just added, a difference the pacer's estimate absorbs.
    pub(crate) fn running_cycle(&self) -> Option<RunningCycle> {
        let began = self.clock.began.load()?;
        let expected = self.clock.expected_ns.load(Ordering::Relaxed);
        Some(RunningCycle {
            elapsed: began.elapsed(),
            expected: (expected != 0).then(|| Duration::from_nanos(expected)),
        })
    }

    /// Mutators in an allocation stall whose request asks for a cycle now: every stalled
    /// one but those whose request waits for the running cycle's end ([`StallRequest`]),
    /// and none once the target of the latest request completed: a stalled mutator then
    /// retries, and asks again if it still cannot allocate. The director's Allocation Stall
    /// rule counts these; counting a stall whose cycle had completed, it started another
    /// cycle before the mutator could retry, and in the `stw` mode that cycle's pause held
    /// the mutator so it could not (five back-to-back pauses, 622 ms, a half-empty heap).
    pub(crate) fn stalls_unanswered(&self) -> u64 {
        let c = self.control.lock();
        if c.completed >= c.stall_target {
            0
        } else {
            c.stalled - c.stalls_deferred
        }
    }

    /// True if a mutator is in an allocation stall (no lock taken).
    pub(crate) fn has_stalled_mutators(&self) -> bool {
        self.stalled_waiters.load(Ordering::Acquire) > 0
    }

    /// A mutator enters an allocation stall.
    pub(crate) fn begin_stall(&self) {
        self.gate.open_for_wait("a mutator stalled on allocation");
        self.control.lock().stalled += 1;
        self.stalled_waiters.fetch_add(1, Ordering::AcqRel);
    }

    /// A stalled mutator asks for a cycle (again, with the request it made before, or
    /// `StallRequest::default()` the first time): `req.target` becomes the next cycle to
    /// start. If a major runs and no request is pending, the request is deferred: that
    /// cycle's end may make room, and [`Self::stall_wait`] asks for the cycle only if the
    /// allocation still fails after it. Otherwise it is pending at once, replacing a pending
    /// minor request (a full cycle also collects the young generation). A running minor
    /// defers nothing: it frees only young pages, and a stall's request asks for a major
    /// (deferred behind minors, a stall would wait through every minor another thread
    /// requests, which `generational_mode.rs`'s stall scenario does back to back).
    pub(crate) fn request_stall(&self, req: &mut StallRequest) {
        let mut c = self.control.lock();
        if std::mem::take(&mut req.deferred) {
            c.stalls_deferred -= 1;
        }
        req.target = c.started + 1;
        if c.began_at.is_some() && !c.running_minor && c.requested.is_none() {
            req.deferred = true;
            c.stalls_deferred += 1;
            return;
        }
        c.stall_target = c.stall_target.max(req.target);
        if c.requested.as_ref().is_none_or(GcCause::is_minor) {
            c.requested = Some(GcCause::AllocationStall);
        }
        self.cv.notify_all();
    }

    /// A mutator leaves its allocation stall, whose last request was `req`.
    pub(crate) fn end_stall(&self, req: &StallRequest) {
        self.stalled_waiters.fetch_sub(1, Ordering::AcqRel);
        let mut c = self.control.lock();
        c.stalled -= 1;
        if req.deferred {
            c.stalls_deferred -= 1;
        }
    }

    /// Where a stalled allocation whose request targets cycle `target` stands.
    pub(crate) fn stall_progress(&self, target: u64) -> StallProgress {
        let c = self.control.lock();
        StallProgress {
            done: c.completed >= target,
            shutdown: c.shutdown,
            last_minor: c.last_minor,
            completed: c.completed,
        }
    }

    /// A stalled mutator whose retry failed sleeps until its target cycle completes, a page
    /// is freed, or a few milliseconds pass; `completed_before_retry` is
    /// [`StallProgress::completed`] read before that retry. First it renews its request if
    /// it must:
    ///
    /// - a deferred request, once the cycle that ran when it was made has ended before the
    ///   retry: it becomes pending now (the allocation still fails after that cycle), or is
    ///   answered by a cycle that started since (the director's, which is its target);
    /// - a pending one that a cycle which started before it was made took (its target has
    ///   not started and nothing is pending).
    pub(crate) fn stall_wait(&self, req: &mut StallRequest, completed_before_retry: u64) {
        let mut c = self.control.lock();
        if c.completed >= req.target || c.shutdown {
            return;
        }
        if req.deferred {
            let ended_before_retry = completed_before_retry + 1 >= req.target;
            if c.started >= req.target || ended_before_retry {
                req.deferred = false;
                c.stalls_deferred -= 1;
                c.stall_target = c.stall_target.max(req.target);
            }
        }
        if !req.deferred && c.requested.is_none() && c.started < req.target {
            c.requested = Some(GcCause::AllocationStall);
            self.cv.notify_all();
        }
        self.cv.wait_for(&mut c, RECHECK);
    }

    /// A page was freed: stalled mutators retry at once.
    pub(super) fn page_freed(&self) {
        if self.has_stalled_mutators() {
            let _c = self.control.lock();
            self.cv.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pending request and the counts the director reads.
    fn pending(c: &CycleControl) -> Option<GcCause> {
        c.control.lock().requested.clone()
    }

    fn deferred(c: &CycleControl) -> u64 {
        c.control.lock().stalls_deferred
    }

    /// Between cycles, a stall's request is pending at once and targets the next cycle; it
    /// replaces a pending minor request, never a full one.
    #[test]
    fn a_stall_between_cycles_asks_for_the_next_cycle_at_once() {
        let c = CycleControl::default();
        c.begin_stall();
        let mut req = StallRequest::default();
        c.request_stall(&mut req);
        assert_eq!(req.target, 1);
        assert!(!req.deferred);
        assert_eq!(pending(&c), Some(GcCause::AllocationStall));
        assert_eq!(c.stalls_unanswered(), 1);
        c.end_stall(&req);
        assert_eq!(c.stalls_unanswered(), 0);

        let minor = CycleControl::default();
        minor.request(GcCause::MinorRequested);
        minor.request_stall(&mut StallRequest::default());
        assert_eq!(pending(&minor), Some(GcCause::AllocationStall));
        let full = CycleControl::default();
        full.request(GcCause::Explicit("t".into()));
        full.request_stall(&mut StallRequest::default());
        assert_eq!(pending(&full), Some(GcCause::Explicit("t".into())));
    }

    /// A stall whose target cycle completed is answered, even before its mutator has run
    /// again to retry: the director's stall rule must not count it, or it starts another
    /// cycle at once, which in the `stw` mode is a pause that holds the mutator before it
    /// can retry (a 256M `stw` run stalled 622 ms through five such cycles, the heap half
    /// empty). A retry that still fails asks again, for the next cycle.
    #[test]
    fn a_stall_whose_target_completed_is_not_counted_before_its_retry() {
        let c = CycleControl::default();
        c.begin_stall();
        let mut req = StallRequest::default();
        c.request_stall(&mut req);
        assert_eq!(c.stalls_unanswered(), 1);
        // The driver takes the request and runs the target cycle.
        assert!(matches!(
            c.next_cycle(Duration::from_millis(1), || None),
            NextCycle::Run(GcCause::AllocationStall)
        ));
        assert_eq!(c.begin_cycle(false) + 1, req.target);
        assert_eq!(c.stalls_unanswered(), 1, "its cycle runs: not answered yet");
        c.end_cycle(false);
        assert!(c.has_stalled_mutators(), "the mutator has not retried");
        assert_eq!(c.stalls_unanswered(), 0, "answered: the retry decides");
        // The retry fails: the request is renewed for the next cycle.
        assert!(c.stall_progress(req.target).done);
        c.request_stall(&mut req);
        assert_eq!(req.target, 2);
        assert_eq!(c.stalls_unanswered(), 1);
        c.end_stall(&req);
        assert_eq!(c.stalls_unanswered(), 0);
    }

    /// During a cycle, with nothing pending, a stall's request waits for the cycle's end: no
    /// cycle is asked for, and the director's stall rule does not count it. A retry that
    /// failed before the end leaves it waiting; one that failed after the end asks for the
    /// next cycle, which is still the request's target (the out-of-memory rule's cycle).
    #[test]
    fn a_stall_during_a_cycle_asks_only_if_it_still_fails_after_the_end() {
        let c = CycleControl::default();
        assert_eq!(c.begin_cycle(false), 0);
        c.begin_stall();
        let mut req = StallRequest::default();
        c.request_stall(&mut req);
        // Targets count completed cycles: GC(0) runs, GC(1) is the next.
        assert_eq!(req.target, 2);
        assert!(req.deferred);
        assert_eq!(pending(&c), None);
        assert_eq!((c.stalls_unanswered(), deferred(&c)), (0, 1));
        // Retried (and failed) while the cycle ran.
        let before = c.stall_progress(req.target);
        assert!(!before.done);
        c.stall_wait(&mut req, before.completed);
        assert!(req.deferred && pending(&c).is_none());
        // The cycle ends; a retry read before the end and failing is no proof.
        c.end_cycle(false);
        c.stall_wait(&mut req, before.completed);
        assert!(req.deferred && pending(&c).is_none());
        assert_eq!(c.stalls_unanswered(), 0);
        // A retry after the end failed: now the next cycle is asked for.
        let after = c.stall_progress(req.target);
        assert!(!after.done, "the running cycle is not the request's target");
        c.stall_wait(&mut req, after.completed);
        assert!(!req.deferred);
        assert_eq!(pending(&c), Some(GcCause::AllocationStall));
        assert_eq!((c.stalls_unanswered(), deferred(&c)), (1, 0));
        c.end_stall(&req);
        assert_eq!((c.stalls_unanswered(), deferred(&c)), (0, 0));
    }

    /// A deferred stall that the running cycle satisfied leaves nothing behind: no request,
    /// no count; one whose target a cycle the director started answers needs no request
    /// either; asking again releases the earlier deferral.
    #[test]
    fn a_deferred_stall_leaves_no_request_behind() {
        let c = CycleControl::default();
        c.begin_cycle(false);
        c.begin_stall();
        let mut req = StallRequest::default();
        c.request_stall(&mut req);
        c.end_cycle(false);
        c.end_stall(&req);
        assert_eq!(pending(&c), None);
        assert_eq!((c.stalls_unanswered(), deferred(&c)), (0, 0));

        // The director starts the target before the stalled mutator retries.
        c.begin_cycle(false);
        c.begin_stall();
        let mut req = StallRequest::default();
        c.request_stall(&mut req);
        assert_eq!(req.target, 3);
        let read = c.stall_progress(req.target);
        c.end_cycle(false);
        assert_eq!(c.begin_cycle(false), 2);
        c.stall_wait(&mut req, read.completed);
        assert!(!req.deferred);
        assert_eq!(pending(&c), None, "the running cycle is the target");
        assert_eq!((c.stalls_unanswered(), deferred(&c)), (1, 0));
        // Asked again while that cycle runs: deferred once more, counted once.
        c.request_stall(&mut req);
        c.request_stall(&mut req);
        assert_eq!((req.target, deferred(&c)), (4, 1));
        c.end_stall(&req);
        assert_eq!((c.stalls_unanswered(), deferred(&c)), (0, 0));

        // During a minor: pending at once (a stall asks for a major).
        let m = CycleControl::default();
        m.begin_cycle(true);
        let mut req = StallRequest::default();
        m.request_stall(&mut req);
        assert!(!req.deferred);
        assert_eq!(pending(&m), Some(GcCause::AllocationStall));

        // A request already pending runs anyway: the stall joins it.
        let p = CycleControl::default();
        p.begin_cycle(false);
        p.request(GcCause::MinorRequested);
        let mut req = StallRequest::default();
        p.request_stall(&mut req);
        assert!(!req.deferred);
        assert_eq!(pending(&p), Some(GcCause::AllocationStall));
    }
}

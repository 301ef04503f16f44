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
//! The monitor also times the cycles (when the running one began, how long the last few took)
//! for the pacer, which budgets free memory over what is left of the running cycle.

use super::phase_gate::PhaseGate;
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
    shutdown: bool,
    /// When the running cycle began (`None` between cycles).
    began_at: Option<Instant>,
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

/// What the driver should do next.
pub(crate) enum NextCycle {
    /// Run a cycle for this cause.
    Run(GcCause),
    /// The heap is being dropped: leave the loop.
    Shutdown,
}

/// The heap's cycle monitor. See the module documentation.
#[derive(Default)]
pub(crate) struct CycleControl {
    control: Mutex<Control>,
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

    /// The driver starts a cycle; returns its number (GC(n), counting from 0).
    pub(crate) fn begin_cycle(&self) -> u64 {
        let mut c = self.control.lock();
        c.started += 1;
        c.began_at = Some(Instant::now());
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
        }
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

    /// The cycle in progress, if one is.
    pub(crate) fn running_cycle(&self) -> Option<RunningCycle> {
        let c = self.control.lock();
        let began = c.began_at?;
        Some(RunningCycle {
            elapsed: began.elapsed(),
            expected: c.durations.iter().max().copied(),
        })
    }

    /// Mutators in an allocation stall now.
    pub(crate) fn stalled(&self) -> u64 {
        self.control.lock().stalled
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

    /// A mutator leaves its allocation stall.
    pub(crate) fn end_stall(&self) {
        self.stalled_waiters.fetch_sub(1, Ordering::AcqRel);
        self.control.lock().stalled -= 1;
    }

    /// (cycle `target` completed, heap shut down, the last completed cycle was a minor), for
    /// a stalled allocation's retry loop.
    pub(crate) fn stall_progress(&self, target: u64) -> (bool, bool, bool) {
        let c = self.control.lock();
        (c.completed >= target, c.shutdown, c.last_minor)
    }

    /// A stalled mutator sleeps until cycle `target` completes, a page is freed, or a few
    /// milliseconds pass; it renews its request if the one it made was taken by a cycle that
    /// started before it asked.
    pub(crate) fn stall_wait(&self, target: u64) {
        let mut c = self.control.lock();
        if c.completed < target && !c.shutdown {
            if c.requested.is_none() && c.started < target {
                c.requested = Some(GcCause::AllocationStall);
                self.cv.notify_all();
            }
            self.cv.wait_for(&mut c, RECHECK);
        }
    }

    /// A page was freed: stalled mutators retry at once.
    pub(super) fn page_freed(&self) {
        if self.has_stalled_mutators() {
            let _c = self.control.lock();
            self.cv.notify_all();
        }
    }
}

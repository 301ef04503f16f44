//! Safepoints: how the collector stops every mutator for a pause (HotSpot's safepoint
//! protocol, reduced to what this runtime needs).
//!
//! Each mutator has a state: *running* (may touch the heap), *blocked* (inside a `blocking`
//! region, detached, or waiting for an allocation stall: counts as stopped) or *stopped*
//! (parked at a safepoint). The collector sets `requested`, then waits on a condvar until no
//! mutator is running. Running mutators notice at their next poll (allocation or `poll()`)
//! and park on the resume condvar — never spinning, since on 2 cores a spinning waiter costs
//! a 4 ms scheduler tick. A thread leaving a blocking region during a pause parks too. The
//! state store and the `requested` load on both sides are `SeqCst` (a Dekker handshake), so a
//! thread either is seen running by the collector or sees the request.

use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Instant;

pub(crate) const RUNNING: u8 = 0;
pub(crate) const BLOCKED: u8 = 1;
pub(crate) const STOPPED: u8 = 2;

/// A mutator's safepoint state, shared with the collector.
pub(crate) struct ThreadState {
    state: AtomicU8,
}

impl ThreadState {
    pub(crate) fn new_blocked() -> Self {
        ThreadState {
            state: AtomicU8::new(BLOCKED),
        }
    }
    pub(crate) fn get(&self) -> u8 {
        self.state.load(Ordering::SeqCst)
    }
}

#[derive(Default)]
struct Inner {
    /// Number of pauses begun so far.
    epoch: u64,
}

/// The heap's safepoint synchronizer.
#[derive(Default)]
pub(crate) struct Safepoint {
    requested: AtomicBool,
    lock: Mutex<Inner>,
    stopped_cv: Condvar,
    resume_cv: Condvar,
}

impl Safepoint {
    /// True while a pause is requested or in progress.
    #[inline(always)]
    pub(crate) fn is_requested(&self) -> bool {
        self.requested.load(Ordering::Relaxed)
    }

    /// Park the calling (running) mutator until the pause is over.
    #[cold]
    pub(crate) fn park(&self, t: &ThreadState) {
        let mut g = self.lock.lock();
        t.state.store(STOPPED, Ordering::SeqCst);
        self.stopped_cv.notify_all();
        while self.requested.load(Ordering::SeqCst) {
            self.resume_cv.wait(&mut g);
        }
        t.state.store(RUNNING, Ordering::SeqCst);
    }

    /// The mutator enters a blocking region (or detaches, or stalls).
    pub(crate) fn enter_blocked(&self, t: &ThreadState) {
        t.state.store(BLOCKED, Ordering::SeqCst);
        if self.requested.load(Ordering::SeqCst) {
            let _g = self.lock.lock();
            self.stopped_cv.notify_all();
        }
    }

    /// The mutator leaves a blocking region: it waits while a pause is in progress.
    pub(crate) fn leave_blocked(&self, t: &ThreadState) {
        t.state.store(RUNNING, Ordering::SeqCst);
        if self.requested.load(Ordering::SeqCst) {
            self.park(t);
        }
    }

    /// Stop every mutator in `threads`; returns the time-to-safepoint start instant. The
    /// caller must call [`Self::resume`] afterwards.
    pub(crate) fn stop<'a>(
        &self,
        threads: impl Iterator<Item = &'a ThreadState> + Clone,
    ) -> Instant {
        let start = Instant::now();
        let mut g = self.lock.lock();
        g.epoch += 1;
        self.requested.store(true, Ordering::SeqCst);
        while threads.clone().any(|t| t.get() == RUNNING) {
            self.stopped_cv.wait(&mut g);
        }
        start
    }

    /// End the pause: release every parked mutator.
    pub(crate) fn resume(&self) {
        let _g = self.lock.lock();
        self.requested.store(false, Ordering::SeqCst);
        self.resume_cv.notify_all();
    }
}

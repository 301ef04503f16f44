//! Safepoints: how the collector stops every mutator for a pause (HotSpot's safepoint
//! protocol, reduced to what this runtime needs).
//!
//! Each mutator has a state: *running* (inside a scope: may touch the heap), *blocked* (outside
//! every scope, inside a `blocking` region, detaching, or waiting for an allocation stall:
//! counts as stopped, like a HotSpot thread "in native") or *stopped* (parked at a safepoint).
//! The collector sets `requested`, then waits on a condvar until no mutator is running. Running
//! mutators notice at their next poll (allocation or `poll()`) and park on the resume condvar —
//! never spinning, since on 2 cores a spinning waiter costs a 4 ms scheduler tick. A thread
//! leaving the blocked state during a pause parks too. Both sides store, then issue a `SeqCst`
//! fence, then load (a Dekker handshake: the mutator stores its state and loads `requested`,
//! the collector stores `requested` and loads the states), so a thread either is seen running
//! by the collector or sees the request.
//!
//! Attaching and detaching go through [`Safepoint::attach`] and [`Safepoint::detach`]: a
//! thread is registered while *blocked* (and stays so until its first scope), and
//! [`Safepoint::stop`] takes its snapshot of the registered threads *after* publishing the
//! request. So a thread attaching during a pause is either in the snapshot or, when it leaves
//! the blocked state, sees the request and parks: it cannot run unseen.
//!
//! The protocol is generic over [`Primitives`] so that the loom models in
//! `tests/loom_protocols.rs` check this very code; the collector uses [`Std`].

use crate::sync::{Atomic, Cond, Monitor, Primitives, Std};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

pub const RUNNING: u8 = 0;
pub const BLOCKED: u8 = 1;
pub const STOPPED: u8 = 2;

/// The condvar the collector waits on for mutators to stop.
const STOPPED_CV: Cond = Cond::First;
/// The condvar parked mutators wait on for the pause to end.
const RESUME_CV: Cond = Cond::Second;

/// A mutator's safepoint state, shared with the collector.
pub struct ThreadState<P: Primitives = Std> {
    state: P::AtomicU8,
}

impl<P: Primitives> ThreadState<P> {
    /// A new thread counts as blocked until it leaves that state (its first scope).
    pub fn new_blocked() -> Self {
        ThreadState {
            state: P::AtomicU8::new(BLOCKED),
        }
    }
    pub fn get(&self) -> u8 {
        self.state.load(Ordering::SeqCst)
    }
}

/// Anything that carries a [`ThreadState`] (a mutator's shared part).
pub trait HasThreadState<P: Primitives = Std> {
    fn thread_state(&self) -> &ThreadState<P>;
}

impl<P: Primitives> HasThreadState<P> for ThreadState<P> {
    fn thread_state(&self) -> &ThreadState<P> {
        self
    }
}

impl<P: Primitives, T: HasThreadState<P> + ?Sized> HasThreadState<P> for Arc<T> {
    fn thread_state(&self) -> &ThreadState<P> {
        (**self).thread_state()
    }
}

/// The heap's safepoint synchronizer.
pub struct Safepoint<P: Primitives = Std> {
    requested: P::AtomicBool,
    /// Protects the number of pauses begun so far; the monitor's condvars are the stopped
    /// and resume condvars.
    lock: P::Monitor<u64>,
}

impl<P: Primitives> Default for Safepoint<P> {
    fn default() -> Self {
        Safepoint {
            requested: P::AtomicBool::new(false),
            lock: P::Monitor::new(0),
        }
    }
}

impl<P: Primitives> Safepoint<P> {
    /// True while a pause is requested or in progress.
    #[inline(always)]
    pub fn is_requested(&self) -> bool {
        self.requested.load(Ordering::Relaxed)
    }

    /// Safepoint poll: park if a pause is requested.
    #[inline(always)]
    pub fn poll(&self, t: &ThreadState<P>) -> bool {
        if self.is_requested() {
            self.park(t);
            true
        } else {
            false
        }
    }

    /// Park the calling (running) mutator until the pause is over.
    #[cold]
    pub fn park(&self, t: &ThreadState<P>) {
        let mut g = self.lock.lock();
        t.state.store(STOPPED, Ordering::SeqCst);
        self.lock.notify_all(STOPPED_CV);
        while self.requested.load(Ordering::SeqCst) {
            g = self.lock.wait(RESUME_CV, g);
        }
        t.state.store(RUNNING, Ordering::SeqCst);
        drop(g);
    }

    /// The mutator enters the blocked state (leaves its outermost scope, enters a blocking
    /// region, detaches, or stalls).
    pub fn enter_blocked(&self, t: &ThreadState<P>) {
        t.state.store(BLOCKED, Ordering::SeqCst);
        P::fence(Ordering::SeqCst);
        if self.requested.load(Ordering::SeqCst) {
            let _g = self.lock.lock();
            self.lock.notify_all(STOPPED_CV);
        }
    }

    /// The mutator leaves the blocked state: it waits while a pause is in progress.
    pub fn leave_blocked(&self, t: &ThreadState<P>) {
        t.state.store(RUNNING, Ordering::SeqCst);
        P::fence(Ordering::SeqCst);
        if self.requested.load(Ordering::SeqCst) {
            self.park(t);
        }
    }

    /// Attach a (blocked) thread: `register` makes it visible to the snapshot of the next
    /// [`Self::stop`]. It stays blocked; [`Self::leave_blocked`] lets it run (waiting if a
    /// pause is in progress).
    pub fn attach(&self, t: &ThreadState<P>, register: impl FnOnce()) {
        debug_assert_eq!(t.get(), BLOCKED);
        register();
    }

    /// Detach a running thread: `hand_over` gives the collector what it must still see
    /// (the mark buffer) while the thread still runs, so no pause can be in progress; from
    /// then on the thread counts as stopped, and `unregister` removes it.
    ///
    /// Handing over after entering the blocked state would be wrong: the collector could be
    /// inside Pause Mark End, past its last look at the mark queue, and would miss the work.
    pub fn detach(&self, t: &ThreadState<P>, hand_over: impl FnOnce(), unregister: impl FnOnce()) {
        debug_assert_eq!(t.get(), RUNNING);
        hand_over();
        self.enter_blocked(t);
        unregister();
    }

    /// Stop every registered mutator: publish the request, then take `snapshot` of the
    /// registered threads and wait until none of them runs. Returns the time-to-safepoint
    /// start instant and the snapshot. The caller must call [`Self::resume`] afterwards.
    ///
    /// The snapshot is taken after the request is visible: a thread registered after it
    /// finds the request set when it leaves the blocked state (see [`Self::attach`]).
    pub fn stop<T: HasThreadState<P>>(
        &self,
        snapshot: impl FnOnce() -> Vec<T>,
    ) -> (Instant, Vec<T>) {
        let start = Instant::now();
        let mut g = self.lock.lock();
        *g += 1;
        self.requested.store(true, Ordering::SeqCst);
        P::fence(Ordering::SeqCst);
        let threads = snapshot();
        while threads.iter().any(|t| t.thread_state().get() == RUNNING) {
            g = self.lock.wait(STOPPED_CV, g);
        }
        drop(g);
        (start, threads)
    }

    /// End the pause: release every parked mutator.
    pub fn resume(&self) {
        let _g = self.lock.lock();
        self.requested.store(false, Ordering::SeqCst);
        self.lock.notify_all(RESUME_CV);
    }

    /// Number of pauses begun so far.
    pub fn pauses(&self) -> u64 {
        *self.lock.lock()
    }
}

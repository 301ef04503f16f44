//! Safepoints: how the collector stops every mutator for a pause (HotSpot's safepoint
//! protocol, reduced to what this runtime needs).
//!
//! Each mutator has a state: *running* (inside a scope: may touch the heap), *blocked* (outside
//! every scope, inside a `blocking` region, detaching, or waiting for an allocation stall:
//! counts as stopped, like a HotSpot thread "in native") or *stopped* (parked at a safepoint).
//! The collector sets `requested`, then waits until no mutator is running. Running mutators
//! notice at their next poll (allocation or `poll()`) and park until the pause ends. Both
//! waits first spin for a bounded time ([`Primitives::spin_until`]: 500 µs for the pause
//! waiting for its mutators, 50 µs for a parked mutator waiting for the pause's end) and then
//! sleep on a condvar: the other side usually arrives within microseconds, while a condvar
//! wake-up costs tens (more when the sleeper's core went idle); an unbounded spin could cost
//! a 4 ms scheduler tick on 2 cores, when the thread waited for is off its core. A thread leaving the
//! blocked state during a pause parks too. Both sides store, then order the store before
//! the load (a Dekker handshake: the mutator stores its state and loads `requested`, the
//! collector stores `requested` and loads the states), so a thread either is seen running by
//! the collector or sees the request. The ordering is the heap's [`ProcessBarrier`]: with
//! `membarrier` the requesting side (a pause's [`Safepoint::stop`], each time it publishes
//! its request) makes every thread of the process execute a full barrier and the mutator's
//! side ([`Safepoint::leave_blocked`], [`Safepoint::enter_blocked`], the waiting-elsewhere
//! mark) has a compiler fence only; without it, both sides issue a `SeqCst` fence. The poll
//! is one relaxed load in either case: a running mutator is waited for, so it only has to
//! see the request eventually.
//!
//! Attaching and detaching go through [`Safepoint::attach`] and [`Safepoint::detach`]: a
//! thread is registered while *blocked* (and stays so until its first scope), and
//! [`Safepoint::stop`] takes its snapshot of the registered threads *after* publishing the
//! request. So a thread attaching during a pause is either in the snapshot or, when it leaves
//! the blocked state, sees the request and parks: it cannot run unseen.
//!
//! A thread may be attached to several heaps, and inside scopes of several at once. While it
//! waits at heap A — parked at A's safepoint, or waiting for one of A's GC cycles (an
//! allocation stall, a collection it asked for) — its mutators of other heaps stay *running*:
//! the thread may hold an `ObjRef` (a raw pointer) into heap B across the wait, so B must not
//! pause until the thread reaches one of B's own safepoints. Threads waiting in each other's
//! heaps could then leave pauses waiting on each other for ever. To break such cycles:
//!
//! - every pause request carries a *ticket*, unique and increasing in the order requests
//!   begin (across heaps; a cycle wait takes one too);
//! - a thread waiting at A marks its running states of other heaps as *waiting elsewhere*:
//!   parked for the request with ticket `t`, or waiting for a cycle (with its own ticket);
//! - a pause that waits for a thread parked for an *older* request, or for a thread waiting
//!   for another heap's cycle, *gives way*: it withdraws its request (the threads parked at it
//!   resume; nothing of the pause has run), waits until that thread's wait has ended, and
//!   requests again with the same ticket and a new snapshot;
//! - a cycle wait whose heap gave way to an *older* cycle wait gives up (the stall fails
//!   with out-of-memory, the collection returns early): both heaps' cycles needed the other
//!   thread, and only leaving the wait can free one of them.
//!
//! In every cycle of pauses waiting on each other's parked threads the youngest request gives
//! way, and the oldest request in the process never does, so some pause always completes; a
//! request that gave way keeps its age, so it wins against the next request of the heap it
//! gave way to.
//!
//! **Safepoint timeout** (HotSpot's `-XX:+SafepointTimeout`): a pause still waiting for
//! running mutators [`SAFEPOINT_TIMEOUT`] after its request names them, once, through
//! [`Safepoint::stop_watched`]'s callback, each with what it said it was doing
//! ([`Activity`], a word the thread sets on the few slow paths that can wait for a GC thread
//! while running; nothing on a fast path). A straggler doing [`Activity::Code`] is in its own
//! code between two polls (or was kept off the cores); any other activity names the wait.
//!
//! The protocol is generic over [`Primitives`] so that the loom models in
//! `tests/loom_protocols.rs` check this very code; the collector uses [`Std`].

use super::process_barrier::ProcessBarrier;
use crate::observe::Activity;
use crate::sync::{Atomic, Cond, Monitor, Primitives, Std};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a pause waits for running mutators before [`Safepoint::stop_watched`] names the
/// ones still running (HotSpot's `SafepointTimeoutDelay`, 10 s there; a pause here reaches
/// its safepoint within microseconds, so 100 ms is already three orders of magnitude late).
pub const SAFEPOINT_TIMEOUT: Duration = Duration::from_millis(100);

/// How long a parked mutator spins for the pause's end before it sleeps: a pause that visits
/// no root lasts a few microseconds.
const PARKED_SPIN: Duration = Duration::from_micros(50);

/// How long a pause spins for its running mutators before it sleeps. Longer than
/// [`PARKED_SPIN`]: a mutator that reaches its poll late (on this project's 2-core virtual
/// machine, when an interrupt or the hypervisor holds its CPU, 100–200 µs now and then) found
/// a driver asleep after a 50 µs spin, and the wake-up of a driver whose core had gone idle
/// added 40–65 µs more to the pause. The spin yields between rounds, so a mutator waiting for
/// the driver's own core gets it at once; its cost, a driver polling instead of sleeping for
/// up to this long, falls only on pauses whose mutators are late.
const STRAGGLER_SPIN: Duration = Duration::from_micros(500);

/// A mutator's safepoint state (see the module documentation), stored as its `u8` in a
/// [`ThreadStateCell`].
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThreadState {
    /// Inside a scope: may touch the heap; a pause waits for it to stop.
    Running = 0,
    /// Outside every scope, in a `blocking` region, detaching, or waiting for an allocation
    /// stall: counts as stopped (a HotSpot thread "in native").
    Blocked = 1,
    /// Parked at a safepoint until the pause ends.
    Stopped = 2,
}

impl ThreadState {
    /// The state whose `u8` is `raw`, or `None` for a value no state has.
    #[inline]
    pub const fn from_u8(raw: u8) -> Option<ThreadState> {
        match raw {
            0 => Some(ThreadState::Running),
            1 => Some(ThreadState::Blocked),
            2 => Some(ThreadState::Stopped),
            _ => None,
        }
    }
}

impl From<ThreadState> for u8 {
    #[inline]
    fn from(s: ThreadState) -> u8 {
        s as u8
    }
}

impl TryFrom<u8> for ThreadState {
    type Error = u8;
    /// The state whose `u8` is `raw`; `Err(raw)` for a value no state has.
    #[inline]
    fn try_from(raw: u8) -> Result<ThreadState, u8> {
        ThreadState::from_u8(raw).ok_or(raw)
    }
}

/// The condvar the collector waits on for mutators to stop (or to end a wait elsewhere).
const STOPPED_CV: Cond = Cond::First;
/// The condvar parked mutators wait on for the pause to end.
const RESUME_CV: Cond = Cond::Second;

/// In a waiting-elsewhere word: the thread waits for another heap's GC cycle (the other bits
/// are the wait's ticket); without it, the word is the ticket of the request the thread is
/// parked for.
const CYCLE_WAIT: u64 = 1 << 63;

static TICKETS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A new ticket for a pause request or a cycle wait (the collector's source of tickets; the
/// loom models pass their own).
pub fn next_ticket() -> u64 {
    TICKETS.fetch_add(1, Ordering::Relaxed)
}

/// A mutator's [`ThreadState`], shared with the collector: an atomic `u8` that only this
/// module's protocol writes, and what the thread waits for at another heap.
pub struct ThreadStateCell<P: Primitives = Std> {
    state: P::AtomicU8,
    /// While the thread waits at another heap and this state says running: what it waits
    /// for there (see [`CYCLE_WAIT`]); 0 otherwise. Written only by the thread.
    elsewhere: P::AtomicU64,
    /// What the thread does while running ([`Activity`]'s `u8`); written only by the
    /// thread, read by a pause that timed out.
    doing: P::AtomicU8,
}

impl<P: Primitives> ThreadStateCell<P> {
    /// A new thread counts as blocked until it leaves that state (its first scope).
    pub fn new_blocked() -> Self {
        ThreadStateCell {
            state: P::AtomicU8::new(ThreadState::Blocked.into()),
            elsewhere: P::AtomicU64::new(0),
            doing: P::AtomicU8::new(Activity::Code as u8),
        }
    }

    /// The thread says what it is doing (a relaxed store: only the safepoint timeout's
    /// report reads it).
    #[inline]
    pub fn set_doing(&self, a: Activity) {
        self.doing.store(a as u8, Ordering::Relaxed)
    }

    /// What the thread does, as a pause that waits for it sees it.
    pub fn doing(&self) -> Activity {
        if self.elsewhere.load(Ordering::Relaxed) != 0 {
            return Activity::WaitingAtAnotherHeap;
        }
        Activity::from_u8(self.doing.load(Ordering::Relaxed))
    }

    /// The state now (a `SeqCst` load, one side of the Dekker handshake).
    #[inline]
    pub fn get(&self) -> ThreadState {
        match ThreadState::from_u8(self.state.load(Ordering::SeqCst)) {
            Some(s) => s,
            None => unreachable!("a thread state cell holds only ThreadState values"),
        }
    }

    /// Set the state (a `SeqCst` store, under the safepoint's lock).
    #[inline]
    fn set(&self, s: ThreadState) {
        self.state.store(s.into(), Ordering::SeqCst)
    }

    /// Set the state as the first half of the handshake's light side (`order`: the
    /// barrier's [`ProcessBarrier::store_order`]).
    #[inline(always)]
    fn publish(&self, s: ThreadState, order: Ordering) {
        self.state.store(s.into(), order)
    }
}

/// Anything that carries a [`ThreadStateCell`] (a mutator's shared part).
pub trait HasThreadState<P: Primitives = Std> {
    fn thread_state(&self) -> &ThreadStateCell<P>;
}

impl<P: Primitives> HasThreadState<P> for ThreadStateCell<P> {
    fn thread_state(&self) -> &ThreadStateCell<P> {
        self
    }
}

impl<P: Primitives, T: HasThreadState<P> + ?Sized> HasThreadState<P> for Arc<T> {
    fn thread_state(&self) -> &ThreadStateCell<P> {
        (**self).thread_state()
    }
}

/// The calling thread's mutators of *other* heaps, which a wait at one heap marks as waiting
/// elsewhere.
pub trait OtherHeaps<P: Primitives = Std> {
    /// Call `f` with the safepoint and the state of each of the calling thread's mutators of
    /// other heaps. The calls that begin and end one wait must visit the same mutators in the
    /// same states (only the calling thread attaches, detaches and changes its states, and it
    /// is waiting in between).
    fn for_each(&self, f: &mut dyn FnMut(&Safepoint<P>, &ThreadStateCell<P>));
}

/// A thread without mutators of other heaps.
pub struct NoOtherHeaps;

impl<P: Primitives> OtherHeaps<P> for NoOtherHeaps {
    fn for_each(&self, _f: &mut dyn FnMut(&Safepoint<P>, &ThreadStateCell<P>)) {}
}

impl<P: Primitives> OtherHeaps<P> for [(&Safepoint<P>, &ThreadStateCell<P>)] {
    fn for_each(&self, f: &mut dyn FnMut(&Safepoint<P>, &ThreadStateCell<P>)) {
        for (sp, t) in self {
            f(sp, t)
        }
    }
}

/// Mark the calling thread's running states of other heaps as waiting elsewhere (`what`),
/// except those marked as waiting for a cycle already (a park inside a cycle wait). Each
/// marked heap's pause in progress is told to look again. Returns whether any was marked.
fn mark_waiting<P: Primitives, O: OtherHeaps<P> + ?Sized>(what: u64, others: &O) -> bool {
    let mut any = false;
    others.for_each(&mut |sp, o| {
        if o.get() != ThreadState::Running || o.elsewhere.load(Ordering::Relaxed) & CYCLE_WAIT != 0
        {
            return;
        }
        any = true;
        o.elsewhere.store(what, sp.barrier.store_order());
        // Dekker with `stop`: either that pause sees the mark or we see its request. That
        // heap's barrier: its `stop` is the heavy side.
        sp.barrier.light::<P>();
        if sp.requested.load(Ordering::SeqCst) {
            let _g = sp.lock.lock();
            sp.lock.notify_all(STOPPED_CV);
        }
    });
    any
}

/// Undo [`mark_waiting`] of `what` (a park inside a cycle wait leaves the cycle wait's mark).
fn unmark_waiting<P: Primitives, O: OtherHeaps<P> + ?Sized>(what: u64, others: &O) {
    others.for_each(&mut |sp, o| {
        if o.get() != ThreadState::Running || o.elsewhere.load(Ordering::Relaxed) != what {
            return;
        }
        o.elsewhere.store(0, Ordering::SeqCst);
        // A pause that gave way waits for this with its request withdrawn: tell it whether
        // or not it is requested now.
        let _g = sp.lock.lock();
        sp.lock.notify_all(STOPPED_CV);
    });
}

/// The calling thread begins waiting for another heap's GC cycle: its running states in
/// `others` say so (with the wait's `ticket`), and their heaps' pauses give way until
/// [`end_cycle_wait`]. Returns true if any state was marked, i.e. the wait can be part of a
/// cycle of waits (see [`Safepoint::gave_way_to_an_older_cycle_wait`]).
pub fn begin_cycle_wait<P: Primitives, O: OtherHeaps<P> + ?Sized>(ticket: u64, others: &O) -> bool {
    assert!(
        ticket != 0 && ticket & CYCLE_WAIT == 0,
        "bad ticket {ticket}"
    );
    mark_waiting(CYCLE_WAIT | ticket, others)
}

/// End the cycle wait begun with `ticket`.
pub fn end_cycle_wait<P: Primitives, O: OtherHeaps<P> + ?Sized>(ticket: u64, others: &O) {
    unmark_waiting(CYCLE_WAIT | ticket, others)
}

/// The heap's safepoint synchronizer.
pub struct Safepoint<P: Primitives = Std> {
    requested: P::AtomicBool,
    /// The ticket of the request in progress (or of the last one).
    ticket: P::AtomicU64,
    /// While the pause in progress gives way: the waiting-elsewhere word of the thread it
    /// gave way to; 0 otherwise.
    gave_way_to: P::AtomicU64,
    /// Protects the number of pauses begun so far; the monitor's condvars are the stopped
    /// and resume condvars.
    lock: P::Monitor<u64>,
    /// How both sides of the handshake order their store before their load.
    barrier: ProcessBarrier,
}

/// A safepoint whose handshake fences on both sides (what the loom models check).
impl<P: Primitives> Default for Safepoint<P> {
    fn default() -> Self {
        Self::new(ProcessBarrier::Fences)
    }
}

impl<P: Primitives> Safepoint<P> {
    /// A safepoint whose handshake orders with `barrier` (chosen once, when the heap is
    /// created).
    pub fn new(barrier: ProcessBarrier) -> Self {
        Safepoint {
            requested: P::AtomicBool::new(false),
            ticket: P::AtomicU64::new(0),
            gave_way_to: P::AtomicU64::new(0),
            lock: P::Monitor::new(0),
            barrier,
        }
    }

    /// The barrier of this safepoint's handshake.
    pub fn barrier(&self) -> ProcessBarrier {
        self.barrier
    }

    /// True while a pause is requested or in progress.
    #[inline(always)]
    pub fn is_requested(&self) -> bool {
        self.requested.load(Ordering::Relaxed)
    }

    /// Safepoint poll: park if a pause is requested. `others` are the calling thread's
    /// mutators of other heaps.
    #[inline(always)]
    pub fn poll<O: OtherHeaps<P> + ?Sized>(&self, t: &ThreadStateCell<P>, others: &O) -> bool {
        if self.is_requested() {
            self.park(t, others);
            true
        } else {
            false
        }
    }

    /// Park the calling (running) mutator until the pause is over. Meanwhile its running
    /// states of other heaps say "parked elsewhere, for this request".
    #[cold]
    pub fn park<O: OtherHeaps<P> + ?Sized>(&self, t: &ThreadStateCell<P>, others: &O) {
        // The ticket is stored before the request is published: loading the request (with
        // acquire ordering: the poll's relaxed load orders nothing) and then the ticket gives
        // the request being waited out, or a later one.
        if !self.requested.load(Ordering::SeqCst) {
            return;
        }
        let ticket = self.ticket.load(Ordering::SeqCst);
        // Outside this safepoint's lock: a thread parking at the other heap takes the locks
        // in the other order.
        mark_waiting(ticket, others);
        let g = self.lock.lock();
        t.set(ThreadState::Stopped);
        self.lock.notify_all(STOPPED_CV);
        drop(g);
        // Most pauses end within microseconds: watch for the end before sleeping on the
        // condvar (whose wake-up takes longer than the pause). Whatever the spin saw, the
        // request is tested again under the lock, where `stop` publishes it: a new pause
        // requested right after this one ended keeps the thread parked.
        P::spin_until(PARKED_SPIN, || !self.requested.load(Ordering::SeqCst));
        let mut g = self.lock.lock();
        while self.requested.load(Ordering::SeqCst) {
            g = self.lock.wait(RESUME_CV, g);
        }
        t.set(ThreadState::Running);
        drop(g);
        unmark_waiting(ticket, others);
    }

    /// The mutator enters the blocked state (leaves its outermost scope, enters a blocking
    /// region, detaches, or stalls).
    #[inline]
    pub fn enter_blocked(&self, t: &ThreadStateCell<P>) {
        t.publish(ThreadState::Blocked, self.barrier.store_order());
        self.barrier.light::<P>();
        if self.requested.load(Ordering::SeqCst) {
            let _g = self.lock.lock();
            self.lock.notify_all(STOPPED_CV);
        }
    }

    /// The mutator leaves the blocked state: it waits while a pause is in progress.
    #[inline]
    pub fn leave_blocked<O: OtherHeaps<P> + ?Sized>(&self, t: &ThreadStateCell<P>, others: &O) {
        t.publish(ThreadState::Running, self.barrier.store_order());
        self.barrier.light::<P>();
        if self.requested.load(Ordering::SeqCst) {
            self.park(t, others);
        }
    }

    /// Attach a (blocked) thread: `register` makes it visible to the snapshot of the next
    /// [`Self::stop`]. It stays blocked; [`Self::leave_blocked`] lets it run (waiting if a
    /// pause is in progress).
    pub fn attach(&self, t: &ThreadStateCell<P>, register: impl FnOnce()) {
        debug_assert_eq!(t.get(), ThreadState::Blocked);
        register();
    }

    /// Detach a running thread: `hand_over` gives the collector what it must still see
    /// (the mark buffer) while the thread still runs, so no pause can be in progress; from
    /// then on the thread counts as stopped, and `unregister` removes it.
    ///
    /// Handing over after entering the blocked state would be wrong: the collector could be
    /// inside Pause Mark End, past its last look at the mark queue, and would miss the work.
    pub fn detach(
        &self,
        t: &ThreadStateCell<P>,
        hand_over: impl FnOnce(),
        unregister: impl FnOnce(),
    ) {
        debug_assert_eq!(t.get(), ThreadState::Running);
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
    ///
    /// `ticket` orders this request against those of other heaps' safepoints: nonzero,
    /// unique, increasing in the order requests begin. While a thread the pause waits for is
    /// parked for an older request, or waits for another heap's cycle, the pause gives way
    /// (see the module documentation): it withdraws the request, waits until that thread's
    /// wait has ended, and starts over with the same ticket and a new snapshot (threads may
    /// have attached while no request was visible).
    pub fn stop<T: HasThreadState<P>>(
        &self,
        ticket: u64,
        snapshot: impl FnMut() -> Vec<T>,
    ) -> (Instant, Vec<T>) {
        self.stop_watched(ticket, snapshot, SAFEPOINT_TIMEOUT, |_: &T, _| {})
    }

    /// [`Self::stop`], and if mutators still run `timeout` after the request, call
    /// `straggler` once for each of them (with what it is doing), outside the lock, while
    /// the pause goes on waiting: the safepoint timeout (see the module documentation).
    pub fn stop_watched<T: HasThreadState<P>>(
        &self,
        ticket: u64,
        mut snapshot: impl FnMut() -> Vec<T>,
        timeout: Duration,
        mut straggler: impl FnMut(&T, Activity),
    ) -> (Instant, Vec<T>) {
        let mut timed_out = false;
        assert!(
            ticket != 0 && ticket & CYCLE_WAIT == 0,
            "bad ticket {ticket}"
        );
        let start = Instant::now();
        let mut g = self.lock.lock();
        *g += 1;
        self.ticket.store(ticket, Ordering::SeqCst);
        loop {
            self.requested.store(true, Ordering::SeqCst);
            // The heavy side of the handshake, on every publication (also after giving way).
            self.barrier.heavy::<P>();
            let threads = snapshot();
            let mut spun = false;
            let (i, w) = loop {
                let mut running = false;
                let mut give_way = None;
                for (i, th) in threads.iter().enumerate() {
                    let t = th.thread_state();
                    if t.get() != ThreadState::Running {
                        continue;
                    }
                    running = true;
                    let w = t.elsewhere.load(Ordering::SeqCst);
                    if w & CYCLE_WAIT != 0 || (w != 0 && w < ticket) {
                        give_way = Some((i, w));
                        break;
                    }
                }
                match give_way {
                    Some(x) => break x,
                    None if !running => {
                        drop(g);
                        return (start, threads);
                    }
                    // A running mutator reaches its next poll within microseconds: watch
                    // for it, without the lock (a parking thread takes it), before sleeping
                    // on the condvar; then look again under the lock.
                    None if !spun => {
                        spun = true;
                        drop(g);
                        P::spin_until(STRAGGLER_SPIN, || {
                            threads.iter().all(|th| {
                                let t = th.thread_state();
                                t.get() != ThreadState::Running
                                    || t.elsewhere.load(Ordering::SeqCst) != 0
                            })
                        });
                        g = self.lock.lock();
                    }
                    None if timed_out => g = self.lock.wait(STOPPED_CV, g),
                    None => {
                        let waited = P::waited(start);
                        if waited < timeout {
                            g = self.lock.wait_at_most(STOPPED_CV, g, timeout - waited);
                            continue;
                        }
                        // Name the mutators still running, without the lock (the callback
                        // may read `/proc`; a parking thread takes the lock), then look again.
                        timed_out = true;
                        drop(g);
                        for th in &threads {
                            let t = th.thread_state();
                            if t.get() == ThreadState::Running {
                                straggler(th, t.doing());
                            }
                        }
                        g = self.lock.lock();
                    }
                }
            };
            // Give way: withdraw the request (threads parked here resume; nothing of the
            // pause has run), wait until thread `i`'s wait has ended, and start over.
            self.gave_way_to.store(w, Ordering::SeqCst);
            self.requested.store(false, Ordering::SeqCst);
            self.lock.notify_all(RESUME_CV);
            let t = threads[i].thread_state();
            while t.elsewhere.load(Ordering::SeqCst) == w {
                g = self.lock.wait(STOPPED_CV, g);
            }
            self.gave_way_to.store(0, Ordering::SeqCst);
        }
    }

    /// True while the pause in progress gives way to a thread waiting for another heap's
    /// cycle with a ticket older than `ticket`: a cycle wait of the caller on this heap, with
    /// `ticket`, should then give up (the module documentation says why).
    pub fn gave_way_to_an_older_cycle_wait(&self, ticket: u64) -> bool {
        let w = self.gave_way_to.load(Ordering::SeqCst);
        w & CYCLE_WAIT != 0 && w & !CYCLE_WAIT < ticket
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

//! Stress test of the safepoint handshake on real hardware, with each of its barriers
//! (`gc_runtime::process_barrier`): `membarrier` (the requester's process-wide barrier, a
//! compiler fence on the mutators' side) where the system offers it, and `fences` (a `SeqCst`
//! fence on both sides). The loom models (`loom_protocols.rs`) check the fence variant; loom
//! cannot model a barrier that one thread's system call makes the others execute, so the
//! membarrier variant is checked here, on the machine's own memory ordering.
//!
//! Mutator threads enter and leave their outermost scope (`leave_blocked`, `enter_blocked`)
//! and poll at a high rate; inside the scope each touches a counter this test owns and looks
//! at a flag the requester sets while it holds the safepoint. The requester starts and ends
//! pauses back to back; while it holds one, it watches the counter. A mutator running during
//! a pause shows as the flag seen set inside a scope, or as the counter moving while the
//! requester holds the pause: either fails the test.
//!
//! The race the barrier decides is a scope entry racing with a request: the test counts the
//! entries during which a request began or was in progress (a phase counter the requester
//! bumps around each `stop`), and the requests made while a mutator was blocked, about to
//! enter, and fails if either count is zero. Removing the `membarrier` call from
//! `ProcessBarrier::heavy` (keeping the requester's own fence) makes this test fail in most
//! runs, with tens of pauses a mutator ran through: the engineering notes of the book give
//! the counts.

use gc_runtime::process_barrier::ProcessBarrier;
use gc_runtime::safepoint::{
    HasThreadState, NoOtherHeaps, Safepoint, ThreadState, ThreadStateCell,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Mutator threads (the machine may have two cores: with the requester, one more thread
/// than cores, so preemption in the middle of a transition is exercised too).
const MUTATORS: usize = 2;
/// Pause requests per run.
const REQUESTS: u64 = 100_000;
/// A run stops requesting after this long, whatever the count (a loaded machine).
const TIME_CAP: Duration = Duration::from_secs(8);
/// Counter touches per scope, a poll after every `POLL_EVERY`.
const TOUCHES: u32 = 8;
const POLL_EVERY: u32 = 8;
/// How long the requester holds each pause, watching the counter (spin-loop rounds).
const HOLD_SPINS: u32 = 100;

/// A mutator as the requester's snapshot lists it: a reference, so that taking the snapshot
/// (between the request's barrier and its first look at the states) is quick, and the
/// requester looks at the states as soon as it can.
struct Listed<'a>(&'a ThreadStateCell);

impl HasThreadState for Listed<'_> {
    fn thread_state(&self) -> &ThreadStateCell {
        self.0
    }
}

struct Shared {
    sp: Safepoint,
    cells: Vec<ThreadStateCell>,
    /// Set while the requester holds the safepoint.
    held: AtomicBool,
    /// Touched by mutators inside their scopes only.
    counter: AtomicU64,
    /// Odd while a `stop` call is in progress (from just before the request to the stop's
    /// return), even otherwise.
    phase: AtomicU64,
    done: AtomicBool,
}

#[derive(Default, Debug)]
struct MutatorCounts {
    entries: u64,
    /// Entries during which a request began or was in progress.
    raced: u64,
    polls: u64,
    /// Times the flag was seen set inside a scope.
    saw_held: u64,
}

#[derive(Debug)]
struct Outcome {
    requests: u64,
    /// Pauses during which the counter moved.
    counter_moved: u64,
    /// Mutators blocked when a request was made (summed over the requests).
    requests_at_blocked: u64,
    mutators: Vec<MutatorCounts>,
}

fn mutator(s: &Shared, i: usize) -> MutatorCounts {
    let cell = &s.cells[i];
    let mut c = MutatorCounts::default();
    while !s.done.load(Ordering::Relaxed) {
        let p0 = s.phase.load(Ordering::SeqCst);
        s.sp.leave_blocked(cell, &NoOtherHeaps);
        let p1 = s.phase.load(Ordering::SeqCst);
        c.entries += 1;
        if p0 & 1 == 1 || p0 != p1 {
            c.raced += 1;
        }
        for k in 1..=TOUCHES {
            if s.held.load(Ordering::Relaxed) {
                c.saw_held += 1;
            }
            s.counter.fetch_add(1, Ordering::Relaxed);
            if k % POLL_EVERY == 0 {
                s.sp.poll(cell, &NoOtherHeaps);
                c.polls += 1;
            }
        }
        s.sp.enter_blocked(cell);
    }
    c
}

fn requester(s: &Shared) -> (u64, u64, u64) {
    let start = Instant::now();
    let mut moved = 0;
    let mut requests = 0;
    let mut at_blocked = 0;
    let mut gap = 0x9e37_79b9u32;
    while requests < REQUESTS && start.elapsed() < TIME_CAP {
        requests += 1;
        // Requests made while a mutator is blocked race with its next entry. Looking at the
        // states first also leaves their cache lines shared, so a mutator's state store
        // takes longer to reach memory: the window the handshake's barrier must close.
        at_blocked += s
            .cells
            .iter()
            .filter(|c| c.get() == ThreadState::Blocked)
            .count() as u64;
        s.phase.fetch_add(1, Ordering::SeqCst);
        let _ = s.sp.stop(requests, || s.cells.iter().map(Listed).collect());
        s.held.store(true, Ordering::SeqCst);
        let before = s.counter.load(Ordering::SeqCst);
        for _ in 0..HOLD_SPINS {
            std::hint::spin_loop();
        }
        if s.counter.load(Ordering::SeqCst) != before {
            moved += 1;
        }
        s.held.store(false, Ordering::SeqCst);
        s.phase.fetch_add(1, Ordering::SeqCst);
        s.sp.resume();
        // A varying gap, so requests begin at every point of the mutators' loops.
        gap ^= gap << 13;
        gap ^= gap >> 17;
        gap ^= gap << 5;
        for _ in 0..gap % 128 {
            std::hint::spin_loop();
        }
    }
    (requests, moved, at_blocked)
}

fn run(barrier: ProcessBarrier) -> Outcome {
    let s = Arc::new(Shared {
        sp: Safepoint::new(barrier),
        cells: (0..MUTATORS)
            .map(|_| ThreadStateCell::new_blocked())
            .collect(),
        held: AtomicBool::new(false),
        counter: AtomicU64::new(0),
        phase: AtomicU64::new(0),
        done: AtomicBool::new(false),
    });
    let threads: Vec<_> = (0..MUTATORS)
        .map(|i| {
            let s = Arc::clone(&s);
            std::thread::spawn(move || mutator(&s, i))
        })
        .collect();
    let (requests, counter_moved, requests_at_blocked) = requester(&s);
    s.done.store(true, Ordering::Relaxed);
    let mutators = threads.into_iter().map(|t| t.join().unwrap()).collect();
    Outcome {
        requests,
        counter_moved,
        requests_at_blocked,
        mutators,
    }
}

/// The two tests run one at a time (each wants the cores).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn check(barrier: ProcessBarrier) {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let o = run(barrier);
    eprintln!("{}: {o:?}", barrier.name());
    let saw_held: u64 = o.mutators.iter().map(|m| m.saw_held).sum();
    assert_eq!(
        (o.counter_moved, saw_held),
        (0, 0),
        "{}: a mutator ran during a pause ({} pauses saw the counter move, {} times a \
         mutator saw the pause held): {o:?}",
        barrier.name(),
        o.counter_moved,
        saw_held
    );
    let raced: u64 = o.mutators.iter().map(|m| m.raced).sum();
    assert!(
        raced > 0 && o.requests_at_blocked > 0,
        "{}: no scope entry raced with a request, or no request found a mutator blocked (about \
         to enter): the test did not reach the handshake's race: {o:?}",
        barrier.name()
    );
    assert!(o.requests > 0);
    assert!(o.mutators.iter().all(|m| m.entries > 0 && m.polls > 0));
}

#[test]
fn no_mutator_runs_during_a_pause_with_membarrier() {
    match ProcessBarrier::choose(true) {
        ProcessBarrier::Membarrier => check(ProcessBarrier::Membarrier),
        ProcessBarrier::Fences => {
            eprintln!("membarrier is not available here: the fences test covers this system")
        }
    }
}

#[test]
fn no_mutator_runs_during_a_pause_with_fences() {
    check(ProcessBarrier::Fences);
}

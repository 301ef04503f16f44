//! The GC worker threads of one parallel phase (ZGC's `ZWorkers` runs a task on its worker
//! threads the same way): the calling thread is worker 0; workers 1.. are spawned for the
//! phase, moved to the spawned workers' scheduling class (`worker_priority`), and each is
//! given its own state. How many take part follows a target while the phase runs: the first
//! ones are spawned when it starts, more by worker 0 when the crew falls short, and a worker
//! over the target parks (`worker_crew`). The calling thread is the driver, or, while
//! mutators are paced, a thread the driver [`offload`]ed the whole phase to, in that same
//! class.
//!
//! The phase ends when every spawned thread has *exited*, not only finished its work. A
//! thread still runs after its work is done: thread-local destructors (crossbeam-epoch's
//! per-thread handle, which hands its deferred garbage to the global queue) and the C
//! library's own clean-up. `std::thread::scope` returns as soon as the work is done, and the
//! exits then ran into the next phase: a `perf sched` trace of a 256 MiB run caught a
//! relocation worker of the previous cycle exiting for 80 µs on the driver's core while the
//! driver waited in the next Pause Mark Start, which it had yielded to the idle-class thread
//! to let mutators reach the safepoint. Here each worker is joined, which waits for the
//! kernel to report the thread gone, while the driver sleeps in the concurrent phase.

use super::idle_class_guard::{IdleClassGuard, Watch, WATCH_PERIOD};
use super::worker_crew::{Crew, CrewTotals, Member, WorkerTarget};
use crate::observe::thread_cpu_ns;
use std::cell::{Cell, RefCell};
use std::sync::mpsc;

/// What the driver panics with when a spawned worker panicked (the worker's own message is
/// printed by the panic hook when it happens).
pub(super) const WORKER_PANICKED: &str =
    "a GC worker thread panicked (its own message is printed above, by the panic hook)";

/// Run `work(member, state)` with a crew of workers whose size follows `target` while the
/// phase runs (see [`super::worker_crew`]): `states` holds one state per possible worker (its
/// length is the most workers allowed); worker 0 is the calling thread, the others are
/// spawned threads named `{name}-{i}`, the first ones at once (as many as the target asks
/// for), more by worker 0 when [`Member::check`] finds the crew short. Returns once every
/// spawned thread has exited, with the CPU time the spawned threads spent in `work` (the
/// caller's own CPU time is its caller's to count) and how the crew changed. Panics if a
/// worker panicked, after every other worker has exited (a worker that can wait for others
/// must stop waiting when one unwinds; parked workers are woken to exit when worker 0's
/// work ends, however it ends).
///
/// The spawned threads run in the idle class unless `guard` keeps GC threads at normal
/// priority; then the caller, once its own work is done, watches them while it waits (see
/// [`super::idle_class_guard`]): a starved thread holds it up even with nothing left to do,
/// since it needs a core to exit.
pub(crate) fn run<T: Send>(
    name: &str,
    guard: &IdleClassGuard,
    states: Vec<T>,
    target: WorkerTarget,
    work: impl Fn(&Member, T) + Sync,
) -> CrewTotals {
    let work = &work;
    let crew = Crew::new(target, states.len());
    let crew = &crew;
    let mut states: Vec<Option<T>> = states.into_iter().map(Some).collect();
    let first = states.first_mut().and_then(Option::take);
    let states = RefCell::new(states);
    let start = crew.target_now();
    crew.start(start);
    let lowered = Cell::new(false);
    let (done_tx, done_rx) = mpsc::channel();
    let joined = std::thread::scope(|s| {
        let handles = RefCell::new(Vec::new());
        let spawn_one = |i: usize| {
            let state = states.borrow_mut()[i]
                .take()
                .expect("each worker's state is taken once");
            let lower = guard.allowed();
            lowered.set(lowered.get() | lower);
            let watched = lower.then_some(guard);
            let h = spawn(
                s,
                format!("{name}-{i}"),
                watched,
                done_tx.clone(),
                move || work(&Member::new(crew, i, None, watched), state),
            );
            handles.borrow_mut().push(h);
        };
        for i in 1..start {
            spawn_one(i);
        }
        {
            // However worker 0's work ends (a panic too), parked workers exit.
            let _finish = FinishOnDrop(crew);
            if let Some(state) = first {
                work(&Member::new(crew, 0, Some(&spawn_one), None), state);
            }
        }
        drop(done_tx);
        let handles = handles.into_inner();
        if lowered.get() {
            wait_watching(guard, handles.len(), &done_rx);
        }
        handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
    });
    let mut totals = CrewTotals::default();
    for j in joined {
        match j {
            Ok(((), c)) => totals.cpu_ns += c,
            Err(_) => panic!("{WORKER_PANICKED}"),
        }
    }
    (totals.joined, totals.left) = crew.changes();
    totals
}

/// Finishes the crew when dropped (see [`Crew::finish`]).
struct FinishOnDrop<'c, 'a>(&'c Crew<'a>);

impl Drop for FinishOnDrop<'_, '_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// Run `f` on one spawned GC worker thread, named `name`, in the spawned workers'
/// scheduling class, while the caller waits until that thread has exited, watching it for
/// starvation (see [`super::idle_class_guard`]); the caller offloads only while `guard`
/// allows the idle class. Returns what `f` returned and the CPU time the thread spent in it.
/// A panic in `f` goes on in the caller, with its own payload.
pub(crate) fn offload<R: Send>(
    name: &str,
    guard: &IdleClassGuard,
    f: impl FnOnce() -> R + Send,
) -> (R, u64) {
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::scope(|s| {
        let h = spawn(s, name.to_string(), Some(guard), done_tx, f);
        wait_watching(guard, 1, &done_rx);
        match h.join() {
            Ok(x) => x,
            Err(payload) => std::panic::resume_unwind(payload),
        }
    })
}

/// Wait until `threads` threads have sent on `done` (or dropped their senders, unwinding),
/// looking at the idle-class GC threads every [`WATCH_PERIOD`] for starvation.
fn wait_watching(guard: &IdleClassGuard, threads: usize, done: &mpsc::Receiver<()>) {
    let mut watch = Watch::new(guard);
    let mut left = threads;
    while left > 0 {
        match done.recv_timeout(WATCH_PERIOD) {
            Ok(()) => left -= 1,
            Err(mpsc::RecvTimeoutError::Timeout) => watch.look(),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    watch.finish();
}

/// Spawn a GC worker thread in scope `s`: named `name`, moved to the spawned workers'
/// scheduling class and watched by `idle` if given, running `f` and sending on `done` when
/// `f` returned; joining it gives `f`'s result and the CPU time `f` took.
fn spawn<'scope, R: Send + 'scope>(
    s: &'scope std::thread::Scope<'scope, '_>,
    name: String,
    idle: Option<&'scope IdleClassGuard>,
    done: mpsc::Sender<()>,
    f: impl FnOnce() -> R + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, (R, u64)> {
    std::thread::Builder::new()
        .name(name)
        .spawn_scoped(s, move || {
            if let Some(g) = idle {
                super::worker_priority::lower_current_thread();
                g.join();
            }
            // Leaves the watched set however `f` ends.
            let _leave = idle.map(LeaveOnDrop);
            let c0 = thread_cpu_ns();
            let r = f();
            let cpu = thread_cpu_ns() - c0;
            // The waiter may have stopped listening (it unwinds): nothing to tell then.
            let _ = done.send(());
            (r, cpu)
        })
        .expect("spawning a GC worker thread")
}

/// Takes the calling thread out of the guard's watched set when dropped.
struct LeaveOnDrop<'a>(&'a IdleClassGuard);

impl Drop for LeaveOnDrop<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Mutex;

    /// A target every spawned worker follows, in the idle class or not.
    fn all(count: &(dyn Fn() -> usize + Sync)) -> WorkerTarget<'_> {
        WorkerTarget {
            count,
            idle_class_stays: false,
        }
    }

    #[test]
    fn every_state_reaches_one_worker_and_worker_0_is_the_caller() {
        let caller = std::thread::current().id();
        let seen = Mutex::new(Vec::new());
        run(
            "test-worker",
            &IdleClassGuard::default(),
            vec![10, 11, 12],
            all(&|| 3),
            |m, state| {
                let i = m.index();
                let on_caller = std::thread::current().id() == caller;
                seen.lock().unwrap().push((i, state, on_caller));
            },
        );
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(seen, vec![(0, 10, true), (1, 11, false), (2, 12, false)]);
    }

    #[test]
    fn a_spawned_worker_panic_reaches_the_caller_after_the_others_finish() {
        let finished = AtomicU64::new(0);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run(
                "test-worker",
                &IdleClassGuard::default(),
                vec![(); 3],
                all(&|| 3),
                |m, ()| {
                    if m.index() == 2 {
                        panic!("injected");
                    }
                    finished.fetch_add(1, Ordering::Relaxed);
                },
            )
        }));
        let msg = r.expect_err("the panic reaches the caller");
        assert_eq!(
            msg.downcast_ref::<String>().map(String::as_str),
            Some(WORKER_PANICKED)
        );
        assert_eq!(finished.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn a_phase_started_with_one_worker_grows_and_shrinks_while_it_runs() {
        use super::super::worker_crew::Turn;
        use std::sync::atomic::AtomicUsize;
        // Worker 0 checks the crew in a loop; the test raises the target to 2 (worker 1 is
        // spawned), lowers it to 1 (worker 1 parks), raises it again (worker 1 comes back),
        // then ends the phase with worker 1 parked (it exits).
        let target = AtomicUsize::new(1);
        let step = AtomicUsize::new(0);
        let ran = Mutex::new(Vec::new());
        let t = || target.load(Ordering::SeqCst);
        let totals = run(
            "test-worker",
            &IdleClassGuard::default(),
            vec![0, 1],
            all(&t),
            |m, _| {
                ran.lock().unwrap().push(m.index());
                if m.index() == 0 {
                    assert_eq!(
                        step.load(Ordering::SeqCst),
                        0,
                        "the phase starts with worker 0"
                    );
                    target.store(2, Ordering::SeqCst);
                    m.check(); // spawns worker 1
                    while step.load(Ordering::SeqCst) < 1 {
                        std::thread::yield_now();
                    }
                    target.store(1, Ordering::SeqCst);
                    while step.load(Ordering::SeqCst) < 2 {
                        std::thread::yield_now();
                    }
                    target.store(2, Ordering::SeqCst);
                    assert_eq!(m.check(), Turn::Stay); // brings worker 1 back
                    while step.load(Ordering::SeqCst) < 3 {
                        std::thread::yield_now();
                    }
                    target.store(1, Ordering::SeqCst);
                    while step.load(Ordering::SeqCst) < 4 {
                        std::thread::yield_now();
                    }
                    return; // ends the phase: worker 1, parked, exits
                }
                step.store(1, Ordering::SeqCst);
                while m.check() == Turn::Stay {
                    std::thread::yield_now();
                }
                step.store(2, Ordering::SeqCst);
                assert!(m.park(), "brought back");
                step.store(3, Ordering::SeqCst);
                while m.check() == Turn::Stay {
                    std::thread::yield_now();
                }
                step.store(4, Ordering::SeqCst);
                assert!(!m.park(), "the phase ended while it was parked");
            },
        );
        assert_eq!(ran.into_inner().unwrap(), vec![0, 1]);
        assert_eq!((totals.joined, totals.left), (2, 2));
    }

    #[test]
    fn offload_runs_elsewhere_and_passes_on_the_result_and_the_panic() {
        let caller = std::thread::current().id();
        let (elsewhere, _cpu) = offload("test-offload", &IdleClassGuard::default(), || {
            std::thread::current().id() != caller
        });
        assert!(elsewhere);
        let r = std::panic::catch_unwind(|| {
            offload("test-offload", &IdleClassGuard::default(), || {
                panic!("its own message")
            })
        });
        let msg = r.expect_err("the panic reaches the caller");
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"its own message"));
    }
}

//! The GC worker threads of one parallel phase (ZGC's `ZWorkers` runs a task on its worker
//! threads the same way): the calling thread is worker 0; workers 1.. are spawned for the
//! phase, moved to the spawned workers' scheduling class (`worker_priority`), and each is
//! given its own state. The calling thread is the driver, or, while mutators are paced, a
//! thread the driver [`offload`]ed the whole phase to, in that same class.
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
use crate::observe::thread_cpu_ns;
use std::sync::mpsc;

/// What the driver panics with when a spawned worker panicked (the worker's own message is
/// printed by the panic hook when it happens).
pub(super) const WORKER_PANICKED: &str =
    "a GC worker thread panicked (its own message is printed above, by the panic hook)";

/// Run `work(i, state_i)` for every state of `states` at once: `states[0]` on the calling
/// thread, the others on spawned threads named `{name}-{i}`. Returns once every spawned
/// thread has exited, with the CPU time the spawned threads spent in `work` (the caller's own
/// CPU time is its caller's to count). Panics if a worker panicked, after every other worker
/// has exited (a worker that can wait for others must stop waiting when one unwinds).
///
/// The spawned threads run in the idle class unless `guard` keeps GC threads at normal
/// priority; then the caller, once its own work is done, watches them while it waits (see
/// [`super::idle_class_guard`]): a starved thread holds it up even with nothing left to do,
/// since it needs a core to exit.
pub(crate) fn run<T: Send>(
    name: &str,
    guard: &IdleClassGuard,
    states: Vec<T>,
    work: impl Fn(usize, T) + Sync,
) -> u64 {
    let work = &work;
    let lower = guard.allowed();
    let mut states = states.into_iter();
    let first = states.next();
    let spawned = states.len();
    let (done_tx, done_rx) = mpsc::channel();
    let joined = std::thread::scope(|s| {
        let handles: Vec<_> = states
            .enumerate()
            .map(|(k, state)| {
                let i = k + 1;
                let done = done_tx.clone();
                let watched = lower.then_some(guard);
                spawn(s, format!("{name}-{i}"), watched, done, move || {
                    work(i, state)
                })
            })
            .collect();
        drop(done_tx);
        // If worker 0 panics, the scope still joins the others before the panic goes on.
        if let Some(state) = first {
            work(0, state);
        }
        if lower {
            wait_watching(guard, spawned, &done_rx);
        }
        handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
    });
    let mut cpu = 0;
    for j in joined {
        match j {
            Ok(((), c)) => cpu += c,
            Err(_) => panic!("{WORKER_PANICKED}"),
        }
    }
    cpu
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

    #[test]
    fn every_state_reaches_one_worker_and_worker_0_is_the_caller() {
        let caller = std::thread::current().id();
        let seen = Mutex::new(Vec::new());
        run(
            "test-worker",
            &IdleClassGuard::default(),
            vec![10, 11, 12],
            |i, state| {
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
                |i, ()| {
                    if i == 2 {
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

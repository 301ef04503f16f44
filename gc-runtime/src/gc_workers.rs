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

use crate::cpu_time::thread_cpu_ns;

/// What the driver panics with when a spawned worker panicked (the worker's own message is
/// printed by the panic hook when it happens).
pub(crate) const WORKER_PANICKED: &str =
    "a GC worker thread panicked (its own message is printed above, by the panic hook)";

/// Run `work(i, state_i)` for every state of `states` at once: `states[0]` on the calling
/// thread, the others on spawned threads named `{name}-{i}`. Returns once every spawned
/// thread has exited, with the CPU time the spawned threads spent in `work` (the caller's own
/// CPU time is its caller's to count). Panics if a worker panicked, after every other worker
/// has exited (a worker that can wait for others must stop waiting when one unwinds).
pub(crate) fn run<T: Send>(name: &str, states: Vec<T>, work: impl Fn(usize, T) + Sync) -> u64 {
    let work = &work;
    let mut states = states.into_iter();
    let first = states.next();
    let joined = std::thread::scope(|s| {
        let handles: Vec<_> = states
            .enumerate()
            .map(|(k, state)| {
                let i = k + 1;
                spawn(s, format!("{name}-{i}"), move || work(i, state))
            })
            .collect();
        // If worker 0 panics, the scope still joins the others before the panic goes on.
        if let Some(state) = first {
            work(0, state);
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
/// scheduling class, while the caller sleeps until that thread has exited. Returns what `f`
/// returned and the CPU time the thread spent in it. A panic in `f` goes on in the caller,
/// with its own payload.
pub(crate) fn offload<R: Send>(name: &str, f: impl FnOnce() -> R + Send) -> (R, u64) {
    std::thread::scope(|s| match spawn(s, name.to_string(), f).join() {
        Ok(x) => x,
        Err(payload) => std::panic::resume_unwind(payload),
    })
}

/// Spawn a GC worker thread in scope `s`: named `name`, moved to the spawned workers'
/// scheduling class, running `f`; joining it gives `f`'s result and the CPU time `f` took.
fn spawn<'scope, R: Send + 'scope>(
    s: &'scope std::thread::Scope<'scope, '_>,
    name: String,
    f: impl FnOnce() -> R + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, (R, u64)> {
    std::thread::Builder::new()
        .name(name)
        .spawn_scoped(s, move || {
            crate::worker_priority::lower_current_thread();
            let c0 = thread_cpu_ns();
            let r = f();
            (r, thread_cpu_ns() - c0)
        })
        .expect("spawning a GC worker thread")
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
        run("test-worker", vec![10, 11, 12], |i, state| {
            let on_caller = std::thread::current().id() == caller;
            seen.lock().unwrap().push((i, state, on_caller));
        });
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(seen, vec![(0, 10, true), (1, 11, false), (2, 12, false)]);
    }

    #[test]
    fn a_spawned_worker_panic_reaches_the_caller_after_the_others_finish() {
        let finished = AtomicU64::new(0);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run("test-worker", vec![(); 3], |i, ()| {
                if i == 2 {
                    panic!("injected");
                }
                finished.fetch_add(1, Ordering::Relaxed);
            })
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
        let (elsewhere, _cpu) = offload("test-offload", || std::thread::current().id() != caller);
        assert!(elsewhere);
        let r = std::panic::catch_unwind(|| offload("test-offload", || panic!("its own message")));
        let msg = r.expect_err("the panic reaches the caller");
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"its own message"));
    }
}

//! The scheduling priority of GC worker threads. The driver thread works as the first GC
//! worker at normal priority; the workers it spawns for a parallel phase run at a lower one
//! (nice +10), so that when a mutator wakes (from a pacing delay, a stall, I/O) and every core
//! is busy with GC work, the scheduler gives it a core at once instead of after a worker's
//! time slice. (HotSpot sets no such priority by default; it has `ThreadPriorityPolicy` for
//! the same end.) The extra workers thus use what mutators leave idle.

/// The nice value of spawned GC workers.
const WORKER_NICE: libc::c_int = 10;

/// Lower the calling thread's priority to the spawned GC workers' (best effort: an error,
/// which only a sandbox forbidding `setpriority` could cause, leaves it as it was).
pub(crate) fn lower_current_thread() {
    // SAFETY: gettid has no preconditions and returns the calling thread's id.
    let tid = unsafe { libc::gettid() };
    // SAFETY: setpriority with PRIO_PROCESS and a thread id changes only that thread's nice
    // value; it takes no pointers.
    let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, WORKER_NICE) };
}

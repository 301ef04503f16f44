//! The scheduling class of GC worker threads. The driver thread works as the first GC worker
//! at normal priority; the workers it spawns for a parallel phase run in Linux's `SCHED_IDLE`
//! class, so they use only what mutators leave idle: when a mutator wakes (from a pacing delay,
//! a stall, I/O) and every core is busy with GC work, the scheduler preempts an idle-class
//! worker at once instead of letting it finish its time slice. (With nice +10, the previous
//! choice, a waking mutator still waited up to a few milliseconds for a core now and then.)
//! Where `SCHED_IDLE` is refused the worker falls back to nice +10. HotSpot sets no such
//! priority by default; it has `ThreadPriorityPolicy` for the same end.

/// The nice value of spawned GC workers where `SCHED_IDLE` is refused.
const WORKER_NICE: libc::c_int = 10;

/// Move the calling thread to the spawned GC workers' scheduling class (best effort: where
/// both `sched_setscheduler` and `setpriority` are refused, which only a sandbox could cause,
/// it stays as it was). A thread cannot leave `SCHED_IDLE` again without privilege: call this
/// only on threads that stay background threads for the rest of their life. Public for an
/// embedder's (or a benchmark harness's) own background threads, which should no more keep a
/// waking mutator off its core than GC workers do.
pub fn lower_current_thread() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param that outlives the call; pid 0 is the calling
    // thread, so only its own scheduling class changes.
    let idle = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } == 0;
    if idle {
        return;
    }
    let tid = current_tid();
    // SAFETY: setpriority with PRIO_PROCESS and a thread id changes only that thread's nice
    // value; it takes no pointers.
    let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, WORKER_NICE) };
}

/// The calling thread's kernel thread id (for [`raise_thread`] and its `/proc` entries).
pub(crate) fn current_tid() -> i32 {
    // SAFETY: gettid has no preconditions and returns the calling thread's id.
    unsafe { libc::gettid() }
}

/// Move thread `tid` of this process back to the normal scheduling class (`SCHED_OTHER`,
/// nice 0). Returns false where that is refused: leaving `SCHED_IDLE`, or lowering a nice
/// value, needs `CAP_SYS_NICE` or an `RLIMIT_NICE` of 20 (root has the first; many desktop
/// sessions have neither).
pub(super) fn raise_thread(tid: i32) -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param that outlives the call; `tid` names a thread of
    // this process (a GC worker that may have exited meanwhile: the call then fails with
    // ESRCH and changes nothing).
    let other = unsafe { libc::sched_setscheduler(tid, libc::SCHED_OTHER, &param) } == 0;
    // SAFETY: setpriority with PRIO_PROCESS and a thread id changes only that thread's nice
    // value; it takes no pointers.
    let nice = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 0) } == 0;
    other && nice
}

//! A sleep that ends on time, for pacing delays. Linux lets a normal thread's timers fire up
//! to its *timer slack* late (50 µs by default) so that wake-ups can be batched; a pacing
//! delay of a few hundred microseconds then overran by 50–75 µs at the median, time the
//! mutator was held for nothing. [`sleep_precisely`] sets the calling thread's slack to 1 ns
//! for the sleep and restores the slack it had: the embedder's thread keeps its own setting
//! everywhere else. (The JVM's `os::naked_short_sleep` faces the same slack; HotSpot leaves it.)

use std::time::Duration;

/// Sleep for `d` with the calling thread's timer slack at its minimum for the sleep.
pub(crate) fn sleep_precisely(d: Duration) {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer and returns the calling thread's slack in
    // nanoseconds (or -1 on error, which leaves nothing to restore).
    let before = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    if before > 1 {
        // SAFETY: PR_SET_TIMERSLACK takes the slack by value and changes only the calling
        // thread's timer slack.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    }
    std::thread::sleep(d);
    if before > 1 {
        // SAFETY: as above; `before` is the slack the thread had, a valid slack value.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, before as libc::c_ulong, 0, 0, 0) };
    }
}

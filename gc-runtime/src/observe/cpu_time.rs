//! CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`), for GC thread accounting (and
//! the harness's `cpu-probe`).

/// Nanoseconds of CPU the calling thread has used.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out pointer; the clock id is a constant the kernel supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

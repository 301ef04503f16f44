//! How long a pause's time to safepoint was a mutator waiting for a CPU. A pause starts when
//! the collector asks the mutators to stop and waits until every one has reached a safepoint
//! poll; a mutator that is runnable but has no CPU (another thread of this process or of
//! another one holds it) cannot reach its poll, however short the path to it is. The kernel
//! counts that time per thread (its *run delay*, the second field of
//! `/proc/<pid>/task/<tid>/schedstat`), so the driver reads it for every mutator before the
//! request and after the mutators are released, and the pause record keeps the largest
//! difference, at most the time to safepoint ([`PauseRecord::time_to_safepoint_cpu_wait_ns`]).
//!
//! HotSpot's safepoint log gives the time to safepoint as one figure ("Reaching safepoint");
//! this splits it, so that a report can tell a mutator slow to reach its poll from one that
//! had no core to run on. Who held the core it does not say: another process, the harness's
//! meters, or the collector's own driver, woken on the mutator's core to run the very pause
//! that waits for it (the common case for waits of a few microseconds on two cores). It is a
//! bound, not a trace: the kernel adds a wait to the
//! count when the thread gets its CPU, so a wait that began before the request is counted
//! whole (hence the cap), and one that began after the release may be counted if the thread
//! already ran again when the driver read it (a wake-up of a few microseconds on an idle core).
//!
//! Each mutator keeps its own `schedstat` open (opened on its thread, so it names that
//! thread), and a read is one `pread` of under a microsecond; where the kernel keeps no such
//! statistics (`CONFIG_SCHED_INFO` off) the figure is `None`.
//!
//! [`PauseRecord::time_to_safepoint_cpu_wait_ns`]: super::stats::PauseRecord

use super::proc_info::parse_schedstat;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// A thread's run delay counter, readable from any thread.
pub(crate) struct RunDelay {
    /// `/proc/thread-self/schedstat` of the thread that made it; `None` where it cannot be
    /// opened.
    schedstat: Option<File>,
}

impl RunDelay {
    /// The counter of the calling thread.
    pub(crate) fn of_current_thread() -> Self {
        RunDelay {
            schedstat: File::open("/proc/thread-self/schedstat").ok(),
        }
    }

    /// The thread's run delay so far (ns); `None` where the kernel does not keep it or the
    /// thread has exited.
    pub(crate) fn read_ns(&self) -> Option<u64> {
        let f = self.schedstat.as_ref()?;
        let mut buf = [0u8; 96];
        let n = f.read_at(&mut buf, 0).ok()?;
        let line = std::str::from_utf8(&buf[..n]).ok()?;
        Some(parse_schedstat(line)?.run_delay_ns)
    }
}

/// The longest wait for a CPU of any mutator between two readings (`before[i]` and `after[i]`
/// of the same mutator), capped at the time to safepoint `ttsp_ns`; `None` when no mutator
/// has both readings.
pub(crate) fn longest_cpu_wait(
    before: &[Option<u64>],
    after: &[Option<u64>],
    ttsp_ns: u64,
) -> Option<u64> {
    before
        .iter()
        .zip(after)
        .filter_map(|(b, a)| Some(a.as_ref()?.saturating_sub(*b.as_ref()?)))
        .max()
        .map(|w| w.min(ttsp_ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_wait_is_capped_at_the_time_to_safepoint() {
        let before = [Some(100), Some(1_000), None];
        let after = [Some(150), Some(1_030), Some(5_000)];
        assert_eq!(longest_cpu_wait(&before, &after, 1_000), Some(50));
        assert_eq!(longest_cpu_wait(&before, &after, 40), Some(40));
        assert_eq!(longest_cpu_wait(&[None], &[Some(1)], 40), None);
        assert_eq!(longest_cpu_wait(&[], &[], 40), None);
    }

    #[test]
    fn a_thread_reads_its_own_run_delay_from_another_thread() {
        if !std::path::Path::new("/proc/thread-self/schedstat").exists() {
            return; // nothing to read on this kernel
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            tx.send(RunDelay::of_current_thread()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(50));
        });
        let rd = rx.recv().unwrap();
        let first = rd.read_ns().expect("the thread's schedstat");
        assert!(rd.read_ns().unwrap() >= first, "the counter only grows");
        t.join().unwrap();
        assert_eq!(rd.read_ns(), None, "the thread has exited");
    }
}

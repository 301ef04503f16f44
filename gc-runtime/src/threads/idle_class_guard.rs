//! The starvation guard of the idle scheduling class: GC threads in it that wait for a core
//! instead of running are moved back to normal priority.
//!
//! Spawned GC workers, and the thread a concurrent phase is handed to while mutators are
//! paced, run in Linux's `SCHED_IDLE` class (see `worker_priority`): they use only the CPU
//! that nothing else wants, so a mutator waking from a pacing delay gets a core at once. The
//! kernel cannot tell this program's mutators from other processes, though. When other
//! processes keep every core busy, an idle-class thread gets a fraction of a percent of a
//! core, the cycle crawls, and the mutators it should free memory for stall: two busy loops
//! beside a 256 MiB heap-churn run held it to 7–12 cycles in 12 s with allocation stalls of up
//! to 0.6 s, against 24–26 cycles and none over 47 ms with every GC thread at normal priority.
//!
//! So whoever waits for idle-class GC threads (the driver, or worker 0 of a parallel phase)
//! watches them: every [`WATCH_PERIOD`] it reads each one's state (`/proc/self/task/<tid>/stat`)
//! and CPU time (`.../schedstat`). If one of them is runnable but together they ran for less
//! than [`STARVED_RUN_SHARE`] of the period, they are starved: they are moved back to the
//! normal class
//! at once (where the system allows it, see `worker_priority::raise_thread`), and GC threads
//! stay at normal priority for a while (1 s, doubling with each starvation in a row up to
//! 32 s) before the idle class is tried again. ZGC has nothing like it: its threads always run
//! at normal priority.

use super::worker_priority;
use crate::observe::proc_info::{parse_schedstat, stat_state as parse_state};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often a waiter looks at the threads it waits for.
pub(super) const WATCH_PERIOD: Duration = Duration::from_millis(10);
/// A runnable thread that ran for less than this share of a period was starved (our own
/// mutators waking from pacing delays preempt it for a millisecond or so at a time).
pub(super) const STARVED_RUN_SHARE: f64 = 0.2;
/// How long GC threads stay at normal priority after the first starvation.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest such period (after five starvations in a row).
const MAX_BACKOFF_DOUBLINGS: u32 = 5;

/// Whether GC threads may run in the idle scheduling class, and what it has seen.
pub(crate) struct IdleClassGuard {
    base: Instant,
    /// Nanoseconds after `base` until which GC threads run at normal priority.
    normal_until_ns: AtomicU64,
    /// Starvations in a row (the backoff doubles with each).
    streak: AtomicU32,
    /// Starvations seen in total (each of one waiter's threads).
    starvations: AtomicU64,
    /// Of those, the ones whose threads the system let us move back to the normal class.
    raised: AtomicU64,
    /// The thread ids of the GC threads now in the idle class.
    threads: Mutex<Vec<i32>>,
}

impl Default for IdleClassGuard {
    fn default() -> Self {
        IdleClassGuard {
            base: Instant::now(),
            normal_until_ns: AtomicU64::new(0),
            streak: AtomicU32::new(0),
            starvations: AtomicU64::new(0),
            raised: AtomicU64::new(0),
            threads: Mutex::new(Vec::new()),
        }
    }
}

impl IdleClassGuard {
    fn now_ns(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64
    }

    /// True unless a recent starvation keeps GC threads at normal priority.
    pub(crate) fn allowed(&self) -> bool {
        self.now_ns() >= self.normal_until_ns.load(Ordering::Relaxed)
    }

    /// The calling thread, a GC thread that just moved to the idle class, is watched until
    /// [`Self::leave`].
    pub(super) fn join(&self) {
        self.threads.lock().push(worker_priority::current_tid());
    }

    /// The calling thread's idle-class work is over.
    pub(super) fn leave(&self) {
        let tid = worker_priority::current_tid();
        self.threads.lock().retain(|&t| t != tid);
    }

    /// A thread was starved: keep GC threads at normal priority for the backoff period.
    fn starved(&self, raised: bool) {
        let streak = self.streak.fetch_add(1, Ordering::Relaxed);
        let backoff = FIRST_BACKOFF * (1 << streak.min(MAX_BACKOFF_DOUBLINGS));
        self.normal_until_ns
            .fetch_max(self.now_ns() + backoff.as_nanos() as u64, Ordering::Relaxed);
        self.starvations.fetch_add(1, Ordering::Relaxed);
        if raised {
            self.raised.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A watched run of at least one period ended without starving: the streak ends.
    fn fed(&self) {
        self.streak.store(0, Ordering::Relaxed);
    }

    /// Starved threads seen since the heap was created.
    pub(crate) fn starvations(&self) -> u64 {
        self.starvations.load(Ordering::Relaxed)
    }

    /// Starved threads the system let us move back to the normal class.
    pub(crate) fn raised(&self) -> u64 {
        self.raised.load(Ordering::Relaxed)
    }
}

/// A waiter's view of the heap's idle-class GC threads (all of them: the ones it waits for
/// may share the cores they get with others, such as the workers of a phase handed to an
/// idle-class thread): each one's CPU time at the last look.
pub(super) struct Watch<'a> {
    guard: &'a IdleClassGuard,
    last: Vec<(i32, u64)>,
    last_at: Instant,
    starved_any: bool,
    started: Instant,
}

impl<'a> Watch<'a> {
    pub(super) fn new(guard: &'a IdleClassGuard) -> Self {
        let now = Instant::now();
        let mut w = Watch {
            guard,
            last: Vec::new(),
            last_at: now,
            starved_any: false,
            started: now,
        };
        w.sample_all();
        w
    }

    /// Sample every idle-class GC thread alive; returns (CPU they used since the last look,
    /// whether one of them is runnable, their ids).
    fn sample_all(&mut self) -> (u64, bool, Vec<i32>) {
        let tids = self.guard.threads.lock().clone();
        let (mut ran, mut waiting) = (0u64, false);
        let mut now = Vec::with_capacity(tids.len());
        let mut alive = Vec::with_capacity(tids.len());
        for tid in tids {
            let Some(s) = sample(tid) else { continue };
            if let Some(&(_, before)) = self.last.iter().find(|(t, _)| *t == tid) {
                ran += s.cpu_ns.saturating_sub(before);
                waiting |= s.runnable;
            }
            now.push((tid, s.cpu_ns));
            alive.push(tid);
        }
        self.last = now;
        (ran, waiting, alive)
    }

    /// Look at the heap's idle-class GC threads (once they are found starved, no more): if
    /// one of them is runnable but all of them together ran for less than
    /// [`STARVED_RUN_SHARE`] of the time since the last look, they are starved, and every one
    /// is raised. (Judged together: idle-class GC threads that outnumber the cores they get
    /// share them, and each may run little.)
    pub(super) fn look(&mut self) {
        if self.starved_any {
            return;
        }
        let now = Instant::now();
        let period = now.duration_since(self.last_at).as_nanos() as f64;
        self.last_at = now;
        let (ran, waiting, alive) = self.sample_all();
        if waiting && (ran as f64) < STARVED_RUN_SHARE * period {
            let mut raised = true;
            for tid in alive {
                raised &= worker_priority::raise_thread(tid);
            }
            self.guard.starved(raised);
            self.starved_any = true;
        }
    }

    /// The wait is over.
    pub(super) fn finish(self) {
        if !self.starved_any && self.started.elapsed() >= WATCH_PERIOD {
            self.guard.fed();
        }
    }
}

/// A thread's CPU time so far and whether it is runnable (running or waiting for a core).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sample {
    cpu_ns: u64,
    runnable: bool,
}

/// Thread `tid` of this process now; `None` after it exited, or where the kernel keeps no
/// such statistics.
fn sample(tid: i32) -> Option<Sample> {
    let dir = format!("/proc/self/task/{tid}");
    let stat = std::fs::read_to_string(format!("{dir}/stat")).ok()?;
    let schedstat = std::fs::read_to_string(format!("{dir}/schedstat")).ok()?;
    Some(Sample {
        cpu_ns: parse_schedstat(&schedstat)?.cpu_ns,
        runnable: parse_state(&stat)? == 'R',
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_gives_a_threads_cpu_time_and_state() {
        let s = parse_schedstat("903051611 82685844 1453\n").unwrap();
        assert_eq!((s.cpu_ns, s.run_delay_ns), (903051611, 82685844));
        assert_eq!(parse_schedstat(""), None);
        assert_eq!(parse_schedstat("12"), None);
        assert_eq!(parse_state("4242 (gc-mark (1) R) S 1 2 3"), Some('S'));
        assert_eq!(parse_state("4242 gc-mark"), None);
        if !std::path::Path::new("/proc/self/schedstat").exists() {
            return; // nothing to read on this kernel
        }
        let s = sample(worker_priority::current_tid()).expect("no schedstat here");
        assert!(s.runnable, "the thread reading its own state runs");
        assert_eq!(sample(-1), None);
    }

    #[test]
    fn a_starvation_keeps_gc_threads_at_normal_priority_for_a_while() {
        let g = IdleClassGuard::default();
        assert!(g.allowed());
        g.starved(false);
        assert!(!g.allowed());
        assert_eq!((g.starvations(), g.raised()), (1, 0));
        // The period doubles with each starvation in a row, up to 32 s.
        for _ in 0..10 {
            g.starved(true);
        }
        let until = g.normal_until_ns.load(Ordering::Relaxed);
        let left = Duration::from_nanos(until - g.now_ns());
        assert!(left > Duration::from_secs(16) && left <= Duration::from_secs(32));
        assert_eq!((g.starvations(), g.raised()), (11, 10));
        // A fed run ends the streak, not the period already set.
        g.fed();
        assert_eq!(g.streak.load(Ordering::Relaxed), 0);
        assert!(!g.allowed());
    }

    #[test]
    fn a_thread_kept_off_the_cores_is_found_starved() {
        if !std::path::Path::new("/proc/self/schedstat").exists() {
            return; // the guard cannot watch threads on this kernel
        }
        // Two threads per core keep every core busy; a third waits for one of them, so it
        // stays runnable and, with more runnable threads than cores, waits on the run queue.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let g = IdleClassGuard::default();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let joined = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..2 * cores {
                s.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                });
            }
            s.spawn(|| {
                worker_priority::lower_current_thread();
                g.join();
                joined.store(true, Ordering::Relaxed);
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
                g.leave();
            });
            while !joined.load(Ordering::Relaxed) {
                std::thread::yield_now();
            }
            let mut w = Watch::new(&g);
            let start = Instant::now();
            while g.starvations() == 0 && start.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(WATCH_PERIOD);
                w.look();
            }
            w.finish();
            stop.store(true, Ordering::Relaxed);
        });
        assert_eq!(g.starvations(), 1, "an idle-class thread behind busy cores");
        assert!(!g.allowed());
    }
}

//! The crew of one parallel phase: how many GC workers take part *while the phase runs*
//! (ZGC's dynamic number of GC worker threads, which its director raises while mutators
//! stall, here re-read inside a running phase). A phase starts with the workers its target
//! asks for; at safe points of their loops the workers read the target again: one whose index
//! is at or above it leaves, after handing back the work it holds, and parks, not runnable;
//! a worker that finds the crew short of the target brings a parked one back, and worker 0
//! (the caller of the phase) spawns one more while fewer than the most allowed exist. So a
//! phase started with one worker gains a second when a mutator starts waiting for the cycle
//! (paced or stalled), and gives it up again when the mutators run on their own — if it runs
//! at normal priority. A worker in the idle scheduling class (`worker_priority`) stays to the
//! end of the phase ([`WorkerTarget::idle_class_stays`]): it runs only on a core nothing else
//! wants, so it takes nothing from a running mutator, and it is at hand the moment the
//! mutator sleeps again; in alternating runs, parking it too cost throughput (see the
//! engineering notes).
//!
//! The crew also counts its idle members for phases that end by agreement (marking ends
//! when every worker is idle and every queue is empty): a worker's spawn, its going idle and
//! its going busy are one atomic word (members in the high half, idle ones in the low half),
//! so [`Crew::all_idle`] never sees a new worker's spawn apart from its count. A new member
//! starts busy; a parked member is idle.

use super::idle_class_guard::IdleClassGuard;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicU64, Ordering};

/// What a worker does at a safe point of its loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Turn {
    /// Go on working.
    Stay,
    /// The crew is larger than its target and this worker is one too many: hand back the
    /// work held, then [`Member::park`].
    Leave,
}

/// How many workers took part in a phase, and how its crew changed while it ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CrewTotals {
    /// CPU time of the spawned workers (the caller's is its caller's to count).
    pub(crate) cpu_ns: u64,
    /// Workers that joined the running phase (spawned or brought back from parking).
    pub(crate) joined: u64,
    /// Workers that left the running phase (parked) because the target fell.
    pub(crate) left: u64,
}

impl CrewTotals {
    pub(crate) fn add(&mut self, o: CrewTotals) {
        self.cpu_ns += o.cpu_ns;
        self.joined += o.joined;
        self.left += o.left;
    }
}

/// What a phase's crew follows.
#[derive(Clone, Copy)]
pub(crate) struct WorkerTarget<'a> {
    /// The workers wanted now (clamped to 1..=the most allowed).
    pub(crate) count: &'a (dyn Fn() -> usize + Sync),
    /// A worker over the count that runs in the idle scheduling class stays (see the module
    /// documentation); false makes it leave like one at normal priority.
    pub(crate) idle_class_stays: bool,
}

/// Who is parked, and whether the phase is over.
struct Roster {
    /// Workers that exist (spawned, or the caller).
    spawned: usize,
    /// The indices of the parked ones.
    parked: Vec<usize>,
    /// No work is left for a parked worker: it exits instead of waiting.
    finished: bool,
}

/// The crew of one phase. See the module documentation.
pub(crate) struct Crew<'a> {
    target: WorkerTarget<'a>,
    max: usize,
    roster: Mutex<Roster>,
    wake: Condvar,
    /// Members in the high 32 bits, idle members in the low 32.
    members_idle: AtomicU64,
    joined: AtomicU64,
    left: AtomicU64,
}

const ONE_MEMBER: u64 = 1 << 32;
const IDLE_MASK: u64 = ONE_MEMBER - 1;

impl<'a> Crew<'a> {
    /// A crew of at most `max` workers whose target is `target()` (clamped to 1..=max), with
    /// none yet: [`Crew::start`] counts the first ones.
    pub(crate) fn new(target: WorkerTarget<'a>, max: usize) -> Self {
        Crew {
            target,
            max: max.max(1),
            roster: Mutex::new(Roster {
                spawned: 0,
                parked: Vec::new(),
                finished: false,
            }),
            wake: Condvar::new(),
            members_idle: AtomicU64::new(0),
            joined: AtomicU64::new(0),
            left: AtomicU64::new(0),
        }
    }

    /// The target now, within 1..=max.
    pub(crate) fn target_now(&self) -> usize {
        (self.target.count)().clamp(1, self.max)
    }

    /// The phase starts with `n` workers (all busy).
    pub(super) fn start(&self, n: usize) {
        self.roster.lock().spawned = n;
        self.members_idle
            .fetch_add(n as u64 * ONE_MEMBER, Ordering::SeqCst);
    }

    /// One more worker, counted busy before it runs; returns its index, or `None` when the
    /// crew is at its target, at its maximum or finished. Only worker 0 spawns.
    fn grow(&self, spawn_allowed: bool) -> Option<usize> {
        let target = self.target_now();
        let mut r = self.roster.lock();
        if r.finished || r.spawned - r.parked.len() >= target {
            return None;
        }
        if let Some(k) = (0..r.parked.len()).min_by_key(|&k| r.parked[k]) {
            r.parked.swap_remove(k);
            self.joined.fetch_add(1, Ordering::Relaxed);
            self.wake.notify_all();
            return None;
        }
        if !spawn_allowed || r.spawned >= self.max {
            return None;
        }
        let i = r.spawned;
        r.spawned += 1;
        self.members_idle.fetch_add(ONE_MEMBER, Ordering::SeqCst);
        self.joined.fetch_add(1, Ordering::Relaxed);
        Some(i)
    }

    /// No work is left for parked workers: wake them to exit, and spawn no more.
    pub(crate) fn finish(&self) {
        self.roster.lock().finished = true;
        self.wake.notify_all();
    }

    /// The calling member has no work (see the module documentation).
    pub(crate) fn go_idle(&self) {
        self.members_idle.fetch_add(1, Ordering::SeqCst);
    }

    /// The calling member, idle, found work.
    pub(crate) fn go_busy(&self) {
        self.members_idle.fetch_sub(1, Ordering::SeqCst);
    }

    /// True if every member is idle (parked ones included), in one atomic snapshot.
    pub(crate) fn all_idle(&self) -> bool {
        let w = self.members_idle.load(Ordering::SeqCst);
        w >> 32 == w & IDLE_MASK
    }

    /// Workers that joined and left so far.
    pub(super) fn changes(&self) -> (u64, u64) {
        (
            self.joined.load(Ordering::Relaxed),
            self.left.load(Ordering::Relaxed),
        )
    }
}

/// One worker's place in the crew: its index and, for worker 0, the means to spawn.
pub(crate) struct Member<'c, 'a> {
    crew: &'c Crew<'a>,
    index: usize,
    spawn: Option<&'c dyn Fn(usize)>,
    /// The guard of the idle class, if this worker was moved to it.
    idle_class: Option<&'c IdleClassGuard>,
}

impl<'c, 'a> Member<'c, 'a> {
    pub(super) fn new(
        crew: &'c Crew<'a>,
        index: usize,
        spawn: Option<&'c dyn Fn(usize)>,
        idle_class: Option<&'c IdleClassGuard>,
    ) -> Self {
        Member {
            crew,
            index,
            spawn,
            idle_class,
        }
    }

    /// This worker's index (0: the caller of the phase).
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    pub(crate) fn crew(&self) -> &'c Crew<'a> {
        self.crew
    }

    /// At a safe point of a busy worker: leave if the crew is above its target and this
    /// worker is one too many, else bring one more worker in if it is below.
    pub(crate) fn check(&self) -> Turn {
        if self.should_leave() {
            return Turn::Leave;
        }
        if let Some(i) = self.crew.grow(self.spawn.is_some()) {
            (self
                .spawn
                .expect("only a member that may spawn grows the crew"))(i);
        }
        Turn::Stay
    }

    /// True if this worker is one too many now (never worker 0; not one in the idle class,
    /// unless the target says so or the starvation guard keeps GC threads at normal
    /// priority, which it moved this one back to).
    pub(crate) fn should_leave(&self) -> bool {
        let stays =
            self.crew.target.idle_class_stays && self.idle_class.is_some_and(|g| g.allowed());
        self.index > 0 && !stays && self.index >= self.crew.target_now()
    }

    /// Leave the crew until it wants this worker again (true) or the phase is over (false).
    /// The caller holds no work (it handed it back); it counts itself idle first where the
    /// phase counts idle members: parked is idle.
    pub(crate) fn park(&self) -> bool {
        self.crew.left.fetch_add(1, Ordering::Relaxed);
        let mut r = self.crew.roster.lock();
        if r.finished {
            return false;
        }
        r.parked.push(self.index);
        loop {
            if r.finished {
                return false;
            }
            if !r.parked.contains(&self.index) {
                return true;
            }
            self.crew.wake.wait(&mut r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn strict(count: &(dyn Fn() -> usize + Sync)) -> WorkerTarget<'_> {
        WorkerTarget {
            count,
            idle_class_stays: false,
        }
    }

    #[test]
    fn idle_counting_sees_a_spawn_with_its_member() {
        let t = || 2;
        let c = Crew::new(strict(&t), 4);
        c.start(1);
        assert!(!c.all_idle());
        c.go_idle();
        assert!(c.all_idle());
        c.go_busy();
        // Worker 0, busy, spawns one: two members, none idle.
        assert_eq!(c.grow(true), Some(1));
        c.go_idle();
        assert!(!c.all_idle(), "the new member counts busy from its spawn");
        // At the target (2): no more.
        assert_eq!(c.grow(true), None);
        assert_eq!(c.changes(), (1, 0));
    }

    #[test]
    fn a_worker_over_the_target_parks_and_comes_back_when_it_rises() {
        let target = AtomicUsize::new(2);
        let t = || target.load(Ordering::SeqCst);
        let c = Crew::new(strict(&t), 2);
        c.start(2);
        let none = |_: usize| unreachable!("a full crew spawns nobody");
        let zero = Member::new(&c, 0, Some(&none), None);
        let one = Member::new(&c, 1, None, None);
        assert_eq!(one.check(), Turn::Stay);
        target.store(1, Ordering::SeqCst);
        assert_eq!(zero.check(), Turn::Stay, "worker 0 never leaves");
        assert_eq!(one.check(), Turn::Leave);
        std::thread::scope(|s| {
            let back = s.spawn(|| Member::new(&c, 1, None, None).park());
            while c.roster.lock().parked.is_empty() {
                std::thread::yield_now();
            }
            // Still at the target: worker 0 brings nobody back.
            assert_eq!(zero.check(), Turn::Stay);
            assert_eq!(c.roster.lock().parked, vec![1]);
            target.store(2, Ordering::SeqCst);
            assert_eq!(zero.check(), Turn::Stay);
            assert!(back.join().unwrap(), "brought back, not finished");
        });
        assert_eq!(c.changes(), (1, 1));
        // Parked at the end: it exits.
        target.store(1, Ordering::SeqCst);
        std::thread::scope(|s| {
            let back = s.spawn(|| Member::new(&c, 1, None, None).park());
            while c.roster.lock().parked.is_empty() {
                std::thread::yield_now();
            }
            c.finish();
            assert!(!back.join().unwrap(), "finished");
        });
    }

    #[test]
    fn a_worker_in_the_idle_class_stays_unless_told_or_raised() {
        let t = || 1;
        let lenient = WorkerTarget {
            count: &t,
            idle_class_stays: true,
        };
        let c = Crew::new(lenient, 2);
        c.start(2);
        let guard = IdleClassGuard::default();
        assert!(!Member::new(&c, 1, None, Some(&guard)).should_leave());
        assert!(
            Member::new(&c, 1, None, None).should_leave(),
            "normal priority"
        );
        let strict_crew = Crew::new(strict(&t), 2);
        assert!(Member::new(&strict_crew, 1, None, Some(&guard)).should_leave());
    }
}

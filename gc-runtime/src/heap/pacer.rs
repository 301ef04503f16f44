//! Mutator pacing (what Shenandoah's `ShenandoahPacer` does; ZGC itself only stalls): while a
//! cycle runs, a mutator is delayed a little every *quantum* of bytes it allocates (default
//! 64 KiB), so that the mutators together take free memory no faster than the collector frees
//! it. A mutator that outruns the collector is slowed evenly, from the start of the cycle, by
//! many short bounded delays, instead of running at full speed into a full heap and stalling
//! until the cycle frees memory. The allocation stall (in `object_allocator`) stays the last
//! resort when the heap runs dry anyway, and out-of-memory the answer after a whole cycle that
//! freed nothing.
//!
//! # The rule
//!
//! When a mutator's allocations since its last decision reach `bytes` ≥ the quantum, while a
//! cycle runs (`concurrent` mode, pacing on), two rules each propose a wait and the longer is
//! taken, within two bounds.
//!
//! **The progress rule** (as Shenandoah taxes allocation by reported GC work), from the
//! counters the GC workers publish (`cycle_progress`: bytes marked, then live bytes of the
//! relocation set evacuated, against the cycle's expected work — the last cycle's at first,
//! exact once the relocation set is selected):
//!
//! 1. The cycle's *allowance* is `free_at_start / duration_margin` (default 1.25): the free
//!    memory when it began, with a margin. The mutators may take 5% of it at once and the rest
//!    in proportion to the work done: `allowed = allowance × (0.05 + 0.95 × done / total)`.
//! 2. If the bytes they allocated since the cycle began exceed `allowed`, this quantum waits
//!    for the collector to earn the excess: the work that raises `allowed` by it, at the rate
//!    the collector has worked in this cycle so far (`done / elapsed`).
//!
//! So a mutator much faster than the collector is held from the first quanta of a cycle to
//! the collector's pace, and a collector that speeds up (more cores, a smaller live set)
//! releases it at once. The rule says nothing before the first cycle gave an estimate, before
//! any work is done, and once the expected work is done: the time rule covers those.
//!
//! **The time rule**, the backstop for when the estimate is wrong (it knows the cycle only by
//! the clock and the free memory left):
//!
//! 1. `free` is what mutators may still take (the heap less the relocation reserve less the
//!    pages in use); `budget = free − bytes` is what is left once these bytes are counted.
//! 2. `expected` is how long the cycle should take: the longest of the last five cycles
//!    times `duration_margin`, or 100 ms before any cycle completed. (The longest, not the
//!    mean: a cycle on a fuller heap takes longer than the last ones.) `remaining = expected −
//!    elapsed`, but never less than a quarter of `expected`.
//! 3. Free memory lasts until the cycle ends if the mutators, all together, allocate no
//!    faster than `bytes` every `interval = remaining × bytes / budget`.
//! 4. The pacer keeps one *due time* for the heap: the next quantum is due `interval` after
//!    the previous one was due, or now if that is later (unused time is not saved up). A
//!    quantum completed before it is due waits until then. Waits under 20 µs are not slept:
//!    they stay owed and add to the next wait.
//!
//! **The bounds.** No wait is longer than `max_delay` (default 1 ms; the debt beyond is
//! forgiven), nor than the *floor* leaves this mutator (`pacing_floor`: by default no mutator
//! is held by pacing more than half of any 10 ms window, `PacingConfig::min_mutator_share`
//! and `window`). With the cap on every quantum a mutator is held to at most one quantum per
//! `max_delay` on top of its own time to allocate it (64 KiB per 1 ms: a mutator at 500 MB/s
//! to about 58 MB/s); with the floor, to half its own speed at the least. A collector that
//! cannot keep up with a mutator at the floor still ends in a stall: the floor trades the
//! longest run of short delays for that risk. Between cycles nobody is paced: the director
//! starts a cycle (its allocation-rate rule) before the heap fills.
//!
//! A delay is taken as a *blocked* thread, like a stall: pauses never wait for a paced
//! mutator, and the sleeping mutator leaves its core to the GC workers (while mutators are
//! paced the driver runs one per core: [`Pacer::paced_within`]; a parallel phase already
//! under way takes the extra workers at the next safe point of its workers' loops, and gives
//! them up once nobody was paced for a while). Each delay is recorded as a [`crate::PacingRecord`] — the time the mutator
//! was held (the OS wakes a sleeper a little late, and a pause in progress holds it until
//! the pause ends), which the wait reports use, and the delay imposed, which the floor
//! bounds — and logged at level `debug`.
//!
//! # Why delays and not assists
//!
//! Go makes a mutator that allocates during marking do marking work in proportion (the mark
//! assist). That needs mutators to trace with the GC workers' queues and take part in mark
//! termination, a second entry into marking to keep correct; here a mutator only sleeps, and
//! on a machine with fewer cores than threads a sleeping mutator gives the GC thread its core,
//! which is most of what an assist would buy. The progress counters give the pacer what an
//! assist's accounting would know (the work done), without the mutator doing it.

use super::pacing_floor::{HeldTimes, PacingFloor};
use crate::atomic_instant::AtomicInstant;
use crate::config::HeapConfig;
use crate::context::{GcContext, Progress};
use std::time::{Duration, Instant};

/// The expected cycle duration before any cycle completed (the director assumes the same).
const FIRST_CYCLE_ESTIMATE: Duration = Duration::from_millis(100);
/// `remaining` is at least this share of `expected`.
const MIN_REMAINING_SHARE: f64 = 0.25;
/// Waits shorter than this are not slept (they stay owed).
const MIN_SLEEP: Duration = Duration::from_micros(20);
/// The share of the cycle's allowance mutators may take before the collector has done any
/// work (the progress rule's head start; Shenandoah's `ShenandoahPacingIdleSlack` is 2%).
const HEAD_START: f64 = 0.05;
/// The longest wait the progress rule computes (it is capped far lower anyway).
const MAX_PROGRESS_WAIT: Duration = Duration::from_secs(1);

/// The heap's pacer. See the module documentation.
pub(super) struct Pacer {
    /// Pacing on, in `concurrent` mode.
    active: bool,
    max_delay: Duration,
    duration_margin: f64,
    /// No mutator held more than its share of any window (see `pacing_floor`).
    floor: PacingFloor,
    /// When the next quantum is due (`None` before the first paced one). Every mutator's
    /// quantum moves it, without a lock (see `atomic_instant`).
    due: AtomicInstant,
    /// When the last delay was imposed (`None`: never).
    last_delay: AtomicInstant,
}

impl Pacer {
    pub(super) fn new(config: &HeapConfig) -> Self {
        Pacer {
            active: config.paces(),
            max_delay: config.pacing.max_delay,
            duration_margin: config.pacing.duration_margin,
            floor: PacingFloor::new(config.pacing.min_mutator_share, config.pacing.window),
            due: AtomicInstant::new(Instant::now()),
            last_delay: AtomicInstant::new(Instant::now()),
        }
    }

    /// How long a mutator that allocated `bytes` since its last decision, and was held by
    /// the delays `held` recently, should wait; `None` for no wait (pacing off, no cycle
    /// running, the mutators' pace fits the budget, or the floor leaves no room). The caller
    /// sleeps as a blocked thread and records the delay (with [`Pacer::record`]).
    pub(super) fn delay_for(
        &self,
        cx: &GcContext,
        bytes: u64,
        held: &HeldTimes,
    ) -> Option<PacingDecision> {
        if !self.active {
            return None;
        }
        let cycle = cx.control.running_cycle()?;
        let free = cx.pages.mutator_free();
        let remaining = remaining_time(cycle.expected, self.duration_margin, cycle.elapsed);
        let interval = interval_for(free, bytes, remaining);
        let mut progress = cx.progress.snapshot();
        progress.allocated = cx.progress.add_allocated(bytes);
        let behind = progress_wait(progress, cycle.elapsed, self.duration_margin);
        let yields = floor_yields(
            free,
            progress.allocated,
            cycle.elapsed.max(self.floor.window()),
            remaining,
        );
        let now = Instant::now();
        let floor_room = self.floor.room(held, now);
        // Decide against the due time read, and move it on unless another mutator moved it
        // meanwhile (then decide again against theirs).
        let mut due = self.due.load();
        let delay = loop {
            let (delay, next) = decide(
                now,
                due,
                interval,
                behind,
                self.max_delay,
                floor_room,
                yields,
            );
            match self.due.compare_exchange(due, Some(next)) {
                Ok(()) => break delay,
                Err(moved) => due = moved,
            }
        };
        if delay < MIN_SLEEP {
            return None;
        }
        self.last_delay.store(Some(now));
        let beyond_floor = delay.saturating_sub(floor_room);
        Some(PacingDecision {
            delay,
            beyond_floor,
        })
    }

    /// A delay of `imposed` the mutator with `held` began sleeping at `start` (for the floor).
    pub(super) fn record(&self, held: &mut HeldTimes, start: Instant, imposed: Duration) {
        self.floor.record(held, start, imposed);
    }

    /// True if a mutator was delayed within `window`: mutators are sleeping part of the time,
    /// so their cores are partly idle (the driver then runs more GC workers).
    pub(super) fn paced_within(&self, window: Duration) -> bool {
        self.last_delay.load().is_some_and(|t| t.elapsed() < window)
    }
}

/// A pacing delay the pacer decided on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PacingDecision {
    /// The delay to sleep.
    pub(crate) delay: Duration,
    /// The part of it the floor at its full share would not have allowed: the floor yielded
    /// because free memory was about to run out (zero when the floor held).
    pub(crate) beyond_floor: Duration,
}

/// True if the floor yields (see `pacing_floor`): `free` bytes, at the rate the mutators
/// have allocated in the running cycle (`allocated` in `elapsed`), would not last the
/// `remaining` time until the cycle is expected to end. Holding the floor then would only
/// run the heap dry and stall the mutator until the cycle frees memory, the worst window of
/// all; yielding, the time rule (which spaces quanta so that free memory lasts `remaining`)
/// and the progress rule decide alone, within `max_delay`, and the floor is back as soon as
/// the pace they set makes free memory last. (A floor that only lowered its share in
/// proportion to the shortfall would still run the heap dry: whatever share it keeps, a
/// mutator faster than the collector spends free memory before the cycle ends.) `elapsed`
/// should be at least the floor's window, so that a cycle's first quanta do not make a rate
/// of a few microseconds' allocation.
fn floor_yields(free: u64, allocated: u64, elapsed: Duration, remaining: Duration) -> bool {
    let (elapsed, remaining) = (elapsed.as_secs_f64(), remaining.as_secs_f64());
    if allocated == 0 || elapsed <= 0.0 {
        return false;
    }
    let rate = allocated as f64 / elapsed;
    (free as f64) < rate * remaining
}

/// Step 2 of the time rule: how long the running cycle, `elapsed` into its run, should
/// still take — the longest recent cycle (`expected`, `None` before any completed) times
/// `duration_margin`, less `elapsed`, but never less than a quarter of it.
fn remaining_time(expected: Option<Duration>, duration_margin: f64, elapsed: Duration) -> Duration {
    let expected = expected
        .unwrap_or(FIRST_CYCLE_ESTIMATE)
        .mul_f64(duration_margin);
    expected
        .saturating_sub(elapsed)
        .max(expected.mul_f64(MIN_REMAINING_SHARE))
}

/// Steps 1 to 3 of the time rule: how far apart quanta of `bytes` must be for `free` bytes
/// (these `bytes` included) to last until the running cycle ends, for a cycle `elapsed` into
/// its run whose longest recent predecessor took `expected` (`None` before any cycle
/// completed) and a safety factor `duration_margin`. What `Pacer::delay_for` computes
/// before it schedules; public so that the book's exercises check their answers against it.
pub fn pacing_interval(
    free: u64,
    bytes: u64,
    expected: Option<Duration>,
    duration_margin: f64,
    elapsed: Duration,
) -> Duration {
    interval_for(
        free,
        bytes,
        remaining_time(expected, duration_margin, elapsed),
    )
}

/// Step 3 of the time rule: the spacing of quanta of `size` bytes that makes `free` bytes (these
/// `size` included) last `remaining`; all of `remaining` when nothing is left beyond them.
/// (The spacing may exceed `max_delay`: the mutator's own time allocating the quantum counts
/// towards it, and only the wait beyond that is capped.)
fn interval_for(free: u64, size: u64, remaining: Duration) -> Duration {
    let budget = free.saturating_sub(size);
    if budget == 0 {
        return remaining;
    }
    let secs = remaining.as_secs_f64() * size as f64 / budget as f64;
    Duration::from_secs_f64(secs.min(remaining.as_secs_f64()))
}

/// The progress rule: how long the collector, at the pace it has kept in this cycle so far
/// (`elapsed`), needs to earn the mutators the allowance they have overdrawn. The mutators'
/// allowance is the cycle's share of the free memory at its start (`free_at_start /
/// margin`): a head start of [`HEAD_START`] of it, the rest in proportion to the work done
/// (`done / total`). Zero while they are within it, before an estimate of the cycle's work
/// exists or any work is done, and once the work is done (the rest of the cycle is the
/// free-memory rule's).
fn progress_wait(p: Progress, elapsed: Duration, margin: f64) -> Duration {
    if p.total == 0 || p.done == 0 || p.done >= p.total || p.free_at_start == 0 {
        return Duration::ZERO;
    }
    let share = p.free_at_start as f64 / margin;
    let earned = share * (1.0 - HEAD_START);
    let allowed = share * HEAD_START + earned * (p.done as f64 / p.total as f64);
    let overdrawn = p.allocated as f64 - allowed;
    if overdrawn <= 0.0 {
        return Duration::ZERO;
    }
    // The work that earns `overdrawn` bytes, at the collector's rate so far (bytes a second).
    let work = overdrawn / earned * p.total as f64;
    let rate = p.done as f64 / elapsed.as_secs_f64().max(1e-6);
    Duration::from_secs_f64((work / rate).min(MAX_PROGRESS_WAIT.as_secs_f64()))
}

/// The decision for a quantum completed at `now`: the longer of the schedule's wait (step 4)
/// and the progress rule's `behind`, both capped by `max_delay` and by the floor's `room`
/// for this mutator, and the new due time. Where the floor `yields` (free memory would run
/// out before the cycle ends), the schedule's wait — the time rule, which keeps free memory
/// lasting — is capped by `max_delay` alone; the progress rule, which paces evenly, stays
/// under the floor.
fn decide(
    now: Instant,
    due: Option<Instant>,
    interval: Duration,
    behind: Duration,
    max_delay: Duration,
    room: Duration,
    yields: bool,
) -> (Duration, Instant) {
    let cap = max_delay.min(room);
    let time_cap = if yields { max_delay } else { cap };
    let (wait, next) = schedule(now, due, interval, time_cap);
    (wait.max(behind.min(cap)), next)
}

/// Step 4 of the rule: for a quantum completed at `now`, with the next one `due` and quanta to
/// be spaced by `interval`, the wait (capped at `max_delay`) and the new due time. The debt
/// beyond the cap is forgiven; a wait too short to sleep stays in the new due time.
fn schedule(
    now: Instant,
    due: Option<Instant>,
    interval: Duration,
    max_delay: Duration,
) -> (Duration, Instant) {
    let start = due.map_or(now, |d| d.max(now));
    let wait = start.duration_since(now);
    let delay = wait.min(max_delay);
    let taken_at = now + delay;
    // A short wait is not slept, but stays owed: the next quantum is due after `start`.
    let owed_from = if delay < MIN_SLEEP { start } else { taken_at };
    (delay, owed_from + interval)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIB: u64 = 1 << 20;
    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn interval_grows_as_free_memory_shrinks() {
        let remaining = Duration::from_secs(1);
        // 1 GiB free for one second: a 2 MiB page every ~2 ms.
        let roomy = interval_for(1024 * MIB, 2 * MIB, remaining);
        let tight = interval_for(64 * MIB, 2 * MIB, remaining);
        assert!(roomy < tight, "{roomy:?} {tight:?}");
        assert!(
            (roomy.as_secs_f64() - 2.0 / 1022.0).abs() < 1e-6,
            "{roomy:?}"
        );
        assert!((tight.as_secs_f64() - 2.0 / 62.0).abs() < 1e-6, "{tight:?}");
        // Nothing beyond this page: the whole remaining time (the wait is capped later).
        assert_eq!(interval_for(2 * MIB, 2 * MIB, remaining), remaining);
        assert_eq!(interval_for(MIB, 2 * MIB, remaining), remaining);
        assert_eq!(interval_for(3 * MIB, 2 * MIB, remaining), remaining);
    }

    #[test]
    fn a_mutator_slower_than_the_budget_never_waits() {
        let t0 = Instant::now();
        let interval = MS;
        let (mut due, mut delays) = (None, Vec::new());
        // A page every 2 ms against a budget of one per 1 ms.
        for i in 0..10 {
            let (d, next) = schedule(t0 + 2 * MS * i, due, interval, 10 * MS);
            delays.push(d);
            due = Some(next);
        }
        assert!(delays.iter().all(|d| d.is_zero()), "{delays:?}");
    }

    #[test]
    fn a_mutator_faster_than_the_budget_is_held_to_it() {
        let t0 = Instant::now();
        let interval = 3 * MS;
        let mut due = None;
        let mut now = t0;
        for _ in 0..10 {
            let (d, next) = schedule(now, due, interval, 10 * MS);
            due = Some(next);
            // It fills the page in 1 ms after its wait.
            now += d + MS;
        }
        // Ten pages spaced by 3 ms take 27 ms after the first plus its own 1 ms: the
        // mutator ran at the budget's pace, not at its own.
        assert_eq!(now.duration_since(t0), 28 * MS);
    }

    #[test]
    fn waits_are_capped_and_the_debt_beyond_forgiven() {
        let t0 = Instant::now();
        let cap = 10 * MS;
        let (d, next) = schedule(t0, Some(t0 + Duration::from_secs(5)), cap, cap);
        assert_eq!(d, cap);
        assert_eq!(next, t0 + 2 * cap);
    }

    #[test]
    fn short_waits_are_carried_not_slept() {
        let t0 = Instant::now();
        let short = Duration::from_micros(5);
        let (d, next) = schedule(t0, Some(t0 + short), 10 * short, MS);
        // Too short to sleep (the caller skips it), but owed by the next page.
        assert_eq!(d, short);
        assert!(d < MIN_SLEEP);
        assert_eq!(next, t0 + 11 * short);
    }

    /// One step of a simulated mutator: it runs `run_us` (its own time to allocate the
    /// quantum), then the pacer decides with the time rule's `interval_us` and the progress
    /// rule's `behind_us` (any free-memory and progress trajectory), the floor yielding or
    /// not (`yields`); its sleep begins `late_us` after the decision and lasts `over_us` longer
    /// than imposed (the OS waking it late).
    #[derive(Clone, Debug)]
    struct Step {
        run_us: u64,
        interval_us: u64,
        behind_us: u64,
        late_us: u64,
        over_us: u64,
        yields: bool,
    }

    fn step() -> impl Strategy<Value = Step> {
        (
            0u64..3_000,
            0u64..20_000,
            0u64..20_000,
            0u64..200,
            0u64..500,
            prop::bool::weighted(0.3),
        )
            .prop_map(
                |(run_us, interval_us, behind_us, late_us, over_us, yields)| Step {
                    run_us,
                    interval_us,
                    behind_us,
                    late_us,
                    over_us,
                    yields,
                },
            )
    }

    /// The most delay time any window of `window` holds, of `delays` (start, imposed) in
    /// time order: the worst window ends where a delay ends.
    fn worst_window(delays: &[(Instant, Duration)], window: Duration) -> Duration {
        delays
            .iter()
            .map(|&(s, d)| {
                let end = s + d;
                let from = end - window;
                delays
                    .iter()
                    .map(|&(s2, d2)| (s2 + d2).min(end).saturating_duration_since(s2.max(from)))
                    .sum::<Duration>()
            })
            .max()
            .unwrap_or_default()
    }

    proptest! {
        /// The floor: a mutator allocating at any rate, under any sequence of budgets, is never
        /// held by imposed delays more than `1 − share` of any window, but for the part of
        /// each delay beyond the floor's room where it yielded (free memory about to run out)
        /// — what `PacingRecord::beyond_floor_ns` reports, and only where it yielded.
        #[test]
        fn no_window_holds_more_than_the_floor_allows(
            steps in prop::collection::vec(step(), 1..400),
            share in prop_oneof![Just(0.5), 0.0f64..0.95],
            window_ms in 1u64..30,
            max_delay_us in 20u64..20_000,
        ) {
            let window = Duration::from_millis(window_ms);
            let floor = PacingFloor::new(share, window);
            let max_delay = Duration::from_micros(max_delay_us);
            let us = Duration::from_micros;
            let mut held = HeldTimes::default();
            let mut now = Instant::now();
            let mut due = None;
            let (mut slept, mut within) = (Vec::new(), Vec::new());
            for s in &steps {
                now += us(s.run_us);
                let floor_room = floor.room(&held, now);
                let (delay, next) = decide(now, due, us(s.interval_us), us(s.behind_us), max_delay, floor_room, s.yields);
                due = Some(next);
                if delay >= MIN_SLEEP {
                    let beyond = delay.saturating_sub(floor_room);
                    prop_assert!(s.yields || beyond.is_zero());
                    let start = now + us(s.late_us);
                    floor.record(&mut held, start, delay);
                    slept.push((start, delay));
                    within.push((start, delay - beyond));
                    now = start + delay + us(s.over_us);
                }
            }
            let budget = window.mul_f64(1.0 - share);
            let worst = worst_window(&within, window);
            prop_assert!(worst <= budget, "worst window held {worst:?} within the floor > {budget:?}");
            if steps.iter().all(|s| !s.yields) {
                prop_assert_eq!(worst_window(&slept, window), worst);
            }
        }
    }

    /// The floor is reached: a mutator far beyond its budget is held exactly to it.
    #[test]
    fn a_mutator_far_over_budget_is_held_half_of_each_window() {
        let window = 10 * MS;
        let floor = PacingFloor::new(0.5, window);
        let mut held = HeldTimes::default();
        let t0 = Instant::now();
        let (mut now, mut due, mut slept) = (t0, None, Vec::new());
        for _ in 0..1000 {
            // 100 µs to allocate a quantum that should take 10 ms: the schedule wants the cap
            // on every quantum.
            now += Duration::from_micros(100);
            let room = floor.room(&held, now);
            let (delay, next) = decide(now, due, 10 * MS, Duration::ZERO, MS, room, false);
            due = Some(next);
            if delay >= MIN_SLEEP {
                floor.record(&mut held, now, delay);
                slept.push((now, delay));
                now += delay;
            }
        }
        let total: Duration = slept.iter().map(|&(_, d)| d).sum();
        let share = total.as_secs_f64() / now.duration_since(t0).as_secs_f64();
        // Held close to half the time (never more in any window), not far below.
        assert!(worst_window(&slept, window) <= window / 2);
        assert!(share > 0.4 && share <= 0.5, "held {share:.3} of the time");
    }

    #[test]
    fn the_floor_holds_while_free_memory_lasts_the_cycle() {
        let (sec, ms10) = (Duration::from_secs(1), 10 * MS);
        // 100 MiB in 1 s: 100 MiB/s. 50 MiB free last the half second left: it holds.
        assert!(!floor_yields(50 * MIB, 100 * MIB, sec, sec / 2));
        assert!(!floor_yields(500 * MIB, 100 * MIB, sec, sec));
        // 49 MiB do not: it yields; so it does with nothing left.
        assert!(floor_yields(49 * MIB, 100 * MIB, sec, sec / 2));
        assert!(floor_yields(0, 100 * MIB, sec, sec));
        // Nothing allocated yet: no rate to judge by, the floor holds.
        assert!(!floor_yields(0, 0, ms10, sec));
    }

    /// One paced cycle of a mutator that allocates a quantum every 100 µs (655 MB/s) on a
    /// heap with `free` bytes left to it and nothing freed until the cycle ends (as marking
    /// frees nothing before Concurrent Select Relocation Set), with the floor soft (as the
    /// pacer runs it) or `hard` (the floor at its full share whatever is left). Returns when
    /// free memory ran out (`None`: it lasted the cycle), and the delay time imposed beyond
    /// the full floor's room.
    fn paced_cycle(free: u64, hard: bool) -> (Option<Duration>, Duration) {
        let (window, quantum, margin) = (10 * MS, 64 << 10, 1.25);
        let expected = Some(Duration::from_millis(240));
        let cycle = remaining_time(expected, margin, Duration::ZERO);
        let floor = PacingFloor::new(0.5, window);
        let mut held = HeldTimes::default();
        let t0 = Instant::now();
        let (mut now, mut due, mut free, mut allocated) = (t0, None, free, 0u64);
        let mut beyond_total = Duration::ZERO;
        while now.duration_since(t0) < cycle {
            now += Duration::from_micros(100);
            if free < quantum {
                return (Some(now.duration_since(t0)), beyond_total);
            }
            free -= quantum;
            allocated += quantum;
            let elapsed = now.duration_since(t0);
            let remaining = remaining_time(expected, margin, elapsed);
            let interval = interval_for(free, quantum, remaining);
            let yields = !hard && floor_yields(free, allocated, elapsed.max(window), remaining);
            let floor_room = floor.room(&held, now);
            let (delay, next) = decide(now, due, interval, Duration::ZERO, MS, floor_room, yields);
            due = Some(next);
            if delay >= MIN_SLEEP {
                beyond_total += delay.saturating_sub(floor_room);
                floor.record(&mut held, now, delay);
                now += delay;
            }
        }
        (None, beyond_total)
    }

    /// The floor yields to free memory about to run out: where the floor at its full share
    /// runs the heap dry early in the cycle (an allocation stall until the cycle frees
    /// memory), the soft floor slows the mutator below it and free memory lasts the cycle;
    /// where free memory lasts anyway, the floor never yields.
    #[test]
    fn the_floor_yields_when_free_memory_would_run_out() {
        let (out, _) = paced_cycle(24 * MIB, true);
        let out = out.expect("the scenario must run a hard floor dry");
        assert!(out < Duration::from_millis(150), "ran dry at {out:?}");
        let (out, beyond) = paced_cycle(24 * MIB, false);
        assert_eq!(out, None, "the soft floor ran dry too");
        assert!(!beyond.is_zero(), "lasted without yielding the floor");
        let (out, beyond) = paced_cycle(400 * MIB, false);
        assert_eq!(out, None);
        assert!(
            beyond.is_zero(),
            "yielded {beyond:?} with free memory to spare"
        );
    }

    fn progress(done: u64, total: u64, free_at_start: u64, allocated: u64) -> Progress {
        Progress {
            done: done * MIB,
            total: total * MIB,
            free_at_start: free_at_start * MIB,
            allocated: allocated * MIB,
        }
    }

    #[test]
    fn within_the_allowance_nobody_waits() {
        let sec = Duration::from_secs(1);
        // 1000 MiB free, margin 1.25: the cycle may use 800, 40 of them as a head start.
        assert!(progress_wait(progress(1, 100, 1000, 40), sec, 1.25).is_zero());
        // Half the work done: 40 + 760 / 2 = 420 MiB allowed.
        assert!(progress_wait(progress(50, 100, 1000, 420), sec, 1.25).is_zero());
        assert!(!progress_wait(progress(50, 100, 1000, 421), sec, 1.25).is_zero());
    }

    #[test]
    fn an_overdrawn_allowance_waits_for_the_work_that_earns_it() {
        let sec = Duration::from_secs(1);
        // 76 MiB over the allowance earn back with 76 / 760 of the work, 10 MiB, which the
        // collector (50 MiB in 1 s) does in 0.2 s.
        let w = progress_wait(progress(50, 100, 1000, 496), sec, 1.25);
        assert!((w.as_secs_f64() - 0.2).abs() < 1e-9, "{w:?}");
        // A collector twice as fast earns it in half the time.
        let w2 = progress_wait(progress(50, 100, 1000, 496), sec / 2, 1.25);
        assert!((w2.as_secs_f64() - 0.1).abs() < 1e-9, "{w2:?}");
    }

    #[test]
    fn without_an_estimate_or_any_work_or_work_left_the_progress_rule_is_silent() {
        let sec = Duration::from_secs(1);
        for p in [
            progress(0, 0, 1000, 900),
            progress(0, 100, 1000, 900),
            progress(100, 100, 1000, 900),
            progress(10, 100, 0, 900),
        ] {
            assert!(progress_wait(p, sec, 1.25).is_zero(), "{p:?}");
        }
    }

    #[test]
    fn the_longer_wait_is_taken_and_both_are_capped() {
        let t0 = Instant::now();
        let room = 10 * MS;
        // The progress rule's wait beyond the schedule's: it is the one slept, capped.
        let (d, _) = decide(t0, Some(t0 + MS), MS, 3 * MS, 2 * MS, room, false);
        assert_eq!(d, 2 * MS);
        let (d, _) = decide(t0, Some(t0 + MS), MS, MS / 2, 2 * MS, room, false);
        assert_eq!(d, MS);
        // The floor's room caps both.
        let (d, _) = decide(t0, Some(t0 + MS), MS, 3 * MS, 5 * MS, MS / 4, false);
        assert_eq!(d, MS / 4);
        // Where the floor yields, the schedule's wait passes its room (up to the cap); the
        // progress rule's does not.
        let (d, _) = decide(
            t0,
            Some(t0 + 3 * MS),
            MS,
            Duration::ZERO,
            5 * MS,
            MS / 4,
            true,
        );
        assert_eq!(d, 3 * MS);
        let (d, _) = decide(t0, None, MS, 3 * MS, 5 * MS, MS / 4, true);
        assert_eq!(d, MS / 4);
    }

    /// Evenly and early: a mutator far faster than the collector, paced by the progress rule
    /// alone from the start of a cycle, takes its allowance in step with the work done — it
    /// is first held in the first tenth of the cycle, never runs more than a quantum and a
    /// wait ahead of its allowance, and still gets most of it by the end.
    #[test]
    fn a_fast_mutator_allocates_in_step_with_the_collector() {
        let t0 = Instant::now();
        let cycle = Duration::from_secs(1);
        let (total, free_at_start, margin) = (100 * MIB, 50 * MIB, 1.25);
        let quantum = 64 << 10;
        let share = free_at_start as f64 / margin;
        // The collector works at an even rate over the cycle.
        let done_at = |t: Instant| {
            let f = t.duration_since(t0).as_secs_f64() / cycle.as_secs_f64();
            ((total as f64 * f) as u64).clamp(1, total - 1)
        };
        let allowed =
            |done: u64| share * (HEAD_START + (1.0 - HEAD_START) * done as f64 / total as f64);
        let (mut now, mut allocated, mut first_wait) = (t0, 0u64, None);
        let mut worst_lead = 0f64;
        while now.duration_since(t0) < cycle {
            // 64 KiB in 10 µs: 6.4 GB/s, a hundred times what the allowance grows by.
            now += Duration::from_micros(10);
            allocated += quantum;
            let p = Progress {
                done: done_at(now),
                total,
                free_at_start,
                allocated,
            };
            let behind = progress_wait(p, now.duration_since(t0), margin);
            let (d, _) = decide(
                now,
                None,
                Duration::ZERO,
                behind,
                100 * MS,
                Duration::MAX,
                false,
            );
            if d >= MIN_SLEEP {
                first_wait.get_or_insert(now.duration_since(t0));
                now += d;
            }
            worst_lead = worst_lead.max(allocated as f64 - allowed(done_at(now)));
        }
        let first = first_wait.expect("the mutator was never held");
        assert!(first < cycle / 10, "first held {first:?} into the cycle");
        assert!(
            worst_lead <= 2.0 * quantum as f64,
            "ran {worst_lead} bytes ahead"
        );
        let used = allocated as f64 / share;
        assert!(used > 0.9 && used <= 1.0, "took {used:.3} of the allowance");
    }
}

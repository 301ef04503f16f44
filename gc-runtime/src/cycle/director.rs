//! The director (ZGC's `ZDirector`): decides when a cycle starts. Checked every
//! `interval` (10 ms by default); the first rule that matches wins and names the cause:
//!
//! 1. **Allocation Stall** — a mutator is waiting for memory (also requested directly);
//! 2. **Warmup** — before 3 cycles have run, at 10%, 20%, 30% heap usage, and a tenth of the
//!    heap above what the last cycle left (`warmup_due`);
//! 3. **Timer** — the configured interval has passed since the last cycle;
//! 4. **Heap Target** — (only with `DirectorConfig::heap_target`) usage reached a multiple of
//!    what the last cycle left, so a heap whose maximum is large stays near what the program
//!    needs (Go's `GOGC` rule; the JVM sizes its heap between `-Xms` and `-Xmx` to a similar
//!    end). The target is computed without overflow (a `growth_percent` near `u32::MAX` is a
//!    target no heap reaches), and the rule fires only if mutators allocated since the last
//!    cycle ended: a target at or below what that cycle left means "collect as soon as the
//!    program allocates again", never "collect an idle heap back to back";
//! 5. **Allocation Rate** — (only once a cycle has completed, `allocation_rate_due`) mutators
//!    allocated since the last cycle ended or in the last 100 ms, and at the recent allocation
//!    rate (+20%: the larger of the last-second and
//!    last-100-ms averages) the memory mutators may still take would run out before a cycle
//!    could finish: its expected duration is the larger of twice the recent mean and the mean
//!    plus 3.3 standard deviations (ZGC's
//!    "one in a thousand" margin), plus one check interval. Each recent duration is first
//!    scaled to the heap as it is now, because a cycle's work grows with the data it marks
//!    and moves: a cycle that left `u` bytes in use counts as `used / u` times as long (at
//!    least 1, at most `MAX_SCALE`) when `used` bytes are in use now, so the warmup cycles,
//!    which ran on a fraction of the live set, do not make the director start late once the
//!    program has built it. Only concurrent cycles are scaled: mutators allocate nothing
//!    during a stop-the-world cycle, so a longer one needs no more free memory when it
//!    starts;
//! 6. **Direct Memory** — direct and pooled buffers hold 75% of `max_direct_memory` or more,
//!    and buffers of a quarter of it were allocated since the last cycle started: dead owners
//!    may hold memory only a cycle's cleaners can free, and a cycle now saves an allocation
//!    at the limit from waiting for one (JDK's direct buffers only collect at the limit);
//! 7. **High Usage** — 5% of the heap or less is left for mutators;
//! 8. **Proactive** — the heap grew by 10% (or 5 minutes passed) since the last cycle and a
//!    cycle now would cost under 1% of the time since the last one.
//!
//! "Free" is what mutators may still take: the heap less the pages in use *and* less the
//! relocation reserve, which they can never use (on small heaps the reserve is up to an
//! eighth of the heap). When a mutator outruns a cycle that started in time, the pacer
//! (`pacer`) slows it.

use crate::config::HeapTarget;
use crate::heap::HeapInner;
use crate::observe::GcCause;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The most a recent cycle's duration is scaled up by the heap's growth since it ended (a
/// cycle of a nearly empty heap is mostly fixed costs, which do not grow with the heap).
const MAX_SCALE: f64 = 8.0;

pub(super) struct Director {
    /// (time, bytes allocated so far), newest last, covering about one second.
    samples: VecDeque<(Instant, u64)>,
    last_cycle_end: Instant,
    used_after_last: u64,
    /// Recent cycles: duration in seconds, and the bytes in use when each ended.
    durations: VecDeque<(f64, u64)>,
    /// Bytes of direct buffers allocated before the last cycle started.
    direct_at_last_start: u64,
    /// Whether recent durations are scaled to the heap in use (concurrent cycles only).
    scale_durations: bool,
    /// Bytes mutators had allocated when the last cycle ended (`None`: a cycle just ended,
    /// and the next `decide` reads it; the driver calls `decide` right after a cycle).
    allocated_at_last: Option<u64>,
}

/// The heap target (see the module documentation): `max(min_bytes, left × (100 +
/// growth_percent) / 100)`, in bytes, for a last cycle that left `left` bytes in use; at most
/// `u64::MAX` (no setting wraps it to a smaller target).
fn heap_target(left: u64, t: HeapTarget) -> u64 {
    let grown = u128::from(left) * (100 + u128::from(t.growth_percent)) / 100;
    u64::try_from(grown).unwrap_or(u64::MAX).max(t.min_bytes)
}

/// The warmup rule: before 3 cycles have completed, usage reached the next threshold (10%,
/// 20%, 30% of `capacity` after 0, 1, 2 cycles) and grew by a tenth of `capacity` since the
/// last cycle ended. The thresholds are a tenth apart so that each warmup cycle measures a
/// heap a tenth larger than the last; a cycle that ended near or above the next threshold
/// (the program allocated while it ran) has already measured a heap that size, and a cycle
/// started right after it would mark the same live set again to learn nothing new.
fn warmup_due(completed: u64, used: u64, capacity: u64, used_after_last: u64) -> bool {
    if completed >= 3 {
        return false;
    }
    let step = capacity as f64 * 0.1;
    let threshold = (step * (completed + 1) as f64).max(used_after_last as f64 + step);
    used as f64 >= threshold
}

/// The allocation-rate rule: after `completed` cycles, with `free` bytes left to mutators,
/// allocation rates `(long, recent)` in bytes per second (last second, last 100 ms), and
/// whether mutators allocated since the last cycle ended: true if at the larger rate +20%
/// the free memory runs out within `needed` seconds (the next cycle's duration with margin,
/// plus one check interval).
///
/// Not before the first cycle has completed: until then the duration is a guess (0.2 s) and
/// the rate is a program's start-up burst — `json_tokenizer` (workloads/lox/bench) got an
/// allocation-rate cycle about 20 ms in, before any cycle had completed, on a heap far below
/// the warmup rule's first threshold. ZGC's rule waits the same way (`ZStatCycle::is_time_trustable`:
/// one warmup cycle completed). The warmup rule starts the first cycle at 10% usage, and a
/// program that fills the heap faster than that cycle runs is paced or stalls, as after it.
///
/// Not for a program that stopped allocating (nothing since the last cycle ended, nothing
/// in the last 100 ms): the long rate covers the last second, and such a program (it built
/// its live set) would otherwise get a cycle for a rate it no longer has, up to a second
/// later. A program that allocates in bursts keeps the rule between its bursts.
fn allocation_rate_due(
    completed: u64,
    free: f64,
    (long, recent): (f64, f64),
    allocated_since: bool,
    needed: f64,
) -> bool {
    if completed == 0 || !(recent > 0.0 || allocated_since) {
        return false;
    }
    let rate = long.max(recent) * 1.2;
    free / rate <= needed
}

impl Director {
    /// A director for cycles that run concurrently (`concurrent`, whose predicted durations
    /// are scaled to the heap in use) or in one pause (`!concurrent`).
    pub(super) fn new(concurrent: bool) -> Self {
        Director {
            scale_durations: concurrent,
            samples: VecDeque::new(),
            last_cycle_end: Instant::now(),
            used_after_last: 0,
            durations: VecDeque::new(),
            direct_at_last_start: 0,
            // The heap was created with nothing allocated.
            allocated_at_last: Some(0),
        }
    }

    /// A cycle starts (whatever asked for it): `direct_allocated` is what
    /// `DirectBuffers::allocated_bytes` says now.
    pub(super) fn cycle_started(&mut self, direct_allocated: u64) {
        self.direct_at_last_start = direct_allocated;
    }

    pub(super) fn cycle_done(&mut self, duration: Duration, used_after: u64) {
        self.last_cycle_end = Instant::now();
        self.used_after_last = used_after;
        self.allocated_at_last = None;
        self.durations
            .push_back((duration.as_secs_f64(), used_after));
        if self.durations.len() > 10 {
            self.durations.pop_front();
        }
    }

    fn sample(&mut self, allocated: u64) {
        let now = Instant::now();
        self.samples.push_back((now, allocated));
        while self.samples.len() > 2
            && now.duration_since(self.samples[0].0) > Duration::from_secs(1)
        {
            self.samples.pop_front();
        }
    }

    /// Bytes per second over the last second and over the last 100 ms (the latter is the
    /// former while the samples span less than 100 ms).
    fn alloc_rates(&self) -> (f64, f64) {
        let rate = |from: &(Instant, u64), to: &(Instant, u64)| {
            let dt = to.0.duration_since(from.0).as_secs_f64();
            if dt <= 0.0 {
                0.0
            } else {
                (to.1 - from.1) as f64 / dt
            }
        };
        let (Some(first), Some(last)) = (self.samples.front(), self.samples.back()) else {
            return (0.0, 0.0);
        };
        let long = rate(first, last);
        let recent = self
            .samples
            .iter()
            .rev()
            .find(|s| last.0.duration_since(s.0) >= Duration::from_millis(100))
            .map_or(long, |s| rate(s, last));
        (long, recent)
    }

    fn avg_duration(&self) -> f64 {
        if self.durations.is_empty() {
            0.1
        } else {
            self.durations.iter().map(|d| d.0).sum::<f64>() / self.durations.len() as f64
        }
    }

    /// How long the next cycle may take with `used` bytes in use now, with margin: the larger
    /// of twice the mean and the mean plus 3.3 standard deviations of the recent durations,
    /// each scaled to `used` (see the module documentation).
    fn max_duration(&self, used: u64) -> f64 {
        if self.durations.is_empty() {
            return 2.0 * self.avg_duration();
        }
        let scale = |after: u64| {
            if self.scale_durations {
                (used as f64 / after.max(1) as f64).clamp(1.0, MAX_SCALE)
            } else {
                1.0
            }
        };
        let scaled = || self.durations.iter().map(|&(d, after)| d * scale(after));
        let n = self.durations.len() as f64;
        let avg = scaled().sum::<f64>() / n;
        let sd = if n < 2.0 {
            0.0
        } else {
            (scaled().map(|d| (d - avg).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        };
        (avg * 2.0).max(avg + 3.3 * sd)
    }

    /// Whether a cycle should start now in `heap`, and why: read from the bytes its mutators
    /// allocated, its pages, its cycle counters and its direct buffers.
    pub(super) fn decide(&mut self, heap: &HeapInner) -> Option<GcCause> {
        let (cfg, pages, direct) = (&heap.config().director, heap.pages(), heap.direct());
        let allocated = heap.allocator().allocated();
        self.sample(allocated);
        let control = heap.control();
        let (stalled, completed) = (control.stalled(), control.completed());
        if stalled > 0 {
            return Some(GcCause::AllocationStall);
        }
        if cfg.continuous {
            return Some(GcCause::Continuous);
        }
        let cap = pages.capacity() as f64;
        let used_bytes = pages.used();
        let used = used_bytes as f64;
        let free = pages.mutator_free() as f64;
        if warmup_due(
            completed,
            used_bytes,
            pages.capacity(),
            self.used_after_last,
        ) {
            return Some(GcCause::Warmup);
        }
        let since_last = self.last_cycle_end.elapsed();
        if let Some(t) = cfg.timer {
            if since_last >= t {
                return Some(GcCause::Timer);
            }
        }
        // Whether the mutators allocated since the last cycle ended.
        let allocated_since = allocated > *self.allocated_at_last.get_or_insert(allocated);
        if let Some(t) = cfg.heap_target {
            if allocated_since && used_bytes >= heap_target(self.used_after_last, t) {
                return Some(GcCause::HeapTarget);
            }
        }
        let needed = self.max_duration(used as u64) + cfg.interval.as_secs_f64();
        if allocation_rate_due(completed, free, self.alloc_rates(), allocated_since, needed) {
            return Some(GcCause::AllocationRate);
        }
        let limit = direct.limit() as f64;
        let turnover = direct
            .allocated_bytes()
            .saturating_sub(self.direct_at_last_start) as f64;
        if direct.reserved() as f64 >= limit * 0.75 && turnover >= limit * 0.25 {
            return Some(GcCause::DirectMemory);
        }
        if free <= cap * 0.05 {
            return Some(GcCause::HighUsage);
        }
        if cfg.proactive {
            let grown = used - self.used_after_last as f64 >= cap * 0.1;
            let long = since_last >= Duration::from_secs(300);
            if (grown || long) && self.avg_duration() * 100.0 <= since_last.as_secs_f64() {
                return Some(GcCause::Proactive);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 1 << 20;

    /// The target grows with `growth_percent` up to its largest value without wrapping, and
    /// never goes below `min_bytes`.
    #[test]
    fn heap_target_never_wraps_below_the_heap() {
        let t = |min_bytes, growth_percent| HeapTarget {
            min_bytes,
            growth_percent,
        };
        assert_eq!(heap_target(100 * MB, t(16 * MB, 100)), 200 * MB);
        assert_eq!(heap_target(4 * MB, t(16 * MB, 100)), 16 * MB);
        assert_eq!(heap_target(100 * MB, t(0, 0)), 100 * MB);
        assert_eq!(heap_target(0, t(0, 0)), 0);
        // `100 + u32::MAX` wrapped to 99: a target below what the last cycle left.
        let huge = heap_target(100 * MB, t(0, u32::MAX));
        assert_eq!(huge, 100 * MB * (100 + u64::from(u32::MAX)) / 100);
        assert_eq!(heap_target(u64::MAX / 2, t(0, u32::MAX)), u64::MAX);
        assert_eq!(heap_target(u64::MAX, t(u64::MAX, 100)), u64::MAX);
    }

    /// Warmup fires at 10%, 20%, 30% after 0, 1, 2 cycles, never after 3, and only once
    /// usage grew by a tenth of the heap since the last cycle ended.
    #[test]
    fn warmup_waits_for_a_tenth_of_the_heap_beyond_the_last_cycle() {
        let cap = 100 * MB;
        assert!(!warmup_due(0, 9 * MB, cap, 0));
        assert!(warmup_due(0, 10 * MB, cap, 0));
        assert!(!warmup_due(1, 19 * MB, cap, 8 * MB));
        assert!(warmup_due(1, 20 * MB, cap, 8 * MB));
        assert!(warmup_due(2, 30 * MB, cap, 12 * MB));
        assert!(!warmup_due(3, 90 * MB, cap, 0));
        // The last cycle ended above the threshold: the program allocated while it ran.
        assert!(!warmup_due(1, 34 * MB, cap, 34 * MB));
        // Or just below it: the threshold moves to a tenth above what it left.
        assert!(!warmup_due(2, 35 * MB, cap, 27 * MB));
        assert!(warmup_due(2, 37 * MB, cap, 27 * MB));
    }

    /// The allocation-rate rule fires when the free memory runs out within the time needed
    /// at the larger rate +20%, only for a program still allocating, and never before the
    /// first cycle has completed, whatever the rate.
    #[test]
    fn allocation_rate_waits_for_the_first_completed_cycle() {
        let free = 100.0 * MB as f64;
        // 1 GB/s +20%: 100 MB last 0.083 s.
        let fast = (1e9, 1e9);
        assert!(!allocation_rate_due(0, free, fast, true, 0.2));
        assert!(!allocation_rate_due(0, free, (1e12, 1e12), true, 1e9));
        assert!(allocation_rate_due(1, free, fast, true, 0.2));
        assert!(
            allocation_rate_due(7, free, fast, false, 0.2),
            "recent rate alone"
        );
        assert!(
            !allocation_rate_due(1, free, fast, true, 0.05),
            "time enough"
        );
        // Stopped allocating: the last second's burst alone starts nothing.
        assert!(!allocation_rate_due(1, free, (1e9, 0.0), false, 0.2));
        assert!(allocation_rate_due(1, free, (1e9, 0.0), true, 0.2));
        // No rate at all: nothing (free / 0 is infinite, or NaN on a full heap).
        assert!(!allocation_rate_due(1, free, (0.0, 0.0), true, 0.2));
        assert!(!allocation_rate_due(1, 0.0, (0.0, 0.0), true, 0.2));
    }

    /// A program that stopped allocating has no recent rate, though the last second's
    /// average still holds its burst (the allocation-rate rule then starts no cycle); one
    /// that allocates steadily has both.
    #[test]
    fn a_rate_from_before_the_program_stopped_allocating_is_not_recent() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut d = Director::new(true);
        // 100 MB in the first 500 ms, then nothing for 300 ms.
        for ms in (0..=800).step_by(10) {
            d.samples.push_back((at(ms), ms.min(500) * 200_000));
        }
        let (long, recent) = d.alloc_rates();
        assert!(long > 100e6, "the last second's average: {long}");
        assert_eq!(recent, 0.0);
        let mut steady = Director::new(true);
        for ms in (0..=800).step_by(10) {
            steady.samples.push_back((at(ms), ms * 200_000));
        }
        let (long, recent) = steady.alloc_rates();
        assert!((long - 200e6).abs() < 1e3 && (recent - 200e6).abs() < 1e3);
    }

    /// Durations of cycles that ended with less in use count as longer when more is in use
    /// now (never shorter, at most `MAX_SCALE` times); a steady heap is predicted as before.
    #[test]
    fn predicted_duration_scales_with_the_heap_in_use() {
        let mut d = Director::new(true);
        for _ in 0..3 {
            d.cycle_done(Duration::from_millis(400), 400 * MB);
        }
        // As much in use as the cycles left: twice the mean (no spread).
        assert!((d.max_duration(400 * MB) - 0.8).abs() < 1e-9);
        // Less in use: never predicted shorter.
        assert!((d.max_duration(100 * MB) - 0.8).abs() < 1e-9);
        // Five times as much: five times as long.
        assert!((d.max_duration(2000 * MB) - 4.0).abs() < 1e-9);
        // A hundred times as much: capped.
        assert!((d.max_duration(40_000 * MB) - 0.8 * MAX_SCALE).abs() < 1e-9);
        // Mixed history: each cycle is scaled by its own end state, then the margin applies.
        let mut m = Director::new(true);
        m.cycle_done(Duration::from_millis(100), 100 * MB);
        m.cycle_done(Duration::from_millis(400), 400 * MB);
        let same = m.max_duration(400 * MB);
        assert!((same - 0.8).abs() < 1e-9, "both scale to 0.4 s: {same}");
        let unscaled = Director::new(true).max_duration(400 * MB);
        assert!((unscaled - 0.2).abs() < 1e-9, "no history: twice 0.1 s");
        // Stop-the-world cycles are not scaled.
        let mut stw = Director::new(false);
        for _ in 0..3 {
            stw.cycle_done(Duration::from_millis(400), 400 * MB);
        }
        assert!((stw.max_duration(2000 * MB) - 0.8).abs() < 1e-9);
    }
}

//! The pacer's floor: a minimum mutator utilization (MMU) it guarantees each mutator. No
//! mutator is held by pacing delays more than `(1 − min_mutator_share) × window` of any
//! `window` of time (by default half of any 10 ms). ZGC and Shenandoah state their goals as
//! MMU over a window too; here it bounds only what the pacer imposes: pauses, stalls and the
//! operating system's oversleep are the collector's and the machine's, reported beside it.
//!
//! # The rule
//!
//! Each mutator keeps the delays it was held by within the last `window` ([`HeldTimes`]):
//! for each, when its sleep began and the delay imposed. A new delay decided at `now` may be
//! at most `room = budget − held(now − window, now)`, where `budget` is the most a window
//! may hold and `held(a, b)` the delay time inside `[a, b]`. That is enough for every
//! window, whatever the mutator does between delays:
//!
//! - a delay begins at `s ≥ now` (the caller records when its sleep began) and lasts `L ≤
//!   room`; every earlier delay ended before `now` (its sleep was over when the mutator
//!   allocated again);
//! - a window ending inside or at the end of the new delay, `[e − window, e]` with `s ≤ e ≤
//!   s + L`, holds at most `L + held(e − window, now) ≤ L + held(now − window, now) ≤
//!   budget`; a window ending between two delays holds no more than one ending at the end of
//!   the last one before it.
//!
//! The floor yields in one case only: when free memory, at the rate the mutators have
//! allocated in the running cycle, would run out before the cycle is expected to end (see
//! `pacer`). Holding it then would only run the heap dry and stall the mutator until the
//! cycle frees memory — for the rest of the marking, the worst window of all —, so the
//! pacer's rules and `max_delay` alone bound that delay, and what it takes beyond the
//! floor's room is recorded (`PacingRecord::beyond_floor_ns`). The rest of every delay still
//! counts in `held`: the floor bounds what is within it.
//!
//! The cap is on the delay imposed (what the schedule asks for). The time a mutator is
//! actually held can be a little longer (the OS wakes a sleeper late, a pause in progress
//! holds it until the pause ends): that is the machine's, not the schedule's.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The floor's settings (from `PacingConfig`): the most delay time any `window` may hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PacingFloor {
    window: Duration,
    budget: Duration,
}

impl PacingFloor {
    /// At least `min_mutator_share` of every `window` left to the mutator.
    pub(crate) fn new(min_mutator_share: f64, window: Duration) -> Self {
        let held_share = (1.0 - min_mutator_share).clamp(0.0, 1.0);
        PacingFloor {
            window,
            budget: window.mul_f64(held_share),
        }
    }

    /// The window the floor counts delays over.
    pub(crate) fn window(&self) -> Duration {
        self.window
    }

    /// The longest delay `held` (a mutator's recent delays) may take now.
    pub(crate) fn room(&self, held: &HeldTimes, now: Instant) -> Duration {
        self.budget
            .saturating_sub(held.within(now.checked_sub(self.window), now))
    }

    /// A delay of `imposed` began at `start`: remember it for this window (and forget what
    /// no later window can hold).
    pub(crate) fn record(&self, held: &mut HeldTimes, start: Instant, imposed: Duration) {
        if let Some(horizon) = start.checked_sub(self.window) {
            while held.delays.front().is_some_and(|&(s, d)| s + d <= horizon) {
                held.delays.pop_front();
            }
        }
        held.delays.push_back((start, imposed));
    }
}

/// One mutator's pacing delays of the last window, oldest first: (when the sleep began, the
/// delay imposed). At most one entry per slept delay of the window (a slept delay is at least
/// the pacer's 20 µs, so at most 250 in 10 ms).
#[derive(Default, Debug)]
pub(crate) struct HeldTimes {
    delays: VecDeque<(Instant, Duration)>,
}

impl HeldTimes {
    /// The delay time inside `[from, to]` (`from = None`: from the beginning).
    fn within(&self, from: Option<Instant>, to: Instant) -> Duration {
        self.delays
            .iter()
            .map(|&(s, d)| {
                let a = from.map_or(s, |f| s.max(f));
                let b = (s + d).min(to);
                b.saturating_duration_since(a)
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn room_is_the_budget_less_the_window_s_delays() {
        let floor = PacingFloor::new(0.5, 10 * MS);
        let mut held = HeldTimes::default();
        let t0 = Instant::now();
        assert_eq!(floor.room(&held, t0), 5 * MS);
        floor.record(&mut held, t0, 2 * MS);
        floor.record(&mut held, t0 + 3 * MS, 2 * MS);
        assert_eq!(floor.room(&held, t0 + 5 * MS), MS);
        // 11 ms after t0 the window [1, 11] holds 1 ms of the first delay and all the second.
        assert_eq!(floor.room(&held, t0 + 11 * MS), 2 * MS);
        // Long after, nothing is held.
        assert_eq!(floor.room(&held, t0 + 30 * MS), 5 * MS);
    }

    #[test]
    fn old_delays_are_forgotten() {
        let floor = PacingFloor::new(0.5, 10 * MS);
        let mut held = HeldTimes::default();
        let t0 = Instant::now();
        for i in 0..100 {
            floor.record(&mut held, t0 + i * MS, MS / 2);
        }
        assert!(held.delays.len() <= 11, "{}", held.delays.len());
    }

    #[test]
    fn no_floor_leaves_the_whole_window_and_a_full_floor_nothing() {
        let t0 = Instant::now();
        let held = HeldTimes::default();
        assert_eq!(PacingFloor::new(0.0, 10 * MS).room(&held, t0), 10 * MS);
        assert_eq!(
            PacingFloor::new(1.0, 10 * MS).room(&held, t0),
            Duration::ZERO
        );
    }
}

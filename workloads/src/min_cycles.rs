//! A row must measure something. A run whose measured window holds fewer than
//! [`WARN_BELOW_CYCLES`] *complete* GC cycles (started and ended inside the window) rests its
//! pause and wait figures on one or two cycles, and a single cycle more or less changes them:
//! [`cycles_warning`] says so, and the table and `results.json` carry the warning.
//!
//! `--min-cycles N` avoids such rows (the sweep's default is N = 3, a workload run alone's
//! 0): when a run's `--duration` is up and it has fewer than N complete cycles, [`Extension`]
//! extends it in steps of a quarter of the duration ([`STEPS_PER_DURATION`]) until it has N,
//! but to no more than [`MAX_DURATION_FACTOR`] times the duration in all (so a workload that
//! hardly collects cannot run forever). A run still short of N at that limit ends there, with
//! the warning if it has fewer than 3. `epsilon` runs never collect: they are neither extended
//! nor warned about.

use crate::run_result::{Mode, RunConfig};

/// Fewer complete cycles than this in the measured window gets a warning.
pub const WARN_BELOW_CYCLES: u64 = 3;

/// `--min-cycles` extends a run to at most this many times its `--duration`.
pub const MAX_DURATION_FACTOR: u64 = 4;

/// `--min-cycles` extends a run by `--duration / STEPS_PER_DURATION` at a time.
pub const STEPS_PER_DURATION: u64 = 4;

/// The warning for a run of `mode` with `complete` complete cycles in its measured window, or
/// `None` when it has enough (or is an `epsilon` run, which never collects).
pub fn cycles_warning(mode: Mode, complete: u64) -> Option<String> {
    if mode == Mode::Epsilon || complete >= WARN_BELOW_CYCLES {
        return None;
    }
    let s = if complete == 1 { "" } else { "s" };
    Some(format!(
        "only {complete} complete GC cycle{s} in the measured window (fewer than \
         {WARN_BELOW_CYCLES}): the figures rest on too few cycles; rerun with --min-cycles \
         {WARN_BELOW_CYCLES} or a longer --duration"
    ))
}

/// When a run's measurement stops: at its duration, or later under `--min-cycles`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extension {
    /// Complete cycles wanted (0: never extend).
    pub min_cycles: u64,
    /// The requested duration (`--duration`).
    pub duration_ms: u64,
    /// One extension step.
    pub step_ms: u64,
    /// The longest the measurement may last.
    pub limit_ms: u64,
}

impl Extension {
    /// The plan of `config`'s run.
    pub fn of(config: &RunConfig) -> Self {
        let min_cycles = if config.mode == Mode::Epsilon {
            0
        } else {
            u64::from(config.min_cycles)
        };
        let duration_ms = config.duration_ms.max(1);
        Extension {
            min_cycles,
            duration_ms,
            step_ms: (duration_ms / STEPS_PER_DURATION).max(1),
            limit_ms: duration_ms.saturating_mul(MAX_DURATION_FACTOR),
        }
    }

    /// After `elapsed_ms` of measurement (at or past the current deadline) with `complete`
    /// complete cycles: the next deadline (one step on, capped at the limit), or `None` to stop
    /// now.
    pub fn next_deadline_ms(&self, elapsed_ms: u64, complete: u64) -> Option<u64> {
        if complete >= self.min_cycles || elapsed_ms >= self.limit_ms {
            return None;
        }
        Some(
            elapsed_ms
                .max(self.duration_ms)
                .saturating_add(self.step_ms)
                .min(self.limit_ms),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::WorkloadKind;

    fn config(mode: Mode, duration_ms: u64, min_cycles: u32) -> RunConfig {
        let mut c = RunConfig::new(WorkloadKind::HeapChurn, mode, 1 << 30, 1 << 29, duration_ms);
        c.min_cycles = min_cycles;
        c
    }

    #[test]
    fn fewer_than_three_complete_cycles_is_warned_about() {
        for n in 0..WARN_BELOW_CYCLES {
            let w = cycles_warning(Mode::Concurrent, n).unwrap();
            assert!(w.contains(&format!("only {n} complete GC cycle")), "{w}");
            assert!(w.contains("--min-cycles 3"), "{w}");
            assert!(cycles_warning(Mode::Stw, n).is_some());
        }
        assert!(cycles_warning(Mode::Concurrent, 1)
            .unwrap()
            .contains("1 complete GC cycle in"));
        assert_eq!(cycles_warning(Mode::Concurrent, WARN_BELOW_CYCLES), None);
        assert_eq!(cycles_warning(Mode::Stw, 100), None);
        assert_eq!(cycles_warning(Mode::Epsilon, 0), None);
    }

    #[test]
    fn without_min_cycles_a_run_stops_at_its_duration() {
        let e = Extension::of(&config(Mode::Concurrent, 20_000, 0));
        assert_eq!(e.next_deadline_ms(20_000, 0), None);
    }

    #[test]
    fn a_short_run_is_extended_in_quarter_steps_up_to_four_times_its_duration() {
        let e = Extension::of(&config(Mode::Concurrent, 20_000, 3));
        assert_eq!((e.step_ms, e.limit_ms), (5_000, 80_000));
        // Two cycles at 20 s: go on to 25 s, and so on while cycles are missing.
        let mut deadlines = vec![20_000];
        let mut at = 20_000;
        while let Some(next) = e.next_deadline_ms(at, 2) {
            deadlines.push(next);
            at = next;
        }
        let expected: Vec<u64> = (4..=16).map(|q| q * 5_000).collect();
        assert_eq!(deadlines, expected);
        // Enough cycles: stop, wherever it is.
        assert_eq!(e.next_deadline_ms(20_000, 3), None);
        assert_eq!(e.next_deadline_ms(45_000, 7), None);
        // A deadline overshot by the polling loop still moves a step on, capped at the limit.
        assert_eq!(e.next_deadline_ms(20_030, 0), Some(25_030));
        assert_eq!(e.next_deadline_ms(78_000, 0), Some(80_000));
        assert_eq!(e.next_deadline_ms(80_010, 0), None);
    }

    #[test]
    fn epsilon_runs_and_tiny_durations() {
        let e = Extension::of(&config(Mode::Epsilon, 1_000, 5));
        assert_eq!(e.next_deadline_ms(1_000, 0), None);
        // A 2 ms run: steps of 1 ms up to 8 ms.
        let e = Extension::of(&config(Mode::Stw, 2, 1));
        assert_eq!((e.step_ms, e.limit_ms), (1, 8));
        assert_eq!(e.next_deadline_ms(2, 0), Some(3));
    }
}
